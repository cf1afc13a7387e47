//===- Coalescing.cpp - Thread maps, coalescing and vector widths ---------===//
//
// Part of idxmap. Every figure here comes from the maps: the emitter's
// thread→element map composed with the operand's indexing and its
// linearized physical layout gives each lane's addresses.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Coalescing.h"
#include "idxmap/Compose.h"
#include "idxmap/Delinearize.h"
#include "idxmap/Exact.h"
#include "idxmap/KernelPlan.h"
#include "idxmap/Print.h"
#include "idxmap/RangeEvaluator.h"
#include "idxmap/Simplify.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace idxmap {

namespace {

/// ceil(A / B) for B > 0 without forming A + B - 1 (which wraps near
/// INT64_MAX).
int64_t ceilDiv(int64_t A, int64_t B) { return A / B + (A % B > 0); }

Variable named(const char *Name, int64_t Hi) { return {Name, {0, Hi}}; }

/// The largest power of two <= \p V (V >= 1).
int64_t powerOf2Below(int64_t V) {
  return int64_t(1) << (63 - __builtin_clzll(uint64_t(V)));
}

/// Builds the mapping from `(th_x, bl_x)[iters..., vec]` given the
/// canonical linear physical offset into \p Target's shape.
ThreadMapping makeMapping(Context &Ctx, int64_t T, int64_t B,
                          std::vector<Variable> Range, Expr Lin,
                          std::vector<Constraint> Cs, const Shape &S,
                          const HloInstruction *Target) {
  ThreadMapping TM;
  TM.ThreadsPerBlock = T;
  TM.Blocks = B;
  TM.Vector = Range.empty() ? 1 : Range.back().Bound.Hi + 1;
  TM.Target = Target;
  TM.Map =
      IndexingMap(Ctx, {named("th_x", T - 1), named("bl_x", B - 1)},
                  std::move(Range), {}, delinearizePhysical(Ctx, Lin, S), Cs);
  simplify(TM.Map);
  return TM;
}

/// The blocks of a transpose tiling in launch order, minor first, each
/// with its extent: tiles along P (\p TileP rows each), along the minor
/// dim M (\p TileM columns each), then the dims that are neither, from
/// minor to major. Their product is the number of tiles.
std::vector<std::pair<int64_t, int64_t>>
tileOrder(const TransposeInfo &TI, int64_t TileP, int64_t TileM) {
  const int64_t M = int64_t(TI.Dims.size()) - 1;
  const std::vector<int64_t> Rows = TI.dimsAfterMinor();
  std::vector<std::pair<int64_t, int64_t>> Order = {
      {-1, ceilDiv(TI.elementsAfterMinor(), TileP)},
      {M, ceilDiv(TI.Dims[M], TileM)}};
  for (int64_t D = M; D-- > 0;)
    if (std::find(Rows.begin(), Rows.end(), D) == Rows.end())
      Order.push_back({D, TI.Dims[D]});
  return Order;
}

int64_t tileCount(const std::vector<std::pair<int64_t, int64_t>> &Order) {
  int64_t Tiles = 1;
  for (const auto &[Dim, Extent] : Order)
    Tiles *= Extent;
  return Tiles;
}

} // namespace

int64_t widestParameterBytes(const HloComputation &C, int64_t MinElements) {
  int64_t Bytes = 1;
  for (const HloInstruction *P : C.parameters())
    if (P->shape().isArray() && P->shape().numElements() >= MinElements)
      Bytes = std::max<int64_t>(Bytes, byteWidth(P->shape().Type));
  return Bytes;
}

int64_t transposeGroupWidth(const TransposeInfo &TI,
                            const DeviceModel &Device) {
  int64_t M = int64_t(TI.Dims.size()) - 1;
  if (TI.Dims[M] % 2 != 0)
    return 1;
  return tileCount(tileOrder(TI, 32, 64)) >= Device.SmCount * 8 ? 2 : 1;
}

/// Tiles per block along P: 4 for tiles of 32 x 32 2- or 4-byte elements
/// when P fills blocks of 4 tiles but for at most 5 % and blocks of one
/// tile (4 warps) would fill 2 to 8 waves of \p Device. Measured on the
/// H100 (CUPTI, idxmap run --bench, the same buffers), time with 4 against
/// 1: f32[65,257,511] {2,1,0} 0.87; under 2 waves f32[1023,2049] (1 wave)
/// 0.99; over 8 waves f32[33,1000,777] {2,1,0} (12 waves) 1.00 and
/// f32[16384,16385] (124) 1.15. 2-byte tiles (2 along M, so blocks of 8
/// tiles, compiled without instcombine: PlanFusion.cpp), two rounds:
/// bf16[97,130,1031] {2,0,1} 24.1 against 27.9 us, bf16[48,1001,513]
/// {0,2,1} 44.1 against 49.4, f16[3000,8191] 39.3 against 40.9. It lost
/// on 1-byte tiles (s8[4095,4097] 1.04, s8[2048,6000] 1.51), on tiles of
/// 32 x 64 (f16[129,300,301] {1,2,0}, P = 129: 1.26; f32[8,56,56,96] NHWC
/// -> NCHW 1.04) and where P leaves blocks mostly empty.
static int64_t defaultSubP(const TransposeInfo &TI, int64_t TileBytes,
                           int64_t V, int64_t SubM, const DeviceModel &Device) {
  const int64_t P = TI.elementsAfterMinor(), Span = 4 * 32;
  if (V != 1 || (TileBytes != 2 && TileBytes != 4) ||
      ceilDiv(P, Span) * Span * 100 > P * 105)
    return 1;
  const int64_t Tiles = tileCount(tileOrder(TI, 32, 32 * SubM));
  const int64_t Wave = residentBlocks(Device, 128, SubM * 32 * 32 * TileBytes);
  return 2 * Wave <= Tiles && Tiles <= 8 * Wave ? 4 : 1;
}

