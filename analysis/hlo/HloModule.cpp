//===- analysis/hlo/HloModule.cpp - HLO data model and printer ------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"

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

bool HloInstruction::isRoot() const { return Parent && Parent->root() == this; }

const HloInstruction *
HloComputation::findInstruction(std::string_view N) const {
  N = stripPercent(N);
  for (const HloInstruction *I : InstrPtrs)
    if (I->name() == N)
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

std::string HloInstruction::toString() const {
  std::string Out;
  if (isRoot())
    Out += "ROOT ";
  Out += Name;
  Out += " = ";
  Out += Sh.str(/*WithLayout=*/true);
  Out += ' ';
  Out += opcodeName(Op);
  Out += '(';
  if (Op == HloOpcode::Parameter) {
    Out += std::to_string(ParameterNumber);
  } else if (Op == HloOpcode::Constant) {
    if (Elided) {
      Out += "{...}";
    } else {
      int64_t Next = 0;
      printLiteralValue(Value, 0, Next, Out);
    }
  } else {
    for (size_t K = 0; K < Operands.size(); ++K) {
      if (K)
        Out += ", ";
      Out += Operands[K]->name();
    }
  }
  Out += ')';

  switch (Op) {
  case HloOpcode::Broadcast:
  case HloOpcode::Transpose:
  case HloOpcode::Reverse:
  case HloOpcode::Concatenate:
  case HloOpcode::Reduce:
    Out += ", dimensions=" + intList(Dimensions);
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
  if (!Called.empty()) {
    Out += Op == HloOpcode::Fusion ? ", calls=" : ", to_apply=";
    if (Called.size() == 1) {
      Out += Called.front()->name();
    } else {
      Out += '{';
      for (size_t K = 0; K < Called.size(); ++K) {
        if (K)
          Out += ", ";
        Out += Called[K]->name();
      }
      Out += '}';
    }
  }
  return Out;
}

std::string HloComputation::toString() const {
  std::string Out;
  if (IsEntry)
    Out += "ENTRY ";
  Out += Name;
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
