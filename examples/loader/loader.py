#!/usr/bin/env python3
"""Launch an emitted module with the CUDA driver API through ctypes.

A worked example of the kernel contract (docs/SIDECAR.md) with nothing but
the Python standard library: reads out.ptx and its sidecar out.json, allocates
every buffer of the sidecar's plan, fills the ENTRY parameters (and
intermediates no kernel writes, which a real runtime computes between
launches) with a fixed pattern, poisons the buffers kernels write (0xff),
launches the kernels in launch order (cuModuleLoadData, cuLaunchKernel), and
prints the byte sum of each written buffer: the same lines as examples/loader
(loader.cpp), so the two can be compared.

    loader.py out.ptx [out.json]

libcuda.so.1 (or $IDXMAP_LIBCUDA) is loaded at run time. Exit codes: 0 ok,
1 failure, 2 usage, 77 no driver or no GPU (ctest's SKIP_RETURN_CODE).
"""
import ctypes
import json
import math
import os
import struct
import sys

WIDTH = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2,
         "bf16": 2, "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8,
         "f64": 8, "c64": 8, "c128": 16}
FLOATS = {"f16", "bf16", "f32", "f64"}
MAX_DYNAMIC_SHARED = 8  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES


def pattern(type_, shape):
    """(i mod 17) / 16 - 0.5 for floats (finite through exp and tanh), i mod 7
    for the others, as loader.cpp; built from one period."""
    n = math.prod(shape)
    if type_ == "f32":
        period = struct.pack("<17f", *(i / 16 - 0.5 for i in range(17)))
    elif type_ == "bf16":
        period = b"".join(struct.pack("<f", i / 16 - 0.5)[2:]
                          for i in range(17))
    else:
        period = b"".join(i.to_bytes(8, "little")[:WIDTH[type_]]
                          for i in range(7))
    nbytes = n * (len(period) // (17 if type_ in ("f32", "bf16") else 7))
    return (period * (nbytes // len(period) + 1))[:nbytes]


class Cuda:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)

    def __call__(self, name, *args):
        r = getattr(self.lib, name)(*args)
        if r != 0:
            msg = ctypes.c_char_p()
            self.lib.cuGetErrorString(r, ctypes.byref(msg))
            sys.exit("loader.py: %s: %s" % (name, (msg.value or b"?").decode()))


def main():
    if len(sys.argv) not in (2, 3):
        print("usage: loader.py out.ptx [out.json]", file=sys.stderr)
        return 2
    ptx_path = sys.argv[1]
    json_path = sys.argv[2] if len(sys.argv) == 3 else (
        ptx_path[:-4] if ptx_path.endswith(".ptx") else ptx_path) + ".json"
    with open(ptx_path, "rb") as f:
        ptx = f.read() + b"\0"
    with open(json_path) as f:
        side = json.load(f)
    if side.get("schema_version", 0) > 1:
        sys.exit("loader.py: %s: schema_version %d is newer than 1" %
                 (json_path, side["schema_version"]))
    try:
        cu = Cuda(os.environ.get("IDXMAP_LIBCUDA") or "libcuda.so.1")
        cu("cuInit", 0)
        dev = ctypes.c_int()
        cu("cuDeviceGet", ctypes.byref(dev), 0)
    except (OSError, SystemExit) as e:
        print("loader.py: no CUDA driver or GPU (%s); skipped" % e)
        return 77
    ctx, mod = ctypes.c_void_p(), ctypes.c_void_p()
    cu("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    cu("cuCtxSetCurrent", ctx)
    cu("cuModuleLoadData", ctypes.byref(mod), ctypes.c_char_p(ptx))

    def alloc(nbytes):
        p = ctypes.c_uint64()
        cu("cuMemAlloc_v2", ctypes.byref(p), ctypes.c_size_t(max(nbytes, 1)))
        return p

    def upload(p, data):
        cu("cuMemcpyHtoD_v2", p, ctypes.c_char_p(data), ctypes.c_size_t(len(data)))

    buffers = side.get("buffers", [])
    written = set(p["buffer"] for k in side["kernels"] for p in k["params"]
                  if p["role"] == "output" and "buffer" in p)
    ptrs = []
    for i, b in enumerate(buffers):
        p = alloc(b["bytes"])
        if i in written:
            cu("cuMemsetD8_v2", p, ctypes.c_ubyte(0xff), ctypes.c_size_t(b["bytes"]))
        else:
            upload(p, pattern(b["type"], b["shape"]))
        ptrs.append(p)

    by_name = {k["name"]: k for k in side["kernels"]}
    order = [by_name[n] for n in side.get("launch_order", [])] or side["kernels"]
    for k in order:
        fn = ctypes.c_void_p()
        cu("cuModuleGetFunction", ctypes.byref(fn), mod, k["name"].encode())
        args = []
        for p in k["params"]:
            if "buffer" in p:
                args.append(ptrs[p["buffer"]])
            else:
                q = alloc(WIDTH[p["type"]] * math.prod(p["shape"]))
                upload(q, pattern(p["type"], p["shape"]))
                args.append(q)
        # In-place updates: the output must hold the input's bytes when the
        # kernel starts (it writes only part of it); the buffer plan gives
        # the output its own buffer, so copy.
        for a in k.get("aliases", []):
            if args[a["output"]].value != args[a["input"]].value:
                src = k["params"][a["input"]]
                cu("cuMemcpyDtoD_v2", args[a["output"]], args[a["input"]],
                   ctypes.c_size_t(WIDTH[src["type"]] * math.prod(src["shape"])))
        ws = k.get("workspace_bytes", 0)
        if ws:
            q = alloc(ws)
            cu("cuMemsetD8_v2", q, ctypes.c_ubyte(0), ctypes.c_size_t(ws))
            args.append(q)
        arg_ptrs = (ctypes.c_void_p * len(args))(
            *[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args])
        dyn = k.get("dynamic_shared_bytes", 0)
        if dyn > 48 * 1024:
            cu("cuFuncSetAttribute", fn, MAX_DYNAMIC_SHARED, dyn)
        cu("cuLaunchKernel", fn, *[ctypes.c_uint(x) for x in k["grid"]],
           *[ctypes.c_uint(x) for x in k["block"]], ctypes.c_uint(dyn),
           ctypes.c_void_p(), arg_ptrs, ctypes.c_void_p())
        cu("cuCtxSynchronize")
        print("launched %s" % k["name"])

    status = 0
    for i, b in enumerate(buffers):
        if i not in written:
            continue
        host = ctypes.create_string_buffer(max(b["bytes"], 1))
        cu("cuMemcpyDtoH_v2", host, ptrs[i], ctypes.c_size_t(b["bytes"]))
        data, w = host.raw[:b["bytes"]], WIDTH[b["type"]]
        checksum = sum(data)
        poisoned = sum(data[e:e + w] == b"\xff" * w
                       for e in range(0, len(data) - w + 1, w))
        bad = b["type"] in FLOATS and poisoned
        print("%s %s: %d bytes, byte sum %d%s" % (
            "result" if b["kind"] == "result" else "intermediate", b["name"],
            b["bytes"], checksum, ", NOT WRITTEN" if bad else ""))
        status |= bool(bad)
    return status


if __name__ == "__main__":
    sys.exit(main())
