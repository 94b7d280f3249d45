"""Leduc poker against reinfors==0.4.0 (side venv): seeded playouts, constructor and Env errors.

Same seeds deal the same cards in both builds (private cards at reset, the public card lazily
after round 1), so legal sets, observations, state dicts, events, rewards, information-state
keys and fingerprints are compared bit for bit on every tick.  Skips without the side venv.
"""

from __future__ import annotations

import json
import subprocess

import pytest

import reinfors as rf

from .harness import compare_outcomes, outcome, replay, require_orig, run_orig

pytestmark = pytest.mark.differential


@pytest.mark.parametrize("reward", [{}, {"scale": 0.5}, {"scale": -3.0}])
def test_random_playouts_match(reward):
    spec = {"ctor": "LeducPoker", "kwargs": {}, "reward": reward, "seeds": list(range(12)), "episodes": 6}
    spec["max_steps"] = 20
    assert replay(spec) > 200


CTOR_CALLS = [
    ("LeducPoker", {}),
    ("LeducPoker", {"players": 2}),
    ("LeducPoker", {"encoder": "leduc_poker"}),
    ("LeducPoker", {"bogus": 1}),
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


CALLS = [
    ("information_state_key", [2]),
    ("information_state_key", [-1]),
    ("legal_actions", [2]),
    ("observe", [2]),
    ("step", [{"1": 1}]),
    ("step", [{"0": 0}]),
    ("step", [{"0": 3}]),
    ("step", [{}]),
    ("step", [{"0": 2}]),
    ("step", [{"1": 2}]),
    ("step", [{"0": 2}]),
    ("step", [{"0": 1}]),
    ("state", []),
    ("information_state_key", [1]),
    ("step", [{"0": 0}]),
    ("step", [{"0": 2}]),
    ("step", [{"1": 0}]),
    ("done", []),
    ("state", []),
    ("step", [{"0": 1}]),
    ("active_agents", []),
    ("legal_actions", [0]),
    ("information_state_key", [0]),
]


def test_env_errors_match():
    theirs = run_orig({"mode": "env", "ctor": "LeducPoker", "kwargs": {}, "calls": CALLS})
    env = rf.Env(rf.games.LeducPoker(), rf.Reward(), seed=0)
    ours = []
    for method, args in CALLS:
        if method == "step":
            args = [{int(k): v for k, v in args[0].items()}]
        ours.append(outcome(lambda m=method, a=args: getattr(env, m)(*a)))
    compare_outcomes(ours, theirs, [f"{m}{a}" for m, a in CALLS])


def test_encoder_handle_matches():
    calls = [("head_index", [2, 0]), ("head_index", [3, 0]), ("game_action", [1, 7]), ("game_action", [-1, 0])]
    code = (
        "import json, reinfors as rf\n"
        "e = rf.encoders.LeducPoker()\n"
        "out = []\n"
        f"for m, a in {calls!r}:\n"
        "    try: out.append(['ok', getattr(e, m)(*a)])\n"
        "    except Exception as x: out.append([type(x).__name__, str(x)])\n"
        "out.append(['ok', e.name]); out.append(['ok', 'leduc_poker' in rf.encoders.registered()])\n"
        "try: rf.games.KuhnPoker(encoder=e)\n"
        "except Exception as x: out.append([type(x).__name__, str(x)])\n"
        "print(json.dumps(out))\n"
    )
    py = require_orig()
    res = subprocess.run([py, "-I", "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert res.returncode == 0, res.stderr[-2000:]
    theirs = json.loads(res.stdout)
    e = rf.encoders.LeducPoker()
    ours = []
    for m, a in calls:
        try:
            ours.append(["ok", getattr(e, m)(*a)])
        except Exception as x:  # noqa: BLE001 - compared with the original
            ours.append([type(x).__name__, str(x)])
    ours.append(["ok", e.name])
    ours.append(["ok", "leduc_poker" in rf.encoders.registered()])
    try:
        rf.games.KuhnPoker(encoder=e)
    except Exception as x:  # noqa: BLE001
        ours.append([type(x).__name__, str(x)])
    assert ours == theirs


@pytest.mark.slow
def test_engine_dqn_episodes_match_the_original():
    """Engine self-play on Leduc (private deal at reset, public card inside a step) replays the
    original's episodes bit for bit (see test_engine_vs_original.py for the per-episode scheme)."""
    from .engine_cases import DQN_FIELDS, _decode, _dqn_episodes, _ours

    spec = {
        "mode": "engine",
        "ctor": "LeducPoker",
        "kwargs": {},
        "reward": {"scale": 0.5},
        "policy": "EpsilonGreedyQ",
        "policy_kwargs": {"epsilon": 0.4},
        "learner": "Dqn",
        "learner_kwargs": {"n_step": 2, "gamma": 0.9},
        "engine": {"n_games": 4, "seed": 3, "n_threads": 1},
        "fields": DQN_FIELDS,
        "cb_seed": 5,
    }
    theirs_raw = run_orig(dict(spec, collects=6, floor=80))
    theirs = _dqn_episodes([{"fields": _decode(b["fields"]), "episodes": b["episodes"]} for b in theirs_raw])
    ours = _dqn_episodes(_ours(dict(spec, engine={"n_games": 4, "seed": 3}), 2, 80))
    assert sum(ours.values()) >= 5
    missing = ours - theirs
    assert not missing, f"{sum(missing.values())} of {sum(ours.values())} episodes differ from the original"


@pytest.mark.slow
def test_engine_ppo_decisions_match_the_original():
    """Every PPO decision record on Leduc (obs, action, behaviour log-prob, critic value, legal
    set) is one the original records."""
    import collections

    from .engine_cases import PPO_FIELDS, _decode, _ours, _rows

    spec = {
        "mode": "engine",
        "ctor": "LeducPoker",
        "kwargs": {},
        "reward": {},
        "policy": "Ppo",
        "policy_kwargs": {},
        "learner": "Ppo",
        "learner_kwargs": {"gamma": 1.0, "lam": 0.9},
        "engine": {"n_games": 4, "seed": 6, "n_threads": 1},
        "fields": PPO_FIELDS,
        "cb_seed": 9,
    }
    theirs = collections.Counter()
    for b in run_orig(dict(spec, collects=6, floor=60)):
        f = _decode(b["fields"])
        theirs.update(_rows(f, i, PPO_FIELDS) for i in range(len(f["actions"])))
    ours = collections.Counter()
    for b in _ours(dict(spec, engine={"n_games": 4, "seed": 6}), 2, 60):
        f = b["fields"]
        ours.update(_rows(f, i, PPO_FIELDS) for i in range(len(f["actions"])))
    assert sum(ours.values()) >= 100
    assert not (ours - theirs)
