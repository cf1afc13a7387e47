//===- analysis/hlo/InterpretElementwise.cpp - erf, acos, ... -----------===//
//
// Part of idxmap. Elementwise ops after Call in HloOpcode that the reference
// interpreter evaluates, with XLA's HloEvaluator semantics:
// - erf, acos, acosh, asin, asinh, atan, atanh, cosh, sinh: the C library
//   function in the op's compute type (float for f16/bf16/f32, rounded to
//   the element type; double for f64).
// - reduce-precision: rounds the mantissa to `mantissa_bits` (to nearest
//   even) and clamps the exponent to the range of `exponent_bits` (overflow
//   to a signed infinity, values at or below the smallest normal exponent to
//   a signed zero); NaN stays NaN unless mantissa_bits is 0 (then +inf), as
//   XLA's bit-level implementation gives.
// - bitcast-convert: the element bytes reinterpreted (host little-endian
//   order, as XLA's evaluator does); between widths the narrower side has an
//   extra minor dimension of size (wide width / narrow width).
//
//===----------------------------------------------------------------------===//
#include "InterpretOps.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

namespace idxmap {
namespace hlo {
namespace {

/// Mantissa bits (without the implicit one) of a float type.
int mantissaBits(PrimitiveType T) {
  switch (T) {
  case PrimitiveType::F16:
    return 10;
  case PrimitiveType::BF16:
    return 7;
  case PrimitiveType::F32:
    return 23;
  default:
    return 52;
  }
}

int exponentBits(PrimitiveType T) {
  return bitWidth(T) - 1 - mantissaBits(T);
}

/// The float-type check and same-shape result check of erf and
/// reduce-precision.
std::optional<Diagnostic> checkFloatUnary(const HloInstruction &I) {
  if (I.operandCount() != 1)
    return cannotEvaluate(I, std::string(opcodeName(I.opcode())) +
                                 " takes 1 operand, not " +
                                 std::to_string(I.operandCount()));
  const Shape &In = I.operand(0)->shape();
  if (!isFloatType(In.Type))
    return cannotEvaluate(I, std::string(opcodeName(I.opcode())) +
                                 " is defined on f16, bf16, f32 and f64, not " +
                                 std::string(primitiveTypeName(In.Type)));
  if (!I.shape().compatible(In))
    return cannotEvaluate(I, "the result is " + I.shape().str() +
                                 ", expected the operand's shape " + In.str());
  return std::nullopt;
}

/// The libm functions of the float unary ops after Call, in double and in
/// float (f16/bf16/f32 compute in float, as XLA's elemental IR does).
struct FloatUnaryFn {
  double (*D)(double);
  float (*F)(float);
};

std::optional<FloatUnaryFn> floatUnaryFn(HloOpcode Op) {
#define IDXMAP_LIBM(Fn)                                                        \
  FloatUnaryFn{[](double X) { return std::Fn(X); },                           \
               [](float X) { return std::Fn(X); }}
  switch (Op) {
  case HloOpcode::Erf:
    return IDXMAP_LIBM(erf);
  case HloOpcode::Acos:
    return IDXMAP_LIBM(acos);
  case HloOpcode::Acosh:
    return IDXMAP_LIBM(acosh);
  case HloOpcode::Asin:
    return IDXMAP_LIBM(asin);
  case HloOpcode::Asinh:
    return IDXMAP_LIBM(asinh);
  case HloOpcode::Atan:
    return IDXMAP_LIBM(atan);
  case HloOpcode::Atanh:
    return IDXMAP_LIBM(atanh);
  case HloOpcode::Cosh:
    return IDXMAP_LIBM(cosh);
  case HloOpcode::Sinh:
    return IDXMAP_LIBM(sinh);
  default:
    return std::nullopt;
  }
#undef IDXMAP_LIBM
}

Expected<Literal> evalFloatUnary(const HloInstruction &I, const Literal &In,
                                 const EvaluateOptions &Opts) {
  if (std::optional<Diagnostic> D = checkFloatUnary(I))
    return *D;
  FloatUnaryFn Fn = *floatUnaryFn(I.opcode());
  PrimitiveType T = I.shape().Type;
  // EvaluateOptions::PerturbUlps when widened, as the core ops.
  double Scale = 1;
  if (Opts.Widen)
    Scale += Opts.PerturbUlps * unitRoundoff(T);
  Literal Out(Shape(In.elementType(), In.shape().Dims));
  bool InDouble = In.elementType() == PrimitiveType::F64;
  for (int64_t K = 0, N = In.elementCount(); K < N; ++K) {
    double X = In.getDouble(K);
    double Y = InDouble ? Fn.D(X) : double(Fn.F(float(X)));
    Out.setDouble(K, Y * Scale);
  }
  return Out;
}

/// XLA's reduce-precision on the bits \p X of a float of \p Bits bits with
/// \p SrcMant mantissa bits. \p RoundMant / \p ClampExp say whether the
/// target mantissa / exponent is narrower than the op's element type's (a
/// widened value keeps the element type's verdicts).
uint64_t reducePrecision(uint64_t X, int Bits, int SrcMant, int ExpBits,
                         int MantBits, bool RoundMant, bool ClampExp) {
  const int SrcExp = Bits - 1 - SrcMant;
  const uint64_t All = Bits == 64 ? ~uint64_t(0) : (uint64_t(1) << Bits) - 1;
  if (RoundMant) {
    int Drop = SrcMant - MantBits;
    uint64_t LastBit = uint64_t(1) << Drop;
    uint64_t Bias = (LastBit >> 1) - 1 + ((X & LastBit) >> Drop);
    X = ((X + Bias) & All) & ~(LastBit - 1);
  }
  if (ClampExp) {
    uint64_t Sign = uint64_t(1) << (Bits - 1);
    uint64_t ExpMask = ((uint64_t(1) << SrcExp) - 1) << SrcMant;
    uint64_t SrcBias = (uint64_t(1) << (SrcExp - 1)) - 1;
    uint64_t NewBias = (uint64_t(1) << (ExpBits - 1)) - 1;
    uint64_t Exp = X & ExpMask;
    if (Exp > (SrcBias + NewBias) << SrcMant)
      X = (X & Sign) | ExpMask;
    else if (Exp <= (SrcBias - NewBias) << SrcMant)
      X &= Sign;
  }
  return X;
}

Expected<Literal> evalReducePrecision(const HloInstruction &I,
                                      const Literal &In) {
  if (std::optional<Diagnostic> D = checkFloatUnary(I))
    return *D;
  std::optional<int64_t> E = I.intAttribute("exponent_bits");
  std::optional<int64_t> M = I.intAttribute("mantissa_bits");
  if (!E || !M || *E < 1 || *M < 0)
    return cannotEvaluate(I, "reduce-precision needs exponent_bits >= 1 and "
                             "mantissa_bits >= 0");
  PrimitiveType T = I.shape().Type;
  PrimitiveType Stored = In.elementType();
  bool RoundMant = *M < mantissaBits(T);
  bool ClampExp = *E < exponentBits(T);
  Literal Out(Shape(Stored, In.shape().Dims));
  for (int64_t K = 0, N = In.elementCount(); K < N; ++K) {
    uint64_t X = In.getBits(K);
    if (std::isnan(In.getDouble(K))) {
      if (*M == 0)
        Out.setDouble(K, HUGE_VAL);
      else
        Out.setBits(K, X);
      continue;
    }
    Out.setBits(K, reducePrecision(X, bitWidth(Stored), mantissaBits(Stored),
                                   int(*E), int(*M), RoundMant, ClampExp));
  }
  return Out;
}

/// The result shape bitcast-convert gives \p In as type \p To.
std::optional<Shape> bitcastConvertShape(const Shape &In, PrimitiveType To) {
  int64_t From = byteWidth(In.Type), ToW = byteWidth(To);
  std::vector<int64_t> Dims = In.Dims;
  if (From > ToW) {
    Dims.push_back(From / ToW);
  } else if (From < ToW) {
    if (Dims.empty() || Dims.back() != ToW / From)
      return std::nullopt;
    Dims.pop_back();
  }
  return Shape(To, Dims);
}

Expected<Literal> evalBitcastConvert(const HloInstruction &I, const Literal &In,
                                     const EvaluateOptions &Opts) {
  if (I.operandCount() != 1)
    return cannotEvaluate(I, "bitcast-convert takes 1 operand, not " +
                                 std::to_string(I.operandCount()));
  const Shape &From = I.operand(0)->shape();
  PrimitiveType To = I.shape().Type;
  if (From.Type == PrimitiveType::Pred || To == PrimitiveType::Pred)
    return cannotEvaluate(I, "bitcast-convert to or from pred has no "
                             "defined bits");
  // Widened values are f64 where the HLO says f16, bf16 or f32: their bits
  // are not the element type's.
  bool WidenedTo = isFloatType(To) && To != PrimitiveType::F64;
  if (Opts.Widen && From.Type != To &&
      (In.elementType() != From.Type || WidenedTo))
    return cannotEvaluate(I, "a bitcast-convert between element types is not "
                             "evaluated in f64 (EvaluateOptions::Widen)");
  std::optional<Shape> Want = bitcastConvertShape(From, To);
  if (!Want)
    return cannotEvaluate(I, "bitcast-convert of " + From.str() + " to " +
                                 std::string(primitiveTypeName(To)) +
                                 " needs a last dimension of " +
                                 std::to_string(byteWidth(To) /
                                                byteWidth(From.Type)));
  if (!I.shape().compatible(*Want))
    return cannotEvaluate(I, "the result is " + I.shape().str() +
                                 ", expected " + Want->str());
  if (From.Type == To)
    return In;
  Literal Out(*Want);
  Out.data() = In.data();
  return Out;
}

} // namespace

bool isMoreElementwiseOp(HloOpcode Op) {
  return floatUnaryFn(Op) || Op == HloOpcode::ReducePrecision ||
         Op == HloOpcode::BitcastConvert;
}

Expected<Literal> evalMoreElementwise(const HloInstruction &I,
                                      const std::vector<const Literal *> &In,
                                      const EvaluateOptions &Opts) {
  if (In.size() != 1)
    return cannotEvaluate(I, std::string(opcodeName(I.opcode())) +
                                 " takes 1 operand, not " +
                                 std::to_string(In.size()));
  if (floatUnaryFn(I.opcode()))
    return evalFloatUnary(I, *In[0], Opts);
  switch (I.opcode()) {
  case HloOpcode::ReducePrecision:
    return evalReducePrecision(I, *In[0]);
  case HloOpcode::BitcastConvert:
    return evalBitcastConvert(I, *In[0], Opts);
  default:
    return cannotEvaluate(I, "not an elementwise op");
  }
}

} // namespace hlo
} // namespace idxmap
