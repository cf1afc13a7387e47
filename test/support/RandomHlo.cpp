//===- support/RandomHlo.cpp - Seeded generator of random fusions ---------===//
//
// Part of idxmap. The generator works top-down: it picks the root's shape,
// then for every wanted shape either reuses an instruction that already
// produces it (diamonds), or picks an op that can produce it and derives its
// operands' shapes, or ends in a leaf (a parameter, a small constant, an
// iota). Operands are generated before their users, so the instruction list
// is in definition order.
//
//===----------------------------------------------------------------------===//
#include "RandomHlo.h"
#include "support/RandomContraction.h"
#include "support/RandomFusionWithOps.h"
#include "support/RandomIndexed.h"
#include "support/BruteForce.h"
#include "support/RandomMaps.h"

#include "idxmap/HloIndexing.h"
#include "idxmap/Print.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace idxmap::testing {

namespace {

using PT = PrimitiveType;
using Op = HloOpcode;

constexpr double Inf = std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// Which op works on which element type
//===----------------------------------------------------------------------===//

const std::vector<Op> FloatUnary = {Op::Abs,
                                    Op::Negate,
                                    Op::Exp,
                                    Op::Expm1,
                                    Op::Log,
                                    Op::Log1p,
                                    Op::Tanh,
                                    Op::Logistic,
                                    Op::Sqrt,
                                    Op::Rsqrt,
                                    Op::Cbrt,
                                    Op::Sin,
                                    Op::Cos,
                                    Op::Tan,
                                    Op::Floor,
                                    Op::Ceil,
                                    Op::RoundNearestEven,
                                    Op::RoundNearestAfz,
                                    Op::Sign};
const std::vector<Op> IntUnary = {Op::Abs, Op::Negate,   Op::Sign,
                                  Op::Not, Op::PopCount, Op::Clz};
const std::vector<Op> FloatBinary = {Op::Add,    Op::Subtract,  Op::Multiply,
                                     Op::Divide, Op::Maximum,   Op::Minimum,
                                     Op::Power,  Op::Remainder, Op::Atan2};
const std::vector<Op> IntBinary = {Op::Add,
                                   Op::Subtract,
                                   Op::Multiply,
                                   Op::Divide,
                                   Op::Maximum,
                                   Op::Minimum,
                                   Op::Power,
                                   Op::Remainder,
                                   Op::And,
                                   Op::Or,
                                   Op::Xor,
                                   Op::ShiftLeft,
                                   Op::ShiftRightLogical,
                                   Op::ShiftRightArithmetic};
const std::vector<Op> PredBinary = {Op::And, Op::Or, Op::Xor, Op::Maximum,
                                    Op::Minimum};

bool isFloat(PT T) { return T == PT::F32 || T == PT::BF16; }

bool contains(const std::vector<Op> &V, Op X) {
  return std::find(V.begin(), V.end(), X) != V.end();
}

/// True if the unary op \p X is defined on element type \p T (is-finite,
/// whose result type differs from its operand's, is handled apart).
bool unaryOn(Op X, PT T) {
  if (isFloat(T))
    return contains(FloatUnary, X);
  if (T == PT::S32)
    return contains(IntUnary, X);
  if (T == PT::Pred)
    return X == Op::Not;
  return false;
}

bool binaryOn(Op X, PT T) {
  if (isFloat(T))
    return contains(FloatBinary, X);
  if (T == PT::S32)
    return contains(IntBinary, X);
  if (T == PT::Pred)
    return contains(PredBinary, X);
  return false;
}

std::string intList(const std::vector<int64_t> &V) {
  std::string S = "{";
  for (size_t I = 0; I < V.size(); ++I)
    S += (I ? "," : "") + std::to_string(V[I]);
  return S + "}";
}

int64_t product(const std::vector<int64_t> &V) {
  int64_t P = 1;
  for (int64_t X : V)
    P *= X;
  return P;
}

/// An upper bound on half the spacing of f32 values of magnitude <= M, with
/// a factor 4 of margin.
double ulp(double M) {
  if (!std::isfinite(M))
    return Inf;
  return std::ldexp(M, -22) + 1e-40;
}

//===----------------------------------------------------------------------===//
// The generator
//===----------------------------------------------------------------------===//

struct Node {
  Op Opc = Op::Parameter;
  Shape Sh;
  std::vector<int> Operands;
  /// Attributes after the operand list (`, dimensions={1}`).
  std::string Attrs;
  /// Structure around the instruction (RandomHloOptions::StructuredPercent):
  /// read through a tuple and get-tuple-element, or computed by a nested
  /// fusion or a call of its own computation. WrapOther is the tuple's
  /// other element.
  enum class Wrap { None, Tuple, Fusion, Call } W = Wrap::None;
  int WrapOther = -1;
  /// Fusion and Call: -1 for one output; else the nested computation's
  /// root is a tuple of the value and its first parameter, the value at
  /// this index, read with get-tuple-element.
  int WrapIndex = -1;
  /// Constant: the values (row-major) and their text.
  std::vector<double> Values;
  std::string ValueText;
  int ParamNumber = -1;
  /// Reduce: the number of reduced elements per output element and whether
  /// to_apply is an add; variadic reduces are tuple-shaped.
  int64_t ReduceCount = 0;
  bool ReduceAdd = false;
  /// Ops from support/RandomFusionWithOps.h: how values reach this one.
  std::optional<NewOpExactness> Ext;

  // Exactness analysis (see RandomFusion::Exact).
  /// Parameters reaching this value through exact positions only, with the
  /// signs of the paths (bit 0: increasing, bit 1: decreasing).
  std::map<int, unsigned> Signs;
  /// Parameters reaching this value through some inexact position.
  std::set<int> Inexact;
  /// Bound on |value| (f32 analysis; Inf if unknown).
  double M = 0;
  /// Lower bound on |change| of this value when one parameter element
  /// reaching it is perturbed by +0.75 (f32 analysis).
  double S = Inf;
};

class Generator : private NewOpHost {
public:
  Generator(uint64_t Seed, const RandomHloOptions &Options)
      : R(Seed), O(Options), Seed(Seed) {}

  RandomFusion run();

private:
  // Leaves and shared helpers.
  int add(Node N);
  int gen(const Shape &Want, bool LayoutMatters);
  int genRoot(const Shape &Want);
  int leaf(const Shape &Want, bool LayoutMatters);
  int param(const Shape &Want);
  int constant(const Shape &Want);
  int iota(const Shape &Want);
  int offset();
  std::vector<int> reusable(const Shape &Want, bool LayoutMatters,
                            bool ParamsOnly) const;
  std::vector<int> genOperands(const std::vector<Shape> &Shapes,
                               const std::vector<bool> &LayoutMatters);

  // Builders: each returns the new node, or -1 (before any side effect)
  // when it cannot produce \p Want.
  enum class Family {
    Unary,
    Binary,
    Convert,
    Select,
    Clamp,
    Compare,
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
    Iota,
    NewOp, ///< support/RandomFusionWithOps.h
  };
  Family pickFamily(PT T);
  int build(Family F, const Shape &Want, bool LayoutMatters,
            std::optional<Op> Forced);
  int buildReduce(const Shape &Res, bool Variadic, bool WithGte);
  std::vector<int> buildSingle(Op X);

  // Random shapes and values.
  PT pickType();
  int64_t pickExtent();
  std::vector<int64_t> randomDims(int Rank, int64_t Cap);
  std::vector<int64_t> dimsWithCount(int64_t Count);
  std::vector<int64_t> randomLayout(size_t Rank);
  Shape randomShape(PT T, int Rank);
  std::string reductionComputation(PT T, bool Add);

  void analyze(Node &N);
  bool analyzeNewOp(Node &N);
  void addStructure(int RootId, RandomFusion &Out);

