"""A large collect costs about its batch's bytes, and a floor that cannot fit fails up front.

* The record pool is handed to the batch in place (``Runtime.take_records``): peak RSS growth of
  a collect stays within 1.5x the returned batch (+ a small constant), measured in a fresh
  process with ``/proc/self/clear_refs`` / ``VmHWM``.
* ``collect`` / ``collect_stream`` refuse a floor whose batch and pool exceed the memory
  available with a ``MemoryError`` naming the parameter and the bytes, before any work, and the
  engine collects normally afterwards.
* The two pool kernels against numpy references.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import GEOMETRY_KEYS, assert_same_batch  # tests/ is on sys.path (rootdir conftest)

import reinfors as rf
import reinfors.engine as engine_mod
from reinfors.jit import records

ROOT = Path(__file__).resolve().parents[2]


def _zero(obs):
    return np.zeros((len(obs), 7), np.float32), np.zeros(len(obs), np.float32)


def _engine():
    return rf.Engine(rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0), rf.policies.Ppo(), rf.learners.Ppo(), n_games=8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8, np.int64])
def test_permute_rows_matches_fancy_indexing(dtype):
    rs = np.random.default_rng(3)
    a = (rs.random((97, 5)) * 100).astype(dtype)
    n = 90
    perm = rs.permutation(n).astype(np.int64)
    want = a.copy()
    want[:n] = a[perm]
    # as the engine calls it: on the array's uint8 byte view (one compile for every dtype)
    records.permute_rows(a.view(np.uint8), perm, n, np.zeros(n, np.uint8), np.full(n, 5 * a.itemsize, np.int64))
    np.testing.assert_array_equal(a, want)


def test_row_prefix_kernels_move_only_each_rows_leading_columns():
    """AlphaZero's compact target rows hold ``width[i]`` leading columns; the pool kernels move,
    take and permute just those (the stale rest of a row is never read), and ``scatter_rows``
    puts them at the rows' legal ids."""
    rs = np.random.default_rng(5)
    a = rs.random((40, 9))
    width = rs.integers(0, 10, 40)
    src, dst = np.arange(30, 40), np.arange(0, 20, 2)
    b = a.copy()
    records.copy_rows(b.view(np.uint8), src, b.view(np.uint8), dst, width[src] * 8)
    for s, d in zip(src, dst, strict=True):
        np.testing.assert_array_equal(b[d, : width[s]], a[s, : width[s]])
        np.testing.assert_array_equal(b[d, width[s] :], a[d, width[s] :])  # the rest untouched
    rows = rs.permutation(40)[:15]
    out = np.zeros((15, 9))
    records.copy_rows(a.view(np.uint8), rows, out.view(np.uint8), np.arange(15), width[rows] * 8)
    for i, r in enumerate(rows):
        np.testing.assert_array_equal(out[i], np.where(np.arange(9) < width[r], a[r], 0.0))
    perm = rs.permutation(40).astype(np.int64)
    c = a.copy()
    records.permute_rows(c.view(np.uint8), perm, 40, np.zeros(40, np.uint8), width * 8)
    for j in range(40):
        np.testing.assert_array_equal(c[j, : width[perm[j]]], a[perm[j], : width[perm[j]]])
    mask = (rs.random((15, 12)) < 0.5).astype(np.uint8)
    ids, off = records.legal_csr(mask, 15, False)
    compact = rs.random((15, 12))
    dense = np.zeros((15, 12))
    records.scatter_rows(compact, ids, off, dense, False)
    stale = rs.random((15, 12))  # recycled memory: cleared row by row
    records.scatter_rows(compact, ids, off, stale, True)
    for i in range(15):
        want = np.zeros(12)
        want[np.flatnonzero(mask[i])] = compact[i, : mask[i].sum()]
        np.testing.assert_array_equal(dense[i], want)
        np.testing.assert_array_equal(stale[i], want)


