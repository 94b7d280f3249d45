"""Preparing a reused ``choose`` runtime for its next call in two kernel calls (no per-array Python).

``reinfors/_runtime/choose.py`` keeps a finished call's runtime and resets it for the next call
of the same composition: the state arrays back to zero, then slot ``k`` loaded with row ``k``
of the call, its stream ``rng.derive(seed, k, CHOOSE_STREAM)`` and its acting ply.  Done in
Python that is one ``fill`` per array and a dozen NumPy operations on tiny arrays (~0.1 ms a
call, more than a short search round); here it is :func:`zero_blocks` over the arrays'
addresses and :func:`load_slots`.
"""

from __future__ import annotations

import numba
import numpy as np

from . import engine_codes as C
from . import rng as _rng
from ._compile import kernel
from .pointers import void_ptr

__all__ = ["zero_blocks", "load_slots"]

_MAX_PLY = np.int64(1) << 62


@kernel(entry=True)
def zero_blocks(addresses, nbytes):
    """Zero ``nbytes[i]`` bytes at ``addresses[i]`` for every ``i`` (arrays the caller holds)."""
    for i in range(addresses.shape[0]):
        block = numba.carray(void_ptr(addresses[i]), (nbytes[i],), np.uint8)
        block[:] = 0


@kernel(entry=True)
def load_slots(states, srng, sinfo, rows, plies, seed, stream, heads):
    """``choose``'s ``_fill`` on a zeroed runtime: ``states[:m] = rows`` (``m = len(rows)``),
    ``srng[k, 0] = rng.derive(seed, k, stream)`` for every slot, the acting plies (capped at
    2**62) and status EMIT for ``k < m``, PARK above; with ``heads > 0`` (EpsilonGreedyQ,
    SelectiveExpectimax) each slot's episode head ``next_u64(srng[k]) % heads`` (a draw)."""
    m = rows.shape[0]
    for k in range(m):
        for j in range(rows.shape[1]):
            states[k, j] = rows[k, j]
    for k in range(sinfo.shape[0]):
        srng[k, 0] = _rng.derive(seed, np.uint64(k), stream)
        for j in range(sinfo.shape[1]):
            sinfo[k, j] = 0
        if k < m:
            sinfo[k, C.SI_EPLEN] = min(plies[k], _MAX_PLY)
            sinfo[k, C.SI_STATUS] = C.ST_EMIT
        else:
            sinfo[k, C.SI_STATUS] = C.ST_PARK
        if heads > 0:
            sinfo[k, C.SI_HEAD] = np.int64(_rng.next_u64(srng[k]) % np.uint64(heads))
