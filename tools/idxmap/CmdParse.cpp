//===- tools/idxmap/CmdParse.cpp - `idxmap parse` --------------------------===//
//
// Part of idxmap. Parses each input map and prints its canonical form, without
// simplification (the round trip of FORMATS.md).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

using namespace idxmap;
using namespace idxmap::cli;

namespace {

int runParse(int Argc, char **Argv);

const Command ParseCommand = {
    "parse", "print each map in canonical form (no simplification)",
    "Parses each input map (XLA or MLIR syntax) and prints it in canonical\n"
    "form: one line, default spacing, constraints sorted. Nothing is\n"
    "simplified beyond the builders' local folding.",
    runParse};

int runParse(int Argc, char **Argv) {
  InputOptions In;
  OutputOptions Out;
  ArgParser P(ParseCommand);
  In.addTo(P);
  Out.addTo(P);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  int Code = forEachMap(
      In,
      [&](Context &, IndexingMap &M, const MapSource &) {
        return printMapTo(O.os(), M, Out);
      },
      O);
  if (!O.close())
    return ExitRejected;
  return Code;
}

CommandRegistration RegisterParse(ParseCommand);

} // namespace
