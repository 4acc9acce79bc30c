# Launch specs (docs/runtime.md, "Launch specs") for the bench kernels, and compiling them without
# a GPU.  Needs Triton only (no torch): the same code builds a spec from a real launch on the GPU
# (bench/stock.py, over torch tensors) and from FakeTensor stand-ins here (the CPU tests).
#
# Triton 3.6's kernel parameters: every non-constexpr argument of the signature in order (an int
# equal to 1 is specialised into a constexpr and disappears), then two pointers, the global and
# the profile scratch buffers, each null unless the kernel needs it (then sized per program).
# A host TMA tensor descriptor argument (metadata.tensordesc_meta) becomes a 128-byte CUtensorMap
# followed by its shape (i32 each) and strides (i64 each); the tensor it points to is not a kernel
# parameter and goes into the spec's top-level "buffers".
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from sasstune import _capture  # noqa: E402  (the adapter: its host-TMA description, no library load)

# torch dtype name -> (Triton element type, bytes)
DTYPES = {
    "float16": ("fp16", 2), "bfloat16": ("bf16", 2), "float32": ("fp32", 4), "float64": ("fp64", 8),
    "float8_e4m3fn": ("fp8e4nv", 1), "float8_e5m2": ("fp8e5", 1),
    "int8": ("i8", 1), "int16": ("i16", 2), "int32": ("i32", 4), "int64": ("i64", 8), "uint8": ("u8", 1),
    "bool": ("i1", 1),
}
# Triton pointer element type -> the runtime's buffer dtype and the init the spec gives it
_BUFFER = {
    "fp16": ("fp16", "randn"), "bf16": ("bf16", "randn"), "fp32": ("fp32", "randn"), "fp64": ("fp64", "randn"),
    "i8": ("i8", "randint"), "i16": ("i16", "randint"), "i32": ("i32", "randint"), "i64": ("i64", "randint"),
    "u8": ("u8", "randint"), "u16": ("u16", "randint"), "u32": ("u32", "randint"), "u64": ("u64", "randint"),
    "i1": ("u8", {"dist": "randint", "low": 0, "high": 2}),
    # fp8 has no runtime dtype: bytes 0x00..0x3f are non-negative e4m3 values up to 1.875 (e5m2: up
    # to 1.75), so no NaN and no overflow in an fp16 result of a K=4096 dot product.
    "fp8e4nv": ("u8", {"dist": "randint", "low": 0, "high": 64}),
    "fp8e5": ("u8", {"dist": "randint", "low": 0, "high": 64}),
}
_INT = {"i1": "i8", "u1": "u8", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "u8": "u8", "u16": "u16",
        "u32": "u32", "u64": "u64"}
