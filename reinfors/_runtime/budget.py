"""The memory a composition preallocates, bounded before anything is allocated.

``preallocation(...)`` estimates, as plain integers, the dominant arrays a Runtime allocates on
its first collect (search trees, routed predictions and request rows, arenas and their span
tables, the inference cache); ``check(...)`` refuses with a ``MemoryError`` naming the parameter
that drives the largest part and the bytes, when the total exceeds the memory this process can
still get: ``MemAvailable`` and, under ``RLIMIT_AS`` (``ulimit -v``), the address space left.
Caps with 0.4.0's own wording (``n_games``, ``batch_size``, the 2**20 search knobs) are checked
at construction (``reinfors.engine``, ``composition``); this is the out-of-memory guard behind them.
"""

from __future__ import annotations

import math
import os
import resource
import time

_AVAIL_TTL_S = 0.25  # a reading of the memory left is reused this long (a pool grows every window)
_avail_cache: list = [float("-inf"), None]  # (monotonic time read, bytes)


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def available_bytes() -> int | None:
    """Bytes a new allocation can still get, or None when unknown (read at most every
    :data:`_AVAIL_TTL_S` seconds: ``/proc`` reads cost ~30 us, and the record pool grows in
    every window of a fast collect)."""
    now = time.monotonic()
    if now - _avail_cache[0] < _AVAIL_TTL_S:
        return _avail_cache[1]
    avail = _read_available()
    _avail_cache[0], _avail_cache[1] = now, avail
    return avail


def _read_available() -> int | None:
    out = []
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    out.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/status") as fh:
                vm = next(int(x.split()[1]) * 1024 for x in fh if x.startswith("VmSize:"))
            out.append(max(0, soft - vm))
    except (OSError, ValueError, StopIteration):
        pass
    return min(out) if out else None


def preallocation(*, n_games, n_players, obs_size, width, max_rows, batch, pad, tree_bytes, tree_knob, cache_bytes) -> dict:
    """``{part: (bytes, parameter)}`` of a Runtime's dominant first-collect arrays (estimates
    from above of ``runtime.py``'s shapes; every route counted, one per player)."""
    G, N, O = n_games, max(1, n_players), obs_size
    rows = G * max(N, max_rows)  # rows one route can have in flight
    cap = batch if pad else max(1, min(batch, rows))
    arenas = math.ceil(rows / cap) + 3
    return {
        "search trees": (tree_bytes, tree_knob),
        "routed predictions": (G * max(N, max_rows) * (8 * width + 16), tree_knob),
        "arenas": (N * arenas * cap * (4 * O + 32), "batch_size" if pad else "n_games"),
        "inference cache": (cache_bytes, "infer_cache"),
    }


def check(parts: dict, subject: str, hint: str | None = None) -> None:
    """Raise ``MemoryError`` when ``parts`` (``preallocation``) exceed the memory available."""
    need = sum(b for b, _ in parts.values())
    avail = available_bytes()
    if avail is None or need <= avail:
        return
    part, (b, param) = max(parts.items(), key=lambda kv: kv[1][0])
    raise MemoryError(
        f"{subject} would preallocate {need} bytes ({part}: {b} bytes, driven by {param}), more than the "
        f"{avail} bytes of memory available to this process; " + (hint or f"lower {param} or n_games")
    )


def check_growth(arrays: dict, names, rows: int, subject: str, *, axis: int = 0, param: str = "n_games",
                 hint: str = "lower n_games or collect smaller windows") -> None:
    """Refuse (``MemoryError``) growing the pools ``names`` of ``arrays`` to ``rows`` along ``axis``
    when the new arrays (and the old ones they are copied from) cannot fit.

    Args:
        arrays: The runtime's arrays by name.
        names: The arrays that grow together (the first one decides whether they grow).
        rows: Their new length along ``axis``.
        subject: What grows (named in the message).
        axis: The axis that grows (0: records; 1: a start buffer's states per slot).
        param: The parameter that drives the size (named in the message).
        hint: The advice ending the message.

    Raises:
        MemoryError: The grown arrays do not fit in the memory available.
    """
    first = arrays[names[0]]
    if rows <= first.shape[axis]:
        return
    row = sum(nbytes(*(d for k, d in enumerate(arrays[n].shape) if k != axis), itemsize=arrays[n].itemsize)
              for n in names)  # fmt: skip
    part = "record pool" if axis == 0 and param == "n_games" else "grown arrays"
    unit = "records" if axis == 0 else "rows"
    check({part: (nbytes(2, rows, row), param)}, f"growing {subject} to {rows} {unit}", hint)


SATURATED = 1 << 62  # byte counts saturate here: no size is computed as a huge integer


def nbytes(*dims: int, itemsize: int = 1) -> int:
    """Bytes of an array of shape ``dims`` and ``itemsize``, as a plain integer saturated at
    :data:`SATURATED` (overflow-safe: no int64 wrap, no integer of thousands of digits).

    Args:
        *dims: The array's dimensions (non-negative integers).
        itemsize: Bytes per element.

    Returns:
        ``itemsize * prod(dims)``, or ``SATURATED`` when that is larger.
    """
    out = int(itemsize)
    for d in dims:
        d = max(0, int(d))
        if d == 0:
            return 0
        out = SATURATED if out > SATURATED // d else out * d
    return min(out, SATURATED)


def total(*parts: int) -> int:
    """Sum of byte counts, saturated at :data:`SATURATED`.

    Args:
        *parts: Byte counts (non-negative integers).

    Returns:
        The sum, or ``SATURATED`` when that is larger.
    """
    out = 0
    for p in parts:
        out = min(SATURATED, out + max(0, int(p)))
    return out


def require(need: int, param: str, subject: str, hint: str | None = None, part: str | None = None) -> None:
    """Refuse (``MemoryError`` naming ``param`` and the bytes) allocating ``need`` bytes for
    ``subject`` when they exceed the memory this process can still get (:func:`available_bytes`).

    Args:
        need: Bytes the allocation will take (see :func:`nbytes`, :func:`total`).
        param: The parameter that drives the size (named in the message).
        subject: What would be allocated (named in the message).
        hint: The advice ending the message (default: lower ``param``).
        part: The name of the part (default ``subject``).

    Raises:
        MemoryError: ``need`` is more than the memory available.
    """
    check({part or subject: (need, param)}, subject, hint)


def rows_that_fit(row_bytes: int, reserve: int = 0) -> int:
    """How many rows of ``row_bytes`` the memory still available holds beside ``reserve`` bytes
    (``SATURATED`` when the available memory is unknown): the bound of a structure that grows
    inside a kernel, computed before the kernel runs.

    Args:
        row_bytes: Bytes per row (positive).
        reserve: Bytes to leave for other allocations.

    Returns:
        The number of rows (at least 0).
    """
    avail = available_bytes()
    if avail is None:
        return SATURATED
    return max(0, avail - max(0, int(reserve))) // max(1, int(row_bytes))
