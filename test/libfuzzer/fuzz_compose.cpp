//===- fuzz_compose.cpp - libFuzzer target: compose against enumeration --===//
//
// Part of idxmap. Two maps separated by a `// -----` line; when the first's
// results match the second's dims, compose() (and compose() followed by
// simplify()) must be Second o First at every point of the enumerable
// variable box (support/BruteForce.h checkCompose, FORMATS.md's domain
// semantics). Maps that do not parse or do not fit are skipped.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "support/BruteForce.h"

#include "idxmap/Compose.h"
#include "idxmap/Context.h"
#include "idxmap/Parse.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

using namespace idxmap;
using namespace idxmap::fuzzing;
using namespace idxmap::testing;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Text = asText(Data, Size), A, B;
  if (!splitTwo(Text, A, B))
    return 0;
  Context Ctx;
  auto First = parseIndexingMap(Ctx, A);
  auto Second = First ? parseIndexingMap(Ctx, B) : First;
  if (!First || !Second || First->isUndefined() || Second->isUndefined() ||
      First->numResults() != Second->numDims())
    return 0;
  IndexingMap Composed = compose(*First, *Second);
  if (Composed.isUndefined() || !boxSize(Composed, 4096))
    return 0;
  BruteForceOptions BO;
  BO.MaxPoints = 4096;
  CheckResult R = checkCompose(*First, *Second, Composed, BO);
  if (R.Status == CheckStatus::Mismatch || R.Status == CheckStatus::Invalid)
    fuzzFailure("compose is not Second o First: " + R.str() +
                    "\ncomposed: " + printMap(Composed),
                Text);
  IndexingMap Simplified = Composed;
  simplify(Simplified);
  R = checkCompose(*First, *Second, Simplified, BO);
  if (R.Status == CheckStatus::Mismatch || R.Status == CheckStatus::Invalid)
    fuzzFailure("simplify(compose) is not Second o First: " + R.str() +
                    "\nsimplified: " + printMap(Simplified),
                Text);
  return 0;
}
