//===- ExprVisitorTest.cpp - Dispatch on expression kinds -----------------===//
//
// Part of idxmap. Every kind reaches its own handler, a kind without one
// falls back to its group, and extra arguments reach the handlers.
//
//===----------------------------------------------------------------------===//

#include "idxmap/ExprVisitor.h"
#include "idxmap/Context.h"

#include <gtest/gtest.h>

#include <string>

using namespace idxmap;

namespace {

/// Names the handler that saw the node.
struct ByKind : ExprVisitor<ByKind, std::string> {
  std::string visitConstant(Expr) { return "constant"; }
  std::string visitDim(Expr) { return "dim"; }
  std::string visitSymbol(Expr) { return "symbol"; }
  std::string visitAdd(Expr) { return "add"; }
  std::string visitMul(Expr) { return "mul"; }
  std::string visitMod(Expr) { return "mod"; }
  std::string visitFloorDiv(Expr) { return "floordiv"; }
  std::string visitCeilDiv(Expr) { return "ceildiv"; }
};

/// Only the groups.
struct ByGroup : ExprVisitor<ByGroup, std::string> {
  std::string visitVariable(Expr) { return "variable"; }
  std::string visitDiv(Expr E) {
    return E.kind() == ExprKind::CeilDiv ? "ceil" : "floor";
  }
  std::string visitBinary(Expr) { return "binary"; }
  std::string visitExpr(Expr) { return "other"; }
};

/// The node count, recursive, with an extra argument (the depth).
struct CountNodes : ExprVisitor<CountNodes, int64_t> {
  int64_t MaxDepth = 0;
  int64_t visitBinary(Expr E, int64_t Depth) {
    return 1 + visit(E.lhs(), Depth + 1) + visit(E.rhs(), Depth + 1);
  }
  int64_t visitExpr(Expr, int64_t Depth) {
    MaxDepth = std::max(MaxDepth, Depth);
    return 1;
  }
};

TEST(ExprVisitor, EveryKindReachesItsHandler) {
  Context Ctx;
  Expr D0 = Ctx.dim(0), S0 = Ctx.symbol(0);
  ByKind V;
  EXPECT_EQ(V.visit(Ctx.constant(3)), "constant");
  EXPECT_EQ(V.visit(D0), "dim");
  EXPECT_EQ(V.visit(S0), "symbol");
  EXPECT_EQ(V.visit(D0 + S0), "add");
  EXPECT_EQ(V.visit(D0 * S0), "mul");
  EXPECT_EQ(V.visit(D0 % 4), "mod");
  EXPECT_EQ(V.visit(D0.floorDiv(4)), "floordiv");
  EXPECT_EQ(V.visit(D0.ceilDiv(4)), "ceildiv");
}

TEST(ExprVisitor, KindsFallBackToTheirGroup) {
  Context Ctx;
  Expr D0 = Ctx.dim(0), S0 = Ctx.symbol(0);
  ByGroup V;
  EXPECT_EQ(V.visit(Ctx.constant(3)), "other");
  EXPECT_EQ(V.visit(D0), "variable");
  EXPECT_EQ(V.visit(S0), "variable");
  EXPECT_EQ(V.visit(D0 + S0), "binary");
  EXPECT_EQ(V.visit(D0 * S0), "binary");
  EXPECT_EQ(V.visit(D0 % 4), "binary");
  EXPECT_EQ(V.visit(D0.floorDiv(4)), "floor");
  EXPECT_EQ(V.visit(D0.ceilDiv(4)), "ceil");
}

TEST(ExprVisitor, ExtraArgumentsReachTheHandlers) {
  Context Ctx;
  Expr E = Ctx.dim(0) * 4 + Ctx.symbol(1).floorDiv(2);
  CountNodes V;
  EXPECT_EQ(V.visit(E, int64_t(0)), 7);
  EXPECT_EQ(V.MaxDepth, 2);
}

} // namespace
