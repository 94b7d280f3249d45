"""Routes: inference destinations, callback invocation and output validation (contract §11b).

A route is one callback: the shared ``infer`` or, for a sequence of per-player callables, one per
player.  Validation happens once per fire on whole arrays (never per row); float32 outputs widen
exactly to float64 (``astype`` of float32 values is exact), so batches are bit-identical to
float64 outputs of the same values.
"""

from __future__ import annotations

import numpy as np

from reinfors._validate import sequence_or_none

__all__ = ["resolve_infer", "QValidator", "PVValidator"]


def resolve_infer(infer, n_players: int) -> list:
    """``infer`` as a list of callables: one shared, or one per player."""
    if callable(infer):
        return [infer]
    fns = sequence_or_none(infer)  # PyO3's Vec extraction
    if fns is None:
        raise TypeError("infer must be a callable or a sequence of per-player callables")
    for i, f in enumerate(fns):
        if not callable(f):
            raise TypeError(f"per-player infer element {i} is not callable")
    if len(fns) != n_players:
        raise ValueError(f"expected {n_players} per-player infer callables (one per player), got {len(fns)}")
    return fns


def _dtype_check(x, what: str):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{what} must be a float64 or float32 ndarray; got type {type(x).__name__}")
    if x.dtype != np.float64 and x.dtype != np.float32:
        raise TypeError(f"{what} must be a float64 or float32 ndarray; got dtype {x.dtype}")


def _finite(x, what: str):
    # Fast path: a finite sum proves every element finite (any inf / nan makes the sum inf /
    # nan), with one reduction and no temporary; a non-finite sum (which a finite overflow can
    # also give) falls back to the elementwise test, so the outcome is the elementwise one.
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add.reduce(x, axis=None)
    if np.isfinite(total):
        return
    if not np.isfinite(x).all():
        raise ValueError(f"{what} outputs must contain only finite values")


class QValidator:
    """Q-family output ``(rows, n_heads, A)`` → prediction rows ``(rows, n_heads * A)`` float64."""

    def __init__(self, n_heads: int, n_actions: int):
        self.n_heads, self.n_actions = n_heads, n_actions
        self.width = n_heads * n_actions

    def __call__(self, out, rows: int) -> np.ndarray:
        _dtype_check(out, "infer output")
        if out.ndim != 3:
            raise TypeError(f"infer output must be a 3-d ndarray; got {out.ndim}-d")
        if out.shape != (rows, self.n_heads, self.n_actions):
            raise ValueError(
                f"infer returned shape {list(out.shape)} for {rows} rows; "
                f"expected ({rows}, n_heads = {self.n_heads}, {self.n_actions})"
            )
        _finite(out, "infer")
        return np.ascontiguousarray(out, dtype=np.float64).reshape(rows, self.width)


class PVValidator:
    """``(policy_logits (rows, >= A), values (rows,))`` → rows ``[logits[:, :A] | value]`` float64."""

    def __init__(self, n_actions: int, label: str):
        self.n_actions = n_actions
        self.label = label  # "AlphaZero" / "Ppo"
        self.width = n_actions + 1

    def __call__(self, out, rows: int) -> np.ndarray:
        label = self.label
        if not isinstance(out, tuple):
            raise TypeError(f"{label} infer must return a (policy_logits, values) tuple; got {type(out).__name__}")
        if len(out) != 2:
            raise TypeError(
                f"{label} infer must return a (policy_logits, values) tuple; got a {len(out)}-element tuple"
            )
        logits, values = out
        _dtype_check(logits, f"{label} infer policy_logits")
        _dtype_check(values, f"{label} infer values")
        if logits.ndim != 2:
            raise TypeError(f"{label} infer policy_logits must be a 2-d ndarray; got {logits.ndim}-d")
        if values.ndim != 1:
            raise TypeError(f"{label} infer values must be a 1-d ndarray; got {values.ndim}-d")
        if logits.shape[0] != rows or logits.shape[1] < self.n_actions or values.shape[0] != rows:
            raise ValueError(
                f"{label} infer must return (policy_logits ({rows}, >={self.n_actions}), values ({rows},)); "
                f"got logits {list(logits.shape)} and values {tuple(values.shape)}"
            )
        pred = np.empty((rows, self.width), np.float64)
        pred[:, : self.n_actions] = logits[:, : self.n_actions]
        pred[:, self.n_actions] = values
        _finite(pred, f"{label} infer")
        return pred
