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
  // A replica id map (XLA's): First's stays; Second's is re-rooted at
  // First's dims; two collectives in a chain are not modeled.
  if (!First.ReplicaId.isUndefined() && !Second.ReplicaId.isUndefined())
    return OperandMap{};
  R.ReplicaId = First.ReplicaId;
  if (!Second.ReplicaId.isUndefined()) {
    R.ReplicaId = compose(First.Map, Second.ReplicaId);
    simplify(R.ReplicaId);
  }
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

namespace {
thread_local GroupedIndexingMemo *ActiveMemo = nullptr;

GroupedIndexing composeGroupedIndexing(Context &Ctx,
                                       const HloComputation &Computation,
                                       const HloInstruction *Start,
                                       int64_t OutputId,
                                       GroupedIndexingMemo *Memo);
} // namespace

bool readsOperandsAtOwnIndex(const HloInstruction &I) {
  if (!isElementwise(I.opcode()) || !I.shape().isArray())
    return false;
  for (const HloInstruction *O : I.operands())
    if (!O->shape().isArray() || !O->shape().sameDims(I.shape()))
      return false;
  return true;
}

GroupedIndexingMemo::GroupedIndexingMemo(Context &Ctx)
    : Ctx(Ctx), Outer(ActiveMemo) {
  ActiveMemo = this;
}

GroupedIndexingMemo::~GroupedIndexingMemo() { ActiveMemo = Outer; }

GroupedIndexingMemo *GroupedIndexingMemo::active(const Context &Ctx) {
  return ActiveMemo && &ActiveMemo->Ctx == &Ctx ? ActiveMemo : nullptr;
}

const GroupedIndexing *GroupedIndexingMemo::find(const HloComputation &C,
                                                 const HloInstruction *Start,
                                                 int64_t OutputId) const {
  auto It = Kept.find({&C, Start, OutputId});
  return It == Kept.end() ? nullptr : &It->second;
}

void GroupedIndexingMemo::keep(const HloComputation &C,
                               const HloInstruction *Start, int64_t OutputId,
                               const GroupedIndexing &G) {
  Kept[{&C, Start, OutputId}] = G;
}

const InstructionIndexing &
GroupedIndexingMemo::operandIndexing(const HloInstruction &I,
                                     int64_t OutputId) {
  auto Key = std::make_pair(&I, OutputId);
  auto It = OperandMaps.find(Key);
  if (It == OperandMaps.end())
    It =
        OperandMaps.emplace(Key, computeOutputToInputIndexing(Ctx, I, OutputId))
            .first;
  return It->second;
}

const OperandMap *
GroupedIndexingMemo::findComposed(const IndexingMap &First,
                                  const IndexingMap &Second) const {
  auto It = Composed.find(std::make_pair(First, Second));
  return It == Composed.end() ? nullptr : &It->second;
}

void GroupedIndexingMemo::keepComposed(const IndexingMap &First,
                                       const IndexingMap &Second,
                                       const OperandMap &R) {
  Composed.emplace(std::make_pair(First, Second), R);
}

GroupedIndexing computeGroupedIndexing(Context &Ctx,
                                       const HloComputation &Computation,
                                       const HloInstruction *Start,
                                       int64_t OutputId) {
  if (!Start)
    Start = Computation.root();
  GroupedIndexingMemo *Memo = GroupedIndexingMemo::active(Ctx);
  if (Memo)
    if (const GroupedIndexing *G = Memo->find(Computation, Start, OutputId))
      return *G;
  GroupedIndexing G =
      composeGroupedIndexing(Ctx, Computation, Start, OutputId, Memo);
  if (Memo)
    Memo->keep(Computation, Start, OutputId, G);
  return G;
}

