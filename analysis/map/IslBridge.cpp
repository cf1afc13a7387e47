//===- IslBridge.cpp - Exact domain reasoning through isl -----------------===//
//
// Part of idxmap. The only file that talks to isl (C API). Every public query
// of idxmap/Exact.h opens its own isl context (cheap: well under a
// microsecond), sets the error mode to "continue" and the operation budget,
// builds isl objects straight from the Expr trees (no text round trip) and
// frees every object before the context. Any isl failure (budget, internal
// error) turns into Unknown with a reason; nothing isl-typed leaves this file.
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
// File layout: owning handles, the watchdog (time limit), the per-query
// Session, Translator (isl divs, for printing only), FlatSystem/FlatMap,
// witnesses, query bodies, the public API.
//
//===----------------------------------------------------------------------===//

#include "idxmap/Exact.h"
#include "idxmap/ExprVisitor.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

#include <isl/aff.h>
#include <isl/ctx.h>
#include <isl/ilp.h>
#include <isl/local_space.h>
#include <isl/map.h>
#include <isl/mat.h>
#include <isl/options.h>
#include <isl/point.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace idxmap {
namespace {

static_assert(sizeof(long) == sizeof(int64_t),
              "isl's *_si functions take long; idxmap needs a 64-bit long");

//===----------------------------------------------------------------------===//
// Owning handles
//===----------------------------------------------------------------------===//

/// Owns one isl object: frees it on destruction. get() lends it
/// (__isl_keep), copy() makes a new reference, release() hands it over
/// (__isl_take).
template <typename T, T *(*FreeFn)(T *), T *(*CopyFn)(T *)> class Own {
public:
  Own() = default;
  explicit Own(T *P) : P(P) {}
  Own(const Own &) = delete;
  Own &operator=(const Own &) = delete;
  Own(Own &&O) noexcept : P(O.release()) {}
  Own &operator=(Own &&O) noexcept {
    reset(O.release());
    return *this;
  }
  ~Own() { reset(); }

  T *get() const { return P; }
  T *copy() const { return P ? CopyFn(P) : nullptr; }
  T *release() {
    T *R = P;
    P = nullptr;
    return R;
  }
  void reset(T *N = nullptr) {
    if (P)
      FreeFn(P);
    P = N;
  }
  explicit operator bool() const { return P != nullptr; }

private:
  T *P = nullptr;
};

using IslAff = Own<isl_aff, isl_aff_free, isl_aff_copy>;
using IslSet = Own<isl_set, isl_set_free, isl_set_copy>;
using IslMap = Own<isl_map, isl_map_free, isl_map_copy>;
using IslVal = Own<isl_val, isl_val_free, isl_val_copy>;
using IslPoint = Own<isl_point, isl_point_free, isl_point_copy>;
using IslSpace = Own<isl_space, isl_space_free, isl_space_copy>;
using IslLocalSpace =
    Own<isl_local_space, isl_local_space_free, isl_local_space_copy>;

//===----------------------------------------------------------------------===//
// Watchdog: a wall-clock limit on top of the operation budget
//===----------------------------------------------------------------------===//

/// isl counts simplex pivots only; with huge coefficients one pivot can be
/// slow, so a query also gets a deadline. One lazily started thread sleeps
/// until the earliest deadline and calls isl_ctx_abort() on contexts whose
/// deadline passed (isl checks the flag at its next operation). A context is
/// disarmed, under the same mutex, before it is freed, so the thread never
/// touches a freed context.
class Watchdog {
public:
  static Watchdog &get() {
    // Leaked on purpose: the thread may still wait when statics die.
    static Watchdog *W = new Watchdog();
    return *W;
  }

  uint64_t arm(isl_ctx *Ctx, std::chrono::milliseconds Limit) {
    std::lock_guard<std::mutex> Lock(Mu);
    if (!Started) {
      std::thread(&Watchdog::run, this).detach();
      Started = true;
    }
    uint64_t Id = ++LastId;
    Clock::time_point Deadline = Clock::now() + Limit;
    bool Earliest = Entries.empty() || Deadline < Entries.begin()->first;
    Entries.emplace(Deadline, Entry{Id, Ctx});
    if (Earliest)
      Cv.notify_one();
    return Id;
  }

