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

    loader.py out.ptx [out.json] [--inputs DIR] [--output-dir DIR]

--inputs DIR reads each input buffer from DIR/NAME.bin (NAME: the sidecar
buffer's name, KERNEL.PARAM for a kernel parameter outside the plan), raw
little-endian row-major bytes, as `idxmap run --output-dir DIR` writes them;
--output-dir DIR writes each buffer the kernels wrote to DIR/NAME.bin the same
way (DIR must exist). A buffer whose layout is not row-major is converted
between the files' row-major order and the device's layout order.

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


def device_order(shape, layout):
    """For each element in device order (the layout's minor-most dimension
    fastest), its row-major index."""
    rank = len(shape)
    strides = [1] * rank
    for d in range(rank - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    order, idx, logical = [], [0] * rank, 0
    for _ in range(math.prod(shape)):
        order.append(logical)
        for d in layout:
            logical += strides[d]
            idx[d] += 1
            if idx[d] < shape[d]:
                break
            logical -= strides[d] * idx[d]
            idx[d] = 0
    return order


def reorder(data, type_, shape, layout, to_device):
    """Row-major bytes to device order (to_device) or back."""
    if list(layout) == list(range(len(shape) - 1, -1, -1)):
        return data
    w = WIDTH[type_]
    out = bytearray(len(data))
    for p, l in enumerate(device_order(shape, layout)):
        if to_device:
            out[p * w:(p + 1) * w] = data[l * w:(l + 1) * w]
        else:
            out[l * w:(l + 1) * w] = data[p * w:(p + 1) * w]
    return bytes(out)


def default_layout(shape):
    return list(range(len(shape) - 1, -1, -1))


def input_bytes(inputs, name, t):
    """The device bytes of input `name` (t: a buffer or parameter of the
    sidecar): the pattern, or DIR/NAME.bin with --inputs."""
    layout = t.get("layout") or default_layout(t["shape"])
    if inputs is None:
        return pattern(t["type"], t["shape"])
    path = os.path.join(inputs, name + ".bin")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.exit("loader.py: cannot read %s: %s" % (path, e.strerror))
    need = WIDTH[t["type"]] * math.prod(t["shape"])
    if len(data) != need:
        sys.exit("loader.py: %s has %d bytes, %s needs %d" %
                 (path, len(data), name, need))
    return reorder(data, t["type"], t["shape"], layout, True)


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
    args, options = [], {"--inputs": None, "--output-dir": None}
    argv = sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a in options and argv:
            options[a] = argv.pop(0)
        elif a.startswith("-"):
            args = None
            break
        else:
            args.append(a)
    if not args or len(args) > 2:
        print("usage: loader.py out.ptx [out.json] [--inputs DIR] "
              "[--output-dir DIR]", file=sys.stderr)
        return 2
    inputs, output_dir = options["--inputs"], options["--output-dir"]
    ptx_path = args[0]
    json_path = args[1] if len(args) == 2 else (
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
        # Whole 4-byte words, as the sidecar's contract asks (SIDECAR.md).
        cu("cuMemAlloc_v2", ctypes.byref(p),
           ctypes.c_size_t(max((nbytes + 3) // 4 * 4, 4)))
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
            upload(p, input_bytes(inputs, b["name"], b))
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
                upload(q, input_bytes(inputs, k["name"] + "." + p["name"], p))
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
        if output_dir is not None:
            layout = b.get("layout") or default_layout(b["shape"])
            with open(os.path.join(output_dir, b["name"] + ".bin"), "wb") as f:
                f.write(reorder(data, b["type"], b["shape"], layout, False))
    return status


if __name__ == "__main__":
    sys.exit(main())
