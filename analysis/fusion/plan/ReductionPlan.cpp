//===- ReductionPlan.cpp - Row, multi-row, full and column reductions -----===//
//
// Part of idxmap. The reduction emitter's plan (the scheme itself is
// described at the top of codegen/emitters/ReductionEmitter.cpp): threads
// per row, rows per block and per thread, vector iterations in flight, the
// chunking of a full reduction, the column tiles and the split of the
// reduced dim, from the canonical dims, the element types and the device.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/Compose.h"
#include "idxmap/CostModel.h"
#include "idxmap/Delinearize.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Simplify.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace idxmap {
namespace plan {
namespace {

using Mode = ReductionMode;

/// Elements per 16-byte access of the widest multi-element parameter.
int64_t maxVectorElements(const FusionAnalysis &A) {
  return std::max<int64_t>(1, 16 / widestParameterBytes(*A.Computation));
}

/// The first reduce hero, whose operand the kernel reads.
const HloInstruction *firstReduceHero(const FusionAnalysis &A) {
  for (const HloInstruction *H : A.Heroes)
    if (H->opcode() == HloOpcode::Reduce)
      return H;
  return nullptr;
}

/// How a multi-block reduction's partials are folded (ReductionPlan::
/// TicketFold): by the block with the last ticket, by default. Measured
/// beside the peers on the H100 (2026-12-07, suite groups of 3 with an A/A
/// control): a full sum of f32[1000000] (123 blocks, in L2) 3.52 us ->
/// 2.36; full reductions read from DRAM level (bf16[33554431] 23.39
/// against 23.33). Split column reductions, once the fold polled at most 8
/// flag words a thread at a time (32 had cost them occupancy): faster on
/// all 18 tried (idxmap run --bench, two or three rounds), 0.77-0.97 x the
/// arrival fold's time, f32[16384,16384] 0.996; bn stats f32[100352,64]
/// 12.5 -> 11.3 us.
bool chooseTicketFold(const PlanInputs &In, KernelPlan &P, bool Full) {
  return choose(In, P, "IDXMAP_RED_TICKET_FOLD", "ticket_fold", 1,
                Full ? "a full reduction: the block with the last ticket "
                       "folds the partials as their flags land"
                     : "a split column reduction: the block with each "
                       "tile's last ticket folds its chunks' partials as "
                       "their flags land") != 0;
}

/// Modes of rows: how many threads per row, rows per block and per thread.
void planRowShape(const PlanInputs &In, KernelPlan &P, ReductionPlan &RP,
                  const Shape &Input) {
  const int64_t Sms = In.Device.SmCount;
  bool Full = In.A.Kind == EmitterKind::FullReduction;
  int64_t D2 = RP.Dims[2], Vec = RP.Vector, NVec = D2 / Vec;
  int64_t &G = RP.LanesPerRow, &RPB = RP.RowsPerBlock, &K = RP.RowsPerThread;
  int64_t &U = RP.Unroll, T = 0, Blocks = 1, Rows = RP.Dims[1];
  // Full reductions of inputs that split into at least 2 x SMs chunks: a
  // block per contiguous chunk (a row reduction of [N / chunk, chunk], as
  // XLA rewrites it), then the last block combines the chunks' partials.
  // H200, 2026-11-30, f32[2^28], two rounds: 236.1-236.2 us against
  // 237.9-238.3 striding over the whole input with 1024 threads;
  // 64 KiB chunks: 239.3-239.7 (256 threads), 246 (512), 242 (1024);
  // 32 KiB: 264; 128 KiB with 256 threads 241.5, with 1024 260.5;
  // 256 KiB with 1024 threads 236.4-236.6, with 512 238.9.
  int64_t ChunkBytes =
      Full ? choose(In, P, "IDXMAP_RED_FULL_CHUNK", "chunk_bytes", 131072,
                    "bytes per block of a chunked full reduction")
           : 0;
  int64_t Chunk = ChunkBytes / byteWidth(Input.Type);
  int64_t ChunkThreads = Full
                             ? choose(In, P, "IDXMAP_RED_FULL_CHUNK_THREADS",
                                      "chunk_threads", 512, "threads per chunk")
                             : 0;
  if (Full && Chunk > 0 && D2 % Chunk == 0 && D2 / Chunk >= 2 * Sms &&
      Chunk % (ChunkThreads * Vec) == 0) {
    RP.Mode = Mode::BlockPerRow;
    RP.Dims[1] = Rows = D2 / Chunk;
    RP.Dims[2] = D2 = Chunk;
    NVec = D2 / Vec;
    G = T = ChunkThreads;
    Blocks = Rows;
    P.choose("chunks", Rows, "a block per chunk: at least 2 per SM");
  } else if (Full) {
    RP.Mode = Mode::WholeInput;
    // 1024 threads when that grid (2 blocks per SM, 4 loads each) is full,
    // else 512. H200, 2026-11-30, f32[2^28]: 237.2-237.5 us with 1024
    // threads (unroll 1 to 16) against 238.2-238.4 with 512; unroll 4
    // keeps the IR (and the compile time) of 512 x 4.
    bool Big = NVec >= Sms * 2 * 1024 * 4;
    T = choose(In, P, "IDXMAP_RED_FULL_THREADS", "threads", Big ? 1024 : 512,
               Big ? "2 blocks per SM of 1024 threads x 4 vectors are full"
                   : "too few vectors to fill 2 blocks of 1024 per SM");
    U = choose(In, P, "IDXMAP_RED_FULL_UNROLL", "unroll", 4,
               "vector loads per thread per step");
    int64_t PerSm =
        choose(In, P, "IDXMAP_RED_FULL_BLOCKS_PER_SM", "blocks_per_sm",
               std::max<int64_t>(1, 2048 / T), "a full SM of threads");
    Blocks = std::max<int64_t>(
        1, std::min<int64_t>(Sms * PerSm, ceilDiv(NVec, T * U)));
    G = T * Blocks;
  } else {
    // A warp per row up to 256 vectors, a block of 256 per row up to 2047
    // vectors, else of 512 (H200, 2026-11-30: bf16[16384,4096], 512
    // vectors per row: 31.3 us with a warp per row, 30.5 with 256 threads,
    // 39.1 with 512; f32[8192,8192], 2048 vectors: 60.38-60.42 us with 512
    // threads against 60.69-60.91 with 256, 60.7 with 1024, 61.3 with 128).
    // Counted in 16-byte units of the row, not in vectors: a row whose
    // length forbids wide vectors (77 bytes of s8, 333 of s32) still gives
    // each lane several loads (H200, 2026-12-01: row max s8[32768,77] 4.96
    // us with 32 lanes, 1.98 with 8; s32[16384,333] 14.83 with 256, 11.34
    // with 128).
    // Rows of 257 to 511 units take 128 threads: each then has 2 to 4
    // loads, where 256 leave the second step of most lanes idle (H200,
    // 2026-12-02: row sum bf16[2048,3000] accumulated in f32, 375 units,
    // 3.45 us with 256 lanes, 2.92 with 128, 2.96 with 64; XLA 3.00).
    // Units of the parameters' widest element: what the loads move.
    // A row of at most 4 units that one thread reads in at most 8 loads
    // (the most a thread keeps in flight) takes one lane: its loads are
    // all in flight at once, no lane idles (3 units on 4 lanes) and no
    // shuffle combines. A warp's 32 rows are then at most 2 KiB, contiguous.
    // Measured on the H200 (2026-12-04, CUPTI, 12 interleaved groups, L2):
    // row min f16[131072,24] (3 loads of 16 bytes) 2.56 us with 4 lanes,
    // 1.89 with 1 (XLA 2.06); row sum f32[65536,7] (7 loads of 4 bytes)
    // 1.34 with 2, 1.22 with 1; row max s8[32768,77] (5 units, 77 loads)
    // 1.96 with 8, 3.24 with 1.
    const int64_t Units = ceilDiv(D2, maxVectorElements(In.A));
    const int64_t RowLoads = ceilDiv(D2, Vec);
    const bool OneLane = Units <= 4 && RowLoads <= 8;
    int64_t Auto = OneLane        ? 1
                   : Units <= 16  ? nextPow2(Units)
                   : Units <= 256 ? 32
                   : Units < 512  ? 128
                   : Units < 2048 ? 256
                                  : 512;
    G = std::min(choose(In, P, "IDXMAP_RED_ROW_LANES", "lanes_per_row", Auto,
                        std::to_string(Units) + " units of 16 bytes per row" +
                            (OneLane ? ", " + std::to_string(RowLoads) +
                                           " loads: one thread reads it all"
                                     : "")),
                 std::max<int64_t>(32, nextPow2(NVec)));
    if (G > 32) {
      RP.Mode = Mode::BlockPerRow;
      T = G;
    } else {
      RP.Mode = Mode::RowGroup;
      G = std::min(G, nextPow2(NVec));
      // 256 threads: row max f32[1048576,32] 32.9 us against 33.0 with 128
      // and 33.6 with 512 (2 rows per thread); row sum f32[262144,8] 2.21
      // against 2.34 with 128.
      T = std::max(choose(In, P, "IDXMAP_RED_ROW_THREADS", "threads", 256,
                          "rows share warps: 256 threads per block"),
                   G);
      RPB = T / G;
    }
  }
  int64_t Iters = ceilDiv(NVec, G);
  if (RP.Mode != Mode::WholeInput)
    U = choose(In, P, "IDXMAP_RED_ROW_UNROLL", "unroll",
               std::min<int64_t>(8, Iters),
               "vector iterations of a row in flight: up to 8");
  U = std::max<int64_t>(1, std::min(U, Iters));
  if (RP.Mode == Mode::RowGroup) {
    // Several rows per thread when each row gives a thread few loads (by
    // default not below two blocks per SM).
    // Measured on the H200 (2026-11-30): row max f32[1048576,32] (138 MB,
    // from DRAM) 32.9 us with 2 rows per thread, 33.7 with 4; row sum
    // f32[262144,8] (9.4 MB, L2-resident) 2.21 us with 4, 2.34 with 2.
    bool FromDram =
        Input.numElements() * byteWidth(Input.Type) > (int64_t(64) << 20);
    int64_t AutoK = std::max<int64_t>(1, (FromDram ? 2 : 4) / U);
    while (AutoK > 1 && ceilDiv(Rows, RPB * AutoK) < 2 * Sms)
      AutoK /= 2;
    K = choose(In, P, "IDXMAP_RED_ROW_K", "rows_per_thread", AutoK,
               std::string(FromDram ? "input from DRAM: 2" : "input in L2: 4") +
                   " row steps in flight per thread, over an unroll of " +
                   std::to_string(U) + ", while 2 blocks per SM remain");
    while (K > 1 && K * U > 64)
      K /= 2;
    // Few rows: fewer threads per block.
    while (T > 32 && RPB > 1 && (RPB / 2) * K >= Rows) {
      T /= 2;
      RPB /= 2;
    }
    Blocks = ceilDiv(Rows, RPB * K);
  } else if (RP.Mode == Mode::BlockPerRow) {
    Blocks = Rows;
  }
  RP.Iterations = Iters;
  // Back-end O0 measured the same as O3 on the H200 (2026-11-30) for a
  // block per row (row sum f32[8192,8192] 60.43-60.46 us, bf16 30.21-30.30)
  // and whole-input chunks (full sum 235.97-236.03); several rows per warp
  // lose at O0 (row sum f32[262144,8] 2.21 against 2.14; row max
  // f32[1048576,32] equal).
  P.BackEndOptLevel = RP.Mode == Mode::RowGroup ? 3 : 0;
  // Several blocks per output (a full reduction): partials and an arrival
  // counter in the workspace.
  RP.MultiBlock = RP.Mode != Mode::RowGroup &&
                  !(RP.Mode == Mode::BlockPerRow && !Full) && Blocks > 1;
  if (RP.MultiBlock)
    RP.TicketFold = chooseTicketFold(In, P, /*Full=*/true);
  // Warp 0 alone needs no barrier after the block's own sum.
  const int64_t Warp = In.Device.WarpSize;
  RP.TicketFolders = Blocks <= 4 * Warp || T <= Warp ? Warp : T;
  P.Grid[0] = Blocks;
  P.Block[0] = T;
}

/// The rows' thread map: (th, bl)[b, k, it, vec] -> linear input offset.
void planRowMap(const PlanInputs &In, ReductionPlan &RP, int64_t Threads,
                int64_t Blocks) {
  Context &Ctx = In.Ctx;
  const int64_t D0 = RP.Dims[0], D1 = RP.Dims[1], D2 = RP.Dims[2];
  const int64_t G = RP.LanesPerRow, RPB = RP.RowsPerBlock, K = RP.RowsPerThread,
                Vec = RP.Vector, NVec = D2 / Vec;
  Expr ThE = Ctx.dim(0), BlE = Ctx.dim(1), KE = Ctx.symbol(1);
  switch (RP.Mode) {
  case Mode::RowGroup:
    RP.Row = BlE * (RPB * K) + KE * RPB + ThE.floorDiv(G);
    RP.Lane = ThE % G;
    break;
  case Mode::BlockPerRow:
    RP.Row = BlE;
    RP.Lane = ThE;
    break;
  default:
    RP.Row = Ctx.constant(0);
    RP.Lane = BlE * Threads + ThE;
    break;
  }
  Expr Col = (Ctx.symbol(2) * G + RP.Lane) * Vec + Ctx.symbol(3);
  bool ColMask = RP.Iterations * G != NVec;
  bool RowMask = RP.Mode == Mode::RowGroup && Blocks * RPB * K != D1;
  if (ColMask)
    RP.Constraints.push_back({Col, {0, D2 - 1}});
  if (RowMask)
    RP.Constraints.push_back({RP.Row, {0, D1 - 1}});
  RP.Syms = {{"b", {0, D0 - 1}},
             {"k", {0, K - 1}},
             {"it", {0, RP.Iterations - 1}},
             {"vec", {0, Vec - 1}}};
  RP.Linear = (Ctx.symbol(0) * D1 + RP.Row) * D2 + Col;
}

/// Column reductions [K1, R, K2]: L lanes along K2 (Vec elements each), W
/// warps, U steps in flight, Split chunks of R.
void planColumns(const PlanInputs &In, KernelPlan &P, ReductionPlan &RP) {
  Context &Ctx = In.Ctx;
  RP.Mode = Mode::Column;
  const int64_t K1 = RP.Dims[0], R = RP.Dims[1], K2 = RP.Dims[2];
  const int64_t Vec = RP.Vector;
  // H200, 2026-11-30: column sum f32[8192,8192] 62.72-63.07 us at back-end
  // O0, 62.43-62.77 at O3 (0.5 %, for a third less compile time).
  P.BackEndOptLevel = 0;
  // 16 lanes: a warp reads two rows of 16 vectors, twice the rows in
  // flight per step of 32 lanes (H200, 2026-12-02: column sum
  // bf16[32768,768] 15.14 us against 18.40 with 32 lanes, f32[4096,1000]
  // 6.88 against 7.50, mid max f32[128,77,512] 5.70 against 6.38). 32
  // lanes when one tile of 32 lanes holds a row that 16 lanes would cut
  // into two ragged tiles (f32[64,1024,96], 24 vectors: 7.88 us with 32
  // lanes, 8.14 with 16), and when the reduced dim is short (fewer than 8
  // steps of 32-lane rows): there twice the blocks, each with a block's
  // fixed cost and a ragged last step, lose (f32[65536,26,128]: 252.0 us
  // with 16 lanes, 208.6 with 32).
  const int64_t RowVectors = ceilDiv(K2, Vec);
  const int64_t TileVectors = nextPow2(RowVectors);
  const bool OneWideTile = RowVectors > 16 && RowVectors < 32;
  const bool FewRows = R < 8 * 8; // 8 rows per step of 256 threads
  const bool Wide = OneWideTile || FewRows;
  int64_t L = std::min(
      choose(In, P, "IDXMAP_RED_COL_LANES", "col_lanes",
             std::min<int64_t>(Wide ? 32 : 16, TileVectors),
             std::to_string(RowVectors) + " vectors per row: " +
                 (TileVectors < (Wide ? 32 : 16) ? "a lane per vector"
                  : OneWideTile ? "one tile of 32 lanes holds it"
                  : FewRows     ? std::to_string(R) +
                                  " rows: fewer than 8 steps, fewer blocks"
                            : "16 lanes, two rows per warp")),
      TileVectors);
  int64_t W =
      choose(In, P, "IDXMAP_RED_COL_WARPS", "warps", 8, "warps per block");
  int64_t T = 32 * W, Cols = L * Vec, RS = T / L;
  int64_t Tiles = ceilDiv(K2, Cols);
  int64_t AllSteps = ceilDiv(R, RS);
  // 4 steps in flight: f32[8192,8192] 62.96-63.02 us against 62.94-63.09
  // with 8 (H200, 2026-11-30), and a quarter less compile time.
  int64_t U = std::min(choose(In, P, "IDXMAP_RED_COL_UNROLL", "unroll", 4,
                              "row steps in flight per thread"),
                       AllSteps);
  // Split the rows when the tiles alone do not fill the GPU's resident
  // blocks, keeping at least 2 U steps per chunk.
  // Half the resident blocks measured best (f32[8192,8192] on the H200:
  // 63.1 us with 512 blocks, 63.9 with 1024, 64.7 with 2048).
  int64_t Resident = In.Device.SmCount * std::max<int64_t>(1, 2048 / T) / 2;
  int64_t AutoSplit = 1;
  while (AutoSplit * 2 * K1 * Tiles <= Resident &&
         AutoSplit * 2 <= AllSteps / (2 * U))
    AutoSplit *= 2;
  int64_t Split = std::min(
      choose(In, P, "IDXMAP_RED_COL_SPLIT", "split", AutoSplit,
             "chunks of the reduced dim: half a wave of resident blocks"),
      AllSteps);
  const size_t SplitChoice = P.Choices.size() - 1;
  while (Split > 1 && K1 * Tiles * Split * Cols > (int64_t(1) << 24))
    Split = (Split + 1) / 2;
  int64_t Iters = ceilDiv(AllSteps, Split); // steps per chunk
  Split = ceilDiv(AllSteps, Iters);         // every chunk has rows
  if (P.Choices[SplitChoice].Value != Split) {
    P.Choices[SplitChoice].Reason +=
        " (" + std::to_string(Iters) +
        " whole steps per chunk: " + std::to_string(Split) + " chunks)";
    P.Choices[SplitChoice].Value = Split;
  }
  RP.MultiBlock = Split > 1;
  if (RP.MultiBlock) {
    RP.TicketFold = chooseTicketFold(In, P, /*Full=*/false);
    // The last block folds Split partials per column from L2. One thread
    // per column folding them one by one waits an L2 round trip per
    // partial (bn stats f32[100352,64], 483 chunks: 18.3 us against 8.7
    // for XLA); groups of threads per column, each with a batch of loads
    // in flight, cut that to Split / (groups x batch) round trips.
    int64_t Groups = std::max<int64_t>(1, std::min({T / Cols, W, Split}));
    RP.CombineGroups =
        P.choose("combine_groups", Groups,
                 "thread groups per column folding the chunks' partials");
    // A ticket fold holds each load's 64-bit flag word until it is seen
    // set: 32 of them took the kernels to 72-128 registers (32 with the
    // arrival fold), 2-3 blocks of 256 threads per SM instead of 8 (H100,
    // 2026-12-07: ticket against arrival 1.03-1.06 x with 32, 0.77-0.97 x
    // with 8).
    const int64_t MaxBatch = RP.TicketFold ? RP.TicketBatch : 32;
    RP.CombineBatch = P.choose(
        "combine_batch", std::min<int64_t>(MaxBatch, ceilDiv(Split, Groups)),
        std::string("partials each thread ") +
            (RP.TicketFold ? "polls" : "loads") + " at a time (up to " +
            std::to_string(MaxBatch) + ")");
  }
  int64_t RC = Iters * RS;                  // rows per chunk
  U = std::min(U, Iters);
  int64_t Blocks = K1 * Tiles * Split;
  RP.ColLanes = L;
  RP.Warps = W;
  RP.Unroll = U;
  RP.Split = Split;
  RP.Iterations = Iters;
  P.Grid[0] = Blocks;
  P.Block[0] = T;

  bool ColMask = Tiles * Cols != K2, RowMask = Split * RC != R;
  Expr ThE = Ctx.dim(0), BlE = Ctx.dim(1);
  Expr TileE = BlE % Tiles, Rest = BlE.floorDiv(Tiles);
  Expr SpE = Rest % Split, K1E = Rest.floorDiv(Split);
  Expr K2E = TileE * Cols + (ThE % L) * Vec + Ctx.symbol(1);
  Expr RE = SpE * RC + Ctx.symbol(0) * RS + ThE.floorDiv(L);
  if (ColMask)
    RP.Constraints.push_back({K2E, {0, K2 - 1}});
  if (RowMask)
    RP.Constraints.push_back({RE, {0, R - 1}});
  RP.Syms = {{"it", {0, Iters - 1}}, {"vec", {0, Vec - 1}}};
  RP.Linear = (K1E * R + RE) * K2 + K2E;
}

/// Why the reduction emitter cannot write \p A's roots, if it cannot: every
/// root is an array; a root whose hero is no reduce (a side output) has the
/// reduce input's element count and reads no reduce; every instruction
/// between a root and a reduce hero is elementwise on the reduced shape (or
/// a get-tuple-element of a variadic hero), read at the output's index.
std::optional<std::string> rootsProblem(const FusionAnalysis &A,
                                        const HloInstruction &FirstHero) {
  std::set<const HloInstruction *> Heroes;
  for (const HloInstruction *H : A.Heroes)
    if (H->opcode() == HloOpcode::Reduce)
      Heroes.insert(H);
  std::map<const HloInstruction *, bool> Dep;
  std::function<bool(const HloInstruction *)> DependsOnHero =
      [&](const HloInstruction *I) -> bool {
    if (Heroes.count(I))
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
  const int64_t InElements = FirstHero.operand(0)->shape().numElements();
  std::vector<const HloInstruction *> Work;
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    const HloInstruction *Root = A.Roots[R];
    if (A.Heroes[R]->opcode() == HloOpcode::Reduce) {
      Work.push_back(Root);
      continue;
    }
    if (!Root->shape().isArray())
      return "tuple-shaped output '" + Root->name() + "'";
    if (DependsOnHero(Root))
      return "side output '" + Root->name() +
             "' depends on a reduction but is not an elementwise epilogue "
             "of it";
    if (Root->shape().numElements() != InElements)
      return "side output '" + Root->name() +
             "' does not have the reduce input's element count";
  }
  const Shape &OutS = FirstHero.shape().isArray()
                          ? FirstHero.shape()
                          : FirstHero.shape().TupleShapes.front();
  std::set<const HloInstruction *> Seen;
  while (!Work.empty()) {
    const HloInstruction *I = Work.back();
    Work.pop_back();
    if (!Seen.insert(I).second || Heroes.count(I) || !DependsOnHero(I))
      continue;
    bool Ok = (I->opcode() == HloOpcode::GetTupleElement &&
               Heroes.count(I->operand(0))) ||
              (isElementwise(I->opcode()) && I->shape().isArray() &&
               I->shape().sameDims(OutS));
    if (!Ok)
      return "epilogue op '" + I->name() +
             "' is not elementwise on the reduced values";
    for (const HloInstruction *O : I->operands())
      Work.push_back(O);
  }
  for (const HloInstruction *Root : A.Roots)
    if (!Root->shape().isArray())
      return "tuple-shaped output '" + Root->name() + "'";
  return std::nullopt;
}

/// The widths and read-once flags of ReductionPlan (see KernelPlan.h), from
/// the maps composed with \p Read, the plan's read of the input \p Input.
void planAccesses(const PlanInputs &In, const IndexingMap &Read,
                  const Shape &Input, ReductionPlan &RP) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const int64_t V = RP.Vector;
  // Maps from every hero input (and every side output at the input's
  // index) to every parameter.
  std::map<const HloInstruction *, std::vector<IndexingMap>> Maps;
  auto AddParameterMaps = [&](const HloInstruction *From) {
    for (auto &[I, OMs] : computeGroupedIndexing(In.Ctx, C, From))
      if (I->opcode() == HloOpcode::Parameter)
        for (const OperandMap &OM : OMs)
          if (std::find(Maps[I].begin(), Maps[I].end(), OM.Map) ==
              Maps[I].end())
            Maps[I].push_back(OM.Map);
  };
  std::vector<const HloInstruction *> Heroes;
  for (const HloInstruction *H : A.Heroes)
    if (H->opcode() == HloOpcode::Reduce &&
        std::find(Heroes.begin(), Heroes.end(), H) == Heroes.end())
      Heroes.push_back(H);
  for (const HloInstruction *H : Heroes)
    for (int64_t K = 0; K < H->operandCount() / 2; ++K)
      AddParameterMaps(H->operand(K));
  RP.SideStoreWidth.assign(A.Roots.size(), 1);
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    const HloInstruction *Root = A.Roots[R];
    if (A.Heroes[R]->opcode() == HloOpcode::Reduce ||
        !Root->shape().sameDims(Input))
      continue;
    AddParameterMaps(Root);
    if (V == 1)
      continue;
    AccessReport Rep = analyzeAccess(Read, Root->shape(), /*CountWarps=*/false);
    int64_t W = 1;
    while (W * 2 <= Rep.VectorWidth && V % (W * 2) == 0)
      W *= 2;
    RP.SideStoreWidth[R] = W;
  }
  RP.LoadWidth.assign(C.parameters().size(), 1);
  RP.ReadOnce.assign(C.parameters().size(), false);
  for (size_t K = 0; K < C.parameters().size(); ++K) {
    const HloInstruction *Pm = C.parameters()[K];
    auto It = Maps.find(Pm);
    if (It == Maps.end() || It->second.size() != 1)
      continue;
    // One map from an iteration space of the parameter's size: every
    // element is read once (an init value or a broadcast operand is not).
    RP.ReadOnce[K] = Pm->shape().isArray() &&
                     Pm->shape().numElements() == Input.numElements();
    if (V == 1)
      continue;
    IndexingMap Comp = compose(Read, It->second.front());
    simplify(Comp);
    AccessReport Rep = analyzeAccess(Comp, Pm->shape(), /*CountWarps=*/false);
    RP.LoadWidth[K] = std::max<int64_t>(1, Rep.VectorWidth);
  }
}

