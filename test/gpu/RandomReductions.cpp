//===- RandomReductions.cpp - Random reduction fusions on the GPU ---------===//
//
// Part of idxmap. Generates seeded random reduction fusions as HLO text and
// checks every emitted kernel against the reference interpreter on the GPU
// (fresh random inputs, outputs poisoned, kernelTolerance). A fusion is
//   - row (minor dims reduced, sometimes with a reduced batch dim in front),
//     multi-row (short rows: 2 .. 127), column (a middle or major dim
//     reduced, a minor dim kept), full (everything), or mixed (random
//     reduced dims, possibly not contiguous: the loop emitter's fallback);
//   - rank 1-4 with odd and prime extents (3, 7, 31, 97, 127, 257, 1009,
//     4099, 999983 ...), size-1 dims and non-default layouts now and then,
//     and some large shapes (rows of 8192, 2^20 elements) under a modest
//     average size;
//   - f32, bf16, f16 or s32, accumulated in its own type or converted to
//     f32 first (as XLA does for bf16);
//   - reduced with add, maximum, minimum, multiply, or variadically (argmax
//     with the smallest index on ties; min and max together);
//   - with an elementwise prologue (convert, abs, negate, exp, multiply by
//     a constant, select/compare, a second input, a broadcast kept-shape
//     input) and epilogue (negate, abs, tanh, scale, relu, mean, a kept-shape
//     input, convert back), and now and then several outputs (the reduce
//     and its epilogue, two reduces of one input, or a side output over the
//     input).
//
// Init values are identities for add (0) and multiply (1), as XLA requires
// (a kernel may apply the init value once per thread); maximum and minimum
// take any constant or a scalar parameter (they are idempotent). Values are
// kept where the comparison is meaningful: add reductions read |x| <= 2
// (kernelTolerance assumes magnitudes near 1), multiply reductions read
// exact factors (sign, powers of two, odd integers) or f32 factors near 1
// over short reductions.
//
// A fusion the emitter refuses (a Diagnostic) counts as unsupported; its
// reason is printed and tallied. Exit 0 when every emitted kernel matches
// and at most 10% are unsupported, 1 otherwise, 77 without a CUDA driver
// (ctest skips). --dry-run needs no driver: it generates, emits, checks the
// launch metadata (and the PTX with ptxas when --ptxas names one) and runs
// the interpreter on each fusion.
//
//   random_reductions [--seed N] [--count N] [--max-elements N]
//                     [--tune NAME=VALUE[,...]] [--dry-run] [--ptxas PATH]
//                     [--simulate] [--print] [-v]
//
//===----------------------------------------------------------------------===//

#include "idxmap/Emit.h"
#include "idxmap/Fusion.h"
#include "idxmap/Runner.h"
#include "support/GpuTestDriver.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace idxmap;

namespace {

//===----------------------------------------------------------------------===//
// The generator
//===----------------------------------------------------------------------===//

enum class Kind { Row, MultiRow, Column, Full, Mixed };
enum class Reducer { Add, Max, Min, Mul, ArgMax, MinMax };

const char *kindName(Kind K) {
  switch (K) {
  case Kind::Row:
    return "row";
  case Kind::MultiRow:
    return "multi-row";
  case Kind::Column:
    return "column";
  case Kind::Full:
    return "full";
  case Kind::Mixed:
    return "mixed";
  }
  return "?";
}

const char *reducerName(Reducer R) {
  switch (R) {
  case Reducer::Add:
    return "add";
  case Reducer::Max:
    return "maximum";
  case Reducer::Min:
    return "minimum";
  case Reducer::Mul:
    return "multiply";
  case Reducer::ArgMax:
    return "argmax";
  case Reducer::MinMax:
    return "minmax";
  }
  return "?";
}

/// A generated module and what it was meant to exercise.
struct ReductionCase {
  std::string Text;
  /// e.g. `row bf16->f32 add [7,4099]{1,0} dims={1}`.
  std::string Summary;
  std::string Type;
  std::string Red;
};

class ReductionGenerator {
public:
  ReductionGenerator(uint64_t Seed, int64_t MaxElements)
      : R(Seed), MaxElements(MaxElements), Seed(Seed) {}
  ReductionCase run();

private:
  uint64_t below(uint64_t N) { return N ? R() % N : 0; }
  bool chance(unsigned Percent) { return below(100) < Percent; }
  template <typename T> T pick(const std::vector<T> &V) {
    return V[below(V.size())];
  }

  // Shapes.
  void chooseDims(Kind K);
  std::string shape(const std::string &Ty,
                    const std::vector<int64_t> &D) const;
  /// The input's shape with its layout.
  std::string inShape(const std::string &Ty) const;
  std::string keptShape(const std::string &Ty) const;
  static std::string list(const std::vector<int64_t> &V);

  // Instructions of the fused computation.
  std::string fresh() { return "v" + std::to_string(N++); }
  std::string emit(const std::string &Shape, const std::string &Rhs);
  std::string param(const std::string &Shape);
  std::string constantOf(const std::string &Ty, const std::string &Value);
  std::string splat(const std::string &Ty, const std::string &Value,
                    bool Input);
  std::string reducerComputation(Reducer Rd, const std::string &Ty);

