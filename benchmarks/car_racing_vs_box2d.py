"""CarRacing stepping speed, one run each: this package, reinfors 0.4.0 and Gymnasium's Box2D
``CarRacing-v3`` (discrete), all single-threaded Env loops with a frame per step.

    python benchmarks/car_racing_vs_box2d.py [--seconds 5] [--orig .venv-orig/bin/python]

Each build steps a seeded Env with a fixed action cycle (gas-heavy, so the car drives the track)
and observes the pixel frame every tick (``Env.observe`` for reinfors, the returned frame for
Gymnasium), resetting when an episode ends.  Prints steps/s per build and the ratios.  Gymnasium
needs ``box2d`` (``pip install "gymnasium[box2d]"``); without it that line reports unavailable.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKER = r"""
import json, sys, time
spec = json.loads(sys.argv[1])
actions = [3, 3, 3, 1, 3, 3, 2, 3, 0, 4]
if spec["build"] == "gym":
    try:
        import gymnasium
        env = gymnasium.make("CarRacing-v3", continuous=False)
        env.reset(seed=0)
    except Exception as e:  # noqa: BLE001
        print(json.dumps({"unavailable": f"{type(e).__name__}: {e}"}))
        sys.exit(0)
    step = lambda a: env.step(a)[2:4]  # noqa: E731
    reset = lambda: env.reset()  # noqa: E731
    done_of = lambda r: r[0] or r[1]  # noqa: E731
else:
    import reinfors as rf
    env = rf.Env(rf.games.CarRacing(), rf.Reward(), seed=0)
    def step(a):
        env.step({0: a})
        env.observe(0)
        return env.done() or env.ticks >= 1000
    reset = env.reset
    done_of = bool
for a in actions * 5:  # warm-up (compile / cache load)
    if done_of(step(a)):
        reset()
n = 0
t0 = time.perf_counter()
while time.perf_counter() - t0 < spec["seconds"]:
    for a in actions:
        n += 1
        if done_of(step(a)):
            reset()
print(json.dumps({"steps_per_s": n / (time.perf_counter() - t0), "steps": n}))
"""


def run(python, build, seconds, isolate):
    cmd = [python, *(["-I"] if isolate else []), "-c", WORKER, json.dumps({"build": build, "seconds": seconds})]
    env = dict(os.environ)
    if not isolate:
        env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run(cmd, capture_output=True, text=True, cwd="/" if isolate else ROOT, env=env, timeout=900)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--orig", default=str(ROOT / ".venv-orig" / "bin" / "python"))
    args = ap.parse_args()
    res = {
        "ours": run(sys.executable, "ours", args.seconds, False),
        "orig": run(args.orig, "orig", args.seconds, True) if Path(args.orig).exists() else {"unavailable": "no venv"},
        "gym": run(sys.executable, "gym", args.seconds, False),
    }
    for build, r in res.items():
        line = f"{r['steps_per_s']:10.0f} steps/s" if "steps_per_s" in r else f"unavailable: {r}"
        print(f"car_racing env  {build:<5} {line}")
    ours = res["ours"].get("steps_per_s")
    for other in ("orig", "gym"):
        if ours and "steps_per_s" in res[other]:
            print(f"ratio ours/{other}: {ours / res[other]['steps_per_s']:.2f}x")


if __name__ == "__main__":
    main()
