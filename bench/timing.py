# Paired, interleaved timing of two callables on the GPU with torch, the way `sasstune compare`
# times two cubins (docs/runtime.md, "Timing"): each side of a pair is one sample of `reps`
# back-to-back launches captured once as a CUDA graph (so that the CPU's launch cost does not pace
# short kernels), timed with CUDA events; pair i runs A then B when i is even, B then A when odd;
# the result is the median of the per-pair ratios time(B)/time(A) with a seeded percentile
# bootstrap 95 % interval.  No L2 flush (as `sasstune compare` without --flush-l2).
import math
import random


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return float("nan")
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def bootstrap_median(xs, resamples=2000, seed=1, level=0.95):
    """(median, lo, hi): percentile bootstrap interval of the median."""
    if not xs:
        return float("nan"), float("nan"), float("nan")
    rng = random.Random(seed)
    n = len(xs)
    meds = sorted(median([xs[rng.randrange(n)] for _ in range(n)]) for _ in range(resamples))
    a = (1 - level) / 2
    return median(xs), meds[int(math.floor(a * (resamples - 1)))], meds[int(math.ceil((1 - a) * (resamples - 1)))]


def _graph(torch, fn, reps):
    """A CUDA graph of reps calls of fn, or None when fn cannot be captured."""
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn()                       # warm: lazy init (cuBLAS handles, workspaces) outside capture
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(reps):
                fn()
        torch.cuda.synchronize()
        return g
    except Exception:   # noqa: BLE001 - any capture failure: time plain launches instead
        torch.cuda.synchronize()
        return None


def _one_ms(torch, fn, n=5):
    fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(n):
        fn()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) / n


def paired(torch, fa, fb, pairs=100, sample_us=200.0, warmup_ms=25.0, seed=1):
    """Time fb against fa.  Returns a dict: ratio (median of time(B)/time(A) per pair), ci_lo,
    ci_hi (95 %), a_ms, b_ms (median time of one call), pairs, reps, graphs (whether CUDA graphs
    were used)."""
    ta, tb = _one_ms(torch, fa), _one_ms(torch, fb)
    reps = max(1, int(math.ceil(sample_us / 1000.0 / max(1e-6, min(ta, tb)))))
    ga, gb = _graph(torch, fa, reps), _graph(torch, fb, reps)
    graphs = ga is not None and gb is not None

    def sample(side):
        if graphs:
            (ga if side == 0 else gb).replay()
        else:
            f = fa if side == 0 else fb
            for _ in range(reps):
                f()

    # warm-up: alternate for warmup_ms of GPU time
    n_warm = max(2, int(math.ceil(warmup_ms / max(1e-3, (ta + tb) * reps))))
    for _ in range(n_warm):
        sample(0)
        sample(1)
    events = []
    for i in range(pairs):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        rec = {}
        for side in order:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            sample(side)
            e1.record()
            rec[side] = (e0, e1)
        events.append(rec)
    torch.cuda.synchronize()
    a = [r[0][0].elapsed_time(r[0][1]) / reps for r in events]
    b = [r[1][0].elapsed_time(r[1][1]) / reps for r in events]
    ratio, lo, hi = bootstrap_median([y / x for x, y in zip(a, b)], seed=seed)
    return {"ratio": ratio, "ci_lo": lo, "ci_hi": hi, "a_ms": median(a), "b_ms": median(b), "pairs": pairs,
            "reps": reps, "graphs": graphs}
