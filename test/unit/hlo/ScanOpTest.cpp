//===- ScanOpTest.cpp - The scan op: shape rule, maps, interpreter --------===//
//
// Part of idxmap. XLA's `scan` op as JAX writes it for jnp.cumsum: the maps
// printed and checked against the interpreter's dependencies (exact for a
// line-by-line body, sound for one that mixes lines), the interpreter
// against hand-computed values and against the reduce-window form of the
// same scan, and the shape rule's errors.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/HloInterpreter.h"

#include "support/HloDeps.h"
#include "support/Matchers.h"

#include <gtest/gtest.h>

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
cumsum3 {
  x = f32[3] parameter(0)
  c = f32[3] parameter(1)
  s = f32[3] add(x, c)
  ROOT t = (f32[3], f32[3]) tuple(s, s)
}
cummax2 {
  x = f32[2] parameter(0)
  c = f32[2] parameter(1)
  s = f32[2] maximum(x, c)
  ROOT t = (f32[2], f32[2]) tuple(s, s)
}
cumsum_s32 {
  x = s32[2] parameter(0)
  c = s32[2] parameter(1)
  s = s32[2] add(x, c)
  ROOT t = (s32[2], s32[2]) tuple(s, s)
}
mixing {
  x = f32[2] parameter(0)
  c = f32[2] parameter(1)
  r = f32[2] reverse(x), dimensions={0}
  s = f32[2] add(r, c)
  ROOT t = (f32[2], f32[2]) tuple(s, s)
}
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(b, a), direction=GT
  eq = pred[] compare(b, a), direction=EQ
  lt = pred[] compare(bi, ai), direction=LT
  tie = pred[] and(eq, lt)
  take = pred[] or(gt, tie)
  m = f32[] select(take, b, a)
  i = s32[] select(take, bi, ai)
  ROOT t = (f32[], s32[]) tuple(m, i)
}
counter {
  x = f32[2] parameter(0)
  c = s32[] parameter(1)
  one = s32[] constant(1)
  n = s32[] add(c, one)
  ROOT t = (f32[2], s32[]) tuple(x, n)
}
)";

std::string module(const std::string &Body) {
  return std::string(Prelude) + "ENTRY e {\n" + Body + "\n}\n";
}

//===----------------------------------------------------------------------===//
// Maps
//===----------------------------------------------------------------------===//

