//===- support/Minimize.cpp - Shrinking failing indexing maps -------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "support/Minimize.h"

#include "idxmap/Context.h"

#include <cstdlib>
#include <tuple>

namespace idxmap::testing {

namespace {

uint64_t treeNodes(Expr E) {
  if (!E.isBinary())
    return 1;
  return 1 + treeNodes(E.lhs()) + treeNodes(E.rhs());
}

uint64_t magnitude(int64_t V) {
  return V < 0 ? uint64_t(0) - uint64_t(V) : uint64_t(V);
}

uint64_t saturatingAdd(uint64_t A, uint64_t B) {
  uint64_t R;
  return __builtin_add_overflow(A, B, &R) ? UINT64_MAX : R;
}

uint64_t constantsOf(Expr E) {
  if (E.isConstant())
    return magnitude(E.value());
  if (!E.isBinary())
    return 0;
  return saturatingAdd(constantsOf(E.lhs()), constantsOf(E.rhs()));
}

/// Pre-order list of the subexpressions of E (with repetitions).
void subexprs(Expr E, std::vector<Expr> &Out) {
  Out.push_back(E);
  if (E.isBinary()) {
    subexprs(E.lhs(), Out);
    subexprs(E.rhs(), Out);
  }
}

/// Rebuilds E with its \p Index-th pre-order subexpression replaced by
/// \p Repl. \p Index counts down as the walk proceeds.
Expr replaceAt(Expr E, int64_t &Index, Expr Repl) {
  if (Index == 0) {
    --Index;
    return Repl;
  }
  --Index;
  if (!E.isBinary())
    return E;
  Expr L = replaceAt(E.lhs(), Index, Repl);
  Expr R = Index >= 0 ? replaceAt(E.rhs(), Index, Repl) : E.rhs();
  if (L == E.lhs() && R == E.rhs())
    return E;
  return makeBinary(E.kind(), L, R);
}

/// The parts of a map, editable.
struct Parts {
  Context *Ctx;
  std::vector<Variable> Dims, Range, Rt;
  std::vector<Expr> Results;
  std::vector<Constraint> Cs;

  explicit Parts(const IndexingMap &M)
      : Ctx(M.contextPtr()), Dims(M.dims()), Range(M.rangeVars()),
        Rt(M.runtimeVars()), Results(M.results()), Cs(M.constraints()) {}

  IndexingMap build() const {
    return IndexingMap(*Ctx, Dims, Range, Rt, Results, Cs);
  }
  unsigned numVars() const { return Dims.size() + Range.size() + Rt.size(); }
  Variable &var(unsigned I) {
    if (I < Dims.size())
      return Dims[I];
    I -= Dims.size();
    if (I < Range.size())
      return Range[I];
    return Rt[I - Range.size()];
  }

