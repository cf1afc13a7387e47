//===- EmitterSupport.cpp - Helpers shared by the fusion emitters ---------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"

#include "idxmap/Context.h"

#include "llvm/IR/Constants.h"

#include <algorithm>

namespace idxmap {
namespace codegen {

llvm::Value *physicalOffset(llvm::IRBuilderBase &B, const Shape &S,
                            llvm::ArrayRef<llvm::Value *> Index,
                            llvm::Type *IndexTy, OffsetTermOrder Order) {
  std::vector<int64_t> Strides(S.rank(), 1);
  int64_t Stride = 1;
  for (int64_t D : S.layoutOrDefault()) {
    Strides[D] = Stride;
    Stride *= S.Dims[D];
  }
  std::vector<int64_t> Dims = S.layoutOrDefault();
  if (Order == OffsetTermOrder::Logical)
    for (int64_t D = 0; D < S.rank(); ++D)
      Dims[size_t(D)] = D;
  llvm::Value *Off = llvm::ConstantInt::get(IndexTy, 0);
  for (int64_t D : Dims) {
    if (S.Dims[D] == 1)
      continue;
    llvm::Value *T =
        Strides[D] == 1
            ? Index[D]
            : B.CreateMul(Index[D], llvm::ConstantInt::get(IndexTy, Strides[D]),
                          "", /*HasNUW=*/true, /*HasNSW=*/true);
    Off = B.CreateAdd(Off, T, "", true, true);
  }
  return Off;
}

std::vector<Expr> delinearizePhysical(Context &Ctx, Expr Lin, const Shape &S) {
  std::vector<int64_t> MinorToMajor = S.layoutOrDefault();
  std::vector<Expr> Res(S.rank(), Ctx.constant(0));
  int64_t Stride = 1;
  for (size_t K = 0; K < MinorToMajor.size(); ++K) {
    int64_t D = MinorToMajor[K];
    Expr E = Stride == 1 ? Lin : Lin.floorDiv(Stride);
    Res[D] = K + 1 == MinorToMajor.size()
                 ? E
                 : E % std::max<int64_t>(S.Dims[D], 1);
    Stride *= std::max<int64_t>(S.Dims[D], 1);
  }
  return Res;
}

Diagnostic emitterRefusal(const HloInstruction &F, const std::string &Emitter,
                          const std::string &Why) {
  return Diagnostic{{"<emit>", 1, 1},
                    "fusion '" + F.name() + "': " + Emitter + " emitter: " +
                        Why,
                    ""};
}

} // namespace codegen
} // namespace idxmap
