//===- HloIndexingTest.cpp - Per-op and fusion indexing -------------------===//
//
// Part of idxmap. Each case names the maps it expects (text, whitespace
// ignored) and checks them against the reference interpreter: every output
// element must depend on exactly the input elements its maps name (a subset
// check where the maps over-approximate by design).
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Print.h"

#include "support/HloDeps.h"
#include "support/Matchers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

struct Case {
  const char *Name;
  /// The body of ENTRY (parameters and a ROOT); `add` is available as a
  /// scalar f32 computation, `max` too.
  const char *Body;
  /// Expected InstructionIndexing::str() of the root, whitespace ignored.
  const char *Expected;
  /// Parameters (by number) whose dependencies are only a subset of the
  /// map's image (over-approximating maps).
  std::vector<int64_t> Inexact = {};
};

const char *Prelude = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
)";

const Case Cases[] = {
    {"elementwise",
     R"(p0 = f32[2,3] parameter(0)
        p1 = f32[2,3] parameter(1)
        ROOT r = f32[2,3] add(p0, p1))",
     R"(operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
        operand id = 1 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2])"},
    {"select_scalar_pred",
     R"(p0 = pred[] parameter(0)
        p1 = f32[4] parameter(1)
        p2 = f32[4] parameter(2)
        ROOT r = f32[4] select(p0, p1, p2))",
     R"(operand id = 0 (d0) -> (), domain: d0 in [0, 3]
        operand id = 1 (d0) -> (d0), domain: d0 in [0, 3]
        operand id = 2 (d0) -> (d0), domain: d0 in [0, 3])",
     // Both branches are indexed; the predicate decides which one is read.
     {1, 2}},
    {"broadcast",
     R"(p0 = f32[3] parameter(0)
        ROOT r = f32[2,3,4] broadcast(p0), dimensions={1})",
     R"(operand id = 0 (d0, d1, d2) -> (d1),
          domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 3])"},
    {"transpose",
     R"(p0 = f32[2,3,4] parameter(0)
        ROOT r = f32[4,2,3] transpose(p0), dimensions={2,0,1})",
     R"(operand id = 0 (d0, d1, d2) -> (d1, d2, d0),
          domain: d0 in [0, 3], d1 in [0, 1], d2 in [0, 2])"},
    {"reverse",
     R"(p0 = f32[3,4] parameter(0)
        ROOT r = f32[3,4] reverse(p0), dimensions={1})",
     R"(operand id = 0 (d0, d1) -> (d0, -d1 + 3),
          domain: d0 in [0, 2], d1 in [0, 3])"},
    {"slice",
     R"(p0 = f32[10,6] parameter(0)
        ROOT r = f32[4,2] slice(p0), slice={[1:9:2], [3:5]})",
     R"(operand id = 0 (d0, d1) -> (d0 * 2 + 1, d1 + 3),
          domain: d0 in [0, 3], d1 in [0, 1])"},
    {"reshape_collapse",
     R"(p0 = f32[4,8] parameter(0)
        ROOT r = f32[32] reshape(p0))",
     R"(operand id = 0 (d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31])"},
    {"reshape_expand",
     R"(p0 = f32[32] parameter(0)
        ROOT r = f32[4,8] reshape(p0))",
     R"(operand id = 0 (d0, d1) -> (d0 * 8 + d1),
          domain: d0 in [0, 3], d1 in [0, 7])"},
    {"reshape_general",
     R"(p0 = f32[2,3,4] parameter(0)
        ROOT r = f32[6,4] reshape(p0))",
     R"(operand id = 0 (d0, d1) -> (d0 floordiv 3, d0 mod 3, d1),
          domain: d0 in [0, 5], d1 in [0, 3])"},
    {"reshape_unit_dims",
     R"(p0 = f32[1,4,1] parameter(0)
        ROOT r = f32[4] reshape(p0))",
     R"(operand id = 0 (d0) -> (0, d0, 0), domain: d0 in [0, 3])"},
    {"bitcast_layout",
     R"(p0 = f32[4,6]{0,1} parameter(0)
        ROOT r = f32[6,4]{1,0} bitcast(p0))",
     R"(operand id = 0 (d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3])"},
    {"concatenate",
     R"(p0 = f32[2,3] parameter(0)
        p1 = f32[2,2] parameter(1)
        ROOT r = f32[2,5] concatenate(p0, p1), dimensions={1})",
     R"(operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 2]
        operand id = 1 (d0, d1) -> (d0, d1 - 3), domain: d0 in [0, 1], d1 in [3, 4])"},
    {"pad",
     R"(p0 = f32[4] parameter(0)
        p1 = f32[] parameter(1)
        ROOT r = f32[10] pad(p0, p1), padding=1_2_1)",
     R"(operand id = 0 (d0) -> ((d0 - 1) floordiv 2),
          domain: d0 in [1, 7], (d0 - 1) mod 2 in [0, 0]
        operand id = 1 (d0) -> (), domain: d0 in [0, 9])",
     {1}},
    {"pad_negative",
     R"(p0 = f32[6] parameter(0)
        p1 = f32[] parameter(1)
        ROOT r = f32[5] pad(p0, p1), padding=-2_1)",
     R"(operand id = 0 (d0) -> (d0 + 2), domain: d0 in [0, 3]
        operand id = 1 (d0) -> (), domain: d0 in [0, 4])",
     {1}},
    {"reduce_rows",
     R"(p0 = f32[4,8] parameter(0)
        c = f32[] constant(0)
        ROOT r = f32[4] reduce(p0, c), dimensions={1}, to_apply=add)",
     R"(operand id = 0 (d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 7]
        operand id = 1 (d0) -> (), domain: d0 in [0, 3])"},
    {"reduce_major",
     R"(p0 = f32[3,4,5] parameter(0)
        c = f32[] constant(0)
        ROOT r = f32[4] reduce(p0, c), dimensions={0,2}, to_apply=add)",
     R"(operand id = 0 (d0)[s0, s1] -> (s0, d0, s1),
          domain: d0 in [0, 3], s0 in [0, 2], s1 in [0, 4]
        operand id = 1 (d0) -> (), domain: d0 in [0, 3])"},
    {"dynamic_slice",
     R"(p0 = f32[8,6] parameter(0)
        i = s32[] parameter(1)
        j = s32[] parameter(2)
        ROOT r = f32[2,3] dynamic-slice(p0, i, j), dynamic_slice_sizes={2,3})",
     R"(operand id = 0 (d0, d1){rt0, rt1} -> (d0 + rt0, d1 + rt1),
          domain: d0 in [0, 1], d1 in [0, 2], rt0 in [0, 6], rt1 in [0, 3]
        runtime variables:
          rt0: parameter(1); (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2]
          rt1: parameter(2); (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2]
        operand id = 1 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2]
        operand id = 2 (d0, d1) -> (), domain: d0 in [0, 1], d1 in [0, 2])",
     {0, 1, 2}},
    {"dynamic_update_slice",
     R"(p0 = f32[6] parameter(0)
        u = f32[2] parameter(1)
        i = s32[] parameter(2)
        ROOT r = f32[6] dynamic-update-slice(p0, u, i))",
     R"(operand id = 0 (d0) -> (d0), domain: d0 in [0, 5]
        operand id = 1 (d0){rt0} -> (d0 - rt0),
          domain: d0 in [0, 5], rt0 in [0, 4], d0 - rt0 in [0, 1]
        runtime variables:
          rt0: parameter(2); (d0) -> (), domain: d0 in [0, 5]
        operand id = 2 (d0) -> (), domain: d0 in [0, 5])",
     {0, 1, 2}},
};