  // Value chains. Each returns the new value; Mag bounds |value| (floats).
  std::string prologueOp(std::string X, const std::string &Ty, double &Mag);
  std::string epilogueOp(std::string X, const std::string &Ty, Reducer Rd);

  std::mt19937_64 R;
  int64_t MaxElements;
  uint64_t Seed;
  // Input dims (logical), reduced dims, layout (minor-to-major; empty for
  // the default).
  std::vector<int64_t> Dims, Reduced, Layout;
  std::vector<int64_t> KeptDims;
  int64_t ReducedCount = 1;
  int N = 0;
  std::vector<std::pair<std::string, std::string>> Params; // name, shape
  std::vector<std::string> Lines;
  std::map<std::string, std::string> Computations; // name -> text
};

std::string ReductionGenerator::list(const std::vector<int64_t> &V) {
  std::string S = "{";
  for (size_t K = 0; K < V.size(); ++K)
    S += (K ? "," : "") + std::to_string(V[K]);
  return S + "}";
}

std::string ReductionGenerator::shape(const std::string &Ty,
                                      const std::vector<int64_t> &D) const {
  std::string S = Ty + "[";
  for (size_t K = 0; K < D.size(); ++K)
    S += (K ? "," : "") + std::to_string(D[K]);
  return S + "]";
}

std::string ReductionGenerator::inShape(const std::string &Ty) const {
  return shape(Ty, Dims) + (Layout.empty() ? "" : list(Layout));
}

std::string ReductionGenerator::keptShape(const std::string &Ty) const {
  return shape(Ty, KeptDims);
}

std::string ReductionGenerator::emit(const std::string &Shape,
                                     const std::string &Rhs) {
  std::string V = fresh();
  Lines.push_back(V + " = " + Shape + " " + Rhs);
  return V;
}

std::string ReductionGenerator::param(const std::string &Shape) {
  std::string P = "p" + std::to_string(Params.size());
  Params.push_back({P, Shape});
  return P;
}

std::string ReductionGenerator::constantOf(const std::string &Ty,
                                           const std::string &Value) {
  return emit(Ty + "[]", "constant(" + Value + ")");
}

/// A constant broadcast to the input shape (Input) or the kept shape.
std::string ReductionGenerator::splat(const std::string &Ty,
                                      const std::string &Value, bool Input) {
  std::string C = constantOf(Ty, Value);
  if (!Input && KeptDims.empty())
    return C;
  return emit(Input ? inShape(Ty) : keptShape(Ty),
              "broadcast(" + C + "), dimensions={}");
}

/// Picks the input dims, the reduced dims and the layout for \p K.
void ReductionGenerator::chooseDims(Kind K) {
  static const std::vector<int64_t> RowLong = {
      32,  33,  64,   97,   127,  128,  129,  255,  256, 257,
      500, 512, 1000, 1009, 1024, 2048, 4096, 4099, 8192};
  static const std::vector<int64_t> RowShort = {
      2, 3, 4, 5, 7, 8, 13, 16, 17, 31, 32, 33, 48, 63, 64, 97, 127};
  static const std::vector<int64_t> Rows = {
      1, 2, 3, 7, 13, 31, 32, 97, 127, 128, 257, 1000, 1009, 4096, 4099,
      8192, 65536};
  static const std::vector<int64_t> ColReduced = {
      2, 3, 7, 8, 31, 32, 97, 127, 128, 257, 1000, 1009, 1024, 4099};
  static const std::vector<int64_t> ColMinor = {
      2, 3, 7, 16, 31, 32, 33, 64, 97, 127, 128, 257, 1000, 1024, 4099};
  static const std::vector<int64_t> Major = {2, 3, 7, 13, 32};
  static const std::vector<int64_t> FullSizes = {
      2,    3,     7,     31,     97,      127,     257,
      1009, 4099,  65536, 65537,  262144,  1 << 20, 999983};
  static const std::vector<int64_t> Small = {2, 3, 4, 5, 7, 8, 16, 31};
  static const std::vector<int64_t> Mixed = {1, 2, 3, 5, 7, 8, 16, 17, 31,
                                             64, 97};
  // Roles per logical dim: 'k' kept, 'r' reduced; the first dim of each
  // group takes the group's characteristic extent, the others small ones.
  std::string Roles;
  std::vector<const std::vector<int64_t> *> Lists;
  auto Group = [&](char Role, int64_t Count, const std::vector<int64_t> &L) {
    for (int64_t I = 0; I < Count; ++I) {
      Roles += Role;
      Lists.push_back(I + 1 == Count ? &L : &Small);
    }
  };
  int64_t Rank = 1;
  switch (K) {
  case Kind::Row:
  case Kind::MultiRow: {
    Rank = 2 + int64_t(below(3));
    int64_t Batch = Rank >= 3 && chance(25) ? 1 : 0;
    int64_t Kept = 1 + int64_t(below(uint64_t(Rank - Batch - 1)));
    Group('r', Batch, Small);
    Group('k', Kept, Rows);
    Group('r', Rank - Batch - Kept, K == Kind::Row ? RowLong : RowShort);
    break;
  }
  case Kind::Column: {
    Rank = 2 + int64_t(below(3));
    int64_t Minor = Rank >= 3 && chance(20) ? 2 : 1;
    int64_t Red = Rank - Minor >= 2 && chance(30) ? 2 : 1;
    Group('k', Rank - Minor - Red, Major);
    Group('r', Red, ColReduced);
    Group('k', Minor, ColMinor);
    break;
  }
  case Kind::Full:
    Rank = 1 + int64_t(below(4));
    Group('r', Rank, FullSizes);
    break;
  case Kind::Mixed:
    Rank = 2 + int64_t(below(3));
    do {
      Roles.clear();
      Lists.clear();
      for (int64_t I = 0; I < Rank; ++I)
        Group(chance(50) ? 'r' : 'k', 1, Mixed);
    } while (Roles.find('r') == std::string::npos);
    break;
  }
  // A size-1 dim now and then (dropped by the analysis).
  if (Rank < 4 && chance(15)) {
    size_t At = size_t(below(uint64_t(Rank + 1)));
    static const std::vector<int64_t> One = {1};
    Roles.insert(At, 1, chance(50) ? 'r' : 'k');
    Lists.insert(Lists.begin() + int64_t(At), &One);
    ++Rank;
  }
  // A size budget: mostly small, sometimes up to MaxElements; then the
  // extents are drawn from the upper half of their lists (rows of 8192,
  // 2^20 elements).
  int64_t Budget = chance(60) ? (1 << 14) : chance(75) ? (1 << 17) : MaxElements;
  Budget = std::min(Budget, MaxElements);
  bool Large = Budget == MaxElements;
  Dims.clear();
  for (const auto *L : Lists)
    Dims.push_back(Large && L->size() > 2
                       ? (*L)[L->size() / 2 + below(L->size() - L->size() / 2)]
                       : pick(*L));
  auto Total = [&] {
    int64_t P = 1;
    for (int64_t D : Dims)
      P *= D;
    return P;
  };
  for (int Try = 0; Total() > Budget; ++Try) {
    // Shrink the largest dim to the next smaller extent of its list (or
    // halve it).
    size_t Big = size_t(std::max_element(Dims.begin(), Dims.end()) -
                        Dims.begin());
    int64_t Next = 0;
    for (int64_t E : *Lists[Big])
      if (E < Dims[Big])
        Next = std::max(Next, E);
    Dims[Big] = Next == 0 || Try > 50 ? std::max<int64_t>(1, Dims[Big] / 2)
                                      : Next;
  }
  Reduced.clear();
  KeptDims.clear();
  ReducedCount = 1;
  for (size_t D = 0; D < Dims.size(); ++D) {
    if (Roles[D] == 'r') {
      Reduced.push_back(int64_t(D));
      ReducedCount *= Dims[D];
    } else {
      KeptDims.push_back(Dims[D]);
    }
  }
  // A non-default layout now and then: the roles above are then logical
  // only and the analysis sees another physical pattern.
  Layout.clear();
  if (Rank >= 2 && chance(10)) {
    Layout.resize(size_t(Rank));
    for (int64_t I = 0; I < Rank; ++I)
      Layout[size_t(I)] = Rank - 1 - I;
    std::shuffle(Layout.begin(), Layout.end(), R);
    bool Default = true;
    for (int64_t I = 0; I < Rank; ++I)
      Default &= Layout[size_t(I)] == Rank - 1 - I;
    if (Default)
      Layout.clear();
  }
}

std::string ReductionGenerator::reducerComputation(Reducer Rd,
                                                   const std::string &Ty) {
  std::string Name = std::string(reducerName(Rd)) + "_" + Ty;
  if (Computations.count(Name))
    return Name;
  std::ostringstream OS;
  OS << Name << " {\n";
  switch (Rd) {
  case Reducer::Add:
  case Reducer::Max:
  case Reducer::Min:
  case Reducer::Mul:
    OS << "  a = " << Ty << "[] parameter(0)\n  b = " << Ty
       << "[] parameter(1)\n  ROOT r = " << Ty << "[] " << reducerName(Rd)
       << "(a, b)\n";
    break;
  case Reducer::ArgMax:
    // The larger value; on equal values the smaller index.
    OS << "  av = " << Ty << "[] parameter(0)\n"
       << "  ai = s32[] parameter(1)\n"
       << "  bv = " << Ty << "[] parameter(2)\n"
       << "  bi = s32[] parameter(3)\n"
       << "  gt = pred[] compare(av, bv), direction=GT\n"
       << "  eq = pred[] compare(av, bv), direction=EQ\n"
       << "  lt = pred[] compare(ai, bi), direction=LT\n"
       << "  tie = pred[] and(eq, lt)\n"
       << "  take = pred[] or(gt, tie)\n"
       << "  v = " << Ty << "[] select(take, av, bv)\n"
       << "  i = s32[] select(take, ai, bi)\n"
       << "  ROOT t = (" << Ty << "[], s32[]) tuple(v, i)\n";
    break;
  case Reducer::MinMax:
    OS << "  a0 = " << Ty << "[] parameter(0)\n  a1 = " << Ty
       << "[] parameter(1)\n  b0 = " << Ty << "[] parameter(2)\n  b1 = " << Ty
       << "[] parameter(3)\n  lo = " << Ty << "[] minimum(a0, b0)\n  hi = "
       << Ty << "[] maximum(a1, b1)\n  ROOT t = (" << Ty << "[], " << Ty
       << "[]) tuple(lo, hi)\n";
    break;
  }
  OS << "}\n\n";
  Computations[Name] = OS.str();
  return Name;
}

std::string ReductionGenerator::prologueOp(std::string X, const std::string &Ty,
                                           double &Mag) {
  bool Float = Ty != "s32";
  std::string In = inShape(Ty);
  switch (below(Float ? 9 : 6)) {
  case 0:
    return emit(In, "negate(" + X + ")");
  case 1:
    return emit(In, "abs(" + X + ")");
  case 2: {
    // Multiply by a constant.
    std::string C = Float ? pick(std::vector<std::string>{"0.5", "-0.25", "2",
                                                          "-1.5"})
                          : pick(std::vector<std::string>{"3", "-2", "5"});
    Mag *= std::fabs(std::stod(C));
    return emit(In, "multiply(" + X + ", " + splat(Ty, C, true) + ")");
  }
  case 3: {
    // A second input of the same shape.
    Mag += 2;
    return emit(In, "add(" + X + ", " + param(In) + ")");
  }
  case 4: {
    // Leaky relu: select(x > 0, x, c * x) with compare and select.
    std::string Z = splat(Ty, "0", true);
    std::string P = emit(inShape("pred"), "compare(" + X + ", " + Z +
                                              "), direction=GT");
    std::string S = emit(In, "multiply(" + X + ", " +
                                 splat(Ty, Float ? "0.25" : "0", true) + ")");
    return emit(In, "select(" + P + ", " + X + ", " + S + ")");
  }
  case 5: {
    // Subtract a kept-shape input broadcast over the reduced dims.
    std::vector<int64_t> Kept;
    for (int64_t D = 0; D < int64_t(Dims.size()); ++D)
      if (std::find(Reduced.begin(), Reduced.end(), D) == Reduced.end())
        Kept.push_back(D);
    std::string P = param(keptShape(Ty));
    std::string B = emit(In, "broadcast(" + P + "), dimensions=" + list(Kept));
    Mag += 2;
    return emit(In, "subtract(" + X + ", " + B + ")");
  }
  case 6:
    if (Mag <= 2) {
      Mag = std::exp(Mag);
      return emit(In, "exponential(" + X + ")");
    }
    return emit(In, "negate(" + X + ")");
  case 7:
    Mag = std::min(Mag, 1.0);
    return emit(In, "tanh(" + X + ")");
  default: {
    Mag = std::max(Mag, 0.5);
    return emit(In, "maximum(" + X + ", " + splat(Ty, "-0.5", true) + ")");
  }
  }
}

std::string ReductionGenerator::epilogueOp(std::string X, const std::string &Ty,
                                           Reducer Rd) {
  bool Float = Ty != "s32";
  std::string Out = keptShape(Ty);
  switch (below(Float ? 7 : 5)) {
  case 0:
    return emit(Out, "negate(" + X + ")");
  case 1:
    return emit(Out, "abs(" + X + ")");
  case 2:
    return emit(Out, "multiply(" + X + ", " +
                         splat(Ty, Float ? "0.5" : "-3", false) + ")");
  case 3:
    return emit(Out, "maximum(" + X + ", " + splat(Ty, "0", false) + ")");
  case 4:
    return emit(Out, "add(" + X + ", " + param(Out) + ")");
  case 5:
    return emit(Out, "tanh(" + X + ")");
  default:
    if (Rd == Reducer::Add && (Ty == "f32" || ReducedCount <= 2048)) // mean
      return emit(Out, "divide(" + X + ", " +
                           splat(Ty, std::to_string(ReducedCount), false) +
                           ")");
    return emit(Out, "negate(" + X + ")");
  }
}

ReductionCase ReductionGenerator::run() {
  ReductionCase Case;
  Kind K = pick(std::vector<Kind>{Kind::Row, Kind::Row, Kind::Row,
                                  Kind::MultiRow, Kind::MultiRow,
                                  Kind::Column, Kind::Column, Kind::Column,
                                  Kind::Full, Kind::Full, Kind::Mixed});
  chooseDims(K);
  std::string T = pick(std::vector<std::string>{"f32", "bf16", "f16", "s32"});
  bool Float = T != "s32";
  int64_t X100 = int64_t(below(100));
  Reducer Rd = X100 < 38   ? Reducer::Add
               : X100 < 58 ? Reducer::Max
               : X100 < 73 ? Reducer::Min
               : X100 < 87 ? Reducer::Mul
               : X100 < 95 ? Reducer::ArgMax
                           : Reducer::MinMax;
  // Accumulation type: narrow floats mostly in f32 (XLA's choice for bf16),
  // s32 now and then in f32 when the sums stay exact there.
  // Narrow accumulators only over short enough reductions (f16 sums of
  // 2^20 elements overflow); s32 in f32 only where every partial sum of
  // the (at most 250 in magnitude) integers stays below 2^24.
  std::string A = T;
  if ((T == "bf16" || T == "f16") && (chance(60) || ReducedCount > 8192))
    A = "f32";
  if (T == "s32" && Rd == Reducer::Add && chance(25) && ReducedCount <= 16384)
    A = "f32";
  bool AFloat = A != "s32";

  // Prologue: a few ops, the convert somewhere among them.
  std::string X = param(inShape(T));
  std::string Ty = T;
  double Mag = 2;
  int64_t Steps = int64_t(below(4));
  int64_t ConvertAt = int64_t(below(uint64_t(Steps + 1)));
  for (int64_t I = 0; I <= Steps; ++I) {
    if (I == ConvertAt && A != Ty) {
      X = emit(inShape(A), "convert(" + X + ")");
      Ty = A;
    }
    if (I < Steps)
      X = prologueOp(X, Ty, Mag);
  }
  // Reducer-specific conditioning of the reduced values.
  std::string MulForm;
  if (Rd == Reducer::Add && AFloat && Mag > 2) {
    double Scale = std::ldexp(1.0, -int(std::ceil(std::log2(Mag / 2))));
    std::ostringstream S;
    S << Scale;
    X = emit(inShape(A), "multiply(" + X + ", " + splat(A, S.str(), true) + ")");
    Mag = 2;
  }
  if (Rd == Reducer::Mul) {
    std::string In = inShape(A);
    if (!AFloat) {
      // Odd integers: products never vanish, wrap identically.
      MulForm = "odd";
      X = emit(In, "add(" + emit(In, "multiply(" + X + ", " +
                                         splat(A, "2", true) + ")") +
                       ", " + splat(A, "1", true) + ")");
    } else if (A == "f32" && ReducedCount <= 256 && chance(40)) {
      // Factors in [0.97, 1.03] after a bounded value (Mag <= 2 here).
      MulForm = "near-one";
      if (Mag > 2)
        X = emit(In, "tanh(" + X + ")");
      X = emit(In, "add(" + emit(In, "multiply(" + X + ", " +
                                         splat(A, "0.015625", true) + ")") +
                       ", " + splat(A, "1", true) + ")");
    } else if (ReducedCount <= (A == "f16" ? 14 : 100) && chance(50)) {
      // Powers of two: exact products.
      MulForm = "pow2";
      std::string P = emit(inShape("pred"), "compare(" + X + ", " +
                                                splat(A, "0", true) +
                                                "), direction=GT");
      X = emit(In, "select(" + P + ", " + splat(A, "2", true) + ", " +
                       splat(A, "0.5", true) + ")");
    } else {
      MulForm = "sign";
      X = emit(In, "sign(" + X + ")");
    }
  }

  // Init values.
  auto InitFor = [&](Reducer Which, bool Low) -> std::string {
    if (Which == Reducer::Add)
      return constantOf(A, "0");
    if (Which == Reducer::Mul)
      return constantOf(A, "1");
    std::string Identity =
        AFloat ? (Low ? "-inf" : "inf")
               : (Low ? "-2147483648" : "2147483647");
    int64_t C = int64_t(below(10));
    if (C < 5)
      return constantOf(A, Identity);
    if (C < 8)
      return constantOf(A, pick(std::vector<std::string>{"0", "1", "-1"}));
    return param(A + "[]");
  };

  std::string RedDims = list(Reduced);
  std::string Root, RootShape;
  std::string Kept = keptShape(A);
  if (Rd == Reducer::ArgMax || Rd == Reducer::MinMax) {
    std::string Second, SecondInit, SecondTy;
    if (Rd == Reducer::ArgMax) {
      // Index along the innermost reduced dim.
      Second = emit(inShape("s32"), "iota(), iota_dimension=" +
                                        std::to_string(Reduced.back()));
      SecondInit = constantOf("s32", "0");
      SecondTy = "s32";
    } else {
      Second = X;
      SecondInit = InitFor(Reducer::Max, true);
      SecondTy = A;
    }
    std::string First = InitFor(Rd == Reducer::ArgMax ? Reducer::Max
                                                      : Reducer::Min,
                                Rd == Reducer::ArgMax);
    std::string TupleTy =
        "(" + Kept + ", " + keptShape(SecondTy) + ")";
    std::string Red = emit(TupleTy, "reduce(" + X + ", " + Second + ", " +
                                        First + ", " + SecondInit +
                                        "), dimensions=" + RedDims +
                                        ", to_apply=" +
                                        reducerComputation(Rd, A));
    auto G0 = [&] {
      return emit(Kept, "get-tuple-element(" + Red + "), index=0");
    };
    auto G1 = [&] {
      return emit(keptShape(SecondTy),
                  "get-tuple-element(" + Red + "), index=1");
    };
    int64_t Pick = int64_t(below(3));
    if (Pick == 0) {
      std::string A0 = G0(), A1 = G1();
      Root = emit(TupleTy, "tuple(" + A0 + ", " + A1 + ")");
      RootShape = TupleTy;
    } else if (Pick == 1) {
      Root = G1();
      RootShape = keptShape(SecondTy);
    } else {
      Root = G0();
      if (AFloat)
        Root = emit(Kept, "negate(" + Root + ")");
      RootShape = Kept;
    }
  } else {
    std::string Red = emit(Kept, "reduce(" + X + ", " +
                                     InitFor(Rd, Rd == Reducer::Max) +
                                     "), dimensions=" + RedDims +
                                     ", to_apply=" +
                                     reducerComputation(Rd, A));
    // Epilogue, maybe converted back to the input type at the end.
    std::string E = Red, ETy = A;
    for (int64_t I = int64_t(below(3)); I > 0; --I)
      E = epilogueOp(E, ETy, Rd);
    if (A != T && chance(50) && (Float || Rd != Reducer::Add)) {
      E = emit(keptShape(T), "convert(" + E + ")");
      ETy = T;
    }
    int64_t Out = int64_t(below(100));
    if (Out < 70 || (E == Red && Out < 80)) {
      Root = E;
      RootShape = keptShape(ETy);
    } else if (Out < 80) {
      // The reduce and its epilogue.
      RootShape = "(" + keptShape(ETy) + ", " + Kept + ")";
      Root = emit(RootShape, "tuple(" + E + ", " + Red + ")");
    } else if (Out < 95) {
      // A second reduce of the same shape: the max of the same values, or
      // the sum of their (scaled) squares.
      std::string Red2;
      if (Rd == Reducer::Add || !AFloat) {
        Red2 = emit(Kept, "reduce(" + X + ", " + InitFor(Reducer::Max, true) +
                              "), dimensions=" + RedDims + ", to_apply=" +
                              reducerComputation(Reducer::Max, A));
      } else {
        std::string In = inShape(A);
        std::string Sq = emit(In, "multiply(" + X + ", " + X + ")");
        // Mul forms are bounded by 2, max/min values by Mag.
        double M2 = Rd == Reducer::Mul ? 4 : Mag * Mag;
        if (M2 > 2) {
          std::ostringstream S;
          S << std::ldexp(1.0, -int(std::ceil(std::log2(M2 / 2))));
          Sq = emit(In, "multiply(" + Sq + ", " + splat(A, S.str(), true) +
                            ")");
        }
        Red2 = emit(Kept, "reduce(" + Sq + ", " + InitFor(Reducer::Add, true) +
                              "), dimensions=" + RedDims + ", to_apply=" +
                              reducerComputation(Reducer::Add, A));
      }
      RootShape = "(" + keptShape(ETy) + ", " + Kept + ")";
      Root = emit(RootShape, "tuple(" + E + ", " + Red2 + ")");
    } else {
      // A side output over the input (the prologue's value).
      RootShape = "(" + keptShape(ETy) + ", " + inShape(A) + ")";
      Root = emit(RootShape, "tuple(" + E + ", " + X + ")");
    }
  }

  // The module text.
  std::ostringstream OS;
  OS << "HloModule random_reduction_" << Seed << "\n\n";
  for (const auto &[Name, Text] : Computations)
    OS << Text;
  OS << "fused_reduction {\n";
  for (size_t I = 0; I < Params.size(); ++I)
    OS << "  " << Params[I].first << " = " << Params[I].second
       << " parameter(" << I << ")\n";
  for (const std::string &L : Lines)
    OS << "  " << (L.compare(0, Root.size() + 3, Root + " = ") == 0 ? "ROOT "
                                                                     : "")
       << L << "\n";
  OS << "}\n\nENTRY main {\n";
  for (size_t I = 0; I < Params.size(); ++I)
    OS << "  a" << I << " = " << Params[I].second << " parameter(" << I
       << ")\n";
  OS << "  ROOT fusion = " << RootShape << " fusion(";
  for (size_t I = 0; I < Params.size(); ++I)
    OS << (I ? ", " : "") << "a" << I;
  OS << "), kind=kInput, calls=fused_reduction\n}\n";
  Case.Text = OS.str();
  Case.Type = T == A ? T : T + "->" + A;
  Case.Red = reducerName(Rd);
  if (!MulForm.empty())
    Case.Red += "(" + MulForm + ")";
  Case.Summary = std::string(kindName(K)) + " " + Case.Type + " " + Case.Red +
                 " " + inShape(T) + " dims=" + RedDims;
  return Case;
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

/// The unsupported reason with instruction and fusion names elided, so that
/// equal reasons tally together.
std::string reasonKey(const std::string &Message) {
  static const std::regex Quoted("'[^']*'");
  return std::regex_replace(Message, Quoted, "'_'");
}

/// Launch-metadata checks that need no driver; empty when fine.
std::string checkKernels(const EmitResult &R, const HloInstruction &Fusion) {
  if (R.Kernels.size() != 1)
    return std::to_string(R.Kernels.size()) + " kernels for one fusion";
  const KernelInfo &K = R.Kernels.front();
  const HloComputation &C = *Fusion.fusedComputation();
  size_t Outputs = Fusion.shape().isTuple()
                       ? Fusion.shape().TupleShapes.size()
                       : 1;
  if (K.Params.size() != size_t(C.parameterCount()) + Outputs)
    return "kernel has " + std::to_string(K.Params.size()) +
           " params, the fusion " + std::to_string(C.parameterCount()) +
           " inputs and " + std::to_string(Outputs) + " outputs";
  uint64_t Threads = uint64_t(K.Block[0]) * K.Block[1] * K.Block[2];
  if (Threads == 0 || Threads > 1024)
    return "block of " + std::to_string(Threads) + " threads";
  if (K.Grid[0] == 0 || K.Grid[1] == 0 || K.Grid[2] == 0 ||
      K.Grid[1] > 65535 || K.Grid[2] > 65535)
    return "bad grid";
  if (K.SharedBytes > 48 * 1024)
    return "static shared memory of " + std::to_string(K.SharedBytes) +
           " bytes";
  if (!R.Ptx.empty() && R.Ptx.find(".entry " + K.Name) == std::string::npos &&
      R.Ptx.find(".entry " + K.Name + "(") == std::string::npos)
    return "PTX has no entry '" + K.Name + "'";
  return "";
}

/// Runs ptxas on \p Ptx; empty when it accepts it.
std::string runPtxas(const std::string &Ptxas, const std::string &Ptx,
                     uint64_t Seed) {
  std::string Base = "/tmp/random_reductions_" + std::to_string(getpid()) +
                     "_" + std::to_string(Seed);
  {
    std::ofstream F(Base + ".ptx");
    F << Ptx;
  }
  std::string Cmd = Ptxas + " -arch=sm_90 -o " + Base + ".cubin " + Base +
                    ".ptx > " + Base + ".log 2>&1";
  int Rc = std::system(Cmd.c_str());
  std::string Log;
  if (Rc != 0) {
    std::ifstream L(Base + ".log");
    std::stringstream SS;
    SS << L.rdbuf();
    Log = "ptxas failed: " + SS.str();
  }
  std::remove((Base + ".ptx").c_str());
  std::remove((Base + ".cubin").c_str());
  std::remove((Base + ".log").c_str());
  return Log;
}

void printHistogram(const char *Title,
                    const std::map<std::string, unsigned> &H) {
  std::printf("%s:\n", Title);
  std::vector<std::pair<unsigned, std::string>> V;
  for (const auto &[K, N] : H)
    V.push_back({N, K});
  std::sort(V.begin(), V.end(), [](const auto &A, const auto &B) {
    return A.first != B.first ? A.first > B.first : A.second < B.second;
  });
  for (const auto &[N, K] : V)
    std::printf("  %4u  %s\n", N, K.c_str());
}

} // namespace

int main(int Argc, char **Argv) {
  testing::GpuTestFlags Flags;
  Flags.MaxElements = 1 << 20;
  Flags.MinMaxElements = 16;
  Flags.TakesTune = true;
  if (auto Exit =
          testing::parseGpuTestArgs(Argc, Argv, "random_reductions", Flags))
    return *Exit;
  auto Drv = testing::openTestDriver(Flags);
  if (auto Exit = testing::skipWithoutDriver(Drv, Flags.DryRun))
    return *Exit;
  if (!Flags.DryRun)
    std::printf("device: %s\n", (*Drv)->device().Name.c_str());

  unsigned Generated = 0, Emitted = 0, Matched = 0, Unsupported = 0,
           Failed = 0;
  uint64_t Elements = 0;
  std::map<std::string, unsigned> Reasons, Emitters, Types, Reducers,
      UnsupportedBy;
  for (uint64_t S = Flags.Seed; S < Flags.Seed + Flags.Count; ++S) {
    ReductionCase Case = ReductionGenerator(S, Flags.MaxElements).run();
    ++Generated;
    auto M = parseHloModule(Case.Text, "random-reduction-" + std::to_string(S));
    if (!M) {
      std::printf("FAIL seed %llu: generated module does not parse:\n%s\n%s\n",
                  (unsigned long long)S, M.error().str().c_str(),
                  Case.Text.c_str());
      ++Failed;
      continue;
    }
    const HloInstruction *Fusion = (*M)->fusions().front();
    FusionAnalysis FA = analyzeFusion(*Fusion);
    std::string EmitterName(emitterKindName(FA.Kind));
    ++Emitters[EmitterName];
    ++Types[Case.Type];
    ++Reducers[Case.Red];
    if (Flags.Print)
      std::printf("seed %llu: %s -> %s\n%s\n", (unsigned long long)S,
                  Case.Summary.c_str(), EmitterName.c_str(),
                  Case.Text.c_str());
    // libdevice math: the test checks the emitters' logic; the fast
    // approximations are measured on their own
    // (test/unit/codegen/lower/LowerGpu.cpp).
    EmitOptions EO;
    EO.HostIr = Flags.Simulate;
    EO.Target.PreciseMath = true;
    EO.Tuning = Flags.Knobs;
    auto R = emitModule(**M, EO);
    if (!R) {
      ++Unsupported;
      std::string Why = R.error().Message;
      ++Reasons[reasonKey(Why)];
      ++UnsupportedBy[EmitterName];
      std::printf("unsupported seed %llu (%s, %s emitter): %s\n",
                  (unsigned long long)S, Case.Summary.c_str(),
                  EmitterName.c_str(), Why.c_str());
      continue;
    }
    ++Emitted;
    if (std::string Bad = checkKernels(*R, *Fusion); !Bad.empty()) {
      std::printf("FAIL seed %llu (%s): %s\n%s\n", (unsigned long long)S,
                  Case.Summary.c_str(), Bad.c_str(), Case.Text.c_str());
      ++Failed;
      continue;
    }
    if (!Flags.Ptxas.empty())
      if (std::string Bad = runPtxas(Flags.Ptxas, R->Ptx, S); !Bad.empty()) {
        std::printf("FAIL seed %llu (%s): %s\n%s\n", (unsigned long long)S,
                    Case.Summary.c_str(), Bad.c_str(), Case.Text.c_str());
        ++Failed;
        continue;
      }
    for (const HloInstruction *P : Fusion->operands())
      Elements += uint64_t(P->shape().numElements());
    if (Flags.DryRun) {
      // The reference must evaluate the fusion too.
      std::vector<Literal> Args;
      const HloComputation &C = *Fusion->fusedComputation();
      for (int64_t I = 0; I < C.parameterCount(); ++I) {
        Literal L(Shape(C.parameter(I)->shape().Type,
                        C.parameter(I)->shape().Dims));
        L.fillRandom(S * 1000003 + uint64_t(I), -2.0, 2.0);
        Args.push_back(std::move(L));
      }
      auto Ev = evaluate(C, Args);
      if (!Ev) {
        std::printf("FAIL seed %llu (%s): interpreter: %s\n%s\n",
                    (unsigned long long)S, Case.Summary.c_str(),
                    Ev.error().str().c_str(), Case.Text.c_str());
        ++Failed;
        continue;
      }
      ++Matched; // nothing to compare against: counted as checked
      if (Flags.Verbose)
        std::printf("ok seed %llu %s: %s emitter, grid %u block %u, %lld "
                    "elements\n",
                    (unsigned long long)S, Case.Summary.c_str(),
                    EmitterName.c_str(), R->Kernels.front().Grid[0],
                    R->Kernels.front().Block[0],
                    (long long)Fusion->operand(0)->shape().numElements());
      continue;
    }
    RunOptions RO;
    RO.Seed = S;
    RO.TolFor = kernelTolerances(/*PreciseMath=*/true);
    std::ostringstream Log;
    auto Res = runKernels(**Drv, **M, Flags.Simulate ? R->LlvmIr : R->Ptx,
                          R->Kernels, RO, Log);
    if (!Res) {
      std::printf("FAIL seed %llu (%s, %s emitter): run: %s\n%s\n",
                  (unsigned long long)S, Case.Summary.c_str(),
                  EmitterName.c_str(), Res.error().Message.c_str(),
                  Case.Text.c_str());
      ++Failed;
      continue;
    }
    bool Ok = true;
    for (const KernelRunResult &K : *Res)
      Ok &= K.Ok;
    if (!Ok) {
      std::printf("FAIL seed %llu (%s, %s emitter; reproduce: save the module "
                  "below and `idxmap run FILE --seed %llu --precise-math`):\n",
                  (unsigned long long)S, Case.Summary.c_str(),
                  EmitterName.c_str(), (unsigned long long)S);
      for (const KernelRunResult &K : *Res)
        for (const std::string &L : K.OutputReports)
          std::printf("  %s\n", L.c_str());
      std::printf("%s\n", Case.Text.c_str());
      ++Failed;
      continue;
    }
    ++Matched;
    if (Flags.Verbose)
      for (const KernelRunResult &K : *Res)
        for (const std::string &L : K.OutputReports)
          std::printf("ok seed %llu %s (%s): %s\n", (unsigned long long)S,
                      Case.Summary.c_str(), EmitterName.c_str(), L.c_str());
  }

  printHistogram("emitters (all generated fusions)", Emitters);
  printHistogram("element types", Types);
  printHistogram("reducers", Reducers);
  if (Unsupported) {
    printHistogram("unsupported, by emitter", UnsupportedBy);
    printHistogram("unsupported reasons", Reasons);
  }
  std::printf("random_reductions: %u emitted, %u %s, %u unsupported "
              "(%u generated, %llu input elements%s), %u failed\n",
              Emitted, Matched, Flags.DryRun ? "checked (dry run)" : "match",
              Unsupported, Generated, (unsigned long long)Elements,
              Flags.Ptxas.empty() ? "" : ", ptxas on every kernel", Failed);
  if (Unsupported * 10 > Generated) {
    std::printf("FAIL: %u of %u fusions (more than 10%%) are unsupported\n",
                Unsupported, Generated);
    return 1;
  }
  return Failed ? 1 : 0;
}
