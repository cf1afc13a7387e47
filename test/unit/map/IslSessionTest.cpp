//===- IslSessionTest.cpp - The exact queries' time limit -----------------===//
//
// Part of idxmap. The time limit of an exact query counts the CPU time of
// the thread that runs it (ThreadCpuClock), so that a machine busy with
// other work, or a thread that is descheduled, does not turn a definite
// answer into Unknown.
//
//===----------------------------------------------------------------------===//
#include "map/IslSession.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using namespace idxmap;
using namespace idxmap::islbridge;

namespace {

TEST(ThreadCpuClock, CountsWorkNotSleep) {
  ThreadCpuClock C = ThreadCpuClock::self();
  const int64_t T0 = C.nanos();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // A sleeping thread uses (almost) no CPU time.
  EXPECT_LT(C.nanos() - T0, int64_t(20) * 1000000);
  // Work advances it: spin until 5 ms of CPU time have passed (bounded by
  // 10 s of wall time, so that a broken clock fails instead of hanging).
  const int64_t T1 = C.nanos();
  const auto Deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  volatile uint64_t Sink = 0;
  while (C.nanos() - T1 < int64_t(5) * 1000000 &&
         std::chrono::steady_clock::now() < Deadline)
    Sink = Sink + 1;
  EXPECT_GE(C.nanos() - T1, int64_t(5) * 1000000);
}

TEST(IslSession, WallTimeAloneIsNotOverTheLimit) {
  // A 20 ms limit, then 100 ms of wall time without work: the query is not
  // over its limit (a wall-clock limit would be).
  ExactOptions O;
  O.TimeLimitMs = 20;
  std::string Why;
  O.Explanation = &Why;
  Session S(O);
  ASSERT_TRUE(S.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(S.overBudget()) << S.failure();
  // The watchdog has not aborted the context either: isl still answers.
  isl_set *Set = isl_set_read_from_str(S.ctx(), "{ [i] : 0 <= i <= 10 }");
  ASSERT_NE(Set, nullptr);
  EXPECT_EQ(isl_set_is_empty(Set), isl_bool_false);
  isl_set_free(Set);
}

} // namespace
