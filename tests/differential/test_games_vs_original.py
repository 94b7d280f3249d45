"""Differential tests: seeded random legal playouts against reinfors==0.4.0 (side venv).

Same seeds give the same chance draws in both builds (the chance stream is reproduced
exactly), so legal sets, observations, inspection states, events, rewards, terminal flags,
information-state keys and config fingerprints are compared bit for bit on every tick.
Skips cleanly when the side venv is absent; ``scripts/run_differential.sh`` sets it up.
"""

from __future__ import annotations

import numpy as np
import pytest

import reinfors as rf
from reinfors.jit.games import snake as _snake

from .harness import compare_outcomes, outcome, replay, run_orig

pytestmark = pytest.mark.differential

# Distinct Snake weights, so every event kind shows in the rewards (survival never counts).
SNAKE_W = {"step": 0.001, "food": 0.01, "loss": -0.1, "draw": 0.2, "kill": 3.0, "win": 50.0, "survival": 700.0}
SNAKE_W2 = {"step": -0.013, "food": 0.37, "loss": -1.9, "draw": 0.41, "kill": 2.3, "win": 7.7}

PLAYOUTS = [
    ("Connect4", {}, {}),
    ("Connect4", {}, {"win": 2.0, "loss": -3.0, "draw": 0.5}),
    ("GridWorld", {}, {}),
    ("GridWorld", {"size": 3, "goal_row": 0, "goal_col": 2, "max_ticks": 10}, {"step": -0.1, "goal": 1.0}),
    ("GridWorld", {"size": 7, "max_ticks": 50, "goal_row": 2}, {"step": -0.01}),
    ("KuhnPoker", {}, {}),
    ("KuhnPoker", {"players": 3}, {"scale": 0.5}),
    ("KuhnPoker", {"players": 5}, {}),
    ("KuhnPoker", {"players": 10}, {"scale": -1.0}),
    ("Snake", {}, {}),
    ("Snake", {"grid_size": 8, "food": 2}, SNAKE_W),
    ("Snake", {"grid_size": 7, "num_snakes": 3, "food": 4, "initial_length": 2}, SNAKE_W2),
    ("Snake", {"grid_size": 10, "num_snakes": 8, "food": 6, "initial_length": 1}, SNAKE_W),
    ("Snake", {"grid_size": 6, "food": 5, "initial_length": 1, "play_to_last": False}, SNAKE_W2),
    ("Snake", {"grid_size": 6, "food": 8, "initial_length": 2, "win_food_lead": 1}, SNAKE_W),
    ("Snake", {"grid_size": 7, "food": 6, "win_food_lead": 3, "max_ticks": None}, SNAKE_W2),
    ("Snake", {"grid_size": 5, "food": 12, "initial_length": 4, "num_snakes": 2}, SNAKE_W),
    ("Snake", {"grid_size": 9, "num_snakes": 5, "food": 0, "initial_length": 3, "play_to_last": False}, SNAKE_W2),
]

_GOLDEN = 0x9E3779B97F4A7C15
_GOLDEN_INV = pow(_GOLDEN, -1, 2**64)


class SnakeFoodSync:
    """Copy the original's food after ticks this build cannot reproduce.

    The original places a tick's ``m >= 2`` respawns with *one* draw of its chance stream (an
    index into the ordered ``m``-tuples of free cells); this build resolves them one chance node
    (one draw) at a time.  Initial food and single respawns are exact, so only a tick on which
    our stream advanced by more than one draw is synced: our food becomes the original's (as a
    set) and our stream is rewound to one draw past the tick's start, as the original's.
    """

    def __init__(self):
        self.prev = None
        self.synced = 0

    def __call__(self, env, want_state):
        now = int(env._rng[0])
        if env.ticks > 0 and self.prev is not None and ((now - self.prev) * _GOLDEN_INV) % 2**64 > 1:
            _snake._with_food(env._def.params, env._state, [tuple(c) for c in want_state["food"]])
            env._rng[0] = np.uint64((self.prev + _GOLDEN) % 2**64)
            self.synced += 1
        self.prev = int(env._rng[0])


