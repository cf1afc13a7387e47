//===- ParseTest.cpp - Parsing maps and expressions, diagnostics ----------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Parse.h"
#include "idxmap/Print.h"

#include "support/Matchers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace idxmap;
using idxmap::testing::MatchesExpr;
using idxmap::testing::MatchesMap;
using idxmap::testing::parseExprOrDie;
using idxmap::testing::parseOrDie;

namespace {

constexpr int64_t Int64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t Int64Max = std::numeric_limits<int64_t>::max();

/// The examples of FORMATS.md that must round-trip unchanged.
const char *const FormatsExamples[] = {
    "(d0, d1) -> (d0 mod 2 + d1), domain: d0 in [0, 3], d1 in [-4, 4]",
    "(d0, d1)[s0, s1, s2]{rt0} -> (s2, d0 + d1, s1, s0, rt0), domain: d0 in "
    "[0, 3], d1 in [0, 4], s0 in [0, 1], s1 in [0, 1], s2 in [0, 3], rt0 in "
    "[0, 100], (rt0 + 1) mod 5 in [1, 1], d0 mod 4 in [0, 0], d1 + s0 in [0, "
    "45]",
    "(th_x, bl_x)[s0, vec] -> (bl_x * 512 + th_x * 4 + vec), domain: th_x in "
    "[0, 127], bl_x in [0, 24575], s0 in [0, 0], vec in [0, 3]",
    "(bl_x) -> (bl_x floordiv 100663296), domain: bl_x in [0, 2415919103]",
    "() -> ()",
};

/// More canonical maps (from XLA's tests and this project's docs).
const char *const MoreExamples[] = {
    "()[s0, s1] -> (s0 floordiv s1), domain: s0 in [0, 3], s1 in [0, 4]",
    "(){r0, r1} -> (r0), domain: r0 in [1, 1], r1 in [0, 1]",
    "(th_x, bl_x)[s0, vector_elem, s2]{gpu} -> (s2, th_x * gpu + bl_x, "
    "vector_elem, s0), domain: th_x in [0, 3], bl_x in [0, 4], s0 in [0, 1], "
    "vector_elem in [0, 1], s2 in [0, 3], gpu in [0, 1], (th_x * gpu) mod 4 "
    "in [0, 0], bl_x + s0 in [0, 45]",
    "(d0)[s0] -> ((d0 * 4 + s0) floordiv 2, s0), domain: d0 in [0, 7], s0 in "
    "[0, 1], d0 * 4 + s0 in [0, 31]",
    "(d0, d1) -> (d0 - d1, -d0, d0 - d1 * 3, d0 - 5, -(d0 + d1), d0 * -3), "
    "domain: d0 in [-10, 10], d1 in [-9223372036854775808, "
    "9223372036854775807]",
    "(d0) -> (d0 ceildiv 4, (d0 mod 8) floordiv 2, (d0 floordiv 3) * 5), "
    "domain: d0 in [0, 100]",
    "(d0) -> (), domain: d0 in [0, 3]",
    "() -> (42)",
    "UNDEFINED",
    "KNOWN EMPTY",
};

std::string diagText(std::string_view Input, const ParseOptions &Opts = {}) {
  Context Ctx;
  Expected<IndexingMap> M = parseIndexingMap(Ctx, Input, Opts);
  if (M)
    return "<parsed: " + printMap(*M) + ">";
  return M.error().str();
}

/// The expected diagnostic: location, message, source line and caret.
std::string expectedDiag(unsigned Line, unsigned Col, std::string_view Message,
                         std::string_view Source,
                         std::string_view File = "<input>") {
  std::string S = std::string(File) + ":" + std::to_string(Line) + ":" +
                  std::to_string(Col) + ": error: " + std::string(Message);
  if (!Source.empty())
    S += "\n" + std::string(Source) + "\n" + std::string(Col - 1, ' ') + "^";
  return S;
}

//===----------------------------------------------------------------------===//
// XLA syntax
//===----------------------------------------------------------------------===//

TEST(ParseTest, FormatsExamplesRoundTripExactly) {
  for (const char *Text : FormatsExamples) {
    Context Ctx;
    Expected<IndexingMap> M = parseIndexingMap(Ctx, Text);
    ASSERT_TRUE(M) << M.error().str();
    EXPECT_EQ(printMap(*M), Text);
  }
}

TEST(ParseTest, MoreExamplesRoundTripExactly) {
  for (const char *Text : MoreExamples) {
    Context Ctx;
    Expected<IndexingMap> M = parseIndexingMap(Ctx, Text);
    ASSERT_TRUE(M) << M.error().str();
    EXPECT_EQ(printMap(*M), Text);
  }
}

TEST(ParseTest, StructureOfFullExample) {
  Context Ctx;
  IndexingMap M = parseOrDie(Ctx, FormatsExamples[1]);
  ASSERT_FALSE(M.isUndefined());
  EXPECT_EQ(M.numDims(), 2u);
  EXPECT_EQ(M.numRangeVars(), 3u);
  EXPECT_EQ(M.numRuntimeVars(), 1u);
  EXPECT_FALSE(M.hasCustomNames());
  ASSERT_EQ(M.numResults(), 5u);
  // Symbols are numbered over range vars, then runtime vars.
  EXPECT_EQ(M.result(0), Ctx.symbol(2));
  EXPECT_EQ(M.result(1), Ctx.dim(0) + Ctx.dim(1));
  EXPECT_EQ(M.result(4), Ctx.symbol(3));
  EXPECT_EQ(M.var(1).Bound, Interval(0, 4));
  EXPECT_EQ(M.var(5).Bound, Interval(0, 100));
  ASSERT_EQ(M.constraints().size(), 3u);
  bool Found = false;
  for (const Constraint &C : M.constraints())
    if (C.E == (Ctx.symbol(3) + 1) % 5) {
      Found = true;
      EXPECT_EQ(C.I, Interval(1, 1));
    }
  EXPECT_TRUE(Found);
}

TEST(ParseTest, CustomNames) {
  Context Ctx;
  IndexingMap M = parseOrDie(Ctx, FormatsExamples[2]);
  ASSERT_FALSE(M.isUndefined());
  EXPECT_TRUE(M.hasCustomNames());
  EXPECT_EQ(M.dims()[0].Name, "th_x");
  EXPECT_EQ(M.dims()[1].Name, "bl_x");
  // A default name is stored as the empty name.
  EXPECT_EQ(M.rangeVars()[0].Name, "");
  EXPECT_EQ(M.rangeVars()[1].Name, "vec");
  EXPECT_EQ(M.result(0), Ctx.dim(1) * 512 + Ctx.dim(0) * 4 + Ctx.symbol(1));

  // Names are free: a default-looking name at another position is custom and
  // resolves by declaration.
  IndexingMap Swapped = parseOrDie(
      Ctx, "(d1, d0) -> (d0 * 2 + d1), domain: d1 in [0, 3], d0 in [0, 5]");
  ASSERT_FALSE(Swapped.isUndefined());
  EXPECT_EQ(Swapped.result(0), Ctx.dim(1) * 2 + Ctx.dim(0));
  EXPECT_EQ(Swapped.dims()[0].Name, "d1");
  EXPECT_EQ(Swapped.var(1).Bound, Interval(0, 5));
  EXPECT_THAT(Swapped, MatchesMap("(d1, d0) -> (d0 * 2 + d1), domain: "
                                  "d1 in [0, 3], d0 in [0, 5]"));

  // Runtime vars default to rt<i>, counted from 0 among runtime vars.
  IndexingMap RT = parseOrDie(
      Ctx, "(d0)[s0]{rt0, rt1} -> (rt1), domain: d0 in [0, 1], s0 in [0, 1], "
           "rt0 in [0, 1], rt1 in [0, 7]");
  ASSERT_FALSE(RT.isUndefined());
  EXPECT_FALSE(RT.hasCustomNames());
  EXPECT_EQ(RT.result(0), Ctx.symbol(2));
  // `s1` is not a name of that map.
  Expected<IndexingMap> Bad = parseIndexingMap(
      Ctx, "(d0)[s0]{rt0} -> (s1), domain: d0 in [0, 1], s0 in [0, 1], "
           "rt0 in [0, 1]");
  ASSERT_FALSE(Bad);
  EXPECT_EQ(Bad.error().Message, "unknown identifier 's1'");
}

TEST(ParseTest, ManyVariables) {
  // Past the linear-scan limit, names are looked up through a hash index.
  const unsigned N = 3000;
  std::string Names, Bounds;
  for (unsigned I = 0; I < N; ++I) {
    std::string Name = "v" + std::to_string(I);
    Names += (I ? ", " : "") + Name;
    Bounds += ", " + Name + " in [0, " + std::to_string(I) + "]";
  }
  Context Ctx;
  std::string Text = "(" + Names + ") -> (v2999 + v5 * 2, v40)" +
                     ", domain:" + Bounds.substr(1);
  Expected<IndexingMap> M = parseIndexingMap(Ctx, Text);
  ASSERT_TRUE(M) << M.error().str();
  EXPECT_EQ(M->numDims(), N);
  EXPECT_EQ(M->result(0), Ctx.dim(2999) + Ctx.dim(5) * 2);
  EXPECT_EQ(M->result(1), Ctx.dim(40));
  EXPECT_EQ(M->var(2999).Bound, Interval(0, 2999));
  EXPECT_EQ(printMap(*M), Text);
  Expected<IndexingMap> Dup =
      parseIndexingMap(Ctx, "(" + Names + ", v2500) -> ()");
  ASSERT_FALSE(Dup);
  EXPECT_EQ(Dup.error().Message, "duplicate variable name 'v2500'");
  Expected<Expr> E = parseExpr("v2998 - v33", *M);
  ASSERT_TRUE(E) << E.error().str();
  EXPECT_EQ(*E, Ctx.dim(2998) - Ctx.dim(33));
}

TEST(ParseTest, WhitespaceLineBreaksAndComments) {
  Context Ctx;
  const char *Text = R"(// RUN: idxmap simplify %s | FileCheck %s
  (d0, d1)
     -> (d0   mod 2+d1),   // results
  domain:
    d0 in [0,3],
    d1 in [ -4 , 4 ]
// CHECK: (d0, d1) -> (d0 mod 2 + d1), domain: d0 in [0, 3], d1 in [-4, 4]
)";
  Expected<IndexingMap> M = parseIndexingMap(Ctx, Text);
  ASSERT_TRUE(M) << M.error().str();
  EXPECT_EQ(printMap(*M), FormatsExamples[0]);
  EXPECT_THAT(*M, MatchesMap(R"(
      (d0, d1) -> (d0 mod 2 + d1),
      domain: d0 in [0, 3], d1 in [-4, 4])"));
  EXPECT_THAT(*M, ::testing::Not(MatchesMap("(d0, d1) -> (d0 mod 2 + d1), "
                                            "domain: d0 in [0, 3], d1 in "
                                            "[-4, 5]")));
}

TEST(ParseTest, OperatorPrecedenceAndAssociativity) {
  Context Ctx;
  IndexingMap Scope = parseOrDie(
      Ctx, "(d0, d1, d2) -> (), domain: d0 in [0, 9], d1 in [0, 9], d2 in "
           "[0, 9]");
  ASSERT_FALSE(Scope.isUndefined());
  Expr D0 = Ctx.dim(0), D1 = Ctx.dim(1), D2 = Ctx.dim(2);
  struct Case {
    const char *Text;
    Expr Expected;
    const char *Printed;
  } Cases[] = {
      {"d0 + d1 * 2 mod 3", D0 + (D1 * 2) % 3, "d0 + (d1 * 2) mod 3"},
      {"d0 - d1 - d2", (D0 - D1) - D2, "d0 - d1 - d2"},
      {"d0 - (d1 - d2)", D0 - (D1 - D2), "d0 - (d1 - d2)"},
      {"d0 floordiv 2 floordiv 3", D0.floorDiv(2).floorDiv(3),
       "(d0 floordiv 2) floordiv 3"},
      {"d0 mod 4 * 2", (D0 % 4) * 2, "(d0 mod 4) * 2"},
      {"d0 * (d1 + d2)", D0 * (D1 + D2), "d0 * (d1 + d2)"},
      {"-d0 mod 3", (-D0) % 3, "(-d0) mod 3"},
      {"-(d0 mod 3)", -(D0 % 3), "-(d0 mod 3)"},
      {"- -d0", D0, "d0"},
      {"-(d0 + d1)", -(D0 + D1), "-(d0 + d1)"},
      {"2 * 3 + 4 * d0", D0 * 4 + 6, "d0 * 4 + 6"},
      {"d0 ceildiv 4 + d1 floordiv 2 * 3", D0.ceilDiv(4) + D1.floorDiv(2) * 3,
       "d0 ceildiv 4 + (d1 floordiv 2) * 3"},
      {"((d0))", D0, "d0"},
      {"d0 * d1", D0 * D1, "d0 * d1"},
      {"d0 floordiv d1 mod d2", D0.floorDiv(D1) % D2,
       "(d0 floordiv d1) mod d2"},
      {"-7 floordiv 2", Ctx.constant(-4), "-4"},
      {"-7 mod 3", Ctx.constant(2), "2"},
      {"7 ceildiv -2", Ctx.constant(-3), "-3"},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Text);
    Expected<Expr> E = parseExpr(C.Text, Scope);
    ASSERT_TRUE(E) << E.error().str();
    EXPECT_EQ(*E, C.Expected) << printExpr(*E);
    EXPECT_THAT(*E, MatchesExpr(C.Printed));
  }
}

