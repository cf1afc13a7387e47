//===- analysis/map/ParseMlir.cpp - The file level of map input -----------===//
//
// Part of idxmap. What surrounds a map in MLIR files: alias definitions
// `#map = affine_map<...>` (any number, before the map), a use `#map` in
// place of the map, and XLA's attribute `#xla.indexing_map<"...">` whose
// quoted text is a map in XLA syntax. Also the dispatch to isl syntax: a
// buffer that starts with `[` or `{` holds an isl map.
//
//===----------------------------------------------------------------------===//
#include "map/ParserImpl.h"

namespace idxmap {
namespace mapparse {

namespace {
constexpr std::string_view XlaAttribute = "#xla.indexing_map";
} // namespace

Expected<IndexingMap> MapParser::parseTop() {
  // isl text starts with its parameters or its braces; only the automatic
  // format guesses it.
  if (Opts.Format == InputFormat::Isl ||
      (Opts.Format == InputFormat::Auto &&
       (Tok.is(MapTokenKind::LSquare) || Tok.is(MapTokenKind::LBrace))))
    return parseIslMap();

  bool Defined = false;
  while (Tok.is(MapTokenKind::HashIdent)) {
    MapToken Name = Tok;
    bool IsAttribute = Name.Text == XlaAttribute;
    if (Opts.Format == InputFormat::Xla && !IsAttribute) {
      failAt(Name.Offset, "MLIR alias " + quoted(Name.Text) +
                              " is not accepted with the XLA input format");
      return takeDiag();
    }
    if (IsAttribute) {
      // The map itself, not a definition.
      std::optional<IndexingMap> M = parseHashMap();
      if (!M)
        return takeDiag();
      if (!Tok.is(MapTokenKind::Eof)) {
        fail("unexpected text after the map");
        return takeDiag();
      }
      return std::move(*M);
    }
    consume();
    if (!Tok.is(MapTokenKind::Equal)) {
      // A use: the alias is the map.
      auto It = Aliases.find(Name.Text);
      if (It == Aliases.end()) {
        failAt(Name.Offset, "undefined alias " + quoted(Name.Text));
        return takeDiag();
      }
      if (!Tok.is(MapTokenKind::Eof)) {
        fail("unexpected text after the map");
        return takeDiag();
      }
      return It->second.Map;
    }
    // A definition.
    if (Name.Text.size() == 1) {
      failAt(Name.Offset, "expected an alias name after '#'");
      return takeDiag();
    }
    if (Name.Text.find('.') != std::string_view::npos) {
      failAt(Name.Offset, "alias name " + quoted(Name.Text) +
                              " cannot contain a '.' (reserved for "
                              "dialect attributes)");
      return takeDiag();
    }
    if (auto It = Aliases.find(Name.Text); It != Aliases.end()) {
      unsigned Line =
          makeDiagnostic(DiagBuffer, It->second.Offset, "", "", Opts.FirstLine)
              .Loc.Line;
      failAt(Name.Offset, "redefinition of alias " + quoted(Name.Text) +
                              " (first defined at line " +
                              std::to_string(Line) + ")");
      return takeDiag();
    }
    consume(); // '='
    std::optional<IndexingMap> Value;
    if (Tok.is(MapTokenKind::HashIdent)) {
      Value = parseHashMap();
    } else {
      Expected<IndexingMap> M = parseMap(/*Embedded=*/true);
      if (!M)
        return M.error();
      Value = std::move(*M);
    }
    if (!Value)
      return takeDiag();
    Aliases.emplace(std::string(Name.Text),
                    Alias{std::move(*Value), Name.Offset});
    Defined = true;
  }
  if (Defined && Tok.is(MapTokenKind::Eof)) {
    fail("expected an indexing map after the alias definitions");
    return takeDiag();
  }
  return parseMap();
}

std::optional<IndexingMap> MapParser::parseHashMap() {
  MapToken Name = Tok;
  if (Name.Text == XlaAttribute)
    return parseXlaAttribute();
  consume();
  auto It = Aliases.find(Name.Text);
  if (It == Aliases.end()) {
    failAt(Name.Offset, "undefined alias " + quoted(Name.Text));
    return std::nullopt;
  }
  return It->second.Map;
}

std::optional<IndexingMap> MapParser::parseXlaAttribute() {
  consume(); // #xla.indexing_map
  if (!expect(MapTokenKind::Less, "expected '<'"))
    return std::nullopt;
  if (!Tok.is(MapTokenKind::String)) {
    fail("expected the indexing map as a quoted string");
    return std::nullopt;
  }
  std::string Text;
  std::vector<size_t> Offsets;
  if (auto Bad = decodeStringToken(Tok.Text, Tok.Offset, Text, Offsets)) {
    failAt(*Bad, "invalid escape sequence in string");
    return std::nullopt;
  }
  // Offsets point into this parser's buffer; map them on to the outer one
  // if this parser is itself nested.
  if (OffsetMap)
    for (size_t &O : Offsets)
      O = O < OffsetMap->size() ? (*OffsetMap)[O] : OffsetMap->back();
  ParseOptions Inner = Opts;
  Inner.Format = InputFormat::Xla;
  MapParser P(Ctx, Text, Inner, DiagBuffer, &Offsets);
  Expected<IndexingMap> M = P.parseMap();
  if (!M) {
    Diag = M.error();
    return std::nullopt;
  }
  consume(); // The string.
  if (!expect(MapTokenKind::Greater, "expected '>'"))
    return std::nullopt;
  return std::move(*M);
}

} // namespace mapparse
} // namespace idxmap
