//===- FusionIndexing.cpp - Indexing through a fused computation ----------===//
//
// Part of idxmap. Walks a computation users-first from a start instruction,
// composing each instruction's maps with its operands' output-to-input maps.
// Runtime-variable bindings follow the composed map's symbol order
// ([second's runtime vars, first's runtime vars]), so a binding always names
// the HLO value of its own variable.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Compose.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Simplify.h"

#include <algorithm>

namespace idxmap {

namespace {

/// compose(First, Second) with bindings: Second's bindings (re-rooted at
/// First's dims) come first, then First's, matching compose's rt order.
OperandMap composeOperandMaps(const OperandMap &First,
                              const OperandMap &Second) {
  OperandMap R;
  R.Map = compose(First.Map, Second.Map);
  if (R.Map.isUndefined())
    return R;
  for (const RuntimeBinding &B : Second.Bindings) {
    IndexingMap BM = compose(First.Map, B.Map);
    simplify(BM);
    BM.removeUnusedSymbols();
    R.Bindings.push_back({B.Source, std::move(BM)});
  }
  R.Bindings.insert(R.Bindings.end(), First.Bindings.begin(),
                    First.Bindings.end());
  simplify(R.Map);
  unsigned NumRange = R.Map.numRangeVars();
  std::vector<bool> Removed = R.Map.removeUnusedSymbols();
  if (R.Map.isKnownEmpty()) {
    R.Bindings.clear();
    return R;
  }
  std::vector<RuntimeBinding> Kept;
  for (size_t K = 0; K < R.Bindings.size(); ++K)
    if (NumRange + K >= Removed.size() || !Removed[NumRange + K])
      Kept.push_back(std::move(R.Bindings[K]));
  R.Bindings = std::move(Kept);
  return R;
}

void addUnique(std::vector<OperandMap> &Set, OperandMap M) {
  for (const OperandMap &X : Set)
    if (X == M)
      return;
  Set.push_back(std::move(M));
}

} // namespace

GroupedIndexing computeGroupedIndexing(Context &Ctx,
                                       const HloComputation &Computation,
                                       const HloInstruction *Start,
                                       int64_t OutputId) {
  GroupedIndexing Result;
  if (!Start)
    Start = Computation.root();
  if (!Start)
    return Result;
  // Output ids asked of multi-output instructions (a tuple start, or a
  // variadic reduce read through get-tuple-element).
  std::unordered_map<const HloInstruction *, int64_t> OutIds;
  const Shape &S = Start->shape();
  const Shape &StartShape =
      S.isTuple() && OutputId < int64_t(S.TupleShapes.size())
          ? S.TupleShapes[OutputId]
          : S;
  OutIds[Start] = OutputId;
  Result[Start].push_back(
      {IndexingMap::identity(Ctx, StartShape.isTuple() ? std::vector<int64_t>{}
                                                       : StartShape.Dims),
       {}});

  const std::vector<HloInstruction *> &Instrs = Computation.instructions();
  for (auto It = Instrs.rbegin(); It != Instrs.rend(); ++It) {
    const HloInstruction *I = *It;
    auto Found = Result.find(I);
    if (Found == Result.end())
      continue;
    int64_t OutId = OutIds.count(I) ? OutIds[I] : 0;
    InstructionIndexing Ops = computeOutputToInputIndexing(Ctx, *I, OutId);
    // Copy: Result may rehash while operands are inserted.
    std::vector<OperandMap> Maps = Found->second;
    for (size_t K = 0; K < Ops.Operands.size(); ++K) {
      const HloInstruction *Operand = I->operand(K);
      if (I->opcode() == HloOpcode::GetTupleElement)
        OutIds[Operand] = I->tupleIndex();
      for (const OperandMap &M : Maps)
        for (const OperandMap &OM : Ops.Operands[K])
          addUnique(Result[Operand], composeOperandMaps(M, OM));
    }
  }
  return Result;
}

} // namespace idxmap
