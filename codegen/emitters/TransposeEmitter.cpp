//===- TransposeEmitter.cpp - Shared-memory tiled transposes --------------===//
//
// Part of idxmap. A transpose of the minor dimension (normalized by
// classifyTranspose to input dims D[0..R-1] and a permutation) is done in
// 32x32 tiles of the two dims that swap: the input's minor dim M = R-1 and
// the dim A that becomes the output's minor dim. Every other normalized dim
// is one block coordinate. 128 threads = 32 lanes x 4 rows; each thread
// walks 8 rows of the tile.
//
//   read   (lanes along M):  tile[a][m] = prologue(operand at (.., a, .., m))
//   bar.sync
//   write  (lanes along A):  out(.., m, .., a) = epilogue(tile[a][m])
//
// The tile is [32][33]: the +1 pad makes the column reads of the write phase
// conflict-free for 4-byte elements, and for 2-byte ones too (row r starts
// at byte 66 r: lanes 2k and 2k+1 land in banks k and k+16), so narrower
// types are padded, not swizzled. Ragged edges (D[M] or D[A] not a multiple
// of 32) are predicated per row from the domain of the thread maps.
//
// The thread maps are the analysis' (transposeMapping in Coalescing.cpp):
// `(th_x, bl_x)[it] -> index`, built here once per accessed shape and
// lowered with emitIndexExpr; the predicates come from their constraints
// (emitDomainCheck). The prologue is the hero operand computed with the
// FusedElementEmitter at the read index; the epilogue is each root computed
// at the write index with the transpose's value overridden by the tile
// element. Roots that do not go through the transpose (side outputs with the
// operand's element count) are written in the read phase.
//
// Fusions whose epilogue does not read the transpose one-to-one (e.g. a
// broadcast of it) fall back to the loop emitter.
//
//===----------------------------------------------------------------------===//
#include "Emitters.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "KernelBuilder.h"

#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

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

constexpr int64_t Tile = 32, Rows = 4, Threads = Tile * Rows,
                  Iters = Tile / Rows, Pitch = Tile + 1;

int64_t ceilDiv(int64_t A, int64_t B) { return (A + B - 1) / B; }

/// Physical offset of logical \p Index in \p S.
llvm::Value *physicalOffset(llvm::IRBuilder<> &B, const Shape &S,
                            llvm::ArrayRef<llvm::Value *> Index,
                            llvm::Type *IndexTy) {
  std::vector<int64_t> Strides(S.rank(), 1);
  int64_t Stride = 1;
  for (int64_t D : S.layoutOrDefault()) {
    Strides[D] = Stride;
    Stride *= S.Dims[D];
  }
  llvm::Value *Off = llvm::ConstantInt::get(IndexTy, 0);
  for (int64_t D = 0; D < S.rank(); ++D) {
    if (S.Dims[D] == 1)
      continue;
    llvm::Value *T =
        Strides[D] == 1
            ? Index[D]
            : B.CreateMul(Index[D], llvm::ConstantInt::get(IndexTy, Strides[D]),
                          "", true, true);
    Off = B.CreateAdd(Off, T, "", true, true);
  }
  return Off;
}

/// Row-major logical index of \p Dims for the linear offset \p Lin.
std::vector<Expr> delinearize(Context &Ctx, Expr Lin,
                              const std::vector<int64_t> &Dims) {
  std::vector<Expr> Res(Dims.size(), Ctx.constant(0));
  int64_t Stride = 1;
  for (size_t K = Dims.size(); K-- > 0;) {
    if (Dims[K] == 1)
      continue;
    Expr E = Stride == 1 ? Lin : Lin.floorDiv(Stride);
    Res[K] = K == 0 ? E : E % Dims[K];
    Stride *= Dims[K];
  }
  return Res;
}

