//===- analysis/map/ParserImpl.h - The map parser's internals ---*- C++ -*-===//
//
// Part of idxmap. The recursive-descent parser shared by Parser.cpp (the XLA
// and MLIR map forms, expressions), ParseMlir.cpp (the file level: MLIR
// `#alias = affine_map<...>` definitions and uses, `#xla.indexing_map<"...">`)
// and ParseIsl.cpp (isl's `[params] -> { [ins] -> [outs] : constraints }`).
// Not installed; only the parser's sources include it.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_MAP_PARSERIMPL_H
#define IDXMAP_ANALYSIS_MAP_PARSERIMPL_H

#include "idxmap/Parse.h"

#include "map/Lexer.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace idxmap {
namespace mapparse {

/// The deepest nesting of parentheses and unary minus, and the deepest
/// chain of products, divisions and mods the parser builds (sums do not
/// count: consumers walk them iteratively, so a sum may have any number of
/// terms). Deeper input is rejected with a located diagnostic, so that the
/// consumers that recurse on the other operators (builders, printers,
/// simplify) never run out of stack.
constexpr unsigned MaxDepth = 1000;

/// Words that can never name a variable.
bool isReservedWord(std::string_view S);

/// True if \p Name is the default name `<Prefix><Index>`.
bool isDefaultName(std::string_view Name, std::string_view Prefix,
                   unsigned Index);

/// \p S in single quotes.
std::string quoted(std::string_view S);

/// An expression with the depth of the tree the parser built for it.
struct ParsedExpr {
  Expr E;
  unsigned Depth = 0;
};

/// Parses maps and expressions out of one buffer. A parser nested in
/// another (the quoted text of `#xla.indexing_map<"...">`) reports its errors
/// in the outer buffer: \p DiagBuffer is that buffer and \p OffsetMap maps
/// each byte of \p Text (and its end) to an offset in it.
class MapParser {
public:
  MapParser(Context *Ctx, std::string_view Text, const ParseOptions &Opts,
            std::string_view DiagBuffer = {},
            const std::vector<size_t> *OffsetMap = nullptr)
      : Ctx(Ctx), Lex(Text), Opts(Opts),
        DiagBuffer(OffsetMap ? DiagBuffer : Text), OffsetMap(OffsetMap) {
    Tok = Lex.next();
  }

  /// The whole buffer: alias definitions, then one map in any accepted form
  /// (ParseMlir.cpp).
  Expected<IndexingMap> parseTop();
  /// One map in XLA or MLIR form. \p Embedded: the map is the value of an
  /// alias definition, `affine_map<...>` only, and the parser stops after
  /// its `>`.
  Expected<IndexingMap> parseMap(bool Embedded = false);
  /// One map in isl syntax (ParseIsl.cpp).
  Expected<IndexingMap> parseIslMap();
  Expected<Expr> parseStandaloneExpr(const IndexingMap &Scope);

private:
  //===--- Tokens and errors ---------------------------------------------===//
  void consume() { Tok = Lex.next(); }
  bool failAt(size_t Offset, std::string Message);
  /// Reports \p Message at the current token (or, if the current token is a
  /// stray byte, says so instead).
  bool fail(std::string Message);
  bool expect(MapTokenKind K, const char *Message) {
    if (!Tok.is(K))
      return fail(Message);
    consume();
    return true;
  }
  bool expectKeyword(std::string_view Word) {
    if (!Tok.isIdentifier(Word))
      return fail("expected " + quoted(Word));
    consume();
    return true;
  }
  Diagnostic takeDiag() { return std::move(*Diag); }
  /// Forgets the variables of the previous map (a buffer may hold several:
  /// alias definitions, then the map).
  void resetVariables() {
    Names.clear();
    NameIndex.clear();
    NumDims = NumRange = NumRuntime = 0;
  }

  //===--- MLIR attributes (ParseMlir.cpp) -------------------------------===//
  /// The map a `#name` token stands for: a defined alias, or the
  /// `#xla.indexing_map<"...">` attribute that follows. Consumes it.
  std::optional<IndexingMap> parseHashMap();
  std::optional<IndexingMap> parseXlaAttribute();

  //===--- isl (ParseIsl.cpp) --------------------------------------------===//
  /// `[a, b, ...]` into \p Out (names checked, not declared).
  bool parseIslNames(std::vector<MapToken> &Out);
  /// `floor(e/c)` or `ceil(e/c)`, at the keyword.
  bool parseIslRounding(ParsedExpr &Out, unsigned Nest);

  //===--- Pieces of the grammar -----------------------------------------===//
  bool parseNameList(MapTokenKind Close, const char *CloseMessage,
                     unsigned &Count);
  bool parseSignedInt(int64_t &Out);
  bool parseInterval(Interval &Out);
  bool parseBound(unsigned Index, Interval &Out);
  bool parseConstraint(Expr &E, Interval &I);

  bool parseSum(ParsedExpr &Out, unsigned Nest);
  bool parseProduct(ParsedExpr &Out, unsigned Nest);
  bool parseUnary(ParsedExpr &Out, unsigned Nest);
  bool parsePrimary(ParsedExpr &Out, unsigned Nest);
  bool checkDepth(const ParsedExpr &E, size_t Offset) {
    if (E.Depth > MaxDepth)
      return failAt(Offset, "expression is nested too deeply");
    return true;
  }

  Variable makeVariable(unsigned FlatIndex, const Interval &Bound) const;

  /// Declares the next variable's name.
  void addName(std::string_view Name) {
    Names.push_back(Name);
    if (!NameIndex.empty())
      NameIndex.emplace(Name, unsigned(Names.size() - 1));
    else if (Names.size() > LinearLookupLimit)
      for (unsigned I = 0; I < Names.size(); ++I)
        NameIndex.emplace(Names[I], I);
  }
  /// The flat index of a declared name (the first one), or -1.
  int64_t lookupName(std::string_view Name) const {
    if (!NameIndex.empty()) {
      auto It = NameIndex.find(Name);
      return It == NameIndex.end() ? -1 : int64_t(It->second);
    }
    for (size_t I = 0; I < Names.size(); ++I)
      if (Names[I] == Name)
        return int64_t(I);
    return -1;
  }

  Context *Ctx;
  MapLexer Lex;
  MapToken Tok;
  const ParseOptions &Opts;
  std::optional<Diagnostic> Diag;
  /// Where diagnostics point: this buffer, at OffsetMap[offset] if set.
  std::string_view DiagBuffer;
  const std::vector<size_t> *OffsetMap;

  /// The aliases defined so far: name (with `#`) -> map and the offset of
  /// the definition (for the redefinition error).
  struct Alias {
    IndexingMap Map;
    size_t Offset;
  };
  std::map<std::string, Alias, std::less<>> Aliases;

  /// Declared names over [dims, range vars, runtime vars].
  std::vector<std::string_view> Names;
  /// Hash index of Names, built once there are many (a linear scan is
  /// faster for the usual handful).
  static constexpr size_t LinearLookupLimit = 32;
  std::unordered_map<std::string_view, unsigned> NameIndex;
  /// Owns the names of a parseExpr scope.
  std::vector<std::string> ScopeNames;
  unsigned NumDims = 0, NumRange = 0, NumRuntime = 0;
  /// Parsing isl syntax: `%`, `floor(e/c)`, `ceil(e/c)` and `2d0` too.
  bool Isl = false;
};

} // namespace mapparse
} // namespace idxmap

#endif // IDXMAP_ANALYSIS_MAP_PARSERIMPL_H