@pytest.mark.parametrize("ctor,kwargs,reward", PLAYOUTS, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(PLAYOUTS)])
def test_random_playouts_match(ctor, kwargs, reward):
    spec = {"ctor": ctor, "kwargs": kwargs, "reward": reward, "seeds": list(range(8)), "episodes": 4, "max_steps": 60}
    sync = SnakeFoodSync() if ctor == "Snake" else None
    assert replay(spec, sync=sync) > 50


CTOR_CALLS = [
    ("Connect4", {}),
    ("Connect4", {"foo": 1}),
    ("GridWorld", {}),
    ("GridWorld", {"size": 1}),
    ("GridWorld", {"size": -5}),
    ("GridWorld", {"size": 32768}),
    ("GridWorld", {"size": 2**31}),
    ("GridWorld", {"size": 5, "goal_row": 5}),
    ("GridWorld", {"size": 5, "goal_col": -1}),
    ("GridWorld", {"max_ticks": 0}),
    ("GridWorld", {"max_ticks": None}),
    ("GridWorld", {"max_ticks": -1}),
    ("GridWorld", {"max_ticks": 2**64}),
    ("GridWorld", {"max_ticks": 2**64 - 1}),
    ("GridWorld", {"size": 2.0}),
    ("GridWorld", {"size": True, "max_ticks": 3}),
    ("KuhnPoker", {"players": 1}),
    ("KuhnPoker", {"players": 11}),
    ("KuhnPoker", {"players": -1}),
    ("KuhnPoker", {"players": 2**64}),
    ("KuhnPoker", {"players": 2**32}),
    ("KuhnPoker", {"players": 4}),
    ("KuhnPoker", {"players": None}),
    ("Snake", {}),
    ("Snake", {"grid_size": 8, "food": 2, "num_snakes": 3, "initial_length": 1}),
    ("Snake", {"max_ticks": None, "win_food_lead": 2, "play_to_last": False}),
    ("Snake", {"max_ticks": 2**64 - 1, "win_food_lead": 2**64 - 1}),
    ("Snake", {"max_ticks": 2**63, "win_food_lead": 2**63}),
    ("Snake", {"max_ticks": 0, "num_snakes": 9}),
    ("Snake", {"num_snakes": 1}),
    ("Snake", {"num_snakes": 9}),
    ("Snake", {"grid_size": True, "num_snakes": True}),
    ("Snake", {"initial_length": 0}),
    ("Snake", {"win_food_lead": 0, "num_snakes": 3}),
    ("Snake", {"win_food_lead": 1, "num_snakes": 3}),
    ("Snake", {"grid_size": 20725, "food": 0}),
    ("Snake", {"grid_size": 0}),
    ("Snake", {"grid_size": -7, "initial_length": 2}),
    ("Snake", {"grid_size": 8, "food": 65}),
    ("Snake", {"grid_size": 8, "food": 59}),
    ("Snake", {"grid_size": 8, "food": 58}),
    ("Snake", {"grid_size": 457, "num_snakes": 3, "food": 3}),
    ("Snake", {"grid_size": 456, "num_snakes": 3, "food": 3}),
    ("Snake", {"grid_size": 11, "num_snakes": 8, "food": 8}),
    ("Snake", {"grid_size": 10, "num_snakes": 8, "food": 8}),
    ("Snake", {"grid_size": 40, "num_snakes": 5, "food": 5}),
    ("Snake", {"grid_size": 3, "initial_length": 4, "food": 0}),
    ("Snake", {"grid_size": 3, "initial_length": 5, "food": 0}),
    ("Snake", {"grid_size": 3, "initial_length": 7, "food": 0}),
    ("Snake", {"grid_size": -7, "initial_length": 1, "food": 0}),
    ("Snake", {"grid_size": -7, "initial_length": 2, "food": 0}),
    ("Snake", {"grid_size": 2, "initial_length": 1, "food": 0}),
    ("Snake", {"grid_size": 5, "num_snakes": 8, "initial_length": 1, "food": 0}),
    ("Snake", {"grid_size": 2.0}),
    ("Snake", {"food": -1, "grid_size": 1.0}),
    ("Snake", {"num_snakes": -1, "play_to_last": 1}),
    ("Snake", {"play_to_last": None}),
    ("Snake", {"max_ticks": -1, "win_food_lead": 1.5}),
    ("Snake", {"num_snakes": 1.5, "max_ticks": -1}),
    ("Snake", {"food": 2**64}),
    ("Snake", {"grid_size": 2**31}),
    ("Snake", {"grid_size": -(2**31) - 1}),
    ("Snake", {"grid_size": 2**70}),
    ("Snake", {"initial_length": "3"}),
    ("Snake", {"encoder": "snake"}),
    ("Snake", {"bogus": 1}),
]