TransposeTiling transposeTiling(Context &Ctx, const TransposeInfo &TI,
                                int64_t TileBytes, const TransposeRequest &Want,
                                const DeviceModel &Device) {
  TransposeTiling T;
  const int64_t R = TI.Dims.size(), M = R - 1;
  int64_t Warps = Want.Warps, ReadVec = Want.ReadVec, WriteVec = Want.WriteVec;
  T.V = transposeGroupWidth(TI, Device);
  // Two tiles of narrow elements side by side along M when a tile row
  // spans less than 128 bytes of the input: a warp's reads of 64 bytes of a
  // row (2-byte elements, V = 1) leave the rest of each line to another
  // block, read much later. Measured on the H200 (2026-12-02, CUPTI, 6
  // interleaved groups): bf16[97,130,1031] {2,0,1} 32.39 -> 20.43 us
  // (torch.compile 19.02), s8[4095,4097] 17.81 -> 17.16 (18.91 with 4
  // tiles), f16[129,300,301] {1,2,0} (V = 2) 20.96 -> 20.61,
  // bf16[32,64,56,56] NCHW -> NHWC 7.06 -> 6.80, but bf16[48,1001,513]
  // {0,2,1} 38.63 -> 39.55; 4-byte tiles lost 3 % on three of four.
  const int64_t RowBytes = 32 * T.V * TileBytes;
  T.SubM = Want.SubM > 0 ? powerOf2Below(std::min<int64_t>(Want.SubM, 8))
           : RowBytes < 128 ? 2
                            : 1;
  T.SubP = Want.SubP > 0 ? powerOf2Below(std::min<int64_t>(Want.SubP, 8))
                         : defaultSubP(TI, TileBytes, T.V, T.SubM, Device);
  // Measured on the H200 (CUPTI): f32[8192,8192] (V = 2) 131.6 us with 8
  // warps against 132.9 with 4; bf16[64,1024,1024]{0,2,1} (V = 2) 68.3
  // against 65.6; f32[20,160,170] {2,1,0} (V = 1, 600 tiles) 2.69 against
  // 2.72-2.75 (2026-12-04, after the read phase put every load in flight
  // before the tile stores).
  const int64_t Tm = 32 * T.V, P = TI.elementsAfterMinor();
  // Block order: P, M, then the other dims from minor to major.
  const std::vector<std::pair<int64_t, int64_t>> Order =
      tileOrder(TI, 32 * T.SubP, Tm * T.SubM);
  T.Blocks = tileCount(Order);
  // Other tilings: 8 warps when blocks of 4 would fill at most 8 waves of
  // the device (measured on the H200, 2026-12-04, CUPTI, 6 interleaved
  // groups, 4 against 8 warps: f16[129,300,301] {1,2,0} 3.3 waves 19.98
  // against 16.77 us, bf16[97,130,1031] {2,0,1} 3.2 waves 21.64 against
  // 18.11, f32[65,257,511] {2,1,0} 4.0 waves 24.26 against 21.44,
  // s8[4095,4097] 3.9 waves 17.43 against 17.50, bf16[48,1001,513]
  // {0,2,1} 6.5 waves 35.36 against 35.53 in one run, 39.51 (groups from
  // 34.4 to 43.9) against 33.88 (33.7 to 34.4) in another, bf16[64,1024,1024]
  // {0,2,1} 15.5 waves 65.6 against 68.3, f32[16384,16385] 124 waves 578.7
  // against 603.3). A short kernel is its first waves and its tail: a block of
  // 8 warps takes half as many tile rows per thread, so each tile is read and
  // written sooner.
  T.WarpsReason = "tuning override";
  if (Warps <= 0) {
    Warps = T.V == 2 && TileBytes == 4 ? 8 : 4;
    T.WarpsReason = Warps == 8 ? "8 for tiles of 32 x 64 4-byte elements"
                               : "4: blocks of 4 warps fill more than 8 "
                                 "waves";
    // Blocks of 4 warps resident on the whole device: one wave.
    const int64_t Wave =
        residentBlocks(Device, 128, T.SubP * T.SubM * 32 * Tm * TileBytes);
    if (Warps == 4 && T.Blocks <= 8 * Wave) {
      Warps = 8;
      T.WarpsReason = "8: blocks of 4 warps would fill at most 8 waves";
    }
  }
  T.Warps = Warps;
  T.Threads = 32 * Warps;
  // Vector accesses of a 32 x 32 tile of 4-byte elements: writes of up to
  // 4 consecutive elements of P (P % W == 0 keeps a vector inside one
  // output row and aligned), then reads of 2 of M (D[M] even) when writes
  // are vectors (the tile's swizzle then keeps both phases free of bank
  // conflicts; see the transpose emitter). Measured on the H200
  // (2026-11-30, CUPTI, 30 interleaved groups) on f32[20,160,170]{2,1,0}:
  // 1.82 us with reads of 2 and writes of 4, 1.89 scalar, 1.87 writes of 4
  // only, 1.91 reads of 2 and writes of 2, 2.05 reads of 2 only (the write
  // lanes' loads then conflict in pairs); torch.compile 1.87.
  // Other element sizes take vector tiles only when asked for.
  if (T.V == 1 && (TileBytes == 4 || WriteVec > 1 || ReadVec > 1)) {
    auto Widest = [](int64_t Want, int64_t Extent, int64_t Max) {
      int64_t W = Want > 0 ? std::min(Want, Max) : Max;
      while (W & (W - 1)) // a power of two
        W &= W - 1;
      while (W > 1 && Extent % W != 0)
        W /= 2;
      return W;
    };
    T.WriteVec = Widest(WriteVec, P, std::min<int64_t>(4, 32 / Warps));
    if (T.WriteVec > 1 || ReadVec > 1)
      T.ReadVec = Widest(ReadVec, TI.Dims[M], std::min<int64_t>(2, 32 / Warps));
  }
  T.Iters = 32 / (Warps * T.ReadVec);
  T.WriteIters = 32 / (Warps * T.WriteVec);
  Expr Bl = Ctx.dim(1), Th = Ctx.dim(0), It = Ctx.symbol(0), J = Ctx.symbol(1);
  std::vector<Expr> TileOf(R, Ctx.constant(0));
  Expr TileP = Ctx.constant(0);
  int64_t Stride = 1;
  for (size_t K = 0; K < Order.size(); ++K) {
    Expr E = Stride == 1 ? Bl : Bl.floorDiv(Stride);
    if (K + 1 != Order.size())
      E = E % Order[K].second;
    (Order[K].first < 0 ? TileP : TileOf[Order[K].first]) = E;
    Stride *= Order[K].second;
  }
  // Each phase's iteration It covers sub-tile It / N, its iteration It mod
  // N within it (N = Iters or WriteIters): the first tile's row along P and
  // column along M, and the iteration.
  struct SubTile {
    Expr P0, M0, I;
  };
  auto SubTileOf = [&](int64_t N) {
    if (T.subTiles() == 1)
      return SubTile{TileP * 32, TileOf[M] * Tm, It};
    Expr S = It.floorDiv(N);
    return SubTile{(TileP * T.SubP + S % T.SubP) * 32,
                   (TileOf[M] * T.SubM + S.floorDiv(T.SubP)) * Tm, It % N};
  };
  const SubTile RS = SubTileOf(T.Iters), WS = SubTileOf(T.WriteIters);
  Expr Lane = Th % 32;
  Expr ReadP = RS.P0 + Th.floorDiv(32) + RS.I * Warps, WriteP = WS.P0 + Lane;
  Expr ReadM = RS.M0 + Lane * T.V + J,
       WriteM = WS.M0 + (Th.floorDiv(32) + WS.I * Warps) * T.V + J;
  if (T.ReadVec > 1) {
    // Lane l of warp w reads tile row l / (32 / R) + R w + R W' it (W'
    // warps), elements R (l mod (32 / R)) + j of M.
    const int64_t Rv = T.ReadVec, Lanes = 32 / Rv;
    ReadP = RS.P0 + Lane.floorDiv(Lanes) + Th.floorDiv(32) * Rv +
            RS.I * (Warps * Rv);
    ReadM = RS.M0 + (Lane % Lanes) * Rv + J;
  }
  if (T.WriteVec > 1) {
    // Lane l of warp w writes tile column l / (32 / W) + W w + W W' it
    // (W' warps), elements W (l mod (32 / W)) + j of P.
    const int64_t Wv = T.WriteVec, Lanes = 32 / Wv;
    WriteP = WS.P0 + (Lane % Lanes) * Wv + J;
    WriteM = WS.M0 + Lane.floorDiv(Lanes) + Th.floorDiv(32) * Wv +
             WS.I * (Warps * Wv);
  }
  T.ReadIdx = T.WriteIdx = TileOf;
  T.ReadIdx[M] = ReadM;
  T.WriteIdx[M] = WriteM;
  // P delinearized over the row dims (the last one is the output's minor).
  const std::vector<int64_t> RowDims = TI.dimsAfterMinor();
  auto Spread = [&](Expr Lin, std::vector<Expr> &Idx) {
    int64_t S = 1;
    for (size_t K = RowDims.size(); K-- > 0;) {
      int64_t D = RowDims[K];
      Expr E = S == 1 ? Lin : Lin.floorDiv(S);
      Idx[D] = K == 0 ? E : E % TI.Dims[D];
      S *= TI.Dims[D];
    }
  };
  Spread(ReadP, T.ReadIdx);
  Spread(WriteP, T.WriteIdx);
  if (TI.Dims[M] % (Tm * T.SubM) != 0) {
    T.ReadCs.push_back({ReadM, {0, TI.Dims[M] - 1}});
    T.WriteCs.push_back({WriteM, {0, TI.Dims[M] - 1}});
  }
  if (P % (32 * T.SubP) != 0) {
    T.ReadCs.push_back({ReadP, {0, P - 1}});
    T.WriteCs.push_back({WriteP, {0, P - 1}});
  }
  return T;
}

