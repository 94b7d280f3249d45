"""Compile the kernel modules most of the suite shares, once, before the xdist workers start.

Under ``pytest -n N`` every worker is its own process: a kernel module that tests on both workers
use (Connect4's model-free kernels are used by ~20 test files) would otherwise be compiled by
each worker at the same time, since Numba's on-disk cache only helps a process that starts after
the index is written.  ``tests/conftest.py`` runs this script in up to N processes from the
xdist controller; the workers then load those modules from the cache.  The processes share
:data:`JOBS` dynamically: each walks them longest first and runs a job only if it claims it
first (an exclusively created file in the claim directory), so a process that finishes early
takes the next job instead of idling behind a static partition (whose cost estimates drift as
compiles change).  Each job is a small real use (Env playout, a collect), so it compiles the
kernels the tests call, with the argument types the tests pass.

    python tests/precompile.py CLAIM_DIR     # one of the processes sharing CLAIM_DIR
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

import reinfors as rf

G, P, L = rf.games, rf.policies, rf.learners


def _q(n_actions, heads=1):
    return lambda obs: np.zeros((len(obs), heads, n_actions))


def _pv(n_actions):
    return lambda obs: (np.zeros((len(obs), n_actions)), np.zeros(len(obs)))


def _env_playout(game, steps=40):
    env = rf.Env(game, seed=1)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        if env.done():
            env.reset()
            continue
        acts = {}
        for agent in env.active_agents():
            legal = env.legal_actions(agent)
            acts[agent] = int(legal[rng.integers(len(legal))])
            env.observe(agent)
        env.step(acts)


def _modelfree(make, engine=True):
    def job():
        game = make()
        _env_playout(game)
        if engine:  # the engine's model-free kernels (one module with the Env's)
            n = game.action_space().n
            rf.Engine(make(), rf.Reward(), P.Ppo(), L.Ppo(), n_games=2).collect(8, _pv(n))
            rf.Engine(make(), rf.Reward(), P.EpsilonGreedyQ(), L.Dqn(), n_games=2).collect(8, _q(n))

    return job


def _search(make, policy, learner, infer, **kw):
    def job():
        game = make()
        n = game.action_space().n
        fn = _pv(n) if infer == "pv" else _q(n)
        rf.Engine(game, rf.Reward(), policy(), learner(), n_games=2, **kw).collect(4, fn)

    return job


def _nim():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from helpers import make_nim

    return make_nim(4)


# (estimated cold CPU seconds, name, job): the modules with three or more user files in the
# default tier (a census of the suite); the estimates only order the jobs (longest first).
JOBS = [
    (120, "connect4 tree", _search(G.Connect4, lambda: P.AlphaZero(num_simulations=4), L.AlphaZero, "pv")),
    (110, "connect4 selexp", _search(G.Connect4, lambda: P.SelectiveExpectimax(expansion_budget=4), L.TreeStrap, "q")),
    (100, "connect4 minimax", _search(G.Connect4, lambda: P.Minimax(depth=1), L.TreeStrap, "q")),
    (
        100,
        "connect4 tree+cache",
        _search(G.Connect4, lambda: P.AlphaZero(num_simulations=4), L.AlphaZero, "pv", infer_cache=64),
    ),
    (100, "gridworld tree", _search(G.GridWorld, lambda: P.AlphaZero(num_simulations=4), L.AlphaZero, "pv")),
    (100, "nim tree", _search(_nim, lambda: P.AlphaZero(num_simulations=4), L.AlphaZero, "pv")),
    (50, "chess env", _modelfree(G.Chess, engine=False)),  # the default tier runs no model-free engine on chess
    (80, "backgammon modelfree", _modelfree(G.Backgammon)),
    (75, "holdem modelfree", _modelfree(G.TexasHoldem)),
    (70, "car_racing modelfree", _modelfree(G.CarRacing)),
    (40, "leduc env", _modelfree(G.LeducPoker, engine=False)),  # its engine tests are slow-marked
    (60, "connect4 modelfree", _modelfree(G.Connect4)),
    (60, "snake modelfree", _modelfree(G.Snake)),
    (60, "gridworld modelfree", _modelfree(G.GridWorld)),
    (60, "kuhn modelfree", _modelfree(G.KuhnPoker)),
]


def claim_and_run(claims: Path) -> None:
    """Run every job of :data:`JOBS` (longest first) that this process claims first."""
    for i, (_, name, job) in sorted(enumerate(JOBS), key=lambda ij: -ij[1][0]):
        try:
            os.close(os.open(claims / f"job{i}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            continue  # another process has it
        t = time.perf_counter()
        job()
        print(f"precompile {name}: {time.perf_counter() - t:.1f} s", flush=True)


if __name__ == "__main__":
    claim_and_run(Path(sys.argv[1]))
