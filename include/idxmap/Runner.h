//===- idxmap/Runner.h - Check and time emitted kernels on a GPU -*- C++ -*-===//
//
// Part of idxmap. Runs the kernels of a `.ptx` + sidecar on the GPU with
// fresh random inputs and poisoned outputs, compares every output element
// with the reference interpreter, and (with Bench) times the kernel with
// CUPTI's kernel records or CUDA events. No LLVM here.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_RUNNER_H
#define IDXMAP_RUNNER_H

#include "idxmap/Hlo.h"
#include "idxmap/HloInterpreter.h"
#include "idxmap/KernelInfo.h"
#include "idxmap/Runtime.h"
#include "idxmap/Sidecar.h"

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace idxmap {

struct RunOptions {
  uint64_t Seed = 1;
  /// Random inputs are uniform in [Lo, Hi) (integers: the integers inside).
  double Lo = -2.0, Hi = 2.0;
  /// Inputs read from files instead: parameter name -> raw little-endian
  /// row-major bytes of its shape.
  std::vector<std::pair<std::string, std::string>> InputFiles;
  bool Check = true;
  /// Tolerance override for every kernel; else TolFor(fusion, kernel) when
  /// set (kernelTolerance with the kernel's RoundingDepth, say); else
  /// Tolerance::forType of the output.
  std::optional<Tolerance> Tol;
  std::function<Tolerance(const HloInstruction &Fusion,
                          const KernelInfo &Kernel)>
      TolFor;
  /// On a mismatch, compare again with each element's roundingSlack (the
  /// fusion evaluated in f64, plain and with every rounding perturbed by
  /// +-4 units of roundoff): results that rounding alone makes unstable
  /// (exp(exp(x)), long bf16 sums added in another order) are not kernel
  /// errors. Elements accepted that way are counted in the output report.
  bool RoundingSlack = true;
  bool Bench = false;
  unsigned Warmup = 5;
  unsigned Reps = 50;
  /// Rotate through copies of the inputs so that each timed launch reads
  /// memory not left in L2 by the previous one (when inputs fit in L2).
  bool RotateInputs = true;
  /// Bench times come from CUPTI's kernel records when set (device start to
  /// end of each launch); else, or when CUPTI fails for a kernel (a note goes
  /// to the log), from CUDA events.
  runtime::CuptiTimer *Cupti = nullptr;
  /// With Cupti: a CUPTI failure is an error instead of a fallback.
  bool RequireCupti = false;
};

/// What happened to one kernel.
struct KernelRunResult {
  std::string Name;
  bool Checked = false;
  bool Ok = true;
  /// One line per output: `ok (max abs err 1.2e-7)` or the mismatch message.
  std::vector<std::string> OutputReports;
  /// Kernel times over the repetitions (microseconds). The mean is what
  /// averaging timers (CUDA events around a batch, peers.py) report; the
  /// distribution of a DRAM-bound kernel is skewed, so it can sit half a
  /// percent below the median.
  double MedianUs = 0, MeanUs = 0, MinUs = 0, MaxUs = 0;
  /// Bytes read once + written once, and the bandwidth at the median.
  uint64_t Bytes = 0;
  double GBps = 0;
  unsigned Copies = 1;
  /// What timed the kernel: "cupti" or "events" (empty without Bench).
  std::string Timer;
};

/// Runs every kernel of \p Kernels (from \p Ptx) on \p Driver. Each kernel's
/// sidecar `fusion` names the fusion instruction of \p Module it computes;
/// the interpreter evaluates that fusion on the same inputs. Failures of the
/// driver are returned as a DriverError; mismatches are reported in the
/// results (Ok = false).
runtime::DriverResult<std::vector<KernelRunResult>>
runKernels(runtime::CudaDriver &Driver, const HloModule &Module,
           std::string_view Ptx, const std::vector<KernelInfo> &Kernels,
           const RunOptions &Options, std::ostream &Log);

/// Inputs of runBufferPlan.
struct PlanRunOptions {
  /// Random inputs (as RunOptions's): the I-th input filled gets seed
  /// `Seed * 1000003 + I`, uniform in [Lo, Hi).
  uint64_t Seed = 1;
  double Lo = -2.0, Hi = 2.0;
  /// Inputs read from files instead: name (PlanBufferBytes::Name) -> raw
  /// little-endian row-major bytes of its shape.
  std::vector<std::pair<std::string, std::string>> InputFiles;
};

/// One buffer of a run of a module's buffer plan.
struct PlanBufferBytes {
  /// The sidecar buffer's name (`p`, `fusion`, `r.0`), or `KERNEL.PARAM`
  /// for a kernel parameter outside the plan.
  std::string Name;
  Shape Type;
  /// Written by a kernel (its bytes are the kernels' output); else an
  /// input the run filled.
  bool Written = false;
  /// The buffer's elements in row-major order (converted from the
  /// buffer's layout), little-endian, as `--input` files hold them.
  std::vector<uint8_t> RowMajor;
};

/// Runs the kernels of \p S (from \p Ptx) once over the sidecar's buffer
/// plan, as a runtime does (and as examples/loader does): one device buffer
/// per SidecarBuffer; every buffer no kernel writes (ENTRY parameters, an
/// intermediate an op outside the kernels computes) and every kernel
/// parameter outside the plan is filled from its file or randomly (the
/// inputs in Buffers order, then the outside parameters in launch order,
/// numbered for the seeds), the written buffers are poisoned with 0xff; the
/// kernels are launched in launch order, each aliased output first given
/// its input's bytes, with a zeroed workspace. Returns every buffer's bytes
/// after the last launch: the plan's buffers in order, then the outside
/// parameters. No comparison with the interpreter (runKernels does that
/// per kernel).
runtime::DriverResult<std::vector<PlanBufferBytes>>
runBufferPlan(runtime::CudaDriver &Driver, std::string_view Ptx,
              const Sidecar &S, const PlanRunOptions &Options);

/// The physical (layout-ordered) bytes of \p L for \p S's layout, and back.
std::vector<uint8_t> toPhysical(const Literal &L, const Shape &S);
Literal fromPhysical(const std::vector<uint8_t> &Bytes, const Shape &S);

} // namespace idxmap

#endif // IDXMAP_RUNNER_H
