//===- LoopEmitter.cpp - One thread per contiguous run of outputs ---------===//
//
// Part of idxmap. The launch shape, the thread→output map, the unrolling
// and every parameter's vector width come from the plan (KernelPlan::Main,
// LoopPlan): nothing here re-derives them.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "Emitters.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "KernelBuilder.h"

#include "idxmap/Coalescing.h"
#include "idxmap/Codegen.h"
#include "idxmap/RangeEvaluator.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"

#include <algorithm>
#include <map>

namespace idxmap {
namespace codegen {

std::string kernelName(const std::string &FusionName) {
  std::string N;
  for (char C : FusionName)
    N += std::isalnum(static_cast<unsigned char>(C)) ? C : '_';
  if (N.empty() || std::isdigit(static_cast<unsigned char>(N[0])))
    N = "k_" + N;
  return N;
}

Expected<KernelInfo> emitLoopKernel(llvm::Module &M, const HloInstruction &F,
                                    const FusionAnalysis &A,
                                    const KernelPlan &P, Context &Ctx,
                                    const MathOptions &Math) {
  requestBackEndOptLevel(M, P.BackEndOptLevel);
  const HloComputation &C = *A.Computation;
  for (const HloInstruction *R : A.Roots)
    if (!R->shape().isArray())
      return diagnoseAt(*R, "fusion '" + F.name() + "': output '" + R->name() +
                                "' is not an array");
  const ThreadMapping &TM = P.Main;
  const HloInstruction *Largest = TM.Target;
  const bool Uniform = P.Loop->SharedMapping;
  const Shape &OutShape = Largest->shape();
  int64_t N = OutShape.numElements(), V = TM.Vector, T = TM.ThreadsPerBlock;
  int64_t Threads = ceilDiv(N, V);
  // More blocks than grid.x allows: each block walks blocks bl, bl + Grid,
  // ... of the mapping (a grid-stride loop).
  const int64_t Grid = P.Grid[0];

  llvm::LLVMContext &LC = M.getContext();
  KernelInfo Info;
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = P.Emitter;
  // An in-place dynamic-update-slice computes each root's update and
  // stores it where the update-to-output map puts it; the output shares
  // its operand's buffer (Info.Aliases), whose other elements stay as they
  // are.
  const DynamicUpdateSlicePlan *Dus =
      P.DynamicUpdateSlice ? &*P.DynamicUpdateSlice : nullptr;
  auto Stored = [&](size_t R) -> const HloInstruction & {
    return Dus ? *A.Roots[R]->operand(1) : *A.Roots[R];
  };
  if (auto Err = setLaunchShape(Info, F, Math.Device, Grid, T))
    return *Err;
  std::vector<KernelParamSpec> Specs = fusionKernelParams(C, A.Roots, Info);
  if (Dus)
    for (size_t R = 0; R < A.Roots.size(); ++R)
      Info.Aliases.push_back({unsigned(C.parameterCount() + R),
                              unsigned(Dus->UpdatedParams[R])});
  llvm::Function *K = createKernel(M, Info.Name, Specs);
  setLaunchBounds(*K, {unsigned(T), /*Exact=*/true, 0});
  llvm::IRBuilder<> B(&K->getEntryBlock());

  llvm::Type *IndexTy = P.Index32 ? B.getInt32Ty() : B.getInt64Ty();
  // Threads past the last run do nothing (runs are whole: V divides N).
  GridLoop GL(B, *K, IndexTy, T, Grid, TM.Blocks);
  llvm::Value *Th = GL.Th, *Bl = GL.Bl;
  llvm::BasicBlock *Done = GL.Done;
  auto Finish = [&] { GL.finish(); };
  // Unrolled, thread th of block bl computes runs (bl * U + u) * T + th.
  const int64_t U = Uniform ? TM.Unroll : 1;
  if (TM.Blocks * T * U != Threads) {
    llvm::Value *Tid = B.CreateAdd(
        B.CreateMul(Bl, llvm::ConstantInt::get(IndexTy, T * U)), Th);
    auto *Body = llvm::BasicBlock::Create(LC, "body", K);
    B.CreateCondBr(
        B.CreateICmpULT(Tid, llvm::ConstantInt::get(IndexTy, Threads)), Body,
        Done);
    B.SetInsertPoint(Body);
  }

  LaneLoader Lanes(B, *K, C, P.Loop->LoadWidth, IndexTy);
  if (P.EvictLast)
    for (const HloInstruction *Pm : C.parameters())
      Lanes.setHint(*Pm, CacheHint::EvictLast);
  ParameterLoader Loader = Lanes.loader();
  FusedElementEmitter FE(B, Ctx, C, Loader, Math, IndexTy);
  FE.speculatePads(
      {P.Loop->SpeculatedPads.begin(), P.Loop->SpeculatedPads.end()},
      Lanes.guardedLoader());
  FE.speculateConcats(
      {P.Loop->SpeculatedConcats.begin(), P.Loop->SpeculatedConcats.end()});
  if (!Uniform) {
    // Each output on its own: thread id t computes element t (physical
    // order) of every output that has one.
    llvm::Value *Tid = B.CreateAdd(
        B.CreateMul(Bl, llvm::ConstantInt::get(IndexTy, T), "", true, true), Th,
        "", true, true);
    for (size_t R = 0; R < A.Roots.size(); ++R) {
      const Shape &S = A.Roots[R]->shape();
      int64_t NR = S.numElements();
      ThreadMapping RM = loopThreadMapping(Ctx, S, 1, T);
      auto *Body = llvm::BasicBlock::Create(LC, "out" + std::to_string(R), K);
      auto *Next = llvm::BasicBlock::Create(LC, "next" + std::to_string(R), K);
      B.CreateCondBr(B.CreateICmpULT(Tid, llvm::ConstantInt::get(IndexTy, NR)),
                     Body, Next);
      B.SetInsertPoint(Body);
      RangeEvaluator RRE(RM.Map);
      std::vector<llvm::Value *> Idx;
      for (Expr E : RM.Map.results())
        Idx.push_back(emitIndexExpr(B, E, {Th, Bl},
                                    {llvm::ConstantInt::get(IndexTy, 0)}, RRE,
                                    IndexTy));
      PrimitiveType PT = S.Type;
      llvm::Type *ST = storageType(LC, PT);
      llvm::Value *Ptr =
          B.CreateInBoundsGEP(ST, K->getArg(C.parameterCount() + R), Tid);
      B.CreateAlignedStore(storeConvert(B, FE.valueAt(*A.Roots[R], Idx), PT),
                           Ptr, llvm::Align(byteWidth(PT)));
      B.CreateBr(Next);
      B.SetInsertPoint(Next);
      FE.clearCache();
      Lanes.clear();
    }
    Finish();
    return Info;
  }
  // Every run's values first (its loads in flight together), then the
  // stores. A run past the end computes run 0's values (always there) and
  // skips its store.
  auto IdxC = [&](int64_t V2) { return llvm::ConstantInt::get(IndexTy, V2); };
  llvm::Value *Run0 = B.CreateAdd(B.CreateMul(Bl, IdxC(T * U), "", true, true),
                                  Th, "", true, true);
  RangeEvaluator RE(TM.Map);
  std::vector<llvm::Value *> RunValid(size_t(U), nullptr);
  std::vector<std::vector<std::vector<llvm::Value *>>> Values(
      static_cast<size_t>(U));
  // Per run and lane: the index of Main's target (the update's, for
  // in-place stores).
  std::vector<std::vector<std::vector<llvm::Value *>>> Indices(
      static_cast<size_t>(U));
  for (int64_t Uu = 0; Uu < U; ++Uu) {
    llvm::Value *USym = IdxC(Uu);
    if (Uu > 0 && TM.Blocks * T * U != Threads) {
      RunValid[Uu] = B.CreateICmpULT(
          B.CreateAdd(Run0, IdxC(Uu * T), "", true, true), IdxC(Threads));
      USym = B.CreateSelect(RunValid[Uu], USym, IdxC(0));
    }
    Values[Uu].resize(A.Roots.size());
    for (int64_t L = 0; L < V; ++L) {
      Lanes.Lane = Uu * V + L;
      std::vector<llvm::Value *> Syms = {IdxC(L)};
      if (U > 1)
        Syms.insert(Syms.begin(), USym);
      std::vector<llvm::Value *> Idx;
      for (Expr E : TM.Map.results())
        Idx.push_back(emitIndexExpr(B, E, {Th, Bl}, Syms, RE, IndexTy));
      for (size_t R = 0; R < A.Roots.size(); ++R)
        Values[Uu][R].push_back(FE.valueAt(Stored(R), Idx));
      Indices[Uu].push_back(std::move(Idx));
    }
  }

  // Stores: the loop mapping walks the output in physical order, so run r
  // starts at element r * V.
  for (int64_t Uu = 0; Uu < U; ++Uu) {
    llvm::BasicBlock *After = nullptr;
    if (RunValid[Uu]) {
      auto *Store =
          llvm::BasicBlock::Create(LC, "store" + std::to_string(Uu), K);
      After = llvm::BasicBlock::Create(LC, "stored" + std::to_string(Uu), K);
      B.CreateCondBr(RunValid[Uu], Store, After);
      B.SetInsertPoint(Store);
    }
    llvm::Value *Start = B.CreateMul(
        Uu == 0 ? Run0 : B.CreateAdd(Run0, IdxC(Uu * T), "", true, true),
        IdxC(V), "", true, true);
    for (size_t R = 0; R < A.Roots.size(); ++R) {
      PrimitiveType PT = A.Roots[R]->shape().Type;
      llvm::Type *ST = storageType(LC, PT);
      llvm::Value *Base = K->getArg(C.parameterCount() + R);
      int64_t Bytes = byteWidth(PT);
      const std::vector<llvm::Value *> &Vals = Values[Uu][R];
      if (Dus) {
        // Through the update-to-output map: one vector when the plan
        // proved it for every start, else element by element.
        const Shape &OS = A.Roots[R]->shape();
        auto OutPtr = [&](int64_t L) {
          std::vector<llvm::Value *> OutIdx =
              FE.mapWithRuntime(Dus->OutputMaps[R], Indices[Uu][size_t(L)]);
          return elementPointer(B, ST, Base, OS, OutIdx, IndexTy);
        };
        if (V > 1 && Dus->StoreWidth[R] == V) {
          auto *VT = llvm::FixedVectorType::get(ST, unsigned(V));
          llvm::Value *Vec = llvm::PoisonValue::get(VT);
          for (int64_t L = 0; L < V; ++L)
            Vec = B.CreateInsertElement(Vec, storeConvert(B, Vals[L], PT),
                                        uint64_t(L));
          B.CreateAlignedStore(Vec, OutPtr(0), llvm::Align(V * Bytes));
        } else {
          for (int64_t L = 0; L < V; ++L)
            B.CreateAlignedStore(storeConvert(B, Vals[L], PT), OutPtr(L),
                                 llvm::Align(Bytes));
        }
        continue;
      }
      llvm::Value *Ptr = B.CreateInBoundsGEP(ST, Base, Start);
      if (V == 1) {
        B.CreateAlignedStore(storeConvert(B, Vals[0], PT), Ptr,
                             llvm::Align(Bytes));
        continue;
      }
      auto *VT = llvm::FixedVectorType::get(ST, unsigned(V));
      llvm::Value *Vec = llvm::PoisonValue::get(VT);
      for (int64_t L = 0; L < V; ++L)
        Vec = B.CreateInsertElement(Vec, storeConvert(B, Vals[L], PT),
                                    uint64_t(L));
      B.CreateAlignedStore(Vec, Ptr, llvm::Align(V * Bytes));
    }
    if (After) {
      B.CreateBr(After);
      B.SetInsertPoint(After);
    }
  }
  Finish();
  return Info;
}

} // namespace codegen
} // namespace idxmap
