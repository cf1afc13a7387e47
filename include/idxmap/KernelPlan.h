//===- idxmap/KernelPlan.h - One kernel's plan, before any IR ---*- C++ -*-===//
//
// Part of idxmap. Everything an emitter needs to know about a fusion's
// kernel besides the fusion itself: which emitter, the launch shape, the
// thread-to-element map of the main access, tile shapes, vector widths,
// unrolling, cache hints, and why each was chosen. Plans are made in
// analysis (analysis/fusion/plan/, one file per emitter kind) from the
// fusion's maps, the device model and the caller's tuning overrides; the
// emitters in codegen only build IR from them, and `idxmap analyze` prints
// them without compiling. No LLVM here.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_KERNELPLAN_H
#define IDXMAP_KERNELPLAN_H

#include "idxmap/Coalescing.h"
#include "idxmap/Context.h"
#include "idxmap/DeviceModel.h"
#include "idxmap/Diagnostics.h"
#include "idxmap/Fusion.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Tuning.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace idxmap {

/// One decision of a plan: the parameter, its value, and why (a measured
/// rule, a device limit, a tuning override, or the cost model's pick).
struct PlanChoice {
  std::string Name;
  int64_t Value = 0;
  std::string Reason;
};

/// The loop emitter's parameters besides its thread map (KernelPlan::Main,
/// over the largest output).
struct LoopPlan {
  /// Every output has one shape and layout: they share Main and its vector
  /// width; otherwise each is walked element by element by the thread ids.
  bool SharedMapping = true;
  /// Per parameter (by number): elements per vector load, the width the
  /// maps prove under Main when the outputs reach the parameter through one
  /// map (1: element by element).
  std::vector<int64_t> LoadWidth;
  /// Pads whose bounds test gives every lane of a run one answer (proven
  /// from the maps: laneUniformTest) and whose operands are cheap to
  /// compute at any index (parameters, constants, iotas, elementwise ops
  /// and plain reads): the emitter reads their operands at a clamped
  /// address and selects, so that a run's lanes share one vector load
  /// instead of a branch and a load each.
  std::vector<const HloInstruction *> SpeculatedPads;
  /// Concatenates whose operands are computed from shared values: an
  /// instruction every operand reaches at the same index is computed once
  /// for all (e.g. the four words of a threefry hash, one per operand), so
  /// computing every operand costs at most 5/4 of what the branches cost
  /// an element on average (each operand weighted by its extent). The
  /// emitter computes each operand, every parameter read guarded by its
  /// own bounds (read at offset 0 where out of them), and selects one:
  /// one copy of the shared work in the IR instead of one per branch.
  std::vector<const HloInstruction *> SpeculatedConcats;
};

/// The transpose emitter's parameters: the tiling, which roots are written
/// through the tile (the transpose read one-to-one) and which at the hero
/// operand's index, in the reading phase, and the map of every access.
struct TransposePlan {
  TransposeTiling Tiling;
  std::vector<size_t> ReadRoots, WriteRoots;
  /// The accesses `(th_x, bl_x)[it, j]` of the reading phase (it <
  /// Tiling.Iters, j < readGroup()) and of the writing phase (it <
  /// WriteIters, j < writeGroup()), the ragged edges as constraints: the
  /// normalized index read and written (the predicates), the hero operand's
  /// index, each read and write root's index, and the linear input and
  /// output offsets.
  IndexingMap ReadPred, WritePred, ReadOp, InLin, OutLin;
  std::vector<IndexingMap> ReadRootMaps, WriteRootMaps;
  /// The reading phase loads LinearParams at the linear input offset, as
  /// vectors of a lane's group (a scalar for a group of one): each is read
  /// at the hero operand's own index (an elementwise prologue over arrays
  /// of its dims, default layouts), and so are the read roots.
  bool LinearLoads = false;
  std::vector<const HloInstruction *> LinearParams;
  /// Per write root: it needs its element's index (a non-default layout,
  /// or an epilogue that reads more than the transpose).
  std::vector<bool> WriteNeedsIndex;
};

