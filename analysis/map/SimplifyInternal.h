//===- SimplifyInternal.h - Private pieces of the tier-1 simplifier -*- C++
//-*-===//
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
#include <unordered_set>
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

/// The operands of the expression a rewrite replaces (see
/// ExprSimplifier::fitsBelowRoot): one or two held inline, or a vector that
/// must outlive this object.
class ExprRefs {
public:
  ExprRefs(Expr A) : Inline{A, Expr()}, B(Inline), E(Inline + 1) {}
  ExprRefs(Expr A, Expr C) : Inline{A, C}, B(Inline), E(Inline + 2) {}
  ExprRefs(const std::vector<Expr> &V) : B(V.data()), E(V.data() + V.size()) {}
  ExprRefs(const ExprRefs &O)
      : Inline{O.Inline[0], O.Inline[1]}, SumLeaves(O.SumLeaves) {
    bool Own = O.B == O.Inline;
    B = Own ? Inline : O.B;
    E = Own ? Inline + (O.E - O.B) : O.E;
  }
  ExprRefs &operator=(const ExprRefs &) = delete;
  /// The leaves of the sum \p Sum (as flattenSimplified finds them), each
  /// also in its simplified form: found only if the guard needs them.
  static ExprRefs sumLeavesOf(Expr Sum) {
    ExprRefs R(Sum);
    R.SumLeaves = true;
    return R;
  }
  bool isSumLeaves() const { return SumLeaves; }
  const Expr *begin() const { return B; }
  const Expr *end() const { return E; }

private:
  Expr Inline[2];
  const Expr *B, *E;
  bool SumLeaves = false;
};

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
  /// base simplified. The simplified leaves are appended to \p Leaves when
  /// given.
  void flattenSimplified(Expr E, int64_t K, LinearSum &S,
                         std::vector<Expr> *Leaves = nullptr);

  /// Canonical sum from \p S (canonicalize, mod/div pairing, build) that is
  /// to replace an expression with the same value whose operands are
  /// \p Refs; every base of \p S must be a node of Refs. Returns nullopt if
  /// no form of it passes the overflow guard (fitsBelowRoot); the caller
  /// then keeps its input.
  std::optional<Expr> finishSum(LinearSum &S, const ExprRefs &Refs);

  //===--------------------------------------------------------------------===//
  // Overflow guard (SimplifyDriver.cpp)
  //===--------------------------------------------------------------------===//

  /// The guard every rewrite passes: true if \p Candidate, which is to
  /// replace an expression E with the same value at every domain point,
  /// evaluates without int64 overflow (and without division by zero) at
  /// every domain point where E does. Its root has E's value, so only the
  /// nodes below the root are checked: each must be a node of \p Refs (E's
  /// operands, or what E's operands simplified to: those evaluate wherever E
  /// does) or have a range, from the RangeEvaluator and interval arithmetic
  /// in 128 bits, inside int64 with every node below it evaluating.
  bool fitsBelowRoot(Expr Candidate, const ExprRefs &Refs);
  /// The same for an expression that does not have E's value (a rewritten
  /// constraint expression): its root is checked too.
  bool fitsEverywhere(Expr Candidate, const ExprRefs &Refs);
  /// True if \p E provably evaluates (no int64 overflow, no division by
  /// zero) at every point of the bounds box. A range computed through an
  /// overflow is full, and full proves nothing: a constraint may only be
  /// dropped as always true when its expression evaluates everywhere.
  bool evaluatesEverywhere(Expr E) { return fitInfo(E).Fits; }

private:
  Expr simplifyOnce(Expr E);
  Expr rewriteAddCarefully(Expr E, const LinearSum &S, std::vector<Expr> &Refs);
  /// Pairs mod and div terms (sum.mod-div-recombine, sum.sub-to-mod).
  /// Returns true if S changed; S as it was is then in \p Backup.
  bool pairModsAndDivs(LinearSum &S, LinearSum *Backup);
  bool mayReplaceByConstant(Expr E);
  std::optional<Expr> buildCheckedSum(const LinearSum &S, const ExprRefs &Refs,
                                      bool BasesAreRefNodes);
  bool quickDivFits(const LinearSum &Rem, Expr DivE, int64_t D, bool Ceil,
                    const LinearSum &Out);
  std::optional<Interval> sumRangeFast(const LinearSum &S,
                                       bool BasesAreRefNodes, bool RootMustFit,
                                       Expr Extra = Expr(),
                                       Interval ExtraRange = Interval());
  std::optional<Expr> buildReorderedSum(const LinearSum &S,
                                        const ExprRefs &Refs);
  std::optional<Expr> buildReorderedSum(std::vector<Expr> Summands,
                                        int64_t Constant, const ExprRefs &Refs);

  /// What the guard knows of an expression from ranges alone: whether it
  /// provably evaluates at every domain point, and then a sound interval
  /// of its value.
  struct FitInfo {
    bool Fits;
    Interval Range;
  };
  FitInfo fitInfo(Expr E);
  /// The interval of a constant or variable.
  Interval leafRange(const ExprStorage *S);
  /// The interval of a node given intervals of its operands (which
  /// evaluate), or nullopt if the node itself may overflow or divide by
  /// zero.
  std::optional<Interval> nodeRange(Expr E, const Interval &L,
                                    const Interval &R);
  /// State of one fitsBelowRoot/fitsEverywhere question.
  struct RelativeState {
    bool Built = false;
    /// The nodes of Refs (built on first use).
    std::unordered_set<const void *> RefNodes;
    /// rangeRelative's answers so far.
    std::unordered_map<const void *, std::optional<Interval>> Memo;
  };
  /// fitInfo's range, or (for a node of Refs) the RangeEvaluator's range;
  /// nullopt if \p E may fail to evaluate where the replaced expression
  /// evaluates.
  std::optional<Interval> rangeRelative(Expr E, const ExprRefs &Refs,
                                        RelativeState &St);
  bool isRefNode(Expr E, const ExprRefs &Refs, RelativeState &St);

  RangeEvaluator &RE;
  Context *Ctx;
  bool ReplacePointDims;
  SimplifyStats *Stats;
  uint64_t PointDimMask = 0;
  bool AnyPointDimBeyondMask = false;
  std::unordered_map<Expr, Expr> Memo;
  std::unordered_map<Expr, FitInfo> Fit;
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
