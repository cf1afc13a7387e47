//===- analysis/hlo/InterpretDataMovement.cpp - Copies between layouts ----===//
//
// Part of idxmap. The reference interpreter's data movement ops (iota,
// broadcast, transpose, slice, reverse, bitcast, dynamic-slice,
// dynamic-update-slice, pad, concatenate): each is one strided copy of
// row-major host buffers, an odometer over the outer dimensions and a
// width-specialized loop over the innermost one.
//
//===----------------------------------------------------------------------===//
#include "ElementKernels.h"
#include "InterpretOps.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace idxmap {
namespace hlo {

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &Dims) {
  std::vector<int64_t> S(Dims.size(), 1);
  for (size_t D = Dims.size(); D-- > 1;)
    S[D - 1] = S[D] * Dims[D];
  return S;
}

namespace {

template <int W>
void copyRow(uint8_t *Dst, int64_t DstStep, const uint8_t *Src, int64_t SrcStep,
             int64_t N) {
  for (int64_t I = 0; I < N; ++I)
    std::memcpy(Dst + I * DstStep * W, Src + I * SrcStep * W, W);
}

void copyRowW(int64_t W, uint8_t *Dst, int64_t DstStep, const uint8_t *Src,
              int64_t SrcStep, int64_t N) {
  switch (W) {
  case 1:
    return copyRow<1>(Dst, DstStep, Src, SrcStep, N);
  case 2:
    return copyRow<2>(Dst, DstStep, Src, SrcStep, N);
  case 4:
    return copyRow<4>(Dst, DstStep, Src, SrcStep, N);
  default:
    assert(W == 8);
    return copyRow<8>(Dst, DstStep, Src, SrcStep, N);
  }
}

/// For every index `idx` of the box \p Dims (row-major), copies the element
/// at `Src[SrcBase + sum(idx[d] * SrcStr[d])]` to
/// `Dst[DstBase + sum(idx[d] * DstStr[d])]` (offsets in elements of \p W
/// bytes; strides may be zero or negative).
void stridedCopy(int64_t W, const std::vector<int64_t> &Dims, uint8_t *Dst,
                 int64_t DstBase, const std::vector<int64_t> &DstStr,
                 const uint8_t *Src, int64_t SrcBase,
                 const std::vector<int64_t> &SrcStr) {
  size_t Rank = Dims.size();
  for (int64_t D : Dims)
    if (D == 0)
      return;
  if (Rank == 0) {
    std::memcpy(Dst + DstBase * W, Src + SrcBase * W, size_t(W));
    return;
  }
  std::vector<int64_t> Idx(Rank, 0);
  int64_t DOff = DstBase, SOff = SrcBase;
  const int64_t Inner = Dims[Rank - 1];
  while (true) {
    copyRowW(W, Dst + DOff * W, DstStr[Rank - 1], Src + SOff * W,
             SrcStr[Rank - 1], Inner);
    // Advance the odometer over the outer dimensions.
    size_t D = Rank - 1;
    while (true) {
      if (D == 0)
        return;
      --D;
      ++Idx[D];
      DOff += DstStr[D];
      SOff += SrcStr[D];
      if (Idx[D] < Dims[D])
        break;
      DOff -= DstStr[D] * Dims[D];
      SOff -= SrcStr[D] * Dims[D];
      Idx[D] = 0;
    }
  }
}

/// Row-major strides of the physical order given by a layout: the stride of
/// dimension d is the product of the sizes of the dimensions more minor
/// than d.
std::vector<int64_t> physicalStrides(const Shape &S) {
  std::vector<int64_t> Layout = S.layoutOrDefault();
  std::vector<int64_t> Str(S.Dims.size(), 0);
  int64_t Acc = 1;
  for (int64_t D : Layout) {
    Str[size_t(D)] = Acc;
    Acc *= S.Dims[size_t(D)];
  }
  return Str;
}

/// Start index operand K of a dynamic-(update-)slice, clamped like XLA to
/// [0, Limit].
int64_t clampedStart(const Literal &Index, int64_t Limit) {
  int64_t V = Index.getInt(0);
  return std::min(std::max<int64_t>(V, 0), Limit);
}

Diagnostic diagAt(const HloInstruction &I, std::string Message) {
  return I.parent()->parent()->diagnose(I.sourceOffset(), std::move(Message));
}

} // namespace

Literal evalIota(const HloInstruction &I, const Shape &OutShape) {
  Literal Out(OutShape);
  const std::vector<int64_t> &Dims = I.shape().Dims;
  int64_t Dim = I.iotaDimension();
  int64_t Stride = rowMajorStrides(Dims)[size_t(Dim)];
  int64_t Size = Dims[size_t(Dim)];
  for (int64_t K = 0, N = Out.elementCount(); K < N; ++K)
    Out.setInt(K, (K / Stride) % Size);
  return Out;
}

