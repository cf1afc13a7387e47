//===- tools/idxmap/CmdIsEmpty.cpp - `idxmap is-empty`
//---------------------===//
//
// Part of idxmap. Says whether each map's domain is empty: `empty`,
// `non-empty` or `unknown` (the fast check may not decide; `--exact` asks the
// isl component when it is installed).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ExactBudget.h"
#include "JsonOutput.h"

#include "idxmap/Print.h"

using namespace idxmap;
using namespace idxmap::cli;

namespace {

int runIsEmpty(int Argc, char **Argv);

const Command IsEmptyCommand = {
    "is-empty", "say whether each map's domain is empty",
    "Prints 'empty', 'non-empty' or 'unknown' for each input map. Without\n"
    "--exact the answer comes from the fast interval check (checkEmptyFast),\n"
    "which answers 'unknown' when it cannot decide. An UNDEFINED map prints\n"
    "'unknown'. The exit code is 0 whatever the answer, except 1 when\n"
    "--exact ran out of a budget (a note names the option that raises it).\n"
    "--format=json prints one document with a result per map (see\n"
    "docs/cli-json.schema.json).",
    runIsEmpty};

const char *spell(Emptiness E) {
  switch (E) {
  case Emptiness::Empty:
    return "empty";
  case Emptiness::NonEmpty:
    return "non-empty";
  case Emptiness::Unknown:
    return "unknown";
  }
  return "unknown";
}

int runIsEmpty(int Argc, char **Argv) {
  InputOptions In;
  OutputOptions Out;
  ExactFlag Exact;
  BudgetFlags Budget;
  FormatOption Format;
  ArgParser P(IsEmptyCommand);
  In.addTo(P);
  Out.addTo(P, /*AllowFormat=*/false);
  Format.addTo(P);
  Exact.addTo(P, static_cast<bool>(exactHooks().IsEmpty));
  Budget.addTo(P);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  ExactHookState &St = exactHookState();
  St.Options = Budget.options(&St.Why, &St.BudgetHit);
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  Json Results = Json::array();
  int Code = forEachMap(
      In,
      [&](Context &, IndexingMap &M, const MapSource &Src) {
        Emptiness E = Emptiness::Unknown;
        if (M.isUndefined())
          E = Emptiness::Unknown;
        else if (M.isKnownEmpty())
          E = Emptiness::Empty;
        else if (Exact.Exact)
          E = exactHooks().IsEmpty(M);
        else
          E = checkEmptyFast(M);
        if (Format.json())
          Results.push_back(Json{{"chunk", Src.Index},
                                 {"first_line", Src.FirstLine},
                                 {"map", printMap(M)},
                                 {"result", spell(E)},
                                 {"exact", Exact.Exact}});
        else
          O << spell(E) << "\n";
        if (Exact.Exact && E == Emptiness::Unknown)
          return noteBudgetHit(St.Why, St.BudgetHit);
        return int(ExitOk);
      },
      O, /*Separate=*/!Format.json());
  // A chunk that did not parse has no result (its error went to stderr).
  if (Format.json() && !Results.empty()) {
    Json Doc = jsonDocument("is-empty");
    Doc["results"] = std::move(Results);
    printJson(O, Doc);
  }
  if (!O.close())
    return ExitRejected;
  return Code;
}

CommandRegistration RegisterIsEmpty(IsEmptyCommand);

} // namespace
