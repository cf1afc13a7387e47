//===- idxmap/Hlo.h - HLO modules: data model and text parser ---*- C++ -*-===//
//
// Part of idxmap. An in-memory form of the HLO text that XLA prints
// (`HloModule`, computations, `ENTRY`, `ROOT`, typed shapes with layouts,
// attributes), the parser for it, a canonical printer, and `Literal`, the
// host buffer that constants and the reference interpreter use.
//
// Only the C++ standard library is used; nothing here includes LLVM, isl or
// Boost.
//
// Example:
// \code
//   auto M = parseHloModule(R"(
//     HloModule m
//     add { a = f32[] parameter(0)  b = f32[] parameter(1)
//           ROOT s = f32[] add(a, b) }
//     ENTRY main {
//       p = f32[4,8]{1,0} parameter(0)
//       z = f32[] constant(0)
//       ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add
//     })", "m.hlo");
//   if (!M) { std::cerr << M.error().str() << "\n"; return; }
//   const HloInstruction *R = (*M)->entry()->root();
//   // R->opcode() == HloOpcode::Reduce, R->dimensions() == {1},
//   // R->toApply()->name() == "add", R->operand(0)->shape().str() ==
//   "f32[4,8]"
// \endcode
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_HLO_H
#define IDXMAP_HLO_H

#include "idxmap/Diagnostics.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace idxmap {

//===----------------------------------------------------------------------===//
// Element types and shapes
//===----------------------------------------------------------------------===//

/// XLA's element types. `Tuple` marks a tuple shape, `Token` XLA's
/// `token[]` (ordering values of side-effecting ops; neither array nor
/// tuple). The types after `Tuple` parse, print and have indexing maps (which
/// do not depend on the element type), but the interpreter and the code
/// generator work on the *compute types* only (isComputeType: pred, s8..s64,
/// u8..u64, f16, bf16, f32, f64) and name any other type they meet.
enum class PrimitiveType : uint8_t {
  Invalid,
  Pred,
  S8,
  S16,
  S32,
  S64,
  U8,
  U16,
  U32,
  U64,
  F16,
  BF16,
  F32,
  F64,
  Tuple,
  // Parsed and indexed, not evaluated or compiled.
  Token,
  S2,
  S4,
  U2,
  U4,
  C64,
  C128,
  F4E2M1FN,
  F8E3M4,
  F8E4M3,
  F8E4M3FN,
  F8E4M3B11FNUZ,
  F8E4M3FNUZ,
  F8E5M2,
  F8E5M2FNUZ,
  F8E8M0FNU,
};

/// `pred`, `s8`, ..., `bf16`, `f32`, `f64`, `tuple`, `token`, `c64`,
/// `f8e4m3fn`, ...
std::string_view primitiveTypeName(PrimitiveType T);
/// Inverse of primitiveTypeName for array types and `token`; nullopt for
/// anything else.
std::optional<PrimitiveType> parsePrimitiveType(std::string_view Name);
/// The types the interpreter and the code generator handle: pred, s8..s64,
/// u8..u64, f16, bf16, f32, f64. Example: `isComputeType(C64) == false`.
bool isComputeType(PrimitiveType T);
/// Bytes per element as the interpreter stores it (pred, s4, u4, f8 and the
/// other sub-byte types take one byte, c64 eight); 0 for Invalid, Tuple and
/// Token.
int64_t byteWidth(PrimitiveType T);
/// Bits per element (pred: 1).
int bitWidth(PrimitiveType T);
bool isFloatType(PrimitiveType T);          ///< f16, bf16, f32, f64
bool isSignedIntType(PrimitiveType T);      ///< s8..s64
bool isUnsignedIntType(PrimitiveType T);    ///< u8..u64
bool isIntegralType(PrimitiveType T);       ///< s* or u* (not pred)
bool isArrayType(PrimitiveType T);          ///< any element type (not tuple)
/// The unit roundoff (half an ulp of 1) of a float type: 2^-11 for f16,
/// 2^-8 for bf16, 2^-24 for f32, 2^-53 for f64; 0 for the others.
/// Example: 1 + unitRoundoff(F32) rounds to 1 in f32 (a tie, to even).
double unitRoundoff(PrimitiveType T);

/// An array shape (element type, dimensions, optional layout) or a tuple of
/// shapes.
///
/// The layout is XLA's `minor_to_major` list (`f32[4,8]{1,0}` is row-major);
/// an empty `MinorToMajor` means "no layout given", which every consumer
/// treats as the default (row-major) layout. Tiling and memory-space suffixes
/// (`{1,0:T(8,128)S(1)}`) are kept as text (LayoutSuffix) and printed back;
/// no analysis reads them.
///
/// Example: `Shape(PrimitiveType::F32, {4, 8}).str() == "f32[4,8]"`,
/// `Shape::tuple({Shape(F32, {}), Shape(S32, {2})}).str() == "(f32[],
/// s32[2])"`.
struct Shape {
  PrimitiveType Type = PrimitiveType::Invalid;
  std::vector<int64_t> Dims;
  /// Minor-to-major dimension order, empty when no layout was given.
  std::vector<int64_t> MinorToMajor;
  /// The layout's tiling, memory space and other suffixes as written,
  /// without the `:` (`T(8,128)S(1)`); printed back with the layout, not
  /// compared by compatible().
  std::string LayoutSuffix;
  /// Element shapes when Type == Tuple.
  std::vector<Shape> TupleShapes;