  void disarm(uint64_t Id) {
    std::lock_guard<std::mutex> Lock(Mu);
    for (auto It = Entries.begin(); It != Entries.end(); ++It) {
      if (It->second.Id == Id) {
        Entries.erase(It);
        return;
      }
    }
  }

private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    uint64_t Id;
    isl_ctx *Ctx;
  };

  void run() {
    std::unique_lock<std::mutex> Lock(Mu);
    for (;;) {
      if (Entries.empty()) {
        Cv.wait(Lock);
        continue;
      }
      auto First = Entries.begin();
      // A copy: the entry may be erased while the lock is released.
      Clock::time_point Deadline = First->first;
      if (Clock::now() < Deadline) {
        Cv.wait_until(Lock, Deadline);
        continue;
      }
      isl_ctx_abort(First->second.Ctx);
      Entries.erase(First);
    }
  }

  std::mutex Mu;
  std::condition_variable Cv;
  std::multimap<Clock::time_point, Entry> Entries;
  uint64_t LastId = 0;
  bool Started = false;
};

//===----------------------------------------------------------------------===//
// Session: one isl context per query
//===----------------------------------------------------------------------===//

/// An isl context configured for one query: errors do not abort or print,
/// and simplex pivots are limited to the budget. Declare it before any isl
/// object so that it is destroyed last.
class Session {
public:
  explicit Session(const ExactOptions &O) : Opts(O), Ctx(isl_ctx_alloc()) {
    if (O.Explanation)
      O.Explanation->clear();
    if (O.BudgetHit)
      *O.BudgetHit = false;
    if (O.TimeLimitMs)
      Deadline = std::chrono::steady_clock::now() +
                 std::chrono::milliseconds(
                     std::min<uint64_t>(O.TimeLimitMs, uint64_t(1) << 40));
    if (!Ctx)
      return;
    isl_options_set_on_error(Ctx, ISL_ON_ERROR_CONTINUE);
    isl_ctx_set_max_operations(
        Ctx, static_cast<unsigned long>(
                 std::min<uint64_t>(O.MaxOperations, ULONG_MAX)));
    if (O.TimeLimitMs)
      WatchId =
          Watchdog::get().arm(Ctx, std::chrono::milliseconds(std::min<uint64_t>(
                                       O.TimeLimitMs, uint64_t(1) << 40)));
  }
  ~Session() {
    if (WatchId)
      Watchdog::get().disarm(WatchId);
    if (Ctx)
      isl_ctx_free(Ctx);
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  isl_ctx *ctx() const { return Ctx; }
  bool ok() const { return Ctx != nullptr; }

  /// Why the last isl call failed.
  std::string failure() const {
    if (!Ctx)
      return "cannot allocate an isl context";
    if (!Overrun.empty())
      return Overrun;
    if (isl_ctx_last_error(Ctx) == isl_error_quota)
      return budgetHit("isl operation budget exhausted (" +
                       std::to_string(Opts.MaxOperations) + " operations)");
    if (isl_ctx_last_error(Ctx) == isl_error_abort)
      return budgetHit(timeLimitNote());
    const char *Msg = isl_ctx_last_error_msg(Ctx);
    return std::string("isl error: ") + (Msg ? Msg : "unknown failure");
  }

  /// Stores \p Why as the explanation (if the caller asked for one).
  void explain(const std::string &Why) const {
    if (Opts.Explanation)
      *Opts.Explanation = Why;
  }
  bool wantsExplanation() const { return Opts.Explanation != nullptr; }

  /// Records the last isl failure as the explanation and returns \p R.
  template <typename R> R fail(R Result) const {
    explain(failure());
    return Result;
  }

  /// True once the query is over its time limit or size budget (the reason
  /// is then failure()). Checked before every system is built, so that the
  /// construction, which isl's operation budget does not count, is bounded
  /// too.
  bool overBudget() const {
    if (!Overrun.empty())
      return true;
    if (Opts.TimeLimitMs && std::chrono::steady_clock::now() > Deadline)
      Overrun = budgetHit(timeLimitNote());
    return !Overrun.empty();
  }

  /// Charges \p Cells (matrix cells or stored coefficients) to the size
  /// budget; false (and overBudget() from then on) when it runs out.
  bool charge(uint64_t Cells) const {
    if (overBudget())
      return false;
    Charged += Cells;
    if (Opts.MaxCells && Charged > Opts.MaxCells)
      Overrun = budgetHit("constraint system over the size budget (" +
                          std::to_string(Opts.MaxCells) + " cells)");
    return Overrun.empty();
  }

private:
  std::string timeLimitNote() const {
    return "isl time limit exceeded (" + std::to_string(Opts.TimeLimitMs) +
           " ms)";
  }
  /// Notes that a budget ran out; returns \p Why.
  const std::string &budgetHit(const std::string &Why) const {
    if (Opts.BudgetHit)
      *Opts.BudgetHit = true;
    LastBudgetNote = Why;
    return LastBudgetNote;
  }

  const ExactOptions &Opts;
  isl_ctx *Ctx;
  uint64_t WatchId = 0;
  std::chrono::steady_clock::time_point Deadline;
  mutable std::string Overrun, LastBudgetNote;
  mutable uint64_t Charged = 0;
};

/// The int64 value of an integer isl_val, clamped to the int64 range
/// (infinities clamp too). nullopt for NaN or a non-integer.
std::optional<int64_t> clampedInt(isl_val *V) {
  if (!V || isl_val_is_nan(V) == isl_bool_true)
    return std::nullopt;
  if (isl_val_is_infty(V) == isl_bool_true)
    return INT64_MAX;
  if (isl_val_is_neginfty(V) == isl_bool_true)
    return INT64_MIN;
  if (isl_val_is_int(V) != isl_bool_true)
    return std::nullopt;
  if (isl_val_cmp_si(V, LONG_MAX) > 0)
    return INT64_MAX;
  if (isl_val_cmp_si(V, LONG_MIN) < 0)
    return INT64_MIN;
  return static_cast<int64_t>(isl_val_get_num_si(V));
}

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
    std::vector<std::pair<Expr, bool>> Work{{E.lhs(), false}, {E.rhs(), false}};
    std::unordered_set<const void *> Seen;
    while (!Work.empty()) {
      auto [N, Expanded] = Work.back();
      Work.pop_back();
      if (!N.isBinary() || Memo.count(N))
        continue;
      if (Expanded) {
        if (N.kind() != ExprKind::Add && !form(N))
          return false;
        continue;
      }
      if (!Seen.insert(N.storage()).second)
        continue;
      Work.push_back({N, true});
      Work.push_back({N.rhs(), false});
      Work.push_back({N.lhs(), false});
    }
    return true;
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

//===----------------------------------------------------------------------===//
// Witnesses
//===----------------------------------------------------------------------===//

/// Coordinates of a sample point of \p Set (consumed); nullopt if the set is
/// empty or sampling fails.
std::optional<std::vector<int64_t>> samplePoint(isl_set *Set) {
  if (!Set)
    return std::nullopt;
  isl_size N = isl_set_dim(Set, isl_dim_set);
  IslPoint P(isl_set_sample_point(Set));
  if (!P || N < 0 || isl_point_is_void(P.get()) != isl_bool_false)
    return std::nullopt;
  std::vector<int64_t> Coords;
  for (isl_size I = 0; I < N; ++I) {
    IslVal V(isl_point_get_coordinate_val(P.get(), isl_dim_set, I));
    std::optional<int64_t> C = clampedInt(V.get());
    if (!C)
      return std::nullopt;
    Coords.push_back(*C);
  }
  return Coords;
}

/// "(d0=1, s0=2)" for the variables [First, First + Count) of \p M.
std::string formatVars(const IndexingMap &M, const std::vector<int64_t> &P,
                       const std::vector<unsigned> &Vars, size_t Offset = 0) {
  std::string S = "(";
  for (size_t I = 0; I < Vars.size(); ++I) {
    if (I)
      S += ", ";
    S += M.varName(Vars[I]) + "=" + std::to_string(P[Offset + I]);
  }
  return S + ")";
}

/// "(3, 5)".
std::string formatTuple(const std::vector<int64_t> &P, size_t Begin,
                        size_t End) {
  std::string S = "(";
  for (size_t I = Begin; I < End; ++I) {
    if (I != Begin)
      S += ", ";
    S += std::to_string(P[I]);
  }
  return S + ")";
}

std::vector<unsigned> iota(unsigned Begin, unsigned End) {
  std::vector<unsigned> V;
  for (unsigned I = Begin; I < End; ++I)
    V.push_back(I);
  return V;
}

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
