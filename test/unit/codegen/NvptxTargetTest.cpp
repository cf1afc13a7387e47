//===- test/unit/codegen/NvptxTargetTest.cpp - Target and PTX emission ----===//
//
// Part of idxmap. GPU/PTX-version validation, the O3 pipeline, libdevice
// linking and PTX emission of the smoke kernels; ptxas when installed.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "KernelBuilder.h"
#include "SmokeKernels.h"
#include "emitters/EmitterSupport.h"

#include "idxmap/Codegen.h"
#include "idxmap/Emit.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/Target/TargetMachine.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

using namespace idxmap;
using namespace idxmap::codegen;

namespace {

std::string emitSmoke(const std::string &Kernel, const TargetOptions &Opts) {
  llvm::LLVMContext Ctx;
  auto M = buildSmokeKernel(Ctx, Kernel);
  EXPECT_TRUE(M) << Kernel;
  if (!M)
    return "";
  auto Ptx = emitPtx(*M, Opts);
  EXPECT_TRUE(Ptx) << (Ptx ? "" : Ptx.error().Message);
  return Ptx ? *Ptx : "";
}

size_t countOf(const std::string &Text, const std::string &Needle) {
  size_t N = 0;
  for (size_t P = Text.find(Needle); P != std::string::npos;
       P = Text.find(Needle, P + 1))
    ++N;
  return N;
}

bool hasLibdevice() {
  return access(TargetOptions().LibdevicePath.c_str(), R_OK) == 0;
}

} // namespace

TEST(NvptxTarget, MinPtxVersionPerGpu) {
  EXPECT_EQ(minPtxVersion("sm_80"), 70u);
  EXPECT_EQ(minPtxVersion("sm_90"), 78u);
  EXPECT_EQ(minPtxVersion("sm_90a"), 80u);
  EXPECT_EQ(minPtxVersion("sm_75"), 0u);
  EXPECT_EQ(minPtxVersion("sm_100"), 0u);
}

TEST(NvptxTarget, ValidatesGpuAndPtxVersion) {
  TargetOptions T;
  EXPECT_FALSE(validateTargetOptions(T)) << "defaults must be valid";
  EXPECT_EQ(T.Gpu, "sm_90");
  EXPECT_EQ(T.PtxVersion, 85u);

  T.Gpu = "sm_75";
  auto Err = validateTargetOptions(T);
  ASSERT_TRUE(Err);
  EXPECT_NE(Err->Message.find("unsupported GPU 'sm_75'"), std::string::npos);
  EXPECT_NE(Err->Message.find("sm_80, sm_90 or sm_90a"), std::string::npos);

  T.Gpu = "sm_90";
  T.PtxVersion = 86;
  Err = validateTargetOptions(T);
  ASSERT_TRUE(Err);
  EXPECT_NE(Err->Message.find("8.6 is newer than LLVM 19 can emit"),
            std::string::npos)
      << Err->Message;

  T.Gpu = "sm_90a";
  T.PtxVersion = 78;
  Err = validateTargetOptions(T);
  ASSERT_TRUE(Err);
  EXPECT_NE(Err->Message.find("7.8 cannot target sm_90a"), std::string::npos)
      << Err->Message;

  T.PtxVersion = 0; // LLVM's default for the GPU
  EXPECT_FALSE(validateTargetOptions(T));
  T.Gpu = "sm_80";
  T.PtxVersion = 70;
  EXPECT_FALSE(validateTargetOptions(T));
}

TEST(NvptxTarget, CreatesTargetMachinePerGpu) {
  for (const char *Gpu : {"sm_80", "sm_90", "sm_90a"}) {
    TargetOptions T;
    T.Gpu = Gpu;
    auto TM = createNvptxTargetMachine(T);
    ASSERT_TRUE(TM) << Gpu;
    EXPECT_EQ((*TM)->getTargetTriple().str(), NvptxTriple);
    EXPECT_EQ((*TM)->getTargetCPU().str(), Gpu);
  }
  TargetOptions Bad;
  Bad.Gpu = "sm_61";
  EXPECT_FALSE(createNvptxTargetMachine(Bad));
}

