//===- TransposeKernel.h - The transpose emitter's kernel state -*- C++ -*-===//
//
// Part of idxmap. Private to the transpose emitter: the kernel under
// construction, shared by TransposeEmitter.cpp (the scheme, set-up, launch,
// the tile's addressing, root stores) and TransposePhases.cpp (the reading
// phase into the shared tile and the writing phase out of it).
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_EMITTERS_TRANSPOSEKERNEL_H
#define IDXMAP_CODEGEN_EMITTERS_TRANSPOSEKERNEL_H

#include "EmitterSupport.h"
#include "Emitters.h"
#include "FusedElementEmitter.h"

#include "llvm/IR/GlobalVariable.h"

#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace idxmap {
namespace codegen {
namespace transpose {

/// Rows (and groups of columns) of a tile.
constexpr int64_t Tile = 32;

/// One transpose kernel: the plan's tiling, the maps of each access, and
/// the IR built so far.
class TransposeKernel {
public:
  TransposeKernel(llvm::Module &M, const HloInstruction &F,
                  const FusionAnalysis &A, const KernelPlan &Plan, Context &Ctx,
                  const MathOptions &Math);

  Expected<KernelInfo> run();

private:
  // Set-up (TransposeEmitter.cpp).
  /// Which parameters the reading phase loads as vectors, and which write
  /// roots need a per-element index.
  void classifyAccesses();
  /// The kernel, its launch, the shared tile, and the thread's coordinates.
  std::optional<Diagnostic> createFunction();
  /// Pointer to group slot (\p TileRow, \p Group) of a scalar tile, and to
  /// element (\p TileRow, \p Col) of a vector tile, in sub-tile \p Sub (an
  /// i32; null: the first).
  llvm::Value *groupPtr(llvm::Value *TileRow, llvm::Value *Group,
                        llvm::Value *Sub = nullptr);
  llvm::Value *elemPtr(llvm::Value *TileRow, llvm::Value *Col,
                       llvm::Value *Sub = nullptr);
  /// The element offset of sub-tile \p Sub; null for the first.
  llvm::Value *subTileBase(llvm::Value *Sub);
  /// Loads parameters: from the vector groups of the reading phase, or
  /// element by element.
  ParameterLoader loader();
  /// Stores root \p RootNo's element: at \p Ptr for the default layout,
  /// else at the physical offset of \p Idx.
  void storeRoot(size_t RootNo, llvm::Value *Val,
                 llvm::ArrayRef<llvm::Value *> Idx, llvm::Value *Ptr);
  /// Pointer to element \p Lin (+ \p Step) of root \p RootNo in the
  /// default layout.
  llvm::Value *rootPtr(size_t RootNo, llvm::Value *Lin, int64_t Step = 0);
  /// The results of \p Map at (th, bl)[\p Syms].
  std::vector<llvm::Value *> emitResults(const IndexingMap &Map,
                                         llvm::ArrayRef<llvm::Value *> Syms);
  llvm::Value *indexConstant(int64_t V) {
    return llvm::ConstantInt::get(IndexTy, V);
  }

