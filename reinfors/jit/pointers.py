"""Arrays rebuilt from raw addresses inside kernels: no reference counting on the hot path.

Every NumPy array a kernel receives from Python carries a Numba meminfo, and every view or
tuple element of it taken inside the kernel costs an atomic increment and decrement of that
meminfo's reference count (measured: ~60% of the engine's per-decision time).  The engine
therefore passes its state as one ``int64`` table of ``(address, dim0, dim1, dim2, dim3)`` rows
and rebuilds each array with :func:`numba.carray` over the address: such arrays have no meminfo,
so views and copies of them are free, and unboxing one small table replaces typing a tuple of
dozens of arrays on every call from Python.

Contract: the Python side keeps every addressed array alive and unchanged in shape while any
kernel that received its table runs (``reinfors/_runtime/runtime.py`` rebuilds the table
whenever it reallocates).
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic


@intrinsic
def void_ptr(typingctx, address):
    """``int64`` address → ``void*`` (for ``numba.carray``)."""
    if not isinstance(address, types.Integer):
        return None
    sig = types.voidptr(address)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return sig, codegen


def table_unpacker(layout):
    """An intrinsic ``unpack(table) -> tuple of arrays`` for an address table of rows
    ``(address, dim0, dim1, dim2, dim3)``; ``layout[i] = (dtype, ndim)`` of row ``i``.

    Equivalent to ``(carray(void_ptr(T[i, 0]), (T[i, 1], ...), dtype), ...)`` — the same array
    types (C-contiguous, no meminfo) — but typed as ONE call: every kernel that unpacks the
    engine table pays no per-array typing work, which was most of the engine's compile time.
    The table must be a C-contiguous ``int64`` array with 5 columns.
    """
    import numpy as np
    from llvmlite import ir
    from numba.np import numpy_support
    from numba.np.arrayobj import populate_array

    arytys = tuple(types.Array(numpy_support.from_dtype(np.dtype(dt)), int(nd), "C") for dt, nd in layout)
    tupty = types.Tuple(arytys)
    i64 = ir.IntType(64)

    @intrinsic
    def unpack(typingctx, table):
        if not (isinstance(table, types.Array) and table.ndim == 2 and table.dtype == types.int64):
            return None
        sig = tupty(table)

        def codegen(context, builder, signature, args):
            tbl = context.make_array(signature.args[0])(context, builder, args[0])
            base = tbl.data
            out = []
            for i, aryty in enumerate(arytys):

                def word(k, i=i):
                    return builder.load(builder.gep(base, [ir.Constant(i64, 5 * i + k)]))

                shape = [word(1 + d) for d in range(aryty.ndim)]
                itemsize = context.get_abi_sizeof(context.get_data_type(aryty.dtype))
                strides = [None] * aryty.ndim
                acc = ir.Constant(i64, itemsize)
                for d in range(aryty.ndim - 1, -1, -1):
                    strides[d] = acc
                    acc = builder.mul(acc, shape[d])
                data = builder.inttoptr(word(0), context.get_data_type(aryty.dtype).as_pointer())
                ary = context.make_array(aryty)(context, builder)
                populate_array(
                    ary,
                    data=data,
                    shape=cgutils.pack_array(builder, shape),
                    strides=cgutils.pack_array(builder, strides),
                    itemsize=ir.Constant(i64, itemsize),
                    meminfo=None,
                )
                out.append(ary._getvalue())
            return context.make_tuple(builder, tupty, out)

        return sig, codegen

    return unpack
