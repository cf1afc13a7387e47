//===- ReductionEmitter.cpp - Row, multi-row, full and column reductions --===//
//
// Part of idxmap. Every reduction is read in its canonical physical form
// (ReductionInfo): the input's linear physical offset is
// `(a * Dmid + m) * Dminor + c`, delinearized into the input's logical index,
// and the prologue (everything between the parameters and the reduce input)
// is computed at that index with FusedElementEmitter. Parameters whose
// contiguity and alignment the maps prove (analyzeAccess of the kernel's
// thread map composed with the fusion's grouped indexing) are read with
// vector loads of the proven width.
//
//   - Row / multi-row / full: each thread accumulates in registers over its
//     share of a row, then a `shfl.sync.bfly` butterfly within groups of G
//     lanes; with a block per row, warps combine through shared memory
//     after one barrier. Short rows share a warp (G lanes per row) and each
//     thread takes K rows, so that every thread has K * U independent
//     vector loads in flight before the first use (U vector iterations of
//     each row per step). A full reduction is one kernel: a block per
//     contiguous chunk of the input (a row reduction of [N / chunk, chunk])
//     when there are at least 2 x 132 chunks, else a grid of blocks
//     striding over the whole input; each block writes its partial to a
//     per-launch workspace (KernelInfo::WorkspaceBytes, the kernel's last
//     parameter), and the last block to finish (a device-scope
//     counter, reset by that block) reduces the partials in block order:
//     deterministic.
//   - Inputs the kernel reads exactly once are loaded with the L1/L2
//     evict_first cache hint (loadWithHint).
//   - Column: L lanes along the kept minor dim (V adjacent columns each, one
//     16-byte load), 32 / L row slots per warp, W warps, U steps in flight;
//     row slots combine with shuffles, warps through padded shared memory
//     [W][L V + 1], one thread per column combining in warp order. When the
//     column tiles alone do not fill the GPU, the rows are cut into chunks
//     (a block each) whose partials go through the workspace, the last
//     block of a tile combining them in chunk order (deterministic).
//   - Ragged edges (the last iterations of a row, rows past the end) read at
//     a substituted point of the domain and count as the init value, so the
//     loops have no branches.
//   - Side outputs (roots computed per element of the reduce input, e.g.
//     `tuple(reduce(exp(x)), exp(x))`) are computed in the reading loop at
//     the same index and stored there, with vector stores of the width the
//     maps prove.
//
// Tuning knobs (EmitOptions::Tuning / `idxmap emit --tune NAME=VALUE`,
// where a value outside the range is an error (validateTuning); else the
// environment variable of that name, read at emission, where unset, empty
// or a value below the range means the default and values above are
// clamped; powers of two are rounded down; the names and ranges are
// tuningKnobs() in codegen/Emit.cpp):
//
//   IDXMAP_RED_ROW_LANES    threads per row (power of two, 1..1024); <= 32:
//                           rows share a warp, > 32: a block of that many
//                           threads per row. Default: next_pow2(row / vec)
//                           for rows of <= 16 vectors, 32 up to 256
//                           vectors, 256 up to 2047, else 512.
//   IDXMAP_RED_ROW_THREADS  threads per block when rows share warps
//                           (power of two, 32..1024). Default 256.
//   IDXMAP_RED_ROW_K        rows per thread when rows share warps (power of
//                           two, 1..32; K x U <= 64). Default max(1, 2 / U)
//                           when the input exceeds 64 MiB, else max(1, 4 / U),
//                           halved while the grid would have fewer than
//                           2 x 132 blocks.
//   IDXMAP_RED_ROW_UNROLL   vector iterations of a row per step (U, loads in
//                           flight per row per thread, 1..64; also the
//                           chunks of a chunked full reduction). Default
//                           min(8, iterations per row).
//   IDXMAP_RED_FULL_THREADS threads per block of a full reduction (power of
//                           two, 32..1024). Default 1024 when 2 blocks per
//                           SM of 1024 x 4 vectors fill the GPU, else 512.
//   IDXMAP_RED_FULL_UNROLL  vector loads per thread per step (1..32).
//                           Default 4.
//   IDXMAP_RED_FULL_CHUNK   bytes of the contiguous chunk a block of a full
//                           reduction reads (power of two; 0: a grid of
//                           blocks striding over the whole input). Used
//                           when the input splits into >= 2 x 132 chunks.
//                           Default 131072.
//   IDXMAP_RED_FULL_CHUNK_THREADS  threads per chunk (power of two,
//                           32..1024). Default 512.
//   IDXMAP_RED_FULL_BLOCKS_PER_SM  blocks of the full reduction per SM (the
//                           grid is 132 x this, or less for small inputs;
//                           1..32). Default 2048 / threads.
//   IDXMAP_RED_COL_LANES    lanes along the kept minor dim per warp (L,
//                           power of two, 1..32). Default 32.
//   IDXMAP_RED_COL_WARPS    warps per block (power of two, 1..32). Default 8.
//   IDXMAP_RED_COL_UNROLL   row steps per thread in flight (1..64). Default 4.
//   IDXMAP_RED_MINBLOCKS    `.minnctapersm` of every reduction kernel (0..32;
//                           0: unset). Unset, ptxas holds the kernels at 32
//                           registers and issues fewer loads ahead; 1-4
//                           let it keep more in flight (more registers,
//                           lower occupancy). Default 0.
//   IDXMAP_RED_LOADS_FIRST  1: every vector load of a step precedes the
//                           first use in the IR (ptxas schedules anyway);
//                           0: loads interleaved with their uses. Default 1.
//   IDXMAP_RED_EVICT_FIRST  1: parameters the kernel reads exactly once (as
//                           many elements as the reduce input, one map)
//                           are loaded with the L1/L2 evict_first hint
//                           (CacheHint::EvictFirst); 0: plain loads.
//                           Default 1.
//   IDXMAP_RED_COL_SPLIT    chunks of the reduced dim (a block each, 1..65536;
//                           capped so that each chunk has a step and scratch
//                           stays under 2^24 partials). Default: the largest
//                           power of two that keeps the grid within half a
//                           wave of resident blocks (132 x 1024 / threads) and
//                           gives each chunk >= 2 U steps.
//
// Epilogues (elementwise ops on the reduced values, other operands indexed
// by the output index) are computed with FusedElementEmitter at the output
// index, the hero's value injected with setOverride.
//
//===----------------------------------------------------------------------===//
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

