//===- support/RandomFusionWithOps.cpp - Issue-15 ops inside fusions ------===//
//
// Part of idxmap. See RandomFusionWithOps.h. Each builder starts from the
// result shape it must produce and works out its operands' shapes (the
// single-op generators go the other way, from operands to result, so their
// instance code does not carry over; the attribute spaces are the same).
// Every decision is taken before the first operand is asked for, so a
// builder that gives up has added nothing.
//
//===----------------------------------------------------------------------===//
#include "support/RandomFusionWithOps.h"

#include <algorithm>
#include <sstream>

namespace idxmap::testing {

namespace {

using PT = PrimitiveType;
using Op = HloOpcode;
using Kind = NewOpExactness::Kind;

std::string list(const std::vector<int64_t> &V) {
  std::string S = "{";
  for (size_t K = 0; K < V.size(); ++K)
    S += (K ? "," : "") + std::to_string(V[K]);
  return S + "}";
}

int64_t count(const std::vector<int64_t> &D) {
  int64_t N = 1;
  for (int64_t X : D)
    N *= X;
  return N;
}

bool has(const std::vector<int64_t> &V, int64_t X) {
  return std::find(V.begin(), V.end(), X) != V.end();
}

std::string typeName(PT T) { return std::string(primitiveTypeName(T)); }

/// A random permutation of 0..N-1.
std::vector<int64_t> perm(NewOpHost &H, size_t N) {
  std::vector<int64_t> P(N);
  for (size_t K = 0; K < N; ++K)
    P[K] = int64_t(K);
  for (size_t K = N; K > 1; --K)
    std::swap(P[K - 1], P[size_t(H.rnd(0, int64_t(K) - 1))]);
  return P;
}

bool chance(NewOpHost &H, int Num, int Den) { return H.rnd(1, Den) <= Num; }

NewOpExactness exactness(Kind K, size_t Operands = 0, int64_t Terms = 1) {
  NewOpExactness E;
  E.K = K;
  E.Flip.assign(Operands, false);
  E.Terms.assign(Operands, Terms);
  return E;
}

//===----------------------------------------------------------------------===//
// Called computations (named by type, added once each)
//===----------------------------------------------------------------------===//

/// `nop_<what>_<t>`: add, max, second (the update), neg, add3.
std::string scalarComputation(NewOpHost &H, const std::string &What, PT T) {
  std::string Name = "nop_" + What + "_" + typeName(T);
  std::string S = typeName(T) + "[]";
  std::string Body;
  if (What == "neg")
    Body = "  a = " + S + " parameter(0)\n  ROOT r = " + S + " negate(a)\n";
  else if (What == "add3")
    Body = "  a = " + S + " parameter(0)\n  b = " + S + " parameter(1)\n" +
           "  c = " + S + " parameter(2)\n  s = " + S + " add(a, b)\n" +
           "  ROOT r = " + S + " add(s, c)\n";
  else
    Body = "  a = " + S + " parameter(0)\n  " +
           (What == "second" ? "ROOT " : "") + "b = " + S + " parameter(1)\n" +
           (What == "second"
                ? ""
                : "  ROOT r = " + S + " " +
                      (What == "add" ? "add" : "maximum") + "(a, b)\n");
  H.addComputation(Name, Name + " {\n" + Body + "}\n");
  return Name;
}

/// A less-than comparator on keys of type \p K, with a payload of type
/// \p V when \p Pair.
std::string comparator(NewOpHost &H, PT K, std::optional<PT> V) {
  std::string Name = "nop_lt_" + typeName(K) + (V ? "_" + typeName(*V) : "");
  std::string S = typeName(K) + "[]";
  std::string Body =
      "  a = " + S + " parameter(0)\n  b = " + S + " parameter(1)\n";
  if (V)
    Body += "  c = " + typeName(*V) + "[] parameter(2)\n  d = " + typeName(*V) +
            "[] parameter(3)\n";
  Body += "  ROOT r = pred[] compare(a, b), direction=LT\n";
  H.addComputation(Name, Name + " {\n" + Body + "}\n");
  return Name;
}

//===----------------------------------------------------------------------===//
// Leaves for indices and inits
//===----------------------------------------------------------------------===//

/// Row-major values as HLO constant text (nested braces).
std::string constantText(const Shape &S, const std::vector<double> &V,
                         size_t Dim, size_t &Next) {
  auto Elem = [&](double X) {
    if (S.Type == PT::Pred)
      return std::string(X != 0 ? "true" : "false");
    std::ostringstream OS;
    OS << X;
    return OS.str();
  };
  if (Dim == S.Dims.size())
    return Elem(V[Next++]);
  std::string T = "{";
  for (int64_t K = 0; K < S.Dims[Dim]; ++K)
    T += (K ? ", " : "") + constantText(S, V, Dim + 1, Next);
  return T + "}";
}

int constant(NewOpHost &H, const Shape &S, std::vector<double> V) {
  NewOpNode N;
  N.Opc = Op::Constant;
  N.Sh = S;
  size_t Next = 0;
  N.ValueText = constantText(S, V, 0, Next);
  N.Values = std::move(V);
  return H.addNode(std::move(N));
}

int scalarConstant(NewOpHost &H, PT T, double V) {
  return constant(H, Shape(T, {}), {V});
}

/// s32 indices of shape \p S for starts into dims of extent at most
/// \p MaxExtent: values below 0 and past the end now and then, from
/// parameters (filled with [-2, 2]), constants, iotas, clamps with constant
/// bounds, broadcast scalars or random subgraphs.
int indices(NewOpHost &H, const Shape &S, int64_t MaxExtent) {
  int64_t Pick = H.rnd(0, 9);
  int64_t N = S.numElements();
  if (Pick <= 2 || (Pick <= 4 && N > 24))
    return H.leafOf(S);
  if (Pick <= 4 || (Pick == 5 && S.rank() == 0)) {
    std::vector<double> V;
    for (int64_t K = 0; K < N; ++K)
      V.push_back(double(H.rnd(-2, MaxExtent + 1)));
    return constant(H, S, V);
  }
  NewOpNode X;
  X.Sh = S;
  if (Pick == 5) {
    X.Opc = Op::Iota;
    X.Attrs = ", iota_dimension=" + std::to_string(H.rnd(0, S.rank() - 1));
  } else if (Pick <= 7) {
    X.Opc = Op::Clamp;
    int Lo = scalarConstant(H, PT::S32, double(H.rnd(-1, 1)));
    int In = chance(H, 1, 2) ? H.leafOf(S) : H.operand(S);
    int Hi = scalarConstant(H, PT::S32, double(H.rnd(0, MaxExtent)));
    X.Operands = {Lo, In, Hi};
  } else if (Pick == 8) {
    X.Opc = Op::Broadcast;
    X.Attrs = ", dimensions={}";
    X.Operands = {scalarConstant(H, PT::S32, double(H.rnd(-2, MaxExtent + 1)))};
  } else {
    return H.operand(S);
  }
  return H.addNode(std::move(X));
}

/// The init of a reduction: its identity mostly, else any scalar.
int init(NewOpHost &H, PT T, bool Add) {
  if (chance(H, 1, 4))
    return H.leafOf(Shape(T, {}));
  if (Add)
    return scalarConstant(H, T, 0);
  NewOpNode C;
  C.Opc = Op::Constant;
  C.Sh = Shape(T, {});
  C.Values = {T == PT::S32 ? -2147483648.0 : -1.0 / 0.0};
  C.ValueText = T == PT::S32 ? "-2147483648" : "-inf";
  return H.addNode(std::move(C));
}

//===----------------------------------------------------------------------===//
// Windows
//===----------------------------------------------------------------------===//

/// A window over some input extent with \p Out output positions; the input
/// extent (at most 7) in \p In. Falls back to the identity window.
WindowDim window(NewOpHost &H, int64_t Out, bool Reversal, int64_t &In) {
  for (int Try = 0; Try < 8; ++Try) {
    WindowDim W;
    W.Size = H.rnd(1, 3);
    W.Stride = H.rnd(1, 2);
    W.PadLo = chance(H, 1, 3) ? H.rnd(-1, 2) : 0;
    W.PadHi = chance(H, 1, 3) ? H.rnd(-1, 2) : 0;
    W.BaseDilation = chance(H, 1, 4) ? 2 : 1;
    W.WindowDilation = chance(H, 1, 4) ? 2 : 1;
    W.Reversal = Reversal && chance(H, 1, 4);
    int64_t Dilated = (W.Size - 1) * W.WindowDilation + 1;
    // Out = (Padded - Dilated) / Stride + 1 for Padded in this range.
    int64_t First = Dilated + (Out - 1) * W.Stride;
    for (int64_t Padded = First; Padded < First + W.Stride; ++Padded) {
      int64_t Real = Padded - W.PadLo - W.PadHi - 1;
      if (Real < 0 || Real % W.BaseDilation)
        continue;
      In = Real / W.BaseDilation + 1;
      if (In <= 7)
        return W;
    }
  }
  In = Out;
  return WindowDim();
}

std::string windowText(const std::vector<WindowDim> &Ws) {
  if (Ws.empty())
    return "{}";
  std::string Size, Stride, Pad, Lhs, Rhs, Rev;
  for (size_t K = 0; K < Ws.size(); ++K) {
    std::string X = K ? "x" : "";
    Size += X + std::to_string(Ws[K].Size);
    Stride += X + std::to_string(Ws[K].Stride);
    Pad += X + std::to_string(Ws[K].PadLo) + "_" + std::to_string(Ws[K].PadHi);
    Lhs += X + std::to_string(Ws[K].BaseDilation);
    Rhs += X + std::to_string(Ws[K].WindowDilation);
    Rev += X + std::to_string(int(Ws[K].Reversal));
  }
  return "{size=" + Size + " stride=" + Stride + " pad=" + Pad +
         " lhs_dilate=" + Lhs + " rhs_dilate=" + Rhs + " rhs_reversal=" + Rev +
         "}";
}

//===----------------------------------------------------------------------===//
// The ops
//===----------------------------------------------------------------------===//

int map(NewOpHost &H, const Shape &Want) {
  if (Want.Type != PT::F32 && Want.Type != PT::S32)
    return -1;
  int64_t N = H.rnd(1, 3);
  std::vector<int64_t> All;
  for (int64_t D = 0; D < Want.rank(); ++D)
    All.push_back(D);
  NewOpNode X;
  X.Opc = Op::Map;
  X.Sh = Want;
  X.Attrs = ", dimensions=" + list(All) + ", to_apply=" +
            scalarComputation(H,
                              N == 1   ? "neg"
                              : N == 2 ? "add"
                                       : "add3",
                              Want.Type);
  X.Exactness = exactness(Kind::Sum, size_t(N));
  X.Exactness->Flip[0] = N == 1;
  H.spend();
  for (int64_t K = 0; K < N; ++K)
    X.Operands.push_back(H.operand(Shape(Want.Type, Want.Dims)));
  return H.addNode(std::move(X));
}

int allGather(NewOpHost &H, const Shape &Want) {
  if (Want.rank() < 1)
    return -1;
  int64_t D = H.rnd(0, Want.rank() - 1), G = H.rnd(1, 3);
  if (Want.Dims[size_t(D)] % G)
    G = 1;
  if (!H.takeCollective())
    return -1;
  std::vector<int64_t> In = Want.Dims, Group;
  In[size_t(D)] /= G;
  for (int64_t K = 0; K < G; ++K)
    Group.push_back(K);
  NewOpNode X;
  X.Opc = Op::AllGather;
  X.Sh = Want;
  X.Attrs = ", dimensions={" + std::to_string(D) + "}, replica_groups={" +
            list(Group) + "}";
  X.Exactness = exactness(Kind::Move, 1);
  H.spend();
  X.Operands = {H.operand(Shape(Want.Type, In))};
  return H.addNode(std::move(X));
}

int reduceWindow(NewOpHost &H, const Shape &Want) {
  if (Want.Type != PT::F32 && Want.Type != PT::S32)
    return -1;
  std::vector<WindowDim> Ws;
  std::vector<int64_t> In;
  int64_t Terms = 1;
  for (int64_t Out : Want.Dims) {
    int64_t E = Out;
    Ws.push_back(window(H, Out, /*Reversal=*/false, E));
    In.push_back(E);
    Terms *= Ws.back().Size;
  }
  if (count(In) > H.maxElements())
    return -1;
  bool Add = H.exactOnly() || chance(H, 2, 3);
  NewOpNode X;
  X.Opc = Op::ReduceWindow;
  X.Sh = Want;
  X.Attrs = ", window=" + windowText(Ws) + ", to_apply=" +
            scalarComputation(H, Add ? "add" : "max", Want.Type);
  // Padding reads the init: it may enter a sum once more per position.
  X.Exactness = exactness(Add ? Kind::Sum : Kind::Inexact, 2, Terms);
  X.Exactness->Terms[1] = Terms + 1;
  H.spend();
  X.Operands.push_back(H.operand(Shape(Want.Type, In)));
  X.Operands.push_back(init(H, Want.Type, Add));
  return H.addNode(std::move(X));
}

int dot(NewOpHost &H, const Shape &Want) {
  if (Want.Type != PT::F32 && Want.Type != PT::S32)
    return -1;
  size_t Rank = size_t(Want.rank());
  size_t NB = size_t(H.rnd(0, int64_t(std::min<size_t>(2, Rank))));
  size_t NL = size_t(H.rnd(0, int64_t(Rank - NB)));
  size_t NC = size_t(H.rnd(0, 2));
  std::vector<int64_t> B(Want.Dims.begin(), Want.Dims.begin() + long(NB)),
      L(Want.Dims.begin() + long(NB), Want.Dims.begin() + long(NB + NL)),
      R(Want.Dims.begin() + long(NB + NL), Want.Dims.end()), C;
  for (size_t K = 0; K < NC; ++K)
    C.push_back(H.rnd(1, 4));
  // Each operand's dims in a random order: batch, contracting, then the
  // free dims in the order the result lists them.
  auto Layout = [&](const std::vector<int64_t> &Free, std::vector<int64_t> &Sh,
                    std::vector<int64_t> &BD, std::vector<int64_t> &CD) {
    std::vector<int64_t> P = perm(H, NB + NC + Free.size());
    Sh.assign(P.size(), 0);
    for (size_t K = 0; K < NB; ++K)
      BD.push_back(P[K]), Sh[size_t(P[K])] = B[K];
    for (size_t K = 0; K < NC; ++K)
      CD.push_back(P[NB + K]), Sh[size_t(P[NB + K])] = C[K];
    std::vector<int64_t> FreePos(P.begin() + long(NB + NC), P.end());
    std::sort(FreePos.begin(), FreePos.end());
    for (size_t K = 0; K < Free.size(); ++K)
      Sh[size_t(FreePos[K])] = Free[K];
  };
  std::vector<int64_t> LS, RS, LB, LC, RB, RC;
  Layout(L, LS, LB, LC);
  Layout(R, RS, RB, RC);
  if (count(LS) > H.maxElements() || count(RS) > H.maxElements())
    return -1;
  NewOpNode X;
  X.Opc = Op::Dot;
  X.Sh = Want;
  X.Attrs = ", lhs_batch_dims=" + list(LB) + ", rhs_batch_dims=" + list(RB) +
            ", lhs_contracting_dims=" + list(LC) +
            ", rhs_contracting_dims=" + list(RC);
  // A product: a zero or a cancelling sum elsewhere hides a dependency.
  X.Exactness = exactness(Kind::Inexact);
  H.spend();
  X.Operands.push_back(H.operand(Shape(Want.Type, LS)));
  X.Operands.push_back(H.operand(Shape(Want.Type, RS)));
  return H.addNode(std::move(X));
}

/// dim_labels text for one operand: \p Perm[k] is the position of role k
/// (the two letters, then spatial 0, 1, ...).
std::string labels(const std::vector<int64_t> &Perm, char A, char B) {
  std::string S(Perm.size(), '?');
  S[size_t(Perm[0])] = A;
  S[size_t(Perm[1])] = B;
  for (size_t K = 2; K < Perm.size(); ++K)
    S[size_t(Perm[K])] = char('0' + K - 2);
  return S;
}

int convolution(NewOpHost &H, const Shape &Want) {
  if (Want.Type != PT::F32 || Want.rank() < 2 || Want.rank() > 4)
    return -1;
  size_t NS = size_t(Want.rank() - 2);
  std::vector<int64_t> PI = perm(H, NS + 2), PK = perm(H, NS + 2),
                       PO = perm(H, NS + 2);
  int64_t OutBatch = Want.Dims[size_t(PO[0])], OutF = Want.Dims[size_t(PO[1])];
  int64_t FG = 1, BG = 1, Mode = H.rnd(0, 2), G = H.rnd(2, 3);
  if (Mode == 1 && OutF % G == 0)
    FG = G;
  if (Mode == 2 && OutF % G == 0)
    BG = G;
  int64_t GroupIn = H.rnd(1, 2);
  std::vector<int64_t> IS(NS + 2), KS(NS + 2);
  IS[size_t(PI[0])] = OutBatch * BG, IS[size_t(PI[1])] = GroupIn * FG;
  KS[size_t(PK[0])] = GroupIn, KS[size_t(PK[1])] = OutF;
  std::vector<WindowDim> Ws;
  for (size_t S = 0; S < NS; ++S) {
    int64_t E = 1;
    Ws.push_back(window(H, Want.Dims[size_t(PO[S + 2])], true, E));
    IS[size_t(PI[S + 2])] = E;
    KS[size_t(PK[S + 2])] = Ws.back().Size;
  }
  if (count(IS) > H.maxElements() || count(KS) > H.maxElements())
    return -1;
  NewOpNode X;
  X.Opc = Op::Convolution;
  X.Sh = Want;
  X.Attrs = ", window=" + windowText(Ws) +
            ", dim_labels=" + labels(PI, 'b', 'f') + "_" +
            labels(PK, 'i', 'o') + "->" + labels(PO, 'b', 'f');
  if (FG > 1)
    X.Attrs += ", feature_group_count=" + std::to_string(FG);
  if (BG > 1)
    X.Attrs += ", batch_group_count=" + std::to_string(BG);
  X.Exactness = exactness(Kind::Inexact);
  H.spend();
  X.Operands.push_back(H.operand(Shape(PT::F32, IS)));
  X.Operands.push_back(H.operand(Shape(PT::F32, KS)));
  return H.addNode(std::move(X));
}

/// Batch dims with the index vector (\p VecLen) inserted at \p Ivd, unless
/// implicit.
std::vector<int64_t> indicesDims(std::vector<int64_t> Batch, int64_t Ivd,
                                 int64_t VecLen, bool Implicit) {
  if (!Implicit)
    Batch.insert(Batch.begin() + Ivd, VecLen);
  return Batch;
}

/// A shuffled non-empty subset of 0..Rank-1 (start_index_map,
/// scatter_dims_to_operand_dims).
std::vector<int64_t> indexMap(NewOpHost &H, int64_t Rank) {
  std::vector<int64_t> M;
  for (int64_t D = 0; D < Rank; ++D)
    if (chance(H, 2, 3))
      M.push_back(D);
  if (M.empty())
    M.push_back(H.rnd(0, Rank - 1));
  for (size_t K = M.size(); K > 1; --K)
    std::swap(M[K - 1], M[size_t(H.rnd(0, int64_t(K) - 1))]);
  return M;
}

/// The indices dim of batch dim \p J (the index vector sits at \p Ivd).
int64_t indicesDimOf(int64_t J, int64_t Ivd, bool Implicit) {
  return !Implicit && J >= Ivd ? J + 1 : J;
}

/// Text of a batching-dims pair, empty without batching dims.
std::string batching(const char *OperandKey, const char *IndicesKey,
                     const std::vector<int64_t> &OperandDims,
                     const std::vector<int64_t> &IndicesDims) {
  if (OperandDims.empty())
    return "";
  return std::string(", ") + OperandKey + "=" + list(OperandDims) + ", " +
         IndicesKey + "=" + list(IndicesDims);
}

int gather(NewOpHost &H, const Shape &Want) {
  // Output dims: offset (a slice of an operand dim) or batch.
  std::vector<int64_t> Offset, Batch, Slice;
  for (int64_t D = 0; D < Want.rank(); ++D) {
    if (chance(H, 1, 2)) {
      Offset.push_back(D);
      Slice.push_back(Want.Dims[size_t(D)]);
    } else {
      Batch.push_back(Want.Dims[size_t(D)]);
    }
  }
  // Operand dims: the offset dims in order with 0-2 collapsed ones and now
  // and then batching ones (paired with batch dims) among them; at least
  // one dim that the index vector can start.
  size_t NBat = Batch.empty() || chance(H, 1, 2)
                    ? 0
                    : size_t(H.rnd(1, std::min<int64_t>(2, Batch.size())));
  std::vector<int64_t> Pair = perm(H, Batch.size());
  Pair.resize(NBat);
  size_t NCol = size_t(H.rnd(Slice.empty() ? 1 : 0, 2));
  int64_t Rank = int64_t(Slice.size() + NCol + NBat);
  std::vector<int64_t> Special = perm(H, size_t(Rank));
  std::vector<int64_t> Collapsed(Special.begin(), Special.begin() + long(NCol)),
      OBD(Special.begin() + long(NCol), Special.begin() + long(NCol + NBat)),
      OpDims, Sizes, Free;
  std::sort(Collapsed.begin(), Collapsed.end());
  std::sort(OBD.begin(), OBD.end());
  for (int64_t D = 0, S = 0; D < Rank; ++D) {
    auto Bt = std::find(OBD.begin(), OBD.end(), D);
    if (Bt != OBD.end()) {
      Sizes.push_back(1);
      OpDims.push_back(Batch[size_t(Pair[size_t(Bt - OBD.begin())])]);
      continue;
    }
    Free.push_back(D);
    bool Col = has(Collapsed, D);
    Sizes.push_back(Col ? 1 : Slice[size_t(S++)]);
    OpDims.push_back(Sizes.back() + H.rnd(0, Col ? 4 : 3));
  }
  std::vector<int64_t> StartMap = indexMap(H, int64_t(Free.size()));
  for (int64_t &D : StartMap)
    D = Free[size_t(D)];
  bool Implicit = StartMap.size() == 1 && chance(H, 1, 2);
  int64_t Ivd =
      Implicit ? int64_t(Batch.size()) : H.rnd(0, int64_t(Batch.size()));
  std::vector<int64_t> SIBD;
  for (int64_t J : Pair)
    SIBD.push_back(indicesDimOf(J, Ivd, Implicit));
  Shape Idx(PT::S32,
            indicesDims(Batch, Ivd, int64_t(StartMap.size()), Implicit));
  if (count(OpDims) > H.maxElements() || Idx.numElements() > H.maxElements() ||
      !H.takeIndexed())
    return -1;
  NewOpNode X;
  X.Opc = Op::Gather;
  X.Sh = Want;
  X.Attrs = ", offset_dims=" + list(Offset) +
            ", collapsed_slice_dims=" + list(Collapsed) +
            ", start_index_map=" + list(StartMap) +
            batching("operand_batching_dims", "start_indices_batching_dims",
                     OBD, SIBD) +
            ", index_vector_dim=" + std::to_string(Ivd) +
            ", slice_sizes=" + list(Sizes);
  // The runtime variables range over every start the indices may give.
  X.Exactness = exactness(Kind::Inexact);
  H.spend();
  X.Operands.push_back(H.operand(Shape(Want.Type, OpDims)));
  X.Operands.push_back(
      indices(H, Idx, *std::max_element(OpDims.begin(), OpDims.end())));
  return H.addNode(std::move(X));
}

int scatter(NewOpHost &H, const Shape &Want) {
  if (Want.rank() < 1)
    return -1;
  // Operand dims: batching (now and then, paired with an indices dim of
  // the same extent), inserted, or a window; one at least not batching.
  std::vector<int64_t> Inserted, Window, IBD, Free;
  for (int64_t D = 0; D < Want.rank(); ++D) {
    if (IBD.size() < 2 && D + 1 < Want.rank() && chance(H, 1, 3)) {
      IBD.push_back(D);
      continue;
    }
    Free.push_back(D);
    if (chance(H, 1, 3))
      Inserted.push_back(D);
    else
      Window.push_back(H.rnd(1, Want.Dims[size_t(D)]));
  }
  std::vector<int64_t> ToOperand = indexMap(H, int64_t(Free.size()));
  for (int64_t &D : ToOperand)
    D = Free[size_t(D)];
  std::vector<int64_t> Batch(size_t(H.rnd(int64_t(IBD.size()), 2)));
  for (int64_t &B : Batch)
    B = H.rnd(1, 3);
  std::vector<int64_t> Pair = perm(H, Batch.size());
  Pair.resize(IBD.size());
  for (size_t K = 0; K < IBD.size(); ++K)
    Batch[size_t(Pair[K])] = Want.Dims[size_t(IBD[K])];
  bool Implicit = ToOperand.size() == 1 && chance(H, 1, 2);
  int64_t Ivd =
      Implicit ? int64_t(Batch.size()) : H.rnd(0, int64_t(Batch.size()));
  std::vector<int64_t> SIBD;
  for (int64_t J : Pair)
    SIBD.push_back(indicesDimOf(J, Ivd, Implicit));
  int64_t UpdRank = int64_t(Window.size() + Batch.size());
  std::vector<int64_t> UWD = perm(H, size_t(UpdRank)), Upd;
  UWD.resize(Window.size());
  std::sort(UWD.begin(), UWD.end());
  for (int64_t D = 0, W = 0, B = 0; D < UpdRank; ++D)
    Upd.push_back(has(UWD, D) ? Window[size_t(W++)] : Batch[size_t(B++)]);
  Shape Idx(PT::S32,
            indicesDims(Batch, Ivd, int64_t(ToOperand.size()), Implicit));
  bool Add = (Want.Type == PT::F32 || Want.Type == PT::S32) && chance(H, 1, 2);
  if (count(Upd) > H.maxElements() || Idx.numElements() > H.maxElements() ||
      !H.takeIndexed())
    return -1;
  NewOpNode X;
  X.Opc = Op::Scatter;
  X.Sh = Want;
  X.Attrs = ", update_window_dims=" + list(UWD) +
            ", inserted_window_dims=" + list(Inserted) +
            ", scatter_dims_to_operand_dims=" + list(ToOperand) +
            batching("input_batching_dims", "scatter_indices_batching_dims",
                     IBD, SIBD) +
            ", index_vector_dim=" + std::to_string(Ivd) + ", to_apply=" +
            scalarComputation(H, Add ? "add" : "second", Want.Type);
  X.Exactness = exactness(Kind::Inexact);
  H.spend();
  X.Operands.push_back(H.operand(Shape(Want.Type, Want.Dims)));
  X.Operands.push_back(
      indices(H, Idx, *std::max_element(Want.Dims.begin(), Want.Dims.end())));
  X.Operands.push_back(H.operand(Shape(Want.Type, Upd)));
  return H.addNode(std::move(X));
}

/// A sort along one dim; now and then with a second operand and the wanted
/// value read back with get-tuple-element.
int sort(NewOpHost &H, const Shape &Want) {
  if (Want.rank() < 1)
    return -1;
  bool Key =
      Want.Type == PT::F32 || Want.Type == PT::S32 || Want.Type == PT::BF16;
  bool Pair = !Key || chance(H, 1, 3);
  std::string Dim = std::to_string(H.rnd(0, Want.rank() - 1));
  NewOpNode X;
  X.Opc = Op::Sort;
  X.Exactness = exactness(Kind::Inexact);
  H.spend();
  if (!Pair) {
    X.Sh = Want;
    X.Attrs = ", dimensions={" + Dim + "}, is_stable=true, to_apply=" +
              comparator(H, Want.Type, std::nullopt);
    X.Operands = {H.operand(Shape(Want.Type, Want.Dims))};
    return H.addNode(std::move(X));
  }
  // Keys first (value index 0) or the wanted value as the payload.
  bool First = Key && chance(H, 1, 2);
  PT K = First ? Want.Type : chance(H, 1, 2) ? PT::F32 : PT::S32;
  PT V = First ? PT::S32 : Want.Type;
  Shape KS(K, Want.Dims), VS(V, Want.Dims);
  X.Sh = Shape::tuple({KS, VS});
  X.Attrs = ", dimensions={" + Dim +
            "}, is_stable=" + (chance(H, 1, 2) ? "true" : "false") +
            ", to_apply=" + comparator(H, K, V);
  X.Operands = {H.operand(KS), H.operand(VS)};
  NewOpNode G;
  G.Opc = Op::GetTupleElement;
  G.Sh = Want;
  G.Attrs = std::string(", index=") + (First ? "0" : "1");
  G.Exactness = exactness(Kind::Inexact);
  G.Operands = {H.addNode(std::move(X))};
  return H.addNode(std::move(G));
}

/// The other issue-15 ops with elementwise (identity) maps: all-reduce and
/// collective-permute (one device: replicated values, a replica no pair
/// sends to reads zeros), reduce-precision, erf and same-width
/// bitcast-convert. Never exact.
int elementwiseLike(NewOpHost &H, const Shape &Want) {
  PT T = Want.Type;
  bool Float = T == PT::F32 || T == PT::BF16;
  NewOpNode X;
  X.Sh = Want;
  X.Exactness = exactness(Kind::Inexact);
  PT In = T;
  switch (H.rnd(0, 4)) {
  case 0:
    if (T != PT::F32 && T != PT::S32)
      return -1;
    X.Opc = Op::AllReduce;
    X.Attrs = std::string(", replica_groups=") +
              (chance(H, 1, 2) ? "{{0}}" : "{{0,1}}") + ", to_apply=" +
              scalarComputation(H, chance(H, 1, 2) ? "add" : "max", T);
    break;
  case 1: {
    static const char *Pairs[] = {"{{0,0}}", "{{0,1},{1,0}}", "{{1,0}}"};
    X.Opc = Op::CollectivePermute;
    X.Attrs = std::string(", source_target_pairs=") + Pairs[H.rnd(0, 2)];
    break;
  }
  case 2:
    if (!Float)
      return -1;
    X.Opc = Op::ReducePrecision;
    X.Attrs = ", exponent_bits=" + std::to_string(chance(H, 1, 2) ? 5 : 8) +
              ", mantissa_bits=" + std::to_string(H.rnd(1, 10));
    break;
  case 3:
    if (!Float)
      return -1;
    X.Opc = Op::Erf;
    break;
  default:
    if (T != PT::F32 && T != PT::S32)
      return -1;
    X.Opc = Op::BitcastConvert;
    In = T == PT::F32 ? PT::S32 : PT::F32;
    break;
  }
  H.spend();
  X.Operands = {H.operand(Shape(In, Want.Dims))};
  return H.addNode(std::move(X));
}

} // namespace

int buildNewOp(NewOpHost &H, const Shape &Want) {
  if (!Want.isArray())
    return -1;
  // Weighted against how often each fits a shape (map always does,
  // convolution needs f32 of rank 2-4). Exact mode: only the first three,
  // whose maps may be exact.
  using Builder = int (*)(NewOpHost &, const Shape &);
  static const std::vector<std::pair<Builder, int>> All = {
      {map, 2},     {allGather, 2},   {reduceWindow, 3},
      {dot, 3},     {convolution, 5}, {gather, 4},
      {scatter, 3}, {sort, 3},        {elementwiseLike, 3}};
  size_t N = H.exactOnly() ? 3 : All.size();
  int Total = 0;
  for (size_t K = 0; K < N; ++K)
    Total += All[K].second;
  for (int Try = 0; Try < 4; ++Try) {
    int64_t P = H.rnd(0, Total - 1);
    size_t K = 0;
    while (P >= All[K].second)
      P -= All[K++].second;
    int Id = All[K].first(H, Want);
    if (Id >= 0)
      return Id;
  }
  return -1;
}

} // namespace idxmap::testing
