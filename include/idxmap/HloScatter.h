//===- idxmap/HloScatter.h - Scatter's window geometry ----------*- C++ -*-===//
//
// Part of idxmap. What scatter's dimension numbers (ScatterDimensions, in
// Hlo.h) say about each dim: which updates dims span the window, which
// operand dims the window spans, and the window's size. The planner, the
// emitter and the analyses ask these questions; the answers live here once.
//
// A worked example, a scatter of 2x6 patches into rows and columns of a
// 10x4x6 operand:
//
// \code
//   s = f32[10,4,6] scatter(f32[10,4,6] p, s32[3,2] i, f32[3,2,6] u),
//       update_window_dims={1,2}, inserted_window_dims={0},
//       scatter_dims_to_operand_dims={0,1}, index_vector_dim=1
// \endcode
//
// Updates dim 0 is a scatter dim (an update's number: isUpdateWindowDim is
// false), dims 1 and 2 are window dims. Operand dim 0 is inserted (the
// window is one element thick along it: isOperandWindowDim is false,
// scatterWindowSize 1); operand dims 1 and 2 are spanned by updates dims 1
// and 2 (sizes 2 and 6). Operand dims 0 and 1 take the window's start from
// the indices (isScatteredOperandDim), dim 2 starts at 0. One update's
// window has scatterWindowElements 2 * 6 = 12 elements.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_HLOSCATTER_H
#define IDXMAP_HLOSCATTER_H

#include "idxmap/Hlo.h"

#include <cstdint>

namespace idxmap {

/// True if updates dim \p UpdateDim is a window dim (in
/// `update_window_dims`), false if it is a scatter dim (it numbers the
/// updates).
bool isUpdateWindowDim(const ScatterDimensions &SD, int64_t UpdateDim);

/// True if the window spans operand dim \p OperandDim with an updates
/// window dim: neither an inserted nor an input batching dim. The k-th such
/// operand dim is spanned by `update_window_dims[k]`.
bool isOperandWindowDim(const ScatterDimensions &SD, int64_t OperandDim);

/// True if the indices give the window's start along operand dim
/// \p OperandDim (it is in `scatter_dims_to_operand_dims`).
bool isScatteredOperandDim(const ScatterDimensions &SD, int64_t OperandDim);

/// The window's extent along operand dim \p OperandDim for updates of shape
/// \p Updates: the size of the updates window dim spanning it, 1 for an
/// inserted or input batching dim.
int64_t scatterWindowSize(const ScatterDimensions &SD, const Shape &Updates,
                          int64_t OperandDim);

/// The elements of one update's window for updates of shape \p Updates: the
/// product of the updates window dims' sizes (1 for a scalar window).
int64_t scatterWindowElements(const ScatterDimensions &SD,
                              const Shape &Updates);

/// What scatter \p S's combiner computes, for N scattered operands:
/// - HloOpcode::Parameter when it returns the updates (the last write wins,
///   which XLA leaves unspecified between duplicate indices): `ROOT u =
///   parameter(1)`, or for N > 1 a tuple of parameters N..2N-1 in order;
/// - for N = 1, the opcode of its root when that root applies one binary op
///   to its two parameters, in either order;
/// - HloOpcode::Call for anything else.
///
/// Example: `add { a = f32[] parameter(0) b = f32[] parameter(1) ROOT s =
/// f32[] add(b, a) }` gives Add; `ROOT b = f32[] parameter(1)` gives
/// Parameter; `ROOT m = f32[] multiply(a, a)` gives Call.
HloOpcode scatterCombinerOp(const HloInstruction &S);

/// Fills \p Indices, the indices operand of scatter \p S (row-major), with
/// index vectors whose windows never overlap, as `unique_indices=true`
/// promises (random indices would break the promise and leave the result
/// undefined). Along the first scattered operand dim the starts are
/// distinct multiples of the window's size there, in an order shuffled by
/// \p Seed; index vectors beyond the number of such slots start past the
/// operand's end (XLA skips their windows); the other components are random
/// starts that fit.
///
/// Example: scattering rows f32[1,4] into f32[8,4] with 10 index vectors
/// gives the rows 0..7 in some order, then 8 and 8 (both skipped).
void fillUniqueScatterIndices(const HloInstruction &S, Literal &Indices,
                              uint64_t Seed);

} // namespace idxmap

#endif // IDXMAP_HLOSCATTER_H
