"""Launch capture: turn one real launch of a Triton kernel into a launch spec (docs/runtime.md).

Triton 3.6's parameter ABI (TRITON.md section 5.3): every non-constexpr argument in signature order,
tuples flattened, host tensor descriptors expanded, then the global and profile scratch pointers.
Buffers are copied to files beside the spec, so the runtime verifies and times candidates on the
very inputs the program used; scalars are written bit-exactly (Triton packs fp16 with
PyFloat_Pack2 and bf16 by truncating the float, and so do we).
"""
import ctypes
import json
import math
import os
import re
import struct

# Triton pointer element types the runtime knows as buffer dtypes.
_BUF_DTYPES = {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64", "i1": "i8", "u1": "u8",
               "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "u8": "u8", "u16": "u16",
               "u32": "u32", "u64": "u64"}
_INT_KINDS = {"i1": "i8", "u1": "u8", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "u8": "u8",
              "u16": "u16", "u32": "u32", "u64": "u64"}
_FLOAT_KINDS = ("fp16", "bf16", "fp32", "f32", "fp64")


class Unsupported(Exception):
    """This launch cannot be expressed as a launch spec; the message says why."""


class DeviceBuffer:
    """One device buffer an argument points at: its address and the bytes readable from it."""

    def __init__(self, ptr, nbytes, read):
        self.ptr = ptr
        self.nbytes = nbytes
        self._read = read  # read(fileobj): writes nbytes bytes

    def write_to(self, f):
        self._read(f)


def _torch_buffer(t):
    """The bytes from a torch tensor's data pointer to the end of its storage."""
    import torch
    if t.device.type != "cuda":
        raise Unsupported("argument on device %s, not cuda" % t.device)
    st = t.untyped_storage()
    off = t.data_ptr() - st.data_ptr()
    n = st.nbytes() - off
    if n < 0 or off < 0:
        raise Unsupported("tensor data pointer outside its storage")

    def read(f):
        if n == 0:
            return
        u8 = torch.empty((0,), dtype=torch.uint8, device=t.device)
        u8.set_(st, off, (n,), (1,))
        host = u8.cpu()  # synchronises with the current stream
        f.write(memoryview((ctypes.c_char * n).from_address(host.data_ptr())))

    return DeviceBuffer(t.data_ptr(), n, read)


def buffer_of(arg):
    """How to read the buffer behind a pointer argument (tests replace this)."""
    mod = type(arg).__module__ or ""
    if mod.startswith("torch") and hasattr(arg, "untyped_storage"):
        return _torch_buffer(arg)
    if isinstance(arg, int):
        if arg == 0:
            return DeviceBuffer(0, 0, lambda f: None)
        raise Unsupported("a raw integer pointer (0x%x): its size is unknown" % arg)
    raise Unsupported("pointer argument of type %s (only torch tensors are captured)" % type(arg).__name__)