/// How the reduction emitter spreads a reduction over threads (the
/// parameters are in ReductionPlan below). Rows are read in the canonical
/// physical form `[D0, D1, D2]` (ReductionInfo); a full reduction is a
/// single row, or `[1, chunks, chunk]` when it is cut into chunks.
enum class ReductionMode {
  /// Rows share a warp: LanesPerRow (<= 32) lanes per row, RowsPerBlock
  /// rows per block, RowsPerThread rows per thread.
  RowGroup,
  /// A block of LanesPerRow (> 32) threads per row (or per chunk of a
  /// full reduction).
  BlockPerRow,
  /// A grid of blocks striding over one row (a full reduction).
  WholeInput,
  /// A column reduction `[K1, R, K2]`: ColLanes lanes along K2, Warps
  /// warps, Split chunks of R.
  Column,
};

/// The reduction emitter's parameters.
struct ReductionPlan {
  ReductionMode Mode = ReductionMode::RowGroup;
  /// The dims the kernel reads (after cutting a full reduction).
  std::array<int64_t, 3> Dims = {1, 1, 1};
  /// Elements per vector access of the input.
  int64_t Vector = 1;
  /// A full reduction whose length the vector does not divide: Dims covers
  /// all but its last TailElements (fewer than Vector) elements, which the
  /// first TailElements threads of block 0 read one each after the vector
  /// loop (the line starts aligned, so its vectors stay aligned whatever
  /// its length). For example bf16[33554431]: 4194303 vectors of 8, then a
  /// tail of 7.
  int64_t TailElements = 0;
  int64_t LanesPerRow = 32, RowsPerBlock = 1, RowsPerThread = 1;
  /// Vector iterations of a row (or row steps of a column) in flight.
  int64_t Unroll = 1;
  int64_t ColLanes = 32, Warps = 8, Split = 1;
  /// A split column reduction's last block: CombineGroups groups of
  /// threads per column each fold every CombineGroups-th chunk partial,
  /// CombineBatch loads in flight at a time (at most TicketBatch with the
  /// ticket fold, whose loads hold 64-bit flag words until they are seen
  /// set), then the groups combine in order through shared memory
  /// (deterministic for a given plan).
  int64_t CombineGroups = 1, CombineBatch = 1;
  /// The batches of loads each thread of that fold issues: one L2 round
  /// trip each.
  int64_t combineBatches() const {
    int64_t PerGroup = (Split + CombineGroups - 1) / CombineGroups;
    return (PerGroup + CombineBatch - 1) / CombineBatch;
  }
  /// Several blocks combine their partials through the workspace.
  bool MultiBlock = false;
  /// A multi-block reduction's fold: each block takes a ticket (its place
  /// in launch order among the blocks of its output) when it starts and
  /// publishes its partials with ready flags; the block with the last
  /// ticket waits for every flag and folds the partials (a full reduction's
  /// with one warp when each lane waits for at most 4). Else the last block
  /// to finish, found by a counter each block increments after a fence,
  /// folds them.
  bool TicketFold = false;
  /// A full reduction's ticket fold: the threads of the last ticket's
  /// block that fold the partials (a warp when each lane then waits for at
  /// most 4, else the whole block), TicketBatch of them per thread at a
  /// time; a column reduction's ticket fold polls at most TicketBatch per
  /// thread too (CombineBatch).
  int64_t TicketFolders = 0, TicketBatch = 8;
  /// Inputs read once get the L1/L2 evict_first hint.
  bool EvictFirst = true;
  /// Per parameter (by number): elements per vector load the maps prove
  /// under KernelPlan::Main for a parameter the heroes' inputs (and the
  /// side outputs of the input's dims) reach through one map (1: element
  /// by element), and whether the kernel reads each of its elements once
  /// (one map from an iteration space of its size: the loads EvictFirst
  /// applies to). Per root: the store width of a side output computed at
  /// the input's index (1 for every other root).
  std::vector<int64_t> LoadWidth;
  std::vector<bool> ReadOnce;
  std::vector<int64_t> SideStoreWidth;
  /// Every load of a step precedes the first use in the IR.
  bool LoadsFirst = true;
  /// `.minnctapersm` (0: unset).
  int64_t MinBlocksPerSm = 0;
  /// Vector iterations per row (or row steps per chunk of a column).
  int64_t Iterations = 1;
  /// The most float roundings on a term's way to its output in this plan's
  /// order of combination: a thread's steps in series, then shuffles, the
  /// warps' partials and the blocks' partials (roundingDepth in
  /// ReductionPlan.cpp). For example a thread that adds 2 x 1000 elements
  /// in series before 2 shuffle levels: 2002. What a comparison with the
  /// interpreter's pairwise sums must allow (KernelInfo::RoundingDepth).
  int64_t RoundingDepth = 0;
  /// The input's linear physical offset read by `(th_x, bl_x)[Syms]`
  /// (the last symbol is the vector lane), with the ragged edges as
  /// constraints; for rows, the row and lane expressions of a thread.
  std::vector<Variable> Syms;
  Expr Linear;
  std::vector<Constraint> Constraints;
  Expr Row, Lane;
};