namespace {
GroupedIndexing composeGroupedIndexing(Context &Ctx,
                                       const HloComputation &Computation,
                                       const HloInstruction *Start,
                                       int64_t OutputId,
                                       GroupedIndexingMemo *Memo) {
  GroupedIndexing Result;
  if (!Start)
    return Result;
  // Maps per (instruction, output id): the outputs of a tuple-shaped value
  // (a variadic reduce or a call read through get-tuple-element) read
  // different operands. Output ids other than 0 only come from
  // get-tuple-element users, so an instruction has few: a short list per
  // instruction, by instruction index.
  using PerOutput = std::vector<std::pair<int64_t, std::vector<OperandMap>>>;
  std::vector<PerOutput> Maps(Computation.instructions().size());
  auto Add = [&](const HloInstruction *I, int64_t OutId, OperandMap M) {
    PerOutput &P = Maps[size_t(I->index())];
    auto It = std::find_if(P.begin(), P.end(),
                           [&](const auto &E) { return E.first == OutId; });
    if (It == P.end()) {
      P.emplace_back(OutId, std::vector<OperandMap>{});
      It = P.end() - 1;
    }
    addUnique(It->second, std::move(M));
  };
  const Shape &S = Start->shape();
  OperandMap StartMap{IndexingMap::undefined(), {}};
  if (OutputId >= 0 && OutputId < numOutputs(*Start)) {
    const Shape &Out = S.isTuple() ? S.TupleShapes[size_t(OutputId)] : S;
    if (Out.isArray())
      StartMap.Map = IndexingMap::identity(Ctx, Out.Dims);
  }
  Add(Start, OutputId, std::move(StartMap));

  // Chains of elementwise ops compose the same two maps again and again
  // (the output's map and an identity): each pair of plain maps (no
  // runtime bindings, no replica ids) is composed once, in the memo when
  // one is active (walks from other starts share it).
  std::unordered_map<std::pair<IndexingMap, IndexingMap>, OperandMap,
                     GroupedIndexingMemo::PairHash>
      Composed;
  auto Compose = [&](const OperandMap &M, const OperandMap &OM) {
    auto Plain = [](const OperandMap &X) {
      return X.Bindings.empty() && X.ReplicaId.isUndefined() &&
             !X.Map.isUndefined();
    };
    if (!Plain(M) || !Plain(OM))
      return composeOperandMaps(M, OM);
    if (Memo) {
      if (const OperandMap *Found = Memo->findComposed(M.Map, OM.Map))
        return *Found;
      OperandMap R = composeOperandMaps(M, OM);
      Memo->keepComposed(M.Map, OM.Map, R);
      return R;
    }
    auto Key = std::make_pair(M.Map, OM.Map);
    auto Found = Composed.find(Key);
    if (Found != Composed.end())
      return Found->second;
    OperandMap R = composeOperandMaps(M, OM);
    Composed.emplace(std::move(Key), R);
    return R;
  };
  // Each operand's maps: \p OutMaps (I's, for its output OutId) composed
  // with I's output-to-input maps.
  auto addOperandMaps = [&](const HloInstruction &I, int64_t OutId,
                            const std::vector<OperandMap> &OutMaps) {
    InstructionIndexing Own;
    const InstructionIndexing &Ops =
        Memo ? Memo->operandIndexing(I, OutId)
             : (Own = computeOutputToInputIndexing(Ctx, I, OutId));
    for (size_t Op = 0; Op < Ops.Operands.size(); ++Op) {
      const HloInstruction *Operand = I.operand(int64_t(Op));
      if (I.opcode() == HloOpcode::Tuple && Operand->shape().isTuple()) {
        // A nested tuple: one output id cannot say which of its elements
        // are read, so every one is, with an unknown map.
        if (!Ops.Operands[Op].empty())
          for (int64_t J = 0; J < numOutputs(*Operand); ++J)
            Add(Operand, J, OperandMap{});
        continue;
      }
      int64_t OperandOut =
          I.opcode() == HloOpcode::GetTupleElement ? I.tupleIndex() : 0;
      for (const OperandMap &M : OutMaps)
        for (const OperandMap &OM : Ops.Operands[Op])
          Add(Operand, OperandOut, Compose(M, OM));
    }
  };
  const std::vector<HloInstruction *> &Instrs = Computation.instructions();
  for (auto It = Instrs.rbegin(); It != Instrs.rend(); ++It) {
    const HloInstruction *I = *It;
    PerOutput &Outs = Maps[size_t(I->index())];
    if (Outs.empty())
      continue;
    std::vector<OperandMap> &All = Result[I];
    for (auto &[OutId, OutMaps] : Outs) {
      // An elementwise op reads each operand at its own index: the
      // operands take its maps as they are (composing a simplified map
      // with an identity gives it back; the start's identity is not yet
      // simplified).
      if (I != Start && readsOperandsAtOwnIndex(*I)) {
        for (const HloInstruction *Operand : I->operands())
          for (const OperandMap &M : OutMaps)
            Add(Operand, 0, M);
      } else {
        addOperandMaps(*I, OutId, OutMaps);
      }
      if (All.empty())
        All = std::move(OutMaps);
      else
        for (OperandMap &M : OutMaps)
          addUnique(All, std::move(M));
    }
    PerOutput().swap(Outs);
  }
  return Result;
}
} // namespace

} // namespace idxmap
