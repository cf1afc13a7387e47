//===- PartitionTest.cpp - Computation partitioner ------------------------===//
//
// Part of idxmap. XLA's partitioner examples (diamond chain, concatenate
// reached with two maps, transpose used with its operand), softmax, every
// shared example, DOT structure, and seeded random DAGs checked against the
// partition invariants and against grouped indexing from each subgraph root.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Partition.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"
#include "support/CpuTime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <sys/stat.h>

using namespace idxmap;

namespace {

/// Milliseconds of this thread's CPU time since \p T0 (a threadCpuMs()).
double msSince(double T0) { return test::threadCpuMs() - T0; }

/// The repository's test/examples (IDXMAP_EXAMPLES_DIR, set by CMake).
std::string examplesDir() { return IDXMAP_EXAMPLES_DIR; }

std::unique_ptr<HloModule> parseOrDie(const std::string &Text) {
  auto M = parseHloModule(Text, "test.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str()) << "\n" << Text;
  return M ? std::move(*M) : nullptr;
}

const HloInstruction *instr(const HloComputation &C, const char *Name) {
  const HloInstruction *I = C.findInstruction(Name);
  EXPECT_NE(I, nullptr) << Name;
  return I;
}

std::vector<std::string> names(const std::vector<const HloInstruction *> &V) {
  std::vector<std::string> Out;
  for (const HloInstruction *I : V)
    Out.push_back(I->name());
  return Out;
}

std::string mapOf(const PartitionedComputation &P, const HloComputation &C,
                  const char *Name) {
  const HloInstruction *I = instr(C, Name);
  const Subgraph *S = P.subgraphOf(I);
  if (!S)
    return "<no subgraph>";
  return printMap(S->Maps.at(I));
}

const std::vector<int64_t> &valueDims(const HloInstruction &I) {
  static const std::vector<int64_t> None;
  const Shape &S = I.shape();
  if (!S.isTuple())
    return S.Dims;
  return S.TupleShapes.empty() ? None : S.TupleShapes[0].Dims;
}

/// The partition invariants. With \p CrossCheck, every joined member's map
/// must be the single (non-empty) grouped-indexing map from its subgraph's
/// first root, and every "reached with N indexing maps" root must get N maps
/// from its users' subgraph root.
void checkInvariants(Context &Ctx, const HloComputation &C,
                     const PartitionedComputation &P, bool CrossCheck) {
  SCOPED_TRACE(C.name());
  ASSERT_EQ(P.Computation, &C);
  const HloInstruction *Root = C.root();
  const HloInstruction *TupleRoot =
      Root->opcode() == HloOpcode::Tuple ? Root : nullptr;
  std::set<const HloInstruction *> Outputs;
  if (TupleRoot)
    Outputs.insert(TupleRoot->operands().begin(),
                   TupleRoot->operands().end());
  else
    Outputs.insert(Root);

  // Every non-parameter instruction (but a tuple root) is in exactly one
  // subgraph, and SubgraphOf agrees.
  std::map<const HloInstruction *, int> Count;
  for (size_t N = 0; N < P.Subgraphs.size(); ++N) {
    const Subgraph &S = P.Subgraphs[N];
    ASSERT_FALSE(S.Roots.empty());
    EXPECT_EQ(S.Name, S.Roots.front()->name());
    for (const HloInstruction *I : S.Instructions) {
      ++Count[I];
      auto It = P.SubgraphOf.find(I);
      ASSERT_NE(It, P.SubgraphOf.end()) << I->name();
      EXPECT_EQ(It->second, int(N)) << I->name();
    }
    // Definitions first.
    for (size_t K = 1; K < S.Instructions.size(); ++K)
      EXPECT_LT(S.Instructions[K - 1]->index(), S.Instructions[K]->index());
    for (const HloInstruction *R : S.Roots)
      EXPECT_TRUE(std::count(S.Instructions.begin(), S.Instructions.end(), R))
          << R->name();
  }
  for (const HloInstruction *I : C.instructions()) {
    bool Excluded = I->opcode() == HloOpcode::Parameter || I == TupleRoot;
    EXPECT_EQ(Count[I], Excluded ? 0 : 1) << I->name();
  }

  for (const Subgraph &S : P.Subgraphs) {
    std::set<const HloInstruction *> Members(S.Instructions.begin(),
                                             S.Instructions.end());
    std::set<const HloInstruction *> Roots(S.Roots.begin(), S.Roots.end());
    const HloInstruction *First = S.Roots.front();
    for (const HloInstruction *R : S.Roots) {
      ASSERT_TRUE(P.Reasons.count(R)) << R->name();
      bool UsedOutside = false;
      for (const HloInstruction *U : R->users())
        if (U != TupleRoot && !Members.count(U))
          UsedOutside = true;
      std::string Reason = P.Reasons.at(R);
      EXPECT_TRUE(UsedOutside || Outputs.count(R) || Reason == "no users")
          << R->name() << " is a root without outside users: " << Reason;
      if (R != First) {
        EXPECT_TRUE(Outputs.count(R)) << "extra roots are outputs";
        EXPECT_EQ(valueDims(*R), valueDims(*First));
      }
    }
    // A first root's users all lie in other subgraphs.
    for (const HloInstruction *U : First->users())
      EXPECT_TRUE(U == TupleRoot || !Members.count(U)) << First->name();
    for (const HloInstruction *I : S.Instructions) {
      if (!Roots.count(I)) {
        for (const HloInstruction *U : I->users()) {
          EXPECT_TRUE(Members.count(U))
              << I->name() << " is used by " << U->name()
              << " outside its subgraph " << S.Name;
        }
      }
      auto M = S.Maps.find(I);
      ASSERT_NE(M, S.Maps.end()) << I->name();
      ASSERT_FALSE(M->second.isUndefined()) << I->name();
      EXPECT_EQ(M->second.numDims(), valueDims(*First).size()) << I->name();
      if (!M->second.isKnownEmpty()) {
        EXPECT_EQ(M->second.numResults(), valueDims(*I).size()) << I->name();
      }
    }
  }

  if (!CrossCheck)
    return;
  for (const Subgraph &S : P.Subgraphs) {
    GroupedIndexing G = computeGroupedIndexing(Ctx, C, S.Roots.front());
    for (const HloInstruction *I : S.Instructions) {
      if (I == S.Roots.front())
        continue;
      std::vector<IndexingMap> NonEmpty;
      for (const OperandMap &OM : G[I])
        if (!OM.Map.isKnownEmpty())
          NonEmpty.push_back(OM.Map);
      IndexingMap Ours = S.Maps.at(I);
      if (Ours.isKnownEmpty()) {
        EXPECT_TRUE(NonEmpty.empty()) << I->name();
        continue;
      }
      simplify(Ours);
      ASSERT_EQ(NonEmpty.size(), 1u) << I->name() << " in " << S.Name;
      EXPECT_EQ(printMap(NonEmpty[0]), printMap(Ours)) << I->name();
    }
  }
  std::regex Reached("reached with ([0-9]+) indexing maps");
  for (const auto &[I, Reason] : P.Reasons) {
    std::smatch Match;
    if (!std::regex_match(Reason, Match, Reached))
      continue;
    size_t Want = std::stoul(Match[1]);
    EXPECT_GE(Want, 2u);
    const HloInstruction *User = nullptr;
    for (const HloInstruction *U : I->users())
      if (U != TupleRoot)
        User = U;
    ASSERT_NE(User, nullptr);
    const Subgraph &US = *P.subgraphOf(User);
    GroupedIndexing G = computeGroupedIndexing(Ctx, C, US.Roots.front());
    size_t Got = 0;
    for (const OperandMap &OM : G[I])
      Got += !OM.Map.isKnownEmpty();
    EXPECT_EQ(Got, Want) << I->name();
  }
}

//===----------------------------------------------------------------------===//
// XLA's examples
//===----------------------------------------------------------------------===//

/// add(slice(x, [0:n]), slice(x, [1:n+1])) repeated \p Depth times.
std::string diamondChain(int Depth, int64_t N) {
  std::ostringstream OS;
  OS << "HloModule chain\nENTRY e {\n";
  int64_t Len = N + Depth;
  OS << "  x0 = f32[" << Len << "] parameter(0)\n";
  for (int K = 1; K <= Depth; ++K) {
    int64_t Out = Len - 1;
    OS << "  a" << K << " = f32[" << Out << "] slice(x" << K - 1
       << "), slice={[0:" << Out << "]}\n";
    OS << "  b" << K << " = f32[" << Out << "] slice(x" << K - 1
       << "), slice={[1:" << Len << "]}\n";
    OS << "  " << (K == Depth ? "ROOT " : "") << "x" << K << " = f32[" << Out
       << "] add(a" << K << ", b" << K << ")\n";
    Len = Out;
  }
  OS << "}\n";
  return OS.str();
}

TEST(Partition, DiamondChainIsLinear) {
  auto M = parseOrDie(diamondChain(60, 128));
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  Context Ctx;
  double T0 = test::threadCpuMs();
  PartitionedComputation P = partitionComputation(Ctx, C);
  double Ms = msSince(T0);
  std::cout << "[ partition ] 60-deep diamond chain: " << Ms << " ms\n";
  EXPECT_LT(Ms, 100.0);
  // One subgraph per add, each {a_k, b_k, x_k}; nothing duplicated.
  ASSERT_EQ(P.Subgraphs.size(), 60u);
  for (int K = 1; K <= 60; ++K) {
    std::string X = "x" + std::to_string(K);
    const Subgraph *S = P.subgraphOf(instr(C, X.c_str()));
    ASSERT_NE(S, nullptr);
    EXPECT_EQ(names(S->Roots), std::vector<std::string>{X});
    EXPECT_EQ(names(S->Instructions),
              (std::vector<std::string>{"a" + std::to_string(K),
                                        "b" + std::to_string(K), X}));
    EXPECT_EQ(P.Reasons.at(S->Roots[0]),
              K == 60 ? "computation root" : "reached with 2 indexing maps");
    EXPECT_TRUE(S->NoCompute == false);
  }
  EXPECT_EQ(P.Subgraphs[0].Name, "x60");
  // Maps go to each member's output: the slices are read at the root's
  // index; their operand x59 would be read at d0 and d0 + 1.
  EXPECT_EQ(mapOf(P, C, "b60"), "(d0) -> (d0), domain: d0 in [0, 127]");
  EXPECT_EQ(mapOf(P, C, "b1"), "(d0) -> (d0), domain: d0 in [0, 186]");
  checkInvariants(Ctx, C, P, /*CrossCheck=*/false);
}

TEST(Partition, ConcatenateReachedWithTwoMaps) {
  auto M = parseOrDie(R"(HloModule m
ENTRY f {
  p = f32[6] parameter(0)
  l = f32[6] log(p)
  n = f32[6] negate(l)
  a = f32[6] add(l, p)
  e = f32[6] exponential(a)
  ROOT c = f32[12] concatenate(n, e), dimensions={0}
})");
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, C);
  ASSERT_EQ(P.Subgraphs.size(), 2u);
  EXPECT_EQ(names(P.Subgraphs[0].Roots), std::vector<std::string>{"c"});
  EXPECT_EQ(names(P.Subgraphs[0].Instructions),
            (std::vector<std::string>{"n", "a", "e", "c"}));
  EXPECT_EQ(names(P.Subgraphs[1].Roots), std::vector<std::string>{"l"});
  EXPECT_EQ(names(P.Subgraphs[1].Instructions), std::vector<std::string>{"l"});
  EXPECT_EQ(P.Reasons.at(instr(C, "l")), "reached with 2 indexing maps");
  EXPECT_EQ(P.Reasons.at(instr(C, "c")), "computation root");
  EXPECT_EQ(P.SubgraphOf.count(instr(C, "p")), 0u);
  EXPECT_EQ(mapOf(P, C, "n"), "(d0) -> (d0), domain: d0 in [0, 5]");
  EXPECT_EQ(mapOf(P, C, "e"), "(d0) -> (d0 - 6), domain: d0 in [6, 11]");
  EXPECT_EQ(mapOf(P, C, "l"), "(d0) -> (d0), domain: d0 in [0, 5]");
  EXPECT_EQ(P.str(), R"(computation f: 2 subgraphs
subgraph 0: c
  root c: computation root
  n = negate: (d0) -> (d0), domain: d0 in [0, 5]
  a = add: (d0) -> (d0 - 6), domain: d0 in [6, 11]
  e = exponential: (d0) -> (d0 - 6), domain: d0 in [6, 11]
  c = concatenate: (d0) -> (d0), domain: d0 in [0, 11]
subgraph 1: l
  root l: reached with 2 indexing maps
  l = log: (d0) -> (d0), domain: d0 in [0, 5]
)");
  checkInvariants(Ctx, C, P, true);
}

TEST(Partition, TransposeUsedWithItsOperand) {
  auto M = parseOrDie(R"(HloModule m
ENTRY f {
  p0 = f32[8,16] parameter(0)
  p1 = f32[8,16] parameter(1)
  add = f32[8,16] add(p0, p1)
  t = f32[16,8] transpose(add), dimensions={1,0}
  tt = f32[8,16] transpose(t), dimensions={1,0}
  ROOT sub = f32[8,16] subtract(add, tt)
})");
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, C);
  // A transpose of a transpose reads `add` at the same index: one map, so
  // `add` joins. A single transpose does not.
  ASSERT_EQ(P.Subgraphs.size(), 1u);

