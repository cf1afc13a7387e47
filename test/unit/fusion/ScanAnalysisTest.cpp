//===- ScanAnalysisTest.cpp - Prefix scans recognized in fusions ----------===//
//
// Part of idxmap. Both forms JAX writes (the scan op of jnp.cumsum, the
// prefix reduce-window of lax.cummax), forward and reversed, along the
// minor and a major dim, under a non-default layout; what is not a scan
// and why; the scan hero with its prologue and epilogue; what the fusion
// support and the planner say of a scan fusion until its kernel exists.
//
//===----------------------------------------------------------------------===//
#include "idxmap/DeviceModel.h"
#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/KernelPlan.h"
#include "idxmap/Print.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace idxmap;

namespace {

const char *Computations = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
add_bf16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
add_f16 {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT s = f16[] add(a, b)
}
add_s8 {
  a = s8[] parameter(0)
  b = s8[] parameter(1)
  ROOT s = s8[] add(a, b)
}
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
add_s64 {
  a = s64[] parameter(0)
  b = s64[] parameter(1)
  ROOT s = s64[] add(a, b)
}
add_f64 {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
round_f16 {
  a = f32[] parameter(0)
  h = f16[] convert(a)
  ROOT r = f32[] convert(h)
}
sub {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}
cumsum {
  x = f32[128] parameter(0)
  c = f32[128] parameter(1)
  s = f32[128] add(x, c)
  ROOT t = (f32[128], f32[128]) tuple(s, s)
}
cumprod {
  x = f32[1000] parameter(0)
  c = f32[1000] parameter(1)
  s = f32[1000] multiply(c, x)
  ROOT t = (f32[1000], f32[1000]) tuple(s, s)
}
nonassoc {
  x = f32[128] parameter(0)
  c = f32[128] parameter(1)
  s = f32[128] subtract(x, c)
  ROOT t = (f32[128], f32[128]) tuple(s, s)
}
)";

std::unique_ptr<HloModule> parse(const std::string &Entry) {
  auto M = parseHloModule(
      std::string(Computations) + "ENTRY e {\n" + Entry + "\n}\n", "scan.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str());
  return M ? std::move(*M) : nullptr;
}

const HloInstruction &named(const HloModule &M, const char *Name) {
  return *M.entry()->findInstruction(Name);
}

TEST(ClassifyScan, ScanOpAlongRows) {
  auto M = parse(R"(x = f32[128,1000] parameter(0)
    c = f32[] constant(0)
    z = f32[128] broadcast(c), dimensions={}
    s = (f32[128,1000], f32[128]) scan(x, z), dimensions={1}, num_carries=1,
      is_associative=true, to_apply=cumsum
    ROOT o = f32[128,1000] get-tuple-element(s), index=0)");
  ASSERT_TRUE(M);
  std::string Why;
  auto S = classifyScan(named(*M, "s"), &Why);
  ASSERT_TRUE(S) << Why;
  EXPECT_EQ(S->Dim, 1);
  EXPECT_EQ(S->Length, 1000);
  EXPECT_FALSE(S->Reverse);
  EXPECT_EQ(S->Combiner, HloOpcode::Add);
  EXPECT_EQ(S->Init, &named(*M, "z"));
  EXPECT_EQ(S->Dims, (std::array<int64_t, 3>{128, 1000, 1}));
  EXPECT_TRUE(S->isRow());
  EXPECT_EQ(S->str(), "add along dim 1 of f32[128,1000]: [128, 1000, 1]");
}

TEST(ClassifyScan, ReversedScanOpAlongAMajorDimWithSwappedOperands) {
  auto M2 = parse(R"(x = f32[128,1000] parameter(0)
    z = f32[1000] parameter(1)
    ROOT s = (f32[128,1000], f32[1000]) scan(x, z), dimensions={0},
      num_carries=1, is_reverse=true, to_apply=cumprod)");
  ASSERT_TRUE(M2);
  auto S = classifyScan(named(*M2, "s"));
  ASSERT_TRUE(S);
  EXPECT_TRUE(S->Reverse);
  EXPECT_EQ(S->Combiner, HloOpcode::Multiply);
  EXPECT_EQ(S->Dims, (std::array<int64_t, 3>{1, 128, 1000}));
  EXPECT_FALSE(S->isRow());
}

TEST(ClassifyScan, PrefixReduceWindowsForwardAndReversed) {
  auto M = parse(R"(x = f32[16384,4096] parameter(0)
    c = f32[] constant(-inf)
    f = f32[16384,4096] reduce-window(x, c), window={size=1x4096
      pad=0_0x4095_0}, to_apply=max
    r = f32[16384,4096] reduce-window(x, c), window={size=16384x1
      pad=0_16383x0_0}, to_apply=max
    ROOT t = (f32[16384,4096], f32[16384,4096]) tuple(f, r))");
  ASSERT_TRUE(M);
  auto F = classifyScan(named(*M, "f"));
  ASSERT_TRUE(F);
  EXPECT_EQ(F->Dim, 1);
  EXPECT_FALSE(F->Reverse);
  EXPECT_EQ(F->Combiner, HloOpcode::Maximum);
  EXPECT_EQ(F->Dims, (std::array<int64_t, 3>{16384, 4096, 1}));
  std::string Why;
  auto R = classifyScan(named(*M, "r"), &Why);
  ASSERT_TRUE(R) << Why;
  EXPECT_EQ(R->Dim, 0);
  EXPECT_TRUE(R->Reverse);
  EXPECT_EQ(R->Dims, (std::array<int64_t, 3>{1, 16384, 4096}));
}

TEST(ClassifyScan, LayoutDecidesWhatIsMinor) {
  // Dim 0 is minor in {0,1}: a scan along it is a row scan.
  auto M = parse(R"(x = f32[4096,64]{0,1} parameter(0)
    c = f32[] constant(0)
    ROOT f = f32[4096,64]{0,1} reduce-window(x, c), window={size=4096x1
      pad=4095_0x0_0}, to_apply=add)");
  ASSERT_TRUE(M);
  auto S = classifyScan(named(*M, "f"));
  ASSERT_TRUE(S);
  EXPECT_EQ(S->Dims, (std::array<int64_t, 3>{64, 4096, 1}));
  EXPECT_TRUE(S->isRow());
}

TEST(ClassifyScan, WhatIsNotAScan) {
  auto M = parse(R"(x = f32[8,128] parameter(0)
    c = f32[] constant(0)
    z = f32[128] broadcast(c), dimensions={}
    z8 = f32[8] broadcast(c), dimensions={}
    w = f32[8,128] reduce-window(x, c), window={size=1x3 pad=0_0x2_0},
      to_apply=add
    s = f32[8,128] reduce-window(x, c), window={size=1x128 stride=1x1
      pad=0_0x127_0}, to_apply=sub
    two = f32[8,128] reduce-window(x, c), window={size=8x128
      pad=7_0x127_0}, to_apply=add
    n = (f32[8,128], f32[128]) scan(x, z), dimensions={0}, num_carries=1,
      to_apply=nonassoc
    ROOT t = (f32[8,128], f32[8,128], f32[8,128], (f32[8,128], f32[128]))
      tuple(w, s, two, n))");
  ASSERT_TRUE(M);
  struct Case {
    const char *Name, *Why;
  } Cases[] = {
      {"w", "the window of 'w' is not the prefix of dim 1"},
      {"s", "the computation of 's' is not add, maximum, minimum or "
            "multiply of its parameters"},
      {"two", "the window of 'two' spans two dims"},
      {"n", "the body of scan 'n' is not one add, maximum, minimum or "
            "multiply"},
      {"x", "not a scan"},
  };
  for (const Case &C : Cases) {
    std::string Why;
    EXPECT_FALSE(classifyScan(named(*M, C.Name), &Why)) << C.Name;
    EXPECT_NE(Why.find(C.Why), std::string::npos) << C.Name << ": " << Why;
  }
}

/// A fusion computation \p Body (its ROOT last) and the analysis of it.
std::unique_ptr<HloModule> fused(const std::string &Body,
                                 const std::string &Params,
                                 const std::string &Type,
                                 const std::string &Operands) {
  std::string Text = std::string(Computations) + "fused {\n" + Body +
                     "\n}\n\nENTRY e {\n" + Params + "\n  ROOT f = " + Type +
                     " fusion(" + Operands + "), kind=kLoop, calls=fused\n}\n";
  auto M = parseHloModule(Text, "fusion.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str()) << Text;
  return M ? std::move(*M) : nullptr;
}

/// A fusion of one f32 cumsum (a prefix reduce-window) of shape \p Dims
/// along dim \p Dim.
std::unique_ptr<HloModule> cumsum(const std::vector<int64_t> &Dims,
                                  size_t Dim) {
  std::string Shape, Size, Pad;
  for (size_t D = 0; D < Dims.size(); ++D) {
    const std::string Sep = D ? "," : "", X = D ? "x" : "";
    Shape += Sep + std::to_string(Dims[D]);
    Size += X + std::to_string(D == Dim ? Dims[D] : 1);
    Pad += X + (D == Dim ? std::to_string(Dims[D] - 1) + "_0" : "0_0");
  }
  Shape = "f32[" + Shape + "]";
  return fused("p0 = " + Shape + " parameter(0)\n  c = f32[] constant(0)\n" +
                   "  ROOT s = " + Shape +
                   " reduce-window(p0, c), window={size=" + Size +
                   " pad=" + Pad + "}, to_apply=add",
               "  a0 = " + Shape + " parameter(0)", Shape, "a0");
}

/// The plan of fusion instruction \p F on the H200 with knobs \p T.
Expected<KernelPlan> planOf(Context &Ctx, const HloInstruction &F,
                            const Tuning &T = {}) {
  return planFusion(Ctx, analyzeFusion(F), T, *lookupDeviceModel("H200"), &F);
}

TEST(ScanFusion, HeroWithPrologueAndEpilogue) {
  auto M = fused(R"(p0 = f32[128,1000] parameter(0)
    p1 = f32[128,1000] parameter(1)
    e = f32[128,1000] exponential(p0)
    c = f32[] constant(0)
    z = f32[128] broadcast(c), dimensions={}
    s = (f32[128,1000], f32[128]) scan(e, z), dimensions={1}, num_carries=1,
      is_associative=true, to_apply=cumsum
    g = f32[128,1000] get-tuple-element(s), index=0
    ROOT r = f32[128,1000] multiply(g, p1))",
                 "  a0 = f32[128,1000] parameter(0)\n"
                 "  a1 = f32[128,1000] parameter(1)",
                 "f32[128,1000]", "a0, a1");
  ASSERT_TRUE(M);
  const HloInstruction &F = *M->entry()->root();
  FusionAnalysis A = analyzeFusion(F);
  EXPECT_EQ(A.Kind, EmitterKind::Scan) << A.Reason;
  EXPECT_EQ(emitterKindName(A.Kind), "scan");
  ASSERT_TRUE(A.Scan);
  EXPECT_EQ(A.Heroes.front()->name(), "s");
  EXPECT_EQ(A.Reason, "scan 's' is a prefix scan: add along dim 1 of "
                      "f32[128,1000]: [128, 1000, 1] (the minor dim: a row "
                      "scan)");
  EXPECT_FALSE(findUnmodeledInstruction(*F.fusedComputation()));
  // A tile per row: 64 threads x 4 runs of 4 elements cover the 1000,
  // run `run` of lane th_x mod 32 of warp th_x floordiv 32 at element
  // run * 128 + (th_x mod 32) * 4 + warp * 512; the tile's elements past
  // the row are constrained away.
  Context Ctx;
  Expected<KernelPlan> P = planOf(Ctx, F);
  ASSERT_TRUE(P) << P.error().Message;
  EXPECT_EQ(P->Emitter, "scan");
  ASSERT_TRUE(P->Scan);
  EXPECT_EQ(P->Scan->Mode, ScanMode::BlockTiles);
  EXPECT_EQ(P->Scan->Lines, 128);
  EXPECT_EQ(P->Scan->Length, 1000);
  EXPECT_FALSE(P->Scan->Reverse);
  EXPECT_EQ(P->Scan->TilesPerLine, 1);
  EXPECT_EQ(P->Scan->workspaceBytes(), 0);
  EXPECT_EQ(P->Block[0], 64);
  EXPECT_EQ(P->Grid[0], 128);
  EXPECT_EQ(P->Main.Target->name(), "e");
  EXPECT_EQ(printMap(P->Main.Map),
            "(th_x, tile)[run, vec] -> (tile, run * 128 + vec + (th_x mod 32) "
            "* 4 + (th_x floordiv 32) * 512), domain: th_x in [0, 63], tile "
            "in [0, 127], run in [0, 3], vec in [0, 3], run * 32 + th_x mod "
            "32 + (th_x floordiv 32) * 128 in [0, 249]");
  // The tile offset, the thread's part and the item's: their sum is the
  // position above.
  EXPECT_EQ(printMap(P->Scan->TileOffset),
            "(th_x)[run, vec] -> ((th_x floordiv 32) * 512 + (th_x mod 32) * "
            "4, run * 128 + vec), domain: th_x in [0, 63], run in [0, 3], vec "
            "in [0, 3]");
  for (int64_t Th = 0; Th < 64; Th += 7)
    for (int64_t Run = 0; Run < 4; ++Run)
      for (int64_t Vec = 0; Vec < 4; ++Vec) {
        auto Thread = P->Scan->TileOffset.results()[0].evaluate({Th}, {0, 0});
        auto Item = P->Scan->TileOffset.results()[1].evaluate({0}, {Run, Vec});
        auto Pos = P->Main.Map.results()[1].evaluate({Th, 5}, {Run, Vec});
        ASSERT_TRUE(Thread && Item && Pos);
        EXPECT_EQ(*Thread + *Item, *Pos) << Th << " " << Run << " " << Vec;
      }
}

TEST(ScanFusion, ColumnTilesAndRowTilesChainedByLookBack) {
  // Along dim 0 of [4096, 300]: 300 lines in groups of 128 columns (32
  // lanes x vectors of 4; the third group partial), 8 row groups of 16
  // positions: tiles of 128 positions, 32 per line, numbered
  // segment-major.
  auto M = cumsum({4096, 300}, 0);
  ASSERT_TRUE(M);
  const HloInstruction &F = *M->entry()->root();
  FusionAnalysis A = analyzeFusion(F);
  ASSERT_EQ(A.Kind, EmitterKind::Scan) << A.Reason;
  Context Ctx;
  Expected<KernelPlan> P = planOf(Ctx, F);
  ASSERT_TRUE(P) << P.error().Message;
  EXPECT_EQ(P->Scan->Mode, ScanMode::ColumnTiles);
  EXPECT_EQ(P->Scan->Lines, 300);
  EXPECT_EQ(P->Scan->LinesPerTile, 128);
  EXPECT_EQ(P->Scan->Groups, 3);
  EXPECT_EQ(P->Scan->TileLength, 128);
  EXPECT_EQ(P->Scan->TilesPerLine, 32);
  EXPECT_EQ(P->Scan->descriptors(), 3 * 32 * 128);
  EXPECT_EQ(P->Scan->workspaceBytes(), 16 + 8 * 3 * 32 * 128);
  EXPECT_EQ(P->Grid[0], 96);
  EXPECT_EQ(printMap(P->Main.Map),
            "(th_x, tile)[run, vec] -> (run + (th_x floordiv 32) * 16 + (tile "
            "floordiv 3) * 128, vec + (th_x mod 32) * 4 + (tile mod 3) * 128), "
            "domain: th_x in [0, 255], tile in [0, 95], run in [0, 15], vec in "
            "[0, 3], th_x mod 32 + (tile mod 3) * 32 in [0, 74]");
  // A row of 32768: 4 tiles of 256 threads x 32 elements (a line of
  // several tiles takes large ones, but 2 tiles of 64 would fill under
  // half the SMs), chained by look-back (the counters, then a 64-bit
  // descriptor per tile).
  auto Long = cumsum({32768}, 0);
  ASSERT_TRUE(Long);
  const HloInstruction &LF = *Long->entry()->root();
  Expected<KernelPlan> LP = planOf(Ctx, LF);
  ASSERT_TRUE(LP) << LP.error().Message;
  EXPECT_EQ(LP->Scan->Mode, ScanMode::BlockTiles);
  EXPECT_EQ(LP->Scan->TileLength, 8192);
  EXPECT_EQ(LP->Scan->TilesPerLine, 4);
  EXPECT_EQ(LP->Scan->Vector, 4);
  EXPECT_EQ(LP->Scan->Runs, 8);
  EXPECT_EQ(LP->Scan->workspaceBytes(), 16 + 8 * 4);
  EXPECT_EQ(LP->Grid[0], 4);
  // Tiles of 32 threads x one vector of 4 (tuning overrides; a thread
  // holds at least a vector): 256 tiles.
  Tuning Small;
  Small.ScanThreads = 32;
  Small.ScanItems = 1;
  Expected<KernelPlan> SP = planOf(Ctx, LF, Small);
  ASSERT_TRUE(SP) << SP.error().Message;
  EXPECT_EQ(SP->Scan->TileLength, 128);
  EXPECT_EQ(SP->Scan->TilesPerLine, 256);
  // A column of 16411 of 4 lines: a thread per row group of 16 positions
  // of all 4 columns, 33 tiles of 512, 4 descriptors each; an f64 column
  // keeps split descriptors.
  auto Col = cumsum({16411, 4}, 0);
  ASSERT_TRUE(Col);
  const HloInstruction &CF = *Col->entry()->root();
  Expected<KernelPlan> CP = planOf(Ctx, CF);
  ASSERT_TRUE(CP) << CP.error().Message;
  EXPECT_EQ(CP->Scan->Mode, ScanMode::ColumnTiles);
  EXPECT_EQ(CP->Scan->LinesPerTile, 4);
  EXPECT_EQ(CP->Scan->Vector, 4);
  EXPECT_EQ(CP->Block[0], 32);
  EXPECT_EQ(CP->Scan->TileLength, 512);
  EXPECT_EQ(CP->Scan->TilesPerLine, 33);
  EXPECT_TRUE(CP->Scan->PackedDescriptors);
  EXPECT_EQ(CP->Scan->workspaceBytes(), 16 + 8 * 33 * 4);
}

TEST(ScanFusion, RaggedRowsReadElementsInSmallerTilesShiftedToTheEnd) {
  // Rows of 50257: a row's start is not aligned to a vector of 4, so the
  // chained tiles access elements one by one and take 128 threads x 32
  // items (tiles of 4096, 13 a row); the last tile of a row is read as
  // the tile ending at the row's end, 13 x 4096 - 50257 = 2991 positions
  // before its place.
  auto M = cumsum({8, 50257}, 1);
  ASSERT_TRUE(M);
  const HloInstruction &F = *M->entry()->root();
  Context Ctx;
  Expected<KernelPlan> P = planOf(Ctx, F);
  ASSERT_TRUE(P) << P.error().Message;
  ASSERT_TRUE(P->Scan);
  EXPECT_EQ(P->Scan->Mode, ScanMode::BlockTiles);
  EXPECT_EQ(P->Block[0], 128);
  EXPECT_EQ(P->Scan->Vector * P->Scan->Runs, 32);
  EXPECT_EQ(P->Scan->TileLength, 4096);
  EXPECT_EQ(P->Scan->TilesPerLine, 13);
  EXPECT_EQ(P->Scan->LastTileShift, 2991);
  EXPECT_EQ(P->Grid[0], 8 * 13);
  ASSERT_TRUE(P->Loop);
  EXPECT_EQ(P->Loop->LoadWidth[0], 1);
  // 64 rows of 50256 (a multiple of the vector) keep the wide tiles (256
  // of them) and their vectors; the shift, 4 x 16384 - 50256 = 15280, is
  // whole vectors.
  auto V = cumsum({64, 50256}, 1);
  ASSERT_TRUE(V);
  Expected<KernelPlan> VP = planOf(Ctx, *V->entry()->root());
  ASSERT_TRUE(VP) << VP.error().Message;
  EXPECT_EQ(VP->Block[0], 256);
  EXPECT_EQ(VP->Scan->TileLength, 16384);
  EXPECT_EQ(VP->Scan->LastTileShift, 15280);
  EXPECT_EQ(VP->Loop->LoadWidth[0], 4);
  // The knobs decide over the rule.
  Tuning Wide;
  Wide.ScanThreads = 256;
  Wide.ScanItems = 64;
  Expected<KernelPlan> WP = planOf(Ctx, F, Wide);
  ASSERT_TRUE(WP) << WP.error().Message;
  EXPECT_EQ(WP->Block[0], 256);
  EXPECT_EQ(WP->Scan->TileLength, 16384);
  EXPECT_EQ(WP->Scan->LastTileShift, 4 * 16384 - 50257);
  // A row of one partial tile is guarded in place, not shifted.
  auto One = cumsum({8, 1001}, 1);
  ASSERT_TRUE(One);
  Expected<KernelPlan> OP = planOf(Ctx, *One->entry()->root());
  ASSERT_TRUE(OP) << OP.error().Message;
  EXPECT_EQ(OP->Scan->TilesPerLine, 1);
  EXPECT_EQ(OP->Scan->LastTileShift, 0);
}

TEST(ScanFusion, ManyWavesOfTilesGoThroughSharedMemory) {
  // 2^26 f32: 4096 tiles of 16384, at least 4 waves of the 3 x 132 blocks
  // an H200 holds with 64 KiB of shared memory each; 2^23: 512 tiles, in
  // registers; a ragged line never; 2-byte items only when asked (checked
  // on a GPU for 4-byte items); the knob overrides the rule.
  auto Cumsum = [](int64_t N, const std::string &Ty = "f32") {
    const std::string T = Ty + "[" + std::to_string(N) + "]";
    return fused("p0 = " + T + R"( parameter(0)
    c = )" + Ty + R"([] constant(0)
    ROOT s = )" + T + " reduce-window(p0, c), window={size=" +
                     std::to_string(N) + " pad=" + std::to_string(N - 1) +
                     "_0}, to_apply=" + (Ty == "f32" ? "add" : "add_" + Ty),
                 "  a0 = " + T + " parameter(0)", T, "a0");
  };
  Context Ctx;
  auto Many = Cumsum(int64_t(1) << 26), Few = Cumsum(int64_t(1) << 23),
       Ragged = Cumsum((int64_t(1) << 26) + 1);
  ASSERT_TRUE(Many && Few && Ragged);
  Expected<KernelPlan> P = planOf(Ctx, *Many->entry()->root());
  ASSERT_TRUE(P) << P.error().Message;
  EXPECT_EQ(P->Scan->TilesPerLine, 4096);
  EXPECT_EQ(P->Scan->StageBytes, 256 * 64 * 4);
  EXPECT_EQ(P->Scan->MinBlocks, 3);
  Tuning Off;
  Off.ScanSharedTile = 0;
  Expected<KernelPlan> POff = planOf(Ctx, *Many->entry()->root(), Off);
  ASSERT_TRUE(POff) << POff.error().Message;
  EXPECT_FALSE(POff->Scan->sharedTile());
  Expected<KernelPlan> PFew = planOf(Ctx, *Few->entry()->root());
  ASSERT_TRUE(PFew) << PFew.error().Message;
  EXPECT_EQ(PFew->Scan->TilesPerLine, 512);
  EXPECT_FALSE(PFew->Scan->sharedTile());
  Tuning On;
  On.ScanSharedTile = 1;
  Expected<KernelPlan> POn = planOf(Ctx, *Few->entry()->root(), On);
  ASSERT_TRUE(POn) << POn.error().Message;
  EXPECT_TRUE(POn->Scan->sharedTile());
  Expected<KernelPlan> PRag = planOf(Ctx, *Ragged->entry()->root(), On);
  ASSERT_TRUE(PRag) << PRag.error().Message;
  EXPECT_TRUE(PRag->Scan->raggedLines());
  EXPECT_FALSE(PRag->Scan->sharedTile());
  auto Half = Cumsum(int64_t(1) << 28, "bf16");
  ASSERT_TRUE(Half);
  Expected<KernelPlan> PHalf = planOf(Ctx, *Half->entry()->root());
  ASSERT_TRUE(PHalf) << PHalf.error().Message;
  EXPECT_FALSE(PHalf->Scan->sharedTile());
  Expected<KernelPlan> PHalfOn = planOf(Ctx, *Half->entry()->root(), On);
  ASSERT_TRUE(PHalfOn) << PHalfOn.error().Message;
  EXPECT_EQ(PHalfOn->Scan->StageBytes, 256 * 64 * 2);
  EXPECT_EQ(PHalfOn->Scan->MinBlocks, 4);
}

TEST(ScanFusion, InstCombineOnlyWhereATypeIsNarrow) {
  // Every type 4 or 8 bytes: the kernel's IR skips instcombine; a bf16
  // scan (or an s8 one) keeps it; the knob overrides the rule both ways.
  auto Cumsum = [](const std::string &Ty) {
    const std::string T = Ty + "[64,1000]";
    return fused("p0 = " + T + R"( parameter(0)
    c = )" + Ty + R"([] constant(0)
    ROOT s = )" + T +
                     " reduce-window(p0, c), window={size=1x1000 "
                     "pad=0_0x999_0}, to_apply=" +
                     (Ty == "f32" ? "add" : "add_" + Ty),
                 "  a0 = " + T + " parameter(0)", T, "a0");
  };
  Context Ctx;
  const std::pair<const char *, bool> Cases[] = {
      {"f32", false}, {"s32", false}, {"s64", false}, {"f64", false},
      {"bf16", true}, {"f16", true},  {"s8", true}};
  for (const auto &[Ty, Keeps] : Cases) {
    auto M = Cumsum(Ty);
    ASSERT_TRUE(M) << Ty;
    Expected<KernelPlan> P = planOf(Ctx, *M->entry()->root());
    ASSERT_TRUE(P) << P.error().Message;
    EXPECT_EQ(P->IrInstCombine, Keeps) << Ty;
    Tuning Knob;
    Knob.IrInstCombine = Keeps ? 0 : 1;
    Expected<KernelPlan> PK = planOf(Ctx, *M->entry()->root(), Knob);
    ASSERT_TRUE(PK) << PK.error().Message;
    EXPECT_EQ(PK->IrInstCombine, !Keeps) << Ty;
  }
  // A type inside a called computation counts: an f32 cumsum whose
  // prologue maps each element through f16 keeps instcombine.
  auto Mapped = fused(R"(p0 = f32[64,1000] parameter(0)
    m = f32[64,1000] map(p0), dimensions={0,1}, to_apply=round_f16
    c = f32[] constant(0)
    ROOT s = f32[64,1000] reduce-window(m, c), window={size=1x1000 pad=0_0x999_0}, to_apply=add)",
                      "  a0 = f32[64,1000] parameter(0)", "f32[64,1000]",
                      "a0");
  ASSERT_TRUE(Mapped);
  Expected<KernelPlan> MP = planOf(Ctx, *Mapped->entry()->root());
  ASSERT_TRUE(MP) << MP.error().Message;
  EXPECT_EQ(MP->Emitter, "scan");
  EXPECT_TRUE(MP->IrInstCombine);
  EXPECT_NE(printKernelPlan(*MP).find("'h' is neither a 4- nor an 8-byte"),
            std::string::npos)
      << printKernelPlan(*MP);
  // Other emitters keep it for 4- and 8-byte types too (slower without it,
  // measured); the knob overrides any emitter.
  auto Loop = fused(R"(p0 = f32[64,1000] parameter(0)
    ROOT e = f32[64,1000] exponential(p0))",
                    "  a0 = f32[64,1000] parameter(0)", "f32[64,1000]", "a0");
  ASSERT_TRUE(Loop);
  Expected<KernelPlan> LP = planOf(Ctx, *Loop->entry()->root());
  ASSERT_TRUE(LP) << LP.error().Message;
  EXPECT_EQ(LP->Emitter, "loop");
  EXPECT_TRUE(LP->IrInstCombine);
  Tuning Off;
  Off.IrInstCombine = 0;
  Expected<KernelPlan> LO = planOf(Ctx, *Loop->entry()->root(), Off);
  ASSERT_TRUE(LO) << LO.error().Message;
  EXPECT_FALSE(LO->IrInstCombine);
}

