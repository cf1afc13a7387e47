//===- loader.cpp - Launch an emitted module with the CUDA driver API -----===//
//
// Part of idxmap. A worked example of the kernel contract (docs/SIDECAR.md):
// reads `out.ptx` and its sidecar `out.json`, allocates every buffer of the
// sidecar's plan, fills the ENTRY parameters (and intermediates no kernel
// writes: a custom call's result, which a real runtime computes between
// launches) with a fixed pattern or with the files of --inputs, poisons the
// rest, launches the kernels in launch order with cuModuleLoadData and
// cuLaunchKernel, and prints the byte sum of each buffer the kernels wrote
// (as loader.py does). It checks that every byte of every kernel output was
// written (none of the poison is left).
//
//   loader out.ptx [out.json] [--inputs DIR] [--output-dir DIR]
//
// --inputs DIR reads each input buffer from DIR/NAME.bin (NAME: the sidecar
// buffer's name, KERNEL.PARAM for a kernel parameter outside the plan), raw
// little-endian row-major bytes, as `idxmap run --output-dir DIR` writes
// them; --output-dir DIR writes each buffer the kernels wrote to
// DIR/NAME.bin the same way (DIR must exist). Buffers with a layout other
// than row-major are converted between the files' row-major order and the
// device's layout order (the sidecar's "layout", minor-to-major).
//
// The driver is loaded at run time (no CUDA SDK needed to build): libcuda.so.1,
// or $IDXMAP_LIBCUDA. Exit codes: 0 ok, 1 failure, 2 usage, 77 no driver or
// no GPU (ctest's SKIP_RETURN_CODE).
//
//===----------------------------------------------------------------------===//
#include "idxmap/Sidecar.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

// The few driver API declarations this needs (cuda.h's, by value): the
// symbols are looked up by name, so no CUDA header or library is linked.
using CUresult = int;
using CUdeviceptr = unsigned long long;
using CUdevice = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
constexpr int FuncAttrMaxDynamicSharedSizeBytes = 8;

struct Driver {
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*ModuleLoadData)(CUmodule *, const void *);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*FuncSetAttribute)(CUfunction, int, int);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, void *, void **,
                           void **);
  CUresult (*CtxSynchronize)();
  CUresult (*GetErrorString)(CUresult, const char **);
};

template <typename T> bool bind(void *Lib, T &Fn, const char *Name) {
  Fn = reinterpret_cast<T>(dlsym(Lib, Name));
  if (!Fn)
    std::fprintf(stderr, "loader: libcuda has no %s\n", Name);
  return Fn != nullptr;
}

