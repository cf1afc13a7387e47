//===- IslBridge.cpp - Exact domain reasoning through isl -----------------===//
//
// Part of idxmap. With IslSession.h, IslFlat.h and IslPrint.cpp, the only
// code that talks to isl (C API). Every public query of idxmap/Exact.h opens
// its own isl context (cheap: well under a microsecond), sets the error mode
// to "continue" and the operation budget, builds isl objects straight from
// the Expr trees (no text round trip) and frees every object before the
// context. Any isl failure (budget, internal error) turns into Unknown with
// a reason; nothing isl-typed leaves these files.
//
// Translation (FlatSystem, FlatMap). A map with N = dims + range vars +
// runtime vars variables becomes N integer columns; every Expr becomes an
// affine form over them plus one integer column per distinct quotient:
// `a floordiv c` is a column q with c*q <= a <= c*q + c - 1 (c > 0; a
// negative c negates both), `a ceildiv c` is -floor(-a / c), `a mod c` is
// a - floor(a / c) * c (MLIR semantics for either sign); a product needs one
// constant factor and divisors must be non-zero constants, else the answer
// is Unknown with the reason. Nested quotients are normalized first, so that
// the usual delinearization chains share columns. Each question becomes a
// handful of emptiness or optimization problems on one basic set; the two
// that need a projection (equality with range variables, coverage of a box)
// project columns out of the same system.
//
// Files: IslSession.h (owning handles, the watchdog, the per-query Session,
// witnesses), IslFlat.h (FlatSystem/FlatMap), IslPrint.cpp (toIslString,
// through isl's own divs), and here the query bodies and the public API.
//
//===----------------------------------------------------------------------===//

#include "IslFlat.h"

#include "idxmap/Exact.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

