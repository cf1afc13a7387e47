//===- idxmap/Exact.h - Exact (isl-backed) domain reasoning -----*- C++ -*-===//
//
// Part of idxmap. Tier 2: exact answers about indexing maps, computed with isl
// (integer sets with existentially quantified variables, so floordiv, ceildiv
// and mod by constants are represented exactly). Every query runs in its own
// isl context under an operation budget; when the budget runs out, or a map
// cannot be represented (a product of two variables, a symbolic or zero
// divisor), the answer is Unknown, never a hang, an abort or a guess.
//
// Nothing isl-typed appears here: the bridge is analysis/map/IslBridge.cpp.
//
// Semantics (shared by every query):
// - A map's domain is the set of integer points [dims, range vars, runtime
//   vars] that satisfy every bound and constraint. isl reasons over exact
//   integers; a point where int64 evaluation would overflow is not modelled
//   specially (maps whose constraints keep values in range are unaffected).
// - As a relation, a map relates each domain point to its results.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_EXACT_H
#define IDXMAP_EXACT_H

#include "idxmap/Diagnostics.h"
#include "idxmap/Domain.h"
#include "idxmap/IndexingMap.h"
#include "idxmap/Simplify.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace idxmap {

/// Knobs of an exact query.
///
/// Example:
/// \code
///   std::string Why;
///   ExactOptions O;
///   O.MaxOperations = 1000;   // a small budget
///   O.Explanation = &Why;
///   if (isEmptyExact(Map, O) == Emptiness::Unknown)
///     std::cerr << Why << "\n";
///   // "isl operation budget exhausted (1000 operations)"
/// \endcode
struct ExactOptions {
  /// The isl operation budget of one query (isl_ctx_set_max_operations:
  /// simplex pivots), shared by all the isl calls the query makes. 0 means
  /// unlimited. Deterministic: the same query gives the same answer on every
  /// machine. The default decides every emptiness, bounds, injectivity and
  /// refinement query on the representable maps of the benchmark corpus (a
  /// few need more than 20,000) and stops pathological ones early.
  uint64_t MaxOperations = 50000;
  /// A limit per query in milliseconds of the querying thread's CPU time
  /// (0: none), a safety net for inputs whose single operations are slow
  /// (huge coefficients). CPU time rather than wall-clock time, so that a
  /// machine busy with other work does not change answers; unlike the
  /// budget it still depends on the machine's speed. It never changes a
  /// definite answer, only turns it into Unknown.
  uint64_t TimeLimitMs = 500;
  /// The size budget of one query: the constraint matrix cells (rows x
  /// columns) it may build in all, over every system it hands to isl, and
  /// the coefficients it stores while translating (0: unlimited). It is
  /// checked before anything is allocated, so it bounds the memory and time
  /// spent before isl runs, which the operation budget does not count: a
  /// 20,000-variable box needs 800 M cells (about 8 GB) for one emptiness
  /// test. The default (8 M, a few hundred MB at most) admits one test on a
  /// 1,000-variable map with a constraint per variable.
  uint64_t MaxCells = 8000000;
  /// When non-null, receives why an answer is Unknown (budget exhausted, a
  /// non-affine expression, an isl error) or, for a `No` answer, a witness
  /// in words (e.g. "(d0=1) and (d0=5) both map to (1)"); for refineExact,
  /// what it could not use. Cleared when there is nothing to say.
  std::string *Explanation = nullptr;
  /// When non-null, set to true if an answer is Unknown because one of the
  /// budgets above ran out (false otherwise), so that a caller can tell
  /// "out of budget" (retry with more) from "not representable".
  bool *BudgetHit = nullptr;
};

/// A yes/no answer that can be Unknown.
enum class Answer { Yes, No, Unknown };

/// "yes", "no" or "unknown".
///
/// Example: `answerName(Answer::No)` is "no".
const char *answerName(Answer A);

/// "empty", "non-empty" or "unknown" (the words `idxmap is-empty` prints).
///
/// Example: `emptinessName(Emptiness::NonEmpty)` is "non-empty".
const char *emptinessName(Emptiness E);

