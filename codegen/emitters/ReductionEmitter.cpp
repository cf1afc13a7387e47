//===- ReductionEmitter.cpp - Row, multi-row, full and column reductions --===//
//
// Part of idxmap. Every reduction is read in its canonical physical form
// (ReductionInfo): the input's linear physical offset is
// `(a * Dmid + m) * Dminor + c`, delinearized into the input's logical index,
// and the prologue (everything between the parameters and the reduce input)
// is computed at that index with FusedElementEmitter. Parameters whose
// contiguity and alignment the maps prove (the plan's LoadWidth:
// analyzeAccess of the kernel's thread map composed with the fusion's
// grouped indexing) are read with vector loads of the proven width.
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
//     deterministic. With ticket_fold the block that started last folds
//     them instead (ReductionPartials.cpp).
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
// The sizes (threads per row, rows per block and per thread, unroll, the
// chunking of full reductions, column lanes, warps and split) and the cache
// hints are the plan's (ReductionPlan, analysis/fusion/plan/ReductionPlan.cpp,
// each with its reason); the knobs that override them are tuningTable()
// (docs/TUNING.md).
//
// Epilogues (elementwise ops on the reduced values, other operands indexed
// by the output index) are computed with FusedElementEmitter at the output
// index, the hero's value injected with setOverride.
//
//===----------------------------------------------------------------------===//
#include "ReductionKernel.h"

namespace idxmap {
namespace codegen {
namespace reduction {

ParameterLoader ReductionKernel::vectorLoader() {
  return [this](const HloInstruction &P,
                llvm::ArrayRef<llvm::Value *> Index) -> llvm::Value * {
    int64_t W = Width[&P];
    if (W > 1) {
      auto Key = std::make_tuple(&P, CurSlot, CurLane / W);
      llvm::Value *VecV = Vectors[Key];
      // A vector loaded in another block (a branch of a pad or a window's
      // bounds test) may not dominate this use: loaded again.
      if (VecV && llvm::cast<llvm::Instruction>(VecV)->getParent() !=
                      B.GetInsertBlock())
        VecV = nullptr;
      if (!VecV) {
        // Index is this lane's element: the group's first is CurLane % W
        // before it (the first lane to load is not always lane 0: a
        // reload in another block happens at a later lane).
        VecV = loadParameterVector(B, *K, P, Index, W, IndexTy,
                                   OffsetTermOrder::MinorToMajor, CurLane % W,
                                   Hint[&P]);
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

std::optional<Diagnostic> ReductionKernel::collect() {
  // The plan refused fusions whose roots this emitter cannot write
  // (planReduction: side outputs, epilogues, tuple-shaped outputs).
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    const HloInstruction *H = A.Heroes[R];
    if (H->opcode() != HloOpcode::Reduce) {
      Sides.push_back({R, false, 1, IndexingMap()});
      continue;
    }
    if (std::find(Heroes.begin(), Heroes.end(), H) == Heroes.end())
      Heroes.push_back(H);
  }
  assert(!Heroes.empty() && "a reduction plan without a reduce hero");
  for (const HloInstruction *H : Heroes) {
    // Whether the reducer's ops can be emitted is codegen's table
    // (checkElementwise), not the plan's.
    if (auto Why = checkReducer(*H->toApply()))
      return unsupported(F, "reducer of '" + H->name() + "': " + *Why);
    int64_t N = H->operandCount() / 2;
    for (int64_t K2 = 0; K2 < N; ++K2)
      Slots.push_back({H, K2});
  }
  In = &Heroes.front()->operand(0)->shape();
  for (SideRoot &S : Sides) {
    const HloInstruction *R = A.Roots[S.Root];
    assert(R->shape().isArray() &&
           R->shape().numElements() == In->numElements() &&
           "a side output the plan should have refused");
    S.SameIndex = R->shape().sameDims(*In);
  }
  return std::nullopt;
}

std::optional<Diagnostic> ReductionKernel::createFunction(int64_t Threads,
                                                          int64_t Blocks,
                                                          int64_t Shared,
                                                          bool Workspace) {
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = std::string(emitterKindName(A.Kind));
  Info.RoundingDepth = RP.RoundingDepth;
  if (auto Err = setLaunchShape(Info, F, Math.Device, Blocks, Threads, Shared))
    return Err;
  std::vector<KernelParamSpec> Specs = fusionKernelParams(C, A.Roots, Info);
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
  IndexTy = Plan.Index32 ? B.getInt32Ty() : B.getInt64Ty();
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
  // The widths the plan proved, and its evict_first hint on the
  // parameters read once.
  for (SideRoot &S : Sides)
    S.Width = S.Root < RP.SideStoreWidth.size() ? RP.SideStoreWidth[S.Root] : 1;
  for (size_t K2 = 0; K2 < C.parameters().size(); ++K2) {
    const HloInstruction *P = C.parameters()[K2];
    Width[P] = K2 < RP.LoadWidth.size() ? RP.LoadWidth[K2] : 1;
    Hint[P] = Plan.EvictLast ? CacheHint::EvictLast
              : RP.EvictFirst && K2 < RP.ReadOnce.size() && RP.ReadOnce[K2]
                  ? CacheHint::EvictFirst
                  : CacheHint::Normal;
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
      llvm::Value *Ptr =
          elementPointer(B, ST, Base, Root->shape(), PS.Index[L0], IndexTy);
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
ReductionKernel::blockReduce(std::vector<llvm::Value *> Vs, unsigned Threads,
                             bool BarrierAfter) {
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
  if (BarrierAfter)
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
    llvm::Value *Ptr = elementPointer(B, ST, K->getArg(C.parameterCount() + R),
                                      Root->shape(), OutIdx, IndexTy);
    B.CreateAlignedStore(storeConvert(B, X, PT), Ptr,
                         llvm::Align(byteWidth(PT)));
  }
}

Expected<KernelInfo> ReductionKernel::run() {
  assert(A.Reduction && "a reduction plan without a canonical reduction");
  if (auto D = collect())
    return *D;
  if (A.Kind == EmitterKind::ColumnReduction)
    return emitColumns();
  return emitRows();
}

} // namespace reduction

Expected<KernelInfo> emitReductionKernel(llvm::Module &M,
                                         const HloInstruction &F,
                                         const FusionAnalysis &A,
                                         const KernelPlan &Plan, Context &Ctx,
                                         const MathOptions &Math) {
  if (Plan.RowNormalization)
    return emitRowNormalizationKernel(M, F, A, Plan, Ctx, Math);
  reduction::ReductionKernel RK(M, F, A, Plan, Ctx, Math);
  return RK.run();
}

} // namespace codegen
} // namespace idxmap
