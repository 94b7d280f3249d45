"""The arena protocol: exhaustive small-scope model check plus a real-thread stress run.

The model check enumerates *every* interleaving of the protocol's atomic steps for 2-3 writers
(reserve as load + CAS with retry, row writes, commit / poison, alias claims settled or
abandoned) and a scheduler that closes the arena at any point and seals when ``seal`` says so.
Invariants: spans are disjoint and inside the capacity; a sealed arena has every reserved row
written and committed and every alias claim settled; nothing is reserved after close; a
poisoned arena is never served; the system never deadlocks (once the writers finish, a closed
arena always seals).  The step semantics call the real njit kernels where a step is a single
atomic operation, so the model and the shipped code cannot drift apart.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from helpers import python_callable
from numba import njit

from reinfors.jit import arena as AR_K
from reinfors.jit import atomics

AR = python_callable(AR_K)  # internal kernels: Python calls them through njit shims (njit code uses AR_K)

M63 = (1 << 63) - 1


def _fields(w):
    return bool(w >> 63), (w >> 32) & 0x7FFFFFFF, w & 0xFFFFFFFF


class World:
    """Shared memory of one arena: control word, settled word, row ownership."""

    def __init__(self, capacity):
        self.ctl = np.zeros(1, np.uint64)
        self.done = np.zeros(1, np.uint64)
        self.capacity = capacity
        self.rows = [None] * capacity  # writer id that wrote each row
        self.reserved = [None] * capacity
        self.served = None  # "ok" / "poisoned" once sealed
        self.quiescent = False  # no writer in flight (the scheduler's drain rung)

    def key(self):
        return (int(self.ctl[0]), int(self.done[0]), tuple(self.rows), tuple(self.reserved), self.served)

    def copy(self):
        w = World(self.capacity)
        w.ctl[:] = self.ctl
        w.done[:] = self.done
        w.rows, w.reserved, w.served = list(self.rows), list(self.reserved), self.served
        return w


def writer(wid, k, fail=False):
    """Reserve k rows (load + CAS, retry), write them, then commit (or poison)."""
    pc, seen, start = "load", None, None
    while True:
        world = yield
        if pc == "load":
            seen = int(world.ctl[0])
            closed, cur, _ = _fields(seen)
            if closed:
                return
            if cur + k > world.capacity:
                atomics_fetch_or_closed(world)
                return
            pc = "cas"
        elif pc == "cas":
            closed, cur, alias = _fields(seen)
            new = seen + (k << 32)
            if cur + k == world.capacity:
                new |= 1 << 63
            if int(world.ctl[0]) == seen:  # the CAS succeeds
                assert world.served is None, "reservation succeeded after the arena was sealed"
                world.ctl[0] = np.uint64(new)
                start = cur
                for r in range(start, start + k):
                    assert world.reserved[r] is None, "overlapping spans"
                    world.reserved[r] = wid
                pc = "write"
            else:
                pc = "load"
        elif pc == "write":
            assert world.served is None, "row written into a served arena"
            for r in range(start, start + k):
                world.rows[r] = wid
            pc = "settle"
        elif pc == "settle":
            (AR.poison if fail else AR.commit)(world.done, 0, k)
            return


def alias_claimer(abandon):
    """Claim an alias ticket, then settle it (registered or abandoned: both count)."""
    pc = "claim"
    while True:
        world = yield
        if pc == "claim":
            if not AR.claim_alias(world.ctl, 0):
                return
            pc = "settle"
        else:
            AR.commit(world.done, 0, 1)
            return


def atomics_fetch_or_closed(world):
    AR.close(world.ctl, 0)


def scheduler(close_first):
    """Close early (``close_first``) or at quiescence, then seal when the words reconcile."""
    pc = "close" if close_first else "seal"
    while True:
        world = yield
        if pc == "close" or world.quiescent:
            AR.close(world.ctl, 0)
            pc = "seal"
        if pc == "seal":
            r = AR.seal(world.ctl, world.done, 0)
            if r == AR.NOT_READY:
                continue
            closed, cursor, alias = _fields(int(world.ctl[0]))
            assert closed
            settled = int(world.done[0]) & M63
            assert settled == cursor + alias
            if r == AR.POISONED_READY:
                world.served = "poisoned"
            else:
                assert all(world.rows[i] is not None for i in range(cursor)), "served an unwritten row"
                assert all(world.reserved[i] == world.rows[i] for i in range(cursor))
                world.served = "ok"
            return


def explore(capacity, makers):
    """DFS over every interleaving; processes are recreated by replaying their step history."""
    states = 0
    seen = set()

    def build(history):
        world = World(capacity)
        procs = [m() for m in makers]
        alive = []
        for p in procs:
            next(p)
            alive.append(True)
        for i in history:
            world.quiescent = not any(alive[:-1])
            try:
                procs[i].send(world)
            except StopIteration:
                alive[i] = False
        return world, procs, alive

    stack = [()]
    while stack:
        history = stack.pop()
        world, procs, alive = build(history)
        k = (world.key(), tuple(alive), len(history))
        if k in seen:
            continue
        seen.add(k)
        states += 1
        runnable = [i for i, a in enumerate(alive) if a]
        writers_alive = any(alive[:-1])
        if not runnable:
            assert world.served is not None, "deadlock: the arena was never sealed"
            continue
        progressed = False
        for i in runnable:
            if len(history) > 60:
                raise AssertionError("livelock: unbounded history")
            w2, p2, a2 = build(history)
            w2.quiescent = not any(a2[:-1])
            snapshot = w2.key()
            try:
                p2[i].send(w2)
            except StopIteration:
                pass
            if i == len(procs) - 1 and w2.key() == snapshot and writers_alive:
                continue  # a not-ready seal poll: waiting, not a new state
            progressed = True
            stack.append(history + (i,))
        if not progressed and not writers_alive:
            raise AssertionError("deadlock: nothing can run")
    return states


@pytest.mark.parametrize("close_first", [False, True])
def test_two_writers_every_interleaving(close_first):
    n = explore(4, [lambda: writer(0, 2), lambda: writer(1, 2), lambda: scheduler(close_first)])
    assert n > 20


def test_three_writers_with_overflow_and_poison():
    n = explore(
        4,
        [lambda: writer(0, 2), lambda: writer(1, 3, fail=True), lambda: writer(2, 1), lambda: scheduler(False)],
    )
    assert n > 100


def test_writers_and_alias_claims_reconcile():
    n = explore(
        3,
        [lambda: writer(0, 2), lambda: alias_claimer(False), lambda: alias_claimer(True), lambda: scheduler(False)],
    )
    assert n > 20


def test_protocol_kernels_single_thread():
    ctl, done = np.zeros(1, np.uint64), np.zeros(1, np.uint64)
    assert AR.reserve(ctl, 0, 3, 4) == 0
    assert AR.reserve(ctl, 0, 2, 4) == -1  # does not fit: closes
    assert AR.is_closed(ctl[0]) and AR.cursor_of(ctl[0]) == 3
    assert AR.seal(ctl, done, 0) == AR.NOT_READY
    AR.commit(done, 0, 3)
    assert AR.seal(ctl, done, 0) == AR.READY
    AR.recycle(ctl, done, 0)
    assert AR.reserve(ctl, 0, 4, 4) == 0 and AR.is_closed(ctl[0])  # the filling CAS closes
    assert AR.claim_alias(ctl, 0) is False
    AR.poison(done, 0, 4)
    assert AR.seal(ctl, done, 0) == AR.POISONED_READY


@njit(nogil=True)
def _stress(ctl, done, rows, owner, n_spans, capacity, wid, out):
    """Reserve spans of 1-3 rows; on a failed reserve, move to the next arena (mod count)."""
    i = 0
    got = 0
    k = 1 + wid % 3
    while got < n_spans:
        s = AR_K.reserve(ctl, i, k, capacity)
        if s < 0:
            i = (i + 1) % ctl.shape[0]
            # Wait for the scheduler thread to recycle closed arenas.
            continue
        for r in range(s, s + k):
            rows[i, r] += 1
            owner[i, r] = wid
        AR_K.commit(done, i, k)
        got += 1
        k = 1 + (k + wid) % 3
    out[wid] = got
    return 0


@njit(nogil=True)
def _recycler(ctl, done, rows, owner, stop, counts):
    """Seal closed+settled arenas, verify each row was written exactly once, recycle."""
    n = ctl.shape[0]
    while True:
        idle = True
        for i in range(n):
            r = AR_K.seal(ctl, done, i)
            if r == AR_K.READY:
                cur = AR_K.cursor_of(ctl[i])
                for j in range(cur):
                    if rows[i, j] != 1:
                        counts[1] += 1
                    rows[i, j] = 0
                counts[0] += cur
                AR_K.recycle(ctl, done, i)
                idle = False
        if idle and atomics.load_acquire(stop, 0) != 0:
            # Final drain: close everything still open and settle it.
            for i in range(n):
                AR_K.close(ctl, i)
                if AR_K.seal(ctl, done, i) == AR_K.READY:
                    cur = AR_K.cursor_of(ctl[i])
                    for j in range(cur):
                        if rows[i, j] != 1:
                            counts[1] += 1
                        rows[i, j] = 0
                    counts[0] += cur
                    AR_K.recycle(ctl, done, i)
            return 0
    return 0


def test_reserve_upto_fills_arenas_exactly():
    """The engine's reservation takes what fits: a 5-row request on a 4-row arena with 1 row used
    gets 3 rows and closes the arena full; a closed arena gives nothing."""
    ctl = np.zeros(2, np.uint64)
    assert AR.reserve_upto(ctl, 0, 1, 4) == (0, 1)
    assert AR.reserve_upto(ctl, 0, 5, 4) == (1, 3)
    assert AR.is_closed(ctl[0]) and AR.cursor_of(ctl[0]) == 4
    assert AR.reserve_upto(ctl, 0, 1, 4) == (-1, 0)
    assert AR.reserve_upto(ctl, 1, 4, 4) == (0, 4) and AR.is_closed(ctl[1])


def test_real_threads_reserve_a_million_spans_without_loss_or_overlap():
    n_arenas, capacity, n_writers, per_writer = 6, 64, 3, 350_000
    ctl = np.zeros(n_arenas, np.uint64)
    done = np.zeros(n_arenas, np.uint64)
    rows = np.zeros((n_arenas, capacity), np.int64)
    owner = np.zeros((n_arenas, capacity), np.int64)
    out = np.zeros(n_writers, np.int64)
    stop = np.zeros(1, np.int64)
    counts = np.zeros(2, np.int64)
    _stress(ctl.copy(), done.copy(), rows.copy(), owner.copy(), 1, capacity, 0, out.copy())  # compile first
    _recycler(ctl.copy(), done.copy(), rows.copy(), owner.copy(), np.ones(1, np.int64), counts.copy())
    rec = threading.Thread(target=_recycler, args=(ctl, done, rows, owner, stop, counts))
    ws = [
        threading.Thread(target=_stress, args=(ctl, done, rows, owner, per_writer, capacity, w, out))
        for w in range(n_writers)
    ]
    rec.start()
    for t in ws:
        t.start()
    for t in ws:
        t.join()
    stop[0] = 1
    rec.join()
    assert out.sum() == n_writers * per_writer >= 1_000_000
    assert counts[1] == 0, "a row was written twice or never"
    # Every reserved row was served exactly once: total rows = sum of span sizes.
    sizes = 0
    for w in range(n_writers):
        k = 1 + w % 3
        for _ in range(per_writer):
            sizes += k
            k = 1 + (k + w) % 3
    assert counts[0] == sizes
