"""Capturing launches with host TMA tensor descriptors (triton.tools.tensor_descriptor.TensorDescriptor
lowered to TMA, metadata.tensordesc_meta): the tensor behind each descriptor becomes a hidden
buffer of the launch spec (captured into a file), the CUtensorMap a `tensormap` param over it,
as Triton 3.6's launcher builds it.  No GPU: kernels are compiled for sm_90 with triton.compile(),
device tensors are stood in for; the specs are checked by the runtime's own parser and by
`sasstune run`, which without a GPU stops at the CUDA driver only after the spec was accepted."""
import json
import os
import re
import subprocess
from types import SimpleNamespace

import pytest
import triton
import triton.language as tl
from conftest import FakePlugin
from test_launch import launch, loaded, parse_spec, ptx_param_count
from triton.backends.compiler import GPUTarget
from triton.compiler.compiler import CompiledKernel
from triton.tools.tensor_descriptor import TensorDescriptor

import sasstune
from sasstune import _capture, _lib, _triton

# torch-like element types: (itemsize, floating point)
_ELT = {"fp16": (2, True), "bf16": (2, True), "fp32": (4, True), "fp64": (8, True), "fp8e4nv": (1, True),
        "i8": (1, False), "u8": (1, False), "i16": (2, False), "i32": (4, False), "i64": (8, False)}


class DevTensor:
    """A contiguous 'device tensor' for a TensorDescriptor's base: bytes at a 16-byte aligned
    made-up address (storage may run past the tensor's last element, as a view's does)."""
    FAKE_DEVICE = True  # read back by conftest's fake_device
    _next = [0x7e0000000000]

    def __init__(self, shape, elt, extra=0):
        size, fp = _ELT[elt]
        self.shape = tuple(shape)
        n = 1
        for d in shape:
            n *= d
        self.data = bytes((i * 7 + len(shape)) & 0xff for i in range(n * size + extra))
        self.ptr = self._next[0]
        self._next[0] += 1 << 24
        self.dtype = SimpleNamespace(itemsize=size, is_floating_point=fp)

    def data_ptr(self):
        return self.ptr

    def numel(self):
        return len(self.data) // self.dtype.itemsize

    def element_size(self):
        return self.dtype.itemsize

    def stride(self):
        out, acc = [], 1
        for d in reversed(self.shape):
            out.append(acc)
            acc *= d
        return tuple(reversed(out))


pytestmark = pytest.mark.usefixtures("fake_device")  # conftest.py


def desc(t, block, padding="zero"):
    return TensorDescriptor(t, list(t.shape), list(t.stride()), list(block), padding)


# ---- kernels --------------------------------------------------------------------------------
@triton.jit
def matmul_tma_host_kernel(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                           BK: tl.constexpr):
    """C = A @ B through host TMA descriptors (as bench/kernels.py's matmul_tma_host_kernel)."""
    pn_count = tl.cdiv(N, BN)
    pm, pn = tl.program_id(0) // pn_count, tl.program_id(0) % pn_count
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([pm * BM, kt * BK]), b_desc.load([kt * BK, pn * BN]), acc)
    c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


@triton.jit
def tma_copy_kernel(x_desc, y_desc, B0: tl.constexpr):
    v = x_desc.load([tl.program_id(0) * B0, 0])
    y_desc.store([tl.program_id(0) * B0, 0], v)


MM = dict(M=256, N=256, K=256, BM=128, BN=128, BK=64)
MM_SIG = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[64, 128]>",
          "c_desc": "tensordesc<fp16[128, 128]>", "M": "i32", "N": "i32", "K": "i32", "BM": "constexpr",
          "BN": "constexpr", "BK": "constexpr"}


def compile_matmul(arch=90):
    src = triton.compiler.ASTSource(fn=matmul_tma_host_kernel, signature=MM_SIG,
                                    constexprs={"BM": MM["BM"], "BN": MM["BN"], "BK": MM["BK"]})
    return triton.compile(src, target=GPUTarget("cuda", arch, 32), options={"num_warps": 4, "num_stages": 3})