TEST(ScanFusion, ShortRowsShareTilesAsASegmentedScan) {
  // Rows of 24 f32: 12 elements a thread (the row's odd part 3 times the
  // vector of 4), so 256 threads hold 128 whole rows; 4099 rows, 33 tiles,
  // the last partial (its items guarded by the map's constraint).
  auto M = cumsum({4099, 24}, 1);
  ASSERT_TRUE(M);
  const HloInstruction &F = *M->entry()->root();
  Context Ctx;
  Expected<KernelPlan> P = planOf(Ctx, F);
  ASSERT_TRUE(P) << P.error().Message;
  EXPECT_EQ(P->Scan->Mode, ScanMode::SegmentedTiles);
  EXPECT_EQ(P->Scan->Vector, 4);
  EXPECT_EQ(P->Scan->Runs, 3);
  EXPECT_EQ(P->Scan->LinesPerTile, 128);
  EXPECT_EQ(P->Scan->TileLength, 128 * 24);
  EXPECT_EQ(P->Scan->Groups, 33);
  EXPECT_EQ(P->Scan->workspaceBytes(), 0);
  EXPECT_EQ(P->Grid[0], 33);
  // The knob keeps short rows to a thread each.
  Tuning Own;
  Own.ScanSharedRows = 0;
  Expected<KernelPlan> O = planOf(Ctx, F, Own);
  ASSERT_TRUE(O) << O.error().Message;
  EXPECT_EQ(O->Scan->Mode, ScanMode::LinePerThread);
}

