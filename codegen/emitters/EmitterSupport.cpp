//===- EmitterSupport.cpp - Helpers shared by the fusion emitters ---------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "ElementwiseCodegen.h"

#include "idxmap/Hlo.h"

#include "idxmap/Context.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"

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

llvm::Value *loadParameterElement(llvm::IRBuilderBase &B, llvm::Function &K,
                                  const HloInstruction &P,
                                  llvm::ArrayRef<llvm::Value *> Index,
                                  llvm::Type *IndexTy, OffsetTermOrder Order) {
  PrimitiveType PT = P.shape().Type;
  llvm::Type *ST = storageType(B.getContext(), PT);
  llvm::Value *Off = physicalOffset(B, P.shape(), Index, IndexTy, Order);
  llvm::Value *Ptr =
      B.CreateInBoundsGEP(ST, K.getArg(P.parameterNumber()), Off);
  return loadConvert(
      B, B.CreateAlignedLoad(ST, Ptr, llvm::Align(byteWidth(PT))), PT);
}

llvm::Value *loadParameterVector(llvm::IRBuilderBase &B, llvm::Function &K,
                                 const HloInstruction &P,
                                 llvm::ArrayRef<llvm::Value *> Index, int64_t W,
                                 llvm::Type *IndexTy, OffsetTermOrder Order,
                                 int64_t Back) {
  PrimitiveType PT = P.shape().Type;
  llvm::Type *ST = storageType(B.getContext(), PT);
  llvm::Value *Off = physicalOffset(B, P.shape(), Index, IndexTy, Order);
  if (Back)
    Off = B.CreateSub(Off, llvm::ConstantInt::get(IndexTy, Back));
  auto *VT = llvm::FixedVectorType::get(ST, unsigned(W));
  llvm::Value *Ptr =
      B.CreateInBoundsGEP(ST, K.getArg(P.parameterNumber()), Off);
  return B.CreateAlignedLoad(
      VT, Ptr, llvm::Align(uint64_t(std::min<int64_t>(16, W * byteWidth(PT)))));
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

llvm::Constant *reducerIdentity(llvm::LLVMContext &LC, const HloComputation &R,
                                PrimitiveType PT) {
  if (R.parameterCount() != 2)
    return nullptr;
  const HloInstruction *Root = R.root();
  if (Root->operandCount() != 2 || !Root->shape().isScalar() ||
      Root->shape().Type != PT)
    return nullptr;
  const HloInstruction *P0 = R.parameter(0), *P1 = R.parameter(1);
  if (!((Root->operand(0) == P0 && Root->operand(1) == P1) ||
        (Root->operand(0) == P1 && Root->operand(1) == P0)))
    return nullptr;
  llvm::Type *T = valueType(LC, PT);
  bool Float = isFloatType(PT), Pred = PT == PrimitiveType::Pred;
  bool Signed = isSignedIntType(PT);
  unsigned Bits = T->isIntegerTy() ? T->getIntegerBitWidth() : 0;
  switch (Root->opcode()) {
  case HloOpcode::Add:
    if (Float)
      return llvm::ConstantFP::getNegativeZero(T);
    return Pred ? nullptr : llvm::ConstantInt::get(T, 0);
  case HloOpcode::Multiply:
    if (Float)
      return llvm::ConstantFP::get(T, 1.0);
    return Pred ? nullptr : llvm::ConstantInt::get(T, 1);
  case HloOpcode::Maximum:
    if (Float)
      return llvm::ConstantFP::getInfinity(T, /*Negative=*/true);
    if (Pred)
      return llvm::ConstantInt::getFalse(LC);
    return llvm::ConstantInt::get(LC, Signed
                                          ? llvm::APInt::getSignedMinValue(Bits)
                                          : llvm::APInt::getMinValue(Bits));
  case HloOpcode::Minimum:
    if (Float)
      return llvm::ConstantFP::getInfinity(T, /*Negative=*/false);
    if (Pred)
      return llvm::ConstantInt::getTrue(LC);
    return llvm::ConstantInt::get(LC, Signed
                                          ? llvm::APInt::getSignedMaxValue(Bits)
                                          : llvm::APInt::getMaxValue(Bits));
  case HloOpcode::And:
    if (Float)
      return nullptr;
    return llvm::ConstantInt::get(LC, llvm::APInt::getAllOnes(Bits));
  case HloOpcode::Or:
  case HloOpcode::Xor:
    if (Float)
      return nullptr;
    return llvm::ConstantInt::get(T, 0);
  default:
    return nullptr;
  }
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
