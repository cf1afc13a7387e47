//===- Emit.cpp - HLO fusions to PTX --------------------------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Emit.h"
#include "Backend.h"
#include "emitters/Emitters.h"
#include "idxmap/Codegen.h"
#include "idxmap/KernelPlan.h"

#include "idxmap/Fusion.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_map>

namespace idxmap {

/// The deepest nesting of branching ops the emitters take (deepestNesting):
/// 1.5 to 2 KB of native stack each (RelWithDebInfo), so 2 MB at the limit.
constexpr int64_t MaxBranchNesting = 1000;

/// An error about the options or the built IR, not the input: no location.
static Diagnostic plainError(std::string Message) {
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

/// What no emitter takes, at the instruction: what the analysis does not
/// model either (findUnmodeledInstruction: an op after Call, a non-compute
/// type, no outputs), a tuple-shaped parameter (kernels take array
/// buffers; its loads had no element type), a reduce over zero elements
/// (the column reduction divided by zero rows; loops over the reduced
/// elements run at least once), a call or nested fusion (the fused element
/// emitter has no case for them: it built a value of no type).
static std::optional<Diagnostic>
unsupportedInstruction(const HloModule &M, const HloInstruction &F) {
  const HloComputation &C = *F.fusedComputation();
  for (const HloInstruction *P : C.parameters())
    if (!P->shape().isArray())
      return M.diagnose(P->sourceOffset(),
                        "fusion '" + F.name() + "': parameter '" + P->name() +
                            "' is not an array; kernels take array "
                            "parameters only");
  if (auto U = findUnmodeledInstruction(C))
    return M.diagnose(U->Instruction->sourceOffset(),
                      "fusion '" + F.name() + "': " + U->Reason);
  for (const HloInstruction *I : C.instructions()) {
    if (I->opcode() == HloOpcode::Call || I->opcode() == HloOpcode::Fusion)
      return M.diagnose(I->sourceOffset(),
                        "fusion '" + F.name() +
                            "': " + std::string(opcodeName(I->opcode())) +
                            " '" + I->name() +
                            "' calls a computation; the emitters do not take "
                            "nested computations");
    // A bitcast that changes the element width is no element-to-element
    // map (the element emitter reinterprets bits of one width only).
    if (I->opcode() == HloOpcode::Bitcast &&
        byteWidth(I->shape().Type) != byteWidth(I->operand(0)->shape().Type))
      return M.diagnose(
          I->sourceOffset(),
          "fusion '" + F.name() + "': bitcast '" + I->name() +
              "' changes the element width (" +
              std::string(primitiveTypeName(I->operand(0)->shape().Type)) +
              " to " + std::string(primitiveTypeName(I->shape().Type)) +
              "); the emitters do not split or join elements");
    if (I->opcode() == HloOpcode::Reduce &&
        I->operand(0)->shape().numElements() == 0)
      return M.diagnose(I->sourceOffset(),
                        "fusion '" + F.name() + "': reduce '" + I->name() +
                            "' has no elements to reduce; the emitters do "
                            "not take empty reductions");
  }
  return std::nullopt;
}

/// The checks before any analysis of fusion \p F: the analysis and the IR
/// grow with the parameters and instructions, and a launch could not pass
/// the parameters anyway.
static std::optional<Diagnostic> checkFusion(const HloModule &M,
                                             const HloInstruction &F,
                                             const EmitOptions &O,
                                             const DeviceModel &Device) {
  if (int64_t Bytes = kernelParamBytes(F); Bytes > Device.MaxKernelParamBytes)
    return M.diagnose(
        F.sourceOffset(),
        "fusion '" + F.name() + "' needs " + std::to_string(Bytes) +
            " bytes of kernel parameters (8 per parameter, output and "
            "workspace), over the " +
            Device.Name + " limit of " +
            std::to_string(Device.MaxKernelParamBytes) + " bytes (" +
            std::to_string(Device.MaxKernelParamBytes / 8 - 1) +
            " parameters and outputs)");
  if (int64_t N = F.fusedComputation()->instructionCount();
      O.MaxFusionInstructions > 0 && N > O.MaxFusionInstructions)
    return M.diagnose(F.sourceOffset(),
                      "fusion '" + F.name() + "' has " + std::to_string(N) +
                          " instructions, over the emission budget of " +
                          std::to_string(O.MaxFusionInstructions) +
                          " (EmitOptions::MaxFusionInstructions, "
                          "--max-fusion-instructions)");
  if (auto Why = unsupportedInstruction(M, F))
    return Why;
  if (auto [I, Depth] = deepestNesting(*F.fusedComputation());
      Depth > MaxBranchNesting)
    return M.diagnose(
        I->sourceOffset(),
        "fusion '" + F.name() + "': '" + I->name() + "' is nested " +
            std::to_string(Depth) +
            " pads, concatenates, dynamic slices or reduces deep, over "
            "the emitter's limit of " +
            std::to_string(MaxBranchNesting));
  return std::nullopt;
}

/// Checks fusion \p F and runs its emitter into \p Mod.
static Expected<KernelInfo> emitFusion(llvm::Module &Mod, const HloModule &M,
                                       const HloInstruction &F,
                                       const EmitOptions &O,
                                       const codegen::MathOptions &Math) {
  if (auto Why = checkFusion(M, F, O, Math.Device))
    return *Why;
  FusionAnalysis A = analyzeFusion(F);
  // Every decision is the plan's; the emitters build IR from it. The
  // plan's maps live in Ctx, which the emitter keeps using.
  Context Ctx;
  auto Cached = O.FusionTuning.find(F.name());
  Tuning Knobs = Cached == O.FusionTuning.end()
                     ? Math.Tuning
                     : overlayTuning(Cached->second, Math.Tuning);
  Expected<KernelPlan> P = planFusion(Ctx, A, Knobs, Math.Device, &F);
  if (!P)
    return P.error();
  codegen::MathOptions KernelMath = Math;
  KernelMath.SubgraphFunctions = P->Functions;
  Expected<KernelInfo> K = Diagnostic{};
  // An in-place dynamic-update-slice is the loop emitter over the update,
  // storing through the plan's update-to-output maps.
  if (P->Emitter == "loop" || P->DynamicUpdateSlice)
    K = codegen::emitLoopKernel(Mod, F, plannedAnalysis(A, *P), *P, Ctx,
                                KernelMath);
  else if (P->Scatter)
    K = codegen::emitScatterKernel(Mod, F, A, *P, Ctx, KernelMath);
  else if (P->Scan)
    K = codegen::emitScanKernel(Mod, F, A, *P, Ctx, KernelMath);
  else if (P->Pieces)
    K = codegen::emitPiecewiseKernel(Mod, F, A, *P, Ctx, KernelMath);
  else if (P->Emitter == "transpose")
    K = codegen::emitTransposeKernel(Mod, F, A, *P, Ctx, KernelMath);
  else
    K = codegen::emitReductionKernel(Mod, F, A, *P, Ctx, KernelMath);
  if (!K)
    return K.error();
  if (!P->IrInstCombine)
    if (llvm::Function *Fn = Mod.getFunction(K->Name))
      Fn->addFnAttr(codegen::SkipInstCombineAttr);
  if (P->LibdeviceAtPlanLevel)
    if (llvm::Function *Fn = Mod.getFunction(K->Name))
      Fn->addFnAttr(codegen::LibdeviceAtPlanLevelAttr);
  // Emitters check their grid as they size it; shared arrays added later
  // are checked here.
  if (auto Why = checkLaunch(Math.Device, {K->Grid[0], K->Grid[1], K->Grid[2]},
                             {K->Block[0], K->Block[1], K->Block[2]},
                             K->SharedBytes, K->DynamicSharedBytes))
    return M.diagnose(
        F.sourceOffset(),
        "fusion '" + F.name() +
            "': the kernel's launch does not fit the device: " + *Why);
  return K;
}

/// Removes the functions and globals (shared arrays) of \p Mod named in
/// \p DeadFunctions and \p DeadGlobals, and their launch bounds.
static void eraseSymbols(llvm::Module &Mod,
                         const std::set<std::string> &DeadFunctions,
                         const std::set<std::string> &DeadGlobals) {
  std::vector<llvm::Function *> DeadF;
  for (llvm::Function &Fn : Mod.functions())
    if (DeadFunctions.count(Fn.getName().str()))
      DeadF.push_back(&Fn);
  std::vector<llvm::GlobalVariable *> DeadG;
  for (llvm::GlobalVariable &G : Mod.globals())
    if (DeadGlobals.count(G.getName().str()))
      DeadG.push_back(&G);
  // Launch bounds name the kernel in `!nvvm.annotations`; a deleted
  // function would leave them pointing at nothing.
  if (llvm::NamedMDNode *A = Mod.getNamedMetadata("nvvm.annotations")) {
    std::set<const llvm::Value *> Dead(DeadF.begin(), DeadF.end());
    std::vector<llvm::MDNode *> Kept;
    for (llvm::MDNode *Node : A->operands()) {
      auto *Subject = Node->getNumOperands() == 0
                          ? nullptr
                          : llvm::dyn_cast_or_null<llvm::ValueAsMetadata>(
                                Node->getOperand(0).get());
      if (!Subject || !Dead.count(Subject->getValue()))
        Kept.push_back(Node);
    }
    A->clearOperands();
    for (llvm::MDNode *Node : Kept)
      A->addOperand(Node);
  }
  // Bodies first: a new function may call another new one.
  for (llvm::Function *Fn : DeadF)
    Fn->deleteBody();
  for (llvm::Function *Fn : DeadF)
    if (Fn->use_empty())
      Fn->eraseFromParent();
  for (llvm::GlobalVariable *G : DeadG)
    if (G->use_empty())
      G->eraseFromParent();
}

/// The names of \p Mod's functions and globals.
using Symbols = std::pair<std::set<std::string>, std::set<std::string>>;
static Symbols moduleSymbols(const llvm::Module &Mod) {
  std::set<std::string> Functions, Globals;
  for (const llvm::Function &Fn : Mod.functions())
    Functions.insert(Fn.getName().str());
  for (const llvm::GlobalVariable &G : Mod.globals())
    Globals.insert(G.getName().str());
  return {std::move(Functions), std::move(Globals)};
}

/// The names in \p After that are not in \p Before.
static Symbols addedSince(const Symbols &Before, const Symbols &After) {
  Symbols New;
  for (const std::string &N : After.first)
    if (!Before.first.count(N))
      New.first.insert(N);
  for (const std::string &N : After.second)
    if (!Before.second.count(N))
      New.second.insert(N);
  return New;
}

thread_local void (*idxmap::codegen::AfterKernelBuilt)(llvm::Function &) =
    nullptr;

/// The verifier's first complaint about the functions of \p Mod named in
/// \p Functions (one fusion's), or nullopt.
static std::optional<std::string>
invalidIr(const llvm::Module &Mod, const std::set<std::string> &Functions) {
  for (const llvm::Function &Fn : Mod.functions()) {
    if (Fn.isDeclaration() || !Functions.count(Fn.getName().str()))
      continue;
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    if (!llvm::verifyFunction(Fn, &OS))
      continue;
    OS.flush();
    std::string First = Text.substr(0, Text.find('\n'));
    return "the emitter built invalid LLVM IR (an idxmap bug): " + First;
  }
  return std::nullopt;
}

Expected<EmitResult> emitModule(const HloModule &M, const EmitOptions &O) {
  if (auto Err = validateTuning(O.Tuning))
    return plainError(*Err);
  for (const auto &[Fusion, Knobs] : O.FusionTuning)
    if (auto Err = validateTuning(Knobs))
      return plainError("fusion '" + Fusion + "': " + *Err);
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
  Math.VectorAtomics =
      O.Target.Gpu.rfind("sm_90", 0) == 0 && O.Target.PtxVersion >= 81;
  EmitResult R;
  // Per kernel of R.Kernels (with Skip): its fusion and what it added.
  std::vector<std::pair<const HloInstruction *, Symbols>> Added;
  bool Found = false;
  // A requested fusion that fails is an error, not a skip.
  bool Skip = O.SkipUnsupported && O.OnlyFusion.empty();
  // The module's symbols before the next fusion (with Skip): each fusion's
  // are listed once, after it.
  Symbols Before = Skip ? moduleSymbols(Mod) : Symbols();
  for (const HloInstruction *F : kernelFusions(M)) {
    if (!O.OnlyFusion.empty() && F->name() != O.OnlyFusion)
      continue;
    Found = true;
    Expected<KernelInfo> K = emitFusion(Mod, M, *F, O, Math);
    if (!K) {
      if (!Skip)
        return K.error();
      Symbols New = addedSince(Before, moduleSymbols(Mod));
      eraseSymbols(Mod, New.first, New.second);
      Before = moduleSymbols(Mod); // what could not be erased stays
      R.Skipped.push_back({F, K.error()});
      continue;
    }
    if (codegen::AfterKernelBuilt)
      if (llvm::Function *Fn = Mod.getFunction(K->Name))
        codegen::AfterKernelBuilt(*Fn);
    R.Kernels.push_back(std::move(*K));
    if (Skip) {
      Symbols After = moduleSymbols(Mod);
      Added.push_back({F, addedSince(Before, After)});
      Before = std::move(After);
    }
  }
  // The module is verified once, whole; only when that fails is each
  // kernel's code verified, so that a whole module leaves out the fusions
  // an emitter got wrong.
  if (!R.Kernels.empty() && llvm::verifyModule(Mod)) {
    if (Skip)
      for (size_t I = Added.size(); I-- > 0;) {
        auto Why = invalidIr(Mod, Added[I].second.first);
        if (!Why)
          continue;
        const HloInstruction *Bad = Added[I].first;
        eraseSymbols(Mod, Added[I].second.first, Added[I].second.second);
        R.Kernels.erase(R.Kernels.begin() + std::ptrdiff_t(I));
        R.Skipped.push_back(
            {Bad, M.diagnose(Bad->sourceOffset(),
                             "fusion '" + Bad->name() + "': " + *Why)});
      }
    std::string Errors;
    llvm::raw_string_ostream OS(Errors);
    if (llvm::verifyModule(Mod, &OS))
      return plainError("invalid LLVM IR for module '" + M.name() +
                        "' (an idxmap bug): " + OS.str());
  }
  if (!Found) {
    // At the ENTRY computation: a module of a split file does not start
    // on line 1.
    return M.diagnose(M.entry() ? M.entry()->sourceOffset() : 0,
                      O.OnlyFusion.empty()
                          ? "the module has no fusion to emit"
                          : "no fusion named '" + O.OnlyFusion + "'");
  }
  auto T1 = Clock::now();
  if (O.KernelsOnly || R.Kernels.empty()) {
    R.PhaseMs = {{"analysis+IR", Ms(T0, T1)}};
    return R;
  }
  if (O.HostIr) {
    if (auto Err = hostIr(Mod, O.Target, **TM, R.LlvmIr))
      return *Err;
    R.PhaseMs = {{"analysis+IR", Ms(T0, T1)}, {"opt", Ms(T1, Clock::now())}};
    return R;
  }
  auto Ptx = codegen::emitVerifiedPtx(Mod, O.Target, **TM);
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

Sidecar sidecarOf(const HloModule &M, const EmitResult &R, const EmitOptions &O,
                  const std::string &HloPath, const std::string &SidecarPath) {
  Sidecar S;
  S.Target = O.Target.Gpu;
  // The back end's `.version` line is the truth (PtxVersion 0 lets LLVM
  // choose it).
  size_t V = R.Ptx.find(".version ");
  if (V != std::string::npos) {
    size_t Begin = V + 9, End = R.Ptx.find_first_of(" \t\r\n", Begin);
    S.PtxVersion = R.Ptx.substr(Begin, End - Begin);
  } else if (O.Target.PtxVersion) {
    S.PtxVersion = std::to_string(O.Target.PtxVersion / 10) + "." +
                   std::to_string(O.Target.PtxVersion % 10);
  }
  S.Hlo = sidecarHloPath(HloPath, SidecarPath);
  S.Kernels = R.Kernels;
  planBuffers(M, S);
  return S;
}

Tolerance kernelTolerance(const HloInstruction &Fusion, bool PreciseMath,
                          int64_t RoundingDepth) {
  codegen::MathOptions Math;
  Math.Precise = PreciseMath;
  return codegen::toleranceFor(Fusion, Math, RoundingDepth);
}

std::function<Tolerance(const HloInstruction &, const KernelInfo &)>
kernelTolerances(bool PreciseMath) {
  return [PreciseMath](const HloInstruction &Fusion, const KernelInfo &K) {
    return kernelTolerance(Fusion, PreciseMath, K.RoundingDepth);
  };
}

// unsupportedInstruction refuses the rest (and the element emitter has a
// case for each of these, but scan and scatter, which are their emitters'
// heroes).
bool emittersCompute(HloOpcode Op) {
  return Op < HloOpcode::Fusion || Op == HloOpcode::Gather ||
         Op == HloOpcode::ReduceWindow || Op == HloOpcode::Scan ||
         Op == HloOpcode::Scatter || Op == HloOpcode::ReducePrecision ||
         isFloatFunction(Op);
}

} // namespace idxmap
