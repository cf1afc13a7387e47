//===- IslFlat.h - Maps as flat integer systems for isl ---------*- C++ -*-===//
//
// Part of idxmap. Private to analysis/map (IslBridge.cpp): building isl
// sets and maps from IndexingMaps. A map with N = dims + range vars +
// runtime vars variables becomes N integer columns; every Expr becomes an
// affine form over them plus one integer column per distinct quotient
// (FlatSystem, FlatMap; IslBridge.cpp's header says more).
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_MAP_ISLFLAT_H
#define IDXMAP_ANALYSIS_MAP_ISLFLAT_H

#include "IslSession.h"

#include "idxmap/ExprVisitor.h"

namespace idxmap {
namespace islbridge {

//===----------------------------------------------------------------------===//
// Flat translation: quotients as plain integer columns
//===----------------------------------------------------------------------===//

// Most queries only ask whether a conjunction of constraints has an integer
// point, or optimize over one. For those, every division gets its own
// integer column q with `d * q <= a <= d * q + d - 1` (floordiv; ceildiv and
// mod are rewritten through it), and the system is handed to isl as one
// basic set without any div: the quotient columns behave as existential
// variables because each is determined by the others. This avoids isl's
// normalization of nested divs, which dominates the cost on delinearization
// chains. Together with the normalization of nested quotients in
// FlatSystem::floorDiv, a rank-6 thread map's injectivity test went from
// about 400 ms (isl divs) to under 10 ms. Relations that need a projection
// (equality with range variables, coverage of a box) are built from the same
// system, with the other columns projected out (projectTo).

/// An affine form over the columns of a FlatSystem: sum C[i] * col_i + K.
struct Form {
  std::vector<int64_t> C;
  int64_t K = 0;

  int64_t coeff(size_t I) const { return I < C.size() ? C[I] : 0; }
  bool isConstant() const {
    return std::all_of(C.begin(), C.end(), [](int64_t V) { return V == 0; });
  }
};

/// One constraint `sum Coeffs[i] * col_i + (K - Sub + Adj) >= 0` (or `== 0`).
/// The constant is kept in three parts and summed exactly in isl, so that
/// `E <= Lo - 1` with Lo = INT64_MIN needs no int64 arithmetic. Rows that
/// define a quotient column always hold and are included whenever the column
/// is used; the tags of the other rows let a query select which bounds and
/// constraints take part.
struct Row {
  std::vector<int64_t> Coeffs;
  int64_t K = 0, Sub = 0;
  int Adj = 0;
  bool Eq = false;
  int Tag = 0;
  /// The quotient column this row defines, or -1.
  int Defines = -1;
};

/// A system of rows over integer columns: the variables of one or more map
/// copies first, then one column per division.
class FlatSystem {
public:
  FlatSystem(const Session &S, unsigned NumVarCols)
      : S(S), NumVarCols(NumVarCols), NumCols(NumVarCols) {}

  /// The first failure (an overflowing coefficient, a construct that is not
  /// quasi-affine); empty while everything translated.
  std::string Error;

  unsigned numCols() const { return NumCols; }
  unsigned numVarCols() const { return NumVarCols; }
  /// Appends a free column (no rows) and returns its index.
  unsigned newColumn() { return NumCols++; }
  const Session &session() const { return S; }

  Form column(unsigned Col) const {
    Form F;
    F.C.assign(Col + 1, 0);
    F.C[Col] = 1;
    return F;
  }
  static Form constant(int64_t V) {
    Form F;
    F.K = V;
    return F;
  }

  std::optional<Form> add(const Form &A, const Form &B) {
    Form R;
    R.C.assign(std::max(A.C.size(), B.C.size()), 0);
    for (size_t I = 0; I < R.C.size(); ++I) {
      std::optional<int64_t> V = checkedAdd(A.coeff(I), B.coeff(I));
      if (!V)
        return overflow();
      R.C[I] = *V;
    }
    std::optional<int64_t> K = checkedAdd(A.K, B.K);
    if (!K)
      return overflow();
    R.K = *K;
    return R;
  }

