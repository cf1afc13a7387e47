//===- fuzz_simplify.cpp - libFuzzer target: simplify against enumeration ===//
//
// Part of idxmap. Parses a map; when its variable box has at most 4096
// points, simplify() must keep the numbers of variables and results, the
// domain's point set and the value at every domain point (brute-force
// enumeration, support/BruteForce.h, with its own checked evaluator), and
// the simplified map must survive print -> parse. A point where the
// original map cannot be evaluated (overflow) is no verdict either way.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "support/BruteForce.h"

#include "idxmap/Context.h"
#include "idxmap/Parse.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

using namespace idxmap;
using namespace idxmap::fuzzing;
using namespace idxmap::testing;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Text = asText(Data, Size);
  Context Ctx;
  auto M = parseIndexingMap(Ctx, Text);
  if (!M || M->isUndefined() || !boxSize(*M, 4096))
    return 0;
  IndexingMap Simplified = *M;
  simplify(Simplified);
  BruteForceOptions BO;
  BO.MaxPoints = 4096;
  CheckResult R = compareMaps(*M, Simplified, BO);
  if (R.Status == CheckStatus::Mismatch || R.Status == CheckStatus::Invalid)
    fuzzFailure("simplify changed the map: " + R.str() +
                    "\nsimplified: " + printMap(Simplified),
                Text);
  std::string Printed = printMap(Simplified);
  auto Again = parseIndexingMap(Ctx, Printed);
  if (!Again || printMap(*Again) != Printed)
    fuzzFailure(
        "the simplified map does not survive print -> parse: " + Printed, Text);
  return 0;
}