TEST(NvptxTarget, ScaleKernelUsesReadOnlyVectorLoads) {
  std::string Ptx = emitSmoke("scale_f32", TargetOptions());
  EXPECT_NE(Ptx.find(".version 8.5"), std::string::npos);
  EXPECT_NE(Ptx.find(".target sm_90"), std::string::npos);
  EXPECT_NE(Ptx.find(".address_size 64"), std::string::npos);
  EXPECT_NE(Ptx.find(".visible .entry scale_f32("), std::string::npos);
  EXPECT_NE(Ptx.find(".maxntid 256, 1, 1"), std::string::npos);
  EXPECT_EQ(countOf(Ptx, "ld.global.nc.v4.f32"), 1u) << Ptx;
  EXPECT_EQ(countOf(Ptx, "st.global.v4.f32"), 1u) << Ptx;
  // The scalar tail loads through the same read-only parameter.
  EXPECT_NE(Ptx.find("ld.global.nc.f32"), std::string::npos) << Ptx;
}

TEST(NvptxTarget, PtxVersionAndGpuReachTheOutput) {
  TargetOptions T;
  T.PtxVersion = 0;
  std::string Ptx = emitSmoke("scale_f32", T);
  EXPECT_NE(Ptx.find(".version 7.8"), std::string::npos)
      << "LLVM 19's default PTX version for sm_90";
  T.Gpu = "sm_80";
  T.PtxVersion = 80;
  Ptx = emitSmoke("scale_f32", T);
  EXPECT_NE(Ptx.find(".version 8.0"), std::string::npos);
  EXPECT_NE(Ptx.find(".target sm_80"), std::string::npos);
  T.Gpu = "sm_90a";
  T.PtxVersion = 85;
  Ptx = emitSmoke("scale_f32", T);
  EXPECT_NE(Ptx.find(".target sm_90a"), std::string::npos);
}

TEST(NvptxTarget, OptimizationRunsTheO3Pipeline) {
  // A kernel calling an internal helper: O3 inlines it and deletes it, so
  // the helper's `.func` is in the PTX only when optimization is off. (The
  // fast pipeline has no inliner: the emitters never call helpers.)
  auto Build = [](llvm::LLVMContext &Ctx) {
    auto M = std::make_unique<llvm::Module>("o3", Ctx);
    llvm::Type *F32 = llvm::Type::getFloatTy(Ctx);
    auto *HelperTy = llvm::FunctionType::get(F32, {F32}, false);
    auto *Helper = llvm::Function::Create(
        HelperTy, llvm::GlobalValue::InternalLinkage, "helper", *M);
    {
      llvm::IRBuilder<> B(llvm::BasicBlock::Create(Ctx, "entry", Helper));
      B.CreateRet(B.CreateFAdd(Helper->getArg(0), Helper->getArg(0)));
    }
    llvm::Function *K = createKernel(
        *M, "k",
        {{"x", KernelParamRole::Input}, {"y", KernelParamRole::Output}});
    llvm::IRBuilder<> B(&K->getEntryBlock());
    llvm::Value *X = B.CreateAlignedLoad(F32, K->getArg(0), llvm::Align(16));
    B.CreateAlignedStore(B.CreateCall(Helper, {X}), K->getArg(1),
                         llvm::Align(16));
    B.CreateRetVoid();
    return M;
  };
  llvm::LLVMContext Ctx;
  TargetOptions T;
  T.OptPipeline = TargetOptions::Pipeline::O3;
  auto Optimized = Build(Ctx);
  auto Ptx = emitPtx(*Optimized, T);
  ASSERT_TRUE(Ptx) << Ptx.error().Message;
  EXPECT_EQ(Ptx->find(".func"), std::string::npos) << *Ptx;
  EXPECT_FALSE(Optimized->getFunction("helper"));

  T.Optimize = false;
  auto Plain = Build(Ctx);
  Ptx = emitPtx(*Plain, T);
  ASSERT_TRUE(Ptx) << Ptx.error().Message;
  EXPECT_NE(Ptx->find(".func"), std::string::npos) << *Ptx;
}

