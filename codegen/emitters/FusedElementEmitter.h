//===- FusedElementEmitter.h - Values of a fused computation ----*- C++ -*-===//
//
// Part of idxmap. Emits the IR that computes one element of any instruction
// of a fused computation at a given index, following each op's
// output-to-input indexing map. Every emitter uses it for prologues,
// epilogues and loop bodies.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_FUSEDELEMENTEMITTER_H
#define IDXMAP_CODEGEN_FUSEDELEMENTEMITTER_H

#include "ElementwiseCodegen.h"
#include "EmitterSupport.h"
#include "ExprCodegen.h"

#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"

#include "llvm/IR/IRBuilder.h"

#include <functional>
#include <map>
#include <set>
#include <vector>

namespace idxmap {
namespace codegen {

/// Loads element \p Index (logical) of fusion parameter \p Param; returns the
/// value in its compute type.
using ParameterLoader = std::function<llvm::Value *(
    const HloInstruction &Param, llvm::ArrayRef<llvm::Value *> Index)>;

/// Computes elements of a fused computation.
///
/// Subgraph functions: a value the partitioner (idxmap/Partition.h) finds
/// read at several indices ("reached with N indexing maps", "users in N
/// subgraphs") is computed inline at each of them, so a chain of such
/// values doubles the IR at every level. The kernel plan names the subgraph
/// roots whose inline expansion would be large (KernelPlan::Functions,
/// passed as MathOptions::SubgraphFunctions); each becomes one internal
/// LLVM function of its index (plus the kernel arguments its parameter
/// loads use) and each read is a call; LLVM's inliner (the fast pipeline
/// runs it when a module has such functions) inlines the cheap ones. Inside
/// a function,
/// parameters are read with a plain scalar load of the kernel's argument
/// (loadParameterElement), not with the emitter's ParameterLoader, whose
/// vector loads and caches depend on where the kernel calls it; a root
/// from which an overridden instruction is reachable stays inline (an
/// override's value is the caller's).
///
/// Example (inside a kernel body):
/// \code
///   FusedElementEmitter FE(B, Computation, Loader, Math);
///   llvm::Value *V = FE.valueAt(*Computation.root(), {I0, I1});
///   // x24 = add(x23, reverse(x23)), ...: `call float @fusion.x23(i32 %i)`
///   // and `call float @fusion.x23(i32 %ri)` in the kernel, one body each.
/// \endcode
class FusedElementEmitter {
public:
  FusedElementEmitter(llvm::IRBuilder<> &B, Context &Ctx,
                      const HloComputation &C, ParameterLoader Loader,
                      const MathOptions &Math, llvm::Type *IndexTy);

  /// The value (compute type) of \p I at logical index \p Index (one value
  /// per dim, of the index type). For tuple-shaped instructions (variadic
  /// reduce), \p OutputId selects the element. Values are cached per
  /// (instruction, output, index) within the current basic-block scope.
  llvm::Value *valueAt(const HloInstruction &I,
                       llvm::ArrayRef<llvm::Value *> Index,
                       int64_t OutputId = 0);

  /// Forgets cached values (call when leaving a region whose values do not
  /// dominate what follows).
  void clearCache() { Cache.clear(); }

  /// Computes an instruction's value with \p F instead of from its operands.
  using ValueOverride =
      std::function<llvm::Value *(llvm::ArrayRef<llvm::Value *> Index)>;

  /// From now on valueAt(I, Index) returns F(Index) (not cached); an empty
  /// \p F removes the override. Emitters use it to feed a hero's value
  /// (e.g. a transposed element read from shared memory) into the epilogue.
  /// Callers clear the cache when they change an override.
  void setOverride(const HloInstruction &I, ValueOverride F) {
    if (F)
      Overrides[&I] = std::move(F);
    else
      Overrides.erase(&I);
    ReachesOverride.clear();
  }

  llvm::Type *indexType() const { return IndexTy; }

  /// From now on each concatenate of \p Concats computes every operand and
  /// selects one, without a branch: parameters under it are read through
  /// the guarded loader (speculatePads'), each guarded by its own index's
  /// bounds, so a value is right wherever its index is in bounds and may be
  /// shared by the operands. The caller proved that right and worth it
  /// (LoopPlan::SpeculatedConcats); a concatenate whose operands call a
  /// subgraph function keeps its branches.
  void speculateConcats(std::set<const HloInstruction *> Concats) {
    SpeculatedConcats = std::move(Concats);
  }

