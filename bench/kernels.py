# The benchmark kernels (docs/benchmarks.md): Triton kernels of the shapes users run, each with a
# torch reference and the baseline it is measured against (cuBLAS / torch for the compute-bound
# ones, a device copy of the same bytes for the memory-bound ones).
#
# Importing this module needs Triton only: torch is imported by the GPU side (bench/stock.py), and
# on a machine without a GPU the cases are built over FakeTensor stand-ins and compiled for
# GPUTarget("cuda", 90, 32) (bench/spec.py), which is what bench/test_bench_compile.py checks.
import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import triton
import triton.language as tl


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------

@triton.jit
def _tile_ids(pid, M, N, BM: tl.constexpr, BN: tl.constexpr, GM: tl.constexpr):
    # Grouped ordering of the output tiles (GM row-tiles per group) for L2 reuse.
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GM * tiles_n
    first_m = (pid // per_group) * GM
    rows = min(tiles_m - first_m, GM)
    pm = first_m + (pid % per_group) % rows
    pn = (pid % per_group) // rows
    return pm, pn


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr,
                  LEAKY: tl.constexpr):
    """C = A @ B (fp32 accumulation), optionally followed by leaky-ReLU (slope 0.01)."""
    pm, pn = _tile_ids(tl.program_id(0), M, N, BM, BN, GM)
    rm = (pm * BM + tl.arange(0, BM)) % M
    rn = (pn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    pa = a_ptr + rm[:, None] * s_am + rk[None, :] * s_ak
    pb = b_ptr + rk[:, None] * s_bk + rn[None, :] * s_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        left = K - kt * BK
        a = tl.load(pa, mask=rk[None, :] < left, other=0.0)
        b = tl.load(pb, mask=rk[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        pa += BK * s_ak
        pb += BK * s_bk
    if LEAKY:
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    tl.store(c_ptr + om[:, None] * s_cm + on[None, :] * s_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(om[:, None] < M) & (on[None, :] < N))


@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, s_ab, s_am, s_ak, s_bb, s_bk, s_bn, s_cb, s_cm, s_cn,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    """Batched C[i] = A[i] @ B[i]; program_id(1) is the batch index."""
    pm, pn = _tile_ids(tl.program_id(0), M, N, BM, BN, GM)
    bi = tl.program_id(1).to(tl.int64)
    a_ptr += bi * s_ab
    b_ptr += bi * s_bb
    c_ptr += bi * s_cb
    rm = (pm * BM + tl.arange(0, BM)) % M
    rn = (pn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    pa = a_ptr + rm[:, None] * s_am + rk[None, :] * s_ak
    pb = b_ptr + rk[:, None] * s_bk + rn[None, :] * s_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        left = K - kt * BK
        acc = tl.dot(tl.load(pa, mask=rk[None, :] < left, other=0.0),
                     tl.load(pb, mask=rk[:, None] < left, other=0.0), acc)
        pa += BK * s_ak
        pb += BK * s_bk
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    tl.store(c_ptr + om[:, None] * s_cm + on[None, :] * s_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(om[:, None] < M) & (on[None, :] < N))


@triton.jit
def swiglu_kernel(x_ptr, wg_ptr, wu_ptr, h_ptr, M, N, K, s_xm, s_xk, s_wk, s_wn, s_hm, s_hn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    """The gate/up half of a SwiGLU feed-forward: H = silu(X @ Wg) * (X @ Wu), one pass over X."""
    pm, pn = _tile_ids(tl.program_id(0), M, N, BM, BN, GM)
    rm = (pm * BM + tl.arange(0, BM)) % M
    rn = (pn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    px = x_ptr + rm[:, None] * s_xm + rk[None, :] * s_xk
    pg = wg_ptr + rk[:, None] * s_wk + rn[None, :] * s_wn
    pu = wu_ptr + rk[:, None] * s_wk + rn[None, :] * s_wn
    gate = tl.zeros((BM, BN), dtype=tl.float32)
    up = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        left = K - kt * BK
        x = tl.load(px, mask=rk[None, :] < left, other=0.0)
        gate = tl.dot(x, tl.load(pg, mask=rk[:, None] < left, other=0.0), gate)
        up = tl.dot(x, tl.load(pu, mask=rk[:, None] < left, other=0.0), up)
        px += BK * s_xk
        pg += BK * s_wk
        pu += BK * s_wk
    h = gate * tl.sigmoid(gate) * up
    om = pm * BM + tl.arange(0, BM)
    on = pn * BN + tl.arange(0, BN)
    tl.store(h_ptr + om[:, None] * s_hm + on[None, :] * s_hn, h.to(h_ptr.dtype.element_ty),
             mask=(om[:, None] < M) & (on[None, :] < N))


@triton.jit
def softmax_kernel(y_ptr, x_ptr, s_x, s_y, n_cols, BLOCK: tl.constexpr):
    """Row-wise softmax, one row per program (the row fits in BLOCK)."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * s_x + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * s_y + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=cols < n_cols)


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride, N, eps, BLOCK: tl.constexpr):
    """y = x / sqrt(mean(x^2) + eps) * w, one row per program (the row fits in BLOCK)."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0).to(tl.float32)
    r = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride + cols, (x * r * w).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, N, eps, BLOCK: tl.constexpr):
    """Layer norm over the last dimension, one row per program, in BLOCK-wide chunks
    (three passes over the row: mean, variance, normalise), as Triton's tutorial does it."""
    row = tl.program_id(0).to(tl.int64)
    x_ptr += row * stride
    y_ptr += row * stride
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        s += tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(s, axis=0) / N
    v = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        d = tl.where(cols < N, tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32) - mean, 0.0)
        v += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(v, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = cols < N
        x = tl.load(x_ptr + cols, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=m).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=m).to(tl.float32)
        tl.store(y_ptr + cols, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=m)


@triton.jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, s_h, s_m, n_ctx,
                         HEAD: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """Flash-attention forward, not causal, Q/K/V/O [batch*heads, n_ctx, HEAD] contiguous fp16,
    online softmax in base 2; n_ctx a multiple of BM and BN."""
    start_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * s_h
    rm = start_m * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, HEAD)
    q = tl.load(q_ptr + base + rm[:, None] * s_m + rd[None, :])
    m_i = tl.full([BM], -float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, HEAD], dtype=tl.float32)
    scale = sm_scale * 1.4426950408889634
    for start_n in range(0, n_ctx, BN):
        kt = tl.load(k_ptr + base + (start_n + rn)[None, :] * s_m + rd[:, None])
        s = tl.dot(q, kt) * scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + (start_n + rn)[:, None] * s_m + rd[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    tl.store(o_ptr + base + rm[:, None] * s_m + rd[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty))


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def matmul_tma_device_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    """C = A @ B through TMA descriptors built on the device (tl.make_tensor_descriptor; Triton
    writes them into its global scratch buffer, which the launch spec sizes from the grid)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pm, pn = _tile_ids(tl.program_id(0), M, N, BM, BN, GM)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([pm * BM, kt * BK]), b_desc.load([kt * BK, pn * BN]), acc)
    c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


@triton.jit
def matmul_tma_host_kernel(a_desc, b_desc, c_desc, M, N, K,
                           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    """C = A @ B through host-built TMA descriptors (triton.tools.tensor_descriptor), passed by
    value as CUtensorMap kernel parameters."""
    pm, pn = _tile_ids(tl.program_id(0), M, N, BM, BN, GM)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(a_desc.load([pm * BM, kt * BK]), b_desc.load([kt * BK, pn * BN]), acc)
    c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------

@dataclass
class Launch:
    """One launch of a case: the grid, the positional arguments and the keywords (constexprs and
    compile options) as passed to kernel[grid](*args, **kw); `t` names the tensors for the
    reference and the baseline."""
    grid: tuple
    args: list
    kw: dict
    t: dict


@dataclass
class Case:
    name: str                 # short name, used for folders and --kernels
    title: str                # what it is, for the report
    shape: str                # the problem shape, for the report
    family: str               # "matmul" (vs cuBLAS / torch), "memory" (vs copy), "attention" (vs torch SDPA)
    fn: object                # the @triton.jit kernel
    build: Callable           # build(F) -> Launch, F a tensor factory (bench/stock.py, bench/spec.py)
    reference: Callable       # reference(torch, t) -> (output tensor, expected float32 tensor)
    tol: float                # relative L2 error allowed against the float32 reference
    flops: float = 0.0        # useful floating-point operations per launch (compute-bound cases)
    bytes: int = 0            # bytes a launch must move at least (memory-bound cases)
    baseline: Optional[Callable] = None   # baseline(torch, t) -> a callable doing the same work
    baseline_label: str = ""
    quick: bool = False       # in the --quick set
    note: str = ""            # shown in the report
    inits: dict = field(default_factory=dict)   # launch-spec init per kernel parameter name (bench/spec.py
                                                # picks one by element type otherwise)


def _mm(M, N, K, BM, BN, BK, GM, nw, ns, leaky=0):
    def build(F):
        a, b, c = F.randn((M, K), "float16"), F.randn((K, N), "float16"), F.empty((M, N), "float16")
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        args = [a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)]
        return Launch(grid, args, dict(BM=BM, BN=BN, BK=BK, GM=GM, LEAKY=leaky, num_warps=nw, num_stages=ns),
                      dict(a=a, b=b, c=c))
    return build


def _mm_ref(leaky):
    def ref(torch, t):
        r = t["a"].float() @ t["b"].float()
        return t["c"], (torch.where(r >= 0, r, 0.01 * r) if leaky else r)
    return ref


def _mm_base(torch, t):
    a, b = t["a"], t["b"]
    return lambda: torch.matmul(a, b)


def _bmm(B, M, N, K, BM, BN, BK, GM, nw, ns):
    def build(F):
        a, b, c = F.randn((B, M, K), "float16"), F.randn((B, K, N), "float16"), F.empty((B, M, N), "float16")
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN), B)
        args = [a, b, c, M, N, K, a.stride(0), a.stride(1), a.stride(2), b.stride(0), b.stride(1), b.stride(2),
                c.stride(0), c.stride(1), c.stride(2)]
        return Launch(grid, args, dict(BM=BM, BN=BN, BK=BK, GM=GM, num_warps=nw, num_stages=ns), dict(a=a, b=b, c=c))
    return build


def _bmm_base(torch, t):
    a, b = t["a"], t["b"]
    return lambda: torch.bmm(a, b)


def _swiglu(M, N, K, BM, BN, BK, GM, nw, ns):
    def build(F):
        x = F.randn((M, K), "float16", scale=K ** -0.5)
        wg, wu = F.randn((K, N), "float16"), F.randn((K, N), "float16")
        h = F.empty((M, N), "float16")
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        args = [x, wg, wu, h, M, N, K, x.stride(0), x.stride(1), wg.stride(0), wg.stride(1), h.stride(0), h.stride(1)]
        return Launch(grid, args, dict(BM=BM, BN=BN, BK=BK, GM=GM, num_warps=nw, num_stages=ns),
                      dict(x=x, wg=wg, wu=wu, h=h))
    return build


def _swiglu_ref(torch, t):
    x = t["x"].float()
    g, u = x @ t["wg"].float(), x @ t["wu"].float()
    return t["h"], torch.nn.functional.silu(g) * u


def _swiglu_base(torch, t):
    # The same two GEMMs as one cuBLAS call over [Wg | Wu] (the activation is not included).
    x, w = t["x"], torch.cat([t["wg"], t["wu"]], dim=1)
    return lambda: torch.matmul(x, w)


def _softmax(R, C, nw):
    def build(F):
        x, y = F.randn((R, C), "float32"), F.empty((R, C), "float32")
        return Launch((R,), [y, x, x.stride(0), y.stride(0), C], dict(BLOCK=triton.next_power_of_2(C), num_warps=nw),
                      dict(x=x, y=y))
    return build


def _softmax_ref(torch, t):
    return t["y"], torch.softmax(t["x"].float(), dim=1)


def _rmsnorm(R, C, nw):
    def build(F):
        x, w, y = F.randn((R, C), "float16"), F.rand((C,), "float16"), F.empty((R, C), "float16")
        return Launch((R,), [x, w, y, x.stride(0), C, 1e-6], dict(BLOCK=triton.next_power_of_2(C), num_warps=nw),
                      dict(x=x, w=w, y=y))
    return build


def _rmsnorm_ref(torch, t):
    x = t["x"].float()
    return t["y"], x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + 1e-6) * t["w"].float()


def _layernorm(R, C, block, nw):
    def build(F):
        x, y = F.randn((R, C), "float16"), F.empty((R, C), "float16")
        w, b = F.rand((C,), "float16"), F.rand((C,), "float16")
        return Launch((R,), [x, y, w, b, x.stride(0), C, 1e-5], dict(BLOCK=block, num_warps=nw),
                      dict(x=x, y=y, w=w, b=b))
    return build


def _layernorm_ref(torch, t):
    C = t["x"].shape[1]
    return t["y"], torch.nn.functional.layer_norm(t["x"].float(), (C,), t["w"].float(), t["b"].float(), 1e-5)


def _attention(BH, N, D, BM, BN, nw, ns):
    def build(F):
        q, k, v = (F.randn((BH, N, D), "float16") for _ in range(3))
        o = F.empty((BH, N, D), "float16")
        args = [q, k, v, o, 1.0 / math.sqrt(D), q.stride(0), q.stride(1), N]
        return Launch((N // BM, BH), args, dict(HEAD=D, BM=BM, BN=BN, num_warps=nw, num_stages=ns),
                      dict(q=q, k=k, v=v, o=o))
    return build


def _attention_ref(torch, t):
    q, k, v = (t[n].float() for n in "qkv")
    p = torch.softmax((q @ k.transpose(1, 2)) / math.sqrt(q.shape[-1]), dim=-1)
    return t["o"], p @ v


def _attention_base(torch, t):
    q, k, v = (t[n].unsqueeze(0) for n in "qkv")
    return lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v)


def _add(n, block, nw):
    def build(F):
        x, y, z = F.randn((n,), "float32"), F.randn((n,), "float32"), F.empty((n,), "float32")
        return Launch((triton.cdiv(n, block),), [x, y, z, n], dict(BLOCK=block, num_warps=nw), dict(x=x, y=y, z=z))
    return build


def _add_ref(torch, t):
    return t["z"], t["x"].float() + t["y"].float()


def _tma_device(M, N, K, BM, BN, BK, GM, nw, ns):
    def build(F):
        a, b, c = F.randn((M, K), "float16"), F.randn((K, N), "float16"), F.empty((M, N), "float16")
        return Launch((triton.cdiv(M, BM) * triton.cdiv(N, BN),), [a, b, c, M, N, K],
                      dict(BM=BM, BN=BN, BK=BK, GM=GM, num_warps=nw, num_stages=ns), dict(a=a, b=b, c=c))
    return build


def _tma_host(M, N, K, BM, BN, BK, GM, nw, ns):
    def build(F):
        a, b, c = F.randn((M, K), "float16"), F.randn((K, N), "float16"), F.empty((M, N), "float16")
        da, db, dc = F.desc(a, [BM, BK]), F.desc(b, [BK, BN]), F.desc(c, [BM, BN])
        return Launch((triton.cdiv(M, BM) * triton.cdiv(N, BN),), [da, db, dc, M, N, K],
                      dict(BM=BM, BN=BN, BK=BK, GM=GM, num_warps=nw, num_stages=ns), dict(a=a, b=b, c=c))
    return build


def _fp8(M, N, K, BM, BN, BK, GM, nw, ns):
    # A [M, K] and B stored [N, K] (K-major, as Hopper's fp8 tensor cores want both operands),
    # e4m3; C fp16.
    def build(F):
        a, bt = F.randn((M, K), "float8_e4m3fn"), F.randn((N, K), "float8_e4m3fn")
        c = F.empty((M, N), "float16")
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
        args = [a, bt, c, M, N, K, a.stride(0), a.stride(1), bt.stride(1), bt.stride(0), c.stride(0), c.stride(1)]
        return Launch(grid, args, dict(BM=BM, BN=BN, BK=BK, GM=GM, LEAKY=0, num_warps=nw, num_stages=ns),
                      dict(a=a, bt=bt, c=c))
    return build


def _fp8_ref(torch, t):
    return t["c"], t["a"].float() @ t["bt"].float().t()


def _fp8_base(torch, t):
    a, b = t["a"], t["bt"].t()   # column-major B, as cuBLAS's fp8 GEMM wants it
    one = torch.ones((), device=a.device, dtype=torch.float32)
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.float16)


CASES = [
    Case("mm_leaky_512", "fp16 matmul + leaky-ReLU (the prototype's headline case)", "512x512x2048",
         "matmul", matmul_kernel, _mm(512, 512, 2048, 64, 64, 32, 8, 4, 3, leaky=1), _mm_ref(1), 1e-2,
         flops=2 * 512 * 512 * 2048, baseline=_mm_base, baseline_label="cuBLAS (torch.matmul, no activation)",
         quick=True),
    Case("bmm", "batched fp16 matmul", "32x(512x512x512)", "matmul", bmm_kernel,
         _bmm(32, 512, 512, 512, 128, 128, 64, 8, 4, 3), lambda torch, t: (t["c"], t["a"].float() @ t["b"].float()),
         1e-2, flops=2 * 32 * 512 ** 3, baseline=_bmm_base, baseline_label="cuBLAS (torch.bmm)"),
    Case("swiglu", "SwiGLU feed-forward, gate and up projections fused", "2048x5632x2048 (x2)", "matmul",
         swiglu_kernel, _swiglu(2048, 5632, 2048, 128, 128, 64, 8, 8, 3), _swiglu_ref, 2e-2,
         flops=2 * 2 * 2048 * 5632 * 2048, baseline=_swiglu_base,
         baseline_label="cuBLAS (one GEMM over [Wg|Wu], no activation)"),
    Case("softmax", "row softmax, fp32", "4096x4096", "memory", softmax_kernel, _softmax(4096, 4096, 16),
         _softmax_ref, 1e-5, bytes=2 * 4096 * 4096 * 4, quick=True),
    Case("rmsnorm", "RMSNorm, fp16", "8192x4096", "memory", rmsnorm_kernel, _rmsnorm(8192, 4096, 8),
         _rmsnorm_ref, 1e-2, bytes=2 * 8192 * 4096 * 2 + 4096 * 2),
    Case("layernorm", "layer norm, fp16 (three passes over each row)", "8192x4096", "memory", layernorm_kernel,
         _layernorm(8192, 4096, 1024, 8), _layernorm_ref, 1e-2, bytes=2 * 8192 * 4096 * 2 + 2 * 4096 * 2,
         quick=True),
    Case("attention", "flash-attention forward, fp16, not causal", "32 heads x 2048 x 64", "attention",
         attention_fwd_kernel, _attention(32, 2048, 64, 128, 64, 4, 3), _attention_ref, 1e-2,
         flops=4 * 32 * 2048 * 2048 * 64, baseline=_attention_base,
         baseline_label="torch SDPA (scaled_dot_product_attention)", quick=True),
    Case("add", "vector add, fp32", "16M", "memory", add_kernel, _add(1 << 24, 1024, 4), _add_ref, 1e-6,
         bytes=3 * (1 << 24) * 4),
    Case("mm_4096", "fp16 matmul", "4096^3", "matmul", matmul_kernel, _mm(4096, 4096, 4096, 128, 256, 64, 8, 8, 3),
         _mm_ref(0), 1e-2, flops=2 * 4096 ** 3, baseline=_mm_base, baseline_label="cuBLAS (torch.matmul)"),
    Case("mm_8192", "fp16 matmul", "8192^3", "matmul", matmul_kernel, _mm(8192, 8192, 8192, 128, 256, 64, 8, 8, 3),
         _mm_ref(0), 1e-2, flops=2 * 8192 ** 3, baseline=_mm_base, baseline_label="cuBLAS (torch.matmul)"),
    Case("mm_tma_device", "fp16 matmul, TMA descriptors made on the device", "4096^3", "matmul",
         matmul_tma_device_kernel, _tma_device(4096, 4096, 4096, 128, 256, 64, 8, 8, 3), _mm_ref(0), 1e-2,
         flops=2 * 4096 ** 3, baseline=_mm_base, baseline_label="cuBLAS (torch.matmul)"),
    Case("mm_tma_host", "fp16 matmul, host TMA tensor descriptors", "4096^3", "matmul",
         matmul_tma_host_kernel, _tma_host(4096, 4096, 4096, 128, 256, 64, 8, 8, 3), _mm_ref(0), 1e-2,
         flops=2 * 4096 ** 3, baseline=_mm_base, baseline_label="cuBLAS (torch.matmul)"),
    Case("mm_fp8", "fp8 (e4m3) matmul, fp16 out", "4096^3", "matmul", matmul_kernel,
         _fp8(4096, 4096, 4096, 128, 256, 128, 8, 8, 3), _fp8_ref, 2e-2, flops=2 * 4096 ** 3,
         baseline=_fp8_base, baseline_label="cuBLAS fp8 (torch._scaled_mm)"),
]

BY_NAME = {c.name: c for c in CASES}
QUICK = [c.name for c in CASES if c.quick]


def select(names=None, quick=False):
    """The cases named (comma-separated string or list), else the quick set or all of them."""
    if names:
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        unknown = [n for n in names if n not in BY_NAME]
        if unknown:
            raise SystemExit("unknown kernel(s) %s; known: %s" % (", ".join(unknown), ", ".join(BY_NAME)))
        return [BY_NAME[n] for n in names]
    return [c for c in CASES if c.quick] if quick else list(CASES)
