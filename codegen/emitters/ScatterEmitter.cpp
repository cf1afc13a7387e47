//===- ScatterEmitter.cpp - Update elements combined in place -------------===//
//
// Part of idxmap. The scatter emitter builds the kernel ScatterPlan
// describes: a thread per update element finds the operand index its
// scatter indices give (XLA's semantics: a window that does not fit the
// operand is skipped whole) and combines the element into the buffer the
// output shares with the operand: a store, one atomic, or a
// compare-and-swap loop on the element's word running the combiner.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "Emitters.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "KernelBuilder.h"

#include "idxmap/Codegen.h"
#include "idxmap/HloScatter.h"
#include "idxmap/RangeEvaluator.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/InlineAsm.h"

namespace idxmap {
namespace codegen {
namespace {

/// One compare-and-swap of the word at \p WordPtr from \p Old to \p New:
/// the word seen there and whether it was swapped.
std::pair<llvm::Value *, llvm::Value *>
emitCmpXchg(llvm::IRBuilder<> &B, llvm::Value *WordPtr, llvm::Value *Old,
            llvm::Value *New, llvm::Align WordAlign) {
  if (Old->getType()->getIntegerBitWidth() == 16) {
    // LLVM 19 widens a 16-bit cmpxchg to the enclosing 32-bit word.
    llvm::Type *WordTy = Old->getType();
    auto *FT = llvm::FunctionType::get(
        WordTy, {WordPtr->getType(), WordTy, WordTy}, false);
    llvm::Value *Seen = B.CreateCall(
        llvm::InlineAsm::get(FT, "atom.global.cas.b16 $0, [$1], $2, $3;",
                             "=h,l,h,h,~{memory}", /*hasSideEffects=*/true),
        {WordPtr, Old, New});
    return {Seen, B.CreateICmpEQ(Seen, Old)};
  }
  llvm::Value *Pair = B.CreateAtomicCmpXchg(WordPtr, Old, New, WordAlign,
                                            llvm::AtomicOrdering::Monotonic,
                                            llvm::AtomicOrdering::Monotonic);
  return {B.CreateExtractValue(Pair, 0), B.CreateExtractValue(Pair, 1)};
}

/// Combines \p Val (value type) into the element at \p Ptr with a
/// compare-and-swap loop on its word, running the scatter's combiner on
/// the element's current value. A 2-byte element is its own word
/// (`atom.global.cas.b16`, sm_70 on); a 1-byte element shares the aligned 4
/// bytes holding it, which may reach past the buffer's last element: the
/// kernel contract asks for buffers allocated in whole 4-byte words
/// (docs/SIDECAR.md), as cuMemAlloc's are.
void emitCasCombine(llvm::IRBuilder<> &B, llvm::Function &K,
                    const HloComputation &Combiner, llvm::Value *Ptr,
                    llvm::Value *Val, PrimitiveType T,
                    const MathOptions &Math) {
  llvm::LLVMContext &LC = B.getContext();
  const int64_t Bytes = byteWidth(T);
  const unsigned Bits = unsigned(Bytes * 8);
  llvm::IntegerType *Elem = B.getIntNTy(Bits);
  llvm::IntegerType *WordTy = Bytes == 8   ? B.getInt64Ty()
                              : Bytes == 2 ? B.getInt16Ty()
                                           : B.getInt32Ty();
  llvm::Value *WordPtr = Ptr, *Shift = nullptr;
  if (Bytes == 1) {
    llvm::Value *Addr = B.CreatePtrToInt(Ptr, B.getInt64Ty());
    Shift = B.CreateTrunc(
        B.CreateShl(B.CreateAnd(Addr, B.getInt64(3)), B.getInt64(3)), WordTy);
    WordPtr = B.CreateIntToPtr(B.CreateAnd(Addr, B.getInt64(~uint64_t(3))),
                               Ptr->getType());
  }
  const llvm::Align WordAlign(Bytes == 1 ? 4 : uint64_t(Bytes));
  llvm::Value *Init = B.CreateAlignedLoad(WordTy, WordPtr, WordAlign);
  llvm::BasicBlock *Entry = B.GetInsertBlock();
  auto *Loop = llvm::BasicBlock::Create(LC, "cas", &K);
  auto *Done = llvm::BasicBlock::Create(LC, "cas.done", &K);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *Old = B.CreatePHI(WordTy, 2);
  Old->addIncoming(Init, Entry);
  llvm::Value *OldBits = Shift ? B.CreateTrunc(B.CreateLShr(Old, Shift), Elem)
                               : B.CreateTrunc(Old, Elem);
  llvm::Value *OldVal =
      loadConvert(B, B.CreateBitCast(OldBits, storageType(LC, T)), T);
  llvm::Value *New = emitReduction(B, Combiner, {OldVal}, {Val}, Math).front();
  llvm::Value *NewBits = B.CreateBitCast(storeConvert(B, New, T), Elem);
  llvm::Value *NewWord = B.CreateZExt(NewBits, WordTy);
  if (Shift) {
    llvm::Value *Mask = B.CreateShl(
        llvm::ConstantInt::get(WordTy, (uint64_t(1) << Bits) - 1), Shift);
    NewWord = B.CreateOr(B.CreateAnd(Old, B.CreateNot(Mask)),
                         B.CreateShl(NewWord, Shift));
  }
  auto [Seen, Swapped] = emitCmpXchg(B, WordPtr, Old, NewWord, WordAlign);
  Old->addIncoming(Seen, Loop);
  B.CreateCondBr(Swapped, Done, Loop);
  B.SetInsertPoint(Done);
}

/// One `red.global` vector reduction of \p Vals (storage values of \p T:
/// f32 lanes, or f16/bf16 lanes as 16-bit registers) into the aligned
/// run at \p Ptr.
void emitVectorRed(llvm::IRBuilder<> &B, llvm::Value *Ptr,
                   llvm::ArrayRef<llvm::Value *> Vals, PrimitiveType T) {
  const bool F32 = T == PrimitiveType::F32;
  std::string Asm = F32 ? "red.global.add.v" : "red.global.add.noftz.v";
  Asm += std::to_string(Vals.size());
  Asm += F32 ? ".f32" : T == PrimitiveType::F16 ? ".f16" : ".bf16";
  Asm += " [$0], {";
  std::string Cons = "l";
  std::vector<llvm::Value *> Args = {Ptr};
  std::vector<llvm::Type *> Types = {Ptr->getType()};
  for (size_t L = 0; L < Vals.size(); ++L) {
    Asm += (L ? ", $" : "$") + std::to_string(L + 1);
    Cons += F32 ? ",f" : ",h";
    llvm::Value *X = F32 ? Vals[L] : B.CreateBitCast(Vals[L], B.getInt16Ty());
    Args.push_back(X);
    Types.push_back(X->getType());
  }
  Asm += "};";
  auto *FT = llvm::FunctionType::get(B.getVoidTy(), Types, false);
  B.CreateCall(llvm::InlineAsm::get(FT, Asm, Cons + ",~{memory}",
                                    /*hasSideEffects=*/true),
               Args);
}

/// Stores \p Xs (storage values of \p PT) to the run at \p Ptr: one store,
/// a vector store for a run of more than one element.
void emitStoreRun(llvm::IRBuilder<> &B, llvm::Value *Ptr,
                  llvm::ArrayRef<llvm::Value *> Xs, PrimitiveType PT) {
  const int64_t V = int64_t(Xs.size()), Bytes = byteWidth(PT);
  if (V == 1) {
    B.CreateAlignedStore(Xs.front(), Ptr, llvm::Align(uint64_t(Bytes)));
    return;
  }
  auto *VecTy =
      llvm::FixedVectorType::get(storageType(B.getContext(), PT), unsigned(V));
  llvm::Value *Vec = llvm::PoisonValue::get(VecTy);
  for (int64_t L = 0; L < V; ++L)
    Vec = B.CreateInsertElement(Vec, Xs[size_t(L)], uint64_t(L));
  B.CreateAlignedStore(Vec, Ptr, llvm::Align(uint64_t(V * Bytes)));
}

/// Unique indices: no other thread touches the run at \p Ptr, so it is
/// loaded, combined with \p Vals (value types) lane by lane and stored.
void emitReadModifyWrite(llvm::IRBuilder<> &B, const HloComputation &Combiner,
                         llvm::Value *Ptr, llvm::ArrayRef<llvm::Value *> Vals,
                         PrimitiveType PT, const MathOptions &Math) {
  llvm::Type *ST = storageType(B.getContext(), PT);
  const int64_t V = int64_t(Vals.size()), Bytes = byteWidth(PT);
  llvm::Type *RunTy = V == 1 ? ST : llvm::FixedVectorType::get(ST, unsigned(V));
  llvm::Value *Old =
      B.CreateAlignedLoad(RunTy, Ptr, llvm::Align(uint64_t(V * Bytes)));
  std::vector<llvm::Value *> New;
  for (int64_t L = 0; L < V; ++L) {
    llvm::Value *O = V == 1 ? Old : B.CreateExtractElement(Old, uint64_t(L));
    New.push_back(
        storeConvert(B,
                     emitReduction(B, Combiner, {loadConvert(B, O, PT)},
                                   {Vals[size_t(L)]}, Math)
                         .front(),
                     PT));
  }
  emitStoreRun(B, Ptr, New, PT);
}

/// One atomic \p Op per element of the run at \p Ptr, combining
/// \p Stored (storage values of \p PT).
void emitAtomicPerElement(llvm::IRBuilder<> &B, llvm::AtomicRMWInst::BinOp Op,
                          llvm::Value *Ptr,
                          llvm::ArrayRef<llvm::Value *> Stored,
                          PrimitiveType PT) {
  llvm::Type *ST = storageType(B.getContext(), PT);
  const llvm::Align One{uint64_t(byteWidth(PT))};
  for (size_t L = 0; L < Stored.size(); ++L)
    B.CreateAtomicRMW(
        Op, L ? B.CreateConstInBoundsGEP1_64(ST, Ptr, uint64_t(L)) : Ptr,
        Stored[L], One, llvm::AtomicOrdering::Monotonic);
}

/// Combines the run \p Vals (value types) into the operand elements from
/// \p Ptr on, as \p SP says: the plan has proven the run contiguous and
/// aligned to its size.
void emitCombine(llvm::IRBuilder<> &B, llvm::Function &K,
                 const HloInstruction &S, const ScatterPlan &SP,
                 llvm::Value *Ptr, llvm::ArrayRef<llvm::Value *> Vals,
                 PrimitiveType PT, const MathOptions &Math) {
  const int64_t V = int64_t(Vals.size());
  std::vector<llvm::Value *> Stored;
  for (llvm::Value *X : Vals)
    Stored.push_back(storeConvert(B, X, PT));
  const bool Signed = isSignedIntType(PT);
  switch (SP.Combine) {
  case ScatterCombine::Store:
    emitStoreRun(B, Ptr, Stored, PT);
    return;
  case ScatterCombine::ReadModifyWrite:
    emitReadModifyWrite(B, *S.toApply(), Ptr, Vals, PT, Math);
    return;
  case ScatterCombine::AtomicAdd:
    if (Math.VectorAtomics && V > 1 &&
        ((PT == PrimitiveType::F32 && V <= 4) ||
         ((PT == PrimitiveType::F16 || PT == PrimitiveType::BF16) && V <= 8))) {
      emitVectorRed(B, Ptr, Stored, PT);
      return;
    }
    emitAtomicPerElement(B,
                         isFloatType(PT) ? llvm::AtomicRMWInst::FAdd
                                         : llvm::AtomicRMWInst::Add,
                         Ptr, Stored, PT);
    return;
  case ScatterCombine::AtomicMax:
    emitAtomicPerElement(
        B, Signed ? llvm::AtomicRMWInst::Max : llvm::AtomicRMWInst::UMax, Ptr,
        Stored, PT);
    return;
  case ScatterCombine::AtomicMin:
    emitAtomicPerElement(
        B, Signed ? llvm::AtomicRMWInst::Min : llvm::AtomicRMWInst::UMin, Ptr,
        Stored, PT);
    return;
  case ScatterCombine::CompareAndSwap: {
    llvm::Type *ST = storageType(B.getContext(), PT);
    for (int64_t L = 0; L < V; ++L)
      emitCasCombine(B, K, *S.toApply(),
                     L ? B.CreateConstInBoundsGEP1_64(ST, Ptr, uint64_t(L))
                       : Ptr,
                     Vals[size_t(L)], PT, Math);
    return;
  }
  }
}

/// The kernel's function and launch, into \p Info: a parameter per fusion
/// parameter, then the output, which aliases the updated parameter.
Expected<llvm::Function *>
createScatterFunction(llvm::Module &M, const HloInstruction &F,
                      const FusionAnalysis &A, const KernelPlan &P,
                      const MathOptions &Math, KernelInfo &Info) {
  const HloComputation &C = *A.Computation;
  const HloInstruction &S = *A.Roots.front();
  const int64_t T = P.Main.ThreadsPerBlock;
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = P.Emitter;
  if (auto Err = setLaunchShape(Info, F, Math.Device, P.Grid[0], T))
    return *Err;
  std::vector<KernelParamSpec> Specs = fusionKernelParams(C, {}, Info);
  // The output is read as well as written (atomics, compare-and-swap).
  Specs.push_back({S.name(), KernelParamRole::InOut, 16, nullptr});
  Info.Params.push_back({S.name(), true, S.shape(), 16});
  Info.Aliases.push_back(
      {unsigned(C.parameterCount()), unsigned(P.Scatter->UpdatedParam)});
  llvm::Function *K = createKernel(M, Info.Name, Specs);
  setLaunchBounds(*K, {unsigned(T), /*Exact=*/true, 0});
  return K;
}

/// The body of a scatter kernel from the point where a thread knows its
/// id: where its runs of update elements land in the operand and how they
/// are combined there.
class ScatterBody {
public:
  ScatterBody(llvm::IRBuilder<> &B, llvm::Function &K, const FusionAnalysis &A,
              const KernelPlan &P, Context &Ctx, const MathOptions &Math,
              llvm::Type *IndexTy)
      : B(B), LC(B.getContext()), K(K), C(*A.Computation), S(*A.Roots.front()),
        SD(S.scatterDimensions()), Indices(*S.operand(1)),
        Updates(*S.operand(2)), Op(S.shape()), Upd(Updates.shape()),
        IdxS(Indices.shape()), SP(*P.Scatter), TM(P.Main), Math(Math),
        IndexTy(IndexTy), I64(B.getInt64Ty()), PT(Op.Type), V(SP.Vector),
        T(TM.ThreadsPerBlock), Lanes(B, K, C, P.Loop->LoadWidth, IndexTy),
        FE(B, Ctx, C, Lanes.loader(), Math, IndexTy), RE(TM.Map) {
    for (size_t I = 0; SP.EvictFirst && I < SP.ReadOnce.size(); ++I)
      if (SP.ReadOnce[I])
        Lanes.setHint(*C.parameters()[I], CacheHint::EvictFirst);
  }