  Shape() = default;
  Shape(PrimitiveType T, std::vector<int64_t> Dims,
        std::vector<int64_t> MinorToMajor = {});
  static Shape tuple(std::vector<Shape> Elements);

  bool isTuple() const { return Type == PrimitiveType::Tuple; }
  bool isToken() const { return Type == PrimitiveType::Token; }
  bool isArray() const { return isArrayType(Type); }
  bool isScalar() const { return isArray() && Dims.empty(); }
  int64_t rank() const { return int64_t(Dims.size()); }
  /// Product of the dimensions (1 for a scalar); 0 for a tuple.
  int64_t numElements() const;
  /// Bytes of the elements of an array, of every leaf of a tuple; saturates
  /// at INT64_MAX. Example: `(f32[4], s8[3])` has 19.
  int64_t byteSize() const;
  /// True if the text gave a layout for a non-scalar shape.
  bool hasLayout() const { return !MinorToMajor.empty(); }
  /// The layout, or the default `{rank-1, ..., 1, 0}` when none was given.
  std::vector<int64_t> layoutOrDefault() const;
  /// True if the layout (given or default) is the row-major one.
  bool hasDefaultLayout() const;
  /// Same element type(s) and dimensions, layouts ignored.
  bool compatible(const Shape &Other) const;
  /// Same dimensions (element types and layouts ignored); false for tuples.
  bool sameDims(const Shape &Other) const;
  /// `f32[4,8]`, with `{1,0}` appended when \p WithLayout and a layout was
  /// given; tuples print as `(f32[], s32[2])`.
  std::string str(bool WithLayout = false) const;
  /// Everything equal, including the layout as written.
  bool operator==(const Shape &Other) const;
  bool operator!=(const Shape &Other) const { return !(*this == Other); }
};

/// True if every leaf of \p S (an array, or a tuple nested to any depth)
/// has a compute type; false if a leaf is a token or, e.g., c64.
bool hasOnlyComputeTypes(const Shape &S);

//===----------------------------------------------------------------------===//
// Literal: a host buffer
//===----------------------------------------------------------------------===//

/// A host value of a Shape: an array buffer or a tuple of Literals.
///
/// Storage: `data()` holds the elements in **row-major logical order** (the
/// last dimension varies fastest), whatever layout the shape names; layouts
/// only matter for a physical view of the buffer (bitcast, kernels).
/// Element i occupies bytes `[i * byteWidth, (i + 1) * byteWidth)` in host
/// (little-endian) byte order; pred is one byte 0 or 1; f16 and bf16 are
/// stored as their 16-bit patterns.
///
/// Example:
/// \code
///   Literal L(Shape(PrimitiveType::BF16, {2}));
///   L.setDouble(0, 1.00390625);    // rounds to nearest even: 1.0
///   L.setDouble(1, 3.0);
///   L.getDouble(0) == 1.0; L.getBits(1) == 0x4040;
///   L.toString() == "bf16[2] {1, 3}"
/// \endcode
class Literal {
public:
  /// An empty literal of Invalid shape.
  Literal() = default;
  /// A zero-filled literal of \p S (tuples get zero-filled elements).
  explicit Literal(Shape S);

  /// A rank-0 literal holding \p V converted to \p T (as setDouble does).
  static Literal scalar(PrimitiveType T, double V);
  /// An array literal from doubles in row-major order (converted as setDouble).
  static Literal fromDoubles(const Shape &S, const std::vector<double> &Values);
  /// An array literal from integers in row-major order (converted as setInt).
  static Literal fromInts(const Shape &S, const std::vector<int64_t> &Values);
  /// A tuple of \p Elements.
  static Literal tuple(std::vector<Literal> Elements);

  const Shape &shape() const { return S; }
  PrimitiveType elementType() const { return S.Type; }
  bool isTuple() const { return S.isTuple(); }
  int64_t elementCount() const { return S.numElements(); }

  /// Raw bytes of an array literal (see the class comment for the order).
  const std::vector<uint8_t> &data() const { return Data; }
  std::vector<uint8_t> &data() { return Data; }
  /// Tuple elements (empty for arrays).
  const std::vector<Literal> &elements() const { return Elements; }
  std::vector<Literal> &elements() { return Elements; }

  /// Row-major linear index of \p Index (asserts it is in bounds).
  int64_t linearIndex(const std::vector<int64_t> &Index) const;

