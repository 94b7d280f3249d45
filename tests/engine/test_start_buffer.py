"""``start_buffer`` (reached-state starts, Snake): each slot keeps a uniform reservoir of the
non-terminal states it has reached; an episode starts from one of them with probability
``1 - p_fresh``.  The buffer draws on its own stream, so ``p_fresh=1`` collects exactly what
``start_buffer=False`` does; buffers are per slot, so batches stay identical at any ``n_threads``,
and snapshots carry them."""

from __future__ import annotations

import numpy as np
import pytest

import reinfors as rf
from reinfors.jit import engine_codes as C


def _zero(obs):
    return np.zeros((len(obs), 1, 3), np.float32)


def _engine(n_threads=1, **kw):
    game = rf.games.Snake(grid_size=8, num_snakes=2, food=1)
    return rf.Engine(
        game, rf.Reward(), rf.policies.EpsilonGreedyQ(epsilon=0.2), rf.learners.Dqn(), n_games=4, seed=5,
        n_threads=n_threads, **kw,
    )  # fmt: skip


def _seeded(batch):
    return [bool(e[2]) for e in batch.telemetry["episodes"]]


def _same(a, b):
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("obs", "actions", "rewards", "masks", "next_obs"))


def test_resolved_config_and_validation():
    e = _engine(start_buffer=True, start_buffer_capacity=40, p_fresh=0.25)
    assert e.resolved_config()["engine"]["start_buffer"] == {"capacity": 40, "p_fresh": 0.25}
    assert _engine().resolved_config()["engine"]["start_buffer"] is None
    with pytest.raises(ValueError, match="start_buffer_capacity must be >= 1"):
        _engine(start_buffer=True, start_buffer_capacity=0)
    with pytest.raises(ValueError, match=r"p_fresh must be in \[0, 1\]"):
        _engine(start_buffer=True, p_fresh=float("nan"))
    with pytest.raises(ValueError, match="does not support start_buffer"):
        rf.Engine(rf.games.Connect4(), None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 2, start_buffer=True)
    _engine(start_buffer_capacity=0, p_fresh=7.0)  # not checked with start_buffer off (as 0.4.0)


def test_p_fresh_one_collects_exactly_what_no_buffer_does():
    off, on = _engine(), _engine(start_buffer=True, start_buffer_capacity=30, p_fresh=1.0)
    for _ in range(2):
        a, b = off.collect(150, _zero), on.collect(150, _zero)
        assert _same(a, b) and not any(_seeded(b))


def test_episodes_start_from_reached_states():
    e = _engine(start_buffer=True, start_buffer_capacity=20, p_fresh=0.0)
    first = e.collect(200, _zero)
    flags = _seeded(first)
    # a slot's first episode starts fresh (its buffer is empty); every later one is seeded
    assert flags.count(False) <= 4 and flags.count(True) >= len(flags) - 4 > 0
    later = e.collect(200, _zero)
    assert all(_seeded(later))
    mixed = _engine(start_buffer=True, start_buffer_capacity=20, p_fresh=0.5)
    mixed.collect(200, _zero)
    flags = _seeded(mixed.collect(400, _zero)) + _seeded(mixed.collect(400, _zero))
    assert 0.3 < sum(flags) / len(flags) < 0.7
    # the reservoir holds reached, live states and never more than its share of the capacity
    meta = e._rt["sb_meta"]
    assert (meta[:, C.SB_STORED] == 5).all() and (meta[:, C.SB_SEEN] > 5).all()
    held = e._rt["sb_states"][:, :5]
    assert (held[:, :, 1] == 0).all()


def test_seeded_starts_change_the_data():
    a = _engine().collect(300, _zero)
    b = _engine(start_buffer=True, start_buffer_capacity=20, p_fresh=0.0).collect(300, _zero)
    assert not np.array_equal(a.obs[: min(len(a.obs), len(b.obs))], b.obs[: min(len(a.obs), len(b.obs))])


def test_identical_at_any_n_threads_and_across_snapshots():
    kw = dict(start_buffer=True, start_buffer_capacity=24, p_fresh=0.3)
    one, two = _engine(1, **kw), _engine(2, **kw)
    for _ in range(3):
        assert _same(one.collect(120, _zero), two.collect(120, _zero))
    snap = rf.EngineSnapshot.from_bytes(one.snapshot().to_bytes())
    restored = _engine(2, **kw)
    restored.restore(snap)
    a, b = one.collect(160, _zero), restored.collect(160, _zero)
    assert _same(a, b) and a.telemetry["episodes"] == b.telemetry["episodes"]


def test_restore_rejects_a_corrupt_buffer():
    kw = dict(start_buffer=True, start_buffer_capacity=8, p_fresh=0.3)
    e = _engine(**kw)
    e.collect(100, _zero)
    snap = e.snapshot()
    for name, edit in (
        ("sb_meta", lambda a: a.__setitem__((0, C.SB_STORED), 99)),
        ("sb_meta", lambda a: a.__setitem__((1, C.SB_SEEDED), 2)),
        ("sb_states", lambda a: a.__setitem__((0, 0, 1), 1)),  # a finished game
    ):
        arrays = {k: (v.copy() if k == name else v) for k, v in snap._arrays.items()}
        edit(arrays[name])
        bad = rf.EngineSnapshot._make(snap.fingerprint, snap.weights_generation, snap.policy_version, snap._header, arrays)
        fresh = _engine(**kw)
        with pytest.raises(ValueError, match="invalid EngineSnapshot"):
            fresh.restore(bad)
        assert _same(fresh.collect(60, _zero), _engine(**kw).collect(60, _zero))  # left as it was


def test_huge_capacity_grows_lazily():
    e = _engine(start_buffer=True, start_buffer_capacity=2**40, p_fresh=0.5)
    b = e.collect(200, _zero)
    assert len(b.obs) >= 200 and e._rt["sb_states"].shape[1] < 10_000
