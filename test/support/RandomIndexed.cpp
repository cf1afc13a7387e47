//===- support/RandomIndexed.cpp - Random gather/scatter/sort/... ---------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "support/RandomIndexed.h"

#include <algorithm>
#include <random>
#include <sstream>

namespace idxmap::testing {

namespace {

struct Rng {
  std::mt19937_64 G;
  explicit Rng(uint64_t Seed) : G(Seed) {}
  int64_t range(int64_t Lo, int64_t Hi) {
    return Lo + int64_t(G() % uint64_t(Hi - Lo + 1));
  }
  bool chance(int N, int D) { return range(1, D) <= N; }
  template <typename T> void shuffle(std::vector<T> &V) {
    for (size_t K = V.size(); K > 1; --K)
      std::swap(V[K - 1], V[size_t(range(0, int64_t(K) - 1))]);
  }
};

std::string shapeStr(const char *T, const std::vector<int64_t> &Dims) {
  std::string S = std::string(T) + "[";
  for (size_t K = 0; K < Dims.size(); ++K)
    S += (K ? "," : "") + std::to_string(Dims[K]);
  return S + "]";
}

std::string listStr(const std::vector<int64_t> &V) {
  std::string S = "{";
  for (size_t K = 0; K < V.size(); ++K)
    S += (K ? "," : "") + std::to_string(V[K]);
  return S + "}";
}

bool has(const std::vector<int64_t> &V, int64_t X) {
  return std::find(V.begin(), V.end(), X) != V.end();
}

/// An instance under construction (as RandomContraction.cpp's).
struct Instance {
  std::vector<std::string> Params;
  std::string RootShape, RootText, Callees;
  unsigned Outputs = 1;
  bool Exact = false;
  HloOpcode Op = HloOpcode::Gather;

  std::string param(const std::string &Shape) {
    Params.push_back(Shape);
    return "p" + std::to_string(Params.size() - 1);
  }