TEST(ParseTest, NegativeAndExtremeLiterals) {
  Context Ctx;
  IndexingMap Scope = parseOrDie(Ctx, "(d0) -> (), domain: d0 in [0, 9]");
  ASSERT_FALSE(Scope.isUndefined());
  Expr D0 = Ctx.dim(0);
  EXPECT_EQ(parseExprOrDie("d0 * -2", Scope), D0 * -2);
  EXPECT_EQ(parseExprOrDie("d0 + -3", Scope), D0 - 3);
  EXPECT_EQ(parseExprOrDie("-9223372036854775808", Scope),
            Ctx.constant(Int64Min));
  EXPECT_EQ(parseExprOrDie("9223372036854775807", Scope),
            Ctx.constant(Int64Max));
  EXPECT_EQ(parseExprOrDie("- 5", Scope), Ctx.constant(-5));
  EXPECT_EQ(parseExprOrDie("-(5)", Scope), Ctx.constant(-5));
  // Folding that would overflow keeps the node; it still round-trips.
  Expected<Expr> Big = parseExpr("9223372036854775807 + 1", Scope);
  ASSERT_TRUE(Big);
  EXPECT_FALSE(Big->isConstant());
  EXPECT_THAT(*Big, MatchesExpr("9223372036854775807 + 1"));
  Expected<Expr> MinNeg = parseExpr("d0 - -9223372036854775808", Scope);
  ASSERT_TRUE(MinNeg);
  EXPECT_EQ(printExpr(*MinNeg), "d0 - -9223372036854775808");
  EXPECT_EQ(parseExprOrDie(printExpr(*MinNeg), Scope), *MinNeg);
  // Bounds take the full int64 range.
  IndexingMap Full =
      parseOrDie(Ctx, "(d0) -> (d0), domain: d0 in [-9223372036854775808, "
                      "9223372036854775807]");
  ASSERT_FALSE(Full.isUndefined());
  EXPECT_TRUE(Full.var(0).Bound.isFull());
}

