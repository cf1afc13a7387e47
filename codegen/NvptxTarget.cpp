//===- codegen/NvptxTarget.cpp - NVPTX target machine and PTX emission ----===//
//
// Part of idxmap. Everything that depends on LLVM's NVPTX back end and its
// version lives here: target registration, the GPU and PTX-version checks,
// the IR pipelines and the PTX printer. LLVM 19 facts (GPU.md): `+ptx85` is
// the newest feature, sm_90's default `.version` is 7.8, libdevice needs
// NVVMReflect, which the NVPTX target adds to O3 itself and the fast
// pipeline names first.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "idxmap/Codegen.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/IR/PatternMatch.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/IPO/Internalize.h"

#include <algorithm>
#include <mutex>
#include <vector>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

using namespace idxmap;

namespace {

Diagnostic targetError(std::string Message) {
  return Diagnostic{{"", 0, 0}, std::move(Message), ""};
}

/// Registers only the NVPTX back end (not every target LLVM was built with),
/// so a static link pulls in NVPTX alone.
void initializeNvptx() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

/// Debugging aid: LLVM's own options (TargetOptions::LlvmArgs). They are
/// process-wide, so only the first non-empty list is parsed.
void parseLlvmArgs(const std::vector<std::string> &Args) {
  static std::once_flag Once;
  if (Args.empty())
    return;
  std::call_once(Once, [&] {
    static const std::vector<std::string> Storage = Args;
    std::vector<const char *> Argv{"idxmap"};
    for (const std::string &A : Storage)
      Argv.push_back(A.c_str());
    llvm::cl::ParseCommandLineOptions(int(Argv.size()), Argv.data());
  });
}

/// Rewrites every `0 - abs(y)` on i16, i32 and i64 into `smin(y, -y)`,
/// the negation in inline asm so that neither instcombine nor the back
/// end's combines fold it back: ptxas of CUDA 13.0 compiles `neg.s32
/// (abs.s32 y)` feeding `max.s32` as max(|y|) (random_reductions seed 1050,
/// a column max of -|x|; confirmed on the H200 with hand-edited PTX, where
/// `sub.s32 0, ...` was wrong too and `min.s32 y, -y` right). Runs on the
/// IR the back end gets, so every form the pipeline canonicalizes to
/// neg(abs) is caught. Same values: smin(y, -y) is -|y|, and INT_MIN for
/// INT_MIN as abs without poison gives.
void avoidPtxasNegationBugs(llvm::Module &M) {
  using namespace llvm::PatternMatch;
  // Every `0 - X` on i16, i32 and i64 for which Want(I, X) holds.
  auto Negations = [&M](auto Want) {
    std::vector<std::pair<llvm::Instruction *, llvm::Value *>> Found;
    for (llvm::Function &F : M)
      for (llvm::BasicBlock &BB : F)
        for (llvm::Instruction &I : BB) {
          llvm::Value *X = nullptr;
          llvm::Type *T = I.getType();
          if ((T->isIntegerTy(16) || T->isIntegerTy(32) ||
               T->isIntegerTy(64)) &&
              match(&I, m_Neg(m_Value(X))) && Want(I, X))
            Found.push_back({&I, X});
        }
    return Found;
  };
  // Inline asm \p Text ($0 the result, $1 \p X) of \p X's type.
  auto Opaque = [](llvm::IRBuilder<> &B, llvm::Value *X,
                   const std::string &Text) {
    unsigned Bits = X->getType()->getIntegerBitWidth();
    const char *C = Bits == 16 ? "=h,h" : Bits == 32 ? "=r,r" : "=l,l";
    auto *FT = llvm::FunctionType::get(X->getType(), {X->getType()}, false);
    return B.CreateCall(
        llvm::InlineAsm::get(FT, Text, C, /*hasSideEffects=*/false), {X});
  };
  for (auto [I, Abs] : Negations([](llvm::Instruction &, llvm::Value *X) {
         return match(X, m_Intrinsic<llvm::Intrinsic::abs>(m_Value()));
       })) {
    llvm::IRBuilder<> B(I);
    llvm::Value *Y = llvm::cast<llvm::IntrinsicInst>(Abs)->getArgOperand(0);
    std::string N = std::to_string(Y->getType()->getIntegerBitWidth());
    llvm::Value *NegY = Opaque(B, Y, "neg.s" + N + " $0, $1;");
    I->replaceAllUsesWith(
        B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, Y, NegY));
    I->eraseFromParent();
  }
  // The same ptxas also drops the negation of some operands of a 3-input
  // integer max (VIMNMX3) fed by `neg.s32` (random_reductions seed 9206, a
  // row max of -x: SASS `VIMNMX3 R5, R4, R5, R6` with R5 and R6 never
  // negated; `sub.s32 0, x` and `mul.lo.s32 x, -1` fail the same way,
  // `not.b32` + `add.s32 1` is right on the H200). Negations feeding an
  // integer min or max become ~x + 1 in inline asm.
  for (auto [I, X] : Negations([](llvm::Instruction &I, llvm::Value *) {
         return llvm::any_of(I.users(), [](llvm::User *U) {
           return llvm::isa<llvm::MinMaxIntrinsic>(U);
         });
       })) {
    llvm::IRBuilder<> B(I);
    std::string N = std::to_string(X->getType()->getIntegerBitWidth());
    I->replaceAllUsesWith(Opaque(B, X,
                                 "{ .reg .b" + N + " t; not.b" + N +
                                     " t, $1; add.s" + N + " $0, t, 1; }"));
    I->eraseFromParent();
  }
}

