//===- support/BruteForce.cpp - Exhaustive checks of indexing maps --------===//
//
// Part of idxmap. Expressions are compiled once into a small postfix program
// over a flat point array and evaluated with checked arithmetic, so that the
// checker does not depend on the engine's own evaluator and stays fast on the
// fuzzers' tens of millions of points.
//
//===----------------------------------------------------------------------===//
#include "support/BruteForce.h"

#include <algorithm>
#include <cassert>
#include <sstream>
#include <unordered_set>

namespace idxmap::testing {

//===----------------------------------------------------------------------===//
// Checked integer semantics (floordiv to -inf, ceildiv to +inf,
// mod = a - floordiv(a, b) * b), written independently of Expr.cpp.
//===----------------------------------------------------------------------===//

static bool addOk(int64_t A, int64_t B, int64_t &R) {
  return !__builtin_add_overflow(A, B, &R);
}
static bool mulOk(int64_t A, int64_t B, int64_t &R) {
  return !__builtin_mul_overflow(A, B, &R);
}
static bool floorDivOk(int64_t A, int64_t B, int64_t &R) {
  if (B == 0 || (A == INT64_MIN && B == -1))
    return false;
  int64_t Q = A / B, Rem = A % B;
  if (Rem != 0 && ((Rem < 0) != (B < 0)))
    --Q;
  R = Q;
  return true;
}
static bool ceilDivOk(int64_t A, int64_t B, int64_t &R) {
  if (B == 0 || (A == INT64_MIN && B == -1))
    return false;
  int64_t Q = A / B, Rem = A % B;
  if (Rem != 0 && ((Rem < 0) == (B < 0)))
    ++Q;
  R = Q;
  return true;
}
static bool modOk(int64_t A, int64_t B, int64_t &R) {
  if (B == 0)
    return false;
  if (B == -1) { // A % -1 is UB for INT64_MIN; the answer is always 0.
    R = 0;
    return true;
  }
  int64_t Rem = A % B;
  if (Rem != 0 && ((Rem < 0) != (B < 0)))
    Rem += B;
  R = Rem;
  return true;
}

//===----------------------------------------------------------------------===//
// Compiled expressions
//===----------------------------------------------------------------------===//

namespace {

/// One postfix instruction. Var loads P[Value].
struct Instr {
  ExprKind Kind;
  int64_t Value;
};

class Program {
public:
  /// Compiles \p E for points laid out as [dims (NumDims), symbols...].
  Program(Expr E, unsigned NumDims) { compile(E, NumDims); }

  /// Evaluates at \p P; false on overflow or division by zero.
  bool eval(const int64_t *P, int64_t &Out) const {
    int64_t *S = Stack.data();
    unsigned Top = 0;
    for (const Instr &I : Code) {
      switch (I.Kind) {
      case ExprKind::Constant:
        S[Top++] = I.Value;
        continue;
      case ExprKind::Dim:
      case ExprKind::Symbol:
        S[Top++] = P[I.Value];
        continue;
      default:
        break;
      }
      int64_t R = S[--Top], L = S[--Top], V = 0;
      bool Ok = false;
      switch (I.Kind) {
      case ExprKind::Add:
        Ok = addOk(L, R, V);
        break;
      case ExprKind::Mul:
        Ok = mulOk(L, R, V);
        break;
      case ExprKind::Mod:
        Ok = modOk(L, R, V);
        break;
      case ExprKind::FloorDiv:
        Ok = floorDivOk(L, R, V);
        break;
      case ExprKind::CeilDiv:
        Ok = ceilDivOk(L, R, V);
        break;
      default:
        assert(false && "unexpected expression kind");
      }
      if (!Ok)
        return false;
      S[Top++] = V;
    }
    assert(Top == 1);
    Out = S[0];
    return true;
  }

private:
  void compile(Expr E, unsigned NumDims) {
    unsigned Depth = 0;
    emit(E, NumDims, Depth);
    Stack.assign(MaxDepth, 0);
  }
  void emit(Expr E, unsigned NumDims, unsigned &Depth) {
    switch (E.kind()) {
    case ExprKind::Constant:
      push({ExprKind::Constant, E.value()}, Depth);
      return;
    case ExprKind::Dim:
      push({ExprKind::Dim, int64_t(E.position())}, Depth);
      return;
    case ExprKind::Symbol:
      push({ExprKind::Symbol, int64_t(NumDims + E.position())}, Depth);
      return;
    default:
      break;
    }
    emit(E.lhs(), NumDims, Depth);
    emit(E.rhs(), NumDims, Depth);
    Code.push_back({E.kind(), 0});
    --Depth;
  }
  void push(Instr I, unsigned &Depth) {
    Code.push_back(I);
    MaxDepth = std::max(MaxDepth, ++Depth);
  }

