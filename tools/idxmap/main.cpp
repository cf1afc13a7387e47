//===- tools/idxmap/main.cpp - The idxmap command-line tool ---------------===//
//
// Part of idxmap. Dispatches `idxmap COMMAND ARGS...` to the subcommands
// registered in the Cmd*.cpp files (see Commands.h).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include <cstring>
#include <exception>
#include <iostream>
#include <new>

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

int dispatch(int Argc, char **Argv) {
  if (Argc < 2)
    return usageError("no command given");
  std::string First = Argv[1];
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
  return C->Run(Argc - 1, Argv + 1);
}

} // namespace

int main(int Argc, char **Argv) {
  std::ios::sync_with_stdio(true);
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
