"""Side-by-side benchmark: this package vs the original reinfors==0.4.0 (docs/architecture.md, "Benchmark workloads").

    python benchmarks/compare.py [--workloads gridworld_dqn c4_ppo] [--reps 3] [--seconds 5]
                                 [--n-threads 2] [--orig .venv-orig/bin/python]
    python benchmarks/compare.py --mode scaling [--workloads c4_az_zero] [--threads 1 2 4 8 16]
    python benchmarks/compare.py --mode cold     # empty compile cache: process start -> first batch
    python benchmarks/compare.py --mode warm     # quickstart process (import + construct + first batch)
    python benchmarks/compare.py --mode gpu [--games 64 256 1024] [--batches 0 128 512]
    python benchmarks/compare.py --mode simgpu [--games 64 256 1024] [--leaf-batches 1 8 16]

Every mode runs both builds in fresh processes, alternating A/B so machine noise hits both
alike, and prints ratios (min / median / max over repetitions).  ``workloads`` reports records/s,
engine ns per inference row ((wall - callback time) / rows), rows per callback call, first-call
seconds and CPU per record; ``stream_c4_az`` adds the overlap gain over serial collect + train
and the stop latency.  ``simgpu`` runs AlphaZero against the accelerator stand-in of
``workloads.py`` (a callback sleeping 1.3 ms + rows / 2.2 M s, the H200 ResNet's cost) over
``n_games`` x ``leaf_batch`` (0.4.0 has no leaf batching: it runs ``leaf_batch=1`` only) and reports
the callback's busy fraction beside records/s.  ``scaling`` sweeps ``n_threads``; ``gpu`` runs AlphaZero with a torch
ResNet callback on CUDA over ``n_games`` x ``batch_size``.  The original is created on demand in
its own venv (scripts/setup_orig_venv.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER = ROOT / "benchmarks" / "workloads.py"
ALL = ["gridworld_dqn", "c4_ppo", "c4_az_zero", "c4_az_mlp", "c4_minimax", "c4_mcts", "snake_az", "c4_az_cache",
       "stream_c4_az"]  # fmt: skip
ALL += ["holdem_ppo", "leduc_dqn", "chess_az_zero", "backgammon_az", "snake_selexp"]
ALL += ["car_racing_ppo"]
# Workloads whose windows are served unevenly: Snake's TreeStrap records complete at episode end,
# so a window that overshoots its floor leaves a backlog, and the next windows are served from it
# with no callback call (90-200 k records/s) between working windows (~1 k records/s, ~2 s each).
# A 5 s measurement holds a handful of windows and its rate depends on how many of them are
# backlog (both builds alternated between ~0.8 k and ~3.3 k records/s); 20 s holds about ten
# working windows, so one backlog window more or less moves the rate by ~10%.
MIN_SECONDS = {"snake_selexp": 20.0}


# The workloads' numpy callbacks run their BLAS on the calling thread in both builds: a threaded
# BLAS spin-waits for its own helper threads, which on a small or loaded machine fight the engines'
# worker threads for the cores (measured on 2 busy cores: stream_c4_az 10 rec/s with OpenBLAS's
# default threads, 386 rec/s with one).  Set a variable yourself to override.
_BLAS_ONE_THREAD = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def run(python: str, spec: dict, isolate: bool, env: dict | None = None) -> dict:
    cmd = [python, *(["-I"] if isolate else []), str(WORKER), json.dumps(spec)]
    full_env = {**_BLAS_ONE_THREAD, **os.environ, **(env or {})}
    out = subprocess.run(cmd, capture_output=True, text=True, cwd="/" if isolate else ROOT, timeout=1800, env=full_env)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _report(label: str, res: dict, keys=("records_per_s",)) -> None:
    """One line per build (medians) and the ratio line for ``keys[0]``."""
    for build in ("ours", "orig"):
        for r in res[build]:
            if "error" in r:
                print(f"{label:<22} {build:<6} run failed: {r['error']}")
        rs = [r for r in res[build] if keys[0] in r]
        if not rs:
            why = res[build][0].get("unavailable") or res[build][0].get("error") if res[build] else "not run"
            print(f"{label:<22} {build:<6} unavailable: {why}")
            continue
        med = lambda k, rs=rs: statistics.median(r.get(k, 0.0) for r in rs)  # noqa: E731
        extra = ""
        if "overlap_gain" in rs[0]:
            extra = f"  overlap x{med('overlap_gain'):.2f}  stop {med('stop_s') * 1e3:.0f} ms"
        if "hit_rate" in rs[0] and med("hit_rate") > 0:
            extra += f"  hits {med('hit_rate'):.0%}  rows saved {med('rows_saved'):.0%}"
        print(
            f"{label:<22} {build:<6} {med('records_per_s'):>10.0f} {med('engine_ns_per_row'):>9.0f} "
            f"{med('rows_per_call'):>9.1f} {med('first_call_s'):>8.2f} {med('cpu_us_per_record'):>10.1f}{extra}"
        )
    pairs = [
        (a[keys[0]], b[keys[0]]) for a, b in zip(res["ours"], res["orig"], strict=True) if keys[0] in a and keys[0] in b
    ]
    if pairs:
        # records/s: higher is better (ours / orig); seconds: lower is better (orig / ours)
        ratios = sorted((a / b) if keys[0] == "records_per_s" else (b / a) for a, b in pairs)
        print(
            f"{label:<22} ratio  min {ratios[0]:.2f}x  median {statistics.median(ratios):.2f}x  max {ratios[-1]:.2f}x"
        )


def _pair(spec: dict, args, env_ours: dict | None = None) -> dict:
    res = {"ours": [], "orig": []}
    for _ in range(args.reps):
        res["ours"].append(run(sys.executable, spec, isolate=False, env=env_ours))
        res["orig"].append(run(args.orig, spec, isolate=True))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["workloads", "scaling", "cold", "warm", "gpu", "simgpu"], default="workloads")
    ap.add_argument("--workloads", nargs="*", default=None)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--floor", type=int, default=2048)
    ap.add_argument("--n-threads", type=int, default=2)
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2, 4, 8, 16])
    ap.add_argument("--games", type=int, nargs="*", default=[64, 256, 1024])
    ap.add_argument("--batches", type=int, nargs="*", default=[0, 128, 512])
    ap.add_argument("--leaf-batches", type=int, nargs="*", default=[1, 8, 16])
    ap.add_argument("--simgpu-workloads", nargs="*", default=["c4_az_simgpu"],
                    help="simgpu: also backgammon_az_simgpu, chess_az_simgpu")
    ap.add_argument("--orig", default=str(ROOT / ".venv-orig" / "bin" / "python"))
    ap.add_argument("--json", help="scaling: write the measurements here")
    args = ap.parse_args()
    if not Path(args.orig).exists():
        subprocess.run(
            ["bash", str(ROOT / "scripts" / "setup_orig_venv.sh"), str(Path(args.orig).parents[1])], check=True
        )
    header = f"{'workload':<22} {'build':<6} {'records/s':>10} {'ns/row':>9} {'rows/call':>9} {'first s':>8} {'us cpu/rec':>10}"
    base = {"seconds": args.seconds, "floor": args.floor, "n_threads": args.n_threads}
    if args.mode == "workloads":
        print(header)
        for wl in args.workloads or ALL:
            secs = max(args.seconds, MIN_SECONDS.get(wl, 0.0))
            _report(wl, _pair({**base, "workload": wl, "seconds": secs}, args))
    elif args.mode == "scaling":
        print(header)
        cores = os.cpu_count() or 1
        threads = sorted({min(t, cores) for t in args.threads})  # capped at the machine's cores
        out = {"mode": "scaling", "cores": cores, "threads": threads, "workloads": {}}
        for wl in args.workloads or ["c4_az_zero"]:
            best = {}
            out["workloads"][wl] = runs = {}
            for t in threads:
                res = _pair({**base, "workload": wl, "n_threads": t}, args)
                _report(f"{wl} n_threads={t}", res)
                runs[str(t)] = res
                for build in ("ours", "orig"):
                    rs = [r["records_per_s"] for r in res[build] if "records_per_s" in r]
                    if rs:
                        best.setdefault(build, {})[t] = statistics.median(rs)
            for build, by_t in best.items():
                if 1 in by_t:
                    eff = ", ".join(f"{t}: {v / (by_t[1] * t):.0%}" for t, v in sorted(by_t.items()))
                    print(f"{wl:<22} {build:<6} efficiency vs n_threads=1 x t: {eff}; best {max(by_t.values()):.0f}/s")
            med = {b: {str(t): v for t, v in d.items()} for b, d in best.items()}
            out.setdefault("median_records_per_s", {})[wl] = med
            out.setdefault("efficiency", {})[wl] = {
                b: {str(t): v / (d[1] * t) for t, v in d.items()} for b, d in best.items() if 1 in d
            }
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1))
    elif args.mode in ("cold", "warm"):
        # First batch only (seconds=0): process start -> import -> construct -> first batch.
        print(f"{'workload':<22} {'build':<6} {'first batch s':>14}")
        for wl in args.workloads or ["quickstart"]:
            res = {"ours": [], "orig": []}
            spec = {**base, "workload": wl, "seconds": 0.0, "floor": 4096 if wl == "quickstart" else args.floor}
            for _ in range(args.reps):
                if args.mode == "cold":
                    with tempfile.TemporaryDirectory() as d:
                        res["ours"].append(run(sys.executable, spec, isolate=False, env={"REINFORS_CACHE_DIR": d}))
                else:
                    run(sys.executable, spec, isolate=False)  # fill the compile cache
                    res["ours"].append(run(sys.executable, spec, isolate=False))
                res["orig"].append(run(args.orig, spec, isolate=True))
            for build in ("ours", "orig"):
                xs = sorted(r["first_call_s"] for r in res[build] if "first_call_s" in r)
                if xs:
                    print(f"{wl:<22} {build:<6} {statistics.median(xs):>14.2f}  (min {xs[0]:.2f}, max {xs[-1]:.2f})")
                else:
                    print(f"{wl:<22} {build:<6} unavailable: {res[build][0]}")
            pairs = sorted(
                b["first_call_s"] / a["first_call_s"]
                for a, b in zip(res["ours"], res["orig"], strict=True)
                if "first_call_s" in a and "first_call_s" in b
            )
            if pairs:  # seconds: 0.4.0 / ours (below 1: ours starts slower)
                print(
                    f"{wl:<22} ratio  min {pairs[0]:.2f}x  median {statistics.median(pairs):.2f}x  max {pairs[-1]:.2f}x"
                )
    elif args.mode == "simgpu":
        simgpu(args, base)
    else:  # gpu
        print(header)
        for g in args.games:
            for bs in args.batches:
                spec = {**base, "workload": "c4_az_resnet", "n_games": g, "batch_size": bs}
                _report(f"resnet games={g} batch={bs}", _pair(spec, args))


def simgpu(args, base: dict) -> None:
    """Both builds against the accelerator stand-in, alternating per repetition."""
    print(f"{'workload':<34} {'build':<6} {'records/s':>10} {'rows/call':>9} {'busy':>6} {'us cpu/rec':>10}")
    best = {"ours": 0.0, "orig": 0.0}
    for wl in args.simgpu_workloads:
        for g in args.games:
            orig_med = None
            for lb in args.leaf_batches:
                spec = {**base, "workload": wl, "n_games": g, "leaf_batch": lb}
                res = {"ours": [], "orig": []}
                for _ in range(args.reps):
                    res["ours"].append(run(sys.executable, spec, isolate=False))
                    if lb == 1:
                        res["orig"].append(run(args.orig, spec, isolate=True))
                label = f"{wl} games={g} lb={lb}"
                for build in ("ours", "orig"):
                    rs = [r for r in res[build] if "records_per_s" in r]
                    for r in res[build]:
                        if "records_per_s" not in r:
                            print(f"{label:<34} {build:<6} {r}")
                    if not rs:
                        continue
                    med = lambda k, rs=rs: statistics.median(r[k] for r in rs)  # noqa: E731
                    rates = sorted(r["records_per_s"] for r in rs)
                    print(f"{label:<34} {build:<6} {med('records_per_s'):>10.0f} {med('rows_per_call'):>9.1f} "
                          f"{med('busy'):>6.0%} {med('cpu_us_per_record'):>10.1f}  (min {rates[0]:.0f}, max {rates[-1]:.0f})")  # fmt: skip
                    if wl == "c4_az_simgpu":
                        best[build] = max(best[build], med("records_per_s"))
                    if build == "orig":
                        orig_med = med("records_per_s")
                    elif orig_med and lb > 1:
                        print(f"{label:<34} ratio  x{med('records_per_s') / orig_med:.2f} (vs 0.4.0 at lb=1)")
                pairs = sorted(a["records_per_s"] / b["records_per_s"] for a, b in zip(res["ours"], res["orig"], strict=False)
                               if "records_per_s" in a and "records_per_s" in b)  # fmt: skip
                if pairs:
                    print(f"{label:<34} ratio  min {pairs[0]:.2f}x  median {statistics.median(pairs):.2f}x  max {pairs[-1]:.2f}x")  # fmt: skip
    if best["orig"]:
        print(f"best c4: ours {best['ours']:.0f} vs 0.4.0 {best['orig']:.0f} records/s: x{best['ours'] / best['orig']:.2f}")


if __name__ == "__main__":
    main()
