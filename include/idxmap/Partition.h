//===- idxmap/Partition.h - Computation partitioner -------------*- C++ -*-===//
//
// Part of idxmap. Splits a fused computation into subgraphs (the functions a
// code generator emits) so that every instruction is computed with exactly
// one indexing map from its subgraph's root and no instruction is ever
// duplicated. The work is linear in the number of edges: each instruction
// keeps a single map, composed from its users' maps.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_PARTITION_H
#define IDXMAP_PARTITION_H

#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/IndexingMap.h"

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace idxmap {

/// One subgraph: a connected group of instructions computed together, with
/// the map from its (first) root's output index to each member's output
/// index.
struct Subgraph {
  /// The first root's name (unique within the computation).
  std::string Name;
  /// The instructions whose values leave the subgraph. The first one is the
  /// subgraph's root; further roots are computation outputs that joined it
  /// because they are read at the first root's index (identity map).
  std::vector<const HloInstruction *> Roots;
  /// Every member, definitions before uses (the computation's order).
  std::vector<const HloInstruction *> Instructions;
  /// For every member: first root's output index -> member's output index,
  /// simplified, unused symbols removed. Roots map to the identity.
  std::unordered_map<const HloInstruction *, IndexingMap> Maps;
  /// Bindings of each map's runtime variables (see RuntimeBinding), in the
  /// map's runtime-variable order; absent or empty when it has none.
  std::unordered_map<const HloInstruction *, std::vector<RuntimeBinding>>
      Bindings;
  /// True when every member is one of bitcast, constant, iota, parameter,
  /// reshape, reverse, transpose, broadcast, slice, copy (as XLA's
  /// `no_compute`).
  bool NoCompute = false;
};

/// The partition of one computation.
///
/// Parameters belong to no subgraph (they are the computation's inputs); a
/// tuple root belongs to none either (it only lists the outputs). Every
/// other instruction belongs to exactly one subgraph.
///
/// Example: for
/// \code
///   f { p = f32[6] parameter(0)  l = f32[6] log(p)  n = f32[6] negate(l)
///       a = f32[6] add(l, p)  e = f32[6] exponential(a)
///       ROOT c = f32[12] concatenate(n, e), dimensions={0} }
/// \endcode
/// `l` is reached with `(d0) -> (d0)` on `[0, 5]` and `(d0) -> (d0 - 6)` on
/// `[6, 11]`, so it roots its own subgraph:
/// \code
///   P.Subgraphs.size() == 2; P.Subgraphs[0].Roots == {c};
///   P.Subgraphs[0].Instructions == {n, a, e, c};
///   P.Subgraphs[1].Roots == {l};
///   P.Reasons[l] == "reached with 2 indexing maps"
/// \endcode
struct PartitionedComputation {
  const HloComputation *Computation = nullptr;
  /// Subgraphs in creation order: users first, so the subgraph of the
  /// computation's (first) root comes first.
  std::vector<Subgraph> Subgraphs;
  /// Index into Subgraphs of every member instruction.
  std::unordered_map<const HloInstruction *, int> SubgraphOf;
  /// Why each root is a root: "computation root", "hero" (or the caller's
  /// reason for a forced root), "users in N subgraphs", "reached with N
  /// indexing maps", "unknown indexing", "no users", "not read", "opaque
  /// op" (an op after Call in HloOpcode: dot, custom-call, while, ...).
  std::unordered_map<const HloInstruction *, std::string> Reasons;

  /// The subgraph of \p I, or nullptr (parameters, a tuple root).
  const Subgraph *subgraphOf(const HloInstruction *I) const;

  /// A readable listing:
  /// \code
  ///   computation f: 2 subgraphs
  ///   subgraph 0: c
  ///     root c: computation root
  ///     n = negate: (d0) -> (d0), domain: d0 in [0, 5]
  ///     ...
  /// \endcode
  /// `(no compute)` follows the subgraph name when NoCompute is set;
  /// runtime variables are listed under their map (`rt0: NAME; MAP`).
  std::string str() const;

  /// Graphviz DOT: one digraph named after the computation, one
  /// `cluster_N` subgraph per Subgraph (label: name and roots), nodes
  /// labelled `name = opcode` and, in a subgraph, the member's map from its
  /// root on the next lines (visible, not a tooltip; roots bold, parameters
  /// as boxes outside every cluster), edges operand -> user. Example node:
  /// \code
  ///   3[label="n = negate\n(d0) -> (d0)\ndomain: d0 in [0, 5]"];
  /// \endcode
  std::string toDot() const;
};

/// Options of partitionComputation.
struct PartitionOptions {
  /// Instructions that must root their own subgraph (heroes: a reduce, a
  /// tiled transpose).
  std::vector<const HloInstruction *> ForcedRoots;
  /// Same, as a predicate (may be empty).
  std::function<bool(const HloInstruction &)> IsForcedRoot;
  /// The reason recorded for a forced root.
  std::string ForcedReason = "hero";
};

/// Partitions \p C. Instructions are visited users-first (a topological sort
/// of the operand -> user graph). An instruction joins its users' subgraph
/// only if it is not a forced root or the computation's root, all its users
/// are in that one subgraph, and composing each user's map with the user's
/// output-to-input map for it gives exactly one distinct, defined map
/// (known-empty maps are ignored). Otherwise it roots a new subgraph whose
/// map is the identity. A computation output (operand of a tuple root) that
/// has other users joins their subgraph as an additional root only if it is
/// read at the first root's index (identity map, same dims). Unsupported ops
/// never crash: their operands become roots ("unknown indexing"). An op
/// after Call in HloOpcode (dot, custom-call, while, collectives, ...) roots
/// its own subgraph ("opaque op"): no emitter computes it inside another.
PartitionedComputation partitionComputation(Context &Ctx,
                                            const HloComputation &C,
                                            const PartitionOptions &Options = {});

} // namespace idxmap

#endif // IDXMAP_PARTITION_H
