//===- test/support/Matchers.cpp - Text matchers for maps -----------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "support/Matchers.h"

#include "idxmap/Parse.h"
#include "idxmap/Print.h"

#include <cctype>
#include <ostream>
#include <utility>

namespace idxmap::testing {

std::string stripWhitespace(std::string_view S) {
  std::string Out;
  Out.reserve(S.size());
  for (char C : S)
    if (!std::isspace(static_cast<unsigned char>(C)))
      Out += C;
  return Out;
}

bool equalIgnoringWhitespace(std::string_view A, std::string_view B) {
  return stripWhitespace(A) == stripWhitespace(B);
}

namespace {

class MapTextMatcher : public ::testing::MatcherInterface<const IndexingMap &> {
public:
  explicit MapTextMatcher(std::string Text) : Text(std::move(Text)) {}

  bool
  MatchAndExplain(const IndexingMap &Map,
                  ::testing::MatchResultListener *Listener) const override {
    std::string Printed = printMap(Map);
    *Listener << "which prints as \"" << Printed << "\"";
    return equalIgnoringWhitespace(Printed, Text);
  }
  void DescribeTo(std::ostream *OS) const override {
    *OS << "prints as \"" << Text << "\" (ignoring whitespace)";
  }
  void DescribeNegationTo(std::ostream *OS) const override {
    *OS << "does not print as \"" << Text << "\" (ignoring whitespace)";
  }

private:
  std::string Text;
};

class ExprTextMatcher : public ::testing::MatcherInterface<Expr> {
public:
  ExprTextMatcher(std::string Text, const IndexingMap *Names)
      : Text(std::move(Text)), Names(Names) {}

  bool
  MatchAndExplain(Expr E,
                  ::testing::MatchResultListener *Listener) const override {
    std::string Printed = printExpr(E, Names);
    *Listener << "which prints as \"" << Printed << "\"";
    return equalIgnoringWhitespace(Printed, Text);
  }
  void DescribeTo(std::ostream *OS) const override {
    *OS << "prints as \"" << Text << "\" (ignoring whitespace)";
  }
  void DescribeNegationTo(std::ostream *OS) const override {
    *OS << "does not print as \"" << Text << "\" (ignoring whitespace)";
  }

private:
  std::string Text;
  const IndexingMap *Names;
};

} // namespace

::testing::Matcher<const IndexingMap &> MatchesMap(std::string Text) {
  return ::testing::MakeMatcher(new MapTextMatcher(std::move(Text)));
}

::testing::Matcher<Expr> MatchesExpr(std::string Text,
                                     const IndexingMap *Names) {
  return ::testing::MakeMatcher(new ExprTextMatcher(std::move(Text), Names));
}

IndexingMap parseOrDie(Context &Ctx, std::string_view Text) {
  Expected<IndexingMap> M = parseIndexingMap(Ctx, Text);
  if (!M) {
    ADD_FAILURE() << "cannot parse the map:\n" << M.error().str();
    return IndexingMap::undefined();
  }
  return std::move(*M);
}

Expr parseExprOrDie(std::string_view Text, const IndexingMap &Scope) {
  Expected<Expr> E = parseExpr(Text, Scope);
  if (!E) {
    ADD_FAILURE() << "cannot parse the expression:\n" << E.error().str();
    return Expr();
  }
  return *E;
}

} // namespace idxmap::testing
