//===- TuneCache.cpp - Measured knobs per fusion and device ---------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/TuneCache.h"

#include "JsonReader.h"
#include "hlo/HloLexer.h"
#include "idxmap/DeviceModel.h"
#include "idxmap/Fusion.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <deque>
#include <optional>
#include <tuple>

namespace idxmap {

//===----------------------------------------------------------------------===//
// The fingerprint
//===----------------------------------------------------------------------===//

namespace {

/// Prints computations with positions for names. The instruction printer's
/// line is cut into the parts that hold names (the instruction's own, the
/// operands, the called computations) and the parts that do not (shape,
/// opcode, typed attributes, constants' values), which are kept as
/// printed: one printer of attributes, not two that could disagree.
class CanonicalPrinter {
public:
  std::string print(const HloComputation &Top) {
    std::string Out;
    id(Top);
    while (!Pending.empty()) {
      const HloComputation *C = Pending.front();
      Pending.pop_front();
      Out += "c" + std::to_string(Ids[C]) + " {\n";
      for (const HloInstruction *I : C->instructions())
        Out += "  " + line(*I) + "\n";
      Out += "}\n";
    }
    return Out;
  }

private:
  size_t id(const HloComputation &C) {
    auto [It, New] = Ids.try_emplace(&C, Ids.size());
    if (New)
      Pending.push_back(&C);
    return It->second;
  }

  static std::string calledText(const HloInstruction &I,
                                const std::vector<std::string> &Names) {
    std::string Out;
    size_t Next = 0;
    for (const CalledGroup &G : I.calledGroups()) {
      Out += ", " + G.Key + "=";
      if (G.Braced)
        Out += '{';
      for (int64_t K = 0; K < G.Count; ++K)
        Out += (K ? ", " : "") + Names[Next++];
      if (G.Braced)
        Out += '}';
    }
    return Out;
  }

  static bool endsWith(const std::string &S, const std::string &Suffix) {
    return S.size() >= Suffix.size() &&
           S.compare(S.size() - Suffix.size(), Suffix.size(), Suffix) == 0;
  }

  std::string line(const HloInstruction &I) {
    std::string Full = I.toString();
    std::string Root = I.isRoot() ? "ROOT " : "";
    std::string Head = Root + hlo::printableName(I.name()) + " = ";
    std::string Opener =
        I.shape().str(/*WithLayout=*/true) + " " +
        (I.asyncSpelling().empty() ? std::string(opcodeName(I.opcode()))
                                   : I.asyncSpelling()) +
        "(";
    std::vector<std::string> Printed, Canonical;
    for (const HloComputation *C : I.calledComputations()) {
      Printed.push_back(hlo::printableName(C->name()));
      Canonical.push_back("c" + std::to_string(id(*C)));
    }
    std::string Kept, KeptCanonical;
    for (const HloAttribute &A : I.attributes()) {
      Kept += ", " + A.Key + "=" + A.Value;
      if (A.Key != "metadata")
        KeptCanonical += ", " + A.Key + "=" + A.Value;
    }
    std::string Suffix = calledText(I, Printed) + Kept;
    // Parameters and constants print their number or value between the
    // parentheses: no names there.
    bool Named =
        I.opcode() != HloOpcode::Parameter && I.opcode() != HloOpcode::Constant;
    std::string Args, CanonicalArgs;
    for (const HloInstruction *Op : I.operands()) {
      Args += (Args.empty() ? "" : ", ") + hlo::printableName(Op->name());
      CanonicalArgs +=
          (CanonicalArgs.empty() ? "%" : ", %") + std::to_string(Op->index());
    }
    std::string Prefix = Head + Opener + (Named ? Args + ")" : "");
    if (Full.compare(0, Prefix.size(), Prefix) != 0 ||
        !endsWith(Full, Suffix) || Full.size() < Prefix.size() + Suffix.size())
      // Not the printer's layout (cannot happen while the two agree): the
      // line as printed, still every attribute in it.
      return Full;
    std::string Middle =
        Full.substr(Prefix.size(), Full.size() - Prefix.size() - Suffix.size());
    return Root + "%" + std::to_string(I.index()) + " = " + Opener +
           (Named ? CanonicalArgs + ")" : "") + Middle +
           calledText(I, Canonical) + KeptCanonical;
  }

