"""The scheduler's fire protocol against the message ring's ordering, driven by hand."""

from __future__ import annotations

import numpy as np

import reinfors as rf
from reinfors.jit import arena, rings
from reinfors.jit import engine_codes as C


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
