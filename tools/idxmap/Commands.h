//===- tools/idxmap/Commands.h - Subcommand registry and CLI helpers -*- C++
//-*-===//
//
// Part of idxmap. The `idxmap` tool is a set of subcommands, each in its own
// file, that register themselves at static-initialization time. main.cpp only
// dispatches. No analysis logic lives in tools/: commands parse arguments,
// read files, call the library and print.
//
// Adding a subcommand (in a new file tools/idxmap/CmdFoo.cpp, no other edit):
// \code
//   #include "Commands.h"
//   using namespace idxmap;
//   using namespace idxmap::cli;
//   static int runFoo(int Argc, char **Argv);
//   static const Command FooCommand = {"foo", "one-line summary",
//                                      "Longer description.", runFoo};
//   static CommandRegistration RegisterFoo(FooCommand);
//
//   static int runFoo(int Argc, char **Argv) {
//     InputOptions In;            // [FILE|-], --input-format,
//     --split-input-file OutputOptions Out;          // -o FILE (and
//     --output-format, --pretty) std::string Onto; ArgParser P(FooCommand);
//     In.addTo(P, /*AllowSplit=*/true);
//     Out.addTo(P, /*AllowFormat=*/false);
//     P.option("--onto", "SIZES", &Onto, "box sizes, e.g. 64,128",
//              /*Required=*/true);
//     if (auto Exit = P.parse(Argc, Argv)) return *Exit; // --help or usage
//     OutputFile O;
//     if (!O.open(Out)) return ExitRejected;
//     int Code = forEachMap(In, [&](Context &Ctx, IndexingMap &M,
//                                   const MapSource &Src) -> int {
//       O << "answer\n";
//       return ExitOk;
//     }, O);
//     return O.close() ? Code : int(ExitRejected);
//   }
// \endcode
// Hooks and registrations must live in tools/idxmap/*.cpp (linked into the
// executable directly), not in a static library, where the linker would drop
// an unreferenced object file with its static initializers.
//
// Flags that another component provides later (`--exact`, issue 3):
// simplify, is-empty and bounds already accept `--exact` (ExactFlag below)
// and forward to the hooks in `exactHooks()`. The isl component installs them
// from its own file:
// \code
//   static bool installIsl = [] {
//     cli::exactHooks().IsEmpty = [](const IndexingMap &M) {
//       return isEmptyExact(M);
//     };
//     cli::exactHooks().Bounds = [](Expr E, const IndexingMap &M) {
//       return boundsExact(E, M);
//     };
//     cli::exactHooks().Simplify = [](IndexingMap &M) {
//       return refineExact(M);
//     };
//     return true;
//   }();
// \endcode
// While a hook is null, `--exact` on that command is a usage error (exit 2,
// "--exact is not available in this build"). To add `--exact` to another
// command, declare an `ExactFlag X;` and call `X.addTo(P, Available)`.
// (Named ExactFlag so as not to clash with idxmap::ExactOptions of Exact.h.)
//
// Exit codes (every command): 0 success (whatever the answer of a query, e.g.
// `empty`, `outside domain`); 1 input rejected (a diagnostic
// `file:line:col: error: ...` with the source line and a caret on stderr), an
// unreadable file, or a failed check; 2 usage error (unknown flag, missing or
// extra argument; a message and the short usage on stderr).
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TOOLS_COMMANDS_H
#define IDXMAP_TOOLS_COMMANDS_H

#include "idxmap/Context.h"
#include "idxmap/DeviceModel.h"
#include "idxmap/Diagnostics.h"
#include "idxmap/Domain.h"
#include "idxmap/Hlo.h"
#include "idxmap/IndexingMap.h"
#include "idxmap/Parse.h"
#include "idxmap/Simplify.h"
#include "idxmap/TuneCache.h"
#include "idxmap/Tuning.h"

