//===- HloParserTest.cpp - HLO text parser and printer --------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

using namespace idxmap;

namespace {

/// The repository's test/examples (IDXMAP_EXAMPLES_DIR, set by CMake).
std::string examplesDir() { return IDXMAP_EXAMPLES_DIR; }

bool isDir(const std::string &Path) {
  struct stat St;
  return stat(Path.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}

std::vector<std::string> hloFilesIn(const std::string &Dir) {
  std::vector<std::string> Out;
  if (DIR *D = opendir(Dir.c_str())) {
    while (dirent *E = readdir(D)) {
      std::string N = E->d_name;
      if (N.size() > 4 && N.substr(N.size() - 4) == ".hlo")
        Out.push_back(Dir + "/" + N);
    }
    closedir(D);
  }
  std::sort(Out.begin(), Out.end());
  return Out;
}

std::string readFile(const std::string &Path) {
  std::ifstream In(Path);
  std::stringstream SS;
  SS << In.rdbuf();
  return SS.str();
}

std::unique_ptr<HloModule> parseOk(const std::string &Text) {
  auto M = parseHloModule(Text, "t.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str());
  if (!M)
    return nullptr;
  return std::move(*M);
}

std::string parseError(const std::string &Text) {
  auto M = parseHloModule(Text, "m.hlo");
  if (M)
    return "<parsed>";
  return M.error().str();
}

} // namespace

//===----------------------------------------------------------------------===//
// The shared examples
//===----------------------------------------------------------------------===//

TEST(HloParser, ParsesEveryExampleAndRoundTrips) {
  std::string Dir = examplesDir();
  ASSERT_TRUE(isDir(Dir)) << "no examples folder at " << Dir;
  std::vector<std::string> Files = hloFilesIn(Dir);
  std::vector<std::string> Dumps = hloFilesIn(Dir + "/xla-dumps");
  Files.insert(Files.end(), Dumps.begin(), Dumps.end());
  ASSERT_GE(Files.size(), 20u);
  for (const std::string &F : Files) {
    SCOPED_TRACE(F);
    auto M = parseHloModule(readFile(F), F);
    ASSERT_TRUE(bool(M)) << M.error().str();
    EXPECT_NE((*M)->entry(), nullptr);
    EXPECT_FALSE((*M)->fusions().empty());
    // Printing is canonical: print, parse, print again gives the same text.
    std::string Printed = printHloModule(**M);
    auto M2 = parseHloModule(Printed, "printed.hlo");
    ASSERT_TRUE(bool(M2)) << M2.error().str() << "\n" << Printed;
    EXPECT_EQ(printHloModule(**M2), Printed);
  }
}

TEST(HloParser, XlaDumpStructure) {
  std::string Path =
      examplesDir() + "/xla-dumps/colsum_f32_8192x8192.xla-optimized.hlo";
  ASSERT_TRUE(isDir(examplesDir())) << "no examples folder";
  auto M = parseOk(readFile(Path));
  ASSERT_TRUE(M);
  EXPECT_EQ(M->name(), "jit__lambda");
  ASSERT_EQ(M->computations().size(), 4u);
  const HloComputation *Entry = M->entry();
  EXPECT_EQ(Entry->name(), "main.2");
  EXPECT_TRUE(Entry->isEntry());
  EXPECT_EQ(Entry->parameterCount(), 1);
  const HloInstruction *Root = Entry->root();
  EXPECT_EQ(Root->name(), "input_reduce_fusion.1");
  EXPECT_EQ(Root->opcode(), HloOpcode::Fusion);
  EXPECT_EQ(Root->fusionKind(), FusionKind::Input);
  EXPECT_EQ(Root->shape().str(true), "f32[8192]{0}");
  const HloComputation *F = Root->operand(0)->fusedComputation();
  ASSERT_NE(F, nullptr);
  EXPECT_EQ(F->name(), "fused_reduce");
  const HloInstruction *Bitcast = F->findInstruction("%bitcast.2");
  ASSERT_NE(Bitcast, nullptr);
  EXPECT_EQ(Bitcast->opcode(), HloOpcode::Bitcast);
  EXPECT_EQ(Bitcast->shape().str(true), "f32[64,128,8192]{2,1,0}");
  const HloInstruction *Reduce = F->root();
  EXPECT_EQ(Reduce->opcode(), HloOpcode::Reduce);
  EXPECT_EQ(Reduce->dimensions(), std::vector<int64_t>{1});
  EXPECT_EQ(Reduce->toApply()->name(), "region_0.1");
  EXPECT_EQ(Reduce->operand(1)->literal().getDouble(0), 0.0);
  // Parameters are indexed by number, not by text order.
  const HloComputation *Region = Reduce->toApply();
  EXPECT_EQ(Region->parameter(0)->name(), "reduce_sum.3");
  EXPECT_EQ(Region->parameter(1)->name(), "reduce_sum.4");
  EXPECT_EQ(Region->instructions()[0]->name(), "reduce_sum.4");
  // Users.
  ASSERT_EQ(Bitcast->users().size(), 1u);
  EXPECT_EQ(Bitcast->users()[0], Reduce);
}

TEST(HloParser, CustomFusionKindAndTransposeDump) {
  ASSERT_TRUE(isDir(examplesDir())) << "no examples folder";
  auto M = parseOk(readFile(
      examplesDir() +
      "/xla-dumps/exp_transpose_abs_f32_20x160x170.xla-optimized.hlo"));
  ASSERT_TRUE(M);
  const HloInstruction *Fusion = M->entry()->root();
  EXPECT_EQ(Fusion->fusionKind(), FusionKind::Custom);
  const HloInstruction *T = Fusion->fusedComputation()->root();
  EXPECT_EQ(T->opcode(), HloOpcode::Transpose);
  EXPECT_EQ(T->dimensions(), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(T->operand(0)->opcode(), HloOpcode::Exp);
}

TEST(HloParser, OperandShapesAndBf16Constants) {
  ASSERT_TRUE(isDir(examplesDir())) << "no examples folder";
  auto M = parseOk(readFile(examplesDir() + "/gelu.hlo"));
  ASSERT_TRUE(M);
  const HloComputation *G = M->findComputation("gelu");
  ASSERT_NE(G, nullptr);
  const HloInstruction *C2 = G->findInstruction("constant_2");
  ASSERT_NE(C2, nullptr);
  // 0.79785 rounds to the nearest bf16: 0.796875 (0x3f4c).
  EXPECT_EQ(C2->literal().getBits(0), 0x3f4cu);
  EXPECT_EQ(C2->literal().getDouble(0), 0.796875);
  const HloInstruction *Square = G->findInstruction("square");
  EXPECT_EQ(Square->operand(0), Square->operand(1));
  ASSERT_EQ(Square->operand(0)->users().size(), 4u);
}

TEST(HloParser, VariadicFusionRootBecomesTupleOfElements) {
  // An argmax fusion as XLA writes it: the root is the variadic reduce.
  auto M = parseOk(R"(HloModule m
argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  ge = pred[] compare(a, b), direction=GE
  v = f32[] select(ge, a, b)
  k = s32[] select(ge, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}
fused {
  x = f32[8,16] parameter(0)
  io = s32[8,16] iota(), iota_dimension=1
  c0 = f32[] constant(-inf)
  c1 = s32[] constant(0)
  ROOT r = (f32[8], s32[8]) reduce(x, io, c0, c1), dimensions={1}, to_apply=argmax
}
ENTRY e {
  p = f32[8,16] parameter(0)
  ROOT f = (f32[8], s32[8]) fusion(p), kind=kInput, calls=fused
}
)");
  ASSERT_TRUE(M);
  const HloComputation *F = M->findComputation("fused");
  ASSERT_NE(F, nullptr);
  const HloInstruction *Root = F->root();
  EXPECT_EQ(Root->opcode(), HloOpcode::Tuple);
  EXPECT_EQ(Root->shape().str(), "(f32[8], s32[8])");
  const HloInstruction *R = F->findInstruction("r");
  ASSERT_NE(R, nullptr);
  ASSERT_EQ(Root->operands().size(), 2u);
  for (int K = 0; K < 2; ++K) {
    const HloInstruction *G = Root->operand(K);
    EXPECT_EQ(G->opcode(), HloOpcode::GetTupleElement);
    EXPECT_EQ(G->tupleIndex(), K);
    EXPECT_EQ(G->operand(0), R);
    EXPECT_EQ(G->name(), "r.out." + std::to_string(K));
  }
  EXPECT_EQ(R->users().size(), 2u);
  // The reducer's tuple root and the entry are left as written.
  EXPECT_EQ(M->findComputation("argmax")->root()->name(), "t");
  EXPECT_EQ(M->entry()->root()->opcode(), HloOpcode::Fusion);
  // The printed form parses back to itself.
  std::string Printed = printHloModule(*M);
  auto M2 = parseHloModule(Printed, "printed.hlo");
  ASSERT_TRUE(bool(M2)) << M2.error().str() << "\n" << Printed;
  EXPECT_EQ(printHloModule(**M2), Printed);
}

//===----------------------------------------------------------------------===//
// Syntax and attributes
//===----------------------------------------------------------------------===//

TEST(HloParser, AttributesOfEveryOp) {
  auto M = parseOk(R"(
HloModule attrs, is_scheduled=true, entry_computation_layout={(f32[4,6]{1,0})->f32[4]{0}}

max_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}

fused {
  p0 = f32[4,6]{1,0:T(8,128)S(1)} parameter(0)
  i = s32[] parameter(1)
  s = f32[2,3]{1,0} slice(p0), slice={[0:4:2], [1:4]}
  zero = f32[] constant(0)
  pad = f32[5,7] pad(p0, zero), padding=-1_2_0x0_1_0
  ds = f32[2,2] dynamic-slice(p0, i, i), dynamic_slice_sizes={2,2}
  dus = f32[4,6] dynamic-update-slice(p0, ds, i, i)
  cat = f32[4,12] concatenate(p0, dus), dimensions={1}
  rev = f32[4,12] reverse(cat), dimensions={0,1}
  io = s32[4,6] iota(), iota_dimension=1
  cmp = pred[4,6] compare(p0, dus), direction=LT, type=TOTALORDER
  t = (f32[4,6], pred[4,6]) tuple(p0, cmp)
  g = pred[4,6] get-tuple-element(t), index=1
  r = s32[4] reduce(io, i), dimensions={1}, to_apply=max_s32
  ROOT out = f32[4] convert(r)
}

ENTRY main {
  x = f32[4,6]{1,0} parameter(0), sharding={devices=[2,1]0,1}, metadata={op_name="x" source_file="a.py" source_line=3}
  n = s32[] constant(-3)
  ROOT f = f32[4]{0} fusion(x, n), kind=kLoop, calls=fused, backend_config="{\"a\":{}}", frontend_attributes={_xla="1"}, control-predecessors={}
}
)");
  ASSERT_TRUE(M);
  const HloComputation *F = M->findComputation("fused");
  ASSERT_NE(F, nullptr);
  // Tiling and memory space after ':' are dropped.
  EXPECT_EQ(F->findInstruction("p0")->shape().MinorToMajor,
            (std::vector<int64_t>{1, 0}));
  const HloInstruction *S = F->findInstruction("s");
  EXPECT_EQ(S->sliceStarts(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(S->sliceLimits(), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(S->sliceStrides(), (std::vector<int64_t>{2, 1}));
  const HloInstruction *Pad = F->findInstruction("pad");
  ASSERT_EQ(Pad->padding().size(), 2u);
  EXPECT_EQ(Pad->padding()[0], (PaddingDim{-1, 2, 0}));
  EXPECT_EQ(Pad->padding()[1], (PaddingDim{0, 1, 0}));
  EXPECT_EQ(F->findInstruction("ds")->dynamicSliceSizes(),
            (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(F->findInstruction("cat")->dimensions(),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(F->findInstruction("rev")->dimensions(),
            (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(F->findInstruction("io")->iotaDimension(), 1);
  const HloInstruction *Cmp = F->findInstruction("cmp");
  EXPECT_EQ(Cmp->comparisonDirection(), ComparisonDirection::LT);
  EXPECT_EQ(Cmp->comparisonType(), ComparisonType::TotalOrder);
  EXPECT_EQ(F->findInstruction("g")->tupleIndex(), 1);
  EXPECT_EQ(F->findInstruction("t")->shape().str(), "(f32[4,6], pred[4,6])");
  const HloInstruction *Fusion = M->entry()->root();
  EXPECT_EQ(Fusion->fusionKind(), FusionKind::Loop);
  EXPECT_EQ(Fusion->fusedComputation(), F);
  EXPECT_EQ(M->entry()->findInstruction("n")->literal().getInt(0), -3);
}

TEST(HloParser, ArrayConstantWrittenAsOneValue) {
  // XLA's shorthand: every element takes the value; an array without
  // elements takes none (a libFuzzer finding wrote element 0 of it).
  auto M = parseOk("HloModule m\nENTRY e {\n  a = f32[2,3] constant(1.5)\n"
                   "  z = f32[0] constant(5)\n"
                   "  ROOT t = (f32[2,3], f32[0]) tuple(a, z)\n}\n");
  ASSERT_TRUE(M);
  const Literal &A = M->entry()->findInstruction("a")->literal();
  for (int64_t K = 0; K < 6; ++K)
    EXPECT_EQ(A.getDouble(K), 1.5);
  EXPECT_EQ(M->entry()->findInstruction("z")->literal().elementCount(), 0);
}

TEST(HloParser, PrintsCanonicalForm) {
  auto M = parseOk(R"(
HloModule m, is_scheduled=true

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b), metadata={op_name="x"}
}

ENTRY %main (p: f32[2,3]) -> (f32[2], s32[2,2]) {
  %p = f32[2,3]{1,0} parameter(0)
  %z = f32[] constant(-inf)
  %r = f32[2]{0} reduce(%p, %z), dimensions={1}, to_apply=%add
  %c = s32[2,2] constant({ { 1, -2 }, /*i0=1*/ { 3, 4 } })
  %pd = f32[2,10] pad(%p, %z), padding=0_0x1_2_2
  ROOT %t = (f32[2], s32[2,2]) tuple(%r, %c)
}
)");
  ASSERT_TRUE(M);
  EXPECT_EQ(printHloModule(*M), R"(HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b), metadata={op_name="x"}
}

ENTRY main {
  p = f32[2,3]{1,0} parameter(0)
  z = f32[] constant(-inf)
  r = f32[2]{0} reduce(p, z), dimensions={1}, to_apply=add
  c = s32[2,2] constant({{1, -2}, {3, 4}})
  pd = f32[2,10] pad(p, z), padding=0_0_0x1_2_2
  ROOT t = (f32[2], s32[2,2]) tuple(r, c)
}
)");
}

TEST(HloParser, ConstantsOfEveryType) {
  auto M = parseOk(R"(
HloModule m
ENTRY e {
  a = pred[3] constant({true, false, 1})
  b = s8[2] constant({-128, 127})
  c = u64[1] constant({18446744073709551615})
  d = f16[3] constant({0.1, 65520, -0})
  e = bf16[2] constant({nan, -inf})
  f = f64[] constant(1e-300)
  g = f32[2] constant({...})
  ROOT t = (pred[3], s8[2], u64[1], f16[3], bf16[2], f64[], f32[2]) tuple(a, b, c, d, e, f, g)
}
)");
  ASSERT_TRUE(M);
  const HloComputation *E = M->entry();
  const Literal &A = E->findInstruction("a")->literal();
  EXPECT_EQ(A.toString(), "pred[3] {true, false, true}");
  EXPECT_EQ(E->findInstruction("b")->literal().toString(),
            "s8[2] {-128, 127}");
  EXPECT_EQ(E->findInstruction("c")->literal().getBits(0),
            18446744073709551615ull);
  const Literal &D = E->findInstruction("d")->literal();
  EXPECT_EQ(D.getBits(0), 0x2e66u); // 0.0999755859375
  EXPECT_EQ(D.getBits(1), 0x7c00u); // 65520 rounds to +inf
  EXPECT_EQ(D.getBits(2), 0x8000u); // -0
  EXPECT_EQ(D.toString(), "f16[3] {0.1, inf, -0}");
  const Literal &EL = E->findInstruction("e")->literal();
  EXPECT_EQ(EL.getBits(0), 0x7fc0u);
  EXPECT_EQ(EL.getBits(1), 0xff80u);
  EXPECT_EQ(E->findInstruction("f")->literal().getDouble(0), 1e-300);
  EXPECT_TRUE(E->findInstruction("g")->literalElided());
  EXPECT_EQ(E->findInstruction("g")->toString(),
            "g = f32[2] constant({...})");
}

TEST(HloParser, EntryDefaultsToLastComputation) {
  auto M = parseOk("HloModule m\nc1 {\n  ROOT p = f32[] parameter(0)\n}\n"
                   "c2 {\n  p = f32[2] parameter(0)\n  q = f32[2] negate(p)\n"
                   "  r = f32[2] abs(q)\n}\n");
  ASSERT_TRUE(M);
  EXPECT_EQ(M->entry()->name(), "c2");
  // Without ROOT, the last instruction is the root.
  EXPECT_EQ(M->entry()->root()->name(), "r");
  EXPECT_TRUE(M->entry()->root()->isRoot());
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

TEST(HloParserErrors, UnknownOpcode) {
  // Every opcode of XLA's list parses (dot, custom-call, ...); only names
  // XLA does not have are errors.
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  ROOT d = f32[4] dott(p, p)\n}\n"),
            "m.hlo:4:19: error: unknown opcode 'dott'\n"
            "  ROOT d = f32[4] dott(p, p)\n"
            "                  ^");
}

TEST(HloParserErrors, UndefinedOperand) {
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  ROOT a = f32[4] add(p, %q)\n}\n"),
            "m.hlo:4:26: error: use of undefined instruction 'q'\n"
            "  ROOT a = f32[4] add(p, %q)\n"
            "                         ^");
}

TEST(HloParserErrors, ElementwiseShapeMismatch) {
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  q = f32[8] parameter(1)\n"
                       "  ROOT a = f32[4] add(p, q)\n}\n"),
            "m.hlo:5:19: error: add: operand 1 is f32[8], expected f32[4]\n"
            "  ROOT a = f32[4] add(p, q)\n"
            "                  ^");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = s32[4] parameter(0)\n"
                       "  ROOT a = s32[4] exponential(p)\n}\n"),
            "m.hlo:4:19: error: exponential: not defined on s32\n"
            "  ROOT a = s32[4] exponential(p)\n"
            "                  ^");
}

