//===- ContractionOpsTest.cpp - dot, convolution, windows, map ------------===//
//
// Part of idxmap. The maps of dot, convolution, reduce-window and map as
// XLA's indexing_analysis_test.cc prints them (same instructions, same
// text), checked against the interpreter's dependencies on small instances;
// the interpreter against hand-computed values; the shape rules' located
// errors.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/HloInterpreter.h"

#include "support/HloDeps.h"
#include "support/Matchers.h"
#include "support/RandomContraction.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

using PT = PrimitiveType;

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
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
combiner {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  add0 = f32[] add(a0, b0)
  add1 = s32[] add(a1, b1)
  ROOT sum2 = (f32[], s32[]) tuple(add0, add1)
}
fma1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] multiply(a, b)
  one = f32[] constant(1)
  ROOT r = f32[] add(m, one)
}
)";

std::string module(const std::string &Body) {
  return std::string(Prelude) + "ENTRY e {\n" + Body + "\n}\n";
}

//===----------------------------------------------------------------------===//
// Maps as XLA prints them
//===----------------------------------------------------------------------===//

struct MapCase {
  const char *Name;
  const char *Body;
  /// InstructionIndexing::str() of the root for output OutputId, from
  /// XLA's indexing_analysis_test.cc where it has the instruction.
  const char *Expected;
  int64_t OutputId = 0;
};

