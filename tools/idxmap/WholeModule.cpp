//===- WholeModule.cpp - Fusions left out of a whole module ---------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "WholeModule.h"

#include "Commands.h"

#include <iostream>

namespace idxmap::cli {

std::string skipReason(const std::string &Fusion, const std::string &Message) {
  std::string Prefix = "fusion '" + Fusion + "'";
  if (Message.compare(0, Prefix.size(), Prefix) != 0)
    return Message;
  std::string Rest = Message.substr(Prefix.size());
  if (Rest.compare(0, 2, ": ") == 0)
    return Rest.substr(2);
  if (Rest.compare(0, 1, " ") == 0)
    return Rest.substr(1);
  return Message;
}

std::string skippedFusionLine(const std::string &Fusion,
                              const std::string &Message) {
  return "skipped fusion '" + Fusion + "': " + skipReason(Fusion, Message);
}

void printSkippedFusion(const std::string &Fusion, const Diagnostic &Why) {
  if (captureDiagnostic("warning", Why.Loc.File, Why.Loc.Line,
                        skippedFusionLine(Fusion, Why.Message)) ||
      verbosity() == Verbosity::Quiet)
    return;
  std::string Where = Why.Loc.File;
  if (Why.Loc.Line > 0)
    Where +=
        ":" + std::to_string(Why.Loc.Line) + ":" + std::to_string(Why.Loc.Col);
  std::cerr << Where << ": warning: " << skippedFusionLine(Fusion, Why.Message)
            << "\n";
}

std::optional<EmitResult> emitWholeModule(const HloModule &M,
                                          const EmitOptions &O,
                                          const std::string &File) {
  auto R = emitModule(M, O);
  if (!R) {
    // Errors without a location are not about a place in the input (the
    // back end, libdevice): no made-up line and column.
    if (R.error().Loc.File.empty())
      printError(File, R.error().Message);
    else
      printDiagnostic(R.error());
    return std::nullopt;
  }
  if (R->Kernels.empty()) {
    // Nothing to write: each fusion's reason is an error.
    for (const SkippedFusion &S : R->Skipped)
      printDiagnostic(S.Why);
    return std::nullopt;
  }
  for (const SkippedFusion &S : R->Skipped)
    printSkippedFusion(S.Fusion->name(), S.Why);
  return std::move(*R);
}

} // namespace idxmap::cli
