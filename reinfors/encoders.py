"""``rf.encoders`` — observation-encoder handles, passed to a game constructor's ``encoder=``.

An encoder is a view of a game's state: the game owns dynamics, the encoder owns representation.
Every game constructor accepts one and defaults to the game's standard view.  Encoders are
game-specific: an encoder for another game is a ``ValueError``.  ``make`` / ``registered`` are the
name-addressable form.
"""

from __future__ import annotations

import importlib

from ._registry import registry as _registry
from ._validate import as_unsigned as _as_unsigned
from ._validate import refuse_pickle as _refuse_pickle
from .catalog import ENCODERS  # the registered names (0.4.0 exports it here too)

__all__ = [
    "EncoderHandle", "Connect4", "GridWorld", "Snake", "KuhnPoker", "LeducPoker", "TexasHoldem",
    "MinimalChess", "RelativeChess", "OpenSpielChess", "AlphaZeroChess", "Backgammon", "make", "registered",
    "ENCODERS",
]  # fmt: skip

_CATALOGUE_ENCODERS = "https://jeepjeepjeep.github.io/reinfors/catalogue/games/#observation-encoders"

# _registry name -> (game name, module import path, attribute of the encode function)
_BUILTIN = {
    "connect4": ("connect4", "reinfors.jit.games.connect4"),
    "gridworld": ("gridworld", "reinfors.jit.games.gridworld"),
    "snake": ("snake", "reinfors.jit.games.snake"),
    "kuhn_poker": ("kuhn_poker", "reinfors.jit.games.kuhn_poker"),
    "texas_holdem": ("texas_holdem", "reinfors.jit.games.texas_holdem"),
    "leduc_poker": ("leduc_poker", "reinfors.jit.games.leduc_poker"),
    "minimal_chess": ("chess", "reinfors.jit.games.chess"),
    "relative_chess": ("chess", "reinfors.jit.games.chess"),
    "openspiel_chess": ("chess", "reinfors.jit.games.chess"),
    "alphazero_chess": ("chess", "reinfors.jit.games.chess"),
    "backgammon": ("backgammon", "reinfors.jit.games.backgammon"),
    "car_racing_pixels": ("car_racing", "reinfors.jit.games.car_racing"),
    "car_racing_vec": ("car_racing", "reinfors.jit.games.car_racing"),
}