bool loadDriver(Driver &D) {
  const char *Path = std::getenv("IDXMAP_LIBCUDA");
  void *Lib = dlopen(Path && *Path ? Path : "libcuda.so.1", RTLD_NOW);
  if (!Lib)
    return false;
  return bind(Lib, D.Init, "cuInit") && bind(Lib, D.DeviceGet, "cuDeviceGet") &&
         bind(Lib, D.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
         bind(Lib, D.CtxSetCurrent, "cuCtxSetCurrent") &&
         bind(Lib, D.ModuleLoadData, "cuModuleLoadData") &&
         bind(Lib, D.ModuleGetFunction, "cuModuleGetFunction") &&
         bind(Lib, D.FuncSetAttribute, "cuFuncSetAttribute") &&
         bind(Lib, D.MemAlloc, "cuMemAlloc_v2") &&
         bind(Lib, D.MemFree, "cuMemFree_v2") &&
         bind(Lib, D.MemsetD8, "cuMemsetD8_v2") &&
         bind(Lib, D.MemcpyHtoD, "cuMemcpyHtoD_v2") &&
         bind(Lib, D.MemcpyDtoD, "cuMemcpyDtoD_v2") &&
         bind(Lib, D.MemcpyDtoH, "cuMemcpyDtoH_v2") &&
         bind(Lib, D.LaunchKernel, "cuLaunchKernel") &&
         bind(Lib, D.CtxSynchronize, "cuCtxSynchronize") &&
         bind(Lib, D.GetErrorString, "cuGetErrorString");
}

Driver Cu;

/// Exits 1 with the driver's message when \p R is an error.
void check(CUresult R, const char *What) {
  if (R == 0)
    return;
  const char *Msg = "unknown error";
  Cu.GetErrorString(R, &Msg);
  std::fprintf(stderr, "loader: %s: %s\n", What, Msg);
  std::exit(1);
}

bool readFile(const std::string &Path, std::string &Out) {
  std::ifstream F(Path, std::ios::binary);
  if (!F)
    return false;
  Out.assign(std::istreambuf_iterator<char>(F), {});
  return true;
}

uint64_t bytesOf(const idxmap::Shape &S) {
  return uint64_t(S.numElements()) * uint64_t(idxmap::byteWidth(S.Type));
}

/// The fixed input pattern: small values of the element type, so that
/// exp/tanh kernels stay finite. Floats get (i mod 17) / 16 - 0.5; other
/// types i mod 7.
std::vector<uint8_t> pattern(const idxmap::Shape &S) {
  std::vector<uint8_t> B(bytesOf(S));
  int64_t N = S.numElements();
  for (int64_t I = 0; I < N; ++I) {
    float F = float(I % 17) / 16.0f - 0.5f;
    uint32_t Bits;
    std::memcpy(&Bits, &F, 4);
    switch (S.Type) {
    case idxmap::PrimitiveType::F32:
      std::memcpy(&B[size_t(I) * 4], &F, 4);
      break;
    case idxmap::PrimitiveType::BF16: {
      uint16_t H = uint16_t(Bits >> 16); // exact: the values need 5 bits
      std::memcpy(&B[size_t(I) * 2], &H, 2);
      break;
    }
    default: {
      int64_t W = idxmap::byteWidth(S.Type);
      uint64_t V = uint64_t(I % 7);
      std::memcpy(&B[size_t(I * W)], &V, size_t(std::min<int64_t>(W, 8)));
    }
    }
  }
  return B;
}

/// For each element in device order (the layout's minor-most dim fastest),
/// its row-major index: device byte offset P * W holds row-major element
/// Order[P].
std::vector<int64_t> deviceOrder(const idxmap::Shape &S) {
  std::vector<int64_t> MinorToMajor = S.layoutOrDefault();
  int64_t R = S.rank(), N = S.numElements();
  std::vector<int64_t> Idx(size_t(R), 0), Strides(size_t(R), 1);
  for (int64_t D = R - 2; D >= 0; --D)
    Strides[size_t(D)] = Strides[size_t(D + 1)] * S.Dims[size_t(D + 1)];
  std::vector<int64_t> Order(static_cast<size_t>(N));
  int64_t Logical = 0;
  for (int64_t P = 0; P < N; ++P) {
    Order[size_t(P)] = Logical;
    for (int64_t K = 0; K < R; ++K) {
      size_t D = size_t(MinorToMajor[size_t(K)]);
      Logical += Strides[D];
      if (++Idx[D] < S.Dims[D])
        break;
      Logical -= Strides[D] * Idx[D];
      Idx[D] = 0;
    }
  }
  return Order;
}

/// Row-major bytes to device order (\p ToDevice) or back.
std::vector<uint8_t> reorder(const std::vector<uint8_t> &In,
                             const idxmap::Shape &S, bool ToDevice) {
  if (S.hasDefaultLayout())
    return In;
  size_t W = size_t(idxmap::byteWidth(S.Type));
  std::vector<int64_t> Order = deviceOrder(S);
  std::vector<uint8_t> Out(In.size());
  for (size_t P = 0; P < Order.size(); ++P) {
    size_t L = size_t(Order[P]);
    if (ToDevice)
      std::memcpy(&Out[P * W], &In[L * W], W);
    else
      std::memcpy(&Out[L * W], &In[P * W], W);
  }
  return Out;
}

/// Where inputs come from: the pattern, or DIR/NAME.bin with --inputs.
std::string InputDir;

/// The device bytes of input \p Name of shape \p S. Exits 1 when its file
/// is missing or has the wrong size.
std::vector<uint8_t> inputBytes(const std::string &Name,
                                const idxmap::Shape &S) {
  if (InputDir.empty())
    return pattern(S);
  std::string Path = InputDir + "/" + Name + ".bin", Bytes;
  if (!readFile(Path, Bytes)) {
    std::fprintf(stderr, "loader: cannot read %s\n", Path.c_str());
    std::exit(1);
  }
  if (Bytes.size() != bytesOf(S)) {
    std::fprintf(stderr, "loader: %s has %zu bytes, %s needs %llu\n",
                 Path.c_str(), Bytes.size(), Name.c_str(),
                 (unsigned long long)bytesOf(S));
    std::exit(1);
  }
  return reorder(std::vector<uint8_t>(Bytes.begin(), Bytes.end()), S,
                 /*ToDevice=*/true);
}

} // namespace