TEST(NvptxTarget, FastPipelinePromotesAccumulatorsAndFoldsIndexing) {
  // What the emitters rely on from the fast pipeline: an accumulator in an
  // alloca becomes a register (no .local), the same index computed twice is
  // computed once, and the pass gate of the back end is removed from the
  // context afterwards.
  llvm::LLVMContext Ctx;
  llvm::Module M("fast", Ctx);
  llvm::Type *F32 = llvm::Type::getFloatTy(Ctx);
  llvm::Function *K = createKernel(
      M, "k", {{"x", KernelParamRole::Input}, {"y", KernelParamRole::Output}});
  llvm::IRBuilder<> B(&K->getEntryBlock());
  llvm::Value *Acc = B.CreateAlloca(F32);
  B.CreateStore(llvm::ConstantFP::get(F32, 0.0), Acc);
  llvm::Value *Tid = emitThreadId(B, GpuDim::X, 128);
  for (int I = 0; I < 2; ++I) {
    llvm::Value *Idx = B.CreateAdd(B.CreateMul(Tid, B.getInt32(3)),
                                   B.getInt32(1)); // same index twice
    llvm::Value *P = B.CreateInBoundsGEP(F32, K->getArg(0), Idx);
    llvm::Value *X = B.CreateAlignedLoad(F32, P, llvm::Align(4));
    B.CreateStore(B.CreateFAdd(B.CreateLoad(F32, Acc), X), Acc);
  }
  B.CreateAlignedStore(B.CreateLoad(F32, Acc), K->getArg(1), llvm::Align(4));
  B.CreateRetVoid();
  TargetOptions T; // the fast pipeline is the default
  ASSERT_EQ(T.OptPipeline, TargetOptions::Pipeline::Fast);
  auto Ptx = emitPtx(M, T);
  ASSERT_TRUE(Ptx) << Ptx.error().Message;
  EXPECT_EQ(Ptx->find(".local"), std::string::npos) << *Ptx;
  size_t Loads = 0;
  for (size_t At = Ptx->find("ld.global"); At != std::string::npos;
       At = Ptx->find("ld.global", At + 1))
    ++Loads;
  EXPECT_EQ(Loads, 1u) << *Ptx;
  EXPECT_FALSE(Ctx.getOptPassGate().isEnabled());
}

TEST(NvptxTarget, InvalidIrIsADiagnostic) {
  llvm::LLVMContext Ctx;
  llvm::Module M("bad", Ctx);
  // A kernel whose entry block has no terminator.
  createKernel(M, "k", {{"x", KernelParamRole::Input}});
  auto Ptx = emitPtx(M, TargetOptions());
  ASSERT_FALSE(Ptx);
  EXPECT_NE(Ptx.error().Message.find("invalid LLVM IR for module 'bad'"),
            std::string::npos)
      << Ptx.error().Message;
}

TEST(NvptxTarget, InvalidTargetIsADiagnostic) {
  llvm::LLVMContext Ctx;
  auto M = buildSmokeKernel(Ctx, "scale_f32");
  TargetOptions T;
  T.Gpu = "sm_120";
  auto Ptx = emitPtx(*M, T);
  ASSERT_FALSE(Ptx);
  EXPECT_NE(Ptx.error().Message.find("unsupported GPU 'sm_120'"),
            std::string::npos);
}

