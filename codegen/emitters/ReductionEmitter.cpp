//===- ReductionEmitter.cpp - Row, multi-row, full and column reductions --===//
//
// Part of idxmap. Every reduction is read in its canonical physical form
// (ReductionInfo): the input's linear physical offset is
// `(a * Dmid + m) * Dminor + c`, delinearized into the input's logical index,
// and the prologue (everything between the parameters and the reduce input)
// is computed at that index with FusedElementEmitter. Parameters whose
// contiguity and alignment the maps prove (analyzeAccess of the kernel's
// thread map composed with the fusion's grouped indexing) are read with
// vector loads of the proven width.
//
//   - Row / multi-row / full: each thread accumulates in registers over its
//     share of a row (U independent vector loads per step), then a
//     `shfl.sync.bfly` butterfly within groups of G lanes; with a block per
//     row, warps combine through shared memory after one barrier. A full
//     reduction is one kernel: each block writes its partial to a module
//     scratch array, and the last block to finish (a device-scope counter,
//     reset by that block) reduces the partials in block order: deterministic.
//   - Column: 32 lanes along the kept minor dim (V elements each) by W warps
//     along the reduced dim; partials go through padded shared memory
//     [W][32 V + 1] and one thread per column combines them in warp order.
//
// Epilogues (elementwise ops on the reduced values, other operands indexed
// by the output index) are computed with FusedElementEmitter at the output
// index, the hero's value injected with setOverride.
//
//===----------------------------------------------------------------------===//
#include "Emitters.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "KernelBuilder.h"

#include "idxmap/Coalescing.h"
#include "idxmap/Compose.h"
#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/InlineAsm.h"

#include <algorithm>
#include <map>
#include <set>

namespace idxmap {
namespace codegen {

namespace {

int64_t ceilDivI(int64_t A, int64_t B) { return (A + B - 1) / B; }
int64_t nextPow2(int64_t V) {
  int64_t P = 1;
  while (P < V)
    P *= 2;
  return P;
}

Diagnostic unsupported(const HloInstruction &F, const std::string &Why) {
  return Diagnostic{{"<emit>", 1, 1},
                    "fusion '" + F.name() + "': reduction emitter: " + Why,
                    ""};
}

/// Logical index of \p S for a row-major physical linear offset \p Lin.
std::vector<Expr> delinearize(Context &Ctx, Expr Lin, const Shape &S) {
  std::vector<int64_t> M2m = S.layoutOrDefault();
  std::vector<Expr> Res(S.rank(), Ctx.constant(0));
  int64_t Stride = 1;
  for (size_t K = 0; K < M2m.size(); ++K) {
    int64_t D = M2m[K];
    Expr E = Stride == 1 ? Lin : Lin.floorDiv(Stride);
    Res[D] = K + 1 == M2m.size() ? E : E % std::max<int64_t>(S.Dims[D], 1);
    Stride *= std::max<int64_t>(S.Dims[D], 1);
  }
  return Res;
}

llvm::Value *physicalOffset(llvm::IRBuilder<> &B, const Shape &S,
                            llvm::ArrayRef<llvm::Value *> Index,
                            llvm::Type *IndexTy) {
  llvm::Value *Off = llvm::ConstantInt::get(IndexTy, 0);
  int64_t Stride = 1;
  for (int64_t D : S.layoutOrDefault()) {
    if (S.Dims[D] != 1) {
      llvm::Value *T = Stride == 1
                           ? Index[D]
                           : B.CreateMul(Index[D],
                                         llvm::ConstantInt::get(IndexTy, Stride),
                                         "", true, true);
      Off = B.CreateAdd(Off, T, "", true, true);
    }
    Stride *= S.Dims[D];
  }
  return Off;
}

/// One accumulator slot: reduce hero \p Hero, output \p Out.
struct Slot {
  const HloInstruction *Hero;
  int64_t Out;
};

/// Shared state of one reduction kernel.
class ReductionKernel {
public:
  ReductionKernel(llvm::Module &M, const HloInstruction &F,
                  const FusionAnalysis &A, const MathOptions &Math)
      : M(M), LC(M.getContext()), F(F), A(A), C(*A.Computation), Math(Math),
        B(LC) {}