namespace {

Diagnostic unsupported(const HloInstruction &F, const std::string &Why) {
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
                  const FusionAnalysis &A, const KernelPlan &Plan,
                  Context &Ctx, const MathOptions &Math)
      : M(M), LC(M.getContext()), F(F), A(A), C(*A.Computation),
        Plan(Plan), RP(*Plan.Reduction), Math(Math), B(LC), Ctx(Ctx) {}

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
  /// gets the block's value.
  std::vector<llvm::Value *> blockReduce(std::vector<llvm::Value *> V,
                                         unsigned Threads);
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
    return emitIndexExprs(B, Map, Dims, Syms, IndexTy);
  }
  /// Output logical index of the reduce for input linear offset \p Lin.
  std::vector<Expr> outputExprs(Expr Lin);

  Expected<KernelInfo> emitRows();
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
    return butterflyReduceSets(B, Heroes, std::move(Sets), Width, Lowest,
                               Math);
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
  /// Volatile stores and loads of element \p Idx of every scratch array.
  void storeScratch(const std::vector<ScratchArray> &S, llvm::Value *Idx,
                    llvm::ArrayRef<llvm::Value *> Vals);
  std::vector<llvm::Value *> loadScratch(const std::vector<ScratchArray> &S,
                                         llvm::Value *Idx);
  /// After every thread's partial stores (each followed by threadFence):
  /// a barrier, then thread 0 counts the block's arrival at counter \p Idx
  /// of \p N (in the workspace, zero before the first launch). Returns
  /// (true in every thread of the block that arrives as the \p Arrivals-th,
  /// the counter's address); that block's thread 0 resets the counter to 0,
  /// so the workspace is zero again after every launch.
  std::pair<llvm::Value *, llvm::Value *>
  arriveLast(llvm::Value *Idx, int64_t N, int64_t Arrivals);

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
  std::map<const HloInstruction *, int64_t> Width;
  /// How each parameter is loaded: EvictFirst for those read exactly once.
  std::map<const HloInstruction *, CacheHint> Hint;
  std::map<std::tuple<const HloInstruction *, int64_t, int64_t>, llvm::Value *>
      Vectors;
  int64_t CurSlot = 0, CurLane = 0;
  /// Guard of the side stores of the step valuesAt computes.
  llvm::Value *CurGuard = nullptr;
};

ParameterLoader ReductionKernel::vectorLoader() {
  return [this](const HloInstruction &P,
                llvm::ArrayRef<llvm::Value *> Index) -> llvm::Value * {
    int64_t W = Width[&P];
    if (W > 1) {
      auto Key = std::make_tuple(&P, CurSlot, CurLane / W);
      llvm::Value *VecV = Vectors[Key];
      if (!VecV) {
        VecV = loadParameterVector(B, *K, P, Index, W, IndexTy,
                                   OffsetTermOrder::MinorToMajor, 0, Hint[&P]);
        Vectors[Key] = VecV;
      }
      return loadConvert(B, B.CreateExtractElement(VecV, uint64_t(CurLane % W)),
                         P.shape().Type);
    }
    return loadParameterElement(B, *K, P, Index, IndexTy,
                                OffsetTermOrder::MinorToMajor, Hint[&P]);
  };
}

std::vector<llvm::AllocaInst *> ReductionKernel::newAccumulators() {
  llvm::IRBuilder<> EB(&K->getEntryBlock(), K->getEntryBlock().begin());
  std::vector<llvm::AllocaInst *> Set;
  for (llvm::Value *IV : Idents) {
    llvm::AllocaInst *Al = EB.CreateAlloca(IV->getType());
    B.CreateStore(IV, Al);
    Set.push_back(Al);
  }
  return Set;
}

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
ReductionKernel::loadScratch(const std::vector<ScratchArray> &S,
                             llvm::Value *Idx) {
  std::vector<llvm::Value *> R;
  for (size_t I = 0; I < S.size(); ++I)
    R.push_back(fromStored(
        B.CreateLoad(S[I].ElemTy,
                     B.CreateInBoundsGEP(S[I].ElemTy, S[I].Base, Idx),
                     /*isVolatile=*/true),
        Inits[I]->getType()));
  return R;
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

std::optional<Diagnostic> ReductionKernel::collect() {
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    const HloInstruction *H = A.Heroes[R];
    if (H->opcode() != HloOpcode::Reduce) {
      Sides.push_back({R, false, 1, IndexingMap()});
      continue;
    }
    if (std::find(Heroes.begin(), Heroes.end(), H) == Heroes.end())
      Heroes.push_back(H);
  }
  if (Heroes.empty())
    return unsupported(F, "no reduce hero");
  for (const HloInstruction *H : Heroes) {
    if (auto Why = checkReducer(*H->toApply()))
      return unsupported(F, "reducer of '" + H->name() + "': " + *Why);
    int64_t N = H->operandCount() / 2;
    for (int64_t K2 = 0; K2 < N; ++K2)
      Slots.push_back({H, K2});
  }
  In = &Heroes.front()->operand(0)->shape();
  // Epilogues: every instruction on a path from a root to a hero must be
  // elementwise on the reduce's output shape (or a get-tuple-element of a
  // variadic hero): then it is read at the thread's own output index.
  std::set<const HloInstruction *> HeroSet(Heroes.begin(), Heroes.end());
  std::map<const HloInstruction *, bool> Dep;
  std::function<bool(const HloInstruction *)> DependsOnHero =
      [&](const HloInstruction *I) -> bool {
    if (HeroSet.count(I))
      return true;
    auto It = Dep.find(I);
    if (It != Dep.end())
      return It->second;
    bool D = false;
    for (const HloInstruction *O : I->operands())
      D |= DependsOnHero(O);
    Dep[I] = D;
    return D;
  };
  for (SideRoot &S : Sides) {
    const HloInstruction *R = A.Roots[S.Root];
    if (!R->shape().isArray())
      return unsupported(F, "tuple-shaped output '" + R->name() + "'");
    if (DependsOnHero(R))
      return unsupported(F, "side output '" + R->name() +
                                "' depends on a reduction but is not an "
                                "elementwise epilogue of it");
    if (R->shape().numElements() != In->numElements())
      return unsupported(F, "side output '" + R->name() +
                                "' does not have the reduce input's element "
                                "count");
    S.SameIndex = R->shape().sameDims(*In);
  }
  std::set<const HloInstruction *> Seen;
  std::vector<const HloInstruction *> Work;
  for (size_t R = 0; R < A.Roots.size(); ++R)
    if (!isSide(R))
      Work.push_back(A.Roots[R]);
  const Shape &OutS = Heroes.front()->shape().isArray()
                          ? Heroes.front()->shape()
                          : Heroes.front()->shape().TupleShapes.front();
  while (!Work.empty()) {
    const HloInstruction *I = Work.back();
    Work.pop_back();
    if (!Seen.insert(I).second || HeroSet.count(I) || !DependsOnHero(I))
      continue;
    bool Ok = (I->opcode() == HloOpcode::GetTupleElement &&
               HeroSet.count(I->operand(0))) ||
              (isElementwise(I->opcode()) && I->shape().isArray() &&
               I->shape().sameDims(OutS));
    if (!Ok)
      return unsupported(F, "epilogue op '" + I->name() +
                                "' is not elementwise on the reduced values");
    for (const HloInstruction *O : I->operands())
      Work.push_back(O);
  }
  for (const HloInstruction *R : A.Roots)
    if (!R->shape().isArray())
      return unsupported(F, "tuple-shaped output '" + R->name() + "'");
  return std::nullopt;
}

