//===- LoopPlan.cpp - One thread per contiguous run of outputs ------------===//
//
// Part of idxmap. The loop emitter's plan: each thread computes Vector
// consecutive output elements (the widest run of at most 16 bytes of the
// widest element that divides the output), 128 threads per block, and a
// grid-stride loop when the blocks exceed grid.x.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/Compose.h"
#include "idxmap/CostModel.h"
#include "idxmap/HloIndexing.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>

namespace idxmap {

FusionAnalysis asLoopFusion(const FusionAnalysis &A) {
  FusionAnalysis L = A;
  L.Kind = EmitterKind::Loop;
  L.Transpose.reset();
  L.Heroes = A.Roots;
  return L;
}

FusionAnalysis plannedAnalysis(const FusionAnalysis &A, const KernelPlan &P) {
  return P.Kind == EmitterKind::Loop && A.Kind != EmitterKind::Loop
             ? asLoopFusion(A)
             : A;
}

namespace plan {
namespace {

/// Maps from every output to every instruction (all roots together).
GroupedIndexing rootIndexing(const PlanInputs &In) {
  const HloComputation &C = *In.A.Computation;
  GroupedIndexing G;
  for (size_t R = 0; R < In.A.Roots.size(); ++R)
    for (auto &[I, Maps] : computeGroupedIndexing(In.Ctx, C, nullptr, R))
      for (OperandMap &OM : Maps)
        if (std::find(G[I].begin(), G[I].end(), OM) == G[I].end())
          G[I].push_back(std::move(OM));
  return G;
}

/// Per parameter: the vector width analyzeCoalescing proves under \p Main,
/// when every output reaches the parameter through one map (the one the
/// proof is about); 1 otherwise.
std::vector<int64_t> loadWidths(const PlanInputs &In, const ThreadMapping &Main,
                                const GroupedIndexing &G) {
  const HloComputation &C = *In.A.Computation;
  std::vector<int64_t> Widths(C.parameters().size(), 1);
  std::vector<AccessReport> Reports =
      analyzeCoalescing(In.Ctx, In.A, Main, /*CountWarps=*/false, In.Device);
  for (size_t K = 0; K < C.parameters().size(); ++K) {
    auto It = G.find(C.parameters()[K]);
    bool OneMap = It != G.end() && It->second.size() == 1;
    if (OneMap && K < Reports.size() && Reports[K].VectorWidth > 1)
      Widths[K] = Reports[K].VectorWidth;
  }
  return Widths;
}

/// Every instruction \p Op is computed from, when all of them can be
/// computed at any index, in bounds or not, once their parameter reads are
/// guarded (parameters, scalar constants, iotas, elementwise ops and plain
/// reads; an array constant would be read at the index); nullopt for
/// anything that branches, loops or reads at a computed index, or past
/// \p Limit instructions.
std::optional<std::set<const HloInstruction *>>
speculableClosure(const HloInstruction *Op, size_t Limit) {
  std::set<const HloInstruction *> Seen;
  std::vector<const HloInstruction *> Work = {Op};
  while (!Work.empty()) {
    const HloInstruction *X = Work.back();
    Work.pop_back();
    if (!Seen.insert(X).second)
      continue;
    if (Seen.size() > Limit)
      return std::nullopt;
    switch (X->opcode()) {
    case HloOpcode::Constant:
      if (X->shape().numElements() > 1)
        return std::nullopt;
      continue;
    case HloOpcode::Parameter:
    case HloOpcode::Iota:
      continue;
    case HloOpcode::Broadcast:
    case HloOpcode::Reshape:
    case HloOpcode::Bitcast:
    case HloOpcode::Transpose:
    case HloOpcode::Slice:
    case HloOpcode::Reverse:
    case HloOpcode::Copy:
      break;
    default:
      if (!isElementwise(X->opcode()))
        return std::nullopt;
    }
    for (const HloInstruction *O : X->operands())
      Work.push_back(O);
  }
  return Seen;
}

/// Whether some parameter among \p Instrs is loaded in vectors.
bool anyVectorLoad(const std::set<const HloInstruction *> &Instrs,
                   const std::vector<int64_t> &Widths) {
  return std::any_of(Instrs.begin(), Instrs.end(),
                     [&](const HloInstruction *I) {
                       return I->opcode() == HloOpcode::Parameter &&
                              Widths[size_t(I->parameterNumber())] > 1;
                     });
}

/// The pads whose operands the loop emitter may read speculatively (see
/// LoopPlan::SpeculatedPads): each reached through one map without
/// runtime or range variables, its bounds test the same for every lane of
/// a run, its operand cheap, and some parameter under it loaded in vectors
/// (a branch per lane would load each vector once per lane).
std::vector<const HloInstruction *>
speculatedPads(const PlanInputs &In, const ThreadMapping &Main,
               const GroupedIndexing &G, const std::vector<int64_t> &Widths) {
  std::vector<const HloInstruction *> Pads;
  if (Main.Vector < 2)
    return Pads;
  for (const HloInstruction *I : In.A.Computation->instructions()) {
    if (I->opcode() != HloOpcode::Pad)
      continue;
    auto It = G.find(I);
    if (It == G.end() || It->second.size() != 1)
      continue;
    const IndexingMap &ToPad = It->second.front().Map;
    if (ToPad.isUndefined() || ToPad.numSymbols() != 0)
      continue;
    auto Closure = speculableClosure(I->operand(0), 64);
    if (!Closure || !anyVectorLoad(*Closure, Widths))
      continue;
    const InstructionIndexing Pad = computeOutputToInputIndexing(In.Ctx, *I);
    const IndexingMap &ToOperand = Pad.Operands[0].front().Map;
    if (ToOperand.isUndefined() || ToOperand.numSymbols() != 0)
      continue;
    if (laneUniformTest(Main.Map, compose(compose(Main.Map, ToPad), ToOperand)))
      Pads.push_back(I);
  }
  return Pads;
}

/// The concatenates the loop emitter computes without a branch (see
/// LoopPlan::SpeculatedConcats): each operand speculable (speculableClosure,
/// no vector loads) and the operands computed from shared values. An
/// instruction that every operand reaches at the same index, not depending
/// on the concatenated dim, is computed once for all of them (its index,
/// and so its IR, is the same); so the work of computing every operand,
/// counted per instruction and distinct index, is at most 5/4 of what the
/// branches cost an element on average (each operand's own work, weighted
/// by its extent). Measured
/// on the H100 (idxmap run --bench, median of 100 launches, branches ->
/// speculated): the golden input concat-speculated's four words of one hash
/// 1.41 -> 1.12 us and its chain beside a plain read 1.44 -> 1.15, JAX's
/// threefry words (misc_random loop_slice_fusion) 1.73 -> 1.18; a chain of
/// 8 transcendental ops beside a plain read in 3 : 1 columns, 4/3 of the
/// branches' average and so not chosen, 1.70 -> 1.98.
std::vector<const HloInstruction *>
speculatedConcats(const PlanInputs &In, const std::vector<int64_t> &Widths) {
  constexpr size_t Limit = 4096;
  const HloComputation &C = *In.A.Computation;
  std::vector<const HloInstruction *> Out;
  for (const HloInstruction *X : C.instructions()) {
    if (X->opcode() != HloOpcode::Concatenate || X->operandCount() < 2)
      continue;
    const int64_t D = X->dimensions().front();
    // Per instruction, the distinct indices it is read at: its result
    // expressions (interned by the context: equal iff the same storage),
    // and the operand's number where they use the concatenated dim (the
    // same expressions then name different indices), else -1.
    using IndexKey = std::pair<std::vector<const void *>, int64_t>;
    std::map<const HloInstruction *, std::set<IndexKey>> Reached;
    // The operands' own work weighted by their extents along D: what the
    // branches cost per element on average.
    double OwnSum = 0, Extents = 0;
    bool Ok = true;
    for (int64_t K = 0; K < X->operandCount() && Ok; ++K) {
      const HloInstruction *Op = X->operand(K);
      if (Op->shape().Dims[size_t(D)] == 0)
        continue;
      // Parameters read element by element: a vector is shared by a run's
      // lanes, whose guards may differ.
      auto Closure = speculableClosure(Op, Limit);
      if (!Closure || anyVectorLoad(*Closure, Widths)) {
        Ok = false;
        break;
      }
      const GroupedIndexing G = computeGroupedIndexing(In.Ctx, C, Op, 0);
      size_t Own = 0;
      for (const HloInstruction *I : *Closure) {
        auto It = G.find(I);
        if (It == G.end()) {
          Ok = false;
          break;
        }
        for (const OperandMap &OM : It->second) {
          if (OM.Map.isUndefined() || !OM.Bindings.empty() ||
              OM.Map.numSymbols() != 0) {
            Ok = false;
            break;
          }
          IndexKey Key{{}, -1};
          for (const Expr &E : OM.Map.results()) {
            Key.first.push_back(E.storage());
            if (E.usesDim(unsigned(D)))
              Key.second = K;
          }
          Reached[I].insert(std::move(Key));
          ++Own;
        }
      }
      const double Ext = double(Op->shape().Dims[size_t(D)]);
      OwnSum += Ext * double(Own);
      Extents += Ext;
    }
    size_t Work = 0;
    for (const auto &[I, Keys] : Reached)
      Work += Keys.size();
    if (Ok && Extents > 0 && double(Work) * 4 * Extents <= OwnSum * 5)
      Out.push_back(X);
  }
  return Out;
}

} // namespace

/// The reduce steps one output element of \p I takes when the loop
/// emitter computes every reduce inline: a reduce's reduced elements times
/// the steps of each of its input elements, along the costliest path
/// (saturating at INT64_MAX).
static int64_t
inlineReduceSteps(const HloInstruction *I,
                  std::map<const HloInstruction *, int64_t> &Memo) {
  auto It = Memo.find(I);
  if (It != Memo.end())
    return It->second;
  int64_t Steps = 1;
  for (const HloInstruction *O : I->operands())
    Steps = std::max(Steps, inlineReduceSteps(O, Memo));
  if (I->opcode() == HloOpcode::Reduce ||
      I->opcode() == HloOpcode::ReduceWindow) {
    int64_t Extent = 1;
    if (I->opcode() == HloOpcode::Reduce)
      for (int64_t D : I->dimensions())
        Extent *= I->operand(0)->shape().Dims[size_t(D)];
    else
      for (const WindowDim &W : I->window())
        Extent *= W.Size;
    Steps = Extent > 0 && Steps > INT64_MAX / Extent
                ? INT64_MAX
                : Steps * std::max<int64_t>(Extent, 1);
  }
  Memo[I] = Steps;
  return Steps;
}

/// Over the budget of reduce steps the loop emitter computes inline (65536
/// per output element, 2^32 in all): why; nothing within it. \p Steps gets
/// the steps per element.
static std::optional<std::string>
overInlineReduceBudget(const FusionAnalysis &A, int64_t &Steps) {
  constexpr int64_t Budget = 65536;
  std::map<const HloInstruction *, int64_t> Memo;
  Steps = 1;
  int64_t Outputs = 0;
  for (const HloInstruction *R : A.Roots) {
    Steps = std::max(Steps, inlineReduceSteps(R, Memo));
    Outputs = std::max(Outputs, R->shape().numElements());
  }
  if (Steps > Budget)
    return "the loop emitter would take " +
           (Steps == INT64_MAX ? std::string("more than 2^63")
                               : std::to_string(Steps)) +
           " reduce steps per output element, more than its budget of " +
           std::to_string(Budget);
  // Tens of milliseconds at worst.
  if (Steps > 1 && Outputs > (int64_t(1) << 32) / Steps)
    return "the loop emitter would take " + std::to_string(Steps) +
           " reduce steps for each of " + std::to_string(Outputs) +
           " output elements, more than its budget of 2^32 in all";
  return std::nullopt;
}

std::optional<std::string> planLoopInstead(const PlanInputs &In, KernelPlan &P,
                                           const std::string &Why) {
  for (const HloInstruction *R : In.A.Roots)
    if (!R->shape().isArray())
      return std::string();
  FusionAnalysis L = asLoopFusion(In.A);
  P.Kind = EmitterKind::Loop;
  P.Emitter = "loop";
  P.choose("instead", 0, "the loop emitter" + Why);
  // planLoop's one refusal is its budget of inline reduce steps.
  if (auto Refused =
          planLoop(PlanInputs{In.Ctx, L, In.Overrides, In.Device}, P))
    return " (" + *Refused + ")";
  return std::nullopt;
}

int64_t chooseLoopUnroll(const PlanInputs &In, KernelPlan &P, int64_t Runs,
                         int64_t RunBytes, bool Saturated,
                         const std::string &Unsaturated, int64_t MinBytes) {
  const int64_t Target = MinBytes ? MinBytes : Saturated ? 16 : 32;
  const int64_t T = P.Main.ThreadsPerBlock;
  int64_t Auto = 1;
  while (Auto < 8 && Auto * RunBytes < Target)
    Auto *= 2;
  while (Auto > 1 && ceilDiv(Runs, T * Auto) < In.Device.SmCount)
    Auto /= 2;
  return choose(
      In, P, "IDXMAP_LOOP_UNROLL", "unroll", Auto,
      std::to_string(Auto * RunBytes) +
          " bytes of parameters in flight per thread (at least " +
          std::to_string(Target) +
          (Saturated ? ": 16-byte vectors from DRAM" : "") +
          (Saturated || Unsaturated.empty() ? "" : ": " + Unsaturated) +
          (Auto * RunBytes < Target ? "; fewer blocks than SMs for more" : "") +
          ")");
}

/// The loop plan's runs per thread over \p Largest's uniform walk
/// (P.Main), recorded as the choice "unroll".
void unrollLoop(const PlanInputs &In, KernelPlan &P,
                const HloInstruction *Largest) {
  const FusionAnalysis &A = In.A;
  // A thread with few bytes of loads in flight leaves them too few to
  // cover the memory's latency (Little's law: 2048 threads x 4 bytes per
  // SM is a quarter of what the H200 needs from DRAM); unroll until the
  // vectors of every parameter a thread reads make 32 bytes, or 16 when
  // they are full 16-byte vectors from DRAM (already at its bandwidth),
  // keeping a block per SM. Measured on the H200 (2026-12-02, CUPTI, 6
  // interleaved groups), two runs of a 16-byte vector per thread against
  // one: in L2, f32[1048576] copied 2.46 -> 2.16 us, f32[1000,1000]
  // padded 2.51 -> 2.23 (Adam's four f32 parameters, 64 bytes, lose:
  // 2.11 -> 2.45); from DRAM, gelu bf16[64,512,4096] 125.8 -> 127.3,
  // reverse f32[4096,4097] 32.3 -> 33.1; one element per vector from
  // DRAM, f32[257,511,63] {1,0,2}: 20.89 us with 4 runs, 19.08 with 8.
  // A broadcast operand (fewer than 1/64 of the output's elements) is
  // read again by many threads and hits the caches: its loads do not
  // count (bias+GELU bf16[2048,1000] with a bias of 1000: 2.71 -> 2.57
  // us with two runs).
  const int64_t Streamed =
      std::max<int64_t>(2, Largest->shape().numElements() / 64);
  int64_t RunBytes = 0;
  for (const HloInstruction *Pm : A.Computation->parameters())
    if (Pm->shape().isArray() && Pm->shape().numElements() >= Streamed)
      RunBytes += P.Main.Vector * byteWidth(Pm->shape().Type);
  const int64_t Widest =
      std::max<int64_t>(byteWidth(Largest->shape().Type),
                        widestParameterBytes(*A.Computation, Streamed));
  RunBytes = std::max(RunBytes, P.Main.Vector * Widest);
  // A gather reads each run at an index it loads first: two round trips
  // a run, not a stream, so its 16-byte vectors from DRAM still leave the
  // latency uncovered. Where the rows it moves (as many bytes as it
  // writes) fit in L2 with its output, the written lines need not reach
  // DRAM during the kernel and twice as many runs in flight pay, as for
  // the concatenates (concatUnroll). Measured on the H200 (2026-12-04,
  // CUPTI, 10 interleaved groups), one / two / four runs per thread: rows
  // of f32[50257,768] at 4096 indices (24 MiB moved) 5.09 / 4.82 / 4.61
  // us (torch.compile 4.61), of bf16[32768,4096] at 16384 indices (256
  // MiB) 65.66 / 65.00 / 67.58 (torch.compile 65.53); on the H100
  // (2026-12-06, two runs of 3 and 8 groups), the f32 rows 7.2-7.6 %
  // faster with four runs than with two, the bf16 ones 0.5-0.8 % slower.
  const bool Gathers = std::any_of(
      A.Computation->instructions().begin(),
      A.Computation->instructions().end(),
      [](const HloInstruction *I) { return I->opcode() == HloOpcode::Gather; });
  const bool InL2 = staysInL2(A, In.Device);
  const bool Saturated = P.Main.Vector * Widest >= 16 && !Gathers && !InL2;
  const int64_t Runs = ceilDiv(Largest->shape().numElements(), P.Main.Vector);
  const int64_t T = P.Main.ThreadsPerBlock;
  const bool GatherFits =
      Gathers && !InL2 && 2 * outputBytes(A) <= In.Device.L2Bytes;
  int64_t U = chooseLoopUnroll(
      In, P, Runs, RunBytes, Saturated,
      GatherFits ? "gathered rows wait on their indices; the rows moved fit "
                   "in L2"
      : Gathers  ? "gathered rows wait on their indices"
                 : "",
      GatherFits ? 64 : 0);
  if (U > 1) {
    const HloInstruction *Target = P.Main.Target;
    P.Main = loopThreadMapping(In.Ctx, Target->shape(), P.Main.Vector, T, U);
    P.Main.Target = Target;
  }
}

std::optional<std::string> planLoop(const PlanInputs &In, KernelPlan &P) {
  const FusionAnalysis &A = In.A;
  // A root that is not an array is the emitter's error, at that root.
  for (const HloInstruction *R : A.Roots)
    if (!R->shape().isArray())
      return std::nullopt;
  int64_t Steps = 1;
  if (auto Over = overInlineReduceBudget(A, Steps))
    return *Over;
  if (Steps > 1)
    P.choose("reduce_steps", Steps,
             "reduce steps per output element, each reduce and reduce-window "
             "inline in its element's thread (budget 65536, 2^32 in all)");
  // Outputs of one shape and layout share one thread mapping and vector
  // width; otherwise each output is walked by the thread ids on its own
  // (scalar accesses), over a grid sized by the largest output.
  bool Uniform = true;
  const HloInstruction *Largest = A.Roots.front();
  for (const HloInstruction *R : A.Roots) {
    Uniform &= R->shape().sameDims(A.Roots.front()->shape()) &&
               R->shape().layoutOrDefault() ==
                   A.Roots.front()->shape().layoutOrDefault();
    if (R->shape().numElements() > Largest->shape().numElements())
      Largest = R;
  }
  P.Main = Uniform ? heroThreadMapping(In.Ctx, A, In.Device)
                   : loopThreadMapping(In.Ctx, Largest->shape(), 1);
  if (!Uniform)
    P.Main.Target = Largest;
  P.choose("vector", P.Main.Vector,
           Uniform ? "output elements per thread: the widest run of at most "
                     "16 bytes of the widest element dividing the output "
                     "into at least 32 runs"
                   : "outputs of different shapes or layouts: each walked "
                     "element by element");
  if (Uniform)
    unrollLoop(In, P, Largest);
  const ThreadMapping &TM = P.Main;
  P.choose("threads", TM.ThreadsPerBlock, "threads per block");
  // More blocks than grid.x allows: each block walks blocks bl, bl + Grid,
  // ... of the mapping (a grid-stride loop).
  GridStride GS = gridStride(TM.Blocks, In.Device.MaxGrid[0]);
  P.choose(
      "blocks", GS.Grid,
      GS.Iterations > 1
          ? "grid.x limit: " + std::to_string(GS.Iterations) +
                " blocks of the mapping per block (grid stride)"
          : "one block per " +
                std::to_string(TM.ThreadsPerBlock * TM.Vector * TM.Unroll) +
                " outputs");
  // The emitter addresses the largest output and every parameter.
  int64_t MaxElements = TM.Target->shape().numElements();
  for (const HloInstruction *Param : A.Computation->parameters())
    MaxElements = std::max(MaxElements, Param->shape().numElements());
  chooseIndexWidth(P, MaxElements);
  P.Loop = LoopPlan{Uniform,
                    std::vector<int64_t>(A.Computation->parameterCount(), 1),
                    {},
                    {}};
  if (Uniform) {
    const GroupedIndexing G = rootIndexing(In);
    P.Loop->LoadWidth = loadWidths(In, P.Main, G);
    P.Loop->SpeculatedPads = speculatedPads(In, P.Main, G, P.Loop->LoadWidth);
    if (!P.Loop->SpeculatedPads.empty())
      P.choose("speculated_pads", int64_t(P.Loop->SpeculatedPads.size()),
               "pads whose bounds test is the same for every lane of a run: "
               "their operands are read at a clamped address and selected, "
               "one vector load per run");
    P.Loop->SpeculatedConcats = speculatedConcats(In, P.Loop->LoadWidth);
    if (!P.Loop->SpeculatedConcats.empty())
      P.choose("speculated_concats", int64_t(P.Loop->SpeculatedConcats.size()),
               "concatenates whose operands are computed from shared values "
               "(all of them at most 5/4 of the branches' average work): every "
               "operand computed, its reads guarded by their own bounds, and "
               "one selected, without a branch per element");
  }
  // H200, 2026-11-30: gelu 13.18-13.22 us at back-end O0 and O3.
  P.BackEndOptLevel = 0;
  P.Grid[0] = GS.Grid;
  P.Block[0] = TM.ThreadsPerBlock;
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
