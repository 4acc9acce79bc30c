"""Launch capture: turn one real launch of a Triton kernel into a launch spec (docs/runtime.md).

Triton 3.6's parameter ABI (TRITON.md section 5.3): every non-constexpr argument in signature order,
tuples flattened, host tensor descriptors expanded, then the global and profile scratch pointers.
Buffers are copied to files beside the spec, so the runtime verifies and times candidates on the
very inputs the program used; scalars are written bit-exactly (Triton packs fp16 with
PyFloat_Pack2 and bf16 by truncating the float, and so do we).

A host tensor descriptor (triton.tools.tensor_descriptor.TensorDescriptor) lowered to TMA (an
entry in metadata.tensordesc_meta) is passed as a 128-byte CUtensorMap, then its shape (i32 each)
and strides (i64 each).  The tensor behind it is no kernel parameter: it becomes one of the spec's
hidden `buffers` (captured into a file like a pointer argument's tensor), and the `tensormap`
param names it with `"buffer"` (docs/runtime.md).  The CUtensorMap is described as Triton's
launcher encodes it (make_tensordesc_arg and fillTMADescriptor in triton/backends/nvidia/).
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

# Host TMA descriptors as Triton 3.6's launcher encodes them (triton/backends/nvidia/driver.py,
# make_tensordesc_arg; driver.c, fillTMADescriptor).  tensordesc_meta's elem_type is the device's
# enum, mapped to CUtensorMapDataType by this copy of the driver's TMA_DTYPE_DEVICE_TO_HOST (the
# tests check it against Triton's, and the tables below against the CUDA header Triton ships).
TMA_DTYPE_DEVICE_TO_HOST = dict((i, i) for i in range(16))
TMA_DTYPE_DEVICE_TO_HOST[8] = 10
TMA_DTYPE_DEVICE_TO_HOST[9] = 8
TMA_DTYPE_DEVICE_TO_HOST[10] = 9
# CUtensorMapDataType -> (the runtime's tensormap dtype, bytes): the types the runtime encodes
TMA_DTYPES = {0: ("u8", 1), 1: ("u16", 2), 3: ("i32", 4), 4: ("u64", 8), 5: ("i64", 8), 6: ("fp16", 2),
              7: ("fp32", 4), 8: ("fp64", 8), 9: ("bf16", 2)}
# CUtensorMapSwizzle -> the runtime's swizzle name (the 128B_ATOM modes are not encoded by it)
TMA_SWIZZLE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}
TMA_MAX_RANK = 5



class TmaDescriptor:
    """A host descriptor as Triton 3.6's launcher passes it (see tma_tensormap)."""

    def __init__(self, elt, span, params):
        self.elt = elt        # the signature's element type ("fp16", ...)
        self.span = span      # bytes the descriptor reaches from the base pointer
        self.params = params  # the tensormap param ("buffer" left to the caller), shape i32s, stride i64s