TEST(ScanIndexing, OutputReadsThePrefixOfItsLine) {
  auto M = parseHloModule(module(R"(
    p0 = f32[3,5] parameter(0)
    z = f32[3] parameter(1)
    ROOT s = (f32[3,5], f32[3]) scan(p0, z), dimensions={1}, num_carries=1,
      is_associative=true, to_apply=cumsum3)"),
                          "fwd");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  const HloInstruction &S = *(*M)->entry()->root();
  EXPECT_TRUE(
      equalIgnoringWhitespace(computeOutputToInputIndexing(Ctx, S, 0).str(),
                              R"(operand id = 0
           (d0, d1)[s0] -> (d0, s0),
           domain: d0 in [0, 2], d1 in [0, 4], s0 in [0, 4], d1 - s0 in [0, 4]
         operand id = 1
           (d0, d1) -> (d0), domain: d0 in [0, 2], d1 in [0, 4])"))
      << computeOutputToInputIndexing(Ctx, S, 0).str();
  // The final carry reads the whole line.
  EXPECT_TRUE(
      equalIgnoringWhitespace(computeOutputToInputIndexing(Ctx, S, 1).str(),
                              R"(operand id = 0
           (d0)[s0] -> (d0, s0), domain: d0 in [0, 2], s0 in [0, 4]
         operand id = 1
           (d0) -> (d0), domain: d0 in [0, 2])"))
      << computeOutputToInputIndexing(Ctx, S, 1).str();
}

TEST(ScanIndexing, ReverseScanReadsTheSuffix) {
  auto M = parseHloModule(module(R"(
    p0 = f32[5,3] parameter(0)
    z = f32[3] parameter(1)
    ROOT s = (f32[5,3], f32[3]) scan(p0, z), dimensions={0}, num_carries=1,
      is_reverse=true, is_associative=true, to_apply=cumsum3)"),
                          "rev");
  ASSERT_TRUE(M) << M.error().str();
  Context Ctx;
  std::string Got =
      computeOutputToInputIndexing(Ctx, *(*M)->entry()->root(), 0).str();
  EXPECT_TRUE(equalIgnoringWhitespace(Got, R"(operand id = 0
                (d0, d1)[s0] -> (s0, d1),
                domain: d0 in [0, 4], d1 in [0, 2], s0 in [0, 4],
                d0 - s0 in [-4, 0]
              operand id = 1
                (d0, d1) -> (d1), domain: d0 in [0, 4], d1 in [0, 2])"))
      << Got;
}

struct DepCase {
  const char *Name;
  const char *Body;
  int64_t OutputId = 0;
  /// The maps over-approximate (a body that mixes lines).
  bool Exact = true;
};

const DepCase DepCases[] = {
    {"forward_rows",
     R"(p0 = f32[3,5] parameter(0)
        p1 = f32[3] parameter(1)
        ROOT s = (f32[3,5], f32[3]) scan(p0, p1), dimensions={1},
          num_carries=1, is_associative=true, to_apply=cumsum3)"},
    {"forward_rows_carry",
     R"(p0 = f32[3,5] parameter(0)
        p1 = f32[3] parameter(1)
        ROOT s = (f32[3,5], f32[3]) scan(p0, p1), dimensions={1},
          num_carries=1, is_associative=true, to_apply=cumsum3)",
     1},
    {"reverse_columns",
     R"(p0 = f32[4,3] parameter(0)
        p1 = f32[3] parameter(1)
        ROOT s = (f32[4,3], f32[3]) scan(p0, p1), dimensions={0},
          num_carries=1, is_reverse=true, is_associative=true,
          to_apply=cumsum3)"},
    {"middle_dim_integers",
     R"(p0 = s32[1,4,2] parameter(0)
        p1 = s32[2] parameter(1)
        q = s32[1,2] reshape(p1)
        ROOT s = (s32[1,4,2], s32[1,2]) scan(p0, q), dimensions={1},
          num_carries=1, is_associative=true, to_apply=cumsum_s32_12)"},
    {"body_mixes_lines",
     R"(p0 = f32[3,2] parameter(0)
        p1 = f32[2] parameter(1)
        ROOT s = (f32[3,2], f32[2]) scan(p0, p1), dimensions={0},
          num_carries=1, to_apply=mixing)",
     0, /*Exact=*/false},
};

TEST(ScanIndexing, MapsNameTheDependencies) {
  for (const DepCase &C : DepCases) {
    SCOPED_TRACE(C.Name);
    std::string Text = module(C.Body);
    // A body over [1,2] slices for the rank-3 case.
    Text.insert(Text.find("ENTRY"), R"(cumsum_s32_12 {
  x = s32[1,2] parameter(0)
  c = s32[1,2] parameter(1)
  s = s32[1,2] add(x, c)
  ROOT t = (s32[1,2], s32[1,2]) tuple(s, s)
}
)");
    auto M = parseHloModule(Text, C.Name);
    ASSERT_TRUE(M) << M.error().str();
    const HloComputation &E = *(*M)->entry();
    Context Ctx;
    InstructionIndexing Idx =
        computeOutputToInputIndexing(Ctx, *E.root(), C.OutputId);
    const HloInstruction *X = E.root()->operand(0);
    DepCheckResult R =
        checkDependencies(E, X->parameterNumber(), Idx.Operands[0], C.Exact,
                          /*Seed=*/11, C.OutputId);
    EXPECT_TRUE(R.Ok) << R.Message << "\n" << Idx.str();
    EXPECT_FALSE(R.Undefined);
    EXPECT_GT(R.Pairs, 0);
  }
}

//===----------------------------------------------------------------------===//
// Interpreter
//===----------------------------------------------------------------------===//

Literal lit(PT T, std::vector<int64_t> Dims, std::vector<double> V) {
  return Literal::fromDoubles(Shape(T, std::move(Dims)), V);
}

std::vector<Literal> run(const std::string &Body,
                         const std::vector<Literal> &Args) {
  auto M = parseHloModule(module(Body), "eval");
  EXPECT_TRUE(M) << (M ? "" : M.error().str());
  if (!M)
    return {};
  auto R = evaluate(*(*M)->entry(), Args);
  EXPECT_TRUE(R) << (R ? "" : R.error().str());
  return R ? std::move(*R) : std::vector<Literal>{};
}

