"""``choose`` reuses a finished call's runtime buffers (reset to a new runtime's contents): no
call can see another's statistics, predictions or random state."""

from __future__ import annotations

import numpy as np
import pytest

import reinfors as rf
from reinfors._runtime import choose as choose_mod


def _envs(n, shift):
    g = rf.games.Connect4()
    out = []
    for i in range(n):
        e = rf.Env(g, rf.Reward(win=1.0, loss=-1.0), seed=i)
        for t in range((i + shift) % 6):
            a = e.active_agents()[0]
            legal = e.legal_actions(a)
            e.step({a: legal[(i * 3 + t + shift) % len(legal)]})
        out.append(e)
    return out


def _q(obs):
    # Row-dependent and deterministic: predictions depend only on the row's bytes.
    w = np.random.default_rng(7).standard_normal((obs.shape[1], 7)).astype(np.float32)
    return (obs @ w)[:, None, :]


@pytest.mark.parametrize("policy", [rf.policies.Mcts(num_simulations=24, temperature=1.0), rf.policies.Minimax(depth=2)])
def test_interleaved_calls_equal_fresh_runtimes(policy, monkeypatch):
    a_envs, b_envs = _envs(8, 0), _envs(8, 3)
    first = policy.choose(a_envs, _q, seed=11, gamma=1.0)
    other = policy.choose(b_envs, _q, seed=12, gamma=1.0)
    assert policy.choose(a_envs, _q, seed=11, gamma=1.0) == first
    with pytest.raises(ZeroDivisionError):  # a failed call keeps nothing
        policy.choose(b_envs, lambda obs: 1 / 0, seed=12, gamma=1.0)
    assert policy.choose(b_envs, _q, seed=12, gamma=1.0) == other
    monkeypatch.setattr(choose_mod, "_take", lambda key: None)  # always a new runtime
    assert policy.choose(a_envs, _q, seed=11, gamma=1.0) == first
    assert policy.choose(b_envs, _q, seed=12, gamma=1.0) == other