TEST(NvptxTarget, LinksLibdeviceAndResolvesReflect) {
  if (!hasLibdevice())
    GTEST_SKIP() << "no libdevice (CUDA toolkit) installed";
  llvm::LLVMContext Ctx;
  auto M = buildSmokeKernel(Ctx, "tanh_precise_f32");
  TargetOptions T;
  T.PreciseMath = true;
  auto Ptx = emitPtx(*M, T);
  ASSERT_TRUE(Ptx) << Ptx.error().Message;
  // Linked, inlined and internal: no external reference or call remains, and
  // NVVMReflect folded every __nvvm_reflect query.
  EXPECT_EQ(Ptx->find("__nv_tanhf"), std::string::npos);
  EXPECT_EQ(Ptx->find("__nvvm_reflect"), std::string::npos);
  EXPECT_EQ(Ptx->find(".extern"), std::string::npos);
  EXPECT_EQ(Ptx->find("tanh.approx"), std::string::npos);
  EXPECT_TRUE(M->getModuleFlag("nvvm-reflect-ftz"));
  // Only the kernel is left as a definition.
  unsigned Defined = 0;
  for (const llvm::Function &F : *M)
    Defined += !F.isDeclaration();
  EXPECT_EQ(Defined, 1u);
}

TEST(NvptxTarget, MissingLibdeviceIsADiagnostic) {
  llvm::LLVMContext Ctx;
  auto M = buildSmokeKernel(Ctx, "tanh_precise_f32");
  TargetOptions T;
  T.PreciseMath = true;
  T.LibdevicePath = "/nonexistent/libdevice.10.bc";
  auto Ptx = emitPtx(*M, T);
  ASSERT_FALSE(Ptx);
  EXPECT_NE(Ptx.error().Message.find(
                "cannot read libdevice '/nonexistent/libdevice.10.bc'"),
            std::string::npos)
      << Ptx.error().Message;
}

TEST(NvptxTarget, ModulesWithoutLibdeviceCallsNeedNoLibdevice) {
  llvm::LLVMContext Ctx;
  auto M = buildSmokeKernel(Ctx, "scale_f32");
  TargetOptions T;
  T.PreciseMath = true;
  T.LibdevicePath = "/nonexistent/libdevice.10.bc";
  auto Ptx = emitPtx(*M, T);
  EXPECT_TRUE(Ptx) << Ptx.error().Message;
}

TEST(NvptxTarget, PtxasAcceptsTheScaleKernel) {
  const std::string Ptxas = IDXMAP_TEST_PTXAS;
  if (access(Ptxas.c_str(), X_OK) != 0)
    GTEST_SKIP() << "no ptxas at " << Ptxas;
  std::string Ptx = emitSmoke("scale_f32", TargetOptions());
  char Path[] = "/tmp/idxmap-codegen-test-XXXXXX";
  int Fd = mkstemp(Path);
  ASSERT_GE(Fd, 0);
  close(Fd);
  std::ofstream(Path) << Ptx;
  std::string Cmd =
      "'" + Ptxas + "' -arch=sm_90 '" + Path + "' -o /dev/null >/dev/null 2>&1";
  int Status = std::system(Cmd.c_str());
  std::remove(Path);
  EXPECT_TRUE(WIFEXITED(Status) && WEXITSTATUS(Status) == 0);
  // And ptxas does reject broken PTX (the check can fail).
  std::ofstream(Path) << Ptx.substr(0, Ptx.size() / 2);
  Status = std::system(Cmd.c_str());
  std::remove(Path);
  EXPECT_FALSE(WIFEXITED(Status) && WEXITSTATUS(Status) == 0);
}

namespace {

const char *RowSumHlo = R"(HloModule rowsum

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

fused {
  p0 = f32[64,8192] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(p0, z), dimensions={1}, to_apply=add
}

ENTRY main {
  p = f32[64,8192] parameter(0)
  ROOT f = f32[64] fusion(p), kind=kInput, calls=fused
}
)";

} // namespace

