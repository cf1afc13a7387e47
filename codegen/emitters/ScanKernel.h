//===- ScanKernel.h - The state of one scan kernel --------------*- C++ -*-===//
//
// Part of idxmap. The scan emitter's kernels (ScanMode in KernelPlan.h)
// share their parameters, the line's init, the combiner and the stores of
// the roots; ScanEmitter.cpp builds the line-per-thread and warp-per-row
// kernels, ScanTiles.cpp the tiled kernel and its decoupled look-back.
// Private to codegen/emitters.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_EMITTERS_SCANKERNEL_H
#define IDXMAP_CODEGEN_EMITTERS_SCANKERNEL_H

#include "EmitterSupport.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "GpuBuilder.h"

#include "idxmap/Codegen.h"
#include "idxmap/KernelPlan.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace idxmap {
namespace codegen {

/// The shuffles the scan kernels use.
enum class Shuffle {
  /// Lane l gets lane l - Delta's value; lanes below Delta their own.
  Up,
  /// Lane l gets lane l + Delta's value; lanes past 31 - Delta their own.
  Down,
  /// Every lane gets lane Delta's value.
  Index,
};

/// The states of a look-back descriptor.
enum DescriptorState : unsigned { DescInvalid = 0, DescAggregate, DescPrefix };

/// `shfl.sync.{up,down,idx}` of \p V across the full warp, a value of any
/// type up to 64 bits moved as 32-bit words. Example: `scanShuffle(B, X,
/// Shuffle::Up, 1)` is the previous lane's X (lane 0 keeps its own).
llvm::Value *scanShuffle(llvm::IRBuilderBase &B, llvm::Value *V, Shuffle Kind,
                         unsigned Delta);

/// Where a scan reads its tile's items from, one item at a time: the item
/// (Run, Lane: the vector's element) and the loader FusedElementEmitter
/// calls for it (stagedRun). StagedLoader and the pipeline's stage loader
/// (ScanPipelined.cpp) are the two.
class ItemSource {
public:
  virtual ~ItemSource() = default;
  /// The item whose values are being computed.
  int64_t Run = 0, Lane = 0;
  virtual std::function<llvm::Value *(const HloInstruction &,
                                      llvm::ArrayRef<llvm::Value *>)>
  loader() = 0;
};

/// The parameter reads of a tile's items through shared memory, for a
/// scan that reads its tiles through shared memory (ScanPlan::StageBytes;
/// ScanSharedTile.cpp).
/// A streamed parameter p (ScanInfo::streamedParameters; the others are
/// read from global memory) has a slot per item (run, vec): the W
/// elements of its vector (W: p's proven load width), placed by (p, run,
/// vec / W) alone, the threads' slots side by side (consecutive threads,
/// consecutive addresses). Issue mode turns each read into a cp.async of
/// those bytes into the slot and returns poison (nothing uses it: LLVM
/// drops what the prologue computed from it); Read mode loads the slot.
/// A thread reads only the slots it copied, so waiting for its own copies
/// (cp.async.wait_all) is enough, with no barrier.
///
/// Example: f32[2^28] in tiles of 256 threads x 16 runs of 4: the vector
/// of run 3 of thread 5 is at byte (3 * 256 + 5) * 16 of the stage.
class StagedLoader : public ItemSource {
public:
  enum class Mode { Issue, Read };
  StagedLoader(llvm::IRBuilder<> &B, llvm::Function &K, const ScanInfo &S,
               const std::vector<int64_t> &Widths, int64_t Runs, int64_t Vector,
               int64_t Threads, llvm::Type *IndexTy);
  /// The stage's bytes per block.
  int64_t stageBytes() const { return PerThread * Threads; }
  /// Starts the items of thread \p Th in \p M mode.
  void begin(Mode M, llvm::Value *Th);
  /// The loader to give FusedElementEmitter (refers to this object).
  std::function<llvm::Value *(const HloInstruction &,
                              llvm::ArrayRef<llvm::Value *>)>
  loader() override;

private:
  /// The slot of parameter \p P for the current item, as a shared pointer.
  llvm::Value *slot(const HloInstruction &P);
  llvm::IRBuilder<> &B;
  llvm::Function &K;
  llvm::Type *IndexTy;
  const int64_t Vector, Threads;
  int64_t PerThread = 0;
  /// Per staged parameter: its load width and where its slots start (bytes
  /// of one thread's slots before them).
  std::map<const HloInstruction *, std::pair<int64_t, int64_t>> Layout;
  llvm::GlobalVariable *Stage = nullptr;
  Mode Now = Mode::Read;
  llvm::Value *Th = nullptr;
  std::map<std::pair<const HloInstruction *, int64_t>, llvm::Value *> Vectors;
};

/// One scan kernel under construction.
///
/// Example:
/// \code
///   ScanKernel SK(M, F, A, P, Ctx, Math);
///   Expected<KernelInfo> Info = SK.emit(); // the plan's mode
/// \endcode
class ScanKernel {
public:
  ScanKernel(llvm::Module &M, const HloInstruction &F, const FusionAnalysis &A,
             const KernelPlan &P, Context &Ctx, const MathOptions &Math);
  Expected<KernelInfo> emit();

private:
  /// The kernel and its parameters (the workspace last, for look-back).
  std::optional<Diagnostic> createFunction();
  void emitLines();
  void emitTiles();
  /// What the steps of one tile share (ScanTiles.cpp): the thread and
  /// tile ids, the lane, warp and segment of the line, whether the tile's
  /// loads and stores are guarded (Guard, null when no tile needs it),
  /// the line's init, the items (X), their scans within the warp (Local),
  /// the warp's total (Carry), the totals of the warps before (WarpPre),
  /// the tile's aggregate (Agg). Column tiles (ScanColumns.cpp): the
  /// thread's column and row group (Tx, Ty), its columns' totals (Tot)
  /// and what comes before its run in each of them (Before).
  struct TileState {
    llvm::Value *Th = nullptr, *Tile = nullptr, *Lane = nullptr,
                *Warp = nullptr, *Seg = nullptr, *LastSeg = nullptr,
                *Guard = nullptr, *Init = nullptr;
    std::vector<llvm::Value *> X, Local;
    llvm::Value *Carry = nullptr, *WarpPre = nullptr, *Agg = nullptr;
    llvm::Value *Tx = nullptr, *Ty = nullptr;
    std::vector<llvm::Value *> Tot, Before;
    /// The items' indices (itemIndex): the main map with the thread and
    /// tile ids invariant, their part of every index emitted once at the
    /// tile's start, so that an item adds its own constant.
    std::shared_ptr<ExprEmitter> Items;
    /// Row tiles with a guard: the position in the line of the thread's
    /// first item (itemValid adds the item's offset), and the range of
    /// those positions over the block's threads.
    llvm::Value *PosBase = nullptr;
    Interval PosSpan;
  };
  void emitTile(llvm::Value *Th, llvm::Value *Tile);
  /// ScanPlan::StageBytes (ScanSharedTile.cpp): the tile's items copied
  /// into shared memory, read twice a run at a time (the aggregate, then
  /// the scan and stores after the look-back).
  void emitSharedTile(llvm::Value *Th, llvm::Value *Tile);
  /// The warp's total of run \p Run of the items \p Src reads (in every
  /// lane), or with \p Before non-null: run \p Run scanned after \p Before
  /// (the warp's runs before it folded in) and stored; returns the run's
  /// total.
  llvm::Value *stagedRun(TileState &St, ItemSource &Src, int64_t Run,
                         llvm::Value *Before);
  /// ScanPlan::Stages (ScanPipelined.cpp): the warp-specialized pipeline,
  /// its squads' loops over the stages, and the look-back warp's fold of
  /// the aggregates since its block's previous tile.
  struct Pipe;
  void emitPipelined();
  void pipeLoad(const Pipe &Pp);
  void pipeReduce(const Pipe &Pp);
  void pipeChain(const Pipe &Pp);
  void pipeScan(const Pipe &Pp);
  llvm::Value *pipeLookBack(llvm::Value *Lane, llvm::Value *Tile,
                            llvm::Value *Bound, llvm::Value *BoundValue);
  TileState beginTile(llvm::Value *Th, llvm::Value *Tile);
  /// ScanMode::ColumnTiles (ScanColumns.cpp): one tile, the serial scan
  /// of each column's run, the row groups' totals, the tile's prefix per
  /// column.
  void emitColumnTile(llvm::Value *Th, llvm::Value *Tile);
  void scanColumnRuns(TileState &St);
  void foldRowGroups(TileState &St, const SharedSlots &Parts);
  void columnPrefixes(TileState &St, const SharedSlots &Parts);
  /// ScanMode::SegmentedTiles (ScanSegments.cpp): a (head, value) pair
  /// of the segmented scan.
  struct Pair {
    llvm::Value *Head = nullptr, *Value = nullptr;
  };
  void emitSegmentedTile(llvm::Value *Th, llvm::Value *Tile);
  /// The items as pairs: heads at each row's start, the row's init folded
  /// in there.
  std::vector<Pair> headsOf(TileState &St);
  /// St.Local: every item's inclusive value within its row.
  void scanSegments(TileState &St);
  Pair combinePair(const Pair &Earlier, const Pair &Later);
  Pair shufflePair(const Pair &P, Shuffle Kind, unsigned Delta);
  /// Column \p Col of the tile: its init (the line's carry at its start).
  llvm::Value *columnInit(TileState &St, llvm::Value *Col);
  /// Column \p Col's inclusive prefix of the tiles before St.Tile, walked
  /// back tile by tile by one thread.
  llvm::Value *lookBackColumn(TileState &St, llvm::Value *Col);
  /// The descriptor of column \p Col of tile \p Tile.
  llvm::Value *descriptorOf(llvm::Value *Tile, llvm::Value *Col);
  /// Waits for descriptor \p Desc's inclusive prefix, then clears it.
  void clearWhenPrefix(llvm::Value *Desc);
  /// Whether the line has item (Run, Elem) of the thread, and its index.
  llvm::Value *itemValid(const TileState &St, int64_t Run, int64_t Elem);
  /// Whether a guarded tile has or lacks each vector of items whole (a
  /// vector never straddles the end of the elements), so that a guard per
  /// vector keeps its vector load and store: row tiles of a line whose
  /// length is a multiple of the vector; segmented tiles whose length and
  /// the rows' total are.
  bool guardsWholeVectors() const;
  /// Item (Run, Elem)'s index; \p Shifted (a shifted last tile,
  /// ScanPlan::LastTileShift): that many positions before the thread
  /// map's.
  std::vector<llvm::Value *> itemIndex(const TileState &St, int64_t Run,
                                       int64_t Elem, bool Shifted = false);
  /// Run \p Run's indices (itemIndex, \p Shifted or not) and values to
  /// store, item (run, vec) combined after \p Before[vec] (as it is where
  /// that is null), appended to \p Idx and \p Ys.
  void runOutputs(TileState &St, llvm::ArrayRef<llvm::Value *> Before,
                  int64_t Run, bool Shifted,
                  std::vector<std::vector<llvm::Value *>> &Idx,
                  std::vector<llvm::Value *> &Ys);
  /// Whether the shifted last tile keeps the full tile's vectors.
  bool shiftKeepsVectors() const;
  void loadItems(TileState &St, bool Guarded);
  void loadTile(TileState &St);
  void scanRuns(TileState &St);
  void foldWarps(TileState &St);
  /// The fold, in order, of the totals of the warps before \p Warp among
  /// the first \p N (\p Total(W) emits warp W's); with \p All, also the
  /// fold of all N.
  llvm::Value *warpsBefore(llvm::Value *Warp, int64_t N,
                           const std::function<llvm::Value *(int64_t)> &Total,
                           llvm::Value **All = nullptr);
  /// The combination of everything before the tile in its line.
  llvm::Value *tilePrefix(TileState &St);
  /// Stores the items, item (run, vec) combined after \p Before[vec]
  /// (as they are where that is null).
  void storeItems(TileState &St, llvm::ArrayRef<llvm::Value *> Before,
                  bool Guarded);
  /// storeItems' run \p Run of a shifted last tile: only the tile's own
  /// items.
  void storeShiftedRun(TileState &St, llvm::ArrayRef<llvm::Value *> Before,
                       int64_t Run);
  void storeTile(TileState &St, llvm::ArrayRef<llvm::Value *> Before);
  /// \p Body(false) for a whole tile and \p Body(true) for one that
  /// needs its items guarded (St.Guard: a ragged line's last tile, a
  /// partial group of columns), on two branches joined after: the two
  /// branches' last blocks (for phis at the join). Example:
  /// `onGuard(St, "store", ...)` makes blocks store.full, store.part,
  /// store.done.
  std::pair<llvm::BasicBlock *, llvm::BasicBlock *>
  onGuard(const TileState &St, const std::string &Stage,
          const std::function<void(bool Guarded)> &Body);
  /// The inclusive prefix of the tiles before \p Seg of the line whose
  /// first tile is \p LineFirst, by warp 0 (every lane gets it).
  llvm::Value *lookBack(llvm::Value *Lane, llvm::Value *LineFirst,
                        llvm::Value *Seg);
  /// Descriptor \p Desc (a tile's, or a tile's column's) gets \p V with
  /// \p Status.
  void publish(llvm::Value *Desc, unsigned Status, llvm::Value *V);
  /// The status (i32) and value of descriptor \p Desc, polled once.
  std::pair<llvm::Value *, llvm::Value *> poll(llvm::Value *Desc);
  void clearDescriptor(llvm::Value *Desc);
  /// Thread 0: the next tile's ticket from the workspace's counter.
  llvm::Value *takeTicket();
  /// Runs \p Body(Th, Tile) for every tile: a grid loop, or, with
  /// look-back, tiles taken in launch order from the workspace's counter
  /// (the last block to leave resets it).
  void emitTileLoop(
      const std::function<void(llvm::Value *Th, llvm::Value *Tile)> &Body);
  /// What the last block of a look-back kernel to leave clears: \p Words
  /// i64 words from \p First() (emitted in the last block only); with
  /// \p Fenced, each block orders its publishes before its exit count (a
  /// gpu-scope fence) and the last block its clears after every count.
  struct ExitClear {
    std::function<llvm::Value *()> First;
    int64_t Words = 0;
    bool Fenced = false;
  };
  /// What a look-back kernel's blocks do as they leave: the last resets
  /// the counters and clears \p C; then returns.
  void leaveTiles(llvm::Value *Th, const ExitClear &C);
  /// The segment of its line \p Tile is (0 when a line is one tile).
  llvm::Value *segmentOf(llvm::Value *Tile);
  /// Split descriptors: the aggregates' or the inclusive prefixes' value
  /// array (i64 words, one per tile).
  llvm::Value *valueSlots(bool Prefixes);
  /// Thread 0 of a tile past its line's first: waits for the predecessor's
  /// inclusive prefix, then clears its descriptor.
  void clearPredecessor(llvm::Value *Th, llvm::Value *Tile, llvm::Value *Seg);

