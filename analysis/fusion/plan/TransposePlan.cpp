//===- TransposePlan.cpp - Shared-memory tiles of a transpose -------------===//
//
// Part of idxmap. The transpose emitter's plan: the tiling
// (transposeTiling: 32 x 32 V tiles, warps, vector widths) and which roots
// it writes through the tile; a fusion whose roots it cannot write goes to
// the loop emitter.
//
//===----------------------------------------------------------------------===//
#include "Plans.h"

#include "idxmap/Delinearize.h"
#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

#include <algorithm>
#include <functional>
#include <map>

namespace idxmap {
namespace plan {

/// True when every path from \p I to \p Hero reads the hero one-to-one in
/// logical row-major order (elementwise ops, copies, reshapes, bitcasts
/// between default layouts), so that the root element at linear offset L
/// needs exactly the transpose's element at L.
static bool readsHeroOneToOne(const HloInstruction *I,
                              const HloInstruction *Hero) {
  std::map<const HloInstruction *, bool> Reaches;
  std::function<bool(const HloInstruction *)> Reach =
      [&](const HloInstruction *X) {
        auto It = Reaches.find(X);
        if (It != Reaches.end())
          return It->second;
        bool R = X == Hero;
        for (const HloInstruction *O : X->operands())
          R = Reach(O) || R;
        return Reaches[X] = R;
      };
  std::function<bool(const HloInstruction *)> Valid =
      [&](const HloInstruction *X) {
        if (X == Hero)
          return true;
        for (const HloInstruction *O : X->operands()) {
          if (!Reach(O))
            continue;
          HloOpcode Op = X->opcode();
          bool Allowed =
              isElementwise(Op) || Op == HloOpcode::Copy ||
              Op == HloOpcode::Reshape ||
              (Op == HloOpcode::Bitcast && X->shape().hasDefaultLayout() &&
               O->shape().hasDefaultLayout());
          if (!Allowed || !X->shape().isArray() || !O->shape().isArray() ||
              X->shape().numElements() != Hero->shape().numElements() ||
              O->shape().numElements() != Hero->shape().numElements() ||
              !Valid(O))
            return false;
        }
        return true;
      };
  return Reach(I) && Valid(I);
}

/// A map `(th_x, bl_x)[it, j] -> Results` of tiling \p T's reading phase
/// (\p Write false) or writing phase, with constraints \p Cs; j is the
/// element of a vector group.
static IndexingMap tileMap(Context &Ctx, const TransposeTiling &T, bool Write,
                           std::vector<Expr> Results,
                           const std::vector<Constraint> &Cs) {
  IndexingMap Map(Ctx,
                  {{"th_x", {0, T.Threads - 1}}, {"bl_x", {0, T.Blocks - 1}}},
                  {{"it",
                    {0, (Write ? T.writeIterations() : T.readIterations()) -
                            1}},
                   {"j", {0, (Write ? T.writeGroup() : T.readGroup()) - 1}}},
                  {}, std::move(Results), Cs);
  simplify(Map);
  return Map;
}

/// The maps of every access of \p TP's tiling (TransposePlan's comment).
static void planTileMaps(Context &Ctx, const FusionAnalysis &A,
                         TransposePlan &TP) {
  const TransposeInfo &TI = *A.Transpose;
  const TransposeTiling &T = TP.Tiling;
  const HloInstruction *HeroOp = transposeHero(A)->operand(0);
  // Normalized input index read (lane = vector group along M, row along
  // the output-contiguous dims P) and written (lane along P, row = vector
  // group along M), with the ragged edges as constraints. D[M] is a
  // multiple of V, so a vector group is entirely in or out.
  const int64_t R = int64_t(TI.Dims.size());
  Expr LinIn = Ctx.constant(0), LinOut = Ctx.constant(0);
  for (int64_t D = 0; D < R; ++D)
    LinIn = LinIn * TI.Dims[D] + T.ReadIdx[D];
  for (int64_t O = 0; O < R; ++O)
    LinOut =
        LinOut * TI.Dims[TI.Permutation[O]] + T.WriteIdx[TI.Permutation[O]];
  TP.ReadPred = tileMap(Ctx, T, false, T.ReadIdx, T.ReadCs);
  TP.WritePred = tileMap(Ctx, T, true, T.WriteIdx, T.WriteCs);
  TP.ReadOp = tileMap(Ctx, T, false,
                      delinearize(Ctx, LinIn, HeroOp->shape().Dims), T.ReadCs);
  for (size_t K : TP.ReadRoots)
    TP.ReadRootMaps.push_back(
        tileMap(Ctx, T, false,
                delinearize(Ctx, LinIn, A.Roots[K]->shape().Dims), T.ReadCs));
  for (size_t K : TP.WriteRoots)
    TP.WriteRootMaps.push_back(
        tileMap(Ctx, T, true,
                delinearize(Ctx, LinOut, A.Roots[K]->shape().Dims), T.WriteCs));
  TP.OutLin = tileMap(Ctx, T, true, {LinOut}, T.WriteCs);
  TP.InLin = tileMap(Ctx, T, false, {LinIn}, T.ReadCs);
}

/// Records the index width of \p TP's kernel: the arrays, the threads, and
/// every subexpression of the maps the kernel evaluates per thread.
static void chooseTileIndexWidth(const FusionAnalysis &A,
                                 const TransposePlan &TP, KernelPlan &P) {
  const TransposeTiling &T = TP.Tiling;
  int64_t Largest =
      std::max(transposeHero(A)->operand(0)->shape().numElements(),
               T.Blocks * T.Threads);
  for (const HloInstruction *Param : A.Computation->parameters())
    Largest = std::max(Largest, Param->shape().numElements());
  for (const HloInstruction *Root : A.Roots)
    Largest = std::max(Largest, Root->shape().numElements());
  bool MapsFit = true;
  for (const IndexingMap *Mp :
       {&TP.ReadPred, &TP.WritePred, &TP.ReadOp, &TP.OutLin, &TP.InLin}) {
    RangeEvaluator RE(*Mp);
    MapsFit = MapsFit && mapFitsInI32(*Mp, RE);
  }
  chooseIndexWidth(P, Largest, MapsFit);
}

namespace {

/// True when every parameter that \p Op reads is read at Op's own index:
/// the path is elementwise ops over arrays of Op's dims (scalar constants
/// allowed), and Op and the parameters have the default layout. Collects
/// those parameters.
bool identityPrologue(const HloInstruction *Op,
                      std::vector<const HloInstruction *> &Params) {
  if (!Op->shape().isArray() || !Op->shape().hasDefaultLayout())
    return false;
  const std::vector<int64_t> &Dims = Op->shape().Dims;
  std::function<bool(const HloInstruction *)> Walk =
      [&](const HloInstruction *X) {
        if (X->opcode() == HloOpcode::Constant && X->shape().rank() == 0)
          return true;
        if (!X->shape().isArray() || X->shape().Dims != Dims ||
            !X->shape().hasDefaultLayout())
          return false;
        if (X->opcode() == HloOpcode::Parameter) {
          if (std::find(Params.begin(), Params.end(), X) == Params.end())
            Params.push_back(X);
          return true;
        }
        if (!isElementwise(X->opcode()))
          return false;
        for (const HloInstruction *O : X->operands())
          if (!Walk(O))
            return false;
        return true;
      };
  return Walk(Op);
}

/// True when the epilogue \p Root needs the index of its element: it reads
/// more than \p Hero through elementwise ops, copies and scalar constants.
bool readsBeyondHero(const HloInstruction *Root, const HloInstruction *Hero) {
  std::function<bool(const HloInstruction *)> Needs =
      [&](const HloInstruction *X) {
        if (X == Hero ||
            (X->opcode() == HloOpcode::Constant && X->shape().rank() == 0))
          return false;
        if (!isElementwise(X->opcode()) && X->opcode() != HloOpcode::Copy)
          return true;
        for (const HloInstruction *O : X->operands())
          if (Needs(O))
            return true;
        return false;
      };
  return Needs(Root);
}

} // namespace

std::optional<std::string> planTranspose(const PlanInputs &In, KernelPlan &P) {
  const FusionAnalysis &A = In.A;
  const HloInstruction *Hero = transposeHero(A);
  const int64_t NIn = Hero->operand(0)->shape().numElements();
  // Which roots are written where; anything else goes to the loop emitter.
  TransposePlan TP;
  std::string Why;
  for (size_t R = 0; R < A.Roots.size() && Why.empty(); ++R) {
    const HloInstruction *Root = A.Roots[R];
    if (!Root->shape().isArray())
      Why = "output '" + Root->name() + "' is not an array";
    else if (A.Heroes[R] == Hero && readsHeroOneToOne(Root, Hero))
      TP.WriteRoots.push_back(R);
    else if (A.Heroes[R] == Hero)
      Why = "output '" + Root->name() +
            "' does not read the transpose "
            "one-to-one";
    else if (Root->shape().numElements() == NIn)
      TP.ReadRoots.push_back(R);
    else
      Why = "output '" + Root->name() +
            "' has neither the transpose's "
            "elements nor its operand's";
  }
  if (Why.empty() && TP.WriteRoots.empty())
    Why = "no output is written through the transpose";
  if (!Why.empty()) {
    FusionAnalysis L = asLoopFusion(A);
    P.Kind = EmitterKind::Loop;
    P.Emitter = "loop";
    P.choose("tiles", 0, "the loop emitter instead: " + Why);
    auto Why = planLoop(PlanInputs{In.Ctx, L, In.Overrides, In.Device}, P);
    // O3 as for the tiles: the loop's index arithmetic then folds the
    // constant offsets of a thread's elements into its addresses.
    P.BackEndOptLevel = 3;
    return Why;
  }
  // Warps per block (tile rows per iteration) and the vector widths of 32
  // x 32 tiles: transposeTiling's choices unless overridden (the choices
  // below then name the override).
  TransposeRequest Want;
  Want.Warps = tuned(In.Overrides, "IDXMAP_TR_WARPS", 0);
  Want.ReadVec = tuned(In.Overrides, "IDXMAP_TR_RVEC", 0);
  Want.WriteVec = tuned(In.Overrides, "IDXMAP_TR_WVEC", 0);
  Want.SubP = tuned(In.Overrides, "IDXMAP_TR_SUBP", 0);
  Want.SubM = tuned(In.Overrides, "IDXMAP_TR_SUBM", 0);
  if (Want.Warps > 0)
    Want.Warps = floorPow2(Want.Warps);
  TP.Tiling = transposeTiling(In.Ctx, A, Want, In.Device);
  const TransposeTiling &T = TP.Tiling;
  if (T.Blocks > In.Device.MaxGrid[0])
    return std::to_string(T.Blocks) +
           " tiles need more blocks than grid.x allows (" +
           std::to_string(In.Device.MaxGrid[0]) + " on " + In.Device.Name + ")";
  P.choose("group", T.V,
           "elements of the minor dim per lane: 2 when it is even and tiles "
           "of 32 x 64 still give 8 blocks per SM");
  auto Reason = [&](const char *Knob, std::string Rule) {
    return isTuned(In.Overrides, Knob) && tuned(In.Overrides, Knob, 0) > 0
               ? std::string("tuning override ") + Knob
               : Rule;
  };
  P.choose(
      "warps", T.Warps,
      Reason("IDXMAP_TR_WARPS",
             "warps per block (tile rows per iteration), " + T.WarpsReason));
  P.choose("read_vec", T.ReadVec,
           Reason("IDXMAP_TR_RVEC", "elements per read of a 32 x 32 tile"));
  P.choose("write_vec", T.WriteVec,
           Reason("IDXMAP_TR_WVEC", "elements per write of a 32 x 32 tile"));
  if (T.subTiles() > 1) {
    P.choose(
        "sub_p", T.SubP,
        Reason("IDXMAP_TR_SUBP",
               "tiles per block along P: 4 for 32 x 32 tiles of "
               "2- or 4-byte elements when P fills them but for at most 5 % "
               "and blocks of one would fill 2 to 8 waves, else 1"));
    P.choose("sub_m", T.SubM,
             Reason("IDXMAP_TR_SUBM",
                    "tiles per block along M: 2 when a tile row spans "
                    "less than 128 bytes of the input"));
  }
  P.choose("blocks", T.Blocks,
           T.subTiles() > 1 ? "one block per sub_p x sub_m tiles"
                            : "one block per tile");
  P.Main = transposeReadMapping(In.Ctx, A, T);
  planTileMaps(In.Ctx, A, TP);
  // Loads of the prologue's parameters at the hero operand's own linear
  // offset when each is read there: element j of a group sits at offset
  // LinIn + j, aligned to the group because D[M] % group == 0. A group of
  // one is a scalar load at LinIn, which spares the kernel delinearizing
  // the normalized index into the operand's dims and linearizing it again
  // (bf16[97,130,1031] {2,0,1}: 25 divisions by constants in the read
  // phase, an issue-bound kernel).
  const HloInstruction *HeroOp = Hero->operand(0);
  TP.LinearLoads = identityPrologue(HeroOp, TP.LinearParams);
  for (size_t K : TP.ReadRoots)
    TP.LinearLoads = TP.LinearLoads &&
                     A.Roots[K]->shape().Dims == HeroOp->shape().Dims &&
                     identityPrologue(A.Roots[K], TP.LinearParams);
  for (size_t K : TP.WriteRoots)
    TP.WriteNeedsIndex.push_back(!A.Roots[K]->shape().hasDefaultLayout() ||
                                 readsBeyondHero(A.Roots[K], Hero));
  chooseTileIndexWidth(A, TP, P);
  // H200, 2026-11-30: exp_transpose_abs 2.08 us at back-end O0, 1.86 at
  // O3 (loop strength reduction of the tile loops).
  P.BackEndOptLevel = 3;
  P.Grid[0] = T.Blocks;
  P.Block[0] = T.Threads;
  // Every sub-tile's 32 rows of 32 V elements.
  P.SharedBytes = T.subTiles() * 32 * 32 * T.V *
                  byteWidth(transposeHero(A)->shape().Type);
  P.Transpose = std::move(TP);
  return std::nullopt;
}

} // namespace plan
} // namespace idxmap
