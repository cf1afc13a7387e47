//===- fuzz_fusion_indexing.cpp - libFuzzer target: indexing vs interpreter
//===//
//
// Part of idxmap. An HLO module with fusions (small shapes: at most 256
// elements a shape, 64 instructions). For every fusion, every output (array
// root or tuple element) and every fused parameter, the maps
// computeGroupedIndexing gives must be sound against the reference
// interpreter: perturbing one parameter element changes only output elements
// whose maps name it (support/HloDeps.h). The fusion instruction's own
// output-to-input indexing must equal its computation's grouped indexing.
// Modules the interpreter cannot run are skipped.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "support/BruteForce.h"
#include "support/HloDeps.h"

#include "idxmap/HloIndexing.h"
#include "idxmap/Print.h"

using namespace idxmap;
using namespace idxmap::fuzzing;
using namespace idxmap::testing;

namespace {
/// Outputs of a fused computation: the elements of a flat tuple root, or 1.
/// 0 for roots the check does not cover (nested tuples).
int64_t numOutputs(const HloComputation &C) {
  const Shape &S = C.root()->shape();
  if (!S.isTuple())
    return 1;
  for (const Shape &E : S.TupleShapes)
    if (!E.isArray())
      return 0;
  return int64_t(S.TupleShapes.size());
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Text = asText(Data, Size);
  auto M = parseHloModule(Text, "fuzz.hlo");
  if (!M || !isSmallModule(**M, 256, 64))
    return 0;
  Context Ctx;
  for (const HloInstruction *Fusion : (*M)->fusions()) {
    const HloComputation *C = Fusion->fusedComputation();
    if (!C)
      continue;
    for (int64_t Out = 0, E = numOutputs(*C); Out < E; ++Out) {
      GroupedIndexing G = computeGroupedIndexing(Ctx, *C, nullptr, Out);
      InstructionIndexing FI = computeOutputToInputIndexing(Ctx, *Fusion, Out);
      for (int64_t P = 0; P < C->parameterCount(); ++P) {
        auto It = G.find(C->parameter(P));
        std::vector<OperandMap> Maps =
            It == G.end() ? std::vector<OperandMap>{} : It->second;
        if (size_t(P) >= FI.Operands.size() ||
            !(FI.Operands[size_t(P)] == Maps))
          fuzzFailure(Fusion->name() + ": the fusion's indexing of operand " +
                          std::to_string(P) +
                          " differs from its computation's grouped indexing",
                      Text);
        bool Enumerable = true;
        for (const OperandMap &OM : Maps)
          if (!OM.Map.isUndefined() && !OM.Map.isKnownEmpty() &&
              !boxSize(OM.Map, uint64_t(1) << 16))
            Enumerable = false;
        if (!Enumerable)
          continue;
        DepCheckResult R = checkDependencies(*C, P, Maps, /*Exact=*/false,
                                             uint64_t(P) * 7919 + 1, Out);
        if (R.Ok || R.Undefined ||
            R.Message.rfind("evaluation failed", 0) == 0 ||
            R.Message.rfind("cannot enumerate", 0) == 0)
          continue;
        std::string Listing;
        for (const OperandMap &OM : Maps)
          Listing += "  " + printMap(OM.Map) + "\n";
        fuzzFailure(Fusion->name() + ", output " + std::to_string(Out) +
                        ", parameter " + std::to_string(P) + ": " + R.Message +
                        "\nmaps:\n" + Listing,
                    Text);
      }
    }
  }
  return 0;
}
