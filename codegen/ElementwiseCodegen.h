//===- codegen/ElementwiseCodegen.h - Elementwise HLO ops to IR -*- C++ -*-===//
//
// Part of idxmap. Lowers one element of every elementwise HLO op that the
// reference interpreter supports (idxmap/HloInterpreter.h) to LLVM IR for
// NVPTX, with the interpreter's exact semantics, and inlines reducer
// computations.
//
// Types. Three LLVM types per element type:
//
//   | HLO      | storage (memory) | value (SSA, between ops) | compute       |
//   |----------|------------------|--------------------------|---------------|
//   | pred     | i8 (0 or 1)      | i1                       | i1            |
//   | s8..s64  | i8..i64          | i8..i64                  | same          |
//   | u8..u64  | i8..i64          | i8..i64                  | same          |
//   | f16      | half             | half                     | float         |
//   | bf16     | bfloat           | bfloat                   | float         |
//   | f32, f64 | float, double    | float, double            | same          |
//
// f16/bf16 use LLVM's `half`/`bfloat` types (not i16), so vector loads of
// `<8 x bfloat>` and shuffles need no bitcasts, and conversions are
// `fpext`/`fptrunc` (PTX `cvt.f32.bf16`, `cvt.rn.bf16.f32`: round to nearest
// even, as the interpreter). emitElementwise takes and returns value types;
// each op computes in the compute type and rounds its result to the element
// type, exactly as the interpreter stores every instruction's result.
//
// Exactness. Everything is bit-exact with the interpreter (up to NaN
// payloads and, for f64 -> f16/bf16, nothing: both round through f32) except
// the transcendental functions:
//
//   | op                         | fast (default)                         |
//   MathOptions::Precise |
//   |----------------------------|----------------------------------------|----------------------|
//   | tanh f32 (f16, bf16)       | `tanh.approx.f32`                      |
//   __nv_tanhf           | | exp f32                    | `ex2.approx.ftz.f32(x
//   * log2 e)`       | __nv_expf            | | logistic f32               | 1
//   / (1 + ex2.approx(-x * log2 e))      | 1 / (1 + __nv_expf(-x)) | | log f32
//   | `lg2.approx.f32(x) * ln 2`             | __nv_logf            | | expm1
//   log1p cbrt sin cos tan atan2 power remainder | libdevice (__nv_*f) |
//   libdevice     | | every f64 transcendental   | libdevice (__nv_*) |
//   libdevice            | | sqrt, rsqrt, divide of f32 | `sqrt.approx.f32`,
//   `div.full.f32` (a constant divisor: exact) | exact (`sqrt.rn`, `div.rn`) |
//   | sqrt, rsqrt, divide of f16, bf16, f64 | exact | exact |
//
// Why sin/cos/remainder use libdevice even in fast mode: `sin.approx.f32`'s
// error is only bounded on [-pi, pi] (it grows with |x| beyond), and LLVM's
// own `frem` lowering, x - trunc(x / y) * y, is not exact (fmod is).
//
// Error bounds of the fast forms (f32), documented and measured on an H200
// (div.full.f32: at most 2 ulp over the full range, sqrt.approx.f32: 1 ulp,
// the PTX ISA's bounds, inside f32's default tolerance; they save the exact
// forms' slow paths: an Adam step of f32[262144], 3.84 -> 3.26 us)
// (idxmap-lower-gpu: dense sweeps of 2^22 inputs against the interpreter's
// std:: results):
//   - tanh.approx.f32: the PTX ISA guarantees a maximum relative error of
//     2^-10.987 (~4.9e-4); measured: relative 1.1e-5, absolute 7.7e-6 (worst
//     near |x| = 0.59). toleranceFor() gives {abs 2e-5, rel 1e-4}: about 10x
//     the measured error, tighter than the ISA's guarantee.
//   - ex2.approx.ftz.f32: maximum relative error 2^-22 (2 ulp) for normal
//     results; subnormal inputs act as 0 and subnormal results flush to 0
//     (absolute error < 2^-126). The rounding of x * log2 e adds a relative
//     error of at most |x log2 e| 2^-24 ln 2, below 5.3e-6 for every x whose
//     exp is a finite normal float (|x| < 88.8). Measured: 3.9e-6 at x = 87.6,
//     1.8e-7 on [-1, 1]: within f32's default tolerance {abs 1e-6, rel 1e-5}.
//   - lg2.approx.f32: maximum absolute error about 2^-22 (in log2 units);
//     times ln 2: measured absolute error 1.8e-7 on [0.5, 2] (so a large
//     relative error where log x is near 0, covered by the absolute 1e-6) and
//     relative error below 1e-7 far from 1: within the default tolerance.
//   - logistic (ex2-based): measured relative error 1.8e-6 on [-30, 30].
//   - GELU in f32 (tanh form, gelu.hlo): measured max abs error 5.5e-6 on
//     [-6, 6]; in bf16 bit-exact with the interpreter, in f16 within one ulp.
// libdevice's f32 functions are within 2 ulp (sinf/cosf/tanf 2, powf 2,
// expm1f/log1pf 1-2, fmodf exact), inside the default tolerance.
//
// libdevice is linked by emitPtx (idxmap/Codegen.h, linkLibdevice: only the
// needed functions, internalized, `nvvm-reflect-ftz` = 0) whenever the module
// calls an `__nv_*` function; needsLibdevice() tells the planner beforehand.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_ELEMENTWISECODEGEN_H
#define IDXMAP_CODEGEN_ELEMENTWISECODEGEN_H

