"""Argument conversion with the original's error types and wording.

reinfors 0.4.0 converts Python arguments the way PyO3 does: a negative int into an unsigned
parameter is an ``OverflowError`` ("can't convert negative int to unsigned"), an int past the
type's range is ``OverflowError`` ("int too big to convert" / "out of range ..."), a float where
an int is expected is a ``TypeError`` naming the argument, ``bool`` counts as an int.  Every
public entry point of this package converts through these helpers, so users see the same
exceptions whichever build they run.
"""

from __future__ import annotations

import ctypes
import math
import operator

import numpy as np

U64_MAX = 2**64 - 1


def _index(name: str, value) -> int:
    """``operator.index`` as PyO3 calls it: CPython's own message (``'numpy.float32' object cannot
    be interpreted as an integer``, numpy's ``only integer scalar arrays ...``) after the argument."""
    try:
        return operator.index(value)
    except TypeError as e:
        raise TypeError(f"argument '{name}': {e}") from None


def tp_name(value) -> str:
    """CPython's ``tp_name`` of ``type(value)`` (``int``, ``numpy.int64``), as its messages print it."""
    t = type(value)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def rust_debug(s: str) -> str:
    """``s`` quoted as Rust's ``{:?}`` prints a string (the original's messages): ``"\\0"`` for NUL."""
    out = []
    for ch in s:
        if ch in "\\\"":
            out.append("\\" + ch)
        elif ch == "\0":
            out.append("\\0")
        elif ch in "\t\r\n":
            out.append({"\t": "\\t", "\r": "\\r", "\n": "\\n"}[ch])
        elif not ch.isprintable():
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def refuse_pickle(self, protocol=None):
    """``__reduce_ex__`` of the public classes: like 0.4.0's PyO3 classes they cannot be pickled
    (snapshots travel as ``to_bytes()``, configs as ``resolved_config()``)."""
    raise TypeError(f"cannot pickle 'builtins.{type(self).__name__}' object")


def c_long_then_u32(name: str, value) -> int:
    """PyO3's ``u32`` through a C long (``temperature_drop``): past a C long "Python int too large to
    convert to C long", else outside ``[0, 2^32)`` "out of range integral type conversion attempted"."""
    v = as_signed(name, value, 64)
    if not 0 <= v < 2**32:
        raise OverflowError("out of range integral type conversion attempted")
    return v


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
    t = type(value)
    if isinstance(value, (str, bytes)) or not (hasattr(t, "__float__") or hasattr(t, "__index__")):
        raise TypeError(f"argument '{name}': must be real number, not {tp_name(value)}")
    try:  # PyFloat_AsDouble: ``__float__`` (a 0-d ndarray converts; numpy words the rest)
        v = float(value)
    except TypeError as e:
        raise TypeError(f"argument '{name}': {e}") from None
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


_PySequence_Check = ctypes.pythonapi.PySequence_Check
_PySequence_Check.argtypes, _PySequence_Check.restype = [ctypes.py_object], ctypes.c_int


def _is_sequence(value) -> bool:
    """``PySequence_Check``: what PyO3 requires before extracting a ``Vec``."""
    return bool(_PySequence_Check(value))


def as_sequence(name: str, value) -> list:
    """``value`` as PyO3's ``Vec<_>`` extraction sees it, with its messages naming ``name``."""
    if isinstance(value, str):
        raise TypeError(f"argument '{name}': Can't extract `str` to `Vec`")
    if not _is_sequence(value):
        raise TypeError(f"argument '{name}': '{type(value).__name__}' object cannot be converted to 'Sequence'")
    try:
        return list(value)
    except TypeError as e:  # a 0-d ndarray passes PySequence_Check but does not iterate
        raise TypeError(f"argument '{name}': {e}") from None


def sequence_or_none(value) -> list | None:
    """``value`` as a list where :func:`as_sequence` accepts it, else None (for callers with a
    message of their own)."""
    try:
        return as_sequence("", value)
    except TypeError:
        return None
