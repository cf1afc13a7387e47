//===- Interval.cpp - Closed int64 intervals with checked arithmetic ------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Interval.h"
#include "idxmap/Expr.h"

#include <algorithm>

namespace idxmap {

uint64_t Interval::size() const {
  if (isEmpty())
    return 0;
  uint64_t D = static_cast<uint64_t>(Hi) - static_cast<uint64_t>(Lo);
  return D == UINT64_MAX ? UINT64_MAX : D + 1;
}

Interval Interval::intersect(const Interval &O) const {
  return {std::max(Lo, O.Lo), std::min(Hi, O.Hi)};
}

Interval Interval::hull(const Interval &O) const {
  if (isEmpty())
    return O;
  if (O.isEmpty())
    return *this;
  return {std::min(Lo, O.Lo), std::max(Hi, O.Hi)};
}

Interval Interval::operator+(const Interval &O) const {
  if (isEmpty() || O.isEmpty())
    return empty();
  auto L = checkedAdd(Lo, O.Lo), H = checkedAdd(Hi, O.Hi);
  if (!L || !H)
    return full();
  return {*L, *H};
}

Interval Interval::operator-() const {
  if (isEmpty())
    return empty();
  if (Lo == Min)
    return full();
  return {-Hi, -Lo};
}

Interval Interval::operator-(const Interval &O) const { return *this + (-O); }

Interval Interval::operator*(const Interval &O) const {
  if (isEmpty() || O.isEmpty())
    return empty();
  int64_t C[4];
  const int64_t A[2] = {Lo, Hi}, B[2] = {O.Lo, O.Hi};
  for (int I = 0; I < 2; ++I)
    for (int J = 0; J < 2; ++J) {
      auto P = checkedMul(A[I], B[J]);
      if (!P)
        return full();
      C[I * 2 + J] = *P;
    }
  return {*std::min_element(C, C + 4), *std::max_element(C, C + 4)};
}

Interval Interval::floorDiv(int64_t K) const {
  if (isEmpty())
    return empty();
  auto A = checkedFloorDiv(Lo, K), B = checkedFloorDiv(Hi, K);
  if (!A || !B)
    return full();
  return K > 0 ? Interval{*A, *B} : Interval{*B, *A};
}

Interval Interval::ceilDiv(int64_t K) const {
  if (isEmpty())
    return empty();
  auto A = checkedCeilDiv(Lo, K), B = checkedCeilDiv(Hi, K);
  if (!A || !B)
    return full();
  return K > 0 ? Interval{*A, *B} : Interval{*B, *A};
}

Interval Interval::mod(int64_t K) const {
  if (isEmpty())
    return empty();
  if (K == 0)
    return full();
  if (K == 1 || K == -1)
    return point(0);
  // Within one period `a mod K = a - q*K` with q fixed: monotone, exact.
  auto QL = checkedFloorDiv(Lo, K), QH = checkedFloorDiv(Hi, K);
  if (QL && QH && *QL == *QH)
    return {*checkedMod(Lo, K), *checkedMod(Hi, K)};
  return K > 0 ? Interval{0, K - 1} : Interval{K + 1, 0};
}

std::string Interval::str() const {
  return "[" + std::to_string(Lo) + ", " + std::to_string(Hi) + "]";
}

} // namespace idxmap
