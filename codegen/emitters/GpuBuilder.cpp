//===- GpuBuilder.cpp - Block-level IR patterns of the emitters -----------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "GpuBuilder.h"
#include "KernelBuilder.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InlineAsm.h"

#include <algorithm>

namespace idxmap {
namespace codegen {

llvm::Value *asmCall(llvm::IRBuilderBase &B, llvm::Type *Ret,
                     llvm::ArrayRef<llvm::Value *> Args, const char *Asm,
                     const char *Cons) {
  std::vector<llvm::Type *> Types;
  for (llvm::Value *A : Args)
    Types.push_back(A->getType());
  auto *FT = llvm::FunctionType::get(Ret, Types, false);
  return B.CreateCall(llvm::InlineAsm::get(FT, Asm, Cons, true), Args);
}

void mbarrierInit(llvm::IRBuilderBase &B, llvm::Value *Bar, unsigned Count) {
  asmCall(B, B.getVoidTy(), {Bar, B.getInt32(Count)},
          "mbarrier.init.shared::cta.b64 [$0], $1;", "l,r,~{memory}");
}

void mbarrierArrive(llvm::IRBuilderBase &B, llvm::Value *Bar,
                    llvm::Value *TxBytes) {
  if (TxBytes)
    asmCall(B, B.getVoidTy(), {Bar, TxBytes},
            "{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, "
            "[$0], $1; }",
            "l,r,~{memory}");
  else
    asmCall(B, B.getVoidTy(), {Bar},
            "{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [$0]; }",
            "l,~{memory}");
}

void mbarrierWait(llvm::IRBuilderBase &B, llvm::Function &K, llvm::Value *Bar,
                  llvm::Value *Parity) {
  llvm::LLVMContext &C = B.getContext();
  auto *Spin = llvm::BasicBlock::Create(C, "mbar.wait", &K);
  auto *Done = llvm::BasicBlock::Create(C, "mbar.done", &K);
  B.CreateBr(Spin);
  B.SetInsertPoint(Spin);
  llvm::Value *Ok = asmCall(
      B, B.getInt32Ty(), {Bar, Parity},
      "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; "
      "selp.u32 $0, 1, 0, p; }",
      "=r,l,r,~{memory}");
  B.CreateCondBr(B.CreateICmpNE(Ok, B.getInt32(0)), Done, Spin);
  B.SetInsertPoint(Done);
}

void bulkCopyToShared(llvm::IRBuilderBase &B, llvm::Value *Dst,
                      llvm::Value *Src, llvm::Value *Bytes, llvm::Value *Bar) {
  asmCall(B, B.getVoidTy(), {Dst, Src, Bytes, Bar},
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
          "[$0], [$1], $2, [$3];",
          "l,l,r,l,~{memory}");
}

std::vector<llvm::Value *>
emitFold(llvm::IRBuilderBase &B, llvm::Function &K, llvm::Type *IndexTy,
         llvm::Value *Count, std::vector<llvm::Value *> Init,
         const std::function<std::vector<llvm::Value *>(
             llvm::Value *I, const std::vector<llvm::Value *> &)> &Step) {
  llvm::LLVMContext &LC = B.getContext();
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Loop = llvm::BasicBlock::Create(LC, "fold", &K);
  auto *Done = llvm::BasicBlock::Create(LC, "fold.done", &K);
  llvm::Value *Zero = llvm::ConstantInt::get(IndexTy, 0);
  B.CreateCondBr(B.CreateICmpUGT(Count, Zero), Loop, Done);
  B.SetInsertPoint(Loop);
  llvm::PHINode *I = B.CreatePHI(IndexTy, 2);
  I->addIncoming(Zero, Pre);
  std::vector<llvm::PHINode *> Phis;
  std::vector<llvm::Value *> Carried;
  for (llvm::Value *V : Init) {
    Phis.push_back(B.CreatePHI(V->getType(), 2));
    Phis.back()->addIncoming(V, Pre);
    Carried.push_back(Phis.back());
  }
  std::vector<llvm::Value *> Next = Step(I, Carried);
  llvm::Value *INext =
      B.CreateAdd(I, llvm::ConstantInt::get(IndexTy, 1), "", true, true);
  llvm::BasicBlock *Latch = B.GetInsertBlock();
  I->addIncoming(INext, Latch);
  for (size_t J = 0; J < Phis.size(); ++J)
    Phis[J]->addIncoming(Next[J], Latch);
  B.CreateCondBr(B.CreateICmpULT(INext, Count), Loop, Done);
  B.SetInsertPoint(Done);
  std::vector<llvm::Value *> Out;
  for (size_t J = 0; J < Init.size(); ++J) {
    llvm::PHINode *R = B.CreatePHI(Init[J]->getType(), 2);
    R->addIncoming(Init[J], Pre);
    R->addIncoming(Next[J], Latch);
    Out.push_back(R);
  }
  return Out;
}

void emitIf(llvm::IRBuilderBase &B, llvm::Value *Cond,
            const std::function<void()> &Body) {
  if (auto *CI = llvm::dyn_cast<llvm::ConstantInt>(Cond)) {
    if (CI->isOne())
      Body();
    return;
  }
  llvm::Function *K = B.GetInsertBlock()->getParent();
  llvm::LLVMContext &LC = B.getContext();
  auto *Then = llvm::BasicBlock::Create(LC, "if.then", K);
  auto *Done = llvm::BasicBlock::Create(LC, "if.done", K);
  B.CreateCondBr(Cond, Then, Done);
  B.SetInsertPoint(Then);
  Body();
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
}

llvm::Value *shuffleXor(llvm::IRBuilderBase &B, llvm::Value *V, unsigned Mask,
                        unsigned Width) {
  if (V->getType()->isIntegerTy(1))
    return B.CreateTrunc(
        emitShuffleXor(B, B.CreateZExt(V, B.getInt32Ty()), Mask, Width),
        B.getInt1Ty());
  return emitShuffleXor(B, V, Mask, Width);
}

std::vector<llvm::Value *>
combineReduces(llvm::IRBuilderBase &B,
               llvm::ArrayRef<const HloInstruction *> Reduces,
               llvm::ArrayRef<llvm::Value *> Acc,
               llvm::ArrayRef<llvm::Value *> Val, const MathOptions &Math) {
  std::vector<llvm::Value *> Res;
  size_t Pos = 0;
  for (const HloInstruction *R : Reduces) {
    size_t N = R->operandCount() / 2;
    auto X = emitReduction(B, *R->toApply(), Acc.slice(Pos, N),
                           Val.slice(Pos, N), Math);
    Res.insert(Res.end(), X.begin(), X.end());
    Pos += N;
  }
  return Res;
}

std::vector<std::vector<llvm::Value *>>
butterflyReduceSets(llvm::IRBuilderBase &B,
                    llvm::ArrayRef<const HloInstruction *> Reduces,
                    std::vector<std::vector<llvm::Value *>> Sets,
                    unsigned Width, unsigned Lowest, const MathOptions &Math) {
  for (unsigned Mask = Width / 2; Mask >= std::max(Lowest, 1u); Mask /= 2) {
    std::vector<std::vector<llvm::Value *>> Other;
    for (const std::vector<llvm::Value *> &S : Sets) {
      std::vector<llvm::Value *> O;
      for (llvm::Value *X : S)
        O.push_back(shuffleXor(B, X, Mask, Width));
      Other.push_back(std::move(O));
    }
    for (size_t I = 0; I < Sets.size(); ++I)
      Sets[I] = combineReduces(B, Reduces, Sets[I], Other[I], Math);
  }
  return Sets;
}

std::vector<llvm::Value *> butterflyReduce(
    llvm::IRBuilderBase &B, llvm::ArrayRef<const HloInstruction *> Reduces,
    std::vector<llvm::Value *> Vals, unsigned Width, const MathOptions &Math) {
  std::vector<std::vector<llvm::Value *>> Sets = {std::move(Vals)};
  return butterflyReduceSets(B, Reduces, std::move(Sets), Width, 1, Math)
      .front();
}

SharedSlots::SharedSlots(llvm::Module &M, llvm::ArrayRef<llvm::Value *> Like,
                         uint64_t Count, const llvm::Twine &Name,
                         unsigned Align)
    : Count(Count) {
  for (llvm::Value *V : Like) {
    llvm::Type *T = V->getType();
    Types.push_back(T);
    llvm::Type *Slot =
        T->isIntegerTy(1) ? llvm::Type::getInt8Ty(M.getContext()) : T;
    Arrays.push_back(createSharedArray(M, Slot, Count, Name.str(), Align));
  }
}

llvm::Value *SharedSlots::slot(llvm::IRBuilderBase &B, size_t I,
                               llvm::Value *Index) const {
  return B.CreateInBoundsGEP(
      Arrays[I]->getValueType(), Arrays[I],
      {llvm::ConstantInt::get(Index->getType(), 0), Index});
}

void SharedSlots::store(llvm::IRBuilderBase &B, llvm::Value *Index,
                        llvm::ArrayRef<llvm::Value *> Vals) const {
  for (size_t I = 0; I < Vals.size(); ++I) {
    llvm::Value *X = Vals[I];
    if (X->getType()->isIntegerTy(1))
      X = B.CreateZExt(X, B.getInt8Ty());
    B.CreateStore(X, slot(B, I, Index));
  }
}

llvm::Value *SharedSlots::load(llvm::IRBuilderBase &B, size_t Array,
                               llvm::Value *Index) const {
  llvm::Value *X =
      B.CreateLoad(Arrays[Array]->getValueType()->getArrayElementType(),
                   slot(B, Array, Index));
  if (Types[Array]->isIntegerTy(1))
    X = B.CreateTrunc(X, B.getInt1Ty());
  return X;
}

std::vector<llvm::Value *> SharedSlots::load(llvm::IRBuilderBase &B,
                                             llvm::Value *Index) const {
  std::vector<llvm::Value *> Vals;
  for (size_t I = 0; I < Arrays.size(); ++I)
    Vals.push_back(load(B, I, Index));
  return Vals;
}

uint64_t SharedSlots::bytes(const llvm::DataLayout &DL) const {
  uint64_t Bytes = 0;
  for (llvm::GlobalVariable *A : Arrays) {
    uint64_t B =
        Count * DL.getTypeAllocSize(A->getValueType()->getArrayElementType());
    Bytes += (B + 15) / 16 * 16;
  }
  return Bytes;
}

} // namespace codegen
} // namespace idxmap