TEST(NvptxTarget, BackEndOptLevelIsTheHighestRequested) {
  llvm::LLVMContext Ctx;
  llvm::Module M("m", Ctx);
  EXPECT_EQ(M.getModuleFlag(BackEndOptFlag), nullptr);
  requestBackEndOptLevel(M, 0);
  auto Level = [&] {
    return llvm::mdconst::extract<llvm::ConstantInt>(
               M.getModuleFlag(BackEndOptFlag))
        ->getZExtValue();
  };
  EXPECT_EQ(Level(), 0u);
  requestBackEndOptLevel(M, 3);
  EXPECT_EQ(Level(), 3u);
  requestBackEndOptLevel(M, 0); // a later loop kernel does not lower it
  EXPECT_EQ(Level(), 3u);
}

TEST(NvptxTarget, TuningKnobsComeFromEmitOptions) {
  auto M = parseHloModule(RowSumHlo, "rowsum.hlo");
  ASSERT_TRUE(M) << M.error().str();
  EmitOptions O;
  auto Default = emitModule(**M, O);
  ASSERT_TRUE(Default) << Default.error().str();
  EXPECT_EQ(Default->Kernels[0].Block[0], 512u); // 2048 vectors per row
  O.Tuning.RedRowLanes = 256;
  auto Tuned = emitModule(**M, O);
  ASSERT_TRUE(Tuned) << Tuned.error().str();
  EXPECT_EQ(Tuned->Kernels[0].Block[0], 256u);
  O.Tuning.RedRowLanes = 300; // rounded down to a power of two
  auto Rounded = emitModule(**M, O);
  ASSERT_TRUE(Rounded) << Rounded.error().str();
  EXPECT_EQ(Rounded->Kernels[0].Block[0], 256u);
  O.Tuning.RedRowLanes = 2048;
  auto Bad = emitModule(**M, O);
  ASSERT_FALSE(Bad);
  EXPECT_NE(Bad.error().Message.find("IDXMAP_RED_ROW_LANES=2048 is out of "
                                     "range"),
            std::string::npos);
}

namespace {

/// PTX of a kernel `k(x, y)` that loads one \p Lanes-vector of \p Elem
/// (`half`, `float` or `i64`; a scalar when \p Lanes is 1) from x with cache
/// hint \p Hint (alignment \p Align) and stores it to y.
std::string hintedLoadPtx(const std::string &Elem, unsigned Lanes,
                          uint64_t Align, CacheHint Hint) {
  llvm::LLVMContext Ctx;
  llvm::Module M("hint", Ctx);
  TargetOptions Opts;
  auto TM = createNvptxTargetMachine(Opts);
  EXPECT_TRUE(TM);
  if (!TM)
    return "";
  configureModuleForTarget(M, **TM);
  llvm::Function *F = createKernel(
      M, "k",
      {{"x", KernelParamRole::Input, 16}, {"y", KernelParamRole::Output, 16}});
  llvm::IRBuilder<> B(F->empty() ? llvm::BasicBlock::Create(Ctx, "entry", F)
                                 : &F->getEntryBlock());
  llvm::Type *Ty = Elem == "half"    ? llvm::Type::getHalfTy(Ctx)
                   : Elem == "float" ? llvm::Type::getFloatTy(Ctx)
                                     : llvm::Type::getInt64Ty(Ctx);
  if (Lanes > 1)
    Ty = llvm::FixedVectorType::get(Ty, Lanes);
  llvm::Value *V = loadWithHint(B, Ty, F->getArg(0), Align, Hint);
  EXPECT_EQ(V->getType(), Ty);
  B.CreateAlignedStore(V, F->getArg(1), llvm::Align(Align));
  B.CreateRetVoid();
  auto Ptx = emitPtx(M, Opts, **TM);
  EXPECT_TRUE(Ptx) << (Ptx ? "" : Ptx.error().Message);
  return Ptx ? *Ptx : "";
}

} // namespace

