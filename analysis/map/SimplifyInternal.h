//===- SimplifyInternal.h - Private pieces of the tier-1 simplifier -*- C++ -*-===//
//
// Part of idxmap. Not a public header. Shared by RangeEvaluator.cpp,
// SimplifyDriver.cpp, SimplifyAdd.cpp, SimplifyMul.cpp, SimplifyFloorDiv.cpp,
// SimplifyMod.cpp, Constraints.cpp and Rescale.cpp.
//
// Vocabulary used in the derivation comments of the rules:
//   - `x fd d` is floordiv (rounds toward -inf), `x cd d` is ceildiv (toward
//     +inf), `x mod m = x - (x fd m) * m` (in [0, m-1] for m > 0, in
//     [m+1, 0] for m < 0).
//   - A "term" is `Base * Coeff` with a constant coefficient; a sum is a list
//     of terms plus a constant (LinearSum).
//   - "g-split": a sum written as `G * A + B` where every term of A has a
//     coefficient divisible by G and B collects the other terms and the
//     constant.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_MAP_SIMPLIFYINTERNAL_H
#define IDXMAP_ANALYSIS_MAP_SIMPLIFYINTERNAL_H

#include "idxmap/Context.h"
#include "idxmap/Expr.h"
#include "idxmap/IndexingMap.h"
#include "idxmap/Interval.h"
#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace idxmap {
namespace detail {

//===----------------------------------------------------------------------===//
// Integer helpers (exact, overflow-aware)
//===----------------------------------------------------------------------===//

/// gcd of |A| and |B| (gcd(0, x) = |x|). Returns 0 only if both are 0 and
/// saturates |INT64_MIN| to 2^62 (which divides it), so the answer always
/// divides both arguments.
int64_t gcd64(int64_t A, int64_t B);
/// lcm of two positive values, nullopt on overflow.
std::optional<int64_t> lcm64(int64_t A, int64_t B);
/// |V| or nullopt for INT64_MIN.
std::optional<int64_t> abs64(int64_t V);

/// Floor/ceil division of 128-bit values by a non-zero divisor.
__int128 floorDiv128(__int128 A, __int128 B);
__int128 ceilDiv128(__int128 A, __int128 B);
/// Clamps a 128-bit value to the int64 range.
int64_t clamp64(__int128 V);
/// Builds the interval [Lo, Hi] from 128-bit end points, clamping to int64.
/// Clamping is exact for sets of int64 values; an interval whose end points
/// lie beyond the int64 range on the same side becomes empty.
Interval clampInterval(__int128 Lo, __int128 Hi);

//===----------------------------------------------------------------------===//
// Linear sums
//===----------------------------------------------------------------------===//

/// One summand `Base * Coeff`. Base is never a constant, a sum, or a product
/// with a constant right operand.
struct Term {
  Expr Base;
  int64_t Coeff;
};

/// A flattened sum `sum(Terms) + Constant`. Overflow is set when a
/// coefficient or the constant could not be represented; such a sum must not
/// be used for rewriting.
struct LinearSum {
  std::vector<Term> Terms;
  int64_t Constant = 0;
  bool Overflow = false;

