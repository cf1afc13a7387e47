//===- LowerTest.cpp - Expression and elementwise lowering ----------------===//
//
// Part of idxmap. CPU tests (no GPU needed) of ExprCodegen and
// ElementwiseCodegen:
//   - ExprCodegen: random maps and expressions (negative ranges, constraints,
//     symbolic divisors) are emitted in i64 and, where mapFitsInI32, in i32;
//     a small interpreter of the integer IR, which treats `nsw`/`nuw`/`exact`
//     violations as poison and division by zero as undefined behaviour,
//     checks every point of the domain against Expr::evaluate. Domain checks
//     are compared with IndexingMap::contains on a box larger than the
//     bounds; hoisting is checked for placement and dominance.
//   - ElementwiseCodegen: every op/type kernel assembles with ptxas -arch=sm_90
//     (skipped without ptxas); PTX patterns of the fast-math forms and of the
//     index lowering; every exactly-lowered op is constant-folded by LLVM on
//     the special-value grid and random values and compared bit for bit with
//     the reference interpreter; reducers likewise.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseCodegen.h"
#include "ExprCodegen.h"
#include "KernelBuilder.h"
#include "LowerKernels.h"

#include "idxmap/Codegen.h"
#include "idxmap/Context.h"
#include "idxmap/HloInterpreter.h"
#include "idxmap/Print.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Analysis/ConstantFolding.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;
using namespace idxmap;
using namespace idxmap::codegen;
using namespace idxmap::codegen::lowertest;

namespace {

//===----------------------------------------------------------------------===//
// A tiny interpreter of the integer IR that ExprCodegen emits
//===----------------------------------------------------------------------===//

struct IVal {
  APInt V;
  bool Poison = false;
};

class MiniInterp {
public:
  /// Runs \p F on \p Args (sign-extended to each argument's width). Returns
  /// the returned value, or nullopt with error() set on undefined behaviour
  /// or an instruction it does not know.
  std::optional<IVal> run(Function &F, ArrayRef<int64_t> Args) {
    Env.clear();
    Error.clear();
    for (Argument &A : F.args())
      Env[&A] = {APInt(A.getType()->getIntegerBitWidth(),
                       uint64_t(Args[A.getArgNo()]), /*isSigned=*/true),
                 false};
    for (BasicBlock &BB : F)
      for (Instruction &I : BB) {
        if (auto *R = dyn_cast<ReturnInst>(&I))
          return get(R->getReturnValue());
        if (isa<BranchInst>(&I))
          continue; // straight-line blocks, in order
        IVal Out;
        if (!step(I, Out))
          return std::nullopt;
        Env[&I] = Out;
      }
    Error = "no return";
    return std::nullopt;
  }
  const std::string &error() const { return Error; }

private:
  IVal get(Value *V) {
    if (auto *CI = dyn_cast<ConstantInt>(V))
      return {CI->getValue(), false};
    if (isa<UndefValue>(V)) // includes poison
      return {APInt(V->getType()->getIntegerBitWidth(), 0), true};
    auto It = Env.find(V);
    assert(It != Env.end() && "use before definition");
    return It->second;
  }

  bool fail(const Instruction &I, const char *Why) {
    std::string S;
    raw_string_ostream OS(S);
    OS << Why << ": " << I;
    Error = OS.str();
    return false;
  }

  bool step(Instruction &I, IVal &Out) {
    if (auto *BO = dyn_cast<BinaryOperator>(&I)) {
      IVal A = get(BO->getOperand(0)), B = get(BO->getOperand(1));
      unsigned W = A.V.getBitWidth();
      bool Poison = A.Poison || B.Poison;
      bool NSW = isa<OverflowingBinaryOperator>(BO) && BO->hasNoSignedWrap();
      bool NUW = isa<OverflowingBinaryOperator>(BO) && BO->hasNoUnsignedWrap();
      bool Exact = isa<PossiblyExactOperator>(BO) && BO->isExact();
      bool SO = false, UO = false;
      APInt R;
      switch (BO->getOpcode()) {
      case Instruction::Add:
        R = A.V.sadd_ov(B.V, SO);
        (void)A.V.uadd_ov(B.V, UO);
        break;
      case Instruction::Sub:
        R = A.V.ssub_ov(B.V, SO);
        (void)A.V.usub_ov(B.V, UO);
        break;
      case Instruction::Mul:
        R = A.V.smul_ov(B.V, SO);
        (void)A.V.umul_ov(B.V, UO);
        break;
      case Instruction::UDiv:
      case Instruction::SDiv:
      case Instruction::URem:
      case Instruction::SRem: {
        if (B.Poison || B.V.isZero())
          return fail(I, "division by zero or poison");
        bool Signed = BO->getOpcode() == Instruction::SDiv ||
                      BO->getOpcode() == Instruction::SRem;
        if (Signed && (A.Poison || (A.V.isMinSignedValue() && B.V.isAllOnes())))
          return fail(I, "signed division overflow");
        switch (BO->getOpcode()) {
        case Instruction::UDiv:
          R = A.V.udiv(B.V);
          Poison |= Exact && !A.V.urem(B.V).isZero();
          break;
        case Instruction::SDiv:
          R = A.V.sdiv(B.V);
          Poison |= Exact && !A.V.srem(B.V).isZero();
          break;
        case Instruction::URem:
          R = A.V.urem(B.V);
          break;
        default:
          R = A.V.srem(B.V);
          break;
        }
        break;
      }
      case Instruction::Shl:
      case Instruction::LShr:
      case Instruction::AShr: {
        if (B.V.uge(W)) {
          Poison = true;
          R = APInt(W, 0);
          break;
        }
        unsigned Amt = unsigned(B.V.getZExtValue());
        if (BO->getOpcode() == Instruction::Shl) {
          R = A.V.shl(Amt);
          SO = R.ashr(Amt) != A.V;
          UO = R.lshr(Amt) != A.V;
        } else {
          R = BO->getOpcode() == Instruction::LShr ? A.V.lshr(Amt)
                                                   : A.V.ashr(Amt);
          Poison |= Exact && Amt > 0 && !A.V.extractBits(Amt, 0).isZero();
        }
        break;
      }
      case Instruction::And:
        R = A.V & B.V;
        break;
      case Instruction::Or:
        R = A.V | B.V;
        break;
      case Instruction::Xor:
        R = A.V ^ B.V;
        break;
      default:
        return fail(I, "unsupported binary operator");
      }
      Poison |= (NSW && SO) || (NUW && UO);
      Out = {R, Poison};
      return true;
    }
    if (auto *C = dyn_cast<ICmpInst>(&I)) {
      IVal A = get(C->getOperand(0)), B = get(C->getOperand(1));
      Out = {APInt(1, ICmpInst::compare(A.V, B.V, C->getPredicate())),
             A.Poison || B.Poison};
      return true;
    }
    if (auto *S = dyn_cast<SelectInst>(&I)) {
      IVal C = get(S->getCondition());
      IVal T = get(S->getTrueValue()), F = get(S->getFalseValue());
      Out = C.V.isOne() ? T : F;
      Out.Poison |= C.Poison;
      return true;
    }
    if (auto *CI = dyn_cast<CastInst>(&I)) {
      IVal A = get(CI->getOperand(0));
      unsigned W = CI->getType()->getIntegerBitWidth();
      switch (CI->getOpcode()) {
      case Instruction::ZExt:
        Out = {A.V.zext(W), A.Poison || (CI->hasNonNeg() && A.V.isNegative())};
        return true;
      case Instruction::SExt:
        Out = {A.V.sext(W), A.Poison};
        return true;
      case Instruction::Trunc:
        Out = {A.V.trunc(W), A.Poison};
        return true;
      default:
        return fail(I, "unsupported cast");
      }
    }
    return fail(I, "unsupported instruction");
  }