  M = parseOrDie(R"(HloModule m
ENTRY f {
  p0 = f32[8,8] parameter(0)
  p1 = f32[8,8] parameter(1)
  add = f32[8,8] add(p0, p1)
  t = f32[8,8] transpose(add), dimensions={1,0}
  ROOT sub = f32[8,8] subtract(add, t)
})");
  ASSERT_TRUE(M);
  const HloComputation &C2 = *M->entry();
  P = partitionComputation(Ctx, C2);
  ASSERT_EQ(P.Subgraphs.size(), 2u);
  EXPECT_EQ(names(P.Subgraphs[0].Instructions),
            (std::vector<std::string>{"t", "sub"}));
  EXPECT_EQ(names(P.Subgraphs[1].Instructions),
            std::vector<std::string>{"add"});
  EXPECT_EQ(P.Reasons.at(instr(C2, "add")), "reached with 2 indexing maps");
  EXPECT_EQ(mapOf(P, C2, "t"),
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 7], d1 in [0, 7]");
  EXPECT_FALSE(P.Subgraphs[0].NoCompute);
  EXPECT_FALSE(P.Subgraphs[1].NoCompute);
  checkInvariants(Ctx, C2, P, true);
}

//===----------------------------------------------------------------------===//
// Roots, heroes, tuples, unknown indexing, runtime variables
//===----------------------------------------------------------------------===//

