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
//     the indexing maps prove (analyzeAccess of the thread map composed with
//     each parameter's map) and kept in registers.
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
//     reciprocal (see run()).
//
// Masked tails: chunk indices past the row and rows past the end are
// clamped to the last valid ones, so every load is in bounds and every value
// is computed from real data; clamped elements enter the reductions as the
// reducer's identity (or the init value for reducers without a known one,
// which the other reduction emitters assume to be an identity too) and are
// not stored. No thread leaves early: shuffles and barriers see them all.
//
// Sizes: G is the power of two that gives each thread about 8 elements
// (IDXMAP_ROWNORM_ELEMENTS=N, 1..64, overrides the 8 for tuning; read with
// knob, as the reduction emitter's variables), at most 1024;
// rows needing more than 64 elements per thread at 1024 threads are refused
// with a diagnostic. Blocks have max(G, 256) threads (fewer when there are
// few rows), so short rows share a block and a warp.
//
//===----------------------------------------------------------------------===//
#include "EmitterSupport.h"
#include "Emitters.h"
#include "ExprCodegen.h"
#include "FusedElementEmitter.h"
#include "KernelBuilder.h"

#include "idxmap/Coalescing.h"
#include "idxmap/Codegen.h"
#include "idxmap/Compose.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Print.h"
#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace idxmap {
namespace codegen {

namespace {

int64_t log2Exact(int64_t V) {
  int64_t L = 0;
  while ((int64_t(1) << L) < V)
    ++L;
  return L;
}

/// Most elements one thread holds in registers (at 1024 threads per row).
constexpr int64_t MaxElementsPerThread = 64;
constexpr int64_t MaxThreadsPerRow = 1024;

Diagnostic unsupported(const HloInstruction &F, const std::string &Why) {
  return emitterRefusal(F, "row normalization", Why);
}

/// The structure of a row normalization (see analyzeRowNormalization).
struct Plan {
  /// Every reduce, in definition (dependency) order, with its level.
  std::vector<const HloInstruction *> Reduces;
  std::map<const HloInstruction *, int> Level;
  int Levels = 0;
  const Shape *In = nullptr;
  std::vector<int64_t> KeptDims;
  int64_t Rows = 1, Cols = 1;
  /// Roots of the input's shape (per element) or the reduce output's
  /// (per row).
  std::vector<bool> RowRoot;
};

bool isReduceResult(const HloInstruction *I) {
  return I->opcode() == HloOpcode::Reduce ||
         (I->opcode() == HloOpcode::GetTupleElement &&
          I->operand(0)->opcode() == HloOpcode::Reduce);
}

/// Checks that the fusion is a row normalization; on failure returns the
/// reason. A row normalization: reduces of the minor physical dims of the
/// first reduce's input (classifyReduction: row form with one batch), all
/// of the same dims, where every instruction that depends on a reduce is
///   - a reduce (its operands of the input's shape),
///   - get-tuple-element of a variadic reduce,
///   - elementwise of the input's shape (a row element) or of the reduce
///     output's shape (a row value),
///   - a broadcast of a row value along the reduced dims back to the
///     input's shape,
/// with at least one such broadcast (else it is a plain reduction with an
/// epilogue: the row reduction emitter's job), and every root of the
/// input's or the reduce output's shape.
std::optional<Plan> analyzeRowNormalization(const HloInstruction &F,
                                            const FusionAnalysis &A,
                                            std::string &Why) {
  (void)F;
  if (!A.Reduction || !A.Computation) {
    Why = "not a row reduction";
    return std::nullopt;
  }
  const HloComputation &C = *A.Computation;
  // Instructions reachable from the roots.
  std::set<const HloInstruction *> Reach;
  std::vector<const HloInstruction *> Work(A.Roots.begin(), A.Roots.end());
  while (!Work.empty()) {
    const HloInstruction *I = Work.back();
    Work.pop_back();
    if (!Reach.insert(I).second)
      continue;
    for (const HloInstruction *O : I->operands())
      Work.push_back(O);
  }
  Plan P;
  for (const HloInstruction *I : C.instructions())
    if (Reach.count(I) && I->opcode() == HloOpcode::Reduce)
      P.Reduces.push_back(I);
  if (P.Reduces.empty()) {
    Why = "no reduce";
    return std::nullopt;
  }
  const HloInstruction *First = P.Reduces.front();
  P.In = &First->operand(0)->shape();
  const Shape &In = *P.In;
  const std::vector<int64_t> &RedDims = First->dimensions();
  for (int64_t D = 0; D < In.rank(); ++D)
    if (std::find(RedDims.begin(), RedDims.end(), D) == RedDims.end())
      P.KeptDims.push_back(D);
  const Shape &OutS = First->shape().isArray()
                          ? First->shape()
                          : First->shape().TupleShapes.front();
  // The rows: the first reduce's physical form (the analysis may have
  // classified another reduce of the same dims whose operand has another
  // layout).
  std::optional<ReductionInfo> RI = classifyReduction(*First, &Why);
  if (!RI)
    return std::nullopt;
  if (!RI->IsRow || RI->Dims[0] != 1) {
    Why = "reduce '" + First->name() + "' is not a row reduction";
    return std::nullopt;
  }
  P.Cols = RI->Dims[2];
  P.Rows = RI->Dims[1];
  if (P.Rows * P.Cols != In.numElements() || P.Rows * P.Cols == 0) {
    Why = "rows do not cover the input";
    return std::nullopt;
  }
  for (const HloInstruction *R : P.Reduces) {
    int64_t N = R->operandCount() / 2;
    for (int64_t K = 0; K < N; ++K)
      if (!R->operand(K)->shape().sameDims(In)) {
        Why = "reduce '" + R->name() + "' has an operand of another shape";
        return std::nullopt;
      }
    if (R->dimensions() != RedDims) {
      Why = "reduces '" + First->name() + "' and '" + R->name() +
            "' reduce different dimensions";
      return std::nullopt;
    }
    if (auto W = checkReducer(*R->toApply())) {
      Why = "reducer of '" + R->name() + "': " + *W;
      return std::nullopt;
    }
  }
  // Which reduces each instruction depends on (through any op).
  std::map<const HloInstruction *, std::set<const HloInstruction *>> Deps;
  for (const HloInstruction *I : C.instructions()) {
    std::set<const HloInstruction *> &D = Deps[I];
    for (const HloInstruction *O : I->operands()) {
      if (O->opcode() == HloOpcode::Reduce)
        D.insert(O);
      else
        D.insert(Deps[O].begin(), Deps[O].end());
    }
  }
  // Levels: a reduce comes after every reduce its operands read.
  for (const HloInstruction *R : P.Reduces) {
    int64_t N = R->operandCount() / 2;
    for (int64_t K = N; K < 2 * N; ++K)
      if (R->operand(K)->opcode() == HloOpcode::Reduce ||
          !Deps[R->operand(K)].empty()) {
        Why = "the init value of '" + R->name() + "' depends on a reduce";
        return std::nullopt;
      }
    int L = 0;
    for (const HloInstruction *D : Deps[R])
      L = std::max(L, P.Level.at(D) + 1);
    P.Level[R] = L;
    P.Levels = std::max(P.Levels, L + 1);
  }
  auto DependsOnReduce = [&](const HloInstruction *I) {
    return I->opcode() == HloOpcode::Reduce || !Deps[I].empty();
  };
  bool Broadcast = false;
  for (const HloInstruction *I : C.instructions()) {
    if (!Reach.count(I) || !DependsOnReduce(I) ||
        I->opcode() == HloOpcode::Reduce)
      continue;
    const Shape &S = I->shape();
    bool Ok = false;
    if (I->opcode() == HloOpcode::GetTupleElement)
      Ok = I->operand(0)->opcode() == HloOpcode::Reduce;
    else if (isElementwise(I->opcode()))
      Ok = S.isArray() && (S.sameDims(In) || S.sameDims(OutS));
    else if (I->opcode() == HloOpcode::Broadcast) {
      Ok = S.isArray() && S.sameDims(In) &&
           I->operand(0)->shape().sameDims(OutS) &&
           I->dimensions() == P.KeptDims;
      Broadcast |= Ok;
    }
    if (!Ok) {
      Why = "op '" + I->name() +
            "' reads a reduce but is neither elementwise on rows or row "
            "values nor a broadcast of row values along the row";
      return std::nullopt;
    }
  }
  if (!Broadcast) {
    Why = "no reduce result is broadcast back along the row";
    return std::nullopt;
  }
  for (const HloInstruction *R : A.Roots) {
    const Shape &S = R->shape();
    if (!S.isArray() || !(S.sameDims(In) || S.sameDims(OutS))) {
      Why = "root '" + R->name() + "' has neither the row shape " + In.str() +
            " nor the row value shape " + OutS.str();
      return std::nullopt;
    }
    P.RowRoot.push_back(S.sameDims(In));
  }
  return P;
}

/// One accumulator: reduce \p Hero, output \p Out.
struct Slot {
  const HloInstruction *Hero;
  int64_t Out;
};

class RowNormKernel {
public:
  RowNormKernel(llvm::Module &M, const HloInstruction &F,
                const FusionAnalysis &A, const MathOptions &Math, Plan P)
      : M(M), LC(M.getContext()), F(F), A(A), C(*A.Computation), Math(Math),
        B(LC), P(std::move(P)) {}