const MapCase XlaCases[] = {
    {"ReduceWindowOp_NoPadding",
     R"(c_inf = f32[] constant(-inf)
        p0 = f32[1024, 514]parameter(0)
        ROOT reduce-window = f32[1024, 3] reduce-window(p0, c_inf),
          window={size=1x512 pad=0_0x0_0}, to_apply=max)",
     R"(operand id = 0
          (d0, d1)[s0] -> (d0, d1 + s0),
          domain: d0 in [0, 1023], d1 in [0, 2], s0 in [0, 511]
        operand id = 1
          (d0, d1) -> (), domain: d0 in [0, 1023], d1 in [0, 2])"},
    {"ReduceWindowOp_PaddingAndWindowStride",
     R"(c_inf = f32[] constant(-inf)
        p0 = f32[13, 17] parameter(0)
        ROOT reduce-window = f32[7, 17] reduce-window(p0, c_inf),
          window={size=3x2 stride=2x1 pad=1_1x0_1}, to_apply=max)",
     R"(operand id = 0
          (d0, d1)[s0, s1] -> (d0 * 2 + s0 - 1, d1 + s1),
          domain: d0 in [0, 6], d1 in [0, 16], s0 in [0, 2], s1 in [0, 1],
          d0 * 2 + s0 in [1, 13], d1 + s1 in [0, 16]
        operand id = 1
          (d0, d1) -> (), domain: d0 in [0, 6], d1 in [0, 16])"},
    {"ReduceWindowOp_BaseDilation",
     R"(c_inf = f32[] constant(-inf)
        p0 = f32[2, 3] parameter(0)
        ROOT reduce-window = f32[3, 5] reduce-window(p0, c_inf),
          window={size=1x1 pad=0_0x0_0 lhs_dilate=2x2}, to_apply=max)",
     R"(operand id = 0
          (d0, d1) -> (d0 floordiv 2, d1 floordiv 2),
          domain: d0 in [0, 2], d1 in [0, 4], d0 mod 2 in [0, 0],
          d1 mod 2 in [0, 0]
        operand id = 1
          (d0, d1) -> (), domain: d0 in [0, 2], d1 in [0, 4])"},
    {"ReduceWindowOp_WindowDilation",
     R"(c_inf = f32[] constant(-inf)
        p0 = f32[7, 3] parameter(0)
        ROOT reduce-window = f32[4, 3] reduce-window(p0, c_inf),
          window={size=2x1 pad=0_0x0_0 rhs_dilate=3x1}, to_apply=max)",
     R"(operand id = 0
          (d0, d1)[s0] -> (d0 + s0 * 3, d1),
          domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 1]
        operand id = 1
          (d0, d1) -> (), domain: d0 in [0, 3], d1 in [0, 2])"},
    {"ReduceWindowOp_Variadic",
     R"(c_f32 = f32[] constant(-inf)
        c_s32 = s32[] constant(10)
        p0 = f32[2, 3] parameter(0)
        p1 = s32[2, 3] parameter(1)
        ROOT reduce-window = (f32[1, 2], s32[1, 2])
          reduce-window(p0, p1, c_f32, c_s32),
          window={size=2x2 pad=0_0x0_0}, to_apply=combiner)",
     R"(operand id = 0
          (d0, d1)[s0, s1] -> (s0, d1 + s1),
          domain: d0 in [0, 0], d1 in [0, 1], s0 in [0, 1], s1 in [0, 1]
        operand id = 1
          (d0, d1)[s0, s1] -> (s0, d1 + s1),
          domain: d0 in [0, 0], d1 in [0, 1], s0 in [0, 1], s1 in [0, 1]
        operand id = 2 (d0, d1) -> (), domain: d0 in [0, 0], d1 in [0, 1]
        operand id = 3 (d0, d1) -> (), domain: d0 in [0, 0], d1 in [0, 1])",
     /*OutputId=*/1},
    {"ConvolutionOp_NoPadding",
     R"(p0 = f32[1,12,10,4] parameter(0)
        p1 = f32[4,3,5,8] parameter(1)
        ROOT conv = f32[1,10,6,8] convolution(p0, p1),
          window={size=3x5 pad=0_0x0_0}, dim_labels=b01f_i01o->b01f)",
     R"(operand id = 0
          (d0, d1, d2, d3)[s0, s1, s2] -> (d0, d1 + s0, d2 + s1, s2),
          domain: d0 in [0, 0], d1 in [0, 9], d2 in [0, 5], d3 in [0, 7],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3]
        operand id = 1
          (d0, d1, d2, d3)[s0, s1, s2] -> (s2, s0, s1, d3),
          domain: d0 in [0, 0], d1 in [0, 9], d2 in [0, 5], d3 in [0, 7],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3])"},
    {"ConvolutionOp_PaddingAndWindowStride",
     R"(p0 = f32[1,12,10,4] parameter(0)
        p1 = f32[4,3,5,8] parameter(1)
        ROOT conv = f32[1,6,5,8] convolution(p0, p1),
          window={size=3x5 stride=2x2 pad=1_1x2_2}, dim_labels=b01f_i01o->b01f)",
     R"(operand id = 0
          (d0, d1, d2, d3)[s0, s1, s2] ->
            (d0, d1 * 2 + s0 - 1, d2 * 2 + s1 - 2, s2),
          domain: d0 in [0, 0], d1 in [0, 5], d2 in [0, 4], d3 in [0, 7],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3],
          d1 * 2 + s0 in [1, 12], d2 * 2 + s1 in [2, 11]
        operand id = 1
          (d0, d1, d2, d3)[s0, s1, s2] -> (s2, s0, s1, d3),
          domain: d0 in [0, 0], d1 in [0, 5], d2 in [0, 4], d3 in [0, 7],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3])"},
    {"ConvolutionOp_LhsDilation",
     R"(p0 = f32[1,12,10,4] parameter(0)
        p1 = f32[4,3,5,8] parameter(1)
        ROOT conv = f32[1,21,15,8] convolution(p0, p1),
          window={size=3x5 pad=0_0x0_0 lhs_dilate=2x2},
          dim_labels=b01f_i01o->b01f)",
     R"(operand id = 0
          (d0, d1, d2, d3)[s0, s1, s2] ->
            (d0, (d1 + s0) floordiv 2, (d2 + s1) floordiv 2, s2),
          domain: d0 in [0, 0], d1 in [0, 20], d2 in [0, 14], d3 in [0, 7],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3],
          (d1 + s0) mod 2 in [0, 0], (d2 + s1) mod 2 in [0, 0]
        operand id = 1
          (d0, d1, d2, d3)[s0, s1, s2] -> (s2, s0, s1, d3),
          domain: d0 in [0, 0], d1 in [0, 20], d2 in [0, 14], d3 in [0, 7],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3])"},
    {"ConvolutionOp_RhsDilation",
     R"(p0 = f32[1,12,10,4] parameter(0)
        p1 = f32[4,3,5,8] parameter(1)
        ROOT conv = f32[1,8,2,8] convolution(p0, p1),
          window={size=3x5 pad=0_0x0_0 rhs_dilate=2x2},
          dim_labels=b01f_i01o->b01f)",
     R"(operand id = 0
          (d0, d1, d2, d3)[s0, s1, s2] -> (d0, d1 + s0 * 2, d2 + s1 * 2, s2),
          domain: d0 in [0, 0], d1 in [0, 7], d2 in [0, 1], d3 in [0, 7],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3]
        operand id = 1
          (d0, d1, d2, d3)[s0, s1, s2] -> (s2, s0, s1, d3),
          domain: d0 in [0, 0], d1 in [0, 7], d2 in [0, 1], d3 in [0, 7],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3])"},
    {"ConvolutionOp_FeatureGroups",
     R"(p0 = f32[1,12,10,24] parameter(0)
        p1 = f32[4,3,5,48] parameter(1)
        ROOT conv = f32[1,10,6,48] convolution(p0, p1),
          window={size=3x5 pad=0_0x0_0}, dim_labels=b01f_i01o->b01f,
          feature_group_count=6)",
     // XLA prints the feature `(d3 floordiv 8) * 4 + s2`: the same sum,
     // in our printer's summand order.
     R"(operand id = 0
          (d0, d1, d2, d3)[s0, s1, s2] ->
            (d0, d1 + s0, d2 + s1, s2 + (d3 floordiv 8) * 4),
          domain: d0 in [0, 0], d1 in [0, 9], d2 in [0, 5], d3 in [0, 47],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3]
        operand id = 1
          (d0, d1, d2, d3)[s0, s1, s2] -> (s2, s0, s1, d3),
          domain: d0 in [0, 0], d1 in [0, 9], d2 in [0, 5], d3 in [0, 47],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3])"},
    {"ConvolutionOp_BatchGroups",
     R"(p0 = f32[14,12,10,4] parameter(0)
        p1 = f32[4,3,5,21] parameter(1)
        ROOT conv = f32[2,10,6,21] convolution(p0, p1),
          window={size=3x5 pad=0_0x0_0}, dim_labels=b01f_i01o->b01f,
          batch_group_count=7)",
     R"(operand id = 0
          (d0, d1, d2, d3)[s0, s1, s2, s3] -> (d0 + s3 * 2, d1 + s0, d2 + s1, s2),
          domain: d0 in [0, 1], d1 in [0, 9], d2 in [0, 5], d3 in [0, 20],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3], s3 in [0, 6]
        operand id = 1
          (d0, d1, d2, d3)[s0, s1, s2] -> (s2, s0, s1, d3),
          domain: d0 in [0, 1], d1 in [0, 9], d2 in [0, 5], d3 in [0, 20],
          s0 in [0, 2], s1 in [0, 4], s2 in [0, 3])"},
    {"DotOp",
     R"(p0 = f32[4, 38, 17, 11, 18, 10] parameter(0)
        p1 = f32[17, 10, 16, 18, 22, 38] parameter(1)
        ROOT dot = f32[10, 38, 4, 11, 16, 22] dot(p0, p1),
          lhs_batch_dims={5,1}, rhs_batch_dims={1,5},
          lhs_contracting_dims={4,2}, rhs_contracting_dims={3,0})",
     R"(operand id = 0
          (d0, d1, d2, d3, d4, d5)[s0, s1] -> (d2, d1, s1, d3, s0, d0),
          domain: d0 in [0, 9], d1 in [0, 37], d2 in [0, 3], d3 in [0, 10],
          d4 in [0, 15], d5 in [0, 21], s0 in [0, 17], s1 in [0, 16]
        operand id = 1
          (d0, d1, d2, d3, d4, d5)[s0, s1] -> (s1, d0, d4, s0, d5, d1),
          domain: d0 in [0, 9], d1 in [0, 37], d2 in [0, 3], d3 in [0, 10],
          d4 in [0, 15], d5 in [0, 21], s0 in [0, 17], s1 in [0, 16])"},
};

