//===- fuzz_fusion_indexing.cpp - Soundness fuzzer for fusion indexing ----===//
//
// Part of idxmap. For random fused computations (support/RandomHlo.h), checks
// the indexing against the reference interpreter:
//   - each module parses (a parse failure is a generator bug);
//   - 30% of the fusions (--structured-percent) read some values through a
//     tuple and get-tuple-element or compute them in a nested fusion or a
//     call, which must not change any map's soundness or exactness;
//   - for every output (each tuple element) and every fused parameter, the
//     maps computeGroupedIndexing gives from the root are *sound*: perturbing
//     one parameter element changes only output elements whose maps name it;
//   - where the generator proves it must hold (data movement, reduce-add,
//     add/subtract/negate/exp; see RandomFusion::Exact), they are *exact*:
//     every element a map names is a real dependency;
//   - the fusion instruction's own output-to-input indexing is the grouped
//     indexing of its fused computation;
//   - for every instruction whose input-to-output indexing is defined, it is
//     the inverse relation of the output-to-input indexing;
//   - with --new-ops-percent N, N% of the fusions have dot, convolution,
//     reduce-window, map, gather, scatter, sort or all-gather inside
//     (support/RandomFusionWithOps.h), read by and reading the other ops.
// On a failure it prints the seed, the HLO text and the message, and exits 1.
// Fusion I of a run uses seed `--seed + I`; `--seed S --count 1` replays it.
//
// Usage: fuzz_fusion_indexing [--seed N] [--count N] [--max-failures N]
//                             [--verbose] [--no-inverse]
//                             [--max-instructions N] [--max-elements N]
//                             [--max-dynamic N] [--structured-percent N]
//                             [--new-ops-percent N]
// (the generator knobs default to RandomHloOptions'; a replay must repeat
// them).
// Exit status: 0 if every check passed, 1 on a failure, 2 on a usage error.
//
//===----------------------------------------------------------------------===//
#include "support/BruteForce.h"
#include "support/HloDeps.h"
#include "support/RandomHlo.h"

#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Print.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unistd.h>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

struct FuzzOptions {
  uint64_t Seed = 1;
  uint64_t Count = 4000;
  unsigned MaxFailures = 1;
  bool Verbose = false;
  /// Skip the input-to-output inverse checks (to see what the interpreter
  /// checks alone find).
  bool Inverse = true;
  /// Generator knobs (RandomHloOptions) for longer campaigns.
  unsigned MaxInstructions = 15;
  int64_t MaxElements = 96;
  unsigned MaxDynamic = 2;
  /// Percent of fusions with tuples, nested fusions and calls inside.
  unsigned StructuredPercent = 30;
  /// Percent of fusions with the issue-15 ops inside (0: the fusions of
  /// the runs before they existed).
  unsigned NewOpsPercent = 0;
};

struct Stats {
  uint64_t Fusions = 0, ExactFusions = 0, TupleFusions = 0, ReuseFusions = 0;
  uint64_t StructuredFusions = 0, NewOpFusions = 0;
  uint64_t Instructions = 0;
  /// checkDependencies calls, and those that also checked exactness.
  uint64_t SoundChecks = 0, ExactChecks = 0;
  /// Checks of parameters the output does not reach (no maps: there must
  /// be no dependency), and checks that found real dependencies.
  uint64_t Unreached = 0, SoundWithDeps = 0, ExactWithDeps = 0;
  uint64_t Pairs = 0;
  /// Maps whose variable box was too large to enumerate (not checked).
  uint64_t SkippedLarge = 0;
  uint64_t InverseChecks = 0, InversePairs = 0;
  uint64_t Failures = 0;
  std::map<std::string, uint64_t> OpCounts;
};

// The module being checked, for the crash handler.
char CrashText[1 << 15];
volatile uint64_t CrashSeed = 0;

void onCrash(int Sig) {
  char Buf[128];
  int N = std::snprintf(Buf, sizeof(Buf),
                        "\n*** signal %d while checking seed %llu; module:\n",
                        Sig, (unsigned long long)CrashSeed);
  if (N > 0)
    (void)!write(2, Buf, size_t(N));
  (void)!write(2, CrashText, std::strlen(CrashText));
  std::signal(Sig, SIG_DFL);
  std::raise(Sig);
}

uint64_t mix(uint64_t X) {
  X += 0x9e3779b97f4a7c15ULL;
  X = (X ^ (X >> 30)) * 0xbf58476d1ce4e5b9ULL;
  X = (X ^ (X >> 27)) * 0x94d049bb133111ebULL;
  return X ^ (X >> 31);
}

