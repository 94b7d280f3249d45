"""Lock-free MPMC rings: FIFO semantics, full/empty, and real-thread transfer without loss."""

from __future__ import annotations

import threading

import numpy as np
from helpers import python_callable
from numba import njit

from reinfors.jit import rings

py_rings = python_callable(rings)  # internal kernels: Python calls them through njit shims


def test_fifo_full_and_empty():
    seq, data, pos = py_rings.make(4, 3)
    assert seq.shape[0] == 4
    out = np.zeros(3, np.int64)
    assert not py_rings.pop(seq, data, pos, out)
    for i in range(4):
        assert py_rings.push(seq, data, pos, np.array([i, i * 10, -i]))
    assert not py_rings.push(seq, data, pos, np.array([9, 9, 9]))
    assert py_rings.size(pos) == 4
    for i in range(4):
        assert py_rings.pop(seq, data, pos, out) and out.tolist() == [i, i * 10, -i]
    assert py_rings.pop1(seq, data, pos) == -1
    assert py_rings.push1(seq, data, pos, 42) and py_rings.pop1(seq, data, pos) == 42


@njit(nogil=True)
def _produce(seq, data, pos, wid, n):
    rec = np.zeros(2, np.int64)
    for i in range(n):
        rec[0] = wid
        rec[1] = i
        while not rings.push(seq, data, pos, rec):
            pass
    return 0


@njit(nogil=True)
def _consume(seq, data, pos, n_total, seen, last):
    out = np.zeros(2, np.int64)
    got = 0
    while got < n_total:
        if rings.pop(seq, data, pos, out):
            w, i = out[0], out[1]
            if i <= last[w]:
                seen[w] = -1  # per-producer order violated
            last[w] = i
            seen[w] += 1 if seen[w] >= 0 else 0
            got += 1
    return got


def test_two_producers_one_consumer_real_threads():
    n = 400_000
    seq, data, pos = rings.make(256, 2)
    seen = np.zeros(2, np.int64)
    last = np.full(2, -1, np.int64)
    _produce(*rings.make(4, 2), 0, 1)
    _consume(*rings.make(4, 2), 0, np.zeros(1, np.int64), np.full(1, -1, np.int64))
    ts = [threading.Thread(target=_produce, args=(seq, data, pos, w, n)) for w in range(2)]
    c = threading.Thread(target=_consume, args=(seq, data, pos, 2 * n, seen, last))
    c.start()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    c.join()
    assert seen.tolist() == [n, n] and last.tolist() == [n - 1, n - 1]