  /// A variadic scan's values as one struct (one value: itself), and
  /// back.
  llvm::Value *pack(llvm::ArrayRef<llvm::Value *> Vs);
  std::vector<llvm::Value *> unpack(llvm::Value *V);
  /// The scanned operands' values at \p Idx, packed.
  llvm::Value *inputAt(FusedElementEmitter &E,
                       llvm::ArrayRef<llvm::Value *> Idx);
  /// Earlier op Later: reduce-window's to_apply(acc, x) (of every
  /// operand's value, for a variadic window), or the scan body's op of
  /// (x = parameter 0, carry = parameter 1).
  llvm::Value *combine(llvm::Value *Earlier, llvm::Value *Later);
  /// The inclusive scan of \p V across the warp (lane \p Lane): five
  /// shuffles up, each lane combining the value Off lanes below.
  llvm::Value *warpScan(llvm::Value *Lane, llvm::Value *V);
  /// The combiner's identity in the type the scan computes in.
  llvm::Constant *identity();
  /// An element of the scan's type in the type it computes in
  /// (ScanPlan::Accumulate32: f32).
  llvm::Value *widen(llvm::Value *V);
  /// The line's carry at its start (the init: a scalar, or the scan op's
  /// carry at the line's index), from the index \p First of any element
  /// of the line.
  llvm::Value *lineInit(llvm::ArrayRef<llvm::Value *> First);
  /// Stores every root at \p Idx, the hero's value there being \p V.
  void storeRoots(llvm::ArrayRef<llvm::Value *> Idx, llvm::Value *V);
  /// Stores every root at the \p Idx of a run's elements (Idx[0] its
  /// first), the hero's values \p Vs; roots with a proven vector width of
  /// the run's length take one vector store. With \p Guard, only the
  /// stores wait on it, all roots' in one branch: the values and addresses
  /// (which must be in bounds) are computed in the run's block, where the
  /// items share them.
  void storeRun(const std::vector<std::vector<llvm::Value *>> &Idx,
                llvm::ArrayRef<llvm::Value *> Vs, llvm::Value *Guard = nullptr);
  llvm::Value *idx(int64_t N) { return llvm::ConstantInt::get(IndexTy, N); }

  llvm::Module &M;
  const HloInstruction &F;
  const FusionAnalysis &A;
  const KernelPlan &P;
  Context &Ctx;
  const MathOptions &Math;
  const HloComputation &C;
  const ScanInfo &S;
  const ScanPlan &SP;
  llvm::LLVMContext &LC;
  KernelInfo Info;
  llvm::Function *K = nullptr;
  llvm::Value *Workspace = nullptr;
  llvm::Type *IndexTy = nullptr;
  std::unique_ptr<llvm::IRBuilder<>> BPtr;
  std::unique_ptr<LaneLoader> Lanes;
  std::unique_ptr<FusedElementEmitter> FE;
  /// The ranges of the maps the kernel evaluates at every item.
  RangeCache MapRanges;
  /// ScanPlan::StageBytes: the tile's items through shared memory.
  std::unique_ptr<StagedLoader> Staged;
};

} // namespace codegen
} // namespace idxmap

#endif
