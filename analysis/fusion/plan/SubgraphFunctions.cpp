//===- SubgraphFunctions.cpp - Which subgraphs become functions -----------===//
//
// Part of idxmap. The values of a fused computation that are read at several
// indices are computed again at each of them when the emitters expand them
// inline, so a chain `x[k] = x[k-1] + reverse(x[k-1])` doubles the IR at
// every level (20 levels: 30 s and 3 GB to emit). As in XLA's emitters,
// where each subgraph of the computation partitioner is a function of its
// indices, the roots of the subgraphs whose inline expansion would be large
// become functions of their index (codegen/emitters/FusedElementFunctions.cpp
// builds them; LLVM's inliner takes the cheap ones back). This file decides
// which.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/HloIndexing.h"
#include "idxmap/Partition.h"

#include <algorithm>
#include <set>

namespace idxmap {
namespace plan {
namespace {

/// True when the partitioner found \p I read at several indices ("reached
/// with N indexing maps"): each read expands it again.
bool readAtSeveralIndices(const PartitionedComputation &P,
                          const HloInstruction &I) {
  auto It = P.Reasons.find(&I);
  return It != P.Reasons.end() && It->second.rfind("reached with", 0) == 0;
}

/// The number of operand slots that read \p I.
int64_t readCount(const HloInstruction &I) {
  int64_t Uses = 0;
  for (const HloInstruction *U : I.users())
    Uses += std::count(U->operands().begin(), U->operands().end(), &I);
  return Uses;
}

/// True when some instruction of \p C is read more than once (a user with
/// two uses of it counts): otherwise nothing is expanded twice and the
/// partition is not needed.
bool anyValueReadTwice(const HloComputation &C) {
  for (const HloInstruction *I : C.instructions())
    if (readCount(*I) > 1)
      return true;
  return false;
}

/// True when no value of \p C can be read at two indices: every
/// instruction is a leaf (parameter, constant, iota), reads its operands at
/// its own index (elementwise ops, whose operands have its dims) or is a
/// broadcast of a scalar, and only the root is a tuple. Every path from a
/// root then reaches a value through one map (the identity of its dims, or
/// `()` for a scalar), so the partition would find nothing to outline.
bool oneIndexPerValue(const HloComputation &C) {
  for (const HloInstruction *I : C.instructions()) {
    const HloOpcode Op = I->opcode();
    if (Op == HloOpcode::Parameter || Op == HloOpcode::Constant ||
        Op == HloOpcode::Iota)
      continue;
    if (Op == HloOpcode::Tuple && I == C.root())
      continue;
    if (Op == HloOpcode::Broadcast && I->operand(0)->shape().isArray() &&
        I->operand(0)->shape().rank() == 0)
      continue;
    if (!readsOperandsAtOwnIndex(*I))
      return false;
  }
  return true;
}

} // namespace

void planSubgraphFunctions(const HloComputation &C, KernelPlan &P) {
  if (P.FunctionThreshold <= 0 || !anyValueReadTwice(C) || oneIndexPerValue(C))
    return;
  // A context of its own: expressions the kernel's context already holds
  // order the terms of the index arithmetic the emitter builds from it, so
  // partitioning in it would change the IR of every kernel.
  Context PartitionCtx;
  PartitionedComputation PC = partitionComputation(PartitionCtx, C);
  // The IR an inline expansion of each subgraph writes, in HLO
  // instructions: its members, plus for every operand outside it a call (a
  // function), a load (a parameter) or its share of that subgraph's
  // expansion: all of it for a root read at several indices, else (a root
  // read by several subgraphs at one index, shared through the cache)
  // 1/E of it for each of its E reads. Callee subgraphs come after their
  // users in PC.Subgraphs.
  std::vector<const HloInstruction *> &Roots = P.Functions;
  std::set<const HloInstruction *> Outline;
  std::vector<double> Size(PC.Subgraphs.size(), 0);
  for (size_t S = PC.Subgraphs.size(); S-- > 0;) {
    const Subgraph &G = PC.Subgraphs[S];
    double Sum = 0;
    for (const HloInstruction *M : G.Instructions) {
      Sum += 1;
      for (const HloInstruction *O : M->operands()) {
        auto It = PC.SubgraphOf.find(O);
        if (It == PC.SubgraphOf.end() || Outline.count(O))
          Sum += 1;
        else if (size_t(It->second) != S)
          Sum += readAtSeveralIndices(PC, *O)
                     ? Size[size_t(It->second)]
                     : Size[size_t(It->second)] / double(readCount(*O));
      }
    }
    Size[S] = std::min(Sum, 1e18);
    if (Sum <= double(P.FunctionThreshold))
      continue;
    for (const HloInstruction *R : G.Roots)
      if (readAtSeveralIndices(PC, *R) && R->shape().isArray() &&
          Outline.insert(R).second)
        Roots.push_back(R);
  }
  std::string Names;
  for (const HloInstruction *R : Roots)
    Names += (Names.empty() ? ": " : ", ") + R->name();
  P.choose("function_threshold", P.FunctionThreshold,
           "a value read at several indices whose inline expansion passes "
           "this many HLO instructions becomes a function of its index");
  P.choose("functions", int64_t(Roots.size()),
           "values read at several indices, expanded past the threshold" +
               Names);
}

} // namespace plan
} // namespace idxmap
