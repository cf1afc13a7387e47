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
#include <unordered_map>

namespace idxmap {

const std::vector<TuningKnob> &tuningKnobs() {
  // The ranges the emitters can use (ReductionEmitter.cpp,
  // RowNormalizationEmitter.cpp, TransposeEmitter.cpp).
  static const std::vector<TuningKnob> Knobs = {
      {"IDXMAP_RED_COL_LANES", 1, 32, true},
      {"IDXMAP_RED_COL_SPLIT", 1, 1 << 16, false},
      {"IDXMAP_RED_COL_UNROLL", 1, 64, false},
      {"IDXMAP_RED_COL_WARPS", 1, 32, true},
      {"IDXMAP_RED_EVICT_FIRST", 0, 1, false},
      {"IDXMAP_RED_FULL_BLOCKS_PER_SM", 1, 32, false},
      {"IDXMAP_RED_FULL_CHUNK", 0, int64_t(1) << 30, true},
      {"IDXMAP_RED_FULL_CHUNK_THREADS", 32, 1024, true},
      {"IDXMAP_RED_FULL_THREADS", 32, 1024, true},
      {"IDXMAP_RED_FULL_UNROLL", 1, 32, false},
      {"IDXMAP_RED_LOADS_FIRST", 0, 1, false},
      {"IDXMAP_RED_MINBLOCKS", 0, 32, false},
      {"IDXMAP_RED_ROW_K", 1, 32, true},
      {"IDXMAP_RED_ROW_LANES", 1, 1024, true},
      {"IDXMAP_RED_ROW_THREADS", 32, 1024, true},
      {"IDXMAP_RED_ROW_UNROLL", 1, 64, false},
      {"IDXMAP_ROWNORM_ELEMENTS", 1, 64, false},
      {"IDXMAP_ROWNORM_EXACT_DIVIDE", 0, 1, false},
      {"IDXMAP_TR_RVEC", 0, 4, false},
      {"IDXMAP_TR_WARPS", 0, 32, false},
      {"IDXMAP_TR_WVEC", 0, 4, false}};
  return Knobs;
}

const std::vector<std::string> &tuningKnobNames() {
  static const std::vector<std::string> Names = [] {
    std::vector<std::string> N;
    for (const TuningKnob &K : tuningKnobs())
      N.push_back(K.Name);
    return N;
  }();
  return Names;
}

std::optional<std::string>
validateTuning(const std::map<std::string, int64_t> &Tuning) {
  for (const auto &[Name, Value] : Tuning) {
    auto It = std::find_if(tuningKnobs().begin(), tuningKnobs().end(),
                           [&](const TuningKnob &K) { return Name == K.Name; });
    if (It == tuningKnobs().end())
      return "unknown tuning knob '" + Name + "'";
    if (Value < It->Lo || Value > It->Hi)
      return "tuning knob " + Name + "=" + std::to_string(Value) +
             " is out of range: valid values are " + std::to_string(It->Lo) +
             " to " + std::to_string(It->Hi) +
             (It->Pow2 ? " (rounded down to a power of two)" : "");
  }
  return std::nullopt;
}

/// The deepest nesting of branching ops the emitters take (deepestNesting):
/// 1.5 to 2 KB of native stack each (RelWithDebInfo), so 2 MB at the limit.
constexpr int64_t MaxBranchNesting = 1000;

/// An error about the options, not the input: no location.
static Diagnostic optionError(std::string Message) {
  return Diagnostic{{"", 0, 0}, std::move(Message), ""};
}

/// Bytes of kernel parameters fusion \p F needs: a pointer per parameter
/// and output, and one for a reduction's workspace (counted for every
/// fusion: the check comes before the emitter is known).
static int64_t kernelParamBytes(const HloInstruction &F) {
  const HloComputation &C = *F.fusedComputation();
  const HloInstruction *Root = C.root();
  int64_t Outputs =
      Root->opcode() == HloOpcode::Tuple ? Root->operandCount() : 1;
  return 8 * (C.parameterCount() + Outputs + 1);
}

/// The instruction of \p C whose value FusedElementEmitter computes at
/// the deepest recursion, and that depth: its walk is iterative except
/// through ops that branch or loop (pad, concatenate, dynamic slices,
/// reduce: the non-elementwise ops of two or more operands), each a few
/// native frames deeper.
static std::pair<const HloInstruction *, int64_t>
deepestNesting(const HloComputation &C) {
  std::unordered_map<const HloInstruction *, int64_t> Depth;
  std::pair<const HloInstruction *, int64_t> Deepest{nullptr, 0};
  for (const HloInstruction *I : C.instructions()) {
    int64_t D = 0;
    for (const HloInstruction *Op : I->operands())
      D = std::max(D, Depth[Op]);
    if (!isElementwise(I->opcode()) && I->operandCount() > 1 &&
        I->opcode() != HloOpcode::Tuple)
      ++D;
    Depth[I] = D;
    if (D > Deepest.second)
      Deepest = {I, D};
  }
  return Deepest;
}

/// What no emitter takes, at the instruction: a tuple-shaped parameter
/// (kernels take array buffers; its loads had no element type), a reduce
/// over zero elements (the column reduction divided by zero rows; loops
/// over the reduced elements run at least once), a call or nested fusion
/// (the fused element emitter has no case for them: it built a value of
/// no type).
static std::optional<Diagnostic>
unsupportedInstruction(const HloModule &M, const HloInstruction &F) {
  const HloComputation &C = *F.fusedComputation();
  for (const HloInstruction *P : C.parameters())
    if (!P->shape().isArray())
      return M.diagnose(P->sourceOffset(),
                        "fusion '" + F.name() + "': parameter '" + P->name() +
                            "' is not an array; kernels take array "
                            "parameters only");
  for (const HloInstruction *I : C.instructions()) {
    if (!hasOnlyComputeTypes(I->shape()))
      return M.diagnose(I->sourceOffset(),
                        "fusion '" + F.name() + "': '" + I->name() +
                            "' has type " + I->shape().str() +
                            "; the emitters take pred, integer and "
                            "f16/bf16/f32/f64 values only");
    if (I->opcode() > HloOpcode::Call)
      return M.diagnose(I->sourceOffset(),
                        "fusion '" + F.name() + "': no emitter computes " +
                            std::string(opcodeName(I->opcode())) + " '" +
                            I->name() + "'");
    if (I->opcode() == HloOpcode::Call || I->opcode() == HloOpcode::Fusion)
      return M.diagnose(I->sourceOffset(),
                        "fusion '" + F.name() +
                            "': " + std::string(opcodeName(I->opcode())) +
                            " '" + I->name() +
                            "' calls a computation; the emitters do not take "
                            "nested computations");
    if (I->opcode() == HloOpcode::Reduce &&
        I->operand(0)->shape().numElements() == 0)
      return M.diagnose(I->sourceOffset(),
                        "fusion '" + F.name() + "': reduce '" + I->name() +
                            "' has no elements to reduce; the emitters do "
                            "not take empty reductions");
  }
  return std::nullopt;
}

Expected<EmitResult> emitModule(const HloModule &M, const EmitOptions &O) {
  if (auto Err = validateTuning(O.Tuning))
    return optionError(*Err);
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
  Math.Device = O.Device ? *O.Device : defaultDeviceModel(O.Target.Gpu);
  EmitResult R;
  bool Found = false;
  for (const HloInstruction *F : M.fusions()) {
    if (!O.OnlyFusion.empty() && F->name() != O.OnlyFusion)
      continue;
    Found = true;
    // Before any analysis: the analysis and the IR grow with the
    // parameters, and a launch could not pass them anyway.
    if (int64_t Bytes = kernelParamBytes(*F);
        Bytes > Math.Device.MaxKernelParamBytes)
      return M.diagnose(
          F->sourceOffset(),
          "fusion '" + F->name() + "' needs " + std::to_string(Bytes) +
              " bytes of kernel parameters (8 per parameter, output and "
              "workspace), over the " +
              Math.Device.Name + " limit of " +
              std::to_string(Math.Device.MaxKernelParamBytes) + " bytes (" +
              std::to_string(Math.Device.MaxKernelParamBytes / 8 - 1) +
              " parameters and outputs)");
    if (int64_t N = F->fusedComputation()->instructionCount();
        O.MaxFusionInstructions > 0 && N > O.MaxFusionInstructions)
      return M.diagnose(F->sourceOffset(),
                        "fusion '" + F->name() + "' has " + std::to_string(N) +
                            " instructions, over the emission budget of " +
                            std::to_string(O.MaxFusionInstructions) +
                            " (EmitOptions::MaxFusionInstructions, "
                            "--max-fusion-instructions)");
    if (auto Why = unsupportedInstruction(M, *F))
      return *Why;
    if (auto [I, Depth] = deepestNesting(*F->fusedComputation());
        Depth > MaxBranchNesting)
      return M.diagnose(
          I->sourceOffset(),
          "fusion '" + F->name() + "': '" + I->name() + "' is nested " +
              std::to_string(Depth) +
              " pads, concatenates, dynamic slices or reduces deep, over "
              "the emitter's limit of " +
              std::to_string(MaxBranchNesting));
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
    // Emitters check their grid as they size it; shared arrays added
    // later are checked here.
    if (auto Why = checkLaunch(
            Math.Device, {K->Grid[0], K->Grid[1], K->Grid[2]},
            {K->Block[0], K->Block[1], K->Block[2]}, K->SharedBytes))
      return M.diagnose(F->sourceOffset(),
                        "fusion '" + F->name() +
                            "': the kernel's launch does not fit the "
                            "device: " +
                            *Why);
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
