//===- idxmap/Interval.h - Closed int64 intervals ---------------*- C++ -*-===//
//
// Part of idxmap. Closed intervals [Lo, Hi] over int64 with checked
// arithmetic: an overflowing operation yields the full range ("unknown"),
// never a wrapped value.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_INTERVAL_H
#define IDXMAP_INTERVAL_H

#include <cstdint>
#include <limits>
#include <string>

namespace idxmap {

/// A closed interval of int64 values; empty when Lo > Hi.
///
/// Example:
/// \code
///   Interval A{0, 7}, B{-2, 3};
///   A + B          // [-2, 10]
///   A * B          // [-14, 21]
///   A.floorDiv(4)  // [0, 1]
///   A.mod(4)       // [0, 3]
///   Interval{INT64_MAX - 1, INT64_MAX} + Interval{2, 2}  // full(): overflow
/// \endcode
struct Interval {
  int64_t Lo = 0;
  int64_t Hi = -1;

  static constexpr int64_t Min = std::numeric_limits<int64_t>::min();
  static constexpr int64_t Max = std::numeric_limits<int64_t>::max();

  constexpr Interval() = default;
  constexpr Interval(int64_t Lo, int64_t Hi) : Lo(Lo), Hi(Hi) {}

  static constexpr Interval point(int64_t V) { return {V, V}; }
  static constexpr Interval full() { return {Min, Max}; }
  static constexpr Interval empty() { return {0, -1}; }

  bool isEmpty() const { return Lo > Hi; }
  bool isPoint() const { return Lo == Hi; }
  bool isFull() const { return Lo == Min && Hi == Max; }
  bool isNonNegative() const { return Lo >= 0; }
  bool contains(int64_t V) const { return Lo <= V && V <= Hi; }
  bool contains(const Interval &O) const {
    return O.isEmpty() || (Lo <= O.Lo && O.Hi <= Hi);
  }
  /// Number of values, or nullopt-like 0 for empty; saturates at UINT64_MAX.
  uint64_t size() const;

  bool operator==(const Interval &O) const {
    return (isEmpty() && O.isEmpty()) || (Lo == O.Lo && Hi == O.Hi);
  }
  bool operator!=(const Interval &O) const { return !(*this == O); }

  Interval intersect(const Interval &O) const;
  /// The smallest interval containing both.
  Interval hull(const Interval &O) const;

  // Checked arithmetic. Any overflow gives full(). Empty operands give empty.
  Interval operator+(const Interval &O) const;
  Interval operator-() const;
  Interval operator-(const Interval &O) const;
  Interval operator*(const Interval &O) const;
  Interval operator*(int64_t K) const { return *this * point(K); }
  Interval operator+(int64_t K) const { return *this + point(K); }
  /// floordiv by a non-zero constant (either sign).
  Interval floorDiv(int64_t K) const;
  /// ceildiv by a non-zero constant (either sign).
  Interval ceilDiv(int64_t K) const;
  /// mod by a non-zero constant. For K > 0 the result is within [0, K-1];
  /// if the whole interval lies within one period the exact image is kept.
  Interval mod(int64_t K) const;

  /// "[lo, hi]".
  std::string str() const;
};

} // namespace idxmap

#endif // IDXMAP_INTERVAL_H
