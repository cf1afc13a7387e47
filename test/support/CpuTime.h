//===- CpuTime.h - A thread's CPU time, for tests ---------------*- C++ -*-===//
//
// Tests that bound how long a step takes measure the CPU time of their own
// thread, not the wall clock: CI runs many tests at once on two cores, and a
// test descheduled for a while must not fail for it.
//
//===----------------------------------------------------------------------===//

#ifndef IDXMAP_TEST_SUPPORT_CPUTIME_H
#define IDXMAP_TEST_SUPPORT_CPUTIME_H

#include <time.h>

namespace idxmap {
namespace test {

/// Milliseconds of CPU time the calling thread has used.
///
/// Example:
/// \code
///   double T0 = threadCpuMs();
///   work();
///   EXPECT_LT(threadCpuMs() - T0, 100.0);
/// \endcode
inline double threadCpuMs() {
  timespec T{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &T);
  return double(T.tv_sec) * 1e3 + double(T.tv_nsec) * 1e-6;
}

} // namespace test
} // namespace idxmap

#endif // IDXMAP_TEST_SUPPORT_CPUTIME_H
