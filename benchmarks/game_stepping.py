"""Game stepping speed: seeded random legal playouts, states per second on one thread.

This package: the batched njit kernel (``random_playouts``: legal mask, uniform legal pick,
step, terminal/chance handling, optional encode) over ``--rows`` state rows.  The original
reinfors 0.4.0 exposes no batched stepping, so its number is its ``Env`` loop driven from
Python (what a user of the wheel can do), measured in its own venv.

    python benchmarks/game_stepping.py [--steps 2000000] [--orig .venv-orig/bin/python]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import numpy as np

import reinfors as rf
from reinfors.jit import _compile
from reinfors.jit import rng as _rng

GAMES = {
    "connect4": ("Connect4", {}),
    "gridworld": ("GridWorld", {}),
    "kuhn_poker": ("KuhnPoker", {}),
    "snake": ("Snake", {}),
}
GAMES["leduc_poker"] = ("LeducPoker", {})

ORIG_LOOP = """
import json, sys, time
import numpy as np
import reinfors as rf
ctor, kwargs, steps = json.loads(sys.argv[1])
env = rf.Env(getattr(rf.games, ctor)(**kwargs), rf.Reward(), seed=0)
rs = np.random.default_rng(0)
t = time.perf_counter(); n = 0
while n < steps:
    if env.done():
        env.reset()
    env.step({a: int(rs.choice(env.legal_actions(a))) for a in env.active_agents()})
    n += 1
print(json.dumps(n / (time.perf_counter() - t)))
"""


def ours(name: str, steps: int, rows: int, encode: bool) -> float:
    ctor, kwargs = GAMES[name]
    game = getattr(rf.games, ctor)(**kwargs)
    d = game._def
    k = d.kernels
    states = np.zeros((rows, d.state_size), np.int64)
    rngs = np.zeros((rows, 1), np.uint64)
    probs = np.zeros(max(1, d.max_chance))
    for b in range(rows):
        _rng.seed_row(rngs[b], 0, b, 0)
        k.reset(d.params, states[b], d.horizon, rngs[b], probs)
    obs = np.zeros((rows, d.obs_size), np.float32)
    w = np.array(d.reward_defaults)
    args = (d.params, states, rngs, d.horizon, w, d.n_players, d.max_chance)
    k.random_playouts(*args, 10, obs, encode)  # compile / load outside the timing
    per_row = max(1, steps // rows)
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        k.random_playouts(*args, per_row, obs, encode)
        best = max(best, per_row * rows / (time.perf_counter() - t))
    return best


def original(name: str, steps: int, python: str) -> float | None:
    if not python or not Path(python).exists():
        return None
    ctor, kwargs = GAMES[name]
    out = subprocess.run(
        [python, "-I", "-c", ORIG_LOOP, json.dumps([ctor, kwargs, steps])], capture_output=True, text=True, cwd="/"
    )
    return json.loads(out.stdout) if out.returncode == 0 else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=2_000_000)
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--orig", default=str(Path(__file__).resolve().parents[1] / ".venv-orig" / "bin" / "python"))
    ap.add_argument("--orig-steps", type=int, default=20_000)
    ap.add_argument("--games", nargs="*", default=list(GAMES))
    args = ap.parse_args()
    print(f"{'game':<11} {'ours (no obs)':>16} {'ours (+encode)':>16} {'orig Env loop':>14} {'ratio':>8}")
    for name in args.games:
        try:
            bare = ours(name, args.steps, args.rows, False)
            enc = ours(name, args.steps, args.rows, True)
        except AttributeError:
            print(f"{name:<11} (not available in this build)")
            continue
        orig = original(name, args.orig_steps, args.orig)
        ratio = f"{enc / orig:8.0f}x" if orig else "     n/a"
        orig_s = f"{orig / 1e6:11.3f} M/s" if orig else "           n/a"
        print(f"{name:<11} {bare / 1e6:12.2f} M/s {enc / 1e6:12.2f} M/s {orig_s} {ratio}")
    print(f"compile seconds this process: {_compile.compile_seconds():.2f}")


if __name__ == "__main__":
    main()
