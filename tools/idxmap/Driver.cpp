//===- tools/idxmap/Driver.cpp - Chunks, verbosity, verify-diagnostics ----===//
//
// Part of idxmap. How every command walks its input (one buffer, or one
// chunk per `// -----` section with --split-input-file, for maps and HLO
// modules alike), how loud it is (-q, -v), and --verify-diagnostics, which
// checks the diagnostics a run printed against the `expected-error`
// comments of its input, as mlir-opt does.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace idxmap {
namespace cli {

//===----------------------------------------------------------------------===//
// Verbosity
//===----------------------------------------------------------------------===//

Verbosity &verbosity() {
  static Verbosity V = Verbosity::Normal;
  return V;
}

void printNote(const std::string &Msg) {
  if (verbosity() == Verbosity::Quiet)
    return;
  if (captureDiagnostic("note", "", 0, Msg))
    return;
  std::cerr << "idxmap: note: " << Msg << "\n";
}

void printVerbose(const std::string &Msg) {
  if (verbosity() != Verbosity::Verbose)
    return;
  std::cerr << "idxmap: note: " << Msg << "\n";
}

//===----------------------------------------------------------------------===//
// --verify-diagnostics
//===----------------------------------------------------------------------===//

namespace {
struct Produced {
  std::string Kind, File, Message;
  unsigned Line; // 0: no location.
  bool Matched = false;
};

struct Expectation {
  std::string Kind, Text;
  unsigned Line;       // The line the diagnostic must be on.
  unsigned SourceLine; // The line of the comment.
  unsigned Col;        // The column of `expected-`.
  bool Matched = false;
};

struct VerifyState {
  bool Enabled = false;
  /// The input buffers read, by display name, in reading order.
  std::vector<std::pair<std::string, std::string>> Buffers;
  std::vector<Produced> Diags;
};

VerifyState &verifyState() {
  static VerifyState S;
  return S;
}

/// The directives `expected-KIND[@+N|@-N] {{TEXT}}` of \p Buffer (lines
/// counted from 1). Malformed ones are reported into \p Errors.
std::vector<Expectation> findExpectations(const std::string &File,
                                          std::string_view Buffer,
                                          std::vector<std::string> &Errors) {
  std::vector<Expectation> Out;
  unsigned Line = 1;
  size_t LineStart = 0;
  for (size_t Pos = 0; Pos <= Buffer.size(); ++Pos) {
    if (Pos < Buffer.size() && Buffer[Pos] != '\n')
      continue;
    std::string_view L = Buffer.substr(LineStart, Pos - LineStart);
    size_t At = 0;
    while ((At = L.find("expected-", At)) != std::string_view::npos) {
      size_t Col = At + 1;
      size_t K = At + 9, KE = K;
      while (KE < L.size() && L[KE] >= 'a' && L[KE] <= 'z')
        ++KE;
      std::string Kind(L.substr(K, KE - K));
      At = KE;
      if (Kind != "error" && Kind != "warning" && Kind != "note" &&
          Kind != "remark")
        continue;
      auto Bad = [&](const std::string &Why) {
        Errors.push_back(File + ":" + std::to_string(Line) + ":" +
                         std::to_string(Col) + ": error: " + Why);
      };
      long Offset = 0;
      size_t P = KE;
      if (P < L.size() && L[P] == '@') {
        ++P;
        bool Neg = P < L.size() && L[P] == '-';
        if (P >= L.size() || (L[P] != '+' && L[P] != '-')) {
          Bad("expected '@+N' or '@-N' after 'expected-" + Kind + "'");
          continue;
        }
        ++P;
        size_t DS = P;
        while (P < L.size() && L[P] >= '0' && L[P] <= '9')
          Offset = Offset * 10 + (L[P++] - '0');
        if (P == DS || Offset > 1000000) {
          Bad("expected a line offset after '@'");
          continue;
        }
        if (Neg)
          Offset = -Offset;
      }
      while (P < L.size() && L[P] == ' ')
        ++P;
      // Prose that mentions expected-error is no directive: as in
      // mlir-opt, only `expected-KIND ... {{` counts.
      if (L.substr(P, 2) != "{{")
        continue;
      size_t Close = L.find("}}", P + 2);
      if (Close == std::string_view::npos) {
        Bad("expected '}}' to end 'expected-" + Kind + "'");
        continue;
      }
      long Target = long(Line) + Offset;
      if (Target < 1) {
        Bad("'expected-" + Kind + "' points before the first line");
        continue;
      }
      Out.push_back({Kind, std::string(L.substr(P + 2, Close - P - 2)),
                     unsigned(Target), Line, unsigned(Col)});
      At = Close + 2;
    }
    ++Line;
    LineStart = Pos + 1;
  }
  return Out;
}
} // namespace

void addVerifyFlag(ArgParser &P) {
  P.flag("--verify-diagnostics", &verifyState().Enabled,
         "check the diagnostics against the input's 'expected-error "
         "{{...}}' comments (exit 0 when they all match)");
}

bool verifyingDiagnostics() { return verifyState().Enabled; }

void registerInputBuffer(const std::string &Name, std::string_view Text) {
  VerifyState &S = verifyState();
  if (S.Enabled)
    S.Buffers.emplace_back(Name, std::string(Text));
}

bool captureDiagnostic(const char *Kind, const std::string &File, unsigned Line,
                       const std::string &Message) {
  VerifyState &S = verifyState();
  if (!S.Enabled)
    return false;
  S.Diags.push_back({Kind, File, Message, Line});
  return true;
}

int finishVerify(int Code) {
  VerifyState &S = verifyState();
  if (!S.Enabled || Code == ExitUsage)
    return Code;
  std::vector<std::string> Errors;
  std::vector<std::pair<std::string, std::vector<Expectation>>> Expected;
  for (auto &[Name, Text] : S.Buffers) {
    bool Seen = std::any_of(Expected.begin(), Expected.end(),
                            [&](const auto &E) { return E.first == Name; });
    if (!Seen)
      Expected.emplace_back(Name, findExpectations(Name, Text, Errors));
  }
  for (Produced &D : S.Diags) {
    for (auto &[Name, List] : Expected) {
      if (Name != D.File || D.Matched)
        continue;
      for (Expectation &E : List)
        if (!E.Matched && E.Kind == D.Kind && E.Line == D.Line &&
            D.Message.find(E.Text) != std::string::npos) {
          E.Matched = D.Matched = true;
          break;
        }
    }
  }
  for (auto &[Name, List] : Expected)
    for (const Expectation &E : List)
      if (!E.Matched)
        Errors.push_back(Name + ":" + std::to_string(E.SourceLine) + ":" +
                         std::to_string(E.Col) + ": error: expected " + E.Kind +
                         " \"" + E.Text + "\" was not produced" +
                         (E.Line != E.SourceLine
                              ? " (at line " + std::to_string(E.Line) + ")"
                              : ""));
  for (const Produced &D : S.Diags) {
    if (D.Matched)
      continue;
    // Unexpected notes do not fail the check (mlir-opt ignores them too
    // unless expected ones are given); errors and warnings do.
    if (D.Kind == "note" || D.Kind == "remark")
      continue;
    std::string Where = D.File.empty() ? "idxmap" : D.File;
    if (D.Line > 0)
      Where += ":" + std::to_string(D.Line);
    Errors.push_back(Where + ": error: unexpected " + D.Kind + ": " +
                     D.Message);
  }
  for (const std::string &E : Errors)
    std::cerr << E << "\n";
  return Errors.empty() ? int(ExitOk) : int(ExitRejected);
}

//===----------------------------------------------------------------------===//
// Chunks
//===----------------------------------------------------------------------===//

void InputOptions::addTo(ArgParser &P, bool AllowSplit,
                         const char *PositionalName, bool Required) {
  P.positional(PositionalName, &File, "input file, or - for stdin",
               /*Optional=*/!Required);
  P.choice("--input-format", {"auto", "xla", "mlir", "isl"}, &Format,
           "syntax of the input maps");
  if (AllowSplit)
    P.flag("--split-input-file", &Split,
           "treat '// -----' lines as separators between maps");
  addVerifyFlag(P);
}

void HloInputOptions::addTo(ArgParser &P) {
  P.positional("FILE", &File, "HLO module, or - for stdin", true);
  P.flag("--split-input-file", &Split,
         "treat '// -----' lines as separators between HLO modules");
  addVerifyFlag(P);
}

int forEachChunk(const std::string &Path, bool Split, const ChunkAction &Action,
                 OutputFile *O, const char *Nothing) {
  std::string Buffer;
  if (auto Err = readInput(Path, Buffer)) {
    printError("idxmap", *Err);
    return ExitRejected;
  }
  std::string FileName = displayName(Path);
  std::vector<Chunk> Chunks;
  if (!Split) {
    Chunks.push_back({Buffer, 1});
  } else {
    for (const Chunk &C : splitInputFile(Buffer))
      if (!isBlank(C.Text))
        Chunks.push_back(C);
    if (Chunks.empty()) {
      printDiagnostic(makeDiagnostic(Buffer, Buffer.size(), Nothing, FileName));
      return ExitRejected;
    }
  }
  int Worst = ExitOk;
  for (size_t I = 0; I < Chunks.size(); ++I) {
    if (I > 0 && O)
      *O << "// -----\n";
    auto Start = std::chrono::steady_clock::now();
    Chunks[I].Index = unsigned(I);
    int Code = Action(Chunks[I], FileName, unsigned(I));
    Worst = std::max(Worst, Code);
    if (verbosity() == Verbosity::Verbose) {
      double Ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - Start)
                      .count();
      char Buf[32];
      std::snprintf(Buf, sizeof(Buf), "%.3f", Ms);
      printVerbose(FileName + ":" + std::to_string(Chunks[I].FirstLine) + ": " +
                   (Split ? "chunk " + std::to_string(I + 1) + ": " : "") +
                   "exit " + std::to_string(Code) + " in " + Buf + " ms");
    }
  }
  return Worst;
}

