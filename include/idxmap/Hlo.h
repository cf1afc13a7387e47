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

/// XLA's element types that idxmap supports. `Tuple` marks a tuple shape.
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
};

/// `pred`, `s8`, ..., `bf16`, `f32`, `f64`, `tuple`.
std::string_view primitiveTypeName(PrimitiveType T);
/// Inverse of primitiveTypeName for array types; nullopt for anything else.
std::optional<PrimitiveType> parsePrimitiveType(std::string_view Name);
/// Bytes per element (pred is one byte); 0 for Invalid and Tuple.
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
/// (`{1,0:T(8,128)S(1)}`) are accepted by the parser and dropped.
///
/// Example: `Shape(PrimitiveType::F32, {4, 8}).str() == "f32[4,8]"`,
/// `Shape::tuple({Shape(F32, {}), Shape(S32, {2})}).str() == "(f32[],
/// s32[2])"`.
struct Shape {
  PrimitiveType Type = PrimitiveType::Invalid;
  std::vector<int64_t> Dims;
  /// Minor-to-major dimension order, empty when no layout was given.
  std::vector<int64_t> MinorToMajor;
  /// Element shapes when Type == Tuple.
  std::vector<Shape> TupleShapes;

  Shape() = default;
  Shape(PrimitiveType T, std::vector<int64_t> Dims,
        std::vector<int64_t> MinorToMajor = {});
  static Shape tuple(std::vector<Shape> Elements);

  bool isTuple() const { return Type == PrimitiveType::Tuple; }
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
};

/// XLA's spelling: `dynamic-update-slice`, `exponential`, `round-nearest-even`.
std::string_view opcodeName(HloOpcode Op);
/// Inverse of opcodeName; nullopt for an unknown or unsupported name.
std::optional<HloOpcode> parseOpcode(std::string_view Name);
/// One-operand elementwise ops (abs ... count-leading-zeros; not convert).
bool isUnaryElementwise(HloOpcode Op);
/// Two-operand elementwise ops (add ... shift-right-arithmetic; not compare).
bool isBinaryElementwise(HloOpcode Op);
/// Every elementwise op: unary, binary, convert, select, clamp, compare.
bool isElementwise(HloOpcode Op);

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
  /// `dimensions={...}` of broadcast, transpose, reduce, reverse,
  /// concatenate (one entry).
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
  /// `to_apply=` (reduce, call) or `calls=` (fusion).
  const std::vector<HloComputation *> &calledComputations() const {
    return Called;
  }
  /// The single `to_apply=`/`calls=` computation, or nullptr.
  const HloComputation *toApply() const {
    return Called.empty() ? nullptr : Called.front();
  }
  const HloComputation *fusedComputation() const { return toApply(); }
  /// The value of a constant.
  const Literal &literal() const { return Value; }
  /// True for a constant printed with its value elided (`constant({...})`):
  /// it parses (zero-filled) but cannot be evaluated.
  bool literalElided() const { return Elided; }

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
  Literal Value;
  bool Elided = false;
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

/// Parses HLO text as XLA prints it. Accepts the module header with any
/// attributes, the `FileNames`/`FunctionNames`/`FileLocations`/`StackFrames`
/// sections of XLA dumps, computations with or without signatures, `%`
/// prefixes, operand shapes (`add(f32[4] %a, f32[4] %b)`), layouts with
/// tiling suffixes, `/*...*/` and `//` comments; skips `metadata`,
/// `backend_config`, `frontend_attributes`, `sharding` and any attribute it
/// does not need. Checks operand references, called computations and the
/// shapes of every op (element types, ranks, dimensions).
///
/// Errors are Diagnostics at the offending token:
/// \code
///   auto M = parseHloModule("HloModule m\nENTRY e {\n  p = f32[4]
///   parameter(0)\n"
///                           "  ROOT d = f32[4] dot(p, p)\n}\n", "m.hlo");
///   // M.error().str():
///   // m.hlo:4:19: error: unsupported or unknown opcode 'dot'
///   //   ROOT d = f32[4] dot(p, p)
///   //                   ^
/// \endcode
Expected<std::unique_ptr<HloModule>> parseHloModule(std::string_view Text,
                                                    const std::string &FileName);

/// Prints \p M in a canonical short form: `HloModule name`, then each
/// computation (`ENTRY` marked) with one instruction per line, no `%`
/// prefixes, layouts only where the source gave them, and only the
/// attributes idxmap models, in a fixed order. The output parses back to
/// the same module and prints identically.
std::string printHloModule(const HloModule &M);

} // namespace idxmap

#endif // IDXMAP_HLO_H