/// ReductionPlan::RoundingDepth: an upper bound of the roundings between a
/// term and its output in the emitters' order (ReductionRows.cpp,
/// ReductionColumns.cpp, ReductionPartials.cpp).
int64_t roundingDepth(const ReductionPlan &RP, int64_t Threads, int64_t Blocks,
                      int64_t Warp) {
  if (RP.Mode == ReductionMode::Column) {
    // A thread's steps in series, shuffles over the warp's row slots, the
    // warps' partials in order, then each group's chunks in series and the
    // groups in order.
    int64_t D = RP.Iterations + ceilLog2(Warp / RP.ColLanes) + RP.Warps;
    if (RP.MultiBlock)
      D += ceilDiv(RP.Split, RP.CombineGroups) + RP.CombineGroups;
    return D;
  }
  // Every element a thread reads of a row (outer steps, iterations, vector
  // lanes, a full reduction's tail element) goes into one accumulator.
  int64_t D = RP.Dims[0] * RP.Iterations * RP.Vector + (RP.TailElements > 0);
  if (RP.Mode == ReductionMode::RowGroup)
    return D + ceilLog2(RP.LanesPerRow);
  D += ceilLog2(Threads); // shuffles, then the warps' partials as a tree
  if (RP.MultiBlock) {
    const int64_t Folders = RP.TicketFold ? RP.TicketFolders : Threads;
    D += ceilDiv(Blocks, Folders) + ceilLog2(Folders);
  }
  return D;
}

} // namespace