const char *SoftmaxBody = R"(HloModule softmax
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY fused_softmax {
  x = f32[64,128] parameter(0)
  ninf = f32[] constant(-inf)
  rmax = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  bmax = f32[64,128] broadcast(rmax), dimensions={0}
  shifted = f32[64,128] subtract(x, bmax)
  e = f32[64,128] exponential(shifted)
  zero = f32[] constant(0)
  rsum = f32[64] reduce(e, zero), dimensions={1}, to_apply=add_f32
  bsum = f32[64,128] broadcast(rsum), dimensions={0}
  ROOT out = f32[64,128] divide(e, bsum)
})";

TEST(Partition, SoftmaxWithAndWithoutHeroes) {
  auto M = parseOrDie(SoftmaxBody);
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, C);
  // `e` is read at (d0, d1) by the divide and at (d0, s0) by the reduce.
  ASSERT_EQ(P.Subgraphs.size(), 2u);
  EXPECT_EQ(names(P.Subgraphs[0].Instructions),
            (std::vector<std::string>{"zero", "rsum", "bsum", "out"}));
  EXPECT_EQ(names(P.Subgraphs[1].Instructions),
            (std::vector<std::string>{"ninf", "rmax", "bmax", "shifted",
                                      "e"}));
  EXPECT_EQ(P.Reasons.at(instr(C, "e")), "reached with 2 indexing maps");
  EXPECT_EQ(mapOf(P, C, "rsum"),
            "(d0, d1) -> (d0), domain: d0 in [0, 63], d1 in [0, 127]");
  EXPECT_EQ(mapOf(P, C, "zero"),
            "(d0, d1) -> (), domain: d0 in [0, 63], d1 in [0, 127]");
  checkInvariants(Ctx, C, P, true);

  // Reductions as heroes: each roots its own subgraph.
  PartitionOptions O;
  O.IsForcedRoot = [](const HloInstruction &I) {
    return I.opcode() == HloOpcode::Reduce;
  };
  P = partitionComputation(Ctx, C, O);
  ASSERT_EQ(P.Subgraphs.size(), 4u);
  EXPECT_EQ(P.Reasons.at(instr(C, "rsum")), "hero");
  EXPECT_EQ(P.Reasons.at(instr(C, "rmax")), "hero");
  EXPECT_EQ(P.Reasons.at(instr(C, "e")), "users in 2 subgraphs");
  EXPECT_EQ(names(P.subgraphOf(instr(C, "rsum"))->Instructions),
            (std::vector<std::string>{"zero", "rsum"}));
  EXPECT_EQ(mapOf(P, C, "zero"), "(d0) -> (), domain: d0 in [0, 63]");
  EXPECT_EQ(names(P.subgraphOf(instr(C, "e"))->Instructions),
            (std::vector<std::string>{"bmax", "shifted", "e"}));
  checkInvariants(Ctx, C, P, true);

  // The same through the list of forced roots, with a custom reason.
  PartitionOptions L;
  L.ForcedRoots = {instr(C, "rmax")};
  L.ForcedReason = "reduction hero";
  P = partitionComputation(Ctx, C, L);
  EXPECT_EQ(P.Reasons.at(instr(C, "rmax")), "reduction hero");
  EXPECT_EQ(P.Subgraphs.size(), 3u);
  checkInvariants(Ctx, C, P, true);
}

TEST(Partition, SoftmaxExampleFile) {
  std::string Path = examplesDir() + "/softmax_f32_4096x4096.hlo";
  std::ifstream F(Path);
  ASSERT_TRUE(F) << "cannot read " << Path;
  std::stringstream SS;
  SS << F.rdbuf();
  auto M = parseOrDie(SS.str());
  ASSERT_TRUE(M);
  const HloComputation *C = M->findComputation("fused_softmax");
  ASSERT_NE(C, nullptr);
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, *C);
  ASSERT_EQ(P.Subgraphs.size(), 2u);
  EXPECT_EQ(P.Subgraphs[1].Name, "e");
  EXPECT_EQ(mapOf(P, *C, "rmax"),
            "(d0, d1) -> (d0), domain: d0 in [0, 4095], d1 in [0, 4095]");
  checkInvariants(Ctx, *C, P, true);
}

