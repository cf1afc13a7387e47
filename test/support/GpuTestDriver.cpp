//===- test/support/GpuTestDriver.cpp - Flags of the GPU test programs ----===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "support/GpuTestDriver.h"
#include "support/FuzzDriver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace idxmap::testing {

std::string libcudaFromEnvironment() {
  const char *V = std::getenv("IDXMAP_LIBCUDA");
  return V ? V : "";
}

std::optional<int> parseGpuTestArgs(int Argc, char **Argv, const char *Program,
                                    GpuTestFlags &F) {
  auto Usage = [&] {
    std::fprintf(
        stderr,
        "usage: %s [--seed N] [--count N] [--max-elements N]%s%s%s%s%s%s "
        "[--simulate [--resident N]] [-v]\n",
        Program, F.TakesMaxGrid ? " [--max-grid N]" : "",
        F.TakesNewOps ? " [--new-ops PERCENT]" : "",
        F.TakesTune ? " [--tune NAME=VALUE[,...]]" : "",
        F.TakesDryRun ? " [--dry-run]" : "",
        F.TakesPtxas ? " [--ptxas PATH]" : "",
        F.TakesPrint ? " [--print]" : "");
    return std::optional<int>(2);
  };
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    const char *Value = I + 1 < Argc ? Argv[I + 1] : nullptr;
    uint64_t N = 0;
    if (A == "--seed" || A == "--count" || A == "--max-elements") {
      if (!parseFuzzNumber(Value, N))
        return Usage();
      ++I;
      if (A == "--seed")
        F.Seed = N;
      else if (A == "--count") {
        if (N > UINT32_MAX)
          return Usage();
        F.Count = unsigned(N);
      } else
        F.MaxElements = std::max<int64_t>(F.MinMaxElements, int64_t(N));
    } else if (A == "--max-grid" && F.TakesMaxGrid) {
      if (!parseFuzzNumber(Value, N) || N == 0 || N > INT32_MAX)
        return Usage();
      ++I;
      F.MaxGridX = int64_t(N);
    } else if (A == "--new-ops" && F.TakesNewOps) {
      if (!parseFuzzNumber(Value, N) || N > 100)
        return Usage();
      ++I;
      F.NewOpsPercent = unsigned(N);
    } else if (A == "--tune" && F.TakesTune && Value) {
      ++I;
      std::string_view Rest = Value;
      while (!Rest.empty()) {
        std::string_view Item = Rest.substr(0, Rest.find(','));
        Rest.remove_prefix(std::min(Rest.size(), Item.size() + 1));
        size_t Eq = Item.find('=');
        uint64_t V = 0;
        std::string Num(Item.substr(Eq == std::string_view::npos ? 0 : Eq + 1));
        if (Eq == std::string_view::npos || !parseFuzzNumber(Num.c_str(), V))
          return Usage();
        if (auto Err = setTuning(F.Knobs, Item.substr(0, Eq), int64_t(V))) {
          std::fprintf(stderr, "%s: %s\n", Program, Err->c_str());
          return Usage();
        }
      }
    } else if (A == "--ptxas" && F.TakesPtxas && Value) {
      F.Ptxas = Value;
      ++I;
    } else if (A == "--dry-run" && F.TakesDryRun) {
      F.DryRun = true;
    } else if (A == "--print" && F.TakesPrint) {
      F.Print = true;
      F.DryRun |= F.PrintMeansDryRun;
    } else if (A == "--simulate") {
      F.Simulate = true;
    } else if (A == "--resident") {
      if (!parseFuzzNumber(Value, N) || N == 0 ||
          N > HostSimulatorOptions::MaxResidentBlocks)
        return Usage();
      ++I;
      F.Resident = unsigned(N);
    } else if (A == "-v") {
      F.Verbose = true;
    } else {
      return Usage();
    }
  }
  // The simulator runs LLVM IR: no PTX for ptxas.
  if ((F.Simulate && !F.Ptxas.empty()) || (F.Resident > 1 && !F.Simulate))
    return Usage();
  return std::nullopt;
}

} // namespace idxmap::testing