std::optional<Diagnostic> ReductionKernel::createFunction(int64_t Threads,
                                                          int64_t Blocks,
                                                          int64_t Shared,
                                                          bool Workspace) {
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = std::string(emitterKindName(A.Kind));
  if (auto Err = setLaunchShape(Info, F, Math.Device, Blocks, Threads, Shared))
    return Err;
  std::vector<KernelParamSpec> Specs;
  for (const HloInstruction *P : C.parameters()) {
    Specs.push_back({P->name(), KernelParamRole::Input, 16, nullptr});
    Info.Params.push_back({P->name(), false, P->shape(), 16});
  }
  for (const HloInstruction *R : A.Roots) {
    Specs.push_back({R->name(), KernelParamRole::Output, 16, nullptr});
    Info.Params.push_back({R->name(), true, R->shape(), 16});
  }
  if (Workspace)
    Specs.push_back({"workspace", KernelParamRole::InOut, 16, nullptr});
  K = createKernel(M, Info.Name, Specs);
  if (Workspace)
    WorkspaceArg = K->getArg(K->arg_size() - 1);
  // `.minnctapersm`: unset, ptxas keeps every kernel at 32 registers (full
  // occupancy) and serializes loads beyond that; a minimum of N blocks per
  // SM lets it use up to 65536 / (N x threads) registers for loads in
  // flight.
  int64_t MinBlocks = RP.MinBlocksPerSm;
  setLaunchBounds(*K, {unsigned(Threads), /*Exact=*/true, unsigned(MinBlocks)});
  B.SetInsertPoint(&K->getEntryBlock());
  int64_t Largest = In->numElements();
  for (const HloInstruction *P : C.parameters())
    Largest = std::max(Largest, P->shape().numElements());
  for (const HloInstruction *R : A.Roots)
    Largest = std::max(Largest, R->shape().numElements());
  IndexTy = Largest < (int64_t(1) << 31) / 16 ? B.getInt32Ty() : B.getInt64Ty();
  Th = B.CreateZExtOrTrunc(emitThreadId(B, GpuDim::X, unsigned(Threads)),
                           IndexTy);
  Bl =
      B.CreateZExtOrTrunc(emitBlockId(B, GpuDim::X, unsigned(Blocks)), IndexTy);
  // Init values (computed once, in the entry block) and accumulators.
  FusedElementEmitter FE(B, Ctx, C, scalarLoader(), Math, IndexTy);
  for (const Slot &S : Slots) {
    int64_t N = S.Hero->operandCount() / 2;
    const HloInstruction &Init = *S.Hero->operand(N + S.Out);
    llvm::Value *IV;
    if (Init.opcode() == HloOpcode::Parameter) {
      // A scalar parameter: read element 0.
      PrimitiveType PT = Init.shape().Type;
      llvm::Type *ST = storageType(LC, PT);
      IV =
          loadConvert(B,
                      B.CreateAlignedLoad(ST, K->getArg(Init.parameterNumber()),
                                          llvm::Align(byteWidth(PT))),
                      PT);
    } else {
      IV = FE.valueAt(Init, {});
    }
    Inits.push_back(IV);
    llvm::Constant *Id = nullptr;
    if (N == 1)
      Id = reducerIdentity(LC, *S.Hero->toApply(), S.Hero->shape().Type);
    if (Id && Id->getType() != IV->getType())
      Id = nullptr;
    Idents.push_back(Id ? Id : IV);
    CombineInit.push_back(Id != nullptr);
  }
  llvm::IRBuilder<> EB(&K->getEntryBlock(), K->getEntryBlock().begin());
  for (llvm::Value *IV : Idents) {
    llvm::AllocaInst *Al = EB.CreateAlloca(IV->getType());
    Accs.push_back(Al);
    B.CreateStore(IV, Al);
  }
  return std::nullopt;
}

void ReductionKernel::setInputMap(std::vector<Variable> Syms, Expr Lin,
                                  std::vector<Constraint> Cs) {
  V = Syms.back().Bound.Hi + 1;
  std::vector<Variable> Dims = {{"th_x", {0, Info.Block[0] - 1}},
                                {"bl_x", {0, Info.Grid[0] - 1}}};
  InMap =
      IndexingMap(Ctx, Dims, Syms, {}, delinearizePhysical(Ctx, Lin, *In), Cs);
  simplify(InMap);
  Info.ThreadMap = printMap(InMap);
  Info.ThreadMapTarget = Heroes.front()->operand(0)->name();
  // Side outputs of another shape: their own physical order.
  for (SideRoot &S : Sides)
    if (!S.SameIndex) {
      S.Map = IndexingMap(
          Ctx, Dims, Syms, {},
          delinearizePhysical(Ctx, Lin, A.Roots[S.Root]->shape()), Cs);
      simplify(S.Map);
    }
  // Maps from every hero input to every parameter; a parameter reached by
  // exactly one map gets the width proven for it.
  std::map<const HloInstruction *, std::vector<IndexingMap>> Maps;
  auto AddParameterMaps = [&](const HloInstruction *From) {
    for (auto &[I, OMs] : computeGroupedIndexing(Ctx, C, From))
      if (I->opcode() == HloOpcode::Parameter)
        for (const OperandMap &OM : OMs)
          if (std::find(Maps[I].begin(), Maps[I].end(), OM.Map) ==
              Maps[I].end())
            Maps[I].push_back(OM.Map);
  };
  for (const HloInstruction *H : Heroes)
    for (int64_t K2 = 0; K2 < H->operandCount() / 2; ++K2)
      AddParameterMaps(H->operand(K2));
  // Side outputs computed at the input's index read their parameters in
  // the same loop (and through the same vector cache).
  for (const SideRoot &S : Sides)
    if (S.SameIndex)
      AddParameterMaps(A.Roots[S.Root]);
  for (SideRoot &S : Sides) {
    S.Width = 1;
    if (!S.SameIndex || V == 1)
      continue;
    AccessReport R =
        analyzeAccess(InMap, A.Roots[S.Root]->shape(), /*CountWarps=*/false);
    while (S.Width * 2 <= R.VectorWidth && V % (S.Width * 2) == 0)
      S.Width *= 2;
  }
  bool EvictFirst = RP.EvictFirst;
  for (const HloInstruction *P : C.parameters()) {
    Width[P] = 1;
    Hint[P] = CacheHint::Normal;
    auto It = Maps.find(P);
    // One map from an iteration space of the parameter's size: every
    // element is read once (an init value or a broadcast operand is not).
    if (EvictFirst && It != Maps.end() && It->second.size() == 1 &&
        P->shape().isArray() && P->shape().numElements() == In->numElements())
      Hint[P] = CacheHint::EvictFirst;
    if (V == 1 || It == Maps.end() || It->second.size() != 1)
      continue;
    IndexingMap Comp = compose(InMap, It->second.front());
    simplify(Comp);
    AccessReport R = analyzeAccess(Comp, P->shape(), /*CountWarps=*/false);
    Width[P] = std::max<int64_t>(1, R.VectorWidth);
  }
}

