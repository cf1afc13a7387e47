//===- codegen/sim/SimIr.cpp - Kernel IR made runnable on the host --------===//
//
// Part of idxmap. See SimIr.h. Every rewrite keeps the value the GPU would
// compute, up to the approximate instructions (ex2.approx, tanh.approx,
// ...), which become the C library's exact functions: the runner's
// tolerances already allow for the approximations.
//
//===----------------------------------------------------------------------===//
#include "SimIr.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace llvm;

namespace idxmap {
namespace sim {
namespace {

/// The runtime calls and C functions the rewrites use.
class Rewriter {
public:
  Rewriter(Module &M) : M(M), Ctx(M.getContext()) {}

  /// Replaces \p CI (a call of an NVPTX intrinsic or of inline PTX) by
  /// host IR; false with Error set when it is not modelled.
  bool rewrite(CallInst *CI, std::string &Error);

  bool UsedCollectives = false;

private:
  Module &M;
  LLVMContext &Ctx;

  FunctionCallee fn(StringRef Name, Type *Ret, ArrayRef<Type *> Args) {
    return M.getOrInsertFunction(Name, FunctionType::get(Ret, Args, false));
  }
  Value *sreg(IRBuilder<> &B, Sreg S) {
    return B.CreateCall(fn(SregFn, B.getInt32Ty(), {B.getInt32Ty()}),
                        {B.getInt32(uint32_t(S))});
  }
  Value *warp(IRBuilder<> &B, WarpOp Op, Value *Mask, Value *A, Value *Bv,
              Value *C) {
    UsedCollectives = true;
    Type *I32 = B.getInt32Ty();
    return B.CreateCall(fn(WarpFn, I32, {I32, I32, I32, I32, I32}),
                        {B.getInt32(uint32_t(Op)), Mask, A, Bv, C});
  }
  /// A call of AsyncFn: \p Op with pointers \p A, \p Bv and \p Bar (null:
  /// none) and count \p N; returns its i32 result.
  Value *async(IRBuilder<> &B, AsyncOp Op, Value *A, Value *Bv, Value *N,
               Value *Bar) {
    UsedCollectives = true;
    Type *P = B.getPtrTy(), *I32 = B.getInt32Ty();
    auto Generic = [&](Value *V) -> Value * {
      if (!V)
        return ConstantPointerNull::get(B.getPtrTy());
      return V->getType() == P ? V : B.CreateAddrSpaceCast(V, P);
    };
    return B.CreateCall(fn(AsyncFn, I32, {I32, P, P, I32, P}),
                        {B.getInt32(uint32_t(Op)), Generic(A), Generic(Bv),
                         B.CreateZExtOrTrunc(N, I32), Generic(Bar)});
  }
  /// The C library's float function \p Name of \p X ("exp2f", "exp2").
  Value *libm(IRBuilder<> &B, StringRef FloatName, Value *X) {
    Type *T = X->getType();
    std::string Name = FloatName.str();
    if (T->isDoubleTy() && !Name.empty() && Name.back() == 'f')
      Name.pop_back();
    return B.CreateCall(fn(Name, T, {T}), {X});
  }