int main(int Argc, char **Argv) {
  std::vector<std::string> Positional;
  std::string OutputDir;
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    if ((A == "--inputs" || A == "--output-dir") && I + 1 < Argc)
      (A == "--inputs" ? InputDir : OutputDir) = Argv[++I];
    else if (!A.empty() && A[0] == '-')
      Positional.assign(3, ""); // an unknown option: usage
    else
      Positional.push_back(A);
  }
  if (Positional.empty() || Positional.size() > 2) {
    std::fprintf(stderr, "usage: loader out.ptx [out.json] [--inputs DIR] "
                         "[--output-dir DIR]\n");
    return 2;
  }
  std::string PtxPath = Positional[0];
  std::string JsonPath =
      Positional.size() > 1 ? Positional[1] : idxmap::sidecarPathFor(PtxPath);
  std::string Ptx, Json;
  if (!readFile(PtxPath, Ptx) || !readFile(JsonPath, Json)) {
    std::fprintf(stderr, "loader: cannot read %s or %s\n", PtxPath.c_str(),
                 JsonPath.c_str());
    return 1;
  }
  auto S = idxmap::sidecarFromJson(Json, JsonPath);
  if (!S) {
    std::fprintf(stderr, "%s", S.error().str().c_str());
    return 1;
  }

  if (!loadDriver(Cu) || Cu.Init(0) != 0) {
    std::printf("loader: no CUDA driver or GPU; skipped\n");
    return 77;
  }
  CUdevice Dev;
  CUcontext Ctx;
  if (Cu.DeviceGet(&Dev, 0) != 0) {
    std::printf("loader: no GPU; skipped\n");
    return 77;
  }
  check(Cu.PrimaryCtxRetain(&Ctx, Dev), "cuDevicePrimaryCtxRetain");
  check(Cu.CtxSetCurrent(Ctx), "cuCtxSetCurrent");
  CUmodule Mod;
  check(Cu.ModuleLoadData(&Mod, Ptx.c_str()), "cuModuleLoadData");

  // One allocation per buffer of the plan. Buffers that kernels write are
  // poisoned (0xff); the others are inputs to the kernels and get the
  // pattern.
  std::vector<bool> Written(S->Buffers.size());
  for (const idxmap::KernelInfo &K : S->Kernels)
    for (const idxmap::KernelParam &P : K.Params)
      if (P.IsOutput && P.Buffer >= 0)
        Written[size_t(P.Buffer)] = true;
  std::vector<CUdeviceptr> Buffers;
  for (size_t I = 0; I < S->Buffers.size(); ++I) {
    const idxmap::SidecarBuffer &B = S->Buffers[I];
    CUdeviceptr Ptr;
    // Whole 4-byte words, as the sidecar's contract asks (docs/SIDECAR.md).
    check(Cu.MemAlloc(&Ptr, std::max<uint64_t>((B.Bytes + 3) / 4 * 4, 4)),
          "cuMemAlloc");
    if (Written[I]) {
      check(Cu.MemsetD8(Ptr, 0xff, B.Bytes), "cuMemsetD8");
    } else {
      std::vector<uint8_t> Host = inputBytes(B.Name, B.Type);
      check(Cu.MemcpyHtoD(Ptr, Host.data(), Host.size()), "cuMemcpyHtoD");
    }
    Buffers.push_back(Ptr);
  }

  // Kernels in launch order (every kernel when the sidecar has none).
  std::vector<const idxmap::KernelInfo *> Order;
  for (const std::string &Name : S->LaunchOrder)
    for (const idxmap::KernelInfo &K : S->Kernels)
      if (K.Name == Name)
        Order.push_back(&K);
  if (S->LaunchOrder.empty())
    for (const idxmap::KernelInfo &K : S->Kernels)
      Order.push_back(&K);

  std::vector<CUdeviceptr> Own; // parameters outside the plan
  for (const idxmap::KernelInfo *K : Order) {
    CUfunction Fn;
    check(Cu.ModuleGetFunction(&Fn, Mod, K->Name.c_str()),
          "cuModuleGetFunction");
    std::vector<CUdeviceptr> Args;
    for (const idxmap::KernelParam &P : K->Params) {
      if (P.Buffer >= 0) {
        Args.push_back(Buffers[size_t(P.Buffer)]);
        continue;
      }
      CUdeviceptr Ptr;
      check(Cu.MemAlloc(&Ptr, std::max<uint64_t>(bytesOf(P.Type), 1)),
            "cuMemAlloc");
      std::vector<uint8_t> Host = inputBytes(K->Name + "." + P.Name, P.Type);
      check(Cu.MemcpyHtoD(Ptr, Host.data(), Host.size()), "cuMemcpyHtoD");
      Args.push_back(Ptr);
      Own.push_back(Ptr);
    }
    // In-place updates: the kernel writes only part of the output, which
    // must hold the input's bytes when it starts. The buffer plan gives the
    // output its own buffer (the input may be read again later): copy.
    for (const idxmap::KernelAlias &A : K->Aliases)
      if (Args[A.Output] != Args[A.Input])
        check(Cu.MemcpyDtoD(Args[A.Output], Args[A.Input],
                            bytesOf(K->Params[A.Input].Type)),
              "cuMemcpyDtoD");
    if (K->WorkspaceBytes) {
      // Zeroed before the first launch; the kernel leaves it zeroed.
      CUdeviceptr Ptr;
      check(Cu.MemAlloc(&Ptr, K->WorkspaceBytes), "cuMemAlloc");
      check(Cu.MemsetD8(Ptr, 0, K->WorkspaceBytes), "cuMemsetD8");
      Args.push_back(Ptr);
      Own.push_back(Ptr);
    }
    std::vector<void *> ArgPtrs;
    for (CUdeviceptr &P : Args)
      ArgPtrs.push_back(&P);
    if (K->DynamicSharedBytes > 48 * 1024)
      check(Cu.FuncSetAttribute(Fn, FuncAttrMaxDynamicSharedSizeBytes,
                                int(K->DynamicSharedBytes)),
            "cuFuncSetAttribute");
    check(Cu.LaunchKernel(Fn, K->Grid[0], K->Grid[1], K->Grid[2], K->Block[0],
                          K->Block[1], K->Block[2], K->DynamicSharedBytes,
                          nullptr, ArgPtrs.data(), nullptr),
          "cuLaunchKernel");
    check(Cu.CtxSynchronize(), ("kernel " + K->Name).c_str());
    std::printf("launched %s\n", K->Name.c_str());
  }

  // Every written buffer: no poison left, and its byte sum.
  int Status = 0;
  for (size_t I = 0; I < S->Buffers.size(); ++I) {
    const idxmap::SidecarBuffer &B = S->Buffers[I];
    if (!Written[I])
      continue;
    std::vector<uint8_t> Host(B.Bytes);
    check(Cu.MemcpyDtoH(Host.data(), Buffers[I], Host.size()), "cuMemcpyDtoH");
    int64_t W = idxmap::byteWidth(B.Type.Type), Poisoned = 0;
    uint64_t Sum = 0;
    for (size_t E = 0; E + size_t(W) <= Host.size(); E += size_t(W)) {
      bool AllOnes = true;
      for (int64_t J = 0; J < W; ++J) {
        AllOnes &= Host[E + size_t(J)] == 0xff;
        Sum += Host[E + size_t(J)];
      }
      Poisoned += AllOnes;
    }
    // An integer -1 is a value a kernel may write; for floats it is NaN.
    bool Float = B.Type.Type == idxmap::PrimitiveType::F32 ||
                 B.Type.Type == idxmap::PrimitiveType::BF16 ||
                 B.Type.Type == idxmap::PrimitiveType::F16 ||
                 B.Type.Type == idxmap::PrimitiveType::F64;
    std::printf(
        "%s %s: %llu bytes, byte sum %llu%s\n",
        B.BufferKind == idxmap::SidecarBuffer::Kind::Result ? "result"
                                                            : "intermediate",
        B.Name.c_str(), (unsigned long long)B.Bytes, (unsigned long long)Sum,
        Float && Poisoned ? ", NOT WRITTEN" : "");
    if (Float && Poisoned)
      Status = 1;
    if (!OutputDir.empty()) {
      std::string Path = OutputDir + "/" + B.Name + ".bin";
      std::vector<uint8_t> RowMajor = reorder(Host, B.Type, /*ToDevice=*/false);
      std::ofstream F(Path, std::ios::binary);
      F.write(reinterpret_cast<const char *>(RowMajor.data()),
              std::streamsize(RowMajor.size()));
      if (!F.flush()) {
        std::fprintf(stderr, "loader: cannot write %s\n", Path.c_str());
        Status = 1;
      }
    }
  }
  for (CUdeviceptr P : Buffers)
    Cu.MemFree(P);
  for (CUdeviceptr P : Own)
    Cu.MemFree(P);
  return Status;
}
