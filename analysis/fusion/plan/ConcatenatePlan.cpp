//===- ConcatenatePlan.cpp - Each operand's elements read once -----------===//
//
// Part of idxmap. The concatenate emitter's plan (XLA's kConcatenate): the
// threads walk the largest operand's index space; each thread computes,
// for every operand that covers its index, that operand's elements and
// stores them (through the epilogue) at their place in the output. A loop
// over the output would instead pick the operand per element (a branch or a
// select chain per element) and read every operand at misaligned places;
// it is the better walk only where no operand's run can be stored as a
// vector anyway (overOutputInstead).
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/Compose.h"
#include "idxmap/CostModel.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Simplify.h"

#include <algorithm>
#include <functional>
#include <set>

namespace idxmap {
namespace plan {
namespace {

/// The parameters the epilogue reads besides the concatenation: reached
/// from \p Root without passing \p X.
std::set<const HloInstruction *> epilogueParams(const HloInstruction *Root,
                                                const HloInstruction *X) {
  std::vector<const HloInstruction *> Params =
      operandClosure({Root}, {X}, /*ParametersOnly=*/true);
  return {Params.begin(), Params.end()};
}

/// Bytes below which a fusion's launch and block start-up outweigh how its
/// elements are spread over threads (see overOutputInstead).
constexpr int64_t SmallFusionBytes = int64_t(1) << 20;

/// Replaces the concatenate plan \p P by the loop emitter's walk over the
/// output when that is expected to be faster or asked for. The concatenate
/// plan's edge is a vector store of each operand's run; when the maps prove
/// none (every operand's rows or edges misaligned in the output), each of
/// its threads stores element by element, and the threads over the largest
/// operand carry the smaller operands' runs unevenly. Over the output every
/// thread has the same work and stores the output's proven vectors.
/// Measured on the H100 (idxmap run --bench, 100 launches, median us; the
/// concatenate plan first): bf16[32768, 127 | 129] 21.25 -> 13.41,
/// bf16[8192, 255 | 65] 8.19 -> 5.44, f16[4096, 1001 | 999] 20.64 -> 12.99,
/// f16[8192, 33 | 31 | 63] 3.49 -> 3.01, f32[16384, 513 | 511] 49.2 ->
/// 45.8, f32[2048, 64 | 64 | 1] 2.40 -> 2.21, f32[262144, 3 | 5] 7.87 ->
/// 7.22, s8[65536, 77 | 33 | 1] 25.0 -> 9.0, f32[4096, 128 | 256 | 33]
/// 7.07 -> 6.37 (H200: 5.05 -> 4.27; torch.compile 4.87); level on
/// f32[8192, 100 | 27] 4.38 -> 4.48. Below SmallFusionBytes the
/// concatenate plan's fewer blocks win: s8[1000, 77 | 33 | 1] 1.30 -> 1.73.
std::optional<std::string> overOutputInstead(const PlanInputs &In,
                                             KernelPlan &P) {
  bool AnyVector = false;
  for (const PiecewisePlan::Piece &Pc : P.Pieces->Pieces)
    AnyVector = AnyVector || Pc.StoreWidth > 1;
  const int64_t Bytes = uniqueBytes(In.A);
  const bool Auto = !AnyVector && Bytes >= SmallFusionBytes;
  if (!tuned(In.Overrides, "IDXMAP_PIECE_OVER_OUTPUT", Auto ? 1 : 0))
    return std::nullopt;
  const bool Forced = isTuned(In.Overrides, "IDXMAP_PIECE_OVER_OUTPUT");
  KernelPlan L;
  std::string Why =
      Forced ? ": tuning override IDXMAP_PIECE_OVER_OUTPUT"
             : " over the output: the concatenate plan proves no vector store "
               "(each operand's runs misaligned in the output) and the fusion "
               "moves " +
                   std::to_string(Bytes) + " bytes (at least " +
                   std::to_string(SmallFusionBytes) + ")";
  // Refused over the output (its budget of inline reduce steps), the
  // concatenate plan stays unless the knob asked for the walk.
  if (std::optional<std::string> Still = planLoopInstead(In, L, Why)) {
    if (Forced)
      return "the loop emitter over the output" + *Still;
    return std::nullopt;
  }
  P = std::move(L);
  return std::nullopt;
}

} // namespace

std::optional<std::string> planConcatenate(const PlanInputs &In,
                                           KernelPlan &P) {
  const FusionAnalysis &A = In.A;
  const HloComputation &C = *A.Computation;
  const HloInstruction *X = A.Heroes.front();
  const HloInstruction *Root = A.Roots.front();
  PiecewisePlan PP;
  PP.Concat = X;
  const int64_t Dim = X->dimensions().front();
  const HloInstruction *Largest = X->operand(0);
  for (const HloInstruction *Op : X->operands())
    if (Op->shape().numElements() > Largest->shape().numElements())
      Largest = Op;
  const Shape &L = Largest->shape();
  const int64_t Minor = L.rank() ? L.layoutOrDefault().front() : 0;

  // Runs of Vector consecutive elements (in the largest operand's physical
  // order) whose lanes all lie in one operand: within one slice of the
  // concatenated dim (Vector divides the elements more minor than it), or,
  // when that dim is the major-most, within one operand's block of the
  // order (Vector divides each operand's elements). Otherwise, along the
  // concatenated dim as the minor one, runs within a row that may straddle
  // an operand's edge (its lanes then checked one by one).
  const std::vector<int64_t> Layout = L.layoutOrDefault();
  const int64_t Pos = L.rank() ? int64_t(std::find(Layout.begin(), Layout.end(),
                                                   Dim) -
                                         Layout.begin())
                               : 0;
  int64_t Inner = 1;
  for (int64_t Q = 0; Q < Pos; ++Q)
    Inner *= L.Dims[size_t(Layout[size_t(Q)])];
  const int64_t Bytes = std::max<int64_t>(byteWidth(Root->shape().Type),
                                          widestParameterBytes(C));
  const int64_t MaxV = std::max<int64_t>(1, 16 / Bytes);
  auto Widest = [&](const std::function<bool(int64_t)> &Fits) {
    int64_t W = MaxV;
    while (W > 1 && !Fits(W))
      W /= 2;
    return W;
  };
  int64_t V = 1;
  bool Straddle = false;
  if (Pos == L.rank() - 1 || L.rank() == 0) {
    V = Widest([&](int64_t W) {
      for (const HloInstruction *Op : X->operands())
        if (Op->shape().numElements() % W != 0)
          return false;
      return true;
    });
  } else if (Pos > 0) {
    V = Widest([&](int64_t W) { return Inner % W == 0; });
  }
  if (Pos == 0 && L.rank() > 0) {
    const int64_t Row = L.Dims[size_t(Minor)];
    int64_t S = Widest([&](int64_t W) { return Row % W == 0; });
    if (S > V) {
      V = S;
      Straddle = true;
    }
  }

  // A piece per operand: where its elements go, whether a run lies wholly
  // inside or outside it.
  int64_t Straddling = 0;
  for (int64_t K = 0; K < X->operandCount(); ++K) {
    PiecewisePlan::Piece Pc;
    Pc.Source = X->operand(K);
    Pc.OutputMap =
        computeInputToOutputIndexing(In.Ctx, *X, K).Operands.at(0).at(0).Map;
    int64_t Ext = Pc.Source->shape().Dims[size_t(Dim)];
    Pc.WholeRuns = !Straddle || Ext % V == 0;
    Straddling += !Pc.WholeRuns && Ext > 0;
    PP.Pieces.push_back(std::move(Pc));
  }
  P.Main = pieceThreadMapping(In, L, V, concatUnroll(In, Straddling > 0));
  P.Main.Target = Largest;
  // By operand: blocks that each walk one operand's own space, in runs as
  // wide as its chunks in the output allow (along the major-most dim the
  // operand is one chunk; along another, a chunk per slice of the dims
  // more major, of its extent times the elements more minor). The default
  // along the major-most dim, where each block then streams one region of
  // one input into one of the output. Measured on the H200 (CUPTI, 16
  // interleaved groups, inputs from DRAM): three bf16[4096,2048] along dim
  // 0 25.86 -> 24.90 us, two f16[8192,2048] 33.34 -> 32.75, two
  // bf16[4096,2048] and f32 rows in L2 level; along the minor dim mixed
  // (qkv 12.69 -> 12.34, DenseNet channels 19.43 -> 19.86, odd f16 widths
  // in narrower runs 6.03 -> 7.10), so there only by the knob.
  const bool Major = L.rank() > 0 && Pos == L.rank() - 1;
  if (L.rank() > 0 &&
      tuned(In.Overrides, "IDXMAP_PIECE_BY_OPERAND", Major ? 1 : 0)) {
    PP.Blocked = true;
    // A chunk of an operand is its extent along Dim times Inner elements,
    // at Along * Inner in the output's chunk; along the major-most dim the
    // operand is one chunk, so the output's chunk stride does not matter.
    const int64_t Stride = X->shape().Dims[size_t(Dim)] * Inner;
    const int64_t Unroll = concatUnroll(In, /*Straddles=*/false);
    int64_t Along = 0, First = 0;
    for (PiecewisePlan::Piece &Pc : PP.Pieces) {
      const Shape &S = Pc.Source->shape();
      const int64_t N = S.numElements();
      const int64_t Chunk = S.Dims[size_t(Dim)] * Inner;
      const int64_t W = Widest([&](int64_t W) {
        return Chunk % W == 0 && (Along * Inner) % W == 0 &&
               (Major || Stride % W == 0);
      });
      Pc.Main = pieceThreadMapping(In, S, W, Unroll);
      Pc.Main.Target = Pc.Source;
      Pc.WholeRuns = true; // its own space: a run never leaves it
      if (N == 0)
        Pc.Main.Blocks = 0;
      Pc.FirstBlock = First;
      First += Pc.Main.Blocks;
      Along += S.Dims[size_t(Dim)];
    }
    Straddling = 0;
    // The launch's blocks are as wide as the widest walk (a small operand
    // of narrow runs may need more threads than the largest one of wide
    // runs); the narrower walks leave their extra threads idle.
    const PiecewisePlan::Piece *Wide = nullptr;
    for (const PiecewisePlan::Piece &Pc : PP.Pieces)
      if (!Wide || Pc.Main.ThreadsPerBlock > Wide->Main.ThreadsPerBlock ||
          (Pc.Main.ThreadsPerBlock == Wide->Main.ThreadsPerBlock &&
           Pc.Source == Largest))
        Wide = &Pc;
    P.Main = Wide->Main;
  }
  if (PP.Blocked)
    P.choose("vector", P.Main.Vector,
             "elements per thread of '" + P.Main.Target->name() +
                 "' (the widest blocks); each operand's blocks walk it "
                 "alone, in the widest runs of at most 16 bytes dividing its "
                 "chunks of the output and their offsets");
  else
    P.choose("vector", V,
             "elements of '" + Largest->name() +
                 "' (the largest operand) per thread: the widest run of at "
                 "most 16 bytes of the widest element " +
                 (Straddle ? "dividing its rows"
                           : "whose lanes all lie in one operand"));
  if (Straddling)
    P.choose("straddling", Straddling,
             "operands whose edge along the concatenated dim cuts a run: "
             "their lanes are checked and stored one by one");
  // Operands' loads with an L2 evict_last policy, as torch.compile's
  // concatenates have, where the fusion moves at most 1.2 x L2 (its output
  // then fits in 0.6 x L2) but does not stay in L2. Measured on the H100
  // beside the peers (CUPTI, 10 shuffled interleaved groups, the default
  // timed twice within 1.1 %), evict_last / plain: 18.8 to 56 MiB moved
  // 0.3 % slower to 6.5 % faster (f32[4096, 4 x 256] 9.62 / 10.25 us,
  // bf16[8192, 1024 | 512 | 256] 18.63 / 19.45), 64 MiB and more 0.7-2.4 %
  // slower (f32[8192, 2 x 1024] 45.47 / 44.42). The threshold lies between
  // 56 and 64 MiB on the H100's 50 MiB; other L2 sizes are not measured.
  const bool InL2 = staysInL2(In.A, In.Device);
  const bool Fits = evictLastFits(In.A, In.Device);
  PP.EvictLast =
      choose(In, P, "IDXMAP_PIECE_EVICT_LAST", "evict_last", Fits ? 1 : 0,
             InL2    ? "the data stays in L2: plain loads"
             : !Fits ? "more than 1.2 x L2 moved: plain loads (evict_last "
                       "measured 0.7-2.4 % slower there)"
                     : "operands loaded with an L2 evict_last policy "
                       "(up to 6.5 % faster where at most 1.2 x L2 is "
                       "moved, measured)") != 0;
  finishPiecewise(In, P, std::move(PP), epilogueParams(Root, X),
                  "elements of the largest operand");
  return overOutputInstead(In, P);
}

} // namespace plan
} // namespace idxmap
