//===- idxmap/IndexingMap.h - Affine maps with a domain ---------*- C++ -*-===//
//
// Part of idxmap. An IndexingMap is `(dims)[range vars]{runtime vars} ->
// (results)` plus a domain: a bound per variable and constraints
// `expr in [lo, hi]`. Value semantics.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_INDEXINGMAP_H
#define IDXMAP_INDEXINGMAP_H

#include "idxmap/Context.h"
#include "idxmap/Expr.h"
#include "idxmap/Interval.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace idxmap {

/// A named variable with an inclusive bound. An empty name means the default
/// name (`d<i>`, `s<i>`, `rt<i>`).
struct Variable {
  std::string Name;
  Interval Bound = Interval::full();

  bool operator==(const Variable &O) const { return Bound == O.Bound; }
};

/// A domain constraint `E in I`. E is never a bare variable or a constant
/// (those are folded into bounds or checked when added).
struct Constraint {
  Expr E;
  Interval I;
};

/// An indexing map from (dims, range vars, runtime vars) to result indices.
///
/// Symbols in expressions are numbered over range vars first, then runtime
/// vars: with 2 range vars and 1 runtime var, `s2` is the runtime var.
/// A point is given as the values of all variables in order
/// `[dims..., range vars..., runtime vars...]`.
///
/// Example:
/// \code
///   Context Ctx;
///   // (d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 15], s0 in [0, 3]
///   IndexingMap M(Ctx, {{"", {0, 15}}}, {{"", {0, 3}}}, {},
///                 {Ctx.dim(0) * 4 + Ctx.symbol(0)});
///   M.evaluate({2, 1});           // {9}
///   M.contains({16, 0});          // false: d0 out of bounds
///   M.addConstraint(Ctx.dim(0) % 2, {0, 0});
///   M.contains({3, 0});           // false: d0 mod 2 must be 0
/// \endcode
class IndexingMap {
public:
  /// An UNDEFINED map (indexing unknown).
  IndexingMap() = default;
  IndexingMap(Context &Ctx, std::vector<Variable> Dims,
              std::vector<Variable> RangeVars,
              std::vector<Variable> RuntimeVars, std::vector<Expr> Results,
              const std::vector<Constraint> &Constraints = {});

  static IndexingMap undefined() { return IndexingMap(); }
  /// A KNOWN EMPTY map with the given shape (all bounds [0, -1], results 0).
  static IndexingMap knownEmpty(Context &Ctx, unsigned NumDims = 0,
                                unsigned NumRange = 0, unsigned NumRuntime = 0,
                                unsigned NumResults = 0);
  /// The identity on a box: `(d0, ..., dn-1) -> (d0, ..., dn-1)` with
  /// `d_i in [0, Sizes[i] - 1]`.
  static IndexingMap identity(Context &Ctx, const std::vector<int64_t> &Sizes);

  bool isUndefined() const { return Ctx == nullptr; }
  bool isKnownEmpty() const { return KnownEmpty; }
  /// Marks the map KNOWN EMPTY: keeps the numbers of variables and results,
  /// sets every bound to [0, -1], every result to 0, drops constraints.
  void markKnownEmpty();

  Context &context() const { return *Ctx; }
  Context *contextPtr() const { return Ctx; }

  unsigned numDims() const { return Dims.size(); }
  unsigned numRangeVars() const { return RangeVars.size(); }
  unsigned numRuntimeVars() const { return RuntimeVars.size(); }
  unsigned numSymbols() const { return RangeVars.size() + RuntimeVars.size(); }
  unsigned numVars() const { return numDims() + numSymbols(); }
  unsigned numResults() const { return Results.size(); }

