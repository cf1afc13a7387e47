//===- IslPrint.cpp - Maps as isl text ------------------------------------===//
//
// Part of idxmap. toIslString: a map as an isl relation built from isl
// affine expressions with isl's own divs (Translator), for printing only;
// the queries use the flat systems of IslFlat.h.
//
//===----------------------------------------------------------------------===//

#include "IslSession.h"

#include "idxmap/ExprVisitor.h"

namespace idxmap {
namespace {

using namespace islbridge;

//===----------------------------------------------------------------------===//
// Translation to isl affine expressions (for printing)
//===----------------------------------------------------------------------===//

/// Builds a map's relation with isl's own quasi-affine expressions (a
/// division is an isl div: `floor((d0)/4)`), which isl prints readably. Only
/// toIslString() uses it; the queries use the flat translation below. On
/// failure the builders return null handles and Error says why.
class Translator : ExprVisitor<Translator, IslAff> {
  friend class ExprVisitor<Translator, IslAff>;

public:
  Translator(const Session &S, const IndexingMap &M) : S(S), M(M) {
    Space.reset(isl_space_set_alloc(S.ctx(), 0, M.numVars()));
    LS.reset(isl_local_space_from_space(Space.copy()));
  }

  std::string Error;

  /// The aff of \p E over the map's variables.
  IslAff aff(Expr E) {
    if (!Error.empty())
      return IslAff();
    IslAff A = visit(E);
    if (!A && Error.empty())
      Error = S.failure();
    return A;
  }

  /// The aff of variable \p Flat ([dims, range vars, runtime vars]).
  IslAff var(unsigned Flat) {
    return IslAff(isl_aff_var_on_domain(LS.copy(), isl_dim_set, Flat));
  }

  IslAff constant(int64_t C) {
    return IslAff(
        isl_aff_val_on_domain(LS.copy(), isl_val_int_from_si(S.ctx(), C)));
  }

  /// `{ x : I.Lo <= A(x) <= I.Hi }`.
  IslSet within(IslAff A, Interval I) {
    if (!A)
      return IslSet();
    isl_basic_set *Lo =
        isl_aff_ge_basic_set(A.copy(), constant(I.Lo).release());
    isl_basic_set *Hi =
        isl_aff_le_basic_set(A.release(), constant(I.Hi).release());
    IslSet R(isl_set_from_basic_set(isl_basic_set_intersect(Lo, Hi)));
    if (!R && Error.empty())
      Error = S.failure();
    return R;
  }

  /// The box of the variable bounds.
  IslSet bounds() {
    IslSet D(isl_set_universe(Space.copy()));
    for (unsigned I = 0; I < M.numVars() && D; ++I)
      D = intersect(std::move(D), within(var(I), M.var(I).Bound));
    return D;
  }

  /// The domain: bounds and the constraints whose \p Keep flag is set (all
  /// when \p Keep is null). KNOWN EMPTY gives the empty set.
  IslSet domain(const std::vector<bool> *Keep = nullptr) {
    if (M.isKnownEmpty())
      return IslSet(isl_set_empty(Space.copy()));
    IslSet D = bounds();
    const std::vector<Constraint> &Cs = M.constraints();
    for (size_t I = 0; I < Cs.size() && D; ++I)
      if (!Keep || (*Keep)[I])
        D = intersect(std::move(D), within(aff(Cs[I].E), Cs[I].I));
    if (!D && Error.empty())
      Error = S.failure();
    return D;
  }

  /// The relation `domain point -> results` over all variables.
  IslMap relation() {
    IslSet D = domain();
    if (!D)
      return IslMap();
    unsigned NumOut = M.numResults();
    isl_aff_list *List = isl_aff_list_alloc(S.ctx(), NumOut);
    for (unsigned I = 0; I < NumOut; ++I) {
      // A KNOWN EMPTY map's results are irrelevant (its domain is empty) and
      // may be anything; use 0 so that translation cannot fail on them.
      IslAff R = M.isKnownEmpty() ? constant(0) : aff(M.result(I));
      if (!R) {
        isl_aff_list_free(List);
        return IslMap();
      }
      List = isl_aff_list_add(List, R.release());
    }
    isl_space *MapSpace = isl_space_map_from_domain_and_range(
        Space.copy(), isl_space_set_alloc(S.ctx(), 0, NumOut));
    isl_multi_aff *MA = isl_multi_aff_from_aff_list(MapSpace, List);
    IslMap R(isl_map_intersect_domain(isl_map_from_multi_aff(MA), D.release()));
    if (!R && Error.empty())
      Error = S.failure();
    return R;
  }

private:
  IslSet intersect(IslSet A, IslSet B) {
    if (!A || !B) {
      if (Error.empty())
        Error = S.failure();
      return IslSet();
    }
    return IslSet(isl_set_intersect(A.release(), B.release()));
  }

  void unsupported(Expr E, const std::string &What) {
    if (Error.empty())
      Error = "cannot represent exactly: " + What + " in '" + printExpr(E, &M) +
              "'";
  }

