//===- test/unit/codegen/CuptiTest.cpp - CUPTI kernel timer, no GPU -------===//
//
// Part of idxmap. What of the CUPTI timer (idxmap/Runtime.h CuptiTimer,
// codegen/runtime/Cupti.h) can be checked without a GPU: the decoding of
// kernel records laid out as cupti_activity.h documents them, the scan of a
// synthetic activity buffer, the choice of the timed records, the library
// search list and the errors of a failed load. Timing itself is checked on
// a GPU by `idxmap run --bench --timer=cupti`.
//
//===----------------------------------------------------------------------===//

#include "Cupti.h"

#include "idxmap/Runtime.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace idxmap;
using namespace idxmap::runtime;
using namespace idxmap::runtime::cupti;

namespace {

/// sizeof(CUpti_ActivityKernel10), the record CUPTI 13.0 emits.
constexpr size_t Kernel10Bytes = 216;
/// A stand-in for a record of another kind (e.g. a memcpy).
constexpr size_t OtherBytes = 64;
/// CUPTI_ACTIVITY_KIND_MEMCPY.
constexpr uint32_t KindMemcpy = 1;

/// A synthetic activity buffer: records back to back, 8-byte aligned (as
/// CUPTI's buffers are), in the layout of Cupti.h.
class SyntheticBuffer {
public:
  void addKernel(uint32_t Kind, uint64_t Start, uint64_t End,
                 const char *Name) {
    size_t At = grow(Kernel10Bytes);
    put(At + KernelKindOffset, Kind);
    put(At + KernelStartOffset, Start);
    put(At + KernelEndOffset, End);
    put(At + KernelNameOffset, Name);
    // Fields CUPTI fills that the decoder must ignore (deviceId,
    // correlationId).
    put(At + 40, uint32_t(7));
    put(At + 92, uint32_t(1234));
  }
  void addOther(uint32_t Kind) {
    size_t At = grow(OtherBytes);
    put(At, Kind);
    // A plausible start/end, so that only the kind tells it apart.
    put(At + 16, uint64_t(10));
    put(At + 24, uint64_t(20));
  }
  uint8_t *data() { return reinterpret_cast<uint8_t *>(Words.data()); }
  size_t size() const { return Used; }

private:
  size_t grow(size_t N) {
    size_t At = Used;
    Used += N;
    Words.resize((Used + 7) / 8, 0);
    return At;
  }
  template <typename T> void put(size_t Offset, T Value) {
    std::memcpy(data() + Offset, &Value, sizeof Value);
  }
  std::vector<uint64_t> Words;
  size_t Used = 0;
};

/// Record size by kind, as a stand-in for CUPTI's own bookkeeping.
size_t recordBytes(const uint8_t *Record) {
  uint32_t Kind;
  std::memcpy(&Kind, Record, sizeof Kind);
  return Kind == ActivityKindKernel || Kind == ActivityKindConcurrentKernel
             ? Kernel10Bytes
             : OtherBytes;
}

/// cuptiActivityGetNextRecord over a SyntheticBuffer.
Result fakeNext(uint8_t *Buffer, size_t Valid, void **Record) {
  uint8_t *Next = *Record ? static_cast<uint8_t *>(*Record) +
                                recordBytes(static_cast<uint8_t *>(*Record))
                          : Buffer;
  if (Next >= Buffer + Valid)
    return ErrorMaxLimitReached;
  *Record = Next;
  return Success;
}

/// Stops with CUPTI_ERROR_INVALID_KIND at the third record.
Result fakeNextIncomplete(uint8_t *Buffer, size_t Valid, void **Record) {
  static int Calls = 0;
  if (!*Record)
    Calls = 0;
  if (++Calls == 3)
    return ErrorInvalidKind;
  return fakeNext(Buffer, Valid, Record);
}

/// Never advances: the scan must still end.
Result fakeNextStuck(uint8_t *Buffer, size_t, void **Record) {
  *Record = Buffer;
  return Success;
}

KernelRecord kernel(const char *Name, uint64_t Start, uint64_t Micros) {
  KernelRecord K;
  K.Kind = ActivityKindConcurrentKernel;
  K.Start = Start;
  K.End = Start + Micros * 1000;
  K.Name = Name;
  return K;
}

} // namespace

