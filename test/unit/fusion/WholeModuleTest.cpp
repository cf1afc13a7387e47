//===- WholeModuleTest.cpp - Fusions of whole optimized modules -----------===//
//
// Part of idxmap. What the fusion analysis models (findUnmodeledInstruction:
// ops after Call, non-compute types, no outputs), which fusions are kernels
// (kernelFusions: in ENTRY, while bodies and branches, not nested in fused
// computations), and the partitioner on computations holding opaque ops,
// tuple parameters and tokens.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Coalescing.h"
#include "idxmap/Fusion.h"
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>

using namespace idxmap;

namespace {

std::unique_ptr<HloModule> parse(const std::string &Text) {
  auto M = parseHloModule(Text, "m.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str());
  return M ? std::move(*M) : nullptr;
}

/// The reason findUnmodeledInstruction gives for the ENTRY computation, or
/// "" when it models every instruction.
std::string unmodeled(const std::string &Text) {
  auto M = parse(Text);
  if (!M)
    return "parse error";
  auto U = findUnmodeledInstruction(*M->entry());
  return U ? U->Instruction->name() + ": " + U->Reason : "";
}

TEST(WholeModule, UnmodeledInstructions) {
  EXPECT_EQ(unmodeled("ENTRY e {\n  p = f32[4] parameter(0)\n"
                      "  ROOT n = f32[4] negate(p)\n}\n"),
            "");
  EXPECT_EQ(
      unmodeled("ENTRY e {\n  p = f32[4,4] parameter(0)\n"
                "  ROOT d = f32[4,4] dot(p, p), "
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"),
      "d: no emitter computes dot 'd'");
  EXPECT_EQ(unmodeled("ENTRY e {\n  p = f32[4] parameter(0)\n"
                      "  ROOT c = f32[4] custom-call(p), "
                      "custom_call_target=\"__cublas$gemm\"\n}\n"),
            "c: no emitter computes custom-call 'c'");
  // The type is named before the op: a complex value, whatever makes it.
  EXPECT_EQ(unmodeled("ENTRY e {\n  p = f32[4] parameter(0)\n"
                      "  ROOT c = c64[4] convert(p)\n}\n"),
            "c: 'c' has type c64[4]; the emitters take pred, integer and "
            "f16/bf16/f32/f64 values only");
  EXPECT_EQ(unmodeled("ENTRY e {\n  p = f32[4] parameter(0)\n"
                      "  t = token[] after-all()\n"
                      "  ROOT n = f32[4] negate(p)\n}\n"),
            "t: 't' has type token[]; the emitters take pred, integer and "
            "f16/bf16/f32/f64 values only");
  EXPECT_EQ(unmodeled("ENTRY e {\n  p = f32[4] parameter(0)\n"
                      "  ROOT t = () tuple()\n}\n"),
            "t: no outputs (the root is an empty tuple)");
  // Tuple values of compute types are modeled (variadic reduce, tuple
  // parameters read through get-tuple-element).
  EXPECT_EQ(unmodeled("ENTRY e {\n  p = (f32[4], s32[4]) parameter(0)\n"
                      "  ROOT g = f32[4] get-tuple-element(p), index=0\n}\n"),
            "");
}

const char *LoopModule = R"(HloModule loop
fused_add {
  a = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT s = s32[] add(a, one)
}
fused_lt {
  b = s32[] parameter(0)
  n = s32[] constant(4)
  ROOT lt = pred[] compare(b, n), direction=LT
}
inner {
  x = f32[8] parameter(0)
  ROOT y = f32[8] negate(x)
}
fused_outer {
  q = f32[8] parameter(0)
  nested = f32[8] fusion(q), kind=kLoop, calls=inner
  ROOT e = f32[8] exponential(nested)
}
cond {
  c = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  ROOT f_lt = pred[] fusion(i), kind=kLoop, calls=fused_lt
}
body {
  w = (s32[], f32[8]) parameter(0)
  j = s32[] get-tuple-element(w), index=0
  v = f32[8] get-tuple-element(w), index=1
  f_add = s32[] fusion(j), kind=kLoop, calls=fused_add
  f_outer = f32[8] fusion(v), kind=kLoop, calls=fused_outer
  ROOT r = (s32[], f32[8]) tuple(f_add, f_outer)
}
ENTRY main {
  p = f32[8] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[8]) tuple(z, p)
  wl = (s32[], f32[8]) while(t), condition=cond, body=body
  ROOT o = f32[8] get-tuple-element(wl), index=1
}
)";

TEST(WholeModule, KernelFusionsSkipNestedOnes) {
  auto M = parse(LoopModule);
  ASSERT_TRUE(M);
  std::vector<std::string> Names;
  for (const HloInstruction *F : kernelFusions(*M))
    Names.push_back(F->name());
  // The while condition's and body's fusions, not `nested` (part of
  // f_outer's kernel).
  EXPECT_EQ(Names, (std::vector<std::string>{"f_lt", "f_add", "f_outer"}));
  EXPECT_EQ(M->fusions().size(), 4u);
}

TEST(WholeModule, PartitionOpaqueOpsRootTheirOwnSubgraph) {
  auto M = parse(R"(HloModule m
ENTRY main {
  x = f32[4,8] parameter(0)
  y = f32[8,16] parameter(1)
  st = (s32[], f32[4,16]) parameter(2)
  tok = token[] after-all()
  e = f32[4,8] exponential(x)
  d = f32[4,16] dot(e, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  cc = f32[4,16] custom-call(d), custom_call_target="my_op"
  h = f32[4,16] get-tuple-element(st), index=1
  ROOT m = f32[4,16] multiply(cc, h)
}
)");
  ASSERT_TRUE(M);
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, *M->entry());
  auto Reason = [&](const char *Name) {
    auto It = P.Reasons.find(M->entry()->findInstruction(Name));
    return It == P.Reasons.end() ? std::string("(member)") : It->second;
  };
  EXPECT_EQ(Reason("m"), "computation root");
  EXPECT_EQ(Reason("cc"), "opaque op");
  EXPECT_EQ(Reason("d"), "opaque op");
  EXPECT_EQ(Reason("tok"), "no users");
  // The multiply reads the tuple parameter's element at its own index.
  EXPECT_EQ(P.SubgraphOf.at(M->entry()->findInstruction("h")),
            P.SubgraphOf.at(M->entry()->findInstruction("m")));
}

TEST(WholeModule, PartitionEveryComputationOfALoop) {
  auto M = parse(LoopModule);
  ASSERT_TRUE(M);
  Context Ctx;
  for (const HloComputation *C : M->computations()) {
    PartitionedComputation P = partitionComputation(Ctx, *C);
    EXPECT_FALSE(P.Subgraphs.empty()) << C->name();
  }
  PartitionedComputation P = partitionComputation(Ctx, *M->entry());
  EXPECT_EQ(P.Reasons.at(M->entry()->findInstruction("wl")), "opaque op");
}

/// The .hlo files of \p Dir.
std::vector<std::string> hloFiles(const std::string &Dir) {
  std::vector<std::string> Out;
  if (DIR *D = opendir(Dir.c_str())) {
    while (dirent *E = readdir(D)) {
      std::string N = E->d_name;
      if (N.size() > 4 && N.compare(N.size() - 4, 4, ".hlo") == 0)
        Out.push_back(Dir + "/" + N);
    }
    closedir(D);
  }
  std::sort(Out.begin(), Out.end());
  return Out;
}

// Every computation of the real modules (JAX's dumps before and after
// optimization, XLA's syntax corpus) through the whole analysis, whatever
// it holds: while loops, collectives, tuples, tokens, complex values. No
// crash, and a thread mapping wherever the analysis finds outputs.
TEST(WholeModule, TheAnalysisTakesEveryCorpusComputation) {
  std::string Corpus = std::string(IDXMAP_EXAMPLES_DIR) + "/../corpus";
  std::vector<std::string> Files = hloFiles(Corpus + "/jax");
  for (const std::string &F : hloFiles(Corpus + "/xla"))
    Files.push_back(F);
  int Computations = 0;
  for (const std::string &Path : Files) {
    std::ifstream In(Path);
    std::stringstream SS;
    SS << In.rdbuf();
    auto M = parseHloModule(SS.str(), Path);
    if (!M)
      continue; // The parser's corpus tests own these.
    for (const HloComputation *C : (*M)->computations()) {
      SCOPED_TRACE(Path + ": " + C->name());
      ++Computations;
      Context Ctx;
      FusionAnalysis A = analyzeComputation(*C);
      (void)findUnmodeledInstruction(*C);
      (void)computeGroupedIndexing(Ctx, *C);
      (void)partitionComputation(Ctx, *C);
      if (A.Roots.empty())
        continue;
      ThreadMapping TM = heroThreadMapping(Ctx, A);
      (void)analyzeCoalescing(Ctx, A, TM, /*CountWarps=*/false);
    }
  }
  EXPECT_GT(Computations, 100);
}

} // namespace
