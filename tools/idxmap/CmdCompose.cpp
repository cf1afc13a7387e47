//===- tools/idxmap/CmdCompose.cpp - `idxmap compose`
//----------------------===//
//
// Part of idxmap. Prints compose(first, second) = second after first.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "JsonOutput.h"

#include "idxmap/Compose.h"
#include "idxmap/Print.h"

using namespace idxmap;
using namespace idxmap::cli;

namespace {

int runCompose(int Argc, char **Argv);

const Command ComposeCommand = {
    "compose", "print compose(FIRST, SECOND), second after first",
    "Composes FIRST: A -> B with SECOND: B -> C into A -> C (XLA's semantics:\n"
    "result symbols are [SECOND's range vars, FIRST's range vars, SECOND's\n"
    "runtime vars, FIRST's runtime vars]; the domain keeps FIRST's\n"
    "constraints, SECOND's constraints on FIRST's results and\n"
    "FIRST.result_i in SECOND.dim_i). The result is printed unsimplified\n"
    "unless --simplify is given. FIRST's number of results must equal\n"
    "SECOND's number of dims. With UNDEFINED the result is UNDEFINED, with\n"
    "KNOWN EMPTY it is KNOWN EMPTY.\n\n"
    "With --split-input-file, give one FILE: its '// -----' chunks are taken\n"
    "in pairs (FIRST, SECOND) and the results are separated by '// -----'.\n"
    "--format=json prints one document: per pair its index, where FIRST and\n"
    "SECOND start, both maps and the composition with its parts\n"
    "(docs/cli-json.schema.json).",
    runCompose};

/// Where FIRST came from: the diagnostic of an arity mismatch points at its
/// results.
struct FirstSource {
  std::string_view Text;
  std::string FileName;
  unsigned FirstLine = 1;
  /// SECOND's display name (for the message).
  std::string SecondName;
};

/// The offset of the results' list in \p Text: the first non-blank byte
/// after the first `->` (0 if there is none).
size_t resultsOffset(std::string_view Text) {
  size_t Arrow = Text.find("->");
  if (Arrow == std::string_view::npos)
    return 0;
  size_t Pos = Arrow + 2;
  while (Pos < Text.size() && (Text[Pos] == ' ' || Text[Pos] == '\t' ||
                               Text[Pos] == '\n' || Text[Pos] == '\r'))
    ++Pos;
  return Pos;
}

/// Prints one composition: the text, or a result of the JSON document.
using PrintResult = std::function<int(const IndexingMap &R)>;

/// Composes and prints; returns an exit code.
int composeAndPrint(IndexingMap &First, IndexingMap &Second,
                    const FirstSource &Where, bool Simplify,
                    const SimplifyFlags &Flags, SimplifyStats *Stats,
                    const PrintResult &Print) {
  if (First.isUndefined() || Second.isUndefined()) {
    return Print(IndexingMap::undefined());
  }
  // `KNOWN EMPTY` read from text has lost its shape: any composition with an
  // empty map is empty, whatever the numbers of results and dims.
  if (First.isKnownEmpty() || Second.isKnownEmpty()) {
    return Print(IndexingMap::knownEmpty(First.context()));
  }
  if (First.numResults() != Second.numDims()) {
    printDiagnostic(makeDiagnostic(
        Where.Text, resultsOffset(Where.Text),
        "cannot compose: the first map has " +
            std::to_string(First.numResults()) + " results but the second (" +
            Where.SecondName + ") has " + std::to_string(Second.numDims()) +
            " dims",
        Where.FileName, Where.FirstLine));
    return ExitRejected;
  }
  IndexingMap R = compose(First, Second);
  if (Simplify)
    simplifyMap(R, Flags, Stats);
  return Print(R);
}

/// The output of compose: the text, or with --format=json one result per
/// pair ("chunk": the pair's index, "first_line" and "second_line": where
/// FIRST and SECOND start, "first" and "second": the maps as read, then the
/// composition's facts).
struct ComposeOutput {
  const OutputOptions &Out;
  OutputFile &O;
  bool Json;
  JsonResults Results{"compose"};

