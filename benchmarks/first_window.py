"""The first window: seconds from a fresh engine to its first ``collect(n)`` (issue 48 item 3).

A learner waits on its first batch.  AlphaZero on Connect4 (``AlphaZero(num_simulations=64)`` +
``learners.AlphaZero(gamma=1.0)``, ``n_threads=2``), ``n_games`` 64 / 256 / 1,024, a zero callback
or the accelerator stand-in (design.md §8: sleeps 1.3 ms + rows / 2.2e6 s with the GIL released,
returns zeros).  The kernels are compiled (and a tiny engine of the same composition run) before
the clock starts, so the time is the window's alone; ``decisions`` is how many decisions the
window made (``telemetry["decisions"]``: what it decided beyond its floor is carried).

    python benchmarks/first_window.py one '{"n_games": 256, "callback": "standin", "n": 2000}'
    python benchmarks/first_window.py compare [--games 64 256 1024] [--callbacks zero standin]
        [--reps 3] [--n 2000] [--orig .venv-orig/bin/python]

``one`` runs one measurement in this process (either build: ``import reinfors`` is whichever the
interpreter has) and prints one JSON line; ``compare`` runs every configuration in fresh
processes, alternating the builds (this interpreter's and ``--orig``'s), and prints the median
seconds of each and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXED_S, ROWS_PER_S = 1.3e-3, 2.2e6  # the stand-in's cost (design.md §8)


def _callback(kind: str):
    import numpy as np

    def zero(obs):
        n = len(obs)
        return np.zeros((n, 7), np.float32), np.zeros(n, np.float32)

    def standin(obs):
        time.sleep(FIXED_S + len(obs) / ROWS_PER_S)
        return zero(obs)

    return {"zero": zero, "standin": standin}[kind]


def one(spec: dict) -> dict:
    """Time the first ``collect(n)`` of a fresh engine (kernels already compiled)."""
    import reinfors as rf

    def engine(n_games):
        return rf.Engine(rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0), rf.policies.AlphaZero(num_simulations=64),
                         rf.learners.AlphaZero(gamma=1.0), n_games=n_games, seed=spec.get("seed", 0), n_threads=2)  # fmt: skip

    engine(4).collect(8, _callback("zero"))  # compile (or load) the kernels, start the runtime's code paths
    eng = engine(spec["n_games"])
    cb = _callback(spec["callback"])
    t0 = time.perf_counter()
    batch = eng.collect(spec["n"], cb)
    secs = time.perf_counter() - t0
    tele = batch.telemetry
    return {"secs": secs, "records": int(len(batch.obs)), "decisions": int(tele["decisions"]),
            "calls": int(tele["infer_calls"]), "rows": int(tele["infer_rows"])}  # fmt: skip


def _run(python: str, spec: dict, isolate: bool) -> dict:
    """One measurement in a fresh process: this checkout's package from the repository root, or
    (``isolate``) the other venv's installed one, isolated from this checkout (as compare.py)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if not isolate:
        env["PYTHONPATH"] = str(ROOT)  # a script's sys.path starts at its own folder
    cmd = [python, *(["-I"] if isolate else []), str(Path(__file__).resolve()), "one", json.dumps(spec)]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd="/" if isolate else ROOT, timeout=1800, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(args) -> None:
    builds = {"ours": sys.executable, "0.4.0": args.orig if os.path.isabs(args.orig) else str(ROOT / args.orig)}  # (a venv python is a symlink: not resolved)
    print(f"# first collect({args.n}), AlphaZero(64) Connect4, n_threads=2, median of {args.reps} fresh processes each")
    print("| n_games | callback | ours s | ours decisions | 0.4.0 s | 0.4.0 decisions | ours / 0.4.0 |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for g in args.games:
        for cb in args.callbacks:
            got: dict = {k: [] for k in builds}
            for rep in range(args.reps):
                order = list(builds) if rep % 2 == 0 else list(builds)[::-1]  # alternate who goes first
                for name in order:
                    spec = {"n_games": g, "callback": cb, "n": args.n, "seed": rep}
                    got[name].append(_run(builds[name], spec, isolate=name != "ours"))
            med = {k: statistics.median(r["secs"] for r in v) for k, v in got.items()}
            dec = {k: statistics.median(r["decisions"] for r in v) for k, v in got.items()}
            print(f"| {g} | {cb} | {med['ours']:.2f} | {dec['ours']:.0f} | {med['0.4.0']:.2f} | {dec['0.4.0']:.0f} | "
                  f"**{med['ours'] / med['0.4.0']:.2f}** |", flush=True)  # fmt: skip
            if args.verbose:
                print("  ", json.dumps(got), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p1 = sub.add_parser("one")
    p1.add_argument("spec")
    p2 = sub.add_parser("compare")
    p2.add_argument("--games", type=int, nargs="+", default=[64, 256, 1024])
    p2.add_argument("--callbacks", nargs="+", default=["zero", "standin"])
    p2.add_argument("--reps", type=int, default=3)
    p2.add_argument("--n", type=int, default=2000)
    p2.add_argument("--orig", default=".venv-orig/bin/python")
    p2.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if args.cmd == "one":
        print(json.dumps(one(json.loads(args.spec))))
    else:
        compare(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
