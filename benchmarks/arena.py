"""Arena throughput: games per second of a Connect4 match, this package vs 0.4.0, paired.

    python benchmarks/arena.py [--contestants search|greedy|az] [--games 64] [--slots 16]
                               [--seconds 10] [--pairs 3] [--n-threads N] [--orig .venv-orig/bin/python]

Matches (2-move random openings, seed 0):

- ``search``: Minimax(depth=2) vs Mcts(num_simulations=32), zero callback;
- ``greedy``: EpsilonGreedyQ(epsilon=0) on both seats (an elementwise Q callback vs zero);
- ``az``: AlphaZero(num_simulations=64, temperature=0, no root noise) on both seats, each with
  its own numpy MLP callback (84 -> 64 tanh -> 7 logits + 1 tanh value, fixed seeded weights).

Builds alternate (ours, orig, ours, orig, ... ``--pairs`` times), each repetition a fresh process
that plays one untimed warm-up match (compile / cache load) and then whole matches until
``--seconds`` have passed.  A build's rate is its games over its wall summed over every
repetition; medians and spreads are over repetitions; the paired ratio of each alternation
(ours over the orig run right after it) is printed with its median and range.  Games per
CPU-second of the worker process are printed too (a check on a machine shared with other work,
not the headline), and the 1-minute load average before and after.  ``same games`` compares the
games' action digests (the MLP match is only bit-identical where both builds' numpy give the
same matmul bits).  ``--json PATH`` appends the summary as one JSON line.
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
games, slots, seconds, kind, threads = json.loads(sys.argv[1])
kw = {} if threads is None else {"n_threads": threads}  # not in 0.4.0
def zero(obs):
    return np.zeros((obs.shape[0], 1, 7), np.float32)
game, reward = rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0, draw=0.0)
def planes(obs):  # elementwise, so both builds see bit-identical Q values
    q = (obs[:, 0:7] - obs[:, 42:49]) * np.float32(0.25) + obs[:, 35:42] * np.float32(0.125)
    return q[:, None, :].astype(np.float32)
def mlp(seed):
    r = np.random.default_rng(seed)
    w1 = (r.standard_normal((84, 64)) * 0.2).astype(np.float32)
    w2 = (r.standard_normal((64, 8)) * 0.2).astype(np.float32)
    def infer(obs):
        h = np.tanh(obs.reshape(obs.shape[0], -1) @ w1)
        out = h @ w2
        return out[:, :7].astype(np.float32), np.tanh(out[:, 7]).astype(np.float32)
    return infer
if kind == "search":
    a = (rf.policies.Minimax(depth=2), zero, 1.0)
    b = (rf.policies.Mcts(num_simulations=32), zero, 1.0)
elif kind == "greedy":  # zero-search: greedy Q on both seats
    a = (rf.policies.EpsilonGreedyQ(epsilon=0.0), planes, 1.0)
    b = (rf.policies.EpsilonGreedyQ(epsilon=0.0), zero, 1.0)
else:
    az = rf.policies.AlphaZero(num_simulations=64, temperature=0.0, noise=None)
    a, b = (az, mlp(1), 1.0), (az, mlp(2), 1.0)
def match(n):
    return rf.Arena(game, reward, [a, b], n_slots=slots, start=RandomStartingMoves(2), seed=0, **kw).play(n)
match(2)  # warm-up: compile or cache load
rates, n_games, wall, cpu = [], 0, 0.0, 0.0
while wall < seconds:
    t, c = time.perf_counter(), time.process_time()
    res = match(games)
    dt = time.perf_counter() - t
    cpu += time.process_time() - c
    rates.append(games / dt)
    n_games += games
    wall += dt
digest = hashlib.sha256(json.dumps([g.actions for g in res.games]).encode()).hexdigest()[:16]
plies = sum(g.length for g in res.games)
print(json.dumps({"games": n_games, "wall": wall, "cpu": cpu, "rates": rates, "plies": plies, "digest": digest}))
"""


