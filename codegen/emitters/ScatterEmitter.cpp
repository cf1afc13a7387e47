//===- ScatterEmitter.cpp - Update elements combined in place -------------===//
//
// Part of idxmap. The scatter emitter builds the kernel ScatterPlan
// describes: a thread per update element finds the operand index its
// scatter indices give (XLA's semantics: a window that does not fit the
// operand is skipped whole) and combines the element into the buffer the
// output shares with the operand: a store, one atomic, or a
// compare-and-swap loop on the element's word running the combiner.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "Emitters.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "KernelBuilder.h"

#include "idxmap/Codegen.h"
#include "idxmap/RangeEvaluator.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"

#include <algorithm>

namespace idxmap {
namespace codegen {
namespace {

bool contains(const std::vector<int64_t> &V, int64_t X) {
  return std::find(V.begin(), V.end(), X) != V.end();
}

/// Combines \p Val (value type) into the element at \p Ptr with a
/// compare-and-swap loop on its word (the aligned 4 bytes holding a 1- or
/// 2-byte element), running the scatter's combiner on the element's
/// current value.
void emitCasCombine(llvm::IRBuilder<> &B, llvm::Function &K,
                    const HloComputation &Combiner, llvm::Value *Ptr,
                    llvm::Value *Val, PrimitiveType T,
                    const MathOptions &Math) {
  llvm::LLVMContext &LC = B.getContext();
  const int64_t Bytes = byteWidth(T);
  const unsigned Bits = unsigned(Bytes * 8);
  llvm::IntegerType *Elem = B.getIntNTy(Bits);
  llvm::IntegerType *WordTy = Bytes == 8 ? B.getInt64Ty() : B.getInt32Ty();
  llvm::Value *WordPtr = Ptr, *Shift = nullptr;
  if (Bytes < 4) {
    llvm::Value *Addr = B.CreatePtrToInt(Ptr, B.getInt64Ty());
    Shift = B.CreateTrunc(
        B.CreateShl(B.CreateAnd(Addr, B.getInt64(3)), B.getInt64(3)),
        WordTy);
    WordPtr = B.CreateIntToPtr(B.CreateAnd(Addr, B.getInt64(~uint64_t(3))),
                               Ptr->getType());
  }
  llvm::Value *Init = B.CreateAlignedLoad(WordTy, WordPtr,
                                          llvm::Align(Bytes < 4 ? 4 : Bytes));
  llvm::BasicBlock *Entry = B.GetInsertBlock();
  auto *Loop = llvm::BasicBlock::Create(LC, "cas", &K);
  auto *Done = llvm::BasicBlock::Create(LC, "cas.done", &K);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *Old = B.CreatePHI(WordTy, 2);
  Old->addIncoming(Init, Entry);
  llvm::Value *OldBits = Shift ? B.CreateTrunc(B.CreateLShr(Old, Shift), Elem)
                               : B.CreateTrunc(Old, Elem);
  llvm::Value *OldVal = loadConvert(
      B, B.CreateBitCast(OldBits, storageType(LC, T)), T);
  llvm::Value *New =
      emitReduction(B, Combiner, {OldVal}, {Val}, Math).front();
  llvm::Value *NewBits =
      B.CreateBitCast(storeConvert(B, New, T), Elem);
  llvm::Value *NewWord = B.CreateZExt(NewBits, WordTy);
  if (Shift) {
    llvm::Value *Mask = B.CreateShl(
        llvm::ConstantInt::get(WordTy, (uint64_t(1) << Bits) - 1), Shift);
    NewWord = B.CreateOr(B.CreateAnd(Old, B.CreateNot(Mask)),
                         B.CreateShl(NewWord, Shift));
  }
  llvm::Value *Pair = B.CreateAtomicCmpXchg(
      WordPtr, Old, NewWord, llvm::MaybeAlign(Bytes < 4 ? 4 : Bytes),
      llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  Old->addIncoming(B.CreateExtractValue(Pair, 0), Loop);
  B.CreateCondBr(B.CreateExtractValue(Pair, 1), Done, Loop);
  B.SetInsertPoint(Done);
}

} // namespace

Expected<KernelInfo> emitScatterKernel(llvm::Module &M,
                                       const HloInstruction &F,
                                       const FusionAnalysis &A,
                                       const KernelPlan &P, Context &Ctx,
                                       const MathOptions &Math) {
  requestBackEndOptLevel(M, P.BackEndOptLevel);
  const HloComputation &C = *A.Computation;
  const HloInstruction &S = *A.Roots.front();
  const ScatterDimensions &SD = S.scatterDimensions();
  const HloInstruction &Indices = *S.operand(1), &Updates = *S.operand(2);
  const Shape &Op = S.shape(), &Upd = Updates.shape(),
              &IdxS = Indices.shape();
  const ScatterPlan &SP = *P.Scatter;
  const ThreadMapping &TM = P.Main;
  const int64_t T = TM.ThreadsPerBlock;
  const int64_t Threads = Upd.numElements();

  llvm::LLVMContext &LC = M.getContext();
  KernelInfo Info;
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = P.Emitter;
  if (auto Err = setLaunchShape(Info, F, Math.Device, P.Grid[0], T))
    return *Err;
  std::vector<KernelParamSpec> Specs;
  for (const HloInstruction *Pm : C.parameters()) {
    Specs.push_back({Pm->name(), KernelParamRole::Input, 16, nullptr});
    Info.Params.push_back({Pm->name(), false, Pm->shape(), 16});
  }
  // The output is read as well as written (atomics, compare-and-swap).
  Specs.push_back({S.name(), KernelParamRole::InOut, 16, nullptr});
  Info.Params.push_back({S.name(), true, S.shape(), 16});
  Info.Aliases.push_back({unsigned(C.parameterCount()),
                          unsigned(SP.UpdatedParam)});
  llvm::Function *K = createKernel(M, Info.Name, Specs);
  setLaunchBounds(*K, {unsigned(T), /*Exact=*/true, 0});
  llvm::IRBuilder<> B(&K->getEntryBlock());
  llvm::Type *IndexTy = P.Index32 ? B.getInt32Ty() : B.getInt64Ty();
  auto IdxC = [&](int64_t N) { return llvm::ConstantInt::get(IndexTy, N); };

  GridLoop GL(B, *K, IndexTy, T, P.Grid[0], TM.Blocks);
  if (TM.Blocks * T != Threads) {
    llvm::Value *Tid = B.CreateAdd(B.CreateMul(GL.Bl, IdxC(T)), GL.Th);
    auto *Body = llvm::BasicBlock::Create(LC, "body", K);
    B.CreateCondBr(B.CreateICmpULT(Tid, IdxC(Threads)), Body, GL.Done);
    B.SetInsertPoint(Body);
  }
  // The update element's index.
  RangeEvaluator RE(TM.Map);
  std::vector<llvm::Value *> U;
  for (Expr E : TM.Map.results())
    U.push_back(emitIndexExpr(B, E, {GL.Th, GL.Bl}, {IdxC(0)}, RE, IndexTy));

  LaneLoader Lanes(B, *K, C, P.Loop->LoadWidth, IndexTy);
  FusedElementEmitter FE(B, Ctx, C, Lanes.loader(), Math, IndexTy);

  // The scatter indices' index: the update's scatter dims in order, the
  // index vector dim left for the component.
  const int64_t Ivd = SD.IndexVectorDim, IdxRank = IdxS.rank();
  std::vector<llvm::Value *> IdxAt(size_t(IdxRank), IdxC(0));
  size_t Slot = 0;
  for (int64_t D = 0; D < Upd.rank(); ++D) {
    if (contains(SD.UpdateWindowDims, D))
      continue;
    if (int64_t(Slot) == Ivd)
      ++Slot;
    IdxAt[Slot++] = U[size_t(D)];
  }
  // Starts and window sizes per operand dim, in 64 bits (an index may be
  // anything its type holds).
  llvm::Type *I64 = B.getInt64Ty();
  std::vector<llvm::Value *> Start(Op.Dims.size(), B.getInt64(0));
  std::vector<int64_t> Size(Op.Dims.size(), 1);
  const bool Unsigned = isUnsignedIntType(IdxS.Type);
  for (size_t Kc = 0; Kc < SD.ScatterDimsToOperandDims.size(); ++Kc) {
    if (Ivd < IdxRank)
      IdxAt[size_t(Ivd)] = IdxC(int64_t(Kc));
    llvm::Value *V = FE.valueAt(Indices, IdxAt);
    V = Unsigned ? B.CreateZExtOrTrunc(V, I64) : B.CreateSExtOrTrunc(V, I64);
    Start[size_t(SD.ScatterDimsToOperandDims[Kc])] = V;
  }
  for (size_t Kb = 0; Kb < SD.InputBatchingDims.size(); ++Kb)
    Start[size_t(SD.InputBatchingDims[Kb])] = B.CreateZExtOrTrunc(
        IdxAt[size_t(SD.ScatterIndicesBatchingDims[Kb])], I64);
  std::vector<llvm::Value *> Target(Op.Dims.size());
  size_t W = 0;
  llvm::Value *Fits = nullptr;
  for (int64_t D = 0; D < Op.rank(); ++D) {
    llvm::Value *Tg = Start[size_t(D)];
    if (!contains(SD.InsertedWindowDims, D) &&
        !contains(SD.InputBatchingDims, D)) {
      int64_t UD = SD.UpdateWindowDims[W++];
      Size[size_t(D)] = Upd.Dims[size_t(UD)];
      Tg = B.CreateAdd(Tg, B.CreateZExtOrTrunc(U[size_t(UD)], I64));
    }
    Target[size_t(D)] = Tg;
    llvm::Value *Ok = B.CreateAnd(
        B.CreateICmpSGE(Start[size_t(D)], B.getInt64(0)),
        B.CreateICmpSLE(Start[size_t(D)],
                        B.getInt64(Op.Dims[size_t(D)] - Size[size_t(D)])));
    Fits = Fits ? B.CreateAnd(Fits, Ok) : Ok;
  }
  if (Fits) {
    auto *In = llvm::BasicBlock::Create(LC, "fits", K);
    B.CreateCondBr(Fits, In, GL.Done);
    B.SetInsertPoint(In);
  }
  for (llvm::Value *&Tg : Target)
    Tg = B.CreateTrunc(Tg, IndexTy);

  const PrimitiveType PT = Op.Type;
  llvm::Value *Val = FE.valueAt(Updates, U);
  llvm::Value *Ptr = B.CreateInBoundsGEP(
      storageType(LC, PT), K->getArg(C.parameterCount()),
      physicalOffset(B, Op, Target, IndexTy));
  const llvm::MaybeAlign Align(byteWidth(PT));
  const bool Float = isFloatType(PT);
  const bool Signed = isSignedIntType(PT);
  switch (SP.Combine) {
  case ScatterCombine::Store:
    B.CreateAlignedStore(storeConvert(B, Val, PT), Ptr, *Align);
    break;
  case ScatterCombine::AtomicAdd:
    B.CreateAtomicRMW(Float ? llvm::AtomicRMWInst::FAdd
                            : llvm::AtomicRMWInst::Add,
                      Ptr, storeConvert(B, Val, PT), Align,
                      llvm::AtomicOrdering::Monotonic);
    break;
  case ScatterCombine::AtomicMax:
  case ScatterCombine::AtomicMin: {
    bool Max = SP.Combine == ScatterCombine::AtomicMax;
    B.CreateAtomicRMW(Max ? (Signed ? llvm::AtomicRMWInst::Max
                                    : llvm::AtomicRMWInst::UMax)
                          : (Signed ? llvm::AtomicRMWInst::Min
                                    : llvm::AtomicRMWInst::UMin),
                      Ptr, storeConvert(B, Val, PT), Align,
                      llvm::AtomicOrdering::Monotonic);
    break;
  }
  case ScatterCombine::CompareAndSwap:
    emitCasCombine(B, *K, *S.toApply(), Ptr, Val, PT, Math);
    break;
  }
  GL.finish();
  return Info;
}

} // namespace codegen
} // namespace idxmap