  DenseMap<const Value *, IVal> Env;
  std::string Error;
};

//===----------------------------------------------------------------------===//
// Random maps and expressions
//===----------------------------------------------------------------------===//

struct Rng {
  uint64_t S;
  uint64_t next() {
    S += 0x9e3779b97f4a7c15ull;
    uint64_t Z = S;
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
    return Z ^ (Z >> 31);
  }
  int64_t uniform(int64_t Lo, int64_t Hi) {
    return Lo + int64_t(next() % uint64_t(Hi - Lo + 1));
  }
  bool chance(int Percent) { return uniform(0, 99) < Percent; }
};

int64_t randomDivisor(Rng &R) {
  static const int64_t Ds[] = {1, 2, 3, 4, 5, 7, 8, 16, 32, 6, -1, -2, -3, -4, -8, -7, 1000};
  return Ds[R.uniform(0, int64_t(std::size(Ds)) - 1)];
}

Expr randomExpr(Context &Ctx, Rng &R, int Depth, bool SymbolicDivisor) {
  if (Depth == 0 || R.chance(20)) {
    switch (R.uniform(0, 3)) {
    case 0:
      return Ctx.dim(0);
    case 1:
      return Ctx.dim(1);
    case 2:
      return Ctx.symbol(0);
    default:
      return Ctx.constant(R.uniform(-20, 20));
    }
  }
  Expr A = randomExpr(Ctx, R, Depth - 1, SymbolicDivisor);
  switch (R.uniform(0, 8)) {
  case 0:
  case 1:
    return A + randomExpr(Ctx, R, Depth - 1, SymbolicDivisor);
  case 2:
    return A - randomExpr(Ctx, R, Depth - 1, SymbolicDivisor);
  case 3:
    return A * R.uniform(-9, 9);
  case 4:
    return A.floorDiv(randomDivisor(R));
  case 5:
    return A.ceilDiv(randomDivisor(R));
  case 6:
    return A % randomDivisor(R);
  case 7:
    if (SymbolicDivisor)
      return R.chance(50) ? A.floorDiv(Ctx.symbol(0)) : A % Ctx.symbol(0);
    return A * randomExpr(Ctx, R, 0, false);
  default:
    if (SymbolicDivisor)
      return A.ceilDiv(Ctx.symbol(0));
    return A + R.uniform(-100, 100);
  }
}

/// A map (d0, d1)[s0] with small random bounds (often negative), a few
/// random results and maybe a constraint or two.
IndexingMap randomMap(Context &Ctx, Rng &R, bool SymbolicDivisor) {
  auto Bound = [&](bool NonZero) {
    int64_t Lo = R.uniform(-9, 5), Size = R.uniform(1, 9);
    Interval I{Lo, Lo + Size - 1};
    if (NonZero && I.contains(0))
      I = R.chance(50) ? Interval{1, 1 + Size} : Interval{-Size - 1, -1};
    return I;
  };
  std::vector<Expr> Results;
  for (int K = 0; K < 4; ++K)
    Results.push_back(randomExpr(Ctx, R, 4, SymbolicDivisor));
  IndexingMap M(Ctx, {{"", Bound(false)}, {"", Bound(false)}},
                {{"", Bound(SymbolicDivisor && R.chance(50))}}, {}, Results);
  int NC = int(R.uniform(0, 2));
  for (int K = 0; K < NC; ++K) {
    Expr E = randomExpr(Ctx, R, 2, false);
    int64_t Lo = R.uniform(-20, 10);
    M.addConstraint(E, {Lo, Lo + R.uniform(0, 30)});
  }
  return M;
}

/// Every point of the box of \p Ranges (flat order dims, symbols).
void forEachPoint(const std::vector<Interval> &Ranges,
                  const std::function<void(const std::vector<int64_t> &)> &Fn) {
  std::vector<int64_t> P(Ranges.size());
  for (size_t K = 0; K < Ranges.size(); ++K) {
    if (Ranges[K].isEmpty())
      return;
    P[K] = Ranges[K].Lo;
  }
  while (true) {
    Fn(P);
    size_t K = 0;
    for (; K < P.size(); ++K) {
      if (P[K] < Ranges[K].Hi) {
        ++P[K];
        break;
      }
      P[K] = Ranges[K].Lo;
    }
    if (K == P.size())
      return;
  }
}

/// `iN f(i64 d0, i64 d1, i64 s0)` in \p M with an entry block.
Function *makeIndexFunction(Module &M, Type *RetTy, const std::string &Name) {
  LLVMContext &Ctx = M.getContext();
  Type *I64 = Type::getInt64Ty(Ctx);
  auto *FT = FunctionType::get(RetTy, {I64, I64, I64}, false);
  Function *F = Function::Create(FT, GlobalValue::ExternalLinkage, Name, M);
  BasicBlock::Create(Ctx, "entry", F);
  return F;
}

std::string printFunction(const Function &F) {
  std::string S;
  raw_string_ostream OS(S);
  OS << F;
  return OS.str();
}

//===----------------------------------------------------------------------===//
// ExprCodegen tests
//===----------------------------------------------------------------------===//

struct ExprStats {
  int Maps = 0, Exprs = 0, I32Exprs = 0;
  int64_t Points = 0;
};

/// Emits every result of \p Map with \p Bits-bit arithmetic and compares
/// each domain point with Expr::evaluate.
void checkResults(const IndexingMap &Map, RangeEvaluator &RE, unsigned Bits,
                  ExprStats &Stats) {
  LLVMContext LC;
  Module M("exprs", LC);
  Type *IdxTy = Type::getIntNTy(LC, Bits);
  MiniInterp Interp;
  std::vector<Interval> Box;
  for (unsigned V = 0; V < Map.numVars(); ++V)
    Box.push_back(Map.var(V).Bound);
  for (unsigned R = 0; R < Map.numResults(); ++R) {
    Expr E = Map.result(R);
    Function *F = makeIndexFunction(M, IdxTy, "r" + std::to_string(R));
    IRBuilder<> B(&F->getEntryBlock());
    Value *V =
        emitIndexExpr(B, E, {F->getArg(0), F->getArg(1)}, {F->getArg(2)}, RE,
                      IdxTy);
    B.CreateRet(V);
    ASSERT_FALSE(verifyFunction(*F, &errs()));
    ++Stats.Exprs;
    Stats.I32Exprs += Bits == 32;
    forEachPoint(Box, [&](const std::vector<int64_t> &P) {
      if (!Map.contains(P))
        return;
      auto Want = E.evaluate({P[0], P[1]}, {P[2]});
      if (!Want)
        return; // division by zero or overflow: no value
      ++Stats.Points;
      auto Got = Interp.run(*F, P);
      ASSERT_TRUE(Got) << Interp.error() << "\nmap: " << printMap(Map)
                       << "\n" << printFunction(*F);
      ASSERT_FALSE(Got->Poison)
          << "poison at (" << P[0] << ", " << P[1] << ", " << P[2] << ")\n"
          << printFunction(*F);
      ASSERT_EQ(Got->V.getSExtValue(), *Want)
          << "at (" << P[0] << ", " << P[1] << ", " << P[2] << ") i" << Bits
          << " of " << printExpr(E) << "\nmap: " << printMap(Map) << "\n"
          << printFunction(*F);
    });
  }
}

void runRandomExprTest(uint64_t Seed, int NumMaps, bool SymbolicDivisor,
                       ExprStats &Stats) {
  Rng R{Seed};
  for (int K = 0; K < NumMaps; ++K) {
    Context Ctx;
    IndexingMap Map = randomMap(Ctx, R, SymbolicDivisor);
    if (Map.isKnownEmpty())
      continue;
    ++Stats.Maps;
    for (bool UseConstraints : {true, false}) {
      RangeEvaluator RE(Map, UseConstraints);
      checkResults(Map, RE, 64, Stats);
      if (::testing::Test::HasFatalFailure())
        return;
      if (mapFitsInI32(Map, RE))
        checkResults(Map, RE, 32, Stats);
      if (::testing::Test::HasFatalFailure())
        return;
    }
  }
}

TEST(ExprCodegen, RandomExpressionsAreExactInI64AndI32) {
  ExprStats S;
  runRandomExprTest(1, 200, /*SymbolicDivisor=*/false, S);
  // Guard against a vacuous run.
  EXPECT_GT(S.Points, 50000);
  EXPECT_GT(S.I32Exprs, 500);
  std::printf("[ info ] %d maps, %d expressions (%d in i32), %lld points\n",
              S.Maps, S.Exprs, S.I32Exprs, (long long)S.Points);
}

TEST(ExprCodegen, SymbolicDivisorsAreExact) {
  ExprStats S;
  runRandomExprTest(2, 100, /*SymbolicDivisor=*/true, S);
  EXPECT_GT(S.Points, 10000);
}

TEST(ExprCodegen, ExtremeRangesStayExactInI64) {
  // Dividends near the int64 limits: the sign-xor floordiv and the ceildiv
  // fallbacks must not overflow.
  Context Ctx;
  Expr D0 = Ctx.dim(0);
  const int64_t Min = std::numeric_limits<int64_t>::min();
  const int64_t Max = std::numeric_limits<int64_t>::max();
  IndexingMap Map(Ctx, {{"", {Min, Min + 20}}, {"", {Max - 20, Max}}},
                  {{"", {-3, 3}}}, {},
                  {D0.floorDiv(7), D0.ceilDiv(7), D0 % 7, D0.floorDiv(-7),
                   D0.ceilDiv(-5), Ctx.dim(1).ceilDiv(7), Ctx.dim(1).floorDiv(-3),
                   Ctx.dim(1) % 6, Ctx.dim(1).ceilDiv(-6), D0.floorDiv(8),
                   D0.ceilDiv(8)});
  RangeEvaluator RE(Map);
  LLVMContext LC;
  Module M("extreme", LC);
  MiniInterp Interp;
  for (unsigned R = 0; R < Map.numResults(); ++R) {
    Expr E = Map.result(R);
    Function *F =
        makeIndexFunction(M, Type::getInt64Ty(LC), "r" + std::to_string(R));
    IRBuilder<> B(&F->getEntryBlock());
    B.CreateRet(emitIndexExpr(B, E, {F->getArg(0), F->getArg(1)},
                              {F->getArg(2)}, RE, B.getInt64Ty()));
    for (int64_t K = 0; K <= 20; ++K) {
      std::vector<int64_t> P = {Min + K, Max - K, 0};
      auto Want = E.evaluate({P[0], P[1]}, {0});
      ASSERT_TRUE(Want);
      auto Got = Interp.run(*F, P);
      ASSERT_TRUE(Got) << Interp.error();
      ASSERT_FALSE(Got->Poison) << printFunction(*F);
      EXPECT_EQ(Got->V.getSExtValue(), *Want) << printFunction(*F);
    }
  }
}

TEST(ExprCodegen, ReassociatedSumsSetNoWrapFlagsOnlyWhenSafe) {
  // -s0 + d0 + d1 with every variable near 2^62: the value fits in int64,
  // but the reordered partial sum d0 + d1 (positive terms first) does not,
  // so it must not carry `nsw` (the interpreter would see poison).
  Context Ctx;
  const int64_t Big = int64_t(1) << 62;
  IndexingMap Map(Ctx, {{"", {Big, Big + 5}}, {"", {Big, Big + 5}}},
                  {{"", {Big, Big + 5}}}, {},
                  {Ctx.symbol(0) * -1 + Ctx.dim(0) + Ctx.dim(1),
                   Ctx.dim(0) - Ctx.symbol(0) + Ctx.dim(1) * 1});
  LLVMContext LC;
  Module M("sums", LC);
  MiniInterp Interp;
  int Checked = 0;
  for (bool Hoist : {false, true}) {
    RangeEvaluator RE(Map);
    for (unsigned R = 0; R < Map.numResults(); ++R) {
      Function *F = makeIndexFunction(M, Type::getInt64Ty(LC), "s");
      BasicBlock *Body = BasicBlock::Create(LC, "body", F);
      IRBuilder<> B(&F->getEntryBlock());
      Instruction *Br = B.CreateBr(Body);
      B.SetInsertPoint(Body);
      ExprEmitter EE(RE, B.getInt64Ty(), {F->getArg(0), F->getArg(1)},
                     {F->getArg(2)});
      if (Hoist) // d1 and s0 invariant, d0 not
        EE.setInvariantVariables({false, true}, {true}, Br);
      B.CreateRet(EE.emit(B, Map.result(R)));
      ASSERT_FALSE(verifyFunction(*F, &errs()));
      for (int64_t K = 0; K <= 5; ++K) {
        std::vector<int64_t> P = {Big + K, Big + 5 - K, Big + K / 2};
        auto Want = Map.result(R).evaluate({P[0], P[1]}, {P[2]});
        ASSERT_TRUE(Want) << printExpr(Map.result(R));
        auto Got = Interp.run(*F, P);
        ASSERT_TRUE(Got) << Interp.error();
        ASSERT_FALSE(Got->Poison) << printFunction(*F);
        EXPECT_EQ(Got->V.getSExtValue(), *Want);
        ++Checked;
      }
      F->eraseFromParent();
    }
  }
  EXPECT_EQ(Checked, 24);
}

TEST(ExprCodegen, ChoosesCheapForms) {
  Context Ctx;
  Expr D0 = Ctx.dim(0);
  // d0 in [0, 255] (a thread id), d1 in [-100, 100].
  IndexingMap Map(Ctx, {{"", {0, 255}}, {"", {-100, 100}}}, {{"", {1, 9}}},
                  {}, {});
  RangeEvaluator RE(Map);
  LLVMContext LC;
  Module M("forms", LC);
  auto Emit = [&](Expr E) {
    Function *F = makeIndexFunction(M, Type::getInt32Ty(LC), "f");
    IRBuilder<> B(&F->getEntryBlock());
    B.CreateRet(emitIndexExpr(B, E, {F->getArg(0), F->getArg(1)},
                              {F->getArg(2)}, RE, B.getInt32Ty()));
    std::string S = printFunction(*F);
    F->eraseFromParent();
    return S;
  };
  Expr D1 = Ctx.dim(1);
  EXPECT_NE(Emit(D0.floorDiv(8)).find("lshr i32"), std::string::npos);
  EXPECT_NE(Emit(D1.floorDiv(8)).find("ashr i32"), std::string::npos);
  EXPECT_NE(Emit(D0 % 8).find("and i32"), std::string::npos);
  EXPECT_NE(Emit(D1 % 8).find("and i32"), std::string::npos);
  EXPECT_NE(Emit(D0.floorDiv(7)).find("udiv i32"), std::string::npos);
  EXPECT_NE(Emit(D0 % 7).find("urem i32"), std::string::npos);
  std::string Neg = Emit(D1.floorDiv(7));
  EXPECT_EQ(Neg.find("sdiv"), std::string::npos) << Neg;
  EXPECT_NE(Neg.find("xor i32"), std::string::npos) << Neg;
  EXPECT_NE(Emit(D1 % 7).find("srem i32"), std::string::npos);
  // (d0 * 4) floordiv 4 is exact, but no division carries `exact`: the
  // divisibility may hold only under a guard the division is hoisted out of
  // (ExprCodegen.cpp, emitFloorDivByPositive).
  std::string Div = Emit((D0 * 4 + Ctx.symbol(0) * 8).floorDiv(4));
  EXPECT_NE(Div.find("lshr"), std::string::npos) << Div;
  EXPECT_EQ(Div.find("exact"), std::string::npos) << Div;
  // No-wrap flags where the ranges allow them.
  EXPECT_NE(Emit(D0 * 4 + D1).find("add nsw"), std::string::npos);
  EXPECT_NE(Emit(D0 * 4).find("mul nuw nsw"), std::string::npos);
  // A point range is a constant.
  EXPECT_NE(Emit(D0.floorDiv(256)).find("ret i32 0"), std::string::npos);
}

TEST(ExprCodegen, FitsInI32) {
  Context Ctx;
  Expr D0 = Ctx.dim(0);
  IndexingMap Map(Ctx, {{"", {0, 1 << 20}}}, {}, {}, {D0 * 1024});
  RangeEvaluator RE(Map);
  EXPECT_TRUE(fitsInI32(D0 * 1024, RE));
  EXPECT_FALSE(fitsInI32(D0 * 4096, RE));
  EXPECT_FALSE(fitsInI32((D0 * 4096).floorDiv(3), RE)); // inner node too big
  EXPECT_TRUE(fitsInI32(D0.floorDiv(3), RE));
  EXPECT_TRUE(mapFitsInI32(Map, RE));
  IndexingMap Big(Ctx, {{"", {0, 1 << 20}}}, {}, {}, {D0 * 8192});
  RangeEvaluator RB(Big);
  EXPECT_FALSE(mapFitsInI32(Big, RB));
}

TEST(ExprCodegen, DomainCheckMatchesContains) {
  Rng R{7};
  int64_t Points = 0, Inside = 0;
  for (int K = 0; K < 150; ++K) {
    Context Ctx;
    IndexingMap Map = randomMap(Ctx, R, false);
    if (Map.isKnownEmpty())
      continue;
    // The variables' run-time values range 3 beyond their bounds.
    DomainCheckOptions Opts;
    std::vector<Interval> Box;
    for (unsigned V = 0; V < Map.numVars(); ++V) {
      Interval B = Map.var(V).Bound;
      Box.push_back({B.Lo - 3, B.Hi + 3});
    }
    Opts.DimValueRanges = {Box[0], Box[1]};
    Opts.SymValueRanges = {Box[2]};
    RangeEvaluator RE(Map);
    for (unsigned Bits : {64u, 32u}) {
      if (Bits == 32 && !mapFitsInI32(Map, RE))
        continue;
      LLVMContext LC;
      Module M("check", LC);
      Function *F = makeIndexFunction(M, Type::getInt1Ty(LC), "check");
      IRBuilder<> B(&F->getEntryBlock());
      B.CreateRet(emitDomainCheck(B, Map, {F->getArg(0), F->getArg(1)},
                                  {F->getArg(2)}, B.getIntNTy(Bits), Opts));
      ASSERT_FALSE(verifyFunction(*F, &errs()));
      MiniInterp Interp;
      forEachPoint(Box, [&](const std::vector<int64_t> &P) {
        auto Got = Interp.run(*F, P);
        ASSERT_TRUE(Got) << Interp.error() << "\n" << printFunction(*F);
        ASSERT_FALSE(Got->Poison) << printFunction(*F);
        bool Want = Map.contains(P);
        ++Points;
        Inside += Want;
        ASSERT_EQ(Got->V.isOne(), Want)
            << "at (" << P[0] << ", " << P[1] << ", " << P[2] << ") i" << Bits
            << "\n"
            << printFunction(*F);
      });
      if (::testing::Test::HasFatalFailure())
        return;
    }
  }
  EXPECT_GT(Inside, 5000);
  EXPECT_GT(Points - Inside, 5000);
}

TEST(ExprCodegen, DomainCheckSkipsProvenConstraintsAndBounds) {
  Context Ctx;
  Expr D0 = Ctx.dim(0);
  IndexingMap Map(Ctx, {{"", {0, 255}}}, {}, {}, {D0});
  // Always true within the bound: dropped.
  Map.addConstraint(D0.floorDiv(4), {0, 63});
  LLVMContext LC;
  Module M("skip", LC);
  Function *F = makeIndexFunction(M, Type::getInt1Ty(LC), "check");
  IRBuilder<> B(&F->getEntryBlock());
  DomainCheckOptions Opts;
  Opts.DimValueRanges = {{0, 255}};
  B.CreateRet(emitDomainCheck(B, Map, {F->getArg(0)}, {}, B.getInt32Ty(),
                              Opts));
  EXPECT_NE(printFunction(*F).find("ret i1 true"), std::string::npos)
      << printFunction(*F);
  // A tail: 1000 elements, 1024 threads: one unsigned compare.
  IndexingMap Tail(Ctx, {{"", {0, 999}}}, {}, {}, {D0});
  Function *G = makeIndexFunction(M, Type::getInt1Ty(LC), "tail");
  B.SetInsertPoint(&G->getEntryBlock());
  Opts.DimValueRanges = {{0, 1023}};
  B.CreateRet(emitDomainCheck(B, Tail, {G->getArg(0)}, {}, B.getInt32Ty(),
                              Opts));
  std::string S = printFunction(*G);
  EXPECT_NE(S.find("icmp sle i32"), std::string::npos) << S;
  EXPECT_EQ(S.find("icmp sge"), std::string::npos) << S;
}

TEST(ExprCodegen, HoistsInvariantPartsAndCachesThem) {
  Context Ctx;
  Expr D0 = Ctx.dim(0), D1 = Ctx.dim(1), S0 = Ctx.symbol(0);
  // (th, bl)[u] -> ((bl * 256 + th) * 4 + u, (bl * 256 + th) floordiv 3 + u)
  IndexingMap Map(Ctx, {{"", {0, 255}}, {"", {0, 1023}}}, {{"", {0, 3}}}, {},
                  {(D1 * 256 + D0) * 4 + S0, (D1 * 256 + D0).floorDiv(3) + S0});
  RangeEvaluator RE(Map);
  LLVMContext LC;
  Module M("hoist", LC);
  Function *F = makeIndexFunction(M, Type::getInt64Ty(LC), "f");
  BasicBlock *Entry = &F->getEntryBlock();
  BasicBlock *Body = BasicBlock::Create(LC, "body", F);
  IRBuilder<> B(Entry);
  Instruction *Br = B.CreateBr(Body);
  B.SetInsertPoint(Body);
  ExprEmitter EE(RE, B.getInt32Ty(), {F->getArg(0), F->getArg(1)}, {nullptr});
  EE.setInvariantVariables({true, true}, {false}, Br);
  Value *Sum = B.getInt64(0);
  std::vector<int64_t> Expected(2, 0);
  for (int U = 0; U < 4; ++U) {
    EE.setSymbol(0, B.getInt32(U));
    for (unsigned R = 0; R < 2; ++R)
      Sum = B.CreateAdd(Sum, B.CreateSExt(EE.emit(B, Map.result(R)),
                                          B.getInt64Ty()));
  }
  B.CreateRet(Sum);
  ASSERT_FALSE(verifyFunction(*F, &errs())) << printFunction(*F);
  // The invariant parts are in the entry block, once; the body has no
  // multiplication or division.
  unsigned EntryMuls = 0, EntryDivs = 0, BodyMulDivs = 0;
  for (Instruction &I : *Entry) {
    EntryMuls += I.getOpcode() == Instruction::Mul ||
                 I.getOpcode() == Instruction::Shl;
    EntryDivs += I.getOpcode() == Instruction::UDiv;
  }
  for (Instruction &I : *Body)
    BodyMulDivs += I.getOpcode() == Instruction::Mul ||
                   I.getOpcode() == Instruction::UDiv;
  EXPECT_GE(EntryMuls, 1u) << printFunction(*F);
  EXPECT_EQ(EntryDivs, 1u) << printFunction(*F);
  EXPECT_EQ(BodyMulDivs, 0u) << printFunction(*F);
  // The symbol given as a constant (an unrolled item) joins the sum's
  // constant: one i32 add per result and item, none for item 0.
  unsigned BodyAdds = 0;
  for (Instruction &I : *Body)
    BodyAdds +=
        I.getOpcode() == Instruction::Add && I.getType()->isIntegerTy(32);
  EXPECT_EQ(BodyAdds, 6u) << printFunction(*F);
  // Values: compare with evaluate at a few points.
  MiniInterp Interp;
  for (int64_t Th : {0, 7, 255})
    for (int64_t Bl : {0, 5, 1023}) {
      int64_t Want = 0;
      for (int64_t U = 0; U < 4; ++U)
        for (unsigned R = 0; R < 2; ++R)
          Want += *Map.result(R).evaluate({Th, Bl}, {U});
      auto Got = Interp.run(*F, {Th, Bl, 0});
      ASSERT_TRUE(Got) << Interp.error();
      EXPECT_EQ(Got->V.getSExtValue(), Want);
    }
}

TEST(ExprCodegen, RangeCacheKeepsOneEvaluatorPerMapAndTheSameIr) {
  Context Ctx;
  Expr D0 = Ctx.dim(0), S0 = Ctx.symbol(0);
  auto MakeMap = [&](int64_t Hi) {
    return IndexingMap(Ctx, {{"", {0, Hi}}}, {{"", {0, 3}}}, {},
                       {(D0 * 4 + S0).floorDiv(3), (D0 * 4 + S0) % 5});
  };
  IndexingMap A = MakeMap(255), A2 = MakeMap(255), Other = MakeMap(127);
  RangeCache Cache;
  // Equal maps (another object) share an evaluator, which works on the
  // cache's own copy; a different map gets its own.
  EXPECT_EQ(&Cache.of(A), &Cache.of(A2));
  EXPECT_NE(&Cache.of(A), &Cache.of(Other));
  EXPECT_EQ(Cache.of(A).map(), A);
  // Each point emitted through the cache is the IR a fresh evaluator gives.
  LLVMContext LC;
  Module M("cache", LC);
  auto Emit = [&](bool Cached) {
    Function *F =
        makeIndexFunction(M, Type::getInt64Ty(LC), Cached ? "cached" : "fresh");
    IRBuilder<> B(&F->getEntryBlock());
    Value *Sum = B.getInt32(0);
    for (int U = 0; U < 4; ++U)
      for (Value *V : Cached ? emitIndexExprs(B, Cache, A, {F->getArg(0)},
                                              {B.getInt32(U)}, B.getInt32Ty())
                             : emitIndexExprs(B, A, {F->getArg(0)},
                                              {B.getInt32(U)}, B.getInt32Ty()))
        Sum = B.CreateAdd(Sum, V);
    B.CreateRet(B.CreateSExt(Sum, B.getInt64Ty()));
    std::string Text = printFunction(*F);
    return Text.substr(Text.find('{'));
  };
  EXPECT_EQ(Emit(true), Emit(false));
}

//===----------------------------------------------------------------------===//
// PTX helpers
//===----------------------------------------------------------------------===//

std::string ptxasPath() { return IDXMAP_TEST_PTXAS; }
bool havePtxas() { return access(ptxasPath().c_str(), X_OK) == 0; }

/// Runs ptxas on \p Ptx; returns "" on success, else its output.
std::string runPtxas(const std::string &Ptx, const std::string &Arch) {
  char Path[] = "/tmp/idxmap-lower-XXXXXX";
  int Fd = mkstemp(Path);
  if (Fd < 0)
    return "mkstemp failed";
  close(Fd);
  std::ofstream(Path) << Ptx;
  std::string Log = std::string(Path) + ".log";
  std::string Cmd = "'" + ptxasPath() + "' -arch=" + Arch + " '" + Path +
                    "' -o /dev/null > '" + Log + "' 2>&1";
  int Status = std::system(Cmd.c_str());
  std::string Out;
  if (!(WIFEXITED(Status) && WEXITSTATUS(Status) == 0)) {
    std::ifstream In(Log);
    Out.assign(std::istreambuf_iterator<char>(In), {});
    if (Out.empty())
      Out = "ptxas failed";
  }
  std::remove(Path);
  std::remove(Log.c_str());
  return Out;
}

/// The text of `.entry Name(` up to the next `.entry` (or the end).
std::string kernelPtx(const std::string &Ptx, const std::string &Name) {
  size_t B = Ptx.find(".entry " + Name + "(");
  if (B == std::string::npos)
    return "";
  size_t E = Ptx.find(".entry ", B + 7);
  return Ptx.substr(B, E == std::string::npos ? std::string::npos : E - B);
}

bool has(const std::string &Text, const std::string &Pattern) {
  return std::regex_search(Text, std::regex(Pattern));
}

/// Builds one module holding the kernels of \p Cases and returns its PTX.
std::string emitCases(const std::vector<const OpCase *> &Cases,
                      const MathOptions &Math, const std::string &Gpu) {
  LLVMContext LC;
  Module M("ops", LC);
  idxmap::TargetOptions T;
  T.Gpu = Gpu;
  T.PreciseMath = Math.Precise;
  for (const OpCase *C : Cases)
    addOpKernel(M, *C, Math);
  auto Ptx = emitPtx(M, T);
  if (!Ptx)
    return "ERROR: " + Ptx.error().str();
  // IDXMAP_LOWER_DUMP=FILE appends every PTX module to FILE (for reading).
  if (const char *Dump = std::getenv("IDXMAP_LOWER_DUMP"))
    std::ofstream(Dump, std::ios::app) << *Ptx;
  return *Ptx;
}

//===----------------------------------------------------------------------===//
// Elementwise: ptxas and PTX patterns
//===----------------------------------------------------------------------===//

TEST(ElementwiseCodegen, CoversEveryOpTypeCombination) {
  std::vector<OpCase> Cases = allOpCases(16);
  std::map<HloOpcode, int> PerOp;
  for (const OpCase &C : Cases)
    ++PerOp[C.Root->opcode()];
  // Every elementwise opcode has a case.
  for (unsigned O = unsigned(HloOpcode::Convert);
       O <= unsigned(HloOpcode::ShiftRightArithmetic); ++O)
    EXPECT_GT(PerOp[HloOpcode(O)], 0) << opcodeName(HloOpcode(O));
  EXPECT_EQ(PerOp[HloOpcode::Convert], 13 * 12);
  EXPECT_EQ(PerOp[HloOpcode::Add], 13);
  EXPECT_EQ(PerOp[HloOpcode::Tanh], 4);
  EXPECT_EQ(PerOp[HloOpcode::ShiftLeft], 8);
  EXPECT_EQ(PerOp[HloOpcode::Compare], 13 * 6 + 4 * 6);
  std::printf("[ info ] %zu op/type cases\n", Cases.size());
}

/// \p Only: 0 every case, 1 the libdevice ones, 2 those with a float type.
void checkAllCasesAssemble(const MathOptions &Math, const std::string &Gpu,
                           int Only) {
  if (!havePtxas())
    GTEST_SKIP() << "no ptxas at " << ptxasPath();
  std::vector<OpCase> Cases = allOpCases(16);
  // Modules of up to 48 kernels, so a failure names a small group.
  std::vector<const OpCase *> Group;
  int Kernels = 0;
  auto Flush = [&] {
    if (Group.empty())
      return;
    std::string Ptx = emitCases(Group, Math, Gpu);
    ASSERT_EQ(Ptx.rfind("ERROR", 0), std::string::npos) << Ptx;
    std::string Err = runPtxas(Ptx, Gpu);
    std::string Names;
    for (const OpCase *C : Group)
      Names += C->Name + " ";
    EXPECT_EQ(Err, "") << "kernels: " << Names;
    Kernels += int(Group.size());
    Group.clear();
  };
  for (const OpCase &C : Cases) {
    bool AnyFloat = isFloatType(C.OutType);
    for (PrimitiveType T : C.InTypes)
      AnyFloat |= isFloatType(T);
    if ((Only == 1 && !needsLibdevice(*C.Root, Math)) ||
        (Only == 2 && !AnyFloat))
      continue;
    Group.push_back(&C);
    if (Group.size() == 48)
      Flush();
  }
  Flush();
  std::printf("[ info ] %d kernels passed ptxas -arch=%s (%s math)\n", Kernels,
              Gpu.c_str(), Math.Precise ? "precise" : "fast");
}

TEST(ElementwiseCodegen, EveryKernelAssemblesSm90) {
  checkAllCasesAssemble(MathOptions{}, "sm_90", 0);
}

TEST(ElementwiseCodegen, FloatKernelsAssembleWithPreciseMath) {
  checkAllCasesAssemble(MathOptions{true}, "sm_90", 1);
}

TEST(ElementwiseCodegen, FloatKernelsAssembleSm80) {
  checkAllCasesAssemble(MathOptions{}, "sm_80", 2);
}

const OpCase *findCase(const std::vector<OpCase> &Cases,
                       const std::string &Name) {
  for (const OpCase &C : Cases)
    if (C.Name == Name)
      return &C;
  return nullptr;
}

TEST(ElementwiseCodegen, PtxPatterns) {
  std::vector<OpCase> Cases = allOpCases(16);
  struct Want {
    const char *Case;
    std::vector<const char *> Present;
    std::vector<const char *> Absent;
  };
  const std::vector<Want> Fast = {
      {"tanh.f32", {"tanh\\.approx\\.f32"}, {"call", "ex2"}},
      {"tanh.bf16",
       {"cvt\\.f32\\.bf16|shl\\.b32", "tanh\\.approx\\.f32",
        "cvt\\.rn\\.bf16\\.f32"},
       {}},
      {"exponential.f32",
       {"mul(\\.rn)?\\.f32\\s+%f\\d+, %f\\d+, 0f3FB8AA3B",
        "ex2\\.approx\\.ftz\\.f32"},
       {"call"}},
      {"log.f32", {"lg2\\.approx\\.f32", "0f3F317218"}, {"call"}},
      {"logistic.f32",
       {"ex2\\.approx\\.ftz\\.f32", "(div|rcp)\\.rn\\.f32"},
       {"(div|rcp)\\.approx", "div\\.full"}},
      {"tanh.f64", {}, {"tanh\\.approx", "call"}},
      {"sine.f32", {}, {"sin\\.approx", "call"}},
      {"remainder.f32", {}, {"call"}},
      {"sqrt.f32", {"sqrt\\.approx\\.f32"}, {"sqrt\\.rn"}},
      {"rsqrt.f32",
       {"sqrt\\.approx\\.f32", "div\\.full\\.f32"},
       {"rsqrt\\.approx", "\\.rn\\.f32"}},
      {"divide.f32", {"div\\.full\\.f32"}, {"div\\.rn", "div\\.approx"}},
      {"divide.s32", {"div\\.s32"}, {}},
      {"remainder.u32", {"rem\\.u32"}, {}},
      {"divide.u64", {"div\\.u64"}, {}},
      // One max.NaN (IEEE 754-2019 maximum), no compares.
      {"maximum.f32", {"max\\.NaN\\.f32"}, {"setp\\.[a-z]+\\.f32"}},
      {"minimum.f32", {"min\\.NaN\\.f32"}, {"setp\\.[a-z]+\\.f32"}},
      {"convert.f32.s32", {"cvt\\.rzi\\.s32\\.f32"}, {}},
      {"convert.f32.bf16", {"cvt\\.rn\\.bf16\\.f32"}, {}},
      {"convert.f64.bf16",
       {"cvt\\.rn\\.f32\\.f64", "cvt\\.rn\\.bf16\\.f32"},
       {"cvt\\.rn\\.bf16\\.f64"}},
      {"round-nearest-even.f32", {"cvt\\.rni\\.f32\\.f32"}, {}},
      {"floor.f32", {"cvt\\.rmi\\.f32\\.f32"}, {}},
      {"popcnt.u32", {"popc\\.b32"}, {}},
      {"count-leading-zeros.s64", {"clz\\.b64"}, {}},
      {"shift-left.s32", {"shl\\.b32"}, {}},
      {"compare.lt.total.f32", {"setp\\.lt\\.s32"}, {"setp\\.lt\\.f32"}},
  };
  std::vector<const OpCase *> Group;
  for (const Want &W : Fast) {
    const OpCase *C = findCase(Cases, W.Case);
    ASSERT_TRUE(C) << W.Case;
    Group.push_back(C);
  }
  std::string Ptx = emitCases(Group, MathOptions{}, "sm_90");
  ASSERT_EQ(Ptx.rfind("ERROR", 0), std::string::npos) << Ptx;
  EXPECT_EQ(Ptx.find(".extern"), std::string::npos)
      << "libdevice left unresolved calls";
  for (const Want &W : Fast) {
    std::string K = kernelPtx(Ptx, kernelName(*findCase(Cases, W.Case)));
    ASSERT_FALSE(K.empty()) << W.Case;
    for (const char *P : W.Present)
      EXPECT_TRUE(has(K, P)) << W.Case << ": missing /" << P << "/\n" << K;
    for (const char *P : W.Absent)
      EXPECT_FALSE(has(K, P)) << W.Case << ": unexpected /" << P << "/\n" << K;
  }

  // --precise-math: libdevice, no approximate instructions.
  std::vector<const OpCase *> PreciseGroup = {
      findCase(Cases, "tanh.f32"),  findCase(Cases, "exponential.f32"),
      findCase(Cases, "log.f32"),   findCase(Cases, "sqrt.f32"),
      findCase(Cases, "rsqrt.f32"), findCase(Cases, "divide.f32")};
  std::string P = emitCases(PreciseGroup, MathOptions{true}, "sm_90");
  ASSERT_EQ(P.rfind("ERROR", 0), std::string::npos) << P;
  EXPECT_FALSE(has(P, "tanh\\.approx|lg2\\.approx|sqrt\\.approx|div\\.full"))
      << P;
  EXPECT_TRUE(has(kernelPtx(P, kernelName(*findCase(Cases, "divide.f32"))),
                  "div\\.rn\\.f32"))
      << P;
  EXPECT_EQ(P.find(".extern"), std::string::npos);
}

/// Index lowering as it reaches PTX: the i32 forms of ChoosesCheapForms, and
/// a symbolic divisor of either sign (sdiv/srem plus the sign correction).
TEST(ExprCodegen, PtxPatterns) {
  Context Ctx;
  Expr D0 = Ctx.dim(0), S0 = Ctx.symbol(0);
  IndexingMap Map(Ctx, {{"", {0, 255}}}, {}, {{"", {-4, 4}}}, {});
  RangeEvaluator RE(Map);
  struct K {
    const char *Name;
    Expr E;
    std::vector<const char *> Present, Absent;
  };
  Expr Shifted = D0 - 100;
  std::vector<K> Ks = {
      {"fd8", D0.floorDiv(8), {"shr\\.u32"}, {"div"}},
      {"fd8neg", Shifted.floorDiv(8), {"shr\\.s32"}, {"div"}},
      {"mod8neg", Shifted % 8, {"and\\.b32\\s+%r\\d+, %r\\d+, 7;"}, {"rem"}},
      {"fd7", D0.floorDiv(7), {"mul\\.hi\\.u32|mul\\.wide\\.u32"}, {"div"}},
      {"fd7neg", Shifted.floorDiv(7), {"xor\\.b32"}, {"div\\.s32"}},
      {"fdsym", Shifted.floorDiv(S0), {"div\\.s32", "rem\\.s32|mul\\.lo\\.s32"}, {}},
      {"modsym", Shifted % S0, {"rem\\.s32"}, {}},
      {"wide", (D0 * (int64_t(1) << 40)).floorDiv(3), {"\\.u64|\\.s64"}, {}},
  };
  LLVMContext LC;
  Module M("exprs", LC);
  for (const K &Kn : Ks) {
    Function *F = createKernel(
        M, Kn.Name,
        {{"out", KernelParamRole::Output, 16, nullptr},
         {"s", KernelParamRole::Scalar, 0, Type::getInt32Ty(LC)}});
    IRBuilder<> B(&F->getEntryBlock());
    Value *Tid = emitThreadId(B, GpuDim::X, 256);
    bool Fits = fitsInI32(Kn.E, RE);
    Type *IdxTy = Fits ? B.getInt32Ty() : B.getInt64Ty();
    Value *V = emitIndexExpr(B, Kn.E, {Tid}, {F->getArg(1)}, RE, IdxTy);
    Value *P = B.CreateInBoundsGEP(IdxTy, F->getArg(0), Tid);
    B.CreateStore(V, P);
    B.CreateRetVoid();
  }
  auto Ptx = emitPtx(M, idxmap::TargetOptions());
  ASSERT_TRUE(Ptx) << Ptx.error().str();
  for (const K &Kn : Ks) {
    std::string Text = kernelPtx(*Ptx, Kn.Name);
    ASSERT_FALSE(Text.empty()) << Kn.Name;
    for (const char *P : Kn.Present)
      EXPECT_TRUE(has(Text, P)) << Kn.Name << ": missing /" << P << "/\n"
                                << Text;
    for (const char *P : Kn.Absent)
      EXPECT_FALSE(has(Text, P)) << Kn.Name << ": unexpected /" << P << "/\n"
                                 << Text;
  }
  if (havePtxas()) {
    EXPECT_EQ(runPtxas(*Ptx, "sm_90"), "");
  }
}

//===----------------------------------------------------------------------===//
// Elementwise: semantics by constant folding
//===----------------------------------------------------------------------===//

/// Bits of a folded constant of a value type (pred: 0/1).
std::optional<uint64_t> constantBits(Value *V) {
  if (auto *CI = dyn_cast<ConstantInt>(V))
    return CI->getValue().getZExtValue();
  if (auto *CF = dyn_cast<ConstantFP>(V))
    return CF->getValueAPF().bitcastToAPInt().getZExtValue();
  return std::nullopt;
}

/// Folds every instruction of \p F whose operands are constants, in order.
void foldFunction(Function &F) {
  const DataLayout &DL = F.getParent()->getDataLayout();
  for (BasicBlock &BB : F)
    for (Instruction &I : make_early_inc_range(BB))
      if (Constant *C = ConstantFoldInstruction(&I, DL)) {
        I.replaceAllUsesWith(C);
        I.eraseFromParent();
      }
}

/// Evaluates \p Count elements of \p C's op through LLVM's constant folder
/// (operands as constants) and returns their bits.
std::vector<std::optional<uint64_t>>
foldCase(const OpCase &C, const std::vector<Literal> &In, int64_t Count) {
  LLVMContext LC;
  Module M("fold", LC);
  Type *VT = valueType(LC, C.OutType);
  auto *SinkTy = FunctionType::get(Type::getVoidTy(LC), {VT}, false);
  FunctionCallee Sink = M.getOrInsertFunction("sink", SinkTy);
  Function *F = Function::Create(FunctionType::get(Type::getVoidTy(LC), false),
                                 GlobalValue::ExternalLinkage, "f", M);
  IRBuilder<> B(BasicBlock::Create(LC, "entry", F));
  std::vector<CallInst *> Calls;
  for (int64_t K = 0; K < Count; ++K) {
    std::vector<Value *> Ops;
    for (const Literal &L : In)
      Ops.push_back(literalElement(LC, L, K));
    if (C.Root->opcode() == HloOpcode::Iota)
      Ops.push_back(B.getInt64(K));
    Value *V = emitElementwise(B, *C.Root, Ops, MathOptions{});
    Calls.push_back(B.CreateCall(Sink, {V}));
  }
  B.CreateRetVoid();
  foldFunction(*F);
  std::vector<std::optional<uint64_t>> Out;
  for (CallInst *CI : Calls)
    Out.push_back(constantBits(CI->getArgOperand(0)));
  return Out;
}

TEST(ElementwiseCodegen, ExactOpsMatchTheInterpreterBitForBit) {
  const int64_t N = 1200, Random = 64;
  std::vector<OpCase> Cases = allOpCases(N);
  int Checked = 0, Skipped = 0;
  int64_t Elements = 0, Unfolded = 0;
  for (const OpCase &C : Cases) {
    if (!isExact(*C.Root, MathOptions{})) {
      ++Skipped;
      continue;
    }
    std::vector<Literal> In = testInputs(C, N, /*Seed=*/11);
    auto Want = evaluate(*C.Module->entry(), In);
    ASSERT_TRUE(Want) << C.Name << ": " << Want.error().str();
    const Literal &Expected = (*Want)[0];
    int64_t Count = std::min<int64_t>(N, gridSize(C) + Random);
    auto Got = foldCase(C, In, Count);
    int Mismatches = 0;
    for (int64_t K = 0; K < Count; ++K) {
      ++Elements;
      Literal G(Shape(C.OutType, {1}));
      if (!Got[size_t(K)]) {
        // LLVM does not fold sqrt of a negative number, an infinity or a
        // NaN; the GPU test covers those.
        HloOpcode Op = C.Root->opcode();
        double X = In[0].getDouble(K);
        if ((Op == HloOpcode::Sqrt || Op == HloOpcode::Rsqrt) &&
            !(X >= 0 && std::isfinite(X))) {
          ++Unfolded;
          continue;
        }
        ADD_FAILURE() << C.Name << ": element " << K << " did not fold";
        break;
      }
      G.setBits(0, *Got[size_t(K)]);
      Literal E(Shape(C.OutType, {1}));
      E.setBits(0, Expected.getBits(K));
      if (!sameElement(E, G, 0) && ++Mismatches <= 3) {
        std::string Args;
        for (const Literal &L : In)
          Args += L.elementString(K) + " ";
        ADD_FAILURE() << C.Name << "(" << Args << "): interpreter "
                      << E.elementString(0) << " (0x" << std::hex
                      << E.getBits(0) << "), codegen " << G.elementString(0)
                      << " (0x" << G.getBits(0) << std::dec << ")";
      }
    }
    ++Checked;
  }
  EXPECT_GT(Checked, 520);
  EXPECT_LT(Unfolded, 200);
  std::printf("[ info ] %d cases checked bit for bit (%lld elements, %lld "
              "sqrt of negatives/inf/NaN not folded), %d approximate/libdevice cases "
              "left to the GPU test\n",
              Checked, (long long)(Elements - Unfolded), (long long)Unfolded,
              Skipped);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

const char *ReducerModule = R"(
HloModule reducers
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT m = bf16[] maximum(a, b)
}
mul_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] multiply(a, b)
}
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  v = f32[] select(gt, bv, av)
  i = s32[] select(gt, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
half_sum {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  s = f16[] call(a, b), to_apply=add_f16
  c = f16[] constant(0.5)
  ROOT m = f16[] multiply(s, c)
}
add_f16 {
  x = f16[] parameter(0)
  y = f16[] parameter(1)
  ROOT z = f16[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add_f32
}
)";

TEST(ElementwiseCodegen, ReducersMatchTheInterpreter) {
  auto Mod = parseHloModule(ReducerModule, "reducers.hlo");
  ASSERT_TRUE(Mod) << Mod.error().str();
  int Steps = 0;
  for (const char *Name :
       {"add_f32", "max_bf16", "mul_s32", "argmax", "half_sum"}) {
    const HloComputation *C = (*Mod)->findComputation(Name);
    ASSERT_TRUE(C) << Name;
    ASSERT_FALSE(checkReducer(*C)) << *checkReducer(*C);
    // Arguments: special values and random ones for every parameter.
    const int64_t Count = 40;
    std::vector<Literal> Cols;
    for (int64_t P = 0; P < C->parameterCount(); ++P) {
      Literal L(Shape(C->parameter(P)->shape().Type, {Count}));
      L.fillRandom(uint64_t(P) + 3, -4, 4);
      L.setDouble(0, 0.0);
      if (isFloatType(L.elementType())) {
        L.setDouble(1, std::nan(""));
        L.setDouble(2, -0.0);
        L.setDouble(3, std::numeric_limits<double>::infinity());
      }
      Cols.push_back(std::move(L));
    }
    LLVMContext LC;
    Module M("red", LC);
    Function *F =
        Function::Create(FunctionType::get(Type::getVoidTy(LC), false),
                         GlobalValue::ExternalLinkage, "f", M);
    IRBuilder<> B(BasicBlock::Create(LC, "entry", F));
    std::vector<std::vector<CallInst *>> Calls(Count);
    int64_t NAcc = C->parameterCount() / 2;
    for (int64_t K = 0; K < Count; ++K) {
      std::vector<Value *> Acc, Val;
      for (int64_t P = 0; P < C->parameterCount(); ++P)
        (P < NAcc ? Acc : Val).push_back(literalElement(LC, Cols[size_t(P)], K));
      auto Out = emitReduction(B, *C, Acc, Val, MathOptions{});
      ASSERT_EQ(int64_t(Out.size()), NAcc);
      for (Value *V : Out) {
        FunctionCallee Sink = M.getOrInsertFunction(
            "sink." + std::to_string(V->getType()->getTypeID()) + "." +
                std::to_string(V->getType()->getPrimitiveSizeInBits()),
            FunctionType::get(Type::getVoidTy(LC), {V->getType()}, false));
        Calls[size_t(K)].push_back(B.CreateCall(Sink, {V}));
      }
    }
    B.CreateRetVoid();
    foldFunction(*F);
    for (int64_t K = 0; K < Count; ++K) {
      std::vector<Literal> Args;
      for (int64_t P = 0; P < C->parameterCount(); ++P) {
        Literal A(Shape(Cols[size_t(P)].elementType(), {}));
        A.setBits(0, Cols[size_t(P)].getBits(K));
        Args.push_back(std::move(A));
      }
      auto Want = evaluate(*C, Args);
      ASSERT_TRUE(Want) << Want.error().str();
      ASSERT_EQ(Want->size(), size_t(NAcc));
      for (int64_t R = 0; R < NAcc; ++R) {
        auto Bits = constantBits(Calls[size_t(K)][size_t(R)]->getArgOperand(0));
        ASSERT_TRUE(Bits) << Name << " did not fold";
        Literal G((*Want)[size_t(R)].shape());
        G.setBits(0, *Bits);
        EXPECT_TRUE(sameElement((*Want)[size_t(R)], G, 0))
            << Name << " step " << K << " result " << R << ": interpreter "
            << (*Want)[size_t(R)].toString() << ", codegen " << G.toString();
        ++Steps;
      }
    }
  }
  EXPECT_EQ(Steps, 40 * 6);

  // And the reducers assemble inside a kernel: acc[i] = f(acc[i], x[i]).
  if (!havePtxas())
    return;
  LLVMContext LC;
  Module M("reduce_kernels", LC);
  for (const char *Name : {"add_f32", "max_bf16", "argmax", "half_sum"}) {
    const HloComputation *C = (*Mod)->findComputation(Name);
    int64_t NAcc = C->parameterCount() / 2;
    std::vector<KernelParamSpec> Specs;
    for (int64_t P = 0; P < C->parameterCount(); ++P)
      Specs.push_back({"p" + std::to_string(P),
                       P < NAcc ? KernelParamRole::InOut : KernelParamRole::Input,
                       16, nullptr});
    Function *F = createKernel(M, std::string("red_") + Name, Specs);
    IRBuilder<> B(&F->getEntryBlock());
    Value *Tid = emitThreadId(B, GpuDim::X, 256);
    std::vector<Value *> Acc, Val, Ptrs;
    for (int64_t P = 0; P < C->parameterCount(); ++P) {
      PrimitiveType T = C->parameter(P)->shape().Type;
      Type *ST = storageType(LC, T);
      Value *Ptr = B.CreateInBoundsGEP(ST, F->getArg(unsigned(P)), Tid);
      Value *V = loadConvert(B, B.CreateLoad(ST, Ptr), T);
      (P < NAcc ? Acc : Val).push_back(V);
      Ptrs.push_back(Ptr);
    }
    auto Out = emitReduction(B, *C, Acc, Val, MathOptions{});
    for (int64_t R = 0; R < NAcc; ++R)
      B.CreateStore(storeConvert(B, Out[size_t(R)],
                                 C->parameter(R)->shape().Type),
                    Ptrs[size_t(R)]);
    B.CreateRetVoid();
  }
  auto Ptx = emitPtx(M, idxmap::TargetOptions());
  ASSERT_TRUE(Ptx) << Ptx.error().str();
  EXPECT_EQ(runPtxas(*Ptx, "sm_90"), "");
}

TEST(ElementwiseCodegen, ArrayConstantsAndIota) {
  auto Mod = parseHloModule(R"(
HloModule c
ENTRY e {
  c = s16[5] constant({3, -1, 4, 1, -5})
  s = f32[5] constant({2, 2, 2, 2, 2})
  ROOT i = bf16[300] iota(), iota_dimension=0
})",
                            "c.hlo");
  ASSERT_TRUE(Mod) << Mod.error().str();
  const HloComputation *E = (*Mod)->entry();
  LLVMContext LC;
  Module M("c", LC);
  Function *F = Function::Create(FunctionType::get(Type::getVoidTy(LC), false),
                                 GlobalValue::ExternalLinkage, "f", M);
  IRBuilder<> B(BasicBlock::Create(LC, "entry", F));
  // A splat array is a plain constant; a general one a global array.
  Value *S = emitElementwise(B, *E->findInstruction("s"), {}, MathOptions{});
  ASSERT_TRUE(isa<ConstantFP>(S));
  EXPECT_EQ(cast<ConstantFP>(S)->getValueAPF().convertToFloat(), 2.0f);
  Value *C = emitElementwise(B, *E->findInstruction("c"), {B.getInt64(2)},
                             MathOptions{});
  EXPECT_TRUE(isa<LoadInst>(C));
  GlobalVariable *GV = M.getNamedGlobal("idxmap.const.c");
  ASSERT_TRUE(GV);
  EXPECT_EQ(GV->getAddressSpace(), 1u);
  EXPECT_TRUE(GV->isConstant());
  // Iota rounds like the interpreter's setInt (bf16 257 -> 256).
  Value *I = emitElementwise(B, *E->root(), {B.getInt64(257)}, MathOptions{});
  B.CreateRetVoid();
  ASSERT_TRUE(isa<ConstantFP>(I));
  EXPECT_EQ(cast<ConstantFP>(I)->getValueAPF().bitcastToAPInt().getZExtValue(),
            0x4380u);
}

