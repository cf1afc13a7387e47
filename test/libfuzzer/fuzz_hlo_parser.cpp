//===- fuzz_hlo_parser.cpp - libFuzzer target: the HLO parser ------------===//
//
// Part of idxmap. Any text, structured HLO included (tuples nested in
// tuples, calls, fusions calling fusions, reductions; the seed corpus has
// them and hlo.dict gives the mutator HLO's words): the parser accepts it
// or returns a located diagnostic, never a crash, a hang or undefined
// behaviour. Oracle for accepted modules: the canonical print parses back
// and prints identically (printHloModule's promise).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

using namespace idxmap;
using namespace idxmap::fuzzing;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Text = asText(Data, Size);
  auto M = parseHloModule(Text, "fuzz.hlo");
  if (!M) {
    if (M.error().Message.empty())
      fuzzFailure("a parse error without a message", Text);
    return 0;
  }
  std::string Printed = printHloModule(**M);
  auto Again = parseHloModule(Printed, "printed.hlo");
  if (!Again)
    fuzzFailure("the printed module does not parse:\n" + Printed + "\n" +
                    Again.error().str(),
                Text);
  std::string Reprinted = printHloModule(**Again);
  if (Reprinted != Printed)
    fuzzFailure("print -> parse -> print differs:\n" + Printed + "\nvs\n" +
                    Reprinted,
                Text);
  return 0;
}
