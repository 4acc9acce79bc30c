# One bench kernel, stock, in its own process (bench/run.py starts one per kernel):
#   python3 bench/stock.py --case NAME --dir D [--pairs N] [--compile-only] [--arch 90]
#
# On the GPU: builds the case's inputs with torch, compiles and launches the Triton kernel as a
# user would (fn[grid](...)), checks the output against a float32 torch reference, writes the
# cubin Triton produced (stock.cubin), its PTX, metadata, nvdisasm listing (stock.sass) and a
# launch spec (launch.json, docs/runtime.md) for `sasstune tune` / `compare`, then times the
# kernel against its baseline (cuBLAS / torch SDPA, or a device copy of the same bytes) in
# interleaved pairs (bench/timing.py).  Writes D/stock.json, also on failure.
#
# --compile-only: no GPU, no torch: compiles for GPUTarget("cuda", ARCH, 32) over stand-in tensors
# and writes the same files (no check, no timing).
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels as K  # noqa: E402
import spec as S  # noqa: E402


def nvdisasm():
    import triton
    p = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    return p if os.path.exists(p) else shutil.which("nvdisasm")


def write_artifacts(d, case, ck, L, out):
    """stock.cubin/.ptx/.meta.json/.sass and launch.json; fills out["spec"]."""
    open(os.path.join(d, "stock.cubin"), "wb").write(ck.asm["cubin"])
    open(os.path.join(d, "stock.ptx"), "w").write(ck.asm["ptx"])
    json.dump(S.metadata_json(ck.metadata), open(os.path.join(d, "stock.meta.json"), "w"), indent=1)
    nd = nvdisasm()
    if nd:
        r = subprocess.run([nd, "-hex", "-c", os.path.join(d, "stock.cubin")], capture_output=True, text=True)
        if r.returncode == 0 and r.stdout:
            open(os.path.join(d, "stock.sass"), "w").write(r.stdout)
    md = ck.metadata
    out.update(kernel=md.name, num_warps=md.num_warps, num_stages=getattr(md, "num_stages", None),
               shared_bytes=md.shared, cubin_bytes=len(ck.asm["cubin"]), grid=list(L.grid))
    values, _ = S.bind(case.fn, L.args, L.kw)
    try:
        sp = S.launch_spec(ck.src.signature, values, md, L.grid, case.inits)
    except S.Unsupported as e:
        out["spec"] = {"ok": False, "reason": str(e)}
        return
    problems = S.check_against_ptx(sp, ck.asm["ptx"])
    if problems:
        out["spec"] = {"ok": False, "reason": "the launch spec does not match the PTX entry: " + "; ".join(problems)}
        return
    sp["note"] = "bench/stock.py: %s %s (%s)" % (case.name, case.shape, case.title)
    json.dump(sp, open(os.path.join(d, "launch.json"), "w"), indent=1)
    out["spec"] = {"ok": True, "path": "launch.json"}


class TorchFactory:
    """bench/kernels.py's tensor factory over torch (seeded)."""

    def __init__(self, torch):
        self.torch = torch
        torch.manual_seed(0)

    def _dt(self, name):
        return getattr(self.torch, name)

    def randn(self, shape, dtype, scale=1.0):
        t = self.torch
        if dtype.startswith("float8"):
            return (t.randn(shape, device="cuda", dtype=t.float16) * scale).to(self._dt(dtype))
        x = t.randn(shape, device="cuda", dtype=self._dt(dtype))
        return x * scale if scale != 1.0 else x

    def rand(self, shape, dtype, scale=1.0):
        return self.torch.rand(shape, device="cuda", dtype=self._dt(dtype)) * scale

    def empty(self, shape, dtype, scale=1.0):
        return self.torch.empty(shape, device="cuda", dtype=self._dt(dtype))

    def desc(self, t, block):
        from triton.tools.tensor_descriptor import TensorDescriptor
        return TensorDescriptor.from_tensor(t, list(block))


