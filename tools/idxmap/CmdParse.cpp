//===- tools/idxmap/CmdParse.cpp - `idxmap parse`
//--------------------------===//
//
// Part of idxmap. Parses each input map and prints its canonical form, without
// simplification (the round trip of FORMATS.md). Also addMapFacts, the map
// part of the per-map JSON documents (JsonOutput.h).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "JsonOutput.h"

#include "idxmap/Print.h"

#include <sstream>

using namespace idxmap;
using namespace idxmap::cli;

int idxmap::cli::addMapFacts(Json &J, const IndexingMap &M,
                             const OutputOptions &Out) {
  std::ostringstream Text;
  if (int Code = printMapTo(Text, M, Out))
    return Code;
  std::string T = Text.str();
  if (!T.empty() && T.back() == '\n')
    T.pop_back();
  J["map"] = printMap(M);
  J["text"] = T;
  J["undefined"] = M.isUndefined();
  J["known_empty"] = M.isKnownEmpty();
  Json Vars = Json::array(), Exprs = Json::array(), Cons = Json::array();
  // UNDEFINED and KNOWN EMPTY print without variables or results.
  if (!M.isUndefined() && !M.isKnownEmpty()) {
    for (unsigned I = 0, E = M.numVars(); I < E; ++I) {
      const char *Kind = I < M.numDims()                      ? "dim"
                         : I < M.numDims() + M.numRangeVars() ? "range"
                                                              : "runtime";
      Vars.push_back(Json{{"name", M.varName(I)},
                          {"kind", Kind},
                          {"lo", jsonBound(M.var(I).Bound.Lo)},
                          {"hi", jsonBound(M.var(I).Bound.Hi)}});
    }
    for (Expr R : M.results())
      Exprs.push_back(printExpr(R, &M));
    for (const Constraint &C : M.constraints())
      Cons.push_back(Json{{"expr", printExpr(C.E, &M)},
                          {"lo", jsonBound(C.I.Lo)},
                          {"hi", jsonBound(C.I.Hi)}});
  }
  J["variables"] = std::move(Vars);
  J["exprs"] = std::move(Exprs);
  J["constraints"] = std::move(Cons);
  return ExitOk;
}

namespace {

int runParse(int Argc, char **Argv);

const Command ParseCommand = {
    "parse", "print each map in canonical form (no simplification)",
    "Parses each input map (XLA or MLIR syntax) and prints it in canonical\n"
    "form: one line, default spacing, constraints sorted. Nothing is\n"
    "simplified beyond the builders' local folding. --format=json prints\n"
    "one document: per map its chunk, the map and its parts (variables\n"
    "with bounds, results, constraints; docs/cli-json.schema.json).",
    runParse};

int runParse(int Argc, char **Argv) {
  InputOptions In;
  OutputOptions Out;
  FormatOption Format;
  ArgParser P(ParseCommand);
  In.addTo(P);
  Out.addTo(P);
  Format.addTo(P);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  JsonResults Results("parse");
  int Code = forEachMap(
      In,
      [&](Context &, IndexingMap &M, const MapSource &Src) {
        if (!Format.json())
          return printMapTo(O.os(), M, Out);
        Json J = Results.start(Src);
        if (int Code = addMapFacts(J, M, Out))
          return Code;
        Results.add(std::move(J));
        return int(ExitOk);
      },
      O, /*Separate=*/!Format.json());
  Results.print(O);
  if (!O.close())
    return ExitRejected;
  return Code;
}

CommandRegistration RegisterParse(ParseCommand);

} // namespace
