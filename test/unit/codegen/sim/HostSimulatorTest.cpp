//===- test/unit/codegen/sim/HostSimulatorTest.cpp - The host simulator ---===//
//
// Part of idxmap. Hand-written NVPTX kernels run in the host simulator
// (idxmap/HostSimulator.h): barriers, shared memory and warp shuffles give
// the values PTX defines; a poll waits for the thread that sets its flag;
// a stray access, a deadlock (a poll nothing satisfies included), PTX and
// an unmodelled intrinsic are errors; and an emitted fusion checked through
// runKernels passes, while the same kernel with one operation changed fails.
//
//===----------------------------------------------------------------------===//

#include "idxmap/HostSimulator.h"
#include "idxmap/Emit.h"
#include "idxmap/Runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <vector>

using namespace idxmap;
using namespace idxmap::runtime;

namespace {

const char *Header = R"(
target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.up.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.down.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.vote.ballot.sync(i32, i1)
declare void @llvm.nvvm.barrier0()
)";

/// Sums each block of 64 floats: shuffles within each warp, the two warps'
/// sums through shared memory after a barrier.
const char *BlockSum = R"(
@sm = internal addrspace(3) global [2 x float] undef, align 4
define ptx_kernel void @bsum(ptr addrspace(1) %x, ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %bn = mul i32 %b, %n
  %g = add i32 %bn, %t
  %p = getelementptr float, ptr addrspace(1) %x, i32 %g
  %v0 = load float, ptr addrspace(1) %p
  %s1 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v0, i32 16, i32 31)
  %v1 = fadd float %v0, %s1
  %s2 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v1, i32 8, i32 31)
  %v2 = fadd float %v1, %s2
  %s3 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v2, i32 4, i32 31)
  %v3 = fadd float %v2, %s3
  %s4 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v3, i32 2, i32 31)
  %v4 = fadd float %v3, %s4
  %s5 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v4, i32 1, i32 31)
  %v5 = fadd float %v4, %s5
  %lane = and i32 %t, 31
  %w = lshr i32 %t, 5
  %is0 = icmp eq i32 %lane, 0
  br i1 %is0, label %wr, label %sync
wr:
  %sp = getelementptr [2 x float], ptr addrspace(3) @sm, i32 0, i32 %w
  store float %v5, ptr addrspace(3) %sp
  br label %sync
sync:
  call void @llvm.nvvm.barrier0()
  %t0 = icmp eq i32 %t, 0
  br i1 %t0, label %fin, label %done
fin:
  %a = load float, ptr addrspace(3) @sm
  %bp = getelementptr [2 x float], ptr addrspace(3) @sm, i32 0, i32 1
  %c = load float, ptr addrspace(3) %bp
  %sum = fadd float %a, %c
  %op = getelementptr float, ptr addrspace(1) %out, i32 %b
  store float %sum, ptr addrspace(1) %op
  br label %done
done:
  ret void
}
)";

/// Per lane t of one warp: shfl.up by 1 in segments of 8, shfl.down by 2,
/// shfl.idx of lane 3, and the ballot of the odd lanes.
const char *Shuffles = R"(
define ptx_kernel void @shuf(ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %up = call i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %t, i32 1, i32 6144)
  %down = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %t, i32 2, i32 31)
  %idx = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %t, i32 3, i32 31)
  %odd = trunc i32 %t to i1
  %bal = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %odd)
  %base = mul i32 %t, 4
  %p0 = getelementptr i32, ptr addrspace(1) %out, i32 %base
  store i32 %up, ptr addrspace(1) %p0
  %p1 = getelementptr i32, ptr addrspace(1) %p0, i32 1
  store i32 %down, ptr addrspace(1) %p1
  %p2 = getelementptr i32, ptr addrspace(1) %p0, i32 2
  store i32 %idx, ptr addrspace(1) %p2
  %p3 = getelementptr i32, ptr addrspace(1) %p0, i32 3
  store i32 %bal, ptr addrspace(1) %p3
  ret void
}
)";

/// Reads 64 floats past its thread's element.
const char *Stray = R"(
define ptx_kernel void @stray(ptr addrspace(1) %x, ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %g = add i32 %t, 64
  %p = getelementptr float, ptr addrspace(1) %x, i32 %g
  %v = load float, ptr addrspace(1) %p
  %o = getelementptr float, ptr addrspace(1) %out, i32 %t
  store float %v, ptr addrspace(1) %o
  ret void
}
)";