  std::optional<Form> scale(const Form &A, int64_t Factor) {
    Form R;
    R.C.resize(A.C.size());
    for (size_t I = 0; I < A.C.size(); ++I) {
      std::optional<int64_t> V = checkedMul(A.C[I], Factor);
      if (!V)
        return overflow();
      R.C[I] = *V;
    }
    std::optional<int64_t> K = checkedMul(A.K, Factor);
    if (!K)
      return overflow();
    R.K = *K;
    return R;
  }

  std::optional<Form> sub(const Form &A, const Form &B) {
    std::optional<Form> NB = scale(B, -1);
    return NB ? add(A, *NB) : std::nullopt;
  }

  /// floor(A / D) for D != 0. The quotient is normalized first, so that
  /// equal quotients share one column and isl needs no search to see that
  /// two spellings agree:
  ///   floor(-a / -d)        = floor(a / d)
  ///   floor((g*a + k) / (g*d)) = floor((a + floor(k / g)) / d)   (g > 0)
  ///   floor((floor(f / b) + k) / d) = floor((f + k*b) / (b*d))   (b, d > 0)
  /// (the last one turns a mixed-radix chain `(x floordiv 8) floordiv 4`,
  /// `(x floordiv 8) mod 4`, `x floordiv 32` into one column for x / 32).
  /// A quotient that is still fractional gets a new column q with
  /// `d*q <= a <= d*q + d - 1`.
  std::optional<Form> floorDiv(const Form &A, int64_t D) {
    if (D == INT64_MIN)
      return overflow();
    std::optional<Form> N = D < 0 ? scale(A, -1) : std::optional<Form>(A);
    if (!N)
      return std::nullopt;
    int64_t Div = D < 0 ? -D : D;
    for (;;) {
      if (N->isConstant()) {
        std::optional<int64_t> V = checkedFloorDiv(N->K, Div);
        return V ? std::optional<Form>(constant(*V)) : overflow();
      }
      // In uint64: a coefficient may be INT64_MIN, whose magnitude has no
      // int64; the gcd divides Div, so it fits back.
      uint64_t UG = uint64_t(Div);
      for (int64_t V : N->C)
        UG = std::gcd(UG, V < 0 ? 0 - uint64_t(V) : uint64_t(V));
      int64_t G = int64_t(UG);
      if (G > 1) {
        for (int64_t &V : N->C)
          V /= G;
        N->K = *checkedFloorDiv(N->K, G);
        Div /= G;
      }
      if (Div == 1)
        return N;
      std::optional<Form> Nested = unnest(*N, Div);
      if (!Nested)
        break;
      N = std::move(Nested);
      Div = NestedDiv;
    }
    while (!N->C.empty() && N->C.back() == 0)
      N->C.pop_back();
    auto Key = std::make_tuple(N->C, N->K, Div);
    auto It = Quotients.find(Key);
    if (It != Quotients.end())
      return column(It->second);
    if (!S.charge(2 * (NumCols + 1)))
      return overBudget();
    unsigned Q = NumCols++;
    Quotients.emplace(Key, Q);
    Definitions.emplace(Q, std::make_pair(*N, Div));
    // N - Div * q >= 0.
    Row Lo;
    Lo.Coeffs = N->C;
    Lo.Coeffs.resize(NumCols, 0);
    Lo.Coeffs[Q] = -Div;
    Lo.K = N->K;
    // Div * q + (Div - 1) - N >= 0.
    std::optional<Form> Neg = scale(*N, -1);
    if (!Neg)
      return std::nullopt;
    Row Hi;
    Hi.Coeffs = Neg->C;
    Hi.Coeffs.resize(NumCols, 0);
    Hi.Coeffs[Q] = Div;
    Hi.K = Div - 1;
    Hi.Sub = N->K;
    Lo.Defines = Hi.Defines = int(Q);
    DefRows[Q] = {Rows.size(), Rows.size() + 1};
    Rows.push_back(std::move(Lo));
    Rows.push_back(std::move(Hi));
    return column(Q);
  }

