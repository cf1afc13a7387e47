//===- TuningTest.cpp - The table of tuning knobs -------------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Tuning.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace idxmap;

TEST(Tuning, TheTableIsSortedAndCoversEveryField) {
  const std::vector<TuningKnobInfo> &Table = tuningTable();
  std::vector<std::optional<int64_t> Tuning::*> Fields;
  for (size_t I = 0; I < Table.size(); ++I) {
    const TuningKnobInfo &K = Table[I];
    if (I > 0) {
      EXPECT_LT(std::string(Table[I - 1].Name), K.Name);
    }
    EXPECT_LE(K.Lo, K.Hi) << K.Name;
    EXPECT_TRUE(K.Default && *K.Default) << K.Name;
    EXPECT_TRUE(K.Doc && *K.Doc) << K.Name;
    EXPECT_EQ(std::find(Fields.begin(), Fields.end(), K.Field), Fields.end())
        << K.Name;
    Fields.push_back(K.Field);
    EXPECT_EQ(findTuningKnob(K.Name), &K);
  }
  // One row per field: setting every knob sets sizeof(Tuning) worth of
  // optionals.
  EXPECT_EQ(Table.size() * sizeof(std::optional<int64_t>), sizeof(Tuning));
  EXPECT_EQ(findTuningKnob("IDXMAP_NOPE"), nullptr);
}

TEST(Tuning, SetTuningChecksTheNameAndTheRange) {
  Tuning T;
  EXPECT_FALSE(setTuning(T, "IDXMAP_RED_ROW_LANES", 1024));
  EXPECT_EQ(T.RedRowLanes, 1024);
  EXPECT_EQ(*setTuning(T, "IDXMAP_RED_ROW_LANES", 4096),
            "tuning knob IDXMAP_RED_ROW_LANES=4096 is out of range: valid "
            "values are 1 to 1024 (rounded down to a power of two)");
  EXPECT_EQ(T.RedRowLanes, 1024); // unchanged by the error
  EXPECT_EQ(*setTuning(T, "IDXMAP_TR_WARPS", -1),
            "tuning knob IDXMAP_TR_WARPS=-1 is out of range: valid values "
            "are 0 to 32");
  EXPECT_EQ(*setTuning(T, "IDXMAP_NOPE", 1),
            "unknown tuning knob 'IDXMAP_NOPE'");
  for (const TuningKnobInfo &K : tuningTable()) {
    Tuning U;
    EXPECT_TRUE(!setTuning(U, K.Name, K.Lo) && !setTuning(U, K.Name, K.Hi) &&
                setTuning(U, K.Name, K.Hi + 1) &&
                setTuning(U, K.Name, K.Lo - 1))
        << K.Name;
    EXPECT_EQ(U.*(K.Field), K.Hi) << K.Name;
    EXPECT_TRUE(isTuned(U, K.Name));
    EXPECT_FALSE(isTuned(Tuning(), K.Name));
  }
}

TEST(Tuning, ValidateTuningChecksFieldsSetDirectly) {
  Tuning T;
  EXPECT_FALSE(validateTuning(T));
  T.RedColWarps = 8;
  EXPECT_FALSE(validateTuning(T));
  T.RedColSplit = 0;
  EXPECT_EQ(*validateTuning(T), "tuning knob IDXMAP_RED_COL_SPLIT=0 is out of "
                                "range: valid values are 1 to 65536");
}

TEST(Tuning, TunedTakesTheOverrideElseTheDefaultClampedAndRounded) {
  Tuning T;
  EXPECT_EQ(tuned(T, &Tuning::RedRowLanes, 32), 32);
  EXPECT_EQ(tuned(T, &Tuning::RedRowLanes, 300), 256); // default rounded too
  EXPECT_EQ(tuned(T, &Tuning::RedRowLanes, 5000), 1024);
  T.RedRowLanes = 300;
  EXPECT_EQ(tuned(T, &Tuning::RedRowLanes, 32), 256);
  EXPECT_EQ(tuned(T, "IDXMAP_RED_ROW_LANES", 32), 256);
  T.RedColUnroll = 7; // not a power-of-two knob
  EXPECT_EQ(tuned(T, &Tuning::RedColUnroll, 4), 7);
  EXPECT_EQ(tuned(T, &Tuning::RedFullChunk, 0), 0); // 0 is in range
  EXPECT_EQ(tuned(T, &Tuning::TrWarps, -3), 0);     // clamped up
}

TEST(Tuning, PrintsTheSetKnobsAndTheTable) {
  Tuning T;
  EXPECT_EQ(printTuning(T), "");
  T.TrWarps = 4;
  T.RedColLanes = 16;
  EXPECT_EQ(printTuning(T), "IDXMAP_RED_COL_LANES=16 IDXMAP_TR_WARPS=4");
  std::string Table = formatTuningTable();
  EXPECT_EQ(Table.rfind("| knob | range | default | what it sets |\n"
                        "|---|---|---|---|\n"
                        "| `IDXMAP_EVICT_LAST` | 0..1 | ",
                        0),
            0u)
      << Table;
  for (const TuningKnobInfo &K : tuningTable())
    EXPECT_NE(Table.find("| `" + std::string(K.Name) + "` | "),
              std::string::npos);
}
