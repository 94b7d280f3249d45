"""``rf.encoders`` — observation-encoder handles, passed to a game constructor's ``encoder=``.

An encoder is a view of a game's state: the game owns dynamics, the encoder owns representation.
Every game constructor accepts one and defaults to the game's standard view.  Encoders are
game-specific: an encoder for another game is a ``ValueError``.  ``make`` / ``registered`` are the
name-addressable form.
"""

from __future__ import annotations

import importlib

from ._registry import registry
from ._validate import as_unsigned

__all__ = ["EncoderHandle", "Connect4", "GridWorld", "Snake", "KuhnPoker", "Backgammon", "make", "registered"]

_CATALOGUE_ENCODERS = "https://jeepjeepjeep.github.io/reinfors/catalogue/games/#observation-encoders"

# registry name -> (game name, module import path, attribute of the encode function)
_BUILTIN = {
    "connect4": ("connect4", "reinfors.jit.games.connect4"),
    "gridworld": ("gridworld", "reinfors.jit.games.gridworld"),
    "snake": ("snake", "reinfors.jit.games.snake"),
    "kuhn_poker": ("kuhn_poker", "reinfors.jit.games.kuhn_poker"),
    "backgammon": ("backgammon", "reinfors.jit.games.backgammon"),
}


class EncoderHandle:
    """An observation view of one game (opaque; pass it to the game constructor's ``encoder=``)."""

    __slots__ = ("_name", "_game", "_module", "_custom")

    def __init__(self, name: str, game: str, module: str | None = None, custom=None):
        self._name = name
        self._game = game
        self._module = module
        self._custom = custom  # (encode, obs_shape, low, high, n_actions) for user-defined encoders

    @property
    def name(self) -> str:
        """The encoder's registry name."""
        return self._name

    def _parts(self):
        """``(encode njit fn, obs_shape(params) fn, low, high)`` of this encoder."""
        if self._custom is not None:
            return self._custom[:4]
        mod = importlib.import_module(self._module)
        return mod.ENCODERS[self._name]

    def _check_game(self, game_name: str) -> None:
        if game_name != self._game:
            raise ValueError(f'incompatible encoder "{self._name}" for game "{game_name}"; see {_CATALOGUE_ENCODERS}')

    def _config(self) -> dict:
        return {"name": self._name}

    def head_index(self, action: int, agent: int) -> int:
        """Network head index of game action ``action`` for ``agent`` (identity for these encoders)."""
        return self._map("action", action, agent)

    def game_action(self, head: int, agent: int) -> int:
        """Game action of network head ``head`` for ``agent`` (identity for these encoders)."""
        return self._map("head", head, agent)

    def _map(self, label, value, agent) -> int:
        a = as_unsigned(label, value)
        as_unsigned("agent", agent)
        n = self._n_actions()
        if a >= n:
            raise ValueError(f"{label} {a} out of range for the {n}-action {self._name} encoding")
        return a

    def _n_actions(self) -> int:
        if self._custom is not None:
            return self._custom[4]
        return importlib.import_module(self._module).N_ACTIONS

    def __repr__(self) -> str:
        return f"EncoderHandle({self._name!r})"

    @staticmethod
    def Connect4() -> EncoderHandle:
        """Connect 4 planes ``(2, 6, 7)``."""
        return _builtin("connect4")

    @staticmethod
    def GridWorld() -> EncoderHandle:
        """GridWorld planes ``(2, size, size)``."""
        return _builtin("gridworld")

    @staticmethod
    def Snake() -> EncoderHandle:
        """Snake planes ``(5, grid_size, grid_size)``."""
        return _builtin("snake")

    @staticmethod
    def KuhnPoker() -> EncoderHandle:
        """Kuhn poker vector ``(3 * players, 1, 1)``."""
        return _builtin("kuhn_poker")

    @staticmethod
    def Backgammon() -> EncoderHandle:
        """OpenSpiel's backgammon observation tensor ``(200, 1, 1)``."""
        return _builtin("backgammon")


def _builtin(name: str) -> EncoderHandle:
    game, module = _BUILTIN[name]
    return EncoderHandle(name, game, module)


Connect4 = EncoderHandle.Connect4
GridWorld = EncoderHandle.GridWorld
Snake = EncoderHandle.Snake
KuhnPoker = EncoderHandle.KuhnPoker
Backgammon = EncoderHandle.Backgammon

_REGISTRY = {"connect4": Connect4, "gridworld": GridWorld, "snake": Snake, "kuhn_poker": KuhnPoker}
_REGISTRY["backgammon"] = Backgammon


registered, make = registry("encoder", _REGISTRY)
