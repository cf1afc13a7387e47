//===- analysis/map/Lexer.cpp - Tokens of the indexing-map syntax ---------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "map/Lexer.h"

namespace idxmap {

namespace {
bool isSpace(char C) {
  return C == ' ' || C == '\t' || C == '\n' || C == '\r' || C == '\f' ||
         C == '\v';
}
bool isDigit(char C) { return C >= '0' && C <= '9'; }
bool isIdentStart(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') || C == '_';
}
bool isIdentChar(char C) { return isIdentStart(C) || isDigit(C); }
} // namespace

void MapLexer::skipWhitespaceAndComments() {
  while (Pos < Buffer.size()) {
    char C = Buffer[Pos];
    if (isSpace(C)) {
      ++Pos;
      continue;
    }
    if (C == '/' && Pos + 1 < Buffer.size() && Buffer[Pos + 1] == '/') {
      while (Pos < Buffer.size() && Buffer[Pos] != '\n')
        ++Pos;
      continue;
    }
    return;
  }
}

MapToken MapLexer::next() {
  skipWhitespaceAndComments();
  if (Pos >= Buffer.size())
    return {MapTokenKind::Eof, Buffer.substr(LastEnd, 0), LastEnd};

  size_t Start = Pos;
  char C = Buffer[Pos];
  auto Make = [&](MapTokenKind K, size_t Len) {
    Pos = Start + Len;
    LastEnd = Pos;
    return MapToken{K, Buffer.substr(Start, Len), Start};
  };

  if (isIdentStart(C)) {
    size_t End = Pos + 1;
    while (End < Buffer.size() && isIdentChar(Buffer[End]))
      ++End;
    return Make(MapTokenKind::Identifier, End - Start);
  }
  if (isDigit(C)) {
    size_t End = Pos + 1;
    while (End < Buffer.size() && isDigit(Buffer[End]))
      ++End;
    return Make(MapTokenKind::Integer, End - Start);
  }
  switch (C) {
  case '(':
    return Make(MapTokenKind::LParen, 1);
  case ')':
    return Make(MapTokenKind::RParen, 1);
  case '[':
    return Make(MapTokenKind::LSquare, 1);
  case ']':
    return Make(MapTokenKind::RSquare, 1);
  case '{':
    return Make(MapTokenKind::LBrace, 1);
  case '}':
    return Make(MapTokenKind::RBrace, 1);
  case '<':
    if (Pos + 1 < Buffer.size() && Buffer[Pos + 1] == '=')
      return Make(MapTokenKind::LessEqual, 2);
    return Make(MapTokenKind::Less, 1);
  case '>':
    if (Pos + 1 < Buffer.size() && Buffer[Pos + 1] == '=')
      return Make(MapTokenKind::GreaterEqual, 2);
    return Make(MapTokenKind::Greater, 1);
  case ',':
    return Make(MapTokenKind::Comma, 1);
  case ':':
    return Make(MapTokenKind::Colon, 1);
  case '+':
    return Make(MapTokenKind::Plus, 1);
  case '=':
    return Make(MapTokenKind::Equal, 1);
  case '/':
    return Make(MapTokenKind::Slash, 1);
  case '%':
    return Make(MapTokenKind::Percent, 1);
  case '#': {
    size_t End = Pos + 1;
    while (End < Buffer.size() && (isIdentChar(Buffer[End]) ||
                                   Buffer[End] == '$' || Buffer[End] == '.'))
      ++End;
    return Make(MapTokenKind::HashIdent, End - Start);
  }
  case '"': {
    size_t End = Pos + 1;
    while (End < Buffer.size() && Buffer[End] != '"' && Buffer[End] != '\n')
      End += Buffer[End] == '\\' && End + 1 < Buffer.size() ? 2 : 1;
    if (End >= Buffer.size() || Buffer[End] != '"')
      return Make(MapTokenKind::Error, 1); // Unterminated.
    return Make(MapTokenKind::String, End + 1 - Start);
  }
  case '*':
    return Make(MapTokenKind::Star, 1);
  case '-':
    if (Pos + 1 < Buffer.size() && Buffer[Pos + 1] == '>')
      return Make(MapTokenKind::Arrow, 2);
    return Make(MapTokenKind::Minus, 1);
  default:
    return Make(MapTokenKind::Error, 1);
  }
}

namespace {
int hexValue(char C) {
  if (isDigit(C))
    return C - '0';
  if (C >= 'a' && C <= 'f')
    return C - 'a' + 10;
  if (C >= 'A' && C <= 'F')
    return C - 'A' + 10;
  return -1;
}
} // namespace

std::optional<size_t> decodeStringToken(std::string_view Token, size_t Base,
                                        std::string &Out,
                                        std::vector<size_t> &Offsets) {
  Out.clear();
  Offsets.clear();
  // Without the quotes.
  size_t I = 1, E = Token.size() >= 2 ? Token.size() - 1 : Token.size();
  while (I < E) {
    Offsets.push_back(Base + I);
    char C = Token[I];
    if (C != '\\') {
      Out += C;
      ++I;
      continue;
    }
    char N = I + 1 < E ? Token[I + 1] : 0;
    if (N == '\\' || N == '"') {
      Out += N;
    } else if (N == 'n') {
      Out += '\n';
    } else if (N == 't') {
      Out += '\t';
    } else if (I + 2 < E && hexValue(N) >= 0 && hexValue(Token[I + 2]) >= 0) {
      Out += char(hexValue(N) * 16 + hexValue(Token[I + 2]));
      ++I;
    } else {
      return Base + I;
    }
    I += 2;
  }
  Offsets.push_back(Base + E);
  return std::nullopt;
}

std::optional<int64_t> parseIntegerToken(std::string_view Digits, bool Negate) {
  // Accumulate the magnitude as unsigned; the limit is 2^63 - 1, or 2^63
  // when negated.
  const uint64_t Limit =
      Negate ? uint64_t(1) << 63 : (uint64_t(1) << 63) - uint64_t(1);
  if (Digits.empty())
    return std::nullopt;
  uint64_t Value = 0;
  for (char C : Digits) {
    if (!isDigit(C))
      return std::nullopt;
    uint64_t D = uint64_t(C - '0');
    if (Value > (Limit - D) / 10)
      return std::nullopt;
    Value = Value * 10 + D;
  }
  if (!Negate)
    return int64_t(Value);
  if (Value == uint64_t(1) << 63)
    return INT64_MIN;
  return -int64_t(Value);
}

} // namespace idxmap