TransposeTiling transposeTiling(Context &Ctx, const FusionAnalysis &A,
                                const TransposeRequest &Want,
                                const DeviceModel &Device) {
  const HloInstruction *Hero = transposeHero(A);
  TransposeRequest W = Want;
  // One root in another layout makes every root's writes scalar (the write
  // phase is shared by the roots).
  for (size_t R = 0; R < A.Roots.size(); ++R)
    if (A.Heroes[R] == Hero && !A.Roots[R]->shape().hasDefaultLayout())
      W.WriteVec = 1;
  return transposeTiling(Ctx, *A.Transpose, byteWidth(Hero->shape().Type), W,
                         Device);
}

namespace {

/// Reads of a tiled transpose (transposeTiling): lanes run along the
/// input's minor dim.
ThreadMapping transposeMapping(Context &Ctx, const FusionAnalysis &A,
                               const DeviceModel &Device) {
  return transposeReadMapping(Ctx, A, transposeTiling(Ctx, A, {}, Device));
}

} // namespace

ThreadMapping transposeReadMapping(Context &Ctx, const FusionAnalysis &A,
                                   const TransposeTiling &T) {
  const HloInstruction *Hero = transposeHero(A);
  const TransposeInfo &TI = *A.Transpose;
  int64_t R = TI.Dims.size();
  Expr Lin = Ctx.constant(0);
  for (int64_t D = 0; D < R; ++D)
    Lin = Lin * TI.Dims[D] + T.ReadIdx[D];
  const Shape &In = Hero->operand(0)->shape();
  return makeMapping(
      Ctx, T.Threads, T.Blocks,
      {named("it", T.readIterations() - 1), named("vec", T.readGroup() - 1)},
      Lin,
      T.ReadCs, In, Hero->operand(0));
}

