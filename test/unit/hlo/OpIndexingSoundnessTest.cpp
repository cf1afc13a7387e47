//===- OpIndexingSoundnessTest.cpp - Every op's maps vs. the interpreter --===//
//
// Part of idxmap. For every op kind the indexing handles, several random
// instances (shapes of rank 0-4 with size-1 and odd extents, layouts,
// strides, negative and interior padding, several reduced dims, variadic
// reduces, scalar select/clamp operands, f32/bf16/s32/pred) built by
// support/RandomHlo.h with parameters as operands:
//   - computeOutputToInputIndexing is checked against the reference
//     interpreter with checkDependencies: sound always, exact where the
//     generator proves it must be (RandomFusion::Exact);
//   - where computeInputToOutputIndexing is defined, it is checked to be the
//     inverse relation: o in in->out(e) iff e in out->in(o), by enumeration.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/HloInterpreter.h"
#include "idxmap/Print.h"

#include "support/HloDeps.h"
#include "support/RandomHlo.h"

#include <gtest/gtest.h>

using namespace idxmap;
using namespace idxmap::testing;

namespace {

constexpr uint64_t SeedsPerOp = 25;

/// Operand \p K of \p Op has a defined input-to-output indexing (the list of
/// HloIndexing.h; pad's padding value is not mapped).
bool hasInputToOutput(HloOpcode Op, int64_t K) {
  if (isElementwise(Op) || Op == HloOpcode::Copy)
    return true;
  switch (Op) {
  case HloOpcode::Broadcast:
  case HloOpcode::Transpose:
  case HloOpcode::Reshape:
  case HloOpcode::Bitcast:
  case HloOpcode::Slice:
  case HloOpcode::Reverse:
  case HloOpcode::Concatenate:
  case HloOpcode::Reduce:
  case HloOpcode::Map:
  case HloOpcode::Sort:
  case HloOpcode::AllGather:
    return true;
  case HloOpcode::Pad:
    return K == 0;
  case HloOpcode::DynamicUpdateSlice:
    return K == 1;
  default:
    return false;
  }
}

/// Ops for which some of the generated instances must be checked for
/// exactness (not only soundness).
bool expectsExactCases(HloOpcode Op) {
  switch (Op) {
  case HloOpcode::Add:
  case HloOpcode::Subtract:
  case HloOpcode::Negate:
  case HloOpcode::Exp:
  case HloOpcode::Broadcast:
  case HloOpcode::Reshape:
  case HloOpcode::Bitcast:
  case HloOpcode::Transpose:
  case HloOpcode::Copy:
  case HloOpcode::Slice:
  case HloOpcode::Pad:
  case HloOpcode::Reverse:
  case HloOpcode::Concatenate:
  case HloOpcode::Reduce:
  case HloOpcode::Tuple:
  case HloOpcode::Dot:
  case HloOpcode::Convolution:
  case HloOpcode::ReduceWindow:
  case HloOpcode::Map:
    return true;
  default:
    return false;
  }
}

std::string testName(HloOpcode Op) {
  std::string N(opcodeName(Op));
  for (char &C : N)
    if (C == '-')
      C = '_';
  return N;
}

class OpSoundnessTest : public ::testing::TestWithParam<HloOpcode> {};

TEST_P(OpSoundnessTest, MapsNameTheDependencies) {
  HloOpcode Op = GetParam();
  int64_t Checks = 0, ExactChecks = 0, Pairs = 0, InversePairs = 0;
  for (uint64_t Seed = 1; Seed <= SeedsPerOp; ++Seed) {
    RandomHloOptions O;
    O.RootOp = Op;
    RandomFusion F = generateRandomFusion(Seed * 7919 + uint64_t(Op), O);
    ASSERT_FALSE(F.Text.empty()) << "no instance of " << opcodeName(Op);
    SCOPED_TRACE(F.Text);
    auto M = parseHloModule(F.Text, "op.hlo");
    ASSERT_TRUE(bool(M)) << M.error().str();
    const HloComputation *C = (*M)->findComputation(F.FusedName);
    ASSERT_NE(C, nullptr);
    // The instruction under test: the root, or the variadic reduce under a
    // get-tuple-element root.
    const HloInstruction *I = &opUnderTest(*C);
    int64_t GteIndex = -1;
    if (I->opcode() == HloOpcode::GetTupleElement) {
      GteIndex = I->tupleIndex();
      I = I->operand(0);
    }
    HloOpcode Want = Op == HloOpcode::GetTupleElement ? HloOpcode::Reduce : Op;
    ASSERT_EQ(opcodeName(I->opcode()), opcodeName(Want));
    for (const HloInstruction *Operand : I->operands())
      ASSERT_EQ(Operand->opcode(), HloOpcode::Parameter);

    Context Ctx;
    for (unsigned Out = 0; Out < F.NumOutputs; ++Out) {
      int64_t OpOut = GteIndex >= 0 ? GteIndex : int64_t(Out);
      InstructionIndexing Idx = computeOutputToInputIndexing(Ctx, *I, OpOut);
      ASSERT_EQ(int64_t(Idx.Operands.size()), I->operandCount());
      for (int64_t P = 0; P < C->parameterCount(); ++P) {
        // A parameter used by several operands is read through all their
        // maps.
        std::vector<OperandMap> Maps;
        for (int64_t K = 0; K < I->operandCount(); ++K)
          if (I->operand(K) == C->parameter(P))
            Maps.insert(Maps.end(), Idx.Operands[size_t(K)].begin(),
                        Idx.Operands[size_t(K)].end());
        bool Exact = F.Exact[Out][size_t(P)];
        DepCheckResult R = checkDependencies(*C, P, Maps, Exact, Seed, Out);
        EXPECT_TRUE(R.Ok) << "output " << Out << ", parameter " << P
                          << (Exact ? " (exact): " : " (sound): ") << R.Message
                          << "\n"
                          << Idx.str();
        EXPECT_FALSE(R.Undefined) << Idx.str();
        ++Checks;
        ExactChecks += Exact && !Maps.empty();
        Pairs += R.Pairs;
      }
    }
    for (int64_t K = 0; K < I->operandCount(); ++K) {
      InverseCheckResult R = checkInverseConsistency(Ctx, *I, K);
      if (!hasInputToOutput(I->opcode(), K)) {
        EXPECT_TRUE(R.Skipped) << "operand " << K;
        continue;
      }
      EXPECT_FALSE(R.Skipped)
          << "operand " << K << ": input-to-output indexing is UNDEFINED";
      EXPECT_TRUE(R.Ok) << "operand " << K << ": " << R.Message;
      InversePairs += R.Pairs;
    }
  }
  EXPECT_GT(Checks, 0);
  // The interpreter saw real dependencies (the check is not vacuous); only
  // is-finite is constant on the checker's finite inputs.
  if (Op != HloOpcode::IsFinite) {
    EXPECT_GT(Pairs, 0);
  }
  if (expectsExactCases(Op)) {
    EXPECT_GT(ExactChecks, 0) << "no instance was checked for exactness";
  }
  if (hasInputToOutput(
          Op == HloOpcode::GetTupleElement ? HloOpcode::Reduce : Op, 0)) {
    EXPECT_GT(InversePairs, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOp, OpSoundnessTest,
                         ::testing::ValuesIn(singleOpOpcodes()),
                         [](const auto &Info) { return testName(Info.param); });

TEST(RandomHloTest, DeterministicAndParses) {
  for (uint64_t Seed = 100; Seed < 140; ++Seed) {
    RandomFusion A = generateRandomFusion(Seed);
    RandomFusion B = generateRandomFusion(Seed);
    EXPECT_EQ(A.Text, B.Text);
    auto M = parseHloModule(A.Text, "random.hlo");
    ASSERT_TRUE(bool(M)) << M.error().str() << "\n" << A.Text;
    const HloComputation *C = (*M)->findComputation(A.FusedName);
    ASSERT_NE(C, nullptr);
    EXPECT_EQ(C->parameterCount(), int64_t(A.NumParams));
    EXPECT_GE(A.Ops.size(), 2u);
    ASSERT_EQ(A.Exact.size(), A.NumOutputs);
  }
  EXPECT_NE(generateRandomFusion(1).Text, generateRandomFusion(2).Text);
}

/// StructuredPercent leaves the fusion the seed gives as it is (the GPU
/// tests' modules depend on it) and only adds structure: the structured
/// module has tuples, nested fusions or calls, the same parameters, outputs
/// and exactness, and computes bit-identical outputs in the interpreter.
TEST(RandomHloTest, StructuredFusionsComputeTheSameValues) {
  RandomHloOptions On;
  On.StructuredPercent = 100;
  int Structured = 0;
  for (uint64_t Seed = 1; Seed <= 60; ++Seed) {
    SCOPED_TRACE(Seed);
    RandomFusion Plain = generateRandomFusion(Seed);
    RandomFusion S = generateRandomFusion(Seed, On);
    EXPECT_FALSE(Plain.Structured);
    EXPECT_EQ(Plain.Text.find("nested_"), std::string::npos);
    EXPECT_EQ(Plain.Text.find("_gte"), std::string::npos);
    if (!S.Structured)
      continue;
    ++Structured;
    EXPECT_NE(S.Text, Plain.Text);
    EXPECT_EQ(S.NumParams, Plain.NumParams);
    EXPECT_EQ(S.NumOutputs, Plain.NumOutputs);
    EXPECT_EQ(S.Exact, Plain.Exact);
    auto MP = parseHloModule(Plain.Text, "plain.hlo");
    auto MS = parseHloModule(S.Text, "structured.hlo");
    ASSERT_TRUE(bool(MP)) << MP.error().str();
    ASSERT_TRUE(bool(MS)) << MS.error().str() << "\n" << S.Text;
    const HloComputation *CP = (*MP)->findComputation(Plain.FusedName);
    const HloComputation *CS = (*MS)->findComputation(S.FusedName);
    ASSERT_TRUE(CP && CS);
    std::vector<Literal> Args;
    for (int64_t P = 0; P < CP->parameterCount(); ++P) {
      Args.emplace_back(CP->parameter(P)->shape());
      Args.back().fillRandom(Seed * 100 + uint64_t(P));
    }
    auto RP = evaluate(*CP, Args);
    auto RS = evaluate(*CS, Args);
    ASSERT_TRUE(bool(RP)) << RP.error().str();
    ASSERT_TRUE(bool(RS)) << RS.error().str() << "\n" << S.Text;
    ASSERT_EQ(RP->size(), RS->size());
    for (size_t K = 0; K < RP->size(); ++K)
      EXPECT_TRUE((*RP)[K].bitwiseEqual((*RS)[K])) << "output " << K;
  }
  EXPECT_GT(Structured, 50);
}

/// The exactness rules of RandomFusion::Exact are not vacuous: exact-op
/// fusions are mostly exact, but not always (cancelling diamonds such as
/// `p - p`, exp chains that overflow).
TEST(RandomHloTest, ExactOpFusionsAreMostlyExact) {
  RandomHloOptions O;
  O.ExactOpsOnly = true;
  int64_t Exact = 0, Inexact = 0;
  for (uint64_t Seed = 1; Seed <= 200; ++Seed) {
    RandomFusion F = generateRandomFusion(Seed, O);
    for (const auto &PerOut : F.Exact)
      for (bool E : PerOut)
        (E ? Exact : Inexact) += 1;
  }
  EXPECT_GT(Exact, 4 * Inexact);
  EXPECT_GT(Inexact, 0);
}

} // namespace