  RandomFusion finish() const {
    std::ostringstream OS;
    OS << "HloModule m\n\n" << Callees << "fused_computation {\n";
    for (size_t K = 0; K < Params.size(); ++K)
      OS << "  p" << K << " = " << Params[K] << " parameter(" << K << ")\n";
    OS << "  ROOT r = " << RootShape << " " << RootText << "\n}\n\nENTRY e {\n";
    std::string Args;
    for (size_t K = 0; K < Params.size(); ++K) {
      OS << "  a" << K << " = " << Params[K] << " parameter(" << K << ")\n";
      Args += (K ? ", a" : "a") + std::to_string(K);
    }
    OS << "  ROOT f = " << RootShape << " fusion(" << Args
       << "), kind=kLoop, calls=fused_computation\n}\n";
    RandomFusion F;
    F.Text = OS.str();
    F.NumOutputs = Outputs;
    F.NumParams = unsigned(Params.size());
    F.Exact.assign(Outputs, std::vector<bool>(Params.size(), Exact));
    F.Ops = {Op};
    return F;
  }
};

/// Batch dims and the index vector at \p Ivd (absent when implicit).
std::vector<int64_t> indicesDims(const std::vector<int64_t> &Batch, int64_t Ivd,
                                 int64_t VecLen, bool Implicit) {
  std::vector<int64_t> D = Batch;
  if (!Implicit)
    D.insert(D.begin() + Ivd, VecLen);
  return D;
}

/// \p Count sorted positions out of [0, Rank).
std::vector<int64_t> positions(Rng &R, int64_t Rank, size_t Count) {
  std::vector<int64_t> Pos;
  for (int64_t K = 0; K < Rank; ++K)
    Pos.push_back(K);
  R.shuffle(Pos);
  Pos.resize(Count);
  std::sort(Pos.begin(), Pos.end());
  return Pos;
}

RandomFusion gather(Rng &R) {
  Instance I;
  I.Op = HloOpcode::Gather;
  int64_t Rank = R.range(1, 3);
  std::vector<int64_t> Op, Sizes, Collapsed, StartMap, Slice;
  for (int64_t D = 0; D < Rank; ++D) {
    Op.push_back(R.range(1, 6));
    bool Collapse = R.chance(1, 3);
    if (Collapse)
      Collapsed.push_back(D);
    Sizes.push_back(Collapse ? 1 : R.range(1, Op.back()));
    if (!Collapse)
      Slice.push_back(Sizes.back());
    if (R.chance(2, 3))
      StartMap.push_back(D);
  }
  if (StartMap.empty())
    StartMap.push_back(R.range(0, Rank - 1));
  R.shuffle(StartMap);
  std::vector<int64_t> Batch(static_cast<size_t>(R.range(0, 2)));
  for (int64_t &B : Batch)
    B = R.range(1, 3);
  bool Implicit = StartMap.size() == 1 && R.chance(1, 2);
  int64_t Ivd =
      Implicit ? int64_t(Batch.size()) : R.range(0, int64_t(Batch.size()));
  int64_t OutRank = int64_t(Slice.size() + Batch.size());
  std::vector<int64_t> Offset = positions(R, OutRank, Slice.size()), Out;
  size_t S = 0, B = 0;
  for (int64_t D = 0; D < OutRank; ++D)
    Out.push_back(has(Offset, D) ? Slice[S++] : Batch[B++]);
  std::string P = I.param(shapeStr("f32", Op));
  std::string Q = I.param(shapeStr(
      "s32", indicesDims(Batch, Ivd, int64_t(StartMap.size()), Implicit)));
  I.RootShape = shapeStr("f32", Out);
  I.RootText = "gather(" + P + ", " + Q + "), offset_dims=" + listStr(Offset) +
               ", collapsed_slice_dims=" + listStr(Collapsed) +
               ", start_index_map=" + listStr(StartMap) +
               ", index_vector_dim=" + std::to_string(Ivd) +
               ", slice_sizes=" + listStr(Sizes);
  return I.finish();
}

RandomFusion scatter(Rng &R) {
  Instance I;
  I.Op = HloOpcode::Scatter;
  int64_t Rank = R.range(1, 3);
  std::vector<int64_t> Op, Inserted, ToOperand, Window;
  for (int64_t D = 0; D < Rank; ++D) {
    Op.push_back(R.range(1, 5));
    if (R.chance(1, 3))
      Inserted.push_back(D);
    else
      Window.push_back(R.range(1, Op.back()));
    if (R.chance(1, 2))
      ToOperand.push_back(D);
  }
  if (ToOperand.empty())
    ToOperand.push_back(R.range(0, Rank - 1));
  R.shuffle(ToOperand);
  std::vector<int64_t> Batch(static_cast<size_t>(R.range(0, 2)));
  for (int64_t &B : Batch)
    B = R.range(1, 3);
  bool Implicit = ToOperand.size() == 1 && R.chance(1, 2);
  int64_t Ivd =
      Implicit ? int64_t(Batch.size()) : R.range(0, int64_t(Batch.size()));
  int64_t UpdRank = int64_t(Window.size() + Batch.size());
  std::vector<int64_t> UWD = positions(R, UpdRank, Window.size()), Upd;
  size_t W = 0, B = 0;
  for (int64_t D = 0; D < UpdRank; ++D)
    Upd.push_back(has(UWD, D) ? Window[W++] : Batch[B++]);
  bool Add = R.chance(1, 2);
  I.Callees = Add ? "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)"
                    "\n  ROOT r = f32[] add(a, b)\n}\n\n"
                  : "second {\n  a = f32[] parameter(0)\n"
                    "  ROOT b = f32[] parameter(1)\n}\n\n";
  std::string P = I.param(shapeStr("f32", Op));
  std::string Q = I.param(shapeStr(
      "s32", indicesDims(Batch, Ivd, int64_t(ToOperand.size()), Implicit)));
  std::string U = I.param(shapeStr("f32", Upd));
  I.RootShape = shapeStr("f32", Op);
  I.RootText = "scatter(" + P + ", " + Q + ", " + U +
               "), update_window_dims=" + listStr(UWD) +
               ", inserted_window_dims=" + listStr(Inserted) +
               ", scatter_dims_to_operand_dims=" + listStr(ToOperand) +
               ", index_vector_dim=" + std::to_string(Ivd) +
               ", to_apply=" + (Add ? "add" : "second");
  return I.finish();
}

RandomFusion sort(Rng &R) {
  Instance I;
  I.Op = HloOpcode::Sort;
  std::vector<int64_t> Dims(static_cast<size_t>(R.range(1, 3)));
  for (int64_t &D : Dims)
    D = R.range(1, 5);
  int64_t Dim = R.range(0, int64_t(Dims.size()) - 1);
  bool Pair = R.chance(1, 2);
  I.Outputs = Pair ? 2 : 1;
  std::string S = shapeStr("f32", Dims), T = shapeStr("s32", Dims);
  I.Callees = "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n" +
              std::string(Pair ? "  c = s32[] parameter(2)\n"
                                 "  d = s32[] parameter(3)\n"
                               : "") +
              "  ROOT r = pred[] compare(a, b), direction=LT\n}\n\n";
  std::string K = I.param(S);
  std::string Operands = K;
  if (Pair)
    Operands += ", " + I.param(T);
  I.RootShape = Pair ? "(" + S + ", " + T + ")" : S;
  I.RootText = "sort(" + Operands + "), dimensions={" + std::to_string(Dim) +
               "}, is_stable=true, to_apply=lt";
  return I.finish();
}

RandomFusion allGather(Rng &R) {
  Instance I;
  I.Op = HloOpcode::AllGather;
  I.Exact = true; // Pure data movement: every named element is read.
  std::vector<int64_t> Dims(static_cast<size_t>(R.range(1, 3)));
  for (int64_t &D : Dims)
    D = R.range(1, 4);
  int64_t Dim = R.range(0, int64_t(Dims.size()) - 1), G = R.range(1, 3);
  std::vector<int64_t> Out = Dims, Group;
  Out[size_t(Dim)] *= G;
  for (int64_t K = 0; K < G; ++K)
    Group.push_back(K);
  std::string P = I.param(shapeStr("f32", Dims));
  I.RootShape = shapeStr("f32", Out);
  I.RootText = "all-gather(" + P + "), dimensions={" + std::to_string(Dim) +
               "}, replica_groups={" + listStr(Group) + "}";
  return I.finish();
}

} // namespace

const std::vector<HloOpcode> &indexedSingleOps() {
  static const std::vector<HloOpcode> Ops = {
      HloOpcode::Gather, HloOpcode::Scatter, HloOpcode::Sort,
      HloOpcode::AllGather};
  return Ops;
}

RandomFusion generateIndexedFusion(uint64_t Seed, HloOpcode Op) {
  Rng R(Seed * 0x9E3779B97F4A7C15ull + uint64_t(Op));
  switch (Op) {
  case HloOpcode::Gather:
    return gather(R);
  case HloOpcode::Scatter:
    return scatter(R);
  case HloOpcode::Sort:
    return sort(R);
  case HloOpcode::AllGather:
    return allGather(R);
  default:
    return {};
  }
}

} // namespace idxmap::testing
