//===- ControlFlowInterpreterTest.cpp - while, conditional, ... -----------===//
//
// Part of idxmap. The interpreter's ops after Call in HloOpcode: while
// (summing, nested, the MaxWork budget stopping an endless loop),
// conditional (pred and index forms, an out-of-range index), call,
// opt-barrier, erf, reduce-precision, bitcast-convert, and the located
// diagnostics for malformed control flow and for ops it leaves opaque.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"
#include "idxmap/HloInterpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace idxmap;

namespace {

using PT = PrimitiveType;

std::unique_ptr<HloModule> parse(const std::string &Text) {
  auto M = parseHloModule(Text, "t.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str());
  if (!M)
    return nullptr;
  return std::move(*M);
}

Literal run(const std::string &Text, const std::vector<Literal> &Args,
            EvaluateOptions Opts = {}) {
  auto M = parse(Text);
  if (!M)
    return Literal();
  auto R = evaluateToLiteral(*M->entry(), Args, Opts);
  EXPECT_TRUE(bool(R)) << (R ? "" : R.error().str());
  return R ? std::move(*R) : Literal();
}

/// The diagnostic evaluating \p Text gives (its first line), or "" if it
/// evaluates.
std::string failure(const std::string &Text, const std::vector<Literal> &Args,
                    EvaluateOptions Opts = {}) {
  auto M = parse(Text);
  if (!M)
    return "parse error";
  auto R = evaluateToLiteral(*M->entry(), Args, Opts);
  if (R)
    return "";
  std::string S = R.error().str();
  return S.substr(0, S.find('\n'));
}

Literal scalarS32(int64_t V) {
  return Literal::fromInts(Shape(PT::S32, {}), {V});
}
Literal scalarPred(bool V) {
  return Literal::fromInts(Shape(PT::Pred, {}), {V});
}
Literal f32(std::vector<int64_t> Dims, std::vector<double> V) {
  return Literal::fromDoubles(Shape(PT::F32, std::move(Dims)), V);
}

std::vector<double> doubles(const Literal &L) {
  std::vector<double> Out;
  for (int64_t K = 0; K < L.elementCount(); ++K)
    Out.push_back(L.getDouble(K));
  return Out;
}

/// acc[k] += i for i in [0, n): a while over (s32 counter, f32[4] acc).
const char *SumLoop = R"(
HloModule m
cond {
  s = (s32[], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[4] get-tuple-element(s), index=1
  n = s32[] get-tuple-element(s), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  fi = f32[] convert(i)
  b = f32[4] broadcast(fi), dimensions={}
  sum = f32[4] add(acc, b)
  ROOT t = (s32[], f32[4], s32[]) tuple(next, sum, n)
}
ENTRY e {
  a = f32[4] parameter(0)
  n = s32[] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4], s32[]) tuple(zero, a, n)
  w = (s32[], f32[4], s32[]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)";

TEST(ControlFlowInterpreterTest, WhileSums) {
  Literal R = run(SumLoop, {f32({4}, {0, 1, 2, 3}), scalarS32(5)});
  EXPECT_EQ(doubles(R), (std::vector<double>{10, 11, 12, 13}));
  // No iteration: the state comes back unchanged.
  R = run(SumLoop, {f32({4}, {0, 1, 2, 3}), scalarS32(0)});
  EXPECT_EQ(doubles(R), (std::vector<double>{0, 1, 2, 3}));
}

TEST(ControlFlowInterpreterTest, NestedWhiles) {
  // The outer loop runs n times an inner loop that counts to m: n * m.
  const char *Text = R"(
HloModule m
icond {
  s = (s32[], s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  m = s32[] get-tuple-element(s), index=2
  ROOT lt = pred[] compare(j, m), direction=LT
}
ibody {
  s = (s32[], s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  c = s32[] get-tuple-element(s), index=1
  m = s32[] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  c1 = s32[] add(c, one)
  ROOT t = (s32[], s32[], s32[]) tuple(j1, c1, m)
}
ocond {
  s = (s32[], s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
obody {
  s = (s32[], s32[], s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  c = s32[] get-tuple-element(s), index=1
  n = s32[] get-tuple-element(s), index=2
  m = s32[] get-tuple-element(s), index=3
  zero = s32[] constant(0)
  one = s32[] constant(1)
  it = (s32[], s32[], s32[]) tuple(zero, c, m)
  iw = (s32[], s32[], s32[]) while(it), condition=icond, body=ibody
  c2 = s32[] get-tuple-element(iw), index=1
  i1 = s32[] add(i, one)
  ROOT t = (s32[], s32[], s32[], s32[]) tuple(i1, c2, n, m)
}
ENTRY e {
  n = s32[] parameter(0)
  m = s32[] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], s32[], s32[], s32[]) tuple(zero, zero, n, m)
  w = (s32[], s32[], s32[], s32[]) while(init), condition=ocond, body=obody
  ROOT c = s32[] get-tuple-element(w), index=1
}
)";
  EXPECT_EQ(run(Text, {scalarS32(3), scalarS32(4)}).getInt(0), 12);
  EXPECT_EQ(run(Text, {scalarS32(7), scalarS32(0)}).getInt(0), 0);
}

TEST(ControlFlowInterpreterTest, WhileBudgetStopsEndlessLoop) {
  // The body and condition compute nothing, so only the per-iteration
  // charge stops it: the while's own 4 results, then one per iteration.
  const char *Text = R"(HloModule m
cond {
  s = f32[4] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  ROOT s = f32[4] parameter(0)
}
ENTRY e {
  a = f32[4] parameter(0)
  ROOT w = f32[4] while(a), condition=cond, body=body
}
)";
  EvaluateOptions Opts;
  Opts.MaxWork = 1000;
  std::string D = failure(Text, {f32({4}, {1, 2, 3, 4})}, Opts);
  EXPECT_EQ(D, "t.hlo:11:8: error: evaluating 'w' would exceed 1000 element "
               "results (EvaluateOptions::MaxWork) in iteration 996");
  // A body that computes stops at its own instruction.
  const char *Busy = R"(HloModule m
cond {
  s = f32[4] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  s = f32[4] parameter(0)
  ROOT n = f32[4] negate(s)
}
ENTRY e {
  a = f32[4] parameter(0)
  ROOT w = f32[4] while(a), condition=cond, body=body
}
)";
  D = failure(Busy, {f32({4}, {1, 2, 3, 4})}, Opts);
  EXPECT_NE(D.find("t.hlo:8:8: error: evaluating 'n' would exceed 1000"),
            std::string::npos)
      << D;
}

const char *PredConditional = R"(HloModule m
on_true {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
on_false {
  y = s32[] parameter(0)
  c = f32[] convert(y)
  ROOT b = f32[2] broadcast(c), dimensions={}
}
ENTRY e {
  p = pred[] parameter(0)
  x = f32[2] parameter(1)
  y = s32[] parameter(2)
  ROOT r = f32[2] conditional(p, x, y), true_computation=on_true, false_computation=on_false
}
)";

TEST(ControlFlowInterpreterTest, ConditionalPredForm) {
  Literal X = f32({2}, {1.5, -2});
  EXPECT_EQ(doubles(run(PredConditional, {scalarPred(true), X, scalarS32(7)})),
            (std::vector<double>{-1.5, 2}));
  EXPECT_EQ(doubles(run(PredConditional, {scalarPred(false), X, scalarS32(7)})),
            (std::vector<double>{7, 7}));
}

TEST(ControlFlowInterpreterTest, ConditionalIndexForm) {
  const char *Text = R"(HloModule m
b0 {
  x = s32[] parameter(0)
  ROOT r = s32[] add(x, x)
}
b1 {
  x = s32[] parameter(0)
  ROOT r = s32[] negate(x)
}
b2 {
  x = s32[] parameter(0)
  ROOT r = s32[] constant(42)
}
ENTRY e {
  i = s32[] parameter(0)
  a = s32[] parameter(1)
  ROOT r = s32[] conditional(i, a, a, a), branch_computations={b0, b1, b2}
}
)";
  auto At = [&](int64_t I) {
    return run(Text, {scalarS32(I), scalarS32(5)}).getInt(0);
  };
  EXPECT_EQ(At(0), 10);
  EXPECT_EQ(At(1), -5);
  EXPECT_EQ(At(2), 42);
  // Out of range, either way: the last branch, as XLA.
  EXPECT_EQ(At(3), 42);
  EXPECT_EQ(At(-1), 42);
}

TEST(ControlFlowInterpreterTest, CallAndOptBarrier) {
  const char *Text = R"(HloModule m
sq {
  x = f32[3] parameter(0)
  ROOT m = f32[3] multiply(x, x)
}
ENTRY e {
  p = f32[3] parameter(0)
  c = f32[3] call(p), to_apply=sq
  t = (f32[3], f32[3]) tuple(c, p)
  b = (f32[3], f32[3]) opt-barrier(t)
  g0 = f32[3] get-tuple-element(b), index=0
  g1 = f32[3] get-tuple-element(b), index=1
  ROOT s = f32[3] subtract(g0, g1)
}
)";
  EXPECT_EQ(doubles(run(Text, {f32({3}, {1, 2, 3})})),
            (std::vector<double>{0, 2, 6}));
}

