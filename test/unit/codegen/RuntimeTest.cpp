//===- test/unit/codegen/RuntimeTest.cpp - CUDA driver runtime, no GPU ----===//
//
// Part of idxmap. What the runtime does on a machine without a driver (the CI
// machine): clean NoDriver errors, and the text helpers used in JIT reports.
// Launches on a GPU are checked by `idxmap-codegen-smoke run` (label gpu).
//
//===----------------------------------------------------------------------===//

#include "SmokeKernels.h"

#include "idxmap/Codegen.h"
#include "idxmap/Runtime.h"

#include "llvm/IR/LLVMContext.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>

using namespace idxmap;
using namespace idxmap::runtime;

TEST(Runtime, MissingLibraryIsNoDriver) {
  CudaDriver::OpenOptions Opts;
  Opts.LibraryPath = "/nonexistent/libcuda.so.1";
  auto D = CudaDriver::open(Opts);
  ASSERT_FALSE(D);
  EXPECT_EQ(D.error().Kind, DriverErrorKind::NoDriver);
  EXPECT_TRUE(D.error().isUnavailable());
  EXPECT_EQ(D.error().Message.rfind("no CUDA driver: cannot load "
                                    "/nonexistent/libcuda.so.1",
                                    0),
            0u)
      << D.error().Message;
}

TEST(Runtime, ALibraryWithoutTheDriverApiIsNoDriver) {
  CudaDriver::OpenOptions Opts;
  Opts.LibraryPath = "libz.so.1"; // loads, but has no cuInit
  auto D = CudaDriver::open(Opts);
  ASSERT_FALSE(D);
  EXPECT_EQ(D.error().Kind, DriverErrorKind::NoDriver);
  EXPECT_NE(D.error().Message.find("has no cuInit"), std::string::npos)
      << D.error().Message;
}

TEST(Runtime, TheToolkitStubIsNoDriver) {
  const char *Stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(Stub, R_OK) != 0)
    GTEST_SKIP() << "no CUDA stub library at " << Stub;
  CudaDriver::OpenOptions Opts;
  Opts.LibraryPath = Stub;
  auto D = CudaDriver::open(Opts);
  ASSERT_FALSE(D);
  EXPECT_TRUE(D.error().isUnavailable()) << D.error().Message;
  if (D.error().Code == 34) { // CUDA_ERROR_STUB_LIBRARY
    EXPECT_EQ(D.error().Kind, DriverErrorKind::NoDriver);
    EXPECT_NE(D.error().Message.find("stub library"), std::string::npos);
    EXPECT_NE(D.error().Message.find("CUDA_ERROR_STUB_LIBRARY (34)"),
              std::string::npos)
        << D.error().Message;
  }
}

TEST(Runtime, DescribesPtxHeaders) {
  llvm::LLVMContext Ctx;
  auto M = codegen::buildSmokeKernel(Ctx, "scale_f32");
  auto Ptx = emitPtx(*M, TargetOptions());
  ASSERT_TRUE(Ptx);
  EXPECT_EQ(describePtxHeader(*Ptx), ".version 8.5, .target sm_90");
  EXPECT_EQ(describePtxHeader("//\n.version 7.8 \n.target sm_90a // arch\n"),
            ".version 7.8, .target sm_90a");
  EXPECT_EQ(describePtxHeader("\t.version\t9.0\r\n.target sm_80, debug\n"),
            ".version 9.0, .target sm_80, debug");
  EXPECT_EQ(describePtxHeader("garbage"), ".version ?, .target ?");
  // A directive name inside another word is not the directive.
  EXPECT_EQ(describePtxHeader("x.versionfoo 1\n"), ".version ?, .target ?");
}

TEST(Runtime, FormatsDriverVersions) {
  EXPECT_EQ(formatDriverVersion(13000), "13.0");
  EXPECT_EQ(formatDriverVersion(12080), "12.8");
  EXPECT_EQ(formatDriverVersion(11020), "11.2");
}

TEST(Runtime, Median) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3}), 3);
  EXPECT_EQ(median({5, 1, 3}), 3);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({10, 10, 1, 1000, 9}), 10);
}

TEST(Runtime, ResultTypes) {
  DriverResult<int> Ok = 7;
  ASSERT_TRUE(Ok);
  EXPECT_EQ(*Ok, 7);
  DriverResult<int> Bad = DriverError{DriverErrorKind::JitFailed, 218, "x"};
  ASSERT_FALSE(Bad);
  EXPECT_EQ(Bad.error().Code, 218);
  EXPECT_FALSE(Bad.error().isUnavailable());
  DriverStatus Fine;
  EXPECT_TRUE(Fine);
  DriverStatus Failed = DriverError{DriverErrorKind::NoDevice, 100, "none"};
  ASSERT_FALSE(Failed);
  EXPECT_TRUE(Failed.error().isUnavailable());
}

TEST(Runtime, DeviceInfoNamesTheSm) {
  DeviceInfo I;
  I.CcMajor = 9;
  I.CcMinor = 0;
  EXPECT_EQ(I.smName(), "sm_90");
  I.CcMajor = 8;
  I.CcMinor = 6;
  EXPECT_EQ(I.smName(), "sm_86");
}

TEST(Runtime, DeviceModelFromDriverAttributes) {
  // What the driver reports on an H100 SXM (the attributes CudaDriver::open
  // reads; 0 for those a driver did not give).
  DeviceInfo I;
  I.Name = "NVIDIA H100 80GB HBM3";
  I.CcMajor = 9;
  I.SmCount = 132;
  I.L2CacheBytes = 50 * 1024 * 1024;
  I.MaxSharedPerBlockOptin = 232448;
  I.MaxThreadsPerSm = 2048;
  I.MemoryClockKHz = 2619000;
  I.MemoryBusWidthBits = 5120;
  I.WarpSize = 32;
  I.MaxBlocksPerSm = 32;
  I.MaxSharedPerSm = 233472;
  I.RegistersPerSm = 65536;
  I.ClockKHz = 1980000;
  DeviceModel D = deviceModelFromDriver(I);
  EXPECT_EQ(D.Name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(D.SmCount, 132);
  EXPECT_EQ(D.SharedBytesPerBlock, 232448);
  EXPECT_EQ(D.SharedBytesPerSm, 233472);
  EXPECT_EQ(D.L2Bytes, 50 * 1024 * 1024);
  EXPECT_EQ(D.SmClockKHz, 1980000);
  EXPECT_NEAR(D.DramBytesPerSecond, 3.352e12, 1e9);
  // Not given: the sm_90 preset's.
  EXPECT_EQ(D.MaxGrid[0], 2147483647);
  EXPECT_EQ(D.MaxThreadsPerBlock, 1024);
  EXPECT_EQ(D.RegistersPerBlock, 65536);

  DeviceInfo A;
  A.CcMajor = 8;
  A.SmCount = 7; // a MIG slice of an A100
  DeviceModel M = deviceModelFromDriver(A);
  EXPECT_EQ(M.Name, "sm_80");
  EXPECT_EQ(M.SmCount, 7);
  EXPECT_EQ(M.L2Bytes, 40 * 1024 * 1024); // the A100 preset's
  EXPECT_DOUBLE_EQ(M.DramBytesPerSecond, 2.039e12);
}
