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
// 4-byte elements in 32 x 64 tiles and for tilings of at most 8 waves of
// blocks of 4 warps (measured: see transposeTiling;
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
// broadcast of it) are planned as loop fusions (TransposePlan.cpp).
//
// The kernel under construction is a TransposeKernel (TransposeKernel.h):
// the set-up, launch, tile addressing and root stores are here, the
// reading and writing phases in TransposePhases.cpp.
//
//===----------------------------------------------------------------------===//
#include "TransposeKernel.h"

#include "ExprCodegen.h"
#include "KernelBuilder.h"

#include "idxmap/Coalescing.h"
#include "idxmap/Codegen.h"
#include "idxmap/Simplify.h"

#include "llvm/ADT/bit.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"

#include <algorithm>
#include <cassert>

namespace idxmap {
namespace codegen {
namespace transpose {

TransposeKernel::TransposeKernel(llvm::Module &M, const HloInstruction &F,
                                 const FusionAnalysis &A,
                                 const KernelPlan &Plan, Context &Ctx,
                                 const MathOptions &Math)
    : M(M), LC(M.getContext()), F(F), A(A), C(*A.Computation), Plan(Plan),
      Ctx(Ctx), Math(Math), B(LC), Hero(transposeHero(A)), TI(*A.Transpose),
      Tiling(Plan.Transpose->Tiling), ReadRoots(Plan.Transpose->ReadRoots),
      WriteRoots(Plan.Transpose->WriteRoots),
      ReadPred(Plan.Transpose->ReadPred), WritePred(Plan.Transpose->WritePred),
      ReadOp(Plan.Transpose->ReadOp), OutLin(Plan.Transpose->OutLin),
      InLin(Plan.Transpose->InLin), ReadRootMaps(Plan.Transpose->ReadRootMaps),
      WriteRootMaps(Plan.Transpose->WriteRootMaps) {
  HeroOp = Hero->operand(0);
  TilePT = Hero->shape().Type;
  TileBytes = byteWidth(TilePT);
  // The read side is vectorized: V elements of M per lane (16 bytes when
  // D[M] allows), so a tile spans Tm = 32 V elements of M and 32 rows of P.
  V = Tiling.V;
  Blocks = Tiling.Blocks;
  Threads = Tiling.Threads;
  Iters = Tiling.Iters;
  Rows = Tiling.Warps;
  Tm = Tile * V;
  RV = Tiling.ReadVec;
  WV = Tiling.WriteVec;
  RG = Tiling.readGroup();
  WIters = Tiling.WriteIters;
  Subs = Tiling.subTiles();
  VecTile = RV > 1 || WV > 1;
}

void TransposeKernel::classifyAccesses() {
  // The plan proved which parameters load as vectors and which write roots
  // need their element's index (TransposePlan).
  LinearLoads = Plan.Transpose->LinearLoads;
  LinearParams = Plan.Transpose->LinearParams;
  WriteNeedsIndex = Plan.Transpose->WriteNeedsIndex;
  // Output offset step between the elements of a group (rows of M in the
  // output).
  const int64_t R = int64_t(TI.Dims.size()), Mi = R - 1;
  for (int64_t O = R; O-- > 0 && TI.Permutation[O] != Mi;)
    OutStrideM *= TI.Dims[TI.Permutation[O]];
}

std::optional<Diagnostic> TransposeKernel::createFunction() {
  TileElemTy = storageType(LC, TilePT);
  GroupTy = RG == 1 ? TileElemTy : llvm::FixedVectorType::get(TileElemTy, RG);
  GroupAlign = llvm::Align(uint64_t(RG * TileBytes));
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = "transpose";
  if (auto Err = setLaunchShape(Info, F, Math.Device, Blocks, Threads,
                                Plan.SharedBytes))
    return *Err;
  std::vector<KernelParamSpec> Specs = fusionKernelParams(C, A.Roots, Info);
  K = createKernel(M, Info.Name, Specs);
  setLaunchBounds(*K, {unsigned(Threads), /*Exact=*/true, 0});
  // The scalar tile (vector tiles: see elemPtr): 32 rows (A) of 32 groups
  // of V elements (M); group q of row a lives at group slot q ^ a (mod
  // 32). Read phase: a warp stores one row, its lanes hit the 32 slots
  // once each. Write phase: lane l loads group q of row l, at slot q ^ l:
  // every 16-byte (8-, 4-byte) wavefront of 8 (16, 32) lanes covers
  // distinct banks. No padding, no conflicts.
  // Sub-tiles follow one another, Tile * Tm elements each.
  // transposeTileOffset and transposeTileAccesses (idxmap/Layout.h) are this
  // layout and the phases' accesses over integers, which `idxmap draw`
  // pictures: a change here changes them too (TileLayoutTest checks them
  // against the tiling's ReadIdx and WriteIdx and for bank conflicts).
  assert(Plan.SharedBytes == Subs * Tile * Tm * TileBytes &&
         "the plan's shared bytes are the tiles'");
  TileVar = createSharedArray(M, TileElemTy, uint64_t(Subs * Tile * Tm),
                              Info.Name + "_tile",
                              unsigned(std::max<int64_t>(RG * TileBytes, 4)));
  TileTy = llvm::ArrayType::get(TileElemTy, uint64_t(Subs * Tile * Tm));

  B.SetInsertPoint(&K->getEntryBlock());
  ThV = B.CreateZExtOrTrunc(emitThreadId(B, GpuDim::X, unsigned(Threads)),
                            IndexTy);
  BlV =
      B.CreateZExtOrTrunc(emitBlockId(B, GpuDim::X, unsigned(Blocks)), IndexTy);
  // Tile coordinates of this thread (32-bit: the tile is small).
  llvm::Value *Th32 = B.CreateZExtOrTrunc(ThV, I32);
  LaneV = B.CreateAnd(Th32, B.getInt32(Tile - 1));
  WarpV = B.CreateLShr(Th32, B.getInt32(5));
  return std::nullopt;
}

llvm::Value *TransposeKernel::subTileBase(llvm::Value *Sub) {
  if (!Sub)
    return nullptr;
  if (auto *C = llvm::dyn_cast<llvm::ConstantInt>(Sub))
    if (C->isZero())
      return nullptr;
  return B.CreateMul(Sub, B.getInt32(int32_t(Tile * Tm)), "", true, true);
}

llvm::Value *TransposeKernel::groupPtr(llvm::Value *TileRow, llvm::Value *Group,
                                       llvm::Value *Sub) {
  llvm::Value *Slot = B.CreateXor(Group, TileRow);
  llvm::Value *Off =
      B.CreateAdd(B.CreateMul(TileRow, B.getInt32(int32_t(Tm)), "", true, true),
                  B.CreateMul(Slot, B.getInt32(int32_t(V)), "", true, true), "",
                  true, true);
  if (llvm::Value *Base = subTileBase(Sub))
    Off = B.CreateAdd(Base, Off, "", true, true);
  return B.CreateInBoundsGEP(TileTy, TileVar, {B.getInt32(0), Off});
}

llvm::Value *TransposeKernel::elemPtr(llvm::Value *TileRow, llvm::Value *Col,
                                      llvm::Value *Sub) {
  // Vector tiles (V = 1). Slots of GS = max(ReadVec, WriteVec) <= 4
  // elements; slot Col / GS of row a lives at (Col / GS) ^ ((a / WriteVec)
  // mod (32 / GS)). A read lane's ReadVec elements stay in one aligned slot,
  // and the ReadVec rows of a warp store cover all 32 banks once each; with
  // WriteVec = 4 a write lane reads rows 4j + k (j = l mod 8, k < 4) of
  // column c + l / 8 (c % 4 == 0), words ((c / 4) ^ j) 4 + l / 8 mod 32:
  // distinct over the 32 lanes (likewise for WriteVec = 2). No padding, no
  // bank conflicts, except with ReadVec = 2 and WriteVec = 1 (only when
  // forced): rows l and l + 16 then share a swizzle and the write lanes'
  // loads conflict in pairs.
  const int64_t GS = std::max(RV, WV);
  const unsigned GSLog = unsigned(llvm::Log2_64(uint64_t(GS)));
  const unsigned SwizzleShift = unsigned(llvm::Log2_64(uint64_t(WV)));
  const int32_t Slots = int32_t(Tm / GS);
  // (Measured: the same offset written as Col ^ (swizzle << log2 GS), one
  // instruction less in the IR, ran 0.03 us slower on exp_transpose_abs.)
  llvm::Value *Swz =
      B.CreateAnd(B.CreateLShr(TileRow, SwizzleShift), B.getInt32(Slots - 1));
  llvm::Value *Slot = B.CreateXor(B.CreateLShr(Col, GSLog), Swz);
  llvm::Value *InSlot = B.CreateAnd(Col, B.getInt32(int32_t(GS - 1)));
  llvm::Value *Off =
      B.CreateAdd(B.CreateMul(TileRow, B.getInt32(int32_t(Tm)), "", true, true),
                  B.CreateOr(B.CreateShl(Slot, GSLog, "", true, true), InSlot),
                  "", true, true);
  if (llvm::Value *Base = subTileBase(Sub))
    Off = B.CreateAdd(Base, Off, "", true, true);
  return B.CreateInBoundsGEP(TileTy, TileVar, {B.getInt32(0), Off});
}

ParameterLoader TransposeKernel::loader() {
  return [this](const HloInstruction &P,
                llvm::ArrayRef<llvm::Value *> Index) -> llvm::Value * {
    const Shape &S = P.shape();
    if (FromGroups) {
      auto Found = Groups.find(&P);
      assert(Found != Groups.end() && "parameter outside the prologue");
      llvm::Value *G = Found->second;
      return loadConvert(B,
                         G->getType()->isVectorTy()
                             ? B.CreateExtractElement(G, CurJ)
                             : G,
                         S.Type);
    }
    return loadParameterElement(
        B, *K, P, Index, IndexTy, OffsetTermOrder::Logical,
        Plan.EvictLast ? CacheHint::EvictLast : CacheHint::Normal);
  };
}

void TransposeKernel::storeRoot(size_t RootNo, llvm::Value *Val,
                                llvm::ArrayRef<llvm::Value *> Idx,
                                llvm::Value *Ptr) {
  const Shape &S = A.Roots[RootNo]->shape();
  llvm::Type *ST = storageType(LC, S.Type);
  if (!S.hasDefaultLayout())
    Ptr = elementPointer(B, ST, K->getArg(C.parameterCount() + RootNo), S, Idx,
                         IndexTy, OffsetTermOrder::Logical);
  B.CreateAlignedStore(storeConvert(B, Val, S.Type), Ptr,
                       llvm::Align(byteWidth(S.Type)));
}

llvm::Value *TransposeKernel::rootPtr(size_t RootNo, llvm::Value *Lin,
                                      int64_t Step) {
  llvm::Type *ST = storageType(LC, A.Roots[RootNo]->shape().Type);
  llvm::Value *P =
      B.CreateInBoundsGEP(ST, K->getArg(C.parameterCount() + RootNo), Lin);
  return Step == 0 ? P : B.CreateConstInBoundsGEP1_64(ST, P, uint64_t(Step));
}

std::vector<llvm::Value *>
TransposeKernel::emitResults(const IndexingMap &Map,
                             llvm::ArrayRef<llvm::Value *> Syms) {
  return emitIndexExprs(B, MapRanges, Map, {ThV, BlV}, Syms, IndexTy);
}

Expected<KernelInfo> TransposeKernel::run() {
  requestBackEndOptLevel(M, Plan.BackEndOptLevel);
  I32 = llvm::Type::getInt32Ty(LC);
  IndexTy = Plan.Index32 ? I32 : llvm::Type::getInt64Ty(LC);
  classifyAccesses();
  if (auto Err = createFunction())
    return *Err;
  FE.emplace(B, Ctx, C, loader(), Math, IndexTy);
  readPhase();
  writePhase();
  B.CreateRetVoid();
  return Info;
}

} // namespace transpose

Expected<KernelInfo> emitTransposeKernel(llvm::Module &M,
                                         const HloInstruction &F,
                                         const FusionAnalysis &A,
                                         const KernelPlan &Plan, Context &Ctx,
                                         const MathOptions &Math) {
  assert(transposeHero(A) && A.Transpose && Plan.Transpose &&
         "transpose emitter without a transpose plan");
  transpose::TransposeKernel TK(M, F, A, Plan, Ctx, Math);
  return TK.run();
}

} // namespace codegen
} // namespace idxmap
