// Parses, simplifies and prints a map with the installed idxmap::analysis.
#include "idxmap/Parse.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"
#include "idxmap/Version.h"

#include <cstdio>

int main() {
  idxmap::Context Ctx;
  auto M = idxmap::parseIndexingMap(
      Ctx, "(d0, d1) -> ((d0 * 8 + d1) floordiv 8, (d0 * 8 + d1) mod 8), "
           "domain: d0 in [0, 15], d1 in [0, 7]");
  if (!M) {
    std::fprintf(stderr, "%s", M.error().str().c_str());
    return 1;
  }
  idxmap::simplify(*M);
  std::printf("idxmap %s\n%s\n", IDXMAP_VERSION_STRING,
              idxmap::printMap(*M).c_str());
  return 0;
}
