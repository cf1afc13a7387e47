//===- ScanPlan.cpp - Prefix scans: the kernel's shape --------------------===//
//
// Part of idxmap. The scan emitter's plan (ScanPlan in KernelPlan.h,
// docs/KERNEL_PLAN.md): rows longer than 512 take row tiles (a block per
// tile of consecutive elements, chained by decoupled look-back when a row
// spans several); scans along a non-minor dim take column tiles (a tile
// of neighbouring columns over a run of positions, chained per column);
// rows of at most 31 share tiles end to end as one segmented scan; rows
// of 32 to 512 take a warp each; what has no identity for its combiner
// (a variadic window's computation) takes a warp per row or a thread per
// line. Each tiled mode chooses its shape, then builds its thread map
// `(th_x, tile)[run, vec] -> index` and launch (finishTiles).
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/Delinearize.h"
#include "idxmap/Simplify.h"

#include <algorithm>
#include <numeric>

namespace idxmap {
namespace plan {

namespace {

/// The instructions \p I is computed from, itself included (the prologue
/// of the scanned operand).
std::set<const HloInstruction *> ancestors(const HloInstruction *I) {
  std::vector<const HloInstruction *> All = operandClosure({I});
  return {All.begin(), All.end()};
}

/// Whether the tiled kernel can run \p S: its combiner has an identity in
/// the scan's type (the elements past a line's end and the prefixes before
/// a tile take it); a variadic window's computation has none known.
bool hasIdentity(const ScanInfo &S) {
  return !S.variadic() && hasCombinerIdentity(S.Combiner, S.Type);
}

/// The widest element the tile's loads and stores move.
int64_t widestBytes(const HloComputation &C, const FusionAnalysis &A) {
  int64_t Bytes = byteWidth(A.Scan->Type);
  for (const HloInstruction *Pm : C.parameters())
    if (Pm->shape().isArray())
      Bytes = std::max<int64_t>(Bytes, byteWidth(Pm->shape().Type));
  for (const HloInstruction *R : A.Roots)
    Bytes = std::max<int64_t>(Bytes, byteWidth(R->shape().Type));
  return Bytes;
}

/// The tiled kernels' loads and stores: a parameter read by the prologue
/// alone, through one map, takes the vectors the maps prove under
/// P.Main; each root its proven store width. Returns, per parameter,
/// whether it is read that way (once per item).
std::vector<bool> planAccessWidths(const PlanInputs &In, KernelPlan &P,
                                   ScanPlan &SP) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const ScanInfo &S = *A.Scan;
  Context &Ctx = In.Ctx;
  const std::set<const HloInstruction *> Pro = ancestors(S.Input),
                                         InitPro = ancestors(S.Init);
  GroupedIndexing G = computeGroupedIndexing(Ctx, C, S.Input);
  std::vector<int64_t> Loads(C.parameters().size(), 1);
  std::vector<bool> Single(C.parameters().size(), false);
  for (size_t K = 0; K < C.parameters().size(); ++K) {
    const HloInstruction *Pm = C.parameters()[K];
    auto It = G.find(Pm);
    bool Only = It != G.end() && It->second.size() == 1 && !InitPro.count(Pm);
    for (const HloInstruction *U : Pm->users())
      Only = Only && (Pro.count(U) || U == S.Hero);
    if (Only)
      Loads[K] =
          std::min(SP.Vector, provenAccessWidth(P.Main, It->second.front().Map,
                                                Pm->shape()));
    Single[K] = Only;
  }
  const std::vector<int64_t> Sizes = S.Input->shape().Dims;
  for (const HloInstruction *R : A.Roots)
    SP.StoreWidth.push_back(std::min(
        SP.Vector, provenAccessWidth(P.Main, IndexingMap::identity(Ctx, Sizes),
                                     R->shape())));
  P.Loop = LoopPlan{true, std::move(Loads), {}, {}};
  return Single;
}

/// Whether a chained row scan reads its tiles through shared memory
/// (ScanPlan::StageBytes): every tile full, every parameter of the
/// scanned shape the prologue reads (the streamed ones; a bias is read
/// from the caches as before) read once per item (\p Single) by a load
/// cp.async can copy (4, 8 or 16 bytes), and the stage fits a block's
/// shared memory. Taken for items of 4 bytes (the kind checked on a GPU so
/// far; others only through the knob) when the launch has at least 4
/// waves of tiles at the blocks per SM the stage allows
/// (IDXMAP_SCAN_SHARED_TILE decides otherwise): there, the look-back's waits,
/// with 7 of a block's 8 warps idle at its barrier, are what the extra resident
/// blocks hide; with fewer tiles the copies' wait and the second read show
/// instead. H200, 2026-12-04 (bench/RESULTS.md, eighteenth session): cumsum
/// f32[2^28] 775 -> 707 us (16384 tiles), f32[2^26] 197 -> 178 (4096), rows
/// f32[1024,65536] 160 -> 149 (4096); f32[2^24] (1024 tiles) 50.7 -> 50.1
/// and s32[2^23] (512) 26.2 -> 28.2 stay in registers.
void planSharedTile(const PlanInputs &In, KernelPlan &P, ScanPlan &SP,
                    const std::vector<bool> &Single) {
  int64_t ItemBytes = 0;
  std::string Why;
  if (SP.raggedLines())
    Why = "the line's last tile is partial";
  for (const HloInstruction *Pm : In.A.Scan->streamedParameters()) {
    if (!Why.empty())
      break;
    const size_t K = size_t(Pm->parameterNumber());
    const int64_t Bytes = byteWidth(Pm->shape().Type),
                  Copy = P.Loop->LoadWidth[K] * Bytes;
    if (!Single[K])
      Why = "parameter '" + Pm->name() + "' is read more than once an item";
    else if (Copy != 4 && Copy != 8 && Copy != 16)
      Why = "parameter '" + Pm->name() + "' is read " + std::to_string(Copy) +
            " bytes at a time (cp.async copies 4, 8 or 16)";
    ItemBytes += Bytes;
  }
  // The static arrays (warp totals, prefix, ticket) stay under 1 KiB.
  const int64_t T = P.Main.ThreadsPerBlock,
                Stage = T * SP.Runs * SP.Vector * ItemBytes;
  if (Why.empty() && ItemBytes == 0)
    Why = "the prologue reads no parameter of the scanned shape";
  if (Why.empty() && Stage + 1024 > In.Device.SharedBytesPerBlock)
    Why = "a stage of " + std::to_string(Stage) +
          " bytes does not fit a block's shared memory";
  if (!Why.empty()) {
    P.choose("shared_tile", 0, "items in registers: " + Why);
    return;
  }
  // As many blocks per SM as threads and shared memory allow, each thread
  // keeping at least 64 registers.
  const DeviceModel &D = In.Device;
  const int64_t Slots = residentBlocks(D, T, Stage + 1024, 64);
  const int64_t PerSm = Slots / std::max<int64_t>(1, D.SmCount);
  const bool Many = SP.tiles() >= 4 * Slots;
  const bool Checked = ItemBytes == 4 && !SP.Accumulate32;
  const std::string Default =
      !Checked
          ? "items of " + std::to_string(ItemBytes) +
                " bytes: in registers unless asked (shared tiles are "
                "checked on a GPU for 4-byte items only)"
          : std::to_string(SP.tiles()) + " tiles, " +
                (Many ? "4 waves or more" : "fewer than 4 waves") + " of " +
                std::to_string(Slots) + " resident staged blocks: items " +
                (Many ? "through shared memory" : "in registers");
  if (!choose(In, P, "IDXMAP_SCAN_SHARED_TILE", "shared_tile",
              Many && Checked ? 1 : 0, Default))
    return;
  SP.StageBytes = Stage;
  SP.MinBlocks = P.choose("min_blocks", PerSm,
                          std::to_string(Stage) +
                              " bytes of shared memory a block, registers for "
                              "a run: blocks resident per SM");
}

/// Whether \p Op chains tiles in any order (the pipeline's look-back folds
/// the aggregates between two tiles of a block lane by lane).
bool commutes(HloOpcode Op) {
  return Op == HloOpcode::Add || Op == HloOpcode::Multiply ||
         Op == HloOpcode::Maximum || Op == HloOpcode::Minimum ||
         Op == HloOpcode::And || Op == HloOpcode::Or || Op == HloOpcode::Xor;
}

/// Why a chained row scan cannot run as a pipeline (ScanPlan::Stages), or
/// empty: its tiles are whole, contiguous in memory (the scanned dim minor
/// most, not reversed), and every streamed parameter is read once per item
/// at the scanned operand's own index in its layout, so that a tile of it
/// is one bulk copy; the descriptors are packed and the combiner commutes.
std::string pipelineObstacle(const PlanInputs &In, const ScanPlan &SP,
                             const std::vector<bool> &Single) {
  const ScanInfo &S = *In.A.Scan;
  const Shape &X = S.Input->shape();
  if (SP.raggedLines())
    return "the line's last tile is partial";
  if (S.Reverse)
    return "a reversed line";
  if (S.variadic() || SP.Accumulate32 || byteWidth(S.Type) != 4)
    return "values other than one of 4 bytes";
  if (!commutes(S.Combiner))
    return "a combiner that does not commute";
  if (X.layoutOrDefault().front() != S.Dim)
    return "the scanned dim is not the minor-most";
  GroupedIndexing G =
      computeGroupedIndexing(In.Ctx, *In.A.Computation, S.Input);
  const std::vector<const HloInstruction *> Params = S.streamedParameters();
  if (Params.empty())
    return "the prologue reads no parameter of the scanned shape";
  for (const HloInstruction *Pm : Params) {
    auto It = G.find(Pm);
    if (!Single[size_t(Pm->parameterNumber())] || It == G.end() ||
        It->second.size() != 1)
      return "parameter '" + Pm->name() + "' is read more than once an item";
    const IndexingMap &Map = It->second.front().Map;
    bool Own = Map.numSymbols() == 0 && Map.numResults() == X.rank() &&
               Pm->shape().layoutOrDefault() == X.layoutOrDefault();
    for (size_t D = 0; Own && D < Map.numResults(); ++D)
      Own = Map.results()[D] == In.Ctx.dim(unsigned(D));
    if (!Own)
      return "parameter '" + Pm->name() +
             "' is not read at the scanned operand's own index";
    if (SP.stagePartBytes(Pm->shape().Type) % 16)
      return "a tile of parameter '" + Pm->name() +
             "' is not a multiple of 16 bytes";
  }
  return "";
}

/// ScanPlan::Stages, asked for by IDXMAP_SCAN_PIPELINED (not yet the
/// default: slower than the staged tiles on an H100, bench/RESULTS.md,
/// forty-fourth session). The stages take what the device's shared memory
/// per block holds beside each stage's barriers, tile number and totals,
/// at most 8 of them (IDXMAP_SCAN_STAGES, refused past that), at least 2.
void planPipeline(const PlanInputs &In, KernelPlan &P, ScanPlan &SP,
                  const std::vector<bool> &Single) {
  if (!tuned(In.Overrides, &Tuning::ScanPipelined, 0))
    return;
  std::string Why = pipelineObstacle(In, SP, Single);
  int64_t Bytes = 0;
  for (const HloInstruction *Pm : In.A.Scan->streamedParameters())
    Bytes += SP.stagePartBytes(Pm->shape().Type);
  // Four 8-byte barriers, the tile (4 bytes) and a total per warp plus the
  // aggregate and the prefix (4 bytes each) a stage; 64 bytes for the rest.
  const int64_t Warps = P.Main.ThreadsPerBlock / 32;
  const int64_t PerStage = Bytes + 36 + 4 * (Warps + 2);
  const int64_t Budget = In.Device.SharedBytesPerBlock - 64;
  const int64_t Fit = Bytes ? std::max<int64_t>(Budget, 0) / PerStage : 0;
  if (Why.empty() && Fit < 2)
    Why = "two stages of " + std::to_string(Bytes) + " bytes do not fit the " +
          std::to_string(In.Device.SharedBytesPerBlock) +
          " bytes of shared memory a block has";
  if (!Why.empty()) {
    P.choose("pipelined", 0,
             "tuning override IDXMAP_SCAN_PIPELINED refused: " + Why);
    return;
  }
  P.choose("pipelined", 1,
           "tuning override IDXMAP_SCAN_PIPELINED: a persistent block per SM "
           "with load, reduce and look-back warps beside the tile's");
  const int64_t Auto = std::min<int64_t>(Fit, 8);
  const int64_t Want = tuned(In.Overrides, "IDXMAP_SCAN_STAGES", Auto);
  std::string Reason = std::to_string(Bytes) + " bytes a stage: as many as " +
                       std::to_string(In.Device.SharedBytesPerBlock) +
                       " bytes of shared memory hold (" + std::to_string(Fit) +
                       "), at most 8";
  if (isTuned(In.Overrides, "IDXMAP_SCAN_STAGES"))
    Reason = Want <= Fit ? "tuning override IDXMAP_SCAN_STAGES"
                         : "tuning override IDXMAP_SCAN_STAGES=" +
                               std::to_string(Want) + " refused: " + Reason;
  SP.Stages = P.choose("stages", std::min(Want, Fit), Reason);
  SP.PipeStageBytes = Bytes;
  SP.StageBytes = 0;
  SP.MinBlocks = 1;
}

/// The tiled kernels' thread map `(th_x, tile)[run, vec] -> Index` of
/// \p T threads a tile, its proven access widths and the launch: a block
/// per tile (taken from the workspace's counter with look-back, else
/// \p BlocksWhy).
void finishTiles(const PlanInputs &In, KernelPlan &P, ScanPlan &SP, int64_t T,
                 std::vector<Expr> Index, std::vector<Constraint> Cs,
                 const std::string &BlocksWhy) {
  Context &Ctx = In.Ctx;
  const int64_t Tiles = SP.tiles();
  P.Main.ThreadsPerBlock = T;
  P.Main.Blocks = Tiles;
  P.Main.Vector = SP.Vector;
  P.Main.Target = In.A.Scan->Input;
  P.Main.Map =
      IndexingMap(Ctx, {{"th_x", {0, T - 1}}, {"tile", {0, Tiles - 1}}},
                  {{"run", {0, SP.Runs - 1}}, {"vec", {0, SP.Vector - 1}}}, {},
                  std::move(Index), std::move(Cs));
  simplify(P.Main.Map);
  std::vector<bool> Single = planAccessWidths(In, P, SP);
  if (SP.Mode == ScanMode::BlockTiles && SP.lookBack()) {
    planSharedTile(In, P, SP, Single);
    planPipeline(In, P, SP, Single);
  }
  if (SP.pipelined()) {
    P.Grid[0] = P.choose("blocks", std::min(Tiles, In.Device.SmCount),
                         "a persistent block per SM, tiles taken in launch "
                         "order from the workspace's counter");
    P.Block[0] = T + 96;
    return;
  }
  GridStride GS = gridStride(Tiles, In.Device.MaxGrid[0]);
  P.Grid[0] = P.choose("blocks", GS.Grid,
                       SP.lookBack()
                           ? "one block per tile, tiles taken in launch order "
                             "from the workspace's counter"
                           : BlocksWhy);
  P.Block[0] = T;
}

/// The "tile" choice's reason: the tiles of a line and how they chain.
std::string chainWhy(const ScanPlan &SP) {
  return SP.TilesPerLine > 1 ? std::to_string(SP.TilesPerLine) +
                                   " tiles per line, chained by decoupled "
                                   "look-back"
                             : "one tile per line: no look-back";
}

/// Where item (run, vec) of thread th_x sits in a tile of consecutive
/// elements, as the thread's part and the item's (ScanPlan::TileOffset):
/// warp w covers [w, w + 1) * 32 * items, run k of lane l at
/// k * 32 * Vector + l * Vector (each warp access one coalesced vector).
IndexingMap rowTileOffset(Context &Ctx, const ScanPlan &SP, int64_t Threads) {
  Expr Thread = Ctx.dim(0).floorDiv(32) * (32 * SP.Runs * SP.Vector) +
                (Ctx.dim(0) % 32) * SP.Vector;
  Expr Item = Ctx.symbol(0) * (32 * SP.Vector) + Ctx.symbol(1);
  return IndexingMap(Ctx, {{"th_x", {0, Threads - 1}}},
                     {{"run", {0, SP.Runs - 1}}, {"vec", {0, SP.Vector - 1}}},
                     {}, {Thread, Item});
}

/// An item's offset in its tile: the sum of SP.TileOffset's two parts.
Expr tileOffsetSum(const ScanPlan &SP) {
  return SP.TileOffset.results()[0] + SP.TileOffset.results()[1];
}

/// The row tiles' shape (ScanMode::BlockTiles): elements a thread, threads
/// (returned), the tile and the tiles of a line.
int64_t chooseRowTile(const PlanInputs &In, KernelPlan &P, ScanPlan &SP,
                      bool ElementAccesses) {
  const FusionAnalysis &A = In.A;
  const ScanInfo &S = *A.Scan;
  const int64_t N = S.Length;
  SP.Vector = std::max<int64_t>(1, 16 / widestBytes(*A.Computation, A));
  // A line longer than one tile of 256 x 16 chains its tiles by look-back,
  // whose latency each tile pays once: 4 x the elements per thread (2 x
  // for 8-byte values) makes 4 x fewer tiles for the chain to cross. Two
  // exceptions (bench/RESULTS.md, twenty-ninth session: 20 scans, five
  // tile shapes each):
  // - chained tiles the maps prove no vector for (a row's start not
  //   aligned to one, a reversed line) access an element an instruction,
  //   each warp access spanning Vector x its bytes: 128 threads x half the
  //   items were 36-49 % faster than 256 x 64 on every such scan measured
  //   (rows of 50257 and of 1000003, 4 to 128 of them; H100 and H200);
  // - wide tiles that would fill under half the SMs leave the grid bound
  //   by one tile's latency: half the items make twice the tiles, each
  //   half the work (64 tiles of bf16 [8,131072]: 3-6 % faster; grids of
  //   128 tiles and more lost with them).
  const int64_t Base = std::max<int64_t>(16, SP.Vector);
  const bool Chained = N > 256 * Base;
  int64_t Wide = ElementAccesses || byteWidth(S.Type) > 4 ? 2 * Base : 4 * Base;
  const bool FewTiles =
      !ElementAccesses && Wide > Base &&
      2 * SP.Lines * ceilDiv(N, 256 * Wide) <= In.Device.SmCount;
  if (FewTiles)
    Wide /= 2;
  const int64_t Items = std::max(
      SP.Vector,
      choose(In, P, "IDXMAP_SCAN_ITEMS", "items", Chained ? Wide : Base,
             FewTiles && Chained
                 ? "elements a thread holds in registers: wide tiles would "
                   "fill under half the SMs, half as many in twice the "
                   "tiles"
             : ElementAccesses
                 ? "elements a thread holds in registers: chained tiles "
                   "accessed element by element (the maps prove no "
                   "vector), smaller tiles in more blocks"
             : Chained ? "elements a thread holds in registers: a line of "
                         "several tiles, large tiles for the look-back to "
                         "cross few"
                       : "elements a thread holds in registers: one 16-byte "
                         "vector or 16 elements, all loads in flight before "
                         "the first combine"));
  SP.Runs = Items / SP.Vector;
  // 256 threads (8 warps: the block scan crosses 8 partials), fewer for a
  // row that one smaller block covers.
  const int64_t Fit = std::max<int64_t>(32, nextPow2(ceilDiv(N, Items)));
  const int64_t Most = ElementAccesses ? 128 : 256;
  const int64_t T = choose(
      In, P, "IDXMAP_SCAN_THREADS", "threads", std::min<int64_t>(Most, Fit),
      Fit < Most        ? "a block covers a row"
      : ElementAccesses ? "4 warps per tile: element accesses"
                        : "8 warps per tile");
  SP.LanesPerLine = T;
  SP.TileLength = T * Items;
  SP.TilesPerLine = ceilDiv(N, SP.TileLength);
  P.choose("tile", SP.TileLength, chainWhy(SP));
  if (SP.raggedLines() && SP.TilesPerLine > 1)
    SP.LastTileShift = P.choose(
        "last_tile_shift", SP.TilesPerLine * SP.TileLength - N,
        "the line's partial last tile is read as the full tile ending at "
        "the line's end, its first items (the previous tile's) masked");
  SP.PackedDescriptors = byteWidth(S.Type) <= 4;
  SP.Groups = SP.Lines;
  return T;
}

/// The index of \p S's operand at position \p Pos of the line numbered
/// \p Outer among the dims more major than the scanned one and \p Inner
/// among those more minor (each delinearized over its own dims, so that
/// no division crosses the scanned dim).
std::vector<Expr> scanIndex(Context &Ctx, const ScanInfo &S, Expr Outer,
                            Expr Pos, Expr Inner) {
  const Shape &X = S.Input->shape();
  const std::vector<int64_t> M2m = X.layoutOrDefault();
  const size_t At =
      size_t(std::find(M2m.begin(), M2m.end(), S.Dim) - M2m.begin());
  std::vector<Expr> Idx(X.rank(), Ctx.constant(0));
  Idx[size_t(S.Dim)] = Pos;
  auto Spread = [&](Expr Lin, size_t From, size_t To) {
    // Physical dims M2m[To - 1] (major) .. M2m[From] (minor).
    std::vector<int64_t> Sizes;
    for (size_t K = To; K-- > From;)
      Sizes.push_back(X.Dims[size_t(M2m[K])]);
    std::vector<Expr> Parts = delinearize(Ctx, Lin, Sizes);
    for (size_t K = 0; K < Parts.size(); ++K)
      Idx[size_t(M2m[To - 1 - K])] = Parts[K];
  };
  Spread(Inner, 0, At);
  Spread(Outer, At + 1, M2m.size());
  return Idx;
}

/// The tiled row scan (ScanMode::BlockTiles): the tile's shape, the thread
/// map, the proven load and store widths and the launch.
void planBlockTilesWith(const PlanInputs &In, KernelPlan &P, ScanPlan &SP,
                        bool ElementAccesses) {
  const ScanInfo &S = *In.A.Scan;
  Context &Ctx = In.Ctx;
  const int64_t N = S.Length;
  SP.Mode = ScanMode::BlockTiles;
  const int64_t T = chooseRowTile(In, P, SP, ElementAccesses);
  // (th_x, tile)[run, vec] -> position seg * TileLength + the item's
  // offset in the tile, of line tile floordiv TilesPerLine (from the end
  // when reversed).
  Expr Tile = Ctx.dim(1);
  SP.TileOffset = rowTileOffset(Ctx, SP, T);
  Expr Pos = (Tile % SP.TilesPerLine) * SP.TileLength + tileOffsetSum(SP);
  // The line delinearized over the dims more major than the scanned one
  // on its own (the scanned dim is the minor-most but for unit dims): a
  // reversed position then stays one expression, where delinearizing the
  // linear offset would leave a floordiv and a mod by the line's length
  // that the position's constraint alone cannot remove.
  Expr Line = Tile.floorDiv(SP.TilesPerLine);
  std::vector<Constraint> Cs;
  if (SP.TilesPerLine * SP.TileLength != N)
    Cs.push_back({Pos, {0, N - 1}});
  finishTiles(In, P, SP, T,
              scanIndex(Ctx, S, Line,
                        S.Reverse ? Ctx.constant(N - 1) - Pos : Pos,
                        Ctx.constant(0)),
              std::move(Cs), "one block per row");
}

/// Whether a streamed parameter or a root is accessed narrower than the
/// tile's vectors.
bool elementAccesses(const FusionAnalysis &A, const KernelPlan &P,
                     const ScanPlan &SP) {
  for (const HloInstruction *Pm : A.Scan->streamedParameters())
    if (P.Loop && size_t(Pm->parameterNumber()) < P.Loop->LoadWidth.size() &&
        P.Loop->LoadWidth[size_t(Pm->parameterNumber())] < SP.Vector)
      return true;
  for (int64_t W : SP.StoreWidth)
    if (W < SP.Vector)
      return true;
  return false;
}

/// planBlockTilesWith, planned again with smaller tiles where chained
/// tiles turn out to access elements one by one (chooseRowTile).
void planBlockTiles(const PlanInputs &In, KernelPlan &P, ScanPlan &SP) {
  const KernelPlan P0 = P;
  const ScanPlan SP0 = SP;
  planBlockTilesWith(In, P, SP, false);
  if (!SP.lookBack() || SP.Vector == 1 || !elementAccesses(In.A, P, SP) ||
      isTuned(In.Overrides, "IDXMAP_SCAN_ITEMS") ||
      isTuned(In.Overrides, "IDXMAP_SCAN_THREADS"))
    return;
  P = P0;
  SP = SP0;
  planBlockTilesWith(In, P, SP, true);
}

/// The column tiles' shape (ScanMode::ColumnTiles): the vector of
/// columns, the threads across them (\p TX) and in all (returned), the
/// positions a thread, the tile and the tiles of a line.
int64_t chooseColumnTile(const PlanInputs &In, KernelPlan &P, ScanPlan &SP,
                         int64_t &TX) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const ScanInfo &S = *A.Scan;
  const int64_t N = S.Length, Outer = S.Dims[0], Inner = S.Dims[2];
  // Whole vectors of neighbouring columns: the widest that divides the
  // minor extent (a vector never straddles two lines' groups).
  int64_t V = std::max<int64_t>(1, 16 / widestBytes(C, A));
  while (V > 1 && Inner % V != 0)
    V /= 2;
  SP.Vector = P.choose("vector", V,
                       "neighbouring columns a thread holds (a 16-byte "
                       "vector, or the widest that divides " +
                           std::to_string(Inner) + ")");
  TX = std::min<int64_t>(32, nextPow2(ceilDiv(Inner, V)));
  SP.LinesPerTile = TX * SP.Vector;
  const int64_t GroupsPerOuter = ceilDiv(Inner, SP.LinesPerTile);
  SP.Groups = Outer * GroupsPerOuter;
  const int64_t T = choose(
      In, P, "IDXMAP_SCAN_THREADS", "threads", std::min<int64_t>(256, 32 * TX),
      TX == 32 ? "8 warps, each a row of 32 x vector columns"
               : "row groups of " + std::to_string(TX) +
                     " threads across the columns, at most 32 of them");
  const int64_t TY = std::max<int64_t>(1, T / TX);
  // Each thread's elements: 64 in registers (32 of 8 bytes), all loads in
  // flight before the first combine, and few tiles for a look-back to
  // cross; never more positions than the line has.
  const int64_t Items = choose(
      In, P, "IDXMAP_SCAN_ITEMS", "items", byteWidth(S.Type) > 4 ? 32 : 64,
      "elements a thread holds in registers: positions x vector");
  SP.Runs =
      std::max<int64_t>(1, std::min(ceilDiv(Items, SP.Vector), ceilDiv(N, TY)));
  SP.TileLength = TY * SP.Runs;
  SP.TilesPerLine = ceilDiv(N, SP.TileLength);
  SP.LanesPerLine = TY;
  P.choose("tile", SP.TileLength,
           std::to_string(SP.LinesPerTile) + " columns x " +
               std::to_string(SP.TileLength) + " positions; " + chainWhy(SP));
  SP.PackedDescriptors = byteWidth(S.Type) <= 4;
  return T;
}

/// The tiled scan along a non-minor dim (ScanMode::ColumnTiles).
void planColumnTiles(const PlanInputs &In, KernelPlan &P, ScanPlan &SP) {
  const ScanInfo &S = *In.A.Scan;
  Context &Ctx = In.Ctx;
  const int64_t N = S.Length, Inner = S.Dims[2];
  SP.Mode = ScanMode::ColumnTiles;
  int64_t TX = 1;
  const int64_t T = chooseColumnTile(In, P, SP, TX);
  const int64_t GroupsPerOuter = ceilDiv(Inner, SP.LinesPerTile);
  // (th_x, tile)[run, vec] -> position seg * TileLength + ty * Runs + run
  // of column cg * LinesPerTile + tx * Vector + vec of outer index o, where
  // seg = tile floordiv Groups, (o, cg) = the group tile mod Groups.
  Expr Th = Ctx.dim(0), Tile = Ctx.dim(1);
  Expr Seg = Tile.floorDiv(SP.Groups), Group = Tile % SP.Groups;
  Expr Pos = Seg * SP.TileLength + Th.floorDiv(TX) * SP.Runs + Ctx.symbol(0);
  Expr Col = (Group % GroupsPerOuter) * SP.LinesPerTile +
             (Th % TX) * SP.Vector + Ctx.symbol(1);
  std::vector<Constraint> Cs;
  if (SP.TilesPerLine * SP.TileLength != N)
    Cs.push_back({Pos, {0, N - 1}});
  if (GroupsPerOuter * SP.LinesPerTile != Inner)
    Cs.push_back({Col, {0, Inner - 1}});
  finishTiles(In, P, SP, T,
              scanIndex(Ctx, S, Group.floorDiv(GroupsPerOuter),
                        S.Reverse ? Ctx.constant(N - 1) - Pos : Pos, Col),
              std::move(Cs), "one block per group of columns");
}

/// The segmented tiles' shape (ScanMode::SegmentedTiles): elements a
/// thread, threads (returned), the rows of a tile.
int64_t chooseSegmentedTile(const PlanInputs &In, KernelPlan &P, ScanPlan &SP) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const int64_t N = A.Scan->Length, Lines = SP.Lines;
  SP.Vector = std::max<int64_t>(1, 16 / widestBytes(C, A));
  // Whole rows fill a tile of 2^k threads when a thread's elements are a
  // multiple of the row's odd part (and of the vector): 12 for rows of
  // 24 f32, 16 for rows of 8; past 64 (a prime row of 31), 16 elements
  // and a partly filled tile, its items guarded.
  int64_t Odd = N;
  while (Odd % 2 == 0)
    Odd /= 2;
  const int64_t Lcm = SP.Vector / std::gcd(SP.Vector, Odd) * Odd;
  const int64_t Fill = Lcm <= 64 ? Lcm * std::max<int64_t>(1, 16 / Lcm) : 16;
  const int64_t Items =
      isTuned(In.Overrides, "IDXMAP_SCAN_ITEMS")
          ? choose(In, P, "IDXMAP_SCAN_ITEMS", "items", 16, "")
          : P.choose("items", std::max(Fill, SP.Vector),
                     Lcm <= 64 ? "elements a thread holds: a "
                                 "multiple of the row's odd part "
                                 "and of the vector, so that whole "
                                 "rows fill the tile"
                               : "elements a thread holds: 16 "
                                 "(whole rows fill the tile only "
                                 "partly)");
  SP.Runs = std::max<int64_t>(1, Items / SP.Vector);
  const int64_t PerThread = SP.Runs * SP.Vector;
  const int64_t Fit =
      std::max<int64_t>(32, nextPow2(ceilDiv(Lines * N, PerThread)));
  const int64_t T = choose(
      In, P, "IDXMAP_SCAN_THREADS", "threads", std::min<int64_t>(256, Fit),
      Fit < 256 ? "a block covers every row" : "8 warps per tile");
  SP.LinesPerTile = std::max<int64_t>(1, T * PerThread / N);
  SP.TileLength = SP.LinesPerTile * N;
  SP.LanesPerLine = T;
  SP.TilesPerLine = 1;
  SP.Groups = ceilDiv(Lines, SP.LinesPerTile);
  P.choose("tile", SP.TileLength,
           std::to_string(SP.LinesPerTile) + " rows of " + std::to_string(N) +
               " end to end, a segmented scan; " + std::to_string(SP.Groups) +
               (SP.Groups == 1 ? " tile" : " tiles"));
  return T;
}

