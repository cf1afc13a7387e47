//===- codegen/ExprCodegen.h - Index expressions to LLVM IR -----*- C++ -*-===//
//
// Part of idxmap. Lowers affine index expressions (idxmap::Expr) and the
// domains of indexing maps to LLVM IR integer arithmetic.
//
// Semantics: `floordiv` rounds toward -inf, `ceildiv` toward +inf, `mod` is
// `a - (a floordiv b) * b` (non-negative for a positive divisor), for
// negative values too. The RangeEvaluator's facts pick cheaper forms:
//
//   | expression            | fact (from the evaluator)   | IR                 |
//   |-----------------------|-----------------------------|--------------------|
//   | range is one point    | –                           | the constant       |
//   | a floordiv 2^k        | a >= 0                      | lshr a, k          |
//   | a floordiv 2^k        | a may be negative           | ashr a, k (exact)  |
//   | a floordiv c (c > 0)  | a >= 0                      | udiv a, c          |
//   | a floordiv c (c > 0)  | a may be negative           | s ^ ((a ^ s) udiv c), s = a ashr (N-1) |
//   | a ceildiv c (c > 0)   | a + c - 1 cannot overflow   | (a + c - 1) floordiv c, as above |
//   | a mod 2^k             | – (any sign)                | and a, 2^k - 1     |
//   | a mod c (c > 0)       | a >= 0                      | urem a, c          |
//   | a mod c (c > 0)       | a may be negative           | r = srem a, c; r < 0 ? r + c : r |
//   | negative c, symbolic divisors | –                   | sdiv/srem + sign correction |
//   | a + b, a * c          | partial ranges fit the type | `nsw` (and `nuw` when non-negative) |
//   | udiv/lshr/ashr        | evaluator's divisor is a multiple of c | `exact` |
//
// Flags (`nsw`, `nuw`, `exact`) and the point-range constants hold for the
// points of the evaluator's domain (with its constraints, when the evaluator
// uses them). Outside the domain a value may be poison: emit loads and stores
// that use these values only under emitDomainCheck's predicate (a branch), or
// turn the flags off with ExprEmitter::setUseRangeFacts(false).
//
// Example (i32 arithmetic, one hoisted base per thread):
// \code
//   // (d0, d1)[s0] -> (d1 * 1024 + d0 * 4 + s0), d0 = th_x, d1 = bl_x
//   RangeEvaluator RE(Map);
//   llvm::Type *IdxTy = mapFitsInI32(Map, RE) ? B.getInt32Ty() : B.getInt64Ty();
//   ExprEmitter EE(RE, IdxTy, {Tid, Ctaid}, {nullptr});
//   EE.setInvariantVariables({true, true}, {false}, EntryTerminator);
//   for (int S = 0; S < 4; ++S) {
//     EE.setSymbol(0, B.getInt32(S));       // clears the per-iteration cache
//     llvm::Value *Idx = EE.emit(B, Map.result(0));
//     // `d1 * 1024 + d0 * 4` is emitted once, before EntryTerminator;
//     // each iteration adds its constant: Idx = base + S.
//   }
// \endcode
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_EXPRCODEGEN_H
#define IDXMAP_CODEGEN_EXPRCODEGEN_H

#include "idxmap/Expr.h"
#include "idxmap/ExprVisitor.h"
#include "idxmap/IndexingMap.h"
#include "idxmap/Interval.h"
#include "idxmap/RangeEvaluator.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/IR/IRBuilder.h"

#include <memory>
#include <unordered_map>
#include <vector>

namespace llvm {
class Instruction;
class Type;
class Value;
} // namespace llvm

