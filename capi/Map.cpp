//===- capi/Map.cpp - C API: indexing maps --------------------------------===//
//
// Part of idxmap. The answers are those of the `idxmap` commands of the same
// names (parse, simplify, compose, is-empty, bounds).
//
//===----------------------------------------------------------------------===//
#include "Handles.h"

#include "idxmap/Compose.h"
#include "idxmap/Domain.h"
#include "idxmap/Exact.h"
#include "idxmap/Parse.h"
#include "idxmap/Print.h"
#include "idxmap/Simplify.h"

#include <algorithm>

using namespace idxmap;
using capi::guarded;
using capi::setError;

idxmap_map *idxmap_map_parse(idxmap_context *Ctx, const char *Text,
                             char **Error) {
  if (!Ctx || !Text) {
    setError(Error, "idxmap_map_parse: NULL argument");
    return nullptr;
  }
  return guarded<idxmap_map *>(Error, nullptr, [&]() -> idxmap_map * {
    auto M = parseIndexingMap(*Ctx->Ctx, Text);
    if (!M) {
      setError(Error, M.error().str());
      return nullptr;
    }
    return new idxmap_map{Ctx->Ctx, std::move(*M)};
  });
}

void idxmap_map_destroy(idxmap_map *Map) { delete Map; }

idxmap_map *idxmap_map_clone(const idxmap_map *Map) {
  if (!Map)
    return nullptr;
  return guarded<idxmap_map *>(nullptr, nullptr,
                               [&] { return new idxmap_map(*Map); });
}

char *idxmap_map_print(const idxmap_map *Map, idxmap_map_format Format) {
  if (!Map)
    return nullptr;
  return guarded<char *>(nullptr, nullptr, [&] {
    return capi::copyString(Format == IDXMAP_FORMAT_MLIR
                                ? printMapMlir(Map->Map)
                                : printMap(Map->Map));
  });
}

unsigned idxmap_map_num_dims(const idxmap_map *Map) {
  return Map ? Map->Map.numDims() : 0;
}

unsigned idxmap_map_num_symbols(const idxmap_map *Map) {
  return Map ? Map->Map.numSymbols() : 0;
}

unsigned idxmap_map_num_results(const idxmap_map *Map) {
  return Map ? Map->Map.numResults() : 0;
}

int idxmap_map_is_undefined(const idxmap_map *Map) {
  return !Map || Map->Map.isUndefined();
}

int idxmap_map_simplify(idxmap_map *Map, int RemoveUnused) {
  if (!Map)
    return 0;
  return guarded<int>(nullptr, 0, [&] {
    bool Changed = simplify(Map->Map);
    if (RemoveUnused) {
      std::vector<bool> Removed = Map->Map.removeUnusedVars();
      Changed |=
          std::find(Removed.begin(), Removed.end(), true) != Removed.end();
    }
    return int(Changed);
  });
}

idxmap_map *idxmap_map_compose(const idxmap_map *First,
                               const idxmap_map *Second, char **Error) {
  if (!First || !Second) {
    setError(Error, "idxmap_map_compose: NULL argument");
    return nullptr;
  }
  if (First->Ctx != Second->Ctx) {
    setError(Error, "idxmap_map_compose: the maps belong to different "
                    "contexts");
    return nullptr;
  }
  const IndexingMap &A = First->Map, &B = Second->Map;
  if (!A.isUndefined() && !B.isUndefined() && A.numResults() != B.numDims()) {
    setError(Error, "idxmap_map_compose: the first map has " +
                        std::to_string(A.numResults()) +
                        " results, the second " + std::to_string(B.numDims()) +
                        " dims");
    return nullptr;
  }
  return guarded<idxmap_map *>(Error, nullptr, [&] {
    return new idxmap_map{First->Ctx, compose(A, B)};
  });
}

idxmap_emptiness idxmap_map_is_empty(const idxmap_map *Map, int Exact) {
  if (!Map)
    return IDXMAP_EMPTINESS_UNKNOWN;
  return guarded<idxmap_emptiness>(nullptr, IDXMAP_EMPTINESS_UNKNOWN, [&] {
    const IndexingMap &M = Map->Map;
    Emptiness E = Emptiness::Unknown;
    if (M.isUndefined())
      E = Emptiness::Unknown;
    else if (M.isKnownEmpty())
      E = Emptiness::Empty;
    else
      E = Exact ? isEmptyExact(M) : checkEmptyFast(M);
    switch (E) {
    case Emptiness::Empty:
      return IDXMAP_EMPTY;
    case Emptiness::NonEmpty:
      return IDXMAP_NON_EMPTY;
    case Emptiness::Unknown:
      break;
    }
    return IDXMAP_EMPTINESS_UNKNOWN;
  });
}

/// Bounds of \p E over \p M as `idxmap bounds` computes them.
static idxmap_status boundsOver(Expr E, const IndexingMap &M, int Exact,
                                idxmap_interval *Out) {
  Interval R = Interval(0, -1);
  if (!M.isKnownEmpty()) {
    if (Exact) {
      std::optional<Interval> B = boundsExact(E, M);
      if (!B)
        return IDXMAP_UNKNOWN;
      R = *B;
    } else {
      R = boundsOf(E, M);
    }
  }
  if (R.isEmpty())
    R = Interval(0, -1);
  Out->lo = R.Lo;
  Out->hi = R.Hi;
  return IDXMAP_OK;
}

idxmap_status idxmap_map_expr_bounds(const idxmap_map *Map, const char *Text,
                                     int Exact, idxmap_interval *Out,
                                     char **Error) {
  if (!Map || !Text || !Out) {
    setError(Error, "idxmap_map_expr_bounds: NULL argument");
    return IDXMAP_ERROR;
  }
  if (Map->Map.isUndefined()) {
    setError(Error, "an UNDEFINED map has no domain to bound over");
    return IDXMAP_ERROR;
  }
  return guarded<idxmap_status>(Error, IDXMAP_ERROR, [&] {
    ParseOptions PO;
    PO.FileName = "<expr>";
    auto E = parseExpr(Text, Map->Map, PO);
    if (!E) {
      setError(Error, E.error().str());
      return IDXMAP_ERROR;
    }
    return boundsOver(*E, Map->Map, Exact, Out);
  });
}

idxmap_status idxmap_map_result_bounds(const idxmap_map *Map, unsigned Index,
                                       int Exact, idxmap_interval *Out,
                                       char **Error) {
  if (!Map || !Out) {
    setError(Error, "idxmap_map_result_bounds: NULL argument");
    return IDXMAP_ERROR;
  }
  if (Map->Map.isUndefined()) {
    setError(Error, "an UNDEFINED map has no domain to bound over");
    return IDXMAP_ERROR;
  }
  if (Index >= Map->Map.numResults()) {
    setError(Error, "idxmap_map_result_bounds: result " +
                        std::to_string(Index) + " of a map with " +
                        std::to_string(Map->Map.numResults()) + " results");
    return IDXMAP_ERROR;
  }
  return guarded<idxmap_status>(Error, IDXMAP_ERROR, [&] {
    return boundsOver(Map->Map.results()[Index], Map->Map, Exact, Out);
  });
}
