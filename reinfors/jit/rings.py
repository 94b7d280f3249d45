"""Bounded lock-free MPMC rings of fixed-width ``int64`` records (Vyukov's sequence-cell queue).

A ring is three arrays::

    seq:   [capacity] int64          per-cell sequence number (capacity a power of two)
    data:  [capacity, width] int64   the records
    pos:   [16] int64                pos[0] = enqueue position, pos[8] = dequeue position
                                     (one cache line apart, so producers and consumers do not
                                     false-share)

``push`` / ``pop`` are safe from any number of threads at once; a record is visible to a
consumer only after its cell's sequence number is published with release ordering, and the
consumer reads it after an acquire load.  Metadata between workers and the scheduler
(``Emitted`` spans, ``Completed`` decisions) and the ready-slot queue use these rings: 29-67 ns
per message, where a ``queue.SimpleQueue`` costs 210-520 ns before any work (docs/architecture.md, "Thread roles").
"""

from __future__ import annotations

import numpy as np

from . import atomics
from ._compile import kernel

ENQ = 0
DEQ = 8


def make(capacity: int, width: int):
    """Allocate a ring of at least ``capacity`` records of ``width`` int64 words."""
    cap = 1
    while cap < max(2, capacity):
        cap *= 2
    seq = np.arange(cap, dtype=np.int64)
    data = np.zeros((cap, width), np.int64)
    pos = np.zeros(16, np.int64)
    return seq, data, pos


@kernel
def reset(seq, pos):
    """Empty the ring (only while no thread uses it)."""
    for i in range(seq.shape[0]):
        seq[i] = i
    pos[ENQ] = 0
    pos[DEQ] = 0


@kernel
def _claim_push(seq, pos):
    """Claim the next free cell for a producer: its ticket (cell = ticket & mask), or -1 when
    the ring is full.  The caller writes the record, then publishes it with
    ``store_release(seq, cell, ticket + 1)``."""
    mask = seq.shape[0] - 1
    p = atomics.load_acquire(pos, ENQ)
    while True:
        cell = p & mask
        dif = atomics.load_acquire(seq, cell) - p
        if dif == 0:
            if atomics.cas(pos, ENQ, p, p + 1) == p:
                return p
            p = atomics.load_acquire(pos, ENQ)
        elif dif < 0:
            return -1
        else:
            p = atomics.load_acquire(pos, ENQ)


@kernel
def _claim_pop(seq, pos):
    """Claim the oldest published cell for a consumer: its ticket, or -1 when empty.  The caller
    reads the record, then frees the cell with ``store_release(seq, cell, ticket + capacity)``."""
    mask = seq.shape[0] - 1
    p = atomics.load_acquire(pos, DEQ)
    while True:
        cell = p & mask
        dif = atomics.load_acquire(seq, cell) - (p + 1)
        if dif == 0:
            if atomics.cas(pos, DEQ, p, p + 1) == p:
                return p
            p = atomics.load_acquire(pos, DEQ)
        elif dif < 0:
            return -1
        else:
            p = atomics.load_acquire(pos, DEQ)


@kernel
def push(seq, data, pos, rec):
    """Append ``rec: [width] int64``; False when the ring is full."""
    t = _claim_push(seq, pos)
    if t < 0:
        return False
    cell = t & (seq.shape[0] - 1)
    for j in range(rec.shape[0]):
        data[cell, j] = rec[j]
    atomics.store_release(seq, cell, t + 1)
    return True


@kernel
def push1(seq, data, pos, a):
    """Append a one-word record ``a`` (the ready-slot queue); False when full."""
    t = _claim_push(seq, pos)
    if t < 0:
        return False
    cell = t & (seq.shape[0] - 1)
    data[cell, 0] = a
    atomics.store_release(seq, cell, t + 1)
    return True


@kernel
def pop(seq, data, pos, out):
    """Remove the oldest record into ``out: [width] int64``; False when empty."""
    t = _claim_pop(seq, pos)
    if t < 0:
        return False
    cell = t & (seq.shape[0] - 1)
    for j in range(out.shape[0]):
        out[j] = data[cell, j]
    atomics.store_release(seq, cell, t + seq.shape[0])
    return True


@kernel
def pop1(seq, data, pos):
    """Remove the oldest one-word record; -1 when empty (records must be >= 0)."""
    t = _claim_pop(seq, pos)
    if t < 0:
        return -1
    cell = t & (seq.shape[0] - 1)
    v = data[cell, 0]
    atomics.store_release(seq, cell, t + seq.shape[0])
    return v


@kernel(entry=True)
def size(pos):
    """Records currently queued (a snapshot; exact when no thread is pushing or popping)."""
    n = atomics.load_acquire(pos, ENQ) - atomics.load_acquire(pos, DEQ)
    return n if n > 0 else 0