/// Half a warp waits at a barrier, the other half at a shuffle that needs
/// the first half.
const char *Deadlock = R"(
define ptx_kernel void @dead(ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %lo = icmp ult i32 %t, 16
  br i1 %lo, label %bar, label %shfl
bar:
  call void @llvm.nvvm.barrier0()
  br label %done
shfl:
  %s = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %t, i32 0, i32 31)
  br label %done
done:
  ret void
}
)";

/// Thread 0 polls a flag until it is set and copies it out; thread
/// \p Setter sets it (63: the block's last), or none does (-1). No
/// barrier between them: thread 0 must give the CPU to the others.
std::string handOffKernel(int Setter) {
  return R"(
define ptx_kernel void @handoff(ptr addrspace(1) %flag, ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %first = icmp eq i32 %t, 0
  br i1 %first, label %poll, label %other
poll:
  %v = call i32 asm sideeffect "ld.acquire.gpu.global.b32 $0, [$1];", "=r,l,~{memory}"(ptr addrspace(1) %flag)
  %unset = icmp eq i32 %v, 0
  br i1 %unset, label %poll, label %copy
copy:
  store i32 %v, ptr addrspace(1) %out
  br label %done
other:
  %setter = icmp eq i32 %t, )" +
         std::to_string(Setter) + R"(
  br i1 %setter, label %set, label %done
set:
  call void asm sideeffect "st.release.gpu.global.b32 [$0], $1;", "l,r,~{memory}"(ptr addrspace(1) %flag, i32 7)
  br label %done
done:
  ret void
}
)";
}

/// Block b keeps its index in shared memory, waits (thread 0) until block
/// b + 1 has set its flag, then writes what shared memory holds to out[b]
/// and sets its own flag; the last block waits on none. Legal on a GPU only
/// where all the blocks are resident together.
const char *ForwardChain = R"(
@own = internal addrspace(3) global [1 x i32] undef, align 4
define ptx_kernel void @chain(ptr addrspace(1) %flags, ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nb = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %first = icmp eq i32 %t, 0
  br i1 %first, label %keep, label %sync
keep:
  store i32 %b, ptr addrspace(3) @own
  br label %sync
sync:
  call void @llvm.nvvm.barrier0()
  br i1 %first, label %check, label %done
check:
  %next = add i32 %b, 1
  %last = icmp eq i32 %next, %nb
  br i1 %last, label %publish, label %poll
poll:
  %fp = getelementptr i32, ptr addrspace(1) %flags, i32 %next
  %v = call i32 asm sideeffect "ld.acquire.gpu.global.b32 $0, [$1];", "=r,l,~{memory}"(ptr addrspace(1) %fp)
  %unset = icmp eq i32 %v, 0
  br i1 %unset, label %poll, label %publish
publish:
  %mine = load i32, ptr addrspace(3) @own
  %op = getelementptr i32, ptr addrspace(1) %out, i32 %b
  store i32 %mine, ptr addrspace(1) %op
  %myflag = getelementptr i32, ptr addrspace(1) %flags, i32 %b
  call void asm sideeffect "st.release.gpu.global.b32 [$0], $1;", "l,r,~{memory}"(ptr addrspace(1) %myflag, i32 1)
  br label %done
done:
  ret void
}
)";

/// Each thread stores its id to slot t of a shared array, then (after
/// SYNC) reads slot t ^ XOR and stores it to out[t]. First every thread
/// adds 1 to slot 64 with an atomic, unsynchronized: atomics do not race
/// with each other, so the kernels with a barrier must pass.
std::string exchangeKernel(const std::string &Sync, int Xor) {
  return R"(
@ex = internal addrspace(3) global [65 x i32] undef, align 4
define ptx_kernel void @exch(ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = getelementptr [65 x i32], ptr addrspace(3) @ex, i32 0, i32 64
  %old = atomicrmw add ptr addrspace(3) %c, i32 1 monotonic
  %p = getelementptr [65 x i32], ptr addrspace(3) @ex, i32 0, i32 %t
  store i32 %t, ptr addrspace(3) %p
)" + Sync +
         R"(
  %u = xor i32 %t, )" +
         std::to_string(Xor) + R"(
  %q = getelementptr [65 x i32], ptr addrspace(3) @ex, i32 0, i32 %u
  %v = load i32, ptr addrspace(3) %q
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %v, ptr addrspace(1) %o
  ret void
}
)";
}