TEST(ParseTest, OverflowingFoldsDoNotCrash) {
  Context Ctx;
  IndexingMap Scope = parseOrDie(Ctx, "(d0) -> (), domain: d0 in [0, 9]");
  ASSERT_FALSE(Scope.isUndefined());
  for (const char *Text :
       {"(d0 * -9223372036854775808) floordiv -1",
        "(d0 * -9223372036854775808) ceildiv -1",
        "(d0 * -9223372036854775808) mod -1",
        "-9223372036854775808 floordiv -1", "-9223372036854775808 mod -1",
        "-(-9223372036854775808)", "d0 * 4611686018427387904 * 4",
        "-9223372036854775808 - 1", "d0 floordiv -9223372036854775808"}) {
    SCOPED_TRACE(Text);
    Expected<Expr> E = parseExpr(Text, Scope);
    ASSERT_TRUE(E) << E.error().str();
    std::string Printed = printExpr(*E);
    Expected<Expr> Again = parseExpr(Printed, Scope);
    ASSERT_TRUE(Again) << Printed << "\n" << Again.error().str();
    EXPECT_EQ(printExpr(*Again), Printed);
    for (int64_t V : {0, 1, 9})
      EXPECT_EQ(E->evaluate({V}, {}), Again->evaluate({V}, {})) << Printed;
  }
}