  /// The element as a double (exact for every float type; integers may
  /// round above 2^53; pred gives 0 or 1).
  double getDouble(int64_t Linear) const;
  double getDouble(const std::vector<int64_t> &Index) const {
    return getDouble(linearIndex(Index));
  }
  /// Stores \p V converted like XLA's `convert` from f64: floats round to
  /// nearest even (f16/bf16 through f32, as XLA does), integers truncate
  /// toward zero and saturate (NaN becomes 0), pred is `V != 0`.
  void setDouble(int64_t Linear, double V);
  void setDouble(const std::vector<int64_t> &Index, double V) {
    setDouble(linearIndex(Index), V);
  }
  /// The element as an int64 (floats truncate toward zero and saturate, NaN
  /// gives 0; u64 values above INT64_MAX saturate).
  int64_t getInt(int64_t Linear) const;
  int64_t getInt(const std::vector<int64_t> &Index) const {
    return getInt(linearIndex(Index));
  }
  /// Stores \p V converted like XLA's `convert` from s64 (integers wrap,
  /// floats round to nearest even, pred is `V != 0`).
  void setInt(int64_t Linear, int64_t V);
  /// The raw bit pattern of the element, zero-extended.
  uint64_t getBits(int64_t Linear) const;
  /// Stores the low byteWidth bytes of \p Bits.
  void setBits(int64_t Linear, uint64_t Bits);

  /// Fills the array (every element of every tuple element) with
  /// pseudo-random values from a seeded generator (SplitMix64, identical on
  /// every platform): floats uniform in [Lo, Hi) then rounded to the type,
  /// integers uniform in [ceil(Lo), floor(Hi)] clamped to the type's range,
  /// pred 0 or 1. Tuple element k uses seed `Seed + k`.
  void fillRandom(uint64_t Seed, double Lo = -1.0, double Hi = 1.0);

  /// `f32[2,2] {1, 2, 3, 4}` (elements flat, row-major; at most
  /// \p MaxElements, then `...`); tuples print `(elem, elem)`.
  std::string toString(int64_t MaxElements = 64) const;
  /// The element formatted as the HLO printer writes it: the shortest
  /// decimal that reads back to the same value (`0.5`, `-inf`, `nan`),
  /// integers in decimal, pred `true`/`false`.
  std::string elementString(int64_t Linear) const;

  /// Same shape (layouts ignored) and identical bytes.
  bool bitwiseEqual(const Literal &Other) const;

private:
  Shape S;
  std::vector<uint8_t> Data;
  std::vector<Literal> Elements;
};

//===----------------------------------------------------------------------===//
// Opcodes and attributes
//===----------------------------------------------------------------------===//

/// The HLO operations idxmap parses, interprets and analyzes.
enum class HloOpcode : uint8_t {
  // Leaves.
  Parameter,
  Constant,
  Iota,
  // Data movement.
  Broadcast,
  Reshape,
  Bitcast,
  Transpose,
  Copy,
  Slice,
  DynamicSlice,
  DynamicUpdateSlice,
  Pad,
  Reverse,
  Concatenate,
  Reduce,
  // Elementwise, special arity.
  Convert,
  Select,
  Clamp,
  Compare,
  // Elementwise unary.
  Abs,
  Negate,
  Exp,
  Expm1,
  Log,
  Log1p,
  Tanh,
  Logistic,
  Sqrt,
  Rsqrt,
  Cbrt,
  Sin,
  Cos,
  Tan,
  Floor,
  Ceil,
  RoundNearestEven,
  RoundNearestAfz,
  Sign,
  Not,
  IsFinite,
  PopCount,
  Clz,
  // Elementwise binary.
  Add,
  Subtract,
  Multiply,
  Divide,
  Maximum,
  Minimum,
  Power,
  Remainder,
  Atan2,
  And,
  Or,
  Xor,
  ShiftLeft,
  ShiftRightLogical,
  ShiftRightArithmetic,
  // Structure.
  Tuple,
  GetTupleElement,
  Fusion,
  Call,
  // Parsed, printed and (where noted in docs/CLI.md) indexed or evaluated;
  // the rest are opaque to the analyses. XLA's spelling in opcodeName.
  Acos,
  Acosh,
  AddDependency,
  AfterAll,
  AllGather,
  AllGatherDone,
  AllGatherStart,
  AllReduce,
  AllReduceDone,
  AllReduceStart,
  AllToAll,
  Asin,
  Asinh,
  AsyncDone,
  AsyncStart,
  AsyncUpdate,
  Atan,
  Atanh,
  BatchNormGrad,
  BatchNormInference,
  BatchNormTraining,
  BitcastConvert,
  Cholesky,
  CollectiveBroadcast,
  CollectivePermute,
  CollectivePermuteDone,
  CollectivePermuteStart,
  CollectiveReduce,
  Complex,
  Conditional,
  Convolution,
  CopyDone,
  CopyStart,
  Cosh,
  CustomCall,
  Domain,
  Dot,
  DynamicReshape,
  Erf,
  Fft,
  Gather,
  GetDimensionSize,
  Imag,
  Infeed,
  Map,
  Mulhi,
  OptimizationBarrier,
  Outfeed,
  PartitionId,
  RaggedAllToAll,
  RaggedDot,
  Real,
  Recv,
  RecvDone,
  ReducePrecision,
  ReduceScatter,
  ReduceWindow,
  ReplicaId,
  Rng,
  RngBitGenerator,
  RngGetAndUpdateState,
  ScaledDot,
  Scan,
  Scatter,
  SelectAndScatter,
  Send,
  SendDone,
  SetDimensionSize,
  Shuffle,
  Sinh,
  Sort,
  StochasticConvert,
  TopK,
  TriangularSolve,
  While,
};

