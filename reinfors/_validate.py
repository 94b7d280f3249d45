"""Argument conversion with the original's error types and wording.

reinfors 0.4.0 converts Python arguments the way PyO3 does: a negative int into an unsigned
parameter is an ``OverflowError`` ("can't convert negative int to unsigned"), an int past the
type's range is ``OverflowError`` ("int too big to convert" / "out of range ..."), a float where
an int is expected is a ``TypeError`` naming the argument, ``bool`` counts as an int.  Every
public entry point of this package converts through these helpers, so users see the same
exceptions whichever build they run.
"""

from __future__ import annotations

import math
import numbers
import operator

import numpy as np

U64_MAX = 2**64 - 1


def _index(name: str, value) -> int:
    if isinstance(value, (float, np.floating)):
        raise TypeError(f"argument '{name}': '{type(value).__name__}' object cannot be interpreted as an integer")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"argument '{name}': '{type(value).__name__}' object cannot be interpreted as an integer"
        ) from None


def as_unsigned(name: str, value, bits: int = 64) -> int:
    """Convert to a non-negative int of ``bits`` bits (u64, u32, ...)."""
    v = _index(name, value)
    if v < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if v >= 2**bits:
        raise OverflowError(
            "int too big to convert" if bits == 64 else "out of range integral type conversion attempted"
        )
    return v


def as_signed(name: str, value, bits: int = 32) -> int:
    """Convert to a signed int of ``bits`` bits (i32, i64), with PyO3's overflow messages (past a
    C long: "Python int too large to convert to C long")."""
    v = _index(name, value)
    if not -(2**63) <= v < 2**63:
        raise OverflowError("Python int too large to convert to C long")
    if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
        raise OverflowError("out of range integral type conversion attempted")
    return v


def as_float(name: str, value, *, finite: bool = True) -> float:
    """Convert a real number (int, float, numpy scalar; not str) to float; reject NaN/inf."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"argument '{name}': must be real number, not {type(value).__name__}")
    v = float(value)
    if finite and not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {_fmt_nonfinite(v)}")
    return v


def _fmt_nonfinite(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    return "inf" if v > 0 else "-inf"


def as_bool(name: str, value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"argument '{name}': '{type(value).__name__}' object cannot be converted to 'PyBool'")


def unit_interval(name: str, value) -> float:
    """A float in ``[0, 1]`` (NaN and inf rejected with the same message, as the original)."""
    v = as_float(name, value, finite=False)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must be in [0, 1]")
    return v


def nonneg_finite(name: str, value) -> float:
    """A finite float ``>= 0``."""
    v = as_float(name, value, finite=False)
    if not (math.isfinite(v) and v >= 0.0):
        raise ValueError(f"{name} must be finite and >= 0")
    return v


def fmt_nonfinite(v: float) -> str:
    return _fmt_nonfinite(v)
