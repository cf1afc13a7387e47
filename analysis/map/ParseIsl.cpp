//===- analysis/map/ParseIsl.cpp - Maps in isl syntax ---------------------===//
//
// Part of idxmap. Reads the isl maps that printMapIsl() writes, and hand
// written ones of the same shape:
//
//   [s0, rt0] -> { [d0, d1] -> [d0 + s0, floor((d1)/4)] :
//                  0 <= d0 <= 9 and 0 <= s0 < 4 and d1 mod 4 = 0 }
//
// The input tuple holds the dimensions; the parameters are the symbols,
// runtime variables when named `rt<N>`, range variables otherwise. Each
// output is an expression of those (`floor(e/c)`, `ceil(e/c)`, `e mod c`,
// `e % c`, `2d0` for `2 * d0`). The constraints are a conjunction (`and`) of
// comparison chains (`<=`, `<`, `>=`, `>`, `=`), or `false`; one on a lone
// variable bounds it. Unions (`;`), disjunctions and `exists` are not maps
// of this kind and are rejected at the token.
//
//===----------------------------------------------------------------------===//
#include "map/ParserImpl.h"

#include <algorithm>

namespace idxmap {
namespace mapparse {

namespace {
bool isRuntimeName(std::string_view S) {
  if (S.size() < 3 || S.substr(0, 2) != "rt")
    return false;
  for (char C : S.substr(2))
    if (C < '0' || C > '9')
      return false;
  return true;
}

bool isComparison(const MapToken &T) {
  return T.is(MapTokenKind::Less) || T.is(MapTokenKind::LessEqual) ||
         T.is(MapTokenKind::Greater) || T.is(MapTokenKind::GreaterEqual) ||
         T.is(MapTokenKind::Equal);
}

/// The values of X for which `X Op C` holds (the interval to intersect).
Interval solve(MapTokenKind Op, int64_t C) {
  switch (Op) {
  case MapTokenKind::Less:
    return C == Interval::Min ? Interval::empty()
                              : Interval{Interval::Min, C - 1};
  case MapTokenKind::LessEqual:
    return {Interval::Min, C};
  case MapTokenKind::Greater:
    return C == Interval::Max ? Interval::empty()
                              : Interval{C + 1, Interval::Max};
  case MapTokenKind::GreaterEqual:
    return {C, Interval::Max};
  default:
    return Interval::point(C);
  }
}

/// `C Op X` as `X Op' C`.
MapTokenKind mirror(MapTokenKind Op) {
  switch (Op) {
  case MapTokenKind::Less:
    return MapTokenKind::Greater;
  case MapTokenKind::LessEqual:
    return MapTokenKind::GreaterEqual;
  case MapTokenKind::Greater:
    return MapTokenKind::Less;
  case MapTokenKind::GreaterEqual:
    return MapTokenKind::LessEqual;
  default:
    return Op;
  }
}

Interval intersect(Interval A, Interval B) {
  return {std::max(A.Lo, B.Lo), std::min(A.Hi, B.Hi)};
}
} // namespace

bool MapParser::parseIslNames(std::vector<MapToken> &Out) {
  consume(); // '['
  if (Tok.is(MapTokenKind::RSquare)) {
    consume();
    return true;
  }
  while (true) {
    if (!Tok.is(MapTokenKind::Identifier))
      return fail("expected variable name");
    if (isReservedWord(Tok.Text) || Tok.Text == "and" || Tok.Text == "floor" ||
        Tok.Text == "ceil")
      return fail(quoted(Tok.Text) +
                  " is a keyword and cannot name a variable");
    if (lookupName(Tok.Text) >= 0 ||
        std::any_of(Out.begin(), Out.end(),
                    [&](const MapToken &T) { return T.Text == Tok.Text; }))
      return fail("duplicate variable name " + quoted(Tok.Text));
    Out.push_back(Tok);
    consume();
    if (Tok.is(MapTokenKind::Comma)) {
      consume();
      continue;
    }
    return expect(MapTokenKind::RSquare, "expected ']'");
  }
}

Expected<IndexingMap> MapParser::parseIslMap() {
  resetVariables();
  Isl = true;
  std::vector<MapToken> Params, Inputs;
  if (Tok.is(MapTokenKind::LSquare)) {
    if (!parseIslNames(Params) ||
        !expect(MapTokenKind::Arrow, "expected '->' after the parameters"))
      return takeDiag();
  }
  if (!expect(MapTokenKind::LBrace, "expected '{'"))
    return takeDiag();
  if (!Tok.is(MapTokenKind::LSquare)) {
    fail("expected '[' (the input tuple)");
    return takeDiag();
  }
  // Dimensions must be declared before the parameters' names are added, so
  // that the flat order is [dims, range vars, runtime vars].
  std::vector<MapToken> Dims;
  {
    std::vector<std::string_view> ParamNames;
    for (const MapToken &T : Params)
      ParamNames.push_back(T.Text);
    for (std::string_view N : ParamNames)
      addName(N); // Only for the duplicate check of the inputs.
    bool Ok = parseIslNames(Dims);
    resetVariables();
    if (!Ok)
      return takeDiag();
  }
  for (const MapToken &T : Dims)
    addName(T.Text);
  NumDims = unsigned(Dims.size());
  for (const MapToken &T : Params)
    if (!isRuntimeName(T.Text)) {
      addName(T.Text);
      ++NumRange;
    }
  for (const MapToken &T : Params)
    if (isRuntimeName(T.Text)) {
      addName(T.Text);
      ++NumRuntime;
    }
  unsigned NumVars = NumDims + NumRange + NumRuntime;

  // Outputs.
  if (!expect(MapTokenKind::Arrow, "expected '->'"))
    return takeDiag();
  if (!Tok.is(MapTokenKind::LSquare)) {
    fail("expected '[' (the output tuple)");
    return takeDiag();
  }
  consume();
  std::vector<Expr> Results;
  if (Tok.is(MapTokenKind::RSquare)) {
    consume();
  } else {
    while (true) {
      if (Tok.is(MapTokenKind::Identifier) && !isReservedWord(Tok.Text) &&
          Tok.Text != "floor" && Tok.Text != "ceil" &&
          lookupName(Tok.Text) < 0) {
        fail("unknown identifier " + quoted(Tok.Text) +
             " (an output must be an expression of the inputs and "
             "parameters)");
        return takeDiag();
      }
      ParsedExpr P;
      if (!parseSum(P, 0))
        return takeDiag();
      Results.push_back(P.E);
      if (Tok.is(MapTokenKind::Comma)) {
        consume();
        continue;
      }
      if (!expect(MapTokenKind::RSquare, "expected ']'"))
        return takeDiag();
      break;
    }
  }

  // Constraints: on a lone variable they bound it, the others are kept in
  // order of appearance (equal expressions merged).
  std::vector<Interval> Bounds(NumVars, Interval::full());
  std::vector<std::pair<Expr, Interval>> Constraints;
  bool Empty = false;
  auto Add = [&](Expr E, Interval I) {
    if (E.isConstant()) {
      Empty |= E.value() < I.Lo || E.value() > I.Hi;
      return;
    }
    if (E.isDim() || E.isSymbol()) {
      unsigned Flat = E.isDim() ? E.position() : NumDims + E.position();
      Bounds[Flat] = intersect(Bounds[Flat], I);
      return;
    }
    for (auto &[CE, CI] : Constraints)
      if (CE == E) {
        CI = intersect(CI, I);
        return;
      }
    Constraints.emplace_back(E, I);
  };
  if (Tok.is(MapTokenKind::Colon)) {
    consume();
    if (Tok.isIdentifier("false") && lookupName("false") < 0) {
      consume();
      Empty = true;
    } else {
      while (true) {
        ParsedExpr L;
        if (!parseSum(L, 0))
          return takeDiag();
        if (!isComparison(Tok)) {
          fail("expected a comparison ('<=', '<', '>=', '>' or '=')");
          return takeDiag();
        }
        while (isComparison(Tok)) {
          MapTokenKind Op = Tok.Kind;
          consume();
          ParsedExpr R;
          if (!parseSum(R, 0))
            return takeDiag();
          if (R.E.isConstant())
            Add(L.E, solve(Op, R.E.value()));
          else if (L.E.isConstant())
            Add(R.E, solve(mirror(Op), L.E.value()));
          else
            Add(R.E - L.E, solve(mirror(Op), 0));
          L = R;
        }
        if (Tok.isIdentifier("or")) {
          fail("disjunctions are not supported in isl input");
          return takeDiag();
        }
        if (!Tok.isIdentifier("and"))
          break;
        consume();
      }
    }
  }
  if (!expect(MapTokenKind::RBrace, "expected '}'"))
    return takeDiag();
  if (!Tok.is(MapTokenKind::Eof)) {
    fail("unexpected text after the map");
    return takeDiag();
  }

  std::vector<Variable> DimVars, Range, Runtime;
  for (unsigned I = 0; I < NumVars; ++I) {
    Empty |= Bounds[I].isEmpty();
    Variable V = makeVariable(I, Bounds[I]);
    if (I < NumDims)
      DimVars.push_back(std::move(V));
    else if (I < NumDims + NumRange)
      Range.push_back(std::move(V));
    else
      Runtime.push_back(std::move(V));
  }
  IndexingMap Map(*Ctx, std::move(DimVars), std::move(Range),
                  std::move(Runtime), std::move(Results));
  if (Empty) {
    if (!Map.isKnownEmpty())
      Map.markKnownEmpty();
    return Map;
  }
  for (auto &[E, I] : Constraints)
    if (!Map.isKnownEmpty())
      Map.addConstraint(E, I);
  return Map;
}

} // namespace mapparse
} // namespace idxmap
