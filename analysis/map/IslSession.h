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
#include <pthread.h>
#include <thread>
#include <time.h>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

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
// Watchdog: a CPU-time limit on top of the operation budget
//===----------------------------------------------------------------------===//

/// The CPU time one thread has used. A query's time limit counts the CPU time
/// of the thread that runs it, not the wall clock, so that a machine loaded
/// with other work (a CI runner building in parallel) does not turn a definite
/// answer into Unknown.
class ThreadCpuClock {
public:
  /// The clock of the calling thread.
  static ThreadCpuClock self() {
    ThreadCpuClock C;
    if (pthread_getcpuclockid(pthread_self(), &C.Id) != 0)
      C.Id = CLOCK_MONOTONIC; // no per-thread clock: fall back to the wall
    return C;
  }
  /// Nanoseconds of CPU time used so far; valid while the thread lives.
  int64_t nanos() const {
    timespec T{};
    if (clock_gettime(Id, &T) != 0)
      return 0;
    return int64_t(T.tv_sec) * 1000000000 + T.tv_nsec;
  }

private:
  clockid_t Id = CLOCK_MONOTONIC;
};

/// isl counts simplex pivots only; with huge coefficients one pivot can be
/// slow, so a query also gets a CPU-time limit. One lazily started thread
/// watches the armed queries: a thread uses CPU time no faster than the wall
/// clock runs, so it sleeps for the smallest remaining allowance, then reads
/// the clocks again, and calls isl_ctx_abort() on contexts whose allowance
/// is spent (isl checks the flag at its next operation). A context is
/// disarmed, under the same mutex, before it is freed and before its thread
/// can end, so the watchdog never touches a freed context or a dead clock.
class Watchdog {
public:
  static Watchdog &get() {
    // Leaked on purpose: the thread may still wait when statics die.
    static Watchdog *W = new Watchdog();
    return *W;
  }

  /// Aborts \p Ctx once \p Clock has advanced \p LimitNs past its reading
  /// now. Returns the id that disarm() takes.
  uint64_t arm(isl_ctx *Ctx, ThreadCpuClock Clock, int64_t LimitNs) {
    std::lock_guard<std::mutex> Lock(Mu);
    if (!Started) {
      std::thread(&Watchdog::run, this).detach();
      Started = true;
    }
    uint64_t Id = ++LastId;
    Entries.push_back(Entry{Id, Ctx, Clock, Clock.nanos() + LimitNs});
    Cv.notify_one();
    return Id;
  }

  void disarm(uint64_t Id) {
    std::lock_guard<std::mutex> Lock(Mu);
    for (auto It = Entries.begin(); It != Entries.end(); ++It) {
      if (It->Id == Id) {
        Entries.erase(It);
        return;
      }
    }
  }

private:
  struct Entry {
    uint64_t Id;
    isl_ctx *Ctx;
    ThreadCpuClock Clock;
    int64_t DeadlineNs;
  };

  void run() {
    std::unique_lock<std::mutex> Lock(Mu);
    for (;;) {
      if (Entries.empty()) {
        Cv.wait(Lock);
        continue;
      }
      int64_t Sleep = INT64_MAX;
      for (auto It = Entries.begin(); It != Entries.end();) {
        int64_t Left = It->DeadlineNs - It->Clock.nanos();
        if (Left <= 0) {
          isl_ctx_abort(It->Ctx);
          It = Entries.erase(It);
          continue;
        }
        Sleep = std::min(Sleep, Left);
        ++It;
      }
      if (Sleep != INT64_MAX)
        Cv.wait_for(
            Lock, std::chrono::nanoseconds(std::max<int64_t>(Sleep, 1000000)));
    }
  }

  std::mutex Mu;
  std::condition_variable Cv;
  std::vector<Entry> Entries;
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
      DeadlineNs = Clock.nanos() + limitNs();
    if (!Ctx)
      return;
    isl_options_set_on_error(Ctx, ISL_ON_ERROR_CONTINUE);
    isl_ctx_set_max_operations(
        Ctx, static_cast<unsigned long>(
                 std::min<uint64_t>(O.MaxOperations, ULONG_MAX)));
    if (O.TimeLimitMs)
      WatchId = Watchdog::get().arm(Ctx, Clock, limitNs());
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
    if (Opts.TimeLimitMs && Clock.nanos() > DeadlineNs)
      Overrun = budgetHit(timeLimitNote());
    return !Overrun.empty();
  }

  /// Charges \p Cells (matrix cells or stored coefficients) to the size
  /// budget; false (and overBudget() from then on) when it runs out.
  bool charge(uint64_t Cells) const {
    if (!fits(Cells))
      return false;
    Charged += Cells;
    return true;
  }

  /// False (and overBudget() from then on) when \p Cells more would be over
  /// the size budget; charges nothing. For a lower bound of what a later
  /// step must charge, so that a system too big to hand to isl fails before
  /// it is translated instead of after.
  bool fits(uint64_t Cells) const {
    if (overBudget())
      return false;
    if (Opts.MaxCells &&
        Cells > Opts.MaxCells - std::min(Charged, Opts.MaxCells))
      Overrun = budgetHit("constraint system over the size budget (" +
                          std::to_string(Opts.MaxCells) + " cells)");
    return Overrun.empty();
  }

private:
  std::string timeLimitNote() const {
    return "isl time limit exceeded (" + std::to_string(Opts.TimeLimitMs) +
           " ms of CPU time)";
  }
  /// The time limit in nanoseconds, capped so that the sum cannot overflow.
  int64_t limitNs() const {
    return int64_t(std::min<uint64_t>(Opts.TimeLimitMs, uint64_t(1) << 40)) *
           1000000;
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
  ThreadCpuClock Clock = ThreadCpuClock::self();
  int64_t DeadlineNs = 0;
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