#include "idxmap/DeviceModel.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloInterpreter.h"
#include "idxmap/Tuning.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/IRBuilder.h"

#include <map>
#include <optional>
#include <string>

namespace llvm {
class Constant;
class LLVMContext;
class Type;
class Value;
} // namespace llvm

namespace idxmap {
namespace codegen {

/// How transcendental functions are computed (see the file comment).
struct MathOptions {
  MathOptions() = default;
  explicit MathOptions(bool Precise) : Precise(Precise) {}
  /// `--precise-math`: libdevice for tanh, exp, log and logistic too.
  bool Precise = false;
  /// f32 division correctly rounded (`div.rn`) even in fast math: the row
  /// normalization plan's `exact_divide`.
  bool ExactDivide = false;
  /// The overrides set by the caller (EmitOptions::Tuning), which the
  /// kernel plans read (planFusion); the emitters only build IR from plans.
  idxmap::Tuning Tuning;
  /// The GPU whose launch limits the emitters' kernels must fit
  /// (EmitOptions::Device).
  DeviceModel Device = defaultDeviceModel("sm_90");
  /// The values of the fused computation that are computed by functions of
  /// their index (FusedElementEmitter): the kernel plan's Functions, which
  /// emitFusion sets for each kernel. Empty: every value inline.
  std::vector<const HloInstruction *> SubgraphFunctions;
  /// The target has PTX 8.1's vector reductions on global memory
  /// (`red.global.add.v4.f32`, `.v8.bf16`, ...: sm_90 and `.version` 8.1
  /// or newer); emitFusion sets it from the target options.
  bool VectorAtomics = false;
};

//===----------------------------------------------------------------------===//
// Types and conversions
//===----------------------------------------------------------------------===//

/// The in-memory type of one element (pred: i8).
llvm::Type *storageType(llvm::LLVMContext &Ctx, PrimitiveType T);
/// The SSA type of one element between elementwise ops (pred: i1).
llvm::Type *valueType(llvm::LLVMContext &Ctx, PrimitiveType T);
/// The arithmetic type (f16/bf16: float; pred: i1).
llvm::Type *computeType(llvm::LLVMContext &Ctx, PrimitiveType T);

/// Storage -> value: a loaded element (pred: `!= 0`; others unchanged).
/// Scalars or vectors.
llvm::Value *loadConvert(llvm::IRBuilderBase &B, llvm::Value *Stored,
                         PrimitiveType T);
/// Value -> storage: what to store (pred: zext to i8; others unchanged).
llvm::Value *storeConvert(llvm::IRBuilderBase &B, llvm::Value *V,
                          PrimitiveType T);
/// Value -> compute (exact: f16/bf16 extend to float).
llvm::Value *toCompute(llvm::IRBuilderBase &B, llvm::Value *V, PrimitiveType T);
/// Compute -> value, rounding to nearest even (float -> f16/bf16).
llvm::Value *fromCompute(llvm::IRBuilderBase &B, llvm::Value *V,
                         PrimitiveType T);

/// Element \p Linear (row-major) of \p L as a constant of its value type.
llvm::Constant *literalElement(llvm::LLVMContext &Ctx, const Literal &L,
                               int64_t Linear);
/// True if every element of the array literal \p L has the same bits.
bool isSplatLiteral(const Literal &L);

/// `convert` from \p From to \p To of a value-typed \p V, exactly as the
/// interpreter: float -> integer truncates toward zero and saturates, NaN
/// becomes 0; anything -> pred is `!= 0`; integers wrap; f64 and integers go
/// to f16/bf16 through f32.
llvm::Value *emitConvert(llvm::IRBuilderBase &B, llvm::Value *V,
                         PrimitiveType From, PrimitiveType To);

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

/// Nothing when emitElementwise supports \p I (its opcode and element types,
/// as the interpreter: ElementKernels' unaryOpSupports/binaryOpSupports),
/// else the reason. Supported: every unary and binary elementwise op,
/// convert, select, clamp, compare, constant, iota, and the no-ops copy,
/// reshape and bitcast (same width).
std::optional<std::string> checkElementwise(const HloInstruction &I);

/// True when emitting \p I calls a libdevice function under \p M.
bool needsLibdevice(const HloInstruction &I, const MathOptions &M);

/// One element of \p I from one element of each operand, all in value types
/// (valueType of each operand's element type; the result has valueType of
/// \p I's element type). Scalars only (extract vector elements first).
///
/// Operands by opcode:
///   - unary/binary ops, convert, compare, select (pred, on_true, on_false),
///     clamp (min, x, max): the operands' elements.
///   - constant: none for a scalar or splat literal; else one integer, the
///     row-major linear index of the element (the literal becomes a private
///     `addrspace(1)` constant array in the module).
///   - iota: one integer, the index along iota_dimension (converted to the
///     element type as the interpreter's setInt: integers wrap, floats round).
///   - copy, reshape, bitcast (same byte width): the one operand element
///     (bitcast reinterprets the bits).
///
/// Requires an insertion block inside a function of a module (libdevice
/// declarations and constant arrays go into it); asserts checkElementwise.
///
/// Example:
/// \code
///   // out[i] = tanh(in[i]) for bf16: load bfloat, compute in f32, round.
///   llvm::Value *X = loadConvert(B, B.CreateLoad(storageType(C, BF16), P),
///   BF16); llvm::Value *Y = emitElementwise(B, *TanhInstr, {X},
///   MathOptions{}); B.CreateStore(storeConvert(B, Y, BF16), Q);
///   // IR: fpext bfloat -> float, tanh.approx.f32 (inline asm),
///   //     fptrunc float -> bfloat
/// \endcode
llvm::Value *emitElementwise(llvm::IRBuilderBase &B, const HloInstruction &I,
                             llvm::ArrayRef<llvm::Value *> Operands,
                             const MathOptions &M);

/// Nothing when emitReduction can inline \p ToApply: a computation of 2N
/// scalar parameters (N accumulators, then N values) whose instructions are
/// all supported by emitElementwise (or calls/fusions of such computations,
/// tuples, get-tuple-element, broadcast of a scalar), with a scalar root or a
/// tuple root of N scalars. Else the reason.
std::optional<std::string> checkReducer(const HloComputation &ToApply);

/// Inlines the reducer \p ToApply: parameters 0..N-1 are \p Accumulators,
/// N..2N-1 are \p Values (value types). Returns the new accumulators (N
/// values; one for a non-variadic reducer), computed exactly as the
/// interpreter's step-by-step reduce (each instruction rounded to its type).
///
/// Note: the interpreter sums float `add` reductions in double (XLA's fast
/// path, EvaluateOptions::FastReduceAdd); a GPU reduction that accumulates
/// in f32 in a tree order is compared against it with toleranceFor().
llvm::SmallVector<llvm::Value *, 2>
emitReduction(llvm::IRBuilderBase &B, const HloComputation &ToApply,
              llvm::ArrayRef<llvm::Value *> Accumulators,
              llvm::ArrayRef<llvm::Value *> Values, const MathOptions &M);

//===----------------------------------------------------------------------===//
// Tolerances
//===----------------------------------------------------------------------===//

/// The tolerance to compare the GPU result of \p I against the interpreter
/// (for a tuple shape: the loosest over its elements).
///   - Elementwise ops: Tolerance::forType of the result type (exact for
///     integers and pred), loosened to {abs 2e-5, rel 1e-4} for tanh on f32
///     in fast mode (tanh.approx.f32). The other fast forms are within the
///     f32 default (see the file comment).
///   - Reduce with a float `add` reducer over n elements: abs grows by
///     (d + 1) * u * n, u the unit roundoff of the reducer's type and d the
///     larger of ceil(log2 n) and \p RoundingDepth (the kernel's longest
///     chain of roundings, KernelInfo::RoundingDepth; 0 when unknown): the
///     error bound of a summation whose terms each go through at most d
///     roundings, for |x| <= 1 (the runner's random inputs); the
///     interpreter sums such reductions in double (XLA's fast path).
///   - A float add or multiply scan (classifyScan) of lines of n: abs (add)
///     or rel (multiply) grows by (n / 32 + 6) roundings of its type: the
///     warp scan's shuffle levels and a carry per chunk of 32, in another
///     order than the interpreter's step by step.
///   - Fusion/call: the output type's default merged (component-wise max)
///     with the tolerance of every nested reduce/scan/fusion/call, and, for
///     every approximate op inside, its relative error times 4 as both abs and
///     rel: later ops may cancel (`1 + tanh(x)` near tanh = -1) and scale it.
///     A heuristic for inputs of magnitude about 1, not a proof.
Tolerance toleranceFor(const HloInstruction &I, const MathOptions &M = {},
                       int64_t RoundingDepth = 0);

} // namespace codegen
} // namespace idxmap

#endif // IDXMAP_CODEGEN_ELEMENTWISECODEGEN_H
