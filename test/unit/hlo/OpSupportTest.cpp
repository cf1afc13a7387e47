//===- OpSupportTest.cpp - The op-support predicates match the dispatch --===//
//
// Part of idxmap. hasOutputToInputIndexing / hasInputToOutputIndexing list
// the ops the indexing dispatch handles (docs/HLO_OPS.md is printed from
// them). Over every instruction of the real-HLO corpus (test/corpus: JAX
// dumps and hand-written modules using every opcode): an op the predicate
// leaves out gets UNDEFINED maps for every operand, and an op it lists gets
// a defined map on at least one of its instances in the corpus.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"
#include "idxmap/HloIndexing.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace idxmap;

namespace {

std::vector<std::unique_ptr<HloModule>> corpusModules() {
  std::vector<std::unique_ptr<HloModule>> Out;
  std::vector<std::filesystem::path> Files;
  for (const char *Dir : {"jax", "xla"})
    for (const auto &E : std::filesystem::directory_iterator(
             std::filesystem::path(IDXMAP_CORPUS_DIR) / Dir))
      if (E.path().extension() == ".hlo")
        Files.push_back(E.path());
  std::sort(Files.begin(), Files.end());
  for (const auto &F : Files) {
    std::ifstream In(F);
    std::stringstream SS;
    SS << In.rdbuf();
    auto M = parseHloModule(SS.str(), F.string());
    EXPECT_TRUE(bool(M)) << F << ": " << (M ? "" : M.error().str());
    if (M)
      Out.push_back(std::move(*M));
  }
  return Out;
}

bool anyDefined(const InstructionIndexing &X) {
  for (const auto &Maps : X.Operands)
    for (const OperandMap &M : Maps)
      if (!M.Map.isUndefined())
        return true;
  return false;
}

TEST(OpSupport, PredicatesMatchTheIndexingOnTheCorpus) {
  std::vector<std::unique_ptr<HloModule>> Modules = corpusModules();
  ASSERT_GE(Modules.size(), 40u);
  std::map<std::string, bool> SeenO2I, SeenI2O;
  int64_t Instructions = 0;
  for (const auto &M : Modules)
    for (const HloComputation *C : M->computations())
      for (const HloInstruction *I : C->instructions()) {
        ++Instructions;
        Context Ctx;
        HloOpcode Op = I->opcode();
        std::string Name(opcodeName(Op));
        bool O2I = anyDefined(computeOutputToInputIndexing(Ctx, *I));
        bool I2O = false;
        for (int64_t K = 0; K < I->operandCount(); ++K)
          I2O |= anyDefined(computeInputToOutputIndexing(Ctx, *I, K));
        if (!hasOutputToInputIndexing(Op))
          EXPECT_FALSE(O2I) << Name << " '" << I->name()
                            << "' has output-to-input maps; list it";
        else
          SeenO2I[Name] |= O2I || I->operandCount() == 0;
        if (!hasInputToOutputIndexing(Op))
          EXPECT_FALSE(I2O) << Name << " '" << I->name()
                            << "' has input-to-output maps; list it";
        else if (I->operandCount() > 0)
          SeenI2O[Name] |= I2O;
      }
  EXPECT_GT(Instructions, 5000);
  for (const auto &[Name, Defined] : SeenO2I)
    EXPECT_TRUE(Defined) << Name
                         << ": listed, but no corpus instance has "
                            "an output-to-input map";
  for (const auto &[Name, Defined] : SeenI2O)
    EXPECT_TRUE(Defined) << Name
                         << ": listed, but no corpus instance has "
                            "an input-to-output map";
}

} // namespace
