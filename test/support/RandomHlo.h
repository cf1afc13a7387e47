//===- support/RandomHlo.h - Seeded generator of random fusions -*- C++ -*-===//
//
// Part of idxmap. Generates random fused computations as HLO text for the
// indexing soundness tests: small shapes (rank 0-4, extents 1-7 with size-1
// and odd/prime extents, layouts now and then), every elementwise op family
// (convert, select, clamp and compare included), broadcast, reshape, bitcast,
// transpose, copy, slice with strides, dynamic-slice and
// dynamic-update-slice with s32 offset parameters, pad (negative and
// interior), reverse, concatenate, reduce (add/max over several dims,
// variadic now and then), iota and constants, built as chains and DAGs
// (diamonds, reuse) of 2-15 instructions, with a tuple of several roots now
// and then. Element types are f32 mostly, also bf16, s32 and pred.
//
// The generator also says, per output and fused parameter, whether the
// output-to-input maps must be *exact* (every named element a real
// dependency) and not only sound; see RandomFusion::Exact for the rules.
//
// Deterministic for a seed on every platform (own PRNG).
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_RANDOMHLO_H
#define IDXMAP_TEST_SUPPORT_RANDOMHLO_H

#include "idxmap/Context.h"
#include "idxmap/Hlo.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace idxmap::testing {

struct RandomHloOptions {
  /// Number of non-parameter instructions (constants and iotas used as
  /// leaves not counted), chosen uniformly in [Min, Max].
  unsigned MinInstructions = 2;
  unsigned MaxInstructions = 15;
  /// The most elements of any generated shape (keeps the perturbation
  /// checks cheap and the map domains enumerable).
  int64_t MaxElements = 96;
  /// Only ops whose maps are exact by construction: data movement, reduce
  /// with add, and add/subtract/negate/exp (mostly f32).
  bool ExactOpsOnly = false;
  /// Percent of fusions whose root is a tuple of 2-3 outputs.
  unsigned TuplePercent = 15;
  /// At most this many dynamic-slice/dynamic-update-slice per fusion (each
  /// adds runtime variables, which multiply the domains to enumerate).
  unsigned MaxDynamic = 2;
  /// If set, the root is one instruction of this opcode whose operands are
  /// parameters (single-op mode, for per-op tests). Tuple gives a tuple of
  /// parameters; GetTupleElement a get-tuple-element of a variadic reduce.
  std::optional<HloOpcode> RootOp;
  /// Percent of fusions given structure: 1-3 of their instructions are read
  /// through a tuple and get-tuple-element, or computed by a nested fusion
  /// or a call of a computation of their own (one in three of them with a
  /// second output, read back with get-tuple-element). The values (so the
  /// dependencies and RandomFusion::Exact) stay those of the fusion the
  /// seed gives without structure, which is unchanged by this option.
  unsigned StructuredPercent = 0;
  /// Percent of fusions (drawn from the seed apart from everything else)
  /// with dot, convolution, reduce-window, map, gather, scatter, sort or
  /// all-gather in the middle of the graph (support/RandomFusionWithOps.h):
  /// one of them feeds an operand of the root, more now and then. 0 keeps
  /// every seed's fusion as it was.
  unsigned NewOpsPercent = 0;
};

/// A generated module: `HloModule`, the reduction computations it uses, the
/// fused computation `fused_computation`, and an ENTRY that calls it with a
/// `fusion` instruction.
struct RandomFusion {
  std::string Text;
  /// Name of the fused computation in Text.
  std::string FusedName = "fused_computation";
  /// Number of outputs (root tuple elements, 1 for an array root).
  unsigned NumOutputs = 1;
  /// Number of fused parameters.
  unsigned NumParams = 0;
  /// Exact[Out][P]: the maps from output Out to parameter P must name only
  /// real dependencies. True iff every path from P to the output goes
  /// through exact positions only:
  ///  - data movement (broadcast, reshape, same-type bitcast, transpose,
  ///    copy, slice, reverse, concatenate, pad's operand 0) of any type;
  ///  - add, subtract, negate, reduce with add for f32 and s32, exp for f32;
  /// every path has the same sign (negate and subtract's second operand
  /// flip it, so `p - p` cannot cancel), and for f32 a bound on magnitudes
  /// and on the smallest change a +0.75 perturbation causes proves that no
  /// rounding, overflow or underflow absorbs it. Anything else (select,
  /// clamp, compare, min/max, multiply, convert, dynamic offsets,
  /// dynamic-update-slice, pad values, integer/pred arithmetic other than
  /// add/subtract/negate, variadic reduce) makes the parameter inexact.
  std::vector<std::vector<bool>> Exact;
  /// Opcodes of the generated non-parameter instructions (with repeats).
  std::vector<HloOpcode> Ops;
  /// True if the fused computation has a diamond (an instruction with
  /// several users or used twice by one user).
  bool HasReuse = false;
  /// True if StructuredPercent gave this fusion tuples, nested fusions or
  /// calls (their opcodes are in Ops).
  bool Structured = false;
};

/// Generates one random fusion; the same seed and options give the same
/// text. Every generated module parses and verifies (a failure is a
/// generator bug).
///
/// Example:
/// \code
///   RandomFusion F = generateRandomFusion(42);
///   auto M = parseHloModule(F.Text, "fuzz.hlo");
///   const HloComputation *C = (*M)->findComputation(F.FusedName);
/// \endcode
RandomFusion generateRandomFusion(uint64_t Seed,
                                  const RandomHloOptions &Options = {});

/// The opcodes the single-op mode (RandomHloOptions::RootOp) supports:
/// every opcode with operands that the indexing handles.
std::vector<HloOpcode> singleOpOpcodes();

/// Outcome of checkInverseConsistency.
struct InverseCheckResult {
  bool Ok = true;
  /// The input-to-output indexing of this operand is UNDEFINED (not
  /// supported), so nothing was compared.
  bool Skipped = false;
  std::string Message;
  /// Number of (input element, output element) pairs compared.
  int64_t Pairs = 0;
};

/// Checks computeInputToOutputIndexing(I, InputId) against
/// computeOutputToInputIndexing(I, OutputId) by enumerating both: for every
/// input element e of operand InputId and output element o,
/// `o in in->out(e)` iff `e in out->in(o)`. Both must stay inside the
/// shapes. Skipped if the input-to-output map is UNDEFINED; a failure if it
/// is defined but the output-to-input one is not.
InverseCheckResult checkInverseConsistency(Context &Ctx,
                                           const HloInstruction &I,
                                           int64_t InputId,
                                           int64_t OutputId = 0);

} // namespace idxmap::testing

#endif // IDXMAP_TEST_SUPPORT_RANDOMHLO_H
