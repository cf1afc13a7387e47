//===- tools/idxmap/CmdExact.cpp - `idxmap bijective`, `idxmap equal` -----===//
//
// Part of idxmap. The commands of the exact (isl) component, and the hooks
// behind `--exact` on `simplify`, `compose --simplify`, `is-empty` and
// `bounds` (installed here, at static-initialization time).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ExactBudget.h"

#include "idxmap/Exact.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>

using namespace idxmap;
using namespace idxmap::cli;

namespace {

//===----------------------------------------------------------------------===//
// The --exact hooks
//===----------------------------------------------------------------------===//

const bool HooksInstalled = [] {
  ExactHooks &H = exactHooks();
  H.IsEmpty = [](const IndexingMap &M) {
    ExactHookState &St = exactHookState();
    return isEmptyExact(M, St.Options);
  };
  H.Bounds = [](Expr E, const IndexingMap &M) {
    ExactHookState &St = exactHookState();
    return boundsExact(E, M, St.Options);
  };
  H.Simplify = [](IndexingMap &M) {
    ExactHookState &St = exactHookState();
    return refineExact(M, St.Options);
  };
  return true;
}();

} // namespace

//===----------------------------------------------------------------------===//
// Budgets (ExactBudget.h)
//===----------------------------------------------------------------------===//

void idxmap::cli::BudgetFlags::addTo(ArgParser &P) {
  P.option("--budget", "N", &Budget,
           "isl operation budget per query (default 50000; 0: unlimited)");
  P.option("--time-limit", "MS", &TimeLimit,
           "CPU-time limit per query in ms (default 500; 0: none)");
  P.option("--max-cells", "N", &MaxCells,
           "size budget per query in constraint matrix cells (default "
           "8000000; 0: unlimited)");
  P.check([this]() -> std::string {
    for (const std::string *V : {&Budget, &TimeLimit, &MaxCells})
      if (!V->empty() && !parseCount(*V))
        return "expected a non-negative integer, got '" + *V + "'";
    return "";
  });
}

idxmap::ExactOptions idxmap::cli::BudgetFlags::options(std::string *Why,
                                                       bool *Hit) const {
  idxmap::ExactOptions O;
  if (!Budget.empty())
    O.MaxOperations = *parseCount(Budget);
  if (!TimeLimit.empty())
    O.TimeLimitMs = *parseCount(TimeLimit);
  if (!MaxCells.empty())
    O.MaxCells = *parseCount(MaxCells);
  O.Explanation = Why;
  O.BudgetHit = Hit;
  printVerbose("isl budget: " + std::to_string(O.MaxOperations) +
               " operations, " + std::to_string(O.TimeLimitMs) +
               " ms, " + std::to_string(O.MaxCells) + " cells (0: none)");
  return O;
}

std::optional<uint64_t>
idxmap::cli::BudgetFlags::parseCount(const std::string &S) {
  if (S.empty() || S[0] == '-' || S[0] == '+')
    return std::nullopt;
  char *End = nullptr;
  errno = 0;
  unsigned long long V = std::strtoull(S.c_str(), &End, 10);
  if (errno || !End || *End)
    return std::nullopt;
  return uint64_t(V);
}

idxmap::cli::ExactHookState &idxmap::cli::exactHookState() {
  static ExactHookState St;
  return St;
}

int idxmap::cli::noteBudgetHit(const std::string &Why, bool Hit) {
  if (!Hit)
    return ExitOk;
  const char *Option =
      Why.find("time limit") != std::string::npos    ? "--time-limit MS"
      : Why.find("size budget") != std::string::npos ? "--max-cells N"
                                                     : "--budget N";
  printNote(Why + "; raise it with " + Option);
  return ExitRejected;
}

