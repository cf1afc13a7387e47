//===- Compose.cpp - Composition of indexing maps -------------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Compose.h"

#include <cassert>

namespace idxmap {

IndexingMap compose(const IndexingMap &First, const IndexingMap &Second) {
  if (First.isUndefined() || Second.isUndefined())
    return IndexingMap::undefined();
  assert(First.numResults() == Second.numDims() && "shape mismatch");
  Context &Ctx = First.context();
  unsigned RS = Second.numRangeVars(), RF = First.numRangeVars();
  unsigned TS = Second.numRuntimeVars(), TF = First.numRuntimeVars();
  if (First.isKnownEmpty() || Second.isKnownEmpty())
    return IndexingMap::knownEmpty(Ctx, First.numDims(), RS + RF, TS + TF,
                                   Second.numResults());

  // Symbol order: [second.range, first.range, second.rt, first.rt].
  std::vector<Expr> FirstSyms, SecondSyms;
  for (unsigned P = 0; P < RF; ++P)
    FirstSyms.push_back(Ctx.symbol(RS + P));
  for (unsigned P = 0; P < TF; ++P)
    FirstSyms.push_back(Ctx.symbol(RS + RF + TS + P));
  for (unsigned P = 0; P < RS; ++P)
    SecondSyms.push_back(Ctx.symbol(P));
  for (unsigned P = 0; P < TS; ++P)
    SecondSyms.push_back(Ctx.symbol(RS + RF + P));

  std::vector<Expr> FirstResults;
  for (Expr E : First.results())
    FirstResults.push_back(E.replace({}, FirstSyms));

  std::vector<Variable> Range(Second.rangeVars());
  Range.insert(Range.end(), First.rangeVars().begin(), First.rangeVars().end());
  std::vector<Variable> Rt(Second.runtimeVars());
  Rt.insert(Rt.end(), First.runtimeVars().begin(), First.runtimeVars().end());

  std::vector<Expr> Results;
  for (Expr E : Second.results())
    Results.push_back(E.replace(FirstResults, SecondSyms));

  IndexingMap M(Ctx, First.dims(), std::move(Range), std::move(Rt),
                std::move(Results));
  for (const Constraint &C : Second.constraints())
    M.addConstraint(C.E.replace(FirstResults, SecondSyms), C.I);
  for (const Constraint &C : First.constraints())
    M.addConstraint(C.E.replace({}, FirstSyms), C.I);
  for (unsigned I = 0; I < FirstResults.size(); ++I) {
    const Interval &B = Second.dims()[I].Bound;
    if (!B.isFull())
      M.addConstraint(FirstResults[I], B);
  }
  return M;
}

} // namespace idxmap
