//===- analysis/hlo/HloParseValues.cpp - HLO shapes and constants --------===//
//
// Part of idxmap. Shapes (arrays, tuples, tokens, bounded dynamic dimensions),
// layouts with their tiling suffixes, and constant values.
//
//===----------------------------------------------------------------------===//
#include "HloParserImpl.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace idxmap {

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

bool HloParserImpl::parseShape(Shape &Out, int TupleDepth) {
  L.skipSpace();
  if (L.peekRaw() == '(') {
    // Shapes are recursive values (printing, comparing, copying them
    // recurses), hence the depth limit.
    if (TupleDepth == HloLimits::MaxTupleDepth)
      return errorHere("tuple shape nested too deeply (limit " +
                       std::to_string(HloLimits::MaxTupleDepth) + ")");
    L.consumeIf('(');
    std::vector<Shape> Elements;
    if (!L.consumeIf(')')) {
      while (true) {
        Shape E;
        if (!parseShape(E, TupleDepth + 1))
          return false;
        Elements.push_back(std::move(E));
        if (L.consumeIf(')'))
          break;
        if (!expect(','))
          return false;
      }
    }
    Out = Shape::tuple(std::move(Elements));
    return true;
  }
  size_t Start = L.pos();
  std::string_view TypeName = L.lexWord();
  if (TypeName.empty())
    return errorHere("expected a shape");
  std::optional<PrimitiveType> T = parsePrimitiveType(TypeName);
  if (!T)
    return error(Start, "unsupported element type " + quote(TypeName));
  Out = Shape(*T, {});
  if (!expect('['))
    return false;
  if (*T == PrimitiveType::Token) {
    if (!expect(']'))
      return false;
    if (L.peekRaw() == '{' && L.text().substr(L.pos(), 2) == "{}")
      L.setPos(L.pos() + 2); // token[]{}: an empty layout
    return true;
  }
  if (!L.consumeIf(']')) {
    Out.Dims.reserve(4); // most shapes: one allocation
    while (true) {
      L.skipSpace();
      if (L.peekRaw() == '?')
        return errorHere("unbounded dynamic dimensions are not supported");
      L.consumeIf("<="); // a bounded dynamic dimension: use its bound
      size_t DimOffset = (L.skipSpace(), L.pos());
      int64_t D;
      if (!parseInt(D, "a dimension size"))
        return false;
      if (D < 0)
        return error(DimOffset, "negative dimension size");
      if (Out.rank() == HloLimits::MaxRank)
        return error(DimOffset, "shape has too many dimensions (limit " +
                                    std::to_string(HloLimits::MaxRank) + ")");
      Out.Dims.push_back(D);
      if (L.consumeIf(']'))
        break;
      if (!expect(','))
        return false;
    }
  }
  // Element counts must stay addressable.
  int64_t Count = 1;
  for (int64_t D : Out.Dims) {
    if (D != 0 && Count > std::numeric_limits<int64_t>::max() / 8 / D)
      return error(Start, "shape " + Out.str() + " has too many elements");
    Count *= D;
  }
  // A layout may follow after spaces (`f32[3,4] {1,0}`), but `-> f32[] {`
  // opens a computation's body: a layout's brace is followed by a
  // dimension number, `:` or `}` on the same line.
  size_t After = L.pos();
  while (After < Text.size() && (Text[After] == ' ' || Text[After] == '\t'))
    ++After;
  if (After < Text.size() && Text[After] == '{') {
    size_t Inner = After + 1;
    while (Inner < Text.size() && (Text[Inner] == ' ' || Text[Inner] == '\t'))
      ++Inner;
    char C = Inner < Text.size() ? Text[Inner] : 0;
    if ((C >= '0' && C <= '9') || C == ':' || (C == '}' && After == L.pos())) {
      L.setPos(After);
      return parseLayout(Out);
    }
  }
  return true;
}

