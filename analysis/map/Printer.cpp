//===- analysis/map/Printer.cpp - Printing indexing maps ------------------===//
//
// Part of idxmap. Deterministic printing as FORMATS.md specifies (MLIR's
// affine-expression spelling, XLA's map layout):
//   - ` + `, ` * `, ` floordiv `, ` ceildiv `, ` mod `;
//   - an operand of `*`, `floordiv`, `ceildiv` or `mod` that is binary is
//     parenthesized; operands of `+` are not;
//   - `x * -1` prints `-x`; `a + b * -1` prints `a - b`; `a + b * -k` prints
//     `a - b * k`; `a + -c` prints `a - c` (unless negating would overflow);
//   - the domain lists the bounds in declaration order, then the constraints
//     sorted by their printed text.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Print.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

namespace idxmap {

namespace {

void appendInt(std::string &Out, int64_t V) {
  char Buf[24];
  auto Res = std::to_chars(Buf, Buf + sizeof(Buf), V);
  Out.append(Buf, Res.ptr);
}

void appendInterval(std::string &Out, const Interval &I) {
  Out += '[';
  appendInt(Out, I.Lo);
  Out += ", ";
  appendInt(Out, I.Hi);
  Out += ']';
}

/// How tightly the context of an expression binds: operands of `*`,
/// `floordiv`, `ceildiv` and `mod` are Strong, everything else Weak.
enum class Binding { Weak, Strong };

/// Prints expressions with a fixed table of variable names.
class ExprPrinter {
public:
  /// Default names: `d<i>` for dims, `s<i>` for all symbols.
  ExprPrinter() = default;
  /// The display names of \p Map's variables.
  explicit ExprPrinter(const IndexingMap &Map) {
    NumDims = Map.numDims();
    unsigned NumVars = Map.numVars();
    Names.reserve(NumVars);
    for (unsigned I = 0; I < NumVars; ++I)
      Names.push_back(Map.varName(I));
  }

  void print(std::string &Out, Expr E, Binding B = Binding::Weak) const;
  /// The display name of a variable by flat index (constructed from a map).
  const std::string &name(unsigned FlatIndex) const { return Names[FlatIndex]; }

private:
  void printVariable(std::string &Out, Expr E) const;

