//===- bench_simplify.cpp - Parse + simplify over a realistic corpus ------===//
//
// Part of idxmap. Google Benchmark of parse+simplify over a corpus of
// realistic maps: the fuzzer's shapes at realistic sizes plus loop-emitter
// thread maps for output ranks 1-6. The corpus is read from
// bench/corpus/simplify_corpus.txt (one map per line, `//` comments) when it
// exists, else generated with the same seed.
//
// Besides the Google Benchmark cases, a per-map pass (std::chrono, single
// thread) reports the median, p90, p99 and max time per map of parse +
// simplify, each map measured Reps times in a fresh Context and the median
// taken. Targets: median <= 20 us, max <= 2 ms.
//
// Usage: bench_simplify [benchmark flags] [--corpus FILE] [--reps N]
//                       [--dump-corpus FILE] [--check-targets]
//
//===----------------------------------------------------------------------===//
#include "support/RandomMaps.h"

#include "idxmap/Context.h"
#include "idxmap/Parse.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <time.h>
#include <vector>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

constexpr uint64_t CorpusSeed = 20261130;
constexpr unsigned NumGeneric = 1000;
constexpr unsigned ThreadMapsPerRank = 40;

std::string defaultCorpusPath() {
  std::string F = __FILE__;
  size_t Slash = F.rfind('/');
  return (Slash == std::string::npos ? std::string(".") : F.substr(0, Slash)) +
         "/corpus/simplify_corpus.txt";
}

/// The generated corpus: NumGeneric maps of random families at realistic
/// sizes, then ThreadMapsPerRank loop-emitter thread maps per rank 1-6.
std::vector<std::string> generateCorpus() {
  std::vector<std::string> Out;
  Context Ctx;
  RandomMapOptions O;
  O.Realistic = true;
  O.EdgeOdds = 0; // No variables at the ends of int64 in a realistic corpus.
  RandomMapGenerator Gen(Ctx, CorpusSeed, O);
  for (unsigned I = 0; I < NumGeneric; ++I)
    Out.push_back(printMap(Gen.generate()));
  for (unsigned Rank = 1; Rank <= 6; ++Rank) {
    O.ThreadMapRank = Rank;
    RandomMapGenerator TG(Ctx, CorpusSeed + Rank, O);
    for (unsigned I = 0; I < ThreadMapsPerRank; ++I)
      Out.push_back(printMap(TG.generate(MapFamily::ThreadMap)));
  }
  return Out;
}

bool readCorpus(const std::string &Path, std::vector<std::string> &Out) {
  std::ifstream In(Path);
  if (!In)
    return false;
  std::string Line;
  while (std::getline(In, Line)) {
    size_t B = Line.find_first_not_of(" \t");
    if (B == std::string::npos || Line.compare(B, 2, "//") == 0)
      continue;
    Out.push_back(Line.substr(B));
  }
  return true;
}

std::vector<std::string> &corpus() {
  static std::vector<std::string> C;
  return C;
}

void BM_ParseSimplifyCorpus(benchmark::State &State) {
  const auto &C = corpus();
  for (auto _ : State) {
    Context Ctx;
    for (const std::string &Text : C) {
      auto M = parseIndexingMap(Ctx, Text);
      simplify(*M);
      benchmark::DoNotOptimize(M->numResults());
    }
  }
  State.counters["maps"] = benchmark::Counter(
      double(C.size()), benchmark::Counter::kIsIterationInvariantRate);
  State.counters["us_per_map"] = benchmark::Counter(
      double(C.size()) * 1e-6, benchmark::Counter::kIsIterationInvariantRate |
                                   benchmark::Counter::kInvert);
}
BENCHMARK(BM_ParseSimplifyCorpus)->Unit(benchmark::kMillisecond);

void BM_ParseCorpus(benchmark::State &State) {
  const auto &C = corpus();
  for (auto _ : State) {
    Context Ctx;
    for (const std::string &Text : C) {
      auto M = parseIndexingMap(Ctx, Text);
      benchmark::DoNotOptimize(M->numResults());
    }
  }
  State.counters["us_per_map"] = benchmark::Counter(
      double(C.size()) * 1e-6, benchmark::Counter::kIsIterationInvariantRate |
                                   benchmark::Counter::kInvert);
}
BENCHMARK(BM_ParseCorpus)->Unit(benchmark::kMillisecond);

void BM_SimplifyCorpus(benchmark::State &State) {
  const auto &C = corpus();
  Context Ctx;
  std::vector<IndexingMap> Maps;
  for (const std::string &Text : C)
    Maps.push_back(*parseIndexingMap(Ctx, Text));
  for (auto _ : State) {
    for (const IndexingMap &M : Maps) {
      IndexingMap S = M;
      simplify(S);
      benchmark::DoNotOptimize(S.numResults());
    }
  }
  State.counters["us_per_map"] = benchmark::Counter(
      double(C.size()) * 1e-6, benchmark::Counter::kIsIterationInvariantRate |
                                   benchmark::Counter::kInvert);
}
BENCHMARK(BM_SimplifyCorpus)->Unit(benchmark::kMillisecond);

struct Timing {
  double Us;
  size_t Index;
};

double percentile(const std::vector<Timing> &Sorted, double P) {
  size_t I = size_t(P * double(Sorted.size() - 1) + 0.5);
  return Sorted[std::min(I, Sorted.size() - 1)].Us;
}

/// CPU time of this thread in microseconds: unaffected by other processes
/// on a shared machine (wall-clock figures are printed too).
double threadCpuUs() {
  timespec TS;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &TS);
  return double(TS.tv_sec) * 1e6 + double(TS.tv_nsec) * 1e-3;
}