int forEachHloModule(const HloInputOptions &In, const HloAction &Action,
                     OutputFile *O) {
  return forEachChunk(
      In.File, In.Split,
      [&](const Chunk &C, const std::string &FileName, unsigned) -> int {
        // Blank lines before the chunk keep the parser's line numbers those
        // of the whole file.
        std::string Text(C.FirstLine - 1, '\n');
        Text += C.Text;
        auto M = parseHloModule(Text, FileName);
        if (!M) {
          printDiagnostic(M.error());
          return ExitRejected;
        }
        return Action(**M, C);
      },
      O, "expected an HLO module, found no input");
}

int closeHloOutput(const HloInputOptions &In, OutputFile &O, int Code) {
  if (Code != ExitOk && !In.Split)
    return Code;
  return O.close() ? Code : int(ExitRejected);
}

namespace {
/// Parses one buffer, rejecting blank input with a located error.
std::optional<IndexingMap> parseChunkMap(Context &Ctx, std::string_view Text,
                                         const std::string &FileName,
                                         unsigned FirstLine,
                                         InputFormat Format) {
  if (isBlank(Text)) {
    printDiagnostic(makeDiagnostic(Text, Text.size(),
                                   "expected an indexing map, found no input",
                                   FileName, FirstLine));
    return std::nullopt;
  }
  ParseOptions PO;
  PO.Format = Format;
  PO.FileName = FileName;
  PO.FirstLine = FirstLine;
  auto M = parseIndexingMap(Ctx, Text, PO);
  if (!M) {
    printDiagnostic(M.error());
    return std::nullopt;
  }
  return std::move(*M);
}
} // namespace

