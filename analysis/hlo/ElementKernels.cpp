//===- analysis/hlo/ElementKernels.cpp - Elementwise HLO semantics --------===//
//
// Part of idxmap. The per-element semantics of every elementwise HLO op, as
// XLA's HloEvaluator defines them (see idxmap/HloInterpreter.h for the list).
//
//===----------------------------------------------------------------------===//
#include "ElementKernels.h"
#include "idxmap/HloInterpreter.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace idxmap {
namespace hlo {

//===----------------------------------------------------------------------===//
// 16-bit floats
//===----------------------------------------------------------------------===//

uint16_t floatToBf16(float F) {
  uint32_t U = floatBits(F);
  if (std::isnan(F))
    return uint16_t((U >> 16) & 0x8000) | 0x7fc0;
  // Round to nearest even: add 0x7fff plus the lowest kept bit, then drop
  // the 16 low bits. A carry into the exponent is the correct rounding
  // (including overflow to infinity).
  uint32_t Lsb = (U >> 16) & 1;
  return uint16_t((U + 0x7fff + Lsb) >> 16);
}

float halfToFloat(uint16_t H) {
  uint32_t Sign = uint32_t(H & 0x8000) << 16;
  uint32_t Exp = (H >> 10) & 0x1f;
  uint32_t Mant = H & 0x3ff;
  if (Exp == 0) {
    // Zero or subnormal: Mant * 2^-24 is exact in float.
    float V = float(Mant) * (1.0f / 16777216.0f);
    return Sign ? -V : V;
  }
  if (Exp == 31)
    return bitsToFloat(Sign | 0x7f800000 | (Mant << 13));
  return bitsToFloat(Sign | ((Exp + 112) << 23) | (Mant << 13));
}

uint16_t floatToHalf(float F) {
  uint32_t U = floatBits(F);
  uint16_t Sign = uint16_t((U >> 16) & 0x8000);
  uint32_t A = U & 0x7fffffff;
  if (A > 0x7f800000) // NaN
    return Sign | 0x7e00;
  // 65520 = 0x477ff000 is halfway between 65504 (the largest half, odd
  // mantissa) and 65536; ties go to even, i.e. to infinity.
  if (A >= 0x477ff000)
    return Sign | 0x7c00;
  if (A < 0x38800000) {
    // Below 2^-14: a half subnormal (or zero) with unit 2^-24. Scaling by
    // 2^24 is exact; nearbyint rounds to nearest even. A result of 0x400 is
    // the smallest normal half, which is the right encoding too.
    float Scaled = bitsToFloat(A) * 16777216.0f;
    return Sign | uint16_t(std::nearbyint(Scaled));
  }
  // Normal: keep 10 of the 23 mantissa bits, rounding to nearest even, then
  // rebias the exponent from 127 to 15 (a carry into the exponent is right).
  uint32_t Lsb = (A >> 13) & 1;
  uint32_t Rounded = A + 0xfff + Lsb;
  return Sign | uint16_t((Rounded - (112u << 23)) >> 13);
}

//===----------------------------------------------------------------------===//
// Which op/type pairs exist
//===----------------------------------------------------------------------===//

bool unaryOpSupports(HloOpcode Op, PrimitiveType T) {
  if (!isArrayType(T))
    return false;
  bool Float = isFloatType(T), Int = isIntegralType(T);
  switch (Op) {
  case HloOpcode::Abs:
  case HloOpcode::Negate:
  case HloOpcode::Sign:
    return Float || Int;
  case HloOpcode::Not:
    return Int || T == PrimitiveType::Pred;
  case HloOpcode::PopCount:
  case HloOpcode::Clz:
    return Int;
  case HloOpcode::Exp:
  case HloOpcode::Expm1:
  case HloOpcode::Log:
  case HloOpcode::Log1p:
  case HloOpcode::Tanh:
  case HloOpcode::Logistic:
  case HloOpcode::Sqrt:
  case HloOpcode::Rsqrt:
  case HloOpcode::Cbrt:
  case HloOpcode::Sin:
  case HloOpcode::Cos:
  case HloOpcode::Tan:
  case HloOpcode::Floor:
  case HloOpcode::Ceil:
  case HloOpcode::RoundNearestEven:
  case HloOpcode::RoundNearestAfz:
  case HloOpcode::IsFinite:
    return Float;
  default:
    return false;
  }
}

bool binaryOpSupports(HloOpcode Op, PrimitiveType T) {
  if (!isArrayType(T))
    return false;
  bool Float = isFloatType(T), Int = isIntegralType(T);
  switch (Op) {
  case HloOpcode::Add:
  case HloOpcode::Subtract:
  case HloOpcode::Multiply:
  case HloOpcode::Divide:
  case HloOpcode::Maximum:
  case HloOpcode::Minimum:
  case HloOpcode::Power:
  case HloOpcode::Remainder:
    return true;
  case HloOpcode::Atan2:
    return Float;
  case HloOpcode::And:
  case HloOpcode::Or:
  case HloOpcode::Xor:
    return Int || T == PrimitiveType::Pred;
  case HloOpcode::ShiftLeft:
  case HloOpcode::ShiftRightLogical:
  case HloOpcode::ShiftRightArithmetic:
    return Int;
  default:
    return false;
  }
}

//===----------------------------------------------------------------------===//
// Scalar semantics
//===----------------------------------------------------------------------===//

namespace {

template <int Bits> constexpr uint64_t lowMask() {
  return Bits >= 64 ? ~uint64_t(0) : ((uint64_t(1) << Bits) - 1);
}

template <int Bits> int64_t signExtend(uint64_t U) {
  if constexpr (Bits >= 64) {
    return int64_t(U);
  } else {
    uint64_t M = uint64_t(1) << (Bits - 1);
    U &= lowMask<Bits>();
    return int64_t((U ^ M) - M);
  }
}

/// Exponentiation by squaring with wrap-around.
uint64_t ipow(uint64_t Base, uint64_t Exp) {
  uint64_t R = 1;
  while (Exp) {
    if (Exp & 1)
      R *= Base;
    Base *= Base;
    Exp >>= 1;
  }
  return R;
}

template <class TR>
typename TR::Compute applyUnary(HloOpcode Op, typename TR::Compute X) {
  using C = typename TR::Compute;
  constexpr ComputeClass K = TR::Class;
  if constexpr (K == ComputeClass::Bool) {
    return Op == HloOpcode::Not ? !X : X;
  } else if constexpr (K == ComputeClass::Signed ||
                       K == ComputeClass::Unsigned) {
    constexpr int Bits = TR::Bits;
    constexpr bool Signed = K == ComputeClass::Signed;
    switch (Op) {
    case HloOpcode::Abs:
      if constexpr (Signed)
        return X < 0 ? C(uint64_t(0) - uint64_t(X)) : X;
      return X;
    case HloOpcode::Negate:
      return C(uint64_t(0) - uint64_t(X));
    case HloOpcode::Sign:
      if constexpr (Signed)
        return C((X > 0) - (X < 0));
      return C(X != 0);
    case HloOpcode::Not:
      return C(~X);
    case HloOpcode::PopCount:
      return C(__builtin_popcountll(uint64_t(X) & lowMask<Bits>()));
    case HloOpcode::Clz: {
      uint64_t U = uint64_t(X) & lowMask<Bits>();
      return U == 0 ? C(Bits) : C(__builtin_clzll(U) - (64 - Bits));
    }
    default:
      assert(false && "unary op not defined on integers");
      return X;
    }
  } else {
    switch (Op) {
    case HloOpcode::Abs:
      return std::abs(X);
    case HloOpcode::Negate:
      return -X;
    case HloOpcode::Exp:
      return std::exp(X);
    case HloOpcode::Expm1:
      return std::expm1(X);
    case HloOpcode::Log:
      return std::log(X);
    case HloOpcode::Log1p:
      return std::log1p(X);
    case HloOpcode::Tanh:
      return std::tanh(X);
    case HloOpcode::Logistic:
      return C(1) / (C(1) + std::exp(-X));
    case HloOpcode::Sqrt:
      return std::sqrt(X);
    case HloOpcode::Rsqrt:
      return C(1) / std::sqrt(X);
    case HloOpcode::Cbrt:
      return std::cbrt(X);
    case HloOpcode::Sin:
      return std::sin(X);
    case HloOpcode::Cos:
      return std::cos(X);
    case HloOpcode::Tan:
      return std::tan(X);
    case HloOpcode::Floor:
      return std::floor(X);
    case HloOpcode::Ceil:
      return std::ceil(X);
    case HloOpcode::RoundNearestEven:
      // The default floating-point environment rounds to nearest even.
      return std::nearbyint(X);
    case HloOpcode::RoundNearestAfz:
      return std::round(X);
    case HloOpcode::Sign:
      return std::isnan(X) ? X : std::copysign(C(X != C(0)), X);
    default:
      assert(false && "unary op not defined on floats");
      return X;
    }
  }
}

template <class TR>
typename TR::Compute applyBinary(HloOpcode Op, typename TR::Compute A,
                                 typename TR::Compute B) {
  using C = typename TR::Compute;
  constexpr ComputeClass K = TR::Class;
  if constexpr (K == ComputeClass::Bool) {
    switch (Op) {
    case HloOpcode::Add:
    case HloOpcode::Or:
    case HloOpcode::Maximum:
      return A || B;
    case HloOpcode::Multiply:
    case HloOpcode::And:
    case HloOpcode::Minimum:
      return A && B;
    case HloOpcode::Subtract:
    case HloOpcode::Xor:
      return A != B;
    case HloOpcode::Divide:
      return B ? A : true; // x / 0 is all ones
    case HloOpcode::Remainder:
      return B ? false : A; // x % 0 is x
    case HloOpcode::Power:
      return A || !B;
    default:
      assert(false && "binary op not defined on pred");
      return A;
    }
  } else if constexpr (K == ComputeClass::Signed ||
                       K == ComputeClass::Unsigned) {
    constexpr int Bits = TR::Bits;
    constexpr bool Signed = K == ComputeClass::Signed;
    uint64_t UA = uint64_t(A), UB = uint64_t(B);
    switch (Op) {
    case HloOpcode::Add:
      return C(UA + UB);
    case HloOpcode::Subtract:
      return C(UA - UB);
    case HloOpcode::Multiply:
      return C(UA * UB);
    case HloOpcode::Divide:
      if (B == 0)
        return C(~uint64_t(0)); // -1, or all ones for unsigned
      if constexpr (Signed)
        if (A == std::numeric_limits<int64_t>::min() && B == -1)
          return A;
      return A / B;
    case HloOpcode::Remainder:
      if (B == 0)
        return A;
      if constexpr (Signed)
        if (A == std::numeric_limits<int64_t>::min() && B == -1)
          return 0;
      return A % B;
    case HloOpcode::Maximum:
      return std::max(A, B);
    case HloOpcode::Minimum:
      return std::min(A, B);
    case HloOpcode::Power:
      if (A == 1 || B == 0)
        return 1;
      if constexpr (Signed)
        if (B < 0)
          return 0;
      return C(ipow(UA, UB));
    case HloOpcode::And:
      return A & B;
    case HloOpcode::Or:
      return A | B;
    case HloOpcode::Xor:
      return A ^ B;
    case HloOpcode::ShiftLeft: {
      uint64_t Amount = UB & lowMask<Bits>();
      return Amount >= uint64_t(Bits) ? C(0) : C(UA << Amount);
    }
    case HloOpcode::ShiftRightArithmetic: {
      uint64_t Amount = UB & lowMask<Bits>();
      int64_t SA = signExtend<Bits>(UA);
      if (Amount >= uint64_t(Bits))
        return SA < 0 ? C(~uint64_t(0)) : C(0);
      return C(SA >> Amount);
    }
    case HloOpcode::ShiftRightLogical: {
      uint64_t Amount = UB & lowMask<Bits>();
      if (Amount >= uint64_t(Bits))
        return C(0);
      return C((UA & lowMask<Bits>()) >> Amount);
    }
    default:
      assert(false && "binary op not defined on integers");
      return A;
    }
  } else {
    switch (Op) {
    case HloOpcode::Add:
      return A + B;
    case HloOpcode::Subtract:
      return A - B;
    case HloOpcode::Multiply:
      return A * B;
    case HloOpcode::Divide:
      return A / B;
    // IEEE 754-2019 maximum and minimum, as XLA's GPU emitters lower them
    // (arith.maximumf and minimumf: llvm.maximum, one max.NaN from sm_80):
    // NaN when either is NaN, and -0 below +0.
    case HloOpcode::Maximum:
      if (std::isnan(A))
        return A;
      if (std::isnan(B))
        return B;
      if (A == B)
        return std::signbit(A) ? B : A;
      return std::max(A, B);
    case HloOpcode::Minimum:
      if (std::isnan(A))
        return A;
      if (std::isnan(B))
        return B;
      if (A == B)
        return std::signbit(A) ? A : B;
      return std::min(A, B);
    case HloOpcode::Power:
      if (A == C(1) || B == C(0))
        return C(1);
      return std::pow(A, B);
    case HloOpcode::Remainder:
      return std::fmod(A, B);
    case HloOpcode::Atan2:
      return std::atan2(A, B);
    default:
      assert(false && "binary op not defined on floats");
      return A;
    }
  }
}

template <class C> bool applyCompare(ComparisonDirection Dir, C A, C B) {
  switch (Dir) {
  case ComparisonDirection::EQ:
    return A == B;
  case ComparisonDirection::NE:
    return A != B;
  case ComparisonDirection::LT:
    return A < B;
  case ComparisonDirection::LE:
    return A <= B;
  case ComparisonDirection::GT:
    return A > B;
  case ComparisonDirection::GE:
    return A >= B;
  }
  return false;
}

/// A key whose signed order is the IEEE total order of the float with
/// storage bits \p U of width \p Bits: negative values get their magnitude
/// bits flipped so that larger magnitudes sort lower.
int64_t totalOrderKey(uint64_t U, int Bits) {
  int64_t S;
  if (Bits == 64) {
    S = int64_t(U);
  } else {
    uint64_t M = uint64_t(1) << (Bits - 1);
    U &= (uint64_t(1) << Bits) - 1;
    S = int64_t((U ^ M) - M);
  }
  if (S < 0)
    S ^= std::numeric_limits<int64_t>::max() >> (64 - Bits);
  return S;
}

/// XLA's convert of one value from compute type of \p FromTR to that of
/// \p ToTR (see idxmap/HloInterpreter.h).
template <class FromTR, class ToTR>
typename ToTR::Compute convertValue(typename FromTR::Compute X) {
  using To = typename ToTR::Compute;
  using From = typename FromTR::Compute;
  constexpr ComputeClass FK = FromTR::Class, TK = ToTR::Class;
  if constexpr (TK == ComputeClass::Bool) {
    return X != From(0);
  } else if constexpr (FK == ComputeClass::Bool) {
    return To(X ? 1 : 0);
  } else if constexpr (TK == ComputeClass::Signed ||
                       TK == ComputeClass::Unsigned) {
    if constexpr (FK == ComputeClass::Float || FK == ComputeClass::Double) {
      using S = typename ToTR::Storage;
      if (X != X)
        return To(0);
      if (X >= static_cast<From>(std::numeric_limits<S>::max()))
        return To(std::numeric_limits<S>::max());
      if (X <= static_cast<From>(std::numeric_limits<S>::lowest()))
        return To(std::numeric_limits<S>::lowest());
      return static_cast<To>(static_cast<S>(X));
    } else {
      return static_cast<To>(X); // integer to integer: wraps when stored
    }
  } else {
    // To a float type: f64 directly, everything else through float (the
    // store rounds float to f16/bf16), as Eigen's conversions do.
    return static_cast<To>(X);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

void unaryLoop(HloOpcode Op, PrimitiveType T, const uint8_t *In,
               uint8_t *Out, int64_t N) {
  dispatchType(T, [&](auto Tr) {
    using TR = decltype(Tr);
    constexpr int64_t W = int64_t(sizeof(typename TR::Storage));
    if (Op == HloOpcode::IsFinite) {
      if constexpr (TR::Class == ComputeClass::Float ||
                    TR::Class == ComputeClass::Double) {
        for (int64_t I = 0; I < N; ++I)
          Out[I] = std::isfinite(TR::load(In + I * W)) ? 1 : 0;
      }
      return;
    }
    for (int64_t I = 0; I < N; ++I)
      TR::store(Out + I * W, applyUnary<TR>(Op, TR::load(In + I * W)));
  });
}

void binaryLoop(HloOpcode Op, PrimitiveType T, const uint8_t *A, int64_t SA,
                const uint8_t *B, int64_t SB, uint8_t *Out, int64_t N) {
  dispatchType(T, [&](auto Tr) {
    using TR = decltype(Tr);
    constexpr int64_t W = int64_t(sizeof(typename TR::Storage));
    for (int64_t I = 0; I < N; ++I)
      TR::store(Out + I * W,
                applyBinary<TR>(Op, TR::load(A + I * SA * W),
                                TR::load(B + I * SB * W)));
  });
}

void compareLoop(ComparisonDirection Dir, ComparisonType CT, PrimitiveType T,
                 const uint8_t *A, int64_t SA, const uint8_t *B, int64_t SB,
                 uint8_t *Out, int64_t N) {
  dispatchType(T, [&](auto Tr) {
    using TR = decltype(Tr);
    constexpr int64_t W = int64_t(sizeof(typename TR::Storage));
    if constexpr (TR::Class == ComputeClass::Float ||
                  TR::Class == ComputeClass::Double) {
      if (CT == ComparisonType::TotalOrder) {
        for (int64_t I = 0; I < N; ++I) {
          uint64_t UA = 0, UB = 0;
          std::memcpy(&UA, A + I * SA * W, W);
          std::memcpy(&UB, B + I * SB * W, W);
          Out[I] = applyCompare(Dir, totalOrderKey(UA, int(8 * W)),
                                totalOrderKey(UB, int(8 * W)));
        }
        return;
      }
    }
    for (int64_t I = 0; I < N; ++I)
      Out[I] = applyCompare(Dir, TR::load(A + I * SA * W),
                            TR::load(B + I * SB * W));
  });
}

void convertLoop(PrimitiveType From, PrimitiveType To, const uint8_t *In,
                 uint8_t *Out, int64_t N) {
  if (From == To) {
    std::memmove(Out, In, size_t(N * byteWidth(From)));
    return;
  }
  dispatchType(From, [&](auto FromTr) {
    using FTR = decltype(FromTr);
    constexpr int64_t FW = int64_t(sizeof(typename FTR::Storage));
    dispatchType(To, [&](auto ToTr) {
      using TTR = decltype(ToTr);
      constexpr int64_t TW = int64_t(sizeof(typename TTR::Storage));
      for (int64_t I = 0; I < N; ++I)
        TTR::store(Out + I * TW,
                   convertValue<FTR, TTR>(FTR::load(In + I * FW)));
    });
  });
}

void clampLoop(PrimitiveType T, const uint8_t *Lo, int64_t SLo,
               const uint8_t *X, const uint8_t *Hi, int64_t SHi, uint8_t *Out,
               int64_t N) {
  dispatchType(T, [&](auto Tr) {
    using TR = decltype(Tr);
    using C = typename TR::Compute;
    constexpr int64_t W = int64_t(sizeof(typename TR::Storage));
    for (int64_t I = 0; I < N; ++I) {
      C L = TR::load(Lo + I * SLo * W), V = TR::load(X + I * W),
        H = TR::load(Hi + I * SHi * W);
      C R;
      if constexpr (TR::Class == ComputeClass::Float ||
                    TR::Class == ComputeClass::Double) {
        if (std::isnan(L))
          R = L;
        else if (std::isnan(V))
          R = V;
        else if (std::isnan(H))
          R = H;
        else
          R = std::min(H, std::max(V, L));
      } else {
        R = std::min(H, std::max(V, L));
      }
      TR::store(Out + I * W, R);
    }
  });
}

void selectLoop(int64_t Width, const uint8_t *P, int64_t SP, const uint8_t *A,
                const uint8_t *B, uint8_t *Out, int64_t N) {
  for (int64_t I = 0; I < N; ++I)
    std::memcpy(Out + I * Width, (P[I * SP] ? A : B) + I * Width,
                size_t(Width));
}

} // namespace hlo
} // namespace idxmap

bool idxmap::interpreterSupportsUnary(HloOpcode Op, PrimitiveType T) {
  return hlo::unaryOpSupports(Op, T);
}
bool idxmap::interpreterSupportsBinary(HloOpcode Op, PrimitiveType T) {
  return hlo::binaryOpSupports(Op, T);
}
