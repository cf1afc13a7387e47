//===- idxmap/Fusion.h - Hero and emitter choice of a fusion ----*- C++ -*-===//
//
// Part of idxmap. Decides which op shapes the kernel (the hero) and which
// emitter generates it, with the reason, from the fusion's structure and
// shapes alone.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_FUSION_H
#define IDXMAP_FUSION_H

#include "idxmap/Hlo.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace idxmap {

enum class EmitterKind {
  Loop,
  Transpose,
  RowReduction,
  MultiRowReduction,
  ColumnReduction,
  FullReduction,
  Concatenate,
  /// Every root is a dynamic-update-slice whose operand is a fusion
  /// parameter nothing else reads: the kernel writes the update into that
  /// parameter's buffer and never touches the rest.
  InPlaceDynamicUpdateSlice,
  /// Every root is a unit-stride slice of inputs of one shape (XLA's
  /// input-slices fusion): the input is walked once and each element
  /// stored into every slice that holds it.
  InputSlices,
  /// The root is a scatter of a parameter nothing else reads: the kernel
  /// combines each update element into that parameter's buffer.
  Scatter,
  /// A prefix scan (a `scan` op or a reduce-window that is one: ScanInfo)
  /// with elementwise ops before and after it.
  Scan,
};

/// `loop`, `transpose`, `row reduction`, `multi-row reduction`,
/// `column reduction`, `full reduction`, `concatenate`, `in-place
/// dynamic-update-slice`, `input slices`, `scatter`, `scan`.
std::string_view emitterKindName(EmitterKind K);

/// A reduction brought to canonical 3-D form over the input's physical
/// (major-to-minor) dims, size-1 dims dropped and adjacent dims of the same
/// kind merged: row `[reduced batch, kept, reduced row]`, column
/// `[kept major, reduced, kept minor]`, full `[1, 1, N]`.
struct ReductionInfo {
  bool IsRow = true;
  std::array<int64_t, 3> Dims = {1, 1, 1};
};

/// A transpose of the minor dimension, normalized: adjacent input dims that
/// stay adjacent are merged, size-1 dims dropped. `Dims` are the normalized
/// input dims, `Permutation` maps output dim i to input dim Permutation[i].
struct TransposeInfo {
  std::vector<int64_t> Dims;
  std::vector<int64_t> Permutation;

  /// The normalized input dims that follow the input's minor dim in the
  /// output, outer first (contiguous in the output: the rows of the
  /// transpose emitter's tiles). For [20, 160, 170] permuted by {2, 1, 0}:
  /// {1, 0}; for {0, 2, 1}: {1}.
  std::vector<int64_t> dimsAfterMinor() const;
  /// The product of their extents: 3200 and 160 above.
  int64_t elementsAfterMinor() const;
};

/// A prefix scan recognized in HLO (classifyScan), in either form JAX
/// writes: XLA's `scan` op whose body combines its input slice and its one
/// carry with one associative op and returns the result twice (output and
/// carry: `jnp.cumsum`), or a reduce-window whose window spans the whole
/// scanned dim with size-1 low padding at stride 1 (`lax.cummax`,
/// `cumprod`; a reversed scan pads high). Output element i of a line is
/// init ⊕ x_0 ⊕ ... ⊕ x_i (⊕ x_i ... x_{n-1} reversed).
///
/// Example: `s = f32[16384,4096] reduce-window(x, c), window={size=1x4096
/// pad=0_0x4095_0}, to_apply=max` gives Dim 1, Reverse false, Combiner
/// Maximum, Dims {16384, 4096, 1}: a row scan.
struct ScanInfo {
  const HloInstruction *Hero = nullptr;
  /// The scanned operand and the init: a scalar (reduce-window) or the
  /// carry's initial slice (scan).
  const HloInstruction *Input = nullptr, *Init = nullptr;
  /// A variadic reduce-window (a running max with its index): every
  /// scanned operand and its init, Input and Init first; one of each
  /// otherwise. The combiner is then the window's computation (Combiner
  /// is HloOpcode::Call): kernels run it in any association order, as
  /// reduce-window's semantics allow, and know no identity for it.
  std::vector<const HloInstruction *> Inputs, Inits;
  bool variadic() const { return Inputs.size() > 1; }
  /// The scanned logical dimension and its length.
  int64_t Dim = 0, Length = 0;
  bool Reverse = false;
  /// add, maximum, minimum or multiply (call: a variadic window's
  /// computation).
  HloOpcode Combiner = HloOpcode::Add;
  /// The type the combiner computes in (the result's element type).
  PrimitiveType Type = PrimitiveType::F32;
  /// Over the physical layout, major to minor: the elements of the dims
  /// more major than the scanned one, its length, those more minor; a row
  /// scan (a minor-dim scan) has Dims[2] == 1.
  std::array<int64_t, 3> Dims = {1, 1, 1};
  bool isRow() const { return Dims[2] == 1; }
  /// The parameters of the fusion the scanned operand is computed from
  /// (its prologue's), in parameter order. Example: for `s = scan(add(p1,
  /// p0), p2)`, {p0, p1}.
  std::vector<const HloInstruction *> prologueParameters() const;
  /// The prologue parameters of the scanned operand's dims (those a scan
  /// streams, one element per element scanned), in parameter order.
  /// Example: for `s = scan(add(p0, broadcast(p1)), z)`, {p0}.
  std::vector<const HloInstruction *> streamedParameters() const;
  /// `add along dim 1 of f32[128,1000]{1,0}: [128, 1000, 1]`.
  std::string str() const;
};

