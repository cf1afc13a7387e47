//===- JsonReader.h - A small strict JSON reader ----------------*- C++ -*-===//
//
// Part of idxmap. Private to analysis: the reader of the kernel sidecar
// (KernelInfo.cpp) and of device model files (DeviceModel.cpp). Not a
// general JSON library: no escapes beyond \" and \\, no true/false/null,
// numbers as integers unless the caller allows reals.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_FUSION_JSONREADER_H
#define IDXMAP_ANALYSIS_FUSION_JSONREADER_H

#include "idxmap/Diagnostics.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace idxmap {

/// A parsed JSON value (only what the sidecar and the device models use).
struct JValue {
  enum Kind { Null, Int, Real, Str, Arr, Obj } K = Null;
  int64_t I = 0;
  /// A Real's value (only with JsonReader's AllowReals).
  double R = 0;
  std::string S;
  std::vector<JValue> A;
  std::map<std::string, JValue> O;
  size_t Offset = 0;
};

/// A small strict reader: objects, arrays, strings without escapes beyond
/// \" and \\, integers, and with \p AllowReals numbers with a fraction or
/// an exponent. Errors are located in \p Text (file \p File).
class JsonReader {
public:
  JsonReader(std::string_view Text, const std::string &File,
             bool AllowReals = false)
      : Text(Text), File(File), AllowReals(AllowReals) {}

  Expected<JValue> parse() {
    JValue V;
    if (!value(V))
      return Err;
    skip();
    if (Pos != Text.size())
      return fail("trailing characters after the JSON value"), Err;
    return V;
  }

private:
  void skip() {
    while (Pos < Text.size() && std::isspace((unsigned char)Text[Pos]))
      ++Pos;
  }
  bool fail(const std::string &M) {
    Err = makeDiagnostic(Text, std::min(Pos, Text.size()), M, File);
    return false;
  }
  bool expect(char C) {
    skip();
    if (Pos < Text.size() && Text[Pos] == C) {
      ++Pos;
      return true;
    }
    return fail(std::string("expected '") + C + "'");
  }
  bool value(JValue &V) {
    // The sidecar nests 4 deep; the bound keeps the recursion shallow.
    struct Nest {
      unsigned &D;
      explicit Nest(unsigned &D) : D(++D) {}
      ~Nest() { --D; }
    } N(Depth);
    skip();
    V.Offset = Pos;
    if (Pos >= Text.size())
      return fail("unexpected end of input");
    if (Depth > MaxDepth)
      return fail("JSON nested deeper than " + std::to_string(MaxDepth) +
                  " levels");
    char C = Text[Pos];
    if (C == '{') {
      ++Pos;
      V.K = JValue::Obj;
      skip();
      if (Pos < Text.size() && Text[Pos] == '}')
        return ++Pos, true;
      while (true) {
        JValue Key;
        skip();
        if (!value(Key))
          return false;
        if (Key.K != JValue::Str)
          return fail("expected a string key");
        if (!expect(':'))
          return false;
        JValue Val;
        if (!value(Val))
          return false;
        V.O[Key.S] = std::move(Val);
        skip();
        if (Pos < Text.size() && Text[Pos] == ',') {
          ++Pos;
          continue;
        }
        return expect('}');
      }
    }
    if (C == '[') {
      ++Pos;
      V.K = JValue::Arr;
      skip();
      if (Pos < Text.size() && Text[Pos] == ']')
        return ++Pos, true;
      while (true) {
        JValue E;
        if (!value(E))
          return false;
        V.A.push_back(std::move(E));
        skip();
        if (Pos < Text.size() && Text[Pos] == ',') {
          ++Pos;
          continue;
        }
        return expect(']');
      }
    }
    if (C == '"') {
      ++Pos;
      V.K = JValue::Str;
      while (Pos < Text.size() && Text[Pos] != '"') {
        if (Text[Pos] == '\\' && Pos + 1 < Text.size())
          ++Pos;
        V.S += Text[Pos++];
      }
      return expect('"');
    }
    if (C == '-' || std::isdigit((unsigned char)C)) {
      size_t Start = Pos++;
      while (Pos < Text.size() && std::isdigit((unsigned char)Text[Pos]))
        ++Pos;
      if (AllowReals && Pos < Text.size() &&
          (Text[Pos] == '.' || Text[Pos] == 'e' || Text[Pos] == 'E'))
        return real(V, Start);
      V.K = JValue::Int;
      try {
        V.I = std::stoll(std::string(Text.substr(Start, Pos - Start)));
      } catch (...) {
        Pos = Start;
        return fail("integer out of range");
      }
      return true;
    }
    return fail("expected a JSON value");
  }

  /// The number starting at \p Start, with a fraction or an exponent.
  bool real(JValue &V, size_t Start) {
    while (Pos < Text.size() &&
           (std::isdigit((unsigned char)Text[Pos]) || Text[Pos] == '.' ||
            Text[Pos] == 'e' || Text[Pos] == 'E' || Text[Pos] == '+' ||
            Text[Pos] == '-'))
      ++Pos;
    std::string Num(Text.substr(Start, Pos - Start));
    char *End = nullptr;
    V.K = JValue::Real;
    V.R = std::strtod(Num.c_str(), &End);
    if (End != Num.c_str() + Num.size() || !std::isfinite(V.R)) {
      Pos = Start;
      return fail("malformed number '" + Num + "'");
    }
    return true;
  }

  static constexpr unsigned MaxDepth = 32;
  std::string_view Text;
  std::string File;
  bool AllowReals;
  size_t Pos = 0;
  unsigned Depth = 0;
  Diagnostic Err;
};

} // namespace idxmap

#endif // IDXMAP_ANALYSIS_FUSION_JSONREADER_H
