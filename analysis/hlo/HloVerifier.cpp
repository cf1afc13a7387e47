//===- analysis/hlo/HloVerifier.cpp - Shape checks for parsed HLO ---------===//
//
// Part of idxmap. A light version of XLA's shape inference: every rule that is
// cheap to check and that the interpreter or the indexing analysis relies on.
//
//===----------------------------------------------------------------------===//
#include "HloVerifier.h"
#include "OpSupport.h"
#include "ContractionOps.h"
#include "ElementKernels.h"
#include "IndexedOps.h"
#include "ScanOp.h"

#include <algorithm>

namespace idxmap {
namespace hlo {

namespace {

using Problem = std::optional<std::string>;

class Verifier {
public:
  Verifier(const HloInstruction &I, const std::unordered_set<std::string> &A)
      : I(I), Attrs(A), Name(opcodeName(I.opcode())) {}

  Problem run();

private:
  Problem fail(const std::string &Message) const {
    return Name + ": " + Message;
  }
  Problem needAttr(const char *Key) const {
    if (!Attrs.count(Key))
      return fail(std::string("missing attribute '") + Key + "'");
    return std::nullopt;
  }
  Problem needOperands(int64_t N) const {
    if (I.operandCount() != N)
      return fail("expected " + std::to_string(N) + " operand" +
                  (N == 1 ? "" : "s") + ", got " +
                  std::to_string(I.operandCount()));
    return std::nullopt;
  }
  Problem needArrays() const {
    if (!I.shape().isArray())
      return fail("result must be an array, not " + I.shape().str());
    for (int64_t K = 0; K < I.operandCount(); ++K)
      if (!I.operand(K)->shape().isArray())
        return fail("operand " + std::to_string(K) + " must be an array, not " +
                    I.operand(K)->shape().str());
    return std::nullopt;
  }
  /// Operand K has the result's dimensions and element type \p T.
  Problem operandLike(int64_t K, PrimitiveType T) const {
    const Shape &S = I.operand(K)->shape();
    Shape Want(T, I.shape().Dims);
    if (!S.compatible(Want))
      return fail("operand " + std::to_string(K) + " is " + S.str() +
                  ", expected " + Want.str());
    return std::nullopt;
  }
  /// \p Dims are distinct and in [0, Rank).
  Problem validDims(const std::vector<int64_t> &Dims, int64_t Rank,
                    const char *What) const {
    std::vector<bool> Seen(size_t(std::max<int64_t>(Rank, 0)), false);
    for (int64_t D : Dims) {
      if (D < 0 || D >= Rank)
        return fail(std::string(What) + " " + dimList(Dims) +
                    " out of range for rank " + std::to_string(Rank));
      if (Seen[size_t(D)])
        return fail(std::string(What) + " " + dimList(Dims) +
                    " repeats dimension " + std::to_string(D));
      Seen[size_t(D)] = true;
    }
    return std::nullopt;
  }
  Problem resultIs(const Shape &Want) const {
    if (!I.shape().compatible(Want))
      return fail("result shape is " + I.shape().str() + ", expected " +
                  Want.str());
    return std::nullopt;
  }
  Problem scalarIndices(int64_t From) const {
    for (int64_t K = From; K < I.operandCount(); ++K) {
      const Shape &S = I.operand(K)->shape();
      if (!S.isScalar() || !isIntegralType(S.Type))
        return fail("start index operand " + std::to_string(K) +
                    " must be an integer scalar, not " + S.str());
    }
    return std::nullopt;
  }
  Problem calls(int64_t NumParams) const {
    const HloComputation *C = I.toApply();
    if (!C || I.calledComputations().size() != 1)
      return fail("expected exactly one called computation");
    if (C->parameterCount() != NumParams)
      return fail("called computation '" + C->name() + "' has " +
                  std::to_string(C->parameterCount()) +
                  " parameters, expected " + std::to_string(NumParams));
    return std::nullopt;
  }

  Problem unary();
  Problem binary();
  Problem reduce();