TEST(ControlFlowInterpreterTest, WidenedWhileGivesSlack) {
  auto M = parse(SumLoop);
  ASSERT_TRUE(M);
  std::vector<Literal> Args;
  Args.push_back(f32({4}, {0.1, 0.2, 0.3, 0.4}));
  Args.push_back(scalarS32(3));
  auto Ref = evaluate(*M->entry(), Args);
  ASSERT_TRUE(bool(Ref)) << Ref.error().str();
  auto Slack = roundingSlack(*M->entry(), Args, *Ref);
  ASSERT_TRUE(bool(Slack)) << Slack.error().str();
  ASSERT_EQ(Slack->size(), 1u);
  EXPECT_GT((*Slack)[0].getDouble(0), 0);
  EXPECT_LT((*Slack)[0].getDouble(0), 1e-5);
}

TEST(ControlFlowInterpreterTest, MalformedControlFlowIsDiagnosed) {
  // The body returns the wrong shape.
  const char *BadBody = R"(HloModule m
cond {
  s = f32[4] parameter(0)
  ROOT t = pred[] constant(false)
}
body {
  s = f32[4] parameter(0)
  ROOT r = f32[2] slice(s), slice={[0:2]}
}
ENTRY e {
  a = f32[4] parameter(0)
  ROOT w = f32[4] while(a), condition=cond, body=body
}
)";
  EXPECT_EQ(failure(BadBody, {f32({4}, {1, 2, 3, 4})}),
            "t.hlo:12:8: error: cannot evaluate 'w': body 'body' returns "
            "f32[2], expected f32[4]");
  // A condition that does not return pred[].
  const char *BadCond = R"(HloModule m
