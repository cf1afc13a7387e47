//===- ReductionKernel.h - The reduction emitter's kernel state -*- C++ -*-===//
//
// Part of idxmap. Private to the reduction emitter: the kernel under
// construction, shared by ReductionEmitter.cpp (set-up, loads, combines,
// epilogue), ReductionRows.cpp (row, multi-row and full reductions) and
// ReductionColumns.cpp (column reductions).
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_EMITTERS_REDUCTIONKERNEL_H
#define IDXMAP_CODEGEN_EMITTERS_REDUCTIONKERNEL_H

#include "EmitterSupport.h"
#include "Emitters.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "GpuBuilder.h"
#include "KernelBuilder.h"

#include "idxmap/Coalescing.h"
#include "idxmap/Codegen.h"
#include "idxmap/Compose.h"
#include "idxmap/Print.h"
#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/InlineAsm.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <set>

namespace idxmap {
namespace codegen {
namespace reduction {

inline Diagnostic unsupported(const HloInstruction &F, const std::string &Why) {
  return emitterRefusal(F, "reduction", Why);
}

/// One accumulator slot: reduce hero \p Hero, output \p Out.
struct Slot {
  const HloInstruction *Hero;
  int64_t Out;
};

/// Shared state of one reduction kernel.
class ReductionKernel {
public:
  ReductionKernel(llvm::Module &M, const HloInstruction &F,
                  const FusionAnalysis &A, const KernelPlan &Plan, Context &Ctx,
                  const MathOptions &Math)
      : M(M), LC(M.getContext()), F(F), A(A), C(*A.Computation), Plan(Plan),
        RP(*Plan.Reduction), Math(Math), B(LC), Ctx(Ctx) {}