/// Whether \p Op on \p T has an identity e (x op e == x for every x): add
/// and multiply of numbers (-0.0 and 1; pred has none), maximum and
/// minimum of any type (the lowest and the highest value), and, or and
/// xor of integers and pred. The tiled scans need one (items past a
/// line's end, the prefix before a line's first tile); codegen's
/// combinerIdentity builds it. Example: `hasCombinerIdentity(
/// HloOpcode::Add, PrimitiveType::F32)` is true, `(Add, Pred)` false.
bool hasCombinerIdentity(HloOpcode Op, PrimitiveType T);

/// The scan \p I computes, or nullopt with \p Why (`not a scan`, `the
/// window of 'rw' is not a prefix of dim 1`, `the body of 'cs' is not one
/// associative op of its input and carry`).
std::optional<ScanInfo> classifyScan(const HloInstruction &I,
                                     std::string *Why = nullptr);

/// The scan of \p C when \p C is a scan fusion: one scan or reduce-window
/// that classifyScan recognizes, no other (nor a reduce), its final carry
/// unread, and every value computed from its output elementwise at the
/// output's index (the epilogue; other operands of those ops are read at
/// that index too), every root among them. nullopt (with
/// \p Why) otherwise. Example: `c = f32[128,1000] reduce-window(exp(p0),
/// z), window={size=1x1000 pad=0_999}, to_apply=add; ROOT r = negate(c)`
/// gives c's ScanInfo; with a second root `exp(p0)`, nullopt ("root 'e'
/// is not computed from the scan 'c'").
std::optional<ScanInfo> scanFusionHero(const HloComputation &C,
                                       std::string *Why = nullptr);

/// The result of hero and emitter analysis.
///
/// Example: for `../shared/examples/rowsum_f32_8192x8192.hlo`
/// \code
///   FusionAnalysis A = analyzeFusion(*Module->entry()->root());
///   A.Kind == EmitterKind::RowReduction;
///   A.Heroes[0]->opcode() == HloOpcode::Reduce;
///   A.Reduction->Dims == {1, 8192, 8192};
///   A.Reason == "reduce 'r' reduces the minor dimension: row reduction
///               [1, 8192, 8192]"
/// \endcode
struct FusionAnalysis {
  /// The analyzed computation (the fused computation of a fusion).
  const HloComputation *Computation = nullptr;
  /// The computation's outputs (a tuple root's operands, else the root).
  std::vector<const HloInstruction *> Roots;
  /// One hero per root.
  std::vector<const HloInstruction *> Heroes;
  EmitterKind Kind = EmitterKind::Loop;
  std::optional<ReductionInfo> Reduction;
  std::optional<TransposeInfo> Transpose;
  std::optional<ScanInfo> Scan;
  /// For InPlaceDynamicUpdateSlice: per root, the parameter number of the
  /// operand it updates (the buffer the root's output shares).
  std::vector<int64_t> UpdatedParams;
  /// Why this emitter (and not another) was chosen.
  std::string Reason;
};

/// Analyzes a fusion instruction (its fused computation) or, for any other
/// instruction, the whole computation it belongs to.
FusionAnalysis analyzeFusion(const HloInstruction &Fusion);
/// Analyzes a computation as if it were fused.
FusionAnalysis analyzeComputation(const HloComputation &C);

