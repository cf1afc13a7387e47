//===- analysis/hlo/HloScatter.cpp - Scatter's window geometry ------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/HloScatter.h"

#include "SplitMix64.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace idxmap {
namespace {

bool contains(const std::vector<int64_t> &V, int64_t X) {
  return std::find(V.begin(), V.end(), X) != V.end();
}

} // namespace

bool isUpdateWindowDim(const ScatterDimensions &SD, int64_t UpdateDim) {
  return contains(SD.UpdateWindowDims, UpdateDim);
}

bool isOperandWindowDim(const ScatterDimensions &SD, int64_t OperandDim) {
  return !contains(SD.InsertedWindowDims, OperandDim) &&
         !contains(SD.InputBatchingDims, OperandDim);
}

bool isScatteredOperandDim(const ScatterDimensions &SD, int64_t OperandDim) {
  return contains(SD.ScatterDimsToOperandDims, OperandDim);
}

int64_t scatterWindowSize(const ScatterDimensions &SD, const Shape &Updates,
                          int64_t OperandDim) {
  if (!isOperandWindowDim(SD, OperandDim))
    return 1;
  // The window dims before OperandDim, counted, name its updates dim.
  size_t W = 0;
  for (int64_t E = 0; E < OperandDim; ++E)
    if (isOperandWindowDim(SD, E))
      ++W;
  return Updates.Dims[size_t(SD.UpdateWindowDims[W])];
}

int64_t scatterWindowElements(const ScatterDimensions &SD,
                              const Shape &Updates) {
  int64_t N = 1;
  for (int64_t D : SD.UpdateWindowDims)
    N *= Updates.Dims[size_t(D)];
  return N;
}

void fillUniqueScatterIndices(const HloInstruction &S, Literal &Indices,
                              uint64_t Seed) {
  const ScatterDimensions &SD = S.scatterDimensions();
  // n operands, the indices, n updates.
  const int64_t N = S.operandCount() / 2;
  const Shape &Op = S.operand(0)->shape();
  const Shape &Upd = S.operand(N + 1)->shape();
  const Shape &IS = Indices.shape();
  if (!IS.isArray() || SD.ScatterDimsToOperandDims.empty() ||
      IS.numElements() == 0)
    return;
  SplitMix64 Rng{Seed};
  const int64_t Ivd = SD.IndexVectorDim, Rank = IS.rank();
  const int64_t K = Ivd < Rank ? IS.Dims[size_t(Ivd)] : 1;
  const int64_t Vectors = IS.numElements() / K;
  // Distinct slots along the first scattered dim, shuffled.
  const int64_t D0 = SD.ScatterDimsToOperandDims.front();
  const int64_t W0 = std::max<int64_t>(1, scatterWindowSize(SD, Upd, D0));
  const int64_t Slots = std::min(Op.Dims[size_t(D0)] / W0, Vectors);
  std::vector<int64_t> Start0(size_t(Vectors), Op.Dims[size_t(D0)]);
  std::vector<int64_t> Perm(size_t(Op.Dims[size_t(D0)] / W0));
  std::iota(Perm.begin(), Perm.end(), 0);
  for (size_t I = Perm.size(); I > 1; --I)
    std::swap(Perm[I - 1], Perm[size_t(Rng.next() % I)]);
  for (int64_t V = 0; V < Slots; ++V)
    Start0[size_t(V)] = Perm[size_t(V)] * W0;
  // Element L's index vector (the row-major number over the dims other
  // than the index vector dim) and component.
  std::vector<int64_t> Idx(size_t(Rank), 0);
  for (int64_t L = 0; L < IS.numElements(); ++L) {
    int64_t Vec = 0, Comp = 0;
    for (int64_t D = 0; D < Rank; ++D) {
      if (D == Ivd)
        Comp = Idx[size_t(D)];
      else
        Vec = Vec * IS.Dims[size_t(D)] + Idx[size_t(D)];
    }
    if (Comp < int64_t(SD.ScatterDimsToOperandDims.size())) {
      const int64_t D = SD.ScatterDimsToOperandDims[size_t(Comp)];
      int64_t V = Start0[size_t(Vec)];
      if (Comp > 0) {
        const int64_t Fit = Op.Dims[size_t(D)] - scatterWindowSize(SD, Upd, D);
        V = Fit >= 0 ? int64_t(Rng.next() % uint64_t(Fit + 1)) : 0;
      }
      Indices.setInt(L, V);
    }
    for (int64_t D = Rank - 1; D >= 0; --D) {
      if (++Idx[size_t(D)] < IS.Dims[size_t(D)])
        break;
      Idx[size_t(D)] = 0;
    }
  }
}

HloOpcode scatterCombinerOp(const HloInstruction &S) {
  const HloComputation *F = S.toApply();
  const int64_t N = S.operandCount() / 2;
  if (!F || !F->root() || N < 1 || F->parameterCount() != 2 * N)
    return HloOpcode::Call;
  const HloInstruction *R = F->root();
  auto IsUpdate = [&](const HloInstruction *I, int64_t K) {
    return I->opcode() == HloOpcode::Parameter && I->parameterNumber() == N + K;
  };
  if (N > 1) {
    if (R->opcode() != HloOpcode::Tuple || R->operandCount() != N)
      return HloOpcode::Call;
    for (int64_t K = 0; K < N; ++K)
      if (!IsUpdate(R->operand(K), K))
        return HloOpcode::Call;
    return HloOpcode::Parameter;
  }
  if (IsUpdate(R, 0))
    return HloOpcode::Parameter;
  const HloInstruction *P0 = F->parameter(0), *P1 = F->parameter(1);
  if (R->operandCount() == 2 && ((R->operand(0) == P0 && R->operand(1) == P1) ||
                                 (R->operand(0) == P1 && R->operand(1) == P0)))
    return R->opcode();
  return HloOpcode::Call;
}

} // namespace idxmap