def tma_tensormap(name, ty, desc, meta):
    """Check host TMA descriptor argument `name` (Triton type `ty`, a TensorDescriptor `desc`, its
    tensordesc_meta entry `meta`) and describe it as Triton 3.6's launcher encodes and passes it
    (make_tensordesc_arg, fillTMADescriptor): a tensormap param, then the shape as i32 and the
    strides as i64.  Shared by the adapter's capture and bench/spec.py.  Raises Unsupported for
    what the runtime cannot encode."""
    m = _TD.match(ty)
    if not m:
        raise Unsupported("argument %s of type %s" % (name, ty))
    elt, ndim = m.group(1), m.group(2).count(",") + 1
    try:
        shape, strides = [int(x) for x in desc.shape], [int(x) for x in desc.strides]
        block = [int(x) for x in meta["block_size"]]
        swz, elem_size, elem_type = int(meta["swizzle"]), int(meta["elem_size"]), int(meta["elem_type"])
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise Unsupported("argument %s: not a host tensor descriptor with TMA metadata (%s: %s)" %
                          (name, type(e).__name__, e))
    if not (len(shape) == len(strides) == len(block) == ndim):
        raise Unsupported("argument %s: descriptor rank %d (strides %d), TMA block rank %d, type says %d" %
                          (name, len(shape), len(strides), len(block), ndim))
    if ndim > TMA_MAX_RANK:
        raise Unsupported("argument %s: rank %d, TMA takes at most %d" % (name, ndim, TMA_MAX_RANK))
    if strides[-1] != 1:
        raise Unsupported("argument %s: the innermost stride is %d, TMA needs 1" % (name, strides[-1]))
    if not (all(1 <= d <= 1 << 32 for d in shape) and all(1 <= st <= 1 << 40 for st in strides)):
        raise Unsupported("argument %s: shape %s, strides %s (a tensormap takes dimensions from 1 to 2^32 and "
                          "strides from 1 to 2^40 elements)" % (name, shape, strides))
    if meta.get("fp4_padded"):
        shape[-1] *= 2  # as make_tensordesc_arg: the CUtensorMap and the scalars both see it
    host = TMA_DTYPE_DEVICE_TO_HOST.get(elem_type)
    tdt = TMA_DTYPES.get(host)
    if tdt is None or tdt[1] != elem_size:
        raise Unsupported("argument %s: TMA element type %d (CUtensorMapDataType %s, %d bytes) is not one the "
                          "runtime encodes" % (name, elem_type, host, elem_size))
    swizzle = TMA_SWIZZLE.get(swz)
    if swizzle is None:
        raise Unsupported("argument %s: TMA swizzle mode %d (CUtensorMapSwizzle; the runtime encodes none, "
                          "32B, 64B and 128B)" % (name, swz))
    if not all(1 <= b <= 256 for b in block):
        raise Unsupported("argument %s: TMA box %s (each dimension 1 to 256)" % (name, block))
    span = (sum((d - 1) * st for d, st in zip(shape, strides)) + 1) * elem_size
    params = [{"kind": "tensormap", "buffer": None, "dtype": tdt[0], "shape": shape, "strides": strides,
               "box": block, "element_strides": [1] * ndim, "swizzle": swizzle, "interleave": "none",
               "l2_promotion": "128B", "oob_fill": "nan" if getattr(desc, "padding", None) == "nan" else "none",
               "name": name}]
    params += [dict(int_param("i32", v), name="%s.shape[%d]" % (name, i)) for i, v in enumerate(shape)]
    params += [dict(int_param("i64", v), name="%s.strides[%d]" % (name, i)) for i, v in enumerate(strides)]
    return TmaDescriptor(elt, span, params)

class SpecBuilder:
    """Collects params; buffers are written to files in folder."""

    def __init__(self, folder):
        self.folder = folder
        self.params = []
        self.hidden = []  # the spec's top-level "buffers" (tensors behind host TMA descriptors)
        self.buffers = []  # (where: a param index or "buffers[i]", DeviceBuffer, path): the files to write
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
            self.add_tma_descriptor(ty, arg, name, meta)
            return
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

    def add_tma_descriptor(self, ty, arg, name, meta):
        """A host descriptor lowered to TMA: the tensor behind it as a hidden buffer, a tensormap
        param over that buffer, then shape (i32) and strides (i64), as make_tensordesc_arg."""
        t = tma_tensormap(name, ty, arg, meta)
        base = getattr(arg, "base", None)
        try:
            buf = buffer_of(base)
        except Unsupported as e:
            raise Unsupported("argument %s: the tensor behind the descriptor: %s" % (name, e))
        if buf.nbytes == 0 or t.span > buf.nbytes:
            raise Unsupported("argument %s: the descriptor spans %d bytes but its tensor's storage has %d from the "
                              "base pointer" % (name, t.span, buf.nbytes))
        index = len(self.hidden)
        path = os.path.join(self.folder, "buf%d.bin" % index)
        hb = {"dtype": _BUF_DTYPES.get(t.elt), "bytes": buf.nbytes, "file": path, "name": name + ".base",
              "note": "the tensor behind host TMA descriptor %s (not a kernel parameter)" % name}
        if hb["dtype"] is None:  # e.g. fp8: no runtime dtype, compared byte for byte
            del hb["dtype"]
        self.hidden.append(hb)
        self.buffers.append(("buffers[%d]" % index, buf, path))
        self.total_bytes += buf.nbytes
        t.params[0]["buffer"] = index
        self.params += t.params

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
    n_meta = len(tdm)
    for name, value in zip(arg_names, args):
        b.add(signature[name], value, name, tdm)
    if n_meta and tdm:  # Triton's launcher asserts one entry per descriptor argument
        raise Unsupported("tensordesc_meta has %d entries, the signature %d tensor descriptors" %
                          (n_meta, n_meta - len(tdm)))
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
    }
    if b.hidden:
        spec["buffers"] = b.hidden
    spec["params"] = b.params
    spec["note"] = "captured by the sasstune Triton adapter at the kernel's first launch"
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