/// Whether \p C's roots can update their operands in place (XLA's
/// in-place dynamic-update-slice fusion): every root is a
/// dynamic-update-slice whose operand 0 is a parameter of \p C that only
/// that root reads (as its operand 0, shape and layout equal to the
/// root's), a different parameter per root, and all updates have one shape.
/// Returns the parameter numbers per root, or nullopt with \p Why.
///
/// Example: `ROOT d = bf16[1024,4096] dynamic-update-slice(p0, p1, p2, c0)`
/// with p0 = parameter(0) read by nothing else gives {0}; with a second
/// user of p0 (`add(p0, ...)` in another root) nullopt, "parameter 'p0' is
/// also read by 'add'".
std::optional<std::vector<int64_t>>
inPlaceUpdatedParams(const HloComputation &C, std::string *Why = nullptr);

/// The concatenate emitter's hero of \p C, or null: the one concatenate
/// of at most 16 operands, of the root's dims, from which the single root is
/// computed through elementwise ops only (each reads it at the output's
/// index), so that each operand's elements can be computed once and
/// stored at their place.
///
/// Example: in `c = f32[8,12] concatenate(exp(p0), p1), dimensions={1};
/// ROOT r = f32[8,12] add(c, p2)` the hero is c; with `ROOT r =
/// reverse(c)` there is none.
const HloInstruction *concatenateHero(const HloComputation &C);

/// The parameter a scatter root of \p C updates in place (XLA's scatter
/// fusion): the root is a scatter of one operand whose operand 0 is a
/// parameter of \p C that only the scatter reads, as its operand 0, of
/// the root's type and layout. nullopt (with \p Why) otherwise. Example:
/// `ROOT s = f32[4096,256] scatter(p0, i, u), ..., to_apply=add` with p0 =
/// parameter(0) read by nothing else gives 0.
std::optional<int64_t> inPlaceScatterParam(const HloComputation &C,
                                           std::string *Why = nullptr);

/// Whether \p C is an input-slices fusion: at least two roots, each a
/// slice of stride 1 whose operands all have one shape (XLA's
/// kInputSlices). Example: `ROOT t = tuple(slice(e), slice(e))` with
/// e = exp(p0) and windows [0:64] and [64:192] of its minor dim: true.
bool isInputSlicesFusion(const HloComputation &C);

/// The transpose hero of \p A (the last hero that is a transpose), or null.
/// Example: for `test/examples/exp_transpose_abs.hlo`, whose one root is
/// abs(transpose(exp(p0))), the `transpose`.
const HloInstruction *transposeHero(const FusionAnalysis &A);

/// An instruction that no emitter computes, and why.
struct UnmodeledInstruction {
  const HloInstruction *Instruction = nullptr;
  std::string Reason;
};

/// The first instruction of \p C that no emitter computes, which makes the
/// analysis of \p C as a kernel meaningless: a value of a non-compute type
/// (`'c' has type c64[32]; the emitters take ...`), an op after Call in
/// HloOpcode (`no emitter computes dot 'dot.1'`: dot, custom-call, while,
/// collectives, ...), or an empty tuple root (no outputs). nullopt when
/// there is none. The commands that take a whole module (analyze, emit)
/// leave such fusions and name them with this reason.
std::optional<UnmodeledInstruction>
findUnmodeledInstruction(const HloComputation &C);

/// The fusions of \p M that are kernels, in module order: every fusion
/// instruction outside fused computations (in ENTRY, while bodies and
/// conditions, conditional branches, called computations), not the
/// fusions nested inside another fusion's computation, which are part of
/// that kernel.
std::vector<const HloInstruction *> kernelFusions(const HloModule &M);

/// The reduction's canonical form, or nullopt (with \p Why) when the reduced
/// dims are not contiguous in the physical layout.
std::optional<ReductionInfo> classifyReduction(const HloInstruction &Reduce,
                                               std::string *Why = nullptr);

/// The normalized transpose if \p T transposes the minor dimension and is
/// large enough for shared-memory tiles, else nullopt (with \p Why).
std::optional<TransposeInfo> classifyTranspose(const HloInstruction &T,
                                               std::string *Why = nullptr);

} // namespace idxmap

#endif // IDXMAP_FUSION_H