/// True when every path from \p I to \p Hero reads the hero one-to-one in
/// logical row-major order (elementwise ops, copies, reshapes, bitcasts
/// between default layouts), so that the root element at linear offset L
/// needs exactly the transpose's element at L.
bool readsHeroOneToOne(const HloInstruction *I, const HloInstruction *Hero,
                       std::map<const HloInstruction *, bool> &Reaches) {
  std::function<bool(const HloInstruction *)> Reach =
      [&](const HloInstruction *X) {
        auto It = Reaches.find(X);
        if (It != Reaches.end())
          return It->second;
        bool R = X == Hero;
        for (const HloInstruction *O : X->operands())
          R = Reach(O) || R;
        return Reaches[X] = R;
      };
  std::function<bool(const HloInstruction *)> Valid =
      [&](const HloInstruction *X) {
        if (X == Hero)
          return true;
        for (const HloInstruction *O : X->operands()) {
          if (!Reach(O))
            continue;
          HloOpcode Op = X->opcode();
          bool Allowed =
              isElementwise(Op) || Op == HloOpcode::Copy ||
              Op == HloOpcode::Reshape ||
              (Op == HloOpcode::Bitcast && X->shape().hasDefaultLayout() &&
               O->shape().hasDefaultLayout());
          if (!Allowed || !X->shape().isArray() || !O->shape().isArray() ||
              X->shape().numElements() != Hero->shape().numElements() ||
              O->shape().numElements() != Hero->shape().numElements() ||
              !Valid(O))
            return false;
        }
        return true;
      };
  return Reach(I) && Valid(I);
}

/// A map `(th_x, bl_x)[it] -> Results` with the tile constraints.
IndexingMap tileMap(Context &Ctx, int64_t Blocks, std::vector<Expr> Results,
                    const std::vector<Constraint> &Cs) {
  IndexingMap Map(Ctx, {{"th_x", {0, Threads - 1}}, {"bl_x", {0, Blocks - 1}}},
                  {{"it", {0, Iters - 1}}}, {}, std::move(Results), Cs);
  simplify(Map);
  return Map;
}

/// Emits the results of \p Map at (Th, Bl)[It].
std::vector<llvm::Value *> emitResults(llvm::IRBuilder<> &B,
                                       const IndexingMap &Map,
                                       llvm::Value *Th, llvm::Value *Bl,
                                       llvm::Value *It, llvm::Type *IndexTy) {
  RangeEvaluator RE(Map);
  std::vector<llvm::Value *> Out;
  for (Expr E : Map.results())
    Out.push_back(emitIndexExpr(B, E, {Th, Bl}, {It}, RE, IndexTy));
  return Out;
}

} // namespace

