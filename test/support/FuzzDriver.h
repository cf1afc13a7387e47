//===- test/support/FuzzDriver.h - Shared parts of the fuzzers --*- C++ -*-===//
//
// Part of idxmap. The flags every seeded fuzzer takes and the crash report
// that names the input being checked when the engine aborts or crashes.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_FUZZDRIVER_H
#define IDXMAP_TEST_SUPPORT_FUZZDRIVER_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace idxmap::testing {

/// `--seed N --count N --only INDEX --max-failures N --no-minimize
/// --verbose`, shared by every fuzzer. A driver derives its own options
/// from this and sets its default Count.
struct FuzzRunOptions {
  uint64_t Seed = 1;
  uint64_t Count = 0;
  std::optional<uint64_t> Only;
  unsigned MaxFailures = 5;
  bool Minimize = true;
  bool Verbose = false;
};

/// A driver's own flag. \p Value returns the next argument (nullptr when
/// there is none). Returns false for an unknown flag or a bad value.
using ExtraFuzzFlag = std::function<bool(
    const std::string &Flag, const std::function<const char *()> &Value)>;

/// Parses the shared flags and hands any other flag to \p Extra. Returns
/// false on a usage error.
///
/// Example: `parseFuzzArgs(Argc, Argv, O, [&](const std::string &F,
/// auto &Value) { if (F != "--edge-odds") return false; uint64_t V;
/// return parseFuzzNumber(Value(), V) && (O.Gen.EdgeOdds = V, true); })`.
bool parseFuzzArgs(int Argc, char **Argv, FuzzRunOptions &O,
                   const ExtraFuzzFlag &Extra = nullptr);

/// A whole decimal number (nullptr or trailing characters: false).
bool parseFuzzNumber(const char *S, uint64_t &Out);

/// Prints `PROGRAM: crashed while checking:` and the current report on
/// SIGABRT, SIGSEGV and SIGFPE, then dies with the signal.
void installCrashReporter(const char *Program);

/// Sets the report (printf format), e.g. the reproduce line and the map.
void setCrashReport(const char *Format, ...)
    __attribute__((format(printf, 1, 2)));

} // namespace idxmap::testing

#endif
