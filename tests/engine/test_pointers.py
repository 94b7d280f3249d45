"""The engine's address table (``reinfors/jit/pointers.py``): ``E = unpack(table)`` and ``E.name``.

Every engine kernel reads its state through ``E.<row name>``; these pin what the rows are (shapes,
dtypes, aliasing the addressed arrays) and that ``E`` passes into inlined and called kernels as
a value of its own, without becoming a tuple."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from reinfors.jit.pointers import EngineTable, table_unpacker

LAYOUT = (("a", "float64", 2), ("b", "int64", 1), ("c", "uint8", 3), ("d", "float32", 4))
unpack = table_unpacker(LAYOUT)


def _table(arrays):
    t = np.zeros((len(arrays), 5), np.int64)
    for i, a in enumerate(arrays):
        t[i, 0] = a.ctypes.data
        t[i, 1 : 1 + a.ndim] = a.shape
    return t


@numba.njit(inline="always")
def _bump(E, k):  # an inlined callee receives E itself
    E.b[k] += 1


@numba.njit
def _scale(table, f):  # a called kernel unpacks its own table
    E = unpack(table)
    x = E.d.reshape(-1)  # a C-contiguous row: a view
    for i in range(x.size):
        x[i] *= f


@numba.njit
def _kernel(table):
    E = unpack(table)
    a, b, c, d = E.a, E.b, E.c, E.d
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += a[i, j]
            if a[i, j] > 4.0:  # reads under a branch (not hoisted out of the loop)
                b[j] += 1
    _bump(E, 0)
    c[1, 2, 3] = 7
    _scale(table, np.float32(2.0))
    return s, b.shape[0], c.shape, d.shape, E.d.strides


def test_rows_are_the_addressed_arrays_with_their_shapes_and_dtypes():
    a = np.arange(12.0).reshape(3, 4)
    b = np.zeros(4, np.int64)
    c = np.zeros((2, 3, 4), np.uint8)
    d = np.ones((2, 1, 3, 2), np.float32)
    s, nb, cs, ds, dst = _kernel(_table([a, b, c, d]))
    assert s == a.sum() and nb == 4 and cs == c.shape and ds == d.shape and dst == d.strides
    want = (a > 4.0).sum(axis=0)
    want[0] += 1  # the inlined callee's write
    np.testing.assert_array_equal(b, want)
    assert c[1, 2, 3] == 7 and c.sum() == 7
    np.testing.assert_array_equal(d, 2.0)  # the called kernel's writes


def test_a_row_outside_the_layout_does_not_type():
    @numba.njit
    def bad(table):
        E = unpack(table)
        return E.e.shape[0]

    with pytest.raises(numba.core.errors.TypingError):
        bad(np.zeros((4, 5), np.int64))


def test_rows_have_no_numeric_access():
    @numba.njit
    def numbered(table):
        E = unpack(table)
        return E[1].shape[0]

    with pytest.raises(numba.core.errors.TypingError):
        numbered(np.zeros((4, 5), np.int64))


def test_tables_of_one_layout_share_one_type():
    same = [("a", np.float64, 2), ("b", np.int64, 1), ("c", np.uint8, 3), ("d", np.float32, 4)]
    assert EngineTable(LAYOUT) == EngineTable(same)
    assert EngineTable(LAYOUT) != EngineTable(LAYOUT[:3])
    assert EngineTable(LAYOUT) != EngineTable([("z", *LAYOUT[0][1:]), *LAYOUT[1:]])  # names are part of it
