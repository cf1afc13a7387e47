//===- analysis/hlo/Literal.cpp - Host buffers ----------------------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "ElementKernels.h"
#include "SplitMix64.h"
#include "idxmap/Hlo.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace idxmap {

using hlo::convertOne;

Literal::Literal(Shape Sh) : S(std::move(Sh)) {
  if (S.isTuple()) {
    Elements.reserve(S.TupleShapes.size());
    for (const Shape &E : S.TupleShapes)
      Elements.emplace_back(E);
    return;
  }
  assert(S.isArray() && "a literal needs an array or tuple shape");
  Data.assign(size_t(S.numElements() * byteWidth(S.Type)), 0);
}

Literal Literal::scalar(PrimitiveType T, double V) {
  Literal L(Shape(T, {}));
  L.setDouble(0, V);
  return L;
}

Literal Literal::fromDoubles(const Shape &Sh, const std::vector<double> &Values) {
  Literal L(Sh);
  assert(int64_t(Values.size()) == L.elementCount() && "wrong value count");
  for (size_t I = 0; I < Values.size(); ++I)
    L.setDouble(int64_t(I), Values[I]);
  return L;
}

Literal Literal::fromInts(const Shape &Sh, const std::vector<int64_t> &Values) {
  Literal L(Sh);
  assert(int64_t(Values.size()) == L.elementCount() && "wrong value count");
  for (size_t I = 0; I < Values.size(); ++I)
    L.setInt(int64_t(I), Values[I]);
  return L;
}

Literal Literal::tuple(std::vector<Literal> Elems) {
  std::vector<Shape> Shapes;
  Shapes.reserve(Elems.size());
  for (const Literal &E : Elems)
    Shapes.push_back(E.shape());
  Literal L;
  L.S = Shape::tuple(std::move(Shapes));
  L.Elements = std::move(Elems);
  return L;
}

int64_t Literal::linearIndex(const std::vector<int64_t> &Index) const {
  assert(Index.size() == S.Dims.size() && "index rank mismatch");
  int64_t Linear = 0;
  for (size_t I = 0; I < Index.size(); ++I) {
    assert(Index[I] >= 0 && Index[I] < S.Dims[I] && "index out of bounds");
    Linear = Linear * S.Dims[I] + Index[I];
  }
  return Linear;
}

double Literal::getDouble(int64_t Linear) const {
  assert(S.isArray() && Linear >= 0 && Linear < elementCount());
  double V;
  convertOne(S.Type, PrimitiveType::F64,
             Data.data() + Linear * byteWidth(S.Type),
             reinterpret_cast<uint8_t *>(&V));
  return V;
}

void Literal::setDouble(int64_t Linear, double V) {
  assert(S.isArray() && Linear >= 0 && Linear < elementCount());
  convertOne(PrimitiveType::F64, S.Type, reinterpret_cast<uint8_t *>(&V),
             Data.data() + Linear * byteWidth(S.Type));
}