/// XLA's spelling: `dynamic-update-slice`, `exponential`, `opt-barrier`.
std::string_view opcodeName(HloOpcode Op);
/// Inverse of opcodeName over XLA's whole opcode list; nullopt for a name
/// XLA does not have.
std::optional<HloOpcode> parseOpcode(std::string_view Name);
/// One-operand elementwise ops that the interpreter and the code generator
/// compute (abs ... count-leading-zeros; not convert).
bool isUnaryElementwise(HloOpcode Op);
/// Two-operand elementwise ops that the interpreter and the code generator
/// compute (add ... shift-right-arithmetic; not compare).
bool isBinaryElementwise(HloOpcode Op);
/// The float functions after Call in HloOpcode that the interpreter
/// computes with libm and the emitters with libdevice: erf, acos, acosh,
/// asin, asinh, atan, atanh, cosh, sinh. Example:
/// `isFloatFunction(HloOpcode::Erf)`, `!isFloatFunction(HloOpcode::Exp)`
/// (a unary elementwise op of its own).
bool isFloatFunction(HloOpcode Op);
/// Every computed elementwise op: unary, binary, convert, select, clamp,
/// compare, reduce-precision and the float functions.
bool isElementwise(HloOpcode Op);
/// Ops no kernel computes inside a fusion (a kernel or library call of
/// their own: dot, custom-call, while, collectives, ...): the ops after
/// Call in HloOpcode, except gather, which the fused element emitter reads
/// through its map, reduce-precision and the float functions. Example:
/// `isOpaqueToEmitters(HloOpcode::Dot)` is true,
/// `isOpaqueToEmitters(HloOpcode::Gather)` false.
bool isOpaqueToEmitters(HloOpcode Op);
/// Ops whose output element i reads element i of each operand, computed or
/// not: isElementwise plus mulhi, complex, real, imag, stochastic-convert (and
/// bitcast-convert between types of one width, which the caller checks). Their
/// indexing is the identity.
bool hasElementwiseIndexing(HloOpcode Op);

/// `compare`'s `direction=`.
enum class ComparisonDirection : uint8_t { EQ, NE, LT, LE, GT, GE };
std::string_view comparisonDirectionName(ComparisonDirection D);

/// `compare`'s optional `type=`. Only TotalOrder changes the result (for
/// floats: -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN).
enum class ComparisonType : uint8_t {
  Default,
  Float,
  TotalOrder,
  Signed,
  Unsigned
};
std::string_view comparisonTypeName(ComparisonType T); ///< "" for Default

/// `fusion`'s `kind=`.
enum class FusionKind : uint8_t { Loop, Input, Output, Custom };
std::string_view fusionKindName(FusionKind K); ///< `kLoop`, ...

/// One dimension of `pad`'s `padding=lo_hi_interior` (lo/hi may be negative).
struct PaddingDim {
  int64_t Lo = 0;
  int64_t Hi = 0;
  int64_t Interior = 0;
  bool operator==(const PaddingDim &O) const {
    return Lo == O.Lo && Hi == O.Hi && Interior == O.Interior;
  }
};


/// One spatial dimension of a `window={...}` (convolution, reduce-window,
/// select-and-scatter): `size=3x3 stride=2x1 pad=1_1x0_2 lhs_dilate=1x2
/// rhs_dilate=2x1 rhs_reversal=0x1`. Window position w of output index o
/// reads the (base-dilated, padded) input at `o * Stride + w *
/// WindowDilation - PadLo`, which is a real input element when it is a
/// multiple of BaseDilation (XLA's lhs_dilate) and in range.
struct WindowDim {
  int64_t Size = 1;
  int64_t Stride = 1;
  int64_t PadLo = 0;
  int64_t PadHi = 0;
  int64_t WindowDilation = 1; ///< rhs_dilate
  int64_t BaseDilation = 1;   ///< lhs_dilate
  bool Reversal = false;      ///< rhs_reversal
  bool operator==(const WindowDim &O) const {
    return Size == O.Size && Stride == O.Stride && PadLo == O.PadLo &&
           PadHi == O.PadHi && WindowDilation == O.WindowDilation &&
           BaseDilation == O.BaseDilation && Reversal == O.Reversal;
  }
};