def gpu(case, d, out, pairs):
    import torch
    import triton
    import timing
    out["device"] = torch.cuda.get_device_name()
    out["versions"] = {"torch": torch.__version__, "triton": triton.__version__, "cuda": torch.version.cuda}
    # device-made TMA descriptors live in Triton's global scratch, which needs an allocator
    triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    F = TorchFactory(torch)
    L = case.build(F)
    run = lambda: case.fn[L.grid](*L.args, **L.kw)  # noqa: E731
    t0 = time.time()
    ck = run()
    torch.cuda.synchronize()
    out["compile_s"] = time.time() - t0
    out["regs"], out["spills"] = getattr(ck, "n_regs", None), getattr(ck, "n_spills", None)
    got, want = case.reference(torch, L.t)
    got = got.float()
    err = ((got - want).norm() / want.norm()).item()
    finite = bool(torch.isfinite(got).all().item())
    out["check"] = {"relerr": err, "tol": case.tol, "finite": finite, "ok": finite and err < case.tol}
    write_artifacts(d, case, ck, L, out)
    if not out["check"]["ok"]:
        out["error"] = "wrong output: relative L2 error %.3g (allowed %.3g)%s" % (err, case.tol, "" if finite else ", non-finite values")
        return
    # the stock kernel against its baseline
    if case.family == "memory":
        half = case.bytes // 2
        src = torch.empty(half, device="cuda", dtype=torch.uint8).random_(0, 256)
        dst = torch.empty_like(src)
        base, label = (lambda: dst.copy_(src)), "device copy of the same bytes (torch copy_)"
    elif case.baseline is not None:
        label = case.baseline_label
        try:
            base = case.baseline(torch, L.t)
            base()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            out["baseline"] = {"label": label, "error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")}
            base = None
    else:
        base = None
    if base is not None:
        t = timing.paired(torch, run, base, pairs=pairs)
        b = {"label": label, "triton_ms": t["a_ms"], "base_ms": t["b_ms"],
             # how fast the baseline is relative to the stock kernel: time(stock) / time(baseline),
             # i.e. > 1 when the baseline is faster; from the per-pair ratios
             "base_speed": 1.0 / t["ratio"], "base_speed_lo": 1.0 / t["ci_hi"], "base_speed_hi": 1.0 / t["ci_lo"],
             "pairs": t["pairs"], "reps": t["reps"], "graphs": t["graphs"]}
        if case.flops:
            b["triton_tflops"] = case.flops / t["a_ms"] / 1e9
            b["base_tflops"] = case.flops / t["b_ms"] / 1e9
        if case.bytes:
            b["triton_gbps"] = case.bytes / t["a_ms"] / 1e6
            b["base_gbps"] = case.bytes / t["b_ms"] / 1e6
        out["baseline"] = b


def compile_only(case, d, out, arch):
    import triton
    out["versions"] = {"triton": triton.__version__}
    L = case.build(S.FakeFactory())
    t0 = time.time()
    ck = S.compile_for(case.fn, L.args, L.kw, arch)
    out["compile_s"] = time.time() - t0
    out["device"] = "none (compiled for sm_%d)" % arch
    write_artifacts(d, case, ck, L, out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--case", required=True, choices=sorted(K.BY_NAME))
    ap.add_argument("--dir", required=True)
    ap.add_argument("--pairs", type=int, default=100, help="interleaved pairs against the baseline [100]")
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--arch", type=int, default=90)
    a = ap.parse_args(argv)
    case = K.BY_NAME[a.case]
    os.makedirs(a.dir, exist_ok=True)
    out = {"case": case.name, "title": case.title, "shape": case.shape, "family": case.family,
           "flops": case.flops, "bytes": case.bytes, "note": case.note, "compile_only": a.compile_only}
    t0 = time.time()
    try:
        if a.compile_only:
            compile_only(case, a.dir, out, a.arch)
        else:
            gpu(case, a.dir, out, a.pairs)
    except Exception as e:  # noqa: BLE001 - recorded, and the exit status says so
        out["error"] = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[-1] if str(e).strip() else "")
        out["traceback"] = traceback.format_exc()
    out["wall_s"] = time.time() - t0
    json.dump(out, open(os.path.join(a.dir, "stock.json"), "w"), indent=1)
    print("%s: %s" % (case.name, out.get("error") or "ok"), file=sys.stderr)
    return 1 if out.get("error") else 0


if __name__ == "__main__":
    sys.exit(main())