_PARAM_BYTES = {"ptr": 8, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4, "i64": 8, "u64": 8,
                "fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8, "tensormap": 128}

# The launch cannot be written as a launch spec (yet); the message says why.  The adapter's own
# class, so that its description of host TMA descriptors (tma_tensormap) serves both.
Unsupported = _capture.Unsupported
TMA_DTYPE_DEVICE_TO_HOST = _capture.TMA_DTYPE_DEVICE_TO_HOST


# ---------------------------------------------------------------------------------------------
# Stand-ins for torch tensors (CPU)
# ---------------------------------------------------------------------------------------------

class FakeDtype:
    """One object per name, like torch's dtypes: Triton's specialiser caches by the dtype object."""
    _made = {}

    def __new__(cls, name):
        if name not in cls._made:
            cls._made[name] = super().__new__(cls)
        return cls._made[name]

    def __init__(self, name):
        self.name = name
        self.itemsize = DTYPES[name][1]
        self.is_floating_point = name.startswith(("float", "bfloat"))

    def __str__(self):
        return "torch." + self.name   # what Triton's specialiser reads

    __repr__ = __str__


class FakeTensor:
    """Shape, dtype and strides of a contiguous tensor, at a 16-byte aligned address (as a real
    allocation is, so that Triton specialises the same way as on the GPU)."""

    def __init__(self, shape, dtype, strides=None):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = FakeDtype(dtype)
        if strides is None:
            strides, acc = [], 1
            for s in reversed(self.shape):
                strides.append(acc)
                acc *= s
            strides = tuple(reversed(strides))
        self._strides = tuple(strides)

    def data_ptr(self):
        return 0

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def element_size(self):
        return self.dtype.itemsize

    def t(self):
        return FakeTensor(tuple(reversed(self.shape)), self.dtype.name, tuple(reversed(self._strides)))


class FakeFactory:
    """The tensor factory of bench/kernels.py's build functions, over FakeTensors."""

    def randn(self, shape, dtype, scale=1.0):
        return FakeTensor(shape, dtype)

    rand = empty = randn

    def desc(self, t, block):
        from triton.tools.tensor_descriptor import TensorDescriptor
        return TensorDescriptor(t, list(t.shape), list(t.stride()), list(block))


# ---------------------------------------------------------------------------------------------
# Binding arguments the way the JIT does
# ---------------------------------------------------------------------------------------------

def bind(fn, args, kw):
    """(ordered {parameter name: value}, compile options) for fn[grid](*args, **kw)."""
    names = [p.name for p in fn.params]
    params = {k: v for k, v in kw.items() if k in names}
    options = {k: v for k, v in kw.items() if k not in names}
    ba = fn.signature.bind(*args, **params)
    ba.apply_defaults()
    return dict(ba.arguments), options


def compile_for(fn, args, kw, arch=90):
    """Compile fn as fn[grid](*args, **kw) would on an sm_<arch> GPU, without one: Triton's own
    binder and specialiser (the same signature, constexprs and divisibility attributes) and
    triton.compile() for GPUTarget("cuda", arch, 32).  Returns Triton's CompiledKernel."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend
    from triton.runtime.jit import create_function_from_signature
    target = GPUTarget("cuda", arch, 32)
    backend = make_backend(target)
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    bound, specialization, opts = binder(*args, **kw)
    options, signature, constexprs, attrs = fn._pack_args(backend, kw, bound, specialization, opts)
    return triton.compile(ASTSource(fn, signature, constexprs, attrs), target=target, options=options.__dict__)


# ---------------------------------------------------------------------------------------------
# The spec
# ---------------------------------------------------------------------------------------------

def _hexfloat32(x):
    f = struct.unpack("<f", struct.pack("<f", float(x)))[0]   # the launcher packs a C float
    return float.hex(f)


def _dtype_name(t):
    s = str(t.dtype)
    return s[6:] if s.startswith("torch.") else s


def _scalar(ty, value, name):
    if ty in _INT:
        v = int(value)
        return {"kind": _INT[ty], "value": v if abs(v) < (1 << 53) else str(v), "name": name}
    if ty in ("fp32", "f32"):
        return {"kind": "fp32", "value": _hexfloat32(value), "name": name}
    if ty == "fp64":
        return {"kind": "fp64", "value": float.hex(float(value)), "name": name}
    if ty == "fp16":
        return {"kind": "bytes", "hex": struct.pack("<e", float(value)).hex(), "name": name}
    raise Unsupported("argument %s: scalar type %s" % (name, ty))


def _tensordesc(name, ty, desc, meta, inits):
    """(hidden buffer, [params]) for host TMA descriptor argument `name` of type `ty`: the
    CUtensorMap over the buffer (index filled in by the caller), then shape (i32) and strides
    (i64), exactly as Triton's launcher builds and passes them (the adapter's tma_tensormap)."""
    t = _capture.tma_tensormap(name, ty, desc, meta)
    if t.elt not in _BUFFER:
        raise Unsupported("argument %s: descriptor over %s" % (name, t.elt))
    bdtype, init = _BUFFER[t.elt]
    base = desc.base
    # the tensor's bytes; at least what the descriptor can reach (a strided view reaches further)
    nbytes = max(int(base.numel()) * int(base.element_size()), t.span)
    buf = {"dtype": bdtype, "bytes": nbytes, "init": inits.get(name, init), "name": name + ".base",
           "note": "the tensor behind host TMA descriptor %s (not a kernel parameter)" % name}
    return buf, t.params


def launch_spec(signature, values, md, grid, inits=None):
    """The launch spec (a dict) of one launch.

    signature: {parameter name: Triton type} in order (CompiledKernel.src.signature);
    values: {parameter name: value} (bind()); md: the kernel's metadata (name, num_warps, shared,
    num_ctas, global/profile scratch sizes, tensordesc_meta); grid: the launch grid;
    inits: {parameter name: init} overriding the one chosen by element type (for a host TMA
    descriptor argument: the init of the tensor behind it, a hidden buffer of the spec).
    Raises Unsupported when the launch cannot be expressed."""
    inits = inits or {}
    g = [int(x) for x in grid] + [1] * (3 - len(grid))
    num_ctas = int(getattr(md, "num_ctas", 1) or 1)
    if num_ctas != 1:
        raise Unsupported("num_ctas=%d: thread-block clusters are not in the launch spec yet" % num_ctas)
    for flag, what in (("launch_cooperative_grid", "a cooperative launch"),
                       ("launch_pdl", "a programmatic dependent launch")):
        if getattr(md, flag, False):
            raise Unsupported("%s is not in the launch spec yet" % what)
    # one entry per tensordesc argument, in order (None or missing: lowered without TMA)
    td_meta = list(getattr(md, "tensordesc_meta", None) or [])
    params, buffers = [], []
    for name, ty in signature.items():
        v = values[name]
        if ty == "constexpr":
            continue
        if isinstance(ty, tuple):
            raise Unsupported("argument %s: tuple arguments are not handled by the bench" % name)
        if ty.startswith("tensordesc"):
            meta = td_meta.pop(0) if td_meta else None
            if meta is None:
                raise Unsupported("argument %s: a tensor descriptor lowered without TMA" % name)
            buf, ps = _tensordesc(name, ty, v, meta, inits)
            ps[0]["buffer"] = len(buffers)   # each descriptor its own buffer, even over one tensor
            buffers.append(buf)
            params += ps
            continue
        if ty.startswith("*"):
            elt = ty[1:].lstrip("k")
            if v is None or (isinstance(v, int) and v == 0):
                params.append({"kind": "ptr", "bytes": 0, "name": name})
                continue
            if elt not in _BUFFER:
                raise Unsupported("argument %s: pointer to %s" % (name, elt))
            dtype, init = _BUFFER[elt]
            nbytes = int(v.numel()) * int(v.element_size())
            params.append({"kind": "ptr", "dtype": dtype, "bytes": nbytes, "init": inits.get(name, init),
                           "name": name})
        else:
            params.append(_scalar(ty, v, name))
    if td_meta:   # Triton's launcher asserts one entry per tensordesc argument
        raise Unsupported("tensordesc_meta has %d more entries than the signature has tensor descriptors" % len(td_meta))
    programs = g[0] * g[1] * g[2] * num_ctas
    for what in ("global_scratch", "profile_scratch"):
        size = int(getattr(md, what + "_size", 0) or 0)
        if size > 0:
            params.append({"kind": "ptr", "bytes": size * programs, "init": "zeros", "verify": False, "name": what})
        else:
            params.append({"kind": "ptr", "bytes": 0, "name": what})
    spec = {"kernel": md.name, "grid": g, "block": [int(md.num_warps) * int(getattr(md, "warp_size", 32) or 32), 1, 1],
            "shared_bytes": int(md.shared)}
    if buffers:
        spec["buffers"] = buffers
    spec["params"] = params
    return spec


_PTX_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)(?:\s+\.ptr(?:\s+\.\w+(?:\s+\d+)?)*)?\s+(\w+?)_param_(\d+)(\[(\d+)\])?")


def ptx_params(ptx):
    """The .entry parameters of a PTX text: [(type, bytes)] in order."""
    out = []
    for ty, _, _, arr, n in _PTX_PARAM.findall(ptx):
        width = int(re.sub(r"\D", "", ty) or 8) // 8
        out.append((ty, width * (int(n) if arr else 1)))
    return out


def param_bytes(p):
    if p["kind"] == "bytes":
        return len(p["hex"]) // 2
    return _PARAM_BYTES[p["kind"]]


def check_against_ptx(spec, ptx):
    """Problems (strings) between a spec's params and the PTX entry's parameters; [] if none."""
    want = ptx_params(ptx)
    got = [param_bytes(p) for p in spec["params"]]
    if len(want) != len(got):
        return ["%d params in the spec, %d in the PTX entry" % (len(got), len(want))]
    return ["param %d (%s): %d bytes in the spec, %s (%d bytes) in the PTX" % (i, spec["params"][i].get("name"), g, t, w)
            for i, (g, (t, w)) in enumerate(zip(got, want)) if g != w]


def metadata_json(md):
    """Triton's metadata as plain JSON values."""
    out = {}
    for k, v in md._asdict().items():
        out[k] = v if isinstance(v, (int, float, str, bool, type(None))) else str(v)
    return out


def case_spec(case, F, arch=90):
    """(CompiledKernel, spec dict or None, reason or None) for a case compiled without a GPU."""
    L = case.build(F)
    ck = compile_for(case.fn, L.args, L.kw, arch)
    values, _ = bind(case.fn, L.args, L.kw)
    try:
        return ck, launch_spec(ck.src.signature, values, ck.metadata, L.grid, case.inits), None
    except Unsupported as e:
        return ck, None, str(e)


__all__ = ["Unsupported", "FakeTensor", "FakeFactory", "bind", "compile_for", "launch_spec", "ptx_params",
           "check_against_ptx", "metadata_json", "case_spec", "DTYPES", "TMA_DTYPE_DEVICE_TO_HOST"]