#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace idxmap {
namespace cli {

//===----------------------------------------------------------------------===//
// Exit codes and the command registry
//===----------------------------------------------------------------------===//

enum ExitCode : int {
  ExitOk = 0,
  ExitRejected = 1,
  ExitUsage = 2,
  /// `run` and `tune`: no CUDA driver or GPU to run on.
  ExitNoDevice = 3
};

/// One subcommand of `idxmap`.
struct Command {
  /// The word after `idxmap` (`simplify`).
  const char *Name;
  /// One line for `idxmap --help`.
  const char *Summary;
  /// A paragraph printed by `idxmap NAME --help` between the usage line and
  /// the list of flags (which ArgParser generates).
  const char *Help;
  /// Runs the command; Argv[0] is the command name, Argv[1..] its arguments.
  /// Returns the exit code.
  int (*Run)(int Argc, char **Argv);
};

/// Adds \p C to the registry (names must be unique; a duplicate aborts).
void registerCommand(const Command &C);
/// All registered commands, sorted by name.
std::vector<Command> registeredCommands();
/// The command named \p Name, or nullptr.
const Command *findCommand(std::string_view Name);

/// Registers a command at static-initialization time:
/// `static CommandRegistration RegisterFoo({"foo", "...", "...", runFoo});`
struct CommandRegistration {
  explicit CommandRegistration(const Command &C) { registerCommand(C); }
};

/// The tool's version string (`idxmap --version`).
const char *toolVersion();

//===----------------------------------------------------------------------===//
// Argument parsing
//===----------------------------------------------------------------------===//

/// A declarative parser for one command's arguments. Flags are `--name`,
/// options `--name VALUE` or `--name=VALUE` (and `-o FILE` / `-oFILE` for the
/// short output option), positionals are filled in order. `-` alone is a
/// positional (stdin); `--` ends the flags. `-h`/`--help` prints the
/// generated help on stdout. Every command also gets `--max-input-bytes N`
/// (sets maxInputBytes(); a value that is not a whole number from 1 to 2^40
/// is a usage error).
///
/// Example:
/// \code
///   bool Stats = false; std::string File = "-";
///   ArgParser P(SimplifyCommand);
///   P.flag("--stats", &Stats, "print rule hit counts to stderr");
///   P.positional("FILE", &File, "input file, or - for stdin");
///   if (auto Exit = P.parse(Argc, Argv)) return *Exit;
/// \endcode
class ArgParser {
public:
  explicit ArgParser(const Command &Cmd);

  /// A boolean flag `--name`.
  void flag(const char *Name, bool *Out, const char *Help);
  /// An option with a value. \p Required options missing at the end are a
  /// usage error. \p Seen, when given, is set if the option appeared.
  void option(const char *Name, const char *MetaVar, std::string *Out,
              const char *Help, bool Required = false, bool *Seen = nullptr);
  /// An option that may repeat: `--tune A=1 --tune B=2` gives "A=1,B=2".
  void listOption(const char *Name, const char *MetaVar, std::string *Out,
                  const char *Help);
  /// An option restricted to \p Choices (`--input-format=auto|xla|mlir`).
  void choice(const char *Name, std::vector<std::string> Choices,
              std::string *Out, const char *Help);
  /// A positional argument; positionals are filled in declaration order.
  /// Optional ones keep their default when absent.
  void positional(const char *Name, std::string *Out, const char *Help,
                  bool Optional = false);
  /// A callback run after a successful parse; returning a non-empty message
  /// makes it a usage error (for checks across several flags).
  void check(std::function<std::string()> Validate);
  /// Allows a short alias, e.g. alias("-o", "--output").
  void alias(const char *Short, const char *Long);

  /// Parses Argv[1..Argc-1]. Returns nullopt to continue, or the exit code
  /// to return at once: ExitOk after `--help`, ExitUsage after an error
  /// (message and short usage already printed to stderr).
  std::optional<int> parse(int Argc, char **Argv);

  /// `usage: idxmap NAME [flags] ARGS...` (one line).
  std::string usageLine() const;
  /// The full `--help` text.
  std::string helpText() const;
  /// Prints `idxmap NAME: error: MSG` and the usage line to stderr; returns
  /// ExitUsage.
  int usageError(const std::string &Msg) const;

private:
  struct Spec {
    std::string Name;
    std::string MetaVar; // empty: a boolean flag
    std::string Help;
    bool *Flag = nullptr;
    std::string *Value = nullptr;
    bool *Seen = nullptr;
    std::vector<std::string> Choices;
    bool Required = false;
    bool Present = false;
    bool Joined = false; // listOption: repeats join with ','
  };
  struct Positional {
    std::string Name;
    std::string *Out;
    std::string Help;
    bool Optional;
  };
  Spec *findSpec(std::string_view Name);