TEST(Cupti, DocumentedConstants) {
  // cupti_activity.h / cupti_result.h (CUDA 13.0); see Cupti.h.
  EXPECT_EQ(ActivityKindKernel, 3u);
  EXPECT_EQ(ActivityKindConcurrentKernel, 10u);
  EXPECT_EQ(ActivityFlagFlushForced, 1u);
  EXPECT_EQ(Success, 0);
  EXPECT_EQ(ErrorMaxLimitReached, 12);
  EXPECT_EQ(ErrorInvalidKind, 21);
  EXPECT_EQ(KernelStartOffset, 16u);
  EXPECT_EQ(KernelEndOffset, 24u);
  EXPECT_EQ(KernelNameOffset, 104u);
  // The prefix read fits in the smallest kernel record CUPTI emits today
  // (CUpti_ActivityKernel4, 144 bytes).
  EXPECT_LE(KernelPrefixBytes, 144u);
}

TEST(Cupti, DecodesAKernelRecord) {
  SyntheticBuffer B;
  B.addKernel(ActivityKindConcurrentKernel, 1000000, 1005250, "fusion_1");
  KernelRecord K;
  ASSERT_EQ(decodeKernelRecord(B.data(), K), RecordClass::Kernel);
  EXPECT_EQ(K.Kind, ActivityKindConcurrentKernel);
  EXPECT_EQ(K.Start, 1000000u);
  EXPECT_EQ(K.End, 1005250u);
  EXPECT_EQ(K.Name, "fusion_1");
  EXPECT_DOUBLE_EQ(K.micros(), 5.25);
}

TEST(Cupti, AcceptsTheSerialKernelKindAndUnnamedRecords) {
  SyntheticBuffer B;
  B.addKernel(ActivityKindKernel, 5, 9, nullptr);
  KernelRecord K;
  ASSERT_EQ(decodeKernelRecord(B.data(), K), RecordClass::Kernel);
  EXPECT_EQ(K.Kind, ActivityKindKernel);
  EXPECT_TRUE(K.Name.empty());
}

TEST(Cupti, RejectsOtherKindsAndMissingTimestamps) {
  SyntheticBuffer B;
  B.addOther(KindMemcpy);
  KernelRecord K;
  EXPECT_EQ(decodeKernelRecord(B.data(), K), RecordClass::NotKernel);

  SyntheticBuffer Zero, Backwards, Equal;
  Zero.addKernel(ActivityKindConcurrentKernel, 0, 0, "k");
  Backwards.addKernel(ActivityKindConcurrentKernel, 100, 50, "k");
  Equal.addKernel(ActivityKindConcurrentKernel, 100, 100, "k");
  EXPECT_EQ(decodeKernelRecord(Zero.data(), K), RecordClass::NoTimestamps);
  EXPECT_EQ(decodeKernelRecord(Backwards.data(), K), RecordClass::NoTimestamps);
  EXPECT_EQ(decodeKernelRecord(Equal.data(), K), RecordClass::NoTimestamps);
}

TEST(Cupti, ScansABuffer) {
  SyntheticBuffer B;
  B.addOther(KindMemcpy);
  B.addKernel(ActivityKindConcurrentKernel, 100, 3100, "a");
  B.addOther(KindMemcpy);
  B.addKernel(ActivityKindConcurrentKernel, 0, 0, "a");
  B.addKernel(ActivityKindConcurrentKernel, 5000, 9000, "b");
  BufferScan S;
  scanBuffer(B.data(), B.size(), fakeNext, S);
  ASSERT_EQ(S.Kernels.size(), 2u);
  EXPECT_EQ(S.Kernels[0].Name, "a");
  EXPECT_EQ(S.Kernels[0].micros(), 3.0);
  EXPECT_EQ(S.Kernels[1].Name, "b");
  EXPECT_EQ(S.OtherRecords, 2u);
  EXPECT_EQ(S.InvalidKernelRecords, 1u);
  EXPECT_EQ(S.Stop, Success);

  // A second buffer appends.
  SyntheticBuffer C;
  C.addKernel(ActivityKindKernel, 1, 2, "c");
  scanBuffer(C.data(), C.size(), fakeNext, S);
  EXPECT_EQ(S.Kernels.size(), 3u);
}