/// Rewrites every `neg.sN d, s;` the back end wrote (outside inline asm)
/// as `not.bN d, s; add.sN d, d, 1;`, the same value. The IR-level rewrite
/// above only sees negations the IR holds; the back end forms others from
/// subtractions and multiplications by negative constants, and ptxas drops
/// them in a 3-input max as well (random_reductions seed 2764: a column max
/// of `-2|x| - p`, `neg.s32` of `2|x| + p` feeding `max.s32`; the GPU's
/// column maxima came out as `2|x| + p`, 3 where 1 was right). The
/// negations inside inline asm are the IR-level rewrite's own, checked on
/// the H200 as they are.
///
/// Example: `\t@%p1 neg.s32 \t%r48, %r47;` becomes `\t@%p1 not.b32 %r48,
/// %r47;` and `\t@%p1 add.s32 %r48, %r48, 1;`.
std::string rewritePtxNegations(const std::string &Ptx) {
  std::string Out;
  Out.reserve(Ptx.size());
  bool InAsm = false;
  size_t Pos = 0;
  while (Pos < Ptx.size()) {
    size_t End = Ptx.find('\n', Pos);
    if (End == std::string::npos)
      End = Ptx.size();
    llvm::StringRef Line(Ptx.data() + Pos, End - Pos);
    Pos = End + 1;
    if (Line.contains("// begin inline asm"))
      InAsm = true;
    else if (Line.contains("// end inline asm"))
      InAsm = false;
    llvm::StringRef Rest = Line.ltrim();
    llvm::StringRef Pred;
    if (Rest.starts_with("@")) {
      Pred = Rest.take_until([](char C) { return C == ' ' || C == '\t'; });
      Rest = Rest.drop_front(Pred.size()).ltrim();
    }
    llvm::StringRef Bits;
    if (!InAsm && Rest.consume_front("neg.s") &&
        (Rest.starts_with("16") || Rest.starts_with("32") ||
         Rest.starts_with("64"))) {
      Bits = Rest.take_front(2);
      llvm::StringRef Ops = Rest.drop_front(2).trim().rtrim(';').trim();
      auto [D, S] = Ops.split(',');
      D = D.trim();
      S = S.trim();
      if (!D.empty() && !S.empty() && !S.contains(',')) {
        std::string P = Pred.empty() ? "" : Pred.str() + " ";
        Out += "\t" + P + "not.b" + Bits.str() + " \t" + D.str() + ", " +
               S.str() + ";\n";
        Out += "\t" + P + "add.s" + Bits.str() + " \t" + D.str() + ", " +
               D.str() + ", 1;\n";
        continue;
      }
    }
    Out += Line.str();
    if (End < Ptx.size())
      Out += '\n';
  }
  return Out;
}

std::string ptxVersionText(unsigned V) {
  return std::to_string(V / 10) + "." + std::to_string(V % 10);
}

/// True when \p M defines a function of its own besides the kernels (the
/// emitters' subgraph functions, FusedElementEmitter).
bool hasLocalFunctions(const llvm::Module &M) {
  for (const llvm::Function &F : M)
    if (!F.isDeclaration() && F.hasLocalLinkage())
      return true;
  return false;
}

