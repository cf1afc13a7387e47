//===- CmdHlo.cpp - `idxmap hlo`: parse, print and evaluate HLO -----------===//
//
// Part of idxmap. Prints an HLO module in canonical form, or evaluates one of
// its computations with the reference interpreter on seeded random inputs.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "idxmap/Hlo.h"
#include "idxmap/HloInterpreter.h"

using namespace idxmap;
using namespace idxmap::cli;

static int runHlo(int Argc, char **Argv);

static const Command HloCommand = {
    "hlo", "print an HLO module canonically, or evaluate it",
    "Parses an HLO module (as XLA prints it, dumps included; every opcode of\n"
    "XLA's list) and prints it in canonical form: no '%' prefixes, layouts\n"
    "only where given, typed attributes in a fixed order, the others kept as\n"
    "written. With --evaluate, runs the ENTRY\n"
    "computation (or --computation NAME) in the reference interpreter on\n"
    "pseudo-random arguments (--seed, uniform in --range; parameter K uses\n"
    "seed SEED + K) and prints each argument and each result leaf as\n"
    "`arg K: TYPE[DIMS] {v, ...}` / `result K: ...` (at most\n"
    "--max-elements values each). --max-bytes bounds the memory of the\n"
    "arguments and, separately, of the values alive at once (default 1 GiB);\n"
    "--max-work bounds the element results computed (default 2^28).",
    runHlo};
static CommandRegistration RegisterHlo(HloCommand);

static bool parseInt(const std::string &S, int64_t &V) {
  try {
    size_t Pos;
    V = std::stoll(S, &Pos);
    return Pos == S.size();
  } catch (...) {
    return false;
  }
}

static int runHlo(int Argc, char **Argv) {
  std::string CompName, SeedText = "0", RangeText = "-1,1", MaxText = "16",
                        MaxBytesText = "1073741824", MaxWorkText = "268435456";
  bool Evaluate = false, NoFastReduce = false, WideScans = false;
  OutputOptions Out;
  HloInputOptions In;
  ArgParser P(HloCommand);
  In.addTo(P);
  P.flag("--evaluate", &Evaluate, "evaluate instead of printing");
  P.option("--computation", "NAME", &CompName,
           "computation to evaluate (default: ENTRY)");
  P.option("--seed", "N", &SeedText, "seed of the random arguments");
  P.option("--range", "LO,HI", &RangeText, "range of the random arguments");
  P.option("--max-elements", "N", &MaxText, "values printed per literal");
  P.option("--max-bytes", "N", &MaxBytesText,
           "memory budget of the evaluation");
  P.option("--max-work", "N", &MaxWorkText,
           "element results the evaluation may compute");
  P.flag("--no-fast-reduce", &NoFastReduce,
         "apply to_apply element by element even for float sums");
  P.flag("--wide-scans", &WideScans,
         "fold f16/bf16 prefix sums and products in f64, each output rounded "
         "once");
  Out.addTo(P, /*AllowFormat=*/false);
  if (auto Exit = P.parse(Argc, Argv))
    return *Exit;

  int64_t Seed, MaxElements;
  if (!parseInt(SeedText, Seed))
    return P.usageError("--seed needs an integer");
  if (!parseInt(MaxText, MaxElements) || MaxElements < 0)
    return P.usageError("--max-elements needs a non-negative integer");
  int64_t MaxBytes;
  if (!parseInt(MaxBytesText, MaxBytes) || MaxBytes < 0)
    return P.usageError("--max-bytes needs a non-negative integer");
  int64_t MaxWork;
  if (!parseInt(MaxWorkText, MaxWork) || MaxWork < 0)
    return P.usageError("--max-work needs a non-negative integer");
  double Lo, Hi;
  {
    size_t Comma = RangeText.find(',');
    try {
      if (Comma == std::string::npos)
        throw 0;
      size_t P1, P2;
      std::string A = RangeText.substr(0, Comma),
                  B = RangeText.substr(Comma + 1);
      Lo = std::stod(A, &P1);
      Hi = std::stod(B, &P2);
      if (P1 != A.size() || P2 != B.size() || !(Lo <= Hi))
        throw 0;
    } catch (...) {
      return P.usageError("--range needs LO,HI with LO <= HI");
    }
  }

  OutputFile O;
  if (!O.open(Out))
    return ExitRejected;
  int Code = forEachHloModule(
      In,
      [&](HloModule &ChunkModule, const Chunk &) -> int {
        HloModule *M = &ChunkModule;

        if (!Evaluate) {
          O << printHloModule(*M);
          return ExitOk;
        }

        const HloComputation *C = M->entry();
        if (!CompName.empty()) {
          C = M->findComputation(CompName);
          if (!C) {
            printError(displayName(In.File),
                       "no computation named '" + CompName + "'");
            return ExitRejected;
          }
        }
        // Arguments are values the interpreter holds: compute types only (the
        // interpreter names any other type it meets inside).
        for (const HloInstruction *Param : C->parameters())
          if (!hasOnlyComputeTypes(Param->shape())) {
            printDiagnostic(M->diagnose(Param->sourceOffset(),
                                        "cannot evaluate '" + Param->name() +
                                            "': the interpreter has no " +
                                            Param->shape().str() + " values"));
            return ExitRejected;
          }
        // The arguments are sized before any is allocated.
        int64_t ArgBytes = 0;
        for (const HloInstruction *Param : C->parameters()) {
          int64_t Bytes = Param->shape().byteSize();
          if (Bytes > MaxBytes - ArgBytes) {
            printDiagnostic(M->diagnose(
                Param->sourceOffset(),
                "the arguments need more than " + std::to_string(MaxBytes) +
                    " bytes (--max-bytes): '" + Param->name() + "' is " +
                    Param->shape().str() + ", " + std::to_string(Bytes) +
                    " bytes"));
            return ExitRejected;
          }
          ArgBytes += Bytes;
        }
        std::vector<Literal> Args;
        for (int64_t K = 0; K < C->parameterCount(); ++K) {
          Literal A(C->parameter(K)->shape());
          A.fillRandom(uint64_t(Seed + K), Lo, Hi);
          O << "arg " << K << ": " << A.toString(MaxElements) << "\n";
          Args.push_back(std::move(A));
        }
        EvaluateOptions Opts;
        Opts.FastReduceAdd = !NoFastReduce;
        Opts.WideScans = WideScans;
        Opts.MaxBytes = MaxBytes;
        Opts.MaxWork = MaxWork;
        auto R = evaluate(*C, Args, Opts);
        if (!R) {
          printDiagnostic(R.error());
          return ExitRejected;
        }
        for (size_t K = 0; K < R->size(); ++K)
          O << "result " << K << ": " << (*R)[K].toString(MaxElements) << "\n";
        return ExitOk;
      },
      &O);
  return closeHloOutput(In, O, Code);
}
