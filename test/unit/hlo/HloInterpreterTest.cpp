//===- HloInterpreterTest.cpp - Reference HLO interpreter -----------------===//
//
// Part of idxmap. Every op against hand-computed values, with XLA's edge cases
// (bf16/f16 rounding, integer wrap-around, division by zero, shifts, convert
// saturation, NaN propagation, reduce order, clamping of dynamic slices,
// negative and interior padding).
//
//===----------------------------------------------------------------------===//
#include "hlo/ElementKernels.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloInterpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <sys/stat.h>

using namespace idxmap;

namespace {

constexpr double Inf = std::numeric_limits<double>::infinity();
constexpr double NaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t I32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t I32Max = std::numeric_limits<int32_t>::max();

using PT = PrimitiveType;

std::unique_ptr<HloModule> parse(const std::string &Text) {
  auto M = parseHloModule(Text, "t.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str());
  if (!M)
    return nullptr;
  return std::move(*M);
}

/// Evaluates the entry computation of \p Text.
Literal run(const std::string &Text, const std::vector<Literal> &Args,
            EvaluateOptions Opts = {}) {
  auto M = parse(Text);
  if (!M)
    return Literal();
  auto R = evaluateToLiteral(*M->entry(), Args, Opts);
  EXPECT_TRUE(bool(R)) << (R ? "" : R.error().str());
  return R ? std::move(*R) : Literal();
}

Literal lit(PT T, std::vector<int64_t> Dims, std::vector<double> V) {
  return Literal::fromDoubles(Shape(T, std::move(Dims)), V);
}
Literal ilit(PT T, std::vector<int64_t> Dims, std::vector<int64_t> V) {
  return Literal::fromInts(Shape(T, std::move(Dims)), V);
}

std::vector<double> doubles(const Literal &L) {
  std::vector<double> Out;
  for (int64_t K = 0; K < L.elementCount(); ++K)
    Out.push_back(L.getDouble(K));
  return Out;
}
std::vector<int64_t> ints(const Literal &L) {
  std::vector<int64_t> Out;
  for (int64_t K = 0; K < L.elementCount(); ++K)
    Out.push_back(L.getInt(K));
  return Out;
}
std::vector<uint64_t> bits(const Literal &L) {
  std::vector<uint64_t> Out;
  for (int64_t K = 0; K < L.elementCount(); ++K)
    Out.push_back(L.getBits(K));
  return Out;
}

/// Equality of doubles where NaN == NaN and the sign of zero matters.
void expectSame(const std::vector<double> &Got,
                const std::vector<double> &Want) {
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t K = 0; K < Got.size(); ++K) {
    if (std::isnan(Want[K])) {
      EXPECT_TRUE(std::isnan(Got[K])) << "element " << K;
      continue;
    }
    EXPECT_EQ(Got[K], Want[K]) << "element " << K;
    EXPECT_EQ(std::signbit(Got[K]), std::signbit(Want[K])) << "element " << K;
  }
}

std::string typeName(PT T) { return std::string(primitiveTypeName(T)); }

std::string dimsText(int64_t N) { return "[" + std::to_string(N) + "]"; }

/// `ENTRY e { a = T[N] parameter(0) ROOT r = T2[N] OP(a) }`.
std::string unaryModule(const std::string &Op, PT T, int64_t N,
                        PT Out = PT::Invalid) {
  if (Out == PT::Invalid)
    Out = T;
  std::string S = typeName(T) + dimsText(N);
  return "HloModule m\nENTRY e {\n  a = " + S + " parameter(0)\n  ROOT r = " +
         typeName(Out) + dimsText(N) + " " + Op + "(a)\n}\n";
}

std::string binaryModule(const std::string &Op, PT T, int64_t N,
                         const std::string &Attrs = "", PT Out = PT::Invalid) {
  if (Out == PT::Invalid)
    Out = T;
  std::string S = typeName(T) + dimsText(N);
  return "HloModule m\nENTRY e {\n  a = " + S + " parameter(0)\n  b = " + S +
         " parameter(1)\n  ROOT r = " + typeName(Out) + dimsText(N) + " " + Op +
         "(a, b)" + Attrs + "\n}\n";
}

Literal unary(const std::string &Op, const Literal &A, PT Out = PT::Invalid) {
  return run(unaryModule(Op, A.elementType(), A.elementCount(), Out), {A});
}
Literal binary(const std::string &Op, const Literal &A, const Literal &B,
               const std::string &Attrs = "", PT Out = PT::Invalid) {
  return run(binaryModule(Op, A.elementType(), A.elementCount(), Attrs, Out),
             {A, B});
}

/// The repository's test/examples (IDXMAP_EXAMPLES_DIR, set by CMake).
std::string examplesDir() { return IDXMAP_EXAMPLES_DIR; }

} // namespace

//===----------------------------------------------------------------------===//
// Floating-point elementwise ops
//===----------------------------------------------------------------------===//

TEST(HloInterpreter, UnaryFloatOpsMatchTheirDefinitions) {
  std::vector<double> X = {-2.5, -1.5, -0.0, 0.0, 0.5, 1.5, 2.5, 4.0};
  Literal A = lit(PT::F32, {8}, X);
  expectSame(doubles(unary("round-nearest-even", A)),
             {-2, -2, -0.0, 0, 0, 2, 2, 4});
  expectSame(doubles(unary("round-nearest-afz", A)),
             {-3, -2, -0.0, 0, 1, 2, 3, 4});
  expectSame(doubles(unary("floor", A)), {-3, -2, -0.0, 0, 0, 1, 2, 4});
  expectSame(doubles(unary("ceil", A)), {-2, -1, -0.0, 0, 1, 2, 3, 4});
  expectSame(doubles(unary("sign", A)), {-1, -1, -0.0, 0, 1, 1, 1, 1});
  expectSame(doubles(unary("abs", A)), {2.5, 1.5, 0, 0, 0.5, 1.5, 2.5, 4});
  expectSame(doubles(unary("negate", A)),
             {2.5, 1.5, 0, -0.0, -0.5, -1.5, -2.5, -4});
  // Transcendentals: exactly the float functions (XLA computes f32 in float).
  struct Case {
    const char *Op;
    float (*Fn)(float);
  };
  const Case Cases[] = {
      {"exponential", [](float V) { return std::exp(V); }},
      {"exponential-minus-one", [](float V) { return std::expm1(V); }},
      {"log", [](float V) { return std::log(V); }},
      {"log-plus-one", [](float V) { return std::log1p(V); }},
      {"tanh", [](float V) { return std::tanh(V); }},
      {"logistic", [](float V) { return 1.0f / (1.0f + std::exp(-V)); }},
      {"sqrt", [](float V) { return std::sqrt(V); }},
      {"rsqrt", [](float V) { return 1.0f / std::sqrt(V); }},
      {"cbrt", [](float V) { return std::cbrt(V); }},
      {"sine", [](float V) { return std::sin(V); }},
      {"cosine", [](float V) { return std::cos(V); }},
      {"tan", [](float V) { return std::tan(V); }},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Op);
    std::vector<double> Want;
    for (double V : X)
      Want.push_back(C.Fn(float(V)));
    expectSame(doubles(unary(C.Op, A)), Want);
  }
  // A few values by hand.
  Literal B = lit(PT::F32, {4}, {0, 4, -8, Inf});
  expectSame(doubles(unary("sqrt", B)), {0, 2, NaN, Inf});
  expectSame(doubles(unary("rsqrt", B)), {Inf, 0.5, NaN, 0});
  expectSame(doubles(unary("cbrt", B)), {0, std::cbrt(4.0f), -2, Inf});
  expectSame(doubles(unary("exponential", B)), {1, std::exp(4.0f),
                                                std::exp(-8.0f), Inf});
  expectSame(doubles(unary("logistic", B)),
             {0.5, 1.0f / (1.0f + std::exp(-4.0f)),
              1.0f / (1.0f + std::exp(8.0f)), 1});
  EXPECT_EQ(ints(unary("is-finite", lit(PT::F32, {4}, {1, Inf, -Inf, NaN}),
                       PT::Pred)),
            (std::vector<int64_t>{1, 0, 0, 0}));
  expectSame(doubles(unary("sign", lit(PT::F32, {1}, {NaN}))), {NaN});
}