/// The row-normalization emitter's parameters: each row in the registers of
/// LanesPerRow threads (ChunksPerThread vectors of Vector elements each),
/// RowsPerBlock rows per block.
struct RowNormalizationPlan {
  int64_t RowLength = 1, Rows = 1;
  int64_t Vector = 1, LanesPerRow = 1, ChunksPerThread = 1, RowsPerBlock = 1;
  /// Divide exactly even with fast math.
  bool ExactDivide = false;
  /// Every reduce of the fusion in definition order, with its level
  /// (Levels[i], of NumLevels): a reduce comes after every reduce its
  /// operands read; the reduces of one level are combined together. The
  /// rows are the first reduce's operand.
  std::vector<const HloInstruction *> Reduces;
  std::vector<int> Levels;
  int NumLevels = 0;
  /// The dims of the rows' input that the reduces keep (a row's index).
  std::vector<int64_t> KeptDims;
  /// Per root: true when it has the input's shape (a value per element),
  /// false for the reduces' output shape (a value per row).
  std::vector<bool> ElementRoot;
  /// Per parameter (by number): elements per vector load that the maps
  /// prove (1: element by element), and its map from the input's logical
  /// index when wider than 1. Per root: elements per vector store.
  std::vector<int64_t> LoadWidth;
  std::vector<IndexingMap> LoadMap;
  std::vector<int64_t> StoreWidth;
  /// The NVPTX back end's optimization level.
  unsigned BackEndOptLevel = 0;
};

/// The in-place dynamic-update-slice emitter's parameters: the kernel runs
/// the loop emitter's threads over the update's index space (KernelPlan::
/// Main targets the first root's update, LoopPlan its load widths) and
/// stores each root's update into the buffer it shares with its operand;
/// the rest of that buffer is never touched.
///
/// Example: `dynamic-update-slice(bf16[1024,4096] p0, bf16[8,4096] p1, s,
/// 0)`: UpdatedParams {0}, OutputMaps {`(d0, d1){rt0} -> (d0 + rt0, d1)`,
/// rt0 in [0, 1016]}, StoreWidth {8} (a row of the update is a row of the
/// output, whatever s is).
struct DynamicUpdateSlicePlan {
  /// Per root: the parameter (by number) whose buffer its output is.
  std::vector<int64_t> UpdatedParams;
  /// Per root: the map from an update index to the output index it is
  /// stored at (computeInputToOutputIndexing of operand 1), the clamped
  /// starts as runtime variables.
  std::vector<OperandMap> OutputMaps;
  /// Per root: elements per vector store the maps prove under Main for
  /// every value of the starts (1: element by element).
  std::vector<int64_t> StoreWidth;
};