def test_legal_csr_matches_nonzero():
    rs = np.random.default_rng(4)
    mask = (rs.random((50, 9)) < 0.4).astype(np.uint8)
    ids, off = records.legal_csr(mask, 40, False)
    assert ids.dtype == np.int64 and off.dtype == np.int64 and len(off) == 41
    for i in range(40):
        np.testing.assert_array_equal(ids[off[i] : off[i + 1]], np.flatnonzero(mask[i]))


def test_legal_csr_of_a_rank_mask_follows_the_ranks():
    """A LEGAL_RANKS game's mask holds each legal action's 1-based position in the game's order:
    the CSR lists the ids in that order (chess: 0.4.0's generation order)."""
    rs = np.random.default_rng(5)
    mask = np.zeros((30, 12), np.uint8)
    orders = []
    for i in range(30):
        ids = rs.permutation(12)[: rs.integers(0, 12)]
        mask[i, ids] = np.arange(1, len(ids) + 1)
        orders.append(ids)
    ids, off = records.legal_csr(mask, 30, True)
    assert len(off) == 31 and off[-1] == sum(len(o) for o in orders)
    for i in range(30):
        np.testing.assert_array_equal(ids[off[i] : off[i + 1]], orders[i])
    plain, _ = records.legal_csr(mask, 30, False)
    assert sorted(plain.tolist()) == sorted(ids.tolist()) and not np.array_equal(plain, ids)


def test_floor_that_cannot_fit_fails_before_any_work(monkeypatch):
    eng = _engine()
    per = eng._record_bytes()
    monkeypatch.setattr(engine_mod, "_available_memory", lambda: 1000 * per)
    calls = []

    def infer(obs):
        calls.append(len(obs))
        return _zero(obs)

    with pytest.raises(MemoryError, match=r"n_records=1001 needs at least .* GB .*\(\d+ bytes per record\)"):
        eng.collect(1001, infer)
    with pytest.raises(MemoryError, match=r"collect_size=5000 needs at least"):
        eng.collect_stream(5000, infer)
    assert calls == []
    assert len(eng.collect(64, infer).obs) >= 64  # the engine is intact, and fits are accepted
    monkeypatch.setattr(engine_mod, "_available_memory", lambda: None)  # unknown: no refusal
    assert len(eng.collect(10, infer).obs) >= 10


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
def test_peak_memory_of_a_large_collect_stays_within_1_5x_the_batch():
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "memory.py"), "--records", "400000", "--n-threads", "1"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    m = json.loads(out.stdout.strip().splitlines()[-1])
    assert m["records"] >= 400000
    assert m["peak_growth_mib"] <= 1.5 * m["batch_mib"] + 32, m


# -- recycled policy targets -------------------------------------------------------------------


def _az_engine():
    return rf.Engine(
        rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0), rf.policies.AlphaZero(num_simulations=16),
        rf.learners.AlphaZero(), n_games=4, seed=9,
    )  # fmt: skip


def _pv(obs):  # row-wise deterministic
    logits = obs.reshape(len(obs), -1)[:, :7] * 0.5
    return logits.astype(np.float32), np.zeros(len(obs), np.float32)


