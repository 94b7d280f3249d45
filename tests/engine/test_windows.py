"""Collect windows on a simultaneous game: a window delivers the records completed before the
first (decision level, slot) completion that brings it to its floor — 0.4.0 stops admitting
decisions at the floor — and carries later completions to the next window.  So it overshoots
by at most one slot's completion, loses nothing, and the windows partition one long run."""

from __future__ import annotations

import numpy as np
import pytest

import reinfors as rf

SNAKES = 3
FIELDS = ("obs", "actions", "rewards", "dones", "next_obs", "players")


def _zero(obs):
    return np.zeros((len(obs), 1, 3), np.float32)


def _engine(n_threads=1):
    game = rf.games.Snake(num_snakes=SNAKES, grid_size=10, food=1)
    return rf.Engine(game, rf.Reward(), rf.policies.EpsilonGreedyQ(epsilon=0.3), rf.learners.Dqn(), 3, seed=4,
                     n_threads=n_threads)  # fmt: skip


@pytest.mark.parametrize("floor", [1, 30, 97])
def test_a_window_overshoots_by_at_most_its_last_completion(floor):
    e = _engine()
    for _ in range(5):
        b = e.collect(floor, _zero)
        n = len(b.obs)
        # DQN on Snake: a completion is one episode's records, each player's trajectory ending
        # in a terminal record; the episodes are reported in completion order
        assert int(b.dones.sum()) == SNAKES * len(b.telemetry["episodes"]) >= SNAKES
        ends = np.flatnonzero(b.dones)
        assert ends[-1] == n - 1
        before_last = ends[-SNAKES - 1] + 1 if len(ends) > SNAKES else 0
        assert before_last < floor <= n


def test_windows_partition_one_long_run_at_any_threads():
    one, two = _engine(1), _engine(2)
    parts = []
    for f in (40, 1, 1, 200, 7, 64):
        a, b = one.collect(f, _zero), two.collect(f, _zero)
        assert all(np.array_equal(getattr(a, x), getattr(b, x)) for x in FIELDS)
        assert a.telemetry["episodes"] == b.telemetry["episodes"]
        parts.append(a)
    whole = _engine(1).collect(sum(len(p.obs) for p in parts), _zero)
    for x in FIELDS:
        assert np.array_equal(np.concatenate([getattr(p, x) for p in parts]), getattr(whole, x)), x
    assert sum((p.telemetry["episodes"] for p in parts), []) == whole.telemetry["episodes"]