  std::vector<Instr> Code;
  unsigned MaxDepth = 0;
  /// Evaluation stack, sized once (a Program is used by one thread).
  mutable std::vector<int64_t> Stack;
};

enum class Membership { Out, In, Error };

/// A map compiled for point-wise questions.
class CompiledMap {
public:
  explicit CompiledMap(const IndexingMap &M) : M(M) {
    if (M.isUndefined())
      return;
    for (unsigned I = 0; I < M.numVars(); ++I)
      Bounds.push_back(M.var(I).Bound);
    for (Expr E : M.results())
      Results.emplace_back(E, M.numDims());
    for (const Constraint &C : M.constraints()) {
      Constraints.emplace_back(C.E, M.numDims());
      Intervals.push_back(C.I);
    }
  }

  unsigned numVars() const { return Bounds.size(); }

  /// Whether \p P (numVars() values) is in the domain. A constraint that
  /// cannot be evaluated gives Error unless another constraint or a bound
  /// already excludes the point (the answer must not depend on order).
  Membership classify(const int64_t *P) const {
    if (M.isUndefined() || M.isKnownEmpty())
      return Membership::Out;
    for (unsigned I = 0; I < Bounds.size(); ++I)
      if (!Bounds[I].contains(P[I]))
        return Membership::Out;
    bool Error = false;
    for (unsigned I = 0; I < Constraints.size(); ++I) {
      int64_t V;
      if (!Constraints[I].eval(P, V))
        Error = true;
      else if (!Intervals[I].contains(V))
        return Membership::Out;
    }
    return Error ? Membership::Error : Membership::In;
  }

  /// Evaluates all results; false on overflow/division by zero.
  bool results(const int64_t *P, std::vector<int64_t> &Out) const {
    Out.resize(Results.size());
    for (unsigned I = 0; I < Results.size(); ++I)
      if (!Results[I].eval(P, Out[I]))
        return false;
    return true;
  }

