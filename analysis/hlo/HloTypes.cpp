//===- analysis/hlo/HloTypes.cpp - Element types, shapes, opcode names ----===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <numeric>

namespace idxmap {

//===----------------------------------------------------------------------===//
// PrimitiveType
//===----------------------------------------------------------------------===//

namespace {
struct TypeInfo {
  PrimitiveType Type;
  std::string_view Name; // sized: a comparison checks the length first
  int64_t Bytes;
  int Bits;
};
constexpr TypeInfo TypeTable[] = {
    {PrimitiveType::Pred, "pred", 1, 1},  {PrimitiveType::S8, "s8", 1, 8},
    {PrimitiveType::S16, "s16", 2, 16},   {PrimitiveType::S32, "s32", 4, 32},
    {PrimitiveType::S64, "s64", 8, 64},   {PrimitiveType::U8, "u8", 1, 8},
    {PrimitiveType::U16, "u16", 2, 16},   {PrimitiveType::U32, "u32", 4, 32},
    {PrimitiveType::U64, "u64", 8, 64},   {PrimitiveType::F16, "f16", 2, 16},
    {PrimitiveType::BF16, "bf16", 2, 16}, {PrimitiveType::F32, "f32", 4, 32},
    {PrimitiveType::F64, "f64", 8, 64},
    // Not compute types (isComputeType): parsed and indexed only.
    {PrimitiveType::S2, "s2", 1, 2},      {PrimitiveType::S4, "s4", 1, 4},
    {PrimitiveType::U2, "u2", 1, 2},      {PrimitiveType::U4, "u4", 1, 4},
    {PrimitiveType::C64, "c64", 8, 64},   {PrimitiveType::C128, "c128", 16, 128},
    {PrimitiveType::F4E2M1FN, "f4e2m1fn", 1, 4},
    {PrimitiveType::F8E3M4, "f8e3m4", 1, 8},
    {PrimitiveType::F8E4M3, "f8e4m3", 1, 8},
    {PrimitiveType::F8E4M3FN, "f8e4m3fn", 1, 8},
    {PrimitiveType::F8E4M3B11FNUZ, "f8e4m3b11fnuz", 1, 8},
    {PrimitiveType::F8E4M3FNUZ, "f8e4m3fnuz", 1, 8},
    {PrimitiveType::F8E5M2, "f8e5m2", 1, 8},
    {PrimitiveType::F8E5M2FNUZ, "f8e5m2fnuz", 1, 8},
    {PrimitiveType::F8E8M0FNU, "f8e8m0fnu", 1, 8},
};
const TypeInfo *typeInfo(PrimitiveType T) {
  for (const TypeInfo &I : TypeTable)
    if (I.Type == T)
      return &I;
  return nullptr;
}
} // namespace

std::string_view primitiveTypeName(PrimitiveType T) {
  if (const TypeInfo *I = typeInfo(T))
    return I->Name;
  if (T == PrimitiveType::Token)
    return "token";
  return T == PrimitiveType::Tuple ? "tuple" : "invalid";
}

std::optional<PrimitiveType> parsePrimitiveType(std::string_view Name) {
  for (const TypeInfo &I : TypeTable)
    if (Name == I.Name)
      return I.Type;
  if (Name == "token")
    return PrimitiveType::Token;
  return std::nullopt;
}

bool isComputeType(PrimitiveType T) {
  return T != PrimitiveType::Invalid && T <= PrimitiveType::F64;
}

bool hasOnlyComputeTypes(const Shape &S) {
  if (!S.isTuple())
    return isComputeType(S.Type);
  for (const Shape &E : S.TupleShapes)
    if (!hasOnlyComputeTypes(E))
      return false;
  return true;
}

int64_t byteWidth(PrimitiveType T) {
  const TypeInfo *I = typeInfo(T);
  return I ? I->Bytes : 0;
}

int bitWidth(PrimitiveType T) {
  const TypeInfo *I = typeInfo(T);
  return I ? I->Bits : 0;
}

bool isFloatType(PrimitiveType T) {
  return T == PrimitiveType::F16 || T == PrimitiveType::BF16 ||
         T == PrimitiveType::F32 || T == PrimitiveType::F64;
}
double unitRoundoff(PrimitiveType T) {
  switch (T) {
  case PrimitiveType::F16:
    return 0x1p-11;
  case PrimitiveType::BF16:
    return 0x1p-8;
  case PrimitiveType::F32:
    return 0x1p-24;
  case PrimitiveType::F64:
    return 0x1p-53;
  default:
    return 0;
  }
}
bool isSignedIntType(PrimitiveType T) {
  return T == PrimitiveType::S8 || T == PrimitiveType::S16 ||
         T == PrimitiveType::S32 || T == PrimitiveType::S64;
}
bool isUnsignedIntType(PrimitiveType T) {
  return T == PrimitiveType::U8 || T == PrimitiveType::U16 ||
         T == PrimitiveType::U32 || T == PrimitiveType::U64;
}
bool isIntegralType(PrimitiveType T) {
  return isSignedIntType(T) || isUnsignedIntType(T);
}
bool isArrayType(PrimitiveType T) { return typeInfo(T) != nullptr; }

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

Shape::Shape(PrimitiveType T, std::vector<int64_t> D, std::vector<int64_t> L)
    : Type(T), Dims(std::move(D)), MinorToMajor(std::move(L)) {}

Shape Shape::tuple(std::vector<Shape> Elements) {
  Shape S;
  S.Type = PrimitiveType::Tuple;
  S.TupleShapes = std::move(Elements);
  return S;
}

int64_t Shape::numElements() const {
  if (!isArray())
    return 0;
  int64_t N = 1;
  for (int64_t D : Dims)
    N *= D;
  return N;
}

int64_t Shape::byteSize() const {
  const int64_t Max = std::numeric_limits<int64_t>::max();
  if (!isTuple()) {
    int64_t N = 1, W = byteWidth(Type);
    for (int64_t D : Dims) {
      if (D != 0 && N > Max / D)
        return Max;
      N *= D;
    }
    return N > Max / std::max<int64_t>(W, 1) ? Max : N * W;
  }
  int64_t Sum = 0;
  for (const Shape &E : TupleShapes) {
    int64_t B = E.byteSize();
    Sum = B > Max - Sum ? Max : Sum + B;
  }
  return Sum;
}

std::vector<int64_t> Shape::layoutOrDefault() const {
  if (!MinorToMajor.empty())
    return MinorToMajor;
  std::vector<int64_t> L(Dims.size());
  for (size_t I = 0; I < Dims.size(); ++I)
    L[I] = int64_t(Dims.size() - 1 - I);
  return L;
}

bool Shape::hasDefaultLayout() const {
  for (size_t I = 0; I < MinorToMajor.size(); ++I)
    if (MinorToMajor[I] != int64_t(MinorToMajor.size() - 1 - I))
      return false;
  return true;
}

bool Shape::compatible(const Shape &Other) const {
  if (Type != Other.Type)
    return false;
  if (isTuple()) {
    if (TupleShapes.size() != Other.TupleShapes.size())
      return false;
    for (size_t I = 0; I < TupleShapes.size(); ++I)
      if (!TupleShapes[I].compatible(Other.TupleShapes[I]))
        return false;
    return true;
  }
  return Dims == Other.Dims;
}

bool Shape::sameDims(const Shape &Other) const {
  return isArray() && Other.isArray() && Dims == Other.Dims;
}

std::string Shape::str(bool WithLayout) const {
  std::string Out;
  if (isTuple()) {
    Out += '(';
    for (size_t I = 0; I < TupleShapes.size(); ++I) {
      if (I)
        Out += ", ";
      Out += TupleShapes[I].str(WithLayout);
    }
    Out += ')';
    return Out;
  }
  Out += primitiveTypeName(Type);
  Out += '[';
  for (size_t I = 0; I < Dims.size(); ++I) {
    if (I)
      Out += ',';
    Out += std::to_string(Dims[I]);
  }
  Out += ']';
  if (WithLayout && (!MinorToMajor.empty() || !LayoutSuffix.empty())) {
    Out += '{';
    for (size_t I = 0; I < MinorToMajor.size(); ++I) {
      if (I)
        Out += ',';
      Out += std::to_string(MinorToMajor[I]);
    }
    if (!LayoutSuffix.empty())
      Out += ':' + LayoutSuffix;
    Out += '}';
  }
  return Out;
}

bool Shape::operator==(const Shape &Other) const {
  return Type == Other.Type && Dims == Other.Dims &&
         MinorToMajor == Other.MinorToMajor && LayoutSuffix == Other.LayoutSuffix &&
         TupleShapes == Other.TupleShapes;
}

//===----------------------------------------------------------------------===//
// Opcodes and attribute enums
//===----------------------------------------------------------------------===//

namespace {
struct OpInfo {
  HloOpcode Op;
  std::string_view Name; // sized: a comparison checks the length first
};
constexpr OpInfo OpTable[] = {
    {HloOpcode::Parameter, "parameter"},
    {HloOpcode::Constant, "constant"},
    {HloOpcode::Iota, "iota"},
    {HloOpcode::Broadcast, "broadcast"},
    {HloOpcode::Reshape, "reshape"},
    {HloOpcode::Bitcast, "bitcast"},
    {HloOpcode::Transpose, "transpose"},
    {HloOpcode::Copy, "copy"},
    {HloOpcode::Slice, "slice"},
    {HloOpcode::DynamicSlice, "dynamic-slice"},
    {HloOpcode::DynamicUpdateSlice, "dynamic-update-slice"},
    {HloOpcode::Pad, "pad"},
    {HloOpcode::Reverse, "reverse"},
    {HloOpcode::Concatenate, "concatenate"},
    {HloOpcode::Reduce, "reduce"},
    {HloOpcode::Convert, "convert"},
    {HloOpcode::Select, "select"},
    {HloOpcode::Clamp, "clamp"},
    {HloOpcode::Compare, "compare"},
    {HloOpcode::Abs, "abs"},
    {HloOpcode::Negate, "negate"},
    {HloOpcode::Exp, "exponential"},
    {HloOpcode::Expm1, "exponential-minus-one"},
    {HloOpcode::Log, "log"},
    {HloOpcode::Log1p, "log-plus-one"},
    {HloOpcode::Tanh, "tanh"},
    {HloOpcode::Logistic, "logistic"},
    {HloOpcode::Sqrt, "sqrt"},
    {HloOpcode::Rsqrt, "rsqrt"},
    {HloOpcode::Cbrt, "cbrt"},
    {HloOpcode::Sin, "sine"},
    {HloOpcode::Cos, "cosine"},
    {HloOpcode::Tan, "tan"},
    {HloOpcode::Floor, "floor"},
    {HloOpcode::Ceil, "ceil"},
    {HloOpcode::RoundNearestEven, "round-nearest-even"},
    {HloOpcode::RoundNearestAfz, "round-nearest-afz"},
    {HloOpcode::Sign, "sign"},
    {HloOpcode::Not, "not"},
    {HloOpcode::IsFinite, "is-finite"},
    {HloOpcode::PopCount, "popcnt"},
    {HloOpcode::Clz, "count-leading-zeros"},
    {HloOpcode::Add, "add"},
    {HloOpcode::Subtract, "subtract"},
    {HloOpcode::Multiply, "multiply"},
    {HloOpcode::Divide, "divide"},
    {HloOpcode::Maximum, "maximum"},
    {HloOpcode::Minimum, "minimum"},
    {HloOpcode::Power, "power"},
    {HloOpcode::Remainder, "remainder"},
    {HloOpcode::Atan2, "atan2"},
    {HloOpcode::And, "and"},
    {HloOpcode::Or, "or"},
    {HloOpcode::Xor, "xor"},
    {HloOpcode::ShiftLeft, "shift-left"},
    {HloOpcode::ShiftRightLogical, "shift-right-logical"},
    {HloOpcode::ShiftRightArithmetic, "shift-right-arithmetic"},
    {HloOpcode::Tuple, "tuple"},
    {HloOpcode::GetTupleElement, "get-tuple-element"},
    {HloOpcode::Fusion, "fusion"},
    {HloOpcode::Call, "call"},
    {HloOpcode::Acos, "acos"},
    {HloOpcode::Acosh, "acosh"},
    {HloOpcode::AddDependency, "add-dependency"},
    {HloOpcode::AfterAll, "after-all"},
    {HloOpcode::AllGather, "all-gather"},
    {HloOpcode::AllGatherDone, "all-gather-done"},
    {HloOpcode::AllGatherStart, "all-gather-start"},
    {HloOpcode::AllReduce, "all-reduce"},
    {HloOpcode::AllReduceDone, "all-reduce-done"},
    {HloOpcode::AllReduceStart, "all-reduce-start"},
    {HloOpcode::AllToAll, "all-to-all"},
    {HloOpcode::Asin, "asin"},
    {HloOpcode::Asinh, "asinh"},
    {HloOpcode::AsyncDone, "async-done"},
    {HloOpcode::AsyncStart, "async-start"},
    {HloOpcode::AsyncUpdate, "async-update"},
    {HloOpcode::Atan, "atan"},
    {HloOpcode::Atanh, "atanh"},
    {HloOpcode::BatchNormGrad, "batch-norm-grad"},
    {HloOpcode::BatchNormInference, "batch-norm-inference"},
    {HloOpcode::BatchNormTraining, "batch-norm-training"},
    {HloOpcode::BitcastConvert, "bitcast-convert"},
    {HloOpcode::Cholesky, "cholesky"},
    {HloOpcode::CollectiveBroadcast, "collective-broadcast"},
    {HloOpcode::CollectivePermute, "collective-permute"},
    {HloOpcode::CollectivePermuteDone, "collective-permute-done"},
    {HloOpcode::CollectivePermuteStart, "collective-permute-start"},
    {HloOpcode::CollectiveReduce, "collective-reduce"},
    {HloOpcode::Complex, "complex"},
    {HloOpcode::Conditional, "conditional"},
    {HloOpcode::Convolution, "convolution"},
    {HloOpcode::CopyDone, "copy-done"},
    {HloOpcode::CopyStart, "copy-start"},
    {HloOpcode::Cosh, "cosh"},
    {HloOpcode::CustomCall, "custom-call"},
    {HloOpcode::Domain, "domain"},
    {HloOpcode::Dot, "dot"},
    {HloOpcode::DynamicReshape, "dynamic-reshape"},
    {HloOpcode::Erf, "erf"},
    {HloOpcode::Fft, "fft"},
    {HloOpcode::Gather, "gather"},
    {HloOpcode::GetDimensionSize, "get-dimension-size"},
    {HloOpcode::Imag, "imag"},
    {HloOpcode::Infeed, "infeed"},
    {HloOpcode::Map, "map"},
    {HloOpcode::Mulhi, "mulhi"},
    {HloOpcode::OptimizationBarrier, "opt-barrier"},
    {HloOpcode::Outfeed, "outfeed"},
    {HloOpcode::PartitionId, "partition-id"},
    {HloOpcode::RaggedAllToAll, "ragged-all-to-all"},
    {HloOpcode::RaggedDot, "ragged-dot"},
    {HloOpcode::Real, "real"},
    {HloOpcode::Recv, "recv"},
    {HloOpcode::RecvDone, "recv-done"},
    {HloOpcode::ReducePrecision, "reduce-precision"},
    {HloOpcode::ReduceScatter, "reduce-scatter"},
    {HloOpcode::ReduceWindow, "reduce-window"},
    {HloOpcode::ReplicaId, "replica-id"},
    {HloOpcode::Rng, "rng"},
    {HloOpcode::RngBitGenerator, "rng-bit-generator"},
    {HloOpcode::RngGetAndUpdateState, "rng-get-and-update-state"},
    {HloOpcode::ScaledDot, "scaled-dot"},
    {HloOpcode::Scan, "scan"},
    {HloOpcode::Scatter, "scatter"},
    {HloOpcode::SelectAndScatter, "select-and-scatter"},
    {HloOpcode::Send, "send"},
    {HloOpcode::SendDone, "send-done"},
    {HloOpcode::SetDimensionSize, "set-dimension-size"},
    {HloOpcode::Shuffle, "shuffle"},
    {HloOpcode::Sinh, "sinh"},
    {HloOpcode::Sort, "sort"},
    {HloOpcode::StochasticConvert, "stochastic-convert"},
    {HloOpcode::TopK, "topk"},
    {HloOpcode::TriangularSolve, "triangular-solve"},
    {HloOpcode::While, "while"},
};
} // namespace

std::string_view opcodeName(HloOpcode Op) {
  for (const OpInfo &I : OpTable)
    if (I.Op == Op)
      return I.Name;
  assert(false && "opcode missing from the name table");
  return "unknown";
}

std::optional<HloOpcode> parseOpcode(std::string_view Name) {
  for (const OpInfo &I : OpTable)
    if (Name == I.Name)
      return I.Op;
  return std::nullopt;
}

bool isUnaryElementwise(HloOpcode Op) {
  return Op >= HloOpcode::Abs && Op <= HloOpcode::Clz;
}
bool isBinaryElementwise(HloOpcode Op) {
  return Op >= HloOpcode::Add && Op <= HloOpcode::ShiftRightArithmetic;
}
bool isOpaqueToEmitters(HloOpcode Op) {
  return Op > HloOpcode::Call && Op != HloOpcode::Gather &&
         Op != HloOpcode::ReducePrecision && !isFloatFunction(Op);
}

bool isFloatFunction(HloOpcode Op) {
  switch (Op) {
  case HloOpcode::Erf:
  case HloOpcode::Acos:
  case HloOpcode::Acosh:
  case HloOpcode::Asin:
  case HloOpcode::Asinh:
  case HloOpcode::Atan:
  case HloOpcode::Atanh:
  case HloOpcode::Cosh:
  case HloOpcode::Sinh:
    return true;
  default:
    return false;
  }
}

bool isElementwise(HloOpcode Op) {
  return isUnaryElementwise(Op) || isBinaryElementwise(Op) ||
         isFloatFunction(Op) || Op == HloOpcode::Convert ||
         Op == HloOpcode::Select || Op == HloOpcode::Clamp ||
         Op == HloOpcode::Compare || Op == HloOpcode::ReducePrecision;
}
bool hasElementwiseIndexing(HloOpcode Op) {
  // isElementwise covers the float functions (erf, acos ... sinh).
  if (isElementwise(Op))
    return true;
  switch (Op) {
  case HloOpcode::Mulhi:
  case HloOpcode::Complex:
  case HloOpcode::Real:
  case HloOpcode::Imag:
  case HloOpcode::StochasticConvert:
  case HloOpcode::BitcastConvert:
    return true;
  default:
    return false;
  }
}

std::string_view comparisonDirectionName(ComparisonDirection D) {
  switch (D) {
  case ComparisonDirection::EQ:
    return "EQ";
  case ComparisonDirection::NE:
    return "NE";
  case ComparisonDirection::LT:
    return "LT";
  case ComparisonDirection::LE:
    return "LE";
  case ComparisonDirection::GT:
    return "GT";
  case ComparisonDirection::GE:
    return "GE";
  }
  return "EQ";
}

std::string_view comparisonTypeName(ComparisonType T) {
  switch (T) {
  case ComparisonType::Default:
    return "";
  case ComparisonType::Float:
    return "FLOAT";
  case ComparisonType::TotalOrder:
    return "TOTALORDER";
  case ComparisonType::Signed:
    return "SIGNED";
  case ComparisonType::Unsigned:
    return "UNSIGNED";
  }
  return "";
}

std::string_view fusionKindName(FusionKind K) {
  switch (K) {
  case FusionKind::Loop:
    return "kLoop";
  case FusionKind::Input:
    return "kInput";
  case FusionKind::Output:
    return "kOutput";
  case FusionKind::Custom:
    return "kCustom";
  }
  return "kLoop";
}

} // namespace idxmap
