//===- ScanAnalysis.cpp - Prefix scans in HLO -----------------------------===//
//
// Part of idxmap. Recognizes the two forms of a prefix scan that JAX
// writes (Fusion.h, ScanInfo): the `scan` op (jnp.cumsum) and a
// reduce-window whose window is the prefix of one dim (lax.cummax,
// cumprod, cummin). XLA's optimized modules split a long scan into several
// reduce-windows and slices; those pieces are not prefix windows and are
// not recognized here (that is the peer's plan, not a form to prefer).
//
//===----------------------------------------------------------------------===//
#include "idxmap/Fusion.h"

#include <algorithm>
#include <set>

namespace idxmap {

namespace {

/// Combiners a scan kernel can run in any association order.
bool isScanCombiner(HloOpcode Op) {
  return Op == HloOpcode::Add || Op == HloOpcode::Maximum ||
         Op == HloOpcode::Minimum || Op == HloOpcode::Multiply;
}

/// The op of \p X when it combines parameters \p A and \p B of its
/// computation (either order) with a scan combiner.
std::optional<HloOpcode> combinerOf(const HloInstruction *X, int64_t A,
                                    int64_t B) {
  if (!X || !isScanCombiner(X->opcode()) || X->operandCount() != 2)
    return std::nullopt;
  const HloInstruction *L = X->operand(0), *R = X->operand(1);
  if (L->opcode() != HloOpcode::Parameter ||
      R->opcode() != HloOpcode::Parameter)
    return std::nullopt;
  int64_t PL = L->parameterNumber(), PR = R->parameterNumber();
  if (!((PL == A && PR == B) || (PL == B && PR == A)))
    return std::nullopt;
  return X->opcode();
}

/// Dims[0..2] of ScanInfo: \p S's physical dims around \p D.
std::array<int64_t, 3> physicalSplit(const Shape &S, int64_t D) {
  std::array<int64_t, 3> Out = {1, S.Dims[size_t(D)], 1};
  bool Minor = true; // walking minor to major
  for (int64_t P : S.layoutOrDefault()) {
    if (P == D)
      Minor = false;
    else
      Out[Minor ? 2 : 0] *= S.Dims[size_t(P)];
  }
  return Out;
}

/// Whether \p C, of 2 x \p K scalar parameters, returns a tuple of \p K
/// scalars (a variadic window's computation).
bool isVariadicCombiner(const HloComputation *C, int64_t K) {
  if (!C || C->parameterCount() != 2 * K || !C->root()->shape().isTuple() ||
      int64_t(C->root()->shape().TupleShapes.size()) != K)
    return false;
  for (const HloInstruction *P : C->parameters())
    if (!P->shape().isScalar())
      return false;
  return true;
}

std::optional<ScanInfo> classifyReduceWindow(const HloInstruction &I,
                                             std::string &Why) {
  const int64_t K = int64_t(I.operandCount()) / 2;
  const Shape &In = I.operand(0)->shape();
  const std::vector<WindowDim> &W = I.window();
  bool Same = K == 1 ? I.shape().isArray() && I.shape().sameDims(In)
                     : I.shape().isTuple() &&
                           int64_t(I.shape().TupleShapes.size()) == K;
  for (int64_t J = 0; Same && J < K; ++J)
    Same = I.operand(size_t(J))->shape().sameDims(In) &&
           (K == 1 || I.shape().TupleShapes[size_t(J)].sameDims(In));
  if (!Same || int64_t(W.size()) != In.rank()) {
    Why = "reduce-window '" + I.name() + "' changes the shape";
    return std::nullopt;
  }
  // The scanned dim: the one whose window is longer than 1, or, when all
  // are 1 (a scan of length 1), a dim of extent 1.
  int64_t Dim = -1;
  for (int64_t D = 0; D < In.rank(); ++D)
    if (W[size_t(D)].Size != 1) {
      if (Dim >= 0) {
        Why = "the window of '" + I.name() + "' spans two dims";
        return std::nullopt;
      }
      Dim = D;
    }
  if (Dim < 0)
    for (int64_t D = In.rank() - 1; D >= 0 && Dim < 0; --D)
      if (In.Dims[size_t(D)] == 1)
        Dim = D;
  if (Dim < 0) {
    Why = "the window of '" + I.name() + "' is one element";
    return std::nullopt;
  }
  int64_t N = In.Dims[size_t(Dim)];
  bool Reverse = false;
  for (int64_t D = 0; D < In.rank(); ++D) {
    const WindowDim &X = W[size_t(D)];
    bool Plain = X.Stride == 1 && X.WindowDilation == 1 &&
                 X.BaseDilation == 1 && !X.Reversal;
    bool Ok;
    if (D != Dim) {
      Ok = Plain && X.Size == 1 && X.PadLo == 0 && X.PadHi == 0;
    } else {
      Reverse = X.PadLo == 0 && X.PadHi == N - 1 && N > 1;
      Ok = Plain && X.Size == N &&
           ((X.PadLo == N - 1 && X.PadHi == 0) || Reverse);
    }
    if (!Ok) {
      Why = "the window of '" + I.name() + "' is not the prefix of dim " +
            std::to_string(Dim) + " (size " + std::to_string(N) +
            ", stride 1, padding " + std::to_string(N - 1) + "_0 or 0_" +
            std::to_string(N - 1) + ")";
      return std::nullopt;
    }
  }
  // to_apply(acc, x) of reduce-window.
  const HloComputation *C = I.toApply();
  auto Op = K > 1                           ? (isVariadicCombiner(C, K)
                                                   ? std::optional<HloOpcode>(HloOpcode::Call)
                                                   : std::nullopt)
            : C && C->parameterCount() == 2 ? combinerOf(C->root(), 0, 1)
                                            : std::nullopt;
  if (!Op && K > 1) {
    Why = "the computation of '" + I.name() + "' does not take " +
          std::to_string(2 * K) + " scalars to a tuple of " + std::to_string(K);
    return std::nullopt;
  }
  if (!Op) {
    Why = "the computation of '" + I.name() +
          "' is not add, maximum, minimum or multiply of its parameters";
    return std::nullopt;
  }
  ScanInfo S;
  S.Hero = &I;
  S.Input = I.operand(0);
  S.Init = I.operand(size_t(K));
  for (int64_t J = 0; J < K; ++J) {
    S.Inputs.push_back(I.operand(size_t(J)));
    S.Inits.push_back(I.operand(size_t(K + J)));
  }
  S.Dim = Dim;
  S.Length = N;
  S.Reverse = Reverse;
  S.Combiner = *Op;
  S.Type = K > 1 ? I.shape().TupleShapes[0].Type : I.shape().Type;
  S.Dims = physicalSplit(In, Dim);
  return S;
}

std::optional<ScanInfo> classifyScanOp(const HloInstruction &I,
                                       std::string &Why) {
  // One input, one carry, results (output, final carry).
  auto Carries = I.attribute("num_carries");
  const Shape &Sh = I.shape();
  if (I.operandCount() != 2 || !Carries || *Carries != "1" || !Sh.isTuple() ||
      Sh.TupleShapes.size() != 2) {
    Why = "scan '" + I.name() +
          "' is not of one input and one carry with an output";
    return std::nullopt;
  }
  if (auto A = I.attribute("is_associative"); A && *A == "false") {
    Why = "scan '" + I.name() + "' says is_associative=false";
    return std::nullopt;
  }
  // body(x, carry) = tuple(c, c), c = x op carry: the output is the new
  // carry (an inclusive scan).
  const HloComputation *C = I.toApply();
  const HloInstruction *Root = C ? C->root() : nullptr;
  std::optional<HloOpcode> Op;
  if (Root && Root->opcode() == HloOpcode::Tuple && Root->operandCount() == 2 &&
      Root->operand(0) == Root->operand(1))
    Op = combinerOf(Root->operand(0), 0, 1);
  if (!Op) {
    Why = "the body of scan '" + I.name() +
          "' is not one add, maximum, minimum or multiply of its input and "
          "carry returned as both output and carry";
    return std::nullopt;
  }
  const Shape &In = I.operand(0)->shape();
  ScanInfo S;
  S.Hero = &I;
  S.Input = I.operand(0);
  S.Init = I.operand(1);
  S.Inputs = {S.Input};
  S.Inits = {S.Init};
  S.Dim = I.dimensions().empty() ? 0 : I.dimensions().front();
  S.Length = In.Dims[size_t(S.Dim)];
  auto Rev = I.attribute("is_reverse");
  S.Reverse = Rev && *Rev == "true";
  S.Combiner = *Op;
  S.Type = Sh.TupleShapes[0].Type;
  S.Dims = physicalSplit(In, S.Dim);
  return S;
}

} // namespace

bool hasCombinerIdentity(HloOpcode Op, PrimitiveType T) {
  switch (Op) {
  case HloOpcode::Add:
  case HloOpcode::Multiply:
    return T != PrimitiveType::Pred;
  case HloOpcode::Maximum:
  case HloOpcode::Minimum:
    return true;
  case HloOpcode::And:
  case HloOpcode::Or:
  case HloOpcode::Xor:
    return !isFloatType(T);
  default:
    return false;
  }
}

std::string ScanInfo::str() const {
  std::string S =
      (variadic() ? "variadic (" + std::to_string(Inputs.size()) + " arrays)"
                  : std::string(opcodeName(Combiner))) +
      (Reverse ? " reversed" : "") + " along dim " + std::to_string(Dim) +
      " of " + Input->shape().str() + ": [";
  for (size_t K = 0; K < 3; ++K)
    S += (K ? ", " : "") + std::to_string(Dims[K]);
  return S + "]";
}

std::vector<const HloInstruction *> ScanInfo::prologueParameters() const {
  return operandClosure({Input}, {}, /*ParametersOnly=*/true);
}

std::vector<const HloInstruction *> ScanInfo::streamedParameters() const {
  std::vector<const HloInstruction *> Params = prologueParameters();
  Params.erase(std::remove_if(Params.begin(), Params.end(),
                              [&](const HloInstruction *P) {
                                return !P->shape().isArray() ||
                                       P->shape().Dims != Input->shape().Dims;
                              }),
               Params.end());
  return Params;
}

std::optional<ScanInfo> classifyScan(const HloInstruction &I,
                                     std::string *Why) {
  std::string W;
  std::optional<ScanInfo> S;
  if (I.opcode() == HloOpcode::ReduceWindow)
    S = classifyReduceWindow(I, W);
  else if (I.opcode() == HloOpcode::Scan)
    S = classifyScanOp(I, W);
  else
    W = "not a scan";
  if (!S && Why)
    *Why = std::move(W);
  return S;
}

} // namespace idxmap
namespace idxmap {

std::optional<ScanInfo> scanFusionHero(const HloComputation &C,
                                       std::string *Why) {
  auto Fail = [&](std::string W) -> std::optional<ScanInfo> {
    if (Why)
      *Why = std::move(W);
    return std::nullopt;
  };
  const HloInstruction *Hero = nullptr;
  for (const HloInstruction *I : C.instructions()) {
    HloOpcode Op = I->opcode();
    if (Op == HloOpcode::Reduce)
      return Fail("reduce '" + I->name() + "' beside a scan");
    if (Op != HloOpcode::Scan && Op != HloOpcode::ReduceWindow)
      continue;
    if (Hero)
      return Fail("two scans, '" + Hero->name() + "' and '" + I->name() + "'");
    Hero = I;
  }
  if (!Hero)
    return Fail("no scan");
  std::string W;
  std::optional<ScanInfo> S = classifyScan(*Hero, &W);
  if (!S)
    return Fail(W);
  // The values computed from the scan: its output (get-tuple-element 0 of
  // the op) and elementwise ops of the output's dims over it.
  const Shape &Out = S->Input->shape();
  std::set<const HloInstruction *> Epilogue;
  if (Hero->opcode() == HloOpcode::ReduceWindow && !S->variadic())
    Epilogue.insert(Hero);
  for (const HloInstruction *I : C.instructions()) {
    if (I == Hero)
      continue;
    bool Reads = false;
    for (const HloInstruction *X : I->operands())
      Reads = Reads || X == Hero || Epilogue.count(X);
    if (!Reads)
      continue;
    if (I->operand(0) == Hero && S->variadic()) {
      if (I->opcode() != HloOpcode::GetTupleElement)
        return Fail("'" + I->name() + "' reads the tuple of reduce-window '" +
                    Hero->name() +
                    "' whole; the scan kernel writes its "
                    "elements");
      Epilogue.insert(I);
      continue;
    }
    if (I->operand(0) == Hero && Hero->opcode() == HloOpcode::Scan) {
      if (I->opcode() != HloOpcode::GetTupleElement || I->tupleIndex() != 0)
        return Fail("'" + I->name() + "' reads the final carry of scan '" +
                    Hero->name() + "'; the scan kernel writes its output only");
      Epilogue.insert(I);
      continue;
    }
    if (I->opcode() == HloOpcode::Tuple && I == C.root())
      continue;
    if ((!isElementwise(I->opcode()) && I->opcode() != HloOpcode::Copy) ||
        !I->shape().isArray() || !I->shape().sameDims(Out))
      return Fail("'" + I->name() + "' (" +
                  std::string(opcodeName(I->opcode())) +
                  ") reads the scan's output; the scan kernel takes "
                  "elementwise ops after the scan only");
    Epilogue.insert(I);
  }
  const HloInstruction *Root = C.root();
  std::vector<const HloInstruction *> Roots;
  if (Root->opcode() == HloOpcode::Tuple)
    Roots.assign(Root->operands().begin(), Root->operands().end());
  else
    Roots.push_back(Root);
  for (const HloInstruction *R : Roots) {
    if (R == Hero && S->variadic())
      return Fail("the variadic reduce-window '" + Hero->name() +
                  "' is a root; the scan kernel writes its elements through "
                  "get-tuple-element");
    if (!Epilogue.count(R))
      return Fail("root '" + R->name() + "' is not computed from the scan '" +
                  Hero->name() + "'");
  }
  return S;
}

} // namespace idxmap
