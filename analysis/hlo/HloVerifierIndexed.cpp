//===- HloVerifierIndexed.cpp - Shape rules of gather, scatter, sort, ... -===//
//
// Part of idxmap. XLA's shape inference for gather, scatter, sort and
// all-gather: everything the indexing maps and the interpreter index with,
// so that a malformed instruction is a located parse error and never an
// out-of-range access later.
//
//===----------------------------------------------------------------------===//
#include "IndexedOps.h"
#include "OpSupport.h"

#include "idxmap/HloScatter.h"

#include <algorithm>
#include <cctype>

namespace idxmap {
namespace hlo {

namespace {

using Problem = std::optional<std::string>;

bool contains(const std::vector<int64_t> &V, int64_t X) {
  return std::find(V.begin(), V.end(), X) != V.end();
}

class Checker {
public:
  explicit Checker(const HloInstruction &I)
      : I(I), Name(opcodeName(I.opcode())) {}

  Problem fail(const std::string &M) const { return Name + ": " + M; }

  /// \p V has distinct entries in [0, Limit) (sorted when \p Sorted).
  Problem dimList(const std::vector<int64_t> &V, int64_t Limit,
                  const char *What, bool Sorted) const {
    for (size_t K = 0; K < V.size(); ++K) {
      if (V[K] < 0 || V[K] >= Limit)
        return fail(std::string(What) + " " + hlo::dimList(V) +
                    " out of range [0, " + std::to_string(Limit) + ")");
      for (size_t J = 0; J < K; ++J)
        if (V[J] == V[K] || (Sorted && V[J] > V[K]))
          return fail(
              std::string(What) + " " + hlo::dimList(V) +
              (V[J] == V[K] ? " repeats a dimension" : " must be sorted"));
    }
    return std::nullopt;
  }

  Problem arrays(int64_t From, int64_t To) const {
    for (int64_t K = From; K < To; ++K)
      if (!I.operand(K)->shape().isArray())
        return fail("operand " + std::to_string(K) + " must be an array, not " +
                    I.operand(K)->shape().str());
    return std::nullopt;
  }

  Problem integralIndices(int64_t K) const {
    const Shape &S = I.operand(K)->shape();
    if (!S.isArray() || !isIntegralType(S.Type))
      return fail("indices must be an integer array, not " + S.str());
    return std::nullopt;
  }

  Problem resultIs(const Shape &Want) const {
    if (!I.shape().compatible(Want))
      return fail("result shape is " + I.shape().str() + ", expected " +
                  Want.str());
    return std::nullopt;
  }

  /// The called computation takes \p Params scalars typed \p Types (pairs
  /// for a comparator) and returns \p Root.
  Problem scalarComputation(const std::vector<PrimitiveType> &Types,
                            const Shape &Root) const {
    const HloComputation *C = I.toApply();
    if (!C || I.calledComputations().size() != 1)
      return fail("expected exactly one called computation (to_apply)");
    if (C->parameterCount() != int64_t(Types.size()))
      return fail("'" + C->name() + "' has " +
                  std::to_string(C->parameterCount()) +
                  " parameters, expected " + std::to_string(Types.size()));
    for (size_t K = 0; K < Types.size(); ++K) {
      const Shape &P = C->parameter(int64_t(K))->shape();
      if (!P.isScalar() || P.Type != Types[K])
        return fail("parameter " + std::to_string(K) + " of '" + C->name() +
                    "' is " + P.str() + ", expected " +
                    std::string(primitiveTypeName(Types[K])) + "[]");
    }
    if (!C->root()->shape().compatible(Root))
      return fail("'" + C->name() + "' returns " + C->root()->shape().str() +
                  ", expected " + Root.str());
    return std::nullopt;
  }