  // The phases (TransposePhases.cpp).
  /// Runs \p Body for iteration \p ItV under \p Pred's domain predicate
  /// (which does not depend on the element j of a group).
  void predicated(const IndexingMap &Pred, llvm::Value *ItV, Interval ItRange,
                  const std::function<void(llvm::Value *)> &Body);
  /// As predicated, for a body that computes a value: that value where the
  /// iteration is in the domain, \p Else where it is not.
  llvm::Value *
  predicatedValue(const IndexingMap &Pred, llvm::Value *ItV, Interval ItRange,
                  const std::function<llvm::Value *(llvm::Value *)> &Body,
                  llvm::Value *Else);
  /// The \p Count iterations of a phase, unrolled, each under \p Pred.
  void iterate(const IndexingMap &Pred, int64_t Count,
               const std::function<void(llvm::Value *)> &Body);
  /// The read phase's linear input offset of iteration 0, and each
  /// iteration's constant step from it, when there are such steps.
  void linearInputSteps();
  /// Reads the tile: the prologue at the hero operand's index, the roots
  /// written at it.
  void readPhase();
  /// Iteration \p ItNo's group of prologue values (its read roots stored).
  llvm::Value *readIteration(int64_t ItNo);
  /// Stores iteration \p ItNo's group into the tile.
  void storeGroup(int64_t ItNo, llvm::Value *Group);
  /// The index of write root \p K2's element \p Jn of iteration \p ItV.
  std::vector<llvm::Value *> rootIndex(size_t K2, llvm::Value *ItV, int64_t Jn);
  /// Writes the tile through the epilogue, the hero's value overridden by
  /// the tile's element: vector tiles (32 x 32 with ReadVec or WriteVec >
  /// 1) and scalar tiles.
  void writePhase();
  void writeVectorTiles();
  void writeScalarTiles();

  llvm::Module &M;
  llvm::LLVMContext &LC;
  const HloInstruction &F;
  const FusionAnalysis &A;
  const HloComputation &C;
  const KernelPlan &Plan;
  Context &Ctx;
  MathOptions Math;
  llvm::IRBuilder<> B;

  // The plan: the hero, its normalized dims, the tiling.
  const HloInstruction *Hero = nullptr, *HeroOp = nullptr;
  const TransposeInfo &TI;
  const TransposeTiling &Tiling;
  /// Roots written at the hero operand's index, and through the tile.
  const std::vector<size_t> &ReadRoots, &WriteRoots;
  PrimitiveType TilePT;
  int64_t TileBytes, V, Blocks, Threads, Iters, Rows, Tm;
  /// Read groups: RG elements of M per lane and load (V, or ReadVec of a 32
  /// x 32 tile). Write vectors: WV elements of P per lane and store.
  int64_t RV, WV, RG, WIters;
  /// Sub-tiles per block (TransposeTiling::subTiles): a phase's iteration
  /// it is iteration it mod N of sub-tile it / N (N = Iters or WIters).
  int64_t Subs = 1;
  bool VecTile;

  // The maps of the accesses (TransposePlan's).
  const IndexingMap &ReadPred, &WritePred, &ReadOp, &OutLin, &InLin;
  const std::vector<IndexingMap> &ReadRootMaps, &WriteRootMaps;
  /// Output offset step between the elements of a group.
  int64_t OutStrideM = 1;
  /// Parameters loaded at the linear input offset, a lane's group at once
  /// (LinearLoads).
  std::vector<const HloInstruction *> LinearParams;
  bool LinearLoads = false;
  std::vector<bool> WriteNeedsIndex;

  // The IR.
  KernelInfo Info;
  llvm::Function *K = nullptr;
  llvm::Type *I32 = nullptr, *IndexTy = nullptr;
  /// The ranges of the maps evaluated at every unrolled point.
  RangeCache MapRanges;
  llvm::Type *TileElemTy = nullptr, *GroupTy = nullptr, *TileTy = nullptr;
  llvm::Align GroupAlign;
  llvm::GlobalVariable *TileVar = nullptr;
  llvm::Value *ThV = nullptr, *BlV = nullptr, *LaneV = nullptr,
              *WarpV = nullptr;
  std::optional<FusedElementEmitter> FE;
  /// Vector-load mode: parameter -> the loaded group of this iteration.
  std::map<const HloInstruction *, llvm::Value *> Groups;
  int64_t CurJ = 0;
  bool FromGroups = false;
  /// linearInputSteps' answer (empty steps: none).
  std::vector<int64_t> InLinSteps;
  llvm::Value *InLinBase = nullptr;
  /// The tile element the epilogue reads as the hero's value.
  llvm::Value *Current = nullptr;
};

} // namespace transpose
} // namespace codegen
} // namespace idxmap

#endif