TEST(Partition, TupleRootOutputs) {
  auto M = parseOrDie(R"(HloModule m
ENTRY f {
  p = f32[8,8] parameter(0)
  e = f32[8,8] exponential(p)
  n = f32[8,8] negate(e)
  l = f32[8,8] log(p)
  s = f32[4,8] slice(l), slice={[2:6], [0:8]}
  c = f32[4,8] cosine(s)
  g = f32[8,8] sine(p)
  h = f32[8,8] tanh(g)
  k = f32[8,8] abs(g)
  ROOT t = (f32[8,8], f32[8,8], f32[4,8], f32[8,8], f32[8,8], f32[8,8], f32[8,8], f32[8,8]) tuple(n, e, c, l, p, h, k, g)
})");
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, C);
  // `e` is an output read by `n` at the same index: it joins n's subgraph
  // as a second root. `l` is read by the slice at another index: it is an
  // output of its own. `g` is used by two output subgraphs.
  const Subgraph *SN = P.subgraphOf(instr(C, "n"));
  ASSERT_NE(SN, nullptr);
  EXPECT_EQ(names(SN->Roots), (std::vector<std::string>{"n", "e"}));
  EXPECT_EQ(names(SN->Instructions), (std::vector<std::string>{"e", "n"}));
  EXPECT_EQ(P.Reasons.at(instr(C, "e")), "computation root");
  EXPECT_EQ(mapOf(P, C, "e"),
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 7], d1 in [0, 7]");
  const Subgraph *SL = P.subgraphOf(instr(C, "l"));
  EXPECT_EQ(names(SL->Roots), std::vector<std::string>{"l"});
  EXPECT_EQ(P.Reasons.at(instr(C, "l")), "computation root");
  EXPECT_EQ(names(P.subgraphOf(instr(C, "c"))->Instructions),
            (std::vector<std::string>{"s", "c"}));
  EXPECT_EQ(mapOf(P, C, "s"),
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 7]");
  EXPECT_EQ(P.Reasons.at(instr(C, "g")), "users in 2 subgraphs");
  EXPECT_EQ(P.SubgraphOf.count(instr(C, "t")), 0u);
  EXPECT_EQ(P.SubgraphOf.count(instr(C, "p")), 0u);
  // n+e, l, s+c, h, k, g.
  EXPECT_EQ(P.Subgraphs.size(), 6u);
  checkInvariants(Ctx, C, P, true);
}

TEST(Partition, UnknownIndexingMakesRootsNotCrashes) {
  auto M = parseOrDie(R"(HloModule m
ENTRY f {
  p = f32[8] parameter(0)
  e = f32[8] exponential(p)
  b = s16[8,2] bitcast(e)
  ROOT n = s16[8,2] negate(b)
})");
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, C);
  ASSERT_EQ(P.Subgraphs.size(), 2u);
  EXPECT_EQ(P.Reasons.at(instr(C, "e")), "unknown indexing");
  EXPECT_EQ(names(P.Subgraphs[0].Instructions),
            (std::vector<std::string>{"b", "n"}));
  checkInvariants(Ctx, C, P, false);
}

TEST(Partition, DeadCodeAndLeaves) {
  auto M = parseOrDie(R"(HloModule m
ENTRY f {
  p = f32[4,8] parameter(0)
  io = s32[4,8] iota(), iota_dimension=1
  cv = f32[4,8] convert(io)
  one = f32[] constant(1)
  bo = f32[4,8] broadcast(one), dimensions={}
  dead = f32[4,8] negate(p)
  a = f32[4,8] add(cv, bo)
  ROOT r = f32[4,8] multiply(a, p)
})");
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, C);
  ASSERT_EQ(P.Subgraphs.size(), 2u);
  EXPECT_EQ(P.Reasons.at(instr(C, "dead")), "no users");
  EXPECT_EQ(names(P.subgraphOf(instr(C, "r"))->Instructions),
            (std::vector<std::string>{"io", "cv", "one", "bo", "a", "r"}));
  EXPECT_EQ(mapOf(P, C, "one"),
            "(d0, d1) -> (), domain: d0 in [0, 3], d1 in [0, 7]");
  checkInvariants(Ctx, C, P, true);
}

TEST(Partition, NoComputeSubgraphs) {
  auto M = parseOrDie(R"(HloModule m
ENTRY f {
  p = f32[4,8] parameter(0)
  t = f32[8,4] transpose(p), dimensions={1,0}
  s = f32[8,2] slice(t), slice={[0:8], [1:3]}
  r = f32[16] reshape(s)
  v = f32[16] reverse(r), dimensions={0}
  c = f32[16] copy(v)
  b = f32[3,16] broadcast(c), dimensions={1}
  n = f32[3,16] negate(b)
  ROOT o = (f32[3,16], f32[3,16]) tuple(b, n)
})");
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, C);
  // b is an output that n reads at the same index: one subgraph, which
  // computes (negate).
  ASSERT_EQ(P.Subgraphs.size(), 1u);
  EXPECT_FALSE(P.Subgraphs[0].NoCompute);
  EXPECT_EQ(names(P.Subgraphs[0].Roots), (std::vector<std::string>{"n", "b"}));

  M = parseOrDie(R"(HloModule m
ENTRY f {
  p = f32[4,8] parameter(0)
  t = f32[8,4] transpose(p), dimensions={1,0}
  s = f32[8,2] slice(t), slice={[0:8], [1:3]}
  r = f32[16] reshape(s)
  v = f32[16] reverse(r), dimensions={0}
  c = f32[16] copy(v)
  ROOT b = f32[3,16] broadcast(c), dimensions={1}
})");
  ASSERT_TRUE(M);
  const HloComputation &C2 = *M->entry();
  P = partitionComputation(Ctx, C2);
  ASSERT_EQ(P.Subgraphs.size(), 1u);
  EXPECT_TRUE(P.Subgraphs[0].NoCompute);
  EXPECT_NE(P.str().find("subgraph 0: b (no compute)"), std::string::npos)
      << P.str();
  // p read through transpose, slice, reshape, reverse, broadcast: t's map
  // from the root.
  EXPECT_EQ(mapOf(P, C2, "c"),
            "(d0, d1) -> (d1), domain: d0 in [0, 2], d1 in [0, 15]");
  checkInvariants(Ctx, C2, P, true);
}