std::optional<std::string> planReduction(const PlanInputs &In, KernelPlan &P) {
  const FusionAnalysis &A = In.A;
  if (!A.Reduction)
    return std::string("no canonical reduction");
  const HloInstruction *Hero = firstReduceHero(A);
  if (!Hero)
    return std::string("no reduce hero");
  const Shape &Input = Hero->operand(0)->shape();
  for (const HloInstruction *H : A.Heroes)
    if (H->opcode() == HloOpcode::Reduce &&
        H->operand(0)->shape().numElements() == 0)
      return "reduce '" + H->name() + "' has no elements to reduce";
  // The emitter writes every root from the plan: a fusion whose roots it
  // cannot write is refused here (the emitter only asserts).
  if (auto Why = rootsProblem(A, *Hero))
    return Why;
  ReductionPlan RP;
  RP.Dims = A.Reduction->Dims;
  bool Full = A.Kind == EmitterKind::FullReduction;
  if (Full)
    RP.Dims = {1, 1, RP.Dims[0] * RP.Dims[1] * RP.Dims[2]};
  int64_t Vec = maxVectorElements(A);
  // A full reduction reads one line from its start, so its vectors stay
  // aligned whatever its length: all but the last (length mod vector)
  // elements are read in vectors and a few threads read that tail one
  // element each. Narrower vectors that divide the length would make every
  // load narrow (bf16[33554431], odd, read 2 bytes a load).
  if (Full && RP.Dims[2] % Vec != 0 && RP.Dims[2] > Vec &&
      choose(In, P, "IDXMAP_RED_FULL_TAIL", "vector_tail", 1,
             std::to_string(RP.Dims[2] % Vec) + " elements past the last " +
                 std::to_string(Vec) + "-element vector, read one a thread") !=
          0) {
    RP.TailElements = RP.Dims[2] % Vec;
    RP.Dims[2] -= RP.TailElements;
  }
  while (Vec > 1 && RP.Dims[2] % Vec != 0)
    Vec /= 2;
  RP.Vector =
      P.choose("vector", Vec,
               std::string("elements per load: 16 bytes of the "
                           "widest parameter that divide the ") +
                   (RP.TailElements ? "line before its tail" : "minor dim"));
  if (A.Kind == EmitterKind::ColumnReduction) {
    planColumns(In, P, RP);
  } else {
    planRowShape(In, P, RP, Input);
    planRowMap(In, RP, P.Block[0], P.Grid[0]);
  }
  // `.minnctapersm`: unset, ptxas keeps every kernel at 32 registers (full
  // occupancy) and serializes loads beyond that; a minimum of N blocks per
  // SM lets it use up to 65536 / (N x threads) registers for loads in
  // flight.
  RP.MinBlocksPerSm = choose(In, P, "IDXMAP_RED_MINBLOCKS", "min_blocks", 0,
                             "unset: ptxas keeps full occupancy");
  // Inputs read once are streamed past L2 (evict_first) unless the
  // fusion's data stays there between launches: then the hint would throw
  // out what the next launch reads (an L2-resident row reduction ran 1.76x
  // faster without it on the H200, 2026-12-01).
  const bool InL2 = staysInL2(A, In.Device);
  RP.EvictFirst =
      choose(In, P, "IDXMAP_RED_EVICT_FIRST", "evict_first", InL2 ? 0 : 1,
             InL2 ? "the fusion's data stays in L2 between launches"
                  : "inputs read once stream past L2") != 0;
  RP.LoadsFirst = choose(In, P, "IDXMAP_RED_LOADS_FIRST", "loads_first", 1,
                         "every load of a step before its first use") != 0;
  int64_t Largest = Input.numElements();
  for (const HloInstruction *Param : A.Computation->parameters())
    Largest = std::max(Largest, Param->shape().numElements());
  for (const HloInstruction *Root : A.Roots)
    Largest = std::max(Largest, Root->shape().numElements());
  chooseIndexWidth(P, Largest);
  P.Main.ThreadsPerBlock = P.Block[0];
  P.Main.Blocks = P.Grid[0];
  P.Main.Vector = RP.Vector;
  P.Main.Target = Hero->operand(0);
  P.Main.Map = IndexingMap(
      In.Ctx, {{"th_x", {0, P.Block[0] - 1}}, {"bl_x", {0, P.Grid[0] - 1}}},
      RP.Syms, {}, delinearizePhysical(In.Ctx, RP.Linear, Input),
      RP.Constraints);
  simplify(P.Main.Map);
  planAccesses(In, P.Main.Map, Input, RP);
  RP.RoundingDepth =
      roundingDepth(RP, P.Block[0], P.Grid[0], In.Device.WarpSize);
  P.Reduction = std::move(RP);
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
