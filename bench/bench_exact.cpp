//===- bench_exact.cpp - Exact (isl) queries over the benchmark corpus ----===//
//
// Part of idxmap. Times the exact queries of idxmap/Exact.h on the corpus of
// bench_simplify (bench/corpus/simplify_corpus.txt: realistic maps of the
// fuzzer's families plus loop-emitter thread maps for ranks 1-6; generated
// with test/support/RandomMaps.h's realistic mode when the file is missing):
//   - isEmptyExact(map), one query per map;
//   - boundsExact(result, map), one query per result of each map;
//   - for information: refineExact (the exact part of `simplify --exact`),
//     isInjective, and both queries on the tier-1-simplified maps.
// Each query is timed separately (median of --reps runs, thread CPU time and
// wall clock; a query runs in its own isl context, as always). Target (issue
// 3): median exact emptiness/bounds query <= 1 ms. Unknown answers are
// counted by reason.
//
// Usage: bench_exact [benchmark flags] [--corpus FILE] [--reps N]
//                    [--check-targets]
//
//===----------------------------------------------------------------------===//
#include "support/RandomMaps.h"

#include "idxmap/Context.h"
#include "idxmap/Exact.h"
#include "idxmap/Parse.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <time.h>
#include <vector>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

constexpr uint64_t FallbackSeed = 20261130;

std::string defaultCorpusPath() {
  std::string F = __FILE__;
  size_t Slash = F.rfind('/');
  return (Slash == std::string::npos ? std::string(".") : F.substr(0, Slash)) +
         "/corpus/simplify_corpus.txt";
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

/// 1000 realistic maps plus 40 thread maps per rank 1-6 (the shape of
/// bench_simplify's corpus), for when the corpus file is missing.
std::vector<std::string> generateCorpus() {
  std::vector<std::string> Out;
  Context Ctx;
  RandomMapOptions O;
  O.Realistic = true;
  RandomMapGenerator Gen(Ctx, FallbackSeed, O);
  for (unsigned I = 0; I < 1000; ++I)
    Out.push_back(printMap(Gen.generate()));
  for (unsigned Rank = 1; Rank <= 6; ++Rank) {
    O.ThreadMapRank = Rank;
    RandomMapGenerator TG(Ctx, FallbackSeed + Rank, O);
    for (unsigned I = 0; I < 40; ++I)
      Out.push_back(printMap(TG.generate(MapFamily::ThreadMap)));
  }
  return Out;
}

/// The corpus, parsed once into one context (the queries never build
/// expressions, so sharing it does not change what is measured).
struct Corpus {
  Context Ctx;
  std::vector<std::string> Text;
  std::vector<IndexingMap> Maps, Simplified;
};

Corpus &corpus() {
  static Corpus C;
  return C;
}

double threadCpuUs() {
  timespec TS;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &TS);
  return double(TS.tv_sec) * 1e6 + double(TS.tv_nsec) * 1e-3;
}

//===----------------------------------------------------------------------===//
// Google Benchmark cases: whole-corpus throughput
//===----------------------------------------------------------------------===//

void BM_IsEmptyExactCorpus(benchmark::State &State) {
  const Corpus &C = corpus();
  for (auto _ : State)
    for (const IndexingMap &M : C.Maps)
      benchmark::DoNotOptimize(isEmptyExact(M));
  State.counters["us_per_query"] = benchmark::Counter(
      double(C.Maps.size()) * 1e-6,
      benchmark::Counter::kIsIterationInvariantRate |
          benchmark::Counter::kInvert);
}
BENCHMARK(BM_IsEmptyExactCorpus)->Unit(benchmark::kMillisecond);

void BM_BoundsExactCorpus(benchmark::State &State) {
  const Corpus &C = corpus();
  size_t Queries = 0;
  for (const IndexingMap &M : C.Maps)
    Queries += M.numResults();
  for (auto _ : State)
    for (const IndexingMap &M : C.Maps)
      for (Expr E : M.results())
        benchmark::DoNotOptimize(boundsExact(E, M));
  State.counters["us_per_query"] = benchmark::Counter(
      double(Queries) * 1e-6, benchmark::Counter::kIsIterationInvariantRate |
                                  benchmark::Counter::kInvert);
}
BENCHMARK(BM_BoundsExactCorpus)->Unit(benchmark::kMillisecond);