TEST(HloInterpreter, BinaryFloatOps) {
  Literal A = lit(PT::F32, {6}, {1, -7, 7, 5.5, 1, 0});
  Literal B = lit(PT::F32, {6}, {0, 3, -3, 2, 1, 0});
  expectSame(doubles(binary("divide", A, B)), {Inf, -7.0f / 3, -7.0f / 3,
                                               2.75, 1, NaN});
  expectSame(doubles(binary("remainder", A, B)), {NaN, -1, 1, 1.5, 0, NaN});
  expectSame(doubles(binary("add", A, B)), {1, -4, 4, 7.5, 2, 0});
  expectSame(doubles(binary("subtract", A, B)), {1, -10, 10, 3.5, 0, 0});
  expectSame(doubles(binary("multiply", A, B)), {0, -21, -21, 11, 1, 0});
  // maximum/minimum propagate NaN from either side and order -0 below +0
  // (IEEE 754-2019, as XLA's GPU emitters).
  Literal C = lit(PT::F32, {5}, {NaN, 1, -0.0, 0.0, -0.0});
  Literal D = lit(PT::F32, {5}, {1, NaN, 0.0, -0.0, -0.0});
  expectSame(doubles(binary("maximum", C, D)), {NaN, NaN, 0.0, 0.0, -0.0});
  expectSame(doubles(binary("minimum", C, D)), {NaN, NaN, -0.0, -0.0, -0.0});
  // power: x^0 = 1 and 1^y = 1 even for NaN.
  Literal P = lit(PT::F32, {6}, {0, 1, NaN, 2, 2, -8});
  Literal Q = lit(PT::F32, {6}, {0, NaN, 0, 10, -1, 1.0 / 3});
  expectSame(doubles(binary("power", P, Q)), {1, 1, 1, 1024, 0.5, NaN});
  // f64 computes in double.
  expectSame(doubles(binary("add", lit(PT::F64, {1}, {0.1}),
                            lit(PT::F64, {1}, {0.2}))),
             {0.1 + 0.2});
  expectSame(doubles(binary("add", lit(PT::F32, {1}, {0.1}),
                            lit(PT::F32, {1}, {0.2}))),
             {double(0.1f + 0.2f)});
  Literal Y = lit(PT::F32, {2}, {1, 0});
  Literal Xs = lit(PT::F32, {2}, {1, -1});
  expectSame(doubles(binary("atan2", Y, Xs)),
             {std::atan2(1.0f, 1.0f), std::atan2(0.0f, -1.0f)});
}

TEST(HloInterpreter, Bf16AndF16RoundEveryResultToNearestEven) {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  Literal A = lit(PT::BF16, {3}, {1, 1, 1.0078125});
  Literal B = lit(PT::BF16, {3}, {0.00390625, 0.01171875, 1.0078125});
  Literal Sum = binary("add", A, B);
  expectSame(doubles(Sum), {1, 1.015625, 2.015625});
  EXPECT_EQ(bits(Sum), (std::vector<uint64_t>{0x3f80, 0x3f82, 0x4001}));
  // (1 + 2^-7)^2 = 1.01568603515625 rounds to 1.015625.
  expectSame(doubles(binary("multiply", A, B)),
             {0.00390625, 0.01171875, 1.015625});
  // tanh computes in f32 then rounds: tanh(0.5) = 0.46211717 -> 0.462890625.
  expectSame(doubles(unary("tanh", lit(PT::BF16, {1}, {0.5}))),
             {0.462890625});
  // f16: 2048 + 1 ties to 2048, 2050 + 1 ties to 2052.
  Literal H = binary("add", lit(PT::F16, {2}, {2048, 2050}),
                     lit(PT::F16, {2}, {1, 1}));
  expectSame(doubles(H), {2048, 2052});
  // f16 overflow and subnormals.
  Literal Big = binary("multiply", lit(PT::F16, {3}, {256, 0x1p-14, 0x1p-14}),
                       lit(PT::F16, {3}, {256, 0.5, 0x1p-11}));
  EXPECT_EQ(bits(Big), (std::vector<uint64_t>{0x7c00, 0x0200, 0x0000}));
}

TEST(HloInterpreter, HalfPrecisionConversions) {
  using namespace hlo;
  // f32 -> bf16.
  EXPECT_EQ(floatToBf16(1.00390625f), 0x3f80);
  EXPECT_EQ(floatToBf16(1.01171875f), 0x3f82);
  EXPECT_EQ(floatToBf16(3.4028235e38f), 0x7f80);
  EXPECT_EQ(floatToBf16(-std::numeric_limits<float>::quiet_NaN()), 0xffc0);
  EXPECT_EQ(floatToBf16(-0.0f), 0x8000);
  // f32 -> f16.
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(0.1f), 0x2e66);
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001);
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);       // tie to even (0)
  EXPECT_EQ(floatToHalf(0x1.8p-24f), 0x0002);     // tie to even (2 units)
  EXPECT_EQ(floatToHalf(0x1.ffcp-15f), 0x0400);   // ties up to min normal
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(2049.0f), 0x6800);        // 2048
  EXPECT_EQ(floatToHalf(2051.0f), 0x6802);        // 2052
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  for (uint32_t H = 0; H < 0x10000; ++H) {
    // f16 -> f32 -> f16 is the identity on non-NaN values.
    if ((H & 0x7c00) == 0x7c00 && (H & 0x3ff))
      continue;
    ASSERT_EQ(floatToHalf(halfToFloat(uint16_t(H))), H) << H;
  }
  for (uint32_t B = 0; B < 0x10000; B += 7) {
    if ((B & 0x7f80) == 0x7f80 && (B & 0x7f))
      continue;
    ASSERT_EQ(floatToBf16(bf16ToFloat(uint16_t(B))), B) << B;
  }
}

//===----------------------------------------------------------------------===//
// Integer and pred elementwise ops
//===----------------------------------------------------------------------===//

TEST(HloInterpreter, SignedIntegerArithmeticWraps) {
  Literal A = ilit(PT::S32, {4}, {I32Max, I32Min, 65536, -7});
  Literal B = ilit(PT::S32, {4}, {1, 1, 65536, 2});
  EXPECT_EQ(ints(binary("add", A, B)),
            (std::vector<int64_t>{I32Min, I32Min + 1, 131072, -5}));
  EXPECT_EQ(ints(binary("subtract", A, B)),
            (std::vector<int64_t>{I32Max - 1, I32Max, 0, -9}));
  EXPECT_EQ(ints(binary("multiply", A, B)),
            (std::vector<int64_t>{I32Max, I32Min, 0, -14}));
  // Division truncates; x / 0 = -1; INT_MIN / -1 = INT_MIN.
  Literal N = ilit(PT::S32, {6}, {7, -7, 7, 7, I32Min, I32Min});
  Literal D = ilit(PT::S32, {6}, {-2, 2, 0, 3, -1, 0});
  EXPECT_EQ(ints(binary("divide", N, D)),
            (std::vector<int64_t>{-3, -3, -1, 2, I32Min, -1}));
  // Remainder has the dividend's sign; x % 0 = x; INT_MIN % -1 = 0.
  EXPECT_EQ(ints(binary("remainder", N, D)),
            (std::vector<int64_t>{1, -1, 7, 1, 0, I32Min}));
  EXPECT_EQ(ints(binary("maximum", N, D)),
            (std::vector<int64_t>{7, 2, 7, 7, -1, 0}));
  EXPECT_EQ(ints(binary("minimum", N, D)),
            (std::vector<int64_t>{-2, -7, 0, 3, I32Min, I32Min}));
  // s64 edges.
  int64_t Min64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(ints(binary("divide", ilit(PT::S64, {2}, {Min64, 5}),
                        ilit(PT::S64, {2}, {-1, 0}))),
            (std::vector<int64_t>{Min64, -1}));
  EXPECT_EQ(ints(binary("remainder", ilit(PT::S64, {2}, {Min64, 5}),
                        ilit(PT::S64, {2}, {-1, 0}))),
            (std::vector<int64_t>{0, 5}));
  // Unary.
  Literal S8 = ilit(PT::S8, {4}, {-128, -5, 0, 127});
  EXPECT_EQ(ints(unary("abs", S8)), (std::vector<int64_t>{-128, 5, 0, 127}));
  EXPECT_EQ(ints(unary("negate", S8)),
            (std::vector<int64_t>{-128, 5, 0, -127}));
  EXPECT_EQ(ints(unary("sign", S8)), (std::vector<int64_t>{-1, -1, 0, 1}));
  EXPECT_EQ(ints(unary("not", S8)), (std::vector<int64_t>{127, 4, -1, -128}));
  EXPECT_EQ(ints(unary("popcnt", S8)), (std::vector<int64_t>{1, 7, 0, 7}));
  EXPECT_EQ(ints(unary("count-leading-zeros", S8)),
            (std::vector<int64_t>{0, 0, 8, 1}));
  EXPECT_EQ(ints(binary("multiply", ilit(PT::S8, {2}, {16, -128}),
                        ilit(PT::S8, {2}, {16, -1}))),
            (std::vector<int64_t>{0, -128}));
}

