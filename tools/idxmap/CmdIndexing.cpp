//===- CmdIndexing.cpp - `idxmap indexing`: HLO indexing maps -------------===//
//
// Part of idxmap. Prints, like XLA, one block per operand (`operand id = N`
// then its maps) for an instruction of an HLO module.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "JsonOutput.h"

#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Print.h"

using namespace idxmap;
using namespace idxmap::cli;

static int runIndexing(int Argc, char **Argv);

static const Command IndexingCommand = {
    "indexing", "print the indexing maps of an HLO instruction",
    "Prints the indexing maps of one instruction of an HLO module: one block\n"
    "per operand, `operand id = N` followed by its maps (or `unknown\n"
    "indexing`). Without --instruction, the ENTRY computation's ROOT is\n"
    "analyzed (as XLA's indexing tests do); with --first-fusion, the root of\n"
    "the module's first fusion's computation (the default before issue 15).\n"
    "With --fusion-root, the maps go from the fusion's output to every\n"
    "parameter of the fused computation (composed through it): the fusion is\n"
    "--instruction NAME, the ENTRY root, or with --first-fusion the first.\n"
    "--direction=input-to-output gives, for --operand K, the maps from that\n"
    "operand's index to the output index. --format=json prints the blocks\n"
    "as one document (see docs/cli-json.schema.json).",
    runIndexing};
static CommandRegistration RegisterIndexing(IndexingCommand);

/// \p Idx as JSON, the blocks of InstructionIndexing::str(\p OnlyOperand):
/// per block its id and maps (null: unknown indexing), each map with its
/// runtime variables and a collective's replica id.
static Json jsonIndexing(const InstructionIndexing &Idx, int64_t OnlyOperand) {
  Json Blocks = Json::array();
  for (size_t K = 0; K < Idx.Operands.size(); ++K) {
    if (OnlyOperand >= 0 && int64_t(K) != OnlyOperand)
      continue;
    Json Maps = Json::array();
    for (const OperandMap &OM : Idx.Operands[K]) {
      if (OM.Map.isUndefined()) {
        Maps.push_back(Json{{"map", nullptr}});
        continue;
      }
      Json J{{"map", printMap(OM.Map)}};
      if (!OM.Bindings.empty()) {
        Json Runtime = Json::array();
        for (const RuntimeBinding &RB : OM.Bindings) {
          std::string Map = printMap(RB.Map);
          Runtime.push_back(jsonBinding(
              RB.Source ? RB.Source->name() : std::string("?"), &Map));
        }
        J["runtime"] = std::move(Runtime);
      }
      if (!OM.ReplicaId.isUndefined())
        J["replica_id"] = printMap(OM.ReplicaId);
      Maps.push_back(std::move(J));
    }
    Blocks.push_back(Json{{"id", K}, {"maps", std::move(Maps)}});
  }
  return Blocks;
}

static int runIndexing(int Argc, char **Argv) {
  std::string Instr, Direction = "output-to-input", OperandText,
                     OutputText = "0";
  bool FusionRoot = false, FirstFusion = false;
  OutputOptions Out;
  HloInputOptions In;
  ArgParser P(IndexingCommand);
  In.addTo(P);
  P.option("--instruction", "NAME", &Instr, "the instruction to analyze");
  P.choice("--direction", {"output-to-input", "input-to-output"}, &Direction,
           "which way the maps go");
  P.option("--operand", "K", &OperandText,
           "only this operand (required for input-to-output)");
  P.option("--output-id", "K", &OutputText,
           "output id of a multi-output instruction (default 0)");
  P.flag("--fusion-root", &FusionRoot,
         "maps from the fusion's output to each fused parameter");
  P.flag("--first-fusion", &FirstFusion,
         "analyze the root of the first fusion's computation");
  Out.addTo(P, /*AllowFormat=*/false);
  FormatOption Format;
  Format.addTo(P);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;

  auto ToInt = [&](const std::string &S, int64_t &V) {
    try {
      size_t Pos;
      V = std::stoll(S, &Pos);
      return Pos == S.size() && V >= 0;
    } catch (...) {
      return false;
    }
  };
  int64_t Operand = -1, OutputId = 0;
  if (!OperandText.empty() && !ToInt(OperandText, Operand))
    return P.usageError("--operand needs a non-negative integer");
  if (!ToInt(OutputText, OutputId))
    return P.usageError("--output-id needs a non-negative integer");
  if (FirstFusion && !Instr.empty())
    return P.usageError("--first-fusion and --instruction exclude each other");
  if (Direction == "input-to-output" && Operand < 0)
    return P.usageError("--direction=input-to-output needs --operand K");

  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  JsonDocuments Docs("indexing", In.Split);
  int Code = forEachHloModule(
      In,
      [&](HloModule &ChunkModule, const Chunk &C) -> int {
        HloModule *M = &ChunkModule;
        const HloModule &Mod = *M;
        const HloInstruction *I = nullptr;
        if (!Instr.empty()) {
          I = Mod.findInstruction(Instr);
          if (!I) {
            printError(displayName(In.File),
                       "no instruction named '" + Instr + "'");
            return ExitRejected;
          }
        } else if (FirstFusion) {
          std::vector<const HloInstruction *> Fusions = Mod.fusions();
          if (Fusions.empty()) {
            printError(displayName(In.File),
                       "--first-fusion: the module has no fusion");
            return ExitRejected;
          }
          I = Fusions.front();
        } else {
          I = Mod.entry()->root();
        }
        // Requests the instruction cannot satisfy are diagnosed at it.
        auto Reject = [&](const std::string &Message) {
          printDiagnostic(Mod.diagnose(I->sourceOffset(), Message));
          return ExitRejected;
        };
        if (FusionRoot && I->opcode() != HloOpcode::Fusion)
          return Reject("--fusion-root needs a fusion instruction, '" +
                        I->name() + "' is " +
                        std::string(opcodeName(I->opcode())));
        if (!FusionRoot && FirstFusion)
          I = I->fusedComputation()->root();
        auto Count = [](int64_t N, const char *What) {
          return std::to_string(N) + " " + What + (N == 1 ? "" : "s");
        };
        if (Operand >= I->operandCount())
          return Reject("--operand " + std::to_string(Operand) +
                        " is out of range: '" + I->name() + "' has " +
                        Count(I->operandCount(), "operand"));
        if (OutputId >= numOutputs(*I))
          return Reject("--output-id " + std::to_string(OutputId) +
                        " is out of range: '" + I->name() + "' has " +
                        Count(numOutputs(*I), "output"));

        Context Ctx;
        InstructionIndexing Idx =
            Direction == "input-to-output"
                ? computeInputToOutputIndexing(Ctx, *I, Operand)
                : computeOutputToInputIndexing(Ctx, *I, OutputId);
        int64_t Only = Direction == "output-to-input" ? Operand : -1;
        if (Format.json()) {
          Json Doc = jsonDocument("indexing");
          Doc["instruction"] = I->name();
          Doc["opcode"] = opcodeName(I->opcode());
          Doc["direction"] = Direction;
          Doc["fusion_root"] = FusionRoot;
          Doc["operands"] = jsonIndexing(Idx, Only);
          Docs.add(C, std::move(Doc));
        } else {
          O << Idx.str(Only);
        }
        return ExitOk;
      },
      Format.json() ? nullptr : &O);
  Docs.print(O);
  return closeHloOutput(In, O, Code);
}
