//===- DeviceModelTest.cpp - Device presets and model files ---------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/DeviceModel.h"

#include <gtest/gtest.h>

using namespace idxmap;

TEST(DeviceModel, Presets) {
  EXPECT_EQ(deviceModelNames(),
            (std::vector<std::string>{"A100", "H100", "H200"}));
  for (const std::string &N : deviceModelNames())
    ASSERT_TRUE(lookupDeviceModel(N)) << N;
  DeviceModel H200 = *lookupDeviceModel("h200");
  EXPECT_EQ(H200.Name, "H200");
  EXPECT_EQ(H200.SmCount, 132);
  EXPECT_EQ(H200.MaxThreadsPerSm, 2048);
  EXPECT_EQ(H200.MaxBlocksPerSm, 32);
  EXPECT_EQ(H200.RegistersPerSm, 65536);
  EXPECT_EQ(H200.SharedBytesPerSm, 228 * 1024);
  EXPECT_EQ(H200.L2Bytes, 50 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(H200.DramBytesPerSecond, 4.8e12);
  EXPECT_EQ(H200.SmClockKHz, 1980000);
  DeviceModel A100 = *lookupDeviceModel("A100");
  EXPECT_EQ(A100.SmCount, 108);
  EXPECT_EQ(A100.L2Bytes, 40 * 1024 * 1024);
  EXPECT_FALSE(lookupDeviceModel("V100"));
  EXPECT_FALSE(lookupDeviceModel(""));
  // --gpu's default presets.
  EXPECT_EQ(defaultDeviceModel("sm_80").Name, "A100");
  EXPECT_EQ(defaultDeviceModel("sm_90").Name, "H100");
  EXPECT_EQ(defaultDeviceModel("sm_90a").Name, "H100");
}

TEST(DeviceModel, ResidentBlocks) {
  DeviceModel H100 = *lookupDeviceModel("H100");
  EXPECT_EQ(residentBlocks(H100, 256), 132 * 8);
  EXPECT_EQ(residentBlocks(H100, 1024), 132 * 2);
  EXPECT_EQ(residentBlocks(H100, 32), 132 * 32); // the block limit binds
  EXPECT_EQ(residentBlocks(H100, 4096), 132);    // at least one per SM
}

TEST(DeviceModel, ReadsAFileOverAPreset) {
  auto D = deviceModelFromJson(R"({"name": "H100-PCIe", "base": "H100",
    "sm_count": 114, "dram_bytes_per_second": 2.0e12,
    "max_block": [512, 512, 64], "sm_clock_khz": 1755000})",
                               "h100pcie.json");
  ASSERT_TRUE(D) << D.error().str();
  EXPECT_EQ(D->Name, "H100-PCIe");
  EXPECT_EQ(D->SmCount, 114);
  EXPECT_DOUBLE_EQ(D->DramBytesPerSecond, 2.0e12);
  EXPECT_EQ(D->MaxBlock[0], 512);
  EXPECT_EQ(D->MaxBlock[2], 64);
  EXPECT_EQ(D->SmClockKHz, 1755000);
  EXPECT_EQ(D->L2Bytes, 50 * 1024 * 1024); // from the H100 preset
  EXPECT_EQ(D->SharedBytesPerBlock, 227 * 1024);

  // Without a base: DeviceModel{}'s defaults; an integer bandwidth.
  auto E = deviceModelFromJson(
      R"({"name": "small", "sm_count": 4, "dram_bytes_per_second": 100})", "s");
  ASSERT_TRUE(E) << E.error().str();
  EXPECT_EQ(E->SmCount, 4);
  EXPECT_EQ(E->L2Bytes, 0);
  EXPECT_DOUBLE_EQ(E->DramBytesPerSecond, 100);
}

TEST(DeviceModel, JsonRoundTrips) {
  for (const std::string &N : deviceModelNames()) {
    DeviceModel D = *lookupDeviceModel(N);
    std::string Json = deviceModelToJson(D);
    auto Back = deviceModelFromJson(Json, N + ".json");
    ASSERT_TRUE(Back) << Back.error().str() << "\n" << Json;
    EXPECT_EQ(deviceModelToJson(*Back), Json);
    EXPECT_EQ(Back->SmCount, D.SmCount);
    EXPECT_DOUBLE_EQ(Back->DramBytesPerSecond, D.DramBytesPerSecond);
  }
  EXPECT_NE(deviceModelToJson(*lookupDeviceModel("H100"))
                .find("\"dram_bytes_per_second\": 3.35e+12}"),
            std::string::npos);
}

TEST(DeviceModel, BadFilesAreLocatedErrors) {
  struct Case {
    const char *Text;
    unsigned Line, Col;
    const char *Message;
  } Cases[] = {
      {"{\"name\": \"x\",\n \"sm_count\": 0}", 2, 14,
       "'sm_count' must be a whole number from 1 to 65536"},
      {"{\"name\": \"x\",\n \"sm_cnt\": 4}", 2, 12, "unknown field 'sm_cnt'"},
      {"{\"sm_count\": 4}", 1, 1, "missing field 'name'"},
      {"{\"name\": \"x\", \"base\": \"V100\"}", 1, 23,
       "'base' must name a preset (A100, H100, H200)"},
      {"{\"name\": \"x\",\n  \"max_grid\": [1, 2]}", 2, 15,
       "'max_grid' must be 3 whole numbers"},
      {"{\"name\": \"x\", \"dram_bytes_per_second\": \"fast\"}", 1, 40,
       "'dram_bytes_per_second' must be a number"},
      {"{\"name\": \"x\", \"l2_bytes\": 1.5}", 1, 27,
       "'l2_bytes' must be a whole number"},
      {"{\"name\": \"x\", \"sm_count\": 1e}", 1, 27, "malformed number '1e'"},
      {"{\"name\": \"x\",\n\n  \"sm_count\" 4}", 3, 14, "expected ':'"},
      {"[1, 2]", 1, 1, "a device model is a JSON object"},
  };
  for (const Case &C : Cases) {
    auto D = deviceModelFromJson(C.Text, "dev.json");
    ASSERT_FALSE(D) << C.Text;
    EXPECT_EQ(D.error().Loc.File, "dev.json");
    EXPECT_EQ(D.error().Loc.Line, C.Line) << C.Text;
    EXPECT_EQ(D.error().Loc.Col, C.Col) << C.Text;
    EXPECT_NE(D.error().Message.find(C.Message), std::string::npos)
        << D.error().Message;
  }
}
