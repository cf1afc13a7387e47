//===- idxmap/HloIndexing.h - Indexing maps of HLO instructions -*- C++ -*-===//
//
// Part of idxmap. For an HLO instruction, which elements of each operand an
// output element reads (output-to-input) and which output elements an input
// element feeds (input-to-output); through a fusion, the set of distinct maps
// from the fusion's output to every instruction.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_HLOINDEXING_H
#define IDXMAP_HLOINDEXING_H

#include "idxmap/Hlo.h"
#include "idxmap/IndexingMap.h"

#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace idxmap {

/// A runtime variable of a map, bound to the HLO value that provides it at
/// run time: the variable's value is `Source[Map(d...)]`, where Map goes
/// from the map's dims to an index of Source (`(d0, d1) -> ()` for a scalar).
struct RuntimeBinding {
  const HloInstruction *Source = nullptr;
  IndexingMap Map;
};

/// One map from an output index to an operand index, with the bindings of
/// its runtime variables (`Bindings[k]` belongs to runtime variable k, in the
/// map's own order, also after composition).
struct OperandMap {
  OperandMap() = default;
  OperandMap(IndexingMap Map, std::vector<RuntimeBinding> Bindings = {},
             IndexingMap ReplicaId = {})
      : Map(std::move(Map)), Bindings(std::move(Bindings)),
        ReplicaId(std::move(ReplicaId)) {}

  IndexingMap Map;
  std::vector<RuntimeBinding> Bindings;
  /// For a collective (all-gather), the replica whose operand is read:
  /// `(d...) -> (replica position)`, as XLA's OperandIndexing keeps it;
  /// UNDEFINED for every other op.
  IndexingMap ReplicaId;

  bool operator==(const OperandMap &O) const;
};

/// The indexing of one instruction: for each operand, a set of maps
/// (usually one; empty when the operand is not read; one UNDEFINED map when
/// the indexing is unknown).
///
/// Example: for `r = f32[4] reduce(f32[4,8] p, f32[] z), dimensions={1}`
/// \code
///   computeOutputToInputIndexing(Ctx, *R).str(*R) ==
///     "operand id = 0\n"
///     "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 7]\n"
///     "operand id = 1\n"
///     "(d0) -> (), domain: d0 in [0, 3]\n"
/// \endcode
struct InstructionIndexing {
  std::vector<std::vector<OperandMap>> Operands;

  /// XLA's format: one block per operand, `operand id = N` then each map on
  /// its own line (or `unknown indexing`), runtime variables listed as
  /// `rtK: SOURCE; MAP` under the map (SOURCE as XLA prints it:
  /// `parameter(N)`, `constant(V)` or the instruction's name), then a
  /// collective's `replica id:` map. \p OnlyOperand >= 0 prints that block
  /// alone (with its own id).
  std::string str(int64_t OnlyOperand = -1) const;
};

/// The number of outputs of \p I: the elements of a tuple-shaped result
/// (variadic reduce, tuple, multi-output fusion), else 1.
/// Example: `r = (f32[4], s32[4]) reduce(p, q, z, zi), ...` has 2.
int64_t numOutputs(const HloInstruction &I);

/// Output-to-input maps of \p I for output \p OutputId (tuple-shaped
/// results: variadic reduce, tuple). Unsupported ops, an output id outside
/// [0, numOutputs(I)) and a tuple-shaped output (a nested tuple) give
/// UNDEFINED maps. Maps are simplified (reshape and bitcast keep size-1
/// dims).
/// True when \p I reads every operand at its own index: an elementwise op
/// (isElementwise) whose operands are arrays of its dims, so each
/// operand's map is the identity. Example: `add(f32[4,6] a, f32[4,6] b)`
/// yes; `broadcast`, `slice`, `bitcast-convert` no.
bool readsOperandsAtOwnIndex(const HloInstruction &I);

InstructionIndexing computeOutputToInputIndexing(Context &Ctx,
                                                 const HloInstruction &I,
                                                 int64_t OutputId = 0);

/// Input-to-output maps of \p I for operand \p InputId: elementwise,
/// broadcast (added dims become range variables), transpose, reshape,
/// bitcast, slice, reverse, concatenate, reduce, pad, and a
/// dynamic-update-slice's update (`(d0, d1){rt0} -> (d0 + rt0, d1)` for
/// starts (s, 0), rt0 bound to s and ranging over the clamped starts; the
/// in-place dynamic-update-slice emitter stores through it). Others are
/// UNDEFINED.
/// The result has one entry (in `Operands[0]`) for the one output.
///
/// Example: for `s = f32[5] slice(f32[10] p), slice={[1:10:2]}`
/// \code
///   computeInputToOutputIndexing(Ctx, *S, 0).Operands[0][0].Map ==
///     "(d0) -> ((d0 - 1) floordiv 2), domain: d0 in [1, 9],
///      (d0 - 1) mod 2 in [0, 0]"      // after simplify: d0 + 1 mod 2 ...
/// \endcode
InstructionIndexing computeInputToOutputIndexing(Context &Ctx,
                                                 const HloInstruction &I,
                                                 int64_t InputId);