  bool rewriteIntrinsic(CallInst *CI, StringRef Name, std::string &Error);
  bool rewriteAsm(CallInst *CI, const InlineAsm &IA, std::string &Error);
};

/// The value of a rewritten call, or nullptr for a call without one.
void finish(CallInst *CI, Value *V) {
  if (V && !CI->getType()->isVoidTy())
    CI->replaceAllUsesWith(V);
  CI->eraseFromParent();
}

bool Rewriter::rewriteIntrinsic(CallInst *CI, StringRef Name,
                                std::string &Error) {
  IRBuilder<> B(CI);
  auto Arg = [&](unsigned I) { return CI->getArgOperand(I); };
  StringRef N = Name;
  N.consume_front("llvm.nvvm.");

  if (N.consume_front("read.ptx.sreg.")) {
    static const std::map<std::string, Sreg> Regs = {
        {"tid.x", Sreg::TidX},       {"tid.y", Sreg::TidY},
        {"tid.z", Sreg::TidZ},       {"ntid.x", Sreg::NtidX},
        {"ntid.y", Sreg::NtidY},     {"ntid.z", Sreg::NtidZ},
        {"ctaid.x", Sreg::CtaidX},   {"ctaid.y", Sreg::CtaidY},
        {"ctaid.z", Sreg::CtaidZ},   {"nctaid.x", Sreg::NctaidX},
        {"nctaid.y", Sreg::NctaidY}, {"nctaid.z", Sreg::NctaidZ},
        {"laneid", Sreg::LaneId},    {"warpsize", Sreg::WarpSize}};
    auto It = Regs.find(N.str());
    if (It == Regs.end()) {
      Error = "special register " + Name.str();
      return false;
    }
    finish(CI, sreg(B, It->second));
    return true;
  }
  if (N == "barrier0" || N == "barrier.sync" || N == "bar.sync" ||
      N == "barrier" || N == "barrier.n") {
    UsedCollectives = true;
    B.CreateCall(fn(BarrierFn, B.getVoidTy(), {}));
    finish(CI, nullptr);
    return true;
  }
  if (N.consume_front("shfl.sync.")) {
    WarpOp Op = N.starts_with("idx")    ? WarpOp::ShflIdx
                : N.starts_with("up")   ? WarpOp::ShflUp
                : N.starts_with("down") ? WarpOp::ShflDown
                                        : WarpOp::ShflBfly;
    if (!N.starts_with("idx") && !N.starts_with("up") &&
        !N.starts_with("down") && !N.starts_with("bfly")) {
      Error = "warp shuffle " + Name.str();
      return false;
    }
    Type *T = CI->getType();
    if (!T->isIntegerTy(32) && !T->isFloatTy()) {
      Error = "warp shuffle of a predicate pair " + Name.str();
      return false;
    }
    Value *A = B.CreateBitCast(Arg(1), B.getInt32Ty());
    Value *R = warp(B, Op, Arg(0), A, Arg(2), Arg(3));
    finish(CI, B.CreateBitCast(R, T));
    return true;
  }
  if (N.consume_front("vote.")) {
    WarpOp Op = N.starts_with("ballot") ? WarpOp::Ballot
                : N.starts_with("all")  ? WarpOp::All
                                        : WarpOp::Any;
    if (!N.ends_with(".sync") || N.starts_with("uni")) {
      Error = "warp vote " + Name.str();
      return false;
    }
    Value *P = B.CreateZExt(Arg(1), B.getInt32Ty());
    Value *R = warp(B, Op, Arg(0), P, B.getInt32(0), B.getInt32(0));
    finish(CI, Op == WarpOp::Ballot ? R : B.CreateTrunc(R, B.getInt1Ty()));
    return true;
  }
  if (N.consume_front("cp.async.")) {
    if (N.starts_with("commit.group") || N.starts_with("wait.")) {
      finish(CI, nullptr);
      return true;
    }
    // cp.async.{ca,cg}.shared.global.{4,8,16}: a copy that has landed by
    // the wait (the simulator copies at once).
    size_t Dot = N.find_last_of('.');
    unsigned Bytes = 0;
    if (N.starts_with("c") && N.contains(".shared.global.") &&
        !N.substr(Dot + 1).getAsInteger(10, Bytes) && CI->arg_size() == 2) {
      B.CreateMemCpy(Arg(0), MaybeAlign(Bytes), Arg(1), MaybeAlign(Bytes),
                     Bytes);
      finish(CI, nullptr);
      return true;
    }
    Error = "asynchronous copy " + Name.str();
    return false;
  }
  if (N.starts_with("membar") || N.starts_with("fence")) {
    B.CreateFence(AtomicOrdering::SequentiallyConsistent);
    finish(CI, nullptr);
    return true;
  }
  // Approximate math: the C library's exact function.
  Type *T = CI->getType();
  if (T->isFloatingPointTy()) {
    Value *R = nullptr;
    if (N.starts_with("ex2."))
      R = libm(B, "exp2f", Arg(0));
    else if (N.starts_with("lg2."))
      R = libm(B, "log2f", Arg(0));
    else if (N.starts_with("sqrt."))
      R = libm(B, "sqrtf", Arg(0));
    else if (N.starts_with("rsqrt."))
      R = B.CreateFDiv(ConstantFP::get(T, 1.0), libm(B, "sqrtf", Arg(0)));
    else if (N.starts_with("rcp."))
      R = B.CreateFDiv(ConstantFP::get(T, 1.0), Arg(0));
    else if (N.starts_with("div."))
      R = B.CreateFDiv(Arg(0), Arg(1));
    else if (N.starts_with("fabs."))
      R = B.CreateUnaryIntrinsic(Intrinsic::fabs, Arg(0));
    else if (N.starts_with("fmin."))
      R = B.CreateBinaryIntrinsic(Intrinsic::minnum, Arg(0), Arg(1));
    else if (N.starts_with("fmax."))
      R = B.CreateBinaryIntrinsic(Intrinsic::maxnum, Arg(0), Arg(1));
    else if (N.starts_with("sin.approx."))
      R = libm(B, "sinf", Arg(0));
    else if (N.starts_with("cos.approx."))
      R = libm(B, "cosf", Arg(0));
    else if (N.starts_with("tanh.approx."))
      R = libm(B, "tanhf", Arg(0));
    if (R) {
      finish(CI, R);
      return true;
    }
  }
  Error = "intrinsic " + Name.str();
  return false;
}

/// The words an inline `ld` returns: \p T itself, or a struct's fields.
std::vector<Type *> resultWords(Type *T) {
  if (auto *ST = dyn_cast<StructType>(T))
    return std::vector<Type *>(ST->element_begin(), ST->element_end());
  return {T};
}

/// \p X (a 16-bit float pattern of type \p Kind: "f16" or "bf16") as f32.
Value *half16ToFloat(IRBuilder<> &B, Value *X, StringRef Kind) {
  Type *HT = Kind == "f16" ? B.getHalfTy() : B.getBFloatTy();
  return B.CreateFPExt(B.CreateBitCast(X, HT), B.getFloatTy());
}

Value *floatToHalf16(IRBuilder<> &B, Value *F, StringRef Kind) {
  Type *HT = Kind == "f16" ? B.getHalfTy() : B.getBFloatTy();
  return B.CreateBitCast(B.CreateFPTrunc(F, HT), B.getInt16Ty());
}

bool Rewriter::rewriteAsm(CallInst *CI, const InlineAsm &IA,
                          std::string &Error) {
  IRBuilder<> B(CI);
  StringRef Text = StringRef(IA.getAsmString()).trim();
  auto Arg = [&](unsigned I) { return CI->getArgOperand(I); };
  Type *T = CI->getType();

  // Barriers in shared memory and bulk copies (the warp-specialized
  // kernels' pipeline): completed at once by the runtime.
  if (Text.contains("mbarrier.init")) {
    async(B, AsyncOp::MbarInit, Arg(0), nullptr, Arg(1), nullptr);
    finish(CI, nullptr);
    return true;
  }
  if (Text.contains("mbarrier.arrive")) {
    const bool Tx = Text.contains("expect_tx");
    async(B, AsyncOp::MbarArrive, Arg(0), nullptr, Tx ? Arg(1) : B.getInt32(0),
          nullptr);
    finish(CI, T->isVoidTy() ? nullptr : Constant::getNullValue(T));
    return true;
  }
  if (Text.contains("mbarrier.try_wait") ||
      Text.contains("mbarrier.test_wait")) {
    Value *Done = async(B, AsyncOp::MbarTest, Arg(0), nullptr, Arg(1), nullptr);
    finish(CI, T->isVoidTy() ? nullptr : B.CreateZExtOrTrunc(Done, T));
    return true;
  }
  if (Text.starts_with("cp.async.bulk.shared")) {
    async(B, AsyncOp::BulkToShared, Arg(0), Arg(1), Arg(2), Arg(3));
    finish(CI, nullptr);
    return true;
  }
  if (Text.starts_with("cp.async.bulk.global")) {
    async(B, AsyncOp::BulkToGlobal, Arg(0), Arg(1), Arg(2), nullptr);
    finish(CI, nullptr);
    return true;
  }
  if (Text.starts_with("cp.async.bulk.commit_group") ||
      Text.starts_with("cp.async.bulk.wait_group")) {
    finish(CI, nullptr);
    return true;
  }
  if (Text.starts_with("createpolicy")) {
    finish(CI, ConstantInt::get(T, 0));
    return true;
  }
  if (Text.starts_with("membar") || Text.starts_with("fence")) {
    B.CreateFence(AtomicOrdering::SequentiallyConsistent);
    finish(CI, nullptr);
    return true;
  }
  if (Text.starts_with("div.full.f32") || Text.starts_with("div.approx") ||
      Text.starts_with("div.rn")) {
    finish(CI, B.CreateFDiv(Arg(0), Arg(1)));
    return true;
  }
  if (Text.starts_with("sub.rn.f32")) {
    finish(CI, B.CreateFSub(Arg(0), Arg(1)));
    return true;
  }
  if (Text.starts_with("rcp.approx") || Text.starts_with("rcp.rn")) {
    finish(CI, B.CreateFDiv(ConstantFP::get(T, 1.0), Arg(0)));
    return true;
  }
  if (Text.starts_with("tanh.approx.f32")) {
    finish(CI, libm(B, "tanhf", Arg(0)));
    return true;
  }
  if (Text.starts_with("ld.")) {
    // ld[.qualifiers].{b32,b64,vN.b32} dst, [addr](, policy): the words
    // one after another from the address (volatile: a poll must not be
    // hoisted out of its loop).
    std::vector<Type *> Words = resultWords(T);
    Value *Ptr = Arg(0);
    uint64_t Total = 0;
    for (Type *W : Words)
      Total += W->getPrimitiveSizeInBits() / 8;
    // A poll may wait for another thread of the block: threads run as
    // fibers.
    UsedCollectives = true;
    Value *Generic = Ptr->getType() == B.getPtrTy()
                         ? Ptr
                         : B.CreateAddrSpaceCast(Ptr, B.getPtrTy());
    B.CreateCall(fn(PollFn, B.getVoidTy(), {B.getPtrTy(), B.getInt32Ty()}),
                 {Generic, B.getInt32(uint32_t(Total))});
    Value *R = PoisonValue::get(T);
    uint64_t Offset = 0;
    for (size_t W = 0; W < Words.size(); ++W) {
      uint64_t Bytes = Words[W]->getPrimitiveSizeInBits() / 8;
      Value *At =
          Offset ? B.CreateConstGEP1_64(B.getInt8Ty(), Ptr, Offset) : Ptr;
      LoadInst *L = B.CreateAlignedLoad(Words[W], At, Align(Bytes));
      L->setVolatile(true);
      R = Words.size() == 1 ? static_cast<Value *>(L)
                            : B.CreateInsertValue(R, L, unsigned(W));
      Offset += Bytes;
    }
    finish(CI, R);
    return true;
  }
  if (Text.starts_with("st.") && CI->arg_size() == 2) {
    Value *V = Arg(1);
    uint64_t Bytes = V->getType()->getPrimitiveSizeInBits() / 8;
    B.CreateAlignedStore(V, Arg(0), Align(Bytes), /*isVolatile=*/true);
    finish(CI, nullptr);
    return true;
  }
  if (Text.starts_with("atom.global.cas.b16")) {
    // One simulated thread runs at a time: a plain compare and swap.
    Value *Pair = B.CreateAtomicCmpXchg(Arg(0), Arg(1), Arg(2), Align(2),
                                        AtomicOrdering::Monotonic,
                                        AtomicOrdering::Monotonic);
    finish(CI, B.CreateExtractValue(Pair, 0));
    return true;
  }
  if (Text.starts_with("red.global.add")) {
    // red.global.add[.noftz].vN.{f32,f16,bf16} [addr], {lanes}: each lane
    // added to its element (f16/bf16 rounded once, through f32).
    StringRef Kind = Text.substr(0, Text.find(' '));
    Kind = Kind.substr(Kind.find_last_of('.') + 1);
    if (Kind != "f32" && Kind != "f16" && Kind != "bf16") {
      Error = "inline PTX '" + Text.str() + "'";
      return false;
    }
    Value *Ptr = Arg(0);
    unsigned Bytes = Kind == "f32" ? 4 : 2;
    for (unsigned L = 1; L < CI->arg_size(); ++L) {
      Value *At = L > 1 ? B.CreateConstGEP1_64(B.getInt8Ty(), Ptr,
                                               uint64_t(L - 1) * Bytes)
                        : Ptr;
      Type *ET = Kind == "f32" ? B.getFloatTy() : B.getInt16Ty();
      Value *Old = B.CreateAlignedLoad(ET, At, Align(Bytes));
      Value *New;
      if (Kind == "f32")
        New = B.CreateFAdd(Old, Arg(L));
      else
        New = floatToHalf16(B,
                            B.CreateFAdd(half16ToFloat(B, Old, Kind),
                                         half16ToFloat(B, Arg(L), Kind)),
                            Kind);
      B.CreateAlignedStore(New, At, Align(Bytes));
    }
    finish(CI, nullptr);
    return true;
  }
  Error = "inline PTX '" + Text.str() + "'";
  return false;
}

bool Rewriter::rewrite(CallInst *CI, std::string &Error) {
  if (auto *IA = dyn_cast<InlineAsm>(CI->getCalledOperand()))
    return rewriteAsm(CI, *IA, Error);
  Function *F = CI->getCalledFunction();
  if (F && F->getName().starts_with("llvm.nvvm."))
    return rewriteIntrinsic(CI, F->getName(), Error);
  return true;
}

/// Defines `i16 @__idxmap_sim_f32_to_bf16(float)`: round to nearest even,
/// NaNs kept quiet.
Function *defineF32ToBf16(Module &M) {
  LLVMContext &C = M.getContext();
  IRBuilder<> B(C);
  auto *F = Function::Create(
      FunctionType::get(B.getInt16Ty(), {B.getFloatTy()}, false),
      GlobalValue::InternalLinkage, "__idxmap_sim_f32_to_bf16", M);
  B.SetInsertPoint(BasicBlock::Create(C, "", F));
  Value *X = F->getArg(0);
  Value *Bits = B.CreateBitCast(X, B.getInt32Ty());
  Value *Lsb = B.CreateAnd(B.CreateLShr(Bits, 16), 1);
  Value *Rounded =
      B.CreateLShr(B.CreateAdd(B.CreateAdd(Bits, B.getInt32(0x7fff)), Lsb), 16);
  Value *Quiet = B.CreateOr(B.CreateLShr(Bits, 16), 0x40);
  Value *IsNan = B.CreateFCmpUNO(X, X);
  B.CreateRet(
      B.CreateTrunc(B.CreateSelect(IsNan, Quiet, Rounded), B.getInt16Ty()));
  return F;
}

/// \p X rounded to float with round-to-odd: rounding that float again to a
/// narrower type (bf16, f16) rounds \p X once.
Value *roundToOddFloat(IRBuilder<> &B, Value *X) {
  Value *F = B.CreateFPTrunc(X, B.getFloatTy());
  Value *Back = B.CreateFPExt(F, B.getDoubleTy());
  Value *Exact = B.CreateFCmpOEQ(Back, X);
  Value *Away = B.CreateFCmpOGT(B.CreateUnaryIntrinsic(Intrinsic::fabs, Back),
                                B.CreateUnaryIntrinsic(Intrinsic::fabs, X));
  Value *Bits = B.CreateBitCast(F, B.getInt32Ty());
  Value *TowardZero =
      B.CreateSelect(Away, B.CreateSub(Bits, B.getInt32(1)), Bits);
  Value *Odd = B.CreateOr(TowardZero, 1);
  return B.CreateBitCast(B.CreateSelect(Exact, Bits, Odd), B.getFloatTy());
}

/// The x86 back end calls these for fptrunc to bf16 (and from f64 to f16);
/// neither libgcc nor the process is sure to have them, so the module
/// brings its own, written in IR (the back end then agrees with itself on
/// how bf16 and f16 values are passed).
void defineNarrowingLibcalls(Module &M) {
  LLVMContext &C = M.getContext();
  IRBuilder<> B(C);
  Function *ToBf16 = defineF32ToBf16(M);
  auto Define = [&](const char *Name, Type *Ret, Type *Arg) -> Function * {
    if (Function *Old = M.getFunction(Name))
      if (!Old->isDeclaration())
        return nullptr;
    auto *F = Function::Create(FunctionType::get(Ret, {Arg}, false),
                               GlobalValue::ExternalLinkage, Name, M);
    B.SetInsertPoint(BasicBlock::Create(C, "", F));
    return F;
  };
  if (Function *F = Define("__truncsfbf2", B.getBFloatTy(), B.getFloatTy()))
    B.CreateRet(
        B.CreateBitCast(B.CreateCall(ToBf16, {F->getArg(0)}), B.getBFloatTy()));
  if (Function *F = Define("__truncdfbf2", B.getBFloatTy(), B.getDoubleTy()))
    B.CreateRet(B.CreateBitCast(
        B.CreateCall(ToBf16, {roundToOddFloat(B, F->getArg(0))}),
        B.getBFloatTy()));
  if (Function *F = Define("__truncdfhf2", B.getHalfTy(), B.getDoubleTy()))
    B.CreateRet(
        B.CreateFPTrunc(roundToOddFloat(B, F->getArg(0)), B.getHalfTy()));
}

/// Adds `void @<kernel>.simentry(ptr %args)`, which loads each parameter
/// through args[i] (the driver's convention) and calls the kernel.
void addEntry(Module &M, Function &K) {
  LLVMContext &C = M.getContext();
  IRBuilder<> B(C);
  auto *E = Function::Create(
      FunctionType::get(B.getVoidTy(), {B.getPtrTy()}, false),
      GlobalValue::ExternalLinkage, entryName(K.getName().str()), M);
  B.SetInsertPoint(BasicBlock::Create(C, "", E));
  std::vector<Value *> Args;
  for (Argument &A : K.args()) {
    Value *Slot =
        B.CreateConstGEP1_64(B.getPtrTy(), E->getArg(0), A.getArgNo());
    Value *P = B.CreateLoad(B.getPtrTy(), Slot);
    Args.push_back(B.CreateLoad(A.getType(), P));
  }
  B.CreateCall(&K, Args);
  B.CreateRetVoid();
}

/// Whether \p P addresses shared memory: a pointer of address space 3, or
/// a generic one derived from a shared array.
bool isSharedPointer(Value *P) {
  if (P->getType()->getPointerAddressSpace() == 3)
    return true;
  auto *G = dyn_cast<GlobalVariable>(getUnderlyingObject(P));
  return G && G->getAddressSpace() == 3;
}

/// Calls `__idxmap_sim_shared(ptr, bytes, kind)` before every load, store
/// and atomic of shared memory, so that the threads' runtime can check that
/// no two threads touch a byte between two synchronizations, one of them
/// writing (SimThreads.cpp). Atomics and ordered accesses are Atomic: they
/// race with plain accesses, not with each other.
void instrumentSharedAccesses(Module &M) {
  IRBuilder<> B(M.getContext());
  FunctionCallee Fn = M.getOrInsertFunction(
      SharedFn,
      FunctionType::get(B.getVoidTy(),
                        {B.getPtrTy(), B.getInt32Ty(), B.getInt32Ty()}, false));
  const DataLayout &DL = M.getDataLayout();
  struct Access {
    Instruction *I;
    Value *Ptr;
    Type *Ty;
    SharedAccess Kind;
  };
  std::vector<Access> Work;
  for (Function &F : M)
    for (BasicBlock &BB : F)
      for (Instruction &I : BB) {
        if (auto *L = dyn_cast<LoadInst>(&I))
          Work.push_back(
              {L, L->getPointerOperand(), L->getType(),
               L->isSimple() ? SharedAccess::Read : SharedAccess::Atomic});
        else if (auto *S = dyn_cast<StoreInst>(&I))
          Work.push_back(
              {S, S->getPointerOperand(), S->getValueOperand()->getType(),
               S->isSimple() ? SharedAccess::Write : SharedAccess::Atomic});
        else if (auto *A = dyn_cast<AtomicRMWInst>(&I))
          Work.push_back(
              {A, A->getPointerOperand(), A->getType(), SharedAccess::Atomic});
        else if (auto *X = dyn_cast<AtomicCmpXchgInst>(&I))
          Work.push_back({X, X->getPointerOperand(),
                          X->getNewValOperand()->getType(),
                          SharedAccess::Atomic});
      }
  for (const Access &A : Work) {
    if (!isSharedPointer(A.Ptr))
      continue;
    B.SetInsertPoint(A.I);
    Value *P = A.Ptr->getType()->getPointerAddressSpace() == 0
                   ? A.Ptr
                   : B.CreateAddrSpaceCast(A.Ptr, B.getPtrTy());
    B.CreateCall(Fn, {P, B.getInt32(uint32_t(DL.getTypeStoreSize(A.Ty))),
                      B.getInt32(uint32_t(A.Kind))});
  }
}

} // namespace

bool prepareForHost(Module &M, const DataLayout &DL, const std::string &Triple,
                    HostModuleInfo &Info, std::string &Error) {
  Rewriter R(M);
  std::vector<CallInst *> Calls;
  for (Function &F : M)
    for (BasicBlock &BB : F)
      for (Instruction &I : BB)
        if (auto *CI = dyn_cast<CallInst>(&I))
          Calls.push_back(CI);
  for (CallInst *CI : Calls)
    if (!R.rewrite(CI, Error)) {
      Error = "the host simulator does not model " + Error;
      return false;
    }
  Info.Collectives = R.UsedCollectives;
  instrumentSharedAccesses(M);

  // libdevice's functions are the C library's of the same name.
  for (Function &F : M)
    if (F.isDeclaration() && F.getName().starts_with("__nv_"))
      F.setName(F.getName().drop_front(5));

  // Shared memory: the dynamic array becomes one of DynamicSharedBytes;
  // every array external, named, so that it can be poisoned per block.
  unsigned N = 0;
  std::vector<GlobalVariable *> Shared;
  for (GlobalVariable &G : M.globals())
    if (G.getAddressSpace() == 3)
      Shared.push_back(&G);
  for (GlobalVariable *G : Shared) {
    std::string Name = "__idxmap_sim_shared." + std::to_string(N++);
    uint64_t Bytes = 0;
    bool Dynamic = G->isDeclaration();
    GlobalVariable *Def = G;
    if (Dynamic) {
      Type *T =
          ArrayType::get(Type::getInt8Ty(M.getContext()), DynamicSharedBytes);
      Def = new GlobalVariable(M, T, false, GlobalValue::ExternalLinkage,
                               ConstantAggregateZero::get(T), Name, nullptr,
                               GlobalValue::NotThreadLocal, 3);
      Def->setAlignment(Align(16));
      G->replaceAllUsesWith(Def);
      G->eraseFromParent();
      Bytes = DynamicSharedBytes;
    } else {
      G->setName(Name);
      G->setLinkage(GlobalValue::ExternalLinkage);
      if (isa<UndefValue>(G->getInitializer()))
        G->setInitializer(Constant::getNullValue(G->getValueType()));
      Bytes = M.getDataLayout().getTypeAllocSize(G->getValueType());
      Info.StaticSharedBytes += Bytes;
    }
    Info.Shared.push_back({Name, Bytes, Dynamic});
  }

  // Kernels: C calling convention, an entry each; no NVPTX attributes.
  std::vector<Function *> Kernels;
  for (Function &F : M) {
    F.removeFnAttr("target-cpu");
    F.removeFnAttr("target-features");
    F.removeFnAttr("tune-cpu");
    if (F.getCallingConv() == CallingConv::PTX_Kernel) {
      F.setCallingConv(CallingConv::C);
      Kernels.push_back(&F);
    }
  }
  for (Function *K : Kernels) {
    Info.Kernels.push_back(K->getName().str());
    addEntry(M, *K);
  }
  if (NamedMDNode *A = M.getNamedMetadata("nvvm.annotations"))
    M.eraseNamedMetadata(A);
  defineNarrowingLibcalls(M);
  M.setDataLayout(DL);
  M.setTargetTriple(Triple);

  std::string Errors;
  raw_string_ostream OS(Errors);
  if (verifyModule(M, &OS)) {
    Error = "the simulator's rewrite built invalid IR (an idxmap bug): " +
            OS.str().substr(0, 400);
    return false;
  }
  return true;
}

} // namespace sim
} // namespace idxmap
