//===- tools/idxmap/main.cpp - The idxmap command-line tool ---------------===//
//
// Part of idxmap. Dispatches `idxmap COMMAND ARGS...` to the subcommands
// registered in the Cmd*.cpp files (see Commands.h), on a thread with a large
// stack, under a crash handler that names the signal, the command line and
// the stack (docs/RELIABILITY.md).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include <csignal>
#include <cstring>
#include <exception>
#include <execinfo.h>
#include <iostream>
#include <new>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace idxmap::cli;

namespace {

void printToolUsage(std::ostream &OS) {
  OS << "usage: idxmap COMMAND [options] [FILE|-]\n"
        "       idxmap help [COMMAND] | --help | --version\n\n"
        "Indexing-map engine: parse, simplify, compose and query maps in XLA\n"
        "(`(d0)[s0] -> (...), domain: ...`) or MLIR (`affine_map<...>`) "
        "syntax.\n\ncommands:\n";
  size_t Width = 0;
  auto Commands = registeredCommands();
  for (auto &C : Commands)
    Width = std::max(Width, std::strlen(C.Name));
  for (auto &C : Commands)
    OS << "  " << C.Name << std::string(Width - std::strlen(C.Name) + 2, ' ')
       << C.Summary << "\n";
  OS << "\nRun 'idxmap COMMAND --help' for a command's options.\n"
        "Exit codes: 0 success, 1 input rejected or check failed, 2 usage "
        "error.\n";
}

int usageError(const std::string &Msg) {
  std::cerr << "idxmap: error: " << Msg << "\n";
  std::cerr << "usage: idxmap COMMAND [options] [FILE|-] "
               "(run 'idxmap --help' for the commands)\n";
  return ExitUsage;
}

//===----------------------------------------------------------------------===//
// Crash handler
//===----------------------------------------------------------------------===//

/// The command line, formatted before anything can crash: the handler must
/// not allocate (the heap may be what broke).
char CrashCommandLine[4096];
size_t CrashCommandLineSize = 0;
/// The executable's path, for the symbolizer hint.
char CrashExecutable[4096] = "idxmap";

/// Stack for the handler itself, so that a stack overflow can be reported.
constexpr size_t AltStackSize = 1 << 16;

void writeStderr(const char *S, size_t N) {
  while (N > 0) {
    ssize_t W = ::write(STDERR_FILENO, S, N);
    if (W <= 0)
      return;
    S += W;
    N -= size_t(W);
  }
}
void writeStderr(const char *S) { writeStderr(S, std::strlen(S)); }

const char *signalName(int Sig) {
  switch (Sig) {
  case SIGSEGV:
    return "SIGSEGV (segmentation fault)";
  case SIGABRT:
    return "SIGABRT (aborted)";
  case SIGBUS:
    return "SIGBUS (bus error)";
  case SIGFPE:
    return "SIGFPE (arithmetic exception)";
  case SIGILL:
    return "SIGILL (illegal instruction)";
  default:
    return "fatal signal";
  }
}

extern "C" void onFatalSignal(int Sig) {
  writeStderr("idxmap: internal error: ");
  writeStderr(signalName(Sig));
  writeStderr("\ncommand: ");
  writeStderr(CrashCommandLine, CrashCommandLineSize);
  writeStderr("\nstack (symbolize with llvm-symbolizer-19 --obj=");
  writeStderr(CrashExecutable);
  writeStderr(" ADDRESS...):\n");
  void *Frames[64];
  int N = ::backtrace(Frames, 64);
  ::backtrace_symbols_fd(Frames, N, STDERR_FILENO);
  writeStderr("please report this bug with the command and its input\n");
  // Die of the same signal (SA_RESETHAND restored the default action), so
  // that the exit status says what happened.
  ::raise(Sig);
}

/// The alternate signal stacks: main's and the command thread's.
void *AltStacks[2];
int NumAltStacks = 0;

/// Gives the calling thread an alternate signal stack; each thread needs its
/// own. The memory is never unmapped by idxmap: the threads live until the
/// process exits.
void installAltStack() {
  if (NumAltStacks == 2)
    return;
  stack_t SS = {};
  // mmap, not the heap: AddressSanitizer unmaps a thread's alternate stack
  // when the thread exits.
  SS.ss_sp = ::mmap(nullptr, AltStackSize, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (SS.ss_sp == MAP_FAILED)
    return;
  AltStacks[NumAltStacks++] = SS.ss_sp;
  SS.ss_size = AltStackSize;
  ::sigaltstack(&SS, nullptr);
}

void installCrashHandler(int Argc, char **Argv) {
  std::string Line;
  for (int I = 0; I < Argc; ++I)
    Line += (I ? " " : "") + std::string(Argv[I] ? Argv[I] : "");
  CrashCommandLineSize = std::min(Line.size(), sizeof(CrashCommandLine));
  std::memcpy(CrashCommandLine, Line.data(), CrashCommandLineSize);
  ssize_t N = ::readlink("/proc/self/exe", CrashExecutable,
                         sizeof(CrashExecutable) - 1);
  if (N > 0)
    CrashExecutable[N] = 0;
  // backtrace() loads libgcc's unwinder on first use, which allocates: do it
  // now rather than in the handler.
  void *Warm[1];
  ::backtrace(Warm, 1);
  installAltStack();
  struct sigaction SA = {};
  SA.sa_handler = onFatalSignal;
  SA.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
  sigemptyset(&SA.sa_mask);
  for (int Sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL})
    ::sigaction(Sig, &SA, nullptr);
}

/// Recurses until the stack runs out (for --crash-for-testing): 4 KiB a
/// frame, so 2^20 frames are more than the tool's stack. Each frame hands its
/// array to the next, so that no compiler turns the recursion into a loop.
volatile int OverflowDepth = 1 << 20;
int overflowStack(int Depth, volatile char *Caller) {
  volatile char Pad[4096];
  Pad[0] = char(Depth);
  if (Depth >= OverflowDepth)
    return Pad[0] + Caller[0];
  return overflowStack(Depth + 1, Pad) + Caller[0];
}

/// `idxmap --crash-for-testing=KIND`: crashes on purpose so that tests can
/// check the crash handler. Not listed in --help.
int crashForTesting(const std::string &Kind) {
  if (Kind == "segv") {
    volatile int *Null = nullptr;
    return *Null;
  }
  if (Kind == "abort")
    std::abort();
  if (Kind == "stack-overflow") {
    volatile char Start = 0;
    return overflowStack(0, &Start);
  }
  return usageError("--crash-for-testing needs segv, abort or stack-overflow");
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

int dispatch(int Argc, char **Argv) {
  if (Argc < 2)
    return usageError("no command given");
  std::string First = Argv[1];
  if (First.rfind("--crash-for-testing=", 0) == 0)
    return crashForTesting(First.substr(20));
  if (First == "--help" || First == "-h") {
    printToolUsage(std::cout);
    return ExitOk;
  }
  if (First == "--version" || First == "version") {
    std::cout << "idxmap version " << toolVersion() << "\n";
    return ExitOk;
  }
  if (First == "help") {
    if (Argc == 2) {
      printToolUsage(std::cout);
      return ExitOk;
    }
    if (Argc > 3)
      return usageError("'help' takes at most one command name");
    const Command *C = findCommand(Argv[2]);
    if (!C)
      return usageError(std::string("unknown command '") + Argv[2] + "'");
    char HelpFlag[] = "--help";
    char *Args[] = {Argv[2], HelpFlag, nullptr};
    return C->Run(2, Args);
  }
  const Command *C = findCommand(First);
  if (!C) {
    if (!First.empty() && First[0] == '-')
      return usageError("unknown option '" + First +
                        "' (options go after the command)");
    return usageError("unknown command '" + First + "'");
  }
  return finishVerify(C->Run(Argc - 1, Argv + 1));
}

/// Runs the command, turning escaped exceptions into exit code 1.
int runTool(int Argc, char **Argv) {
  try {
    int Code = dispatch(Argc, Argv);
    std::cout.flush();
    return Code;
  } catch (const std::bad_alloc &) {
    std::cerr << "idxmap: error: out of memory\n";
  } catch (const std::exception &E) {
    std::cerr << "idxmap: internal error: " << E.what() << "\n";
  }
  return ExitRejected;
}

/// The stack of the thread that runs the command. Deep inputs are rejected
/// by depth checks or handled by iterative code in the libraries; this is
/// defense in depth for what those miss (pages are touched only when used).
constexpr size_t ToolStackSize = size_t(512) << 20;

struct ToolArgs {
  int Argc;
  char **Argv;
  int Code;
};

extern "C" void *toolThread(void *P) {
  auto *A = static_cast<ToolArgs *>(P);
  installAltStack();
  A->Code = runTool(A->Argc, A->Argv);
  return nullptr;
}

} // namespace

int main(int Argc, char **Argv) {
  std::ios::sync_with_stdio(true);
  installCrashHandler(Argc, Argv);
  ToolArgs A{Argc, Argv, ExitRejected};
  pthread_attr_t Attr;
  pthread_t Thread;
  bool Started = pthread_attr_init(&Attr) == 0 &&
                 pthread_attr_setstacksize(&Attr, ToolStackSize) == 0 &&
                 pthread_create(&Thread, &Attr, toolThread, &A) == 0;
  if (!Started)
    return runTool(Argc, Argv); // e.g. a tight ulimit -v: the main stack.
  pthread_join(Thread, nullptr);
  pthread_attr_destroy(&Attr);
  return A.Code;
}