  Expected<KernelInfo> run();

private:
  std::optional<Diagnostic> collect();
  /// Element by element loads (epilogues, init values).
  ParameterLoader scalarLoader() {
    return
        [this](const HloInstruction &P, llvm::ArrayRef<llvm::Value *> Index) {
          return loadParameterElement(B, *K, P, Index, IndexTy,
                                      OffsetTermOrder::MinorToMajor, Hint[&P]);
        };
  }
  /// Creates the kernel; with \p Workspace its last parameter is the
  /// per-launch workspace (KernelInfo::WorkspaceBytes) that scratchArrays
  /// and arriveLast carve up.
  std::optional<Diagnostic> createFunction(int64_t Threads, int64_t Blocks,
                                           int64_t Shared,
                                           bool Workspace = false);
  /// Builds `(th_x, bl_x)[syms...] -> input index` from the linear offset
  /// and proves each parameter's vector width under it.
  void setInputMap(std::vector<Variable> Syms, Expr Lin,
                   std::vector<Constraint> Cs);
  /// Values of every hero operand (per vector lane, per slot) at the input
  /// point (\p DimVals, \p SymVals) of InMap (the last symbol, the vector
  /// lane, is taken 0..V-1 here; a masked step passes a substituted point of
  /// the domain); \p UnrollSlot distinguishes the steps of one group for
  /// vector reuse. Side outputs at the same point are queued in Pending
  /// (guarded by CurGuard).
  std::vector<std::vector<llvm::Value *>>
  valuesAt(FusedElementEmitter &FE, llvm::ArrayRef<llvm::Value *> DimVals,
           llvm::ArrayRef<llvm::Value *> SymVals, int64_t UnrollSlot);
  /// Folds \p Vals (per lane, per slot) into the accumulator allocas.
  void accumulate(const std::vector<std::vector<llvm::Value *>> &Vals);
  /// Stores the side-output values computed by valuesAt since the last
  /// flush (vector stores of the proven width).
  void flushSideStores();
  bool isSide(size_t Root) const {
    for (const SideRoot &S : Sides)
      if (S.Root == Root)
        return true;
    return false;
  }
  std::vector<llvm::Value *> combine(llvm::ArrayRef<llvm::Value *> Acc,
                                     llvm::ArrayRef<llvm::Value *> Val) {
    return combineReduces(B, Heroes, Acc, Val, Math);
  }
  std::vector<llvm::Value *> loadAccs();
  void storeAccs(llvm::ArrayRef<llvm::Value *> V);
  std::vector<llvm::Value *> warpReduce(std::vector<llvm::Value *> V,
                                        unsigned Width) {
    return butterflyReduce(B, Heroes, std::move(V), Width, Math);
  }
  /// Reduces across the block's warps (after warpReduce(32)): every thread
  /// gets the block's value. Without \p Barrier after, the shared slots
  /// it used must not be written again (the caller's last use).
  std::vector<llvm::Value *> blockReduce(std::vector<llvm::Value *> V,
                                         unsigned Threads,
                                         bool BarrierAfter = true);
  /// if (Cond) Body(); (no values flow out: use allocas).
  void emitIf(llvm::Value *Cond, const std::function<void()> &Body) {
    codegen::emitIf(B, Cond, Body);
  }
  /// for (iv = 0; iv < N; ++iv) Body(iv).
  void emitFor(llvm::Value *N, const std::function<void(llvm::Value *)> &Body);
  /// Computes and stores every root at output index \p OutExprs (exprs in
  /// th_x, bl_x) from the reduced values \p Red.
  void emitEpilogue(llvm::ArrayRef<llvm::Value *> Red,
                    llvm::ArrayRef<llvm::Value *> OutIdx);
  /// `membar.gl` (CUDA's __threadfence): orders this thread's global
  /// writes before its later ones for every thread of the device.
  void threadFence() {
    auto *FT = llvm::FunctionType::get(B.getVoidTy(), false);
    B.CreateCall(llvm::InlineAsm::get(FT, "membar.gl;", "~{memory}", true));
  }
  llvm::Value *cst(int64_t V) { return llvm::ConstantInt::get(IndexTy, V); }
  std::vector<llvm::Value *> emitExprs(const IndexingMap &Map,
                                       llvm::ArrayRef<llvm::Value *> Syms) {
    return emitExprs(Map, {Th, Bl}, Syms);
  }
  std::vector<llvm::Value *> emitExprs(const IndexingMap &Map,
                                       llvm::ArrayRef<llvm::Value *> Dims,
                                       llvm::ArrayRef<llvm::Value *> Syms) {
    return emitIndexExprs(B, MapRanges, Map, Dims, Syms, IndexTy);
  }
  /// Output logical index of the reduce for input linear offset \p Lin.
  std::vector<Expr> outputExprs(Expr Lin);

  Expected<KernelInfo> emitRows();
  /// A full reduction's last \p Count input elements from linear offset
  /// \p First (ReductionPlan::TailElements): thread th < Count of block 0
  /// folds element First + th into its accumulators, element by element.
  void emitScalarTail(int64_t First, int64_t Count);
  Expected<KernelInfo> emitColumns();