//===----------------------------------------------------------------------===//
// Per-query pass
//===----------------------------------------------------------------------===//

struct Timing {
  double Us;
  size_t Map;
};

struct Summary {
  double Median = 0, P90 = 0, P99 = 0, Max = 0, Mean = 0;
};

Summary summarize(std::vector<Timing> &V) {
  Summary S;
  if (V.empty())
    return S;
  std::sort(V.begin(), V.end(),
            [](const Timing &A, const Timing &B) { return A.Us < B.Us; });
  auto At = [&](double P) {
    return V[std::min(V.size() - 1, size_t(P * double(V.size() - 1) + 0.5))]
        .Us;
  };
  double Sum = 0;
  for (const Timing &T : V)
    Sum += T.Us;
  S.Median = At(0.5);
  S.P90 = At(0.9);
  S.P99 = At(0.99);
  S.Max = V.back().Us;
  S.Mean = Sum / double(V.size());
  return S;
}

/// One kind of query: a name and a function that runs query number \p Q of
/// map \p M (returning false when the answer is Unknown).
struct QueryKind {
  const char *Name;
  /// Number of queries for a map.
  std::function<size_t(const IndexingMap &)> Count;
  std::function<bool(const IndexingMap &, size_t, const ExactOptions &)> Run;
};

/// Times every query of \p K over \p Maps; prints the summary; returns the
/// median thread CPU time in microseconds.
double timeQueries(const QueryKind &K, const std::vector<IndexingMap> &Maps,
                   unsigned Reps) {
  std::vector<Timing> Cpu, Wall;
  std::map<std::string, size_t> Unknown;
  for (size_t I = 0; I < Maps.size(); ++I) {
    for (size_t Q = 0; Q < K.Count(Maps[I]); ++Q) {
      std::vector<double> U, W;
      bool Known = true;
      std::string Why;
      for (unsigned R = 0; R < Reps; ++R) {
        ExactOptions O;
        O.Explanation = &Why;
        double C0 = threadCpuUs();
        auto T0 = std::chrono::steady_clock::now();
        Known = K.Run(Maps[I], Q, O);
        auto T1 = std::chrono::steady_clock::now();
        double C1 = threadCpuUs();
        U.push_back(C1 - C0);
        W.push_back(std::chrono::duration<double, std::micro>(T1 - T0).count());
      }
      std::sort(U.begin(), U.end());
      std::sort(W.begin(), W.end());
      Cpu.push_back({U[U.size() / 2], I});
      Wall.push_back({W[W.size() / 2], I});
      if (!Known) {
        // Group reasons by their first words.
        std::string Key = Why.substr(0, Why.find(" in '"));
        ++Unknown[Key.empty() ? "(no reason)" : Key];
      }
    }
  }
  Summary SC = summarize(Cpu), SW = summarize(Wall);
  size_t NumUnknown = 0;
  for (auto &[Why, N] : Unknown)
    NumUnknown += N;
  printf("\n%s: %zu queries on %zu maps, %zu unknown\n", K.Name, Cpu.size(),
         Maps.size(), NumUnknown);
  printf("  thread CPU: median %.1f us  p90 %.1f us  p99 %.1f us  max %.1f us"
         "  mean %.1f us\n",
         SC.Median, SC.P90, SC.P99, SC.Max, SC.Mean);
  printf("  wall clock: median %.1f us  p90 %.1f us  p99 %.1f us  max %.1f us"
         "  mean %.1f us\n",
         SW.Median, SW.P90, SW.P99, SW.Max, SW.Mean);
  for (auto &[Why, N] : Unknown)
    printf("  unknown x%zu: %s\n", N, Why.c_str());
  if (!Cpu.empty()) {
    const Timing &X = Cpu.back();
    const std::string &T = corpus().Text[X.Map];
    printf("  slowest (%.0f us CPU): %.240s%s\n", X.Us, T.c_str(),
           T.size() > 240 ? "..." : "");
  }
  return SC.Median;
}