std::vector<Expr> ReductionKernel::outputExprs(Expr Lin) {
  std::vector<Expr> Full = delinearizePhysical(Ctx, Lin, *In);
  const std::vector<int64_t> &Red = Heroes.front()->dimensions();
  std::vector<Expr> Out;
  for (int64_t D = 0; D < In->rank(); ++D)
    if (std::find(Red.begin(), Red.end(), D) == Red.end())
      Out.push_back(Full[D]);
  return Out;
}

std::vector<std::vector<llvm::Value *>> ReductionKernel::valuesAt(
    FusedElementEmitter &FE, llvm::ArrayRef<llvm::Value *> DimVals,
    llvm::ArrayRef<llvm::Value *> SymVals, int64_t UnrollSlot) {
  std::vector<std::vector<llvm::Value *>> Out;
  CurSlot = UnrollSlot;
  size_t FirstPending = Pending.size();
  for (size_t SI = 0; SI < Sides.size(); ++SI)
    Pending.push_back({SI, CurGuard, {}, {}});
  for (int64_t L = 0; L < V; ++L) {
    CurLane = L;
    std::vector<llvm::Value *> Syms(SymVals.begin(), SymVals.end());
    Syms.push_back(cst(L));
    std::vector<llvm::Value *> Idx = emitExprs(InMap, DimVals, Syms);
    std::vector<llvm::Value *> Vals;
    for (const Slot &S : Slots)
      Vals.push_back(FE.valueAt(*S.Hero->operand(S.Out), Idx));
    Out.push_back(std::move(Vals));
    // Side outputs at the same point (stored by flushSideStores).
    for (size_t SI = 0; SI < Sides.size(); ++SI) {
      const SideRoot &S = Sides[SI];
      PendingStore &PS = Pending[FirstPending + SI];
      if (S.SameIndex) {
        PS.Vals.push_back(FE.valueAt(*A.Roots[S.Root], Idx));
        PS.Index.push_back(Idx);
      } else {
        // Another shape: its own index, element by element.
        std::vector<llvm::Value *> RIdx = emitExprs(S.Map, DimVals, Syms);
        FusedElementEmitter SFE(B, Ctx, C, scalarLoader(), Math, IndexTy);
        PS.Vals.push_back(SFE.valueAt(*A.Roots[S.Root], RIdx));
        PS.Index.push_back(RIdx);
      }
    }
  }
  return Out;
}

void ReductionKernel::flushSideStores() {
  std::vector<PendingStore> All = std::move(Pending);
  Pending.clear();
  for (const PendingStore &PS : All) {
    if (PS.Guard) {
      PendingStore Unguarded = PS;
      Unguarded.Guard = nullptr;
      Pending.push_back(std::move(Unguarded));
      emitIf(PS.Guard, [&] { flushSideStores(); });
      continue;
    }
    const SideRoot &S = Sides[PS.Side];
    const HloInstruction *Root = A.Roots[S.Root];
    PrimitiveType PT = Root->shape().Type;
    llvm::Type *ST = storageType(LC, PT);
    int64_t Bytes = byteWidth(PT);
    int64_t E = std::max<int64_t>(1, std::min<int64_t>(S.Width, 16 / Bytes));
    llvm::Value *Base = K->getArg(C.parameterCount() + S.Root);
    for (size_t L0 = 0; L0 < PS.Vals.size(); L0 += size_t(E)) {
      llvm::Value *Off =
          physicalOffset(B, Root->shape(), PS.Index[L0], IndexTy);
      llvm::Value *Ptr = B.CreateInBoundsGEP(ST, Base, Off);
      if (E == 1) {
        B.CreateAlignedStore(storeConvert(B, PS.Vals[L0], PT), Ptr,
                             llvm::Align(Bytes));
        continue;
      }
      auto *VT = llvm::FixedVectorType::get(ST, unsigned(E));
      llvm::Value *Vec = llvm::PoisonValue::get(VT);
      for (int64_t I = 0; I < E; ++I)
        Vec = B.CreateInsertElement(
            Vec, storeConvert(B, PS.Vals[L0 + size_t(I)], PT), uint64_t(I));
      B.CreateAlignedStore(Vec, Ptr, llvm::Align(E * Bytes));
    }
  }
  Pending.clear();
}

std::vector<llvm::Value *> ReductionKernel::loadAccs() {
  std::vector<llvm::Value *> R;
  for (llvm::AllocaInst *Al : Accs)
    R.push_back(B.CreateLoad(Al->getAllocatedType(), Al));
  return R;
}

void ReductionKernel::storeAccs(llvm::ArrayRef<llvm::Value *> Vs) {
  for (size_t I = 0; I < Vs.size(); ++I)
    B.CreateStore(Vs[I], Accs[I]);
}

void ReductionKernel::accumulate(
    const std::vector<std::vector<llvm::Value *>> &Vals) {
  std::vector<llvm::Value *> Acc = loadAccs();
  for (const auto &Lane : Vals)
    Acc = combine(Acc, Lane);
  storeAccs(Acc);
}