class EncoderHandle:
    """An observation view of one game (opaque; pass it to the game constructor's ``encoder=``).

    Build one with the static constructors (``rf.encoders.RelativeChess()``, ...) or by name with
    ``rf.encoders.make(name)``.  The encoder fixes the observation's shape (the game's
    ``observation_space()``) and the *head frame*: the order of the policy head's outputs.  For
    most encoders the head frame is the game's action ids; encoders with a head map (e.g.
    ``RelativeChess``, which mirrors the board for agent 1) translate with :meth:`head_index` and
    :meth:`game_action`.  Batches and callbacks always use the head frame.

    Example::

        game = rf.games.Chess(encoder=rf.encoders.RelativeChess())
    """

    __slots__ = ("_name", "_game", "_module", "_custom", "_options")

    def __init__(
        self, name: str, game: str, module: str | None = None, custom: tuple | None = None, options: dict | None = None
    ):
        """Internal: build one with the static constructors or :func:`make`.

        Args:
            name: the registry name (``"connect4"``, ``"relative_chess"``, ...).
            game: the registry name of the game it encodes.
            module: the import path of the built-in game module that holds its kernels.
            custom: ``(encode, obs_shape, low, high, n_actions)`` of a user-defined encoder.
            options: encoder parameters (e.g. ``history_length``).
        """
        self._name = name
        self._game = game
        self._module = module
        self._custom = custom  # (encode, obs_shape, low, high, n_actions) for user-defined encoders
        self._options = dict(options or {})  # encoder parameters (resolved config, game params)

    @property
    def name(self) -> str:
        """The encoder's _registry name."""
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
        return dict(sorted({"name": self._name, **self._options}.items()))

    def _game_params(self) -> dict:
        """Extra game parameters this encoder needs in the state row (e.g. a history length)."""
        return dict(self._options)

    def _head_map(self):
        """``(head_index, game_action)`` njit functions ``(action, agent) -> int`` when the head
        frame differs from the action frame (a module's ``HEAD_MAPS``), else None (identity)."""
        if self._custom is not None or self._module is None:
            return None
        return getattr(importlib.import_module(self._module), "HEAD_MAPS", {}).get(self._name)

    def head_index(self, action: int, agent: int) -> int:
        """Network head index of game action ``action`` for ``agent``.

        The identity except for encoders with a head map, e.g. ``relative_chess``.

        Args:
            action: a game action id, ``0 <= action < n_actions``.
            agent: the observing agent.

        Returns:
            The index of the policy-head output that scores ``action`` for ``agent``.

        Raises:
            OverflowError: a negative ``action`` or ``agent``.
            ValueError: ``action`` out of range for the encoding.
        """
        return self._map("action", action, agent, 0)

    def game_action(self, head: int, agent: int) -> int:
        """Game action of network head ``head`` for ``agent`` (inverse of :meth:`head_index`).

        Args:
            head: a policy-head index, ``0 <= head < n_actions``.
            agent: the observing agent.

        Returns:
            The game action id that head ``head`` scores for ``agent``.

        Raises:
            OverflowError: a negative ``head`` or ``agent``.
            ValueError: ``head`` out of range for the encoding.
        """
        return self._map("head", head, agent, 1)

    def _map(self, label, value, agent, direction) -> int:
        a = _as_unsigned(label, value)
        ag = _as_unsigned("agent", agent)
        n = self._n_actions()
        if a >= n:
            raise ValueError(f"{label} {a} out of range for the {n}-action {self._name} encoding")
        hm = self._head_map()
        return a if hm is None else int(hm[direction](a, ag))

    def _n_actions(self) -> int:
        if self._custom is not None:
            return self._custom[4]
        return importlib.import_module(self._module).N_ACTIONS

    def __repr__(self) -> str:
        return f"EncoderHandle({self._name!r})"

    @staticmethod
    def Connect4() -> EncoderHandle:
        """Connect 4 planes ``(2, 6, 7)``.

        Returns:
            The encoder.
        """
        return _builtin("connect4")

    @staticmethod
    def GridWorld() -> EncoderHandle:
        """GridWorld planes ``(2, size, size)``.

        Returns:
            The encoder.
        """
        return _builtin("gridworld")

    @staticmethod
    def Snake() -> EncoderHandle:
        """Snake planes ``(5, grid_size, grid_size)``.

        Returns:
            The encoder.
        """
        return _builtin("snake")

    @staticmethod
    def KuhnPoker() -> EncoderHandle:
        """Kuhn poker vector ``(3 * players, 1, 1)``.

        Returns:
            The encoder.
        """
        return _builtin("kuhn_poker")

    @staticmethod
    def TexasHoldem() -> EncoderHandle:
        """Texas Hold'em planes ``(2 * num_players + 19, 4, 13)``.

        Returns:
            The encoder.
        """
        return _builtin("texas_holdem")

    @staticmethod
    def Backgammon() -> EncoderHandle:
        """OpenSpiel's backgammon observation tensor ``(200, 1, 1)``.

        Returns:
            The encoder.
        """
        return _builtin("backgammon")

    @staticmethod
    def LeducPoker() -> EncoderHandle:
        """Leduc poker vector ``(21, 1, 1)``.

        Returns:
            The encoder.
        """
        return _builtin("leduc_poker")


def _builtin(name: str, **options) -> EncoderHandle:
    game, module = _BUILTIN[name]
    return EncoderHandle(name, game, module, options=options)


def _minimal_chess() -> EncoderHandle:
    """Chess planes ``(19, 8, 8)`` in the absolute frame (the chess default).

    Returns:
        The encoder.
    """
    return _builtin("minimal_chess")


def _relative_chess() -> EncoderHandle:
    """Chess planes ``(19, 8, 8)`` in the observer's frame, with a mirrored head map for agent 1.

    Returns:
        The encoder.
    """
    return _builtin("relative_chess")


def _openspiel_chess() -> EncoderHandle:
    """OpenSpiel's chess observation tensor ``(20, 8, 8)``.

    Returns:
        The encoder.
    """
    return _builtin("openspiel_chess")


