//===- Sidecar.cpp - The JSON sidecar of emitted kernels ------------------===//
//
// Part of idxmap. nlohmann::json parses and escapes; this file only chooses
// the layout (one kernel and one buffer per line, for diffs and FileCheck)
// and checks every value the runtime sizes memory or launches from.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Sidecar.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

namespace idxmap {

using Json = nlohmann::ordered_json;

namespace {

/// Compact JSON with a space after ':' and ',' (as the hand-written sidecars
/// before it, which FileCheck tests and scripts match); nlohmann's dump
/// escapes every string and prints every number.
void print(const Json &J, std::string &Out) {
  if (J.is_object()) {
    Out += '{';
    bool First = true;
    for (const auto &[Key, Value] : J.items()) {
      Out += First ? "" : ", ";
      First = false;
      Out += Json(Key).dump(-1, ' ', false, Json::error_handler_t::replace);
      Out += ": ";
      print(Value, Out);
    }
    Out += '}';
  } else if (J.is_array()) {
    Out += '[';
    for (size_t I = 0; I < J.size(); ++I) {
      Out += I ? ", " : "";
      print(J[I], Out);
    }
    Out += ']';
  } else {
    Out += J.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

const char *kindName(SidecarBuffer::Kind K) {
  switch (K) {
  case SidecarBuffer::Kind::Parameter:
    return "parameter";
  case SidecarBuffer::Kind::Result:
    return "result";
  case SidecarBuffer::Kind::Intermediate:
    return "intermediate";
  }
  return "intermediate";
}

void typeFields(const Shape &S, Json &J) {
  J["type"] = std::string(primitiveTypeName(S.Type));
  J["shape"] = S.Dims;
  J["layout"] = S.layoutOrDefault();
}

/// The byte offset of every value of a JSON text nlohmann accepted, by JSON
/// pointer ("" for the root, "/kernels/0/grid"): nlohmann's DOM keeps no
/// positions, and errors about a value should point at it. The text is
/// valid and at most MaxDepth deep, so the walk needs no checks.
class ValueOffsets {
public:
  explicit ValueOffsets(std::string_view T) : T(T) { walk(""); }
  size_t at(const std::string &Pointer) const {
    auto It = Offsets.find(Pointer);
    return It == Offsets.end() ? 0 : It->second;
  }

private:
  void ws() {
    while (I < T.size() &&
           (T[I] == ' ' || T[I] == '\t' || T[I] == '\n' || T[I] == '\r'))
      ++I;
  }
  std::string str() {
    size_t Begin = ++I;
    while (T[I] != '"')
      I += T[I] == '\\' ? 2 : 1;
    return std::string(T.substr(Begin, I++ - Begin));
  }
  void walk(const std::string &Path) {
    ws();
    Offsets.emplace(Path, I);
    char Open = T[I];
    if (Open == '"') {
      str();
      return;
    }
    if (Open != '{' && Open != '[') {
      while (I < T.size() && !std::strchr(",]} \t\r\n", T[I]))
        ++I;
      return;
    }
    char Close = Open == '{' ? '}' : ']';
    ++I;
    ws();
    for (size_t N = 0; T[I] != Close; ++N) {
      std::string Key = std::to_string(N);
      if (Open == '{') {
        Key = str();
        ws();
        ++I; // ':'
      }
      walk(Path + "/" + Key);
      ws();
      if (T[I] == ',') {
        ++I;
        ws();
      }
    }
    ++I;
  }

  std::string_view T;
  size_t I = 0;
  std::map<std::string, size_t> Offsets;
};

constexpr unsigned MaxDepth = 32;

/// The offset of the first bracket nested deeper than MaxDepth, if any (a
/// sidecar is 5 deep; a hostile one is refused before it is parsed).
std::optional<size_t> tooDeep(std::string_view T) {
  unsigned Depth = 0;
  bool InString = false;
  for (size_t I = 0; I < T.size(); ++I) {
    char C = T[I];
    if (InString) {
      if (C == '\\')
        ++I;
      else if (C == '"')
        InString = false;
    } else if (C == '"') {
      InString = true;
    } else if (C == '{' || C == '[') {
      if (++Depth > MaxDepth)
        return I;
    } else if ((C == '}' || C == ']') && Depth) {
      --Depth;
    }
  }
  return std::nullopt;
}

/// Field access with errors at the value (or at its object when missing).
class Reader {
public:
  Reader(std::string_view Text, const std::string &File)
      : Text(Text), File(File), Offsets(Text) {}

  Diagnostic fail(const std::string &Pointer, const std::string &M) const {
    return makeDiagnostic(Text, Offsets.at(Pointer), M, File);
  }

  /// \p Obj's member \p Name, of the given type; a Diagnostic otherwise.
  std::optional<Diagnostic> field(const Json &Obj, const std::string &At,
                                  const char *Name, Json::value_t Type,
                                  const Json *&Out) const {
    auto It = Obj.find(Name);
    if (It == Obj.end())
      return fail(At, std::string("missing field '") + Name + "'");
    bool Ok =
        It->type() == Type || (Type == Json::value_t::number_integer &&
                               It->type() == Json::value_t::number_unsigned);
    if (!Ok)
      return fail(At + "/" + Name,
                  std::string("field '") + Name + "' has the wrong type");
    Out = &*It;
    return std::nullopt;
  }

  /// An integer member in [Lo, Hi].
  std::optional<Diagnostic> integer(const Json &Obj, const std::string &At,
                                    const char *Name, int64_t Lo, int64_t Hi,
                                    int64_t &Out) const {
    const Json *V;
    if (auto E = field(Obj, At, Name, Json::value_t::number_integer, V))
      return E;
    bool Unsigned = V->is_number_unsigned();
    if ((Unsigned && V->get<uint64_t>() > uint64_t(Hi)) ||
        (!Unsigned && (V->get<int64_t>() < Lo || V->get<int64_t>() > Hi)))
      return fail(At + "/" + Name, std::string("'") + Name + "' out of range");
    Out = Unsigned ? int64_t(V->get<uint64_t>()) : V->get<int64_t>();
    return std::nullopt;
  }

  std::optional<Diagnostic> ints(const Json &A, const std::string &At,
                                 std::vector<int64_t> &Out) const {
    for (size_t I = 0; I < A.size(); ++I) {
      if (!A[I].is_number_integer() ||
          (A[I].is_number_unsigned() && A[I].get<uint64_t>() > INT64_MAX))
        return fail(At + "/" + std::to_string(I), "expected an integer");
      Out.push_back(A[I].get<int64_t>());
    }
    return std::nullopt;
  }

  /// "type", "shape" and "layout" of \p Obj, checked before anything is
  /// sized from them: dims that multiply without overflow (bytes included),
  /// a layout that permutes them.
  std::optional<Diagnostic> shape(const Json &Obj, const std::string &At,
                                  Shape &Out) const {
    const Json *F;
    if (auto E = field(Obj, At, "type", Json::value_t::string, F))
      return E;
    auto T = parsePrimitiveType(F->get<std::string>());
    if (!T || *T == PrimitiveType::Tuple)
      return fail(At + "/type",
                  "unknown element type '" + F->get<std::string>() + "'");
    std::vector<int64_t> Dims, Layout;
    if (auto E = field(Obj, At, "shape", Json::value_t::array, F))
      return E;
    if (auto E = ints(*F, At + "/shape", Dims))
      return E;
    if (auto E = field(Obj, At, "layout", Json::value_t::array, F))
      return E;
    if (auto E = ints(*F, At + "/layout", Layout))
      return E;
    if (Layout.size() != Dims.size())
      return fail(At + "/layout", "layout and shape have different ranks");
    int64_t Elements = 1;
    for (int64_t D : Dims)
      if (D < 0 || (D > 0 && Elements > (INT64_MAX / 16) / D))
        return fail(At + "/shape", "dimension out of range in 'shape'");
      else
        Elements *= D;
    std::vector<bool> Seen(Dims.size());
    for (int64_t L : Layout) {
      if (L < 0 || L >= int64_t(Dims.size()) || Seen[size_t(L)])
        return fail(At + "/layout",
                    "'layout' is not a permutation of the dims");
      Seen[size_t(L)] = true;
    }
    Out = Shape(*T, Dims, Layout);
    return std::nullopt;
  }

  std::optional<Diagnostic> kernel(const Json &K, const std::string &At,
                                   size_t NumBuffers, KernelInfo &I) const;

  std::string_view Text;
  std::string File;
  ValueOffsets Offsets;
};

std::optional<Diagnostic> Reader::kernel(const Json &K, const std::string &At,
                                         size_t NumBuffers,
                                         KernelInfo &I) const {
  if (!K.is_object())
    return fail(At, "expected a kernel object");
  const Json *V;
  for (auto [Name, Dst] :
       {std::pair<const char *, std::string *>{"name", &I.Name},
        {"fusion", &I.Fusion},
        {"emitter", &I.Emitter}}) {
    if (auto E = field(K, At, Name, Json::value_t::string, V))
      return E;
    *Dst = V->get<std::string>();
  }
  for (const char *Dim : {"grid", "block"}) {
    if (auto E = field(K, At, Dim, Json::value_t::array, V))
      return E;
    std::vector<int64_t> G;
    std::string DimAt = At + "/" + Dim;
    if (auto E = ints(*V, DimAt, G))
      return E;
    if (G.size() != 3)
      return fail(DimAt, std::string("'") + Dim + "' needs 3 integers");
    unsigned *Dst = std::string(Dim) == "grid" ? I.Grid : I.Block;
    for (int D = 0; D < 3; ++D) {
      if (G[D] < 1 || G[D] > INT32_MAX)
        return fail(DimAt, std::string("'") + Dim + "' out of range");
      Dst[D] = unsigned(G[D]);
    }
  }
  int64_t N;
  // Unversioned sidecars have one "shared_bytes": the emitters' static
  // shared memory.
  const char *Static =
      K.contains("static_shared_bytes") || !K.contains("shared_bytes")
          ? "static_shared_bytes"
          : "shared_bytes";
  if (auto E = integer(K, At, Static, 0, INT32_MAX, N))
    return E;
  I.SharedBytes = unsigned(N);
  if (K.contains("dynamic_shared_bytes") || K.contains("static_shared_bytes")) {
    if (auto E = integer(K, At, "dynamic_shared_bytes", 0, INT32_MAX, N))
      return E;
    I.DynamicSharedBytes = unsigned(N);
  }
  if (auto E = field(K, At, "params", Json::value_t::array, V))
    return E;
  for (size_t PI = 0; PI < V->size(); ++PI) {
    const Json &P = (*V)[PI];
    std::string PAt = At + "/params/" + std::to_string(PI);
    if (!P.is_object())
      return fail(PAt, "expected a parameter object");
    KernelParam Pa;
    const Json *F;
    if (auto E = field(P, PAt, "name", Json::value_t::string, F))
      return E;
    Pa.Name = F->get<std::string>();
    if (auto E = field(P, PAt, "role", Json::value_t::string, F))
      return E;
    if (*F != "input" && *F != "output")
      return fail(PAt + "/role", "role must be 'input' or 'output'");
    Pa.IsOutput = *F == "output";
    if (auto E = shape(P, PAt, Pa.Type))
      return E;
    if (auto E = integer(P, PAt, "align", 1, 4096, N))
      return E;
    if ((N & (N - 1)) != 0)
      return fail(PAt + "/align",
                  "'align' must be a power of two from 1 to 4096");
    Pa.Align = unsigned(N);
    if (P.contains("buffer")) {
      if (auto E = integer(P, PAt, "buffer", -1, int64_t(NumBuffers) - 1, N))
        return E;
      Pa.Buffer = int(N);
    }
    I.Params.push_back(std::move(Pa));
  }
  if (K.contains("workspace_bytes")) {
    if (auto E = integer(K, At, "workspace_bytes", 0, INT64_MAX, N))
      return E;
    I.WorkspaceBytes = uint64_t(N);
  }
  if (K.contains("rounding_depth")) {
    if (auto E = integer(K, At, "rounding_depth", 0, INT64_MAX, N))
      return E;
    I.RoundingDepth = N;
  }
  if (K.contains("aliases")) {
    if (auto E = field(K, At, "aliases", Json::value_t::array, V))
      return E;
    for (size_t AI = 0; AI < V->size(); ++AI) {
      std::string AAt = At + "/aliases/" + std::to_string(AI);
      const Json &A = (*V)[AI];
      if (!A.is_object())
        return fail(AAt, "expected an alias object");
      int64_t Out, In;
      int64_t Last = int64_t(I.Params.size()) - 1;
      if (auto E = integer(A, AAt, "output", 0, Last, Out))
        return E;
      if (auto E = integer(A, AAt, "input", 0, Last, In))
        return E;
      if (!I.Params[size_t(Out)].IsOutput || I.Params[size_t(In)].IsOutput)
        return fail(AAt, "an alias pairs an output with an input parameter");
      I.Aliases.push_back({unsigned(Out), unsigned(In)});
    }
  }
  return std::nullopt;
}

} // namespace

std::string sidecarToJson(const Sidecar &S) {
  std::string R = "{\"schema_version\": " + std::to_string(S.SchemaVersion);
  auto Field = [&](const char *Key, const Json &V) {
    R += ",\n \"";
    R += Key;
    R += "\": ";
    print(V, R);
  };
  auto Lines = [&](const char *Key, const std::vector<Json> &Items) {
    R += ",\n \"";
    R += Key;
    R += "\": [";
    for (size_t I = 0; I < Items.size(); ++I) {
      R += I ? ",\n  " : "\n  ";
      print(Items[I], R);
    }
    R += Items.empty() ? "]" : "\n ]";
  };
  Field("target", S.Target);
  Field("ptx_version", S.PtxVersion);
  if (!S.Hlo.empty())
    Field("hlo", S.Hlo);
  std::vector<Json> Kernels;
  for (const KernelInfo &I : S.Kernels) {
    Json K;
    K["name"] = I.Name;
    K["fusion"] = I.Fusion;
    K["emitter"] = I.Emitter;
    K["grid"] = {I.Grid[0], I.Grid[1], I.Grid[2]};
    K["block"] = {I.Block[0], I.Block[1], I.Block[2]};
    K["static_shared_bytes"] = I.SharedBytes;
    K["dynamic_shared_bytes"] = I.DynamicSharedBytes;
    Json Params = Json::array();
    for (const KernelParam &P : I.Params) {
      Json J;
      J["name"] = P.Name;
      J["role"] = P.IsOutput ? "output" : "input";
      typeFields(P.Type, J);
      J["align"] = P.Align;
      if (P.Buffer >= 0)
        J["buffer"] = P.Buffer;
      Params.push_back(std::move(J));
    }
    K["params"] = std::move(Params);
    K["workspace_bytes"] = I.WorkspaceBytes;
    if (I.RoundingDepth)
      K["rounding_depth"] = I.RoundingDepth;
    Json Aliases = Json::array();
    for (const KernelAlias &A : I.Aliases)
      Aliases.push_back({{"output", A.Output}, {"input", A.Input}});
    K["aliases"] = std::move(Aliases);
    Kernels.push_back(std::move(K));
  }
  Lines("kernels", Kernels);
  Json Order = Json::array();
  for (const std::string &N : S.LaunchOrder)
    Order.push_back(N);
  Field("launch_order", Order);
  std::vector<Json> Buffers;
  for (const SidecarBuffer &B : S.Buffers) {
    Json J;
    J["kind"] = kindName(B.BufferKind);
    J["name"] = B.Name;
    J["index"] = B.Index;
    typeFields(B.Type, J);
    J["bytes"] = B.Bytes;
    Buffers.push_back(std::move(J));
  }
  Lines("buffers", Buffers);
  return R + "\n}\n";
}

Expected<Sidecar> sidecarFromJson(std::string_view Text,
                                  const std::string &File) {
  if (auto Deep = tooDeep(Text))
    return makeDiagnostic(Text, *Deep,
                          "JSON nested deeper than " +
                              std::to_string(MaxDepth) + " levels",
                          File);
  Json Root;
  try {
    Root = Json::parse(Text.begin(), Text.end());
  } catch (const Json::parse_error &E) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2:
    // syntax error while parsing value - ...": the location is ours.
    std::string M = E.what();
    size_t Colon = M.find(": ");
    M = Colon == std::string::npos ? M : M.substr(Colon + 2);
    return makeDiagnostic(Text, E.byte ? E.byte - 1 : 0, M, File);
  } catch (const Json::exception &E) {
    // A number too large for a double, "... number overflow parsing
    // '1e999'": at the number.
    std::string M = E.what();
    size_t Bracket = M.find("] ");
    M = Bracket == std::string::npos ? M : M.substr(Bracket + 2);
    size_t Quote = M.find('\'');
    size_t At = 0;
    if (Quote != std::string::npos && M.back() == '\'')
      At = Text.find(M.substr(Quote + 1, M.size() - Quote - 2));
    return makeDiagnostic(Text, At == std::string_view::npos ? 0 : At, M, File);
  }
  Reader R(Text, File);
  if (!Root.is_object())
    return R.fail("", "expected an object");
  Sidecar S;
  S.SchemaVersion = 0;
  const Json *V;
  int64_t N;
  if (Root.contains("schema_version")) {
    if (auto E = R.integer(Root, "", "schema_version", 0, INT32_MAX, N))
      return *E;
    if (N > Sidecar::CurrentSchemaVersion)
      return R.fail("/schema_version",
                    "schema_version " + std::to_string(N) +
                        " is newer than this reader's (" +
                        std::to_string(Sidecar::CurrentSchemaVersion) + ")");
    S.SchemaVersion = int(N);
  }
  for (auto [Name, Dst] :
       {std::pair<const char *, std::string *>{"target", &S.Target},
        {"ptx_version", &S.PtxVersion},
        {"hlo", &S.Hlo}}) {
    if (!Root.contains(Name))
      continue;
    if (auto E = R.field(Root, "", Name, Json::value_t::string, V))
      return *E;
    *Dst = V->get<std::string>();
  }
  if (Root.contains("buffers")) {
    if (auto E = R.field(Root, "", "buffers", Json::value_t::array, V))
      return *E;
    for (size_t BI = 0; BI < V->size(); ++BI) {
      const Json &B = (*V)[BI];
      std::string At = "/buffers/" + std::to_string(BI);
      if (!B.is_object())
        return R.fail(At, "expected a buffer object");
      SidecarBuffer Buf;
      const Json *F;
      if (auto E = R.field(B, At, "kind", Json::value_t::string, F))
        return *E;
      if (*F == "parameter")
        Buf.BufferKind = SidecarBuffer::Kind::Parameter;
      else if (*F == "result")
        Buf.BufferKind = SidecarBuffer::Kind::Result;
      else if (*F == "intermediate")
        Buf.BufferKind = SidecarBuffer::Kind::Intermediate;
      else
        return R.fail(At + "/kind", "kind must be 'parameter', 'result' or "
                                    "'intermediate'");
      if (auto E = R.field(B, At, "name", Json::value_t::string, F))
        return *E;
      Buf.Name = F->get<std::string>();
      if (auto E = R.integer(B, At, "index", -1, INT32_MAX, Buf.Index))
        return *E;
      if (auto E = R.shape(B, At, Buf.Type))
        return *E;
      if (auto E = R.integer(B, At, "bytes", 0, INT64_MAX, N))
        return *E;
      if (uint64_t(N) !=
          uint64_t(Buf.Type.numElements()) * uint64_t(byteWidth(Buf.Type.Type)))
        return R.fail(At + "/bytes", "'bytes' does not match the shape");
      Buf.Bytes = uint64_t(N);
      S.Buffers.push_back(std::move(Buf));
    }
  }
  if (auto E = R.field(Root, "", "kernels", Json::value_t::array, V))
    return *E;
  for (size_t KI = 0; KI < V->size(); ++KI) {
    KernelInfo I;
    if (auto E = R.kernel((*V)[KI], "/kernels/" + std::to_string(KI),
                          S.Buffers.size(), I))
      return *E;
    S.Kernels.push_back(std::move(I));
  }
  if (Root.contains("launch_order")) {
    if (auto E = R.field(Root, "", "launch_order", Json::value_t::array, V))
      return *E;
    for (size_t I = 0; I < V->size(); ++I) {
      const Json &Name = (*V)[I];
      std::string At = "/launch_order/" + std::to_string(I);
      if (!Name.is_string() ||
          std::none_of(S.Kernels.begin(), S.Kernels.end(),
                       [&](const KernelInfo &K) { return K.Name == Name; }))
        return R.fail(At, "expected the name of a kernel");
      S.LaunchOrder.push_back(Name.get<std::string>());
    }
  }
  return S;
}

void planBuffers(const HloModule &M, Sidecar &S) {
  S.Buffers.clear();
  S.LaunchOrder.clear();
  const HloComputation *Entry = M.entry();
  if (!Entry)
    return;
  // A value of ENTRY: an instruction, and an element of its tuple (-1: the
  // whole value). get-tuple-element is looked through, so that element N
  // of a multi-output fusion is one buffer for its writer and its readers.
  using Value = std::pair<const HloInstruction *, int64_t>;
  auto valueOf = [](const HloInstruction *I) -> Value {
    if (I->opcode() == HloOpcode::GetTupleElement)
      return {I->operands()[0], I->tupleIndex()};
    return {I, -1};
  };
  std::map<Value, int64_t> Results;
  const HloInstruction *Root = Entry->root();
  if (Root && Root->opcode() == HloOpcode::Tuple) {
    for (size_t I = 0; I < Root->operands().size(); ++I)
      Results.emplace(valueOf(Root->operands()[I]), int64_t(I));
  } else if (Root) {
    Results.emplace(valueOf(Root), -1);
  }
  std::map<Value, int> Ids;
  auto bufferOf = [&](Value V, const Shape &Type) {
    auto [It, New] = Ids.emplace(V, int(S.Buffers.size()));
    if (!New)
      return It->second;
    SidecarBuffer B;
    B.Name = V.first->name();
    if (V.second >= 0)
      B.Name += "." + std::to_string(V.second);
    if (auto R = Results.find(V); R != Results.end()) {
      B.BufferKind = SidecarBuffer::Kind::Result;
      B.Index = R->second;
    } else if (V.first->opcode() == HloOpcode::Parameter && V.second < 0) {
      B.BufferKind = SidecarBuffer::Kind::Parameter;
      B.Index = V.first->parameterNumber();
    }
    B.Type = Type;
    B.Bytes = uint64_t(Type.numElements()) * uint64_t(byteWidth(Type.Type));
    S.Buffers.push_back(std::move(B));
    return It->second;
  };
  std::vector<std::pair<size_t, std::string>> Order;
  const auto &Instrs = Entry->instructions();
  for (KernelInfo &K : S.Kernels) {
    const HloInstruction *F = Entry->findInstruction(K.Fusion);
    if (!F || !F->fusedComputation())
      continue;
    Order.push_back(
        {size_t(std::find(Instrs.begin(), Instrs.end(), F) - Instrs.begin()),
         K.Name});
    size_t In = 0, Out = 0;
    for (KernelParam &P : K.Params) {
      if (!P.IsOutput && In < F->operands().size())
        P.Buffer = bufferOf(valueOf(F->operands()[In++]), P.Type);
      else if (P.IsOutput)
        P.Buffer =
            bufferOf({F, F->shape().isTuple() ? int64_t(Out++) : -1}, P.Type);
    }
  }
  std::stable_sort(
      Order.begin(), Order.end(),
      [](const auto &A, const auto &B) { return A.first < B.first; });
  for (auto &[Pos, Name] : Order)
    S.LaunchOrder.push_back(Name);
}

std::string sidecarHloPath(const std::string &HloPath,
                           const std::string &SidecarPath) {
  namespace fs = std::filesystem;
  if (HloPath.empty() || HloPath == "-")
    return "";
  std::error_code EC;
  fs::path Hlo = fs::absolute(HloPath, EC);
  if (EC)
    return HloPath;
  if (SidecarPath.empty())
    return Hlo.lexically_normal().string();
  fs::path Dir = fs::absolute(SidecarPath, EC).parent_path();
  if (EC)
    return Hlo.lexically_normal().string();
  Dir = Dir.lexically_normal();
  fs::path Rel = Hlo.lexically_normal().lexically_relative(Dir);
  // A path that climbs to the root shares nothing with the sidecar's
  // directory: absolute then, so that moving both keeps it right.
  size_t Up = 0, Depth = 0;
  for (const fs::path &C : Rel)
    Up += C == "..";
  for (const fs::path &C : Dir.relative_path())
    Depth += !C.empty();
  if (Rel.empty() || (Up && Up >= Depth))
    return Hlo.lexically_normal().string();
  return Rel.string();
}

std::string resolveSidecarHlo(const std::string &Recorded,
                              const std::string &SidecarPath) {
  namespace fs = std::filesystem;
  if (Recorded.empty() || fs::path(Recorded).is_absolute())
    return Recorded;
  return (fs::path(SidecarPath).parent_path() / Recorded).string();
}

std::string sidecarPathFor(const std::string &PtxPath) {
  std::string Base = PtxPath;
  if (Base.size() > 4 && Base.compare(Base.size() - 4, 4, ".ptx") == 0)
    Base.resize(Base.size() - 4);
  return Base + ".json";
}

} // namespace idxmap