/// True when every function \p M defines asks to skip instcombine.
bool skipsInstCombine(const llvm::Module &M) {
  bool Any = false;
  for (const llvm::Function &F : M) {
    if (F.isDeclaration())
      continue;
    if (!F.hasFnAttribute(codegen::SkipInstCombineAttr))
      return false;
    Any = true;
  }
  return Any;
}

/// True when \p M defines a kernel and every kernel carries \p Attr.
bool everyKernelHas(const llvm::Module &M, const char *Attr) {
  bool Any = false;
  for (const llvm::Function &F : M) {
    if (F.isDeclaration() ||
        F.getCallingConv() != llvm::CallingConv::PTX_Kernel)
      continue;
    if (!F.hasFnAttribute(Attr))
      return false;
    Any = true;
  }
  return Any;
}

/// True when \p M declares (and calls) a libdevice function.
bool callsLibdevice(const llvm::Module &M) {
  for (const llvm::Function &F : M)
    if (F.isDeclaration() && F.getName().starts_with("__nv_") && !F.use_empty())
      return true;
  return false;
}

/// Turns off back-end passes whose work is already done or is redone by
/// ptxas when the fast pipeline ran: GVN (the fast pipeline's CSE and the
/// back end's early CSE cover the emitters' straight-line code), the
/// load/store vectorizer (the emitters write the vector accesses they
/// proved), and the machine-level scheduling, sinking, hoisting, block
/// placement and tail duplication (ptxas schedules and allocates again).
/// Measured on every bench fusion: identical sm_90 cubin sizes from ptxas,
/// about a third less back-end time. Straight-line strength reduction and
/// n-ary reassociation (the back end's GEP/index clean-up, fed by scalar
/// evolution): byte-identical cubins for all 51 test and bench modules and
/// 5-24 % fewer compile instructions (callgrind; 2026-11-30). Loop strength
/// reduction stays: without it f32[20,160,170]{2,1,0} ran 8 % slower.
/// Instruction selection and everything that shapes the PTX itself still
/// run at the Aggressive level.
class FastBackEndGate final : public llvm::OptPassGate {
public:
  /// \p Extra: more passes to skip, by name (TargetOptions::SkipPasses).
  explicit FastBackEndGate(const std::vector<std::string> &Extra)
      : Extra(Extra) {}
  bool isEnabled() const override { return true; }
  bool shouldRunPass(const llvm::StringRef PassName, llvm::StringRef) override {
    static const llvm::StringRef Skipped[] = {
        "Global Value Numbering",
        "Straight line strength reduction",
        "Nary reassociation",
        "GPU Load and Store Vectorizer",
        "Machine Instruction Scheduler",
        "Machine code sinking",
        "Early Machine Loop Invariant Code Motion",
        "Branch Probability Basic Block Placement",
        "Early Tail Duplication",
        "Control Flow Optimizer",
        "Constant Hoisting",
        "Partially inline calls to library functions",
        "Merge contiguous icmps into a memcmp",
        "Expand memcmp() to load/stores",
        "TLS Variable Hoist",
        "NVPTX Image Optimizer"};
    for (llvm::StringRef S : Skipped)
      if (PassName == S)
        return false;
    for (const std::string &S : Extra)
      if (PassName == S)
        return false;
    return true;
  }

private:
  const std::vector<std::string> &Extra;
};

/// Splits every basic block longer than \p Max instructions into blocks
/// of at most \p Max joined by branches. SelectionDAG selects instructions
/// one block at a time, in time that grows with the square of the block's
/// length: one block of a 5,000-op elementwise chain took 2.0 s, 20,000
/// ops over a minute. No emitter writes blocks this long for the fusions
/// it was tuned on, so their code does not change.
constexpr size_t MaxBlockInstructions = 2000;

void splitLongBlocks(llvm::Module &M, size_t Max) {
  for (llvm::Function &F : M) {
    std::vector<llvm::BasicBlock *> Long;
    for (llvm::BasicBlock &BB : F)
      if (BB.size() > Max)
        Long.push_back(&BB);
    for (llvm::BasicBlock *BB : Long) {
      std::vector<llvm::BasicBlock::iterator> At;
      size_t N = 0;
      for (auto It = BB->getFirstNonPHIIt(); It != BB->end(); ++It)
        if (++N % Max == 0 && !It->isTerminator())
          At.push_back(std::next(It));
      // From the last point back: each split moves at most Max
      // instructions (front to back would move the rest every time).
      for (auto It = At.rbegin(); It != At.rend(); ++It)
        BB->splitBasicBlock(*It, BB->getName() + ".split");
    }
  }
}

} // namespace

