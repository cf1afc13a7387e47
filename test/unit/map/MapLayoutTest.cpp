//===- MapLayoutTest.cpp - computeMapLayout: a map's cells ---------------===//
//
// Part of idxmap. The grid `idxmap draw` pictures for a map: which cells are
// reached, by which point (the label), in which color, and the budgets.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Layout.h"

#include "support/Matchers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace idxmap;
using idxmap::testing::parseOrDie;

namespace {

TEST(MapLayoutTest, TwoDimsWithBlanks) {
  // The header's example: columns d0 * 2, so column 1 is blank.
  Context Ctx;
  IndexingMap M = parseOrDie(
      Ctx, "(d0, d1) -> (d1, d0 * 2), domain: d0 in [0, 1], d1 in [0, 2]");
  Expected<Layout> L = computeMapLayout(M, MapLayoutOptions{});
  ASSERT_TRUE(bool(L)) << L.error().Message;
  ASSERT_EQ(L->Panels.size(), 1u);
  const LayoutPanel &P = L->Panels[0];
  EXPECT_EQ(P.Rows, 3);
  EXPECT_EQ(P.Cols, 3);
  EXPECT_EQ(P.RowOrigin, 0);
  EXPECT_EQ(P.ColOrigin, 0);
  EXPECT_EQ(P.cell(2, 2).Lines, std::vector<std::string>{"1,2"});
  EXPECT_EQ(P.cell(2, 2).Color, 1);
  EXPECT_EQ(P.cell(2, 2).Hits, 1);
  for (int64_t R = 0; R < 3; ++R) {
    EXPECT_EQ(P.cell(R, 1).Hits, 0);
    EXPECT_EQ(P.cell(R, 1).Color, -1);
    EXPECT_TRUE(P.cell(R, 1).Lines.empty());
  }
  EXPECT_EQ(L->ColorName, "d0");
  EXPECT_EQ(L->RowName, "r0");
  EXPECT_EQ(L->ColName, "r1");
}

TEST(MapLayoutTest, ThreadMapColoredByWarp) {
  // A loop emitter's map over f32[4,64]: 64 threads, 2 elements each.
  Context Ctx;
  IndexingMap M = parseOrDie(
      Ctx, "(th_x, bl_x)[vec] -> ((bl_x * 128 + th_x * 2 + vec) floordiv 64, "
           "(th_x * 2 + vec) mod 64), domain: th_x in [0, 63], bl_x in "
           "[0, 1], vec in [0, 1]");
  MapLayoutOptions O;
  O.Fixed = {{"bl_x", 1}};
  Expected<Layout> L = computeMapLayout(M, O);
  ASSERT_TRUE(bool(L)) << L.error().Message;
  const LayoutPanel &P = L->Panels[0];
  EXPECT_EQ(P.RowOrigin, 2); // block 1 covers rows 2 and 3
  EXPECT_EQ(P.Rows, 2);
  EXPECT_EQ(P.Cols, 64);
  EXPECT_EQ(P.cell(0, 5).Lines, std::vector<std::string>{"T2"});
  EXPECT_EQ(P.cell(0, 5).Color, 0);
  EXPECT_EQ(P.cell(1, 0).Lines, std::vector<std::string>{"T32"});
  EXPECT_EQ(P.cell(1, 0).Color, 1); // warp 1
  EXPECT_EQ(L->ColorName, "th_x floordiv 32 (warp)");

  O.ColorBy = "vec";
  O.LabelVars = {"th_x", "vec"};
  L = computeMapLayout(M, O);
  ASSERT_TRUE(bool(L)) << L.error().Message;
  EXPECT_EQ(L->Panels[0].cell(0, 5).Lines, std::vector<std::string>{"T2,1"});
  EXPECT_EQ(L->Panels[0].cell(0, 5).Color, 1);
}

TEST(MapLayoutTest, RepeatedCellsCountHits) {
  // A broadcast: every d1 reaches the same element.
  Context Ctx;
  IndexingMap M =
      parseOrDie(Ctx, "(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 2]");
  Expected<Layout> L = computeMapLayout(M, MapLayoutOptions{});
  ASSERT_TRUE(bool(L)) << L.error().Message;
  const LayoutPanel &P = L->Panels[0];
  EXPECT_EQ(P.Rows, 1);
  EXPECT_EQ(P.Cols, 4);
  EXPECT_EQ(P.cell(0, 3).Hits, 3);
  EXPECT_EQ(P.cell(0, 3).Lines, std::vector<std::string>{"3,0"}); // the first
}

TEST(MapLayoutTest, ConstraintsAndPanels) {
  Context Ctx;
  IndexingMap M = parseOrDie(
      Ctx, "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 2], d1 in [0, 1], "
           "d2 in [0, 1], d0 + d1 in [0, 2]");
  Expected<Layout> L = computeMapLayout(M, MapLayoutOptions{});
  ASSERT_TRUE(bool(L)) << L.error().Message;
  ASSERT_EQ(L->Panels.size(), 3u);
  EXPECT_EQ(L->Panels[2].Title, "r0 = 2");
  EXPECT_EQ(L->Panels[2].Rows, 1); // d1 = 1 is outside the domain there
  MapLayoutOptions O;
  O.Panel = {1};
  L = computeMapLayout(M, O);
  ASSERT_TRUE(bool(L)) << L.error().Message;
  ASSERT_EQ(L->Panels.size(), 1u);
  EXPECT_EQ(L->Panels[0].Title, "r0 = 1");
  EXPECT_EQ(L->Panels[0].cell(1, 1).Lines, std::vector<std::string>{"1,1,1"});
}

TEST(MapLayoutTest, WindowsClipAndKeepBlanks) {
  Context Ctx;
  IndexingMap M = parseOrDie(Ctx, "(d0) -> (d0 * 3), domain: d0 in [0, 99]");
  MapLayoutOptions O;
  O.ColWindow = Interval{0, 9};
  Expected<Layout> L = computeMapLayout(M, O);
  ASSERT_TRUE(bool(L)) << L.error().Message;
  const LayoutPanel &P = L->Panels[0];
  EXPECT_EQ(P.Cols, 10);
  int64_t Reached = 0;
  for (int64_t C = 0; C < 10; ++C)
    Reached += P.cell(0, C).Hits;
  EXPECT_EQ(Reached, 4); // 0, 3, 6, 9
}

TEST(MapLayoutTest, BudgetsAndErrors) {
  Context Ctx;
  IndexingMap M = parseOrDie(
      Ctx, "(d0, d1) -> (d0, d1), domain: d0 in [0, 999], d1 in [0, 999]");
  Expected<Layout> L = computeMapLayout(M, MapLayoutOptions{});
  ASSERT_FALSE(bool(L));
  EXPECT_NE(L.error().Message.find("--max-cells"), std::string::npos);
  MapLayoutOptions O;
  O.MaxPoints = 1000;
  L = computeMapLayout(M, O);
  ASSERT_FALSE(bool(L));
  EXPECT_NE(L.error().Message.find("--max-points"), std::string::npos);
  O = MapLayoutOptions{};
  O.Fixed = {{"d0", 5}};
  L = computeMapLayout(M, O);
  ASSERT_TRUE(bool(L)) << L.error().Message;
  EXPECT_EQ(L->Panels[0].RowOrigin, 5);
  EXPECT_EQ(L->Panels[0].Cols, 1000);
  O.Fixed = {{"d7", 0}};
  EXPECT_FALSE(bool(computeMapLayout(M, O)));
  O.Fixed = {{"d0", 1000}};
  EXPECT_FALSE(bool(computeMapLayout(M, O)));
  O = MapLayoutOptions{};
  O.ColorBy = "nope";
  EXPECT_FALSE(bool(computeMapLayout(M, O)));
  EXPECT_FALSE(
      bool(computeMapLayout(IndexingMap::undefined(), MapLayoutOptions{})));
}

TEST(MapLayoutTest, FitCellsKeepsTheTopLeftCorner) {
  Context Ctx;
  IndexingMap M = parseOrDie(
      Ctx, "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, "
           "99], d2 in [0, 99]");
  MapLayoutOptions O;
  O.FitCells = 1000;
  Expected<Layout> L = computeMapLayout(M, O);
  ASSERT_TRUE(bool(L)) << L.error().Message;
  ASSERT_EQ(L->Panels.size(), 1u);
  EXPECT_EQ(L->Panels[0].Title, "r0 = 0");
  EXPECT_EQ(L->Panels[0].Rows, 10);
  EXPECT_EQ(L->Panels[0].Cols, 100);
  EXPECT_EQ(L->Panels[0].cell(9, 99).Lines, std::vector<std::string>{"0,9,99"});
  EXPECT_NE(L->Notes.back().find("the first 10 x 100 cells of a region of "
                                 "100 x 100 in the first of 2 panels"),
            std::string::npos)
      << L->Notes.back();
  // A drawing within FitCells is left whole.
  O.FitCells = O.MaxCells = 20000;
  L = computeMapLayout(M, O);
  ASSERT_TRUE(bool(L)) << L.error().Message;
  EXPECT_EQ(L->Panels.size(), 2u);
}

TEST(MapLayoutTest, EmptyDomainDrawsNothing) {
  Context Ctx;
  IndexingMap M =
      parseOrDie(Ctx, "(d0) -> (d0), domain: d0 in [0, 3], d0 mod 8 in [5, 6]");
  Expected<Layout> L = computeMapLayout(M, MapLayoutOptions{});
  ASSERT_TRUE(bool(L)) << L.error().Message;
  EXPECT_TRUE(L->Panels.empty());
}

} // namespace
