//===- CmdDraw.cpp - `idxmap draw`: maps and kernel plans as SVG ----------===//
//
// Part of idxmap. Draws a map's output elements as a grid of cells (labelled
// by the variables that reach them, colored by a thread, a warp or any
// variable), or a fusion's kernel plan: the thread map over its output or
// hero operand, or a transpose's shared tile with banks and threads. The
// cells come from the library (idxmap/Layout.h); SvgWriter.cpp writes them.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Environment.h"
#include "SvgWriter.h"

#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/KernelPlan.h"
#include "idxmap/Layout.h"
#include "idxmap/Parse.h"
#include "idxmap/Print.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sys/stat.h>

using namespace idxmap;
using namespace idxmap::cli;

static int runDraw(int Argc, char **Argv);

static const Command DrawCommand = {
    "draw", "draw a map or a kernel plan's layout as SVG",
    "Draws MAP (a map's text, or a file holding one) as an SVG grid of its\n"
    "output elements: the last output is the column, the one before it the\n"
    "row, any earlier ones a panel each. Every point of the domain is\n"
    "enumerated (--fix pins variables); each cell is labelled by the first\n"
    "point that reaches it (the dims' values, T<n> for th_x) and colored by\n"
    "--color-by (a variable, `thread`, or `warp` = thread floordiv 32; by\n"
    "default the warp when the map has a dim th_x, else the first dim).\n"
    "Cells no point reaches are blank; cells reached several times have a\n"
    "red border and their count.\n"
    "An HLO module (a .hlo file, or text with HloModule or ENTRY) draws the\n"
    "kernel plan of one fusion (--fusion, else the first): for loop,\n"
    "reduction and row-normalization plans the thread map (analyze's) of\n"
    "block --block over its target's elements, colored by warp; for a\n"
    "transpose the shared-memory tile, each element with its bank and the\n"
    "threads that store and load it, colored by bank (--color-by=writer or\n"
    "reader: by their warp; --show=threads draws its thread map instead).\n"
    "Enumeration and drawing have budgets (--max-points, --max-cells);\n"
    "over one is an error (exit 1) that names the options choosing less.\n"
    "With --split-input-file each `// -----` chunk of FILE (a map or a\n"
    "module) is drawn on its own: one SVG document per chunk, separated by\n"
    "`// -----` lines (a chunk that fails leaves its section empty).",
    runDraw};
static CommandRegistration RegisterDraw(DrawCommand);

