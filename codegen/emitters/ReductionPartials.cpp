//===- ReductionPartials.cpp - Partials handed between blocks -------------===//
//
// Part of idxmap. Multi-block reductions (full reductions over several
// blocks, split column reductions) hand each block's partial to the block
// that folds them through the per-launch workspace (KernelInfo::
// WorkspaceBytes: zero before the first launch, left zero by every launch).
// Two protocols:
//
//   - arrival: each block stores its partials and fences them, then thread 0
//     increments a counter; the block that arrives last folds. Its critical
//     path after its own loads: a fence (a round trip), the counter's atomic
//     (another) and the partials' loads (a third), with block barriers
//     between them.
//   - ticket (full and split column reductions, ReductionPlan::TicketFold):
//     thread 0 takes a ticket from the counter of the block's output when
//     the block starts (its latency hidden by the block's loads); each block
//     publishes its partials with ready flags (one 64-bit word per partial
//     when the value fits in 32 bits: nothing to fence); the block with the
//     last ticket, which started after every other block of its output had
//     started and so cannot wait on one that never runs, polls the flags
//     and folds. Its critical path: the partials' loads.
//
//===----------------------------------------------------------------------===//
#include "ReductionKernel.h"

#include "llvm/IR/IntrinsicsNVPTX.h"

