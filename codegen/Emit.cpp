//===- Emit.cpp - HLO fusions to PTX --------------------------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Emit.h"
#include "emitters/Emitters.h"

#include "idxmap/Fusion.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

namespace idxmap {

const std::vector<std::string> &tuningKnobNames() {
  static const std::vector<std::string> Names = {
      "IDXMAP_RED_COL_LANES",    "IDXMAP_RED_COL_SPLIT",
      "IDXMAP_RED_COL_UNROLL",   "IDXMAP_RED_COL_WARPS",
      "IDXMAP_RED_EVICT_FIRST",  "IDXMAP_RED_FULL_BLOCKS_PER_SM",
      "IDXMAP_RED_FULL_CHUNK",   "IDXMAP_RED_FULL_CHUNK_THREADS",
      "IDXMAP_RED_FULL_THREADS", "IDXMAP_RED_FULL_UNROLL",
      "IDXMAP_RED_LOADS_FIRST",  "IDXMAP_RED_MINBLOCKS",
      "IDXMAP_RED_ROW_K",        "IDXMAP_RED_ROW_LANES",
      "IDXMAP_RED_ROW_THREADS",  "IDXMAP_RED_ROW_UNROLL",
      "IDXMAP_ROWNORM_ELEMENTS", "IDXMAP_ROWNORM_EXACT_DIVIDE",
      "IDXMAP_TR_RVEC",          "IDXMAP_TR_WARPS",
      "IDXMAP_TR_WVEC"};
  return Names;
}

Expected<EmitResult> emitModule(const HloModule &M, const EmitOptions &O) {
  for (const auto &[Name, Value] : O.Tuning)
    if (!std::binary_search(tuningKnobNames().begin(), tuningKnobNames().end(),
                            Name)) {
      Diagnostic D;
      D.Loc.File = "<tuning>";
      D.Message = "unknown tuning knob '" + Name + "'";
      return D;
    }
  if (auto Err = validateTargetOptions(O.Target))
    return *Err;
  auto TM = createNvptxTargetMachine(O.Target);
  if (!TM)
    return TM.error();
  llvm::LLVMContext LC;
  llvm::Module Mod(M.name(), LC);
  configureModuleForTarget(Mod, **TM);
  using Clock = std::chrono::steady_clock;
  auto Ms = [](Clock::time_point A, Clock::time_point B) {
    return std::chrono::duration<double, std::milli>(B - A).count();
  };
  auto T0 = Clock::now();
  codegen::MathOptions Math;
  Math.Precise = O.Target.PreciseMath;
  Math.Tuning = O.Tuning;
  EmitResult R;
  bool Found = false;
  for (const HloInstruction *F : M.fusions()) {
    if (!O.OnlyFusion.empty() && F->name() != O.OnlyFusion)
      continue;
    Found = true;
    FusionAnalysis A = analyzeFusion(*F);
    Expected<KernelInfo> K = Diagnostic{};
    switch (A.Kind) {
    case EmitterKind::Loop:
      K = codegen::emitLoopKernel(Mod, *F, A, Math);
      break;
    case EmitterKind::RowReduction:
    case EmitterKind::MultiRowReduction:
    case EmitterKind::FullReduction:
    case EmitterKind::ColumnReduction:
      K = codegen::emitReductionKernel(Mod, *F, A, Math);
      break;
    case EmitterKind::Transpose:
      K = codegen::emitTransposeKernel(Mod, *F, A, Math);
      break;
    default:
      return M.diagnose(F->sourceOffset(),
                        "fusion '" + F->name() + "' needs the " +
                            std::string(emitterKindName(A.Kind)) +
                            " emitter, which is not implemented yet");
    }
    if (!K)
      return K.error();
    R.Kernels.push_back(std::move(*K));
  }
  if (!Found) {
    Diagnostic D;
    D.Loc.File = M.fileName();
    D.Message = O.OnlyFusion.empty() ? "the module has no fusion to emit"
                                     : "no fusion named '" + O.OnlyFusion + "'";
    return D;
  }
  auto T1 = Clock::now();
  if (O.KernelsOnly) {
    R.PhaseMs = {{"analysis+IR", Ms(T0, T1)}};
    return R;
  }
  auto Ptx = emitPtx(Mod, O.Target, **TM);
  auto T2 = Clock::now();
  R.PhaseMs = {{"analysis+IR", Ms(T0, T1)}, {"opt+PTX", Ms(T1, T2)}};
  if (!Ptx)
    return Ptx.error();
  R.Ptx = std::move(*Ptx);
  if (O.KeepLlvmIr) {
    llvm::raw_string_ostream OS(R.LlvmIr);
    Mod.print(OS, nullptr);
  }
  return R;
}

std::string codegenEmitterName(const HloInstruction &Fusion,
                               const FusionAnalysis &A) {
  switch (A.Kind) {
  case EmitterKind::RowReduction:
  case EmitterKind::MultiRowReduction:
  case EmitterKind::FullReduction:
  case EmitterKind::ColumnReduction:
    if (codegen::isRowNormalization(Fusion, A))
      return "row normalization";
    break;
  default:
    break;
  }
  return std::string(emitterKindName(A.Kind));
}

Tolerance kernelTolerance(const HloInstruction &Fusion, bool PreciseMath) {
  codegen::MathOptions Math;
  Math.Precise = PreciseMath;
  return codegen::toleranceFor(Fusion, Math);
}

} // namespace idxmap