  /// Loads parameters through the vector cache (Vectors): a parameter with
  /// a proven width W is read as one W-element vector per W lanes.
  ParameterLoader vectorLoader();
  /// Another set of accumulators (one per slot), set to the init values.
  std::vector<llvm::AllocaInst *> newAccumulators();
  /// Butterfly over lane masks Width/2 .. Lowest within groups of Width
  /// lanes, every set combined on its own (the shuffles of all sets of one
  /// step are independent).
  std::vector<std::vector<llvm::Value *>>
  warpReduceSets(std::vector<std::vector<llvm::Value *>> Sets, unsigned Width,
                 unsigned Lowest = 1) {
    return butterflyReduceSets(B, Heroes, std::move(Sets), Width, Lowest, Math);
  }
  /// Memory form of an accumulator (pred as i8) and back.
  llvm::Type *storedType(llvm::Type *T) {
    return T->isIntegerTy(1) ? B.getInt8Ty() : T;
  }
  llvm::Value *toStored(llvm::Value *X) {
    return X->getType()->isIntegerTy(1) ? B.CreateZExt(X, B.getInt8Ty()) : X;
  }
  llvm::Value *fromStored(llvm::Value *X, llvm::Type *T) {
    return T->isIntegerTy(1) ? B.CreateTrunc(X, T) : X;
  }
  /// One array of partials in the workspace: its first element and type.
  struct ScratchArray {
    llvm::Value *Base;
    llvm::Type *ElemTy;
  };
  /// \p Bytes more of the workspace (16-byte aligned): its address.
  llvm::Value *workspace(uint64_t Bytes);
  /// Arrays of \p Count partials in the workspace, one per accumulator slot.
  std::vector<ScratchArray> scratchArrays(int64_t Count);
  /// Volatile stores of element \p Idx of every scratch array; takeScratch
  /// loads them and zeroes them behind (the workspace contract: the kernel
  /// leaves the workspace zeroed for the next launch that shares it).
  void storeScratch(const std::vector<ScratchArray> &S, llvm::Value *Idx,
                    llvm::ArrayRef<llvm::Value *> Vals);
  std::vector<llvm::Value *> takeScratch(const std::vector<ScratchArray> &S,
                                         llvm::Value *Idx);
  /// Element \p Idx of \p A: its address, its value (volatile, as the type
  /// of accumulator slot \p Slot) and the volatile store that zeroes it.
  llvm::Value *scratchAt(const ScratchArray &A, llvm::Value *Idx);
  llvm::Value *loadScratch(const ScratchArray &A, llvm::Value *At, size_t Slot);
  void clearScratch(const ScratchArray &A, llvm::Value *At);
  /// After every thread's partial stores (each followed by threadFence):
  /// a barrier, then thread 0 counts the block's arrival at counter \p Idx
  /// of \p N (in the workspace, zero before the first launch). Returns
  /// (true in every thread of the block that arrives as the \p Arrivals-th,
  /// the counter's address); that block's thread 0 resets the counter to 0,
  /// so the workspace is zero again after every launch.
  std::pair<llvm::Value *, llvm::Value *>
  arriveLast(llvm::Value *Idx, int64_t N, int64_t Arrivals);

  /// Ticket folds (ReductionPlan::TicketFold). At the kernel's start,
  /// thread 0 takes the block's ticket from counter \p Idx of \p N in the
  /// workspace (its place in launch order among the blocks that count
  /// there: the block with the last ticket starts after every other one
  /// has started, so it may wait for them). Returns (an alloca holding the
  /// ticket in thread 0, the counter's address).
  std::pair<llvm::AllocaInst *, llvm::Value *> takeTicket(llvm::Value *Idx,
                                                          int64_t N);
  /// Where \p Count partials are published: with one accumulator of at
  /// most 32 bits, one 64-bit word each (the value's bits above a ready
  /// flag, written and read in one access); else the scratch arrays and a
  /// 32-bit flag each, released after the values.
  struct PartialSlots {
    bool Packed = false;
    llvm::Value *Flags = nullptr; // i64 words when Packed, else i32 flags
    std::vector<ScratchArray> Values;
  };
  PartialSlots partialSlots(int64_t Count);
  /// Thread-level: publishes \p Vals as partial \p Idx.
  void publishPartial(const PartialSlots &S, llvm::Value *Idx,
                      llvm::ArrayRef<llvm::Value *> Vals);
  /// Thread-level: waits for partials \p Idx (each where its \p Valid
  /// holds; null: always) and returns their values (the identities where
  /// not valid), clearing them behind. Every flag is read before the first
  /// wait: partials already published cost one round trip together.
  std::vector<std::vector<llvm::Value *>>
  awaitSlots(const PartialSlots &S, llvm::ArrayRef<llvm::Value *> Idx,
             llvm::ArrayRef<llvm::Value *> Valid);
  /// The calling thread folds partials Idx0 + j * Stride < Count, j =
  /// 0, 1, ..., in order, 8 waits at a time (awaitSlots).
  std::vector<llvm::Value *> awaitPartials(const PartialSlots &S,
                                           llvm::Value *Idx0, int64_t Stride,
                                           int64_t Count);
  /// (true in every thread of the block that holds ticket \p Arrivals - 1
  /// of takeTicket's \p Ticket, \p Counter; the counter's address, which
  /// that block resets to 0 when done), through shared memory and a
  /// barrier.
  std::pair<llvm::Value *, llvm::Value *>
  lastTicket(llvm::AllocaInst *Ticket, llvm::Value *Counter, int64_t Arrivals);
  /// The full reduction's fold by ticket: every block's thread 0
  /// publishes the block's value \p R1; the block holding the last of
  /// \p Blocks tickets (\p Ticket, \p Counter: takeTicket) folds them,
  /// resets the counter and calls \p Finish with the total in thread 0.
  void foldByTicket(
      llvm::ArrayRef<llvm::Value *> R1, llvm::AllocaInst *Ticket,
      llvm::Value *Counter, int64_t Blocks,
      const std::function<void(llvm::ArrayRef<llvm::Value *>)> &Finish);