namespace {

/// A whole int64 with an optional sign, or nullopt.
std::optional<int64_t> parseInt(std::string_view Text) {
  std::string S(Text);
  if (S.empty())
    return std::nullopt;
  size_t I = (S[0] == '-' || S[0] == '+') ? 1 : 0;
  if (I == S.size())
    return std::nullopt;
  for (size_t K = I; K < S.size(); ++K)
    if (S[K] < '0' || S[K] > '9')
      return std::nullopt;
  errno = 0;
  long long V = std::strtoll(S.c_str(), nullptr, 10);
  if (errno == ERANGE)
    return std::nullopt;
  return int64_t(V);
}

std::vector<std::string> splitList(const std::string &S) {
  std::vector<std::string> Out;
  size_t Start = 0;
  while (Start <= S.size() && !S.empty()) {
    size_t End = S.find(',', Start);
    if (End == std::string::npos)
      End = S.size();
    Out.push_back(S.substr(Start, End - Start));
    Start = End + 1;
  }
  return Out;
}

/// `LO:HI` or `N` (one index).
std::optional<Interval> parseRange(const std::string &S) {
  size_t Colon = S.find(':');
  auto Lo = parseInt(S.substr(0, Colon));
  auto Hi = Colon == std::string::npos ? Lo : parseInt(S.substr(Colon + 1));
  if (!Lo || !Hi || *Lo > *Hi)
    return std::nullopt;
  return Interval{*Lo, *Hi};
}

/// True when \p Text looks like an HLO module rather than a map.
bool looksLikeHlo(const std::string &Path, std::string_view Text) {
  if (Path.size() > 4 && Path.compare(Path.size() - 4, 4, ".hlo") == 0)
    return true;
  return Text.find("HloModule") != std::string_view::npos ||
         Text.find("ENTRY") != std::string_view::npos;
}

struct DrawOptions {
  MapLayoutOptions Map;
  std::string ColorBy, Fusion, Show = "auto", SubTile = "0", DeviceName;
  std::string Tune;
  int64_t Block = 0;
};

/// Draws the plan of one fusion of \p M. Returns the exit code; the SVG in
/// \p Svg.
int drawModule(const HloModule &M, const std::string &File, DrawOptions &D,
               const ArgParser &P, std::string &Svg) {
  Tuning Overrides;
  tuningFromEnvironment(Overrides);
  if (!D.Tune.empty())
    if (auto Err = parseTuning(D.Tune, Overrides))
      return P.usageError(*Err);
  if (auto Err = validateTuning(Overrides))
    return P.usageError("--tune: " + *Err);
  auto Device = readDeviceOption(D.DeviceName);
  if (!Device) {
    if (Device.error().Loc.File.empty())
      return P.usageError(Device.error().Message);
    printDiagnostic(Device.error());
    return ExitRejected;
  }
  const HloInstruction *Fusion = nullptr;
  std::vector<const HloInstruction *> Fusions = kernelFusions(M);
  for (const HloInstruction *F : Fusions) {
    if (!D.Fusion.empty() && F->name() != D.Fusion)
      continue;
    if (D.Fusion.empty() && findUnmodeledInstruction(*F->fusedComputation()))
      continue;
    Fusion = F;
    break;
  }
  if (!D.Fusion.empty() && !Fusion) {
    printError(displayName(File), "no fusion named '" + D.Fusion + "'");
    return ExitRejected;
  }
  if (!Fusion && !Fusions.empty()) {
    printError(displayName(File), "no fusion of the module has a kernel plan");
    return ExitRejected;
  }
  const HloComputation &C = Fusion ? *Fusion->fusedComputation() : *M.entry();
  if (auto U = findUnmodeledInstruction(C)) {
    printDiagnostic(
        M.diagnose(U->Instruction->sourceOffset(),
                   std::string(Fusion ? "fusion '" + Fusion->name() + "': "
                                      : "the ENTRY computation: ") +
                       U->Reason));
    return ExitRejected;
  }
  if (Fusion && D.Fusion.empty() && Fusions.size() > 1)
    std::cerr << "idxmap draw: note: drawing fusion '" << Fusion->name()
              << "', the first of " << Fusions.size()
              << " (--fusion NAME draws another)\n";
  FusionAnalysis A = Fusion ? analyzeFusion(*Fusion) : analyzeComputation(C);
  Context Ctx;
  Expected<KernelPlan> Plan = planFusion(Ctx, A, Overrides, *Device, Fusion);
  if (!Plan) {
    printDiagnostic(Plan.error());
    return ExitRejected;
  }
  std::string Name = Fusion ? Fusion->name() : C.name();
  std::string Launch = "grid [" + std::to_string(Plan->Grid[0]) + ", " +
                       std::to_string(Plan->Grid[1]) + ", " +
                       std::to_string(Plan->Grid[2]) + "], block [" +
                       std::to_string(Plan->Block[0]) + ", " +
                       std::to_string(Plan->Block[1]) + ", " +
                       std::to_string(Plan->Block[2]) + "]";
  bool Tile = Plan->Transpose && D.Show != "threads";
  if (D.Show == "tile" && !Plan->Transpose) {
    printError(displayName(File),
               "fusion '" + Name + "' is planned for the " + Plan->Emitter +
                   " emitter: it has no shared tile to draw");
    return ExitRejected;
  }
  Layout L;
  if (Tile) {
    const TransposeTiling &T = Plan->Transpose->Tiling;
    TileColor Color = TileColor::Bank;
    if (D.ColorBy == "writer")
      Color = TileColor::Writer;
    else if (D.ColorBy == "reader")
      Color = TileColor::Reader;
    else if (!D.ColorBy.empty() && D.ColorBy != "bank")
      return P.usageError("--color-by for a transpose's tile: bank, writer "
                          "or reader, not '" +
                          D.ColorBy + "'");
    int64_t Sub = 0;
    if (D.SubTile == "all")
      Sub = -1;
    else if (auto S = parseInt(D.SubTile); S && *S >= 0 && *S < T.subTiles())
      Sub = *S;
    else
      return P.usageError("--sub-tile: 'all' or a sub-tile from 0 to " +
                          std::to_string(T.subTiles() - 1));
    // The tile's elements: the plan's shared bytes are exactly the tiles'
    // (TransposeEmitter.cpp asserts it).
    int64_t Elements = T.subTiles() * 32 * 32 * T.V;
    int64_t Bytes = Elements ? Plan->SharedBytes / Elements : 0;
    if (Bytes <= 0)
      Bytes = 4;
    L = transposeTileLayout(T, Bytes, Color, Sub);
    L.Notes.insert(L.Notes.begin(), "plan: transpose, " + Launch);
    L.Title = "fusion " + Name + ": " + L.Title;
  } else {
    const ThreadMapping &TM = Plan->Main;
    if (TM.Map.isUndefined()) {
      printError(displayName(File),
                 "fusion '" + Name + "' has no thread map to draw");
      return ExitRejected;
    }
    MapLayoutOptions O = D.Map;
    bool HasBlock = false;
    for (const auto &F : O.Fixed)
      HasBlock = HasBlock || F.first == "bl_x";
    if (!HasBlock) {
      if (D.Block < 0 || D.Block >= TM.Blocks)
        return P.usageError("--block: from 0 to " +
                            std::to_string(TM.Blocks - 1));
      O.Fixed.push_back({"bl_x", D.Block});
    }
    O.ColorBy = D.ColorBy;
    O.FitCells = std::min<int64_t>(O.MaxCells, 2048);
    Expected<Layout> ML = computeMapLayout(TM.Map, O);
    if (!ML) {
      printError(displayName(File),
                 "fusion '" + Name + "': " + ML.error().Message);
      return ExitRejected;
    }
    L = std::move(*ML);
    L.Title = "fusion " + Name + ": thread map of the " + Plan->Emitter +
              " plan to " + (TM.Target ? TM.Target->name() : "?") + " " +
              (TM.Target ? TM.Target->shape().str() : "");
    L.Notes.insert(L.Notes.begin(), "plan: " + Plan->Emitter + ", " + Launch +
                                        ", " + std::to_string(TM.Blocks) +
                                        " blocks of the mapping");
  }
  Svg = writeLayoutSvg(L);
  return ExitOk;
}

} // namespace

