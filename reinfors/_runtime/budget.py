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
import resource
import time

_AVAIL_TTL_S = 0.25  # a reading of the memory left is reused this long (a pool grows every window)
_avail_cache: list = [float("-inf"), None]  # (monotonic time read, bytes)


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


def check_growth(arrays: dict, names, rows: int, subject: str) -> None:
    """Refuse (``MemoryError``) growing the row pools ``names`` of ``arrays`` to ``rows`` rows when
    the new arrays (and the old ones they are copied from) cannot fit."""
    row = sum(arrays[n].itemsize * math.prod(arrays[n].shape[1:]) for n in names)
    grow = sum(max(0, rows - arrays[n].shape[0]) for n in names[:1])
    if grow == 0:
        return
    check({"record pool": (2 * rows * row, "n_games")}, f"growing {subject} to {rows} records",
          "lower n_games or collect smaller windows")  # fmt: skip
