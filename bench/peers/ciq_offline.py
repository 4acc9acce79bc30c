"""NVIDIA CompileIQ (pip `compileiq`, proprietary: never vendored here) driven offline, for the peer
benchmark.  No CompileIQ code lives in this file: it imports the installed package and calls its
public API.

* Import: compileiq.worker imports `ray` at module level (for its Ray worker) although the MANUAL
  worker used here never touches it, and ray's wheel is too large to carry to the GPU machine.
  stub_ray() puts a tiny stand-in module in sys.modules first: it satisfies those imports and
  raises if anything calls into it.
* Search space: a local `.bin` through compileiq.search_spaces.compilers.LocalSearchSpaceBin (no
  manifest, no network); the published ones are for ptxas 13.3.
* Loop: Search(worker_type=WorkerTypes.MANUAL) with ask()/tell(): CompileIQ's engine ("amber")
  proposes a pool of ACF candidates (opaque hex blobs, written to files as
  compileiq.utils.helpers.save_compiler_config does), we evaluate them one by one (the caller's
  evaluate(acf_path) -> float score, smaller is better, or None for invalid) and tell the engine
  the scores, until the wall-clock deadline.  A pool cut short by the deadline is told as far as it
  got (tell takes any subset of the outstanding candidates).
"""
import os
import pathlib
import sys
import tempfile
import time
import types
import warnings


def stub_ray():
    """Register a stand-in `ray` (only if the real one is not importable)."""
    try:
        import ray  # noqa: F401
        return False
    except ImportError:
        pass

    def unavailable(*a, **k):
        raise RuntimeError("ray is not installed here (bench/peers stub): only CompileIQ's MANUAL worker works")

    class Strategy:
        def __init__(self, *a, **k):
            unavailable()

    ray = types.ModuleType("ray")
    ray.remote = lambda f=None, **k: f if f is not None else (lambda g: g)
    ray.get = ray.init = ray.nodes = ray.get_runtime_context = unavailable
    ray.is_initialized = lambda: False
    util = types.ModuleType("ray.util")
    strategies = types.ModuleType("ray.util.scheduling_strategies")
    strategies.NodeAffinitySchedulingStrategy = strategies.PlacementGroupSchedulingStrategy = Strategy
    util.placement_group = util.remove_placement_group = unavailable
    common = types.ModuleType("ray._common")
    options = types.ModuleType("ray._common.ray_option_utils")
    options.task_options = {}
    ray.util, util.scheduling_strategies, ray._common, common.ray_option_utils = util, strategies, common, options
    for name, mod in (("ray", ray), ("ray.util", util), ("ray.util.scheduling_strategies", strategies),
                      ("ray._common", common), ("ray._common.ray_option_utils", options)):
        sys.modules[name] = mod
    return True


def load(site=None):
    """Import CompileIQ (from `site` first, when given): a namespace with what the loop needs."""
    if site:
        sys.path.insert(0, os.path.abspath(site))
    stubbed = stub_ray()
    from compileiq.ciq import Search
    from compileiq.search_spaces.compilers import LocalSearchSpaceBin
    from compileiq.types import INVALID_SCORE, SearchConfiguration, WorkerTypes
    from compileiq.utils.helpers import save_compiler_config
    from compileiq.utils.validation import Score
    from importlib.metadata import version
    return types.SimpleNamespace(Search=Search, LocalSearchSpaceBin=LocalSearchSpaceBin, INVALID=INVALID_SCORE,
                                 SearchConfiguration=SearchConfiguration, WorkerTypes=WorkerTypes, Score=Score,
                                 save=save_compiler_config, version=version("compileiq"), ray_stubbed=stubbed)


def search(ciq, space, evaluate, deadline_s, pool=12, work_dir=None, log=None, clock=time.time, prepare=None,
           max_evals=None):
    """Run CompileIQ on `space` (a .bin path) until deadline_s seconds have passed.

    evaluate(acf_path, index) -> float (minimised) or None (invalid); prepare(acf_paths), if given,
    sees a whole pool first (to compile it in parallel; evaluate then runs one by one).  Returns
    {"history": [{"index", "generation", "score", "acf_path"}], "best": record or None, ...}.
    max_evals: stop after this many candidates too.  clock: the time source (tests)."""
    t0 = clock()
    work = pathlib.Path(work_dir or tempfile.mkdtemp(prefix="ciq-"))
    work.mkdir(parents=True, exist_ok=True)
    cfg = ciq.SearchConfiguration(problem_type="min", generations=100000, pool_size=pool)
    s = ciq.Search(objective_function=_never_called, search_space=ciq.LocalSearchSpaceBin(space),
                   search_config=cfg, worker_type=ciq.WorkerTypes.MANUAL, cache_folder=work / "cache",
                   disable_progress_bar=True, exit_on_failure=False)
    # amber refills a failed candidate's place itself; its warning for each such pool is noise here
    warnings.filterwarnings("ignore", message=r".*failed evaluation\(s\) left unfilled")
    history, best, asks = [], None, 0
    while clock() - t0 < deadline_s and not (max_evals and len(history) >= max_evals):
        candidates = s.ask()
        asks += 1
        scores, acfs = [], [str(work / ("acf-%04d.acf" % (len(history) + i))) for i in range(len(candidates))]
        for c, acf in zip(candidates, acfs):
            ciq.save(acf, c.params)
        if prepare:
            prepare(acfs)
        for c, acf in zip(candidates, acfs):
            if clock() - t0 >= deadline_s or (max_evals and len(history) >= max_evals):
                break
            value = evaluate(acf, len(history))
            rec = {"index": len(history), "generation": asks - 1, "score": value, "acf_path": acf,
                   "t_s": round(clock() - t0, 3)}
            history.append(rec)
            if value is not None and (best is None or value < best["score"]):
                best = rec
            scores.append(ciq.Score(score=ciq.INVALID if value is None else float(value), param_id=c.param_id,
                                    num_objectives=1))
            if log:
                log("ciq: candidate %d (pool %d): %s" % (rec["index"], asks - 1,
                                                         "invalid" if value is None else "%.5f" % value))
        if scores:
            s.tell(scores)
        if len(scores) < len(candidates):
            break
    return {"history": history, "best": best, "pools": asks, "evaluated": len(history),
            "wall_s": clock() - t0, "pool_size": pool}


def _never_called(config):
    raise RuntimeError("the MANUAL worker never runs the objective itself")