TEST(ElementwiseCodegen, Tolerances) {
  auto Mod = parseHloModule(R"(
HloModule t
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  x = f32[1024] parameter(0)
  t = f32[1024] tanh(x)
  ROOT m = f32[1024] multiply(t, x)
}
ENTRY e {
  p = f32[1024] parameter(0)
  th = f32[1024] tanh(p)
  ex = f32[1024] exponential(p)
  ib = s32[1024] convert(p)
  f = f32[1024] fusion(p), kind=kLoop, calls=fused
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
})",
                            "t.hlo");
  ASSERT_TRUE(Mod) << Mod.error().str();
  const HloComputation *E = (*Mod)->entry();
  Tolerance F32 = Tolerance::forType(PrimitiveType::F32);
  Tolerance Th = toleranceFor(*E->findInstruction("th"));
  EXPECT_GE(Th.Rel, 1e-4);
  EXPECT_LT(Th.Rel, 1e-3);
  EXPECT_EQ(toleranceFor(*E->findInstruction("th"), MathOptions{true}).Rel,
            F32.Rel);
  EXPECT_EQ(toleranceFor(*E->findInstruction("ex")).Rel, F32.Rel);
  EXPECT_EQ(toleranceFor(*E->findInstruction("ib")).Abs, 0.0);
  Tolerance Fu = toleranceFor(*E->findInstruction("f"));
  EXPECT_GE(Fu.Abs, 4 * Th.Rel);
  Tolerance R = toleranceFor(*E->root());
  // (log2(1024) + 1) * 2^-24 * 1024
  EXPECT_NEAR(R.Abs, 11 * 1024 / 16777216.0, 1e-12);
  // A kernel that adds 100 terms in series before a tree: (100 + 1) u n.
  EXPECT_NEAR(toleranceFor(*E->root(), {}, 100).Abs, 101 * 1024 / 16777216.0,
              1e-12);
  // A depth below the tree's is the tree's.
  EXPECT_EQ(toleranceFor(*E->root(), {}, 3).Abs, R.Abs);
  // Not a reduction: no change.
  EXPECT_EQ(toleranceFor(*E->findInstruction("ex"), {}, 100).Abs,
            toleranceFor(*E->findInstruction("ex")).Abs);
}

} // namespace
