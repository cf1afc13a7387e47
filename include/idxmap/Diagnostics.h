//===- idxmap/Diagnostics.h - User-facing errors and Expected ---*- C++ -*-===//
//
// Part of idxmap. Library calls never print: they return Expected<T>, which
// holds either a value or a Diagnostic with a source location.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_DIAGNOSTICS_H
#define IDXMAP_DIAGNOSTICS_H

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace idxmap {

/// A position in a source buffer; lines and columns count from 1.
struct SourceLocation {
  std::string File = "<input>";
  unsigned Line = 1;
  unsigned Col = 1;
};

/// A user error: where, what, and the offending source line.
///
/// Example:
/// \code
///   Diagnostic D{{"m.txt", 1, 12}, "expected ')'", "(d0) -> (d0"};
///   D.str();
///   // m.txt:1:12: error: expected ')'
///   // (d0) -> (d0
///   //            ^
/// \endcode
struct Diagnostic {
  SourceLocation Loc;
  std::string Message;
  /// The full text of the source line (no newline); may be empty.
  std::string SourceLine;

  /// `file:line:col: error: message`, then the source line and a caret. A
  /// source line longer than 240 bytes shows 240 of them around the column,
  /// with `...` where it is cut (the column in the first line stays exact).
  std::string str() const;
};

/// Builds a Diagnostic for byte \p Offset of \p Buffer (computes line, column
/// and source line). \p FirstLine is the line number of the buffer's first
/// line (for `--split-input-file` chunks).
Diagnostic makeDiagnostic(std::string_view Buffer, size_t Offset,
                          std::string Message, std::string File = "<input>",
                          unsigned FirstLine = 1);

/// Either a T or a Diagnostic.
///
/// Example:
/// \code
///   Expected<int> parseSmall(std::string_view S) {
///     if (S.empty()) return Diagnostic{{}, "empty", ""};
///     return 42;
///   }
///   auto R = parseSmall("x");
///   if (!R) std::cerr << R.error().str();
///   else use(*R);
/// \endcode
template <typename T> class Expected {
public:
  Expected(T V) : Storage(std::in_place_index<0>, std::move(V)) {}
  Expected(Diagnostic D) : Storage(std::in_place_index<1>, std::move(D)) {}

  explicit operator bool() const { return Storage.index() == 0; }
  T &operator*() { return std::get<0>(Storage); }
  const T &operator*() const { return std::get<0>(Storage); }
  T *operator->() { return &std::get<0>(Storage); }
  const T *operator->() const { return &std::get<0>(Storage); }
  const Diagnostic &error() const { return std::get<1>(Storage); }

private:
  std::variant<T, Diagnostic> Storage;
};

} // namespace idxmap

#endif // IDXMAP_DIAGNOSTICS_H
