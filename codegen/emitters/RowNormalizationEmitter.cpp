//===- RowNormalizationEmitter.cpp - Softmax-like fusions in one kernel ---===//
//
// Part of idxmap. A row normalization is a row reduction whose results are
// broadcast back along the row and combined with the row's elements, maybe
// feeding further reductions of the same rows: softmax
// (max -> exp(x - max) -> sum -> exp / sum), layer norm (sum -> x - mean ->
// sum of squares -> (x - mean) * rsqrt(var)), logsumexp. XLA hands these to
// Triton; here they are one kernel when a row fits in a block:
//
//   - Each row is owned by a group of G threads (G a power of two; several
//     rows per block when G is small). Thread t of the group holds J chunks
//     of Vec consecutive elements, chunk j at vector index `j * G + t`
//     (coalesced across the group), read once with vector loads of the width
//     the indexing maps prove (the plan's: analyzeAccess of the thread map
//     composed with each parameter's map) and kept in registers.
//   - Reductions run in dependency levels (a reduce whose operand reads
//     another reduce's broadcast comes after it; independent ones share a
//     level). For each level: every element's reduce operand is computed with
//     FusedElementEmitter (earlier reduce results injected with setOverride
//     as the row's scalar), folded in the thread as a tree, combined across
//     the group with `shfl.sync.bfly`, and, when the group spans several
//     warps, across warps through shared memory (one array per level, so
//     one barrier per level is enough: no array is written again). Threads
//     start from the reducer's identity (add, multiply, maximum, minimum,
//     and, or, xor) and the init value is combined once, at the end, so any
//     init value gives the interpreter's result (up to the order of the sum).
//   - Finally every root is computed per element (the cached values of the
//     last level are reused: `exp(x - max)` is not recomputed) and stored
//     with vector stores when proven; per-row roots (e.g. the row max as a
//     side output) are stored by the group's first thread. With fast math,
//     an f32 division by a row value becomes a multiplication by its
//     reciprocal (divideByReciprocals).
//
// Masked tails: chunk indices past the row and rows past the end are
// clamped to the last valid ones, so every load is in bounds and every value
// is computed from real data; clamped elements enter the reductions as the
// reducer's identity (or the init value for reducers without a known one,
// which the other reduction emitters assume to be an identity too) and are
// not stored. No thread leaves early: shuffles and barriers see them all.
//
// Sizes, the thread map and the vector widths are the plan's
// (analysis/fusion/plan/RowNormalizationPlan.cpp): G is the power of two
// that gives each thread about 8 elements, at most a block; rows needing
// more than 64 elements per thread are refused there. Blocks have
// max(G, 64) threads (fewer when there are few rows), so short rows share
// a block and a warp.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "Emitters.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "GpuBuilder.h"
#include "KernelBuilder.h"

#include "idxmap/Codegen.h"
#include "idxmap/Print.h"
#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

namespace idxmap {
namespace codegen {

namespace {

int64_t log2Exact(int64_t V) {
  int64_t L = 0;
  while ((int64_t(1) << L) < V)
    ++L;
  return L;
}

Diagnostic unsupported(const HloInstruction &F, const std::string &Why) {
  return emitterRefusal(F, "row normalization", Why);
}

/// One accumulator: reduce \p Hero, output \p Out.
struct Slot {
  const HloInstruction *Hero;
  int64_t Out;
};

class RowNormKernel {
public:
  RowNormKernel(llvm::Module &M, const HloInstruction &F,
                const FusionAnalysis &A, const KernelPlan &Plan, Context &Ctx,
                const MathOptions &Math)
      : M(M), LC(M.getContext()), F(F), A(A), C(*A.Computation), Math(Math),
        B(LC), Plan(Plan), P(*Plan.RowNormalization), Ctx(Ctx),
        Input(*P.Reduces.front()->operand(0)), In(Input.shape()), Rows(P.Rows),
        N(P.RowLength), Vec(P.Vector), NVec(N / Vec), G(P.LanesPerRow),
        J(P.ChunksPerThread), RPB(P.RowsPerBlock), T(Plan.Block[0]),
        Blocks(Plan.Grid[0]), W(G > 32 ? G / 32 : 1),
        RowTail(Blocks * RPB != Rows), ChunkTail(J * G != NVec) {
    // The plan's exact division holds for every f32 division of the
    // fusion, also in fast math.
    this->Math.ExactDivide = P.ExactDivide;
  }