namespace {

/// Writes of a tiled transpose: lanes run along the output's minor dim,
/// each warp writes V output rows per group.
IndexingMap transposeOutputMap(Context &Ctx, const FusionAnalysis &A,
                               const ThreadMapping &Read,
                               const DeviceModel &Device) {
  const TransposeInfo &TI = *A.Transpose;
  int64_t R = TI.Dims.size();
  TransposeTiling T = transposeTiling(Ctx, A, {}, Device);
  // Output normalized order is the permutation of the input's.
  Expr Lin = Ctx.constant(0);
  for (int64_t O = 0; O < R; ++O)
    Lin = Lin * TI.Dims[TI.Permutation[O]] + T.WriteIdx[TI.Permutation[O]];
  const Shape &Out = A.Roots.front()->shape();
  IndexingMap Map(
      Ctx, Read.Map.dims(),
      {named("it", T.writeIterations() - 1), named("vec", T.writeGroup() - 1)},
      {},
      delinearizePhysical(Ctx, Lin, Out), T.WriteCs);
  simplify(Map);
  return Map;
}

/// Linear coefficients of an affine expression without div/mod; false if
/// the expression is not of that form or a coefficient overflows int64.
bool affineCoefficients(Expr E, std::map<std::pair<bool, unsigned>, int64_t> &C,
                        int64_t Scale = 1) {
  switch (E.kind()) {
  case ExprKind::Constant:
    return true;
  case ExprKind::Dim:
  case ExprKind::Symbol: {
    int64_t &K = C[{E.isDim(), E.position()}];
    return !__builtin_add_overflow(K, Scale, &K);
  }
  case ExprKind::Add:
    return affineCoefficients(E.lhs(), C, Scale) &&
           affineCoefficients(E.rhs(), C, Scale);
  case ExprKind::Mul: {
    int64_t Inner;
    if (!E.rhs().isConstant() ||
        __builtin_mul_overflow(Scale, E.rhs().value(), &Inner))
      return false;
    return affineCoefficients(E.lhs(), C, Inner);
  }
  default:
    return false;
  }
}

struct WarpCount {
  int64_t Sectors = 0, MinSectors = 0, Lines = 0, MinLines = 0;
  bool Any = false, Uniform = true;
};

/// Counts the sectors and lines one warp touches in one access.
WarpCount countWarp(const IndexingMap &Addr, int64_t Bytes, int64_t Bl,
                    int64_t Warp, const std::vector<int64_t> &Fixed,
                    int64_t VecPos) {
  WarpCount W;
  std::set<int64_t> Elems, Sectors, Lines;
  int64_t VecHi = VecPos >= 0 ? Addr.rangeVars()[VecPos].Bound.Hi : 0;
  int64_t ThHi = Addr.dims()[0].Bound.Hi;
  std::vector<int64_t> P(Addr.numVars());
  P[1] = Bl;
  for (unsigned S = 0; S < Fixed.size(); ++S)
    P[2 + S] = Fixed[S];
  int64_t First = -1;
  for (int64_t L = 0; L < 32; ++L) {
    int64_t Th = Warp * 32 + L;
    if (Th > ThHi)
      break;
    P[0] = Th;
    for (int64_t V = 0; V <= VecHi; ++V) {
      if (VecPos >= 0)
        P[2 + VecPos] = V;
      if (!Addr.contains(P))
        continue;
      auto R = Addr.evaluate(P);
      if (!R)
        continue;
      int64_t E = (*R)[0];
      if (First < 0)
        First = E;
      W.Uniform &= E == First;
      Elems.insert(E);
      Sectors.insert(E * Bytes / 32);
      Lines.insert(E * Bytes / 128);
    }
  }
  W.Any = !Elems.empty();
  W.Sectors = Sectors.size();
  W.Lines = Lines.size();
  W.MinSectors = ceilDiv(int64_t(Elems.size()) * Bytes, 32);
  W.MinLines = ceilDiv(int64_t(Elems.size()) * Bytes, 128);
  return W;
}

/// The widest w for which the engine proves that each thread's w vector
/// lanes read w consecutive, w-aligned elements.
int64_t provenVectorWidth(const IndexingMap &Addr, int64_t VecPos,
                          int64_t Bytes, std::string &Reason) {
  if (VecPos < 0) {
    Reason = "no vector variable";
    return 1;
  }
  Context &Ctx = Addr.context();
  Expr E = Addr.result(0);
  unsigned VecSym = VecPos;
  int64_t V = Addr.rangeVars()[VecPos].Bound.Hi + 1;
  if (V == 1) {
    Reason = "the emitter gives each lane one element per access";
    return 1;
  }
  if (!E.usesSymbol(VecSym)) {
    Reason = "invariant in vec (one element, reused)";
    return 1;
  }
  Expr Vec = Ctx.symbol(VecSym);
  // Powers of two dividing V only: the lanes of a group are then all in
  // the range (constraints may have narrowed it to, say, 12 of a run of
  // 16 lanes: groups of 4, not 6).
  int64_t First = 1;
  while (V % (First * 2) == 0)
    First *= 2;
  for (int64_t W = First; W >= 2; W /= 2) {
    if (W * Bytes > 16)
      continue;
    Expr Base = E.replace({}, [&] {
      std::vector<Expr> R(Addr.numSymbols());
      R[VecSym] = Vec.floorDiv(W) * W;
      return R;
    }());
    Expr Diff = simplifyExpr(E - Base, Addr);
    if (Diff != simplifyExpr(Vec % W, Addr))
      continue;
    RangeEvaluator RE(Addr);
    int64_t Div = RE.info(simplifyExpr(Base, Addr)).Divisor;
    if (Div % W != 0)
      continue;
    Reason = "proven: address = base + vec mod " + std::to_string(W) +
             ", base divisible by " + std::to_string(W);
    return W;
  }
  Reason = "contiguity or alignment not proven";
  return 1;
}

/// Folds the report of one of an operand's maps into the operand's report
/// (the worst access wins). \p First is true for the first map.
void mergeReport(AccessReport &Into, const AccessReport &R, bool First) {
  if (R.Undefined) {
    Into.Undefined = true;
    return;
  }
  if (First) {
    std::string Name = Into.Name;
    Into = R;
    Into.Name = Name;
    return;
  }
  bool Worse = R.MinSectors * Into.Sectors < Into.MinSectors * R.Sectors;
  if (Worse) {
    Into.Sectors = R.Sectors;
    Into.MinSectors = R.MinSectors;
    Into.Lines = R.Lines;
    Into.MinLines = R.MinLines;
    Into.Coverage = R.Coverage;
  }
  Into.Coalesced = Into.Coalesced && R.Coalesced;
  Into.Uniform = Into.Uniform && R.Uniform;
  if (R.VectorWidth < Into.VectorWidth || Into.VectorReason.empty()) {
    Into.VectorWidth = R.VectorWidth;
    Into.VectorReason = R.VectorReason;
  }
}

} // namespace

