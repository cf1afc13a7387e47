//===- test/support/Matchers.h - Text matchers for maps ---------*- C++ -*-===//
//
// Part of idxmap. gtest matchers that compare the printed form of maps and
// expressions with expected text, ignoring all whitespace (as XLA's
// `ApproximateMatch`), and parse helpers that fail the current test with the
// diagnostic.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_SUPPORT_MATCHERS_H
#define IDXMAP_TEST_SUPPORT_MATCHERS_H

#include "idxmap/Context.h"
#include "idxmap/Expr.h"
#include "idxmap/IndexingMap.h"

// gmock for EXPECT_THAT and ::testing::Not; only header parts are used, so
// linking GTest::gtest suffices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace idxmap::testing {

/// \p S without any whitespace.
std::string stripWhitespace(std::string_view S);

/// True if \p A and \p B are equal once all whitespace is removed.
bool equalIgnoringWhitespace(std::string_view A, std::string_view B);

/// Matches an IndexingMap whose printMap() output equals \p Text up to
/// whitespace.
///
/// Example:
/// \code
///   EXPECT_THAT(Map, MatchesMap(R"(
///     (d0) -> (d0 floordiv 4),
///     domain: d0 in [0, 15]
///   )"));
/// \endcode
::testing::Matcher<const IndexingMap &> MatchesMap(std::string Text);

/// Matches an Expr whose printExpr() output equals \p Text up to whitespace.
/// Variable names come from \p Names when given (the map must outlive the
/// matcher), else default `d<i>`/`s<i>`.
///
/// Example: `EXPECT_THAT(Ctx.dim(0) * 4 + 1, MatchesExpr("d0 * 4 + 1"));`
::testing::Matcher<Expr> MatchesExpr(std::string Text,
                                     const IndexingMap *Names = nullptr);

/// Parses \p Text (any input format). On error, adds a test failure showing
/// the diagnostic and returns an UNDEFINED map.
IndexingMap parseOrDie(Context &Ctx, std::string_view Text);

/// Parses an expression over \p Scope's variable names. On error, adds a test
/// failure showing the diagnostic and returns a null Expr.
Expr parseExprOrDie(std::string_view Text, const IndexingMap &Scope);

} // namespace idxmap::testing

#endif // IDXMAP_TEST_SUPPORT_MATCHERS_H