  /// Replaces flat variable \p V by \p Value everywhere and removes it.
  void removeVar(unsigned V, int64_t Value) {
    std::vector<Expr> DimRepl(Dims.size()), SymRepl(Range.size() + Rt.size());
    unsigned ND = Dims.size();
    for (unsigned I = 0; I < ND; ++I)
      DimRepl[I] = I == V ? Ctx->constant(Value) : Ctx->dim(I < V ? I : I - 1);
    for (unsigned P = 0; P < SymRepl.size(); ++P) {
      unsigned Flat = ND + P;
      if (Flat == V)
        SymRepl[P] = Ctx->constant(Value);
      else
        SymRepl[P] = Flat < V || V < ND ? Ctx->symbol(P) : Ctx->symbol(P - 1);
    }
    for (Expr &E : Results)
      E = E.replace(DimRepl, SymRepl);
    for (Constraint &C : Cs)
      C.E = C.E.replace(DimRepl, SymRepl);
    if (V < ND)
      Dims.erase(Dims.begin() + V);
    else if (V < ND + Range.size())
      Range.erase(Range.begin() + (V - ND));
    else
      Rt.erase(Rt.begin() + (V - ND - Range.size()));
  }
};

/// All one-step reductions of \p M, coarse ones first.
std::vector<IndexingMap> candidates(const IndexingMap &M) {
  std::vector<IndexingMap> Out;
  Parts P(M);
  Context &Ctx = *P.Ctx;
  // Drop a result or a constraint.
  for (unsigned I = 0; I < P.Results.size(); ++I) {
    Parts Q = P;
    Q.Results.erase(Q.Results.begin() + I);
    Out.push_back(Q.build());
  }
  for (unsigned I = 0; I < P.Cs.size(); ++I) {
    Parts Q = P;
    Q.Cs.erase(Q.Cs.begin() + I);
    Out.push_back(Q.build());
  }
  // Remove a variable, substituting a value of its bound.
  for (unsigned V = 0; V < P.numVars(); ++V) {
    const Interval &B = P.var(V).Bound;
    for (int64_t Value : {B.Lo, B.Hi}) {
      Parts Q = P;
      Q.removeVar(V, Value);
      Out.push_back(Q.build());
      if (B.Lo == B.Hi)
        break;
    }
  }
  // Replace a subexpression by an operand or a small constant.
  auto Shrink = [&](Expr E, const std::function<void(Expr)> &Emit) {
    std::vector<Expr> Subs;
    subexprs(E, Subs);
    for (size_t I = 0; I < Subs.size(); ++I) {
      Expr S = Subs[I];
      std::vector<Expr> Repls;
      if (S.isBinary()) {
        Repls = {S.lhs(), S.rhs(), Ctx.constant(0), Ctx.constant(1)};
      } else if (S.isConstant() && S.value() != 0) {
        int64_t C = S.value();
        Repls = {Ctx.constant(0), Ctx.constant(C / 2)};
        if (C < 0 && C != INT64_MIN)
          Repls.push_back(Ctx.constant(-C));
        Repls.push_back(Ctx.constant(C > 0 ? C - 1 : C + 1));
      } else if (S.isVariable()) {
        Repls = {Ctx.constant(0)};
      }
      for (Expr Repl : Repls) {
        if (Repl == S)
          continue;
        int64_t Index = int64_t(I);
        Emit(replaceAt(E, Index, Repl));
      }
    }
  };
  for (unsigned I = 0; I < P.Results.size(); ++I)
    Shrink(P.Results[I], [&](Expr New) {
      Parts Q = P;
      Q.Results[I] = New;
      Out.push_back(Q.build());
    });
  for (unsigned I = 0; I < P.Cs.size(); ++I)
    Shrink(P.Cs[I].E, [&](Expr New) {
      Parts Q = P;
      Q.Cs[I].E = New;
      Out.push_back(Q.build());
    });
  // Shrink constraint intervals and variable bounds.
  auto ShrinkInterval = [&](Interval I,
                            const std::function<void(Interval)> &Emit) {
    if (I.isEmpty())
      return;
    int64_t Lo = I.Lo, Hi = I.Hi;
    if (Lo < Hi) {
      int64_t Mid = Lo + int64_t((uint64_t(Hi) - uint64_t(Lo)) / 2);
      Emit({Lo, Mid});
      Emit({Mid + 1, Hi});
      Emit({Lo + 1, Hi});
      Emit({Lo, Hi - 1});
    }
    if (Lo < 0 && Hi >= 0)
      Emit({0, Hi});
    if (Lo > 0)
      Emit({Lo - 1, Hi});
  };
  for (unsigned V = 0; V < P.numVars(); ++V)
    ShrinkInterval(P.var(V).Bound, [&](Interval N) {
      Parts Q = P;
      Q.var(V).Bound = N;
      Out.push_back(Q.build());
    });
  for (unsigned I = 0; I < P.Cs.size(); ++I)
    ShrinkInterval(P.Cs[I].I, [&](Interval N) {
      Parts Q = P;
      Q.Cs[I].I = N;
      Out.push_back(Q.build());
    });
  return Out;
}

} // namespace

bool MapSize::operator<(const MapSize &O) const {
  return std::tie(Structure, Widths, Constants) <
         std::tie(O.Structure, O.Widths, O.Constants);
}

MapSize measureMap(const IndexingMap &M) {
  MapSize S;
  if (M.isUndefined())
    return S;
  S.Structure = M.numVars() + M.numResults();
  for (Expr E : M.results()) {
    S.Structure += treeNodes(E);
    S.Constants = saturatingAdd(S.Constants, constantsOf(E));
  }
  for (const Constraint &C : M.constraints()) {
    S.Structure += 1 + treeNodes(C.E);
    S.Constants = saturatingAdd(S.Constants, constantsOf(C.E));
    S.Constants = saturatingAdd(S.Constants, magnitude(C.I.Lo));
    S.Constants = saturatingAdd(S.Constants, magnitude(C.I.Hi));
  }
  for (unsigned V = 0; V < M.numVars(); ++V) {
    const Interval &B = M.var(V).Bound;
    if (!B.isEmpty())
      S.Widths = saturatingAdd(S.Widths, uint64_t(B.Hi) - uint64_t(B.Lo));
    S.Constants = saturatingAdd(S.Constants, magnitude(B.Lo));
  }
  return S;
}

IndexingMap minimizeMap(const IndexingMap &M, const FailurePredicate &Fails,
                        const MinimizeOptions &Options) {
  IndexingMap Best = M;
  if (M.isUndefined() || M.isKnownEmpty())
    return Best;
  MapSize BestSize = measureMap(Best);
  unsigned Steps = 0;
  for (bool Improved = true; Improved && Steps < Options.MaxSteps;) {
    Improved = false;
    for (IndexingMap &C : candidates(Best)) {
      if (C.isUndefined())
        continue;
      MapSize CS = measureMap(C);
      if (!(CS < BestSize))
        continue;
      if (++Steps > Options.MaxSteps)
        break;
      if (!Fails(C))
        continue;
      Best = std::move(C);
      BestSize = CS;
      Improved = true;
      break;
    }
  }
  return Best;
}

} // namespace idxmap::testing