/// The parameters of the emitters that walk one index space (Main's
/// target's) and store pieces of it: the concatenate emitter (XLA's
/// kConcatenate: the largest operand's space, a piece per operand) and the
/// input-slices emitter (kInputSlices: the sliced input's space, a piece
/// per root). Each thread owns runs of Main.Vector elements; for each piece
/// whose domain (its OutputMap's dim ranges) holds its run, it computes the
/// piece's Source at its index (the prologue), for a concatenate the root
/// from it (the epilogue, the concatenation's value overridden), and
/// stores that through OutputMap into output Output. Every element is read
/// once and no thread selects between pieces.
///
/// Example: `concatenate(f32[4096,128] a, f32[4096,256] b, f32[4096,33] c),
/// dimensions={1}`: threads over b's [4096,256] in runs of 4; pieces a, b,
/// c with OutputMaps `(d0, d1) -> (d0, d1)`, `(d0, d1) -> (d0, d1 + 128)`,
/// `(d0, d1) -> (d0, d1 + 384)`, their domains the operands'; c's edge cuts
/// runs (WholeRuns false: its lanes are checked and stored one by one).
struct PiecewisePlan {
  struct Piece {
    /// The instruction computed at the thread's index.
    const HloInstruction *Source = nullptr;
    /// The output (root number) it is stored into.
    size_t Output = 0;
    /// From the thread's index to the output's; its dims' ranges are the
    /// piece's domain.
    IndexingMap OutputMap;
    /// A run lies wholly inside the domain or outside it (one check per
    /// run; else one per lane).
    bool WholeRuns = true;
    /// Elements per vector store, proven from OutputMap under Main.
    int64_t StoreWidth = 1;
    /// Source is defined on the whole walked space (a slice's input): its
    /// values are computed for every lane, loads as vectors, and only the
    /// stores are checked.
    bool Covers = false;
    /// With Blocked: the walk of the source's own index space (its vector
    /// width its own) and the first of its Main.Blocks blocks.
    ThreadMapping Main;
    int64_t FirstBlock = 0;
  };
  std::vector<Piece> Pieces;
  /// Each block walks one piece's own space (Piece::Main) instead of every
  /// block walking KernelPlan::Main's and storing each piece that covers
  /// it: a concatenation along its major-most dim, where each operand is
  /// one contiguous block of the output.
  bool Blocked = false;
  /// The operands' loads carry an L2 evict_last policy (`ld.global.nc
  /// .L1::evict_last.L2::cache_hint`), as torch.compile's concatenates do.
  bool EvictLast = false;
  /// The blocks of the launch: the pieces' blocks together when Blocked,
  /// else \p Main's.
  int64_t blocks(const ThreadMapping &Main) const {
    if (!Blocked)
      return Main.Blocks;
    int64_t N = 0;
    for (const Piece &Pc : Pieces)
      N = std::max(N, Pc.FirstBlock + Pc.Main.Blocks);
    return N;
  }
  /// The concatenation the root is computed from (its value overridden by
  /// each piece's); null for input slices (the pieces are the roots).
  const HloInstruction *Concat = nullptr;
};

/// How a scatter combines an update element with the operand's element.
enum class ScatterCombine {
  /// The combiner returns the update (`ROOT b = parameter(1)`): a store;
  /// with duplicate indices one of them wins, as XLA leaves unspecified.
  Store,
  /// `add` on 4- and 8-byte integers and floats, and on f16 and bf16
  /// (`atom.add.noftz.f16`/`.bf16`; the back end loops on a
  /// compare-and-swap where the GPU lacks one): one atomic add, or one
  /// vector reduction per thread (`red.global.add.v4.f32`) where
  /// MathOptions::VectorAtomics allows it.
  AtomicAdd,
  /// `maximum`/`minimum` on 4- and 8-byte integers: one atomic.
  AtomicMax,
  AtomicMin,
  /// Anything else (other combiners, 1- and 2-byte elements): a
  /// compare-and-swap loop on the element's aligned 4-byte word (8 for
  /// 8-byte elements).
  CompareAndSwap,
  /// `unique_indices=true`: no two updates meet at an operand element (the
  /// producer's promise, which XLA trusts too), so any combiner is a load,
  /// the combiner and a store, without atomics.
  ReadModifyWrite,
};

/// The scatter emitter's parameters: one thread per update element
/// (KernelPlan::Main over the updates), which finds its operand index from
/// the scatter indices, skips a window that does not fit the operand as
/// XLA does, and combines the element in place into the parameter whose
/// buffer the output shares.
///
/// Example: `scatter(f32[4096,256] p0, s32[N,1] i, f32[N,256] u),
/// update_window_dims={1}, inserted_window_dims={0},
/// scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add`:
/// UpdatedParam 0, Combine AtomicAdd, Vector 4 (a thread combines four
/// consecutive elements of a row: the window spans the operand's rows,
/// so the four operand elements are contiguous and 16-byte aligned).
struct ScatterPlan {
  int64_t UpdatedParam = 0;
  ScatterCombine Combine = ScatterCombine::CompareAndSwap;
  /// Update elements per thread (KernelPlan::Main's vector), consecutive
  /// along the updates' minor dim; > 1 only where the maps prove that
  /// they land on Vector contiguous operand elements, Vector-aligned.
  int64_t Vector = 1;
  /// Consecutive updates (in the updates' physical order) whose runs at
  /// one place of the window a thread walks, combining in registers the
  /// runs whose windows start at the same place and combining into the
  /// operand once per such segment: > 1 for `indices_are_sorted=true`
  /// (XLA's sorted scatter), where equal indices are neighbours.
  int64_t Segment = 1;
  /// The parameters read once (ReadOnce, by parameter number) load with an
  /// L2 evict_first policy, so that the operand's lines the atomics hit
  /// are the ones L2 keeps.
  bool EvictFirst = false;
  /// Per parameter: streamed, read once: the indices, and parameters of at
  /// least 1/64 of the updates' elements other than the updated operand (a
  /// smaller one is read again by many threads).
  std::vector<bool> ReadOnce;
};

