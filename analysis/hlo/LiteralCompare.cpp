//===- analysis/hlo/LiteralCompare.cpp - Comparing results ----------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/HloInterpreter.h"

#include <cmath>
#include <cstdio>

namespace idxmap {

Tolerance Tolerance::forType(PrimitiveType T) {
  switch (T) {
  case PrimitiveType::F64:
    return {1e-12, 1e-12};
  case PrimitiveType::F32:
    return {1e-6, 1e-5};
  case PrimitiveType::F16:
    return {1e-3, 1e-3};
  case PrimitiveType::BF16:
    return {1e-2, 1e-2};
  default:
    return {0, 0};
  }
}

namespace {

std::string indexString(const Shape &S, int64_t Linear) {
  std::vector<int64_t> Idx(S.Dims.size());
  for (size_t D = S.Dims.size(); D-- > 0;) {
    Idx[D] = S.Dims[D] ? Linear % S.Dims[D] : 0;
    Linear = S.Dims[D] ? Linear / S.Dims[D] : 0;
  }
  std::string Out = "[";
  for (size_t D = 0; D < Idx.size(); ++D) {
    if (D)
      Out += ",";
    Out += std::to_string(Idx[D]);
  }
  return Out + "]";
}

std::string fmt(double V) {
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "%.6g", V);
  return Buf;
}

void compareInto(const Literal &E, const Literal &A,
                 const std::optional<Tolerance> &Tol, const Literal *W,
                 const std::string &Where, LiteralComparison &R) {
  if (!E.shape().compatible(A.shape())) {
    R.Match = false;
    if (R.Message.empty())
      R.Message = Where + "shape mismatch: expected " + E.shape().str() +
                  ", got " + A.shape().str();
    return;
  }
  if (E.isTuple()) {
    bool WTuple =
        W && W->isTuple() && W->elements().size() == E.elements().size();
    for (size_t K = 0; K < E.elements().size(); ++K)
      compareInto(E.elements()[K], A.elements()[K], Tol,
                  WTuple ? &W->elements()[K] : nullptr,
                  Where + "element " + std::to_string(K) + ": ", R);
    return;
  }
  if (W && (W->isTuple() || W->shape().Dims != E.shape().Dims))
    W = nullptr;
  PrimitiveType T = E.elementType();
  bool Exact = !Tol && !isFloatType(T);
  Tolerance Tl = Tol ? *Tol : Tolerance::forType(T);
  int64_t N = E.elementCount();
  int64_t Bad = 0, First = -1;
  double FirstE = 0, FirstA = 0;
  for (int64_t K = 0; K < N; ++K) {
    bool Ok;
    double EV, AV;
    if (Exact) {
      Ok = E.getBits(K) == A.getBits(K);
      EV = E.getDouble(K);
      AV = A.getDouble(K);
    } else {
      EV = E.getDouble(K);
      AV = A.getDouble(K);
      if (std::isnan(EV) || std::isnan(AV)) {
        Ok = std::isnan(EV) && std::isnan(AV);
      } else if (std::isinf(EV) || std::isinf(AV)) {
        Ok = EV == AV;
      } else {
        double Err = std::fabs(EV - AV);
        double Allowed = Tl.Abs + Tl.Rel * std::fabs(EV);
        Ok = Err <= Allowed;
        if (!Ok && W && !Exact) {
          double S = W->getDouble(K);
          if (std::isfinite(S) && Err <= Allowed + S) {
            Ok = true;
            ++R.Sensitive;
          }
        }
        R.MaxAbsError = std::max(R.MaxAbsError, Err);
        if (EV != 0)
          R.MaxRelError = std::max(R.MaxRelError, Err / std::fabs(EV));
      }
    }
    if (!Ok) {
      if (First < 0) {
        First = K;
        FirstE = EV;
        FirstA = AV;
      }
      ++Bad;
    }
  }
  if (!Bad)
    return;
  R.Match = false;
  R.Mismatches += Bad;
  if (R.FirstMismatch < 0)
    R.FirstMismatch = First;
  if (R.Message.empty())
    R.Message = Where + std::to_string(Bad) + " of " + std::to_string(N) +
                " elements differ; first at " + indexString(E.shape(), First) +
                ": expected " + fmt(FirstE) + ", got " + fmt(FirstA) +
                " (max abs error " + fmt(R.MaxAbsError) + ", max rel " +
                fmt(R.MaxRelError) + ")";
}

} // namespace

LiteralComparison compareLiterals(const Literal &Expected,
                                  const Literal &Actual,
                                  std::optional<Tolerance> Tol,
                                  const Literal *Slack) {
  LiteralComparison R;
  compareInto(Expected, Actual, Tol, Slack, "", R);
  return R;
}

} // namespace idxmap
