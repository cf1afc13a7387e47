#!/usr/bin/env python3
"""A probe of the warp-specialized single-pass scan (issue 18) before it is
built into the scan emitter: the design written as a CUDA kernel, compiled
by NVRTC through CuPy, checked exactly and timed against a plain copy of the
same bytes and torch.cumsum (CUB's DeviceScan) on the same GPU.

The 1-D cumsum of f32[2^28] has stayed at 1.40 x the copy limit on the H200
since the eighteenth session: a block's tile goes through its load, fold,
look-back, scan and stores in turn, and neither more blocks per SM, rings
of shared stages nor fewer look-backs hid that serial path (bench/RESULTS.md,
sessions 15-32). CUB's newest scan (the "warpspeed" kernel in CCCL) splits a
persistent block into squads that each do one step for a stream of tiles:
  - a load warp takes tiles in launch order from a counter and copies each
    into one of S shared stages with a 1-D bulk copy (cp.async.bulk,
    completion counted on the stage's mbarrier), so S - 1 tiles stay in
    flight whatever the other squads wait on;
  - a reduce squad folds each staged tile and publishes its aggregate at
    once (here one step of NW warps, each folding the part one scan warp
    will store);
  - one look-back warp chains the tiles: it knows the inclusive prefix of
    its block's previous tile, so it only folds the aggregates between that
    tile and the current one (8 descriptors a lane in one round trip) and
    stops early at any inclusive prefix it meets;
  - NW scan-store warps scan the staged tile after the look-back's prefix
    and store it from registers, 16-byte vectors, a warp's stores
    contiguous.
Squads meet only at mbarriers (full, aggregate, prefix and empty, one of
each per stage), never at a block barrier.

Inputs are random +-1 floats, so every partial sum is an exact integer in
f32 and the result is compared exactly with an int64 cumsum.

  python3 bench/scan_pipeline_probe.py LOG2N REPS [NW,U,S,LB,STORE[,BPS] ...]

NW warps a squad, U 16-byte vectors a lane (a tile of NW x 32 x U x 4
f32), S stages, LB descriptors a look-back lane reads at once, STORE one of
st, cs, cg, wt (the scan-store's store: plain, evict-first, L2 only,
write-through), BPS blocks per SM. Prints the median, min and max of REPS
launches (CUDA events; each launch after the descriptors and counter are
cleared) and the ratio to the copy's median.
"""
import sys
import numpy as np
import cupy as cp