  /// `F in I` as rows with \p Tag (an empty I gives an infeasible row).
  /// False (Error set) if a row cannot be built: the caller must not answer
  /// from a system that lacks it.
  bool require(const Form &F, Interval I, int Tag) {
    if (!S.charge(2 * F.C.size() + 2))
      return true; // over budget: every later build() fails
    Row Lo;        // F - I.Lo >= 0
    Lo.Coeffs = F.C;
    Lo.K = F.K;
    Lo.Sub = I.Lo;
    Lo.Tag = Tag;
    Rows.push_back(std::move(Lo));
    return addUpper(F, I.Hi, 0, Tag, Rows);
  }

  /// `F == 0` as a row with \p Tag.
  void requireZero(const Form &F, int Tag) {
    if (!S.charge(F.C.size() + 1))
      return; // over budget: every later build() fails
    Row R;
    R.Coeffs = F.C;
    R.K = F.K;
    R.Eq = true;
    R.Tag = Tag;
    Rows.push_back(std::move(R));
  }

  /// Appends to \p Out the row `F <= V + Adj`, i.e. `V + Adj - F >= 0`.
  bool addUpper(const Form &F, int64_t V, int Adj, int Tag,
                std::vector<Row> &Out) {
    // Only the coefficients are negated: F's constant goes to Sub, exact in
    // isl (negating F.K = INT64_MIN overflowed, and the row was dropped).
    Row R;
    R.Coeffs.resize(F.C.size());
    for (size_t I = 0; I < F.C.size(); ++I) {
      if (F.C[I] == INT64_MIN) {
        overflow();
        return false;
      }
      R.Coeffs[I] = -F.C[I];
    }
    R.K = V;
    R.Sub = F.K;
    R.Adj = Adj;
    R.Tag = Tag;
    Out.push_back(std::move(R));
    return true;
  }

  /// Appends to \p Out the row `F >= V + Adj`, i.e. `F - V - Adj >= 0`.
  void addLower(const Form &F, int64_t V, int Adj, int Tag,
                std::vector<Row> &Out) {
    Row R;
    R.Coeffs = F.C;
    R.K = F.K;
    R.Sub = V;
    R.Adj = -Adj;
    R.Tag = Tag;
    Out.push_back(std::move(R));
  }

  /// A basic set built from some rows, over the variable columns and the
  /// quotient columns those rows need (the others are left out: an unused
  /// quotient is an unconstrained existential that would only slow isl
  /// down). Col maps a system column to its set dimension, or -1.
  struct Built {
    IslSet Set;
    std::vector<int> Col;
    unsigned Dims = 0;
  };

