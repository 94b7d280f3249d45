"""Per-record policy lag: every engine batch's ``weights_generations`` (int64 ``(M,)``, not in
0.4.0) holds the weights generation each record's decision was inferred under.

The compositions are tests/helpers.py's (test_stream.py's too) (Connect4 under DQN, PPO, AlphaZero and Mcts + TreeStrap:
the model-free and tree kernel families, plus the tree family with the cache), so this module
compiles no composition of its own.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from helpers import COMPOSITIONS, engine, infer_for  # tests/ is on sys.path (rootdir conftest)

import reinfors as rf
from reinfors.engine import TELEMETRY_KEYS
from reinfors.jit import engine_codes as C

KINDS = tuple(COMPOSITIONS)  # dqn, ppo, alphazero, treestrap
POSITIONAL = {"dqn": 7, "alphazero": 5, "treestrap": 4}


def _spy(eng):
    """White-box: each delivered batch's (slot, player, sequence, generation) columns in batch
    order (the batch does not expose slots).  The engine must have collected once."""
    seen = []
    rt = eng._rt
    take = rt.take_records

    def spy():
        out = take()
        seen.append(out["r_meta"][:, [C.RM_SLOT, C.RM_PLAYER, C.RM_SEQ, C.RM_GEN]].copy())
        return out

    rt.take_records = spy
    return seen


def _monotone_per_slot_player(rows):
    """Stamps never decrease along each (slot, player)'s records in emission order (a slot's
    decisions happen in order, and each player's records are emitted in decision order)."""
    rows = np.concatenate(rows)
    for slot in np.unique(rows[:, 0]):
        for player in np.unique(rows[:, 1]):
            sel = rows[(rows[:, 0] == slot) & (rows[:, 1] == player)]
            gens = sel[np.argsort(sel[:, 2], kind="stable"), 3]
            assert (np.diff(gens) >= 0).all(), (slot, player, gens)


@pytest.mark.parametrize("kind", KINDS)
def test_generation_zero_before_any_update(kind):
    eng = engine(kind)
    infer = infer_for(kind)
    empty = eng.collect(0, infer)
    assert empty.weights_generations.dtype == np.int64 and empty.weights_generations.shape == (0,)
    b = eng.collect(24, infer)
    g = b.weights_generations
    assert g.dtype == np.int64 and g.shape == (len(b.obs),) and len(b.obs) >= 24
    assert (g == 0).all()
    assert b.weights_generations is g  # the same object on every access, like every field
    # Not positional, not telemetry: the original's surface is unchanged.
    assert "weights_generations" not in b.telemetry
    assert set(b.telemetry) <= set(TELEMETRY_KEYS) | {"episodes"}
    if kind in POSITIONAL:
        assert len(b) == POSITIONAL[kind]
        assert not any(x is g for x in b)


@pytest.mark.parametrize("kind", KINDS)
def test_stamps_follow_weights_updates_between_collects(kind):
    """After ``k`` updates every stamp is <= k, and decisions taken after the k-th update carry k
    (records decided earlier and delivered later keep their older stamp: a window may deliver
    only records an earlier window completed beyond its cut)."""
    eng = engine(kind)
    infer = infer_for(kind)
    eng.collect(8, infer)
    seen = _spy(eng)
    for k in range(1, 4):
        eng.weights_updated()
        if kind == "ppo":
            eng.weights_updated(player=1)  # a per-player update also counts (generation k * 2)
        gen = k * 2 if kind == "ppo" else k
        g = eng.collect(60, infer).weights_generations
        assert g.min() >= 0 and g.max() <= gen, (k, np.bincount(g))
        for _ in range(8):  # without further updates the new generation reaches the records
            if g.max() == gen:
                break
            g = eng.collect(60, infer).weights_generations
            assert g.max() <= gen
        assert g.max() == gen, (k, np.bincount(g))
    _monotone_per_slot_player(seen)


@pytest.mark.parametrize("kind", KINDS)
def test_stream_with_updates_from_the_consumer_thread(kind):
    """The two-network pattern: the consumer updates the weights after every batch.  Stamps are
    <= the generation when the batch is received, non-decreasing per (slot, player), and new
    generations reach the records."""
    eng = engine(kind, n_threads=2)
    inner = infer_for(kind)
    lock = threading.Lock()

    def infer(obs):
        with lock:
            return inner(obs)

    eng.collect(4, infer)
    seen = _spy(eng)
    gen = 0
    tops = []
    with eng.collect_stream(30, infer, depth=2) as stream:
        for _ in range(6):
            b = next(stream)
            g = b.weights_generations
            assert g.shape == (len(b.obs),) and g.dtype == np.int64
            assert g.min() >= 0 and g.max() <= gen
            tops.append(int(g.max()))
            with lock:
                eng.weights_updated()
                gen += 1
    assert tops[-1] >= 1
    assert all(a <= b for a, b in zip(tops, tops[1:], strict=False))
    _monotone_per_slot_player(seen)


@pytest.mark.parametrize("kind", ("dqn", "alphazero"))
def test_a_restored_engine_continues_the_stamping(kind):
    eng = engine(kind)
    infer = infer_for(kind)
    eng.collect(20, infer)
    for _ in range(3):
        eng.weights_updated()
    eng.collect(20, infer)
    snap = rf.EngineSnapshot.from_bytes(eng.snapshot().to_bytes())
    assert snap.weights_generation == 3
    twin = engine(kind, n_threads=1)
    twin.restore(snap)
    for step in range(2):
        a, b = eng.collect(30, infer), twin.collect(30, infer)
        assert np.array_equal(a.weights_generations, b.weights_generations)
        assert a.weights_generations.max() <= 3 + step
        for _ in range(8):  # records carried over from before the update first, then new ones
            if a.weights_generations.max() == 3 + step:
                break
            a, b = eng.collect(30, infer), twin.collect(30, infer)
            assert np.array_equal(a.weights_generations, b.weights_generations)
        assert a.weights_generations.max() == 3 + step
        eng.weights_updated()
        twin.weights_updated()


def test_stamps_with_the_inference_cache():
    """Cache hits are stamped too: a hit is served only while its weights are current."""
    eng = engine("alphazero", infer_cache=5000)
    infer = infer_for("alphazero")
    first = eng.collect(40, infer)
    assert (first.weights_generations == 0).all()
    for k in range(1, 3):
        eng.weights_updated()
        b = eng.collect(40, infer)
        for _ in range(8):  # records carried over from before the update first, then new ones
            assert b.weights_generations.max() <= k and b.weights_generations.min() >= 0
            if b.weights_generations.max() == k:
                break
            b = eng.collect(40, infer)
        assert b.weights_generations.max() == k
    assert b.telemetry["cache_hits"] > 0


def test_a_generation_beyond_int64_wraps_in_the_stamps():
    """EngineSnapshot.weights_generation is a u64: past 2**63 the int64 stamps wrap (two's
    complement) instead of failing the restore."""
    from reinfors.engine import _stamp

    assert _stamp(0) == 0 and _stamp(2**63 - 1) == 2**63 - 1
    assert _stamp(2**63) == -(2**63) and _stamp(2**64 - 1) == -1 and _stamp(2**64) == 0
