"""Row deduplication for ``PolicyHandle.choose``: one kernel call per inference round.

A choose round's rows sit in one arena in span order.  The callback must see them in *env
order* (slot, then request offset) with exact-bytes duplicates removed (first occurrence kept),
and every arena row must get back its unique row's prediction.  ``order_unique`` does both in
one pass: it orders the spans, hashes each row's bytes into an open-addressing table and
compares candidates bit for bit, so it costs O(rows x obs) with no sort of the row bytes.
"""

from __future__ import annotations

import numpy as np

from ._compile import kernel

_H0 = np.uint64(0x9E3779B97F4A7C15)
_H1 = np.uint64(0xD6E8FEB86659FD93)
_HM = np.uint64(0xBF58476D1CE4E5B9)
_HM2 = np.uint64(0x94D049BB133111EB)
_S29 = np.uint64(29)
_S31 = np.uint64(31)
_S32 = np.uint64(32)


@kernel
def _row_hash(bits, r, O):
    """A 64-bit hash of row ``r`` of ``bits: [n, O] uint32``: four independent multiply-xor lanes
    over 64-bit words (eight columns a step; the last columns folded into the first lane one at
    a time), mixed at the end — a row costs about a sixth of one serial multiply-xorshift chain
    over its columns.  Only the table's spread depends on it: rows are compared bit for bit."""
    h0 = _H0
    h1 = _H1
    h2 = _H0 ^ _HM
    h3 = _H1 ^ _HM2
    c = 0
    while c + 8 <= O:
        h0 = (h0 ^ (np.uint64(bits[r, c]) | (np.uint64(bits[r, c + 1]) << _S32))) * _HM
        h1 = (h1 ^ (np.uint64(bits[r, c + 2]) | (np.uint64(bits[r, c + 3]) << _S32))) * _HM2
        h2 = (h2 ^ (np.uint64(bits[r, c + 4]) | (np.uint64(bits[r, c + 5]) << _S32))) * _HM
        h3 = (h3 ^ (np.uint64(bits[r, c + 6]) | (np.uint64(bits[r, c + 7]) << _S32))) * _HM2
        c += 8
    while c < O:
        h0 = (h0 ^ np.uint64(bits[r, c])) * _HM
        h0 ^= h0 >> _S29
        c += 1
    h = ((h0 ^ (h0 >> _S29)) * _HM2) ^ ((h1 ^ (h1 >> _S31)) * _HM)
    h = (h ^ (h >> _S29)) * _HM2 ^ ((h2 ^ (h2 >> _S31)) * _HM2) ^ ((h3 ^ (h3 >> _S29)) * _HM)
    return h ^ (h >> _S31)


@kernel(entry=True)
def order_unique(rows, spans, n_spans):
    """Env-ordered exact-bytes dedupe of an arena's rows.

    Parameters
    ----------
    rows : [n, O] float32, the arena's committed rows (span order).
    spans : [>= n_spans, 4] int64, per span ``(slot, start row, rows, request offset)``.
    n_spans : int, spans in use.

    Returns
    -------
    unique_src : [u] int64, arena row of each unique row, in first-occurrence env order.
    row_uid : [n] int64, for every arena row the index of its unique row in ``unique_src``.
    """
    n, O = rows.shape
    bits = rows.view(np.uint32)
    big = np.int64(1) << 32
    in_order = True  # spans written in env order already (a single-threaded round): no sort
    prev = np.int64(-1)
    for s in range(n_spans):
        key = spans[s, 0] * big + spans[s, 3]
        if key < prev:
            in_order = False
            break
        prev = key
    order = np.zeros(0, np.int64)  # (a single-threaded round's spans need no sort: no order array)
    if not in_order:
        keys = np.empty(n_spans, np.int64)
        for s in range(n_spans):
            keys[s] = spans[s, 0] * big + spans[s, 3]
        order = np.argsort(keys, kind="mergesort")
    cap = 16
    while cap < 2 * n:
        cap *= 2
    # One allocation for the table and both outputs: [table (cap) | unique_src (n) | row_uid (n)].
    scratch = np.empty(cap + 2 * n, np.int64)
    table = scratch[:cap]  # unique index, or -1
    table[:] = -1
    unique_src = scratch[cap : cap + n]
    row_uid = scratch[cap + n :]
    u = 0
    mask = np.uint64(cap - 1)
    for oi in range(n_spans):
        s = oi if in_order else order[oi]
        for t in range(spans[s, 2]):
            r = spans[s, 1] + t
            slot = _row_hash(bits, r, O) & mask
            while True:
                j = table[slot]
                if j < 0:
                    table[slot] = u
                    unique_src[u] = r
                    row_uid[r] = u
                    u += 1
                    break
                q = unique_src[j]
                same = True
                for c in range(O):
                    if bits[q, c] != bits[r, c]:
                        same = False
                        break
                if same:
                    row_uid[r] = j
                    break
                slot = (slot + np.uint64(1)) & mask
    return unique_src[:u], row_uid
