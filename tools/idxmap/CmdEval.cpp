//===- tools/idxmap/CmdEval.cpp - `idxmap eval`
//----------------------------===//
//
// Part of idxmap. Evaluates each map at one point.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "JsonOutput.h"

#include <algorithm>

#include "idxmap/Print.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>

using namespace idxmap;
using namespace idxmap::cli;

namespace {

int runEval(int Argc, char **Argv);

const Command EvalCommand = {
    "eval", "evaluate each map at a point",
    "Evaluates each map's results at the point given by --at and prints them\n"
    "as '(7, 2)'. POINT assigns every variable: either by name,\n"
    "'d0=3,s0=1' (the map's variable names, any order), or by position,\n"
    "'3,1' (dims, then range vars, then runtime vars). If the point is not in\n"
    "the domain, prints 'outside domain: REASON' instead (exit code 0); a\n"
    "KNOWN EMPTY map has no point. A malformed POINT, an unknown or missing\n"
    "variable, or an overflowing evaluation is an error (exit code 1).\n"
    "--format=json prints one document: per map its chunk, the map and\n"
    "\"result\": \"point\" with \"values\", or \"outside\" with \"reason\"\n"
    "(docs/cli-json.schema.json).",
    runEval};

/// Parses POINT against \p M's variables. Prints a diagnostic (located in the
/// `<at>` text) and returns nullopt on failure.
std::optional<std::vector<int64_t>> parsePoint(const std::string &Text,
                                               const IndexingMap &M) {
  auto fail = [&](size_t Offset, const std::string &Msg) {
    printDiagnostic(makeDiagnostic(Text, Offset, Msg, "<at>"));
    return std::nullopt;
  };
  unsigned N = M.numVars();
  std::vector<int64_t> Point(N, 0);
  std::vector<bool> Assigned(N, false);
  bool Named = Text.find('=') != std::string::npos;
  size_t Pos = 0;
  unsigned Count = 0;
  auto skipSpace = [&] {
    while (Pos < Text.size() && std::isspace((unsigned char)Text[Pos]))
      ++Pos;
  };
  skipSpace();
  bool Empty = Pos == Text.size();
  while (!Empty) {
    skipSpace();
    unsigned Index = Count;
    if (Named) {
      size_t Start = Pos;
      while (Pos < Text.size() &&
             (std::isalnum((unsigned char)Text[Pos]) || Text[Pos] == '_'))
        ++Pos;
      std::string Name = Text.substr(Start, Pos - Start);
      if (Name.empty())
        return fail(Start, "expected a variable name");
      Index = N;
      for (unsigned I = 0; I < N; ++I)
        if (M.varName(I) == Name)
          Index = I;
      if (Index == N)
        return fail(Start, "unknown variable '" + Name + "'");
      if (Assigned[Index])
        return fail(Start, "variable '" + Name + "' assigned twice");
      skipSpace();
      if (Pos >= Text.size() || Text[Pos] != '=')
        return fail(Pos, "expected '='");
      ++Pos;
      skipSpace();
    } else if (Index >= N) {
      return fail(Pos, "too many values: the map has " + std::to_string(N) +
                           " variables");
    }
    size_t Start = Pos;
    if (Pos < Text.size() && (Text[Pos] == '-' || Text[Pos] == '+'))
      ++Pos;
    while (Pos < Text.size() && std::isdigit((unsigned char)Text[Pos]))
      ++Pos;
    std::string Num = Text.substr(Start, Pos - Start);
    if (Num.empty() || Num == "-" || Num == "+")
      return fail(Start, "expected an integer");
    errno = 0;
    char *End = nullptr;
    long long V = std::strtoll(Num.c_str(), &End, 10);
    if (errno == ERANGE)
      return fail(Start, "integer out of range of int64");
    Point[Index] = V;
    Assigned[Index] = true;
    ++Count;
    skipSpace();
    if (Pos >= Text.size())
      break;
    if (Text[Pos] != ',')
      return fail(Pos, "expected ',' or the end of the point");
    ++Pos;
  }
  for (unsigned I = 0; I < N; ++I)
    if (!Assigned[I])
      return fail(Text.size(),
                  Named ? "missing a value for variable '" + M.varName(I) + "'"
                        : "too few values: the map has " + std::to_string(N) +
                              " variables");
  return Point;
}

/// Why \p Point is not in \p M's domain (the first failing bound or
/// constraint), or "" if it is.
std::string outsideReason(const IndexingMap &M,
                          const std::vector<int64_t> &Point) {
  for (unsigned I = 0, E = M.numVars(); I < E; ++I)
    if (!M.var(I).Bound.contains(Point[I]))
      return M.varName(I) + " = " + std::to_string(Point[I]) + " is not in " +
             M.var(I).Bound.str();
  for (const Constraint &C : M.constraints()) {
    IndexingMap Probe = M;
    Probe.setResults({C.E});
    auto V = Probe.evaluate(Point);
    std::string Text = printExpr(C.E, &M);
    if (!V)
      return Text + " overflows or divides by zero";
    if (!C.I.contains((*V)[0]))
      return Text + " = " + std::to_string((*V)[0]) + " is not in " + C.I.str();
  }
  return "";
}

int runEval(int Argc, char **Argv) {
  InputOptions In;
  OutputOptions Out;
  std::string At;
  ArgParser P(EvalCommand);
  In.addTo(P);
  Out.addTo(P, /*AllowFormat=*/false);
  P.option("--at", "POINT", &At, "the point, e.g. d0=3,s0=1 or 3,1",
           /*Required=*/true);
  FormatOption Format;
  Format.addTo(P);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  JsonResults Results("eval");
  Results.header()["at"] = At;
  // One answer: the text line, or a result of the JSON document: "result"
  // `point` with "values", or `outside` with "reason" (null: KNOWN EMPTY).
  auto Outside = [&](const IndexingMap &M, const MapSource &Src,
                     const std::string &Reason, bool Empty) {
    if (!Format.json()) {
      O << "outside domain"
        << (Empty            ? ": the map is KNOWN EMPTY"
            : Reason.empty() ? ""
                             : ": " + Reason)
        << "\n";
      return;
    }
    Json J = JsonResults::start(Src);
    J["map"] = printMap(M);
    J["result"] = "outside";
    J["reason"] = Empty ? Json() : Json(Reason);
    Results.add(std::move(J));
  };
  int Code = forEachMap(
      In,
      [&](Context &, IndexingMap &M, const MapSource &Src) -> int {
        // Errors about the map point at it: UNDEFINED, or its results.
        auto ErrorAt = [&](std::string_view Anchor, size_t Skip,
                           const std::string &Msg) {
          size_t At = Src.Text.find(Anchor);
          At = At == std::string_view::npos ? 0 : At + Skip;
          printDiagnostic(makeDiagnostic(Src.Text,
                                         std::min(At, Src.Text.size()), Msg,
                                         Src.FileName, Src.FirstLine));
        };
        if (M.isUndefined()) {
          ErrorAt("UNDEFINED", 0, "cannot evaluate an UNDEFINED map");
          return ExitRejected;
        }
        if (M.isKnownEmpty()) {
          Outside(M, Src, "", /*Empty=*/true);
          return ExitOk;
        }
        auto Point = parsePoint(At, M);
        if (!Point)
          return ExitRejected;
        if (!M.contains(*Point)) {
          Outside(M, Src, outsideReason(M, *Point), /*Empty=*/false);
          return ExitOk;
        }
        auto R = M.evaluate(*Point);
        if (!R) {
          ErrorAt("->", 3,
                  "evaluation overflows int64 or divides by zero at " + At);
          return ExitRejected;
        }
        if (Format.json()) {
          Json J = JsonResults::start(Src);
          J["map"] = printMap(M);
          J["result"] = "point";
          J["values"] = *R;
          Results.add(std::move(J));
          return ExitOk;
        }
        O << "(";
        for (size_t I = 0; I < R->size(); ++I)
          O << (I ? ", " : "") << (*R)[I];
        O << ")\n";
        return ExitOk;
      },
      O, /*Separate=*/!Format.json());
  Results.print(O);
  if (!O.close())
    return ExitRejected;
  return Code;
}

CommandRegistration RegisterEval(EvalCommand);

} // namespace