bool HloParserImpl::parseLayout(Shape &S) {
  size_t Start = L.pos();
  L.consumeIf('{');
  std::vector<int64_t> MinorToMajor;
  MinorToMajor.reserve(S.Dims.size());
  L.skipSpace();
  if (L.peekRaw() != '}' && L.peekRaw() != ':') {
    while (true) {
      int64_t D;
      if (!parseInt(D, "a layout dimension"))
        return false;
      MinorToMajor.push_back(D);
      if (!L.consumeIf(','))
        break;
    }
  }
  size_t SuffixStart = 0;
  if (L.consumeIf(':')) {
    // Tiling, memory space, element size...: kept as text up to the
    // closing brace.
    SuffixStart = L.pos();
    int Depth = 1;
    while (L.pos() < Text.size()) {
      char C = Text[L.pos()];
      if (C == '{' || C == '(')
        ++Depth;
      if (C == '}' || C == ')')
        --Depth;
      if (Depth == 0)
        break;
      L.setPos(L.pos() + 1);
    }
  }
  if (SuffixStart) {
    std::string_view Suffix = Text.substr(SuffixStart, L.pos() - SuffixStart);
    while (!Suffix.empty() &&
           std::isspace(static_cast<unsigned char>(Suffix.back())))
      Suffix.remove_suffix(1);
    S.LayoutSuffix = std::string(Suffix);
  }
  if (!expect('}'))
    return false;
  if (!MinorToMajor.empty()) {
    std::vector<bool> Seen(S.Dims.size(), false);
    bool Valid = MinorToMajor.size() == S.Dims.size();
    for (int64_t D : MinorToMajor) {
      if (!Valid || D < 0 || D >= S.rank() || Seen[size_t(D)]) {
        Valid = false;
        break;
      }
      Seen[size_t(D)] = true;
    }
    if (!Valid)
      return error(Start, "layout is not a permutation of the dimensions of " +
                              S.str());
  }
  S.MinorToMajor = std::move(MinorToMajor);
  return true;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

bool HloParserImpl::parseConstantText(HloInstruction &I) {
  // The value of a constant the interpreter does not model (a tuple, c64,
  // f8...): kept as written, up to the `)` that closes `constant(`.
  size_t Start = (L.skipSpace(), L.pos());
  int Depth = 0;
  size_t P = Start;
  for (; P < Text.size(); ++P) {
    char C = Text[P];
    if (C == '"') {
      L.setPos(P);
      if (!L.skipValue())
        return error(P, "unterminated string in a constant");
      P = L.pos() - 1;
      continue;
    }
    if (C == '(' || C == '{' || C == '[')
      ++Depth;
    else if (C == ')' || C == '}' || C == ']') {
      if (Depth == 0)
        break;
      --Depth;
    }
  }
  if (P >= Text.size() || Text[P] != ')')
    return error(Start, "unterminated constant value");
  std::string_view V = Text.substr(Start, P - Start);
  while (!V.empty() && std::isspace(static_cast<unsigned char>(V.back())))
    V.remove_suffix(1);
  if (V.empty())
    return error(Start, "expected a constant value");
  I.ValueText = std::string(V);
  I.Elided = true;
  L.setPos(P);
  return true;
}

bool HloParserImpl::parseConstantValue(HloInstruction &I) {
  int64_t Bytes = I.Sh.byteSize();
  if (Bytes > HloLimits::MaxConstantBytes - ConstantBytes)
    return error(Info[&I].OpcodeOffset,
                 "constants too large: " + std::to_string(ConstantBytes) +
                     " + " + std::to_string(Bytes) + " bytes (limit " +
                     std::to_string(HloLimits::MaxConstantBytes) + ")");
  if (!I.Sh.isArray() || !isComputeType(I.Sh.Type)) {
    ConstantBytes += Bytes;
    return parseConstantText(I);
  }
  // parseShape keeps element counts below INT64_MAX / 8: no overflow here.
  Bytes = I.Sh.numElements() * byteWidth(I.Sh.Type);
  if (Bytes > HloLimits::MaxConstantBytes - ConstantBytes)
    return error(Info[&I].OpcodeOffset,
                 "constants too large: " + std::to_string(ConstantBytes) +
                     " + " + std::to_string(Bytes) + " bytes (limit " +
                     std::to_string(HloLimits::MaxConstantBytes) + ")");
  ConstantBytes += Bytes;
  I.Value = Literal(Shape(I.Sh.Type, I.Sh.Dims));
  L.skipSpace();
  // `{...}`: a large constant printed without its value.
  if (L.text().substr(L.pos(), 5) == "{...}") {
    L.setPos(L.pos() + 5);
    I.Elided = true;
    return true;
  }
  if (I.Sh.rank() == 0) {
    // Allow `{5}` as well as `5` for a scalar.
    bool Braced = L.consumeIf('{');
    if (!parseLiteralElement(I.Value, 0))
      return false;
    return !Braced || expect('}');
  }
  if (L.peekRaw() != '{') {
    // XLA's shorthand for an array of one value: `f32[3,4] constant(1)`
    // (read into a scalar: the array may have no elements).
    Literal One(Shape(I.Sh.Type, {}));
    if (!parseLiteralElement(One, 0))
      return false;
    uint64_t Bits = One.getBits(0);
    for (int64_t K = 0, N = I.Value.elementCount(); K < N; ++K)
      I.Value.setBits(K, Bits);
    return true;
  }
  int64_t Next = 0;
  return parseLiteralNested(I.Sh, I.Value, 0, Next);
}

bool HloParserImpl::parseLiteralNested(const Shape &S, Literal &Lit, size_t Dim,
                                       int64_t &Next) {
  size_t Open = (L.skipSpace(), L.pos());
  if (!expect('{'))
    return false;
  int64_t Want = S.Dims[Dim];
  int64_t Count = 0;
  if (!L.consumeIf('}')) {
    while (true) {
      if (Count == Want)
        return errorHere("too many elements in dimension " +
                         std::to_string(Dim) + " of a " + S.str() +
                         " constant (expected " + std::to_string(Want) + ")");
      if (Dim + 1 == S.Dims.size()) {
        if (!parseLiteralElement(Lit, Next++))
          return false;
      } else if (!parseLiteralNested(S, Lit, Dim + 1, Next)) {
        return false;
      }
      ++Count;
      if (L.consumeIf('}'))
        break;
      if (!expect(','))
        return false;
    }
  }
  if (Count != Want)
    return error(Open, "expected " + std::to_string(Want) +
                           " elements in dimension " + std::to_string(Dim) +
                           " of a " + S.str() + " constant, got " +
                           std::to_string(Count));
  return true;
}

bool HloParserImpl::parseLiteralElement(Literal &Lit, int64_t Index) {
  size_t Start = (L.skipSpace(), L.pos());
  std::string Tok(L.lexLiteralToken());
  if (Tok.empty())
    return errorHere("expected a literal value");
  PrimitiveType T = Lit.elementType();
  auto Bad = [&]() {
    return error(Start, "invalid " + std::string(primitiveTypeName(T)) +
                            " literal " + quote(Tok));
  };
  if (T == PrimitiveType::Pred) {
    if (Tok == "true" || Tok == "1")
      Lit.setBits(Index, 1);
    else if (Tok == "false" || Tok == "0")
      Lit.setBits(Index, 0);
    else
      return Bad();
    return true;
  }
  if (isIntegralType(T)) {
    errno = 0;
    char *End = nullptr;
    bool Negative = Tok[0] == '-';
    if (isUnsignedIntType(T)) {
      if (Negative)
        return error(Start, "negative value " + quote(Tok) + " for " +
                                std::string(primitiveTypeName(T)));
      unsigned long long V = std::strtoull(Tok.c_str(), &End, 10);
      if (*End || errno == ERANGE)
        return Bad();
      int Bits = bitWidth(T);
      if (Bits < 64 && V >> Bits)
        return error(Start, "value " + Tok + " is out of range for " +
                                std::string(primitiveTypeName(T)));
      Lit.setBits(Index, V);
      return true;
    }
    long long V = std::strtoll(Tok.c_str(), &End, 10);
    if (*End || errno == ERANGE)
      return Bad();
    int Bits = bitWidth(T);
    if (Bits < 64 && (V < -(1ll << (Bits - 1)) || V >= (1ll << (Bits - 1))))
      return error(Start, "value " + Tok + " is out of range for " +
                              std::string(primitiveTypeName(T)));
    Lit.setInt(Index, V);
    return true;
  }
  // Floating point.
  double V;
  std::string Body = Tok;
  bool Negative = false;
  if (Body[0] == '-' || Body[0] == '+') {
    Negative = Body[0] == '-';
    Body = Body.substr(1);
  }
  if (Body == "inf") {
    V = std::numeric_limits<double>::infinity();
  } else if (Body.compare(0, 3, "nan") == 0) {
    V = std::numeric_limits<double>::quiet_NaN();
  } else {
    if (!(Body[0] >= '0' && Body[0] <= '9') && Body[0] != '.')
      return Bad();
    char *End = nullptr;
    V = std::strtod(Body.c_str(), &End);
    if (*End)
      return Bad();
  }
  Lit.setDouble(Index, Negative ? -V : V);
  return true;
}

} // namespace idxmap