class XlaMapTest : public ::testing::TestWithParam<MapCase> {};

TEST_P(XlaMapTest, PrintsXlasText) {
  const MapCase &C = GetParam();
  auto M = parseHloModule(module(C.Body), C.Name);
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  InstructionIndexing Idx =
      computeOutputToInputIndexing(Ctx, *(*M)->entry()->root(), C.OutputId);
  EXPECT_TRUE(equalIgnoringWhitespace(Idx.str(), C.Expected)) << Idx.str();
}

INSTANTIATE_TEST_SUITE_P(ContractionOps, XlaMapTest,
                         ::testing::ValuesIn(XlaCases),
                         [](const auto &Info) { return Info.param.Name; });

//===----------------------------------------------------------------------===//
// Maps against the interpreter (small instances, sums: every read matters)
//===----------------------------------------------------------------------===//

struct DepCase {
  const char *Name;
  const char *Body;
  /// Parameters whose maps over-approximate (XLA's batch-group variable).
  std::vector<int64_t> Inexact = {};
  int64_t OutputId = 0;
};

const DepCase DepCases[] = {
    {"dot_batch",
     R"(p0 = f32[2,3,4] parameter(0)
        p1 = f32[2,4,5] parameter(1)
        ROOT d = f32[2,3,5] dot(p0, p1), lhs_batch_dims={0},
          rhs_batch_dims={0}, lhs_contracting_dims={2},
          rhs_contracting_dims={1})"},
    {"dot_outer",
     R"(p0 = f32[3] parameter(0)
        p1 = f32[2] parameter(1)
        ROOT d = f32[3,2] dot(p0, p1))"},
    {"conv_all_window_attributes",
     R"(p0 = f32[2,7,6,3] parameter(0)
        p1 = f32[3,2,3,4] parameter(1)
        ROOT c = f32[2,3,6,4] convolution(p0, p1),
          window={size=3x2 stride=2x2 pad=1_2x1_0 lhs_dilate=1x2 rhs_dilate=2x1
                  rhs_reversal=1x0},
          dim_labels=b01f_01io->b01f)",
     // XLA's kernel map has no constraints: window positions in the
     // padding and the holes read no kernel element.
     {1}},
    {"conv_feature_groups",
     R"(p0 = f32[1,5,4] parameter(0)
        p1 = f32[2,2,6] parameter(1)
        ROOT c = f32[1,4,6] convolution(p0, p1), window={size=2},
          dim_labels=b0f_0io->b0f, feature_group_count=2)"},
    {"conv_batch_groups",
     R"(p0 = f32[4,5,2] parameter(0)
        p1 = f32[2,2,4] parameter(1)
        ROOT c = f32[2,4,4] convolution(p0, p1), window={size=2},
          dim_labels=b0f_0io->b0f, batch_group_count=2)",
     {0}},
    {"reduce_window_padded_dilated",
     R"(p0 = f32[5,4] parameter(0)
        z = f32[] constant(0)
        ROOT r = f32[5,2] reduce-window(p0, z),
          window={size=3x2 stride=2x3 pad=1_1x2_0 lhs_dilate=2x1 rhs_dilate=1x2},
          to_apply=add)"},
    {"reduce_window_variadic",
     R"(p0 = f32[4,3] parameter(0)
        p1 = s32[4,3] parameter(1)
        c0 = f32[] constant(0)
        c1 = s32[] constant(0)
        ROOT r = (f32[3,2], s32[3,2]) reduce-window(p0, p1, c0, c1),
          window={size=2x2}, to_apply=combiner)",
     // XLA gives every input the same map; output 1 reads input 1 only.
     {0},
     1},
    {"map",
     R"(p0 = f32[2,3] parameter(0)
        p1 = f32[2,3] parameter(1)
        ROOT m = f32[2,3] map(p0, p1), dimensions={0,1}, to_apply=fma1)"},
};

class ContractionDepsTest : public ::testing::TestWithParam<DepCase> {};

TEST_P(ContractionDepsTest, MapsNameExactlyTheDependencies) {
  const DepCase &C = GetParam();
  auto M = parseHloModule(module(C.Body), C.Name);
  ASSERT_TRUE(M) << M.error().str();
  const HloComputation &E = *(*M)->entry();
  Context Ctx;
  InstructionIndexing Idx =
      computeOutputToInputIndexing(Ctx, *E.root(), C.OutputId);
  for (int64_t K = 0; K < E.root()->operandCount(); ++K) {
    const HloInstruction *Op = E.root()->operand(K);
    if (Op->opcode() != HloOpcode::Parameter)
      continue;
    bool Exact = std::find(C.Inexact.begin(), C.Inexact.end(),
                           Op->parameterNumber()) == C.Inexact.end();
    DepCheckResult R = checkDependencies(E, Op->parameterNumber(),
                                         Idx.Operands[size_t(K)], Exact,
                                         /*Seed=*/7, C.OutputId);
    EXPECT_TRUE(R.Ok) << "operand " << K << ": " << R.Message << "\n"
                      << Idx.str();
    EXPECT_FALSE(R.Undefined);
  }
}