std::vector<double> values(const Literal &L) {
  std::vector<double> Out;
  for (int64_t K = 0; K < L.elementCount(); ++K)
    Out.push_back(L.getDouble(K));
  return Out;
}

using Doubles = std::vector<double>;

TEST(ScanInterpreter, CumsumForwardAndFinalCarry) {
  std::vector<Literal> R = run(R"(p0 = f32[3,2] parameter(0)
             z = f32[3] parameter(1)
             ROOT s = (f32[3,2], f32[3]) scan(p0, z), dimensions={1},
               num_carries=1, is_associative=true, to_apply=cumsum3)",
                               {lit(PT::F32, {3, 2}, {1, 2, 3, 4, 5, 6}),
                                lit(PT::F32, {3}, {10, 20, 30})});
  ASSERT_EQ(R.size(), 2u);
  EXPECT_EQ(values(R[0]), Doubles({11, 13, 23, 27, 35, 41}));
  EXPECT_EQ(values(R[1]), Doubles({13, 27, 41}));
}

TEST(ScanInterpreter, ReverseCummaxAlongDim0) {
  std::vector<Literal> R = run(R"(p0 = f32[3,2] parameter(0)
             z = f32[2] parameter(1)
             ROOT s = (f32[3,2], f32[2]) scan(p0, z), dimensions={0},
               num_carries=1, is_reverse=true, to_apply=cummax2)",
                               {lit(PT::F32, {3, 2}, {1, 9, 5, 2, 3, 4}),
                                lit(PT::F32, {2}, {-100, -100})});
  ASSERT_EQ(R.size(), 2u);
  // Column 0 from the end: 3, max(5,3)=5, max(1,5)=5; column 1: 4, 4, 9.
  EXPECT_EQ(values(R[0]), Doubles({5, 9, 5, 4, 3, 4}));
  EXPECT_EQ(values(R[1]), Doubles({5, 9}));
}

TEST(ScanInterpreter, NonSliceCarryCountsSteps) {
  // A carry that is no slice (a scalar step counter) and an output that is
  // the input itself: the general form, not a prefix scan.
  std::vector<Literal> R =
      run(R"(p0 = f32[4,2] parameter(0)
             z = s32[] constant(0)
             ROOT s = (f32[4,2], s32[]) scan(p0, z), dimensions={0},
               num_carries=1, to_apply=counter)",
          {lit(PT::F32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})});
  ASSERT_EQ(R.size(), 2u);
  EXPECT_EQ(values(R[0]), Doubles({1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(values(R[1]), Doubles({4}));
}

TEST(ScanInterpreter, VariadicPrefixWindowIsARunningMaxWithItsIndex) {
  // A running max with its index (ties to the smaller index), forward and
  // as a suffix; the running fold and the window-by-window evaluation
  // agree (the fold runs for a prefix window, a window of 4 of 5 does
  // not take it).
  const std::string X = R"(p0 = f32[5] parameter(0)
             io = s32[5] iota(), iota_dimension=0
             ninf = f32[] constant(-inf)
             z = s32[] constant(0)
             )";
  Literal In = lit(PT::F32, {5}, {1, 3, 3, 2, 5});
  struct Case {
    const char *Window;
    Doubles Max, Index;
  } Cases[] = {
      {"size=5 pad=4_0", {1, 3, 3, 3, 5}, {0, 1, 1, 1, 4}},
      {"size=5 pad=0_4", {5, 5, 5, 5, 5}, {4, 4, 4, 4, 4}},
      // A window of 4 (not a prefix of the dim): window by window.
      {"size=4 pad=3_0", {1, 3, 3, 3, 5}, {0, 1, 1, 1, 4}},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Window);
    std::vector<Literal> R =
        run(X +
                "ROOT w = (f32[5], s32[5]) reduce-window(p0, io, ninf, z), "
                "window={" +
                C.Window + "}, to_apply=argmax",
            {In});
    ASSERT_EQ(R.size(), 2u);
    EXPECT_EQ(values(R[0]), C.Max);
    EXPECT_EQ(values(R[1]), C.Index);
  }
}

