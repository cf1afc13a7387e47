//===- MapLayout.cpp - A map's output elements as a grid of cells ---------===//
//
// Part of idxmap. computeMapLayout (idxmap/Layout.h): enumerates a map's
// domain, evaluates each point and records, per output element, how many
// points reach it, the first one's label and its color key. What `idxmap
// draw` pictures.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Layout.h"
#include "idxmap/Print.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

namespace idxmap {

namespace {

Diagnostic layoutError(std::string Message) {
  Diagnostic D;
  D.Loc.File.clear();
  D.Loc.Line = 0;
  D.Loc.Col = 0;
  D.Message = std::move(Message);
  return D;
}

/// The flat index of the variable named \p Name, or -1.
int findVar(const IndexingMap &M, const std::string &Name) {
  for (unsigned I = 0, E = M.numVars(); I < E; ++I)
    if (M.varName(I) == Name)
      return int(I);
  return -1;
}

/// A cell's key: the output tuple reached.
struct TupleHash {
  size_t operator()(const std::vector<int64_t> &V) const {
    size_t H = 0x9e3779b97f4a7c15ull;
    for (int64_t X : V)
      H = (H ^ std::hash<int64_t>()(X)) * 0x100000001b3ull;
    return H;
  }
};

/// a * b, or nullopt past int64.
std::optional<int64_t> mulChecked(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_mul_overflow(A, B, &R))
    return std::nullopt;
  return R;
}

} // namespace