ThreadMapping loopThreadMapping(Context &Ctx, const Shape &Output,
                                int64_t Vector, int64_t ThreadsPerBlock,
                                int64_t Unroll) {
  int64_t N = std::max<int64_t>(1, Output.numElements());
  int64_t Threads = ceilDiv(N, Vector);
  int64_t T = std::min(ThreadsPerBlock, Threads);
  int64_t U = std::max<int64_t>(1, std::min(Unroll, ceilDiv(Threads, T)));
  int64_t B = ceilDiv(Threads, T * U);
  // Unrolled, a block's U runs of T vectors follow one another: each run
  // is one coalesced access of the block.
  Expr Thread = U == 1 ? Ctx.dim(1) * T + Ctx.dim(0)
                       : (Ctx.dim(1) * U + Ctx.symbol(0)) * T + Ctx.dim(0);
  Expr Lin = Thread * Vector + Ctx.symbol(U == 1 ? 0 : 1);
  std::vector<Constraint> Cs;
  // The grid covers B * U * T * Vector elements, at most U * T * Vector - 1
  // past N; a product that overflows certainly overshoots.
  int64_t Covered;
  if (__builtin_mul_overflow(B, T * U, &Covered) ||
      __builtin_mul_overflow(Covered, Vector, &Covered) || Covered != N)
    Cs.push_back({Lin, {0, N - 1}});
  std::vector<Variable> Syms;
  if (U > 1)
    Syms.push_back(named("u", U - 1));
  Syms.push_back(named("vec", Vector - 1));
  ThreadMapping TM = makeMapping(Ctx, T, B, Syms, Lin, Cs, Output, nullptr);
  TM.Unroll = U;
  return TM;
}

GridStride gridStride(int64_t Blocks, int64_t MaxGridX) {
  GridStride G;
  if (Blocks <= 0 || MaxGridX <= 0)
    return G;
  G.Iterations = ceilDiv(Blocks, MaxGridX);
  G.Grid = ceilDiv(Blocks, G.Iterations);
  return G;
}

ThreadMapping launchedThreadMapping(const ThreadMapping &TM, int64_t MaxGridX) {
  GridStride G = gridStride(TM.Blocks, MaxGridX);
  if (G.Iterations <= 1 || TM.Map.isUndefined() || TM.Map.numDims() != 2)
    return TM;
  Context &Ctx = TM.Map.context();
  const IndexingMap &M = TM.Map;
  // The new range variable `it` goes first so that the vector variable
  // stays the last one; the mapping's symbols move up by one.
  std::vector<Expr> SymRepl;
  for (unsigned S = 0; S < M.numSymbols(); ++S)
    SymRepl.push_back(Ctx.symbol(S + 1));
  Expr Virtual = Ctx.dim(1) + Ctx.symbol(0) * G.Grid;
  std::vector<Expr> DimRepl = {Ctx.dim(0), Virtual};
  std::vector<Expr> Results;
  for (const Expr &E : M.results())
    Results.push_back(E.replace(DimRepl, SymRepl));
  std::vector<Constraint> Cs;
  for (const Constraint &C : M.constraints())
    Cs.push_back({C.E.replace(DimRepl, SymRepl), C.I});
  // The last launched block's later iterations run past the mapping's
  // blocks when Grid * Iterations overshoots (Grid * Iterations <
  // Blocks + Iterations: no overflow).
  if (G.Grid * G.Iterations != TM.Blocks)
    Cs.push_back({Virtual, {0, TM.Blocks - 1}});
  std::vector<Variable> Range = {named("it", G.Iterations - 1)};
  Range.insert(Range.end(), M.rangeVars().begin(), M.rangeVars().end());
  ThreadMapping Out = TM;
  Out.Blocks = G.Grid;
  Out.Iterations = G.Iterations;
  Out.Map = IndexingMap(Ctx, {M.dims()[0], named("bl_x", G.Grid - 1)},
                        std::move(Range), M.runtimeVars(), std::move(Results),
                        std::move(Cs));
  simplify(Out.Map);
  return Out;
}