class HostSimulator : public ::testing::Test {
protected:
  void SetUp() override {
    auto D = openHostSimulator();
    ASSERT_TRUE(D) << D.error().Message;
    Drv = std::move(*D);
  }
  /// Launches \p K(x, out) over \p X with \p Dims; on success \p Out holds
  /// its first Out.size() output floats. Returns the launch's status.
  DriverStatus launchFloats(const GpuKernel &K, const std::vector<float> &X,
                            const LaunchDims &Dims, std::vector<float> &Out) {
    auto XB = Drv->alloc(X.size() * 4);
    auto OB = Drv->alloc(Out.size() * 4);
    EXPECT_TRUE(XB && OB);
    EXPECT_TRUE(Drv->copyToDevice(*XB, X.data(), X.size() * 4));
    DevicePtr XP = XB->ptr(), OP = OB->ptr();
    void *Args[] = {&XP, &OP};
    DriverStatus St = Drv->launch(K, Dims, Args);
    if (St)
      EXPECT_TRUE(Drv->copyToHost(Out.data(), *OB, Out.size() * 4));
    return St;
  }
  std::unique_ptr<CudaDriver> Drv;
};

TEST_F(HostSimulator, BarriersSharedMemoryAndShufflesSumBlocks) {
  auto M = Drv->loadPtx(std::string(Header) + BlockSum);
  ASSERT_TRUE(M) << M.error().Message;
  auto K = M->getKernel("bsum");
  ASSERT_TRUE(K) << K.error().Message;
  std::vector<float> X(3 * 64);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = float(I % 17);
  LaunchDims Dims;
  Dims.Grid[0] = 3;
  Dims.Block[0] = 64;
  std::vector<float> Out(3);
  auto St = launchFloats(*K, X, Dims, Out);
  ASSERT_TRUE(St) << St.error().Message;
  for (int B = 0; B < 3; ++B) {
    float Want = 0;
    for (int I = 0; I < 64; ++I)
      Want += X[size_t(B * 64 + I)];
    EXPECT_EQ(Out[size_t(B)], Want) << "block " << B;
  }
}

TEST_F(HostSimulator, ShufflesAndBallotsFollowPtx) {
  auto M = Drv->loadPtx(std::string(Header) + Shuffles);
  ASSERT_TRUE(M) << M.error().Message;
  auto K = M->getKernel("shuf");
  ASSERT_TRUE(K);
  auto OB = Drv->alloc(32 * 4 * 4);
  ASSERT_TRUE(OB);
  DevicePtr OP = OB->ptr();
  void *Args[] = {&OP};
  LaunchDims Dims;
  Dims.Block[0] = 32;
  ASSERT_TRUE(Drv->launch(*K, Dims, Args));
  std::vector<uint32_t> Out(128);
  ASSERT_TRUE(Drv->copyToHost(Out.data(), *OB, Out.size() * 4));
  for (uint32_t T = 0; T < 32; ++T) {
    EXPECT_EQ(Out[T * 4], T % 8 == 0 ? T : T - 1) << "up, lane " << T;
    EXPECT_EQ(Out[T * 4 + 1], T + 2 <= 31 ? T + 2 : T) << "down, lane " << T;
    EXPECT_EQ(Out[T * 4 + 2], 3u) << "idx, lane " << T;
    EXPECT_EQ(Out[T * 4 + 3], 0xaaaaaaaau) << "ballot, lane " << T;
  }
}

TEST_F(HostSimulator, AStrayReadFailsTheLaunch) {
  auto M = Drv->loadPtx(std::string(Header) + Stray);
  ASSERT_TRUE(M) << M.error().Message;
  auto K = M->getKernel("stray");
  ASSERT_TRUE(K);
  auto XB = Drv->alloc(64 * 4);
  auto OB = Drv->alloc(64 * 4);
  DevicePtr XP = XB->ptr(), OP = OB->ptr();
  void *Args[] = {&XP, &OP};
  LaunchDims Dims;
  Dims.Block[0] = 64;
  auto St = Drv->launch(*K, Dims, Args);
  ASSERT_FALSE(St);
  EXPECT_EQ(St.error().Code, 700) << St.error().Message;
  EXPECT_NE(St.error().Message.find("past the end of a buffer of 256 bytes"),
            std::string::npos)
      << St.error().Message;
}

