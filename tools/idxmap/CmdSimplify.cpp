//===- tools/idxmap/CmdSimplify.cpp - `idxmap simplify`
//--------------------===//
//
// Part of idxmap. Prints each input map simplified (tier 1; `--exact` adds the
// exact pass of the isl component when it is installed).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "JsonOutput.h"

#include "ExactBudget.h"
#include "idxmap/Print.h"

#include <cstdio>

using namespace idxmap;
using namespace idxmap::cli;

namespace idxmap {
namespace cli {

/// The budgets of `--exact` (one SimplifyFlags per process: simplify or
/// compose).
static BudgetFlags SimplifyBudget;

void SimplifyFlags::addTo(ArgParser &P) {
  P.flag("--remove-unused", &RemoveUnused,
         "also remove variables that no result or constraint uses");
  P.flag("--preserve-dims", &PreserveDims,
         "keep dims whose range is a single point (XLA's kPreserve)");
  P.flag("--stats", &Stats, "print rule hit counts to stderr");
  Exact.addTo(P, static_cast<bool>(exactHooks().Simplify));
  SimplifyBudget.addTo(P);
}

void simplifyMap(IndexingMap &M, const SimplifyFlags &Flags,
                 SimplifyStats *Stats) {
  if (M.isUndefined())
    return;
  SimplifyOptions SO;
  SO.ReplacePointDims = !Flags.PreserveDims;
  SO.Stats = Stats;
  simplify(M, SO);
  if (Flags.RemoveUnused && !M.isKnownEmpty()) {
    auto Removed = M.removeUnusedVars();
    for (bool R : Removed)
      if (R) {
        simplify(M, SO);
        break;
      }
  }
  if (Flags.Exact.Exact && exactHooks().Simplify && !M.isKnownEmpty()) {
    ExactHookState &St = exactHookState();
    St.Options = SimplifyBudget.options(&St.Why, &St.BudgetHit);
    if (exactHooks().Simplify(M) && !M.isKnownEmpty())
      simplify(M, SO);
    // The map printed is still exact, only less simplified: a note, exit 0.
    noteBudgetHit(St.Why, St.BudgetHit);
  }
}

void printStats(const SimplifyStats &Stats) {
  std::cerr << "simplify rule hits:\n";
  if (Stats.RuleHits.empty())
    std::cerr << "  (none)\n";
  for (auto &[Rule, Count] : Stats.RuleHits) {
    char Buf[32];
    std::snprintf(Buf, sizeof(Buf), "%8llu", (unsigned long long)Count);
    std::cerr << Buf << "  " << Rule << "\n";
  }
}

} // namespace cli
} // namespace idxmap

namespace {

int runSimplify(int Argc, char **Argv);

const Command SimplifyCommand = {
    "simplify", "print each map simplified",
    "Simplifies each input map with XLA's semantics (variables are kept; dims\n"
    "with a one-point range become constants) and prints it in canonical\n"
    "form. An infeasible domain prints KNOWN EMPTY. --format=json prints\n"
    "one document: per map its chunk, the simplified map and its parts,\n"
    "and whether simplification changed it (docs/cli-json.schema.json).",
    runSimplify};

int runSimplify(int Argc, char **Argv) {
  InputOptions In;
  OutputOptions Out;
  SimplifyFlags Flags;
  ArgParser P(SimplifyCommand);
  In.addTo(P);
  Out.addTo(P);
  Flags.addTo(P);
  FormatOption Format;
  Format.addTo(P);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  SimplifyStats Stats;
  JsonResults Results("simplify");
  int Code = forEachMap(
      In,
      [&](Context &, IndexingMap &M, const MapSource &Src) {
        std::string Before = Format.json() ? printMap(M) : "";
        simplifyMap(M, Flags, Flags.Stats ? &Stats : nullptr);
        if (!Format.json())
          return printMapTo(O.os(), M, Out);
        Json J = JsonResults::start(Src);
        J["input"] = Before;
        if (int Code = addMapFacts(J, M, Out))
          return Code;
        J["changed"] = printMap(M) != Before;
        Results.add(std::move(J));
        return int(ExitOk);
      },
      O, /*Separate=*/!Format.json());
  Results.print(O);
  if (Flags.Stats)
    printStats(Stats);
  if (!O.close())
    return ExitRejected;
  return Code;
}

CommandRegistration RegisterSimplify(SimplifyCommand);

} // namespace
