//===- TransposeEmitter.cpp - Shared-memory tiled transposes --------------===//
//
// Part of idxmap. A transpose of the minor dimension (normalized by
// classifyTranspose to input dims D[0..R-1] and a permutation) is done in
// tiles of the input's minor dim M = R-1 and of P, the output dims that
// follow M in the output, flattened (contiguous in the output; for {1,0}
// and {0,2,1} the one dim that becomes the output's minor dim, for
// {2,1,0} two). Every other normalized dim is one block coordinate. The
// tiling is the analysis' transposeTiling, so `idxmap analyze` prints this
// kernel's thread map. 32 W threads = 32 lanes x W warps, W = 4, or 8 for
// 4-byte elements in 32 x 64 tiles (measured: see transposeTiling;
// IDXMAP_TR_WARPS=N overrides it, rounded down to a power of two <= 32).
//
// The read side is vectorized: with V = 2 when D[M] is even and the tiles
// fill the GPU (else 1, see transposeGroupWidth), a
// tile is 32 rows of P by 32 groups of V elements of M (32 x 64), every
// lane issues 32 / W loads of V elements, each warp reading 64 V contiguous
// elements; consecutive blocks walk along P, so they write adjacent output
// (the choices are measured: see transposeGroupWidth and the block order):
//
//   read   warp w, it: row p = w + W it; lane l: group l (V elements of M)
//          tile[p][slot l ^ p] = prologue(operand at (.., p, .., m..m+V-1))
//   bar.sync
//   write  lane l: row p = l; warp w, it: group q = w + W it
//          group = tile[l][slot q ^ l]; for j < V:
//          out(.., q V + j, .., l) = epilogue(group[j])
//
// Tiles of 32 x 32 4-byte elements (V = 1) move vectors on both sides when
// the shapes allow (transposeTiling's ReadVec R and WriteVec W, as
// torch.compile's Triton kernels: W = 4 when P % 4 == 0, 2 when P % 4 ==
// 2; R = 2 when D[M] is even and W > 1; both at most 32 / warps; W = 1 when
// a root written through the transpose has a non-default layout):
//
//   read   lane l, warp w, it: row p = l / (32/R) + R w + R W' it (W' warps)
//          tile[p][m..m+R-1] = prologue(R elements), m = R (l mod 32/R)
//   write  lane l, warp w, it: column m = l / (32/W) + W w + W W' it
//          out(rows p..p+W-1 of column m) = epilogue(tile[p+k][m]), one
//          W-element store, p = W (l mod 32/W)
//
// with slots of max(R, W) elements swizzled by row / W (see ElemPtr). On
// f32[20,160,170]{2,1,0} this takes 4 loads of 8 bytes and 2 stores of 16
// per thread instead of 8 and 8 of 4 (1.82 against 1.89 us on the H200).
// IDXMAP_TR_RVEC / IDXMAP_TR_WVEC = 1 force scalar reads / writes.
//
// Otherwise the writes are one element per lane, 32 consecutive elements of
// the output row per warp (coalesced). The XOR swizzle of group slots replaces
// padding: a warp storing one row touches 32 distinct slots; lanes loading
// group q of rows l..l+7 (16-byte wavefronts; 16 rows for 8 bytes, 32 for 4)
// touch slots q ^ l, distinct modulo 8 (16, 32), so no bank is hit twice.
// Ragged edges (D[M] not a multiple of 32 V, P not a multiple of 32) are
// predicated per row from the domain of the thread maps; D[M] % V == 0 keeps
// a group entirely inside or outside.
//
// The thread maps are `(th_x, bl_x)[it, j] -> index`, built here once per
// accessed shape and lowered with emitIndexExpr; the predicates come from
// their constraints (emitDomainCheck). The prologue is the hero operand
// computed with the FusedElementEmitter per element; when it reads every
// parameter at its own index (elementwise ops, default layouts), the
// parameters are loaded as vectors of a lane's group (V or ReadVec
// elements). The epilogue is each root
// computed at the write index with the transpose's value overridden by the
// tile element. Roots that do not go through the transpose (side outputs
// with the operand's element count) are written in the read phase.
//
// Fusions whose epilogue does not read the transpose one-to-one (e.g. a
// broadcast of it) fall back to the loop emitter.
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
#include "idxmap/Simplify.h"

#include "llvm/ADT/bit.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <map>