/// The relation of \p Map in isl's syntax (as isl prints it, after its own
/// simplification), or a diagnostic saying why the map cannot be represented
/// exactly. Inputs are named after the map's variables (runtime variables
/// are inputs too), outputs `o0, o1, ...`. UNDEFINED cannot be represented;
/// KNOWN EMPTY is an empty relation. Meant for debugging and error messages;
/// the queries build isl objects directly, not through this text.
///
/// Example:
/// \code
///   (d0)[s0] -> (d0 floordiv 4), domain: d0 in [0, 15], s0 in [0, 3]
///   // { [d0, s0] -> [o0] : 0 <= d0 <= 15 and 0 <= s0 <= 3 and
///   //                      -3 + d0 <= 4o0 <= d0 }
///   (d0, d1) -> (d0 * d1), domain: d0 in [0, 3], d1 in [0, 3]
///   // error: cannot represent exactly: a product of two non-constant
///   //        expressions in 'd0 * d1'
/// \endcode
Expected<std::string> toIslString(const IndexingMap &Map);

/// Exact emptiness of \p Map's domain. KNOWN EMPTY is Empty; UNDEFINED and
/// maps isl cannot represent are Unknown, as is any query over budget.
///
/// Example (interval reasoning cannot see either):
/// \code
///   (d0) -> (d0), domain: d0 in [1, 50], d0 mod 7 in [0, 0],
///                         d0 mod 11 in [0, 0]          // Empty (77 > 50)
///   (d0) -> (d0), domain: d0 in [0, 100], d0 mod 8 + 5 in [50, 54]  // Empty
///   (d0) -> (d0), domain: d0 in [0, 100], d0 mod 8 in [3, 3]  // NonEmpty
/// \endcode
Emptiness isEmptyExact(const IndexingMap &Map,
                       const ExactOptions &Options = {});

/// The exact minimum and maximum of \p E over \p Map's domain. Returns an
/// empty interval when the domain is empty, nullopt when the answer is Unknown
/// (budget, non-affine expression, UNDEFINED). A bound beyond int64 is clamped
/// to the int64 limit on that side (Interval's "unknown" convention).
///
/// Example:
/// \code
///   // domain: d0 in [0, 100], d0 mod 8 in [3, 3]
///   boundsExact(d0, Map)              // [3, 99]
///   boundsExact(d0 floordiv 8, Map)   // [0, 12]
///   // domain: d0 in [0, 15], s0 in [0, 3], d0 + s0 in [0, 4]
///   boundsExact(d0 * 4 + s0, Map)     // [0, 16], intervals say [0, 63]
/// \endcode
std::optional<Interval> boundsExact(Expr E, const IndexingMap &Map,
                                    const ExactOptions &Options = {});

/// The exact part of `simplify --exact`, for a map already simplified by tier
/// 1: detects an empty domain (the map becomes KNOWN EMPTY), tightens every
/// variable's bound to its exact projection, and removes each constraint
/// that the bounds and the remaining constraints imply (in printed order, so
/// the result is deterministic). The domain's point set never changes.
/// Steps that hit the budget are skipped (the map stays correct, only less
/// simplified). Returns true if \p Map changed.
///
/// Example:
/// \code
///   (d0) -> (d0), domain: d0 in [0, 100], d0 mod 8 in [3, 3],
///                         d0 floordiv 8 in [0, 20]
///   // -> (d0) -> (d0), domain: d0 in [3, 99], d0 mod 8 in [3, 3]
/// \endcode
bool refineExact(IndexingMap &Map, const ExactOptions &Options = {});

/// `simplify --exact`: tier-1 simplify(), then refineExact(), then tier-1
/// again so that rules can use the tightened bounds (e.g. a dim whose exact
/// range is one point becomes a constant). Returns true if \p Map changed.
///
/// Example:
/// \code
///   (d0, d1) -> (d0 + d1), domain: d0 in [0, 10], d1 in [0, 10],
///                          d0 + d1 in [20, 30]
///   // -> (d0, d1) -> (20), domain: d0 in [10, 10], d1 in [10, 10]
///   //    (d0 + d1 in [20, 30] is implied by the tightened bounds)
/// \endcode
bool simplifyExact(IndexingMap &Map, const ExactOptions &Options = {},
                   const SimplifyOptions &Tier1 = {});

