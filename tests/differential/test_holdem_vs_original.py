"""Differential tests: Texas Hold'em against reinfors==0.4.0 (side venv).

Seeded random legal playouts give the same button, hole cards and board in both builds (the
deal's chance draws are reproduced exactly), so active seats, legal sets, every seat's
observation, the inspection state (hidden cards included), events, rewards, done / ticks and
information-state keys are compared bit for bit on every tick.  Small stacks force all-ins and
run-outs; unequal blinds force odd split pots.  Skips cleanly without the side venv.
"""

from __future__ import annotations

import pytest

import reinfors as rf

from .harness import compare_outcomes, outcome, replay, run_orig

pytestmark = pytest.mark.differential

PLAYOUTS = [
    ({}, {}),
    ({"num_players": 2}, {"scale": 0.5}),
    ({"num_players": 3, "stack": 25}, {}),
    ({"num_players": 4, "stack": 40, "small_blind": 3, "big_blind": 10}, {"scale": -2.0}),
    ({"num_players": 9, "stack": 60, "small_blind": 1, "big_blind": 2}, {}),
    ({"num_players": 3, "stack": 10, "small_blind": 5, "big_blind": 10}, {}),
    ({"num_players": 2, "stack": 11, "small_blind": 10, "big_blind": 10}, {}),
    ({"num_players": 5, "stack": 1000, "small_blind": 7, "big_blind": 7}, {}),
]


@pytest.mark.parametrize("kwargs,reward", PLAYOUTS, ids=[f"holdem-{i}" for i in range(len(PLAYOUTS))])
def test_random_playouts_match(kwargs, reward):
    spec = {
        "ctor": "TexasHoldem",
        "kwargs": kwargs,
        "reward": reward,
        "seeds": list(range(6)),
        "episodes": 5,
        "max_steps": 200,
    }
    assert replay(spec) > 50


CTOR_CALLS = [
    {},
    {"num_players": 2},
    {"num_players": 9, "stack": 2**24, "small_blind": 1, "big_blind": 2**24},
    {"num_players": 1},
    {"num_players": 10},
    {"num_players": 0},
    {"num_players": True},
    {"num_players": -1},
    {"num_players": 2**64},
    {"num_players": 2**32},
    {"num_players": 2.0},
    {"num_players": None},
    {"stack": -1},
    {"stack": 2**32},
    {"stack": 2**32 - 1},
    {"stack": 2**63},
    {"stack": 2**64},
    {"stack": 2**24},
    {"stack": 2**24 + 1},
    {"stack": 0},
    {"stack": 9},
    {"stack": 10},
    {"stack": True},
    {"stack": 1.5},
    {"stack": "1"},
    {"small_blind": 11},
    {"small_blind": 10},
    {"small_blind": 0},
    {"big_blind": 0},
    {"small_blind": -1},
    {"big_blind": -1},
    {"big_blind": 2**32},
    {"big_blind": 2**70},
    {"small_blind": 2**32, "big_blind": 0},
    {"stack": 10, "small_blind": 10, "big_blind": 10},
    {"stack": 5, "small_blind": 5, "big_blind": 10},
    {"stack": 2**24 + 1, "small_blind": 2**24 + 1, "big_blind": 2**24 + 1},
    {"stack": 2**25, "small_blind": 0},
    {"stack": 2**24 + 1, "big_blind": 2**25},
    {"num_players": 10, "small_blind": 11},
    {"num_players": 2.0, "stack": 1.5},
    {"encoder": "texas_holdem"},
    {"bogus": 1},
]


def _ctor(kwargs):
    g = rf.games.TexasHoldem(**kwargs)
    return {
        "config": rf.Env(g).resolved_config(),
        "shape": list(g.observation_space().shape),
        "n": g.action_space().n,
        "horizon": g.truncation_horizon(),
    }


def test_constructor_validation_matches():
    calls = [("TexasHoldem", k) for k in CTOR_CALLS]
    theirs = run_orig({"mode": "ctor", "calls": calls})
    ours = [outcome(lambda k=k: _ctor(k)) for k in CTOR_CALLS]
    compare_outcomes(ours, theirs, [f"TexasHoldem({k})" for k in CTOR_CALLS])