namespace {

/// `yes`, `no: WHY`, `unknown: WHY` (the reason only when there is one).
void printAnswer(OutputFile &O, Answer A, const std::string &Why) {
  O << answerName(A);
  if (A != Answer::Yes && !Why.empty())
    O << ": " << Why;
  O << "\n";
}

/// Parses `64,128` (non-negative sizes). nullopt on a malformed list.
std::optional<std::vector<int64_t>> parseShape(const std::string &S) {
  std::vector<int64_t> Shape;
  size_t Pos = 0;
  while (Pos <= S.size()) {
    size_t Comma = S.find(',', Pos);
    std::string Item = S.substr(
        Pos, Comma == std::string::npos ? std::string::npos : Comma - Pos);
    while (!Item.empty() && Item.front() == ' ')
      Item.erase(Item.begin());
    while (!Item.empty() && Item.back() == ' ')
      Item.pop_back();
    std::optional<uint64_t> V = BudgetFlags::parseCount(Item);
    if (!V || *V > uint64_t(INT64_MAX))
      return std::nullopt;
    Shape.push_back(int64_t(*V));
    if (Comma == std::string::npos)
      break;
    Pos = Comma + 1;
  }
  return Shape;
}

//===----------------------------------------------------------------------===//
// idxmap bijective
//===----------------------------------------------------------------------===//

int runBijective(int Argc, char **Argv);

const Command BijectiveCommand = {
    "bijective", "say whether a map touches every element of a shape once",
    "Prints 'yes' if each map is a bijection from its domain onto the box\n"
    "[0, S0) x [0, S1) x ... given by --onto S0,S1,...: every element of the\n"
    "box is the result of exactly one point (dims and range variables; for\n"
    "every value of the runtime variables allowed by their bounds and by the\n"
    "constraints on runtime variables alone). Otherwise prints 'no: ' and a\n"
    "witness (an element never touched, one outside the box, or two points\n"
    "touching the same element), or 'unknown: ' and the reason (a map isl\n"
    "cannot represent, the operation budget, the time limit). The answer is\n"
    "exact (isl). The exit code is 0 whatever the answer, except 1 when a\n"
    "budget ran out (a note names the option that raises it); a shape whose\n"
    "number of sizes differs from the map's number of results is an error.",
    runBijective};

int runBijective(int Argc, char **Argv) {
  InputOptions In;
  OutputOptions Out;
  BudgetFlags Budget;
  std::string Onto;
  std::optional<std::vector<int64_t>> Shape;
  ArgParser P(BijectiveCommand);
  In.addTo(P);
  Out.addTo(P, /*AllowFormat=*/false);
  P.option("--onto", "SIZES", &Onto,
           "the box's sizes, e.g. 64,128 (one per result)", /*Required=*/true);
  Budget.addTo(P);
  P.check([&]() -> std::string {
    Shape = parseShape(Onto);
    return Shape ? "" : "--onto expects sizes like 64,128, got '" + Onto + "'";
  });
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  int Code = forEachMap(
      In,
      [&](Context &, IndexingMap &M, const MapSource &Src) -> int {
        if (!M.isUndefined() && !M.isKnownEmpty() &&
            M.numResults() != Shape->size()) {
          size_t Arrow = Src.Text.find("->");
          size_t At = Arrow == std::string_view::npos ? 0 : Arrow + 3;
          printDiagnostic(
              makeDiagnostic(Src.Text, std::min(At, Src.Text.size()),
                             "--onto gives " + std::to_string(Shape->size()) +
                                 " sizes but the map has " +
                                 std::to_string(M.numResults()) + " results",
                             Src.FileName, Src.FirstLine));
          return ExitRejected;
        }
        std::string Why;
        bool Hit = false;
        Answer A = Answer::Unknown;
        if (M.isKnownEmpty()) {
          // Text `KNOWN EMPTY` has no results to count: it touches nothing,
          // which is a bijection only onto an empty box.
          bool EmptyBox = false;
          for (int64_t S : *Shape)
            EmptyBox |= S == 0;
          A = EmptyBox ? Answer::Yes : Answer::No;
          if (!EmptyBox)
            Why = "the map is KNOWN EMPTY and touches nothing";
        } else {
          A = isBijectiveOnto(M, *Shape, Budget.options(&Why, &Hit));
        }
        printAnswer(O, A, Why);
        return noteBudgetHit(Why, Hit);
      },
      O);
  if (!O.close())
    return ExitRejected;
  return Code;
}

CommandRegistration RegisterBijective(BijectiveCommand);

//===----------------------------------------------------------------------===//
// idxmap equal
//===----------------------------------------------------------------------===//

int runEqual(int Argc, char **Argv);

const Command EqualCommand = {
    "equal", "say whether two maps are the same relation",
    "Prints 'yes' if A and B relate the same (dims, runtime variables) points\n"
    "to the same results, with range variables existentially quantified\n"
    "(XLA's meaning: a dim point indexes the set of results over all values\n"
    "of the range variables), so the two maps may have different range\n"
    "variables. With --pointwise, the maps must instead have the same\n"
    "variables, the same domain and the same results at every point.\n"
    "Otherwise prints 'no: ' and a witness, or 'unknown: ' and the reason.\n"
    "A map with an empty domain equals KNOWN EMPTY. The answer is exact\n"
    "(isl). The exit code is 0 whatever the answer, except 1 when a budget\n"
    "ran out (a note names the option that raises it).",
    runEqual};

int runEqual(int Argc, char **Argv) {
  std::string FileA, FileB, Format = "auto";
  OutputOptions Out;
  BudgetFlags Budget;
  bool Pointwise = false, Split = false;
  ArgParser P(EqualCommand);
  P.positional("A", &FileA, "the first map's file, or - for stdin");
  P.positional("B", &FileB, "the second map's file, or - for stdin",
               /*Optional=*/true);
  P.choice("--input-format", {"auto", "xla", "mlir", "isl"}, &Format,
           "syntax of the input maps");
  P.flag("--split-input-file", &Split,
         "A holds pairs of maps separated by '// -----' lines");
  addVerifyFlag(P);
  Out.addTo(P, /*AllowFormat=*/false);
  P.flag("--pointwise", &Pointwise,
         "compare point by point, range variables included");
  Budget.addTo(P);
  P.check([&]() -> std::string {
    if (Split && !FileB.empty())
      return "with --split-input-file give one file holding pairs of maps";
    if (!Split && FileB.empty())
      return "missing argument B";
    return FileA == "-" && FileB == "-" ? "only one input can be stdin" : "";
  });
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  InputOptions In;
  In.Format = Format;
  std::string Why;
  bool Hit = false;
  idxmap::ExactOptions EO = Budget.options(&Why, &Hit);
  auto Answer = [&](const IndexingMap &A, const IndexingMap &B,
                    OutputFile &O) {
    Why.clear();
    Hit = false;
    idxmap::Answer R =
        Pointwise ? arePointwiseEqual(A, B, EO) : areEqual(A, B, EO);
    printAnswer(O, R, Why);
    return noteBudgetHit(Why, Hit);
  };
  if (Split) {
    std::string Buffer;
    if (auto Err = readInput(FileA, Buffer)) {
      printError("idxmap", *Err);
      return ExitRejected;
    }
    std::string FileName = displayName(FileA);
    std::vector<Chunk> Chunks;
    for (const Chunk &C : splitInputFile(Buffer))
      if (!isBlank(C.Text))
        Chunks.push_back(C);
    if (Chunks.empty() || Chunks.size() % 2 != 0) {
      size_t At = Chunks.empty()
                      ? Buffer.size()
                      : size_t(Chunks.back().Text.data() - Buffer.data());
      printDiagnostic(makeDiagnostic(
          Buffer, At,
          "equal --split-input-file needs an even number of maps (pairs A, "
          "B), found " +
              std::to_string(Chunks.size()),
          FileName, 1));
      return ExitRejected;
    }
    OutputFile O;
    if (!O.open(Out))
      return ExitRejected;
    int Worst = ExitOk;
    for (size_t I = 0; I < Chunks.size(); I += 2) {
      if (I > 0)
        O << "// -----\n";
      Context Ctx;
      auto A = parseMapChunk(Ctx, Chunks[I], FileName, In.format());
      auto B = parseMapChunk(Ctx, Chunks[I + 1], FileName, In.format());
      Worst = std::max(Worst, A && B ? Answer(*A, *B, O) : int(ExitRejected));
    }
    return O.close() ? Worst : int(ExitRejected);
  }
  Context Ctx;
  std::optional<IndexingMap> A = loadSingleMap(Ctx, FileA, In.format());
  if (!A)
    return ExitRejected;
  std::optional<IndexingMap> B = loadSingleMap(Ctx, FileB, In.format());
  if (!B)
    return ExitRejected;
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  int Code = Answer(*A, *B, O);
  return O.close() ? Code : int(ExitRejected);
}

CommandRegistration RegisterEqual(EqualCommand);

} // namespace
