//===- ParseMlirTest.cpp - MLIR aliases, XLA attributes, isl input --------===//
//
// Part of idxmap. The file-level forms of map input (ParseMlir.cpp,
// ParseIsl.cpp) and the lexer pieces they use.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Parse.h"
#include "idxmap/Print.h"

#include "map/Lexer.h"

#include <gtest/gtest.h>

#include <random>

#include <string>
#include <vector>

using namespace idxmap;

namespace {

std::string parsed(std::string_view Text,
                   InputFormat Format = InputFormat::Auto) {
  Context Ctx;
  ParseOptions O;
  O.Format = Format;
  auto M = parseIndexingMap(Ctx, Text, O);
  return M ? printMap(*M) : "error: " + M.error().str();
}

TEST(MapLexerTest, NewTokens) {
  MapLexer L("#map0 = \"a\\\"b\" <= >= / % #xla.indexing_map");
  MapToken T = L.next();
  EXPECT_EQ(T.Kind, MapTokenKind::HashIdent);
  EXPECT_EQ(T.Text, "#map0");
  EXPECT_EQ(L.next().Kind, MapTokenKind::Equal);
  T = L.next();
  EXPECT_EQ(T.Kind, MapTokenKind::String);
  EXPECT_EQ(T.Text, "\"a\\\"b\"");
  EXPECT_EQ(L.next().Kind, MapTokenKind::LessEqual);
  EXPECT_EQ(L.next().Kind, MapTokenKind::GreaterEqual);
  EXPECT_EQ(L.next().Kind, MapTokenKind::Slash);
  EXPECT_EQ(L.next().Kind, MapTokenKind::Percent);
  EXPECT_EQ(L.next().Text, "#xla.indexing_map");
  EXPECT_EQ(L.next().Kind, MapTokenKind::Eof);
  // An unterminated string is an Error token at its quote.
  MapLexer U("\"abc");
  T = U.next();
  EXPECT_EQ(T.Kind, MapTokenKind::Error);
  EXPECT_EQ(T.Offset, 0u);
}

TEST(MapLexerTest, DecodeString) {
  std::string Out;
  std::vector<size_t> Offsets;
  EXPECT_FALSE(decodeStringToken("\"a\\\"b\"", 10, Out, Offsets));
  EXPECT_EQ(Out, "a\"b");
  EXPECT_EQ(Offsets, (std::vector<size_t>{11, 12, 14, 15}));
  EXPECT_FALSE(decodeStringToken("\"\\n\\t\\\\\\41\"", 0, Out, Offsets));
  EXPECT_EQ(Out, "\n\t\\A");
  auto Bad = decodeStringToken("\"x\\q\"", 0, Out, Offsets);
  ASSERT_TRUE(Bad);
  EXPECT_EQ(*Bad, 2u);
}

TEST(ParseMlirTest, AliasesAndUses) {
  EXPECT_EQ(parsed("#a = affine_map<(d0) -> (d0 * 2)>\n"
                   "#b = affine_map<(d0, d1) -> (d1)>\n#b"),
            "(d0, d1) -> (d1), domain: d0 in [-9223372036854775808, "
            "9223372036854775807], d1 in [-9223372036854775808, "
            "9223372036854775807]");
  EXPECT_EQ(parsed("#a = affine_map<(d0) -> (d0)>\n"
                   "(d0) -> (d0 + 1), domain: d0 in [0, 3]"),
            "(d0) -> (d0 + 1), domain: d0 in [0, 3]");
  EXPECT_EQ(parsed("#a = affine_map<(d0) -> (d0)>\n#b"),
            "error: <input>:2:1: error: undefined alias '#b'\n#b\n^");
  EXPECT_EQ(parsed("#a = affine_map<(d0) -> (d0)>\n#a = affine_map<(d0) -> "
                   "(d0)>\n#a")
                .substr(0, 79),
            "error: <input>:2:1: error: redefinition of alias '#a' (first "
            "defined at line 1)");
  EXPECT_NE(parsed("#a = affine_map<(d0) -> (d0)>\n#a", InputFormat::Xla)
                .find("not accepted with the XLA input format"),
            std::string::npos);
}

TEST(ParseMlirTest, XlaAttribute) {
  EXPECT_EQ(parsed("#xla.indexing_map<\"(d0)[s0] -> (d0 + s0), domain: d0 in "
                   "[0, 10], s0 in [0, 3]\">"),
            "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 10], s0 in [0, 3]");
  EXPECT_EQ(parsed("#xla.indexing_map<\"KNOWN EMPTY\">"), "KNOWN EMPTY");
  // Located in the outer buffer, past the escape.
  EXPECT_EQ(parsed("#xla.indexing_map<\"(d0) ->\\n (d1), domain: d0 in "
                   "[0, 1]\">")
                .substr(0, 51),
            "error: <input>:1:31: error: unknown identifier 'd1'");
}

TEST(ParseIslTest, Forms) {
  EXPECT_EQ(parsed("[s0] -> { [d0, d1] -> [d0 + s0, floor((d1)/4), 2d1 mod 3] "
                   ": 0 <= d0 <= 9 and 0 <= d1 <= 7 and 0 <= s0 < 4 and d1 mod "
                   "4 = 0 }"),
            "(d0, d1)[s0] -> (d0 + s0, d1 floordiv 4, (d1 * 2) mod 3), domain: "
            "d0 in [0, 9], d1 in [0, 7], s0 in [0, 3], d1 mod 4 in [0, 0]");
  EXPECT_EQ(parsed("{ [d0] -> [ceil((d0)/2)] : 0 <= d0 <= 9 and d0 % 3 >= 1 }"),
            "(d0) -> (d0 ceildiv 2), domain: d0 in [0, 9], d0 mod 3 in [1, "
            "9223372036854775807]");
  EXPECT_EQ(parsed("{ [d0] -> [d0] : false }"), "KNOWN EMPTY");
  EXPECT_EQ(
      parsed("[rt0, n] -> { [i] -> [i + rt0 + n] : 0 <= i < n }").substr(0, 42),
      "(i)[n]{rt0} -> (i + rt0 + n), domain: i in");
  EXPECT_NE(
      parsed("{ [d0] -> [o0] : 0 <= d0 <= 9 }").find("unknown identifier 'o0'"),
      std::string::npos);
  EXPECT_NE(parsed("{ [d0] -> [d0] : d0 }").find("expected a comparison"),
            std::string::npos);
  // Only the automatic format recognizes isl text; --input-format=isl reads
  // nothing else.
  EXPECT_NE(parsed("{ [d0] -> [d0] }", InputFormat::Xla).find("expected '('"),
            std::string::npos);
  EXPECT_NE(parsed("(d0) -> (d0), domain: d0 in [0, 1]", InputFormat::Isl)
                .find("expected '{'"),
            std::string::npos);
}

} // namespace