class OpIndexingTest : public ::testing::TestWithParam<Case> {};

TEST_P(OpIndexingTest, MapsAndDependencies) {
  const Case &C = GetParam();
  std::string Text = std::string(Prelude) + "ENTRY e {\n" + C.Body + "\n}\n";
  auto M = parseHloModule(Text, C.Name);
  ASSERT_TRUE(M) << M.error().str();
  const HloComputation &Entry = *(*M)->entry();
  const HloInstruction &Root = *Entry.root();
  Context Ctx;
  InstructionIndexing Idx = computeOutputToInputIndexing(Ctx, Root);
  EXPECT_TRUE(equalIgnoringWhitespace(Idx.str(), C.Expected))
      << "got:\n"
      << Idx.str();
  // Each operand that is a parameter is checked against the interpreter.
  for (int64_t K = 0; K < Root.operandCount(); ++K) {
    const HloInstruction *Op = Root.operand(K);
    if (Op->opcode() != HloOpcode::Parameter)
      continue;
    bool Exact = std::find(C.Inexact.begin(), C.Inexact.end(),
                           Op->parameterNumber()) == C.Inexact.end();
    for (uint64_t Seed : {1u, 2u}) {
      DepCheckResult R = checkDependencies(Entry, Op->parameterNumber(),
                                           Idx.Operands[K], Exact, Seed);
      EXPECT_TRUE(R.Ok) << "operand " << K << ": " << R.Message;
      EXPECT_FALSE(R.Undefined);
      // Offsets clamp and select picks one branch: only exact operands must
      // show dependencies for every seed.
      if (Exact) {
        EXPECT_GT(R.Pairs, 0) << "operand " << K << " has no dependencies";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpIndexingTest, ::testing::ValuesIn(Cases),
                         [](const auto &Info) { return Info.param.Name; });

TEST(OpIndexingTest, UnsupportedIsUndefinedNotCrash) {
  auto M = parseHloModule(std::string(Prelude) + R"(ENTRY e {
    p0 = f32[4] parameter(0)
    p1 = s32[4] bitcast(p0)
    ROOT t = (f32[4], s32[4]) tuple(p0, p1)
  })",
                          "t");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  const HloInstruction *Tuple = (*M)->entry()->root();
  InstructionIndexing Idx = computeOutputToInputIndexing(Ctx, *Tuple, 1);
  ASSERT_EQ(Idx.Operands.size(), 2u);
  EXPECT_TRUE(Idx.Operands[0].empty());
  ASSERT_EQ(Idx.Operands[1].size(), 1u);
}

TEST(FusionIndexingTest, ComposesThroughTheComputation) {
  auto M = parseHloModule(std::string(Prelude) + R"(
fused {
  p0 = f32[8,4] parameter(0)
  t = f32[4,8] transpose(p0), dimensions={1,0}
  e = f32[4,8] exponential(t)
  ROOT s = f32[2,8] slice(e), slice={[1:3], [0:8]}
}
ENTRY e {
  a = f32[8,4] parameter(0)
  ROOT f = f32[2,8] fusion(a), kind=kLoop, calls=fused
})",
                          "fusion");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  const HloInstruction &F = *(*M)->entry()->root();
  InstructionIndexing Idx = computeOutputToInputIndexing(Ctx, F);
  EXPECT_TRUE(equalIgnoringWhitespace(
      Idx.str(), "operand id = 0 (d0, d1) -> (d1, d0 + 1), domain: d0 in [0, "
                 "1], d1 in [0, 7]"))
      << Idx.str();
  DepCheckResult R =
      checkDependencies(*(*M)->entry(), 0, Idx.Operands[0], true, 3);
  EXPECT_TRUE(R.Ok) << R.Message;
}

