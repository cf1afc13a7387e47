//===- FusedElementEmitter.cpp - Values of a fused computation ------------===//
//
// Part of idxmap. Each instruction is computed from its operands' values at
// the operand indices its output-to-input map names; ops whose maps have a
// restricted domain (pad, concatenate, dynamic-update-slice) branch so that
// the untaken side never reads out of bounds.
//
//===----------------------------------------------------------------------===//
#include "FusedElementEmitter.h"
#include "EmitterSupport.h"
#include "ExprCodegen.h"

#include "idxmap/HloInterpreter.h"
#include "idxmap/RangeEvaluator.h"

#include "llvm/IR/Constants.h"

#include <cassert>
#include <functional>

namespace idxmap {
namespace codegen {

FusedElementEmitter::FusedElementEmitter(llvm::IRBuilder<> &B, Context &Ctx,
                                         const HloComputation &C,
                                         ParameterLoader Loader,
                                         const MathOptions &Math,
                                         llvm::Type *IndexTy)
    : B(B), Ctx(Ctx), C(C), Loader(std::move(Loader)), Math(Math),
      IndexTy(IndexTy),
      Outline(Math.SubgraphFunctions.begin(), Math.SubgraphFunctions.end()) {}

const InstructionIndexing &
FusedElementEmitter::indexingOf(const HloInstruction &I, int64_t OutputId) {
  auto Key = std::make_pair(&I, OutputId);
  auto It = Indexing.find(Key);
  if (It == Indexing.end())
    It = Indexing.emplace(Key, computeOutputToInputIndexing(Ctx, I, OutputId))
             .first;
  return It->second;
}

std::vector<llvm::Value *>
FusedElementEmitter::applyMap(const IndexingMap &Map,
                              llvm::ArrayRef<llvm::Value *> Index,
                              llvm::ArrayRef<llvm::Value *> Syms) {
  return emitIndexExprs(B, MapRanges, Map, Index, Syms, IndexTy);
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

void FusedElementEmitter::forget(std::vector<CacheKey> &Keys) {
  for (const CacheKey &K : Keys)
    Cache.erase(K);
  Keys.clear();
}

llvm::Value *
FusedElementEmitter::emitIfElse(llvm::Value *Cond,
                                const std::function<llvm::Value *()> &Then,
                                const std::function<llvm::Value *()> &Else) {
  return emitIfElseValues(
             Cond, [&] { return std::vector<llvm::Value *>{Then()}; },
             [&] { return std::vector<llvm::Value *>{Else()}; })
      .front();
}

std::vector<llvm::Value *> FusedElementEmitter::emitIfElseValues(
    llvm::Value *Cond, const std::function<std::vector<llvm::Value *>()> &Then,
    const std::function<std::vector<llvm::Value *>()> &Else) {
  if (auto *CI = llvm::dyn_cast<llvm::ConstantInt>(Cond))
    return CI->isOne() ? Then() : Else();
  llvm::Function *F = B.GetInsertBlock()->getParent();
  llvm::LLVMContext &LC = B.getContext();
  auto *ThenBB = llvm::BasicBlock::Create(LC, "then", F);
  auto *ElseBB = llvm::BasicBlock::Create(LC, "else", F);
  auto *Merge = llvm::BasicBlock::Create(LC, "merge", F);
  B.CreateCondBr(Cond, ThenBB, ElseBB);
  // Values computed in a branch do not dominate the other branch or the
  // merge: forgotten when the branch ends.
  std::vector<CacheKey> Branch, *Outer = Added;
  Added = &Branch;
  B.SetInsertPoint(ThenBB);
  std::vector<llvm::Value *> TV = Then();
  llvm::BasicBlock *ThenEnd = B.GetInsertBlock();
  B.CreateBr(Merge);
  forget(Branch);
  B.SetInsertPoint(ElseBB);
  std::vector<llvm::Value *> EV = Else();
  llvm::BasicBlock *ElseEnd = B.GetInsertBlock();
  B.CreateBr(Merge);
  forget(Branch);
  Added = Outer;
  B.SetInsertPoint(Merge);
  std::vector<llvm::Value *> Phis;
  for (size_t K = 0; K < TV.size(); ++K) {
    llvm::PHINode *Phi = B.CreatePHI(TV[K]->getType(), 2);
    Phi->addIncoming(TV[K], ThenEnd);
    Phi->addIncoming(EV[K], ElseEnd);
    Phis.push_back(Phi);
  }
  return Phis;
}

llvm::Value *FusedElementEmitter::emitSwitch(
    llvm::Value *Sel, size_t N,
    const std::function<llvm::Value *(size_t)> &Case) {
  llvm::Function *F = B.GetInsertBlock()->getParent();
  llvm::LLVMContext &LC = B.getContext();
  std::vector<llvm::BasicBlock *> Cases;
  for (size_t K = 0; K < N; ++K)
    Cases.push_back(llvm::BasicBlock::Create(LC, "case", F));
  auto *Merge = llvm::BasicBlock::Create(LC, "merge", F);
  auto *SelTy = llvm::cast<llvm::IntegerType>(Sel->getType());
  llvm::SwitchInst *SW = B.CreateSwitch(Sel, Cases.back(), unsigned(N - 1));
  for (size_t K = 0; K + 1 < N; ++K)
    SW->addCase(llvm::ConstantInt::get(SelTy, K), Cases[K]);
  std::vector<CacheKey> Branch, *Outer = Added;
  Added = &Branch;
  std::vector<std::pair<llvm::Value *, llvm::BasicBlock *>> In;
  for (size_t K = 0; K < N; ++K) {
    B.SetInsertPoint(Cases[K]);
    llvm::Value *V = Case(K);
    In.push_back({V, B.GetInsertBlock()});
    B.CreateBr(Merge);
    forget(Branch);
  }
  Added = Outer;
  B.SetInsertPoint(Merge);
  llvm::PHINode *Phi = B.CreatePHI(In.front().first->getType(), unsigned(N));
  for (auto &[V, From] : In)
    Phi->addIncoming(V, From);
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

std::vector<llvm::Value *>
FusedElementEmitter::mapWithRuntime(const OperandMap &OM,
                                    llvm::ArrayRef<llvm::Value *> Index) {
  std::vector<llvm::Value *> Syms;
  for (unsigned R = 0; R < OM.Map.numRuntimeVars(); ++R)
    Syms.push_back(
        runtimeOffset(OM.Bindings[R], OM.Map.runtimeVars()[R].Bound, Index));
  return applyMap(OM.Map, Index, Syms);
}

llvm::Value *FusedElementEmitter::lookup(const HloInstruction &I,
                                         llvm::ArrayRef<llvm::Value *> Index,
                                         int64_t OutputId) {
  if (!Overrides.empty()) {
    auto O = Overrides.find(&I);
    if (O != Overrides.end())
      return O->second(Index);
  }
  auto It = Cache.find(std::make_tuple(
      &I, OutputId, std::vector<llvm::Value *>(Index.begin(), Index.end())));
  return It != Cache.end() ? It->second : nullptr;
}

FusedElementEmitter::Step FusedElementEmitter::stepOf(const HloInstruction &I,
                                                      int64_t OutputId) {
  switch (I.opcode()) {
  case HloOpcode::Parameter:
  case HloOpcode::Constant:
  case HloOpcode::Iota:
  case HloOpcode::Reduce:
  case HloOpcode::Pad:
  case HloOpcode::Concatenate:
  case HloOpcode::DynamicUpdateSlice:
    return Step::Compute;
  case HloOpcode::Tuple:
  case HloOpcode::GetTupleElement:
    return Step::Forward;
  default:
    break;
  }
  if (isElementwise(I.opcode()))
    return Step::Elementwise;
  const InstructionIndexing &Idx = indexingOf(I, OutputId);
  if ((Idx.Operands.size() == 1 && Idx.Operands[0].size() == 1 &&
       !Idx.Operands[0][0].Map.isUndefined() &&
       Idx.Operands[0][0].Map.numRangeVars() == 0) ||
      I.opcode() == HloOpcode::DynamicSlice ||
      I.opcode() == HloOpcode::Gather)
    return Step::Read;
  return Step::Compute;
}

bool FusedElementEmitter::nextOperand(Frame &F, Request &R) {
  const HloInstruction &I = *F.I;
  switch (F.Kind) {
  case Step::Forward:
    if (F.Next++ > 0)
      return false;
    if (I.opcode() == HloOpcode::Tuple)
      R = {I.operand(F.OutputId), F.Index, 0};
    else
      R = {I.operand(0), F.Index, I.tupleIndex()};
    return true;
  case Step::Elementwise: {
    if (F.Next == I.operandCount())
      return false;
    const HloInstruction *O = I.operand(F.Next++);
    R = {O, O->shape().isScalar() ? std::vector<llvm::Value *>{} : F.Index, 0};
    return true;
  }
  case Step::Read: {
    if (F.Next++ > 0)
      return false;
    const OperandMap &OM = indexingOf(I, F.OutputId).Operands[0].front();
    std::vector<llvm::Value *> Syms;
    for (unsigned V = 0; V < OM.Map.numRuntimeVars(); ++V)
      Syms.push_back(runtimeOffset(OM.Bindings[V],
                                   OM.Map.runtimeVars()[V].Bound, F.Index));
    R = {I.operand(0), applyMap(OM.Map, F.Index, Syms), 0};
    return true;
  }
  case Step::Compute:
    return false;
  }
  return false;
}

llvm::Value *FusedElementEmitter::valueAt(const HloInstruction &I,
                                          llvm::ArrayRef<llvm::Value *> Index,
                                          int64_t OutputId) {
  if (llvm::Value *V = lookup(I, Index, OutputId))
    return V;
  if (&I != Building && outlined(I, OutputId)) {
    llvm::Value *V = callFunction(I, Index);
    CacheKey Key(&I, OutputId, {Index.begin(), Index.end()});
    if (Added)
      Added->push_back(Key);
    Cache[std::move(Key)] = V;
    return V;
  }
  return valueInline(I, Index, OutputId);
}

llvm::Value *
FusedElementEmitter::valueInline(const HloInstruction &I,
                                 llvm::ArrayRef<llvm::Value *> Index,
                                 int64_t OutputId) {
  // Depth-first over the operands with an explicit stack, in the order a
  // recursive walk would emit them: each operand's value before the next
  // operand's index, the instruction's own IR last. Only ops that branch
  // or loop (compute()) call back into valueAt, so the native stack grows
  // with their nesting (bounded by emitModule), not with the
  // length of a chain.
  std::vector<Frame> Stack;
  Stack.push_back({&I,
                   std::vector<llvm::Value *>(Index.begin(), Index.end()),
                   OutputId,
                   stepOf(I, OutputId),
                   0,
                   {}});
  while (true) {
    Request R;
    if (nextOperand(Stack.back(), R)) {
      if (llvm::Value *V = lookup(*R.I, R.Index, R.OutputId)) {
        Stack.back().Ops.push_back(V);
        continue;
      }
      if (outlined(*R.I, R.OutputId)) {
        Stack.back().Ops.push_back(valueAt(*R.I, R.Index, R.OutputId));
        continue;
      }
      Step K = stepOf(*R.I, R.OutputId);
      Stack.push_back({R.I, std::move(R.Index), R.OutputId, K, 0, {}});
      continue;
    }
    Frame &F = Stack.back();
    llvm::Value *V = nullptr;
    switch (F.Kind) {
    case Step::Forward:
      V = F.Ops.front();
      break;
    case Step::Read:
      // A bitcast between element types of one width reads its operand's
      // element and reinterprets the bits (u32 to f32 in JAX's random
      // numbers); the other reads are the operand's value.
      V = F.I->opcode() == HloOpcode::Bitcast &&
                  F.I->shape().Type != F.I->operand(0)->shape().Type
              ? emitElementwise(B, *F.I, F.Ops, Math)
              : F.Ops.front();
      break;
    case Step::Elementwise:
      V = emitElementwise(B, *F.I, F.Ops, Math);
      break;
    case Step::Compute:
      V = compute(*F.I, F.Index, F.OutputId);
      break;
    }
    CacheKey Key(F.I, F.OutputId, std::move(F.Index));
    if (Added)
      Added->push_back(Key);
    Cache[std::move(Key)] = V;
    Stack.pop_back();
    if (Stack.empty())
      return V;
    Stack.back().Ops.push_back(V);
  }
}

llvm::Value *
FusedElementEmitter::operandNumber(llvm::Value *V,
                                   const std::vector<int64_t> &Offsets) {
  // Table[j] = Offsets[j], padded to a power of two with the largest
  // index value; J = the last j with Table[j] <= V, found by halving steps.
  auto *Ty = llvm::cast<llvm::IntegerType>(IndexTy);
  const int64_t Pad = Ty->getBitWidth() == 32 ? INT32_MAX : INT64_MAX;
  size_t P = 1;
  while (P < Offsets.size())
    P *= 2;
  std::vector<llvm::Constant *> Table;
  for (size_t J = 0; J < P; ++J)
    Table.push_back(llvm::ConstantInt::get(
        Ty, J < Offsets.size() ? Offsets[J] : Pad, /*IsSigned=*/true));
  auto *AT = llvm::ArrayType::get(Ty, P);
  auto *G = new llvm::GlobalVariable(
      *B.GetInsertBlock()->getModule(), AT, /*isConstant=*/true,
      llvm::GlobalValue::PrivateLinkage, llvm::ConstantArray::get(AT, Table),
      "concat.offsets");
  llvm::Value *J = llvm::ConstantInt::get(Ty, 0);
  for (size_t Step = P / 2; Step >= 1; Step /= 2) {
    llvm::Value *Cand =
        B.CreateAdd(J, llvm::ConstantInt::get(Ty, Step), "", true, true);
    llvm::Value *At = B.CreateLoad(
        Ty, B.CreateInBoundsGEP(AT, G, {llvm::ConstantInt::get(Ty, 0), Cand}));
    J = B.CreateSelect(B.CreateICmpSGE(V, At), Cand, J);
  }
  return J;
}

llvm::Value *FusedElementEmitter::compute(const HloInstruction &I,
                                          llvm::ArrayRef<llvm::Value *> Index,
                                          int64_t OutputId) {
  llvm::LLVMContext &LC = B.getContext();
  HloOpcode Op = I.opcode();
  switch (Op) {
  case HloOpcode::Parameter:
    // Inside a subgraph function: a plain load of the kernel's argument,
    // which the function then takes as its own.
    if (Building)
      return loadParameterElement(B, *Kernel, I, Index, IndexTy);
    if (SelfGuard) {
      // In bounds: every index below its dim (unsigned: and not negative).
      llvm::Value *G = Guard;
      for (size_t D = 0; D < Index.size(); ++D) {
        llvm::Value *In = B.CreateICmpULT(
            Index[D], llvm::ConstantInt::get(IndexTy, I.shape().Dims[D]));
        G = G ? B.CreateAnd(G, In) : In;
      }
      if (G)
        return Guarded(I, Index, G, GuardPad);
    }
    if (Guard)
      return Guarded(I, Index, Guard, GuardPad);
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
      Lin = B.CreateAdd(
          B.CreateMul(Lin, llvm::ConstantInt::get(IndexTy, I.shape().Dims[D])),
          Index[D]);
    llvm::Value *P =
        B.CreateInBoundsGEP(AT, G, {llvm::ConstantInt::get(IndexTy, 0), Lin});
    return B.CreateLoad(T, P);
  }
  case HloOpcode::Iota: {
    llvm::Value *V = Index[I.iotaDimension()];
    PrimitiveType PT = I.shape().Type;
    if (isFloatType(PT))
      return fromCompute(B, B.CreateSIToFP(V, computeType(LC, PT)), PT);
    return B.CreateSExtOrTrunc(V, valueType(LC, PT));
  }
  case HloOpcode::Reduce:
  case HloOpcode::ReduceWindow:
    return emitReduce(I, Index, OutputId);
  default:
    break;
  }

  // A choice between operands by domain (stepOf sends elementwise ops and
  // plain reads to valueAt's own walk).
  const InstructionIndexing &Idx = indexingOf(I, OutputId);
  auto Read = [&](int64_t K) -> llvm::Value * {
    const OperandMap &OM = Idx.Operands[K].front();
    std::vector<llvm::Value *> Syms;
    for (unsigned R = 0; R < OM.Map.numRuntimeVars(); ++R)
      Syms.push_back(
          runtimeOffset(OM.Bindings[R], OM.Map.runtimeVars()[R].Bound, Index));
    return valueAt(*I.operand(K), applyMap(OM.Map, Index, Syms));
  };
  switch (Op) {
  case HloOpcode::Pad: {
    const IndexingMap &M0 = Idx.Operands[0].front().Map;
    if (M0.isKnownEmpty())
      return valueAt(*I.operand(1), {});
    if (llvm::Value *V = speculatePad(I, Index))
      return V;
    return emitIfElse(
        inDomain(M0, Index, {}, I.shape()), [&] { return Read(0); },
        [&] { return valueAt(*I.operand(1), {}); });
  }
  case HloOpcode::Concatenate: {
    if (llvm::Value *V = speculateConcat(I, Index))
      return V;
    // Operand k covers [Offset_k, Offset_{k+1}) of the concat dim. Few
    // operands: a binary tree of branches; more: the operand's number from
    // a branch-free binary search over a table of the offsets, then one
    // switch (linear IR; a chain of domain checks was quadratic).
    const size_t D = size_t(I.dimensions().front());
    std::vector<int64_t> Ks, Offsets;
    int64_t Offset = 0;
    for (int64_t K = 0; K < I.operandCount(); ++K) {
      int64_t Size = I.operand(K)->shape().Dims[D];
      if (Size == 0)
        continue;
      Ks.push_back(K);
      Offsets.push_back(Offset);
      Offset += Size;
    }
    if (Ks.size() > 4)
      return emitSwitch(operandNumber(Index[D], Offsets), Ks.size(),
                        [&](size_t J) { return Read(Ks[J]); });
    std::function<llvm::Value *(size_t, size_t)> Pick = [&](size_t Lo,
                                                            size_t Hi) {
      if (Hi - Lo == 1)
        return Read(Ks[Lo]);
      size_t Mid = Lo + (Hi - Lo) / 2;
      llvm::Value *Cond = B.CreateICmpSLT(
          Index[D], llvm::ConstantInt::get(IndexTy, Offsets[Mid]));
      return emitIfElse(
          Cond, [&] { return Pick(Lo, Mid); }, [&] { return Pick(Mid, Hi); });
    };
    return Pick(0, Ks.size());
  }
  case HloOpcode::DynamicUpdateSlice: {
    const OperandMap &OM = Idx.Operands[1].front();
    std::vector<llvm::Value *> Syms;
    for (unsigned R = 0; R < OM.Map.numRuntimeVars(); ++R)
      Syms.push_back(
          runtimeOffset(OM.Bindings[R], OM.Map.runtimeVars()[R].Bound, Index));
    return emitIfElse(
        inDomain(OM.Map, Index, Syms, I.shape()),
        [&] { return valueAt(*I.operand(1), applyMap(OM.Map, Index, Syms)); },
        [&] { return Read(0); });
  }
  default:
    break;
  }
  assert(false && "op not supported by the fused element emitter");
  return llvm::UndefValue::get(valueType(LC, I.shape().Type));
}

bool FusedElementEmitter::callsFunction(const HloInstruction &I) {
  auto [It, New] = CallsFunction.try_emplace(&I, false);
  if (!New)
    return It->second;
  // Iteratively over what I is computed from (chains are long).
  std::vector<const HloInstruction *> Work = {&I};
  std::set<const HloInstruction *> Seen;
  while (!Work.empty() && !It->second) {
    const HloInstruction *X = Work.back();
    Work.pop_back();
    if (!Seen.insert(X).second)
      continue;
    It->second = outlined(*X, 0);
    for (const HloInstruction *O : X->operands())
      Work.push_back(O);
  }
  return It->second;
}

llvm::Value *
FusedElementEmitter::speculateConcat(const HloInstruction &I,
                                     llvm::ArrayRef<llvm::Value *> Index) {
  if (Building || !Guarded || !SpeculatedConcats.count(&I) || callsFunction(I))
    return nullptr;
  const InstructionIndexing &Idx = indexingOf(I, 0);
  const size_t D = size_t(I.dimensions().front());
  std::vector<llvm::Value *> Vals;
  std::vector<int64_t> Ends;
  int64_t Offset = 0;
  const bool Outer = SelfGuard;
  SelfGuard = true;
  for (int64_t K = 0; K < I.operandCount(); ++K) {
    const int64_t Size = I.operand(K)->shape().Dims[D];
    if (Size == 0)
      continue;
    Offset += Size;
    Ends.push_back(Offset);
    Vals.push_back(valueAt(*I.operand(K),
                           applyMap(Idx.Operands[K].front().Map, Index, {})));
  }
  SelfGuard = Outer;
  llvm::Value *V = Vals.back();
  for (size_t J = Vals.size() - 1; J-- > 0;)
    V = B.CreateSelect(
        B.CreateICmpSLT(Index[D], llvm::ConstantInt::get(IndexTy, Ends[J])),
        Vals[J], V);
  return V;
}

llvm::Value *
FusedElementEmitter::speculatePad(const HloInstruction &I,
                                  llvm::ArrayRef<llvm::Value *> Index) {
  if (Building || !Guarded || !SpeculatedPads.count(&I))
    return nullptr;
  // Subgraph functions below the pad read without the guard: decided once
  // per pad, not per lane.
  if (callsFunction(*I.operand(0)))
    return nullptr;
  const OperandMap &OM = indexingOf(I, 0).Operands[0].front();
  llvm::Value *In = inDomain(OM.Map, Index, {}, I.shape());
  llvm::Value *Pad = valueAt(*I.operand(1), {});
  const HloInstruction *OuterPad = GuardPad;
  llvm::Value *Outer = Guard;
  GuardPad = &I;
  Guard = Outer ? B.CreateAnd(Outer, In) : In;
  // Values under the guard are garbage where it fails: they stay out of
  // the cache once the pad has its value.
  std::vector<CacheKey> Speculated, *OuterAdded = Added;
  Added = &Speculated;
  llvm::Value *V = valueAt(*I.operand(0), applyMap(OM.Map, Index, {}));
  forget(Speculated);
  Added = OuterAdded;
  GuardPad = OuterPad;
  Guard = Outer;
  return B.CreateSelect(In, V, Pad);
}

llvm::Value *
FusedElementEmitter::emitReduce(const HloInstruction &I,
                                llvm::ArrayRef<llvm::Value *> Index,
                                int64_t OutputId) {
  // A reduce inside a loop body: a sequential loop over the reduced index
  // space, in row-major order like the interpreter. An f16/bf16 sum
  // accumulates in f32 and rounds once at the end, as the interpreter sums
  // in f64: rounded at every step, a long sequential sum stalls (bf16: at
  // 256 for terms below 1, 128 below 0.5), far outside toleranceFor()'s
  // tree-order bound (H200 random_reductions seeds 9249 and 4645).
  // A reduce-window is the same over its window, skipping the positions
  // outside its input (padding, dilation holes) and rounding every step as
  // the interpreter's reduce-window does.
  int64_t N = I.operandCount() / 2;
  const bool Window = I.opcode() == HloOpcode::ReduceWindow;
  const PrimitiveType RT = I.operand(0)->shape().Type;
  const bool WideSum = !Window && N == 1 && isScalarAdd(*I.toApply()) &&
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
  auto Step = [&](llvm::ArrayRef<llvm::Value *> Acc,
                  llvm::ArrayRef<llvm::Value *> Syms) {
    std::vector<llvm::Value *> InIdx = applyMap(Map, Index, Syms);
    std::vector<llvm::Value *> Vals;
    for (int64_t K = 0; K < N; ++K)
      Vals.push_back(valueAt(*I.operand(K), InIdx));
    return WideSum ? llvm::SmallVector<llvm::Value *, 2>{B.CreateFAdd(
                         Acc[0], toCompute(B, Vals[0], RT))}
                   : emitReduction(B, *I.toApply(), Acc, Vals, Math);
  };
  auto Combine = [&](llvm::ArrayRef<llvm::Value *> Acc,
                     llvm::ArrayRef<llvm::Value *> Syms) {
    if (!Window)
      return Step(Acc, Syms);
    const Shape &Out =
        I.shape().isTuple() ? I.shape().TupleShapes[0] : I.shape();
    std::vector<llvm::Value *> Next = emitIfElseValues(
        inDomain(Map, Index, Syms, Out),
        [&] {
          llvm::SmallVector<llvm::Value *, 2> V = Step(Acc, Syms);
          return std::vector<llvm::Value *>(V.begin(), V.end());
        },
        [&] { return std::vector<llvm::Value *>(Acc.begin(), Acc.end()); });
    return llvm::SmallVector<llvm::Value *, 2>(Next.begin(), Next.end());
  };
  auto Finish = [&](llvm::SmallVector<llvm::Value *, 2> Results) {
    if (WideSum)
      Results[0] = fromCompute(B, Results[0], RT);
    return Results[size_t(OutputId)];
  };
  // A reduced space of one element (a reduce over size-1 dims) is no
  // loop: its load shares the block with the rest of the thread's, so a
  // loop emitter's lanes share one vector load (a loop's body is a block
  // of its own per lane). Longer spaces keep the loop: the emitters' vector
  // caches know a parameter's group by lane, not by reduced position, and
  // a body per lane keeps positions apart.
  if (Total == 1)
    return Finish(Combine(
        llvm::SmallVector<llvm::Value *, 2>(Inits.begin(), Inits.end()),
        std::vector<llvm::Value *>(NR, llvm::ConstantInt::get(IndexTy, 0))));
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
  std::vector<llvm::Value *> AccVals(Accs.begin(), Accs.end());
  llvm::SmallVector<llvm::Value *, 2> Next = Combine(AccVals, Syms);
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
  return Finish(Next);
}

} // namespace codegen
} // namespace idxmap