TEST(HloInterpreter, IntegerPower) {
  Literal A = ilit(PT::S32, {8}, {3, 2, 2, 1, -1, 0, -2, 7});
  Literal B = ilit(PT::S32, {8}, {4, 31, -1, -5, -1, 0, 3, 0});
  EXPECT_EQ(ints(binary("power", A, B)),
            (std::vector<int64_t>{81, I32Min, 0, 1, 0, 1, -8, 1}));
  EXPECT_EQ(ints(binary("power", ilit(PT::U8, {2}, {2, 3}),
                        ilit(PT::U8, {2}, {8, 5}))),
            (std::vector<int64_t>{0, 243}));
}

TEST(HloInterpreter, Shifts) {
  Literal A = ilit(PT::S32, {6}, {1, 1, 1, -8, -8, 8});
  Literal B = ilit(PT::S32, {6}, {31, 32, -1, 1, 40, 40});
  EXPECT_EQ(ints(binary("shift-left", A, B)),
            (std::vector<int64_t>{I32Min, 0, 0, -16, 0, 0}));
  EXPECT_EQ(ints(binary("shift-right-arithmetic", A, B)),
            (std::vector<int64_t>{0, 0, 0, -4, -1, 0}));
  Literal C = ilit(PT::S32, {4}, {-1, -1, -8, -8});
  Literal D = ilit(PT::S32, {4}, {1, 32, 28, -1});
  EXPECT_EQ(ints(binary("shift-right-logical", C, D)),
            (std::vector<int64_t>{I32Max, 0, 15, 0}));
  EXPECT_EQ(ints(binary("shift-right-arithmetic", C, D)),
            (std::vector<int64_t>{-1, -1, -1, -1}));
  // u8: arithmetic shifts see the sign bit.
  Literal U = ilit(PT::U8, {3}, {0x80, 0x80, 0x81});
  Literal V = ilit(PT::U8, {3}, {1, 9, 1});
  EXPECT_EQ(ints(binary("shift-right-arithmetic", U, V)),
            (std::vector<int64_t>{0xc0, 0xff, 0xc0}));
  EXPECT_EQ(ints(binary("shift-right-logical", U, V)),
            (std::vector<int64_t>{0x40, 0, 0x40}));
  EXPECT_EQ(ints(binary("shift-left", U, V)),
            (std::vector<int64_t>{0, 0, 0x02}));
}

TEST(HloInterpreter, UnsignedIntegers) {
  Literal A = ilit(PT::U8, {4}, {200, 3, 7, 255});
  Literal B = ilit(PT::U8, {4}, {100, 5, 0, 255});
  EXPECT_EQ(ints(binary("add", A, B)), (std::vector<int64_t>{44, 8, 7, 254}));
  EXPECT_EQ(ints(binary("subtract", A, B)),
            (std::vector<int64_t>{100, 254, 7, 0}));
  EXPECT_EQ(ints(binary("divide", A, B)), (std::vector<int64_t>{2, 0, 255, 1}));
  EXPECT_EQ(ints(binary("remainder", A, B)),
            (std::vector<int64_t>{0, 3, 7, 0}));
  Literal U32 = binary("divide", ilit(PT::U32, {1}, {7}),
                       ilit(PT::U32, {1}, {0}));
  EXPECT_EQ(U32.getBits(0), 0xffffffffu);
  Literal U64 = binary("divide", ilit(PT::U64, {1}, {7}),
                       ilit(PT::U64, {1}, {0}));
  EXPECT_EQ(U64.getBits(0), ~uint64_t(0));
  EXPECT_EQ(ints(unary("not", ilit(PT::U8, {2}, {0, 0x0f}))),
            (std::vector<int64_t>{0xff, 0xf0}));
  Literal X = ilit(PT::U8, {2}, {0xf0, 0x3c});
  Literal Z = ilit(PT::U8, {2}, {0x3c, 0x0f});
  EXPECT_EQ(ints(binary("and", X, Z)), (std::vector<int64_t>{0x30, 0x0c}));
  EXPECT_EQ(ints(binary("or", X, Z)), (std::vector<int64_t>{0xfc, 0x3f}));
  EXPECT_EQ(ints(binary("xor", X, Z)), (std::vector<int64_t>{0xcc, 0x33}));
  EXPECT_EQ(ints(binary("xor", ilit(PT::S16, {1}, {-1}),
                        ilit(PT::S16, {1}, {0x00ff}))),
            (std::vector<int64_t>{-256}));
}