  /// The rows whose tag \p Keep accepts, plus \p Extra rows, plus the
  /// definitions of every quotient they (or the forms in \p Also) use.
  /// Variable columns keep their positions.
  /// A null Set when the query is over a budget.
  Built build(const std::function<bool(int)> &Keep,
              const std::vector<Row> &Extra = {},
              const std::vector<const Form *> &Also = {}) const {
    if (S.overBudget())
      return Built();
    std::vector<const Row *> Selected;
    for (const Row &R : Rows)
      if (R.Defines < 0 && Keep(R.Tag))
        Selected.push_back(&R);
    for (const Row &R : Extra)
      Selected.push_back(&R);
    // Close over quotient definitions.
    std::vector<char> Used(NumCols, 0);
    std::vector<unsigned> Work;
    auto Mark = [&](const std::vector<int64_t> &Coeffs) {
      for (size_t J = 0; J < Coeffs.size() && J < NumCols; ++J)
        if (Coeffs[J] && !Used[J]) {
          Used[J] = 1;
          if (J >= NumVarCols)
            Work.push_back(unsigned(J));
        }
    };
    for (const Row *R : Selected)
      Mark(R->Coeffs);
    for (const Form *F : Also)
      Mark(F->C);
    while (!Work.empty()) {
      unsigned Q = Work.back();
      Work.pop_back();
      auto It = DefRows.find(Q);
      if (It == DefRows.end())
        continue; // an output column: defined by a selected row
      for (size_t RI : It->second) {
        Selected.push_back(&Rows[RI]);
        Mark(Rows[RI].Coeffs);
      }
    }
    Built B;
    B.Col.assign(NumCols, -1);
    for (unsigned J = 0; J < NumCols; ++J)
      if (J < NumVarCols || Used[J])
        B.Col[J] = int(B.Dims++);
    // The isl matrices are dense: charge them before allocating.
    if (!S.charge(uint64_t(Selected.size()) * (B.Dims + 1)))
      return B;
    std::vector<const Row *> Eqs, Ineqs;
    for (const Row *R : Selected)
      (R->Eq ? Eqs : Ineqs).push_back(R);
    isl_ctx *Ctx = S.ctx();
    auto Matrix = [&](const std::vector<const Row *> &Rs) {
      isl_mat *M = isl_mat_alloc(Ctx, Rs.size(), B.Dims + 1);
      for (unsigned I = 0; I < Rs.size() && M; ++I)
        for (unsigned J = 0; J <= B.Dims && M; ++J)
          M = isl_mat_set_element_si(M, I, J, 0);
      for (size_t I = 0; I < Rs.size() && M; ++I) {
        const Row &R = *Rs[I];
        isl_val *C = isl_val_sub(isl_val_int_from_si(Ctx, R.K),
                                 isl_val_int_from_si(Ctx, R.Sub));
        C = isl_val_add(C, isl_val_int_from_si(Ctx, R.Adj));
        M = isl_mat_set_element_val(M, I, 0, C);
        for (size_t J = 0; J < R.Coeffs.size() && M; ++J) {
          int64_t V = R.Coeffs[J];
          if (!V)
            continue;
          assert(B.Col[J] >= 0 && "row uses a column left out");
          M = isl_mat_set_element_val(M, I, unsigned(B.Col[J]) + 1,
                                      isl_val_int_from_si(Ctx, V));
        }
      }
      return M;
    };
    isl_mat *EqM = Matrix(Eqs);
    isl_mat *InM = Matrix(Ineqs);
    B.Set =
        IslSet(isl_set_from_basic_set(isl_basic_set_from_constraint_matrices(
            isl_space_set_alloc(Ctx, 0, B.Dims), EqM, InM, isl_dim_cst,
            isl_dim_param, isl_dim_set, isl_dim_div)));
    return B;
  }

  /// build(...).Set.
  IslSet set(const std::function<bool(int)> &Keep,
             const std::vector<Row> &Extra = {}) const {
    return build(Keep, Extra).Set;
  }

  /// \p F as an isl_aff on the space of \p B (which must keep F's columns).
  IslAff aff(const Built &B, const Form &F) const {
    isl_ctx *Ctx = S.ctx();
    isl_aff *A = isl_aff_zero_on_domain(
        isl_local_space_from_space(isl_space_set_alloc(Ctx, 0, B.Dims)));
    for (size_t I = 0; I < F.C.size() && A; ++I) {
      if (!F.C[I])
        continue;
      assert(B.Col[I] >= 0 && "form uses a column left out");
      A = isl_aff_set_coefficient_val(A, isl_dim_in, B.Col[I],
                                      isl_val_int_from_si(Ctx, F.C[I]));
    }
    if (A)
      A = isl_aff_set_constant_val(A, isl_val_int_from_si(Ctx, F.K));
    return IslAff(A);
  }

  std::vector<Row> Rows;

private:
  std::optional<Form> overflow() {
    if (Error.empty())
      Error = "cannot represent exactly: a coefficient overflows int64";
    return std::nullopt;
  }
  std::optional<Form> overBudget() {
    if (Error.empty())
      Error = S.failure();
    return std::nullopt;
  }

