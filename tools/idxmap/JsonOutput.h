//===- JsonOutput.h - The documents of --format=json ------------*- C++ -*-===//
//
// Part of idxmap. The commands with `--format=json` build one document with
// nlohmann::json and print it here. Kept out of Commands.h so that only the
// commands that print JSON parse the library's headers.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TOOLS_JSONOUTPUT_H
#define IDXMAP_TOOLS_JSONOUTPUT_H

#include "Commands.h"

#include "idxmap/Interval.h"
#include "idxmap/Partition.h"

#include <nlohmann/json.hpp>

namespace idxmap {
namespace cli {

/// Ordered so that keys print in the order the command adds them, which
/// keeps the documents (and their golden tests) readable.
using Json = nlohmann::ordered_json;

/// The version of the documents' layout; bumped when a field changes
/// meaning or disappears (adding one does not).
constexpr int CliJsonVersion = 1;

/// A document's frame: the format version and the command that wrote it.
inline Json jsonDocument(const char *Command) {
  return Json{{"version", CliJsonVersion}, {"command", Command}};
}

/// Prints \p J indented by two, with a final newline.
inline void printJson(OutputFile &O, const Json &J) {
  // Invalid UTF-8 in a name from the input is replaced, not thrown about:
  // the document must always parse.
  O << J.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

/// The output of an HLO command with `--format=json` (analyze, indexing,
/// partition), which is always one JSON document: without
/// `--split-input-file` the module's document; with it, a document that
/// holds each answered module's document under "chunks", in input order:
/// \code
///   {"version": 1, "command": "analyze", "split": true,
///    "chunks": [{"chunk": 0, "first_line": 1, "document": {...}},
///               {"chunk": 2, "first_line": 40, "document": {...}}]}
/// \endcode
/// A rejected chunk (here chunk 1) has no entry: its diagnostic went to
/// stderr and the exit code says so. Nothing is printed when no module was
/// answered, as the text output prints nothing then.
class JsonDocuments {
public:
  JsonDocuments(const char *Command, bool Split)
      : Command(Command), Split(Split) {}

  /// Records \p Doc, the document of chunk \p C.
  void add(const Chunk &C, Json Doc) {
    Chunks.push_back(Json{{"chunk", C.Index},
                          {"first_line", C.FirstLine},
                          {"document", std::move(Doc)}});
  }

  /// Prints the one document (see the class comment).
  void print(OutputFile &O) const {
    if (Chunks.empty())
      return;
    if (!Split) {
      printJson(O, Chunks.front()["document"]);
      return;
    }
    Json Doc = jsonDocument(Command);
    Doc["split"] = true;
    Doc["chunks"] = Chunks;
    printJson(O, Doc);
  }

private:
  const char *Command;
  bool Split;
  Json Chunks = Json::array();
};

/// The document of a per-map command with `--format=json` (parse,
/// simplify, compose, eval): `{"version", "command", "results": [...]}`,
/// one result per map (per pair for compose) that was answered, in input
/// order, each starting with its "chunk" and "first_line"; a chunk that was
/// rejected has none (its diagnostic went to stderr). Nothing is printed
/// when no map was answered, as the text output prints nothing then.
///
/// Example:
/// \code
///   JsonResults Results("parse");
///   ... for each map: Json J = Results.start(Src); J["map"] = ...;
///                     Results.add(std::move(J));
///   Results.print(O);
/// \endcode
class JsonResults {
public:
  explicit JsonResults(const char *Command) : Command(Command) {}

  /// A result for the map of \p Src: its chunk and first line.
  static Json start(const MapSource &Src) {
    return Json{{"chunk", Src.Index}, {"first_line", Src.FirstLine}};
  }
  void add(Json Result) { Results.push_back(std::move(Result)); }
  /// Fields of the document between "command" and "results".
  Json &header() { return Header; }

  void print(OutputFile &O) const {
    if (Results.empty())
      return;
    Json Doc = jsonDocument(Command);
    for (auto &[K, V] : Header.items())
      Doc[K] = V;
    Doc["results"] = Results;
    printJson(O, Doc);
  }

private:
  const char *Command;
  Json Header = Json::object();
  Json Results = Json::array();
};

/// An interval bound as JSON: the integer, or null for an unbounded side
/// (Interval::Min and Interval::Max).
inline Json jsonBound(int64_t V) {
  if (V == Interval::Min || V == Interval::Max)
    return nullptr;
  return V;
}

/// One runtime variable's binding: the instruction it is read from and its
/// map (null: unknown).
inline Json jsonBinding(const std::string &Source, const std::string *Map) {
  return Json{{"source", Source}, {"map", Map ? Json(*Map) : Json()}};
}

/// Adds the facts of map \p M to \p J, for the per-map results of parse,
/// simplify and compose: "map" (XLA syntax, as the text prints it:
/// `UNDEFINED` and `KNOWN EMPTY` included), "text" (what the text output
/// prints for it under \p Out's --output-format and --pretty, without the
/// final newline), "undefined", "known_empty", "variables" (per variable
/// its "name", "kind" `dim`, `range` or `runtime`, "lo" and "hi", null when
/// unbounded), "exprs" (the results) and "constraints" ("expr", "lo",
/// "hi"). Returns ExitRejected, after printing the error, when the map has
/// no form in --output-format (isl), else ExitOk. Defined in CmdParse.cpp.
///
/// Example: `(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 1]`
/// gives "variables": [{"name": "d0", "kind": "dim", "lo": 0, "hi": 3},
/// {"name": "s0", "kind": "range", "lo": 0, "hi": 1}], "exprs":
/// ["d0 + s0"], "constraints": [].
int addMapFacts(Json &J, const IndexingMap &M, const OutputOptions &Out);

/// A partitioned computation as `partition --format=json` prints it (and
/// analyze under "subgraphs"); defined in CmdPartition.cpp.
Json jsonPartition(const PartitionedComputation &PC);

} // namespace cli
} // namespace idxmap

#endif // IDXMAP_TOOLS_JSONOUTPUT_H
