//===- KernelInfo.cpp - The JSON sidecar of emitted kernels ---------------===//
//
// Part of idxmap. A writer of the sidecar, and its reader on JsonReader.h.
//
//===----------------------------------------------------------------------===//
#include "idxmap/KernelInfo.h"
#include "JsonReader.h"

#include <cctype>
#include <cstdint>
#include <map>
#include <memory>

namespace idxmap {

static std::string jsonString(const std::string &S) {
  std::string R = "\"";
  for (char C : S) {
    if (C == '"' || C == '\\')
      R += '\\';
    R += C;
  }
  return R + "\"";
}

static std::string jsonInts(const std::vector<int64_t> &V) {
  std::string R = "[";
  for (size_t I = 0; I < V.size(); ++I)
    R += (I ? ", " : "") + std::to_string(V[I]);
  return R + "]";
}

std::string kernelsToJson(const std::vector<KernelInfo> &Kernels,
                          const std::string &HloPath) {
  std::string R = "{";
  if (!HloPath.empty())
    R += "\"hlo\": " + jsonString(HloPath) + ",\n ";
  R += "\"kernels\": [\n";
  for (size_t K = 0; K < Kernels.size(); ++K) {
    const KernelInfo &I = Kernels[K];
    R += "  {\"name\": " + jsonString(I.Name) +
         ", \"fusion\": " + jsonString(I.Fusion) +
         ", \"emitter\": " + jsonString(I.Emitter) +
         ", \"grid\": " + jsonInts({I.Grid[0], I.Grid[1], I.Grid[2]}) +
         ", \"block\": " + jsonInts({I.Block[0], I.Block[1], I.Block[2]}) +
         ", \"shared_bytes\": " + std::to_string(I.SharedBytes) +
         ", \"params\": [";
    for (size_t P = 0; P < I.Params.size(); ++P) {
      const KernelParam &Pa = I.Params[P];
      R += std::string(P ? ", " : "") + "{\"name\": " + jsonString(Pa.Name) +
           ", \"role\": " + (Pa.IsOutput ? "\"output\"" : "\"input\"") +
           ", \"type\": " +
           jsonString(std::string(primitiveTypeName(Pa.Type.Type))) +
           ", \"shape\": " + jsonInts(Pa.Type.Dims) +
           ", \"layout\": " + jsonInts(Pa.Type.layoutOrDefault()) +
           ", \"align\": " + std::to_string(Pa.Align) + "}";
    }
    R += "]";
    if (I.WorkspaceBytes)
      R += ", \"workspace_bytes\": " + std::to_string(I.WorkspaceBytes);
    R += "}";
    R += K + 1 < Kernels.size() ? ",\n" : "\n";
  }
  return R + "]}\n";
}

Expected<std::vector<KernelInfo>> kernelsFromJson(std::string_view Text,
                                                  const std::string &File,
                                                  std::string *HloPath) {
  JsonReader R(Text, File);
  auto Root = R.parse();
  if (!Root)
    return Root.error();
  auto Fail = [&](const JValue &At, const std::string &M) {
    return makeDiagnostic(Text, At.Offset, M, File);
  };
  auto Field = [&](const JValue &Obj, const char *Name, JValue::Kind K,
                   const JValue *&Out) -> std::optional<Diagnostic> {
    auto It = Obj.O.find(Name);
    if (It == Obj.O.end())
      return Fail(Obj, std::string("missing field '") + Name + "'");
    if (It->second.K != K)
      return Fail(It->second,
                  std::string("field '") + Name + "' has the wrong type");
    Out = &It->second;
    return std::nullopt;
  };
  auto Ints = [&](const JValue &A,
                  std::vector<int64_t> &Out) -> std::optional<Diagnostic> {
    for (const JValue &E : A.A) {
      if (E.K != JValue::Int)
        return Fail(E, "expected an integer");
      Out.push_back(E.I);
    }
    return std::nullopt;
  };
  if (Root->K != JValue::Obj)
    return Fail(*Root, "expected an object");
  const JValue *Ks;
  if (auto E = Field(*Root, "kernels", JValue::Arr, Ks))
    return *E;
  if (HloPath) {
    auto It = Root->O.find("hlo");
    *HloPath = It != Root->O.end() && It->second.K == JValue::Str
                   ? It->second.S
                   : std::string();
  }
  std::vector<KernelInfo> Out;
  for (const JValue &K : Ks->A) {
    if (K.K != JValue::Obj)
      return Fail(K, "expected a kernel object");
    KernelInfo I;
    const JValue *V;
    if (auto E = Field(K, "name", JValue::Str, V))
      return *E;
    I.Name = V->S;
    if (auto E = Field(K, "fusion", JValue::Str, V))
      return *E;
    I.Fusion = V->S;
    if (auto E = Field(K, "emitter", JValue::Str, V))
      return *E;
    I.Emitter = V->S;
    for (const char *Dim : {"grid", "block"}) {
      if (auto E = Field(K, Dim, JValue::Arr, V))
        return *E;
      std::vector<int64_t> G;
      if (auto E = Ints(*V, G))
        return *E;
      if (G.size() != 3)
        return Fail(*V, std::string("'") + Dim + "' needs 3 integers");
      unsigned *Dst = std::string(Dim) == "grid" ? I.Grid : I.Block;
      for (int D = 0; D < 3; ++D) {
        if (G[D] < 1 || G[D] > INT32_MAX)
          return Fail(*V, std::string("'") + Dim + "' out of range");
        Dst[D] = unsigned(G[D]);
      }
    }
    if (auto E = Field(K, "shared_bytes", JValue::Int, V))
      return *E;
    if (V->I < 0 || V->I > INT32_MAX)
      return Fail(*V, "'shared_bytes' out of range");
    I.SharedBytes = unsigned(V->I);
    if (auto E = Field(K, "params", JValue::Arr, V))
      return *E;
    for (const JValue &P : V->A) {
      if (P.K != JValue::Obj)
        return Fail(P, "expected a parameter object");
      KernelParam Pa;
      const JValue *F;
      if (auto E = Field(P, "name", JValue::Str, F))
        return *E;
      Pa.Name = F->S;
      if (auto E = Field(P, "role", JValue::Str, F))
        return *E;
      if (F->S != "input" && F->S != "output")
        return Fail(*F, "role must be 'input' or 'output'");
      Pa.IsOutput = F->S == "output";
      if (auto E = Field(P, "type", JValue::Str, F))
        return *E;
      auto T = parsePrimitiveType(F->S);
      if (!T)
        return Fail(*F, "unknown element type '" + F->S + "'");
      std::vector<int64_t> Dims, Layout;
      if (auto E = Field(P, "shape", JValue::Arr, F))
        return *E;
      if (auto E = Ints(*F, Dims))
        return *E;
      if (auto E = Field(P, "layout", JValue::Arr, F))
        return *E;
      if (auto E = Ints(*F, Layout))
        return *E;
      if (Layout.size() != Dims.size())
        return Fail(*F, "layout and shape have different ranks");
      // Checked before anything is sized from them: dims that multiply
      // without overflow (bytes included), a layout that permutes them.
      int64_t Elements = 1;
      for (int64_t D : Dims)
        if (D < 0 || (D > 0 && Elements > (INT64_MAX / 16) / D))
          return Fail(*F, "dimension out of range in 'shape'");
        else
          Elements *= D;
      std::vector<bool> Seen(Dims.size());
      for (int64_t L : Layout) {
        if (L < 0 || L >= int64_t(Dims.size()) || Seen[size_t(L)])
          return Fail(*F, "'layout' is not a permutation of the dims");
        Seen[size_t(L)] = true;
      }
      Pa.Type = Shape(*T, Dims, Layout);
      if (auto E = Field(P, "align", JValue::Int, F))
        return *E;
      if (F->I < 1 || F->I > 4096 || (F->I & (F->I - 1)) != 0)
        return Fail(*F, "'align' must be a power of two from 1 to 4096");
      Pa.Align = unsigned(F->I);
      I.Params.push_back(std::move(Pa));
    }
    if (K.O.count("workspace_bytes")) {
      if (auto E = Field(K, "workspace_bytes", JValue::Int, V))
        return *E;
      if (V->I < 0)
        return Fail(*V, "'workspace_bytes' must not be negative");
      I.WorkspaceBytes = uint64_t(V->I);
    }
    Out.push_back(std::move(I));
  }
  return Out;
}

} // namespace idxmap
