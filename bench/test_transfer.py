"""bench/transfer.py on synthetic eval logs: a ratio that is the same linear function of the
features on every kernel transfers (Spearman ~1 on each left-out kernel); pure noise does not;
ties rank as averages."""
import json
import os
import random
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import transfer  # noqa: E402


def write_log(path, kernels, noise, seed):
    rng = random.Random(seed)
    with open(path, "w") as f:
        for k in kernels:
            for i in range(60):
                x = [rng.uniform(-1, 1) for _ in range(47)]
                y = rng.gauss(0, 0.02) if noise else 0.01 * x[4] - 0.02 * x[6]
                f.write(json.dumps({"kernel": k, "cubin": k + ".cubin", "kind": "quick", "status": "ok",
                                    "ratio": float(np.exp(y)), "lo": 1, "hi": 1, "pairs": 30, "moves": 1 + i % 5,
                                    "model_ratio": 1.0, "f": x}) + "\n")
            f.write(json.dumps({"kernel": k, "cubin": k + ".cubin", "kind": "final", "status": "ok", "ratio": 1.03,
                                "lo": 1.02, "hi": 1.04, "pairs": 200, "moves": 0, "model_ratio": 1.0,
                                "f": [0.0] * 47}) + "\n")


def run(tmp_path, noise):
    log = tmp_path / "e.jsonl"
    write_log(log, ["k1", "k2", "k3", "k4"], noise, 1)
    out = tmp_path / "t.json"
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "transfer.py"), str(log),
                        "--json", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.load(open(out)), r.stdout


def test_linear_transfers(tmp_path):
    rows, text = run(tmp_path, noise=False)
    assert len(rows) == 4
    assert all(r["spearman"] > 0.95 for r in rows), rows
    assert "4 of 4" in text


def test_noise_does_not(tmp_path):
    rows, _ = run(tmp_path, noise=True)
    assert sum(r["spearman"] >= 0.5 for r in rows) <= 1, rows


def test_ranks_ties():
    assert list(transfer.ranks(np.array([3.0, 1.0, 3.0, 2.0]))) == [2.5, 0.0, 2.5, 1.0]
    assert abs(transfer.spearman([1, 2, 3, 4], [10, 20, 30, 40]) - 1.0) < 1e-12
