"""Before/after: the same workloads on two source trees of this package, alternating A/B.

    python benchmarks/ab.py --base /path/to/other/checkout [--workloads c4_az_zero c4_ppo] [--reps 3]
                            [--seconds 10]

Each run is a fresh process (``benchmarks/workloads.py``) with ``PYTHONPATH`` set to the tree
under test, so one venv serves both.  Records/s of a build is the sum of records over the sum of
wall over its repetitions (never a median of per-collect rates); the ratio is after / before.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import ALL, MIN_SECONDS, ROOT, run  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the other checkout's root (the 'before' build)")
    ap.add_argument("--workloads", nargs="*", default=None)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--floor", type=int, default=2048)
    ap.add_argument("--n-threads", type=int, default=2)
    args = ap.parse_args()
    trees = {"before": str(Path(args.base).resolve()), "after": str(ROOT)}
    print(f"{'workload':<16} {'before rec/s':>12} {'after rec/s':>12} {'ratio':>7}  per-rep ratios")
    for wl in args.workloads or ALL:
        secs = max(args.seconds, MIN_SECONDS.get(wl, 0.0))
        spec = {"workload": wl, "seconds": secs, "floor": args.floor, "n_threads": args.n_threads}
        got = {"before": [], "after": []}
        for _ in range(args.reps):
            for build, tree in trees.items():
                got[build].append(run(sys.executable, spec, isolate=False, env={"PYTHONPATH": tree}))
        rates = {}
        for build, rs in got.items():
            ok = [r for r in rs if "records" in r and r.get("records_per_s")]
            # records over wall, summed over the repetitions
            rates[build] = sum(r["records"] for r in ok) / max(sum(r["records"] / r["records_per_s"] for r in ok), 1e-9)
        pairs = [
            a["records_per_s"] / b["records_per_s"]
            for a, b in zip(got["after"], got["before"], strict=True)
            if a.get("records_per_s") and b.get("records_per_s")
        ]
        ratio = rates["after"] / rates["before"] if rates["before"] else float("nan")
        print(f"{wl:<16} {rates['before']:>12.0f} {rates['after']:>12.0f} {ratio:>6.2f}x  "
              + " ".join(f"{p:.2f}" for p in pairs))  # fmt: skip


if __name__ == "__main__":
    main()
