//===- idxmap/Coalescing.h - Thread maps, coalescing, vector width -*- C++
//-*-===//
//
// Part of idxmap. Emitters assign elements to threads with an indexing map
// `(th_x, bl_x)[iterations..., vec] -> (element index)`; composing it with an
// operand's maps and its linearized physical layout says which addresses a
// warp touches. From that: memory sectors and lines per warp access against
// the minimum, and the widest vector width the engine can prove.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_COALESCING_H
#define IDXMAP_COALESCING_H

#include "idxmap/DeviceModel.h"
#include "idxmap/Fusion.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/IndexingMap.h"

#include <algorithm>
#include <string>
#include <vector>

namespace idxmap {

/// How an emitter spreads work over threads. `Map` goes from
/// `(th_x, bl_x)[iterations..., vec]` to an index of the hero's operand (or
/// of the output, for the loop emitter); the last range variable is the
/// vector variable: each thread's `Vector` elements for one access.
struct ThreadMapping {
  int64_t ThreadsPerBlock = 128;
  /// Blocks launched (grid.x).
  int64_t Blocks = 1;
  /// Blocks of the mapping each launched block walks, Blocks apart (a
  /// grid-stride loop; see launchedThreadMapping). 1 unless the mapping
  /// needs more blocks than grid.x allows.
  int64_t Iterations = 1;
  int64_t Vector = 1;
  /// Runs of Vector elements each thread computes (the loop emitter's
  /// unrolling: the range variable `u` before `vec`).
  int64_t Unroll = 1;
  IndexingMap Map;
  /// The instruction whose index Map yields (the root for loop fusions, the
  /// hero's first operand for reductions and transposes).
  const HloInstruction *Target = nullptr;
};

/// The loop emitter's mapping: each thread owns `Vector` consecutive
/// elements of the output in its physical order:
/// `linear = (bl_x * T + th_x) * V + vec`, delinearized in the layout,
/// with `linear in [0, N - 1]` when the grid overshoots.
///
/// Example (f32[64,4096], V = 4, T = 128):
/// \code
///   (th_x, bl_x)[vec] -> ((bl_x * 128 + th_x) floordiv 1024,
///                         (th_x * 4 + vec) mod 4096 ...)
///   domain: th_x in [0, 127], bl_x in [0, 511], vec in [0, 3]
/// \endcode
///
/// With \p Unroll = U > 1 each thread computes U runs, T runs apart, so
/// that each of its U accesses is coalesced across the block:
/// `linear = ((bl_x * U + u) * T + th_x) * V + vec`, with the range
/// variable `u` before `vec` (U is capped by the runs there are).
ThreadMapping loopThreadMapping(Context &Ctx, const Shape &Output,
                                int64_t Vector, int64_t ThreadsPerBlock = 128,
                                int64_t Unroll = 1);

/// How a mapping of \p Blocks blocks launches on a GPU whose grid.x allows
/// at most \p MaxGridX: `Iterations = ceil(Blocks / MaxGridX)` blocks of
/// the mapping per launched block, `Grid = ceil(Blocks / Iterations)`
/// launched blocks (the loop emitter's grid-stride loop). {1, 1} for a
/// non-positive argument.
///
/// Example: `gridStride(4294967297, 2147483647)` is {1431655766, 3};
/// `gridStride(512, 2147483647)` is {512, 1}.
struct GridStride {
  int64_t Grid = 1;
  int64_t Iterations = 1;
};
GridStride gridStride(int64_t Blocks, int64_t MaxGridX);

/// \p TM as a grid of at most \p MaxGridX blocks runs it: when TM.Blocks
/// exceeds the limit, block `bl_x` takes the mapping's blocks
/// `bl_x + it * Grid` for `it` in [0, Iterations - 1] (a new first range
/// variable), with that sum bounded by TM.Blocks - 1 where the last
/// iteration overshoots; Blocks becomes Grid and Iterations is set. \p TM
/// itself when it fits.
///
/// Example (f32[2^40], V = 4, T = 128: 2^31 blocks; MaxGridX = 2^31 - 1):
/// \code
///   (th_x, bl_x)[it, vec] -> (th_x * 4 + bl_x * 512 + it * 549755813888
///                             + vec)
///   domain: th_x in [0, 127], bl_x in [0, 1073741823], it in [0, 1],
///           vec in [0, 3]
/// \endcode
ThreadMapping launchedThreadMapping(const ThreadMapping &TM, int64_t MaxGridX);

/// Elements of the input's minor dim that one lane of a tiled transpose
/// moves as a group (the transpose emitter's tiles are 32 rows by 32 such
/// groups): 2 when that dim is even and the tiles of 2 still fill the GPU
/// (at least 8 per SM of \p Device: 1056 on the H100), else 1. Shared by
/// the emitter and heroThreadMapping so the analysis shows the kernel's map.
/// Every function here that takes a device model defaults to the one
/// emission assumes for sm_90 (the H100's), which the callers that know the
/// device replace.
///
/// Example: f32[8192,8192] transposed {1,0}: 2 (32768 tiles of 32 x 64);
/// f32[20,160,170] transposed {2,1,0}: 1 (300 tiles of 32 x 64 would leave
/// SMs idle, 600 of 32 x 32 fewer).
int64_t
transposeGroupWidth(const TransposeInfo &TI,
                    const DeviceModel &Device = defaultDeviceModel("sm_90"));

/// The widest element, in bytes, among the array parameters of \p C with at
/// least \p MinElements elements (1 when there is none): the vector widths
/// are sized by it, so that no parameter's vector passes 16 bytes. Scalars
/// (and, with a larger \p MinElements, broadcast operands) are left out:
/// they are not read per element.
///
/// Example: a fusion of p0 = bf16[4096,1000], p1 = f32[] and p2 = f32[1000]
/// gives 4 (p2), and 2 with MinElements = 4096000 / 64.
int64_t widestParameterBytes(const HloComputation &C, int64_t MinElements = 2);

/// The transpose emitter's tiling of a normalized transpose (input dims
/// D[0..R-1], M = R-1 the input's minor dim), shared by the emitter and the
/// analysis. The tile rows run over P, the flattened output dims that
/// follow M in the output (TransposeInfo::dimsAfterMinor, contiguous in the
/// output); the tile columns over 32 groups of V elements of M. 32 W
/// threads = 32 lanes x W warps. The scalar scheme (ReadVec = WriteVec =
/// 1), range variables [it in [0, 32/W - 1], j in [0, V - 1]]: reads: warp
/// w, iteration it reads tile row w + W it, lane l its group l; writes:
/// lane l writes tile row l (P), warp w, iteration it the group w + W it.
/// Blocks walk P fastest, then M, then the remaining dims, so consecutive
/// blocks write adjacent output.
///
/// Example: f32[20,160,170] transposed {2,1,0} (the output is
/// [170,160,20]): P = (d1, d0) flattened, 3200 rows in 100 tiles, M = 170 in
/// 6 tiles of 32 (V = 1), 600 blocks; every tile row is full, where tiles
/// of d0 alone (20 of 32 rows) left 37% of the lanes idle; W = 4; reads
/// of 2, writes of 4 (below), it in [0, 3], j in [0, 1] (`idxmap analyze`):
/// \code
///   ReadIdx  = ((bl_x mod 100) * 32 + th_x floordiv 16 + it * 8) mod 20,
///              ... floordiv 20 ..., (bl_x floordiv 100) * 32 +
///              (th_x mod 16) * 2 + j
///   ReadCs   = {M index in [0, 169]}
/// \endcode
///
/// Tiles of 32 x 32 4-byte elements (V = 1) move vectors on both sides when
/// the shapes allow (ReadVec, WriteVec > 1, as torch.compile's Triton
/// kernels do): a read lane loads ReadVec consecutive elements of M
/// (32 / ReadVec lanes per tile row, ReadVec rows per warp instruction), a
/// write lane stores WriteVec consecutive elements of P (32 / WriteVec lanes
/// per tile column, WriteVec columns per warp instruction). For the example
/// ReadVec = 2 (170 is even) and WriteVec = 4 (3200 % 4 == 0): 4 reads of
/// 8 bytes and 2 writes of 16 bytes per thread instead of 8 and 8 of 4.
struct TransposeTiling {
  int64_t V = 1;
  int64_t Blocks = 1;
  /// Warps per block, threads and read iterations: Threads = 32 Warps,
  /// Iters = 32 / (Warps ReadVec) (tile rows per iteration: Warps ReadVec).
  int64_t Warps = 4, Threads = 128, Iters = 8;
  /// Why Warps (printed in the plan).
  std::string WarpsReason;
  /// Vector widths of the V = 1 tiling (1 = the scalar scheme above) and
  /// the write phase's iterations, 32 / (Warps WriteVec). ReadVec > 1 with
  /// WriteVec = 1 (only when asked for) leaves the write lanes' shared loads
  /// conflicting in pairs.
  int64_t ReadVec = 1, WriteVec = 1, WriteIters = 8;
  /// Normalized input index read by (th_x, bl_x)[it, j], and written (the
  /// output element is the transpose of this input index). Ranges: reads
  /// it in [0, Iters - 1], j in [0, readGroup() - 1]; writes it in [0,
  /// WriteIters - 1], j in [0, writeGroup() - 1] (the same as the reads'
  /// in the scalar scheme).
  std::vector<Expr> ReadIdx, WriteIdx;
  /// Ragged edges: the domain of the read and write indices.
  std::vector<Constraint> ReadCs, WriteCs;

