//===- InputSlicesPlan.cpp - One input, every slice of it -----------------===//
//
// Part of idxmap. The input-slices emitter's plan (XLA's kInputSlices): a
// multi-output fusion whose roots are unit-stride slices of inputs of one
// shape walks that shape once; each thread computes the sliced values at
// its index (the prologue, once for slices of one input) and stores them
// into every slice whose window holds it. The loop emitter would walk each
// output on its own, element by element, computing the prologue once per
// slice.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/HloIndexing.h"

#include <algorithm>

namespace idxmap {
namespace plan {

std::optional<std::string> planInputSlices(const PlanInputs &In,
                                           KernelPlan &P) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const HloInstruction *Input = A.Roots.front()->operand(0);
  const Shape &S = Input->shape();
  const int64_t Minor = S.rank() ? S.layoutOrDefault().front() : 0;
  const int64_t Row = S.rank() ? S.Dims[size_t(Minor)] : 1;
  // Runs of Vector elements within a row of the input, at most 16 bytes of
  // the widest element moved.
  int64_t Bytes = widestParameterBytes(C);
  for (const HloInstruction *R : A.Roots)
    Bytes = std::max<int64_t>(Bytes, byteWidth(R->shape().Type));
  int64_t V = std::max<int64_t>(1, 16 / Bytes);
  while (V > 1 && Row % V != 0)
    V /= 2;
  P.choose("vector", V,
           "input elements per thread: the widest run of at most 16 bytes of "
           "the widest element dividing its rows");
  PiecewisePlan PP;
  int64_t Straddling = 0;
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    const HloInstruction *Sl = A.Roots[R];
    PiecewisePlan::Piece Pc;
    Pc.Source = Sl->operand(0);
    Pc.Output = R;
    Pc.Covers = true;
    Pc.OutputMap =
        computeInputToOutputIndexing(In.Ctx, *Sl, 0).Operands.at(0).at(0).Map;
    if (Pc.OutputMap.isUndefined() || !Pc.OutputMap.constraints().empty())
      return "slice '" + Sl->name() +
             "' has no input-to-output map of unit stride";
    // A run is inside or outside the window when the window's edges along
    // the minor dim fall between runs.
    int64_t Lo = S.rank() ? Sl->sliceStarts()[size_t(Minor)] : 0;
    int64_t Hi = S.rank() ? Sl->sliceLimits()[size_t(Minor)] : 1;
    Pc.WholeRuns = Lo % V == 0 && (Hi % V == 0 || Hi == Row);
    Straddling += !Pc.WholeRuns;
    PP.Pieces.push_back(std::move(Pc));
  }
  P.Main = pieceThreadMapping(In, S, V, /*Unroll=*/1);
  P.Main.Target = Input;
  if (Straddling)
    P.choose("straddling", Straddling,
             "slices whose window's edge along the minor dim cuts a run: "
             "their lanes are checked and stored one by one");
  finishPiecewise(In, P, std::move(PP), {}, "input elements");
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
