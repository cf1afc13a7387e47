//===- codegen/ExprCodegen.cpp - Index expressions to LLVM IR -------------===//
//
// Part of idxmap. See ExprCodegen.h for the lowering table. The identities
// used (N is the width of the index type, s = a ashr (N-1), i.e. -1 for a < 0
// and 0 otherwise):
//
//   floor(a / c) = s ^ ((a ^ s) udiv c)                for c > 0:
//     for a >= 0 this is a udiv c; for a < 0, a ^ s = -1 - a >= 0 and
//     floor(a / c) = -1 - floor((-1 - a) / c), which is that expression.
//     Neither step can overflow, for any a.
//   floor(a / 2^k) = a ashr k                           (any a)
//   a mod 2^k = a & (2^k - 1)                           (any a, two's complement)
//   ceil(a / c) = floor((a + c - 1) / c)                for c > 0
//   ceil(a / c) = -floor(-a / c)                        for c > 0
//   floor(a / c) = floor(-a / -c), ceil likewise        for c < 0
//   with q = sdiv(a, d) and r = srem(a, d) (truncating):
//     floor = q - (r != 0 && sign(r) != sign(d))
//     ceil  = q + (r != 0 && sign(r) == sign(d))
//     mod   = r + (r != 0 && sign(r) != sign(d) ? d : 0)
//
// Sums are emitted term by term; a term's `nsw` comes from the interval of
// the partial sum so far, which is sound for every point of the evaluator's
// domain. Where an intermediate might wrap no flag is set; the final value is
// still exact (addition and multiplication are exact modulo 2^N).
//
//===----------------------------------------------------------------------===//

#include "ExprCodegen.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/Value.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace llvm;

