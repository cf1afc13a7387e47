//===- analysis/hlo/HloLexer.cpp - Character-level HLO scanner ------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "HloLexer.h"

#include <cctype>
#include <limits>

namespace idxmap {
namespace hlo {

namespace {
// ASCII classes without the C library's locale lookups: the lexer asks
// them of every character of a module.
bool isDigit(char C) { return C >= '0' && C <= '9'; }
bool isAlpha(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z');
}
bool isSpace(char C) {
  return C == ' ' || C == '\n' || C == '\t' || C == '\r' || C == '\v' ||
         C == '\f';
}
bool isNameChar(char C) {
  return isAlpha(C) || isDigit(C) || C == '_' || C == '.' || C == '-';
}
bool isWordStart(char C) { return isAlpha(C) || C == '_'; }
bool isWordChar(char C) { return isAlpha(C) || isDigit(C) || C == '_'; }
} // namespace

std::string printableName(std::string_view Name) {
  if (!Name.empty() && !isWordStart(Name.front()))
    return "%" + std::string(Name);
  return std::string(Name);
}

void HloLexer::skipSpace() {
  while (Pos < Text.size()) {
    char C = Text[Pos];
    if (isSpace(C)) {
      ++Pos;
    } else if (C == '/' && peekRaw(1) == '*') {
      size_t End = Text.find("*/", Pos + 2);
      Pos = End == std::string_view::npos ? Text.size() : End + 2;
    } else if (C == '/' && peekRaw(1) == '/') {
      size_t End = Text.find('\n', Pos);
      Pos = End == std::string_view::npos ? Text.size() : End + 1;
    } else {
      return;
    }
  }
}

std::string_view HloLexer::lexName() {
  skipSpace();
  size_t Start = Pos;
  size_t P = Pos;
  bool Percent = P < Text.size() && Text[P] == '%';
  if (Percent)
    ++P;
  if (P >= Text.size() || !isNameChar(Text[P]) ||
      (!Percent && !isWordStart(Text[P])))
    return {};
  size_t NameStart = P;
  while (P < Text.size() && isNameChar(Text[P]))
    ++P;
  // A name never ends in '-' (that would be the start of `->`).
  while (P > NameStart + 1 && Text[P - 1] == '-')
    --P;
  Pos = P;
  (void)Start;
  return Text.substr(NameStart, P - NameStart);
}

std::string_view HloLexer::lexWord() {
  skipSpace();
  if (Pos >= Text.size() || !isWordStart(Text[Pos]))
    return {};
  size_t Start = Pos;
  while (Pos < Text.size() && isWordChar(Text[Pos]))
    ++Pos;
  return Text.substr(Start, Pos - Start);
}

std::optional<int64_t> HloLexer::lexInt() {
  skipSpace();
  size_t P = Pos;
  bool Negative = false;
  if (P < Text.size() && Text[P] == '-') {
    Negative = true;
    ++P;
  }
  if (P >= Text.size() || !isDigit(Text[P]))
    return std::nullopt;
  uint64_t Value = 0;
  const uint64_t Limit =
      uint64_t(std::numeric_limits<int64_t>::max()) + (Negative ? 1 : 0);
  while (P < Text.size() && isDigit(Text[P])) {
    uint64_t Digit = uint64_t(Text[P] - '0');
    if (Value > (Limit - Digit) / 10)
      return std::nullopt;
    Value = Value * 10 + Digit;
    ++P;
  }
  Pos = P;
  if (Negative)
    return Value == uint64_t(1) << 63 ? std::numeric_limits<int64_t>::min()
                                      : -int64_t(Value);
  return int64_t(Value);
}

std::string_view HloLexer::lexLiteralToken() {
  skipSpace();
  size_t Start = Pos;
  size_t P = Pos;
  if (P < Text.size() && (Text[P] == '-' || Text[P] == '+'))
    ++P;
  while (P < Text.size()) {
    char C = Text[P];
    if (isWordChar(C) || C == '.') {
      ++P;
    } else if ((C == '-' || C == '+') && P > Start &&
               (Text[P - 1] == 'e' || Text[P - 1] == 'E')) {
      ++P; // exponent sign
    } else {
      break;
    }
  }
  // `nan(0x7fc00000)`: a NaN payload.
  if (P < Text.size() && Text[P] == '(' && P >= 3 &&
      Text.substr(P - 3, 3) == "nan") {
    size_t Close = Text.find(')', P);
    if (Close != std::string_view::npos)
      P = Close + 1;
  }
  Pos = P;
  return Text.substr(Start, P - Start);
}

bool HloLexer::skipString() {
  // At an opening quote. The closing quote is the first one after an even
  // run of backslashes (an odd run escapes it); metadata strings are long,
  // so the quotes are found with memchr.
  const size_t Open = Pos++;
  while (true) {
    size_t Quote = Text.find('"', Pos);
    if (Quote == std::string_view::npos) {
      Pos = Text.size();
      return false;
    }
    size_t Run = 0;
    while (Quote - Run > Open + 1 && Text[Quote - Run - 1] == '\\')
      ++Run;
    Pos = Quote + 1;
    if (Run % 2 == 0)
      return true;
  }
}

bool HloLexer::skipBalanced(char Open, char Close) {
  (void)Open;
  int Depth = 0;
  while (Pos < Text.size()) {
    char C = Text[Pos];
    if (C == '"') {
      if (!skipString())
        return false;
      continue;
    }
    if (C == '{' || C == '(' || C == '[')
      ++Depth;
    else if (C == '}' || C == ')' || C == ']')
      --Depth;
    ++Pos;
    if (Depth == 0)
      return C == Close;
  }
  return false;
}

bool HloLexer::skipValue() {
  skipSpace();
  char C = peekRaw();
  if (C == '"')
    return skipString();
  // Bracket groups and bare characters up to a `,`, a space or an
  // unbalanced closing bracket at depth 0: `{...}`, `[2,4]<=[8]`,
  // `b01f_01io->b01f`, `[4]<=[2,2]T(1,0)`.
  if (C != '{' && C != '(' && C != '[') {
    // A bare token must not start with a closer.
    if (C == '}' || C == ')' || C == ']' || C == ',' || C == 0)
      return true;
  }
  int Depth = 0;
  while (Pos < Text.size()) {
    C = Text[Pos];
    if (C == '"') {
      if (!skipString())
        return false;
      continue;
    }
    if (C == '[' || C == '(' || C == '{') {
      ++Depth;
    } else if (C == ']' || C == ')' || C == '}') {
      if (Depth == 0)
        return true;
      --Depth;
    } else if (Depth == 0 && (C == ',' || isSpace(C))) {
      return true;
    }
    ++Pos;
  }
  return Depth == 0;
}

} // namespace hlo
} // namespace idxmap