namespace idxmap {
namespace codegen {

namespace {

constexpr int64_t Tile = 32;

/// A map `(th_x, bl_x)[it, j] -> Results` with the tile constraints; j is
/// the element of a vector group of \p V.
IndexingMap tileMap(Context &Ctx, int64_t Threads, int64_t Iters,
                    int64_t Blocks, int64_t V, std::vector<Expr> Results,
                    const std::vector<Constraint> &Cs) {
  IndexingMap Map(Ctx, {{"th_x", {0, Threads - 1}}, {"bl_x", {0, Blocks - 1}}},
                  {{"it", {0, Iters - 1}}, {"j", {0, V - 1}}}, {},
                  std::move(Results), Cs);
  simplify(Map);
  return Map;
}

/// Emits the results of \p Map at (Th, Bl)[Syms].
std::vector<llvm::Value *> emitResults(llvm::IRBuilder<> &B,
                                       const IndexingMap &Map, llvm::Value *Th,
                                       llvm::Value *Bl,
                                       llvm::ArrayRef<llvm::Value *> Syms,
                                       llvm::Type *IndexTy) {
  return emitIndexExprs(B, Map, {Th, Bl}, Syms, IndexTy);
}

/// True when every parameter that \p Op reads is read at Op's own index:
/// the path is elementwise ops over arrays of Op's dims (scalar constants
/// allowed), and Op and the parameters have the default layout. Collects
/// those parameters.
bool identityPrologue(const HloInstruction *Op,
                      std::vector<const HloInstruction *> &Params) {
  if (!Op->shape().isArray() || !Op->shape().hasDefaultLayout())
    return false;
  const std::vector<int64_t> &Dims = Op->shape().Dims;
  std::function<bool(const HloInstruction *)> Walk =
      [&](const HloInstruction *X) {
        if (X->opcode() == HloOpcode::Constant && X->shape().rank() == 0)
          return true;
        if (!X->shape().isArray() || X->shape().Dims != Dims ||
            !X->shape().hasDefaultLayout())
          return false;
        if (X->opcode() == HloOpcode::Parameter) {
          if (std::find(Params.begin(), Params.end(), X) == Params.end())
            Params.push_back(X);
          return true;
        }
        if (!isElementwise(X->opcode()))
          return false;
        for (const HloInstruction *O : X->operands())
          if (!Walk(O))
            return false;
        return true;
      };
  return Walk(Op);
}

} // namespace

Expected<KernelInfo> emitTransposeKernel(llvm::Module &M,
                                         const HloInstruction &F,
                                         const FusionAnalysis &A,
                                         const KernelPlan &Plan, Context &Ctx,
                                         const MathOptions &Math) {
  requestBackEndOptLevel(M, Plan.BackEndOptLevel);
  const HloComputation &C = *A.Computation;
  const HloInstruction *Hero = transposeHero(A);
  assert(Hero && A.Transpose && Plan.Transpose &&
         "transpose emitter without a transpose plan");
  const HloInstruction *HeroOp = Hero->operand(0);
  const int64_t NIn = HeroOp->shape().numElements();
  // Roots written through the tile, and at the hero operand's index.
  const std::vector<size_t> &ReadRoots = Plan.Transpose->ReadRoots,
                            &WriteRoots = Plan.Transpose->WriteRoots;

  // The tiling of the normalized dims. The read side is vectorized: V
  // elements of M per lane (16 bytes when D[M] allows), so a tile spans
  // Tm = 32 V elements of M and 32 rows of P.
  const TransposeInfo &TI = *A.Transpose;
  const int64_t R = int64_t(TI.Dims.size()), Mi = R - 1;
  PrimitiveType TilePT = Hero->shape().Type;
  const int64_t TileBytes = byteWidth(TilePT);
  // The tiling (transposeTiling, planned with its overrides).
  const TransposeTiling &Tiling = Plan.Transpose->Tiling;
  const int64_t V = Tiling.V, Blocks = Tiling.Blocks;
  const int64_t Threads = Tiling.Threads, Iters = Tiling.Iters,
                Rows = Tiling.Warps;
  const int64_t Tm = Tile * V;
  // Read groups: RG elements of M per lane and load (V, or ReadVec of a 32
  // x 32 tile). Write vectors: WV elements of P per lane and store.
  const int64_t RV = Tiling.ReadVec, WV = Tiling.WriteVec;
  const int64_t RG = Tiling.readGroup(), WIters = Tiling.WriteIters;
  const bool VecTile = RV > 1 || WV > 1;
  // Normalized input index read (lane = vector group along M, row along
  // the output-contiguous dims P) and written (lane along P, row = vector
  // group along M), with the ragged edges as constraints. D[M] is a
  // multiple of V, so a vector group is entirely in or out.
  const std::vector<Expr> &ReadIdx = Tiling.ReadIdx,
                          &WriteIdx = Tiling.WriteIdx;
  const std::vector<Constraint> &ReadCs = Tiling.ReadCs,
                                &WriteCs = Tiling.WriteCs;
  Expr LinIn = Ctx.constant(0), LinOut = Ctx.constant(0);
  for (int64_t D = 0; D < R; ++D)
    LinIn = LinIn * TI.Dims[D] + ReadIdx[D];
  for (int64_t O = 0; O < R; ++O)
    LinOut = LinOut * TI.Dims[TI.Permutation[O]] + WriteIdx[TI.Permutation[O]];

  auto Map = [&](std::vector<Expr> Results, const std::vector<Constraint> &Cs) {
    return tileMap(Ctx, Threads, Iters, Blocks, RG, std::move(Results), Cs);
  };
  // The write side's maps (their own range with vector tiles).
  auto MapW = [&](std::vector<Expr> Results,
                  const std::vector<Constraint> &Cs) {
    return tileMap(Ctx, Threads, WIters, Blocks, Tiling.writeGroup(),
                   std::move(Results), Cs);
  };
  IndexingMap ReadPred = Map(ReadIdx, ReadCs);
  IndexingMap WritePred = MapW(WriteIdx, WriteCs);
  IndexingMap ReadOp =
      Map(delinearize(Ctx, LinIn, HeroOp->shape().Dims), ReadCs);
  std::vector<IndexingMap> ReadRootMaps, WriteRootMaps;
  for (size_t K : ReadRoots)
    ReadRootMaps.push_back(
        Map(delinearize(Ctx, LinIn, A.Roots[K]->shape().Dims), ReadCs));
  for (size_t K : WriteRoots)
    WriteRootMaps.push_back(
        MapW(delinearize(Ctx, LinOut, A.Roots[K]->shape().Dims), WriteCs));
  IndexingMap OutLin = MapW({LinOut}, WriteCs);
  IndexingMap InLin = Map({LinIn}, ReadCs);

  // 32-bit index arithmetic when every offset fits.
  int64_t Largest = std::max(NIn, Blocks * Threads);
  for (const HloInstruction *P : C.parameters())
    Largest = std::max(Largest, P->shape().numElements());
  for (const HloInstruction *Root : A.Roots)
    Largest = std::max(Largest, Root->shape().numElements());
  llvm::LLVMContext &LC = M.getContext();
  llvm::Type *I32 = llvm::Type::getInt32Ty(LC);
  bool Narrow = Largest < (int64_t(1) << 31) / 16;
  for (const IndexingMap *Mp :
       {&ReadPred, &WritePred, &ReadOp, &OutLin, &InLin}) {
    RangeEvaluator RE(*Mp);
    Narrow = Narrow && mapFitsInI32(*Mp, RE);
  }
  llvm::Type *IndexTy = Narrow ? I32 : llvm::Type::getInt64Ty(LC);

  // Vector loads of the prologue's parameters when each is read at the hero
  // operand's own linear offset (then element j of a group sits at offset
  // LinIn + j, aligned to the group because D[M] % RG == 0).
  std::vector<const HloInstruction *> VecParams;
  bool VectorLoads = RG > 1 && identityPrologue(HeroOp, VecParams);
  for (size_t K2 : ReadRoots)
    VectorLoads = VectorLoads &&
                  A.Roots[K2]->shape().Dims == HeroOp->shape().Dims &&
                  identityPrologue(A.Roots[K2], VecParams);

  // Output offset step between the elements of a group (rows of M in the
  // output), and which write roots need a per-element index: those with a
  // non-default layout or an epilogue that reads more than the transpose.
  int64_t OutStrideM = 1;
  for (int64_t O = R; O-- > 0 && TI.Permutation[O] != Mi;)
    OutStrideM *= TI.Dims[TI.Permutation[O]];
  std::vector<bool> WriteNeedsIndex;
  for (size_t K2 : WriteRoots) {
    std::function<bool(const HloInstruction *)> Needs =
        [&](const HloInstruction *X) {
          if (X == Hero ||
              (X->opcode() == HloOpcode::Constant && X->shape().rank() == 0))
            return false;
          if (!isElementwise(X->opcode()) && X->opcode() != HloOpcode::Copy)
            return true;
          for (const HloInstruction *O : X->operands())
            if (Needs(O))
              return true;
          return false;
        };
    WriteNeedsIndex.push_back(!A.Roots[K2]->shape().hasDefaultLayout() ||
                              Needs(A.Roots[K2]));
  }

  llvm::Type *TileElemTy = storageType(LC, TilePT);
  llvm::Type *GroupTy =
      RG == 1 ? TileElemTy : llvm::FixedVectorType::get(TileElemTy, RG);
  const llvm::Align GroupAlign(uint64_t(RG * TileBytes));

  KernelInfo Info;
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = "transpose";
  if (auto Err = setLaunchShape(Info, F, Math.Device, Blocks, Threads,
                                Tile * Tm * TileBytes))
    return *Err;
  std::vector<KernelParamSpec> Specs;
  for (const HloInstruction *P : C.parameters()) {
    Specs.push_back({P->name(), KernelParamRole::Input, 16, nullptr});
    Info.Params.push_back({P->name(), false, P->shape(), 16});
  }
  for (const HloInstruction *Root : A.Roots) {
    Specs.push_back({Root->name(), KernelParamRole::Output, 16, nullptr});
    Info.Params.push_back({Root->name(), true, Root->shape(), 16});
  }
  llvm::Function *K = createKernel(M, Info.Name, Specs);
  setLaunchBounds(*K, {unsigned(Threads), /*Exact=*/true, 0});
  // The scalar tile (vector tiles: see ElemPtr below): 32 rows (A) of 32
  // groups of V elements (M); group q of row a
  // lives at group slot q ^ a (mod 32). Read phase: a warp stores one row,
  // its lanes hit the 32 slots once each. Write phase: lane l loads group q
  // of row l, at slot q ^ l: every 16-byte (8-, 4-byte) wavefront of 8 (16,
  // 32) lanes covers distinct banks. No padding, no conflicts.
  llvm::GlobalVariable *TileVar =
      createSharedArray(M, TileElemTy, uint64_t(Tile * Tm), Info.Name + "_tile",
                        unsigned(std::max<int64_t>(RG * TileBytes, 4)));
  auto *TileTy = llvm::ArrayType::get(TileElemTy, uint64_t(Tile * Tm));

  llvm::IRBuilder<> B(&K->getEntryBlock());
  llvm::Value *ThV = B.CreateZExtOrTrunc(
      emitThreadId(B, GpuDim::X, unsigned(Threads)), IndexTy);
  llvm::Value *BlV =
      B.CreateZExtOrTrunc(emitBlockId(B, GpuDim::X, unsigned(Blocks)), IndexTy);
  // Tile coordinates of this thread (32-bit: the tile is small).
  llvm::Value *Th32 = B.CreateZExtOrTrunc(ThV, I32);
  llvm::Value *LaneV = B.CreateAnd(Th32, B.getInt32(Tile - 1));
  llvm::Value *WarpV = B.CreateLShr(Th32, B.getInt32(5));

  // Element offset of group slot (Row, Group) in the tile.
  auto GroupPtr = [&](llvm::Value *TileRow, llvm::Value *Group) {
    llvm::Value *Slot = B.CreateXor(Group, TileRow);
    llvm::Value *Off = B.CreateAdd(
        B.CreateMul(TileRow, B.getInt32(int32_t(Tm)), "", true, true),
        B.CreateMul(Slot, B.getInt32(int32_t(V)), "", true, true), "", true,
        true);
    return B.CreateInBoundsGEP(TileTy, TileVar, {B.getInt32(0), Off});
  };
  // Vector tiles (V = 1): pointer to element (TileRow, Col). Slots of GS =
  // max(ReadVec, WriteVec) <= 4 elements; slot Col / GS of row a lives at
  // (Col / GS) ^ ((a / WriteVec) mod (32 / GS)). A read lane's ReadVec
  // elements stay in one aligned slot, and the ReadVec rows of a warp store
  // cover all 32 banks once each; with WriteVec = 4 a write lane reads rows
  // 4j + k (j = l mod 8, k < 4) of column c + l / 8 (c % 4 == 0), words
  // ((c / 4) ^ j) 4 + l / 8 mod 32: distinct over the 32 lanes (likewise
  // for WriteVec = 2). No padding, no bank conflicts, except with ReadVec =
  // 2 and WriteVec = 1 (only when forced): rows l and l + 16 then share a
  // swizzle and the write lanes' loads conflict in pairs.
  const int64_t GS = std::max(RV, WV);
  const unsigned GSLog = unsigned(llvm::Log2_64(uint64_t(GS)));
  const unsigned SwizzleShift = unsigned(llvm::Log2_64(uint64_t(WV)));
  const int32_t Slots = int32_t(Tm / GS);
  auto ElemPtr = [&](llvm::Value *TileRow, llvm::Value *Col) {
    // (Measured: the same offset written as Col ^ (swizzle << log2 GS), one
    // instruction less in the IR, ran 0.03 us slower on exp_transpose_abs.)
    llvm::Value *Swz =
        B.CreateAnd(B.CreateLShr(TileRow, SwizzleShift), B.getInt32(Slots - 1));
    llvm::Value *Slot = B.CreateXor(B.CreateLShr(Col, GSLog), Swz);
    llvm::Value *InSlot = B.CreateAnd(Col, B.getInt32(int32_t(GS - 1)));
    llvm::Value *Off = B.CreateAdd(
        B.CreateMul(TileRow, B.getInt32(int32_t(Tm)), "", true, true),
        B.CreateOr(B.CreateShl(Slot, GSLog, "", true, true), InSlot), "", true,
        true);
    return B.CreateInBoundsGEP(TileTy, TileVar, {B.getInt32(0), Off});
  };

  // Vector-load mode: parameter -> the loaded group of this iteration.
  std::map<const HloInstruction *, llvm::Value *> Groups;
  int64_t CurJ = 0;
  bool FromGroups = false;
  ParameterLoader Loader =
      [&](const HloInstruction &P,
          llvm::ArrayRef<llvm::Value *> Index) -> llvm::Value * {
    const Shape &S = P.shape();
    if (FromGroups) {
      auto Found = Groups.find(&P);
      assert(Found != Groups.end() && "parameter outside the prologue");
      return loadConvert(B, B.CreateExtractElement(Found->second, CurJ),
                         S.Type);
    }
    return loadParameterElement(B, *K, P, Index, IndexTy,
                                OffsetTermOrder::Logical);
  };
  FusedElementEmitter FE(B, Ctx, C, Loader, Math, IndexTy);

  // Stores root RootNo's element: at Ptr (computed by the caller) for the
  // default layout, else at the physical offset of Idx.
  auto StoreRoot = [&](size_t RootNo, llvm::Value *Val,
                       llvm::ArrayRef<llvm::Value *> Idx, llvm::Value *Ptr) {
    const Shape &S = A.Roots[RootNo]->shape();
    llvm::Type *ST = storageType(LC, S.Type);
    if (!S.hasDefaultLayout())
      Ptr = B.CreateInBoundsGEP(
          ST, K->getArg(C.parameterCount() + RootNo),
          physicalOffset(B, S, Idx, IndexTy, OffsetTermOrder::Logical));
    B.CreateAlignedStore(storeConvert(B, Val, S.Type), Ptr,
                         llvm::Align(byteWidth(S.Type)));
  };
  // Pointer to element Lin (+ Step) of root RootNo in the default layout.
  auto RootPtr = [&](size_t RootNo, llvm::Value *Lin, int64_t Step = 0) {
    llvm::Type *ST = storageType(LC, A.Roots[RootNo]->shape().Type);
    llvm::Value *P =
        B.CreateInBoundsGEP(ST, K->getArg(C.parameterCount() + RootNo), Lin);
    return Step == 0 ? P : B.CreateConstInBoundsGEP1_64(ST, P, uint64_t(Step));
  };

  // Runs Body for iteration It under the map's domain predicate (which does
  // not depend on the element j of a group).
  auto Predicated = [&](const IndexingMap &Pred, llvm::Value *ItV,
                        Interval ItRange,
                        const std::function<void(llvm::Value *)> &Body) {
    llvm::Value *J0 = llvm::ConstantInt::get(IndexTy, 0);
    DomainCheckOptions O;
    O.DimValueRanges = {{0, Threads - 1}, {0, Blocks - 1}};
    O.SymValueRanges = {ItRange, {0, 0}};
    llvm::Value *Cond =
        emitDomainCheck(B, Pred, {ThV, BlV}, {ItV, J0}, IndexTy, O);
    auto *CI = llvm::dyn_cast<llvm::ConstantInt>(Cond);
    if (CI && CI->isOne()) {
      Body(ItV);
      return;
    }
    if (CI)
      return; // never in the domain
    auto *Then = llvm::BasicBlock::Create(LC, "tile.row", K);
    auto *Next = llvm::BasicBlock::Create(LC, "tile.next", K);
    B.CreateCondBr(Cond, Then, Next);
    B.SetInsertPoint(Then);
    FE.clearCache();
    Body(ItV);
    B.CreateBr(Next);
    B.SetInsertPoint(Next);
    FE.clearCache();
  };
  // The iterations of a phase, unrolled (read phase: the loads of all
  // iterations are in flight together; vector tiles' write phase: as a
  // loop of 2 iterations ptxas kept it rolled, 1.90 against 1.82 us on
  // exp_transpose_abs) or as a counted loop (the scalar write phase: ptxas
  // unrolls it; the IR stays an eighth of the size).
  auto Iterate = [&](const IndexingMap &Pred, int64_t Count, bool Unroll,
                     const std::function<void(llvm::Value *)> &Body) {
    if (Unroll) {
      for (int64_t ItNo = 0; ItNo < Count; ++ItNo)
        Predicated(Pred, llvm::ConstantInt::get(IndexTy, ItNo), {ItNo, ItNo},
                   Body);
      return;
    }
    llvm::BasicBlock *Pre = B.GetInsertBlock();
    auto *Loop = llvm::BasicBlock::Create(LC, "tile.loop", K);
    auto *Exit = llvm::BasicBlock::Create(LC, "tile.done", K);
    B.CreateBr(Loop);
    B.SetInsertPoint(Loop);
    llvm::PHINode *ItV = B.CreatePHI(IndexTy, 2, "it");
    ItV->addIncoming(llvm::ConstantInt::get(IndexTy, 0), Pre);
    FE.clearCache();
    Predicated(Pred, ItV, {0, Count - 1}, Body);
    llvm::Value *NextIt = B.CreateAdd(ItV, llvm::ConstantInt::get(IndexTy, 1),
                                      "it.next", true, true);
    ItV->addIncoming(NextIt, B.GetInsertBlock());
    B.CreateCondBr(
        B.CreateICmpULT(NextIt, llvm::ConstantInt::get(IndexTy, Count)), Loop,
        Exit);
    B.SetInsertPoint(Exit);
    FE.clearCache();
  };
  auto JValue = [&](int64_t Jn) { return llvm::ConstantInt::get(IndexTy, Jn); };

  // The linear input offset of iteration it: when it moves the offset by a
  // constant (the tile rows are one dim, or dims the simplifier folds), it
  // is iteration 0's plus that constant, and iteration 0's is emitted once
  // here, where it dominates every iteration. Smaller IR than a full index
  // computation per iteration (compile time), the same PTX after ptxas.
  std::vector<int64_t> InLinSteps;
  llvm::Value *InLinBase = nullptr;
  if (VectorLoads) {
    Expr E = InLin.results()[0];
    auto At = [&](int64_t ItNo) {
      return E.replace({}, {Ctx.constant(ItNo), Ctx.constant(0)});
    };
    for (int64_t ItNo = 0; ItNo < Iters; ++ItNo) {
      Expr D = simplifyExpr(At(ItNo) - At(0), InLin, /*UseConstraints=*/false);
      if (!D.isConstant()) {
        InLinSteps.clear();
        break;
      }
      InLinSteps.push_back(D.value());
    }
    if (!InLinSteps.empty())
      InLinBase = emitResults(B, InLin, ThV, BlV,
                              {llvm::ConstantInt::get(IndexTy, 0), JValue(0)},
                              IndexTy)[0];
  }

  // Read phase: warp w reads tile rows w, w + 4, ...; lane l the group l
  // (vector tiles: ReadVec rows per warp, see transposeTiling).
  Iterate(ReadPred, Iters, /*Unroll=*/true, [&](llvm::Value *ItV) {
    // Tile row and first column of this lane's group (transposeTiling).
    llvm::Value *It32 = B.CreateZExtOrTrunc(ItV, I32);
    llvm::Value *TileRow, *Col;
    if (VecTile) {
      const int32_t Lanes = int32_t(Tile / RV);
      TileRow =
          B.CreateAdd(B.CreateAdd(B.CreateUDiv(LaneV, B.getInt32(Lanes)),
                                  B.CreateMul(WarpV, B.getInt32(int32_t(RV)))),
                      B.CreateMul(It32, B.getInt32(int32_t(Rows * RV))));
      Col = B.CreateMul(B.CreateURem(LaneV, B.getInt32(Lanes)),
                        B.getInt32(int32_t(RV)));
    } else {
      TileRow = B.CreateAdd(WarpV, B.CreateMul(It32, B.getInt32(Rows)));
      Col = LaneV;
    }
    if (VectorLoads) {
      auto *ItC = llvm::cast<llvm::ConstantInt>(ItV);
      llvm::Value *Lin0 =
          InLinBase
              ? B.CreateAdd(InLinBase,
                            llvm::ConstantInt::get(
                                IndexTy, InLinSteps[ItC->getZExtValue()]))
              : emitResults(B, InLin, ThV, BlV, {ItV, JValue(0)}, IndexTy)[0];
      Groups.clear();
      for (const HloInstruction *P : VecParams) {
        llvm::Type *PT =
            llvm::FixedVectorType::get(storageType(LC, P->shape().Type), RG);
        llvm::Value *Ptr =
            B.CreateInBoundsGEP(storageType(LC, P->shape().Type),
                                K->getArg(P->parameterNumber()), Lin0);
        Groups[P] = B.CreateAlignedLoad(
            PT, Ptr, llvm::Align(uint64_t(RG * byteWidth(P->shape().Type))));
      }
    }
    llvm::Value *Group = llvm::PoisonValue::get(GroupTy);
    std::vector<llvm::Value *> Elems, Idx;
    for (int64_t Jn = 0; Jn < RG; ++Jn) {
      CurJ = Jn;
      FromGroups = VectorLoads;
      FE.clearCache();
      // With vector loads the loader ignores the index (the prologue is
      // elementwise over parameters and scalar constants).
      if (!VectorLoads)
        Idx = emitResults(B, ReadOp, ThV, BlV, {ItV, JValue(Jn)}, IndexTy);
      else if (Jn == 0)
        Idx.assign(HeroOp->shape().rank(), llvm::ConstantInt::get(IndexTy, 0));
      llvm::Value *Val = FE.valueAt(*HeroOp, Idx);
      Elems.push_back(Val);
      llvm::Value *St = storeConvert(B, Val, TilePT);
      Group = RG == 1 ? St : B.CreateInsertElement(Group, St, Jn);
      if (!ReadRoots.empty()) {
        llvm::Value *Lin =
            emitResults(B, InLin, ThV, BlV, {ItV, JValue(Jn)}, IndexTy)[0];
        for (size_t K2 = 0; K2 < ReadRoots.size(); ++K2) {
          std::vector<llvm::Value *> RIdx = emitResults(
              B, ReadRootMaps[K2], ThV, BlV, {ItV, JValue(Jn)}, IndexTy);
          StoreRoot(ReadRoots[K2], FE.valueAt(*A.Roots[ReadRoots[K2]], RIdx),
                    RIdx, RootPtr(ReadRoots[K2], Lin));
        }
      }
    }
    FromGroups = false;
    FE.clearCache();
    B.CreateAlignedStore(
        Group, VecTile ? ElemPtr(TileRow, Col) : GroupPtr(TileRow, Col),
        GroupAlign);
  });
  FE.clearCache();
  emitBarrier(B);

  // Write phase. The index of write root K2's element j of iteration it:
  // none (zeros) for an epilogue that reads no parameter and no layout
  // (elementwise ops of the transpose and scalar constants).
  llvm::Value *Current = nullptr;
  FE.setOverride(*Hero, [&](llvm::ArrayRef<llvm::Value *>) { return Current; });
  auto RootIndex = [&](size_t K2, llvm::Value *ItV, int64_t Jn) {
    if (WriteNeedsIndex[K2])
      return emitResults(B, WriteRootMaps[K2], ThV, BlV, {ItV, JValue(Jn)},
                         IndexTy);
    return std::vector<llvm::Value *>(A.Roots[WriteRoots[K2]]->shape().rank(),
                                      llvm::ConstantInt::get(IndexTy, 0));
  };
  if (VecTile) {
    // Lane l of warp w, iteration it: tile column l / (32 / WV) + WV w +
    // WV W it, rows WV (l mod (32 / WV)) + j; one WV-element store per root
    // (P % WV == 0: the vector is one output row's, aligned, in or out).
    const int32_t Lanes = int32_t(Tile / WV);
    llvm::Value *Row0 = B.CreateMul(B.CreateURem(LaneV, B.getInt32(Lanes)),
                                    B.getInt32(int32_t(WV)));
    llvm::Value *Col0 =
        B.CreateAdd(B.CreateUDiv(LaneV, B.getInt32(Lanes)),
                    B.CreateMul(WarpV, B.getInt32(int32_t(WV))));
    Iterate(WritePred, WIters, /*Unroll=*/true, [&](llvm::Value *ItV) {
      llvm::Value *Col =
          B.CreateAdd(Col0, B.CreateMul(B.CreateZExtOrTrunc(ItV, I32),
                                        B.getInt32(int32_t(Rows * WV))));
      llvm::Value *Lin0 =
          emitResults(B, OutLin, ThV, BlV, {ItV, JValue(0)}, IndexTy)[0];
      std::vector<std::vector<llvm::Value *>> Vals(WriteRoots.size());
      // Rows Row0 + j (Row0 % WV == 0, j < WV) share a swizzle: element
      // (Row0 + j, Col) is j rows after (Row0, Col).
      llvm::Value *Ptr0 = ElemPtr(Row0, Col);
      for (int64_t Jn = 0; Jn < WV; ++Jn) {
        llvm::Value *Ptr =
            B.CreateConstInBoundsGEP1_64(TileElemTy, Ptr0, uint64_t(Jn * Tm));
        Current =
            loadConvert(B,
                        B.CreateAlignedLoad(TileElemTy, Ptr,
                                            llvm::Align(uint64_t(TileBytes))),
                        TilePT);
        for (size_t K2 = 0; K2 < WriteRoots.size(); ++K2) {
          std::vector<llvm::Value *> RIdx = RootIndex(K2, ItV, Jn);
          llvm::Value *Val = FE.valueAt(*A.Roots[WriteRoots[K2]], RIdx);
          if (WV == 1) // scalar writes (forced), any layout
            StoreRoot(WriteRoots[K2], Val, RIdx, RootPtr(WriteRoots[K2], Lin0));
          else
            Vals[K2].push_back(
                storeConvert(B, Val, A.Roots[WriteRoots[K2]]->shape().Type));
        }
        FE.clearCache();
      }
      for (size_t K2 = 0; WV > 1 && K2 < WriteRoots.size(); ++K2) {
        const Shape &S = A.Roots[WriteRoots[K2]]->shape();
        llvm::Type *ST = storageType(LC, S.Type);
        llvm::Value *Vec =
            llvm::PoisonValue::get(llvm::FixedVectorType::get(ST, WV));
        for (int64_t Jn = 0; Jn < WV; ++Jn)
          Vec = B.CreateInsertElement(Vec, Vals[K2][Jn], Jn);
        B.CreateAlignedStore(Vec, RootPtr(WriteRoots[K2], Lin0),
                             llvm::Align(uint64_t(std::min<int64_t>(
                                 WV * byteWidth(S.Type), 16))));
      }
    });
  } else {
    // Scalar tiles: lane l writes output column l (A); warp w the groups w,
    // w + 4, ... of M, one output row per element of the group.
    Iterate(WritePred, Iters, /*Unroll=*/false, [&](llvm::Value *ItV) {
      llvm::Value *GroupNo = B.CreateAdd(
          WarpV, B.CreateMul(B.CreateZExtOrTrunc(ItV, I32), B.getInt32(Rows)));
      llvm::Value *Group =
          B.CreateAlignedLoad(GroupTy, GroupPtr(LaneV, GroupNo), GroupAlign);
      // Element j of the group is j output rows further: offset + j * stride.
      llvm::Value *Lin0 =
          emitResults(B, OutLin, ThV, BlV, {ItV, JValue(0)}, IndexTy)[0];
      for (int64_t Jn = 0; Jn < V; ++Jn) {
        llvm::Value *St = V == 1 ? Group : B.CreateExtractElement(Group, Jn);
        Current = loadConvert(B, St, TilePT);
        for (size_t K2 = 0; K2 < WriteRoots.size(); ++K2) {
          std::vector<llvm::Value *> RIdx = RootIndex(K2, ItV, Jn);
          StoreRoot(WriteRoots[K2], FE.valueAt(*A.Roots[WriteRoots[K2]], RIdx),
                    RIdx, RootPtr(WriteRoots[K2], Lin0, Jn * OutStrideM));
        }
        // Values computed from this element must not be reused.
        FE.clearCache();
      }
    });
  }
  FE.setOverride(*Hero, nullptr);
  B.CreateRetVoid();
  return Info;
}

} // namespace codegen
} // namespace idxmap