TEST(ScanInterpreter, ScanOpAgreesWithTheReduceWindowForm) {
  // lax.cummax's reduce-window and the scan op compute one scan, forward
  // (padding low) and reversed (padding high), on random data.
  Literal X(Shape(PT::F32, {2, 7}));
  X.fillRandom(5);
  for (bool Reverse : {false, true}) {
    SCOPED_TRACE(Reverse ? "reverse" : "forward");
    std::string Pad = Reverse ? "0_0x0_6" : "0_0x6_0";
    std::vector<Literal> W = run(R"(p0 = f32[2,7] parameter(0)
               c = f32[] constant(-inf)
               ROOT r = f32[2,7] reduce-window(p0, c),
                 window={size=1x7 pad=)" +
                                     Pad + "}, to_apply=max",
                                 {X});
    std::vector<Literal> S =
        run(std::string(R"(p0 = f32[2,7] parameter(0)
               c = f32[] constant(-inf)
               z = f32[2] broadcast(c), dimensions={}
               ROOT s = (f32[2,7], f32[2]) scan(p0, z), dimensions={1},
                 num_carries=1, is_associative=true, is_reverse=)") +
                (Reverse ? "true" : "false") + ", to_apply=cummax2",
            {X});
    ASSERT_EQ(W.size(), 1u);
    ASSERT_EQ(S.size(), 2u);
    EXPECT_EQ(values(W[0]), values(S[0]));
  }
}

TEST(ScanInterpreter, WideScansFoldTwoByteSumsAndProductsOnce) {
  // A cumsum of 2053 bf16 elements of 0.01 (bf16 0.0100098): rounded
  // step by step it stops at 4 (past 4 a step is under half a unit), in
  // f64 rounded once it ends at 20.5 (bf16 of 20.55), in both forms and
  // for the scan op's final carry. An f16 product reversed along dim 0 is
  // the f64 product rounded once; f32 scans are untouched.
  const std::string Text = R"(HloModule w
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
body {
  x = bf16[] parameter(0)
  c = bf16[] parameter(1)
  s = bf16[] add(c, x)
  ROOT t = (bf16[], bf16[]) tuple(s, s)
}
prod {
  x = f16[2] parameter(0)
  c = f16[2] parameter(1)
  m = f16[2] multiply(x, c)
  ROOT t = (f16[2], f16[2]) tuple(m, m)
}
fadd {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  q = f16[3,2] parameter(0)
  f = f32[4099] parameter(1)
  k = bf16[] constant(0.01)
  x = bf16[2053] broadcast(k), dimensions={}
  z = bf16[] constant(0)
  rw = bf16[2053] reduce-window(x, z), window={size=2053 pad=2052_0}, to_apply=add
  sc = (bf16[2053], bf16[]) scan(x, z), dimensions={0}, num_carries=1, is_associative=true, to_apply=body
  one = f16[] constant(1)
  ones = f16[2] broadcast(one), dimensions={}
  pr = (f16[3,2], f16[2]) scan(q, ones), dimensions={0}, num_carries=1, is_reverse=true, to_apply=prod
  fz = f32[] constant(0)
  fs = f32[4099] reduce-window(f, fz), window={size=4099 pad=4098_0}, to_apply=fadd
  ROOT t = (bf16[2053], (bf16[2053], bf16[]), (f16[3,2], f16[2]), f32[4099]) tuple(rw, sc, pr, fs)
})";
  auto M = parseHloModule(Text, "wide");
  ASSERT_TRUE(M) << M.error().str();
  const HloComputation &C = *(*M)->entry();
  Literal F(Shape(PT::F32, {4099}));
  F.fillRandom(7, -1, 1);
  const Doubles Q = {1.1, 0.7, 1.3, -2.9, 0.3, 1.9};
  std::vector<Literal> Args;
  Args.push_back(lit(PT::F16, {3, 2}, Q));
  Args.push_back(F);
  EvaluateOptions Wide;
  Wide.WideScans = true;
  auto Step = evaluate(C, Args), Once = evaluate(C, Args, Wide);
  ASSERT_TRUE(Step) << Step.error().str();
  ASSERT_TRUE(Once) << Once.error().str();
  ASSERT_EQ(Once->size(), 6u);
  for (size_t Out : {0, 1}) {
    EXPECT_EQ((*Step)[Out].getDouble(2052), 4);
    EXPECT_EQ((*Once)[Out].getDouble(2052), 20.5);
  }
  EXPECT_EQ((*Step)[2].getDouble(0), 4);
  EXPECT_EQ((*Once)[2].getDouble(0), 20.5);
  // The reversed product: row 2, rows 2 x 1, rows 2 x 1 x 0 of the f16
  // inputs, in f64, rounded once; the final carry is row 0's.
  Literal In = lit(PT::F16, {3, 2}, Q), Expect(Shape(PT::F16, {3, 2}));
  for (int64_t E = 0; E < 2; ++E) {
    double Acc = 1;
    for (int64_t R = 2; R >= 0; --R) {
      Acc *= In.getDouble(R * 2 + E);
      Expect.setDouble(R * 2 + E, Acc);
    }
  }
  EXPECT_EQ(values((*Once)[3]), values(Expect));
  EXPECT_EQ(values((*Once)[4]), Doubles({Expect.getDouble(0),
                                         Expect.getDouble(1)}));
  EXPECT_EQ(values((*Once)[5]), values((*Step)[5]));
}

