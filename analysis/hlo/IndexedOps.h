//===- hlo/IndexedOps.h - Gather, scatter, sort, collectives ---*- C++ -*-===//
//
// Part of idxmap. Private to analysis/hlo. The ops whose elements are read
// at data-dependent or whole-row positions (gather, scatter, dynamic-slice,
// dynamic-update-slice, sort) and the collectives (all-gather, all-reduce,
// reduce-scatter, all-to-all, collective-permute, replica-id,
// partition-id): their shape rules (HloVerifierIndexed.cpp), indexing maps
// (OpIndexingIndexed.cpp) and single-device semantics
// (InterpretIndexed.cpp). The shared dispatchers (HloVerifier.cpp,
// OpIndexing.cpp, Interpreter.cpp) call in here with one `case` per op.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_HLO_INDEXEDOPS_H
#define IDXMAP_ANALYSIS_HLO_INDEXEDOPS_H

#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"

#include <functional>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace idxmap {
namespace hlo {

//===----------------------------------------------------------------------===//
// Verifier (HloVerifierIndexed.cpp)
//===----------------------------------------------------------------------===//

/// The shape rules of gather, scatter, sort and all-gather (XLA's shape
/// inference, the parts the indexing and the interpreter rely on). Returns
/// `gather: ...` style messages, or nullopt when \p I is valid.
std::optional<std::string>
verifyIndexedOp(const HloInstruction &I,
                const std::unordered_set<std::string> &Attrs);

/// The number of replicas in one group of a collective's `replica_groups`
/// (`{{0,1,2,3}}` and `[2,4]<=[8]` give 4); nullopt when the attribute is
/// absent, empty (`{}`: every replica) or unreadable.
std::optional<int64_t> replicaGroupSize(const HloInstruction &I);

//===----------------------------------------------------------------------===//
// Indexing (OpIndexingIndexed.cpp)
//===----------------------------------------------------------------------===//

/// Output-to-input maps of gather, scatter, dynamic-slice,
/// dynamic-update-slice, sort, all-gather and the one-device elementwise
/// collectives (all-reduce, collective-permute). Runtime variables fold as
/// XLA's do (a scalar constant, an iota, a clamp with constant bounds).
InstructionIndexing indexedOutputToInput(Context &Ctx, const HloInstruction &I,
                                         int64_t OutputId);

/// Input-to-output maps where they are data independent: gather's and
/// scatter's operand 0 is UNDEFINED (data dependent); sort's operands,
/// all-reduce's and collective-permute's are the identity on the row /
/// element; all-gather's operand maps to every replica's position.
InstructionIndexing indexedInputToOutput(Context &Ctx, const HloInstruction &I,
                                         int64_t InputId);

/// XLA's spelling of a runtime variable's source in printed maps:
/// `parameter(N)`, `constant(V)` for a scalar constant, else the name.
std::string runtimeSourceName(const HloInstruction &I);

//===----------------------------------------------------------------------===//
// Interpreter (InterpretIndexed.cpp)
//===----------------------------------------------------------------------===//

/// Evaluates a called computation on scalar or array arguments (the
/// evaluator's own run(), so that limits and widening apply).
using ComputationRunner = std::function<Expected<Literal>(
    const HloComputation &, const std::vector<const Literal *> &)>;

/// The opcodes evalIndexedOp evaluates.
bool canEvaluateIndexedOp(HloOpcode Op);

/// Evaluates gather, scatter, sort and the collectives on one device.
/// \p Out is the literal shape of the result (widened where the evaluator
/// widens). Collectives run as if every replica of the group held the same
/// values (a single device simulating an SPMD program on replicated data):
/// all-gather tiles the operand, all-reduce folds it with itself group-size
/// times, reduce-scatter keeps replica 0's shard of that, all-to-all gives
/// replica 0's view, collective-permute copies when some pair targets
/// replica 0 (else zeros), replica-id and partition-id are 0.
Expected<Literal> evalIndexedOp(const HloInstruction &I,
                                const std::vector<const Literal *> &In,
                                const Shape &Out, const ComputationRunner &Run);

} // namespace hlo
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_HLO_INDEXEDOPS_H