/// Short rows laid end to end (ScanMode::SegmentedTiles).
void planSegmentedTiles(const PlanInputs &In, KernelPlan &P, ScanPlan &SP) {
  const ScanInfo &S = *In.A.Scan;
  Context &Ctx = In.Ctx;
  const int64_t N = S.Length, Lines = SP.Lines;
  SP.Mode = ScanMode::SegmentedTiles;
  const int64_t T = chooseSegmentedTile(In, P, SP);
  const int64_t PerThread = SP.Runs * SP.Vector;
  // (th_x, tile)[run, vec] -> element pos of the tile's rows laid end to
  // end, pos the item's offset in the tile (a reverse scan counts each row
  // from its end).
  Expr Tile = Ctx.dim(1);
  SP.TileOffset = rowTileOffset(Ctx, SP, T);
  Expr Pos = tileOffsetSum(SP);
  Expr Lin = Tile * SP.TileLength + Pos;
  if (S.Reverse)
    Lin = (Tile * SP.LinesPerTile + Pos.floorDiv(N)) * N +
          (Ctx.constant(N - 1) - Pos % N);
  std::vector<Constraint> Cs;
  if (SP.TileLength != T * PerThread)
    Cs.push_back({Pos, {0, SP.TileLength - 1}});
  if (SP.Groups * SP.LinesPerTile != Lines)
    Cs.push_back({Tile * SP.TileLength + Pos, {0, Lines * N - 1}});
  finishTiles(In, P, SP, T, delinearizePhysical(Ctx, Lin, S.Input->shape()),
              std::move(Cs), "one block per tile");
}
} // namespace

