//===- test/unit/codegen/SubgraphFunctionsTest.cpp - Subgraph functions ---===//
//
// Part of idxmap. Values read at several indices become functions of their
// index (FusedElementEmitter): a chain x[k] = x[k-1] + reverse(x[k-1]),
// exponential when expanded inline, emits IR that grows linearly with its
// depth through every emitter that computes fused values (loop, reduction,
// row normalization, transpose epilogue).
//
//===----------------------------------------------------------------------===//

#include "idxmap/Emit.h"

#include <gtest/gtest.h>

#include <ctime>
#include <string>

using namespace idxmap;

namespace {

/// The fused computation `fused` of a chain of \p Levels levels over
/// parameter x0 of type \p T, reversed along \p Dim at every level; its
/// root is `x<Levels>`, or \p Tail (lines naming `x<Levels>` as `@X`) when
/// given.
std::string chainComputation(int Levels, const std::string &T, int Dim,
                             std::string Tail = "") {
  std::string S = "fused {\n  x0 = " + T + " parameter(0)\n";
  for (int K = 1; K <= Levels; ++K) {
    std::string Prev = "x" + std::to_string(K - 1), R = std::to_string(K);
    S += "  r" + R + " = " + T + " reverse(" + Prev + "), dimensions={" +
         std::to_string(Dim) + "}\n";
    S += std::string(K == Levels && Tail.empty() ? "  ROOT x" : "  x") + R +
         " = " + T + " add(" + Prev + ", r" + R + ")\n";
  }
  const std::string X = "x" + std::to_string(Levels);
  for (size_t At; (At = Tail.find("@X")) != std::string::npos;)
    Tail.replace(At, 2, X);
  return S + Tail + "}\n";
}

/// A module calling `fused` (chainComputation) on one parameter of type
/// \p T, returning \p Out.
std::string chainModule(const std::string &Fused, const std::string &T,
                        const std::string &Out, const std::string &Kind) {
  return "HloModule chain\n\nadd_f32 {\n  a = f32[] parameter(0)\n"
         "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
         "max_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT m = f32[] maximum(a, b)\n}\n\n" +
         Fused + "\nENTRY e {\n  p = " + T +
         " parameter(0)\n  ROOT f = " + Out + " fusion(p), kind=" + Kind +
         ", calls=fused\n}\n";
}

/// The LLVM IR of \p Text before the IR pipeline (the emitters' own IR),
/// or "" with a test failure.
std::string rawIr(const std::string &Text) {
  auto M = parseHloModule(Text, "chain.hlo");
  if (!M) {
    ADD_FAILURE() << M.error().str();
    return "";
  }
  EmitOptions O;
  O.Target.Optimize = false;
  O.KeepLlvmIr = true;
  auto R = emitModule(**M, O);
  if (!R) {
    ADD_FAILURE() << R.error().str();
    return "";
  }
  return R->LlvmIr;
}

/// The instructions of \p Ir (its lines indented by two blanks).
int64_t instructionCount(const std::string &Ir) {
  int64_t N = 0;
  for (size_t At = 0; (At = Ir.find("\n  ", At)) != std::string::npos; ++At)
    ++N;
  return N;
}

/// The number of times \p What occurs in \p S.
int64_t occurrences(const std::string &S, const std::string &What) {
  int64_t N = 0;
  for (size_t At = 0; (At = S.find(What, At)) != std::string::npos;
       At += What.size())
    ++N;
  return N;
}

std::string loopChain(int Levels) {
  return chainModule(chainComputation(Levels, "f32[1024]", 0), "f32[1024]",
                     "f32[1024]", "kLoop");
}

TEST(SubgraphFunctions, DeepChainIrGrowsLinearly) {
  // Inline, 24 levels took 30 s and 3 GB (20 levels) and doubled with each
  // level; a count, not a time, so that a slow machine does not fail it.
  const int64_t N24 = instructionCount(rawIr(loopChain(24)));
  const int64_t N48 = instructionCount(rawIr(loopChain(48)));
  const int64_t N96 = instructionCount(rawIr(loopChain(96)));
  EXPECT_GT(N24, 0);
  EXPECT_LT(N24, 6000);
  EXPECT_LT(N48, 3 * N24);
  EXPECT_LT(N96, 3 * N48);
}

TEST(SubgraphFunctions, DeepChainFunctionsAndCalls) {
  std::string Ir = rawIr(loopChain(24));
  // Levels 6, 12 and 18 are functions of the index and the pointer.
  EXPECT_EQ(occurrences(Ir, "define internal float"), 3);
  EXPECT_NE(Ir.find("(i32 %i0, ptr addrspace(1) noalias readonly align 16 "
                    "%x0)"),
            std::string::npos);
  // A fusion read at one index only has no function.
  std::string Plain =
      rawIr(chainModule("fused {\n  x0 = f32[1024] parameter(0)\n"
                        "  n = f32[1024] negate(x0)\n"
                        "  ROOT a = f32[1024] add(n, x0)\n}\n",
                        "f32[1024]", "f32[1024]", "kLoop"));
  EXPECT_EQ(occurrences(Plain, "define internal"), 0);
}

TEST(SubgraphFunctions, DeepChainEmitsQuickly) {
  // The whole pipeline to PTX, 96 levels: about 60 ms of CPU on a 2-core
  // VM; the bound leaves room for sanitizers and loaded machines.
  auto M = parseHloModule(loopChain(96), "chain.hlo");
  ASSERT_TRUE(bool(M)) << M.error().str();
  std::clock_t Start = std::clock();
  auto R = emitModule(**M, EmitOptions());
  double Cpu = double(std::clock() - Start) / CLOCKS_PER_SEC;
  ASSERT_TRUE(bool(R)) << R.error().str();
  EXPECT_NE(R->Ptx.find(".visible .entry f("), std::string::npos);
  EXPECT_LT(Cpu, 5.0);
}

TEST(SubgraphFunctions, EveryEmitterCallsThem) {
  const std::string T = "f32[64,1024]";
  struct Case {
    const char *Name;
    std::string Tail, Out, Kind;
  };
  const Case Cases[] = {
      // A row reduction of the chain (reduction emitter).
      {"reduce",
       "  z = f32[] constant(0)\n"
       "  ROOT s = f32[64] reduce(@X, z), dimensions={1}, to_apply=add_f32\n",
       "f32[64]", "kInput"},
      // A softmax over the chain (row normalization emitter).
      {"softmax",
       "  lo = f32[] constant(-inf)\n"
       "  m = f32[64] reduce(@X, lo), dimensions={1}, to_apply=max_f32\n"
       "  mb = f32[64,1024] broadcast(m), dimensions={0}\n"
       "  d = f32[64,1024] subtract(@X, mb)\n"
       "  e = f32[64,1024] exponential(d)\n"
       "  z = f32[] constant(0)\n"
       "  s = f32[64] reduce(e, z), dimensions={1}, to_apply=add_f32\n"
       "  sb = f32[64,1024] broadcast(s), dimensions={0}\n"
       "  ROOT o = f32[64,1024] divide(e, sb)\n",
       T, "kInput"},
      // A transpose of the chain (transpose emitter).
      {"transpose", "  ROOT t = f32[1024,64] transpose(@X), dimensions={1,0}\n",
       "f32[1024,64]", "kInput"},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Name);
    std::string Ir = rawIr(
        chainModule(chainComputation(24, T, 1, C.Tail), T, C.Out, C.Kind));
    EXPECT_GE(occurrences(Ir, "define internal float"), 3);
    EXPECT_LT(instructionCount(Ir), 20000);
  }
}

} // namespace
