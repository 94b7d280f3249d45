"""``rf.starts`` — opening generators for :class:`reinfors.Arena`.

An opening generator has ``generate(game, reward, seed) -> (EnvSnapshot, actions)``: the position
after the opening and the actions that led there.  The Arena restores the snapshot into both
games of a pair (seats swapped) and replays ``actions`` to external agents.
"""

from __future__ import annotations

from typing import Any

from ._runtime import budget
from ._seeds import _mix64
from .env import Env, EnvSnapshot

__all__ = ["RandomStartingMoves"]

_GROW_CHECK = 1 << 16  # openings longer than this check, at each doubling, that their list fits
_ACTION_BYTES = 8 + 32  # a list slot and an int object


class RandomStartingMoves:
    """Openings of ``n_moves`` uniformly drawn legal moves, reproducible from the seed.

    Both games of a pair restore the same snapshot, so they play from the same position and, in
    chance games, continue the same chance stream (duplicate format).  A draw whose moves end the
    game (or that ends exactly at a terminal) is redrawn, at most ``max_retries`` times; then
    ``generate`` raises ``ValueError``.

    Args:
        n_moves: random moves per opening (>= 1).
        max_retries: draws tried before ``generate`` gives up.

    Raises:
        ValueError: ``n_moves`` below 1.
    """

    def __init__(self, n_moves: int, max_retries: int = 32) -> None:
        if n_moves < 1:
            raise ValueError("n_moves must be >= 1")
        self.n_moves = n_moves
        self.max_retries = max_retries

    def generate(self, game: Any, reward: Any, seed: int) -> tuple[EnvSnapshot, list[int]]:
        """The opening for ``seed``.

        Args:
            game: the game.
            reward: reward weights, or ``None``.
            seed: the opening's seed (an Arena derives one per opening pair).

        Returns:
            ``(snapshot after the opening, its actions)``.

        Raises:
            ValueError: no live opening in ``max_retries`` draws (the game may be too short).
        """
        for attempt in range(self.max_retries):
            opening = self._draw(game, reward, seed, attempt)
            if opening is not None:
                return opening
        raise ValueError(
            f"could not draw a live {self.n_moves}-move opening in "
            f"{self.max_retries} attempts — the game may be too short"
        )

    def _draw(self, game: Any, reward: Any, seed: int, attempt: int) -> tuple[EnvSnapshot, list[int]] | None:
        """One attempt: None when the game ends during (or right at the end of) the opening."""
        env = Env(game, reward, seed=_mix64(seed, attempt))
        state = _mix64(seed, attempt, 1)
        actions: list[int] = []
        for ply in range(self.n_moves):
            if env.done():
                return None
            mover = env.active_agents()[0]
            legal = env.legal_actions(mover)
            state = _mix64(state, ply)
            action = legal[state % len(legal)]
            env.step({mover: action})
            if ply >= _GROW_CHECK and ply & (ply - 1) == 0:
                # the opening's action list doubles from here: bounded as it grows (a game
                # with a long enough horizon could otherwise take all memory)
                budget.require(budget.nbytes(2 * ply, itemsize=_ACTION_BYTES), "n_moves",
                               f"the action list of a {self.n_moves}-move opening", "use fewer n_moves")  # fmt: skip
            actions.append(action)
        if env.done():
            return None
        return env.snapshot(), actions