  Expected<KernelInfo> run();

private:
  llvm::Value *cst(int64_t V) { return llvm::ConstantInt::get(IndexTy, V); }
  /// The plan's proven load width of parameter \p Pm (1: scalar loads).
  /// Every parameter load's cache hint.
  CacheHint hint() const {
    return Plan.EvictLast ? CacheHint::EvictLast : CacheHint::Normal;
  }
  int64_t width(const HloInstruction &Pm) const {
    return P.LoadWidth[size_t(Pm.parameterNumber())];
  }
  std::vector<llvm::Value *> combine(llvm::ArrayRef<const HloInstruction *> Rs,
                                     llvm::ArrayRef<llvm::Value *> Acc,
                                     llvm::ArrayRef<llvm::Value *> Val) {
    return combineReduces(B, Rs, Acc, Val, Math);
  }
  /// The kernel, its launch and the thread and block ids.
  std::optional<Diagnostic> createFunction();
  /// The thread's row and lane, the clamped chunk indices and the logical
  /// index of every element it holds (Idx) and of its row value (RowIdx).
  void emitIndices();
  /// Every vector of every parameter with a proven width, up front.
  void preloadVectors();
  /// The reduces of level \p Lv: each element's operands, the in-thread
  /// tree, the group's lanes, the row's warps, the init value; the results
  /// become the reduces' values in \p FE and \p FR.
  void reduceLevel(
      int Lv, FusedElementEmitter &FE, FusedElementEmitter &FR,
      std::map<const HloInstruction *, std::vector<llvm::Value *>> &Inits);
  /// Fast math: divisions by a row value become multiplications.
  void divideByReciprocals(FusedElementEmitter &FE, FusedElementEmitter &FR);
  /// Every root's values, then their stores.
  void storeRoots(FusedElementEmitter &FE, FusedElementEmitter &FR);
  void setOverrides(FusedElementEmitter &FE, const HloInstruction *R,
                    llvm::ArrayRef<llvm::Value *> Vals);

  llvm::Module &M;
  llvm::LLVMContext &LC;
  const HloInstruction &F;
  const FusionAnalysis &A;
  const HloComputation &C;
  MathOptions Math;
  llvm::IRBuilder<> B;
  const KernelPlan &Plan;
  const RowNormalizationPlan &P;
  /// The plan's maps live here.
  Context &Ctx;
  /// The rows: the first reduce's operand.
  const HloInstruction &Input;
  const Shape &In;
  /// The plan's sizes; W: warps per row.
  const int64_t Rows, N, Vec, NVec, G, J, RPB, T, Blocks, W;
  /// Rows past the end in the last block; chunks past the row's end.
  const bool RowTail, ChunkTail;
  KernelInfo Info;
  llvm::Function *K = nullptr;
  llvm::Type *IndexTy = nullptr;
  llvm::Value *Th = nullptr, *Bl = nullptr;