Literal evalBroadcast(const HloInstruction &I, const Literal &In,
                      const Shape &OutShape) {
  Literal Out(OutShape);
  const std::vector<int64_t> &Dims = I.shape().Dims;
  std::vector<int64_t> InStr = rowMajorStrides(In.shape().Dims);
  std::vector<int64_t> SrcStr(Dims.size(), 0);
  for (size_t K = 0; K < I.dimensions().size(); ++K)
    SrcStr[size_t(I.dimensions()[K])] = InStr[K];
  stridedCopy(byteWidth(Out.elementType()), Dims, Out.data().data(), 0,
              rowMajorStrides(Dims), In.data().data(), 0, SrcStr);
  return Out;
}

Literal evalTranspose(const HloInstruction &I, const Literal &In,
                      const Shape &OutShape) {
  Literal Out(OutShape);
  std::vector<int64_t> InStr = rowMajorStrides(In.shape().Dims);
  std::vector<int64_t> SrcStr;
  for (int64_t D : I.dimensions())
    SrcStr.push_back(InStr[size_t(D)]);
  stridedCopy(byteWidth(Out.elementType()), I.shape().Dims, Out.data().data(),
              0, rowMajorStrides(I.shape().Dims), In.data().data(), 0, SrcStr);
  return Out;
}

Literal evalSlice(const HloInstruction &I, const Literal &In,
                  const Shape &OutShape) {
  Literal Out(OutShape);
  std::vector<int64_t> InStr = rowMajorStrides(In.shape().Dims);
  std::vector<int64_t> SrcStr(InStr.size());
  int64_t Base = 0;
  for (size_t D = 0; D < InStr.size(); ++D) {
    SrcStr[D] = InStr[D] * I.sliceStrides()[D];
    Base += InStr[D] * I.sliceStarts()[D];
  }
  stridedCopy(byteWidth(Out.elementType()), I.shape().Dims, Out.data().data(),
              0, rowMajorStrides(I.shape().Dims), In.data().data(), Base,
              SrcStr);
  return Out;
}

Literal evalReverse(const HloInstruction &I, const Literal &In,
                    const Shape &OutShape) {
  Literal Out(OutShape);
  const std::vector<int64_t> &Dims = I.shape().Dims;
  std::vector<int64_t> SrcStr = rowMajorStrides(Dims);
  int64_t Base = 0;
  for (int64_t D : I.dimensions()) {
    if (Dims[size_t(D)] == 0)
      continue;
    Base += SrcStr[size_t(D)] * (Dims[size_t(D)] - 1);
    SrcStr[size_t(D)] = -SrcStr[size_t(D)];
  }
  stridedCopy(byteWidth(Out.elementType()), Dims, Out.data().data(), 0,
              rowMajorStrides(Dims), In.data().data(), Base, SrcStr);
  return Out;
}

Expected<Literal> evalBitcast(const HloInstruction &I, const Literal &In,
                              const Shape &Result, bool Widen) {
  const Shape &InShape = I.operand(0)->shape();
  const Shape &OutShape = I.shape();
  if (Widen && InShape.Type != OutShape.Type &&
      (widenType(InShape.Type) != InShape.Type ||
       widenType(OutShape.Type) != OutShape.Type))
    return diagAt(I, "a bitcast between element types is not evaluated in f64 "
                     "(EvaluateOptions::Widen)");
  int64_t W = byteWidth(In.elementType());
  if (byteWidth(InShape.Type) != byteWidth(OutShape.Type)) {
    // Between widths (u32[2,2] to u64[2] in JAX's random numbers) the
    // buffer's bytes are the value: taken as they are when both layouts
    // are row-major; pred's bytes must stay 0 or 1, so it is left out.
    Literal Out(Result);
    if (!InShape.hasDefaultLayout() || !OutShape.hasDefaultLayout() ||
        InShape.Type == PrimitiveType::Pred ||
        OutShape.Type == PrimitiveType::Pred ||
        In.data().size() != Out.data().size())
      return diagAt(I, "cannot evaluate '" + I.name() +
                           "': a bitcast between element types of different "
                           "widths with a layout change or pred");
    Out.data() = In.data();
    return Out;
  }
  Literal Out(Result);
  if (InShape.hasDefaultLayout() && OutShape.hasDefaultLayout()) {
    Out.data() = In.data();
    return Out;
  }
  // Logical -> physical order of the operand, then physical -> logical
  // order of the result.
  std::vector<uint8_t> Physical(In.data().size());
  {
    std::vector<int64_t> Layout = InShape.layoutOrDefault();
    std::vector<int64_t> PhysDims, SrcStr;
    std::vector<int64_t> InStr = rowMajorStrides(InShape.Dims);
    for (size_t K = Layout.size(); K-- > 0;) {
      PhysDims.push_back(InShape.Dims[size_t(Layout[K])]);
      SrcStr.push_back(InStr[size_t(Layout[K])]);
    }
    stridedCopy(W, PhysDims, Physical.data(), 0, rowMajorStrides(PhysDims),
                In.data().data(), 0, SrcStr);
  }
  stridedCopy(W, OutShape.Dims, Out.data().data(), 0,
              rowMajorStrides(OutShape.Dims), Physical.data(), 0,
              physicalStrides(OutShape));
  return Out;
}