  PrintResult printer(unsigned Pair, unsigned FirstLine, unsigned SecondLine,
                      const IndexingMap &First, const IndexingMap &Second) {
    if (!Json)
      return
          [this](const IndexingMap &R) { return printMapTo(O.os(), R, Out); };
    cli::Json Head{{"chunk", Pair},
                   {"first_line", FirstLine},
                   {"second_line", SecondLine},
                   {"first", printMap(First)},
                   {"second", printMap(Second)}};
    return [this, Head](const IndexingMap &R) {
      cli::Json J = Head;
      if (int Code = addMapFacts(J, R, Out))
        return Code;
      Results.add(std::move(J));
      return int(ExitOk);
    };
  }
};

/// loadSingleMap() that keeps the text (for diagnostics about the map).
std::optional<IndexingMap> loadWithText(Context &Ctx, const std::string &Path,
                                        InputFormat Format,
                                        std::string &Buffer) {
  if (auto Err = readInput(Path, Buffer)) {
    printError("idxmap", *Err);
    return std::nullopt;
  }
  std::string FileName = displayName(Path);
  if (isBlank(Buffer)) {
    printDiagnostic(makeDiagnostic(Buffer, Buffer.size(),
                                   "expected an indexing map, found no input",
                                   FileName, 1));
    return std::nullopt;
  }
  ParseOptions PO;
  PO.Format = Format;
  PO.FileName = FileName;
  auto M = parseIndexingMap(Ctx, Buffer, PO);
  if (!M) {
    printDiagnostic(M.error());
    return std::nullopt;
  }
  return std::move(*M);
}

/// Parses one split chunk; prints the diagnostic on failure.
std::optional<IndexingMap> parseChunk(Context &Ctx, const Chunk &C,
                                      const std::string &FileName,
                                      InputFormat Format) {
  ParseOptions PO;
  PO.Format = Format;
  PO.FileName = FileName;
  PO.FirstLine = C.FirstLine;
  auto M = parseIndexingMap(Ctx, C.Text, PO);
  if (!M) {
    printDiagnostic(M.error());
    return std::nullopt;
  }
  return std::move(*M);
}

int runPairs(const InputOptions &In, const SimplifyFlags &Flags, bool Simplify,
             SimplifyStats *Stats, ComposeOutput &Output) {
  OutputFile &O = Output.O;
  std::string Buffer;
  if (auto Err = readInput(In.File, Buffer)) {
    printError("idxmap", *Err);
    return ExitRejected;
  }
  std::string FileName = displayName(In.File);
  std::vector<Chunk> Chunks;
  for (const Chunk &C : splitInputFile(Buffer))
    if (!isBlank(C.Text))
      Chunks.push_back(C);
  if (Chunks.empty()) {
    printDiagnostic(makeDiagnostic(Buffer, Buffer.size(),
                                   "expected an indexing map, found no input",
                                   FileName, 1));
    return ExitRejected;
  }
  if (Chunks.size() % 2 != 0) {
    // Located at the map that has no partner.
    printDiagnostic(makeDiagnostic(
        Buffer, size_t(Chunks.back().Text.data() - Buffer.data()),
        "compose --split-input-file needs an even number of maps (pairs "
        "FIRST, SECOND), found " +
            std::to_string(Chunks.size()),
        FileName, 1));
    return ExitRejected;
  }
  int Worst = ExitOk;
  for (size_t I = 0; I < Chunks.size(); I += 2) {
    if (I > 0 && !Output.Json)
      O << "// -----\n";
    Context Ctx;
    auto First = parseChunk(Ctx, Chunks[I], FileName, In.format());
    auto Second = parseChunk(Ctx, Chunks[I + 1], FileName, In.format());
    int Code = ExitRejected;
    FirstSource Where{Chunks[I].Text, FileName, Chunks[I].FirstLine,
                      FileName + ":" + std::to_string(Chunks[I + 1].FirstLine)};
    if (First && Second)
      Code = composeAndPrint(
          *First, *Second, Where, Simplify, Flags, Stats,
          Output.printer(unsigned(I / 2), Chunks[I].FirstLine,
                         Chunks[I + 1].FirstLine, *First, *Second));
    Worst = std::max(Worst, Code);
  }
  return Worst;
}

int runCompose(int Argc, char **Argv) {
  InputOptions In;
  std::string SecondFile;
  bool SecondGiven = false;
  OutputOptions Out;
  SimplifyFlags Flags;
  bool Simplify = false;
  ArgParser P(ComposeCommand);
  In.addTo(P, /*AllowSplit=*/true, "FIRST", /*Required=*/true);
  P.positional("SECOND", &SecondFile, "the map applied second", true);
  Out.addTo(P);
  P.flag("--simplify", &Simplify, "simplify the composition");
  Flags.addTo(P);
  FormatOption Format;
  Format.addTo(P);
  P.check([&]() -> std::string {
    SecondGiven = !SecondFile.empty();
    if (In.Split && SecondGiven)
      return "with --split-input-file give one FILE holding pairs of maps";
    if (!In.Split && !SecondGiven)
      return "missing argument SECOND";
    if (SecondGiven && In.File == "-" && SecondFile == "-")
      return "FIRST and SECOND cannot both be standard input";
    if (!Simplify &&
        (Flags.RemoveUnused || Flags.PreserveDims || Flags.Exact.Exact))
      return "--remove-unused, --preserve-dims and --exact need --simplify";
    return "";
  });
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  SimplifyStats Stats;
  SimplifyStats *StatsPtr = Flags.Stats ? &Stats : nullptr;
  int Code;
  ComposeOutput Output{Out, O, Format.json()};
  if (In.Split) {
    Code = runPairs(In, Flags, Simplify, StatsPtr, Output);
  } else {
    Context Ctx;
    std::string FirstText;
    auto First = loadWithText(Ctx, In.File, In.format(), FirstText);
    auto Second =
        First ? loadSingleMap(Ctx, SecondFile, In.format()) : std::nullopt;
    if (!First || !Second)
      Code = ExitRejected;
    else
      Code = composeAndPrint(*First, *Second,
                             FirstSource{FirstText, displayName(In.File), 1,
                                         displayName(SecondFile)},
                             Simplify, Flags, StatsPtr,
                             Output.printer(0, 1, 1, *First, *Second));
  }
  Output.Results.print(O);
  if (Flags.Stats)
    printStats(Stats);
  if (!O.close())
    return ExitRejected;
  return Code;
}

CommandRegistration RegisterCompose(ComposeCommand);

} // namespace
