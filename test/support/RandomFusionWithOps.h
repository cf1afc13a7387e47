//===- support/RandomFusionWithOps.h - Issue-15 ops inside fusions -*- C++ -*-//
//
// Part of idxmap. Puts dot, convolution, reduce-window, map, gather,
// scatter, sort and all-gather (and all-reduce, collective-permute,
// reduce-precision, erf, bitcast-convert) in the middle of RandomHlo.h's
// random fusions (RandomHloOptions::NewOpsPercent): the generator asks for a
// value of some shape, the builder here picks one of these ops that produces
// it, derives its operands' shapes (dimension numbers, windows with padding and
// dilation, feature/batch groups, collapsed/offset dims, ...) and asks the
// generator for those operands, so producers (parameters, broadcasts,
// elementwise ops, other new ops) feed them and consumers read the result.
//
// Gather and scatter indices are in range and out of range on both sides
// (clamped starts, skipped updates) and come from parameters, constants,
// iotas, clamps with constant bounds, broadcast scalars or random
// subgraphs, so the runtime variables of the maps fold now and then.
//
// The builder works through NewOpHost (implemented by RandomHlo.cpp's
// generator), so that the generator's internals stay private.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_RANDOMFUSIONWITHOPS_H
#define IDXMAP_TEST_SUPPORT_RANDOMFUSIONWITHOPS_H

#include "idxmap/Hlo.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace idxmap::testing {

/// How the parameters reaching a new op's operands reach its result, for
/// RandomFusion::Exact. Conservative: only what the single-op generators
/// (RandomContraction.h, RandomIndexed.h) prove exact is exact here.
struct NewOpExactness {
  enum class Kind {
    /// Every parameter reaching an operand is inexact (dot, convolution,
    /// reduce-window with max, gather, scatter, sort, get-tuple-element).
    Inexact,
    /// Pure data movement of operand 0 (all-gather).
    Move,
    /// A sum of the operands (map of add/negate, reduce-window with add)
    /// for f32 and s32; other types are inexact.
    Sum,
  };
  Kind K = Kind::Inexact;
  /// Sum: operand k enters subtracted (map of negate).
  std::vector<bool> Flip;
  /// Sum: the most times one element of operand k enters one output
  /// element (1 for a map; a reduce-window's window size for its input,
  /// one more for its init, which pads the window).
  std::vector<int64_t> Terms;
};

/// An instruction the builder asks the generator to add.
struct NewOpNode {
  HloOpcode Opc = HloOpcode::Constant;
  Shape Sh;
  /// Ids the host returned.
  std::vector<int> Operands;
  /// Attributes after the operand list (`, dimensions={1}`).
  std::string Attrs;
  /// Constant: the values (row-major) and the text between the parens.
  std::vector<double> Values;
  std::string ValueText;
  /// Unset: the generator's own rules for Opc (constants, iota, broadcast,
  /// clamp).
  std::optional<NewOpExactness> Exactness;
};

/// What the builder needs from the generator.
class NewOpHost {
public:
  virtual ~NewOpHost() = default;
  /// Uniform in [Lo, Hi] from the generator's stream.
  virtual int64_t rnd(int64_t Lo, int64_t Hi) = 0;
  /// A random subgraph (or a leaf) producing \p Want.
  virtual int operand(const Shape &Want) = 0;
  /// A leaf (mostly a parameter, new or shared) producing \p Want.
  virtual int leafOf(const Shape &Want) = 0;
  virtual int addNode(NewOpNode N) = 0;
  /// A called computation, printed once before the fused computation.
  virtual void addComputation(const std::string &Name,
                              const std::string &Text) = 0;
  virtual int64_t maxElements() const = 0;
  /// RandomHloOptions::ExactOpsOnly: only ops that may be exact.
  virtual bool exactOnly() const = 0;
  /// Spends one instruction of the budget.
  virtual void spend() = 0;
  /// False when the fusion has as many gathers/scatters as it may have
  /// (each adds runtime variables); else counts one more.
  virtual bool takeIndexed() = 0;
  /// False when the fusion has its all-gather already; else counts it.
  /// FusionIndexing does not model two collectives on one path (their
  /// replica ids), so the maps through a chain are UNDEFINED by design.
  virtual bool takeCollective() = 0;
};

/// Adds one new op producing \p Want (operands from \p H), or returns -1
/// before adding anything when none fits the shape.
int buildNewOp(NewOpHost &H, const Shape &Want);

} // namespace idxmap::testing

#endif // IDXMAP_TEST_SUPPORT_RANDOMFUSIONWITHOPS_H
