//===- support/RandomMaps.cpp - Seeded generator of codegen-like maps -----===//
//
// Part of idxmap. Each family mirrors a kind of map that XLA's GPU indexing
// analysis or its emitters build; sizes are drawn against a point budget in
// the small mode so that every generated domain can be enumerated.
//
//===----------------------------------------------------------------------===//
#include "support/RandomMaps.h"

#include "idxmap/Context.h"

#include <algorithm>
#include <cassert>
#include <set>
#include <string>

namespace idxmap::testing {

//===----------------------------------------------------------------------===//
// Rng
//===----------------------------------------------------------------------===//

uint64_t Rng::next() {
  uint64_t Z = (State += 0x9E3779B97F4A7C15ull);
  Z = (Z ^ (Z >> 30)) * 0xBF58476D1CE4E5B9ull;
  Z = (Z ^ (Z >> 27)) * 0x94D049BB133111EBull;
  return Z ^ (Z >> 31);
}

int64_t Rng::range(int64_t Lo, int64_t Hi) {
  assert(Lo <= Hi);
  uint64_t Span = uint64_t(Hi) - uint64_t(Lo);
  if (Span == UINT64_MAX)
    return int64_t(next());
  return int64_t(uint64_t(Lo) + next() % (Span + 1));
}

bool Rng::chance(unsigned Num, unsigned Den) { return next() % Den < Num; }

const char *familyName(MapFamily F) {
  switch (F) {
  case MapFamily::LinearizeDelinearize:
    return "linearize-delinearize";
  case MapFamily::Reshape:
    return "reshape";
  case MapFamily::Tiling:
    return "tiling";
  case MapFamily::Transpose:
    return "transpose";
  case MapFamily::Broadcast:
    return "broadcast";
  case MapFamily::SliceOrPad:
    return "slice-or-pad";
  case MapFamily::ConstrainedSum:
    return "constrained-sum";
  case MapFamily::ThreadMap:
    return "thread-map";
  case MapFamily::DynamicSlice:
    return "dynamic-slice";
  case MapFamily::RandomExpr:
    return "random-expr";
  case MapFamily::RuleTargets:
    return "rule-targets";
  case MapFamily::NumFamilies:
    break;
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Map builder
//===----------------------------------------------------------------------===//

namespace {

/// Runtime variables are numbered after all range variables, which are not
/// known until the map is finished: they use placeholder symbol positions
/// from RtBase and are renumbered by finish().
constexpr unsigned RtBase = 64;

class MapBuilder {
public:
  explicit MapBuilder(Context &Ctx) : Ctx(Ctx) {}

  Expr dim(Interval B, std::string Name = "") {
    Dims.push_back({std::move(Name), B});
    return Ctx.dim(Dims.size() - 1);
  }
  Expr range(Interval B, std::string Name = "") {
    assert(Range.size() < RtBase);
    Range.push_back({std::move(Name), B});
    return Ctx.symbol(Range.size() - 1);
  }
  Expr runtime(Interval B, std::string Name = "") {
    Rt.push_back({std::move(Name), B});
    return Ctx.symbol(RtBase + Rt.size() - 1);
  }
  void result(Expr E) { Results.push_back(E); }
  void constrain(Expr E, Interval I) { Cs.push_back({E, I}); }

  /// All variables' bounds, for range computations during building. Index
  /// by variable: dims by position, range vars by symbol position, runtime
  /// vars by placeholder position.
  Interval boundOf(Expr V) const {
    if (V.isDim())
      return Dims[V.position()].Bound;
    unsigned P = V.position();
    return P >= RtBase ? Rt[P - RtBase].Bound : Range[P].Bound;
  }
  std::vector<Expr> allVars() const {
    std::vector<Expr> Vs;
    for (unsigned I = 0; I < Dims.size(); ++I)
      Vs.push_back(Ctx.dim(I));
    for (unsigned I = 0; I < Range.size(); ++I)
      Vs.push_back(Ctx.symbol(I));
    for (unsigned I = 0; I < Rt.size(); ++I)
      Vs.push_back(Ctx.symbol(RtBase + I));
    return Vs;
  }

  std::vector<Expr> &results() { return Results; }
  std::vector<Constraint> &constraints() { return Cs; }
  std::vector<Variable> &dims() { return Dims; }
  std::vector<Variable> &rangeVars() { return Range; }

  IndexingMap finish() {
    std::vector<Expr> SymRepl(RtBase + Rt.size());
    for (unsigned I = 0; I < Rt.size(); ++I)
      SymRepl[RtBase + I] = Ctx.symbol(Range.size() + I);
    auto Fix = [&](Expr E) { return Rt.empty() ? E : E.replace({}, SymRepl); };
    std::vector<Expr> Res;
    for (Expr E : Results)
      Res.push_back(Fix(E));
    std::vector<Constraint> C;
    for (const Constraint &K : Cs)
      C.push_back({Fix(K.E), K.I});
    return IndexingMap(Ctx, Dims, Range, Rt, std::move(Res), C);
  }

private:
  Context &Ctx;
  std::vector<Variable> Dims, Range, Rt;
  std::vector<Expr> Results;
  std::vector<Constraint> Cs;
};

/// Interval arithmetic over a builder's variable bounds (sound, used to
/// pick constraint intervals that are mostly feasible).
Interval intervalOf(Expr E, const MapBuilder &B) {
  switch (E.kind()) {
  case ExprKind::Constant:
    return Interval::point(E.value());
  case ExprKind::Dim:
  case ExprKind::Symbol:
    return B.boundOf(E);
  default:
    break;
  }
  Interval L = intervalOf(E.lhs(), B);
  Expr R = E.rhs();
  switch (E.kind()) {
  case ExprKind::Add:
    return L + intervalOf(R, B);
  case ExprKind::Mul:
    return L * intervalOf(R, B);
  case ExprKind::Mod:
    if (R.isConstant() && R.value() != 0)
      return L.mod(R.value());
    return Interval::full();
  case ExprKind::FloorDiv:
    if (R.isConstant() && R.value() != 0)
      return L.floorDiv(R.value());
    return Interval::full();
  case ExprKind::CeilDiv:
    if (R.isConstant() && R.value() != 0)
      return L.ceilDiv(R.value());
    return Interval::full();
  default:
    return Interval::full();
  }
}

/// Names that are valid identifiers, not keywords and not default names.
const std::vector<std::string> &customNames() {
  static const std::vector<std::string> Names = {
      "i",     "j",    "k",       "row",     "col",  "idx",
      "lane",  "warp", "chunk",   "elem",    "x",    "y",
      "batch", "head", "seq_pos", "feature", "tile", "offset_var"};
  return Names;
}

std::vector<int64_t> primeFactors(int64_t N) {
  std::vector<int64_t> F;
  for (int64_t P = 2; P * P <= N; ++P)
    while (N % P == 0) {
      F.push_back(P);
      N /= P;
    }
  if (N > 1)
    F.push_back(N);
  return F;
}

} // namespace

//===----------------------------------------------------------------------===//
// Generator implementation
//===----------------------------------------------------------------------===//

struct RandomMapGenerator::Impl {
  RandomMapGenerator &G;
  Rng &R;
  Context &Ctx;
  bool Real;
  /// Points left for further variables (in the realistic mode: elements,
  /// so that tensors stay below 2^32 elements as on a real GPU).
  uint64_t Budget;
  std::set<std::string> UsedNames;
  static constexpr uint64_t RealisticBudget = uint64_t(1) << 32;

  explicit Impl(RandomMapGenerator &G)
      : G(G), R(G.R), Ctx(G.Ctx), Real(G.Opts.Realistic),
        Budget(G.Opts.Realistic ? RealisticBudget : G.Opts.MaxBoxPoints) {}

  //===--- Sizes and names ------------------------------------------------===//

  /// A dimension size, drawn against the remaining point budget.
  int64_t size(int64_t Max = INT64_MAX) {
    static const std::vector<int64_t> Small = {1, 2, 2, 3, 4,  4,  5,  6,
                                               7, 8, 8, 9, 12, 16, 24, 32};
    static const std::vector<int64_t> Large = {
        1,    2,    3,    4,    5,    7,    8,     16,    32,
        64,   100,  127,  128,  256,  384,  512,   768,   1000,
        1024, 2048, 3072, 4096, 4097, 8192, 50257, 65536, 131072};
    const std::vector<int64_t> &Cands = Real ? Large : Small;
    int64_t Limit = std::min<int64_t>(
        Max, int64_t(std::min<uint64_t>(Budget, uint64_t(INT64_MAX))));
    std::vector<int64_t> Ok;
    for (int64_t C : Cands)
      if (C <= Limit)
        Ok.push_back(C);
    int64_t S = Ok.empty() ? 1 : R.pick(Ok);
    take(S);
    return S;
  }
  void take(int64_t S) {
    if (S > 0)
      Budget = std::max<uint64_t>(1, Budget / uint64_t(S));
  }
  /// A small positive factor (tile sizes, vector widths, divisors).
  int64_t factor() {
    static const std::vector<int64_t> F = {2, 2, 3, 4, 4, 5, 6, 8, 8, 16, 32};
    static const std::vector<int64_t> FL = {2, 4, 8, 16, 32, 64, 128, 3, 6, 96};
    return R.pick(Real ? FL : F);
  }
  /// A divisor for floordiv/mod; occasionally negative.
  int64_t divisor() {
    int64_t D = factor();
    if (G.Opts.NegativeDivisors && R.chance(1, 12))
      D = -D;
    return D;
  }
  std::string name(const char *Default = "") {
    if (!G.Opts.CustomNames || !R.chance(1, 8))
      return Default;
    std::string N = R.pick(customNames());
    while (UsedNames.count(N))
      N += "_";
    UsedNames.insert(N);
    return N;
  }
  std::string fixedName(std::string N) {
    UsedNames.insert(N);
    return N;
  }

  //===--- Building blocks ------------------------------------------------===//

  /// Row-major linearization of \p Parts with sizes \p Sizes.
  Expr linearize(const std::vector<Expr> &Parts,
                 const std::vector<int64_t> &Sizes) {
    Expr Lin = Ctx.constant(0);
    int64_t Stride = 1;
    for (size_t I = Parts.size(); I-- > 0;) {
      Lin = Parts[I] * Stride + Lin;
      Stride *= Sizes[I];
    }
    return Lin;
  }
  /// Row-major delinearization of \p Lin into \p Shape (XLA's form: the
  /// first index is not reduced modulo its size).
  std::vector<Expr> delinearize(Expr Lin, const std::vector<int64_t> &Shape) {
    std::vector<Expr> Out(Shape.size());
    int64_t Stride = 1;
    for (size_t I = Shape.size(); I-- > 0;) {
      Expr Q = Lin.floorDiv(Stride);
      Out[I] = I == 0 ? Q : Q % Shape[I];
      Stride *= Shape[I];
    }
    return Out;
  }
  /// A random shape with product \p Total and rank in [1, MaxRank].
  std::vector<int64_t> factorize(int64_t Total, unsigned MaxRank) {
    std::vector<int64_t> F = primeFactors(Total);
    for (size_t I = F.size(); I > 1; --I)
      std::swap(F[I - 1], F[size_t(R.range(0, int64_t(I) - 1))]);
    unsigned Rank = unsigned(R.range(1, MaxRank));
    std::vector<int64_t> Shape(Rank, 1);
    for (int64_t P : F)
      Shape[size_t(R.range(0, Rank - 1))] *= P;
    // Keep the factors roughly ordered as reshapes usually are, sometimes.
    if (R.chance(1, 3))
      std::sort(Shape.begin(), Shape.end());
    return Shape;
  }
  /// A bound for a dim of size \p S: usually [0, S - 1], sometimes a point
  /// (size-1 dims, also at a non-zero position) or an offset range.
  Interval boundForSize(int64_t S) {
    if (S == 1 && R.chance(1, 4))
      return Interval::point(R.range(-3, 5));
    if (R.chance(1, 16)) {
      int64_t Off = R.range(-8, 8);
      return {Off, Off + S - 1};
    }
    return {0, S - 1};
  }
  /// A sub-interval of \p Range: usually inside it, sometimes partly or
  /// fully outside (which may make the domain empty).
  Interval constraintInterval(Interval Range) {
    if (Range.isEmpty() || Range.Lo < -(int64_t(1) << 40) ||
        Range.Hi > (int64_t(1) << 40))
      return {0, R.range(0, Real ? 100000 : 16)};
    int64_t Lo = Range.Lo, Hi = Range.Hi;
    if (G.Opts.InfeasibleConstraints && R.chance(1, 20)) {
      int64_t Gap = R.range(1, 5);
      return R.chance(1, 2) ? Interval{Hi + Gap, Hi + Gap + R.range(0, 3)}
                            : Interval{Lo - Gap - R.range(0, 3), Lo - Gap};
    }
    int64_t A = R.range(Lo, Hi), B = R.range(Lo, Hi);
    if (A > B)
      std::swap(A, B);
    switch (R.range(0, 3)) {
    case 0:
      return {Lo, B}; // Bounded above.
    case 1:
      return {A, Hi};
    case 2:
      return {A, B};
    default: // Slightly wider than the range: a constraint that always holds.
      return {Lo - R.range(0, 2), Hi + R.range(0, 2)};
    }
  }

  /// Adds `E in [...]` with an interval chosen near E's range.
  void constrainNear(MapBuilder &B, Expr E) {
    if (E.isConstant())
      return;
    B.constrain(E, constraintInterval(intervalOf(E, B)));
  }

  /// A random expression tree over \p Vars.
  Expr randomTree(const std::vector<Expr> &Vars, unsigned Depth) {
    if (Depth == 0 || Vars.empty() || R.chance(1, 4)) {
      if (Vars.empty() || R.chance(1, 8))
        return Ctx.constant(R.range(-4, 9));
      return R.pick(Vars);
    }
    Expr L = randomTree(Vars, Depth - 1);
    switch (R.range(0, 9)) {
    case 0:
    case 1:
      return L + randomTree(Vars, Depth - 1);
    case 2:
      return L - randomTree(Vars, Depth - 1);
    case 3: {
      int64_t K = R.chance(1, 5) ? -R.range(1, 4) : R.range(2, 9);
      return L * K;
    }
    case 4:
    case 5:
      return L.floorDiv(divisor());
    case 6:
    case 7:
      return L % divisor();
    case 8:
      if (G.Opts.CeilDiv)
        return L.ceilDiv(divisor());
      return L.floorDiv(divisor());
    default:
      return L * factor() + randomTree(Vars, Depth - 1);
    }
  }

  /// Occasionally rewraps a result (`r floordiv k`, `r mod m`, `r * c + e`)
  /// or adds a constraint, to mix families.
  void decorate(MapBuilder &B) {
    auto &Res = B.results();
    if (!Res.empty() && R.chance(1, 8)) {
      Expr &E = Res[size_t(R.range(0, int64_t(Res.size()) - 1))];
      switch (R.range(0, 2)) {
      case 0:
        E = E.floorDiv(divisor());
        break;
      case 1:
        E = E % divisor();
        break;
      default:
        E = E * R.range(-2, 4) + R.range(-3, 3);
        break;
      }
    }
    if (!Res.empty() && R.chance(1, 10))
      constrainNear(B, R.pick(Res));
  }

  //===--- Families -------------------------------------------------------===//

  void linearizeDelinearize(MapBuilder &B) {
    unsigned K = unsigned(R.range(1, 3));
    std::vector<Expr> Parts;
    std::vector<int64_t> Sizes;
    for (unsigned I = 0; I < K; ++I) {
      int64_t S = size();
      Parts.push_back(B.dim({0, S - 1}, name()));
      // Sometimes a gap: the next stride is larger than this size.
      Sizes.push_back(R.chance(1, 4) ? S * R.range(2, 3) : S);
    }
    if (R.chance(1, 2)) {
      int64_t V = std::min<int64_t>(size(8), 4);
      Parts.push_back(B.range({0, V - 1}, name()));
      Sizes.push_back(V);
    }
    Expr Lin = linearize(Parts, Sizes);
    auto Piece = [&](Expr L) {
      int64_t P = factor(), Q = factor();
      switch (R.range(0, 4)) {
      case 0:
        return L.floorDiv(P);
      case 1:
        return L % Q;
      case 2:
        return L.floorDiv(P) % Q;
      case 3:
        return (L % (P * Q)).floorDiv(P);
      default:
        return (L % Q).floorDiv(divisor());
      }
    };
    unsigned NR = unsigned(R.range(1, 3));
    std::vector<Expr> Res;
    for (unsigned I = 0; I < NR; ++I)
      Res.push_back(Piece(Lin));
    if (R.chance(1, 3) && Res.size() >= 2) {
      // Chain: re-linearize two pieces and delinearize again.
      Expr Lin2 = Res[0] * factor() + Res[1];
      Res = {Piece(Lin2), Piece(Lin2)};
    }
    for (Expr E : Res)
      B.result(E);
    if (R.chance(1, 4))
      constrainNear(B, Lin);
  }

  void reshape(MapBuilder &B) {
    unsigned Rank = unsigned(R.range(1, 4));
    std::vector<int64_t> In;
    int64_t Total = 1;
    for (unsigned I = 0; I < Rank; ++I) {
      In.push_back(size());
      Total *= In.back();
    }
    std::vector<int64_t> Out = factorize(Total, 4);
    std::vector<Expr> Dims;
    for (int64_t S : Out)
      Dims.push_back(B.dim({0, S - 1}, name()));
    std::vector<Expr> Res = delinearize(linearize(Dims, Out), In);
    if (R.chance(1, 4)) // Reshape followed by a transpose.
      for (size_t I = Res.size(); I > 1; --I)
        std::swap(Res[I - 1], Res[size_t(R.range(0, int64_t(I) - 1))]);
    for (Expr E : Res)
      B.result(E);
  }

  void tiling(MapBuilder &B) {
    int64_t T = factor();
    switch (R.range(0, 3)) {
    case 0: { // (tile, in_tile) -> tile * T + in_tile, with a partial tile.
      int64_t NTiles = size(std::max<int64_t>(1, int64_t(Budget) / T));
      take(T);
      int64_t N = std::max<int64_t>(1, NTiles * T - R.range(0, T - 1));
      Expr Tile = B.dim({0, NTiles - 1}, name());
      Expr In = B.dim({0, T - 1}, name());
      B.result(Tile * T + In);
      if (N % T != 0 || R.chance(1, 3))
        B.constrain(Tile * T + In, {0, N - 1});
      break;
    }
    case 1: { // d -> (d floordiv T, d mod T), or ceildiv tiles.
      int64_t N = size();
      Expr D = B.dim(boundForSize(N), name());
      if (G.Opts.CeilDiv && R.chance(1, 4))
        B.result(D.ceilDiv(T));
      else
        B.result(D.floorDiv(T));
      B.result(D % T);
      break;
    }
    case 2: { // Tiled transpose thread map (XLA's transpose emitter).
      int64_t Tx = Real ? 32 : R.pick(std::vector<int64_t>{2, 4});
      int64_t Rows = Real ? 4 : 2;
      int64_t NX = size(std::max<int64_t>(1, int64_t(Budget) / (Tx * Tx)));
      int64_t NY = Real ? size() : 1;
      int64_t NBlocks = NX * NY;
      Expr Th = B.dim({0, Tx * Rows - 1}, fixedName("th_x"));
      Expr Bl = B.dim({0, NBlocks - 1}, fixedName("bl_x"));
      Expr S0 = B.range({0, Tx / Rows - 1});
      take(Tx * Rows);
      B.result(Bl.floorDiv(NX) * Tx + S0 * Rows + Th.floorDiv(Tx));
      B.result((Bl % NX) * Tx + Th % Tx);
      if (R.chance(1, 2))
        B.constrain((Bl % NX) * Tx + Th % Tx, {0, NX * Tx - R.range(1, Tx)});
      break;
    }
    default: { // Two-level tiling of one linear index.
      int64_t T2 = factor();
      int64_t N = size();
      Expr D = B.dim(boundForSize(N), name());
      B.result(D.floorDiv(T * T2));
      B.result((D % (T * T2)).floorDiv(T));
      B.result(D % T);
      break;
    }
    }
  }

  void transpose(MapBuilder &B) {
    unsigned Rank = unsigned(R.range(2, 4));
    std::vector<int64_t> Shape;
    std::vector<Expr> Dims;
    for (unsigned I = 0; I < Rank; ++I) {
      Shape.push_back(size());
      Dims.push_back(B.dim(boundForSize(Shape.back()), name()));
    }
    std::vector<Expr> Res = Dims;
    if (R.chance(1, 3)) {
      // Fused with a reshape: linearize, then split differently.
      int64_t Total = 1;
      std::vector<Expr> Zeroed;
      for (unsigned I = 0; I < Rank; ++I) {
        Total *= Shape[I];
        Zeroed.push_back(Dims[I] - B.boundOf(Dims[I]).Lo);
      }
      Res = delinearize(linearize(Zeroed, Shape), factorize(Total, 4));
    }
    for (size_t I = Res.size(); I > 1; --I)
      std::swap(Res[I - 1], Res[size_t(R.range(0, int64_t(I) - 1))]);
    for (Expr E : Res)
      B.result(E);
  }

  void broadcast(MapBuilder &B) {
    unsigned Rank = unsigned(R.range(1, 4));
    std::vector<Expr> Dims;
    for (unsigned I = 0; I < Rank; ++I)
      Dims.push_back(B.dim(boundForSize(size()), name()));
    // A reduction-like range variable.
    if (R.chance(1, 3)) {
      Expr S = B.range({0, size(8) - 1}, name());
      Dims.push_back(S);
    }
    for (Expr D : Dims) {
      if (R.chance(1, 3))
        continue; // Broadcast dimension: dropped.
      B.result(D);
    }
    if (R.chance(1, 4))
      B.result(Ctx.constant(0));
  }

  void sliceOrPad(MapBuilder &B) {
    unsigned Rank = unsigned(R.range(1, 3));
    for (unsigned I = 0; I < Rank; ++I) {
      int64_t N = size();
      Expr D = B.dim({0, N - 1}, name());
      switch (R.range(0, 4)) {
      case 0: { // Strided slice with an offset (either sign).
        int64_t Stride = R.pick(std::vector<int64_t>{1, 1, 2, 3, -1, -2});
        B.result(D * Stride + R.range(-6, 10));
        break;
      }
      case 1: // Reverse.
        B.result(-D + (N - 1));
        break;
      case 2: { // Pad with low padding Lo and interior stride S.
        int64_t Lo = R.range(-3, 4), S = R.pick(std::vector<int64_t>{1, 2, 3});
        B.result((D - Lo).floorDiv(S));
        if (S > 1)
          B.constrain((D - Lo) % S, {0, 0});
        B.constrain(D - Lo, {0, std::max<int64_t>(0, N - 1 - R.range(0, 3))});
        break;
      }
      case 3: { // Concatenate operand: an offset range.
        int64_t Off = R.range(0, N - 1);
        B.dims().back().Bound = {Off, N - 1};
        B.result(D - Off);
        break;
      }
      default: // Negative coefficient with a negative offset.
        B.result(D * -R.range(1, 3) - R.range(0, 5));
        break;
      }
    }
  }

  void constrainedSum(MapBuilder &B) {
    std::vector<Expr> Vars;
    unsigned ND = unsigned(R.range(1, 2)), NS = unsigned(R.range(0, 3));
    for (unsigned I = 0; I < ND; ++I)
      Vars.push_back(B.dim(boundForSize(size()), name()));
    for (unsigned I = 0; I < NS; ++I)
      Vars.push_back(B.range({0, size(16) - 1}, name()));
    static const std::vector<int64_t> Coefs = {1, 1,  2,  3,  4, 6,
                                               8, 32, -1, -2, -3};
    Expr Sum = Ctx.constant(R.chance(1, 3) ? R.range(-5, 5) : 0);
    for (Expr V : Vars)
      Sum = Sum + V * R.pick(Coefs);
    // Results over the sum.
    switch (R.range(0, 4)) {
    case 0:
      B.result(Sum);
      break;
    case 1:
      B.result(Sum.floorDiv(divisor()));
      break;
    case 2:
      B.result(Sum % divisor());
      break;
    case 3:
      B.result(Sum.floorDiv(factor()));
      B.result(Sum % factor());
      break;
    default: { // Correlated: s + t * c - (s floordiv c) * c.
      Expr S = R.pick(Vars), T = R.pick(Vars);
      int64_t C = factor();
      B.result(S + T * C - S.floorDiv(C) * C);
      break;
    }
    }
    // Constraints.
    unsigned NC = unsigned(R.range(1, 3));
    for (unsigned I = 0; I < NC; ++I) {
      Expr V = R.pick(Vars);
      switch (R.range(0, 6)) {
      case 0: // The sum bounded (often only above).
        constrainNear(B, Sum);
        break;
      case 1: { // A residue class.
        int64_t M = factor();
        int64_t Res = R.range(0, M - 1);
        B.constrain(V % M, {Res, Res});
        if (R.chance(1, 2)) { // A second modulus on the same variable (CRT).
          int64_t M2 = factor();
          int64_t Res2 = R.chance(1, 2) ? Res % M2 : R.range(0, M2 - 1);
          B.constrain(V % M2, {Res2, Res2});
        }
        break;
      }
      case 2: { // `x mod m + c in [...]`, possibly infeasible.
        int64_t M = factor(), C = R.range(-3, 8);
        int64_t Lo = R.range(C - 2, C + M);
        B.constrain(V % M + C, {Lo, Lo + R.range(0, 4)});
        break;
      }
      case 3: { // Floordiv by a divisor of either sign.
        int64_t K = divisor();
        constrainNear(B, V.floorDiv(K));
        break;
      }
      case 4: // A partial sum.
        constrainNear(B, V * R.pick(Coefs) + R.pick(Vars));
        break;
      case 5: { // A scaled sum with a constant.
        constrainNear(B, Sum * R.range(1, 3) + R.range(-4, 4));
        break;
      }
      default:
        constrainNear(B, randomTree(Vars, 2));
        break;
      }
    }
  }

  void threadMap(MapBuilder &B) {
    unsigned Rank =
        G.Opts.ThreadMapRank ? G.Opts.ThreadMapRank : unsigned(R.range(1, 6));
    int64_t V = R.pick(std::vector<int64_t>{1, 2, 4});
    int64_t T = Real ? R.pick(std::vector<int64_t>{32, 64, 128, 256, 512, 1024})
                     : R.pick(std::vector<int64_t>{1, 2, 4, 8});
    // Output shape within the budget (in the small mode).
    std::vector<int64_t> Shape;
    int64_t N = 1;
    for (unsigned I = 0; I < Rank; ++I) {
      int64_t S = size();
      Shape.push_back(S);
      N *= S;
    }
    int64_t Chunks = Real && R.chance(1, 4) ? R.range(2, 8) : 1;
    int64_t PerBlock = T * V;
    int64_t Blocks =
        std::max<int64_t>(1, (N + PerBlock * Chunks - 1) / (PerBlock * Chunks));
    bool SixDims = R.chance(1, 2);
    Expr Th = B.dim({0, T - 1}, fixedName("th_x"));
    if (SixDims) {
      B.dim({0, 0}, fixedName("th_y"));
      B.dim({0, 0}, fixedName("th_z"));
    }
    Expr Bl = B.dim({0, Blocks - 1}, fixedName("bl_x"));
    if (SixDims) {
      B.dim({0, 0}, fixedName("bl_y"));
      B.dim({0, 0}, fixedName("bl_z"));
    }
    Expr Chunk = B.range({0, Chunks - 1}, SixDims ? fixedName("chunk_id") : "");
    Expr Vec = B.range({0, V - 1}, fixedName(SixDims ? "unroll_id" : "vec"));
    Expr Lin = Chunk * (Blocks * PerBlock) + Bl * PerBlock + Th * V + Vec;
    for (Expr E : delinearize(Lin, Shape))
      B.result(E);
    B.constrain(Lin, {0, N - 1});
  }

  void dynamicSlice(MapBuilder &B) {
    unsigned Rank = unsigned(R.range(1, 3));
    bool AnyRt = false;
    for (unsigned I = 0; I < Rank; ++I) {
      int64_t S = size(), N = S + R.range(0, Real ? 1000 : 4);
      Expr D = B.dim({0, S - 1}, name());
      if (!G.Opts.RuntimeVars || R.chance(1, 4)) {
        B.result(D);
        continue;
      }
      AnyRt = true;
      Expr Off = B.runtime({0, N - S}, name());
      take(N - S + 1);
      switch (R.range(0, 2)) {
      case 0:
        B.result(D + Off);
        break;
      case 1:
        B.result(D + Off);
        B.constrain(D + Off, {0, N - 1});
        break;
      default: // Gather-like: the index is the runtime value.
        B.result(Off * R.range(1, 2));
        break;
      }
    }
    if (AnyRt && R.chance(1, 4)) {
      auto Vs = B.allVars();
      constrainNear(B, randomTree(Vs, 2));
    }
  }

  void randomExpr(MapBuilder &B) {
    std::vector<Expr> Vars;
    unsigned ND = unsigned(R.range(0, 3)), NS = unsigned(R.range(0, 2));
    if (ND + NS == 0)
      ND = 1;
    for (unsigned I = 0; I < ND; ++I)
      Vars.push_back(B.dim(boundForSize(size()), name()));
    for (unsigned I = 0; I < NS; ++I)
      Vars.push_back(B.range(boundForSize(size()), name()));
    unsigned NR = unsigned(R.range(0, 3));
    for (unsigned I = 0; I < NR; ++I)
      B.result(randomTree(Vars, unsigned(R.range(1, 4))));
    unsigned NC = unsigned(R.range(0, 2));
    for (unsigned I = 0; I < NC; ++I)
      constrainNear(B, randomTree(Vars, unsigned(R.range(1, 3))));
  }

  /// A variable bound that may be negative or straddle zero.
  Interval signedBound() {
    int64_t S = size(16);
    // Near the ends of int64: overflow handling.
    if (G.Opts.EdgeOdds && R.chance(1, G.Opts.EdgeOdds)) {
      int64_t Edge = R.chance(1, 2) ? (int64_t(1) << 62) : INT64_MAX - 64;
      int64_t Lo = R.chance(1, 2) ? Edge - S : -Edge;
      return {Lo, Lo + S - 1};
    }
    switch (R.range(0, 3)) {
    case 0:
      return {-S, -1};
    case 1: {
      int64_t Lo = -R.range(0, S - 1);
      return {Lo, Lo + S - 1};
    }
    default:
      return {0, S - 1};
    }
  }
  /// A constant that is sometimes negative, sometimes zero.
  int64_t signedFactor() {
    int64_t K = factor();
    switch (R.range(0, 5)) {
    case 0:
      return -K;
    case 1:
      return R.range(-1, 1);
    default:
      return K;
    }
  }

  /// Shapes that the rules of FORMATS.md ("What simplify must do") match,
  /// with parameters drawn so that the guards sometimes hold and sometimes
  /// do not.
  void ruleTargets(MapBuilder &B) {
    std::vector<Expr> Vars;
    unsigned N = unsigned(R.range(1, 3));
    for (unsigned I = 0; I < N; ++I) {
      Interval Bd = signedBound();
      Vars.push_back(R.chance(1, 2) ? B.dim(Bd, name()) : B.range(Bd, name()));
    }
    Expr X = R.pick(Vars), Y = R.pick(Vars);
    int64_t A = signedFactor(), Bf = signedFactor(), C = factor(),
            D = divisor(), M = divisor();
    if (A == 0)
      A = 2;
    if (Bf == 0)
      Bf = 3;
    auto Any = [&]() { return randomTree(Vars, 2); };
    unsigned NR = unsigned(R.range(1, 2));
    for (unsigned I = 0; I < NR; ++I) {
      Expr E;
      switch (R.range(0, 16)) {
      case 0: // x mod m -> x - k*m when x lies in one period.
        E = (X + R.range(-20, 20)) % M;
        break;
      case 1: // (x*a) mod (a*b) -> (x mod b) * a.
        E = (X * A) % (A * Bf);
        break;
      case 2: // Summands divisible by m drop out of a mod.
        E = (X * (M * R.range(-2, 2)) + Y * signedFactor() + R.range(-9, 9)) %
            M;
        break;
      case 3: // (g*A + B) mod m -> (g*A) mod m + B when 0 <= B < g, g | m.
        E = (X * C + Y) % (C * R.range(1, 3) * (R.chance(1, 6) ? -1 : 1));
        break;
      case 4: // (x mod (a*b)) floordiv a -> (x floordiv a) mod b.
        E = (X % (A * Bf)).floorDiv(A);
        break;
      case 5: // (x floordiv a) floordiv b -> x floordiv (a*b).
        E = X.floorDiv(A).floorDiv(Bf);
        break;
      case 6: // Pull divisible summands out of a floordiv.
        E = (X * (D * R.range(-2, 3)) + Y + R.range(-5, 5)).floorDiv(D);
        break;
      case 7: // Drop a remainder that cannot reach the next multiple.
        E = (X * C + Y % R.range(1, C + 1)).floorDiv(C * R.range(1, 2));
        break;
      case 8: // (x floordiv c + R) floordiv d: one division.
        E = (X.floorDiv(C) + Y * signedFactor()).floorDiv(D);
        break;
      case 9: // Two divisions: the merge rule must not apply.
        E = (X.floorDiv(C) + Y.floorDiv(signedFactor() == 0 ? 2 : C))
                .floorDiv(D);
        break;
      case 10: // (x mod c) * k + (x floordiv c) * (c * k) -> x * k.
        E = (X % C) * A + X.floorDiv(C) * (C * A) + Y * R.range(-1, 1);
        break;
      case 11: // x*k - (x floordiv c)*(c*k) -> (x mod c)*k.
        E = X * A - X.floorDiv(C) * (C * A);
        break;
      case 12: // Nested forms of the recombination.
        E = (X.floorDiv(C) % Bf) * C + X % C + X.floorDiv(C * Bf) * (C * Bf);
        break;
      case 13: // ceildiv next to floordiv.
        E = (X * A + Y).ceilDiv(D) - (X * A + Y).floorDiv(D);
        break;
      case 14: // Distribution of a constant over a sum inside a mod.
        E = ((X + Y * C) * A) % (M == 0 ? 7 : M);
        break;
      case 15: { // A symbolic divisor (kept as is, but ranges must hold).
        int64_t K = R.range(1, 6);
        Interval ZB = R.chance(1, 3) ? Interval{-K, -1} : Interval{1, K};
        Expr Z = R.chance(1, 2) ? B.dim(ZB, name()) : B.range(ZB, name());
        Vars.push_back(Z);
        switch (R.range(0, 2)) {
        case 0:
          E = (X + Y).floorDiv(Z);
          break;
        case 1:
          E = (X * A) % Z + Y;
          break;
        default:
          E = X.ceilDiv(Z) * C;
          break;
        }
        break;
      }
      default: // A point-range subexpression.
        E = (X - X % 1 + Any()).floorDiv(D);
        break;
      }
      B.result(E);
    }
    // Constraints that exercise the constraint passes.
    unsigned NC = unsigned(R.range(0, 2));
    for (unsigned I = 0; I < NC; ++I) {
      switch (R.range(0, 5)) {
      case 0: // Negative divisor in a constraint.
        constrainNear(B, X.floorDiv(-factor()) + R.range(-3, 3));
        break;
      case 1: // Negative multiplier.
        constrainNear(B, X * -factor() + R.range(-3, 3));
        break;
      case 2: // ceildiv in a constraint.
        constrainNear(B, X.ceilDiv(divisor()));
        break;
      case 3: { // A residue class with negative bounds around.
        int64_t Mod = factor();
        int64_t Res = R.range(0, Mod - 1);
        B.constrain(X % Mod, {Res, Res});
        break;
      }
      case 4: // A split sum g*A + B.
        constrainNear(B, X * (C * 2) + Y * C + R.pick(Vars));
        break;
      default:
        constrainNear(B, Any());
        break;
      }
    }
  }

  IndexingMap build(MapFamily F) {
    MapBuilder B(Ctx);
    switch (F) {
    case MapFamily::LinearizeDelinearize:
      linearizeDelinearize(B);
      break;
    case MapFamily::Reshape:
      reshape(B);
      break;
    case MapFamily::Tiling:
      tiling(B);
      break;
    case MapFamily::Transpose:
      transpose(B);
      break;
    case MapFamily::Broadcast:
      broadcast(B);
      break;
    case MapFamily::SliceOrPad:
      sliceOrPad(B);
      break;
    case MapFamily::ConstrainedSum:
      constrainedSum(B);
      break;
    case MapFamily::ThreadMap:
      threadMap(B);
      break;
    case MapFamily::DynamicSlice:
      dynamicSlice(B);
      break;
    case MapFamily::RuleTargets:
      ruleTargets(B);
      break;
    case MapFamily::RandomExpr:
    case MapFamily::NumFamilies:
      randomExpr(B);
      break;
    }
    decorate(B);
    return B.finish();
  }

  //===--- Consumers for compositions -------------------------------------===//

  IndexingMap consumer(const std::vector<Interval> &DimBounds) {
    MapBuilder B(Ctx);
    std::vector<Expr> Dims;
    for (const Interval &I : DimBounds)
      Dims.push_back(B.dim(I, name()));
    // Symbols of the consumer are kept tiny: the composed box multiplies.
    Budget = Real ? RealisticBudget : 8;
    std::vector<Expr> Vars = Dims;
    switch (R.range(0, 6)) {
    case 0: { // Permutation (transpose), possibly dropping dims.
      std::vector<Expr> Res = Dims;
      for (size_t I = Res.size(); I > 1; --I)
        std::swap(Res[I - 1], Res[size_t(R.range(0, int64_t(I) - 1))]);
      for (Expr E : Res)
        if (!R.chance(1, 5))
          B.result(E);
      break;
    }
    case 1: { // Reshape of the box.
      std::vector<int64_t> Sizes;
      std::vector<Expr> Zeroed;
      int64_t Total = 1;
      bool Ok = true;
      for (size_t I = 0; I < Dims.size(); ++I) {
        int64_t W = DimBounds[I].Hi - DimBounds[I].Lo + 1;
        if (W <= 0 || W > 4096 || Total > (int64_t(1) << 40) / W) {
          Ok = false;
          break;
        }
        Sizes.push_back(W);
        Total *= W;
        Zeroed.push_back(Dims[I] - DimBounds[I].Lo);
      }
      if (!Ok || Dims.empty()) {
        for (Expr D : Dims)
          B.result(D);
        break;
      }
      for (Expr E : delinearize(linearize(Zeroed, Sizes), factorize(Total, 3)))
        B.result(E);
      break;
    }
    case 2: // Per-dim slice / tile split / pad.
      for (Expr D : Dims) {
        switch (R.range(0, 3)) {
        case 0:
          B.result(D * R.pick(std::vector<int64_t>{1, 2, -1, 3}) +
                   R.range(-4, 4));
          break;
        case 1: {
          int64_t T = factor();
          B.result(D.floorDiv(T));
          B.result(D % T);
          break;
        }
        case 2: {
          int64_t S = R.pick(std::vector<int64_t>{2, 3});
          B.result(D.floorDiv(S));
          B.constrain(D % S, {0, 0});
          break;
        }
        default:
          B.result(D);
          break;
        }
      }
      break;
    case 3: { // Reduction / window: a range variable added to a dim.
      Expr S = B.range({0, size(8) - 1}, name());
      Vars.push_back(S);
      for (Expr D : Dims)
        B.result(R.chance(1, 2) ? D + S : D);
      B.result(S);
      break;
    }
    case 4: { // A dynamic offset.
      if (!G.Opts.RuntimeVars || Dims.empty()) {
        for (Expr D : Dims)
          B.result(D);
        break;
      }
      Expr Off = B.runtime({0, R.range(0, 3)}, name());
      Vars.push_back(Off);
      for (Expr D : Dims)
        B.result(R.chance(1, 2) ? D + Off : D);
      break;
    }
    default: { // Random trees over the dims (and maybe one symbol).
      if (R.chance(1, 2))
        Vars.push_back(B.range({0, size(4) - 1}, name()));
      unsigned NR = unsigned(R.range(1, 3));
      for (unsigned I = 0; I < NR; ++I)
        B.result(randomTree(Vars, unsigned(R.range(1, 3))));
      break;
    }
    }
    if (!Vars.empty() && R.chance(1, 4))
      constrainNear(B, randomTree(Vars, 2));
    if (!Dims.empty() && R.chance(1, 6)) {
      int64_t M = factor();
      int64_t Res = R.range(0, M - 1);
      B.constrain(R.pick(Dims) % M, {Res, Res});
    }
    return B.finish();
  }
};

//===----------------------------------------------------------------------===//
// RandomMapGenerator
//===----------------------------------------------------------------------===//

RandomMapGenerator::RandomMapGenerator(Context &Ctx, uint64_t Seed,
                                       RandomMapOptions Opts)
    : Ctx(Ctx), R(Seed), Opts(Opts) {}

IndexingMap RandomMapGenerator::generate() {
  // Weights: thread maps and linearize/delinearize chains are the most common
  // shapes in codegen, so they get more draws.
  static const std::vector<MapFamily> Table = {MapFamily::LinearizeDelinearize,
                                               MapFamily::LinearizeDelinearize,
                                               MapFamily::Reshape,
                                               MapFamily::Reshape,
                                               MapFamily::Tiling,
                                               MapFamily::Tiling,
                                               MapFamily::Transpose,
                                               MapFamily::Broadcast,
                                               MapFamily::SliceOrPad,
                                               MapFamily::ConstrainedSum,
                                               MapFamily::ConstrainedSum,
                                               MapFamily::ThreadMap,
                                               MapFamily::ThreadMap,
                                               MapFamily::DynamicSlice,
                                               MapFamily::RandomExpr,
                                               MapFamily::RandomExpr,
                                               MapFamily::RuleTargets,
                                               MapFamily::RuleTargets};
  return generate(R.pick(Table));
}

IndexingMap RandomMapGenerator::generate(MapFamily F) {
  Last = F;
  // In the small mode a family may overshoot the budget (fixed factors);
  // retry a few times, then accept whatever the last draw was.
  for (unsigned Attempt = 0;; ++Attempt) {
    Impl I(*this);
    IndexingMap M = I.build(F);
    if (Opts.Realistic || Attempt >= 8)
      return M;
    uint64_t N = 1;
    bool Small = true;
    for (unsigned V = 0; V < M.numVars() && Small; ++V) {
      const Interval &B = M.var(V).Bound;
      if (B.isEmpty())
        break;
      uint64_t W = uint64_t(B.Hi) - uint64_t(B.Lo) + 1;
      if (W == 0 || __builtin_mul_overflow(N, W, &N) || N > Opts.MaxBoxPoints)
        Small = false;
    }
    if (Small)
      return M;
  }
}

IndexingMap
RandomMapGenerator::generateConsumer(const std::vector<Interval> &DimBounds) {
  Impl I(*this);
  return I.consumer(DimBounds);
}

std::pair<IndexingMap, IndexingMap>
RandomMapGenerator::generateComposablePair() {
  // Keep the first map's box smaller so that the composed box (first's box
  // times second's symbols) stays enumerable.
  RandomMapOptions Saved = Opts;
  if (!Opts.Realistic)
    Opts.MaxBoxPoints = std::max<uint64_t>(16, Opts.MaxBoxPoints / 8);
  IndexingMap First = generate();
  Opts = Saved;

  // Bounds of second's dims: the hull of each result over first's box
  // (interval arithmetic on the core's Interval), then exact, narrower or
  // wider.
  std::vector<Interval> Bounds;
  for (unsigned I = 0; I < First.numResults(); ++I) {
    Interval H{0, 7};
    if (!First.isKnownEmpty()) {
      // Exact range over the box by enumeration when it is small.
      Interval Acc = Interval::empty();
      std::vector<int64_t> P(First.numVars());
      std::vector<Interval> Box;
      uint64_t N = 1;
      bool Small = true;
      for (unsigned V = 0; V < First.numVars(); ++V) {
        Box.push_back(First.var(V).Bound);
        uint64_t W = uint64_t(Box.back().Hi) - uint64_t(Box.back().Lo) + 1;
        if (W == 0 || __builtin_mul_overflow(N, W, &N) || N > 65536)
          Small = false;
      }
      if (Small) {
        for (unsigned V = 0; V < Box.size(); ++V)
          P[V] = Box[V].Lo;
        for (bool Done = false; !Done;) {
          if (First.contains(P))
            if (auto Vals = First.evaluate(P))
              Acc = Acc.isEmpty() ? Interval::point((*Vals)[I])
                                  : Acc.hull(Interval::point((*Vals)[I]));
          Done = true;
          for (size_t V = Box.size(); V-- > 0;) {
            if (P[V] < Box[V].Hi) {
              ++P[V];
              Done = false;
              break;
            }
            P[V] = Box[V].Lo;
          }
        }
      }
      if (!Acc.isEmpty())
        H = Acc;
    }
    switch (R.range(0, 4)) {
    case 0: // Narrower.
      if (H.Hi > H.Lo) {
        int64_t A = R.range(H.Lo, H.Hi), B = R.range(H.Lo, H.Hi);
        H = {std::min(A, B), std::max(A, B)};
      }
      break;
    case 1: // Wider.
      H = {H.Lo - R.range(0, 3), H.Hi + R.range(0, 3)};
      break;
    default:
      break;
    }
    Bounds.push_back(H);
  }
  IndexingMap Second = generateConsumer(Bounds);
  return {std::move(First), std::move(Second)};
}

} // namespace idxmap::testing