TEST_F(HostSimulator, ABarrierAndAShuffleWaitingOnEachOtherDeadlock) {
  auto M = Drv->loadPtx(std::string(Header) + Deadlock);
  ASSERT_TRUE(M) << M.error().Message;
  auto K = M->getKernel("dead");
  auto OB = Drv->alloc(4);
  DevicePtr OP = OB->ptr();
  void *Args[] = {&OP};
  LaunchDims Dims;
  Dims.Block[0] = 32;
  auto St = Drv->launch(*K, Dims, Args);
  ASSERT_FALSE(St);
  EXPECT_NE(St.error().Message.find("deadlock in block (0,0,0): 16 threads "
                                    "wait at a barrier, 16 at a warp "
                                    "collective"),
            std::string::npos)
      << St.error().Message;
}

TEST_F(HostSimulator, APollWaitsForAnotherThreadOrIsADeadlock) {
  for (int Setter : {63, -1}) {
    auto M = Drv->loadPtx(std::string(Header) + handOffKernel(Setter));
    ASSERT_TRUE(M) << M.error().Message;
    auto K = M->getKernel("handoff");
    ASSERT_TRUE(K) << K.error().Message;
    auto FB = Drv->alloc(4);
    auto OB = Drv->alloc(4);
    ASSERT_TRUE(FB && OB);
    const uint32_t Zero = 0;
    ASSERT_TRUE(Drv->copyToDevice(*FB, &Zero, 4));
    ASSERT_TRUE(Drv->copyToDevice(*OB, &Zero, 4));
    DevicePtr FP = FB->ptr(), OP = OB->ptr();
    void *Args[] = {&FP, &OP};
    LaunchDims Dims;
    Dims.Block[0] = 64;
    auto St = Drv->launch(*K, Dims, Args);
    if (Setter < 0) {
      ASSERT_FALSE(St);
      EXPECT_NE(St.error().Message.find(
                    "deadlock in block (0,0,0): 0 threads wait at a barrier, "
                    "0 at a warp collective, 63 finished, 1 poll memory that "
                    "no thread changes (blocks run in launch order"),
                std::string::npos)
          << St.error().Message;
      EXPECT_NE(St.error().Message.find("thread 0 reads 0 again and again"),
                std::string::npos)
          << St.error().Message;
      continue;
    }
    ASSERT_TRUE(St) << St.error().Message;
    uint32_t Out = 0;
    ASSERT_TRUE(Drv->copyToHost(&Out, *OB, 4));
    EXPECT_EQ(Out, 7u);
  }
}

// Blocks in flight together: a block may wait on a later one while both
// are in flight, each keeps its own shared memory across the turns, and a
// wait on a block that cannot start is a deadlock.
TEST(HostSimulatorResident, BlocksInFlightTakeTurns) {
  for (unsigned Resident : {4u, 7u, 1u, 2u}) {
    HostSimulatorOptions Opts;
    Opts.ResidentBlocks = Resident;
    Opts.Seed = 11;
    auto Drv = openHostSimulator(Opts);
    ASSERT_TRUE(Drv) << Drv.error().Message;
    auto M = (*Drv)->loadPtx(std::string(Header) + ForwardChain);
    ASSERT_TRUE(M) << M.error().Message;
    auto K = M->getKernel("chain");
    ASSERT_TRUE(K) << K.error().Message;
    std::vector<uint32_t> Zero(4, 0), Out(4, 99);
    auto FB = (*Drv)->alloc(16);
    auto OB = (*Drv)->alloc(16);
    ASSERT_TRUE(FB && OB);
    ASSERT_TRUE((*Drv)->copyToDevice(*FB, Zero.data(), 16));
    DevicePtr FP = FB->ptr(), OP = OB->ptr();
    void *Args[] = {&FP, &OP};
    LaunchDims Dims;
    Dims.Grid[0] = 4;
    Dims.Block[0] = 64;
    auto St = (*Drv)->launch(*K, Dims, Args);
    if (Resident >= 4) {
      ASSERT_TRUE(St) << Resident << ": " << St.error().Message;
      ASSERT_TRUE((*Drv)->copyToHost(Out.data(), *OB, 16));
      EXPECT_EQ(Out, (std::vector<uint32_t>{0, 1, 2, 3})) << Resident;
      continue;
    }
    ASSERT_FALSE(St) << Resident;
    const char *Why = Resident == 1 ? "(blocks run in launch order"
                                    : "(every block in flight waits";
    EXPECT_NE(St.error().Message.find(Why), std::string::npos)
        << St.error().Message;
  }
}