ENV_SCRIPTS = [
    (
        {"num_players": 3},
        [
            ("active_agents", []),
            ("legal_actions", [0]),
            ("legal_actions", [3]),
            ("legal_actions", [-1]),
            ("observe", [3]),
            ("information_state_key", [3]),
            ("information_state_key", [-1]),
            ("step", [{"0": 1}]),
            ("step", [{"2": 3}]),
            ("step", [{}]),
            ("step", [{"2": 1, "0": 1}]),
            ("step", [{"2": 2}]),
            ("step", [{"0": 2}]),
            ("step", [{"1": 2}]),
            ("step", [{"2": 2}]),
            ("legal_actions", [0]),
            ("step", [{"0": 0}]),
            ("step", [{"1": 0}]),
            ("done", []),
            ("active_agents", []),
            ("legal_actions", [2]),
            ("step", [{"2": 1}]),
            ("state", []),
        ],
    ),
    (
        {"num_players": 2, "stack": 10},
        [
            ("state", []),
            ("legal_actions", [1]),
            ("step", [{"1": 2}]),
            ("step", [{"1": 1}]),
            ("done", []),
            ("state", []),
            ("rewards", None),
        ],
    ),
]


@pytest.mark.parametrize("kwargs,calls", ENV_SCRIPTS, ids=[f"env-{i}" for i in range(len(ENV_SCRIPTS))])
def test_env_errors_match(kwargs, calls):
    calls = [(m, a) for m, a in calls if a is not None]
    theirs = run_orig({"mode": "env", "ctor": "TexasHoldem", "kwargs": kwargs, "calls": calls})
    env = rf.Env(rf.games.TexasHoldem(**kwargs), rf.Reward(), seed=0)
    ours = []
    for method, args in calls:
        if method == "step":
            args = [{int(k): v for k, v in args[0].items()}]
        ours.append(outcome(lambda m=method, a=args: getattr(env, m)(*a)))
    compare_outcomes(ours, theirs, [f"{m}{a}" for m, a in calls])


# -- engine: DQN episodes and PPO decisions equal 0.4.0's (the engine's per-slot deal streams) ----


def _engine_spec(policy, learner, lk, fields, ek):
    return {
        "mode": "engine",
        "ctor": "TexasHoldem",
        "kwargs": {"num_players": 3, "stack": 40},
        "reward": {"scale": 0.1},
        "policy": policy,
        "policy_kwargs": {"epsilon": 0.4} if policy == "EpsilonGreedyQ" else {},
        "learner": learner,
        "learner_kwargs": lk,
        "engine": dict(ek, n_threads=1),
        "fields": fields,
        "cb_seed": 3,
    }


def test_engine_dqn_episodes_match_the_original():
    from .engine_cases import DQN_FIELDS, _decode, _dqn_episodes, _ours

    ek = {"n_games": 4, "seed": 3}
    spec = _engine_spec("EpsilonGreedyQ", "Dqn", {"n_step": 2, "gamma": 0.9}, DQN_FIELDS, ek)
    theirs_raw = run_orig(dict(spec, collects=5, floor=80))
    theirs = _dqn_episodes([{"fields": _decode(b["fields"]), "episodes": b["episodes"]} for b in theirs_raw])
    ours = _dqn_episodes(_ours(dict(spec, engine=dict(ek)), 2, 80))
    assert sum(ours.values()) >= 5
    missing = ours - theirs
    assert not missing, f"{sum(missing.values())} of {sum(ours.values())} episodes differ from the original"


def test_engine_ppo_decisions_match_the_original():
    import collections

    from .engine_cases import PPO_FIELDS, _decode, _ours, _rows

    ek = {"n_games": 4, "seed": 2}
    spec = _engine_spec("Ppo", "Ppo", {"gamma": 0.97, "lam": 0.9}, PPO_FIELDS, ek)
    theirs = collections.Counter()
    for b in run_orig(dict(spec, collects=5, floor=60)):
        f = _decode(b["fields"])
        theirs.update(_rows(f, i, PPO_FIELDS) for i in range(len(f["actions"])))
    ours = collections.Counter()
    for b in _ours(dict(spec, engine=dict(ek)), 2, 60):
        f = b["fields"]
        ours.update(_rows(f, i, PPO_FIELDS) for i in range(len(f["actions"])))
    assert sum(ours.values()) >= 100
    assert not (ours - theirs)
