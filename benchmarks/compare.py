"""Side-by-side benchmark: this package vs the original reinfors==0.4.0 on design.md §6 workloads.

    python benchmarks/compare.py [--workloads gridworld_dqn c4_ppo] [--reps 3] [--seconds 5]
                                 [--n-threads 2] [--orig .venv-orig/bin/python]

Each repetition runs both builds in fresh processes, alternating A/B, so machine noise hits both
alike; it reports records/s, engine ns per inference row ((wall - callback time) / rows), rows
per callback call, first-call seconds (process start -> first batch: import, construction,
compile or cache load) and the ratio of records/s (min / median / max over repetitions).  The
original is created on demand in its own venv (scripts/setup_orig_venv.sh).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER = ROOT / "benchmarks" / "workloads.py"
ALL = ["gridworld_dqn", "c4_ppo", "c4_az_zero", "c4_az_mlp", "c4_minimax", "c4_mcts", "snake_az", "c4_az_cache",
       "stream_c4_az"]  # fmt: skip


def run(python: str, spec: dict, isolate: bool) -> dict:
    cmd = [python, *(["-I"] if isolate else []), str(WORKER), json.dumps(spec)]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd="/" if isolate else ROOT, timeout=1800)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", nargs="*", default=ALL)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--floor", type=int, default=2048)
    ap.add_argument("--n-threads", type=int, default=2)
    ap.add_argument("--orig", default=str(ROOT / ".venv-orig" / "bin" / "python"))
    args = ap.parse_args()
    if not Path(args.orig).exists():
        subprocess.run(
            ["bash", str(ROOT / "scripts" / "setup_orig_venv.sh"), str(Path(args.orig).parents[1])], check=True
        )
    print(
        f"{'workload':<14} {'build':<6} {'records/s':>10} {'ns/row':>9} {'rows/call':>9} {'first s':>8} {'us cpu/rec':>10}"
    )
    for wl in args.workloads:
        spec = {"workload": wl, "n_threads": args.n_threads, "seconds": args.seconds, "floor": args.floor}
        res = {"ours": [], "orig": []}
        for _ in range(args.reps):
            res["ours"].append(run(sys.executable, spec, isolate=False))
            res["orig"].append(run(args.orig, spec, isolate=True))
        for build in ("ours", "orig"):
            for r in res[build]:
                if "error" in r:
                    print(f"{wl:<14} {build:<6} run failed: {r['error']}")
            rs = [r for r in res[build] if "records_per_s" in r]
            if not rs:
                why = res[build][0].get("unavailable") or res[build][0].get("error")
                print(f"{wl:<14} {build:<6} unavailable: {why}")
                continue
            med = lambda k, rs=rs: statistics.median(r[k] for r in rs)  # noqa: E731
            print(
                f"{wl:<14} {build:<6} {med('records_per_s'):>10.0f} {med('engine_ns_per_row'):>9.0f} "
                f"{med('rows_per_call'):>9.1f} {med('first_call_s'):>8.2f} {med('cpu_us_per_record'):>10.1f}"
            )
        pairs = [
            (a["records_per_s"], b["records_per_s"])
            for a, b in zip(res["ours"], res["orig"], strict=True)
            if "records_per_s" in a and "records_per_s" in b
        ]
        if pairs:
            ratios = sorted(a / b for a, b in pairs)
            print(
                f"{wl:<14} ratio  min {ratios[0]:.2f}x  median {statistics.median(ratios):.2f}x  max {ratios[-1]:.2f}x"
            )


if __name__ == "__main__":
    main()