  // NewOpHost (support/RandomFusionWithOps.h).
  int64_t rnd(int64_t Lo, int64_t Hi) override { return R.range(Lo, Hi); }
  int operand(const Shape &Want) override { return gen(Want, false); }
  int leafOf(const Shape &Want) override { return leaf(Want, false); }
  int addNode(NewOpNode X) override;
  void addComputation(const std::string &Name,
                      const std::string &Text) override {
    ExtraComputations[Name] = Text;
  }
  int64_t maxElements() const override { return O.MaxElements; }
  bool exactOnly() const override { return O.ExactOpsOnly; }
  void spend() override { --Remaining; }
  bool takeIndexed() override { return Indexed < 2 && ++Indexed; }
  bool takeCollective() override { return !Collectives++; }
  std::string text(int RootId) const;

  Rng R;
  const RandomHloOptions &O;
  uint64_t Seed;
  std::vector<Node> Nodes;
  std::vector<int> Params;
  int Remaining = 0;
  unsigned Dynamic = 0;
  bool SingleOp = false;
  std::set<std::string> Computations;
  /// NewOpsPercent: this fusion has new ops; one is still to be placed;
  /// gathers and scatters so far; their called computations.
  bool NewOps = false, ForceNewOp = false;
  unsigned Indexed = 0, Collectives = 0;
  std::map<std::string, std::string> ExtraComputations;
};

PT Generator::pickType() {
  int64_t X = R.range(0, 99);
  if (O.ExactOpsOnly)
    return X < 85 ? PT::F32 : X < 95 ? PT::S32 : X < 98 ? PT::BF16 : PT::Pred;
  return X < 66 ? PT::F32 : X < 78 ? PT::S32 : X < 90 ? PT::BF16 : PT::Pred;
}

int64_t Generator::pickExtent() {
  // Size-1 dims often; odd and prime extents as often as even ones.
  static const std::vector<int64_t> E = {1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7};
  return R.pick(E);
}

std::vector<int64_t> Generator::randomDims(int Rank, int64_t Cap) {
  std::vector<int64_t> D;
  for (int I = 0; I < Rank; ++I)
    D.push_back(pickExtent());
  while (product(D) > Cap) {
    auto It = std::max_element(D.begin(), D.end());
    --*It;
  }
  return D;
}

/// Dims (rank 0-4, size-1 dims inserted now and then) with \p Count
/// elements: the prime factors of Count spread over random dims.
std::vector<int64_t> Generator::dimsWithCount(int64_t Count) {
  std::vector<int64_t> Primes;
  for (int64_t N = Count, P = 2; N > 1;) {
    if (N % P == 0) {
      Primes.push_back(P);
      N /= P;
    } else {
      ++P;
    }
  }
  int Rank = int(R.range(Primes.empty() ? 0 : 1, 4));
  if (Rank == 0)
    return {};
  std::vector<int64_t> D(size_t(Rank), 1);
  for (int64_t P : Primes)
    D[size_t(R.range(0, Rank - 1))] *= P;
  return D;
}

std::vector<int64_t> Generator::randomLayout(size_t Rank) {
  std::vector<int64_t> L(Rank);
  for (size_t I = 0; I < Rank; ++I)
    L[I] = int64_t(I);
  for (size_t I = Rank; I > 1; --I)
    std::swap(L[I - 1], L[size_t(R.range(0, int64_t(I) - 1))]);
  return L;
}

Shape Generator::randomShape(PT T, int Rank) {
  return Shape(T, randomDims(Rank, O.MaxElements));
}

std::string Generator::reductionComputation(PT T, bool Add) {
  std::string Name =
      std::string(Add ? "add_" : "max_") + std::string(primitiveTypeName(T));
  Computations.insert(Name);
  return Name;
}

int Generator::add(Node N) {
  analyze(N);
  Nodes.push_back(std::move(N));
  return int(Nodes.size()) - 1;
}

std::vector<int> Generator::reusable(const Shape &Want, bool LayoutMatters,
                                     bool ParamsOnly) const {
  std::vector<int> C;
  for (size_t I = 0; I < Nodes.size(); ++I) {
    const Node &N = Nodes[I];
    if (ParamsOnly && N.Opc != Op::Parameter)
      continue;
    if (N.Sh.isTuple() || N.Sh.Type != Want.Type || N.Sh.Dims != Want.Dims)
      continue;
    if (LayoutMatters && N.Sh.layoutOrDefault() != Want.layoutOrDefault())
      continue;
    C.push_back(int(I));
  }
  return C;
}

int Generator::param(const Shape &Want) {
  Node N;
  N.Opc = Op::Parameter;
  N.Sh = Want;
  N.ParamNumber = int(Params.size());
  int Id = add(std::move(N));
  Params.push_back(Id);
  return Id;
}

int Generator::constant(const Shape &Want) {
  Node N;
  N.Opc = Op::Constant;
  N.Sh = Want;
  int64_t Count = Want.numElements();
  for (int64_t I = 0; I < Count; ++I) {
    switch (Want.Type) {
    case PT::Pred:
      N.Values.push_back(double(R.range(0, 1)));
      break;
    case PT::S32:
      N.Values.push_back(double(R.range(-3, 3)));
      break;
    default:
      // Quarters in [-2, 2]: exact in every float type.
      N.Values.push_back(double(R.range(-8, 8)) / 4);
      break;
    }
  }
  auto Elem = [&](double V) {
    if (Want.Type == PT::Pred)
      return std::string(V != 0 ? "true" : "false");
    std::ostringstream OS;
    OS << V;
    return OS.str();
  };
  if (Want.rank() == 0) {
    N.ValueText = Elem(N.Values[0]);
  } else {
    // Nested braces, row-major.
    std::string T;
    std::vector<int64_t> Idx(Want.Dims.size(), 0);
    for (int64_t I = 0; I < Count; ++I) {
      // Open braces for every dim whose index is 0 from the innermost one
      // that starts a new run.
      size_t Open = 0;
      for (size_t D = Idx.size(); D-- > 0;)
        if (Idx[D] == 0)
          ++Open;
        else
          break;
      if (I > 0)
        T += ", ";
      T += std::string(Open, '{');
      T += Elem(N.Values[size_t(I)]);
      // Advance the index and close finished dims.
      size_t Close = 0;
      for (size_t D = Idx.size(); D-- > 0;) {
        if (++Idx[D] < Want.Dims[D])
          break;
        Idx[D] = 0;
        ++Close;
      }
      T += std::string(Close, '}');
    }
    N.ValueText = T;
  }
  return add(std::move(N));
}

int Generator::iota(const Shape &Want) {
  Node N;
  N.Opc = Op::Iota;
  N.Sh = Want;
  int64_t D = R.range(0, Want.rank() - 1);
  N.Attrs = ", iota_dimension=" + std::to_string(D);
  N.M = double(Want.Dims[size_t(D)]);
  return add(std::move(N));
}

/// A dynamic offset: an s32[] parameter (new or shared) or now and then a
/// constant (clamped like any offset).
int Generator::offset() {
  Shape S(PT::S32, {});
  if (!SingleOp && R.chance(1, 5))
    return constant(S);
  std::vector<int> Ps = reusable(S, false, /*ParamsOnly=*/true);
  if (!Ps.empty() && R.chance(1, 3))
    return R.pick(Ps);
  return param(S);
}

int Generator::leaf(const Shape &Want, bool LayoutMatters) {
  std::vector<int> Ps = reusable(Want, LayoutMatters, /*ParamsOnly=*/SingleOp);
  if (!Ps.empty() && R.chance(SingleOp ? 15 : 35, 100))
    return R.pick(Ps);
  if (!SingleOp) {
    if (Want.numElements() <= 8 && R.chance(1, 8))
      return constant(Want);
    if (Want.rank() >= 1 && Want.Type != PT::Pred && R.chance(1, 16))
      return iota(Want);
  }
  return param(Want);
}

int Generator::gen(const Shape &Want, bool LayoutMatters) {
  if (SingleOp || Remaining <= 0)
    return leaf(Want, LayoutMatters);
  if (ForceNewOp) {
    // Not again for its own operands.
    ForceNewOp = false;
    int Id = build(Family::NewOp, Want, LayoutMatters, std::nullopt);
    ForceNewOp = Id < 0;
    if (Id >= 0)
      return Id;
  }
  std::vector<int> C = reusable(Want, LayoutMatters, false);
  if (!C.empty() && R.chance(3, 10))
    return R.pick(C);
  for (int Try = 0; Try < 12; ++Try) {
    int Id = build(pickFamily(Want.Type), Want, LayoutMatters, std::nullopt);
    if (Id >= 0)
      return Id;
  }
  return leaf(Want, LayoutMatters);
}

int Generator::genRoot(const Shape &Want) {
  if (Remaining < 1)
    Remaining = 1;
  for (int Try = 0; Try < 40; ++Try) {
    int Id = build(pickFamily(Want.Type), Want, false, std::nullopt);
    if (Id >= 0)
      return Id;
  }
  return build(Family::Copy, Want, false, std::nullopt);
}

std::vector<int>
Generator::genOperands(const std::vector<Shape> &Shapes,
                       const std::vector<bool> &LayoutMatters) {
  // Generate in a random order so that budget and reuse are not always
  // spent left first.
  std::vector<size_t> Order(Shapes.size());
  for (size_t I = 0; I < Order.size(); ++I)
    Order[I] = I;
  for (size_t I = Order.size(); I > 1; --I)
    std::swap(Order[I - 1], Order[size_t(R.range(0, int64_t(I) - 1))]);
  std::vector<int> Ids(Shapes.size());
  for (size_t I : Order)
    Ids[I] = gen(Shapes[I], LayoutMatters.empty() ? false : LayoutMatters[I]);
  return Ids;
}

Generator::Family Generator::pickFamily(PT T) {
  struct W {
    Family F;
    int Weight;
  };
  static const std::vector<W> General = {
      {Family::Unary, 10},       {Family::Binary, 14},
      {Family::Convert, 4},      {Family::Select, 4},
      {Family::Clamp, 3},        {Family::Compare, 4},
      {Family::Broadcast, 8},    {Family::Reshape, 6},
      {Family::Bitcast, 5},      {Family::Transpose, 6},
      {Family::Copy, 3},         {Family::Slice, 6},
      {Family::DynamicSlice, 3}, {Family::DynamicUpdateSlice, 3},
      {Family::Pad, 5},          {Family::Reverse, 4},
      {Family::Concatenate, 5},  {Family::Reduce, 7},
      {Family::Iota, 1}};
  static const std::vector<W> Exact = {
      {Family::Unary, 6},   {Family::Binary, 12},     {Family::Broadcast, 8},
      {Family::Reshape, 6}, {Family::Bitcast, 5},     {Family::Transpose, 6},
      {Family::Copy, 3},    {Family::Slice, 6},       {Family::Pad, 5},
      {Family::Reverse, 4}, {Family::Concatenate, 5}, {Family::Reduce, 7},
      {Family::Iota, 1}};
  const std::vector<W> &Ws = O.ExactOpsOnly ? Exact : General;
  int NewW = NewOps ? 6 : 0;
  int Total = NewW;
  for (const W &X : Ws)
    Total += X.Weight + (T == PT::Pred && X.F == Family::Compare ? 10 : 0);
  int64_t P = R.range(0, Total - 1);
  for (const W &X : Ws) {
    P -= X.Weight + (T == PT::Pred && X.F == Family::Compare ? 10 : 0);
    if (P < 0)
      return X.F;
  }
  return NewW ? Family::NewOp : Family::Copy;
}

int Generator::buildReduce(const Shape &Res, bool Variadic, bool WithGte) {
  PT T = Res.Type;
  if (Res.rank() >= 4)
    return -1;
  if (Variadic ? (T != PT::F32 && T != PT::S32)
               : (T != PT::F32 && T != PT::BF16 && T != PT::S32))
    return -1;
  // Reduced dims: 1-3 of them at random positions among the input's.
  int NumRed = int(R.range(1, std::min<int64_t>(3, 4 - Res.rank())));
  int InRank = int(Res.rank()) + NumRed;
  std::vector<bool> IsRed(size_t(InRank), false);
  for (int K = 0; K < NumRed;) {
    int64_t P = R.range(0, InRank - 1);
    if (!IsRed[size_t(P)]) {
      IsRed[size_t(P)] = true;
      ++K;
    }
  }
  int64_t OutCount = Res.numElements();
  std::vector<int64_t> RedExtents;
  for (int K = 0; K < NumRed; ++K)
    RedExtents.push_back(pickExtent());
  while (OutCount * product(RedExtents) > O.MaxElements) {
    auto It = std::max_element(RedExtents.begin(), RedExtents.end());
    if (*It == 1)
      return -1;
    --*It;
  }
  std::vector<int64_t> InDims, RedDims;
  size_t Kept = 0, Red = 0;
  for (int D = 0; D < InRank; ++D) {
    if (IsRed[size_t(D)]) {
      InDims.push_back(RedExtents[Red++]);
      RedDims.push_back(D);
    } else {
      InDims.push_back(Res.Dims[Kept++]);
    }
  }
  bool AddKind = O.ExactOpsOnly || R.chance(3, 5);
  Remaining -= WithGte ? 2 : 1;

  auto Init = [&](PT IT, bool Add) {
    if (SingleOp || R.chance(1, 4))
      return leaf(Shape(IT, {}), false);
    Node C;
    C.Opc = Op::Constant;
    C.Sh = Shape(IT, {});
    if (Add || R.chance(1, 4)) {
      double V = Add ? 0.0 : double(R.range(-4, 4)) / (IT == PT::S32 ? 1 : 4);
      C.Values = {V};
      std::ostringstream OS;
      OS << V;
      C.ValueText = OS.str();
    } else if (IT == PT::S32) {
      C.Values = {-2147483648.0};
      C.ValueText = "-2147483648";
    } else {
      C.Values = {-Inf};
      C.ValueText = "-inf";
    }
    return add(std::move(C));
  };

  Node N;
  N.Opc = Op::Reduce;
  N.ReduceCount = product(RedExtents);
  N.Attrs = ", dimensions=" + intList(RedDims);
  if (!Variadic) {
    std::vector<int> Ops = genOperands({Shape(T, InDims)}, {});
    int I0 = Init(T, AddKind);
    N.Sh = Res;
    N.Operands = {Ops[0], I0};
    N.ReduceAdd = AddKind;
    N.Attrs += ", to_apply=" + reductionComputation(T, AddKind);
    return add(std::move(N));
  }
  // (sum of an f32 input, max of an s32 input).
  std::vector<int> Ops =
      genOperands({Shape(PT::F32, InDims), Shape(PT::S32, InDims)}, {});
  int I0 = Init(PT::F32, true), I1 = Init(PT::S32, false);
  N.Sh = Shape::tuple({Shape(PT::F32, Res.Dims), Shape(PT::S32, Res.Dims)});
  N.Operands = {Ops[0], Ops[1], I0, I1};
  Computations.insert("sum_max_f32_s32");
  N.Attrs += ", to_apply=sum_max_f32_s32";
  int Id = add(std::move(N));
  if (!WithGte)
    return Id;
  Node G;
  G.Opc = Op::GetTupleElement;
  G.Sh = Res;
  G.Operands = {Id};
  G.Attrs = ", index=" + std::string(T == PT::F32 ? "0" : "1");
  return add(std::move(G));
}

int Generator::build(Family F, const Shape &Want, bool LayoutMatters,
                     std::optional<Op> Forced) {
  PT T = Want.Type;
  int64_t Rank = Want.rank();
  int64_t Count = Want.numElements();
  // Any instruction may carry a layout; only bitcast reads it.
  Shape Res = Want;
  if (!LayoutMatters && Rank >= 2 && R.chance(1, 10))
    Res.MinorToMajor = randomLayout(size_t(Rank));
  Node N;
  N.Sh = Res;
  auto Plain = [&](PT X) { return Shape(X, Want.Dims); };

  switch (F) {
  case Family::Unary: {
    Op X;
    PT In = T;
    if (Forced) {
      X = *Forced;
      if (X == Op::IsFinite) {
        if (T != PT::Pred)
          return -1;
        In = R.chance(1, 2) ? PT::F32 : PT::BF16;
      } else if (!unaryOn(X, T)) {
        return -1;
      }
    } else if (O.ExactOpsOnly) {
      if (T == PT::F32)
        X = R.chance(1, 3) ? Op::Exp : Op::Negate;
      else if (T == PT::S32)
        X = Op::Negate;
      else
        return -1;
    } else if (T == PT::Pred) {
      X = Op::Not;
      if (R.chance(1, 2)) {
        X = Op::IsFinite;
        In = R.chance(1, 2) ? PT::F32 : PT::BF16;
      }
    } else {
      X = R.pick(isFloat(T) ? FloatUnary : IntUnary);
    }
    N.Opc = X;
    --Remaining;
    N.Operands = {gen(Plain(In), false)};
    return add(std::move(N));
  }
  case Family::Binary: {
    Op X;
    if (Forced) {
      X = *Forced;
      if (!binaryOn(X, T))
        return -1;
    } else if (O.ExactOpsOnly) {
      if (T != PT::F32 && T != PT::S32)
        return -1;
      X = R.chance(1, 2) ? Op::Add : Op::Subtract;
    } else {
      X = R.pick(isFloat(T)     ? FloatBinary
                 : T == PT::S32 ? IntBinary
                                : PredBinary);
    }
    N.Opc = X;
    --Remaining;
    N.Operands = genOperands({Plain(T), Plain(T)}, {});
    return add(std::move(N));
  }
  case Family::Convert: {
    static const std::vector<PT> Types = {PT::F32, PT::BF16, PT::S32, PT::Pred};
    PT In = R.pick(Types);
    if (In == T && !Forced)
      return -1;
    N.Opc = Op::Convert;
    --Remaining;
    N.Operands = {gen(Plain(In), false)};
    return add(std::move(N));
  }
  case Family::Select: {
    N.Opc = Op::Select;
    --Remaining;
    Shape P = R.chance(1, 4) ? Shape(PT::Pred, {}) : Plain(PT::Pred);
    N.Operands = genOperands({P, Plain(T), Plain(T)}, {});
    return add(std::move(N));
  }
  case Family::Clamp: {
    if (T == PT::Pred)
      return -1;
    N.Opc = Op::Clamp;
    --Remaining;
    Shape Lo = R.chance(1, 2) ? Shape(T, {}) : Plain(T);
    Shape Hi = R.chance(1, 2) ? Shape(T, {}) : Plain(T);
    N.Operands = genOperands({Lo, Plain(T), Hi}, {});
    return add(std::move(N));
  }
  case Family::Compare: {
    if (T != PT::Pred)
      return -1;
    static const std::vector<PT> Types = {PT::F32, PT::F32, PT::BF16, PT::S32};
    static const char *Dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    PT In = R.pick(Types);
    N.Opc = Op::Compare;
    N.Attrs = std::string(", direction=") + Dirs[R.range(0, 5)];
    if (isFloat(In) && R.chance(1, 8))
      N.Attrs += ", type=TOTALORDER";
    --Remaining;
    N.Operands = genOperands({Plain(In), Plain(In)}, {});
    return add(std::move(N));
  }
  case Family::Broadcast: {
    std::vector<int64_t> Kept, InDims;
    for (int64_t D = 0; D < Rank; ++D)
      if (R.chance(1, 2)) {
        Kept.push_back(D);
        InDims.push_back(Want.Dims[size_t(D)]);
      }
    N.Opc = Op::Broadcast;
    N.Attrs = ", dimensions=" + intList(Kept);
    --Remaining;
    N.Operands = {gen(Shape(T, InDims), false)};
    return add(std::move(N));
  }
  case Family::Reshape: {
    N.Opc = Op::Reshape;
    --Remaining;
    N.Operands = {gen(Shape(T, dimsWithCount(Count)), false)};
    return add(std::move(N));
  }
  case Family::Bitcast: {
    N.Opc = Op::Bitcast;
    if (!LayoutMatters && Rank >= 2 && R.chance(1, 2))
      N.Sh.MinorToMajor = randomLayout(size_t(Rank));
    Shape In(T, dimsWithCount(Count));
    if (In.rank() >= 2 && R.chance(1, 2))
      In.MinorToMajor = randomLayout(size_t(In.rank()));
    // Now and then a transposing bitcast: the same dims permuted, with the
    // layout that keeps the physical order.
    if (Rank >= 2 && R.chance(1, 4)) {
      std::vector<int64_t> Perm = randomLayout(size_t(Rank));
      std::vector<int64_t> OutM2m = N.Sh.layoutOrDefault();
      std::vector<int64_t> Dims(static_cast<size_t>(Rank)),
          M2m(static_cast<size_t>(Rank));
      // Input dim k is output dim Perm[k]; physical order is kept.
      std::vector<int64_t> Inv(static_cast<size_t>(Rank));
      for (int64_t K = 0; K < Rank; ++K) {
        Dims[size_t(K)] = Want.Dims[size_t(Perm[size_t(K)])];
        Inv[size_t(Perm[size_t(K)])] = K;
      }
      for (int64_t K = 0; K < Rank; ++K)
        M2m[size_t(K)] = Inv[size_t(OutM2m[size_t(K)])];
      In = Shape(T, Dims, M2m);
    }
    --Remaining;
    N.Operands = {gen(In, /*LayoutMatters=*/true)};
    return add(std::move(N));
  }
  case Family::Transpose: {
    if (Rank < 1)
      return -1;
    std::vector<int64_t> Perm = randomLayout(size_t(Rank));
    std::vector<int64_t> InDims(static_cast<size_t>(Rank));
    for (int64_t K = 0; K < Rank; ++K)
      InDims[size_t(Perm[size_t(K)])] = Want.Dims[size_t(K)];
    N.Opc = Op::Transpose;
    N.Attrs = ", dimensions=" + intList(Perm);
    --Remaining;
    N.Operands = {gen(Shape(T, InDims), false)};
    return add(std::move(N));
  }
  case Family::Copy: {
    N.Opc = Op::Copy;
    --Remaining;
    N.Operands = {gen(Plain(T), false)};
    return add(std::move(N));
  }
  case Family::Slice: {
    if (Rank < 1)
      return -1;
    std::vector<int64_t> InDims, Starts, Limits, Strides;
    for (int Try = 0;; ++Try) {
      InDims.clear();
      Starts.clear();
      Limits.clear();
      Strides.clear();
      for (int64_t M : Want.Dims) {
        int64_t St = Try < 3 ? R.pick(std::vector<int64_t>{1, 1, 2, 3}) : 1;
        int64_t Start = Try < 3 ? R.range(0, 2) : 0;
        int64_t Limit = Start + (M - 1) * St + 1 + R.range(0, St - 1);
        Starts.push_back(Start);
        Limits.push_back(Limit);
        Strides.push_back(St);
        InDims.push_back(Limit + (Try < 3 ? R.range(0, 2) : 0));
      }
      if (product(InDims) <= O.MaxElements)
        break;
      if (Try >= 3)
        return -1;
    }
    N.Opc = Op::Slice;
    N.Attrs = ", slice={";
    for (size_t D = 0; D < InDims.size(); ++D)
      N.Attrs += (D ? ", [" : "[") + std::to_string(Starts[D]) + ":" +
                 std::to_string(Limits[D]) + ":" + std::to_string(Strides[D]) +
                 "]";
    N.Attrs += "}";
    --Remaining;
    N.Operands = {gen(Shape(T, InDims), false)};
    return add(std::move(N));
  }
  case Family::DynamicSlice:
  case Family::DynamicUpdateSlice: {
    if (Rank < 1 || (Dynamic >= O.MaxDynamic && !Forced))
      return -1;
    bool IsSlice = F == Family::DynamicSlice;
    std::vector<int64_t> Other;
    for (int64_t M : Want.Dims)
      Other.push_back(IsSlice ? M + R.range(0, 2)
                              : M - R.range(0, std::min<int64_t>(2, M - 1)));
    if (IsSlice && product(Other) > O.MaxElements) {
      Other = Want.Dims;
      Other[0] += 1;
      if (product(Other) > O.MaxElements)
        return -1;
    }
    ++Dynamic;
    --Remaining;
    N.Opc = IsSlice ? Op::DynamicSlice : Op::DynamicUpdateSlice;
    if (IsSlice) {
      N.Attrs = ", dynamic_slice_sizes=" + intList(Want.Dims);
      N.Operands = {gen(Shape(T, Other), false)};
    } else {
      N.Operands = genOperands({Plain(T), Shape(T, Other)}, {});
    }
    for (int64_t D = 0; D < Rank; ++D)
      N.Operands.push_back(offset());
    return add(std::move(N));
  }
  case Family::Pad: {
    if (Rank < 1)
      return -1;
    std::vector<PaddingDim> P;
    std::vector<int64_t> InDims;
    for (int64_t M : Want.Dims) {
      PaddingDim D{0, 0, 0};
      int64_t Len = M;
      for (int Try = 0; Try < 8; ++Try) {
        int64_t I = R.pick(std::vector<int64_t>{0, 0, 1, 2});
        int64_t Lo = R.range(-2, 2), Hi = R.range(-2, 2);
        // M = Lo + Hi + n + (n - 1) * I, so n = (M - Lo - Hi + I) / (1 + I).
        int64_t Num = M - Lo - Hi + I;
        if (Num <= 0 || Num % (1 + I))
          continue;
        D = {Lo, Hi, I};
        Len = Num / (1 + I);
        break;
      }
      P.push_back(D);
      InDims.push_back(Len);
    }
    if (product(InDims) > O.MaxElements)
      return -1;
    N.Opc = Op::Pad;
    N.Attrs = ", padding=";
    for (size_t D = 0; D < P.size(); ++D) {
      N.Attrs += (D ? "x" : "") + std::to_string(P[D].Lo) + "_" +
                 std::to_string(P[D].Hi);
      if (P[D].Interior)
        N.Attrs += "_" + std::to_string(P[D].Interior);
    }
    --Remaining;
    int In = gen(Shape(T, InDims), false);
    int Value = !SingleOp && R.chance(2, 3) ? constant(Shape(T, {}))
                                            : leaf(Shape(T, {}), false);
    N.Operands = {In, Value};
    return add(std::move(N));
  }
  case Family::Reverse: {
    if (Rank < 1)
      return -1;
    std::vector<int64_t> Dims;
    for (int64_t D = 0; D < Rank; ++D)
      if (R.chance(1, 2))
        Dims.push_back(D);
    if (Dims.empty() && R.chance(3, 4))
      Dims.push_back(R.range(0, Rank - 1));
    N.Opc = Op::Reverse;
    N.Attrs = ", dimensions=" + intList(Dims);
    --Remaining;
    N.Operands = {gen(Plain(T), false)};
    return add(std::move(N));
  }
  case Family::Concatenate: {
    if (Rank < 1)
      return -1;
    int64_t C = R.range(0, Rank - 1);
    int64_t M = Want.Dims[size_t(C)];
    if (M < 2 && !R.chance(1, 8))
      return -1;
    int64_t K = M < 2 ? 1 : R.range(2, std::min<int64_t>(4, M));
    // K positive parts of M: K - 1 distinct cut points in [1, M - 1].
    std::set<int64_t> Cuts;
    while (int64_t(Cuts.size()) < K - 1)
      Cuts.insert(R.range(1, M - 1));
    std::vector<Shape> Shapes;
    int64_t Prev = 0;
    Cuts.insert(M);
    for (int64_t Cut : Cuts) {
      std::vector<int64_t> D = Want.Dims;
      D[size_t(C)] = Cut - Prev;
      Shapes.push_back(Shape(T, D));
      Prev = Cut;
    }
    N.Opc = Op::Concatenate;
    N.Attrs = ", dimensions={" + std::to_string(C) + "}";
    --Remaining;
    N.Operands = genOperands(Shapes, {});
    return add(std::move(N));
  }
  case Family::Reduce: {
    bool Variadic =
        !O.ExactOpsOnly && (Forced == Op::GetTupleElement || R.chance(1, 10));
    return buildReduce(Want, Variadic, /*WithGte=*/true);
  }
  case Family::Iota: {
    if (Rank < 1 || T == PT::Pred)
      return -1;
    --Remaining;
    return iota(Want);
  }
  case Family::NewOp:
    return buildNewOp(*this, Res);
  }
  return -1;
}

int Generator::addNode(NewOpNode X) {
  Node N;
  N.Opc = X.Opc;
  N.Sh = std::move(X.Sh);
  N.Operands = std::move(X.Operands);
  N.Attrs = std::move(X.Attrs);
  N.Values = std::move(X.Values);
  N.ValueText = std::move(X.ValueText);
  N.Ext = std::move(X.Exactness);
  return add(std::move(N));
}

//===----------------------------------------------------------------------===//
// Exactness analysis
//===----------------------------------------------------------------------===//

void Generator::analyze(Node &N) {
  auto Of = [&](size_t K) -> const Node & {
    return Nodes[size_t(N.Operands[K])];
  };
  // Every parameter reaching operand K becomes inexact.
  auto Spoil = [&](size_t K) {
    const Node &X = Of(K);
    for (const auto &[P, S] : X.Signs)
      N.Inexact.insert(P);
    N.Inexact.insert(X.Inexact.begin(), X.Inexact.end());
  };
  // Operand K reaches N exactly; Flip reverses its paths' signs.
  auto Merge = [&](size_t K, bool Flip) {
    const Node &X = Of(K);
    for (const auto &[P, S] : X.Signs)
      N.Signs[P] |= Flip ? ((S & 1) << 1) | ((S & 2) >> 1) : S;
    N.Inexact.insert(X.Inexact.begin(), X.Inexact.end());
  };
  PT T = N.Sh.isTuple() ? PT::Tuple : N.Sh.Type;
  bool F32 = T == PT::F32, Linear = T == PT::F32 || T == PT::S32;
  if (N.Ext && analyzeNewOp(N))
    return;
  switch (N.Opc) {
  case Op::Parameter:
    N.Signs[N.ParamNumber] = 1;
    N.M = 2.75; // fillRandom(-2, 2) plus the +0.75 perturbation.
    N.S = 0.75;
    return;
  case Op::Constant:
    N.M = 0;
    for (double V : N.Values)
      N.M = std::max(N.M, std::fabs(V));
    return;
  case Op::Iota:
    return;
  case Op::Broadcast:
  case Op::Reshape:
  case Op::Bitcast:
  case Op::Transpose:
  case Op::Copy:
  case Op::Slice:
  case Op::Reverse:
    Merge(0, false);
    N.M = Of(0).M;
    N.S = Of(0).S;
    return;
  case Op::Concatenate:
    N.M = 0;
    for (size_t K = 0; K < N.Operands.size(); ++K) {
      Merge(K, false);
      N.M = std::max(N.M, Of(K).M);
      N.S = std::min(N.S, Of(K).S);
    }
    return;
  case Op::Pad:
    Merge(0, false);
    Spoil(1);
    N.M = std::max(Of(0).M, Of(1).M);
    N.S = Of(0).S;
    return;
  case Op::Negate:
    if (!Linear)
      break;
    Merge(0, true);
    N.M = Of(0).M;
    N.S = Of(0).S;
    return;
  case Op::Exp:
    if (!F32)
      break;
    Merge(0, false);
    N.M = std::exp(Of(0).M);
    // Mean value theorem: exp changes by at least exp(-M) times the change
    // of its argument; expf is within an ulp.
    N.S = std::exp(-Of(0).M) * Of(0).S - 2 * ulp(N.M);
    return;
  case Op::Add:
  case Op::Subtract:
    if (!Linear)
      break;
    Merge(0, false);
    Merge(1, N.Opc == Op::Subtract);
    N.M = Of(0).M + Of(1).M;
    N.S = std::min(Of(0).S, Of(1).S) - (F32 ? ulp(N.M) : 0);
    return;
  case Op::Reduce:
    if (!Linear || !N.ReduceAdd || N.Operands.size() != 2)
      break;
    Merge(0, false);
    Merge(1, false);
    N.M = double(N.ReduceCount) * Of(0).M + Of(1).M;
    N.S = std::min(Of(0).S, Of(1).S) -
          (F32 ? double(N.ReduceCount) * ulp(N.M) : 0);
    return;
  default:
    break;
  }
  // Not an exact position: every parameter reaching it is inexact, and the
  // value is unbounded for the analysis.
  for (size_t K = 0; K < N.Operands.size(); ++K)
    Spoil(K);
  N.Signs.clear();
  N.M = Inf;
  N.S = 0;
}

/// The exact positions of support/RandomFusionWithOps.h's ops (as Merge
/// in analyze); false to spoil every operand.
bool Generator::analyzeNewOp(Node &N) {
  using K = NewOpExactness::Kind;
  const NewOpExactness &E = *N.Ext;
  bool Linear = N.Sh.Type == PT::F32 || N.Sh.Type == PT::S32;
  if (E.K == K::Inexact || (E.K == K::Sum && !Linear))
    return false;
  double Sum = 0, Terms = 0;
  N.S = Inf;
  for (size_t I = 0; I < N.Operands.size(); ++I) {
    const Node &X = Nodes[size_t(N.Operands[I])];
    bool Flip = E.K == K::Sum && E.Flip[I];
    for (const auto &[P, S] : X.Signs)
      N.Signs[P] |= Flip ? ((S & 1) << 1) | ((S & 2) >> 1) : S;
    N.Inexact.insert(X.Inexact.begin(), X.Inexact.end());
    double T = E.K == K::Sum ? double(E.Terms[I]) : 1;
    Sum += T * X.M;
    Terms += T;
    N.S = std::min(N.S, X.S);
  }
  N.M = E.K == K::Move ? Nodes[size_t(N.Operands[0])].M : Sum;
  if (E.K == K::Sum && N.Sh.Type == PT::F32)
    N.S -= Terms * ulp(N.M);
  return true;
}

//===----------------------------------------------------------------------===//
// Driver and printing
//===----------------------------------------------------------------------===//

std::vector<int> Generator::buildSingle(Op X) {
  static const std::vector<PT> Any = {PT::F32, PT::BF16, PT::S32, PT::Pred};
  if (X == Op::Tuple) {
    std::vector<int> Roots;
    int64_t N = R.range(2, 3);
    for (int64_t K = 0; K < N; ++K)
      Roots.push_back(
          leaf(randomShape(R.pick(Any), int(R.range(0, 3))), false));
    return Roots;
  }
  Family F;
  if (isUnaryElementwise(X))
    F = Family::Unary;
  else if (isBinaryElementwise(X))
    F = Family::Binary;
  else
    switch (X) {
    case Op::Convert:
      F = Family::Convert;
      break;
    case Op::Select:
      F = Family::Select;
      break;
    case Op::Clamp:
      F = Family::Clamp;
      break;
    case Op::Compare:
      F = Family::Compare;
      break;
    case Op::Broadcast:
      F = Family::Broadcast;
      break;
    case Op::Reshape:
      F = Family::Reshape;
      break;
    case Op::Bitcast:
      F = Family::Bitcast;
      break;
    case Op::Transpose:
      F = Family::Transpose;
      break;
    case Op::Copy:
      F = Family::Copy;
      break;
    case Op::Slice:
      F = Family::Slice;
      break;
    case Op::DynamicSlice:
      F = Family::DynamicSlice;
      break;
    case Op::DynamicUpdateSlice:
      F = Family::DynamicUpdateSlice;
      break;
    case Op::Pad:
      F = Family::Pad;
      break;
    case Op::Reverse:
      F = Family::Reverse;
      break;
    case Op::Concatenate:
      F = Family::Concatenate;
      break;
    case Op::Reduce:
      F = Family::Reduce;
      break;
    case Op::GetTupleElement:
      F = Family::Reduce;
      break;
    default:
      return {};
    }
  for (int Try = 0; Try < 200; ++Try) {
    PT T = R.pick(Any);
    int Rank = int(R.range(0, 8) == 0 ? 0 : R.range(1, 4));
    Shape S = randomShape(T, Rank);
    int Id;
    if (X == Op::Reduce && R.chance(1, 4))
      Id = buildReduce(S, /*Variadic=*/true, /*WithGte=*/false);
    else
      Id = build(F, S, false, X);
    if (Id >= 0)
      return {Id};
  }
  return {};
}

std::string Generator::text(int RootId) const {
  std::ostringstream OS;
  OS << "HloModule fuzz\n\n";
  for (const auto &[Name, Text] : ExtraComputations)
    OS << Text << "\n";
  for (const std::string &C : Computations) {
    if (C == "sum_max_f32_s32") {
      OS << C << " {\n"
         << "  a0 = f32[] parameter(0)\n  a1 = s32[] parameter(1)\n"
         << "  b0 = f32[] parameter(2)\n  b1 = s32[] parameter(3)\n"
         << "  s = f32[] add(a0, b0)\n  m = s32[] maximum(a1, b1)\n"
         << "  ROOT t = (f32[], s32[]) tuple(s, m)\n}\n\n";
      continue;
    }
    std::string T = C.substr(4);
    OS << C << " {\n  a = " << T << "[] parameter(0)\n  b = " << T
       << "[] parameter(1)\n  ROOT r = " << T << "[] "
       << (C.compare(0, 3, "add") == 0 ? "add" : "maximum") << "(a, b)\n}\n\n";
  }
  auto Name = [&](int Id) {
    const Node &N = Nodes[size_t(Id)];
    if (N.Opc == Op::Parameter)
      return "param_" + std::to_string(N.ParamNumber);
    return std::string(opcodeName(N.Opc)) + "." + std::to_string(Id);
  };
  // The name users read: a value wrapped in a tuple is read through its
  // get-tuple-element.
  auto Use = [&](int Id) {
    return Nodes[size_t(Id)].W == Node::Wrap::Tuple ? Name(Id) + "_gte"
                                                    : Name(Id);
  };
  // Nested fusions and called computations, one per wrapped instruction:
  // its distinct operands become parameters.
  for (size_t I = 0; I < Nodes.size(); ++I) {
    const Node &N = Nodes[I];
    if (N.W != Node::Wrap::Fusion && N.W != Node::Wrap::Call)
      continue;
    std::vector<int> Distinct;
    for (int Id : N.Operands)
      if (std::find(Distinct.begin(), Distinct.end(), Id) == Distinct.end())
        Distinct.push_back(Id);
    OS << "nested_" << I << " {\n";
    for (size_t K = 0; K < Distinct.size(); ++K)
      OS << "  n" << K << " = " << Nodes[size_t(Distinct[K])].Sh.str(true)
         << " parameter(" << K << ")\n";
    OS << "  " << (N.WrapIndex < 0 ? "ROOT " : "") << "r = " << N.Sh.str(true)
       << " " << opcodeName(N.Opc) << "(";
    for (size_t K = 0; K < N.Operands.size(); ++K)
      OS << (K ? ", " : "") << "n"
         << std::find(Distinct.begin(), Distinct.end(), N.Operands[K]) -
                Distinct.begin();
    OS << ")" << N.Attrs << "\n";
    if (N.WrapIndex >= 0) {
      std::string SR = N.Sh.str(true),
                  S0 = Nodes[size_t(Distinct[0])].Sh.str(true);
      bool First = N.WrapIndex == 0;
      OS << "  ROOT t = (" << (First ? SR : S0) << ", " << (First ? S0 : SR)
         << ") tuple(" << (First ? "r, n0" : "n0, r") << ")\n";
    }
    OS << "}\n\n";
  }
  bool HasReduce = false;
  OS << "fused_computation {\n";
  for (int P : Params)
    OS << "  " << Name(P) << " = " << Nodes[size_t(P)].Sh.str(true)
       << " parameter(" << Nodes[size_t(P)].ParamNumber << ")\n";
  for (size_t I = 0; I < Nodes.size(); ++I) {
    const Node &N = Nodes[I];
    if (N.Opc == Op::Parameter)
      continue;
    HasReduce |= N.Opc == Op::Reduce;
    if (N.W == Node::Wrap::Fusion || N.W == Node::Wrap::Call) {
      std::vector<int> Distinct;
      for (int Id : N.Operands)
        if (std::find(Distinct.begin(), Distinct.end(), Id) == Distinct.end())
          Distinct.push_back(Id);
      std::string SR = N.Sh.str(true);
      OS << "  ";
      if (N.WrapIndex < 0) {
        OS << (int(I) == RootId ? "ROOT " : "") << Name(int(I)) << " = " << SR;
      } else {
        std::string S0 = Nodes[size_t(Distinct[0])].Sh.str(true);
        bool First = N.WrapIndex == 0;
        OS << Name(int(I)) << "_multi = (" << (First ? SR : S0) << ", "
           << (First ? S0 : SR) << ")";
      }
      OS << (N.W == Node::Wrap::Fusion ? " fusion(" : " call(");
      for (size_t K = 0; K < Distinct.size(); ++K)
        OS << (K ? ", " : "") << Use(Distinct[K]);
      OS << (N.W == Node::Wrap::Fusion ? "), kind=kLoop, calls=nested_"
                                       : "), to_apply=nested_")
         << I << "\n";
      if (N.WrapIndex >= 0)
        OS << "  " << (int(I) == RootId ? "ROOT " : "") << Name(int(I)) << " = "
           << SR << " get-tuple-element(" << Name(int(I))
           << "_multi), index=" << N.WrapIndex << "\n";
      continue;
    }
    OS << "  " << (int(I) == RootId ? "ROOT " : "") << Name(int(I)) << " = "
       << N.Sh.str(true) << " ";
    OS << opcodeName(N.Opc) << "(";
    if (N.Opc == Op::Constant)
      OS << N.ValueText;
    for (size_t K = 0; K < N.Operands.size(); ++K)
      OS << (K ? ", " : "") << Use(N.Operands[K]);
    OS << ")" << N.Attrs << "\n";
    if (N.W == Node::Wrap::Tuple) {
      // (value, other) or (other, value), read back by index.
      const Node &Other = Nodes[size_t(N.WrapOther)];
      bool First = (I + size_t(N.WrapOther)) % 2 == 0;
      std::string A = Name(int(I)), B = Use(N.WrapOther);
      std::string SA = N.Sh.str(true), SB = Other.Sh.str(true);
      OS << "  " << A << "_tuple = (" << (First ? SA : SB) << ", "
         << (First ? SB : SA) << ") tuple(" << (First ? A : B) << ", "
         << (First ? B : A) << ")\n";
      OS << "  " << A << "_gte = " << SA << " get-tuple-element(" << A
         << "_tuple), index=" << (First ? 0 : 1) << "\n";
    }
  }
  OS << "}\n\nENTRY main {\n";
  for (int P : Params)
    OS << "  a" << Nodes[size_t(P)].ParamNumber << " = "
       << Nodes[size_t(P)].Sh.str(true) << " parameter("
       << Nodes[size_t(P)].ParamNumber << ")\n";
  OS << "  ROOT fusion = " << Nodes[size_t(RootId)].Sh.str(true) << " fusion(";
  for (size_t K = 0; K < Params.size(); ++K)
    OS << (K ? ", " : "") << "a" << K;
  OS << "), kind=" << (HasReduce ? "kInput" : "kLoop")
     << ", calls=fused_computation\n}\n";
  return OS.str();
}

RandomFusion Generator::run() {
  SingleOp = O.RootOp.has_value();
  std::vector<int> Roots;
  int RootId = -1;
  if (SingleOp) {
    Roots = buildSingle(*O.RootOp);
    if (Roots.empty())
      return {};
    if (*O.RootOp != Op::Tuple)
      RootId = Roots[0];
  } else {
    // Its own stream: 0 percent leaves every seed's fusion as it was.
    NewOps = ForceNewOp =
        O.NewOpsPercent &&
        Rng(Seed ^ 0x5851f42d4c957f2dULL).chance(O.NewOpsPercent, 100);
    int Budget = int(R.range(O.MinInstructions, O.MaxInstructions));
    int NOut = R.chance(O.TuplePercent, 100) ? int(R.range(2, 3)) : 1;
    if (NOut > 1 && !O.ExactOpsOnly && R.chance(1, 6)) {
      // A variadic reduce as the root: two outputs.
      Remaining = Budget;
      for (int Try = 0; Try < 20 && RootId < 0; ++Try)
        RootId = buildReduce(randomShape(PT::F32, int(R.range(0, 3))),
                             /*Variadic=*/true, /*WithGte=*/false);
    }
    if (RootId < 0) {
      for (int K = 0; K < NOut; ++K) {
        int Left = NOut - 1 - K;
        Remaining = K + 1 == NOut ? std::max(Budget, 1)
                                  : int(R.range(1, std::max(1, Budget - Left)));
        int Given = Remaining;
        int Rank = R.range(0, 19) == 0 ? 0 : int(R.range(1, 4));
        Roots.push_back(genRoot(randomShape(pickType(), Rank)));
        Budget -= Given - std::max(Remaining, 0);
      }
      if (NOut == 1)
        RootId = Roots[0];
    }
  }
  if (RootId < 0) {
    // A tuple of the roots.
    Node T;
    T.Opc = Op::Tuple;
    std::vector<Shape> Shapes;
    for (int Id : Roots)
      Shapes.push_back(Nodes[size_t(Id)].Sh);
    T.Sh = Shape::tuple(Shapes);
    T.Operands = Roots;
    T.M = Inf;
    RootId = int(Nodes.size());
    Nodes.push_back(std::move(T));
  } else {
    Roots = {RootId};
  }

  RandomFusion Out;
  if (O.StructuredPercent &&
      Rng(Seed ^ 0x2545f4914f6cdd1dULL).chance(O.StructuredPercent, 100))
    addStructure(RootId, Out);
  Out.Text = text(RootId);
  Out.NumParams = unsigned(Params.size());
  const Node &Root = Nodes[size_t(RootId)];
  // The outputs: the tuple's operands, or the root itself (a variadic
  // reduce root is analyzed as inexact as a whole).
  std::vector<int> OutNodes;
  if (Root.Opc == Op::Tuple)
    OutNodes = Root.Operands;
  else if (Root.Sh.isTuple())
    OutNodes.assign(Root.Sh.TupleShapes.size(), RootId);
  else
    OutNodes = {RootId};
  Out.NumOutputs = unsigned(OutNodes.size());
  for (int Id : OutNodes) {
    const Node &N = Nodes[size_t(Id)];
    std::vector<bool> E(Params.size(), true);
    for (size_t P = 0; P < Params.size(); ++P) {
      if (N.Inexact.count(int(P))) {
        E[P] = false;
        continue;
      }
      auto It = N.Signs.find(int(P));
      if (It == N.Signs.end())
        continue; // Not reached: no map, no dependency.
      bool F32 = N.Sh.Type == PT::F32;
      E[P] = (It->second == 1 || It->second == 2) &&
             (!F32 || (N.S > 0 && std::isfinite(N.M)));
    }
    Out.Exact.push_back(E);
  }
  std::vector<int> Uses(Nodes.size(), 0);
  for (const Node &N : Nodes) {
    if (N.Opc != Op::Parameter)
      Out.Ops.push_back(N.Opc);
    for (int Id : N.Operands)
      ++Uses[size_t(Id)];
  }
  for (int U : Uses)
    Out.HasReuse |= U > 1;
  return Out;
}

void Generator::addStructure(int RootId, RandomFusion &Out) {
  // Its own random stream: the fusion itself is the one the seed gives
  // without structure.
  Rng S(Seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
  // Candidates: array-shaped instructions with array operands (tuple
  // values, variadic reduces and their elements, stay as they are).
  std::vector<int> Candidates;
  for (size_t I = 0; I < Nodes.size(); ++I) {
    const Node &N = Nodes[I];
    if (N.Opc == Op::Parameter || N.Operands.empty() || !N.Sh.isArray() ||
        N.Opc == Op::GetTupleElement || N.Opc == Op::Tuple)
      continue;
    bool ArrayOperands = true;
    for (int Id : N.Operands)
      ArrayOperands &= Nodes[size_t(Id)].Sh.isArray();
    if (ArrayOperands)
      Candidates.push_back(int(I));
  }
  unsigned Wraps = unsigned(S.range(1, 3));
  for (unsigned K = 0; K < Wraps && !Candidates.empty(); ++K) {
    size_t Pick = size_t(S.range(0, int64_t(Candidates.size()) - 1));
    int Id = Candidates[Pick];
    Candidates.erase(Candidates.begin() + std::ptrdiff_t(Pick));
    Node &N = Nodes[size_t(Id)];
    int Kind = int(S.range(0, 2));
    // The root's value is the fusion's output: not read through a tuple.
    if (Kind == 0 && Id == RootId)
      Kind = 1;
    if (Kind == 0) {
      N.W = Node::Wrap::Tuple;
      std::vector<int> Others;
      for (int J = 0; J < int(Nodes.size()); ++J)
        if (Nodes[size_t(J)].Sh.isArray() &&
            (J < Id || Nodes[size_t(J)].Opc == Op::Parameter))
          Others.push_back(J);
      N.WrapOther = Others.empty() ? Id : S.pick(Others);
      Out.Ops.push_back(Op::Tuple);
      Out.Ops.push_back(Op::GetTupleElement);
    } else {
      N.W = Kind == 1 ? Node::Wrap::Fusion : Node::Wrap::Call;
      Out.Ops.push_back(Kind == 1 ? Op::Fusion : Op::Call);
      // Now and then two outputs, the value's read back by index.
      if (S.chance(1, 3)) {
        N.WrapIndex = int(S.range(0, 1));
        Out.Ops.push_back(Op::GetTupleElement);
      }
    }
  }
  Out.Structured = true;
}

std::string formatIndex(const Shape &S, int64_t Linear) {
  std::vector<int64_t> Idx(S.Dims.size());
  for (size_t I = S.Dims.size(); I-- > 0;) {
    Idx[I] = Linear % S.Dims[I];
    Linear /= S.Dims[I];
  }
  std::string R = "[";
  for (size_t I = 0; I < Idx.size(); ++I)
    R += (I ? "," : "") + std::to_string(Idx[I]);
  return R + "]";
}

/// Row-major linear index of the first Dims.size() entries of \p Idx, -1 if
/// out of bounds.
int64_t linearIn(const Shape &S, const std::vector<int64_t> &Idx) {
  if (Idx.size() < S.Dims.size())
    return -1;
  int64_t L = 0;
  for (size_t I = 0; I < S.Dims.size(); ++I) {
    if (Idx[I] < 0 || Idx[I] >= S.Dims[I])
      return -1;
    L = L * S.Dims[I] + Idx[I];
  }
  return L;
}

} // namespace

RandomFusion generateRandomFusion(uint64_t Seed,
                                  const RandomHloOptions &Options) {
  // dot, convolution, reduce-window, map: support/RandomContraction.h.
  const std::vector<HloOpcode> &Contraction = contractionSingleOps();
  if (Options.RootOp && std::count(Contraction.begin(), Contraction.end(),
                                   *Options.RootOp))
    return generateContractionFusion(Seed, *Options.RootOp);
  // gather, scatter, sort, all-gather: support/RandomIndexed.h.
  const std::vector<HloOpcode> &Indexed = indexedSingleOps();
  if (Options.RootOp &&
      std::count(Indexed.begin(), Indexed.end(), *Options.RootOp))
    return generateIndexedFusion(Seed, *Options.RootOp);
  // A fusion without parameters has nothing to check: draw again.
  RandomFusion F;
  for (uint64_t Attempt = 0; Attempt < 16; ++Attempt) {
    Generator G(Seed + Attempt * 0x9e3779b97f4a7c15ULL, Options);
    F = G.run();
    if (F.NumParams > 0)
      break;
  }
  return F;
}

std::vector<HloOpcode> singleOpOpcodes() {
  std::vector<HloOpcode> V;
  for (Op X : FloatUnary)
    V.push_back(X);
  for (Op X : {Op::Not, Op::PopCount, Op::Clz, Op::IsFinite})
    V.push_back(X);
  for (Op X : IntBinary)
    V.push_back(X);
  V.push_back(Op::Atan2);
  for (Op X : {Op::Convert, Op::Select, Op::Clamp, Op::Compare, Op::Broadcast,
               Op::Reshape, Op::Bitcast, Op::Transpose, Op::Copy, Op::Slice,
               Op::DynamicSlice, Op::DynamicUpdateSlice, Op::Pad, Op::Reverse,
               Op::Concatenate, Op::Reduce, Op::Tuple, Op::GetTupleElement})
    V.push_back(X);
  for (Op X : contractionSingleOps())
    V.push_back(X);
  for (Op X : indexedSingleOps())
    V.push_back(X);
  return V;
}

InverseCheckResult checkInverseConsistency(Context &Ctx,
                                           const HloInstruction &I,
                                           int64_t InputId, int64_t OutputId) {
  InverseCheckResult Res;
  auto Fail = [&](std::string M) {
    Res.Ok = false;
    Res.Message = std::move(M);
    return Res;
  };
  InstructionIndexing I2O = computeInputToOutputIndexing(Ctx, I, InputId);
  if (I2O.Operands.empty() || I2O.Operands[0].empty())
    return Fail("input-to-output indexing has no map");
  for (const OperandMap &OM : I2O.Operands[0])
    if (OM.Map.isUndefined()) {
      Res.Skipped = true;
      return Res;
    }
  InstructionIndexing O2I = computeOutputToInputIndexing(Ctx, I, OutputId);
  if (InputId >= int64_t(O2I.Operands.size()))
    return Fail("output-to-input indexing has no operand " +
                std::to_string(InputId));
  const Shape &In = I.operand(InputId)->shape();
  const Shape &Out =
      I.shape().isTuple() ? I.shape().TupleShapes[size_t(OutputId)] : I.shape();
  BruteForceOptions BO;
  BO.MaxPoints = 1 << 20;
  // (input element, output element) pairs each direction names.
  std::set<std::pair<int64_t, int64_t>> FromO2I, FromI2O;
  for (const OperandMap &OM : O2I.Operands[size_t(InputId)]) {
    if (OM.Map.isUndefined())
      return Fail("output-to-input map is UNDEFINED but input-to-output is "
                  "not");
    CheckStatus St;
    for (const Point &P : enumerateDomain(OM.Map, &St, BO)) {
      auto V = OM.Map.evaluate(P);
      int64_t O = linearIn(Out, P), E = V ? linearIn(In, *V) : -1;
      if (O < 0 || E < 0)
        return Fail("output-to-input map " + printMap(OM.Map) +
                    " leaves the shapes at " + formatPoint(OM.Map, P));
      FromO2I.insert({E, O});
    }
    if (St != CheckStatus::Ok)
      return Fail(std::string("cannot enumerate ") + printMap(OM.Map) + ": " +
                  checkStatusName(St));
  }
  for (const OperandMap &OM : I2O.Operands[0]) {
    CheckStatus St;
    for (const Point &P : enumerateDomain(OM.Map, &St, BO)) {
      auto V = OM.Map.evaluate(P);
      int64_t E = linearIn(In, P), O = V ? linearIn(Out, *V) : -1;
      if (O < 0 || E < 0)
        return Fail("input-to-output map " + printMap(OM.Map) +
                    " leaves the shapes at " + formatPoint(OM.Map, P));
      FromI2O.insert({E, O});
    }
    if (St != CheckStatus::Ok)
      return Fail(std::string("cannot enumerate ") + printMap(OM.Map) + ": " +
                  checkStatusName(St));
  }
  Res.Pairs = int64_t(FromO2I.size());
  for (const auto &[E, O] : FromO2I)
    if (!FromI2O.count({E, O}))
      return Fail("output-to-input names input " + formatIndex(In, E) +
                  " for output " + formatIndex(Out, O) +
                  ", input-to-output does not map it there");
  for (const auto &[E, O] : FromI2O)
    if (!FromO2I.count({E, O}))
      return Fail("input-to-output maps input " + formatIndex(In, E) +
                  " to output " + formatIndex(Out, O) +
                  ", output-to-input does not name it");
  return Res;
}

} // namespace idxmap::testing
