//===- analysis/map/Diagnostics.cpp - User-facing errors ------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Diagnostics.h"

#include <algorithm>
#include <string_view>

namespace idxmap {

std::string Diagnostic::str() const {
  std::string Out;
  Out.reserve(Loc.File.size() + Message.size() + 2 * SourceLine.size() + 32);
  Out += Loc.File;
  Out += ':';
  Out += std::to_string(Loc.Line);
  Out += ':';
  Out += std::to_string(Loc.Col);
  Out += ": error: ";
  Out += Message;
  if (SourceLine.empty())
    return Out;
  // A long line (a generated map can be megabytes on one line) shows a
  // window around the column, marked with "..." on the cut sides.
  constexpr size_t MaxShown = 240, Before = 100;
  size_t Col0 = Loc.Col ? Loc.Col - 1 : 0;
  size_t Start = 0, End = SourceLine.size();
  if (SourceLine.size() > MaxShown) {
    Start = Col0 > Before ? Col0 - Before : 0;
    Start = std::min(Start,
                     SourceLine.size() - std::min(SourceLine.size(), MaxShown));
    End = std::min(SourceLine.size(), Start + MaxShown);
  }
  std::string_view Shown(SourceLine);
  Shown = Shown.substr(Start, End - Start);
  std::string Lead = Start > 0 ? "..." : "";
  Out += '\n';
  Out += Lead;
  Out += Shown;
  if (End < SourceLine.size())
    Out += "...";
  Out += '\n';
  // Keep tabs so that the caret lines up under the offending byte.
  Out.append(Lead.size(), ' ');
  for (size_t I = Start; I < Col0; ++I)
    Out += (I < SourceLine.size() && SourceLine[I] == '\t') ? '\t' : ' ';
  Out += '^';
  return Out;
}

Diagnostic makeDiagnostic(std::string_view Buffer, size_t Offset,
                          std::string Message, std::string File,
                          unsigned FirstLine) {
  Offset = std::min(Offset, Buffer.size());
  unsigned Line = FirstLine;
  size_t LineStart = 0;
  for (size_t I = 0; I < Offset; ++I) {
    if (Buffer[I] == '\n') {
      ++Line;
      LineStart = I + 1;
    }
  }
  size_t LineEnd = Buffer.find('\n', LineStart);
  if (LineEnd == std::string_view::npos)
    LineEnd = Buffer.size();
  std::string_view Src = Buffer.substr(LineStart, LineEnd - LineStart);
  if (!Src.empty() && Src.back() == '\r')
    Src.remove_suffix(1);

  Diagnostic D;
  D.Loc.File = std::move(File);
  D.Loc.Line = Line;
  D.Loc.Col = unsigned(Offset - LineStart) + 1;
  D.Message = std::move(Message);
  D.SourceLine = std::string(Src);
  return D;
}

} // namespace idxmap