TEST(HloParserErrors, TransposeAndBroadcast) {
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n"
                       "  ROOT t = f32[3,2] transpose(p), dimensions={1,1}\n}\n"),
            "m.hlo:4:21: error: transpose: dimensions {1,1} repeats "
            "dimension 1\n"
            "  ROOT t = f32[3,2] transpose(p), dimensions={1,1}\n"
            "                    ^");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[2,3] parameter(0)\n"
                       "  ROOT t = f32[2,3] transpose(p), dimensions={1,0}\n}\n"),
            "m.hlo:4:21: error: transpose: result shape is f32[2,3], "
            "expected f32[3,2]\n"
            "  ROOT t = f32[2,3] transpose(p), dimensions={1,0}\n"
            "                    ^");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n"
                       "  ROOT b = f32[3,4] broadcast(p), dimensions={1}\n}\n"),
            "m.hlo:4:21: error: broadcast: operand dimension 0 (size 3) does "
            "not match result dimension 1 (size 4)\n"
            "  ROOT b = f32[3,4] broadcast(p), dimensions={1}\n"
            "                    ^");
}

TEST(HloParserErrors, CallsAndAttributes) {
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  z = f32[] constant(0)\n"
                       "  ROOT r = f32[] reduce(p, z), dimensions={0}, "
                       "to_apply=sum\n}\n"),
            "m.hlo:5:57: error: unknown computation 'sum'\n"
            "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=sum\n"
            "                                                        ^");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  ROOT s = f32[2] slice(p)\n}\n"),
            "m.hlo:4:19: error: slice: missing attribute 'slice'\n"
            "  ROOT s = f32[2] slice(p)\n"
            "                  ^");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  ROOT s = f32[2] slice(p), slice={[0:8]}\n}\n"),
            "m.hlo:4:19: error: slice: slice [0:8:1] is invalid for "
            "dimension 0 of size 4\n"
            "  ROOT s = f32[2] slice(p), slice={[0:8]}\n"
            "                  ^");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  ROOT c = pred[4] compare(p, p), direction=XX\n}\n"),
            "m.hlo:4:45: error: unknown comparison direction 'XX'\n"
            "  ROOT c = pred[4] compare(p, p), direction=XX\n"
            "                                            ^");
  EXPECT_EQ(parseError("HloModule m\nc {\n  ROOT p = f32[] parameter(0)\n}\n"
                       "ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT f = f32[] fusion(p), kind=kFoo, calls=c\n}\n"),
            "m.hlo:7:34: error: unknown fusion kind 'kFoo' (expected kLoop, "
            "kInput, kOutput or kCustom)\n"
            "  ROOT f = f32[] fusion(p), kind=kFoo, calls=c\n"
            "                                 ^");
}