  const Command &Cmd;
  std::vector<Spec> Specs;
  std::vector<Positional> Positionals;
  std::vector<std::pair<std::string, std::string>> Aliases;
  std::vector<std::function<std::string()>> Checks;
  /// The value of `--max-input-bytes`, declared by parse() on every command.
  std::string MaxInputText;
};

//===----------------------------------------------------------------------===//
// Shared option groups
//===----------------------------------------------------------------------===//

/// Input selection: `[FILE|-]`, `--input-format=auto|xla|mlir|isl`,
/// `--verify-diagnostics` and, when allowed, `--split-input-file`.
struct InputOptions {
  std::string File = "-";
  std::string Format = "auto";
  bool Split = false;

  /// Declares the flags and the FILE positional (named \p PositionalName;
  /// optional unless \p Required).
  void addTo(ArgParser &P, bool AllowSplit = true,
             const char *PositionalName = "FILE", bool Required = false);
  InputFormat format() const;
};

/// The input of the HLO commands: `FILE|-` (an HLO module),
/// `--split-input-file` (one module per `// -----` chunk) and
/// `--verify-diagnostics`.
struct HloInputOptions {
  std::string File = "-";
  bool Split = false;
  void addTo(ArgParser &P);
};

/// Output selection: `-o FILE` (alias `--output`), and when allowed
/// `--output-format=xla|mlir|isl` and `--pretty`.
struct OutputOptions {
  std::string File = "-";
  std::string Format = "xla";
  bool Pretty = false;

  void addTo(ArgParser &P, bool AllowFormat = true);
};

/// `--format=text|json` (issue 19): the report as text, or as one JSON
/// document for scripts (the schemas are in docs/cli-json.schema.json).
struct FormatOption {
  std::string Format = "text";