struct Summary {
  double Median, P90, P99, Max, Mean;
};

Summary summarize(std::vector<Timing> &Sorted) {
  std::sort(Sorted.begin(), Sorted.end(),
            [](const Timing &A, const Timing &B) { return A.Us < B.Us; });
  double Sum = 0;
  for (const Timing &X : Sorted)
    Sum += X.Us;
  return {percentile(Sorted, 0.5), percentile(Sorted, 0.9),
          percentile(Sorted, 0.99), Sorted.back().Us,
          Sum / double(Sorted.size())};
}

/// Times parse+simplify of each map separately; returns false if a target
/// is missed (judged on thread CPU time).
bool perMapPass(unsigned Reps) {
  const auto &C = corpus();
  std::vector<Timing> Wall, Cpu;
  using Clock = std::chrono::steady_clock;
  for (size_t I = 0; I < C.size(); ++I) {
    std::vector<double> W, U;
    for (unsigned R = 0; R < Reps; ++R) {
      Context Ctx; // Cold context, created outside the timed region.
      double C0 = threadCpuUs();
      auto Start = Clock::now();
      auto M = parseIndexingMap(Ctx, C[I]);
      simplify(*M);
      auto End = Clock::now();
      double C1 = threadCpuUs();
      benchmark::DoNotOptimize(M->numResults());
      W.push_back(
          std::chrono::duration<double, std::micro>(End - Start).count());
      U.push_back(C1 - C0);
    }
    std::sort(W.begin(), W.end());
    std::sort(U.begin(), U.end());
    Wall.push_back({W[W.size() / 2], I});
    Cpu.push_back({U[U.size() / 2], I});
  }
  Summary SW = summarize(Wall), SC = summarize(Cpu);
  printf("\nper-map parse+simplify, %zu maps, median of %u runs per map, "
         "cold Context each run:\n",
         C.size(), Reps);
  printf("  thread CPU: median %.2f us  p90 %.2f us  p99 %.2f us  max %.2f us"
         "  mean %.2f us\n",
         SC.Median, SC.P90, SC.P99, SC.Max, SC.Mean);
  printf("  wall clock: median %.2f us  p90 %.2f us  p99 %.2f us  max %.2f us"
         "  mean %.2f us\n",
         SW.Median, SW.P90, SW.P99, SW.Max, SW.Mean);
  printf("  slowest maps (CPU):\n");
  for (size_t K = 0; K < std::min<size_t>(3, Cpu.size()); ++K) {
    const Timing &X = Cpu[Cpu.size() - 1 - K];
    printf("    %.1f us: %.300s%s\n", X.Us, C[X.Index].c_str(),
           C[X.Index].size() > 300 ? "..." : "");
  }
  bool Ok = SC.Median <= 20.0 && SC.Max <= 2000.0;
  printf("  targets (median <= 20 us, max <= 2000 us, CPU time): %s\n",
         Ok ? "met" : "MISSED");
  return Ok;
}

} // namespace

int main(int Argc, char **Argv) {
  benchmark::Initialize(&Argc, Argv);
  std::string CorpusPath = defaultCorpusPath(), DumpPath;
  unsigned Reps = 5;
  bool CheckTargets = false;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    if (A == "--corpus" && I + 1 < Argc) {
      CorpusPath = Argv[++I];
    } else if (A == "--dump-corpus" && I + 1 < Argc) {
      DumpPath = Argv[++I];
    } else if (A == "--reps" && I + 1 < Argc) {
      Reps = unsigned(std::max(1, atoi(Argv[++I])));
    } else if (A == "--check-targets") {
      CheckTargets = true;
    } else {
      fprintf(stderr, "usage: bench_simplify [benchmark flags] [--corpus FILE] "
                      "[--reps N] [--dump-corpus FILE] [--check-targets]\n");
      return 2;
    }
  }

  if (!DumpPath.empty()) {
    std::ofstream Out(DumpPath);
    Out << "// Corpus of bench_simplify: " << NumGeneric
        << " realistic maps of the fuzzer's families and " << ThreadMapsPerRank
        << " loop-emitter thread maps per output rank 1-6.\n"
        << "// Generated by `bench_simplify --dump-corpus FILE` (RandomMaps "
           "seed "
        << CorpusSeed << "). One map per line.\n";
    for (const std::string &Text : generateCorpus())
      Out << Text << "\n";
    if (!Out) {
      fprintf(stderr, "bench_simplify: cannot write %s\n", DumpPath.c_str());
      return 1;
    }
    printf("wrote %s\n", DumpPath.c_str());
    return 0;
  }

  if (readCorpus(CorpusPath, corpus())) {
    printf("corpus: %s (%zu maps)\n", CorpusPath.c_str(), corpus().size());
  } else {
    corpus() = generateCorpus();
    printf("corpus: generated (%zu maps, seed %llu)\n", corpus().size(),
           (unsigned long long)CorpusSeed);
  }
  // Every map must parse, or the timings would be meaningless.
  {
    Context Ctx;
    for (size_t I = 0; I < corpus().size(); ++I) {
      auto M = parseIndexingMap(Ctx, corpus()[I]);
      if (!M) {
        fprintf(stderr, "bench_simplify: corpus map %zu does not parse:\n%s\n",
                I, M.error().str().c_str());
        return 1;
      }
    }
  }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  bool Ok = perMapPass(Reps);
  return CheckTargets && !Ok ? 1 : 0;
}
