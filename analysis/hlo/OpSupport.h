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
#include "idxmap/HloIndexing.h"
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

/// An UNDEFINED map (XLA's `unknown indexing`).
inline OperandMap undefinedMap() { return {IndexingMap::undefined(), {}}; }

/// One UNDEFINED map per operand of \p I: an op or instance the indexing
/// does not model.
inline InstructionIndexing undefinedFor(const HloInstruction &I) {
  InstructionIndexing R;
  for (int64_t K = 0; K < I.operandCount(); ++K)
    R.Operands.push_back({undefinedMap()});
  return R;
}

/// An input-to-output result: the one output's single map.
inline InstructionIndexing singleMap(OperandMap M) {
  InstructionIndexing R;
  R.Operands.push_back({std::move(M)});
  return R;
}

} // namespace hlo
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_HLO_OPSUPPORT_H