namespace idxmap {
namespace {

using namespace islbridge;

//===----------------------------------------------------------------------===//
// Query bodies
//===----------------------------------------------------------------------===//

/// Exact min (\p Max false) or max of \p A over \p D. nullopt with the
/// explanation set on failure; \p Empty is set when D has no point.
std::optional<int64_t> optimum(const Session &S, isl_set *D, isl_aff *A,
                               bool Max, bool &Empty) {
  if (!D || !A)
    return S.fail(std::optional<int64_t>());
  IslVal V(Max ? isl_set_max_val(D, A) : isl_set_min_val(D, A));
  if (!V)
    return S.fail(std::optional<int64_t>());
  if (isl_val_is_nan(V.get()) == isl_bool_true) {
    Empty = true;
    return 0;
  }
  std::optional<int64_t> R = clampedInt(V.get());
  if (!R)
    S.explain("isl returned a non-integer optimum");
  return R;
}

/// Exact bounds of \p F over the set \p B of \p Sys (which keeps F's
/// columns): an empty interval if it is empty, nullopt (explanation set) if
/// undecided.
std::optional<Interval> boundsOver(const Session &S, const FlatSystem &Sys,
                                   const FlatSystem::Built &B, const Form &F) {
  IslAff A = Sys.aff(B, F);
  const IslSet &D = B.Set;
  bool Empty = false;
  std::optional<int64_t> Lo = optimum(S, D.get(), A.get(), false, Empty);
  if (!Lo)
    return std::nullopt;
  if (Empty)
    return Interval::empty();
  std::optional<int64_t> Hi = optimum(S, D.get(), A.get(), true, Empty);
  if (!Hi)
    return std::nullopt;
  if (Empty)
    return Interval::empty();
  return Interval(*Lo, *Hi);
}

/// Tri-state emptiness of \p D; on NonEmpty, \p Witness (if given) gets a
/// point's first columns.
Emptiness emptiness(const Session &S, IslSet D,
                    std::vector<int64_t> *Witness = nullptr) {
  if (!D)
    return S.fail(Emptiness::Unknown);
  isl_bool Empty = isl_set_is_empty(D.get());
  if (Empty == isl_bool_error)
    return S.fail(Emptiness::Unknown);
  if (Empty == isl_bool_true)
    return Emptiness::Empty;
  if (Witness && S.wantsExplanation())
    *Witness = samplePoint(D.release()).value_or(std::vector<int64_t>());
  return Emptiness::NonEmpty;
}

using TagFilter = std::function<bool(int)>;

/// Whether `F in I` holds on the rows \p Keep selects: two emptiness tests,
/// `F < I.Lo` and `F > I.Hi`. On `No`, \p Witness (if given) receives a
/// violating point (all columns). On Unknown, the explanation is set.
Answer holdsOn(const Session &S, FlatSystem &Sys, const TagFilter &Keep,
               const std::optional<Form> &F, Interval I,
               std::vector<int64_t> *Witness) {
  if (!F) {
    S.explain(Sys.Error);
    return Answer::Unknown;
  }
  for (bool Below : {true, false}) {
    std::vector<Row> Extra;
    if (Below) {
      if (!Sys.addUpper(*F, I.Lo, -1, 0, Extra)) {
        S.explain(Sys.Error);
        return Answer::Unknown;
      }
    } else {
      Sys.addLower(*F, I.Hi, 1, 0, Extra);
    }
    switch (emptiness(S, Sys.set(Keep, Extra), Witness)) {
    case Emptiness::Unknown:
      return Answer::Unknown;
    case Emptiness::NonEmpty:
      return Answer::No;
    case Emptiness::Empty:
      break;
    }
  }
  return Answer::Yes;
}

/// Whether every point of the rows \p Keep selects lies in the domain of the
/// map of \p FM (its bounds and constraints, translated into the same
/// system). When those rows are the domain of \p Inner, a map over the same
/// variables, the bounds and constraints that \p Inner itself has (or
/// tighter) need no test.
Answer domainContains(const Session &S, FlatSystem &Sys, const TagFilter &Keep,
                      FlatMap &FM, const IndexingMap *Inner,
                      std::vector<int64_t> *Witness) {
  const IndexingMap &M = FM.map();
  if (M.isKnownEmpty()) {
    switch (emptiness(S, Sys.set(Keep), Witness)) {
    case Emptiness::Empty:
      return Answer::Yes;
    case Emptiness::NonEmpty:
      return Answer::No;
    case Emptiness::Unknown:
      return Answer::Unknown;
    }
  }
  auto Implied = [&](const Constraint &C) {
    if (!Inner || Inner->isKnownEmpty())
      return false;
    for (const Constraint &IC : Inner->constraints())
      if (IC.E == C.E && C.I.contains(IC.I))
        return true;
    return false;
  };
  bool Unknown = false;
  for (unsigned V = 0; V < M.numVars() && !S.overBudget(); ++V) {
    if (Inner && !Inner->isKnownEmpty() &&
        M.var(V).Bound.contains(Inner->var(V).Bound))
      continue;
    Answer A = holdsOn(S, Sys, Keep, FM.var(V), M.var(V).Bound, Witness);
    if (A == Answer::No)
      return A;
    Unknown |= A == Answer::Unknown;
  }
  for (const Constraint &C : M.constraints()) {
    if (S.overBudget())
      return S.fail(Answer::Unknown);
    if (Implied(C))
      continue;
    Answer A = holdsOn(S, Sys, Keep, FM.form(C.E), C.I, Witness);
    if (A == Answer::No)
      return A;
    Unknown |= A == Answer::Unknown;
  }
  return Unknown ? Answer::Unknown : Answer::Yes;
}

bool anyTag(int) { return true; }

/// Whether no two distinct points of \p M's domain with the same runtime
/// values give the same results. Works on pairs (x, y) in one system with
/// two copies of the map: the pairs with equal results and equal runtime
/// values are one conjunction, and x != y splits into "x and y agree on the
/// first K variables and x_K < y_K" for each K, so the question is a few
/// emptiness tests (no projection, no set difference). \p What names the
/// image in the explanation ("map to", "touch element").
Answer injectiveByPairs(const Session &S, const IndexingMap &M,
                        const char *What) {
  unsigned N = M.numVars();
  unsigned FirstRt = M.numDims() + M.numRangeVars();
  FlatSystem Sys(S, 2 * N);
  FlatMap FX(Sys, M, 0), FY(Sys, M, N);
  bool Ok = FX.addDomain(1) && FY.addDomain(1);
  for (unsigned I = 0; I < M.numResults() && Ok; ++I) {
    std::optional<Form> RX = FX.form(M.result(I));
    std::optional<Form> RY = RX ? FY.form(M.result(I)) : std::nullopt;
    std::optional<Form> D = RY ? Sys.sub(*RX, *RY) : std::nullopt;
    Ok = D.has_value();
    if (Ok)
      Sys.requireZero(*D, 1);
  }
  for (unsigned V = FirstRt; V < N && Ok; ++V)
    Sys.requireZero(*Sys.sub(FX.var(V), FY.var(V)), 1);
  if (!Ok) {
    S.explain(Sys.Error);
    return Answer::Unknown;
  }
  for (unsigned K = 0; K < FirstRt; ++K) {
    std::vector<Row> Less; // y_K - x_K - 1 >= 0
    Sys.addLower(*Sys.sub(FY.var(K), FX.var(K)), 0, 1, 0, Less);
    std::vector<int64_t> P;
    switch (emptiness(S, Sys.set(anyTag, Less), &P)) {
    case Emptiness::Unknown:
      return Answer::Unknown;
    case Emptiness::Empty:
      Sys.requireZero(*Sys.sub(FY.var(K), FX.var(K)), 1);
      continue;
    case Emptiness::NonEmpty:
      break;
    }
    if (P.size() >= 2 * N) {
      std::vector<unsigned> All = iota(0, N);
      std::vector<int64_t> X(P.begin(), P.begin() + N);
      std::string Img = "the same results";
      if (std::optional<std::vector<int64_t>> V = M.evaluate(X))
        Img = formatTuple(*V, 0, V->size());
      S.explain(formatVars(M, P, All) + " and " + formatVars(M, P, All, N) +
                " both " + What + " " + Img);
    } else {
      S.explain("two distinct points have the same results");
    }
    return Answer::No;
  }
  return Answer::Yes;
}

/// Pointwise equality of two maps of the same shape, by emptiness tests in
/// one system over their shared variables: each domain satisfies the other's
/// bounds and constraints, and every result difference is zero on the
/// (common) domain.
Answer pointwiseEqual(const Session &S, const IndexingMap &A,
                      const IndexingMap &B) {
  unsigned N = A.numVars();
  FlatSystem Sys(S, N);
  FlatMap FA(Sys, A, 0), FB(Sys, B, 0);
  if (!FA.addDomain(1) || !FB.addDomain(2)) {
    S.explain(Sys.Error);
    return Answer::Unknown;
  }
  auto InA = [](int Tag) { return Tag == 1; };
  auto InB = [](int Tag) { return Tag == 2; };
  std::vector<unsigned> All = iota(0, N);
  std::vector<int64_t> W;
  bool Unknown = false;
  for (int Side = 0; Side < 2; ++Side) {
    Answer R = Side ? domainContains(S, Sys, InB, FA, &B, &W)
                    : domainContains(S, Sys, InA, FB, &A, &W);
    if (R == Answer::No) {
      if (W.size() >= N)
        S.explain(formatVars(Side ? B : A, W, All) + " is in the domain of " +
                  (Side ? "the second" : "the first") + " map but not of the " +
                  (Side ? "first" : "second"));
      return R;
    }
    Unknown |= R == Answer::Unknown;
  }
  for (unsigned I = 0; I < A.numResults(); ++I) {
    if (A.result(I) == B.result(I))
      continue;
    std::optional<Form> RA = FA.form(A.result(I));
    std::optional<Form> RB = RA ? FB.form(B.result(I)) : std::nullopt;
    std::optional<Form> Diff = RB ? Sys.sub(*RA, *RB) : std::nullopt;
    Answer R = holdsOn(S, Sys, InA, Diff, Interval::point(0), &W);
    if (R == Answer::No) {
      if (W.size() >= N) {
        std::vector<int64_t> P(W.begin(), W.begin() + N);
        std::string VA = "?", VB = "?";
        if (auto V = A.evaluate(P))
          VA = formatTuple(*V, 0, V->size());
        if (auto V = B.evaluate(P))
          VB = formatTuple(*V, 0, V->size());
        S.explain("at " + formatVars(A, P, All) + " the results differ: " + VA +
                  " vs " + VB);
      }
      return R;
    }
    Unknown |= R == Answer::Unknown;
  }
  return Unknown ? Answer::Unknown : Answer::Yes;
}

/// The projection of the rows of \p Sys (all tags) onto the values of
/// \p Outs: one new column per form with `o_i = Outs[i]`, every other
/// column projected out (isl recognizes the quotients' defining rows as
/// integer divisions; other variables become existentially quantified).
IslSet projectTo(FlatSystem &Sys, const std::vector<Form> &Outs) {
  for (const Form &F : Outs) {
    std::optional<Form> D = Sys.sub(Sys.column(Sys.newColumn()), F);
    if (!D)
      return IslSet(); // a coefficient overflows: Error says so
    Sys.requireZero(*D, 1);
  }
  // The output columns are the last ones, and every one is used.
  FlatSystem::Built B = Sys.build(anyTag);
  unsigned Before = B.Dims - unsigned(Outs.size());
  return IslSet(isl_set_project_out(B.Set.release(), isl_dim_set, 0, Before));
}

/// Forms of \p M's results (0 for a KNOWN EMPTY map), or nullopt.
std::optional<std::vector<Form>> resultForms(FlatMap &FM) {
  const IndexingMap &M = FM.map();
  std::vector<Form> Results;
  for (unsigned I = 0; I < M.numResults(); ++I) {
    std::optional<Form> F =
        M.isKnownEmpty() ? FlatSystem::constant(0) : FM.form(M.result(I));
    if (!F)
      return std::nullopt;
    Results.push_back(*F);
  }
  return Results;
}

/// The relation of \p M as seen by areEqual: inputs [dims, runtime vars],
/// outputs the results, range variables existentially quantified.
IslMap projectedRelation(const Session &S, const IndexingMap &M,
                         std::string &Error) {
  FlatSystem Sys(S, M.numVars());
  FlatMap FM(Sys, M, 0);
  std::optional<std::vector<Form>> Results =
      FM.addDomain(1) ? resultForms(FM) : std::nullopt;
  if (!Results) {
    Error = Sys.Error;
    return IslMap();
  }
  std::vector<Form> Outs;
  unsigned FirstRt = M.numDims() + M.numRangeVars();
  for (unsigned V = 0; V < M.numVars(); ++V)
    if (V < M.numDims() || V >= FirstRt)
      Outs.push_back(FM.var(V));
  unsigned NumIn = unsigned(Outs.size());
  Outs.insert(Outs.end(), Results->begin(), Results->end());
  IslMap R(isl_map_from_range(projectTo(Sys, Outs).release()));
  R.reset(isl_map_move_dims(R.release(), isl_dim_in, 0, isl_dim_out, 0, NumIn));
  if (!R)
    Error = S.failure();
  return R;
}

/// Compares two relations of equal spaces; on `No` explains with a pair that
/// one has and the other lacks. \p InNames name the inputs of each map.
Answer compareRelations(const Session &S, IslMap A, IslMap B,
                        const IndexingMap &MA, const IndexingMap &MB,
                        const std::vector<unsigned> &InA,
                        const std::vector<unsigned> &InB) {
  if (!A || !B)
    return S.fail(Answer::Unknown);
  isl_bool Eq = isl_map_is_equal(A.get(), B.get());
  if (Eq == isl_bool_error)
    return S.fail(Answer::Unknown);
  if (Eq == isl_bool_true)
    return Answer::Yes;
  if (S.wantsExplanation()) {
    for (int Side = 0; Side < 2; ++Side) {
      const IslMap &X = Side ? B : A;
      const IslMap &Y = Side ? A : B;
      std::optional<std::vector<int64_t>> P =
          samplePoint(isl_map_wrap(isl_map_subtract(X.copy(), Y.copy())));
      if (!P)
        continue;
      const IndexingMap &MX = Side ? MB : MA;
      const std::vector<unsigned> &In = Side ? InB : InA;
      S.explain(formatVars(MX, *P, In) + " -> " +
                formatTuple(*P, In.size(), P->size()) + " is in " +
                (Side ? "the second" : "the first") + " map but not in the " +
                (Side ? "first" : "second"));
      return Answer::No;
    }
    S.explain("the relations differ");
  }
  return Answer::No;
}

/// Sorts constraint indices deterministically (structure, then interval).
std::vector<size_t> constraintOrder(const std::vector<Constraint> &Cs) {
  std::vector<size_t> Order(Cs.size());
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
    int C = compareStructurally(Cs[A].E, Cs[B].E);
    if (C != 0)
      return C < 0;
    if (Cs[A].I.Lo != Cs[B].I.Lo)
      return Cs[A].I.Lo < Cs[B].I.Lo;
    return Cs[A].I.Hi < Cs[B].I.Hi;
  });
  return Order;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

const char *answerName(Answer A) {
  switch (A) {
  case Answer::Yes:
    return "yes";
  case Answer::No:
    return "no";
  case Answer::Unknown:
    return "unknown";
  }
  return "unknown";
}

const char *emptinessName(Emptiness E) {
  switch (E) {
  case Emptiness::Empty:
    return "empty";
  case Emptiness::NonEmpty:
    return "non-empty";
  case Emptiness::Unknown:
    return "unknown";
  }
  return "unknown";
}

namespace {

/// Exact emptiness of a defined map's domain in session \p S.
/// True if a corner or the middle of \p Map's bounds box lies in its domain
/// (evaluated in checked int64 arithmetic, so the point is in the domain
/// for isl too). Linear in the map's size: it spares isl the easy cases of
/// big maps (a 1,000-variable box took isl past its time limit).
bool hasCornerWitness(const IndexingMap &Map) {
  std::vector<int64_t> P(Map.numVars());
  for (unsigned Choice = 0; Choice < 3; ++Choice) {
    for (unsigned V = 0; V < Map.numVars(); ++V) {
      const Interval &B = Map.var(V).Bound;
      if (B.isEmpty())
        return false;
      __int128 Mid = (static_cast<__int128>(B.Lo) + B.Hi) / 2;
      P[V] = Choice == 0 ? B.Lo : Choice == 1 ? B.Hi : int64_t(Mid);
    }
    if (Map.contains(P))
      return true;
  }
  return false;
}

Emptiness domainEmptiness(const Session &S, const IndexingMap &Map) {
  if (Map.isKnownEmpty())
    return Emptiness::Empty;
  if (!S.ok())
    return S.fail(Emptiness::Unknown);
  if (hasCornerWitness(Map))
    return Emptiness::NonEmpty;
  FlatSystem Sys(S, Map.numVars());
  FlatMap FM(Sys, Map, 0);
  if (!FM.addDomain(1)) {
    S.explain(Sys.Error);
    return Emptiness::Unknown;
  }
  return emptiness(S, Sys.set(anyTag));
}

/// Equality when one map is KNOWN EMPTY: the empty relation equals exactly
/// the maps whose domain is empty, whatever their shapes (text `KNOWN EMPTY`
/// has lost its numbers of variables and results).
Answer equalToKnownEmpty(const Session &S, const IndexingMap &Other) {
  switch (domainEmptiness(S, Other)) {
  case Emptiness::Empty:
    return Answer::Yes;
  case Emptiness::NonEmpty:
    S.explain("one map is KNOWN EMPTY, the other's domain is not empty");
    return Answer::No;
  case Emptiness::Unknown:
    break;
  }
  return Answer::Unknown;
}

} // namespace

Emptiness isEmptyExact(const IndexingMap &Map, const ExactOptions &Options) {
  Session S(Options);
  if (Map.isUndefined()) {
    S.explain("the map is UNDEFINED");
    return Emptiness::Unknown;
  }
  return domainEmptiness(S, Map);
}

std::optional<Interval> boundsExact(Expr E, const IndexingMap &Map,
                                    const ExactOptions &Options) {
  Session S(Options);
  if (Map.isUndefined()) {
    S.explain("the map is UNDEFINED");
    return std::nullopt;
  }
  if (Map.isKnownEmpty())
    return Interval::empty();
  if (!S.ok())
    return S.fail(std::optional<Interval>());
  FlatSystem Sys(S, Map.numVars());
  FlatMap FM(Sys, Map, 0);
  std::optional<Form> F = FM.form(E);
  if (!F || !FM.addDomain(1)) {
    S.explain(Sys.Error);
    return std::nullopt;
  }
  return boundsOver(S, Sys, Sys.build(anyTag, {}, {&*F}), *F);
}

namespace {

/// refineExact, step 1: emptiness and exact variable bounds. Returns false
/// if the map became KNOWN EMPTY or nothing could be decided.
bool tightenBounds(const Session &S, IndexingMap &Map, bool &Changed) {
  FlatSystem Sys(S, Map.numVars());
  FlatMap FM(Sys, Map, 0);
  FM.addBounds(1);
  // Constraints that do not translate are left out: the others still give
  // sound bounds (the domain lies within them) and a sound emptiness proof.
  std::string Skipped;
  for (size_t I = 0; I < Map.constraints().size(); ++I) {
    if (!FM.addConstraint(I, 1) && Skipped.empty())
      Skipped = Sys.Error;
    Sys.Error.clear();
  }
  S.explain(Skipped);
  FlatSystem::Built D = Sys.build(anyTag);
  switch (emptiness(S, IslSet(D.Set.copy()))) {
  case Emptiness::Unknown:
    return false;
  case Emptiness::Empty:
    Map.markKnownEmpty();
    Changed = true;
    return false;
  case Emptiness::NonEmpty:
    break;
  }
  // The new bound holds at every domain point, so the point set is unchanged.
  std::vector<Interval> NewBounds;
  for (unsigned V = 0; V < Map.numVars(); ++V) {
    Interval Old = Map.var(V).Bound;
    std::optional<Interval> B = boundsOver(S, Sys, D, FM.var(V));
    NewBounds.push_back(B && !B->isEmpty() ? Old.intersect(*B) : Old);
  }
  for (unsigned V = 0; V < Map.numVars(); ++V) {
    if (Map.var(V).Bound != NewBounds[V]) {
      Map.var(V).Bound = NewBounds[V];
      Changed = true;
    }
  }
  return true;
}

/// refineExact, step 2: drops each constraint that the bounds and the other
/// remaining constraints imply (in a deterministic order).
void dropImpliedConstraints(const Session &S, IndexingMap &Map, bool &Changed) {
  const std::vector<Constraint> &Cs = Map.constraints();
  FlatSystem Sys(S, Map.numVars());
  FlatMap FM(Sys, Map, 0);
  FM.addBounds(1);
  std::vector<bool> Keep(Cs.size(), true);
  std::vector<std::optional<Form>> Forms;
  for (size_t I = 0; I < Cs.size(); ++I) {
    // A constraint that does not translate stays, and is never used to
    // prove another one implied (its tag is left out of every test).
    Forms.push_back(FM.form(Cs[I].E));
    if (Forms.back() && !Sys.require(*Forms.back(), Cs[I].I, int(2 + I)))
      Forms.back().reset(); // a missing row: never used, never removed
  }
  for (size_t Idx : constraintOrder(Cs)) {
    if (!Forms[Idx])
      continue;
    TagFilter Rest = [&](int Tag) {
      if (Tag == 1)
        return true;
      size_t I = size_t(Tag - 2);
      return I != Idx && Keep[I] && Forms[I].has_value();
    };
    if (holdsOn(S, Sys, Rest, Forms[Idx], Cs[Idx].I, nullptr) == Answer::Yes)
      Keep[Idx] = false;
  }
  std::vector<Constraint> Kept;
  for (size_t I = 0; I < Cs.size(); ++I)
    if (Keep[I])
      Kept.push_back(Cs[I]);
  if (Kept.size() != Cs.size()) {
    Map.setConstraints(std::move(Kept));
    Changed = true;
  }
}

} // namespace

bool refineExact(IndexingMap &Map, const ExactOptions &Options) {
  if (Map.isUndefined() || Map.isKnownEmpty())
    return false;
  Session S(Options);
  if (!S.ok())
    return S.fail(false);
  bool Changed = false;
  if (tightenBounds(S, Map, Changed))
    dropImpliedConstraints(S, Map, Changed);
  return Changed;
}

bool simplifyExact(IndexingMap &Map, const ExactOptions &Options,
                   const SimplifyOptions &Tier1) {
  bool Changed = simplify(Map, Tier1);
  if (refineExact(Map, Options)) {
    Changed = true;
    simplify(Map, Tier1);
  }
  return Changed;
}

Answer isInjective(const IndexingMap &Map, const ExactOptions &Options) {
  Session S(Options);
  if (Map.isUndefined()) {
    S.explain("the map is UNDEFINED");
    return Answer::Unknown;
  }
  if (Map.isKnownEmpty())
    return Answer::Yes;
  if (!S.ok())
    return S.fail(Answer::Unknown);
  return injectiveByPairs(S, Map, "map to");
}

Answer isBijectiveOnto(const IndexingMap &Map,
                       const std::vector<int64_t> &Shape,
                       const ExactOptions &Options) {
  Session S(Options);
  if (Map.isUndefined()) {
    S.explain("the map is UNDEFINED");
    return Answer::Unknown;
  }
  if (Shape.size() != Map.numResults()) {
    S.explain("the shape has " + std::to_string(Shape.size()) +
              " sizes but the map has " + std::to_string(Map.numResults()) +
              " results");
    return Answer::Unknown;
  }
  for (int64_t Size : Shape) {
    if (Size < 0) {
      S.explain("negative size " + std::to_string(Size) + " in the shape");
      return Answer::Unknown;
    }
  }
  if (!S.ok())
    return S.fail(Answer::Unknown);
  unsigned NumRes = Map.numResults();
  std::vector<unsigned> All = iota(0, Map.numVars());
  // 1. Nothing outside the box: 0 <= result_i < Shape[i] on the domain.
  {
    FlatSystem Sys(S, Map.numVars());
    FlatMap FM(Sys, Map, 0);
    if (!FM.addDomain(1)) {
      S.explain(Sys.Error);
      return Answer::Unknown;
    }
    for (unsigned I = 0; I < NumRes; ++I) {
      std::vector<int64_t> W;
      Answer A = holdsOn(S, Sys, anyTag, FM.form(Map.result(I)),
                         Interval(0, Shape[I] - 1), &W);
      if (A == Answer::Unknown)
        return A;
      if (A == Answer::No) {
        if (W.size() >= Map.numVars()) {
          W.resize(Map.numVars());
          std::string Img = "(?)";
          if (auto V = Map.evaluate(W))
            Img = formatTuple(*V, 0, V->size());
          S.explain(formatVars(Map, W, All) + " touches element " + Img +
                    " outside the box");
        }
        return A;
      }
    }
  }
  // 2. No element touched twice (for each runtime value).
  Answer Injective = injectiveByPairs(S, Map, "touch element");
  if (Injective != Answer::Yes)
    return Injective;
  // 3. Every element of the box touched, for every runtime value of the
  // context: box x context minus the image [results, runtime vars] is empty.
  // The only step that needs a projection.
  unsigned FirstRt = Map.numDims() + Map.numRangeVars();
  FlatSystem ImgSys(S, Map.numVars());
  FlatMap ImgMap(ImgSys, Map, 0);
  std::optional<std::vector<Form>> Outs =
      ImgMap.addDomain(1) ? resultForms(ImgMap) : std::nullopt;
  if (!Outs) {
    S.explain(ImgSys.Error);
    return Answer::Unknown;
  }
  for (unsigned V = FirstRt; V < Map.numVars(); ++V)
    Outs->push_back(ImgMap.var(V));
  IslSet Image = projectTo(ImgSys, *Outs);
  // The context: runtime bounds and runtime-only constraints.
  FlatSystem CtxSys(S, Map.numVars());
  FlatMap CtxMap(CtxSys, Map, 0);
  std::vector<Form> RtVars;
  for (unsigned V = FirstRt; V < Map.numVars(); ++V) {
    CtxSys.require(CtxMap.var(V), Map.var(V).Bound, 1);
    RtVars.push_back(CtxMap.var(V));
  }
  for (size_t I = 0; I < Map.constraints().size(); ++I) {
    bool OnlyRt = true;
    Map.constraints()[I].E.walkVariables([&](Expr V) {
      OnlyRt = OnlyRt && V.isSymbol() && V.position() >= Map.numRangeVars();
    });
    if (OnlyRt && !CtxMap.addConstraint(I, 1)) {
      S.explain(CtxSys.Error);
      return Answer::Unknown;
    }
  }
  IslSet Ctx = projectTo(CtxSys, RtVars);
  IslSet Box(isl_set_universe(isl_space_set_alloc(S.ctx(), 0, NumRes)));
  for (unsigned I = 0; I < NumRes && Box; ++I) {
    // isl_set_*_bound_si take an int: sizes past 2^31 go through isl_val.
    Box.reset(isl_set_lower_bound_val(Box.release(), isl_dim_set, I,
                                      isl_val_zero(S.ctx())));
    Box.reset(
        isl_set_upper_bound_val(Box.release(), isl_dim_set, I,
                                isl_val_int_from_si(S.ctx(), Shape[I] - 1)));
  }
  IslSet Missed(isl_set_subtract(
      isl_set_flat_product(Box.release(), Ctx.release()), Image.release()));
  if (!Missed)
    return S.fail(Answer::Unknown);
  isl_bool NoneMissed = isl_set_is_empty(Missed.get());
  if (NoneMissed == isl_bool_error)
    return S.fail(Answer::Unknown);
  if (NoneMissed == isl_bool_true)
    return Answer::Yes;
  if (S.wantsExplanation()) {
    if (auto P = samplePoint(Missed.release())) {
      std::string Rt;
      if (Map.numRuntimeVars())
        Rt = " for " +
             formatVars(Map, *P,
                        iota(Map.numDims() + Map.numRangeVars(), Map.numVars()),
                        NumRes);
      S.explain("element " + formatTuple(*P, 0, NumRes) + " is never touched" +
                Rt);
    }
  }
  return Answer::No;
}

Answer areEqual(const IndexingMap &A, const IndexingMap &B,
                const ExactOptions &Options) {
  Session S(Options);
  if (A.isUndefined() || B.isUndefined()) {
    S.explain("a map is UNDEFINED");
    return Answer::Unknown;
  }
  if (A.isKnownEmpty() || B.isKnownEmpty())
    return equalToKnownEmpty(S, A.isKnownEmpty() ? B : A);
  if (A.numDims() != B.numDims() || A.numRuntimeVars() != B.numRuntimeVars() ||
      A.numResults() != B.numResults()) {
    S.explain("the maps differ in their numbers of dims, runtime variables "
              "or results");
    return Answer::No;
  }
  if (!S.ok())
    return S.fail(Answer::Unknown);
  // Without range variables, relation and pointwise equality coincide, and
  // the pointwise test needs no projection.
  if (A.numRangeVars() == 0 && B.numRangeVars() == 0)
    return pointwiseEqual(S, A, B);
  // Pointwise equality implies equality as relations and is much cheaper
  // than the projection below: try it first when the variables match.
  if (A.numRangeVars() == B.numRangeVars()) {
    if (pointwiseEqual(S, A, B) == Answer::Yes)
      return Answer::Yes;
    S.explain(""); // a pointwise witness says nothing about the relations
  }
  std::string Why;
  IslMap RA = projectedRelation(S, A, Why);
  IslMap RB = RA ? projectedRelation(S, B, Why) : IslMap();
  if (!RA || !RB) {
    S.explain(Why.empty() ? S.failure() : Why);
    return Answer::Unknown;
  }
  std::vector<unsigned> InA = iota(0, A.numDims());
  for (unsigned I = 0; I < A.numRuntimeVars(); ++I)
    InA.push_back(A.numDims() + A.numRangeVars() + I);
  std::vector<unsigned> InB = iota(0, B.numDims());
  for (unsigned I = 0; I < B.numRuntimeVars(); ++I)
    InB.push_back(B.numDims() + B.numRangeVars() + I);
  return compareRelations(S, std::move(RA), std::move(RB), A, B, InA, InB);
}

Answer arePointwiseEqual(const IndexingMap &A, const IndexingMap &B,
                         const ExactOptions &Options) {
  Session S(Options);
  if (A.isUndefined() || B.isUndefined()) {
    S.explain("a map is UNDEFINED");
    return Answer::Unknown;
  }
  if (A.isKnownEmpty() || B.isKnownEmpty())
    return equalToKnownEmpty(S, A.isKnownEmpty() ? B : A);
  if (A.numDims() != B.numDims() || A.numRangeVars() != B.numRangeVars() ||
      A.numRuntimeVars() != B.numRuntimeVars() ||
      A.numResults() != B.numResults()) {
    S.explain("the maps differ in their numbers of variables or results");
    return Answer::No;
  }
  if (!S.ok())
    return S.fail(Answer::Unknown);
  return pointwiseEqual(S, A, B);
}

} // namespace idxmap
