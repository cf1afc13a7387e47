//===- Runner.cpp - Check and time emitted kernels on a GPU ---------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Runner.h"
#include "idxmap/HloScatter.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>

namespace idxmap {

using runtime::CudaDriver;
using runtime::DeviceBuffer;
using runtime::DriverError;
using runtime::DriverErrorKind;
using runtime::DriverResult;

namespace {

/// Calls \p F on every logical index of \p S in physical order (the
/// layout's minor-most dim fastest), with the logical row-major offset.
template <typename Fn> void forEachPhysical(const Shape &S, Fn F) {
  std::vector<int64_t> M2m = S.layoutOrDefault();
  int64_t R = S.rank(), N = S.numElements();
  std::vector<int64_t> Idx(R, 0), Strides(R, 1);
  for (int64_t D = R - 2; D >= 0; --D)
    Strides[D] = Strides[D + 1] * S.Dims[D + 1];
  int64_t Logical = 0;
  for (int64_t P = 0; P < N; ++P) {
    F(P, Logical);
    for (int64_t K = 0; K < R; ++K) {
      int64_t D = M2m[K];
      Logical += Strides[D];
      if (++Idx[D] < S.Dims[D])
        break;
      Logical -= Strides[D] * Idx[D];
      Idx[D] = 0;
    }
  }
}

DriverError fail(std::string M) {
  return DriverError{DriverErrorKind::CudaError, 0, std::move(M)};
}

const HloInstruction *findFusion(const HloModule &M, const std::string &Name) {
  // Instruction names are unique per computation only: a reducer's
  // parameter may share the fusion's name.
  for (const HloComputation *C : M.computations())
    if (const HloInstruction *I = C->findInstruction(Name);
        I && I->fusedComputation())
      return I;
  return nullptr;
}

} // namespace

std::vector<uint8_t> toPhysical(const Literal &L, const Shape &S) {
  int64_t W = byteWidth(S.Type);
  std::vector<uint8_t> Out(L.data().size());
  forEachPhysical(S, [&](int64_t P, int64_t Log) {
    std::memcpy(&Out[P * W], &L.data()[Log * W], W);
  });
  return Out;
}

Literal fromPhysical(const std::vector<uint8_t> &Bytes, const Shape &S) {
  Literal L(Shape(S.Type, S.Dims));
  int64_t W = byteWidth(S.Type);
  forEachPhysical(S, [&](int64_t P, int64_t Log) {
    std::memcpy(&L.data()[Log * W], &Bytes[P * W], W);
  });
  return L;
}

DriverResult<std::vector<KernelRunResult>>
runKernels(CudaDriver &Driver, const HloModule &Module, std::string_view Ptx,
           const std::vector<KernelInfo> &Kernels, const RunOptions &Options,
           std::ostream &Log) {
  auto Mod = Driver.loadPtx(Ptx);
  if (!Mod)
    return Mod.error();
  std::vector<KernelRunResult> Results;
  for (const KernelInfo &K : Kernels) {
    KernelRunResult R;
    R.Name = K.Name;
    auto Kernel = Mod->getKernel(K.Name);
    if (!Kernel)
      return Kernel.error();
    const HloInstruction *F = findFusion(Module, K.Fusion);
    if (!F || !F->fusedComputation())
      return fail("kernel '" + K.Name + "': no fusion named '" + K.Fusion +
                  "' in the module");
    const HloComputation &C = *F->fusedComputation();
    // Inputs: random (seeded) or from files, one per fusion operand.
    std::vector<Literal> Args;
    std::vector<const KernelParam *> In, Out;
    // Per parameter (KernelInfo::Params order): its place in In or Out.
    std::vector<size_t> Place;
    for (const KernelParam &P : K.Params) {
      Place.push_back(P.IsOutput ? Out.size() : In.size());
      (P.IsOutput ? Out : In).push_back(&P);
    }
    // An output that updates an input in place is given that input's
    // buffer (AliasOf: its place in In), as the sidecar's "aliases" ask.
    std::vector<int64_t> AliasOf(Out.size(), -1);
    for (const KernelAlias &Al : K.Aliases) {
      if (Al.Output >= K.Params.size() || Al.Input >= K.Params.size() ||
          !K.Params[Al.Output].IsOutput || K.Params[Al.Input].IsOutput ||
          !K.Params[Al.Output].Type.sameDims(K.Params[Al.Input].Type) ||
          K.Params[Al.Output].Type.Type != K.Params[Al.Input].Type.Type)
        return fail("kernel '" + K.Name + "': alias of parameter " +
                    std::to_string(Al.Output) + " to parameter " +
                    std::to_string(Al.Input) +
                    " does not pair an output with an input of its shape");
      AliasOf[Place[Al.Output]] = int64_t(Place[Al.Input]);
    }
    if (int64_t(In.size()) != C.parameterCount())
      return fail("kernel '" + K.Name + "' has " + std::to_string(In.size()) +
                  " inputs, fusion '" + K.Fusion + "' has " +
                  std::to_string(C.parameterCount()) + " parameters");
    // Nothing is allocated for a kernel whose buffers the device cannot
    // hold (f32[2^40] asked the host for 4 TiB first).
    uint64_t Need = 0;
    for (const KernelParam &P : K.Params)
      Need += uint64_t(P.Type.numElements()) * uint64_t(byteWidth(P.Type.Type));
    if (uint64_t Total = Driver.device().TotalMemoryBytes;
        Total && Need > Total)
      return fail("kernel '" + K.Name + "' needs " + std::to_string(Need) +
                  " bytes of buffers; the device has " + std::to_string(Total));
    std::vector<bool> Random(In.size(), false);
    for (size_t I = 0; I < In.size(); ++I) {
      Literal L(Shape(In[I]->Type.Type, In[I]->Type.Dims));
      auto FileIt =
          std::find_if(Options.InputFiles.begin(), Options.InputFiles.end(),
                       [&](const auto &P) { return P.first == In[I]->Name; });
      if (FileIt != Options.InputFiles.end()) {
        std::ifstream FS(FileIt->second, std::ios::binary);
        std::vector<uint8_t> Bytes((std::istreambuf_iterator<char>(FS)),
                                   std::istreambuf_iterator<char>());
        if (!FS.good() && !FS.eof())
          return fail("cannot read '" + FileIt->second + "'");
        if (Bytes.size() != L.data().size())
          return fail("'" + FileIt->second + "' has " +
                      std::to_string(Bytes.size()) + " bytes, " + In[I]->Name +
                      " needs " + std::to_string(L.data().size()));
        L.data() = std::move(Bytes);
      } else {
        L.fillRandom(Options.Seed * 1000003 + I, Options.Lo, Options.Hi);
        Random[I] = true;
      }
      Args.push_back(std::move(L));
    }
    // Random indices that collide leave a scatter's result undefined when
    // the order of its updates matters: a `unique_indices` promise broken,
    // or a combiner that returns the update (which duplicate wins, XLA
    // leaves unspecified). Such indices, when random, are drawn distinct:
    // the indices parameter itself, or the one parameter of their element
    // count they are computed from (JAX wraps negative indices with a
    // select, which leaves distinct in-range ones as they are).
    for (const HloInstruction *I : C.instructions()) {
      if (I->opcode() != HloOpcode::Scatter ||
          (I->attribute("unique_indices") != "true" &&
           scatterCombinerOp(*I) != HloOpcode::Parameter))
        continue;
      const HloInstruction *Ix = I->operand(I->operandCount() / 2);
      std::vector<const HloInstruction *> Ps =
          operandClosure({Ix}, {}, /*ParametersOnly=*/true);
      if (Ps.size() != 1 || Ps[0]->shape().Type != Ix->shape().Type ||
          Ps[0]->shape().numElements() != Ix->shape().numElements())
        continue;
      const int64_t P = Ps[0]->parameterNumber();
      if (P < int64_t(In.size()) && Random[size_t(P)])
        fillUniqueScatterIndices(*I, Args[size_t(P)],
                                 Options.Seed * 1000003 + uint64_t(P));
    }

    // Device buffers; small inputs get several copies for rotation.
    uint64_t InBytes = 0, OutBytes = 0;
    for (const Literal &L : Args)
      InBytes += L.data().size();
    for (size_t O = 0; O < Out.size(); ++O)
      if (AliasOf[O] < 0)
        OutBytes += Out[O]->Type.numElements() * byteWidth(Out[O]->Type.Type);
    R.Bytes = InBytes + OutBytes;
    uint64_t L2 = std::max(Driver.device().L2CacheBytes, 1);
    unsigned Copies = 1;
    if (Options.Bench && Options.RotateInputs && R.Bytes < 4 * L2)
      Copies = unsigned(
          std::min<uint64_t>(64, 4 * L2 / std::max<uint64_t>(R.Bytes, 1) + 1));
    R.Copies = Copies;
    std::vector<std::vector<DeviceBuffer>> InBufs(Copies), OutBufs(Copies);
    for (unsigned Cp = 0; Cp < Copies; ++Cp) {
      for (size_t I = 0; I < In.size(); ++I) {
        std::vector<uint8_t> Bytes = toPhysical(Args[I], In[I]->Type);
        auto B = Driver.alloc(std::max<size_t>(Bytes.size(), 1));
        if (!B)
          return B.error();
        if (!Bytes.empty())
          if (auto S = Driver.copyToDevice(*B, Bytes.data(), Bytes.size()); !S)
            return S.error();
        InBufs[Cp].push_back(std::move(*B));
      }
      for (size_t O = 0; O < Out.size(); ++O) {
        const KernelParam *P = Out[O];
        if (AliasOf[O] >= 0)
          continue;
        auto B = Driver.alloc(std::max<size_t>(
            P->Type.numElements() * byteWidth(P->Type.Type), 1));
        if (!B)
          return B.error();
        // Poison: every byte 0xff (NaN for floats, -1 for integers).
        if (auto S = Driver.fill(*B, 0xff); !S)
          return S.error();
        OutBufs[Cp].push_back(std::move(*B));
      }
    }
    // The kernel's workspace, zeroed once: launches in this stream share it
    // (the kernel leaves it zeroed).
    std::optional<DeviceBuffer> Workspace;
    if (K.WorkspaceBytes) {
      auto B = Driver.alloc(size_t(K.WorkspaceBytes));
      if (!B)
        return B.error();
      if (auto S = Driver.fill(*B, 0); !S)
        return S.error();
      Workspace = std::move(*B);
    }
    // Output O's buffer in copy Cp: its own, or the input it updates.
    auto OutBuf = [&](unsigned Cp, size_t O) -> DeviceBuffer & {
      if (AliasOf[O] >= 0)
        return InBufs[Cp][size_t(AliasOf[O])];
      size_t Own = 0;
      for (size_t Q = 0; Q < O; ++Q)
        Own += AliasOf[Q] < 0;
      return OutBufs[Cp][Own];
    };
    auto Launch = [&](unsigned Cp) {
      std::vector<runtime::DevicePtr> Ptrs;
      for (auto &B : InBufs[Cp])
        Ptrs.push_back(B.ptr());
      for (size_t O = 0; O < Out.size(); ++O)
        Ptrs.push_back(OutBuf(Cp, O).ptr());
      if (Workspace)
        Ptrs.push_back(Workspace->ptr());
      std::vector<void *> ArgPtrs;
      for (auto &P : Ptrs)
        ArgPtrs.push_back(&P);
      runtime::LaunchDims D;
      std::copy(K.Grid, K.Grid + 3, D.Grid);
      std::copy(K.Block, K.Block + 3, D.Block);
      D.DynamicSharedBytes = K.DynamicSharedBytes;
      return Driver.launch(*Kernel, D, ArgPtrs.data());
    };
    // Above the default 48 KiB, dynamic shared memory is opted into.
    if (K.DynamicSharedBytes > 48 * 1024)
      if (auto S = Driver.setMaxDynamicSharedBytes(*Kernel,
                                                   int(K.DynamicSharedBytes));
          !S)
        return S.error();
    if (auto S = Launch(0); !S)
      return S.error();
    if (auto S = Driver.synchronize(); !S)
      return S.error();
    // The workspace contract (docs/SIDECAR.md): the kernel leaves it zeroed
    // for the next launch that shares it.
    if (Workspace) {
      std::vector<uint8_t> Ws(size_t(K.WorkspaceBytes));
      if (auto S = Driver.copyToHost(Ws.data(), *Workspace, Ws.size()); !S)
        return S.error();
      size_t Dirty = size_t(std::count_if(Ws.begin(), Ws.end(),
                                          [](uint8_t X) { return X != 0; }));
      if (Dirty)
        return fail("kernel '" + K.Name + "' left " + std::to_string(Dirty) +
                    " of its " + std::to_string(Ws.size()) +
                    " workspace bytes nonzero (the next launch sharing it "
                    "would start from them)");
    }

    if (Options.Check) {
      R.Checked = true;
      // The scan kernels accumulate f16 and bf16 sums and products in f32
      // (ScanPlan::Accumulate32, always for those types): their reference
      // folds them wide too, so that the check stays as tight as for f32.
      EvaluateOptions Reference;
      Reference.WideScans = true;
      auto Expected = evaluate(C, Args, Reference);
      if (!Expected)
        return fail("interpreter: " + Expected.error().str());
      if (Expected->size() != Out.size())
        return fail("kernel '" + K.Name + "' has " +
                    std::to_string(Out.size()) + " outputs, the fusion " +
                    std::to_string(Expected->size()));
      // On a mismatch, how sensitive the reference is to rounding
      // (roundingSlack: the fusion in f64, plain and with every rounding
      // perturbed): elements that rounding alone makes unstable (error
      // amplification, long low-precision sums) get that much more slack.
      // Unavailable for the few fusions the widened interpreter rejects.
      std::optional<std::vector<Literal>> Slack;
      bool SlackTried = false;
      auto SlackFor = [&](size_t O) -> const Literal * {
        if (!SlackTried && Options.RoundingSlack) {
          SlackTried = true;
          if (auto S = roundingSlack(C, Args, *Expected, Reference);
              S && S->size() == Out.size())
            Slack = std::move(*S);
        }
        return Slack ? &(*Slack)[O] : nullptr;
      };
      for (size_t O = 0; O < Out.size(); ++O) {
        std::vector<uint8_t> Bytes(OutBuf(0, O).size());
        if (auto S =
                Driver.copyToHost(Bytes.data(), OutBuf(0, O), Bytes.size());
            !S)
          return S.error();
        Bytes.resize(Out[O]->Type.numElements() * byteWidth(Out[O]->Type.Type));
        Literal Got = fromPhysical(Bytes, Out[O]->Type);
        Tolerance Tol = Options.Tol ? *Options.Tol
                        : Options.TolFor
                            ? Options.TolFor(*F, K)
                            : Tolerance::forType(Out[O]->Type.Type);
        LiteralComparison Cmp = compareLiterals((*Expected)[O], Got, Tol);
        if (!Cmp.Match)
          if (const Literal *S = SlackFor(O))
            Cmp = compareLiterals((*Expected)[O], Got, Tol, S);
        if (Cmp.Match) {
          char Buf[192];
          snprintf(Buf, sizeof Buf, "ok (%lld elements, max abs err %.3g)",
                   (long long)Got.elementCount(), Cmp.MaxAbsError);
          if (Cmp.Sensitive)
            snprintf(Buf + strlen(Buf), sizeof Buf - strlen(Buf),
                     "; %lld within the reference's rounding sensitivity",
                     (long long)Cmp.Sensitive);
          R.OutputReports.push_back(Out[O]->Name + ": " + Buf);
        } else {
          R.Ok = false;
          R.OutputReports.push_back(Out[O]->Name +
                                    ": MISMATCH: " + Cmp.Message);
        }
      }
    }

    if (Options.Bench) {
      // The same warm-up, repetitions and input rotation for both timers.
      auto Rotated = [&](unsigned Rep) { return Launch(Rep % Copies); };
      unsigned Reps = std::max(Options.Reps, 20u);
      std::vector<double> Times;
      if (Options.Cupti) {
        auto T = Options.Cupti->timeLaunches(Driver, Rotated, Options.Warmup,
                                             Reps, K.Name);
        if (!T)
          return T.error();
        if (T->Failure.empty()) {
          Times = std::move(T->Micros);
          R.Timer = "cupti";
        } else if (Options.RequireCupti) {
          return fail("kernel '" + K.Name +
                      "': CUPTI timing failed: " + T->Failure);
        } else {
          Log << "note: kernel " << K.Name << ": CUPTI timing failed ("
              << T->Failure << "); timing with CUDA events\n";
        }
      }
      if (Times.empty()) {
        auto Ev = Driver.timeLaunches(Rotated, Options.Warmup, Reps);
        if (!Ev)
          return Ev.error();
        Times = std::move(*Ev);
        R.Timer = "events";
      }
      R.MedianUs = runtime::median(Times);
      R.MeanUs = std::accumulate(Times.begin(), Times.end(), 0.0) /
                 double(Times.size());
      R.MinUs = *std::min_element(Times.begin(), Times.end());
      R.MaxUs = *std::max_element(Times.begin(), Times.end());
      R.GBps = R.MedianUs > 0 ? double(R.Bytes) / (R.MedianUs * 1e3) : 0;
    }
    Log.flush();
    Results.push_back(std::move(R));
  }
  return Results;
}

} // namespace idxmap
