//===- ExprStorage.h - Private storage of uniqued expressions ---*- C++ -*-===//
//
// Part of idxmap. Not a public header.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_MAP_EXPRSTORAGE_H
#define IDXMAP_ANALYSIS_MAP_EXPRSTORAGE_H

#include "idxmap/Context.h"
#include "idxmap/Expr.h"

#include <cstdint>

namespace idxmap {

/// Immutable node. Leaves use Value (constant value or variable position);
/// binary nodes use L and R.
struct ExprStorage {
  ExprKind Kind;
  /// Variables mentioned: bit i set if dim i (i < 32) is used / symbol i.
  /// Bit 63 means "some position >= 63 is used" (fall back to a walk).
  uint64_t DimMask = 0;
  uint64_t SymMask = 0;
  int64_t Value = 0;
  const ExprStorage *L = nullptr;
  const ExprStorage *R = nullptr;
  Context *Ctx = nullptr;
  uint64_t Id = 0;
};

} // namespace idxmap

#endif