INSTANTIATE_TEST_SUITE_P(ContractionOps, ContractionDepsTest,
                         ::testing::ValuesIn(DepCases),
                         [](const auto &Info) { return Info.param.Name; });

TEST(ContractionIndexing, InputToOutputWhereXlaHasIt) {
  auto M = parseHloModule(module(R"(
    p0 = f32[2,3] parameter(0)
    p1 = f32[3,4] parameter(1)
    d = f32[2,4] dot(p0, p1), lhs_contracting_dims={1},
      rhs_contracting_dims={0}
    ROOT m = f32[2,4] map(d, d), dimensions={0,1}, to_apply=add)"),
                          "i2o");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  const HloComputation &E = *(*M)->entry();
  InstructionIndexing Map = computeInputToOutputIndexing(Ctx, *E.root(), 1);
  EXPECT_TRUE(equalIgnoringWhitespace(
      Map.str(), "operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 1], "
                 "d1 in [0, 3]"))
      << Map.str();
  InstructionIndexing Dot =
      computeInputToOutputIndexing(Ctx, *E.findInstruction("d"), 0);
  EXPECT_EQ(Dot.str(), "operand id = 0\nunknown indexing\n");
}

TEST(ContractionIndexing, ElementwiseIndexedOpsAfterCallAreTheIdentity) {
  auto M = parseHloModule(module(R"(
    p0 = f32[4] parameter(0)
    p1 = f32[4] parameter(1)
    e = f32[4] erf(p0)
    a = f32[4] acos(p1)
    b = s32[4] bitcast-convert(e)
    ROOT c = c64[4] complex(e, a))"),
                          "cwise");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  const HloComputation &E = *(*M)->entry();
  const char *Id = "operand id = 0 (d0) -> (d0), domain: d0 in [0, 3]";
  for (const char *Name : {"e", "a", "b"}) {
    const HloInstruction &I = *E.findInstruction(Name);
    EXPECT_TRUE(
        equalIgnoringWhitespace(computeOutputToInputIndexing(Ctx, I).str(), Id))
        << Name;
    EXPECT_TRUE(equalIgnoringWhitespace(
        computeInputToOutputIndexing(Ctx, I, 0).str(), Id))
        << Name;
  }
  EXPECT_TRUE(equalIgnoringWhitespace(
      computeOutputToInputIndexing(Ctx, *E.root()).str(),
      std::string(Id) + "operand id = 1 (d0) -> (d0), domain: d0 in [0, 3]"));
}

TEST(ContractionIndexing, BitcastConvertToANarrowerTypeIsUnknown) {
  auto M = parseHloModule(module(R"(
    p0 = s32[4] parameter(0)
    ROOT b = s8[4,4] bitcast-convert(p0))"),
                          "bc");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  EXPECT_EQ(computeOutputToInputIndexing(Ctx, *(*M)->entry()->root()).str(),
            "operand id = 0\nunknown indexing\n");
}

//===----------------------------------------------------------------------===//
// Interpreter: hand-computed values
//===----------------------------------------------------------------------===//

Literal lit(PT T, std::vector<int64_t> Dims, std::vector<double> V) {
  return Literal::fromDoubles(Shape(T, std::move(Dims)), V);
}

std::vector<double> runEntry(const std::string &Body,
                             const std::vector<Literal> &Args,
                             EvaluateOptions Opts = {}) {
  auto M = parseHloModule(module(Body), "eval");
  EXPECT_TRUE(M) << (M ? "" : M.error().str());
  if (!M)
    return {};
  auto R = evaluate(*(*M)->entry(), Args, Opts);
  EXPECT_TRUE(R) << (R ? "" : R.error().str());
  if (!R)
    return {};
  std::vector<double> Out;
  for (const Literal &L : *R)
    for (int64_t K = 0; K < L.elementCount(); ++K)
      Out.push_back(L.getDouble(K));
  return Out;
}

using Doubles = std::vector<double>;

TEST(ContractionInterpreter, DotMatmulBatchAndIntegerWrap) {
  EXPECT_EQ(runEntry(R"(p0 = f32[2,3] parameter(0)
                        p1 = f32[3,2] parameter(1)
                        ROOT d = f32[2,2] dot(p0, p1), lhs_contracting_dims={1},
                          rhs_contracting_dims={0})",
                     {lit(PT::F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                      lit(PT::F32, {3, 2}, {1, 0, 0, 1, 1, 1})}),
            Doubles({4, 5, 10, 11}));
  // Batch dim 0; the rhs contracts its dim 1: out[b][i][j] =
  // sum_k l[b][i][k] * r[b][j][k].
  EXPECT_EQ(runEntry(R"(p0 = f32[2,1,2] parameter(0)
                        p1 = f32[2,2,2] parameter(1)
                        ROOT d = f32[2,1,2] dot(p0, p1), lhs_batch_dims={0},
                          rhs_batch_dims={0}, lhs_contracting_dims={2},
                          rhs_contracting_dims={2})",
                     {lit(PT::F32, {2, 1, 2}, {1, 2, 3, 4}),
                      lit(PT::F32, {2, 2, 2}, {1, 10, 100, 1000, 1, 2, 3, 4})}),
            Doubles({21, 2100, 11, 25}));
  // s8: 100 * 2 + 100 * 1 = 300 wraps to 44.
  EXPECT_EQ(runEntry(R"(p0 = s8[2] parameter(0)
                        p1 = s8[2] parameter(1)
                        ROOT d = s8[] dot(p0, p1), lhs_contracting_dims={0},
                          rhs_contracting_dims={0})",
                     {lit(PT::S8, {2}, {100, 100}), lit(PT::S8, {2}, {2, 1})}),
            Doubles({44}));
  // Mixed types: s8 operands, s32 result (converted first: no wrap).
  EXPECT_EQ(
      runEntry(R"(p0 = s8[2] parameter(0)
                        p1 = s8[2] parameter(1)
                        ROOT d = s32[] dot(p0, p1), lhs_contracting_dims={0},
                          rhs_contracting_dims={0})",
               {lit(PT::S8, {2}, {100, -100}), lit(PT::S8, {2}, {2, -1})}),
      Doubles({300}));
}

