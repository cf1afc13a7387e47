//===- TileLayout.cpp - A transpose's shared tile, element by element -----===//
//
// Part of idxmap. Where the transpose emitter puts each tile element in
// shared memory, its bank, and which thread stores and loads it
// (idxmap/Layout.h). The arithmetic is the emitter's
// (codegen/emitters/TransposeEmitter.cpp: groupPtr, elemPtr;
// TransposePhases.cpp: readIteration, writeVectorTiles, writeScalarTiles),
// written over integers instead of IR; test/unit/fusion/TileLayoutTest.cpp
// checks that it is a bijection onto the tile and free of bank conflicts
// where the emitter's comments say so.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Layout.h"

#include <algorithm>

namespace idxmap {

namespace {

/// Rows (and groups of columns) of a tile (TransposeKernel.h's Tile).
constexpr int64_t TileSize = 32;

int64_t log2Of(int64_t X) {
  int64_t L = 0;
  while ((int64_t(1) << (L + 1)) <= X)
    ++L;
  return L;
}

bool vectorTile(const TransposeTiling &T) {
  return T.ReadVec > 1 || T.WriteVec > 1;
}

} // namespace

int64_t transposeTileOffset(const TransposeTiling &T, int64_t Row, int64_t Col,
                            int64_t Sub) {
  const int64_t Tm = TileSize * T.V;
  int64_t Off;
  if (!vectorTile(T)) {
    // groupPtr: group slot (Col / V) ^ Row of V elements.
    Off = Row * Tm + ((Col / T.V) ^ Row) * T.V + Col % T.V;
  } else {
    // elemPtr: slots of GS elements, swizzled by Row / WriteVec.
    const int64_t GS = std::max(T.ReadVec, T.WriteVec);
    const int64_t GSLog = log2Of(GS);
    const int64_t Slots = Tm / GS;
    const int64_t Swz = (Row >> log2Of(T.WriteVec)) & (Slots - 1);
    const int64_t Slot = (Col >> GSLog) ^ Swz;
    Off = Row * Tm + ((Slot << GSLog) | (Col & (GS - 1)));
  }
  return Sub * TileSize * Tm + Off;
}

std::vector<std::vector<std::vector<TileAccess>>>
transposeTileAccesses(const TransposeTiling &T) {
  const int64_t Tm = TileSize * T.V, Subs = T.subTiles();
  const std::vector<TileAccess> Row(static_cast<size_t>(Tm));
  const std::vector<std::vector<TileAccess>> Tile(static_cast<size_t>(TileSize),
                                                  Row);
  std::vector<std::vector<std::vector<TileAccess>>> A(static_cast<size_t>(Subs),
                                                      Tile);
  auto At = [&](int64_t Sub, int64_t Row, int64_t Col) -> TileAccess * {
    if (Sub < 0 || Sub >= Subs || Row < 0 || Row >= TileSize || Col < 0 ||
        Col >= Tm)
      return nullptr;
    return &A[size_t(Sub)][size_t(Row)][size_t(Col)];
  };
  const int64_t Rows = T.Warps;
  for (int64_t Th = 0; Th < T.Threads; ++Th) {
    const int64_t Lane = Th % TileSize, Warp = Th / TileSize;
    // The reading phase stores (readIteration).
    for (int64_t It = 0; It < T.Iters * Subs; ++It) {
      const int64_t Sub = It / T.Iters, I = It % T.Iters;
      int64_t Row, Col0, Group;
      if (vectorTile(T)) {
        const int64_t Lanes = TileSize / T.ReadVec;
        Row = Lane / Lanes + Warp * T.ReadVec + I * Rows * T.ReadVec;
        Col0 = (Lane % Lanes) * T.ReadVec;
        Group = T.ReadVec;
      } else {
        Row = Warp + I * Rows;
        Col0 = Lane * T.V;
        Group = T.V;
      }
      for (int64_t J = 0; J < Group; ++J)
        if (TileAccess *E = At(Sub, Row, Col0 + J))
          *E = {Th, It, J, E->Reader, E->ReaderIt, E->ReaderJ};
    }
    // The writing phase loads (writeVectorTiles, writeScalarTiles).
    if (vectorTile(T)) {
      const int64_t Lanes = TileSize / T.WriteVec;
      const int64_t Row0 = (Lane % Lanes) * T.WriteVec;
      const int64_t Col0 = Lane / Lanes + Warp * T.WriteVec;
      for (int64_t It = 0; It < T.WriteIters * Subs; ++It) {
        const int64_t Sub = It / T.WriteIters, I = It % T.WriteIters;
        const int64_t Col = Col0 + I * Rows * T.WriteVec;
        for (int64_t J = 0; J < T.WriteVec; ++J)
          if (TileAccess *E = At(Sub, Row0 + J, Col))
            *E = {E->Writer, E->WriterIt, E->WriterJ, Th, It, J};
      }
    } else {
      for (int64_t It = 0; It < T.Iters * Subs; ++It) {
        const int64_t Sub = It / T.Iters, I = It % T.Iters;
        const int64_t GroupNo = Warp + I * Rows;
        for (int64_t J = 0; J < T.V; ++J)
          if (TileAccess *E = At(Sub, Lane, GroupNo * T.V + J))
            *E = {E->Writer, E->WriterIt, E->WriterJ, Th, It, J};
      }
    }
  }
  return A;
}

Layout transposeTileLayout(const TransposeTiling &T, int64_t ElementBytes,
                           TileColor ColorBy, int64_t Sub) {
  const int64_t Tm = TileSize * T.V, Subs = T.subTiles();
  auto Access = transposeTileAccesses(T);
  Layout L;
  L.Title = "shared tile: " + std::to_string(Subs) + " x (32 x " +
            std::to_string(Tm) + ") elements of " +
            std::to_string(ElementBytes) + " bytes";
  L.RowName = "tile row (P)";
  L.ColName = "tile column (M)";
  L.ColorName = ColorBy == TileColor::Bank     ? "bank"
                : ColorBy == TileColor::Writer ? "writer's warp"
                                               : "reader's warp";
  L.Notes.push_back(
      "tiling: V = " + std::to_string(T.V) + ", " + std::to_string(T.Warps) +
      " warps, ReadVec = " + std::to_string(T.ReadVec) +
      ", WriteVec = " + std::to_string(T.WriteVec) + ", " +
      std::to_string(T.SubP) + " x " + std::to_string(T.SubM) + " sub-tiles");
  L.Notes.push_back(vectorTile(T)
                        ? "layout: slots of max(ReadVec, WriteVec) elements, "
                          "slot (col / slot) ^ ((row / WriteVec) mod slots)"
                        : "layout: groups of V elements, group slot "
                          "(col / V) ^ row");
  L.Notes.push_back("cell: bN = shared-memory bank (4-byte words mod 32), "
                    "@N = element offset in the tile array (the swizzle), "
                    "w TN = thread storing it (reading phase), r TN = "
                    "thread loading it (writing phase)");
  for (int64_t S = 0; S < Subs; ++S) {
    if (Sub >= 0 && S != Sub)
      continue;
    LayoutPanel P;
    P.Title = Subs > 1 || Sub > 0 ? "sub-tile " + std::to_string(S) : "";
    P.Rows = TileSize;
    P.Cols = Tm;
    P.Cells.resize(size_t(P.Rows * P.Cols));
    for (int64_t Row = 0; Row < TileSize; ++Row)
      for (int64_t Col = 0; Col < Tm; ++Col) {
        LayoutCell &C = P.Cells[size_t(Row * Tm + Col)];
        const TileAccess &A = Access[size_t(S)][size_t(Row)][size_t(Col)];
        const int64_t Offset = transposeTileOffset(T, Row, Col, S);
        const int64_t Bank = sharedBank(Offset, ElementBytes);
        C.Hits = A.Writer >= 0 ? 1 : 0;
        C.Lines.push_back("b" + std::to_string(Bank));
        C.Lines.push_back("@" + std::to_string(Offset));
        C.Lines.push_back(A.Writer >= 0 ? "w T" + std::to_string(A.Writer)
                                        : "w -");
        C.Lines.push_back(A.Reader >= 0 ? "r T" + std::to_string(A.Reader)
                                        : "r -");
        switch (ColorBy) {
        case TileColor::Bank:
          C.Color = Bank;
          break;
        case TileColor::Writer:
          C.Color = A.Writer >= 0 ? A.Writer / TileSize : -1;
          break;
        case TileColor::Reader:
          C.Color = A.Reader >= 0 ? A.Reader / TileSize : -1;
          break;
        }
      }
    L.Panels.push_back(std::move(P));
  }
  return L;
}

} // namespace idxmap