  Problem gather() const;
  Problem scatter() const;
  Problem scatterWindows(int64_t N) const;
  Problem sort() const;
  Problem allGather() const;

private:
  const HloInstruction &I;
  std::string Name;
};

Problem Checker::gather() const {
  if (I.operandCount() != 2)
    return fail("expected 2 operands, got " + std::to_string(I.operandCount()));
  if (Problem P = arrays(0, 1))
    return P;
  if (Problem P = integralIndices(1))
    return P;
  const GatherDimensions &G = I.gatherDimensions();
  const Shape &Op = I.operand(0)->shape(), &Idx = I.operand(1)->shape();
  const std::vector<int64_t> &Sizes = I.gatherSliceSizes();
  int64_t Ivd = G.IndexVectorDim;
  if (Ivd < 0 || Ivd > Idx.rank())
    return fail("index_vector_dim " + std::to_string(Ivd) +
                " out of range [0, " + std::to_string(Idx.rank()) + "]");
  int64_t VecLen = Ivd == Idx.rank() ? 1 : Idx.Dims[size_t(Ivd)];
  if (int64_t(G.StartIndexMap.size()) != VecLen)
    return fail("start_index_map " + hlo::dimList(G.StartIndexMap) + " has " +
                std::to_string(G.StartIndexMap.size()) +
                " entries, the index vector " + std::to_string(VecLen));
  if (int64_t(Sizes.size()) != Op.rank())
    return fail("slice_sizes " + hlo::dimList(Sizes) +
                " needs one entry per "
                "operand dimension (" +
                std::to_string(Op.rank()) + ")");
  for (int64_t D = 0; D < Op.rank(); ++D)
    if (Sizes[size_t(D)] < 0 || Sizes[size_t(D)] > Op.Dims[size_t(D)])
      return fail("slice_sizes " + hlo::dimList(Sizes) +
                  " exceed the operand " + Op.str() + " in dimension " +
                  std::to_string(D));
  if (Problem P = dimList(G.StartIndexMap, Op.rank(), "start_index_map", false))
    return P;
  if (Problem P = dimList(G.CollapsedSliceDims, Op.rank(),
                          "collapsed_slice_dims", true))
    return P;
  if (Problem P = dimList(G.OperandBatchingDims, Op.rank(),
                          "operand_batching_dims", true))
    return P;
  if (Problem P = dimList(G.StartIndicesBatchingDims, Idx.rank(),
                          "start_indices_batching_dims", false))
    return P;
  if (G.OperandBatchingDims.size() != G.StartIndicesBatchingDims.size())
    return fail("operand_batching_dims and start_indices_batching_dims "
                "differ in length");
  for (size_t K = 0; K < G.OperandBatchingDims.size(); ++K) {
    int64_t OD = G.OperandBatchingDims[K], ID = G.StartIndicesBatchingDims[K];
    if (ID == Ivd)
      return fail("start_indices_batching_dims contains index_vector_dim");
    if (contains(G.StartIndexMap, OD) || contains(G.CollapsedSliceDims, OD))
      return fail("operand batching dimension " + std::to_string(OD) +
                  " is also in start_index_map or collapsed_slice_dims");
    if (Op.Dims[size_t(OD)] != Idx.Dims[size_t(ID)])
      return fail("operand batching dimension " + std::to_string(OD) +
                  " and indices dimension " + std::to_string(ID) +
                  " differ in size");
  }
  // XLA also accepts a collapsed slice of size 0, which leaves the output
  // elements nothing to read: the start index is clamped to the operand's
  // size, one past its last element. Refused here rather than read out of
  // bounds.
  for (int64_t D : G.CollapsedSliceDims)
    if (Sizes[size_t(D)] != 1)
      return fail("collapsed dimension " + std::to_string(D) +
                  " has slice size " + std::to_string(Sizes[size_t(D)]) +
                  " (must be 1)");
  for (int64_t D : G.OperandBatchingDims)
    if (Sizes[size_t(D)] > 1)
      return fail("batching dimension " + std::to_string(D) +
                  " has slice size " + std::to_string(Sizes[size_t(D)]));
  size_t Window = G.OffsetDims.size() + G.CollapsedSliceDims.size() +
                  G.OperandBatchingDims.size();
  if (int64_t(Window) != Op.rank())
    return fail("offset_dims, collapsed_slice_dims and operand_batching_dims "
                "must cover the operand's " +
                std::to_string(Op.rank()) + " dimensions, they cover " +
                std::to_string(Window));
  int64_t OutRank =
      int64_t(G.OffsetDims.size()) + Idx.rank() - (Ivd < Idx.rank() ? 1 : 0);
  if (Problem P = dimList(G.OffsetDims, OutRank, "offset_dims", true))
    return P;
  std::vector<int64_t> OutDims;
  std::vector<int64_t> Slice, Batch;
  for (int64_t D = 0; D < Op.rank(); ++D)
    if (!contains(G.CollapsedSliceDims, D) &&
        !contains(G.OperandBatchingDims, D))
      Slice.push_back(Sizes[size_t(D)]);
  for (int64_t D = 0; D < Idx.rank(); ++D)
    if (D != Ivd)
      Batch.push_back(Idx.Dims[size_t(D)]);
  size_t S = 0, B = 0;
  for (int64_t D = 0; D < OutRank; ++D)
    OutDims.push_back(contains(G.OffsetDims, D) ? Slice[S++] : Batch[B++]);
  return resultIs(Shape(Op.Type, OutDims));
}

Problem Checker::scatterWindows(int64_t N) const {
  const ScatterDimensions &S = I.scatterDimensions();
  const Shape &Op = I.operand(0)->shape(), &Idx = I.operand(N)->shape();
  const Shape &Upd = I.operand(N + 1)->shape();
  int64_t Ivd = S.IndexVectorDim;
  if (Problem P =
          dimList(S.UpdateWindowDims, Upd.rank(), "update_window_dims", true))
    return P;
  if (Problem P = dimList(S.InsertedWindowDims, Op.rank(),
                          "inserted_window_dims", true))
    return P;
  if (Problem P =
          dimList(S.InputBatchingDims, Op.rank(), "input_batching_dims", true))
    return P;
  if (Problem P = dimList(S.ScatterIndicesBatchingDims, Idx.rank(),
                          "scatter_indices_batching_dims", false))
    return P;
  if (S.InputBatchingDims.size() != S.ScatterIndicesBatchingDims.size())
    return fail("input_batching_dims and scatter_indices_batching_dims "
                "differ in length");
  for (size_t K = 0; K < S.InputBatchingDims.size(); ++K) {
    int64_t OD = S.InputBatchingDims[K], ID = S.ScatterIndicesBatchingDims[K];
    if (ID == Ivd)
      return fail("scatter_indices_batching_dims contains index_vector_dim");
    if (contains(S.InsertedWindowDims, OD) ||
        contains(S.ScatterDimsToOperandDims, OD))
      return fail("input batching dimension " + std::to_string(OD) +
                  " is also inserted or scattered to");
    if (Op.Dims[size_t(OD)] != Idx.Dims[size_t(ID)])
      return fail("input batching dimension " + std::to_string(OD) +
                  " and indices dimension " + std::to_string(ID) +
                  " differ in size");
  }
  size_t Window = S.UpdateWindowDims.size() + S.InsertedWindowDims.size() +
                  S.InputBatchingDims.size();
  if (int64_t(Window) != Op.rank())
    return fail("update_window_dims, inserted_window_dims and "
                "input_batching_dims must cover the operand's " +
                std::to_string(Op.rank()) + " dimensions, they cover " +
                std::to_string(Window));
  int64_t ScatterRank = Idx.rank() - (Ivd < Idx.rank() ? 1 : 0);
  if (Upd.rank() != int64_t(S.UpdateWindowDims.size()) + ScatterRank)
    return fail("updates " + Upd.str() + " must have rank " +
                std::to_string(S.UpdateWindowDims.size() + ScatterRank));
  // Window dims fit the operand; scatter dims walk the indices.
  std::vector<int64_t> WindowOp, BatchIdx;
  for (int64_t D = 0; D < Op.rank(); ++D)
    if (isOperandWindowDim(S, D))
      WindowOp.push_back(D);
  for (int64_t D = 0; D < Idx.rank(); ++D)
    if (D != Ivd)
      BatchIdx.push_back(D);
  size_t W = 0, B = 0;
  for (int64_t U = 0; U < Upd.rank(); ++U) {
    int64_t Size = Upd.Dims[size_t(U)];
    if (isUpdateWindowDim(S, U)) {
      int64_t D = WindowOp[W++];
      if (Size > Op.Dims[size_t(D)])
        return fail("update window dimension " + std::to_string(U) + " (" +
                    std::to_string(Size) + ") exceeds operand dimension " +
                    std::to_string(D) + " (" +
                    std::to_string(Op.Dims[size_t(D)]) + ")");
    } else if (Size != Idx.Dims[size_t(BatchIdx[B++])]) {
      return fail("updates " + Upd.str() + " and indices " + Idx.str() +
                  " differ in scatter dimension " + std::to_string(U));
    }
  }
  return std::nullopt;
}

Problem Checker::scatter() const {
  int64_t Count = I.operandCount();
  if (Count < 3 || Count % 2 == 0)
    return fail("expected operands, indices and as many updates, got " +
                std::to_string(Count) + " operands");
  int64_t N = (Count - 1) / 2;
  if (Problem P = arrays(0, Count))
    return P;
  if (Problem P = integralIndices(N))
    return P;
  const Shape &Op = I.operand(0)->shape(), &Idx = I.operand(N)->shape();
  const Shape &Upd = I.operand(N + 1)->shape();
  for (int64_t K = 1; K < N; ++K) {
    if (!I.operand(K)->shape().sameDims(Op))
      return fail("operand " + std::to_string(K) + " is " +
                  I.operand(K)->shape().str() +
                  ", expected the dimensions of " + Op.str());
    if (!I.operand(N + 1 + K)->shape().sameDims(Upd))
      return fail("updates " + std::to_string(K) + " is " +
                  I.operand(N + 1 + K)->shape().str() +
                  ", expected the dimensions of " + Upd.str());
  }
  for (int64_t K = 0; K < N; ++K)
    if (I.operand(N + 1 + K)->shape().Type != I.operand(K)->shape().Type)
      return fail("updates " + std::to_string(K) + " and operand " +
                  std::to_string(K) + " differ in element type");
  const ScatterDimensions &S = I.scatterDimensions();
  int64_t Ivd = S.IndexVectorDim;
  if (Ivd < 0 || Ivd > Idx.rank())
    return fail("index_vector_dim " + std::to_string(Ivd) +
                " out of range [0, " + std::to_string(Idx.rank()) + "]");
  int64_t VecLen = Ivd == Idx.rank() ? 1 : Idx.Dims[size_t(Ivd)];
  if (int64_t(S.ScatterDimsToOperandDims.size()) != VecLen)
    return fail("scatter_dims_to_operand_dims " +
                hlo::dimList(S.ScatterDimsToOperandDims) + " has " +
                std::to_string(S.ScatterDimsToOperandDims.size()) +
                " entries, the index vector " + std::to_string(VecLen));
  if (Problem P = dimList(S.ScatterDimsToOperandDims, Op.rank(),
                          "scatter_dims_to_operand_dims", false))
    return P;
  if (Problem P = scatterWindows(N))
    return P;
  std::vector<PrimitiveType> Types;
  std::vector<Shape> Roots, Outs;
  for (int64_t Pass = 0; Pass < 2; ++Pass)
    for (int64_t K = 0; K < N; ++K)
      Types.push_back(I.operand(K)->shape().Type);
  for (int64_t K = 0; K < N; ++K) {
    Roots.push_back(Shape(I.operand(K)->shape().Type, {}));
    Outs.push_back(I.operand(K)->shape());
  }
  if (Problem P =
          scalarComputation(Types, N == 1 ? Roots[0] : Shape::tuple(Roots)))
    return P;
  return resultIs(N == 1 ? Outs[0] : Shape::tuple(Outs));
}

Problem Checker::sort() const {
  int64_t N = I.operandCount();
  if (N < 1)
    return fail("expected at least one operand");
  if (Problem P = arrays(0, N))
    return P;
  const Shape &Op = I.operand(0)->shape();
  for (int64_t K = 1; K < N; ++K)
    if (!I.operand(K)->shape().sameDims(Op))
      return fail("operand " + std::to_string(K) + " is " +
                  I.operand(K)->shape().str() +
                  ", expected the dimensions of " + Op.str());
  if (I.dimensions().size() != 1)
    return fail("dimensions=" + hlo::dimList(I.dimensions()) +
                " must name one dimension");
  if (Problem P = dimList(I.dimensions(), Op.rank(), "dimensions", false))
    return P;
  std::vector<PrimitiveType> Types;
  std::vector<Shape> Outs;
  for (int64_t K = 0; K < N; ++K) {
    Types.push_back(I.operand(K)->shape().Type);
    Types.push_back(I.operand(K)->shape().Type);
    Outs.push_back(I.operand(K)->shape());
  }
  if (Problem P = scalarComputation(Types, Shape(PrimitiveType::Pred, {})))
    return P;
  return resultIs(N == 1 ? Outs[0] : Shape::tuple(Outs));
}

Problem Checker::allGather() const {
  int64_t N = I.operandCount();
  if (N < 1)
    return fail("expected at least one operand");
  if (Problem P = arrays(0, N))
    return P;
  if (I.dimensions().size() != 1)
    return fail("dimensions=" + hlo::dimList(I.dimensions()) +
                " must name one dimension");
  int64_t G = I.dimensions()[0];
  const Shape &Out = I.shape();
  if (N > 1 && (!Out.isTuple() || int64_t(Out.TupleShapes.size()) != N))
    return fail("result " + Out.str() + " must be a tuple of " +
                std::to_string(N) + " arrays");
  std::optional<int64_t> Group = replicaGroupSize(I);
  for (int64_t K = 0; K < N; ++K) {
    const Shape &In = I.operand(K)->shape();
    const Shape &O = N == 1 && !Out.isTuple() ? Out
                     : Out.isTuple() && K < int64_t(Out.TupleShapes.size())
                         ? Out.TupleShapes[size_t(K)]
                         : Out;
    if (G < 0 || G >= In.rank())
      return fail("dimension " + std::to_string(G) + " out of range for " +
                  In.str());
    if (!O.isArray() || O.Type != In.Type || O.rank() != In.rank())
      return fail("result " + O.str() + " must be an array like " + In.str());
    int64_t Extent = In.Dims[size_t(G)];
    for (int64_t D = 0; D < In.rank(); ++D) {
      int64_t Want = In.Dims[size_t(D)];
      if (D == G) {
        bool Ok = Extent == 0 ? O.Dims[size_t(D)] == 0
                              : O.Dims[size_t(D)] % Extent == 0 &&
                                    O.Dims[size_t(D)] >= Extent;
        if (Group && Extent)
          Ok = O.Dims[size_t(D)] == Extent * *Group;
        if (!Ok)
          return fail(
              "result " + O.str() + " must have " +
              (Group ? std::to_string(*Group) : std::string("a whole")) +
              " times the operand's extent " + std::to_string(Extent) +
              " in dimension " + std::to_string(D));
        continue;
      }
      if (O.Dims[size_t(D)] != Want)
        return fail("result " + O.str() + " differs from the operand " +
                    In.str() + " in dimension " + std::to_string(D));
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<int64_t> replicaGroupSize(const HloInstruction &I) {
  std::optional<std::string_view> T = I.attribute("replica_groups");
  if (!T)
    return std::nullopt;
  std::string_view S = *T;
  auto Digits = [&](size_t &P) {
    int64_t V = 0;
    bool Any = false;
    while (P < S.size() && std::isdigit(static_cast<unsigned char>(S[P]))) {
      if (V > (int64_t(1) << 40))
        return std::optional<int64_t>();
      V = V * 10 + (S[P++] - '0');
      Any = true;
    }
    return Any ? std::optional<int64_t>(V) : std::nullopt;
  };
  if (!S.empty() && S[0] == '[') {
    // Iota form `[groups,size]<=[...]`: the last extent of the first list.
    size_t End = S.find(']');
    if (End == std::string_view::npos)
      return std::nullopt;
    size_t Comma = S.substr(0, End).rfind(',');
    size_t P = Comma == std::string_view::npos ? 1 : Comma + 1;
    return Digits(P);
  }
  // Explicit form `{{0,1,2,3},{4,5,6,7}}`: the first group's length.
  size_t Open = S.find('{', 1);
  if (Open == std::string_view::npos)
    return std::nullopt;
  int64_t Count = 0;
  for (size_t P = Open + 1; P < S.size() && S[P] != '}'; ++P)
    if (std::isdigit(static_cast<unsigned char>(S[P])) &&
        (P == Open + 1 || !std::isdigit(static_cast<unsigned char>(S[P - 1]))))
      ++Count;
  return Count > 0 ? std::optional<int64_t>(Count) : std::nullopt;
}

std::optional<std::string>
verifyIndexedOp(const HloInstruction &I,
                const std::unordered_set<std::string> &Attrs) {
  Checker C(I);
  auto Need = [&](const char *Key) -> Problem {
    if (!Attrs.count(Key))
      return C.fail(std::string("missing attribute '") + Key + "'");
    return std::nullopt;
  };
  switch (I.opcode()) {
  case HloOpcode::Gather:
    for (const char *K : {"slice_sizes", "index_vector_dim"})
      if (Problem P = Need(K))
        return P;
    return C.gather();
  case HloOpcode::Scatter:
    for (const char *K : {"index_vector_dim", "to_apply"})
      if (Problem P = Need(K))
        return P;
    return C.scatter();
  case HloOpcode::Sort:
    for (const char *K : {"dimensions", "to_apply"})
      if (Problem P = Need(K))
        return P;
    return C.sort();
  case HloOpcode::AllGather:
    if (Problem P = Need("dimensions"))
      return P;
    return C.allGather();
  default:
    return std::nullopt;
  }
}

} // namespace hlo
} // namespace idxmap
