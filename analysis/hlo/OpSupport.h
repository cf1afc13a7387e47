//===- analysis/hlo/OpSupport.h - Helpers of the per-op files -*- C++ -*-===//
//
// Part of idxmap. Small helpers that the per-op shape rules
// (HloVerifier*.cpp) and indexing files (OpIndexing*.cpp) share. Internal
// to the analysis library.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_HLO_OPSUPPORT_H
#define IDXMAP_ANALYSIS_HLO_OPSUPPORT_H

#include "idxmap/Hlo.h"
#include "idxmap/IndexingMap.h"

#include <string>
#include <vector>

namespace idxmap {
namespace hlo {

/// `{1,0,2}`: a dimension list as the shape rules' messages print it.
inline std::string dimList(const std::vector<int64_t> &V) {
  std::string Out = "{";
  for (size_t I = 0; I < V.size(); ++I)
    Out += (I ? "," : "") + std::to_string(V[I]);
  return Out + "}";
}

/// One dimension variable per dimension of \p S, `d_k in [0, size_k - 1]`.
inline std::vector<Variable> dimVars(const Shape &S) {
  std::vector<Variable> Vs;
  for (int64_t D : S.Dims)
    Vs.push_back({"", {0, D - 1}});
  return Vs;
}

} // namespace hlo
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_HLO_OPSUPPORT_H