  const HloInstruction &I;
  const std::unordered_set<std::string> &Attrs;
  std::string Name;
};

Problem Verifier::unary() {
  if (Problem P = needOperands(1))
    return P;
  if (Problem P = needArrays())
    return P;
  PrimitiveType T = I.operand(0)->shape().Type;
  // Types that are not compute types (c64, f8...) are opaque here.
  if (isComputeType(T) && !unaryOpSupports(I.opcode(), T))
    return fail("not defined on " + std::string(primitiveTypeName(T)));
  // abs, real, ... of c64 give f32: a type without value semantics here
  // only has its dimensions checked.
  if (!isComputeType(T) || !isComputeType(I.shape().Type)) {
    if (!I.shape().sameDims(I.operand(0)->shape()))
      return fail("result shape is " + I.shape().str() + ", expected the "
                  "dimensions of " + I.operand(0)->shape().str());
    return std::nullopt;
  }
  PrimitiveType Out =
      I.opcode() == HloOpcode::IsFinite ? PrimitiveType::Pred : T;
  return resultIs(Shape(Out, I.operand(0)->shape().Dims));
}

Problem Verifier::binary() {
  if (Problem P = needOperands(2))
    return P;
  if (Problem P = needArrays())
    return P;
  PrimitiveType T = I.shape().Type;
  if (isComputeType(T) && !binaryOpSupports(I.opcode(), T))
    return fail("not defined on " + std::string(primitiveTypeName(T)));
  if (Problem P = operandLike(0, T))
    return P;
  return operandLike(1, T);
}

Problem Verifier::reduce() {
  if (Problem P = needAttr("dimensions"))
    return P;
  if (Problem P = needAttr("to_apply"))
    return P;
  int64_t Count = I.operandCount();
  if (Count < 2 || Count % 2)
    return fail("expected inputs followed by as many init values, got " +
                std::to_string(Count) + " operands");
  int64_t N = Count / 2;
  const Shape &In0 = I.operand(0)->shape();
  for (int64_t K = 0; K < Count; ++K)
    if (!I.operand(K)->shape().isArray())
      return fail("operand " + std::to_string(K) + " must be an array");
  for (int64_t K = 1; K < N; ++K)
    if (!I.operand(K)->shape().sameDims(In0))
      return fail("input " + std::to_string(K) + " is " +
                  I.operand(K)->shape().str() + ", expected the dimensions of " +
                  In0.str());
  for (int64_t K = 0; K < N; ++K)
    if (!I.operand(N + K)->shape().isScalar())
      return fail("init value " + std::to_string(K) + " must be a scalar, not " +
                  I.operand(N + K)->shape().str());
  if (Problem P = validDims(I.dimensions(), In0.rank(), "dimensions"))
    return P;
  if (Problem P = calls(2 * N))
    return P;
  std::vector<int64_t> Kept;
  for (int64_t D = 0; D < In0.rank(); ++D)
    if (std::find(I.dimensions().begin(), I.dimensions().end(), D) ==
        I.dimensions().end())
      Kept.push_back(In0.Dims[size_t(D)]);
  const HloComputation *C = I.toApply();
  for (int64_t K = 0; K < 2 * N; ++K) {
    // Parameters are the N accumulators (typed like the init values), then
    // the N input elements.
    const Shape &P = C->parameter(K)->shape();
    PrimitiveType Want = I.operand(K < N ? N + K : K - N)->shape().Type;
    if (!P.isScalar() || P.Type != Want)
      return fail("parameter " + std::to_string(K) + " of '" + C->name() +
                  "' is " + P.str() + ", expected " +
                  std::string(primitiveTypeName(Want)) + "[]");
  }
  const Shape &Root = C->root()->shape();
  if (N == 1) {
    if (!Root.isScalar() || Root.Type != I.operand(1)->shape().Type)
      return fail("'" + C->name() + "' must return a " +
                  std::string(primitiveTypeName(I.operand(1)->shape().Type)) +
                  " scalar, not " + Root.str());
    return resultIs(Shape(Root.Type, Kept));
  }
  if (!Root.isTuple() || int64_t(Root.TupleShapes.size()) != N)
    return fail("'" + C->name() + "' must return a tuple of " +
                std::to_string(N) + " scalars, not " + Root.str());
  std::vector<Shape> Outs;
  for (int64_t K = 0; K < N; ++K) {
    const Shape &E = Root.TupleShapes[size_t(K)];
    if (!E.isScalar() || E.Type != I.operand(N + K)->shape().Type)
      return fail("'" + C->name() + "' must return the init values' types, "
                  "not " + Root.str());
    Outs.push_back(Shape(E.Type, Kept));
  }
  return resultIs(Shape::tuple(Outs));
}

Problem Verifier::run() {
  const Shape &Out = I.shape();
  HloOpcode Op = I.opcode();
  if (isUnaryElementwise(Op))
    return unary();
  if (isBinaryElementwise(Op))
    return binary();

  switch (Op) {
  case HloOpcode::Parameter:
    return std::nullopt;
  case HloOpcode::Constant:
    return std::nullopt;

  case HloOpcode::Iota:
    if (Problem P = needAttr("iota_dimension"))
      return P;
    if (Problem P = needOperands(0))
      return P;
    if (!Out.isArray() || Out.rank() == 0)
      return fail("result must be an array of rank >= 1");
    if (I.iotaDimension() < 0 || I.iotaDimension() >= Out.rank())
      return fail("iota_dimension " + std::to_string(I.iotaDimension()) +
                  " out of range for rank " + std::to_string(Out.rank()));
    return std::nullopt;

  case HloOpcode::Broadcast: {
    if (Problem P = needAttr("dimensions"))
      return P;
    if (Problem P = needOperands(1))
      return P;
    if (Problem P = needArrays())
      return P;
    const Shape &In = I.operand(0)->shape();
    if (In.Type != Out.Type)
      return fail("element type changes from " + In.str() + " to " +
                  Out.str());
    if (int64_t(I.dimensions().size()) != In.rank())
      return fail("dimensions " + dimList(I.dimensions()) +
                  " must name one result dimension per operand dimension of " +
                  In.str());
    if (Problem P = validDims(I.dimensions(), Out.rank(), "dimensions"))
      return P;
    for (size_t K = 0; K < I.dimensions().size(); ++K)
      if (In.Dims[K] != Out.Dims[size_t(I.dimensions()[K])])
        return fail("operand dimension " + std::to_string(K) + " (size " +
                    std::to_string(In.Dims[K]) + ") does not match result "
                    "dimension " + std::to_string(I.dimensions()[K]) +
                    " (size " +
                    std::to_string(Out.Dims[size_t(I.dimensions()[K])]) + ")");
    return std::nullopt;
  }

  case HloOpcode::Reshape:
  case HloOpcode::Bitcast: {
    if (Problem P = needOperands(1))
      return P;
    if (Problem P = needArrays())
      return P;
    const Shape &In = I.operand(0)->shape();
    if (Op == HloOpcode::Reshape) {
      if (In.Type != Out.Type)
        return fail("element type changes from " + In.str() + " to " +
                    Out.str());
      if (In.numElements() != Out.numElements())
        return fail("element count changes from " + In.str() + " to " +
                    Out.str());
      return std::nullopt;
    }
    if (In.numElements() * byteWidth(In.Type) !=
        Out.numElements() * byteWidth(Out.Type))
      return fail("byte size changes from " + In.str() + " to " + Out.str());
    return std::nullopt;
  }

  case HloOpcode::Transpose: {
    if (Problem P = needAttr("dimensions"))
      return P;
    if (Problem P = needOperands(1))
      return P;
    if (Problem P = needArrays())
      return P;
    const Shape &In = I.operand(0)->shape();
    const std::vector<int64_t> &Perm = I.dimensions();
    if (int64_t(Perm.size()) != In.rank())
      return fail("dimensions " + dimList(Perm) +
                  " is not a permutation of the operand dimensions of " +
                  In.str());
    if (Problem P = validDims(Perm, In.rank(), "dimensions"))
      return P;
    std::vector<int64_t> Dims;
    for (int64_t D : Perm)
      Dims.push_back(In.Dims[size_t(D)]);
    return resultIs(Shape(In.Type, Dims));
  }

  case HloOpcode::Copy:
    if (Problem P = needOperands(1))
      return P;
    return resultIs(I.operand(0)->shape());

  case HloOpcode::Slice: {
    if (Problem P = needAttr("slice"))
      return P;
    if (Problem P = needOperands(1))
      return P;
    if (Problem P = needArrays())
      return P;
    const Shape &In = I.operand(0)->shape();
    if (int64_t(I.sliceStarts().size()) != In.rank())
      return fail("slice has " + std::to_string(I.sliceStarts().size()) +
                  " dimensions, the operand " + In.str() + " has " +
                  std::to_string(In.rank()));
    std::vector<int64_t> Dims;
    for (size_t D = 0; D < I.sliceStarts().size(); ++D) {
      int64_t S = I.sliceStarts()[D], E = I.sliceLimits()[D],
              St = I.sliceStrides()[D];
      if (S < 0 || S > E || E > In.Dims[D] || St < 1)
        return fail("slice [" + std::to_string(S) + ":" + std::to_string(E) +
                    ":" + std::to_string(St) + "] is invalid for dimension " +
                    std::to_string(D) + " of size " +
                    std::to_string(In.Dims[D]));
      Dims.push_back(E == S ? 0 : (E - S - 1) / St + 1); // no overflow
    }
    return resultIs(Shape(In.Type, Dims));
  }

  case HloOpcode::DynamicSlice: {
    if (Problem P = needAttr("dynamic_slice_sizes"))
      return P;
    if (I.operandCount() < 1)
      return fail("expected an operand");
    const Shape &In = I.operand(0)->shape();
    if (In.rank() > 1 && I.operandCount() == 2 &&
        I.operand(1)->shape().rank() == 1)
      return fail("start indices as one vector (XLA's old form) are not "
                  "supported; give one scalar index per dimension");
    if (Problem P = needOperands(1 + In.rank()))
      return P;
    if (Problem P = needArrays())
      return P;
    if (Problem P = scalarIndices(1))
      return P;
    const std::vector<int64_t> &Sizes = I.dynamicSliceSizes();
    if (int64_t(Sizes.size()) != In.rank())
      return fail("dynamic_slice_sizes " + dimList(Sizes) +
                  " does not match the rank of " + In.str());
    for (size_t D = 0; D < Sizes.size(); ++D)
      if (Sizes[D] < 0 || Sizes[D] > In.Dims[D])
        return fail("slice size " + std::to_string(Sizes[D]) +
                    " out of range for dimension " + std::to_string(D) +
                    " of size " + std::to_string(In.Dims[D]));
    return resultIs(Shape(In.Type, Sizes));
  }

  case HloOpcode::DynamicUpdateSlice: {
    if (I.operandCount() < 2)
      return fail("expected an operand and an update");
    const Shape &In = I.operand(0)->shape();
    if (In.rank() > 1 && I.operandCount() == 3 &&
        I.operand(2)->shape().rank() == 1)
      return fail("start indices as one vector (XLA's old form) are not "
                  "supported; give one scalar index per dimension");
    if (Problem P = needOperands(2 + In.rank()))
      return P;
    if (Problem P = needArrays())
      return P;
    if (Problem P = scalarIndices(2))
      return P;
    const Shape &Upd = I.operand(1)->shape();
    if (Upd.Type != In.Type || Upd.rank() != In.rank())
      return fail("update " + Upd.str() + " does not match operand " +
                  In.str());
    for (size_t D = 0; D < In.Dims.size(); ++D)
      if (Upd.Dims[D] > In.Dims[D])
        return fail("update " + Upd.str() + " is larger than operand " +
                    In.str() + " in dimension " + std::to_string(D));
    return resultIs(In);
  }

  case HloOpcode::Pad: {
    if (Problem P = needAttr("padding"))
      return P;
    if (Problem P = needOperands(2))
      return P;
    if (Problem P = needArrays())
      return P;
    const Shape &In = I.operand(0)->shape();
    const Shape &Value = I.operand(1)->shape();
    if (!Value.isScalar() || Value.Type != In.Type)
      return fail("padding value must be a " +
                  std::string(primitiveTypeName(In.Type)) + " scalar, not " +
                  Value.str());
    if (int64_t(I.padding().size()) != In.rank())
      return fail("padding has " + std::to_string(I.padding().size()) +
                  " dimensions, the operand " + In.str() + " has " +
                  std::to_string(In.rank()));
    std::vector<int64_t> Dims;
    for (size_t D = 0; D < I.padding().size(); ++D) {
      const PaddingDim &P = I.padding()[D];
      if (P.Interior < 0)
        return fail("negative interior padding in dimension " +
                    std::to_string(D));
      int64_t N = In.Dims[D], Size;
      if (__builtin_mul_overflow(std::max<int64_t>(N - 1, 0), P.Interior,
                                 &Size) ||
          __builtin_add_overflow(Size, N, &Size) ||
          __builtin_add_overflow(Size, P.Lo, &Size) ||
          __builtin_add_overflow(Size, P.Hi, &Size))
        return fail("padding of dimension " + std::to_string(D) +
                    " overflows int64");
      if (Size < 0)
        return fail("padding makes dimension " + std::to_string(D) +
                    " negative");
      Dims.push_back(Size);
    }
    return resultIs(Shape(In.Type, Dims));
  }

  case HloOpcode::Reverse:
    if (Problem P = needAttr("dimensions"))
      return P;
    if (Problem P = needOperands(1))
      return P;
    if (Problem P = needArrays())
      return P;
    if (Problem P = validDims(I.dimensions(), Out.rank(), "dimensions"))
      return P;
    return resultIs(I.operand(0)->shape());

  case HloOpcode::Concatenate: {
    if (Problem P = needAttr("dimensions"))
      return P;
    if (I.operandCount() < 1)
      return fail("expected at least one operand");
    if (Problem P = needArrays())
      return P;
    if (I.dimensions().size() != 1)
      return fail("dimensions must name exactly one dimension");
    const Shape &First = I.operand(0)->shape();
    int64_t Dim = I.dimensions()[0];
    if (Dim < 0 || Dim >= First.rank())
      return fail("dimension " + std::to_string(Dim) +
                  " out of range for rank " + std::to_string(First.rank()));
    std::vector<int64_t> Dims = First.Dims;
    Dims[size_t(Dim)] = 0;
    for (int64_t K = 0; K < I.operandCount(); ++K) {
      const Shape &S = I.operand(K)->shape();
      bool Ok = S.Type == First.Type && S.rank() == First.rank();
      for (int64_t D = 0; Ok && D < S.rank(); ++D)
        Ok = D == Dim || S.Dims[size_t(D)] == First.Dims[size_t(D)];
      if (!Ok)
        return fail("operand " + std::to_string(K) + " " + S.str() +
                    " does not fit operand 0 " + First.str() +
                    " outside dimension " + std::to_string(Dim));
      if (__builtin_add_overflow(Dims[size_t(Dim)], S.Dims[size_t(Dim)],
                                 &Dims[size_t(Dim)]))
        return fail("the result's dimension " + std::to_string(Dim) +
                    " overflows int64");
    }
    return resultIs(Shape(First.Type, Dims));
  }

  case HloOpcode::Reduce:
    return reduce();

  case HloOpcode::Convert:
    if (Problem P = needOperands(1))
      return P;
    if (Problem P = needArrays())
      return P;
    return resultIs(Shape(Out.Type, I.operand(0)->shape().Dims));

  case HloOpcode::Select: {
    if (Problem P = needOperands(3))
      return P;
    if (Problem P = needArrays())
      return P;
    const Shape &Pred = I.operand(0)->shape();
    if (Pred.Type != PrimitiveType::Pred ||
        !(Pred.isScalar() || Pred.Dims == Out.Dims))
      return fail("predicate " + Pred.str() + " must be pred with the "
                  "result's dimensions or a pred scalar");
    if (Problem P = operandLike(1, Out.Type))
      return P;
    return operandLike(2, Out.Type);
  }

  case HloOpcode::Clamp: {
    if (Problem P = needOperands(3))
      return P;
    if (Problem P = needArrays())
      return P;
    if (Problem P = operandLike(1, Out.Type))
      return P;
    for (int64_t K : {0, 2}) {
      const Shape &S = I.operand(K)->shape();
      if (S.Type != Out.Type || !(S.isScalar() || S.Dims == Out.Dims))
        return fail("bound " + std::to_string(K) + " " + S.str() +
                    " must be a scalar or have the shape " + Out.str());
    }
    if (Out.Type == PrimitiveType::Pred)
      return fail("not defined on pred");
    return std::nullopt;
  }

  case HloOpcode::Compare: {
    if (Problem P = needAttr("direction"))
      return P;
    if (Problem P = needOperands(2))
      return P;
    if (Problem P = needArrays())
      return P;
    const Shape &A = I.operand(0)->shape();
    if (!I.operand(1)->shape().compatible(A))
      return fail("operands " + A.str() + " and " +
                  I.operand(1)->shape().str() + " differ");
    return resultIs(Shape(PrimitiveType::Pred, A.Dims));
  }

  case HloOpcode::Tuple: {
    std::vector<Shape> Elements;
    for (const HloInstruction *O : I.operands())
      Elements.push_back(O->shape());
    return resultIs(Shape::tuple(Elements));
  }

  case HloOpcode::GetTupleElement: {
    if (Problem P = needAttr("index"))
      return P;
    if (Problem P = needOperands(1))
      return P;
    const Shape &T = I.operand(0)->shape();
    if (!T.isTuple())
      return fail("operand must be a tuple, not " + T.str());
    if (I.tupleIndex() < 0 || I.tupleIndex() >= int64_t(T.TupleShapes.size()))
      return fail("index " + std::to_string(I.tupleIndex()) +
                  " out of range for " + T.str());
    return resultIs(T.TupleShapes[size_t(I.tupleIndex())]);
  }

  case HloOpcode::Fusion:
  case HloOpcode::Call: {
    if (Op == HloOpcode::Fusion) {
      if (Problem P = needAttr("kind"))
        return P;
      if (Problem P = needAttr("calls"))
        return P;
      // A fusion's outputs are arrays, one per element of a tuple root
      // (the emitters and the indexing of multi-output fusions count
      // outputs by one index).
      if (Out.isTuple() && Out.TupleShapes.empty())
        return fail("a fusion needs at least one output, not ()");
      for (size_t K = 0; Out.isTuple() && K < Out.TupleShapes.size(); ++K)
        if (!Out.TupleShapes[K].isArray())
          return fail("output " + std::to_string(K) + " is the tuple " +
                      Out.TupleShapes[K].str() +
                      "; fusion outputs must be arrays");
    } else if (Problem P = needAttr("to_apply")) {
      return P;
    }
    if (Problem P = calls(I.operandCount()))
      return P;
    const HloComputation *C = I.toApply();
    for (int64_t K = 0; K < I.operandCount(); ++K)
      if (!C->parameter(K)->shape().compatible(I.operand(K)->shape()))
        return fail("operand " + std::to_string(K) + " is " +
                    I.operand(K)->shape().str() + " but parameter " +
                    std::to_string(K) + " of '" + C->name() + "' is " +
                    C->parameter(K)->shape().str());
    if (!C->root()->shape().compatible(Out))
      return fail("result shape is " + Out.str() + " but '" + C->name() +
                  "' returns " + C->root()->shape().str());
    return std::nullopt;
  }

  case HloOpcode::Gather:
  case HloOpcode::Scatter:
  case HloOpcode::Sort:
  case HloOpcode::AllGather:
    return verifyIndexedOp(I, Attrs);

  case HloOpcode::Dot:
    return verifyDot(I, Attrs);
  case HloOpcode::Convolution:
    return verifyConvolution(I, Attrs);
  case HloOpcode::ReduceWindow:
    return verifyReduceWindow(I, Attrs);
  case HloOpcode::Scan:
    return verifyScan(I, Attrs);
  case HloOpcode::SelectAndScatter:
    return verifySelectAndScatter(I, Attrs);
  case HloOpcode::Map:
    return verifyMap(I, Attrs);

  default:
    // The ops after Call in HloOpcode are opaque to the checks (and to the
    // analyses, until they have a rule here).
    if (Op > HloOpcode::Call)
      return std::nullopt;
    return fail("no shape rule");
  }
}

} // namespace

std::optional<std::string>
verifyInstruction(const HloInstruction &I,
                  const std::unordered_set<std::string> &Attrs) {
  return Verifier(I, Attrs).run();
}

} // namespace hlo
} // namespace idxmap
