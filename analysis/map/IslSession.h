//===- IslSession.h - isl contexts, owning handles, witnesses ---*- C++ -*-===//
//
// Part of idxmap. Private to analysis/map (IslBridge.cpp, IslFlat.h,
// IslPrint.cpp): the owning handles of isl objects, the watchdog (a
// wall-clock limit), the per-query Session (one isl context) and the
// reading of answers back (integers, sample points, their printing).
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_MAP_ISLSESSION_H
#define IDXMAP_ANALYSIS_MAP_ISLSESSION_H

#include "idxmap/Exact.h"
#include "idxmap/Print.h"

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
/// Internals of the isl bridge, shared by its files (never a public API).
namespace islbridge {

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
inline std::optional<int64_t> clampedInt(isl_val *V) {
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
// Witnesses
//===----------------------------------------------------------------------===//

/// Coordinates of a sample point of \p Set (consumed); nullopt if the set is
/// empty or sampling fails.
inline std::optional<std::vector<int64_t>> samplePoint(isl_set *Set) {
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
inline std::string formatVars(const IndexingMap &M,
                              const std::vector<int64_t> &P,
                              const std::vector<unsigned> &Vars,
                              size_t Offset = 0) {
  std::string S = "(";
  for (size_t I = 0; I < Vars.size(); ++I) {
    if (I)
      S += ", ";
    S += M.varName(Vars[I]) + "=" + std::to_string(P[Offset + I]);
  }
  return S + ")";
}

/// "(3, 5)".
inline std::string formatTuple(const std::vector<int64_t> &P, size_t Begin,
                               size_t End) {
  std::string S = "(";
  for (size_t I = Begin; I < End; ++I) {
    if (I != Begin)
      S += ", ";
    S += std::to_string(P[I]);
  }
  return S + ")";
}

inline std::vector<unsigned> iota(unsigned Begin, unsigned End) {
  std::vector<unsigned> V;
  for (unsigned I = Begin; I < End; ++I)
    V.push_back(I);
  return V;
}

} // namespace islbridge
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_MAP_ISLSESSION_H
