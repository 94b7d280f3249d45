"""Arena throughput: games per second of a searched Connect4 match, this package vs 0.4.0.

    python benchmarks/arena.py [--games 64] [--slots 16] [--reps 3] [--contestants search|greedy]
                               [--orig .venv-orig/bin/python]

Each build plays the same match (``search``: Minimax(depth=2) vs Mcts(num_simulations=32), zero
callback; ``greedy``: EpsilonGreedyQ(epsilon=0) on both seats; 2-move random openings, seed 0) in a fresh process; one warm-up match (compile / cache load)
is not timed.  Both builds must give identical games (asserted), so the ratio compares equal work.
Keep runs short (a few seconds each).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKER = r"""
import hashlib, json, sys, time
import numpy as np
import reinfors as rf
from reinfors.starts import RandomStartingMoves
games, slots, reps, kind = json.loads(sys.argv[1])
def zero(obs):
    return np.zeros((obs.shape[0], 1, 7), np.float32)
game, reward = rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0, draw=0.0)
def planes(obs):  # elementwise, so both builds see bit-identical Q values
    q = (obs[:, 0:7] - obs[:, 42:49]) * np.float32(0.25) + obs[:, 35:42] * np.float32(0.125)
    return q[:, None, :].astype(np.float32)
if kind == "search":
    a = (rf.policies.Minimax(depth=2), zero, 1.0)
    b = (rf.policies.Mcts(num_simulations=32), zero, 1.0)
else:  # zero-search: greedy Q on both seats
    a = (rf.policies.EpsilonGreedyQ(epsilon=0.0), planes, 1.0)
    b = (rf.policies.EpsilonGreedyQ(epsilon=0.0), zero, 1.0)
def match(n):
    return rf.Arena(game, reward, [a, b], n_slots=slots, start=RandomStartingMoves(2), seed=0).play(n)
match(2)  # warm-up: compile or cache load
rates = []
for _ in range(reps):
    t = time.perf_counter()
    res = match(games)
    rates.append(games / (time.perf_counter() - t))
digest = hashlib.sha256(json.dumps([g.actions for g in res.games]).encode()).hexdigest()[:16]
plies = sum(g.length for g in res.games)
print(json.dumps({"games_per_s": rates, "plies": plies, "digest": digest}))
"""


def _run(python: str, args: argparse.Namespace, ours: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)} if ours else dict(os.environ)
    cmd = [python, *([] if ours else ["-I"]), "-c", WORKER, json.dumps([args.games, args.slots, args.reps, args.contestants])]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT if ours else "/", env=env, timeout=900)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=64)
    p.add_argument("--slots", type=int, default=16)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--contestants", choices=["search", "greedy"], default="search")
    p.add_argument("--orig", default=os.environ.get("REINFORS_ORIG_PYTHON", str(ROOT / ".venv-orig/bin/python")))
    args = p.parse_args()
    ours = _run(sys.executable, args, True)
    theirs = _run(args.orig, args, False) if Path(args.orig).exists() else None
    med = statistics.median(ours["games_per_s"])
    what = "minimax(2) vs mcts(32)" if args.contestants == "search" else "greedy Q vs greedy Q (zero-search)"
    print(f"arena c4 {what}, {args.games} games, {args.slots} slots, {ours['plies']} plies")
    print(f"  ours  {med:9.1f} games/s  (reps {', '.join(f'{r:.1f}' for r in ours['games_per_s'])})")
    if theirs is not None:
        med_o = statistics.median(theirs["games_per_s"])
        print(f"  orig  {med_o:9.1f} games/s  (reps {', '.join(f'{r:.1f}' for r in theirs['games_per_s'])})")
        print(f"  ratio ours/orig {med / med_o:.2f}   same games: {ours['digest'] == theirs['digest']}")


if __name__ == "__main__":
    main()