cond {
  ROOT s = f32[4] parameter(0)
}
body {
  ROOT s = f32[4] parameter(0)
}
ENTRY e {
  a = f32[4] parameter(0)
  ROOT w = f32[4] while(a), condition=cond, body=body
}
)";
  EXPECT_EQ(failure(BadCond, {f32({4}, {1, 2, 3, 4})}),
            "t.hlo:10:8: error: cannot evaluate 'w': condition 'cond' returns "
            "f32[4], expected pred[]");
  // A branch whose parameter does not match its operand.
  const char *BadBranch = R"(HloModule m
b0 {
  ROOT x = f32[] parameter(0)
}
ENTRY e {
  i = s32[] parameter(0)
  a = s32[] parameter(1)
  ROOT r = f32[] conditional(i, a), branch_computations={b0}
}
)";
  EXPECT_EQ(failure(BadBranch, {scalarS32(0), scalarS32(1)}),
            "t.hlo:8:8: error: cannot evaluate 'r': parameter 0 of branch 0 "
            "'b0' is f32[], expected s32[]");
  // An f32 selector.
  const char *BadSelector = R"(HloModule m
b0 {
  ROOT x = f32[] parameter(0)
}
ENTRY e {
  i = f32[] parameter(0)
  ROOT r = f32[] conditional(i, i), branch_computations={b0}
}
)";
  EXPECT_EQ(failure(BadSelector, {f32({}, {0})}),
            "t.hlo:7:8: error: cannot evaluate 'r': the branch selector is "
            "f32[], expected pred[] or s32[]");
}

