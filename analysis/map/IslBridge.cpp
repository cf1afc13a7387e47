//===- IslBridge.cpp - Exact domain reasoning through isl -----------------===//
//
// Part of idxmap. The only file that talks to isl (C API). Every public query
// of idxmap/Exact.h opens its own isl context (cheap: well under a
// microsecond), sets the error mode to "continue" and the operation budget,
// builds isl objects straight from the Expr trees (no text round trip) and
// frees every object before the context. Any isl failure (budget, internal
// error) turns into Unknown with a reason; nothing isl-typed leaves this file.
//
// Translation. A map with N = dims + range vars + runtime vars variables
// becomes the set space { [v0, ..., vN-1] }; every Expr becomes a
// quasi-affine isl_aff on it: `a floordiv c` is floor(a / c) (isl adds an
// existentially quantified integer variable for each floor), `a ceildiv c`
// is ceil(a / c), `a mod c` is a - floor(a / c) * c, a product needs one
// constant factor. Divisors must be non-zero constants.
//
//===----------------------------------------------------------------------===//

#include "idxmap/Exact.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

#include <isl/aff.h>
#include <isl/ctx.h>
#include <isl/ilp.h>
#include <isl/local_space.h>
#include <isl/map.h>
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
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

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
    if (!Ctx)
      return;
    isl_options_set_on_error(Ctx, ISL_ON_ERROR_CONTINUE);
    isl_ctx_set_max_operations(Ctx, static_cast<unsigned long>(
                                        std::min<uint64_t>(O.MaxOperations,
                                                           ULONG_MAX)));
    if (O.TimeLimitMs)
      WatchId = Watchdog::get().arm(
          Ctx, std::chrono::milliseconds(
                   std::min<uint64_t>(O.TimeLimitMs, uint64_t(1) << 40)));
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
    if (isl_ctx_last_error(Ctx) == isl_error_quota)
      return "isl operation budget exhausted (" +
             std::to_string(Opts.MaxOperations) + " operations)";
    if (isl_ctx_last_error(Ctx) == isl_error_abort)
      return "isl time limit exceeded (" + std::to_string(Opts.TimeLimitMs) +
             " ms)";
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

private:
  const ExactOptions &Opts;
  isl_ctx *Ctx;
  uint64_t WatchId = 0;
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
// Translation of an IndexingMap
//===----------------------------------------------------------------------===//

/// Builds the isl form of one map: affs of its expressions, its domain and
/// its relation. On failure the builders return null handles and Error says
/// why (a construct isl cannot represent, or an isl failure).
class Translator {
public:
  Translator(const Session &S, const IndexingMap &M) : S(S), M(M) {
    Space.reset(isl_space_set_alloc(S.ctx(), 0, M.numVars()));
    LS.reset(isl_local_space_from_space(Space.copy()));
  }

  std::string Error;

  unsigned numVars() const { return M.numVars(); }
  isl_space *space() const { return Space.get(); }

