//===- idxmap/HloInterpreter.h - Reference HLO interpreter ------*- C++ -*-===//
//
// Part of idxmap. Evaluates HLO computations on host Literals exactly as
// XLA's reference evaluator (HloEvaluator) defines each op. It is the oracle
// for every indexing and kernel test.
//
// Semantics, per op family (all mirror xla/hlo/evaluator):
// - Floating point: f32 computes in float, f64 in double, f16/bf16 compute in
//   float and every result is rounded to nearest even to its type.
//   maximum/minimum/clamp propagate NaN; power(x, 0) = power(1, y) = 1;
//   remainder is fmod; logistic is 1 / (1 + exp(-x)); rsqrt is 1 / sqrt(x);
//   sign(-0) = -0, sign(NaN) = NaN; round-nearest-even is nearbyint.
// - Integers wrap (two's complement). x / 0 = -1 (all ones for unsigned),
//   INT_MIN / -1 = INT_MIN, x % 0 = x, INT_MIN % -1 = 0. Shift amounts are
//   read as unsigned; an amount >= the bit width gives 0 for shift-left and
//   shift-right-logical and the sign fill (0 or -1) for
//   shift-right-arithmetic. Integer power is exact with wrap-around; a
//   negative exponent gives 1 for base 1, else 0.
// - pred: add = or, multiply = and, subtract = xor, maximum = or,
//   minimum = and, power(a, b) = a || !b.
// - convert: float to integer truncates toward zero and saturates, NaN
//   becomes 0; anything to pred is `x != 0`; wider floats and integers go to
//   f16/bf16 through f32 (as Eigen's conversions do).
// - compare: IEEE (unordered compares false except NE) unless
//   `type=TOTALORDER`.
// - reduce: for each output element (row-major), the accumulators start at
//   the init values and the reduced index space is walked in the order of
//   the operand's layout (minor-most dimension fastest; row-major for the
//   default layout), applying to_apply one element at a time. Like XLA, a
//   non-variadic reduce of a floating type whose to_apply is a scalar add of
//   its two parameters takes XLA's fast path: the sum is accumulated in
//   double (partial sums over chunks of 512 elements, added to the init
//   value) and rounded once; EvaluateOptions::FastReduceAdd turns it off.
// - dynamic-slice/dynamic-update-slice clamp each start index to
//   [0, operand_dim - size]; pad supports negative and interior padding;
//   bitcast reinterprets the physical (layout) order of the operand.
//
// Example:
// \code
//   auto M = parseHloModule(Text, "m.hlo");
//   Literal X(Shape(PrimitiveType::F32, {4, 8}));
//   X.fillRandom(/*Seed=*/1);
//   auto R = evaluate(*(*M)->entry(), {X});
//   if (!R) std::cerr << R.error().str();
//   else std::cout << (*R)[0].toString();   // f32[4] {...}
// \endcode
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_HLOINTERPRETER_H
#define IDXMAP_HLOINTERPRETER_H

#include "idxmap/Diagnostics.h"
#include "idxmap/Hlo.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace idxmap {