TEST(HloInterpreter, PredOps) {
  Literal A = ilit(PT::Pred, {4}, {0, 0, 1, 1});
  Literal B = ilit(PT::Pred, {4}, {0, 1, 0, 1});
  EXPECT_EQ(ints(binary("and", A, B)), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(ints(binary("or", A, B)), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(ints(binary("xor", A, B)), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(ints(binary("add", A, B)), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(ints(binary("subtract", A, B)), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(ints(binary("multiply", A, B)), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(ints(binary("maximum", A, B)), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(ints(binary("power", A, B)), (std::vector<int64_t>{1, 0, 1, 1}));
  EXPECT_EQ(ints(unary("not", A)), (std::vector<int64_t>{1, 1, 0, 0}));
}

//===----------------------------------------------------------------------===//
// convert, compare, select, clamp
//===----------------------------------------------------------------------===//

TEST(HloInterpreter, ConvertSaturatesAndRounds) {
  Literal F = lit(PT::F32, {8}, {3e9, -3e9, NaN, -1.5, 2.7, Inf, -Inf,
                                 2147483520.0});
  EXPECT_EQ(ints(unary("convert", F, PT::S32)),
            (std::vector<int64_t>{I32Max, I32Min, 0, -1, 2, I32Max, I32Min,
                                  2147483520}));
  EXPECT_EQ(ints(unary("convert", lit(PT::F32, {5}, {-5, 300, 255.9, 1.9, NaN}),
                       PT::U8)),
            (std::vector<int64_t>{0, 255, 255, 1, 0}));
  EXPECT_EQ(ints(unary("convert", lit(PT::F32, {4}, {0, -0.0, 0.5, NaN}),
                       PT::Pred)),
            (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(ints(unary("convert", lit(PT::BF16, {2}, {-3.5, 1e10}), PT::S16)),
            (std::vector<int64_t>{-3, 32767}));
  // Integers to floats round to nearest even; to bf16 through f32 (so
  // 2^24 + 2^16 + 1 rounds twice, to 2^24).
  expectSame(doubles(unary("convert", ilit(PT::S32, {1}, {16777217}), PT::F32)),
             {16777216});
  expectSame(
      doubles(unary("convert", ilit(PT::S64, {3}, {257, 259, 16842753}),
                    PT::BF16)),
      {256, 260, 16777216});
  // f64 -> bf16 goes through f32 too: 1 + 2^-8 + 2^-30 becomes the tie
  // 1 + 2^-8 in f32, then 1.
  expectSame(doubles(unary("convert", lit(PT::F64, {1}, {1 + 0x1p-8 + 0x1p-30}),
                           PT::BF16)),
             {1});
  expectSame(doubles(unary("convert", lit(PT::F64, {1}, {0.1}), PT::F32)),
             {double(0.1f)});
  // Integer to integer wraps.
  EXPECT_EQ(bits(unary("convert", ilit(PT::S32, {1}, {-1}), PT::U32)),
            (std::vector<uint64_t>{0xffffffff}));
  EXPECT_EQ(ints(unary("convert", ilit(PT::U32, {1}, {0xffffffff}), PT::S64)),
            (std::vector<int64_t>{4294967295}));
  EXPECT_EQ(ints(unary("convert", ilit(PT::U8, {1}, {200}), PT::S8)),
            (std::vector<int64_t>{-56}));
  EXPECT_EQ(ints(unary("convert", ilit(PT::Pred, {2}, {1, 0}), PT::S32)),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ints(unary("convert", ilit(PT::S32, {3}, {0, 5, -1}), PT::Pred)),
            (std::vector<int64_t>{0, 1, 1}));
}

TEST(HloInterpreter, CompareDirectionsAndTotalOrder) {
  Literal A = lit(PT::F32, {4}, {1, NaN, -0.0, 2});
  Literal B = lit(PT::F32, {4}, {1, 1, 0.0, NaN});
  auto Cmp = [&](const char *Dir, const Literal &X, const Literal &Y,
                 const std::string &Extra = "") {
    return ints(binary("compare", X, Y,
                       std::string(", direction=") + Dir + Extra, PT::Pred));
  };
  EXPECT_EQ(Cmp("EQ", A, B), (std::vector<int64_t>{1, 0, 1, 0}));
  EXPECT_EQ(Cmp("NE", A, B), (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_EQ(Cmp("LT", A, B), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(Cmp("LE", A, B), (std::vector<int64_t>{1, 0, 1, 0}));
  EXPECT_EQ(Cmp("GT", A, B), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(Cmp("GE", A, B), (std::vector<int64_t>{1, 0, 1, 0}));
  // Total order: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
  Literal C = lit(PT::F32, {4}, {-0.0, -NaN, 1, NaN});
  Literal D = lit(PT::F32, {4}, {0.0, -Inf, NaN, Inf});
  EXPECT_EQ(Cmp("LT", C, D, ", type=TOTALORDER"),
            (std::vector<int64_t>{1, 1, 1, 0}));
  EXPECT_EQ(Cmp("EQ", C, C, ", type=TOTALORDER"),
            (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(Cmp("EQ", C, D, ", type=TOTALORDER"),
            (std::vector<int64_t>{0, 0, 0, 0}));
  // bf16 total order on its own bits.
  EXPECT_EQ(Cmp("GT", lit(PT::BF16, {2}, {-0.0, -1}),
                lit(PT::BF16, {2}, {-1, -2}), ", type=TOTALORDER"),
            (std::vector<int64_t>{1, 1}));
  // Integers compare by value of their type.
  EXPECT_EQ(Cmp("GT", ilit(PT::U32, {1}, {0xffffffff}),
                ilit(PT::U32, {1}, {1})),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(Cmp("GT", ilit(PT::S32, {1}, {-1}), ilit(PT::S32, {1}, {1})),
            (std::vector<int64_t>{0}));
}

TEST(HloInterpreter, SelectAndClamp) {
  const char *Sel = R"(
HloModule m
ENTRY e {
  p = pred[3] parameter(0)
  a = f32[3] parameter(1)
  b = f32[3] parameter(2)
  s = pred[] parameter(3)
  x = f32[3] select(p, a, b)
  y = f32[3] select(s, a, b)
  ROOT t = (f32[3], f32[3]) tuple(x, y)
}
)";
  Literal R = run(Sel, {ilit(PT::Pred, {3}, {1, 0, 1}),
                        lit(PT::F32, {3}, {1, 2, 3}),
                        lit(PT::F32, {3}, {4, 5, 6}),
                        ilit(PT::Pred, {}, {0})});
  ASSERT_TRUE(R.isTuple());
  expectSame(doubles(R.elements()[0]), {1, 5, 3});
  expectSame(doubles(R.elements()[1]), {4, 5, 6});

  const char *Clamp = R"(
HloModule m
ENTRY e {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  x = f32[5] parameter(0)
  l2 = f32[5] parameter(1)
  a = f32[5] clamp(lo, x, hi)
  b = f32[5] clamp(l2, x, hi)
  ROOT t = (f32[5], f32[5]) tuple(a, b)
}
)";
  Literal C = run(Clamp, {lit(PT::F32, {5}, {-1, 0.5, 2, NaN, 0.25}),
                          lit(PT::F32, {5}, {0, 0.75, NaN, 0, 0.5})});
  expectSame(doubles(C.elements()[0]), {0, 0.5, 1, NaN, 0.25});
  expectSame(doubles(C.elements()[1]), {0, 0.75, NaN, NaN, 0.5});
  Literal I = run(R"(
HloModule m
ENTRY e {
  lo = s32[3] parameter(0)
  x = s32[3] parameter(1)
  hi = s32[] constant(10)
  ROOT c = s32[3] clamp(lo, x, hi)
}
)",
                  {ilit(PT::S32, {3}, {0, -5, 20}),
                   ilit(PT::S32, {3}, {-3, -2, 7})});
  // The high bound wins when lo > hi (min(hi, max(x, lo))).
  EXPECT_EQ(ints(I), (std::vector<int64_t>{0, -2, 10}));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST(HloInterpreter, IotaBroadcastReshapeCopy) {
  Literal R = run(R"(
HloModule m
ENTRY e {
  i1 = s32[2,3] iota(), iota_dimension=1
  i0 = f32[2,3] iota(), iota_dimension=0
  big = bf16[300] iota(), iota_dimension=0
  ROOT t = (s32[2,3], f32[2,3], bf16[300]) tuple(i1, i0, big)
}
)",
                  {});
  EXPECT_EQ(ints(R.elements()[0]), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  expectSame(doubles(R.elements()[1]), {0, 0, 0, 1, 1, 1});
  EXPECT_EQ(R.elements()[2].getDouble(257), 256); // rounded like a convert
  EXPECT_EQ(R.elements()[2].getDouble(299), 300);

  Literal B = run(R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  s = f32[] parameter(2)
  x = f32[2,3] broadcast(a), dimensions={0}
  y = f32[2,3] broadcast(b), dimensions={1}
  z = f32[2,2] broadcast(s), dimensions={}
  w = f32[3,2] reshape(x)
  c = f32[2,3]{0,1} copy(y)
  ROOT t = (f32[2,3], f32[2,3], f32[2,2], f32[3,2], f32[2,3]) tuple(x, y, z, w, c)
}
)",
                  {lit(PT::F32, {2}, {1, 2}), lit(PT::F32, {3}, {1, 2, 3}),
                   lit(PT::F32, {}, {7})});
  expectSame(doubles(B.elements()[0]), {1, 1, 1, 2, 2, 2});
  expectSame(doubles(B.elements()[1]), {1, 2, 3, 1, 2, 3});
  expectSame(doubles(B.elements()[2]), {7, 7, 7, 7});
  expectSame(doubles(B.elements()[3]), {1, 1, 1, 2, 2, 2});
  // copy changes the layout only: the logical values are the same.
  expectSame(doubles(B.elements()[4]), {1, 2, 3, 1, 2, 3});
}

TEST(HloInterpreter, TransposeAndBitcast) {
  Literal In = lit(PT::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Literal T = run(R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT t = f32[3,2] transpose(a), dimensions={1,0}
}
)",
                  {In});
  expectSame(doubles(T), {1, 4, 2, 5, 3, 6});
  // 3-D: out[i,j,k] = in[j,k,i] for dimensions={2,0,1}.
  Literal X(Shape(PT::S32, {2, 3, 4}));
  for (int64_t K = 0; K < 24; ++K)
    X.setInt(K, K);
  Literal Y = run(R"(
HloModule m
ENTRY e {
  a = s32[2,3,4] parameter(0)
  ROOT t = s32[4,2,3] transpose(a), dimensions={2,0,1}
}
)",
                  {X});
  for (int64_t I = 0; I < 4; ++I)
    for (int64_t J = 0; J < 2; ++J)
      for (int64_t K = 0; K < 3; ++K)
        EXPECT_EQ(Y.getInt({I, J, K}), X.getInt(X.linearIndex({J, K, I})));
  // A bitcast reinterprets the physical order: f32[2,3]{0,1} (column-major)
  // read as f32[3,2]{1,0} is the transpose; so is {1,0} read as {0,1}.
  Literal C = run(R"(
HloModule m
ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  b = f32[3,2]{1,0} bitcast(a)
  c = f32[2,3]{1,0} parameter(1)
  d = f32[3,2]{0,1} bitcast(c)
  e = f32[6]{0} bitcast(c)
  f = s32[2,3]{1,0} bitcast(c)
  ROOT t = (f32[3,2], f32[3,2], f32[6], s32[2,3]) tuple(b, d, e, f)
}
)",
                  {In, In});
  expectSame(doubles(C.elements()[0]), {1, 4, 2, 5, 3, 6});
  expectSame(doubles(C.elements()[1]), {1, 4, 2, 5, 3, 6});
  expectSame(doubles(C.elements()[2]), {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(C.elements()[3].getInt(0), 0x3f800000); // bits of 1.0f
}

TEST(HloInterpreter, SliceReverseConcatenate) {
  Literal R = run(R"(
HloModule m
ENTRY e {
  v = f32[10] iota(), iota_dimension=0
  s = f32[3] slice(v), slice={[1:9:3]}
  m = f32[4,5] parameter(0)
  t = f32[2,3] slice(m), slice={[1:3], [0:5:2]}
  r1 = f32[4,5] reverse(m), dimensions={1}
  r01 = f32[4,5] reverse(m), dimensions={0,1}
  ROOT out = (f32[3], f32[2,3], f32[4,5], f32[4,5]) tuple(s, t, r1, r01)
}
)",
                  {[] {
                     Literal M(Shape(PT::F32, {4, 5}));
                     for (int64_t K = 0; K < 20; ++K)
                       M.setDouble(K, double(K));
                     return M;
                   }()});
  expectSame(doubles(R.elements()[0]), {1, 4, 7});
  expectSame(doubles(R.elements()[1]), {5, 7, 9, 10, 12, 14});
  std::vector<double> Rev1 = doubles(R.elements()[2]);
  EXPECT_EQ(std::vector<double>(Rev1.begin(), Rev1.begin() + 5),
            (std::vector<double>{4, 3, 2, 1, 0}));
  std::vector<double> Rev01 = doubles(R.elements()[3]);
  EXPECT_EQ(Rev01.front(), 19);
  EXPECT_EQ(Rev01.back(), 0);

  Literal C = run(R"(
HloModule m
ENTRY e {
  a = f32[2,1] parameter(0)
  b = f32[2,2] parameter(1)
  c = f32[2,3] concatenate(a, b), dimensions={1}
  d = f32[6,1] concatenate(a, a, a), dimensions={0}
  ROOT t = (f32[2,3], f32[6,1]) tuple(c, d)
}
)",
                  {lit(PT::F32, {2, 1}, {1, 2}),
                   lit(PT::F32, {2, 2}, {3, 4, 5, 6})});
  expectSame(doubles(C.elements()[0]), {1, 3, 4, 2, 5, 6});
  expectSame(doubles(C.elements()[1]), {1, 2, 1, 2, 1, 2});
}

TEST(HloInterpreter, DynamicSliceClampsStartIndices) {
  const char *DS = R"(
HloModule m
ENTRY e {
  a = f32[5] parameter(0)
  i = s32[] parameter(1)
  ROOT d = f32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}
}
)";
  Literal A = lit(PT::F32, {5}, {0, 1, 2, 3, 4});
  expectSame(doubles(run(DS, {A, ilit(PT::S32, {}, {1})})), {1, 2});
  expectSame(doubles(run(DS, {A, ilit(PT::S32, {}, {4})})), {3, 4});
  expectSame(doubles(run(DS, {A, ilit(PT::S32, {}, {-2})})), {0, 1});
  // 2-D with unsigned indices (a huge u32 clamps to the last valid start).
  Literal M(Shape(PT::F32, {3, 4}));
  for (int64_t K = 0; K < 12; ++K)
    M.setDouble(K, double(K));
  Literal R = run(R"(
HloModule m
ENTRY e {
  a = f32[3,4] parameter(0)
  i = u32[] parameter(1)
  j = u32[] parameter(2)
  ROOT d = f32[2,2] dynamic-slice(a, i, j), dynamic_slice_sizes={2,2}
}
)",
                  {M, ilit(PT::U32, {}, {0xffffffff}), ilit(PT::U32, {}, {1})});
  expectSame(doubles(R), {5, 6, 9, 10});

  const char *DUS = R"(
HloModule m
ENTRY e {
  a = f32[5] parameter(0)
  u = f32[2] parameter(1)
  i = s64[] parameter(2)
  ROOT d = f32[5] dynamic-update-slice(a, u, i)
}
)";
  Literal Z = lit(PT::F32, {5}, {0, 0, 0, 0, 0});
  Literal U = lit(PT::F32, {2}, {7, 8});
  expectSame(doubles(run(DUS, {Z, U, ilit(PT::S64, {}, {1})})),
             {0, 7, 8, 0, 0});
  expectSame(doubles(run(DUS, {Z, U, ilit(PT::S64, {}, {4})})),
             {0, 0, 0, 7, 8});
  expectSame(doubles(run(DUS, {Z, U, ilit(PT::S64, {}, {-1})})),
             {7, 8, 0, 0, 0});
}

TEST(HloInterpreter, PadWithNegativeAndInteriorPadding) {
  auto Pad = [](const std::string &OutShape, const std::string &Padding,
                const Literal &In) {
    return run("HloModule m\nENTRY e {\n  a = " + In.shape().str() +
                   " parameter(0)\n  v = f32[] constant(9)\n  ROOT p = " +
                   OutShape + " pad(a, v), padding=" + Padding + "\n}\n",
               {In});
  };
  Literal A = lit(PT::F32, {3}, {1, 2, 3});
  // Interior gives 1 9 2 9 3; low -1 drops the 1; high 2 appends 9 9.
  expectSame(doubles(Pad("f32[6]", "-1_2_1", A)), {9, 2, 9, 3, 9, 9});
  expectSame(doubles(Pad("f32[7]", "2_0_1", A)), {9, 9, 1, 9, 2, 9, 3});
  expectSame(doubles(Pad("f32[1]", "-2_-2_1", A)), {2});
  expectSame(doubles(Pad("f32[0]", "-2_-1", A)), {});
  expectSame(doubles(Pad("f32[1]", "-1_-1_1", lit(PT::F32, {2}, {1, 2}))),
             {9});
  Literal B = lit(PT::F32, {2, 2}, {1, 2, 3, 4});
  expectSame(doubles(Pad("f32[4,1]", "1_0_1x0_-1", B)), {9, 1, 9, 3});
  expectSame(doubles(Pad("f32[3,4]", "0_1x1_1", B)),
             {9, 1, 2, 9, 9, 3, 4, 9, 9, 9, 9, 9});
}

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//

namespace {
const char *SumModule = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ten = f32[] constant(10)
  rows = f32[2] reduce(x, z), dimensions={1}, to_apply=add
  cols = f32[3] reduce(x, ten), dimensions={0}, to_apply=add
  all = f32[] reduce(x, z), dimensions={1,0}, to_apply=add
  ROOT t = (f32[2], f32[3], f32[]) tuple(rows, cols, all)
}
)";
} // namespace

TEST(HloInterpreter, ReduceSums) {
  Literal X = lit(PT::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  for (bool Fast : {true, false}) {
    SCOPED_TRACE(Fast);
    Literal R = run(SumModule, {X}, EvaluateOptions{Fast});
    expectSame(doubles(R.elements()[0]), {6, 15});
    expectSame(doubles(R.elements()[1]), {15, 17, 19});
    expectSame(doubles(R.elements()[2]), {21});
  }
}

TEST(HloInterpreter, ReduceOrderAndFastPath) {
  const char *Sum1 = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add
}
)";
  Literal X = lit(PT::F32, {4}, {1e8, 1, -1e8, 1});
  // Element by element in f32: ((0 + 1e8) + 1) rounds back to 1e8, then 0,
  // then 1. XLA's fast path sums in double: exactly 2.
  expectSame(doubles(run(Sum1, {X}, EvaluateOptions{false})), {1});
  expectSame(doubles(run(Sum1, {X}, EvaluateOptions{true})), {2});
  // bf16: 256 + 1 ties back to 256 at every step; in double it is 260.
  const char *SumBf16 = R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[5] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=add
}
)";
  Literal B = lit(PT::BF16, {5}, {256, 1, 1, 1, 1});
  expectSame(doubles(run(SumBf16, {B}, EvaluateOptions{false})), {256});
  expectSame(doubles(run(SumBf16, {B}, EvaluateOptions{true})), {260});
  // The fast path adds partial sums of 512 elements to the init value.
  Literal Many(Shape(PT::F32, {1025}));
  for (int64_t K = 0; K < 1025; ++K)
    Many.setDouble(K, K % 2 ? 1e-8 : 1.0);
  Literal Sum = run(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(b, a)
}
ENTRY e {
  x = f32[1025] parameter(0)
  z = f32[] constant(1e10)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add
}
)",
                    {Many});
  double Part1 = 0, Part2 = 0, Part3 = 0;
  for (int64_t K = 0; K < 512; ++K)
    Part1 += double(float(K % 2 ? 1e-8 : 1.0));
  for (int64_t K = 512; K < 1024; ++K)
    Part2 += double(float(K % 2 ? 1e-8 : 1.0));
  Part3 += 1.0;
  double Want = ((1e10 + Part1) + Part2) + Part3;
  expectSame(doubles(Sum), {double(float(Want))});
}

