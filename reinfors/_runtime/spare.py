"""Recycled memory for the large dense batch fields (AlphaZero's ``policy_targets``).

A fresh 76 MB chess target array costs its first touch on every window: on this project's VMs
the kernel's page provisioning (huge-page faults, clearing) took 45-55 ms per 2,048-record
window while the workers idled, against ~10 ms to clear memory already mapped.  A field is
therefore handed out as a view of a buffer this pool keeps; a buffer is taken again only when
nothing outside the pool references it (every array derived from a batch's field keeps the
buffer alive: NumPy views, ``torch.from_numpy``, memoryviews), so a batch the caller still
holds is never written.  Two buffers cover the usual loop (``batch = engine.collect(...)``
holds the previous batch while the next one is built); a caller who keeps every batch simply
gets fresh memory each time.
"""

from __future__ import annotations

import sys

import numpy as np

# Buffers above this size are never kept: the pool must not hold on to a huge window's memory.
MAX_KEPT_BYTES = 256 << 20
KEPT = 2


class SpareBuffers:
    """Zeroed-on-demand ``[rows, cols]`` arrays over recycled float64 buffers."""

    def __init__(self):
        self._kept: list[np.ndarray] = []

    def take(self, rows: int, cols: int) -> tuple[np.ndarray, bool]:
        """``(array, dirty)``: a ``[rows, cols] float64`` array and whether it holds stale values
        (a recycled buffer, to be cleared by the caller's kernel) or is freshly zeroed."""
        need = rows * cols
        kept = self._kept
        for i in range(len(kept)):
            # references: the list and getrefcount's argument; any more is a caller's
            if kept[i].size >= need and sys.getrefcount(kept[i]) <= 2:
                return kept[i][:need].reshape(rows, cols), True
        # Fresh memory, with some slack so that a slightly longer later window fits it too.
        size = need + need // 8
        if size * 8 > MAX_KEPT_BYTES:
            return np.zeros((rows, cols), np.float64), False
        buf = np.zeros(size, np.float64)
        self._kept.append(buf)
        if len(self._kept) > KEPT:
            self._kept.pop(0)  # the oldest is still held by a caller (or it would have been taken)
        return buf[:need].reshape(rows, cols), False
