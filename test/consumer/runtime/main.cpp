// Opens the CUDA driver with the installed idxmap::runtime. Prints "driver:
// ok" or "driver: unavailable" (no driver or GPU, a normal outcome on a
// build machine); any other error fails.
#include "idxmap/Runtime.h"

#include <cstdio>

int main() {
  auto Drv = idxmap::runtime::CudaDriver::open();
  if (Drv) {
    std::printf("driver: ok\n");
    return 0;
  }
  if (Drv.error().isUnavailable()) {
    std::printf("driver: unavailable\n");
    return 0;
  }
  std::fprintf(stderr, "%s\n", Drv.error().Message.c_str());
  return 1;
}