Expected<KernelInfo> emitTransposeKernel(llvm::Module &M,
                                         const HloInstruction &F,
                                         const FusionAnalysis &A,
                                         const MathOptions &Math) {
  const HloComputation &C = *A.Computation;
  const HloInstruction *Hero = nullptr;
  for (const HloInstruction *H : A.Heroes)
    if (H->opcode() == HloOpcode::Transpose)
      Hero = H;
  assert(Hero && A.Transpose && "transpose emitter without a transpose hero");
  const HloInstruction *HeroOp = Hero->operand(0);
  const int64_t NIn = HeroOp->shape().numElements();

  // Which roots are written where; anything else goes to the loop emitter.
  std::vector<size_t> ReadRoots, WriteRoots;
  bool Supported = true;
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    const HloInstruction *Root = A.Roots[R];
    std::map<const HloInstruction *, bool> Reaches;
    if (!Root->shape().isArray()) {
      Supported = false;
    } else if (A.Heroes[R] == Hero) {
      if (readsHeroOneToOne(Root, Hero, Reaches))
        WriteRoots.push_back(R);
      else
        Supported = false;
    } else if (Root->shape().numElements() == NIn) {
      ReadRoots.push_back(R);
    } else {
      Supported = false;
    }
  }
  if (!Supported || WriteRoots.empty()) {
    FusionAnalysis L = A;
    L.Kind = EmitterKind::Loop;
    L.Transpose.reset();
    L.Heroes = A.Roots;
    return emitLoopKernel(M, F, L, Math);
  }

  // The tiling of the normalized dims (as transposeMapping in the analysis).
  const TransposeInfo &TI = *A.Transpose;
  const int64_t R = int64_t(TI.Dims.size()), Mi = R - 1,
                Aa = TI.Permutation.back();
  std::vector<int64_t> TileCounts;
  for (int64_t D = 0; D < R; ++D)
    TileCounts.push_back(D == Mi || D == Aa ? ceilDiv(TI.Dims[D], Tile)
                                            : TI.Dims[D]);
  int64_t Blocks = 1;
  for (int64_t T : TileCounts)
    Blocks *= T;
  if (Blocks > (int64_t(1) << 31) - 1)
    return Diagnostic{{"<emit>", 1, 1},
                      "fusion '" + F.name() + "': too many transpose tiles",
                      ""};

  Context Ctx;
  Expr Th = Ctx.dim(0), Bl = Ctx.dim(1), It = Ctx.symbol(0);
  Expr Lane = Th % Tile, Row = Th.floorDiv(Tile) + It * Rows;
  std::vector<Expr> TileOf(R);
  int64_t Stride = 1;
  for (int64_t D = R; D-- > 0;) {
    Expr T = Stride == 1 ? Bl : Bl.floorDiv(Stride);
    TileOf[D] = D == 0 ? T : T % TileCounts[D];
    Stride *= TileCounts[D];
  }
  // Normalized input index read (lanes along M) and written (lanes along A).
  std::vector<Expr> ReadIdx(R), WriteIdx(R);
  std::vector<Constraint> Cs;
  for (int64_t D = 0; D < R; ++D) {
    ReadIdx[D] = WriteIdx[D] = TileOf[D];
    if (D == Mi) {
      ReadIdx[D] = TileOf[D] * Tile + Lane;
      WriteIdx[D] = TileOf[D] * Tile + Row;
    } else if (D == Aa) {
      ReadIdx[D] = TileOf[D] * Tile + Row;
      WriteIdx[D] = TileOf[D] * Tile + Lane;
    }
  }
  // One set of constraints serves both phases: bounds of M and A as read
  // (lane for M, row for A) and as written (row for M, lane for A).
  std::vector<Constraint> ReadCs, WriteCs;
  for (int64_t D : {Mi, Aa})
    if (TI.Dims[D] % Tile != 0) {
      ReadCs.push_back({ReadIdx[D], {0, TI.Dims[D] - 1}});
      WriteCs.push_back({WriteIdx[D], {0, TI.Dims[D] - 1}});
    }
  Expr LinIn = Ctx.constant(0), LinOut = Ctx.constant(0);
  for (int64_t D = 0; D < R; ++D)
    LinIn = LinIn * TI.Dims[D] + ReadIdx[D];
  for (int64_t O = 0; O < R; ++O)
    LinOut = LinOut * TI.Dims[TI.Permutation[O]] +
             WriteIdx[TI.Permutation[O]];

  IndexingMap ReadPred = tileMap(Ctx, Blocks, ReadIdx, ReadCs);
  IndexingMap WritePred = tileMap(Ctx, Blocks, WriteIdx, WriteCs);
  IndexingMap ReadOp =
      tileMap(Ctx, Blocks, delinearize(Ctx, LinIn, HeroOp->shape().Dims),
              ReadCs);
  std::vector<IndexingMap> ReadRootMaps, WriteRootMaps, WriteLinMaps;
  for (size_t K : ReadRoots)
    ReadRootMaps.push_back(tileMap(
        Ctx, Blocks, delinearize(Ctx, LinIn, A.Roots[K]->shape().Dims),
        ReadCs));
  for (size_t K : WriteRoots)
    WriteRootMaps.push_back(tileMap(
        Ctx, Blocks, delinearize(Ctx, LinOut, A.Roots[K]->shape().Dims),
        WriteCs));
  IndexingMap OutLin = tileMap(Ctx, Blocks, {LinOut}, WriteCs);
  IndexingMap InLin = tileMap(Ctx, Blocks, {LinIn}, ReadCs);

  // 32-bit index arithmetic when every offset fits.
  int64_t Largest = std::max(NIn, Blocks * Threads);
  for (const HloInstruction *P : C.parameters())
    Largest = std::max(Largest, P->shape().numElements());
  for (const HloInstruction *Root : A.Roots)
    Largest = std::max(Largest, Root->shape().numElements());
  llvm::LLVMContext &LC = M.getContext();
  llvm::Type *I32 = llvm::Type::getInt32Ty(LC);
  bool Narrow = Largest * 16 < (int64_t(1) << 31);
  for (const IndexingMap *Mp : {&ReadPred, &WritePred, &ReadOp, &OutLin,
                                &InLin}) {
    RangeEvaluator RE(*Mp);
    Narrow = Narrow && mapFitsInI32(*Mp, RE);
  }
  llvm::Type *IndexTy = Narrow ? I32 : llvm::Type::getInt64Ty(LC);

  PrimitiveType TilePT = Hero->shape().Type;
  llvm::Type *TileElemTy = storageType(LC, TilePT);
  int64_t TileBytes = byteWidth(TilePT);

  KernelInfo Info;
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = "transpose";
  Info.Grid[0] = unsigned(Blocks);
  Info.Block[0] = unsigned(Threads);
  Info.SharedBytes = unsigned(Tile * Pitch * TileBytes);
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
  llvm::GlobalVariable *TileVar = createSharedArray(
      M, TileElemTy, uint64_t(Tile * Pitch), Info.Name + "_tile",
      unsigned(std::max<int64_t>(TileBytes, 4)));
  auto *TileTy = llvm::ArrayType::get(TileElemTy, uint64_t(Tile * Pitch));

  llvm::IRBuilder<> B(&K->getEntryBlock());
  llvm::Value *ThV = B.CreateZExtOrTrunc(
      emitThreadId(B, GpuDim::X, unsigned(Threads)), IndexTy);
  llvm::Value *BlV = B.CreateZExtOrTrunc(
      emitBlockId(B, GpuDim::X, unsigned(Blocks)), IndexTy);
  // Tile coordinates of this thread (32-bit: the tile is small).
  llvm::Value *Th32 = B.CreateZExtOrTrunc(ThV, I32);
  llvm::Value *LaneV = B.CreateAnd(Th32, B.getInt32(Tile - 1));
  llvm::Value *RowV = B.CreateLShr(Th32, B.getInt32(5));

  auto TilePtr = [&](llvm::Value *Off) {
    return B.CreateInBoundsGEP(TileTy, TileVar, {B.getInt32(0), Off});
  };

  ParameterLoader Loader = [&](const HloInstruction &P,
                               llvm::ArrayRef<llvm::Value *> Index)
      -> llvm::Value * {
    const Shape &S = P.shape();
    llvm::Type *ST = storageType(LC, S.Type);
    llvm::Value *Off = physicalOffset(B, S, Index, IndexTy);
    llvm::Value *Ptr =
        B.CreateInBoundsGEP(ST, K->getArg(P.parameterNumber()), Off);
    return loadConvert(
        B, B.CreateAlignedLoad(ST, Ptr, llvm::Align(byteWidth(S.Type))),
        S.Type);
  };
  FusedElementEmitter FE(B, Ctx, C, Loader, Math, IndexTy);

  auto StoreRoot = [&](size_t RootNo, llvm::Value *V,
                       llvm::ArrayRef<llvm::Value *> Idx,
                       llvm::Value *DefaultLin) {
    const Shape &S = A.Roots[RootNo]->shape();
    llvm::Type *ST = storageType(LC, S.Type);
    llvm::Value *Off = S.hasDefaultLayout() ? DefaultLin
                                            : physicalOffset(B, S, Idx, IndexTy);
    llvm::Value *Ptr = B.CreateInBoundsGEP(
        ST, K->getArg(C.parameterCount() + RootNo), Off);
    B.CreateAlignedStore(storeConvert(B, V, S.Type), Ptr,
                         llvm::Align(byteWidth(S.Type)));
  };

  // Runs Body for iteration It under the map's domain predicate.
  auto Predicated = [&](const IndexingMap &Pred, int64_t ItNo,
                        const std::function<void(llvm::Value *)> &Body) {
    llvm::Value *ItV = llvm::ConstantInt::get(IndexTy, ItNo);
    DomainCheckOptions O;
    O.DimValueRanges = {{0, Threads - 1}, {0, Blocks - 1}};
    O.SymValueRanges = {{ItNo, ItNo}};
    llvm::Value *Cond = emitDomainCheck(B, Pred, {ThV, BlV}, {ItV}, IndexTy, O);
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

  // Read phase: lanes along the input's minor dim.
  for (int64_t ItNo = 0; ItNo < Iters; ++ItNo)
    Predicated(ReadPred, ItNo, [&](llvm::Value *ItV) {
      std::vector<llvm::Value *> Idx =
          emitResults(B, ReadOp, ThV, BlV, ItV, IndexTy);
      llvm::Value *V = FE.valueAt(*HeroOp, Idx);
      llvm::Value *Off = B.CreateAdd(
          B.CreateMul(B.CreateAdd(RowV, B.getInt32(ItNo * Rows)),
                      B.getInt32(Pitch)),
          LaneV);
      B.CreateAlignedStore(storeConvert(B, V, TilePT), TilePtr(Off),
                           llvm::Align(TileBytes));
      if (ReadRoots.empty())
        return;
      llvm::Value *Lin = emitResults(B, InLin, ThV, BlV, ItV, IndexTy)[0];
      for (size_t K2 = 0; K2 < ReadRoots.size(); ++K2) {
        std::vector<llvm::Value *> RIdx =
            emitResults(B, ReadRootMaps[K2], ThV, BlV, ItV, IndexTy);
        StoreRoot(ReadRoots[K2], FE.valueAt(*A.Roots[ReadRoots[K2]], RIdx),
                  RIdx, Lin);
      }
    });
  FE.clearCache();
  emitBarrier(B);

  // Write phase: lanes along the output's minor dim, reading a tile column.
  llvm::Value *Current = nullptr;
  FE.setOverride(*Hero, [&](llvm::ArrayRef<llvm::Value *>) { return Current; });
  for (int64_t ItNo = 0; ItNo < Iters; ++ItNo)
    Predicated(WritePred, ItNo, [&](llvm::Value *ItV) {
      llvm::Value *Off = B.CreateAdd(
          B.CreateMul(LaneV, B.getInt32(Pitch)),
          B.CreateAdd(RowV, B.getInt32(ItNo * Rows)));
      Current = loadConvert(
          B, B.CreateAlignedLoad(TileElemTy, TilePtr(Off),
                                 llvm::Align(TileBytes)),
          TilePT);
      llvm::Value *Lin = emitResults(B, OutLin, ThV, BlV, ItV, IndexTy)[0];
      for (size_t K2 = 0; K2 < WriteRoots.size(); ++K2) {
        std::vector<llvm::Value *> RIdx =
            emitResults(B, WriteRootMaps[K2], ThV, BlV, ItV, IndexTy);
        StoreRoot(WriteRoots[K2], FE.valueAt(*A.Roots[WriteRoots[K2]], RIdx),
                  RIdx, Lin);
      }
      // Values computed from this row's tile element must not be reused.
      FE.clearCache();
    });
  FE.setOverride(*Hero, nullptr);
  B.CreateRetVoid();
  return Info;
}

} // namespace codegen
} // namespace idxmap