/// `dim_labels=b01f_01io->b01f` of convolution: which dimension of the
/// input (lhs), kernel (rhs) and output plays which role. Spatial lists are
/// in spatial order (label digit 0, 1, ...).
///
/// Example: `bf01_oi01->bf01` has InputBatch 0, InputFeature 1,
/// InputSpatial {2, 3}, KernelOutputFeature 0, KernelInputFeature 1,
/// KernelSpatial {2, 3}, OutputBatch 0, OutputFeature 1, OutputSpatial {2, 3}.
struct ConvolutionDimensions {
  int64_t InputBatch = 0, InputFeature = 1;
  std::vector<int64_t> InputSpatial;
  int64_t KernelInputFeature = 0, KernelOutputFeature = 1;
  std::vector<int64_t> KernelSpatial;
  int64_t OutputBatch = 0, OutputFeature = 1;
  std::vector<int64_t> OutputSpatial;
  /// `b01f_01io->b01f` (the inverse of the parser).
  std::string str() const;
};

/// `lhs_batch_dims`, `lhs_contracting_dims`, `rhs_batch_dims`,
/// `rhs_contracting_dims` of dot (and ragged-dot, scaled-dot). The output is
/// batch dims, then lhs free dims, then rhs free dims, each in order.
struct DotDimensions {
  std::vector<int64_t> LhsBatch, LhsContracting, RhsBatch, RhsContracting;
};

/// Gather's dimension numbers (`offset_dims`, `collapsed_slice_dims`,
/// `start_index_map`, `index_vector_dim`, `operand_batching_dims`,
/// `start_indices_batching_dims`); `slice_sizes` is gatherSliceSizes().
struct GatherDimensions {
  std::vector<int64_t> OffsetDims, CollapsedSliceDims, StartIndexMap,
      OperandBatchingDims, StartIndicesBatchingDims;
  int64_t IndexVectorDim = -1;
};

/// Scatter's dimension numbers (`update_window_dims`,
/// `inserted_window_dims`, `scatter_dims_to_operand_dims`,
/// `index_vector_dim`, `input_batching_dims`,
/// `scatter_indices_batching_dims`).
struct ScatterDimensions {
  std::vector<int64_t> UpdateWindowDims, InsertedWindowDims,
      ScatterDimsToOperandDims, InputBatchingDims, ScatterIndicesBatchingDims;
  int64_t IndexVectorDim = -1;
};

/// An attribute the data model does not type, kept as written so that the
/// module prints back with it: `Key` = `backend_config`, `Value` = the
/// value's text exactly as in the source (`{"x":1}`, `"abc"`, `true`).
struct HloAttribute {
  std::string Key;
  std::string Value;
};

/// A group of called computations under one attribute key, in source
/// order: `to_apply=add`, `condition=c, body=b`,
/// `branch_computations={b0, b1}` (Braced: printed with braces).
struct CalledGroup {
  std::string Key;
  int64_t Count = 0;
  bool Braced = false;
};

class HloComputation;
class HloModule;

//===----------------------------------------------------------------------===//
// HloInstruction
//===----------------------------------------------------------------------===//

/// One instruction: opcode, name, shape, operands and the typed attributes
/// of its opcode. Owned by its HloComputation; pointers are stable.
///
/// Attribute accessors return empty/neutral values for opcodes that do not
/// have the attribute.
class HloInstruction {
public:
  HloOpcode opcode() const { return Op; }
  const std::string &name() const { return Name; }
  const Shape &shape() const { return Sh; }
  const std::vector<HloInstruction *> &operands() const { return Operands; }
  int64_t operandCount() const { return int64_t(Operands.size()); }
  const HloInstruction *operand(int64_t I) const { return Operands.at(I); }
  /// Instructions of the same computation that use this one, in
  /// instruction order, each listed once.
  const std::vector<HloInstruction *> &users() const { return Users; }
  const HloComputation *parent() const { return Parent; }
  /// Position in the parent's instruction list.
  int64_t index() const { return Index; }
  bool isRoot() const;

