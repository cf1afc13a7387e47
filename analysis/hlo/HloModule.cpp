//===- analysis/hlo/HloModule.cpp - HLO data model and printer ------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"

#include "HloLexer.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>

namespace idxmap {

namespace {
std::string_view stripPercent(std::string_view Name) {
  if (!Name.empty() && Name.front() == '%')
    Name.remove_prefix(1);
  return Name;
}

std::string intList(const std::vector<int64_t> &V) {
  std::string Out = "{";
  for (size_t I = 0; I < V.size(); ++I) {
    if (I)
      Out += ",";
    Out += std::to_string(V[I]);
  }
  return Out + "}";
}

/// True if \p L has more than one element, all with the same bits: the
/// printer writes the one value (`f32[2048,2048] constant(0)`), which
/// parses back to the same array, rather than every element (12 MB of
/// text for that one).
bool isSplat(const Literal &L) {
  int64_t N = L.elementCount(), W = byteWidth(L.elementType());
  if (L.isTuple() || N < 2 || W == 0)
    return false;
  const uint8_t *D = L.data().data();
  for (int64_t K = 1; K < N; ++K)
    if (std::memcmp(D, D + K * W, size_t(W)) != 0)
      return false;
  return true;
}

/// `{{1, 2}, {3, 4}}` for a rank-2 literal; the bare value for a scalar.
void printLiteralValue(const Literal &L, size_t Dim, int64_t &Next,
                       std::string &Out) {
  const Shape &S = L.shape();
  if (S.rank() == 0) {
    Out += L.elementString(Next++);
    return;
  }
  Out += '{';
  for (int64_t K = 0; K < S.Dims[Dim]; ++K) {
    if (K)
      Out += ", ";
    if (Dim + 1 == S.Dims.size())
      Out += L.elementString(Next++);
    else
      printLiteralValue(L, Dim + 1, Next, Out);
  }
  Out += '}';
}
} // namespace

//===----------------------------------------------------------------------===//
// Lookups
//===----------------------------------------------------------------------===//

const HloInstruction::OpDimensions &HloInstruction::opDims() const {
  static const OpDimensions None;
  return ExtraDims ? *ExtraDims : None;
}

HloInstruction::OpDimensions &HloInstruction::mutableOpDims() {
  if (!ExtraDims)
    ExtraDims = std::make_unique<OpDimensions>();
  return *ExtraDims;
}

bool HloInstruction::isRoot() const { return Parent && Parent->root() == this; }

const HloInstruction *
HloComputation::findInstruction(std::string_view N) const {
  N = stripPercent(N);
  for (const HloInstruction *I : InstrPtrs)
    if (I->name() == N)
      return I;
  return nullptr;
}

const HloInstruction *HloModule::findInstruction(std::string_view N) const {
  for (const HloComputation *C : CompPtrs)
    if (const HloInstruction *I = C->findInstruction(N))
      return I;
  return nullptr;
}

const HloComputation *HloModule::findComputation(std::string_view N) const {
  N = stripPercent(N);
  for (const HloComputation *C : CompPtrs)
    if (C->name() == N)
      return C;
  return nullptr;
}

std::vector<const HloInstruction *>
operandClosure(const std::vector<const HloInstruction *> &Roots,
               const std::vector<const HloInstruction *> &Stop,
               bool ParametersOnly) {
  std::set<const HloInstruction *> Seen(Stop.begin(), Stop.end());
  std::vector<const HloInstruction *> Work, Out;
  for (const HloInstruction *R : Roots)
    if (Seen.insert(R).second)
      Work.push_back(R);
  while (!Work.empty()) {
    const HloInstruction *I = Work.back();
    Work.pop_back();
    if (!ParametersOnly || I->opcode() == HloOpcode::Parameter)
      Out.push_back(I);
    for (const HloInstruction *O : I->operands())
      if (Seen.insert(O).second)
        Work.push_back(O);
  }
  std::sort(Out.begin(), Out.end(),
            [](const HloInstruction *A, const HloInstruction *B) {
              bool PA = A->opcode() == HloOpcode::Parameter,
                   PB = B->opcode() == HloOpcode::Parameter;
              if (PA != PB)
                return PA;
              return PA ? A->parameterNumber() < B->parameterNumber()
                        : A->index() < B->index();
            });
  return Out;
}

std::vector<const HloInstruction *> HloModule::fusions() const {
  std::vector<const HloInstruction *> Out;
  for (const HloComputation *C : CompPtrs)
    for (const HloInstruction *I : C->instructions())
      if (I->opcode() == HloOpcode::Fusion)
        Out.push_back(I);
  return Out;
}

Diagnostic HloModule::diagnose(size_t Offset, std::string Message) const {
  return makeDiagnostic(Source, Offset, std::move(Message), FileName);
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

/// `{size=3x3 stride=2x2 pad=1_1x1_1 ...}`: size always, the other fields
/// where some dimension differs from the default (XLA's printing).
static std::string windowString(const std::vector<WindowDim> &W) {
  std::string Out;
  auto List = [&](const char *Key, int64_t Default, auto Get) {
    bool Any = std::string(Key) == "size";
    for (const WindowDim &D : W)
      Any |= Get(D) != Default;
    if (!Any || W.empty())
      return;
    Out += Out.empty() ? "" : " ";
    Out += Key;
    Out += '=';
    for (size_t K = 0; K < W.size(); ++K) {
      if (K)
        Out += 'x';
      Out += std::to_string(Get(W[K]));
    }
  };
  List("size", 1, [](const WindowDim &D) { return D.Size; });
  List("stride", 1, [](const WindowDim &D) { return D.Stride; });
  bool Pad = false;
  for (const WindowDim &D : W)
    Pad |= D.PadLo != 0 || D.PadHi != 0;
  if (Pad) {
    Out += " pad=";
    for (size_t K = 0; K < W.size(); ++K) {
      if (K)
        Out += 'x';
      Out += std::to_string(W[K].PadLo) + '_' + std::to_string(W[K].PadHi);
    }
  }
  List("lhs_dilate", 1, [](const WindowDim &D) { return D.BaseDilation; });
  List("rhs_dilate", 1, [](const WindowDim &D) { return D.WindowDilation; });
  List("rhs_reversal", 0,
       [](const WindowDim &D) { return int64_t(D.Reversal); });
  return "{" + Out + "}";
}

std::string HloInstruction::toString() const {
  std::string Out;
  if (isRoot())
    Out += "ROOT ";
  Out += hlo::printableName(Name);
  Out += " = ";
  Out += Sh.str(/*WithLayout=*/true);
  Out += ' ';
  if (!AsyncSpelling.empty())
    Out += AsyncSpelling;
  else
    Out += opcodeName(Op);
  Out += '(';
  if (Op == HloOpcode::Parameter) {
    Out += std::to_string(ParameterNumber);
  } else if (Op == HloOpcode::Constant) {
    if (Elided) {
      Out += ValueText.empty() ? std::string("{...}") : ValueText;
    } else if (isSplat(Value)) {
      Out += Value.elementString(0);
    } else {
      int64_t Next = 0;
      printLiteralValue(Value, 0, Next, Out);
    }
  } else {
    for (size_t K = 0; K < Operands.size(); ++K) {
      if (K)
        Out += ", ";
      Out += hlo::printableName(Operands[K]->name());
    }
  }
  Out += ')';

  switch (Op) {
  case HloOpcode::Broadcast:
  case HloOpcode::Transpose:
  case HloOpcode::Reverse:
  case HloOpcode::Concatenate:
  case HloOpcode::Reduce:
  case HloOpcode::Map:
  case HloOpcode::Sort:
  case HloOpcode::AllGather:
  case HloOpcode::AllGatherStart:
  case HloOpcode::AllToAll:
  case HloOpcode::ReduceScatter:
  case HloOpcode::Scan:
    // all-to-all and map may leave it out.
    if (!Dimensions.empty() ||
        (Op != HloOpcode::AllToAll && Op != HloOpcode::Map))
      Out += ", dimensions=" + intList(Dimensions);
    break;
  case HloOpcode::Convolution:
    Out += ", window=" + windowString(Window);
    Out += ", dim_labels=" + opDims().Conv.str();
    if (FeatureGroupCount != 1)
      Out += ", feature_group_count=" + std::to_string(FeatureGroupCount);
    if (BatchGroupCount != 1)
      Out += ", batch_group_count=" + std::to_string(BatchGroupCount);
    break;
  case HloOpcode::ReduceWindow:
  case HloOpcode::SelectAndScatter:
    Out += ", window=" + windowString(Window);
    break;
  case HloOpcode::Dot:
  case HloOpcode::RaggedDot:
  case HloOpcode::ScaledDot: {
    const DotDimensions &D = opDims().Dot;
    if (!D.LhsBatch.empty())
      Out += ", lhs_batch_dims=" + intList(D.LhsBatch);
    Out += ", lhs_contracting_dims=" + intList(D.LhsContracting);
    if (!D.RhsBatch.empty())
      Out += ", rhs_batch_dims=" + intList(D.RhsBatch);
    Out += ", rhs_contracting_dims=" + intList(D.RhsContracting);
    break;
  }
  case HloOpcode::Gather: {
    const GatherDimensions &G = opDims().Gather;
    Out += ", offset_dims=" + intList(G.OffsetDims);
    Out += ", collapsed_slice_dims=" + intList(G.CollapsedSliceDims);
    Out += ", start_index_map=" + intList(G.StartIndexMap);
    if (!G.OperandBatchingDims.empty())
      Out += ", operand_batching_dims=" + intList(G.OperandBatchingDims);
    if (!G.StartIndicesBatchingDims.empty())
      Out += ", start_indices_batching_dims=" +
             intList(G.StartIndicesBatchingDims);
    Out += ", index_vector_dim=" + std::to_string(G.IndexVectorDim);
    Out += ", slice_sizes=" + intList(GatherSliceSizes);
    break;
  }
  case HloOpcode::Scatter: {
    const ScatterDimensions &S = opDims().Scatter;
    Out += ", update_window_dims=" + intList(S.UpdateWindowDims);
    Out += ", inserted_window_dims=" + intList(S.InsertedWindowDims);
    Out += ", scatter_dims_to_operand_dims=" +
           intList(S.ScatterDimsToOperandDims);
    if (!S.InputBatchingDims.empty())
      Out += ", input_batching_dims=" + intList(S.InputBatchingDims);
    if (!S.ScatterIndicesBatchingDims.empty())
      Out += ", scatter_indices_batching_dims=" +
             intList(S.ScatterIndicesBatchingDims);
    Out += ", index_vector_dim=" + std::to_string(S.IndexVectorDim);
    break;
  }
  case HloOpcode::CustomCall:
    Out += ", custom_call_target=\"" + CustomCallTarget + "\"";
    break;
  case HloOpcode::Slice: {
    Out += ", slice={";
    for (size_t D = 0; D < SliceStarts.size(); ++D) {
      if (D)
        Out += ", ";
      Out += '[' + std::to_string(SliceStarts[D]) + ':' +
             std::to_string(SliceLimits[D]);
      if (SliceStrides[D] != 1)
        Out += ':' + std::to_string(SliceStrides[D]);
      Out += ']';
    }
    Out += '}';
    break;
  }
  case HloOpcode::DynamicSlice:
    Out += ", dynamic_slice_sizes=" + intList(DynamicSliceSizes);
    break;
  case HloOpcode::Pad: {
    bool Interior = false;
    for (const PaddingDim &P : Padding)
      Interior |= P.Interior != 0;
    Out += ", padding=";
    for (size_t D = 0; D < Padding.size(); ++D) {
      if (D)
        Out += 'x';
      Out += std::to_string(Padding[D].Lo) + '_' +
             std::to_string(Padding[D].Hi);
      if (Interior)
        Out += '_' + std::to_string(Padding[D].Interior);
    }
    break;
  }
  case HloOpcode::Compare:
    Out += ", direction=";
    Out += comparisonDirectionName(Direction);
    if (CmpType != ComparisonType::Default) {
      Out += ", type=";
      Out += comparisonTypeName(CmpType);
    }
    break;
  case HloOpcode::GetTupleElement:
    Out += ", index=" + std::to_string(TupleIndex);
    break;
  case HloOpcode::Iota:
    Out += ", iota_dimension=" + std::to_string(IotaDimension);
    break;
  case HloOpcode::Fusion:
    Out += ", kind=";
    Out += fusionKindName(Kind);
    break;
  default:
    break;
  }
  size_t Next = 0;
  for (const CalledGroup &G : CalledKeys) {
    Out += ", " + G.Key + "=";
    if (G.Braced)
      Out += '{';
    for (int64_t K = 0; K < G.Count; ++K) {
      if (K)
        Out += ", ";
      Out += hlo::printableName(Called[Next++]->name());
    }
    if (G.Braced)
      Out += '}';
  }
  for (const HloAttribute &A : Attrs)
    Out += ", " + A.Key + "=" + A.Value;
  return Out;
}

std::optional<std::string_view>
HloInstruction::attribute(std::string_view Key) const {
  for (const HloAttribute &A : Attrs)
    if (A.Key == Key)
      return std::string_view(A.Value);
  return std::nullopt;
}

std::optional<int64_t>
HloInstruction::intAttribute(std::string_view Key) const {
  std::optional<std::string_view> Text = attribute(Key);
  if (!Text || Text->empty())
    return std::nullopt;
  int64_t V = 0;
  const char *End = Text->data() + Text->size();
  auto [Ptr, Err] = std::from_chars(Text->data(), End, V);
  if (Err != std::errc() || Ptr != End)
    return std::nullopt;
  return V;
}

std::vector<const HloComputation *>
HloInstruction::calledComputations(std::string_view Key) const {
  // Groups are consecutive runs of Called, in order.
  size_t First = 0;
  for (const CalledGroup &G : CalledKeys) {
    if (G.Key == Key)
      return {Called.begin() + First, Called.begin() + First + G.Count};
    First += size_t(G.Count);
  }
  return {};
}

const HloComputation *
HloInstruction::calledComputation(std::string_view Key) const {
  size_t First = 0;
  for (const CalledGroup &G : CalledKeys) {
    if (G.Key == Key)
      return G.Count ? Called[First] : nullptr;
    First += size_t(G.Count);
  }
  return nullptr;
}

std::string ConvolutionDimensions::str() const {
  auto Part = [](size_t Rank, int64_t A, char AC, int64_t B, char BC,
                 const std::vector<int64_t> &Spatial) {
    std::string P(Rank, '?');
    if (A >= 0 && size_t(A) < Rank)
      P[size_t(A)] = AC;
    if (B >= 0 && size_t(B) < Rank)
      P[size_t(B)] = BC;
    for (size_t K = 0; K < Spatial.size(); ++K)
      if (Spatial[K] >= 0 && size_t(Spatial[K]) < Rank)
        P[size_t(Spatial[K])] = char('0' + K);
    return P;
  };
  size_t Rank = InputSpatial.size() + 2;
  return Part(Rank, InputBatch, 'b', InputFeature, 'f', InputSpatial) + "_" +
         Part(Rank, KernelInputFeature, 'i', KernelOutputFeature, 'o',
              KernelSpatial) +
         "->" +
         Part(Rank, OutputBatch, 'b', OutputFeature, 'f', OutputSpatial);
}

std::string HloComputation::toString() const {
  std::string Out;
  if (IsEntry)
    Out += "ENTRY ";
  Out += hlo::printableName(Name);
  Out += " {\n";
  for (const HloInstruction *I : InstrPtrs) {
    Out += "  ";
    Out += I->toString();
    Out += '\n';
  }
  Out += "}\n";
  return Out;
}

std::string HloModule::toString() const { return printHloModule(*this); }

std::string printHloModule(const HloModule &M) {
  std::string Out = "HloModule " + M.name() + "\n";
  for (const HloComputation *C : M.computations()) {
    Out += '\n';
    Out += C->toString();
  }
  return Out;
}

} // namespace idxmap