def _alphazero_chess(history_length: int = 8) -> EncoderHandle:
    """AlphaZero's chess planes ``(14 * history_length + 7, 8, 8)``.

    Args:
        history_length: positions of history stacked into the planes (>= 1; 8 as in AlphaZero).

    Returns:
        The encoder.

    Raises:
        TypeError: ``history_length`` is not an int.
        OverflowError: a negative ``history_length``.
        ValueError: ``history_length`` below 1, or so large the tensor would exceed 2^31
            elements.
    """
    h = _as_unsigned("history_length", history_length)
    if h < 1:
        raise ValueError("history_length must be >= 1")
    if (14 * h + 7) * 64 >= 2**31:
        raise ValueError(f"history_length {h} makes the observation tensor exceed 2^31 elements")
    return _builtin("alphazero_chess", history_length=h)


for _fn, _label in (
    (_minimal_chess, "MinimalChess"),
    (_relative_chess, "RelativeChess"),
    (_openspiel_chess, "OpenSpielChess"),
    (_alphazero_chess, "AlphaZeroChess"),
):
    _fn.__name__, _fn.__qualname__ = _label, f"EncoderHandle.{_label}"  # the original's TypeError wording
EncoderHandle.MinimalChess = staticmethod(_minimal_chess)
EncoderHandle.RelativeChess = staticmethod(_relative_chess)
EncoderHandle.OpenSpielChess = staticmethod(_openspiel_chess)
EncoderHandle.AlphaZeroChess = staticmethod(_alphazero_chess)


Connect4 = EncoderHandle.Connect4
GridWorld = EncoderHandle.GridWorld
Snake = EncoderHandle.Snake
KuhnPoker = EncoderHandle.KuhnPoker
TexasHoldem = EncoderHandle.TexasHoldem
LeducPoker = EncoderHandle.LeducPoker

MinimalChess = EncoderHandle.MinimalChess
RelativeChess = EncoderHandle.RelativeChess
OpenSpielChess = EncoderHandle.OpenSpielChess
AlphaZeroChess = EncoderHandle.AlphaZeroChess
Backgammon = EncoderHandle.Backgammon


class _RevisedEncoder(EncoderHandle):
    """A built-in encoder whose resolved block carries a content ``revision`` (not a game parameter)."""

    __slots__ = ()

    def _game_params(self) -> dict:
        return {}


def _car_racing_pixels() -> EncoderHandle:
    """CarRacing's rendered frame ``(3, 96, 96)``, raw 0-255, channel-major (the default).

    Returns:
        The encoder.
    """
    return _RevisedEncoder("car_racing_pixels", "car_racing", _BUILTIN["car_racing_pixels"][1], options={"revision": 2})


def _car_racing_vec() -> EncoderHandle:
    """CarRacing's 21 pose / velocity / wheel / progress features ``(1, 1, 21)``.

    Returns:
        The encoder.
    """
    return _RevisedEncoder("car_racing_vec", "car_racing", _BUILTIN["car_racing_vec"][1], options={"revision": 1})


for _fn, _label in ((_car_racing_pixels, "CarRacingPixels"), (_car_racing_vec, "CarRacingVec")):
    _fn.__name__, _fn.__qualname__ = _label, f"EncoderHandle.{_label}"
EncoderHandle.CarRacingPixels = staticmethod(_car_racing_pixels)
EncoderHandle.CarRacingVec = staticmethod(_car_racing_vec)
CarRacingPixels = EncoderHandle.CarRacingPixels
CarRacingVec = EncoderHandle.CarRacingVec
__all__ += ["CarRacingPixels", "CarRacingVec"]

_REGISTRY = {
    "alphazero_chess": AlphaZeroChess,
    "backgammon": Backgammon,
    "car_racing_pixels": CarRacingPixels,
    "car_racing_vec": CarRacingVec,
    "connect4": Connect4,
    "gridworld": GridWorld,
    "kuhn_poker": KuhnPoker,
    "leduc_poker": LeducPoker,
    "minimal_chess": MinimalChess,
    "openspiel_chess": OpenSpielChess,
    "relative_chess": RelativeChess,
    "snake": Snake,
    "texas_holdem": TexasHoldem,
}


registered, make = _registry("encoder", _REGISTRY)

# not picklable, as 0.4.0 (tests/reliability/test_no_pickle.py)
EncoderHandle.__reduce_ex__ = _refuse_pickle