namespace {

TEST(PrintIslTest, ShapesAndRoundTrip) {
  Context Ctx;
  auto M = parseIndexingMap(
      Ctx, "(d0, d1)[s0] -> (d0 + s0, d1 floordiv 4), domain: d0 in [0, 9], "
           "d1 in [0, 7], s0 in [0, 3], d0 + s0 in [0, 10]");
  ASSERT_TRUE(M);
  auto S = printMapIsl(*M);
  ASSERT_TRUE(S);
  EXPECT_EQ(*S, "[s0] -> { [d0, d1] -> [d0 + s0, floor(d1/4)] : 0 <= d0 <= 9 "
                "and 0 <= d1 <= 7 and 0 <= s0 <= 3 and 0 <= d0 + s0 <= 10 }");
  auto Back = parseIndexingMap(Ctx, *S);
  ASSERT_TRUE(Back);
  EXPECT_EQ(printMap(*Back), printMap(*M));

  auto E = parseIndexingMap(Ctx, "KNOWN EMPTY");
  ASSERT_TRUE(E);
  EXPECT_EQ(*printMapIsl(*E), "{ [] -> [] : false }");
  auto U = printMapIsl(IndexingMap::undefined());
  ASSERT_FALSE(U);
  EXPECT_EQ(U.error().Message, "cannot print as isl: the map is UNDEFINED");
  auto P = parseIndexingMap(Ctx, "(d0, d1) -> (d0 * d1), domain: d0 in [0, 3], "
                                 "d1 in [0, 3]");
  ASSERT_TRUE(P);
  EXPECT_FALSE(printMapIsl(*P));
}

} // namespace

