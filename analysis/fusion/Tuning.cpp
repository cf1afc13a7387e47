//===- Tuning.cpp - The table of plan overrides ---------------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Tuning.h"

#include <algorithm>
#include <cstdlib>

namespace idxmap {

const std::vector<TuningKnobInfo> &tuningTable() {
  using T = Tuning;
  static const std::vector<TuningKnobInfo> Table = {
      {"IDXMAP_EVICT_LAST", &T::EvictLast, 0, 1, false,
       "loop, transpose: 1 when the fusion moves more than a quarter of L2 "
       "and at most 1.2 x L2, else 0; reductions, row normalization: 0",
       "loop, transpose, reductions, row normalization: 1 loads every "
       "parameter with an L2 evict_last policy"},
      {"IDXMAP_IR_INSTCOMBINE", &T::IrInstCombine, 0, 1, false,
       "0 for a launch of one block of at most a warp, a transpose of 8 "
       "tiles per block and a scan whose every type is a 4- or 8-byte one, "
       "else 1",
       "every kernel: 1 runs LLVM's instcombine on the kernel's IR, 0 "
       "skips it"},
      {"IDXMAP_LOOP_UNROLL", &T::LoopUnroll, 1, 16, true,
       "32 bytes of parameters in flight per thread (16 of full vectors "
       "from DRAM, 64 for a gather whose rows moved fit in L2), a block per "
       "SM kept",
       "loop: vectors each thread computes (independent, in flight)"},
      {"IDXMAP_PIECE_BY_OPERAND", &T::PieceByOperand, 0, 1, false,
       "1 along the major-most dim, else 0",
       "concatenate: 1 gives each operand blocks that walk it alone"},
      {"IDXMAP_PIECE_EVICT_LAST", &T::PieceEvictLast, 0, 1, false,
       "1 when the fusion moves more than a quarter of L2 and at most 1.2 x "
       "L2, else 0",
       "concatenate: 1 loads the operands with an L2 evict_last policy"},
      {"IDXMAP_PIECE_OVER_OUTPUT", &T::PieceOverOutput, 0, 1, false,
       "1 when no operand's run is stored as a vector and the fusion moves "
       "at least 1 MiB, else 0",
       "concatenate: 1 plans the loop emitter instead (threads over the "
       "output, each element picking its operand)"},
      {"IDXMAP_PIECE_THREADS", &T::PieceThreads, 32, 1024, true,
       "256 when the data stays in L2, else 128",
       "concatenate, input slices: threads per block"},
      {"IDXMAP_PIECE_UNROLL", &T::PieceUnroll, 1, 16, true,
       "concatenate: 4 when the fusion moves more than a quarter of L2 and "
       "at most all of it and no run straddles an edge, else 1; input "
       "slices: 1",
       "concatenate, input slices: runs each thread computes (their loads "
       "in flight together)"},
      {"IDXMAP_RED_COL_LANES", &T::RedColLanes, 1, 32, true,
       "16 (32 when one tile of 32 lanes holds a row of 17 to 31 vectors)",
       "column reduction: lanes along the kept minor dim per warp"},
      {"IDXMAP_RED_COL_SPLIT", &T::RedColSplit, 1, 1 << 16, false,
       "half a wave of resident blocks",
       "column reduction: chunks of the reduced dim, a block each"},
      {"IDXMAP_RED_COL_UNROLL", &T::RedColUnroll, 1, 64, false, "4",
       "column reduction: row steps in flight per thread"},
      {"IDXMAP_RED_COL_WARPS", &T::RedColWarps, 1, 32, true, "8",
       "column reduction: warps per block"},
      {"IDXMAP_RED_EVICT_FIRST", &T::RedEvictFirst, 0, 1, false,
       "1 unless the inputs stay in L2",
       "reductions: evict_first hint on inputs read once"},
      {"IDXMAP_RED_FULL_BLOCKS_PER_SM", &T::RedFullBlocksPerSm, 1, 32, false,
       "2048 / threads", "full reduction: blocks per SM of the striding grid"},
      {"IDXMAP_RED_FULL_CHUNK", &T::RedFullChunk, 0, int64_t(1) << 30, true,
       "131072",
       "full reduction: bytes of the contiguous chunk a block reads (0: a "
       "grid striding over the whole input)"},
      {"IDXMAP_RED_FULL_CHUNK_THREADS", &T::RedFullChunkThreads, 32, 1024, true,
       "512", "full reduction: threads per chunk"},
      {"IDXMAP_RED_FULL_TAIL", &T::RedFullTail, 0, 1, false,
       "1 when the vector does not divide the length",
       "full reduction: vector loads over all but the last (length mod "
       "vector) elements, which threads read one each (0: narrower vectors "
       "that divide the length)"},
      {"IDXMAP_RED_FULL_THREADS", &T::RedFullThreads, 32, 1024, true,
       "1024 when the grid is full, else 512",
       "full reduction: threads per block of the striding grid"},
      {"IDXMAP_RED_FULL_UNROLL", &T::RedFullUnroll, 1, 32, false, "4",
       "full reduction: vector loads per thread per step"},
      {"IDXMAP_RED_LOADS_FIRST", &T::RedLoadsFirst, 0, 1, false, "1",
       "reductions: every load of a step before the first use in the IR"},
      {"IDXMAP_RED_MINBLOCKS", &T::RedMinBlocks, 0, 32, false, "0 (unset)",
       "reductions: .minnctapersm of the kernel"},
      {"IDXMAP_RED_ROW_K", &T::RedRowK, 1, 32, true,
       "2 from DRAM, 4 from L2, over the unroll; 2 blocks per SM kept",
       "row reduction: rows per thread when rows share a warp"},
      {"IDXMAP_RED_ROW_LANES", &T::RedRowLanes, 1, 1024, true,
       "from the row's 16-byte units: 1 for at most 4 read in at most 8 "
       "loads, else up to 16 one each, 32 up to 256, 128 below 512, 256 "
       "below 2048, else 512",
       "row reduction: threads per row (> 32: a block per row)"},
      {"IDXMAP_RED_ROW_THREADS", &T::RedRowThreads, 32, 1024, true, "256",
       "row reduction: threads per block when rows share a warp"},
      {"IDXMAP_RED_ROW_UNROLL", &T::RedRowUnroll, 1, 64, false,
       "min(8, iterations per row)",
       "row reduction: vector iterations of a row in flight"},
      {"IDXMAP_RED_TICKET_FOLD", &T::RedTicketFold, 0, 1, false, "1",
       "reductions over several blocks (full, split column): 1, each block "
       "takes a ticket when it starts and publishes its partials with ready "
       "flags, and the block with the last ticket of its output waits for "
       "them and folds them; 0, the last block to finish (an arrival "
       "counter after a fence) folds them"},
      {"IDXMAP_ROWNORM_ELEMENTS", &T::RowNormElements, 1, 64, false,
       "four 16-byte accesses of 2-byte elements, else 8",
       "row normalization: elements each thread holds per row"},
      {"IDXMAP_ROWNORM_EXACT_DIVIDE", &T::RowNormExactDivide, 0, 1, false, "0",
       "row normalization: divide exactly even with fast math"},
      {"IDXMAP_ROWNORM_THREADS", &T::RowNormThreads, 32, 1024, true,
       "max(lanes_per_row, 64), halved while the rows fill half a block",
       "row normalization: threads per block (at least lanes_per_row)"},
      {"IDXMAP_SCAN_ITEMS", &T::ScanItems, 1, 64, true,
       "16 for a row of one tile; 64 (32 of 8 bytes) for chained or column "
       "tiles; short rows: a multiple of the row's odd part",
       "scan: elements each thread of a tile holds in registers"},
      {"IDXMAP_SCAN_PIPELINED", &T::ScanPipelined, 0, 1, false,
       "0 (slower than the staged tiles on an H100)",
       "scan: 1 runs a chained row scan of full tiles as a warp-specialized "
       "pipeline: a persistent block per SM whose load warp bulk-copies "
       "tiles into shared stages, a reduce warp publishes their aggregates, "
       "a look-back warp chains them and the tile's warps scan and store"},
      {"IDXMAP_SCAN_SHARED_ROWS", &T::ScanSharedRows, 0, 4096, false, "31",
       "scan: the longest row that shares a tile with others (a segmented "
       "scan); longer rows take a warp or tiles of their own"},
      {"IDXMAP_SCAN_SHARED_TILE", &T::ScanSharedTile, 0, 1, false,
       "1 for 4-byte items with 4 or more waves of tiles",
       "scan: 1 copies a chained row scan's full tiles into shared memory "
       "and reads them twice, a run at a time (more blocks resident during "
       "look-backs)"},
      {"IDXMAP_SCAN_STAGES", &T::ScanStages, 2, 32, false,
       "as many as the device's shared memory per block holds, at most 8 "
       "(more is refused)",
       "scan: shared stages of a pipelined scan (IDXMAP_SCAN_PIPELINED)"},
      {"IDXMAP_SCAN_THREADS", &T::ScanThreads, 32, 1024, true,
       "256, fewer for a row shorter than a tile",
       "scan: threads per block of a tiled scan (a tile of threads x "
       "items elements of a line)"},
      {"IDXMAP_SCATTER_EVICT_FIRST", &T::ScatterEvictFirst, 0, 1, false,
       "1 with atomics (not for unique indices or overwrites)",
       "scatter: evict_first hint on the updates and indices (read once)"},
      {"IDXMAP_SCATTER_THREADS", &T::ScatterThreads, 32, 1024, true, "128",
       "scatter: threads per block"},
      {"IDXMAP_TR_RVEC", &T::TrReadVec, 0, 4, false, "0 (the plan's)",
       "transpose: elements per read vector of 32 x 32 tiles (1: scalar)"},
      {"IDXMAP_TR_SUBM", &T::TrSubM, 0, 8, true, "0 (the plan's)",
       "transpose: tiles per block along the input's minor dim"},
      {"IDXMAP_TR_SUBP", &T::TrSubP, 0, 8, true, "0 (the plan's)",
       "transpose: tiles per block along the output's minor dims"},
      {"IDXMAP_TR_WARPS", &T::TrWarps, 0, 32, false, "0 (the plan's)",
       "transpose: warps per block"},
      {"IDXMAP_TR_WVEC", &T::TrWriteVec, 0, 4, false, "0 (the plan's)",
       "transpose: elements per write vector of 32 x 32 tiles (1: scalar)"},
  };
  return Table;
}

const TuningKnobInfo *findTuningKnob(std::string_view Name) {
  for (const TuningKnobInfo &K : tuningTable())
    if (Name == K.Name)
      return &K;
  return nullptr;
}

std::optional<std::string> setTuning(Tuning &T, std::string_view Name,
                                     int64_t Value) {
  const TuningKnobInfo *K = findTuningKnob(Name);
  if (!K)
    return "unknown tuning knob '" + std::string(Name) + "'";
  if (Value < K->Lo || Value > K->Hi)
    return "tuning knob " + std::string(Name) + "=" + std::to_string(Value) +
           " is out of range: valid values are " + std::to_string(K->Lo) +
           " to " + std::to_string(K->Hi) +
           (K->Pow2 ? " (rounded down to a power of two)" : "");
  T.*(K->Field) = Value;
  return std::nullopt;
}

int64_t tuned(const Tuning &T, std::string_view Name, int64_t Default) {
  const TuningKnobInfo *K = findTuningKnob(Name);
  if (!K)
    std::abort(); // a programming error: every caller names a table entry
  int64_t V = (T.*(K->Field)).value_or(Default);
  V = std::clamp(V, K->Lo, K->Hi);
  // 0, where a knob allows it, means "off" (IDXMAP_RED_FULL_CHUNK=0: no
  // chunks), not a power of two to round.
  if (K->Pow2 && V > 0) {
    int64_t P = 1;
    while (P <= V / 2)
      P *= 2;
    V = P;
  }
  return V;
}

int64_t tuned(const Tuning &T, std::optional<int64_t> Tuning::*Field,
              int64_t Default) {
  for (const TuningKnobInfo &K : tuningTable())
    if (K.Field == Field)
      return tuned(T, K.Name, Default);
  std::abort(); // a programming error: a field without a table entry
}

std::optional<std::string> validateTuning(const Tuning &T) {
  Tuning Check;
  for (const TuningKnobInfo &K : tuningTable())
    if (auto V = T.*(K.Field))
      if (auto Err = setTuning(Check, K.Name, *V))
        return Err;
  return std::nullopt;
}

bool isTuned(const Tuning &T, std::string_view Name) {
  const TuningKnobInfo *K = findTuningKnob(Name);
  return K && (T.*(K->Field)).has_value();
}

Tuning overlayTuning(const Tuning &Under, const Tuning &Over) {
  Tuning T = Under;
  for (const TuningKnobInfo &K : tuningTable())
    if (auto V = Over.*(K.Field))
      T.*(K.Field) = V;
  return T;
}

std::string printTuning(const Tuning &T) {
  std::string S;
  for (const TuningKnobInfo &K : tuningTable())
    if (auto V = T.*(K.Field))
      S += (S.empty() ? "" : " ") + std::string(K.Name) + "=" +
           std::to_string(*V);
  return S;
}

std::string formatTuningTable() {
  std::string S =
      "| knob | range | default | what it sets |\n|---|---|---|---|\n";
  for (const TuningKnobInfo &K : tuningTable())
    S += "| `" + std::string(K.Name) + "` | " + std::to_string(K.Lo) + ".." +
         std::to_string(K.Hi) + (K.Pow2 ? ", power of two" : "") + " | " +
         K.Default + " | " + K.Doc + " |\n";
  return S;
}

} // namespace idxmap
