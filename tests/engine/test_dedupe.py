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
    for trial in range(20):
        n_spans = int(rs.integers(1, 12))
        sizes = rs.integers(1, 4, n_spans)
        n = int(sizes.sum())
        pool = rs.standard_normal((4, 6)).astype(np.float32)
        rows = pool[rs.integers(0, 4, n)].copy()
        if trial % 3 == 0:
            rows[0, 0] = -0.0  # bytes, not values: -0.0 and 0.0 are different rows
            rows[-1, 0] = 0.0
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        slots = rs.permutation(n_spans)
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