std::vector<llvm::Value *>
ReductionKernel::blockReduce(std::vector<llvm::Value *> Vs, unsigned Threads) {
  Vs = warpReduce(std::move(Vs), WarpSize);
  unsigned Warps = Threads / WarpSize;
  if (Warps <= 1)
    return Vs;
  llvm::Value *Lane = B.CreateURem(Th, cst(WarpSize));
  llvm::Value *Warp = B.CreateUDiv(Th, cst(WarpSize));
  SharedSlots Sh(M, Vs, Warps, Info.Name + ".red");
  Info.SharedBytes += unsigned(Vs.size() * Warps * 8);
  emitIf(B.CreateICmpEQ(Lane, cst(0)), [&] { Sh.store(B, Warp, Vs); });
  emitBarrier(B);
  // Every warp reads the W partials (lanes >= W take the init value).
  llvm::Value *InRange = B.CreateICmpULT(Lane, cst(Warps));
  llvm::Value *Idx = B.CreateSelect(InRange, Lane, cst(0));
  std::vector<llvm::Value *> Part;
  for (size_t I = 0; I < Vs.size(); ++I)
    Part.push_back(B.CreateSelect(InRange, Sh.load(B, I, Idx), Idents[I]));
  Part = warpReduce(std::move(Part), unsigned(nextPow2(Warps)));
  // Partial reads must finish before the shared arrays are reused.
  emitBarrier(B);
  return Part;
}

void ReductionKernel::emitFor(llvm::Value *N,
                              const std::function<void(llvm::Value *)> &Body) {
  if (auto *CI = llvm::dyn_cast<llvm::ConstantInt>(N)) {
    if (CI->isZero())
      return;
    if (CI->isOne()) {
      Body(cst(0));
      return;
    }
  }
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Header = llvm::BasicBlock::Create(LC, "loop", K);
  auto *Exit = llvm::BasicBlock::Create(LC, "loop.exit", K);
  B.CreateCondBr(B.CreateICmpSGT(N, cst(0)), Header, Exit);
  B.SetInsertPoint(Header);
  llvm::PHINode *Iv = B.CreatePHI(IndexTy, 2);
  Iv->addIncoming(cst(0), Pre);
  Body(Iv);
  llvm::Value *Next = B.CreateAdd(Iv, cst(1), "", true, true);
  Iv->addIncoming(Next, B.GetInsertBlock());
  B.CreateCondBr(B.CreateICmpSLT(Next, N), Header, Exit);
  B.SetInsertPoint(Exit);
}

void ReductionKernel::emitEpilogue(llvm::ArrayRef<llvm::Value *> Reduced,
                                   llvm::ArrayRef<llvm::Value *> OutIdx) {
  // The init value, once per output element (partials started from the
  // reducer's identity): init op (x0 op x1 ...), as the interpreter.
  std::vector<llvm::Value *> Red(Reduced.begin(), Reduced.end());
  for (size_t I = 0; I < Slots.size(); ++I)
    if (CombineInit[I])
      Red[I] = emitReduction(B, *Slots[I].Hero->toApply(), {Inits[I]}, {Red[I]},
                             Math)[0];
  FusedElementEmitter FE(B, Ctx, C, scalarLoader(), Math, IndexTy);
  size_t Pos = 0;
  for (const HloInstruction *H : Heroes) {
    int64_t N = H->operandCount() / 2;
    if (N == 1) {
      llvm::Value *X = Red[Pos];
      FE.setOverride(*H, [X](llvm::ArrayRef<llvm::Value *>) { return X; });
    } else {
      for (const HloInstruction *U : C.instructions())
        if (U->opcode() == HloOpcode::GetTupleElement && U->operand(0) == H) {
          llvm::Value *X = Red[Pos + U->tupleIndex()];
          FE.setOverride(*U, [X](llvm::ArrayRef<llvm::Value *>) { return X; });
        }
    }
    Pos += N;
  }
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    if (isSide(R))
      continue;
    const HloInstruction *Root = A.Roots[R];
    llvm::Value *X = FE.valueAt(*Root, OutIdx);
    PrimitiveType PT = Root->shape().Type;
    llvm::Type *ST = storageType(LC, PT);
    llvm::Value *Off = physicalOffset(B, Root->shape(), OutIdx, IndexTy);
    llvm::Value *Ptr =
        B.CreateInBoundsGEP(ST, K->getArg(C.parameterCount() + R), Off);
    B.CreateAlignedStore(storeConvert(B, X, PT), Ptr,
                         llvm::Align(byteWidth(PT)));
  }
}