SRC = r'''
#define WS_T (WS_NW * 32 * WS_U * 4)
#if STOREKIND == 0
#define STORE(p, v) (*(p) = (v))
#elif STOREKIND == 1
#define STORE(p, v) __stcs(p, v)
#elif STOREKIND == 2
#define STORE(p, v) __stcg(p, v)
#else
#define STORE(p, v) __stwt(p, v)
#endif
#define TBYTES (WS_T * 4)
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbInit(unsigned long long* b, unsigned c) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(sa(b)), "r"(c) : "memory"); }
__device__ __forceinline__ void mbWait(unsigned long long* b, unsigned par) {
  asm volatile("{\n .reg .pred P1;\n LAB_WAIT:\n"
               " mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
               " @P1 bra DONE;\n bra LAB_WAIT;\n DONE:\n}" :: "r"(sa(b)), "r"(par) : "memory"); }
__device__ __forceinline__ void mbArrive(unsigned long long* b) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}" :: "r"(sa(b)) : "memory"); }
__device__ __forceinline__ void mbArriveTx(unsigned long long* b, unsigned bytes) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}"
               :: "r"(sa(b)), "r"(bytes) : "memory"); }
__device__ __forceinline__ void bulkLoad(void* dst, const void* src, unsigned bytes, unsigned long long* b) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(sa(dst)), "l"(src), "r"(bytes), "r"(sa(b)) : "memory"); }
__device__ __forceinline__ void publish(unsigned long long* st, int t, unsigned status, float v) {
  unsigned long long w = ((unsigned long long)status << 32) | (unsigned)__float_as_int(v);
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" :: "l"(st + t), "l"(w) : "memory"); }
__device__ __forceinline__ unsigned long long peek(const unsigned long long* st, int t) {
  unsigned long long w;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w) : "l"(st + t) : "memory");
  return w; }
__device__ __forceinline__ float warpSum(float v) {
  for (int d = 16; d; d >>= 1) v += __shfl_xor_sync(~0u, v, d);
  return v; }

extern "C" __global__ void __launch_bounds__((2 * WS_NW + 2) * 32, WS_BPS)
wsScan(const float* __restrict__ in, float* __restrict__ out, unsigned long long* states,
       unsigned* counter, int numTiles) {
  extern __shared__ __align__(128) unsigned char smem[];
  float* buf = (float*)smem;
  unsigned long long* full = (unsigned long long*)(smem + (size_t)WS_S * TBYTES);
  unsigned long long* aggReady = full + WS_S;
  unsigned long long* exclReady = aggReady + WS_S;
  unsigned long long* empty = exclReady + WS_S;
  int* tileIdx = (int*)(empty + WS_S);
  float* agg = (float*)(tileIdx + WS_S);
  float* excl = agg + WS_S;
  float* warpSums = excl + WS_S;  // [WS_S][WS_NW]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < WS_S; ++s) {
      mbInit(&full[s], 1); mbInit(&aggReady[s], 1); mbInit(&exclReady[s], 1); mbInit(&empty[s], WS_NW);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (warp == 2 * WS_NW) {  // load warp
    if (lane != 0) return;
    for (int it = 0;; ++it) {
      int s = it % WS_S; unsigned ph = (it / WS_S) & 1;
      if (it >= WS_S) mbWait(&empty[s], ph ^ 1);
      int t = (int)atomicAdd(counter, 1u);
      if (t < numTiles) {
        tileIdx[s] = t;
        mbArriveTx(&full[s], TBYTES);
        bulkLoad(buf + (size_t)s * WS_T, in + (size_t)t * WS_T, TBYTES, &full[s]);
      } else {
        tileIdx[s] = -1;
        mbArrive(&full[s]);
        return;
      }
    }
  }

  if (warp < WS_NW) {  // reduce squad
    for (int it = 0;; ++it) {
      int s = it % WS_S; unsigned ph = (it / WS_S) & 1;
      mbWait(&full[s], ph);
      int t = tileIdx[s];
      if (t < 0) return;
      const float4* b = (const float4*)(buf + (size_t)s * WS_T) + warp * 32 * WS_U;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < WS_U; ++j) { float4 v = b[j * 32 + lane]; sum += (v.x + v.y) + (v.z + v.w); }
      sum = warpSum(sum);
      if (lane == 0) warpSums[s * WS_NW + warp] = sum;
      asm volatile("bar.sync 1, %0;" :: "n"(WS_NW * 32) : "memory");
      if (threadIdx.x == 0) {
        float a = 0.f;
        for (int w = 0; w < WS_NW; ++w) a += warpSums[s * WS_NW + w];
        agg[s] = a;
        publish(states, t, 1u, a);
        mbArrive(&aggReady[s]);
      }
    }
  }

  if (warp == 2 * WS_NW + 1) {  // look-back warp
    int prevIdx = -1; float prevIncl = 0.f;
    for (int it = 0;; ++it) {
      int s = it % WS_S; unsigned ph = (it / WS_S) & 1;
      mbWait(&full[s], ph);
      int t = tileIdx[s];
      if (t < 0) return;
      const int W = 32 * WS_LB;
      int hi = t - 1; float acc = 0.f;
      if (hi == prevIdx) acc = prevIncl;
      else while (true) {
        unsigned long long st[WS_LB];
        int bp;
        const int pb = hi - prevIdx;  // position of the tile whose inclusive prefix is known
        while (true) {
          int myb = 0x7fffffff;
#pragma unroll
          for (int k = 0; k < WS_LB; ++k) {
            int p = k * 32 + lane, tile = hi - p;
            st[k] = p < pb ? peek(states, tile) : 0ull;
            if (p < pb && (st[k] >> 32) == 2u) myb = min(myb, p);
          }
          bp = min(__reduce_min_sync(~0u, myb), pb);
          bool bad = false;
#pragma unroll
          for (int k = 0; k < WS_LB; ++k) {
            int p = k * 32 + lane;
            if (p < bp && (st[k] >> 32) == 0u) bad = true;
          }
          if (!__any_sync(~0u, bad)) break;
        }
        float part = 0.f, mine = 0.f;
#pragma unroll
        for (int k = 0; k < WS_LB; ++k) {
          int p = k * 32 + lane;
          float v = __int_as_float((int)(unsigned)st[k]);
          if (p < bp) part += v;
          if (p == bp) mine = v;
        }
        acc += warpSum(part);
        if (bp < W) {
          float bv = bp == pb ? prevIncl : __shfl_sync(~0u, mine, bp % 32);
          acc += bv;
          break;
        }
        hi -= W;
        if (hi == prevIdx) { acc += prevIncl; break; }
      }
      mbWait(&aggReady[s], ph);
      float incl = acc + agg[s];
      if (lane == 0) {
        publish(states, t, 2u, incl);
        excl[s] = acc;
        mbArrive(&exclReady[s]);
      }
      prevIdx = t; prevIncl = incl;
    }
  }

  if (warp >= WS_NW && warp < 2 * WS_NW) {  // scan-store squad
    const int w = warp - WS_NW;
    for (int it = 0;; ++it) {
      int s = it % WS_S; unsigned ph = (it / WS_S) & 1;
      mbWait(&full[s], ph);
      int t = tileIdx[s];
      if (t < 0) return;
      const float4* b = (const float4*)(buf + (size_t)s * WS_T) + w * 32 * WS_U;
      float4 v[WS_U]; float tot[WS_U];
#pragma unroll
      for (int j = 0; j < WS_U; ++j) {
        v[j] = b[j * 32 + lane];
        v[j].y += v[j].x; v[j].z += v[j].y; v[j].w += v[j].z; tot[j] = v[j].w;
      }
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
#pragma unroll
        for (int j = 0; j < WS_U; ++j) {
          float n = __shfl_up_sync(~0u, tot[j], d);
          if (lane >= d) tot[j] += n;
        }
      }
      float run = 0.f, base[WS_U];
#pragma unroll
      for (int j = 0; j < WS_U; ++j) {
        base[j] = run + tot[j] - v[j].w;
        run += __shfl_sync(~0u, tot[j], 31);
      }
      mbWait(&aggReady[s], ph);
      float carry = 0.f;
      for (int q = 0; q < w; ++q) carry += warpSums[s * WS_NW + q];
      mbWait(&exclReady[s], ph);
      carry += excl[s];
      __syncwarp();
      if (lane == 0) mbArrive(&empty[s]);
      float4* o = (float4*)(out + (size_t)t * WS_T) + w * 32 * WS_U;
#pragma unroll
      for (int j = 0; j < WS_U; ++j) {
        float c = carry + base[j];
        float4 r = make_float4(v[j].x + c, v[j].y + c, v[j].z + c, v[j].w + c);
        STORE(&o[j * 32 + lane], r);
      }
    }
  }
}

extern "C" __global__ void copy4(const float4* __restrict__ a, float4* __restrict__ b, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    b[i] = a[i];
}
'''


