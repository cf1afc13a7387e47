//===- tools/idxmap/CmdBounds.cpp - `idxmap bounds`
//------------------------===//
//
// Part of idxmap. Prints the interval of an expression over each map's domain.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ExactBudget.h"
#include "JsonOutput.h"

#include <algorithm>

#include "idxmap/Print.h"
#include "idxmap/RangeEvaluator.h"

using namespace idxmap;
using namespace idxmap::cli;

namespace {

int runBounds(int Argc, char **Argv);

const Command BoundsCommand = {
    "bounds", "print the interval of an expression over the domain",
    "Prints '[lo, hi]', a sound interval of --expr over each map's domain\n"
    "(variable bounds and constraints). The names in EXPR are the map's\n"
    "variable names (custom or d0.., s0..). By default the map and the\n"
    "expression are simplified first, which tightens the interval (e.g.\n"
    "'s0 + s1 * 32 - (s0 floordiv 32) * 32' over s0 in [0, 1023],\n"
    "s1 in [0, 31] gives [0, 8191]); --no-simplify evaluates the intervals of\n"
    "the expression as written. A map whose domain is found empty prints\n"
    "'empty'. With --exact, the bounds are the exact minimum and maximum, or\n"
    "'unknown' when they cannot be decided within the budget.\n"
    "--format=json prints one document with a result per map (see\n"
    "docs/cli-json.schema.json).",
    runBounds};

int runBounds(int Argc, char **Argv) {
  InputOptions In;
  OutputOptions Out;
  ExactFlag Exact;
  std::string ExprText;
  bool NoSimplify = false;
  FormatOption Format;
  ArgParser P(BoundsCommand);
  In.addTo(P);
  Out.addTo(P, /*AllowFormat=*/false);
  Format.addTo(P);
  P.option("--expr", "EXPR", &ExprText, "the expression to bound",
           /*Required=*/true);
  P.flag("--no-simplify", &NoSimplify,
         "do not simplify the map and the expression first");
  Exact.addTo(P, static_cast<bool>(exactHooks().Bounds));
  BudgetFlags Budget;
  Budget.addTo(P);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  ExactHookState &St = exactHookState();
  St.Options = Budget.options(&St.Why, &St.BudgetHit);
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  Json Results = Json::array();
  // One answer: the text line, or a result of the JSON document. Lo and Hi
  // are read only for "bounds".
  auto Answer = [&](const IndexingMap &M, const MapSource &Src,
                    const char *Kind, Interval R, bool IsExact) {
    if (!Format.json()) {
      O << (std::string(Kind) == "bounds" ? R.str() : std::string(Kind))
        << "\n";
      return;
    }
    Json J{{"chunk", Src.Index},
           {"first_line", Src.FirstLine},
           {"map", printMap(M)},
           {"result", Kind},
           {"exact", IsExact}};
    if (std::string(Kind) == "bounds") {
      J["lo"] = jsonBound(R.Lo);
      J["hi"] = jsonBound(R.Hi);
      J["text"] = R.str();
    }
    Results.push_back(std::move(J));
  };
  int Code = forEachMap(
      In,
      [&](Context &, IndexingMap &M, const MapSource &Src) -> int {
        if (M.isUndefined()) {
          printDiagnostic(makeDiagnostic(
              Src.Text, std::min(Src.Text.find("UNDEFINED"), Src.Text.size()),
              "an UNDEFINED map has no domain to bound over", Src.FileName,
              Src.FirstLine));
          return ExitRejected;
        }
        ParseOptions PO;
        PO.FileName = "<expr>";
        auto E = parseExpr(ExprText, M, PO);
        if (!E) {
          printDiagnostic(E.error());
          return ExitRejected;
        }
        if (M.isKnownEmpty()) {
          Answer(M, Src, "empty", Interval(), Exact.Exact);
          return ExitOk;
        }
        if (Exact.Exact) {
          std::optional<Interval> B = exactHooks().Bounds(*E, M);
          if (!B) {
            Answer(M, Src, "unknown", Interval(), true);
            return noteBudgetHit(St.Why, St.BudgetHit);
          }
          Answer(M, Src, B->isEmpty() ? "empty" : "bounds", *B, true);
          return ExitOk;
        }
        Interval R = Interval::full();
        if (NoSimplify) {
          RangeEvaluator RE(M);
          R = RE.range(*E);
        } else {
          R = boundsOf(*E, M);
        }
        Answer(M, Src, R.isEmpty() ? "empty" : "bounds", R, false);
        return ExitOk;
      },
      O, /*Separate=*/!Format.json());
  // A failed chunk has no result (its error went to stderr); with nothing
  // answered there is no document, as the text output prints nothing.
  if (Format.json() && !Results.empty()) {
    Json Doc = jsonDocument("bounds");
    Doc["expr"] = ExprText;
    Doc["results"] = std::move(Results);
    printJson(O, Doc);
  }
  if (!O.close())
    return ExitRejected;
  return Code;
}

CommandRegistration RegisterBounds(BoundsCommand);

} // namespace