ThreadMapping heroThreadMapping(Context &Ctx, const FusionAnalysis &A,
                                const DeviceModel &Device) {
  switch (A.Kind) {
  case EmitterKind::RowReduction:
  case EmitterKind::MultiRowReduction:
  case EmitterKind::ColumnReduction:
  case EmitterKind::FullReduction: {
    // The reduction (or row-normalization) plan's own read of the hero's
    // operand; undefined when no plan fits (a reduction of no elements).
    Expected<KernelPlan> P = planFusion(Ctx, A, Tuning{}, Device);
    if (P)
      return P->Main;
    // No plan: a reduction of no elements, read by no thread (an empty
    // domain), or an unknown map.
    ThreadMapping None;
    for (const HloInstruction *H : A.Heroes)
      if (H->opcode() == HloOpcode::Reduce && !None.Target)
        None.Target = H->operand(0);
    if (None.Target && None.Target->shape().isArray() &&
        None.Target->shape().numElements() == 0) {
      std::vector<Expr> Zeros(size_t(None.Target->shape().rank()),
                              Ctx.constant(0));
      None.Map = IndexingMap(Ctx, {named("th_x", 0), named("bl_x", 0)}, {}, {},
                             Zeros, {{Ctx.dim(0), {1, 0}}});
    }
    return None;
  }
  case EmitterKind::Transpose:
    return transposeMapping(Ctx, A, Device);
  case EmitterKind::Concatenate:
  case EmitterKind::InputSlices:
  case EmitterKind::Scatter:
  case EmitterKind::InPlaceDynamicUpdateSlice: {
    // The plan's walk over the largest operand, or over the update.
    Expected<KernelPlan> P = planFusion(Ctx, A, Tuning{}, Device);
    if (P)
      return P->Main;
    return ThreadMapping{};
  }
  default:
    break;
  }
  const Shape &Out = A.Roots.front()->shape();
  // The widest element the kernel streams (a parameter read per element or
  // an output): a bf16 fusion computing in f32 still reads and writes
  // 16 bytes of bf16 per access. A parameter of fewer than 1/64 of the
  // output's elements is read again by many threads (a bias, a gather's
  // indices) and does not size the vectors.
  int64_t Bytes = widestParameterBytes(
      *A.Computation, std::max<int64_t>(2, Out.numElements() / 64));
  for (const HloInstruction *R : A.Roots)
    if (R->shape().isArray())
      Bytes = std::max<int64_t>(Bytes, byteWidth(R->shape().Type));
  int64_t V = std::max<int64_t>(1, 16 / Bytes);
  while (V > 1 && Out.numElements() % V != 0)
    V /= 2;
  // Fewer runs than a warp has threads: narrower runs give the same warp
  // more threads for the work (a 7 x 4 output of a threefry chain emitted
  // four times per thread took 17 ms to compile, 10 ms as 28 threads).
  while (V > 1 && Out.numElements() / V < 32)
    V /= 2;
  ThreadMapping TM = loopThreadMapping(Ctx, Out, V);
  TM.Target = A.Roots.front();
  return TM;
}

AccessReport analyzeAccess(const IndexingMap &ThreadToElement, const Shape &S,
                           bool CountWarps, int64_t MaxWarps) {
  AccessReport R;
  R.ElementBytes = byteWidth(S.Type);
  // A tuple (a tuple-shaped parameter read through get-tuple-element) has
  // no linear layout; its maps index one element of it.
  if (ThreadToElement.isUndefined() || !S.isArray() ||
      ThreadToElement.numResults() != unsigned(S.rank())) {
    R.Undefined = true;
    R.VectorReason = "unknown indexing";
    return R;
  }
  Context &Ctx = ThreadToElement.context();
  IndexingMap Addr = compose(ThreadToElement, linearizedPhysicalMap(Ctx, S));
  simplify(Addr);
  if (Addr.isKnownEmpty()) {
    R.VectorWidth = 0;
    R.Coalesced = true;
    R.Coverage = "never accessed";
    return R;
  }
  // The vector variable is the last range variable of the thread mapping;
  // the operand's own range variables come first in the composed map.
  unsigned NR = Addr.numRangeVars();
  int64_t VecPos = -1;
  for (unsigned S2 = 0; S2 < NR; ++S2)
    if (Addr.rangeVars()[S2].Name == "vec")
      VecPos = S2;
  // Iteration and operand range vars at their lower bound, runtime vars at
  // the middle of their range.
  std::vector<int64_t> Fixed;
  for (unsigned S2 = 0; S2 < Addr.numSymbols(); ++S2) {
    const Interval &B = Addr.symbolVar(S2).Bound;
    Fixed.push_back(S2 < NR ? B.Lo : B.Lo + (B.Hi - B.Lo) / 2);
  }
  int64_t Bytes = std::max<int64_t>(1, R.ElementBytes);
  if (!CountWarps) {
    R.Coverage = "not counted";
    R.VectorWidth = provenVectorWidth(Addr, VecPos, Bytes, R.VectorReason);
    return R;
  }
  int64_t WarpsPerBlock = ceilDiv(Addr.dims()[0].Bound.Hi + 1, 32);
  int64_t Blocks = Addr.dims()[1].Bound.Hi + 1;
  int64_t TotalWarps = WarpsPerBlock * Blocks;

  std::vector<std::pair<int64_t, int64_t>> Warps; // (block, warp)
  std::map<std::pair<bool, unsigned>, int64_t> Coef;
  bool Affine = affineCoefficients(Addr.result(0), Coef);
  // In 128 bits: coefficients reach 2^62.
  bool ProvenSame = Affine && (__int128(Coef[{true, 1}]) * Bytes) % 128 == 0 &&
                    (__int128(Coef[{true, 0}]) * 32 * Bytes) % 128 == 0 &&
                    Addr.constraints().empty();
  MaxWarps = std::max<int64_t>(2, std::min<int64_t>(MaxWarps, 2048));
  const int64_t Samples = std::min<int64_t>(MaxWarps, 64);
  if (TotalWarps <= MaxWarps) {
    for (int64_t B = 0; B < Blocks; ++B)
      for (int64_t W = 0; W < WarpsPerBlock; ++W)
        Warps.push_back({B, W});
    R.Coverage = "all " + std::to_string(TotalWarps) + " warps";
  } else {
    // First and last warps and an even spread in between, its stride
    // prime to the warps per block: a stride they divide would sample one
    // warp of every block (warp 0: a transpose's first tile row only).
    int64_t Stride = TotalWarps / (Samples - 1);
    while (Stride > 1 && std::gcd(Stride, WarpsPerBlock) != 1)
      --Stride;
    for (int64_t K = 0; K < Samples; ++K) {
      int64_t G = K == Samples - 1 ? TotalWarps - 1 : K * Stride;
      Warps.push_back({G / WarpsPerBlock, G % WarpsPerBlock});
    }
    R.Coverage = ProvenSame
                     ? "proven for all " + std::to_string(TotalWarps) +
                           " warps (affine, 128-byte-aligned steps)"
                     : "sampled " + std::to_string(Samples) + " of " +
                           std::to_string(TotalWarps) + " warps";
  }
  R.Uniform = true;
  bool Any = false;
  for (auto [B, W] : Warps) {
    WarpCount C = countWarp(Addr, Bytes, B, W, Fixed, VecPos);
    if (!C.Any)
      continue;
    Any = true;
    R.Uniform &= C.Uniform;
    if (R.Sectors == 0 || C.MinSectors * R.Sectors < R.MinSectors * C.Sectors) {
      R.Sectors = C.Sectors;
      R.MinSectors = C.MinSectors;
      R.Lines = C.Lines;
      R.MinLines = C.MinLines;
    }
  }
  if (!Any) {
    R.VectorWidth = 0;
    R.Coalesced = true;
    R.Coverage = "no element accessed by the checked warps";
    return R;
  }
  R.Coalesced = R.Uniform || R.MinSectors * 10 >= R.Sectors * 9;
  R.VectorWidth = provenVectorWidth(Addr, VecPos, Bytes, R.VectorReason);
  return R;
}

