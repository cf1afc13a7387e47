//===- EmitterSupport.h - Helpers shared by the fusion emitters -*- C++ -*-===//
//
// Part of idxmap. Small pieces every emitter needs: integer rounding,
// layout-aware linear offsets (as LLVM values and as map expressions) and
// the emitters' refusal diagnostic. Private to codegen/emitters.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_EMITTERS_EMITTERSUPPORT_H
#define IDXMAP_CODEGEN_EMITTERS_EMITTERSUPPORT_H

#include "KernelBuilder.h"
#include "idxmap/Delinearize.h"
#include "idxmap/DeviceModel.h"
#include "idxmap/Diagnostics.h"
#include "idxmap/Expr.h"
#include "idxmap/Hlo.h"
#include "idxmap/KernelInfo.h"
#include "idxmap/Tuning.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace idxmap {
namespace codegen {

/// The launch skeleton of the emitters that walk a ThreadMapping's blocks
/// (loop, in-place dynamic-update-slice, concatenate): the thread and block
/// ids and, when the mapping has more blocks (\p Blocks) than the kernel
/// launches (\p Grid), a grid-stride loop in which block bl takes the
/// mapping's blocks bl, bl + Grid, ...
///
/// Example:
/// \code
///   GridLoop L(B, *K, IndexTy, /*Threads=*/128, /*Grid=*/P.Grid[0],
///              /*Blocks=*/TM.Blocks);
///   // ... the body, at (L.Th, L.Bl); a thread done early branches to
///   // L.Done ...
///   L.finish(); // the latch (under a grid stride), the exit, `ret void`
/// \endcode
class GridLoop {
public:
  GridLoop(llvm::IRBuilder<> &B, llvm::Function &K, llvm::Type *IndexTy,
           int64_t Threads, int64_t Grid, int64_t Blocks);
  /// The thread id and the mapping's block id (the loop's phi under a grid
  /// stride).
  llvm::Value *Th = nullptr, *Bl = nullptr;
  /// Where a thread goes when its block is done: the exit, or the latch
  /// that moves on to the block Grid further.
  llvm::BasicBlock *Done = nullptr;
  /// Branches to Done from the insertion point and closes the kernel.
  void finish();

private:
  llvm::IRBuilder<> &B;
  llvm::Type *IndexTy;
  int64_t Grid, Blocks;
  llvm::BasicBlock *Exit = nullptr;
  llvm::PHINode *StrideBl = nullptr;
};

/// How a parameter load may use the caches.
enum class CacheHint {
  /// A plain load (LLVM picks `ld.global.nc` for the kernel's read-only,
  /// noalias parameters).
  Normal,
  /// Data the kernel reads exactly once: `ld.global.nc.L1::evict_first
  /// .L2::cache_hint` with an L2 evict_first policy (`createpolicy`), as
  /// Triton emits for streamed reduction inputs. The streamed lines are the
  /// first that L2 replaces, so they displace less of what it holds.
  /// Loads of 4, 8 or 16 bytes (and multiples of 16 bytes) take the hint;
  /// others stay plain.
  EvictFirst,
  /// Data L2 should keep over other lines: `ld.global.nc.L1::evict_last
  /// .L2::cache_hint` with an L2 evict_last policy, as torch.compile's
  /// concatenates load their operands. The same loads take it as above.
  EvictLast,
};

/// Loads element \p Index of fusion parameter \p Param in its compute
/// type, at offset 0 instead where \p Guard is false (a speculative read,
/// the value discarded); \p Key names the guard (the pad whose operand is
/// read), the same for every lane of a run.
using GuardedParameterLoader = std::function<llvm::Value *(
    const HloInstruction &Param, llvm::ArrayRef<llvm::Value *> Index,
    llvm::Value *Guard, const HloInstruction *Key)>;

/// Parameter loads of the emitters whose threads own runs of lanes (loop,
/// in-place dynamic-update-slice, concatenate): a parameter the plan proves
/// W elements wide (\p Widths, by parameter number; 1 or missing: element
/// by element) is loaded as one W-vector per group of W lanes, reused by
/// the group's other lanes within the basic block that loaded it (values
/// from one branch do not dominate another).
///
/// Example:
/// \code
///   LaneLoader Lanes(B, *K, C, P.Loop->LoadWidth, IndexTy);
///   FusedElementEmitter FE(B, Ctx, C, Lanes.loader(), Math, IndexTy);
///   for (int64_t L = 0; L < V; ++L) {
///     Lanes.Lane = L; // lane L of the run: element (group first + L mod W)
///     Vals.push_back(FE.valueAt(*Root, LaneIndex[L]));
///   }
/// \endcode
class LaneLoader {
public:
  LaneLoader(llvm::IRBuilder<> &B, llvm::Function &K, const HloComputation &C,
             const std::vector<int64_t> &Widths, llvm::Type *IndexTy);
  /// The lane whose values are being computed.
  int64_t Lane = 0;
  /// The loader to give FusedElementEmitter (refers to this object).
  std::function<llvm::Value *(const HloInstruction &,
                              llvm::ArrayRef<llvm::Value *>)>
  loader();
  /// The loader for FusedElementEmitter::speculatePads (refers to this
  /// object): loads under a guard read offset 0 where it is false.
  GuardedParameterLoader guardedLoader();
  /// Forgets the loaded vectors.
  void clear() { Vectors.clear(); }
  /// Loads of parameter \p P from now on take \p H.
  void setHint(const HloInstruction &P, CacheHint H) { Hints[&P] = H; }

private:
  llvm::IRBuilder<> &B;
  llvm::Function &K;
  llvm::Type *IndexTy;
  std::map<const HloInstruction *, int64_t> Width;
  std::map<const HloInstruction *, CacheHint> Hints;
  CacheHint hint(const HloInstruction &P) const {
    auto It = Hints.find(&P);
    return It == Hints.end() ? CacheHint::Normal : It->second;
  }
  llvm::Value *load(const HloInstruction &P,
                    llvm::ArrayRef<llvm::Value *> Index, llvm::Value *Guard,
                    const HloInstruction *GuardKey);
  /// Loaded vectors by (parameter, group, guard's pad).
  std::map<std::tuple<const HloInstruction *, int64_t, const HloInstruction *>,
           llvm::Value *>
      Vectors;
};

/// ceil(A / B) for A >= 0, B > 0, without overflow for any such A:
/// ceilDiv(170, 64) == 3.
inline int64_t ceilDiv(int64_t A, int64_t B) { return A / B + (A % B != 0); }

/// The smallest power of two >= V (1 for V <= 1): nextPow2(24) == 32.
inline int64_t nextPow2(int64_t V) {
  int64_t P = 1;
  while (P < V)
    P *= 2;
  return P;
}

/// The order in which physicalOffset adds its terms: minor to major (the
/// layout's), or logical dim order. The value is the same; the order is
/// what the fast pipeline's single instcombine round sees, and each
/// emitter keeps the one its index expressions fold best with.
enum class OffsetTermOrder { MinorToMajor, Logical };

/// The physical (layout-order) linear offset of logical index \p Index in
/// \p S, in \p IndexTy with nuw/nsw flags: for f32[4,8]{0,1}, index (i, j)
/// gives `i + j * 4`. Unit dims contribute nothing.
llvm::Value *
physicalOffset(llvm::IRBuilderBase &B, const Shape &S,
               llvm::ArrayRef<llvm::Value *> Index, llvm::Type *IndexTy,
               OffsetTermOrder Order = OffsetTermOrder::MinorToMajor);

/// physicalOffset's terms apart: the variable part (null when every
/// coordinate is constant) and the constant. With \p PeelAddends, a
/// coordinate `X + C` (nuw with C > 0, or nsw with C < 0) gives X to the
/// variable part and C to the constant: items that differ by constant
/// offsets share the variable part. For f32[4,8] and (i, j + 3), peeled:
/// {`i * 8 + j`, 3}.
std::pair<llvm::Value *, int64_t>
splitPhysicalOffset(llvm::IRBuilderBase &B, const Shape &S,
                    llvm::ArrayRef<llvm::Value *> Index, llvm::Type *IndexTy,
                    OffsetTermOrder Order, bool PeelAddends);

/// The address of element \p Index of an array of \p S at \p Base: the
/// shared variable offset, then the constant (less \p Back elements) as a
/// constant GEP of its own. Addresses of an unrolled thread's items then
/// differ only in their last GEP, which instruction selection folds into
/// the access (`[%rd + 512]`) without instcombine proving the adds'
/// operands disjoint first.
llvm::Value *elementPointer(
    llvm::IRBuilderBase &B, llvm::Type *ElemTy, llvm::Value *Base,
    const Shape &S, llvm::ArrayRef<llvm::Value *> Index, llvm::Type *IndexTy,
    OffsetTermOrder Order = OffsetTermOrder::MinorToMajor, int64_t Back = 0);

/// The diagnostic at \p I's place in its module's source (no location for
/// an instruction built without a module): every emission error is about
/// an instruction of the input.
Diagnostic diagnoseAt(const HloInstruction &I, std::string Message);

/// Checks a one-dimensional launch of \p Blocks blocks of \p Threads
/// threads and \p SharedBytes bytes of shared memory against \p D and
/// records it in \p Info; when it does not fit, the diagnostic at fusion
/// \p F ("fusion 'F' needs grid.x = 4294967296, over the H100 limit ...").
std::optional<Diagnostic>
setLaunchShape(KernelInfo &Info, const HloInstruction &F, const DeviceModel &D,
               int64_t Blocks, int64_t Threads, int64_t SharedBytes = 0);

/// The parameters of a fusion's kernel: an input per parameter of \p C,
/// then an output per root in \p Roots, each 16-byte aligned and named
/// after its instruction, also recorded in \p Info.Params (the sidecar's
/// params): the specs createKernel takes. A kernel with other parameters
/// (a workspace, an output it also reads) appends them.
///
/// Example: for `fused(p0, p1)` with root `r`: {p0 input, p1 input, r
/// output}.
std::vector<KernelParamSpec>
fusionKernelParams(const HloComputation &C,
                   llvm::ArrayRef<const HloInstruction *> Roots,
                   KernelInfo &Info);

/// A load of \p Ty from global pointer \p Ptr aligned to \p Alignment
/// bytes, with cache hint \p Hint. With EvictFirst, a `<4 x float>` load
/// becomes `ld.global.nc.L1::evict_first.L2::cache_hint.v4.b32` (inline
/// asm, memory(read), not speculated) whose four words are bitcast back.
llvm::Value *loadWithHint(llvm::IRBuilderBase &B, llvm::Type *Ty,
                          llvm::Value *Ptr, uint64_t Alignment, CacheHint Hint);

/// Element \p Index of parameter \p P of kernel \p K (argument number
/// P.parameterNumber()), read from its physical layout and converted to its
/// compute type (loadConvert): the scalar load every emitter's parameter
/// loader falls back to. With a \p Guard (i1), the load reads offset 0
/// where the guard is false (an index that may be out of bounds, read
/// speculatively: the caller discards that value).
llvm::Value *loadParameterElement(
    llvm::IRBuilderBase &B, llvm::Function &K, const HloInstruction &P,
    llvm::ArrayRef<llvm::Value *> Index, llvm::Type *IndexTy,
    OffsetTermOrder Order = OffsetTermOrder::MinorToMajor,
    CacheHint Hint = CacheHint::Normal, llvm::Value *Guard = nullptr);

/// The \p W elements of parameter \p P starting \p Back elements before
/// the physical offset of \p Index, as one vector load aligned to its size
/// (at most 16 bytes; storage type, not converted): the caller proved that
/// the group is contiguous and W-aligned. A \p Guard as for
/// loadParameterElement (offset 0 is aligned too).
llvm::Value *loadParameterVector(
    llvm::IRBuilderBase &B, llvm::Function &K, const HloInstruction &P,
    llvm::ArrayRef<llvm::Value *> Index, int64_t W, llvm::Type *IndexTy,
    OffsetTermOrder Order = OffsetTermOrder::MinorToMajor, int64_t Back = 0,
    CacheHint Hint = CacheHint::Normal, llvm::Value *Guard = nullptr);

/// The identity element of a two-operand reducer `op(p0, p1)` (add,
/// multiply, maximum, minimum, and, or; either operand order) of element
/// type \p PT, as a constant of PT's value type; null when not known (for
/// example argmax's variadic reducer). Reduction emitters start partial
/// accumulators from it and combine the init value once, so that any init
/// value gives the interpreter's result: add with init 5 over {1, 2} is 8.
llvm::Constant *reducerIdentity(llvm::LLVMContext &LC, const HloComputation &R,
                                PrimitiveType PT);

/// The identity of a combiner \p Op (add, multiply, maximum, minimum,
/// and, or, xor) in element type \p PT, as a constant of PT's value type;
/// null when there is none (add of pred). Example: maximum of f32 gives
/// -inf, add of f32 gives -0.0 (x + -0.0 is x for every x, -0.0 included).
llvm::Constant *combinerIdentity(llvm::LLVMContext &LC, HloOpcode Op,
                                 PrimitiveType PT);

/// The diagnostic an emitter returns when it cannot do fusion \p F:
/// "fusion 'F': <Emitter> emitter: <Why>" at F in the module's source.
Diagnostic emitterRefusal(const HloInstruction &F, const std::string &Emitter,
                          const std::string &Why);

} // namespace codegen
} // namespace idxmap

#endif
