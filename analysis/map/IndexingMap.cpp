//===- IndexingMap.cpp - Affine maps with a domain ------------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/IndexingMap.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <map>

namespace idxmap {

IndexingMap::IndexingMap(Context &C, std::vector<Variable> D,
                         std::vector<Variable> R, std::vector<Variable> RT,
                         std::vector<Expr> Res,
                         const std::vector<Constraint> &Cs)
    : Ctx(&C), Dims(std::move(D)), RangeVars(std::move(R)),
      RuntimeVars(std::move(RT)), Results(std::move(Res)) {
#ifndef NDEBUG
  for (Expr E : Results)
    assert(E && &E.context() == Ctx && "result from another context");
#endif
  for (unsigned I = 0, E = numVars(); I < E; ++I)
    if (var(I).Bound.isEmpty()) {
      markKnownEmpty();
      return;
    }
  for (const Constraint &C : Cs)
    if (!addConstraint(C.E, C.I))
      return;
}

IndexingMap IndexingMap::knownEmpty(Context &Ctx, unsigned NumDims,
                                    unsigned NumRange, unsigned NumRuntime,
                                    unsigned NumResults) {
  IndexingMap M;
  M.Ctx = &Ctx;
  M.Dims.resize(NumDims);
  M.RangeVars.resize(NumRange);
  M.RuntimeVars.resize(NumRuntime);
  M.Results.assign(NumResults, Ctx.constant(0));
  M.markKnownEmpty();
  return M;
}

IndexingMap IndexingMap::identity(Context &Ctx,
                                  const std::vector<int64_t> &Sizes) {
  std::vector<Variable> D;
  std::vector<Expr> R;
  for (unsigned I = 0; I < Sizes.size(); ++I) {
    D.push_back({"", {0, Sizes[I] - 1}});
    R.push_back(Ctx.dim(I));
  }
  return IndexingMap(Ctx, std::move(D), {}, {}, std::move(R));
}

void IndexingMap::markKnownEmpty() {
  KnownEmpty = true;
  for (auto *Vs : {&Dims, &RangeVars, &RuntimeVars})
    for (Variable &V : *Vs)
      V.Bound = Interval::empty();
  if (Ctx)
    for (Expr &E : Results)
      E = Ctx->constant(0);
  setConstraints({});
}

const Variable &IndexingMap::var(unsigned I) const {
  if (I < Dims.size())
    return Dims[I];
  I -= Dims.size();
  if (I < RangeVars.size())
    return RangeVars[I];
  I -= RangeVars.size();
  assert(I < RuntimeVars.size() && "variable index out of range");
  return RuntimeVars[I];
}
Variable &IndexingMap::var(unsigned I) {
  return const_cast<Variable &>(static_cast<const IndexingMap *>(this)->var(I));
}
const Variable &IndexingMap::symbolVar(unsigned Pos) const {
  return var(numDims() + Pos);
}
Variable &IndexingMap::symbolVar(unsigned Pos) { return var(numDims() + Pos); }

Expr IndexingMap::varExpr(unsigned I) const {
  return I < numDims() ? Ctx->dim(I) : Ctx->symbol(I - numDims());
}

unsigned IndexingMap::flatIndex(Expr V) const {
  assert(V.isVariable());
  return V.isDim() ? V.position() : numDims() + V.position();
}

const Interval &IndexingMap::bound(Expr V) const {
  return var(flatIndex(V)).Bound;
}

std::string IndexingMap::varName(unsigned I) const {
  const Variable &V = var(I);
  if (!V.Name.empty())
    return V.Name;
  if (I < numDims())
    return "d" + std::to_string(I);
  I -= numDims();
  if (I < numRangeVars())
    return "s" + std::to_string(I);
  return "rt" + std::to_string(I - numRangeVars());
}

bool IndexingMap::hasCustomNames() const {
  for (unsigned I = 0, E = numVars(); I < E; ++I)
    if (!var(I).Name.empty())
      return true;
  return false;
}

bool IndexingMap::intersectBound(Expr V, Interval I) {
  if (KnownEmpty)
    return false;
  Interval &B = var(flatIndex(V)).Bound;
  B = B.intersect(I);
  if (B.isEmpty()) {
    markKnownEmpty();
    return false;
  }
  return true;
}

bool IndexingMap::addConstraint(Expr E, Interval I) {
  if (KnownEmpty)
    return false;
  if (I.isEmpty()) {
    markKnownEmpty();
    return false;
  }
  if (E.isConstant()) {
    if (!I.contains(E.value())) {
      markKnownEmpty();
      return false;
    }
    return true;
  }
  if (E.isVariable())
    return intersectBound(E, I);
  if (std::optional<size_t> Pos = findConstraint(E)) {
    Constraint &C = Constraints[*Pos];
    C.I = C.I.intersect(I);
    if (C.I.isEmpty()) {
      markKnownEmpty();
      return false;
    }
    return true;
  }
  Constraints.push_back({E, I});
  return true;
}

std::optional<size_t> IndexingMap::findConstraint(Expr E) {
  auto Linear = [&]() -> std::optional<size_t> {
    for (size_t I = 0; I < Constraints.size(); ++I)
      if (Constraints[I].E == E)
        return I;
    return std::nullopt;
  };
  if (Constraints.size() < 16)
    return Linear();
  if (IndexedCount > Constraints.size()) {
    ConstraintIndex.clear();
    IndexedCount = 0;
  }
  for (; IndexedCount < Constraints.size(); ++IndexedCount)
    ConstraintIndex.emplace(Constraints[IndexedCount].E, IndexedCount);
  auto It = ConstraintIndex.find(E);
  if (It == ConstraintIndex.end())
    return std::nullopt;
  if (It->second < Constraints.size() && Constraints[It->second].E == E)
    return It->second;
  return Linear(); // the list changed in place since it was indexed
}

std::optional<std::vector<int64_t>>
IndexingMap::evaluate(const std::vector<int64_t> &Point) const {
  if (isUndefined() || Point.size() != numVars())
    return std::nullopt;
  std::vector<int64_t> D(Point.begin(), Point.begin() + numDims());
  std::vector<int64_t> S(Point.begin() + numDims(), Point.end());
  std::vector<int64_t> Out;
  Out.reserve(Results.size());
  for (Expr E : Results) {
    auto V = E.evaluate(D, S);
    if (!V)
      return std::nullopt;
    Out.push_back(*V);
  }
  return Out;
}

bool IndexingMap::contains(const std::vector<int64_t> &Point) const {
  if (isUndefined() || KnownEmpty || Point.size() != numVars())
    return false;
  for (unsigned I = 0; I < Point.size(); ++I)
    if (!var(I).Bound.contains(Point[I]))
      return false;
  std::vector<int64_t> D(Point.begin(), Point.begin() + numDims());
  std::vector<int64_t> S(Point.begin() + numDims(), Point.end());
  for (const Constraint &C : Constraints) {
    auto V = C.E.evaluate(D, S);
    if (!V || !C.I.contains(*V))
      return false;
  }
  return true;
}

bool IndexingMap::operator==(const IndexingMap &O) const {
  if (isUndefined() || O.isUndefined())
    return isUndefined() && O.isUndefined();
  if (KnownEmpty != O.KnownEmpty || Ctx != O.Ctx)
    return false;
  if (numDims() != O.numDims() || numRangeVars() != O.numRangeVars() ||
      numRuntimeVars() != O.numRuntimeVars() || numResults() != O.numResults())
    return false;
  if (KnownEmpty)
    return true;
  if (Dims != O.Dims || RangeVars != O.RangeVars ||
      RuntimeVars != O.RuntimeVars || Results != O.Results ||
      Constraints.size() != O.Constraints.size())
    return false;
  // By expression (the first constraint of each), not pairwise: linear.
  std::unordered_map<Expr, Interval> Theirs;
  for (const Constraint &D : O.Constraints)
    Theirs.emplace(D.E, D.I);
  for (const Constraint &C : Constraints) {
    auto It = Theirs.find(C.E);
    if (It == Theirs.end() || It->second != C.I)
      return false;
  }
  return true;
}

static void hashCombine(size_t &H, size_t V) {
  H ^= V + 0x9E3779B97F4A7C15ull + (H << 6) + (H >> 2);
}

size_t IndexingMap::hash() const {
  if (isUndefined())
    return 0;
  size_t H = KnownEmpty;
  hashCombine(H, numDims());
  hashCombine(H, numRangeVars());
  hashCombine(H, numRuntimeVars());
  hashCombine(H, numResults());
  if (KnownEmpty)
    return H;
  for (unsigned I = 0, E = numVars(); I < E; ++I) {
    hashCombine(H, std::hash<int64_t>()(var(I).Bound.Lo));
    hashCombine(H, std::hash<int64_t>()(var(I).Bound.Hi));
  }
  for (Expr E : Results)
    hashCombine(H, std::hash<Expr>()(E));
  size_t CH = 0; // Order-insensitive.
  for (const Constraint &C : Constraints) {
    size_t X = std::hash<Expr>()(C.E);
    hashCombine(X, std::hash<int64_t>()(C.I.Lo));
    hashCombine(X, std::hash<int64_t>()(C.I.Hi));
    CH += X * 0x100000001B3ull;
  }
  hashCombine(H, CH);
  return H;
}

//===----------------------------------------------------------------------===//
// Variable removal and conversion
//===----------------------------------------------------------------------===//

/// For the constraints whose variables are all unused: finds, per connected
/// group of unused variables, a point satisfying the group's constraints.
/// Groups whose box is too large to enumerate become used (kept). Returns
/// false (and marks \p M known empty) if some group has no solution.
static bool
keepOrCheckDroppedConstraints(IndexingMap &M,
                              const std::vector<std::vector<unsigned>> &CVars,
                              std::vector<bool> &Used) {
  unsigned N = M.numVars(), ND = M.numDims();
  // Union-find over unused variables joined by dropped constraints.
  std::vector<unsigned> Parent(N);
  for (unsigned I = 0; I < N; ++I)
    Parent[I] = I;
  std::function<unsigned(unsigned)> Find = [&](unsigned X) {
    return Parent[X] == X ? X : Parent[X] = Find(Parent[X]);
  };
  std::vector<unsigned> Dropped;
  for (unsigned C = 0; C < CVars.size(); ++C) {
    if (CVars[C].empty() || Used[CVars[C].front()])
      continue;
    Dropped.push_back(C);
    for (unsigned V : CVars[C])
      Parent[Find(V)] = Find(CVars[C].front());
  }
  std::map<unsigned, std::vector<unsigned>> Groups; // root -> constraints
  for (unsigned C : Dropped)
    Groups[Find(CVars[C].front())].push_back(C);
  for (auto &[Root, Cs] : Groups) {
    std::vector<unsigned> Vars;
    for (unsigned I = 0; I < N; ++I)
      if (!Used[I] && Find(I) == Root)
        Vars.push_back(I);
    uint64_t Box = 1;
    bool Small = true;
    for (unsigned V : Vars) {
      uint64_t S = M.var(V).Bound.size();
      if (S == 0) {
        Box = 0; // An empty bound: no solution.
        break;
      }
      if (Box > (uint64_t(1) << 16) / S) {
        Small = false;
        break;
      }
      Box *= S;
    }
    if (!Small) {
      for (unsigned V : Vars)
        Used[V] = true;
      continue;
    }
    // Enumerate the group's variables; others at their lower bound.
    std::vector<int64_t> Dims(ND, 0), Syms(N - ND, 0);
    auto Set = [&](unsigned V, int64_t X) {
      (V < ND ? Dims[V] : Syms[V - ND]) = X;
    };
    std::vector<int64_t> Cur;
    for (unsigned V : Vars) {
      Cur.push_back(M.var(V).Bound.Lo);
      Set(V, Cur.back());
    }
    bool Found = false;
    for (uint64_t P = 0; P < Box && !Found; ++P) {
      Found = true;
      for (unsigned C : Cs) {
        const Constraint &Cn = M.constraints()[C];
        auto Val = Cn.E.evaluate(Dims, Syms);
        if (!Val || !Cn.I.contains(*Val)) {
          Found = false;
          break;
        }
      }
      for (size_t K = Vars.size(); K-- > 0;) {
        if (++Cur[K] <= M.var(Vars[K]).Bound.Hi) {
          Set(Vars[K], Cur[K]);
          break;
        }
        Cur[K] = M.var(Vars[K]).Bound.Lo;
        Set(Vars[K], Cur[K]);
      }
    }
    if (!Found) {
      M.markKnownEmpty();
      return false;
    }
  }
  return true;
}

/// Removes variables for which \p Candidate is true and that are unused:
/// not in any result and not in a constraint together with a used variable.
static std::vector<bool>
removeUnused(IndexingMap &M, const std::function<bool(unsigned)> &Candidate) {
  unsigned N = M.numVars(), ND = M.numDims();
  std::vector<bool> Removed(N, false);
  if (M.isUndefined() || M.isKnownEmpty())
    return Removed;
  auto VarsOf = [&](Expr E) {
    std::vector<unsigned> Vs;
    E.walkVariables([&](Expr V) {
      Vs.push_back(V.isDim() ? V.position() : ND + V.position());
    });
    return Vs;
  };
  std::vector<bool> Used(N, false);
  for (unsigned I = 0; I < N; ++I)
    Used[I] = !Candidate(I);
  for (Expr E : M.results())
    for (unsigned V : VarsOf(E))
      Used[V] = true;
  // Propagate: a constraint that mentions a used variable makes all of its
  // variables used.
  std::vector<std::vector<unsigned>> CVars;
  for (const Constraint &C : M.constraints())
    CVars.push_back(VarsOf(C.E));
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (auto &Vs : CVars) {
      bool Any = std::any_of(Vs.begin(), Vs.end(),
                             [&](unsigned V) { return Used[V]; });
      if (!Any)
        continue;
      for (unsigned V : Vs)
        if (!Used[V])
          Used[V] = Changed = true;
    }
  }
  // Constraints over removed variables only are dropped with them; they
  // must not hide an empty domain. Each connected group of such variables
  // is checked by enumeration (small boxes); a group that cannot be checked
  // is kept, and one that has no solution makes the map known empty.
  if (!keepOrCheckDroppedConstraints(M, CVars, Used))
    return std::vector<bool>(N, false);
  bool AnyRemoved = false;
  for (unsigned I = 0; I < N; ++I) {
    Removed[I] = !Used[I];
    AnyRemoved |= Removed[I];
  }
  if (!AnyRemoved)
    return Removed;
  // Renumber.
  Context &Ctx = M.context();
  std::vector<Expr> DimRepl(ND), SymRepl(N - ND);
  std::vector<Variable> Dims, Range, Rt;
  for (unsigned I = 0; I < N; ++I) {
    if (Removed[I])
      continue;
    if (I < ND) {
      DimRepl[I] = Ctx.dim(Dims.size());
      Dims.push_back(M.var(I));
    } else if (I < ND + M.numRangeVars()) {
      SymRepl[I - ND] = Ctx.symbol(Range.size());
      Range.push_back(M.var(I));
    } else {
      Rt.push_back(M.var(I));
    }
  }
  // Runtime symbols come after all kept range symbols.
  unsigned NextRt = Range.size();
  for (unsigned I = ND + M.numRangeVars(); I < N; ++I)
    if (!Removed[I])
      SymRepl[I - ND] = Ctx.symbol(NextRt++);
  std::vector<Expr> Results;
  for (Expr E : M.results())
    Results.push_back(E.replace(DimRepl, SymRepl));
  std::vector<Constraint> Cs;
  for (unsigned C = 0; C < CVars.size(); ++C) {
    if (!CVars[C].empty() && Removed[CVars[C].front()])
      continue; // All of its variables are removed.
    const Constraint &Old = M.constraints()[C];
    Cs.push_back({Old.E.replace(DimRepl, SymRepl), Old.I});
  }
  IndexingMap New(Ctx, std::move(Dims), std::move(Range), std::move(Rt),
                  std::move(Results));
  New.setConstraints(std::move(Cs));
  M = std::move(New);
  return Removed;
}

