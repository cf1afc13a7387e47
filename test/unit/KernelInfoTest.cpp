//===- test/unit/KernelInfoTest.cpp - The kernels' JSON sidecar -----------===//
//
// Part of idxmap. kernelsToJson and kernelsFromJson round trips, the
// optional workspace of multi-block reductions, and malformed sidecars.
//
//===----------------------------------------------------------------------===//
#include "idxmap/KernelInfo.h"

#include <gtest/gtest.h>

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

} // namespace