TEST(HloParserErrors, ShapesAndConstants) {
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  ROOT p = c65[4] "
                       "parameter(0)\n}\n"),
            "m.hlo:3:12: error: unsupported element type 'c65'\n"
            "  ROOT p = c65[4] parameter(0)\n"
            "           ^");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  ROOT c = s32[3] "
                       "constant({1, 2})\n}\n"),
            "m.hlo:3:28: error: expected 3 elements in dimension 0 of a "
            "s32[3] constant, got 2\n"
            "  ROOT c = s32[3] constant({1, 2})\n"
            "                           ^");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  ROOT c = u8[] "
                       "constant(300)\n}\n"),
            "m.hlo:3:26: error: value 300 is out of range for u8\n"
            "  ROOT c = u8[] constant(300)\n"
            "                         ^");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{0,0} "
                       "parameter(0)\n}\n"),
            "m.hlo:3:20: error: layout is not a permutation of the dimensions "
            "of f32[2,3]\n"
            "  ROOT p = f32[2,3]{0,0} parameter(0)\n"
            "                   ^");
}

TEST(HloParserErrors, Structure) {
  EXPECT_EQ(parseError(""),
            "m.hlo:1:1: error: expected 'HloModule' or a computation");
  EXPECT_EQ(parseError("HloModule m\n"),
            "m.hlo:2:1: error: expected at least one computation");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"),
            "m.hlo:4:1: error: expected '}' at the end of computation 'e'");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                       "  p = f32[] parameter(1)\n}\n"),
            "m.hlo:4:3: error: redefinition of instruction 'p'\n"
            "  p = f32[] parameter(1)\n"
            "  ^");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[] parameter(1)\n}\n"),
            "m.hlo:3:13: error: parameter number 1 is out of range: "
            "computation 'e' has 1 parameter\n"
            "  p = f32[] parameter(1)\n"
            "            ^");
  EXPECT_EQ(parseError("HloModule m\nc {\n  p = f32[] parameter(0)\n"
                       "  ROOT r = f32[] call(p), to_apply=c\n}\n"),
            "m.hlo:4:18: error: recursive call of computation 'c'\n"
            "  ROOT r = f32[] call(p), to_apply=c\n"
            "                 ^");
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT q = f32[] negate(p), metadata={op_name=\"x}\n}\n"),
            "m.hlo:4:38: error: unterminated value of attribute 'metadata'\n"
            "  ROOT q = f32[] negate(p), metadata={op_name=\"x}\n"
            "                                     ^");
}

