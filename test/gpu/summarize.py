"""Summarize test/gpu/run-tests.sh results (results.jsonl) as a table."""
import json
import sys

recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {r["step"]: r for r in recs}
fixtures = sorted({r["step"].split("/", 1)[1] for r in recs if r["step"].startswith("run/")}) + ["add_f32_64M"]
ok_all = True


def j(step):
    r = by.get(step)
    return r["json"] if r and r.get("json") else None


print("\n## Summary")
print("| fixture | verify | ms/launch | A/A median dev (max of 5) | A/A 95% CI dev (max) | launches/sample | cand/s search-like | cost ms search-like | cand/s default | cost ms default | load ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for f in fixtures:
    run, noise, c50, c100 = j("run/" + f), j("noise/" + f), j("cost-search/" + f), j("cost-default/" + f)
    ver = "?"
    if run:
        st = [c["status"] for c in run["candidates"]]
        det = run["reference"]["deterministic"]
        ver = ("ok" if st == ["ok"] else ",".join(st)) + ("" if det else " (NOT deterministic)")
    if c50:
        st = [c["status"] for c in c50["candidates"]]
        ver += f", {st.count('ok')}/{len(st)} copies ok"
        if st.count("ok") != len(st):
            ok_all = False
    if f != "add_f32_64M" and (not run or run["candidates"][0]["status"] != "ok"):
        ok_all = False
    ms = f"{run['reference']['kernel_ms']:.4f}" if run else (f"{c50['reference']['kernel_ms']:.4f}" if c50 else "?")
    nd = nci = reps = "?"
    if noise:
        nd, nci = f"{100 * noise['max_deviation']:.3f}%", f"{100 * noise['max_interval_deviation']:.3f}%"
        reps = str(noise["runs"][0]["reps"])
        if noise["max_deviation"] > 0.005:  # the A/A median ratio must stay within +-0.5 %
            ok_all = False
    else:
        ok_all = False

    def cost(c):
        if not c:
            return "?", "?", "?"
        costs = sorted(x["cost_ms"] for x in c["candidates"])
        loads = sorted(x["load_ms"] for x in c["candidates"])
        return f"{c['candidates_per_s']:.1f}", f"{costs[len(costs) // 2]:.1f}", f"{loads[len(loads) // 2]:.2f}"

    a, b, l50 = cost(c50)
    c, d, _ = cost(c100)
    print(f"| {f} | {ver} | {ms} | {nd} | {nci} | {reps} | {a} | {b} | {c} | {d} | {l50} |")

fz = j("faults")
if fz:
    st = [c["status"] for c in fz["candidates"]]
    want = ["ok", "crashed", "ok", "crashed", "ok", "timed_out", "ok", "mismatch", "mismatch", "ok"]
    good = st == want
    ok_all &= good
    print(f"\nfaults: {'PASS' if good else 'FAIL'}: statuses {st}")
    print(f"  worker restarts {fz['restarts']}, {fz['restart_ms_avg']:.0f} ms each on average")
    for c in fz["candidates"]:
        print(f"  {c['path'].split('/')[-1]}: {c['status']} ({c['cost_ms']:.0f} ms) {c.get('message', '')}")
else:
    ok_all = False
    print("\nfaults: FAIL (no result)")
for step in sorted(by):
    if step.split("/")[0] in ("compare", "noise-flush", "same-module", "noise-nographs"):
        r = j(step)
        if r and "ratio" in r:
            print(f"{step}: B/A {r['ratio']:.4f} [{r['ci_lo']:.4f}, {r['ci_hi']:.4f}], A {r['a_ms']:.4f} ms, B {r['b_ms']:.4f} ms, {r['reps']} launches/sample")
        elif r and "runs" in r:
            print(f"{step}: A/A max deviation {100 * r['max_deviation']:.3f}%, interval {100 * r['max_interval_deviation']:.3f}%, {r['runs'][0]['reps']} launches/sample, {r['kernel_ms']:.4f} ms")
        else:
            print(f"{step}: FAILED rc={by[step]['rc']} {by[step]['stderr'][-300:]}")
cc = by.get("caller-context")
if cc:
    print(f"caller-context: {'PASS' if cc['rc'] == 0 else 'FAIL'} {(cc.get('stdout') or '').strip().splitlines()[-1:]}")
    ok_all &= cc["rc"] == 0
failed = [r["step"] for r in recs if r["rc"] != 0 and r["step"] != "faults"]
print(f"steps with a non-zero exit: {failed}")
print("OVERALL:", "PASS" if ok_all else "FAIL")