size_t one(const IndexingMap &) { return 1; }
size_t perResult(const IndexingMap &M) { return M.numResults(); }

const QueryKind EmptinessQuery = {
    "isEmptyExact", one,
    [](const IndexingMap &M, size_t, const ExactOptions &O) {
      return isEmptyExact(M, O) != Emptiness::Unknown;
    }};
const QueryKind BoundsQuery = {
    "boundsExact (per result)", perResult,
    [](const IndexingMap &M, size_t Q, const ExactOptions &O) {
      return boundsExact(M.result(unsigned(Q)), M, O).has_value();
    }};
const QueryKind RefineQuery = {
    "refineExact", one,
    [](const IndexingMap &M, size_t, const ExactOptions &O) {
      IndexingMap R = M;
      refineExact(R, O);
      return O.Explanation->empty();
    }};
const QueryKind InjectiveQuery = {
    "isInjective", one,
    [](const IndexingMap &M, size_t, const ExactOptions &O) {
      return isInjective(M, O) != Answer::Unknown;
    }};

} // namespace

int main(int Argc, char **Argv) {
  benchmark::Initialize(&Argc, Argv);
  std::string CorpusPath = defaultCorpusPath();
  unsigned Reps = 3;
  bool CheckTargets = false;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    if (A == "--corpus" && I + 1 < Argc) {
      CorpusPath = Argv[++I];
    } else if (A == "--reps" && I + 1 < Argc) {
      Reps = unsigned(std::max(1, atoi(Argv[++I])));
    } else if (A == "--check-targets") {
      CheckTargets = true;
    } else {
      fprintf(stderr, "usage: bench_exact [benchmark flags] [--corpus FILE] "
                      "[--reps N] [--check-targets]\n");
      return 2;
    }
  }

  Corpus &C = corpus();
  if (readCorpus(CorpusPath, C.Text)) {
    printf("corpus: %s (%zu maps)\n", CorpusPath.c_str(), C.Text.size());
  } else {
    C.Text = generateCorpus();
    printf("corpus: generated (%zu maps, seed %llu)\n", C.Text.size(),
           (unsigned long long)FallbackSeed);
  }
  for (size_t I = 0; I < C.Text.size(); ++I) {
    auto M = parseIndexingMap(C.Ctx, C.Text[I]);
    if (!M) {
      fprintf(stderr, "bench_exact: corpus map %zu does not parse:\n%s\n", I,
              M.error().str().c_str());
      return 1;
    }
    C.Maps.push_back(*M);
    IndexingMap S = *M;
    simplify(S);
    C.Simplified.push_back(S);
  }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  printf("\nper-query pass: median of %u runs per query, default options "
         "(budget %llu operations, time limit %llu ms)\n",
         Reps, (unsigned long long)ExactOptions().MaxOperations,
         (unsigned long long)ExactOptions().TimeLimitMs);
  double Empty = timeQueries(EmptinessQuery, C.Maps, Reps);
  double Bounds = timeQueries(BoundsQuery, C.Maps, Reps);
  printf("\n-- the same on the tier-1-simplified maps --");
  timeQueries(EmptinessQuery, C.Simplified, Reps);
  timeQueries(BoundsQuery, C.Simplified, Reps);
  printf("\n-- for information --");
  timeQueries(RefineQuery, C.Simplified, Reps);
  timeQueries(InjectiveQuery, C.Maps, Reps);
  bool Ok = Empty <= 1000.0 && Bounds <= 1000.0;
  printf("\ntarget (median exact emptiness and bounds query <= 1 ms, CPU "
         "time): %s\n",
         Ok ? "met" : "MISSED");
  return CheckTargets && !Ok ? 1 : 0;
}
