"""Differential tests: seeded random legal playouts against reinfors==0.4.0 (side venv).

Same seeds give the same chance draws in both builds (the chance stream is reproduced
exactly), so legal sets, observations, inspection states, events, rewards, terminal flags,
information-state keys and config fingerprints are compared bit for bit on every tick.
Skips cleanly when the side venv is absent; ``scripts/run_differential.sh`` sets it up.
"""

from __future__ import annotations

import pytest

import reinfors as rf

from .harness import compare_outcomes, outcome, replay, run_orig

pytestmark = pytest.mark.differential

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
]


@pytest.mark.parametrize("ctor,kwargs,reward", PLAYOUTS, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(PLAYOUTS)])
def test_random_playouts_match(ctor, kwargs, reward):
    spec = {"ctor": ctor, "kwargs": kwargs, "reward": reward, "seeds": list(range(8)), "episodes": 4, "max_steps": 60}
    assert replay(spec) > 50


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
