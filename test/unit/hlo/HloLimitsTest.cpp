//===- HloLimitsTest.cpp - Hostile and large HLO, generated at run time ---===//
//
// Part of idxmap. Inputs whose nesting or size follows the text (tuple
// shapes, ranks, call chains, nested fusions, parameter numbers) are
// rejected with located errors at the documented limits (HloLimits) and
// work just below them; large fusions (a 100,000-instruction chain, 20,000
// parameters, a 1,000-operand concatenate) parse, print, evaluate, index and
// partition in time linear in their size. Each test prints its time.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/HloInterpreter.h"
#include "idxmap/Partition.h"
#include "idxmap/Print.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

using namespace idxmap;

namespace {

std::string parseError(const std::string &Text) {
  auto M = parseHloModule(Text, "gen.hlo");
  return M ? std::string("parsed") : M.error().str();
}

std::unique_ptr<HloModule> parseOk(const std::string &Text) {
  auto M = parseHloModule(Text, "gen.hlo");
  if (!M) {
    ADD_FAILURE() << M.error().str();
    return nullptr;
  }
  return std::move(*M);
}

/// Reports a test's time (the stress tests must stay linear: a quadratic
/// step shows here first, then hits ctest's timeout).
class Timer {
public:
  explicit Timer(const char *What) : What(What) {}
  ~Timer() {
    double S =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count();
    std::printf("  [%s: %.3f s]\n", What, S);
  }

private:
  const char *What;
  std::chrono::steady_clock::time_point Start =
      std::chrono::steady_clock::now();
};

/// `(((f32[])))` nested \p Depth deep, as a parameter.
std::string nestedTupleModule(int Depth) {
  return "HloModule m\nENTRY e {\n  ROOT p = " + std::string(Depth, '(') +
         "f32[]" + std::string(Depth, ')') + " parameter(0)\n}\n";
}

/// A chain of \p N computations c0..c{N-1}, each calling the previous one
/// through \p Op (`call` or `fusion`), c0 computing exp; the ENTRY calls the
/// last.
std::string callChain(int N, const std::string &Op) {
  std::string Attr =
      Op == "call" ? std::string("to_apply=") : "kind=kLoop, calls=";
  std::string S = "HloModule m\nc0 {\n  p = f32[4] parameter(0)\n"
                  "  ROOT r = f32[4] exponential(p)\n}\n";
  for (int I = 1; I < N; ++I)
    S += "c" + std::to_string(I) + " {\n  p = f32[4] parameter(0)\n" +
         "  ROOT r = f32[4] " + Op + "(p), " + Attr + "c" +
         std::to_string(I - 1) + "\n}\n";
  return S + "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] " + Op +
         "(p), " + Attr + "c" + std::to_string(N - 1) + "\n}\n";
}

/// A loop fusion over \p Body (instructions of the fused computation
/// `f`, parameters p0..p{N-1} of f32[\p Size]) called with N parameters.
std::string fusionModule(int NumParams, const std::string &Body,
                         const std::string &OutShape) {
  std::string S = "HloModule m\nf {\n" + Body + "}\nENTRY e {\n";
  std::string Args;
  for (int I = 0; I < NumParams; ++I) {
    S += "  q" + std::to_string(I) + " = f32[4] parameter(" +
         std::to_string(I) + ")\n";
    Args += (I ? ", q" : "q") + std::to_string(I);
  }
  return S + "  ROOT fu = " + OutShape + " fusion(" + Args +
         "), kind=kLoop, calls=f\n}\n";
}

std::vector<Literal> iotaArgs(const HloComputation &C) {
  std::vector<Literal> Args;
  for (int64_t K = 0; K < C.parameterCount(); ++K) {
    Literal L(C.parameter(K)->shape());
    for (int64_t I = 0; I < L.elementCount(); ++I)
      L.setDouble(I, double(K * 10 + I));
    Args.push_back(std::move(L));
  }
  return Args;
}

//===----------------------------------------------------------------------===//
// Nesting limits
//===----------------------------------------------------------------------===//

TEST(HloLimits, TupleShapesNestedTooDeeply) {
  Timer T("40,000-deep tuple");
  // The 65th '(' is where the limit is hit: column 12 + 64.
  std::string E = parseError(nestedTupleModule(40000));
  EXPECT_EQ(E.substr(0, E.find('\n')),
            "gen.hlo:3:76: error: tuple shape nested too deeply (limit 64)");
  EXPECT_NE(parseError(nestedTupleModule(65)), "parsed");
}

TEST(HloLimits, TupleShapeAtTheLimitRoundTrips) {
  auto M = parseOk(nestedTupleModule(HloLimits::MaxTupleDepth));
  ASSERT_TRUE(M);
  std::string Printed = printHloModule(*M);
  auto Again = parseOk(Printed);
  ASSERT_TRUE(Again);
  EXPECT_EQ(printHloModule(*Again), Printed);
  // The interpreter copies a nested tuple argument through.
  auto R = evaluate(*M->entry(), iotaArgs(*M->entry()));
  ASSERT_TRUE(bool(R)) << R.error().str();
  EXPECT_EQ(R->size(), 1u);
}

TEST(HloLimits, RankTooLarge) {
  Timer T("rank-20,000 constant");
  int Rank = 20000;
  std::string Dims;
  for (int I = 0; I < Rank; ++I)
    Dims += I ? ",1" : "1";
  std::string E = parseError("HloModule m\nENTRY e {\n  ROOT c = f32[" + Dims +
                             "] constant(" + std::string(Rank, '{') + "1" +
                             std::string(Rank, '}') + ")\n}\n");
  // The 257th dimension size, at column 16 + 2 * 256.
  EXPECT_EQ(E.substr(0, E.find('\n')),
            "gen.hlo:3:528: error: shape has too many dimensions (limit 256)");
}

TEST(HloLimits, ConstantOfMaximalRankEvaluates) {
  int Rank = HloLimits::MaxRank;
  std::string Dims;
  for (int I = 0; I < Rank; ++I)
    Dims += I ? ",1" : "2";
  std::string Value = std::string(Rank, '{') + "3" +
                      std::string(Rank - 1, '}') + ", " +
                      std::string(Rank - 1, '{') + "4" + std::string(Rank, '}');
  auto M = parseOk("HloModule m\nENTRY e {\n  ROOT c = f32[" + Dims +
                   "] constant(" + Value + ")\n}\n");
  ASSERT_TRUE(M);
  EXPECT_NE(printHloModule(*M).find(Value), std::string::npos);
  auto R = evaluate(*M->entry(), {});
  ASSERT_TRUE(bool(R)) << R.error().str();
  EXPECT_EQ((*R)[0].getDouble(1), 4.0);
}

TEST(HloLimits, CallsNestedTooDeeply) {
  Timer T("5,000 chained calls, 6,000 nested fusions");
  // Heights: c_i spans i + 1 computations, so c256 is the first past 256.
  std::string E = parseError(callChain(5000, "call"));
  EXPECT_NE(E.find("error: calls nested too deeply (limit 256)\n"
                   "  ROOT r = f32[4] call(p), to_apply=c255\n"),
            std::string::npos)
      << E;
  E = parseError(callChain(6000, "fusion"));
  EXPECT_NE(E.find("error: calls nested too deeply (limit 256)\n"
                   "  ROOT r = f32[4] fusion(p), kind=kLoop, calls=c255\n"),
            std::string::npos)
      << E;
  // The ENTRY on top of 256 computations is one too many.
  EXPECT_NE(parseError(callChain(256, "call")), "parsed");
}

TEST(HloLimits, CallChainAtTheLimitEvaluatesAndIndexes) {
  Timer T("255 nested calls and fusions");
  for (const char *Op : {"call", "fusion"}) {
    SCOPED_TRACE(Op);
    auto M = parseOk(callChain(HloLimits::MaxCallDepth - 1, Op));
    ASSERT_TRUE(M);
    const HloComputation &E = *M->entry();
    auto R = evaluate(E, iotaArgs(E));
    ASSERT_TRUE(bool(R)) << R.error().str();
    EXPECT_FLOAT_EQ(float((*R)[0].getDouble(3)), std::exp(3.0f));
    Context Ctx;
    InstructionIndexing Idx = computeOutputToInputIndexing(Ctx, *E.root());
    ASSERT_EQ(Idx.Operands.size(), 1u);
    ASSERT_EQ(Idx.Operands[0].size(), 1u);
    EXPECT_EQ(printMap(Idx.Operands[0][0].Map),
              "(d0) -> (d0), domain: d0 in [0, 3]");
  }
}

TEST(HloLimits, RecursionIsStillAnError) {
  EXPECT_NE(parseError("HloModule m\na {\n  p = f32[] parameter(0)\n"
                       "  ROOT r = f32[] call(p), to_apply=b\n}\n"
                       "b {\n  p = f32[] parameter(0)\n"
                       "  ROOT r = f32[] call(p), to_apply=a\n}\n"
                       "ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT r = f32[] call(p), to_apply=a\n}\n")
                .find("error: recursive call of computation 'a'"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Sizes taken from the text
//===----------------------------------------------------------------------===//

TEST(HloLimits, ParameterNumberIsCheckedBeforeAllocating) {
  Timer T("parameter(1000000000)");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n"
                       "  ROOT p = f32[4] parameter(1000000000)\n}\n"),
            "gen.hlo:3:19: error: parameter number 1000000000 is out of "
            "range: computation 'e' has 1 parameter\n"
            "  ROOT p = f32[4] parameter(1000000000)\n"
            "                  ^");
}

TEST(HloLimits, ConstantBytesAreBudgeted) {
  // Two elided constants of 128 MiB fit; a third byte does not.
  std::string Two =
      "HloModule m\nENTRY e {\n"
      "  a = s8[134217728] constant({...})\n"
      "  b = s8[134217728] constant({...})\n"
      "  ROOT t = (s8[134217728], s8[134217728]) tuple(a, b)\n}\n";
  EXPECT_EQ(parseError(Two), "parsed");
  std::string Three =
      "HloModule m\nENTRY e {\n"
      "  a = s8[134217728] constant({...})\n"
      "  b = s8[134217728] constant({...})\n"
      "  c = s8[1] constant({1})\n"
      "  ROOT t = (s8[134217728], s8[134217728]) tuple(a, b)\n}\n";
  EXPECT_NE(parseError(Three).find("gen.hlo:5:13: error: constants too large: "
                                   "268435456 + 1 bytes (limit 268435456)"),
            std::string::npos);
}

TEST(HloLimits, InterpreterMemoryBudget) {
  auto M = parseOk("HloModule m\nENTRY e {\n  p = f32[1024] parameter(0)\n"
                   "  b = f32[1024,1024] broadcast(p), dimensions={1}\n"
                   "  ROOT n = f32[1024,1024] negate(b)\n}\n");
  ASSERT_TRUE(M);
  const HloComputation &E = *M->entry();
  EvaluateOptions O;
  O.MaxBytes = 8 << 20; // b and n: 4 MiB each
  EXPECT_TRUE(bool(evaluate(E, iotaArgs(E), O)));
  O.MaxBytes = (8 << 20) - 1;
  auto R = evaluate(E, iotaArgs(E), O);
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(R.error().str().substr(0, R.error().str().find('\n')),
            "gen.hlo:5:8: error: evaluating 'n' needs 4194304 bytes, 4194304 "
            "are in use (limit 8388607)");
  // The work budget: b and n compute 2^20 elements each.
  EvaluateOptions W;
  W.MaxWork = 2 << 20;
  EXPECT_TRUE(bool(evaluate(E, iotaArgs(E), W)));
  W.MaxWork = (2 << 20) - 1;
  R = evaluate(E, iotaArgs(E), W);
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(R.error().str().substr(0, R.error().str().find('\n')),
            "gen.hlo:5:8: error: evaluating 'n' would exceed 2097151 element "
            "results (EvaluateOptions::MaxWork)");
  // Shape::byteSize saturates instead of wrapping.
  EXPECT_EQ(Shape(PrimitiveType::F64, {int64_t(1) << 40, int64_t(1) << 40})
                .byteSize(),
            std::numeric_limits<int64_t>::max());
}

//===----------------------------------------------------------------------===//
// Tuples and output ids
//===----------------------------------------------------------------------===//

TEST(HloLimits, EveryOutputReadThroughGetTupleElementIsIndexed) {
  // g0 reads output 0 of the call (x), g1 output 1 (y): both parameters
  // are read. (The output id of c was overwritten by the last
  // get-tuple-element, so a was reported as not read.)
  auto M = parseOk(R"(HloModule m
f {
  x = f32[4] parameter(0)
  y = f32[8] parameter(1)
  s = f32[4] slice(y), slice={[4:8]}
  ROOT t = (f32[4], f32[4]) tuple(x, s)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[8] parameter(1)
  c = (f32[4], f32[4]) call(a, b), to_apply=f
  g0 = f32[4] get-tuple-element(c), index=0
  g1 = f32[4] get-tuple-element(c), index=1
  ROOT r = f32[4] add(g0, g1)
}
)");
  ASSERT_TRUE(M);
  Context Ctx;
  const HloComputation &E = *M->entry();
  GroupedIndexing G = computeGroupedIndexing(Ctx, E);
  const HloInstruction *A = E.parameter(0), *B = E.parameter(1);
  ASSERT_EQ(G[A].size(), 1u);
  EXPECT_EQ(printMap(G[A][0].Map), "(d0) -> (d0), domain: d0 in [0, 3]");
  ASSERT_EQ(G[B].size(), 1u);
  EXPECT_EQ(printMap(G[B][0].Map), "(d0) -> (d0 + 4), domain: d0 in [0, 3]");
  // Output ids outside the instruction's outputs are unknown, not a map
  // over dims the output does not have.
  const HloInstruction *C = E.findInstruction("c");
  EXPECT_EQ(numOutputs(*C), 2);
  for (int64_t Bad : {int64_t(2), int64_t(-1)})
    for (const std::vector<OperandMap> &Maps :
         computeOutputToInputIndexing(Ctx, *C, Bad).Operands)
      for (const OperandMap &OM : Maps)
        EXPECT_TRUE(OM.Map.isUndefined());
}

//===----------------------------------------------------------------------===//
// Large fusions
//===----------------------------------------------------------------------===//

/// A fusion of a chain of N - 1 negations of its parameter.
const std::string &chainModule() {
  static const std::string Text = [] {
    const int N = 100000;
    std::string Body = "  p0 = f32[4] parameter(0)\n";
    for (int I = 1; I < N; ++I)
      Body += std::string(I == N - 1 ? "  ROOT n" : "  n") + std::to_string(I) +
              " = f32[4] negate(" +
              (I == 1 ? "p0" : "n" + std::to_string(I - 1)) + ")\n";
    return fusionModule(1, Body, "f32[4]");
  }();
  return Text;
}
constexpr int ChainLength = 100000;

TEST(HloLimits, HundredThousandInstructionChainParsesAndEvaluates) {
  const int N = ChainLength;
  const std::string &Text = chainModule();
  Timer T("100,000-instruction chain: parse, print, evaluate");
  auto M = parseOk(Text);
  ASSERT_TRUE(M);
  EXPECT_EQ(M->findComputation("f")->instructionCount(), N);
  std::string Printed = printHloModule(*M);
  EXPECT_EQ(std::count(Printed.begin(), Printed.end(), '\n'), N + 9);
  // 99,999 negations: -x.
  auto R = evaluate(*M->entry(), iotaArgs(*M->entry()));
  ASSERT_TRUE(bool(R)) << R.error().str();
  EXPECT_EQ((*R)[0].getDouble(3), -3.0);
}

TEST(HloLimits, HundredThousandInstructionChainIndexes) {
  const int N = ChainLength;
  const std::string &Text = chainModule();
  Timer T("100,000-instruction chain: parse, fusion indexing");
  auto M = parseOk(Text);
  ASSERT_TRUE(M);
  const HloComputation &F = *M->findComputation("f");
  Context Ctx;
  GroupedIndexing G = computeGroupedIndexing(Ctx, F);
  EXPECT_EQ(G.size(), size_t(N));
  ASSERT_EQ(G[F.parameter(0)].size(), 1u);
  EXPECT_EQ(printMap(G[F.parameter(0)][0].Map),
            "(d0) -> (d0), domain: d0 in [0, 3]");
}

TEST(HloLimits, HundredThousandInstructionChainPartitions) {
  const int N = ChainLength;
  const std::string &Text = chainModule();
  Timer T("100,000-instruction chain: parse, partition, DOT");
  auto M = parseOk(Text);
  ASSERT_TRUE(M);
  const HloComputation &F = *M->findComputation("f");
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, F);
  ASSERT_EQ(P.Subgraphs.size(), 1u);
  EXPECT_EQ(P.Subgraphs[0].Instructions.size(), size_t(N - 1)); // not p0
  // The DOT has a line per vertex and per edge, and 10 more (it was
  // quadratic: 43 s at 20,000 instructions).
  std::string Dot = P.toDot();
  EXPECT_EQ(std::count(Dot.begin(), Dot.end(), '\n'), 10 + N + (N - 1));
}

TEST(HloLimits, TwentyThousandParameterFusion) {
  Timer T("20,000-parameter fusion");
  const int N = 20000;
  std::string Body;
  for (int I = 0; I < N; ++I)
    Body += "  p" + std::to_string(I) + " = f32[4] parameter(" +
            std::to_string(I) + ")\n";
  std::string Acc = "p0";
  for (int I = 1; I < N; ++I) {
    std::string Name = "a" + std::to_string(I);
    Body += std::string(I == N - 1 ? "  ROOT " : "  ") + Name +
            " = f32[4] add(" + Acc + ", p" + std::to_string(I) + ")\n";
    Acc = Name;
  }
  auto M = parseOk(fusionModule(N, Body, "f32[4]"));
  ASSERT_TRUE(M);
  const HloComputation &F = *M->findComputation("f");
  ASSERT_EQ(F.parameterCount(), N);
  // sum over K of (10 K + 1) at element 1.
  auto R = evaluate(*M->entry(), iotaArgs(*M->entry()));
  ASSERT_TRUE(bool(R)) << R.error().str();
  double Sum = 10.0 * (double(N) * (N - 1) / 2) + N;
  EXPECT_NEAR((*R)[0].getDouble(1), Sum, Sum * 1e-4); // rounded in f32
  Context Ctx;
  InstructionIndexing Idx =
      computeOutputToInputIndexing(Ctx, *M->entry()->root());
  ASSERT_EQ(Idx.Operands.size(), size_t(N));
  for (int K : {0, N / 2, N - 1}) {
    ASSERT_EQ(Idx.Operands[K].size(), 1u);
    EXPECT_EQ(printMap(Idx.Operands[K][0].Map),
              "(d0) -> (d0), domain: d0 in [0, 3]");
  }
  PartitionedComputation P = partitionComputation(Ctx, F);
  EXPECT_EQ(P.Subgraphs.size(), 1u);
  std::string Dot = P.toDot();
  // 2N - 1 vertices, 2N - 2 edges (N - 2 of them inside the subgraph).
  EXPECT_EQ(std::count(Dot.begin(), Dot.end(), '\n'),
            10 + (2 * N - 1) + (2 * N - 2));
}

TEST(HloLimits, ThousandOutputsOfOneChain) {
  // Each root's hero search walked the whole chain below it (analyze: 10 s
  // for 1,000 outputs of a 20,000-instruction chain); walks now skip what
  // reaches no reduce or transpose.
  Timer T("1,000 outputs of a 20,000-instruction chain");
  const int N = 20000, K = 1000;
  std::string Body = "  p0 = f32[64] parameter(0)\n", Outs, Types;
  for (int I = 1; I < N; ++I)
    Body += "  n" + std::to_string(I) + " = f32[64] negate(" +
            (I == 1 ? "p0" : "n" + std::to_string(I - 1)) + ")\n";
  for (int I = N - K; I < N; ++I) {
    Outs += (I == N - K ? "n" : ", n") + std::to_string(I);
    Types += I == N - K ? "f32[64]" : ", f32[64]";
  }
  Body += "  ROOT t = (" + Types + ") tuple(" + Outs + ")\n";
  auto M = parseOk("HloModule m\nf {\n" + Body +
                   "}\nENTRY e {\n  q = f32[64] parameter(0)\n"
                   "  ROOT fu = (" +
                   Types + ") fusion(q), kind=kLoop, calls=f\n}\n");
  ASSERT_TRUE(M);
  FusionAnalysis A = analyzeFusion(*M->entry()->root());
  ASSERT_EQ(A.Roots.size(), size_t(K));
  EXPECT_EQ(A.Kind, EmitterKind::Loop);
  for (size_t R = 0; R < A.Roots.size(); ++R)
    EXPECT_EQ(A.Heroes[R], A.Roots[R]);
  Context Ctx;
  GroupedIndexing G =
      computeGroupedIndexing(Ctx, *M->findComputation("f"), nullptr, K - 1);
  EXPECT_EQ(G.size(), size_t(N + 1));
}

TEST(HloLimits, ThousandOperandConcatenate) {
  Timer T("1,000-operand concatenate");
  const int N = 1000;
  std::string Body, Ops;
  for (int I = 0; I < N; ++I) {
    Body += "  p" + std::to_string(I) + " = f32[4] parameter(" +
            std::to_string(I) + ")\n";
    Ops += (I ? ", p" : "p") + std::to_string(I);
  }
  std::string Out = "f32[" + std::to_string(4 * N) + "]";
  Body += "  ROOT c = " + Out + " concatenate(" + Ops + "), dimensions={0}\n";
  auto M = parseOk(fusionModule(N, Body, Out));
  ASSERT_TRUE(M);
  const HloComputation &F = *M->findComputation("f");
  auto R = evaluate(*M->entry(), iotaArgs(*M->entry()));
  ASSERT_TRUE(bool(R)) << R.error().str();
  // Element 4 K + 2 is element 2 of operand K.
  for (int K : {0, 517, N - 1})
    EXPECT_EQ((*R)[0].getDouble(4 * K + 2), 10.0 * K + 2);
  Context Ctx;
  GroupedIndexing G = computeGroupedIndexing(Ctx, F);
  for (int K : {0, 517, N - 1}) {
    const std::vector<OperandMap> &Maps = G[F.parameter(K)];
    ASSERT_EQ(Maps.size(), 1u);
    std::string Shift = K ? " - " + std::to_string(4 * K) : "";
    EXPECT_EQ(printMap(Maps[0].Map), "(d0) -> (d0" + Shift +
                                         "), domain: d0 in [" +
                                         std::to_string(4 * K) + ", " +
                                         std::to_string(4 * K + 3) + "]")
        << K;
  }
  PartitionedComputation P = partitionComputation(Ctx, F);
  EXPECT_FALSE(P.Subgraphs.empty());
  EXPECT_FALSE(P.toDot().empty());
}

} // namespace
