"""Score a Connect4 network against perfect play: the fraction of positions where it picks an optimal move.

    python examples/evaluate_connect4.py --checkpoint runs/c4/final.npz \\
        --positions benchmarks/data/connect4_random.jsonl [--positions benchmarks/data/connect4_strong.jsonl] [--sims 64]

Each line of a positions file is ``{"moves": [0-based columns from the empty board], "scores": [7 ints]}``,
the scores of every column from the side to move, by a perfect solver (``benchmarks/connect4_solver.py``;
-1000 marks a full column; 0 is a draw, a win with the mover's k-th stone scores 22 - k, a loss the
negation of the opponent's win).  A picked move is *optimal* when its score equals the best score:
the fastest win, a draw where no win exists, the slowest loss.  It is also reported as
*outcome-correct* when it keeps the position's win / draw / loss value (score sign).

Reported for each set, beside the baselines (``--baselines``, computed on the same positions):

- ``policy``: the raw policy, the argmax of the network's logits over the legal columns;
- ``search``: ``rf.policies.AlphaZero(num_simulations=--sims, noise=None, temperature=0.0)`` through
  ``policy.choose`` (one pooled search per position, the discount the network was trained with);
- baselines: uniform random over the legal moves (expected), ``Minimax(depth=2 / 4)`` with zero leaf
  values, and ``AlphaZero(64)`` / ``AlphaZero(400)`` with a zero network.

The last line is one JSON object: ``positions``, ``policy_optimal``, ``search_optimal`` (fractions, the
first set), and ``sets`` with every set's figures.  A ``.npz`` checkpoint (the NumPy backend of
``examples/_nets.py``) loads without torch; a ``.pt`` checkpoint needs torch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # small matmuls: threaded BLAS only fights the search for the cores

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reinfors as rf  # noqa: E402

COLS = 7
ILLEGAL = -1000
HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "benchmarks" / "data"
DEFAULT_SETS = (DATA / "connect4_random.jsonl", DATA / "connect4_strong.jsonl")
# measured 2026-12-07 on positions from random play, plies 8-22 (issue 49): the table the report sits beside
REFERENCE_BASELINES = {"uniform": 0.20, "minimax4": 0.56, "minimax2": 0.68, "alphazero64_zero": 0.68, "alphazero400_zero": 0.82}


class PositionSet:
    """A solver-labelled positions file, its positions built once as ``rf.Env`` objects.

    ``scores`` is ``(n, 7)`` int; ``optimal[i, a]`` marks the columns scoring the best of row ``i``,
    ``same_outcome[i, a]`` the columns keeping the best score's sign.  ``obs`` holds every position's
    observation for the side to move, ``(n, 84)`` float32: what the engine gives a network."""

    def __init__(self, path, limit: int | None = None):
        self.path = Path(path)
        rows = [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]
        if limit is not None:
            rows = rows[:limit]
        if not rows:
            raise ValueError(f"{self.path}: no positions")
        self.moves = [list(map(int, r["moves"])) for r in rows]
        self.scores = np.array([r["scores"] for r in rows], np.int64)
        if self.scores.shape != (len(rows), COLS):
            raise ValueError(f"{self.path}: every row needs {COLS} scores")
        self.legal = self.scores != ILLEGAL
        best = np.where(self.legal, self.scores, np.iinfo(np.int64).min).max(axis=1, keepdims=True)
        self.optimal = self.legal & (self.scores == best)
        self.same_outcome = self.legal & (np.sign(self.scores) == np.sign(best))
        game, self.reward = rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0, draw=0.0)
        self.envs = []
        for moves in self.moves:
            env = rf.Env(game, self.reward)
            for col in moves:
                env.step({env.active_agents()[0]: col})
            if env.done():
                raise ValueError(f"{self.path}: position {moves} is finished")
            self.envs.append(env)
        self.obs = np.stack([env.observe(env.active_agents()[0]).reshape(-1) for env in self.envs]).astype(np.float32)

    def __len__(self) -> int:
        return len(self.moves)

    def rates(self, actions) -> dict:
        """``{"optimal", "outcome"}``: the fractions of positions where ``actions[i]`` is optimal / keeps the value."""
        a = np.asarray(actions, np.int64)
        rows = np.arange(len(a))
        return {"optimal": float(self.optimal[rows, a].mean()), "outcome": float(self.same_outcome[rows, a].mean())}

    def uniform(self) -> dict:
        """The expected rates of a uniformly random legal move."""
        n_legal = self.legal.sum(axis=1)
        return {
            "optimal": float((self.optimal.sum(axis=1) / n_legal).mean()),
            "outcome": float((self.same_outcome.sum(axis=1) / n_legal).mean()),
        }

    def policy_actions(self, net) -> np.ndarray:
        """The raw policy's picks: argmax of the network's logits over the legal columns."""
        logits = np.asarray(net(self.obs))[:, :COLS]
        return np.where(self.legal, logits, -np.inf).argmax(axis=1)

    def search_actions(self, policy: rf.policies.PolicyHandle, infer, gamma: float, seed: int = 0) -> list[int]:
        """``policy.choose`` on every position, pooled into one batched search."""
        return policy.choose(self.envs, infer, seed=seed, gamma=gamma)


def heads(net):
    """AlphaZero's callback for ``net`` (output columns: 7 logits then the raw value)."""

    def infer(obs: np.ndarray):
        out = net(obs)
        return out[:, :COLS], np.tanh(out[:, COLS])

    return infer