/// How the scan emitter spreads lines over threads.
enum class ScanMode {
  /// A thread scans one line serially, the carry in a register; threads
  /// take lines in the layout's order, so that for a scan along a
  /// non-minor dim (ScanInfo::Dims[2] > 1) the 32 lanes of a warp read and
  /// write 32 neighbouring elements of the minor dim at every step.
  /// KernelPlan::Main is `(th_x, bl_x)[pos] -> index of the scanned
  /// operand`.
  LinePerThread,
  /// A warp walks a row in chunks of 32 consecutive elements: each lane
  /// combines its element, a `shfl.sync.up` scan across the warp, the
  /// carry of the chunks before (lane 31's value). Main is `(th_x,
  /// bl_x)[it] -> element it * 32 + th_x mod 32 of row bl_x * W + th_x
  /// floordiv 32` (counted from the end for a reverse scan).
  WarpPerRow,
  /// A block scans a tile of TileLength consecutive elements of a row:
  /// each thread holds Runs vectors of Vector consecutive elements in
  /// registers (all loads in flight before the first combine), warp w
  /// covers elements [w, w + 1) * 32 * Runs * Vector of the tile, run k of
  /// lane l at k * 32 * Vector + l * Vector: a serial scan of each vector,
  /// a shuffle scan of the lanes' totals per run, a scan of the warps'
  /// totals through shared memory. With TilesPerLine > 1 the tiles of a
  /// line chain by decoupled look-back: tile ids come from a counter in
  /// the workspace in launch order, each tile publishes its aggregate and
  /// then its inclusive prefix in a descriptor, and warp 0 of the next
  /// looks back over 32 descriptors at a time (docs/KERNEL_PLAN.md). Main
  /// is `(th_x, tile)[run, vec] -> index of the scanned operand`.
  BlockTiles,
  /// A block scans a tile of TileLength consecutive positions of LinesPerTile
  /// neighbouring lines of a scan along a non-minor dim (columns: lines
  /// neighbours along the minor dim). Thread (tx, ty) = (th_x mod
  /// LinesPerTile / Vector, th_x floordiv (LinesPerTile / Vector)) holds Runs
  /// consecutive positions of Vector neighbouring columns (a warp's loads
  /// and stores are rows of consecutive elements): a serial scan down
  /// each column, the row groups' totals folded through shared memory.
  /// Tiles are numbered segment-major (tile = seg * Groups + group), and
  /// with TilesPerLine > 1 each column chains by decoupled look-back over
  /// a descriptor per (tile, column), tile ids taken in launch order as
  /// for BlockTiles; one thread per column walks back tile by tile. Main
  /// is `(th_x, tile)[run, vec] -> index of the scanned operand`.
  ColumnTiles,
  /// Short rows laid end to end: a block scans a tile of LinesPerTile
  /// whole rows (TileLength = LinesPerTile x Length elements) with the
  /// BlockTiles thread map over the flat rows, vectors free to straddle
  /// rows, as a segmented scan: an element at a row's start is a head
  /// (its row's init folded in), and (head, value) pairs combine as
  /// (fa, a) . (fb, b) = (fa or fb, fb ? b : a op b). No look-back: no
  /// row crosses a tile. Main is `(th_x, tile)[run, vec] -> index of the
  /// scanned operand`.
  SegmentedTiles,
};

