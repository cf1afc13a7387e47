//===- CmdOps.cpp - `idxmap ops`: what idxmap does with each HLO opcode ---===//
//
// Part of idxmap. Prints, for every opcode of XLA's list, whether idxmap has
// its indexing maps (both directions), evaluates it and compiles it inside
// a fusion, from the libraries' own predicates: docs/HLO_OPS.md is this
// output (a golden test compares them).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "idxmap/Emit.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/HloInterpreter.h"

#include <algorithm>

using namespace idxmap;
using namespace idxmap::cli;

static int runOps(int Argc, char **Argv);

static const Command OpsCommand = {
    "ops", "list what idxmap does with each HLO opcode",
    "Prints a Markdown table with one row per opcode of XLA's HloOpcode\n"
    "list (every one parses and prints back): whether idxmap has its\n"
    "output-to-input and input-to-output indexing maps, whether the\n"
    "reference interpreter evaluates it, and whether the fusion emitters\n"
    "compute it. An op with none of these is opaque: analyses name it and\n"
    "leave it (`unknown indexing`, `cannot evaluate`, a skipped fusion).",
    runOps};
static CommandRegistration RegisterOps(OpsCommand);

static int runOps(int Argc, char **Argv) {
  OutputOptions Out;
  ArgParser P(OpsCommand);
  Out.addTo(P, /*AllowFormat=*/false);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  std::vector<HloOpcode> Ops;
  for (int K = 0; K <= int(HloOpcode::While); ++K)
    Ops.push_back(HloOpcode(K));
  std::sort(Ops.begin(), Ops.end(), [](HloOpcode A, HloOpcode B) {
    return opcodeName(A) < opcodeName(B);
  });
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  auto Mark = [](bool B) { return B ? "yes" : "-"; };
  int64_t Indexed = 0, Evaluated = 0, Emitted = 0, Opaque = 0;
  O << "| opcode | output-to-input | input-to-output | evaluates | emits |\n"
    << "|---|---|---|---|---|\n";
  for (HloOpcode Op : Ops) {
    bool O2I = hasOutputToInputIndexing(Op), I2O = hasInputToOutputIndexing(Op),
         Eval = interpreterEvaluates(Op), Emit = emittersCompute(Op);
    O << "| `" << std::string(opcodeName(Op)) << "` | " << Mark(O2I) << " | "
      << Mark(I2O) << " | " << Mark(Eval) << " | " << Mark(Emit) << " |\n";
    Indexed += O2I;
    Evaluated += Eval;
    Emitted += Emit;
    Opaque += !O2I && !I2O && !Eval && !Emit;
  }
  O << "\n"
    << int64_t(Ops.size()) << " opcodes: " << Indexed
    << " with output-to-input indexing, " << Evaluated << " evaluated, "
    << Emitted << " compiled in fusions, " << Opaque << " opaque.\n";
  return O.close() ? ExitOk : ExitRejected;
}
