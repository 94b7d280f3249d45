"""The scheduler's fire protocol against the message ring's ordering, driven by hand."""

from __future__ import annotations

import numpy as np
from helpers import python_callable

import reinfors as rf
from reinfors.jit import arena as _arena
from reinfors.jit import engine_codes as C
from reinfors.jit import rings as _rings

arena, rings = python_callable(_arena), python_callable(_rings)  # internal kernels, through njit shims


def test_an_arena_never_fires_before_its_span_table_is_complete():
    """A ring consumer stops at the oldest cell still being written, so a span message published
    *behind* it is not drained yet even though its arena is settled.  Firing then would lose the
    span and route it into the arena's next generation (the n_threads >= 2 span-table overflow
    this test pins down): ``find_fireable`` must wait until the table covers every reserved row."""
    game = rf.games.GridWorld(size=4, max_ticks=12)
    eng = rf.Engine(game, rf.Reward(goal=1.0), rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), n_games=4, n_threads=1)
    rt = eng._runtime()
    k, E = rt.k, rt.E
    seq, data, pos = rt["msg_seq"], rt["msg_data"], rt["msg_pos"]
    acc = np.zeros(2, np.int64)

    # Another writer claimed the next ring cell and has not published it yet.
    ticket = rings._claim_push(seq, pos)
    assert ticket >= 0
    # This writer fills arena 0 of route 0 in one span, posts its message behind the claimed
    # cell, then commits: the arena is closed and settled.
    cap = rt.capacity
    start = arena.reserve(rt["arena_ctl"], 0, cap, cap)
    assert start == 0
    msg = np.array([C.MSG_EMITTED, 0, 0, 0, 0, cap, 0], np.int64)
    assert rings.push(seq, data, pos, msg)
    arena.commit(rt["arena_done"], 0, cap)
    assert arena.seal(rt["arena_ctl"], rt["arena_done"], 0) == arena.READY

    for _ in range(3):  # however often it polls, the arena waits for its span message
        assert k.find_fireable(E, rt.spans, rt.span_n, acc) == -1
    assert rt.span_n[0] == 0

    # The slow writer publishes (a Completed message); now the span drains and the arena fires.
    cell = ticket & (seq.shape[0] - 1)
    data[cell] = [C.MSG_COMPLETED, 1, 0, 0, 0, 0, 0]
    seq[cell] = ticket + 1  # publish (single-threaded here: a plain store)
    assert k.find_fireable(E, rt.spans, rt.span_n, acc) == 0
    assert rt.span_n[0] == 1 and rt.spans[0, 0, 2] == cap
    assert acc.tolist() == [1, 0]


def test_alias_claims_reconcile_registered_and_abandoned():
    """Alias tickets: a claim raises the arena's alias count, so the arena cannot fire until the
    claim's message is drained — registered (the twin row's prediction goes to the claimant) or
    abandoned (the arena was routed and reopened between probe and claim: counted, ignored)."""
    game = rf.games.GridWorld(size=4, max_ticks=12)
    eng = rf.Engine(
        game, rf.Reward(goal=1.0), rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), n_games=4, n_threads=1,
        infer_cache=16, batch_size=2,
    )  # fmt: skip
    rt = eng._runtime()
    k, E = rt.k, rt.E
    seq, data, pos = rt["msg_seq"], rt["msg_data"], rt["msg_pos"]
    ctl, done = rt["arena_ctl"], rt["arena_done"]
    acc = np.zeros(2, np.int64)
    pending, sinfo = rt["pending"], rt["sinfo"]
    # Slot 0 owns row 0 of arena 0; slot 1 claims it (registered); slot 2's claim is abandoned.
    pending[0], pending[1], pending[2] = 1, 1, 1
    sinfo[:3, C.SI_STATUS] = C.ST_WAIT
    start, take = arena.reserve_upto(ctl, 0, 1, rt.capacity)
    assert (start, take) == (0, 1)
    assert rings.push(seq, data, pos, np.array([C.MSG_EMITTED, 0, 0, 0, 0, 1, 0], np.int64))
    arena.commit(done, 0, 1)
    assert arena.claim_alias_below(ctl, 0, rt.capacity) and arena.claim_alias_below(ctl, 0, rt.capacity)
    assert arena.alias_of(ctl[0]) == 2
    assert rings.push(seq, data, pos, np.array([C.MSG_ALIAS, 1, 0, 0, 0, 0, 0], np.int64))  # slot 1, row 0
    arena.commit(done, 0, 1)
    arena.close(ctl, 0)
    # settled counts rows + claims: one claim is still outstanding, nothing fires
    assert arena.seal(ctl, done, 0) == arena.NOT_READY
    assert k.find_fireable(E, rt.spans, rt.span_n, acc) == -1
    assert rings.push(seq, data, pos, np.array([C.MSG_ALIAS, 2, 0, 0, -1, 0, 0], np.int64))  # abandoned
    arena.commit(done, 0, 1)
    assert k.find_fireable(E, rt.spans, rt.span_n, acc) == 0
    out = np.arange(2 * rt.width, dtype=np.float64).reshape(2, rt.width)
    ready = np.zeros(rt.G, np.int64)
    n = k.finish_fire(E, rt.spans, rt.span_n, 0, 0, out, ready, True, np.int64(0), np.zeros(3, np.int64))
    assert sorted(ready[:n].tolist()) == [0, 1]  # slot 2's claim was abandoned: still waiting
    assert pending[2] == 1 and (rt["preds"][1, 0] == out[0]).all() and (rt["preds"][0, 0] == out[0]).all()
    assert rt.cache_counters()["aliases"] == 1
    assert ctl[0] == 0 and rt["a_alias_n"][0] == 0  # recycled, claims cleared