  /// `parameter(N)`: N.
  int64_t parameterNumber() const { return ParameterNumber; }
  /// `dimensions={...}` of broadcast, transpose, reduce, reverse, map,
  /// sort, concatenate (one entry), all-gather, all-to-all, reduce-scatter
  /// (one entry).
  const std::vector<int64_t> &dimensions() const { return Dimensions; }
  /// `slice={[start:limit:stride], ...}`.
  const std::vector<int64_t> &sliceStarts() const { return SliceStarts; }
  const std::vector<int64_t> &sliceLimits() const { return SliceLimits; }
  const std::vector<int64_t> &sliceStrides() const { return SliceStrides; }
  /// `padding=...` of pad, one entry per dimension.
  const std::vector<PaddingDim> &padding() const { return Padding; }
  ComparisonDirection comparisonDirection() const { return Direction; }
  ComparisonType comparisonType() const { return CmpType; }
  /// `index=` of get-tuple-element.
  int64_t tupleIndex() const { return TupleIndex; }
  /// `iota_dimension=` of iota.
  int64_t iotaDimension() const { return IotaDimension; }
  /// `dynamic_slice_sizes={...}` of dynamic-slice.
  const std::vector<int64_t> &dynamicSliceSizes() const {
    return DynamicSliceSizes;
  }
  /// `kind=` of fusion.
  FusionKind fusionKind() const { return Kind; }
  /// `window={...}` of convolution, reduce-window, select-and-scatter: one
  /// entry per spatial (or, for reduce-window, every) dimension.
  const std::vector<WindowDim> &window() const { return Window; }
  /// `dim_labels=` of convolution.
  const ConvolutionDimensions &convolutionDimensions() const {
    return opDims().Conv;
  }
  /// `feature_group_count=` / `batch_group_count=` of convolution (1 when
  /// not given).
  int64_t featureGroupCount() const { return FeatureGroupCount; }
  int64_t batchGroupCount() const { return BatchGroupCount; }
  /// Dimension numbers of dot, ragged-dot and scaled-dot.
  const DotDimensions &dotDimensions() const { return opDims().Dot; }
  /// Dimension numbers and `slice_sizes={...}` of gather.
  const GatherDimensions &gatherDimensions() const { return opDims().Gather; }
  const std::vector<int64_t> &gatherSliceSizes() const {
    return GatherSliceSizes;
  }
  /// Dimension numbers of scatter.
  const ScatterDimensions &scatterDimensions() const {
    return opDims().Scatter;
  }
  /// `custom_call_target="..."` of custom-call, without the quotes.
  const std::string &customCallTarget() const { return CustomCallTarget; }
  /// The attributes kept as text (everything not typed above), in source
  /// order: `metadata`, `backend_config`, `sharding`, `replica_groups`,
  /// `is_stable`, `indices_are_sorted`, `operand_precision`, ...
  const std::vector<HloAttribute> &attributes() const { return Attrs; }
  /// The text of kept attribute \p Key, or nullopt.
  /// Example: for `s = f32[8] sort(p), dimensions={0}, is_stable=true,
  /// to_apply=lt`, `attribute("is_stable") == "true"`.
  std::optional<std::string_view> attribute(std::string_view Key) const;
  /// Kept attribute \p Key as a decimal integer (an optional `-`, digits
  /// only, within int64), or nullopt when it is missing or not one.
  /// Example: for `r = f32[8] reduce-precision(p), exponent_bits=5,
  /// mantissa_bits=10`, `intAttribute("mantissa_bits") == 10`.
  std::optional<int64_t> intAttribute(std::string_view Key) const;
  /// Every called computation, in source order: `to_apply=` (reduce, call,
  /// map, sort, scatter, reduce-window, all-reduce, ...), `calls=` (fusion,
  /// async-start), `condition=` then `body=` (while), the branches of a
  /// conditional, `select=` then `scatter=` (select-and-scatter),
  /// `called_computations=` (custom-call).
  const std::vector<HloComputation *> &calledComputations() const {
    return Called;
  }
  /// The attribute keys of calledComputations(), grouped.
  const std::vector<CalledGroup> &calledGroups() const { return CalledKeys; }
  /// The computations named by attribute \p Key (`body`, `condition`,
  /// `true_computation`, `branch_computations`, ...), in order.
  /// Example: for `w = (s32[], f32[4]) while(t), condition=c, body=b`,
  /// `calledComputations("body")` is {b}.
  std::vector<const HloComputation *>
  calledComputations(std::string_view Key) const;
  /// The first computation under \p Key, or nullptr.
  const HloComputation *calledComputation(std::string_view Key) const;
  /// The single `to_apply=`/`calls=` computation, or nullptr.
  const HloComputation *toApply() const {
    return Called.empty() ? nullptr : Called.front();
  }
  const HloComputation *fusedComputation() const { return toApply(); }
  /// The value of a constant.
  const Literal &literal() const { return Value; }
  /// True for a constant printed with its value elided (`constant({...})`)
  /// or whose element type is not a compute type (its value text is kept
  /// and printed back): it parses (zero-filled) but cannot be evaluated.
  bool literalElided() const { return Elided; }
  /// The value text of a constant kept as written (non-compute types).
  const std::string &literalText() const { return ValueText; }
  /// The opcode as written when it is one of XLA's async shorthands:
  /// `fusion-start`, `custom-call-done`, `all-gather-start` ... written for
  /// async-start/-update/-done wrapping that op (`opcode()` is AsyncStart,
  /// AsyncUpdate or AsyncDone then); empty otherwise.
  const std::string &asyncSpelling() const { return AsyncSpelling; }

