//===- SidecarTest.cpp - The kernels' JSON sidecar ------------------------===//
//
// Part of idxmap. sidecarToJson and sidecarFromJson round trips, the
// workspace of multi-block reductions, old unversioned sidecars, strings
// that need escaping, malformed sidecars, and the buffer plan of a module.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Sidecar.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace idxmap;

namespace {

KernelInfo kernel(uint64_t Workspace, std::string Name = "fusion") {
  KernelInfo K;
  K.Name = Name;
  K.Fusion = Name;
  K.Emitter = "full reduction";
  K.Grid[0] = 8192;
  K.Block[0] = 512;
  K.Params.push_back({"p0", false, Shape(PrimitiveType::F32, {1 << 20}), 16});
  K.Params.push_back({"r", true, Shape(PrimitiveType::F32, {}), 16});
  K.WorkspaceBytes = Workspace;
  return K;
}

std::string sidecar(std::vector<KernelInfo> Ks, std::string Hlo = "") {
  Sidecar S;
  S.Target = "sm_90";
  S.PtxVersion = "8.5";
  S.Hlo = std::move(Hlo);
  S.Kernels = std::move(Ks);
  return sidecarToJson(S);
}

TEST(SidecarJson, RoundTrips) {
  std::string J = sidecar({kernel(32784), kernel(0, "f2")}, "m.hlo");
  EXPECT_EQ(J.rfind("{\"schema_version\": 1,\n \"target\": \"sm_90\",\n "
                    "\"ptx_version\": \"8.5\",\n \"hlo\": \"m.hlo\",\n",
                    0),
            0u)
      << J;
  EXPECT_NE(J.find("\"align\": 16}], \"workspace_bytes\": 32784, "
                   "\"aliases\": []}"),
            std::string::npos)
      << J;
  auto S = sidecarFromJson(J, "m.json");
  ASSERT_TRUE(bool(S)) << S.error().str();
  EXPECT_EQ(S->SchemaVersion, 1);
  EXPECT_EQ(S->Target, "sm_90");
  EXPECT_EQ(S->PtxVersion, "8.5");
  EXPECT_EQ(S->Hlo, "m.hlo");
  ASSERT_EQ(S->Kernels.size(), 2u);
  EXPECT_EQ(S->Kernels[0].WorkspaceBytes, 32784u);
  EXPECT_EQ(S->Kernels[1].WorkspaceBytes, 0u);
  EXPECT_EQ(S->Kernels[0].Params.size(), 2u);
  EXPECT_EQ(sidecarToJson(*S), J);
  // A reduction's rounding depth is written when nonzero and read back.
  KernelInfo Deep = kernel(0, "deep");
  Deep.RoundingDepth = 2000;
  std::string JD = sidecar({Deep, kernel(0)});
  EXPECT_NE(JD.find("\"workspace_bytes\": 0, \"rounding_depth\": 2000, "),
            std::string::npos)
      << JD;
  auto SD = sidecarFromJson(JD, "m.json");
  ASSERT_TRUE(bool(SD)) << SD.error().str();
  EXPECT_EQ(SD->Kernels[0].RoundingDepth, 2000);
  EXPECT_EQ(SD->Kernels[1].RoundingDepth, 0);
  EXPECT_EQ(sidecarToJson(*SD), JD);
}

// Paths are written by the library: tabs, quotes, backslashes and newlines
// are escaped, and read back unchanged.
TEST(SidecarJson, EscapesStrings) {
  std::string Path = "dir\twith \"quotes\"\\and\nnewline/m.hlo";
  std::string J = sidecar({kernel(0)}, Path);
  EXPECT_NE(J.find(R"("hlo": "dir\twith \"quotes\"\\and\nnewline/m.hlo")"),
            std::string::npos)
      << J;
  auto S = sidecarFromJson(J, "m.json");
  ASSERT_TRUE(bool(S)) << S.error().str();
  EXPECT_EQ(S->Hlo, Path);
}

// Sidecars written before schema_version: one "shared_bytes" (static), no
// workspace when 0, no target.
TEST(SidecarJson, ReadsUnversionedSidecars) {
  std::string Old =
      "{\"hlo\": \"m.hlo\",\n \"kernels\": [\n  {\"name\": \"fusion\", "
      "\"fusion\": \"fusion\", \"emitter\": \"transpose\", \"grid\": [600, 1, "
      "1], \"block\": [128, 1, 1], \"shared_bytes\": 4096, \"params\": "
      "[{\"name\": \"p\", \"role\": \"input\", \"type\": \"f32\", \"shape\": "
      "[4, 8], \"layout\": [1, 0], \"align\": 16}]}\n]}\n";
  auto S = sidecarFromJson(Old, "old.json");
  ASSERT_TRUE(bool(S)) << S.error().str();
  EXPECT_EQ(S->SchemaVersion, 0);
  EXPECT_EQ(S->Kernels[0].SharedBytes, 4096u);
  EXPECT_EQ(S->Kernels[0].DynamicSharedBytes, 0u);
  EXPECT_EQ(S->Kernels[0].Params[0].Buffer, -1);
}

TEST(SidecarJson, NewerSchemaIsAnError) {
  std::string J = sidecar({kernel(0)});
  J.replace(J.find("\"schema_version\": 1"), 19, "\"schema_version\": 2");
  auto S = sidecarFromJson(J, "m.json");
  ASSERT_FALSE(bool(S));
  EXPECT_EQ(S.error().str().rfind(
                "m.json:1:20: error: schema_version 2 is newer than this "
                "reader's (1)",
                0),
            0u)
      << S.error().str();
}

TEST(SidecarJson, SyntaxErrorsHaveLocations) {
  auto S = sidecarFromJson("{\"kernels\": [}\n", "bad.json");
  ASSERT_FALSE(bool(S));
  EXPECT_EQ(S.error().Loc.Line, 1u);
  EXPECT_EQ(S.error().Loc.Col, 14u);
  EXPECT_NE(S.error().Message.find("syntax error"), std::string::npos)
      << S.error().Message;
}

// nlohmann throws out_of_range, not parse_error, for a number too large for
// a double (found by fuzz_sidecar; it terminated the process).
TEST(SidecarJson, NumberOverflowIsAnError) {
  auto S = sidecarFromJson("{\"kernels\": [1e999]}", "big.json");
  ASSERT_FALSE(bool(S));
  EXPECT_EQ(S.error().str().rfind("big.json:1:14: error: number overflow "
                                  "parsing '1e999'",
                                  0),
            0u)
      << S.error().str();
}

TEST(SidecarJson, BadWorkspaceIsAnError) {
  std::string J = sidecar({kernel(16)});
  for (const char *Bad : {"-16", "\"16\""}) {
    std::string T = J;
    T.replace(T.find("\"workspace_bytes\": 16") + 19, 2, Bad);
    auto S = sidecarFromJson(T, "m.json");
    ASSERT_FALSE(bool(S)) << T;
    EXPECT_NE(S.error().str().find("workspace_bytes"), std::string::npos)
        << S.error().str();
    // At the value, on the kernel's line.
    EXPECT_EQ(S.error().Loc.Line, 5u) << S.error().str();
    EXPECT_EQ(S.error().Loc.Col, T.find(Bad) - T.rfind('\n', T.find(Bad)))
        << S.error().str();
  }
}

// A sidecar nested 200,000 deep must not overflow a stack; the reader stops
// at 32 levels (the sidecar has 5).
TEST(SidecarJson, DeepNestingIsAnError) {
  std::string T = "{\"kernels\": " + std::string(200000, '[');
  auto S = sidecarFromJson(T, "deep.json");
  ASSERT_FALSE(bool(S));
  EXPECT_NE(S.error().Message.find("JSON nested deeper than 32 levels"),
            std::string::npos)
      << S.error().Message;
  EXPECT_EQ(S.error().Loc.Col, 44u);
}

// Values the runner would size memory or index from are checked.
TEST(SidecarJson, OutOfRangeParametersAreErrors) {
  std::string J = sidecar({kernel(0)});
  auto Replaced = [&](const std::string &From, const std::string &To) {
    std::string T = J;
    T.replace(T.find(From), From.size(), To);
    return T;
  };
  for (auto [From, To, Why] :
       {std::tuple<std::string, std::string, std::string>{
            "[1048576]", "[-1]", "dimension out of range"},
        {"[1048576]", "[4611686018427387904]", "dimension out of range"},
        {"[1048576]", "[18446744073709551615]", "expected an integer"},
        {"\"layout\": [0]", "\"layout\": [3]", "not a permutation"},
        {"\"align\": 16}, {", "\"align\": 12}, {", "power of two"},
        {"\"static_shared_bytes\": 0", "\"static_shared_bytes\": 4294967296",
         "'static_shared_bytes' out of range"},
        {"\"aliases\": []", "\"aliases\": [{\"output\": 0, \"input\": 1}]",
         "pairs an output with an input"},
        {"\"type\": \"f32\"", "\"type\": \"tuple\"", "unknown element type"},
        {"\"grid\": [8192, 1, 1]", "\"grid\": [8192, 1]", "3 integers"}}) {
    auto S = sidecarFromJson(Replaced(From, To), "m.json");
    ASSERT_FALSE(bool(S)) << To;
    EXPECT_NE(S.error().Message.find(Why), std::string::npos)
        << S.error().Message;
  }
}

TEST(SidecarJson, AliasesRoundTrip) {
  KernelInfo K = kernel(0);
  K.Aliases.push_back({1, 0});
  auto S = sidecarFromJson(sidecar({K}), "m.json");
  ASSERT_TRUE(bool(S)) << S.error().str();
  ASSERT_EQ(S->Kernels[0].Aliases.size(), 1u);
  EXPECT_EQ(S->Kernels[0].Aliases[0].Output, 1u);
  EXPECT_EQ(S->Kernels[0].Aliases[0].Input, 0u);
}

// Two kernels of one module: an ENTRY parameter, an intermediate written by
// the first and read by the second, and two results of a tuple. The kernels
// are listed out of order; launch_order follows ENTRY.
TEST(SidecarPlan, WiresKernelsToEntry) {
  const char *Text = R"(HloModule m
fa {
  x = f32[16] parameter(0)
  ROOT e = f32[16] exponential(x)
}
fb {
  y = f32[16] parameter(0)
  ROOT n = f32[16] negate(y)
}
ENTRY main {
  p = f32[16] parameter(0)
  a = f32[16] fusion(p), kind=kLoop, calls=fa
  b = f32[16] fusion(a), kind=kLoop, calls=fb
  ROOT t = (f32[16], f32[16]) tuple(b, a)
}
)";
  auto M = parseHloModule(Text, "m.hlo");
  ASSERT_TRUE(bool(M)) << M.error().str();
  auto Kernel = [](const char *Name, const char *In, const char *Out) {
    KernelInfo K;
    K.Name = K.Fusion = Name;
    K.Emitter = "loop";
    K.Params.push_back({In, false, Shape(PrimitiveType::F32, {16}), 16});
    K.Params.push_back({Out, true, Shape(PrimitiveType::F32, {16}), 16});
    return K;
  };
  Sidecar S;
  S.Kernels = {Kernel("b", "y", "n"), Kernel("a", "x", "e")};
  planBuffers(**M, S);
  EXPECT_EQ(S.LaunchOrder, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(S.Buffers.size(), 3u);
  // b's input is a's output: one buffer, ENTRY result 1 (tuple(b, a)).
  const SidecarBuffer &A = S.Buffers[size_t(S.Kernels[0].Params[0].Buffer)];
  EXPECT_EQ(S.Kernels[0].Params[0].Buffer, S.Kernels[1].Params[1].Buffer);
  EXPECT_EQ(A.Name, "a");
  EXPECT_EQ(A.BufferKind, SidecarBuffer::Kind::Result);
  EXPECT_EQ(A.Index, 1);
  EXPECT_EQ(A.Bytes, 64u);
  const SidecarBuffer &B = S.Buffers[size_t(S.Kernels[0].Params[1].Buffer)];
  EXPECT_EQ(B.BufferKind, SidecarBuffer::Kind::Result);
  EXPECT_EQ(B.Index, 0);
  const SidecarBuffer &P = S.Buffers[size_t(S.Kernels[1].Params[0].Buffer)];
  EXPECT_EQ(P.BufferKind, SidecarBuffer::Kind::Parameter);
  EXPECT_EQ(P.Name, "p");
  EXPECT_EQ(P.Index, 0);
  // And back through JSON.
  auto R = sidecarFromJson(sidecarToJson(S), "m.json");
  ASSERT_TRUE(bool(R)) << R.error().str();
  EXPECT_EQ(sidecarToJson(*R), sidecarToJson(S));
}

TEST(SidecarPaths, RelativeToTheSidecar) {
  EXPECT_EQ(sidecarHloPath("m.hlo", "out/m.json"), "../m.hlo");
  EXPECT_EQ(sidecarHloPath("a/m.hlo", "a/m.json"), "m.hlo");
  EXPECT_EQ(sidecarHloPath("/abs/m.hlo", "/abs/out/m.json"), "../m.hlo");
  EXPECT_EQ(sidecarHloPath("-", "m.json"), "");
  EXPECT_EQ(sidecarHloPath("/abs/m.hlo", ""), "/abs/m.hlo");
  EXPECT_EQ(sidecarHloPath("/work/m.hlo", "/tmp/out/m.json"), "/work/m.hlo");
  EXPECT_EQ(resolveSidecarHlo("../m.hlo", "out/m.json"), "out/../m.hlo");
  EXPECT_EQ(resolveSidecarHlo("m.hlo", "m.json"), "m.hlo");
  EXPECT_EQ(resolveSidecarHlo("/abs/m.hlo", "out/m.json"), "/abs/m.hlo");
  EXPECT_EQ(sidecarPathFor("out/k.ptx"), "out/k.json");
  EXPECT_EQ(sidecarPathFor("k.s"), "k.s.json");
}

} // namespace