TEST(HostSimulatorResident, BlocksInFlightAreFromOneTo64) {
  for (unsigned Resident : {0u, HostSimulatorOptions::MaxResidentBlocks + 1}) {
    HostSimulatorOptions Opts;
    Opts.ResidentBlocks = Resident;
    auto Drv = openHostSimulator(Opts);
    ASSERT_FALSE(Drv) << Resident;
    EXPECT_NE(Drv.error().Message.find("1 to 64 blocks in flight"),
              std::string::npos)
        << Drv.error().Message;
  }
  HostSimulatorOptions Most;
  Most.ResidentBlocks = HostSimulatorOptions::MaxResidentBlocks;
  EXPECT_TRUE(openHostSimulator(Most));
}

TEST_F(HostSimulator, RacesInSharedMemoryFailTheLaunch) {
  const std::string Barrier = "  call void @llvm.nvvm.barrier0()";
  const std::string Shuffle = "  %s = call i32 @llvm.nvvm.shfl.sync.idx.i32("
                              "i32 -1, i32 %t, i32 0, i32 31)";
  struct Case {
    std::string Sync;
    int Xor;
    unsigned Threads;
    const char *Race; // nullptr: no race
  } Cases[] = {
      // Across warps only a barrier orders the store and the other's load.
      {"", 32, 64,
       "race in shared memory (write after read): thread 32 "
       "writes byte 128 of a shared array of 260 bytes that "
       "thread 0 read"},
      {Shuffle, 32, 64,
       "race in shared memory (read after write): thread 0 "
       "reads byte 128 of a shared array of 260 bytes that "
       "thread 32 wrote"},
      {Barrier, 32, 64, nullptr},
      // Within a warp a collective of the warp orders them too.
      {"", 1, 32,
       "race in shared memory (write after read): thread 1 "
       "writes byte 4 of a shared array of 260 bytes that thread "
       "0 read"},
      {Shuffle, 1, 32, nullptr},
      {Barrier, 1, 32, nullptr},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Sync + " xor " + std::to_string(C.Xor));
    auto M = Drv->loadPtx(std::string(Header) + exchangeKernel(C.Sync, C.Xor));
    ASSERT_TRUE(M) << M.error().Message;
    auto K = M->getKernel("exch");
    ASSERT_TRUE(K);
    auto OB = Drv->alloc(64 * 4);
    DevicePtr OP = OB->ptr();
    void *Args[] = {&OP};
    LaunchDims Dims;
    Dims.Grid[0] = 2;
    Dims.Block[0] = C.Threads;
    auto St = Drv->launch(*K, Dims, Args);
    if (!C.Race) {
      ASSERT_TRUE(St) << St.error().Message;
      std::vector<uint32_t> Out(C.Threads);
      ASSERT_TRUE(Drv->copyToHost(Out.data(), *OB, Out.size() * 4));
      for (uint32_t T = 0; T < C.Threads; ++T)
        EXPECT_EQ(Out[T], T ^ uint32_t(C.Xor));
      continue;
    }
    ASSERT_FALSE(St);
    EXPECT_NE(St.error().Message.find(C.Race), std::string::npos)
        << St.error().Message;
    EXPECT_NE(St.error().Message.find("block (0,0,0)"), std::string::npos)
        << St.error().Message;
  }
}

TEST_F(HostSimulator, PtxAndUnmodelledIntrinsicsAreRejected) {
  auto P = Drv->loadPtx(".version 8.5\n.target sm_90\n");
  ASSERT_FALSE(P);
  EXPECT_EQ(P.error().Kind, DriverErrorKind::JitFailed);
  EXPECT_NE(P.error().Message.find("EmitOptions::HostIr"), std::string::npos)
      << P.error().Message;
  auto Q = Drv->loadPtx(R"(
declare i32 @llvm.nvvm.read.ptx.sreg.clock()
define ptx_kernel void @k(ptr addrspace(1) %o) {
  %c = call i32 @llvm.nvvm.read.ptx.sreg.clock()
  store i32 %c, ptr addrspace(1) %o
  ret void
}
)");
  ASSERT_FALSE(Q);
  EXPECT_NE(Q.error().Message.find("the host simulator does not model "
                                   "special register "
                                   "llvm.nvvm.read.ptx.sreg.clock"),
            std::string::npos)
      << Q.error().Message;
}

