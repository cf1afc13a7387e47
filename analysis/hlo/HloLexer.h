//===- analysis/hlo/HloLexer.h - Character-level HLO scanner ----*- C++ -*-===//
//
// Part of idxmap. Private to analysis/hlo. A cursor over HLO text with the
// token readers the parser needs. HLO is free-form except in two places, which
// the scanner supports with "raw" peeks that do not skip whitespace: a layout
// `{...}` must follow its shape's `]` directly (this tells `f32[] {` of a
// computation signature from `f32[]{}`), and a bare attribute value ends at
// whitespace.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_HLO_HLOLEXER_H
#define IDXMAP_ANALYSIS_HLO_HLOLEXER_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace idxmap {
namespace hlo {

/// \p Name as the printer writes it so that lexName reads it back: bare
/// when it starts like a word (a letter or `_`), else with a `%` (XLA's
/// `%8ayouts`, a name that starts with a digit).
std::string printableName(std::string_view Name);

class HloLexer {
public:
  explicit HloLexer(std::string_view Text) : Text(Text) {}

  size_t pos() const { return Pos; }
  void setPos(size_t P) { Pos = P; }
  std::string_view text() const { return Text; }

  /// Skips whitespace, `/* ... */` and `// ...` comments.
  void skipSpace();
  /// True at the end of the text (after skipping space).
  bool atEnd() {
    skipSpace();
    return Pos >= Text.size();
  }
  /// The next character after skipping space, or 0 at the end.
  char peek() {
    skipSpace();
    return Pos < Text.size() ? Text[Pos] : 0;
  }
  /// The character \p Ahead positions from the cursor, no skipping.
  char peekRaw(size_t Ahead = 0) const {
    return Pos + Ahead < Text.size() ? Text[Pos + Ahead] : 0;
  }
  /// Skips space; consumes \p C if it is next.
  bool consumeIf(char C) {
    if (peek() != C)
      return false;
    ++Pos;
    return true;
  }
  /// Skips space; consumes \p S if it is next.
  bool consumeIf(std::string_view S) {
    skipSpace();
    if (Text.substr(Pos, S.size()) != S)
      return false;
    Pos += S.size();
    return true;
  }

  /// A name: `%`? then `[A-Za-z0-9_.-]+` (without `%`, the first character
  /// must be a letter or `_`). Returns the name without `%`, empty if there
  /// is none (the cursor does not move then).
  std::string_view lexName();
  /// A word `[A-Za-z_][A-Za-z0-9_]*` (attribute keys, enum values), or empty.
  std::string_view lexWord();
  /// A decimal integer with optional `-`; nullopt (cursor unmoved) if there
  /// is none or it overflows int64.
  std::optional<int64_t> lexInt();
  /// A literal element token: `[-+]?[A-Za-z0-9_.]+` with exponent signs
  /// (`1e-05`, `-inf`, `nan`, `true`), plus a `(...)` NaN payload suffix.
  std::string_view lexLiteralToken();
  /// Skips one attribute value: a balanced `{...}`, `(...)` or `[...]`
  /// (strings inside are skipped whole), a quoted string, or a bare token
  /// that ends at whitespace, `,`, or an unbalanced closing bracket. Returns
  /// false on an unterminated bracket or string.
  bool skipValue();
  /// Skips a balanced bracket group starting at the cursor (which must be on
  /// \p Open). Returns false if it is unterminated.
  bool skipBalanced(char Open, char Close);

private:
  bool skipString();

  std::string_view Text;
  size_t Pos = 0;
};

} // namespace hlo
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_HLO_HLOLEXER_H