  void addTo(ArgParser &P);
  bool json() const { return Format == "json"; }
};

/// `--exact` (issue 3): declared only on commands that can forward it to a
/// hook in exactHooks().
struct ExactFlag {
  bool Exact = false;
  /// Declares `--exact`. \p Available is whether the command's hook is
  /// installed; when it is not, using `--exact` is a usage error.
  void addTo(ArgParser &P, bool Available);
};

/// Hooks installed by the exact (isl) component; null until installed.
struct ExactHooks {
  /// Exact emptiness of \p M's domain (within the budget).
  std::function<Emptiness(const IndexingMap &M)> IsEmpty;
  /// Exact minimum and maximum of \p E over \p M's domain: an empty
  /// interval when the domain is empty, nullopt when unknown (prints
  /// `unknown`). Same contract as boundsExact() in idxmap/Exact.h.
  std::function<std::optional<Interval>(Expr E, const IndexingMap &M)> Bounds;
  /// Runs after tier-1 simplification in `simplify --exact` (and
  /// `compose --simplify --exact`): detects emptiness, tightens bounds,
  /// removes implied constraints. Returns true if \p M changed, in which
  /// case the CLI runs tier-1 simplify() once more. Same contract as
  /// refineExact() in idxmap/Exact.h.
  std::function<bool(IndexingMap &M)> Simplify;
};
ExactHooks &exactHooks();

/// The simplification flags shared by `simplify` and `compose --simplify`:
/// `--remove-unused`, `--preserve-dims`, `--stats`, `--exact`.
struct SimplifyFlags {
  bool RemoveUnused = false;
  bool PreserveDims = false;
  bool Stats = false;
  ExactFlag Exact;
  void addTo(ArgParser &P);
};

/// Simplifies \p M as the flags say: simplify(); with RemoveUnused,
/// removeUnusedVars() and simplify() again if anything went; with Exact, the
/// exact hook. Rule hits accumulate into \p Stats when non-null.
void simplifyMap(IndexingMap &M, const SimplifyFlags &Flags,
                 SimplifyStats *Stats);

/// Prints the rule hit counts to stderr (`--stats`).
void printStats(const SimplifyStats &Stats);

//===----------------------------------------------------------------------===//
// Input
//===----------------------------------------------------------------------===//

/// The default input size limit: 64 MiB, far above any real map or HLO
/// module, far below what exhausts memory.
inline constexpr uint64_t DefaultMaxInputBytes = uint64_t(64) << 20;

/// The largest input, in bytes, that readInput() accepts. Every command sets
/// it from `--max-input-bytes N` (ArgParser declares that option on each).
uint64_t &maxInputBytes();

/// Reads a whole file (or stdin for "-") into \p Out, at most
/// maxInputBytes() of it: larger regular files are refused before reading,
/// and streams (stdin, pipes, devices such as /dev/zero) are refused once
/// they pass the limit. On failure returns a message such as "cannot open
/// 'x.txt': No such file or directory" (also for directories) or "'/dev/zero'
/// is larger than the input limit of 67108864 bytes (--max-input-bytes)".
std::optional<std::string> readInput(const std::string &Path, std::string &Out);

/// Reads and parses the HLO module in \p File ("-": stdin). On failure
/// prints the error (`FILE: error: ...`, or the parser's located
/// diagnostic) and returns null: the command then exits 1.
std::unique_ptr<HloModule> readHloModule(const std::string &File);

/// Parses \p Text as a whole decimal number in [\p Min, \p Max]: digits only
/// (no sign, no spaces, no suffix), no overflow. For numeric option values,
/// which are usage errors when this returns nullopt:
/// \code
///   auto N = parseUnsigned(Repeat, 0, 10000);
///   if (!N) return P.usageError("--repeat needs an integer from 0 to 10000");
/// \endcode
std::optional<uint64_t> parseUnsigned(std::string_view Text, uint64_t Min,
                                      uint64_t Max);

/// Display name of an input path in diagnostics ("<stdin>" for "-").
std::string displayName(const std::string &Path);

/// Parses `--tune NAME=VALUE[,NAME=VALUE...]` into \p Out: each NAME a
/// knob of tuningTable(), each VALUE a whole number in its range (set with
/// setTuning; a later entry wins). On failure returns the message for a
/// usage error, e.g. "--tune: unknown knob 'X' (knobs:
/// IDXMAP_RED_COL_LANES, ...)".
std::optional<std::string> parseTuning(const std::string &Text, Tuning &Out);

/// The device model of `--device NAME|FILE.json`: the preset NAME
/// (lookupDeviceModel), else the JSON file FILE (deviceModelFromJson).
/// Errors: a name that is neither (a usage error: no location), or the
/// file's error at its line and column.
///
/// Example: `readDeviceOption("h200")->SmCount == 132`;
/// `readDeviceOption("V100")` fails with "--device: 'V100' is neither a
/// preset (A100, H100, H200) nor a device model file: cannot open 'V100':
/// No such file or directory".
Expected<DeviceModel> readDeviceOption(const std::string &Text);

/// `--tune-cache FILE` of emit, run and analyze: the cache `idxmap tune`
/// writes, whose knobs plan each fusion it holds for the device, under the
/// knobs of --tune and of the environment (which win).
///
/// Example:
/// \code
///   TuneCacheOption TC;
///   TC.addTo(P);
///   ...
///   TuneCache Cache;
///   if (!TC.load(Cache)) return ExitRejected;
///   O.FusionTuning = cachedFusionTunings(Cache, *M, DeviceName);
/// \endcode
struct TuneCacheOption {
  /// The flag's value; after load(), the file read ("" when none).
  std::string File;
  void addTo(ArgParser &P);
  /// Reads File, else the file IDXMAP_TUNE_CACHE names (one that does not
  /// exist yet is an empty cache there), else leaves \p Cache empty.
  /// Prints the error (an unreadable file, a located JSON error) and
  /// returns false on failure.
  bool load(TuneCache &Cache);
};

/// One chunk of an input buffer.
struct Chunk {
  std::string_view Text;
  /// Line number (from 1) of the chunk's first line in the file.
  unsigned FirstLine = 1;
  /// Index of the chunk among the non-blank chunks (0 without splitting);
  /// set by forEachChunk.
  unsigned Index = 0;
};

/// Splits \p Buffer at lines that consist of `// -----` (surrounding
/// whitespace and trailing characters after the dashes allowed, as MLIR's
/// `--split-input-file`). The separator lines belong to no chunk.
std::vector<Chunk> splitInputFile(std::string_view Buffer);

/// True if \p Text holds nothing but whitespace and `//` comments.
bool isBlank(std::string_view Text);

/// Where a map came from (for diagnostics of later steps).
struct MapSource {
  std::string FileName;
  unsigned FirstLine = 1;
  std::string_view Text;
  /// Index of the chunk among the non-blank chunks (0 without splitting).
  unsigned Index = 0;
};

/// Parses the one map of \p Path (no splitting). Prints the diagnostic and
/// returns nullopt on failure (unreadable file, empty input, syntax error).
std::optional<IndexingMap> loadSingleMap(Context &Ctx, const std::string &Path,
                                         InputFormat Format);

/// Parses the map of one `// -----` chunk (diagnostics at the file's real
/// lines). Prints the diagnostic and returns nullopt on failure (a blank
/// chunk included).
std::optional<IndexingMap> parseMapChunk(Context &Ctx, const Chunk &C,
                                         const std::string &FileName,
                                         InputFormat Format);

/// Prints a diagnostic (`file:line:col: error: ...`, source line, caret) to
/// stderr.
void printDiagnostic(const Diagnostic &D);
/// Prints `FILE: error: MSG` (no location) to stderr.
void printError(const std::string &File, const std::string &Msg);

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

/// The output stream of a command: stdout for "-", else a file opened at
/// open(). Usable as an std::ostream.
///
/// Files are written atomically: the output goes to a temporary file in the
/// target's directory, which close() renames over the target. A reader (or a
/// concurrent `idxmap` writing the same path) sees the old file or a whole
/// new one, never a torn one, and a command that fails before close() leaves
/// the old file untouched (the destructor removes the temporary). Targets
/// that are not regular files (/dev/null, a FIFO) are written in place, as is
/// a writable file in a directory where no file can be created; a symbolic
/// link is followed and its target replaced.
/// \code
///   OutputFile O;
///   if (!O.open("out.ptx")) return ExitRejected; // writes .out.ptx.tmp-XXXXXX
///   O << Ptx;
///   if (!O.close()) return ExitRejected;         // renames it to out.ptx
/// \endcode
class OutputFile {
public:
  OutputFile() = default;
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;
  /// Removes the temporary file if close() did not commit it.
  ~OutputFile();