TEST(HloInterpreter, ReduceFollowsTheOperandLayout) {
  // acc * 10 + x records the visiting order as digits.
  auto Text = [](const std::string &Layout, const std::string &Extra) {
    return R"(
HloModule m
digits {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ten = s32[] constant(10)
  m = s32[] multiply(a, ten)
)" + Extra + R"(
  ROOT r = s32[] add(m, b)
}
ENTRY e {
  x = s32[2,2])" + Layout + R"( parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[] reduce(x, z), dimensions={0,1}, to_apply=digits
}
)";
  };
  Literal X = ilit(PT::S32, {2, 2}, {1, 2, 3, 4});
  // The tuple/get-tuple-element pair makes the reducer non-scalar, which
  // exercises the general (non-compiled) path; both must agree.
  std::string Gte = "  tt = (s32[], s32[]) tuple(a, b)\n"
                    "  g = s32[] get-tuple-element(tt), index=0\n";
  for (const std::string &Extra : {std::string(), Gte}) {
    EXPECT_EQ(ints(run(Text("", Extra), {X})), (std::vector<int64_t>{1234}));
    EXPECT_EQ(ints(run(Text("{1,0}", Extra), {X})),
              (std::vector<int64_t>{1234}));
    EXPECT_EQ(ints(run(Text("{0,1}", Extra), {X})),
              (std::vector<int64_t>{1324}));
  }
}

