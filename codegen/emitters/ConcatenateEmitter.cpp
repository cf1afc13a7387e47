//===- ConcatenateEmitter.cpp - Each operand's elements read once ---------===//
//
// Part of idxmap. The concatenate emitter builds the kernel the plan
// describes (ConcatenatePlan): threads over the largest operand's index
// space, and for each operand that covers a thread's run, that operand's
// values (its prologue), the root's values from them at their place in the
// output (the epilogue, the concatenation's value overridden), and their
// stores: one vector where the plan proved it, else lane by lane.
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

namespace idxmap {
namespace codegen {

Expected<KernelInfo> emitConcatenateKernel(llvm::Module &M,
                                           const HloInstruction &F,
                                           const FusionAnalysis &A,
                                           const KernelPlan &P, Context &Ctx,
                                           const MathOptions &Math) {
  requestBackEndOptLevel(M, P.BackEndOptLevel);
  const HloComputation &C = *A.Computation;
  const ConcatenatePlan &CP = *P.Concatenate;
  const HloInstruction &X = *CP.Concat;
  const HloInstruction &Root = *A.Roots.front();
  const ThreadMapping &TM = P.Main;
  const int64_t V = TM.Vector, T = TM.ThreadsPerBlock;
  const int64_t Threads = ceilDiv(TM.Target->shape().numElements(), V);

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
  Specs.push_back({Root.name(), KernelParamRole::Output, 16, nullptr});
  Info.Params.push_back({Root.name(), true, Root.shape(), 16});
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
  // Each lane's index in the largest operand's space (every operand's,
  // inside its extent).
  RangeEvaluator RE(TM.Map);
  std::vector<std::vector<llvm::Value *>> Idx(static_cast<size_t>(V));
  for (int64_t L = 0; L < V; ++L)
    for (Expr E : TM.Map.results())
      Idx[size_t(L)].push_back(
          emitIndexExpr(B, E, {GL.Th, GL.Bl}, {IdxC(L)}, RE, IndexTy));

  LaneLoader Lanes(B, *K, C, P.Loop->LoadWidth, IndexTy);
  FusedElementEmitter FE(B, Ctx, C, Lanes.loader(), Math, IndexTy);
  const PrimitiveType PT = Root.shape().Type;
  llvm::Type *ST = storageType(LC, PT);
  const int64_t Bytes = byteWidth(PT);
  llvm::Value *Out = K->getArg(C.parameterCount());
  const size_t Dim = size_t(CP.Dim);
  const int64_t Largest = TM.Target->shape().Dims[Dim];

  // Operand K's value at lane L, through the epilogue at its place.
  auto RootValue = [&](int64_t Op, int64_t L,
                       const std::vector<llvm::Value *> &OutIdx) {
    Lanes.Lane = L;
    llvm::Value *Val = FE.valueAt(*X.operand(Op), Idx[size_t(L)]);
    if (&Root == &X)
      return Val;
    FE.setOverride(X, [Val](llvm::ArrayRef<llvm::Value *>) { return Val; });
    llvm::Value *R = FE.valueAt(Root, OutIdx);
    FE.setOverride(X, nullptr);
    return R;
  };
  auto OutIndex = [&](int64_t Op, int64_t L) {
    return emitIndexExprs(B, CP.OutputMaps[size_t(Op)], Idx[size_t(L)], {},
                          IndexTy);
  };
  // Runs `Body` under `Cond` (none: always), then forgets what it cached.
  auto Guarded = [&](llvm::Value *Cond, const std::function<void()> &Body) {
    llvm::BasicBlock *After = nullptr;
    if (Cond) {
      auto *Then = llvm::BasicBlock::Create(LC, "operand", K);
      After = llvm::BasicBlock::Create(LC, "operand.next", K);
      B.CreateCondBr(Cond, Then, After);
      B.SetInsertPoint(Then);
    }
    Body();
    if (After) {
      B.CreateBr(After);
      B.SetInsertPoint(After);
    }
    FE.clearCache();
    Lanes.clear();
  };
  for (int64_t Op = 0; Op < X.operandCount(); ++Op) {
    const int64_t Ext = CP.Extent[size_t(Op)];
    if (Ext == 0)
      continue;
    auto InOperand = [&](int64_t L) -> llvm::Value * {
      return Ext >= Largest ? nullptr
                            : B.CreateICmpULT(Idx[size_t(L)][Dim], IdxC(Ext));
    };
    if (!CP.WholeRuns[size_t(Op)]) {
      for (int64_t L = 0; L < V; ++L)
        Guarded(InOperand(L), [&] {
          std::vector<llvm::Value *> OI = OutIndex(Op, L);
          B.CreateAlignedStore(
              storeConvert(B, RootValue(Op, L, OI), PT),
              B.CreateInBoundsGEP(ST, Out,
                                  physicalOffset(B, Root.shape(), OI, IndexTy)),
              llvm::Align(Bytes));
        });
      continue;
    }
    Guarded(InOperand(0), [&] {
      std::vector<std::vector<llvm::Value *>> OI;
      std::vector<llvm::Value *> Vals;
      for (int64_t L = 0; L < V; ++L) {
        OI.push_back(OutIndex(Op, L));
        Vals.push_back(storeConvert(B, RootValue(Op, L, OI.back()), PT));
      }
      if (V > 1 && CP.StoreWidth[size_t(Op)] == V) {
        llvm::Value *Vec =
            llvm::PoisonValue::get(llvm::FixedVectorType::get(ST, unsigned(V)));
        for (int64_t L = 0; L < V; ++L)
          Vec = B.CreateInsertElement(Vec, Vals[size_t(L)], uint64_t(L));
        B.CreateAlignedStore(
            Vec,
            B.CreateInBoundsGEP(
                ST, Out, physicalOffset(B, Root.shape(), OI[0], IndexTy)),
            llvm::Align(V * Bytes));
        return;
      }
      for (int64_t L = 0; L < V; ++L)
        B.CreateAlignedStore(
            Vals[size_t(L)],
            B.CreateInBoundsGEP(
                ST, Out, physicalOffset(B, Root.shape(), OI[size_t(L)], IndexTy)),
            llvm::Align(Bytes));
    });
  }
  GL.finish();
  return Info;
}

} // namespace codegen
} // namespace idxmap
