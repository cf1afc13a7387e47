//===- KernelInfoTest.cpp - The kernels' JSON sidecar ---------------------===//
//
// Part of idxmap. kernelsToJson and kernelsFromJson round trips, the
// optional workspace of multi-block reductions, and malformed sidecars.
//
//===----------------------------------------------------------------------===//
#include "idxmap/KernelInfo.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace idxmap;

namespace {

KernelInfo kernel(uint64_t Workspace) {
  KernelInfo K;
  K.Name = "fusion";
  K.Fusion = "fusion";
  K.Emitter = "full reduction";
  K.Grid[0] = 8192;
  K.Block[0] = 512;
  K.Params.push_back({"p0", false, Shape(PrimitiveType::F32, {1 << 20}), 16});
  K.Params.push_back({"r", true, Shape(PrimitiveType::F32, {}), 16});
  K.WorkspaceBytes = Workspace;
  return K;
}

TEST(KernelInfoJson, WorkspaceRoundTrips) {
  std::string J = kernelsToJson({kernel(32784), kernel(0)}, "m.hlo");
  // Written after "params" when nonzero, absent otherwise.
  EXPECT_NE(J.find("\"align\": 16}], \"workspace_bytes\": 32784}"),
            std::string::npos)
      << J;
  EXPECT_EQ(J.find("workspace_bytes", J.find("workspace_bytes") + 1),
            std::string::npos)
      << J;
  std::string Hlo;
  auto Ks = kernelsFromJson(J, "m.json", &Hlo);
  ASSERT_TRUE(bool(Ks)) << Ks.error().str();
  ASSERT_EQ(Ks->size(), 2u);
  EXPECT_EQ((*Ks)[0].WorkspaceBytes, 32784u);
  EXPECT_EQ((*Ks)[1].WorkspaceBytes, 0u);
  EXPECT_EQ((*Ks)[0].Params.size(), 2u);
  EXPECT_EQ(Hlo, "m.hlo");
}

TEST(KernelInfoJson, BadWorkspaceIsAnError) {
  std::string J = kernelsToJson({kernel(16)});
  for (const char *Bad : {"-16", "\"16\""}) {
    std::string T = J;
    T.replace(T.find("16}\n"), 2, Bad);
    auto Ks = kernelsFromJson(T, "m.json");
    ASSERT_FALSE(bool(Ks)) << T;
    EXPECT_NE(Ks.error().str().find("workspace_bytes"), std::string::npos)
        << Ks.error().str();
  }
}

// A sidecar nested 200,000 deep overflowed the reader's stack; the reader
// stops at 32 levels (the sidecar has 4).
TEST(KernelInfoJson, DeepNestingIsAnError) {
  std::string T = "{\"kernels\": " + std::string(200000, '[');
  auto Ks = kernelsFromJson(T, "deep.json");
  ASSERT_FALSE(bool(Ks));
  EXPECT_NE(Ks.error().Message.find("JSON nested deeper than 32 levels"),
            std::string::npos)
      << Ks.error().Message;
  EXPECT_EQ(Ks.error().Loc.Col, 44u);
  EXPECT_TRUE(bool(kernelsFromJson(kernelsToJson({kernel(0)}), "m.json")));
}

// Values the runner would size memory or index from are checked.
TEST(KernelInfoJson, OutOfRangeParametersAreErrors) {
  std::string J = kernelsToJson({kernel(0)});
  auto Replaced = [&](const std::string &From, const std::string &To) {
    std::string T = J;
    T.replace(T.find(From), From.size(), To);
    return T;
  };
  for (auto [From, To, Why] :
       {std::tuple<std::string, std::string, std::string>{
            "[1048576]", "[-1]", "dimension out of range"},
        {"[1048576]", "[4611686018427387904]", "dimension out of range"},
        {"\"layout\": [0]", "\"layout\": [3]", "not a permutation"},
        {"\"align\": 16}, {", "\"align\": 12}, {", "power of two"},
        {"\"shared_bytes\": 0", "\"shared_bytes\": 4294967296",
         "'shared_bytes' out of range"}}) {
    auto Ks = kernelsFromJson(Replaced(From, To), "m.json");
    ASSERT_FALSE(bool(Ks)) << To;
    EXPECT_NE(Ks.error().Message.find(Why), std::string::npos)
        << Ks.error().Message;
  }
}

} // namespace
