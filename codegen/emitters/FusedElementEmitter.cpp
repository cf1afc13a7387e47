//===- FusedElementEmitter.cpp - Values of a fused computation ------------===//
//
// Part of idxmap. Each instruction is computed from its operands' values at
// the operand indices its output-to-input map names; ops whose maps have a
// restricted domain (pad, concatenate, dynamic-update-slice) branch so that
// the untaken side never reads out of bounds.
//
//===----------------------------------------------------------------------===//
#include "FusedElementEmitter.h"
#include "ExprCodegen.h"

#include "idxmap/HloInterpreter.h"
#include "idxmap/RangeEvaluator.h"

#include "llvm/IR/Constants.h"

#include <cassert>

namespace idxmap {
namespace codegen {

FusedElementEmitter::FusedElementEmitter(llvm::IRBuilder<> &B, Context &Ctx,
                                         const HloComputation &C,
                                         ParameterLoader Loader,
                                         const MathOptions &Math,
                                         llvm::Type *IndexTy)
    : B(B), Ctx(Ctx), C(C), Loader(std::move(Loader)), Math(Math),
      IndexTy(IndexTy) {}

const InstructionIndexing &
FusedElementEmitter::indexingOf(const HloInstruction &I, int64_t OutputId) {
  auto Key = std::make_pair(&I, OutputId);
  auto It = Indexing.find(Key);
  if (It == Indexing.end())
    It = Indexing
             .emplace(Key, computeOutputToInputIndexing(Ctx, I, OutputId))
             .first;
  return It->second;
}

std::vector<llvm::Value *>
FusedElementEmitter::applyMap(const IndexingMap &Map,
                              llvm::ArrayRef<llvm::Value *> Index,
                              llvm::ArrayRef<llvm::Value *> Syms) {
  return emitIndexExprs(B, Map, Index, Syms, IndexTy);
}

llvm::Value *FusedElementEmitter::inDomain(const IndexingMap &Map,
                                           llvm::ArrayRef<llvm::Value *> Index,
                                           llvm::ArrayRef<llvm::Value *> Syms,
                                           const Shape &IndexShape) {
  // The index values range over the instruction's whole output shape; the
  // runtime variables are clamped to their bounds.
  DomainCheckOptions O;
  for (int64_t D : IndexShape.Dims)
    O.DimValueRanges.push_back({0, D - 1});
  for (unsigned S = 0; S < Map.numSymbols(); ++S)
    O.SymValueRanges.push_back(Map.symbolVar(S).Bound);
  return emitDomainCheck(B, Map, Index, Syms, IndexTy, O);
}

llvm::Value *
FusedElementEmitter::emitIfElse(llvm::Value *Cond,
                                const std::function<llvm::Value *()> &Then,
                                const std::function<llvm::Value *()> &Else) {
  if (auto *CI = llvm::dyn_cast<llvm::ConstantInt>(Cond))
    return CI->isOne() ? Then() : Else();
  llvm::Function *F = B.GetInsertBlock()->getParent();
  llvm::LLVMContext &LC = B.getContext();
  auto *ThenBB = llvm::BasicBlock::Create(LC, "then", F);
  auto *ElseBB = llvm::BasicBlock::Create(LC, "else", F);
  auto *Merge = llvm::BasicBlock::Create(LC, "merge", F);
  B.CreateCondBr(Cond, ThenBB, ElseBB);
  auto Saved = Cache;
  B.SetInsertPoint(ThenBB);
  llvm::Value *TV = Then();
  llvm::BasicBlock *ThenEnd = B.GetInsertBlock();
  B.CreateBr(Merge);
  Cache = Saved;
  B.SetInsertPoint(ElseBB);
  llvm::Value *EV = Else();
  llvm::BasicBlock *ElseEnd = B.GetInsertBlock();
  B.CreateBr(Merge);
  Cache = Saved;
  B.SetInsertPoint(Merge);
  llvm::PHINode *Phi = B.CreatePHI(TV->getType(), 2);
  Phi->addIncoming(TV, ThenEnd);
  Phi->addIncoming(EV, ElseEnd);
  return Phi;
}

llvm::Value *
FusedElementEmitter::runtimeOffset(const RuntimeBinding &Bd,
                                   const Interval &Bound,
                                   llvm::ArrayRef<llvm::Value *> Index) {
  // The offset operand's value at the binding's index, clamped to the
  // feasible range as XLA clamps dynamic-slice starts.
  std::vector<llvm::Value *> SrcIdx = applyMap(Bd.Map, Index, {});
  llvm::Value *V = valueAt(*Bd.Source, SrcIdx);
  if (V->getType()->isIntegerTy())
    V = B.CreateSExtOrTrunc(V, IndexTy);
  else
    V = B.CreateFPToSI(V, IndexTy);
  llvm::Value *Lo = llvm::ConstantInt::get(IndexTy, Bound.Lo, true);
  llvm::Value *Hi = llvm::ConstantInt::get(IndexTy, Bound.Hi, true);
  V = B.CreateSelect(B.CreateICmpSLT(V, Lo), Lo, V);
  return B.CreateSelect(B.CreateICmpSGT(V, Hi), Hi, V);
}

llvm::Value *FusedElementEmitter::valueAt(const HloInstruction &I,
                                          llvm::ArrayRef<llvm::Value *> Index,
                                          int64_t OutputId) {
  if (!Overrides.empty()) {
    auto O = Overrides.find(&I);
    if (O != Overrides.end())
      return O->second(Index);
  }
  auto Key = std::make_tuple(&I, OutputId,
                             std::vector<llvm::Value *>(Index.begin(),
                                                        Index.end()));
  auto It = Cache.find(Key);
  if (It != Cache.end())
    return It->second;
  llvm::Value *V = compute(I, Index, OutputId);
  Cache[Key] = V;
  return V;
}

llvm::Value *FusedElementEmitter::compute(const HloInstruction &I,
                                          llvm::ArrayRef<llvm::Value *> Index,
                                          int64_t OutputId) {
  llvm::LLVMContext &LC = B.getContext();
  HloOpcode Op = I.opcode();
  switch (Op) {
  case HloOpcode::Parameter:
    return Loader(I, Index);
  case HloOpcode::Constant: {
    const Literal &L = I.literal();
    if (L.elementCount() == 1 || isSplatLiteral(L))
      return literalElement(LC, L, 0);
    // A small array constant: a private global, indexed.
    llvm::Type *T = valueType(LC, I.shape().Type);
    std::vector<llvm::Constant *> Elems;
    for (int64_t K = 0; K < L.elementCount(); ++K)
      Elems.push_back(literalElement(LC, L, K));
    auto *AT = llvm::ArrayType::get(T, Elems.size());
    llvm::Module &M = *B.GetInsertBlock()->getModule();
    auto *G = new llvm::GlobalVariable(
        M, AT, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(AT, Elems), I.name() + ".const");
    llvm::Value *Lin = llvm::ConstantInt::get(IndexTy, 0);
    for (int64_t D = 0; D < I.shape().rank(); ++D)
      Lin = B.CreateAdd(B.CreateMul(Lin, llvm::ConstantInt::get(
                                             IndexTy, I.shape().Dims[D])),
                        Index[D]);
    llvm::Value *P = B.CreateInBoundsGEP(
        AT, G, {llvm::ConstantInt::get(IndexTy, 0), Lin});
    return B.CreateLoad(T, P);
  }
  case HloOpcode::Iota: {
    llvm::Value *V = Index[I.iotaDimension()];
    PrimitiveType PT = I.shape().Type;
    if (isFloatType(PT))
      return fromCompute(B, B.CreateSIToFP(V, computeType(LC, PT)), PT);
    return B.CreateSExtOrTrunc(V, valueType(LC, PT));
  }
  case HloOpcode::Tuple:
    return valueAt(*I.operand(OutputId), Index);
  case HloOpcode::GetTupleElement:
    return valueAt(*I.operand(0), Index, I.tupleIndex());
  case HloOpcode::Reduce:
    return emitReduce(I, Index, OutputId);
  default:
    break;
  }

  const InstructionIndexing &Idx = indexingOf(I, OutputId);
  if (isElementwise(Op)) {
    std::vector<llvm::Value *> Ops;
    for (int64_t K = 0; K < I.operandCount(); ++K) {
      const HloInstruction &O = *I.operand(K);
      Ops.push_back(O.shape().isScalar()
                        ? valueAt(O, {})
                        : valueAt(O, Index));
    }
    return emitElementwise(B, I, Ops, Math);
  }

  // Data movement: one operand read through its map, or a choice between
  // operands by domain.
  auto Read = [&](int64_t K) -> llvm::Value * {
    const OperandMap &OM = Idx.Operands[K].front();
    std::vector<llvm::Value *> Syms;
    for (unsigned R = 0; R < OM.Map.numRuntimeVars(); ++R)
      Syms.push_back(runtimeOffset(OM.Bindings[R], OM.Map.runtimeVars()[R].Bound,
                                   Index));
    return valueAt(*I.operand(K), applyMap(OM.Map, Index, Syms));
  };
  switch (Op) {
  case HloOpcode::Pad: {
    const IndexingMap &M0 = Idx.Operands[0].front().Map;
    if (M0.isKnownEmpty())
      return valueAt(*I.operand(1), {});
    return emitIfElse(
        inDomain(M0, Index, {}, I.shape()), [&] { return Read(0); },
        [&] { return valueAt(*I.operand(1), {}); });
  }
  case HloOpcode::Concatenate: {
    // Operand k covers [offset_k, offset_k + size_k) of the concat dim.
    std::function<llvm::Value *(int64_t)> Pick = [&](int64_t K) {
      if (K + 1 == I.operandCount())
        return Read(K);
      const IndexingMap &MK = Idx.Operands[K].front().Map;
      return emitIfElse(inDomain(MK, Index, {}, I.shape()), [&] { return Read(K); },
                        [&] { return Pick(K + 1); });
    };
    return Pick(0);
  }
  case HloOpcode::DynamicUpdateSlice: {
    const OperandMap &OM = Idx.Operands[1].front();
    std::vector<llvm::Value *> Syms;
    for (unsigned R = 0; R < OM.Map.numRuntimeVars(); ++R)
      Syms.push_back(runtimeOffset(OM.Bindings[R], OM.Map.runtimeVars()[R].Bound,
                                   Index));
    return emitIfElse(
        inDomain(OM.Map, Index, Syms, I.shape()),
        [&] { return valueAt(*I.operand(1), applyMap(OM.Map, Index, Syms)); },
        [&] { return Read(0); });
  }
  default:
    break;
  }
  if (Idx.Operands.size() == 1 && Idx.Operands[0].size() == 1 &&
      !Idx.Operands[0][0].Map.isUndefined() &&
      Idx.Operands[0][0].Map.numRangeVars() == 0)
    return Read(0);
  if (Op == HloOpcode::DynamicSlice)
    return Read(0);
  assert(false && "op not supported by the fused element emitter");
  return llvm::UndefValue::get(valueType(LC, I.shape().Type));
}

llvm::Value *FusedElementEmitter::emitReduce(const HloInstruction &I,
                                             llvm::ArrayRef<llvm::Value *> Index,
                                             int64_t OutputId) {
  // A reduce inside a loop body: a sequential loop over the reduced index
  // space, in row-major order like the interpreter. An f16/bf16 sum
  // accumulates in f32 and rounds once at the end, as the interpreter sums
  // in f64: rounded at every step, a long sequential sum stalls (bf16: at
  // 256 for terms below 1, 128 below 0.5), far outside toleranceFor()'s
  // tree-order bound (H200 random_reductions seeds 9249 and 4645).
  int64_t N = I.operandCount() / 2;
  const PrimitiveType RT = I.operand(0)->shape().Type;
  const bool WideSum = N == 1 && isScalarAdd(*I.toApply()) &&
                       (RT == PrimitiveType::BF16 || RT == PrimitiveType::F16);
  const IndexingMap &Map = indexingOf(I, OutputId).Operands[0].front().Map;
  unsigned NR = Map.numRangeVars();
  llvm::LLVMContext &LC = B.getContext();
  llvm::Function *F = B.GetInsertBlock()->getParent();
  std::vector<llvm::Value *> Inits;
  for (int64_t K = 0; K < N; ++K)
    Inits.push_back(valueAt(*I.operand(N + K), {}));
  if (WideSum)
    Inits[0] = toCompute(B, Inits[0], RT);
  int64_t Total = 1;
  for (unsigned R = 0; R < NR; ++R)
    Total *= Map.rangeVars()[R].Bound.Hi + 1;
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Body = llvm::BasicBlock::Create(LC, "reduce.body", F);
  auto *Exit = llvm::BasicBlock::Create(LC, "reduce.exit", F);
  B.CreateBr(Body);
  B.SetInsertPoint(Body);
  llvm::PHINode *Iv = B.CreatePHI(IndexTy, 2);
  Iv->addIncoming(llvm::ConstantInt::get(IndexTy, 0), Pre);
  std::vector<llvm::PHINode *> Accs;
  for (llvm::Value *V : Inits) {
    llvm::PHINode *P = B.CreatePHI(V->getType(), 2);
    P->addIncoming(V, Pre);
    Accs.push_back(P);
  }
  auto Saved = Cache;
  // Delinearize the induction variable into the range variables.
  std::vector<llvm::Value *> Syms(NR);
  llvm::Value *Rest = Iv;
  for (unsigned R = NR; R-- > 0;) {
    llvm::Value *Size =
        llvm::ConstantInt::get(IndexTy, Map.rangeVars()[R].Bound.Hi + 1);
    Syms[R] = R == 0 ? Rest : B.CreateURem(Rest, Size);
    Rest = B.CreateUDiv(Rest, Size);
  }
  std::vector<llvm::Value *> InIdx = applyMap(Map, Index, Syms);
  std::vector<llvm::Value *> Vals, AccVals(Accs.begin(), Accs.end());
  for (int64_t K = 0; K < N; ++K)
    Vals.push_back(valueAt(*I.operand(K), InIdx));
  llvm::SmallVector<llvm::Value *, 2> Next =
      WideSum ? llvm::SmallVector<llvm::Value *, 2>{B.CreateFAdd(
                    AccVals[0], toCompute(B, Vals[0], RT))}
              : emitReduction(B, *I.toApply(), AccVals, Vals, Math);
  Cache = Saved;
  llvm::Value *IvNext = B.CreateAdd(Iv, llvm::ConstantInt::get(IndexTy, 1));
  llvm::BasicBlock *Latch = B.GetInsertBlock();
  Iv->addIncoming(IvNext, Latch);
  for (int64_t K = 0; K < N; ++K)
    Accs[K]->addIncoming(Next[K], Latch);
  B.CreateCondBr(
      B.CreateICmpSLT(IvNext, llvm::ConstantInt::get(IndexTy, Total)), Body,
      Exit);
  B.SetInsertPoint(Exit);
  // The loop's values do not dominate the exit's users through the cache.
  std::vector<llvm::Value *> Results;
  for (int64_t K = 0; K < N; ++K)
    Results.push_back(Next[K]);
  if (WideSum)
    Results[0] = fromCompute(B, Results[0], RT);
  return Results[OutputId];
}

} // namespace codegen
} // namespace idxmap
