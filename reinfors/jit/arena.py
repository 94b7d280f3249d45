"""Row-arena protocol kernels: the packed control word and its transitions.

A route's arena is ``rows: [capacity, obs_size] float32`` plus two ``uint64`` words that live in
their own 8-byte-aligned arrays (``ctl[i]``, ``done[i]``)::

    ctl  = closed:1 | cursor:31 | alias:32          (bit 63 | bits 32..62 | bits 0..31)
    done = poisoned:1 | settled:63                   (rows committed + alias claims settled)

Transitions (each one atomic step on ``ctl``, so claiming rows, claiming an alias and closing
never race):

* ``reserve(k)``   OPEN → OPEN/CLOSED: ``cursor += k``; the reservation that fills the arena
                   closes it *in the same CAS*.  A span that does not fit closes the arena and
                   fails (the writer moves to the next arena of the chain).
* ``reserve_upto(k)`` the engine's form: takes ``min(k, free)`` rows, so arenas close full and a
                   long request continues in the next arena.
* ``claim_alias``  OPEN → OPEN: ``alias += 1`` (a row identical to one in flight here).
* ``close``        → CLOSED: freezes (cursor, alias).
* ``commit(k)``    release ``done += k`` after the span's rows are written; an alias claim
                   settles with ``done += 1`` whether it is registered or abandoned.
* ``poison(k)``    like commit, plus the poisoned bit: a writer that failed mid-span.

The scheduler *seals* (fires) a CLOSED arena only when ``done``, read with acquire ordering,
reconciles with the frozen counts: ``settled == cursor + alias`` — so sealing never waits for a
row that cannot arrive, and never serves a row still being written.  A poisoned arena is
discarded, never served.  ``tests/test_arena_protocol.py`` model-checks every interleaving of
these transitions for 2-3 writers and stresses them under real threads.
"""

from __future__ import annotations

import numpy as np

from . import atomics
from ._compile import kernel

CLOSED = np.uint64(1 << 63)
POISONED = np.uint64(1 << 63)
# The scheduler's mark on a closed, settled arena handed to a callback that has not returned yet
# (pipelined fires): the settled count no longer matches, so ``seal`` skips it; ``recycle`` clears it.
FIRING = np.uint64(1 << 62)
CURSOR_SHIFT = np.uint64(32)
CURSOR_MASK = np.uint64(0x7FFFFFFF)
ALIAS_MASK = np.uint64(0xFFFFFFFF)
SETTLED_MASK = np.uint64((1 << 63) - 1)
MAX_CAPACITY = (1 << 31) - 1

# seal() results
NOT_READY = 0
READY = 1
POISONED_READY = 2


@kernel(inline="always")
def pack(closed, cursor, alias):
    """Build a control word from its fields."""
    w = (np.uint64(cursor) & CURSOR_MASK) << CURSOR_SHIFT
    w |= np.uint64(alias) & ALIAS_MASK
    if closed:
        w |= CLOSED
    return w


@kernel(inline="always")
def is_closed(w):
    return (np.uint64(w) & CLOSED) != np.uint64(0)


@kernel(inline="always")
def cursor_of(w):
    return np.int64((np.uint64(w) >> CURSOR_SHIFT) & CURSOR_MASK)


@kernel(inline="always")
def alias_of(w):
    return np.int64(np.uint64(w) & ALIAS_MASK)


@kernel
def reserve(ctl, i, k, capacity):
    """Reserve ``k`` contiguous rows of arena ``i``; return the span start, or -1.

    -1 means the arena is closed, or the span does not fit (the arena is then closed so the
    chain moves on).  A reservation that fills the arena exactly closes it in the same CAS.
    """
    uk = np.uint64(k)
    cap = np.uint64(capacity)
    while True:
        w = atomics.load_acquire(ctl, i)
        if (w & CLOSED) != np.uint64(0):
            return -1
        cur = (w >> CURSOR_SHIFT) & CURSOR_MASK
        if cur + uk > cap:
            atomics.fetch_or(ctl, i, CLOSED)
            return -1
        new = w + (uk << CURSOR_SHIFT)
        if cur + uk == cap:
            new |= CLOSED
        if atomics.cas(ctl, i, w, new) == w:
            return np.int64(cur)


