//===- LowerKernels.cpp - Op kernels for lowering tests -------------------===//
//
// Part of idxmap. See LowerKernels.h.
//
//===----------------------------------------------------------------------===//

#include "LowerKernels.h"

#include "KernelBuilder.h"

#include "llvm/IR/IRBuilder.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <set>

using namespace llvm;

namespace idxmap {
namespace codegen {
namespace lowertest {

namespace {

using PT = PrimitiveType;

const std::vector<PT> &allTypes() {
  static const std::vector<PT> Types = {
      PT::Pred, PT::S8,  PT::S16, PT::S32, PT::S64,  PT::U8, PT::U16,
      PT::U32,  PT::U64, PT::F16, PT::BF16, PT::F32, PT::F64};
  return Types;
}

std::string ty(PT T) { return std::string(primitiveTypeName(T)); }

/// Parses a one-op module; null when the parser or the elementwise check
/// rejects it (an op/type pair that does not exist).
std::unique_ptr<HloModule> parseCase(const std::string &Text) {
  auto M = parseHloModule(Text, "case.hlo");
  if (!M)
    return nullptr;
  if (checkElementwise(*(*M)->entry()->root()))
    return nullptr;
  return std::move(*M);
}

void addCase(std::vector<OpCase> &Out, std::string Name,
             std::vector<PT> InTypes, PT OutType, const std::string &OpText,
             int64_t N) {
  std::string Text = "HloModule m\nENTRY e {\n";
  std::string Dims = "[" + std::to_string(N) + "]";
  for (size_t K = 0; K < InTypes.size(); ++K)
    Text += "  p" + std::to_string(K) + " = " + ty(InTypes[K]) + Dims +
            " parameter(" + std::to_string(K) + ")\n";
  Text += "  ROOT r = " + ty(OutType) + Dims + " " + OpText + "\n}\n";
  std::unique_ptr<HloModule> M = parseCase(Text);
  if (!M)
    return;
  OpCase C;
  C.Name = std::move(Name);
  C.Root = M->entry()->root();
  C.Module = std::move(M);
  C.InTypes = std::move(InTypes);
  C.OutType = OutType;
  Out.push_back(std::move(C));
}

std::string lower(std::string_view S) {
  std::string R(S);
  for (char &C : R)
    C = char(std::tolower(static_cast<unsigned char>(C)));
  return R;
}

/// Bit patterns of the special values of \p T (deduplicated, in order).
std::vector<uint64_t> specialBits(PT T) {
  Literal L(Shape(T, {1}));
  std::vector<uint64_t> Out;
  std::set<uint64_t> Seen;
  auto Add = [&](uint64_t Bits) {
    if (Seen.insert(Bits).second)
      Out.push_back(Bits);
  };
  if (T == PT::Pred) {
    Add(0);
    Add(1);
    return Out;
  }
  if (isFloatType(T)) {
    const double Inf = std::numeric_limits<double>::infinity();
    const double Vals[] = {0.0,     -0.0,         1.0,          -1.0,
                           0.5,     -0.5,         1.5,          2.5,
                           -2.5,    3.0,          7.25,         -7.75,
                           100.0,   1e-3,         1e10,         -1e10,
                           65504.0, 65520.0,      3e38,         2147483648.0,
                           -2147483648.0, -2147483904.0, 9.3e18, 1.9e19,
                           1e-40,   1e-6,         1e-39,        1e-310,
                           Inf,     -Inf,         std::nan("")};
    for (double V : Vals) {
      L.setDouble(0, V);
      Add(L.getBits(0));
    }
    switch (T) { // -NaN
    case PT::F16:
      Add(0xfe00);
      break;
    case PT::BF16:
      Add(0xffc0);
      break;
    case PT::F32:
      Add(0xffc00000u);
      break;
    default:
      Add(0xfff8000000000000ull);
      break;
    }
    return Out;
  }
  int Bits = bitWidth(T);
  int64_t Min = isSignedIntType(T) ? (Bits == 64 ? std::numeric_limits<int64_t>::min()
                                                 : -(int64_t(1) << (Bits - 1)))
                                   : 0;
  int64_t Max = isSignedIntType(T)
                    ? (Bits == 64 ? std::numeric_limits<int64_t>::max()
                                  : (int64_t(1) << (Bits - 1)) - 1)
                    : (Bits == 64 ? int64_t(-1) : (int64_t(1) << Bits) - 1);
  const int64_t Vals[] = {0,  1,   -1,  2,    -2,  3,   7,   -7,  8,
                          15, 16,  31,  32,   33,  63,  64,  65,  100,
                          -100, 127, 128, 255, 256, Min, Max, Min + 1, Max - 1};
  for (int64_t V : Vals) {
    L.setInt(0, V);
    Add(L.getBits(0));
  }
  return Out;
}

/// The random range of operand \p K of \p Op.
std::pair<double, double> randomRange(const OpCase &C, size_t K) {
  HloOpcode Op = C.Root->opcode();
  PT T = C.InTypes.empty() ? C.OutType : C.InTypes[K];
  if (T == PT::Pred)
    return {0, 1};
  bool Float = isFloatType(T);
  switch (Op) {
  case HloOpcode::ShiftLeft:
  case HloOpcode::ShiftRightLogical:
  case HloOpcode::ShiftRightArithmetic:
    if (K == 1)
      return {0, double(bitWidth(T) + 3)};
    break;
  case HloOpcode::Power:
    if (Float)
      return K == 0 ? std::make_pair(0.0, 4.0) : std::make_pair(-4.0, 4.0);
    return K == 0 ? std::make_pair(-5.0, 5.0) : std::make_pair(-2.0, 20.0);
  case HloOpcode::Log:
  case HloOpcode::Sqrt:
  case HloOpcode::Rsqrt:
    return {0.0, 100.0};
  case HloOpcode::Log1p:
    return {-0.9, 10.0};
  case HloOpcode::Exp:
  case HloOpcode::Expm1:
  case HloOpcode::Logistic:
  case HloOpcode::Tanh:
    return {-20.0, 20.0};
  case HloOpcode::Convert:
    return Float ? std::make_pair(-300.0, 300.0) : std::make_pair(-1e6, 1e6);
  default:
    break;
  }
  return Float ? std::make_pair(-10.0, 10.0) : std::make_pair(-1000.0, 1000.0);
}

} // namespace

std::vector<OpCase> allOpCases(int64_t N) {
  std::vector<OpCase> Out;
  for (unsigned O = unsigned(HloOpcode::Abs); O <= unsigned(HloOpcode::Clz);
       ++O) {
    auto Op = HloOpcode(O);
    for (PT T : allTypes()) {
      PT R = Op == HloOpcode::IsFinite ? PT::Pred : T;
      addCase(Out, std::string(opcodeName(Op)) + "." + ty(T), {T}, R,
              std::string(opcodeName(Op)) + "(p0)", N);
    }
  }
  for (unsigned O = unsigned(HloOpcode::Add);
       O <= unsigned(HloOpcode::ShiftRightArithmetic); ++O) {
    auto Op = HloOpcode(O);
    for (PT T : allTypes())
      addCase(Out, std::string(opcodeName(Op)) + "." + ty(T), {T, T}, T,
              std::string(opcodeName(Op)) + "(p0, p1)", N);
  }
  const ComparisonDirection Dirs[] = {
      ComparisonDirection::EQ, ComparisonDirection::NE,
      ComparisonDirection::LT, ComparisonDirection::LE,
      ComparisonDirection::GT, ComparisonDirection::GE};
  for (PT T : allTypes())
    for (ComparisonDirection D : Dirs) {
      std::string Dir(comparisonDirectionName(D));
      addCase(Out, "compare." + lower(Dir) + "." + ty(T), {T, T}, PT::Pred,
              "compare(p0, p1), direction=" + Dir, N);
      if (isFloatType(T))
        addCase(Out, "compare." + lower(Dir) + ".total." + ty(T), {T, T},
                PT::Pred,
                "compare(p0, p1), direction=" + Dir + ", type=TOTALORDER", N);
    }
  for (PT From : allTypes())
    for (PT To : allTypes())
      if (From != To)
        addCase(Out, "convert." + ty(From) + "." + ty(To), {From}, To,
                "convert(p0)", N);
  for (PT T : allTypes()) {
    addCase(Out, "select." + ty(T), {PT::Pred, T, T}, T, "select(p0, p1, p2)",
            N);
    addCase(Out, "clamp." + ty(T), {T, T, T}, T, "clamp(p0, p1, p2)", N);
    addCase(Out, "iota." + ty(T), {}, T, "iota(), iota_dimension=0", N);
  }
  // reduce-precision to narrower, equal and wider formats (f16, bf16,
  // e4m3-like, e5m2-like, no mantissa at all).
  const std::pair<int, int> Formats[] = {{5, 10}, {8, 7}, {4, 3},  {5, 2},
                                         {8, 0},  {3, 1}, {8, 23}, {11, 52}};
  for (PT T : allTypes())
    if (isFloatType(T))
      for (auto [E, M] : Formats)
        addCase(Out,
                "reduce-precision.e" + std::to_string(E) + "m" +
                    std::to_string(M) + "." + ty(T),
                {T}, T,
                "reduce-precision(p0), exponent_bits=" + std::to_string(E) +
                    ", mantissa_bits=" + std::to_string(M),
                N);
  return Out;
}

std::string kernelName(const OpCase &C) {
  std::string Name = "k_";
  for (char Ch : C.Name)
    Name += std::isalnum(static_cast<unsigned char>(Ch)) ? Ch : '_';
  return Name;
}

Function *addOpKernel(Module &M, const OpCase &C, const MathOptions &Math) {
  LLVMContext &Ctx = M.getContext();
  std::vector<KernelParamSpec> Specs;
  for (size_t K = 0; K < C.InTypes.size(); ++K)
    Specs.push_back({"in" + std::to_string(K), KernelParamRole::Input, 16,
                     nullptr});
  Specs.push_back({"out", KernelParamRole::Output, 16, nullptr});
  Specs.push_back({"n", KernelParamRole::Scalar, 0, nullptr});
  Function *F = createKernel(M, kernelName(C), Specs);
  setLaunchBounds(*F, {BlockSize, /*Exact=*/false, 0});

  IRBuilder<> B(&F->getEntryBlock());
  Value *Tid = B.CreateZExt(emitThreadId(B, GpuDim::X, BlockSize),
                            B.getInt64Ty());
  Value *Bid = B.CreateZExt(emitBlockId(B, GpuDim::X), B.getInt64Ty());
  Value *I = B.CreateAdd(B.CreateMul(Bid, B.getInt64(BlockSize)), Tid);
  Value *N = F->getArg(unsigned(C.InTypes.size() + 1));
  BasicBlock *Body = BasicBlock::Create(Ctx, "body", F);
  BasicBlock *Exit = BasicBlock::Create(Ctx, "exit", F);
  B.CreateCondBr(B.CreateICmpSLT(I, N), Body, Exit);

  B.SetInsertPoint(Body);
  std::vector<Value *> Ops;
  for (size_t K = 0; K < C.InTypes.size(); ++K) {
    Type *ST = storageType(Ctx, C.InTypes[K]);
    Value *P = B.CreateInBoundsGEP(ST, F->getArg(unsigned(K)), I);
    Ops.push_back(loadConvert(B, B.CreateLoad(ST, P), C.InTypes[K]));
  }
  if (C.Root->opcode() == HloOpcode::Iota)
    Ops.push_back(I);
  Value *V = emitElementwise(B, *C.Root, Ops, Math);
  Type *OT = storageType(Ctx, C.OutType);
  Value *Q = B.CreateInBoundsGEP(OT, F->getArg(unsigned(C.InTypes.size())), I);
  B.CreateStore(storeConvert(B, V, C.OutType), Q);
  B.CreateBr(Exit);
  B.SetInsertPoint(Exit);
  B.CreateRetVoid();
  return F;
}

bool isExact(const HloInstruction &I, const MathOptions &Math) {
  if (needsLibdevice(I, Math))
    return false;
  if (Math.Precise || I.operandCount() == 0)
    return true;
  switch (I.opcode()) {
  case HloOpcode::Exp:
  case HloOpcode::Tanh:
  case HloOpcode::Log:
  case HloOpcode::Log1p:
  case HloOpcode::Logistic:
    return I.operand(0)->shape().Type == PT::F64;
  // f32 results: div.full.f32 and sqrt.approx.f32 (2 and 1 ulp).
  case HloOpcode::Divide:
  case HloOpcode::Sqrt:
  case HloOpcode::Rsqrt:
    return I.shape().Type != PT::F32;
  default:
    return true;
  }
}

int64_t gridSize(const OpCase &C) {
  if (C.InTypes.empty())
    return 0;
  int64_t M = int64_t(specialBits(C.InTypes.back()).size());
  HloOpcode Op = C.Root->opcode();
  if (isBinaryElementwise(Op) || Op == HloOpcode::Compare ||
      Op == HloOpcode::Select || Op == HloOpcode::Clamp)
    return M * M;
  return M;
}

std::vector<Literal> testInputs(const OpCase &C, int64_t Count,
                                uint64_t Seed) {
  std::vector<Literal> Out;
  int64_t Grid = std::min(gridSize(C), Count);
  HloOpcode Op = C.Root->opcode();
  for (size_t K = 0; K < C.InTypes.size(); ++K) {
    PT T = C.InTypes[K];
    Literal L(Shape(T, {Count}));
    std::vector<uint64_t> S = specialBits(T);
    int64_t M = int64_t(S.size());
    for (int64_t I = 0; I < Grid; ++I) {
      int64_t Pick;
      if (Op == HloOpcode::Select)
        Pick = K == 0 ? I % M : K == 1 ? I / M : (I * 7 + 3);
      else if (Op == HloOpcode::Clamp)
        Pick = K == 0 ? I % M : K == 1 ? I / M : (I * 31 + 7);
      else if (C.InTypes.size() == 2)
        Pick = K == 0 ? I / M : I % M;
      else
        Pick = I;
      L.setBits(I, S[size_t(Pick % M)]);
    }
    if (Count > Grid) {
      Literal R(Shape(T, {Count - Grid}));
      auto [Lo, Hi] = randomRange(C, K);
      R.fillRandom(Seed * 7919 + K, Lo, Hi);
      for (int64_t I = Grid; I < Count; ++I)
        L.setBits(I, R.getBits(I - Grid));
    }
    Out.push_back(std::move(L));
  }
  return Out;
}

bool sameElement(const Literal &A, const Literal &B, int64_t K) {
  if (A.getBits(K) == B.getBits(K))
    return true;
  if (isFloatType(A.elementType()))
    return std::isnan(A.getDouble(K)) && std::isnan(B.getDouble(K));
  return false;
}

} // namespace lowertest
} // namespace codegen
} // namespace idxmap
