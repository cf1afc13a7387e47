//===- CmdPartition.cpp - `idxmap partition`: subgraphs of a fusion -------===//
//
// Part of idxmap. Partitions each fused computation of an HLO module (or the
// one named) into subgraphs with one indexing map per instruction, and prints
// the listing or Graphviz DOT.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "JsonOutput.h"

#include "idxmap/Hlo.h"
#include "idxmap/Partition.h"
#include "idxmap/Print.h"

#include <cctype>
#include <filesystem>
#include <iostream>
#include <set>

using namespace idxmap;
using namespace idxmap::cli;

static int runPartition(int Argc, char **Argv);

static const Command PartitionCommand = {
    "partition", "split fused computations into subgraphs",
    "Partitions the fused computation of every fusion of an HLO module (or\n"
    "of the fusion named by --fusion; without fusions, the ENTRY computation)\n"
    "into subgraphs: an instruction joins its users' subgraph only when all\n"
    "its users are in that subgraph and it is reached with one indexing map\n"
    "from the subgraph's root. Prints each subgraph with its roots, why each\n"
    "root is one, and every member's map from the root; --dot writes\n"
    "Graphviz DOT instead: one digraph per fusion, subgraphs as clusters,\n"
    "each node labelled with its map. A module of several fusions needs\n"
    "--fusion NAME (one graph on stdout or -o FILE) or --dot-dir DIR (one\n"
    "file DIR/COMPUTATION.dot per fusion, each path printed). --roots forces instructions to root their own subgraph\n"
    "(heroes). Ops no emitter computes (dot, custom-call, while,\n"
    "collectives, ...) always root their own (\"opaque op\").\n"
    "--format=json prints the listing's facts as one document (see\n"
    "docs/cli-json.schema.json).",
    runPartition};
static CommandRegistration RegisterPartition(PartitionCommand);

Json idxmap::cli::jsonPartition(const PartitionedComputation &PC) {
  Json Subgraphs = Json::array();
  for (const Subgraph &S : PC.Subgraphs) {
    Json Roots = Json::array();
    for (const HloInstruction *R : S.Roots) {
      auto It = PC.Reasons.find(R);
      Roots.push_back(
          Json{{"name", R->name()},
               {"reason", It == PC.Reasons.end() ? Json() : Json(It->second)}});
    }
    Json Members = Json::array();
    for (const HloInstruction *I : S.Instructions) {
      auto M = S.Maps.find(I);
      bool Known = M != S.Maps.end() && !M->second.isUndefined();
      Json Member{{"name", I->name()},
                  {"opcode", opcodeName(I->opcode())},
                  {"map", Known ? Json(printMap(M->second)) : Json()}};
      auto B = S.Bindings.find(I);
      if (B != S.Bindings.end() && !B->second.empty()) {
        Json Runtime = Json::array();
        for (const RuntimeBinding &RB : B->second) {
          std::string Map =
              RB.Map.isUndefined() ? std::string() : printMap(RB.Map);
          Runtime.push_back(
              jsonBinding(RB.Source ? RB.Source->name() : std::string("?"),
                          RB.Map.isUndefined() ? nullptr : &Map));
        }
        Member["runtime"] = std::move(Runtime);
      }
      Members.push_back(std::move(Member));
    }
    Subgraphs.push_back(Json{{"name", S.Name},
                             {"no_compute", S.NoCompute},
                             {"roots", std::move(Roots)},
                             {"instructions", std::move(Members)}});
  }
  return Json{
      {"computation", PC.Computation ? Json(PC.Computation->name()) : Json()},
      {"subgraphs", std::move(Subgraphs)}};
}

static std::vector<std::string> splitNames(const std::string &S) {
  std::vector<std::string> Out;
  size_t Start = 0;
  while (Start <= S.size()) {
    size_t End = S.find(',', Start);
    if (End == std::string::npos)
      End = S.size();
    std::string Name = S.substr(Start, End - Start);
    if (!Name.empty())
      Out.push_back(Name);
    Start = End + 1;
  }
  return Out;
}

/// \p Name as a file name: letters, digits, `_`, `-` and `.` kept (a
/// leading `.` made `_`), anything else `_`.
static std::string fileNameOf(const std::string &Name) {
  std::string Out = Name.empty() ? "computation" : Name;
  for (char &C : Out)
    if (!std::isalnum((unsigned char)C) && C != '_' && C != '-' && C != '.')
      C = '_';
  if (Out[0] == '.')
    Out[0] = '_';
  return Out;
}