@kernel
def reserve_upto(ctl, i, k, capacity):
    """Reserve ``min(k, free)`` contiguous rows (at least one) of arena ``i``: returns ``(start,
    taken)``, or ``(-1, 0)`` when the arena is closed or full.  A reservation that fills the
    arena closes it in the same CAS, so arenas close full and a long request simply continues
    in the next arena of the chain (no capacity is wasted on a span that does not fit)."""
    return reserve_until(ctl, i, k, capacity, capacity)


@kernel
def reserve_until(ctl, i, k, capacity, close_at):
    """``reserve_upto`` with a close threshold below the capacity: the reservation that brings
    the cursor to ``close_at`` rows or more closes the arena in the same CAS (the span itself may
    run on up to ``capacity``).  The engine's arenas are sized for the largest batch a route may
    fire and close at the route's current fire target (``C_ROUTE_TGT``)."""
    uk = np.uint64(k)
    cap = np.uint64(capacity)
    at = np.uint64(min(max(close_at, 1), capacity))
    while True:
        w = atomics.load_acquire(ctl, i)
        if (w & CLOSED) != np.uint64(0):
            return np.int64(-1), np.int64(0)
        cur = (w >> CURSOR_SHIFT) & CURSOR_MASK
        if cur >= cap:
            atomics.fetch_or(ctl, i, CLOSED)
            return np.int64(-1), np.int64(0)
        take = min(uk, cap - cur)
        new = w + (take << CURSOR_SHIFT)
        if cur + take >= at:
            new |= CLOSED
        if atomics.cas(ctl, i, w, new) == w:
            return np.int64(cur), np.int64(take)


@kernel
def claim_alias(ctl, i):
    """Claim an alias ticket on open arena ``i``; True on success (False once closed)."""
    while True:
        w = atomics.load_acquire(ctl, i)
        if (w & CLOSED) != np.uint64(0):
            return False
        if (w & ALIAS_MASK) == ALIAS_MASK:
            return False
        if atomics.cas(ctl, i, w, w + np.uint64(1)) == w:
            return True


@kernel
def claim_alias_below(ctl, i, limit):
    """``claim_alias`` that also fails once the arena holds ``limit`` alias claims (the size of
    the scheduler's alias table for it)."""
    ulim = np.uint64(limit)
    while True:
        w = atomics.load_acquire(ctl, i)
        if (w & CLOSED) != np.uint64(0) or (w & ALIAS_MASK) >= ulim:
            return False
        if atomics.cas(ctl, i, w, w + np.uint64(1)) == w:
            return True


@kernel
def close(ctl, i):
    """Close arena ``i`` (idempotent); returns the frozen word."""
    return atomics.fetch_or(ctl, i, CLOSED) | CLOSED


@kernel
def commit(done, i, k):
    """Publish ``k`` written rows (or settled alias claims) of arena ``i`` with release ordering."""
    atomics.commit_release(done, i, np.uint64(k))


@kernel
def poison(done, i, k):
    """Settle ``k`` rows of a failed span and mark arena ``i`` poisoned (never served)."""
    atomics.fetch_or(done, i, POISONED)
    atomics.commit_release(done, i, np.uint64(k))


@kernel
def seal(ctl, done, i):
    """Scheduler check: ``READY`` when arena ``i`` is closed and fully settled, ``POISONED_READY``
    when settled but poisoned (discard it), else ``NOT_READY``."""
    w = atomics.load_acquire(ctl, i)
    if (w & CLOSED) == np.uint64(0):
        return NOT_READY
    d = atomics.load_acquire(done, i)
    want = ((w >> CURSOR_SHIFT) & CURSOR_MASK) + (w & ALIAS_MASK)
    if (d & SETTLED_MASK) != want:
        return NOT_READY
    if (d & POISONED) != np.uint64(0):
        return POISONED_READY
    return READY


@kernel
def recycle(ctl, done, i):
    """Reset arena ``i`` to OPEN and empty (scheduler only, after its rows were routed)."""
    atomics.store_release(done, i, np.uint64(0))
    atomics.store_release(ctl, i, np.uint64(0))