  /// From now on each pad of \p Pads computes its operand without a
  /// branch: parameters under it are read through \p Loader with the pad's
  /// bounds test as the guard (offset 0 where it fails), and the pad
  /// selects its value. The caller proved what makes that right and fast
  /// (LoopPlan::SpeculatedPads: operands cheap at any index, the test the
  /// same for every lane of a run); a pad whose operand has a subgraph
  /// function keeps its branch (the function's loads are not guarded).
  void speculatePads(std::set<const HloInstruction *> Pads,
                     GuardedParameterLoader Loader) {
    SpeculatedPads = std::move(Pads);
    Guarded = std::move(Loader);
  }

  /// The index \p OM maps \p Index to, its runtime variables read from
  /// their sources and clamped to their ranges as the op clamps them: e.g.
  /// where an in-place dynamic-update-slice stores the update's element
  /// \p Index (OM its update-to-output map: `(d0, d1){rt0} -> (d0 + rt0,
  /// d1)` gives {d0 + clamp(start, 0, 1016), d1}).
  std::vector<llvm::Value *> mapWithRuntime(const OperandMap &OM,
                                            llvm::ArrayRef<llvm::Value *> Index);

private:
  /// How valueAt gets an instruction's value: from its operands' values
  /// (Forward: the one operand's, tuple and get-tuple-element; Elementwise;
  /// Read: one operand read through the op's map), or by compute(), which
  /// asks valueAt for what it needs (leaves, and ops that branch or loop).
  enum class Step { Forward, Elementwise, Read, Compute };
  /// A value valueAt needs.
  struct Request {
    const HloInstruction *I = nullptr;
    std::vector<llvm::Value *> Index;
    int64_t OutputId = 0;
  };
  /// A value valueAt is computing: its operands' values so far.
  struct Frame {
    const HloInstruction *I;
    std::vector<llvm::Value *> Index;
    int64_t OutputId;
    Step Kind;
    int64_t Next = 0;
    std::vector<llvm::Value *> Ops;
  };
  /// The override's value or the cached one, else null.
  llvm::Value *lookup(const HloInstruction &I,
                      llvm::ArrayRef<llvm::Value *> Index, int64_t OutputId);
  Step stepOf(const HloInstruction &I, int64_t OutputId);
  /// The next operand value \p F needs in \p R (emitting the IR of its
  /// index), or false when F has all it needs.
  bool nextOperand(Frame &F, Request &R);
  llvm::Value *compute(const HloInstruction &I,
                       llvm::ArrayRef<llvm::Value *> Index, int64_t OutputId);
  /// The operand index of \p Map (an output-to-input map of an op) at
  /// \p Index, with runtime variables from \p Rt.
  std::vector<llvm::Value *> applyMap(const IndexingMap &Map,
                                      llvm::ArrayRef<llvm::Value *> Index,
                                      llvm::ArrayRef<llvm::Value *> Syms);
  /// i1: \p Index lies in \p Map's domain (dims bounds and constraints).
  llvm::Value *inDomain(const IndexingMap &Map,
                        llvm::ArrayRef<llvm::Value *> Index,
                        llvm::ArrayRef<llvm::Value *> Syms,
                        const Shape &IndexShape);
  /// Emits `Cond ? Then() : Else()` with real branches (the untaken side
  /// may read out of bounds).
  llvm::Value *emitIfElse(llvm::Value *Cond,
                          const std::function<llvm::Value *()> &Then,
                          const std::function<llvm::Value *()> &Else);
  /// emitIfElse of several values (one phi each).
  std::vector<llvm::Value *>
  emitIfElseValues(llvm::Value *Cond,
                   const std::function<std::vector<llvm::Value *>()> &Then,
                   const std::function<std::vector<llvm::Value *>()> &Else);
  /// Emits Case(Sel) for \p Sel in [0, N) with a switch over real
  /// branches (the last case is the default).
  llvm::Value *emitSwitch(llvm::Value *Sel, size_t N,
                          const std::function<llvm::Value *(size_t)> &Case);
  /// The last j with \p Offsets[j] <= \p V (Offsets ascending from 0), by
  /// a branch-free binary search over a constant table: a concatenate's
  /// operand number.
  llvm::Value *operandNumber(llvm::Value *V,
                             const std::vector<int64_t> &Offsets);
  llvm::Value *emitReduce(const HloInstruction &I,
                          llvm::ArrayRef<llvm::Value *> Index,
                          int64_t OutputId);
  llvm::Value *runtimeOffset(const RuntimeBinding &B, const Interval &Bound,
                             llvm::ArrayRef<llvm::Value *> Index);
  const InstructionIndexing &indexingOf(const HloInstruction &I,
                                        int64_t OutputId);

