//===- SimplifyDomain.cpp - checkEmptyFast and boundsOf -------------------===//
//
// Part of idxmap. Interval-tier questions about a domain (idxmap/Domain.h).
//
//===----------------------------------------------------------------------===//
#include "idxmap/Domain.h"
#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

namespace idxmap {

namespace {

/// Visits points of the box (last variable fastest). Stops when \p Fn
/// returns true; returns whether it did.
template <typename Fn>
bool forEachBoxPoint(const IndexingMap &M, std::vector<int64_t> &P, Fn F) {
  unsigned N = M.numVars();
  for (unsigned I = 0; I < N; ++I)
    P[I] = M.var(I).Bound.Lo;
  while (true) {
    if (F(P))
      return true;
    int I = static_cast<int>(N) - 1;
    while (I >= 0 && P[I] == M.var(I).Bound.Hi) {
      P[I] = M.var(I).Bound.Lo;
      --I;
    }
    if (I < 0)
      return false;
    ++P[I];
  }
}

} // namespace

Emptiness checkEmptyFast(const IndexingMap &Map) {
  if (Map.isUndefined())
    return Emptiness::Unknown;
  if (Map.isKnownEmpty())
    return Emptiness::Empty;
  IndexingMap M = Map;
  simplify(M);
  if (M.isKnownEmpty())
    return Emptiness::Empty;
  if (M.constraints().empty())
    return Emptiness::NonEmpty;

  unsigned N = M.numVars();
  std::vector<int64_t> P(N);
  // Exhaustive search of small boxes: exact.
  uint64_t Size = 1;
  bool Small = true;
  for (unsigned I = 0; I < N && Small; ++I) {
    uint64_t S = M.var(I).Bound.size();
    if (S == 0)
      return Emptiness::Empty;
    if (S > 4096 || Size * S > 4096)
      Small = false;
    else
      Size *= S;
  }
  if (Small) {
    bool Found = forEachBoxPoint(
        M, P, [&](const std::vector<int64_t> &Pt) { return M.contains(Pt); });
    return Found ? Emptiness::NonEmpty : Emptiness::Empty;
  }

  // Corners and mid points: each variable at lo, hi or the middle.
  auto Pick = [&](unsigned Var, unsigned Choice) {
    const Interval &B = M.var(Var).Bound;
    switch (Choice % 3) {
    case 0:
      return B.Lo;
    case 1:
      return B.Hi;
    default:
      return B.Lo +
             static_cast<int64_t>((static_cast<__int128>(B.Hi) - B.Lo) / 2);
    }
  };
  for (unsigned Choice = 0; Choice < 3; ++Choice) {
    for (unsigned I = 0; I < N; ++I)
      P[I] = Pick(I, Choice);
    if (M.contains(P))
      return Emptiness::NonEmpty;
  }
  // A fixed pseudo-random sample (deterministic).
  uint64_t State = 0x9E3779B97F4A7C15ull;
  auto Next = [&]() {
    State ^= State << 13;
    State ^= State >> 7;
    State ^= State << 17;
    return State;
  };
  for (unsigned Sample = 0; Sample < 1024; ++Sample) {
    for (unsigned I = 0; I < N; ++I) {
      const Interval &B = M.var(I).Bound;
      uint64_t Width = B.size();
      uint64_t Off = Width == UINT64_MAX ? Next() : Next() % Width;
      P[I] = static_cast<int64_t>(static_cast<uint64_t>(B.Lo) + Off);
    }
    if (M.contains(P))
      return Emptiness::NonEmpty;
  }
  return Emptiness::Unknown;
}

Interval boundsOf(Expr E, const IndexingMap &Map) {
  if (Map.isUndefined())
    return Interval::full();
  if (Map.isKnownEmpty())
    return Interval::empty();
  IndexingMap M = Map;
  simplify(M);
  if (M.isKnownEmpty())
    return Interval::empty();
  RangeEvaluator RE(M, /*UseConstraints=*/true);
  Interval Direct = RE.range(E);
  Expr S = simplifyExpr(E, M, /*UseConstraints=*/true);
  return Direct.intersect(RE.range(S));
}

} // namespace idxmap
