//===- fuzz_map_parser.cpp - libFuzzer target: the map parser ------------===//
//
// Part of idxmap. Any text: the parser accepts it or returns a diagnostic
// (never a crash, a hang or undefined behaviour). Oracle for accepted maps:
// printing and parsing again gives a map that prints identically in the
// XLA syntax.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "idxmap/Context.h"
#include "idxmap/Parse.h"
#include "idxmap/Print.h"

using namespace idxmap;
using namespace idxmap::fuzzing;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Text = asText(Data, Size);
  Context Ctx;
  auto M = parseIndexingMap(Ctx, Text);
  if (!M) {
    if (M.error().Message.empty())
      fuzzFailure("a parse error without a message", Text);
    return 0;
  }
  std::string Printed = printMap(*M);
  auto Again = parseIndexingMap(Ctx, Printed);
  if (!Again)
    fuzzFailure("the printed map does not parse: " + Printed + "\n" +
                    Again.error().str(),
                Text);
  if (printMap(*Again) != Printed)
    fuzzFailure("print -> parse -> print differs: " + Printed + " vs " +
                    printMap(*Again),
                Text);
  return 0;
}