def _hexfloat(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float.hex(x)


def _f32(x):
    """C's (float)x, as Triton's pack_fp32 does."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def float_param(kind, value):
    """A float scalar exactly as Triton's launcher packs it."""
    x = float(value)
    if kind in ("fp32", "f32"):
        return {"kind": "fp32", "value": _hexfloat(_f32(x))}
    if kind == "fp64":
        return {"kind": "fp64", "value": _hexfloat(x)}
    if kind == "fp16":  # PyFloat_Pack2: round to nearest even, straight from the double
        bits = struct.unpack("<H", struct.pack("<e", x))[0]
        return {"kind": "bytes", "hex": struct.pack("<H", bits).hex(), "note": "fp16 %r" % x}
    if kind == "bf16":  # the upper half of the float, truncated
        bits = struct.unpack("<I", struct.pack("<f", _f32(x)))[0] >> 16
        return {"kind": "bytes", "hex": struct.pack("<H", bits).hex(), "note": "bf16 %r" % x}
    raise Unsupported("float type %s" % kind)


def int_param(kind, value):
    v = int(value)
    k = _INT_KINDS[kind]
    if kind in ("i1", "u1"):
        v = int(bool(v)) if isinstance(value, bool) else v
    return {"kind": k, "value": v if abs(v) < (1 << 53) else str(v)}


_TD = re.compile(r"tensordesc<([^[>]*)\[([^]]*)\]")


class SpecBuilder:
    """Collects params; buffers are written to files in folder."""

    def __init__(self, folder):
        self.folder = folder
        self.params = []
        self.buffers = []  # (param index, DeviceBuffer, path)
        self.total_bytes = 0
        self.notes = []

    def add_buffer(self, ty, arg, name):
        buf = buffer_of(arg)
        p = {"kind": "ptr", "name": name}
        dt = _BUF_DTYPES.get(ty[1:]) if ty.startswith("*") else None
        if buf.nbytes == 0:
            p["bytes"] = 0
        else:
            path = os.path.join(self.folder, "arg%d.bin" % len(self.params))
            p["bytes"] = buf.nbytes
            p["file"] = path
            if dt:
                p["dtype"] = dt
            self.buffers.append((len(self.params), buf, path))
            self.total_bytes += buf.nbytes
        self.params.append(p)

    def add(self, ty, arg, name, tensordesc_meta):
        if isinstance(ty, (tuple, list)):
            if not isinstance(arg, (tuple, list)) or len(arg) != len(ty):
                raise Unsupported("argument %s: a tuple type with a non-tuple value" % name)
            for i, (t, a) in enumerate(zip(ty, arg)):
                self.add(t, a, "%s[%d]" % (name, i), tensordesc_meta)
            return
        if ty == "constexpr":
            return
        if ty.startswith("*"):
            self.add_buffer(ty, arg, name)
        elif ty.startswith("tensordesc"):
            meta = tensordesc_meta.pop(0) if tensordesc_meta else None
            self.add_tensordesc(ty, arg, name, meta)
        elif ty in _INT_KINDS:
            self.params.append(dict(int_param(ty, arg), name=name))
        elif ty in _FLOAT_KINDS:
            self.params.append(dict(float_param(ty, arg), name=name))
        else:
            raise Unsupported("argument %s of type %s" % (name, ty))

    def add_tensordesc(self, ty, arg, name, meta):
        if meta is not None:
            # The TMA path passes a CUtensorMap over the base tensor, which is not a kernel
            # parameter; the runtime's "tensormap" kind needs its buffer to be one.
            raise Unsupported("argument %s: a TMA tensor descriptor (the launch spec cannot hold a "
                              "buffer that is not a kernel parameter yet)" % name)
        m = _TD.match(ty)
        if not m:
            raise Unsupported("argument %s of type %s" % (name, ty))
        ndim = m.group(2).count(",") + 1
        shape, strides = list(arg.shape), list(arg.strides)
        if len(shape) != ndim or len(strides) != ndim:
            raise Unsupported("argument %s: descriptor rank %d, type says %d" % (name, len(shape), ndim))
        # Triton 3.6 without TMA metadata: base, shape and strides as i64, padding as i1,
        # then shape as i32 and strides as i64 (make_tensordesc_arg).
        self.add_buffer("*" + m.group(1), arg.base, name + ".base")
        for i, v in enumerate(shape + strides):
            self.params.append(dict(int_param("i64", v), name="%s.%s" % (name, "shape" if i < ndim else "stride")))
        self.params.append(dict(int_param("i1", getattr(arg, "padding", None) == "nan"), name=name + ".padding"))
        for v in shape:
            self.params.append(dict(int_param("i32", v), name=name + ".shape"))
        for v in strides:
            self.params.append(dict(int_param("i64", v), name=name + ".stride"))

    def add_scratch(self, name, size_per_program, programs):
        if size_per_program and size_per_program > 0:
            self.params.append({"kind": "ptr", "bytes": int(size_per_program) * programs, "init": "zeros",
                                "verify": False, "name": name})
        else:
            self.params.append({"kind": "ptr", "bytes": 0, "name": name})


def build_spec(folder, kernel_name, signature, arg_names, args, md, grid, capture_limit):
    """The launch spec of one launch (a dict) and the SpecBuilder holding its buffers.

    signature: {arg name: Triton type}; args: the bound argument values in arg_names' order;
    md: the kernel's metadata (num_warps, num_ctas, shared, scratch sizes, tensordesc_meta);
    grid: the user grid (x, y, z)."""
    g = [int(x) for x in grid] + [1] * (3 - len(grid))
    if min(g) <= 0:
        raise Unsupported("empty grid %s" % (tuple(g),))
    num_ctas = int(getattr(md, "num_ctas", 1) or 1)
    if num_ctas != 1:
        raise Unsupported("num_ctas=%d (thread-block clusters are not in the launch spec yet)" % num_ctas)
    if getattr(md, "launch_cooperative_grid", False):
        raise Unsupported("cooperative launch (not in the launch spec yet)")
    if getattr(md, "launch_pdl", False):
        raise Unsupported("programmatic dependent launch (not in the launch spec yet)")
    warp = int(getattr(md, "warp_size", 32) or 32)
    block = int(md.num_warps) * warp
    b = SpecBuilder(folder)
    tdm = list(getattr(md, "tensordesc_meta", None) or [])
    for name, value in zip(arg_names, args):
        b.add(signature[name], value, name, tdm)
    programs = g[0] * g[1] * g[2] * num_ctas
    b.add_scratch("global_scratch", getattr(md, "global_scratch_size", 0), programs)
    b.add_scratch("profile_scratch", getattr(md, "profile_scratch_size", 0), programs)
    if b.total_bytes > capture_limit:
        raise Unsupported("arguments hold %d bytes, over SASSTUNE_CAPTURE_LIMIT (%d)" % (b.total_bytes, capture_limit))
    spec = {
        "kernel": kernel_name,
        "grid": g,
        "block": [block, 1, 1],
        "shared_bytes": int(md.shared),
        "params": b.params,
        "note": "captured by the sasstune Triton adapter at the kernel's first launch",
    }
    return spec, b


def write_capture(spec, builder):
    """Copy every buffer to its file and write launch.json; returns (path, JSON text)."""
    for _, buf, path in builder.buffers:
        with open(path, "wb") as f:
            buf.write_to(f)
    text = json.dumps(spec, indent=1)
    path = os.path.join(builder.folder, "launch.json")
    with open(path, "w") as f:
        f.write(text)
    return path, text