TEST(HloInterpreter, ReduceMaxIntegersAndEmpty) {
  Literal R = run(R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = f32[2,3,2] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[3] reduce(x, ninf), dimensions={0,2}, to_apply=max
  i = s32[2] parameter(1)
  z = s32[] constant(0)
  si = s32[] reduce(i, z), dimensions={0}, to_apply=add
  e = f32[2,0] parameter(2)
  em = f32[2] reduce(e, ninf), dimensions={1}, to_apply=max
  ROOT t = (f32[3], s32[], f32[2]) tuple(mx, si, em)
}
)",
                  {lit(PT::F32, {2, 3, 2},
                       {1, 7, 2, 3, NaN, 0, -1, -2, 9, 4, 5, 6}),
                   ilit(PT::S32, {2}, {I32Max, 1}),
                   Literal(Shape(PT::F32, {2, 0}))});
  expectSame(doubles(R.elements()[0]), {7, 9, NaN});
  EXPECT_EQ(ints(R.elements()[1]), (std::vector<int64_t>{I32Min}));
  expectSame(doubles(R.elements()[2]), {-Inf, -Inf});
}

TEST(HloInterpreter, VariadicReduceArgmax) {
  const char *Text = R"(
HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  eq = pred[] compare(bv, av), direction=EQ
  lt = pred[] compare(bi, ai), direction=LT
  tie = pred[] and(eq, lt)
  take = pred[] or(gt, tie)
  v = f32[] select(take, bv, av)
  i = s32[] select(take, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[2,4] parameter(0)
  idx = s32[2,4] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(x, idx, ninf, zero), dimensions={1}, to_apply=argmax
}
)";
  auto M = parse(Text);
  ASSERT_TRUE(M);
  auto R = evaluate(*M->entry(), {lit(PT::F32, {2, 4},
                                      {1, 5, 3, 5, -1, -2, -3, -4})});
  ASSERT_TRUE(bool(R)) << R.error().str();
  ASSERT_EQ(R->size(), 2u); // flattened tuple
  expectSame(doubles((*R)[0]), {5, -1});
  EXPECT_EQ(ints((*R)[1]), (std::vector<int64_t>{1, 0}));
}

//===----------------------------------------------------------------------===//
// Structure: tuples, fusions, calls
//===----------------------------------------------------------------------===//

TEST(HloInterpreter, SoftmaxFusion) {
  const char *Text = R"(
HloModule softmax
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused_softmax {
  x = f32[2,3] parameter(0)
  ninf = f32[] constant(-inf)
  rmax = f32[2] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  bmax = f32[2,3] broadcast(rmax), dimensions={0}
  shifted = f32[2,3] subtract(x, bmax)
  e = f32[2,3] exponential(shifted)
  zero = f32[] constant(0)
  rsum = f32[2] reduce(e, zero), dimensions={1}, to_apply=add_f32
  bsum = f32[2,3] broadcast(rsum), dimensions={0}
  ROOT out = f32[2,3] divide(e, bsum)
}
ENTRY main {
  p = f32[2,3] parameter(0)
  ROOT fusion = f32[2,3] fusion(p), kind=kInput, calls=fused_softmax
}
)";
  std::vector<float> X = {1, 2, 3, -1, 0, 5};
  Literal In = lit(PT::F32, {2, 3}, {1, 2, 3, -1, 0, 5});
  Literal Out = run(Text, {In});
  std::vector<double> Want;
  for (int R = 0; R < 2; ++R) {
    float Max = std::max({X[R * 3], X[R * 3 + 1], X[R * 3 + 2]});
    float E[3];
    double Sum = 0;
    for (int C = 0; C < 3; ++C) {
      E[C] = std::exp(X[R * 3 + C] - Max);
      Sum += E[C];
    }
    for (int C = 0; C < 3; ++C)
      Want.push_back(E[C] / float(Sum));
  }
  expectSame(doubles(Out), Want);
}

TEST(HloInterpreter, Bf16GeluLoopFusionRoundsEveryOp) {
  const char *Text = R"(
HloModule m
gelu {
  x = bf16[8] parameter(0)
  half = bf16[] constant(0.5)
  bhalf = bf16[8] broadcast(half), dimensions={}
  one = bf16[] constant(1)
  bone = bf16[8] broadcast(one), dimensions={}
  k = bf16[] constant(0.79785)
  bk = bf16[8] broadcast(k), dimensions={}
  sq = bf16[8] multiply(x, x)
  cube = bf16[8] multiply(sq, x)
  inner = bf16[8] add(x, cube)
  scaled = bf16[8] multiply(inner, bk)
  t = bf16[8] tanh(scaled)
  t1 = bf16[8] add(t, bone)
  h = bf16[8] multiply(t1, bhalf)
  ROOT y = bf16[8] multiply(x, h)
}
ENTRY main {
  p = bf16[8] parameter(0)
  ROOT f = bf16[8] fusion(p), kind=kLoop, calls=gelu
}
)";
  Literal In(Shape(PT::BF16, {8}));
  In.fillRandom(3, -3, 3);
  Literal Out = run(Text, {In});
  auto R = [](float V) { return hlo::bf16ToFloat(hlo::floatToBf16(V)); };
  for (int64_t K = 0; K < 8; ++K) {
    float X = float(In.getDouble(K));
    float Kc = R(0.79785f);
    float Sq = R(X * X), Cube = R(Sq * X), Inner = R(X + Cube);
    float Scaled = R(Inner * Kc), T = R(std::tanh(Scaled));
    float H = R(R(T + 1.0f) * 0.5f);
    EXPECT_EQ(Out.getDouble(K), R(X * H)) << K;
  }
}

TEST(HloInterpreter, TuplesCallsAndNestedComputations) {
  const char *Text = R"(
HloModule m
sq {
  a = f32[2] parameter(0)
  ROOT m = f32[2] multiply(a, a)
}
inner {
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  c = f32[2] call(p), to_apply=sq
  s = f32[2] add(c, q)
  ROOT t = (f32[2], f32[2]) tuple(s, c)
}
ENTRY e {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  f = (f32[2], f32[2]) fusion(x, y), kind=kLoop, calls=inner
  g0 = f32[2] get-tuple-element(f), index=0
  g1 = f32[2] get-tuple-element(f), index=1
  n = f32[2] negate(g0)
  ROOT t = (f32[2], (f32[2], f32[2])) tuple(n, f)
}
)";
  auto M = parse(Text);
  ASSERT_TRUE(M);
  std::vector<Literal> Args = {lit(PT::F32, {2}, {2, 3}),
                               lit(PT::F32, {2}, {1, -1})};
  auto Flat = evaluate(*M->entry(), Args);
  ASSERT_TRUE(bool(Flat)) << Flat.error().str();
  ASSERT_EQ(Flat->size(), 3u);
  expectSame(doubles((*Flat)[0]), {-5, -8});
  expectSame(doubles((*Flat)[1]), {5, 8});
  expectSame(doubles((*Flat)[2]), {4, 9});
  auto Tree = evaluateToLiteral(*M->entry(), Args);
  ASSERT_TRUE(bool(Tree));
  EXPECT_EQ(Tree->shape().str(), "(f32[2], (f32[2], f32[2]))");
  // A root that is a parameter returns a copy of the argument.
  auto Id = parse("HloModule m\nENTRY e {\n  ROOT p = s8[3] parameter(0)\n}\n");
  ASSERT_TRUE(Id);
  auto R = evaluate(*Id->entry(), {ilit(PT::S8, {3}, {1, 2, 3})});
  ASSERT_TRUE(bool(R));
  EXPECT_EQ(ints((*R)[0]), (std::vector<int64_t>{1, 2, 3}));
}

TEST(HloInterpreter, SharedExampleRowSums) {
  std::ifstream F(examplesDir() + "/reduce_rows_4x8.hlo");
  ASSERT_TRUE(F) << "cannot read " << examplesDir() << "/reduce_rows_4x8.hlo";
  std::stringstream SS;
  SS << F.rdbuf();
  auto M = parse(SS.str());
  ASSERT_TRUE(M);
  Literal X(Shape(PT::F32, {4, 8}));
  X.fillRandom(42);
  auto R = evaluate(*M->entry(), {X});
  ASSERT_TRUE(bool(R)) << R.error().str();
  for (int64_t Row = 0; Row < 4; ++Row) {
    double Sum = 0;
    for (int64_t C = 0; C < 8; ++C)
      Sum += X.getDouble({Row, C});
    EXPECT_EQ((*R)[0].getDouble(Row), double(float(0.0 + Sum)));
  }
}