TEST(Partition, RuntimeVariablesDistinguishMaps) {
  const char *Tmpl = R"(HloModule m
ENTRY f {
  p = f32[16] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  e = f32[16] exponential(p)
  d1 = f32[4] dynamic-slice(e, i), dynamic_slice_sizes={4}
  d2 = f32[4] dynamic-slice(e, OFF), dynamic_slice_sizes={4}
  ROOT a = f32[4] add(d1, d2)
})";
  Context Ctx;
  for (bool Same : {true, false}) {
    std::string Text = Tmpl;
    Text.replace(Text.find("OFF"), 3, Same ? "i" : "j");
    auto M = parseOrDie(Text);
    ASSERT_TRUE(M);
    const HloComputation &C = *M->entry();
    PartitionedComputation P = partitionComputation(Ctx, C);
    // Same offset: e is read at d0 + rt0 with rt0 = i both times. Different
    // offsets: the maps look alike but their runtime variables differ.
    EXPECT_EQ(P.Subgraphs.size(), Same ? 1u : 2u) << P.str();
    if (Same) {
      const Subgraph &S = P.Subgraphs[0];
      const HloInstruction *E = instr(C, "e");
      ASSERT_EQ(S.Bindings.count(E), 1u);
      ASSERT_EQ(S.Bindings.at(E).size(), 1u);
      EXPECT_EQ(S.Bindings.at(E)[0].Source->name(), "i");
      EXPECT_NE(P.str().find("    rt0: i; "), std::string::npos) << P.str();
    } else {
      EXPECT_EQ(P.Reasons.at(instr(C, "e")), "reached with 2 indexing maps");
    }
    checkInvariants(Ctx, C, P, false);
  }
}

TEST(Partition, VariadicReduceThroughTuples) {
  auto M = parseOrDie(R"(HloModule m
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  g = pred[] compare(a, b), direction=GE
  m = f32[] select(g, a, b)
  mi = s32[] select(g, ai, bi)
  ROOT t = (f32[], s32[]) tuple(m, mi)
}
ENTRY f {
  p = f32[4,8] parameter(0)
  e = f32[4,8] exponential(p)
  io = s32[4,8] iota(), iota_dimension=1
  z = f32[] constant(0)
  zi = s32[] constant(0)
  r = (f32[4], s32[4]) reduce(e, io, z, zi), dimensions={1}, to_apply=argmax
  v = f32[4] get-tuple-element(r), index=0
  w = s32[4] get-tuple-element(r), index=1
  cw = f32[4] convert(w)
  ROOT s = f32[4] add(v, cw)
})");
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, C);
  ASSERT_EQ(P.Subgraphs.size(), 1u) << P.str();
  EXPECT_EQ(mapOf(P, C, "e"),
            "(d0)[s0] -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 7]");
  checkInvariants(Ctx, C, P, true);
}

TEST(Partition, InnerTuplesNeverCrash) {
  // A tuple inside the computation whose outputs have different dims: one
  // identity cannot stand for both, so its operands become roots.
  auto M = parseOrDie(R"(HloModule m
ENTRY f {
  p = f32[4] parameter(0)
  q = f32[8] parameter(1)
  e = f32[4] exponential(p)
  l = f32[8] log(q)
  t = (f32[4], f32[8]) tuple(e, l)
  g0 = f32[4] get-tuple-element(t), index=0
  g1 = f32[8] get-tuple-element(t), index=1
  n1 = f32[8] negate(g1)
  ROOT o = (f32[4], f32[8]) tuple(g0, n1)
})");
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  Context Ctx;
  PartitionedComputation P = partitionComputation(Ctx, C);
  EXPECT_EQ(P.Reasons.at(instr(C, "t")), "users in 2 subgraphs");
  EXPECT_EQ(P.Reasons.at(instr(C, "e")), "unknown indexing");
  EXPECT_EQ(P.Reasons.at(instr(C, "l")), "unknown indexing");
  EXPECT_EQ(names(P.subgraphOf(instr(C, "n1"))->Instructions),
            (std::vector<std::string>{"g1", "n1"}));

  // Only output 1 is read: the tuple's map is the identity on its dims.
  M = parseOrDie(R"(HloModule m
ENTRY f {
  p = f32[4] parameter(0)
  q = f32[8] parameter(1)
  e = f32[4] exponential(p)
  l = f32[8] log(q)
  t = (f32[4], f32[8]) tuple(e, l)
  g1 = f32[8] get-tuple-element(t), index=1
  ROOT n1 = f32[8] negate(g1)
})");
  ASSERT_TRUE(M);
  const HloComputation &C2 = *M->entry();
  P = partitionComputation(Ctx, C2);
  EXPECT_EQ(P.Subgraphs.size(), 2u) << P.str();
  EXPECT_EQ(mapOf(P, C2, "l"), "(d0) -> (d0), domain: d0 in [0, 7]");
  EXPECT_EQ(mapOf(P, C2, "t"), "(d0) -> (d0), domain: d0 in [0, 7]");
  EXPECT_EQ(P.Reasons.at(instr(C2, "e")), "not read");
}

//===----------------------------------------------------------------------===//
// DOT
//===----------------------------------------------------------------------===//

