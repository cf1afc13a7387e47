//===- codegen/KernelBuilder.cpp - NVPTX kernel IR helpers ----------------===//
//
// Part of idxmap. See KernelBuilder.h. Every NVPTX-specific spelling (calling
// convention, annotation keys, intrinsic names, inline asm) is written once,
// here.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"

#include <cassert>

using namespace llvm;
using namespace idxmap;
using namespace idxmap::codegen;

//===----------------------------------------------------------------------===//
// Kernels and launch bounds
//===----------------------------------------------------------------------===//

namespace {

/// The `!nvvm.annotations` keys of LLVM 19 launch bounds. LLVM 21+ reads
/// `"nvvm.maxntid"`/`"nvvm.reqntid"`/`"nvvm.minctasm"` function attributes
/// instead: when moving on, change setLaunchBounds/getLaunchBounds only.
constexpr const char *MaxNtidKey = "maxntidx";
constexpr const char *ReqNtidKey = "reqntidx";
constexpr const char *MinCtaKey = "minctasm";

bool isLaunchBoundKey(StringRef Key) {
  return Key == MaxNtidKey || Key == ReqNtidKey || Key == MinCtaKey ||
         Key == "maxntidy" || Key == "maxntidz" || Key == "reqntidy" ||
         Key == "reqntidz";
}

/// Visits every (key, value) pair that `!nvvm.annotations` records for \p F.
template <typename Fn> void forEachAnnotation(const Function &F, Fn Visit) {
  const NamedMDNode *Annotations =
      F.getParent()->getNamedMetadata("nvvm.annotations");
  if (!Annotations)
    return;
  for (const MDNode *Node : Annotations->operands()) {
    if (Node->getNumOperands() < 3)
      continue;
    auto *Subject = dyn_cast_or_null<ValueAsMetadata>(Node->getOperand(0));
    if (!Subject || Subject->getValue() != &F)
      continue;
    for (unsigned I = 1; I + 1 < Node->getNumOperands(); I += 2) {
      auto *Key = dyn_cast_or_null<MDString>(Node->getOperand(I));
      auto *Val =
          mdconst::dyn_extract_or_null<ConstantInt>(Node->getOperand(I + 1));
      if (Key && Val)
        Visit(Key->getString(), Val->getZExtValue());
    }
  }
}

/// Drops the launch-bound annotations of \p F (so setLaunchBounds replaces
/// rather than accumulates).
void eraseLaunchBounds(Function &F) {
  NamedMDNode *Annotations =
      F.getParent()->getNamedMetadata("nvvm.annotations");
  if (!Annotations)
    return;
  SmallVector<MDNode *, 8> Kept;
  for (MDNode *Node : Annotations->operands()) {
    bool Drop = false;
    if (Node->getNumOperands() == 3)
      if (auto *Subject =
              dyn_cast_or_null<ValueAsMetadata>(Node->getOperand(0)))
        if (auto *Key = dyn_cast_or_null<MDString>(Node->getOperand(1)))
          Drop =
              Subject->getValue() == &F && isLaunchBoundKey(Key->getString());
    if (!Drop)
      Kept.push_back(Node);
  }
  Annotations->clearOperands();
  for (MDNode *Node : Kept)
    Annotations->addOperand(Node);
}

void addAnnotation(Function &F, StringRef Key, unsigned Value) {
  LLVMContext &Ctx = F.getContext();
  NamedMDNode *Annotations =
      F.getParent()->getOrInsertNamedMetadata("nvvm.annotations");
  Metadata *Ops[] = {
      ValueAsMetadata::get(&F), MDString::get(Ctx, Key),
      ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(Ctx), Value))};
  Annotations->addOperand(MDNode::get(Ctx, Ops));
}

} // namespace