  Expected<KernelInfo> run();

private:
  std::optional<Diagnostic> collect();
  /// Element by element loads (epilogues, init values).
  ParameterLoader scalarLoader() {
    return [this](const HloInstruction &P,
                  llvm::ArrayRef<llvm::Value *> Index) {
      PrimitiveType PT = P.shape().Type;
      llvm::Type *ST = storageType(LC, PT);
      llvm::Value *Off = physicalOffset(B, P.shape(), Index, IndexTy);
      llvm::Value *Ptr =
          B.CreateInBoundsGEP(ST, K->getArg(P.parameterNumber()), Off);
      return loadConvert(
          B, B.CreateAlignedLoad(ST, Ptr, llvm::Align(byteWidth(PT))), PT);
    };
  }
  void createFunction(unsigned Threads, unsigned Blocks, unsigned Shared);
  /// Builds `(th_x, bl_x)[syms...] -> input index` from the linear offset
  /// and proves each parameter's vector width under it.
  void setInputMap(std::vector<Variable> Syms, Expr Lin,
                   std::vector<Constraint> Cs);
  /// Values of every hero operand (all slots) at the input point given by
  /// symbol values \p SymVals (the last symbol is the vector lane, taken
  /// 0..V-1 here); \p Slot distinguishes unrolled copies for vector reuse.
  std::vector<std::vector<llvm::Value *>>
  valuesAt(FusedElementEmitter &FE, llvm::ArrayRef<llvm::Value *> SymVals,
           int64_t UnrollSlot);
  /// Folds \p Vals (per lane, per slot) into the accumulator allocas.
  void accumulate(const std::vector<std::vector<llvm::Value *>> &Vals);
  std::vector<llvm::Value *> combine(llvm::ArrayRef<llvm::Value *> Acc,
                                     llvm::ArrayRef<llvm::Value *> Val);
  std::vector<llvm::Value *> loadAccs();
  void storeAccs(llvm::ArrayRef<llvm::Value *> V);
  llvm::Value *shuffle(llvm::Value *V, unsigned Mask, unsigned Width);
  std::vector<llvm::Value *> warpReduce(std::vector<llvm::Value *> V,
                                        unsigned Width);
  /// Reduces across the block's warps (after warpReduce(32)): every thread
  /// gets the block's value.
  std::vector<llvm::Value *> blockReduce(std::vector<llvm::Value *> V,
                                         unsigned Threads);
  /// if (Cond) Body(); (no values flow out: use allocas).
  void emitIf(llvm::Value *Cond, const std::function<void()> &Body);
  /// for (iv = 0; iv < N; ++iv) Body(iv).
  void emitFor(llvm::Value *N, const std::function<void(llvm::Value *)> &Body);
  /// Computes and stores every root at output index \p OutExprs (exprs in
  /// th_x, bl_x) from the reduced values \p Red.
  void emitEpilogue(llvm::ArrayRef<llvm::Value *> Red,
                    llvm::ArrayRef<llvm::Value *> OutIdx);
  /// `membar.gl` (CUDA's __threadfence): orders this thread's global
  /// writes before its later ones for every thread of the device.
  void threadFence() {
    auto *FT = llvm::FunctionType::get(B.getVoidTy(), false);
    B.CreateCall(llvm::InlineAsm::get(FT, "membar.gl;", "~{memory}", true));
  }
  llvm::Value *cst(int64_t V) { return llvm::ConstantInt::get(IndexTy, V); }
  std::vector<llvm::Value *> emitExprs(const IndexingMap &Map,
                                       llvm::ArrayRef<llvm::Value *> Syms);
  /// Output logical index of the reduce for input linear offset \p Lin.
  std::vector<Expr> outputExprs(Expr Lin);

  Expected<KernelInfo> emitRows();
  Expected<KernelInfo> emitColumns();

  llvm::Module &M;
  llvm::LLVMContext &LC;
  const HloInstruction &F;
  const FusionAnalysis &A;
  const HloComputation &C;
  MathOptions Math;
  llvm::IRBuilder<> B;
  Context Ctx;
  KernelInfo Info;
  llvm::Function *K = nullptr;
  llvm::Type *IndexTy = nullptr;
  llvm::Value *Th = nullptr, *Bl = nullptr;

