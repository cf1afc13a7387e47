//===- support/BruteForce.h - Exhaustive checks of maps ---------*- C++ -*-===//
//
// Part of idxmap. A brute-force checker: enumerate a map's domain (bounded),
// compare two maps point by point, check compositions and projections. It
// evaluates expressions with its own checked evaluator (independent of
// Expr::evaluate and IndexingMap::contains), so an overflow or a division by
// zero is reported as a failure, never wrapped.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_BRUTEFORCE_H
#define IDXMAP_TEST_SUPPORT_BRUTEFORCE_H

#include "idxmap/IndexingMap.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace idxmap::testing {

/// A point: the values of all variables in order [dims, range vars, runtime
/// vars], as IndexingMap::evaluate takes them.
using Point = std::vector<int64_t>;

struct BruteForceOptions {
  /// The most points of a variable box that a check visits. A larger box is
  /// answered with CheckStatus::TooLarge instead of being enumerated.
  uint64_t MaxPoints = uint64_t(1) << 16;
  /// compareMaps: only the total numbers of variables (and results) must
  /// agree, not how they split into dims, range and runtime variables (for
  /// convertSymbolsToDims).
  bool FlatLayout = false;
};

enum class CheckStatus {
  /// The property holds at every point.
  Ok,
  /// A counterexample point was found (see CheckResult::Point).
  Mismatch,
  /// The box to enumerate has more than MaxPoints points (or is unbounded).
  TooLarge,
  /// Evaluating an expression overflowed int64 or divided by zero at
  /// CheckResult::Point; the check could not decide.
  EvalError,
  /// The maps do not have compatible shapes (numbers of variables/results).
  Invalid,
};

const char *checkStatusName(CheckStatus S);

/// The answer of a check, with the first failing point and a readable reason.
///
/// Example:
/// \code
///   CheckResult R = compareMaps(Before, After);
///   if (!R) std::cerr << R.str() << "\n";
///   // "mismatch at (d0=3, s0=1): results differ: (7) vs (6)"
/// \endcode
struct CheckResult {
  CheckStatus Status = CheckStatus::Ok;
  std::string Message;
  /// The first failing point (layout of the map named in Message).
  Point FailingPoint;
  /// Number of box points visited and number found inside the domain(s).
  uint64_t PointsVisited = 0;
  uint64_t DomainPoints = 0;

  bool ok() const { return Status == CheckStatus::Ok; }
  explicit operator bool() const { return ok(); }
  std::string str() const;
};

/// Evaluates \p E with checked arithmetic (independent of Expr::evaluate).
/// nullopt on overflow, division by zero or a missing variable.
std::optional<int64_t> evaluateChecked(Expr E, const std::vector<int64_t> &Dims,
                                       const std::vector<int64_t> &Syms);

/// Number of points of the box given by the variable bounds of \p Map, or
/// nullopt if it exceeds \p Max (or a bound is unbounded).
std::optional<uint64_t> boxSize(const IndexingMap &Map, uint64_t Max);

/// Enumerates all points of \p Map's domain (bounds and constraints) in
/// lexicographic order, last variable fastest. Returns TooLarge/EvalError in
/// \p Status (and no points) when the box is too large or a constraint cannot
/// be evaluated at some point. A KNOWN EMPTY map has no points.
///
/// Example: `(d0) -> (d0), domain: d0 in [0, 7], d0 mod 4 in [1, 1]` gives
/// {1}, {5}.
std::vector<Point> enumerateDomain(const IndexingMap &Map,
                                   CheckStatus *Status = nullptr,
                                   const BruteForceOptions &Options = {});

/// Checks that \p A and \p B have the same domain point set and the same
/// result values at every domain point. Both must have the same numbers of
/// dims, range vars, runtime vars and results. The union of both variable
/// boxes is enumerated.
///
/// Example: `(d0) -> (d0 mod 8), domain: d0 in [0, 7]` and
/// `(d0) -> (d0), domain: d0 in [0, 7]` compare Ok.
CheckResult compareMaps(const IndexingMap &A, const IndexingMap &B,
                        const BruteForceOptions &Options = {});

/// Checks that \p A and \p B are the same relation from dims to results
/// when their symbols are existentially quantified: for every dims point d,
/// { A(d, s) : (d, s) in A's domain } == { B(d, t) : (d, t) in B's domain }.
/// The maps must have the same dims and results; their symbols may differ
/// (for rescaleSymbols and removeUnusedSymbols).
///
/// Example: `(d0)[s0] -> (d0 + s0 * 2), s0 in [0, 3], s0 mod 2 in [0, 0]` and
/// `(d0)[s0] -> (d0 + s0 * 4), s0 in [0, 1]` are the same relation.
CheckResult compareRelations(const IndexingMap &A, const IndexingMap &B,
                             const BruteForceOptions &Options = {});

/// Checks `Composed == Second o First` with FORMATS.md's domain semantics:
/// Composed's variables are [First.dims, Second.range, First.range,
/// Second.rt, First.rt]; a point (x, t) is in Composed's domain iff x is in
/// First's domain and (First(x), t) is in Second's domain, and there
/// Composed(x, t) == Second(First(x), t).
CheckResult checkCompose(const IndexingMap &First, const IndexingMap &Second,
                         const IndexingMap &Composed,
                         const BruteForceOptions &Options = {});

/// Checks that \p Reduced is \p Original with the variables flagged in
/// \p Removed (over [dims, symbols], as removeUnusedVars returns them)
/// projected away: the projection of Original's domain is Reduced's domain
/// and the results agree on every fiber.
CheckResult checkProjection(const IndexingMap &Original,
                            const IndexingMap &Reduced,
                            const std::vector<bool> &Removed,
                            const BruteForceOptions &Options = {});

/// Checks that every value of \p E over \p Map's domain lies in \p Range and
/// is a multiple of \p Divisor (soundness of RangeEvaluator answers).
CheckResult checkExprBounds(const IndexingMap &Map, Expr E, Interval Range,
                            int64_t Divisor,
                            const BruteForceOptions &Options = {});

/// Formats a point with \p Map's variable names: "(d0=3, s0=1)".
std::string formatPoint(const IndexingMap &Map, const Point &P);

} // namespace idxmap::testing

#endif // IDXMAP_TEST_SUPPORT_BRUTEFORCE_H