  std::map<const HloComputation *, size_t> Ids;
  std::deque<const HloComputation *> Pending;
};

uint64_t fnv1a64(std::string_view Text) {
  uint64_t H = 0xcbf29ce484222325ull;
  for (unsigned char C : Text) {
    H ^= C;
    H *= 0x100000001b3ull;
  }
  return H;
}

} // namespace

std::string canonicalComputationText(const HloComputation &C) {
  return CanonicalPrinter().print(C);
}

std::string fusionFingerprint(const HloComputation &C) {
  char Hex[17];
  std::snprintf(Hex, sizeof(Hex), "%016llx",
                (unsigned long long)fnv1a64(canonicalComputationText(C)));
  return Hex;
}

std::string tuneDeviceKey(std::string_view Name) {
  auto Lower = [](std::string_view S) {
    std::string L(S);
    for (char &C : L)
      C = char(std::tolower((unsigned char)C));
    return L;
  };
  std::string_view S = Name;
  if (Lower(S.substr(0, 7)) == "nvidia ")
    S.remove_prefix(7);
  std::string_view First = S.substr(0, S.find(' '));
  for (const std::string &Preset : deviceModelNames())
    if (Lower(First) == Lower(Preset))
      return Preset;
  return std::string(S);
}

std::map<std::string, Tuning> cachedFusionTunings(const TuneCache &Cache,
                                                  const HloModule &M,
                                                  std::string_view Device) {
  std::map<std::string, Tuning> Out;
  if (Cache.entries().empty())
    return Out;
  for (const HloInstruction *F : kernelFusions(M))
    if (const TuneCacheEntry *E =
            Cache.find(fusionFingerprint(*F->fusedComputation()), Device))
      Out[F->name()] = E->Knobs;
  return Out;
}

//===----------------------------------------------------------------------===//
// The cache and its file
//===----------------------------------------------------------------------===//

const TuneCacheEntry *TuneCache::find(std::string_view Fingerprint,
                                      std::string_view Device) const {
  std::string Key = tuneDeviceKey(Device);
  for (const TuneCacheEntry &E : Entries)
    if (E.Fingerprint == Fingerprint && E.Device == Key)
      return &E;
  return nullptr;
}

void TuneCache::insert(TuneCacheEntry E) {
  E.Device = tuneDeviceKey(E.Device);
  auto Less = [](const TuneCacheEntry &X, const TuneCacheEntry &Y) {
    return std::tie(X.Fingerprint, X.Device) <
           std::tie(Y.Fingerprint, Y.Device);
  };
  auto It = std::lower_bound(Entries.begin(), Entries.end(), E, Less);
  if (It != Entries.end() && !Less(E, *It))
    *It = std::move(E);
  else
    Entries.insert(It, std::move(E));
}

/// \p S as a JSON string: JsonReader reads \" and \\ only, so other
/// control characters are dropped.
static std::string jsonString(std::string_view S) {
  std::string Out = "\"";
  for (char C : S) {
    if (C == '"' || C == '\\')
      Out += '\\';
    if ((unsigned char)C >= 0x20)
      Out += C;
  }
  return Out + "\"";
}

std::string TuneCache::toJson() const {
  std::string Out = "{\n  \"version\": 1,\n  \"entries\": [";
  for (size_t N = 0; N < Entries.size(); ++N) {
    const TuneCacheEntry &E = Entries[N];
    Out += N ? ",\n    {" : "\n    {";
    Out += "\"fingerprint\": " + jsonString(E.Fingerprint);
    Out += ", \"device\": " + jsonString(E.Device);
    Out += ", \"knobs\": {";
    bool First = true;
    for (const TuningKnobInfo &K : tuningTable())
      if (auto V = E.Knobs.*(K.Field)) {
        Out += std::string(First ? "" : ", ") + jsonString(K.Name) + ": " +
               std::to_string(*V);
        First = false;
      }
    char Us[64];
    std::snprintf(Us, sizeof(Us), "%.3f", E.Microseconds);
    Out += "}, \"microseconds\": ";
    Out += Us;
    Out += ", \"date\": " + jsonString(E.Date);
    Out += ", \"fusion\": " + jsonString(E.Fusion) + "}";
  }
  Out += Entries.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return Out;
}

namespace {

/// Reads one entry of the file.
class EntryReader {
public:
  EntryReader(std::string_view Text, const std::string &File)
      : Text(Text), File(File) {}

