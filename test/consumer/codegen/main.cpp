// Emits one fusion to PTX with the installed idxmap::codegen. Emit.h must
// not need LLVM: this project has no LLVM include directory.
#include "idxmap/Emit.h"

#ifdef LLVM_VERSION_MAJOR
#error "idxmap/Emit.h included an LLVM header"
#endif

#include <cstdio>
#include <sstream>

int main() {
  auto M = idxmap::parseHloModule(R"(HloModule m
f {
  p = f32[1024] parameter(0)
  ROOT e = f32[1024] exponential(p)
}
ENTRY e {
  a = f32[1024] parameter(0)
  ROOT r = f32[1024] fusion(a), kind=kLoop, calls=f
})",
                                  "exp.hlo");
  if (!M) {
    std::fprintf(stderr, "%s", M.error().str().c_str());
    return 1;
  }
  idxmap::EmitOptions O;
  O.Target.Gpu = "sm_80";
  auto R = idxmap::emitModule(**M, O);
  if (!R) {
    std::fprintf(stderr, "%s", R.error().str().c_str());
    return 1;
  }
  // The PTX's target line and the kernel's name.
  std::istringstream Lines(R->Ptx);
  for (std::string L; std::getline(Lines, L);)
    if (L.rfind(".target", 0) == 0)
      std::printf("%s\n", L.c_str());
  std::printf("kernels: %zu, first: %s\n", R->Kernels.size(),
              R->Kernels[0].Name.c_str());
  return 0;
}