  /// A thread per run of the mapping: thread \p Th of block \p Bl combines
  /// its run where the window fits.
  void emitRun(llvm::Value *Th, llvm::Value *Bl) {
    Place Pl = placeOf(Th, Bl, 0);
    combineIfFits(Pl.Fits, Pl, "fits");
  }

  /// Segments of SP.Segment updates per thread (thread \p Tid; \p R runs
  /// per window, \p NumUpdates updates).
  void emitSegments(llvm::Value *Tid, int64_t R, int64_t NumUpdates);

private:
  /// Run R of the mapping (thread R mod T of block R / T): its lanes'
  /// update indices, values, and the window's start in the operand (64
  /// bits: an index may be anything its type holds) with whether it fits.
  struct Place {
    std::vector<std::vector<llvm::Value *>> LaneIndex;
    std::vector<llvm::Value *> Vals, Start;
    llvm::Value *Fits = nullptr;
  };

  llvm::Value *cst(int64_t N) { return llvm::ConstantInt::get(IndexTy, N); }
  /// The place of the run of thread \p Th in block \p Bl, the segment's
  /// step \p Step.
  Place placeOf(llvm::Value *Th, llvm::Value *Bl, int64_t Step);
  /// The update index of each lane of the run of \p Th in \p Bl.
  std::vector<std::vector<llvm::Value *>> laneIndices(llvm::Value *Th,
                                                      llvm::Value *Bl);
  /// The window's start in the operand for the update index \p U: the
  /// scatter indices along the scattered dims, \p U's batch along the
  /// input batching dims, 0 elsewhere.
  std::vector<llvm::Value *> windowStart(const std::vector<llvm::Value *> &U);
  /// Whether the window at \p Start lies inside the operand (XLA skips a
  /// window that does not fit, whole).
  llvm::Value *windowFits(const std::vector<llvm::Value *> &Start);
  /// The operand element of lane 0 of \p Pl's window.
  llvm::Value *targetPtr(const Place &Pl);
  /// Combines \p Pl's values into its window where \p Cond holds (always
  /// when null), in a block named \p Name.
  void combineIfFits(llvm::Value *Cond, const Place &Pl, const char *Name);
  /// Folds \p Pl, the next step of a segment, into \p Acc: \p Acc is
  /// combined into the operand first when the window's start changes.
  /// \p Valid (null: always) says whether the step is an update at all.
  void foldStep(Place &Acc, Place Pl, llvm::Value *Valid);