TEST(ControlFlowInterpreterTest, OpaqueOpsAreNamed) {
  const char *CustomCall = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(p), custom_call_target="foo"
}
)";
  EXPECT_EQ(failure(CustomCall, {f32({4}, {1, 2, 3, 4})}),
            "t.hlo:4:8: error: cannot evaluate 'c': the interpreter does not "
            "evaluate custom-call");
  const char *Complex = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = c64[4] complex(p, p)
}
)";
  EXPECT_EQ(failure(Complex, {f32({4}, {1, 2, 3, 4})}),
            "t.hlo:4:8: error: cannot evaluate 'c': the interpreter has no "
            "c64 values");
  // Tokens are not values the interpreter holds.
  const char *Token = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  t = token[] after-all()
  ROOT r = f32[4] negate(p)
}
)";
  EXPECT_EQ(failure(Token, {f32({4}, {1, 2, 3, 4})}),
            "t.hlo:4:3: error: cannot evaluate 't': the interpreter has no "
            "token values");
  const char *Rng = R"(HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_default
}
)";
  Literal Seed = Literal::fromInts(Shape(PT::U64, {2}), {1, 2});
  EXPECT_EQ(failure(Rng, {Seed}),
            "t.hlo:4:8: error: cannot evaluate 'r': the interpreter does not "
            "evaluate rng-bit-generator");
}

TEST(ControlFlowInterpreterTest, Erf) {
  const char *Text = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] erf(p)
}
)";
  std::vector<double> X = {-1.5, 0, 0.25, 3};
  Literal R = run(Text, {f32({4}, X)});
  for (size_t K = 0; K < X.size(); ++K)
    EXPECT_EQ(R.getDouble(int64_t(K)), double(std::erf(float(X[K]))));
  const char *Int = R"(HloModule m
ENTRY e {
  p = s32[] parameter(0)
  ROOT r = s32[] erf(p)
}
)";
  EXPECT_EQ(failure(Int, {scalarS32(1)}),
            "t.hlo:4:8: error: cannot evaluate 'r': erf is defined on f16, "
            "bf16, f32 and f64, not s32");
}

TEST(ControlFlowInterpreterTest, FloatUnaryOpsAfterCall) {
  // acos ... sinh: the C library function in float for f32, in double for
  // f64 (inputs inside every function's domain).
  struct Case {
    const char *Op;
    double (*D)(double);
    float (*F)(float);
  };
  const Case Cases[] = {
      {"acos", [](double X) { return std::acos(X); },
       [](float X) { return std::acos(X); }},
      {"asin", [](double X) { return std::asin(X); },
       [](float X) { return std::asin(X); }},
      {"atan", [](double X) { return std::atan(X); },
       [](float X) { return std::atan(X); }},
      {"atanh", [](double X) { return std::atanh(X); },
       [](float X) { return std::atanh(X); }},
      {"asinh", [](double X) { return std::asinh(X); },
       [](float X) { return std::asinh(X); }},
      {"cosh", [](double X) { return std::cosh(X); },
       [](float X) { return std::cosh(X); }},
      {"sinh", [](double X) { return std::sinh(X); },
       [](float X) { return std::sinh(X); }},
  };
  std::vector<double> X = {-0.75, 0, 0.25, 0.5};
  for (const Case &C : Cases) {
    std::string Text = std::string("HloModule m\nENTRY e {\n  p = f32[4] "
                                   "parameter(0)\n  ROOT r = f32[4] ") +
                       C.Op + "(p)\n}\n";
    Literal R = run(Text.c_str(), {f32({4}, X)});
    for (size_t K = 0; K < X.size(); ++K)
      EXPECT_EQ(R.getDouble(int64_t(K)), double(C.F(float(X[K])))) << C.Op;
  }
  // acosh on f64 (its domain is x >= 1).
  auto M = parseHloModule("HloModule m\nENTRY e {\n  p = f64[2] "
                          "parameter(0)\n  ROOT r = f64[2] acosh(p)\n}\n",
                          "t.hlo");
  ASSERT_TRUE(bool(M));
  auto R = evaluate(*(*M)->entry(),
                    {Literal::fromDoubles(Shape(PrimitiveType::F64, {2}),
                                          {1.5, 10})});
  ASSERT_TRUE(bool(R)) << R.error().str();
  EXPECT_EQ((*R)[0].getDouble(0), std::acosh(1.5));
  EXPECT_EQ((*R)[0].getDouble(1), std::acosh(10.0));
}

std::string reducePrecisionModule(int E, int M) {
  return "HloModule m\nENTRY e {\n  p = f32[6] parameter(0)\n  ROOT r = "
         "f32[6] reduce-precision(p), exponent_bits=" +
         std::to_string(E) + ", mantissa_bits=" + std::to_string(M) + "\n}\n";
}