  Diagnostic error(const JValue &At, std::string Message) const {
    return makeDiagnostic(Text, At.Offset, std::move(Message), File);
  }

  Expected<TuneCacheEntry> read(const JValue &V) const {
    if (V.K != JValue::Obj)
      return error(V, "a tune cache entry must be an object");
    TuneCacheEntry E;
    for (const char *Required : {"fingerprint", "device", "knobs"})
      if (!V.O.count(Required))
        return error(V, std::string("tune cache entry without \"") + Required +
                            "\"");
    for (const auto &[Key, Val] : V.O) {
      if (Key == "fingerprint") {
        if (Val.K != JValue::Str || Val.S.size() != 16 ||
            !std::all_of(Val.S.begin(), Val.S.end(), [](char C) {
              return std::isxdigit((unsigned char)C) &&
                     !std::isupper((unsigned char)C);
            }))
          return error(Val, "\"fingerprint\" must be 16 lowercase hex digits");
        E.Fingerprint = Val.S;
      } else if (Key == "device") {
        if (Val.K != JValue::Str || Val.S.empty())
          return error(Val, "\"device\" must be a non-empty string");
        E.Device = Val.S;
      } else if (Key == "knobs") {
        if (auto Err = knobs(Val, E.Knobs))
          return *Err;
      } else if (Key == "microseconds") {
        if ((Val.K != JValue::Int && Val.K != JValue::Real) ||
            (Val.K == JValue::Int ? Val.I < 0 : Val.R < 0))
          return error(Val, "\"microseconds\" must be a number >= 0");
        E.Microseconds = Val.K == JValue::Int ? double(Val.I) : Val.R;
      } else if (Key == "date" || Key == "fusion") {
        if (Val.K != JValue::Str)
          return error(Val, "\"" + Key + "\" must be a string");
        (Key == "date" ? E.Date : E.Fusion) = Val.S;
      } else {
        return error(V, "unknown key \"" + Key +
                            "\" in a tune cache entry (keys: fingerprint, "
                            "device, knobs, microseconds, date, fusion)");
      }
    }
    return E;
  }

private:
  std::optional<Diagnostic> knobs(const JValue &V, Tuning &T) const {
    if (V.K != JValue::Obj)
      return error(V, "\"knobs\" must be an object of knob names to numbers");
    for (const auto &[Name, Val] : V.O) {
      if (Val.K != JValue::Int)
        return error(Val, "knob " + Name + " needs a whole number");
      if (auto Err = setTuning(T, Name, Val.I))
        return error(Val, *Err);
    }
    return std::nullopt;
  }

  std::string_view Text;
  std::string File;
};

} // namespace

Expected<TuneCache> TuneCache::fromJson(std::string_view Text,
                                        const std::string &File) {
  Expected<JValue> Doc = JsonReader(Text, File, /*AllowReals=*/true).parse();
  if (!Doc)
    return Doc.error();
  EntryReader R(Text, File);
  if (Doc->K != JValue::Obj)
    return R.error(*Doc, "a tune cache must be a JSON object");
  for (const auto &[Key, Val] : Doc->O)
    if (Key != "version" && Key != "entries")
      return R.error(*Doc, "unknown key \"" + Key +
                               "\" in a tune cache (keys: version, entries)");
  auto Version = Doc->O.find("version");
  if (Version == Doc->O.end())
    return R.error(*Doc, "tune cache without \"version\"");
  if (Version->second.K != JValue::Int || Version->second.I != 1)
    return R.error(Version->second,
                   "unsupported tune cache version (this idxmap reads 1)");
  auto List = Doc->O.find("entries");
  if (List == Doc->O.end())
    return R.error(*Doc, "tune cache without \"entries\"");
  if (List->second.K != JValue::Arr)
    return R.error(List->second, "\"entries\" must be an array");
  TuneCache Cache;
  for (const JValue &V : List->second.A) {
    Expected<TuneCacheEntry> E = R.read(V);
    if (!E)
      return E.error();
    if (const TuneCacheEntry *Old = Cache.find(E->Fingerprint, E->Device))
      return R.error(V, "a second entry for fingerprint " + Old->Fingerprint +
                            " on device " + Old->Device);
    Cache.insert(std::move(*E));
  }
  return Cache;
}

} // namespace idxmap
