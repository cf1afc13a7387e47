//===- fuzz_emit.cpp - libFuzzer target: emit on small fusions -----------===//
//
// Part of idxmap. An HLO module (at most 64 instructions): emitModule()
// compiles its fusions or returns a diagnostic, never a crash. Oracles:
// LLVM's verifier (emitModule verifies the IR of every module; a verifier
// error is a bug, not a rejected input), every kernel has a non-empty
// launch, and, where ptxas is found (IDXMAP_FUZZ_PTXAS, else
// /usr/local/cuda/bin/ptxas), the PTX assembles for sm_90.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "idxmap/Emit.h"

#include <fstream>
#include <unistd.h>

using namespace idxmap;
using namespace idxmap::fuzzing;

namespace {
/// The ptxas to check the PTX with, or "" when there is none.
const std::string &ptxas() {
  static const std::string Path = [] {
    const char *Env = std::getenv("IDXMAP_FUZZ_PTXAS");
    std::string P = Env ? Env : "/usr/local/cuda/bin/ptxas";
    return ::access(P.c_str(), X_OK) == 0 ? P : std::string();
  }();
  return Path;
}

/// Runs ptxas on \p Ptx; returns its exit status.
int assemble(const std::string &Ptx) {
  char Name[] = "/tmp/idxmap-fuzz-emit-XXXXXX";
  int Fd = ::mkstemp(Name);
  if (Fd < 0)
    return 0;
  ::close(Fd);
  std::ofstream(Name, std::ios::binary) << Ptx;
  std::string Cmd =
      ptxas() + " -arch=sm_90 -o /dev/null " + Name + " > /dev/null 2>&1";
  int Status = std::system(Cmd.c_str());
  ::unlink(Name);
  return Status;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Text = asText(Data, Size);
  auto M = parseHloModule(Text, "fuzz.hlo");
  if (!M || !isSmallModule(**M, int64_t(1) << 32, 64))
    return 0;
  EmitOptions O;
  auto R = emitModule(**M, O);
  if (!R) {
    const std::string &Msg = R.error().Message;
    if (Msg.find("invalid LLVM IR") != std::string::npos)
      fuzzFailure("emit built invalid IR: " + Msg, Text);
    return 0;
  }
  for (const KernelInfo &K : R->Kernels)
    for (int D = 0; D < 3; ++D)
      if (K.Grid[D] == 0 || K.Block[D] == 0)
        fuzzFailure("kernel " + K.Name + " has an empty launch dimension",
                    Text);
  if (!R->Kernels.empty() && !ptxas().empty() && assemble(R->Ptx) != 0)
    fuzzFailure("ptxas rejects the PTX:\n" + R->Ptx, Text);
  return 0;
}