TEST(ControlFlowInterpreterTest, ReducePrecision) {
  const double Inf = std::numeric_limits<double>::infinity();
  const double NaN = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> X = {1.0009765625 + 0x1p-12, 3.14159, 70000, 1e-8,
                           -2.5, NaN};
  // To f16's format (5, 10): what a round trip through f16 gives, except
  // that values at f16's subnormal range flush to zero.
  Literal H = run(reducePrecisionModule(5, 10), {f32({6}, X)});
  Literal Half = Literal::fromDoubles(Shape(PT::F16, {6}), X);
  for (int K : {0, 1, 4})
    EXPECT_EQ(H.getDouble(K), Half.getDouble(K)) << K;
  EXPECT_EQ(H.getDouble(2), Inf);
  EXPECT_EQ(H.getDouble(3), 0.0);
  EXPECT_TRUE(std::isnan(H.getDouble(5)));
  // To bf16's format (8, 7): exactly bf16's rounding.
  Literal B = run(reducePrecisionModule(8, 7), {f32({6}, X)});
  Literal Bf = Literal::fromDoubles(Shape(PT::BF16, {6}), X);
  for (int K = 0; K < 6; ++K) {
    if (!std::isnan(X[size_t(K)])) {
      EXPECT_EQ(B.getDouble(K), Bf.getDouble(K)) << K;
    }
  }
  // mantissa_bits=0 turns NaN into +inf.
  Literal Z = run(reducePrecisionModule(8, 0), {f32({6}, X)});
  EXPECT_EQ(Z.getDouble(5), Inf);
  EXPECT_EQ(Z.getDouble(1), 4.0); // 3.14159 rounds to 2^2
  // Wider than f32: unchanged.
  Literal W = run(reducePrecisionModule(11, 52), {f32({6}, X)});
  for (int K = 0; K < 5; ++K)
    EXPECT_EQ(W.getDouble(K), double(float(X[size_t(K)])));
  EXPECT_EQ(failure(reducePrecisionModule(0, 3), {f32({6}, X)}),
            "t.hlo:4:8: error: cannot evaluate 'r': reduce-precision needs "
            "exponent_bits >= 1 and mantissa_bits >= 0");
}

TEST(ControlFlowInterpreterTest, BitcastConvert) {
  const char *Same = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = s32[2] bitcast-convert(p)
}
)";
  Literal R = run(Same, {f32({2}, {1.0, -2.0})});
  EXPECT_EQ(R.getInt(0), 0x3f800000);
  EXPECT_EQ(R.getInt(1), int32_t(0xc0000000));
  // Narrower: an extra minor dimension, bytes in little-endian order.
  const char *Narrow = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = u8[2,4] bitcast-convert(p)
}
)";
  R = run(Narrow, {f32({2}, {1.0, -2.0})});
  EXPECT_EQ(R.getInt(std::vector<int64_t>{0, 3}), 0x3f);
  EXPECT_EQ(R.getInt(std::vector<int64_t>{0, 2}), 0x80);
  EXPECT_EQ(R.getInt(std::vector<int64_t>{1, 3}), 0xc0);
  // Wider: the minor dimension folds away.
  const char *Wide = R"(HloModule m
ENTRY e {
  p = u16[3,2] parameter(0)
  ROOT r = u32[3] bitcast-convert(p)
}
)";
  R = run(Wide, {Literal::fromInts(Shape(PT::U16, {3, 2}),
                                   {1, 2, 3, 4, 0xffff, 0})});
  EXPECT_EQ(R.getInt(0), 0x20001);
  EXPECT_EQ(R.getInt(2), 0xffff);
  const char *BadShape = R"(HloModule m
ENTRY e {
  p = u16[3] parameter(0)
  ROOT r = u32[3] bitcast-convert(p)
}
)";
  EXPECT_EQ(failure(BadShape, {Literal::fromInts(Shape(PT::U16, {3}),
                                                 {1, 2, 3})}),
            "t.hlo:4:8: error: cannot evaluate 'r': bitcast-convert of u16[3] "
            "to u32 needs a last dimension of 2");
  EvaluateOptions Widen;
  Widen.Widen = true;
  EXPECT_EQ(failure(Same, {f32({2}, {1.0, -2.0})}, Widen),
            "t.hlo:4:8: error: cannot evaluate 'r': a bitcast-convert between "
            "element types is not evaluated in f64 (EvaluateOptions::Widen)");
}

} // namespace