TEST(ScanFusion, RefusedWithTheReason) {
  auto M = fused(R"(p0 = f32[128,1000] parameter(0)
          c = f32[] constant(0)
          z = f32[128] broadcast(c), dimensions={}
          s = (f32[128,1000], f32[128]) scan(p0, z), dimensions={1},
            num_carries=1, to_apply=cumsum
          g = f32[128] get-tuple-element(s), index=1
          ROOT r = f32[128,1000] broadcast(g), dimensions={0})",
                 "  a0 = f32[128,1000] parameter(0)", "f32[128,1000]", "a0");
  ASSERT_TRUE(M);
  const HloComputation &Fc = *M->entry()->root()->fusedComputation();
  auto U = findUnmodeledInstruction(Fc);
  ASSERT_TRUE(U);
  EXPECT_NE(U->Reason.find("'g' reads the final carry of scan 's'"),
            std::string::npos)
      << U->Reason;
  EXPECT_NE(analyzeComputation(Fc).Kind, EmitterKind::Scan);
}

TEST(ScanFusion, WindowsThatAreNoScanHeroAreComputedInline) {
  struct Case {
    const char *Name, *Body;
  } Cases[] = {
      {"not elementwise after",
       R"(p0 = f32[128,1000] parameter(0)
          c = f32[] constant(0)
          s = f32[128,1000] reduce-window(p0, c), window={size=1x1000
            pad=0_0x999_0}, to_apply=add
          ROOT r = f32[1000,128] transpose(s), dimensions={1,0})"},
      {"a window that is no scan",
       R"(p0 = f32[128,1000] parameter(0)
          c = f32[] constant(0)
          ROOT s = f32[128,1000] reduce-window(p0, c), window={size=1x2
            pad=0_0x1_0}, to_apply=add)"},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Name);
    bool Transposed = std::string(C.Name) == "not elementwise after";
    auto M = fused(C.Body, "  a0 = f32[128,1000] parameter(0)",
                   Transposed ? "f32[1000,128]" : "f32[128,1000]", "a0");
    ASSERT_TRUE(M);
    const HloComputation &Fc = *M->entry()->root()->fusedComputation();
    auto U = findUnmodeledInstruction(Fc);
    EXPECT_FALSE(U) << U->Reason;
    EXPECT_NE(analyzeComputation(Fc).Kind, EmitterKind::Scan);
  }
}

} // namespace