Expected<Layout> computeMapLayout(const IndexingMap &M,
                                  const MapLayoutOptions &Options) {
  if (M.isUndefined())
    return layoutError("cannot draw an UNDEFINED map");
  const unsigned N = M.numVars();

  // Pinned variables and each variable's range of values.
  std::vector<Interval> Range(N);
  for (unsigned I = 0; I < N; ++I)
    Range[I] = M.var(I).Bound;
  std::vector<bool> Pinned(N, false);
  for (const auto &[Name, Value] : Options.Fixed) {
    int V = findVar(M, Name);
    if (V < 0)
      return layoutError("the map has no variable '" + Name + "'");
    if (Pinned[V])
      return layoutError("variable '" + Name + "' is fixed twice");
    if (!Range[V].contains(Value))
      return layoutError("cannot fix " + Name + " = " + std::to_string(Value) +
                         ": its range is " + Range[V].str());
    Pinned[V] = true;
    Range[V] = Interval{Value, Value};
  }
  int64_t Points = M.isKnownEmpty() ? 0 : 1;
  for (unsigned I = 0; I < N && Points > 0; ++I) {
    if (Range[I].isEmpty()) {
      Points = 0;
      break;
    }
    if (Range[I].Lo == Interval::full().Lo ||
        Range[I].Hi == Interval::full().Hi)
      return layoutError("variable '" + M.varName(I) + "' is unbounded (" +
                         Range[I].str() + "); fix it to a value");
    auto Size = mulChecked(Points, Range[I].Hi - Range[I].Lo + 1);
    if (!Size || *Size > Options.MaxPoints)
      return layoutError(
          "the domain has more than " + std::to_string(Options.MaxPoints) +
          " points to enumerate (the budget, --max-points); fix variables "
          "(e.g. a block) or raise the budget");
    Points = *Size;
  }

  // Labels and the color key.
  std::vector<unsigned> LabelVars;
  if (Options.LabelVars.empty()) {
    for (unsigned I = 0; I < M.numDims(); ++I)
      if (!Range[I].isPoint())
        LabelVars.push_back(I);
  } else {
    for (const std::string &Name : Options.LabelVars) {
      int V = findVar(M, Name);
      if (V < 0)
        return layoutError("the map has no variable '" + Name + "' to label");
      LabelVars.push_back(unsigned(V));
    }
  }
  int ThreadVar = findVar(M, "th_x");
  std::string ColorBy = Options.ColorBy;
  if (ColorBy.empty())
    ColorBy = ThreadVar >= 0 ? "warp" : "";
  int ColorVar = -1;
  bool Warp = false;
  std::string ColorName;
  if (ColorBy == "warp" || ColorBy == "thread") {
    ColorVar = ThreadVar >= 0 ? ThreadVar : (M.numDims() ? 0 : -1);
    if (ColorVar < 0)
      return layoutError("the map has no dim to color by " + ColorBy);
    Warp = ColorBy == "warp";
    ColorName = Warp ? M.varName(ColorVar) + " floordiv 32 (warp)"
                     : M.varName(ColorVar);
  } else if (!ColorBy.empty()) {
    ColorVar = findVar(M, ColorBy);
    if (ColorVar < 0)
      return layoutError("the map has no variable '" + ColorBy +
                         "' to color by");
    ColorName = ColorBy;
  } else if (M.numDims()) {
    ColorVar = 0;
    ColorName = M.varName(0);
  }

  // The outputs: [leading..., row, col].
  const unsigned R = M.numResults();
  const unsigned Lead = R > 2 ? R - 2 : 0;
  if (!Options.Panel.empty() && Options.Panel.size() != Lead)
    return layoutError("the panel needs " + std::to_string(Lead) +
                       " values (the outputs before the last two), not " +
                       std::to_string(Options.Panel.size()));
  auto Key = [&](const std::vector<int64_t> &Out) {
    // [leading..., row, col], a 1-D output in row 0, none in cell (0, 0).
    std::vector<int64_t> K(Lead + 2, 0);
    for (unsigned I = 0; I < R; ++I)
      K[I + (R < 2 ? 2 - R : 0)] = Out[I];
    return K;
  };

  // Enumerate: the last variable fastest. Calls Visit(Point, Key) for each
  // point of the domain; stops at the first error.
  std::vector<int64_t> Point(N);
  auto Enumerate = [&](auto Visit) -> std::optional<Diagnostic> {
    for (unsigned I = 0; I < N; ++I)
      Point[I] = Range[I].Lo;
    for (int64_t Count = 0; Count < Points; ++Count) {
      if (Count) {
        for (unsigned I = N; I-- > 0;) {
          if (Point[I] < Range[I].Hi) {
            ++Point[I];
            break;
          }
          Point[I] = Range[I].Lo;
        }
      }
      if (!M.contains(Point))
        continue;
      auto Out = M.evaluate(Point);
      if (!Out)
        return layoutError("the map's evaluation overflows int64 or divides "
                           "by zero at a point of its domain");
      if (auto Err = Visit(Key(*Out)))
        return Err;
    }
    return std::nullopt;
  };

  MapLayoutOptions Opts = Options;
  std::string FitNote;
  if (Opts.FitCells > 0 && !Opts.RowWindow && !Opts.ColWindow) {
    // A first pass for the panels' bounding boxes: when they hold more
    // than FitCells cells, keep the first panel's top-left corner.
    std::map<std::vector<int64_t>, std::array<int64_t, 4>> Boxes;
    auto Err = Enumerate(
        [&](const std::vector<int64_t> &K) -> std::optional<Diagnostic> {
          if (!Opts.Panel.empty() &&
              !std::equal(Opts.Panel.begin(), Opts.Panel.end(), K.begin()))
            return std::nullopt;
          auto [It, New] = Boxes.try_emplace(
              std::vector<int64_t>(K.begin(), K.begin() + Lead),
              std::array<int64_t, 4>{K[Lead], K[Lead], K[Lead + 1],
                                     K[Lead + 1]});
          std::array<int64_t, 4> &B = It->second;
          B = {std::min(B[0], K[Lead]), std::max(B[1], K[Lead]),
               std::min(B[2], K[Lead + 1]), std::max(B[3], K[Lead + 1])};
          if (Boxes.size() > size_t(Opts.MaxCells))
            return layoutError("the drawing has more than " +
                               std::to_string(Opts.MaxCells) +
                               " panels (the budget, --max-cells)");
          return std::nullopt;
        });
    if (Err)
      return *Err;
    double Cells = 0;
    for (const auto &[P, B] : Boxes)
      Cells += double(B[1] - B[0] + 1) * double(B[3] - B[2] + 1);
    if (Cells > double(Opts.FitCells)) {
      const auto &[P, B] = *Boxes.begin();
      const int64_t Cols = std::min(B[3] - B[2] + 1, Opts.FitCells);
      const int64_t Rows = std::min(B[1] - B[0] + 1, Opts.FitCells / Cols);
      Opts.Panel = P;
      Opts.RowWindow = Interval{B[0], B[0] + Rows - 1};
      Opts.ColWindow = Interval{B[2], B[2] + Cols - 1};
      FitNote =
          "the first " + std::to_string(Rows) + " x " + std::to_string(Cols) +
          " cells of a region of " + std::to_string(B[1] - B[0] + 1) + " x " +
          std::to_string(B[3] - B[2] + 1) +
          (Boxes.size() > 1
               ? " in the first of " + std::to_string(Boxes.size()) + " panels"
               : "") +
          " (--rows, --cols and --panel choose others)";
    }
  }

  std::unordered_map<std::vector<int64_t>, LayoutCell, TupleHash> Reached;
  int64_t Clipped = 0, Evaluated = 0;
  auto Err =
      Enumerate([&](std::vector<int64_t> K) -> std::optional<Diagnostic> {
        ++Evaluated;
        if ((!Opts.Panel.empty() &&
             !std::equal(Opts.Panel.begin(), Opts.Panel.end(), K.begin())) ||
            (Opts.RowWindow && !Opts.RowWindow->contains(K[Lead])) ||
            (Opts.ColWindow && !Opts.ColWindow->contains(K[Lead + 1]))) {
          ++Clipped;
          return std::nullopt;
        }
        auto [It, New] = Reached.try_emplace(std::move(K));
        LayoutCell &C = It->second;
        if (++C.Hits > 1)
          return std::nullopt;
        if (Reached.size() > size_t(Opts.MaxCells))
          return layoutError(
              "the drawing has more than " + std::to_string(Opts.MaxCells) +
              " cells (the budget, --max-cells); choose a region "
              "or fix variables, or raise the budget");
        std::string Label;
        for (size_t L = 0; L < LabelVars.size(); ++L) {
          unsigned V = LabelVars[L];
          Label += (L ? "," : "");
          Label +=
              (M.varName(V) == "th_x" ? "T" : "") + std::to_string(Point[V]);
        }
        if (!LabelVars.empty())
          C.Lines.push_back(Label);
        if (ColorVar >= 0)
          C.Color = Warp ? Point[ColorVar] / 32 : Point[ColorVar];
        else
          C.Color = 0;
        return std::nullopt;
      });
  if (Err)
    return *Err;

  // Panels over the leading outputs, each the bounding box of its cells (or
  // the windows).
  struct Box {
    int64_t RowLo = INT64_MAX, RowHi = INT64_MIN, ColLo = INT64_MAX,
            ColHi = INT64_MIN;
  };
  std::map<std::vector<int64_t>, Box> Boxes;
  for (const auto &[K, C] : Reached) {
    Box &B = Boxes[std::vector<int64_t>(K.begin(), K.begin() + Lead)];
    B.RowLo = std::min(B.RowLo, K[Lead]);
    B.RowHi = std::max(B.RowHi, K[Lead]);
    B.ColLo = std::min(B.ColLo, K[Lead + 1]);
    B.ColHi = std::max(B.ColHi, K[Lead + 1]);
  }
  if (Boxes.empty() && !Opts.Panel.empty())
    Boxes[Opts.Panel] = Box{};
  int64_t Cells = 0;
  for (auto &[P, B] : Boxes) {
    if (Opts.RowWindow)
      B.RowLo = Opts.RowWindow->Lo, B.RowHi = Opts.RowWindow->Hi;
    if (Opts.ColWindow)
      B.ColLo = Opts.ColWindow->Lo, B.ColHi = Opts.ColWindow->Hi;
    if (B.RowLo > B.RowHi || B.ColLo > B.ColHi)
      continue;
    auto Size = mulChecked(B.RowHi - B.RowLo + 1, B.ColHi - B.ColLo + 1);
    if (!Size || *Size > Opts.MaxCells - Cells)
      return layoutError("the drawing has more than " +
                         std::to_string(Opts.MaxCells) +
                         " cells (the budget, --max-cells), blank ones "
                         "included; choose a region or fix variables, or "
                         "raise the budget");
    Cells += *Size;
  }

  Layout L;
  L.RowName = R >= 2 ? "r" + std::to_string(R - 2) : "";
  L.ColName = R >= 1 ? "r" + std::to_string(R - 1) : "";
  L.ColorName = ColorName;
  L.Notes.push_back(printMap(M));
  std::string Fixed;
  for (const auto &[Name, Value] : Opts.Fixed)
    Fixed += (Fixed.empty() ? "" : ", ") + Name + " = " + std::to_string(Value);
  std::string LabelNames;
  for (unsigned V : LabelVars)
    LabelNames += (LabelNames.empty() ? "" : ",") + M.varName(V);
  L.Notes.push_back(
      std::to_string(Evaluated) + (Evaluated == 1 ? " point" : " points") +
      (Fixed.empty() ? "" : " with " + Fixed) +
      (Clipped ? ", " + std::to_string(Clipped) + " outside the region drawn"
               : "") +
      "; cells labelled " +
      (LabelNames.empty() ? "by nothing" : "(" + LabelNames + ")") +
      (ColorName.empty() ? "" : ", colored by " + ColorName));
  if (!FitNote.empty())
    L.Notes.push_back("drawn: " + FitNote);
  for (const auto &[P, B] : Boxes) {
    if (B.RowLo > B.RowHi || B.ColLo > B.ColHi)
      continue;
    LayoutPanel Panel;
    for (unsigned I = 0; I < Lead; ++I)
      Panel.Title +=
          (I ? ", r" : "r") + std::to_string(I) + " = " + std::to_string(P[I]);
    Panel.RowOrigin = B.RowLo;
    Panel.ColOrigin = B.ColLo;
    Panel.Rows = B.RowHi - B.RowLo + 1;
    Panel.Cols = B.ColHi - B.ColLo + 1;
    Panel.Cells.resize(size_t(Panel.Rows * Panel.Cols));
    std::vector<int64_t> K = P;
    K.resize(Lead + 2);
    for (int64_t Row = 0; Row < Panel.Rows; ++Row)
      for (int64_t Col = 0; Col < Panel.Cols; ++Col) {
        K[Lead] = B.RowLo + Row;
        K[Lead + 1] = B.ColLo + Col;
        auto It = Reached.find(K);
        if (It != Reached.end())
          Panel.Cells[size_t(Row * Panel.Cols + Col)] = std::move(It->second);
      }
    L.Panels.push_back(std::move(Panel));
  }
  return L;
}

} // namespace idxmap