TEST(HloParserErrors, UseBeforeDefinition) {
  EXPECT_EQ(parseError("HloModule m\nENTRY e {\n  a = f32[] negate(b)\n"
                       "  b = f32[] parameter(0)\n}\n"),
            "m.hlo:3:20: error: use of undefined instruction 'b'\n"
            "  a = f32[] negate(b)\n"
            "                   ^");
}

/// Every prefix and many single-byte corruptions of real modules either parse
/// or give a diagnostic; nothing crashes or hangs.
TEST(HloParserErrors, TruncatedAndCorruptedInputsNeverCrash) {
  ASSERT_TRUE(isDir(examplesDir())) << "no examples folder";
  std::vector<std::string> Texts = {
      readFile(examplesDir() + "/softmax_f32_4096x4096.hlo"),
      readFile(examplesDir() +
               "/xla-dumps/colsum_f32_8192x8192.xla-optimized.hlo")};
  const char Junk[] = {'{', '}', '(', ')', '[', ']', ',', '=', '%', '"',
                       '-', ':', 'x', '0', '\n', '/', '*', ' '};
  int Parsed = 0, Rejected = 0;
  for (const std::string &T : Texts) {
    for (size_t Len = 0; Len < T.size(); Len += 3) {
      auto M = parseHloModule(T.substr(0, Len), "p.hlo");
      (M ? Parsed : Rejected)++;
      if (!M) {
        EXPECT_FALSE(M.error().Message.empty());
      }
    }
    uint64_t Seed = 12345;
    for (int K = 0; K < 400; ++K) {
      Seed = Seed * 6364136223846793005ull + 1442695040888963407ull;
      std::string Mutated = T;
      Mutated[(Seed >> 20) % Mutated.size()] = Junk[(Seed >> 40) % sizeof Junk];
      auto M = parseHloModule(Mutated, "p.hlo");
      (M ? Parsed : Rejected)++;
    }
  }
  EXPECT_GT(Rejected, 1000);
  EXPECT_GT(Parsed, 0);
}