TEST(NvptxTarget, EvictFirstLoadsOfFourEightAndSixteenBytes) {
  const std::string Hinted = "ld.global.nc.L1::evict_first.L2::cache_hint";
  struct Case {
    const char *Elem;
    unsigned Lanes;
    uint64_t Align;
    const char *Load; // the hinted load, and at least how many of them
    size_t Loads;
  } Cases[] = {{"float", 4, 16, ".v4.b32", 1}, // <4 x float>
               {"float", 8, 16, ".v4.b32", 2}, // 32 bytes: two loads
               {"i64", 1, 8, ".v2.b32", 1},
               {"float", 1, 4, ".b32", 1}};
  for (const Case &C : Cases) {
    std::string P =
        hintedLoadPtx(C.Elem, C.Lanes, C.Align, CacheHint::EvictFirst);
    EXPECT_NE(P.find("createpolicy.fractional.L2::evict_first.b64"),
              std::string::npos)
        << C.Elem << " x " << C.Lanes;
    EXPECT_GE(countOf(P, Hinted + C.Load), C.Loads)
        << C.Elem << " x " << C.Lanes << "\n"
        << P;
  }
}

TEST(NvptxTarget, EvictLastLoadsTakeTheirOwnPolicy) {
  // The same loads as evict_first, with the evict_last level on both the
  // L1 qualifier and the L2 policy, and never the other level.
  std::string P = hintedLoadPtx("float", 8, 16, CacheHint::EvictLast);
  EXPECT_NE(P.find("createpolicy.fractional.L2::evict_last.b64"),
            std::string::npos)
      << P;
  EXPECT_EQ(countOf(P, "ld.global.nc.L1::evict_last.L2::cache_hint.v4.b32"), 2u)
      << P;
  EXPECT_EQ(P.find("evict_first"), std::string::npos) << P;
}

TEST(NvptxTarget, LoadsTheHintCannotCoverStayPlain) {
  // 2-byte elements, 12-byte vectors, under-aligned vectors, and Normal.
  struct Case {
    const char *Elem;
    unsigned Lanes;
    uint64_t Align;
    CacheHint Hint;
  } Cases[] = {{"half", 1, 2, CacheHint::EvictFirst},
               {"float", 3, 4, CacheHint::EvictFirst},
               {"float", 4, 4, CacheHint::EvictFirst},
               {"float", 4, 16, CacheHint::Normal}};
  for (const Case &C : Cases) {
    std::string P = hintedLoadPtx(C.Elem, C.Lanes, C.Align, C.Hint);
    EXPECT_EQ(P.find("cache_hint"), std::string::npos)
        << C.Elem << " x " << C.Lanes << "\n"
        << P;
    if (C.Hint == CacheHint::Normal) {
      EXPECT_NE(P.find("ld.global.nc.v4.f32"), std::string::npos) << P;
    }
  }
}

namespace {

/// The lines of \p Ptx outside inline asm (between the back end's
/// `// begin inline asm` and `// end inline asm`), joined.
std::string outsideInlineAsm(const std::string &Ptx) {
  std::string Out, Line;
  bool In = false;
  for (char C : Ptx + "\n") {
    if (C != '\n') {
      Line += C;
      continue;
    }
    if (Line.find("// begin inline asm") != std::string::npos)
      In = true;
    else if (Line.find("// end inline asm") != std::string::npos)
      In = false;
    else if (!In)
      Out += Line + "\n";
    Line.clear();
  }
  return Out;
}

} // namespace