namespace idxmap {
namespace codegen {
namespace reduction {

namespace {

unsigned bitWidth(llvm::Type *T) {
  return unsigned(T->getPrimitiveSizeInBits().getFixedValue());
}

} // namespace

llvm::Value *ReductionKernel::workspace(uint64_t Bytes) {
  assert(WorkspaceArg && "createFunction without a workspace");
  llvm::Value *P = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), WorkspaceArg,
                                                Info.WorkspaceBytes);
  Info.WorkspaceBytes += (Bytes + 15) / 16 * 16;
  return P;
}

std::vector<ReductionKernel::ScratchArray>
ReductionKernel::scratchArrays(int64_t Count) {
  std::vector<ScratchArray> S;
  for (llvm::Value *IV : Idents) {
    llvm::Type *T = storedType(IV->getType());
    uint64_t Bytes = uint64_t(Count) * M.getDataLayout().getTypeAllocSize(T);
    S.push_back({workspace(Bytes), T});
  }
  return S;
}

void ReductionKernel::storeScratch(const std::vector<ScratchArray> &S,
                                   llvm::Value *Idx,
                                   llvm::ArrayRef<llvm::Value *> Vals) {
  for (size_t I = 0; I < S.size(); ++I)
    B.CreateStore(toStored(Vals[I]),
                  B.CreateInBoundsGEP(S[I].ElemTy, S[I].Base, Idx),
                  /*isVolatile=*/true);
}

std::vector<llvm::Value *>
ReductionKernel::takeScratch(const std::vector<ScratchArray> &S,
                             llvm::Value *Idx) {
  std::vector<llvm::Value *> R;
  for (size_t I = 0; I < S.size(); ++I) {
    llvm::Value *At = scratchAt(S[I], Idx);
    R.push_back(loadScratch(S[I], At, I));
    clearScratch(S[I], At);
  }
  return R;
}

llvm::Value *ReductionKernel::scratchAt(const ScratchArray &A,
                                        llvm::Value *Idx) {
  return B.CreateInBoundsGEP(A.ElemTy, A.Base, Idx);
}

llvm::Value *ReductionKernel::loadScratch(const ScratchArray &A,
                                          llvm::Value *At, size_t Slot) {
  return fromStored(B.CreateLoad(A.ElemTy, At, /*isVolatile=*/true),
                    Inits[Slot]->getType());
}

void ReductionKernel::clearScratch(const ScratchArray &A, llvm::Value *At) {
  B.CreateStore(llvm::Constant::getNullValue(A.ElemTy), At,
                /*isVolatile=*/true);
}

std::pair<llvm::Value *, llvm::Value *>
ReductionKernel::arriveLast(llvm::Value *Idx, int64_t N, int64_t Arrivals) {
  llvm::Value *Counter = workspace(uint64_t(N) * 4);
  llvm::GlobalVariable *Flag =
      createSharedArray(M, B.getInt32Ty(), 1, Info.Name + ".last", 4);
  Info.SharedBytes += 4;
  llvm::Value *FlagPtr =
      B.CreateInBoundsGEP(Flag->getValueType(), Flag, {cst(0), cst(0)});
  llvm::Value *CPtr = B.CreateInBoundsGEP(B.getInt32Ty(), Counter, Idx);
  emitBarrier(B);
  emitIf(B.CreateICmpEQ(Th, cst(0)), [&] {
    llvm::Value *Old =
        B.CreateAtomicRMW(llvm::AtomicRMWInst::Add, CPtr, B.getInt32(1),
                          llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
    llvm::Value *Last = B.CreateICmpEQ(Old, B.getInt32(unsigned(Arrivals - 1)));
    B.CreateStore(B.CreateZExt(Last, B.getInt32Ty()), FlagPtr);
  });
  emitBarrier(B);
  llvm::Value *IsLast =
      B.CreateICmpNE(B.CreateLoad(B.getInt32Ty(), FlagPtr), B.getInt32(0));
  return {IsLast, CPtr};
}

std::pair<llvm::AllocaInst *, llvm::Value *>
ReductionKernel::takeTicket(llvm::Value *Idx, int64_t N) {
  llvm::Value *Counter =
      B.CreateInBoundsGEP(B.getInt32Ty(), workspace(uint64_t(N) * 4), Idx);
  llvm::IRBuilder<> EB(&K->getEntryBlock(), K->getEntryBlock().begin());
  llvm::AllocaInst *Ticket = EB.CreateAlloca(B.getInt32Ty());
  B.CreateStore(B.getInt32(0), Ticket);
  emitIf(B.CreateICmpEQ(Th, cst(0)), [&] {
    B.CreateStore(B.CreateAtomicRMW(llvm::AtomicRMWInst::Add, Counter,
                                    B.getInt32(1), llvm::MaybeAlign(4),
                                    llvm::AtomicOrdering::Monotonic),
                  Ticket);
  });
  return {Ticket, Counter};
}

ReductionKernel::PartialSlots ReductionKernel::partialSlots(int64_t Count) {
  PartialSlots S;
  llvm::Type *T = Idents[0]->getType();
  S.Packed = Idents.size() == 1 &&
             (T->isIntegerTy() || T->isFloatingPointTy()) && bitWidth(T) <= 32;
  if (S.Packed) {
    S.Flags = workspace(uint64_t(Count) * 8);
    return S;
  }
  S.Values = scratchArrays(Count);
  S.Flags = workspace(uint64_t(Count) * 4);
  return S;
}

void ReductionKernel::publishPartial(const PartialSlots &S, llvm::Value *Idx,
                                     llvm::ArrayRef<llvm::Value *> Vals) {
  if (S.Packed) {
    llvm::Value *V = toStored(Vals[0]);
    llvm::Value *Bits = B.CreateBitCast(V, B.getIntNTy(bitWidth(V->getType())));
    llvm::Value *Word = B.CreateOr(
        B.CreateShl(B.CreateZExt(Bits, B.getInt64Ty()), 32), B.getInt64(1));
    asmCall(B, B.getVoidTy(),
            {B.CreateInBoundsGEP(B.getInt64Ty(), S.Flags, Idx), Word},
            "st.relaxed.gpu.global.b64 [$0], $1;", "l,l,~{memory}");
    return;
  }
  storeScratch(S.Values, Idx, Vals);
  // Release: a reader that acquires the flag sees the values.
  asmCall(B, B.getVoidTy(),
          {B.CreateInBoundsGEP(B.getInt32Ty(), S.Flags, Idx), B.getInt32(1)},
          "st.release.gpu.global.b32 [$0], $1;", "l,r,~{memory}");
}

std::vector<std::vector<llvm::Value *>>
ReductionKernel::awaitSlots(const PartialSlots &S,
                            llvm::ArrayRef<llvm::Value *> Idx,
                            llvm::ArrayRef<llvm::Value *> Valid) {
  llvm::Type *FlagTy = S.Packed ? B.getInt64Ty() : B.getInt32Ty();
  const char *Load = S.Packed ? "ld.relaxed.gpu.global.b64 $0, [$1];"
                              : "ld.acquire.gpu.global.b32 $0, [$1];";
  const char *LoadCons = S.Packed ? "=l,l,~{memory}" : "=r,l,~{memory}";
  const size_t N = Idx.size();
  // Every flag read first, so that partials already published cost one
  // round trip together; an invalid slot reads a valid one's flag (its
  // index is any slot), counts as ready and is neither used nor cleared.
  std::vector<llvm::Value *> Addr, Word;
  for (size_t J = 0; J < N; ++J) {
    Addr.push_back(B.CreateInBoundsGEP(FlagTy, S.Flags, Idx[J]));
    Word.push_back(asmCall(B, FlagTy, {Addr[J]}, Load, LoadCons));
  }
  // Flags not set yet: polled until they are.
  for (size_t J = 0; J < N; ++J) {
    llvm::BasicBlock *Pre = B.GetInsertBlock();
    auto *Check = llvm::BasicBlock::Create(LC, "partial.check", K);
    auto *Reload = llvm::BasicBlock::Create(LC, "partial.poll", K);
    auto *Done = llvm::BasicBlock::Create(LC, "partial.ready", K);
    B.CreateBr(Check);
    B.SetInsertPoint(Check);
    llvm::PHINode *W = B.CreatePHI(FlagTy, 2);
    W->addIncoming(Word[J], Pre);
    llvm::Value *Flag = S.Packed ? B.CreateTrunc(W, B.getInt32Ty()) : W;
    llvm::Value *Ready = B.CreateICmpNE(Flag, B.getInt32(0));
    if (Valid[J])
      Ready = B.CreateOr(B.CreateNot(Valid[J]), Ready);
    B.CreateCondBr(Ready, Done, Reload);
    B.SetInsertPoint(Reload);
    W->addIncoming(asmCall(B, FlagTy, {Addr[J]}, Load, LoadCons), Reload);
    B.CreateBr(Check);
    B.SetInsertPoint(Done);
    Word[J] = W;
  }
  std::vector<std::vector<llvm::Value *>> Out;
  for (size_t J = 0; J < N; ++J) {
    std::vector<llvm::Value *> V;
    if (S.Packed) {
      llvm::Type *T = storedType(Idents[0]->getType());
      llvm::Value *Bits =
          B.CreateTrunc(B.CreateLShr(Word[J], 32), B.getIntNTy(bitWidth(T)));
      V.push_back(fromStored(B.CreateBitCast(Bits, T), Idents[0]->getType()));
    } else {
      for (const ScratchArray &A : S.Values)
        V.push_back(loadScratch(A, scratchAt(A, Idx[J]), V.size()));
    }
    if (Valid[J])
      for (size_t I = 0; I < V.size(); ++I)
        V[I] = B.CreateSelect(Valid[J], V[I], Idents[I]);
    Out.push_back(std::move(V));
  }
  // Cleared behind, for the next launch.
  for (size_t J = 0; J < N; ++J) {
    auto Clear = [&] {
      if (!S.Packed)
        for (const ScratchArray &A : S.Values)
          clearScratch(A, scratchAt(A, Idx[J]));
      B.CreateStore(llvm::Constant::getNullValue(FlagTy), Addr[J],
                    /*isVolatile=*/true);
    };
    if (Valid[J])
      emitIf(Valid[J], Clear);
    else
      Clear();
  }
  return Out;
}

std::vector<llvm::Value *> ReductionKernel::awaitPartials(const PartialSlots &S,
                                                          llvm::Value *Idx0,
                                                          int64_t Stride,
                                                          int64_t Count) {
  // Every thread folds the same number of partials, at most 8 flags in
  // flight per batch (a loop of batches beyond); those past Count are
  // invalid slots.
  const int64_t Per = (Count + Stride - 1) / Stride;
  const int64_t Batch = std::min<int64_t>(Per, RP.TicketBatch);
  const int64_t Batches = (Per + Batch - 1) / Batch;
  const bool Ragged = Per * Stride != Count;
  storeAccs(Idents);
  auto OneBatch = [&](llvm::Value *BIdx) {
    std::vector<llvm::Value *> Idx, Valid;
    for (int64_t J = 0; J < Batch; ++J) {
      llvm::Value *Jv = B.CreateAdd(B.CreateMul(BIdx, cst(Batch)), cst(J));
      llvm::Value *I = B.CreateAdd(Idx0, B.CreateMul(Jv, cst(Stride)));
      llvm::Value *Ok = Ragged || Batches * Batch != Per
                            ? B.CreateICmpULT(I, cst(Count))
                            : nullptr;
      Idx.push_back(Ok ? B.CreateSelect(Ok, I, cst(0)) : I);
      Valid.push_back(Ok);
    }
    std::vector<llvm::Value *> Acc = loadAccs();
    for (const auto &V : awaitSlots(S, Idx, Valid))
      Acc = combine(Acc, V);
    storeAccs(Acc);
  };
  if (Batches > 1)
    emitFor(cst(Batches), OneBatch);
  else
    OneBatch(cst(0));
  return loadAccs();
}

void ReductionKernel::foldByTicket(
    llvm::ArrayRef<llvm::Value *> R1, llvm::AllocaInst *Ticket,
    llvm::Value *Counter, int64_t Blocks,
    const std::function<void(llvm::ArrayRef<llvm::Value *>)> &Finish) {
  const int64_t T = Plan.Block[0];
  PartialSlots S = partialSlots(Blocks);
  emitIf(B.CreateICmpEQ(Th, cst(0)), [&] { publishPartial(S, Bl, R1); });
  auto Fold = [&](int64_t Folders) {
    std::vector<llvm::Value *> Tot = awaitPartials(S, Th, Folders, Blocks);
    Tot = Folders == int64_t(WarpSize)
              ? warpReduce(std::move(Tot), WarpSize)
              : blockReduce(std::move(Tot), unsigned(T),
                            /*BarrierAfter=*/false);
    emitIf(B.CreateICmpEQ(Th, cst(0)), [&] {
      B.CreateStore(B.getInt32(0), Counter, /*isVolatile=*/true);
      Finish(Tot);
    });
  };
  llvm::Value *LastTicket = B.getInt32(unsigned(Blocks - 1));
  if (RP.TicketFolders == int64_t(WarpSize)) {
    // Warp 0 folds, at most 4 partials a lane: no block barrier on the
    // way; thread 0's ticket reaches the warp by a shuffle.
    emitIf(B.CreateICmpULT(Th, cst(WarpSize)), [&] {
      llvm::Value *Mine = B.CreateIntrinsic(
          llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
          {B.getInt32(0xffffffffu), B.CreateLoad(B.getInt32Ty(), Ticket),
           B.getInt32(0), B.getInt32(31)});
      emitIf(B.CreateICmpEQ(Mine, LastTicket), [&] { Fold(WarpSize); });
    });
    return;
  }
  emitIf(lastTicket(Ticket, Counter, Blocks).first, [&] { Fold(T); });
}

std::pair<llvm::Value *, llvm::Value *>
ReductionKernel::lastTicket(llvm::AllocaInst *Ticket, llvm::Value *Counter,
                            int64_t Arrivals) {
  llvm::GlobalVariable *Flag =
      createSharedArray(M, B.getInt32Ty(), 1, Info.Name + ".last", 4);
  Info.SharedBytes += 4;
  llvm::Value *FlagPtr =
      B.CreateInBoundsGEP(Flag->getValueType(), Flag, {cst(0), cst(0)});
  emitIf(B.CreateICmpEQ(Th, cst(0)),
         [&] { B.CreateStore(B.CreateLoad(B.getInt32Ty(), Ticket), FlagPtr); });
  emitBarrier(B);
  llvm::Value *IsLast = B.CreateICmpEQ(B.CreateLoad(B.getInt32Ty(), FlagPtr),
                                       B.getInt32(unsigned(Arrivals - 1)));
  return {IsLast, Counter};
}

} // namespace reduction
} // namespace codegen
} // namespace idxmap