namespace idxmap {
namespace codegen {

/// The width test of the index type (idxmap/RangeEvaluator.h): i32 when
/// every subexpression fits.
using idxmap::fitsInI32;
using idxmap::mapFitsInI32;

/// Emits expressions of one map into a kernel, each distinct subexpression
/// once (a per-kernel cache), in a hoisting-friendly order.
///
/// Variables are given as LLVM integer values (dims by position, symbols by
/// position: range vars, then runtime vars), converted to the index type on
/// use: narrower values are zero-extended when the variable's bound is
/// non-negative (sign-extended otherwise), wider ones truncated.
///
/// Hoisting: variables marked invariant (setInvariantVariables) have one
/// value for the whole kernel (thread and block ids, runtime vars).
/// Subexpressions over invariant variables only are emitted before the given
/// hoist instruction and cached for the kernel; sums are reassociated so that
/// their invariant summands form one hoisted partial sum, then the variant
/// summands are added, then the constant. Everything else is emitted at the
/// caller's builder and cached until clearLocalCache()/setDim()/setSymbol().
class ExprEmitter : private ExprVisitor<ExprEmitter, llvm::Value *> {
public:
  /// \p IndexTy is i32 or i64 (see fitsInI32). \p Dims and \p Syms may hold
  /// nulls for variables that no emitted expression uses.
  ExprEmitter(RangeEvaluator &Ranges, llvm::Type *IndexTy,
              llvm::ArrayRef<llvm::Value *> Dims,
              llvm::ArrayRef<llvm::Value *> Syms);

  /// Marks invariant variables (missing entries: variant) and the
  /// instruction before which invariant subexpressions are emitted (e.g. the
  /// entry block's terminator, or any instruction that dominates every use
  /// and follows the invariant variables' definitions). Clears the caches.
  void setInvariantVariables(llvm::ArrayRef<bool> Dims,
                             llvm::ArrayRef<bool> Syms,
                             llvm::Instruction *HoistBefore);

  /// Replaces the value of a variant variable (e.g. the unroll index of the
  /// next iteration) and clears the local cache.
  void setDim(unsigned Pos, llvm::Value *V);
  void setSymbol(unsigned Pos, llvm::Value *V);

  /// Forgets the values emitted at the caller's builder (call when the
  /// builder moves to a block that they do not dominate).
  void clearLocalCache() { Local.clear(); }

  /// With false, no `nsw`/`nuw`/`exact` flags are emitted: the IR never
  /// produces poison, and its values are still exact wherever the
  /// evaluator's facts hold (build the evaluator without constraints to get
  /// exactness at every point within the variable bounds). Default true.
  void setUseRangeFacts(bool Use) { UseFacts = Use; }

  /// Emits \p E (an expression over the evaluator's map) in the index type.
  llvm::Value *emit(llvm::IRBuilderBase &B, Expr E);

  llvm::Type *indexType() const { return IndexTy; }
  RangeEvaluator &ranges() const { return Ranges; }

private:
  friend class ExprVisitor<ExprEmitter, llvm::Value *>;
  struct Term {
    Expr Base;
    int64_t Coeff;
  };

  bool isInvariant(Expr E);
  llvm::Value *emitNode(llvm::IRBuilderBase &B, Expr E);
  // One node per kind (ExprVisitor), its operands through emit().
  llvm::Value *visitConstant(Expr E, llvm::IRBuilderBase &B);
  llvm::Value *visitVariable(Expr E, llvm::IRBuilderBase &B);
  llvm::Value *visitAdd(Expr E, llvm::IRBuilderBase &B);
  llvm::Value *visitMul(Expr E, llvm::IRBuilderBase &B);
  llvm::Value *visitDiv(Expr E, llvm::IRBuilderBase &B);
  llvm::Value *visitMod(Expr E, llvm::IRBuilderBase &B);
  /// Adds \p Terms to \p Acc (null: none yet); a term whose value is a
  /// constant (a variable given as one, as unrolled items are) joins
  /// \p Const instead of taking an add.
  llvm::Value *emitTerms(llvm::IRBuilderBase &B, llvm::ArrayRef<Term> Terms,
                         llvm::Value *Acc, Interval &AccRange, int64_t &Const);
  llvm::Value *emitFloorDivByPositive(llvm::IRBuilderBase &B, llvm::Value *A,
                                      Interval ARange, llvm::Value *Divisor,
                                      int64_t C);
  llvm::Value *emitSignedDivCorrected(llvm::IRBuilderBase &B, llvm::Value *A,
                                      Interval ARange, llvm::Value *D,
                                      Interval DRange, bool Ceil, bool Mod);
  llvm::Value *constant(int64_t V) const;
  bool fits(const Interval &I) const;
  Interval rangeOf(Expr E);
  int64_t divisorOf(Expr E);