  /// If \p N is `q + k` for a quotient column q = floor(f / b), returns
  /// `f + k*b` and sets NestedDiv to `b * Div`; nullopt otherwise (or when
  /// that would overflow: then the quotient simply gets its own column).
  std::optional<Form> unnest(const Form &N, int64_t Div) {
    std::optional<unsigned> Q;
    for (size_t I = 0; I < N.C.size(); ++I) {
      if (N.C[I] == 0)
        continue;
      if (N.C[I] != 1 || Q)
        return std::nullopt;
      Q = unsigned(I);
    }
    auto It = Q ? Definitions.find(*Q) : Definitions.end();
    if (It == Definitions.end())
      return std::nullopt;
    const auto &[F, B] = It->second;
    std::optional<int64_t> KB = checkedMul(N.K, B);
    std::optional<int64_t> K = KB ? checkedAdd(F.K, *KB) : std::nullopt;
    std::optional<int64_t> NewDiv = checkedMul(B, Div);
    if (!K || !NewDiv)
      return std::nullopt;
    Form R = F;
    R.K = *K;
    NestedDiv = *NewDiv;
    return R;
  }

  const Session &S;
  unsigned NumVarCols;
  unsigned NumCols;
  /// Quotient columns by (numerator coefficients, constant, divisor), and
  /// each quotient column's definition.
  std::map<std::tuple<std::vector<int64_t>, int64_t, int64_t>, unsigned>
      Quotients;
  std::map<unsigned, std::pair<Form, int64_t>> Definitions;
  /// The two defining rows of each quotient column.
  std::map<unsigned, std::vector<size_t>> DefRows;
  int64_t NestedDiv = 1;
};

/// One copy of a map inside a FlatSystem: its variables are the columns
/// [Offset, Offset + numVars); expressions translate to forms (memoized, so a
/// shared subexpression gets one quotient column).
class FlatMap : ExprVisitor<FlatMap, std::optional<Form>> {
  friend class ExprVisitor<FlatMap, std::optional<Form>>;

public:
  FlatMap(FlatSystem &Sys, const IndexingMap &M, unsigned Offset)
      : Sys(Sys), M(M), Offset(Offset) {}

  const IndexingMap &map() const { return M; }

  Form var(unsigned Flat) const { return Sys.column(Offset + Flat); }

  /// The form of \p E; nullopt (and Sys.Error set) if it is not quasi-affine
  /// or overflows.
  std::optional<Form> form(Expr E) {
    auto It = Memo.find(E);
    if (It != Memo.end())
      return It->second;
    // Past a few hundred nested calls (expressions built by composition
    // can be deeper than anything parsed), the operands are translated
    // bottom-up first, so that the recursion stays one level deep.
    if (Depth > 200 && E.isBinary() && !formOperandsFirst(E))
      return std::nullopt;
    ++Depth;
    std::optional<Form> F = visit(E);
    --Depth;
    if (F)
      Memo.emplace(E, *F);
    return F;
  }

  /// Bound rows of every variable, with \p Tag.
  void addBounds(int Tag) {
    if (M.isKnownEmpty()) {
      Row R; // 0 >= 1
      R.K = -1;
      R.Tag = Tag;
      Sys.Rows.push_back(R);
    }
    // Every build that keeps these rows (two per variable) is a dense
    // matrix at least one column per variable wide: a map too big for the
    // budget fails here, before its forms are allocated.
    uint64_t MinCells = 0;
    if (__builtin_mul_overflow(2 * uint64_t(M.numVars()),
                               uint64_t(Sys.numVarCols()) + 1, &MinCells) ||
        !Sys.session().fits(MinCells))
      return;
    for (unsigned V = 0; V < M.numVars() && !Sys.session().overBudget(); ++V)
      Sys.require(var(V), M.var(V).Bound, Tag);
  }

  /// Rows of constraint \p I, with \p Tag; false if it does not translate.
  bool addConstraint(size_t I, int Tag) {
    if (Sys.session().overBudget()) {
      Sys.Error = Sys.session().failure();
      return false;
    }
    const Constraint &C = M.constraints()[I];
    std::optional<Form> F = form(C.E);
    return F && Sys.require(*F, C.I, Tag);
  }

