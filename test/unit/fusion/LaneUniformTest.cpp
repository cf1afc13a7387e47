//===- LaneUniformTest.cpp - One bounds test per run of lanes -------------===//
//
// Part of idxmap. laneUniformTest says a pad's bounds test gives every lane
// of a loop thread's run one answer. Checked against enumeration: random
// pads (low, high and interior padding, negative edges) of small shapes
// under loop thread mappings with vectors of 2 to 8; whenever the answer
// is yes, no thread may have one lane of a run in the operand and another
// out of it, and the pads built to be uniform must be found so.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Coalescing.h"
#include "idxmap/Compose.h"
#include "idxmap/Context.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "support/FusionModules.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

struct PadCase {
  std::vector<int64_t> In, Lo, Hi, Interior;
  std::vector<int64_t> out() const {
    std::vector<int64_t> O;
    for (size_t D = 0; D < In.size(); ++D)
      O.push_back(Lo[D] + Hi[D] + In[D] + (In[D] - 1) * Interior[D]);
    return O;
  }
};

std::string dimsText(const std::vector<int64_t> &Dims) {
  std::string S;
  for (int64_t D : Dims)
    S += (S.empty() ? "" : ",") + std::to_string(D);
  return S;
}

/// Enumerates every thread and run of \p Thread: true when a run has a
/// lane inside \p Tested's domain and another outside.
bool someRunSplits(const IndexingMap &Thread, const IndexingMap &Tested) {
  const Interval Th = Thread.dims()[0].Bound, Bl = Thread.dims()[1].Bound;
  const unsigned NR = Thread.numRangeVars();
  const Interval U = NR == 2 ? Thread.rangeVars()[0].Bound : Interval{0, 0};
  const Interval Vec = Thread.rangeVars()[NR - 1].Bound;
  for (int64_t T = Th.Lo; T <= Th.Hi; ++T)
    for (int64_t B = Bl.Lo; B <= Bl.Hi; ++B)
      for (int64_t Uu = U.Lo; Uu <= U.Hi; ++Uu) {
        int In = 0, Out = 0;
        for (int64_t V = Vec.Lo; V <= Vec.Hi; ++V) {
          std::vector<int64_t> Pt = {T, B};
          if (NR == 2)
            Pt.push_back(Uu);
          Pt.push_back(V);
          if (!Thread.contains(Pt))
            continue;
          (Tested.contains(Pt) ? In : Out)++;
        }
        if (In && Out)
          return true;
      }
  return false;
}

TEST(LaneUniform, AgreesWithEnumerationOnRandomPads) {
  std::mt19937_64 Rng(20261204);
  auto Pick = [&](int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(Rng);
  };
  int Uniform = 0, Split = 0;
  for (int Case = 0; Case < 300; ++Case) {
    PadCase P;
    const int Rank = int(Pick(1, 3));
    const bool Aligned = Case % 2 == 0;
    const int64_t V = int64_t(1) << Pick(1, 3);
    for (int D = 0; D < Rank; ++D) {
      const bool Minor = D == Rank - 1;
      int64_t In = Pick(1, 12), Lo = Pick(-2, 5), Hi = Pick(-2, 5),
              Interior = Pick(0, 4) == 0 ? Pick(1, 2) : 0;
      if (Minor && Aligned) {
        // Edges on multiples of the vector: the test is uniform per run.
        In = V * Pick(1, 3);
        Lo = V * Pick(0, 1);
        Hi = V * Pick(0, 1);
        Interior = 0;
      }
      P.In.push_back(In);
      P.Lo.push_back(Lo);
      P.Hi.push_back(Hi);
      P.Interior.push_back(Interior);
    }
    const std::vector<int64_t> Out = P.out();
    int64_t N = 1;
    bool Empty = false;
    for (int64_t D : Out) {
      Empty |= D <= 0;
      N *= std::max<int64_t>(D, 0);
    }
    if (Empty || Out.back() % V != 0)
      continue;
    std::string Padding;
    for (int D = 0; D < Rank; ++D)
      Padding += (D ? "x" : "") + std::to_string(P.Lo[D]) + "_" +
                 std::to_string(P.Hi[D]) +
                 (P.Interior[D] ? "_" + std::to_string(P.Interior[D]) : "");
    const std::string Text =
        "HloModule m\nfused {\n  x = f32[" + dimsText(P.In) +
        "] parameter(0)\n  z = f32[] constant(0)\n  ROOT p = f32[" +
        dimsText(Out) + "] pad(x, z), padding=" + Padding +
        "\n}\nENTRY main {\n  a = f32[" + dimsText(P.In) +
        "] parameter(0)\n  ROOT f = f32[" + dimsText(Out) +
        "] fusion(a), kind=kLoop, calls=fused\n}\n";
    auto M = parseHloModule(Text, "pad");
    ASSERT_TRUE(bool(M)) << Text << M.error().str();
    const HloInstruction *Pad =
        fusionOf(**M).fusedComputation()->root();
    Context Ctx;
    const int64_t Threads = Pick(0, 1) ? 4 : 32, Unroll = Pick(1, 2);
    ThreadMapping TM = loopThreadMapping(
        Ctx, Pad->shape(), V, Threads, N / V >= 2 * Threads ? Unroll : 1);
    const IndexingMap ToOperand =
        computeOutputToInputIndexing(Ctx, *Pad).Operands[0].front().Map;
    const IndexingMap Tested = compose(TM.Map, ToOperand);
    const bool Says = laneUniformTest(TM.Map, Tested);
    const bool Splits = someRunSplits(TM.Map, Tested);
    EXPECT_FALSE(Says && Splits) << "unsound on\n" << Text;
    if (Aligned && !Splits) {
      EXPECT_TRUE(Says) << "missed a uniform test on\n" << Text;
    }
    (Says ? Uniform : Split)++;
  }
  // Both answers occur (the generator is not degenerate).
  EXPECT_GT(Uniform, 20);
  EXPECT_GT(Split, 20);
}

} // namespace
