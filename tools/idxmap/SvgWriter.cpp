//===- SvgWriter.cpp - A Layout as an SVG picture -------------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "SvgWriter.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace idxmap::cli {

std::string xmlEscape(std::string_view Text) {
  std::string Out;
  Out.reserve(Text.size());
  for (char C : Text) {
    switch (C) {
    case '&':
      Out += "&amp;";
      break;
    case '<':
      Out += "&lt;";
      break;
    case '>':
      Out += "&gt;";
      break;
    case '"':
      Out += "&quot;";
      break;
    case '\'':
      Out += "&apos;";
      break;
    default:
      if ((unsigned char)C < 0x20 && C != '\t' && C != '\n')
        Out += '?';
      else
        Out += C;
    }
  }
  return Out;
}

std::string svgColor(int64_t Key) {
  if (Key < 0)
    return "#ffffff";
  int64_t Hue = int64_t(std::fmod(double(Key) * 137.508, 360.0));
  return "hsl(" + std::to_string(Hue) + ",65%,78%)";
}

namespace {

constexpr int CharWidth = 7, LineHeight = 12, Margin = 10, IndexWidth = 44;
constexpr int TextLineHeight = 16;

} // namespace

std::string writeLayoutSvg(const Layout &L) {
  // Cell size: the longest text line and the most lines of any cell.
  size_t MaxChars = 2, MaxLines = 1;
  std::set<int64_t> Keys;
  for (const LayoutPanel &P : L.Panels)
    for (const LayoutCell &C : P.Cells) {
      MaxLines = std::max(MaxLines, C.Lines.size());
      for (const std::string &S : C.Lines)
        MaxChars = std::max(MaxChars, S.size());
      if (C.Hits > 1)
        MaxChars = std::max(
            MaxChars, C.Lines.empty() ? size_t(4) : C.Lines.back().size() + 4);
      if (C.Color >= 0 && C.Hits > 0)
        Keys.insert(C.Color);
    }
  const int CellW = std::max(28, int(MaxChars) * CharWidth + 8);
  const int CellH = std::max(20, int(MaxLines) * LineHeight + 8);

  std::ostringstream Body;
  int Y = Margin;
  int Width = 400;
  auto TextLine = [&](const std::string &Class, const std::string &Text) {
    Y += TextLineHeight;
    Body << "<text class=\"" << Class << "\" x=\"" << Margin << "\" y=\"" << Y
         << "\">" << xmlEscape(Text) << "</text>\n";
    Width = std::max(Width, Margin * 2 + int(Text.size()) * CharWidth);
  };
  if (!L.Title.empty())
    TextLine("title", L.Title);
  for (const std::string &N : L.Notes)
    TextLine("note", N);
  if (L.Panels.empty())
    TextLine("note", "no point of the domain reaches an element");

  for (size_t PI = 0; PI < L.Panels.size(); ++PI) {
    const LayoutPanel &P = L.Panels[PI];
    Y += 8;
    if (!P.Title.empty())
      TextLine("panel-title", P.Title);
    Body << "<g class=\"panel\" id=\"panel-" << PI << "\">\n";
    // Axis names and column indices.
    const int X0 = Margin + IndexWidth;
    Y += TextLineHeight;
    Body << "<text class=\"axis\" x=\"" << Margin << "\" y=\"" << Y << "\">"
         << xmlEscape(L.RowName + (L.RowName.empty() ? "" : " \\ ") + L.ColName)
         << "</text>\n";
    Y += 4;
    for (int64_t C = 0; C < P.Cols; ++C)
      Body << "<text class=\"col-index\" x=\"" << X0 + C * CellW + CellW / 2
           << "\" y=\"" << Y + TextLineHeight - 4
           << "\" text-anchor=\"middle\">" << P.ColOrigin + C << "</text>\n";
    Y += TextLineHeight;
    for (int64_t R = 0; R < P.Rows; ++R) {
      const int RowY = Y + int(R) * CellH;
      Body << "<text class=\"row-index\" x=\"" << X0 - 4 << "\" y=\""
           << RowY + CellH / 2 + 4 << "\" text-anchor=\"end\">"
           << P.RowOrigin + R << "</text>\n";
      for (int64_t C = 0; C < P.Cols; ++C) {
        const LayoutCell &Cell = P.cell(R, C);
        const int X = X0 + int(C) * CellW;
        const bool Blank = Cell.Hits == 0;
        Body << "<rect class=\""
             << (Blank           ? "blank"
                 : Cell.Hits > 1 ? "cell multi"
                                 : "cell")
             << "\" x=\"" << X << "\" y=\"" << RowY << "\" width=\"" << CellW
             << "\" height=\"" << CellH << "\" fill=\""
             << svgColor(Blank ? -1 : Cell.Color) << "\" stroke=\""
             << (Cell.Hits > 1 ? "#d00000\" stroke-width=\"2"
                 : Blank       ? "#cccccc"
                               : "#404040")
             << "\"><title>(" << P.RowOrigin + R << ", " << P.ColOrigin + C
             << ")" << (Blank ? " reached by no point" : "")
             << (Cell.Hits > 1
                     ? " reached " + std::to_string(Cell.Hits) + " times"
                     : "")
             << "</title></rect>\n";
        std::vector<std::string> Lines = Cell.Lines;
        if (Cell.Hits > 1)
          Lines.push_back("x" + std::to_string(Cell.Hits));
        for (size_t K = 0; K < Lines.size(); ++K)
          Body << "<text class=\"cell-label\" x=\"" << X + CellW / 2
               << "\" y=\""
               << RowY + 4 + (CellH - 8 - int(Lines.size()) * LineHeight) / 2 +
                      int(K + 1) * LineHeight - 2
               << "\" text-anchor=\"middle\">" << xmlEscape(Lines[K])
               << "</text>\n";
      }
    }
    Y += int(P.Rows) * CellH;
    Width = std::max(Width, X0 + int(P.Cols) * CellW + Margin);
    Body << "</g>\n";
  }

  // The legend: one swatch per color key drawn (at most 64).
  if (!Keys.empty() && !L.ColorName.empty()) {
    Y += 8;
    TextLine("legend-title", "colors: " + L.ColorName);
    Body << "<g class=\"legend\">\n";
    int X = Margin, N = 0;
    Y += 4;
    for (int64_t K : Keys) {
      if (N++ == 64)
        break;
      std::string Text = std::to_string(K);
      int W = 16 + int(Text.size()) * CharWidth + 10;
      if (X + W > std::max(Width, 400) - Margin) {
        X = Margin;
        Y += 20;
      }
      Body << "<rect class=\"swatch\" x=\"" << X << "\" y=\"" << Y
           << "\" width=\"12\" height=\"12\" fill=\"" << svgColor(K)
           << "\" stroke=\"#404040\"/>\n"
           << "<text class=\"swatch-label\" x=\"" << X + 16 << "\" y=\""
           << Y + 10 << "\">" << Text << "</text>\n";
      X += W;
    }
    Y += 20;
    Body << "</g>\n";
  }
  Y += Margin;

  std::ostringstream OS;
  OS << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Width
     << "\" height=\"" << Y << "\" viewBox=\"0 0 " << Width << " " << Y
     << "\" font-family=\"monospace\" font-size=\"10\">\n"
     << "<title>" << xmlEscape(L.Title.empty() ? "idxmap draw" : L.Title)
     << "</title>\n"
     << "<style>.title{font-size:13px;font-weight:bold}"
        ".note,.panel-title,.legend-title,.axis{font-size:11px}"
        ".col-index,.row-index{fill:#606060}</style>\n"
     << "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" << Width
     << "\" height=\"" << Y << "\" fill=\"#ffffff\"/>\n"
     << Body.str() << "</svg>\n";
  return OS.str();
}

} // namespace idxmap::cli
