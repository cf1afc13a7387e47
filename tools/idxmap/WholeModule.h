//===- WholeModule.h - Fusions left out of a whole module -------*- C++ -*-===//
//
// Part of idxmap. `analyze` and `emit` take a whole optimized module: they
// handle the fusions they support and name each one they leave, in one line.
// A fusion left out is a warning while another one was handled, and its
// error when none was (or when it was asked for with --fusion).
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TOOLS_WHOLEMODULE_H
#define IDXMAP_TOOLS_WHOLEMODULE_H

#include "idxmap/Diagnostics.h"
#include "idxmap/Emit.h"

#include <optional>
#include <string>

namespace idxmap::cli {

/// The reason in \p Message, an error about fusion \p Fusion, without the
/// leading `fusion 'NAME': ` or `fusion 'NAME' ` that names it.
/// Example: ("f", "fusion 'f': no emitter computes dot 'd'") gives
/// "no emitter computes dot 'd'"; ("f", "fusion 'f' has 18 instructions")
/// gives "has 18 instructions".
std::string skipReason(const std::string &Fusion, const std::string &Message);

/// `skipped fusion 'NAME': REASON` (skipReason of \p Why's message).
std::string skippedFusionLine(const std::string &Fusion,
                              const std::string &Message);

/// Prints `FILE:LINE:COL: warning: skipped fusion 'NAME': REASON` to
/// stderr, one line (no source excerpt), located at \p Why.
void printSkippedFusion(const std::string &Fusion, const Diagnostic &Why);

/// emitModule(\p M, \p O) for `emit` and `run` (O.SkipUnsupported set):
/// the result, each fusion left out named by printSkippedFusion; nothing
/// when the module is rejected, its error printed (at \p File when it is
/// not about a place in the input: the back end, libdevice), or when no
/// fusion could be emitted, each one's reason printed as an error.
/// Example: `auto R = emitWholeModule(*M, O, "m.hlo"); if (!R) return
/// ExitRejected;`.
std::optional<EmitResult> emitWholeModule(const HloModule &M,
                                          const EmitOptions &O,
                                          const std::string &File);

} // namespace idxmap::cli

#endif // IDXMAP_TOOLS_WHOLEMODULE_H