const char *Conv1d = R"(p0 = f32[1,5,1] parameter(0)
                        p1 = f32[%K,1,1] parameter(1)
                        ROOT c = f32[1,%N,1] convolution(p0, p1),
                          window={%W}, dim_labels=b0f_0io->b0f)";

std::vector<double> conv1d(int K, int N, const std::string &Window,
                           std::vector<double> Kernel) {
  std::string Body = Conv1d;
  Body.replace(Body.find("%K"), 2, std::to_string(K));
  Body.replace(Body.find("%N"), 2, std::to_string(N));
  Body.replace(Body.find("%W"), 2, Window);
  return runEntry(Body, {lit(PT::F32, {1, 5, 1}, {1, 2, 3, 4, 5}),
                         lit(PT::F32, {int64_t(K), 1, 1}, Kernel)});
}

TEST(ContractionInterpreter, ConvolutionWindowAttributes) {
  // out[o] = sum_w x[2o - 1 + w] * k[w], x[-1] and x[5] in the padding.
  EXPECT_EQ(conv1d(3, 3, "size=3 stride=2 pad=1_1", {1, 10, 100}),
            Doubles({210, 432, 54}));
  // rhs_dilate=2: out[o] = x[o] * k0 + x[o + 2] * k1.
  EXPECT_EQ(conv1d(2, 3, "size=2 rhs_dilate=2", {1, 10}),
            Doubles({31, 42, 53}));
  // lhs_dilate=2 reads [1, _, 2, _, 3, _, 4, _, 5].
  EXPECT_EQ(conv1d(2, 8, "size=2 lhs_dilate=2", {1, 10}),
            Doubles({1, 20, 2, 30, 3, 40, 4, 50}));
  // rhs_reversal: the kernel is read backwards.
  EXPECT_EQ(conv1d(3, 3, "size=3 rhs_reversal=1", {1, 10, 100}),
            Doubles({123, 234, 345}));
  // Negative padding drops the first input element.
  EXPECT_EQ(conv1d(2, 3, "size=2 pad=-1_0", {1, 10}), Doubles({32, 43, 54}));
}

TEST(ContractionInterpreter, ConvolutionGroups) {
  // Two feature groups of 2 input features and 2 output features each.
  EXPECT_EQ(runEntry(R"(p0 = f32[1,1,4] parameter(0)
                        p1 = f32[1,2,4] parameter(1)
                        ROOT c = f32[1,1,4] convolution(p0, p1),
                          window={size=1}, dim_labels=b0f_0io->b0f,
                          feature_group_count=2)",
                     {lit(PT::F32, {1, 1, 4}, {1, 2, 3, 4}),
                      lit(PT::F32, {1, 2, 4}, {1, 2, 3, 4, 10, 20, 30, 40})}),
            Doubles({21, 42, 129, 172}));
  // Two batch groups: output feature f reads input batch b + 2 f.
  EXPECT_EQ(runEntry(R"(p0 = f32[4,1,1] parameter(0)
                        p1 = f32[1,1,2] parameter(1)
                        ROOT c = f32[2,1,2] convolution(p0, p1),
                          window={size=1}, dim_labels=b0f_0io->b0f,
                          batch_group_count=2)",
                     {lit(PT::F32, {4, 1, 1}, {1, 2, 3, 4}),
                      lit(PT::F32, {1, 1, 2}, {1, 10})}),
            Doubles({1, 30, 2, 40}));
}

