//===- TuneCacheTest.cpp - The tune cache and the fusion fingerprint ------===//
//
// Part of idxmap. Fingerprints: kept by renaming and metadata, changed by a
// shape, layout, opcode, attribute or reducer change. The cache: insert
// replaces, lookups by the driver's device name, the JSON round trip, and
// located errors for bad files.
//
//===----------------------------------------------------------------------===//
#include "idxmap/TuneCache.h"
#include "idxmap/Fusion.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace idxmap;

namespace {

/// A row-sum module; \p Subst replaces text in it (renames, changes).
std::string rowSumText(const std::string &Shape = "f32[64,128]{1,0}",
                       const std::string &Reducer = "add",
                       const std::string &Metadata = "") {
  return "HloModule m\n"
         "add_f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  ROOT s = f32[] " +
         Reducer +
         "(a, b)\n}\n"
         "fused_sum {\n  x = " +
         Shape +
         " parameter(0)\n  z = f32[] constant(0)\n"
         "  ROOT r = f32[64]{0} reduce(x, z), dimensions={1}, to_apply=add_f" +
         Metadata +
         "\n}\n"
         "ENTRY main {\n  p = " +
         Shape +
         " parameter(0)\n"
         "  ROOT fusion.1 = f32[64]{0} fusion(p), kind=kInput, "
         "calls=fused_sum\n}\n";
}

std::string fingerprintOf(const std::string &Text) {
  auto M = parseHloModule(Text, "t.hlo");
  EXPECT_TRUE(M) << M.error().str();
  if (!M)
    return "";
  std::vector<const HloInstruction *> F = kernelFusions(**M);
  EXPECT_EQ(F.size(), 1u);
  return fusionFingerprint(*F.front()->fusedComputation());
}

std::string replaceAll(std::string S, const std::string &From,
                       const std::string &To) {
  for (size_t Pos = 0; (Pos = S.find(From, Pos)) != std::string::npos;
       Pos += To.size())
    S.replace(Pos, From.size(), To);
  return S;
}

TEST(TuneCache, FingerprintIsSixteenHexDigits) {
  std::string F = fingerprintOf(rowSumText());
  ASSERT_EQ(F.size(), 16u);
  EXPECT_EQ(F.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(TuneCache, FingerprintKeptByRenamingAndMetadata) {
  std::string Base = rowSumText();
  std::string F = fingerprintOf(Base);
  std::string Renamed = replaceAll(
      replaceAll(replaceAll(replaceAll(Base, "fused_sum", "other_comp"),
                            "add_f", "sum2"),
                 "fusion.1", "my_fusion"),
      "  x = ", "  input.7 = ");
  Renamed = replaceAll(Renamed, "reduce(x, z)", "reduce(input.7, z)");
  EXPECT_EQ(fingerprintOf(Renamed), F);
  EXPECT_EQ(fingerprintOf(rowSumText("f32[64,128]{1,0}", "add",
                                     ", metadata={op_name=\"sum\"}")),
            F);
}

TEST(TuneCache, FingerprintChangesWithTheComputation) {
  std::string F = fingerprintOf(rowSumText());
  EXPECT_NE(fingerprintOf(rowSumText("f32[64,256]{1,0}")), F); // shape
  EXPECT_NE(fingerprintOf(rowSumText("f32[64,128]{0,1}")), F); // layout
  EXPECT_NE(fingerprintOf(rowSumText("f32[64,128]{1,0}", "maximum")),
            F); // the reducer
  EXPECT_NE(
      fingerprintOf(replaceAll(rowSumText(), "constant(0)", "constant(1)")),
      F); // a constant
}

TEST(TuneCache, DeviceKeys) {
  EXPECT_EQ(tuneDeviceKey("NVIDIA H200"), "H200");
  EXPECT_EQ(tuneDeviceKey("h200"), "H200");
  EXPECT_EQ(tuneDeviceKey("NVIDIA H100 80GB HBM3"), "H100");
  EXPECT_EQ(tuneDeviceKey("RTX 6000 Ada"), "RTX 6000 Ada");
}

TEST(TuneCache, InsertReplacesAndFindNormalizesTheDevice) {
  TuneCache C;
  TuneCacheEntry E;
  E.Fingerprint = "0123456789abcdef";
  E.Device = "NVIDIA H200";
  E.Knobs.RedRowLanes = 256;
  C.insert(E);
  E.Knobs.RedRowLanes = 128;
  C.insert(E);
  ASSERT_EQ(C.entries().size(), 1u);
  ASSERT_TRUE(C.find("0123456789abcdef", "H200"));
  EXPECT_EQ(C.find("0123456789abcdef", "h200")->Knobs.RedRowLanes, 128);
  EXPECT_FALSE(C.find("0123456789abcdef", "H100"));
  EXPECT_FALSE(C.find("0123456789abcdee", "H200"));
}

TEST(TuneCache, JsonRoundTrip) {
  TuneCache C;
  TuneCacheEntry E;
  E.Fingerprint = "ffffffffffffffff";
  E.Device = "H200";
  E.Knobs.RedRowLanes = 256;
  E.Knobs.RedEvictFirst = 0;
  E.Microseconds = 12.25;
  E.Date = "2026-12-01";
  E.Fusion = "fusion \"3\"";
  C.insert(E);
  E.Fingerprint = "0000000000000001";
  E.Device = "A100";
  E.Knobs = Tuning{};
  E.Fusion = "f";
  C.insert(E);
  std::string Text = C.toJson();
  auto Back = TuneCache::fromJson(Text, "c.json");
  ASSERT_TRUE(Back) << Back.error().str();
  ASSERT_EQ(Back->entries().size(), 2u);
  // Sorted by fingerprint.
  EXPECT_EQ(Back->entries()[0].Fingerprint, "0000000000000001");
  const TuneCacheEntry *R = Back->find("ffffffffffffffff", "H200");
  ASSERT_TRUE(R);
  EXPECT_EQ(printTuning(R->Knobs),
            "IDXMAP_RED_EVICT_FIRST=0 IDXMAP_RED_ROW_LANES=256");
  EXPECT_DOUBLE_EQ(R->Microseconds, 12.25);
  EXPECT_EQ(R->Date, "2026-12-01");
  EXPECT_EQ(R->Fusion, "fusion \"3\"");
  EXPECT_EQ(printTuning(Back->find("0000000000000001", "A100")->Knobs), "");
  // Deterministic: the same text again.
  EXPECT_EQ(Back->toJson(), Text);
  auto Empty = TuneCache::fromJson(TuneCache().toJson(), "e.json");
  ASSERT_TRUE(Empty);
  EXPECT_TRUE(Empty->entries().empty());
}

/// The error of reading \p Text, as `file:line:col: error: message`.
std::string errorOf(const std::string &Text) {
  auto C = TuneCache::fromJson(Text, "bad.json");
  EXPECT_FALSE(C);
  if (C)
    return "";
  std::string S = C.error().str();
  return S.substr(0, S.find('\n'));
}

TEST(TuneCache, BadFilesAreLocated) {
  const std::string Entry =
      "{\"fingerprint\": \"0123456789abcdef\", \"device\": \"H200\", "
      "\"knobs\": {";
  EXPECT_EQ(errorOf("{\"version\": 1, \"entries\": [\n" + Entry +
                    "\"IDXMAP_NOPE\": 3}}]}"),
            "bad.json:2:80: error: unknown tuning knob 'IDXMAP_NOPE'");
  EXPECT_EQ(errorOf("{\"version\": 1, \"entries\": [\n" + Entry +
                    "\"IDXMAP_RED_ROW_LANES\": 4096}}]}"),
            "bad.json:2:89: error: tuning knob IDXMAP_RED_ROW_LANES=4096 is "
            "out of range: valid values are 1 to 1024 (rounded down to a "
            "power of two)");
  EXPECT_EQ(errorOf("{\"version\": 2, \"entries\": []}"),
            "bad.json:1:13: error: unsupported tune cache version (this "
            "idxmap reads 1)");
  EXPECT_EQ(errorOf("{\"version\": 1}"),
            "bad.json:1:1: error: tune cache without \"entries\"");
  EXPECT_EQ(errorOf("{\"version\": 1, \"entries\": [{\"fingerprint\": "
                    "\"xyz\", \"device\": \"H200\", \"knobs\": {}}]}"),
            "bad.json:1:44: error: \"fingerprint\" must be 16 lowercase hex "
            "digits");
  EXPECT_EQ(errorOf("{\"version\": 1, \"entries\": [" + Entry + "}},\n" +
                    Entry + "}}]}"),
            "bad.json:2:1: error: a second entry for fingerprint "
            "0123456789abcdef on device H200");
  EXPECT_EQ(errorOf("{\"version\": 1, \"entries\": [\n  " + Entry +
                    "}, \"when\": 3}]}"),
            "bad.json:2:3: error: unknown key \"when\" in a tune cache entry "
            "(keys: fingerprint, device, knobs, microseconds, date, fusion)");
  EXPECT_EQ(errorOf("{\"version\": 1, \"entries\": [\n"),
            "bad.json:2:1: error: unexpected end of input");
}

} // namespace
