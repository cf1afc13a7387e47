//===- libfuzzer/FuzzSupport.h - Shared helpers of the libFuzzer targets -===//
//
// Part of idxmap. The libFuzzer targets (one per file here) take text,
// reject what the library rejects, and check what it accepts against an
// oracle. A broken oracle calls fuzzFailure(), which prints the input and
// aborts, so that libFuzzer saves the input as a crash-* file.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TEST_LIBFUZZER_FUZZSUPPORT_H
#define IDXMAP_TEST_LIBFUZZER_FUZZSUPPORT_H

#include "idxmap/Hlo.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace idxmap::fuzzing {

/// Prints "oracle failure: WHY" and the input, then aborts.
[[noreturn]] inline void fuzzFailure(const std::string &Why,
                                     std::string_view Input) {
  std::fprintf(stderr, "oracle failure: %s\ninput:\n%.*s\n", Why.c_str(),
               int(Input.size()), Input.data());
  std::fflush(stderr);
  std::abort();
}

/// The input as text (libFuzzer gives bytes).
inline std::string_view asText(const uint8_t *Data, size_t Size) {
  return std::string_view(reinterpret_cast<const char *>(Data), Size);
}

/// Splits \p Text at the first line `// -----` (as --split-input-file):
/// the two maps of the compose target. False when there is no separator.
inline bool splitTwo(std::string_view Text, std::string_view &First,
                     std::string_view &Second) {
  const std::string_view Sep = "\n// -----\n";
  size_t At = Text.find(Sep);
  if (At == std::string_view::npos)
    return false;
  First = Text.substr(0, At);
  Second = Text.substr(At + Sep.size());
  return true;
}

/// Elements of array shape \p S, or -1 past \p Max (no overflow: the
/// library's Shape::numElements assumes a validated shape).
inline int64_t boundedElements(const Shape &S, int64_t Max) {
  int64_t N = 1;
  for (int64_t D : S.Dims) {
    if (D < 0 || (D > 0 && N > Max / D))
      return -1;
    N *= D;
  }
  return N <= Max ? N : -1;
}

/// True if every shape in \p M (tuple elements included) has at most
/// \p MaxElements elements and the module has at most \p MaxInstructions
/// instructions: the oracles interpret or enumerate, so inputs stay small.
inline bool isSmallModule(const HloModule &M, int64_t MaxElements,
                          int64_t MaxInstructions) {
  int64_t Count = 0;
  for (const HloComputation *C : M.computations()) {
    Count += C->instructionCount();
    if (Count > MaxInstructions)
      return false;
    for (const HloInstruction *I : C->instructions()) {
      std::vector<const Shape *> Work = {&I->shape()};
      while (!Work.empty()) {
        const Shape *S = Work.back();
        Work.pop_back();
        if (S->isTuple()) {
          if (Work.size() + S->TupleShapes.size() > 64)
            return false;
          for (const Shape &E : S->TupleShapes)
            Work.push_back(&E);
        } else if (boundedElements(*S, MaxElements) < 0) {
          return false;
        }
      }
    }
  }
  return true;
}

} // namespace idxmap::fuzzing

#endif // IDXMAP_TEST_LIBFUZZER_FUZZSUPPORT_H
