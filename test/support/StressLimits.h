//===- StressLimits.h - Time limits of the stress tests --------*- C++ -*-===//
//
// Part of idxmap. The stress tests promise each huge input is handled
// within 2 s (docs/RELIABILITY.md) in a normal build. Under AddressSanitizer
// and UndefinedBehaviorSanitizer every instruction costs several times as
// much, so there the same tests check only that the work stays bounded.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_STRESSLIMITS_H
#define IDXMAP_TEST_SUPPORT_STRESSLIMITS_H

#if defined(__SANITIZE_ADDRESS__)
#define IDXMAP_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IDXMAP_TEST_SANITIZED 1
#endif
#endif

namespace idxmap::testing {

/// Seconds one stress case may take: 2 in a normal build, 20 under the
/// sanitizers (measured slow-down 2-5x on the map and emission stress).
///
/// Example: `EXPECT_LT(T.seconds(), stressSeconds());`
constexpr double stressSeconds() {
#ifdef IDXMAP_TEST_SANITIZED
  return 20.0;
#else
  return 2.0;
#endif
}

} // namespace idxmap::testing

#endif // IDXMAP_TEST_SUPPORT_STRESSLIMITS_H
