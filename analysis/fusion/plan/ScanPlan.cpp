//===- ScanPlan.cpp - Prefix scans: a line per thread or warp -------------===//
//
// Part of idxmap. The scan emitter's plan (ScanPlan in KernelPlan.h), the
// first scan kernels of issue 18. A scan along a non-minor dim gives each
// thread one line, scanned serially with the carry in a register; lines
// are numbered in the layout's order (the dims more major than the scanned
// one, then those more minor), so that the 32 lanes of a warp sit on 32
// neighbouring elements of the minor dim and each step is one coalesced
// access. A row scan of at least 32 elements gives each warp a row, walked
// in chunks of 32 consecutive elements scanned with shuffles. The block
// scan of rows longer than a warp's items takes tiles of a row per block,
// chained by decoupled look-back when a row spans several (ScanMode in
// KernelPlan.h, docs/KERNEL_PLAN.md).
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/Delinearize.h"
#include "idxmap/Simplify.h"

#include <algorithm>

namespace idxmap {
namespace plan {

namespace {

/// The instructions \p I is computed from, itself included (the prologue
/// of the scanned operand).
std::set<const HloInstruction *> ancestors(const HloInstruction *I) {
  std::set<const HloInstruction *> Seen;
  std::vector<const HloInstruction *> Stack = {I};
  while (!Stack.empty()) {
    const HloInstruction *X = Stack.back();
    Stack.pop_back();
    if (!Seen.insert(X).second)
      continue;
    for (const HloInstruction *O : X->operands())
      Stack.push_back(O);
  }
  return Seen;
}

/// Whether the tiled kernel can run \p S: its combiner has an identity in
/// the scan's type (the elements past a line's end and the prefixes before
/// a tile take it).
bool hasIdentity(const ScanInfo &S) {
  return S.Type != PrimitiveType::Pred ||
         (S.Combiner == HloOpcode::Maximum || S.Combiner == HloOpcode::Minimum);
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

/// The tiled row scan (ScanMode::BlockTiles): the tile's shape, the thread
/// map, the proven load and store widths and the launch.
void planBlockTiles(const PlanInputs &In, KernelPlan &P, ScanPlan &SP) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const ScanInfo &S = *A.Scan;
  Context &Ctx = In.Ctx;
  const int64_t N = S.Length;
  SP.Mode = ScanMode::BlockTiles;
  SP.Vector = std::max<int64_t>(1, 16 / widestBytes(C, A));
  // A line longer than one tile of 256 x 16 chains its tiles by look-back,
  // whose latency each tile pays once: 4 x the elements per thread (2 x
  // for 8-byte values) makes 4 x fewer tiles for the chain to cross.
  const int64_t Base = std::max<int64_t>(16, SP.Vector);
  const bool Chained = N > 256 * Base;
  const int64_t Wide = byteWidth(S.Type) > 4 ? 2 * Base : 4 * Base;
  const int64_t Items = std::max(
      SP.Vector,
      choose(In, P, "IDXMAP_SCAN_ITEMS", "items", Chained ? Wide : Base,
             Chained ? "elements a thread holds in registers: a line of "
                       "several tiles, large tiles for the look-back to "
                       "cross few"
                     : "elements a thread holds in registers: one 16-byte "
                       "vector or 16 elements, all loads in flight before "
                       "the first combine"));
  SP.Runs = Items / SP.Vector;
  // 256 threads (8 warps: the block scan crosses 8 partials), fewer for a
  // row that one smaller block covers.
  const int64_t Fit = std::max<int64_t>(32, nextPow2(ceilDiv(N, Items)));
  const int64_t T = choose(
      In, P, "IDXMAP_SCAN_THREADS", "threads", std::min<int64_t>(256, Fit),
      Fit < 256 ? "a block covers a row" : "8 warps per tile");
  SP.LanesPerLine = T;
  SP.TileLength = T * Items;
  SP.TilesPerLine = ceilDiv(N, SP.TileLength);
  P.choose("tile", SP.TileLength,
           SP.TilesPerLine > 1
               ? std::to_string(SP.TilesPerLine) +
                     " tiles per line, chained by decoupled look-back"
               : "one tile per line: no look-back");
  SP.PackedDescriptors = byteWidth(S.Type) <= 4;
  const int64_t Tiles = SP.tiles();
  // (th_x, tile)[run, vec] -> position
  //   seg * TileLength + (th_x floordiv 32) * 32 * Items
  //   + run * 32 * Vector + (th_x mod 32) * Vector + vec
  // of line tile floordiv TilesPerLine (from the end when reversed).
  Expr Tile = Ctx.dim(1);
  Expr Pos = (Tile % SP.TilesPerLine) * SP.TileLength +
             Ctx.dim(0).floorDiv(32) * (32 * Items) +
             Ctx.symbol(0) * (32 * SP.Vector) + (Ctx.dim(0) % 32) * SP.Vector +
             Ctx.symbol(1);
  Expr Line = Tile.floorDiv(SP.TilesPerLine);
  Expr Lin = Line * N + (S.Reverse ? Ctx.constant(N - 1) - Pos : Pos);
  std::vector<Constraint> Cs;
  if (SP.TilesPerLine * SP.TileLength != N)
    Cs.push_back({Pos, {0, N - 1}});
  P.Main.ThreadsPerBlock = T;
  P.Main.Blocks = Tiles;
  P.Main.Vector = SP.Vector;
  P.Main.Target = S.Input;
  P.Main.Map =
      IndexingMap(Ctx, {{"th_x", {0, T - 1}}, {"tile", {0, Tiles - 1}}},
                  {{"run", {0, SP.Runs - 1}}, {"vec", {0, SP.Vector - 1}}}, {},
                  delinearizePhysical(Ctx, Lin, S.Input->shape()), Cs);
  simplify(P.Main.Map);

  // Loads: a parameter of the prologue alone, read through one map, takes
  // the vectors the maps prove; stores: each root's proven width.
  const std::set<const HloInstruction *> Pro = ancestors(S.Input),
                                         InitPro = ancestors(S.Init);
  GroupedIndexing G = computeGroupedIndexing(Ctx, C, S.Input);
  std::vector<int64_t> Loads(C.parameters().size(), 1);
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
  }
  const std::vector<int64_t> Sizes = S.Input->shape().Dims;
  for (const HloInstruction *R : A.Roots)
    SP.StoreWidth.push_back(std::min(
        SP.Vector, provenAccessWidth(P.Main, IndexingMap::identity(Ctx, Sizes),
                                     R->shape())));
  P.Loop = LoopPlan{true, std::move(Loads)};
  GridStride GS = gridStride(Tiles, In.Device.MaxGrid[0]);
  P.Grid[0] = P.choose("blocks", GS.Grid,
                       SP.lookBack()
                           ? "one block per tile, tiles taken in launch order "
                             "from the workspace's counter"
                           : "one block per row");
  P.Block[0] = T;
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
  int64_t MaxElements = X.numElements();
  for (const HloInstruction *Pm : C.parameters())
    MaxElements = std::max(MaxElements, Pm->shape().numElements());
  P.BackEndOptLevel = 3;

