//===- idxmap/ExprVisitor.h - Dispatch on expression kinds ------*- C++ -*-===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// ExprVisitor: one member function per expression kind, chosen by a single
/// switch, as LLVM's InstVisitor. The switch lives here once; a pass over
/// expressions names the kinds it handles and lets the others fall back to
/// their group.
///
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_EXPRVISITOR_H
#define IDXMAP_EXPRVISITOR_H

#include "idxmap/Expr.h"

#include <unordered_set>
#include <utility>
#include <vector>

namespace idxmap {

/// Calls `Derived::visit<Kind>(E, Args...)` for the kind of \p E. A kind
/// Derived does not handle falls back to its group, then to visitExpr:
///
///   visitConstant                              -> visitExpr
///   visitDim, visitSymbol      -> visitVariable -> visitExpr
///   visitFloorDiv, visitCeilDiv -> visitDiv    -> visitBinary -> visitExpr
///   visitAdd, visitMul, visitMod               -> visitBinary -> visitExpr
///
/// A kind that reaches visitExpr without Derived defining it is a compile
/// error, so every kind is handled somewhere. Extra arguments of visit() are
/// passed on to every handler. Everything is inline: the dispatch compiles
/// to the switch one would write by hand (simplify relies on that).
/// Handlers may be private if Derived befriends ExprVisitor.
///
/// Example: the number of nodes of an expression.
/// \code
///   struct CountNodes : ExprVisitor<CountNodes, int64_t> {
///     int64_t visitBinary(Expr E) {
///       return 1 + visit(E.lhs()) + visit(E.rhs());
///     }
///     int64_t visitExpr(Expr) { return 1; } // constants and variables
///   };
///   Context Ctx;
///   CountNodes().visit(Ctx.dim(0) * 4 + 3);   // 5: +, *, d0, 4, 3
/// \endcode
template <typename Derived, typename RetTy = void> class ExprVisitor {
public:
  template <typename... ArgTys> RetTy visit(Expr E, ArgTys &&...Args) {
    Derived &D = self();
    switch (E.kind()) {
    case ExprKind::Constant:
      return D.visitConstant(E, std::forward<ArgTys>(Args)...);
    case ExprKind::Dim:
      return D.visitDim(E, std::forward<ArgTys>(Args)...);
    case ExprKind::Symbol:
      return D.visitSymbol(E, std::forward<ArgTys>(Args)...);
    case ExprKind::Add:
      return D.visitAdd(E, std::forward<ArgTys>(Args)...);
    case ExprKind::Mul:
      return D.visitMul(E, std::forward<ArgTys>(Args)...);
    case ExprKind::Mod:
      return D.visitMod(E, std::forward<ArgTys>(Args)...);
    case ExprKind::FloorDiv:
      return D.visitFloorDiv(E, std::forward<ArgTys>(Args)...);
    case ExprKind::CeilDiv:
      return D.visitCeilDiv(E, std::forward<ArgTys>(Args)...);
    }
    __builtin_unreachable();
  }

  // The fallbacks (templates, so that Derived's handlers of the same name
  // hide them whatever their parameters).
  template <typename... ArgTys> RetTy visitConstant(Expr E, ArgTys &&...Args) {
    return self().visitExpr(E, std::forward<ArgTys>(Args)...);
  }
  template <typename... ArgTys> RetTy visitDim(Expr E, ArgTys &&...Args) {
    return self().visitVariable(E, std::forward<ArgTys>(Args)...);
  }
  template <typename... ArgTys> RetTy visitSymbol(Expr E, ArgTys &&...Args) {
    return self().visitVariable(E, std::forward<ArgTys>(Args)...);
  }
  template <typename... ArgTys> RetTy visitVariable(Expr E, ArgTys &&...Args) {
    return self().visitExpr(E, std::forward<ArgTys>(Args)...);
  }
  template <typename... ArgTys> RetTy visitAdd(Expr E, ArgTys &&...Args) {
    return self().visitBinary(E, std::forward<ArgTys>(Args)...);
  }
  template <typename... ArgTys> RetTy visitMul(Expr E, ArgTys &&...Args) {
    return self().visitBinary(E, std::forward<ArgTys>(Args)...);
  }
  template <typename... ArgTys> RetTy visitMod(Expr E, ArgTys &&...Args) {
    return self().visitBinary(E, std::forward<ArgTys>(Args)...);
  }
  template <typename... ArgTys> RetTy visitFloorDiv(Expr E, ArgTys &&...Args) {
    return self().visitDiv(E, std::forward<ArgTys>(Args)...);
  }
  template <typename... ArgTys> RetTy visitCeilDiv(Expr E, ArgTys &&...Args) {
    return self().visitDiv(E, std::forward<ArgTys>(Args)...);
  }
  /// FloorDiv and CeilDiv (`E.kind() == ExprKind::CeilDiv` tells them apart).
  template <typename... ArgTys> RetTy visitDiv(Expr E, ArgTys &&...Args) {
    return self().visitBinary(E, std::forward<ArgTys>(Args)...);
  }
  template <typename... ArgTys> RetTy visitBinary(Expr E, ArgTys &&...Args) {
    return self().visitExpr(E, std::forward<ArgTys>(Args)...);
  }
  template <typename... ArgTys> RetTy visitExpr(Expr, ArgTys &&...) {
    static_assert(AlwaysFalse<ArgTys...>,
                  "ExprVisitor: a kind reaches visitExpr, which Derived does "
                  "not define");
    __builtin_unreachable();
  }

private:
  template <typename...> static constexpr bool AlwaysFalse = false;

  Derived &self() { return static_cast<Derived &>(*this); }
};

/// Visits the binary nodes strictly below \p E in post order (operands
/// before their users), each once and without recursion, for passes whose
/// own recursion would overflow the stack on deep expressions. A node for
/// which \p Known holds is skipped with everything below it; a sum is
/// descended but not visited (the passes flatten sums themselves, and
/// visiting every partial sum of a long one would be quadratic). Stops when
/// \p Visit returns false, and returns false then.
///
/// Example: for `(d0 floordiv 4) * 2 + s0`, visits `d0 floordiv 4`, then
/// `(d0 floordiv 4) * 2`; not the sum itself.
template <typename KnownFn, typename VisitFn>
bool visitOperandsPostOrder(Expr E, KnownFn &&Known, VisitFn &&Visit) {
  std::vector<std::pair<Expr, bool>> Work{{E.lhs(), false}, {E.rhs(), false}};
  std::unordered_set<const void *> Seen;
  while (!Work.empty()) {
    auto [N, Expanded] = Work.back();
    Work.pop_back();
    if (!N.isBinary() || Known(N))
      continue;
    if (Expanded) {
      if (N.kind() != ExprKind::Add && !Visit(N))
        return false;
      continue;
    }
    if (!Seen.insert(N.storage()).second)
      continue;
    Work.push_back({N, true});
    Work.push_back({N.rhs(), false});
    Work.push_back({N.lhs(), false});
  }
  return true;
}

} // namespace idxmap

#endif // IDXMAP_EXPRVISITOR_H
