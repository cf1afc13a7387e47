//===- TileLayoutTest.cpp - A transpose's shared tile ---------------------===//
//
// Part of idxmap. transposeTileOffset and transposeTileAccesses (what `idxmap
// draw` shows of a transpose plan): over the tilings the emitter uses, every
// tile element has one slot, one writer and one reader; the writer's read
// index and the reader's write index (the analysis' ReadIdx and WriteIdx)
// are the same input element; the accesses of a warp instruction hit
// distinct banks where the emitter's comments say so.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Layout.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

using namespace idxmap;

namespace {

struct Case {
  std::vector<int64_t> Dims, Permutation;
  int64_t TileBytes;
  int64_t ReadVec = 0, WriteVec = 0, SubP = 0, SubM = 0;
  /// Whether the emitter's comments promise conflict-free accesses.
  bool ConflictFree = true;
  /// Otherwise, the warp instructions that conflict.
  int64_t WantConflicts = 0;
};

std::vector<int64_t> at(const std::vector<Expr> &Idx, int64_t Th, int64_t It,
                        int64_t J) {
  std::vector<int64_t> Out;
  for (const Expr &E : Idx)
    Out.push_back(E.evaluate({Th, 0}, {It, J}).value_or(-1));
  return Out;
}

void check(const Case &C) {
  Context Ctx;
  TransposeRequest Want;
  Want.ReadVec = C.ReadVec;
  Want.WriteVec = C.WriteVec;
  Want.SubP = C.SubP;
  Want.SubM = C.SubM;
  TransposeTiling T =
      transposeTiling(Ctx, {C.Dims, C.Permutation}, C.TileBytes, Want);
  SCOPED_TRACE("V " + std::to_string(T.V) + " rvec " +
               std::to_string(T.ReadVec) + " wvec " +
               std::to_string(T.WriteVec) + " subs " +
               std::to_string(T.subTiles()));
  const int64_t Tm = 32 * T.V, Subs = T.subTiles();
  auto A = transposeTileAccesses(T);
  std::set<int64_t> Offsets;
  for (int64_t S = 0; S < Subs; ++S)
    for (int64_t R = 0; R < 32; ++R)
      for (int64_t Col = 0; Col < Tm; ++Col) {
        const TileAccess &E = A[S][R][Col];
        ASSERT_GE(E.Writer, 0) << R << "," << Col;
        ASSERT_GE(E.Reader, 0) << R << "," << Col;
        // Block 0's tiles are full: the same input element both ways.
        EXPECT_EQ(at(T.ReadIdx, E.Writer, E.WriterIt, E.WriterJ),
                  at(T.WriteIdx, E.Reader, E.ReaderIt, E.ReaderJ))
            << "sub " << S << " row " << R << " col " << Col;
        int64_t Off = transposeTileOffset(T, R, Col, S);
        EXPECT_GE(Off, 0);
        EXPECT_LT(Off, Subs * 32 * Tm);
        Offsets.insert(Off);
      }
  EXPECT_EQ(int64_t(Offsets.size()), Subs * 32 * Tm); // a bijection
  // Each phase's warp instruction: the elements of one (warp, it, j),
  // grouped into wavefronts of 128 bytes of distinct lanes, hit each bank
  // word at most once (a 4-byte word shared by lanes is a broadcast).
  int64_t Conflicts = 0;
  for (int Phase = 0; Phase < 2; ++Phase) {
    std::map<std::vector<int64_t>, std::map<int64_t, std::set<int64_t>>> Ins;
    for (int64_t S = 0; S < Subs; ++S)
      for (int64_t R = 0; R < 32; ++R)
        for (int64_t Col = 0; Col < Tm; ++Col) {
          const TileAccess &E = A[S][R][Col];
          int64_t Th = Phase ? E.Reader : E.Writer;
          int64_t It = Phase ? E.ReaderIt : E.WriterIt;
          int64_t J = Phase ? E.ReaderJ : E.WriterJ;
          int64_t Word = transposeTileOffset(T, R, Col, S) * C.TileBytes / 4;
          // A lane's vector is one access; the writing phase of vector
          // tiles loads its WriteVec rows one by one.
          bool Scalar = Phase && (T.ReadVec > 1 || T.WriteVec > 1);
          Ins[{Th / 32, It, Scalar ? J : 0}][Word % 32].insert(Word);
        }
    for (const auto &[Key, Banks] : Ins) {
      int64_t Words = 0;
      for (const auto &[Bank, W] : Banks)
        Words = std::max<int64_t>(Words, int64_t(W.size()));
      // Bytes of one instruction / 128: the minimum wavefronts.
      int64_t Bytes = 0;
      for (const auto &[Bank, W] : Banks)
        Bytes += int64_t(W.size()) * 4;
      if (C.ConflictFree)
        EXPECT_LE(Words, (Bytes + 127) / 128)
            << "phase " << Phase << " warp " << Key[0] << " it " << Key[1];
      else
        Conflicts += Words > (Bytes + 127) / 128;
    }
  }
  if (!C.ConflictFree) {
    EXPECT_EQ(Conflicts, C.WantConflicts);
  }
}

TEST(TileLayoutTest, ScalarTilesOf32x64) { check({{8192, 8192}, {1, 0}, 4}); }

TEST(TileLayoutTest, ScalarTilesOf2ByteElements) {
  check({{20, 160, 170}, {2, 1, 0}, 2});
}

TEST(TileLayoutTest, VectorTiles) {
  check({{20, 160, 170}, {2, 1, 0}, 4});
  check({{64, 96}, {1, 0}, 4, 2, 2});
}

TEST(TileLayoutTest, SubTiles) {
  check({{20, 160, 170}, {2, 1, 0}, 4, 0, 0, 2, 2});
  check({{256, 256}, {1, 0}, 4, 1, 1, 1, 2});
}

TEST(TileLayoutTest, ForcedReadVectorsConflictInTheWritingPhase) {
  // ReadVec 2 with scalar writes (only when forced): rows l and l + 16
  // share a swizzle, so the writing phase's loads conflict in pairs (the
  // emitter's comment): the check above sees it. 4 warps x 8 iterations.
  Case C{{64, 96}, {1, 0}, 4, 2, 1};
  C.ConflictFree = false;
  C.WantConflicts = 32;
  check(C);
}

TEST(TileLayoutTest, HeaderExamples) {
  TransposeTiling T;
  T.V = 2;
  EXPECT_EQ(transposeTileOffset(T, 3, 5), 195);
  T.V = 1;
  T.Warps = 4;
  T.Threads = 128;
  T.Iters = 8;
  T.WriteIters = 8;
  Layout L = transposeTileLayout(T, 4);
  ASSERT_EQ(L.Panels.size(), 1u);
  EXPECT_EQ(L.Panels[0].cell(1, 0).Lines,
            (std::vector<std::string>{"b1", "@33", "w T32", "r T1"}));
  EXPECT_EQ(L.Panels[0].cell(1, 0).Color, 1);
  auto A = transposeTileAccesses(T);
  EXPECT_EQ(A[0][5][7].Writer, 39);
  EXPECT_EQ(A[0][5][7].WriterIt, 1);
  EXPECT_EQ(A[0][5][7].Reader, 101);
  EXPECT_EQ(A[0][5][7].ReaderIt, 1);
  EXPECT_EQ(sharedBank(195, 4), 3);
  EXPECT_EQ(sharedBank(195, 2), 1);
  EXPECT_EQ(sharedBank(195, 8), 6);
  L = transposeTileLayout(T, 4, TileColor::Writer);
  EXPECT_EQ(L.Panels[0].cell(1, 0).Color, 1); // warp 1
  L = transposeTileLayout(T, 4, TileColor::Reader);
  EXPECT_EQ(L.Panels[0].cell(1, 0).Color, 0);
}

} // namespace