std::vector<AccessReport> analyzeCoalescing(Context &Ctx,
                                            const FusionAnalysis &A,
                                            bool CountWarps,
                                            const DeviceModel &Device) {
  return analyzeCoalescing(Ctx, A, heroThreadMapping(Ctx, A, Device),
                           CountWarps, Device);
}

std::vector<AccessReport> analyzeCoalescing(Context &Ctx,
                                            const FusionAnalysis &A,
                                            const ThreadMapping &TM,
                                            bool CountWarps,
                                            const DeviceModel &Device) {
  std::vector<AccessReport> Out;
  GroupedIndexing G = computeGroupedIndexing(Ctx, *A.Computation, TM.Target);
  if (A.Kind == EmitterKind::Concatenate ||
      A.Kind == EmitterKind::InputSlices) {
    // The threads walk the largest operand's index space, which is every
    // operand's (inside its extent), or the sliced inputs' one: the maps
    // from each.
    G.clear();
    std::vector<const HloInstruction *> Sources;
    if (A.Kind == EmitterKind::Concatenate)
      Sources.assign(A.Heroes.front()->operands().begin(),
                     A.Heroes.front()->operands().end());
    else
      for (const HloInstruction *R : A.Roots)
        Sources.push_back(R->operand(0));
    for (const HloInstruction *Op : Sources)
      for (auto &[I, Maps] : computeGroupedIndexing(Ctx, *A.Computation, Op))
        for (OperandMap &OM : Maps)
          if (std::find(G[I].begin(), G[I].end(), OM) == G[I].end())
            G[I].push_back(std::move(OM));
  }
  for (const HloInstruction *P : A.Computation->parameters()) {
    AccessReport R;
    R.Name = P->name();
    R.ElementBytes = byteWidth(P->shape().Type);
    auto It = G.find(P);
    if (It == G.end() || It->second.empty()) {
      R.VectorWidth = 0;
      R.Coalesced = true;
      R.Coverage = "not read by the hero's threads";
      Out.push_back(R);
      continue;
    }
    bool First = true;
    for (const OperandMap &OM : It->second) {
      IndexingMap M;
      if (!OM.Map.isUndefined() && TM.Map.numResults() == OM.Map.numDims()) {
        M = compose(TM.Map, OM.Map);
        simplify(M);
      }
      mergeReport(R, analyzeAccess(M, P->shape(), CountWarps), First);
      First = false;
    }
    Out.push_back(R);
  }
  if (A.Kind == EmitterKind::Loop || A.Kind == EmitterKind::Transpose) {
    IndexingMap OutMap = A.Kind == EmitterKind::Transpose
                             ? transposeOutputMap(Ctx, A, TM, Device)
                             : TM.Map;
    for (const HloInstruction *Root : A.Roots) {
      if (!Root->shape().sameDims(A.Roots.front()->shape()))
        continue;
      AccessReport R = analyzeAccess(OutMap, Root->shape(), CountWarps);
      R.Name = Root->name() + " (output)";
      R.IsOutput = true;
      Out.push_back(R);
    }
  }
  if (A.Kind == EmitterKind::Concatenate && !TM.Map.isUndefined()) {
    // Each operand's elements are stored at their place in the output.
    const HloInstruction *X = A.Heroes.front();
    for (int64_t K = 0; K < X->operandCount(); ++K) {
      IndexingMap ToOut =
          computeInputToOutputIndexing(Ctx, *X, K).Operands.at(0).at(0).Map;
      IndexingMap M;
      if (!ToOut.isUndefined() && ToOut.numDims() == TM.Map.numResults()) {
        M = compose(TM.Map, ToOut);
        simplify(M);
      }
      AccessReport R = analyzeAccess(M, A.Roots.front()->shape(), CountWarps);
      R.Name = A.Roots.front()->name() + " (output, " +
               X->operand(K)->name() + ")";
      R.IsOutput = true;
      Out.push_back(R);
    }
  }
  if (A.Kind == EmitterKind::InputSlices && !TM.Map.isUndefined()) {
    // Each slice's elements are stored at their place in it.
    for (const HloInstruction *Root : A.Roots) {
      IndexingMap ToOut =
          computeInputToOutputIndexing(Ctx, *Root, 0).Operands.at(0).at(0).Map;
      IndexingMap M;
      if (!ToOut.isUndefined() && ToOut.numDims() == TM.Map.numResults()) {
        M = compose(TM.Map, ToOut);
        simplify(M);
      }
      AccessReport R = analyzeAccess(M, Root->shape(), CountWarps);
      R.Name = Root->name() + " (output)";
      R.IsOutput = true;
      Out.push_back(R);
    }
  }
  if (A.Kind == EmitterKind::InPlaceDynamicUpdateSlice &&
      !TM.Map.isUndefined()) {
    // Each root stores its update through the update-to-output map.
    for (const HloInstruction *Root : A.Roots) {
      IndexingMap ToOut =
          computeInputToOutputIndexing(Ctx, *Root, 1).Operands.at(0).at(0).Map;
      IndexingMap M;
      if (!ToOut.isUndefined() && ToOut.numDims() == TM.Map.numResults()) {
        M = compose(TM.Map, ToOut);
        simplify(M);
      }
      AccessReport R = analyzeAccess(M, Root->shape(), CountWarps);
      R.Name = Root->name() + " (output)";
      R.IsOutput = true;
      Out.push_back(R);
    }
  }
  return Out;
}