struct EvaluateOptions {
  /// XLA's double-precision fast path for float add reductions (XLA's
  /// default). When false, every reduce applies its to_apply computation
  /// element by element in the element type.
  bool FastReduceAdd = true;
  /// Holds and computes every f16, bf16 and f32 value in f64 (the results
  /// are f64 where the fusion's are those types): a reference without the
  /// element types' rounding. Where it and the ordinary reference differ, a
  /// result is sensitive to rounding (compareLiterals' Sensitivity). A
  /// bitcast between element types is an error in this mode.
  ///
  /// Example: `exponential(exponential(x))` at x = 3.7 is 3.681650e17 in
  /// f32 (each exponential rounded to f32), 3.681645e17 widened.
  bool Widen = false;
  /// With Widen: every op that rounds (not negate, abs, select, min, max or
  /// data movement) scales its result by 1 + PerturbUlps u, u the unit
  /// roundoff of the op's own type (2^-53 for f64, 2^-24 f32, 2^-11 f16,
  /// 2^-8 bf16),
  /// reducers included except XLA's f64 fast path for sums. Run with +k and
  /// -k, it shows how far errors of k u in every op can move a result. A
  /// sine or cosine whose argument is uncertain by a radian or more (k u
  /// |x| >= 1) is +1 with +k and -1 with -k: its value is arbitrary.
  int PerturbUlps = 0;
  /// Budget: bytes of the values alive at once (results of instructions in
  /// every computation being run, widened values at their widened size; the
  /// arguments are the caller's). Evaluation stops with a diagnostic at the
  /// instruction whose result would exceed it, before allocating it. No
  /// limit by default (test oracles run large workloads); `idxmap hlo
  /// --evaluate` sets 1 GiB (--max-bytes).
  ///
  /// Example: with MaxBytes = 2^30, `b = f32[65536,8192] broadcast(p)`
  /// (2 GiB) gives `m.hlo:4:3: error: evaluating 'b' needs 2147483648 bytes,
  /// 0 are in use (limit 1073741824)`.
  int64_t MaxBytes = std::numeric_limits<int64_t>::max();
  /// Budget: element results computed, over every computation run (a
  /// reduce counts each input element once per instruction of its
  /// to_apply); checked before each instruction runs. No limit by default;
  /// `idxmap hlo --evaluate` sets 2^28 (--max-work, about a second).
  ///
  /// Example: with MaxWork = 2^28, 100,000 negations of an f32[1048576]
  /// stop at the 257th: `error: evaluating 'n257' would exceed 268435456
  /// element results (EvaluateOptions::MaxWork)`.
  int64_t MaxWork = std::numeric_limits<int64_t>::max();
  /// f16 and bf16 prefix sums and products (a prefix reduce-window of a
  /// scalar add or multiply; a scan op whose body returns `x op carry` as
  /// output and carry) fold in f64, each output and final carry rounded
  /// once to the type: the arithmetic of kernels that accumulate such
  /// scans in f32 (idxmap's scan emitter, torch's scans), association
  /// aside. Off: every step rounds to the type, as the HLO reads. With
  /// Widen the fold is not perturbed (one rounding, like FastReduceAdd).
  ///
  /// Example: the cumsum of 2053 bf16 elements of 0.01 ends at 20.5 (bf16
  /// of 20.53) with WideScans, at 4 without: past 4 a step of 0.01 is
  /// below half a bf16 unit and rounds away.
  bool WideScans = false;
};

/// True if \p C is XLA's "scalar add", `add(p0, p1)` of its two distinct
/// scalar parameters: the float reducers EvaluateOptions::FastReduceAdd sums
/// in f64 (and code generators accumulate wider to match).
/// Example: `add { a = f32[] parameter(0) b = f32[] parameter(1)
/// ROOT c = f32[] add(a, b) }` is one; `add(b, a)` too; `add(a, a)` is not.
bool isScalarAdd(const HloComputation &C);

/// Evaluates \p C on \p Args (one per parameter, matching each parameter's
/// element type and dimensions; layouts are ignored since Literals are
/// row-major). Returns the root's value **flattened**: one Literal per leaf
/// of the root shape in depth-first order (a single element for an array
/// root; the elements of a tuple root, nested tuples flattened).
///
/// Errors (a Diagnostic at the offending instruction): wrong argument
/// count or shape, an op/type combination the interpreter does not
/// implement, an elided constant (`{...}`).
Expected<std::vector<Literal>>
evaluate(const HloComputation &C, const std::vector<Literal> &Args,
         const EvaluateOptions &Options = {});

