//===- GpuBuilder.h - Block-level IR patterns of the emitters ---*- C++ -*-===//
//
// Part of idxmap. The pieces of IR that the reduction and row-normalization
// emitters both build around their reductions: a guarded region, warp
// shuffles of any value (booleans included), the combination of several
// reducers' accumulators, the butterfly across a warp's lanes, and arrays
// of shared-memory slots for partials that cross warps. Private to
// codegen/emitters.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_EMITTERS_GPUBUILDER_H
#define IDXMAP_CODEGEN_EMITTERS_GPUBUILDER_H

#include "ElementwiseCodegen.h"

#include "idxmap/Hlo.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

#include <functional>
#include <vector>

namespace idxmap {
namespace codegen {

/// Emits \p Body under `if (Cond)` in the function of \p B's insertion
/// point, leaving \p B after the region. A constant condition emits \p Body
/// straight (true) or nothing (false), without branches.
///
/// Example: `emitIf(B, B.CreateICmpEQ(Lane, Zero), [&] { B.CreateStore(X,
/// P); })` gives `br %c, if.then, if.done` / `if.then: store; br if.done`.
void emitIf(llvm::IRBuilderBase &B, llvm::Value *Cond,
            const std::function<void()> &Body);

/// A counted loop over [0, \p Count) in \p K (Count at least 1 at run
/// time, or 0 to skip it) carrying \p Init: \p Step(I, Carried) builds
/// iteration I and gives the next values; returns the values after the
/// loop (Init when it is skipped).
///
/// Example: the sum of slots 0..N-1 of a shared array:
/// \code
///   emitFold(B, K, I32, N, {Zero}, [&](llvm::Value *I, auto &Acc) {
///     return std::vector<llvm::Value *>{
///         B.CreateAdd(Acc[0], Slots.load(B, 0, I))};
///   })[0];
/// \endcode
std::vector<llvm::Value *>
emitFold(llvm::IRBuilderBase &B, llvm::Function &K, llvm::Type *IndexTy,
         llvm::Value *Count, std::vector<llvm::Value *> Init,
         const std::function<std::vector<llvm::Value *>(
             llvm::Value *I, const std::vector<llvm::Value *> &)> &Step);

/// A call of inline PTX \p Asm (constraints \p Cons) with side effects,
/// returning \p Ret (void for none).
///
/// Example: `asmCall(B, B.getVoidTy(), {Ptr, Word}, "st.relaxed.gpu.global.b64
/// [$0], $1;", "l,l,~{memory}")` stores a 64-bit word with relaxed
/// semantics at device scope.
llvm::Value *asmCall(llvm::IRBuilderBase &B, llvm::Type *Ret,
                     llvm::ArrayRef<llvm::Value *> Args, const char *Asm,
                     const char *Cons);

/// Barriers in shared memory (sm_90 `mbarrier`) and bulk copies, for
/// warp-specialized kernels whose warps hand stages to each other. \p Bar
/// is an i64 in address space 3. A phase completes when its \p Count
/// arrivals (and the bytes an arrival with \p TxBytes expects) are in;
/// mbarrierWait spins until the phase of \p Parity (i32, 0 or 1) has
/// completed. Example: a producer's `mbarrierArrive(B, Full, Bytes);
/// bulkCopyToShared(B, Stage, Src, Bytes, Full);` and a consumer's
/// `mbarrierWait(B, K, Full, Parity);` hand one stage over.
void mbarrierInit(llvm::IRBuilderBase &B, llvm::Value *Bar, unsigned Count);
void mbarrierArrive(llvm::IRBuilderBase &B, llvm::Value *Bar,
                    llvm::Value *TxBytes = nullptr);
void mbarrierWait(llvm::IRBuilderBase &B, llvm::Function &K, llvm::Value *Bar,
                  llvm::Value *Parity);
/// `cp.async.bulk` of \p Bytes (i32, a multiple of 16; both addresses
/// 16-byte aligned) from global \p Src to shared \p Dst, completed on
/// \p Bar.
void bulkCopyToShared(llvm::IRBuilderBase &B, llvm::Value *Dst,
                      llvm::Value *Src, llvm::Value *Bytes, llvm::Value *Bar);

/// `shfl.sync.bfly` of \p V with lane `laneid ^ Mask` in groups of
/// \p Width lanes (emitShuffleXor); an i1 travels as an i32.
///
/// Example: `shuffleXor(B, Sum, 16, 32)` is the sum of the lane 16 apart.
llvm::Value *shuffleXor(llvm::IRBuilderBase &B, llvm::Value *V, unsigned Mask,
                        unsigned Width);

/// The reducers of \p Reduces applied in turn to their slots of \p Acc and
/// \p Val (a variadic reduce of N outputs takes N consecutive slots of
/// each), as emitReduction inlines them: the new accumulators.
///
/// Example: for {max, sum} and Acc = {m, s}, Val = {x, y}: {max(m, x),
/// s + y}.
std::vector<llvm::Value *>
combineReduces(llvm::IRBuilderBase &B,
               llvm::ArrayRef<const HloInstruction *> Reduces,
               llvm::ArrayRef<llvm::Value *> Acc,
               llvm::ArrayRef<llvm::Value *> Val, const MathOptions &Math);

/// Combines \p Vals (the slots of \p Reduces, combineReduces) across each
/// group of \p Width lanes (a power of two <= 32) with log2(Width)
/// butterfly shuffles: every lane of a group ends with the group's value.
///
/// Example: Width 4 shuffles at lane distances 2, then 1.
std::vector<llvm::Value *> butterflyReduce(
    llvm::IRBuilderBase &B, llvm::ArrayRef<const HloInstruction *> Reduces,
    std::vector<llvm::Value *> Vals, unsigned Width, const MathOptions &Math);

/// butterflyReduce of several independent sets of values at once (each set
/// the slots of \p Reduces), down to lane distance \p Lowest: the shuffles
/// of every set at one distance precede their combinations, so they are in
/// flight together; lanes \p Lowest apart (Lowest < Width) keep separate
/// results.
///
/// Example: Width 32, Lowest 4 combines lanes 16, 8 and 4 apart: lanes 0-3
/// hold the 4 results of the warp (each from 8 lanes).
std::vector<std::vector<llvm::Value *>>
butterflyReduceSets(llvm::IRBuilderBase &B,
                    llvm::ArrayRef<const HloInstruction *> Reduces,
                    std::vector<std::vector<llvm::Value *>> Sets,
                    unsigned Width, unsigned Lowest, const MathOptions &Math);

/// Shared-memory arrays for values crossing warps: one array of Count
/// slots per value type (an i1 is held as an i8), so that one slot index
/// addresses a value of each.
///
/// Example: partials of a max and a sum, one per warp of 8:
/// \code
///   SharedSlots Sh(M, {Max, Sum}, 8, "k.red");
///   emitIf(B, IsLane0, [&] { Sh.store(B, Warp, {Max, Sum}); });
///   emitBarrier(B);
///   std::vector<llvm::Value *> Part = Sh.load(B, Lane);
/// \endcode
class SharedSlots {
public:
  SharedSlots(llvm::Module &M, llvm::ArrayRef<llvm::Value *> Like,
              uint64_t Count, const llvm::Twine &Name, unsigned Align = 16);

  /// Stores \p Vals (of the types given at construction) into slot
  /// \p Index of each array.
  void store(llvm::IRBuilderBase &B, llvm::Value *Index,
             llvm::ArrayRef<llvm::Value *> Vals) const;
  /// The values of slot \p Index, in their original types.
  std::vector<llvm::Value *> load(llvm::IRBuilderBase &B,
                                  llvm::Value *Index) const;
  /// The value of slot \p Index of array \p Array alone.
  llvm::Value *load(llvm::IRBuilderBase &B, size_t Array,
                    llvm::Value *Index) const;
  /// The arrays' bytes, each rounded up to 16.
  uint64_t bytes(const llvm::DataLayout &DL) const;

private:
  llvm::Value *slot(llvm::IRBuilderBase &B, size_t I, llvm::Value *Index) const;

  std::vector<llvm::GlobalVariable *> Arrays;
  std::vector<llvm::Type *> Types;
  uint64_t Count;
};

} // namespace codegen
} // namespace idxmap

#endif
