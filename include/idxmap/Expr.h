//===- idxmap/Expr.h - Uniqued affine expressions ---------------*- C++ -*-===//
//
// Part of idxmap. Expressions are value handles (one pointer) to immutable,
// uniqued storage owned by a Context, as MLIR's AffineExpr: equality is
// pointer equality and hashing is cheap.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_EXPR_H
#define IDXMAP_EXPR_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace idxmap {

class Context;
struct ExprStorage;

/// The kinds of expression nodes. The order is part of the canonical summand
/// order used by simplify, so do not reorder.
enum class ExprKind : uint8_t {
  Constant,
  Dim,
  Symbol,
  Add,
  Mul,
  Mod,
  FloorDiv,
  CeilDiv,
};

/// An affine expression over dims `d<i>` and symbols `s<i>` (range variables
/// first, then runtime variables, as in XLA), with `+ * floordiv ceildiv mod`.
///
/// Builders fold locally (tier 0), so every stored expression is locally
/// canonical. Example:
/// \code
///   Context Ctx;
///   Expr D0 = Ctx.dim(0);
///   Expr E = (D0 * 4 + 3) * 1;          // prints "d0 * 4 + 3"
///   Expr M = (D0 % 8) % 4;              // folds to "d0 mod 4"
///   assert(Ctx.constant(2) + 3 == Ctx.constant(5));
/// \endcode
class Expr {
public:
  Expr() = default;
  explicit Expr(const ExprStorage *S) : S(S) {}

  explicit operator bool() const { return S != nullptr; }
  bool operator==(Expr O) const { return S == O.S; }
  bool operator!=(Expr O) const { return S != O.S; }

  ExprKind kind() const;
  Context &context() const;

  bool isConstant() const { return kind() == ExprKind::Constant; }
  bool isDim() const { return kind() == ExprKind::Dim; }
  bool isSymbol() const { return kind() == ExprKind::Symbol; }
  /// True for Dim or Symbol.
  bool isVariable() const { return isDim() || isSymbol(); }
  bool isBinary() const { return kind() >= ExprKind::Add; }
  bool isConstant(int64_t V) const { return isConstant() && value() == V; }

  /// The value of a Constant.
  int64_t value() const;
  /// The position of a Dim or Symbol.
  unsigned position() const;
  /// The operands of a binary expression.
  Expr lhs() const;
  Expr rhs() const;

  /// A stable, structure-derived id (creation order within the Context).
  /// Used only for deterministic tie-breaking, never for semantics.
  uint64_t id() const;

  /// True if the expression mentions dim \p Pos (or symbol \p Pos).
  bool usesDim(unsigned Pos) const;
  bool usesSymbol(unsigned Pos) const;
  /// Calls \p Fn on every Dim and Symbol leaf (with repetitions).
  void walkVariables(const std::function<void(Expr)> &Fn) const;

  /// Replaces dims and symbols: dim i becomes DimRepl[i] (or stays if i is out
  /// of range or the entry is null), likewise for symbols. Rebuilds with the
  /// tier-0 builders.
  Expr replace(const std::vector<Expr> &DimRepl,
               const std::vector<Expr> &SymRepl) const;

  /// Evaluates with checked int64 arithmetic. Returns nullopt on overflow,
  /// division by zero or an out-of-range position.
  std::optional<int64_t> evaluate(const std::vector<int64_t> &Dims,
                                  const std::vector<int64_t> &Syms) const;

  const ExprStorage *storage() const { return S; }

  // Tier-0 builders (fold constants, x*1, x+0, constant on the right,
  // (x mod a) mod b with b | a, nested constant multiplications/sums).
  Expr operator+(Expr O) const;
  Expr operator+(int64_t C) const;
  Expr operator-() const;
  Expr operator-(Expr O) const;
  Expr operator-(int64_t C) const;
  Expr operator*(Expr O) const;
  Expr operator*(int64_t C) const;
  /// `mod` (non-negative for a positive divisor).
  Expr operator%(Expr O) const;
  Expr operator%(int64_t C) const;
  Expr floorDiv(Expr O) const;
  Expr floorDiv(int64_t C) const;
  Expr ceilDiv(Expr O) const;
  Expr ceilDiv(int64_t C) const;

private:
  const ExprStorage *S = nullptr;
};

/// Builds a binary expression of kind \p K with tier-0 folding.
Expr makeBinary(ExprKind K, Expr L, Expr R);

/// Total structural order used for canonical sorting (kind, then operands,
/// then values); independent of creation order.
int compareStructurally(Expr A, Expr B);

/// Exact integer helpers with MLIR semantics. floorDiv rounds toward -inf,
/// ceilDiv toward +inf, mod = a - floorDiv(a, b) * b. Return nullopt on
/// division by zero or overflow.
std::optional<int64_t> checkedFloorDiv(int64_t A, int64_t B);
std::optional<int64_t> checkedCeilDiv(int64_t A, int64_t B);
std::optional<int64_t> checkedMod(int64_t A, int64_t B);
std::optional<int64_t> checkedAdd(int64_t A, int64_t B);
std::optional<int64_t> checkedSub(int64_t A, int64_t B);
std::optional<int64_t> checkedMul(int64_t A, int64_t B);

} // namespace idxmap

template <> struct std::hash<idxmap::Expr> {
  size_t operator()(idxmap::Expr E) const {
    return std::hash<const void *>()(E.storage());
  }
};

#endif // IDXMAP_EXPR_H
