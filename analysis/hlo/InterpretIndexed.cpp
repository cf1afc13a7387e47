//===- InterpretIndexed.cpp - Gather, scatter, sort, collectives ---------===//
//
// Part of idxmap. Reference semantics, element by element, in XLA's index
// order:
//  - gather and scatter clamp (gather) or check (scatter) start indices as
//    XLA does: a gather start is clamped to [0, operand - slice]; a scatter
//    update window that does not fit the operand whole is skipped.
//  - scatter applies to_apply in update index order (row-major).
//  - sort is a stable merge sort (a valid result for is_stable=false too)
//    whose comparator is the called computation; a merge sort never reads
//    out of bounds, whatever the comparator answers.
//  - collectives run on one device as if every replica of a group held the
//    same values (see IndexedOps.h).
//
//===----------------------------------------------------------------------===//
#include "IndexedOps.h"

#include "idxmap/HloScatter.h"

#include <algorithm>

namespace idxmap {
namespace hlo {

namespace {

Diagnostic diag(const HloInstruction &I, std::string Message) {
  return I.parent()->parent()->diagnose(I.sourceOffset(), std::move(Message));
}

/// Advances \p Idx over \p Dims in row-major order; false after the last.
bool next(std::vector<int64_t> &Idx, const std::vector<int64_t> &Dims) {
  for (size_t D = Idx.size(); D-- > 0;) {
    if (++Idx[D] < Dims[D])
      return true;
    Idx[D] = 0;
  }
  return false;
}

bool contains(const std::vector<int64_t> &V, int64_t X) {
  return std::find(V.begin(), V.end(), X) != V.end();
}

Literal scalarOf(const Literal &L, int64_t Linear) {
  Literal S(Shape(L.elementType(), {}));
  S.setBits(0, L.getBits(Linear));
  return S;
}

/// Evaluates \p C on the scalars \p Args; the root's scalars in order.
Expected<std::vector<Literal>> callScalar(const ComputationRunner &Run,
                                          const HloComputation &C,
                                          const std::vector<Literal> &Args) {
  std::vector<const Literal *> Ptrs;
  for (const Literal &A : Args)
    Ptrs.push_back(&A);
  Expected<Literal> R = Run(C, Ptrs);
  if (!R)
    return R.error();
  std::vector<Literal> Out;
  if (R->isTuple())
    Out = std::move(R->elements());
  else
    Out.push_back(std::move(*R));
  return Out;
}

Literal evalGather(const HloInstruction &I, const Literal &Op,
                   const Literal &Idx, const Shape &OutShape) {
  const GatherDimensions &G = I.gatherDimensions();
  const std::vector<int64_t> &Sizes = I.gatherSliceSizes();
  const std::vector<int64_t> &OpDims = Op.shape().Dims;
  const std::vector<int64_t> &IdxDims = Idx.shape().Dims;
  int64_t Ivd = G.IndexVectorDim, IdxRank = int64_t(IdxDims.size());
  Literal Out(OutShape);
  std::vector<int64_t> BatchOut;
  for (int64_t D = 0; D < OutShape.rank(); ++D)
    if (!contains(G.OffsetDims, D))
      BatchOut.push_back(D);
  if (Out.elementCount() == 0)
    return Out;
  std::vector<int64_t> O(OutShape.Dims.size(), 0), IdxAt(IdxDims.size());
  std::vector<int64_t> In(OpDims.size());
  int64_t Linear = 0;
  do {
    size_t B = 0;
    for (int64_t D = 0; D < IdxRank; ++D)
      IdxAt[size_t(D)] = D == Ivd ? 0 : O[size_t(BatchOut[B++])];
    size_t Off = 0;
    for (int64_t D = 0; D < int64_t(OpDims.size()); ++D) {
      auto Bt = std::find(G.OperandBatchingDims.begin(),
                          G.OperandBatchingDims.end(), D);
      if (Bt != G.OperandBatchingDims.end())
        In[size_t(D)] = IdxAt[size_t(G.StartIndicesBatchingDims[size_t(
            Bt - G.OperandBatchingDims.begin())])];
      else if (contains(G.CollapsedSliceDims, D))
        In[size_t(D)] = 0;
      else
        In[size_t(D)] = O[size_t(G.OffsetDims[Off++])];
    }
    for (size_t J = 0; J < G.StartIndexMap.size(); ++J) {
      if (Ivd < IdxRank)
        IdxAt[size_t(Ivd)] = int64_t(J);
      int64_t D = G.StartIndexMap[J];
      int64_t V = Idx.getInt(Idx.linearIndex(IdxAt));
      In[size_t(D)] += std::min(std::max<int64_t>(V, 0),
                                OpDims[size_t(D)] - Sizes[size_t(D)]);
    }
    // A collapsed dim of slice size 0 (XLA allows it) reads nothing.
    bool Inside = true;
    for (size_t D = 0; D < In.size(); ++D)
      Inside = Inside && In[D] >= 0 && In[D] < OpDims[D];
    if (Inside)
      Out.setBits(Linear, Op.getBits(Op.linearIndex(In)));
    ++Linear;
  } while (next(O, OutShape.Dims));
  return Out;
}

/// The operand index of update element \p U, or false if its window does
/// not fit the operand (XLA skips it).
bool scatterTarget(const HloInstruction &I, const Literal &Idx, const Shape &Op,
                   const Shape &Upd, const std::vector<int64_t> &U,
                   std::vector<int64_t> &Target) {
  const ScatterDimensions &S = I.scatterDimensions();
  int64_t Ivd = S.IndexVectorDim, IdxRank = Idx.shape().rank();
  std::vector<int64_t> IdxAt(size_t(IdxRank), 0), Start(Op.Dims.size(), 0),
      Size(Op.Dims.size(), 1);
  size_t B = 0;
  for (int64_t D = 0; D < Upd.rank(); ++D) {
    if (isUpdateWindowDim(S, D))
      continue;
    if (int64_t(B) == Ivd)
      ++B;
    IdxAt[B++] = U[size_t(D)];
  }
  for (size_t K = 0; K < S.ScatterDimsToOperandDims.size(); ++K) {
    if (Ivd < IdxRank)
      IdxAt[size_t(Ivd)] = int64_t(K);
    Start[size_t(S.ScatterDimsToOperandDims[K])] =
        Idx.getInt(Idx.linearIndex(IdxAt));
  }
  for (size_t K = 0; K < S.InputBatchingDims.size(); ++K)
    Start[size_t(S.InputBatchingDims[K])] =
        IdxAt[size_t(S.ScatterIndicesBatchingDims[K])];
  size_t W = 0;
  for (int64_t D = 0; D < Op.rank(); ++D) {
    Target[size_t(D)] = Start[size_t(D)];
    if (!isOperandWindowDim(S, D))
      continue;
    int64_t UD = S.UpdateWindowDims[W++];
    Size[size_t(D)] = Upd.Dims[size_t(UD)];
    Target[size_t(D)] += U[size_t(UD)];
  }
  for (int64_t D = 0; D < Op.rank(); ++D)
    if (Start[size_t(D)] < 0 ||
        Start[size_t(D)] > Op.Dims[size_t(D)] - Size[size_t(D)])
      return false;
  return true;
}

Expected<Literal> evalScatter(const HloInstruction &I,
                              const std::vector<const Literal *> &In,
                              const ComputationRunner &Run) {
  int64_t N = (I.operandCount() - 1) / 2;
  const Literal &Idx = *In[size_t(N)];
  std::vector<Literal> Res;
  for (int64_t K = 0; K < N; ++K)
    Res.push_back(*In[size_t(K)]);
  const Shape &Op = Res[0].shape(), &Upd = In[size_t(N + 1)]->shape();
  std::vector<int64_t> U(Upd.Dims.size(), 0), Target(Op.Dims.size());
  std::vector<Literal> Args(size_t(2 * N));
  if (Upd.numElements() > 0) {
    int64_t ULinear = 0;
    do {
      if (scatterTarget(I, Idx, Op, Upd, U, Target)) {
        int64_t T = Res[0].linearIndex(Target);
        for (int64_t K = 0; K < N; ++K) {
          Args[size_t(K)] = scalarOf(Res[size_t(K)], T);
          Args[size_t(N + K)] = scalarOf(*In[size_t(N + 1 + K)], ULinear);
        }
        auto R = callScalar(Run, *I.toApply(), Args);
        if (!R)
          return R.error();
        for (int64_t K = 0; K < N && K < int64_t(R->size()); ++K)
          Res[size_t(K)].setBits(T, (*R)[size_t(K)].getBits(0));
      }
      ++ULinear;
    } while (next(U, Upd.Dims));
  }
  if (N == 1)
    return std::move(Res[0]);
  return Literal::tuple(std::move(Res));
}

/// Sorts Perm (positions along the sort dim) stably with \p Less.
template <typename LessFn>
void mergeSort(std::vector<int64_t> &Perm, LessFn Less) {
  std::vector<int64_t> Tmp(Perm.size());
  for (size_t Width = 1; Width < Perm.size(); Width *= 2) {
    for (size_t Lo = 0; Lo < Perm.size(); Lo += 2 * Width) {
      size_t Mid = std::min(Lo + Width, Perm.size());
      size_t Hi = std::min(Lo + 2 * Width, Perm.size());
      size_t A = Lo, B = Mid, O = Lo;
      while (A < Mid && B < Hi)
        Tmp[O++] = Less(Perm[B], Perm[A]) ? Perm[B++] : Perm[A++];
      while (A < Mid)
        Tmp[O++] = Perm[A++];
      while (B < Hi)
        Tmp[O++] = Perm[B++];
    }
    Perm.swap(Tmp);
  }
}

Expected<Literal> evalSort(const HloInstruction &I,
                           const std::vector<const Literal *> &In,
                           const ComputationRunner &Run) {
  size_t N = In.size();
  const std::vector<int64_t> &Dims = In[0]->shape().Dims;
  int64_t SortDim = I.dimensions().at(0);
  int64_t Extent = Dims[size_t(SortDim)], Stride = 1;
  for (size_t D = size_t(SortDim) + 1; D < Dims.size(); ++D)
    Stride *= Dims[D];
  std::vector<Literal> Res;
  for (const Literal *L : In)
    Res.push_back(*L);
  std::optional<Diagnostic> Error;
  std::vector<Literal> Args(2 * N);
  std::vector<int64_t> Row(Dims.size(), 0), RowDims = Dims;
  RowDims[size_t(SortDim)] = 1;
  if (In[0]->elementCount() == 0)
    return N == 1 ? std::move(Res[0]) : Literal::tuple(std::move(Res));
  do {
    int64_t Base = In[0]->linearIndex(Row);
    auto Less = [&](int64_t A, int64_t B) {
      if (Error)
        return false;
      for (size_t K = 0; K < N; ++K) {
        Args[2 * K] = scalarOf(*In[K], Base + A * Stride);
        Args[2 * K + 1] = scalarOf(*In[K], Base + B * Stride);
      }
      auto R = callScalar(Run, *I.toApply(), Args);
      if (!R) {
        Error = R.error();
        return false;
      }
      return !R->empty() && (*R)[0].getInt(0) != 0;
    };
    std::vector<int64_t> Perm(static_cast<size_t>(Extent));
    for (int64_t J = 0; J < Extent; ++J)
      Perm[size_t(J)] = J;
    mergeSort(Perm, Less);
    if (Error)
      return *Error;
    for (size_t K = 0; K < N; ++K)
      for (int64_t J = 0; J < Extent; ++J)
        Res[K].setBits(Base + J * Stride,
                       In[K]->getBits(Base + Perm[size_t(J)] * Stride));
  } while (next(Row, RowDims));
  if (N == 1)
    return std::move(Res[0]);
  return Literal::tuple(std::move(Res));
}

/// out[o] = in[o with o_d mod n]: all-gather's tiling and all-to-all's
/// replica-0 view (chunk 0 of every replica).
Literal tileAlong(const Literal &In, const Shape &OutShape, int64_t D,
                  int64_t N) {
  Literal Out(OutShape);
  if (Out.elementCount() == 0 || N <= 0)
    return Out;
  std::vector<int64_t> O(OutShape.Dims.size(), 0);
  int64_t Linear = 0;
  do {
    std::vector<int64_t> Src = O;
    Src[size_t(D)] %= N;
    Out.setBits(Linear++, In.getBits(In.linearIndex(Src)));
  } while (next(O, OutShape.Dims));
  return Out;
}

/// \p In combined with itself \p Copies times by to_apply (every replica
/// contributes the same value), restricted to the first elements of
/// \p OutShape along every dim (replica 0's shard for reduce-scatter).
Expected<Literal> foldCopies(const HloInstruction &I, const Literal &In,
                             const Shape &OutShape, int64_t Copies,
                             const ComputationRunner &Run) {
  Literal Out(OutShape);
  if (Out.elementCount() == 0)
    return Out;
  std::vector<int64_t> O(OutShape.Dims.size(), 0);
  std::vector<Literal> Args(2);
  int64_t Linear = 0;
  do {
    Literal X = scalarOf(In, In.linearIndex(O));
    Literal Acc = X;
    for (int64_t C = 1; C < Copies; ++C) {
      Args[0] = Acc;
      Args[1] = X;
      auto R = callScalar(Run, *I.toApply(), Args);
      if (!R)
        return R.error();
      Acc = std::move((*R)[0]);
    }
    Out.setBits(Linear++, Acc.getBits(0));
  } while (next(O, OutShape.Dims));
  return Out;
}

/// \p C takes two scalars of type \p T and returns one.
bool isScalarReducer(const HloComputation *C, PrimitiveType T) {
  if (!C || C->parameterCount() != 2)
    return false;
  for (int64_t K = 0; K < 2; ++K)
    if (!C->parameter(K)->shape().isScalar() ||
        C->parameter(K)->shape().Type != T)
      return false;
  const Shape &R = C->root()->shape();
  return R.isScalar() && R.Type == T;
}

/// True if `source_target_pairs` sends something to replica 0.
bool someoneSendsToZero(const HloInstruction &I) {
  std::optional<std::string_view> T = I.attribute("source_target_pairs");
  if (!T)
    return false;
  std::string_view S = *T;
  for (size_t P = S.find(','); P != std::string_view::npos;
       P = S.find(',', P + 1)) {
    size_t Q = P + 1;
    while (Q < S.size() && S[Q] == ' ')
      ++Q;
    if (Q + 1 < S.size() && S[Q] == '0' && S[Q + 1] == '}')
      return true;
  }
  return false;
}

Expected<Literal> evalCollective(const HloInstruction &I,
                                 const std::vector<const Literal *> &In,
                                 const Shape &Out,
                                 const ComputationRunner &Run) {
  HloOpcode Op = I.opcode();
  size_t N = In.size();
  auto OutK = [&](size_t K) -> const Shape & {
    return Out.isTuple() ? Out.TupleShapes[K] : Out;
  };
  if (Out.isTuple() ? Out.TupleShapes.size() != N : N != 1)
    return diag(I, "cannot evaluate '" + I.name() + "': " + std::to_string(N) +
                       " operands and result " + Out.str());
  std::vector<Literal> Res;
  for (size_t K = 0; K < N; ++K) {
    const Shape &S = OutK(K), &InS = In[K]->shape();
    int64_t D = I.dimensions().empty() ? -1 : I.dimensions()[0];
    bool DimOk = D >= 0 && D < InS.rank() && S.rank() == InS.rank();
    bool Reduces = Op == HloOpcode::AllReduce || Op == HloOpcode::ReduceScatter;
    PrimitiveType T = I.operand(int64_t(K))->shape().Type;
    if (Reduces && !isScalarReducer(I.toApply(), T))
      return diag(I, "cannot evaluate '" + I.name() +
                         "': to_apply must "
                         "take two " +
                         std::string(primitiveTypeName(T)) +
                         " scalars and return one");
    if (Op == HloOpcode::AllGather || Op == HloOpcode::AllToAll) {
      // All-to-all without dimensions (the tuple form) is not modeled.
      if (!DimOk)
        return diag(I, "cannot evaluate '" + I.name() + "': dimensions");
      int64_t Chunk = InS.Dims[size_t(D)];
      if (Op == HloOpcode::AllToAll) {
        int64_t G = std::max<int64_t>(replicaGroupSize(I).value_or(1), 1);
        if (!S.sameDims(InS) || Chunk % G)
          return diag(I, "cannot evaluate '" + I.name() + "': " + InS.str() +
                             " does not split into " + std::to_string(G) +
                             " chunks of " + S.str());
        Chunk /= G;
      }
      Res.push_back(tileAlong(*In[K], S, D, Chunk));
      continue;
    }
    if (Op == HloOpcode::CollectivePermute) {
      if (!S.sameDims(InS))
        return diag(I, "cannot evaluate '" + I.name() + "': result shape");
      Res.push_back(someoneSendsToZero(I) ? *In[K] : Literal(S));
      continue;
    }
    int64_t Copies = replicaGroupSize(I).value_or(1);
    if (Op == HloOpcode::ReduceScatter) {
      bool Ok = DimOk && S.Dims[size_t(D)] > 0 &&
                InS.Dims[size_t(D)] % S.Dims[size_t(D)] == 0;
      for (int64_t E = 0; Ok && E < InS.rank(); ++E)
        Ok = E == D || S.Dims[size_t(E)] == InS.Dims[size_t(E)];
      if (!Ok)
        return diag(I, "cannot evaluate '" + I.name() + "': " + S.str() +
                           " is not a shard of " + InS.str());
      Copies = InS.Dims[size_t(D)] / S.Dims[size_t(D)];
    } else if (!S.sameDims(InS)) {
      return diag(I, "cannot evaluate '" + I.name() + "': result shape");
    }
    auto R = foldCopies(I, *In[K], S, Copies, Run);
    if (!R)
      return R.error();
    Res.push_back(std::move(*R));
  }
  if (!Out.isTuple())
    return std::move(Res[0]);
  return Literal::tuple(std::move(Res));
}

} // namespace

bool canEvaluateIndexedOp(HloOpcode Op) {
  switch (Op) {
  case HloOpcode::Gather:
  case HloOpcode::Scatter:
  case HloOpcode::Sort:
  case HloOpcode::AllGather:
  case HloOpcode::AllReduce:
  case HloOpcode::ReduceScatter:
  case HloOpcode::AllToAll:
  case HloOpcode::CollectivePermute:
  case HloOpcode::ReplicaId:
  case HloOpcode::PartitionId:
    return true;
  default:
    return false;
  }
}

Expected<Literal> evalIndexedOp(const HloInstruction &I,
                                const std::vector<const Literal *> &In,
                                const Shape &Out,
                                const ComputationRunner &Run) {
  switch (I.opcode()) {
  case HloOpcode::Gather:
    return evalGather(I, *In[0], *In[1], Out);
  case HloOpcode::Scatter:
    return evalScatter(I, In, Run);
  case HloOpcode::Sort:
    return evalSort(I, In, Run);
  case HloOpcode::ReplicaId:
  case HloOpcode::PartitionId:
    // One device: replica 0 of partition 0.
    return Literal(Out);
  default:
    return evalCollective(I, In, Out, Run);
  }
}

} // namespace hlo
} // namespace idxmap
