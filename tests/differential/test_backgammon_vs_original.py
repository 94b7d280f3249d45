"""Backgammon against reinfors==0.4.0 (side venv): seeded random playouts (legal actions,
observations, state dicts, events, rewards, done, ticks — every tick, bit for bit, so the dice
stream is reproduced exactly), constructor and Env errors, and Engine collections (DQN
episodes, PPO decisions, AlphaZero / Mcts episodes with in-step dice chance)."""

from __future__ import annotations

import collections

import pytest

import reinfors as rf

from .engine_cases import (
    AZ_FIELDS,
    DQN_FIELDS,
    PPO_FIELDS,
    TS_FIELDS,
    _decode,
    _dqn_episodes,
    _ours,
    _rows,
)
from .harness import compare_outcomes, outcome, replay, run_orig

pytestmark = pytest.mark.differential

PLAYOUTS = [
    ({}, {}, list(range(10))),
    ({"max_ticks": 50}, {"win": 1.5, "gammon": -7.0, "backgammon": 100.0}, list(range(100, 110))),
    ({"max_ticks": None}, {"gammon": 0.25}, [2**64 - 1, 12345, 7]),
]


@pytest.mark.parametrize("kwargs,reward,seeds", PLAYOUTS, ids=["default", "weighted", "no-horizon"])
def test_random_playouts_match(kwargs, reward, seeds):
    spec = {"ctor": "Backgammon", "kwargs": kwargs, "reward": reward, "seeds": seeds, "episodes": 2, "max_steps": 600}
    assert replay(spec) > 100 * len(seeds)


