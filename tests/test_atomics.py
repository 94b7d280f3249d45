"""Atomic intrinsics: single-thread semantics and real multi-thread contention."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numba import njit

from reinfors.jit import atomics as A


@njit(nogil=True)
def _single(arr):
    out = np.zeros(12, arr.dtype)
    out[0] = A.cas(arr, 0, 5, 9)  # fails: arr[0] == 0
    out[1] = arr[0]
    out[2] = A.cas(arr, 0, 0, 9)  # succeeds
    out[3] = arr[0]
    out[4] = A.fetch_add(arr, 1, 3)
    out[5] = A.fetch_sub(arr, 1, 1)
    out[6] = A.fetch_or(arr, 2, 6)
    out[7] = A.fetch_and(arr, 2, 3)
    out[8] = A.exchange(arr, 3, 42)
    A.store_release(arr, 4, 17)
    out[9] = A.load_acquire(arr, 4)
    out[10] = A.commit_release(arr, 5, 2)
    out[11] = arr[5]
    return out


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32, np.uint32])
def test_single_thread_semantics(dtype):
    arr = np.zeros(6, dtype)
    out = _single(arr)
    assert out.tolist() == [0, 0, 0, 9, 0, 3, 0, 6, 0, 17, 0, 2]
    assert arr.tolist() == [9, 2, 2, 42, 17, 2]


def test_uint64_wraps_and_keeps_high_bit():
    arr = np.array([2**64 - 1, 2**63], np.uint64)
    old = _wrap(arr)
    assert int(old[0]) == 2**64 - 1 and int(arr[0]) == 0  # fetch_add wraps modulo 2**64
    assert int(old[1]) == 2**63 and int(arr[1]) == 2**63 + 1
    assert int(old[2]) == 1  # top bit read back as 1, not -1


@njit(nogil=True)
def _wrap(arr):
    out = np.zeros(3, np.uint64)
    out[0] = A.fetch_add(arr, 0, np.uint64(1))
    out[1] = A.cas(arr, 1, np.uint64(2**63), np.uint64(2**63 + 1))
    out[2] = A.load_acquire(arr, 1) >> np.uint64(63)
    return out


@njit(nogil=True)
def _contend(ctl, counters, n, racy):
    # Start barrier: spin until the main thread releases every worker at once.
    while A.load_acquire(ctl, 0) == 0:
        pass
    for _ in range(n):
        A.fetch_add(counters, 0, 1)
        while True:  # CAS loop increment
            old = A.load_acquire(counters, 1)
            if A.cas(counters, 1, old, old + 1) == old:
                break
        if racy:  # deliberately non-atomic read-modify-write
            v = A.load_acquire(counters, 2)
            A.store_release(counters, 2, v + 1)
    return 0


def _run(n_threads, n, racy):
    ctl = np.zeros(1, np.int64)
    counters = np.zeros(3, np.int64)
    _contend(np.ones(1, np.int64), np.zeros(3, np.int64), 1, racy)  # compile outside the threads
    threads = [threading.Thread(target=_contend, args=(ctl, counters, n, racy)) for _ in range(n_threads)]
    for t in threads:
        t.start()
    ctl[0] = 1
    for t in threads:
        t.join()
    return counters


def test_contention_loses_no_update():
    n, n_threads = 600_000, 2  # 2.4M atomic operations (fetch_add + CAS loop) across threads
    counters = _run(n_threads, n, racy=False)
    assert counters[0] == n * n_threads
    assert counters[1] == n * n_threads


def test_racy_control_detects_lost_updates():
    """The same harness with a non-atomic increment must lose updates: the test can fail."""
    for attempt in range(6):
        n = 400_000 * (attempt + 1)
        counters = _run(2, n, racy=True)
        assert counters[0] == 2 * n and counters[1] == 2 * n
        if counters[2] < 2 * n:
            return
    pytest.skip("threads never overlapped on this machine (single core?)")
