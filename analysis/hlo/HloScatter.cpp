//===- analysis/hlo/HloScatter.cpp - Scatter's window geometry ------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/HloScatter.h"

#include <algorithm>

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

} // namespace idxmap