def matmul_args():
    M, N, K = MM["M"], MM["N"], MM["K"]
    a, b, c = DevTensor((M, K), "fp16"), DevTensor((K, N), "fp16"), DevTensor((M, N), "fp16")
    descs = [desc(a, [MM["BM"], MM["BK"]]), desc(b, [MM["BK"], MM["BN"]]), desc(c, [MM["BM"], MM["BN"]])]
    grid = ((M // MM["BM"]) * (N // MM["BN"]), )
    return (a, b, c), descs + [M, N, K, MM["BM"], MM["BN"], MM["BK"]], grid


def compile_copy(elt, inner, rows=64, arch=90):
    ty = "tensordesc<%s[%d, %d]>" % (elt, rows, inner)
    src = triton.compiler.ASTSource(fn=tma_copy_kernel, signature={"x_desc": ty, "y_desc": ty, "B0": "constexpr"},
                                    constexprs={"B0": rows})
    return triton.compile(src, target=GPUTarget("cuda", arch, 32))


def capture(ck, args, grid, folder, limit=1 << 30):
    os.makedirs(folder, exist_ok=True)
    spec, builder = _capture.build_spec(folder, ck.name, dict(ck.src.signature), ck.src.fn.arg_names, args,
                                        ck.metadata, grid, limit)
    path, text = _capture.write_capture(spec, builder)
    return spec, builder, path, text


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sasstune_cli():
    """The sasstune command: $SASSTUNE_BIN, beside the library, else the newest in a build folder of
    this tree (scripts/test.sh builds the library without it in build/py, the command in build/test)."""
    ok = lambda p: bool(p) and os.path.isfile(p) and os.access(p, os.X_OK)  # noqa: E731
    for exe in (os.environ.get("SASSTUNE_BIN"), os.path.join(os.path.dirname(_lib.find_library()), "sasstune")):
        if ok(exe):
            return exe
    found = [os.path.join(ROOT, d, sub, "sasstune") for d in os.listdir(ROOT) if d.startswith("build")
             for sub in ("", "test", "py")]
    found = sorted((p for p in found if ok(p)), key=os.path.getmtime, reverse=True)
    if found:
        return found[0]
    pytest.skip("no sasstune command (SASSTUNE_BIN, beside the library, or in a build folder)")


def run_cli(cubin_path, spec_path):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")  # a sanitized build's command is fine too
    r = subprocess.run([sasstune_cli(), "run", cubin_path, "--launch", spec_path, "--pairs", "1"],
                       capture_output=True, text=True, timeout=120, env=env)
    return r.returncode, r.stderr


# ---- the tables: Triton's ------------------------------------------------------------------
def _cuda_enum(name):
    """{enumerator: value} of `typedef enum name_enum {...}` in the cuda.h Triton ships."""
    import triton.backends.nvidia as nv
    with open(os.path.join(os.path.dirname(nv.__file__), "include", "cuda.h")) as f:
        text = f.read()
    m = re.search(r"typedef\s+enum\s+%s_enum\s*\{(.*?)\}\s*%s\s*;" % (name, name), text, re.S)
    assert m, "enum %s not found in Triton's cuda.h" % name
    out, nxt = {}, 0
    for item in re.sub(r"//[^\n]*|/\*.*?\*/", "", m.group(1), flags=re.S).split(","):
        item = item.strip()
        if not item:
            continue
        k, _, v = item.partition("=")
        nxt = int(v.strip(), 0) if v.strip() else nxt
        out[k.strip()] = nxt
        nxt += 1
    return out


def test_tma_dtype_table_is_tritons():
    from triton.backends.nvidia import driver
    assert _capture.TMA_DTYPE_DEVICE_TO_HOST == driver.TMA_DTYPE_DEVICE_TO_HOST


def test_tma_enums_match_the_cuda_header_triton_ships():
    dt = _cuda_enum("CUtensorMapDataType")
    names = {"UINT8": ("u8", 1), "UINT16": ("u16", 2), "INT32": ("i32", 4), "UINT64": ("u64", 8),
             "INT64": ("i64", 8), "FLOAT16": ("fp16", 2), "FLOAT32": ("fp32", 4), "FLOAT64": ("fp64", 8),
             "BFLOAT16": ("bf16", 2)}
    assert _capture.TMA_DTYPES == {dt["CU_TENSOR_MAP_DATA_TYPE_" + k]: v for k, v in names.items()}
    sw = _cuda_enum("CUtensorMapSwizzle")
    assert _capture.TMA_SWIZZLE == {sw["CU_TENSOR_MAP_SWIZZLE_NONE"]: "none", sw["CU_TENSOR_MAP_SWIZZLE_32B"]: "32B",
                                    sw["CU_TENSOR_MAP_SWIZZLE_64B"]: "64B", sw["CU_TENSOR_MAP_SWIZZLE_128B"]: "128B"}


# what each Triton element type's CUtensorMap must be (the descriptor type's element, reinterpreted
# by TMA as Triton's launcher encodes it: fp8 and i8 as bytes, i16 as u16)
_TMAP_DTYPE = {"fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64", "fp8e4nv": "u8", "i8": "u8",
               "i16": "u16", "i32": "i32", "i64": "i64"}


@pytest.mark.parametrize("elt,inner", [("fp16", 8), ("fp16", 16), ("fp16", 32), ("fp16", 64), ("bf16", 64),
                                       ("fp32", 32), ("fp64", 8), ("fp8e4nv", 128), ("i8", 32), ("i16", 16),
                                       ("i32", 16), ("i64", 16)])
def test_dtype_and_swizzle_as_triton_compiles_them(elt, inner, tmp_path):
    """Real sm_90 compiles: the swizzle the adapter writes is the one the kernel's shared layout was
    compiled for (swizzlingByteWidth in the TTGIR), the box the one in tensordesc_meta, the dtype
    the element type's; the runtime's parser takes the spec."""
    ck = compile_copy(elt, inner)
    meta = ck.metadata.tensordesc_meta
    assert meta and len(meta) == 2
    widths = set(re.findall(r"swizzlingByteWidth = (\d+)", ck.asm["ttgir"]))
    assert len(widths) == 1
    rows = 2 * 64
    x, y = DevTensor((rows, inner), elt), DevTensor((rows, inner), elt)
    spec, builder, path, text = capture(ck, (desc(x, [64, inner]), desc(y, [64, inner]), 64), (2, ), str(tmp_path))
    tmaps = [p for p in spec["params"] if p["kind"] == "tensormap"]
    w = int(widths.pop())
    for p, m in zip(tmaps, meta):
        assert p["swizzle"] == ("none" if w == 0 else "%dB" % w)
        assert p["dtype"] == _TMAP_DTYPE[elt]
        assert p["box"] == list(m["block_size"])
    # the buffers' dtype is the tensor's (none for fp8, which the runtime compares byte for byte)
    assert [b.get("dtype") for b in spec["buffers"]] == [_capture._BUF_DTYPES.get(elt)] * 2
    assert parse_spec(text) == ptx_param_count(ck) == len(spec["params"])


# ---- the host-TMA matmul -------------------------------------------------------------------
def test_host_tma_matmul_capture(tmp_path):
    ck = compile_matmul()
    (a, b, c), args, grid = matmul_args()
    spec, builder, path, text = capture(ck, args, grid, str(tmp_path / "cap"))
    # hidden buffers: one per descriptor, its tensor's bytes captured into a file
    assert [h["name"] for h in spec["buffers"]] == ["a_desc.base", "b_desc.base", "c_desc.base"]
    assert [h["bytes"] for h in spec["buffers"]] == [256 * 256 * 2] * 3
    assert all(h["dtype"] == "fp16" for h in spec["buffers"])
    for h, t in zip(spec["buffers"], (a, b, c)):
        with open(h["file"], "rb") as f:
            assert f.read() == t.data
    assert builder.total_bytes == 3 * 256 * 256 * 2
    # the kernel's parameters: per descriptor a CUtensorMap over its buffer, shape i32, strides i64
    p = spec["params"]
    names = [x["name"] for x in p]
    assert names == [n for d in ("a_desc", "b_desc", "c_desc") for n in
                     (d, d + ".shape[0]", d + ".shape[1]", d + ".strides[0]", d + ".strides[1]")] + \
        ["M", "N", "K", "global_scratch", "profile_scratch"]
    tmaps = [x for x in p if x["kind"] == "tensormap"]
    meta = ck.metadata.tensordesc_meta
    assert [t["buffer"] for t in tmaps] == [0, 1, 2]
    assert [t["box"] for t in tmaps] == [list(m["block_size"]) for m in meta]
    assert all(t["swizzle"] == "128B" and t["dtype"] == "fp16" and t["shape"] == [256, 256] and
               t["strides"] == [256, 1] and t["element_strides"] == [1, 1] and t["interleave"] == "none" and
               t["l2_promotion"] == "128B" and t["oob_fill"] == "none" for t in tmaps)
    assert p[1] == {"kind": "i32", "value": 256, "name": "a_desc.shape[0]"}
    assert p[3] == {"kind": "i64", "value": 256, "name": "a_desc.strides[0]"}
    assert spec["grid"] == [4, 1, 1] and spec["block"] == [128, 1, 1] and spec["shared_bytes"] == ck.metadata.shared
    with open(path) as f:
        assert json.load(f) == spec
    # the runtime's parser accepts it, with one param per PTX parameter (a CUtensorMap is 128 bytes)
    assert parse_spec(text) == ptx_param_count(ck) == len(p)
    assert len(re.findall(r"\.param\s+\.align\s+64\s+\.b8\s+\w+\[128\]", ck.asm["ptx"])) == 3


def test_host_tma_matmul_spec_is_taken_by_sasstune_run(tmp_path):
    ck = compile_matmul()
    _, args, grid = matmul_args()
    spec, builder, path, text = capture(ck, args, grid, str(tmp_path / "cap"))
    # `sasstune run` takes it: without a GPU it stops at the CUDA driver, which it loads after the spec
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(ck.asm["cubin"])
    rc, err = run_cli(str(cubin), path)
    assert rc == 0 or ("driver" in err and "launch.json" not in err), err
    # ... and a bad spec is reported as such, before the driver (so the check above means something)
    bad = json.loads(text)
    bad["params"][10]["buffer"] = 3
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    rc, err = run_cli(str(cubin), str(tmp_path / "bad.json"))
    assert rc == 1 and "bad.json: params[10].buffer: 3 is not an index into buffers" in err, err


def test_same_spec_as_bench_spec_py(tmp_path):
    """bench/spec.py builds host-TMA specs from the same metadata (verified on the H200); apart from
    where the buffers' bytes come from (files here, seeded inits there) the specs are the same."""
    import importlib.util
    path = os.path.join(ROOT, "bench", "spec.py")
    if not os.path.isfile(path):
        pytest.skip("no bench/spec.py")
    mod = importlib.util.spec_from_file_location("bench_spec", path)
    bench = importlib.util.module_from_spec(mod)
    mod.loader.exec_module(bench)
    assert bench.TMA_DTYPE_DEVICE_TO_HOST == _capture.TMA_DTYPE_DEVICE_TO_HOST
    ck = compile_matmul()
    _, args, grid = matmul_args()
    ours, *_ = capture(ck, args, grid, str(tmp_path))
    theirs = bench.launch_spec(dict(ck.src.signature), dict(zip(ck.src.fn.arg_names, args)),
                               ck.metadata, grid)
    assert ours["params"] == theirs["params"]
    strip = lambda bufs: [{k: v for k, v in b.items() if k not in ("file", "init")} for b in bufs]  # noqa: E731
    assert strip(ours["buffers"]) == strip(theirs["buffers"])
    assert {k: ours[k] for k in ("kernel", "grid", "block", "shared_bytes")} == \
        {k: theirs[k] for k in ("kernel", "grid", "block", "shared_bytes")}


def test_padding_nan_and_views(tmp_path):
    ck = compile_copy("fp16", 64)
    # the source tensor is a view whose storage runs past it: everything from its data pointer on
    x = DevTensor((128, 64), "fp16", extra=4096)
    y = DevTensor((128, 64), "fp16")
    spec, builder, path, text = capture(ck, (desc(x, [64, 64], padding="nan"), desc(y, [64, 64]), 64), (2, ),
                                        str(tmp_path))
    assert [t["oob_fill"] for t in spec["params"] if t["kind"] == "tensormap"] == ["nan", "none"]
    assert [h["bytes"] for h in spec["buffers"]] == [128 * 64 * 2 + 4096, 128 * 64 * 2]
    assert parse_spec(text) == len(spec["params"])


def test_two_descriptors_over_one_tensor_get_a_buffer_each(tmp_path):
    ck = compile_copy("fp16", 64)
    x = DevTensor((128, 64), "fp16")
    spec, *_ = capture(ck, (desc(x, [64, 64]), desc(x, [64, 64]), 64), (2, ), str(tmp_path))
    assert [t["buffer"] for t in spec["params"] if t["kind"] == "tensormap"] == [0, 1]
    assert [h["name"] for h in spec["buffers"]] == ["x_desc.base", "y_desc.base"]


def test_non_tma_lowering_is_unchanged(tmp_path):
    """On sm_80 host descriptors are not lowered to TMA (no tensordesc_meta): base pointer, shape and
    strides (i64), padding (i1), shape (i32), strides (i64), and no hidden buffers."""
    ck = compile_copy("fp16", 64, arch=80)
    assert not ck.metadata.tensordesc_meta
    x, y = DevTensor((128, 64), "fp16"), DevTensor((128, 64), "fp16")
    spec, builder, path, text = capture(ck, (desc(x, [64, 64]), desc(y, [64, 64]), 64), (2, ), str(tmp_path))
    assert "buffers" not in spec
    kinds = [p["kind"] for p in spec["params"]]
    assert kinds == ["ptr", "i64", "i64", "i64", "i64", "i8", "i32", "i32", "i64", "i64"] * 2 + ["ptr", "ptr"]
    assert spec["params"][0]["name"] == "x_desc.base" and spec["params"][0]["bytes"] == 128 * 64 * 2
    assert parse_spec(text) == ptx_param_count(ck) == len(spec["params"])


# ---- what cannot be expressed -------------------------------------------------------------------
def _meta(**kw):
    m = {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [64, 64], "fp4_padded": False}
    m.update(kw)
    return m


@pytest.mark.parametrize("meta,make,word", [
    (_meta(elem_type=8, elem_size=4), None, "TMA element type 8 \\(CUtensorMapDataType 10, 4 bytes\\)"),
    (_meta(elem_type=13, elem_size=1, fp4_padded=True), None, "CUtensorMapDataType 13"),
    (_meta(elem_type=6, elem_size=4), None, "TMA element type 6 .*4 bytes"),
    (_meta(swizzle=4), None, "swizzle mode 4"),
    (_meta(block_size=[64]), None, "TMA block rank 1, type says 2"),
    (_meta(block_size=[64, 512]), None, "TMA box \\[64, 512\\]"),
    (_meta(), lambda: TensorDescriptor(DevTensor((64, 64), "fp16"), [64, 64], [0, 1], [64, 64]),
     "shape \\[64, 64\\], strides \\[0, 1\\]"),
    (_meta(), lambda: TensorDescriptor(DevTensor((32, 64), "fp16"), [64, 64], [64, 1], [64, 64]),
     "spans 8192 bytes but its tensor's storage has 4096"),
    (_meta(), lambda: SimpleNamespace(base=0x1000, shape=[64, 64], strides=[64, 1]),
     "the tensor behind the descriptor: a raw integer pointer"),
    (_meta(), lambda: object(), "not a host tensor descriptor"),
])
def test_unsupported_descriptors(meta, make, word, tmp_path):
    arg = make() if make else desc(DevTensor((64, 64), "fp16"), [64, 64])
    b = _capture.SpecBuilder(str(tmp_path))
    with pytest.raises(_capture.Unsupported, match="argument d: (.*)?" + word):
        b.add("tensordesc<fp16[64, 64]>", arg, "d", [meta])


def test_more_metadata_than_descriptors():
    ck = compile_copy("fp16", 64)
    x, y = DevTensor((128, 64), "fp16"), DevTensor((128, 64), "fp16")
    md = ck.metadata._replace(tensordesc_meta=list(ck.metadata.tensordesc_meta) + [_meta()])
    with pytest.raises(_capture.Unsupported, match="tensordesc_meta has 3 entries, the signature 2"):
        _capture.build_spec("/nonexistent", ck.name, dict(ck.src.signature), ck.src.fn.arg_names,
                            (desc(x, [64, 64]), desc(y, [64, 64]), 64), md, (2, ), 1 << 30)


def test_capture_limit_counts_hidden_buffers(tmp_path):
    ck = compile_matmul()
    _, args, grid = matmul_args()
    with pytest.raises(_capture.Unsupported, match="hold 393216 bytes, over SASSTUNE_CAPTURE_LIMIT"):
        _capture.build_spec(str(tmp_path), ck.name, dict(ck.src.signature), ck.src.fn.arg_names, args,
                            ck.metadata, grid, 300000)


# ---- the first launch, end to end through the adapter ------------------------------------------
def test_first_launch_of_a_host_tma_kernel_is_captured_and_tuned(fake_device):
    seen = []

    def respond(cubin, kernel, launch_json, opts):
        if launch_json is None:
            return _lib.UNCHANGED, cubin, "cache miss (fake)"
        spec = json.loads(launch_json)
        files = []
        for h in spec.get("buffers", []):  # the files exist while run() works
            with open(h["file"], "rb") as f:
                files.append(f.read())
        seen.append((spec, files, parse_spec(launch_json)))
        return _lib.TUNED, cubin + b"TUNED", "tuned (fake): 1.05x"

    fake = FakePlugin(respond)
    sasstune.enable(budget="10s")
    _lib.set_plugin(fake)
    ck = compile_matmul()
    stock = ck.kernel
    assert ck.metadata.sasstune["pending"]
    _triton.consider(ck)
    run = loaded(ck)
    (a, b, c), args, grid = matmul_args()
    launch(ck, (grid[0], 1, 1), *args)
    spec, files, nparams = seen[0]
    assert [h["name"] for h in spec["buffers"]] == ["a_desc.base", "b_desc.base", "c_desc.base"]
    assert files == [a.data, b.data, c.data]
    assert nparams == ptx_param_count(ck)
    assert fake_device == [stock + b"TUNED"] and ck.function == 222 and run.calls[-1][3] == 222
    assert type(ck) is CompiledKernel
    ev = [e for e in sasstune.stats()["events"] if e["event"] == "launch-tune"]
    assert ev[-1]["status"] == "tuned" and ev[-1]["bytes"] == 3 * 256 * 256 * 2
    # the launcher got the descriptors themselves (Triton's launcher builds the CUtensorMaps)
    assert run.calls[-1][4][:3] == tuple(args[:3])
