//===- Context.cpp - Uniquing of expressions ------------------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Context.h"

#include "ExprStorage.h"

#include <deque>
#include <unordered_map>

namespace idxmap {

namespace {
struct Key {
  ExprKind Kind;
  int64_t Value;
  const ExprStorage *L, *R;
  bool operator==(const Key &O) const {
    return Kind == O.Kind && Value == O.Value && L == O.L && R == O.R;
  }
};
struct KeyHash {
  size_t operator()(const Key &K) const {
    uint64_t H = static_cast<uint64_t>(K.Kind) * 0x9E3779B97F4A7C15ull;
    H ^= static_cast<uint64_t>(K.Value) + 0x9E3779B97F4A7C15ull + (H << 6) +
         (H >> 2);
    H ^= reinterpret_cast<uintptr_t>(K.L) + 0x9E3779B97F4A7C15ull + (H << 6) +
         (H >> 2);
    H ^= reinterpret_cast<uintptr_t>(K.R) + 0x9E3779B97F4A7C15ull + (H << 6) +
         (H >> 2);
    return H;
  }
};

uint64_t maskFor(int64_t Pos) {
  return Pos < 63 ? (uint64_t(1) << Pos) : (uint64_t(1) << 63);
}
} // namespace

struct Context::Impl {
  std::deque<ExprStorage> Nodes;
  std::unordered_map<Key, const ExprStorage *, KeyHash> Map;

  Expr get(Context *Ctx, ExprKind K, int64_t V, const ExprStorage *L,
           const ExprStorage *R) {
    Key Ky{K, V, L, R};
    auto It = Map.find(Ky);
    if (It != Map.end())
      return Expr(It->second);
    ExprStorage &S = Nodes.emplace_back();
    S.Kind = K;
    S.Value = V;
    S.L = L;
    S.R = R;
    S.Ctx = Ctx;
    S.Id = Nodes.size() - 1;
    if (K == ExprKind::Dim)
      S.DimMask = maskFor(V);
    else if (K == ExprKind::Symbol)
      S.SymMask = maskFor(V);
    else if (L) {
      S.DimMask = L->DimMask | R->DimMask;
      S.SymMask = L->SymMask | R->SymMask;
    }
    Map.emplace(Ky, &S);
    return Expr(&S);
  }
};

Context::Context() : P(std::make_unique<Impl>()) {}
Context::~Context() = default;

Expr Context::constant(int64_t V) {
  return P->get(this, ExprKind::Constant, V, nullptr, nullptr);
}
Expr Context::dim(unsigned Pos) {
  return P->get(this, ExprKind::Dim, Pos, nullptr, nullptr);
}
Expr Context::symbol(unsigned Pos) {
  return P->get(this, ExprKind::Symbol, Pos, nullptr, nullptr);
}
size_t Context::numExprs() const { return P->Nodes.size(); }

Expr Context::getBinaryUnfolded(ExprKind K, Expr L, Expr R) {
  return P->get(this, K, 0, L.storage(), R.storage());
}

} // namespace idxmap
