//===- analysis/map/Parser.cpp - Parsing indexing maps --------------------===//
//
// Part of idxmap. A recursive-descent parser for the XLA syntax
// `(names)[names]{names} -> (exprs), domain: bounds..., constraints...`, the
// keywords `UNDEFINED` and `KNOWN EMPTY`, and MLIR's `affine_map<...>` and
// bare `(d0)[s0] -> (...)` forms. Every user error becomes a Diagnostic that
// points at the offending token. Expressions are built with the tier-0
// builders of Expr.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Parse.h"

#include "map/ParserImpl.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace idxmap {

namespace mapparse {

bool isReservedWord(std::string_view S) {
  return S == "in" || S == "mod" || S == "floordiv" || S == "ceildiv" ||
         S == "domain";
}

/// True if \p Name is the default name `<Prefix><Index>`.
bool isDefaultName(std::string_view Name, std::string_view Prefix,
                   unsigned Index) {
  if (Name.size() <= Prefix.size() || Name.substr(0, Prefix.size()) != Prefix)
    return false;
  std::string_view Digits = Name.substr(Prefix.size());
  if (Digits.size() > 1 && Digits[0] == '0')
    return false;
  std::optional<int64_t> V = parseIntegerToken(Digits);
  return V && *V == int64_t(Index);
}

std::string quoted(std::string_view S) {
  std::string Out;
  Out.reserve(S.size() + 2);
  Out += '\'';
  Out += S;
  Out += '\'';
  return Out;
}

bool MapParser::failAt(size_t Offset, std::string Message) {
  if (Diag)
    return false;
  if (OffsetMap)
    Offset =
        Offset < OffsetMap->size() ? (*OffsetMap)[Offset] : OffsetMap->back();
  Diag = makeDiagnostic(DiagBuffer, Offset, std::move(Message), Opts.FileName,
                        Opts.FirstLine);
  return false;
}

bool MapParser::fail(std::string Message) {
  // `#` starts a token only where an alias may stand (ParseMlir.cpp);
  // anywhere else it is a stray character.
  if (Tok.is(MapTokenKind::Error) || Tok.is(MapTokenKind::HashIdent)) {
    unsigned char C = static_cast<unsigned char>(Tok.Text[0]);
    if (C == '"')
      Message = "unterminated string";
    else if (C >= 0x20 && C < 0x7f) {
      Message = "unexpected character '";
      Message += char(C);
      Message += '\'';
    } else {
      static const char Hex[] = "0123456789abcdef";
      Message = "unexpected byte 0x";
      Message += Hex[C >> 4];
      Message += Hex[C & 15];
    }
  }
  return failAt(Tok.Offset, std::move(Message));
}

//===----------------------------------------------------------------------===//
// Variables, bounds and constraints
//===----------------------------------------------------------------------===//

bool MapParser::parseNameList(MapTokenKind Close, const char *CloseMessage,
                              unsigned &Count) {
  consume(); // The opener.
  if (Tok.is(Close)) {
    consume();
    return true;
  }
  while (true) {
    if (!Tok.is(MapTokenKind::Identifier))
      return fail("expected variable name");
    if (isReservedWord(Tok.Text))
      return fail(quoted(Tok.Text) +
                  " is a keyword and cannot name a variable");
    if (lookupName(Tok.Text) >= 0)
      return fail("duplicate variable name " + quoted(Tok.Text));
    addName(Tok.Text);
    ++Count;
    consume();
    if (Tok.is(MapTokenKind::Comma)) {
      consume();
      continue;
    }
    return expect(Close, CloseMessage);
  }
}

bool MapParser::parseSignedInt(int64_t &Out) {
  bool Negate = false;
  size_t Start = Tok.Offset;
  if (Tok.is(MapTokenKind::Minus)) {
    Negate = true;
    consume();
  }
  if (!Tok.is(MapTokenKind::Integer))
    return fail("expected integer");
  std::optional<int64_t> V = parseIntegerToken(Tok.Text, Negate);
  if (!V)
    return failAt(Start, "integer literal out of range");
  Out = *V;
  consume();
  return true;
}

bool MapParser::parseInterval(Interval &Out) {
  return expect(MapTokenKind::LSquare, "expected '['") &&
         parseSignedInt(Out.Lo) &&
         expect(MapTokenKind::Comma, "expected ','") &&
         parseSignedInt(Out.Hi) &&
         expect(MapTokenKind::RSquare, "expected ']'");
}

bool MapParser::parseBound(unsigned Index, Interval &Out) {
  std::string_view Name = Names[Index];
  if (Tok.is(MapTokenKind::Eof))
    return fail("missing bound for " + quoted(Name));
  if (!Tok.is(MapTokenKind::Identifier))
    return fail("expected bound for " + quoted(Name));
  if (Tok.Text != Name)
    return fail("bound name mismatch: expected " + quoted(Name) + ", found " +
                quoted(Tok.Text));
  consume();
  return expectKeyword("in") && parseInterval(Out);
}

bool MapParser::parseConstraint(Expr &E, Interval &I) {
  ParsedExpr P;
  if (!parseSum(P, 0))
    return false;
  E = P.E;
  return expectKeyword("in") && parseInterval(I);
}

Variable MapParser::makeVariable(unsigned FlatIndex,
                                 const Interval &Bound) const {
  std::string_view Name = Names[FlatIndex];
  bool Default;
  if (FlatIndex < NumDims)
    Default = isDefaultName(Name, "d", FlatIndex);
  else if (FlatIndex < NumDims + NumRange)
    Default = isDefaultName(Name, "s", FlatIndex - NumDims);
  else
    Default = isDefaultName(Name, "rt", FlatIndex - NumDims - NumRange);
  Variable V;
  if (!Default)
    V.Name = std::string(Name);
  V.Bound = Bound;
  return V;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// sum := product (('+' | '-') product)*
bool MapParser::parseSum(ParsedExpr &Out, unsigned Nest) {
  if (!parseProduct(Out, Nest))
    return false;
  while (Tok.is(MapTokenKind::Plus) || Tok.is(MapTokenKind::Minus)) {
    bool Subtract = Tok.is(MapTokenKind::Minus);
    consume();
    ParsedExpr R;
    if (!parseProduct(R, Nest))
      return false;
    Out.E = Subtract ? Out.E - R.E : Out.E + R.E;
    // A sum does not count as nesting: `a + b + c ...` is a left-deep tree
    // as deep as it has terms, and every consumer walks sums iteratively.
    Out.Depth = std::max(Out.Depth, R.Depth);
  }
  return true;
}

/// Builds `L op R` with the tier-0 builders.
Expr buildProduct(ExprKind K, Expr L, Expr R) {
  // Workaround: the builder's `(x * k) div c` fold computes k % c before
  // excluding k = INT64_MIN, c = -1, which traps. Keep that node unfolded.
  if ((K == ExprKind::FloorDiv || K == ExprKind::CeilDiv) && R.isConstant(-1) &&
      L.kind() == ExprKind::Mul && L.rhs().isConstant(INT64_MIN))
    return L.context().getBinaryUnfolded(K, L, R);
  switch (K) {
  case ExprKind::Mul:
    return L * R;
  case ExprKind::FloorDiv:
    return L.floorDiv(R);
  case ExprKind::CeilDiv:
    return L.ceilDiv(R);
  default:
    return L % R;
  }
}

/// product := unary (('*' | 'floordiv' | 'ceildiv' | 'mod') unary)*
bool MapParser::parseProduct(ParsedExpr &Out, unsigned Nest) {
  if (!parseUnary(Out, Nest))
    return false;
  while (true) {
    ExprKind K;
    if (Tok.is(MapTokenKind::Star))
      K = ExprKind::Mul;
    else if (Tok.isIdentifier("floordiv"))
      K = ExprKind::FloorDiv;
    else if (Tok.isIdentifier("ceildiv"))
      K = ExprKind::CeilDiv;
    else if (Tok.isIdentifier("mod") || (Isl && Tok.is(MapTokenKind::Percent)))
      K = ExprKind::Mod;
    else if (Isl && Out.Depth == 0 && Out.E.isConstant() &&
             ((Tok.is(MapTokenKind::Identifier) && !isReservedWord(Tok.Text) &&
               Tok.Text != "and" && Tok.Text != "or") ||
              Tok.is(MapTokenKind::LParen))) {
      // isl's `2d0` or `2(d0 + 1)`: a product without '*'.
      size_t At = Tok.Offset;
      ParsedExpr R;
      if (!parseUnary(R, Nest))
        return false;
      Out.E = buildProduct(ExprKind::Mul, Out.E, R.E);
      Out.Depth = R.Depth + 1;
      if (!checkDepth(Out, At))
        return false;
      continue;
    } else
      return true;
    size_t OpOffset = Tok.Offset;
    consume();
    size_t RhsOffset = Tok.Offset;
    ParsedExpr R;
    if (!parseUnary(R, Nest))
      return false;
    if (K != ExprKind::Mul && R.E.isConstant(0))
      return failAt(RhsOffset, "division by zero");
    Out.E = buildProduct(K, Out.E, R.E);
    Out.Depth = std::max(Out.Depth, R.Depth) + 1;
    if (!checkDepth(Out, OpOffset))
      return false;
  }
}

/// unary := '-' unary | primary. A minus directly before an integer literal
/// makes a negative literal (so that INT64_MIN can be written).
bool MapParser::parseUnary(ParsedExpr &Out, unsigned Nest) {
  if (Nest > MaxDepth)
    return fail("expression is nested too deeply");
  if (!Tok.is(MapTokenKind::Minus))
    return parsePrimary(Out, Nest);
  size_t MinusOffset = Tok.Offset;
  consume();
  if (Tok.is(MapTokenKind::Integer)) {
    std::optional<int64_t> V = parseIntegerToken(Tok.Text, /*Negate=*/true);
    if (!V)
      return failAt(MinusOffset, "integer literal out of range");
    Out.E = Ctx->constant(*V);
    Out.Depth = 0;
    consume();
    return true;
  }
  if (!parseUnary(Out, Nest + 1))
    return false;
  Out.E = -Out.E;
  Out.Depth += 1;
  return checkDepth(Out, MinusOffset);
}

/// primary := integer | identifier | '(' sum ')'
bool MapParser::parsePrimary(ParsedExpr &Out, unsigned Nest) {
  Out.Depth = 0;
  switch (Tok.Kind) {
  case MapTokenKind::Integer: {
    std::optional<int64_t> V = parseIntegerToken(Tok.Text);
    if (!V)
      return fail("integer literal out of range");
    Out.E = Ctx->constant(*V);
    consume();
    return true;
  }
  case MapTokenKind::Identifier: {
    if (Isl && (Tok.Text == "floor" || Tok.Text == "ceil") &&
        lookupName(Tok.Text) < 0)
      return parseIslRounding(Out, Nest);
    if (isReservedWord(Tok.Text))
      return fail("expected expression");
    int64_t Found = lookupName(Tok.Text);
    if (Found < 0)
      return fail("unknown identifier " + quoted(Tok.Text));
    unsigned Index = unsigned(Found);
    Out.E = Index < NumDims ? Ctx->dim(Index) : Ctx->symbol(Index - NumDims);
    consume();
    return true;
  }
  case MapTokenKind::LParen: {
    consume();
    if (!parseSum(Out, Nest + 1))
      return false;
    return expect(MapTokenKind::RParen, "expected ')'");
  }
  default:
    return fail("expected expression");
  }
}

/// isl: rounding := ('floor' | 'ceil') '(' sum '/' integer ')'
bool MapParser::parseIslRounding(ParsedExpr &Out, unsigned Nest) {
  bool Ceil = Tok.Text == "ceil";
  consume();
  if (!expect(MapTokenKind::LParen, "expected '('") || !parseSum(Out, Nest + 1))
    return false;
  if (!Tok.is(MapTokenKind::Slash))
    return fail("expected '/' and an integer divisor");
  consume();
  size_t At = Tok.Offset;
  int64_t D;
  if (!parseSignedInt(D) || !expect(MapTokenKind::RParen, "expected ')'"))
    return false;
  if (D == 0)
    return failAt(At, "division by zero");
  Out.E = buildProduct(Ceil ? ExprKind::CeilDiv : ExprKind::FloorDiv, Out.E,
                       Ctx->constant(D));
  Out.Depth += 1;
  return checkDepth(Out, At);
}

//===----------------------------------------------------------------------===//
// Maps
//===----------------------------------------------------------------------===//

Expected<IndexingMap> MapParser::parseMap(bool Embedded) {
  resetVariables();
  // The special states.
  if (!Embedded && Tok.isIdentifier("UNDEFINED")) {
    consume();
    if (!Tok.is(MapTokenKind::Eof)) {
      fail("unexpected text after the map");
      return takeDiag();
    }
    return IndexingMap::undefined();
  }
  if (!Embedded && Tok.isIdentifier("KNOWN")) {
    consume();
    if (!expectKeyword("EMPTY"))
      return takeDiag();
    if (!Tok.is(MapTokenKind::Eof)) {
      fail("unexpected text after the map");
      return takeDiag();
    }
    return IndexingMap::knownEmpty(*Ctx);
  }

  // `affine_map<` opens the MLIR form.
  bool AffineMap = false;
  if (Embedded && !Tok.isIdentifier("affine_map")) {
    fail("expected 'affine_map<...>' or '#xla.indexing_map<\"...\">'");
    return takeDiag();
  }
  if (Tok.isIdentifier("affine_map")) {
    if (Opts.Format == InputFormat::Xla) {
      fail("'affine_map<...>' is MLIR syntax, not accepted with the XLA "
           "input format");
      return takeDiag();
    }
    AffineMap = true;
    consume();
    if (!expect(MapTokenKind::Less, "expected '<'"))
      return takeDiag();
  }
  bool MlirOnly = AffineMap || Opts.Format == InputFormat::Mlir;

  // Variables.
  if (!Tok.is(MapTokenKind::LParen)) {
    fail(AffineMap ? "expected '('"
                   : "expected '(', 'UNDEFINED' or 'KNOWN EMPTY'");
    return takeDiag();
  }
  if (!parseNameList(MapTokenKind::RParen, "expected ')'", NumDims))
    return takeDiag();
  if (Tok.is(MapTokenKind::LSquare) &&
      !parseNameList(MapTokenKind::RSquare, "expected ']'", NumRange))
    return takeDiag();
  if (Tok.is(MapTokenKind::LBrace)) {
    if (MlirOnly) {
      fail("runtime variables '{...}' are not allowed in MLIR syntax");
      return takeDiag();
    }
    if (!parseNameList(MapTokenKind::RBrace, "expected '}'", NumRuntime))
      return takeDiag();
  }
  unsigned NumVars = NumDims + NumRange + NumRuntime;

  // Results.
  if (!expect(MapTokenKind::Arrow, "expected '->'") ||
      !expect(MapTokenKind::LParen, "expected '('"))
    return takeDiag();
  std::vector<Expr> Results;
  if (Tok.is(MapTokenKind::RParen)) {
    consume();
  } else {
    while (true) {
      ParsedExpr P;
      if (!parseSum(P, 0))
        return takeDiag();
      Results.push_back(P.E);
      if (Tok.is(MapTokenKind::Comma)) {
        consume();
        continue;
      }
      if (!expect(MapTokenKind::RParen, "expected ')'"))
        return takeDiag();
      break;
    }
  }
  if (AffineMap && !expect(MapTokenKind::Greater, "expected '>'"))
    return takeDiag();

  // `, domain:` or the end.
  bool HasDomain = false;
  if (Embedded) {
    // The definition ends at the `>`.
  } else if (Tok.is(MapTokenKind::Comma)) {
    consume();
    if (!expectKeyword("domain") ||
        !expect(MapTokenKind::Colon, "expected ':'"))
      return takeDiag();
    HasDomain = true;
  } else if (!Tok.is(MapTokenKind::Eof)) {
    fail(MlirOnly ? "unexpected text after the map" : "expected ', domain:'");
    return takeDiag();
  } else if (NumVars > 0 && Opts.Format == InputFormat::Xla) {
    fail("expected ', domain:' with a bound for every variable");
    return takeDiag();
  }

  // Bounds, in declaration order.
  std::vector<Interval> Bounds(NumVars, Interval::full());
  if (HasDomain) {
    for (unsigned I = 0; I < NumVars; ++I) {
      if (I > 0 && !Tok.is(MapTokenKind::Eof) &&
          !expect(MapTokenKind::Comma, "expected ','"))
        return takeDiag();
      if (!parseBound(I, Bounds[I]))
        return takeDiag();
    }
  }

  std::vector<Variable> Dims, Range, Runtime;
  Dims.reserve(NumDims);
  Range.reserve(NumRange);
  Runtime.reserve(NumRuntime);
  bool EmptyBound = false;
  for (unsigned I = 0; I < NumVars; ++I) {
    EmptyBound |= Bounds[I].isEmpty();
    Variable V = makeVariable(I, Bounds[I]);
    if (I < NumDims)
      Dims.push_back(std::move(V));
    else if (I < NumDims + NumRange)
      Range.push_back(std::move(V));
    else
      Runtime.push_back(std::move(V));
  }
  IndexingMap Map(*Ctx, std::move(Dims), std::move(Range), std::move(Runtime),
                  std::move(Results));
  if (EmptyBound && !Map.isKnownEmpty())
    Map.markKnownEmpty();

  // Constraints. Without variables the domain holds only constraints.
  if (HasDomain) {
    bool First = NumVars == 0;
    while (First || Tok.is(MapTokenKind::Comma)) {
      if (!First)
        consume();
      First = false;
      // Older XLA prints `, is_simplified: true|false` last; it says
      // nothing about the map.
      if (Tok.isIdentifier("is_simplified") && lookupName(Tok.Text) < 0) {
        consume();
        if (!expect(MapTokenKind::Colon, "expected ':'"))
          return takeDiag();
        if (!Tok.isIdentifier("true") && !Tok.isIdentifier("false")) {
          fail("expected 'true' or 'false'");
          return takeDiag();
        }
        consume();
        break;
      }
      Expr E;
      Interval I;
      if (!parseConstraint(E, I))
        return takeDiag();
      if (!Map.isKnownEmpty())
        Map.addConstraint(E, I);
    }
  }
  if (!Embedded && !Tok.is(MapTokenKind::Eof)) {
    fail("unexpected text after the map");
    return takeDiag();
  }
  return Map;
}

Expected<Expr> MapParser::parseStandaloneExpr(const IndexingMap &Scope) {
  NumDims = Scope.numDims();
  NumRange = Scope.numRangeVars();
  NumRuntime = Scope.numRuntimeVars();
  unsigned NumVars = Scope.numVars();
  ScopeNames.reserve(NumVars);
  for (unsigned I = 0; I < NumVars; ++I)
    ScopeNames.push_back(Scope.varName(I));
  for (const std::string &Name : ScopeNames)
    addName(Name);
  ParsedExpr P;
  if (!parseSum(P, 0))
    return takeDiag();
  if (!Tok.is(MapTokenKind::Eof)) {
    fail("unexpected text after the expression");
    return takeDiag();
  }
  return P.E;
}

} // namespace mapparse

using mapparse::MapParser;

Expected<IndexingMap> parseIndexingMap(Context &Ctx, std::string_view Text,
                                       const ParseOptions &Options) {
  MapParser P(&Ctx, Text, Options);
  return P.parseTop();
}

Expected<Expr> parseExpr(std::string_view Text, const IndexingMap &Scope,
                         const ParseOptions &Options) {
  if (Scope.isUndefined())
    return makeDiagnostic(Text, 0,
                          "cannot parse an expression in an UNDEFINED map",
                          Options.FileName, Options.FirstLine);
  MapParser P(Scope.contextPtr(), Text, Options);
  return P.parseStandaloneExpr(Scope);
}

} // namespace idxmap