//===----------------------------------------------------------------------===//
// Shape rule
//===----------------------------------------------------------------------===//

TEST(ScanVerifier, LocatedErrors) {
  struct Case {
    const char *Body, *Message;
  } Cases[] = {
      {R"(p0 = f32[3,5] parameter(0)
          z = f32[3] parameter(1)
          ROOT s = (f32[3,5], f32[3]) scan(p0, z), dimensions={1},
            to_apply=cumsum3)",
       "scan: missing attribute 'num_carries'"},
      {R"(p0 = f32[3,5] parameter(0)
          z = f32[3] parameter(1)
          ROOT s = (f32[3,5], f32[3]) scan(p0, z), dimensions={2},
            num_carries=1, to_apply=cumsum3)",
       "scan: dimension 2 out of range for rank 2"},
      {R"(p0 = f32[3,5] parameter(0)
          z = f32[3] parameter(1)
          ROOT s = (f32[3,5], f32[3]) scan(p0, z), dimensions={0},
            num_carries=1, to_apply=cumsum3)",
       "scan: parameter 0 of 'cumsum3' is f32[3], expected f32[5]"},
      {R"(p0 = f32[3,5] parameter(0)
          z = f32[3] parameter(1)
          ROOT s = (f32[3,4], f32[3]) scan(p0, z), dimensions={1},
            num_carries=1, to_apply=cumsum3)",
       "scan: result 0 is f32[3,4], expected f32[3,5]"},
      {R"(p0 = f32[3,5] parameter(0)
          z = f32[3] parameter(1)
          ROOT s = (f32[3,5], f32[3]) scan(p0, z), dimensions={1},
            num_carries=2, to_apply=cumsum3)",
       "scan: num_carries must be an integer in [0, 1]"},
      {R"(p0 = f32[3,5] parameter(0)
          z = f32[3] parameter(1)
          ROOT s = (f32[3,5], f32[3]) scan(p0, z), dimensions={1},
            num_carries=1, is_reverse=maybe, to_apply=cumsum3)",
       "scan: is_reverse must be true or false, not 'maybe'"},
  };
  for (const Case &C : Cases) {
    auto M = parseHloModule(module(C.Body), "bad");
    ASSERT_FALSE(M) << C.Body;
    EXPECT_NE(M.error().str().find(C.Message), std::string::npos)
        << M.error().str();
  }
}

TEST(ScanVerifier, PrintsBackAsWritten) {
  auto M = parseHloModule(module(R"(
    p0 = f32[3,5] parameter(0)
    z = f32[3] parameter(1)
    ROOT s = (f32[3,5], f32[3]) scan(p0, z), dimensions={1}, num_carries=1,
      is_reverse=false, is_associative=true, to_apply=cumsum3)"),
                          "print");
  ASSERT_TRUE(M) << M.error().str();
  EXPECT_EQ((*M)->entry()->root()->toString(),
            "ROOT s = (f32[3,5], f32[3]) scan(p0, z), dimensions={1}, "
            "to_apply=cumsum3, num_carries=1, is_reverse=false, "
            "is_associative=true");
}

} // namespace
