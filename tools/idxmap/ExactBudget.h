//===- tools/idxmap/ExactBudget.h - Budgets of the exact queries -*- C++
//-*-===//
//
// Part of idxmap. The budget options of the commands that ask isl
// (`bijective`, `equal`, and `--exact` on `is-empty`, `bounds`, `simplify`,
// `compose --simplify`), and the contract when a budget runs out: the answer
// is `unknown` on stdout, a note on stderr names the budget and the option
// that raises it, and the command exits 1. An `unknown` that no budget caused
// (a map isl cannot represent) keeps exit code 0. Defined in CmdExact.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_TOOLS_EXACTBUDGET_H
#define IDXMAP_TOOLS_EXACTBUDGET_H

#include "Commands.h"

#include "idxmap/Exact.h"

#include <cstdint>
#include <optional>
#include <string>

namespace idxmap {
namespace cli {

/// `--budget N`, `--time-limit MS` and `--max-cells N`.
///
/// Example: `idxmap is-empty --exact --time-limit 2000 big.map`.
struct BudgetFlags {
  std::string Budget, TimeLimit, MaxCells;

  void addTo(ArgParser &P);
  /// The options, with \p Why receiving explanations and \p Hit whether a
  /// budget ran out.
  idxmap::ExactOptions options(std::string *Why, bool *Hit) const;
  /// A non-negative decimal integer; nullopt otherwise.
  static std::optional<uint64_t> parseCount(const std::string &S);
};

/// What the `--exact` hooks (exactHooks()) use and learn: the command sets
/// Options from its BudgetFlags before calling a hook, and reads Why and
/// BudgetHit after it.
struct ExactHookState {
  idxmap::ExactOptions Options;
  std::string Why;
  bool BudgetHit = false;
};
ExactHookState &exactHookState();

/// If \p Hit: prints `idxmap: note: WHY; raise it with OPTION` on stderr
/// (OPTION: `--budget`, `--time-limit` or `--max-cells`, from \p Why) and
/// returns ExitRejected; otherwise returns ExitOk.
int noteBudgetHit(const std::string &Why, bool Hit);

} // namespace cli
} // namespace idxmap

#endif // IDXMAP_TOOLS_EXACTBUDGET_H