Function *codegen::createKernel(Module &M, StringRef Name,
                                ArrayRef<KernelParamSpec> Params) {
  LLVMContext &Ctx = M.getContext();
  SmallVector<Type *, 8> Types;
  for (const KernelParamSpec &P : Params) {
    if (P.Role == KernelParamRole::Scalar)
      Types.push_back(P.ScalarType ? P.ScalarType : Type::getInt64Ty(Ctx));
    else
      Types.push_back(PointerType::get(Ctx, GlobalAddrSpace));
  }
  auto *FT = FunctionType::get(Type::getVoidTy(Ctx), Types, /*isVarArg=*/false);
  assert(!M.getFunction(Name) && "kernel name already used in the module");
  Function *F = Function::Create(FT, GlobalValue::ExternalLinkage, Name, M);
  F->setCallingConv(CallingConv::PTX_Kernel);
  F->addFnAttr(Attribute::NoUnwind);
  for (unsigned I = 0; I < Params.size(); ++I) {
    const KernelParamSpec &P = Params[I];
    Argument *A = F->getArg(I);
    A->setName(P.Name);
    if (P.Role == KernelParamRole::Scalar) {
      A->addAttr(Attribute::NoUndef);
      continue;
    }
    assert(P.Align != 0 && (P.Align & (P.Align - 1)) == 0 &&
           "buffer alignment must be a power of two");
    // ld.global.nc needs a noalias, read-only kernel argument (NVPTX ISel).
    A->addAttr(Attribute::NoAlias);
    A->addAttr(Attribute::NoCapture);
    A->addAttr(Attribute::NoUndef);
    A->addAttr(Attribute::getWithAlignment(Ctx, Align(P.Align)));
    if (P.Role == KernelParamRole::Input)
      A->addAttr(Attribute::ReadOnly);
    else if (P.Role == KernelParamRole::Output)
      A->addAttr(Attribute::WriteOnly);
  }
  BasicBlock::Create(Ctx, "entry", F);
  return F;
}

bool codegen::isKernel(const Function &F) {
  return F.getCallingConv() == CallingConv::PTX_Kernel;
}

void codegen::setLaunchBounds(Function &F, const LaunchBounds &Bounds) {
  assert(isKernel(F) && "launch bounds apply to kernels only");
  assert((!Bounds.Exact || Bounds.MaxThreadsX != 0) &&
         "an exact block size needs a size");
  eraseLaunchBounds(F);
  if (Bounds.MaxThreadsX != 0)
    addAnnotation(F, Bounds.Exact ? ReqNtidKey : MaxNtidKey,
                  Bounds.MaxThreadsX);
  if (Bounds.MinBlocksPerSm != 0)
    addAnnotation(F, MinCtaKey, Bounds.MinBlocksPerSm);
}

LaunchBounds codegen::getLaunchBounds(const Function &F) {
  LaunchBounds Bounds;
  forEachAnnotation(F, [&](StringRef Key, uint64_t Value) {
    if (Key == MaxNtidKey) {
      Bounds.MaxThreadsX = unsigned(Value);
    } else if (Key == ReqNtidKey) {
      Bounds.MaxThreadsX = unsigned(Value);
      Bounds.Exact = true;
    } else if (Key == MinCtaKey) {
      Bounds.MinBlocksPerSm = unsigned(Value);
    }
  });
  return Bounds;
}

//===----------------------------------------------------------------------===//
// Special registers
//===----------------------------------------------------------------------===//

namespace {

Intrinsic::ID pick(GpuDim D, Intrinsic::ID X, Intrinsic::ID Y,
                   Intrinsic::ID Z) {
  switch (D) {
  case GpuDim::X:
    return X;
  case GpuDim::Y:
    return Y;
  case GpuDim::Z:
    return Z;
  }
  return X;
}

/// Reads a special register; when \p Bound is non-zero the value is known to
/// lie in [Lo, Bound).
Value *readSpecialRegister(IRBuilderBase &B, Intrinsic::ID ID, uint64_t Lo,
                           uint64_t Bound, const Twine &Name) {
  CallInst *C = B.CreateIntrinsic(ID, {}, {}, nullptr, Name);
  if (Bound != 0) {
    assert(Lo < Bound && "empty special-register range");
    MDBuilder MDB(B.getContext());
    C->setMetadata(LLVMContext::MD_range,
                   MDB.createRange(APInt(32, Lo), APInt(32, Bound)));
  }
  return C;
}

} // namespace