TEST(ParseTest, SemiAffineExpressionsAreKept) {
  Context Ctx;
  IndexingMap M = parseOrDie(Ctx, MoreExamples[0]);
  ASSERT_FALSE(M.isUndefined());
  EXPECT_EQ(M.result(0), Ctx.symbol(0).floorDiv(Ctx.symbol(1)));
  IndexingMap P = parseOrDie(
      Ctx, "(d0, d1) -> (d0 * d1, d0 mod d1, d0 ceildiv d1), domain: d0 in "
           "[0, 3], d1 in [1, 4]");
  ASSERT_FALSE(P.isUndefined());
  EXPECT_EQ(P.result(0).kind(), ExprKind::Mul);
  EXPECT_EQ(P.result(1).kind(), ExprKind::Mod);
  EXPECT_EQ(P.result(2).kind(), ExprKind::CeilDiv);
}

TEST(ParseTest, ConstraintsGoThroughAddConstraint) {
  Context Ctx;
  // A constraint on a bare variable tightens its bound.
  EXPECT_THAT(parseOrDie(Ctx, "(d0) -> (d0), domain: d0 in [0, 10], d0 in "
                              "[2, 5]"),
              MatchesMap("(d0) -> (d0), domain: d0 in [2, 5]"));
  // The same expression twice intersects.
  EXPECT_THAT(parseOrDie(Ctx, "(d0) -> (d0), domain: d0 in [0, 10], d0 mod 4 "
                              "in [0, 2], d0 mod 4 in [1, 3]"),
              MatchesMap("(d0) -> (d0), domain: d0 in [0, 10], d0 mod 4 in "
                         "[1, 2]"));
  // Constants: dropped when they hold, known empty when they do not.
  EXPECT_THAT(parseOrDie(Ctx, "(d0) -> (d0), domain: d0 in [0, 1], 2 + 1 in "
                              "[0, 3]"),
              MatchesMap("(d0) -> (d0), domain: d0 in [0, 1]"));
  EXPECT_THAT(parseOrDie(Ctx, "(d0) -> (d0), domain: d0 in [0, 1], 5 in "
                              "[0, 3]"),
              MatchesMap("KNOWN EMPTY"));
  // Constraints print sorted by text, whatever the input order.
  EXPECT_EQ(printMap(parseOrDie(Ctx, "(d0, d1) -> (d0), domain: d0 in [0, 9], "
                                     "d1 in [0, 9], d1 mod 2 in [0, 0], "
                                     "d0 + d1 in [0, 10], d0 mod 3 in [1, 1]")),
            "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 9], d0 + d1 in "
            "[0, 10], d0 mod 3 in [1, 1], d1 mod 2 in [0, 0]");
}

TEST(ParseTest, EmptyIntervalsMakeTheMapKnownEmpty) {
  Context Ctx;
  Expected<IndexingMap> A =
      parseIndexingMap(Ctx, "(d0) -> (), domain: d0 in [1, 0]");
  ASSERT_TRUE(A) << A.error().str();
  EXPECT_TRUE(A->isKnownEmpty());
  EXPECT_EQ(A->numDims(), 1u);
  EXPECT_EQ(printMap(*A), "KNOWN EMPTY");
  Expected<IndexingMap> B = parseIndexingMap(
      Ctx, "(d0) -> (d0), domain: d0 in [0, 7], d0 mod 2 in [1, 0]");
  ASSERT_TRUE(B) << B.error().str();
  EXPECT_TRUE(B->isKnownEmpty());
  // Errors after an empty interval are still reported.
  Expected<IndexingMap> C = parseIndexingMap(
      Ctx, "(d0) -> (d0), domain: d0 in [3, 0], d1 mod 2 in [0, 0]");
  ASSERT_FALSE(C);
  EXPECT_EQ(C.error().Message, "unknown identifier 'd1'");
}

TEST(ParseTest, SpecialStates) {
  Context Ctx;
  Expected<IndexingMap> U = parseIndexingMap(Ctx, "  UNDEFINED\n");
  ASSERT_TRUE(U);
  EXPECT_TRUE(U->isUndefined());
  Expected<IndexingMap> E = parseIndexingMap(Ctx, "KNOWN\n EMPTY");
  ASSERT_TRUE(E);
  EXPECT_TRUE(E->isKnownEmpty());
  Expected<IndexingMap> Z = parseIndexingMap(Ctx, "() -> ()");
  ASSERT_TRUE(Z);
  EXPECT_FALSE(Z->isUndefined());
  EXPECT_EQ(Z->numVars(), 0u);
  EXPECT_EQ(Z->numResults(), 0u);
  EXPECT_EQ(printMap(IndexingMap()), "UNDEFINED");
}

//===----------------------------------------------------------------------===//
// MLIR syntax
//===----------------------------------------------------------------------===//