TEST_F(HostSimulator, OneSimulatorAtATime) {
  auto Second = openHostSimulator();
  ASSERT_FALSE(Second);
  EXPECT_NE(Second.error().Message.find("already open"), std::string::npos);
}

/// The checking can fail: an emitted reduction passes, and the same kernel
/// with its add turned into a subtract does not.
TEST_F(HostSimulator, RunKernelsCatchesAWrongKernel) {
  auto M = parseHloModule(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p = f32[37,300] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[37] reduce(p, z), dimensions={1}, to_apply=add
}
ENTRY e {
  x = f32[37,300] parameter(0)
  ROOT f = f32[37] fusion(x), kind=kInput, calls=fused
})",
                          "m.hlo");
  ASSERT_TRUE(M) << M.error().str();
  EmitOptions O;
  O.HostIr = true;
  auto R = emitModule(**M, O);
  ASSERT_TRUE(R) << R.error().str();
  EXPECT_TRUE(R->Ptx.empty());
  std::ostringstream Log;
  auto Good = runKernels(*Drv, **M, R->LlvmIr, R->Kernels, RunOptions(), Log);
  ASSERT_TRUE(Good) << Good.error().Message;
  ASSERT_EQ(Good->size(), 1u);
  EXPECT_TRUE((*Good)[0].Ok) << (*Good)[0].OutputReports.front();

  std::string Bad = R->LlvmIr;
  size_t At = Bad.find(" fadd ");
  ASSERT_NE(At, std::string::npos);
  Bad.replace(At, 6, " fsub ");
  auto Wrong = runKernels(*Drv, **M, Bad, R->Kernels, RunOptions(), Log);
  ASSERT_TRUE(Wrong) << Wrong.error().Message;
  EXPECT_FALSE((*Wrong)[0].Ok);
}

/// The fast f32 log1p (no libdevice) over its whole range in the simulator,
/// whose lg2.approx is the exact log2: within 3 ulp of std::log1p (its
/// polynomial within 1 ulp where 1 + x is in [sqrt(1/2), sqrt(2))), and
/// -1, below -1, infinities, NaN and signed zeros as std::log1p has them.
TEST_F(HostSimulator, FastLog1pIsWithinThreeUlpEverywhere) {
  std::vector<float> X = {-1.0f, -0.0f, 0.0f,   INFINITY, -INFINITY,
                          NAN,   -2.0f, 1e-45f, -1e-45f,  3e38f};
  for (int I = 0; I < 20000; ++I)
    X.push_back(-0.9999f + 4.9999f * float(I) / 19999.0f);
  for (int I = 0; I < 6000; ++I) {
    X.push_back(std::pow(10.0f, -30.0f + 60.0f * float(I) / 5999.0f));
    X.push_back(-std::pow(10.0f, -30.0f + 29.99f * float(I) / 5999.0f));
  }
  const size_t N = X.size();
  const std::string Shape = "f32[" + std::to_string(N) + "]";
  auto M = parseHloModule("HloModule m\nfused {\n  p = " + Shape +
                              " parameter(0)\n  ROOT l = " + Shape +
                              " log-plus-one(p)\n}\nENTRY e {\n  x = " + Shape +
                              " parameter(0)\n  ROOT f = " + Shape +
                              " fusion(x), kind=kLoop, calls=fused\n}\n",
                          "m.hlo");
  ASSERT_TRUE(M) << M.error().str();
  EmitOptions O;
  O.HostIr = true;
  auto R = emitModule(**M, O);
  ASSERT_TRUE(R) << R.error().str();
  ASSERT_EQ(R->Kernels.size(), 1u);
  EXPECT_EQ(R->LlvmIr.find("__nv_log1p"), std::string::npos);
  auto Mod = Drv->loadPtx(R->LlvmIr);
  ASSERT_TRUE(Mod) << Mod.error().Message;
  auto K = Mod->getKernel(R->Kernels[0].Name);
  ASSERT_TRUE(K) << K.error().Message;
  LaunchDims Dims;
  for (int D = 0; D < 3; ++D) {
    Dims.Grid[D] = unsigned(R->Kernels[0].Grid[D]);
    Dims.Block[D] = unsigned(R->Kernels[0].Block[D]);
  }
  std::vector<float> Y(N);
  auto St = launchFloats(*K, X, Dims, Y);
  ASSERT_TRUE(St) << St.error().Message;
  for (size_t I = 0; I < N; ++I) {
    const double Want = std::log1p(double(X[I]));
    const float W = float(Want);
    if (std::isnan(Want) || std::isinf(Want) || W == 0) {
      EXPECT_TRUE(std::isnan(W) ? std::isnan(Y[I]) : Y[I] == W)
          << "log1p(" << X[I] << ") = " << Y[I] << ", want " << W;
      if (W == 0) {
        EXPECT_EQ(std::signbit(Y[I]), std::signbit(W)) << X[I];
      }
      continue;
    }
    const double Ulp = std::ldexp(1.0, std::max(std::ilogb(W) - 23, -149));
    EXPECT_LE(std::fabs(double(Y[I]) - Want), 3 * Ulp)
        << "log1p(" << X[I] << ") = " << Y[I] << ", want " << Want;
  }
}

