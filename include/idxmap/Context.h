//===- idxmap/Context.h - Owner of uniqued expressions ----------*- C++ -*-===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CONTEXT_H
#define IDXMAP_CONTEXT_H

#include "idxmap/Expr.h"

#include <cstdint>
#include <memory>

namespace idxmap {

/// Owns the uniqued storage of every Expr built in it. Expressions from two
/// contexts must never be mixed. A Context is not thread-safe: use one per
/// thread. Non-copyable and non-movable (expressions point back to it).
///
/// Example:
/// \code
///   Context Ctx;
///   Expr A = Ctx.dim(0) + Ctx.symbol(1);
///   Expr B = Ctx.dim(0) + Ctx.symbol(1);
///   assert(A == B);                // uniqued: same pointer
///   assert(Ctx.numExprs() >= 3);   // d0, s1, d0 + s1
/// \endcode
class Context {
public:
  Context();
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  Expr constant(int64_t V);
  Expr dim(unsigned Pos);
  Expr symbol(unsigned Pos);

  /// Number of distinct expressions stored so far.
  size_t numExprs() const;

  /// Internal: returns the uniqued binary node (no folding). Use the Expr
  /// operators instead.
  Expr getBinaryUnfolded(ExprKind K, Expr L, Expr R);

  struct Impl;

private:
  std::unique_ptr<Impl> P;
};

} // namespace idxmap

#endif // IDXMAP_CONTEXT_H