  /// Opens \p Out.File. Prints an error and returns false on failure.
  bool open(const OutputOptions &Out);
  bool open(const std::string &Path);
  std::ostream &os() { return File ? *File : std::cout; }
  /// Flushes and, for a file, renames the temporary over the target; prints
  /// an error and returns false if writing failed.
  bool close();

  template <typename T> OutputFile &operator<<(const T &V) {
    os() << V;
    return *this;
  }

private:
  std::unique_ptr<std::ofstream> File;
  /// The path as given (for messages).
  std::string Path;
  /// Where close() renames the temporary to (symbolic links resolved).
  std::string Target;
  /// The temporary file; empty when writing in place or once committed.
  std::string TempPath;
};

/// Prints \p M per \p Out's format: XLA syntax (one line, or broken over
/// lines with --pretty), `affine_map<...>` for mlir, in which case a note
/// that the domain was dropped goes to stderr if \p M had a non-trivial one,
/// or an isl map (printMapIsl) for isl. Returns ExitOk, or ExitRejected
/// after printing the error when the map has no isl form.
int printMapTo(std::ostream &OS, const IndexingMap &M,
               const OutputOptions &Out);

/// XLA-style multi-line form of printMap (`--pretty`): results, then
/// `domain:` and one line per bound and constraint.
std::string prettyPrintMap(const IndexingMap &M);

//===----------------------------------------------------------------------===//
// Verbosity (-q, -v) and --verify-diagnostics (Driver.cpp)
//===----------------------------------------------------------------------===//

/// `-q`/`--quiet` and `-v`/`--verbose`, which ArgParser::parse declares on
/// every command and stores here.
enum class Verbosity { Quiet, Normal, Verbose };
Verbosity &verbosity();

/// Prints `idxmap: note: MSG` to stderr, unless -q.
void printNote(const std::string &Msg);
/// Prints `idxmap: note: MSG` to stderr, only with -v (what was done:
/// timings, budgets).
void printVerbose(const std::string &Msg);

/// Declares `--verify-diagnostics` (InputOptions and HloInputOptions do).
/// With it, the diagnostics a command prints are collected instead, and
/// finishVerify() checks them against the comments
/// `expected-error {{TEXT}}` (same line), `expected-error@+N {{TEXT}}`
/// and `expected-error@-N {{TEXT}}` (N lines below or above) of the input
/// files read, as mlir-opt does; also `expected-warning`, `expected-note`.
/// TEXT must be a substring of the message.
///
/// Example (a map file; the command exits 0):
/// \code
///   // expected-error@+1 {{unknown identifier 'd1'}}
///   (d0) -> (d1), domain: d0 in [0, 3]
/// \endcode
void addVerifyFlag(ArgParser &P);
bool verifyingDiagnostics();
/// Keeps a copy of an input buffer for finishVerify() (readInput calls it).
void registerInputBuffer(const std::string &Name, std::string_view Text);
/// With --verify-diagnostics, records a diagnostic (\p Line 0: none) and
/// returns true; the caller then prints nothing. Else returns false.
bool captureDiagnostic(const char *Kind, const std::string &File, unsigned Line,
                       const std::string &Message);
/// After the command: with --verify-diagnostics, prints a line for each
/// expected diagnostic that did not occur and each error or warning that
/// was not expected, and returns ExitOk when there were none, else
/// ExitRejected (ExitUsage passes through). Without it, returns \p Code.
int finishVerify(int Code);

//===----------------------------------------------------------------------===//
// Driving a command over its input
//===----------------------------------------------------------------------===//

/// The body run on each chunk: the chunk, the file's display name and the
/// chunk's index. Returns an exit code.
using ChunkAction = std::function<int(
    const Chunk &C, const std::string &FileName, unsigned Index)>;

/// Reads \p Path and runs \p Action on the whole buffer, or with \p Split
/// on each non-blank `// -----` chunk, writing a `// -----` line to \p O
/// (when given) between the chunks' outputs. A file of blank chunks is an
/// error (\p Nothing is its message). With -v, a note gives each chunk's
/// time. Returns the worst exit code.
int forEachChunk(const std::string &Path, bool Split, const ChunkAction &Action,
                 OutputFile *O, const char *Nothing);

/// The body of an HLO command for one module.
using HloAction = std::function<int(HloModule &M, const Chunk &C)>;

/// forEachChunk over HLO modules: each chunk is parsed as its own module
/// (diagnostics give the whole file's line numbers); a chunk that does not
/// parse prints its diagnostic and the others still run.
int forEachHloModule(const HloInputOptions &In, const HloAction &Action,
                     OutputFile *O);

/// Closes \p O after forEachHloModule returned \p Code: a single module that
/// failed leaves the output file untouched (nothing is written, as before
/// the split existed); with --split-input-file the sections of the modules
/// that succeeded are written. Returns the command's exit code.
int closeHloOutput(const HloInputOptions &In, OutputFile &O, int Code);

/// The body of a per-map command: writes its answer for one map to the output
/// and returns an exit code (ExitOk, or ExitRejected after printing a
/// diagnostic).
using MapAction =
    std::function<int(Context &Ctx, IndexingMap &Map, const MapSource &Src)>;

/// Reads In.File, parses each map (one, or one per `// -----` chunk with
/// --split-input-file; blank chunks are skipped) and runs \p Action on it.
/// With splitting, the outputs of consecutive non-blank chunks are separated
/// by a `// -----` line on \p O (so output section i belongs to input chunk
/// i); a chunk that fails prints its diagnostic (with the file's real line
/// numbers) and leaves its section empty, and the remaining chunks still run.
/// Returns the worst exit code (ExitRejected if any chunk failed).
/// \p Separate false leaves out the `// -----` lines (a JSON document
/// collects the chunks' answers itself).
int forEachMap(const InputOptions &In, const MapAction &Action, OutputFile &O,
               bool Separate = true);

} // namespace cli
} // namespace idxmap

#endif // IDXMAP_TOOLS_COMMANDS_H