int64_t Literal::getInt(int64_t Linear) const {
  assert(S.isArray() && Linear >= 0 && Linear < elementCount());
  if (S.Type == PrimitiveType::U64) {
    uint64_t U = getBits(Linear);
    return U > uint64_t(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : int64_t(U);
  }
  int64_t V;
  convertOne(S.Type, PrimitiveType::S64,
             Data.data() + Linear * byteWidth(S.Type),
             reinterpret_cast<uint8_t *>(&V));
  return V;
}

void Literal::setInt(int64_t Linear, int64_t V) {
  assert(S.isArray() && Linear >= 0 && Linear < elementCount());
  convertOne(PrimitiveType::S64, S.Type, reinterpret_cast<uint8_t *>(&V),
             Data.data() + Linear * byteWidth(S.Type));
}

uint64_t Literal::getBits(int64_t Linear) const {
  assert(S.isArray() && Linear >= 0 && Linear < elementCount());
  int64_t W = byteWidth(S.Type);
  uint64_t U = 0;
  std::memcpy(&U, Data.data() + Linear * W, size_t(std::min<int64_t>(W, 8)));
  return U;
}

void Literal::setBits(int64_t Linear, uint64_t Bits) {
  assert(S.isArray() && Linear >= 0 && Linear < elementCount());
  int64_t W = byteWidth(S.Type);
  std::memcpy(Data.data() + Linear * W, &Bits, size_t(std::min<int64_t>(W, 8)));
}

namespace {
/// The smallest and largest value of an integral type, as doubles.
std::pair<double, double> intRange(PrimitiveType T) {
  int Bits = bitWidth(T);
  if (isSignedIntType(T))
    return {-std::ldexp(1.0, Bits - 1), std::ldexp(1.0, Bits - 1) - 1};
  return {0.0, std::ldexp(1.0, Bits) - 1};
}
} // namespace

void Literal::fillRandom(uint64_t Seed, double Lo, double Hi) {
  if (S.isTuple()) {
    for (size_t I = 0; I < Elements.size(); ++I)
      Elements[I].fillRandom(Seed + I, Lo, Hi);
    return;
  }
  SplitMix64 Rng{Seed};
  int64_t N = elementCount();
  if (!isComputeType(S.Type)) {
    // No value model (c64, f8, ...): random bytes.
    for (uint8_t &B : Data)
      B = uint8_t(Rng.next());
    return;
  }
  if (S.Type == PrimitiveType::Pred) {
    for (int64_t I = 0; I < N; ++I)
      Data[size_t(I)] = uint8_t(Rng.next() & 1);
    return;
  }
  if (isFloatType(S.Type)) {
    for (int64_t I = 0; I < N; ++I)
      setDouble(I, Lo + (Hi - Lo) * Rng.unit());
    return;
  }
  auto [TLo, THi] = intRange(S.Type);
  double L = std::max(std::ceil(Lo), TLo), H = std::min(std::floor(Hi), THi);
  if (H < L)
    H = L;
  // Span 0 stands for the full 2^64 range (s64/u64 without bounds).
  double Width = H - L;
  uint64_t Span = Width >= 0x1p64 ? 0 : uint64_t(Width) + 1;
  bool Unsigned = isUnsignedIntType(S.Type);
  for (int64_t I = 0; I < N; ++I) {
    uint64_t Offset = Span == 0 ? Rng.next() : Rng.next() % Span;
    if (Unsigned)
      setBits(I, uint64_t(L) + Offset);
    else
      setInt(I, int64_t(uint64_t(int64_t(L)) + Offset));
  }
}

std::string Literal::elementString(int64_t Linear) const {
  PrimitiveType T = S.Type;
  if (T == PrimitiveType::Pred)
    return getBits(Linear) ? "true" : "false";
  if (isSignedIntType(T))
    return std::to_string(getInt(Linear));
  if (isUnsignedIntType(T))
    return std::to_string(getBits(Linear));
  double V = getDouble(Linear);
  if (std::isnan(V))
    return std::signbit(V) ? "-nan" : "nan";
  if (std::isinf(V))
    return V < 0 ? "-inf" : "inf";
  // The shortest %g form that reads back (through the same rounding as the
  // parser) to the same bits.
  uint64_t Want = getBits(Linear);
  char Buf[64];
  for (int Precision = 1; Precision <= 17; ++Precision) {
    std::snprintf(Buf, sizeof Buf, "%.*g", Precision, V);
    double Back = std::strtod(Buf, nullptr);
    uint64_t Got = 0;
    convertOne(PrimitiveType::F64, T, reinterpret_cast<uint8_t *>(&Back),
               reinterpret_cast<uint8_t *>(&Got));
    if (Got == Want)
      return Buf;
  }
  return Buf;
}

std::string Literal::toString(int64_t MaxElements) const {
  if (S.isTuple()) {
    std::string Out = "(";
    for (size_t I = 0; I < Elements.size(); ++I) {
      if (I)
        Out += ", ";
      Out += Elements[I].toString(MaxElements);
    }
    return Out + ")";
  }
  if (!S.isArray())
    return "<invalid>";
  std::string Out = S.str() + " {";
  int64_t N = elementCount();
  for (int64_t I = 0; I < N; ++I) {
    if (I)
      Out += ", ";
    if (I >= MaxElements) {
      Out += "...";
      break;
    }
    Out += elementString(I);
  }
  return Out + "}";
}

bool Literal::bitwiseEqual(const Literal &Other) const {
  if (!S.compatible(Other.S))
    return false;
  if (S.isTuple()) {
    for (size_t I = 0; I < Elements.size(); ++I)
      if (!Elements[I].bitwiseEqual(Other.Elements[I]))
        return false;
    return true;
  }
  return Data == Other.Data;
}

} // namespace idxmap
