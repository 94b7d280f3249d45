"""Quickstart: build games, play them through ``rf.Env``, check a game, step at native speed.

    python examples/quickstart.py [--episodes 200] [--steps 1000000]

Prints the spaces of each built-in game, the outcome of seeded random Connect 4 games played
through the caller-driven ``Env``, the conformance report of ``rf.testing.check_game`` and the
batched njit stepping rate (states per second, one thread).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import reinfors as rf
from reinfors.jit import _compile


@dataclass
class Args:
    episodes: int = 200  # random Connect 4 games through Env
    steps: int = 1_000_000  # batched stepping benchmark size
    seed: int = 0


def parse() -> Args:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in vars(Args()).items():
        ap.add_argument(f"--{name}", type=type(default), default=default)
    return Args(**vars(ap.parse_args()))


def main() -> None:
    args = parse()
    t0 = time.perf_counter()
    print(f"reinfors {rf.__version__} — games: {rf.games.registered()}")
    for name in rf.games.registered():
        g = rf.games.make(name)
        print(f"  {name:<11} obs {g.observation_space().shape}  actions {g.action_space().n}  horizon {g.truncation_horizon()}")

    game = rf.games.Connect4()
    env = rf.Env(game, rf.Reward(win=1.0, loss=-1.0), seed=args.seed)
    rs = np.random.default_rng(args.seed)
    wins = np.zeros(2)
    lengths = []
    for _ in tqdm(range(args.episodes), desc="Env episodes", disable=args.episodes < 50):
        env.reset()
        while not env.done():
            agent = env.active_agents()[0]
            env.step({agent: int(rs.choice(env.legal_actions(agent)))})
        wins += np.maximum(env.rewards, 0.0)
        lengths.append(env.ticks)
    print(f"Connect4 random play: {args.episodes} games, agent-0 wins {int(wins[0])}, agent-1 wins {int(wins[1])}, "
          f"mean length {np.mean(lengths):.1f}")
    print(f"first observation {env.observe(0).shape} {env.observe(0).dtype}; state: {env.state()['board'][0]!r}")

    report = rf.testing.check_game(rf.games.Snake() if "snake" in rf.games.registered() else game, episodes=5)
    print(f"check_game: {report}")

    d = game._def
    rows = 64
    states = np.zeros((rows, d.state_size), np.int64)
    rngs = np.arange(rows, dtype=np.uint64).reshape(rows, 1)
    probs = np.zeros(1)
    for b in range(rows):
        d.kernels.reset(d.params, states[b], 0, rngs[b], probs)
    obs = np.zeros((rows, d.obs_size), np.float32)
    w = np.array(d.reward_defaults)
    d.kernels.random_playouts(d.params, states, rngs, 0, w, 2, 0, 10, obs, True)
    t = time.perf_counter()
    d.kernels.random_playouts(d.params, states, rngs, 0, w, 2, 0, args.steps // rows, obs, True)
    rate = (args.steps // rows) * rows / (time.perf_counter() - t)
    print(f"batched Connect4 stepping: {rate / 1e6:.2f} M states/s on one thread (encode included)")
    print(f"compile seconds {_compile.compile_seconds():.2f}; total {time.perf_counter() - t0:.2f}s; cache {_compile.cache_dir()}")


if __name__ == "__main__":
    main()
