//===- LowerKernels.h - Op kernels for lowering tests -----------*- C++ -*-===//
//
// Part of idxmap. Shared by the CPU test (LowerTest.cpp: ptxas, PTX
// patterns, constant-folded semantics) and the GPU test (LowerGpu.cpp): every
// op/element-type combination the interpreter supports, as a one-op HLO
// module over `T[N]` arrays, and a kernel `out[i] = op(in0[i], in1[i], ...)`
// built with ElementwiseCodegen.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_UNIT_CODEGEN_LOWER_LOWERKERNELS_H
#define IDXMAP_TEST_UNIT_CODEGEN_LOWER_LOWERKERNELS_H

#include "ElementwiseCodegen.h"

#include "idxmap/Hlo.h"

#include "llvm/IR/Module.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace idxmap {
namespace codegen {
namespace lowertest {

/// Threads per block of every test kernel.
inline constexpr unsigned BlockSize = 256;

/// One op/type combination.
struct OpCase {
  /// `add.f32`, `convert.s8.bf16` (from, to), `compare.lt.total.f32`, ...
  std::string Name;
  std::unique_ptr<HloModule> Module;
  /// The op (the entry's root), over `T[N]` arrays.
  const HloInstruction *Root = nullptr;
  std::vector<PrimitiveType> InTypes;
  PrimitiveType OutType = PrimitiveType::Invalid;
};

/// Every combination emitElementwise supports: unary and binary ops on every
/// element type they are defined on, compare (every direction; TOTALORDER
/// too for floats), convert (every ordered pair of distinct types), select,
/// clamp and iota on every type. Arrays have \p N elements.
std::vector<OpCase> allOpCases(int64_t N);

/// The case's kernel name (a PTX identifier).
std::string kernelName(const OpCase &C);

/// Adds kernel `kernelName(C)(in0, ..., out, i64 n)` computing
/// `out[i] = op(in0[i], ...)` for i < n (iota: out[i] = iota(i)); one thread
/// per element, BlockSize threads per block.
llvm::Function *addOpKernel(llvm::Module &M, const OpCase &C,
                            const MathOptions &Math);

/// True when the GPU result must match the interpreter bit for bit (up to
/// NaN payloads): no libdevice and no approximate instruction involved.
bool isExact(const HloInstruction &I, const MathOptions &Math);

/// Test values for operand \p Operand of case \p C: first the special
/// values of the type (zeros, ones, extremes, infinities, NaNs, subnormals,
/// shift amounts around the bit width), as a grid with the other operand
/// for binary ops, then seeded random values in a range suited to the op.
/// Returns one Literal per input, each of \p Count elements (Count >= the
/// grid size for the grid to be complete).
std::vector<Literal> testInputs(const OpCase &C, int64_t Count, uint64_t Seed);

/// The number of grid elements testInputs puts first (specials x specials
/// for binary ops, specials for the others).
int64_t gridSize(const OpCase &C);

/// True if \p A and \p B (same type) hold the same value: equal bits, or
/// both NaN.
bool sameElement(const Literal &A, const Literal &B, int64_t K);

} // namespace lowertest
} // namespace codegen
} // namespace idxmap

#endif // IDXMAP_TEST_UNIT_CODEGEN_LOWER_LOWERKERNELS_H