/// Row, multi-row and full reductions.
///
/// Threads: groups of G lanes per row (G <= 32: T / G rows per block and K
/// rows per thread, rows `bl * RPB * K + k * RPB + th / G`), a block per row
/// (G = T), or the whole grid on one row (full). Each step reads U vector
/// iterations of each of the thread's K rows (K * U independent loads, all
/// issued before the first is used). Steps where some lane has no element
/// (the last iterations of a row, rows past the end) read at a substituted
/// point of the domain (thread 0 of the block, row k = 0) and mask the value
/// with the init value, so the loop has no branches.
Expected<KernelInfo> ReductionKernel::emitRows() {
  // The plan's shape (ReductionPlan): rows [D0, D1, D2] of NVec vectors,
  // G lanes per row, RPB rows per block, K rows per thread, U iterations
  // of Iters in flight.
  const int64_t D0 = RP.Dims[0], D1 = RP.Dims[1], D2 = RP.Dims[2];
  const int64_t Vec = RP.Vector, NVec = D2 / Vec;
  enum { Group, BlockRow, Whole } Mode =
      RP.Mode == ReductionMode::RowGroup      ? Group
      : RP.Mode == ReductionMode::BlockPerRow ? BlockRow
                                              : Whole;
  const int64_t G = RP.LanesPerRow, T = Plan.Block[0], RPB = RP.RowsPerBlock,
                K = RP.RowsPerThread, Blocks = Plan.Grid[0], Rows = D1;
  const int64_t Iters = RP.Iterations, U = RP.Unroll;
  int64_t Main = NVec / (U * G); // steps of U iterations with every lane busy
  requestBackEndOptLevel(M, Plan.BackEndOptLevel);
  if (auto Err = createFunction(T, Blocks, 0, RP.MultiBlock))
    return *Err;
  bool ColMask = Iters * G != NVec;
  bool RowMask = Mode == Group && Blocks * RPB * K != Rows;
  const std::vector<Variable> &Syms = RP.Syms;
  setInputMap(Syms, RP.Linear, RP.Constraints);
  const Expr Row = RP.Row, Lane = RP.Lane;

  // Per row k: the row, and whether it exists; the lane.
  std::vector<Variable> Dims = {{"th_x", {0, T - 1}},
                                {"bl_x", {0, Blocks - 1}}};
  IndexingMap LR(Ctx, Dims, {Syms[0], Syms[1]}, {}, {Row, Lane}, {});
  llvm::Value *LaneV = emitExprs(LR, {cst(0), cst(0)})[1];
  std::vector<llvm::Value *> RowValid(size_t(K), nullptr);
  if (RowMask)
    for (int64_t Kk = 0; Kk < K; ++Kk)
      RowValid[size_t(Kk)] =
          B.CreateICmpULT(emitExprs(LR, {cst(0), cst(Kk)})[0], cst(Rows));
  // Accumulators per row k.
  std::vector<std::vector<llvm::AllocaInst *>> AccSets = {Accs};
  for (int64_t Kk = 1; Kk < K; ++Kk)
    AccSets.push_back(newAccumulators());

  bool LoadsFirst = RP.LoadsFirst;
  ParameterLoader Loader = vectorLoader();
  FusedElementEmitter FE(B, Ctx, C, Loader, Math, IndexTy);
  // One step: iterations Its (value, and the constant when it is a tail
  // iteration, else -1) of every row k; loads first, then the side stores,
  // then the accumulation.
  auto Steps = [&](llvm::Value *Bv,
                   const std::vector<std::pair<llvm::Value *, int64_t>> &Its) {
    Vectors.clear();
    FE.clearCache();
    // The point of every (row k, iteration) of the step.
    struct Point {
      int64_t Kk;
      llvm::Value *Th, *Bl, *K, *It, *ColValid, *Valid;
    };
    std::vector<Point> Points;
    for (int64_t Kk = 0; Kk < K; ++Kk)
      for (size_t S = 0; S < Its.size(); ++S) {
        llvm::Value *ColValid = nullptr;
        int64_t ItC = Its[S].second;
        if (ColMask && ItC >= 0 && (ItC + 1) * G > NVec)
          ColValid = B.CreateICmpULT(
              B.CreateAdd(cst(ItC * G), LaneV, "", true, true), cst(NVec));
        llvm::Value *Valid = RowValid[size_t(Kk)];
        if (ColValid)
          Valid = Valid ? B.CreateAnd(Valid, ColValid) : ColValid;
        llvm::Value *ThS = Th, *BlS = Bl, *KS = cst(Kk), *ItS = Its[S].first;
        if (Valid) {
          // A point of the domain: thread 0 of this block, row k = 0.
          ThS = B.CreateSelect(Valid, Th, cst(0));
          if (Mode == Whole)
            BlS = B.CreateSelect(Valid, Bl, cst(0));
          KS = B.CreateSelect(Valid, KS, cst(0));
        }
        Points.push_back({Kk, ThS, BlS, KS, ItS, ColValid, Valid});
      }
    // With LoadsFirst, a first pass only issues the vector loads (its
    // values are dead; the second pass finds the loads in Vectors), so that
    // every load of the step precedes the first use in the IR.
    if (LoadsFirst) {
      size_t Before = Pending.size();
      for (size_t P = 0; P < Points.size(); ++P)
        valuesAt(FE, {Points[P].Th, Points[P].Bl},
                 {Bv, Points[P].K, Points[P].It}, int64_t(P));
      Pending.resize(Before);
      FE.clearCache();
    }
    std::vector<std::vector<std::vector<llvm::Value *>>> Vals(
        static_cast<size_t>(K));
    for (size_t P = 0; P < Points.size(); ++P) {
      const Point &Pt = Points[P];
      CurGuard = Pt.Valid;
      auto V = valuesAt(FE, {Pt.Th, Pt.Bl}, {Bv, Pt.K, Pt.It}, int64_t(P));
      CurGuard = nullptr;
      if (Pt.ColValid)
        for (auto &LaneVals : V)
          for (size_t I = 0; I < LaneVals.size(); ++I)
            LaneVals[I] = B.CreateSelect(Pt.ColValid, LaneVals[I], Idents[I]);
      Vals[size_t(Pt.Kk)].insert(Vals[size_t(Pt.Kk)].end(), V.begin(), V.end());
    }
    flushSideStores();
    for (int64_t Kk = 0; Kk < K; ++Kk) {
      Accs = AccSets[size_t(Kk)];
      accumulate(Vals[size_t(Kk)]);
    }
    FE.clearCache();
    Vectors.clear();
  };
  emitFor(cst(D0), [&](llvm::Value *Bv) {
    emitFor(cst(Main), [&](llvm::Value *Cv) {
      std::vector<std::pair<llvm::Value *, int64_t>> Its;
      for (int64_t Uu = 0; Uu < U; ++Uu)
        Its.push_back({B.CreateAdd(B.CreateMul(Cv, cst(U), "", true, true),
                                   cst(Uu), "", true, true),
                       -1});
      Steps(Bv, Its);
    });
    std::vector<std::pair<llvm::Value *, int64_t>> Tail;
    for (int64_t It = Main * U; It < Iters; ++It)
      Tail.push_back({cst(It), It});
    if (!Tail.empty())
      Steps(Bv, Tail);
  });

  std::vector<std::vector<llvm::Value *>> Red;
  for (int64_t Kk = 0; Kk < K; ++Kk) {
    Accs = AccSets[size_t(Kk)];
    Red.push_back(loadAccs());
  }
  Accs = AccSets[0];
  IndexingMap OM(Ctx, Dims, {Syms[0], Syms[1]}, {}, outputExprs(Row * D2), {});
  if (Mode == Group) {
    Red = warpReduceSets(std::move(Red), unsigned(G));
    llvm::Value *Leader = B.CreateICmpEQ(LaneV, cst(0));
    for (int64_t Kk = 0; Kk < K; ++Kk) {
      llvm::Value *Store = Leader;
      if (RowValid[size_t(Kk)])
        Store = B.CreateAnd(Store, RowValid[size_t(Kk)]);
      emitIf(Store, [&] {
        emitEpilogue(Red[size_t(Kk)], emitExprs(OM, {cst(0), cst(Kk)}));
      });
    }
    B.CreateRetVoid();
    return Info;
  }
  std::vector<llvm::Value *> R1 = blockReduce(std::move(Red[0]), unsigned(T));
  if (!RP.MultiBlock) {
    emitIf(B.CreateICmpEQ(Th, cst(0)), [&] {
      emitEpilogue(R1, emitExprs(OM, {cst(0), cst(0)}));
    });
    B.CreateRetVoid();
    return Info;
  }
  // Full reduction over several blocks: partials to the workspace; the
  // last block to finish combines them in block order.
  std::vector<ScratchArray> Scratch = scratchArrays(Blocks);
  emitIf(B.CreateICmpEQ(Th, cst(0)), [&] {
    storeScratch(Scratch, Bl, R1);
    threadFence();
  });
  auto [IsLast, CounterPtr] = arriveLast(cst(0), 1, Blocks);
  llvm::Value *CPtr = CounterPtr;
  emitIf(IsLast, [&] {
    threadFence();
    storeAccs(Idents);
    // Thread th combines partials th, th + T, ... in order (a loop when
    // there are many: chunked inputs have thousands).
    auto CombineAt = [&](llvm::Value *J) {
      llvm::Value *Idx = B.CreateAdd(Th, B.CreateMul(J, cst(T)));
      emitIf(B.CreateICmpULT(Idx, cst(Blocks)), [&] {
        storeAccs(combine(loadAccs(), loadScratch(Scratch, Idx)));
      });
    };
    if (ceilDiv(Blocks, T) > 4)
      emitFor(cst(ceilDiv(Blocks, T)), CombineAt);
    else
      for (int64_t J = 0; J < ceilDiv(Blocks, T); ++J)
        CombineAt(cst(J));
    std::vector<llvm::Value *> Tot = blockReduce(loadAccs(), unsigned(T));
    emitIf(B.CreateICmpEQ(Th, cst(0)), [&] {
      B.CreateStore(B.getInt32(0), CPtr, /*isVolatile=*/true);
      emitEpilogue(Tot, emitExprs(OM, {cst(0), cst(0)}));
    });
  });
  B.CreateRetVoid();
  return Info;
}

