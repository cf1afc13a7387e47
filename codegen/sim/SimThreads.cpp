//===- codegen/sim/SimThreads.cpp - A grid of GPU threads on one CPU ------===//
//
// Part of idxmap. See SimThreads.h. The kernels call the three runtime
// functions at the end of this file (SimIr.h names them).
//
//===----------------------------------------------------------------------===//
#include "SimThreads.h"
#include "SimFiber.h"
#include "SimIr.h"

#include <algorithm>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <map>

#include <sys/mman.h>
#include <unistd.h>

namespace idxmap {
namespace sim {
namespace {

constexpr unsigned WarpSize = 32;
/// Each fiber's stack (reserved, committed as touched), above a guard page.
constexpr size_t StackBytes = 512 * 1024;

/// Polling: suspended at a poll that kept reading one value (a flag or a
/// descriptor another thread has not written yet); it runs again each round
/// of the scheduler, and counts as waiting forever when a round changes
/// nothing.
enum class State { Ready, Polling, AtBarrier, AtWarp, Done };

/// Reads of one address that see one value, in a row, before the thread
/// gives the CPU to the others of its block (PollFn).
constexpr unsigned PollSpins = 64;

struct Thread {
  FiberContext Ctx;
  State St = State::Ready;
  unsigned Tid[3] = {0, 0, 0};
  unsigned Linear = 0;
  // The warp collective it waits at.
  uint32_t Op = 0, Mask = 0, A = 0, B = 0, C = 0, Result = 0;
  // Its last poll: the address, the value read, the reads in a row.
  uintptr_t PollAddr = 0;
  uint64_t PollValue = 0;
  unsigned PollRepeats = 0;
};

/// What the race check knows of one byte of shared memory: its last
/// write and the reads since, each with the barrier interval it fell in and
/// the count of warp collectives its warp had completed.
struct ShadowByte {
  uint64_t WriteEpoch = 0, ReadEpoch = 0;
  uint32_t Writer = 0, WriteSync = 0;
  /// The one thread that read since the reads became unordered with a
  /// later access, or SeveralReaders; ReaderWarp is MixedWarps when they
  /// came from several warps.
  uint32_t Reader = 0, ReaderWarp = 0, ReadSync = 0;
  bool AtomicWrite = false;
};
constexpr uint32_t SeveralReaders = ~0u, MixedWarps = ~0u;

/// The shadow of one shared array of the launch.
struct Shadow {
  uintptr_t Base = 0;
  uint64_t Bytes = 0;
  std::vector<ShadowByte> Cells;
};

/// The block being run (one at a time, on one CPU thread).
struct Block {
  const GridLaunch *L = nullptr;
  unsigned Ctaid[3] = {0, 0, 0};
  std::vector<Thread> Threads;
  Thread *Cur = nullptr;
  FiberContext Sched;
  sigjmp_buf Fault;
  /// The faulting address of a SIGSEGV/SIGBUS.
  uintptr_t FaultAddress = 0;
  /// A misuse the kernel made (a barrier without fibers, divergent
  /// collectives, a race in shared memory); the launch fails with it.
  std::string Misuse;
  /// The barrier interval: one more at each block and each barrier, never
  /// reset in a launch, so a shadow byte of an earlier block never matches.
  uint64_t Epoch = 0;
  /// Per warp, the warp collectives completed in this block: accesses of
  /// two lanes with one between them are ordered.
  std::vector<uint32_t> WarpSync;
  std::vector<Shadow> Shadows;
  /// Whether the scheduler's round changed anything: a thread reached a
  /// barrier, a collective or its end, or a poll read a new value.
  bool Moved = false;
};

thread_local Block *Active = nullptr;

/// Fiber stacks, kept for the next launch.
struct StackPool {
  std::vector<char *> Stacks;
  char *get(size_t I) {
    while (Stacks.size() <= I) {
      size_t Page = size_t(sysconf(_SC_PAGESIZE));
      void *P = mmap(nullptr, StackBytes + Page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (P == MAP_FAILED)
        return nullptr;
      mprotect(P, Page, PROT_NONE);
      Stacks.push_back(static_cast<char *>(P) + Page);
    }
    return Stacks[I];
  }
};
StackPool Pool;

/// The signal stack the fault handler runs on (a fiber may have overrun its
/// own).
std::vector<char> AltStack(64 * 1024);

void onFault(int Sig, siginfo_t *Info, void *) {
  if (Active) {
    Active->FaultAddress = reinterpret_cast<uintptr_t>(Info->si_addr);
    siglongjmp(Active->Fault, Sig);
  }
  std::signal(Sig, SIG_DFL);
  std::raise(Sig);
}

/// Installs onFault for the launch's faults; restores the old handlers.
class FaultGuard {
public:
  FaultGuard() {
    stack_t SS{};
    SS.ss_sp = AltStack.data();
    SS.ss_size = AltStack.size();
    sigaltstack(&SS, &OldStack);
    struct sigaction SA {};
    SA.sa_sigaction = onFault;
    SA.sa_flags = SA_ONSTACK | SA_NODEFER | SA_SIGINFO;
    sigemptyset(&SA.sa_mask);
    for (size_t I = 0; I < 3; ++I)
      sigaction(Sigs[I], &SA, &Old[I]);
  }
  ~FaultGuard() {
    for (size_t I = 0; I < 3; ++I)
      sigaction(Sigs[I], &Old[I], nullptr);
    sigaltstack(&OldStack, nullptr);
  }

private:
  static constexpr int Sigs[3] = {SIGSEGV, SIGBUS, SIGFPE};
  struct sigaction Old[3];
  stack_t OldStack;
};

void fiberMain() {
  Block &B = *Active;
  B.L->Entry(B.L->Args);
  B.Cur->St = State::Done;
  // Returning switches to the scheduler (startFiber's Return).
}

/// Waits (a fiber) until the scheduler resumes this thread.
void yieldToScheduler() {
  Block &B = *Active;
  switchFiber(B.Cur->Ctx, B.Sched);
}

/// The source lane of a shuffle of lane \p Lane (PTX ISA, shfl.sync), or
/// -1 where the lane keeps its own value.
int shuffleSource(WarpOp Op, unsigned Lane, uint32_t Bv, uint32_t Cv) {
  uint32_t SegMask = (Cv >> 8) & 0x1f;
  uint32_t MaxLane = (Lane & SegMask) | (Cv & 0x1f & ~SegMask);
  uint32_t MinLane = Lane & SegMask;
  int64_t J = 0;
  bool InRange = true;
  switch (Op) {
  case WarpOp::ShflUp:
    J = int64_t(Lane) - int64_t(Bv);
    InRange = J >= int64_t(MaxLane);
    break;
  case WarpOp::ShflDown:
    J = int64_t(Lane) + int64_t(Bv);
    InRange = J <= int64_t(MaxLane);
    break;
  case WarpOp::ShflBfly:
    J = int64_t(Lane ^ Bv);
    InRange = J <= int64_t(MaxLane);
    break;
  default:
    J = int64_t(MinLane | (Bv & 0x1f & ~SegMask));
    InRange = J <= int64_t(MaxLane);
    break;
  }
  return InRange ? int(J) : -1;
}

/// Completes the collectives of warp \p W whose lanes all wait at them.
/// Returns true when one completed.
bool resolveWarp(Block &B, size_t First, size_t End) {
  bool Progress = false;
  for (size_t I = First; I < End; ++I) {
    Thread &T = B.Threads[I];
    if (T.St != State::AtWarp)
      continue;
    uint32_t Mask = T.Mask;
    // Every live lane of the mask must wait at a collective of this mask.
    bool Ready = true;
    for (size_t J = First; J < End && Ready; ++J) {
      unsigned Lane = unsigned(J - First);
      if (!(Mask >> Lane & 1))
        continue;
      const Thread &U = B.Threads[J];
      if (U.St == State::Done)
        continue;
      Ready = U.St == State::AtWarp && U.Mask == Mask;
    }
    if (!Ready)
      continue;
    uint32_t Values[WarpSize];
    bool In[WarpSize] = {};
    for (size_t J = First; J < End; ++J) {
      unsigned Lane = unsigned(J - First);
      const Thread &U = B.Threads[J];
      if ((Mask >> Lane & 1) && U.St == State::AtWarp) {
        if (U.Op != T.Op) {
          B.Misuse = "lanes of one warp wait at different warp operations "
                     "with the same mask";
          return false;
        }
        In[Lane] = true;
        Values[Lane] = U.A;
      }
    }
    WarpOp Op = WarpOp(T.Op);
    uint32_t Ballot = 0;
    for (unsigned Lane = 0; Lane < WarpSize; ++Lane)
      if (In[Lane] && Values[Lane])
        Ballot |= 1u << Lane;
    uint32_t Members = 0;
    for (unsigned Lane = 0; Lane < WarpSize; ++Lane)
      if (In[Lane])
        Members |= 1u << Lane;
    for (size_t J = First; J < End; ++J) {
      unsigned Lane = unsigned(J - First);
      if (!In[Lane])
        continue;
      Thread &U = B.Threads[J];
      switch (Op) {
      case WarpOp::Ballot:
        U.Result = Ballot;
        break;
      case WarpOp::All:
        U.Result = Ballot == Members;
        break;
      case WarpOp::Any:
        U.Result = Ballot != 0;
        break;
      default: {
        int Src = shuffleSource(Op, Lane, U.B, U.C);
        if (Src < 0)
          U.Result = U.A;
        else if (unsigned(Src) < WarpSize && In[Src])
          U.Result = Values[Src];
        else
          U.Result = 0xffffffffu; // an inactive source: undefined
        break;
      }
      }
      U.St = State::Ready;
    }
    ++B.WarpSync[First / WarpSize];
    Progress = true;
  }
  return Progress;
}

/// Releases the barrier when every live thread waits at it.
bool resolveBarrier(Block &B) {
  bool Any = false;
  for (const Thread &T : B.Threads) {
    if (T.St == State::AtWarp || T.St == State::Ready || T.St == State::Polling)
      return false;
    Any |= T.St == State::AtBarrier;
  }
  if (!Any)
    return false;
  for (Thread &T : B.Threads)
    if (T.St == State::AtBarrier)
      T.St = State::Ready;
  ++B.Epoch;
  return true;
}

std::string describeBlock(const Block &B) {
  return "block (" + std::to_string(B.Ctaid[0]) + "," +
         std::to_string(B.Ctaid[1]) + "," + std::to_string(B.Ctaid[2]) + ")";
}

std::string deadlock(const Block &B) {
  size_t AtBarrier = 0, AtWarp = 0, Polling = 0, Done = 0;
  const Thread *Poller = nullptr;
  for (const Thread &T : B.Threads) {
    AtBarrier += T.St == State::AtBarrier;
    AtWarp += T.St == State::AtWarp;
    Done += T.St == State::Done;
    if (T.St == State::Polling && !Polling++)
      Poller = &T;
  }
  std::string Why = "deadlock in " + describeBlock(B) + ": " +
                    std::to_string(AtBarrier) + " threads wait at a barrier, " +
                    std::to_string(AtWarp) + " at a warp collective, " +
                    std::to_string(Done) + " finished";
  if (!Poller)
    return Why;
  Why += ", " + std::to_string(Polling) +
         " poll memory that no thread of the block changes (blocks run in "
         "launch order: a block waits only on earlier ones); thread " +
         std::to_string(Poller->Linear) + " reads " +
         std::to_string(Poller->PollValue) + " again and again";
  if (B.L->DescribeAddress)
    Why += " at " + B.L->DescribeAddress(Poller->PollAddr);
  return Why;
}

/// Runs the block's threads as fibers until all finish.
std::string runFibers(Block &B) {
  size_t N = B.Threads.size();
  for (size_t I = 0; I < N; ++I) {
    Thread &T = B.Threads[I];
    char *Stack = Pool.get(I);
    if (!Stack)
      return "cannot map a fiber stack";
    startFiber(T.Ctx, Stack, StackBytes, fiberMain, B.Sched);
  }
  for (;;) {
    B.Moved = false;
    for (Thread &T : B.Threads)
      if (T.St == State::Ready || T.St == State::Polling) {
        T.St = State::Ready;
        B.Cur = &T;
        switchFiber(B.Sched, T.Ctx);
        if (!B.Misuse.empty())
          return B.Misuse + " (" + describeBlock(B) + ")";
        B.Moved |= T.St != State::Polling;
      }
    bool AllDone = true;
    for (const Thread &T : B.Threads)
      AllDone &= T.St == State::Done;
    if (AllDone)
      return "";
    bool Progress = false;
    for (size_t W = 0; W < N; W += WarpSize)
      Progress |= resolveWarp(B, W, std::min(N, W + WarpSize));
    if (!B.Misuse.empty())
      return B.Misuse + " (" + describeBlock(B) + ")";
    if (!Progress && !resolveBarrier(B) && !B.Moved)
      return deadlock(B);
  }
}

/// Records an access of \p Bytes bytes at \p Addr by the running thread
/// and reports the first hazard with an earlier access of another thread
/// in the same barrier interval that no warp collective of a common warp
/// ordered (the hazards compute-sanitizer's racecheck reports).
void checkShared(Block &B, uintptr_t Addr, uint32_t Bytes, SharedAccess K) {
  Shadow *S = nullptr;
  for (Shadow &X : B.Shadows)
    if (Addr >= X.Base && Addr - X.Base < X.Bytes)
      S = &X;
  if (!S)
    return;
  const uint32_t T = B.Cur->Linear, Warp = T / WarpSize;
  const uint32_t Sync = B.WarpSync[Warp];
  auto Ordered = [&](uint32_t Other, uint32_t OtherSync) {
    return Other == T || (Other / WarpSize == Warp && Sync > OtherSync);
  };
  const bool Atomic = K == SharedAccess::Atomic;
  const bool Writes = K != SharedAccess::Read;
  uint64_t Off = Addr - S->Base;
  uint64_t End = std::min<uint64_t>(Off + Bytes, S->Bytes);
  for (uint64_t I = Off; I < End; ++I) {
    ShadowByte &C = S->Cells[size_t(I)];
    const char *Hazard = nullptr;
    std::string Other;
    if (C.WriteEpoch == B.Epoch && !Ordered(C.Writer, C.WriteSync) &&
        !(Atomic && C.AtomicWrite)) {
      Hazard = Writes ? "write after write" : "read after write";
      Other = "thread " + std::to_string(C.Writer) + " wrote";
    } else if (Writes && C.ReadEpoch == B.Epoch &&
               !(C.Reader == T ||
                 (C.ReaderWarp == Warp && Sync > C.ReadSync))) {
      Hazard = "write after read";
      Other = C.Reader == SeveralReaders
                  ? std::string("other threads read")
                  : "thread " + std::to_string(C.Reader) + " read";
    }
    if (Hazard) {
      if (B.Misuse.empty())
        B.Misuse = std::string("race in shared memory (") + Hazard +
                   "): thread " + std::to_string(T) +
                   (Writes ? " writes" : " reads") + " byte " +
                   std::to_string(I) + " of a shared array of " +
                   std::to_string(S->Bytes) + " bytes that " + Other +
                   " with no barrier between";
      return;
    }
    if (Writes) {
      C.WriteEpoch = B.Epoch;
      C.Writer = T;
      C.WriteSync = Sync;
      C.AtomicWrite = Atomic;
    } else if (C.ReadEpoch != B.Epoch || C.Reader == T ||
               (C.ReaderWarp == Warp && Sync > C.ReadSync)) {
      // The earlier reads are ordered before this one, so before every
      // access ordered after it: this read stands for them.
      C.ReadEpoch = B.Epoch;
      C.Reader = T;
      C.ReaderWarp = Warp;
      C.ReadSync = Sync;
    } else {
      C.Reader = SeveralReaders;
      if (C.ReaderWarp != Warp)
        C.ReaderWarp = MixedWarps;
      C.ReadSync = Sync;
    }
  }
}

} // namespace

std::string runGrid(const GridLaunch &L) {
  Block B;
  B.L = &L;
  size_t N = size_t(L.Block[0]) * L.Block[1] * L.Block[2];
  B.Threads.resize(N);
  for (size_t I = 0; I < N; ++I) {
    Thread &T = B.Threads[I];
    T.Linear = unsigned(I);
    T.Tid[0] = unsigned(I % L.Block[0]);
    T.Tid[1] = unsigned(I / L.Block[0] % L.Block[1]);
    T.Tid[2] = unsigned(I / (size_t(L.Block[0]) * L.Block[1]));
  }
  B.WarpSync.resize((N + WarpSize - 1) / WarpSize);
  for (auto &[Ptr, Bytes] : L.Shared) {
    Shadow S;
    S.Base = reinterpret_cast<uintptr_t>(Ptr);
    S.Bytes = Bytes;
    S.Cells.resize(size_t(Bytes));
    B.Shadows.push_back(std::move(S));
  }
  FaultGuard Guard;
  Block *Outer = Active;
  Active = &B;
  std::string Error;
  int Sig = sigsetjmp(B.Fault, 1);
  if (Sig) {
    Error = std::string(Sig == SIGFPE ? "arithmetic fault (integer division "
                                        "by zero?)"
                                      : "invalid memory access") +
            " in " + describeBlock(B) + ", thread " +
            std::to_string(B.Cur ? B.Cur->Linear : 0);
    if (Sig != SIGFPE && L.DescribeAddress)
      Error += ": " + L.DescribeAddress(B.FaultAddress);
  }
  for (unsigned Z = 0; Error.empty() && Z < L.Grid[2]; ++Z)
    for (unsigned Y = 0; Error.empty() && Y < L.Grid[1]; ++Y)
      for (unsigned X = 0; Error.empty() && X < L.Grid[0]; ++X) {
        B.Ctaid[0] = X;
        B.Ctaid[1] = Y;
        B.Ctaid[2] = Z;
        for (auto &[Ptr, Bytes] : L.Shared)
          std::memset(Ptr, 0xff, Bytes);
        ++B.Epoch;
        std::fill(B.WarpSync.begin(), B.WarpSync.end(), 0);
        for (Thread &T : B.Threads) {
          T.St = State::Ready;
          T.PollAddr = 0;
          T.PollRepeats = 0;
        }
        if (L.Collectives) {
          Error = runFibers(B);
          continue;
        }
        for (Thread &T : B.Threads) {
          B.Cur = &T;
          L.Entry(L.Args);
          if (!B.Misuse.empty()) {
            Error = B.Misuse + " (" + describeBlock(B) + ")";
            break;
          }
        }
      }
  Active = Outer;
  return Error;
}

} // namespace sim
} // namespace idxmap

using namespace idxmap::sim;

extern "C" {

uint32_t __idxmap_sim_sreg(uint32_t Code) {
  Block &B = *Active;
  const Thread &T = *B.Cur;
  const GridLaunch &L = *B.L;
  switch (Sreg(Code)) {
  case Sreg::TidX:
  case Sreg::TidY:
  case Sreg::TidZ:
    return T.Tid[Code - uint32_t(Sreg::TidX)];
  case Sreg::NtidX:
  case Sreg::NtidY:
  case Sreg::NtidZ:
    return L.Block[Code - uint32_t(Sreg::NtidX)];
  case Sreg::CtaidX:
  case Sreg::CtaidY:
  case Sreg::CtaidZ:
    return B.Ctaid[Code - uint32_t(Sreg::CtaidX)];
  case Sreg::NctaidX:
  case Sreg::NctaidY:
  case Sreg::NctaidZ:
    return L.Grid[Code - uint32_t(Sreg::NctaidX)];
  case Sreg::LaneId:
    return T.Linear % WarpSize;
  case Sreg::WarpSize:
    return WarpSize;
  }
  return 0;
}

void __idxmap_sim_barrier() {
  Block &B = *Active;
  if (!B.L->Collectives) {
    B.Misuse = "a barrier in a kernel run without fibers";
    return;
  }
  B.Cur->St = State::AtBarrier;
  yieldToScheduler();
}

uint32_t __idxmap_sim_warp(uint32_t Op, uint32_t Mask, uint32_t A, uint32_t Bv,
                           uint32_t C) {
  Block &B = *Active;
  if (!B.L->Collectives) {
    B.Misuse = "a warp collective in a kernel run without fibers";
    return 0;
  }
  Thread &T = *B.Cur;
  T.Op = Op;
  T.Mask = Mask;
  T.A = A;
  T.B = Bv;
  T.C = C;
  T.St = State::AtWarp;
  yieldToScheduler();
  return T.Result;
}

void __idxmap_sim_poll(const void *Ptr, uint32_t Bytes) {
  Block &B = *Active;
  Thread &T = *B.Cur;
  uint64_t V = 0;
  std::memcpy(&V, Ptr, std::min<size_t>(Bytes, sizeof V));
  const uintptr_t Addr = reinterpret_cast<uintptr_t>(Ptr);
  if (Addr != T.PollAddr || V != T.PollValue) {
    T.PollAddr = Addr;
    T.PollValue = V;
    T.PollRepeats = 0;
    B.Moved = true;
    return;
  }
  // (A kernel with polls always runs as fibers: SimIr marks it.)
  if (++T.PollRepeats < PollSpins || !B.L->Collectives)
    return;
  T.St = State::Polling;
  yieldToScheduler();
}

void __idxmap_sim_shared(void *Ptr, uint32_t Bytes, uint32_t Kind) {
  checkShared(*Active, reinterpret_cast<uintptr_t>(Ptr), Bytes,
              SharedAccess(Kind));
}

} // extern "C"