TEST(Cupti, ScanStopsAtAnIncompleteRecordAndOnAStuckIterator) {
  SyntheticBuffer B;
  for (int I = 0; I < 4; ++I)
    B.addKernel(ActivityKindConcurrentKernel, 10 * I + 1, 10 * I + 5, "k");
  BufferScan S;
  scanBuffer(B.data(), B.size(), fakeNextIncomplete, S);
  EXPECT_EQ(S.Kernels.size(), 2u);
  EXPECT_EQ(S.Stop, ErrorInvalidKind);

  BufferScan Stuck;
  scanBuffer(B.data(), B.size(), fakeNextStuck, Stuck);
  EXPECT_LE(Stuck.Kernels.size(), B.size() / BufferAlignment + 1);

  BufferScan Empty;
  scanBuffer(nullptr, 0, fakeNext, Empty);
  scanBuffer(B.data(), 0, fakeNext, Empty);
  EXPECT_TRUE(Empty.Kernels.empty());
}

TEST(Cupti, TimesTheLastRepsLaunchesOfTheKernel) {
  // 2 warm-up launches, then 3 timed ones, delivered out of order, with
  // another kernel's record mixed in.
  std::vector<KernelRecord> Rs = {
      kernel("k", 5000, 7), kernel("k", 1000, 50), kernel("other", 1500, 99),
      kernel("k", 3000, 5), kernel("k", 2000, 40), kernel("k", 4000, 6)};
  std::string Failure;
  std::vector<double> Us = timedDurations(Rs, "k", 3, Failure);
  EXPECT_TRUE(Failure.empty()) << Failure;
  EXPECT_EQ(Us, (std::vector<double>{5, 6, 7}));
  EXPECT_DOUBLE_EQ(median(Us), 6);
}

TEST(Cupti, TooFewRecordsIsAFailure) {
  std::vector<KernelRecord> Rs = {kernel("k", 1, 5), kernel("x", 2, 5)};
  std::string Failure;
  std::vector<double> Us = timedDurations(Rs, "k", 20, Failure);
  EXPECT_TRUE(Us.empty());
  EXPECT_NE(Failure.find("1 record(s) of kernel 'k' for 20 timed launches"),
            std::string::npos)
      << Failure;
  EXPECT_NE(Failure.find("'x'"), std::string::npos) << Failure;
}

TEST(Cupti, SearchOrder) {
  SearchInputs In;
  In.EnvPath = "/opt/my/libcupti.so.13";
  In.Home = "/home/u";
  std::vector<std::string> P = searchPatterns(In);
  ASSERT_GE(P.size(), 10u);
  EXPECT_EQ(P[0], "/opt/my/libcupti.so.13");
  EXPECT_EQ(P[1], "libcupti.so");
  EXPECT_EQ(P[2], "libcupti.so.13");
  EXPECT_EQ(P[3], "libcupti.so.12");
  EXPECT_EQ(P[4], "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so*");
  EXPECT_EQ(P[5], "/usr/local/cuda/lib64/libcupti.so*");
  EXPECT_EQ(P[6], "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so*");
  auto IndexOf = [&](const std::string &S) {
    auto It = std::find(P.begin(), P.end(), S);
    EXPECT_NE(It, P.end()) << S;
    return It - P.begin();
  };
  auto Toolkit = IndexOf("/usr/local/cuda/lib64/libcupti.so*");
  auto Wheel13 = IndexOf(
      "/usr/local/lib/python3*/dist-packages/nvidia/cu13/lib/libcupti.so*");
  auto Wheel12 =
      IndexOf("/usr/local/lib/python3*/dist-packages/nvidia/cuda_cupti/lib/"
              "libcupti.so*");
  IndexOf("/usr/lib/python3*/site-packages/nvidia/cuda_cupti/lib/"
          "libcupti.so*");
  IndexOf("/home/u/.local/lib/python3*/site-packages/nvidia/cuda_cupti/lib/"
          "libcupti.so*");
  IndexOf("/usr/local/lib/python3*/dist-packages/torch/lib/libcupti.so*");
  EXPECT_LT(Toolkit, Wheel13);
  EXPECT_LT(Wheel13, Wheel12);

  // No environment: the loader's search comes first; no empty roots.
  std::vector<std::string> Q = searchPatterns(SearchInputs());
  EXPECT_EQ(Q[0], "libcupti.so");
  for (const std::string &S : Q)
    EXPECT_NE(S.rfind("/.local", 0), 0u) << S;
}