/// Column reductions [K1, R, K2].
///
/// Threads: L lanes along the kept minor dim (Vec elements each: one
/// 16-byte load reads Vec adjacent columns), 32 / L row slots per warp, W
/// warps; a block reads a tile of L * Vec columns, T / L rows per step and U
/// steps (independent loads) at a time, each thread accumulating Vec
/// partial sums. The row slots of a warp combine with shuffles, the warps
/// through padded shared memory [W][L * Vec + 1], one thread per column
/// combining the W partials in order. With Split > 1 the reduced dim is cut
/// into Split chunks of whole steps (a block each): blocks write their
/// column partials to the workspace and the last block of the tile to
/// finish (a device-scope counter per tile) combines them in chunk order:
/// deterministic.
Expected<KernelInfo> ReductionKernel::emitColumns() {
  requestBackEndOptLevel(M, Plan.BackEndOptLevel);
  const int64_t K1 = RP.Dims[0], R = RP.Dims[1], K2 = RP.Dims[2];
  const int64_t Vec = RP.Vector, L = RP.ColLanes, W = RP.Warps,
                T = Plan.Block[0];
  const int64_t Cols = L * Vec, RS = T / L, Tiles = ceilDiv(K2, Cols);
  const int64_t Split = RP.Split, Iters = RP.Iterations, U = RP.Unroll;
  const int64_t RC = Iters * RS; // rows per chunk
  const int64_t Blocks = Plan.Grid[0];
  bool ColMask = Tiles * Cols != K2, RowMask = Split * RC != R;
  if (auto Err = createFunction(T, Blocks, 0, /*Workspace=*/RP.MultiBlock))
    return *Err;

  Expr ThE = Ctx.dim(0), BlE = Ctx.dim(1);
  Expr TileE = BlE % Tiles, Rest = BlE.floorDiv(Tiles);
  Expr SpE = Rest % Split, K1E = Rest.floorDiv(Split);
  Expr ColBase = TileE * Cols;
  Expr RE = SpE * RC + Ctx.symbol(0) * RS + ThE.floorDiv(L);
  const std::vector<Variable> &Syms = RP.Syms;
  setInputMap(Syms, RP.Linear, RP.Constraints);
  std::vector<Variable> Dims = {{"th_x", {0, T - 1}},
                                {"bl_x", {0, Blocks - 1}}};
  IndexingMap LM(Ctx, Dims, {Syms[0]}, {},
                 {ThE % L, ThE.floorDiv(32), ColBase, SpE * RC,
                  K1E * Tiles + TileE, RE, ThE % 32, SpE},
                 {});
  std::vector<llvm::Value *> LV = emitExprs(LM, {cst(0)});
  llvm::Value *LaneV = LV[0], *WarpV = LV[1], *ColBaseV = LV[2],
              *ChunkV = LV[3], *TileIdV = LV[4], *Lane32V = LV[6], *SpV = LV[7];
  llvm::Value *ColValid =
      ColMask
          ? B.CreateICmpULT(B.CreateAdd(ColBaseV, B.CreateMul(LaneV, cst(Vec))),
                            cst(K2))
          : B.getTrue();
  // Vec accumulator sets (one per column of the thread).
  std::vector<std::vector<llvm::AllocaInst *>> ColAccs = {Accs};
  for (int64_t J = 1; J < Vec; ++J)
    ColAccs.push_back(newAccumulators());
  FusedElementEmitter FE(B, Ctx, C, vectorLoader(), Math, IndexTy);
  // Steps at iterations Its; with Masked, rows past R read at row `chunk
  // start` (thread lane % L, it = 0) and count as the init value.
  bool LoadsFirst = RP.LoadsFirst;
  auto Steps = [&](const std::vector<llvm::Value *> &Its, bool Masked) {
    Vectors.clear();
    FE.clearCache();
    std::vector<std::array<llvm::Value *, 3>> Points; // th, it, valid
    for (size_t S = 0; S < Its.size(); ++S) {
      llvm::Value *ThS = Th, *ItS = Its[S], *Valid = nullptr;
      if (Masked) {
        Valid = B.CreateICmpULT(emitExprs(LM, {Its[S]})[5], cst(R));
        ThS = B.CreateSelect(Valid, Th, LaneV);
        ItS = B.CreateSelect(Valid, ItS, cst(0));
      }
      Points.push_back({ThS, ItS, Valid});
    }
    if (LoadsFirst) {
      // Loads only (see emitRows).
      size_t Before = Pending.size();
      for (size_t S = 0; S < Points.size(); ++S)
        valuesAt(FE, {Points[S][0], Bl}, {Points[S][1]}, int64_t(S));
      Pending.resize(Before);
      FE.clearCache();
    }
    std::vector<std::vector<std::vector<llvm::Value *>>> All;
    for (size_t S = 0; S < Points.size(); ++S) {
      llvm::Value *ThS = Points[S][0], *ItS = Points[S][1],
                  *Valid = Points[S][2];
      CurGuard = Valid;
      auto V = valuesAt(FE, {ThS, Bl}, {ItS}, int64_t(S));
      CurGuard = nullptr;
      if (Valid)
        for (auto &LaneVals : V)
          for (size_t I = 0; I < LaneVals.size(); ++I)
            LaneVals[I] = B.CreateSelect(Valid, LaneVals[I], Idents[I]);
      All.push_back(std::move(V));
    }
    flushSideStores();
    for (int64_t J = 0; J < Vec; ++J) {
      Accs = ColAccs[size_t(J)];
      std::vector<llvm::Value *> Acc = loadAccs();
      for (const auto &V : All)
        Acc = combine(Acc, V[size_t(J)]);
      storeAccs(Acc);
    }
    FE.clearCache();
    Vectors.clear();
  };
  emitIf(ColValid, [&] {
    // Steps whose rows all exist: U at a time.
    llvm::Value *NFull = cst(Iters);
    if (RowMask) {
      llvm::Value *Q = B.CreateUDiv(B.CreateSub(cst(R), ChunkV), cst(RS));
      NFull = B.CreateSelect(B.CreateICmpULT(Q, cst(Iters)), Q, cst(Iters));
    }
    llvm::Value *Main = RowMask ? B.CreateUDiv(NFull, cst(U)) : cst(Iters / U);
    emitFor(Main, [&](llvm::Value *Cv) {
      std::vector<llvm::Value *> Its;
      for (int64_t Uu = 0; Uu < U; ++Uu)
        Its.push_back(B.CreateAdd(B.CreateMul(Cv, cst(U), "", true, true),
                                  cst(Uu), "", true, true));
      Steps(Its, false);
    });
    if (!RowMask) {
      std::vector<llvm::Value *> Its;
      for (int64_t It = Iters / U * U; It < Iters; ++It)
        Its.push_back(cst(It));
      if (!Its.empty())
        Steps(Its, false);
    } else {
      // The rest of the chunk one step at a time, masked.
      llvm::Value *First = B.CreateMul(Main, cst(U));
      emitFor(B.CreateSub(cst(Iters), First),
              [&](llvm::Value *Iv) { Steps({B.CreateAdd(First, Iv)}, true); });
    }
  });
  // Row slots of a warp: shuffles; warps: padded shared memory.
  std::vector<std::vector<llvm::Value *>> Part;
  for (int64_t J = 0; J < Vec; ++J) {
    Accs = ColAccs[size_t(J)];
    Part.push_back(loadAccs());
  }
  Accs = ColAccs[0];
  Part = warpReduceSets(std::move(Part), WarpSize, unsigned(L));
  int64_t Pitch = Cols + 1;
  SharedSlots Sh(M, Inits, uint64_t(W * Pitch), Info.Name + ".cols");
  for (llvm::Value *I : Inits)
    Info.SharedBytes += unsigned(
        W * Pitch *
        std::max<uint64_t>(
            1, M.getDataLayout().getTypeAllocSize(storedType(I->getType()))));
  emitIf(B.CreateICmpULT(Lane32V, cst(L)), [&] {
    for (int64_t J = 0; J < Vec; ++J) {
      llvm::Value *Idx =
          B.CreateAdd(B.CreateMul(WarpV, cst(Pitch)),
                      B.CreateAdd(B.CreateMul(LaneV, cst(Vec)), cst(J)));
      Sh.store(B, Idx, Part[size_t(J)]);
    }
  });
  emitBarrier(B);
  // Output index of (k1, column c of the tile).
  IndexingMap OM(Ctx, {Dims[0], Dims[1], {"c", {0, Cols - 1}}}, {}, {},
                 outputExprs(K1E * (R * K2) + ColBase + Ctx.dim(2)), {});
  auto Store = [&](llvm::Value *Col, llvm::ArrayRef<llvm::Value *> Red) {
    emitEpilogue(Red, emitExprs(OM, {Th, Bl, Col}, {}));
  };
  auto ForColumns = [&](const std::function<void(llvm::Value *)> &Body) {
    for (int64_t J = 0; J < ceilDiv(Cols, T); ++J) {
      llvm::Value *Col = B.CreateAdd(Th, cst(J * T));
      llvm::Value *Ok = B.CreateICmpULT(Col, cst(Cols));
      if (ColMask)
        Ok = B.CreateAnd(Ok,
                         B.CreateICmpULT(B.CreateAdd(ColBaseV, Col), cst(K2)));
      emitIf(Ok, [&] { Body(Col); });
    }
  };
  std::vector<ScratchArray> Scratch;
  if (Split > 1)
    Scratch = scratchArrays(K1 * Tiles * Split * Cols);
  ForColumns([&](llvm::Value *Col) {
    storeAccs(Idents);
    for (int64_t Wi = 0; Wi < W; ++Wi) {
      llvm::Value *Idx = B.CreateAdd(cst(Wi * Pitch), Col);
      storeAccs(combine(loadAccs(), Sh.load(B, Idx)));
    }
    if (Split == 1) {
      Store(Col, loadAccs());
      return;
    }
    // This chunk's partial: [tile][chunk][c].
    llvm::Value *Idx = B.CreateAdd(
        B.CreateMul(B.CreateAdd(B.CreateMul(TileIdV, cst(Split)), SpV),
                    cst(Cols)),
        Col);
    storeScratch(Scratch, Idx, loadAccs());
    threadFence();
  });
  if (Split > 1) {
    auto [IsLast, CounterPtr] = arriveLast(TileIdV, K1 * Tiles, Split);
    llvm::Value *CPtr = CounterPtr;
    emitIf(IsLast, [&] {
      threadFence();
      ForColumns([&](llvm::Value *Col) {
        storeAccs(Idents);
        emitFor(cst(Split), [&](llvm::Value *SV) {
          llvm::Value *Idx = B.CreateAdd(
              B.CreateMul(B.CreateAdd(B.CreateMul(TileIdV, cst(Split)), SV),
                          cst(Cols)),
              Col);
          storeAccs(combine(loadAccs(), loadScratch(Scratch, Idx)));
        });
        Store(Col, loadAccs());
      });
      emitIf(B.CreateICmpEQ(Th, cst(0)),
             [&] { B.CreateStore(B.getInt32(0), CPtr, /*isVolatile=*/true); });
    });
  }
  B.CreateRetVoid();
  return Info;
}

Expected<KernelInfo> ReductionKernel::run() {
  if (!A.Reduction)
    return unsupported(F, "no canonical reduction");
  if (auto D = collect())
    return *D;
  if (A.Kind == EmitterKind::ColumnReduction)
    return emitColumns();
  return emitRows();
}

} // namespace

Expected<KernelInfo> emitReductionKernel(llvm::Module &M,
                                         const HloInstruction &F,
                                         const FusionAnalysis &A,
                                         const KernelPlan &Plan, Context &Ctx,
                                         const MathOptions &Math) {
  if (Plan.RowNormalization)
    return emitRowNormalizationKernel(M, F, A, Plan, Ctx, Math);
  ReductionKernel RK(M, F, A, Plan, Ctx, Math);
  return RK.run();
}

} // namespace codegen
} // namespace idxmap
