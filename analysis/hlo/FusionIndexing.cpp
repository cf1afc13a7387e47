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
#include <map>

namespace idxmap {

namespace {

/// compose(First, Second) with bindings: Second's bindings (re-rooted at
/// First's dims) come first, then First's, matching compose's rt order.
OperandMap composeOperandMaps(const OperandMap &First,
                              const OperandMap &Second) {
  OperandMap R;
  if (First.Map.isUndefined() || Second.Map.isUndefined() ||
      First.Map.numResults() != Second.Map.numDims())
    return R; // UNDEFINED
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
  // Maps per (instruction, output id): the outputs of a tuple-shaped value
  // (a variadic reduce or a call read through get-tuple-element) read
  // different operands. Output ids other than 0 only come from
  // get-tuple-element users, so an instruction has few.
  using Key = std::pair<const HloInstruction *, int64_t>;
  std::unordered_map<const HloInstruction *, std::vector<Key>> KeysOf;
  std::map<Key, std::vector<OperandMap>> PerOutput;
  auto Add = [&](Key K, OperandMap M) {
    auto [It, New] = PerOutput.try_emplace(K);
    if (New)
      KeysOf[K.first].push_back(K);
    addUnique(It->second, std::move(M));
  };
  const Shape &S = Start->shape();
  OperandMap StartMap{IndexingMap::undefined(), {}};
  if (OutputId >= 0 && OutputId < numOutputs(*Start)) {
    const Shape &Out = S.isTuple() ? S.TupleShapes[size_t(OutputId)] : S;
    if (Out.isArray())
      StartMap.Map = IndexingMap::identity(Ctx, Out.Dims);
  }
  Add({Start, OutputId}, std::move(StartMap));

  const std::vector<HloInstruction *> &Instrs = Computation.instructions();
  for (auto It = Instrs.rbegin(); It != Instrs.rend(); ++It) {
    const HloInstruction *I = *It;
    auto Keys = KeysOf.find(I);
    if (Keys == KeysOf.end())
      continue;
    std::vector<OperandMap> &All = Result[I];
    for (const Key &K : Keys->second) {
      const std::vector<OperandMap> &Maps = PerOutput[K];
      for (const OperandMap &M : Maps)
        addUnique(All, M);
      InstructionIndexing Ops = computeOutputToInputIndexing(Ctx, *I, K.second);
      for (size_t Op = 0; Op < Ops.Operands.size(); ++Op) {
        const HloInstruction *Operand = I->operand(int64_t(Op));
        if (I->opcode() == HloOpcode::Tuple && Operand->shape().isTuple()) {
          // A nested tuple: one output id cannot say which of its elements
          // are read, so every one is, with an unknown map.
          if (!Ops.Operands[Op].empty())
            for (int64_t J = 0; J < numOutputs(*Operand); ++J)
              Add({Operand, J}, OperandMap{});
          continue;
        }
        int64_t OperandOut =
            I->opcode() == HloOpcode::GetTupleElement ? I->tupleIndex() : 0;
        for (const OperandMap &M : Maps)
          for (const OperandMap &OM : Ops.Operands[Op])
            Add({Operand, OperandOut}, composeOperandMaps(M, OM));
      }
    }
  }
  return Result;
}

} // namespace idxmap