def test_recycled_policy_targets_never_touch_a_batch_the_caller_holds():
    """AlphaZero's ``policy_targets`` reuse a buffer only when nothing outside the engine
    references it: held batches (and arrays derived from them) keep their values, a dropped
    batch's memory is reused, and every batch equals the one fresh memory gives."""
    ref_eng, eng = _az_engine(), _az_engine()
    want = [ref_eng.collect(60, _pv).policy_targets.copy() for _ in range(6)]
    held, derived, snapshot = [], [], []
    take, recycled = eng._spare.take, []

    def counting_take(rows, cols):
        out, dirty = take(rows, cols)
        recycled.append(dirty)
        return out, dirty

    eng._spare.take = counting_take
    b0 = eng.collect(60, _pv)
    held.append(b0)
    snapshot.append(b0.policy_targets.copy())
    b1 = eng.collect(60, _pv)
    derived.append(b1.policy_targets[3:])  # a view keeps the buffer too
    snapshot.append(b1.policy_targets.copy())
    del b1
    got = [snapshot[0], snapshot[1]]
    shared = 0
    for _ in range(4):
        b = eng.collect(60, _pv)
        got.append(b.policy_targets.copy())
        for h in [held[0].policy_targets, derived[0]]:
            shared += np.shares_memory(b.policy_targets, h)
        prev = b.policy_targets
        del b
    assert shared == 0
    np.testing.assert_array_equal(held[0].policy_targets, snapshot[0])
    np.testing.assert_array_equal(derived[0], snapshot[1][3:])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    # windows 1-4 get fresh memory (no kept buffer is free); 5 and 6 reuse dropped batches' memory
    assert recycled == [False, False, False, False, True, True]
    assert any(np.shares_memory(prev, k) for k in eng._spare._kept)
    assert len(eng._spare._kept) <= 2


def test_spare_buffers_hand_out_free_buffers_only():
    from reinfors._runtime.spare import SpareBuffers

    pool = SpareBuffers()
    a, dirty = pool.take(10, 7)
    assert not dirty and a.shape == (10, 7) and (a == 0).all()
    a[:] = 1.0
    b, dirty = pool.take(10, 7)  # ``a`` is held: fresh memory
    assert not dirty and not np.shares_memory(a, b)
    del a
    c, dirty = pool.take(9, 7)  # ``a``'s buffer is free again (stale values: the caller clears)
    assert dirty and (c == 1.0).all() and c.shape == (9, 7)
    big, dirty = pool.take(12, 7)  # larger than the slack of both: fresh, and the oldest dropped
    assert not dirty and len(pool._kept) == 2
    huge, dirty = pool.take(1 << 13, 1 << 13)  # 512 MiB: never kept
    assert not dirty and len(pool._kept) == 2 and not any(np.shares_memory(huge, k) for k in pool._kept)
    del huge


# -- the two hand-over paths ---------------------------------------------------------------------


@pytest.mark.parametrize("comp", ["ppo", "alphazero", "dqn"])
def test_copied_out_and_handed_over_windows_give_the_same_batches(monkeypatch, comp):
    """A window's records leave the pool either copied out (a small delivery: the pool keeps its
    arrays) or as the pool's own arrays, permuted in place (a large one); the threshold is
    ``record_pool.COPY_OUT_BYTES``.  Both give the same batches, window after window, with
    records carried over between windows (floors that cut through a level, open episodes)."""
    from reinfors._runtime import record_pool

    def make():
        if comp == "alphazero":
            return _az_engine(), _pv
        if comp == "dqn":
            eng = rf.Engine(
                rf.games.GridWorld(size=4, max_ticks=12), rf.Reward(step=-0.01, goal=1.0),
                rf.policies.EpsilonGreedyQ(epsilon=0.2), rf.learners.Dqn(), n_games=8, seed=4,
            )  # fmt: skip
            return eng, lambda obs: (obs[:, :4] * 0.5)[:, None, :].astype(np.float32)
        return _engine(), _zero

    floors = [37, 5, 120, 64, 1, 90]
    runs = {}
    for label, limit in (("copied", 1 << 40), ("handed", 0)):
        monkeypatch.setattr(record_pool, "COPY_OUT_BYTES", limit)
        eng, infer = make()
        runs[label] = [eng.collect(f, infer) for f in floors]  # later windows must not touch them
    for i, (got, want) in enumerate(zip(runs["copied"], runs["handed"], strict=True)):
        assert_same_batch(got, want, f"window {i}", skip=GEOMETRY_KEYS)
    assert sum(len(w.obs) for w in runs["handed"]) >= sum(floors)