TEST(ParseTest, MlirAffineMap) {
  Context Ctx;
  const char *Text = "affine_map<(d0, d1)[s0] -> (d0 + s0, d1 floordiv 4)>";
  for (InputFormat F : {InputFormat::Auto, InputFormat::Mlir}) {
    ParseOptions Opts;
    Opts.Format = F;
    Expected<IndexingMap> M = parseIndexingMap(Ctx, Text, Opts);
    ASSERT_TRUE(M) << M.error().str();
    EXPECT_EQ(M->numDims(), 2u);
    EXPECT_EQ(M->numRangeVars(), 1u);
    EXPECT_EQ(M->numRuntimeVars(), 0u);
    for (unsigned I = 0; I < 3; ++I)
      EXPECT_TRUE(M->var(I).Bound.isFull());
    EXPECT_EQ(M->result(0), Ctx.dim(0) + Ctx.symbol(0));
    EXPECT_EQ(M->result(1), Ctx.dim(1).floorDiv(4));
    EXPECT_EQ(printMapMlir(*M), Text);
    // Printing in XLA syntax lists the full bounds, and reparses.
    std::string Xla = printMap(*M);
    EXPECT_EQ(Xla, "(d0, d1)[s0] -> (d0 + s0, d1 floordiv 4), domain: d0 in "
                   "[-9223372036854775808, 9223372036854775807], d1 in "
                   "[-9223372036854775808, 9223372036854775807], s0 in "
                   "[-9223372036854775808, 9223372036854775807]");
    Expected<IndexingMap> Again = parseIndexingMap(Ctx, Xla);
    ASSERT_TRUE(Again);
    EXPECT_EQ(*Again, *M);
  }
}

TEST(ParseTest, MlirBareFormAndDomain) {
  Context Ctx;
  Expected<IndexingMap> Bare =
      parseIndexingMap(Ctx, "(d0)[s0] -> (d0 * 4 + s0)");
  ASSERT_TRUE(Bare) << Bare.error().str();
  EXPECT_TRUE(Bare->var(0).Bound.isFull());
  EXPECT_TRUE(Bare->var(1).Bound.isFull());
  EXPECT_EQ(printMapMlir(*Bare), "affine_map<(d0)[s0] -> (d0 * 4 + s0)>");

  ParseOptions Mlir;
  Mlir.Format = InputFormat::Mlir;
  Expected<IndexingMap> WithDomain = parseIndexingMap(
      Ctx, "(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 3], s0 in [0, 3]",
      Mlir);
  ASSERT_TRUE(WithDomain) << WithDomain.error().str();
  EXPECT_EQ(WithDomain->var(0).Bound, Interval(0, 3));
  Expected<IndexingMap> AffineWithDomain = parseIndexingMap(
      Ctx, "affine_map<(d0) -> (d0 mod 3)>, domain: d0 in [0, 8], d0 mod 2 "
           "in [0, 0]");
  ASSERT_TRUE(AffineWithDomain) << AffineWithDomain.error().str();
  EXPECT_EQ(printMap(*AffineWithDomain),
            "(d0) -> (d0 mod 3), domain: d0 in [0, 8], d0 mod 2 in [0, 0]");

  // MLIR names are free too.
  Expected<IndexingMap> Named =
      parseIndexingMap(Ctx, "affine_map<(i, j)[N] -> (i * N + j)>");
  ASSERT_TRUE(Named) << Named.error().str();
  EXPECT_EQ(Named->result(0), Ctx.dim(0) * Ctx.symbol(0) + Ctx.dim(1));
  EXPECT_EQ(printMapMlir(*Named), "affine_map<(d0, d1)[s0] -> (d0 * s0 + d1)>");
}

TEST(ParseTest, PrintMapMlirTurnsRuntimeVarsIntoSymbols) {
  Context Ctx;
  IndexingMap M = parseOrDie(Ctx, FormatsExamples[1]);
  EXPECT_EQ(printMapMlir(M), "affine_map<(d0, d1)[s0, s1, s2, s3] -> (s2, d0 "
                             "+ d1, s1, s0, s3)>");
  IndexingMap Named = parseOrDie(Ctx, FormatsExamples[2]);
  EXPECT_EQ(printMapMlir(Named),
            "affine_map<(d0, d1)[s0, s1] -> (d1 * 512 + d0 * 4 + s1)>");
  EXPECT_EQ(printMapMlir(parseOrDie(Ctx, "() -> ()")), "affine_map<() -> ()>");
}

//===----------------------------------------------------------------------===//
// parseExpr
//===----------------------------------------------------------------------===//

