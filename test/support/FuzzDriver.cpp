//===- test/support/FuzzDriver.cpp - Shared parts of the fuzzers ----------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "FuzzDriver.h"

#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace idxmap::testing {

bool parseFuzzNumber(const char *S, uint64_t &Out) {
  if (!S)
    return false;
  char *End = nullptr;
  Out = strtoull(S, &End, 10);
  return End && End != S && *End == '\0';
}

bool parseFuzzArgs(int Argc, char **Argv, FuzzRunOptions &O,
                   const ExtraFuzzFlag &Extra) {
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    auto Value = [&]() -> const char * {
      return I + 1 < Argc ? Argv[++I] : nullptr;
    };
    uint64_t V = 0;
    if (A == "--seed") {
      if (!parseFuzzNumber(Value(), O.Seed))
        return false;
    } else if (A == "--count") {
      if (!parseFuzzNumber(Value(), O.Count))
        return false;
    } else if (A == "--only") {
      if (!parseFuzzNumber(Value(), V))
        return false;
      O.Only = V;
    } else if (A == "--max-failures") {
      if (!parseFuzzNumber(Value(), V))
        return false;
      O.MaxFailures = unsigned(V);
    } else if (A == "--no-minimize") {
      O.Minimize = false;
    } else if (A == "--verbose") {
      O.Verbose = true;
    } else if (!Extra || !Extra(A, Value)) {
      return false;
    }
  }
  return true;
}

namespace {
char Report[16384];
const char *ProgramName = "fuzz";

void onCrash(int Sig) {
  (void)!write(2, "\n", 1);
  (void)!write(2, ProgramName, strlen(ProgramName));
  const char Head[] = ": crashed while checking:\n";
  (void)!write(2, Head, sizeof(Head) - 1);
  (void)!write(2, Report, strnlen(Report, sizeof(Report)));
  (void)!write(2, "\n", 1);
  signal(Sig, SIG_DFL);
  raise(Sig);
}
} // namespace

void installCrashReporter(const char *Program) {
  ProgramName = Program;
  signal(SIGABRT, onCrash);
  signal(SIGSEGV, onCrash);
  signal(SIGFPE, onCrash);
}

void setCrashReport(const char *Format, ...) {
  va_list Args;
  va_start(Args, Format);
  vsnprintf(Report, sizeof(Report), Format, Args);
  va_end(Args);
}

} // namespace idxmap::testing
