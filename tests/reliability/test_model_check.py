"""Model check of the multi-arena chain (issue 16 item 4), beside the single-arena check of
``tests/test_arena_protocol.py`` and the hand-driven ring / fire protocol of
``tests/engine/test_runtime_protocol.py``.

What is modelled: several routes, each a chain of ``n_arenas`` arenas of ``capacity`` rows and a
current-arena word (``C_ROUTE_CUR``).  Writers follow ``_place_run`` (``engine_routing.py``)
step by step: read the chain's current arena, ``reserve_upto`` (a long request continues in the
next arena), on failure re-read the chain / see the arena recycled / move the chain to a free
arena by CAS (or spin), write the rows, publish the span message, commit.  The scheduler follows
``Runtime.run_window`` / ``find_fireable``: fire the first closed, settled arena of each route
scanning from the open one onwards once its span table is complete (the message ring drained),
route the rows back by position, mark it LENT and recycle it (or, modelling a callback that kept
a view, leave it LENT for good); the **stall ladder** — a route with rows in its open arena and
no fire of its own across ``stall_limit`` engine-wide fires is closed by ``close_open`` and
fired as soon as it settles (``_close_and_fire``); and the **quiescence rung** — nothing in
flight: ``close_all_open`` on every route.

Faithfulness: every step that is one atomic operation in the kernels calls the real njit
kernels of ``reinfors.jit.arena`` on real ``uint64`` words (``reserve_upto``, ``commit``,
``close``, ``seal``, ``recycle``, ``pack``), so the model cannot drift from the shipped word
layout; the chain walk, span bookkeeping and ladder are Python transcriptions of
``_place_run`` / ``sealable`` / ``close_open`` / ``close_all_open`` / ``route`` and of the
ladder in ``runtime.py`` (its limit is 8 fires; smaller limits here make the stall closes
reachable within small scopes).  A reservation is one step (``reserve_upto``'s CAS retry loop is
linearizable), as is the free-arena scan with its CAS.

Invariants asserted on every explored state: spans of one arena generation are disjoint and
inside the capacity; an arena fires only when closed, settled and with a complete span table,
and every row it routes back is the row its writer wrote (identity by position); every reserved
row is fired exactly once (none lost, none duplicated) when the system drains; an arena is
closed short of full only by the stall ladder or the quiescence rung; no deadlock (a state
with nothing runnable has every request served) and no unbounded history.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import python_callable

from reinfors.jit import arena

AR = python_callable(arena)  # internal kernels, through njit shims

LENT = int(AR.pack(True, 0, 0))


class World:
    """Shared memory and every process's registers (copyable and hashable for the search)."""

    def __init__(self, routes, n_arenas, capacity, requests, stall_limit, retain=None):
        self.R, self.A, self.cap = routes, n_arenas, capacity
        self.ctl = np.zeros(routes * n_arenas, np.uint64)
        self.done = np.zeros(routes * n_arenas, np.uint64)
        self.cur = [0] * routes  # C_ROUTE_CUR + 8 * route
        self.rows = [[None] * capacity for _ in range(routes * n_arenas)]  # (writer, j) per row
        self.ring: list = []  # published span messages not yet drained
        self.spans = [[] for _ in range(routes * n_arenas)]  # drained (writer, start, take, off)
        self.requests = requests  # [(route, k)] per writer
        self.wpc = [("load", 0, -1, -1, -1, -1) for _ in requests]  # (pc, j, cur, ai, start, take)
        self.fired = {}  # (writer, j) -> times routed back
        self.stall_limit = stall_limit
        self.route_fires = [0] * routes
        self.last_fires = [0] * routes
        self.stall = [0] * routes
        self.round_fired = 0
        self.waiting = -1  # _close_and_fire: the arena (global index) being waited for
        self.retain = retain  # the global arena index whose first fire keeps it LENT for good
        self.ladder_closed: set = set()  # arenas the scheduler closed (ladder / quiescence)

    def copy(self):
        w = World.__new__(World)
        w.__dict__.update(self.__dict__)
        w.ctl, w.done = self.ctl.copy(), self.done.copy()
        w.cur = list(self.cur)
        w.rows = [list(r) for r in self.rows]
        w.ring = list(self.ring)
        w.spans = [list(s) for s in self.spans]
        w.wpc = list(self.wpc)
        w.fired = dict(self.fired)
        w.route_fires, w.last_fires, w.stall = list(self.route_fires), list(self.last_fires), list(self.stall)
        w.ladder_closed = set(self.ladder_closed)
        return w

    def key(self):
        return (
            tuple(int(x) for x in self.ctl), tuple(int(x) for x in self.done), tuple(self.cur),
            tuple(map(tuple, self.rows)), tuple(self.ring), tuple(map(tuple, self.spans)), tuple(self.wpc),
            tuple(sorted(self.fired.items())), tuple(self.route_fires), tuple(self.last_fires), tuple(self.stall),
            self.round_fired, self.waiting, self.retain, tuple(sorted(self.ladder_closed)),
        )  # fmt: skip

    # -- helpers --------------------------------------------------------------------------------

    def fields(self, ai):
        w = int(self.ctl[ai])
        return bool(w >> 63), (w >> 32) & 0x7FFFFFFF, w & 0xFFFFFFFF

    def writers_alive(self):
        return [i for i, pc in enumerate(self.wpc) if pc[0] != "end"]

    def check_closes(self, before):
        """An arena closed short of full by a writer is a protocol violation."""
        for ai in range(self.R * self.A):
            was, now = before[ai], int(self.ctl[ai])
            if not (was >> 63) and (now >> 63) and now != LENT:
                cursor = (now >> 32) & 0x7FFFFFFF
                assert cursor == self.cap or ai in self.ladder_closed, f"arena {ai} closed at {cursor} rows by a writer"

    # -- a writer step (``_place_run``) --------------------------------------------------------

    def writer_step(self, wid) -> bool:
        """Advance writer ``wid`` one atomic step; False when it only spun (no state change)."""
        pc, j, cur, ai, start, take = self.wpc[wid]
        route, k = self.requests[wid]
        before = [int(x) for x in self.ctl]
        if pc == "load":
            cur = self.cur[route]
            self.wpc[wid] = ("reserve", j, cur, route * self.A + cur, -1, -1)
        elif pc == "reserve":
            s, t = AR.reserve_upto(self.ctl, ai, min(k - j, self.cap), self.cap)
            s, t = int(s), int(t)
            if s >= 0:
                for r in range(s, s + t):
                    assert self.rows[ai][r] is None, "overlapping spans"
                self.wpc[wid] = ("write", j, cur, ai, s, t)
            else:
                self.wpc[wid] = ("check", j, cur, ai, -1, -1)
        elif pc == "check":
            if self.cur[route] != cur or not (int(self.ctl[ai]) >> 63):
                self.wpc[wid] = ("load", j, -1, -1, -1, -1)
            else:
                for t in range(1, self.A):
                    nxt = (cur + t) % self.A
                    if int(self.ctl[route * self.A + nxt]) == 0:
                        if self.cur[route] == cur:  # the CAS
                            self.cur[route] = nxt
                        self.wpc[wid] = ("load", j, -1, -1, -1, -1)
                        break
                else:
                    return False  # spins until the scheduler recycles an arena
        elif pc == "write":
            for t in range(take):
                self.rows[ai][start + t] = (wid, j + t)
            self.wpc[wid] = ("push", j, cur, ai, start, take)
        elif pc == "push":
            self.ring.append((ai, wid, start, take, j))
            self.wpc[wid] = ("commit", j, cur, ai, start, take)
        elif pc == "commit":
            AR.commit(self.done, ai, take)
            j += take
            self.wpc[wid] = ("end", j, -1, -1, -1, -1) if j >= k else ("load", j, -1, -1, -1, -1)
        self.check_closes(before)
        return True

    # -- the scheduler ----------------------------------------------------------------------------

    def drain(self):
        for ai, wid, start, take, off in self.ring:
            self.spans[ai].append((wid, start, take, off))
        self.ring = []

    def spans_complete(self, ai):
        self.drain()
        _, cursor, _ = self.fields(ai)
        return sum(s[2] for s in self.spans[ai]) == cursor

    def sealable(self, r, first):
        for t in range(self.A):
            i = (first + t) % self.A
            ai = r * self.A + i
            if AR.seal(self.ctl, self.done, ai) == AR.READY and self.fields(ai)[1] > 0:
                return i
        return -1

    def find_fireable(self):
        for r in range(self.R):
            i = self.sealable(r, (self.cur[r] + 1) % self.A)
            if i >= 0:
                ai = r * self.A + i
                return ai if self.spans_complete(ai) else -1
        self.drain()
        return -1

    def fire(self, ai):
        closed, cursor, _ = self.fields(ai)
        assert closed and AR.seal(self.ctl, self.done, ai) == AR.READY
        covered = [0] * cursor
        for wid, start, take, off in self.spans[ai]:
            for t in range(take):
                assert start + t < cursor, "span outside the reserved rows"
                assert self.rows[ai][start + t] == (wid, off + t), "routed a row that is not the writer's"
                covered[start + t] += 1
                key = (wid, off + t)
                self.fired[key] = self.fired.get(key, 0) + 1
                assert self.fired[key] == 1, f"row {key} fired twice"
        assert covered == [1] * cursor, "a reserved row is not covered by exactly one span"
        self.spans[ai] = []
        self.ctl[ai] = np.uint64(LENT)  # route(): LENT until recycled
        self.route_fires[ai // self.A] += 1
        self.ladder_closed.discard(ai)
        if ai == self.retain:
            self.retain = -2  # kept by the callback: LENT for good (copy mode from now on)
            return
        AR.recycle(self.ctl, self.done, ai)
        self.rows[ai] = [None] * self.cap

    def ladder(self, fired):
        for r in range(self.R):
            cur = self.cur[r]
            fill = self.fields(r * self.A + cur)[1] if int(self.ctl[r * self.A + cur]) != LENT else 0
            if fill and self.route_fires[r] == self.last_fires[r]:
                self.stall[r] += fired
                if self.stall[r] >= self.stall_limit and self.waiting < 0:
                    ai = r * self.A + cur  # close_open
                    self.ladder_closed.add(ai)
                    AR.close(self.ctl, ai)
                    if self.cur[r] == cur:
                        self.cur[r] = (cur + 1) % self.A
                    self.waiting = ai
                    self.stall[r] = 0
            else:
                self.stall[r] = 0
            self.last_fires[r] = self.route_fires[r]

    def scheduler_step(self) -> bool:
        """One scheduler action; False when it only polled without effect."""
        if self.waiting >= 0:  # _close_and_fire: wait for the closed arena to settle
            ai = self.waiting
            r, i = divmod(ai, self.A)
            if self.sealable(r, i) == i and self.spans_complete(ai):
                self.waiting = -1
                self.fire(ai)
                self.round_fired += 1
                return True
            return False
        ai = self.find_fireable()
        if ai >= 0:
            self.fire(ai)
            self.round_fired += 1
            return True
        if self.round_fired:
            fired, self.round_fired = self.round_fired, 0
            self.ladder(fired)
            return True
        if not self.writers_alive():  # quiescent: close_all_open on every route
            changed = False
            for ai in range(self.R * self.A):
                closed, cursor, _ = self.fields(ai)
                if not closed and cursor > 0:
                    self.ladder_closed.add(ai)
                    AR.close(self.ctl, ai)
                    changed = True
            return changed
        return False

    def drained(self):
        return not self.writers_alive() and all(
            self.fired.get((w, j)) == 1 for w, (_, k) in enumerate(self.requests) for j in range(k)
        )


def explore(make, max_depth=400):
    """DFS over every interleaving of writer and scheduler steps (states memoized)."""
    seen = set()
    stack = [make()]
    finals = 0
    while stack:
        world = stack.pop()
        key = world.key()
        if key in seen:
            continue
        seen.add(key)
        moved = False
        for p in [*world.writers_alive(), -1]:
            w2 = world.copy()
            if (w2.scheduler_step() if p < 0 else w2.writer_step(p)) and w2.key() != key:
                moved = True
                stack.append(w2)
        if not moved:
            assert world.drained(), f"deadlock: {world.wpc}, ctl={[hex(int(x)) for x in world.ctl]}"
            finals += 1
        assert len(seen) < 2_000_000, "state space larger than expected"
    return len(seen), finals


def random_runs(make, n_runs, seed, max_steps=5000):
    """Random interleavings (writers scheduled with random priorities) to completion."""
    rng = random.Random(seed)
    for _ in range(n_runs):
        world = make()
        idle = 0
        for _step in range(max_steps):
            procs = [*world.writers_alive(), -1]
            p = rng.choice(procs)
            progressed = world.scheduler_step() if p < 0 else world.writer_step(p)
            idle = 0 if progressed else idle + 1
            if world.drained() and world.scheduler_step() is False:
                break
            assert idle < 2000, f"no progress: {world.wpc}"
        else:
            raise AssertionError("run did not finish")
        assert world.drained()


@pytest.mark.parametrize("stall_limit", [1, 2])
def test_one_route_two_arenas_spans_across_the_chain(stall_limit):
    """Requests longer than an arena continue in the next one; the chain wraps and recycles."""
    n, finals = explore(lambda: World(1, 2, 2, [(0, 3), (0, 2)], stall_limit))
    assert n > 1000 and finals >= 1


def test_two_routes_stall_ladder_closes_the_starved_route():
    """Route 1's half-filled open arena stalls while route 0 fires: the ladder closes it."""
    n, finals = explore(lambda: World(2, 2, 2, [(0, 3), (0, 1), (1, 1)], stall_limit=1))
    assert n > 1000 and finals >= 1


def test_a_retained_arena_stays_lent_and_the_chain_routes_around_it():
    """A fired arena whose rows the callback kept is never recycled: writers skip it for good."""
    n, finals = explore(lambda: World(1, 3, 2, [(0, 3), (0, 2)], stall_limit=2, retain=0))
    assert n > 1000 and finals >= 1


def test_ladder_closes_are_exercised():
    """The model reaches closes short of full (otherwise the close invariant checks nothing)."""
    world = World(2, 2, 2, [(0, 3), (1, 1)], stall_limit=1)
    for p in (1, 1, 1, 1, 1, 1):  # route 1: one row, committed
        world.writer_step(p)
    closed_short = False
    for _ in range(200):
        for p in [*world.writers_alive(), -1]:
            world.scheduler_step() if p < 0 else world.writer_step(p)
        closed_short |= bool(world.ladder_closed)
        if world.drained():
            break
    assert world.drained() and closed_short


@pytest.mark.parametrize("seed", range(3))
def test_random_interleavings_three_routes(seed):
    """Larger scopes by random interleavings: 3 routes x 3 arenas x capacity 3, six writers
    (some requests longer than an arena), the runtime's ladder limit of 8 and a smaller one."""
    reqs = [(0, 5), (0, 1), (1, 4), (1, 2), (2, 7), (0, 3)]
    random_runs(lambda: World(3, 3, 3, reqs, stall_limit=8), 150, seed)
    random_runs(lambda: World(3, 3, 3, reqs, stall_limit=1, retain=4), 150, seed + 100)