/// The entry of a softmax's first half: p0 read at two indices.
const char *SoftmaxLike = R"(
ENTRY e {
  p0 = f32[2,4] parameter(0)
  c = f32[] constant(-inf)
  m = f32[2] reduce(p0, c), dimensions={1}, to_apply=max
  b = f32[2,4] broadcast(m), dimensions={0}
  ROOT d = f32[2,4] subtract(p0, b)
})";

TEST(FusionIndexingTest, SoftmaxLikeGetsTwoMaps) {
  auto M = parseHloModule(std::string(Prelude) + SoftmaxLike, "softmax");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  const HloComputation &E = *(*M)->entry();
  GroupedIndexing G = computeGroupedIndexing(Ctx, E);
  const auto &P = G.at(E.parameter(0));
  ASSERT_EQ(P.size(), 2u);
  EXPECT_THAT(P[0].Map, MatchesMap("(d0, d1) -> (d0, d1), domain: d0 in [0, "
                                   "1], d1 in [0, 3]"));
  EXPECT_THAT(P[1].Map, MatchesMap("(d0, d1)[s0] -> (d0, s0), domain: d0 in "
                                   "[0, 1], d1 in [0, 3], s0 in [0, 3]"));
  DepCheckResult R = checkDependencies(E, 0, P, /*Exact=*/false, 5);
  EXPECT_TRUE(R.Ok) << R.Message;
}