TEST(HloModule, OperandClosureStopsAndSorts) {
  auto M = parseHloModule("HloModule m\n\n"
                          "ENTRY e {\n"
                          "  p0 = f32[4] parameter(0)\n"
                          "  p1 = f32[4] parameter(1)\n"
                          "  p2 = f32[8] parameter(2)\n"
                          "  e = f32[4] exponential(p0)\n"
                          "  c = f32[8] concatenate(e, p1), dimensions={0}\n"
                          "  ROOT r = f32[8] multiply(c, p2)\n"
                          "}\n",
                          "closure.hlo");
  ASSERT_TRUE(bool(M)) << M.error().str();
  const HloModule &Mod = **M;
  auto Names = [](const std::vector<const HloInstruction *> &Is) {
    std::string S;
    for (const HloInstruction *I : Is)
      S += (S.empty() ? "" : " ") + I->name();
    return S;
  };
  const HloInstruction *R = Mod.findInstruction("r"),
                       *C = Mod.findInstruction("c"),
                       *E = Mod.findInstruction("e");
  // Parameters first, by number, then the others in computation order.
  EXPECT_EQ(Names(operandClosure({R})), "p0 p1 p2 e c r");
  EXPECT_EQ(Names(operandClosure({R}, {C})), "p2 r");
  EXPECT_EQ(Names(operandClosure({R}, {C}, /*ParametersOnly=*/true)), "p2");
  EXPECT_EQ(Names(operandClosure({E, R}, {}, true)), "p0 p1 p2");
  EXPECT_EQ(Names(operandClosure({E})), "p0 e");
  // A root listed in Stop is not walked.
  EXPECT_EQ(Names(operandClosure({R}, {R})), "");
}