std::optional<std::string> planScan(const PlanInputs &In, KernelPlan &P) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const ScanInfo &S = *A.Scan;
  const Shape &X = S.Input->shape();
  const int64_t Lines = S.Dims[0] * S.Dims[2], N = S.Length;
  const std::string Hero =
      std::string(opcodeName(S.Hero->opcode())) + " '" + S.Hero->name() + "'";
  if (X.numElements() == 0)
    return Hero + " of " + X.str() + " has no elements";
  ScanPlan SP;
  SP.Lines = Lines;
  SP.Length = N;
  SP.Reverse = S.Reverse;
  Context &Ctx = In.Ctx;
  if ((S.Type == PrimitiveType::F16 || S.Type == PrimitiveType::BF16) &&
      (S.Combiner == HloOpcode::Add || S.Combiner == HloOpcode::Multiply)) {
    SP.Accumulate32 = true;
    P.choose("accumulate_bits", 32,
             "a 2-byte float sum (product) accumulates in f32, each output "
             "rounded once");
  }
  int64_t MaxElements = X.numElements();
  for (const HloInstruction *Pm : C.parameters())
    MaxElements = std::max(MaxElements, Pm->shape().numElements());
  P.BackEndOptLevel = 3;
  // The tiled kernels need the combiner's identity; a variadic window (or
  // an add of pred) takes a warp per row or a thread per line.
  const bool Tiled = hasIdentity(S);

  // Short rows: several per tile, end to end.
  if (Tiled && S.isRow() &&
      N <= tuned(In.Overrides, "IDXMAP_SCAN_SHARED_ROWS", 31)) {
    planSegmentedTiles(In, P, SP);
    chooseIndexWidth(P, std::max(MaxElements, SP.tiles() * P.Block[0]));
    P.Scan = SP;
    return std::nullopt;
  }
  // A row longer than a warp's 16 elements per lane: tiles of the row per
  // block, all its loads in flight at once (a warp walking the row chunk
  // by chunk waits for each chunk's loads).
  if (Tiled && S.isRow() && N > 32 * 16) {
    planBlockTiles(In, P, SP);
    chooseIndexWidth(P, std::max(MaxElements, SP.tiles() * SP.LanesPerLine));
    P.Scan = SP;
    return std::nullopt;
  }
  // Along a non-minor dim: tiles of neighbouring columns, each thread a
  // run of positions of a vector of columns (all its loads in flight).
  if (Tiled && !S.isRow()) {
    planColumnTiles(In, P, SP);
    chooseIndexWidth(P, std::max(MaxElements, SP.tiles() * P.Block[0]));
    P.Scan = SP;
    return std::nullopt;
  }
  // One thread walks a whole line (a row shorter than a warp, or a column
  // of a type without the combiner's identity); a warp walks a row of any
  // length, and a column longer than a thread should walk alone: its
  // loads are strided (a sector per lane), but it takes 32 times fewer
  // dependent steps, which is what bounds a line per thread there (its
  // lines are too few to cover the latency of each step's load).
  constexpr int64_t MaxSerialLength = 16384;
  const bool LongColumn = !S.isRow() && N > MaxSerialLength;
  const bool Warp = (S.isRow() && N >= 32) || LongColumn;
  SP.Mode = Warp ? ScanMode::WarpPerRow : ScanMode::LinePerThread;
  SP.LanesPerLine = P.choose(
      "lanes_per_line", Warp ? 32 : 1,
      S.isRow() ? (N >= 32 ? "a row scan: a warp per row, 32 consecutive "
                             "elements a step, a shfl.sync.up scan of each"
                           : "a row shorter than a warp: a thread per row")
      : LongColumn
          ? "a column of " + std::to_string(N) +
                " positions with no identity for its combiner (no column "
                "tiles): a warp per column, 32 consecutive positions a step "
                "(strided loads), " +
                std::to_string(ceilDiv(N, 32)) +
                " dependent steps instead of a thread's " + std::to_string(N)
          : "a column scan: a thread per line, lanes on neighbouring "
            "elements of the minor dim (every step coalesced)");
  int64_t T, Blocks;
  Expr Lin;
  std::vector<Constraint> Cs;
  std::vector<Variable> Range;
  if (SP.LanesPerLine == 32) {
    const int64_t Rows =
        P.choose("lines_per_block", std::min<int64_t>(4, Lines),
                 S.isRow() ? "up to 4 warps a block, a row each"
                           : "up to 4 warps a block, a column each");
    T = 32 * Rows;
    Blocks = ceilDiv(Lines, Rows);
    const int64_t Chunks = ceilDiv(N, 32);
    // (th_x, bl_x)[it] -> element it * 32 + lane of line bl_x * Rows +
    // warp, in the operand's physical order: (outer * N + pos) * inner + e
    // (a row: inner 1).
    Expr Line = Ctx.dim(1) * Rows + Ctx.dim(0).floorDiv(32);
    Expr Step = Ctx.symbol(0) * 32 + Ctx.dim(0) % 32;
    Expr Pos = S.Reverse ? Ctx.constant(N - 1) - Step : Step;
    Lin = S.isRow() ? Line * N + Pos
                    : (Line.floorDiv(S.Dims[2]) * N + Pos) * S.Dims[2] +
                          Line % S.Dims[2];
    if (Chunks * 32 != N)
      Cs.push_back({Step, {0, N - 1}});
    if (Blocks * Rows != Lines)
      Cs.push_back({Line, {0, Lines - 1}});
    Range.push_back({"it", {0, Chunks - 1}});
  } else {
    T = P.choose("threads", std::min<int64_t>(128, Lines),
                 "a line per thread, serially");
    Blocks = ceilDiv(Lines, T);
    // (th_x, bl_x)[pos] -> the element `pos` of line `bl_x * T + th_x` in
    // the operand's physical order: (outer * N + pos) * inner + e.
    Expr Line = Ctx.dim(1) * T + Ctx.dim(0);
    Lin = (Line.floorDiv(S.Dims[2]) * N + Ctx.symbol(0)) * S.Dims[2] +
          Line % S.Dims[2];
    if (Blocks * T != Lines)
      Cs.push_back({Line, {0, Lines - 1}});
    Range.push_back({"pos", {0, N - 1}});
  }
  P.Main.ThreadsPerBlock = T;
  P.Main.Blocks = Blocks;
  P.Main.Target = S.Input;
  P.Main.Map =
      IndexingMap(Ctx, {{"th_x", {0, T - 1}}, {"bl_x", {0, Blocks - 1}}},
                  std::move(Range), {}, delinearizePhysical(Ctx, Lin, X), Cs);
  simplify(P.Main.Map);
  GridStride GS = gridStride(Blocks, In.Device.MaxGrid[0]);
  P.choose("blocks", GS.Grid,
           GS.Iterations > 1
               ? "grid.x limit: " + std::to_string(GS.Iterations) +
                     " blocks of lines per block (grid stride)"
               : "one block per " + std::to_string(T / SP.LanesPerLine) +
                     " lines");
  chooseIndexWidth(P, MaxElements);
  P.Loop =
      LoopPlan{true, std::vector<int64_t>(C.parameters().size(), 1), {}, {}};
  P.Scan = SP;
  P.Grid[0] = GS.Grid;
  P.Block[0] = T;
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