static int runDraw(int Argc, char **Argv) {
  std::string Input = "-", Fix, Label, Panel, Rows, Cols, MaxPoints, MaxCells,
              Block, Format = "auto";
  DrawOptions D;
  D.DeviceName = "H100";
  OutputOptions Out;
  ArgParser P(DrawCommand);
  P.positional("MAP|FILE", &Input,
               "a map's text, a file holding one, or an HLO module (- for "
               "stdin)",
               /*Optional=*/true);
  bool Split = false;
  P.flag("--split-input-file", &Split,
         "treat '// -----' lines of FILE as separators between maps or HLO "
         "modules");
  addVerifyFlag(P);
  P.option("--fix", "NAME=V[,...]", &Fix,
           "pin variables to one value each (e.g. bl_x=0)");
  P.option("--color-by", "KEY", &D.ColorBy,
           "a variable, thread or warp (maps, thread maps); bank, writer or "
           "reader (a transpose's tile)");
  P.option("--label", "NAMES", &Label,
           "variables that label a cell (default: the dims not pinned)");
  P.option("--panel", "V[,...]", &Panel,
           "draw only the panel of these leading output values");
  P.option("--rows", "LO:HI", &Rows,
           "draw only these indices of the second-to-last output");
  P.option("--cols", "LO:HI", &Cols,
           "draw only these indices of the last output");
  P.option("--max-points", "N", &MaxPoints,
           "domain points enumerated at most (default 4194304)");
  P.option("--max-cells", "N", &MaxCells,
           "cells drawn at most, blank ones included (default 16384)");
  P.option("--fusion", "NAME", &D.Fusion,
           "HLO: the fusion to draw (default: the first with a plan)");
  P.option("--block", "N", &Block,
           "HLO: the block of the thread map drawn (default 0)");
  P.choice("--show", {"auto", "tile", "threads"}, &D.Show,
           "HLO: a transpose's tile (auto) or its thread map");
  P.option("--sub-tile", "N|all", &D.SubTile,
           "HLO: the transpose's sub-tile drawn (default 0)");
  bool DeviceSeen = false;
  P.option("--device", "NAME|FILE.json", &D.DeviceName,
           "HLO: the GPU planned for, as analyze (default H100)",
           /*Required=*/false, &DeviceSeen);
  P.listOption("--tune", "NAME=VALUE[,...]", &D.Tune,
               "HLO: tuning knobs, as analyze");
  P.choice("--input-format", {"auto", "xla", "mlir"}, &Format,
           "the map's syntax, as simplify");
  Out.addTo(P, /*AllowFormat=*/false);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;

  MapLayoutOptions &O = D.Map;
  for (const std::string &F : splitList(Fix)) {
    size_t Eq = F.find('=');
    auto V =
        Eq == std::string::npos ? std::nullopt : parseInt(F.substr(Eq + 1));
    if (!V || Eq == 0)
      return P.usageError("--fix needs NAME=VALUE[,...], not '" + F + "'");
    O.Fixed.push_back({F.substr(0, Eq), *V});
  }
  for (const std::string &N : splitList(Label))
    O.LabelVars.push_back(N);
  for (const std::string &V : splitList(Panel)) {
    auto X = parseInt(V);
    if (!X)
      return P.usageError("--panel needs integers, not '" + V + "'");
    O.Panel.push_back(*X);
  }
  if (!Rows.empty() && !(O.RowWindow = parseRange(Rows)))
    return P.usageError("--rows needs LO:HI with LO <= HI, not '" + Rows + "'");
  if (!Cols.empty() && !(O.ColWindow = parseRange(Cols)))
    return P.usageError("--cols needs LO:HI with LO <= HI, not '" + Cols + "'");
  // A budget's value: 1 to 2^32 (an empty text keeps the default).
  auto Budget = [&](const std::string &Text, int64_t &Into) -> bool {
    if (Text.empty())
      return true;
    auto N = parseUnsigned(Text, 1, uint64_t(1) << 32);
    if (!N)
      return false;
    Into = int64_t(*N);
    return true;
  };
  if (!Budget(MaxPoints, O.MaxPoints))
    return P.usageError("--max-points needs an integer from 1 to 2^32");
  if (!Budget(MaxCells, O.MaxCells))
    return P.usageError("--max-cells needs an integer from 1 to 2^32");
  if (!Block.empty()) {
    auto N = parseUnsigned(Block, 0, uint64_t(1) << 40);
    if (!N)
      return P.usageError("--block needs a whole number");
    D.Block = int64_t(*N);
  }

  // MAP: a file when one exists (or "-"), else the map's own text.
  std::string Text, FileName = Input;
  struct stat St;
  bool IsFile = Input == "-" || ::stat(Input.c_str(), &St) == 0;
  if (IsFile) {
    if (auto Err = readInput(Input, Text)) {
      printError(displayName(Input), *Err);
      return ExitRejected;
    }
    FileName = displayName(Input);
  } else if (Input.find("->") != std::string::npos ||
             Input.find("affine_map") != std::string::npos) {
    Text = Input;
    FileName = "<map>";
  } else {
    printError("idxmap", "cannot open '" + Input +
                             "': " + std::strerror(ENOENT) +
                             " (nor is it a map: no '->')");
    return ExitRejected;
  }

  // Draws one map or module: \p ChunkText starts at line \p FirstLine of
  // the input (diagnostics give the file's lines).
  auto DrawChunk = [&](std::string_view ChunkText, unsigned FirstLine,
                       std::string &Svg) -> int {
    if (looksLikeHlo(IsFile ? Input : "", ChunkText)) {
      std::string Padded(FirstLine - 1, '\n');
      Padded += ChunkText;
      auto M = parseHloModule(Padded, FileName);
      if (!M) {
        printDiagnostic(M.error());
        return ExitRejected;
      }
      return drawModule(**M, Input, D, P, Svg);
    }
    if (!D.Fusion.empty() || !Block.empty() || D.Show != "auto" ||
        D.SubTile != "0" || DeviceSeen || !D.Tune.empty())
      return P.usageError("--fusion, --block, --show, --sub-tile, --device "
                          "and --tune apply to HLO modules");
    if (isBlank(ChunkText)) {
      printDiagnostic(makeDiagnostic(ChunkText, ChunkText.size(),
                                     "expected an indexing map, found no input",
                                     FileName, FirstLine));
      return ExitRejected;
    }
    Context Ctx;
    ParseOptions PO;
    PO.Format = Format == "xla"    ? InputFormat::Xla
                : Format == "mlir" ? InputFormat::Mlir
                                   : InputFormat::Auto;
    PO.FileName = FileName;
    PO.FirstLine = FirstLine;
    auto M = parseIndexingMap(Ctx, ChunkText, PO);
    if (!M) {
      printDiagnostic(M.error());
      return ExitRejected;
    }
    O.ColorBy = D.ColorBy;
    Expected<Layout> L = computeMapLayout(*M, O);
    if (!L) {
      printError(FileName, L.error().Message);
      return ExitRejected;
    }
    L->Title = "idxmap draw: " + (IsFile ? FileName : std::string("map"));
    Svg = writeLayoutSvg(*L);
    return ExitOk;
  };
  if (!Split) {
    std::string Svg;
    if (int Code = DrawChunk(Text, 1, Svg))
      return Code;
    OutputFile OF;
    if (!OF.open(Out))
      return ExitRejected;
    OF << Svg;
    return OF.close() ? ExitOk : ExitRejected;
  }
  std::vector<Chunk> Chunks;
  for (const Chunk &C : splitInputFile(Text))
    if (!isBlank(C.Text))
      Chunks.push_back(C);
  if (Chunks.empty()) {
    printDiagnostic(
        makeDiagnostic(Text, Text.size(),
                       "expected an indexing map or an HLO module, found "
                       "no input",
                       FileName));
    return ExitRejected;
  }
  OutputFile OF;
  if (!OF.open(Out))
    return ExitRejected;
  int Worst = ExitOk;
  for (size_t I = 0; I < Chunks.size(); ++I) {
    if (I > 0)
      OF << "// -----\n";
    std::string Svg;
    int Code = DrawChunk(Chunks[I].Text, Chunks[I].FirstLine, Svg);
    if (Code == ExitOk)
      OF << Svg;
    Worst = std::max(Worst, Code);
  }
  return OF.close() ? Worst : int(ExitRejected);
}