  /// The thread's place (emitIndices).
  llvm::Value *RowInBlock = nullptr, *Lane = nullptr, *RowValid = nullptr;
  std::vector<llvm::Value *> ChunkValid;
  /// Logical input index of element (chunk j, lane l) of the thread.
  std::vector<std::vector<std::vector<llvm::Value *>>> Idx;
  /// Index of the thread's row value (the kept dims).
  std::vector<llvm::Value *> RowIdx;
  /// Preloaded vectors: (parameter, chunk j, lane / width).
  std::map<std::tuple<const HloInstruction *, int64_t, int64_t>, llvm::Value *>
      Vectors;
  int64_t CurJ = 0, CurL = 0;
};

void RowNormKernel::setOverrides(FusedElementEmitter &FE,
                                 const HloInstruction *R,
                                 llvm::ArrayRef<llvm::Value *> Vals) {
  if (R->operandCount() == 2) {
    llvm::Value *X = Vals[0];
    FE.setOverride(*R, [X](llvm::ArrayRef<llvm::Value *>) { return X; });
    return;
  }
  for (const HloInstruction *U : C.instructions())
    if (U->opcode() == HloOpcode::GetTupleElement && U->operand(0) == R) {
      llvm::Value *X = Vals[U->tupleIndex()];
      FE.setOverride(*U, [X](llvm::ArrayRef<llvm::Value *>) { return X; });
    }
}

std::optional<Diagnostic> RowNormKernel::createFunction() {
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = "row normalization";
  if (auto Err = setLaunchShape(Info, F, Math.Device, Blocks, T))
    return *Err;
  std::vector<KernelParamSpec> Specs = fusionKernelParams(C, A.Roots, Info);
  K = createKernel(M, Info.Name, Specs);
  setLaunchBounds(*K, {unsigned(T), /*Exact=*/true, 0});
  B.SetInsertPoint(&K->getEntryBlock());
  IndexTy = Plan.Index32 ? B.getInt32Ty() : B.getInt64Ty();
  Th = B.CreateZExtOrTrunc(emitThreadId(B, GpuDim::X, unsigned(T)), IndexTy);
  Bl =
      B.CreateZExtOrTrunc(emitBlockId(B, GpuDim::X, unsigned(Blocks)), IndexTy);
  Info.ThreadMap = printMap(Plan.Main.Map);
  Info.ThreadMapTarget = Input.name();
  return std::nullopt;
}

void RowNormKernel::emitIndices() {
  // Row, lane in the group, clamped indices.
  RowInBlock = G == T ? cst(0) : B.CreateLShr(Th, cst(log2Exact(G)));
  Lane = G == 1 ? cst(0) : B.CreateAnd(Th, cst(G - 1));
  llvm::Value *Row = B.CreateAdd(B.CreateMul(Bl, cst(RPB), "", true, true),
                                 RowInBlock, "", true, true);
  RowValid = RowTail ? B.CreateICmpULT(Row, cst(Rows)) : B.getTrue();
  llvm::Value *RowC =
      RowTail ? B.CreateSelect(RowValid, Row, cst(Rows - 1)) : Row;
  ChunkValid.assign(J, B.getTrue());
  std::vector<llvm::Value *> ChunkC(J);
  for (int64_t Jj = 0; Jj < J; ++Jj) {
    llvm::Value *V = B.CreateAdd(cst(Jj * G), Lane, "", true, true);
    if (ChunkTail && Jj == J - 1) {
      ChunkValid[Jj] = B.CreateICmpULT(V, cst(NVec));
      V = B.CreateSelect(ChunkValid[Jj], V, cst(NVec - 1));
    }
    ChunkC[Jj] = V;
  }
  // Logical input index of every element the thread holds.
  IndexingMap EM(
      Ctx, {{"row", {0, Rows - 1}}, {"chunk", {0, NVec - 1}}},
      {{"vec", {0, Vec - 1}}}, {},
      delinearizePhysical(
          Ctx, Ctx.dim(0) * N + Ctx.dim(1) * Vec + Ctx.symbol(0), In));
  simplify(EM);
  RangeEvaluator ERE(EM);
  Idx.assign(J, {});
  for (int64_t Jj = 0; Jj < J; ++Jj)
    for (int64_t L = 0; L < Vec; ++L) {
      std::vector<llvm::Value *> I;
      for (Expr E : EM.results())
        I.push_back(
            emitIndexExpr(B, E, {RowC, ChunkC[Jj]}, {cst(L)}, ERE, IndexTy));
      Idx[Jj].push_back(std::move(I));
    }
  // Row value index (the kept dims of the row's first element).
  IndexingMap RM(Ctx, {{"row", {0, Rows - 1}}}, {}, {},
                 delinearizePhysical(Ctx, Ctx.dim(0) * N, In));
  simplify(RM);
  RangeEvaluator RRE(RM);
  for (int64_t D : P.KeptDims)
    RowIdx.push_back(emitIndexExpr(B, RM.result(D), {RowC}, {}, RRE, IndexTy));
}

void RowNormKernel::preloadVectors() {
  for (const HloInstruction *Pm : C.parameters()) {
    int64_t Wd = width(*Pm);
    if (Wd <= 1)
      continue;
    const IndexingMap &Mp = P.LoadMap[size_t(Pm->parameterNumber())];
    RangeEvaluator PRE(Mp);
    for (int64_t Jj = 0; Jj < J; ++Jj)
      for (int64_t Cc = 0; Cc < Vec / Wd; ++Cc) {
        std::vector<llvm::Value *> PIdx;
        for (Expr E : Mp.results())
          PIdx.push_back(
              emitIndexExpr(B, E, Idx[Jj][Cc * Wd], {}, PRE, IndexTy));
        Vectors[{Pm, Jj, Cc}] =
            loadParameterVector(B, *K, *Pm, PIdx, Wd, IndexTy,
                                OffsetTermOrder::MinorToMajor, 0, hint());
      }
  }
}

void RowNormKernel::reduceLevel(
    int Lv, FusedElementEmitter &FE, FusedElementEmitter &FR,
    std::map<const HloInstruction *, std::vector<llvm::Value *>> &Inits) {
  std::vector<const HloInstruction *> Rs;
  std::vector<Slot> Slots;
  std::vector<llvm::Value *> Ident, Init;
  for (size_t RI = 0; RI < P.Reduces.size(); ++RI) {
    const HloInstruction *R = P.Reduces[RI];
    if (P.Levels[RI] != Lv)
      continue;
    Rs.push_back(R);
    int64_t NOut = R->operandCount() / 2;
    for (int64_t O = 0; O < NOut; ++O) {
      Slots.push_back({R, O});
      llvm::Value *I0 = Inits[R][O];
      llvm::Value *Id =
          NOut == 1 ? reducerIdentity(LC, *R->toApply(),
                                      R->operand(NOut + O)->shape().Type)
                    : nullptr;
      if (Id && Id->getType() != I0->getType())
        Id = nullptr;
      Ident.push_back(Id ? Id : I0);
      Init.push_back(I0);
    }
  }
  // Every element's operand values, masked past the row's end.
  std::vector<std::vector<llvm::Value *>> Elems;
  for (int64_t Jj = 0; Jj < J; ++Jj)
    for (int64_t L = 0; L < Vec; ++L) {
      CurJ = Jj;
      CurL = L;
      std::vector<llvm::Value *> Vals;
      for (size_t S = 0; S < Slots.size(); ++S) {
        llvm::Value *X =
            FE.valueAt(*Slots[S].Hero->operand(Slots[S].Out), Idx[Jj][L]);
        if (!llvm::isa<llvm::ConstantInt>(ChunkValid[Jj]))
          X = B.CreateSelect(ChunkValid[Jj], X, Ident[S]);
        Vals.push_back(X);
      }
      Elems.push_back(std::move(Vals));
    }
  // In-thread tree.
  while (Elems.size() > 1) {
    std::vector<std::vector<llvm::Value *>> Next;
    for (size_t E = 0; E + 1 < Elems.size(); E += 2)
      Next.push_back(combine(Rs, Elems[E], Elems[E + 1]));
    if (Elems.size() % 2)
      Next.push_back(Elems.back());
    Elems = std::move(Next);
  }
  std::vector<llvm::Value *> Acc = Elems.front();
  // Across the group's lanes within a warp.
  if (G > 1)
    Acc = butterflyReduce(B, Rs, std::move(Acc),
                          unsigned(std::min<int64_t>(G, 32)), Math);
  // Across the row's warps: partials through shared memory.
  if (W > 1) {
    llvm::Value *WarpLane = B.CreateAnd(Th, cst(31));
    llvm::Value *WarpInRow = B.CreateLShr(Lane, cst(5));
    SharedSlots Sh(M, Acc, uint64_t(RPB * W),
                   Info.Name + ".row" + std::to_string(Lv));
    Info.SharedBytes += unsigned(Sh.bytes(M.getDataLayout()));
    llvm::Value *Base = B.CreateMul(RowInBlock, cst(W), "", true, true);
    emitIf(B, B.CreateICmpEQ(WarpLane, cst(0)), [&] {
      Sh.store(B, B.CreateAdd(Base, WarpInRow, "", true, true), Acc);
    });
    // Each level has its own arrays: no barrier is needed after the reads.
    emitBarrier(B);
    // Every segment of W lanes reads the W partials (W is a power of two,
    // at most 32) and combines them, so every thread ends with the row's
    // value: lanes past W must not start from the identity, they are the
    // row's threads too.
    llvm::Value *Rd = B.CreateAnd(WarpLane, cst(W - 1));
    Acc = butterflyReduce(B, Rs,
                          Sh.load(B, B.CreateAdd(Base, Rd, "", true, true)),
                          unsigned(W), Math);
  }
  // The init value, once.
  Acc = combine(Rs, Init, Acc);
  size_t Pos = 0;
  for (const HloInstruction *R : Rs) {
    size_t NOut = R->operandCount() / 2;
    llvm::ArrayRef<llvm::Value *> Vals(Acc.data() + Pos, NOut);
    setOverrides(FE, R, Vals);
    setOverrides(FR, R, Vals);
    Pos += NOut;
  }
}

void RowNormKernel::divideByReciprocals(FusedElementEmitter &FE,
                                        FusedElementEmitter &FR) {
  // An f32 division of row elements by a row value (softmax's e / sum) is a
  // multiplication by the row value's reciprocal, computed once per row
  // (`rcp.rn`): within 1.5 ulp of the exact quotient for divisors of
  // magnitude 2^-126 .. 2^126 (as Triton's `div.full.f32`), the same
  // infinities and NaNs.
  for (const HloInstruction *I : C.instructions()) {
    if (I->opcode() != HloOpcode::Divide ||
        I->shape().Type != PrimitiveType::F32 || !I->shape().sameDims(In))
      continue;
    const HloInstruction *Bc = I->operand(1);
    if (Bc->opcode() != HloOpcode::Broadcast ||
        Bc->dimensions() != P.KeptDims ||
        Bc->operand(0)->shape().rank() != int64_t(P.KeptDims.size()))
      continue;
    llvm::Value *Rcp = B.CreateFDiv(llvm::ConstantFP::get(B.getFloatTy(), 1.0),
                                    FR.valueAt(*Bc->operand(0), RowIdx));
    const HloInstruction *Num = I->operand(0);
    FE.setOverride(*I,
                   [this, &FE, Num, Rcp](llvm::ArrayRef<llvm::Value *> Index) {
                     return B.CreateFMul(FE.valueAt(*Num, Index), Rcp);
                   });
  }
}

void RowNormKernel::storeRoots(FusedElementEmitter &FE,
                               FusedElementEmitter &FR) {
  // Every value first (straight-line, reusing the cached element values of
  // the reductions), then the stores.
  std::vector<std::vector<std::vector<llvm::Value *>>> Out(A.Roots.size());
  std::vector<llvm::Value *> RowOut(A.Roots.size(), nullptr);
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    if (!P.ElementRoot[R]) {
      RowOut[R] = FR.valueAt(*A.Roots[R], RowIdx);
      continue;
    }
    Out[R].resize(J);
    for (int64_t Jj = 0; Jj < J; ++Jj)
      for (int64_t L = 0; L < Vec; ++L) {
        CurJ = Jj;
        CurL = L;
        Out[R][Jj].push_back(FE.valueAt(*A.Roots[R], Idx[Jj][L]));
      }
  }
  for (int64_t Jj = 0; Jj < J; ++Jj) {
    llvm::Value *Ok = ChunkValid[Jj];
    if (RowTail)
      Ok = llvm::isa<llvm::ConstantInt>(Ok) ? RowValid
                                            : B.CreateAnd(RowValid, Ok);
    emitIf(B, Ok, [&] {
      for (size_t R = 0; R < A.Roots.size(); ++R) {
        if (!P.ElementRoot[R])
          continue;
        const Shape &S = A.Roots[R]->shape();
        PrimitiveType PT = S.Type;
        llvm::Type *ST = storageType(LC, PT);
        llvm::Value *Base = K->getArg(C.parameterCount() + R);
        int64_t Wd = P.StoreWidth[R];
        for (int64_t Cc = 0; Cc < Vec / Wd; ++Cc) {
          llvm::Value *Ptr =
              elementPointer(B, ST, Base, S, Idx[Jj][Cc * Wd], IndexTy);
          if (Wd == 1) {
            B.CreateAlignedStore(storeConvert(B, Out[R][Jj][Cc], PT), Ptr,
                                 llvm::Align(byteWidth(PT)));
            continue;
          }
          auto *VT = llvm::FixedVectorType::get(ST, unsigned(Wd));
          llvm::Value *V = llvm::PoisonValue::get(VT);
          for (int64_t E = 0; E < Wd; ++E)
            V = B.CreateInsertElement(
                V, storeConvert(B, Out[R][Jj][Cc * Wd + E], PT), uint64_t(E));
          B.CreateAlignedStore(
              V, Ptr, llvm::Align(std::min<int64_t>(16, Wd * byteWidth(PT))));
        }
      }
    });
  }
  // Per-row roots: the group's first thread.
  bool AnyRowValue = std::find(P.ElementRoot.begin(), P.ElementRoot.end(),
                               false) != P.ElementRoot.end();
  if (!AnyRowValue)
    return;
  llvm::Value *First = G == 1 ? B.getTrue() : B.CreateICmpEQ(Lane, cst(0));
  if (RowTail)
    First = B.CreateAnd(First, RowValid);
  emitIf(B, First, [&] {
    for (size_t R = 0; R < A.Roots.size(); ++R) {
      if (P.ElementRoot[R])
        continue;
      const Shape &S = A.Roots[R]->shape();
      PrimitiveType PT = S.Type;
      llvm::Type *ST = storageType(LC, PT);
      B.CreateAlignedStore(storeConvert(B, RowOut[R], PT),
                           elementPointer(B, ST,
                                          K->getArg(C.parameterCount() + R), S,
                                          RowIdx, IndexTy),
                           llvm::Align(byteWidth(PT)));
    }
  });
}

Expected<KernelInfo> RowNormKernel::run() {
  for (const HloInstruction *R : P.Reduces)
    if (auto Why = checkReducer(*R->toApply()))
      return unsupported(F, "reducer of '" + R->name() + "': " + *Why);
  if (auto Err = createFunction())
    return *Err;
  emitIndices();
  // Loads: every vector of every proven parameter first, in flight together.
  preloadVectors();
  ParameterLoader ScalarLoader = [this](const HloInstruction &Pm,
                                        llvm::ArrayRef<llvm::Value *> Index) {
    return loadParameterElement(B, *K, Pm, Index, IndexTy,
                                OffsetTermOrder::MinorToMajor, hint());
  };
  ParameterLoader ElementLoader =
      [this, ScalarLoader](const HloInstruction &Pm,
                           llvm::ArrayRef<llvm::Value *> Index) {
        int64_t Wd = width(Pm);
        if (Wd <= 1)
          return ScalarLoader(Pm, Index);
        // The only map from a row element to this parameter is the proven
        // one: element (CurJ, CurL) reads lane CurL mod Wd of its vector.
        llvm::Value *V = Vectors.at({&Pm, CurJ, CurL / Wd});
        return loadConvert(B, B.CreateExtractElement(V, uint64_t(CurL % Wd)),
                           Pm.shape().Type);
      };
  // FE computes values per element (through the preloaded vectors), FR per
  // row (init values, row values, per-row roots).
  FusedElementEmitter FE(B, Ctx, C, ElementLoader, Math, IndexTy);
  FusedElementEmitter FR(B, Ctx, C, ScalarLoader, Math, IndexTy);

  // Init values, once.
  std::map<const HloInstruction *, std::vector<llvm::Value *>> Inits;
  for (const HloInstruction *R : P.Reduces) {
    int64_t NOut = R->operandCount() / 2;
    for (int64_t O = 0; O < NOut; ++O)
      Inits[R].push_back(FR.valueAt(*R->operand(NOut + O), {}));
  }
  for (int Lv = 0; Lv < P.NumLevels; ++Lv)
    reduceLevel(Lv, FE, FR, Inits);
  // --precise-math (or the plan's ExactDivide) keeps `div.rn` per element;
  // otherwise the divisions that are not by a row value are `div.full`.
  if (!Math.Precise && !P.ExactDivide)
    divideByReciprocals(FE, FR);
  storeRoots(FE, FR);
  B.CreateRetVoid();
  return Info;
}

} // namespace

Expected<KernelInfo>
emitRowNormalizationKernel(llvm::Module &M, const HloInstruction &F,
                           const FusionAnalysis &A, const KernelPlan &Plan,
                           Context &Ctx, const MathOptions &Math) {
  if (!Plan.RowNormalization)
    return unsupported(F, "the plan is not a row normalization's");
  requestBackEndOptLevel(M, Plan.RowNormalization->BackEndOptLevel);
  RowNormKernel RK(M, F, A, Plan, Ctx, Math);
  return RK.run();
}

} // namespace codegen
} // namespace idxmap