TEST(ContractionInterpreter, ReduceWindow) {
  // lhs_dilate=2 over [1, 2, 3] is [1, _, 2, _, 3]; holes read nothing.
  EXPECT_EQ(runEntry(R"(p0 = f32[3] parameter(0)
                        z = f32[] constant(10)
                        ROOT r = f32[4] reduce-window(p0, z),
                          window={size=2 lhs_dilate=2}, to_apply=add)",
                     {lit(PT::F32, {3}, {1, 2, 3})}),
            Doubles({11, 12, 12, 13}));
  EXPECT_EQ(runEntry(R"(p0 = f32[3] parameter(0)
                        z = f32[] constant(0)
                        ROOT r = f32[3] reduce-window(p0, z),
                          window={size=3 pad=1_1}, to_apply=add)",
                     {lit(PT::F32, {3}, {1, 2, 3})}),
            Doubles({3, 6, 5}));
  // 2x2 max pool, stride 2.
  EXPECT_EQ(runEntry(R"(p0 = f32[2,4] parameter(0)
                        z = f32[] constant(-inf)
                        ROOT r = f32[1,2] reduce-window(p0, z),
                          window={size=2x2 stride=2x2}, to_apply=max)",
                     {lit(PT::F32, {2, 4}, {1, 5, 3, 2, 4, 0, 7, 6})}),
            Doubles({5, 7}));
  // Variadic: both sums of 2x2 windows.
  auto M = parseHloModule(module(R"(
    p0 = f32[2,3] parameter(0)
    p1 = s32[2,3] parameter(1)
    c0 = f32[] constant(0)
    c1 = s32[] constant(100)
    ROOT r = (f32[1,2], s32[1,2]) reduce-window(p0, p1, c0, c1),
      window={size=2x2}, to_apply=combiner)"),
                          "rw");
  ASSERT_TRUE(M) << M.error().str();
  auto R = evaluate(*(*M)->entry(), {lit(PT::F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                                     lit(PT::S32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(R) << R.error().str();
  ASSERT_EQ(R->size(), 2u);
  EXPECT_EQ((*R)[0].toString(), "f32[1,2] {12, 16}");
  EXPECT_EQ((*R)[1].toString(), "s32[1,2] {112, 116}");
}

TEST(ContractionInterpreter, SelectAndScatterIsTheMaxPoolGradient) {
  const char *Body = R"(p0 = f32[%N] parameter(0)
                        s = f32[2] parameter(1)
                        z = f32[] constant(0)
                        ROOT r = f32[%N] select-and-scatter(p0, s, z),
                          window={size=2 stride=%S}, select=ge, scatter=add)";
  auto Run = [&](int N, int Stride, std::vector<double> Operand) {
    std::string B = Body;
    for (size_t P; (P = B.find("%N")) != std::string::npos;)
      B.replace(P, 2, std::to_string(N));
    B.replace(B.find("%S"), 2, std::to_string(Stride));
    return runEntry(
        B, {lit(PT::F32, {int64_t(N)}, Operand), lit(PT::F32, {2}, {10, 20})});
  };
  EXPECT_EQ(Run(4, 2, {1, 5, 3, 2}), Doubles({0, 10, 20, 0}));
  // Overlapping windows both pick element 1: the scatter adds.
  EXPECT_EQ(Run(3, 1, {1, 5, 3}), Doubles({0, 30, 0}));
  // Ties: `ge` keeps the first element.
  EXPECT_EQ(Run(4, 2, {2, 2, 7, 7}), Doubles({10, 0, 20, 0}));
}

TEST(ContractionInterpreter, MapAppliesPerElement) {
  EXPECT_EQ(
      runEntry(R"(p0 = f32[3] parameter(0)
                        p1 = f32[3] parameter(1)
                        ROOT m = f32[3] map(p0, p1), dimensions={0},
                          to_apply=fma1)",
               {lit(PT::F32, {3}, {1, 2, 3}), lit(PT::F32, {3}, {4, 5, 6})}),
      Doubles({5, 11, 19}));
}

TEST(ContractionInterpreter, IntegerAndPredConvolutionsAndWiden) {
  // s8 convolution: 100 * 1 + 100 * 2 = 300 wraps to 44 (XLA's evaluator
  // would saturate at 127; compiled code wraps).
  EXPECT_EQ(runEntry(R"(p0 = s8[1,2,1] parameter(0)
                        p1 = s8[2,1,1] parameter(1)
                        ROOT c = s8[1,1,1] convolution(p0, p1),
                          window={size=2}, dim_labels=b0f_0io->b0f)",
                     {lit(PT::S8, {1, 2, 1}, {100, 100}),
                      lit(PT::S8, {2, 1, 1}, {1, 2})}),
            Doubles({44}));
  // pred dot: or of ands.
  EXPECT_EQ(runEntry(R"(p0 = pred[2,2] parameter(0)
                        p1 = pred[2] parameter(1)
                        ROOT d = pred[2] dot(p0, p1), lhs_contracting_dims={1},
                          rhs_contracting_dims={0})",
                     {lit(PT::Pred, {2, 2}, {1, 0, 0, 1}),
                      lit(PT::Pred, {2}, {0, 1})}),
            Doubles({0, 1}));
  // Widened: the f32 dot is computed and returned in f64.
  EvaluateOptions W;
  W.Widen = true;
  auto M = parseHloModule(module(R"(
    p0 = f32[3] parameter(0)
    ROOT d = f32[] dot(p0, p0), lhs_contracting_dims={0},
      rhs_contracting_dims={0})"),
                          "widen");
  ASSERT_TRUE(M) << M.error().str();
  Literal X = lit(PT::F32, {3}, {0.1, 0.2, 0.3});
  auto R = evaluate(*(*M)->entry(), {X}, W);
  ASSERT_TRUE(R) << R.error().str();
  EXPECT_EQ((*R)[0].elementType(), PT::F64);
  double Want = double(0.1f) * double(0.1f) + double(0.2f) * double(0.2f) +
                double(0.3f) * double(0.3f);
  EXPECT_EQ((*R)[0].getDouble(0), Want);
  auto Slack =
      roundingSlack(*(*M)->entry(), {X}, *evaluate(*(*M)->entry(), {X}));
  ASSERT_TRUE(Slack) << Slack.error().str();
  EXPECT_GT((*Slack)[0].getDouble(0), 0.0);
}

TEST(ContractionInterpreter, WorkCountsEveryMultiplyAdd) {
  auto M = parseHloModule(module(R"(
    p0 = f32[64,64] parameter(0)
    ROOT d = f32[64,64] dot(p0, p0), lhs_contracting_dims={1},
      rhs_contracting_dims={0})"),
                          "work");
  ASSERT_TRUE(M) << M.error().str();
  Literal X(Shape(PT::F32, {64, 64}));
  EvaluateOptions O;
  O.MaxWork = 64 * 64 * 64 - 1;
  auto R = evaluate(*(*M)->entry(), {X}, O);
  ASSERT_FALSE(R);
  EXPECT_NE(R.error().str().find("MaxWork"), std::string::npos)
      << R.error().str();
  O.MaxWork = 64 * 64 * 64;
  EXPECT_TRUE(evaluate(*(*M)->entry(), {X}, O));
}