  RangeEvaluator &Ranges;
  llvm::Type *IndexTy;
  unsigned Bits;
  std::vector<llvm::Value *> Dims, Syms;
  std::vector<bool> InvDims, InvSyms;
  llvm::Instruction *HoistBefore = nullptr;
  bool UseFacts = true;
  std::unordered_map<Expr, llvm::Value *> Hoisted, Local;
  std::unordered_map<Expr, bool> InvariantMemo;
};

/// One-shot form of ExprEmitter::emit (no hoisting, no cache across calls).
llvm::Value *emitIndexExpr(llvm::IRBuilderBase &B, Expr E,
                           llvm::ArrayRef<llvm::Value *> Dims,
                           llvm::ArrayRef<llvm::Value *> Syms,
                           RangeEvaluator &Ranges, llvm::Type *IndexTy);

/// Every result of \p Map at (\p Dims)[\p Syms], each with emitIndexExpr
/// and the ranges of \p Map (its constraints included): the index a thread
/// map gives one thread.
std::vector<llvm::Value *> emitIndexExprs(llvm::IRBuilderBase &B,
                                          const IndexingMap &Map,
                                          llvm::ArrayRef<llvm::Value *> Dims,
                                          llvm::ArrayRef<llvm::Value *> Syms,
                                          llvm::Type *IndexTy);

/// The RangeEvaluators of the maps a kernel evaluates at many points (an
/// unrolled loop's items, a tile's runs), each built once: its facts are
/// derived once instead of at every point. Maps are looked up by value (a
/// kernel uses a few), and the cache keeps its own copy of each.
///
/// Example:
/// \code
///   RangeCache Ranges;
///   for (int64_t U = 0; U < 8; ++U) // one evaluator for the 8 items
///     Idx[U] = emitIndexExprs(B, Ranges, Map, {Th, Bl}, {B.getInt32(U)}, I32);
/// \endcode
class RangeCache {
public:
  RangeEvaluator &of(const IndexingMap &Map);

private:
  struct Entry {
    std::unique_ptr<IndexingMap> Map;
    std::unique_ptr<RangeEvaluator> Ranges;
  };
  std::vector<Entry> Entries;
};

/// emitIndexExprs with the ranges of \p Map from \p Ranges: the same IR.
std::vector<llvm::Value *>
emitIndexExprs(llvm::IRBuilderBase &B, RangeCache &Ranges,
               const IndexingMap &Map, llvm::ArrayRef<llvm::Value *> Dims,
               llvm::ArrayRef<llvm::Value *> Syms, llvm::Type *IndexTy);

/// What the caller knows about the run-time values of the variables given to
/// emitDomainCheck: the range each one can take (e.g. [0, 255] for a thread
/// id of a 256-thread block). An empty vector or a missing entry means
/// unknown (the full range of the index type). A bound check is emitted only
/// where the value range is not within the variable's bound.
struct DomainCheckOptions {
  std::vector<Interval> DimValueRanges;
  std::vector<Interval> SymValueRanges;
};

/// An i1 that is true exactly when the point (Dims, Syms) lies in \p Map's
/// domain: every variable within its bound and every constraint
/// `E in [lo, hi]` holding. For predicated tails.
///
/// Checks are chained with a short-circuit `and` (select), bounds first, so
/// that constraint expressions are only relied on for points within the
/// bounds. Constraints are lowered with a RangeEvaluator over the bounds only
/// (an evaluator that uses the constraints would prove them true), and
/// skipped when that evaluator proves them always true. A known-empty map
/// gives `false`; a map with no checks left gives `true`. A null variable
/// value is assumed within its bound (it must not occur in a constraint).
///
/// \p IndexTy must hold every run-time value of the variables and, over the
/// bounds, every constraint subexpression (mapFitsInI32 for i32).
llvm::Value *emitDomainCheck(llvm::IRBuilderBase &B, const IndexingMap &Map,
                             llvm::ArrayRef<llvm::Value *> Dims,
                             llvm::ArrayRef<llvm::Value *> Syms,
                             llvm::Type *IndexTy,
                             const DomainCheckOptions &Opts = {});

} // namespace codegen
} // namespace idxmap

#endif // IDXMAP_CODEGEN_EXPRCODEGEN_H