  /// Elements of M a lane reads per access (V, or ReadVec).
  int64_t readGroup() const { return std::max(V, ReadVec); }
  /// Elements a lane writes per iteration (V output rows, or WriteVec
  /// consecutive elements of P).
  int64_t writeGroup() const { return std::max(V, WriteVec); }
  /// Sub-tiles per block: SubP x SubM tiles, adjacent along P and along M,
  /// each read and written as above; the range variable it then counts the
  /// iterations of every sub-tile, it = s Iters + i (s = sP + SubP sM, i
  /// the iteration within sub-tile s; writes likewise with WriteIters).
  /// More bytes in flight per block, the same accesses per warp.
  int64_t SubP = 1, SubM = 1;
  int64_t subTiles() const { return SubP * SubM; }
  /// Iterations of every sub-tile: the range of it in the maps.
  int64_t readIterations() const { return Iters * subTiles(); }
  int64_t writeIterations() const { return WriteIters * subTiles(); }
};

/// What a caller asks of transposeTiling; 0 lets it choose. Warps, ReadVec
/// and WriteVec as below; SubP and SubM the sub-tiles per block along P and
/// along M (rounded down to a power of two, at most 8; defaults: SubP 1,
/// SubM 2 when a tile row spans less than 128 bytes of the input, else 1).
struct TransposeRequest {
  int64_t Warps = 0, ReadVec = 0, WriteVec = 0, SubP = 0, SubM = 0;
};
/// \p TileBytes is the tile element's size; \p Want.Warps 0 picks the warps
/// per block: 8 for 4-byte elements in tiles of 32 x 64 (V = 2) and for
/// tilings whose blocks of 4 warps would fill at most 8 waves of \p
/// Device, else 4.
/// \p Want.ReadVec and \p Want.WriteVec 0 pick the vector widths of a V = 1
/// tiling of 4-byte elements: WriteVec the widest of 4, 2 dividing P,
/// ReadVec 2 when D[M] is even and WriteVec > 1, both at most 32 / Warps; 1
/// forces scalar accesses on that side; other requests are rounded down to
/// a power of two that divides the extent.
TransposeTiling
transposeTiling(Context &Ctx, const TransposeInfo &TI, int64_t TileBytes,
                const TransposeRequest &Want = {},
                const DeviceModel &Device = defaultDeviceModel("sm_90"));
/// The tiling of fusion \p A's transpose hero (A.Transpose set): its
/// element size, and vector writes only when every root written through the
/// transpose has the default layout. What the emitter and `idxmap analyze`
/// use.
TransposeTiling
transposeTiling(Context &Ctx, const FusionAnalysis &A,
                const TransposeRequest &Want = {},
                const DeviceModel &Device = defaultDeviceModel("sm_90"));

/// The reads of tiling \p T of \p A's transpose hero: `(th_x, bl_x)[it,
/// vec]` to the hero operand's index (what heroThreadMapping gives for the
/// default tiling).
ThreadMapping transposeReadMapping(Context &Ctx, const FusionAnalysis &A,
                                   const TransposeTiling &T);

/// The emitter's mapping for the hero of \p A (reads of the hero's first
/// operand for reductions and transposes, the output for loop fusions).
/// For reductions it is the plan's (planFusion without overrides:
/// KernelPlan::Main), undefined when no plan fits.
ThreadMapping
heroThreadMapping(Context &Ctx, const FusionAnalysis &A,
                  const DeviceModel &Device = defaultDeviceModel("sm_90"));

/// What one operand (or the output) sees of a thread mapping.
struct AccessReport {
  std::string Name;
  bool IsOutput = false;
  int64_t ElementBytes = 0;
  /// Widest proven vector width (elements), 1 if none; 0 if not accessed.
  int64_t VectorWidth = 1;
  std::string VectorReason;
  /// Per warp access, worst over the warps checked.
  int64_t Sectors = 0, MinSectors = 0, Lines = 0, MinLines = 0;
  bool Coalesced = false;
  /// True if the access reads the same element for every vector lane and
  /// thread of the warp (a broadcast).
  bool Uniform = false;
  /// Which warps were checked: "all 2048 warps", "proven for all N warps
  /// (affine in th_x)", or "sampled 64 of N warps".
  std::string Coverage;
  bool Undefined = false;
};

/// Sectors, lines and the proven vector width of every fusion parameter
/// and of the outputs under \p A's thread mapping. Runtime variables are
/// fixed at the middle of their range; iteration variables at their lower
/// bound (every iteration has the same pattern shifted).
/// With \p CountWarps false only the vector widths are computed (what an
/// emitter needs; no warp is enumerated).
std::vector<AccessReport>
analyzeCoalescing(Context &Ctx, const FusionAnalysis &A, bool CountWarps = true,
                  const DeviceModel &Device = defaultDeviceModel("sm_90"));

/// The same for a given thread mapping of the hero's reads (e.g. the one a
/// kernel recorded, KernelInfo::ThreadMap) instead of heroThreadMapping's.
std::vector<AccessReport>
analyzeCoalescing(Context &Ctx, const FusionAnalysis &A,
                  const ThreadMapping &TM, bool CountWarps = true,
                  const DeviceModel &Device = defaultDeviceModel("sm_90"));

/// The access of one thread→element map composed with \p S's physical
/// layout: sector and line counts per warp, coverage and vector width.
/// Grids of up to \p MaxWarps warps (at most 2048) are counted warp by warp,
/// larger ones sampled at \p MaxWarps warps (at most 64) spread over the
/// grid, first and last included, at a stride prime to the warps per block
/// (so that the samples take every warp position of a block, not warp 0
/// of each: a transpose's first tile row only).
///
/// Example: `analyzeAccess(TM.Map, P->shape(), true, 8)` counts 8 warps, a
/// quick estimate for the cost model; `idxmap analyze` counts up to 2048.
AccessReport analyzeAccess(const IndexingMap &ThreadToElement, const Shape &S,
                           bool CountWarps = true, int64_t MaxWarps = 2048);

/// Whether a test on each element gives every lane of a vector run the same
/// answer. \p Thread is a thread mapping's map `(th_x, bl_x)[..., vec]`
/// (vec its last range variable); \p Tested is \p Thread composed with
/// the maps to the tested instruction and with a map whose domain is the
/// test (a pad's output-to-operand map: the operand's element exists), so
/// that its domain is the thread domain and the test. True when no thread
/// has one lane in that domain and another out of it, proven exactly
/// (isl) one constraint at a time; false when a query is unknown or the
/// maps have runtime variables.
///
/// Example (f32[1000,1000] padded to [1024,1024], 4 elements per thread):
/// \code
///   Thread: (th_x, bl_x)[vec] -> (bl_x, th_x * 4 + vec),
///           domain: th_x in [0, 255], bl_x in [0, 1023], vec in [0, 3]
///   Tested: the same with th_x * 4 + vec in [0, 999]   // true: 1000 = 4 k
///   Tested: the same with th_x * 4 + vec in [0, 998]   // false
/// \endcode
bool laneUniformTest(const IndexingMap &Thread, const IndexingMap &Tested);

/// A table with one line per access (the `idxmap analyze` format).
std::string formatCoalescing(const std::vector<AccessReport> &R);

} // namespace idxmap

#endif // IDXMAP_COALESCING_H