TEST(ParseTest, ParseExprResolvesScopeNames) {
  Context Ctx;
  IndexingMap Scope = parseOrDie(Ctx, FormatsExamples[2]);
  Expected<Expr> E = parseExpr("th_x mod 4 + vec * 2", Scope);
  ASSERT_TRUE(E) << E.error().str();
  EXPECT_EQ(*E, Ctx.dim(0) % 4 + Ctx.symbol(1) * 2);
  EXPECT_THAT(*E, MatchesExpr("th_x mod 4 + vec * 2", &Scope));
  EXPECT_THAT(*E, MatchesExpr("d0 mod 4 + s1 * 2"));
  // Default names of variables that have custom names are not in scope.
  Expected<Expr> Bad = parseExpr("d0 + 1", Scope);
  ASSERT_FALSE(Bad);
  EXPECT_EQ(Bad.error().str(),
            expectedDiag(1, 1, "unknown identifier 'd0'", "d0 + 1"));
  Expected<Expr> Trailing = parseExpr("th_x )", Scope);
  ASSERT_FALSE(Trailing);
  EXPECT_EQ(Trailing.error().Message, "unexpected text after the expression");
  EXPECT_FALSE(parseExpr("d0", IndexingMap()));

  IndexingMap RT = parseOrDie(
      Ctx, "(d0)[s0]{rt0} -> (d0), domain: d0 in [0, 1], s0 in [0, 1], rt0 "
           "in [0, 1]");
  EXPECT_EQ(parseExprOrDie("rt0 + s0 + d0", RT),
            Ctx.symbol(1) + Ctx.symbol(0) + Ctx.dim(0));
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

TEST(ParseDiagnosticsTest, HeaderExamples) {
  // The exact text, caret included.
  EXPECT_EQ(diagText("(d0) -> (d1), domain: d0 in [0, 3]"),
            "<input>:1:10: error: unknown identifier 'd1'\n"
            "(d0) -> (d1), domain: d0 in [0, 3]\n"
            "         ^");
  ParseOptions Opts;
  Opts.FileName = "m.txt";
  EXPECT_EQ(diagText("(d0) -> (d0", Opts), "m.txt:1:12: error: expected ')'\n"
                                           "(d0) -> (d0\n"
                                           "           ^");
}

TEST(ParseDiagnosticsTest, EveryKind) {
  struct Case {
    const char *Input;
    InputFormat Format;
    unsigned Col;
    const char *Message;
  } Cases[] = {
      {"(d0) -> (d1), domain: d0 in [0, 3]", InputFormat::Auto, 10,
       "unknown identifier 'd1'"},
      {"(d0) -> (d0", InputFormat::Auto, 12, "expected ')'"},
      {"(d0) -> (d0 + (d0 * 2), domain: d0 in [0, 3]", InputFormat::Auto, 25,
       "expected expression"},
      {"(d0) -> ((d0 * 2, d0), domain: d0 in [0, 3]", InputFormat::Auto, 17,
       "expected ')'"},
      {"(d0, d1) -> (d0), domain: d0 in [0, 3], d2 in [0, 4]",
       InputFormat::Auto, 41, "bound name mismatch: expected 'd1', found 'd2'"},
      {"(d0, d1) -> (d0), domain: d0 in [0, 3], d0 mod 2 in [0, 0]",
       InputFormat::Auto, 41, "bound name mismatch: expected 'd1', found 'd0'"},
      {"(d0, d1) -> (d0), domain: d0 in [0, 3]", InputFormat::Auto, 39,
       "missing bound for 'd1'"},
      {"(d0, d1) -> (d0), domain: d0 in [0, 3], (d1) in [0, 1]",
       InputFormat::Auto, 41, "expected bound for 'd1'"},
      {"(d0) -> (d0), domain: ", InputFormat::Auto, 22,
       "missing bound for 'd0'"},
      {"(d0) -> (d0)", InputFormat::Xla, 13,
       "expected ', domain:' with a bound for every variable"},
      {"(d0) -> (d0) d0 in [0, 1]", InputFormat::Xla, 14,
       "expected ', domain:'"},
      {"(d0) -> (d0), domain: d0 in [0, 1]] ", InputFormat::Auto, 35,
       "unexpected text after the map"},
      {"(d0, d0) -> (d0)", InputFormat::Auto, 6,
       "duplicate variable name 'd0'"},
      {"(d0)[d0] -> (d0)", InputFormat::Auto, 6,
       "duplicate variable name 'd0'"},
      {"(d0, ) -> (d0)", InputFormat::Auto, 6, "expected variable name"},
      {"(d0, mod) -> (d0)", InputFormat::Auto, 6,
       "'mod' is a keyword and cannot name a variable"},
      {"(d0 d1) -> (d0)", InputFormat::Auto, 5, "expected ')'"},
      {"(d0)[s0 -> (d0)", InputFormat::Auto, 9, "expected ']'"},
      {"(d0){rt0 -> (d0)", InputFormat::Auto, 10, "expected '}'"},
      {"(d0) -> (d0 + 9223372036854775808), domain: d0 in [0, 3]",
       InputFormat::Auto, 15, "integer literal out of range"},
      {"(d0) -> (d0 - -9223372036854775809), domain: d0 in [0, 3]",
       InputFormat::Auto, 15, "integer literal out of range"},
      {"(d0) -> (d0), domain: d0 in [0, 99999999999999999999]",
       InputFormat::Auto, 33, "integer literal out of range"},
      {"(d0) -> (d0), domain: d0 in [0, 3], d0 mod 2 in [-9223372036854775809, "
       "0]",
       InputFormat::Auto, 50, "integer literal out of range"},
      {"(d0) -> (d0 # 2), domain: d0 in [0, 3]", InputFormat::Auto, 13,
       "unexpected character '#'"},
      {"(d0) -> (d0 \x01), domain: d0 in [0, 3]", InputFormat::Auto, 13,
       "unexpected byte 0x01"},
      {"(d0) -> (d0 floordiv 0), domain: d0 in [0, 3]", InputFormat::Auto, 22,
       "division by zero"},
      {"(d0) -> (d0 mod (2 - 2)), domain: d0 in [0, 3]", InputFormat::Auto, 17,
       "division by zero"},
      {"(d0) -> (d0 ceildiv (1 - 1)), domain: d0 in [0, 3]", InputFormat::Auto,
       21, "division by zero"},
      {"(d0) -> (d0), domain: d0 [0, 3]", InputFormat::Auto, 26,
       "expected 'in'"},
      {"(d0) -> (d0), domain: d0 in (0, 3)", InputFormat::Auto, 29,
       "expected '['"},
      {"(d0) -> (d0), domain: d0 in [0 3]", InputFormat::Auto, 32,
       "expected ','"},
      {"(d0) -> (d0), domain: d0 in [0, 3)", InputFormat::Auto, 34,
       "expected ']'"},
      {"(d0) -> (d0), domain: d0 in [a, 3]", InputFormat::Auto, 30,
       "expected integer"},
      {"(d0) -> (d0), domain: d0 in [0, 3], d0 mod 2", InputFormat::Auto, 45,
       "expected 'in'"},
      {"(d0) -> (d0), domain d0 in [0, 3]", InputFormat::Auto, 22,
       "expected ':'"},
      {"(d0) -> (d0), dom: d0 in [0, 3]", InputFormat::Auto, 15,
       "expected 'domain'"},
      {"(d0) (d0)", InputFormat::Auto, 6, "expected '->'"},
      {"(d0) -> d0", InputFormat::Auto, 9, "expected '('"},
      {"(d0) -> (d0 +), domain: d0 in [0, 3]", InputFormat::Auto, 14,
       "expected expression"},
      {"(d0) -> (mod), domain: d0 in [0, 3]", InputFormat::Auto, 10,
       "expected expression"},
      {"d0 -> (d0)", InputFormat::Auto, 1,
       "expected '(', 'UNDEFINED' or 'KNOWN EMPTY'"},
      {"", InputFormat::Auto, 1, "expected '(', 'UNDEFINED' or 'KNOWN EMPTY'"},
      {"KNOWN FULL", InputFormat::Auto, 7, "expected 'EMPTY'"},
      {"UNDEFINED UNDEFINED", InputFormat::Auto, 11,
       "unexpected text after the map"},
      {"affine_map<(d0) -> (d0)>", InputFormat::Xla, 1,
       "'affine_map<...>' is MLIR syntax, not accepted with the XLA input "
       "format"},
      {"affine_map(d0) -> (d0)>", InputFormat::Auto, 11, "expected '<'"},
      {"affine_map<(d0) -> (d0)", InputFormat::Auto, 24, "expected '>'"},
      {"affine_map<(d0) -> (d0)> x", InputFormat::Auto, 26,
       "unexpected text after the map"},
      {"(d0){rt0} -> (d0)", InputFormat::Mlir, 5,
       "runtime variables '{...}' are not allowed in MLIR syntax"},
      {"affine_map<(d0){rt0} -> (d0)>", InputFormat::Auto, 16,
       "runtime variables '{...}' are not allowed in MLIR syntax"},
      {"() -> (), domain:", InputFormat::Auto, 18, "expected expression"},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Input);
    ParseOptions Opts;
    Opts.Format = C.Format;
    EXPECT_EQ(diagText(C.Input, Opts),
              expectedDiag(1, C.Col, C.Message, C.Input));
  }
}