def _run(python: str, args: argparse.Namespace, ours: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)} if ours else dict(os.environ)
    cmd = [python, *([] if ours else ["-I"]), "-c", WORKER, json.dumps([args.games, args.slots, args.seconds, args.contestants, args.n_threads if ours else None])]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT if ours else "/", env=env, timeout=1800)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _summary(runs: list[dict]) -> tuple[float, float, float, float]:
    """(games / wall over every repetition, median, min, max of the repetitions' rates)."""
    rate = sum(r["games"] for r in runs) / sum(r["wall"] for r in runs)
    reps = [r["games"] / r["wall"] for r in runs]
    return rate, statistics.median(reps), min(reps), max(reps)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=64)
    p.add_argument("--slots", type=int, default=16)
    p.add_argument("--seconds", type=float, default=10.0, help="timed seconds per repetition (>= 10 for the record)")
    p.add_argument("--pairs", type=int, default=3, help="alternations ours/orig")
    p.add_argument("--contestants", choices=["search", "greedy", "az"], default="search")
    p.add_argument("--n-threads", type=int, default=None, help="this package's Arena n_threads (default: its own, 0)")
    p.add_argument("--orig", default=os.environ.get("REINFORS_ORIG_PYTHON", str(ROOT / ".venv-orig/bin/python")))
    p.add_argument("--json", default=None, help="append the summary as a JSON line to this file")
    args = p.parse_args()
    have_orig = Path(args.orig).exists()
    load0 = os.getloadavg()[0]
    ours, theirs = [], []
    for _ in range(args.pairs):
        ours.append(_run(sys.executable, args, True))
        if have_orig:
            theirs.append(_run(args.orig, args, False))
    what = {
        "search": "minimax(2) vs mcts(32), zero callback",
        "greedy": "greedy Q vs greedy Q (zero-search)",
        "az": "alphazero(64) vs alphazero(64), numpy MLP callbacks",
    }[args.contestants]
    load1 = os.getloadavg()[0]
    print(f"arena c4 {what}, {args.games} games/match, {args.slots} slots, {ours[-1]['plies']} plies/match")
    print(f"  load average (1 min) {load0:.1f} before, {load1:.1f} after, {os.cpu_count()} CPUs")
    summary = {"contestants": args.contestants, "what": what, "games": args.games, "slots": args.slots,
               "n_threads": args.n_threads, "load": [round(load0, 1), round(load1, 1)], "ours_reps": [r["games"] / r["wall"] for r in ours]}
    rate, med, lo, hi = _summary(ours)
    print(f"  ours  {rate:9.1f} games/s  (reps median {med:.1f}, {lo:.1f}-{hi:.1f}; {len(ours)} x >= {args.seconds:g} s)")
    if theirs:
        rate_o, med_o, lo_o, hi_o = _summary(theirs)
        print(f"  orig  {rate_o:9.1f} games/s  (reps median {med_o:.1f}, {lo_o:.1f}-{hi_o:.1f})")
        same = ours[-1]["digest"] == theirs[-1]["digest"]
        print(f"  ratio ours/orig {rate / rate_o:.2f}   same games: {same}")
        pairs = [(a["games"] / a["wall"]) / (b["games"] / b["wall"]) for a, b in zip(ours, theirs, strict=True)]
        print(f"  paired ratios: median {statistics.median(pairs):.2f}, {min(pairs):.2f}-{max(pairs):.2f}")
        cpu, cpu_o = (sum(r["games"] for r in x) / sum(r["cpu"] for r in x) for x in (ours, theirs))
        print(f"  per CPU-second (a loaded machine): ours {cpu:.1f}, orig {cpu_o:.1f}, ratio {cpu / cpu_o:.2f}")
        summary.update(ours=round(rate, 1), orig=round(rate_o, 1), ratio=round(rate / rate_o, 2),
                       orig_reps=[r["games"] / r["wall"] for r in theirs], paired=pairs, same_games=same,
                       cpu_ratio=round(cpu / cpu_o, 2))
    if args.json:
        with open(args.json, "a") as f:
            f.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()