Value *codegen::emitThreadId(IRBuilderBase &B, GpuDim D, unsigned BlockSize) {
  return readSpecialRegister(B,
                             pick(D, Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                  Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                  Intrinsic::nvvm_read_ptx_sreg_tid_z),
                             0, BlockSize, "tid");
}

Value *codegen::emitBlockId(IRBuilderBase &B, GpuDim D, unsigned GridSize) {
  return readSpecialRegister(B,
                             pick(D, Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                  Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                  Intrinsic::nvvm_read_ptx_sreg_ctaid_z),
                             0, GridSize, "ctaid");
}

Value *codegen::emitBlockDim(IRBuilderBase &B, GpuDim D) {
  // At most 1024 threads per block in x and y, 64 in z.
  return readSpecialRegister(B,
                             pick(D, Intrinsic::nvvm_read_ptx_sreg_ntid_x,
                                  Intrinsic::nvvm_read_ptx_sreg_ntid_y,
                                  Intrinsic::nvvm_read_ptx_sreg_ntid_z),
                             1, D == GpuDim::Z ? 65 : 1025, "ntid");
}

Value *codegen::emitGridDim(IRBuilderBase &B, GpuDim D) {
  return readSpecialRegister(B,
                             pick(D, Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                  Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                  Intrinsic::nvvm_read_ptx_sreg_nctaid_z),
                             0, 0, "nctaid");
}

Value *codegen::emitLaneId(IRBuilderBase &B) {
  return readSpecialRegister(B, Intrinsic::nvvm_read_ptx_sreg_laneid, 0,
                             WarpSize, "lane");
}

//===----------------------------------------------------------------------===//
// Warp shuffles, barriers, shared memory
//===----------------------------------------------------------------------===//

namespace {

/// One `shfl.sync.bfly.b32` of an i32 or f32.
Value *shuffleWord(IRBuilderBase &B, Value *Word, unsigned LaneMask,
                   unsigned Clamp, uint32_t MemberMask) {
  Intrinsic::ID ID = Word->getType()->isFloatTy()
                         ? Intrinsic::nvvm_shfl_sync_bfly_f32
                         : Intrinsic::nvvm_shfl_sync_bfly_i32;
  assert((Word->getType()->isFloatTy() || Word->getType()->isIntegerTy(32)) &&
         "shuffle words are i32 or f32");
  return B.CreateIntrinsic(
      ID, {},
      {B.getInt32(MemberMask), Word, B.getInt32(LaneMask), B.getInt32(Clamp)});
}

} // namespace

Value *codegen::emitShuffleXor(IRBuilderBase &B, Value *V, unsigned LaneMask,
                               unsigned Width, uint32_t MemberMask) {
  assert(Width >= 1 && Width <= WarpSize && (Width & (Width - 1)) == 0 &&
         "shuffle width must be a power of two up to 32");
  assert(LaneMask < Width && "lane mask leaves the lane group");
  unsigned Clamp = ((WarpSize - Width) << 8) | (WarpSize - 1);
  Type *T = V->getType();
  if (T->isFloatTy() || T->isIntegerTy(32))
    return shuffleWord(B, V, LaneMask, Clamp, MemberMask);

  unsigned Bits = T->getPrimitiveSizeInBits().getFixedValue();
  assert(Bits != 0 && Bits % 8 == 0 && (Bits < 32 || Bits % 32 == 0) &&
         Bits <= 128 && "cannot shuffle a value of this type");
  if (Bits < 32) {
    Value *Small = B.CreateBitCast(V, B.getIntNTy(Bits));
    Value *Word = shuffleWord(B, B.CreateZExt(Small, B.getInt32Ty()), LaneMask,
                              Clamp, MemberMask);
    return B.CreateBitCast(B.CreateTrunc(Word, B.getIntNTy(Bits)), T);
  }
  unsigned NumWords = Bits / 32;
  if (NumWords == 1)
    return B.CreateBitCast(shuffleWord(B, B.CreateBitCast(V, B.getInt32Ty()),
                                       LaneMask, Clamp, MemberMask),
                           T);
  auto *WordsTy = FixedVectorType::get(B.getInt32Ty(), NumWords);
  Value *Words = B.CreateBitCast(V, WordsTy);
  Value *Result = PoisonValue::get(WordsTy);
  for (unsigned I = 0; I < NumWords; ++I) {
    Value *Word = B.CreateExtractElement(Words, B.getInt32(I));
    Result = B.CreateInsertElement(
        Result, shuffleWord(B, Word, LaneMask, Clamp, MemberMask),
        B.getInt32(I));
  }
  return B.CreateBitCast(Result, T);
}

