//===- analysis/map/PrintIsl.cpp - Maps in isl syntax ---------------------===//
//
// Part of idxmap. printMapIsl: a map as the text of an isl map, written
// directly (no isl objects), in the shape ParseIsl.cpp reads back:
// parameters for the symbols, the dimensions as the input tuple, the
// results as the output tuple, the domain as a conjunction of chains.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Print.h"

#include <charconv>
#include <string>
#include <vector>

namespace idxmap {

namespace {

/// Words isl's parser treats specially; a variable so named cannot be
/// written.
bool isIslKeyword(std::string_view S) {
  for (const char *K :
       {"and", "or", "not", "implies", "exists", "floor", "ceil", "mod", "min",
        "max", "true", "false", "infty", "NaN", "rat"})
    if (S == K)
      return true;
  return false;
}

void appendInt(std::string &Out, int64_t V) {
  char Buf[24];
  auto Res = std::to_chars(Buf, Buf + sizeof(Buf), V);
  Out.append(Buf, Res.ptr);
}

class IslExprPrinter {
public:
  explicit IslExprPrinter(const IndexingMap &M) : M(M) {}

  std::string Error;

  /// Appends \p E; \p Atomic asks for parentheses around anything that is
  /// not a variable, a non-negative constant or a call.
  void print(std::string &Out, Expr E, bool Atomic) {
    if (!Error.empty())
      return;
    switch (E.kind()) {
    case ExprKind::Constant:
      if (Atomic && E.value() < 0) {
        Out += '(';
        appendInt(Out, E.value());
        Out += ')';
      } else {
        appendInt(Out, E.value());
      }
      return;
    case ExprKind::Dim:
    case ExprKind::Symbol:
      printVariable(Out, E);
      return;
    case ExprKind::Add:
      if (Atomic)
        Out += '(';
      printSum(Out, E);
      if (Atomic)
        Out += ')';
      return;
    case ExprKind::Mul:
      if (Atomic)
        Out += '(';
      printProduct(Out, E);
      if (Atomic)
        Out += ')';
      return;
    default:
      printDivision(Out, E, Atomic);
      return;
    }
  }

private:
  void unsupported(Expr E, const char *What) {
    if (Error.empty())
      Error = std::string("cannot print as isl: ") + What + " in '" +
              printExpr(E, &M) + "'";
  }

  void printVariable(std::string &Out, Expr E) {
    unsigned Flat = E.isDim() ? E.position() : M.numDims() + E.position();
    if ((E.isDim() && E.position() >= M.numDims()) || Flat >= M.numVars()) {
      unsupported(E, "a variable the map does not have");
      return;
    }
    Out += M.varName(Flat);
  }

  void printSum(std::string &Out, Expr E) {
    // The terms left to right, with a worklist: a sum of N terms is a tree
    // N deep.
    std::vector<Expr> Work{E.rhs(), E.lhs()};
    bool First = true;
    while (!Work.empty()) {
      Expr T = Work.back();
      Work.pop_back();
      if (T.kind() == ExprKind::Add) {
        Work.push_back(T.rhs());
        Work.push_back(T.lhs());
        continue;
      }
      if (First) {
        First = false;
        print(Out, T, /*Atomic=*/false);
        continue;
      }
      // `x - 4` and `x - 2 * y` rather than `x + -4`, `x + -2 * y`.
      if (T.isConstant() && T.value() < 0 && T.value() != INT64_MIN) {
        Out += " - ";
        appendInt(Out, -T.value());
        continue;
      }
      if (T.kind() == ExprKind::Mul) {
        Expr C = T.rhs().isConstant() ? T.rhs() : T.lhs();
        Expr X = T.rhs().isConstant() ? T.lhs() : T.rhs();
        if (C.isConstant() && C.value() < 0 && C.value() != INT64_MIN) {
          Out += " - ";
          if (C.value() != -1) {
            appendInt(Out, -C.value());
            Out += " * ";
          }
          print(Out, X, /*Atomic=*/true);
          continue;
        }
      }
      Out += " + ";
      print(Out, T, /*Atomic=*/T.isConstant());
    }
  }

  void printProduct(std::string &Out, Expr E) {
    Expr L = E.lhs(), R = E.rhs();
    if (!R.isConstant())
      std::swap(L, R);
    if (!R.isConstant()) {
      unsupported(E, "a product of two non-constant expressions");
      return;
    }
    appendInt(Out, R.value());
    Out += " * ";
    print(Out, L, /*Atomic=*/true);
  }