/// Checks that \p Dot is one digraph with balanced braces, whose statements
/// are all of the forms write_graphviz emits, with one `cluster_N` per
/// subgraph and each member node declared inside its cluster.
void checkDot(const std::string &Dot, const HloComputation &C,
              const PartitionedComputation &P) {
  std::istringstream In(Dot);
  std::string Line, Stmt;
  std::vector<std::string> Stack;
  std::map<int, std::string> NodeCluster; // node id -> enclosing graph
  std::map<int, std::string> NodeLabel;
  std::regex Open(R"(^(digraph|subgraph) ("[^"]*"|[A-Za-z_][A-Za-z_0-9]*) \{$)");
  std::regex Node(R"re(^([0-9]+)\[(.*)\];$)re");
  std::regex Edge(R"(^([0-9]+) -> ([0-9]+);$)");
  std::regex Attr(R"re(^[a-z]+=("([^"\\]|\\.)*"|[A-Za-z_0-9.]+)(, [a-z]+=("([^"\\]|\\.)*"|[A-Za-z_0-9.]+))*$)re");
  std::regex Label(R"re(label="([^"]*)")re");
  int Graphs = 0;
  // Attribute blocks span lines: `graph [` ... `];`.
  bool InAttrBlock = false;
  while (std::getline(In, Line)) {
    std::smatch Mt;
    if (InAttrBlock) {
      ASSERT_GE(Line.size(), 2u);
      ASSERT_EQ(Line.substr(Line.size() - 2), "];") << Line;
      std::string Body = Line.substr(0, Line.size() - 2);
      EXPECT_TRUE(std::regex_match(Body, Attr)) << Line;
      InAttrBlock = false;
      continue;
    }
    if (std::regex_match(Line, Mt, Open)) {
      if (Mt[1] == "digraph") {
        EXPECT_TRUE(Stack.empty());
        ++Graphs;
      } else {
        EXPECT_EQ(Stack.size(), 1u) << "clusters are not nested";
      }
      std::string Name = Mt[2];
      if (!Name.empty() && Name[0] == '"')
        Name = Name.substr(1, Name.size() - 2);
      Stack.push_back(Name);
    } else if (Line == "}") {
      ASSERT_FALSE(Stack.empty());
      Stack.pop_back();
    } else if (Line == "graph [" || Line == "node [" || Line == "edge [") {
      InAttrBlock = true;
    } else if (std::regex_match(Line, Mt, Node)) {
      ASSERT_FALSE(Stack.empty());
      int Id = std::stoi(Mt[1]);
      EXPECT_EQ(NodeCluster.count(Id), 0u) << "node declared twice";
      NodeCluster[Id] = Stack.back();
      std::string Attrs = Mt[2];
      EXPECT_TRUE(std::regex_match(Attrs, Attr)) << Line;
      std::smatch L;
      ASSERT_TRUE(std::regex_search(Attrs, L, Label)) << Line;
      NodeLabel[Id] = L[1];
    } else if (std::regex_match(Line, Mt, Edge)) {
      ASSERT_FALSE(Stack.empty());
      EXPECT_TRUE(NodeCluster.count(std::stoi(Mt[1])) &&
                  NodeCluster.count(std::stoi(Mt[2])))
          << "edge before its nodes: " << Line;
    } else {
      ADD_FAILURE() << "unexpected DOT line: " << Line;
    }
  }
  EXPECT_TRUE(Stack.empty());
  EXPECT_EQ(Graphs, 1);
  EXPECT_EQ(NodeCluster.size(), C.instructions().size());
  for (const HloInstruction *I : C.instructions()) {
    int Id = int(I->index());
    auto It = P.SubgraphOf.find(I);
    // The label: `name = opcode`, then the map from the subgraph's root
    // with its domain on the next line (`\n` in the DOT text).
    std::string WantLabel =
        I->name() + " = " + std::string(opcodeName(I->opcode()));
    if (It != P.SubgraphOf.end()) {
      auto M = P.Subgraphs[It->second].Maps.find(I);
      if (M != P.Subgraphs[It->second].Maps.end() &&
          !M->second.isUndefined()) {
        std::string Map = printMap(M->second);
        size_t Domain = Map.find(", domain: ");
        if (Domain != std::string::npos)
          Map = Map.substr(0, Domain) + "\\n" + Map.substr(Domain + 2);
        WantLabel += "\\n" + Map;
      }
    }
    EXPECT_EQ(NodeLabel[Id], WantLabel);
    std::string Want = It == P.SubgraphOf.end()
                           ? C.name()
                           : "cluster_" + std::to_string(It->second);
    EXPECT_EQ(NodeCluster[Id], Want) << I->name();
  }
  size_t Clusters = 0;
  for (size_t Pos = 0; (Pos = Dot.find("subgraph cluster_", Pos)) !=
                       std::string::npos;
       ++Pos)
    ++Clusters;
  EXPECT_EQ(Clusters, P.Subgraphs.size());
}

TEST(Partition, DotHasOneClusterPerSubgraph) {
  auto M = parseOrDie(SoftmaxBody);
  ASSERT_TRUE(M);
  const HloComputation &C = *M->entry();
  Context Ctx;
  PartitionOptions O;
  O.IsForcedRoot = [](const HloInstruction &I) {
    return I.opcode() == HloOpcode::Reduce;
  };
  PartitionedComputation P = partitionComputation(Ctx, C, O);
  std::string Dot = P.toDot();
  checkDot(Dot, C, P);
  EXPECT_NE(Dot.find("digraph fused_softmax {"), std::string::npos) << Dot;
  EXPECT_NE(Dot.find("label=\"1: rsum [roots: rsum]\""), std::string::npos)
      << Dot;
  // Edges inside a cluster are written inside it; e -> rsum crosses.
  std::string Cluster1 = Dot.substr(Dot.find("subgraph cluster_1 {"));
  Cluster1 = Cluster1.substr(0, Cluster1.find("}\n"));
  int Zero = int(instr(C, "zero")->index()),
      Rsum = int(instr(C, "rsum")->index()), E = int(instr(C, "e")->index());
  EXPECT_NE(Cluster1.find(std::to_string(Zero) + " -> " +
                          std::to_string(Rsum) + ";"),
            std::string::npos)
      << Cluster1;
  EXPECT_EQ(Cluster1.find(std::to_string(E) + " -> "), std::string::npos);

  // Names that are not DOT identifiers are quoted.
  auto M2 = parseOrDie(R"(HloModule m
ENTRY %fused.computation-1 {
  %p.0 = f32[4] parameter(0)
  ROOT %n.1 = f32[4] negate(%p.0)
})");
  ASSERT_TRUE(M2);
  P = partitionComputation(Ctx, *M2->entry());
  Dot = P.toDot();
  EXPECT_NE(Dot.find("digraph \"fused.computation-1\" {"), std::string::npos)
      << Dot;
  checkDot(Dot, *M2->entry(), P);
}

//===----------------------------------------------------------------------===//
// Every shared example
//===----------------------------------------------------------------------===//



std::vector<std::string> hloFiles(const std::string &Dir) {
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

TEST(Partition, EveryExamplePartitions) {
  std::string Dir = examplesDir();
  std::vector<std::string> Files = hloFiles(Dir);
  std::vector<std::string> Dumps = hloFiles(Dir + "/xla-dumps");
  Files.insert(Files.end(), Dumps.begin(), Dumps.end());
  ASSERT_FALSE(Files.empty()) << "no examples at " << Dir;
  EXPECT_GE(Files.size(), 20u);
  Context Ctx;
  size_t Fusions = 0;
  for (const std::string &Path : Files) {
    SCOPED_TRACE(Path);
    std::ifstream F(Path);
    std::stringstream SS;
    SS << F.rdbuf();
    auto M = parseHloModule(SS.str(), Path);
    ASSERT_TRUE(bool(M)) << M.error().str();
    for (const HloInstruction *Fu : (*M)->fusions()) {
      const HloComputation *C = Fu->fusedComputation();
      ASSERT_NE(C, nullptr);
      ++Fusions;
      double T0 = test::threadCpuMs();
      PartitionedComputation P = partitionComputation(Ctx, *C);
      EXPECT_LT(msSince(T0), 100.0);
      checkInvariants(Ctx, *C, P, true);
      checkDot(P.toDot(), *C, P);
    }
  }
  EXPECT_GE(Fusions, Files.size());
}

//===----------------------------------------------------------------------===//
// Random DAGs
//===----------------------------------------------------------------------===//

/// A seeded random DAG of elementwise, slice, broadcast, transpose,
/// reverse, reduce and concatenate ops over small f32 shapes; every sink is
/// an output (a tuple root when there are several).
class RandomDag {
public:
  RandomDag(uint64_t Seed, int Size) : Rng(Seed) { build(Size); }
  const std::string &text() const { return Text; }

private:
  struct Node {
    std::string Name;
    std::vector<int64_t> Dims;
    int Users = 0;
  };

  int64_t pick(int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(Rng);
  }
  std::string shapeStr(const std::vector<int64_t> &D) {
    std::string S = "f32[";
    for (size_t K = 0; K < D.size(); ++K)
      S += (K ? "," : "") + std::to_string(D[K]);
    return S + "]";
  }
  std::vector<int64_t> randomDims() {
    static const int64_t Sizes[] = {2, 3, 4, 8};
    std::vector<int64_t> D(pick(1, 3));
    for (int64_t &X : D)
      X = Sizes[pick(0, 3)];
    return D;
  }
  /// Favours recent nodes so that long diamonds form; never a scalar (the
  /// constants feeding broadcasts and reduces).
  size_t operand() {
    // Half of the time, a value nobody uses yet (fewer outputs, deeper
    // graphs).
    if (pick(0, 1)) {
      std::vector<size_t> Unused;
      for (size_t K = 0; K < Nodes.size(); ++K)
        if (!Nodes[K].Users && !Nodes[K].Dims.empty())
          Unused.push_back(K);
      if (!Unused.empty())
        return Unused[size_t(pick(0, int64_t(Unused.size()) - 1))];
    }
    for (;;) {
      size_t N = Nodes.size();
      size_t K = N > 6 && pick(0, 9) < 7 ? N - 1 - size_t(pick(0, 5))
                                         : size_t(pick(0, int64_t(N) - 1));
      if (!Nodes[K].Dims.empty())
        return K;
    }
  }
  std::string use(size_t K) {
    ++Nodes[K].Users;
    return Nodes[K].Name;
  }
  void add(std::vector<int64_t> Dims, const std::string &Rhs) {
    std::string Name = "n" + std::to_string(Nodes.size());
    OS << "  " << Name << " = " << shapeStr(Dims) << " " << Rhs << "\n";
    Nodes.push_back({Name, std::move(Dims)});
  }
  static std::string list(const std::vector<int64_t> &V) {
    std::string S = "{";
    for (size_t K = 0; K < V.size(); ++K)
      S += (K ? "," : "") + std::to_string(V[K]);
    return S + "}";
  }

  void build(int Size) {
    OS << "HloModule random\nadd {\n  a = f32[] parameter(0)\n"
       << "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
       << "ENTRY f {\n";
    int Params = int(pick(1, 3));
    for (int K = 0; K < Params; ++K)
      add(randomDims(), "parameter(" + std::to_string(K) + ")");
    static const char *Unary[] = {"negate", "exponential", "abs", "tanh"};
    static const char *Binary[] = {"add", "multiply", "subtract", "maximum"};
    while (int(Nodes.size()) < Size) {
      int Kind = int(pick(0, 99));
      size_t A = operand();
      std::vector<int64_t> D = Nodes[A].Dims;
      if (Kind < 22) {
        add(D, std::string(Unary[pick(0, 3)]) + "(" + use(A) + ")");
      } else if (Kind < 50) {
        std::vector<size_t> Same;
        for (size_t K = 0; K < Nodes.size(); ++K)
          if (K != A && Nodes[K].Dims == D)
            Same.push_back(K);
        size_t B = Same.empty() ? A : Same[pick(0, int64_t(Same.size()) - 1)];
        std::string LhsName = use(A);
        std::string RhsName = B == A ? LhsName : use(B);
        add(D, std::string(Binary[pick(0, 3)]) + "(" + LhsName + ", " +
                   RhsName + ")");
      } else if (Kind < 64) {
        // slice with random starts, limits and strides 1 or 2.
        std::string Spec = "{";
        std::vector<int64_t> Out;
        for (size_t K = 0; K < D.size(); ++K) {
          int64_t Start = pick(0, D[K] - 1), Limit = pick(Start + 1, D[K]);
          int64_t Stride = pick(1, 2);
          Out.push_back((Limit - Start + Stride - 1) / Stride);
          Spec += std::string(K ? ", " : "") + "[" + std::to_string(Start) +
                  ":" + std::to_string(Limit) +
                  (Stride > 1 ? ":" + std::to_string(Stride) : "") + "]";
        }
        add(Out, "slice(" + use(A) + "), slice=" + Spec + "}");
      } else if (Kind < 74) {
        if (D.size() >= 3) {
          add(D, "negate(" + use(A) + ")");
          continue;
        }
        // Insert a new dim at a random position.
        size_t Pos = size_t(pick(0, int64_t(D.size())));
        std::vector<int64_t> Out = D, Map;
        Out.insert(Out.begin() + Pos, int64_t(pick(2, 4)));
        for (size_t K = 0; K < Out.size(); ++K)
          if (K != Pos)
            Map.push_back(int64_t(K));
        add(Out, "broadcast(" + use(A) + "), dimensions=" + list(Map));
      } else if (Kind < 84) {
        std::vector<int64_t> Perm(D.size());
        for (size_t K = 0; K < Perm.size(); ++K)
          Perm[K] = int64_t(K);
        std::shuffle(Perm.begin(), Perm.end(), Rng);
        std::vector<int64_t> Out;
        for (int64_t P : Perm)
          Out.push_back(D[P]);
        add(Out, "transpose(" + use(A) + "), dimensions=" + list(Perm));
      } else if (Kind < 88) {
        add(D, "reverse(" + use(A) + "), dimensions={" +
                   std::to_string(pick(0, int64_t(D.size()) - 1)) + "}");
      } else if (Kind < 92) {
        // Leaves: a broadcast constant or an iota.
        std::vector<int64_t> Out = randomDims();
        if (pick(0, 1)) {
          add({}, "constant(" + std::to_string(pick(1, 9)) + ")");
          add(Out, "broadcast(" + use(Nodes.size() - 1) + "), dimensions={}");
        } else {
          add(Out, "iota(), iota_dimension=" +
                       std::to_string(pick(0, int64_t(Out.size()) - 1)));
        }
      } else if (Kind < 96) {
        if (D.size() < 2) {
          add(D, "abs(" + use(A) + ")");
          continue;
        }
        int64_t R = pick(0, int64_t(D.size()) - 1);
        std::vector<int64_t> Out = D;
        Out.erase(Out.begin() + R);
        add({}, "constant(0)");
        add(Out, "reduce(" + use(A) + ", " + use(Nodes.size() - 1) +
                     "), dimensions={" + std::to_string(R) +
                     "}, to_apply=add");
      } else {
        // Concatenate A with itself or another node of the same shape
        // along a random dim.
        std::vector<size_t> Same;
        for (size_t K = 0; K < Nodes.size(); ++K)
          if (Nodes[K].Dims == D)
            Same.push_back(K);
        size_t B = Same[pick(0, int64_t(Same.size()) - 1)];
        int64_t Dim = pick(0, int64_t(D.size()) - 1);
        std::vector<int64_t> Out = D;
        Out[Dim] *= 2;
        std::string LhsName = use(A);
        std::string RhsName = B == A ? LhsName : use(B);
        add(Out, "concatenate(" + LhsName + ", " + RhsName +
                     "), dimensions={" + std::to_string(Dim) + "}");
      }
    }
    std::vector<size_t> Sinks;
    for (size_t K = Params; K < Nodes.size(); ++K)
      if (Nodes[K].Users == 0)
        Sinks.push_back(K);
    if (Sinks.size() == 1) {
      Text = OS.str();
      std::string Last = "  " + Nodes[Sinks[0]].Name + " = ";
      size_t Pos = Text.rfind(Last);
      Text.insert(Pos + 2, "ROOT ");
      Text += "}\n";
      return;
    }
    std::string Shapes = "(", Ops;
    for (size_t K = 0; K < Sinks.size(); ++K) {
      Shapes += (K ? ", " : "") + shapeStr(Nodes[Sinks[K]].Dims);
      Ops += (K ? ", " : "") + Nodes[Sinks[K]].Name;
    }
    OS << "  ROOT out = " << Shapes << ") tuple(" << Ops << ")\n}\n";
    Text = OS.str();
  }

  std::mt19937_64 Rng;
  std::ostringstream OS;
  std::vector<Node> Nodes;
  std::string Text;
};

TEST(Partition, RandomDags) {
  Context Ctx;
  double Total = 0, Worst = 0, DotMs = 0;
  size_t Subgraphs = 0, Instrs = 0, Graphs = 0;
  std::map<std::string, int> ReasonCounts;
  for (uint64_t Seed = 1; Seed <= 150; ++Seed) {
    int Size = int(Seed % 5 == 0 ? 200 : 10 + Seed % 60);
    RandomDag G(Seed, Size);
    SCOPED_TRACE("seed " + std::to_string(Seed));
    auto M = parseHloModule(G.text(), "random.hlo");
    ASSERT_TRUE(bool(M)) << M.error().str() << "\n" << G.text();
    const HloComputation &C = *(*M)->entry();
    PartitionOptions O;
    if (Seed % 3 == 0) {
      // Some random heroes.
      std::mt19937_64 R(Seed);
      for (const HloInstruction *I : C.instructions())
        if (I->opcode() != HloOpcode::Parameter && R() % 10 == 0)
          O.ForcedRoots.push_back(I);
    }
    double T0 = test::threadCpuMs();
    PartitionedComputation P = partitionComputation(Ctx, C, O);
    double Ms = msSince(T0);
    Total += Ms;
    Worst = std::max(Worst, Ms);
    EXPECT_LT(Ms, 200.0) << C.instructionCount() << " instructions";
    ++Graphs;
    Subgraphs += P.Subgraphs.size();
    Instrs += size_t(C.instructionCount());
    for (const auto &KV : P.Reasons) {
      std::string R = KV.second;
      if (R.rfind("reached with", 0) == 0)
        R = "reached with N indexing maps";
      if (R.rfind("users in", 0) == 0)
        R = "users in N subgraphs";
      ++ReasonCounts[R];
    }
    checkInvariants(Ctx, C, P, /*CrossCheck=*/Size <= 70);
    if (Seed % 25 == 1 || Seed == 100) {
      T0 = test::threadCpuMs();
      std::string Dot = P.toDot();
      DotMs = std::max(DotMs, msSince(T0));
      checkDot(Dot, C, P);
    }
    if (::testing::Test::HasFailure()) {
      std::cout << G.text() << "\n" << P.str();
      return;
    }
  }
  std::cout << "[ partition ] " << Graphs << " random DAGs, " << Instrs
            << " instructions, " << Subgraphs << " subgraphs: total " << Total
            << " ms, worst " << Worst << " ms; slowest toDot " << DotMs
            << " ms\n";
  for (const auto &KV : ReasonCounts)
    std::cout << "[ partition ]   " << KV.first << ": " << KV.second << "\n";
  // The generator must exercise every kind of decision.
  EXPECT_GT(ReasonCounts["reached with N indexing maps"], 0);
  EXPECT_GT(ReasonCounts["users in N subgraphs"], 0);
  EXPECT_GT(ReasonCounts["computation root"], 0);
  EXPECT_GT(ReasonCounts["hero"], 0);
}

} // namespace
