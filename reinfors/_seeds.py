"""Derived seeds: a stable 64-bit hash of int tuples (``reinfors.arena``'s ``_mix64`` in 0.4.0).

Every seed the Arena, its openings (``rf.starts``) and tournaments derive is ``_mix64`` of the
master seed and a few ints, so results never depend on ``PYTHONHASHSEED`` or the process.
"""

from __future__ import annotations

__all__ = ["_mix64"]

_U64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _mix64(*parts: int) -> int:
    """A stable 64-bit hash of an int tuple (SplitMix64 finalizer, applied twice).

    Used for every derived seed, so results do not depend on ``PYTHONHASHSEED`` or the process.
    Each part is folded in as its low 64 bits (``h = (h ^ p) * golden``).
    """
    h = 0
    for part in parts:
        if not isinstance(part, int) and hasattr(part, "__index__"):
            part = part.__index__()  # a numpy integer seed: Python ints, no uint64 overflow warning
        h = ((h ^ (part & _U64)) * _GOLDEN) & _U64
    for _round in range(2):
        h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & _U64
        h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & _U64
        h ^= h >> 31
    return h
