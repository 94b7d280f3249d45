"""Callback outputs into the engine's float64 prediction rows, checked for finiteness.

One pass per fire over the callback's arrays (float32 or float64, any strides), written into a
prediction buffer the route keeps between fires: no temporary array, no separate reduction.
float32 values widen exactly, so the rows are bit-identical to float64 outputs of the same
values.  Used by ``reinfors/_runtime/routes.py``; compiled once per input dtype / layout.

float32 policy logits need not be widened at all: :func:`finite_cols_values` checks them in
place (read-only) and the engine's ``route`` reads the columns it stores straight from the callback's
array (:func:`f32_rows` over its address), widening only those.  A tree node stores its legal
actions' logits alone (chess: ~30 of 4,672 columns), so the full-width copy is not paid.
"""

from __future__ import annotations

import numba
import numpy as np

from ._compile import kernel
from .pointers import void_ptr


@kernel(entry=True)
def widen_rows(src, n_cols, dst, col0):
    """``dst[:, col0 : col0 + n_cols] = src[:, :n_cols]`` as float64, for the first
    ``dst.shape[0]`` rows; returns True when every value copied is finite.

    ``x - x`` is 0 for a finite ``x`` and NaN for an infinity or NaN; the loop counts the
    non-finite values (an integer reduction, which vectorises: a float sum would not, without
    fastmath).  Each row is addressed through views that start at column 0: an index
    ``col0 + c`` keeps Numba's negative-index wraparound in the loop and LLVM from vectorising
    it (measured 3x slower: 120 against 40 us for 32 rows of 4,672 float32 logits).
    """
    bad = 0
    for r in range(dst.shape[0]):
        s = src[r, :n_cols]
        d = dst[r, col0 : col0 + n_cols]
        for c in range(n_cols):
            x = np.float64(s[c])
            d[c] = x
            bad += (x - x) != 0.0
    return bad == 0


@kernel(entry=True)
def finite_cols_values(src, n_cols, values, dst, raw):
    """True when ``src[:, :n_cols]`` and ``values: [rows]`` hold only finite values: the
    logits are checked in place, in their own precision (the check of :func:`widen_rows`
    without the copy), and the values widened into column ``n_cols`` of ``dst`` — an AlphaZero
    / PPO callback's output in one dispatch.  ``raw`` receives ``(address, rows, row stride in
    elements)`` of ``src`` for :func:`f32_rows`."""
    bad = 0
    for r in range(src.shape[0]):
        s = src[r, :n_cols]
        for c in range(n_cols):
            x = s[c]
            bad += (x - x) != 0.0
        v = np.float64(values[r])
        dst[r, n_cols] = v
        bad += (v - v) != 0.0
    raw[0] = src.ctypes.data
    raw[1] = src.shape[0]
    raw[2] = src.strides[0] // src.itemsize
    return bad == 0


@kernel(inline="always")
def f32_rows(address, rows, stride):
    """The float32 ``[rows, stride]`` array at ``address`` (a callback's logits with a row stride
    of ``stride`` elements; ``rows = 0`` for none).  No meminfo: the caller holds the array for
    as long as this view is read."""
    return numba.carray(void_ptr(address), (rows, stride), np.float32)
