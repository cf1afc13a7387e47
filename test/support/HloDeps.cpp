//===- test/support/HloDeps.cpp - Indexing vs. actual dependencies --------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "HloDeps.h"
#include "support/BruteForce.h"

#include "idxmap/HloInterpreter.h"
#include "idxmap/Print.h"

#include <cmath>
#include <set>
#include <sstream>

namespace idxmap::testing {

namespace {

std::string formatIndex(const Shape &S, int64_t Linear) {
  std::vector<int64_t> Idx(S.Dims.size());
  for (size_t I = S.Dims.size(); I-- > 0;) {
    Idx[I] = Linear % S.Dims[I];
    Linear /= S.Dims[I];
  }
  std::string R = "[";
  for (size_t I = 0; I < Idx.size(); ++I)
    R += (I ? "," : "") + std::to_string(Idx[I]);
  return R + "]";
}

int64_t linear(const Shape &S, const std::vector<int64_t> &Idx, size_t Offset,
               size_t N) {
  int64_t L = 0;
  for (size_t I = 0; I < N; ++I) {
    if (Idx[Offset + I] < 0 || Idx[Offset + I] >= S.Dims[I])
      return -1;
    L = L * S.Dims[I] + Idx[Offset + I];
  }
  return L;
}

bool sameValue(const Literal &A, const Literal &B, int64_t I) {
  return A.getBits(I) == B.getBits(I);
}

/// A value different from element \p I of \p L.
void perturb(Literal &L, int64_t I) {
  PrimitiveType T = L.elementType();
  if (T == PrimitiveType::Pred)
    L.setInt(I, L.getInt(I) ? 0 : 1);
  else if (isFloatType(T))
    L.setDouble(I, L.getDouble(I) + 0.75);
  else
    L.setInt(I, L.getInt(I) + 1);
}

} // namespace

const HloInstruction &opUnderTest(const HloComputation &C) {
  const HloInstruction *Root = C.root();
  if (Root->opcode() != HloOpcode::Tuple || Root->operandCount() == 0)
    return *Root;
  const HloInstruction *Op = nullptr;
  for (int64_t K = 0; K < Root->operandCount(); ++K) {
    const HloInstruction *G = Root->operand(K);
    if (G->opcode() != HloOpcode::GetTupleElement || G->tupleIndex() != K ||
        (Op && G->operand(0) != Op))
      return *Root;
    Op = G->operand(0);
  }
  return *Op;
}

DepCheckResult checkDependencies(const HloComputation &C, int64_t Param,
                                 const std::vector<OperandMap> &Maps,
                                 bool Exact, uint64_t Seed, int64_t OutputId) {
  DepCheckResult R;
  std::vector<Literal> Args;
  for (int64_t P = 0; P < C.parameterCount(); ++P) {
    Literal L(C.parameter(P)->shape());
    L.fillRandom(Seed + 31 * P, -2.0, 2.0);
    Args.push_back(std::move(L));
  }
  auto Base = evaluate(C, Args);
  if (!Base) {
    R.Ok = false;
    R.Message = "evaluation failed: " + Base.error().str();
    return R;
  }
  const Literal &Out = (*Base)[OutputId];
  const Shape &OutShape = Out.shape();
  const Shape &InShape = C.parameter(Param)->shape();
  int64_t NOut = Out.elementCount(), NIn = Args[Param].elementCount();

  // Image of the maps: for each output element, the input elements named.
  std::vector<std::set<int64_t>> Img(NOut);
  for (const OperandMap &OM : Maps) {
    if (OM.Map.isUndefined()) {
      R.Undefined = true;
      return R;
    }
    CheckStatus St;
    BruteForceOptions BO;
    BO.MaxPoints = 1 << 22;
    for (const Point &P : enumerateDomain(OM.Map, &St, BO)) {
      int64_t O = linear(OutShape, P, 0, OutShape.Dims.size());
      auto V = OM.Map.evaluate(P);
      if (O < 0 || !V) {
        R.Ok = false;
        R.Message = "map " + printMap(OM.Map) +
                    " has a domain point outside the output shape";
        return R;
      }
      int64_t In = linear(InShape, *V, 0, InShape.Dims.size());
      if (In < 0) {
        R.Ok = false;
        R.Message = "map " + printMap(OM.Map) + " names an index outside " +
                    InShape.str() + " at output " + formatIndex(OutShape, O);
        return R;
      }
      Img[O].insert(In);
    }
    if (St != CheckStatus::Ok) {
      R.Ok = false;
      R.Message = std::string("cannot enumerate map: ") + checkStatusName(St);
      return R;
    }
  }

  // Actual dependencies by perturbation.
  std::vector<std::set<int64_t>> Dep(NOut);
  for (int64_t E = 0; E < NIn; ++E) {
    std::vector<Literal> A = Args;
    perturb(A[Param], E);
    auto Res = evaluate(C, A);
    if (!Res) {
      R.Ok = false;
      R.Message = "evaluation failed: " + Res.error().str();
      return R;
    }
    const Literal &O2 = (*Res)[OutputId];
    for (int64_t O = 0; O < NOut; ++O)
      if (!sameValue(Out, O2, O))
        Dep[O].insert(E);
  }

  for (int64_t O = 0; O < NOut; ++O) {
    for (int64_t E : Dep[O]) {
      ++R.Pairs;
      if (!Img[O].count(E)) {
        R.Ok = false;
        R.Message = "output " + formatIndex(OutShape, O) +
                    " depends on input " + formatIndex(InShape, E) +
                    ", which no map names";
        return R;
      }
    }
    if (!Exact)
      continue;
    for (int64_t E : Img[O])
      if (!Dep[O].count(E)) {
        R.Ok = false;
        R.Message = "a map names input " + formatIndex(InShape, E) +
                    " for output " + formatIndex(OutShape, O) +
                    ", which does not affect it";
        return R;
      }
  }
  return R;
}

} // namespace idxmap::testing
