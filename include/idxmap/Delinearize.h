//===- idxmap/Delinearize.h - Linear offsets to indices ---------*- C++ -*-===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Linear offsets back to multi-dimensional indices, as map expressions:
/// the one delinearization shared by the op indexing (reshapes), the
/// thread mappings of the analysis and the emitters' index maps.
///
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_DELINEARIZE_H
#define IDXMAP_DELINEARIZE_H

#include "idxmap/Context.h"
#include "idxmap/Expr.h"
#include "idxmap/Hlo.h"

#include <vector>

namespace idxmap {

/// The row-major index of \p Dims at linear offset \p Lin: index D is
/// `(Lin floordiv stride(D)) mod Dims[D]`, stride(D) the product of the dims
/// after D; the first non-unit index is not reduced (the domain of \p Lin
/// bounds it), and a dim of size 1 (or 0) is the constant 0.
///
/// Example: Lin = d0 over {4, 1, 8}: (d0 floordiv 8, 0, d0 mod 8).
std::vector<Expr> delinearize(Context &Ctx, Expr Lin,
                              const std::vector<int64_t> &Dims);

/// The logical index of \p S at physical linear offset \p Lin, i.e. the
/// inverse of the offset in \p S's layout (minor-to-major), with
/// delinearize()'s rules over the physical order.
///
/// Example: f32[4,8]{0,1} (dim 0 minor): (Lin mod 4, Lin floordiv 4).
std::vector<Expr> delinearizePhysical(Context &Ctx, Expr Lin, const Shape &S);

} // namespace idxmap

#endif // IDXMAP_DELINEARIZE_H