  /// The whole domain with \p Tag; false if a constraint does not translate.
  bool addDomain(int Tag) {
    addBounds(Tag);
    for (size_t I = 0; I < M.constraints().size(); ++I)
      if (!addConstraint(I, Tag))
        return false;
    if (Sys.session().overBudget()) {
      Sys.Error = Sys.session().failure();
      return false;
    }
    return true;
  }

private:
  /// Translates the operands of \p E bottom-up without recursion (sums are
  /// passed through: visitAdd() flattens them). False if one fails.
  bool formOperandsFirst(Expr E) {
    return visitOperandsPostOrder(
        E, [&](Expr N) { return Memo.count(N) != 0; },
        [&](Expr N) { return form(N).has_value(); });
  }

  std::optional<Form> fail(Expr E, const std::string &What) {
    if (Sys.Error.empty())
      Sys.Error = "cannot represent exactly: " + What + " in '" +
                  printExpr(E, &M) + "'";
    return std::nullopt;
  }

  std::optional<Form> visitConstant(Expr E) {
    return FlatSystem::constant(E.value());
  }

  std::optional<Form> visitDim(Expr E) {
    if (E.position() >= M.numDims())
      return fail(E, "a dim the map does not have");
    return var(E.position());
  }

  std::optional<Form> visitSymbol(Expr E) {
    if (E.position() >= M.numSymbols())
      return fail(E, "a symbol the map does not have");
    return var(M.numDims() + E.position());
  }

  std::optional<Form> visitAdd(Expr E) {
    // The summands left to right into one accumulator, with a worklist:
    // a sum of N terms is a tree N deep.
    std::optional<Form> Acc = FlatSystem::constant(0);
    std::vector<Expr> Work{E.rhs(), E.lhs()};
    while (!Work.empty() && Acc) {
      Expr N = Work.back();
      Work.pop_back();
      if (N.kind() == ExprKind::Add && !Memo.count(N)) {
        Work.push_back(N.rhs());
        Work.push_back(N.lhs());
        continue;
      }
      std::optional<Form> F = form(N);
      Acc = F ? Sys.add(*Acc, *F) : std::nullopt;
    }
    return Acc;
  }

  std::optional<Form> visitMul(Expr E) {
    std::optional<Form> L = form(E.lhs());
    std::optional<Form> R = L ? form(E.rhs()) : std::nullopt;
    if (!L || !R)
      return std::nullopt;
    if (R->isConstant())
      return Sys.scale(*L, R->K);
    if (L->isConstant())
      return Sys.scale(*R, L->K);
    return fail(E, "a product of two non-constant expressions");
  }

  std::optional<Form> visitBinary(Expr E) {
    std::optional<Form> L = form(E.lhs());
    std::optional<Form> R = L ? form(E.rhs()) : std::nullopt;
    if (!L || !R)
      return std::nullopt;
    if (!R->isConstant())
      return fail(E, "a symbolic divisor");
    int64_t D = R->K;
    if (D == 0)
      return fail(E, "a division by zero");
    if (E.kind() == ExprKind::FloorDiv)
      return Sys.floorDiv(*L, D);
    if (E.kind() == ExprKind::CeilDiv) {
      // ceil(a / d) = -floor(-a / d).
      std::optional<Form> NegL = Sys.scale(*L, -1);
      std::optional<Form> Q = NegL ? Sys.floorDiv(*NegL, D) : std::nullopt;
      return Q ? Sys.scale(*Q, -1) : std::nullopt;
    }
    // a mod d = a - floor(a / d) * d.
    std::optional<Form> Q = Sys.floorDiv(*L, D);
    std::optional<Form> QD = Q ? Sys.scale(*Q, D) : std::nullopt;
    return QD ? Sys.sub(*L, *QD) : std::nullopt;
  }

  FlatSystem &Sys;
  const IndexingMap &M;
  unsigned Offset;
  std::unordered_map<Expr, Form> Memo;
  /// Nesting of form() calls.
  unsigned Depth = 0;
};

} // namespace islbridge
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_MAP_ISLFLAT_H