/// The scan emitter's parameters (issue 18).
///
/// Example: along the rows of f32[16384,4096]: BlockTiles of 4096 (256
/// threads x 4 runs of 4), one tile per row; f32[268435456]: tiles of
/// 16384 (256 x 16 runs of 4), 16384 tiles chained by look-back; along
/// dim 0 of f32[4096,16384]: ColumnTiles of 128 columns x 128 positions
/// (32 x 8 threads, each 16 positions of 4 columns), 128 groups x 32
/// tiles per line.
struct ScanPlan {
  ScanMode Mode = ScanMode::LinePerThread;
  /// Lines (Dims[0] * Dims[2] of ScanInfo) and their length.
  int64_t Lines = 1, Length = 1;
  bool Reverse = false;
  /// 1 (a line per thread), 32 (a row per warp) or the block's threads.
  int64_t LanesPerLine = 1;
  /// BlockTiles: elements per vector, vectors per thread, the tile's
  /// elements (threads x Runs x Vector) and tiles per line. ColumnTiles:
  /// columns per vector, positions per thread, the tile's positions.
  int64_t Vector = 1, Runs = 1, TileLength = 1, TilesPerLine = 1;
  /// Tiled modes: the tiles of one segment (one per row for BlockTiles,
  /// one per group of LinesPerTile lines for ColumnTiles and
  /// SegmentedTiles) and the lines a tile covers (1 for BlockTiles).
  int64_t Groups = 1, LinesPerTile = 1;
  /// BlockTiles and SegmentedTiles: where item (run, vec) of thread th_x
  /// sits in its tile, as the thread's part and the item's, the offset
  /// their sum: (th_x)[run, vec] -> (th_x floordiv 32 * 32 * Runs * Vector
  /// + (th_x mod 32) * Vector, run * 32 * Vector + vec). The thread map's
  /// positions are built from it, and a ragged tile's item tests from its
  /// two parts: the thread's emitted once, each item's a constant.
  IndexingMap TileOffset;
  /// BlockTiles whose lines end in a partial tile after at least one full
  /// one: the last tile is read and scanned as the full tile that ends at
  /// the line's end, LastTileShift positions before its place in the
  /// thread map. Its first LastTileShift items (the previous tile's
  /// positions) count as the combiner's identity and are not stored, so
  /// every read stays in the line at a constant offset from the thread's
  /// first, and only the tests of which items are the tile's own remain.
  /// Example: rows of 50257 in tiles of 16384: the fourth tile reads
  /// positions 33873..50256, shift 15279. 0: no shifted tile (lines of
  /// whole tiles, or of one partial tile whose items past the end are
  /// guarded one by one).
  int64_t LastTileShift = 0;
  /// BlockTiles: per root, elements per vector store the maps prove.
  std::vector<int64_t> StoreWidth;
  /// Tile descriptors in the workspace: one 64-bit word (status in the
  /// low half, the value's bits in the high half, read and written whole
  /// with relaxed atomics) for values of up to 4 bytes; wider values keep
  /// a 32-bit status array (acquire/release) and two value arrays, the
  /// aggregates' and the inclusive prefixes'.
  bool PackedDescriptors = true;
  /// An add or multiply scan of f16 or bf16 computes in f32 (as torch's
  /// scans do): the items widened as they are read, every partial, carry
  /// and descriptor an f32, each output rounded once to the scan's type.
  bool Accumulate32 = false;
  /// BlockTiles with look-back, every tile full: the tile's parameter
  /// reads are copied into shared memory (cp.async, each thread its own
  /// items, StageBytes of dynamic shared memory per block) and read from
  /// there twice, a run at a time: once for the tile's aggregate before
  /// its look-back, once to scan and store after it. A thread holds one
  /// run in registers instead of all of them, so that more blocks are
  /// resident while tiles wait on their look-back (taken for 4-byte items
  /// with 4 waves of tiles or more; IDXMAP_SCAN_SHARED_TILE). 0: items in
  /// registers.
  int64_t StageBytes = 0;
  bool sharedTile() const { return StageBytes > 0; }
  /// With StageBytes: the blocks each SM is to hold at once (shared memory
  /// and threads allow them; ptxas keeps the registers within).
  int64_t MinBlocks = 0;
  /// BlockTiles with look-back, every tile full, read at the scanned
  /// operand's own index and chained by a commutative combiner: a
  /// warp-specialized pipeline of Stages shared stages (0: none). A
  /// persistent block per SM holds the tile's threads (P.Main) and three
  /// warps more: a load warp takes tiles in launch order and copies each
  /// streamed parameter's part with cp.async.bulk into a free stage; a
  /// reduce warp folds each staged tile's warps and publishes its
  /// aggregate; a look-back warp chains the tile from its block's previous
  /// one (whose inclusive prefix it knows), folding only the aggregates in
  /// between; the tile's warps scan the stage after that prefix and store.
  /// The squads meet only at mbarriers, four per stage (full, aggregate,
  /// prefix, empty), so the next stages' copies stay in flight while a
  /// tile waits on its look-back (IDXMAP_SCAN_PIPELINED).
  int64_t Stages = 0;
  bool pipelined() const { return Stages > 0; }
  /// Pipelined: the bytes of one stage, each streamed parameter's part of
  /// the tile (stagePartBytes, in ScanInfo::streamedParameters order).
  int64_t PipeStageBytes = 0;
  /// Pipelined: the bytes of a tile of elements of \p T, one bulk copy (a
  /// multiple of 16: the plan takes no other).
  int64_t stagePartBytes(PrimitiveType T) const {
    return TileLength * byteWidth(T);
  }
  bool lookBack() const { return TilesPerLine > 1; }
  int64_t tiles() const { return Groups * TilesPerLine; }
  /// Whether a line's last tile is partial (its items guarded).
  bool raggedLines() const { return TilesPerLine * TileLength != Length; }
  /// Look-back descriptors: one per line of each tile.
  int64_t descriptors() const { return tiles() * LinesPerTile; }
  /// The workspace: the tile counter and the blocks' exit counter (16
  /// bytes), then the descriptors.
  int64_t workspaceBytes() const {
    if (!lookBack())
      return 0;
    const int64_t T = descriptors();
    return 16 + (PackedDescriptors ? 8 * T : (4 * T + 15) / 16 * 16 + 16 * T);
  }
};

