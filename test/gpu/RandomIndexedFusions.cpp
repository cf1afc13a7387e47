//===- RandomIndexedFusions.cpp - Random fusions of XLA's other emitters --===//
//
// Part of idxmap. Generates seeded random fusions for the emitters beyond
// loop, transpose and reduction, keeps those the analysis sends to the
// emitter asked for, emits each to PTX and runs it through the CUDA driver
// against the reference interpreter (fresh random inputs, outputs poisoned,
// an in-place output given its operand's buffer). Exit 0 when every kernel
// matches, 1 on a mismatch or an emission failure, 77 without a CUDA
// driver. --dry-run needs no driver: it emits every fusion, checks the
// kernel's parameters and aliases and runs the interpreter on it.
//
//   random_indexed_fusions --kind dus [--seed N] [--count N]
//                          [--max-elements N] [--dry-run] [--ptxas PATH]
//                          [--print] [-v]
//
// --ptxas runs ptxas -arch=sm_90 on every emitted kernel (a failure is a
// failure of the fusion).
//
// Kinds:
//   dus  in-place dynamic-update-slice: ranks 1-4, every dtype, layouts,
//        update extents from 0 to the operand's, starts constant (in and
//        out of bounds), from parameters or computed, elementwise updates,
//        one or two roots into different buffers.
//   concat  concatenate: 1-6 operands of extents 0-300 along any dim of
//        ranks 1-4, every dtype, layouts, prologues (converts, unary ops)
//        and elementwise epilogues reading another parameter.
//   gather  gather in a loop fusion (canonical form), rows or elements of
//        tables of rank 2-3, partial slices, out-of-bounds indices
//        (clamped), prologues and epilogues.
//   slices  input slices: 2-4 unit-stride windows (overlapping, empty) of
//        one input of rank 1-4, every dtype, layouts, prologues.
//   scatter  scatter in place: rows or elements, whole or partial windows,
//        repeated and out-of-bounds indices, add/max/min/multiply/overwrite
//        (unique indices), every dtype, prologues on the updates.
//   scan  prefix scans in both forms JAX writes (the scan op, a prefix
//        reduce-window), forward and reversed, along any dim of ranks 1-3
//        (lengths 1 to 1031, primes among them), layouts, add/max/min/
//        multiply on floats and integers, prologues and epilogues.
//
//===----------------------------------------------------------------------===//

#include "idxmap/Emit.h"
#include "idxmap/Fusion.h"
#include "idxmap/Runner.h"
#include "support/GpuTestDriver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace idxmap;

