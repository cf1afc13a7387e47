//===- PlanRunner.cpp - Run a module's kernels over its buffer plan -------===//
//
// Part of idxmap. runBufferPlan (Runner.h): the kernels of a sidecar launched
// once in launch order over one device buffer per buffer of the plan, as a
// runtime (and examples/loader) does, so that `idxmap run --output-dir`
// writes what a loader computes from the same inputs.
//
//===----------------------------------------------------------------------===//
#include "idxmap/Runner.h"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace idxmap {

using runtime::DeviceBuffer;
using runtime::DriverError;
using runtime::DriverErrorKind;
using runtime::DriverResult;

namespace {

DriverError planError(std::string M) {
  return DriverError{DriverErrorKind::CudaError, 0, std::move(M)};
}

uint64_t bytesOf(const Shape &S) {
  return uint64_t(S.numElements()) * uint64_t(byteWidth(S.Type));
}

/// The row-major bytes of input \p Name: its file, or random with \p Seed.
DriverResult<std::vector<uint8_t>> inputBytes(const std::string &Name,
                                              const Shape &S, uint64_t Seed,
                                              const PlanRunOptions &Options) {
  Literal L(Shape(S.Type, S.Dims));
  auto It = std::find_if(Options.InputFiles.begin(), Options.InputFiles.end(),
                         [&](const auto &P) { return P.first == Name; });
  if (It == Options.InputFiles.end()) {
    L.fillRandom(Seed, Options.Lo, Options.Hi);
    return L.data();
  }
  std::ifstream FS(It->second, std::ios::binary);
  if (!FS)
    return planError("cannot read '" + It->second + "'");
  std::vector<uint8_t> Bytes((std::istreambuf_iterator<char>(FS)),
                             std::istreambuf_iterator<char>());
  if (Bytes.size() != L.data().size())
    return planError("'" + It->second + "' has " +
                     std::to_string(Bytes.size()) + " bytes, " + Name +
                     " needs " + std::to_string(L.data().size()));
  return Bytes;
}

} // namespace

