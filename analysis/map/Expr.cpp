//===- Expr.cpp - Expressions and tier-0 folding --------------------------===//
//
// Part of idxmap. The builders fold locally so that every stored expression
// is locally canonical: constants are folded (unless folding overflows, in
// which case the node is kept and evaluation reports the overflow), constants
// go to the right of + and *, and trivially redundant operations vanish.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Expr.h"
#include "idxmap/Context.h"

#include "ExprStorage.h"

#include <cassert>
#include <unordered_map>
#include <utility>
#include <vector>

namespace idxmap {

//===----------------------------------------------------------------------===//
// Checked integer helpers
//===----------------------------------------------------------------------===//

std::optional<int64_t> checkedAdd(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_add_overflow(A, B, &R))
    return std::nullopt;
  return R;
}
std::optional<int64_t> checkedSub(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_sub_overflow(A, B, &R))
    return std::nullopt;
  return R;
}
std::optional<int64_t> checkedMul(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_mul_overflow(A, B, &R))
    return std::nullopt;
  return R;
}
std::optional<int64_t> checkedFloorDiv(int64_t A, int64_t B) {
  if (B == 0 || (A == INT64_MIN && B == -1))
    return std::nullopt;
  int64_t Q = A / B;
  if ((A % B != 0) && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}
std::optional<int64_t> checkedCeilDiv(int64_t A, int64_t B) {
  if (B == 0 || (A == INT64_MIN && B == -1))
    return std::nullopt;
  int64_t Q = A / B;
  if ((A % B != 0) && ((A < 0) == (B < 0)))
    ++Q;
  return Q;
}
std::optional<int64_t> checkedMod(int64_t A, int64_t B) {
  if (B == 0)
    return std::nullopt;
  if (B == -1)
    return 0;
  int64_t R = A % B;
  // Result has the sign of B (A - floor(A/B) * B).
  if (R != 0 && ((R < 0) != (B < 0)))
    R += B;
  return R;
}

//===----------------------------------------------------------------------===//
// Accessors
//===----------------------------------------------------------------------===//

ExprKind Expr::kind() const { return S->Kind; }
Context &Expr::context() const { return *S->Ctx; }
int64_t Expr::value() const {
  assert(isConstant());
  return S->Value;
}
unsigned Expr::position() const {
  assert(isVariable());
  return static_cast<unsigned>(S->Value);
}
Expr Expr::lhs() const {
  assert(isBinary());
  return Expr(S->L);
}
Expr Expr::rhs() const {
  assert(isBinary());
  return Expr(S->R);
}
uint64_t Expr::id() const { return S->Id; }

static bool usesVar(const ExprStorage *S, ExprKind K, unsigned Pos) {
  uint64_t Mask = K == ExprKind::Dim ? S->DimMask : S->SymMask;
  if (Pos < 63)
    return (Mask >> Pos) & 1;
  if (!(Mask >> 63))
    return false;
  if (S->Kind == K)
    return S->Value == Pos;
  if (S->L)
    return usesVar(S->L, K, Pos) || usesVar(S->R, K, Pos);
  return false;
}
bool Expr::usesDim(unsigned Pos) const {
  return usesVar(S, ExprKind::Dim, Pos);
}
bool Expr::usesSymbol(unsigned Pos) const {
  return usesVar(S, ExprKind::Symbol, Pos);
}

// The walks below use worklists, not recursion: a sum of N terms is a tree
// N deep, and the parser accepts sums of any length.

void Expr::walkVariables(const std::function<void(Expr)> &Fn) const {
  std::vector<Expr> Work{*this};
  while (!Work.empty()) {
    Expr E = Work.back();
    Work.pop_back();
    if (E.isVariable()) {
      Fn(E);
    } else if (E.isBinary()) {
      Work.push_back(E.rhs());
      Work.push_back(E.lhs());
    }
  }
}

Expr Expr::replace(const std::vector<Expr> &DimRepl,
                   const std::vector<Expr> &SymRepl) const {
  auto Leaf = [&](Expr E) {
    if (E.isDim() && E.position() < DimRepl.size() && DimRepl[E.position()])
      return DimRepl[E.position()];
    if (E.isSymbol() && E.position() < SymRepl.size() && SymRepl[E.position()])
      return SymRepl[E.position()];
    return E;
  };
  auto Unchanged = [](Expr E) {
    return !E.isBinary() ? false : !(E.S->DimMask || E.S->SymMask);
  };
  if (!isBinary())
    return Leaf(*this);
  // Post-order over the DAG: Done holds each rebuilt node.
  std::unordered_map<const ExprStorage *, Expr> Done;
  auto Get = [&](Expr E) {
    if (!E.isBinary())
      return Leaf(E);
    if (Unchanged(E))
      return E;
    return Done.at(E.S);
  };
  std::vector<std::pair<Expr, bool>> Work{{*this, false}};
  while (!Work.empty()) {
    auto [E, Expanded] = Work.back();
    Work.pop_back();
    if (!E.isBinary() || Unchanged(E) || Done.count(E.S))
      continue;
    if (!Expanded) {
      Work.push_back({E, true});
      Work.push_back({E.rhs(), false});
      Work.push_back({E.lhs(), false});
      continue;
    }
    Expr L = Get(E.lhs()), R = Get(E.rhs());
    Done.emplace(E.S,
                 L == E.lhs() && R == E.rhs() ? E : makeBinary(E.kind(), L, R));
  }
  return Get(*this);
}

/// One node's value from its operands' values.
static std::optional<int64_t> applyOp(ExprKind K, int64_t L, int64_t R) {
  switch (K) {
  case ExprKind::Add:
    return checkedAdd(L, R);
  case ExprKind::Mul:
    return checkedMul(L, R);
  case ExprKind::Mod:
    return checkedMod(L, R);
  case ExprKind::FloorDiv:
    return checkedFloorDiv(L, R);
  case ExprKind::CeilDiv:
    return checkedCeilDiv(L, R);
  default:
    return std::nullopt;
  }
}

std::optional<int64_t> Expr::evaluate(const std::vector<int64_t> &Dims,
                                      const std::vector<int64_t> &Syms) const {
  auto Leaf = [&](Expr E) -> std::optional<int64_t> {
    switch (E.kind()) {
    case ExprKind::Constant:
      return E.value();
    case ExprKind::Dim:
      if (E.position() >= Dims.size())
        return std::nullopt;
      return Dims[E.position()];
    default:
      if (E.position() >= Syms.size())
        return std::nullopt;
      return Syms[E.position()];
    }
  };
  if (!isBinary())
    return Leaf(*this);
  // Post-order with a stack of operand values; the left operand first, so
  // that the first failure is the one recursion would have met.
  std::vector<std::pair<Expr, bool>> Work{{*this, false}};
  std::vector<int64_t> Values;
  while (!Work.empty()) {
    auto [E, Expanded] = Work.back();
    Work.pop_back();
    if (!E.isBinary()) {
      std::optional<int64_t> V = Leaf(E);
      if (!V)
        return std::nullopt;
      Values.push_back(*V);
      continue;
    }
    if (!Expanded) {
      Work.push_back({E, true});
      Work.push_back({E.rhs(), false});
      Work.push_back({E.lhs(), false});
      continue;
    }
    int64_t R = Values.back();
    Values.pop_back();
    int64_t L = Values.back();
    Values.pop_back();
    std::optional<int64_t> V = applyOp(E.kind(), L, R);
    if (!V)
      return std::nullopt;
    Values.push_back(*V);
  }
  return Values.back();
}

//===----------------------------------------------------------------------===//
// Tier-0 builders
//===----------------------------------------------------------------------===//

static Expr foldAdd(Expr L, Expr R) {
  Context &Ctx = L.context();
  if (L.isConstant() && R.isConstant())
    if (auto V = checkedAdd(L.value(), R.value()))
      return Ctx.constant(*V);
  // Constant on the right.
  if (L.isConstant() && !R.isConstant())
    std::swap(L, R);
  if (R.isConstant(0))
    return L;
  // (x + c1) + c2 -> x + (c1 + c2).
  if (R.isConstant() && L.kind() == ExprKind::Add && L.rhs().isConstant())
    if (auto V = checkedAdd(L.rhs().value(), R.value()))
      return foldAdd(L.lhs(), Ctx.constant(*V));
  // x + (y + c) -> (x + y) + c: keep the constant outermost.
  if (R.kind() == ExprKind::Add && R.rhs().isConstant() && !L.isConstant())
    return foldAdd(foldAdd(L, R.lhs()), R.rhs());
  // (x + c) + y -> (x + y) + c, likewise.
  if (L.kind() == ExprKind::Add && L.rhs().isConstant() && !R.isConstant())
    return foldAdd(foldAdd(L.lhs(), R), L.rhs());
  return Ctx.getBinaryUnfolded(ExprKind::Add, L, R);
}

static Expr foldMul(Expr L, Expr R) {
  Context &Ctx = L.context();
  if (L.isConstant() && R.isConstant())
    if (auto V = checkedMul(L.value(), R.value()))
      return Ctx.constant(*V);
  if (L.isConstant() && !R.isConstant())
    std::swap(L, R);
  if (R.isConstant(1))
    return L;
  if (R.isConstant(0))
    return R;
  // (x * c1) * c2 -> x * (c1 * c2).
  if (R.isConstant() && L.kind() == ExprKind::Mul && L.rhs().isConstant())
    if (auto V = checkedMul(L.rhs().value(), R.value()))
      return foldMul(L.lhs(), Ctx.constant(*V));
  return Ctx.getBinaryUnfolded(ExprKind::Mul, L, R);
}

/// If E is `x * k` with constant k, returns k; for a constant, its value;
/// otherwise 1.
static int64_t constantFactor(Expr E) {
  if (E.isConstant())
    return E.value();
  if (E.kind() == ExprKind::Mul && E.rhs().isConstant())
    return E.rhs().value();
  return 1;
}

static Expr foldMod(Expr L, Expr R) {
  Context &Ctx = L.context();
  if (L.isConstant() && R.isConstant())
    if (auto V = checkedMod(L.value(), R.value()))
      return Ctx.constant(*V);
  if (R.isConstant()) {
    int64_t M = R.value();
    if (M == 1 || M == -1)
      return Ctx.constant(0);
    // (x * k) mod m == 0 when m | k.
    if (M != 0 && constantFactor(L) % M == 0 && !L.isConstant())
      return Ctx.constant(0);
    // (x mod a) mod b -> x mod b when a, b > 0 and b | a.
    if (M > 0 && L.kind() == ExprKind::Mod && L.rhs().isConstant() &&
        L.rhs().value() > 0 && L.rhs().value() % M == 0)
      return foldMod(L.lhs(), R);
  }
  return Ctx.getBinaryUnfolded(ExprKind::Mod, L, R);
}

static Expr foldDiv(ExprKind K, Expr L, Expr R) {
  Context &Ctx = L.context();
  if (L.isConstant() && R.isConstant()) {
    auto V = K == ExprKind::FloorDiv ? checkedFloorDiv(L.value(), R.value())
                                     : checkedCeilDiv(L.value(), R.value());
    if (V)
      return Ctx.constant(*V);
  }
  if (R.isConstant(1))
    return L;
  // (x * k) div c -> x * (k / c) when c | k (exact, any signs).
  if (R.isConstant() && R.value() != 0 && L.kind() == ExprKind::Mul &&
      L.rhs().isConstant() &&
      !(L.rhs().value() == INT64_MIN && R.value() == -1) &&
      L.rhs().value() % R.value() == 0)
    return foldMul(L.lhs(), Ctx.constant(L.rhs().value() / R.value()));
  return Ctx.getBinaryUnfolded(K, L, R);
}

Expr makeBinary(ExprKind K, Expr L, Expr R) {
  assert(L && R && &L.context() == &R.context());
  switch (K) {
  case ExprKind::Add:
    return foldAdd(L, R);
  case ExprKind::Mul:
    return foldMul(L, R);
  case ExprKind::Mod:
    return foldMod(L, R);
  case ExprKind::FloorDiv:
  case ExprKind::CeilDiv:
    return foldDiv(K, L, R);
  default:
    assert(false && "not a binary kind");
    return L;
  }
}

Expr Expr::operator+(Expr O) const {
  return makeBinary(ExprKind::Add, *this, O);
}
Expr Expr::operator+(int64_t C) const { return *this + context().constant(C); }
Expr Expr::operator-() const { return *this * context().constant(-1); }
Expr Expr::operator-(Expr O) const { return *this + (-O); }
Expr Expr::operator-(int64_t C) const {
  if (C == INT64_MIN) // -C overflows: keep it as an explicit product.
    return *this + context().getBinaryUnfolded(ExprKind::Mul,
                                               context().constant(C),
                                               context().constant(-1));
  return *this + context().constant(-C);
}
Expr Expr::operator*(Expr O) const {
  return makeBinary(ExprKind::Mul, *this, O);
}
Expr Expr::operator*(int64_t C) const { return *this * context().constant(C); }
Expr Expr::operator%(Expr O) const {
  return makeBinary(ExprKind::Mod, *this, O);
}
Expr Expr::operator%(int64_t C) const { return *this % context().constant(C); }
Expr Expr::floorDiv(Expr O) const {
  return makeBinary(ExprKind::FloorDiv, *this, O);
}
Expr Expr::floorDiv(int64_t C) const { return floorDiv(context().constant(C)); }
Expr Expr::ceilDiv(Expr O) const {
  return makeBinary(ExprKind::CeilDiv, *this, O);
}
Expr Expr::ceilDiv(int64_t C) const { return ceilDiv(context().constant(C)); }

int compareStructurally(Expr A, Expr B) {
  // Pre-order, left operands first, with a worklist of pairs.
  std::vector<std::pair<Expr, Expr>> Work{{A, B}};
  while (!Work.empty()) {
    auto [X, Y] = Work.back();
    Work.pop_back();
    if (X == Y)
      continue;
    if (X.kind() != Y.kind())
      return X.kind() < Y.kind() ? -1 : 1;
    if (!X.isBinary()) {
      int64_t VX = X.storage()->Value, VY = Y.storage()->Value;
      if (VX != VY)
        return VX < VY ? -1 : 1;
      continue;
    }
    Work.push_back({X.rhs(), Y.rhs()});
    Work.push_back({X.lhs(), Y.lhs()});
  }
  return 0;
}

} // namespace idxmap