namespace {

using Rng = std::mt19937_64;

template <typename T> const T &pick(Rng &R, const std::vector<T> &V) {
  return V[R() % V.size()];
}

std::string dimsText(const std::vector<int64_t> &D) {
  std::string S;
  for (size_t K = 0; K < D.size(); ++K)
    S += (K ? "," : "") + std::to_string(D[K]);
  return S;
}

/// `TYPE[D]{LAYOUT}` with a layout (minor to major).
std::string shapeText(const std::string &Ty, const std::vector<int64_t> &D,
                      const std::vector<int64_t> &Layout) {
  return Ty + "[" + dimsText(D) + "]{" + dimsText(Layout) + "}";
}

std::vector<int64_t> randomLayout(Rng &R, size_t Rank) {
  std::vector<int64_t> L(Rank);
  std::iota(L.rbegin(), L.rend(), 0);
  if (R() % 3 == 0)
    std::shuffle(L.begin(), L.end(), R);
  return L;
}

int64_t product(const std::vector<int64_t> &D) {
  return std::accumulate(D.begin(), D.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// A unary elementwise op valid for \p Ty.
std::string unaryOp(Rng &R, const std::string &Ty) {
  bool Float = Ty[0] == 'f' || Ty[0] == 'b';
  static const std::vector<std::string> FloatOps = {"negate", "abs", "tanh",
                                                    "exponential", "sine"};
  static const std::vector<std::string> IntOps = {"negate", "abs", "not"};
  return Float ? pick(R, FloatOps) : pick(R, IntOps);
}

/// A random in-place dynamic-update-slice fusion module.
std::string generateDus(uint64_t Seed, int64_t MaxElements) {
  Rng R(Seed);
  static const std::vector<std::string> Types = {"f32", "bf16", "f16", "s32",
                                                 "s8",  "f64",  "u16"};
  static const std::vector<int64_t> Big = {1,  2,  3,  7,   16,  17,  31,  32,
                                           33, 64, 65, 127, 128, 257, 1000};
  const std::string Ty = pick(R, Types);
  const size_t Rank = 1 + R() % 4;
  std::vector<int64_t> Out, Upd;
  do {
    Out.clear();
    for (size_t K = 0; K < Rank; ++K)
      Out.push_back(pick(R, Big));
  } while (product(Out) > MaxElements);
  for (int64_t D : Out) {
    // Whole extent, empty, or anything in between.
    int Kind = int(R() % 6);
    Upd.push_back(Kind == 0                   ? D
                  : Kind == 1 && R() % 8 == 0 ? 0
                                              : int64_t(R() % uint64_t(D + 1)));
  }
  const bool TwoRoots = R() % 4 == 0;
  const std::vector<int64_t> OutL = randomLayout(R, Rank);
  const std::vector<int64_t> UpdL = randomLayout(R, Rank);
  const std::string OutS = shapeText(Ty, Out, OutL);
  const std::string UpdS = shapeText(Ty, Upd, UpdL);
  // The second root's buffer: larger along some dims, its own type.
  std::vector<int64_t> Out2 = Upd;
  for (int64_t &D : Out2)
    D += int64_t(R() % 4);
  const std::string Ty2 = pick(R, Types);
  const std::string Out2S = shapeText(Ty2, Out2, randomLayout(R, Rank));

  std::ostringstream B, Entry;
  int N = 0;
  auto Fresh = [&] { return "v" + std::to_string(N++); };
  int Params = 0;
  std::vector<std::string> ParamShapes;
  auto Param = [&](const std::string &S) {
    std::string Name = "p" + std::to_string(Params);
    B << "  " << Name << " = " << S << " parameter(" << Params << ")\n";
    ParamShapes.push_back(S);
    ++Params;
    return Name;
  };
  B << "HloModule random_dus_" << Seed << "\n\nfused {\n";
  std::string Op = Param(OutS);
  std::string U = Param(UpdS);
  for (int K = int(R() % 3); K > 0; --K) {
    std::string V = Fresh();
    B << "  " << V << " = " << UpdS << " " << unaryOp(R, Ty) << "(" << U
      << ")\n";
    U = V;
  }
  // Starts: a constant (maybe out of bounds: clamped), a parameter (the
  // runner's random integers), or a parameter plus a constant.
  std::vector<std::string> Starts;
  std::string StartParam;
  for (size_t D = 0; D < Rank; ++D) {
    int Kind = int(R() % 3);
    int64_t C = int64_t(R() % uint64_t(Out[D] + 6)) - 3;
    std::string V = Fresh();
    if (Kind == 0) {
      B << "  " << V << " = s32[] constant(" << C << ")\n";
    } else {
      if (StartParam.empty())
        StartParam = Param("s32[]");
      if (Kind == 1) {
        V = StartParam;
      } else {
        std::string K2 = Fresh();
        B << "  " << K2 << " = s32[] constant(" << C << ")\n";
        B << "  " << V << " = s32[] add(" << StartParam << ", " << K2 << ")\n";
      }
    }
    Starts.push_back(V);
  }
  auto StartList = [&] {
    std::string S;
    for (const std::string &X : Starts)
      S += ", " + X;
    return S;
  };
  std::string D0 = Fresh();
  B << "  " << D0 << " = " << OutS << " dynamic-update-slice(" << Op << ", "
    << U << StartList() << ")\n";
  std::string RootType = OutS;
  if (TwoRoots) {
    std::string Op2 = Param(Out2S);
    std::string U2 = Fresh();
    B << "  " << U2 << " = " << shapeText(Ty2, Upd, UpdL) << " convert(" << U
      << ")\n";
    std::reverse(Starts.begin(), Starts.end());
    std::string D1 = Fresh();
    B << "  " << D1 << " = " << Out2S << " dynamic-update-slice(" << Op2 << ", "
      << U2 << StartList() << ")\n";
    RootType = "(" + OutS + ", " + Out2S + ")";
    B << "  ROOT t = " << RootType << " tuple(" << D0 << ", " << D1 << ")\n";
  } else {
    std::string S = B.str();
    size_t Pos = S.rfind("\n  " + D0 + " =");
    S.insert(Pos + 3, "ROOT ");
    B.str(S);
    B.seekp(0, std::ios_base::end);
  }
  B << "}\n\nENTRY main {\n";
  std::string Args;
  for (int K = 0; K < Params; ++K) {
    B << "  a" << K << " = " << ParamShapes[size_t(K)] << " parameter(" << K
      << ")\n";
    Args += (K ? ", a" : "a") + std::to_string(K);
  }
  B << "  ROOT fusion = " << RootType << " fusion(" << Args
    << "), kind=kLoop, calls=fused\n}\n";
  return B.str();
}

/// A random concatenate fusion module: 1-4 operands of extents 0 to 300
/// along a random dim (ranks 1-4), each with an elementwise prologue,
/// sometimes an elementwise epilogue reading another parameter, random
/// layouts.
std::string generateConcat(uint64_t Seed, int64_t MaxElements) {
  Rng R(Seed);
  static const std::vector<std::string> Types = {"f32", "bf16", "f16",
                                                 "s32", "s8",   "f64"};
  static const std::vector<int64_t> Dims = {1,  2,  3,  4,  7,   8,   16, 17,
                                            31, 32, 33, 64, 100, 128, 255};
  static const std::vector<int64_t> Exts = {
      0, 1, 2, 3, 4, 5, 7, 8, 12, 16, 31, 32, 33, 64, 100, 128, 300};
  const std::string Ty = pick(R, Types);
  const size_t Rank = 1 + R() % 4;
  const size_t Dim = R() % Rank;
  const int64_t NOps = 1 + int64_t(R() % 6);
  std::vector<int64_t> Base;
  std::vector<int64_t> Ext;
  int64_t Total = 0;
  do {
    Base.clear();
    Ext.clear();
    Total = 0;
    for (size_t K = 0; K < Rank; ++K)
      Base.push_back(pick(R, Dims));
    for (int64_t K = 0; K < NOps; ++K) {
      Ext.push_back(pick(R, Exts));
      Total += Ext.back();
    }
  } while (Total == 0 || product(Base) / Base[Dim] * Total > MaxElements);
  std::vector<int64_t> OutD = Base;
  OutD[Dim] = Total;
  const std::string OutS = shapeText(Ty, OutD, randomLayout(R, Rank));

  std::ostringstream B;
  int N = 0;
  auto Fresh = [&] { return "v" + std::to_string(N++); };
  std::vector<std::string> ParamShapes;
  auto Param = [&](const std::string &S) {
    std::string Name = "p" + std::to_string(ParamShapes.size());
    B << "  " << Name << " = " << S << " parameter(" << ParamShapes.size()
      << ")\n";
    ParamShapes.push_back(S);
    return Name;
  };
  B << "HloModule random_concat_" << Seed << "\n\nfused {\n";
  std::vector<std::string> Ops;
  std::string OpShapes;
  for (int64_t K = 0; K < NOps; ++K) {
    std::vector<int64_t> D = Base;
    D[Dim] = Ext[size_t(K)];
    std::vector<int64_t> L = randomLayout(R, Rank);
    // Sometimes the operand is computed from a parameter of another type.
    std::string OpTy = R() % 4 == 0 ? pick(R, Types) : Ty;
    std::string X = Param(shapeText(OpTy, D, L));
    if (OpTy != Ty) {
      std::string V = Fresh();
      B << "  " << V << " = " << shapeText(Ty, D, L) << " convert(" << X
        << ")\n";
      X = V;
    }
    for (int J = int(R() % 2); J > 0; --J) {
      std::string V = Fresh();
      B << "  " << V << " = " << shapeText(Ty, D, L) << " " << unaryOp(R, Ty)
        << "(" << X << ")\n";
      X = V;
    }
    Ops.push_back(X);
  }
  std::string Cat = Fresh();
  B << "  " << Cat << " = " << OutS << " concatenate(";
  for (size_t K = 0; K < Ops.size(); ++K)
    B << (K ? ", " : "") << Ops[K];
  B << "), dimensions={" << Dim << "}\n";
  std::string X = Cat;
  if (R() % 3 == 0) {
    std::string Q = Param(OutS);
    std::string V = Fresh();
    B << "  " << V << " = " << OutS << " "
      << (Ty[0] == 's'
              ? "add"
              : pick(R, std::vector<std::string>{"add", "multiply", "maximum"}))
      << "(" << X << ", " << Q << ")\n";
    X = V;
  }
  if (R() % 3 == 0) {
    std::string V = Fresh();
    B << "  " << V << " = " << OutS << " " << unaryOp(R, Ty) << "(" << X
      << ")\n";
    X = V;
  }
  std::string S = B.str();
  size_t Pos = S.rfind("\n  " + X + " =");
  S.insert(Pos + 3, "ROOT ");
  B.str(S);
  B.seekp(0, std::ios_base::end);
  B << "}\n\nENTRY main {\n";
  std::string Args;
  for (size_t K = 0; K < ParamShapes.size(); ++K) {
    B << "  a" << K << " = " << ParamShapes[K] << " parameter(" << K << ")\n";
    Args += (K ? ", a" : "a") + std::to_string(K);
  }
  B << "  ROOT fusion = " << OutS << " fusion(" << Args
    << "), kind=kLoop, calls=fused\n}\n";
  return B.str();
}

/// A random gather in a loop fusion, in XLA's canonical form (indices
/// [N, k], index_vector_dim 1, the offset dims trailing): rows (k = 1) or
/// elements of the first two dims (k = 2) of a table of rank 2 or 3,
/// whole or partial slices of the rest, indices shifted by a constant so
/// that some fall out of bounds (gather clamps them), a prologue on the
/// table and an epilogue on the result.
std::string generateGather(uint64_t Seed, int64_t MaxElements) {
  Rng R(Seed);
  static const std::vector<std::string> Types = {"f32", "bf16", "f16",
                                                 "s32", "s8",   "f64"};
  static const std::vector<int64_t> Rows = {1, 2, 5, 16, 33, 100, 1000};
  static const std::vector<int64_t> Cols = {1, 3, 8, 16, 17, 64, 128, 256, 513};
  static const std::vector<int64_t> Ns = {1, 2, 7, 64, 100, 1000};
  const std::string Ty = pick(R, Types);
  const size_t Rank = 2 + R() % 2;
  const int64_t K = Rank == 3 && R() % 2 ? 2 : 1;
  std::vector<int64_t> T, Slice;
  int64_t N = 0;
  do {
    T.clear();
    Slice.clear();
    for (size_t D = 0; D < Rank; ++D)
      T.push_back(D < size_t(K) ? pick(R, Rows) : pick(R, Cols));
    for (size_t D = 0; D < Rank; ++D)
      Slice.push_back(D < size_t(K)  ? 1
                      : R() % 3 == 0 ? 1 + int64_t(R() % uint64_t(T[D]))
                                     : T[D]);
    N = pick(R, Ns);
  } while (product(T) > MaxElements || N * product(Slice) > MaxElements);
  std::vector<int64_t> Out = {N};
  for (size_t D = size_t(K); D < Rank; ++D)
    Out.push_back(Slice[D]);
  std::vector<int64_t> TL(Rank);
  std::iota(TL.rbegin(), TL.rend(), 0);
  const std::string TS = shapeText(Ty, T, TL);
  std::vector<int64_t> OL(Out.size());
  std::iota(OL.rbegin(), OL.rend(), 0);
  const std::string OS = shapeText(Ty, Out, OL);
  const std::string IS =
      "s32[" + std::to_string(N) + "," + std::to_string(K) + "]{1,0}";
  std::ostringstream B;
  B << "HloModule random_gather_" << Seed << "\n\nfused {\n";
  B << "  p0 = " << TS << " parameter(0)\n";
  B << "  p1 = " << IS << " parameter(1)\n";
  std::string Table = "p0";
  if (R() % 3 == 0) {
    B << "  t = " << TS << " " << unaryOp(R, Ty) << "(p0)\n";
    Table = "t";
  }
  int64_t Shift = int64_t(R() % uint64_t(T[0] + 4)) - 3;
  B << "  c = s32[] constant(" << Shift << ")\n";
  B << "  cb = " << IS << " broadcast(c), dimensions={}\n";
  B << "  i = " << IS << " add(p1, cb)\n";
  std::string Offset, Collapsed, Map, Sizes;
  for (size_t D = size_t(K); D < Rank; ++D)
    Offset += (Offset.empty() ? "" : ",") + std::to_string(D - size_t(K) + 1);
  for (int64_t D = 0; D < K; ++D) {
    Collapsed += (D ? "," : "") + std::to_string(D);
    Map += (D ? "," : "") + std::to_string(D);
  }
  Sizes = dimsText(Slice);
  const bool Epilogue = R() % 3 == 0;
  B << "  " << (Epilogue ? "g" : "ROOT g") << " = " << OS << " gather(" << Table
    << ", i), offset_dims={" << Offset << "}, collapsed_slice_dims={"
    << Collapsed << "}, start_index_map={" << Map
    << "}, index_vector_dim=1, slice_sizes={" << Sizes << "}\n";
  if (Epilogue)
    B << "  ROOT e = " << OS << " " << unaryOp(R, Ty) << "(g)\n";
  B << "}\n\nENTRY main {\n  a0 = " << TS << " parameter(0)\n  a1 = " << IS
    << " parameter(1)\n  ROOT fusion = " << OS
    << " fusion(a0, a1), kind=kLoop, calls=fused\n}\n";
  return B.str();
}

/// A random input-slices fusion: 2-4 unit-stride slices (windows anywhere,
/// overlapping, empty ones included) of one input of rank 1-4 with an
/// elementwise prologue, every dtype, a random input layout.
std::string generateSlices(uint64_t Seed, int64_t MaxElements) {
  Rng R(Seed);
  static const std::vector<std::string> Types = {"f32", "bf16", "f16",
                                                 "s32", "s8",   "f64"};
  static const std::vector<int64_t> Dims = {1,  2,  3,  5,   8,   16, 17,
                                            31, 32, 64, 100, 128, 257};
  const std::string Ty = pick(R, Types);
  const size_t Rank = 1 + R() % 4;
  std::vector<int64_t> In;
  do {
    In.clear();
    for (size_t K = 0; K < Rank; ++K)
      In.push_back(pick(R, Dims));
  } while (product(In) > MaxElements);
  const std::string InS = shapeText(Ty, In, randomLayout(R, Rank));
  std::ostringstream B;
  B << "HloModule random_slices_" << Seed << "\n\nfused {\n";
  B << "  p0 = " << InS << " parameter(0)\n";
  std::string X = "p0";
  for (int K = int(R() % 3); K > 0; --K) {
    B << "  u" << K << " = " << InS << " " << unaryOp(R, Ty) << "(" << X
      << ")\n";
    X = "u" + std::to_string(K);
  }
  const int NS = 2 + int(R() % 3);
  std::vector<std::string> Names, Types2;
  for (int S = 0; S < NS; ++S) {
    std::vector<int64_t> Lo, Hi, Out;
    for (size_t D = 0; D < Rank; ++D) {
      int64_t A = int64_t(R() % uint64_t(In[D] + 1));
      int64_t Bd = int64_t(R() % uint64_t(In[D] + 1));
      if (R() % 3 == 0) {
        A = 0;
        Bd = In[D];
      }
      if (A > Bd)
        std::swap(A, Bd);
      if (R() % 12 == 0)
        Bd = A; // an empty window
      Lo.push_back(A);
      Hi.push_back(Bd);
      Out.push_back(Bd - A);
    }
    std::vector<int64_t> L(Rank);
    std::iota(L.rbegin(), L.rend(), 0);
    std::string OS = shapeText(Ty, Out, L);
    std::string N = "s" + std::to_string(S);
    B << "  " << N << " = " << OS << " slice(" << X << "), slice={";
    for (size_t D = 0; D < Rank; ++D)
      B << (D ? ", " : "") << "[" << Lo[D] << ":" << Hi[D] << "]";
    B << "}\n";
    Names.push_back(N);
    Types2.push_back(OS);
  }
  std::string Tuple = "(";
  for (int S = 0; S < NS; ++S)
    Tuple += (S ? ", " : "") + Types2[size_t(S)];
  Tuple += ")";
  B << "  ROOT t = " << Tuple << " tuple(";
  for (int S = 0; S < NS; ++S)
    B << (S ? ", " : "") << Names[size_t(S)];
  B << ")\n}\n\nENTRY main {\n  a0 = " << InS
    << " parameter(0)\n  ROOT fusion = " << Tuple
    << " fusion(a0), kind=kInput, calls=fused\n}\n";
  return B.str();
}

/// A random scatter fusion updating a parameter in place: rows (an index
/// vector of one component) or elements of the first two dims (two),
/// whole or partial windows, indices shifted by a constant so that many
/// repeat and some fall out of bounds (their windows are skipped), add,
/// max, min, multiply or overwrite combiners (an overwrite returning the
/// update or a copy of it), unique indices from an iota for overwrites and
/// a quarter of the rest (most promised with unique_indices=true, which
/// takes the path without atomics), sorted indices with runs of equal
/// ones for a third of the rest (indices_are_sorted=true: segments), every
/// dtype, a prologue on the updates; whole rows of an even width take the
/// vector path.
std::string generateScatter(uint64_t Seed, int64_t MaxElements) {
  Rng R(Seed);
  static const std::vector<std::string> Types = {"f32", "bf16", "f16", "s32",
                                                 "s8",  "f64",  "u32"};
  static const std::vector<int64_t> Dims = {1, 2, 3, 5, 8, 16, 17, 33, 64, 100};
  static const std::vector<std::string> Combiners = {
      "add", "add", "maximum", "minimum", "multiply", "overwrite"};
  const std::string Ty = pick(R, Types);
  const bool Float = Ty[0] == 'f' || Ty[0] == 'b';
  std::string Comb = pick(R, Combiners);
  if (Comb == "multiply" && !Float)
    Comb = "add";
  // Unique indices (from an iota) for every overwrite and a quarter of the
  // others, promised by unique_indices=true on those.
  const bool Unique = Comb == "overwrite" || R() % 4 == 0;
  const bool Promise = Comb != "overwrite" || R() % 2 == 0;
  // Sorted indices with runs of equal ones for a third of the rest
  // (indices_are_sorted=true: segments combined in registers).
  const bool Sorted = !Unique && R() % 3 == 0;
  const size_t Rank = 1 + R() % 3;
  const int64_t K = Rank >= 2 && R() % 3 == 0 ? 2 : 1;
  std::vector<int64_t> Op, Win;
  int64_t N = 0;
  do {
    Op.clear();
    Win.clear();
    for (size_t D = 0; D < Rank; ++D)
      Op.push_back(pick(R, Dims));
    for (size_t D = size_t(K); D < Rank; ++D)
      Win.push_back(R() % 3 == 0 ? 1 + int64_t(R() % uint64_t(Op[D])) : Op[D]);
    N = 1 + int64_t(R() % 64);
    if (Unique)
      N = std::min(N, Op[0]);
  } while (product(Op) > MaxElements || N * product(Win) > MaxElements);
  std::vector<int64_t> UpdD = {N};
  UpdD.insert(UpdD.end(), Win.begin(), Win.end());
  std::vector<int64_t> OL(Rank), UL(UpdD.size());
  std::iota(OL.rbegin(), OL.rend(), 0);
  std::iota(UL.rbegin(), UL.rend(), 0);
  const std::string OpS = shapeText(Ty, Op, OL);
  const std::string UpdS = shapeText(Ty, UpdD, UL);
  const std::string IS =
      "s32[" + std::to_string(N) + "," + std::to_string(K) + "]{1,0}";
  std::ostringstream B;
  // An overwrite returns the update itself (a plain store) or a copy of
  // it (a combiner the emitter runs).
  const bool Returns = Comb == "overwrite" && R() % 2;
  B << "HloModule random_scatter_" << Seed << "\n\ncombine {\n  a = " << Ty
    << "[] parameter(0)\n  " << (Returns ? "ROOT " : "") << "b = " << Ty
    << "[] parameter(1)\n";
  if (Comb == "overwrite" && !Returns)
    B << "  ROOT r = " << Ty << "[] copy(b)\n";
  else if (!Returns)
    B << "  ROOT r = " << Ty << "[] " << Comb << "(a, b)\n";
  B << "}\n\nfused {\n  p0 = " << OpS << " parameter(0)\n  p1 = " << IS
    << " parameter(1)\n  p2 = " << UpdS << " parameter(2)\n";
  std::string Idx = "p1";
  if (Unique) {
    // Unique rows: an iota (both components, if two, equal).
    B << "  io = " << IS << " iota(), iota_dimension=0\n";
    Idx = "io";
  } else if (Sorted) {
    // Sorted, each index repeated Rep times, shifted (the last ones may
    // fall out of bounds).
    const int64_t Rep = 1 + int64_t(R() % 4);
    const int64_t Shift = int64_t(R() % 3) - 1;
    B << "  io = " << IS << " iota(), iota_dimension=0\n  r = s32[] constant("
      << Rep << ")\n  rb = " << IS
      << " broadcast(r), dimensions={}\n  q = " << IS
      << " divide(io, rb)\n  c = s32[] constant(" << Shift << ")\n  cb = " << IS
      << " broadcast(c), dimensions={}\n  i = " << IS << " add(q, cb)\n";
    Idx = "i";
  } else {
    int64_t Shift = int64_t(R() % uint64_t(Op[0] + 3)) - 2;
    B << "  c = s32[] constant(" << Shift << ")\n  cb = " << IS
      << " broadcast(c), dimensions={}\n  i = " << IS << " add(p1, cb)\n";
    Idx = "i";
  }
  std::string Upd = "p2";
  if (R() % 3 == 0) {
    B << "  u = " << UpdS << " " << unaryOp(R, Ty) << "(p2)\n";
    Upd = "u";
  }
  std::string WinDims, Inserted, Map;
  for (size_t D = 1; D < UpdD.size(); ++D)
    WinDims += (WinDims.empty() ? "" : ",") + std::to_string(D);
  for (int64_t D = 0; D < K; ++D) {
    Inserted += (D ? "," : "") + std::to_string(D);
    Map += (D ? "," : "") + std::to_string(D);
  }
  B << "  ROOT s = " << OpS << " scatter(p0, " << Idx << ", " << Upd
    << "), update_window_dims={" << WinDims << "}, inserted_window_dims={"
    << Inserted << "}, scatter_dims_to_operand_dims={" << Map
    << "}, index_vector_dim=1, to_apply=combine"
    << (Unique && Promise ? ", unique_indices=true" : "")
    << (Sorted ? ", indices_are_sorted=true" : "") << "\n}\n\nENTRY main {\n"
    << "  a0 = " << OpS << " parameter(0)\n  a1 = " << IS
    << " parameter(1)\n  a2 = " << UpdS << " parameter(2)\n"
    << "  ROOT fusion = " << OpS
    << " fusion(a0, a1, a2), kind=kInput, calls=fused\n}\n";
  return B.str();
}

/// The identity of a scan combiner on \p Ty, as HLO constant text.
std::string scanIdentity(const std::string &Comb, const std::string &Ty) {
  const bool Float = Ty[0] == 'f' || Ty[0] == 'b';
  if (Comb == "add")
    return "0";
  if (Comb == "multiply")
    return "1";
  if (Float)
    return Comb == "maximum" ? "-inf" : "inf";
  if (Ty == "s32")
    return Comb == "maximum" ? "-2147483648" : "2147483647";
  return Comb == "maximum" ? "-9223372036854775808" : "9223372036854775807";
}

/// A random scan fusion in either form JAX writes: the scan op (body
/// `x op carry` returned as output and carry, the init a broadcast
/// constant or a parameter) or a prefix reduce-window (padding low, or
/// high for a reverse scan), along any dim of ranks 1-3 with lengths from
/// 1 to primes over 1000 (now and then prime lines up to --max-elements
/// long), every layout, add/max/min/multiply on f32, bf16,
/// f16, f64, s32 and s64, an elementwise prologue and epilogue (one
/// reading a second parameter); now and then a variadic reduce-window (a
/// running max or min with its index, both written).
std::string generateScan(uint64_t Seed, int64_t MaxElements) {
  Rng R(Seed);
  static const std::vector<std::string> Types = {"f32", "f32", "bf16", "f16",
                                                 "f64", "s32", "s64"};
  static const std::vector<int64_t> Dims = {1,  2,  3,  5,  7,   8,   17,
                                            31, 32, 33, 64, 127, 257, 1031};
  static const std::vector<std::string> Combiners = {"add", "add", "maximum",
                                                     "minimum", "multiply"};
  const std::string Ty = pick(R, Types);
  const bool Float = Ty[0] == 'f' || Ty[0] == 'b';
  std::string Comb = pick(R, Combiners);
  const size_t Rank = 1 + R() % 3;
  std::vector<int64_t> In;
  do {
    In.clear();
    for (size_t K = 0; K < Rank; ++K)
      In.push_back(pick(R, Dims));
  } while (product(In) > MaxElements);
  int64_t Dim = int64_t(R() % Rank);
  // Now and then long lines, a prime up to --max-elements long: tiles of
  // a line chained by look-back, its last tile ragged. The other dims are
  // 1 or a few (in a layout where the long dim is not minor, a few long
  // columns, a partial group of them).
  static const std::vector<int64_t> Long = {4099,   8191,    16381,  65521,
                                            262139, 1048573, 4194301};
  static const std::vector<int64_t> Few = {2, 3, 5, 8, 17, 33, 130};
  if (R() % 4 == 0) {
    std::vector<int64_t> Fit;
    for (int64_t L : Long)
      if (L <= MaxElements)
        Fit.push_back(L);
    if (!Fit.empty()) {
      In.assign(Rank, 1);
      In[size_t(Dim)] = Fit[R() % Fit.size()];
      for (size_t K = 0; K < Rank; ++K) {
        const int64_t F = pick(R, Few);
        if (int64_t(K) != Dim && R() % 2 == 0 && product(In) * F <= MaxElements)
          In[K] = F;
      }
    }
  }
  const int64_t N = In[size_t(Dim)];
  // A product of many elements of [-2, 2] over- or underflows: short
  // lines only.
  if (Comb == "multiply" && (N > 24 || !Float))
    Comb = "add";
  // A sum of thousands of 2-byte floats leaves their range (and the
  // reference's order of rounding decides where): max instead.
  if (N > 1031 && Comb == "add" && (Ty == "f16" || Ty == "bf16"))
    Comb = "maximum";
  const bool Reverse = R() % 3 == 0, ScanOp = R() % 2 == 0;
  // Now and then a variadic reduce-window: a running max or min with its
  // index (the scan kernels without an identity: a thread or a warp per
  // line; a warp per column past 16384 positions).
  const bool Variadic = !ScanOp && R() % 4 == 0;
  if (Variadic && Comb != "minimum")
    Comb = "maximum";
  const std::vector<int64_t> Layout = randomLayout(R, Rank);
  const std::string InS = shapeText(Ty, In, Layout);
  std::vector<int64_t> Slice;
  for (size_t K = 0; K < Rank; ++K)
    if (int64_t(K) != Dim)
      Slice.push_back(In[K]);
  std::vector<int64_t> SL(Slice.size());
  std::iota(SL.rbegin(), SL.rend(), 0);
  const std::string SliceS =
      Slice.empty() ? Ty + "[]" : shapeText(Ty, Slice, SL);
  const std::string Ident = scanIdentity(Comb, Ty);
  std::ostringstream B;
  B << "HloModule random_scan_" << Seed << "\n\n";
  if (ScanOp) {
    // The body as JAX writes it for cumsum: (x, carry) -> (s, s).
    B << "body {\n  x = " << SliceS << " parameter(0)\n  c = " << SliceS
      << " parameter(1)\n  s = " << SliceS << " " << Comb
      << (R() % 2 ? "(x, c)" : "(c, x)") << "\n  ROOT t = (" << SliceS << ", "
      << SliceS << ") tuple(s, s)\n}\n\n";
  } else if (Variadic) {
    // A running max (min) with its index, ties to the smaller index: a
    // total order, so any association order gives the same pair.
    const char *Dir = Comb == "minimum" ? "LT" : "GT";
    B << "combine {\n  a = " << Ty << "[] parameter(0)\n  ai = s32[] "
      << "parameter(1)\n  b = " << Ty << "[] parameter(2)\n  bi = s32[] "
      << "parameter(3)\n  gt = pred[] compare(b, a), direction=" << Dir
      << "\n  eq = pred[] compare(b, a), direction=EQ\n  lt = pred[] "
      << "compare(bi, ai), direction=LT\n  tie = pred[] and(eq, lt)\n  "
      << "take = pred[] or(gt, tie)\n  m = " << Ty
      << "[] select(take, b, a)\n  i = s32[] select(take, bi, ai)\n  ROOT "
      << "t = (" << Ty << "[], s32[]) tuple(m, i)\n}\n\n";
  } else {
    B << "combine {\n  a = " << Ty << "[] parameter(0)\n  b = " << Ty
      << "[] parameter(1)\n  ROOT r = " << Ty << "[] " << Comb
      << "(a, b)\n}\n\n";
  }
  const bool InitParam = ScanOp && R() % 3 == 0;
  const bool TwoInputs = !Variadic && R() % 3 == 0;
  B << "fused {\n  p0 = " << InS << " parameter(0)\n";
  if (TwoInputs)
    B << "  p1 = " << InS << " parameter(1)\n";
  if (InitParam)
    B << "  p" << (TwoInputs ? 2 : 1) << " = " << SliceS << " parameter("
      << (TwoInputs ? 2 : 1) << ")\n";
  std::string X = "p0";
  // (No prologue before a variadic scan: a NaN would break its order.)
  for (int K = Variadic ? 0 : int(R() % 3); K > 0; --K) {
    B << "  u" << K << " = " << InS << " " << unaryOp(R, Ty) << "(" << X
      << ")\n";
    X = "u" + std::to_string(K);
  }
  // The init: the identity, or now and then another constant.
  const std::string InitC = R() % 4 == 0 && Comb != "multiply" ? "1" : Ident;
  B << "  c0 = " << Ty << "[] constant(" << InitC << ")\n";
  std::string Out;
  if (ScanOp) {
    std::string Init =
        InitParam ? "p" + std::to_string(TwoInputs ? 2 : 1) : "z";
    if (!InitParam)
      B << "  z = " << SliceS << " broadcast(c0), dimensions={}\n";
    B << "  sc = (" << InS << ", " << SliceS << ") scan(" << X << ", " << Init
      << "), dimensions={" << Dim << "}, num_carries=1"
      << (Reverse ? ", is_reverse=true" : "")
      << ", is_associative=true, to_apply=body\n";
    B << "  g = " << InS << " get-tuple-element(sc), index=0\n";
    Out = "g";
  } else {
    std::string Sizes, Pads;
    for (size_t K = 0; K < Rank; ++K) {
      bool D = int64_t(K) == Dim;
      Sizes += (K ? "x" : "") + std::to_string(D ? N : 1);
      Pads += std::string(K ? "x" : "") + (!D ? "0_0"
                                           : Reverse
                                               ? "0_" + std::to_string(N - 1)
                                               : std::to_string(N - 1) + "_0");
    }
    if (Variadic) {
      const std::string IdxS = shapeText("s32", In, Layout);
      B << "  io = " << IdxS << " iota(), iota_dimension=" << Dim
        << "\n  z = s32[] constant(0)\n  w = (" << InS << ", " << IdxS
        << ") reduce-window(" << X << ", io, c0, z), window={size=" << Sizes
        << " pad=" << Pads << "}, to_apply=combine\n  m = " << InS
        << " get-tuple-element(w), index=0\n  i = " << IdxS
        << " get-tuple-element(w), index=1\n  ROOT t = (" << InS << ", " << IdxS
        << ") tuple(m, i)\n}\n\nENTRY main {\n  a0 = " << InS
        << " parameter(0)\n  ROOT fusion = (" << InS << ", " << IdxS
        << ") fusion(a0), kind=kInput, calls=fused\n}\n";
      return B.str();
    }
    B << "  w = " << InS << " reduce-window(" << X
      << ", c0), window={size=" << Sizes << " pad=" << Pads
      << "}, to_apply=combine\n";
    Out = "w";
  }
  const int Epi = int(R() % 3);
  if (Epi == 0)
    B << "  ROOT e = " << InS << " " << unaryOp(R, Ty) << "(" << Out << ")\n";
  else if (Epi == 1 && TwoInputs)
    B << "  ROOT e = " << InS << " " << (Float ? "multiply" : "add") << "("
      << Out << ", p1)\n";
  else
    B << "  ROOT e = " << InS << " copy(" << Out << ")\n";
  B << "}\n\nENTRY main {\n  a0 = " << InS << " parameter(0)\n";
  std::string Args = "a0";
  if (TwoInputs) {
    B << "  a1 = " << InS << " parameter(1)\n";
    Args += ", a1";
  }
  if (InitParam) {
    int Pn = TwoInputs ? 2 : 1;
    B << "  a" << Pn << " = " << SliceS << " parameter(" << Pn << ")\n";
    Args += ", a" + std::to_string(Pn);
  }
  B << "  ROOT fusion = " << InS << " fusion(" << Args
    << "), kind=kInput, calls=fused\n}\n";
  return B.str();
}

/// ptxas's complaint about \p Ptx, or empty when it assembles it.
std::string ptxasComplaint(const std::string &Ptxas, const std::string &Ptx,
                           uint64_t Seed) {
  std::string Base = "/tmp/random_indexed_" + std::to_string(getpid()) + "_" +
                     std::to_string(Seed);
  {
    std::ofstream F(Base + ".ptx");
    F << Ptx;
  }
  std::string Cmd = Ptxas + " -arch=sm_90 -o " + Base + ".cubin " + Base +
                    ".ptx > " + Base + ".log 2>&1";
  std::string Log;
  if (std::system(Cmd.c_str()) != 0) {
    std::ifstream L(Base + ".log");
    std::stringstream SS;
    SS << L.rdbuf();
    Log = "ptxas failed: " + SS.str();
  }
  for (const char *Ext : {".ptx", ".cubin", ".log"})
    std::remove((Base + Ext).c_str());
  return Log;
}

struct KindSpec {
  const char *Name;
  EmitterKind Kind;
  std::function<std::string(uint64_t, int64_t)> Generate;
};

const std::vector<KindSpec> &kinds() {
  static const std::vector<KindSpec> K = {
      {"dus", EmitterKind::InPlaceDynamicUpdateSlice, generateDus},
      {"concat", EmitterKind::Concatenate, generateConcat},
      {"gather", EmitterKind::Loop, generateGather},
      {"slices", EmitterKind::InputSlices, generateSlices},
      {"scatter", EmitterKind::Scatter, generateScatter},
      {"scan", EmitterKind::Scan, generateScan},
  };
  return K;
}

} // namespace

int main(int Argc, char **Argv) {
  // --kind first, then the common flags.
  const KindSpec *Kind = nullptr;
  std::vector<char *> Rest = {Argv[0]};
  for (int I = 1; I < Argc; ++I) {
    if (!std::strcmp(Argv[I], "--kind") && I + 1 < Argc) {
      for (const KindSpec &K : kinds())
        if (K.Name == std::string(Argv[I + 1]))
          Kind = &K;
      ++I;
      continue;
    }
    Rest.push_back(Argv[I]);
  }
  testing::GpuTestFlags Flags;
  Flags.MaxElements = 1 << 16;
  Flags.TakesTune = true;
  if (auto Exit = testing::parseGpuTestArgs(int(Rest.size()), Rest.data(),
                                            "random_indexed_fusions", Flags))
    return *Exit;
  if (!Kind) {
    std::fprintf(stderr, "usage: random_indexed_fusions --kind "
                         "dus|concat|gather|slices|scatter|scan ...\n");
    return 2;
  }
  auto Drv = testing::openTestDriver(Flags);
  if (auto Exit = testing::skipWithoutDriver(Drv, Flags.DryRun))
    return *Exit;
  unsigned Run = 0, Failed = 0, Skipped = 0;
  std::map<std::string, unsigned> Types;
  for (uint64_t S = Flags.Seed;
       Run < Flags.Count && S < Flags.Seed + 100 * uint64_t(Flags.Count); ++S) {
    std::string Text = Kind->Generate(S, Flags.MaxElements);
    auto M = parseHloModule(Text, "random-" + std::string(Kind->Name) + "-" +
                                      std::to_string(S));
    if (!M) {
      std::printf("FAIL seed %llu: generated module does not parse:\n%s\n%s\n",
                  (unsigned long long)S, M.error().str().c_str(), Text.c_str());
      ++Failed;
      continue;
    }
    const HloInstruction *Fusion = (*M)->fusions().front();
    if (analyzeFusion(*Fusion).Kind != Kind->Kind) {
      ++Skipped;
      continue;
    }
    ++Run;
    EmitOptions EO;
    EO.HostIr = Flags.Simulate;
    EO.Target.PreciseMath = true;
    EO.Tuning = Flags.Knobs;
    auto E = emitModule(**M, EO);
    if (!E) {
      std::printf("FAIL seed %llu: emit: %s\n%s\n", (unsigned long long)S,
                  E.error().str().c_str(), Text.c_str());
      ++Failed;
      continue;
    }
    ++Types[std::string(primitiveTypeName(
        Fusion->shape().isTuple() ? Fusion->shape().TupleShapes[0].Type
                                  : Fusion->shape().Type))];
    if (!Flags.Ptxas.empty())
      if (std::string Bad = ptxasComplaint(Flags.Ptxas, E->Ptx, S);
          !Bad.empty()) {
        std::printf("FAIL seed %llu: %s\n%s\n", (unsigned long long)S,
                    Bad.c_str(), Text.c_str());
        ++Failed;
        continue;
      }
    if (Flags.Print)
      std::printf("seed %llu: %s emitter\n%s", (unsigned long long)S,
                  E->Kernels.front().Emitter.c_str(), Text.c_str());
    if (Flags.DryRun) {
      const HloComputation &C = *Fusion->fusedComputation();
      std::vector<Literal> Args;
      for (int64_t I = 0; I < C.parameterCount(); ++I) {
        Literal L(
            Shape(C.parameter(I)->shape().Type, C.parameter(I)->shape().Dims));
        L.fillRandom(S * 1000003 + uint64_t(I), -2.0, 2.0);
        Args.push_back(std::move(L));
      }
      auto Ev = evaluate(C, Args);
      const KernelInfo &K = E->Kernels.front();
      if (!Ev || E->Kernels.size() != 1 ||
          K.Params.size() != size_t(C.parameterCount()) + Ev->size() ||
          ((Kind->Kind == EmitterKind::InPlaceDynamicUpdateSlice ||
            Kind->Kind == EmitterKind::Scatter) &&
           K.Aliases.size() != Ev->size())) {
        std::printf("FAIL seed %llu: %s\n%s\n", (unsigned long long)S,
                    !Ev ? Ev.error().str().c_str()
                        : "kernel parameters or aliases do not match",
                    Text.c_str());
        ++Failed;
      }
      continue;
    }
    RunOptions RO;
    RO.Seed = S;
    RO.TolFor = kernelTolerances(/*PreciseMath=*/true);
    std::ostringstream Log;
    auto Res = runKernels(**Drv, **M, Flags.Simulate ? E->LlvmIr : E->Ptx,
                          E->Kernels, RO, Log);
    if (!Res) {
      std::printf("FAIL seed %llu: run: %s\n%s\n", (unsigned long long)S,
                  Res.error().Message.c_str(), Text.c_str());
      ++Failed;
      continue;
    }
    for (const KernelRunResult &K : *Res) {
      if (!K.Ok) {
        std::printf("FAIL seed %llu:\n", (unsigned long long)S);
        for (const std::string &L : K.OutputReports)
          std::printf("  %s\n", L.c_str());
        std::printf("%s\n", Text.c_str());
        ++Failed;
      } else if (Flags.Verbose) {
        for (const std::string &L : K.OutputReports)
          std::printf("ok seed %llu %s\n", (unsigned long long)S, L.c_str());
      }
    }
  }
  std::string TypeList;
  for (const auto &[T, N] : Types)
    TypeList += (TypeList.empty() ? "" : ", ") + std::to_string(N) + " " + T;
  std::printf("%u random %s fusions %s (%s; %u other fusions skipped), %u "
              "failed\n",
              Run, Kind->Name,
              Flags.DryRun ? "emitted (dry run)"
                           : ("run on " + (*Drv)->device().Name).c_str(),
              TypeList.c_str(), Skipped, Failed);
  return Failed || Run < Flags.Count ? 1 : 0;
}