DriverResult<std::vector<PlanBufferBytes>>
runBufferPlan(runtime::CudaDriver &Driver, std::string_view Ptx,
              const Sidecar &S, const PlanRunOptions &Options) {
  auto Mod = Driver.loadPtx(Ptx);
  if (!Mod)
    return Mod.error();
  std::vector<PlanBufferBytes> Out;
  std::vector<DeviceBuffer> Bufs;
  for (const SidecarBuffer &B : S.Buffers) {
    PlanBufferBytes P;
    P.Name = B.Name;
    P.Type = B.Type;
    Out.push_back(std::move(P));
  }
  for (const KernelInfo &K : S.Kernels)
    for (const KernelParam &P : K.Params)
      if (P.IsOutput && P.Buffer >= 0) {
        if (size_t(P.Buffer) >= Out.size())
          return planError("kernel '" + K.Name + "': parameter '" + P.Name +
                           "' names buffer " + std::to_string(P.Buffer) +
                           " of " + std::to_string(Out.size()));
        Out[size_t(P.Buffer)].Written = true;
      }
  uint64_t NextSeed = 0;
  // Fills \p Buf (already allocated) with input \p P's bytes.
  auto Fill = [&](PlanBufferBytes &P, const DeviceBuffer &Buf) {
    auto Bytes = inputBytes(P.Name, P.Type, Options.Seed * 1000003 + NextSeed++,
                            Options);
    if (!Bytes)
      return runtime::DriverStatus(Bytes.error());
    P.RowMajor = std::move(*Bytes);
    Literal L(Shape(P.Type.Type, P.Type.Dims));
    L.data() = P.RowMajor;
    std::vector<uint8_t> Phys = toPhysical(L, P.Type);
    if (Phys.empty())
      return runtime::DriverStatus();
    return Driver.copyToDevice(Buf, Phys.data(), Phys.size());
  };
  for (PlanBufferBytes &P : Out) {
    auto B = Driver.alloc(std::max<size_t>(bytesOf(P.Type), 1));
    if (!B)
      return B.error();
    if (auto St = P.Written ? Driver.fill(*B, 0xff) : Fill(P, *B); !St)
      return St.error();
    Bufs.push_back(std::move(*B));
  }

  // Kernels in launch order; every kernel when the sidecar gives none, and
  // those it does not list after the listed ones.
  std::vector<const KernelInfo *> Order;
  for (const std::string &Name : S.LaunchOrder)
    for (const KernelInfo &K : S.Kernels)
      if (K.Name == Name)
        Order.push_back(&K);
  for (const KernelInfo &K : S.Kernels)
    if (std::find(Order.begin(), Order.end(), &K) == Order.end())
      Order.push_back(&K);

  for (const KernelInfo *K : Order) {
    auto Kernel = Mod->getKernel(K->Name);
    if (!Kernel)
      return Kernel.error();
    // Per parameter, the index of its buffer in Bufs (outside parameters
    // get their own, after the plan's).
    std::vector<size_t> Arg;
    for (const KernelParam &P : K->Params) {
      if (P.Buffer >= 0) {
        if (size_t(P.Buffer) >= S.Buffers.size())
          return planError("kernel '" + K->Name + "': parameter '" + P.Name +
                           "' names buffer " + std::to_string(P.Buffer) +
                           " of " + std::to_string(S.Buffers.size()));
        Arg.push_back(size_t(P.Buffer));
        continue;
      }
      PlanBufferBytes Outside;
      Outside.Name = K->Name + "." + P.Name;
      Outside.Type = P.Type;
      auto B = Driver.alloc(std::max<size_t>(bytesOf(P.Type), 1));
      if (!B)
        return B.error();
      if (auto St = Fill(Outside, *B); !St)
        return St.error();
      Arg.push_back(Bufs.size());
      Bufs.push_back(std::move(*B));
      Out.push_back(std::move(Outside));
    }
    // An in-place update writes only part of its output, which must hold
    // the input's bytes when the kernel starts; the plan gives the output
    // its own buffer (the input may be read again): copy.
    for (const KernelAlias &A : K->Aliases) {
      if (A.Output >= Arg.size() || A.Input >= Arg.size())
        return planError("kernel '" + K->Name + "': alias of parameter " +
                         std::to_string(A.Output) + " to " +
                         std::to_string(A.Input) + " is out of range");
      size_t From = Arg[A.Input], To = Arg[A.Output];
      if (From == To)
        continue;
      size_t N = std::min(Bufs[From].size(), Bufs[To].size());
      std::vector<uint8_t> Host(N);
      if (auto St = Driver.copyToHost(Host.data(), Bufs[From], N); !St)
        return St.error();
      if (auto St = Driver.copyToDevice(Bufs[To], Host.data(), N); !St)
        return St.error();
    }
    std::vector<runtime::DevicePtr> Ptrs;
    for (size_t I : Arg)
      Ptrs.push_back(Bufs[I].ptr());
    std::optional<DeviceBuffer> Workspace;
    if (K->WorkspaceBytes) {
      auto B = Driver.alloc(size_t(K->WorkspaceBytes));
      if (!B)
        return B.error();
      if (auto St = Driver.fill(*B, 0); !St)
        return St.error();
      Workspace = std::move(*B);
      Ptrs.push_back(Workspace->ptr());
    }
    std::vector<void *> ArgPtrs;
    for (auto &P : Ptrs)
      ArgPtrs.push_back(&P);
    if (K->DynamicSharedBytes > 48 * 1024)
      if (auto St = Driver.setMaxDynamicSharedBytes(*Kernel,
                                                    int(K->DynamicSharedBytes));
          !St)
        return St.error();
    runtime::LaunchDims D;
    std::copy(K->Grid, K->Grid + 3, D.Grid);
    std::copy(K->Block, K->Block + 3, D.Block);
    D.DynamicSharedBytes = K->DynamicSharedBytes;
    if (auto St = Driver.launch(*Kernel, D, ArgPtrs.data()); !St)
      return St.error();
    if (auto St = Driver.synchronize(); !St)
      return St.error();
  }

  for (size_t I = 0; I < Out.size(); ++I) {
    if (!Out[I].Written)
      continue;
    std::vector<uint8_t> Phys(bytesOf(Out[I].Type));
    if (!Phys.empty())
      if (auto St = Driver.copyToHost(Phys.data(), Bufs[I], Phys.size()); !St)
        return St.error();
    Out[I].RowMajor = fromPhysical(Phys, Out[I].Type).data();
  }
  return Out;
}

} // namespace idxmap
