/*===- fake_libcuda.c - A CUDA driver without a GPU, for plumbing tests ---===*
 *
 * Part of idxmap's tests. Loaded through $IDXMAP_LIBCUDA in place of
 * libcuda.so.1, it lets `idxmap run --output-dir` and the loaders of
 * examples/loader run end to end on a machine without a GPU (ctest
 * loader.fake_driver). Device memory is host memory; a "kernel" computes
 * no HLO but a fixed function of its launch: every argument buffer that is
 * poisoned (all bytes 0xff) when the kernel starts gets bytes derived from
 * the kernel's name and the contents of all its other arguments, in order.
 * So two programs that wire the same buffers, inputs and aliases into the
 * same launches write the same bytes, and any difference in an input's
 * bytes, the argument order, the launch order, an intermediate passed
 * between kernels or an aliased output's initial copy shows in the outputs.
 * It proves the plumbing, not the kernels (gpu.loader.run does that).
 *
 *===----------------------------------------------------------------------===*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum { MaxAllocs = 4096 };
static struct {
  unsigned char *Ptr;
  size_t Size;
} Allocs[MaxAllocs];

static int findAlloc(CUdeviceptr P) {
  for (int I = 0; I < MaxAllocs; ++I)
    if (Allocs[I].Ptr && (CUdeviceptr)(uintptr_t)Allocs[I].Ptr == P)
      return I;
  return -1;
}

CUresult cuInit(unsigned Flags) { return 0; }
CUresult cuDriverGetVersion(int *V) {
  *V = 12040;
  return 0;
}
CUresult cuGetErrorName(CUresult R, const char **S) {
  *S = "CUDA_ERROR_FAKE";
  return 0;
}
CUresult cuGetErrorString(CUresult R, const char **S) {
  *S = "fake driver error";
  return 0;
}
CUresult cuDeviceGetCount(int *N) {
  *N = 1;
  return 0;
}
CUresult cuDeviceGet(int *D, int Ordinal) {
  *D = Ordinal;
  return Ordinal == 0 ? 0 : 100;
}
CUresult cuDeviceGetName(char *Name, int Len, int D) {
  strncpy(Name, "fake sm_90 (no GPU)", (size_t)Len);
  return 0;
}
CUresult cuDeviceGetAttribute(int *V, int Attr, int D) {
  switch (Attr) {
  case 75: /* compute capability */
    *V = 9;
    return 0;
  case 76:
    *V = 0;
    return 0;
  case 16: /* SMs */
    *V = 132;
    return 0;
  case 38: /* L2 */
    *V = 50 << 20;
    return 0;
  case 97: /* shared memory per block, opt-in */
    *V = 227 << 10;
    return 0;
  case 39:
    *V = 2048;
    return 0;
  case 36:
    *V = 2619000;
    return 0;
  case 37:
    *V = 5120;
    return 0;
  }
  return 1; /* the device model keeps its preset */
}
CUresult cuDeviceTotalMem_v2(size_t *B, int D) {
  *B = (size_t)1 << 34;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **C, int D) {
  *C = (void *)Allocs;
  return 0;
}
CUresult cuDevicePrimaryCtxRelease(int D) { return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int D) { return 0; }
CUresult cuCtxSetCurrent(void *C) { return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
/* A module handle is a copy of its PTX. */
CUresult cuModuleLoadDataEx(void **M, const void *Image, unsigned N, int *O,
                            void **V) {
  size_t Len = strlen(Image) + 1;
  char *Copy = malloc(Len);
  memcpy(Copy, Image, Len);
  *M = Copy;
  return 0;
}
CUresult cuModuleLoadData(void **M, const void *Image) {
  return cuModuleLoadDataEx(M, Image, 0, 0, 0);
}
CUresult cuModuleUnload(void *M) {
  free(M);
  return 0;
}
/* A function: its name and its number of parameters, counted in the PTX's
   `.entry NAME(.param ..., .param ...)`. */
struct Function {
  int NumParams;
  char Name[1];
};
CUresult cuModuleGetFunction(void **F, void *M, const char *Name) {
  const char *Ptx = M, *At = Ptx;
  size_t N = strlen(Name);
  for (;;) {
    At = strstr(At, ".entry ");
    if (!At)
      return 500; /* not found */
    At += 7;
    if (strncmp(At, Name, N) == 0 && At[N] == '(')
      break;
  }
  const char *End = strchr(At, ')');
  struct Function *Fn = malloc(sizeof(struct Function) + N);
  memcpy(Fn->Name, Name, N + 1);
  Fn->NumParams = 0;
  for (const char *P = strstr(At, ".param"); P && End && P < End;
       P = strstr(P + 6, ".param"))
    ++Fn->NumParams;
  *F = Fn;
  return 0;
}
CUresult cuFuncGetAttribute(int *V, int Attr, void *F) {
  *V = Attr == 0 ? 1024 : 0;
  return 0;
}
CUresult cuFuncSetAttribute(void *F, int Attr, int V) { return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr *P, size_t Size) {
  for (int I = 0; I < MaxAllocs; ++I)
    if (!Allocs[I].Ptr) {
      Allocs[I].Ptr = malloc(Size ? Size : 1);
      Allocs[I].Size = Size;
      *P = (CUdeviceptr)(uintptr_t)Allocs[I].Ptr;
      return 0;
    }
  return 2; /* out of memory */
}
CUresult cuMemFree_v2(CUdeviceptr P) {
  int I = findAlloc(P);
  if (I < 0)
    return 1;
  free(Allocs[I].Ptr);
  Allocs[I].Ptr = 0;
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr D, const void *S, size_t N) {
  memcpy((void *)(uintptr_t)D, S, N);
  return 0;
}
CUresult cuMemcpyHtoD(CUdeviceptr D, const void *S, size_t N) {
  return cuMemcpyHtoD_v2(D, S, N);
}
CUresult cuMemcpyDtoH_v2(void *D, CUdeviceptr S, size_t N) {
  memcpy(D, (const void *)(uintptr_t)S, N);
  return 0;
}
CUresult cuMemcpyDtoH(void *D, CUdeviceptr S, size_t N) {
  return cuMemcpyDtoH_v2(D, S, N);
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr D, CUdeviceptr S, size_t N) {
  memmove((void *)(uintptr_t)D, (const void *)(uintptr_t)S, N);
  return 0;
}
CUresult cuMemsetD8_v2(CUdeviceptr D, unsigned char V, size_t N) {
  memset((void *)(uintptr_t)D, V, N);
  return 0;
}
CUresult cuMemsetD8(CUdeviceptr D, unsigned char V, size_t N) {
  return cuMemsetD8_v2(D, V, N);
}

static uint64_t mix(uint64_t H, const unsigned char *P, size_t N) {
  for (size_t I = 0; I < N; ++I)
    H = (H ^ P[I]) * 1099511628211ull; /* FNV-1a */
  return H;
}

static uint64_t splitmix(uint64_t *S) {
  uint64_t Z = (*S += 0x9e3779b97f4a7c15ull);
  Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
  Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
  return Z ^ (Z >> 31);
}

CUresult cuLaunchKernel(void *F, unsigned GX, unsigned GY, unsigned GZ,
                        unsigned BX, unsigned BY, unsigned BZ, unsigned Shared,
                        void *Stream, void **Params, void **Extra) {
  const struct Function *Fn = F;
  const char *Name = Fn->Name;
  int Arg[64], NumArgs = 0, Poisoned[64];
  if (Fn->NumParams > 64)
    return 1;
  /* Every parameter of idxmap's kernels is a buffer. */
  for (; NumArgs < Fn->NumParams; ++NumArgs) {
    int I = findAlloc(*(CUdeviceptr *)Params[NumArgs]);
    if (I < 0)
      return 1; /* not an allocation: CUDA_ERROR_INVALID_VALUE */
    Arg[NumArgs] = I;
    Poisoned[NumArgs] = Allocs[I].Size > 0;
    for (size_t B = 0; B < Allocs[I].Size && Poisoned[NumArgs]; ++B)
      Poisoned[NumArgs] = Allocs[I].Ptr[B] == 0xff;
  }
  uint64_t H = mix(14695981039346656037ull, (const unsigned char *)Name,
                   strlen(Name));
  for (int K = 0; K < NumArgs; ++K)
    if (!Poisoned[K])
      H = mix(H, Allocs[Arg[K]].Ptr, Allocs[Arg[K]].Size);
  for (int K = 0; K < NumArgs; ++K) {
    if (!Poisoned[K])
      continue;
    uint64_t S = H ^ (uint64_t)K;
    for (size_t B = 0; B < Allocs[Arg[K]].Size; ++B)
      Allocs[Arg[K]].Ptr[B] = (unsigned char)(splitmix(&S) & 0x7f);
  }
  return 0;
}

CUresult cuEventCreate(void **E, unsigned Flags) {
  *E = (void *)Allocs;
  return 0;
}
CUresult cuEventDestroy_v2(void *E) { return 0; }
CUresult cuEventRecord(void *E, void *S) { return 0; }
CUresult cuEventSynchronize(void *E) { return 0; }
CUresult cuEventElapsedTime(float *Ms, void *A, void *B) {
  *Ms = 0.001f;
  return 0;
}
CUresult cuEventElapsedTime_v2(float *Ms, void *A, void *B) {
  return cuEventElapsedTime(Ms, A, B);
}