/// A producer/consumer ring through two shared stages, as a warp-specialized
/// kernel has it: lane 0 of warp 1 copies 8 chunks of 64 floats with
/// `cp.async.bulk` (bytes counted on the stage's `full` barrier), after the
/// consumer warp 0 has released the stage (`empty`, 32 arrivals); warp 0
/// sums each chunk. \p Arrive false: the consumers never release a stage.
std::string ringKernel(bool Arrive) {
  std::string K = R"(
@stage = internal addrspace(3) global [2 x [64 x float]] undef, align 16
@bars = internal addrspace(3) global [4 x i64] undef, align 8

define internal void @wait(ptr addrspace(3) %bar, i32 %par) {
entry:
  br label %spin
spin:
  %d = call i32 asm sideeffect "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }", "=r,l,r,~{memory}"(ptr addrspace(3) %bar, i32 %par)
  %ok = icmp ne i32 %d, 0
  br i1 %ok, label %done, label %spin
done:
  ret void
}

define ptx_kernel void @ring(ptr addrspace(1) %x, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t0 = icmp eq i32 %tid, 0
  br i1 %t0, label %init, label %sync
init:
  %f1 = getelementptr i64, ptr addrspace(3) @bars, i32 1
  %e0 = getelementptr i64, ptr addrspace(3) @bars, i32 2
  %e1 = getelementptr i64, ptr addrspace(3) @bars, i32 3
  call void asm sideeffect "mbarrier.init.shared::cta.b64 [$0], $1;", "l,r,~{memory}"(ptr addrspace(3) @bars, i32 1)
  call void asm sideeffect "mbarrier.init.shared::cta.b64 [$0], $1;", "l,r,~{memory}"(ptr addrspace(3) %f1, i32 1)
  call void asm sideeffect "mbarrier.init.shared::cta.b64 [$0], $1;", "l,r,~{memory}"(ptr addrspace(3) %e0, i32 32)
  call void asm sideeffect "mbarrier.init.shared::cta.b64 [$0], $1;", "l,r,~{memory}"(ptr addrspace(3) %e1, i32 32)
  call void asm sideeffect "fence.mbarrier_init.release.cluster;", "~{memory}"()
  br label %sync
sync:
  call void @llvm.nvvm.barrier0()
  %warp = lshr i32 %tid, 5
  %lane = and i32 %tid, 31
  %isprod = icmp eq i32 %warp, 1
  br i1 %isprod, label %prod, label %cons
prod:
  %l0 = icmp eq i32 %lane, 0
  br i1 %l0, label %ploop, label %exit
ploop:
  %i = phi i32 [ 0, %prod ], [ %i1, %pcopy ]
  %s = and i32 %i, 1
  %round = lshr i32 %i, 1
  %full = getelementptr i64, ptr addrspace(3) @bars, i32 %s
  %s2 = add i32 %s, 2
  %empty = getelementptr i64, ptr addrspace(3) @bars, i32 %s2
  %again = icmp uge i32 %i, 2
  br i1 %again, label %pwait, label %pcopy0
pwait:
  %r1 = sub i32 %round, 1
  %pp = and i32 %r1, 1
  call void @wait(ptr addrspace(3) %empty, i32 %pp)
  br label %pcopy0
pcopy0:
  call void asm sideeffect "{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1; }", "l,r,~{memory}"(ptr addrspace(3) %full, i32 256)
  %dst = getelementptr [64 x float], ptr addrspace(3) @stage, i32 %s
  %off = mul i32 %i, 64
  %src = getelementptr float, ptr addrspace(1) %x, i32 %off
  call void asm sideeffect "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];", "l,l,r,l,~{memory}"(ptr addrspace(3) %dst, ptr addrspace(1) %src, i32 256, ptr addrspace(3) %full)
  br label %pcopy
pcopy:
  %i1 = add i32 %i, 1
  %pmore = icmp ult i32 %i1, 8
  br i1 %pmore, label %ploop, label %exit
cons:
  %c = phi i32 [ 0, %sync ], [ %c1, %cnext ]
  %cs = and i32 %c, 1
  %cround = lshr i32 %c, 1
  %cpar = and i32 %cround, 1
  %cfull = getelementptr i64, ptr addrspace(3) @bars, i32 %cs
  call void @wait(ptr addrspace(3) %cfull, i32 %cpar)
  %a = getelementptr [64 x float], ptr addrspace(3) @stage, i32 %cs, i32 %lane
  %lane32 = add i32 %lane, 32
  %b = getelementptr [64 x float], ptr addrspace(3) @stage, i32 %cs, i32 %lane32
  %va = load float, ptr addrspace(3) %a
  %vb = load float, ptr addrspace(3) %b
  %v0 = fadd float %va, %vb
  %h16 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v0, i32 16, i32 31)
  %v1 = fadd float %v0, %h16
  %h8 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v1, i32 8, i32 31)
  %v2 = fadd float %v1, %h8
  %h4 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v2, i32 4, i32 31)
  %v3 = fadd float %v2, %h4
  %h2 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v3, i32 2, i32 31)
  %v4 = fadd float %v3, %h2
  %h1 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v4, i32 1, i32 31)
  %v5 = fadd float %v4, %h1
  %cs2 = add i32 %cs, 2
  %cempty = getelementptr i64, ptr addrspace(3) @bars, i32 %cs2
)";
  if (Arrive)
    K +=
        R"(  call void asm sideeffect "{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [$0]; }", "l,~{memory}"(ptr addrspace(3) %cempty)
)";
  K += R"(  %cl0 = icmp eq i32 %lane, 0
  br i1 %cl0, label %cstore, label %cnext
