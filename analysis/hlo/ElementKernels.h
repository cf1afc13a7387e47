//===- analysis/hlo/ElementKernels.h - Elementwise HLO semantics -*- C++ -*-===//
//
// Part of idxmap. Private to analysis/hlo: storage/compute type traits for
// every element type, f16/bf16 rounding, and the loops that apply one
// elementwise op to raw buffers. The loops take element strides of 0 or 1 per
// input so that a scalar operand can be broadcast (clamp, select) and so that
// a scalar program can run them with N == 1.
//
// Compute types mirror XLA's HloEvaluator: pred computes in bool, signed
// integers in int64_t and unsigned ones in uint64_t (results are truncated to
// the element width when stored, which gives two's-complement wrap-around),
// f16/bf16/f32 in float, f64 in double.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_HLO_ELEMENTKERNELS_H
#define IDXMAP_ANALYSIS_HLO_ELEMENTKERNELS_H

#include "idxmap/Hlo.h"

#include <cassert>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace idxmap {
namespace hlo {

//===----------------------------------------------------------------------===//
// 16-bit floats
//===----------------------------------------------------------------------===//

inline uint32_t floatBits(float F) {
  uint32_t U;
  std::memcpy(&U, &F, 4);
  return U;
}
inline float bitsToFloat(uint32_t U) {
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}
inline uint64_t doubleBits(double D) {
  uint64_t U;
  std::memcpy(&U, &D, 8);
  return U;
}
inline double bitsToDouble(uint64_t U) {
  double D;
  std::memcpy(&D, &U, 8);
  return D;
}

/// bf16 -> f32 (exact).
inline float bf16ToFloat(uint16_t B) { return bitsToFloat(uint32_t(B) << 16); }
/// f32 -> bf16, round to nearest even; NaN becomes the quiet NaN 0x7fc0 with
/// the sign kept (as Eigen does).
uint16_t floatToBf16(float F);
/// f16 -> f32 (exact).
float halfToFloat(uint16_t H);
/// f32 -> f16, round to nearest even, overflow to infinity, subnormals kept;
/// NaN becomes 0x7e00 with the sign kept.
uint16_t floatToHalf(float F);

//===----------------------------------------------------------------------===//
// Type traits
//===----------------------------------------------------------------------===//

enum class ComputeClass { Bool, Signed, Unsigned, Float, Double };

template <PrimitiveType T> struct Traits;

template <> struct Traits<PrimitiveType::Pred> {
  using Storage = uint8_t;
  using Compute = bool;
  static constexpr ComputeClass Class = ComputeClass::Bool;
  static constexpr int Bits = 1;
  static Compute load(const uint8_t *P) { return *P != 0; }
  static void store(uint8_t *P, Compute V) { *P = V ? 1 : 0; }
};

template <class S, PrimitiveType PT> struct IntTraits {
  using Storage = S;
  static constexpr bool IsSigned = std::is_signed<S>::value;
  using Compute = std::conditional_t<IsSigned, int64_t, uint64_t>;
  static constexpr ComputeClass Class =
      IsSigned ? ComputeClass::Signed : ComputeClass::Unsigned;
  static constexpr int Bits = int(8 * sizeof(S));
  static Compute load(const uint8_t *P) {
    S V;
    std::memcpy(&V, P, sizeof(S));
    return Compute(V);
  }
  static void store(uint8_t *P, Compute V) {
    // Truncate to the element width (two's complement wrap-around).
    auto U = static_cast<std::make_unsigned_t<S>>(static_cast<uint64_t>(V));
    std::memcpy(P, &U, sizeof(S));
  }
};
template <>
struct Traits<PrimitiveType::S8> : IntTraits<int8_t, PrimitiveType::S8> {};
template <>
struct Traits<PrimitiveType::S16> : IntTraits<int16_t, PrimitiveType::S16> {};
template <>
struct Traits<PrimitiveType::S32> : IntTraits<int32_t, PrimitiveType::S32> {};
template <>
struct Traits<PrimitiveType::S64> : IntTraits<int64_t, PrimitiveType::S64> {};
template <>
struct Traits<PrimitiveType::U8> : IntTraits<uint8_t, PrimitiveType::U8> {};
template <>
struct Traits<PrimitiveType::U16> : IntTraits<uint16_t, PrimitiveType::U16> {};
template <>
struct Traits<PrimitiveType::U32> : IntTraits<uint32_t, PrimitiveType::U32> {};
template <>
struct Traits<PrimitiveType::U64> : IntTraits<uint64_t, PrimitiveType::U64> {};

template <> struct Traits<PrimitiveType::F16> {
  using Storage = uint16_t;
  using Compute = float;
  static constexpr ComputeClass Class = ComputeClass::Float;
  static constexpr int Bits = 16;
  static Compute load(const uint8_t *P) {
    uint16_t H;
    std::memcpy(&H, P, 2);
    return halfToFloat(H);
  }
  static void store(uint8_t *P, Compute V) {
    uint16_t H = floatToHalf(V);
    std::memcpy(P, &H, 2);
  }
};
template <> struct Traits<PrimitiveType::BF16> {
  using Storage = uint16_t;
  using Compute = float;
  static constexpr ComputeClass Class = ComputeClass::Float;
  static constexpr int Bits = 16;
  static Compute load(const uint8_t *P) {
    uint16_t H;
    std::memcpy(&H, P, 2);
    return bf16ToFloat(H);
  }
  static void store(uint8_t *P, Compute V) {
    uint16_t H = floatToBf16(V);
    std::memcpy(P, &H, 2);
  }
};
template <> struct Traits<PrimitiveType::F32> {
  using Storage = float;
  using Compute = float;
  static constexpr ComputeClass Class = ComputeClass::Float;
  static constexpr int Bits = 32;
  static Compute load(const uint8_t *P) {
    float V;
    std::memcpy(&V, P, 4);
    return V;
  }
  static void store(uint8_t *P, Compute V) { std::memcpy(P, &V, 4); }
};
template <> struct Traits<PrimitiveType::F64> {
  using Storage = double;
  using Compute = double;
  static constexpr ComputeClass Class = ComputeClass::Double;
  static constexpr int Bits = 64;
  static Compute load(const uint8_t *P) {
    double V;
    std::memcpy(&V, P, 8);
    return V;
  }
  static void store(uint8_t *P, Compute V) { std::memcpy(P, &V, 8); }
};

/// Calls `Fn(Traits<T>{})` for the array type \p T (asserts on others).
template <class F> decltype(auto) dispatchType(PrimitiveType T, F &&Fn) {
  switch (T) {
  case PrimitiveType::Pred:
    return Fn(Traits<PrimitiveType::Pred>{});
  case PrimitiveType::S8:
    return Fn(Traits<PrimitiveType::S8>{});
  case PrimitiveType::S16:
    return Fn(Traits<PrimitiveType::S16>{});
  case PrimitiveType::S32:
    return Fn(Traits<PrimitiveType::S32>{});
  case PrimitiveType::S64:
    return Fn(Traits<PrimitiveType::S64>{});
  case PrimitiveType::U8:
    return Fn(Traits<PrimitiveType::U8>{});
  case PrimitiveType::U16:
    return Fn(Traits<PrimitiveType::U16>{});
  case PrimitiveType::U32:
    return Fn(Traits<PrimitiveType::U32>{});
  case PrimitiveType::U64:
    return Fn(Traits<PrimitiveType::U64>{});
  case PrimitiveType::F16:
    return Fn(Traits<PrimitiveType::F16>{});
  case PrimitiveType::BF16:
    return Fn(Traits<PrimitiveType::BF16>{});
  case PrimitiveType::F32:
    return Fn(Traits<PrimitiveType::F32>{});
  case PrimitiveType::F64:
  default:
    assert(T == PrimitiveType::F64 && "not an array type");
    return Fn(Traits<PrimitiveType::F64>{});
  }
}

//===----------------------------------------------------------------------===//
// Which op/type pairs exist
//===----------------------------------------------------------------------===//

/// True if the unary op \p Op is defined on element type \p T (the result
/// type is \p T, except is-finite which gives pred).
bool unaryOpSupports(HloOpcode Op, PrimitiveType T);
/// True if the binary op \p Op is defined on element type \p T.
bool binaryOpSupports(HloOpcode Op, PrimitiveType T);

//===----------------------------------------------------------------------===//
// Loops over raw buffers
//===----------------------------------------------------------------------===//

/// Out[i] = Op(In[i]) for i < N; element type \p T (is-finite: Out is pred).
void unaryLoop(HloOpcode Op, PrimitiveType T, const uint8_t *In,
               uint8_t *Out, int64_t N);
/// Out[i] = Op(A[i * SA], B[i * SB]) for i < N (SA, SB are 0 or 1).
void binaryLoop(HloOpcode Op, PrimitiveType T, const uint8_t *A, int64_t SA,
                const uint8_t *B, int64_t SB, uint8_t *Out, int64_t N);
/// Out[i] (pred) = A[i * SA] Dir B[i * SB] with operands of type \p T.
void compareLoop(ComparisonDirection Dir, ComparisonType CT, PrimitiveType T,
                 const uint8_t *A, int64_t SA, const uint8_t *B, int64_t SB,
                 uint8_t *Out, int64_t N);
/// Out[i] = convert<To>(In[i]).
void convertLoop(PrimitiveType From, PrimitiveType To, const uint8_t *In,
                 uint8_t *Out, int64_t N);
/// Out[i] = clamp(Lo[i * SLo], X[i], Hi[i * SHi]).
void clampLoop(PrimitiveType T, const uint8_t *Lo, int64_t SLo,
               const uint8_t *X, const uint8_t *Hi, int64_t SHi, uint8_t *Out,
               int64_t N);
/// Out[i] = P[i * SP] ? A[i] : B[i] (bytes of width \p Width).
void selectLoop(int64_t Width, const uint8_t *P, int64_t SP, const uint8_t *A,
                const uint8_t *B, uint8_t *Out, int64_t N);

/// Converts one element of type \p From at \p In to \p To at \p Out.
inline void convertOne(PrimitiveType From, PrimitiveType To, const uint8_t *In,
                       uint8_t *Out) {
  convertLoop(From, To, In, Out, 1);
}

} // namespace hlo
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_HLO_ELEMENTKERNELS_H