/// `--dot-dir DIR`: DIR/NAME.dot per computation of \p Comps (a name that
/// two computations would share gets `.2`, `.3`, ...), each path printed.
static int writeDotFiles(Context &Ctx,
                         const std::vector<const HloComputation *> &Comps,
                         const PartitionOptions &Opts,
                         const std::string &Dir) {
  std::error_code EC;
  std::filesystem::create_directories(Dir, EC);
  if (EC || !std::filesystem::is_directory(Dir)) {
    printError("idxmap", "cannot create directory '" + Dir + "': " +
                             (EC ? EC.message() : "not a directory"));
    return ExitRejected;
  }
  std::set<std::string> Used;
  for (const HloComputation *C : Comps) {
    std::string Base = fileNameOf(C->name()), Name = Base;
    for (int K = 2; !Used.insert(Name).second; ++K)
      Name = Base + "." + std::to_string(K);
    std::string Path = Dir + "/" + Name + ".dot";
    OutputFile O;
    if (!O.open(Path))
      return ExitRejected;
    O << partitionComputation(Ctx, *C, Opts).toDot();
    if (!O.close())
      return ExitRejected;
    std::cout << Path << "\n";
  }
  return ExitOk;
}

static int runPartition(int Argc, char **Argv) {
  std::string FusionName, RootNames, DotDir;
  bool Dot = false;
  OutputOptions Out;
  HloInputOptions In;
  ArgParser P(PartitionCommand);
  In.addTo(P);
  P.option("--fusion", "NAME", &FusionName,
           "only this fusion (instruction or fused computation name)");
  P.flag("--dot", &Dot, "write Graphviz DOT instead of the listing");
  P.option("--dot-dir", "DIR", &DotDir,
           "write one DOT file per fusion into DIR (created; implies --dot)");
  P.option("--roots", "NAMES", &RootNames,
           "comma-separated instructions that must root a subgraph");
  Out.addTo(P, /*AllowFormat=*/false);
  FormatOption Format;
  Format.addTo(P);
  P.check([&]() -> std::string {
    if ((Dot || !DotDir.empty()) && Format.json())
      return "--dot and --format=json exclude each other";
    if (!DotDir.empty() && Out.File != "-")
      return "--dot-dir and -o exclude each other";
    return "";
  });
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  Dot = Dot || !DotDir.empty();

  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  bool Usage = false;
  JsonDocuments Docs("partition", In.Split);
  int Code = forEachHloModule(
      In,
      [&](HloModule &ChunkModule, const Chunk &C) -> int {
        const HloModule &Mod = ChunkModule;

        std::vector<const HloComputation *> Comps;
        if (!FusionName.empty()) {
          std::string Bare =
              FusionName[0] == '%' ? FusionName.substr(1) : FusionName;
          for (const HloInstruction *F : Mod.fusions())
            if (F->name() == Bare && F->fusedComputation())
              Comps.push_back(F->fusedComputation());
          if (Comps.empty())
            if (const HloComputation *C = Mod.findComputation(Bare))
              Comps.push_back(C);
          if (Comps.empty()) {
            printError(displayName(In.File),
                       "no fusion or computation named '" + FusionName + "'");
            return ExitRejected;
          }
        } else {
          std::set<const HloComputation *> Seen;
          for (const HloInstruction *F : Mod.fusions())
            if (F->fusedComputation() &&
                Seen.insert(F->fusedComputation()).second)
              Comps.push_back(F->fusedComputation());
          if (Comps.empty() && Mod.entry())
            Comps.push_back(Mod.entry());
        }

        // Resolve --roots in the partitioned computations.
        std::vector<std::string> Names = splitNames(RootNames);
        std::vector<const HloInstruction *> Forced;
        for (const std::string &N : Names) {
          bool Found = false;
          for (const HloComputation *C : Comps)
            if (const HloInstruction *I = C->findInstruction(N)) {
              Forced.push_back(I);
              Found = true;
            }
          if (!Found) {
            printError(displayName(In.File),
                       "--roots: no instruction named '" + N +
                           "' in the partitioned computations");
            return ExitRejected;
          }
        }

        // DOT: one graph per fusion (Graphviz tools take one graph per
        // file).
        if (Dot && DotDir.empty() && Comps.size() > 1) {
          Usage = true;
          return P.usageError("--dot writes one graph per fusion and the "
                              "module has " +
                              std::to_string(Comps.size()) +
                              ": name one with --fusion NAME or write them "
                              "all with --dot-dir DIR");
        }
        Context Ctx;
        PartitionOptions Opts;
        Opts.ForcedRoots = Forced;
        if (!DotDir.empty())
          return writeDotFiles(Ctx, Comps, Opts, DotDir);
        Json Partitions = Json::array();
        for (size_t K = 0; K < Comps.size(); ++K) {
          PartitionedComputation PC =
              partitionComputation(Ctx, *Comps[K], Opts);
          if (Format.json()) {
            Partitions.push_back(jsonPartition(PC));
            continue;
          }
          if (K && !Dot)
            O << "\n";
          O << (Dot ? PC.toDot() : PC.str());
        }
        if (Format.json()) {
          Json Doc = jsonDocument("partition");
          Doc["computations"] = std::move(Partitions);
          Docs.add(C, std::move(Doc));
        }
        return ExitOk;
      },
      Format.json() ? nullptr : &O);
  Docs.print(O);
  if (Usage)
    return ExitUsage;
  return closeHloOutput(In, O, Code);
}
