"""``rf.Reward`` — named reward weights, validated against a game's event keys when attached."""

from __future__ import annotations

import math

from ._validate import as_float, fmt_nonfinite, refuse_pickle

__all__ = ["Reward"]


class Reward:
    """A generic named-weight reward: ``Reward(win=1.0, loss=-1.0)``.

    Each game emits events under its own keys (see ``rf.catalog`` or the game's
    ``REWARD_KEYS``); the weight of a key the Reward omits is the game's default.  Keys are checked
    when the reward is attached to a game (``Env`` / ``Engine``): an unknown key is a
    ``ValueError`` listing the valid ones.  Weights must be finite real numbers.

    A step's reward for an agent is the weighted sum of the event amounts the game emitted for
    it: ``sum(weight[key] * amount[agent, key])``.  ``Reward()`` (or ``reward=None``) uses the
    game's defaults for every key.

    Args:
        **weights: ``key=weight`` pairs, e.g. ``win=1.0, loss=-1.0, draw=0.0`` for Connect4 or
            ``step=-0.01, goal=1.0`` for GridWorld.

    Raises:
        TypeError: a weight that is not a real number.
        ValueError: a NaN or infinite weight (``reward weight "win" must be finite, got inf``);
            when attached to a game, an unknown key (``unknown reward key "x"; valid keys for
            this game: [...]``).
    """

    __slots__ = ("_weights",)

    def __init__(self, **weights: float) -> None:
        clean = {}
        for key, value in weights.items():
            v = as_float("weights", value, finite=False)  # PyO3's f64 extraction (0-d arrays convert)
            if not math.isfinite(v):
                raise ValueError(f'reward weight "{key}" must be finite, got {fmt_nonfinite(v)}')
            clean[key] = v
        self._weights = clean

    def _resolve(self, keys, defaults) -> dict:
        """Full ``{key: weight}`` for a game with ``keys``/``defaults``; ValueError on unknown keys."""
        for key in self._weights:
            if key not in keys:
                valid = ", ".join(f'"{k}"' for k in keys)
                raise ValueError(f'unknown reward key "{key}"; valid keys for this game: [{valid}]')
        return {k: self._weights.get(k, d) for k, d in zip(keys, defaults, strict=True)}

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._weights.items())
        return f"Reward({inner})"

# not picklable, as 0.4.0 (tests/reliability/test_no_pickle.py)
Reward.__reduce_ex__ = refuse_pickle