unsigned idxmap::codegen::backEndOptLevel(const llvm::Module &M,
                                          const TargetOptions &Opts,
                                          bool Libdevice) {
  // What the emitters asked for (requestBackEndOptLevel) after the fast
  // pipeline, else O3; O3 too for libdevice's code unless every kernel's
  // plan keeps its level there (LibdeviceAtPlanLevelAttr).
  // Opts.BackEndOptLevel overrides it (experiments).
  if (Opts.BackEndOptLevel >= 0)
    return unsigned(Opts.BackEndOptLevel);
  if (Opts.Optimize && Opts.OptPipeline == TargetOptions::Pipeline::Fast &&
      (!Libdevice || everyKernelHas(M, LibdeviceAtPlanLevelAttr)))
    if (auto *Flag = llvm::mdconst::extract_or_null<llvm::ConstantInt>(
            M.getModuleFlag(BackEndOptFlag)))
      return unsigned(Flag->getZExtValue());
  return 3;
}

void idxmap::requestBackEndOptLevel(llvm::Module &M, unsigned Level) {
  if (auto *Flag = llvm::mdconst::extract_or_null<llvm::ConstantInt>(
          M.getModuleFlag(BackEndOptFlag)))
    Level = std::max(Level, unsigned(Flag->getZExtValue()));
  M.setModuleFlag(llvm::Module::Max, BackEndOptFlag, std::min(Level, 3u));
}

unsigned idxmap::minPtxVersion(std::string_view Gpu) {
  // PTX ISA: sm_80 needs 7.0, sm_90 7.8, sm_90a 8.0.
  if (Gpu == "sm_80")
    return 70;
  if (Gpu == "sm_90")
    return 78;
  if (Gpu == "sm_90a")
    return 80;
  return 0;
}

std::optional<Diagnostic>
idxmap::validateTargetOptions(const TargetOptions &Opts) {
  unsigned Min = minPtxVersion(Opts.Gpu);
  if (Min == 0)
    return targetError("unsupported GPU '" + Opts.Gpu +
                       "' (expected sm_80, sm_90 or sm_90a)");
  if (Opts.BackEndOptLevel < -1 || Opts.BackEndOptLevel > 3)
    return targetError("back-end optimization level " +
                       std::to_string(Opts.BackEndOptLevel) +
                       " (expected 0, 1, 2 or 3, or -1 for the emitters')");
  if (Opts.PtxVersion == 0)
    return std::nullopt;
  if (Opts.PtxVersion > MaxPtxVersion)
    return targetError("PTX version " + ptxVersionText(Opts.PtxVersion) +
                       " is newer than LLVM 19 can emit (at most " +
                       ptxVersionText(MaxPtxVersion) + ")");
  if (Opts.PtxVersion < Min)
    return targetError("PTX version " + ptxVersionText(Opts.PtxVersion) +
                       " cannot target " + Opts.Gpu + " (needs at least " +
                       ptxVersionText(Min) + ")");
  return std::nullopt;
}