  /// The divisor of a division node: a non-zero integer constant.
  IslVal divisor(Expr E, IslAff R) {
    if (!R)
      return IslVal();
    if (isl_aff_is_cst(R.get()) != isl_bool_true) {
      unsupported(E, "a symbolic divisor");
      return IslVal();
    }
    IslVal V(isl_aff_get_constant_val(R.get()));
    if (!V || isl_val_is_int(V.get()) != isl_bool_true) {
      unsupported(E, "a non-integer divisor");
      return IslVal();
    }
    if (isl_val_is_zero(V.get()) == isl_bool_true) {
      unsupported(E, "a division by zero");
      return IslVal();
    }
    return V;
  }

  /// floor(A / D) (Ceil: ceil(A / D)) for a non-zero integer D.
  static IslAff divide(IslAff A, IslVal D, bool Ceil) {
    isl_aff *X = A.release();
    isl_val *V = D.release();
    if (isl_val_is_neg(V) == isl_bool_true) {
      X = isl_aff_neg(X);
      V = isl_val_neg(V);
    }
    X = isl_aff_scale_down_val(X, V);
    return IslAff(Ceil ? isl_aff_ceil(X) : isl_aff_floor(X));
  }

  IslAff visitConstant(Expr E) { return constant(E.value()); }

  IslAff visitDim(Expr E) {
    if (E.position() >= M.numDims()) {
      unsupported(E, "a dim the map does not have");
      return IslAff();
    }
    return var(E.position());
  }

  IslAff visitSymbol(Expr E) {
    if (E.position() >= M.numSymbols()) {
      unsupported(E, "a symbol the map does not have");
      return IslAff();
    }
    return var(M.numDims() + E.position());
  }

  IslAff visitAdd(Expr E) {
    // The summands left to right, with a worklist: a sum of N terms is a
    // tree N deep.
    IslAff Acc = constant(0);
    std::vector<Expr> Work{E.rhs(), E.lhs()};
    while (!Work.empty() && Acc) {
      Expr N = Work.back();
      Work.pop_back();
      if (N.kind() == ExprKind::Add) {
        Work.push_back(N.rhs());
        Work.push_back(N.lhs());
        continue;
      }
      IslAff T = visit(N);
      Acc = T ? IslAff(isl_aff_add(Acc.release(), T.release())) : IslAff();
    }
    return Acc;
  }

  IslAff visitMul(Expr E) {
    IslAff L = visit(E.lhs());
    IslAff R = L ? visit(E.rhs()) : IslAff();
    if (!L || !R)
      return IslAff();
    if (isl_aff_is_cst(L.get()) != isl_bool_true &&
        isl_aff_is_cst(R.get()) != isl_bool_true) {
      unsupported(E, "a product of two non-constant expressions");
      return IslAff();
    }
    return IslAff(isl_aff_mul(L.release(), R.release()));
  }

  IslAff visitBinary(Expr E) {
    IslAff L = visit(E.lhs());
    IslVal D = L ? divisor(E, visit(E.rhs())) : IslVal();
    if (!L || !D)
      return IslAff();
    if (E.kind() != ExprKind::Mod)
      return divide(std::move(L), std::move(D), E.kind() == ExprKind::CeilDiv);
    // a mod d = a - floor(a / d) * d (MLIR semantics for either sign).
    IslAff Q = divide(IslAff(L.copy()), IslVal(D.copy()), /*Ceil=*/false);
    if (!Q)
      return IslAff();
    return IslAff(
        isl_aff_sub(L.release(), isl_aff_scale_val(Q.release(), D.release())));
  }

  const Session &S;
  const IndexingMap &M;
  IslSpace Space;
  IslLocalSpace LS;
};

} // namespace

Expected<std::string> toIslString(const IndexingMap &Map) {
  auto Error = [](std::string Msg) {
    return Diagnostic{SourceLocation{}, std::move(Msg), ""};
  };
  if (Map.isUndefined())
    return Error("cannot represent exactly: the map is UNDEFINED");
  ExactOptions O;
  O.MaxOperations = 0;
  Session S(O);
  if (!S.ok())
    return Error(S.failure());
  Translator T(S, Map);
  IslMap R = T.relation();
  if (!R)
    return Error(T.Error.empty() ? S.failure() : T.Error);
  for (unsigned I = 0; I < Map.numVars(); ++I)
    R.reset(isl_map_set_dim_name(R.release(), isl_dim_in, I,
                                 Map.varName(I).c_str()));
  for (unsigned I = 0; I < Map.numResults(); ++I)
    R.reset(isl_map_set_dim_name(R.release(), isl_dim_out, I,
                                 ("o" + std::to_string(I)).c_str()));
  if (!R)
    return Error(S.failure());
  char *Str = isl_map_to_str(R.get());
  if (!Str)
    return Error(S.failure());
  std::string Result(Str);
  free(Str);
  return Result;
}

} // namespace idxmap
