//===- FusedElementFunctions.cpp - Subgraph functions ---------------------===//
//
// Part of idxmap. The values of a fused computation that are read at several
// indices become functions of their index when inlining them would be large
// (the kernel plan decides which: analysis/fusion/plan/SubgraphFunctions.cpp;
// FusedElementEmitter's class comment has the rule): without them, a chain
// `x[k] = x[k-1] + reverse(x[k-1])` doubles the IR at every level (20
// levels: 30 s and 3 GB to emit). As in XLA's emitters, where each subgraph
// of the computation partitioner is a function of its indices taking the
// fusion's buffers as arguments, a function here takes the index and the
// kernel arguments its parameter loads read; LLVM's inliner decides which
// calls to expand.
//
//===----------------------------------------------------------------------===//
#include "FusedElementEmitter.h"

#include "llvm/IR/Attributes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"

#include <algorithm>
#include <set>

namespace idxmap {
namespace codegen {

bool FusedElementEmitter::outlined(const HloInstruction &I, int64_t OutputId) {
  if (OutputId != 0 || !Outline.count(&I))
    return false;
  return Overrides.empty() || !reachesOverride(I);
}

bool FusedElementEmitter::reachesOverride(const HloInstruction &I) {
  // Post-order over the operands, iteratively (chains are long).
  std::vector<std::pair<const HloInstruction *, size_t>> Stack{{&I, 0}};
  while (!Stack.empty()) {
    auto &[N, Next] = Stack.back();
    if (ReachesOverride.count(N)) {
      Stack.pop_back();
      continue;
    }
    if (Overrides.count(N)) {
      ReachesOverride[N] = true;
      Stack.pop_back();
      continue;
    }
    if (Next < N->operands().size()) {
      const HloInstruction *O = N->operands()[Next++];
      if (!ReachesOverride.count(O))
        Stack.push_back({O, 0});
      continue;
    }
    bool Any = false;
    for (const HloInstruction *O : N->operands())
      Any = Any || ReachesOverride[O];
    ReachesOverride[N] = Any;
    Stack.pop_back();
  }
  return ReachesOverride[&I];
}

llvm::Value *
FusedElementEmitter::callFunction(const HloInstruction &I,
                                  llvm::ArrayRef<llvm::Value *> Index) {
  if (!Kernel)
    Kernel = B.GetInsertBlock()->getParent();
  if (!Functions.count(&I)) {
    // The functions I's body calls first, callees before callers, so that
    // no body is built inside another (the native stack stays flat).
    std::set<const HloInstruction *> Seen{&I};
    std::vector<std::pair<const HloInstruction *, size_t>> Stack{{&I, 0}};
    while (!Stack.empty()) {
      auto &[N, Next] = Stack.back();
      if (Next < N->operands().size()) {
        const HloInstruction *O = N->operands()[Next++];
        if (!Functions.count(O) && Seen.insert(O).second)
          Stack.push_back({O, 0});
        continue;
      }
      const HloInstruction *Done = N;
      Stack.pop_back();
      if (Done != &I && outlined(*Done, 0))
        buildFunction(*Done);
    }
    buildFunction(I);
  }
  const SubgraphFunction &SF = Functions.at(&I);
  std::vector<llvm::Value *> Args;
  for (llvm::Value *V : Index)
    Args.push_back(B.CreateSExtOrTrunc(V, IndexTy));
  Args.insert(Args.end(), SF.Captured.begin(), SF.Captured.end());
  return B.CreateCall(SF.F, Args);
}

void FusedElementEmitter::buildFunction(const HloInstruction &I) {
  llvm::Module &M = *Kernel->getParent();
  llvm::LLVMContext &LC = M.getContext();
  const size_t Rank = I.shape().Dims.size();
  // The body is built in a function of the index only; the values from
  // outside it that the body uses (the kernel arguments of its parameter
  // loads, and those its callees take) become parameters afterwards.
  std::vector<llvm::Type *> IndexTys(Rank, IndexTy);
  llvm::Function *Tmp = llvm::Function::Create(
      llvm::FunctionType::get(B.getVoidTy(), IndexTys, false),
      llvm::GlobalValue::InternalLinkage, "", M);
  llvm::Value *V = nullptr;
  llvm::BasicBlock *End = nullptr;
  {
    llvm::IRBuilderBase::InsertPointGuard Guard(B);
    auto SavedCache = std::move(Cache);
    Cache.clear();
    std::vector<CacheKey> *SavedAdded = Added;
    const HloInstruction *SavedBuilding = Building;
    Added = nullptr;
    Building = &I;
    B.SetInsertPoint(llvm::BasicBlock::Create(LC, "entry", Tmp));
    std::vector<llvm::Value *> Index;
    for (llvm::Argument &A : Tmp->args())
      Index.push_back(&A);
    V = valueInline(I, Index, 0);
    End = B.GetInsertBlock();
    Cache = std::move(SavedCache);
    Added = SavedAdded;
    Building = SavedBuilding;
  }
  auto Foreign = [&](llvm::Value *X) {
    if (auto *A = llvm::dyn_cast<llvm::Argument>(X))
      return A->getParent() != Tmp;
    if (auto *In = llvm::dyn_cast<llvm::Instruction>(X))
      return In->getFunction() != Tmp;
    return false;
  };
  std::vector<llvm::Value *> Captured;
  std::set<llvm::Value *> Seen;
  auto Capture = [&](llvm::Value *X) {
    if (Foreign(X) && Seen.insert(X).second)
      Captured.push_back(X);
  };
  for (llvm::BasicBlock &BB : *Tmp)
    for (llvm::Instruction &In : BB)
      for (llvm::Value *Op : In.operands())
        Capture(Op);
  Capture(V);

  std::vector<llvm::Type *> Params = IndexTys;
  for (llvm::Value *X : Captured)
    Params.push_back(X->getType());
  llvm::Function *F = llvm::Function::Create(
      llvm::FunctionType::get(V->getType(), Params, false),
      llvm::GlobalValue::InternalLinkage, Kernel->getName() + "." + I.name(),
      M);
  // It only reads memory and always returns: early CSE merges the calls
  // at one index, and the inliner may drop unused ones.
  F->addFnAttr(llvm::Attribute::NoUnwind);
  F->addFnAttr(llvm::Attribute::WillReturn);
  F->setOnlyReadsMemory();
  F->splice(F->end(), Tmp);
  llvm::IRBuilder<> RB(End);
  RB.CreateRet(V);
  for (size_t D = 0; D < Rank; ++D) {
    F->getArg(unsigned(D))->setName("i" + std::to_string(D));
    Tmp->getArg(unsigned(D))->replaceAllUsesWith(F->getArg(unsigned(D)));
  }
  for (size_t K = 0; K < Captured.size(); ++K) {
    llvm::Argument *A = F->getArg(unsigned(Rank + K));
    A->setName(Captured[K]->getName());
    Captured[K]->replaceUsesWithIf(A, [F](llvm::Use &U) {
      auto *User = llvm::dyn_cast<llvm::Instruction>(U.getUser());
      return User && User->getFunction() == F;
    });
    // A kernel argument keeps what the kernel knows of it (noalias,
    // readonly, alignment); the function only reads through it.
    if (auto *KA = llvm::dyn_cast<llvm::Argument>(Captured[K]))
      for (llvm::Attribute::AttrKind Kind :
           {llvm::Attribute::NoAlias, llvm::Attribute::ReadOnly,
            llvm::Attribute::Alignment})
        if (KA->getParent()->hasParamAttribute(KA->getArgNo(), Kind))
          A->addAttr(KA->getParent()->getAttributes().getParamAttr(
              KA->getArgNo(), Kind));
  }
  Tmp->eraseFromParent();
  Functions[&I] = {F, std::move(Captured)};
}

} // namespace codegen
} // namespace idxmap