def zero_az(obs: np.ndarray):
    return np.zeros((len(obs), COLS), np.float32), np.zeros(len(obs), np.float32)


def zero_q(obs: np.ndarray) -> np.ndarray:
    return np.zeros((len(obs), 1, COLS), np.float32)


def greedy_search(sims: int) -> rf.policies.PolicyHandle:
    """AlphaZero without exploration: no root noise, temperature 0 (the evaluated search)."""
    return rf.policies.AlphaZero(num_simulations=sims, noise=None, temperature=0.0)


def score_net(sets: list[PositionSet], net, sims: int, gamma: float) -> dict:
    """``{set name: {positions, policy_optimal, policy_outcome, search_optimal, search_outcome}}``."""
    out = {}
    infer, search = heads(net), greedy_search(sims)
    for s in sets:
        p, q = s.rates(s.policy_actions(net)), s.rates(s.search_actions(search, infer, gamma))
        out[s.path.stem] = {
            "positions": len(s), "policy_optimal": p["optimal"], "policy_outcome": p["outcome"],
            "search_optimal": q["optimal"], "search_outcome": q["outcome"],
        }  # fmt: skip
    return out


def baselines(s: PositionSet) -> dict:
    """The untrained agents of the issue's table, on ``s``'s positions (optimal-move rates)."""
    return {
        "uniform": s.uniform()["optimal"],
        "minimax2": s.rates(s.search_actions(rf.policies.Minimax(depth=2), zero_q, 1.0))["optimal"],
        "minimax4": s.rates(s.search_actions(rf.policies.Minimax(depth=4), zero_q, 1.0))["optimal"],
        "alphazero64_zero": s.rates(s.search_actions(greedy_search(64), zero_az, 1.0))["optimal"],
        "alphazero400_zero": s.rates(s.search_actions(greedy_search(400), zero_az, 1.0))["optimal"],
    }


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", required=True, help="a .npz (NumPy) or .pt (PyTorch) file written by the training example")
    ap.add_argument("--positions", action="append", default=None, help="a positions file (repeatable; default: both shipped sets)")
    ap.add_argument("--sims", type=int, default=64, help="simulations of the evaluated search")
    ap.add_argument("--limit", type=int, default=None, help="only the first N positions of each set")
    ap.add_argument("--baselines", action=argparse.BooleanOptionalAction, default=True, help="compute the untrained baselines too")
    args = ap.parse_args(argv)
    if args.sims < 2:
        ap.error("--sims must be >= 2")
    return args


def main(argv=None) -> int:
    from _nets import load_net

    args = parse(argv)
    net, meta = load_net(args.checkpoint)
    gamma = float(meta.get("gamma", 1.0))
    sets = [PositionSet(p, args.limit) for p in (args.positions or DEFAULT_SETS)]
    t = time.perf_counter()
    scores = score_net(sets, net, args.sims, gamma)
    seconds = time.perf_counter() - t
    print(f"checkpoint {args.checkpoint} ({net.backend}, {net.n_params():,} parameters, gamma {gamma}), search {args.sims} simulations")
    for s in sets:
        r = scores[s.path.stem]
        base = baselines(s) if args.baselines else {}
        r["baselines"] = base
        print(f"\n{s.path.name}: {len(s)} positions                optimal move   same outcome")
        print(f"  network, raw policy (argmax of legal logits)   {r['policy_optimal']:.3f}          {r['policy_outcome']:.3f}")
        print(f"  network + AlphaZero({args.sims}) search              {r['search_optimal']:.3f}          {r['search_outcome']:.3f}")
        for name, value in base.items():
            print(f"  baseline {name:<38s}{value:.3f}   (issue 49, random play: {REFERENCE_BASELINES[name]:.2f})")
    first = scores[sets[0].path.stem]
    summary = {
        "positions": first["positions"], "policy_optimal": first["policy_optimal"], "search_optimal": first["search_optimal"],
        "sims": args.sims, "gamma": gamma, "checkpoint": str(args.checkpoint), "seconds": round(seconds, 2), "sets": scores,
    }  # fmt: skip
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