bool parseArgs(int Argc, char **Argv, FuzzOptions &O) {
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    auto Next = [&](uint64_t &V) {
      if (I + 1 >= Argc)
        return false;
      char *End = nullptr;
      V = std::strtoull(Argv[++I], &End, 10);
      return *End == 0;
    };
    uint64_t V = 0;
    if (A == "--seed" && Next(V))
      O.Seed = V;
    else if (A == "--count" && Next(V))
      O.Count = V;
    else if (A == "--max-failures" && Next(V))
      O.MaxFailures = unsigned(V);
    else if (A == "--verbose")
      O.Verbose = true;
    else if (A == "--no-inverse")
      O.Inverse = false;
    else if (A == "--max-instructions" && Next(V) && V >= 2)
      O.MaxInstructions = unsigned(V);
    else if (A == "--max-elements" && Next(V) && V >= 1)
      O.MaxElements = int64_t(V);
    else if (A == "--max-dynamic" && Next(V))
      O.MaxDynamic = unsigned(V);
    else if (A == "--structured-percent" && Next(V) && V <= 100)
      O.StructuredPercent = unsigned(V);
    else if (A == "--new-ops-percent" && Next(V) && V <= 100)
      O.NewOpsPercent = unsigned(V);
    else
      return false;
  }
  return true;
}

/// Checks one fusion; returns false (after printing) on a failure.
bool checkOne(uint64_t Seed, Stats &S, const FuzzOptions &FO) {
  RandomHloOptions O;
  // Two fifths of the fusions use only ops whose maps must be exact.
  O.ExactOpsOnly = mix(Seed) % 5 < 2;
  O.MaxInstructions = FO.MaxInstructions;
  O.MaxElements = FO.MaxElements;
  O.MaxDynamic = FO.MaxDynamic;
  O.StructuredPercent = FO.StructuredPercent;
  O.NewOpsPercent = FO.NewOpsPercent;
  RandomFusion F = generateRandomFusion(Seed, O);
  std::snprintf(CrashText, sizeof(CrashText), "%s", F.Text.c_str());
  CrashSeed = Seed;
  auto Fail = [&](const std::string &Message) {
    std::printf("FAILURE (seed %llu): %s\n%s\n", (unsigned long long)Seed,
                Message.c_str(), F.Text.c_str());
    std::fflush(stdout);
    ++S.Failures;
    return false;
  };
  if (FO.Verbose)
    std::printf("--- seed %llu\n%s", (unsigned long long)Seed, F.Text.c_str());

  auto M = parseHloModule(F.Text, "seed" + std::to_string(Seed) + ".hlo");
  if (!M)
    return Fail("generated module does not parse (generator bug):\n" +
                M.error().str());
  const HloComputation *C = (*M)->findComputation(F.FusedName);
  if (!C || C->parameterCount() != int64_t(F.NumParams))
    return Fail("generated module lacks the fused computation (generator "
                "bug)");
  ++S.Fusions;
  S.ExactFusions += O.ExactOpsOnly;
  S.TupleFusions += F.NumOutputs > 1;
  S.ReuseFusions += F.HasReuse;
  S.StructuredFusions += F.Structured;
  S.Instructions += F.Ops.size();
  bool NewOp = false;
  for (HloOpcode X : F.Ops) {
    ++S.OpCounts[std::string(opcodeName(X))];
    NewOp |= X == HloOpcode::Dot || X == HloOpcode::Convolution ||
             X == HloOpcode::ReduceWindow || X == HloOpcode::Map ||
             X == HloOpcode::Gather || X == HloOpcode::Scatter ||
             X == HloOpcode::Sort || X == HloOpcode::AllGather ||
             X == HloOpcode::AllReduce || X == HloOpcode::CollectivePermute ||
             X == HloOpcode::ReducePrecision || X == HloOpcode::Erf ||
             X == HloOpcode::BitcastConvert;
  }
  S.NewOpFusions += NewOp;

  Context Ctx;
  const HloInstruction *FusionInstr = (*M)->entry()->root();
  for (unsigned Out = 0; Out < F.NumOutputs; ++Out) {
    GroupedIndexing G = computeGroupedIndexing(Ctx, *C, nullptr, Out);
    InstructionIndexing FI =
        computeOutputToInputIndexing(Ctx, *FusionInstr, Out);
    for (int64_t P = 0; P < C->parameterCount(); ++P) {
      auto It = G.find(C->parameter(P));
      std::vector<OperandMap> Maps =
          It == G.end() ? std::vector<OperandMap>{} : It->second;
      if (size_t(P) >= FI.Operands.size() || !(FI.Operands[size_t(P)] == Maps))
        return Fail("output " + std::to_string(Out) + ", parameter " +
                    std::to_string(P) +
                    ": the fusion instruction's indexing differs from the "
                    "grouped indexing of its computation");
      bool TooLarge = false;
      for (const OperandMap &OM : Maps)
        if (!OM.Map.isUndefined() && !OM.Map.isKnownEmpty() &&
            !boxSize(OM.Map, uint64_t(1) << 20))
          TooLarge = true;
      if (TooLarge) {
        ++S.SkippedLarge;
        continue;
      }
      bool Exact = F.Exact[Out][size_t(P)];
      DepCheckResult R =
          checkDependencies(*C, P, Maps, Exact, mix(Seed * 31 + Out), Out);
      bool Reached = !Maps.empty();
      S.Unreached += !Reached;
      S.SoundChecks += Reached;
      S.ExactChecks += Reached && Exact;
      S.Pairs += uint64_t(R.Pairs);
      S.SoundWithDeps += R.Pairs > 0;
      S.ExactWithDeps += Exact && R.Pairs > 0;
      if (FO.Verbose)
        std::printf("  output %u, parameter %lld: %s, %lld pairs, %zu map(s)\n",
                    Out, (long long)P, Exact ? "exact" : "sound",
                    (long long)R.Pairs, Maps.size());
      if (R.Undefined)
        return Fail("output " + std::to_string(Out) + ", parameter " +
                    std::to_string(P) + ": UNDEFINED indexing");
      if (!R.Ok) {
        std::string Text;
        for (const OperandMap &OM : Maps)
          Text += "  " + printMap(OM.Map) + "\n";
        return Fail("output " + std::to_string(Out) + ", parameter " +
                    std::to_string(P) + (Exact ? " (exact)" : " (sound)") +
                    ": " + R.Message + "\nmaps:\n" + Text);
      }
    }
  }

  for (const HloInstruction *I : C->instructions()) {
    if (!FO.Inverse)
      break;
    if (I->opcode() == HloOpcode::Tuple ||
        I->opcode() == HloOpcode::GetTupleElement)
      continue;
    for (int64_t K = 0; K < I->operandCount(); ++K) {
      InverseCheckResult R = checkInverseConsistency(Ctx, *I, K);
      if (R.Skipped)
        continue;
      ++S.InverseChecks;
      S.InversePairs += uint64_t(R.Pairs);
      if (!R.Ok)
        return Fail("input-to-output indexing of " + I->name() + ", operand " +
                    std::to_string(K) + ": " + R.Message);
    }
  }
  return true;
}

} // namespace

