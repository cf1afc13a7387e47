//===- analysis/hlo/Delinearize.cpp - Linear offsets to indices -----------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Delinearize.h"

namespace idxmap {

std::vector<Expr> delinearize(Context &Ctx, Expr Lin,
                              const std::vector<int64_t> &Dims) {
  std::vector<Expr> Res(Dims.size(), Ctx.constant(0));
  // The first dim that is not a unit: its index is not reduced.
  size_t First = 0;
  while (First + 1 < Dims.size() && Dims[First] <= 1)
    ++First;
  int64_t Stride = 1;
  for (size_t K = Dims.size(); K-- > 0;) {
    if (Dims[K] <= 1)
      continue;
    Expr E = Stride == 1 ? Lin : Lin.floorDiv(Stride);
    Res[K] = K == First ? E : E % Dims[K];
    Stride *= Dims[K];
  }
  return Res;
}

std::vector<Expr> delinearizePhysical(Context &Ctx, Expr Lin, const Shape &S) {
  // Physical (major-to-minor) dims and, for each, its logical dim.
  std::vector<int64_t> M2m = S.layoutOrDefault(), Dims;
  for (auto It = M2m.rbegin(); It != M2m.rend(); ++It)
    Dims.push_back(S.Dims[*It]);
  std::vector<Expr> Phys = delinearize(Ctx, Lin, Dims);
  std::vector<Expr> Res(S.rank(), Ctx.constant(0));
  for (size_t K = 0; K < Dims.size(); ++K)
    Res[M2m[M2m.size() - 1 - K]] = Phys[K];
  return Res;
}

} // namespace idxmap
