"""Tabular CFR speed, side by side in one process: this package vs OpenSpiel's C++ solvers
(``pyspiel.CFRSolver`` / ``CFRPlusSolver`` / ``ExternalSamplingMCCFRSolver``) on Leduc poker,
plus reinfors 0.4.0's ``Cfr`` timed in its own venv (a subprocess running
``tests/solvers/cfr_driver.py``).

    python benchmarks/solvers.py [--cfr-iters 100] [--mccfr-iters 20000] [--reps 3]
                                 [--orig /work/main/.venv-orig/bin/python]

Each entry is warmed (one iteration: compile / first touch) before timing.  The exact variants
run the same iteration count on every side and report NashConv (the same on all three up to
rounding), MCCFR reports both NashConvs (different samplers).  Ratios use the best of ``--reps``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "tests" / "solvers" / "cfr_driver.py"


def ours(variant: str, iters: int, game: str = "LeducPoker", kwargs: dict | None = None) -> tuple[float, float]:
    import reinfors as rf

    c = rf.solvers.Cfr(getattr(rf.games, game)(**(kwargs or {})), variant=variant, seed=0)
    c.iterate(1)
    t = time.perf_counter()
    c.iterate(iters)
    dt = time.perf_counter() - t
    return dt, (c.nash_conv() if game != "TexasHoldem" else float(c.num_infosets))


def openspiel(variant: str, iters: int) -> tuple[float, float]:
    import pyspiel

    game = pyspiel.load_game("leduc_poker")
    if variant == "external_mccfr":
        s = pyspiel.ExternalSamplingMCCFRSolver(game, 0)
        step = s.run_iteration
    else:
        s = (pyspiel.CFRPlusSolver if variant == "plus" else pyspiel.CFRSolver)(game)
        step = s.evaluate_and_update_policy
    step()
    t = time.perf_counter()
    for _ in range(iters):
        step()
    dt = time.perf_counter() - t
    return dt, float(pyspiel.nash_conv(game, s.average_policy()))


def original(python: str, variant: str, iters: int, game: str = "LeducPoker", kwargs: dict | None = None):
    if not python or not Path(python).exists():
        return None
    spec = {"time": {"game": game, "kwargs": kwargs or {}, "variant": variant, "iterations": iters}}
    out = subprocess.run([python, "-I", str(DRIVER), json.dumps(spec)], capture_output=True, text=True, cwd="/", timeout=600)
    if out.returncode != 0:
        return None
    r = json.loads(out.stdout)["time"]
    return r["seconds"], r["nash_conv"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cfr-iters", type=int, default=100)
    ap.add_argument("--mccfr-iters", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--orig", default=os.environ.get("REINFORS_ORIG_PYTHON", str(Path("/work/main/.venv-orig/bin/python"))))
    ap.add_argument("--variants", nargs="*", default=["vanilla", "plus", "external_mccfr"])
    ap.add_argument("--holdem-iters", type=int, default=2000, help="0 skips the Hold'em MCCFR line")
    args = ap.parse_args()
    for variant in args.variants:
        n = args.mccfr_iters if variant == "external_mccfr" else args.cfr_iters
        rows = {}
        for name, fn in (("ours", lambda v=variant, n=n: ours(v, n)), ("openspiel_cpp", lambda v=variant, n=n: openspiel(v, n)),
                         ("reinfors_0.4.0", lambda v=variant, n=n: original(args.orig, v, n))):  # fmt: skip
            best = None
            for _ in range(args.reps):
                r = fn()
                if r is None:
                    break
                if best is None or r[0] < best[0]:
                    best = r
            rows[name] = best
        base = rows["ours"][0]
        print(f"leduc {variant}: {n} iterations")
        for name, r in rows.items():
            if r is None:
                print(f"  {name:15s} (unavailable)")
                continue
            print(f"  {name:15s} {n / r[0]:12.1f} it/s   nash_conv {r[1]:.12g}   ours faster x{r[0] / base:.2f}")
        sys.stdout.flush()
    if args.holdem_iters:
        n, kw = args.holdem_iters, {"num_players": 2}
        a = min((ours("external_mccfr", n, "TexasHoldem", kw) for _ in range(args.reps)), key=lambda r: r[0])
        b = original(args.orig, "external_mccfr", n, "TexasHoldem", kw)
        print(f"texas_holdem (2 players) external_mccfr: {n} iterations (no exact evaluation: info states shown)")
        print(f"  {'ours':15s} {n / a[0]:12.1f} it/s   info states {a[1]:.0f}")
        if b is not None:
            print(f"  {'reinfors_0.4.0':15s} {n / b[0]:12.1f} it/s   ours faster x{b[0] / a[0]:.2f}")


if __name__ == "__main__":
    main()