/// The cost model's estimate of one plan (see CostModel.h).
struct CostEstimate {
  /// Bytes moved between DRAM (or L2, for data that stays there) and the
  /// SMs, counted in 32-byte sectors from the maps.
  double Bytes = 0;
  /// Kernel time in microseconds, and its parts.
  double Microseconds = 0;
  double MemoryMicroseconds = 0, LaunchMicroseconds = 0;
  /// Whether the inputs are expected to stay in L2 between launches.
  bool L2Resident = false;
  std::string Summary;
};

/// A fusion's kernel, planned.
///
/// Example: `idxmap analyze test/examples/rowsum_f32_8192x8192.hlo` prints
/// the plan of its one fusion:
/// \code
///   plan: row reduction, grid [8192, 1, 1], block [512, 1, 1]
///     vector = 4          elements per load (16 bytes, the widest parameter)
///     lanes_per_row = 512 a block per row: 2048 vectors per row (>= 2048)
///     ...
/// \endcode
struct KernelPlan {
  /// The emitter that builds it: "loop", "transpose", "row reduction",
  /// "multi-row reduction", "full reduction", "column reduction", "row
  /// normalization", "in-place dynamic-update-slice", "concatenate",
  /// "input slices", "scatter", "scan".
  std::string Emitter;
  EmitterKind Kind = EmitterKind::Loop;
  int64_t Grid[3] = {1, 1, 1};
  int64_t Block[3] = {1, 1, 1};
  /// Static shared memory per block, when the plan fixes it (tiles); the
  /// emitter may add slots for cross-warp combining.
  int64_t SharedBytes = 0;
  /// The NVPTX back end's optimization level for this kernel (the module
  /// gets the highest its kernels ask for).
  unsigned BackEndOptLevel = 3;
  /// BackEndOptLevel holds even when the module links libdevice (whose
  /// code was measured at O3 only, and gets O3 otherwise): a kernel of one
  /// warp, whose time is its launch's.
  bool LibdeviceAtPlanLevel = false;
  /// Whether the fast IR pipeline runs instcombine on this kernel; a module
  /// skips it only when every kernel in it asks (TargetOptions::Pipeline).
  /// Scans of 4- and 8-byte types skip it: their emitted IR is already
  /// folded, and instcombine is about a tenth of their compile.
  bool IrInstCombine = true;
  /// Loop, transpose, reduction and row-normalization kernels: every
  /// parameter load carries an L2 evict_last policy (`ld.global.nc
  /// .L1::evict_last.L2::cache_hint`), over the kind's own hints.
  bool EvictLast = false;
  /// The main access: thread to element of the hero's operand (or of the
  /// output, for the loop emitter), with its launch.
  ThreadMapping Main;
  /// Index arithmetic in 32 bits: every offset the kernel computes fits
  /// (arrays and threads below 2^27 elements, and for the transpose every
  /// subexpression of its maps within int32). Every planner decides it.
  bool Index32 = true;
  /// Subgraph functions: a value the partitioner finds read at several
  /// indices whose inline expansion passes FunctionThreshold HLO
  /// instructions (0: never) becomes a function of its index; Functions are
  /// those values, in the order they were found (SubgraphFunctions.cpp).
  int64_t FunctionThreshold = 128;
  std::vector<const HloInstruction *> Functions;
  std::optional<LoopPlan> Loop;
  std::optional<TransposePlan> Transpose;
  std::optional<ReductionPlan> Reduction;
  std::optional<RowNormalizationPlan> RowNormalization;
  std::optional<DynamicUpdateSlicePlan> DynamicUpdateSlice;
  std::optional<PiecewisePlan> Pieces;
  std::optional<ScatterPlan> Scatter;
  std::optional<ScanPlan> Scan;
  /// Every decision with its reason, in the order they were made.
  std::vector<PlanChoice> Choices;
  CostEstimate Cost;