  const std::vector<Variable> &dims() const { return Dims; }
  const std::vector<Variable> &rangeVars() const { return RangeVars; }
  const std::vector<Variable> &runtimeVars() const { return RuntimeVars; }
  /// Variable by flat index over [dims, range vars, runtime vars].
  const Variable &var(unsigned FlatIndex) const;
  Variable &var(unsigned FlatIndex);
  /// The variable of symbol position \p Pos (range vars, then runtime vars).
  const Variable &symbolVar(unsigned Pos) const;
  Variable &symbolVar(unsigned Pos);
  /// The Expr (Dim or Symbol) of a flat variable index.
  Expr varExpr(unsigned FlatIndex) const;
  /// Flat index of a Dim or Symbol expression.
  unsigned flatIndex(Expr Var) const;
  /// Bound of a Dim or Symbol expression.
  const Interval &bound(Expr Var) const;
  /// Display name of a variable (custom name or default `d<i>`/`s<i>`/`rt<i>`).
  std::string varName(unsigned FlatIndex) const;
  /// True if any variable has a custom name.
  bool hasCustomNames() const;

  const std::vector<Expr> &results() const { return Results; }
  void setResults(std::vector<Expr> R) { Results = std::move(R); }
  Expr result(unsigned I) const { return Results[I]; }

  const std::vector<Constraint> &constraints() const { return Constraints; }
  /// Replaces the whole constraint list (no checks, no folding).
  void setConstraints(std::vector<Constraint> C) {
    Constraints = std::move(C);
    ConstraintIndex.clear();
    IndexedCount = 0;
  }
  /// Adds `E in I` as XLA does: a bare variable intersects its bound; a
  /// constant outside I makes the map KNOWN EMPTY (inside: dropped); an
  /// expression already constrained intersects the intervals; an empty
  /// interval makes the map KNOWN EMPTY. Returns false if the map became
  /// known empty.
  bool addConstraint(Expr E, Interval I);
  /// Intersects a variable's bound; an empty result marks the map empty.
  bool intersectBound(Expr Var, Interval I);

  /// Evaluates the results at a point (values of all variables). Ignores the
  /// domain. nullopt on overflow, division by zero or a wrong point size.
  std::optional<std::vector<int64_t>>
  evaluate(const std::vector<int64_t> &Point) const;
  /// True if the point lies in the domain: every bound and every constraint
  /// holds (a constraint whose evaluation overflows does not hold).
  bool contains(const std::vector<int64_t> &Point) const;

  /// Structural equality: results, bounds and the constraint set (order and
  /// names ignored). Two undefined maps are equal; two known-empty maps are
  /// equal if their numbers of variables and results agree.
  bool operator==(const IndexingMap &O) const;
  bool operator!=(const IndexingMap &O) const { return !(*this == O); }
  size_t hash() const;

  /// Removes variables that appear in no result and in no constraint that
  /// also mentions a used variable; constraints on removed variables only
  /// are dropped (unless they make the domain empty, which is kept as known
  /// empty). Returns the removed flags over [dims, symbols].
  std::vector<bool> removeUnusedVars();
  /// Same, for symbols only.
  std::vector<bool> removeUnusedSymbols();
  /// For each range variable s with a constraint `s mod c in [r, r]` (c > 0),
  /// substitutes s := s' * c + r, rescales its bound and drops the constraint.
  /// Deterministic (lowest symbol first). Returns true if anything changed.
  bool rescaleSymbols();
  /// All range and runtime variables become trailing dims, in order.
  IndexingMap convertSymbolsToDims() const;

private:
  Context *Ctx = nullptr;
  std::vector<Variable> Dims, RangeVars, RuntimeVars;
  std::vector<Expr> Results;
  std::vector<Constraint> Constraints;
  bool KnownEmpty = false;
  /// Position of each constraint expression among the first IndexedCount
  /// constraints, so that addConstraint finds an equal expression in
  /// constant time (a linear scan made building a map with N constraints
  /// quadratic). Verified on use; rebuilt when the list shrank.
  std::unordered_map<Expr, size_t> ConstraintIndex;
  size_t IndexedCount = 0;
  /// The position of a constraint whose expression is \p E.
  std::optional<size_t> findConstraint(Expr E);
};

} // namespace idxmap

template <> struct std::hash<idxmap::IndexingMap> {
  size_t operator()(const idxmap::IndexingMap &M) const { return M.hash(); }
};

#endif // IDXMAP_INDEXINGMAP_H
