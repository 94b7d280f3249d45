"""Print one hash per engine composition: the batches' every field (telemetry's counters included,
its seconds left out), two collects each, at ``n_threads`` 1 and 2.

    python scripts/batch_hashes.py [--only NAME]

Run it on two builds (e.g. before and after a refactor of the kernels) and diff the outputs: every
kernel family (modelfree DQN / PPO, tree AlphaZero / Mcts with and without leaf batching, minimax,
selexp, each with and without the inference cache) must hash equal.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time

import numpy as np

import reinfors as rf


def _linear_pv(obs_size, n_actions, seed=0):
    w = np.random.default_rng(seed).standard_normal((obs_size, n_actions + 1)) * 0.3

    def infer(obs):
        out = (obs[:, :, None].astype(np.float64) * w[None]).sum(axis=1)
        return out[:, :n_actions], np.tanh(out[:, n_actions])

    return infer


def _linear_q(obs_size, n_actions, heads=1, seed=0):
    w = np.random.default_rng(seed).standard_normal((obs_size, heads, n_actions)) * 0.3

    def infer(obs):
        return np.einsum("ro,oha->rha", obs.astype(np.float64), w)

    return infer


def _c4():
    return rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0)


def _snake():
    return rf.games.Snake(grid_size=6, num_snakes=2, food=1, max_ticks=15), rf.Reward(food=1.0, loss=-1.0)


P, L = rf.policies, rf.learners
# name: (game, policy, learner, callback kind, extra Engine kwargs)
COMPOSITIONS = {
    "modelfree/dqn": (_c4, lambda: P.EpsilonGreedyQ(epsilon=0.2), lambda: L.Dqn(n_step=3), "q", {}),
    "modelfree/ppo": (_c4, lambda: P.Ppo(), lambda: L.Ppo(), "pv", {}),
    "modelfree/dqn+start_buffer-snake": (
        _snake, lambda: P.EpsilonGreedyQ(epsilon=0.2), lambda: L.Dqn(), "q", {"start_buffer": True, "p_fresh": 0.5}
    ),
    "modelfree/ppo+cache": (_c4, lambda: P.Ppo(), lambda: L.Ppo(), "pv", {"infer_cache": 256}),
    "tree/alphazero": (_c4, lambda: P.AlphaZero(num_simulations=16), lambda: L.AlphaZero(), "pv", {}),
    "tree/alphazero+leaf_batch": (
        _c4, lambda: P.AlphaZero(num_simulations=16, leaf_batch=4), lambda: L.AlphaZero(), "pv", {}
    ),
    "tree/mcts": (_c4, lambda: P.Mcts(num_simulations=16), lambda: L.TreeStrap(), "q", {}),
    "tree/alphazero+cache": (
        _c4, lambda: P.AlphaZero(num_simulations=16), lambda: L.AlphaZero(), "pv", {"infer_cache": 4096}
    ),
    "tree/alphazero-snake": (_snake, lambda: P.AlphaZero(num_simulations=8), lambda: L.AlphaZero(), "pv", {}),
    "minimax": (_c4, lambda: P.Minimax(depth=2), lambda: L.TreeStrap(), "q", {}),
    "minimax+cache": (_c4, lambda: P.Minimax(depth=2), lambda: L.TreeStrap(), "q", {"infer_cache": 4096}),
    "selexp": (
        _c4,
        lambda: P.SelectiveExpectimax(expansion_budget=12, top_k=3, opponent="distributional"),
        lambda: L.TreeStrap(interior_targets=True),
        "q",
        {},
    ),
    "selexp-snake": (
        _snake,
        lambda: P.SelectiveExpectimax(expansion_budget=6, top_k=2, opponent="distributional"),
        lambda: L.TreeStrap(interior_targets=True),
        "q",
        {},
    ),
}


# Telemetry that depends on how rows met in fires (thread timing), not on the slots' play.
_TIMING = frozenset({
    "infer_calls", "infer_rows", "padded_rows", "stall_closes", "stall_releases", "cache_hits", "cache_lookups",
    "cache_demotions", "cache_aliases", "aliases", "dropped_inserts",
})  # fmt: skip


def _hash_batch(h, batch) -> None:
    for name in type(batch)._FIELDS:
        v = getattr(batch, name)
        h.update(name.encode())
        if isinstance(v, np.ndarray):
            h.update(f"{v.dtype}{v.shape}".encode() + np.ascontiguousarray(v).tobytes())
        elif isinstance(v, dict):  # telemetry: the per-slot counters (fires, cache hits and seconds
            for k in sorted(v):  # depend on thread timing: batches are bit-identical, those are not)
                if k not in _TIMING and not any(s in k for s in ("second", "per_s", "rate", "time")):
                    h.update(f"{k}={v[k]!r}".encode())
        else:
            h.update(repr(v).encode())


def composition_hash(name: str, n_threads: int) -> str:
    game_fn, pol, lrn, kind, extra = COMPOSITIONS[name]
    game, reward = game_fn()
    A, O = game._def.n_actions, game._def.obs_size
    infer = _linear_pv(O, A) if kind == "pv" else _linear_q(O, A)
    eng = rf.Engine(game, reward, pol(), lrn(), n_games=6, seed=7, n_threads=n_threads, **extra)
    h = hashlib.sha256()
    for _ in range(2):
        _hash_batch(h, eng.collect(60, infer))
    return h.hexdigest()[:16]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", default=None, help="run the compositions whose name contains this")
    args = ap.parse_args()
    print(f"# reinfors from {rf.__file__}", flush=True)
    for name in COMPOSITIONS:
        if args.only and args.only not in name:
            continue
        for n_threads in (1, 2):
            t0 = time.perf_counter()
            digest = composition_hash(name, n_threads)
            print(f"{name:32s} n_threads={n_threads} {digest}  ({time.perf_counter() - t0:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