TEST(ParseDiagnosticsTest, MultiLineInputWithFileAndFirstLine) {
  ParseOptions Opts;
  Opts.FileName = "golden/simplify.txt";
  Opts.FirstLine = 10;
  const char *Text = "// RUN: idxmap simplify %s\n"
                     "(d0, d1) -> (d0 + d1),\r\n"
                     "domain: d0 in [0, 3],\n"
                     "  d1 in [0, 3], d0 mod 2 in [0, x]\n"
                     "// CHECK: KNOWN EMPTY\n";
  EXPECT_EQ(diagText(Text, Opts),
            "golden/simplify.txt:13:33: error: expected integer\n"
            "  d1 in [0, 3], d0 mod 2 in [0, x]\n"
            "                                ^");
  // A missing token at the end points right after the last token, not
  // after trailing comment lines.
  const char *Truncated = "(d0) -> (d0),\n"
                          "  domain: d0 in [0, 3], d0 mod 2 in\n"
                          "// CHECK: something\n";
  EXPECT_EQ(diagText(Truncated, Opts),
            "golden/simplify.txt:11:36: error: expected '['\n"
            "  domain: d0 in [0, 3], d0 mod 2 in\n"
            "                                   ^");
}

TEST(ParseDiagnosticsTest, CaretKeepsTabs) {
  EXPECT_EQ(diagText("\t(d0) ->\t(d1), domain: d0 in [0, 3]"),
            "<input>:1:11: error: unknown identifier 'd1'\n"
            "\t(d0) ->\t(d1), domain: d0 in [0, 3]\n"
            "\t       \t ^");
}

TEST(ParseDiagnosticsTest, TooDeepInputIsADiagnostic) {
  std::string Deep = "(d0) -> (" + std::string(5000, '(') + "d0" +
                     std::string(5000, ')') + "), domain: d0 in [0, 1]";
  Context Ctx;
  Expected<IndexingMap> M = parseIndexingMap(Ctx, Deep);
  ASSERT_FALSE(M);
  EXPECT_EQ(M.error().Message, "expression is nested too deeply");

  std::string Negations =
      "(d0) -> (" + std::string(5000, '-') + "d0), domain: d0 in [0, 1]";
  M = parseIndexingMap(Ctx, Negations);
  ASSERT_FALSE(M);
  EXPECT_EQ(M.error().Message, "expression is nested too deeply");

  std::string LongSum = "(d0, d1) -> (d0";
  for (int I = 0; I < 3000; ++I)
    LongSum += I % 2 ? " + d0" : " * d1";
  LongSum += "), domain: d0 in [0, 1], d1 in [0, 1]";
  // A flat sum is not nesting: any number of terms parses (the consumers
  // walk sums without recursion).
  M = parseIndexingMap(Ctx, LongSum);
  ASSERT_TRUE(M) << M.error().str();

  // A chain of products is (the consumers recurse on it).
  std::string LongProduct = "(d0, d1) -> (d0";
  for (int I = 0; I < 3000; ++I)
    LongProduct += " * d1";
  LongProduct += "), domain: d0 in [0, 1], d1 in [0, 1]";
  M = parseIndexingMap(Ctx, LongProduct);
  ASSERT_FALSE(M);
  EXPECT_EQ(M.error().Message, "expression is nested too deeply");

  // Moderate depth is fine.
  std::string Ok = "(d0) -> (" + std::string(200, '(') + "d0" +
                   std::string(200, ')') + "), domain: d0 in [0, 1]";
  EXPECT_TRUE(parseIndexingMap(Ctx, Ok));
}