namespace idxmap {
namespace codegen {

namespace {

bool isPowerOfTwo(int64_t C) { return C > 0 && (C & (C - 1)) == 0; }

unsigned log2Exact(int64_t C) {
  unsigned K = 0;
  while ((int64_t(1) << K) != C)
    ++K;
  return K;
}

int64_t typeMin(unsigned Bits) {
  return Bits >= 64 ? std::numeric_limits<int64_t>::min()
                    : -(int64_t(1) << (Bits - 1));
}
int64_t typeMax(unsigned Bits) {
  return Bits >= 64 ? std::numeric_limits<int64_t>::max()
                    : (int64_t(1) << (Bits - 1)) - 1;
}

/// True if \p I is a known (not full, not empty) range within the signed
/// range of a \p Bits-bit integer.
bool fitsBits(const Interval &I, unsigned Bits) {
  if (I.isEmpty() || I.isFull())
    return false;
  return I.Lo >= typeMin(Bits) && I.Hi <= typeMax(Bits);
}

/// Converts a variable's value to the index type: zext for a non-negative
/// range, sext otherwise, trunc when wider.
Value *castToIndex(IRBuilderBase &B, Value *V, Type *IndexTy, bool NonNeg) {
  unsigned From = V->getType()->getIntegerBitWidth();
  unsigned To = IndexTy->getIntegerBitWidth();
  if (From == To)
    return V;
  if (From > To)
    return B.CreateTrunc(V, IndexTy);
  return NonNeg ? B.CreateZExt(V, IndexTy) : B.CreateSExt(V, IndexTy);
}

} // namespace

//===----------------------------------------------------------------------===//
// ExprEmitter
//===----------------------------------------------------------------------===//

ExprEmitter::ExprEmitter(RangeEvaluator &Ranges, Type *IndexTy,
                         ArrayRef<Value *> DimValues,
                         ArrayRef<Value *> SymValues)
    : Ranges(Ranges), IndexTy(IndexTy),
      Bits(IndexTy->getIntegerBitWidth()), Dims(DimValues.begin(),
                                                DimValues.end()),
      Syms(SymValues.begin(), SymValues.end()) {
  assert((Bits == 32 || Bits == 64) && "index type must be i32 or i64");
}

void ExprEmitter::setInvariantVariables(ArrayRef<bool> DimFlags,
                                        ArrayRef<bool> SymFlags,
                                        Instruction *Before) {
  InvDims.assign(DimFlags.begin(), DimFlags.end());
  InvSyms.assign(SymFlags.begin(), SymFlags.end());
  HoistBefore = Before;
  Hoisted.clear();
  Local.clear();
  InvariantMemo.clear();
}

void ExprEmitter::setDim(unsigned Pos, Value *V) {
  assert(!(Pos < InvDims.size() && InvDims[Pos] && HoistBefore) &&
         "an invariant variable cannot change");
  if (Pos >= Dims.size())
    Dims.resize(Pos + 1, nullptr);
  Dims[Pos] = V;
  Local.clear();
}

void ExprEmitter::setSymbol(unsigned Pos, Value *V) {
  assert(!(Pos < InvSyms.size() && InvSyms[Pos] && HoistBefore) &&
         "an invariant variable cannot change");
  if (Pos >= Syms.size())
    Syms.resize(Pos + 1, nullptr);
  Syms[Pos] = V;
  Local.clear();
}

bool ExprEmitter::isInvariant(Expr E) {
  if (!HoistBefore)
    return false;
  auto It = InvariantMemo.find(E);
  if (It != InvariantMemo.end())
    return It->second;
  bool Inv = true;
  E.walkVariables([&](Expr V) {
    const std::vector<bool> &Flags = V.isDim() ? InvDims : InvSyms;
    unsigned P = V.position();
    if (P >= Flags.size() || !Flags[P])
      Inv = false;
  });
  InvariantMemo[E] = Inv;
  return Inv;
}

Value *ExprEmitter::constant(int64_t V) const {
  return ConstantInt::get(IndexTy, uint64_t(V), /*isSigned=*/true);
}

bool ExprEmitter::fits(const Interval &I) const { return fitsBits(I, Bits); }

Interval ExprEmitter::rangeOf(Expr E) { return Ranges.range(E); }

int64_t ExprEmitter::divisorOf(Expr E) {
  return UseFacts ? Ranges.info(E).Divisor : 1;
}

Value *ExprEmitter::emit(IRBuilderBase &B, Expr E) {
  assert(E && "null expression");
  bool Inv = isInvariant(E);
  auto &Cache = Inv ? Hoisted : Local;
  auto It = Cache.find(E);
  if (It != Cache.end())
    return It->second;
  Value *V;
  if (Inv) {
    IRBuilder<> HB(HoistBefore);
    V = emitNode(HB, E);
  } else {
    V = emitNode(B, E);
  }
  Cache[E] = V;
  return V;
}

Value *ExprEmitter::emitNode(IRBuilderBase &B, Expr E) {
  Interval R = rangeOf(E);
  if (R.isPoint() && fits(R))
    return constant(R.Lo);
  return visit(E, B);
}

Value *ExprEmitter::visitConstant(Expr E, IRBuilderBase &) {
  return constant(E.value());
}

Value *ExprEmitter::visitVariable(Expr E, IRBuilderBase &B) {
  unsigned P = E.position();
  const std::vector<Value *> &Vals = E.isDim() ? Dims : Syms;
  assert(P < Vals.size() && Vals[P] && "no value given for a used variable");
  Value *V = Vals[P];
  assert(V->getType()->isIntegerTy() && "variables must be integers");
  bool NonNeg = Ranges.map().bound(E).Lo >= 0;
  return castToIndex(B, V, IndexTy, NonNeg);
}

//===----------------------------------------------------------------------===//
// Sums and products
//===----------------------------------------------------------------------===//

namespace {

/// Flattens nested sums into terms `Base * Coeff` and a constant. Returns
/// false if the constant overflows.
bool flattenSum(Expr E, std::vector<std::pair<Expr, int64_t>> &Terms,
                int64_t &Const) {
  switch (E.kind()) {
  case ExprKind::Add:
    return flattenSum(E.lhs(), Terms, Const) &&
           flattenSum(E.rhs(), Terms, Const);
  case ExprKind::Constant: {
    auto S = checkedAdd(Const, E.value());
    if (!S)
      return false;
    Const = *S;
    return true;
  }
  case ExprKind::Mul:
    if (E.rhs().isConstant()) {
      Terms.push_back({E.lhs(), E.rhs().value()});
      return true;
    }
    [[fallthrough]];
  default:
    Terms.push_back({E, 1});
    return true;
  }
}

} // namespace

Value *ExprEmitter::visitAdd(Expr E, IRBuilderBase &B) {
  std::vector<std::pair<Expr, int64_t>> Flat;
  int64_t Const = 0;
  if (!flattenSum(E, Flat, Const)) {
    Flat.clear();
    Flat.push_back({E.lhs(), 1});
    Flat.push_back({E.rhs(), 1});
    Const = 0;
  }
  std::vector<Term> Inv, Var;
  for (auto &[Base, Coeff] : Flat)
    (isInvariant(Base) ? Inv : Var).push_back({Base, Coeff});
  // Positive coefficients first, so that negative ones become subtractions.
  auto PositiveFirst = [](std::vector<Term> &Ts) {
    std::stable_partition(Ts.begin(), Ts.end(),
                          [](const Term &T) { return T.Coeff > 0; });
  };
  PositiveFirst(Inv);
  PositiveFirst(Var);

  Value *Acc = nullptr;
  Interval AccRange = Interval::point(0);
  if (!Inv.empty() && !Var.empty()) {
    // One hoisted partial sum of the invariant terms.
    Expr InvSum;
    for (const Term &T : Inv) {
      Expr Part = T.Coeff == 1 ? T.Base : T.Base * T.Coeff;
      InvSum = InvSum ? InvSum + Part : Part;
    }
    Acc = emit(B, InvSum);
    AccRange = rangeOf(InvSum);
  } else {
    Acc = emitTerms(B, Inv, Acc, AccRange, Const);
  }
  Acc = emitTerms(B, Var, Acc, AccRange, Const);
  if (Const != 0) {
    if (!Acc)
      return constant(Const);
    Interval NewRange = AccRange + Const;
    bool NSW = UseFacts && fits(AccRange) && fits(NewRange);
    bool NUW = NSW && AccRange.Lo >= 0 && Const >= 0;
    Acc = B.CreateAdd(Acc, constant(Const), "", NUW, NSW);
  }
  return Acc ? Acc : constant(0);
}

Value *ExprEmitter::emitTerms(IRBuilderBase &B, ArrayRef<Term> Terms,
                              Value *Acc, Interval &AccRange, int64_t &Const) {
  for (const Term &T : Terms) {
    Value *X = emit(B, T.Base);
    if (auto *CI = llvm::dyn_cast<llvm::ConstantInt>(X)) {
      auto Part = checkedMul(CI->getSExtValue(), T.Coeff);
      auto Sum = Part ? checkedAdd(Const, *Part) : std::nullopt;
      if (Sum) {
        Const = *Sum;
        continue;
      }
    }
    Interval XR = rangeOf(T.Base);
    bool Subtract = Acc && T.Coeff < 0 &&
                    T.Coeff != std::numeric_limits<int64_t>::min();
    int64_t K = Subtract ? -T.Coeff : T.Coeff;
    Value *TV = X;
    Interval TR = XR;
    if (K != 1) {
      TR = XR * K;
      bool NSW = UseFacts && fits(XR) && fits(TR);
      bool NUW = NSW && XR.Lo >= 0 && K >= 0;
      TV = B.CreateMul(X, constant(K), "", NUW, NSW);
    }
    if (!Acc) {
      Acc = TV;
      AccRange = TR;
      continue;
    }
    Interval NewRange = Subtract ? AccRange - TR : AccRange + TR;
    bool NSW = UseFacts && fits(AccRange) && fits(TR) && fits(NewRange);
    if (Subtract) {
      bool NUW = NSW && TR.Lo >= 0 && NewRange.Lo >= 0;
      Acc = B.CreateSub(Acc, TV, "", NUW, NSW);
    } else {
      bool NUW = NSW && AccRange.Lo >= 0 && TR.Lo >= 0;
      Acc = B.CreateAdd(Acc, TV, "", NUW, NSW);
    }
    AccRange = NewRange;
  }
  return Acc;
}

Value *ExprEmitter::visitMul(Expr E, IRBuilderBase &B) {
  Value *L = emit(B, E.lhs());
  Value *R = emit(B, E.rhs());
  Interval LR = rangeOf(E.lhs()), RR = rangeOf(E.rhs());
  Interval P = LR * RR;
  bool NSW = UseFacts && fits(LR) && fits(RR) && fits(P);
  bool NUW = NSW && LR.Lo >= 0 && RR.Lo >= 0;
  return B.CreateMul(L, R, "", NUW, NSW);
}

//===----------------------------------------------------------------------===//
// Division and remainder
//===----------------------------------------------------------------------===//

Value *ExprEmitter::emitFloorDivByPositive(IRBuilderBase &B, Value *A,
                                           Interval ARange, Value *Divisor,
                                           int64_t C) {
  // C is the constant divisor, or 0 for a run-time divisor known positive.
  // No `exact` flag even where the facts prove the division exact: those
  // facts hold inside the domain (under a pad's bounds and stride test, say),
  // LLVM hoists the division out of that test keeping the flag, and the
  // SelectionDAG then folds the test's own `urem` from the exact quotient,
  // so the test became always true (a pad with interior padding read its
  // operand at every position; found by the host simulator, random loop
  // fusion seed 10132).
  Value *D = Divisor ? Divisor : constant(C);
  if (!ARange.isEmpty() && ARange.Lo >= 0) {
    if (isPowerOfTwo(C))
      return B.CreateLShr(A, constant(log2Exact(C)));
    return B.CreateUDiv(A, D);
  }
  if (isPowerOfTwo(C))
    return B.CreateAShr(A, constant(log2Exact(C)));
  Value *S = B.CreateAShr(A, constant(Bits - 1));
  Value *Q = B.CreateUDiv(B.CreateXor(A, S), D);
  return B.CreateXor(Q, S);
}

Value *ExprEmitter::emitSignedDivCorrected(IRBuilderBase &B, Value *A,
                                           Interval ARange, Value *D,
                                           Interval DRange, bool Ceil,
                                           bool Mod) {
  // Avoid LLVM's undefined cases (division by zero, MIN / -1); the Expr has
  // no value there, so any result will do.
  bool MayBeZero = DRange.isEmpty() || DRange.contains(0);
  bool MayOverflow = (ARange.isEmpty() || ARange.Lo <= typeMin(Bits)) &&
                     (DRange.isEmpty() || DRange.contains(-1));
  Value *SafeD = D;
  if (MayBeZero || MayOverflow) {
    Value *Bad = B.getFalse();
    if (MayBeZero)
      Bad = B.CreateICmpEQ(D, constant(0));
    if (MayOverflow)
      Bad = B.CreateOr(Bad, B.CreateAnd(B.CreateICmpEQ(A, constant(typeMin(Bits))),
                                        B.CreateICmpEQ(D, constant(-1))));
    SafeD = B.CreateSelect(Bad, constant(1), D);
  }
  Value *R = B.CreateSRem(A, SafeD);
  Value *NonZero = B.CreateICmpNE(R, constant(0));
  // sign(r) != sign(d)  <=>  (r ^ d) < 0.
  Value *SignsDiffer = B.CreateICmpSLT(B.CreateXor(R, SafeD), constant(0));
  if (Mod) {
    Value *Fix = B.CreateAnd(NonZero, SignsDiffer);
    return B.CreateSelect(Fix, B.CreateAdd(R, SafeD), R);
  }
  Value *Q = B.CreateSDiv(A, SafeD);
  if (Ceil) {
    Value *Fix = B.CreateAnd(NonZero, B.CreateNot(SignsDiffer));
    return B.CreateAdd(Q, B.CreateZExt(Fix, IndexTy));
  }
  Value *Fix = B.CreateAnd(NonZero, SignsDiffer);
  return B.CreateSub(Q, B.CreateZExt(Fix, IndexTy));
}

Value *ExprEmitter::visitDiv(Expr E, IRBuilderBase &B) {
  bool Ceil = E.kind() == ExprKind::CeilDiv;
  Expr AE = E.lhs(), DE = E.rhs();
  Interval AR = rangeOf(AE);
  Value *A = emit(B, AE);
  if (!DE.isConstant()) {
    Interval DR = rangeOf(DE);
    Value *D = emit(B, DE);
    if (!Ceil && !DR.isEmpty() && DR.Lo > 0)
      return emitFloorDivByPositive(B, A, AR, D, 0);
    return emitSignedDivCorrected(B, A, AR, D, DR, Ceil, /*Mod=*/false);
  }
  int64_t C = DE.value();
  assert(C != 0 && "division by the constant zero");
  assert(fits(Interval::point(C)) && "divisor does not fit the index type");
  if (C == 1)
    return A;
  int64_t ADiv = divisorOf(AE);
  if (C == -1) {
    bool NSW = UseFacts && fits(AR) && fits(-AR);
    return B.CreateSub(constant(0), A, "", false, NSW);
  }
  if (C < 0) {
    // floor(a / c) = floor(-a / -c), same for ceil; -a must not overflow.
    if (AR.isEmpty() || AR.Lo <= typeMin(Bits) || !fits(AR))
      return emitSignedDivCorrected(B, A, AR, constant(C), Interval::point(C),
                                    Ceil, /*Mod=*/false);
    A = B.CreateSub(constant(0), A, "", false, UseFacts);
    AR = -AR;
    C = -C;
  }
  if (!Ceil)
    return emitFloorDivByPositive(B, A, AR, nullptr, C);
  // ceil(a / c) for c > 0.
  if (!AR.isEmpty() && AR.Lo >= 0 && UseFacts && ADiv % C == 0)
    return emitFloorDivByPositive(B, A, AR, nullptr, C); // exact
  Interval Shifted = AR + (C - 1);
  if (fits(AR) && fits(Shifted)) {
    Value *T = B.CreateAdd(A, constant(C - 1), "", UseFacts && AR.Lo >= 0,
                           UseFacts);
    return emitFloorDivByPositive(B, T, Shifted, nullptr, C);
  }
  if (fits(AR) && AR.Lo > typeMin(Bits)) {
    Value *N = B.CreateSub(constant(0), A, "", false, UseFacts);
    Value *Q = emitFloorDivByPositive(B, N, -AR, nullptr, C);
    return B.CreateSub(constant(0), Q, "", false, UseFacts);
  }
  return emitSignedDivCorrected(B, A, AR, constant(C), Interval::point(C),
                                /*Ceil=*/true, /*Mod=*/false);
}

Value *ExprEmitter::visitMod(Expr E, IRBuilderBase &B) {
  Expr AE = E.lhs(), ME = E.rhs();
  Interval AR = rangeOf(AE);
  Value *A = emit(B, AE);
  if (!ME.isConstant()) {
    Interval MR = rangeOf(ME);
    Value *M = emit(B, ME);
    if (!AR.isEmpty() && AR.Lo >= 0 && !MR.isEmpty() && MR.Lo > 0)
      return B.CreateURem(A, M);
    return emitSignedDivCorrected(B, A, AR, M, MR, /*Ceil=*/false,
                                  /*Mod=*/true);
  }
  int64_t C = ME.value();
  assert(C != 0 && "mod by the constant zero");
  assert(fits(Interval::point(C)) && "divisor does not fit the index type");
  if (C == 1 || C == -1)
    return constant(0);
  if (C > 0) {
    if (isPowerOfTwo(C))
      return B.CreateAnd(A, constant(C - 1));
    if (!AR.isEmpty() && AR.Lo >= 0) {
      // Within one period [k c, k c + c - 1]: a - k c.
      int64_t K = AR.Lo / C;
      if (AR.Hi / C == K)
        return K == 0 ? A
                      : B.CreateSub(A, constant(K * C), "", UseFacts,
                                    UseFacts);
      return B.CreateURem(A, constant(C));
    }
    Value *R = B.CreateSRem(A, constant(C));
    return B.CreateSelect(B.CreateICmpSLT(R, constant(0)),
                          B.CreateAdd(R, constant(C)), R);
  }
  // c < 0: the result lies in [c + 1, 0]; srem has the sign of a.
  Value *R = B.CreateSRem(A, constant(C));
  return B.CreateSelect(B.CreateICmpSGT(R, constant(0)),
                        B.CreateAdd(R, constant(C)), R);
}

//===----------------------------------------------------------------------===//
// Free functions
//===----------------------------------------------------------------------===//

Value *emitIndexExpr(IRBuilderBase &B, Expr E, ArrayRef<Value *> Dims,
                     ArrayRef<Value *> Syms, RangeEvaluator &Ranges,
                     Type *IndexTy) {
  ExprEmitter EE(Ranges, IndexTy, Dims, Syms);
  return EE.emit(B, E);
}

namespace {

/// Every result of \p Map emitted with the ranges \p RE (of an equal map).
std::vector<Value *> emitResults(IRBuilderBase &B, const IndexingMap &Map,
                                 ArrayRef<Value *> Dims, ArrayRef<Value *> Syms,
                                 RangeEvaluator &RE, Type *IndexTy) {
  std::vector<Value *> Out;
  for (Expr E : Map.results())
    Out.push_back(emitIndexExpr(B, E, Dims, Syms, RE, IndexTy));
  return Out;
}

} // namespace

std::vector<Value *> emitIndexExprs(IRBuilderBase &B, const IndexingMap &Map,
                                    ArrayRef<Value *> Dims,
                                    ArrayRef<Value *> Syms, Type *IndexTy) {
  RangeEvaluator RE(Map);
  return emitResults(B, Map, Dims, Syms, RE, IndexTy);
}

RangeEvaluator &RangeCache::of(const IndexingMap &Map) {
  for (Entry &E : Entries)
    if (*E.Map == Map)
      return *E.Ranges;
  Entry E;
  E.Map = std::make_unique<IndexingMap>(Map);
  E.Ranges = std::make_unique<RangeEvaluator>(*E.Map);
  Entries.push_back(std::move(E));
  return *Entries.back().Ranges;
}

std::vector<Value *> emitIndexExprs(IRBuilderBase &B, RangeCache &Ranges,
                                    const IndexingMap &Map,
                                    ArrayRef<Value *> Dims,
                                    ArrayRef<Value *> Syms, Type *IndexTy) {
  return emitResults(B, Map, Dims, Syms, Ranges.of(Map), IndexTy);
}

namespace {

/// i1 for `Lo <= V <= Hi` given that V lies in \p VR; nullptr when always
/// true. Bounds beyond the index type are clamped (V always fits the type).
Value *emitRangeCheck(IRBuilderBase &B, Value *V, Interval VR, Interval I,
                      unsigned Bits) {
  Type *Ty = V->getType();
  auto C = [&](int64_t X) {
    return ConstantInt::get(Ty, uint64_t(X), /*isSigned=*/true);
  };
  if (I.isEmpty() || I.Lo > typeMax(Bits) || I.Hi < typeMin(Bits))
    return B.getFalse();
  if (VR.isEmpty() || VR.isFull() || VR.Lo < typeMin(Bits))
    VR.Lo = typeMin(Bits);
  if (VR.isEmpty() || VR.isFull() || VR.Hi > typeMax(Bits))
    VR.Hi = typeMax(Bits);
  bool NeedLo = VR.Lo < I.Lo, NeedHi = VR.Hi > I.Hi;
  if (!NeedLo && !NeedHi)
    return nullptr;
  if (NeedLo && NeedHi) {
    if (I.isPoint())
      return B.CreateICmpEQ(V, C(I.Lo));
    // Lo <= V <= Hi  <=>  (V - Lo) <=u (Hi - Lo), modulo 2^N.
    return B.CreateICmpULE(B.CreateSub(V, C(I.Lo)),
                           C(int64_t(uint64_t(I.Hi) - uint64_t(I.Lo))));
  }
  if (NeedLo)
    return B.CreateICmpSGE(V, C(I.Lo));
  return B.CreateICmpSLE(V, C(I.Hi));
}

} // namespace

Value *emitDomainCheck(IRBuilderBase &B, const IndexingMap &Map,
                       ArrayRef<Value *> Dims, ArrayRef<Value *> Syms,
                       Type *IndexTy, const DomainCheckOptions &Opts) {
  assert(!Map.isUndefined() && "domain check of an undefined map");
  if (Map.isKnownEmpty())
    return B.getFalse();
  unsigned Bits = IndexTy->getIntegerBitWidth();
  Value *Acc = nullptr;
  auto And = [&](Value *Check) {
    if (!Check)
      return;
    // Short-circuit form: a later check's poison cannot leak through a
    // failed earlier check.
    Acc = Acc ? B.CreateSelect(Acc, Check, B.getFalse()) : Check;
  };

  // Bounds of the variables, for the values the caller says they can take.
  auto CheckVars = [&](ArrayRef<Value *> Vals,
                       const std::vector<Interval> &ValueRanges,
                       unsigned FlatBase, unsigned Count) {
    for (unsigned I = 0; I < Count; ++I) {
      const Interval &Bound = Map.var(FlatBase + I).Bound;
      if (Bound.isEmpty()) {
        And(B.getFalse());
        continue;
      }
      if (I >= Vals.size() || !Vals[I])
        continue; // Not given: assumed within its bound.
      Interval VR = I < ValueRanges.size() ? ValueRanges[I] : Interval::full();
      Value *V = castToIndex(B, Vals[I], IndexTy,
                             !VR.isEmpty() && !VR.isFull() && VR.Lo >= 0);
      And(emitRangeCheck(B, V, VR, Bound, Bits));
    }
  };
  CheckVars(Dims, Opts.DimValueRanges, 0, Map.numDims());
  CheckVars(Syms, Opts.SymValueRanges, Map.numDims(), Map.numSymbols());

  // Constraints, lowered with the bounds' facts only.
  if (!Map.constraints().empty()) {
    RangeEvaluator NoConstraints(Map, /*UseConstraints=*/false);
    ExprEmitter EE(NoConstraints, IndexTy, Dims, Syms);
    for (const Constraint &C : Map.constraints()) {
      Interval R = NoConstraints.range(C.E);
      if (!R.isEmpty() && !R.isFull() && C.I.contains(R))
        continue; // Always holds within the bounds.
      Value *V = EE.emit(B, C.E);
      And(emitRangeCheck(B, V, R, C.I, Bits));
    }
  }
  return Acc ? Acc : B.getTrue();
}

} // namespace codegen
} // namespace idxmap
