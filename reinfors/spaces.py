"""``rf.spaces`` — observation/action space descriptors a game advertises.

Query a game handle for them (``game.observation_space()`` / ``game.action_space()``) to size a
network without hard-coding a game's dimensions::

    game = rf.games.Snake(grid_size=20)
    obs_shape, n_actions = game.observation_space().shape, game.action_space().n

``Box`` mirrors Gymnasium's: ``shape`` is the contract; ``low`` / ``high`` are float32 arrays of
the full shape.  ``Discrete`` is a choice from ``0 .. n - 1``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Box", "Discrete"]


class Box:
    """A box of float32 observations: ``shape``, ``low`` and ``high`` (arrays of ``shape``).

    The engine hands the callback observations flattened to ``(rows, prod(shape))``; ``shape`` is
    the unflattened layout (e.g. Connect4's ``(2, 6, 7)``: planes, rows, columns).

    Args:
        shape: the observation's dimensions (a sequence of ints).
        low: the lower bound of every element.
        high: the upper bound of every element.
    """

    __slots__ = ("_shape", "_low", "_high")

    def __init__(self, shape: tuple[int, ...], low: float = 0.0, high: float = 1.0):
        self._shape = tuple(int(d) for d in shape)
        self._low = np.full(self._shape, low, dtype=np.float32)
        self._high = np.full(self._shape, high, dtype=np.float32)

    @property
    def shape(self) -> tuple:
        """The observation's dimensions (a tuple of ints)."""
        return self._shape

    @property
    def low(self) -> np.ndarray:
        """float32 array of ``shape``: each element's lower bound (a fresh copy)."""
        return self._low.copy()

    @property
    def high(self) -> np.ndarray:
        """float32 array of ``shape``: each element's upper bound (a fresh copy)."""
        return self._high.copy()

    def __repr__(self) -> str:
        return f"Box(shape={list(self._shape)})"


class Discrete:
    """A choice of one action id in ``0 .. n - 1``.

    Args:
        n: the number of actions (the width of the policy head).
    """

    __slots__ = ("_n",)

    def __init__(self, n: int):
        self._n = int(n)

    @property
    def n(self) -> int:
        """The number of actions."""
        return self._n

    def __repr__(self) -> str:
        return f"Discrete(n={self._n})"
