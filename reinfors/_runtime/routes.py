"""Routes: inference destinations, callback invocation and output validation (contract §11b).

A route is one callback: the shared ``infer`` or, for a sequence of per-player callables, one per
player.  Validation happens once per fire on whole arrays (never per row); the outputs are
widened to float64 and checked for finiteness in one kernel pass (``reinfors/jit/outputs.py``)
into a prediction buffer each validator keeps between fires.  float32 outputs widen exactly, so
batches are bit-identical to float64 outputs of the same values.
"""

from __future__ import annotations

import numpy as np

from reinfors._validate import sequence_or_none
from reinfors.jit import outputs as _outputs

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


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)  # (a dtype compares faster with a dtype than a type)


def _dtype_check(x, what: str, field: str = ""):
    """``what`` (and ``field``, joined by a space) names the array in the error."""
    if isinstance(x, np.ndarray) and (x.dtype == _F32 or x.dtype == _F64):
        return
    what = f"{what} {field}" if field else what
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{what} must be a float64 or float32 ndarray; got type {type(x).__name__}")
    raise TypeError(f"{what} must be a float64 or float32 ndarray; got dtype {x.dtype}")


class _Rows:
    """A float64 ``[rows, width]`` prediction buffer kept between fires (grown by doubling).
    The rows it returns are valid until the next call: the engine copies them into its slots'
    prediction rows at once (``finish_fire``)."""

    def __init__(self, width: int):
        self.width = width
        self.buf = np.empty((0, width), np.float64)

    def take(self, rows: int) -> np.ndarray:
        if self.buf.shape[0] < rows:
            self.buf = np.empty((max(rows, 2 * self.buf.shape[0]), self.width), np.float64)
        return self.buf[:rows]


class _Validator:
    """What every validator hands ``finish_fire`` besides its prediction rows: ``raw``, the
    ``(address, rows, row stride)`` of float32 logits that the engine reads in place (all zero:
    none, the rows are complete), and the array behind it, held until :meth:`release`."""

    def __init__(self):
        self.raw = np.zeros(3, np.int64)
        self._held = None

    @property
    def held(self):
        """The outputs ``raw`` addresses (None: none)."""
        return self._held

    def release(self) -> None:
        """The engine has routed the last fire's rows: drop the outputs and the address (set
        only together with ``_held``)."""
        if self._held is not None:
            self._held = None
            self.raw.fill(0)

    def clone(self):
        """A validator of the same outputs with buffers of its own (a pipelined window keeps two
        calls' predictions at once)."""
        raise NotImplementedError


class QValidator(_Validator):
    """Q-family output ``(rows, n_heads, A)`` → prediction rows ``(rows, n_heads * A)`` float64."""

    def __init__(self, n_heads: int, n_actions: int):
        super().__init__()
        self.n_heads, self.n_actions = n_heads, n_actions
        self.width = n_heads * n_actions
        self._rows = _Rows(self.width)

    def clone(self) -> QValidator:
        return QValidator(self.n_heads, self.n_actions)

    def __call__(self, out, rows: int) -> np.ndarray:
        _dtype_check(out, "infer output")
        if out.ndim != 3:
            raise TypeError(f"infer output must be a 3-d ndarray; got {out.ndim}-d")
        if out.shape != (rows, self.n_heads, self.n_actions):
            raise ValueError(
                f"infer returned shape {list(out.shape)} for {rows} rows; "
                f"expected ({rows}, n_heads = {self.n_heads}, {self.n_actions})"
            )
        pred = self._rows.take(rows)
        if not _outputs.widen_rows(out.reshape(rows, self.width), self.width, pred, 0):
            raise ValueError("infer outputs must contain only finite values")
        return pred


class PVValidator(_Validator):
    """``(policy_logits (rows, >= A), values (rows,))`` → rows ``[logits[:, :A] | value]`` float64.

    With ``in_place`` (the engine without an inference cache) float32 logits whose rows are
    contiguous are checked where they are and read by the engine in place (``raw``): only the
    value column is widened into the rows, and the engine widens just the logits it stores (a
    tree node's legal actions).  The result is the same; the full-width copy is not made."""

    def __init__(self, n_actions: int, label: str, in_place: bool = False):
        super().__init__()
        self.n_actions = n_actions
        self.label = label  # "AlphaZero" / "Ppo"
        self.width = n_actions + 1
        self.in_place = in_place
        self._rows = _Rows(self.width)

    def clone(self) -> PVValidator:
        return PVValidator(self.n_actions, self.label, self.in_place)

    def __call__(self, out, rows: int) -> np.ndarray:
        label = self.label
        if not isinstance(out, tuple):
            raise TypeError(f"{label} infer must return a (policy_logits, values) tuple; got {type(out).__name__}")
        if len(out) != 2:
            raise TypeError(
                f"{label} infer must return a (policy_logits, values) tuple; got a {len(out)}-element tuple"
            )
        logits, values = out
        _dtype_check(logits, label, "infer policy_logits")
        _dtype_check(values, label, "infer values")
        if logits.ndim != 2:
            raise TypeError(f"{label} infer policy_logits must be a 2-d ndarray; got {logits.ndim}-d")
        if values.ndim != 1:
            raise TypeError(f"{label} infer values must be a 1-d ndarray; got {values.ndim}-d")
        if logits.shape[0] != rows or logits.shape[1] < self.n_actions or values.shape[0] != rows:
            raise ValueError(
                f"{label} infer must return (policy_logits ({rows}, >={self.n_actions}), values ({rows},)); "
                f"got logits {list(logits.shape)} and values {tuple(values.shape)}"
            )
        pred = self._rows.take(rows)
        A = self.n_actions
        st = logits.strides
        if self.in_place and logits.dtype == _F32 and st[1] == 4 and st[0] >= 4 * A and st[0] % 4 == 0:
            finite = _outputs.finite_cols_values(logits, A, values, pred, self.raw)
            self._held = logits
        else:
            finite = _outputs.widen_rows(logits, A, pred, 0)
            finite = _outputs.widen_rows(values.reshape(rows, 1), 1, pred, A) and finite
        if not finite:
            raise ValueError(f"{label} infer outputs must contain only finite values")
        return pred