//===----------------------------------------------------------------------===//
// Robustness: random mutations and truncations never crash
//===----------------------------------------------------------------------===//

/// Checks one input: parsing must not crash, a diagnostic must point inside
/// the buffer, and a parsed map must print to a fixed point of parse+print.
void checkNoCrash(Context &Ctx, const std::string &Input, InputFormat F,
                  unsigned &Parsed) {
  ParseOptions Opts;
  Opts.Format = F;
  Expected<IndexingMap> M = parseIndexingMap(Ctx, Input, Opts);
  if (!M) {
    const Diagnostic &D = M.error();
    EXPECT_GE(D.Loc.Line, 1u) << Input;
    EXPECT_GE(D.Loc.Col, 1u) << Input;
    EXPECT_LE(D.SourceLine.size() + 1, Input.size() + 1) << Input;
    EXPECT_FALSE(D.Message.empty()) << Input;
    (void)D.str();
    return;
  }
  ++Parsed;
  std::string Printed = printMap(*M);
  Expected<IndexingMap> Again = parseIndexingMap(Ctx, Printed);
  ASSERT_TRUE(Again) << "input: " << Input << "\nprinted: " << Printed << "\n"
                     << Again.error().str();
  EXPECT_EQ(printMap(*Again), Printed) << "input: " << Input;
  if (!M->isUndefined() && !M->isKnownEmpty()) {
    std::string Mlir = printMapMlir(*M);
    Expected<IndexingMap> FromMlir = parseIndexingMap(Ctx, Mlir);
    ASSERT_TRUE(FromMlir) << Mlir << "\n" << FromMlir.error().str();
    EXPECT_EQ(printMapMlir(*FromMlir), Mlir);
  }
}

TEST(ParseFuzzTest, RandomMutationsAndTruncationsNeverCrash) {
  std::vector<std::string> Seeds;
  for (const char *S : FormatsExamples)
    Seeds.push_back(S);
  for (const char *S : MoreExamples)
    Seeds.push_back(S);
  Seeds.push_back("affine_map<(d0, d1)[s0] -> (d0 + s0, d1 floordiv 4)>");
  Seeds.push_back("(d0)[s0] -> (-(d0 * -9223372036854775808) mod s0)");
  const char *Pieces[] = {
      "(",
      ")",
      "[",
      "]",
      "{",
      "}",
      ",",
      ":",
      "->",
      "-",
      "+",
      "*",
      " mod ",
      " floordiv ",
      " ceildiv ",
      " in ",
      "domain",
      "d0",
      "s0",
      "rt0",
      "x",
      "0",
      "1",
      "-1",
      "9223372036854775807",
      "9223372036854775808",
      "<",
      ">",
      "affine_map",
      "//",
      "\n",
      "UNDEFINED",
      "KNOWN EMPTY",
      "#",
      "\t",
      "-9223372036854775808",
      "()",
      "[1, 0]",
      " 0 ",
  };
  std::mt19937_64 Rng(20240611);
  auto Pick = [&](size_t N) {
    return size_t(std::uniform_int_distribution<size_t>(0, N - 1)(Rng));
  };

  // IDXMAP_PARSE_FUZZ_ITERATIONS overrides the count for longer local runs.
  int Iterations = 20000;
  if (const char *Env = std::getenv("IDXMAP_PARSE_FUZZ_ITERATIONS"))
    Iterations = std::atoi(Env);
  unsigned Parsed = 0, Total = 0;
  Context Ctx;
  for (int It = 0; It < Iterations; ++It) {
    std::string S = Seeds[Pick(Seeds.size())];
    int NumMutations = 1 + int(Pick(3));
    for (int K = 0; K < NumMutations; ++K) {
      size_t Pos = Pick(S.size() + 1);
      switch (Pick(6)) {
      case 0: // Truncate.
        S.resize(Pos);
        break;
      case 1: // Delete a range.
        S.erase(Pos, Pick(8));
        break;
      case 2: // Insert a piece of syntax.
        S.insert(Pos, Pieces[Pick(std::size(Pieces))]);
        break;
      case 3: // Replace a byte by a random byte.
        if (Pos < S.size())
          S[Pos] = char(Pick(256));
        break;
      case 4: { // Duplicate a range.
        size_t Len = Pick(16);
        S.insert(Pos, S.substr(Pos, Len));
        break;
      }
      default: // Swap two bytes.
        if (!S.empty()) {
          size_t Other = Pick(S.size());
          if (Pos < S.size())
            std::swap(S[Pos], S[Other]);
        }
        break;
      }
    }
    for (InputFormat F :
         {InputFormat::Auto, InputFormat::Xla, InputFormat::Mlir}) {
      ++Total;
      checkNoCrash(Ctx, S, F, Parsed);
      if (::testing::Test::HasFatalFailure())
        return;
    }
    // Token soup: random sequences of pieces of syntax.
    std::string Soup;
    for (size_t K = 0, N = 1 + Pick(30); K < N; ++K)
      Soup += Pieces[Pick(std::size(Pieces))];
    ++Total;
    checkNoCrash(Ctx, Soup, InputFormat::Auto, Parsed);
    if (::testing::Test::HasFatalFailure())
      return;
  }
  // The mutations must exercise both outcomes.
  EXPECT_GT(Parsed, Total / 100) << Parsed << " of " << Total;
  EXPECT_LT(Parsed, Total * 9 / 10) << Parsed << " of " << Total;
}

} // namespace