  // A row longer than a warp's 16 elements per lane: tiles of the row per
  // block, all its loads in flight at once (a warp walking the row chunk
  // by chunk waits for each chunk's loads).
  if (S.isRow() && N > 32 * 16 && hasIdentity(S)) {
    planBlockTiles(In, P, SP);
    chooseIndexWidth(P, std::max(MaxElements, SP.tiles() * SP.LanesPerLine));
    P.Scan = SP;
    return std::nullopt;
  }
  // One thread walks a whole column: a longer one needs the column tiles,
  // not built yet.
  constexpr int64_t MaxSerialLength = 16384;
  if (N > MaxSerialLength)
    return Hero + " scans lines of " + std::to_string(N) +
           " elements along a non-minor dim (or of a type without the "
           "combiner's identity); a thread scans at most " +
           std::to_string(MaxSerialLength) +
           " (column tiles chained by look-back are not built yet, issue 18)";
  // A row of at least a warp's width: a warp per row, 32 consecutive
  // elements a step (coalesced) scanned with shuffles.
  const bool Warp = S.isRow() && N >= 32;
  SP.Mode = Warp ? ScanMode::WarpPerRow : ScanMode::LinePerThread;
  SP.LanesPerLine = P.choose(
      "lanes_per_line", Warp ? 32 : 1,
      S.isRow() ? (N >= 32 ? "a row scan: a warp per row, 32 consecutive "
                             "elements a step, a shfl.sync.up scan of each"
                           : "a row shorter than a warp: a thread per row")
                : "a column scan: a thread per line, lanes on neighbouring "
                  "elements of the minor dim (every step coalesced)");
  int64_t T, Blocks;
  Expr Lin;
  std::vector<Constraint> Cs;
  std::vector<Variable> Range;
  if (SP.LanesPerLine == 32) {
    const int64_t Rows =
        P.choose("lines_per_block", std::min<int64_t>(4, Lines),
                 "4 warps of 128 threads, a row each");
    T = 32 * Rows;
    Blocks = ceilDiv(Lines, Rows);
    const int64_t Chunks = ceilDiv(N, 32);
    // (th_x, bl_x)[it] -> element it * 32 + lane of row bl_x * Rows + warp.
    Expr Line = Ctx.dim(1) * Rows + Ctx.dim(0).floorDiv(32);
    Expr Step = Ctx.symbol(0) * 32 + Ctx.dim(0) % 32;
    Expr Pos = S.Reverse ? Ctx.constant(N - 1) - Step : Step;
    Lin = Line * N + Pos;
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
  P.Loop = LoopPlan{true, std::vector<int64_t>(C.parameters().size(), 1)};
  P.Scan = SP;
  P.Grid[0] = GS.Grid;
  P.Block[0] = T;
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
