//===- analysis/map/Lexer.h - Tokens of the indexing-map syntax -*- C++ -*-===//
//
// Part of idxmap. A small, allocation-free lexer for the XLA, MLIR and isl
// map syntaxes: tokens are string_views into the caller's buffer. Whitespace
// and
// `//` comments (to the end of the line) are skipped.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_MAP_LEXER_H
#define IDXMAP_ANALYSIS_MAP_LEXER_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace idxmap {

/// Kinds of tokens of the map syntax. Keywords (`in`, `mod`, `domain`, ...)
/// are identifiers; the parser compares their text.
enum class MapTokenKind : uint8_t {
  Eof,
  Error,      ///< A byte that starts no token.
  Identifier, ///< [A-Za-z_][A-Za-z0-9_]*
  Integer,    ///< [0-9]+ (no sign; the parser applies unary minus)
  LParen,
  RParen,
  LSquare,
  RSquare,
  LBrace,
  RBrace,
  Less,
  Greater,
  Comma,
  Colon,
  Arrow, ///< `->`
  Plus,
  Minus,
  Star,
  Equal,        ///< `=` (MLIR alias definitions, isl equalities)
  LessEqual,    ///< `<=` (isl)
  GreaterEqual, ///< `>=` (isl)
  Slash,        ///< `/` (isl's `floor(e/c)`)
  Percent,      ///< `%` (isl's modulo)
  HashIdent,    ///< `#` [A-Za-z0-9_$.]* (an MLIR alias or attribute name)
  String,       ///< `"..."` with `\` escapes, quotes included
};

/// A token: its kind, its text and its byte offset in the buffer.
struct MapToken {
  MapTokenKind Kind = MapTokenKind::Eof;
  std::string_view Text;
  size_t Offset = 0;

  bool is(MapTokenKind K) const { return Kind == K; }
  bool isIdentifier(std::string_view S) const {
    return Kind == MapTokenKind::Identifier && Text == S;
  }
  size_t end() const { return Offset + Text.size(); }
};

/// Splits a buffer into MapTokens on demand.
///
/// Example:
/// \code
///   MapLexer L("(d0) -> (d0 mod 2) // comment");
///   L.next();   // LParen "(" at 0
///   L.next();   // Identifier "d0" at 1
///   // ... RParen, Arrow, LParen, Identifier, Identifier "mod", Integer "2",
///   // RParen, then Eof at 18 (the end of the last token)
/// \endcode
class MapLexer {
public:
  explicit MapLexer(std::string_view Buffer) : Buffer(Buffer) {}

  /// Returns the next token. At the end, returns Eof tokens forever; an Eof
  /// token's offset is the end of the last real token (so that diagnostics
  /// about a missing token point right after the text, not after trailing
  /// comments).
  MapToken next();

  std::string_view buffer() const { return Buffer; }

private:
  void skipWhitespaceAndComments();

  std::string_view Buffer;
  size_t Pos = 0;
  size_t LastEnd = 0;
};

/// The bytes a String token (quotes included) stands for, with MLIR's
/// escapes `\\`, `\"`, `\n`, `\t` and `\XX` (two hex digits) decoded.
/// \p Offsets receives, for each byte of the result and one past its end,
/// the offset in the buffer it came from (the token starts at \p Base).
/// Returns the offset of an invalid escape instead, if there is one.
///
/// Example: `"a\"b"` at offset 10 decodes to `a"b` with offsets
/// {11, 12, 14, 15}.
std::optional<size_t> decodeStringToken(std::string_view Token, size_t Base,
                                        std::string &Out,
                                        std::vector<size_t> &Offsets);

/// Parses the decimal digits of an Integer token; nullopt if the value does
/// not fit in int64. With \p Negate, the negated value is returned, so that
/// `-9223372036854775808` fits.
std::optional<int64_t> parseIntegerToken(std::string_view Digits,
                                         bool Negate = false);

} // namespace idxmap

#endif // IDXMAP_ANALYSIS_MAP_LEXER_H