  std::vector<const HloInstruction *> Heroes;
  std::vector<Slot> Slots;
  std::vector<llvm::Value *> Inits;
  std::vector<llvm::AllocaInst *> Accs;
  const Shape *In = nullptr;
  int64_t V = 1;
  IndexingMap InMap;
  std::map<const HloInstruction *, int64_t> Width;
  std::map<std::tuple<const HloInstruction *, int64_t, int64_t>,
           llvm::Value *>
      Vectors;
  int64_t CurSlot = 0, CurLane = 0;
};

std::optional<Diagnostic> ReductionKernel::collect() {
  for (const HloInstruction *H : A.Heroes) {
    if (H->opcode() != HloOpcode::Reduce)
      return unsupported(F, "side output '" + H->name() +
                                "' (not a reduce epilogue) is not supported");
    if (std::find(Heroes.begin(), Heroes.end(), H) == Heroes.end())
      Heroes.push_back(H);
  }
  for (const HloInstruction *H : Heroes) {
    if (auto Why = checkReducer(*H->toApply()))
      return unsupported(F, "reducer of '" + H->name() + "': " + *Why);
    int64_t N = H->operandCount() / 2;
    for (int64_t K2 = 0; K2 < N; ++K2)
      Slots.push_back({H, K2});
  }
  In = &Heroes.front()->operand(0)->shape();
  // Epilogues: every instruction on a path from a root to a hero must be
  // elementwise on the reduce's output shape (or a get-tuple-element of a
  // variadic hero): then it is read at the thread's own output index.
  std::set<const HloInstruction *> HeroSet(Heroes.begin(), Heroes.end());
  std::map<const HloInstruction *, bool> Dep;
  std::function<bool(const HloInstruction *)> DependsOnHero =
      [&](const HloInstruction *I) -> bool {
    if (HeroSet.count(I))
      return true;
    auto It = Dep.find(I);
    if (It != Dep.end())
      return It->second;
    bool D = false;
    for (const HloInstruction *O : I->operands())
      D |= DependsOnHero(O);
    Dep[I] = D;
    return D;
  };
  std::set<const HloInstruction *> Seen;
  std::vector<const HloInstruction *> Work(A.Roots.begin(), A.Roots.end());
  const Shape &OutS = Heroes.front()->shape().isArray()
                          ? Heroes.front()->shape()
                          : Heroes.front()->shape().TupleShapes.front();
  while (!Work.empty()) {
    const HloInstruction *I = Work.back();
    Work.pop_back();
    if (!Seen.insert(I).second || HeroSet.count(I) || !DependsOnHero(I))
      continue;
    bool Ok = (I->opcode() == HloOpcode::GetTupleElement &&
               HeroSet.count(I->operand(0))) ||
              (isElementwise(I->opcode()) && I->shape().isArray() &&
               I->shape().sameDims(OutS));
    if (!Ok)
      return unsupported(F, "epilogue op '" + I->name() +
                                "' is not elementwise on the reduced values");
    for (const HloInstruction *O : I->operands())
      Work.push_back(O);
  }
  for (const HloInstruction *R : A.Roots)
    if (!R->shape().isArray())
      return unsupported(F, "tuple-shaped output '" + R->name() + "'");
  return std::nullopt;
}

void ReductionKernel::createFunction(unsigned Threads, unsigned Blocks,
                                     unsigned Shared) {
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = std::string(emitterKindName(A.Kind));
  Info.Grid[0] = Blocks;
  Info.Block[0] = Threads;
  Info.SharedBytes = Shared;
  std::vector<KernelParamSpec> Specs;
  for (const HloInstruction *P : C.parameters()) {
    Specs.push_back({P->name(), KernelParamRole::Input, 16, nullptr});
    Info.Params.push_back({P->name(), false, P->shape(), 16});
  }
  for (const HloInstruction *R : A.Roots) {
    Specs.push_back({R->name(), KernelParamRole::Output, 16, nullptr});
    Info.Params.push_back({R->name(), true, R->shape(), 16});
  }
  K = createKernel(M, Info.Name, Specs);
  setLaunchBounds(*K, {Threads, /*Exact=*/true, 0});
  B.SetInsertPoint(&K->getEntryBlock());
  int64_t Largest = In->numElements();
  for (const HloInstruction *P : C.parameters())
    Largest = std::max(Largest, P->shape().numElements());
  for (const HloInstruction *R : A.Roots)
    Largest = std::max(Largest, R->shape().numElements());
  IndexTy = Largest * 16 < (int64_t(1) << 31) ? B.getInt32Ty()
                                                : B.getInt64Ty();
  Th = B.CreateZExtOrTrunc(emitThreadId(B, GpuDim::X, Threads), IndexTy);
  Bl = B.CreateZExtOrTrunc(emitBlockId(B, GpuDim::X, Blocks), IndexTy);
  // Init values (computed once, in the entry block) and accumulators.
  FusedElementEmitter FE(B, Ctx, C, scalarLoader(), Math, IndexTy);
  for (const Slot &S : Slots) {
    int64_t N = S.Hero->operandCount() / 2;
    const HloInstruction &Init = *S.Hero->operand(N + S.Out);
    llvm::Value *IV;
    if (Init.opcode() == HloOpcode::Parameter) {
      // A scalar parameter: read element 0.
      PrimitiveType PT = Init.shape().Type;
      llvm::Type *ST = storageType(LC, PT);
      IV = loadConvert(B, B.CreateAlignedLoad(ST, K->getArg(Init.parameterNumber()),
                                              llvm::Align(byteWidth(PT))),
                       PT);
    } else {
      IV = FE.valueAt(Init, {});
    }
    Inits.push_back(IV);
  }
  llvm::IRBuilder<> EB(&K->getEntryBlock(), K->getEntryBlock().begin());
  for (llvm::Value *IV : Inits) {
    llvm::AllocaInst *Al = EB.CreateAlloca(IV->getType());
    Accs.push_back(Al);
    B.CreateStore(IV, Al);
  }
}

void ReductionKernel::setInputMap(std::vector<Variable> Syms, Expr Lin,
                                  std::vector<Constraint> Cs) {
  V = Syms.back().Bound.Hi + 1;
  InMap = IndexingMap(Ctx,
                      {{"th_x", {0, Info.Block[0] - 1}},
                       {"bl_x", {0, Info.Grid[0] - 1}}},
                      std::move(Syms), {}, delinearize(Ctx, Lin, *In), Cs);
  simplify(InMap);
  // Maps from every hero input to every parameter; a parameter reached by
  // exactly one map gets the width proven for it.
  std::map<const HloInstruction *, std::vector<IndexingMap>> Maps;
  for (const HloInstruction *H : Heroes)
    for (int64_t K2 = 0; K2 < H->operandCount() / 2; ++K2)
      for (auto &[I, OMs] : computeGroupedIndexing(Ctx, C, H->operand(K2)))
        if (I->opcode() == HloOpcode::Parameter)
          for (const OperandMap &OM : OMs)
            if (std::find(Maps[I].begin(), Maps[I].end(), OM.Map) ==
                Maps[I].end())
              Maps[I].push_back(OM.Map);
  for (const HloInstruction *P : C.parameters()) {
    Width[P] = 1;
    auto It = Maps.find(P);
    if (V == 1 || It == Maps.end() || It->second.size() != 1)
      continue;
    IndexingMap Comp = compose(InMap, It->second.front());
    simplify(Comp);
    AccessReport R = analyzeAccess(Comp, P->shape(), /*CountWarps=*/false);
    Width[P] = std::max<int64_t>(1, R.VectorWidth);
  }
}

std::vector<llvm::Value *>
ReductionKernel::emitExprs(const IndexingMap &Map,
                           llvm::ArrayRef<llvm::Value *> Syms) {
  RangeEvaluator RE(Map);
  std::vector<llvm::Value *> Out;
  for (Expr E : Map.results())
    Out.push_back(emitIndexExpr(B, E, {Th, Bl}, Syms, RE, IndexTy));
  return Out;
}

std::vector<Expr> ReductionKernel::outputExprs(Expr Lin) {
  std::vector<Expr> Full = delinearize(Ctx, Lin, *In);
  const std::vector<int64_t> &Red = Heroes.front()->dimensions();
  std::vector<Expr> Out;
  for (int64_t D = 0; D < In->rank(); ++D)
    if (std::find(Red.begin(), Red.end(), D) == Red.end())
      Out.push_back(Full[D]);
  return Out;
}

std::vector<std::vector<llvm::Value *>>
ReductionKernel::valuesAt(FusedElementEmitter &FE,
                          llvm::ArrayRef<llvm::Value *> SymVals,
                          int64_t UnrollSlot) {
  std::vector<std::vector<llvm::Value *>> Out;
  CurSlot = UnrollSlot;
  for (int64_t L = 0; L < V; ++L) {
    CurLane = L;
    std::vector<llvm::Value *> Syms(SymVals.begin(), SymVals.end());
    Syms.push_back(cst(L));
    std::vector<llvm::Value *> Idx = emitExprs(InMap, Syms);
    std::vector<llvm::Value *> Vals;
    for (const Slot &S : Slots)
      Vals.push_back(FE.valueAt(*S.Hero->operand(S.Out), Idx));
    Out.push_back(std::move(Vals));
  }
  return Out;
}

std::vector<llvm::Value *>
ReductionKernel::combine(llvm::ArrayRef<llvm::Value *> Acc,
                         llvm::ArrayRef<llvm::Value *> Val) {
  std::vector<llvm::Value *> Res;
  size_t Pos = 0;
  for (const HloInstruction *H : Heroes) {
    size_t N = H->operandCount() / 2;
    auto R = emitReduction(B, *H->toApply(), Acc.slice(Pos, N),
                           Val.slice(Pos, N), Math);
    Res.insert(Res.end(), R.begin(), R.end());
    Pos += N;
  }
  return Res;
}

std::vector<llvm::Value *> ReductionKernel::loadAccs() {
  std::vector<llvm::Value *> R;
  for (llvm::AllocaInst *Al : Accs)
    R.push_back(B.CreateLoad(Al->getAllocatedType(), Al));
  return R;
}

void ReductionKernel::storeAccs(llvm::ArrayRef<llvm::Value *> Vs) {
  for (size_t I = 0; I < Vs.size(); ++I)
    B.CreateStore(Vs[I], Accs[I]);
}

void ReductionKernel::accumulate(
    const std::vector<std::vector<llvm::Value *>> &Vals) {
  std::vector<llvm::Value *> Acc = loadAccs();
  for (const auto &Lane : Vals)
    Acc = combine(Acc, Lane);
  storeAccs(Acc);
}

llvm::Value *ReductionKernel::shuffle(llvm::Value *X, unsigned Mask,
                                      unsigned W) {
  if (X->getType()->isIntegerTy(1))
    return B.CreateTrunc(
        emitShuffleXor(B, B.CreateZExt(X, B.getInt32Ty()), Mask, W),
        B.getInt1Ty());
  return emitShuffleXor(B, X, Mask, W);
}

std::vector<llvm::Value *>
ReductionKernel::warpReduce(std::vector<llvm::Value *> Vs, unsigned W) {
  for (unsigned Mask = W / 2; Mask >= 1; Mask /= 2) {
    std::vector<llvm::Value *> Other;
    for (llvm::Value *X : Vs)
      Other.push_back(shuffle(X, Mask, W));
    Vs = combine(Vs, Other);
  }
  return Vs;
}

std::vector<llvm::Value *>
ReductionKernel::blockReduce(std::vector<llvm::Value *> Vs, unsigned Threads) {
  Vs = warpReduce(std::move(Vs), WarpSize);
  unsigned Warps = Threads / WarpSize;
  if (Warps <= 1)
    return Vs;
  llvm::Value *Lane = B.CreateURem(Th, cst(WarpSize));
  llvm::Value *Warp = B.CreateUDiv(Th, cst(WarpSize));
  std::vector<llvm::GlobalVariable *> Sh;
  for (size_t I = 0; I < Vs.size(); ++I) {
    llvm::Type *T = Vs[I]->getType()->isIntegerTy(1) ? B.getInt8Ty()
                                                     : Vs[I]->getType();
    Sh.push_back(createSharedArray(M, T, Warps, Info.Name + ".red", 16));
    Info.SharedBytes += Warps * 8;
  }
  emitIf(B.CreateICmpEQ(Lane, cst(0)), [&] {
    for (size_t I = 0; I < Vs.size(); ++I) {
      llvm::Value *X = Vs[I];
      if (X->getType()->isIntegerTy(1))
        X = B.CreateZExt(X, B.getInt8Ty());
      llvm::Value *P = B.CreateInBoundsGEP(Sh[I]->getValueType(), Sh[I],
                                           {cst(0), Warp});
      B.CreateStore(X, P);
    }
  });
  emitBarrier(B);
  // Every warp reads the W partials (lanes >= W take the init value).
  llvm::Value *InRange = B.CreateICmpULT(Lane, cst(Warps));
  llvm::Value *Idx = B.CreateSelect(InRange, Lane, cst(0));
  std::vector<llvm::Value *> Part;
  for (size_t I = 0; I < Vs.size(); ++I) {
    llvm::Type *T = Sh[I]->getValueType()->getArrayElementType();
    llvm::Value *P =
        B.CreateInBoundsGEP(Sh[I]->getValueType(), Sh[I], {cst(0), Idx});
    llvm::Value *X = B.CreateLoad(T, P);
    if (Vs[I]->getType()->isIntegerTy(1))
      X = B.CreateTrunc(X, B.getInt1Ty());
    Part.push_back(B.CreateSelect(InRange, X, Inits[I]));
  }
  Part = warpReduce(std::move(Part), unsigned(nextPow2(Warps)));
  // Partial reads must finish before the shared arrays are reused.
  emitBarrier(B);
  return Part;
}

void ReductionKernel::emitIf(llvm::Value *Cond,
                             const std::function<void()> &Body) {
  if (auto *CI = llvm::dyn_cast<llvm::ConstantInt>(Cond)) {
    if (CI->isOne())
      Body();
    return;
  }
  auto *Then = llvm::BasicBlock::Create(LC, "if.then", K);
  auto *Done = llvm::BasicBlock::Create(LC, "if.done", K);
  B.CreateCondBr(Cond, Then, Done);
  B.SetInsertPoint(Then);
  Body();
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
}

void ReductionKernel::emitFor(
    llvm::Value *N, const std::function<void(llvm::Value *)> &Body) {
  if (auto *CI = llvm::dyn_cast<llvm::ConstantInt>(N)) {
    if (CI->isZero())
      return;
    if (CI->isOne()) {
      Body(cst(0));
      return;
    }
  }
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  auto *Header = llvm::BasicBlock::Create(LC, "loop", K);
  auto *Exit = llvm::BasicBlock::Create(LC, "loop.exit", K);
  B.CreateCondBr(B.CreateICmpSGT(N, cst(0)), Header, Exit);
  B.SetInsertPoint(Header);
  llvm::PHINode *Iv = B.CreatePHI(IndexTy, 2);
  Iv->addIncoming(cst(0), Pre);
  Body(Iv);
  llvm::Value *Next = B.CreateAdd(Iv, cst(1), "", true, true);
  Iv->addIncoming(Next, B.GetInsertBlock());
  B.CreateCondBr(B.CreateICmpSLT(Next, N), Header, Exit);
  B.SetInsertPoint(Exit);
}

void ReductionKernel::emitEpilogue(llvm::ArrayRef<llvm::Value *> Red,
                                   llvm::ArrayRef<llvm::Value *> OutIdx) {
  FusedElementEmitter FE(B, Ctx, C, scalarLoader(), Math, IndexTy);
  size_t Pos = 0;
  for (const HloInstruction *H : Heroes) {
    int64_t N = H->operandCount() / 2;
    if (N == 1) {
      llvm::Value *X = Red[Pos];
      FE.setOverride(*H, [X](llvm::ArrayRef<llvm::Value *>) { return X; });
    } else {
      for (const HloInstruction *U : C.instructions())
        if (U->opcode() == HloOpcode::GetTupleElement && U->operand(0) == H) {
          llvm::Value *X = Red[Pos + U->tupleIndex()];
          FE.setOverride(*U,
                         [X](llvm::ArrayRef<llvm::Value *>) { return X; });
        }
    }
    Pos += N;
  }
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    const HloInstruction *Root = A.Roots[R];
    llvm::Value *X = FE.valueAt(*Root, OutIdx);
    PrimitiveType PT = Root->shape().Type;
    llvm::Type *ST = storageType(LC, PT);
    llvm::Value *Off = physicalOffset(B, Root->shape(), OutIdx, IndexTy);
    llvm::Value *Ptr =
        B.CreateInBoundsGEP(ST, K->getArg(C.parameterCount() + R), Off);
    B.CreateAlignedStore(storeConvert(B, X, PT), Ptr,
                         llvm::Align(byteWidth(PT)));
  }
}

/// Row, multi-row and full reductions.
Expected<KernelInfo> ReductionKernel::emitRows() {
  const ReductionInfo &RI = *A.Reduction;
  int64_t D0 = RI.Dims[0], D1 = RI.Dims[1], D2 = RI.Dims[2];
  bool Full = A.Kind == EmitterKind::FullReduction;
  if (Full) {
    D2 = D0 * D1 * D2;
    D0 = D1 = 1;
  }
  int64_t MaxBytes = 1;
  for (const HloInstruction *P : C.parameters())
    if (P->shape().isArray() && P->shape().numElements() > 1)
      MaxBytes = std::max<int64_t>(MaxBytes, byteWidth(P->shape().Type));
  int64_t Vec = std::max<int64_t>(1, 16 / MaxBytes);
  while (Vec > 1 && D2 % Vec != 0)
    Vec /= 2;
  int64_t NVec = ceilDivI(D2, Vec); // vectors per row
  // Lanes per row (G), threads per block (T), rows per block (RPB).
  enum { Multi, WarpRow, BlockRow, Whole } Mode;
  int64_t G, T, RPB = 1, Blocks;
  if (Full) {
    Mode = Whole;
    T = 512;
    Blocks = std::max<int64_t>(
        1, std::min<int64_t>(132 * 4, ceilDivI(NVec, T * 4)));
    G = T * Blocks;
  } else if (NVec <= 16) {
    Mode = Multi;
    G = nextPow2(NVec);
    T = 128;
    RPB = T / G;
  } else if (NVec <= 1024) {
    Mode = WarpRow;
    G = 32;
    T = 128;
    RPB = 4;
  } else {
    Mode = BlockRow;
    T = NVec >= 4096 ? 512 : 256;
    G = T;
  }
  int64_t Rows = D1;
  if (!Full)
    Blocks = ceilDivI(Rows, RPB);
  if (Mode == Multi || Mode == WarpRow) {
    // Few rows: fewer threads per block.
    while (T > 32 && Blocks * RPB / 2 >= Rows && RPB > 1) {
      T /= 2;
      RPB /= 2;
      Blocks = ceilDivI(Rows, RPB);
    }
  }
  int64_t Iters = ceilDivI(NVec, G);
  int64_t U = std::min<int64_t>(4, Iters);
  int64_t Main = D2 / (U * G * Vec);
  unsigned Shared = 0;
  createFunction(unsigned(T), unsigned(Blocks), Shared);

  // Input map: (th, bl)[b, it, vec].
  Expr ThE = Ctx.dim(0), BlE = Ctx.dim(1);
  Expr Row, Lane;
  switch (Mode) {
  case Multi:
  case WarpRow:
    Row = BlE * RPB + ThE.floorDiv(G);
    Lane = ThE % G;
    break;
  case BlockRow:
    Row = BlE;
    Lane = ThE;
    break;
  case Whole:
    Row = Ctx.constant(0);
    Lane = BlE * T + ThE;
    break;
  }
  Expr Col = (Ctx.symbol(1) * G + Lane) * Vec + Ctx.symbol(2);
  std::vector<Constraint> Cs;
  if (Iters * G * Vec != D2)
    Cs.push_back({Col, {0, D2 - 1}});
  if (!Full && Blocks * RPB != Rows)
    Cs.push_back({Row, {0, Rows - 1}});
  setInputMap({{"b", {0, D0 - 1}}, {"it", {0, Iters - 1}}, {"vec", {0, Vec - 1}}},
              (Ctx.symbol(0) * D1 + Row) * D2 + Col, Cs);

  // Expression values of lane and row.
  IndexingMap LR(Ctx, {{"th_x", {0, T - 1}}, {"bl_x", {0, Blocks - 1}}}, {},
                 {}, {Row, Lane}, {});
  std::vector<llvm::Value *> RowLane = emitExprs(LR, {});
  llvm::Value *RowV = RowLane[0], *LaneV = RowLane[1];

  llvm::Value *Valid = !Full && Blocks * RPB != Rows
                           ? B.CreateICmpULT(RowV, cst(Rows))
                           : B.getTrue();
  ParameterLoader Loader = [&](const HloInstruction &P,
                               llvm::ArrayRef<llvm::Value *> Index)
      -> llvm::Value * {
    const Shape &S = P.shape();
    PrimitiveType PT = S.Type;
    llvm::Type *ST = storageType(LC, PT);
    llvm::Value *Base = K->getArg(P.parameterNumber());
    int64_t W = Width[&P];
    int64_t Bytes = byteWidth(PT);
    if (W > 1) {
      auto Key = std::make_tuple(&P, CurSlot, CurLane / W);
      llvm::Value *VecV = Vectors[Key];
      if (!VecV) {
        llvm::Value *Off = physicalOffset(B, S, Index, IndexTy);
        auto *VT = llvm::FixedVectorType::get(ST, unsigned(W));
        VecV = B.CreateAlignedLoad(VT, B.CreateInBoundsGEP(ST, Base, Off),
                                   llvm::Align(W * Bytes));
        Vectors[Key] = VecV;
      }
      return loadConvert(B, B.CreateExtractElement(VecV, uint64_t(CurLane % W)),
                         PT);
    }
    llvm::Value *Off = physicalOffset(B, S, Index, IndexTy);
    return loadConvert(B, B.CreateAlignedLoad(ST, B.CreateInBoundsGEP(ST, Base, Off),
                                              llvm::Align(Bytes)),
                       PT);
  };
  FusedElementEmitter FE(B, Ctx, C, Loader, Math, IndexTy);
  emitIf(Valid, [&] {
    emitFor(cst(D0), [&](llvm::Value *Bv) {
      // Main part: U whole steps, loads first.
      emitFor(cst(Main), [&](llvm::Value *Cv) {
        Vectors.clear();
        FE.clearCache();
        std::vector<std::vector<llvm::Value *>> All;
        for (int64_t Uu = 0; Uu < U; ++Uu) {
          llvm::Value *It = B.CreateAdd(B.CreateMul(Cv, cst(U), "", true, true),
                                        cst(Uu), "", true, true);
          auto Vals = valuesAt(FE, {Bv, It}, Uu);
          All.insert(All.end(), Vals.begin(), Vals.end());
        }
        accumulate(All);
        FE.clearCache();
        Vectors.clear();
      });
      // Tail: guarded steps.
      for (int64_t It = Main * U; It < Iters; ++It) {
        llvm::Value *Start = B.CreateMul(
            B.CreateAdd(cst(It * G), LaneV, "", true, true), cst(Vec), "",
            true, true);
        emitIf(B.CreateICmpULT(Start, cst(D2)), [&] {
          Vectors.clear();
          FE.clearCache();
          accumulate(valuesAt(FE, {Bv, cst(It)}, 0));
          FE.clearCache();
          Vectors.clear();
        });
      }
    });
  });
  std::vector<llvm::Value *> Red = loadAccs();
  llvm::Value *Store;
  if (Mode == Multi || Mode == WarpRow) {
    Red = warpReduce(std::move(Red), unsigned(G));
    Store = B.CreateAnd(Valid, B.CreateICmpEQ(LaneV, cst(0)));
  } else {
    Red = blockReduce(std::move(Red), unsigned(T));
    Store = B.CreateICmpEQ(Th, cst(0));
  }
  if (Mode == Whole && Blocks > 1) {
    // Partials to module scratch; the last block combines them in order.
    std::vector<llvm::GlobalVariable *> Scratch;
    for (size_t I = 0; I < Red.size(); ++I) {
      llvm::Type *Ty = Red[I]->getType()->isIntegerTy(1) ? B.getInt8Ty()
                                                         : Red[I]->getType();
      auto *AT = llvm::ArrayType::get(Ty, uint64_t(Blocks));
      Scratch.push_back(new llvm::GlobalVariable(
          M, AT, false, llvm::GlobalValue::InternalLinkage,
          llvm::ConstantAggregateZero::get(AT), Info.Name + ".partials",
          nullptr, llvm::GlobalValue::NotThreadLocal, GlobalAddrSpace));
    }
    auto *Counter = new llvm::GlobalVariable(
        M, B.getInt32Ty(), false, llvm::GlobalValue::InternalLinkage,
        B.getInt32(0), Info.Name + ".done", nullptr,
        llvm::GlobalValue::NotThreadLocal, GlobalAddrSpace);
    llvm::GlobalVariable *Flag =
        createSharedArray(M, B.getInt32Ty(), 1, Info.Name + ".last", 4);
    Info.SharedBytes += 4;
    auto ScratchPtr = [&](size_t I, llvm::Value *Idx) {
      return B.CreateInBoundsGEP(Scratch[I]->getValueType(), Scratch[I],
                                 {cst(0), Idx});
    };
    emitIf(Store, [&] {
      for (size_t I = 0; I < Red.size(); ++I) {
        llvm::Value *X = Red[I];
        if (X->getType()->isIntegerTy(1))
          X = B.CreateZExt(X, B.getInt8Ty());
        B.CreateStore(X, ScratchPtr(I, Bl), /*isVolatile=*/true);
      }
      threadFence();
      llvm::Value *Old = B.CreateAtomicRMW(
          llvm::AtomicRMWInst::Add, Counter, B.getInt32(1), llvm::MaybeAlign(4),
          llvm::AtomicOrdering::Monotonic);
      llvm::Value *Last = B.CreateICmpEQ(Old, B.getInt32(unsigned(Blocks - 1)));
      B.CreateStore(B.CreateZExt(Last, B.getInt32Ty()),
                    B.CreateInBoundsGEP(Flag->getValueType(), Flag,
                                        {cst(0), cst(0)}));
    });
    emitBarrier(B);
    llvm::Value *IsLast = B.CreateICmpNE(
        B.CreateLoad(B.getInt32Ty(),
                     B.CreateInBoundsGEP(Flag->getValueType(), Flag,
                                         {cst(0), cst(0)})),
        B.getInt32(0));
    emitIf(IsLast, [&] {
      threadFence();
      storeAccs(Inits);
      for (int64_t J = 0; J < ceilDivI(Blocks, T); ++J) {
        llvm::Value *Idx = B.CreateAdd(Th, cst(J * T));
        emitIf(B.CreateICmpULT(Idx, cst(Blocks)), [&] {
          std::vector<llvm::Value *> Part;
          for (size_t I = 0; I < Red.size(); ++I) {
            llvm::Type *Ty = Scratch[I]->getValueType()->getArrayElementType();
            llvm::Value *X =
                B.CreateLoad(Ty, ScratchPtr(I, Idx), /*isVolatile=*/true);
            if (Red[I]->getType()->isIntegerTy(1))
              X = B.CreateTrunc(X, B.getInt1Ty());
            Part.push_back(X);
          }
          storeAccs(combine(loadAccs(), Part));
        });
      }
      std::vector<llvm::Value *> Tot = blockReduce(loadAccs(), unsigned(T));
      emitIf(B.CreateICmpEQ(Th, cst(0)), [&] {
        B.CreateStore(B.getInt32(0), Counter, /*isVolatile=*/true);
        IndexingMap OM(Ctx, {{"th_x", {0, T - 1}}, {"bl_x", {0, Blocks - 1}}},
                       {}, {}, outputExprs(Ctx.constant(0)), {});
        emitEpilogue(Tot, emitExprs(OM, {}));
      });
    });
  } else {
    emitIf(Store, [&] {
      IndexingMap OM(Ctx, {{"th_x", {0, T - 1}}, {"bl_x", {0, Blocks - 1}}},
                     {}, {}, outputExprs(Row * D2), {});
      emitEpilogue(Red, emitExprs(OM, {}));
    });
  }
  B.CreateRetVoid();
  return Info;
}

/// Column reductions [K1, R, K2].
Expected<KernelInfo> ReductionKernel::emitColumns() {
  const ReductionInfo &RI = *A.Reduction;
  int64_t K1 = RI.Dims[0], R = RI.Dims[1], K2 = RI.Dims[2];
  int64_t MaxBytes = 1;
  for (const HloInstruction *P : C.parameters())
    if (P->shape().isArray() && P->shape().numElements() > 1)
      MaxBytes = std::max<int64_t>(MaxBytes, byteWidth(P->shape().Type));
  int64_t Vec = std::max<int64_t>(1, 16 / MaxBytes);
  // Enough blocks for two waves where possible.
  while (Vec > 1 && (K2 % Vec != 0 || 32 * Vec > K2 ||
                     K1 * ceilDivI(K2, 32 * Vec) < 264))
    Vec /= 2;
  int64_t W = 8, T = 32 * W, Cols = 32 * Vec;
  int64_t Tiles = ceilDivI(K2, Cols), Blocks = K1 * Tiles;
  int64_t Iters = ceilDivI(R, W);
  int64_t U = std::min<int64_t>(4, Iters);
  int64_t Main = R / (U * W);
  createFunction(unsigned(T), unsigned(Blocks), 0);
  Expr ThE = Ctx.dim(0), BlE = Ctx.dim(1);
  Expr K1E = BlE.floorDiv(Tiles);
  Expr ColBase = (BlE % Tiles) * Cols;
  Expr K2E = ColBase + (ThE % 32) * Vec + Ctx.symbol(1);
  Expr RE = Ctx.symbol(0) * W + ThE.floorDiv(32);
  std::vector<Constraint> Cs;
  if (Tiles * Cols != K2)
    Cs.push_back({K2E, {0, K2 - 1}});
  if (Iters * W != R)
    Cs.push_back({RE, {0, R - 1}});
  setInputMap({{"it", {0, Iters - 1}}, {"vec", {0, Vec - 1}}},
              (K1E * R + RE) * K2 + K2E, Cs);
  // Per thread: Vec accumulators per slot (one per column it owns).
  std::vector<llvm::AllocaInst *> Slots1 = Accs;
  std::vector<std::vector<llvm::AllocaInst *>> ColAccs(Vec);
  {
    llvm::IRBuilder<> EB(&K->getEntryBlock(), K->getEntryBlock().begin());
    for (int64_t L = 0; L < Vec; ++L)
      for (size_t I = 0; I < Inits.size(); ++I) {
        llvm::AllocaInst *Al = EB.CreateAlloca(Inits[I]->getType());
        ColAccs[L].push_back(Al);
        B.CreateStore(Inits[I], Al);
      }
  }
  IndexingMap LM(Ctx, {{"th_x", {0, T - 1}}, {"bl_x", {0, Blocks - 1}}}, {},
                 {}, {ThE % 32, ThE.floorDiv(32), ColBase}, {});
  std::vector<llvm::Value *> LV = emitExprs(LM, {});
  llvm::Value *LaneV = LV[0], *WarpV = LV[1], *ColBaseV = LV[2];
  llvm::Value *ColValid =
      Tiles * Cols != K2
          ? B.CreateICmpULT(
                B.CreateAdd(ColBaseV, B.CreateMul(LaneV, cst(Vec))), cst(K2))
          : B.getTrue();
  ParameterLoader Loader = [&](const HloInstruction &P,
                               llvm::ArrayRef<llvm::Value *> Index)
      -> llvm::Value * {
    const Shape &S = P.shape();
    PrimitiveType PT = S.Type;
    llvm::Type *ST = storageType(LC, PT);
    llvm::Value *Base = K->getArg(P.parameterNumber());
    int64_t Wd = Width[&P];
    int64_t Bytes = byteWidth(PT);
    if (Wd > 1) {
      auto Key = std::make_tuple(&P, CurSlot, CurLane / Wd);
      llvm::Value *VecV = Vectors[Key];
      if (!VecV) {
        llvm::Value *Off = physicalOffset(B, S, Index, IndexTy);
        auto *VT = llvm::FixedVectorType::get(ST, unsigned(Wd));
        VecV = B.CreateAlignedLoad(VT, B.CreateInBoundsGEP(ST, Base, Off),
                                   llvm::Align(Wd * Bytes));
        Vectors[Key] = VecV;
      }
      return loadConvert(
          B, B.CreateExtractElement(VecV, uint64_t(CurLane % Wd)), PT);
    }
    llvm::Value *Off = physicalOffset(B, S, Index, IndexTy);
    return loadConvert(B, B.CreateAlignedLoad(ST, B.CreateInBoundsGEP(ST, Base, Off),
                                              llvm::Align(Bytes)),
                       PT);
  };
  FusedElementEmitter FE(B, Ctx, C, Loader, Math, IndexTy);
  auto AccumulateCols =
      [&](const std::vector<std::vector<std::vector<llvm::Value *>>> &Steps) {
        for (int64_t L = 0; L < Vec; ++L) {
          Accs = ColAccs[L];
          std::vector<llvm::Value *> Acc = loadAccs();
          for (const auto &S : Steps)
            Acc = combine(Acc, S[L]);
          storeAccs(Acc);
        }
      };
  emitIf(ColValid, [&] {
    emitFor(cst(Main), [&](llvm::Value *Cv) {
      Vectors.clear();
      FE.clearCache();
      std::vector<std::vector<std::vector<llvm::Value *>>> Steps;
      for (int64_t Uu = 0; Uu < U; ++Uu) {
        llvm::Value *It = B.CreateAdd(B.CreateMul(Cv, cst(U), "", true, true),
                                      cst(Uu), "", true, true);
        Steps.push_back(valuesAt(FE, {It}, Uu));
      }
      AccumulateCols(Steps);
      FE.clearCache();
      Vectors.clear();
    });
    for (int64_t It = Main * U; It < Iters; ++It) {
      llvm::Value *Rr = B.CreateAdd(cst(It * W), WarpV);
      emitIf(B.CreateICmpULT(Rr, cst(R)), [&] {
        Vectors.clear();
        FE.clearCache();
        AccumulateCols({valuesAt(FE, {cst(It)}, 0)});
        FE.clearCache();
        Vectors.clear();
      });
    }
  });
  // Partials through padded shared memory [W][Cols + 1]; thread c < Cols
  // combines column c over the W warps in order.
  int64_t Pitch = Cols + 1;
  std::vector<llvm::GlobalVariable *> Sh;
  for (size_t I = 0; I < Inits.size(); ++I) {
    llvm::Type *Ty = Inits[I]->getType()->isIntegerTy(1) ? B.getInt8Ty()
                                                         : Inits[I]->getType();
    Sh.push_back(createSharedArray(M, Ty, uint64_t(W * Pitch),
                                   Info.Name + ".cols", 16));
    Info.SharedBytes += unsigned(W * Pitch *
                                 std::max<uint64_t>(1, M.getDataLayout().getTypeAllocSize(Ty)));
  }
  for (int64_t L = 0; L < Vec; ++L) {
    Accs = ColAccs[L];
    std::vector<llvm::Value *> Acc = loadAccs();
    llvm::Value *Idx = B.CreateAdd(B.CreateMul(WarpV, cst(Pitch)),
                                   B.CreateAdd(B.CreateMul(LaneV, cst(Vec)),
                                               cst(L)));
    for (size_t I = 0; I < Acc.size(); ++I) {
      llvm::Value *X = Acc[I];
      if (X->getType()->isIntegerTy(1))
        X = B.CreateZExt(X, B.getInt8Ty());
      B.CreateStore(X, B.CreateInBoundsGEP(Sh[I]->getValueType(), Sh[I],
                                           {cst(0), Idx}));
    }
  }
  emitBarrier(B);
  for (int64_t J = 0; J < ceilDivI(Cols, T); ++J) {
    llvm::Value *Col = B.CreateAdd(Th, cst(J * T));
    llvm::Value *Ok = B.CreateAnd(
        B.CreateICmpULT(Col, cst(Cols)),
        B.CreateICmpULT(B.CreateAdd(ColBaseV, Col), cst(K2)));
    emitIf(Ok, [&] {
      Accs = Slots1;
      storeAccs(Inits);
      for (int64_t Wi = 0; Wi < W; ++Wi) {
        llvm::Value *Idx = B.CreateAdd(cst(Wi * Pitch), Col);
        std::vector<llvm::Value *> Part;
        for (size_t I = 0; I < Inits.size(); ++I) {
          llvm::Type *Ty = Sh[I]->getValueType()->getArrayElementType();
          llvm::Value *X = B.CreateLoad(
              Ty, B.CreateInBoundsGEP(Sh[I]->getValueType(), Sh[I],
                                      {cst(0), Idx}));
          if (Inits[I]->getType()->isIntegerTy(1))
            X = B.CreateTrunc(X, B.getInt1Ty());
          Part.push_back(X);
        }
        storeAccs(combine(loadAccs(), Part));
      }
      std::vector<llvm::Value *> Red = loadAccs();
      // Output index of (k1, column).
      IndexingMap OM(Ctx,
                     {{"th_x", {0, T - 1}}, {"bl_x", {0, Blocks - 1}},
                      {"c", {0, Cols - 1}}},
                     {}, {}, outputExprs(K1E * (R * K2) + ColBase + Ctx.dim(2)),
                     {});
      RangeEvaluator REv(OM);
      std::vector<llvm::Value *> OutIdx;
      for (Expr E : OM.results())
        OutIdx.push_back(emitIndexExpr(B, E, {Th, Bl, Col}, {}, REv, IndexTy));
      emitEpilogue(Red, OutIdx);
    });
  }
  B.CreateRetVoid();
  return Info;
}

Expected<KernelInfo> ReductionKernel::run() {
  if (!A.Reduction)
    return unsupported(F, "no canonical reduction");
  if (auto D = collect())
    return *D;
  if (A.Kind == EmitterKind::ColumnReduction)
    return emitColumns();
  return emitRows();
}

} // namespace

Expected<KernelInfo> emitReductionKernel(llvm::Module &M,
                                         const HloInstruction &F,
                                         const FusionAnalysis &A,
                                         const MathOptions &Math) {
  if (isRowNormalization(F, A))
    return emitRowNormalizationKernel(M, F, A, Math);
  ReductionKernel RK(M, F, A, Math);
  return RK.run();
}

} // namespace codegen
} // namespace idxmap