cstore:
  %o = getelementptr float, ptr addrspace(1) %out, i32 %c
  store float %v5, ptr addrspace(1) %o
  br label %cnext
cnext:
  %c1 = add i32 %c, 1
  %cmore = icmp ult i32 %c1, 8
  br i1 %cmore, label %cons, label %exit
exit:
  ret void
}
)";
  return K;
}

/// Barriers in shared memory and bulk copies: a two-stage ring carries 8
/// chunks from a producer warp to a consumer warp; without the consumer's
/// releases the producer waits forever, a deadlock.
TEST_F(HostSimulator, BulkCopiesAndBarriersCarryARing) {
  for (bool Arrive : {true, false}) {
    auto M = Drv->loadPtx(std::string(Header) + ringKernel(Arrive));
    ASSERT_TRUE(M) << M.error().Message;
    auto K = M->getKernel("ring");
    ASSERT_TRUE(K) << K.error().Message;
    std::vector<float> X(8 * 64);
    for (size_t I = 0; I < X.size(); ++I)
      X[I] = float(I % 23);
    LaunchDims Dims;
    Dims.Block[0] = 64;
    std::vector<float> Out(8);
    auto St = launchFloats(*K, X, Dims, Out);
    if (!Arrive) {
      ASSERT_FALSE(St);
      EXPECT_NE(St.error().Message.find("deadlock"), std::string::npos)
          << St.error().Message;
      continue;
    }
    ASSERT_TRUE(St) << St.error().Message;
    for (int C = 0; C < 8; ++C) {
      float Want = 0;
      for (int I = 0; I < 64; ++I)
        Want += X[size_t(C * 64 + I)];
      EXPECT_EQ(Out[size_t(C)], Want) << "chunk " << C;
    }
  }
}

} // namespace
