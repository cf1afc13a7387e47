//===- fuzz_sidecar.cpp - libFuzzer target: the sidecar reader ------------===//
//
// Part of idxmap. Any text: sidecarFromJson accepts it or returns a located
// diagnostic (never a crash, a hang or undefined behaviour; the reader
// walks the text again for value offsets). Oracle for accepted sidecars:
// writing and reading again gives the same JSON.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "idxmap/Sidecar.h"

using namespace idxmap;
using namespace idxmap::fuzzing;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Text = asText(Data, Size);
  auto S = sidecarFromJson(Text, "fuzz.json");
  if (!S) {
    if (S.error().Message.empty() || S.error().Loc.Line == 0)
      fuzzFailure("an error without a message or a line", Text);
    return 0;
  }
  std::string Written = sidecarToJson(*S);
  auto Again = sidecarFromJson(Written, "again.json");
  if (!Again)
    fuzzFailure("the written sidecar does not read: " + Written + "\n" +
                    Again.error().str(),
                Text);
  if (sidecarToJson(*Again) != Written)
    fuzzFailure("write -> read -> write differs: " + Written, Text);
  return 0;
}