/// Whether \p Map is injective over its domain: no two distinct points of
/// [dims, range vars] give the same results. Runtime variables are fixed at
/// run time, so the question is asked for each of their values separately
/// (two points with different runtime values never collide). On `No`, the
/// explanation names two colliding points.
///
/// Example:
/// \code
///   (d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 7], s0 in [0, 3]  // Yes
///   (d0)[s0] -> (d0 * 2 + s0), domain: d0 in [0, 7], s0 in [0, 3]  // No:
///   //   "(d0=0, s0=2) and (d0=1, s0=0) both map to (2)"
/// \endcode
Answer isInjective(const IndexingMap &Map, const ExactOptions &Options = {});

/// Whether \p Map maps its domain onto the box `[0, Shape[0]) x ... ` one to
/// one: every element of the box is the result of exactly one point of
/// [dims, range vars] (a thread->element map touches each element of a
/// tensor exactly once). With runtime variables, it must hold for every
/// runtime value allowed by their bounds and by the constraints that mention
/// only runtime variables. Shape must have one size per result (else
/// Unknown). On `No`, the explanation names a missed element, an element
/// outside the box, or two points touching the same element.
///
/// Example:
/// \code
///   // a tiled loop-emitter thread map onto 64x128:
///   (th_x, bl_x)[vec] -> ((bl_x * 128 + th_x * 4 + vec) floordiv 128,
///                         (th_x * 4 + vec) mod 128),
///     domain: th_x in [0, 31], bl_x in [0, 63], vec in [0, 3]
///   isBijectiveOnto(Map, {64, 128})   // Yes
///   isBijectiveOnto(Map, {64, 256})   // No: "element (0, 128) is never
///   touched"
/// \endcode
Answer isBijectiveOnto(const IndexingMap &Map,
                       const std::vector<int64_t> &Shape,
                       const ExactOptions &Options = {});

/// Whether \p A and \p B are the same relation from (dims, runtime vars) to
/// results, with range variables existentially quantified (XLA's meaning: a
/// dim point indexes the set of results over all range-var values). The maps
/// need the same numbers of dims, runtime vars and results (else `No`); their
/// range variables may differ. A KNOWN EMPTY map equals exactly the maps
/// whose domain is empty, whatever their shapes. On `No`, the explanation
/// names a pair that one relates and the other does not.
///
/// Example:
/// \code
///   (d0)[s0] -> (d0 * 4 + s0),     domain: d0 in [0, 7], s0 in [0, 3]
///   (d0)[s0] -> (d0 * 4 + 3 - s0), domain: d0 in [0, 7], s0 in [0, 3]
///   areEqual(A, B)            // Yes (same set per d0)
///   arePointwiseEqual(A, B)   // No (different value at s0 = 0)
/// \endcode
Answer areEqual(const IndexingMap &A, const IndexingMap &B,
                const ExactOptions &Options = {});

/// Whether \p A and \p B have the same domain (over all variables, range vars
/// included) and the same results at every domain point. The maps need the
/// same numbers of dims, range vars, runtime vars and results (else `No`);
/// a KNOWN EMPTY map equals exactly the maps whose domain is empty. On `No`,
/// the explanation names a point in one domain only, or a point where the
/// results differ.
///
/// Example:
/// \code
///   (d0) -> (d0 mod 8), domain: d0 in [0, 7]
///   (d0) -> (d0),       domain: d0 in [0, 7]      // Yes
///   (d0) -> (d0),       domain: d0 in [0, 8]      // No: domains differ
/// \endcode
Answer arePointwiseEqual(const IndexingMap &A, const IndexingMap &B,
                         const ExactOptions &Options = {});

} // namespace idxmap

#endif // IDXMAP_EXACT_H