  llvm::IRBuilder<> &B;
  llvm::LLVMContext &LC;
  llvm::Function &K;
  const HloComputation &C;
  const HloInstruction &S;
  const ScatterDimensions &SD;
  const HloInstruction &Indices, &Updates;
  const Shape &Op, &Upd, &IdxS;
  const ScatterPlan &SP;
  const ThreadMapping &TM;
  const MathOptions &Math;
  llvm::Type *IndexTy, *I64;
  const PrimitiveType PT;
  /// Elements per run; threads per block.
  const int64_t V, T;
  LaneLoader Lanes;
  FusedElementEmitter FE;
  RangeEvaluator RE;
};

std::vector<std::vector<llvm::Value *>>
ScatterBody::laneIndices(llvm::Value *Th, llvm::Value *Bl) {
  std::vector<std::vector<llvm::Value *>> LaneIndex;
  for (int64_t L = 0; L < V; ++L) {
    std::vector<llvm::Value *> Idx;
    for (Expr E : TM.Map.results())
      Idx.push_back(emitIndexExpr(B, E, {Th, Bl}, {cst(L)}, RE, IndexTy));
    LaneIndex.push_back(std::move(Idx));
  }
  return LaneIndex;
}

std::vector<llvm::Value *>
ScatterBody::windowStart(const std::vector<llvm::Value *> &U) {
  // The scatter indices' index from U's scatter dims, the index vector
  // dim left for the component.
  const int64_t Ivd = SD.IndexVectorDim, IdxRank = IdxS.rank();
  std::vector<llvm::Value *> IdxAt(size_t(IdxRank), cst(0));
  size_t Slot = 0;
  for (int64_t D = 0; D < Upd.rank(); ++D) {
    if (isUpdateWindowDim(SD, D))
      continue;
    if (int64_t(Slot) == Ivd)
      ++Slot;
    IdxAt[Slot++] = U[size_t(D)];
  }
  std::vector<llvm::Value *> Start(Op.Dims.size(), B.getInt64(0));
  const bool Unsigned = isUnsignedIntType(IdxS.Type);
  for (size_t Kc = 0; Kc < SD.ScatterDimsToOperandDims.size(); ++Kc) {
    if (Ivd < IdxRank)
      IdxAt[size_t(Ivd)] = cst(int64_t(Kc));
    llvm::Value *X = FE.valueAt(Indices, IdxAt);
    X = Unsigned ? B.CreateZExtOrTrunc(X, I64) : B.CreateSExtOrTrunc(X, I64);
    Start[size_t(SD.ScatterDimsToOperandDims[Kc])] = X;
  }
  for (size_t Kb = 0; Kb < SD.InputBatchingDims.size(); ++Kb)
    Start[size_t(SD.InputBatchingDims[Kb])] = B.CreateZExtOrTrunc(
        IdxAt[size_t(SD.ScatterIndicesBatchingDims[Kb])], I64);
  return Start;
}

llvm::Value *ScatterBody::windowFits(const std::vector<llvm::Value *> &Start) {
  llvm::Value *Fits = nullptr;
  for (int64_t D = 0; D < Op.rank(); ++D) {
    const int64_t Size = scatterWindowSize(SD, Upd, D);
    llvm::Value *Ok =
        B.CreateAnd(B.CreateICmpSGE(Start[size_t(D)], B.getInt64(0)),
                    B.CreateICmpSLE(Start[size_t(D)],
                                    B.getInt64(Op.Dims[size_t(D)] - Size)));
    Fits = Fits ? B.CreateAnd(Fits, Ok) : Ok;
  }
  return Fits;
}

ScatterBody::Place ScatterBody::placeOf(llvm::Value *Th, llvm::Value *Bl,
                                        int64_t Step) {
  Place Pl;
  Pl.LaneIndex = laneIndices(Th, Bl);
  // The lanes share the scatter dims (a run is along a window dim): lane
  // 0's give the window's start.
  Pl.Start = windowStart(Pl.LaneIndex.front());
  Pl.Fits = windowFits(Pl.Start);
  // A step's lanes have their own vectors in the loader.
  for (int64_t L = 0; L < V; ++L) {
    Lanes.Lane = Step * V + L;
    Pl.Vals.push_back(FE.valueAt(Updates, Pl.LaneIndex[size_t(L)]));
  }
  return Pl;
}

llvm::Value *ScatterBody::targetPtr(const Place &Pl) {
  const std::vector<llvm::Value *> &U = Pl.LaneIndex.front();
  std::vector<llvm::Value *> Target(Op.Dims.size());
  size_t W = 0;
  for (int64_t D = 0; D < Op.rank(); ++D) {
    llvm::Value *Tg = Pl.Start[size_t(D)];
    if (isOperandWindowDim(SD, D))
      Tg = B.CreateAdd(
          Tg, B.CreateZExtOrTrunc(U[size_t(SD.UpdateWindowDims[W++])], I64));
    Target[size_t(D)] = B.CreateTrunc(Tg, IndexTy);
  }
  return elementPointer(B, storageType(LC, PT), K.getArg(C.parameterCount()),
                        Op, Target, IndexTy);
}

void ScatterBody::combineIfFits(llvm::Value *Cond, const Place &Pl,
                                const char *Name) {
  auto *In = llvm::BasicBlock::Create(LC, Name, &K);
  auto *After = llvm::BasicBlock::Create(LC, std::string(Name) + ".end", &K);
  B.CreateCondBr(Cond ? Cond : B.getTrue(), In, After);
  B.SetInsertPoint(In);
  emitCombine(B, K, S, SP, targetPtr(Pl), Pl.Vals, PT, Math);
  B.CreateBr(After);
  B.SetInsertPoint(After);
}

void ScatterBody::emitSegments(llvm::Value *Tid, int64_t R,
                               int64_t NumUpdates) {
  // Thread t takes run w = t mod R of the window (R runs per window) for
  // updates (t / R) * Seg ... + Seg - 1, whose runs are R apart in the
  // updates' physical order (the window dims are minor). A run whose
  // window starts where the previous one's did is combined in registers;
  // the sum so far is combined into the operand when the start changes
  // and at the end: one atomic per run of equal indices. The last
  // thread's steps past the last update (when Seg does not divide the
  // updates) read step 0's run and change nothing.
  const int64_t Seg = SP.Segment;
  llvm::Value *Chunk = B.CreateUDiv(Tid, cst(R));
  llvm::Value *W = B.CreateURem(Tid, cst(R));
  llvm::Value *First = B.CreateMul(Chunk, cst(Seg));
  Place Acc;
  for (int64_t Step = 0; Step < Seg; ++Step) {
    llvm::Value *Valid = nullptr;
    llvm::Value *At = B.CreateAdd(First, cst(Step));
    if (Step > 0 && NumUpdates % Seg != 0) {
      Valid = B.CreateICmpULT(At, cst(NumUpdates));
      At = B.CreateSelect(Valid, At, First);
    }
    llvm::Value *Run = B.CreateAdd(B.CreateMul(At, cst(R)), W);
    Place Pl =
        placeOf(B.CreateURem(Run, cst(T)), B.CreateUDiv(Run, cst(T)), Step);
    if (Step == 0)
      Acc = std::move(Pl);
    else
      foldStep(Acc, std::move(Pl), Valid);
  }
  combineIfFits(Acc.Fits, Acc, "flush");
}

void ScatterBody::foldStep(Place &Acc, Place Pl, llvm::Value *Valid) {
  llvm::Value *Same = nullptr;
  for (size_t D = 0; D < Pl.Start.size(); ++D) {
    llvm::Value *Eq = B.CreateICmpEQ(Pl.Start[D], Acc.Start[D]);
    Same = Same ? B.CreateAnd(Same, Eq) : Eq;
  }
  if (!Same)
    Same = B.getTrue();
  llvm::Value *Flush = B.CreateAnd(B.CreateNot(Same), Acc.Fits);
  if (Valid)
    Flush = B.CreateAnd(Flush, Valid);
  combineIfFits(Flush, Acc, "flush");
  for (int64_t L = 0; L < V; ++L) {
    llvm::Value *Sum = emitReduction(B, *S.toApply(), {Acc.Vals[size_t(L)]},
                                     {Pl.Vals[size_t(L)]}, Math)
                           .front();
    llvm::Value *X = B.CreateSelect(Same, Sum, Pl.Vals[size_t(L)]);
    Pl.Vals[size_t(L)] =
        Valid ? B.CreateSelect(Valid, X, Acc.Vals[size_t(L)]) : X;
  }
  if (Valid) {
    for (size_t D = 0; D < Pl.Start.size(); ++D)
      Pl.Start[D] = B.CreateSelect(Valid, Pl.Start[D], Acc.Start[D]);
    Pl.Fits = B.CreateSelect(Valid, Pl.Fits, Acc.Fits);
  }
  Acc = std::move(Pl);
}

} // namespace

Expected<KernelInfo> emitScatterKernel(llvm::Module &M, const HloInstruction &F,
                                       const FusionAnalysis &A,
                                       const KernelPlan &P, Context &Ctx,
                                       const MathOptions &Math) {
  requestBackEndOptLevel(M, P.BackEndOptLevel);
  const HloInstruction &S = *A.Roots.front();
  const Shape &Upd = S.operand(2)->shape();
  const ScatterPlan &SP = *P.Scatter;
  const int64_t T = P.Main.ThreadsPerBlock;
  KernelInfo Info;
  Expected<llvm::Function *> K = createScatterFunction(M, F, A, P, Math, Info);
  if (!K)
    return K.error();
  llvm::IRBuilder<> B(&(*K)->getEntryBlock());
  llvm::Type *IndexTy = P.Index32 ? B.getInt32Ty() : B.getInt64Ty();
  auto IdxC = [&](int64_t N) { return llvm::ConstantInt::get(IndexTy, N); };

  // Without segments a thread owns one run of the mapping; with them, Seg
  // consecutive updates' runs at one place of the window.
  const int64_t V = SP.Vector, Seg = SP.Segment;
  const int64_t Runs = Upd.numElements() / V;
  // With segments: R runs per window, one thread per run of the window
  // for each Seg updates.
  const int64_t R =
      Seg == 1 ? 1 : scatterWindowElements(S.scatterDimensions(), Upd) / V;
  const int64_t Threads = Seg == 1 ? Runs : ceilDiv(Runs / R, Seg) * R;
  const int64_t Blocks = ceilDiv(Threads, T);
  GridLoop GL(B, **K, IndexTy, T, P.Grid[0], Blocks);
  llvm::Value *Tid = B.CreateAdd(B.CreateMul(GL.Bl, IdxC(T)), GL.Th);
  if (Blocks * T != Threads) {
    auto *Body = llvm::BasicBlock::Create(M.getContext(), "body", *K);
    B.CreateCondBr(B.CreateICmpULT(Tid, IdxC(Threads)), Body, GL.Done);
    B.SetInsertPoint(Body);
  }
  ScatterBody SB(B, **K, A, P, Ctx, Math, IndexTy);
  if (Seg == 1)
    SB.emitRun(GL.Th, GL.Bl);
  else
    SB.emitSegments(Tid, R, Runs / R);
  GL.finish();
  return Info;
}

} // namespace codegen
} // namespace idxmap
