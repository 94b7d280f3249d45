"""Atomic operations on ``arr[idx]`` for nopython kernels, as Numba intrinsics over llvmlite.

Numba has no public CPU atomics.  These intrinsics emit LLVM ``cmpxchg`` / ``atomicrmw`` /
atomic ``load``/``store`` instructions on the address of one element of a 1-d, C-contiguous
integer array, so worker threads running ``nogil`` kernels can share control words (the arena's
packed ``closed:1 | cursor:31 | alias:32`` word, commit counters, ring cursors).

Every operation takes ``(arr, idx, ...)``:

============================  ===================================================  ========
function                      effect                                               ordering
============================  ===================================================  ========
``cas(arr, i, exp, new)``     if ``arr[i] == exp``: ``arr[i] = new``; returns old  seq_cst
``fetch_add(arr, i, v)``      ``arr[i] += v``; returns old (wraps)                 seq_cst
``fetch_sub(arr, i, v)``      ``arr[i] -= v``; returns old (wraps)                 seq_cst
``fetch_or(arr, i, v)``       ``arr[i] |= v``; returns old                         seq_cst
``fetch_and(arr, i, v)``      ``arr[i] &= v``; returns old                         seq_cst
``exchange(arr, i, v)``       ``arr[i] = v``; returns old                          seq_cst
``load_acquire(arr, i)``      returns ``arr[i]``                                   acquire
``store_release(arr, i, v)``  ``arr[i] = v``                                       release
``commit_release(arr, i, v)`` ``arr[i] += v`` (a release ``fetch_add``); old       release
============================  ===================================================  ========

Supported dtypes: int32, uint32, int64, uint64.  Arrays must be naturally aligned (NumPy's
allocations are); a misaligned atomic can fall back to split-lock traps (docs/architecture.md, "Thread roles").
Operands are cast to the array's dtype.  There is no bounds check: callers index within range.

Thread-safety contract: these are the only primitives that may touch a word other threads
write concurrently; plain loads and stores of such words are data races.
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic

__all__ = [
    "cas",
    "fetch_add",
    "fetch_sub",
    "fetch_or",
    "fetch_and",
    "exchange",
    "load_acquire",
    "store_release",
    "commit_release",
]

_ATOMIC_DTYPES = (types.int32, types.uint32, types.int64, types.uint64)


def _check_array(arr, idx):
    if not isinstance(arr, types.Array) or arr.ndim != 1 or arr.layout != "C":
        return False
    if arr.dtype not in _ATOMIC_DTYPES or not arr.mutable:
        return False
    return isinstance(idx, types.Integer)


def _element_ptr(context, builder, arrty, arr, idx, idxty):
    """Pointer to ``arr[idx]`` (no wraparound, no bounds check)."""
    ary = context.make_array(arrty)(context, builder, arr)
    idx = context.cast(builder, idx, idxty, types.intp)
    return cgutils.get_item_pointer(context, builder, arrty, ary, [idx], wraparound=False)


def _make_rmw(op: str, ordering: str, doc: str):
    @intrinsic
    def rmw(typingctx, arr, idx, value):
        if not _check_array(arr, idx) or not isinstance(value, types.Integer):
            return None
        sig = arr.dtype(arr, idx, value)

        def codegen(context, builder, signature, args):
            a, i, v = args
            ptr = _element_ptr(context, builder, signature.args[0], a, i, signature.args[1])
            v = context.cast(builder, v, signature.args[2], signature.args[0].dtype)
            return builder.atomic_rmw(op, ptr, v, ordering)

        return sig, codegen

    rmw.__doc__ = doc
    return rmw


fetch_add = _make_rmw("add", "seq_cst", "Atomically ``arr[idx] += value``; returns the old value.")
fetch_sub = _make_rmw("sub", "seq_cst", "Atomically ``arr[idx] -= value``; returns the old value.")
fetch_or = _make_rmw("or", "seq_cst", "Atomically ``arr[idx] |= value``; returns the old value.")
fetch_and = _make_rmw("and", "seq_cst", "Atomically ``arr[idx] &= value``; returns the old value.")
exchange = _make_rmw("xchg", "seq_cst", "Atomically replace ``arr[idx]`` with ``value``; returns the old value.")
commit_release = _make_rmw(
    "add", "release", "Release ``fetch_add``: publishes this thread's prior writes with the increment."
)


@intrinsic
def cas(typingctx, arr, idx, expected, desired):
    """Compare-and-swap ``arr[idx]``: store ``desired`` iff it equals ``expected``; return the old value.

    Success is ``cas(...) == expected``.
    """
    if not _check_array(arr, idx):
        return None
    if not isinstance(expected, types.Integer) or not isinstance(desired, types.Integer):
        return None
    sig = arr.dtype(arr, idx, expected, desired)

    def codegen(context, builder, signature, args):
        a, i, e, d = args
        dt = signature.args[0].dtype
        ptr = _element_ptr(context, builder, signature.args[0], a, i, signature.args[1])
        e = context.cast(builder, e, signature.args[2], dt)
        d = context.cast(builder, d, signature.args[3], dt)
        pair = builder.cmpxchg(ptr, e, d, "seq_cst", "seq_cst")
        return builder.extract_value(pair, 0)

    return sig, codegen


@intrinsic
def load_acquire(typingctx, arr, idx):
    """Acquire load of ``arr[idx]``: later reads see every write released before the matching store."""
    if not _check_array(arr, idx):
        return None
    sig = arr.dtype(arr, idx)

    def codegen(context, builder, signature, args):
        a, i = args
        dt = signature.args[0].dtype
        ptr = _element_ptr(context, builder, signature.args[0], a, i, signature.args[1])
        return builder.load_atomic(ptr, "acquire", context.get_abi_alignment(context.get_value_type(dt)))

    return sig, codegen


@intrinsic
def store_release(typingctx, arr, idx, value):
    """Release store ``arr[idx] = value``: publishes this thread's earlier writes."""
    if not _check_array(arr, idx) or not isinstance(value, types.Integer):
        return None
    sig = types.void(arr, idx, value)

    def codegen(context, builder, signature, args):
        a, i, v = args
        dt = signature.args[0].dtype
        ptr = _element_ptr(context, builder, signature.args[0], a, i, signature.args[1])
        v = context.cast(builder, v, signature.args[2], dt)
        builder.store_atomic(v, ptr, "release", context.get_abi_alignment(context.get_value_type(dt)))
        return context.get_dummy_value()

    return sig, codegen
