//===- codegen/sim/SimFiber.h - Fiber stack switching -----------*- C++ -*-===//
//
// Part of idxmap. A fiber is a function running on a stack of its own that
// gives the CPU back at points it chooses. The simulator runs each GPU
// thread of a block as one; a reduction's warp shuffles switch fibers
// twice per lane per shuffle, so the switch is on the simulator's hot path.
// On x86-64 it saves the callee-saved registers and the floating-point
// control words and swaps stack pointers, in user space; elsewhere it is
// ucontext's swapcontext, which also saves the signal mask (a system call
// per switch).
//
//   FiberContext Sched, F;
//   startFiber(F, Stack, Bytes, Body, Sched); // Body() runs on Stack
//   switchFiber(Sched, F);  // runs Body until it calls switchFiber(F, Sched)
//                           // or returns (which switches back to Sched)
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_CODEGEN_SIM_SIMFIBER_H
#define IDXMAP_CODEGEN_SIM_SIMFIBER_H

#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace idxmap {
namespace sim {

struct FiberContext {
#if defined(__x86_64__)
  /// The stack pointer of a suspended fiber (its saved registers on top).
  void *Sp = nullptr;
  /// Where a fiber returns to when its body ends.
  FiberContext *Return = nullptr;
  void (*Body)() = nullptr;
#else
  ucontext_t Ctx;
#endif
};

/// Prepares \p F to run \p Body on the \p Bytes of \p Stack (growing down
/// from Stack + Bytes); when Body returns, the fiber switches to \p Return
/// for good. Nothing runs until the first switchFiber to \p F.
void startFiber(FiberContext &F, char *Stack, size_t Bytes, void (*Body)(),
                FiberContext &Return);

/// Suspends the running code into \p From and resumes \p To.
void switchFiber(FiberContext &From, FiberContext &To);

} // namespace sim
} // namespace idxmap

#endif // IDXMAP_CODEGEN_SIM_SIMFIBER_H
