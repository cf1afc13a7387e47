//===- codegen/ElementwiseCodegen.cpp - Elementwise HLO ops to IR ---------===//
//
// Part of idxmap. See ElementwiseCodegen.h. Every op below mirrors the
// corresponding case of analysis/hlo/ElementKernels.cpp (the interpreter);
// comments name the interpreter expression where the IR is not obvious.
//
// Integers compute in their element width: the interpreter computes in
// int64/uint64 and truncates on store, which is the same for add, sub, mul,
// the bit operations, shifts (the amount is read at the element width) and
// power (products modulo 2^Bits); division and remainder differ only in the
// element-width MIN / -1 case, which is special-cased as the interpreter does
// for int64 (and which truncation makes agree for the narrower widths).
//
//===----------------------------------------------------------------------===//

#include "ElementwiseCodegen.h"

#include "KernelBuilder.h"

#include "idxmap/Fusion.h"
#include "idxmap/HloInterpreter.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <iterator>

using namespace llvm;

namespace idxmap {
namespace codegen {

namespace {

using PT = PrimitiveType;

bool isHalfLike(PT T) { return T == PT::F16 || T == PT::BF16; }

Module &moduleOf(IRBuilderBase &B) {
  BasicBlock *BB = B.GetInsertBlock();
  assert(BB && BB->getParent() && BB->getModule() &&
         "elementwise codegen needs an insertion point in a module");
  return *BB->getModule();
}

const fltSemantics &semanticsOf(PT T) {
  switch (T) {
  case PT::F16:
    return APFloat::IEEEhalf();
  case PT::BF16:
    return APFloat::BFloat();
  case PT::F32:
    return APFloat::IEEEsingle();
  default:
    assert(T == PT::F64 && "not a float type");
    return APFloat::IEEEdouble();
  }
}

//===----------------------------------------------------------------------===//
// Math helpers
//===----------------------------------------------------------------------===//

/// Calls libdevice's `__nv_<Base>f` (float) or `__nv_<Base>` (double).
Value *callLibdevice(IRBuilderBase &B, StringRef Base, ArrayRef<Value *> Args) {
  Type *T = Args[0]->getType();
  assert((T->isFloatTy() || T->isDoubleTy()) && "libdevice takes f32/f64");
  std::string Name = ("__nv_" + Base).str();
  if (T->isFloatTy())
    Name += "f";
  SmallVector<Type *, 2> Params(Args.size(), T);
  auto *FT = FunctionType::get(T, Params, /*isVarArg=*/false);
  FunctionCallee Callee = moduleOf(B).getOrInsertFunction(Name, FT);
  if (auto *F = dyn_cast<Function>(Callee.getCallee())) {
    // Pure functions: lets CSE/DCE treat them like arithmetic before linking.
    F->setDoesNotAccessMemory();
    F->setDoesNotThrow();
    F->setWillReturn();
  }
  CallInst *C = B.CreateCall(Callee, Args);
  C->setDoesNotAccessMemory();
  C->setDoesNotThrow();
  return C;
}

Value *fconst(Type *T, double V) { return ConstantFP::get(T, V); }

bool useFastF32(Type *C, const MathOptions &M) {
  return C->isFloatTy() && !M.Precise;
}

/// `div.full.f32`: at most 2 ulp from the exact quotient over the full
/// range of inputs (PTX ISA), the same infinities and NaNs, without
/// `div.rn`'s slow path. Triton's f32 division.
Value *emitDivFull(IRBuilderBase &B, Value *A, Value *Bv) {
  Type *F = B.getFloatTy();
  auto *FT = FunctionType::get(F, {F, F}, false);
  return B.CreateCall(
      InlineAsm::get(FT, "div.full.f32 $0, $1, $2;", "=f,f,f", false), {A, Bv});
}

/// `sqrt.approx.f32`: at most 1 ulp from the exact root (PTX ISA: relative
/// error 2^-23 over the full range), subnormals kept.
Value *emitSqrtApprox(IRBuilderBase &B, Value *X) {
  return B.CreateIntrinsic(Intrinsic::nvvm_sqrt_approx_f, {}, {X});
}

/// Whether \p Op of type \p T on \p Operand takes fast math's approximate
/// f32 forms (div.full, sqrt.approx): an f32 op itself, not a narrower type
/// computed in f32, whose result the exact op rounds once.
bool useFastF32Op(PrimitiveType T, Value *Operand, const MathOptions &M) {
  return T == PrimitiveType::F32 && useFastF32(Operand->getType(), M);
}

Value *emitExp(IRBuilderBase &B, Value *X, const MathOptions &M) {
  if (useFastF32(X->getType(), M))
    return emitExpApprox(B, X);
  return callLibdevice(B, "exp", {X});
}

Value *isNan(IRBuilderBase &B, Value *X) { return B.CreateFCmpUNO(X, X); }

/// log(1 + x) in f32 without libdevice (whose load and link are a sixth of
/// compiling a small fusion that calls it). Where 1 + x is in [sqrt(1/2),
/// sqrt(2)) (x in [-0.2929, 0.4142)), x - x^2/2 + x^3 P(x) with the
/// polynomial of Cephes' logf (about 1 ulp), x itself exact; elsewhere
/// |log(1 + x)| >= 0.34, so rounding 1 + x costs at most 2^-24 / 0.34
/// relative and lg2.approx (as the fast f32 log) keeps about 2^-21. NaN,
/// -1 (-inf), below -1 (NaN) and inf take the second form; -0 stays -0.
Value *emitLog1pApprox(IRBuilderBase &B, Value *X) {
  Type *T = X->getType();
  static constexpr double P[] = {
      7.0376836292E-2,  -1.1514610310E-1, 1.1676998740E-1,
      -1.2420140846E-1, 1.4249322787E-1,  -1.6668057665E-1,
      2.0000714765E-1,  -2.4999993993E-1, 3.3333331174E-1};
  Value *Poly = fconst(T, P[0]);
  for (size_t I = 1; I < std::size(P); ++I)
    Poly = B.CreateFAdd(B.CreateFMul(Poly, X), fconst(T, P[I]));
  // x + x^2 (x P(x) - 1/2): at x = -0 the product is -0, the sum -0.
  Value *X2 = B.CreateFMul(X, X);
  Value *Small = B.CreateFAdd(
      X,
      B.CreateFMul(X2, B.CreateFAdd(B.CreateFMul(X, Poly), fconst(T, -0.5))));
  Value *L2 = B.CreateIntrinsic(Intrinsic::nvvm_lg2_approx_f, {},
                                {B.CreateFAdd(fconst(T, 1.0), X)});
  Value *Large = B.CreateFMul(L2, fconst(T, 0.693147180559945309417));
  Value *Near = B.CreateAnd(B.CreateFCmpOGE(X, fconst(T, -0.29289321881)),
                            B.CreateFCmpOLT(X, fconst(T, 0.41421356237)));
  return B.CreateSelect(Near, Small, Large);
}

/// XLA's maximum: IEEE 754-2019 maximum (NaN when either is NaN, -0 below
/// +0), as XLA's GPU emitters lower it (arith.maximumf): llvm.maximum, one
/// `max.NaN` from sm_80 on, where selects around ordered compares took five
/// or more instructions per element and made a bf16 or f16 row max
/// compute-bound.
Value *floatMax(IRBuilderBase &B, Value *A, Value *Bv) {
  return B.CreateBinaryIntrinsic(Intrinsic::maximum, A, Bv);
}

/// XLA's minimum: llvm.minimum, as floatMax.
Value *floatMin(IRBuilderBase &B, Value *A, Value *Bv) {
  return B.CreateBinaryIntrinsic(Intrinsic::minimum, A, Bv);
}

Value *unaryFloat(IRBuilderBase &B, HloOpcode Op, Value *X,
                  const MathOptions &M) {
  Type *T = X->getType();
  switch (Op) {
  case HloOpcode::Abs:
    return B.CreateUnaryIntrinsic(Intrinsic::fabs, X);
  case HloOpcode::Negate:
    return B.CreateFNeg(X);
  case HloOpcode::Exp:
    return emitExp(B, X, M);
  case HloOpcode::Expm1:
    return callLibdevice(B, "expm1", {X});
  case HloOpcode::Log:
    if (useFastF32(T, M)) {
      Value *L2 = B.CreateIntrinsic(Intrinsic::nvvm_lg2_approx_f, {}, {X});
      return B.CreateFMul(L2, fconst(T, 0.693147180559945309417));
    }
    return callLibdevice(B, "log", {X});
  case HloOpcode::Log1p:
    if (useFastF32(T, M))
      return emitLog1pApprox(B, X);
    return callLibdevice(B, "log1p", {X});
  case HloOpcode::Tanh:
    if (useFastF32(T, M))
      return emitTanhApprox(B, X);
    return callLibdevice(B, "tanh", {X});
  case HloOpcode::Logistic: {
    // 1 / (1 + exp(-x)).
    Value *E = emitExp(B, B.CreateFNeg(X), M);
    return B.CreateFDiv(fconst(T, 1.0), B.CreateFAdd(fconst(T, 1.0), E));
  }
  case HloOpcode::Sqrt:
    return B.CreateUnaryIntrinsic(Intrinsic::sqrt, X);
  case HloOpcode::Rsqrt: // 1 / sqrt(x), two correctly rounded steps.
    return B.CreateFDiv(fconst(T, 1.0),
                        B.CreateUnaryIntrinsic(Intrinsic::sqrt, X));
  case HloOpcode::Cbrt:
    return callLibdevice(B, "cbrt", {X});
  case HloOpcode::Sin:
    return callLibdevice(B, "sin", {X});
  case HloOpcode::Cos:
    return callLibdevice(B, "cos", {X});
  case HloOpcode::Tan:
    return callLibdevice(B, "tan", {X});
  case HloOpcode::Floor:
    return B.CreateUnaryIntrinsic(Intrinsic::floor, X);
  case HloOpcode::Ceil:
    return B.CreateUnaryIntrinsic(Intrinsic::ceil, X);
  case HloOpcode::RoundNearestEven:
    return B.CreateUnaryIntrinsic(Intrinsic::roundeven, X);
  case HloOpcode::RoundNearestAfz:
    return B.CreateUnaryIntrinsic(Intrinsic::round, X);
  case HloOpcode::Sign: {
    // isnan(x) ? x : copysign(x != 0, x).
    Value *NonZero = B.CreateSelect(B.CreateFCmpONE(X, fconst(T, 0.0)),
                                    fconst(T, 1.0), fconst(T, 0.0));
    return B.CreateSelect(isNan(B, X), X, B.CreateCopySign(NonZero, X));
  }
  default:
    assert(false && "unary op not defined on floats");
    return X;
  }
}

Value *unaryInt(IRBuilderBase &B, HloOpcode Op, Value *X, bool Signed) {
  Type *T = X->getType();
  switch (Op) {
  case HloOpcode::Abs:
    if (!Signed)
      return X;
    // INT_MIN stays INT_MIN (wrap-around), so not poison.
    return B.CreateBinaryIntrinsic(Intrinsic::abs, X, B.getFalse());
  case HloOpcode::Negate:
    return B.CreateNeg(X);
  case HloOpcode::Sign:
    if (!Signed)
      return B.CreateZExt(B.CreateICmpNE(X, ConstantInt::get(T, 0)), T);
    return B.CreateSub(
        B.CreateZExt(B.CreateICmpSGT(X, ConstantInt::get(T, 0)), T),
        B.CreateZExt(B.CreateICmpSLT(X, ConstantInt::get(T, 0)), T));
  case HloOpcode::Not:
    return B.CreateNot(X);
  case HloOpcode::PopCount:
    return B.CreateUnaryIntrinsic(Intrinsic::ctpop, X);
  case HloOpcode::Clz: // clz(0) = bit width.
    return B.CreateBinaryIntrinsic(Intrinsic::ctlz, X, B.getFalse());
  default:
    assert(false && "unary op not defined on integers");
    return X;
  }
}

Value *binaryFloat(IRBuilderBase &B, HloOpcode Op, Value *A, Value *Bv) {
  Type *T = A->getType();
  switch (Op) {
  case HloOpcode::Add:
    return B.CreateFAdd(A, Bv);
  case HloOpcode::Subtract:
    return B.CreateFSub(A, Bv);
  case HloOpcode::Multiply:
    return B.CreateFMul(A, Bv);
  case HloOpcode::Divide:
    return B.CreateFDiv(A, Bv);
  case HloOpcode::Maximum:
    return floatMax(B, A, Bv);
  case HloOpcode::Minimum:
    return floatMin(B, A, Bv);
  case HloOpcode::Power: {
    // power(1, y) = power(x, 0) = 1, even for NaN.
    Value *P = callLibdevice(B, "pow", {A, Bv});
    Value *One = B.CreateOr(B.CreateFCmpOEQ(A, fconst(T, 1.0)),
                            B.CreateFCmpOEQ(Bv, fconst(T, 0.0)));
    return B.CreateSelect(One, fconst(T, 1.0), P);
  }
  case HloOpcode::Remainder:
    return callLibdevice(B, "fmod", {A, Bv});
  case HloOpcode::Atan2:
    return callLibdevice(B, "atan2", {A, Bv});
  default:
    assert(false && "binary op not defined on floats");
    return A;
  }
}

/// Exponentiation by squaring over every exponent bit, modulo 2^Bits.
Value *intPower(IRBuilderBase &B, Value *Base, Value *Exp, bool Signed) {
  auto *T = cast<IntegerType>(Base->getType());
  unsigned Bits = T->getBitWidth();
  Value *R = ConstantInt::get(T, 1);
  Value *P = Base;
  // A signed exponent that reaches the loop is non-negative: its top bit is 0.
  unsigned Steps = Signed ? Bits - 1 : Bits;
  for (unsigned I = 0; I < Steps; ++I) {
    Value *Bit =
        B.CreateTrunc(B.CreateLShr(Exp, ConstantInt::get(T, I)), B.getInt1Ty());
    R = B.CreateSelect(Bit, B.CreateMul(R, P), R);
    if (I + 1 < Steps)
      P = B.CreateMul(P, P);
  }
  // A == 1 || B == 0 -> 1; signed B < 0 -> 0.
  Value *One = B.CreateOr(B.CreateICmpEQ(Base, ConstantInt::get(T, 1)),
                          B.CreateICmpEQ(Exp, ConstantInt::get(T, 0)));
  if (Signed)
    R = B.CreateSelect(B.CreateICmpSLT(Exp, ConstantInt::get(T, 0)),
                       ConstantInt::get(T, 0), R);
  return B.CreateSelect(One, ConstantInt::get(T, 1), R);
}

Value *binaryInt(IRBuilderBase &B, HloOpcode Op, Value *A, Value *Bv,
                 bool Signed) {
  auto *T = cast<IntegerType>(A->getType());
  unsigned Bits = T->getBitWidth();
  Value *Zero = ConstantInt::get(T, 0);
  Value *AllOnes = Constant::getAllOnesValue(T);
  switch (Op) {
  case HloOpcode::Add:
    return B.CreateAdd(A, Bv);
  case HloOpcode::Subtract:
    return B.CreateSub(A, Bv);
  case HloOpcode::Multiply:
    return B.CreateMul(A, Bv);
  case HloOpcode::Divide:
  case HloOpcode::Remainder: {
    bool Div = Op == HloOpcode::Divide;
    Value *ByZero = B.CreateICmpEQ(Bv, Zero);
    Value *Bad = ByZero;
    if (Signed) // MIN / -1
      Bad = B.CreateOr(
          Bad,
          B.CreateAnd(B.CreateICmpEQ(A, ConstantInt::get(
                                            T, APInt::getSignedMinValue(Bits))),
                      B.CreateICmpEQ(Bv, AllOnes)));
    // Divisor 1 in the bad cases: MIN / 1 = MIN and MIN % 1 = 0, which is
    // what the interpreter gives for MIN / -1 and MIN % -1.
    Value *Safe = B.CreateSelect(Bad, ConstantInt::get(T, 1), Bv);
    Value *Q = Div ? (Signed ? B.CreateSDiv(A, Safe) : B.CreateUDiv(A, Safe))
                   : (Signed ? B.CreateSRem(A, Safe) : B.CreateURem(A, Safe));
    // x / 0 = -1 (all ones), x % 0 = x.
    return B.CreateSelect(ByZero, Div ? AllOnes : A, Q);
  }
  case HloOpcode::Maximum:
    return B.CreateBinaryIntrinsic(Signed ? Intrinsic::smax : Intrinsic::umax,
                                   A, Bv);
  case HloOpcode::Minimum:
    return B.CreateBinaryIntrinsic(Signed ? Intrinsic::smin : Intrinsic::umin,
                                   A, Bv);
  case HloOpcode::Power:
    return intPower(B, A, Bv, Signed);
  case HloOpcode::And:
    return B.CreateAnd(A, Bv);
  case HloOpcode::Or:
    return B.CreateOr(A, Bv);
  case HloOpcode::Xor:
    return B.CreateXor(A, Bv);
  case HloOpcode::ShiftLeft:
  case HloOpcode::ShiftRightLogical:
  case HloOpcode::ShiftRightArithmetic: {
    // The amount is read as unsigned; >= Bits gives 0 or the sign fill. The
    // poison of an oversized LLVM shift stays in the unselected arm.
    Value *InRange = B.CreateICmpULT(Bv, ConstantInt::get(T, Bits));
    if (Op == HloOpcode::ShiftLeft)
      return B.CreateSelect(InRange, B.CreateShl(A, Bv), Zero);
    if (Op == HloOpcode::ShiftRightLogical)
      return B.CreateSelect(InRange, B.CreateLShr(A, Bv), Zero);
    return B.CreateSelect(InRange, B.CreateAShr(A, Bv),
                          B.CreateAShr(A, ConstantInt::get(T, Bits - 1)));
  }
  default:
    assert(false && "binary op not defined on integers");
    return A;
  }
}

Value *binaryPred(IRBuilderBase &B, HloOpcode Op, Value *A, Value *Bv) {
  switch (Op) {
  case HloOpcode::Add:
  case HloOpcode::Or:
  case HloOpcode::Maximum:
    return B.CreateOr(A, Bv);
  case HloOpcode::Multiply:
  case HloOpcode::And:
  case HloOpcode::Minimum:
    return B.CreateAnd(A, Bv);
  case HloOpcode::Subtract:
  case HloOpcode::Xor:
    return B.CreateXor(A, Bv);
  case HloOpcode::Divide: // b ? a : true (x / 0 is all ones)
  case HloOpcode::Power:  // a || !b
    return B.CreateOr(A, B.CreateNot(Bv));
  case HloOpcode::Remainder: // b ? false : a (x % 0 is x)
    return B.CreateAnd(A, B.CreateNot(Bv));
  default:
    assert(false && "binary op not defined on pred");
    return A;
  }
}

CmpInst::Predicate intPredicate(ComparisonDirection D, bool Signed) {
  switch (D) {
  case ComparisonDirection::EQ:
    return CmpInst::ICMP_EQ;
  case ComparisonDirection::NE:
    return CmpInst::ICMP_NE;
  case ComparisonDirection::LT:
    return Signed ? CmpInst::ICMP_SLT : CmpInst::ICMP_ULT;
  case ComparisonDirection::LE:
    return Signed ? CmpInst::ICMP_SLE : CmpInst::ICMP_ULE;
  case ComparisonDirection::GT:
    return Signed ? CmpInst::ICMP_SGT : CmpInst::ICMP_UGT;
  case ComparisonDirection::GE:
    return Signed ? CmpInst::ICMP_SGE : CmpInst::ICMP_UGE;
  }
  return CmpInst::ICMP_EQ;
}

CmpInst::Predicate floatPredicate(ComparisonDirection D) {
  // IEEE: unordered compares false, except NE.
  switch (D) {
  case ComparisonDirection::EQ:
    return CmpInst::FCMP_OEQ;
  case ComparisonDirection::NE:
    return CmpInst::FCMP_UNE;
  case ComparisonDirection::LT:
    return CmpInst::FCMP_OLT;
  case ComparisonDirection::LE:
    return CmpInst::FCMP_OLE;
  case ComparisonDirection::GT:
    return CmpInst::FCMP_OGT;
  case ComparisonDirection::GE:
    return CmpInst::FCMP_OGE;
  }
  return CmpInst::FCMP_OEQ;
}

/// The signed key whose order is the IEEE total order of a float's bits:
/// negative values get their magnitude bits flipped.
Value *totalOrderKey(IRBuilderBase &B, Value *V) {
  unsigned Bits = V->getType()->getPrimitiveSizeInBits().getFixedValue();
  Type *IT = B.getIntNTy(Bits);
  Value *S = B.CreateBitCast(V, IT);
  Value *Sign = B.CreateAShr(S, ConstantInt::get(IT, Bits - 1));
  Value *Mask =
      B.CreateAnd(Sign, ConstantInt::get(IT, APInt::getSignedMaxValue(Bits)));
  return B.CreateXor(S, Mask);
}

Value *emitCompare(IRBuilderBase &B, const HloInstruction &I, Value *A,
                   Value *Bv) {
  PT T = I.operand(0)->shape().Type;
  ComparisonDirection D = I.comparisonDirection();
  if (isFloatType(T)) {
    if (I.comparisonType() == ComparisonType::TotalOrder)
      return B.CreateICmp(intPredicate(D, /*Signed=*/true), totalOrderKey(B, A),
                          totalOrderKey(B, Bv));
    return B.CreateFCmp(floatPredicate(D), toCompute(B, A, T),
                        toCompute(B, Bv, T));
  }
  // pred compares as unsigned (false < true).
  return B.CreateICmp(intPredicate(D, isSignedIntType(T)), A, Bv);
}

Value *emitClamp(IRBuilderBase &B, PT T, Value *Lo, Value *X, Value *Hi) {
  if (T == PT::Pred) // min(hi, max(x, lo)) on bools
    return B.CreateAnd(Hi, B.CreateOr(X, Lo));
  if (isIntegralType(T)) {
    bool S = isSignedIntType(T);
    Value *Mx =
        B.CreateBinaryIntrinsic(S ? Intrinsic::smax : Intrinsic::umax, X, Lo);
    return B.CreateBinaryIntrinsic(S ? Intrinsic::smin : Intrinsic::umin, Hi,
                                   Mx);
  }
  Value *L = toCompute(B, Lo, T), *V = toCompute(B, X, T),
        *H = toCompute(B, Hi, T);
  // isnan(l) ? l : isnan(v) ? v : isnan(h) ? h : std::min(h, std::max(v, l))
  Value *Mx = B.CreateSelect(B.CreateFCmpOLT(V, L), L, V);
  Value *Mn = B.CreateSelect(B.CreateFCmpOLT(Mx, H), Mx, H);
  Value *R = B.CreateSelect(
      isNan(B, L), L,
      B.CreateSelect(isNan(B, V), V, B.CreateSelect(isNan(B, H), H, Mn)));
  return fromCompute(B, R, T);
}

/// Reinterprets the bits of a value of element type \p From as \p To (same
/// byte width; pred is the byte 0/1).
Value *emitBitcastValue(IRBuilderBase &B, Value *V, PT From, PT To) {
  if (From == To)
    return V;
  LLVMContext &Ctx = B.getContext();
  if (From == PT::Pred)
    V = B.CreateZExt(V, B.getInt8Ty());
  if (To == PT::Pred) {
    Value *Byte = B.CreateBitCast(V, B.getInt8Ty());
    return B.CreateICmpNE(Byte, B.getInt8(0));
  }
  return B.CreateBitCast(V, valueType(Ctx, To));
}

/// The module-level constant array holding \p I's literal (storage types).
GlobalVariable *constantArray(Module &M, const HloInstruction &I) {
  std::string Name = "idxmap.const." + I.name();
  if (GlobalVariable *GV = M.getNamedGlobal(Name))
    return GV;
  LLVMContext &Ctx = M.getContext();
  const Literal &L = I.literal();
  PT T = L.elementType();
  Type *ST = storageType(Ctx, T);
  std::vector<Constant *> Elems;
  for (int64_t K = 0, N = L.elementCount(); K < N; ++K) {
    Constant *C = literalElement(Ctx, L, K);
    if (T == PT::Pred)
      C = ConstantInt::get(ST, L.getBits(K) ? 1 : 0);
    Elems.push_back(C);
  }
  auto *AT = ArrayType::get(ST, Elems.size());
  auto *GV = new GlobalVariable(M, AT, /*isConstant=*/true,
                                GlobalValue::PrivateLinkage,
                                ConstantArray::get(AT, Elems), Name, nullptr,
                                GlobalValue::NotThreadLocal, GlobalAddrSpace);
  GV->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  GV->setAlignment(Align(16));
  return GV;
}

} // namespace

//===----------------------------------------------------------------------===//
// Types and conversions
//===----------------------------------------------------------------------===//

Type *storageType(LLVMContext &Ctx, PrimitiveType T) {
  switch (T) {
  case PT::Pred:
  case PT::S8:
  case PT::U8:
    return Type::getInt8Ty(Ctx);
  case PT::S16:
  case PT::U16:
    return Type::getInt16Ty(Ctx);
  case PT::S32:
  case PT::U32:
    return Type::getInt32Ty(Ctx);
  case PT::S64:
  case PT::U64:
    return Type::getInt64Ty(Ctx);
  case PT::F16:
    return Type::getHalfTy(Ctx);
  case PT::BF16:
    return Type::getBFloatTy(Ctx);
  case PT::F32:
    return Type::getFloatTy(Ctx);
  case PT::F64:
    return Type::getDoubleTy(Ctx);
  default:
    assert(false && "not an array element type");
    return nullptr;
  }
}

Type *valueType(LLVMContext &Ctx, PrimitiveType T) {
  return T == PT::Pred ? Type::getInt1Ty(Ctx) : storageType(Ctx, T);
}

Type *computeType(LLVMContext &Ctx, PrimitiveType T) {
  return isHalfLike(T) ? Type::getFloatTy(Ctx) : valueType(Ctx, T);
}

namespace {
/// \p Scalar, or a vector of it with \p Like's element count.
Type *withShapeOf(Type *Scalar, Type *Like) {
  if (auto *VT = dyn_cast<VectorType>(Like))
    return VectorType::get(Scalar, VT->getElementCount());
  return Scalar;
}
} // namespace

Value *loadConvert(IRBuilderBase &B, Value *Stored, PrimitiveType T) {
  if (T != PT::Pred)
    return Stored;
  return B.CreateICmpNE(Stored, Constant::getNullValue(Stored->getType()));
}

Value *storeConvert(IRBuilderBase &B, Value *V, PrimitiveType T) {
  if (T != PT::Pred)
    return V;
  return B.CreateZExt(V, withShapeOf(B.getInt8Ty(), V->getType()));
}

Value *toCompute(IRBuilderBase &B, Value *V, PrimitiveType T) {
  if (!isHalfLike(T))
    return V;
  return B.CreateFPExt(V, withShapeOf(B.getFloatTy(), V->getType()));
}

Value *fromCompute(IRBuilderBase &B, Value *V, PrimitiveType T) {
  if (!isHalfLike(T))
    return V;
  return B.CreateFPTrunc(
      V, withShapeOf(storageType(B.getContext(), T), V->getType()));
}

Constant *literalElement(LLVMContext &Ctx, const Literal &L, int64_t Linear) {
  PT T = L.elementType();
  uint64_t Bits = L.getBits(Linear);
  if (T == PT::Pred)
    return ConstantInt::getBool(Ctx, Bits != 0);
  if (isIntegralType(T))
    return ConstantInt::get(storageType(Ctx, T), Bits);
  unsigned W = unsigned(bitWidth(T));
  return ConstantFP::get(Ctx, APFloat(semanticsOf(T), APInt(W, Bits)));
}

bool isSplatLiteral(const Literal &L) {
  int64_t N = L.elementCount();
  if (N == 0)
    return false;
  uint64_t First = L.getBits(0);
  for (int64_t K = 1; K < N; ++K)
    if (L.getBits(K) != First)
      return false;
  return true;
}

Value *emitConvert(IRBuilderBase &B, Value *V, PrimitiveType From,
                   PrimitiveType To) {
  if (From == To)
    return V;
  LLVMContext &Ctx = B.getContext();
  if (To == PT::Pred) {
    if (isFloatType(From)) { // x != 0 (NaN != 0 is true)
      Value *X = toCompute(B, V, From);
      return B.CreateFCmpUNE(X, fconst(X->getType(), 0.0));
    }
    return B.CreateICmpNE(V, Constant::getNullValue(V->getType()));
  }
  if (From == PT::Pred) {
    if (isIntegralType(To))
      return B.CreateZExt(V, valueType(Ctx, To));
    return fromCompute(B, B.CreateUIToFP(V, computeType(Ctx, To)), To);
  }
  if (isIntegralType(From) && isIntegralType(To)) {
    // static_cast of the int64/uint64 compute value, truncated on store.
    return B.CreateIntCast(V, valueType(Ctx, To), isSignedIntType(From));
  }
  if (isIntegralType(From)) {
    // To float: f64 directly, everything else through a single rounding to
    // f32 (then f16/bf16 round again, as the interpreter's store does).
    Type *CT = computeType(Ctx, To);
    Value *F =
        isSignedIntType(From) ? B.CreateSIToFP(V, CT) : B.CreateUIToFP(V, CT);
    return fromCompute(B, F, To);
  }
  Value *X = toCompute(B, V, From);
  if (isIntegralType(To)) {
    // Truncate toward zero, saturate, NaN -> 0: the fpto*i.sat intrinsics.
    Type *IT = valueType(Ctx, To);
    return B.CreateIntrinsic(isSignedIntType(To) ? Intrinsic::fptosi_sat
                                                 : Intrinsic::fptoui_sat,
                             {IT, X->getType()}, {X});
  }
  // Float to float.
  if (To == PT::F64)
    return B.CreateFPExt(X, B.getDoubleTy());
  if (X->getType()->isDoubleTy())
    X = B.CreateFPTrunc(X, B.getFloatTy()); // f64 -> f32 (-> f16/bf16)
  return fromCompute(B, X, To);
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

namespace {

/// XLA's reduce-precision on the bits of \p V (a float of type \p T, its
/// value type): the mantissa rounded to \p Mant bits (to nearest, ties to
/// even) where it is narrower than T's, the exponent clamped to \p Exp bits
/// where that is narrower (overflow to infinity, underflow to a signed
/// zero), a NaN kept (with no mantissa bits left: +infinity), as the
/// interpreter computes it.
Value *emitReducePrecision(IRBuilderBase &B, Value *V, PT T, int64_t Exp,
                           int64_t Mant) {
  const unsigned Bits = V->getType()->getPrimitiveSizeInBits();
  const int64_t SrcMant =
      int64_t(APFloat::semanticsPrecision(semanticsOf(T))) - 1;
  const int64_t SrcExp = int64_t(Bits) - 1 - SrcMant;
  IntegerType *IT = B.getIntNTy(Bits);
  auto C = [&](uint64_t X) { return ConstantInt::get(IT, X); };
  Value *X = B.CreateBitCast(V, IT);
  if (Mant < SrcMant) {
    const int64_t Drop = SrcMant - Mant;
    const uint64_t Last = uint64_t(1) << Drop;
    Value *Odd = B.CreateLShr(B.CreateAnd(X, C(Last)), C(uint64_t(Drop)));
    Value *Bias = B.CreateAdd(C((Last >> 1) - 1), Odd);
    X = B.CreateAnd(B.CreateAdd(X, Bias), C(~(Last - 1)));
  }
  if (Exp < SrcExp) {
    const uint64_t Sign = uint64_t(1) << (Bits - 1);
    const uint64_t ExpMask = ((uint64_t(1) << SrcExp) - 1) << SrcMant;
    const uint64_t SrcBias = (uint64_t(1) << (SrcExp - 1)) - 1;
    const uint64_t NewBias = (uint64_t(1) << (Exp - 1)) - 1;
    Value *E = B.CreateAnd(X, C(ExpMask));
    Value *Signed = B.CreateAnd(X, C(Sign));
    Value *Over = B.CreateICmpUGT(E, C((SrcBias + NewBias) << SrcMant));
    Value *Under = B.CreateICmpULE(E, C((SrcBias - NewBias) << SrcMant));
    X = B.CreateSelect(Over, B.CreateOr(Signed, C(ExpMask)),
                       B.CreateSelect(Under, Signed, X));
  }
  Value *R = B.CreateBitCast(X, V->getType());
  Value *Nan = Mant == 0 ? ConstantFP::getInfinity(V->getType()) : V;
  return B.CreateSelect(B.CreateFCmpUNO(V, V), Nan, R);
}

} // namespace

std::optional<std::string> checkElementwise(const HloInstruction &I) {
  HloOpcode Op = I.opcode();
  PT T = I.shape().Type;
  auto Unsupported = [&](const std::string &Why) -> std::optional<std::string> {
    return std::string(opcodeName(Op)) + " of " +
           (I.operandCount() > 0
                ? std::string(primitiveTypeName(I.operand(0)->shape().Type))
                : std::string(primitiveTypeName(T))) +
           ": " + Why;
  };
  if (!isArrayType(T))
    return Unsupported("the result is not an array of one element type");
  if (isUnaryElementwise(Op)) {
    if (!interpreterSupportsUnary(Op, I.operand(0)->shape().Type))
      return Unsupported("not defined on this element type");
    return std::nullopt;
  }
  if (isBinaryElementwise(Op)) {
    if (!interpreterSupportsBinary(Op, T))
      return Unsupported("not defined on this element type");
    return std::nullopt;
  }
  if (isFloatFunction(Op)) {
    if (!isFloatType(I.operand(0)->shape().Type) ||
        I.operand(0)->shape().Type != T)
      return Unsupported("defined on floats only");
    return std::nullopt;
  }
  switch (Op) {
  case HloOpcode::Convert:
  case HloOpcode::Compare:
  case HloOpcode::Select:
  case HloOpcode::Clamp:
  case HloOpcode::Iota:
  case HloOpcode::Copy:
  case HloOpcode::Reshape:
  case HloOpcode::Broadcast:
    return std::nullopt;
  case HloOpcode::Constant:
    if (I.literalElided())
      return Unsupported("the constant's value is elided");
    return std::nullopt;
  case HloOpcode::Bitcast:
    if (byteWidth(I.operand(0)->shape().Type) != byteWidth(T))
      return Unsupported("a bitcast between element types of different widths");
    return std::nullopt;
  case HloOpcode::ReducePrecision: {
    if (!isFloatType(T) || I.operand(0)->shape().Type != T)
      return Unsupported("defined on floats only");
    std::optional<int64_t> E = I.intAttribute("exponent_bits");
    std::optional<int64_t> M = I.intAttribute("mantissa_bits");
    if (!E || !M || *E < 1 || *M < 0)
      return Unsupported("needs exponent_bits >= 1 and mantissa_bits >= 0");
    return std::nullopt;
  }
  default:
    return Unsupported("not an elementwise op");
  }
}

bool needsLibdevice(const HloInstruction &I, const MathOptions &M) {
  HloOpcode Op = I.opcode();
  if (Op == HloOpcode::Fusion || Op == HloOpcode::Call ||
      Op == HloOpcode::Reduce) {
    for (const HloComputation *C : I.calledComputations())
      for (const HloInstruction *J : C->instructions())
        if (needsLibdevice(*J, M))
          return true;
    return false;
  }
  if (I.operandCount() == 0)
    return false;
  PT T = I.operand(0)->shape().Type;
  if (!isFloatType(T))
    return false;
  bool F64 = T == PT::F64;
  switch (Op) {
  case HloOpcode::Exp:
  case HloOpcode::Log:
  case HloOpcode::Log1p:
  case HloOpcode::Tanh:
  case HloOpcode::Logistic:
    return F64 || M.Precise;
  case HloOpcode::Expm1:
  case HloOpcode::Cbrt:
  case HloOpcode::Sin:
  case HloOpcode::Cos:
  case HloOpcode::Tan:
  case HloOpcode::Power:
  case HloOpcode::Remainder:
  case HloOpcode::Atan2:
    return true;
  default:
    return isFloatFunction(Op);
  }
}

Value *emitElementwise(IRBuilderBase &B, const HloInstruction &I,
                       ArrayRef<Value *> Ops, const MathOptions &M) {
  assert(!checkElementwise(I) && "unsupported elementwise op");
  LLVMContext &Ctx = B.getContext();
  HloOpcode Op = I.opcode();
  PT T = I.shape().Type;
#ifndef NDEBUG
  for (size_t K = 0; K < Ops.size() && K < size_t(I.operandCount()); ++K)
    assert(Ops[K]->getType() ==
               valueType(Ctx, I.operand(int64_t(K))->shape().Type) &&
           "operand is not of its element's value type");
#endif

  if (isUnaryElementwise(Op)) {
    assert(Ops.size() == 1 && "unary op takes one operand");
    PT OT = I.operand(0)->shape().Type;
    if (Op == HloOpcode::IsFinite) { // |x| < inf, false for NaN
      Value *X = toCompute(B, Ops[0], OT);
      Value *Abs = B.CreateUnaryIntrinsic(Intrinsic::fabs, X);
      return B.CreateFCmpOLT(Abs, ConstantFP::getInfinity(X->getType()));
    }
    if (OT == PT::Pred) // not
      return B.CreateNot(Ops[0]);
    if (isIntegralType(OT))
      return unaryInt(B, Op, Ops[0], isSignedIntType(OT));
    if ((Op == HloOpcode::Sqrt || Op == HloOpcode::Rsqrt) &&
        useFastF32Op(OT, Ops[0], M))
      return Op == HloOpcode::Sqrt
                 ? emitSqrtApprox(B, Ops[0])
                 : emitDivFull(B, ConstantFP::get(B.getFloatTy(), 1.0),
                               emitSqrtApprox(B, Ops[0]));
    return fromCompute(B, unaryFloat(B, Op, toCompute(B, Ops[0], OT), M), T);
  }
  if (isFloatFunction(Op)) {
    // libdevice's function of the f32 (f16, bf16: rounded once after) or
    // f64 value, as the interpreter computes it with libm's.
    assert(Ops.size() == 1 && "a float function takes one operand");
    static const std::pair<HloOpcode, const char *> Names[] = {
        {HloOpcode::Erf, "erf"},     {HloOpcode::Acos, "acos"},
        {HloOpcode::Acosh, "acosh"}, {HloOpcode::Asin, "asin"},
        {HloOpcode::Asinh, "asinh"}, {HloOpcode::Atan, "atan"},
        {HloOpcode::Atanh, "atanh"}, {HloOpcode::Cosh, "cosh"},
        {HloOpcode::Sinh, "sinh"}};
    const char *Name = nullptr;
    for (const auto &[O, N] : Names)
      if (O == Op)
        Name = N;
    assert(Name && "a float function without its libdevice name");
    return fromCompute(B, callLibdevice(B, Name, {toCompute(B, Ops[0], T)}), T);
  }
  if (isBinaryElementwise(Op)) {
    assert(Ops.size() == 2 && "binary op takes two operands");
    if (T == PT::Pred)
      return binaryPred(B, Op, Ops[0], Ops[1]);
    if (isIntegralType(T))
      return binaryInt(B, Op, Ops[0], Ops[1], isSignedIntType(T));
    // A constant divisor stays an fdiv: LLVM makes a power of two's an
    // exact multiplication.
    if (Op == HloOpcode::Divide && useFastF32Op(T, Ops[0], M) &&
        !M.ExactDivide && !isa<Constant>(Ops[1]))
      return emitDivFull(B, Ops[0], Ops[1]);
    return fromCompute(
        B, binaryFloat(B, Op, toCompute(B, Ops[0], T), toCompute(B, Ops[1], T)),
        T);
  }
  switch (Op) {
  case HloOpcode::Compare:
    assert(Ops.size() == 2 && "compare takes two operands");
    return emitCompare(B, I, Ops[0], Ops[1]);
  case HloOpcode::Convert:
    assert(Ops.size() == 1 && "convert takes one operand");
    return emitConvert(B, Ops[0], I.operand(0)->shape().Type, T);
  case HloOpcode::Select:
    assert(Ops.size() == 3 && "select takes three operands");
    return B.CreateSelect(Ops[0], Ops[1], Ops[2]);
  case HloOpcode::Clamp:
    assert(Ops.size() == 3 && "clamp takes three operands");
    return emitClamp(B, T, Ops[0], Ops[1], Ops[2]);
  case HloOpcode::Iota: {
    assert(Ops.size() == 1 && Ops[0]->getType()->isIntegerTy() &&
           "iota takes the index along its dimension");
    // Literal::setInt: a conversion from s64.
    Value *Idx = B.CreateSExtOrTrunc(Ops[0], B.getInt64Ty());
    return emitConvert(B, Idx, PT::S64, T);
  }
  case HloOpcode::Constant: {
    const Literal &L = I.literal();
    if (L.elementCount() == 1 || isSplatLiteral(L)) {
      assert(Ops.size() <= 1 && "constant takes at most an index");
      return literalElement(Ctx, L, 0);
    }
    assert(Ops.size() == 1 && Ops[0]->getType()->isIntegerTy() &&
           "an array constant takes its linear element index");
    GlobalVariable *GV = constantArray(moduleOf(B), I);
    Type *ST = storageType(Ctx, T);
    Value *Idx = B.CreateSExtOrTrunc(Ops[0], B.getInt64Ty());
    Value *Ptr =
        B.CreateInBoundsGEP(GV->getValueType(), GV, {B.getInt64(0), Idx});
    LoadInst *Ld = B.CreateLoad(ST, Ptr);
    Ld->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(Ctx, {}));
    return loadConvert(B, Ld, T);
  }
  case HloOpcode::Copy:
  case HloOpcode::Reshape:
  case HloOpcode::Broadcast:
    assert(Ops.size() == 1 && "pass-through ops take one operand");
    return Ops[0];
  case HloOpcode::Bitcast:
    assert(Ops.size() == 1 && "bitcast takes one operand");
    return emitBitcastValue(B, Ops[0], I.operand(0)->shape().Type, T);
  case HloOpcode::ReducePrecision:
    assert(Ops.size() == 1 && "reduce-precision takes one operand");
    return emitReducePrecision(B, Ops[0], T, *I.intAttribute("exponent_bits"),
                               *I.intAttribute("mantissa_bits"));
  default:
    assert(false && "not an elementwise op");
    return nullptr;
  }
}

} // namespace codegen
} // namespace idxmap
