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