int forEachMap(const InputOptions &In, const MapAction &Action, OutputFile &O,
               bool Separate) {
  InputFormat Format = In.format();
  return forEachChunk(
      In.File, In.Split,
      [&](const Chunk &C, const std::string &FileName, unsigned Index) -> int {
        // One context per chunk: chunks are independent and memory stays
        // small.
        Context Ctx;
        auto M = parseChunkMap(Ctx, C.Text, FileName, C.FirstLine, Format);
        if (!M)
          return ExitRejected;
        MapSource Src{FileName, C.FirstLine, C.Text, Index};
        return Action(Ctx, *M, Src);
      },
      Separate ? &O : nullptr, "expected an indexing map, found no input");
}

std::optional<IndexingMap> parseMapChunk(Context &Ctx, const Chunk &C,
                                         const std::string &FileName,
                                         InputFormat Format) {
  return parseChunkMap(Ctx, C.Text, FileName, C.FirstLine, Format);
}

std::optional<IndexingMap> loadSingleMap(Context &Ctx, const std::string &Path,
                                         InputFormat Format) {
  std::string Buffer;
  if (auto Err = readInput(Path, Buffer)) {
    printError("idxmap", *Err);
    return std::nullopt;
  }
  return parseChunkMap(Ctx, Buffer, displayName(Path), 1, Format);
}

} // namespace cli
} // namespace idxmap
