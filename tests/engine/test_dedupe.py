"""``order_unique``: choose's env-ordered exact-bytes dedupe, against a numpy reference."""

from __future__ import annotations

import numpy as np

from reinfors.jit import dedupe


def _reference(rows, spans):
    order = sorted(range(len(spans)), key=lambda s: (spans[s, 0], spans[s, 3]))
    env_rows = [spans[s, 1] + t for s in order for t in range(spans[s, 2])]
    uniq, uid = [], {}
    for r in env_rows:
        b = rows[r].tobytes()
        if b not in uid:
            uid[b] = len(uniq)
            uniq.append(r)
    return np.array(uniq), np.array([uid[rows[r].tobytes()] for r in range(len(rows))])


def test_order_unique_matches_first_occurrence_env_order():
    rs = np.random.default_rng(5)
    for trial in range(40):
        n_spans = int(rs.integers(1, 12))
        sizes = rs.integers(1, 4, n_spans)
        n = int(sizes.sum())
        width = (6, 1, 3, 4, 7, 84)[trial % 6]  # the hash's 4-column steps and its odd tail
        pool = rs.standard_normal((4, width)).astype(np.float32)
        rows = pool[rs.integers(0, 4, n)].copy()
        if trial % 3 == 0:
            rows[0, 0] = -0.0  # bytes, not values: -0.0 and 0.0 are different rows
            rows[-1, 0] = 0.0
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        slots = np.arange(n_spans) if trial % 4 == 1 else rs.permutation(n_spans)  # in env order: no sort
        spans = np.zeros((n_spans + 3, 4), np.int64)
        spans[:n_spans, 0] = slots
        spans[:n_spans, 1] = starts
        spans[:n_spans, 2] = sizes
        spans[:n_spans, 3] = 0
        src, uid = dedupe.order_unique(rows, spans, n_spans)
        want_src, want_uid = _reference(rows, spans[:n_spans])
        np.testing.assert_array_equal(src, want_src)
        np.testing.assert_array_equal(uid, want_uid)
        np.testing.assert_array_equal(rows[src][uid], rows)


def test_order_unique_keeps_rows_that_differ_in_one_bit_anywhere():
    rs = np.random.default_rng(7)
    base = rs.standard_normal(84).astype(np.float32)
    rows = np.repeat(base[None], 85, axis=0)
    for c in range(84):  # row c + 1 differs from row 0 in column c's lowest bit only
        rows[c + 1].view(np.uint32)[c] ^= 1
    rows = np.concatenate([rows, rows[::-1]])  # and every row twice
    spans = np.array([[0, 0, len(rows), 0]], np.int64)
    src, uid = dedupe.order_unique(rows, spans, 1)
    np.testing.assert_array_equal(src, np.arange(85))
    np.testing.assert_array_equal(uid, np.concatenate([np.arange(85), np.arange(85)[::-1]]))