std::string formatCoalescing(const std::vector<AccessReport> &Rs) {
  std::string S = "  access                 bytes  vector  sectors/min  "
                  "lines/min  coalesced  coverage\n";
  for (const AccessReport &R : Rs) {
    char Buf[512];
    if (R.Undefined) {
      snprintf(Buf, sizeof Buf, "  %-22s %5lld  unknown indexing\n",
               R.Name.c_str(), (long long)R.ElementBytes);
      S += Buf;
      continue;
    }
    if (R.VectorWidth == 0) {
      snprintf(Buf, sizeof Buf,
               "  %-22s %5lld  -       -            -   "
               "       -          %s\n",
               R.Name.c_str(), (long long)R.ElementBytes, R.Coverage.c_str());
      S += Buf;
      continue;
    }
    snprintf(Buf, sizeof Buf,
             "  %-22s %5lld  %-6lld  %5lld/%-5lld  %4lld/%-4lld  %-9s  %s\n",
             R.Name.c_str(), (long long)R.ElementBytes,
             (long long)R.VectorWidth, (long long)R.Sectors,
             (long long)R.MinSectors, (long long)R.Lines, (long long)R.MinLines,
             R.Uniform ? "broadcast" : (R.Coalesced ? "yes" : "no"),
             R.Coverage.c_str());
    S += Buf;
    S += "      vector: " + R.VectorReason + "\n";
  }
  return S;
}

bool laneUniformTest(const IndexingMap &Thread, const IndexingMap &Tested) {
  if (Tested.isKnownEmpty())
    return true;
  if (Thread.isUndefined() || Tested.isUndefined() ||
      Thread.numRangeVars() == 0 || Thread.numRuntimeVars() != 0 ||
      Tested.numRuntimeVars() != 0 || Tested.numDims() != Thread.numDims() ||
      Tested.numRangeVars() != Thread.numRangeVars())
    return false;
  Context &Ctx = Tested.context();
  const unsigned Vec = Thread.numRangeVars() - 1, W = Vec + 1;
  const Interval Lanes = Thread.rangeVars()[Vec].Bound;
  // A test that narrowed vec's own bound leaves some lanes out everywhere.
  if (Tested.rangeVars()[Vec].Bound != Lanes)
    return false;
  // Two lanes of one run: vec and w. A constraint of Tested that holds at
  // vec while one of its sides fails at w is a split run.
  std::vector<Variable> Range = Tested.rangeVars();
  Range.push_back({"w", Lanes});
  std::vector<Expr> AtW(W + 1);
  AtW[Vec] = Ctx.symbol(W);
  IndexingMap Pair(Ctx, Tested.dims(), Range, {}, Tested.results(),
                   Tested.constraints());
  for (const Constraint &C : Thread.constraints())
    Pair.addConstraint(C.E.replace({}, AtW), C.I);
  RangeEvaluator RE(Pair, /*UseConstraints=*/false);
  // The operation budget decides (deterministic); the CPU-time limit stays
  // the default safety net (a 20 ms limit turned answers into Unknown under
  // a sanitizer build).
  ExactOptions Options;
  Options.MaxOperations = 20000;
  for (const Constraint &C : Tested.constraints()) {
    if (!C.E.usesSymbol(Vec))
      continue;
    const Expr E = C.E.replace({}, AtW);
    const Interval R = RE.range(E);
    if (R.Lo == Interval::Min || R.Hi == Interval::Max)
      return false;
    std::vector<Interval> Outside;
    if (C.I.Lo != Interval::Min && R.Lo < C.I.Lo)
      Outside.push_back({R.Lo, C.I.Lo - 1});
    if (C.I.Hi != Interval::Max && R.Hi > C.I.Hi)
      Outside.push_back({C.I.Hi + 1, R.Hi});
    for (const Interval &Side : Outside) {
      IndexingMap Split = Pair;
      Split.addConstraint(E, Side);
      if (isEmptyExact(Split, Options) != Emptiness::Empty)
        return false;
    }
  }
  return true;
}

} // namespace idxmap
