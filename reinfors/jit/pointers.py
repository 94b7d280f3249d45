"""Arrays rebuilt from raw addresses inside kernels: no reference counting on the hot path.

Every NumPy array a kernel receives from Python carries a Numba meminfo, and every view or
tuple element of it taken inside the kernel costs an atomic increment and decrement of that
meminfo's reference count (measured: ~60% of the engine's per-decision time).  The engine
therefore passes its state as one ``int64`` table of ``(address, dim0, dim1, dim2, dim3)`` rows
and rebuilds each array (read by its row's name: ``E.t_ni``) with :func:`numba.carray` over the
address: such arrays have no meminfo, so views and copies of them are free, and unboxing one
small table replaces typing a tuple of dozens of arrays on every call from Python.

Contract: the Python side keeps every addressed array alive and unchanged in shape while any
kernel that received its table runs (``reinfors/_runtime/runtime.py`` rebuilds the table
whenever it reallocates).
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.typing.templates import AttributeTemplate, infer_getattr
from numba.extending import intrinsic, lower_getattr_generic, models, register_model


@intrinsic
def void_ptr(typingctx, address):
    """``int64`` address → ``void*`` (for ``numba.carray``)."""
    if not isinstance(address, types.Integer):
        return None
    sig = types.voidptr(address)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return sig, codegen


@intrinsic
def borrowed(typingctx, ary):
    """The same array (data, shape, strides) without its meminfo: passing it on to callees that
    are not inlined costs no atomic reference-count update.  Every Numba call increments and
    decrements the reference count of each array argument it receives, and an entry kernel's
    arguments come from Python with a meminfo: the engine's address table alone was incremented
    and decremented ~10 times a search row (10 % of a Connect4 AlphaZero row's perf samples).  The
    caller must keep the owner alive for as long as the borrowed array is used — an entry
    kernel's arguments, which Python holds for the whole call, are the intended use."""
    if not isinstance(ary, types.Array):
        return None
    sig = ary(ary)

    def codegen(context, builder, signature, args):
        from numba.np.arrayobj import populate_array

        aryty = signature.args[0]
        src = context.make_array(aryty)(context, builder, args[0])
        out = context.make_array(aryty)(context, builder)
        populate_array(out, data=src.data, shape=src.shape, strides=src.strides, itemsize=src.itemsize, meminfo=None)
        return out._getvalue()

    return sig, codegen


class EngineTable(types.Type):
    """The type of an unpacked address table: ``E.<name>`` is the C-contiguous, meminfo-free
    array of the row called ``name``, built where it is read (there is no numeric access: a row
    is read by its name or not at all).  Its value is the table's data pointer, so copying ``E``
    (an ``inline="always"`` callee's argument) is one register, where a tuple of dozens of arrays
    was a reference-count walk over every member (most of the unoptimised IR of the engine's
    kernels, and so of their compile time)."""

    def __init__(self, layout):
        import hashlib

        import numpy as np
        from numba.np import numpy_support

        self.layout = tuple((str(name), str(np.dtype(dt)), int(nd)) for name, dt, nd in layout)
        self.index = {name: i for i, (name, _, _) in enumerate(self.layout)}
        if len(self.index) != len(self.layout):
            raise ValueError("engine table rows need distinct names")
        self.arrays = tuple(types.Array(numpy_support.from_dtype(np.dtype(dt)), nd, "C") for _, dt, nd in self.layout)
        digest = hashlib.sha256(repr(self.layout).encode()).hexdigest()[:16]
        super().__init__(name=f"EngineTable({len(self.layout)} rows, {digest})")


@register_model(EngineTable)
class _EngineTableModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.IntType(64).as_pointer())


@infer_getattr
class _EngineTableAttributes(AttributeTemplate):
    key = EngineTable

    def generic_resolve(self, tbl, attr):
        i = tbl.index.get(attr)
        return None if i is None else tbl.arrays[i]


@lower_getattr_generic(EngineTable)
def _engine_table_getattr(context, builder, typ, base, attr):
    i = typ.index[attr]
    return _row_array(context, builder, base, i, typ.arrays[i])


def _row_array(context, builder, base, i, aryty):
    """The array of row ``i``: ``carray(address, dims)`` from invariant loads of the table."""
    from numba.np.arrayobj import populate_array

    i64 = ir.IntType(64)
    empty = builder.module.add_metadata([])

    def word(k):  # the table is fixed while a kernel runs: invariant loads (hoisted, merged)
        ld = builder.load(builder.gep(base, [ir.Constant(i64, 5 * i + k)]))
        ld.set_metadata("invariant.load", empty)
        return ld

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
    return ary._getvalue()


def table_unpacker(layout):
    """An intrinsic ``unpack(table) -> E`` for an address table of rows ``(address, dim0, dim1,
    dim2, dim3)``; ``layout[i] = (name, dtype, ndim)`` of row ``i`` (the engine's:
    ``reinfors/jit/engine_schema.py``).

    ``E.name`` is ``carray(void_ptr(T[i, 0]), (T[i, 1], ...), dtype)`` of that row — a
    C-contiguous array without meminfo — built where it is read from invariant loads of the
    table (so repeated reads merge and leave loops).  ``E`` itself (:class:`EngineTable`) is the
    table's data pointer: typed as ONE call, free to copy into inlined callees, and no array of a
    row a kernel never reads is ever built.  The table must be a C-contiguous ``int64`` array
    with 5 columns.
    """
    tblty = EngineTable(layout)

    @intrinsic
    def unpack(typingctx, table):
        if not (isinstance(table, types.Array) and table.ndim == 2 and table.dtype == types.int64):
            return None
        sig = tblty(table)

        def codegen(context, builder, signature, args):
            return context.make_array(signature.args[0])(context, builder, args[0]).data

        return sig, codegen

    return unpack