/// True if computeOutputToInputIndexing models \p Op: every op whose maps
/// XLA's indexing analysis has (elementwise, data movement, reduce, dot,
/// convolution, reduce-window, map, gather, scatter, dynamic slices, sort,
/// all-gather, the one-device collectives, tuple, fusion, call). An
/// instance may still be UNDEFINED (a bitcast between element widths, a
/// get-tuple-element of a nested tuple); every other op (custom-call,
/// while, fft, ...) is opaque: `unknown indexing` for each operand.
/// Example: `hasOutputToInputIndexing(HloOpcode::Dot) == true`,
/// `hasOutputToInputIndexing(HloOpcode::CustomCall) == false`.
bool hasOutputToInputIndexing(HloOpcode Op);

/// True if computeInputToOutputIndexing models \p Op (see its comment).
/// Example: `hasInputToOutputIndexing(HloOpcode::Transpose) == true`,
/// `hasInputToOutputIndexing(HloOpcode::Dot) == false` (as in XLA).
bool hasInputToOutputIndexing(HloOpcode Op);

/// For every instruction of a fused computation that \p Start (default:
/// the root) reaches, the distinct maps from Start's output \p OutputId to
/// that instruction's output, composed from Start down, simplified, unused
/// symbols removed. Start itself gets the identity.
///
/// Example: in `f { p = f32[8] parameter(0)  e = f32[8] exp(p)
///                 ROOT t = f32[4] slice(e), slice={[2:6]} }`
/// the map of `p` is `(d0) -> (d0 + 2), domain: d0 in [0, 3]`.
using GroupedIndexing =
    std::unordered_map<const HloInstruction *, std::vector<OperandMap>>;
GroupedIndexing computeGroupedIndexing(Context &Ctx,
                                       const HloComputation &Computation,
                                       const HloInstruction *Start = nullptr,
                                       int64_t OutputId = 0);

/// While one lives, computeGroupedIndexing on its thread with its Context
/// keeps each result (by computation, start and output id) and gives it
/// again instead of composing the maps anew. planFusion holds one: its
/// planners, the coalescing analysis and the cost model ask for the same
/// maps several times (a 228-instruction threefry fusion composed them
/// three times, half of its compile). The latest one made on a thread is
/// the one in use; each restores the one before when it goes.
///
/// Example:
/// \code
///   {
///     GroupedIndexingMemo Memo(Ctx);
///     GroupedIndexing A = computeGroupedIndexing(Ctx, C); // composed
///     GroupedIndexing B = computeGroupedIndexing(Ctx, C); // A's copy
///   }
///   computeGroupedIndexing(Ctx, C); // composed again
/// \endcode
class GroupedIndexingMemo {
public:
  explicit GroupedIndexingMemo(Context &Ctx);
  ~GroupedIndexingMemo();
  GroupedIndexingMemo(const GroupedIndexingMemo &) = delete;
  GroupedIndexingMemo &operator=(const GroupedIndexingMemo &) = delete;

  /// The memo computeGroupedIndexing uses on this thread for \p Ctx, or
  /// null.
  static GroupedIndexingMemo *active(const Context &Ctx);
  /// The result kept for these arguments, or null.
  const GroupedIndexing *find(const HloComputation &C,
                              const HloInstruction *Start,
                              int64_t OutputId) const;
  void keep(const HloComputation &C, const HloInstruction *Start,
            int64_t OutputId, const GroupedIndexing &G);
  /// computeOutputToInputIndexing(Ctx, I, OutputId), computed once while
  /// the memo lives: walks from different starts (one per root of a
  /// multi-output fusion) visit the same instructions.
  const InstructionIndexing &operandIndexing(const HloInstruction &I,
                                             int64_t OutputId);
  /// The composition of two plain maps (no runtime variables or replica
  /// ids) as the walk composes them, once per pair while the memo lives.
  const OperandMap *findComposed(const IndexingMap &First,
                                 const IndexingMap &Second) const;
  void keepComposed(const IndexingMap &First, const IndexingMap &Second,
                    const OperandMap &R);

  /// The hash of a pair of maps composed (the memo's key, and the walk's
  /// own when no memo is active).
  struct PairHash {
    size_t operator()(const std::pair<IndexingMap, IndexingMap> &P) const {
      return P.first.hash() * 31 + P.second.hash();
    }
  };

private:
  Context &Ctx;
  GroupedIndexingMemo *Outer;
  std::map<std::tuple<const HloComputation *, const HloInstruction *, int64_t>,
           GroupedIndexing>
      Kept;
  std::map<std::pair<const HloInstruction *, int64_t>, InstructionIndexing>
      OperandMaps;
  std::unordered_map<std::pair<IndexingMap, IndexingMap>, OperandMap, PairHash>
      Composed;
};

/// The logical-to-linearized-physical map of a shape:
/// `(d0, ..., dn) -> (linear offset in elements)` following the layout.
///
/// Example: `f32[4,8]{0,1}` (column-major) gives
/// `(d0, d1) -> (d1 * 4 + d0), domain: d0 in [0, 3], d1 in [0, 7]`.
IndexingMap linearizedPhysicalMap(Context &Ctx, const Shape &S);

} // namespace idxmap

#endif // IDXMAP_HLOINDEXING_H