/// How far, per element of each output, an implementation that rounds
/// differently could land from \p Reference (evaluate()'s result for the
/// same arguments): |W+ - W-| + 2 |Reference - W|, where W is \p C
/// evaluated widened (EvaluateOptions::Widen) and W+/W- widened with every
/// rounding op perturbed by +4/-4 u (PerturbUlps). f64 literals with the
/// outputs' dimensions; 0 for integer outputs and where a value is not
/// finite. For compareLiterals' Slack.
///
/// Example: for `exponential(exponential(x))` in f32 at x = 3.7 (3.68e17)
/// the slack is about 8e12, 2e-5 of the value: 4 u of the inner exponential
/// (40.4) times the outer derivative (3.68e17), both ways, plus twice the
/// f32-f64 difference (5e11); for `add(x, y)` at 1 and 2 it is 2 * 4 u * 3 =
/// 1.4e-6.
Expected<std::vector<Literal>>
roundingSlack(const HloComputation &C, const std::vector<Literal> &Args,
              const std::vector<Literal> &Reference,
              const EvaluateOptions &Options = {});

/// As evaluate(), but returns the root's value unflattened (a tuple Literal
/// for a tuple root).
Expected<Literal> evaluateToLiteral(const HloComputation &C,
                                    const std::vector<Literal> &Args,
                                    const EvaluateOptions &Options = {});

/// True if evaluate() has semantics for \p Op on one device: the data
/// movement, elementwise, reduce, dot, convolution, reduce-window,
/// select-and-scatter, map, gather, scatter, sort, while, conditional, call
/// and the one-device collectives, among others (docs/HLO_OPS.md lists
/// them). Element types other than the compute types are refused per
/// instruction, whatever the op. Example: `interpreterEvaluates(While)`,
/// `!interpreterEvaluates(CustomCall)`.
bool interpreterEvaluates(HloOpcode Op);

/// True if the interpreter defines the one-operand elementwise op \p Op on
/// element type \p T (e.g. `not` on integers and pred, `exponential` on
/// floats). Code generators use the same table, so that they accept exactly
/// what the reference can check.
bool interpreterSupportsUnary(HloOpcode Op, PrimitiveType T);
/// Same for two-operand elementwise ops (`and` on pred and integers, ...).
bool interpreterSupportsBinary(HloOpcode Op, PrimitiveType T);

/// Per-element tolerance: |expected - actual| <= Abs + Rel * |expected|.
struct Tolerance {
  double Abs = 0;
  double Rel = 0;
  /// Defaults: f64 {1e-12, 1e-12}, f32 {1e-6, 1e-5}, f16 {1e-3, 1e-3},
  /// bf16 {1e-2, 1e-2}, integers and pred exact.
  static Tolerance forType(PrimitiveType T);
};

/// The outcome of compareLiterals.
struct LiteralComparison {
  bool Match = true;
  int64_t Mismatches = 0;
  /// Row-major index of the first mismatch, -1 if none.
  int64_t FirstMismatch = -1;
  double MaxAbsError = 0;
  double MaxRelError = 0;
  /// Elements accepted only through the Slack allowance.
  int64_t Sensitive = 0;
  /// Empty on a match, else e.g. `3 of 16 elements differ; first at
  /// [0,2]: expected 1.5, got 1.75 (max abs error 0.25, max rel 0.1667)`.
  std::string Message;
};

/// Compares \p Actual against \p Expected element by element (tuples
/// recursively). Shapes must be compatible (a mismatch is reported in the
/// message). NaN matches NaN, infinities must match exactly, integers and
/// pred compare exactly unless \p Tol is given.
///
/// \p Slack, when given (roundingSlack(); same dimensions, f64, a tuple for
/// a tuple), is an extra absolute allowance per element: where rounding
/// alone makes the reference unstable, an implementation that rounds
/// differently is not wrong. Where the result is well conditioned the slack
/// is a few ulps and changes nothing.
///
/// Example: sin(exp(exp(x))) in f32 at x = 3 (exp(exp(3)) = 528491311, an
/// f32 ulp of 64): Expected 0.9939, f64 -0.6081, so a slack of at least
/// 2 * 1.602; a kernel's -0.85 is accepted (1.84 <= 1e-6 + 1e-5 * 0.9939 +
/// 3.2), counted in LiteralComparison::Sensitive.
LiteralComparison compareLiterals(const Literal &Expected,
                                  const Literal &Actual,
                                  std::optional<Tolerance> Tol = std::nullopt,
                                  const Literal *Slack = nullptr);

} // namespace idxmap

#endif // IDXMAP_HLOINTERPRETER_H