  /// Records a choice and returns its value.
  int64_t choose(std::string Name, int64_t Value, std::string Reason) {
    Choices.push_back({std::move(Name), Value, std::move(Reason)});
    return Value;
  }
};

/// Plans the kernel of fusion \p A (analyzeFusion's answer) for \p Device,
/// with \p Overrides replacing the plan's own choices where set. Fails when
/// no plan fits (a row too long for one block, a launch over the device's
/// limits) with `fusion 'NAME': EMITTER emitter: REASON`, located at
/// \p Fusion when given, else at the fused computation.
///
/// Example:
/// \code
///   FusionAnalysis A = analyzeFusion(*Fusion);
///   Expected<KernelPlan> P =
///       planFusion(Ctx, A, Tuning{}, *lookupDeviceModel("H200"));
///   // P->Emitter == "row reduction", P->Block[0] == 512
/// \endcode
Expected<KernelPlan> planFusion(Context &Ctx, const FusionAnalysis &A,
                                const Tuning &Overrides,
                                const DeviceModel &Device,
                                const HloInstruction *Fusion = nullptr);

/// One plan among those planCandidates finds, with the knobs that give it:
/// planFusion(Ctx, A, Knobs, Device) makes Plan (its estimate included).
struct PlanCandidate {
  Tuning Knobs;
  KernelPlan Plan;
};

/// The plans an autotuner measures for fusion \p A: the rules' own plan
/// (Knobs = \p Overrides) and variants over a grid of the knobs of its
/// emitter (docs/TUNING.md lists the grid), each with \p Overrides set as
/// given (a knob set there is never varied), planned by planFusion and
/// estimated by the cost model. Variants whose plan fails, or equals an
/// earlier one (emitter, grid, block and every choice's value), are
/// dropped. Sorted by estimate, stably: on ties the rules' plan comes first,
/// then the variants that set fewer knobs. At most \p MaxCandidates (at
/// least 1); the rules' plan is always kept, in the last place when its
/// estimate ranks it lower. Fails as planFusion fails for the rules' plan.
/// planFusion's own choice is unchanged: this only lists alternatives.
///
/// Example: a row reduction f32[8192,8192] -> [8192] on the H200:
/// \code
///   auto C = planCandidates(Ctx, A, Tuning{}, *lookupDeviceModel("H200"));
///   // (*C)[k].Plan.Emitter == "row reduction" for every k; the candidate
///   // whose Knobs are empty is planFusion's plan; others set e.g.
///   // IDXMAP_RED_ROW_LANES=256 IDXMAP_RED_ROW_UNROLL=16.
/// \endcode
Expected<std::vector<PlanCandidate>>
planCandidates(Context &Ctx, const FusionAnalysis &A, const Tuning &Overrides,
               const DeviceModel &Device,
               const HloInstruction *Fusion = nullptr,
               size_t MaxCandidates = 24);

/// The plan as text: emitter and launch, then one line per choice (name,
/// value, reason), then the cost estimate (not the thread map: `idxmap
/// analyze` prints Main with printMap).
std::string printKernelPlan(const KernelPlan &P);

/// \p A as a loop fusion: what a transpose fusion whose roots the transpose
/// emitter cannot write is planned and emitted as (Kind Loop, no transpose,
/// every root its own hero).
FusionAnalysis asLoopFusion(const FusionAnalysis &A);

/// The analysis plan \p P's emitter works on: asLoopFusion(A) for a
/// transpose fusion planned as a loop, else \p A.
FusionAnalysis plannedAnalysis(const FusionAnalysis &A, const KernelPlan &P);

/// True when \p A is a row normalization (softmax-like): row reductions
/// whose results are broadcast back along the rows and combined with the
/// rows' elements, maybe feeding further reductions of the same rows.
/// planFusion gives these the row-normalization emitter.
bool isRowNormalization(const FusionAnalysis &A);

} // namespace idxmap

#endif // IDXMAP_KERNELPLAN_H