  /// Byte offset of the instruction's name in the module source (for
  /// diagnostics: `parent()->parent()->diagnose(sourceOffset(), ...)`).
  size_t sourceOffset() const { return Offset; }

  /// The canonical one-line form the printer writes, without indentation:
  /// `ROOT r = f32[4]{0} reduce(p, z), dimensions={1}, to_apply=add`.
  std::string toString() const;

private:
  friend class HloParserImpl;
  friend class HloComputation;

  HloOpcode Op = HloOpcode::Parameter;
  std::string Name;
  Shape Sh;
  std::vector<HloInstruction *> Operands;
  std::vector<HloInstruction *> Users;
  HloComputation *Parent = nullptr;
  int64_t Index = -1;
  size_t Offset = 0;

  int64_t ParameterNumber = -1;
  std::vector<int64_t> Dimensions;
  std::vector<int64_t> SliceStarts, SliceLimits, SliceStrides;
  std::vector<PaddingDim> Padding;
  ComparisonDirection Direction = ComparisonDirection::EQ;
  ComparisonType CmpType = ComparisonType::Default;
  int64_t TupleIndex = -1;
  int64_t IotaDimension = -1;
  std::vector<int64_t> DynamicSliceSizes;
  FusionKind Kind = FusionKind::Loop;
  std::vector<HloComputation *> Called;
  std::vector<CalledGroup> CalledKeys;
  Literal Value;
  bool Elided = false;
  std::string ValueText;
  std::string AsyncSpelling;
  std::vector<WindowDim> Window;
  int64_t FeatureGroupCount = 1;
  int64_t BatchGroupCount = 1;
  std::vector<int64_t> GatherSliceSizes;
  /// The dimension numbers of convolution, dot, gather and scatter, held
  /// only by the instructions that have them: most instructions have none,
  /// and inline they would make every instruction several hundred bytes
  /// larger.
  struct OpDimensions {
    ConvolutionDimensions Conv;
    DotDimensions Dot;
    GatherDimensions Gather;
    ScatterDimensions Scatter;
  };
  std::unique_ptr<OpDimensions> ExtraDims;
  const OpDimensions &opDims() const;
  OpDimensions &mutableOpDims();
  std::string CustomCallTarget;
  std::vector<HloAttribute> Attrs;
};

//===----------------------------------------------------------------------===//
// HloComputation and HloModule
//===----------------------------------------------------------------------===//

/// A named list of instructions in definition order (every operand is
/// defined before its users), with a root and parameters.
class HloComputation {
public:
  const std::string &name() const { return Name; }
  /// All instructions in order.
  const std::vector<HloInstruction *> &instructions() const {
    return InstrPtrs;
  }
  int64_t instructionCount() const { return int64_t(InstrPtrs.size()); }
  const HloInstruction *root() const { return Root; }
  /// Parameters by parameter number.
  const std::vector<HloInstruction *> &parameters() const { return Params; }
  int64_t parameterCount() const { return int64_t(Params.size()); }
  const HloInstruction *parameter(int64_t N) const { return Params.at(N); }
  /// The instruction named \p Name (with or without a leading `%`), or
  /// nullptr.
  const HloInstruction *findInstruction(std::string_view Name) const;
  bool isEntry() const { return IsEntry; }
  const HloModule *parent() const { return Parent; }
  /// Byte offset of the computation's name in the module source.
  size_t sourceOffset() const { return Offset; }

  /// The computation in canonical form, `name {` ... `}` (ENTRY prefixed).
  std::string toString() const;

private:
  friend class HloParserImpl;

  std::string Name;
  std::vector<std::unique_ptr<HloInstruction>> Instrs;
  std::vector<HloInstruction *> InstrPtrs;
  std::vector<HloInstruction *> Params;
  HloInstruction *Root = nullptr;
  bool IsEntry = false;
  HloModule *Parent = nullptr;
  size_t Offset = 0;
};

/// The instructions \p Roots are computed from, the roots included, through
/// operands, never past (nor into) an instruction of \p Stop; with
/// \p ParametersOnly, just the parameters among them. Sorted: parameters by
/// number, other instructions by their place in the computation.
///
/// Example: in `e = exp(p0)`, `c = concatenate(e, p1)`, `ROOT r =
/// multiply(c, p2)`: operandClosure({r}, {c}) is {p2, r}; with
/// ParametersOnly {p2}; operandClosure({e}) is {p0, e}.
std::vector<const HloInstruction *>
operandClosure(const std::vector<const HloInstruction *> &Roots,
               const std::vector<const HloInstruction *> &Stop = {},
               bool ParametersOnly = false);