CTOR_CALLS = [
    ("Backgammon", {}),
    ("Backgammon", {"max_ticks": None}),
    ("Backgammon", {"max_ticks": 0}),
    ("Backgammon", {"max_ticks": -1}),
    ("Backgammon", {"max_ticks": 2**64}),
    ("Backgammon", {"max_ticks": 2**64 - 1}),
    ("Backgammon", {"max_ticks": 2**63}),
    ("Backgammon", {"max_ticks": 1.0}),
    ("Backgammon", {"max_ticks": True}),
    ("Backgammon", {"max_ticks": "3"}),
    ("Backgammon", {"foo": 1}),
    ("Backgammon", {"encoder": "backgammon"}),
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


ENV_CALLS = [
    ("legal_actions", [2]),
    ("legal_actions", [-1]),
    ("legal_actions", [0]),
    ("observe", [5]),
    ("information_state_key", [0]),
    ("step", [{"0": 0}]),
    ("step", [{"1": 0}]),
    ("step", [{"1": 1352}]),
    ("step", [{}]),
    ("step", [{"0": 137, "1": 137}]),
    ("step", [{"1": 137}]),
    ("state", []),
    ("active_agents", []),
    ("step", [{"1": 137}]),
    ("legal_actions", [0]),
    ("step", [{"0": 1351}]),
    ("state", []),
]


def test_env_errors_match():
    theirs = run_orig({"mode": "env", "ctor": "Backgammon", "kwargs": {}, "calls": ENV_CALLS})
    env = rf.Env(rf.games.Backgammon(), rf.Reward(), seed=0)
    ours = []
    for method, args in ENV_CALLS:
        if method == "step":
            args = [{int(k): v for k, v in args[0].items()}]
        ours.append(outcome(lambda m=method, a=args: getattr(env, m)(*a)))
    compare_outcomes(ours, theirs, [f"{m}{a}" for m, a in ENV_CALLS])


def _engine_spec(policy, pk, learner, lk, ek, fields, kwargs=None, reward=None, cb_seed=5):
    return {
        "mode": "engine",
        "ctor": "Backgammon",
        "kwargs": kwargs or {},
        "reward": reward or {},
        "policy": policy,
        "policy_kwargs": pk,
        "learner": learner,
        "learner_kwargs": lk,
        "engine": dict(ek, n_threads=1),
        "fields": fields,
        "cb_seed": cb_seed,
    }


def test_dqn_episodes_match_the_original():
    ek = {"n_games": 3, "seed": 3}
    spec = _engine_spec(
        "EpsilonGreedyQ", {"epsilon": 0.3}, "Dqn", {"n_step": 2, "gamma": 0.95}, ek, DQN_FIELDS,
        kwargs={"max_ticks": 40}, reward={"win": 1.0, "gammon": 5.0},
    )  # fmt: skip
    theirs_raw = run_orig(dict(spec, collects=6, floor=80))
    theirs = _dqn_episodes([{"fields": _decode(b["fields"]), "episodes": b["episodes"]} for b in theirs_raw])
    ours = _dqn_episodes(_ours(dict(spec, engine=dict(ek)), 2, 80))
    assert sum(ours.values()) >= 3
    missing = ours - theirs
    assert not missing, f"{sum(missing.values())} of {sum(ours.values())} episodes differ from the original"


def test_ppo_decisions_match_the_original():
    ek = {"n_games": 3, "seed": 2}
    lk = {"gamma": 0.97, "lam": 0.9}
    spec = _engine_spec("Ppo", {}, "Ppo", lk, ek, PPO_FIELDS, kwargs={"max_ticks": 30}, cb_seed=9)
    theirs = collections.Counter()
    for b in run_orig(dict(spec, collects=6, floor=60)):
        f = _decode(b["fields"])
        theirs.update(_rows(f, i, PPO_FIELDS) for i in range(len(f["actions"])))
    ours = collections.Counter()
    for b in _ours(dict(spec, engine=dict(ek)), 2, 60):
        f = b["fields"]
        ours.update(_rows(f, i, PPO_FIELDS) for i in range(len(f["actions"])))
    assert sum(ours.values()) >= 60
    assert not (ours - theirs)


SEARCH_CASES = [
    ("az", "AlphaZero", {"num_simulations": 8}, "AlphaZero", {"gamma": 1.0}, {"n_games": 2, "seed": 4}),
    ("mcts", "Mcts", {"num_simulations": 6}, "TreeStrap", {"gamma": 0.9}, {"n_games": 2, "seed": 6}),
    ("mmx-committed2", "Minimax", {"depth": 1, "chance": {"name": "committed", "samples": 2}}, "TreeStrap",
     {"gamma": 0.9}, {"n_games": 2, "seed": 6}),
    ("sx-committed1", "SelectiveExpectimax", {"expansion_budget": 2, "top_k": 1}, "TreeStrap", {"gamma": 0.9},
     {"n_games": 2, "seed": 4}),
    pytest.param(
        ("sx-committed3", "SelectiveExpectimax",
         {"expansion_budget": 3, "top_k": 2, "n_heads": 2, "chance": {"name": "committed", "samples": 3}},
         "TreeStrap", {"interior_targets": True}, {"n_games": 2, "seed": 5}),
        marks=pytest.mark.xfail(strict=True, reason="last-ulp target differences (rows, masks and draws equal)"),
        id="sx-committed3",
    ),
]  # fmt: skip


# AlphaZero / Mcts under AlwaysResample (their default): every descent through a chance edge draws
# its roll from the slot stream and goes on into that roll's child, created the first time the roll
# is drawn (docs/original-0.4.0/search-chance.md §3).  Minimax / SelectiveExpectimax under
# Committed(k) (SelectiveExpectimax's default, k = 1): the k rolls of a chance edge come from the
# slot stream as its children are made, the last child first (§1, §2).  Whole episodes compared.
@pytest.mark.slow  # Backgammon's tree kernels (~2.5 min cold)
@pytest.mark.parametrize("case", SEARCH_CASES, ids=[c[0] if isinstance(c, tuple) else None for c in SEARCH_CASES])
def test_search_episodes_match_the_original(case):
    _, pol, pk, lrn, lk, ek = case
    names = AZ_FIELDS if lrn == "AlphaZero" else TS_FIELDS
    spec = _engine_spec(pol, pk, lrn, lk, ek, names, kwargs={"max_ticks": 24}, cb_seed=3)
    theirs_raw = run_orig(dict(spec, collects=4, floor=60))
    theirs = _dqn_episodes([{"fields": _decode(b["fields"]), "episodes": b["episodes"]} for b in theirs_raw], names)
    ours = _dqn_episodes(_ours(dict(spec, engine=dict(ek)), 2, 40), names)
    assert sum(ours.values()) >= 2
    missing = ours - theirs
    assert not missing, f"{sum(missing.values())} of {sum(ours.values())} episodes differ from the original"