TEST(Cupti, ExpandsPatternsAndDropsDuplicateFiles) {
  char Dir[] = "/tmp/idxmap-cupti-XXXXXX";
  ASSERT_NE(mkdtemp(Dir), nullptr);
  std::string D = Dir;
  std::ofstream(D + "/libcupti.so.13") << "x";
  std::ofstream(D + "/libcupti.so.2025.3.1") << "y";
  ASSERT_EQ(symlink("libcupti.so.13", (D + "/libcupti.so").c_str()), 0);

  std::vector<std::string> Unmatched;
  std::vector<std::string> Files =
      expandSearchPatterns({"libcupti.so", D + "/nothing/libcupti.so*",
                            D + "/libcupti.so*", D + "/libcupti.so.13"},
                           &Unmatched);
  // The bare soname stays; the glob's matches come sorted; the symlink's
  // target and the explicit path are the same file as libcupti.so.
  EXPECT_EQ(Files, (std::vector<std::string>{"libcupti.so", D + "/libcupti.so",
                                             D + "/libcupti.so.2025.3.1"}));
  EXPECT_EQ(Unmatched, (std::vector<std::string>{D + "/nothing/libcupti.so*"}));

  unlink((D + "/libcupti.so").c_str());
  unlink((D + "/libcupti.so.13").c_str());
  unlink((D + "/libcupti.so.2025.3.1").c_str());
  rmdir(D.c_str());
}

TEST(Cupti, AMissingLibraryListsWhereItLooked) {
  CuptiTimer::LoadOptions Opts;
  Opts.LibraryPath = "/nonexistent/libcupti.so";
  auto T = CuptiTimer::load(Opts);
  ASSERT_FALSE(T);
  EXPECT_EQ(T.error().Kind, DriverErrorKind::NoDriver);
  const std::string &M = T.error().Message;
  EXPECT_EQ(M.rfind("CUPTI not found", 0), 0u) << M;
  EXPECT_NE(M.find("\ntried:\n  /nonexistent/libcupti.so: "), std::string::npos)
      << M;
}

TEST(Cupti, ALibraryWithoutCuptiIsNotUsed) {
  CuptiTimer::LoadOptions Opts;
  Opts.LibraryPath = "libz.so.1"; // loads, but is not CUPTI
  auto T = CuptiTimer::load(Opts);
  ASSERT_FALSE(T);
  EXPECT_EQ(T.error().Kind, DriverErrorKind::NoDriver);
  EXPECT_NE(T.error().Message.find(
                "libz.so.1: loads, but has no cuptiActivityRegisterCallbacks"),
            std::string::npos)
      << T.error().Message;
}

TEST(Cupti, GlobsWithoutMatchesAreListed) {
  CuptiTimer::LoadOptions Opts;
  Opts.LibraryPath = "/nonexistent/dir/libcupti.so*";
  auto T = CuptiTimer::load(Opts);
  ASSERT_FALSE(T);
  EXPECT_NE(T.error().Message.find("/nonexistent/dir/libcupti.so*: no match"),
            std::string::npos)
      << T.error().Message;
}

// Last: a library that was found and called is kept for the process.
TEST(Cupti, TheInstalledLibraryLoadsOrFailsCleanly) {
  auto T = CuptiTimer::load();
  if (T) { // a machine with CUPTI and a driver
    EXPECT_FALSE((*T)->libraryPath().empty());
    (*T)->stop();
    (*T)->stop();
    return;
  }
  const std::string &M = T.error().Message;
  if (T.error().Kind == DriverErrorKind::NoDriver) {
    EXPECT_EQ(M.rfind("CUPTI not found", 0), 0u) << M;
    EXPECT_NE(M.find("libcupti.so.12: "), std::string::npos) << M;
    return;
  }
  // CUPTI loaded but refused (here: no driver to attach to). The answer is
  // kept: a second call does not load or register again.
  EXPECT_NE(M.find("libcupti"), std::string::npos) << M;
  auto Again = CuptiTimer::load();
  ASSERT_FALSE(Again);
  EXPECT_EQ(Again.error().Message, M);
}