TEST(HloInterpreter, MediumSizedSoftmaxIsFast) {
  // 256 x 1024 through reduce, broadcast, exp, divide: well under a second.
  std::string Text = R"(
HloModule m
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[256,1024] parameter(0)
  ninf = f32[] constant(-inf)
  rmax = f32[256] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  b = f32[256,1024] broadcast(rmax), dimensions={0}
  s = f32[256,1024] subtract(x, b)
  ROOT e = f32[256,1024] exponential(s)
}
)";
  Literal X(Shape(PT::F32, {256, 1024}));
  X.fillRandom(7, -4, 4);
  Literal Out = run(Text, {X});
  ASSERT_EQ(Out.elementCount(), 256 * 1024);
  for (int64_t Row : {0, 100, 255}) {
    double Max = 0;
    for (int64_t C = 0; C < 1024; ++C)
      Max = std::max(Max, Out.getDouble({Row, C}));
    EXPECT_EQ(Max, 1.0); // exp(max - max)
  }
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(HloInterpreterErrors, ArgumentsAndUnsupportedValues) {
  auto M = parse("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                 "  c = f32[4] constant({...})\n"
                 "  ROOT a = f32[4] add(p, c)\n}\n");
  ASSERT_TRUE(M);
  auto Count = evaluate(*M->entry(), {});
  ASSERT_FALSE(bool(Count));
  EXPECT_EQ(Count.error().str(),
            "t.hlo:2:7: error: computation 'e' takes 1 arguments, got 0\n"
            "ENTRY e {\n"
            "      ^");
  auto Wrong = evaluate(*M->entry(), {lit(PT::F32, {3}, {1, 2, 3})});
  ASSERT_FALSE(bool(Wrong));
  EXPECT_EQ(Wrong.error().str(),
            "t.hlo:3:3: error: argument 0 is f32[3], parameter 'p' is f32[4]\n"
            "  p = f32[4] parameter(0)\n"
            "  ^");
  auto Elided = evaluate(*M->entry(), {lit(PT::F32, {4}, {1, 2, 3, 4})});
  ASSERT_FALSE(bool(Elided));
  EXPECT_EQ(Elided.error().str(),
            "t.hlo:4:3: error: cannot evaluate a constant whose value is "
            "elided ('{...}')\n"
            "  c = f32[4] constant({...})\n"
            "  ^");
  auto B = parse("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                 "  ROOT b = f16[8] bitcast(p)\n}\n");
  ASSERT_TRUE(B);
  // Between widths with row-major layouts the bytes are the value: f32
  // 1.0 (0x3f800000) is the f16 bit patterns 0x0000, 0x3f80.
  auto R = evaluate(*B->entry(), {lit(PT::F32, {4}, {1, 2, 3, 4})});
  ASSERT_TRUE(bool(R)) << R.error().str();
  EXPECT_EQ((*R)[0].getBits(0), 0x0000u);
  EXPECT_EQ((*R)[0].getBits(1), 0x3f80u);
  auto C = parse("HloModule m\nENTRY e {\n  p = f32[2,2]{0,1} parameter(0)\n"
                 "  ROOT b = f16[2,4] bitcast(p)\n}\n");
  ASSERT_TRUE(C);
  auto RC = evaluate(*C->entry(), {lit(PT::F32, {2, 2}, {1, 2, 3, 4})});
  ASSERT_FALSE(bool(RC));
  EXPECT_EQ(RC.error().Message,
            "cannot evaluate 'b': a bitcast between element types of "
            "different widths with a layout change or pred");
}

//===----------------------------------------------------------------------===//
// Literal helpers
//===----------------------------------------------------------------------===//

TEST(HloLiteral, RandomFillIsSeededAndInRange) {
  Literal A(Shape(PT::F32, {1000})), B(Shape(PT::F32, {1000})),
      C(Shape(PT::F32, {1000}));
  A.fillRandom(1, -2, 3);
  B.fillRandom(1, -2, 3);
  C.fillRandom(2, -2, 3);
  EXPECT_TRUE(A.bitwiseEqual(B));
  EXPECT_FALSE(A.bitwiseEqual(C));
  double Lo = 1e9, Hi = -1e9;
  for (double V : doubles(A)) {
    Lo = std::min(Lo, V);
    Hi = std::max(Hi, V);
  }
  EXPECT_GE(Lo, -2);
  EXPECT_LT(Hi, 3);
  EXPECT_LT(Lo, -1.9);
  EXPECT_GT(Hi, 2.9);
  Literal I(Shape(PT::U8, {5000}));
  I.fillRandom(5, -10.5, 300);
  int64_t Min = 1000, Max = -1;
  for (int64_t V : ints(I)) {
    Min = std::min(Min, V);
    Max = std::max(Max, V);
  }
  EXPECT_EQ(Min, 0);
  EXPECT_EQ(Max, 255);
  Literal S(Shape(PT::S64, {64}));
  S.fillRandom(9, -1e30, 1e30); // full range, no overflow
  Literal P(Shape(PT::Pred, {64}));
  P.fillRandom(9);
  for (uint64_t V : bits(P))
    EXPECT_LE(V, 1u);
  // The values are fixed on every platform (SplitMix64).
  Literal Z(Shape(PT::S32, {4}));
  Z.fillRandom(0, 0, 99);
  EXPECT_EQ(ints(Z), (std::vector<int64_t>{35, 0, 79, 44}));
}

TEST(HloLiteral, AccessorsAndPrinting) {
  Literal L(Shape(PT::BF16, {2}));
  L.setDouble(0, 1.00390625);
  L.setDouble(1, 3.0);
  EXPECT_EQ(L.getDouble(0), 1.0);
  EXPECT_EQ(L.getBits(1), 0x4040u);
  EXPECT_EQ(L.toString(), "bf16[2] {1, 3}");
  Literal F = lit(PT::F32, {3}, {0.1, -Inf, NaN});
  EXPECT_EQ(F.toString(), "f32[3] {0.1, -inf, nan}");
  EXPECT_EQ(F.toString(2), "f32[3] {0.1, -inf, ...}");
  Literal I = ilit(PT::S16, {2, 2}, {1, -2, 3, 40000});
  EXPECT_EQ(I.toString(), "s16[2,2] {1, -2, 3, -25536}");
  EXPECT_EQ(I.getInt({1, 0}), 3);
  Literal U = ilit(PT::U64, {1}, {-1});
  EXPECT_EQ(U.getBits(0), ~uint64_t(0));
  EXPECT_EQ(U.getInt(0), std::numeric_limits<int64_t>::max());
  Literal T = Literal::tuple({lit(PT::F32, {}, {1}), ilit(PT::Pred, {}, {1})});
  EXPECT_EQ(T.toString(), "(f32[] {1}, pred[] {true})");
  EXPECT_EQ(Literal::scalar(PT::S8, 300).getInt(0), 127); // saturates
  EXPECT_EQ(Literal::scalar(PT::S8, -1e9).getInt(0), -128);
}

TEST(HloLiteral, CompareWithTolerance) {
  Literal E = lit(PT::F32, {4}, {1, 2, NaN, Inf});
  Literal Same = lit(PT::F32, {4}, {1, 2.00001, NaN, Inf});
  LiteralComparison C = compareLiterals(E, Same);
  EXPECT_TRUE(C.Match) << C.Message;
  Literal Off = lit(PT::F32, {4}, {1, 2.5, 0, Inf});
  C = compareLiterals(E, Off);
  EXPECT_FALSE(C.Match);
  EXPECT_EQ(C.Mismatches, 2);
  EXPECT_EQ(C.FirstMismatch, 1);
  EXPECT_EQ(C.Message, "2 of 4 elements differ; first at [1]: expected 2, "
                       "got 2.5 (max abs error 0.5, max rel 0.25)");
  EXPECT_TRUE(compareLiterals(E, Off, Tolerance{1, 0}).Match == false);
  Literal Ints = ilit(PT::S32, {2}, {1, 2});
  EXPECT_FALSE(compareLiterals(Ints, ilit(PT::S32, {2}, {1, 3})).Match);
  EXPECT_TRUE(
      compareLiterals(Ints, ilit(PT::S32, {2}, {1, 3}), Tolerance{1, 0}).Match);
  C = compareLiterals(Ints, lit(PT::F32, {2}, {1, 2}));
  EXPECT_EQ(C.Message, "shape mismatch: expected s32[2], got f32[2]");
  // bf16 default tolerance is about one ulp of 2^-7.
  EXPECT_TRUE(compareLiterals(lit(PT::BF16, {1}, {1}),
                              lit(PT::BF16, {1}, {1.0078125}))
                  .Match);
  EXPECT_FALSE(compareLiterals(lit(PT::BF16, {1}, {1}),
                               lit(PT::BF16, {1}, {1.03125}))
                   .Match);
}

//===----------------------------------------------------------------------===//
// EvaluateOptions::Widen and compareLiterals' Sensitivity
//===----------------------------------------------------------------------===//

