//===- tools/idxmap/CliSupport.cpp - Registry, arguments, input, output ---===//
//
// Part of idxmap. The shared machinery of the subcommands declared in
// Commands.h.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "idxmap/Emit.h"
#include "idxmap/Print.h"
#include "idxmap/Version.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace idxmap {
namespace cli {

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

namespace {
/// Function-local so that registration works in any static-init order.
std::map<std::string, Command> &registry() {
  static std::map<std::string, Command> R;
  return R;
}
} // namespace

void registerCommand(const Command &C) {
  bool Inserted = registry().emplace(C.Name, C).second;
  if (!Inserted) {
    std::cerr << "idxmap: internal error: command '" << C.Name
              << "' registered twice\n";
    std::abort();
  }
}

std::vector<Command> registeredCommands() {
  std::vector<Command> Out;
  for (auto &[Name, C] : registry())
    Out.push_back(C);
  return Out;
}

const Command *findCommand(std::string_view Name) {
  auto It = registry().find(std::string(Name));
  return It == registry().end() ? nullptr : &It->second;
}

const char *toolVersion() { return IDXMAP_VERSION_STRING; }

ExactHooks &exactHooks() {
  static ExactHooks H;
  return H;
}

//===----------------------------------------------------------------------===//
// ArgParser
//===----------------------------------------------------------------------===//

ArgParser::ArgParser(const Command &Cmd) : Cmd(Cmd) {}

void ArgParser::flag(const char *Name, bool *Out, const char *Help) {
  Spec S;
  S.Name = Name;
  S.Help = Help;
  S.Flag = Out;
  Specs.push_back(std::move(S));
}

void ArgParser::option(const char *Name, const char *MetaVar, std::string *Out,
                       const char *Help, bool Required, bool *Seen) {
  Spec S;
  S.Name = Name;
  S.MetaVar = MetaVar;
  S.Help = Help;
  S.Value = Out;
  S.Required = Required;
  S.Seen = Seen;
  Specs.push_back(std::move(S));
}

void ArgParser::listOption(const char *Name, const char *MetaVar,
                           std::string *Out, const char *Help) {
  option(Name, MetaVar, Out, Help);
  Specs.back().Joined = true;
}

void ArgParser::choice(const char *Name, std::vector<std::string> Choices,
                       std::string *Out, const char *Help) {
  std::string Meta;
  for (auto &C : Choices)
    Meta += (Meta.empty() ? "" : "|") + C;
  Spec S;
  S.Name = Name;
  S.MetaVar = Meta;
  S.Help = Help;
  S.Value = Out;
  S.Choices = std::move(Choices);
  Specs.push_back(std::move(S));
}

void ArgParser::positional(const char *Name, std::string *Out, const char *Help,
                           bool Optional) {
  Positionals.push_back({Name, Out, Help, Optional});
}

void ArgParser::check(std::function<std::string()> Validate) {
  Checks.push_back(std::move(Validate));
}

void ArgParser::alias(const char *Short, const char *Long) {
  Aliases.emplace_back(Short, Long);
}

ArgParser::Spec *ArgParser::findSpec(std::string_view Name) {
  for (auto &S : Specs)
    if (S.Name == Name)
      return &S;
  return nullptr;
}

std::string ArgParser::usageLine() const {
  std::string U = std::string("usage: idxmap ") + Cmd.Name;
  for (auto &S : Specs)
    if (S.Required)
      U += " " + S.Name + " " + S.MetaVar;
  U += " [options]";
  for (auto &P : Positionals)
    U += P.Optional ? " [" + P.Name + "]" : " " + P.Name;
  return U;
}

std::string ArgParser::helpText() const {
  std::string H = usageLine() + "\n\n";
  if (Cmd.Help && *Cmd.Help)
    H += std::string(Cmd.Help) + "\n\n";
  std::vector<std::pair<std::string, std::string>> Rows;
  for (auto &P : Positionals)
    Rows.push_back({P.Name, P.Help});
  for (auto &S : Specs) {
    std::string Left;
    for (auto &[Short, Long] : Aliases)
      if (Long == S.Name)
        Left += Short + ", ";
    Left += S.Name;
    if (!S.MetaVar.empty())
      Left += (S.Choices.empty() ? " " : "=") + S.MetaVar;
    std::string Help = S.Help;
    if (S.Required)
      Help += " (required)";
    else if (S.Value && !S.Value->empty())
      Help += " (default: " + *S.Value + ")";
    Rows.push_back({Left, Help});
  }
  Rows.push_back({"-h, --help", "show this help"});
  size_t Width = 0;
  for (auto &R : Rows)
    Width = std::max(Width, R.first.size());
  H += "arguments and options:\n";
  for (auto &R : Rows)
    H += "  " + R.first + std::string(Width - R.first.size() + 2, ' ') +
         R.second + "\n";
  return H;
}

int ArgParser::usageError(const std::string &Msg) const {
  std::cerr << "idxmap " << Cmd.Name << ": error: " << Msg << "\n"
            << usageLine() << "\n"
            << "(run 'idxmap " << Cmd.Name << " --help' for details)\n";
  return ExitUsage;
}

std::optional<int> ArgParser::parse(int Argc, char **Argv) {
  if (!findSpec("--max-input-bytes")) {
    MaxInputText = std::to_string(DefaultMaxInputBytes);
    option("--max-input-bytes", "N", &MaxInputText,
           "refuse input files larger than N bytes");
  }
  bool Quiet = false, Verbose = false;
  if (!findSpec("--quiet")) {
    flag("--quiet", &Quiet, "print no notes or warnings, only errors and "
                            "results");
    alias("-q", "--quiet");
    flag("--verbose", &Verbose, "also print notes about what was done "
                                "(timings, budgets)");
    alias("-v", "--verbose");
  }
  size_t NextPositional = 0;
  bool OnlyPositionals = false;
  auto takePositional = [&](const std::string &Arg) -> bool {
    if (NextPositional >= Positionals.size())
      return false;
    *Positionals[NextPositional++].Out = Arg;
    return true;
  };

  for (int I = 1; I < Argc; ++I) {
    std::string Arg = Argv[I] ? Argv[I] : "";
    if (OnlyPositionals || Arg == "-" || Arg.empty() || Arg[0] != '-') {
      if (!takePositional(Arg))
        return usageError("unexpected argument '" + Arg + "'");
      continue;
    }
    if (Arg == "--") {
      OnlyPositionals = true;
      continue;
    }
    if (Arg == "-h" || Arg == "--help") {
      std::cout << helpText();
      return ExitOk;
    }
    // Short aliases: `-o FILE` or `-oFILE`.
    std::string Name, Value;
    bool HasValue = false;
    bool IsAlias = false;
    for (auto &[Short, Long] : Aliases) {
      if (Arg == Short) {
        Name = Long;
        IsAlias = true;
      } else if (Arg.compare(0, Short.size(), Short) == 0 &&
                 Arg.size() > Short.size() && Arg.compare(0, 2, "--") != 0) {
        Name = Long;
        Value = Arg.substr(Short.size());
        HasValue = IsAlias = true;
      }
      if (IsAlias)
        break;
    }
    if (!IsAlias) {
      size_t Eq = Arg.find('=');
      Name = Arg.substr(0, Eq);
      if (Eq != std::string::npos) {
        Value = Arg.substr(Eq + 1);
        HasValue = true;
      }
    }
    Spec *S = findSpec(Name);
    if (!S)
      return usageError("unknown option '" + Arg + "'");
    // The spelling the user typed (`-o` or `--output`), for messages.
    std::string Spelled =
        IsAlias ? Arg.substr(0, Arg.size() - Value.size()) : Name;
    S->Present = true;
    if (S->Seen)
      *S->Seen = true;
    if (S->Flag) {
      if (HasValue)
        return usageError("option '" + Spelled + "' takes no value");
      *S->Flag = true;
      continue;
    }
    if (!HasValue) {
      if (I + 1 >= Argc)
        return usageError("missing value for option '" + Spelled + "'");
      Value = Argv[++I];
    }
    if (!S->Choices.empty() && std::find(S->Choices.begin(), S->Choices.end(),
                                         Value) == S->Choices.end())
      return usageError("invalid value '" + Value + "' for option '" + Spelled +
                        "' (expected " + S->MetaVar + ")");
    *S->Value = S->Joined && S->Present && !S->Value->empty()
                    ? *S->Value + "," + Value
                    : Value;
  }

  for (size_t P = NextPositional; P < Positionals.size(); ++P)
    if (!Positionals[P].Optional)
      return usageError("missing argument " + Positionals[P].Name);
  for (auto &S : Specs)
    if (S.Required && !S.Present)
      return usageError("missing required option '" + S.Name + "'");
  for (auto &C : Checks) {
    std::string Msg = C();
    if (!Msg.empty())
      return usageError(Msg);
  }
  auto Limit = parseUnsigned(MaxInputText, 1, uint64_t(1) << 40);
  if (!Limit)
    return usageError("--max-input-bytes needs a whole number from 1 to "
                      "1099511627776, got '" +
                      MaxInputText + "'");
  maxInputBytes() = *Limit;
  if (Quiet && Verbose)
    return usageError("--quiet and --verbose exclude each other");
  verbosity() = Quiet     ? Verbosity::Quiet
                : Verbose ? Verbosity::Verbose
                          : Verbosity::Normal;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Option groups
//===----------------------------------------------------------------------===//

InputFormat InputOptions::format() const {
  if (Format == "xla")
    return InputFormat::Xla;
  if (Format == "mlir")
    return InputFormat::Mlir;
  if (Format == "isl")
    return InputFormat::Isl;
  return InputFormat::Auto;
}

void OutputOptions::addTo(ArgParser &P, bool AllowFormat) {
  P.option("--output", "FILE", &File, "write the output to FILE");
  P.alias("-o", "--output");
  if (AllowFormat) {
    P.choice("--output-format", {"xla", "mlir", "isl"}, &Format,
             "syntax of printed maps (mlir drops the domain; isl cannot "
             "print non-affine products or symbolic divisors)");
    P.flag("--pretty", &Pretty, "print each map over several lines");
  }
}

void FormatOption::addTo(ArgParser &P) {
  P.choice("--format", {"text", "json"}, &Format,
           "print the report as text or as one JSON document");
}

void ExactFlag::addTo(ArgParser &P, bool Available) {
  P.flag("--exact", &Exact,
         Available ? "answer exactly (isl, within a budget)"
                   : "answer exactly (not available in this build)");
  bool *E = &Exact;
  if (!Available)
    P.check([E]() -> std::string {
      return *E ? "--exact is not available in this build" : "";
    });
}

//===----------------------------------------------------------------------===//
// Input
//===----------------------------------------------------------------------===//

std::string displayName(const std::string &Path) {
  return Path == "-" ? "<stdin>" : Path;
}

std::optional<std::string> parseTuning(const std::string &Text, Tuning &Out) {
  size_t Start = 0;
  while (Start <= Text.size()) {
    size_t Comma = Text.find(',', Start);
    std::string Item = Text.substr(
        Start, Comma == std::string::npos ? std::string::npos : Comma - Start);
    size_t Eq = Item.find('=');
    if (Eq == std::string::npos || Eq == 0)
      return "--tune needs NAME=VALUE[,NAME=VALUE...], got '" + Item + "'";
    std::string Name = Item.substr(0, Eq), Value = Item.substr(Eq + 1);
    if (!findTuningKnob(Name)) {
      std::string List;
      for (const TuningKnobInfo &K : tuningTable())
        List += (List.empty() ? "" : ", ") + std::string(K.Name);
      return "--tune: unknown knob '" + Name + "' (knobs: " + List + ")";
    }
    char *End = nullptr;
    errno = 0;
    long long V = std::strtoll(Value.c_str(), &End, 10);
    if (Value.empty() || *End != 0 || errno == ERANGE)
      return "--tune: " + Name + " needs a whole number, got '" + Value + "'";
    if (auto Err = setTuning(Out, Name, V))
      return "--tune: " + *Err;
    if (Comma == std::string::npos)
      break;
    Start = Comma + 1;
  }
  return std::nullopt;
}

Expected<DeviceModel> readDeviceOption(const std::string &Text) {
  if (auto D = lookupDeviceModel(Text))
    return *D;
  std::string Presets;
  for (const std::string &N : deviceModelNames())
    Presets += (Presets.empty() ? "" : ", ") + N;
  std::string Json;
  if (auto Err = readInput(Text, Json)) {
    Diagnostic D;
    D.Loc = SourceLocation{"", 0, 0};
    D.Message = "--device: '" + Text + "' is neither a preset (" + Presets +
                ") nor a device model file: " + *Err;
    return D;
  }
  return deviceModelFromJson(Json, Text);
}

uint64_t &maxInputBytes() {
  static uint64_t Limit = DefaultMaxInputBytes;
  return Limit;
}

std::optional<uint64_t> parseUnsigned(std::string_view Text, uint64_t Min,
                                      uint64_t Max) {
  if (Text.empty() || Text.size() > 20)
    return std::nullopt;
  uint64_t V = 0;
  for (char C : Text) {
    if (C < '0' || C > '9')
      return std::nullopt;
    unsigned Digit = unsigned(C - '0');
    if (V > (UINT64_MAX - Digit) / 10)
      return std::nullopt;
    V = V * 10 + Digit;
  }
  if (V < Min || V > Max)
    return std::nullopt;
  return V;
}

namespace {
std::string tooLarge(const std::string &Name) {
  return Name + " is larger than the input limit of " +
         std::to_string(maxInputBytes()) + " bytes (--max-input-bytes)";
}

/// Appends \p In to \p Out in blocks, stopping as soon as it passes the
/// limit: a stream such as /dev/zero never ends.
std::optional<std::string>
readBounded(std::istream &In, const std::string &Name, std::string &Out) {
  char Block[1 << 16];
  uint64_t Limit = maxInputBytes();
  while (In) {
    In.read(Block, sizeof(Block));
    Out.append(Block, size_t(In.gcount()));
    if (Out.size() > Limit) {
      Out.clear();
      Out.shrink_to_fit();
      return tooLarge(Name);
    }
  }
  if (In.bad())
    return "cannot read " + Name;
  return std::nullopt;
}
} // namespace

std::unique_ptr<HloModule> readHloModule(const std::string &File) {
  std::string Text;
  if (auto Err = readInput(File, Text)) {
    printError(displayName(File), *Err);
    return nullptr;
  }
  auto M = parseHloModule(Text, displayName(File));
  if (!M) {
    printDiagnostic(M.error());
    return nullptr;
  }
  return std::move(*M);
}

std::optional<std::string> readInput(const std::string &Path,
                                     std::string &Out) {
  Out.clear();
  if (Path == "-") {
    auto Err = readBounded(std::cin, "standard input", Out);
    if (!Err)
      registerInputBuffer(displayName(Path), Out);
    return Err;
  }
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0)
    return "cannot open '" + Path + "': " + std::strerror(errno);
  if (S_ISDIR(St.st_mode))
    return "cannot read '" + Path + "': Is a directory";
  if (S_ISREG(St.st_mode) && uint64_t(St.st_size) > maxInputBytes())
    return tooLarge("'" + Path + "'");
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return "cannot open '" + Path + "': " + std::strerror(errno);
  auto Err = readBounded(In, "'" + Path + "'", Out);
  if (!Err)
    registerInputBuffer(displayName(Path), Out);
  return Err;
}

namespace {
std::string_view trim(std::string_view S) {
  size_t B = 0, E = S.size();
  while (B < E && (S[B] == ' ' || S[B] == '\t' || S[B] == '\r'))
    ++B;
  while (E > B && (S[E - 1] == ' ' || S[E - 1] == '\t' || S[E - 1] == '\r'))
    --E;
  return S.substr(B, E - B);
}

bool isSeparatorLine(std::string_view Line) {
  return trim(Line).substr(0, 8) == "// -----";
}
} // namespace

std::vector<Chunk> splitInputFile(std::string_view Buffer) {
  std::vector<Chunk> Chunks;
  size_t ChunkStart = 0;
  unsigned ChunkLine = 1, Line = 1;
  size_t Pos = 0;
  while (Pos <= Buffer.size()) {
    size_t End = Buffer.find('\n', Pos);
    bool Last = End == std::string_view::npos;
    if (Last)
      End = Buffer.size();
    if (isSeparatorLine(Buffer.substr(Pos, End - Pos))) {
      Chunks.push_back(
          {Buffer.substr(ChunkStart, Pos - ChunkStart), ChunkLine});
      ChunkStart = Last ? Buffer.size() : End + 1;
      ChunkLine = Line + 1;
    }
    if (Last)
      break;
    Pos = End + 1;
    ++Line;
  }
  Chunks.push_back({Buffer.substr(ChunkStart), ChunkLine});
  return Chunks;
}

bool isBlank(std::string_view Text) {
  size_t Pos = 0;
  while (Pos < Text.size()) {
    char C = Text[Pos];
    if (C == ' ' || C == '\t' || C == '\r' || C == '\n' || C == '\f' ||
        C == '\v') {
      ++Pos;
    } else if (Text.substr(Pos, 2) == "//") {
      size_t E = Text.find('\n', Pos);
      Pos = E == std::string_view::npos ? Text.size() : E + 1;
    } else {
      return false;
    }
  }
  return true;
}

void printDiagnostic(const Diagnostic &D) {
  if (captureDiagnostic("error", D.Loc.File, D.Loc.Line, D.Message))
    return;
  // Keep the caret aligned (columns count bytes) but never write control or
  // non-ASCII bytes of binary input to the terminal: replace them one for one.
  Diagnostic Clean = D;
  for (char &C : Clean.SourceLine) {
    unsigned char U = static_cast<unsigned char>(C);
    if ((U < 0x20 && C != '\t') || U >= 0x7f)
      C = '?';
  }
  std::string S = Clean.str();
  std::cerr << S;
  if (S.empty() || S.back() != '\n')
    std::cerr << '\n';
}

void printError(const std::string &File, const std::string &Msg) {
  if (captureDiagnostic("error", File, 0, Msg))
    return;
  std::cerr << File << ": error: " << Msg << "\n";
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

bool OutputFile::open(const OutputOptions &Out) { return open(Out.File); }

namespace {
/// The directory part of \p Path ("." when there is none).
std::string directoryOf(const std::string &Path) {
  size_t Slash = Path.rfind('/');
  if (Slash == std::string::npos)
    return ".";
  return Slash == 0 ? "/" : Path.substr(0, Slash);
}

/// The permissions a new file gets from open(2): 0666 less the umask.
mode_t newFileMode() {
  mode_t Mask = ::umask(0);
  ::umask(Mask);
  return 0666 & ~Mask;
}
} // namespace

bool OutputFile::open(const std::string &P) {
  Path = Target = P;
  if (P == "-" || P.empty())
    return true;
  auto fail = [&](int Err) {
    printError("idxmap", "cannot write '" + P + "': " + std::strerror(Err));
    File.reset();
    return false;
  };
  struct stat St;
  bool Exists = ::stat(P.c_str(), &St) == 0;
  if (Exists && S_ISDIR(St.st_mode)) {
    printError("idxmap", "cannot write '" + P + "': Is a directory");
    return false;
  }
  if (Exists && !S_ISREG(St.st_mode)) {
    // A device or FIFO: there is nothing to replace, write in place.
    File = std::make_unique<std::ofstream>(P, std::ios::binary);
    return *File ? true : fail(errno);
  }
  struct stat Link;
  if (Exists && ::lstat(P.c_str(), &Link) == 0 && S_ISLNK(Link.st_mode)) {
    // Replace the file the link points to, not the link.
    if (char *Real = ::realpath(P.c_str(), nullptr)) {
      Target = Real;
      std::free(Real);
    }
  }
  size_t Slash = Target.rfind('/');
  std::string Base =
      Slash == std::string::npos ? Target : Target.substr(Slash + 1);
  std::string Temp = directoryOf(Target) + "/." + Base + ".tmp-XXXXXX";
  int Fd = ::mkstemp(Temp.data());
  if (Fd < 0 && Exists && ::access(Target.c_str(), W_OK) == 0) {
    // A writable file in a directory where no file can be created: replace
    // its content in place, as there is no other way.
    File = std::make_unique<std::ofstream>(Target,
                                           std::ios::binary | std::ios::trunc);
    return *File ? true : fail(errno);
  }
  if (Fd < 0)
    return fail(errno);
  TempPath = Temp;
  // mkstemp creates the file 0600; give it the mode the target has (or a
  // new file would get) so that the rename changes nothing but the content.
  ::fchmod(Fd, Exists ? (St.st_mode & 07777) : newFileMode());
  ::close(Fd);
  File = std::make_unique<std::ofstream>(TempPath,
                                         std::ios::binary | std::ios::trunc);
  if (!*File) {
    int Err = errno;
    ::unlink(TempPath.c_str());
    TempPath.clear();
    return fail(Err);
  }
  return true;
}

bool OutputFile::close() {
  os().flush();
  bool Ok = bool(os());
  if (File) {
    File->close();
    Ok = Ok && !File->fail();
  }
  if (!Ok) {
    printError("idxmap", "error writing '" + displayName(Path) + "'");
    return false;
  }
  if (!TempPath.empty()) {
    if (::rename(TempPath.c_str(), Target.c_str()) != 0) {
      printError("idxmap",
                 "cannot write '" + Path + "': " + std::strerror(errno));
      return false;
    }
    TempPath.clear();
  }
  return true;
}

OutputFile::~OutputFile() {
  if (!TempPath.empty()) {
    File.reset();
    ::unlink(TempPath.c_str());
  }
}

namespace {
/// True if the map restricts any variable or has constraints.
bool hasNontrivialDomain(const IndexingMap &M) {
  if (M.isUndefined())
    return false;
  if (M.isKnownEmpty() || !M.constraints().empty())
    return true;
  for (unsigned I = 0, E = M.numVars(); I < E; ++I)
    if (!M.var(I).Bound.isFull())
      return true;
  return false;
}

/// Splits \p S at ", " outside brackets and parentheses.
std::vector<std::string> splitTopLevel(std::string_view S) {
  std::vector<std::string> Parts;
  int Depth = 0;
  size_t Start = 0;
  for (size_t I = 0; I < S.size(); ++I) {
    char C = S[I];
    if (C == '(' || C == '[' || C == '{')
      ++Depth;
    else if (C == ')' || C == ']' || C == '}')
      --Depth;
    else if (C == ',' && Depth == 0) {
      Parts.emplace_back(trim(S.substr(Start, I - Start)));
      Start = I + 1;
    }
  }
  Parts.emplace_back(trim(S.substr(Start)));
  return Parts;
}
} // namespace

std::string prettyPrintMap(const IndexingMap &M) {
  std::string Flat = printMap(M);
  const std::string Key = ", domain: ";
  size_t At = Flat.find(Key);
  if (At == std::string::npos)
    return Flat;
  std::string Out = Flat.substr(0, At) + ",\ndomain:\n";
  auto Items = splitTopLevel(std::string_view(Flat).substr(At + Key.size()));
  for (size_t I = 0; I < Items.size(); ++I)
    Out += Items[I] + (I + 1 < Items.size() ? ",\n" : "");
  return Out;
}

int printMapTo(std::ostream &OS, const IndexingMap &M,
               const OutputOptions &Out) {
  if (Out.Format == "isl") {
    Expected<std::string> S = printMapIsl(M);
    if (!S) {
      printError("idxmap", S.error().Message);
      return ExitRejected;
    }
    OS << *S << "\n";
    return ExitOk;
  }
  if (Out.Format == "mlir") {
    if (M.isUndefined() || M.isKnownEmpty()) {
      // affine_map has no spelling for these states; keep the XLA keyword.
      OS << printMap(M) << "\n";
      printNote(printMap(M) + " has no affine_map form; printed as is");
      return ExitOk;
    }
    OS << printMapMlir(M) << "\n";
    if (hasNontrivialDomain(M)) {
      std::string Flat = printMap(M);
      size_t At = Flat.find(", domain: ");
      printNote("--output-format=mlir dropped the domain: " +
                (At == std::string::npos ? Flat : Flat.substr(At + 10)));
    }
    return ExitOk;
  }
  OS << (Out.Pretty ? prettyPrintMap(M) : printMap(M)) << "\n";
  return ExitOk;
}

} // namespace cli
} // namespace idxmap