Expected<std::unique_ptr<llvm::TargetMachine>>
idxmap::createNvptxTargetMachine(const TargetOptions &Opts) {
  if (auto Err = validateTargetOptions(Opts))
    return *Err;
  initializeNvptx();
  parseLlvmArgs(Opts.LlvmArgs);
  std::string Error;
  const llvm::Target *T =
      llvm::TargetRegistry::lookupTarget(NvptxTriple, Error);
  if (!T)
    return targetError("NVPTX target unavailable: " + Error);
  std::string Features;
  if (Opts.PtxVersion != 0)
    Features = "+ptx" + std::to_string(Opts.PtxVersion);
  llvm::TargetOptions LlvmOpts;
  // Contraction into fma only where the IR says `contract`: elementwise
  // codegen decides, so results stay reproducible against the interpreter.
  LlvmOpts.AllowFPOpFusion = llvm::FPOpFusion::Standard;
  std::unique_ptr<llvm::TargetMachine> TM(T->createTargetMachine(
      NvptxTriple, Opts.Gpu, Features, LlvmOpts, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!TM)
    return targetError("could not create the NVPTX target machine for " +
                       Opts.Gpu);
  return TM;
}

void idxmap::configureModuleForTarget(llvm::Module &M,
                                      const llvm::TargetMachine &TM) {
  M.setTargetTriple(TM.getTargetTriple().str());
  M.setDataLayout(TM.createDataLayout());
}

std::optional<Diagnostic> idxmap::linkLibdevice(llvm::Module &M,
                                                const TargetOptions &Opts) {
  if (!callsLibdevice(M))
    return std::nullopt;
  auto Buffer = llvm::MemoryBuffer::getFile(Opts.LibdevicePath);
  if (!Buffer)
    return targetError("cannot read libdevice '" + Opts.LibdevicePath +
                       "': " + Buffer.getError().message() +
                       " (precise math needs the CUDA toolkit's libdevice)");
  // Lazily: the linker materializes only the functions the kernel calls
  // (and theirs), not libdevice's hundreds (parsing all of them cost
  // about 20 ms a fusion).
  auto Lib = llvm::getOwningLazyBitcodeModule(std::move(*Buffer),
                                              M.getContext());
  if (!Lib)
    return targetError("cannot parse libdevice '" + Opts.LibdevicePath +
                       "': " + llvm::toString(Lib.takeError()));
  (*Lib)->setTargetTriple(M.getTargetTriple());
  (*Lib)->setDataLayout(M.getDataLayout());
  if (llvm::Linker::linkModules(M, std::move(*Lib),
                                llvm::Linker::Flags::LinkOnlyNeeded))
    return targetError("linking libdevice failed");
  // Only kernels stay visible; libdevice's helpers become internal so that
  // the inliner expands them and drops the rest.
  llvm::internalizeModule(M, [](const llvm::GlobalValue &GV) {
    const auto *F = llvm::dyn_cast<llvm::Function>(&GV);
    return F && F->getCallingConv() == llvm::CallingConv::PTX_Kernel;
  });
  // IEEE denormals in libdevice (NVVMReflect reads this flag).
  if (!M.getModuleFlag("nvvm-reflect-ftz"))
    M.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
  return std::nullopt;
}

std::optional<Diagnostic> idxmap::optimizeModule(llvm::Module &M,
                                                 llvm::TargetMachine &TM,
                                                 TargetOptions::Pipeline P,
                                                 const TargetOptions &Opts) {
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  // The PassBuilder constructor calls TM.registerPassBuilderCallbacks, which
  // adds NVPTX's own passes (NVVMReflect, NVVMIntrRange) to the default
  // pipelines.
  // Instrumentation only with LLVM options (-time-passes,
  // -print-before=PASS, ...): it costs time on every pass.
  llvm::PassInstrumentationCallbacks PIC;
  std::optional<llvm::StandardInstrumentations> SI;
  if (!Opts.LlvmArgs.empty()) {
    SI.emplace(M.getContext(), /*DebugLogging=*/false);
    SI->registerCallbacks(PIC, &MAM);
  }
  llvm::PassBuilder PB(&TM, llvm::PipelineTuningOptions(), std::nullopt,
                       SI ? &PIC : nullptr);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  llvm::ModulePassManager MPM;
  if (P == TargetOptions::Pipeline::O3) {
    MPM = PB.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  } else {
    // The emitters write explicit vector accesses, unrolled bodies and
    // accumulators in allocas; what is left to clean is redundant index
    // arithmetic and loop-invariant code. The inliner, the vectorizers and
    // the loop optimizers of O3 find nothing here and cost most of its time;
    // only a module with subgraph functions (FusedElementEmitter) runs the
    // inliner first, which expands the cheap calls.
    //
    // No CSE after LICM: the back end's own early CSE follows, and the
    // sm_90 cubins of all 51 test and bench modules were byte-identical
    // without it (2026-11-30). Opts.FastPipeline replaces the pipeline
    // (experiments; the syntax of `opt -passes`). Its errors keep the name
    // of the tool's environment variable, the option users know.
    //
    // Before inlining, instcombine folds the index arithmetic and early CSE
    // merges the calls at one index: the inliner then sees each call once
    // (a 24-level chain of values read at two indices: 10 ms; the inliner
    // alone took 170 ms on it, with early CSE inside the CGSCC walk 30 s).
    //
    // A module whose every function asks (codegen::SkipInstCombineAttr)
    // leaves instcombine out: its emitted IR is already folded.
    const char *InlineFirst =
        "function(instcombine<no-verify-fixpoint>,early-cse),cgscc(inline),";
    if (auto Err = PB.parsePassPipeline(
            MPM,
            !Opts.FastPipeline.empty()
                ? Opts.FastPipeline
                : std::string(M.getFunction("__nvvm_reflect")
                                  ? "function(nvvm-reflect),"
                                  : "") +
                      std::string(hasLocalFunctions(M) ? InlineFirst : "") +
                      (skipsInstCombine(M)
                           ? "function(sroa,early-cse,simplifycfg,loop-mssa("
                             "licm))"
                           : "function(sroa,early-cse,instcombine<no-"
                             "verify-fixpoint>,simplifycfg,loop-mssa(licm))")))
      return targetError("IDXMAP_FAST_PIPELINE: " +
                         llvm::toString(std::move(Err)));
  }
  MPM.run(M, MAM);
  return std::nullopt;
}

namespace {
/// The error for an invalid module, which no back end should see.
std::optional<Diagnostic> verifyForBackEnd(const llvm::Module &M) {
  std::string Errors;
  llvm::raw_string_ostream OS(Errors);
  if (llvm::verifyModule(M, &OS))
    return targetError("invalid LLVM IR for module '" +
                       M.getModuleIdentifier() + "': " + OS.str());
  return std::nullopt;
}
} // namespace

Expected<std::string> idxmap::emitPtx(llvm::Module &M,
                                      const TargetOptions &Opts) {
  auto TM = createNvptxTargetMachine(Opts);
  if (!TM)
    return TM.error();
  return emitPtx(M, Opts, **TM);
}

Expected<std::string> idxmap::emitPtx(llvm::Module &M,
                                      const TargetOptions &Opts,
                                      llvm::TargetMachine &TM) {
  if (auto Err = verifyForBackEnd(M))
    return *Err;
  return codegen::emitVerifiedPtx(M, Opts, TM);
}

Expected<std::string>
idxmap::codegen::emitVerifiedPtx(llvm::Module &M, const TargetOptions &Opts,
                                 llvm::TargetMachine &TM) {
  configureModuleForTarget(M, TM);
  bool Libdevice = Opts.PreciseMath || callsLibdevice(M);
  if (Libdevice)
    if (auto Err = linkLibdevice(M, Opts))
      return *Err;
  // libdevice's functions take the fast pipeline too: NVVMReflect, the
  // inliner, then the short function pipeline (a precise erf compiled in
  // 162 M instructions with O3, 111 M so; the module's values are the
  // same, and ptxas optimizes what is left).
  TargetOptions::Pipeline P = Opts.OptPipeline;
  if (Opts.Optimize)
    if (auto Err = optimizeModule(M, TM, P, Opts))
      return *Err;
  TM.setOptLevel(llvm::CodeGenOptLevel(backEndOptLevel(M, Opts, Libdevice)));
  avoidPtxasNegationBugs(M);
  splitLongBlocks(M, MaxBlockInstructions);

  llvm::SmallString<0> Ptx;
  llvm::raw_svector_ostream OS(Ptx);
  llvm::legacy::PassManager PM;
  if (TM.addPassesToEmitFile(PM, OS, nullptr,
                             llvm::CodeGenFileType::AssemblyFile))
    return targetError("the NVPTX back end cannot emit assembly");
  // The gate lives in the module's context only while the back end runs.
  FastBackEndGate Gate(Opts.SkipPasses);
  llvm::OptPassGate &Previous = M.getContext().getOptPassGate();
  bool Gated = Opts.Optimize && P == TargetOptions::Pipeline::Fast;
  if (Gated)
    M.getContext().setOptPassGate(Gate);
  PM.run(M);
  if (llvm::TimePassesIsEnabled)
    llvm::reportAndResetTimings();
  if (Gated)
    M.getContext().setOptPassGate(Previous);
  return rewritePtxNegations(std::string(Ptx.str()));
}

std::optional<Diagnostic> idxmap::hostIr(llvm::Module &M,
                                         const TargetOptions &Opts,
                                         llvm::TargetMachine &TM,
                                         std::string &Ir) {
  if (auto Err = verifyForBackEnd(M))
    return *Err;
  configureModuleForTarget(M, TM);
  if (Opts.Optimize)
    if (auto Err = optimizeModule(M, TM, Opts.OptPipeline, Opts))
      return *Err;
  llvm::raw_string_ostream OS(Ir);
  M.print(OS, nullptr);
  return std::nullopt;
}