namespace {

TEST(HloInterpreterWiden, ElementwiseInF64) {
  const char *Text = R"(
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  a = f32[2] exponential(x)
  ROOT b = f32[2] exponential(a)
})";
  Literal X = lit(PT::F32, {2}, {3.7, 0.5});
  Literal Narrow = run(Text, {X});
  EvaluateOptions W;
  W.Widen = true;
  Literal Wide = run(Text, {X}, W);
  ASSERT_EQ(Wide.elementType(), PT::F64);
  ASSERT_EQ(Narrow.elementType(), PT::F32);
  for (int64_t K = 0; K < 2; ++K) {
    double Exact = std::exp(std::exp(X.getDouble(K)));
    EXPECT_NEAR(Wide.getDouble(K), Exact, Exact * 1e-15);
  }
  // At 3.7 the two f32 roundings show at the 6th digit (3.681650e17 against
  // 3.681645e17).
  EXPECT_GT(std::fabs(Narrow.getDouble(0) - Wide.getDouble(0)), 1e11);
}

TEST(HloInterpreterWiden, ReducerAndConstantsInF64) {
  // A bf16 sum of 1000 ones applied element by element stalls at 256 (257
  // is not a bf16); widened, it is exact. The init constant is widened too.
  const char *Text = R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[1000] parameter(0)
  z = bf16[] constant(0.5)
  ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=add
})";
  Literal X = lit(PT::BF16, {1000}, std::vector<double>(1000, 1.0));
  EvaluateOptions Slow;
  Slow.FastReduceAdd = false;
  EXPECT_EQ(run(Text, {X}, Slow).getDouble(0), 256);
  EvaluateOptions W = Slow;
  W.Widen = true;
  Literal Wide = run(Text, {X}, W);
  EXPECT_EQ(Wide.elementType(), PT::F64);
  EXPECT_EQ(Wide.getDouble(0), 1000.5);
}

TEST(HloInterpreterWiden, BitcastBetweenTypesIsAnError) {
  auto M = parse(R"(
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  ROOT b = s32[2] bitcast(x)
})");
  ASSERT_TRUE(M);
  EvaluateOptions W;
  W.Widen = true;
  auto R = evaluate(*M->entry(), {lit(PT::F32, {2}, {1, 2})}, W);
  ASSERT_FALSE(bool(R));
  EXPECT_NE(R.error().str().find("not evaluated in f64"), std::string::npos)
      << R.error().str();
  EXPECT_TRUE(bool(evaluate(*M->entry(), {lit(PT::F32, {2}, {1, 2})})));
}

/// The module \p Text's reference for \p Args and its rounding slack
/// (roundingSlack); both empty, with the failure reported, where either
/// cannot be computed.
std::pair<std::vector<Literal>, std::vector<Literal>>
referenceAndSlack(const std::string &Text, const std::vector<Literal> &Args) {
  auto M = parse(Text);
  EXPECT_TRUE(M);
  if (!M)
    return {};
  auto Ref = evaluate(*M->entry(), Args);
  EXPECT_TRUE(bool(Ref));
  if (!Ref)
    return {};
  auto S = roundingSlack(*M->entry(), Args, *Ref);
  EXPECT_TRUE(bool(S)) << (S ? "" : S.error().str());
  if (!S)
    return {};
  return {std::move(*Ref), std::move(*S)};
}

TEST(HloInterpreterWiden, RoundingSlack) {
  auto [Ref, S] = referenceAndSlack(
      R"(
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  a = f32[2] exponential(x)
  b = f32[2] exponential(a)
  s = f32[2] add(x, y)
  i = s32[2] convert(s)
  ROOT t = (f32[2], f32[2], s32[2]) tuple(b, s, i)
})",
      {lit(PT::F32, {2}, {3.7, 1}), lit(PT::F32, {2}, {0, 2})});
  ASSERT_FALSE(S.empty());
  ASSERT_EQ(S.size(), 3u);
  // exp(exp(3.7)) = 3.68e17: 4 u of the inner exponential (40.4) times the
  // outer derivative, both ways, plus twice the f32-f64 difference.
  double B = Ref[0].getDouble(0), SB = S[0].getDouble(0);
  EXPECT_GT(SB, 7e12);
  EXPECT_LT(SB, 9e12);
  EXPECT_LT(SB / B, 3e-5);
  // 1 + 2 is exact: only the perturbation, 2 * 4 u * 3.
  EXPECT_NEAR(S[1].getDouble(1), 2 * 4 * 0x1p-24 * 3, 1e-12);
  // Integer outputs get none.
  EXPECT_EQ(S[2].getDouble(0), 0);
  EXPECT_EQ(S[2].getDouble(1), 0);
}

TEST(HloInterpreterWiden, RoundingSlackOfF64) {
  // f64 is its own widened type: the slack is the perturbed runs' spread
  // alone. exp(exp(3.7)) = 3.68e17: 4 u of the inner exponential (40.4)
  // times the outer derivative plus 4 u of the outer, both ways, about
  // 2 * 4 * 2^-53 * 3.68e17 * 41.4 = 1.35e4, within the rounding of a
  // 4 u change to whole ulps (1.61e4 measured); 1 + 2: 2 * 4 u * 3.
  auto [Ref, S] = referenceAndSlack(
      R"(
HloModule m
ENTRY e {
  x = f64[2] parameter(0)
  y = f64[2] parameter(1)
  a = f64[2] exponential(x)
  b = f64[2] exponential(a)
  s = f64[2] add(x, y)
  ROOT t = (f64[2], f64[2]) tuple(b, s)
})",
      {lit(PT::F64, {2}, {3.7, 1}), lit(PT::F64, {2}, {0, 2})});
  ASSERT_FALSE(S.empty());
  ASSERT_EQ(S.size(), 2u);
  const double B = Ref[0].getDouble(0), SB = S[0].getDouble(0);
  const double Ratio = SB / (2 * 4 * 0x1p-53 * B * 41.4);
  EXPECT_GT(Ratio, 0.75) << SB;
  EXPECT_LT(Ratio, 1.5) << SB;
  EXPECT_NEAR(S[1].getDouble(1), 2 * 4 * 0x1p-53 * 3, 1e-18);
}

TEST(HloInterpreterWiden, SineOfAHugeArgumentIsArbitrary) {
  // sin(exp(exp(x))): at x = 3, exp(exp(3)) = 5.3e8, uncertain by 4 u of
  // it = 126 radians: the slack spans [-1, 1] (2, plus twice the distance
  // to the f64 value). At x = 0.5 (exp(exp(0.5)) = 5.2) it stays small.
  auto [Ref, S] = referenceAndSlack(R"(
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  a = f32[2] exponential(x)
  b = f32[2] exponential(a)
  ROOT s = f32[2] sine(b)
})",
                                    {lit(PT::F32, {2}, {3, 0.5})});
  ASSERT_FALSE(S.empty());
  EXPECT_GE(S[0].getDouble(0), 2);
  EXPECT_LT(S[0].getDouble(1), 1e-5);
}

TEST(HloLiteral, CompareWithRoundingSlack) {
  // The header's example: sin(exp(exp(3))) in f32 (0.9939; -0.6081 in
  // f64, so a slack of at least 2 * 1.602), and a well-conditioned element
  // that is simply wrong.
  Literal E = lit(PT::F32, {2}, {0.9938919544219971, 1.0});
  Literal Wide = lit(PT::F64, {2}, {2 * 1.6020, 0.0});
  Literal A = lit(PT::F32, {2}, {-0.85, 1.0});
  EXPECT_FALSE(compareLiterals(E, A).Match);
  LiteralComparison C = compareLiterals(E, A, std::nullopt, &Wide);
  EXPECT_TRUE(C.Match) << C.Message;
  EXPECT_EQ(C.Sensitive, 1);
  Literal Bad = lit(PT::F32, {2}, {0.9938919544219971, 1.5});
  C = compareLiterals(E, Bad, std::nullopt, &Wide);
  EXPECT_FALSE(C.Match);
  EXPECT_EQ(C.Mismatches, 1);
  EXPECT_EQ(C.Sensitive, 0);
  // Tuples pair element-wise; a sensitivity of other dimensions is ignored.
  Literal TE = Literal::tuple({E});
  Literal TW = Literal::tuple({Wide});
  EXPECT_TRUE(
      compareLiterals(TE, Literal::tuple({A}), std::nullopt, &TW).Match);
  Literal Short = lit(PT::F64, {1}, {3.2});
  EXPECT_FALSE(compareLiterals(E, A, std::nullopt, &Short).Match);
  // Integers stay exact.
  Literal I = ilit(PT::S32, {1}, {5});
  Literal IW = lit(PT::F64, {1}, {9}); // ignored: integers are exact
  EXPECT_FALSE(
      compareLiterals(I, ilit(PT::S32, {1}, {7}), std::nullopt, &IW).Match);
}

} // namespace