TEST(NvptxTarget, BackEndNegationsBecomeNotAndAdd) {
  // y = max(-2|x| - p, -|q|): the back end writes the first operand as
  // neg.s32 (2|x| + p); the second is the IR-level rewrite's min(q, -q)
  // with its negation in inline asm.
  llvm::LLVMContext Ctx;
  llvm::Module M("neg", Ctx);
  TargetOptions Opts;
  auto TM = createNvptxTargetMachine(Opts);
  ASSERT_TRUE(TM);
  configureModuleForTarget(M, **TM);
  llvm::Function *F = createKernel(M, "k",
                                   {{"x", KernelParamRole::Input, 16},
                                    {"p", KernelParamRole::Input, 16},
                                    {"q", KernelParamRole::Input, 16},
                                    {"y", KernelParamRole::Output, 16}});
  llvm::IRBuilder<> B(F->empty() ? llvm::BasicBlock::Create(Ctx, "entry", F)
                                 : &F->getEntryBlock());
  llvm::Type *I32 = B.getInt32Ty();
  auto Load = [&](unsigned Arg) {
    return B.CreateAlignedLoad(I32, F->getArg(Arg), llvm::Align(4));
  };
  llvm::Value *X = Load(0), *P = Load(1), *Q = Load(2);
  auto Abs = [&](llvm::Value *V) {
    return B.CreateBinaryIntrinsic(llvm::Intrinsic::abs, V, B.getFalse());
  };
  llvm::Value *V = B.CreateSub(B.CreateMul(Abs(X), B.getInt32(-2)), P);
  llvm::Value *W = B.CreateSub(B.getInt32(0), Abs(Q));
  B.CreateAlignedStore(B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, V, W),
                       F->getArg(3), llvm::Align(4));
  B.CreateRetVoid();
  auto Ptx = emitPtx(M, Opts, **TM);
  ASSERT_TRUE(Ptx) << Ptx.error().Message;
  const std::string Outside = outsideInlineAsm(*Ptx);
  EXPECT_EQ(Outside.find("neg.s"), std::string::npos) << *Ptx;
  size_t Not = Outside.find("not.b32");
  ASSERT_NE(Not, std::string::npos) << *Ptx;
  // The add of 1 right after the not, into the same register.
  size_t Reg = Outside.find('%', Not);
  std::string R = Outside.substr(Reg, Outside.find(',', Reg) - Reg);
  EXPECT_NE(Outside.find("add.s32 \t" + R + ", " + R + ", 1;", Not),
            std::string::npos)
      << Outside;
  // The inline asm's own negation stays.
  EXPECT_NE(Ptx->find("neg.s32"), std::string::npos) << *Ptx;
  EXPECT_NE(Outside.find("max.s32"), std::string::npos) << *Ptx;
}

TEST(NvptxTarget,
     BackEndLevelKeepsThePlansWithLibdeviceOnlyWhereEveryKernelAsks) {
  llvm::LLVMContext Ctx;
  auto M = buildSmokeKernel(Ctx, "tanh_precise_f32");
  ASSERT_TRUE(M);
  requestBackEndOptLevel(*M, 0);
  TargetOptions T;
  // Without libdevice: the level the emitters asked for.
  EXPECT_EQ(backEndOptLevel(*M, T, /*Libdevice=*/false), 0u);
  // libdevice's code gets O3 unless every kernel keeps its plan's level.
  EXPECT_EQ(backEndOptLevel(*M, T, /*Libdevice=*/true), 3u);
  for (llvm::Function &F : *M)
    if (!F.isDeclaration())
      F.addFnAttr(LibdeviceAtPlanLevelAttr);
  EXPECT_EQ(backEndOptLevel(*M, T, /*Libdevice=*/true), 0u);
  // LLVM's O3 pipeline, or no optimization, always takes O3; the
  // experiment's override wins over everything.
  TargetOptions O3 = T;
  O3.OptPipeline = TargetOptions::Pipeline::O3;
  EXPECT_EQ(backEndOptLevel(*M, O3, /*Libdevice=*/false), 3u);
  TargetOptions Plain = T;
  Plain.Optimize = false;
  EXPECT_EQ(backEndOptLevel(*M, Plain, /*Libdevice=*/false), 3u);
  TargetOptions Forced = T;
  Forced.BackEndOptLevel = 2;
  EXPECT_EQ(backEndOptLevel(*M, Forced, /*Libdevice=*/true), 2u);
}