void codegen::emitBarrier(IRBuilderBase &B) {
  // LLVM 19: llvm.nvvm.barrier0 → `bar.sync 0`. LLVM 21+ replaces it with
  // llvm.nvvm.barrier.cta.sync.aligned.all.
  B.CreateIntrinsic(Intrinsic::nvvm_barrier0, {}, {});
}

GlobalVariable *codegen::createSharedArray(Module &M, Type *Elem,
                                           uint64_t Count, StringRef Name,
                                           unsigned Alignment) {
  assert(Count != 0 && "empty shared array");
  auto *ArrayTy = ArrayType::get(Elem, Count);
  // NVPTX accepts only undef initializers for .shared variables.
  auto *GV = new GlobalVariable(M, ArrayTy, /*isConstant=*/false,
                                GlobalValue::InternalLinkage,
                                UndefValue::get(ArrayTy), Name, nullptr,
                                GlobalValue::NotThreadLocal, SharedAddrSpace);
  GV->setAlignment(Align(Alignment));
  return GV;
}

//===----------------------------------------------------------------------===//
// Fast approximate math
//===----------------------------------------------------------------------===//

namespace {

/// Applies \p ScalarFn to \p X (f32) or to each element of a vector of f32.
template <typename Fn>
Value *mapFloatElements(IRBuilderBase &B, Value *X, Fn ScalarFn) {
  Type *T = X->getType();
  if (T->isFloatTy())
    return ScalarFn(X);
  auto *VT = dyn_cast<FixedVectorType>(T);
  assert(VT && VT->getElementType()->isFloatTy() &&
         "approximate math takes f32 or vectors of f32");
  Value *Result = PoisonValue::get(VT);
  for (unsigned I = 0; I < VT->getNumElements(); ++I)
    Result = B.CreateInsertElement(
        Result, ScalarFn(B.CreateExtractElement(X, B.getInt32(I))),
        B.getInt32(I));
  return Result;
}

} // namespace

Value *codegen::emitTanhApprox(IRBuilderBase &B, Value *X) {
  return mapFloatElements(B, X, [&](Value *S) -> Value * {
    auto *FT = FunctionType::get(B.getFloatTy(), {B.getFloatTy()}, false);
    InlineAsm *Asm = InlineAsm::get(FT, "tanh.approx.f32 $0, $1;", "=f,f",
                                    /*hasSideEffects=*/false);
    CallInst *C = B.CreateCall(FT, Asm, {S}, "tanh");
    // Pure: lets CSE, LICM and DCE treat it like any arithmetic.
    C->setDoesNotAccessMemory();
    C->setDoesNotThrow();
    return C;
  });
}

Value *codegen::emitExp2Approx(IRBuilderBase &B, Value *X) {
  return mapFloatElements(B, X, [&](Value *S) -> Value * {
    return B.CreateIntrinsic(Intrinsic::nvvm_ex2_approx_ftz_f, {}, {S}, nullptr,
                             "exp2");
  });
}

Value *codegen::emitExpApprox(IRBuilderBase &B, Value *X) {
  // log2(e) rounded to f32.
  constexpr float Log2E = 1.44269504088896340736f;
  Value *Scaled = B.CreateFMul(X, ConstantFP::get(X->getType(), Log2E));
  return emitExp2Approx(B, Scaled);
}