/// A parsed module: computations in text order (callees usually first) and
/// the entry computation (the one marked ENTRY, else the last one).
class HloModule {
public:
  const std::string &name() const { return Name; }
  const std::vector<HloComputation *> &computations() const {
    return CompPtrs;
  }
  const HloComputation *entry() const { return Entry; }
  /// The computation named \p Name (with or without `%`), or nullptr.
  const HloComputation *findComputation(std::string_view Name) const;
  /// The instruction named \p Name in any computation (the first in
  /// computation order), or nullptr. Example: in a module whose fused
  /// computation holds `t = f32[4,8] transpose(p0)`, findInstruction("t")
  /// is that transpose, though the ENTRY has no `t`.
  const HloInstruction *findInstruction(std::string_view Name) const;
  /// Every fusion instruction of the module, in computation/instruction order.
  std::vector<const HloInstruction *> fusions() const;

  /// The source text and file name the module was parsed from.
  const std::string &source() const { return Source; }
  const std::string &fileName() const { return FileName; }
  /// A diagnostic pointing at byte \p Offset of the source.
  Diagnostic diagnose(size_t Offset, std::string Message) const;

  /// The canonical short form (see printHloModule).
  std::string toString() const;

private:
  friend class HloParserImpl;

  std::string Name;
  std::vector<std::unique_ptr<HloComputation>> Comps;
  std::vector<HloComputation *> CompPtrs;
  HloComputation *Entry = nullptr;
  std::string Source;
  std::string FileName;
};

//===----------------------------------------------------------------------===//
// Parsing and printing
//===----------------------------------------------------------------------===//

/// Sizes the parser accepts. Each is checked while the text is read, before
/// anything is allocated from it, so that every later pass (verifier,
/// printer, interpreter, indexing, partitioner, codegen) may recurse on
/// nesting and size memory from shapes. Exceeding one is a diagnostic at the
/// offending token, as clang reports bracket depth:
/// \code
///   m.hlo:3:7: error: calls nested too deeply (limit 256)
/// \endcode
struct HloLimits {
  /// Tuple shapes nested deeper than this (`((f32[]))` has depth 2).
  static constexpr int MaxTupleDepth = 64;
  /// Dimensions of one shape (a constant's value nests one brace per
  /// dimension).
  static constexpr int MaxRank = 256;
  /// Computations on the longest chain of calls (call, fusion, reduce's
  /// to_apply), the ENTRY computation included.
  static constexpr int MaxCallDepth = 256;
  /// Bytes of all constants' values together (an elided `{...}` value is
  /// zero-filled, so its shape counts too).
  static constexpr int64_t MaxConstantBytes = int64_t(1) << 28;
};

/// Parses HLO text as XLA prints it: every opcode of XLA's list (the ones
/// after `Call` in HloOpcode are opaque to the interpreter and the emitters
/// unless docs/CLI.md says otherwise), the module header with any
/// attributes or no header at all, the `FileNames`/`FunctionNames`/
/// `FileLocations`/`StackFrames` sections of XLA dumps, computations with or
/// without signatures, `%` prefixes, operand shapes (`add(f32[4] %a, f32[4]
/// %b)`), layouts after a space and with tiling suffixes, array constants
/// written as one scalar, async shorthands (`fusion-start`), `/*...*/` and
/// `//` comments. Attributes the data model does not type (`metadata`,
/// `backend_config`, `sharding`, ...) are kept as text. Checks operand
/// references, called computations and the shapes of every op that has a
/// shape rule (element types, ranks, dimensions).
///
/// A fusion computation whose root is one variadic op (a `reduce` or
/// `reduce-window` of several operands, as XLA writes for an argmax or a
/// max-pool with indices) gets a `tuple` root of one `get-tuple-element` per
/// output, so that every fusion's outputs are the operands of its root:
/// \code
///   // ROOT r = (f32[8], s32[8]) reduce(x, i, c0, c1), dimensions={1}, ...
///   // becomes
///   //   r.out.0 = f32[8] get-tuple-element(r), index=0
///   //   r.out.1 = s32[8] get-tuple-element(r), index=1
///   //   ROOT r.outs.0 = (f32[8], s32[8]) tuple(r.out.0, r.out.1)
/// \endcode
///
/// Errors are Diagnostics at the offending token:
/// \code
///   auto M = parseHloModule("HloModule m\nENTRY e {\n  p = f32[4]
///   parameter(0)\n"
///                           "  ROOT d = f32[4] dott(p, p)\n}\n", "m.hlo");
///   // M.error().str():
///   // m.hlo:4:19: error: unknown opcode 'dott'
///   //   ROOT d = f32[4] dott(p, p)
///   //                   ^
/// \endcode
Expected<std::unique_ptr<HloModule>> parseHloModule(std::string_view Text,
                                                    const std::string &FileName);

/// Prints \p M in a canonical form: `HloModule name`, then each
/// computation (`ENTRY` marked) with one instruction per line, no `%`
/// prefixes, layouts only where the source gave them, the typed attributes
/// in a fixed order, then the attributes kept as text, as written. The
/// output parses back to the same module and prints identically.
std::string printHloModule(const HloModule &M);

} // namespace idxmap

#endif // IDXMAP_HLO_H
