"""Canonical JSON bytes and fingerprints, byte-compatible with reinfors 0.4.0.

The original hashes ``serde_json`` output of its resolved configs: object keys sorted, no
whitespace, ``null``/``true``/``false``, integers as integers and floats in Rust's shortest
round-trip form — plain decimal when the decimal exponent lies in ``[-5, 15]`` (``0.00001``,
``1000000000000000.0``), exponent form otherwise (``1e-6``, ``1.5e+16``).  Python's ``json``
writes ``1e-05``; this module writes what the original writes, so fingerprints agree.
"""

from __future__ import annotations

import decimal
import hashlib
import json
import math

__all__ = ["dumps", "fingerprint", "format_float"]


def format_float(x: float) -> str:
    """Rust/serde formatting of a finite float (shortest round-trip digits)."""
    if not math.isfinite(x):
        raise ValueError(f"non-finite float {x!r} has no canonical JSON form")
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign, digits, exp = decimal.Decimal(repr(x)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    exp += len("".join(map(str, digits))) - len(ds)
    e10 = len(ds) - 1 + exp  # decimal exponent of the leading digit
    neg = "-" if sign else ""
    if -5 <= e10 <= 15:
        if exp >= 0:
            return f"{neg}{ds}{'0' * exp}.0"
        point = len(ds) + exp
        if point > 0:
            return f"{neg}{ds[:point]}.{ds[point:]}"
        return f"{neg}0.{'0' * -point}{ds}"
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    return f"{neg}{mant}e{'+' if e10 >= 0 else '-'}{abs(e10)}"


def _write(x, out: list) -> None:
    if x is None:
        out.append("null")
    elif x is True:
        out.append("true")
    elif x is False:
        out.append("false")
    elif isinstance(x, int):
        out.append(str(int(x)))
    elif isinstance(x, float):
        out.append(format_float(x))
    elif isinstance(x, str):
        out.append(json.dumps(x, ensure_ascii=False))
    elif isinstance(x, dict):
        out.append("{")
        for i, k in enumerate(sorted(x)):
            if i:
                out.append(",")
            out.append(json.dumps(str(k), ensure_ascii=False))
            out.append(":")
            _write(x[k], out)
        out.append("}")
    elif isinstance(x, (list, tuple)):
        out.append("[")
        for i, v in enumerate(x):
            if i:
                out.append(",")
            _write(v, out)
        out.append("]")
    else:
        raise TypeError(f"cannot canonicalise {type(x).__name__}")


def dumps(x) -> str:
    """Canonical JSON text of ``x`` (dict keys sorted, no whitespace, Rust float form)."""
    out: list = []
    _write(x, out)
    return "".join(out)


def fingerprint(x) -> str:
    """SHA-256 (64 lowercase hex chars) of the canonical JSON bytes of ``x``."""
    return hashlib.sha256(dumps(x).encode("utf-8")).hexdigest()
