//===- CmdTuning.cpp - `idxmap tuning` and `idxmap device` ----------------===//
//
// Part of idxmap. What the tool's planning inputs are: the tuning knobs'
// table (docs/TUNING.md is its output, a golden test compares them) and
// the device models of `--device`.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "idxmap/DeviceModel.h"
#include "idxmap/Tuning.h"

using namespace idxmap;
using namespace idxmap::cli;

static int runTuning(int Argc, char **Argv);
static int runDevice(int Argc, char **Argv);

static const Command TuningCommand = {
    "tuning", "list the tuning knobs: name, range, default, meaning",
    "Prints a Markdown table with one row per tuning knob (tuningTable() of\n"
    "include/idxmap/Tuning.h): its name, the values it accepts (those marked\n"
    "\"power of two\" are rounded down to one), the default in words and\n"
    "what it sets. A knob overrides the kernel plan's own choice; set it\n"
    "with `idxmap emit --tune NAME=VALUE` (or `idxmap run --tune`), or with\n"
    "the environment variable of its name (a value below the range is\n"
    "ignored there, one above it clamped; --tune wins).",
    runTuning};
static CommandRegistration RegisterTuning(TuningCommand);

static const Command DeviceCommand = {
    "device", "print a device model (a preset or a JSON file)",
    "Prints the device model that `--device NAME|FILE.json` selects for\n"
    "`idxmap emit` and `idxmap analyze`, as the JSON a device model file\n"
    "holds: SMs, warp size, thread, block, register and shared-memory\n"
    "limits, L2 bytes, SM clock, grid and block limits, DRAM bandwidth.\n"
    "NAME is a preset (A100, H100, H200; case-insensitive); a file names a\n"
    "\"name\" and any of those fields, the others taken from its \"base\"\n"
    "preset or the defaults. Without an argument, lists the presets.",
    runDevice};
static CommandRegistration RegisterDevice(DeviceCommand);

static int runTuning(int Argc, char **Argv) {
  OutputOptions Out;
  ArgParser P(TuningCommand);
  Out.addTo(P, /*AllowFormat=*/false);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  O << formatTuningTable();
  return O.close() ? ExitOk : ExitRejected;
}

static int runDevice(int Argc, char **Argv) {
  std::string Name;
  OutputOptions Out;
  ArgParser P(DeviceCommand);
  P.positional("DEVICE", &Name, "a preset name or a device model file",
               /*Optional=*/true);
  Out.addTo(P, /*AllowFormat=*/false);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;
  std::string Text;
  if (Name.empty()) {
    for (const std::string &N : deviceModelNames())
      Text += N + "\n";
  } else {
    auto D = readDeviceOption(Name);
    if (!D) {
      if (D.error().Loc.File.empty())
        return P.usageError(D.error().Message);
      printDiagnostic(D.error());
      return ExitRejected;
    }
    Text = deviceModelToJson(*D);
  }
  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  O << Text;
  return O.close() ? ExitOk : ExitRejected;
}
