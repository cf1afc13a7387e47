//===- RowNormalizationPlan.cpp - Softmax-like fusions in one kernel ------===//
//
// Part of idxmap. The row-normalization emitter's plan (the scheme is
// described at the top of codegen/emitters/RowNormalizationEmitter.cpp):
// which fusions it takes (row reductions whose results are broadcast back
// along the rows), the reduces' dependency levels, and the sizes: each row
// in the registers of a group of G threads (a power of two), J chunks of
// Vec consecutive elements per thread, RPB rows per block; the thread map
// and the vector widths the maps prove for every parameter and root.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/Compose.h"
#include "idxmap/Delinearize.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Simplify.h"

#include <algorithm>
#include <map>
#include <set>

namespace idxmap {
namespace {

/// Most elements one thread holds in registers (at the most threads per
/// row).
constexpr int64_t MaxElementsPerThread = 64;

using plan::floorPow2;
using plan::nextPow2;

bool isReduceResult(const HloInstruction *I) {
  return I->opcode() == HloOpcode::Reduce ||
         (I->opcode() == HloOpcode::GetTupleElement &&
          I->operand(0)->opcode() == HloOpcode::Reduce);
}

/// The reduce output's shape (of the first output of a variadic reduce).
const Shape &rowValueShape(const HloInstruction *Reduce) {
  return Reduce->shape().isArray() ? Reduce->shape()
                                   : Reduce->shape().TupleShapes.front();
}

using ReduceDeps =
    std::map<const HloInstruction *, std::set<const HloInstruction *>>;

/// The instructions reachable from \p A's roots.
std::set<const HloInstruction *> reachable(const FusionAnalysis &A) {
  std::vector<const HloInstruction *> All = operandClosure(
      std::vector<const HloInstruction *>(A.Roots.begin(), A.Roots.end()));
  return {All.begin(), All.end()};
}

/// Which reduces each instruction of \p C depends on (through any op).
ReduceDeps reduceDeps(const HloComputation &C) {
  ReduceDeps Deps;
  for (const HloInstruction *I : C.instructions()) {
    std::set<const HloInstruction *> &D = Deps[I];
    for (const HloInstruction *O : I->operands()) {
      if (O->opcode() == HloOpcode::Reduce)
        D.insert(O);
      else
        D.insert(Deps[O].begin(), Deps[O].end());
    }
  }
  return Deps;
}

/// The rows (Rows, RowLength) and kept dims from the first reduce's
/// physical form (the analysis may have classified another reduce of the
/// same dims whose operand has another layout); every reduce must read the
/// same dims of operands of the same shape.
std::optional<std::string> checkRows(RowNormalizationPlan &RN) {
  const HloInstruction *First = RN.Reduces.front();
  const Shape &In = First->operand(0)->shape();
  const std::vector<int64_t> &RedDims = First->dimensions();
  for (int64_t D = 0; D < In.rank(); ++D)
    if (std::find(RedDims.begin(), RedDims.end(), D) == RedDims.end())
      RN.KeptDims.push_back(D);
  std::string Why;
  std::optional<ReductionInfo> RI = classifyReduction(*First, &Why);
  if (!RI)
    return Why;
  if (!RI->IsRow || RI->Dims[0] != 1)
    return "reduce '" + First->name() + "' is not a row reduction";
  RN.RowLength = RI->Dims[2];
  RN.Rows = RI->Dims[1];
  if (RN.Rows * RN.RowLength != In.numElements() || RN.Rows * RN.RowLength == 0)
    return std::string("rows do not cover the input");
  for (const HloInstruction *R : RN.Reduces) {
    int64_t N = R->operandCount() / 2;
    for (int64_t K = 0; K < N; ++K)
      if (!R->operand(K)->shape().sameDims(In))
        return "reduce '" + R->name() + "' has an operand of another shape";
    if (R->dimensions() != RedDims)
      return "reduces '" + First->name() + "' and '" + R->name() +
             "' reduce different dimensions";
  }
  return std::nullopt;
}

/// Levels: a reduce comes after every reduce its operands read; init
/// values must not read any.
std::optional<std::string> assignLevels(RowNormalizationPlan &RN,
                                        ReduceDeps &Deps) {
  std::map<const HloInstruction *, int> Level;
  for (const HloInstruction *R : RN.Reduces) {
    int64_t N = R->operandCount() / 2;
    for (int64_t K = N; K < 2 * N; ++K)
      if (R->operand(K)->opcode() == HloOpcode::Reduce ||
          !Deps[R->operand(K)].empty())
        return "the init value of '" + R->name() + "' depends on a reduce";
    int L = 0;
    for (const HloInstruction *D : Deps[R])
      L = std::max(L, Level.at(D) + 1);
    Level[R] = L;
    RN.Levels.push_back(L);
    RN.NumLevels = std::max(RN.NumLevels, L + 1);
  }
  return std::nullopt;
}

/// Every reachable instruction that reads a reduce (other than a reduce)
/// is a get-tuple-element of one, elementwise on row elements or row
/// values, or a broadcast of a row value along the row, with at least one
/// such broadcast; every root is a row element or a row value (sets
/// ElementRoot).
std::optional<std::string>
checkReaders(const FusionAnalysis &A, RowNormalizationPlan &RN,
             const std::set<const HloInstruction *> &Reach, ReduceDeps &Deps) {
  const Shape &In = RN.Reduces.front()->operand(0)->shape();
  const Shape &OutS = rowValueShape(RN.Reduces.front());
  bool Broadcast = false;
  for (const HloInstruction *I : A.Computation->instructions()) {
    if (!Reach.count(I) || I->opcode() == HloOpcode::Reduce || Deps[I].empty())
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
           I->dimensions() == RN.KeptDims;
      Broadcast |= Ok;
    }
    if (!Ok)
      return "op '" + I->name() +
             "' reads a reduce but is neither elementwise on rows or row "
             "values nor a broadcast of row values along the row";
  }
  if (!Broadcast)
    return std::string("no reduce result is broadcast back along the row");
  for (const HloInstruction *R : A.Roots) {
    const Shape &S = R->shape();
    if (!S.isArray() || !(S.sameDims(In) || S.sameDims(OutS)))
      return "root '" + R->name() + "' has neither the row shape " + In.str() +
             " nor the row value shape " + OutS.str();
    RN.ElementRoot.push_back(S.sameDims(In));
  }
  return std::nullopt;
}

/// Checks that \p A is a row normalization and fills the structure fields
/// of \p RN (Reduces, Levels, KeptDims, ElementRoot, Rows, RowLength);
/// otherwise returns the reason. A row normalization: reduces of the minor
/// physical dims of the first reduce's input (classifyReduction: row form
/// with one batch), all of the same dims, where every instruction that
/// depends on a reduce is
///   - a reduce (its operands of the input's shape),
///   - get-tuple-element of a variadic reduce,
///   - elementwise of the input's shape (a row element) or of the reduce
///     output's shape (a row value),
///   - a broadcast of a row value along the reduced dims back to the
///     input's shape,
/// with at least one such broadcast (else it is a plain reduction with an
/// epilogue: the row reduction emitter's job), and every root of the
/// input's or the reduce output's shape. Whether the reducers can be
/// compiled is the emitter's question (it refuses those it cannot inline).
std::optional<std::string> analyzeStructure(const FusionAnalysis &A,
                                            RowNormalizationPlan &RN) {
  if (!A.Reduction || !A.Computation)
    return std::string("not a row reduction");
  std::set<const HloInstruction *> Reach = reachable(A);
  for (const HloInstruction *I : A.Computation->instructions())
    if (Reach.count(I) && I->opcode() == HloOpcode::Reduce)
      RN.Reduces.push_back(I);
  if (RN.Reduces.empty())
    return std::string("no reduce");
  if (auto Why = checkRows(RN))
    return Why;
  ReduceDeps Deps = reduceDeps(*A.Computation);
  if (auto Why = assignLevels(RN, Deps))
    return Why;
  return checkReaders(A, RN, Reach, Deps);
}

/// Elements per vector access: 16 bytes of the narrowest per-element
/// buffer, at most 32 bytes of the widest, dividing the row.
int64_t rowVector(const FusionAnalysis &A, const Shape &In, int64_t N) {
  int64_t MinBytes = 0, MaxBytes = 0;
  auto Note = [&](const Shape &S) {
    if (!S.isArray() || !S.sameDims(In))
      return;
    int64_t Bt = byteWidth(S.Type);
    MinBytes = MinBytes ? std::min(MinBytes, Bt) : Bt;
    MaxBytes = std::max(MaxBytes, Bt);
  };
  for (const HloInstruction *Pm : A.Computation->parameters())
    Note(Pm->shape());
  for (const HloInstruction *R : A.Roots)
    Note(R->shape());
  if (!MinBytes)
    MinBytes = MaxBytes = 4;
  int64_t Vec = std::max<int64_t>(1, 16 / MinBytes);
  while (Vec > 1 && (Vec * MaxBytes > 32 || N % Vec != 0))
    Vec /= 2;
  return Vec;
}

/// The maps from the input's logical index to every instruction read per
/// element, walking every per-element path from the reduces' operands and
/// the element roots (reduce results are per-row scalars: the walk stops
/// there). \p Bad holds the instructions also read through runtime offsets,
/// undefined maps or more than 4 maps.
std::map<const HloInstruction *, std::vector<IndexingMap>>
elementMaps(Context &Ctx, const FusionAnalysis &A,
            const RowNormalizationPlan &RN,
            std::set<const HloInstruction *> &Bad) {
  const Shape &In = RN.Reduces.front()->operand(0)->shape();
  // Reverse definition order: every user before its operands.
  std::map<const HloInstruction *, std::vector<IndexingMap>> Maps;
  IndexingMap Id = IndexingMap::identity(Ctx, In.Dims);
  for (const HloInstruction *R : RN.Reduces)
    for (int64_t K = 0; K < R->operandCount() / 2; ++K)
      Maps[R->operand(K)] = {Id};
  for (size_t R = 0; R < A.Roots.size(); ++R)
    if (RN.ElementRoot[R])
      Maps[A.Roots[R]] = {Id};
  const auto &Instrs = A.Computation->instructions();
  for (auto It = Instrs.rbegin(); It != Instrs.rend(); ++It) {
    const HloInstruction *I = *It;
    auto Found = Maps.find(I);
    if (Found == Maps.end() || isReduceResult(I) ||
        I->opcode() == HloOpcode::Parameter)
      continue;
    std::vector<IndexingMap> Mine = Found->second;
    bool MineBad = Bad.count(I) > 0;
    InstructionIndexing Ops = computeOutputToInputIndexing(Ctx, *I, 0);
    for (size_t K = 0; K < Ops.Operands.size(); ++K) {
      const HloInstruction *O = I->operand(K);
      std::vector<IndexingMap> &Into = Maps[O];
      if (MineBad)
        Bad.insert(O);
      for (const IndexingMap &Mp : Mine)
        for (const OperandMap &OM : Ops.Operands[K]) {
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
  return Maps;
}

/// The vector widths the maps prove for the thread map \p ThreadMap: a
/// parameter read through exactly one map (elementMaps), defined on the
/// whole input, gets the width analyzeAccess proves for the composition
/// (when it divides Vector); every element root the width proven for its
/// store.
void proveWidths(Context &Ctx, const FusionAnalysis &A,
                 const IndexingMap &ThreadMap, RowNormalizationPlan &RN) {
  const HloComputation &C = *A.Computation;
  const Shape &In = RN.Reduces.front()->operand(0)->shape();
  const int64_t Vec = RN.Vector;
  std::set<const HloInstruction *> Bad;
  std::map<const HloInstruction *, std::vector<IndexingMap>> Maps =
      elementMaps(Ctx, A, RN, Bad);
  RN.LoadWidth.assign(C.parameterCount(), 1);
  RN.LoadMap.assign(C.parameterCount(), IndexingMap::undefined());
  for (const HloInstruction *Pm : C.parameters()) {
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
      Whole =
          Mp.dims()[D].Bound.Lo == 0 && Mp.dims()[D].Bound.Hi == In.Dims[D] - 1;
    if (!Whole)
      continue;
    IndexingMap Comp = compose(ThreadMap, Mp);
    if (Comp.isUndefined())
      continue;
    simplify(Comp);
    AccessReport R = analyzeAccess(Comp, Pm->shape(), /*CountWarps=*/false);
    int64_t W = std::max<int64_t>(1, R.VectorWidth);
    if (W > 1 && Vec % W == 0) {
      RN.LoadWidth[size_t(Pm->parameterNumber())] = W;
      RN.LoadMap[size_t(Pm->parameterNumber())] = Mp;
    }
  }
  // Element roots: stored at the input's index.
  RN.StoreWidth.assign(A.Roots.size(), 1);
  for (size_t R = 0; R < A.Roots.size(); ++R) {
    if (!RN.ElementRoot[R] || Vec == 1)
      continue;
    AccessReport Rep = analyzeAccess(ThreadMap, A.Roots[R]->shape(), false);
    int64_t W = std::max<int64_t>(1, Rep.VectorWidth);
    RN.StoreWidth[R] = Vec % W == 0 ? W : 1;
  }
}

} // namespace

bool isRowNormalization(const FusionAnalysis &A) {
  RowNormalizationPlan RN;
  return !analyzeStructure(A, RN);
}

namespace plan {

namespace {

/// The sizes: Vector, LanesPerRow, ChunksPerThread, RowsPerBlock of \p RN,
/// the block's threads \p T and the \p Blocks; or why a row does not fit.
std::optional<std::string> planSizes(const PlanInputs &In, KernelPlan &P,
                                     RowNormalizationPlan &RN, int64_t &T,
                                     int64_t &Blocks) {
  const Shape &InS = RN.Reduces.front()->operand(0)->shape();
  const int64_t Rows = RN.Rows, N = RN.RowLength;
  const int64_t Vec = P.choose(
      "vector", rowVector(In.A, InS, N),
      "elements per access: 16 bytes of the narrowest per-element buffer, at "
      "most 32 bytes of the widest, dividing the row");
  const int64_t NVec = N / Vec;
  // Threads per row G (a power of two), chunks per thread J.
  // Rows of 2-byte (or narrower) elements: four 16-byte accesses per
  // thread, issued together; one (8 elements of bf16) leaves too few bytes
  // in flight and too many warps per row to combine. H200, 2026-12-01
  // (bench/suite, 8 / 16 / 32 elements): layer norm bf16[32768,4096]
  // 169.8 / 143.7 / 140.7 us, RMS norm bf16[2048,5120] 16.6 / 13.3 / 12.3,
  // softmax bf16[4096,1000] 7.06 / 5.80 / 5.46. Rows of 4-byte elements:
  // two accesses (8 elements); 16 measured the same (softmax
  // f32[4096,4096] 33.17-33.26 us against 33.14-33.22, layer norm
  // f32[4096,1023] 10.82 against 10.73) for 30 % more compile time.
  const bool Narrow = Vec >= 8;
  int64_t Target = choose(
      In, P, "IDXMAP_ROWNORM_ELEMENTS", "elements",
      Narrow ? std::min<int64_t>(64, 4 * Vec) : 8,
      Narrow ? "four 16-byte accesses per thread in flight (2-byte elements)"
             : "two 16-byte accesses per thread in flight (4-byte elements)");
  int64_t PerThread = std::max<int64_t>(1, Target / Vec);
  const int64_t MaxThreadsPerRow =
      floorPow2(std::min(In.Device.MaxThreadsPerBlock, In.Device.MaxBlock[0]));
  const int64_t G = P.choose(
      "lanes_per_row",
      std::min<int64_t>(MaxThreadsPerRow, nextPow2(ceilDiv(NVec, PerThread))),
      "threads per row: the power of two giving each about `elements` "
      "elements, at most a block of " +
          std::to_string(MaxThreadsPerRow));
  const int64_t J = P.choose("chunks_per_thread", ceilDiv(NVec, G),
                             "vectors per thread, each kept in registers");
  if (J * Vec > MaxElementsPerThread)
    return "a row of " + std::to_string(N) +
           " elements does not fit in one block (" + std::to_string(J * Vec) +
           " elements per thread at " + std::to_string(G) +
           " threads; at most " + std::to_string(MaxElementsPerThread) + ")";
  // Blocks of max(G, 64) threads (at most the device's), so that short
  // rows share a block (and a warp); halved while half the block still
  // covers every row. Two warps rather than eight, measured on the H100
  // (why smaller blocks win was not isolated; bench/runs/2026-12-06-session31,
  // 256 / 64 threads, us): layer norm bf16[8192,1024] 14.31 / 14.03,
  // f32[8192,512] 13.82 / 13.42, RMS norm bf16[1024,2048] 4.51 / 4.32,
  // and no shape of 16 (softmax, layer and RMS norm, 2- and 4-byte
  // elements, 256 to 16384 blocks) more than 0.5 % slower; one warp
  // gained more on some rows (layer norm bf16[8192,768] -5 %) and lost 10-14
  // % on others, whose grid then had 32 blocks of one warp per SM.
  const bool Tuned = isTuned(In.Overrides, "IDXMAP_ROWNORM_THREADS");
  T = std::max<int64_t>(
      G, std::min<int64_t>(tuned(In.Overrides, "IDXMAP_ROWNORM_THREADS", 64),
                           MaxThreadsPerRow));
  int64_t RPB = T / G;
  Blocks = ceilDiv(Rows, RPB);
  bool Shrunk = false;
  while (!Tuned && RPB > 1 && T > In.Device.WarpSize &&
         Blocks * RPB / 2 >= Rows) {
    T /= 2;
    RPB /= 2;
    Blocks = ceilDiv(Rows, RPB);
    Shrunk = true;
  }
  P.choose("threads", T,
           Tuned    ? "tuning override IDXMAP_ROWNORM_THREADS"
           : Shrunk ? "threads per block: halved from max(lanes_per_row, 64) "
                      "while the rows still fill half the block"
                    : "threads per block: max(lanes_per_row, 64), so that "
                      "short rows share a block");
  P.choose("rows_per_block", RPB, "threads / lanes_per_row");
  P.choose("blocks", Blocks, "one block per rows_per_block rows");
  RN.Vector = Vec;
  RN.LanesPerRow = G;
  RN.ChunksPerThread = J;
  RN.RowsPerBlock = RPB;
  return std::nullopt;
}

/// The thread map: (th_x, bl_x)[j, vec] -> input index of row
/// `bl * RPB + th / G`, element `(j * G + th mod G) * Vec + vec`, with the
/// chunks past the row and the rows past the end excluded.
IndexingMap rowThreadMap(Context &Ctx, const RowNormalizationPlan &RN,
                         int64_t T, int64_t Blocks) {
  const Shape &InS = RN.Reduces.front()->operand(0)->shape();
  const int64_t Rows = RN.Rows, N = RN.RowLength, Vec = RN.Vector;
  const int64_t NVec = N / Vec, G = RN.LanesPerRow, J = RN.ChunksPerThread;
  const int64_t RPB = RN.RowsPerBlock;
  Expr ThE = Ctx.dim(0), BlE = Ctx.dim(1);
  Expr RowE = BlE * RPB + ThE.floorDiv(G);
  Expr VE = Ctx.symbol(0) * G + ThE % G;
  std::vector<Constraint> Cs;
  if (J * G != NVec)
    Cs.push_back({VE, {0, NVec - 1}});
  if (Blocks * RPB != Rows)
    Cs.push_back({RowE, {0, Rows - 1}});
  IndexingMap TM(
      Ctx, {{"th_x", {0, T - 1}}, {"bl_x", {0, Blocks - 1}}},
      {{"j", {0, J - 1}}, {"vec", {0, Vec - 1}}}, {},
      delinearizePhysical(Ctx, (RowE * N + VE * Vec) + Ctx.symbol(1), InS), Cs);
  simplify(TM);
  return TM;
}

} // namespace

std::optional<std::string> planRowNormalization(const PlanInputs &In,
                                                KernelPlan &P) {
  const FusionAnalysis &A = In.A;
  RowNormalizationPlan RN;
  if (auto Why = analyzeStructure(A, RN))
    return Why;
  int64_t T = 1, Blocks = 1;
  if (auto Why = planSizes(In, P, RN, T, Blocks))
    return Why;
  RN.ExactDivide =
      choose(In, P, "IDXMAP_ROWNORM_EXACT_DIVIDE", "exact_divide", 0,
             "0: with fast math, an f32 division by a row value is a "
             "multiplication by its reciprocal (rcp.rn, once per row)") != 0;
  RN.BackEndOptLevel = unsigned(P.choose(
      "back_end_opt_level", 0,
      "the NVPTX back end's optimization level: softmax f32[4096,4096] on "
      "the H200 33.18-33.26 us at O0, 33.18-33.30 at O3"));

  IndexingMap TM = rowThreadMap(In.Ctx, RN, T, Blocks);
  proveWidths(In.Ctx, A, TM, RN);
  for (const HloInstruction *Pm : A.Computation->parameters())
    if (int64_t W = RN.LoadWidth[size_t(Pm->parameterNumber())]; W > 1)
      P.choose("load_vector " + Pm->name(), W,
               "elements per load, proven from the thread map composed with "
               "the parameter's map");
  for (size_t R = 0; R < A.Roots.size(); ++R)
    if (RN.StoreWidth[R] > 1)
      P.choose("store_vector " + A.Roots[R]->name(), RN.StoreWidth[R],
               "elements per store, proven from the thread map");

  int64_t Largest = RN.Reduces.front()->operand(0)->shape().numElements();
  for (const HloInstruction *Pm : A.Computation->parameters())
    Largest = std::max(Largest, Pm->shape().numElements());
  for (const HloInstruction *R : A.Roots)
    Largest = std::max(Largest, R->shape().numElements());
  chooseIndexWidth(P, Largest);

  P.Main.ThreadsPerBlock = T;
  P.Main.Blocks = Blocks;
  P.Main.Vector = RN.Vector;
  P.Main.Map = std::move(TM);
  P.Main.Target = RN.Reduces.front()->operand(0);
  P.Grid[0] = Blocks;
  P.Block[0] = T;
  P.RowNormalization = std::move(RN);
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
