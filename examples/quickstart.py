"""Quickstart: build an Engine, collect a batch, print its shapes and telemetry.

    python examples/quickstart.py [--game connect4] [--records 4096] [--n-games 64] [--progress]

A numpy MLP stands in for your network: the engine calls ``infer(obs)`` with a float32
``(rows, obs_size)`` batch of observations and gets back PPO's ``(logits, values)`` tuple
(EpsilonGreedyQ + Dqn would get a ``(rows, n_heads, actions)`` Q array instead).  Swap in a torch
or JAX forward pass that maps the same shapes — that is the whole integration.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

import reinfors as rf
from reinfors.jit import _compile


@dataclass
class Args:
    game: str = "connect4"  # connect4 | gridworld | kuhn_poker | snake
    records: int = 4096  # record floor of the batch
    n_games: int = 64  # parallel episode slots
    n_threads: int = 0  # worker threads (0 = one per core)
    seed: int = 0
    progress: bool = False  # tqdm bar over records


def parse() -> Args:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in vars(Args()).items():
        flag = "--" + name.replace("_", "-")
        if isinstance(default, bool):
            ap.add_argument(flag, action="store_true")
        else:
            ap.add_argument(flag, type=type(default), default=default)
    return Args(**vars(ap.parse_args()))


def mlp(obs_size: int, n_actions: int, seed: int = 0):
    """A fixed random 2-layer MLP with a policy head and a tanh value head (float32)."""
    rs = np.random.default_rng(seed)
    w1 = (rs.standard_normal((obs_size, 128)) / np.sqrt(obs_size)).astype(np.float32)
    w2 = (rs.standard_normal((128, n_actions + 1)) / np.sqrt(128)).astype(np.float32)

    def infer(obs: np.ndarray):
        h = np.maximum(obs @ w1, 0.0)
        out = h @ w2
        return out[:, :n_actions], np.tanh(out[:, n_actions])

    return infer


def main() -> None:
    args = parse()
    t0 = time.perf_counter()
    game = rf.games.make(args.game)
    engine = rf.Engine(
        game,
        rf.Reward(),
        rf.policies.Ppo(),
        rf.learners.Ppo(gamma=0.99, lam=0.95),
        n_games=args.n_games,
        seed=args.seed,
        n_threads=args.n_threads,
    )
    infer = mlp(int(np.prod(game.observation_space().shape)), game.action_space().n, args.seed)
    batch = engine.collect(args.records, infer, progress=args.progress)
    first = time.perf_counter() - t0
    t1 = time.perf_counter()
    again = engine.collect(args.records, infer)
    steady = time.perf_counter() - t1

    print(f"reinfors {rf.__version__}: {args.game}, Ppo + learners.Ppo, {args.n_games} slots")
    for name in ("obs", "players", "actions", "behavior_log_probs", "advantages", "returns", "values",
                 "legal_ids", "legal_offsets"):  # fmt: skip
        a = getattr(batch, name)
        print(f"  {name:<19} {a.dtype!s:<8} {a.shape}")
    t = batch.telemetry
    print("telemetry:")
    for key in ("decisions", "infer_calls", "infer_rows", "requested_rows", "tail_rows", "padded_rows"):
        print(f"  {key:<15} {t[key]}")
    print(f"  {'infer_seconds':<15} {t['infer_seconds']:.4f}")
    print(f"  {'episodes':<15} {len(t['episodes'])} finished, e.g. {t['episodes'][:2]}")
    print(
        f"first batch: {len(batch.obs)} records in {first:.2f}s (import, build, compile/cache "
        f"{_compile.compile_seconds():.2f}s); next batch: {len(again.obs) / steady:,.0f} records/s"
    )


if __name__ == "__main__":
    main()
