"""Record-pool kernels used when a finished window is handed to the caller.

The engine's record pool is a set of row-aligned arrays (``r_obs [M, O] float32``,
``r_meta [M, RM] int64``, ...; ``reinfors/_runtime/runtime.py``).  Delivering a batch permutes
every pool array *in place* into batch order, so the largest fields (observations, search
targets) become the batch's arrays without a copy, and the legality masks turn into the batch's
CSR fields in one pass.  Scheduler-side only (no worker runs while these execute).
"""

from __future__ import annotations

import numpy as np

from ._compile import kernel


@kernel
def permute_rows(a, perm, n, seen):
    """Reorder rows ``[0, n)`` of ``a`` in place so that new row ``j`` is old row ``perm[j]``.

    Parameters
    ----------
    a : [M, W] array (any dtype), written in place (rows ``>= n`` untouched).
    perm : [n] int64, a permutation of ``0 .. n-1``.
    n : int, rows to permute.
    seen : [n] uint8 scratch, zeroed here.

    Cycle-following with one row of temporary storage: O(n * W) moves, O(W) extra memory.
    """
    W = a.shape[1]
    tmp = np.empty(W, a.dtype)
    for i in range(n):
        seen[i] = 0
    for start in range(n):
        if seen[start] != 0 or perm[start] == start:
            seen[start] = 1
            continue
        for c in range(W):
            tmp[c] = a[start, c]
        j = start
        while True:
            seen[j] = 1
            src = perm[j]
            if src == start:
                for c in range(W):
                    a[j, c] = tmp[c]
                break
            for c in range(W):
                a[j, c] = a[src, c]
            j = src


@kernel
def legal_csr(mask, n):
    """CSR of the nonzero columns of rows ``[0, n)`` of a ``[M, A] uint8`` legality mask.

    Returns ``(ids [nnz] int64, offsets [n + 1] int64)``: row ``i``'s legal ids, ascending, are
    ``ids[offsets[i]:offsets[i + 1]]``.
    """
    A = mask.shape[1]
    offsets = np.zeros(n + 1, np.int64)
    for i in range(n):
        k = 0
        for c in range(A):
            if mask[i, c] != 0:
                k += 1
        offsets[i + 1] = offsets[i] + k
    ids = np.empty(offsets[n], np.int64)
    for i in range(n):
        k = offsets[i]
        for c in range(A):
            if mask[i, c] != 0:
                ids[k] = c
                k += 1
    return ids, offsets