int main(int Argc, char **Argv) {
  FuzzOptions FO;
  if (!parseArgs(Argc, Argv, FO)) {
    std::fprintf(stderr,
                 "usage: %s [--seed N] [--count N] [--max-failures N] "
                 "[--verbose] [--no-inverse]\n"
                 "       [--max-instructions N] [--max-elements N] "
                 "[--max-dynamic N] [--structured-percent N]\n"
                 "       [--new-ops-percent N]\n",
                 Argv[0]);
    return 2;
  }
  std::signal(SIGSEGV, onCrash);
  std::signal(SIGABRT, onCrash);
  std::signal(SIGFPE, onCrash);
  auto T0 = std::chrono::steady_clock::now();
  Stats S;
  for (uint64_t I = 0; I < FO.Count; ++I) {
    if (!checkOne(FO.Seed + I, S, FO) && S.Failures >= FO.MaxFailures)
      break;
  }
  double Secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
          .count();
  std::printf(
      "fuzz_fusion_indexing: seed %llu, %llu fusions (%llu exact-op, "
      "%llu tuple roots, %llu with reuse, %llu structured, %llu with "
      "new ops), %llu instructions\n",
      (unsigned long long)FO.Seed, (unsigned long long)S.Fusions,
      (unsigned long long)S.ExactFusions, (unsigned long long)S.TupleFusions,
      (unsigned long long)S.ReuseFusions,
      (unsigned long long)S.StructuredFusions,
      (unsigned long long)S.NewOpFusions, (unsigned long long)S.Instructions);
  std::printf(
      "  soundness checks: %llu (%llu with dependencies), exactness "
      "checks: %llu (%llu with dependencies), %llu dependency pairs; "
      "unreached parameters checked for no dependency: %llu\n",
      (unsigned long long)S.SoundChecks, (unsigned long long)S.SoundWithDeps,
      (unsigned long long)S.ExactChecks, (unsigned long long)S.ExactWithDeps,
      (unsigned long long)S.Pairs, (unsigned long long)S.Unreached);
  std::printf("  input-to-output inverse checks: %llu (%llu pairs); skipped "
              "(domain too large): %llu\n",
              (unsigned long long)S.InverseChecks,
              (unsigned long long)S.InversePairs,
              (unsigned long long)S.SkippedLarge);
  std::printf("  ops:");
  for (const auto &[Name, N] : S.OpCounts)
    std::printf(" %s=%llu", Name.c_str(), (unsigned long long)N);
  std::printf("\n  %.2f s, %llu failure(s)\n", Secs,
              (unsigned long long)S.Failures);
  return S.Failures ? 1 : 0;
}