  /// The aff of \p E over the map's variables.
  IslAff aff(Expr E) {
    if (!Error.empty())
      return IslAff();
    IslAff A = build(E);
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

  /// The relation `domain point -> results` over all variables. With
  /// \p RuntimeAsOutputs the runtime variables are appended to the outputs,
  /// so that two points with different runtime values never share an image
  /// (injectivity per runtime value).
  IslMap relation(bool RuntimeAsOutputs = false) {
    IslSet D = domain();
    if (!D)
      return IslMap();
    unsigned NumRt = RuntimeAsOutputs ? M.numRuntimeVars() : 0;
    unsigned NumOut = M.numResults() + NumRt;
    isl_aff_list *List = isl_aff_list_alloc(S.ctx(), NumOut);
    for (unsigned I = 0; I < M.numResults(); ++I) {
      // A KNOWN EMPTY map's results are irrelevant (its domain is empty) and
      // may be anything; use 0 so that translation cannot fail on them.
      IslAff R = M.isKnownEmpty() ? constant(0) : aff(M.result(I));
      if (!R) {
        isl_aff_list_free(List);
        return IslMap();
      }
      List = isl_aff_list_add(List, R.release());
    }
    unsigned FirstRt = M.numDims() + M.numRangeVars();
    for (unsigned I = 0; I < NumRt; ++I)
      List = isl_aff_list_add(List, var(FirstRt + I).release());
    isl_space *MapSpace = isl_space_map_from_domain_and_range(
        Space.copy(), isl_space_set_alloc(S.ctx(), 0, NumOut));
    isl_multi_aff *MA = isl_multi_aff_from_aff_list(MapSpace, List);
    IslMap R(isl_map_intersect_domain(isl_map_from_multi_aff(MA),
                                      D.release()));
    if (!R && Error.empty())
      Error = S.failure();
    return R;
  }

  /// The set of runtime values the map is meant for: runtime bounds and the
  /// constraints that mention only runtime variables, over the runtime
  /// variables alone.
  IslSet runtimeContext() {
    unsigned FirstRt = M.numDims() + M.numRangeVars();
    IslSet D(isl_set_universe(Space.copy()));
    for (unsigned I = FirstRt; I < M.numVars() && D; ++I)
      D = intersect(std::move(D), within(var(I), M.var(I).Bound));
    for (const Constraint &C : M.constraints()) {
      if (!D)
        break;
      if (mentionsOnlyRuntime(C.E))
        D = intersect(std::move(D), within(aff(C.E), C.I));
    }
    if (!D)
      return D;
    return IslSet(isl_set_project_out(D.release(), isl_dim_set, 0, FirstRt));
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

  bool mentionsOnlyRuntime(Expr E) const {
    bool Only = true;
    E.walkVariables([&](Expr V) {
      if (V.isDim() || V.position() < M.numRangeVars())
        Only = false;
    });
    return Only;
  }

  void unsupported(Expr E, const std::string &What) {
    if (Error.empty())
      Error = "cannot represent exactly: " + What + " in '" +
              printExpr(E, &M) + "'";
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

  IslAff build(Expr E) {
    switch (E.kind()) {
    case ExprKind::Constant:
      return constant(E.value());
    case ExprKind::Dim:
      if (E.position() >= M.numDims()) {
        unsupported(E, "a dim the map does not have");
        return IslAff();
      }
      return var(E.position());
    case ExprKind::Symbol:
      if (E.position() >= M.numSymbols()) {
        unsupported(E, "a symbol the map does not have");
        return IslAff();
      }
      return var(M.numDims() + E.position());
    case ExprKind::Add: {
      IslAff L = build(E.lhs());
      IslAff R = L ? build(E.rhs()) : IslAff();
      if (!L || !R)
        return IslAff();
      return IslAff(isl_aff_add(L.release(), R.release()));
    }
    case ExprKind::Mul: {
      IslAff L = build(E.lhs());
      IslAff R = L ? build(E.rhs()) : IslAff();
      if (!L || !R)
        return IslAff();
      if (isl_aff_is_cst(L.get()) != isl_bool_true &&
          isl_aff_is_cst(R.get()) != isl_bool_true) {
        unsupported(E, "a product of two non-constant expressions");
        return IslAff();
      }
      return IslAff(isl_aff_mul(L.release(), R.release()));
    }
    case ExprKind::FloorDiv:
    case ExprKind::CeilDiv:
    case ExprKind::Mod: {
      IslAff L = build(E.lhs());
      IslVal D = L ? divisor(E, build(E.rhs())) : IslVal();
      if (!L || !D)
        return IslAff();
      if (E.kind() != ExprKind::Mod)
        return divide(std::move(L), std::move(D),
                      E.kind() == ExprKind::CeilDiv);
      // a mod d = a - floor(a / d) * d (MLIR semantics for either sign).
      IslAff Q = divide(IslAff(L.copy()), IslVal(D.copy()), /*Ceil=*/false);
      if (!Q)
        return IslAff();
      return IslAff(isl_aff_sub(
          L.release(), isl_aff_scale_val(Q.release(), D.release())));
    }
    }
    unsupported(E, "an unknown expression kind");
    return IslAff();
  }

  const Session &S;
  const IndexingMap &M;
  IslSpace Space;
  IslLocalSpace LS;
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
/// explanation set on failure; an empty domain gives an empty interval
/// through the caller.
std::optional<int64_t> optimum(const Session &S, isl_set *D, isl_aff *A,
                               bool Max, bool &Empty) {
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

/// Exact bounds of \p E over \p T's domain \p D.
std::optional<Interval> boundsOver(const Session &S, Translator &T,
                                   isl_set *D, Expr E) {
  IslAff A = T.aff(E);
  if (!A) {
    S.explain(T.Error);
    return std::nullopt;
  }
  bool Empty = false;
  std::optional<int64_t> Lo = optimum(S, D, A.get(), /*Max=*/false, Empty);
  if (!Lo)
    return std::nullopt;
  if (Empty)
    return Interval::empty();
  std::optional<int64_t> Hi = optimum(S, D, A.get(), /*Max=*/true, Empty);
  if (!Hi)
    return std::nullopt;
  if (Empty)
    return Interval::empty();
  return Interval(*Lo, *Hi);
}

/// Pairs of distinct points with the same image under \p R (consumed),
/// restricted to the first point being lexicographically smaller.
IslSet collisions(isl_map *R) {
  if (!R)
    return IslSet();
  isl_space *In = isl_space_domain(isl_map_get_space(R));
  isl_map *Reverse = isl_map_reverse(isl_map_copy(R));
  isl_map *Same = isl_map_apply_range(R, Reverse);
  return IslSet(
      isl_map_wrap(isl_map_intersect(Same, isl_map_lex_lt(In))));
}

/// Injectivity of \p R (consumed; runtime variables already appended to its
/// outputs). \p What names the image in the explanation ("map to",
/// "touch element").
Answer injectivity(const Session &S, const IndexingMap &M, isl_map *R,
                   const char *What) {
  IslSet Pairs = collisions(R);
  if (!Pairs)
    return S.fail(Answer::Unknown);
  isl_bool Empty = isl_set_is_empty(Pairs.get());
  if (Empty == isl_bool_error)
    return S.fail(Answer::Unknown);
  if (Empty == isl_bool_true)
    return Answer::Yes;
  if (S.wantsExplanation()) {
    std::optional<std::vector<int64_t>> P = samplePoint(Pairs.release());
    unsigned N = M.numVars();
    if (P && P->size() == 2 * N) {
      std::vector<unsigned> All = iota(0, N);
      std::vector<int64_t> X(P->begin(), P->begin() + N);
      std::string Img = "the same results";
      if (std::optional<std::vector<int64_t>> V = M.evaluate(X))
        Img = formatTuple(*V, 0, V->size());
      S.explain(formatVars(M, *P, All) + " and " + formatVars(M, *P, All, N) +
                " both " + What + " " + Img);
    } else {
      S.explain("two distinct points have the same results");
    }
  }
  return Answer::No;
}

/// The relation of \p M as seen by areEqual: inputs [dims, runtime vars],
/// range variables projected out.
IslMap projectedRelation(Translator &T, const IndexingMap &M) {
  IslMap R = T.relation();
  if (!R)
    return R;
  // Move the runtime inputs behind the dims by projecting the range vars.
  return IslMap(isl_map_project_out(R.release(), isl_dim_in, M.numDims(),
                                    M.numRangeVars()));
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
                (Side ? "the second" : "the first") +
                " map but not in the " + (Side ? "first" : "second"));
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

Emptiness isEmptyExact(const IndexingMap &Map, const ExactOptions &Options) {
  Session S(Options);
  if (Map.isUndefined()) {
    S.explain("the map is UNDEFINED");
    return Emptiness::Unknown;
  }
  if (Map.isKnownEmpty())
    return Emptiness::Empty;
  if (!S.ok())
    return S.fail(Emptiness::Unknown);
  Translator T(S, Map);
  IslSet D = T.domain();
  if (!D) {
    S.explain(T.Error);
    return Emptiness::Unknown;
  }
  switch (isl_set_is_empty(D.get())) {
  case isl_bool_true:
    return Emptiness::Empty;
  case isl_bool_false:
    return Emptiness::NonEmpty;
  default:
    return S.fail(Emptiness::Unknown);
  }
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
  Translator T(S, Map);
  IslSet D = T.domain();
  if (!D) {
    S.explain(T.Error);
    return std::nullopt;
  }
  return boundsOver(S, T, D.get(), E);
}

bool refineExact(IndexingMap &Map, const ExactOptions &Options) {
  if (Map.isUndefined() || Map.isKnownEmpty())
    return false;
  Session S(Options);
  if (!S.ok())
    return S.fail(false);
  bool Changed = false;
  {
    Translator T(S, Map);
    IslSet D = T.domain();
    if (!D) {
      S.explain(T.Error);
      return false;
    }
    isl_bool Empty = isl_set_is_empty(D.get());
    if (Empty == isl_bool_error)
      return S.fail(false);
    if (Empty == isl_bool_true) {
      Map.markKnownEmpty();
      return true;
    }
    // Tighten every variable's bound to its exact projection. The domain's
    // point set is unchanged: the new bound holds at every domain point.
    std::vector<Interval> NewBounds;
    for (unsigned I = 0; I < Map.numVars(); ++I) {
      IslAff V = T.var(I);
      bool E = false;
      std::optional<int64_t> Lo = optimum(S, D.get(), V.get(), false, E);
      std::optional<int64_t> Hi = optimum(S, D.get(), V.get(), true, E);
      Interval Old = Map.var(I).Bound;
      Interval New = Old;
      if (Lo && !E)
        New.Lo = std::max(Old.Lo, *Lo);
      if (Hi && !E)
        New.Hi = std::min(Old.Hi, *Hi);
      NewBounds.push_back(New);
    }
    for (unsigned I = 0; I < Map.numVars(); ++I) {
      if (Map.var(I).Bound != NewBounds[I]) {
        Map.var(I).Bound = NewBounds[I];
        Changed = true;
      }
    }
  }
  // Drop each constraint that the bounds and the other remaining constraints
  // imply: the domain without it has no point with E < Lo or E > Hi.
  std::vector<Constraint> Cs = Map.constraints();
  std::vector<bool> Keep(Cs.size(), true);
  Translator T(S, Map);
  for (size_t Idx : constraintOrder(Cs)) {
    Keep[Idx] = false;
    IslSet Rest = T.domain(&Keep);
    IslAff A = T.aff(Cs[Idx].E);
    if (!Rest || !A) {
      Keep[Idx] = true;
      break;
    }
    bool Empty = false;
    std::optional<int64_t> Lo = optimum(S, Rest.get(), A.get(), false, Empty);
    std::optional<int64_t> Hi =
        Lo ? optimum(S, Rest.get(), A.get(), true, Empty) : std::nullopt;
    // A clamped optimum at an int64 limit is not a proof; the interval
    // comparison below is exact otherwise.
    bool Implied = Lo && Hi && !Empty && *Lo >= Cs[Idx].I.Lo &&
                   *Hi <= Cs[Idx].I.Hi && *Lo != INT64_MIN &&
                   *Hi != INT64_MAX;
    if (!Implied)
      Keep[Idx] = true;
  }
  std::vector<Constraint> Kept;
  for (size_t I = 0; I < Cs.size(); ++I)
    if (Keep[I])
      Kept.push_back(Cs[I]);
  if (Kept.size() != Cs.size()) {
    Map.setConstraints(std::move(Kept));
    Changed = true;
  }
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
  Translator T(S, Map);
  IslMap R = T.relation(/*RuntimeAsOutputs=*/true);
  if (!R) {
    S.explain(T.Error);
    return Answer::Unknown;
  }
  return injectivity(S, Map, R.release(), "map to");
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
  Translator T(S, Map);
  IslMap R = T.relation(/*RuntimeAsOutputs=*/true);
  IslSet Ctx = R ? T.runtimeContext() : IslSet();
  if (!R || !Ctx) {
    S.explain(T.Error.empty() ? S.failure() : T.Error);
    return Answer::Unknown;
  }
  // The box x runtime context, over the outputs [results, runtime vars].
  unsigned NumRes = Map.numResults();
  IslSet Box(isl_set_universe(isl_space_set_alloc(S.ctx(), 0, NumRes)));
  for (unsigned I = 0; I < NumRes && Box; ++I) {
    Box.reset(isl_set_lower_bound_si(Box.release(), isl_dim_set, I, 0));
    Box.reset(isl_set_upper_bound_si(Box.release(), isl_dim_set, I,
                                     Shape[I] - 1));
  }
  IslSet Target(isl_set_flat_product(Box.release(), Ctx.release()));
  if (!Target)
    return S.fail(Answer::Unknown);
  std::string Rt;
  auto runtimeSuffix = [&](const std::vector<int64_t> &P, size_t First) {
    if (!Map.numRuntimeVars())
      return std::string();
    return " for " +
           formatVars(Map, P,
                      iota(Map.numDims() + Map.numRangeVars(), Map.numVars()),
                      First);
  };

  // 1. Nothing outside the box. (Every point of the domain already has its
  // runtime values in the context: the context's constraints are part of it.)
  IslMap Outside(isl_map_subtract_range(R.copy(), Target.copy()));
  if (!Outside)
    return S.fail(Answer::Unknown);
  isl_bool NoneOutside = isl_map_is_empty(Outside.get());
  if (NoneOutside == isl_bool_error)
    return S.fail(Answer::Unknown);
  if (NoneOutside == isl_bool_false) {
    if (S.wantsExplanation()) {
      if (auto P = samplePoint(isl_map_wrap(Outside.release())))
        S.explain(formatVars(Map, *P, iota(0, Map.numVars())) +
                  " touches element " +
                  formatTuple(*P, Map.numVars(), Map.numVars() + NumRes) +
                  " outside the box");
    }
    return Answer::No;
  }
  // 2. Every element of the box is touched.
  IslSet Missed(isl_set_subtract(Target.copy(), isl_map_range(R.copy())));
  if (!Missed)
    return S.fail(Answer::Unknown);
  isl_bool NoneMissed = isl_set_is_empty(Missed.get());
  if (NoneMissed == isl_bool_error)
    return S.fail(Answer::Unknown);
  if (NoneMissed == isl_bool_false) {
    if (S.wantsExplanation()) {
      if (auto P = samplePoint(Missed.release()))
        S.explain("element " + formatTuple(*P, 0, NumRes) +
                  " is never touched" + runtimeSuffix(*P, NumRes));
    }
    return Answer::No;
  }
  // 3. No element is touched twice.
  IslMap Inside(isl_map_intersect_range(R.release(), Target.release()));
  if (!Inside)
    return S.fail(Answer::Unknown);
  return injectivity(S, Map, Inside.release(), "touch element");
}

Answer areEqual(const IndexingMap &A, const IndexingMap &B,
                const ExactOptions &Options) {
  Session S(Options);
  if (A.isUndefined() || B.isUndefined()) {
    S.explain("a map is UNDEFINED");
    return Answer::Unknown;
  }
  if (A.numDims() != B.numDims() ||
      A.numRuntimeVars() != B.numRuntimeVars() ||
      A.numResults() != B.numResults()) {
    S.explain("the maps differ in their numbers of dims, runtime variables "
              "or results");
    return Answer::No;
  }
  if (!S.ok())
    return S.fail(Answer::Unknown);
  Translator TA(S, A), TB(S, B);
  IslMap RA = projectedRelation(TA, A);
  IslMap RB = RA ? projectedRelation(TB, B) : IslMap();
  if (!RA || !RB) {
    std::string Why = !TA.Error.empty() ? TA.Error : TB.Error;
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
  if (A.numDims() != B.numDims() || A.numRangeVars() != B.numRangeVars() ||
      A.numRuntimeVars() != B.numRuntimeVars() ||
      A.numResults() != B.numResults()) {
    S.explain("the maps differ in their numbers of variables or results");
    return Answer::No;
  }
  if (!S.ok())
    return S.fail(Answer::Unknown);
  Translator TA(S, A), TB(S, B);
  IslMap RA = TA.relation();
  IslMap RB = RA ? TB.relation() : IslMap();
  if (!RA || !RB) {
    std::string Why = !TA.Error.empty() ? TA.Error : TB.Error;
    S.explain(Why.empty() ? S.failure() : Why);
    return Answer::Unknown;
  }
  std::vector<unsigned> All = iota(0, A.numVars());
  return compareRelations(S, std::move(RA), std::move(RB), A, B, All, All);
}

} // namespace idxmap