  /// `floor((x)/c)`, `ceil((x)/c)`, `(x) mod c`; a negative divisor
  /// divides the negated operand by its magnitude.
  void printDivision(std::string &Out, Expr E, bool Atomic) {
    Expr R = E.rhs();
    if (!R.isConstant()) {
      unsupported(E, "a symbolic divisor");
      return;
    }
    int64_t D = R.value();
    if (D == 0 || D == INT64_MIN) {
      unsupported(E, D == 0 ? "a division by zero" : "the divisor INT64_MIN");
      return;
    }
    auto Operand = [&](bool Negate) {
      std::string S;
      if (Negate)
        S += "(-1 * ";
      print(S, E.lhs(), /*Atomic=*/true);
      if (Negate)
        S += ')';
      return S;
    };
    auto Rounded = [&](const char *Fn, bool Negate) {
      std::string S = Fn;
      S += '(';
      S += Operand(Negate);
      S += '/';
      appendInt(S, Negate ? -D : D);
      S += ')';
      return S;
    };
    switch (E.kind()) {
    case ExprKind::FloorDiv:
      Out += Rounded("floor", D < 0);
      return;
    case ExprKind::CeilDiv:
      Out += Rounded("ceil", D < 0);
      return;
    default:
      break;
    }
    // Mod: `x mod d` for d > 0; x - d * floor(x / d) otherwise.
    if (Atomic)
      Out += '(';
    if (D > 0) {
      Out += Operand(false);
      Out += " mod ";
      appendInt(Out, D);
    } else {
      Out += Operand(false);
      Out += " + ";
      appendInt(Out, -D);
      Out += " * ";
      Out += Rounded("floor", true);
    }
    if (Atomic)
      Out += ')';
  }

  const IndexingMap &M;
};

/// `lo <= x <= hi`, `x >= lo`, `x <= hi` or `x = c`; nothing when \p I is
/// full.
void appendRange(std::vector<std::string> &Out, const std::string &X,
                 Interval I) {
  std::string S;
  if (I.isFull())
    return;
  if (I.isPoint()) {
    S = X + " = ";
    appendInt(S, I.Lo);
  } else if (I.Lo == Interval::Min) {
    S = X + " <= ";
    appendInt(S, I.Hi);
  } else if (I.Hi == Interval::Max) {
    S = X + " >= ";
    appendInt(S, I.Lo);
  } else {
    appendInt(S, I.Lo);
    S += " <= " + X + " <= ";
    appendInt(S, I.Hi);
  }
  Out.push_back(std::move(S));
}

} // namespace

Expected<std::string> printMapIsl(const IndexingMap &Map) {
  if (Map.isUndefined())
    return Diagnostic{{}, "cannot print as isl: the map is UNDEFINED", ""};
  for (unsigned I = 0; I < Map.numVars(); ++I)
    if (isIslKeyword(Map.varName(I)))
      return Diagnostic{{},
                        "cannot print as isl: the variable name '" +
                            Map.varName(I) + "' is an isl keyword",
                        ""};
  std::string Out;
  if (Map.numSymbols() > 0) {
    Out += '[';
    for (unsigned I = 0; I < Map.numSymbols(); ++I)
      Out += (I ? ", " : "") + Map.varName(Map.numDims() + I);
    Out += "] -> ";
  }
  Out += "{ [";
  for (unsigned I = 0; I < Map.numDims(); ++I)
    Out += (I ? ", " : "") + Map.varName(I);
  Out += "] -> [";
  IslExprPrinter P(Map);
  if (!Map.isKnownEmpty()) {
    for (unsigned I = 0; I < Map.numResults(); ++I) {
      if (I)
        Out += ", ";
      P.print(Out, Map.result(I), /*Atomic=*/false);
    }
  } else {
    // KNOWN EMPTY's results may be anything: its domain is empty.
    for (unsigned I = 0; I < Map.numResults(); ++I)
      Out += I ? ", 0" : "0";
  }
  Out += ']';
  std::vector<std::string> Parts;
  if (Map.isKnownEmpty()) {
    Parts.push_back("false");
  } else {
    for (unsigned I = 0; I < Map.numVars(); ++I)
      appendRange(Parts, Map.varName(I), Map.var(I).Bound);
    for (const Constraint &C : Map.constraints()) {
      std::string X;
      P.print(X, C.E, /*Atomic=*/false);
      appendRange(Parts, X, C.I);
    }
  }
  if (!P.Error.empty())
    return Diagnostic{{}, P.Error, ""};
  for (size_t I = 0; I < Parts.size(); ++I)
    Out += (I ? " and " : " : ") + Parts[I];
  Out += " }";
  return Out;
}

} // namespace idxmap
