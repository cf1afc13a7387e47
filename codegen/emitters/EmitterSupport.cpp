//===- EmitterSupport.cpp - Helpers shared by the fusion emitters ---------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "ElementwiseCodegen.h"
#include "KernelBuilder.h"

#include "idxmap/Emit.h"
#include "idxmap/Hlo.h"

#include "idxmap/Context.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

namespace idxmap {
namespace codegen {

llvm::Value *physicalOffset(llvm::IRBuilderBase &B, const Shape &S,
                            llvm::ArrayRef<llvm::Value *> Index,
                            llvm::Type *IndexTy, OffsetTermOrder Order) {
  auto [Off, Const] = splitPhysicalOffset(B, S, Index, IndexTy, Order, false);
  llvm::Value *C = llvm::ConstantInt::get(IndexTy, Const);
  if (!Off)
    return C;
  return Const ? B.CreateAdd(Off, C, "", true, true) : Off;
}

std::pair<llvm::Value *, int64_t>
splitPhysicalOffset(llvm::IRBuilderBase &B, const Shape &S,
                    llvm::ArrayRef<llvm::Value *> Index, llvm::Type *IndexTy,
                    OffsetTermOrder Order, bool PeelAddends) {
  std::vector<int64_t> Strides(S.rank(), 1);
  int64_t Stride = 1;
  for (int64_t D : S.layoutOrDefault()) {
    Strides[D] = Stride;
    Stride *= S.Dims[D];
  }
  std::vector<int64_t> Dims = S.layoutOrDefault();
  if (Order == OffsetTermOrder::Logical)
    for (int64_t D = 0; D < S.rank(); ++D)
      Dims[size_t(D)] = D;
  // Constant coordinates (an unrolled item's, a broadcast's 0) join one
  // constant added last, after the partial sum that items share.
  llvm::Value *Off = nullptr;
  int64_t Const = 0;
  for (int64_t D : Dims) {
    if (S.Dims[D] == 1)
      continue;
    llvm::Value *X = Index[D];
    if (auto *CI = llvm::dyn_cast<llvm::ConstantInt>(X)) {
      Const += CI->getSExtValue() * Strides[D];
      continue;
    }
    // A coordinate X + C whose X is not negative: X + C with no unsigned
    // wrap and C > 0 (X is then at most the coordinate), or with no signed
    // wrap and C < 0 (X is then above it). The variable part is then never
    // negative, and at most the whole offset when the constant is not
    // negative (elementPointer drops inbounds when it is).
    auto *Add = llvm::dyn_cast<llvm::BinaryOperator>(X);
    auto *CI = Add && Add->getOpcode() == llvm::Instruction::Add
                   ? llvm::dyn_cast<llvm::ConstantInt>(Add->getOperand(1))
                   : nullptr;
    if (PeelAddends && CI &&
        (CI->getSExtValue() > 0
             ? Add->hasNoUnsignedWrap()
             : CI->getSExtValue() < 0 && Add->hasNoSignedWrap())) {
      Const += CI->getSExtValue() * Strides[D];
      X = Add->getOperand(0);
    }
    llvm::Value *T =
        Strides[D] == 1
            ? X
            : B.CreateMul(X, llvm::ConstantInt::get(IndexTy, Strides[D]), "",
                          /*HasNUW=*/true, /*HasNSW=*/true);
    Off = Off ? B.CreateAdd(Off, T, "", true, true) : T;
  }
  return {Off, Const};
}

llvm::Value *elementPointer(llvm::IRBuilderBase &B, llvm::Type *ElemTy,
                            llvm::Value *Base, const Shape &S,
                            llvm::ArrayRef<llvm::Value *> Index,
                            llvm::Type *IndexTy, OffsetTermOrder Order,
                            int64_t Back) {
  auto [Off, Const] = splitPhysicalOffset(B, S, Index, IndexTy, Order, true);
  Const -= Back;
  if (!Off)
    return B.CreateConstInBoundsGEP1_64(ElemTy, Base, uint64_t(Const));
  if (Const >= 0) {
    llvm::Value *P = B.CreateInBoundsGEP(ElemTy, Base, Off);
    return Const ? B.CreateConstInBoundsGEP1_64(ElemTy, P, uint64_t(Const)) : P;
  }
  // A negative constant (a shifted tile's items): the variable part alone
  // may point past the array's end, so neither step claims inbounds.
  return B.CreateConstGEP1_64(ElemTy, B.CreateGEP(ElemTy, Base, Off), Const);
}

Diagnostic diagnoseAt(const HloInstruction &I, std::string Message) {
  const HloComputation *C = I.parent();
  if (C && C->parent())
    return C->parent()->diagnose(I.sourceOffset(), std::move(Message));
  return Diagnostic{{"", 0, 0}, std::move(Message), ""};
}

std::optional<Diagnostic> setLaunchShape(KernelInfo &Info,
                                         const HloInstruction &F,
                                         const DeviceModel &D, int64_t Blocks,
                                         int64_t Threads, int64_t SharedBytes) {
  if (auto Why = checkLaunch(D, {Blocks, 1, 1}, {Threads, 1, 1}, SharedBytes))
    return diagnoseAt(F, "fusion '" + F.name() +
                             "': the kernel's launch does "
                             "not fit the device: " +
                             *Why);
  Info.Grid[0] = unsigned(Blocks);
  Info.Block[0] = unsigned(Threads);
  Info.SharedBytes = unsigned(SharedBytes);
  return std::nullopt;
}

std::vector<KernelParamSpec>
fusionKernelParams(const HloComputation &C,
                   llvm::ArrayRef<const HloInstruction *> Roots,
                   KernelInfo &Info) {
  std::vector<KernelParamSpec> Specs;
  for (const HloInstruction *P : C.parameters()) {
    Specs.push_back({P->name(), KernelParamRole::Input, 16, nullptr});
    Info.Params.push_back({P->name(), false, P->shape(), 16});
  }
  for (const HloInstruction *R : Roots) {
    Specs.push_back({R->name(), KernelParamRole::Output, 16, nullptr});
    Info.Params.push_back({R->name(), true, R->shape(), 16});
  }
  return Specs;
}

llvm::Value *loadWithHint(llvm::IRBuilderBase &B, llvm::Type *Ty,
                          llvm::Value *Ptr, uint64_t Alignment,
                          CacheHint Hint) {
  const llvm::DataLayout &DL = B.GetInsertBlock()->getModule()->getDataLayout();
  uint64_t Bytes = DL.getTypeStoreSize(Ty);
  uint64_t Chunk = std::min<uint64_t>(Bytes, 16);
  bool Hinted = Hint != CacheHint::Normal &&
                (Chunk == 4 || Chunk == 8 || Chunk == 16) &&
                Bytes % Chunk == 0 && Alignment >= Chunk &&
                DL.getTypeSizeInBits(Ty) == Bytes * 8;
  if (!Hinted)
    return B.CreateAlignedLoad(Ty, Ptr, llvm::Align(Alignment));

  llvm::LLVMContext &LC = B.getContext();
  llvm::Type *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  // No side effects and no memory access: early CSE keeps one per kernel.
  auto *PolicyFT = llvm::FunctionType::get(I64, false);
  const std::string Level =
      Hint == CacheHint::EvictFirst ? "evict_first" : "evict_last";
  llvm::CallInst *Policy = B.CreateCall(llvm::InlineAsm::get(
      PolicyFT, "createpolicy.fractional.L2::" + Level + ".b64 $0, 1.0;", "=l",
      /*hasSideEffects=*/false));
  Policy->setDoesNotAccessMemory();
  Policy->setDoesNotThrow();

  unsigned Words = unsigned(Chunk / 4);
  std::string Regs, Cons;
  for (unsigned W = 0; W < Words; ++W) {
    Regs += (W ? ", $" : "$") + std::to_string(W);
    Cons += "=r,";
  }
  std::string Asm = "ld.global.nc.L1::" + Level + ".L2::cache_hint";
  Asm += Words == 1 ? ".b32 " : ".v" + std::to_string(Words) + ".b32 ";
  Asm += Words == 1 ? Regs : "{" + Regs + "}";
  Asm +=
      ", [$" + std::to_string(Words) + "], $" + std::to_string(Words + 1) + ";";
  llvm::Type *RetTy = Words == 1
                          ? I32
                          : static_cast<llvm::Type *>(llvm::StructType::get(
                                LC, std::vector<llvm::Type *>(Words, I32)));
  auto *LoadFT = llvm::FunctionType::get(RetTy, {Ptr->getType(), I64}, false);
  llvm::InlineAsm *Load =
      llvm::InlineAsm::get(LoadFT, Asm, Cons + "l,l", /*hasSideEffects=*/false);

  llvm::Value *All = llvm::PoisonValue::get(
      llvm::FixedVectorType::get(I32, unsigned(Bytes / 4)));
  for (uint64_t C = 0; C < Bytes / Chunk; ++C) {
    llvm::Value *At =
        C ? B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Ptr, C * Chunk) : Ptr;
    llvm::CallInst *Got = B.CreateCall(Load, {At, Policy});
    Got->setOnlyReadsMemory();
    Got->setDoesNotThrow();
    for (unsigned W = 0; W < Words; ++W) {
      llvm::Value *Word = Words == 1 ? Got : B.CreateExtractValue(Got, W);
      All = B.CreateInsertElement(All, Word, C * Words + W);
    }
  }
  if (Bytes == 4)
    All = B.CreateExtractElement(All, uint64_t(0));
  return B.CreateBitCast(All, Ty);
}

/// The address a parameter load reads: elementPointer's, or under \p Guard
/// the offset (less \p Back) where it holds and the array's first element
/// where it does not, so that a guarded-off lane still reads in bounds.
static llvm::Value *parameterPointer(llvm::IRBuilderBase &B, llvm::Function &K,
                                     const HloInstruction &P, llvm::Type *ST,
                                     llvm::ArrayRef<llvm::Value *> Index,
                                     llvm::Type *IndexTy, OffsetTermOrder Order,
                                     int64_t Back, llvm::Value *Guard) {
  llvm::Value *Base = K.getArg(P.parameterNumber());
  if (!Guard)
    return elementPointer(B, ST, Base, P.shape(), Index, IndexTy, Order, Back);
  llvm::Value *Off = physicalOffset(B, P.shape(), Index, IndexTy, Order);
  if (Back)
    Off = B.CreateSub(Off, llvm::ConstantInt::get(IndexTy, Back));
  Off = B.CreateSelect(Guard, Off, llvm::ConstantInt::get(IndexTy, 0));
  return B.CreateInBoundsGEP(ST, Base, Off);
}

llvm::Value *loadParameterElement(llvm::IRBuilderBase &B, llvm::Function &K,
                                  const HloInstruction &P,
                                  llvm::ArrayRef<llvm::Value *> Index,
                                  llvm::Type *IndexTy, OffsetTermOrder Order,
                                  CacheHint Hint, llvm::Value *Guard) {
  PrimitiveType PT = P.shape().Type;
  llvm::Type *ST = storageType(B.getContext(), PT);
  llvm::Value *Ptr =
      parameterPointer(B, K, P, ST, Index, IndexTy, Order, 0, Guard);
  return loadConvert(B, loadWithHint(B, ST, Ptr, byteWidth(PT), Hint), PT);
}

llvm::Value *loadParameterVector(llvm::IRBuilderBase &B, llvm::Function &K,
                                 const HloInstruction &P,
                                 llvm::ArrayRef<llvm::Value *> Index, int64_t W,
                                 llvm::Type *IndexTy, OffsetTermOrder Order,
                                 int64_t Back, CacheHint Hint,
                                 llvm::Value *Guard) {
  PrimitiveType PT = P.shape().Type;
  llvm::Type *ST = storageType(B.getContext(), PT);
  llvm::Value *Ptr =
      parameterPointer(B, K, P, ST, Index, IndexTy, Order, Back, Guard);
  auto *VT = llvm::FixedVectorType::get(ST, unsigned(W));
  return loadWithHint(B, VT, Ptr,
                      uint64_t(std::min<int64_t>(16, W * byteWidth(PT))), Hint);
}

llvm::Constant *reducerIdentity(llvm::LLVMContext &LC, const HloComputation &R,
                                PrimitiveType PT) {
  if (R.parameterCount() != 2)
    return nullptr;
  const HloInstruction *Root = R.root();
  if (Root->operandCount() != 2 || !Root->shape().isScalar() ||
      Root->shape().Type != PT)
    return nullptr;
  const HloInstruction *P0 = R.parameter(0), *P1 = R.parameter(1);
  if (!((Root->operand(0) == P0 && Root->operand(1) == P1) ||
        (Root->operand(0) == P1 && Root->operand(1) == P0)))
    return nullptr;
  return combinerIdentity(LC, Root->opcode(), PT);
}

llvm::Constant *combinerIdentity(llvm::LLVMContext &LC, HloOpcode Op,
                                 PrimitiveType PT) {
  llvm::Type *T = valueType(LC, PT);
  bool Float = isFloatType(PT), Pred = PT == PrimitiveType::Pred;
  bool Signed = isSignedIntType(PT);
  unsigned Bits = T->isIntegerTy() ? T->getIntegerBitWidth() : 0;
  switch (Op) {
  case HloOpcode::Add:
    if (Float)
      return llvm::ConstantFP::getNegativeZero(T);
    return Pred ? nullptr : llvm::ConstantInt::get(T, 0);
  case HloOpcode::Multiply:
    if (Float)
      return llvm::ConstantFP::get(T, 1.0);
    return Pred ? nullptr : llvm::ConstantInt::get(T, 1);
  case HloOpcode::Maximum:
  case HloOpcode::Minimum: {
    // The lowest value for max, the highest for min.
    bool Max = Op == HloOpcode::Maximum;
    if (Float)
      return llvm::ConstantFP::getInfinity(T, /*Negative=*/Max);
    if (Pred)
      return llvm::ConstantInt::getBool(LC, !Max);
    if (Signed)
      return llvm::ConstantInt::get(LC,
                                    Max ? llvm::APInt::getSignedMinValue(Bits)
                                        : llvm::APInt::getSignedMaxValue(Bits));
    return llvm::ConstantInt::get(LC, Max ? llvm::APInt::getMinValue(Bits)
                                          : llvm::APInt::getMaxValue(Bits));
  }
  case HloOpcode::And:
    if (Float)
      return nullptr;
    return llvm::ConstantInt::get(LC, llvm::APInt::getAllOnes(Bits));
  case HloOpcode::Or:
  case HloOpcode::Xor:
    if (Float)
      return nullptr;
    return llvm::ConstantInt::get(T, 0);
  default:
    return nullptr;
  }
}

Diagnostic emitterRefusal(const HloInstruction &F, const std::string &Emitter,
                          const std::string &Why) {
  return diagnoseAt(F, "fusion '" + F.name() + "': " + Emitter +
                           " emitter: " + Why);
}

GridLoop::GridLoop(llvm::IRBuilder<> &B, llvm::Function &K,
                   llvm::Type *IndexTy, int64_t Threads, int64_t Grid,
                   int64_t Blocks)
    : B(B), IndexTy(IndexTy), Grid(Grid), Blocks(Blocks) {
  llvm::LLVMContext &LC = K.getContext();
  Th = B.CreateZExtOrTrunc(emitThreadId(B, GpuDim::X, unsigned(Threads)),
                           IndexTy);
  Bl = B.CreateZExtOrTrunc(emitBlockId(B, GpuDim::X, unsigned(Grid)),
                           IndexTy);
  Exit = llvm::BasicBlock::Create(LC, "exit", &K);
  Done = Exit;
  if (Grid < Blocks) {
    llvm::BasicBlock *Entry = B.GetInsertBlock();
    auto *Loop = llvm::BasicBlock::Create(LC, "stride", &K);
    Done = llvm::BasicBlock::Create(LC, "stride.next", &K);
    B.CreateBr(Loop);
    B.SetInsertPoint(Loop);
    StrideBl = B.CreatePHI(IndexTy, 2, "bl");
    StrideBl->addIncoming(Bl, Entry);
    Bl = StrideBl;
  }
}

void GridLoop::finish() {
  B.CreateBr(Done);
  if (StrideBl) {
    B.SetInsertPoint(Done);
    llvm::Value *Next = B.CreateAdd(
        StrideBl, llvm::ConstantInt::get(IndexTy, Grid), "", true, true);
    StrideBl->addIncoming(Next, Done);
    B.CreateCondBr(
        B.CreateICmpULT(Next, llvm::ConstantInt::get(IndexTy, Blocks)),
        StrideBl->getParent(), Exit);
  }
  B.SetInsertPoint(Exit);
  B.CreateRetVoid();
}

LaneLoader::LaneLoader(llvm::IRBuilder<> &B, llvm::Function &K,
                       const HloComputation &C,
                       const std::vector<int64_t> &Widths, llvm::Type *IndexTy)
    : B(B), K(K), IndexTy(IndexTy) {
  for (size_t I = 0; I < C.parameters().size(); ++I)
    Width[C.parameters()[I]] = I < Widths.size() ? Widths[I] : 1;
}

std::function<llvm::Value *(const HloInstruction &,
                            llvm::ArrayRef<llvm::Value *>)>
LaneLoader::loader() {
  return [this](const HloInstruction &P, llvm::ArrayRef<llvm::Value *> Index) {
    return load(P, Index, nullptr, nullptr);
  };
}

GuardedParameterLoader LaneLoader::guardedLoader() {
  return [this](const HloInstruction &P, llvm::ArrayRef<llvm::Value *> Index,
                llvm::Value *Guard, const HloInstruction *Key) {
    return load(P, Index, Guard, Key);
  };
}

llvm::Value *LaneLoader::load(const HloInstruction &P,
                              llvm::ArrayRef<llvm::Value *> Index,
                              llvm::Value *Guard,
                              const HloInstruction *GuardKey) {
  const int64_t W = Width[&P];
  if (W <= 1)
    return loadParameterElement(B, K, P, Index, IndexTy,
                                OffsetTermOrder::Logical, hint(P), Guard);
  // A guarded group is shared by the lanes of one guard only: the guard is
  // the same for all of them (LoopPlan::SpeculatedPads).
  auto Key = std::make_tuple(&P, Lane / W, GuardKey);
  llvm::Value *Vec = Vectors[Key];
  if (Vec &&
      llvm::cast<llvm::Instruction>(Vec)->getParent() != B.GetInsertBlock())
    Vec = nullptr;
  if (!Vec) {
    // The proof: this lane's element is the group's first plus Lane mod W,
    // and the group's first is W-aligned.
    Vec = loadParameterVector(B, K, P, Index, W, IndexTy,
                              OffsetTermOrder::Logical, Lane % W, hint(P),
                              Guard);
    Vectors[Key] = Vec;
  }
  return loadConvert(B, B.CreateExtractElement(Vec, uint64_t(Lane % W)),
                     P.shape().Type);
}

} // namespace codegen
} // namespace idxmap
