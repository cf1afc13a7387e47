//===- Partitioner.cpp - Splitting a fused computation into subgraphs -----===//
//
// Part of idxmap. The computation is a Boost.Graph (operand -> user edges);
// a topological sort gives the users-first order in which every instruction
// decides, from its users' subgraphs and maps alone, whether it joins them
// or roots a new subgraph. Each instruction keeps exactly one map, so the
// work is one composition per edge (no path enumeration).
//
//===----------------------------------------------------------------------===//
#include "idxmap/Compose.h"
#include "idxmap/HloIndexing.h"
#include "idxmap/Partition.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <cassert>
#include <map>
#include <set>
#include <sstream>

namespace idxmap {

namespace {

/// The operand -> user graph; vertex i is the computation's instruction i.
using InstrGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

/// The dims of output \p Id of \p I (of I itself unless it is a tuple).
const std::vector<int64_t> &outputDims(const HloInstruction &I, int64_t Id) {
  static const std::vector<int64_t> None;
  const Shape &S = I.shape();
  if (!S.isTuple())
    return S.Dims;
  if (Id < 0 || Id >= int64_t(S.TupleShapes.size()) ||
      S.TupleShapes[Id].isTuple())
    return None;
  return S.TupleShapes[Id].Dims;
}

/// compose(First, Second) carrying runtime-variable bindings, simplified,
/// unused symbols removed. compose orders symbols [Second's range vars,
/// First's range vars, Second's runtime vars, First's runtime vars], so the
/// bindings are Second's (re-rooted at First's dims), then First's.
OperandMap composeBound(const OperandMap &First, const OperandMap &Second) {
  OperandMap R;
  if (First.Map.isUndefined() || Second.Map.isUndefined() ||
      First.Map.numResults() != Second.Map.numDims())
    return R; // UNDEFINED
  R.Map = compose(First.Map, Second.Map);
  if (R.Map.isUndefined() || R.Map.isKnownEmpty())
    return R;
  for (const RuntimeBinding &B : Second.Bindings) {
    RuntimeBinding NB{B.Source, compose(First.Map, B.Map)};
    if (!NB.Map.isUndefined()) {
      simplify(NB.Map);
      NB.Map.removeUnusedSymbols();
    }
    R.Bindings.push_back(std::move(NB));
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
  for (size_t K = 0; K < R.Bindings.size(); ++K) {
    size_t Pos = NumRange + K;
    if (Pos >= Removed.size() || !Removed[Pos])
      Kept.push_back(std::move(R.Bindings[K]));
  }
  R.Bindings = std::move(Kept);
  return R;
}

bool isNoComputeOp(HloOpcode Op) {
  switch (Op) {
  case HloOpcode::Bitcast:
  case HloOpcode::Constant:
  case HloOpcode::Iota:
  case HloOpcode::Parameter:
  case HloOpcode::Reshape:
  case HloOpcode::Reverse:
  case HloOpcode::Transpose:
  case HloOpcode::Broadcast:
  case HloOpcode::Slice:
  case HloOpcode::Copy:
    return true;
  default:
    return false;
  }
}

/// The partitioner's state for one computation.
class Partitioner {
public:
  Partitioner(Context &Ctx, const HloComputation &C,
              const PartitionOptions &Opts)
      : Ctx(Ctx), C(C), Opts(Opts) {
    for (const HloInstruction *I : Opts.ForcedRoots)
      Forced.insert(I);
    const HloInstruction *Root = C.root();
    TupleRoot = Root && Root->opcode() == HloOpcode::Tuple ? Root : nullptr;
    if (TupleRoot)
      for (const HloInstruction *Op : TupleRoot->operands())
        Outputs.insert(Op);
  }

  PartitionedComputation run();

private:
  /// A member's state: its map from its subgraph's first root.
  struct State {
    int Subgraph = -1;
    OperandMap Map;
    /// Map came out of composeBound (simplified), not a root's identity.
    bool Composed = false;
    /// Output ids of a tuple-shaped instruction that its users read.
    std::set<int64_t> OutIds;
  };

  /// The dims of the value \p I produces as its users read it: for a tuple
  /// shape, the first output id that is read.
  const std::vector<int64_t> &valueDims(const HloInstruction *I) {
    const std::set<int64_t> &Ids = States[I].OutIds;
    return outputDims(*I, Ids.empty() ? 0 : *Ids.begin());
  }

  bool isForced(const HloInstruction *I) const {
    return Forced.count(I) || (Opts.IsForcedRoot && Opts.IsForcedRoot(*I));
  }

  /// Output-to-input maps of \p U for operand \p K, over every output id of
  /// U that is read (cached per user).
  const std::vector<OperandMap> &operandMaps(const HloInstruction *U,
                                             int64_t K);

  /// Why \p I cannot join its users' subgraph, or "" when it can (then
  /// \p Target and \p Map are set). \p ExtraRoot is set when I joins as an
  /// additional root (a computation output read at the first root's index).
  std::string decide(const HloInstruction *I, int &Target, OperandMap &Map,
                     bool &ExtraRoot);

  void newRoot(const HloInstruction *I, std::string Reason);

  Context &Ctx;
  const HloComputation &C;
  const PartitionOptions &Opts;
  std::set<const HloInstruction *> Forced;
  const HloInstruction *TupleRoot = nullptr;
  std::set<const HloInstruction *> Outputs;
  std::unordered_map<const HloInstruction *, State> States;
  std::unordered_map<const HloInstruction *,
                     std::vector<std::vector<OperandMap>>>
      Cache;
  PartitionedComputation P;
};

const std::vector<OperandMap> &
Partitioner::operandMaps(const HloInstruction *U, int64_t K) {
  auto It = Cache.find(U);
  if (It == Cache.end()) {
    std::vector<std::vector<OperandMap>> PerOperand(U->operandCount());
    std::set<int64_t> Ids = States[U].OutIds;
    if (Ids.empty())
      Ids.insert(0);
    // U's one map stands for every output id read; outputs of different
    // dims cannot share it.
    bool Mixed = false;
    for (int64_t Id : Ids)
      Mixed |= outputDims(*U, Id) != outputDims(*U, *Ids.begin());
    for (int64_t Id : Ids) {
      InstructionIndexing Idx = computeOutputToInputIndexing(Ctx, *U, Id);
      if (Mixed)
        for (std::vector<OperandMap> &Maps : Idx.Operands)
          for (OperandMap &M : Maps)
            M = OperandMap{};
      for (size_t Op = 0; Op < Idx.Operands.size() && Op < PerOperand.size();
           ++Op)
        for (OperandMap &M : Idx.Operands[Op])
          if (std::find(PerOperand[Op].begin(), PerOperand[Op].end(), M) ==
              PerOperand[Op].end())
            PerOperand[Op].push_back(std::move(M));
    }
    It = Cache.emplace(U, std::move(PerOperand)).first;
  }
  return It->second[K];
}

void Partitioner::newRoot(const HloInstruction *I, std::string Reason) {
  int Id = int(P.Subgraphs.size());
  Subgraph S;
  S.Name = I->name();
  S.Roots.push_back(I);
  P.Subgraphs.push_back(std::move(S));
  State &St = States[I];
  St.Subgraph = Id;
  St.Map = OperandMap{};
  St.Map.Map = IndexingMap::identity(Ctx, valueDims(I));
  P.Reasons[I] = std::move(Reason);
}

std::string Partitioner::decide(const HloInstruction *I, int &Target,
                                OperandMap &Map, bool &ExtraRoot) {
  ExtraRoot = false;
  if (I == C.root())
    return "computation root";
  if (isForced(I))
    return Opts.ForcedReason;
  bool IsOutput = Outputs.count(I) != 0;

  std::vector<const HloInstruction *> Users;
  for (const HloInstruction *U : I->users())
    if (U != TupleRoot)
      Users.push_back(U);
  if (Users.empty())
    return IsOutput ? "computation root" : "no users";
  // The ops after Call (dot, custom-call, while, collectives ...) are
  // opaque to the emitters: a kernel of their own, never computed inside
  // the subgraph of their users, whatever their indexing.
  if (isOpaqueToEmitters(I->opcode()))
    return "opaque op";

  std::set<int> UserSubgraphs;
  for (const HloInstruction *U : Users) {
    assert(States.count(U) && States[U].Subgraph >= 0 &&
           "users are visited first");
    UserSubgraphs.insert(States[U].Subgraph);
  }
  if (UserSubgraphs.size() > 1)
    return "users in " + std::to_string(UserSubgraphs.size()) + " subgraphs";
  Target = *UserSubgraphs.begin();

  std::vector<OperandMap> Distinct;
  OperandMap Empty;
  bool SawEmpty = false;
  // One map I is read with; false when it is unknown.
  auto Consider = [&](OperandMap R) {
    if (R.Map.isUndefined())
      return false;
    if (R.Map.isKnownEmpty()) {
      if (!SawEmpty)
        Empty = std::move(R);
      SawEmpty = true;
    } else if (std::find(Distinct.begin(), Distinct.end(), R) ==
               Distinct.end()) {
      Distinct.push_back(std::move(R));
    }
    return true;
  };
  for (const HloInstruction *U : Users) {
    const State &US = States[U];
    // An elementwise user reads its operands at its own index: composing
    // its simplified map with that identity gives the map back.
    const bool OwnIndex =
        US.Composed && US.OutIds.empty() && readsOperandsAtOwnIndex(*U);
    for (int64_t K = 0; K < U->operandCount(); ++K) {
      if (U->operand(K) != I)
        continue;
      if (OwnIndex) {
        if (!Consider(US.Map))
          return "unknown indexing";
        continue;
      }
      for (const OperandMap &OM : operandMaps(U, K))
        if (!Consider(composeBound(US.Map, OM)))
          return "unknown indexing";
    }
  }
  if (Distinct.size() > 1)
    return "reached with " + std::to_string(Distinct.size()) +
           " indexing maps";
  if (Distinct.empty()) {
    if (!SawEmpty)
      return "not read";
    Distinct.push_back(std::move(Empty));
  }
  Map = std::move(Distinct.front());

  if (IsOutput) {
    // An output joins only if it is computed at the first root's index.
    const HloInstruction *First = P.Subgraphs[Target].Roots.front();
    IndexingMap Id = IndexingMap::identity(Ctx, valueDims(I));
    simplify(Id);
    if (valueDims(First) != valueDims(I) || !Map.Bindings.empty() ||
        !(Map.Map == Id))
      return "computation root";
    Map.Map = IndexingMap::identity(Ctx, valueDims(I));
    ExtraRoot = true;
  }
  return "";
}

PartitionedComputation Partitioner::run() {
  P.Computation = &C;
  const std::vector<HloInstruction *> &Instrs = C.instructions();
  InstrGraph G(Instrs.size());
  for (size_t V = 0; V < Instrs.size(); ++V) {
    assert(Instrs[V]->index() == int64_t(V) && "index is the list position");
    for (const HloInstruction *U : Instrs[V]->users())
      boost::add_edge(V, size_t(U->index()), G);
  }
  // topological_sort lists vertices in reverse topological order: for an
  // edge operand -> user, the user comes first.
  std::vector<InstrGraph::vertex_descriptor> Order;
  Order.reserve(Instrs.size());
  boost::topological_sort(G, std::back_inserter(Order));

  for (InstrGraph::vertex_descriptor V : Order) {
    const HloInstruction *I = Instrs[V];
    if (I->opcode() == HloOpcode::Parameter || I == TupleRoot)
      continue;
    // Output ids read through get-tuple-element users (tuple-shaped values).
    State &St = States[I];
    if (I->shape().isTuple()) {
      for (const HloInstruction *U : I->users())
        if (U->opcode() == HloOpcode::GetTupleElement)
          St.OutIds.insert(U->tupleIndex());
      if (St.OutIds.empty())
        for (int64_t K = 0; K < int64_t(I->shape().TupleShapes.size()); ++K)
          St.OutIds.insert(K);
    }
    int Target = -1;
    OperandMap Map;
    bool Extra = false;
    std::string Why = decide(I, Target, Map, Extra);
    if (!Why.empty()) {
      newRoot(I, std::move(Why));
      continue;
    }
    State &S = States[I];
    S.Subgraph = Target;
    S.Map = std::move(Map);
    S.Composed = !Extra; // an extra root's map is its identity
    if (Extra) {
      P.Subgraphs[Target].Roots.push_back(I);
      P.Reasons[I] = "computation root";
    }
  }

  for (const HloInstruction *I : Instrs) {
    auto It = States.find(I);
    if (It == States.end() || It->second.Subgraph < 0)
      continue;
    Subgraph &S = P.Subgraphs[It->second.Subgraph];
    P.SubgraphOf[I] = It->second.Subgraph;
    S.Instructions.push_back(I);
    S.Maps[I] = It->second.Map.Map;
    if (!It->second.Map.Bindings.empty())
      S.Bindings[I] = It->second.Map.Bindings;
  }
  for (Subgraph &S : P.Subgraphs)
    S.NoCompute = std::all_of(
        S.Instructions.begin(), S.Instructions.end(),
        [](const HloInstruction *I) { return isNoComputeOp(I->opcode()); });
  return std::move(P);
}

//===----------------------------------------------------------------------===//
// DOT output
//===----------------------------------------------------------------------===//

using AttrMap = std::map<std::string, std::string>;

/// An ID as Graphviz reads it: bare when it is a name or a number, else
/// quoted with `"` escaped (the rule of Boost's escape_dot_string, whose
/// output this writer reproduces).
std::string dotId(const std::string &S) {
  auto IsDigit = [](char C) { return C >= '0' && C <= '9'; };
  auto IsAlpha = [](char C) {
    return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z');
  };
  bool Bare = false;
  if (!S.empty() && (IsAlpha(S[0]) || S[0] == '_')) {
    Bare = std::all_of(S.begin(), S.end(), [&](char C) {
      return IsAlpha(C) || IsDigit(C) || C == '_';
    });
  } else if (!S.empty()) {
    // -?(\.[0-9]*|[0-9]+(\.[0-9]*)?)
    size_t P = S[0] == '-' ? 1 : 0, Digits = 0;
    while (P < S.size() && IsDigit(S[P]))
      ++P, ++Digits;
    bool Dot = P < S.size() && S[P] == '.';
    if (Dot)
      ++P;
    while (Dot && P < S.size() && IsDigit(S[P]))
      ++P;
    Bare = P == S.size() && (Digits > 0 || Dot);
  }
  if (Bare)
    return S;
  std::string Out = "\"";
  for (char C : S)
    Out += C == '"' ? std::string("\\\"") : std::string(1, C);
  return Out + "\"";
}

/// `key=value, ...` in key order.
std::string dotAttrs(const AttrMap &A) {
  std::string Out;
  for (const auto &[K, V] : A)
    Out += (Out.empty() ? "" : ", ") + K + "=" + dotId(V);
  return Out;
}

std::string rootList(const Subgraph &S) {
  std::string Out;
  for (const HloInstruction *R : S.Roots)
    Out += (Out.empty() ? "" : ", ") + R->name();
  return Out;
}

} // namespace

const Subgraph *
PartitionedComputation::subgraphOf(const HloInstruction *I) const {
  auto It = SubgraphOf.find(I);
  return It == SubgraphOf.end() ? nullptr : &Subgraphs[It->second];
}

std::string PartitionedComputation::str() const {
  std::ostringstream OS;
  OS << "computation " << (Computation ? Computation->name() : "?") << ": "
     << Subgraphs.size() << (Subgraphs.size() == 1 ? " subgraph" : " subgraphs")
     << "\n";
  for (size_t N = 0; N < Subgraphs.size(); ++N) {
    const Subgraph &S = Subgraphs[N];
    OS << "subgraph " << N << ": " << S.Name
       << (S.NoCompute ? " (no compute)" : "") << "\n";
    for (const HloInstruction *R : S.Roots) {
      auto It = Reasons.find(R);
      OS << "  root " << R->name() << ": "
         << (It == Reasons.end() ? std::string("?") : It->second) << "\n";
    }
    for (const HloInstruction *I : S.Instructions) {
      OS << "  " << I->name() << " = " << opcodeName(I->opcode()) << ": ";
      auto M = S.Maps.find(I);
      if (M == S.Maps.end() || M->second.isUndefined())
        OS << "unknown indexing\n";
      else
        OS << printMap(M->second) << "\n";
      auto B = S.Bindings.find(I);
      if (B == S.Bindings.end())
        continue;
      for (size_t K = 0; K < B->second.size(); ++K)
        OS << "    rt" << K << ": "
           << (B->second[K].Source ? B->second[K].Source->name()
                                   : std::string("?"))
           << "; "
           << (B->second[K].Map.isUndefined() ? std::string("unknown")
                                              : printMap(B->second[K].Map))
           << "\n";
    }
  }
  return OS.str();
}

std::string PartitionedComputation::toDot() const {
  std::ostringstream OS;
  if (!Computation) {
    OS << "digraph empty {\n}\n";
    return OS.str();
  }
  // One cluster per subgraph, then the instructions outside every subgraph,
  // then the edges between clusters: each vertex and edge is written once,
  // so the output is linear in the computation. (Boost's subgraph writer
  // produced the same text but inserted cluster vertices in quadratic
  // time.)
  const std::vector<HloInstruction *> &Instrs = Computation->instructions();
  std::set<const HloInstruction *> Roots;
  for (const Subgraph &S : Subgraphs)
    Roots.insert(S.Roots.begin(), S.Roots.end());
  auto SubgraphIndex = [&](const HloInstruction *I) {
    auto It = SubgraphOf.find(I);
    return It == SubgraphOf.end() ? -1 : It->second;
  };
  auto Vertex = [&](const HloInstruction *I) {
    AttrMap A;
    // The label shows the map from the subgraph's root, its domain on a
    // line of its own (`\n`: a line break in a Graphviz label).
    std::string Label =
        I->name() + " = " + std::string(opcodeName(I->opcode()));
    int Sg = SubgraphIndex(I);
    if (Sg >= 0) {
      auto M = Subgraphs[Sg].Maps.find(I);
      if (M != Subgraphs[Sg].Maps.end() && !M->second.isUndefined()) {
        std::string Map = printMap(M->second);
        size_t Domain = Map.find(", domain: ");
        if (Domain != std::string::npos)
          Map = Map.substr(0, Domain) + "\\n" + Map.substr(Domain + 2);
        Label += "\\n" + Map;
      }
    }
    A["label"] = Label;
    if (I->opcode() == HloOpcode::Parameter)
      A["shape"] = "box";
    if (Roots.count(I))
      A["style"] = "bold";
    OS << I->index() << "[" << dotAttrs(A) << "];\n";
  };
  auto Edge = [&](const HloInstruction *From, const HloInstruction *To) {
    OS << From->index() << " -> " << To->index() << ";\n";
  };
  const std::string &Name = Computation->name();
  OS << "digraph " << dotId(Name) << " {\n"
     << "graph [\n"
     << dotAttrs({{"label", Name}}) << "];\n"
     << "node [\n"
     << dotAttrs({{"shape", "ellipse"}}) << "];\n";
  for (size_t N = 0; N < Subgraphs.size(); ++N) {
    const Subgraph &S = Subgraphs[N];
    OS << "subgraph " << dotId("cluster_" + std::to_string(N)) << " {\n"
       << "graph [\n"
       << dotAttrs({{"label", std::to_string(N) + ": " + S.Name +
                                  (S.NoCompute ? " (no compute)" : "") +
                                  " [roots: " + rootList(S) + "]"},
                    {"style", "rounded"}})
       << "];\n";
    for (const HloInstruction *I : S.Instructions)
      Vertex(I);
    // Users follow their operands in S.Instructions (instruction order).
    for (const HloInstruction *I : S.Instructions)
      for (const HloInstruction *U : I->users())
        if (SubgraphIndex(U) == int(N))
          Edge(I, U);
    OS << "}\n";
  }
  for (const HloInstruction *I : Instrs)
    if (SubgraphIndex(I) < 0)
      Vertex(I);
  for (const HloInstruction *I : Instrs) {
    int From = SubgraphIndex(I);
    for (const HloInstruction *U : I->users())
      if (From < 0 || SubgraphIndex(U) != From)
        Edge(I, U);
  }
  OS << "}\n";
  return OS.str();
}

PartitionedComputation partitionComputation(Context &Ctx,
                                            const HloComputation &C,
                                            const PartitionOptions &Options) {
  return Partitioner(Ctx, C, Options).run();
}

} // namespace idxmap