std::vector<bool> IndexingMap::removeUnusedVars() {
  return removeUnused(*this, [](unsigned) { return true; });
}

std::vector<bool> IndexingMap::removeUnusedSymbols() {
  unsigned ND = numDims();
  std::vector<bool> R =
      removeUnused(*this, [ND](unsigned I) { return I >= ND; });
  return std::vector<bool>(R.begin() + std::min<size_t>(ND, R.size()), R.end());
}

IndexingMap IndexingMap::convertSymbolsToDims() const {
  if (isUndefined())
    return *this;
  std::vector<Variable> NewDims = Dims;
  NewDims.insert(NewDims.end(), RangeVars.begin(), RangeVars.end());
  NewDims.insert(NewDims.end(), RuntimeVars.begin(), RuntimeVars.end());
  if (KnownEmpty)
    return knownEmpty(*Ctx, NewDims.size(), 0, 0, numResults());
  std::vector<Expr> SymRepl;
  for (unsigned I = 0; I < numSymbols(); ++I)
    SymRepl.push_back(Ctx->dim(numDims() + I));
  std::vector<Expr> Res;
  for (Expr E : Results)
    Res.push_back(E.replace({}, SymRepl));
  std::vector<Constraint> Cs;
  for (const Constraint &C : Constraints)
    Cs.push_back({C.E.replace({}, SymRepl), C.I});
  IndexingMap M(*Ctx, std::move(NewDims), {}, {}, std::move(Res));
  M.setConstraints(std::move(Cs));
  return M;
}

} // namespace idxmap