namespace {

/// The offset, in \p Str's elements, of a window of \p Window's dims in
/// an array of \p Dims, its start indices the scalars In[First ...],
/// clamped.
int64_t windowOffset(const Ops &In, size_t First,
                     const std::vector<int64_t> &Dims,
                     const std::vector<int64_t> &Window,
                     const std::vector<int64_t> &Str) {
  int64_t Base = 0;
  for (size_t D = 0; D < Dims.size(); ++D)
    Base += Str[D] * clampedStart(*In[First + D], Dims[D] - Window[D]);
  return Base;
}

} // namespace

Literal evalDynamicSlice(const HloInstruction &I, const Ops &In,
                         const Shape &OutShape) {
  Literal Out(OutShape);
  const Literal &Src = *In[0];
  const std::vector<int64_t> &Win = I.shape().Dims;
  std::vector<int64_t> InStr = rowMajorStrides(Src.shape().Dims);
  int64_t Base = windowOffset(In, 1, Src.shape().Dims, Win, InStr);
  stridedCopy(byteWidth(Out.elementType()), Win, Out.data().data(), 0,
              rowMajorStrides(Win), Src.data().data(), Base, InStr);
  return Out;
}

Literal evalDynamicUpdateSlice(const HloInstruction &I, const Ops &In) {
  Literal Out = *In[0];
  const std::vector<int64_t> &Win = In[1]->shape().Dims;
  std::vector<int64_t> OutStr = rowMajorStrides(Out.shape().Dims);
  int64_t Base = windowOffset(In, 2, Out.shape().Dims, Win, OutStr);
  stridedCopy(byteWidth(Out.elementType()), Win, Out.data().data(), Base,
              OutStr, In[1]->data().data(), 0, rowMajorStrides(Win));
  return Out;
}

Literal evalPad(const HloInstruction &I, const Literal &In,
                const Literal &Value, const Shape &OutShape) {
  Literal Out(OutShape);
  int64_t W = byteWidth(Out.elementType());
  uint8_t *O = Out.data().data();
  for (int64_t K = 0, N = Out.elementCount(); K < N; ++K)
    std::memcpy(O + K * W, Value.data().data(), size_t(W));
  // Operand element i of dimension d lands at Lo + i * (Interior + 1); keep
  // the operand indices that land inside the result.
  const std::vector<int64_t> &InDims = In.shape().Dims;
  const std::vector<int64_t> &OutDims = I.shape().Dims;
  std::vector<int64_t> InStr = rowMajorStrides(InDims);
  std::vector<int64_t> OutStr = rowMajorStrides(OutDims);
  std::vector<int64_t> Box, DstStr;
  int64_t SrcBase = 0, DstBase = 0;
  for (size_t D = 0; D < InDims.size(); ++D) {
    const PaddingDim &P = I.padding()[D];
    int64_t Step = P.Interior + 1;
    // First i with Lo + i * Step >= 0, last i with Lo + i * Step < OutDim.
    int64_t First = P.Lo >= 0 ? 0 : (-P.Lo + Step - 1) / Step;
    int64_t Last =
        std::min(InDims[D] - 1, OutDims[D] - 1 - P.Lo < 0
                                    ? int64_t(-1)
                                    : (OutDims[D] - 1 - P.Lo) / Step);
    if (Last < First)
      return Out;
    Box.push_back(Last - First + 1);
    DstStr.push_back(OutStr[D] * Step);
    SrcBase += InStr[D] * First;
    DstBase += OutStr[D] * (P.Lo + First * Step);
  }
  stridedCopy(W, Box, O, DstBase, DstStr, In.data().data(), SrcBase, InStr);
  return Out;
}

Literal evalConcatenate(const HloInstruction &I, const Ops &In,
                        const Shape &OutShape) {
  Literal Out(OutShape);
  int64_t Dim = I.dimensions()[0];
  std::vector<int64_t> OutStr = rowMajorStrides(I.shape().Dims);
  int64_t Offset = 0;
  for (const Literal *L : In) {
    const std::vector<int64_t> &Dims = L->shape().Dims;
    stridedCopy(byteWidth(Out.elementType()), Dims, Out.data().data(),
                Offset * OutStr[size_t(Dim)], OutStr, L->data().data(), 0,
                rowMajorStrides(Dims));
    Offset += Dims[size_t(Dim)];
  }
  return Out;
}

} // namespace hlo
} // namespace idxmap