  Expected<KernelInfo> run();

private:
  llvm::Value *cst(int64_t V) { return llvm::ConstantInt::get(IndexTy, V); }
  /// Maps from the input's logical index to each parameter, walking every
  /// per-element path (reduce results are per-row scalars: the walk stops
  /// there). Sets Width for the parameters read through exactly one map.
  void proveWidths(const IndexingMap &ThreadMap);
  std::vector<llvm::Value *> combine(llvm::ArrayRef<const HloInstruction *> Rs,
                                     llvm::ArrayRef<llvm::Value *> Acc,
                                     llvm::ArrayRef<llvm::Value *> Val);
  llvm::Value *shuffle(llvm::Value *V, unsigned Mask, unsigned Width);
  std::vector<llvm::Value *>
  groupReduce(llvm::ArrayRef<const HloInstruction *> Rs,
              std::vector<llvm::Value *> V, unsigned Width);
  void emitIf(llvm::Value *Cond, const std::function<void()> &Body);
  void setOverrides(FusedElementEmitter &FE, const HloInstruction *R,
                    llvm::ArrayRef<llvm::Value *> Vals);

  llvm::Module &M;
  llvm::LLVMContext &LC;
  const HloInstruction &F;
  const FusionAnalysis &A;
  const HloComputation &C;
  MathOptions Math;
  llvm::IRBuilder<> B;
  Plan P;
  Context Ctx;
  KernelInfo Info;
  llvm::Function *K = nullptr;
  llvm::Type *IndexTy = nullptr;
  llvm::Value *Th = nullptr;

