//===- HeroAnalysis.cpp - Hero and emitter choice -------------------------===//
//
// Part of idxmap. The hero of a root is the op that decides the kernel's
// shape: a reduction or a tiled transpose reachable from the root through
// elementwise and layout-preserving ops, else the root itself.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Fusion.h"

#include <algorithm>
#include <set>

namespace idxmap {

std::string_view emitterKindName(EmitterKind K) {
  switch (K) {
  case EmitterKind::Loop:
    return "loop";
  case EmitterKind::Transpose:
    return "transpose";
  case EmitterKind::RowReduction:
    return "row reduction";
  case EmitterKind::MultiRowReduction:
    return "multi-row reduction";
  case EmitterKind::ColumnReduction:
    return "column reduction";
  case EmitterKind::FullReduction:
    return "full reduction";
  case EmitterKind::Concatenate:
    return "concatenate";
  case EmitterKind::InPlaceDynamicUpdateSlice:
    return "in-place dynamic-update-slice";
  case EmitterKind::InputSlices:
    return "input slices";
  case EmitterKind::Scatter:
    return "scatter";
  case EmitterKind::Scan:
    return "scan";
  }
  return "?";
}

static std::string dimsStr(const std::vector<int64_t> &V) {
  std::string S = "[";
  for (size_t I = 0; I < V.size(); ++I)
    S += (I ? ", " : "") + std::to_string(V[I]);
  return S + "]";
}

std::optional<ReductionInfo> classifyReduction(const HloInstruction &R,
                                               std::string *Why) {
  auto Fail = [&](std::string M) -> std::optional<ReductionInfo> {
    if (Why)
      *Why = std::move(M);
    return std::nullopt;
  };
  if (R.opcode() != HloOpcode::Reduce || R.operandCount() < 2)
    return Fail("not a reduce");
  const Shape &In = R.operand(0)->shape();
  std::vector<int64_t> M2m = In.layoutOrDefault();
  // Physical dims major to minor, size-1 dims dropped, same kinds merged.
  std::vector<std::pair<bool, int64_t>> Groups; // (reduced, size)
  for (auto It = M2m.rbegin(); It != M2m.rend(); ++It) {
    int64_t D = *It, Size = In.Dims[D];
    if (Size == 1)
      continue;
    bool Red = std::find(R.dimensions().begin(), R.dimensions().end(), D) !=
               R.dimensions().end();
    if (!Groups.empty() && Groups.back().first == Red)
      Groups.back().second *= Size;
    else
      Groups.push_back({Red, Size});
  }
  ReductionInfo Info;
  auto Pattern = [&] {
    std::string P;
    for (auto &G : Groups)
      P += G.first ? 'R' : 'K';
    return P;
  }();
  if (Pattern.find('R') == std::string::npos)
    return Fail("reduces only size-1 dimensions");
  if (Pattern == "R") {
    Info.Dims = {1, 1, Groups[0].second};
  } else if (Pattern == "KR") {
    Info.Dims = {1, Groups[0].second, Groups[1].second};
  } else if (Pattern == "RKR") {
    Info.Dims = {Groups[0].second, Groups[1].second, Groups[2].second};
  } else if (Pattern == "KRK") {
    Info.IsRow = false;
    Info.Dims = {Groups[0].second, Groups[1].second, Groups[2].second};
  } else if (Pattern == "RK") {
    Info.IsRow = false;
    Info.Dims = {1, Groups[0].second, Groups[1].second};
  } else {
    return Fail("reduced dimensions are not contiguous in the layout "
                "(pattern " + Pattern + ")");
  }
  return Info;
}

std::vector<int64_t> TransposeInfo::dimsAfterMinor() const {
  int64_t M = int64_t(Dims.size()) - 1;
  auto Pos = std::find(Permutation.begin(), Permutation.end(), M);
  return std::vector<int64_t>(Pos + 1, Permutation.end());
}

int64_t TransposeInfo::elementsAfterMinor() const {
  int64_t N = 1;
  for (int64_t D : dimsAfterMinor())
    N *= Dims[D];
  return N;
}

std::optional<TransposeInfo> classifyTranspose(const HloInstruction &T,
                                               std::string *Why) {
  auto Fail = [&](std::string M) -> std::optional<TransposeInfo> {
    if (Why)
      *Why = std::move(M);
    return std::nullopt;
  };
  if (T.opcode() != HloOpcode::Transpose)
    return Fail("not a transpose");
  const Shape &In = T.operand(0)->shape();
  if (!In.hasDefaultLayout() || !T.shape().hasDefaultLayout())
    return Fail("non-default layouts");
  // Drop size-1 input dims and renumber.
  std::vector<int64_t> NewIndex(In.rank(), -1), Dims;
  for (int64_t D = 0; D < In.rank(); ++D)
    if (In.Dims[D] != 1) {
      NewIndex[D] = Dims.size();
      Dims.push_back(In.Dims[D]);
    }
  std::vector<int64_t> Perm;
  for (int64_t P : T.dimensions())
    if (NewIndex[P] >= 0)
      Perm.push_back(NewIndex[P]);
  // Merge output-adjacent dims that are input-adjacent too.
  std::vector<std::vector<int64_t>> Runs;
  for (int64_t P : Perm) {
    if (!Runs.empty() && Runs.back().back() + 1 == P)
      Runs.back().push_back(P);
    else
      Runs.push_back({P});
  }
  // Runs in input order give the normalized input dims.
  std::vector<size_t> Order(Runs.size());
  for (size_t I = 0; I < Order.size(); ++I)
    Order[I] = I;
  std::sort(Order.begin(), Order.end(),
            [&](size_t A, size_t B) { return Runs[A][0] < Runs[B][0]; });
  TransposeInfo Info;
  std::vector<int64_t> RunToInput(Runs.size());
  for (size_t K = 0; K < Order.size(); ++K) {
    int64_t Size = 1;
    for (int64_t D : Runs[Order[K]])
      Size *= Dims[D];
    Info.Dims.push_back(Size);
    RunToInput[Order[K]] = K;
  }
  for (size_t R = 0; R < Runs.size(); ++R)
    Info.Permutation.push_back(RunToInput[R]);
  int64_t Rank = Info.Dims.size();
  if (Rank < 2 || Info.Permutation.back() == Rank - 1)
    return Fail("the minor dimension is not transposed");
  // The tiles run along the input's minor dim and along the output dims
  // that follow it in the output (contiguous there, flattened into the tile
  // rows: transposeTiling), so both must be long enough to fill them.
  int64_t InMinor = Info.Dims[Rank - 1];
  int64_t OutRows = Info.elementsAfterMinor();
  bool Large = (InMinor >= 16 && OutRows >= 16) ||
               (InMinor >= 8 && OutRows >= 8 && InMinor * OutRows >= 8192);
  if (!Large)
    return Fail("minor dimension " + std::to_string(InMinor) +
                " and the output's " + std::to_string(OutRows) +
                " elements after it are too small for tiles");
  return Info;
}

namespace {

/// Ops through which the hero search walks from a root. get-tuple-element
/// leads to a variadic reduce (argmax-style `reduce((x, iota), ...)` read
/// through its elements).
bool isTransparent(const HloInstruction &I) {
  HloOpcode Op = I.opcode();
  return isElementwise(Op) || Op == HloOpcode::Broadcast ||
         Op == HloOpcode::Bitcast || Op == HloOpcode::Reshape ||
         Op == HloOpcode::Copy || Op == HloOpcode::GetTupleElement;
}

bool isCandidate(const HloInstruction &I) {
  return I.opcode() == HloOpcode::Reduce ||
         (I.opcode() == HloOpcode::Transpose && classifyTranspose(I));
}

/// The walk goes on above reductions too (a softmax reads one reduce in the
/// input of another).
bool isWalked(const HloInstruction &I) {
  return isTransparent(I) || I.opcode() == HloOpcode::Reduce ||
         I.opcode() == HloOpcode::Transpose;
}

/// For each instruction of \p C (by index), whether the walk from it
/// reaches a reduce or a tiled transpose: instructions that do not are
/// never entered, which keeps the walks of many roots over one long
/// elementwise chain linear, and finds the same candidates in the same
/// order (a pruned subtree holds none, and the stack keeps the order of
/// the rest).
std::vector<bool> reachesCandidate(const HloComputation &C) {
  std::vector<bool> Reaches(C.instructions().size(), false);
  for (const HloInstruction *I : C.instructions()) {
    bool R = isCandidate(*I);
    if (!R && isWalked(*I))
      for (const HloInstruction *Op : I->operands())
        R = R || Reaches[size_t(Op->index())];
    Reaches[size_t(I->index())] = R;
  }
  return Reaches;
}

/// Reduces and transposes reachable from \p Root through transparent ops
/// (the walk stops at them), in the order first found.
void findCandidates(const HloInstruction *Root,
                    const std::vector<bool> &Reaches,
                    std::vector<const HloInstruction *> &Reduces,
                    std::vector<const HloInstruction *> &Transposes) {
  if (!Reaches[size_t(Root->index())])
    return;
  std::vector<const HloInstruction *> Work{Root};
  std::set<const HloInstruction *> Seen{Root};
  while (!Work.empty()) {
    const HloInstruction *I = Work.back();
    Work.pop_back();
    if (I->opcode() == HloOpcode::Reduce) {
      Reduces.push_back(I);
    } else if (I->opcode() == HloOpcode::Transpose && classifyTranspose(*I)) {
      Transposes.push_back(I);
    }
    if (!isWalked(*I))
      continue;
    for (const HloInstruction *Op : I->operands())
      if (Reaches[size_t(Op->index())] && Seen.insert(Op).second)
        Work.push_back(Op);
  }
}

bool sameReduction(const HloInstruction &A, const HloInstruction &B) {
  return A.operand(0)->shape().sameDims(B.operand(0)->shape()) &&
         A.dimensions() == B.dimensions();
}

} // namespace

std::optional<int64_t> inPlaceScatterParam(const HloComputation &C,
                                           std::string *Why) {
  auto Fail = [&](std::string W) -> std::optional<int64_t> {
    if (Why)
      *Why = std::move(W);
    return std::nullopt;
  };
  const HloInstruction *R = C.root();
  if (!R || R->opcode() != HloOpcode::Scatter)
    return Fail("the root is not a scatter");
  if (R->operandCount() != 3)
    return Fail("scatter '" + R->name() + "' scatters " +
                std::to_string((R->operandCount() - 1) / 2) +
                " arrays; the scatter emitter takes one");
  const HloInstruction *Op = R->operand(0);
  if (Op->opcode() != HloOpcode::Parameter)
    return Fail("the operand of scatter '" + R->name() +
                "' is not a parameter of the fusion (the kernel updates it "
                "in place)");
  if (!Op->shape().sameDims(R->shape()) || Op->shape().Type != R->shape().Type ||
      Op->shape().layoutOrDefault() != R->shape().layoutOrDefault())
    return Fail("parameter '" + Op->name() + "' differs from scatter '" +
                R->name() + "' in type or layout");
  for (const HloInstruction *U : Op->users())
    if (U != R)
      return Fail("parameter '" + Op->name() + "' is also read by '" +
                  U->name() + "'");
  if (R->operand(1) == Op || R->operand(2) == Op)
    return Fail("scatter '" + R->name() + "' reads its operand '" +
                Op->name() + "' again");
  return Op->parameterNumber();
}

bool isInputSlicesFusion(const HloComputation &C) {
  const HloInstruction *Root = C.root();
  if (!Root || Root->opcode() != HloOpcode::Tuple || Root->operandCount() < 2)
    return false;
  for (const HloInstruction *R : Root->operands())
    if (R->opcode() != HloOpcode::Slice)
      return false;
  const Shape &In = Root->operand(0)->operand(0)->shape();
  for (const HloInstruction *R : Root->operands()) {
    if (!R->operand(0)->shape().isArray() ||
        !R->operand(0)->shape().sameDims(In))
      return false;
    for (int64_t S : R->sliceStrides())
      if (S != 1)
        return false;
  }
  return true;
}

const HloInstruction *concatenateHero(const HloComputation &C) {
  const HloInstruction *Root = C.root();
  if (!Root || Root->opcode() == HloOpcode::Tuple || !Root->shape().isArray())
    return nullptr;
  const HloInstruction *X = nullptr;
  for (const HloInstruction *I : C.instructions())
    if (I->opcode() == HloOpcode::Concatenate) {
      if (X)
        return nullptr;
      X = I;
    }
  if (!X || X->operandCount() > 16 || !X->shape().sameDims(Root->shape()))
    return nullptr;
  // Every value computed from the concatenation is elementwise, of the
  // output's dims: each reads the concatenation at the output's index.
  std::set<const HloInstruction *> Uses{X};
  for (const HloInstruction *I : C.instructions()) {
    if (I == X)
      continue;
    bool Reads = false;
    for (const HloInstruction *Op : I->operands())
      Reads = Reads || Uses.count(Op);
    if (!Reads)
      continue;
    if (!isElementwise(I->opcode()) || !I->shape().sameDims(Root->shape()))
      return nullptr;
    Uses.insert(I);
  }
  return Uses.count(Root) ? X : nullptr;
}

std::optional<std::vector<int64_t>>
inPlaceUpdatedParams(const HloComputation &C, std::string *Why) {
  auto Fail = [&](std::string W) -> std::optional<std::vector<int64_t>> {
    if (Why)
      *Why = std::move(W);
    return std::nullopt;
  };
  const HloInstruction *Root = C.root();
  if (!Root)
    return Fail("no root");
  std::vector<const HloInstruction *> Roots;
  if (Root->opcode() == HloOpcode::Tuple)
    Roots.assign(Root->operands().begin(), Root->operands().end());
  else
    Roots.push_back(Root);
  if (Roots.empty())
    return Fail("no outputs");
  std::vector<int64_t> Params;
  for (const HloInstruction *R : Roots) {
    if (R->opcode() != HloOpcode::DynamicUpdateSlice)
      return Fail("root '" + R->name() + "' is not a dynamic-update-slice");
    const HloInstruction *Op = R->operand(0);
    if (Op->opcode() != HloOpcode::Parameter)
      return Fail("the operand of '" + R->name() + "' is not a parameter");
    if (!Op->shape().sameDims(R->shape()) ||
        Op->shape().layoutOrDefault() != R->shape().layoutOrDefault() ||
        Op->shape().Type != R->shape().Type)
      return Fail("parameter '" + Op->name() + "' differs from '" + R->name() +
                  "' in type or layout");
    for (const HloInstruction *U : Op->users())
      if (U != R)
        return Fail("parameter '" + Op->name() + "' is also read by '" +
                    U->name() + "'");
    for (int64_t K = 1; K < R->operandCount(); ++K)
      if (R->operand(K) == Op)
        return Fail("'" + R->name() + "' reads its operand '" + Op->name() +
                    "' again");
    if (std::find(Params.begin(), Params.end(), Op->parameterNumber()) !=
        Params.end())
      return Fail("two roots update parameter '" + Op->name() + "'");
    if (!R->operand(1)->shape().sameDims(Roots.front()->operand(1)->shape()))
      return Fail("the updates of '" + Roots.front()->name() + "' and '" +
                  R->name() + "' differ in shape");
    Params.push_back(Op->parameterNumber());
  }
  return Params;
}

FusionAnalysis analyzeComputation(const HloComputation &C) {
  FusionAnalysis A;
  A.Computation = &C;
  const HloInstruction *Root = C.root();
  if (Root->opcode() == HloOpcode::Tuple)
    A.Roots.assign(Root->operands().begin(), Root->operands().end());
  else
    A.Roots.push_back(Root);
  if (A.Roots.empty()) {
    A.Reason = "no outputs (the root is an empty tuple)";
    return A;
  }

  if (auto Params = inPlaceUpdatedParams(C)) {
    A.Heroes = A.Roots;
    A.Kind = EmitterKind::InPlaceDynamicUpdateSlice;
    A.UpdatedParams = *Params;
    const HloInstruction *U = A.Roots.front()->operand(1);
    A.Reason = std::to_string(A.Roots.size()) +
               " dynamic-update-slice root" + (A.Roots.size() > 1 ? "s" : "") +
               " of parameters nothing else reads: written in place, one "
               "thread per update element run (update " +
               U->shape().str() + ")";
    return A;
  }

  if (auto Param = inPlaceScatterParam(C)) {
    A.Heroes = A.Roots;
    A.Kind = EmitterKind::Scatter;
    A.UpdatedParams = {*Param};
    A.Reason = "scatter '" + Root->name() + "' of a parameter nothing else "
               "reads: each update element combined in place";
    return A;
  }
  if (isInputSlicesFusion(C)) {
    A.Heroes = A.Roots;
    A.Kind = EmitterKind::InputSlices;
    A.Reason = std::to_string(A.Roots.size()) + " slices of one shape " +
               A.Roots.front()->operand(0)->shape().str() +
               ": the input walked once, each element stored into the "
               "slices that hold it";
    return A;
  }

  if (auto S = scanFusionHero(C)) {
    A.Heroes.assign(A.Roots.size(), S->Hero);
    A.Kind = EmitterKind::Scan;
    A.Scan = S;
    A.Reason = std::string(opcodeName(S->Hero->opcode())) + " '" +
               S->Hero->name() + "' is a prefix scan: " + S->str() +
               (S->isRow() ? " (the minor dim: a row scan)"
                           : " (a non-minor dim: a column scan)");
    return A;
  }

  std::vector<const HloInstruction *> Reduces, Transposes;
  std::set<const HloInstruction *> Found;
  std::vector<bool> Reaches = reachesCandidate(C);
  for (const HloInstruction *R : A.Roots) {
    std::vector<const HloInstruction *> Rd, Tr;
    findCandidates(R, Reaches, Rd, Tr);
    for (auto *X : Rd)
      if (Found.insert(X).second)
        Reduces.push_back(X);
    for (auto *X : Tr)
      if (Found.insert(X).second)
        Transposes.push_back(X);
    A.Heroes.push_back(!Rd.empty() ? Rd.front()
                                   : (!Tr.empty() ? Tr.front() : R));
  }

  if (!Reduces.empty()) {
    const HloInstruction *First = Reduces.front();
    std::string Why;
    auto Info = classifyReduction(*First, &Why);
    for (const HloInstruction *R : Reduces)
      if (Info && !sameReduction(*First, *R)) {
        Info.reset();
        Why = "reductions '" + First->name() + "' and '" + R->name() +
              "' are not compatible";
      }
    if (!Info) {
      A.Kind = EmitterKind::Loop;
      A.Reason = "reduce '" + First->name() + "': " + Why +
                 "; falling back to the loop emitter";
      return A;
    }
    // Side outputs must be computable per element of the reduce input.
    int64_t InN = First->operand(0)->shape().numElements();
    for (size_t K = 0; K < A.Roots.size(); ++K)
      if (A.Heroes[K]->opcode() != HloOpcode::Reduce &&
          A.Roots[K]->shape().numElements() != InN) {
        A.Kind = EmitterKind::Loop;
        A.Reason = "side output '" + A.Roots[K]->name() +
                   "' does not have the reduce input's element count";
        return A;
      }
    A.Reduction = Info;
    int64_t Bytes = byteWidth(First->operand(0)->shape().Type);
    int64_t Vec = std::max<int64_t>(1, 16 / std::max<int64_t>(Bytes, 1));
    std::vector<int64_t> D(Info->Dims.begin(), Info->Dims.end());
    if (Info->Dims[0] == 1 && Info->Dims[1] == 1 && Info->IsRow) {
      A.Kind = EmitterKind::FullReduction;
      A.Reason = "reduce '" + First->name() + "' reduces everything: full "
                 "reduction of " + std::to_string(Info->Dims[2]) + " elements";
    } else if (Info->IsRow) {
      bool Short = Info->Dims[2] < 32 * Vec;
      A.Kind = Short ? EmitterKind::MultiRowReduction
                     : EmitterKind::RowReduction;
      A.Reason = "reduce '" + First->name() +
                 "' reduces the minor dimension: row reduction " + dimsStr(D) +
                 (Short ? " (rows shorter than one warp's " +
                              std::to_string(32 * Vec) +
                              "-element load share a warp)"
                        : "");
    } else {
      A.Kind = EmitterKind::ColumnReduction;
      A.Reason = "reduce '" + First->name() +
                 "' keeps the minor dimension: column reduction " + dimsStr(D);
    }
    if (Reduces.size() > 1)
      A.Reason += "; " + std::to_string(Reduces.size()) +
                  " compatible reductions in one kernel";
    return A;
  }

  if (Transposes.size() == 1) {
    const HloInstruction *T = Transposes.front();
    A.Transpose = classifyTranspose(*T);
    A.Kind = EmitterKind::Transpose;
    A.Reason = "transpose '" + T->name() + "' moves the minor dimension: " +
               dimsStr(A.Transpose->Dims) + " permuted by " +
               dimsStr(A.Transpose->Permutation) + ", shared-memory tiles";
    return A;
  }
  if (Transposes.size() > 1) {
    A.Reason = std::to_string(Transposes.size()) +
               " tiled transposes reachable from the roots; ";
  }
  if (const HloInstruction *X = concatenateHero(C)) {
    A.Kind = EmitterKind::Concatenate;
    A.Heroes = {X};
    A.Reason += "'" + X->name() + "' concatenates " +
                std::to_string(X->operandCount()) + " operands" +
                (X == Root ? "" : " (an elementwise epilogue to the root)") +
                ": each operand's elements read once";
    return A;
  }
  A.Kind = EmitterKind::Loop;
  A.Reason += "no reduction or tiled transpose: one thread per output element "
              "run (root '" + A.Roots.front()->name() + "' is " +
              std::string(opcodeName(A.Roots.front()->opcode())) + ")";
  return A;
}

FusionAnalysis analyzeFusion(const HloInstruction &F) {
  if (F.opcode() == HloOpcode::Fusion && F.fusedComputation())
    return analyzeComputation(*F.fusedComputation());
  return analyzeComputation(*F.parent());
}

const HloInstruction *transposeHero(const FusionAnalysis &A) {
  const HloInstruction *Hero = nullptr;
  for (const HloInstruction *H : A.Heroes)
    if (H->opcode() == HloOpcode::Transpose)
      Hero = H;
  return Hero;
}

} // namespace idxmap