def _ctor(ctor, kwargs):
    g = getattr(rf.games, ctor)(**kwargs)
    return {
        "config": rf.Env(g).resolved_config(),
        "shape": list(g.observation_space().shape),
        "n": g.action_space().n,
        "horizon": g.truncation_horizon(),
    }


def test_constructor_validation_matches():
    theirs = run_orig({"mode": "ctor", "calls": CTOR_CALLS})
    ours = [outcome(lambda c=c, k=k: _ctor(c, k)) for c, k in CTOR_CALLS]
    compare_outcomes(ours, theirs, [f"{c}({k})" for c, k in CTOR_CALLS])


ENV_SCRIPTS = [
    (
        "Connect4",
        {},
        [
            ("legal_actions", [2]),
            ("legal_actions", [-1]),
            ("observe", [5]),
            ("step", [{"1": 0}]),
            ("step", [{}]),
            ("step", [{"0": 9}]),
            ("information_state_key", [0]),
            ("step", [{"0": 3}]),
            ("active_agents", []),
            ("step", [{"1": 3}]),
            ("legal_actions", [1]),
            ("ticks", None),
        ],
    ),
    (
        "KuhnPoker",
        {"players": 2},
        [
            ("information_state_key", [2]),
            ("information_state_key", [1]),
            ("step", [{"0": 2}]),
            ("step", [{"2": 0}]),
            ("step", [{"0": 1}]),
            ("step", [{"1": 1}]),
            ("done", []),
            ("step", [{"0": 0}]),
            ("active_agents", []),
            ("legal_actions", [0]),
            ("information_state_key", [0]),
        ],
    ),
    (
        "GridWorld",
        {"size": 3},
        [
            ("legal_actions", [1]),
            ("step", [{"0": 4}]),
            ("step", [{"1": 0}]),
            ("step", [{"0": 0}]),
            ("state", []),
        ],
    ),
    (
        "Snake",
        {"grid_size": 9, "food": 0, "play_to_last": False},
        [
            ("legal_actions", [2]),
            ("legal_actions", [-1]),
            ("observe", [5]),
            ("information_state_key", [7]),
            ("step", [{"0": 0}]),
            ("step", [{"0": 0, "1": 3}]),
            ("step", [{"0": 0, "1": 0, "2": 0}]),
            ("step", [{"0": 2, "1": 1}]),
            ("step", [{"0": 0, "1": 1}]),
            ("step", [{"0": 0, "1": 1}]),
            ("step", [{"0": 0, "1": 1}]),
            ("state", []),
            ("step", [{"0": 0, "1": 1}]),
            ("done", []),
            ("active_agents", []),
            ("legal_actions", [1]),
            ("step", [{"1": 0}]),
            ("state", []),
        ],
    ),
]


@pytest.mark.parametrize("ctor,kwargs,calls", ENV_SCRIPTS, ids=[c for c, _, _ in ENV_SCRIPTS])
def test_env_errors_match(ctor, kwargs, calls):
    calls = [(m, a) for m, a in calls if a is not None]
    theirs = run_orig({"mode": "env", "ctor": ctor, "kwargs": kwargs, "calls": calls})
    env = rf.Env(getattr(rf.games, ctor)(**kwargs), rf.Reward(), seed=0)
    ours = []
    for method, args in calls:
        if method == "step":
            args = [{int(k): v for k, v in args[0].items()}]
        ours.append(outcome(lambda m=method, a=args: getattr(env, m)(*a)))
    compare_outcomes(ours, theirs, [f"{m}{a}" for m, a in calls])