  std::vector<std::string> Names;
  unsigned NumDims = 0;
};

void ExprPrinter::printVariable(std::string &Out, Expr E) const {
  unsigned Pos = E.position();
  unsigned Flat = E.isDim() ? Pos : NumDims + Pos;
  bool InTable = E.isDim() ? Pos < NumDims : Flat < Names.size();
  if (InTable) {
    Out += Names[Flat];
    return;
  }
  Out += E.isDim() ? 'd' : 's';
  appendInt(Out, Pos);
}

/// Returns the constant -V if it exists and V < 0 (so the printer may write
/// a subtraction), else 0.
int64_t negatedIfNegative(Expr E) {
  if (!E.isConstant())
    return 0;
  int64_t V = E.value();
  if (V >= 0 || V == INT64_MIN)
    return 0;
  return -V;
}

/// One step of the printer's worklist: text, an integer, a node to print
/// with a binding, or (a part of) a sum to print summand by summand.
struct PrintStep {
  enum Kind { Text, Int, Node, Sum } K;
  Expr E;
  Binding B = Binding::Weak;
  bool First = false;
  const char *S = nullptr;
  int64_t V = 0;
};

void ExprPrinter::print(std::string &Out, Expr Root, Binding RootB) const {
  // A worklist, not recursion: expressions can be as deep as they have
  // terms (sums) or compositions. Steps are pushed in reverse order.
  std::vector<PrintStep> Work;
  auto Text = [&](const char *S) {
    Work.push_back({PrintStep::Text, Expr(), Binding::Weak, false, S, 0});
  };
  auto Int = [&](int64_t V) {
    Work.push_back({PrintStep::Int, Expr(), Binding::Weak, false, nullptr, V});
  };
  auto Node = [&](Expr E, Binding B) {
    Work.push_back({PrintStep::Node, E, B, false, nullptr, 0});
  };
  auto Sum = [&](Expr E, bool First) {
    Work.push_back({PrintStep::Sum, E, Binding::Weak, First, nullptr, 0});
  };
  Node(Root, RootB);
  while (!Work.empty()) {
    PrintStep St = Work.back();
    Work.pop_back();
    Expr E = St.E;
    switch (St.K) {
    case PrintStep::Text:
      Out += St.S;
      continue;
    case PrintStep::Int:
      appendInt(Out, St.V);
      continue;
    case PrintStep::Sum:
      // Summands print left to right in tree order. A right-nested sum
      // prints without parentheses, as in MLIR (it reparses left-nested).
      if (E.kind() == ExprKind::Add) {
        Sum(E.rhs(), false);
        Sum(E.lhs(), St.First);
        continue;
      }
      if (St.First) {
        Node(E, Binding::Weak);
        continue;
      }
      // a + b * -k  ->  a - b * k  (and a - b for k = 1).
      if (E.kind() == ExprKind::Mul) {
        if (int64_t K = negatedIfNegative(E.rhs())) {
          if (K == 1) {
            Node(E.lhs(), E.lhs().kind() == ExprKind::Add ? Binding::Strong
                                                          : Binding::Weak);
          } else {
            Int(K);
            Text(" * ");
            Node(E.lhs(), Binding::Strong);
          }
          Text(" - ");
          continue;
        }
      }
      // a + -c  ->  a - c.
      if (int64_t C = negatedIfNegative(E)) {
        Int(C);
        Text(" - ");
        continue;
      }
      Node(E, Binding::Weak);
      Text(" + ");
      continue;
    case PrintStep::Node:
      break;
    }
    switch (E.kind()) {
    case ExprKind::Constant:
      appendInt(Out, E.value());
      continue;
    case ExprKind::Dim:
    case ExprKind::Symbol:
      printVariable(Out, E);
      continue;
    default:
      break;
    }
    bool Strong = St.B == Binding::Strong;
    if (Strong)
      Text(")");
    switch (E.kind()) {
    case ExprKind::Add:
      Sum(E, /*First=*/true);
      break;
    case ExprKind::Mul:
      if (E.rhs().isConstant(-1)) {
        Node(E.lhs(), Binding::Strong);
        Text("-");
        break;
      }
      Node(E.rhs(), Binding::Strong);
      Text(" * ");
      Node(E.lhs(), Binding::Strong);
      break;
    default:
      Node(E.rhs(), Binding::Strong);
      Text(E.kind() == ExprKind::Mod        ? " mod "
           : E.kind() == ExprKind::FloorDiv ? " floordiv "
                                            : " ceildiv ");
      Node(E.lhs(), Binding::Strong);
      break;
    }
    if (Strong)
      Text("(");
  }
}

void appendNameList(std::string &Out, const ExprPrinter &P, unsigned Begin,
                    unsigned End) {
  for (unsigned I = Begin; I < End; ++I) {
    if (I != Begin)
      Out += ", ";
    Out += P.name(I);
  }
}

void appendResults(std::string &Out, const ExprPrinter &P,
                   const IndexingMap &Map) {
  Out += " -> (";
  for (unsigned I = 0, E = Map.numResults(); I < E; ++I) {
    if (I != 0)
      Out += ", ";
    P.print(Out, Map.result(I));
  }
  Out += ')';
}

} // namespace

std::string printExpr(Expr E, const IndexingMap *Names) {
  std::string Out;
  if (!E)
    return "<<null>>";
  if (Names && !Names->isUndefined()) {
    ExprPrinter(*Names).print(Out, E);
  } else {
    ExprPrinter().print(Out, E);
  }
  return Out;
}

std::string printMap(const IndexingMap &Map) {
  if (Map.isUndefined())
    return "UNDEFINED";
  if (Map.isKnownEmpty())
    return "KNOWN EMPTY";

  unsigned NumDims = Map.numDims(), NumRange = Map.numRangeVars();
  unsigned NumVars = Map.numVars();
  ExprPrinter P(Map);

  std::string Out;
  Out.reserve(64 + 32 * (NumVars + Map.numResults()));
  Out += '(';
  appendNameList(Out, P, 0, NumDims);
  Out += ')';
  if (NumRange > 0) {
    Out += '[';
    appendNameList(Out, P, NumDims, NumDims + NumRange);
    Out += ']';
  }
  if (Map.numRuntimeVars() > 0) {
    Out += '{';
    appendNameList(Out, P, NumDims + NumRange, NumVars);
    Out += '}';
  }
  appendResults(Out, P, Map);

  const std::vector<Constraint> &Cs = Map.constraints();
  if (NumVars == 0 && Cs.empty())
    return Out;

  Out += ", domain: ";
  bool First = true;
  auto Separate = [&] {
    if (!First)
      Out += ", ";
    First = false;
  };
  for (unsigned I = 0; I < NumVars; ++I) {
    Separate();
    Out += P.name(I);
    Out += " in ";
    appendInterval(Out, Map.var(I).Bound);
  }

  std::vector<std::pair<std::string, Interval>> Printed;
  Printed.reserve(Cs.size());
  for (const Constraint &C : Cs) {
    std::string S;
    P.print(S, C.E);
    Printed.emplace_back(std::move(S), C.I);
  }
  std::sort(Printed.begin(), Printed.end(), [](const auto &A, const auto &B) {
    if (A.first != B.first)
      return A.first < B.first;
    if (A.second.Lo != B.second.Lo)
      return A.second.Lo < B.second.Lo;
    return A.second.Hi < B.second.Hi;
  });
  for (const auto &[Text, I] : Printed) {
    Separate();
    Out += Text;
    Out += " in ";
    appendInterval(Out, I);
  }
  return Out;
}

std::string printMapMlir(const IndexingMap &Map) {
  if (Map.isUndefined())
    return "UNDEFINED";
  if (Map.isKnownEmpty())
    return "KNOWN EMPTY";
  std::string Out = "affine_map<(";
  for (unsigned I = 0, E = Map.numDims(); I < E; ++I) {
    if (I != 0)
      Out += ", ";
    Out += 'd';
    appendInt(Out, I);
  }
  Out += ')';
  if (Map.numSymbols() > 0) {
    Out += '[';
    for (unsigned I = 0, E = Map.numSymbols(); I < E; ++I) {
      if (I != 0)
        Out += ", ";
      Out += 's';
      appendInt(Out, I);
    }
    Out += ']';
  }
  appendResults(Out, ExprPrinter(), Map);
  Out += '>';
  return Out;
}

} // namespace idxmap