  llvm::Module &M;
  llvm::LLVMContext &LC;
  const HloInstruction &F;
  const FusionAnalysis &A;
  const HloComputation &C;
  const KernelPlan &Plan;
  const ReductionPlan &RP;
  MathOptions Math;
  llvm::IRBuilder<> B;
  Context &Ctx;
  KernelInfo Info;
  llvm::Function *K = nullptr;
  /// The workspace parameter (createFunction); Info.WorkspaceBytes is how
  /// much of it is carved up so far.
  llvm::Value *WorkspaceArg = nullptr;
  llvm::Type *IndexTy = nullptr;
  llvm::Value *Th = nullptr, *Bl = nullptr;

  std::vector<const HloInstruction *> Heroes;
  /// Side outputs: roots computed per element of the reduce input in the
  /// reading loop (index into A.Roots, and whether the root has the input's
  /// dims: then it is computed at the input's own index, else at the index
  /// of its own physical order given by Map).
  struct SideRoot {
    size_t Root;
    bool SameIndex;
    /// Proven store vector width (elements) for SameIndex roots.
    int64_t Width = 1;
    IndexingMap Map;
  };
  std::vector<SideRoot> Sides;
  /// Side-output values waiting to be stored: per side root, per lane,
  /// (value, index of the root).
  struct PendingStore {
    size_t Side;
    /// Stored only where this i1 holds (null: always).
    llvm::Value *Guard;
    std::vector<llvm::Value *> Vals;
    std::vector<std::vector<llvm::Value *>> Index;
  };
  std::vector<PendingStore> Pending;
  std::vector<Slot> Slots;
  /// The init value of each output slot, and the value every partial
  /// accumulator starts from: the reducer's identity where it is known
  /// (the init value is then combined once, into the final result, as the
  /// interpreter does), else the init value itself (assumed an identity,
  /// as XLA does, for reducers such as argmax's).
  std::vector<llvm::Value *> Inits, Idents;
  std::vector<bool> CombineInit; // per slot: the init is not in Idents
  std::vector<llvm::AllocaInst *> Accs;
  const Shape *In = nullptr;
  int64_t V = 1;
  IndexingMap InMap;
  /// The ranges of the maps evaluated at every unrolled point.
  RangeCache MapRanges;
  std::map<const HloInstruction *, int64_t> Width;
  /// How each parameter is loaded: EvictFirst for those read exactly once.
  std::map<const HloInstruction *, CacheHint> Hint;
  std::map<std::tuple<const HloInstruction *, int64_t, int64_t>, llvm::Value *>
      Vectors;
  int64_t CurSlot = 0, CurLane = 0;
  /// Guard of the side stores of the step valuesAt computes.
  llvm::Value *CurGuard = nullptr;
};

} // namespace reduction
} // namespace codegen
} // namespace idxmap

#endif
