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
#include <random>

#include <sys/mman.h>
#include <unistd.h>

namespace idxmap {
namespace sim {
namespace {

constexpr unsigned WarpSize = 32;
/// Each fiber's stack (reserved, committed as touched), above a guard page.
constexpr size_t StackBytes = 512 * 1024;

/// Polling: suspended at a poll that kept reading what it read before (a
/// flag or a descriptor another thread has not written yet); it runs again
/// each round of the scheduler.
enum class State { Ready, Polling, AtBarrier, AtWarp, Done };

/// Polls in a row that read nothing new (each address and value already
/// seen) after which a thread gives the CPU to the others at each poll.
constexpr unsigned PollSpins = 64;
/// Rounds in a row in which no thread did anything new (StalledRounds)
/// after which the blocks in flight are deadlocked: a thread that re-read
/// a value it had seen and went on idles one round at most.
constexpr unsigned StalledRounds = 8;
/// The (address, value) pairs a thread remembers of its polls: a look-back
/// that walks a window of descriptors again and again repeats within it.
constexpr size_t PollMemory = 256;

struct Thread {
  FiberContext Ctx;
  State St = State::Ready;
  unsigned Tid[3] = {0, 0, 0};
  unsigned Linear = 0;
  // The warp collective it waits at.
  uint32_t Op = 0, Mask = 0, A = 0, B = 0, C = 0, Result = 0;
  // Its last poll (the address, the value read), the polls in a row that
  // read nothing new, and what its polls read (by address).
  uintptr_t PollAddr = 0;
  uint64_t PollValue = 0;
  unsigned PollRepeats = 0;
  std::vector<std::pair<uintptr_t, uint64_t>> Seen;
  // In its last turn: whether a poll read something new, and the polls
  // that did not.
  bool TurnNew = false;
  unsigned TurnRepeats = 0;
  /// Its last turn did nothing new: it only read again what it had read
  /// (a wait), without finishing.
  bool idled() const {
    return St != State::Done && TurnRepeats > 0 && !TurnNew;
  }
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

/// A block of the launch (one runs at a time, on one CPU thread; with
/// GridLaunch::Resident, several are in flight between their rounds).
struct Block {
  const GridLaunch *L = nullptr;
  unsigned Ctaid[3] = {0, 0, 0};
  /// Its place among the blocks in flight: which fiber stacks it uses.
  unsigned Slot = 0;
  std::vector<Thread> Threads;
  Thread *Cur = nullptr;
  FiberContext Sched;
  /// Where a fault of the launch returns to.
  sigjmp_buf *Fault = nullptr;
  /// Its shared memory while another block in flight runs.
  std::vector<std::vector<char>> SharedSave;
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
  /// Whether the scheduler's round changed anything: a thread ran that did
  /// not idle.
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
    siglongjmp(*Active->Fault, Sig);
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
void resolveWarp(Block &B, size_t First, size_t End) {
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
          return;
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
  }
}

/// Releases the barrier when every live thread waits at it.
void resolveBarrier(Block &B) {
  bool Any = false;
  for (const Thread &T : B.Threads) {
    if (T.St == State::AtWarp || T.St == State::Ready || T.St == State::Polling)
      return;
    Any |= T.St == State::AtBarrier;
  }
  if (!Any)
    return;
  for (Thread &T : B.Threads)
    if (T.St == State::AtBarrier)
      T.St = State::Ready;
  ++B.Epoch;
}

std::string describeBlock(const Block &B) {
  return "block (" + std::to_string(B.Ctaid[0]) + "," +
         std::to_string(B.Ctaid[1]) + "," + std::to_string(B.Ctaid[2]) + ")";
}

std::string deadlock(const Block &B, const char *Order) {
  size_t AtBarrier = 0, AtWarp = 0, Polling = 0, Done = 0;
  const Thread *Poller = nullptr;
  for (const Thread &T : B.Threads) {
    AtBarrier += T.St == State::AtBarrier;
    AtWarp += T.St == State::AtWarp;
    Done += T.St == State::Done;
    if (T.idled() && !Polling++)
      Poller = &T;
  }
  std::string Why = "deadlock in " + describeBlock(B) + ": " +
                    std::to_string(AtBarrier) + " threads wait at a barrier, " +
                    std::to_string(AtWarp) + " at a warp collective, " +
                    std::to_string(Done) + " finished";
  if (!Poller)
    return Why;
  Why += ", " + std::to_string(Polling) +
         " poll memory that no thread changes (" + Order + "); thread " +
         std::to_string(Poller->Linear) + " reads " +
         std::to_string(Poller->PollValue) + " again and again";
  if (B.L->DescribeAddress)
    Why += " at " + B.L->DescribeAddress(Poller->PollAddr);
  return Why;
}

/// Starts a fiber for each thread of \p B (on its slot's stacks).
std::string startFibers(Block &B) {
  size_t N = B.Threads.size();
  for (size_t I = 0; I < N; ++I) {
    char *Stack = Pool.get(size_t(B.Slot) * N + I);
    if (!Stack)
      return "cannot map a fiber stack";
    startFiber(B.Threads[I].Ctx, Stack, StackBytes, fiberMain, B.Sched);
  }
  return "";
}

enum class Step { Done, Moved, Stalled };

/// One round of \p B: each thread that can runs until it waits again, then
/// the collectives every thread waits at complete. Stalled: nothing
/// changed (only polls that read what they read before); Error says why
/// the launch fails.
Step stepBlock(Block &B, std::string &Error) {
  B.Moved = false;
  for (Thread &T : B.Threads)
    if (T.St == State::Ready || T.St == State::Polling) {
      T.St = State::Ready;
      T.TurnNew = false;
      T.TurnRepeats = 0;
      B.Cur = &T;
      switchFiber(B.Sched, T.Ctx);
      if (!B.Misuse.empty()) {
        Error = B.Misuse + " (" + describeBlock(B) + ")";
        return Step::Stalled;
      }
      B.Moved |= !T.idled();
    }
  bool AllDone = true;
  for (const Thread &T : B.Threads)
    AllDone &= T.St == State::Done;
  if (AllDone)
    return Step::Done;
  const size_t N = B.Threads.size();
  for (size_t W = 0; W < N; W += WarpSize)
    resolveWarp(B, W, std::min(N, W + WarpSize));
  if (!B.Misuse.empty()) {
    Error = B.Misuse + " (" + describeBlock(B) + ")";
    return Step::Stalled;
  }
  // (A resolution is no progress by itself: a wait may loop over a
  // barrier or a ballot.)
  resolveBarrier(B);
  return B.Moved ? Step::Moved : Step::Stalled;
}

/// Runs the block's threads as fibers until all finish.
std::string runFibers(Block &B) {
  if (std::string Error = startFibers(B); !Error.empty())
    return Error;
  for (unsigned Idle = 0;;) {
    std::string Error;
    Step St = stepBlock(B, Error);
    if (!Error.empty())
      return Error;
    if (St == Step::Done)
      return "";
    Idle = St == Step::Stalled ? Idle + 1 : 0;
    if (Idle == StalledRounds)
      return deadlock(B, "blocks run in launch order: a block waits only on "
                         "earlier ones");
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

namespace {

/// Sets up \p B, in flight as slot \p Slot of launch \p L: its threads'
/// ids, its warps and the race check's shadows of the shared arrays.
void initBlock(Block &B, const GridLaunch &L, unsigned Slot,
               sigjmp_buf *Fault) {
  B.L = &L;
  B.Slot = Slot;
  B.Fault = Fault;
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
  B.SharedSave.resize(L.Shared.size());
}

/// Makes \p B the block \p Linear of the grid in launch order (x fastest)
/// with every thread ready to start.
void resetBlock(Block &B, uint64_t Linear) {
  const GridLaunch &L = *B.L;
  B.Ctaid[0] = unsigned(Linear % L.Grid[0]);
  B.Ctaid[1] = unsigned(Linear / L.Grid[0] % L.Grid[1]);
  B.Ctaid[2] = unsigned(Linear / (uint64_t(L.Grid[0]) * L.Grid[1]));
  ++B.Epoch;
  std::fill(B.WarpSync.begin(), B.WarpSync.end(), 0);
  for (Thread &T : B.Threads) {
    T.St = State::Ready;
    T.PollAddr = 0;
    T.PollRepeats = 0;
    T.Seen.clear();
  }
}

/// The blocks one after another in launch order.
std::string runInOrder(Block &B, uint64_t Blocks) {
  const GridLaunch &L = *B.L;
  for (uint64_t Lin = 0; Lin < Blocks; ++Lin) {
    resetBlock(B, Lin);
    for (auto &[Ptr, Bytes] : L.Shared)
      std::memset(Ptr, 0xff, Bytes);
    if (L.Collectives) {
      if (std::string Error = runFibers(B); !Error.empty())
        return Error;
      continue;
    }
    for (Thread &T : B.Threads) {
      B.Cur = &T;
      L.Entry(L.Args);
      if (!B.Misuse.empty())
        return B.Misuse + " (" + describeBlock(B) + ")";
    }
  }
  return "";
}

/// Slots.size() blocks in flight, started in launch order as others end,
/// each with its own shared memory, taking rounds in an order drawn from
/// the launch's seed.
std::string runResident(std::vector<Block> &Slots, uint64_t Blocks) {
  const GridLaunch &L = *Slots[0].L;
  std::mt19937_64 Rng(L.Seed);
  uint64_t Next = 0;
  std::vector<bool> Busy(Slots.size(), false);
  size_t Loaded = Slots.size(); // whose shared memory the arrays hold
  auto SwapIn = [&](size_t S) {
    if (Loaded != S) {
      for (size_t K = 0; K < L.Shared.size(); ++K) {
        auto [Ptr, Bytes] = L.Shared[K];
        if (Loaded < Slots.size())
          std::memcpy(Slots[Loaded].SharedSave[K].data(), Ptr, Bytes);
        std::memcpy(Ptr, Slots[S].SharedSave[K].data(), Bytes);
      }
      Loaded = S;
    }
    Active = &Slots[S];
  };
  auto Start = [&](size_t S) {
    resetBlock(Slots[S], Next++);
    for (size_t K = 0; K < L.Shared.size(); ++K)
      Slots[S].SharedSave[K].assign(size_t(L.Shared[K].second), char(0xff));
    if (Loaded == S)
      Loaded = Slots.size();
    Busy[S] = true;
    return startFibers(Slots[S]);
  };
  for (size_t S = 0; S < Slots.size(); ++S)
    if (std::string Error = Start(S); !Error.empty())
      return Error;
  // Each pass runs each block in flight with probability 1/2 (one at
  // least), in a random order: a block may overtake ones started before it,
  // as on the GPU. Stalled[S]: S's rounds that changed nothing since
  // anything moved; when every block in flight has had StalledRounds of
  // them, none ever will move.
  std::vector<unsigned> Stalled(Slots.size(), 0);
  std::vector<size_t> Order;
  for (;;) {
    Order.clear();
    for (size_t S = 0; S < Slots.size(); ++S)
      if (Busy[S])
        Order.push_back(S);
    if (Order.empty())
      return "";
    std::shuffle(Order.begin(), Order.end(), Rng);
    const size_t Live = Order.size();
    Order.erase(std::remove_if(Order.begin() + 1, Order.end(),
                               [&](size_t) { return Rng() & 1; }),
                Order.end());
    for (size_t S : Order) {
      SwapIn(S);
      std::string Error;
      Step St = stepBlock(Slots[S], Error);
      if (!Error.empty())
        return Error;
      if (St == Step::Stalled) {
        ++Stalled[S];
        size_t Waiting = 0;
        for (size_t X = 0; X < Slots.size(); ++X)
          Waiting += Busy[X] && Stalled[X] >= StalledRounds;
        if (Waiting == Live)
          return deadlock(Slots[S], "every block in flight waits: none can "
                                    "move");
        continue;
      }
      std::fill(Stalled.begin(), Stalled.end(), 0);
      if (St != Step::Done)
        continue;
      Busy[S] = false;
      if (Next < Blocks)
        if (std::string E = Start(S); !E.empty())
          return E;
    }
  }
}

/// The grid's blocks, Slots.size() in flight at once.
std::string runSlots(std::vector<Block> &Slots) {
  const GridLaunch &L = *Slots[0].L;
  const uint64_t Blocks = uint64_t(L.Grid[0]) * L.Grid[1] * L.Grid[2];
  if (!Blocks)
    return "";
  return Slots.size() > 1 ? runResident(Slots, Blocks)
                          : runInOrder(Slots[0], Blocks);
}

} // namespace

std::string runGrid(const GridLaunch &L) {
  const uint64_t Blocks = uint64_t(L.Grid[0]) * L.Grid[1] * L.Grid[2];
  sigjmp_buf Fault;
  std::vector<Block> Slots(
      L.Collectives ? size_t(std::clamp<uint64_t>(
                          L.Resident, 1, std::max<uint64_t>(Blocks, 1)))
                    : 1);
  for (size_t S = 0; S < Slots.size(); ++S)
    initBlock(Slots[S], L, unsigned(S), &Fault);
  FaultGuard Guard;
  Block *Outer = Active;
  Active = &Slots[0];
  std::string Error;
  if (int Sig = sigsetjmp(Fault, 1)) {
    const Block &B = *Active;
    Error = std::string(Sig == SIGFPE ? "arithmetic fault (integer division "
                                        "by zero?)"
                                      : "invalid memory access") +
            " in " + describeBlock(B) + ", thread " +
            std::to_string(B.Cur ? B.Cur->Linear : 0);
    if (Sig != SIGFPE && L.DescribeAddress)
      Error += ": " + L.DescribeAddress(B.FaultAddress);
  } else {
    Error = runSlots(Slots);
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
  T.PollAddr = Addr;
  T.PollValue = V;
  auto It = std::find_if(T.Seen.begin(), T.Seen.end(),
                         [&](const auto &E) { return E.first == Addr; });
  if (It == T.Seen.end() || It->second != V) {
    T.TurnNew = true;
    if (It != T.Seen.end())
      It->second = V;
    else if (T.Seen.size() < PollMemory)
      T.Seen.push_back({Addr, V});
    else
      T.Seen.assign(1, {Addr, V}); // a long walk: it moves
    T.PollRepeats = 0;
    return;
  }
  ++T.TurnRepeats;
  // (A kernel with polls always runs as fibers: SimIr marks it.)
  if (++T.PollRepeats < PollSpins || !B.L->Collectives)
    return;
  T.St = State::Polling;
  yieldToScheduler();
}

uint32_t __idxmap_sim_async(uint32_t Op, void *A, const void *Bv, uint32_t N,
                            void *Bar) {
  // A barrier's word: arrivals a phase (bits 0-15), arrivals pending
  // (16-31), transaction bytes pending (32-62), the phase's parity (63).
  auto Load = [](void *P) {
    uint64_t W;
    std::memcpy(&W, P, 8);
    return W;
  };
  auto Store = [](void *P, uint64_t W) { std::memcpy(P, &W, 8); };
  auto Settle = [&](void *P, uint64_t W) {
    const uint64_t Count = W & 0xffff, Pending = (W >> 16) & 0xffff,
                   Tx = (W >> 32) & 0x7fffffff, Phase = W >> 63;
    if (Pending == 0 && Tx == 0)
      W = ((Phase ^ 1) << 63) | (Count << 16) | Count;
    Store(P, W);
  };
  Block &B = *Active;
  switch (AsyncOp(Op)) {
  case AsyncOp::MbarInit:
    Store(A, (uint64_t(N & 0xffff) << 16) | (N & 0xffff));
    return 0;
  case AsyncOp::MbarArrive: {
    uint64_t W = Load(A);
    const uint64_t Pending = (W >> 16) & 0xffff,
                   Tx = ((W >> 32) & 0x7fffffff) + N;
    if (Pending == 0) {
      B.Misuse = "an arrival at a barrier none was pending on";
      return 0;
    }
    W = (W & (uint64_t(1) << 63)) | (Tx << 32) | ((Pending - 1) << 16) |
        (W & 0xffff);
    Settle(A, W);
    return 0;
  }
  case AsyncOp::MbarTest:
    __idxmap_sim_poll(A, 8);
    return uint32_t(Load(A) >> 63) != (N & 1);
  case AsyncOp::BulkToShared: {
    std::memcpy(A, Bv, N);
    uint64_t W = Load(Bar);
    const uint64_t Tx = (W >> 32) & 0x7fffffff;
    if (Tx < N) {
      B.Misuse = "a bulk copy of more bytes than its barrier expects";
      return 0;
    }
    W = (W & ~(uint64_t(0x7fffffff) << 32)) | ((Tx - N) << 32);
    Settle(Bar, W);
    return 0;
  }
  case AsyncOp::BulkToGlobal:
    std::memcpy(A, Bv, N);
    return 0;
  }
  B.Misuse = "an unknown asynchronous operation";
  return 0;
}

void __idxmap_sim_shared(void *Ptr, uint32_t Bytes, uint32_t Kind) {
  checkShared(*Active, reinterpret_cast<uintptr_t>(Ptr), Bytes,
              SharedAccess(Kind));
}

} // extern "C"
