//===- codegen/sim/SimFiber.cpp - Fiber stack switching ------------------===//
//
// Part of idxmap. See SimFiber.h.
//
//===----------------------------------------------------------------------===//
#include "SimFiber.h"

#include <cstdint>
#include <cstring>

namespace idxmap {
namespace sim {

#if defined(__x86_64__)

// idxmap_sim_switch(void **SaveSp, void *NewSp): pushes the System V
// callee-saved registers and the MXCSR and x87 control words, stores the
// stack pointer in *SaveSp, loads NewSp and pops the same frame from it.
// A new fiber's stack holds such a frame whose return address is
// idxmap_sim_fiber_entry.
extern "C" void idxmap_sim_switch(void **SaveSp, void *NewSp);
extern "C" [[noreturn]] void idxmap_sim_fiber_entry();
asm(R"(
  .text
  .p2align 4
  .globl idxmap_sim_switch
  .hidden idxmap_sim_switch
  .type idxmap_sim_switch,@function
idxmap_sim_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size idxmap_sim_switch, .-idxmap_sim_switch
)");

namespace {
/// The fiber being started; read once by its entry, before any other switch.
thread_local FiberContext *Starting = nullptr;
} // namespace

extern "C" [[noreturn]] void idxmap_sim_fiber_entry() {
  FiberContext &F = *Starting;
  F.Body();
  switchFiber(F, *F.Return);
  __builtin_unreachable();
}

void startFiber(FiberContext &F, char *Stack, size_t Bytes, void (*Body)(),
                FiberContext &Return) {
  F.Body = Body;
  F.Return = &Return;
  auto Top = (reinterpret_cast<uintptr_t>(Stack) + Bytes) & ~uintptr_t(15);
  // The frame idxmap_sim_switch pops: control words, r15 ... rbp (zero),
  // the return address; above it one slot, so that the entry starts with
  // the stack pointer 8 below a 16-byte boundary, as after a call.
  auto *Frame = reinterpret_cast<uint64_t *>(Top - 72);
  std::memset(Frame, 0, 72);
  uint32_t Mxcsr;
  uint16_t Fpcw;
  asm volatile("stmxcsr %0" : "=m"(Mxcsr));
  asm volatile("fnstcw %0" : "=m"(Fpcw));
  std::memcpy(reinterpret_cast<char *>(Frame), &Mxcsr, 4);
  std::memcpy(reinterpret_cast<char *>(Frame) + 4, &Fpcw, 2);
  Frame[7] = reinterpret_cast<uint64_t>(&idxmap_sim_fiber_entry);
  F.Sp = Frame;
}

void switchFiber(FiberContext &From, FiberContext &To) {
  Starting = &To;
  idxmap_sim_switch(&From.Sp, To.Sp);
}

#else

void startFiber(FiberContext &F, char *Stack, size_t Bytes, void (*Body)(),
                FiberContext &Return) {
  getcontext(&F.Ctx);
  F.Ctx.uc_stack.ss_sp = Stack;
  F.Ctx.uc_stack.ss_size = Bytes;
  F.Ctx.uc_link = &Return.Ctx;
  makecontext(&F.Ctx, Body, 0);
}

void switchFiber(FiberContext &From, FiberContext &To) {
  swapcontext(&From.Ctx, &To.Ctx);
}

#endif

} // namespace sim
} // namespace idxmap