  /// Adds `E * K`, flattening nested sums and constant multiplications.
  void add(Expr E, int64_t K = 1);
  void addConstant(int64_t C);
  void addTerm(Expr Base, int64_t K);
  /// Multiplies every coefficient and the constant by K.
  void scale(int64_t K);
  bool isConstant() const { return Terms.empty(); }
};

/// Sorts terms into the canonical order (compareStructurally of the bases),
/// merges terms with equal bases and drops zero coefficients.
void canonicalize(LinearSum &S);

/// Builds `((t0 + t1) + ...) + Constant` from an already canonical sum.
Expr buildSum(Context &Ctx, const LinearSum &S);

/// Sound interval of a sum given the ranges of its bases (no correlation).
Interval sumRange(RangeEvaluator &RE, const std::vector<Term> &Terms,
                  int64_t Constant);

/// The interval `R * K` (full range on overflow).
Interval scaleInterval(const Interval &R, int64_t K);

/// The result of choosing a g-split `Sum = G * (A + T) + Rest` where every
/// term of A has a coefficient divisible by G, Rest = B - G * T collects the
/// other terms and the constant shifted by -G*T, and Rest lies in
/// [0, G - 1].
struct GSplit {
  int64_t G = 1;
  LinearSum A;    // coefficients already divided by G, constant T included
  LinearSum Rest; // B - G * T
};

/// Finds the largest G > 1 that divides \p Modulus (a positive divisor or
/// modulus) and the coefficients of a non-empty subset of terms such that
/// the remaining terms and the constant, shifted by a multiple of G, lie in
/// [0, G - 1] (or [-(G - 1), 0] when \p RestNonPositive, as ceildiv needs).
/// Returns nullopt if there is none.
std::optional<GSplit> findGSplit(RangeEvaluator &RE, const LinearSum &S,
                                 int64_t Modulus, bool RestNonPositive = false);

//===----------------------------------------------------------------------===//
// Expression simplifier
//===----------------------------------------------------------------------===//

/// Range-aware bottom-up rewriting of expressions over a fixed domain.
/// Results are memoized: the domain (and so RE) must not change during the
/// simplifier's lifetime.
class ExprSimplifier {
public:
  ExprSimplifier(RangeEvaluator &RE, bool ReplacePointDims,
                 SimplifyStats *Stats);

  /// Simplifies \p E to a fixpoint of the rewrite rules.
  Expr simplify(Expr E);

  RangeEvaluator &rangeEvaluator() { return RE; }
  Context &context() { return *Ctx; }
  void hit(const char *Rule) {
    if (Stats)
      Stats->hit(Rule);
  }

  // One-step rewrites, by operator (SimplifyAdd/Mul/FloorDiv/Mod.cpp). Each
  // gets the node with already simplified operands and returns an
  // equivalent expression (possibly the same node).
  Expr rewriteAdd(Expr E);
  Expr rewriteMul(Expr L, Expr R);
  Expr rewriteFloorDiv(Expr L, Expr R);
  Expr rewriteCeilDiv(Expr L, Expr R);
  Expr rewriteMod(Expr L, Expr R);

  /// Flattens \p E (a sum or a product with a constant) into \p S with every
  /// base simplified.
  void flattenSimplified(Expr E, int64_t K, LinearSum &S);

  /// Canonical sum from \p S (canonicalize, mod/div pairing, build).
  Expr finishSum(LinearSum &S);

private:
  Expr simplifyOnce(Expr E);
  bool pairModsAndDivs(LinearSum &S);
  bool mayReplaceByConstant(Expr E);

  RangeEvaluator &RE;
  Context *Ctx;
  bool ReplacePointDims;
  SimplifyStats *Stats;
  uint64_t PointDimMask = 0;
  bool AnyPointDimBeyondMask = false;
  std::unordered_map<Expr, Expr> Memo;
  unsigned Depth = 0;
};

//===----------------------------------------------------------------------===//
// Constraints (Constraints.cpp)
//===----------------------------------------------------------------------===//

/// Runs the constraint passes to a fixpoint: simplify every constraint
/// expression, drop constraints that always hold, move `+ c`, `* k`,
/// `fd k`, `cd k` into the interval, split sums, tighten variable bounds
/// through sums, merge mod constraints (CRT) and snap variable bounds to
/// residue classes. Marks the map KNOWN EMPTY on infeasibility. Returns true
/// if the domain changed.
bool simplifyConstraints(IndexingMap &Map, SimplifyStats *Stats);

/// Merges constraints `X mod c in [r, r]` on one X into a single
/// `X mod lcm in [r', r']` (Chinese remainder theorem), detecting
/// incompatible residues (KNOWN EMPTY), and snaps bare variables' bounds to
/// their residue classes. Returns true if anything changed.
bool mergeModConstraints(IndexingMap &Map, SimplifyStats *Stats);

} // namespace detail
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_MAP_SIMPLIFYINTERNAL_H