TEST(ContractionInterpreter, PrefixWindowWorkIsOneApplyPerElement) {
  // A prefix window over 1000 elements is evaluated as a running fold:
  // 1000 applications of `add` (3 instructions), not one per window
  // element (1000 x 1000 x 3); with the parameter and the constant, 4001
  // element results. Any other window still counts its elements.
  Literal X(Shape(PT::F32, {1000}));
  EvaluateOptions O;
  O.MaxWork = 4001;
  // The window of 1000 over f32[1000] with padding PADS, evaluated.
  auto Run = [&](const std::string &Pads) {
    auto M = parseHloModule(
        module("p0 = f32[1000] parameter(0)\n"
               "c = f32[] constant(0)\n"
               "ROOT w = f32[1000] reduce-window(p0, c), window={size=1000 "
               "pad=" +
               Pads + "}, to_apply=add"),
        "window");
    EXPECT_TRUE(M) << M.error().str();
    return evaluate(*(*M)->entry(), {X}, O);
  };
  EXPECT_TRUE(Run("999_0"));
  auto R = Run("500_499");
  ASSERT_FALSE(R);
  EXPECT_NE(R.error().str().find("MaxWork"), std::string::npos)
      << R.error().str();
}

//===----------------------------------------------------------------------===//
// Shape rules: located errors
//===----------------------------------------------------------------------===//

struct BadCase {
  const char *Name;
  const char *Body;
  const char *Message;
};

const BadCase BadCases[] = {
    {"dot_contracting_sizes",
     R"(p0 = f32[2,3] parameter(0)
        p1 = f32[4,2] parameter(1)
        ROOT d = f32[2,2] dot(p0, p1), lhs_contracting_dims={1},
          rhs_contracting_dims={0})",
     "dot: contracting dimension pair 0 has sizes 3 and 4"},
    {"dot_dims_out_of_range",
     R"(p0 = f32[2,3] parameter(0)
        p1 = f32[3,2] parameter(1)
        ROOT d = f32[2,2] dot(p0, p1), lhs_contracting_dims={2},
          rhs_contracting_dims={0})",
     "out of range for rank 2"},
    {"dot_result",
     R"(p0 = f32[2,3] parameter(0)
        p1 = f32[3,2] parameter(1)
        ROOT d = f32[2,3] dot(p0, p1), lhs_contracting_dims={1},
          rhs_contracting_dims={0})",
     "expected dimensions {2,2}"},
    {"conv_groups",
     R"(p0 = f32[1,5,4] parameter(0)
        p1 = f32[2,3,6] parameter(1)
        ROOT c = f32[1,4,6] convolution(p0, p1), window={size=2},
          dim_labels=b0f_0io->b0f, feature_group_count=2)",
     "must equal the kernel input feature dimension"},
    {"conv_window_rank",
     R"(p0 = f32[1,5,4] parameter(0)
        p1 = f32[2,4,6] parameter(1)
        ROOT c = f32[1,4,6] convolution(p0, p1), window={size=2x2},
          dim_labels=b0f_0io->b0f)",
     "window has 2 dimensions, expected 1"},
    {"conv_window_size_vs_kernel",
     R"(p0 = f32[1,5,4] parameter(0)
        p1 = f32[2,4,6] parameter(1)
        ROOT c = f32[1,3,6] convolution(p0, p1), window={size=3},
          dim_labels=b0f_0io->b0f)",
     "differs from the kernel's 2"},
    {"conv_result",
     R"(p0 = f32[1,5,4] parameter(0)
        p1 = f32[2,4,6] parameter(1)
        ROOT c = f32[1,5,6] convolution(p0, p1), window={size=2},
          dim_labels=b0f_0io->b0f)",
     "expected dimensions {1,4,6}"},
    {"conv_negative_padded_size",
     R"(p0 = f32[1,2,4] parameter(0)
        p1 = f32[1,4,6] parameter(1)
        ROOT c = f32[1,0,6] convolution(p0, p1), window={size=1 pad=-2_-1},
          dim_labels=b0f_0io->b0f)",
     "to a negative size"},
    {"reduce_window_result",
     R"(p0 = f32[5] parameter(0)
        z = f32[] constant(0)
        ROOT r = f32[5] reduce-window(p0, z), window={size=2}, to_apply=add)",
     "result shape is f32[5], expected f32[4]"},
    {"reduce_window_reducer",
     R"(p0 = s32[5] parameter(0)
        z = s32[] constant(0)
        ROOT r = s32[4] reduce-window(p0, z), window={size=2}, to_apply=add)",
     "parameter 0 of 'add' is f32[], expected s32[]"},
    {"select_and_scatter_source",
     R"(p0 = f32[4] parameter(0)
        s = f32[3] parameter(1)
        z = f32[] constant(0)
        ROOT r = f32[4] select-and-scatter(p0, s, z),
          window={size=2 stride=2}, select=ge, scatter=add)",
     "source is f32[3], the window over f32[4] has dimensions {2}"},
    {"select_and_scatter_select_type",
     R"(p0 = f32[4] parameter(0)
        s = f32[2] parameter(1)
        z = f32[] constant(0)
        ROOT r = f32[4] select-and-scatter(p0, s, z),
          window={size=2 stride=2}, select=add, scatter=add)",
     "'add' must return pred[]"},
    {"map_params",
     R"(p0 = f32[3] parameter(0)
        ROOT m = f32[3] map(p0), dimensions={0}, to_apply=add)",
     "'add' has 2 parameters, expected 1"},
    {"conv_both_groups",
     R"(p0 = f32[4,5,4] parameter(0)
        p1 = f32[2,2,4] parameter(1)
        ROOT c = f32[2,4,4] convolution(p0, p1), window={size=2},
          dim_labels=b0f_0io->b0f, feature_group_count=2, batch_group_count=2)",
     "cannot both exceed 1"},
    {"conv_rank",
     R"(p0 = f32[1,5,4,1] parameter(0)
        p1 = f32[2,4,6] parameter(1)
        ROOT c = f32[1,4,6] convolution(p0, p1), window={size=2},
          dim_labels=b0f_0io->b0f)",
     "dim_labels b0f_0io->b0f name 3 dimensions"},
    {"conv_zero_feature_groups",
     R"(p0 = f32[1,5,4] parameter(0)
        p1 = f32[2,4,6] parameter(1)
        ROOT c = f32[1,4,6] convolution(p0, p1), window={size=2},
          dim_labels=b0f_0io->b0f, feature_group_count=0)",
     "must be positive"},
    {"reduce_window_inputs",
     R"(p0 = f32[4] parameter(0)
        p1 = f32[5] parameter(1)
        z = f32[] constant(0)
        ROOT r = (f32[3], f32[3]) reduce-window(p0, p1, z, z),
          window={size=2}, to_apply=add)",
     "input 1 is f32[5], expected the dimensions of f32[4]"},
    {"select_and_scatter_init",
     R"(p0 = f32[4] parameter(0)
        s = f32[2] parameter(1)
        z = s32[] constant(0)
        ROOT r = f32[4] select-and-scatter(p0, s, z),
          window={size=2 stride=2}, select=ge, scatter=add)",
     "init value must be a f32 scalar, not s32[]"},
    {"map_dimensions",
     R"(p0 = f32[3,2] parameter(0)
        p1 = f32[3,2] parameter(1)
        ROOT m = f32[3,2] map(p0, p1), dimensions={0}, to_apply=add)",
     "dimensions {0} must be {0,1}"},
};

class ContractionShapeRuleTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ContractionShapeRuleTest, IsALocatedParseError) {
  const BadCase &C = GetParam();
  auto M = parseHloModule(module(C.Body), "bad.hlo");
  ASSERT_FALSE(M) << C.Name;
  std::string E = M.error().str();
  EXPECT_NE(E.find(C.Message), std::string::npos) << E;
  EXPECT_EQ(E.rfind("bad.hlo:", 0), 0u) << E;
}

INSTANTIATE_TEST_SUITE_P(ContractionOps, ContractionShapeRuleTest,
                         ::testing::ValuesIn(BadCases),
                         [](const auto &Info) { return Info.param.Name; });

} // namespace

//===----------------------------------------------------------------------===//
// The random instances of the soundness test are varied
//===----------------------------------------------------------------------===//

TEST(RandomContractionTest, InstancesCoverTheAttributes) {
  std::map<std::string, int> Seen;
  for (HloOpcode Op : contractionSingleOps())
    for (uint64_t Seed = 1; Seed <= 25; ++Seed) {
      RandomFusion F =
          generateContractionFusion(Seed * 7919 + uint64_t(Op), Op);
      ASSERT_FALSE(F.Text.empty());
      auto M = parseHloModule(F.Text, "random.hlo");
      ASSERT_TRUE(M) << M.error().str() << "\n" << F.Text;
      for (const char *Key :
           {"lhs_dilate=2", "rhs_dilate=2", "pad=-1", "rhs_reversal=1",
            "feature_group_count", "batch_group_count", "stride=2",
            "lhs_batch_dims={0", "(f32[", "to_apply=max", "s32["})
        Seen[Key] += F.Text.find(Key) != std::string::npos;
      for (const auto &Out : F.Exact)
        Seen["exact"] += std::count(Out.begin(), Out.end(), true);
    }
  for (const auto &[Key, N] : Seen)
    EXPECT_GE(N, 2) << Key;
}

TEST(ContractionIndexing, BareVariablesOfOneValueStay) {
  // XLA builds the dot map without simplifying: a contracting pair of size
  // 1 keeps its range variable; a kernel of spatial size 1 keeps its own.
  auto M = parseHloModule(module(R"(
    p0 = f32[3,1] parameter(0)
    p1 = f32[1,2] parameter(1)
    d = f32[3,2] dot(p0, p1), lhs_contracting_dims={1},
      rhs_contracting_dims={0}
    in = f32[1,4,2] parameter(2)
    k = f32[1,2,3] parameter(3)
    ROOT c = f32[1,4,3] convolution(in, k), window={size=1},
      dim_labels=b0f_0io->b0f)"),
                          "bare");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  const HloComputation &E = *(*M)->entry();
  EXPECT_TRUE(equalIgnoringWhitespace(
      computeOutputToInputIndexing(Ctx, *E.findInstruction("d")).str(),
      R"(operand id = 0 (d0, d1)[s0] -> (d0, s0),
           domain: d0 in [0, 2], d1 in [0, 1], s0 in [0, 0]
         operand id = 1 (d0, d1)[s0] -> (s0, d1),
           domain: d0 in [0, 2], d1 in [0, 1], s0 in [0, 0])"))
      << computeOutputToInputIndexing(Ctx, *E.findInstruction("d")).str();
  std::string Conv = computeOutputToInputIndexing(Ctx, *E.root()).str();
  EXPECT_TRUE(equalIgnoringWhitespace(
      Conv, R"(operand id = 0 (d0, d1, d2)[s0] -> (d0, d1, s0),
                 domain: d0 in [0, 0], d1 in [0, 3], d2 in [0, 2], s0 in [0, 1]
               operand id = 1 (d0, d1, d2)[s0, s1] -> (s0, s1, d2),
                 domain: d0 in [0, 0], d1 in [0, 3], d2 in [0, 2],
                 s0 in [0, 0], s1 in [0, 1])"))
      << Conv;
}