TEST(FusionIndexingTest, MemoKeepsResultsWhileItLives) {
  auto M = parseHloModule(std::string(Prelude) + SoftmaxLike, "softmax");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx, Other;
  const HloComputation &E = *(*M)->entry();
  EXPECT_EQ(GroupedIndexingMemo::active(Ctx), nullptr);
  const GroupedIndexing Plain = computeGroupedIndexing(Ctx, E);
  {
    GroupedIndexingMemo Memo(Ctx);
    EXPECT_EQ(GroupedIndexingMemo::active(Ctx), &Memo);
    EXPECT_EQ(GroupedIndexingMemo::active(Other), nullptr);
    EXPECT_EQ(Memo.find(E, E.root(), 0), nullptr);
    const GroupedIndexing A = computeGroupedIndexing(Ctx, E);
    const GroupedIndexing *Kept = Memo.find(E, E.root(), 0);
    ASSERT_NE(Kept, nullptr);
    EXPECT_EQ(*Kept, Plain);
    EXPECT_EQ(A, Plain);
    // The root named or not, the same entry.
    EXPECT_EQ(computeGroupedIndexing(Ctx, E, E.root()), Plain);
    EXPECT_EQ(Memo.find(E, E.parameter(0), 0), nullptr);
    {
      GroupedIndexingMemo Inner(Other);
      EXPECT_EQ(GroupedIndexingMemo::active(Ctx), nullptr);
      EXPECT_EQ(GroupedIndexingMemo::active(Other), &Inner);
    }
    EXPECT_EQ(GroupedIndexingMemo::active(Ctx), &Memo);
  }
  EXPECT_EQ(GroupedIndexingMemo::active(Ctx), nullptr);
}

TEST(FusionIndexingTest, MemoSharesOperandMapsAcrossStarts) {
  // Two roots over shared elementwise chains and a slice: walks from each
  // output, with a memo (operand maps and compositions shared between the
  // walks) and without, give the same maps.
  auto M = parseHloModule(std::string(Prelude) + R"(
ENTRY e {
  p0 = f32[4,6] parameter(0)
  x = f32[4,6] exponential(p0)
  y = f32[4,6] multiply(x, x)
  s = f32[2,6] slice(y), slice={[1:3], [0:6]}
  n = f32[2,6] negate(s)
  t = f32[6,4] transpose(y), dimensions={1,0}
  ROOT r = (f32[2,6], f32[6,4]) tuple(n, t)
})",
                          "roots");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  const HloComputation &E = *(*M)->entry();
  const GroupedIndexing Plain0 = computeGroupedIndexing(Ctx, E, nullptr, 0);
  const GroupedIndexing Plain1 = computeGroupedIndexing(Ctx, E, nullptr, 1);
  GroupedIndexingMemo Memo(Ctx);
  EXPECT_EQ(computeGroupedIndexing(Ctx, E, nullptr, 1), Plain1);
  EXPECT_EQ(computeGroupedIndexing(Ctx, E, nullptr, 0), Plain0);
  // The slice reads y at its own offset; the transpose swaps the dims.
  EXPECT_THAT(Plain0.at(E.parameter(0)).front().Map,
              MatchesMap("(d0, d1) -> (d0 + 1, d1), domain: d0 in [0, 1], d1 "
                         "in [0, 5]"));
  EXPECT_THAT(Plain1.at(E.parameter(0)).front().Map,
              MatchesMap("(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in "
                         "[0, 3]"));
  // An operand's maps are computed once and kept.
  const HloInstruction *X = E.parameter(0)->users().front();
  EXPECT_EQ(&Memo.operandIndexing(*X, 0), &Memo.operandIndexing(*X, 0));
}