namespace {

/// Random mutations of the new forms never crash; whatever parses and has
/// an isl form prints isl text that parses back to a map of the same shape.
TEST(ParseMlirFuzzTest, MutationsNeverCrashAndIslTextParsesBack) {
  const char *Seeds[] = {
      "#a = affine_map<(d0, d1)[s0] -> (d0 + s0, d1 floordiv 4)>\n#a",
      "#a = affine_map<(d0) -> (d0)>\n#b = #a\n#b",
      "#xla.indexing_map<\"(d0)[s0] -> (d0 mod 3 + s0), domain: d0 in [0, "
      "9], s0 in [0, 2], d0 + s0 in [1, 8]\">",
      "#m = #xla.indexing_map<\"(d0) ->\\n (d0 ceildiv 2), domain: d0 in [0, "
      "9]\\22\">\n#m",
      "[s0, rt0] -> { [d0, d1] -> [d0 + s0, floor((d1)/4), 2d1 mod 3] : 0 "
      "<= d0 <= 9 and 0 <= d1 < 8 and s0 >= 0 and rt0 = 2 and d0 <= d1 }",
      "{ [d0] -> [ceil((-1 * d0)/3)] : -4 <= d0 <= 9 and d0 % 2 = 1 }",
  };
  const char *Pieces[] = {"#",
                          "#a",
                          "=",
                          "\"",
                          "\\",
                          "\\n",
                          "<",
                          ">",
                          "<=",
                          ">=",
                          "[",
                          "]",
                          "{",
                          "}",
                          ":",
                          "and",
                          "or",
                          "floor(",
                          "/",
                          "%",
                          " mod ",
                          "d0",
                          "s0",
                          "rt0",
                          "-",
                          "2",
                          "false",
                          "affine_map<",
                          "#xla.indexing_map<"};
  std::mt19937_64 Rng(1919);
  auto Pick = [&](size_t N) {
    return size_t(std::uniform_int_distribution<size_t>(0, N - 1)(Rng));
  };
  unsigned Parsed = 0, Total = 0, RoundTrips = 0;
  for (int It = 0; It < 6000; ++It) {
    std::string S = Seeds[Pick(std::size(Seeds))];
    for (int K = 0, N = int(Pick(3)); K < N; ++K) {
      size_t Pos = Pick(S.size() + 1);
      switch (Pick(3)) {
      case 0:
        S.resize(Pos);
        break;
      case 1:
        S.erase(Pos, Pick(6));
        break;
      default:
        S.insert(Pos, Pieces[Pick(std::size(Pieces))]);
        break;
      }
    }
    Context Ctx;
    ++Total;
    auto M = parseIndexingMap(Ctx, S);
    if (!M) {
      // A located diagnostic, inside the text or just past its end.
      EXPECT_FALSE(M.error().Message.empty()) << S;
      continue;
    }
    ++Parsed;
    auto Isl = printMapIsl(*M);
    if (!Isl)
      continue;
    auto Back = parseIndexingMap(Ctx, *Isl);
    ASSERT_TRUE(Back) << S << "\n" << *Isl << "\n" << Back.error().str();
    if (!M->isKnownEmpty() && !Back->isKnownEmpty()) {
      EXPECT_EQ(Back->numDims(), M->numDims()) << *Isl;
      EXPECT_EQ(Back->numResults(), M->numResults()) << *Isl;
    }
    ++RoundTrips;
  }
  EXPECT_GT(Parsed, Total / 20) << Parsed << " of " << Total;
  EXPECT_GT(RoundTrips, Total / 20) << RoundTrips << " of " << Total;
}

} // namespace