  int64_t Vec = 1;
  /// Parameter -> its single map from the input's logical index (absent or
  /// null map when read through several maps or runtime offsets).
  std::map<const HloInstruction *, IndexingMap> ParamMap;
  std::map<const HloInstruction *, int64_t> Width;
  /// Proven store width of each root (by position: a root may also be a
  /// parameter or appear twice).
  std::vector<int64_t> StoreWidth;
  /// Preloaded vectors: (parameter, chunk j, lane / width).
  std::map<std::tuple<const HloInstruction *, int64_t, int64_t>, llvm::Value *>
      Vectors;
  int64_t CurJ = 0, CurL = 0;
};

void RowNormKernel::proveWidths(const IndexingMap &ThreadMap) {
  // Reverse definition order: every user before its operands.
  std::map<const HloInstruction *, std::vector<IndexingMap>> Maps;
  std::set<const HloInstruction *> Bad;
  IndexingMap Id = IndexingMap::identity(Ctx, P.In->Dims);
  for (const HloInstruction *R : P.Reduces)
    for (int64_t K2 = 0; K2 < R->operandCount() / 2; ++K2)
      Maps[R->operand(K2)] = {Id};
  for (size_t R = 0; R < A.Roots.size(); ++R)
    if (P.RowRoot[R])
      Maps[A.Roots[R]] = {Id};
  const auto &Instrs = C.instructions();
  for (auto It = Instrs.rbegin(); It != Instrs.rend(); ++It) {
    const HloInstruction *I = *It;
    auto Found = Maps.find(I);
    if (Found == Maps.end() || isReduceResult(I) ||
        I->opcode() == HloOpcode::Parameter)
      continue;
    std::vector<IndexingMap> Mine = Found->second;
    bool MineBad = Bad.count(I) > 0;
    InstructionIndexing Ops = computeOutputToInputIndexing(Ctx, *I, 0);
    for (size_t K2 = 0; K2 < Ops.Operands.size(); ++K2) {
      const HloInstruction *O = I->operand(K2);
      std::vector<IndexingMap> &Into = Maps[O];
      if (MineBad)
        Bad.insert(O);
      for (const IndexingMap &Mp : Mine)
        for (const OperandMap &OM : Ops.Operands[K2]) {
          if (OM.Map.isUndefined() || OM.Map.numRuntimeVars() != 0) {
            Bad.insert(O);
            continue;
          }
          IndexingMap Cm = compose(Mp, OM.Map);
          if (Cm.isUndefined()) {
            Bad.insert(O);
            continue;
          }
          simplify(Cm);
          Cm.removeUnusedSymbols();
          if (std::find(Into.begin(), Into.end(), Cm) == Into.end())
            Into.push_back(std::move(Cm));
          if (Into.size() > 4)
            Bad.insert(O);
        }
    }
  }
  for (const HloInstruction *Pm : C.parameters()) {
    Width[Pm] = 1;
    auto It = Maps.find(Pm);
    if (Vec == 1 || It == Maps.end() || It->second.size() != 1 ||
        Bad.count(Pm) || It->second.front().numSymbols() != 0)
      continue;
    // Vectors are loaded up front for every element, so the map must be
    // defined on the whole input (not only inside a pad's or concatenate's
    // branch, where other elements would read out of bounds).
    const IndexingMap &Mp = It->second.front();
    bool Whole = Mp.constraints().empty() && !Mp.isKnownEmpty();
    for (unsigned D = 0; D < Mp.numDims() && Whole; ++D)
      Whole = Mp.dims()[D].Bound.Lo == 0 &&
              Mp.dims()[D].Bound.Hi == P.In->Dims[D] - 1;
    if (!Whole)
      continue;
    IndexingMap Comp = compose(ThreadMap, It->second.front());
    if (Comp.isUndefined())
      continue;
    simplify(Comp);
    AccessReport R = analyzeAccess(Comp, Pm->shape(), /*CountWarps=*/false);
    int64_t W = std::max<int64_t>(1, R.VectorWidth);
    if (W > 1 && Vec % W == 0) {
      Width[Pm] = W;
      ParamMap.emplace(Pm, It->second.front());
    }
  }
}

std::vector<llvm::Value *>
RowNormKernel::combine(llvm::ArrayRef<const HloInstruction *> Rs,
                       llvm::ArrayRef<llvm::Value *> Acc,
                       llvm::ArrayRef<llvm::Value *> Val) {
  std::vector<llvm::Value *> Res;
  size_t Pos = 0;
  for (const HloInstruction *R : Rs) {
    size_t N = R->operandCount() / 2;
    auto X = emitReduction(B, *R->toApply(), Acc.slice(Pos, N),
                           Val.slice(Pos, N), Math);
    Res.insert(Res.end(), X.begin(), X.end());
    Pos += N;
  }
  return Res;
}

llvm::Value *RowNormKernel::shuffle(llvm::Value *X, unsigned Mask, unsigned W) {
  if (X->getType()->isIntegerTy(1))
    return B.CreateTrunc(
        emitShuffleXor(B, B.CreateZExt(X, B.getInt32Ty()), Mask, W),
        B.getInt1Ty());
  return emitShuffleXor(B, X, Mask, W);
}

std::vector<llvm::Value *>
RowNormKernel::groupReduce(llvm::ArrayRef<const HloInstruction *> Rs,
                           std::vector<llvm::Value *> Vs, unsigned W) {
  for (unsigned Mask = W / 2; Mask >= 1; Mask /= 2) {
    std::vector<llvm::Value *> Other;
    for (llvm::Value *X : Vs)
      Other.push_back(shuffle(X, Mask, W));
    Vs = combine(Rs, Vs, Other);
  }
  return Vs;
}

void RowNormKernel::emitIf(llvm::Value *Cond,
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

Expected<KernelInfo> RowNormKernel::run() {
  const Shape &In = *P.In;
  const int64_t Rows = P.Rows, N = P.Cols;

  // Vector width: 16 bytes of the narrowest per-element buffer, at most 32
  // bytes of the widest, dividing the row.
  int64_t MinBytes = 0, MaxBytes = 0;
  auto Note = [&](const Shape &S) {
    if (!S.isArray() || !S.sameDims(In))
      return;
    int64_t Bt = byteWidth(S.Type);
    MinBytes = MinBytes ? std::min(MinBytes, Bt) : Bt;
    MaxBytes = std::max(MaxBytes, Bt);
  };
  for (const HloInstruction *Pm : C.parameters())
    Note(Pm->shape());
  for (const HloInstruction *R : A.Roots)
    Note(R->shape());
  if (!MinBytes)
    MinBytes = MaxBytes = 4;
  Vec = std::max<int64_t>(1, 16 / MinBytes);
  while (Vec > 1 && (Vec * MaxBytes > 32 || N % Vec != 0))
    Vec /= 2;
  const int64_t NVec = N / Vec;

  // Threads per row G (a power of two), chunks per thread J.
  // 8: softmax f32[4096,4096] 33.14-33.22 us against 33.17-33.26 with 16
  // (H200, 2026-11-30), and 30 % less compile time.
  int64_t Target = knob(Math.Tuning, "IDXMAP_ROWNORM_ELEMENTS", 8);
  int64_t PerThread = std::max<int64_t>(1, Target / Vec);
  int64_t G =
      std::min<int64_t>(MaxThreadsPerRow, nextPow2(ceilDiv(NVec, PerThread)));
  int64_t J = ceilDiv(NVec, G);
  if (J * Vec > MaxElementsPerThread)
    return unsupported(F, "a row of " + std::to_string(N) +
                              " elements does not fit in one block (" +
                              std::to_string(J * Vec) +
                              " elements per thread at " + std::to_string(G) +
                              " threads; at most " +
                              std::to_string(MaxElementsPerThread) + ")");
  int64_t T = std::max<int64_t>(G, 256), RPB = T / G;
  int64_t Blocks = ceilDiv(Rows, RPB);
  while (RPB > 1 && T > 32 && Blocks * RPB / 2 >= Rows) {
    T /= 2;
    RPB /= 2;
    Blocks = ceilDiv(Rows, RPB);
  }
  const int64_t W = G > 32 ? G / 32 : 1; // warps per row
  const bool RowTail = Blocks * RPB != Rows, ChunkTail = J * G != NVec;

  // The kernel.
  Info.Name = kernelName(F.name());
  Info.Fusion = F.name();
  Info.Emitter = "row normalization";
  if (auto Err = setLaunchShape(Info, F, Math.Device, Blocks, T))
    return *Err;
  std::vector<KernelParamSpec> Specs;
  for (const HloInstruction *Pm : C.parameters()) {
    Specs.push_back({Pm->name(), KernelParamRole::Input, 16, nullptr});
    Info.Params.push_back({Pm->name(), false, Pm->shape(), 16});
  }
  for (const HloInstruction *R : A.Roots) {
    Specs.push_back({R->name(), KernelParamRole::Output, 16, nullptr});
    Info.Params.push_back({R->name(), true, R->shape(), 16});
  }
  K = createKernel(M, Info.Name, Specs);
  setLaunchBounds(*K, {unsigned(T), /*Exact=*/true, 0});
  B.SetInsertPoint(&K->getEntryBlock());
  int64_t Largest = In.numElements();
  for (const HloInstruction *Pm : C.parameters())
    Largest = std::max(Largest, Pm->shape().numElements());
  for (const HloInstruction *R : A.Roots)
    Largest = std::max(Largest, R->shape().numElements());
  IndexTy = Largest < (int64_t(1) << 31) / 16 ? B.getInt32Ty() : B.getInt64Ty();
  Th = B.CreateZExtOrTrunc(emitThreadId(B, GpuDim::X, unsigned(T)), IndexTy);
  llvm::Value *Bl =
      B.CreateZExtOrTrunc(emitBlockId(B, GpuDim::X, unsigned(Blocks)), IndexTy);

  // The thread map, for the vector-width proofs:
  // (th_x, bl_x)[j, vec] -> input index of row `bl * RPB + th / G`,
  // element `(j * G + th mod G) * Vec + vec`.
  {
    Expr ThE = Ctx.dim(0), BlE = Ctx.dim(1);
    Expr RowE = BlE * RPB + ThE.floorDiv(G);
    Expr VE = Ctx.symbol(0) * G + ThE % G;
    std::vector<Constraint> Cs;
    if (ChunkTail)
      Cs.push_back({VE, {0, NVec - 1}});
    if (RowTail)
      Cs.push_back({RowE, {0, Rows - 1}});
    IndexingMap TM(
        Ctx, {{"th_x", {0, T - 1}}, {"bl_x", {0, Blocks - 1}}},
        {{"j", {0, J - 1}}, {"vec", {0, Vec - 1}}}, {},
        delinearizePhysical(Ctx, (RowE * N + VE * Vec) + Ctx.symbol(1), In),
        Cs);
    simplify(TM);
    Info.ThreadMap = printMap(TM);
    Info.ThreadMapTarget = P.Reduces.front()->operand(0)->name();
    proveWidths(TM);
    // Row roots: stored at the input's index.
    StoreWidth.assign(A.Roots.size(), 1);
    for (size_t R = 0; R < A.Roots.size(); ++R) {
      if (!P.RowRoot[R] || Vec == 1)
        continue;
      AccessReport Rep = analyzeAccess(TM, A.Roots[R]->shape(), false);
      int64_t Wd = std::max<int64_t>(1, Rep.VectorWidth);
      StoreWidth[R] = Vec % Wd == 0 ? Wd : 1;
    }
  }

  // Row, lane in the group, clamped indices.
  llvm::Value *RowInBlock =
      G == T ? cst(0) : B.CreateLShr(Th, cst(log2Exact(G)));
  llvm::Value *Lane = G == 1 ? cst(0) : B.CreateAnd(Th, cst(G - 1));
  llvm::Value *Row = B.CreateAdd(B.CreateMul(Bl, cst(RPB), "", true, true),
                                 RowInBlock, "", true, true);
  llvm::Value *RowValid =
      RowTail ? B.CreateICmpULT(Row, cst(Rows)) : B.getTrue();
  llvm::Value *RowC =
      RowTail ? B.CreateSelect(RowValid, Row, cst(Rows - 1)) : Row;
  std::vector<llvm::Value *> ChunkValid(J, B.getTrue()), ChunkC(J);
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
  std::vector<std::vector<std::vector<llvm::Value *>>> Idx(J);
  for (int64_t Jj = 0; Jj < J; ++Jj)
    for (int64_t L = 0; L < Vec; ++L) {
      std::vector<llvm::Value *> I;
      for (Expr E : EM.results())
        I.push_back(
            emitIndexExpr(B, E, {RowC, ChunkC[Jj]}, {cst(L)}, ERE, IndexTy));
      Idx[Jj].push_back(std::move(I));
    }
  // Row value index (the kept dims of the row's first element).
  std::vector<llvm::Value *> RowIdx;
  {
    IndexingMap RM(Ctx, {{"row", {0, Rows - 1}}}, {}, {},
                   delinearizePhysical(Ctx, Ctx.dim(0) * N, In));
    simplify(RM);
    RangeEvaluator RRE(RM);
    for (int64_t D : P.KeptDims)
      RowIdx.push_back(
          emitIndexExpr(B, RM.result(D), {RowC}, {}, RRE, IndexTy));
  }

  // Loads: every vector of every proven parameter first, in flight together.
  for (const HloInstruction *Pm : C.parameters()) {
    int64_t Wd = Width[Pm];
    if (Wd <= 1)
      continue;
    const IndexingMap &Mp = ParamMap.at(Pm);
    RangeEvaluator PRE(Mp);
    for (int64_t Jj = 0; Jj < J; ++Jj)
      for (int64_t Cc = 0; Cc < Vec / Wd; ++Cc) {
        std::vector<llvm::Value *> PIdx;
        for (Expr E : Mp.results())
          PIdx.push_back(
              emitIndexExpr(B, E, Idx[Jj][Cc * Wd], {}, PRE, IndexTy));
        Vectors[{Pm, Jj, Cc}] =
            loadParameterVector(B, *K, *Pm, PIdx, Wd, IndexTy);
      }
  }
  ParameterLoader ScalarLoader = [this](const HloInstruction &Pm,
                                        llvm::ArrayRef<llvm::Value *> Index) {
    return loadParameterElement(B, *K, Pm, Index, IndexTy);
  };
  ParameterLoader ElementLoader =
      [this, ScalarLoader](const HloInstruction &Pm,
                           llvm::ArrayRef<llvm::Value *> Index) {
        int64_t Wd = Width[&Pm];
        if (Wd <= 1)
          return ScalarLoader(Pm, Index);
        // The only map from a row element to this parameter is the proven
        // one: element (CurJ, CurL) reads lane CurL mod Wd of its vector.
        llvm::Value *V = Vectors.at({&Pm, CurJ, CurL / Wd});
        return loadConvert(B, B.CreateExtractElement(V, uint64_t(CurL % Wd)),
                           Pm.shape().Type);
      };
  FusedElementEmitter FE(B, Ctx, C, ElementLoader, Math, IndexTy);
  FusedElementEmitter FR(B, Ctx, C, ScalarLoader, Math, IndexTy);

  // Init values, once.
  std::map<const HloInstruction *, std::vector<llvm::Value *>> Inits;
  for (const HloInstruction *R : P.Reduces) {
    int64_t NOut = R->operandCount() / 2;
    for (int64_t O = 0; O < NOut; ++O)
      Inits[R].push_back(FR.valueAt(*R->operand(NOut + O), {}));
  }

  // Reductions, level by level.
  for (int Lv = 0; Lv < P.Levels; ++Lv) {
    std::vector<const HloInstruction *> Rs;
    std::vector<Slot> Slots;
    std::vector<llvm::Value *> Ident, Init;
    for (const HloInstruction *R : P.Reduces) {
      if (P.Level.at(R) != Lv)
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
      Acc = groupReduce(Rs, std::move(Acc), unsigned(std::min<int64_t>(G, 32)));
    // Across the row's warps: partials through shared memory.
    if (W > 1) {
      llvm::Value *WarpLane = B.CreateAnd(Th, cst(31));
      llvm::Value *WarpInRow = B.CreateLShr(Lane, cst(5));
      std::vector<llvm::GlobalVariable *> Sh;
      for (size_t S = 0; S < Acc.size(); ++S) {
        llvm::Type *Ty = Acc[S]->getType()->isIntegerTy(1) ? B.getInt8Ty()
                                                           : Acc[S]->getType();
        Sh.push_back(createSharedArray(M, Ty, uint64_t(RPB * W),
                                       Info.Name + ".row" + std::to_string(Lv),
                                       16));
        uint64_t Bytes = RPB * W * M.getDataLayout().getTypeAllocSize(Ty);
        Info.SharedBytes += unsigned((Bytes + 15) / 16 * 16);
      }
      llvm::Value *Base = B.CreateMul(RowInBlock, cst(W), "", true, true);
      auto SlotPtr = [&](size_t S, llvm::Value *I) {
        return B.CreateInBoundsGEP(
            Sh[S]->getValueType(), Sh[S],
            {cst(0), B.CreateAdd(Base, I, "", true, true)});
      };
      emitIf(B.CreateICmpEQ(WarpLane, cst(0)), [&] {
        for (size_t S = 0; S < Acc.size(); ++S) {
          llvm::Value *X = Acc[S];
          if (X->getType()->isIntegerTy(1))
            X = B.CreateZExt(X, B.getInt8Ty());
          B.CreateStore(X, SlotPtr(S, WarpInRow));
        }
      });
      // Each level has its own arrays: no barrier is needed after the reads.
      emitBarrier(B);
      // Every segment of W lanes reads the W partials (W is a power of two,
      // at most 32) and combines them, so every thread ends with the row's
      // value: lanes past W must not start from the identity, they are
      // the row's threads too.
      llvm::Value *Rd = B.CreateAnd(WarpLane, cst(W - 1));
      std::vector<llvm::Value *> Part;
      for (size_t S = 0; S < Acc.size(); ++S) {
        llvm::Type *Ty = Sh[S]->getValueType()->getArrayElementType();
        llvm::Value *X = B.CreateLoad(Ty, SlotPtr(S, Rd));
        if (Acc[S]->getType()->isIntegerTy(1))
          X = B.CreateTrunc(X, B.getInt1Ty());
        Part.push_back(X);
      }
      Acc = groupReduce(Rs, std::move(Part), unsigned(W));
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

  // Fast math: an f32 division of row elements by a row value (softmax's
  // e / sum) is a multiplication by the row value's reciprocal, computed
  // once per row (`rcp.rn`): within 1.5 ulp of the exact quotient for
  // divisors of magnitude 2^-126 .. 2^126 (as Triton's `div.full.f32`), the
  // same infinities and NaNs; --precise-math (or
  // IDXMAP_ROWNORM_EXACT_DIVIDE=1) keeps `div.rn` per element.
  if (!Math.Precise && !knob(Math.Tuning, "IDXMAP_ROWNORM_EXACT_DIVIDE", 0)) {
    for (const HloInstruction *I : C.instructions()) {
      if (I->opcode() != HloOpcode::Divide ||
          I->shape().Type != PrimitiveType::F32 || !I->shape().sameDims(In))
        continue;
      const HloInstruction *Bc = I->operand(1);
      if (Bc->opcode() != HloOpcode::Broadcast ||
          Bc->dimensions() != P.KeptDims ||
          Bc->operand(0)->shape().rank() != int64_t(P.KeptDims.size()))
        continue;
      llvm::Value *Rcp =
          B.CreateFDiv(llvm::ConstantFP::get(B.getFloatTy(), 1.0),
                       FR.valueAt(*Bc->operand(0), RowIdx));
      const HloInstruction *Num = I->operand(0);
      FE.setOverride(
          *I, [this, &FE, Num, Rcp](llvm::ArrayRef<llvm::Value *> Index) {
            return B.CreateFMul(FE.valueAt(*Num, Index), Rcp);
          });
    }
  }

  // Roots: every value first (straight-line, reusing the cached element
  // values of the reductions), then the stores.
  std::vector<std::vector<std::vector<llvm::Value *>>> Out(A.Roots.size());
  std::vector<llvm::Value *> RowOut(A.Roots.size(), nullptr);
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    if (!P.RowRoot[R]) {
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
    emitIf(Ok, [&] {
      for (size_t R = 0; R < A.Roots.size(); ++R) {
        if (!P.RowRoot[R])
          continue;
        const Shape &S = A.Roots[R]->shape();
        PrimitiveType PT = S.Type;
        llvm::Type *ST = storageType(LC, PT);
        llvm::Value *Base = K->getArg(C.parameterCount() + R);
        int64_t Wd = StoreWidth[R];
        for (int64_t Cc = 0; Cc < Vec / Wd; ++Cc) {
          llvm::Value *Off = physicalOffset(B, S, Idx[Jj][Cc * Wd], IndexTy);
          llvm::Value *Ptr = B.CreateInBoundsGEP(ST, Base, Off);
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
  bool AnyRowValue =
      std::find(P.RowRoot.begin(), P.RowRoot.end(), false) != P.RowRoot.end();
  if (AnyRowValue) {
    llvm::Value *First = G == 1 ? B.getTrue() : B.CreateICmpEQ(Lane, cst(0));
    if (RowTail)
      First = B.CreateAnd(First, RowValid);
    emitIf(First, [&] {
      for (size_t R = 0; R < A.Roots.size(); ++R) {
        if (P.RowRoot[R])
          continue;
        const Shape &S = A.Roots[R]->shape();
        PrimitiveType PT = S.Type;
        llvm::Type *ST = storageType(LC, PT);
        llvm::Value *Off = physicalOffset(B, S, RowIdx, IndexTy);
        B.CreateAlignedStore(
            storeConvert(B, RowOut[R], PT),
            B.CreateInBoundsGEP(ST, K->getArg(C.parameterCount() + R), Off),
            llvm::Align(byteWidth(PT)));
      }
    });
  }
  B.CreateRetVoid();
  return Info;
}

} // namespace

bool isRowNormalization(const HloInstruction &F, const FusionAnalysis &A) {
  std::string Why;
  return analyzeRowNormalization(F, A, Why).has_value();
}

Expected<KernelInfo> emitRowNormalizationKernel(llvm::Module &M,
                                                const HloInstruction &F,
                                                const FusionAnalysis &A,
                                                const MathOptions &Math) {
  std::string Why;
  std::optional<Plan> P = analyzeRowNormalization(F, A, Why);
  if (!P)
    return unsupported(F, Why);
  // H200, 2026-11-30: softmax f32[4096,4096] 33.18-33.26 us at back-end
  // O0, 33.18-33.30 at O3.
  requestBackEndOptLevel(M, 0);
  RowNormKernel RK(M, F, A, Math, std::move(*P));
  return RK.run();
}

} // namespace codegen
} // namespace idxmap