TEST(FusionIndexingTest, RuntimeBindingsFollowComposedOrder) {
  // dynamic-slice of a dynamic-slice: the composed map's runtime variables
  // are [outer's, inner's] and each binding names its own offset.
  auto M = parseHloModule(std::string(Prelude) + R"(
ENTRY e {
  p0 = f32[16] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  a = f32[8] dynamic-slice(p0, i), dynamic_slice_sizes={8}
  ROOT b = f32[2] dynamic-slice(a, j), dynamic_slice_sizes={2}
})",
                          "dsds");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  const HloComputation &E = *(*M)->entry();
  GroupedIndexing G = computeGroupedIndexing(Ctx, E);
  const auto &P = G.at(E.parameter(0));
  ASSERT_EQ(P.size(), 1u);
  const OperandMap &OM = P[0];
  ASSERT_EQ(OM.Map.numRuntimeVars(), 2u);
  ASSERT_EQ(OM.Bindings.size(), 2u);
  // rt0 comes from the outer (inner-most in the walk) slice: bound [0, 8].
  EXPECT_EQ(OM.Map.runtimeVars()[0].Bound, Interval(0, 8));
  EXPECT_EQ(OM.Bindings[0].Source->name(), "i");
  EXPECT_EQ(OM.Map.runtimeVars()[1].Bound, Interval(0, 6));
  EXPECT_EQ(OM.Bindings[1].Source->name(), "j");
  DepCheckResult R = checkDependencies(E, 0, P, false, 9);
  EXPECT_TRUE(R.Ok) << R.Message;
}

TEST(InputToOutputTest, SliceAndBroadcastAndReduce) {
  auto M = parseHloModule(std::string(Prelude) + R"(
ENTRY e {
  p0 = f32[10] parameter(0)
  s = f32[4] slice(p0), slice={[1:9:2]}
  b = f32[4,3] broadcast(s), dimensions={0}
  c = f32[] constant(0)
  ROOT r = f32[3] reduce(b, c), dimensions={0}, to_apply=add
})",
                          "i2o");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  const HloComputation &E = *(*M)->entry();
  auto Slice = computeInputToOutputIndexing(Ctx, *E.findInstruction("s"), 0);
  EXPECT_THAT(Slice.Operands[0][0].Map,
              MatchesMap("(d0) -> ((d0 + 1) floordiv 2 - 1), domain: d0 in [1, 7], "
                         "d0 mod 2 in [1, 1]"));
  auto Bcast = computeInputToOutputIndexing(Ctx, *E.findInstruction("b"), 0);
  EXPECT_THAT(Bcast.Operands[0][0].Map,
              MatchesMap("(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in "
                         "[0, 2]"));
  auto Red = computeInputToOutputIndexing(Ctx, *E.root(), 0);
  EXPECT_THAT(Red.Operands[0][0].Map,
              MatchesMap("(d0, d1) -> (d1), domain: d0 in [0, 3], d1 in [0, 2]"));
  auto Init = computeInputToOutputIndexing(Ctx, *E.root(), 1);
  EXPECT_THAT(Init.Operands[0][0].Map,
              MatchesMap("()[s0] -> (s0), domain: s0 in [0, 2]"));
}

TEST(LinearizedPhysicalMapTest, ColumnMajor) {
  Context Ctx;
  IndexingMap M = linearizedPhysicalMap(
      Ctx, Shape(PrimitiveType::F32, {4, 8}, {0, 1}));
  EXPECT_THAT(M, MatchesMap("(d0, d1) -> (d0 + d1 * 4), domain: d0 in [0, 3], "
                            "d1 in [0, 7]"));
}

} // namespace