  llvm::IRBuilder<> &B;
  Context &Ctx;
  const HloComputation &C;
  ParameterLoader Loader;
  MathOptions Math;
  llvm::Type *IndexTy;
  using CacheKey =
      std::tuple<const HloInstruction *, int64_t, std::vector<llvm::Value *>>;
  std::map<CacheKey, llvm::Value *> Cache;
  /// Keys added to Cache since the innermost branch being emitted began
  /// (emitIfElse, emitSwitch); null outside branches.
  std::vector<CacheKey> *Added = nullptr;
  /// Erases \p Keys from Cache and clears it.
  void forget(std::vector<CacheKey> &Keys);
  std::map<std::pair<const HloInstruction *, int64_t>, InstructionIndexing>
      Indexing;
  std::map<const HloInstruction *, ValueOverride> Overrides;
  /// The ranges of the ops' maps, kept across the points emitted.
  RangeCache MapRanges;
  std::set<const HloInstruction *> SpeculatedPads;
  std::set<const HloInstruction *> SpeculatedConcats;
  /// Per instruction (a speculated concatenate, a speculated pad's
  /// operand): whether it or what it is computed from calls a subgraph
  /// function.
  std::map<const HloInstruction *, bool> CallsFunction;
  bool callsFunction(const HloInstruction &I);
  /// Inside a speculated concatenate's operands: parameter reads guarded
  /// by their own bounds.
  bool SelfGuard = false;
  /// The speculated concatenate \p I at \p Index (its operand selected),
  /// or null when it must keep its branches.
  llvm::Value *speculateConcat(const HloInstruction &I,
                               llvm::ArrayRef<llvm::Value *> Index);
  GuardedParameterLoader Guarded;
  /// The innermost speculated pad being computed and its guard (the
  /// conjunction of the enclosing pads' tests); null outside.
  const HloInstruction *GuardPad = nullptr;
  llvm::Value *Guard = nullptr;
  /// The speculated pad \p I at \p Index (its value selected), or null
  /// when its operand must keep the branch.
  llvm::Value *speculatePad(const HloInstruction &I,
                            llvm::ArrayRef<llvm::Value *> Index);

  // Subgraph functions (FusedElementFunctions.cpp).
  /// A subgraph root's function and the values (kernel arguments) each
  /// call passes after the index.
  struct SubgraphFunction {
    llvm::Function *F = nullptr;
    std::vector<llvm::Value *> Captured;
  };
  /// True when valueAt computes \p I by calling its function.
  bool outlined(const HloInstruction &I, int64_t OutputId);
  /// A call of \p I's function at \p Index (building the functions it
  /// needs, callees first).
  llvm::Value *callFunction(const HloInstruction &I,
                            llvm::ArrayRef<llvm::Value *> Index);
  /// Builds \p I's function; its callees exist already.
  void buildFunction(const HloInstruction &I);
  /// valueAt without the call of \p I's own function.
  llvm::Value *valueInline(const HloInstruction &I,
                           llvm::ArrayRef<llvm::Value *> Index,
                           int64_t OutputId);
  /// True when an instruction with an override is reachable from \p I.
  bool reachesOverride(const HloInstruction &I);

  /// The roots that become functions (the plan's).
  std::set<const HloInstruction *> Outline;
  std::map<const HloInstruction *, SubgraphFunction> Functions;
  std::map<const HloInstruction *, bool> ReachesOverride;
  /// The kernel whose arguments functions capture; set at the first call.
  llvm::Function *Kernel = nullptr;
  /// While a function's body is built: the instruction (valueAt computes it
  /// inline) and parameters are read with the plain loader.
  const HloInstruction *Building = nullptr;
};

} // namespace codegen
} // namespace idxmap

#endif