def smem_bytes(nw, u, s):
    t = nw * 32 * u * 4
    return s * t * 4 + 4 * s * 8 + s * 4 * 3 + s * nw * 4


def build(nw, u, s, lb, store, bps):
    opts = ('-std=c++17', f'-DWS_BPS={bps}', f'-DWS_NW={nw}', f'-DWS_U={u}', f'-DWS_S={s}', f'-DWS_LB={lb}', f'-DSTOREKIND={store}')
    mod = cp.RawModule(code=SRC, options=opts)
    k = mod.get_function('wsScan')
    k.max_dynamic_shared_size_bytes = smem_bytes(nw, u, s)
    return mod, k


def timeit(fn, reps):
    ts = []
    for _ in range(reps):
        fn(pre=True)
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(); fn(pre=False); b.record(); b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b) * 1000)
    ts.sort()
    return ts[len(ts) // 2], ts[0], ts[-1]


def main():
    n = 1 << int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 28
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    dev = cp.cuda.Device()
    sms = dev.attributes['MultiProcessorCount']
    print('device', cp.cuda.runtime.getDeviceProperties(0)['name'].decode(), 'sms', sms, 'n', n)
    rng = np.random.default_rng(7)
    host = (rng.integers(0, 2, n, dtype=np.int8) * 2 - 1).astype(np.float32)
    x = cp.asarray(host)
    ref = cp.cumsum(x.astype(cp.int64))
    y = cp.empty_like(x)
    mod0 = cp.RawModule(code=SRC, options=('-std=c++17', '-DWS_NW=1', '-DWS_U=1', '-DWS_S=1', '-DWS_LB=1', '-DSTOREKIND=0', '-DWS_BPS=1'))
    cpy = mod0.get_function('copy4')

    def copy(pre):
        if not pre:
            cpy((sms * 8,), (512,), (x, y, cp.int64(n // 4)))
    res = {}
    res['copy'] = timeit(copy, reps)
    print('copy    med %.1f min %.1f max %.1f us' % res['copy'])
    try:
        import torch
        tx = torch.as_tensor(x, device='cuda')
        def tcum(pre):
            if not pre:
                torch.cumsum(tx, 0)
        res['torch'] = timeit(tcum, reps)
        print('torch   med %.1f min %.1f max %.1f us' % res['torch'])
    except Exception as e:
        print('torch unavailable', e)
    configs = []
    for spec in sys.argv[3:]:
        f = spec.split(',')
        configs.append((int(f[0]), int(f[1]), int(f[2]), int(f[3]), f[4], int(f[5]) if len(f) > 5 else 1))
    if not configs:
        configs = [(4, 8, 12, 8, 'st', 1)]
    for nw, u, s, lb, st, bps in configs:
        store = {'st': 0, 'cs': 1, 'cg': 2, 'wt': 3}[st]
        t = nw * 32 * u * 4
        if n % t:
            print('skip', nw, u, s, lb, st, 'n % tile'); continue
        if smem_bytes(nw, u, s) * bps > 227 * 1024:
            print('skip', nw, u, s, lb, st, 'smem'); continue
        try:
            mod, k = build(nw, u, s, lb, store, bps)
            k.max_dynamic_shared_size_bytes
        except Exception as e:
            print('build failed', nw, u, s, lb, st, str(e)[:3000]); sys.stdout.flush(); continue
        tiles = n // t
        states = cp.zeros(tiles, dtype=cp.uint64)
        counter = cp.zeros(1, dtype=cp.uint32)
        y.fill(cp.nan)
        def run(pre):
            if pre:
                states.fill(0); counter.fill(0)
            else:
                k((sms * bps,), ((2 * nw + 2) * 32,), (x, y, states, counter, cp.int32(tiles)),
                  shared_mem=smem_bytes(nw, u, s))
        run(True); run(False); cp.cuda.Device().synchronize()
        bad = int(cp.count_nonzero(y.astype(cp.int64) != ref))
        med, lo, hi = timeit(run, reps)
        print('ws nw=%d u=%d s=%d lb=%d %s bps=%d tile=%d: med %.1f min %.1f max %.1f us  x copy %.3f  mismatches %d'
              % (nw, u, s, lb, st, bps, t, med, lo, hi, med / res['copy'][0], bad))
        sys.stdout.flush()


if __name__ == '__main__':
    main()
