//===- FusionSupport.cpp - What the fusion analysis models ----------------===//
//
// Part of idxmap. A whole optimized module holds fusions beside ops that no
// emitter computes (cuBLAS custom-calls, while loops, collectives), and
// fusions whose contents are not ours either (a Triton gemm's dot, a value
// of type c64). The commands that take a whole module ask this file which
// fusions they can describe and, for the others, say why they leave them.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Fusion.h"

#include <set>

namespace idxmap {

std::vector<const HloInstruction *> kernelFusions(const HloModule &M) {
  // Computations inside a kernel: the fused computations and whatever they
  // call, transitively.
  std::set<const HloComputation *> Inside;
  std::vector<const HloComputation *> Work;
  for (const HloInstruction *F : M.fusions())
    for (const HloComputation *C : F->calledComputations())
      if (Inside.insert(C).second)
        Work.push_back(C);
  while (!Work.empty()) {
    const HloComputation *C = Work.back();
    Work.pop_back();
    for (const HloInstruction *I : C->instructions())
      for (const HloComputation *Callee : I->calledComputations())
        if (Inside.insert(Callee).second)
          Work.push_back(Callee);
  }
  std::vector<const HloInstruction *> Out;
  for (const HloInstruction *F : M.fusions())
    if (!Inside.count(F->parent()) && F->fusedComputation())
      Out.push_back(F);
  return Out;
}

std::optional<UnmodeledInstruction>
findUnmodeledInstruction(const HloComputation &C) {
  const HloInstruction *Root = C.root();
  if (!Root)
    return std::nullopt;
  // A scan fusion's hero (a scan op or a reduce-window that is one) is the
  // scan emitter's; any other scan op is refused with the reason it is not
  // one.
  std::string ScanWhy;
  std::optional<ScanInfo> Scan = scanFusionHero(C, &ScanWhy);
  for (const HloInstruction *I : C.instructions()) {
    // Types first: an op of a non-compute type is refused for its values
    // (a token, a complex number), whichever op produced them.
    if (!hasOnlyComputeTypes(I->shape()))
      return UnmodeledInstruction{
          I, "'" + I->name() + "' has type " + I->shape().str() +
                 "; the emitters take pred, integer and f16/bf16/f32/f64 "
                 "values only"};
    // A scatter root is the scatter emitter's when it updates a parameter
    // in place.
    if (I == Root && I->opcode() == HloOpcode::Scatter) {
      std::string Why;
      if (inPlaceScatterParam(C, &Why))
        continue;
      return UnmodeledInstruction{I, "the scatter emitter takes a scatter "
                                     "root that updates a parameter in "
                                     "place: " + Why};
    }
    // A reduce-window that is not the scan hero (a pooling window, a
    // short scan beside another) is computed inline, a loop over its
    // window per output element, as XLA's loop emitter does.
    if (I->opcode() == HloOpcode::ReduceWindow)
      continue;
    if (I->opcode() == HloOpcode::Scan) {
      if (Scan && Scan->Hero == I)
        continue;
      return UnmodeledInstruction{
          I, "no emitter computes " + std::string(opcodeName(I->opcode())) +
                 " '" + I->name() + "': not a scan fusion (" + ScanWhy + ")"};
    }
    // The other ops after Call (but gather) are opaque to the emitters
    // (Hlo.h): no kernel computes them.
    if (isOpaqueToEmitters(I->opcode()))
      return UnmodeledInstruction{I, "no emitter computes " +
                                         std::string(opcodeName(I->opcode())) +
                                         " '" + I->name() + "'"};
  }
  if (Root->opcode() == HloOpcode::Tuple && Root->operandCount() == 0)
    return UnmodeledInstruction{Root, "no outputs (the root is an empty "
                                      "tuple)"};
  return std::nullopt;
}

} // namespace idxmap
