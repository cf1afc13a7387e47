//===- analysis/hlo/HloParseAttributes.cpp - HLO attribute values --------===//
//
// Part of idxmap. The values of HLO attributes: integer lists, slices, padding,
// windows, dim_labels, dimension numbers, called computations, and the
// attributes kept as text.
//
//===----------------------------------------------------------------------===//
#include "HloParserImpl.h"

#include <algorithm>
#include <cctype>

namespace idxmap {

bool HloParserImpl::parseInt(int64_t &Out, const char *What) {
  std::optional<int64_t> V = L.lexInt();
  if (!V)
    return errorHere(std::string("expected ") + What);
  Out = *V;
  return true;
}

bool HloParserImpl::parseIntList(std::vector<int64_t> &Out) {
  Out.clear();
  if (!expect('{'))
    return false;
  if (L.consumeIf('}'))
    return true;
  while (true) {
    int64_t V;
    if (!parseInt(V, "an integer"))
      return false;
    Out.push_back(V);
    if (L.consumeIf('}'))
      return true;
    if (!expect(','))
      return false;
  }
}

bool HloParserImpl::parseSliceList(HloInstruction &I) {
  // {[start:limit(:stride)?], ...}
  I.SliceStarts.clear();
  I.SliceLimits.clear();
  I.SliceStrides.clear();
  if (!expect('{'))
    return false;
  if (L.consumeIf('}'))
    return true;
  while (true) {
    int64_t Start, Limit, Stride = 1;
    if (!expect('[') || !parseInt(Start, "a slice start") || !expect(':') ||
        !parseInt(Limit, "a slice limit"))
      return false;
    if (L.consumeIf(':') && !parseInt(Stride, "a slice stride"))
      return false;
    if (!expect(']'))
      return false;
    I.SliceStarts.push_back(Start);
    I.SliceLimits.push_back(Limit);
    I.SliceStrides.push_back(Stride);
    if (L.consumeIf('}'))
      return true;
    if (!expect(','))
      return false;
  }
}

bool HloParserImpl::parsePadding(std::vector<PaddingDim> &Out) {
  // lo_hi(_interior)? joined by 'x'; empty for a scalar operand.
  Out.clear();
  L.skipSpace();
  char C = L.peekRaw();
  if (!(C == '-' || (C >= '0' && C <= '9')))
    return true;
  while (true) {
    PaddingDim D;
    if (!parseInt(D.Lo, "a low padding") || L.peekRaw() != '_')
      return errorHere("expected padding 'low_high' or "
                       "'low_high_interior'");
    L.setPos(L.pos() + 1);
    if (!parseInt(D.Hi, "a high padding"))
      return false;
    if (L.peekRaw() == '_') {
      L.setPos(L.pos() + 1);
      if (!parseInt(D.Interior, "an interior padding"))
        return false;
    }
    Out.push_back(D);
    if (L.peekRaw() != 'x')
      return true;
    L.setPos(L.pos() + 1);
  }
}

bool HloParserImpl::parseComputationRefs(HloInstruction &I,
                                         std::string_view Key) {
  CalledGroup G;
  G.Key = std::string(Key);
  auto One = [&]() {
    size_t Offset = (L.skipSpace(), L.pos());
    std::string_view Name = L.lexName();
    if (Name.empty())
      return errorHere("expected a computation name");
    PendingCalls.push_back({&I, std::string(Name), Offset});
    ++G.Count;
    return true;
  };
  if (!L.consumeIf('{')) {
    if (!One())
      return false;
    I.CalledKeys.push_back(std::move(G));
    return true;
  }
  G.Braced = true;
  if (!L.consumeIf('}')) {
    while (true) {
      if (!One())
        return false;
      if (L.consumeIf('}'))
        break;
      if (!expect(','))
        return false;
    }
  }
  I.CalledKeys.push_back(std::move(G));
  return true;
}

bool HloParserImpl::keepValueText(HloInstruction &I, std::string_view Key) {
  size_t ValueStart = (L.skipSpace(), L.pos());
  if (!L.skipValue())
    return error(ValueStart, "unterminated value of attribute " + quote(Key));
  std::string_view Value = Text.substr(ValueStart, L.pos() - ValueStart);
  if (Value.empty())
    return error(ValueStart, "expected a value for attribute " + quote(Key));
  I.Attrs.push_back({std::string(Key), std::string(Value)});
  return true;
}

bool HloParserImpl::parseXList(std::vector<int64_t> &Out, const char *What) {
  // `3x3x1`: one integer per dimension, joined by 'x'.
  Out.clear();
  while (true) {
    int64_t V;
    if (!parseInt(V, What))
      return false;
    Out.push_back(V);
    if (L.peekRaw() != 'x')
      return true;
    L.setPos(L.pos() + 1);
  }
}

bool HloParserImpl::parseWindow(std::vector<WindowDim> &Out) {
  // {size=3x3 stride=1x1 pad=0_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1
  //  rhs_reversal=0x1}: each field a list over the window's dimensions.
  Out.clear();
  if (!expect('{'))
    return false;
  std::vector<std::pair<std::string, std::vector<int64_t>>> Fields;
  std::vector<PaddingDim> Pads;
  bool HavePad = false;
  while (!L.consumeIf('}')) {
    size_t KeyOffset = (L.skipSpace(), L.pos());
    std::string_view Key = L.lexWord();
    if (Key.empty() || !L.consumeIf('='))
      return error(KeyOffset, "expected a window field (size=, stride=, "
                              "pad=, lhs_dilate=, rhs_dilate=, "
                              "rhs_reversal=)");
    for (const auto &F : Fields)
      if (F.first == Key)
        return error(KeyOffset, "duplicate window field " + quote(Key));
    if (Key == "pad") {
      if (HavePad)
        return error(KeyOffset, "duplicate window field 'pad'");
      HavePad = true;
      L.skipSpace();
      if (!parsePadding(Pads))
        return false;
      for (const PaddingDim &P : Pads)
        if (P.Interior != 0)
          return error(KeyOffset, "window padding is 'low_high' per "
                                  "dimension");
      continue;
    }
    if (Key != "size" && Key != "stride" && Key != "lhs_dilate" &&
        Key != "rhs_dilate" && Key != "rhs_reversal")
      return error(KeyOffset, "unknown window field " + quote(Key));
    std::vector<int64_t> V;
    L.skipSpace();
    if (!parseXList(V, "a window value"))
      return false;
    Fields.push_back({std::string(Key), std::move(V)});
  }
  size_t Rank = HavePad ? Pads.size() : 0;
  for (const auto &F : Fields)
    Rank = std::max(Rank, F.second.size());
  Out.assign(Rank, WindowDim());
  if (HavePad && Pads.size() != Rank)
    return errorHere("window fields have different numbers of dimensions");
  for (size_t D = 0; HavePad && D < Rank; ++D) {
    Out[D].PadLo = Pads[D].Lo;
    Out[D].PadHi = Pads[D].Hi;
  }
  for (const auto &[Key, V] : Fields) {
    if (V.size() != Rank)
      return errorHere("window fields have different numbers of dimensions");
    for (size_t D = 0; D < Rank; ++D) {
      int64_t X = V[D];
      if (Key == "rhs_reversal") {
        if (X != 0 && X != 1)
          return errorHere("rhs_reversal values are 0 or 1");
        Out[D].Reversal = X == 1;
        continue;
      }
      if (X < 1)
        return errorHere("window " + Key + " must be positive, got " +
                         std::to_string(X));
      if (Key == "size")
        Out[D].Size = X;
      else if (Key == "stride")
        Out[D].Stride = X;
      else if (Key == "lhs_dilate")
        Out[D].BaseDilation = X;
      else
        Out[D].WindowDilation = X;
    }
  }
  return true;
}

bool HloParserImpl::parseDimLabels(ConvolutionDimensions &Out) {
  // b01f_01io->b01f: one character per dimension of the input, the kernel
  // and the output: batch/feature (b, f), input/output feature (i, o),
  // spatial dimensions numbered 0, 1, ...
  size_t Start = (L.skipSpace(), L.pos());
  size_t End = Start;
  while (End < Text.size() &&
         (std::isalnum(static_cast<unsigned char>(Text[End])) ||
          Text[End] == '_' || Text[End] == '-' || Text[End] == '>'))
    ++End;
  std::string_view Labels = Text.substr(Start, End - Start);
  L.setPos(End);
  size_t Us = Labels.find('_'), Arrow = Labels.find("->");
  if (Us == std::string_view::npos || Arrow == std::string_view::npos ||
      Us > Arrow)
    return error(Start, "expected dim_labels like 'b01f_01io->b01f'");
  auto Part = [&](std::string_view P, char A, char B, int64_t &DimA,
                  int64_t &DimB, std::vector<int64_t> &Spatial) {
    DimA = DimB = -1;
    Spatial.assign(P.size(), -1);
    size_t NumSpatial = 0;
    for (size_t K = 0; K < P.size(); ++K) {
      char C = P[K];
      if (C == A && DimA < 0)
        DimA = int64_t(K);
      else if (C == B && DimB < 0)
        DimB = int64_t(K);
      else if (C >= '0' && C <= '9' && size_t(C - '0') < P.size() &&
               Spatial[size_t(C - '0')] < 0)
        Spatial[size_t(C - '0')] = int64_t(K), ++NumSpatial;
      else
        return false;
    }
    if (DimA < 0 || DimB < 0)
      return false;
    Spatial.resize(NumSpatial);
    for (int64_t S : Spatial)
      if (S < 0)
        return false;
    return true;
  };
  ConvolutionDimensions D;
  if (!Part(Labels.substr(0, Us), 'b', 'f', D.InputBatch, D.InputFeature,
            D.InputSpatial) ||
      !Part(Labels.substr(Us + 1, Arrow - Us - 1), 'i', 'o',
            D.KernelInputFeature, D.KernelOutputFeature, D.KernelSpatial) ||
      !Part(Labels.substr(Arrow + 2), 'b', 'f', D.OutputBatch, D.OutputFeature,
            D.OutputSpatial) ||
      D.InputSpatial.size() != D.KernelSpatial.size() ||
      D.InputSpatial.size() != D.OutputSpatial.size())
    return error(Start, "invalid dim_labels " + quote(Labels) +
                            ": each part names b and f (i and o for the "
                            "kernel) once and the same spatial dimensions "
                            "0, 1, ... once");
  Out = std::move(D);
  return true;
}

bool HloParserImpl::parseTypedAttribute(HloInstruction &I, std::string_view Key,
                                        bool &Handled) {
  Handled = true;
  HloOpcode Op = I.Op;
  auto Is = [&](std::initializer_list<HloOpcode> Ops) {
    return std::find(Ops.begin(), Ops.end(), Op) != Ops.end();
  };
  using O = HloOpcode;
  if (Key == "dimensions" &&
      Is({O::Broadcast, O::Transpose, O::Reduce, O::Reverse, O::Concatenate,
          O::Map, O::Sort, O::AllGather, O::AllGatherStart, O::AllToAll,
          O::ReduceScatter, O::Scan}))
    return parseIntList(I.Dimensions);
  if (Key == "slice" && Op == O::Slice)
    return parseSliceList(I);
  if (Key == "padding" && Op == O::Pad)
    return parsePadding(I.Padding);
  if (Key == "dynamic_slice_sizes" && Op == O::DynamicSlice)
    return parseIntList(I.DynamicSliceSizes);
  if (Key == "index" && Op == O::GetTupleElement)
    return parseInt(I.TupleIndex, "a tuple index");
  if (Key == "iota_dimension" && Op == O::Iota)
    return parseInt(I.IotaDimension, "an iota dimension");
  if (Key == "to_apply" || Key == "calls" || Key == "condition" ||
      Key == "body" || Key == "true_computation" ||
      Key == "false_computation" || Key == "branch_computations" ||
      Key == "called_computations" ||
      ((Key == "select" || Key == "scatter") && Op == O::SelectAndScatter))
    return parseComputationRefs(I, Key);
  if (Key == "window" &&
      Is({O::Convolution, O::ReduceWindow, O::SelectAndScatter}))
    return parseWindow(I.Window);
  if (Op == O::Convolution) {
    if (Key == "dim_labels")
      return parseDimLabels(I.mutableOpDims().Conv);
    if (Key == "feature_group_count")
      return parseInt(I.FeatureGroupCount, "a feature group count");
    if (Key == "batch_group_count")
      return parseInt(I.BatchGroupCount, "a batch group count");
  }
  if (Is({O::Dot, O::RaggedDot, O::ScaledDot})) {
    if (Key == "lhs_batch_dims")
      return parseIntList(I.mutableOpDims().Dot.LhsBatch);
    if (Key == "lhs_contracting_dims")
      return parseIntList(I.mutableOpDims().Dot.LhsContracting);
    if (Key == "rhs_batch_dims")
      return parseIntList(I.mutableOpDims().Dot.RhsBatch);
    if (Key == "rhs_contracting_dims")
      return parseIntList(I.mutableOpDims().Dot.RhsContracting);
  }
  if (Op == O::Gather) {
    GatherDimensions &G = I.mutableOpDims().Gather;
    if (Key == "offset_dims")
      return parseIntList(G.OffsetDims);
    if (Key == "collapsed_slice_dims")
      return parseIntList(G.CollapsedSliceDims);
    if (Key == "start_index_map")
      return parseIntList(G.StartIndexMap);
    if (Key == "operand_batching_dims")
      return parseIntList(G.OperandBatchingDims);
    if (Key == "start_indices_batching_dims")
      return parseIntList(G.StartIndicesBatchingDims);
    if (Key == "index_vector_dim")
      return parseInt(G.IndexVectorDim, "an index vector dimension");
    if (Key == "slice_sizes")
      return parseIntList(I.GatherSliceSizes);
  }
  if (Op == O::Scatter) {
    ScatterDimensions &S = I.mutableOpDims().Scatter;
    if (Key == "update_window_dims")
      return parseIntList(S.UpdateWindowDims);
    if (Key == "inserted_window_dims")
      return parseIntList(S.InsertedWindowDims);
    if (Key == "scatter_dims_to_operand_dims")
      return parseIntList(S.ScatterDimsToOperandDims);
    if (Key == "input_batching_dims")
      return parseIntList(S.InputBatchingDims);
    if (Key == "scatter_indices_batching_dims")
      return parseIntList(S.ScatterIndicesBatchingDims);
    if (Key == "index_vector_dim")
      return parseInt(S.IndexVectorDim, "an index vector dimension");
  }
  if (Key == "custom_call_target" && Op == O::CustomCall) {
    size_t Start = (L.skipSpace(), L.pos());
    if (L.peekRaw() != '"' || !L.skipValue())
      return error(Start, "expected a quoted custom_call_target");
    std::string_view Q = Text.substr(Start + 1, L.pos() - Start - 2);
    if (Q.find('\\') != std::string_view::npos)
      return error(Start, "escapes in custom_call_target are not supported");
    I.CustomCallTarget = std::string(Q);
    return true;
  }
  if (Key == "kind" && Op == O::Fusion) {
    size_t Offset = (L.skipSpace(), L.pos());
    std::string_view K = L.lexWord();
    if (K == "kLoop")
      I.Kind = FusionKind::Loop;
    else if (K == "kInput")
      I.Kind = FusionKind::Input;
    else if (K == "kOutput")
      I.Kind = FusionKind::Output;
    else if (K == "kCustom")
      I.Kind = FusionKind::Custom;
    else
      return error(Offset, "unknown fusion kind " + quote(K) +
                               " (expected kLoop, kInput, kOutput or kCustom)");
    return true;
  }
  if (Key == "direction" && Op == O::Compare) {
    size_t Offset = (L.skipSpace(), L.pos());
    std::string_view D = L.lexWord();
    static const std::pair<const char *, ComparisonDirection> Dirs[] = {
        {"EQ", ComparisonDirection::EQ}, {"NE", ComparisonDirection::NE},
        {"LT", ComparisonDirection::LT}, {"LE", ComparisonDirection::LE},
        {"GT", ComparisonDirection::GT}, {"GE", ComparisonDirection::GE}};
    for (const auto &[Name, Dir] : Dirs)
      if (D == Name) {
        I.Direction = Dir;
        return true;
      }
    return error(Offset, "unknown comparison direction " + quote(D));
  }
  if (Key == "type" && Op == O::Compare) {
    size_t Offset = (L.skipSpace(), L.pos());
    std::string_view T = L.lexWord();
    if (T == "FLOAT" || T == "PARTIALORDER")
      I.CmpType = ComparisonType::Float;
    else if (T == "TOTALORDER")
      I.CmpType = ComparisonType::TotalOrder;
    else if (T == "SIGNED")
      I.CmpType = ComparisonType::Signed;
    else if (T == "UNSIGNED")
      I.CmpType = ComparisonType::Unsigned;
    else
      return error(Offset, "unknown comparison type " + quote(T));
    return true;
  }
  Handled = false;
  return true;
}

bool HloParserImpl::parseAttribute(HloInstruction &I, std::string_view Key,
                                   size_t KeyOffset) {
  if (!Info[&I].Attrs.insert(std::string(Key)).second)
    return error(KeyOffset, "duplicate attribute " + quote(Key));
  bool Handled = false;
  if (!parseTypedAttribute(I, Key, Handled))
    return false;
  // metadata, backend_config, frontend_attributes, sharding, ...: kept as
  // written.
  return Handled || keepValueText(I, Key);
}

} // namespace idxmap