  const IndexingMap &map() const { return M; }

private:
  const IndexingMap &M;
  std::vector<Interval> Bounds;
  std::vector<Program> Results, Constraints;
  std::vector<Interval> Intervals;
};

/// An odometer over a box of intervals, last coordinate fastest.
class BoxIterator {
public:
  explicit BoxIterator(std::vector<Interval> Box) : Box(std::move(Box)) {
    Empty = std::any_of(this->Box.begin(), this->Box.end(),
                        [](const Interval &I) { return I.isEmpty(); });
    for (const Interval &I : this->Box)
      Cur.push_back(I.Lo);
  }
  bool done() const { return Empty; }
  const Point &point() const { return Cur; }
  void next() {
    for (size_t I = Cur.size(); I-- > 0;) {
      if (Cur[I] < Box[I].Hi) {
        ++Cur[I];
        return;
      }
      Cur[I] = Box[I].Lo;
    }
    Empty = true; // Wrapped around: finished (also for a 0-variable box).
  }

private:
  std::vector<Interval> Box;
  Point Cur;
  bool Empty = false;
};

} // namespace

/// Number of points of a box, or nullopt if more than \p Max.
static std::optional<uint64_t> boxPoints(const std::vector<Interval> &Box,
                                         uint64_t Max) {
  uint64_t N = 1;
  for (const Interval &I : Box) {
    if (I.isEmpty())
      return 0;
  }
  for (const Interval &I : Box) {
    // Width without overflow: Hi - Lo may not fit in int64.
    uint64_t W = uint64_t(I.Hi) - uint64_t(I.Lo);
    if (W >= Max)
      return std::nullopt;
    if (__builtin_mul_overflow(N, W + 1, &N) || N > Max)
      return std::nullopt;
  }
  return N;
}

static Interval hullOf(const Interval &A, const Interval &B) {
  if (A.isEmpty())
    return B;
  if (B.isEmpty())
    return A;
  return {std::min(A.Lo, B.Lo), std::max(A.Hi, B.Hi)};
}

static std::vector<Interval> boundsOf(const IndexingMap &M) {
  std::vector<Interval> B;
  for (unsigned I = 0; I < M.numVars(); ++I)
    B.push_back(M.var(I).Bound);
  return B;
}

static std::string formatValues(const std::vector<int64_t> &V) {
  std::string S = "(";
  for (size_t I = 0; I < V.size(); ++I) {
    if (I)
      S += ", ";
    S += std::to_string(V[I]);
  }
  return S + ")";
}

std::string formatPoint(const IndexingMap &Map, const Point &P) {
  std::string S = "(";
  for (size_t I = 0; I < P.size(); ++I) {
    if (I)
      S += ", ";
    if (!Map.isUndefined() && I < Map.numVars())
      S += Map.varName(I) + "=";
    S += std::to_string(P[I]);
  }
  return S + ")";
}

const char *checkStatusName(CheckStatus S) {
  switch (S) {
  case CheckStatus::Ok:
    return "ok";
  case CheckStatus::Mismatch:
    return "mismatch";
  case CheckStatus::TooLarge:
    return "too large";
  case CheckStatus::EvalError:
    return "evaluation error";
  case CheckStatus::Invalid:
    return "invalid";
  }
  return "?";
}

std::string CheckResult::str() const {
  std::string S = checkStatusName(Status);
  if (!Message.empty())
    S += ": " + Message;
  return S;
}

static CheckResult fail(CheckStatus S, std::string Msg, Point P = {}) {
  CheckResult R;
  R.Status = S;
  R.Message = std::move(Msg);
  R.FailingPoint = std::move(P);
  return R;
}

static CheckResult tooLarge(uint64_t Max) {
  return fail(CheckStatus::TooLarge,
              "box has more than " + std::to_string(Max) + " points");
}

std::optional<int64_t> evaluateChecked(Expr E, const std::vector<int64_t> &Dims,
                                       const std::vector<int64_t> &Syms) {
  // Positions beyond the given values are an error, as in Expr::evaluate.
  bool Missing = false;
  E.walkVariables([&](Expr V) {
    if (V.isDim() ? V.position() >= Dims.size() : V.position() >= Syms.size())
      Missing = true;
  });
  if (Missing)
    return std::nullopt;
  Point P(Dims);
  P.insert(P.end(), Syms.begin(), Syms.end());
  int64_t V;
  if (!Program(E, Dims.size()).eval(P.data(), V))
    return std::nullopt;
  return V;
}

std::optional<uint64_t> boxSize(const IndexingMap &Map, uint64_t Max) {
  if (Map.isUndefined())
    return std::nullopt;
  return boxPoints(boundsOf(Map), Max);
}

std::vector<Point> enumerateDomain(const IndexingMap &Map, CheckStatus *Status,
                                   const BruteForceOptions &Options) {
  std::vector<Point> Out;
  auto SetStatus = [&](CheckStatus S) {
    if (Status)
      *Status = S;
  };
  SetStatus(CheckStatus::Ok);
  if (Map.isUndefined()) {
    SetStatus(CheckStatus::Invalid);
    return Out;
  }
  if (Map.isKnownEmpty())
    return Out;
  std::vector<Interval> Box = boundsOf(Map);
  if (!boxPoints(Box, Options.MaxPoints)) {
    SetStatus(CheckStatus::TooLarge);
    return Out;
  }
  CompiledMap CM(Map);
  for (BoxIterator It(Box); !It.done(); It.next()) {
    switch (CM.classify(It.point().data())) {
    case Membership::In:
      Out.push_back(It.point());
      break;
    case Membership::Out:
      break;
    case Membership::Error:
      SetStatus(CheckStatus::EvalError);
      return {};
    }
  }
  return Out;
}

static bool sameShape(const IndexingMap &A, const IndexingMap &B) {
  return A.numDims() == B.numDims() && A.numRangeVars() == B.numRangeVars() &&
         A.numRuntimeVars() == B.numRuntimeVars() &&
         A.numResults() == B.numResults();
}

CheckResult compareMaps(const IndexingMap &A, const IndexingMap &B,
                        const BruteForceOptions &Options) {
  if (A.isUndefined() || B.isUndefined()) {
    if (A.isUndefined() && B.isUndefined())
      return {};
    return fail(CheckStatus::Mismatch, A.isUndefined()
                                           ? "first map is UNDEFINED"
                                           : "second map is UNDEFINED");
  }
  if (Options.FlatLayout
          ? A.numVars() != B.numVars() || A.numResults() != B.numResults()
          : !sameShape(A, B))
    return fail(CheckStatus::Invalid,
                "the maps have different numbers of variables or results");
  std::vector<Interval> Box;
  for (unsigned I = 0; I < A.numVars(); ++I)
    Box.push_back(hullOf(A.var(I).Bound, B.var(I).Bound));
  if (!boxPoints(Box, Options.MaxPoints))
    return tooLarge(Options.MaxPoints);

  CompiledMap CA(A), CB(B);
  CheckResult R;
  std::vector<int64_t> VA, VB;
  for (BoxIterator It(Box); !It.done(); It.next()) {
    const Point &P = It.point();
    ++R.PointsVisited;
    Membership MA = CA.classify(P.data()), MB = CB.classify(P.data());
    if (MA == Membership::Error || MB == Membership::Error)
      return fail(CheckStatus::EvalError,
                  std::string("a constraint of the ") +
                      (MA == Membership::Error ? "first" : "second") +
                      " map cannot be evaluated at " + formatPoint(A, P),
                  P);
    if (MA != MB)
      return fail(CheckStatus::Mismatch,
                  "domains differ at " + formatPoint(A, P) + ": in the " +
                      (MA == Membership::In ? "first" : "second") +
                      " map's domain only",
                  P);
    if (MA == Membership::Out)
      continue;
    ++R.DomainPoints;
    bool OkA = CA.results(P.data(), VA), OkB = CB.results(P.data(), VB);
    if (!OkA || !OkB)
      return fail(CheckStatus::EvalError,
                  std::string("results of the ") + (!OkA ? "first" : "second") +
                      " map overflow at " + formatPoint(A, P),
                  P);
    if (VA != VB)
      return fail(CheckStatus::Mismatch,
                  "results differ at " + formatPoint(A, P) + ": " +
                      formatValues(VA) + " vs " + formatValues(VB),
                  P);
  }
  return R;
}

namespace {
struct PointHash {
  size_t operator()(const Point &P) const {
    size_t H = 0xcbf29ce484222325ull;
    for (int64_t V : P)
      H = (H ^ std::hash<int64_t>()(V)) * 0x100000001b3ull;
    return H;
  }
};
using PointSet = std::unordered_set<Point, PointHash>;

/// Collects {(dims..., results...)} over a map's domain.
CheckResult collectRelation(const IndexingMap &M, const char *Which,
                            const BruteForceOptions &Options, PointSet &Out) {
  CheckResult R;
  if (M.isKnownEmpty())
    return R;
  std::vector<Interval> Box = boundsOf(M);
  if (!boxPoints(Box, Options.MaxPoints))
    return tooLarge(Options.MaxPoints);
  CompiledMap CM(M);
  std::vector<int64_t> Vals;
  for (BoxIterator It(Box); !It.done(); It.next()) {
    const Point &P = It.point();
    ++R.PointsVisited;
    Membership In = CM.classify(P.data());
    if (In == Membership::Error)
      return fail(CheckStatus::EvalError,
                  std::string("a constraint of the ") + Which +
                      " map cannot be evaluated at " + formatPoint(M, P),
                  P);
    if (In == Membership::Out)
      continue;
    ++R.DomainPoints;
    if (!CM.results(P.data(), Vals))
      return fail(CheckStatus::EvalError,
                  std::string("results of the ") + Which + " map overflow at " +
                      formatPoint(M, P),
                  P);
    Point Key(P.begin(), P.begin() + M.numDims());
    Key.insert(Key.end(), Vals.begin(), Vals.end());
    Out.insert(std::move(Key));
  }
  return R;
}

std::string formatRelationPoint(const IndexingMap &M, const Point &Key) {
  Point Dims(Key.begin(), Key.begin() + M.numDims());
  Point Vals(Key.begin() + M.numDims(), Key.end());
  std::string S = "(";
  for (unsigned I = 0; I < Dims.size(); ++I)
    S += (I ? ", " : "") + M.varName(I) + "=" + std::to_string(Dims[I]);
  return S + ") -> " + formatValues(Vals);
}
} // namespace

CheckResult compareRelations(const IndexingMap &A, const IndexingMap &B,
                             const BruteForceOptions &Options) {
  if (A.isUndefined() || B.isUndefined()) {
    if (A.isUndefined() && B.isUndefined())
      return {};
    return fail(CheckStatus::Mismatch, "only one map is UNDEFINED");
  }
  if (A.numDims() != B.numDims() || A.numResults() != B.numResults())
    return fail(CheckStatus::Invalid,
                "the maps have different numbers of dims or results");
  PointSet SA, SB;
  CheckResult RA = collectRelation(A, "first", Options, SA);
  if (!RA.ok())
    return RA;
  CheckResult RB = collectRelation(B, "second", Options, SB);
  if (!RB.ok())
    return RB;
  CheckResult R;
  R.PointsVisited = RA.PointsVisited + RB.PointsVisited;
  R.DomainPoints = RA.DomainPoints + RB.DomainPoints;
  // Report the smallest differing tuple, for determinism.
  std::optional<Point> Missing;
  bool InFirst = false;
  for (const Point &P : SA)
    if (!SB.count(P) && (!Missing || P < *Missing)) {
      Missing = P;
      InFirst = true;
    }
  if (!Missing)
    for (const Point &P : SB)
      if (!SA.count(P) && (!Missing || P < *Missing))
        Missing = P;
  if (Missing)
    return fail(CheckStatus::Mismatch,
                formatRelationPoint(A, *Missing) + " is in the " +
                    (InFirst ? "first" : "second") + " relation only",
                Point(Missing->begin(), Missing->begin() + A.numDims()));
  return R;
}

CheckResult checkCompose(const IndexingMap &First, const IndexingMap &Second,
                         const IndexingMap &Composed,
                         const BruteForceOptions &Options) {
  if (First.isUndefined() || Second.isUndefined()) {
    if (Composed.isUndefined())
      return {};
    return fail(CheckStatus::Mismatch,
                "an operand is UNDEFINED but the composition is not");
  }
  if (Composed.isUndefined())
    return fail(CheckStatus::Mismatch, "the composition is UNDEFINED");
  if (First.numResults() != Second.numDims())
    return fail(CheckStatus::Invalid,
                "first's results do not match second's dims");
  const unsigned ND = First.numDims(), RS = Second.numRangeVars(),
                 RF = First.numRangeVars(), TS = Second.numRuntimeVars(),
                 TF = First.numRuntimeVars();
  if (Composed.numDims() != ND || Composed.numRangeVars() != RS + RF ||
      Composed.numRuntimeVars() != TS + TF ||
      Composed.numResults() != Second.numResults())
    return fail(CheckStatus::Invalid,
                "the composition has the wrong numbers of variables/results");

  // Where each composed variable comes from: first's flat index or, offset by
  // Base, second's symbol flat index.
  const unsigned SD = Second.numDims();
  std::vector<int> FromFirst(Composed.numVars(), -1),
      FromSecond(Composed.numVars(), -1);
  for (unsigned I = 0; I < ND; ++I)
    FromFirst[I] = I;
  for (unsigned I = 0; I < RS; ++I)
    FromSecond[ND + I] = SD + I;
  for (unsigned I = 0; I < RF; ++I)
    FromFirst[ND + RS + I] = ND + I;
  for (unsigned I = 0; I < TS; ++I)
    FromSecond[ND + RS + RF + I] = SD + RS + I;
  for (unsigned I = 0; I < TF; ++I)
    FromFirst[ND + RS + RF + TS + I] = ND + RF + I;

  std::vector<Interval> Box;
  for (unsigned I = 0; I < Composed.numVars(); ++I) {
    Interval Ref = FromFirst[I] >= 0 ? First.var(FromFirst[I]).Bound
                                     : Second.var(FromSecond[I]).Bound;
    Box.push_back(hullOf(Ref, Composed.var(I).Bound));
  }
  if (!boxPoints(Box, Options.MaxPoints))
    return tooLarge(Options.MaxPoints);

  CompiledMap CF(First), CS(Second), CC(Composed);
  CheckResult R;
  Point PF(First.numVars()), PS(Second.numVars());
  std::vector<int64_t> VF, VS, VC;
  for (BoxIterator It(Box); !It.done(); It.next()) {
    const Point &P = It.point();
    ++R.PointsVisited;
    for (unsigned I = 0; I < P.size(); ++I) {
      if (FromFirst[I] >= 0)
        PF[FromFirst[I]] = P[I];
      else
        PS[FromSecond[I]] = P[I];
    }
    // Reference membership and value.
    Membership Ref = CF.classify(PF.data());
    if (Ref == Membership::Error)
      return fail(CheckStatus::EvalError,
                  "a constraint of first cannot be evaluated at " +
                      formatPoint(First, PF),
                  P);
    if (Ref == Membership::In) {
      if (!CF.results(PF.data(), VF))
        return fail(CheckStatus::EvalError,
                    "first's results overflow at " + formatPoint(First, PF), P);
      std::copy(VF.begin(), VF.end(), PS.begin());
      Ref = CS.classify(PS.data());
      if (Ref == Membership::Error)
        return fail(CheckStatus::EvalError,
                    "a constraint of second cannot be evaluated at " +
                        formatPoint(Second, PS),
                    P);
    }
    Membership Got = CC.classify(P.data());
    if (Got == Membership::Error)
      return fail(CheckStatus::EvalError,
                  "a constraint of the composition cannot be evaluated at " +
                      formatPoint(Composed, P),
                  P);
    if (Ref != Got)
      return fail(
          CheckStatus::Mismatch,
          "domains differ at " + formatPoint(Composed, P) +
              (Got == Membership::In
                   ? ": in the composition's domain only"
                   : ": in first's domain with first(x) = " + formatValues(VF) +
                         " in second's, but not in the composition's"),
          P);
    if (Got == Membership::Out)
      continue;
    ++R.DomainPoints;
    if (!CS.results(PS.data(), VS))
      return fail(CheckStatus::EvalError,
                  "second's results overflow at " + formatPoint(Second, PS), P);
    if (!CC.results(P.data(), VC))
      return fail(CheckStatus::EvalError,
                  "the composition's results overflow at " +
                      formatPoint(Composed, P),
                  P);
    if (VS != VC)
      return fail(CheckStatus::Mismatch,
                  "results differ at " + formatPoint(Composed, P) +
                      ": second(first(x)) = " + formatValues(VS) +
                      ", composition = " + formatValues(VC),
                  P);
  }
  return R;
}

CheckResult checkProjection(const IndexingMap &Original,
                            const IndexingMap &Reduced,
                            const std::vector<bool> &Removed,
                            const BruteForceOptions &Options) {
  if (Original.isUndefined() || Reduced.isUndefined()) {
    if (Original.isUndefined() && Reduced.isUndefined())
      return {};
    return fail(CheckStatus::Mismatch, "only one map is UNDEFINED");
  }
  if (Removed.size() != Original.numVars())
    return fail(CheckStatus::Invalid, "removed flags have the wrong size");
  unsigned KeptDims = 0, KeptRange = 0, KeptRt = 0;
  std::vector<unsigned> Kept;
  for (unsigned I = 0; I < Original.numVars(); ++I) {
    if (Removed[I])
      continue;
    Kept.push_back(I);
    if (I < Original.numDims())
      ++KeptDims;
    else if (I < Original.numDims() + Original.numRangeVars())
      ++KeptRange;
    else
      ++KeptRt;
  }
  if (Reduced.numDims() != KeptDims || Reduced.numRangeVars() != KeptRange ||
      Reduced.numRuntimeVars() != KeptRt ||
      Reduced.numResults() != Original.numResults())
    return fail(CheckStatus::Invalid,
                "the reduced map's shape does not match the removed flags");

  std::vector<Interval> BoxO = boundsOf(Original), BoxR = boundsOf(Reduced);
  if (!boxPoints(BoxO, Options.MaxPoints) ||
      !boxPoints(BoxR, Options.MaxPoints))
    return tooLarge(Options.MaxPoints);

  CompiledMap CO(Original), CR(Reduced);
  CheckResult R;
  PointSet Image;
  Point Q(Kept.size());
  std::vector<int64_t> VO, VR;
  for (BoxIterator It(BoxO); !It.done(); It.next()) {
    const Point &P = It.point();
    ++R.PointsVisited;
    Membership M = CO.classify(P.data());
    if (M == Membership::Error)
      return fail(CheckStatus::EvalError,
                  "a constraint of the original cannot be evaluated at " +
                      formatPoint(Original, P),
                  P);
    if (M == Membership::Out)
      continue;
    ++R.DomainPoints;
    for (unsigned I = 0; I < Kept.size(); ++I)
      Q[I] = P[Kept[I]];
    Membership MR = CR.classify(Q.data());
    if (MR == Membership::Error)
      return fail(CheckStatus::EvalError,
                  "a constraint of the reduced map cannot be evaluated at " +
                      formatPoint(Reduced, Q),
                  P);
    if (MR != Membership::In)
      return fail(CheckStatus::Mismatch,
                  "original domain point " + formatPoint(Original, P) +
                      " projects to " + formatPoint(Reduced, Q) +
                      ", outside the reduced domain",
                  P);
    if (!CO.results(P.data(), VO) || !CR.results(Q.data(), VR))
      return fail(CheckStatus::EvalError,
                  "results overflow at " + formatPoint(Original, P), P);
    if (VO != VR)
      return fail(CheckStatus::Mismatch,
                  "results differ at " + formatPoint(Original, P) + ": " +
                      formatValues(VO) + " vs " + formatValues(VR) + " at " +
                      formatPoint(Reduced, Q),
                  P);
    Image.insert(Q);
  }
  for (BoxIterator It(BoxR); !It.done(); It.next()) {
    const Point &P = It.point();
    ++R.PointsVisited;
    Membership M = CR.classify(P.data());
    if (M == Membership::Error)
      return fail(CheckStatus::EvalError,
                  "a constraint of the reduced map cannot be evaluated at " +
                      formatPoint(Reduced, P),
                  P);
    if (M == Membership::In && !Image.count(P))
      return fail(CheckStatus::Mismatch,
                  "reduced domain point " + formatPoint(Reduced, P) +
                      " is not the projection of any original domain point",
                  P);
  }
  return R;
}

CheckResult checkExprBounds(const IndexingMap &Map, Expr E, Interval Range,
                            int64_t Divisor, const BruteForceOptions &Options) {
  if (Map.isUndefined())
    return fail(CheckStatus::Invalid, "the map is UNDEFINED");
  if (Map.isKnownEmpty())
    return {};
  std::vector<Interval> Box = boundsOf(Map);
  if (!boxPoints(Box, Options.MaxPoints))
    return tooLarge(Options.MaxPoints);
  CompiledMap CM(Map);
  Program Prog(E, Map.numDims());
  CheckResult R;
  for (BoxIterator It(Box); !It.done(); It.next()) {
    const Point &P = It.point();
    ++R.PointsVisited;
    Membership M = CM.classify(P.data());
    if (M == Membership::Error)
      return fail(CheckStatus::EvalError,
                  "a constraint cannot be evaluated at " + formatPoint(Map, P),
                  P);
    if (M == Membership::Out)
      continue;
    ++R.DomainPoints;
    int64_t V;
    if (!Prog.eval(P.data(), V))
      return fail(CheckStatus::EvalError,
                  "the expression overflows at " + formatPoint(Map, P), P);
    if (!Range.contains(V))
      return fail(CheckStatus::Mismatch,
                  "value " + std::to_string(V) + " at " + formatPoint(Map, P) +
                      " is outside " + Range.str(),
                  P);
    if (Divisor > 1 && V % Divisor != 0)
      return fail(CheckStatus::Mismatch,
                  "value " + std::to_string(V) + " at " + formatPoint(Map, P) +
                      " is not a multiple of " + std::to_string(Divisor),
                  P);
  }
  return R;
}

} // namespace idxmap::testing
