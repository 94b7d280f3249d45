"""``rf.games`` — game handles for composing an ``Engine`` or driving an ``Env``.

Each constructor returns an opaque :class:`GameHandle` carrying the game's configuration; the
rules themselves are njit kernels in ``reinfors/jit/games/<game>.py`` (imported on first use, so
``import reinfors`` compiles nothing).  ``make`` / ``registered`` are the name-addressable form.

Beyond the original: :func:`from_module` and :func:`custom` turn your own njit game functions —
in a file or a notebook cell — into a handle that runs at native speed everywhere a built-in game
does (see ``reinfors/jit/games/tictactoe.py`` for the template).
"""

from __future__ import annotations

import importlib
import math
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._registry import registry as _registry
from ._runtime.contract_check import GameContractError
from ._runtime.gamedef import GameDef as _GameDef
from ._validate import refuse_pickle as _refuse_pickle
from .catalog import GAMES  # the registered names (0.4.0 exports it here too)
from .encoders import EncoderHandle
from .jit.games._contract import HEADER as _HEADER
from .spaces import Box, Discrete

__all__ = [
    "GameHandle",
    "Connect4",
    "GridWorld",
    "Snake",
    "KuhnPoker",
    "TexasHoldem",
    "LeducPoker",
    "Backgammon",
    "from_module",
    "custom",
    "make",
    "registered",
    "GAMES",
]
__all__ += ["Chess"]
__all__ += ["CarRacing"]
__all__ += ["STATE_HEADER", "GameContractError"]  # user games (custom / from_module)

# registry name -> (module import path, action count)
_GAME_INFO = {
    "connect4": ("reinfors.jit.games.connect4", 7),
    "gridworld": ("reinfors.jit.games.gridworld", 4),
    "kuhn_poker": ("reinfors.jit.games.kuhn_poker", 2),
    "leduc_poker": ("reinfors.jit.games.leduc_poker", 3),
    "snake": ("reinfors.jit.games.snake", 3),
    "backgammon": ("reinfors.jit.games.backgammon", 1352),
    "chess": ("reinfors.jit.games.chess", 4672),
    "texas_holdem": ("reinfors.jit.games.texas_holdem", 3),
}
_GAME_INFO["car_racing"] = ("reinfors.jit.games.car_racing", 5)


class GameHandle:
    """A configured game (opaque): pass it to ``rf.Env`` or ``rf.Engine``."""

    __slots__ = ("_def", "_encoder", "_config")

    def __init__(self, gdef: _GameDef, encoder: EncoderHandle, config: dict):
        """Internal: build one with the constructors (``rf.games.Connect4()``, :func:`custom`, ...).

        Args:
            gdef: the game's kernels and dimensions.
            encoder: the observation encoder.
            config: the resolved constructor parameters.
        """
        self._def = gdef
        self._encoder = encoder
        self._config = config

    @property
    def name(self) -> str:
        """The game's catalogue key."""
        return self._def.name

    @property
    def encoder(self) -> EncoderHandle:
        """The observation encoder this handle uses."""
        return self._encoder

    def observation_space(self) -> Box:
        """Shape and bounds of one observation (float32).

        Returns:
            The observation space (the encoder's shape and bounds).
        """
        d = self._def
        return Box(d.obs_shape, d.low, d.high)

    def action_space(self) -> Discrete:
        """The action count.

        Returns:
            ``Discrete(n)``: actions are ids ``0 .. n - 1`` in the game frame.
        """
        return Discrete(self._def.n_actions)

    def truncation_horizon(self) -> int | None:
        """The declared episode cap.

        Returns:
            The cap in ticks, or None when the game never truncates.
        """
        return self._def.truncation

    def _resolved(self) -> dict:
        """The resolved game block: every constructor parameter plus the encoder block."""
        out = dict(self._config)
        out["encoder"] = self._encoder._config()
        out["name"] = self._def.name
        return dict(sorted(out.items()))

    def __repr__(self) -> str:
        return f"GameHandle({self._def.name!r})"

    # -- built-in games (static constructors, as the original's GameHandle) --

    @staticmethod
    def Connect4(encoder: EncoderHandle | None = None) -> GameHandle:
        """Connect 4 on a 6x7 board: 2 players, sequential, 7 column actions, obs ``(2, 6, 7)``.

        Args:
            encoder: an observation encoder for this game (``rf.encoders``); ``None`` is the
                game's default view.

        Returns:
            The game handle.

        Raises:
            TypeError: a parameter of the wrong type, or an ``encoder`` that is not an
                ``EncoderHandle``.
            OverflowError: a negative count.
            ValueError: a parameter out of range, or an encoder for another game.
        """
        return _builtin("connect4", encoder)

    @staticmethod
    def GridWorld(
        size: int = 5,
        goal_row: int | None = None,
        goal_col: int | None = None,
        max_ticks: int | None = 1000,
        encoder: EncoderHandle | None = None,
    ) -> GameHandle:
        """One agent walks a ``size x size`` grid to the goal (default the far corner ``(size-1, size-1)``).

        4 actions, obs ``(2, size, size)``.

        Args:
            size: the grid's side (>= 2).
            goal_row: the goal's row; ``None`` is ``size - 1``.
            goal_col: the goal's column; ``None`` is ``size - 1``.
            max_ticks: the episode cap; ``None`` never truncates.
            encoder: an observation encoder for this game (``rf.encoders``); ``None`` is the
                game's default view.

        Returns:
            The game handle.

        Raises:
            TypeError: a parameter of the wrong type, or an ``encoder`` that is not an
                ``EncoderHandle``.
            OverflowError: a negative count.
            ValueError: a parameter out of range, or an encoder for another game.
        """
        return _builtin("gridworld", encoder, size=size, goal_row=goal_row, goal_col=goal_col, max_ticks=max_ticks)

    @staticmethod
    def Snake(
        grid_size: int = 20,
        initial_length: int = 3,
        food: int = 3,
        play_to_last: bool = True,
        win_food_lead: int | None = None,
        max_ticks: int | None = 1000,
        num_snakes: int = 2,
        encoder: EncoderHandle | None = None,
    ) -> GameHandle:
        """Simultaneous multi-snake game (2-8 snakes) with food placement chance; 3 relative moves,
        obs ``(5, grid_size, grid_size)``.

        Args:
            grid_size: the board's side.
            initial_length: each snake's length at the start.
            food: food items on the board at once (at most 10000).
            play_to_last: play on until one snake is left (else the episode ends at the first
                death).
            win_food_lead: end the episode as a win once a snake leads by this much food;
                ``None`` disables it.
            max_ticks: the episode cap; ``None`` never truncates.
            num_snakes: players, 2 to 8.
            encoder: an observation encoder for this game (``rf.encoders``); ``None`` is the
                game's default view.

        Returns:
            The game handle.

        Raises:
            TypeError: a parameter of the wrong type, or an ``encoder`` that is not an
                ``EncoderHandle``.
            OverflowError: a negative count.
            ValueError: a parameter out of range, or an encoder for another game.
        """
        return _builtin(
            "snake",
            encoder,
            grid_size=grid_size,
            initial_length=initial_length,
            food=food,
            play_to_last=play_to_last,
            win_food_lead=win_food_lead,
            max_ticks=max_ticks,
            num_snakes=num_snakes,
        )

    @staticmethod
    def KuhnPoker(players: int = 2, encoder: EncoderHandle | None = None) -> GameHandle:
        """N-player Kuhn poker (2-10 players, ``players + 1`` cards): imperfect information, chance
        deal, 2 actions (pass/bet), obs ``(3 * players, 1, 1)``.

        Args:
            players: 2 to 10.
            encoder: an observation encoder for this game (``rf.encoders``); ``None`` is the
                game's default view.

        Returns:
            The game handle.

        Raises:
            TypeError: a parameter of the wrong type, or an ``encoder`` that is not an
                ``EncoderHandle``.
            OverflowError: a negative count.
            ValueError: a parameter out of range, or an encoder for another game.
        """
        return _builtin("kuhn_poker", encoder, players=players)

    @staticmethod
    def TexasHoldem(
        num_players: int = 6,
        stack: int = 200,
        small_blind: int = 5,
        big_blind: int = 10,
        encoder: EncoderHandle | None = None,
    ) -> GameHandle:
        """Fixed-limit Texas Hold'em (2-9 players): chance deal and board, 3 actions
        (fold/call/raise), all-ins and side pots, obs ``(2 * num_players + 19, 4, 13)``.

        Args:
            num_players: 2 to 9.
            stack: each player's starting chips.
            small_blind: the small blind in chips.
            big_blind: the big blind in chips.
            encoder: an observation encoder for this game (``rf.encoders``); ``None`` is the
                game's default view.

        Returns:
            The game handle.

        Raises:
            TypeError: a parameter of the wrong type, or an ``encoder`` that is not an
                ``EncoderHandle``.
            OverflowError: a negative count.
            ValueError: a parameter out of range, or an encoder for another game.
        """
        return _builtin(
            "texas_holdem",
            encoder,
            num_players=num_players,
            stack=stack,
            small_blind=small_blind,
            big_blind=big_blind,
        )

    @staticmethod
    def LeducPoker(encoder: EncoderHandle | None = None) -> GameHandle:
        """Two-player Leduc poker (6 cards, two betting rounds, public card): imperfect
        information, chance deal, 3 actions (fold/call/raise), obs ``(21, 1, 1)``.

        Args:
            encoder: an observation encoder for this game (``rf.encoders``); ``None`` is the
                game's default view.

        Returns:
            The game handle.

        Raises:
            TypeError: a parameter of the wrong type, or an ``encoder`` that is not an
                ``EncoderHandle``.
            OverflowError: a negative count.
            ValueError: a parameter out of range, or an encoder for another game.
        """
        return _builtin("leduc_poker", encoder)

    @staticmethod
    def Backgammon(max_ticks: int | None = 1000, encoder: EncoderHandle | None = None) -> GameHandle:
        """Backgammon (OpenSpiel's rules, no doubling cube): 2 players, dice chance, 1352 actions
        (OpenSpiel's encoding), obs ``(200, 1, 1)``.

        Args:
            max_ticks: the episode cap; ``None`` never truncates.
            encoder: an observation encoder for this game (``rf.encoders``); ``None`` is the
                game's default view.

        Returns:
            The game handle.

        Raises:
            TypeError: a parameter of the wrong type, or an ``encoder`` that is not an
                ``EncoderHandle``.
            OverflowError: a negative count.
            ValueError: a parameter out of range, or an encoder for another game.
        """
        return _builtin("backgammon", encoder, max_ticks=max_ticks)


def _encoder_for(game_name: str, module, encoder) -> EncoderHandle:
    if encoder is None:
        return EncoderHandle(module.DEFAULT_ENCODER, game_name, module.__name__)
    if not isinstance(encoder, EncoderHandle):
        raise TypeError(f"argument 'encoder': '{type(encoder).__name__}' object cannot be converted to 'EncoderHandle'")
    encoder._check_game(game_name)
    return encoder


def _builtin(name: str, encoder, **kwargs) -> GameHandle:
    module = importlib.import_module(_GAME_INFO[name][0])
    if encoder is not None and not isinstance(encoder, EncoderHandle):  # argument types first
        raise TypeError(f"argument 'encoder': '{type(encoder).__name__}' object cannot be converted to 'EncoderHandle'")
    if encoder is not None and encoder._game == name:
        kwargs.update(encoder._game_params())  # e.g. the AlphaZero chess history length
    params = module.make_params(**kwargs)
    enc = _encoder_for(name, module, encoder)
    encode, obs_shape, low, high = enc._parts()
    gdef = _GameDef(
        module, params, encode=encode, obs_shape=obs_shape(params), low=low, high=high, head_map=enc._head_map()
    )
    return GameHandle(gdef, enc, module.resolved(params))


Connect4 = GameHandle.Connect4
GridWorld = GameHandle.GridWorld
Snake = GameHandle.Snake
KuhnPoker = GameHandle.KuhnPoker
TexasHoldem = GameHandle.TexasHoldem
LeducPoker = GameHandle.LeducPoker
Backgammon = GameHandle.Backgammon


def _chess(max_ticks: int | None = 512, encoder: EncoderHandle | None = None) -> GameHandle:
    """Chess: 2 players, sequential, AlphaZero 8x8x73 = 4672 actions, obs ``(19, 8, 8)``
    (``minimal_chess``).

    Args:
        max_ticks: the episode cap; ``None`` never truncates.
        encoder: an observation encoder for this game (``rf.encoders``); ``None`` is the
            game's default view.

    Returns:
        The game handle.

    Raises:
        TypeError: a parameter of the wrong type, or an ``encoder`` that is not an
            ``EncoderHandle``.
        OverflowError: a negative count.
        ValueError: a parameter out of range, or an encoder for another game.
    """
    return _builtin("chess", encoder, max_ticks=max_ticks)


_chess.__name__, _chess.__qualname__ = "Chess", "GameHandle.Chess"  # the original's TypeError wording
GameHandle.Chess = staticmethod(_chess)
Chess = GameHandle.Chess


def _car_racing(
    lap_complete_percent: float = 0.95, max_ticks: int | None = 1000, encoder: EncoderHandle | None = None
) -> GameHandle:
    """Gymnasium's CarRacing-v3 (discrete): 1 player, 5 controls, a track generated from the
    chance-drawn seed, obs ``(3, 96, 96)`` raw pixels (``car_racing_pixels``) or ``(1, 1, 21)``
    (``car_racing_vec``).

    Args:
        lap_complete_percent: the share of track tiles a lap must visit to complete, in (0, 1].
        max_ticks: the episode cap; ``None`` never truncates.
        encoder: an observation encoder for this game (``rf.encoders``); ``None`` is the
            game's default view.

    Returns:
        The game handle.

    Raises:
        TypeError: a parameter of the wrong type, or an ``encoder`` that is not an
            ``EncoderHandle``.
        OverflowError: a negative count.
        ValueError: a parameter out of range, or an encoder for another game.
    """
    if encoder is None:  # the default carries its content revision
        from .encoders import CarRacingPixels

        encoder = CarRacingPixels()
    return _builtin("car_racing", encoder, lap_complete_percent=lap_complete_percent, max_ticks=max_ticks)


_car_racing.__name__, _car_racing.__qualname__ = "CarRacing", "GameHandle.CarRacing"
GameHandle.CarRacing = staticmethod(_car_racing)
CarRacing = GameHandle.CarRacing

_REGISTRY = {
    "backgammon": Backgammon,
    "car_racing": CarRacing,
    "chess": Chess,
    "connect4": Connect4,
    "gridworld": GridWorld,
    "kuhn_poker": KuhnPoker,
    "leduc_poker": LeducPoker,
    "snake": Snake,
    "texas_holdem": TexasHoldem,
}


registered, make = _registry("game", _REGISTRY)


# ---------------------------------------------------------------------------------------------
# User-defined games
# ---------------------------------------------------------------------------------------------


#: Words at the start of every state row that belong to the shared semantics (ticks, done,
#: horizon, spare; ``reinfors/jit/games/_contract.py``).  A user game's ``state_size`` counts them:
#: its own words live at ``state[STATE_HEADER:state_size]``.
STATE_HEADER = _HEADER


def from_module(module: types.ModuleType | Any, **kwargs: Any) -> GameHandle:
    """A handle for a game defined by a module or namespace with the template's exports.

    ``kwargs`` go to the module's ``make_params`` (if it defines one).  The njit functions may
    live anywhere — a package, a script, a notebook cell.  See ``reinfors/jit/games/tictactoe.py``.
    Optional module constants ``OBS_LOW`` / ``OBS_HIGH`` (default 0.0 / 1.0) give the observation
    box (``observation_space().low`` / ``.high``; ``check_game`` verifies every value lies in it).

    Before the game's first step (the first ``rf.Env`` or ``Engine.collect`` that runs it) its
    functions play a few seeded random episodes on guarded rows: a function writing past a
    declared size (``state_size(params)``, which counts the :data:`STATE_HEADER` header words;
    ``N_ACTIONS``; the observation; ``max_chance``; ``max_info_key``) raises
    :class:`GameContractError` naming the function, the declared and the written size.

    Args:
        module: a module (or any namespace) with the template's exports (``NAME``,
            ``N_ACTIONS``, ``init``, ``step``, ``legal``, ``active``, ``is_terminal``,
            ``encode``, ``obs_shape``, ...).
        **kwargs: the module's ``make_params`` keyword arguments.

    Returns:
        The game handle.

    Raises:
        TypeError: the module lacks a required export, an export is not ``@njit``, or
            ``kwargs`` are given to a module without ``make_params``.
    """
    _GameDef.check_namespace(module)
    make_params = getattr(module, "make_params", None)
    if make_params is not None:
        params = make_params(**kwargs)
    elif kwargs:
        raise TypeError(f"game {module.NAME!r} takes no parameters (it defines no make_params)")
    else:
        params = np.zeros(0, np.int64)
    shape_fn = module.obs_shape
    gdef = _GameDef(module, params, low=getattr(module, "OBS_LOW", 0.0), high=getattr(module, "OBS_HIGH", 1.0))
    gdef.user = True  # its sizes are verified before its first step (GameContractError)
    enc = EncoderHandle(module.NAME, module.NAME, custom=(module.encode, shape_fn, gdef.low, gdef.high, gdef.n_actions))
    resolved = getattr(module, "resolved", None)
    config = dict(resolved(gdef.params)) if resolved is not None else {}
    return GameHandle(gdef, enc, config)


def custom(
    name: str,
    *,
    n_players: int,
    n_actions: int,
    obs_shape: Sequence[int],
    state_size: int,
    reward_keys: Sequence[str],
    reward_defaults: Sequence[float],
    init: Callable[..., Any],
    step: Callable[..., Any],
    legal: Callable[..., Any],
    active: Callable[..., Any],
    is_terminal: Callable[..., Any],
    encode: Callable[..., Any],
    simultaneous: bool = False,
    horizon: int = 0,
    chance_pending: Callable[..., Any] | None = None,
    chance_outcomes: Callable[..., Any] | None = None,
    apply_chance: Callable[..., Any] | None = None,
    max_chance: int = 0,
    info_key: Callable[..., Any] | None = None,
    max_info_key: int = 0,
    params: Sequence[int] | np.ndarray | None = None,
    inspect: Callable[..., Any] | None = None,
    events: Callable[..., Any] | None = None,
    chance_in_step: bool = True,
    obs_low: float = 0.0,
    obs_high: float = 1.0,
) -> GameHandle:
    """A handle for a game given as loose njit functions (e.g. defined in a notebook).

    ``state_size`` counts the :data:`STATE_HEADER` (4) words of the shared header; the game's own
    words start at index ``STATE_HEADER``.  A function that writes past ``state_size`` (or past the
    legal mask, the observation, ...) is caught before the game's first step:
    :class:`GameContractError` names the function, the declared and the written size.
    ``params`` is an optional int64 row passed to every function.  ``obs_low`` / ``obs_high``
    bound every observation value (the ``observation_space()`` box, default [0, 1]; ``check_game``
    verifies it).  See the template ``reinfors/jit/games/tictactoe.py`` for each function's
    contract.  ``chance_in_step=False`` declares that chance is pending only after reset (the
    game's ``CHANCE_IN_STEP``): tree searches then build no chance nodes.

    Args:
        name: the game's name (its ``resolved_config`` and cache key), a non-empty str.
        n_players: players (>= 1).
        n_actions: the action count (>= 1).
        obs_shape: the encoded observation's shape.
        state_size: words of one state row, the 4 header words included.
        reward_keys: the names of the reward components ``rf.Reward`` weights.
        reward_defaults: each key's default weight.
        init: ``@njit init(params, state)``: writes a fresh episode's game words.
        step: ``@njit step(params, state, actions, amounts)``: advances one tick.
        legal: ``@njit legal(params, state, agent, mask)``: fills the legal-action mask.
        active: ``@njit active(params, state, out)``: the agents to act this tick.
        is_terminal: ``@njit is_terminal(params, state)``.
        encode: ``@njit encode(params, state, agent, out)``: the agent's observation.
        simultaneous: every active agent acts at once (else one agent per tick).
        horizon: the episode cap in ticks; 0 never truncates.
        chance_pending: ``@njit chance_pending(params, state)`` (games with chance).
        chance_outcomes: ``@njit chance_outcomes(params, state, probs)``: the pending event's probabilities.
        apply_chance: ``@njit apply_chance(params, state, outcome)``.
        max_chance: the most outcomes one chance event has.
        info_key: ``@njit info_key(params, state, agent, out)`` (imperfect information).
        max_info_key: the longest information-state key in words.
        params: an int64 row passed to every function; ``None`` is an empty row.
        inspect: ``@njit`` optional diagnostics hook (the template's ``inspect``).
        events: ``@njit`` optional per-tick event counters (the template's ``events``).
        chance_in_step: chance can be pending after a step (``False``: only after reset).
        obs_low: the lower bound of every observation value.
        obs_high: the upper bound of every observation value.

    Returns:
        The game handle.

    Raises:
        TypeError: ``name`` is not a non-empty str, or a function is not ``@njit``.
        ValueError: a count not a positive int, a negative ``horizon``, or ``obs_low > obs_high``.
    """
    if not isinstance(name, str) or not name:
        raise TypeError("custom game name must be a non-empty str")
    for label, v in (("n_players", n_players), ("n_actions", n_actions), ("state_size", state_size)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{label} must be a positive int, got {v!r}")
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 0:
        raise ValueError(f"horizon must be an int >= 0 (0 = never truncate), got {horizon!r}")
    shape = tuple(int(d) for d in obs_shape)
    lo, hi = float(obs_low), float(obs_high)
    if math.isnan(lo) or math.isnan(hi) or lo > hi:
        raise ValueError(f"obs_low must not exceed obs_high (got {obs_low!r} > {obs_high!r})")
    p = np.zeros(0, np.int64) if params is None else np.asarray(params, dtype=np.int64).ravel()
    ns = types.SimpleNamespace(
        NAME=name,
        N_ACTIONS=int(n_actions),
        SIMULTANEOUS=bool(simultaneous),
        REWARD_KEYS=tuple(reward_keys),
        REWARD_DEFAULTS=tuple(reward_defaults),
        n_players=lambda _p: int(n_players),
        state_size=lambda _p: int(state_size),
        obs_shape=lambda _p: shape,
        horizon=lambda _p: int(horizon),
        max_chance=lambda _p: int(max_chance),
        max_info_key=lambda _p: int(max_info_key),
        init=init,
        step=step,
        legal=legal,
        active=active,
        is_terminal=is_terminal,
        encode=encode,
        chance_pending=chance_pending,
        chance_outcomes=chance_outcomes,
        apply_chance=apply_chance,
        info_key=info_key,
        CHANCE_IN_STEP=bool(chance_in_step),
        OBS_LOW=lo,
        OBS_HIGH=hi,
    )
    ns.make_params = lambda: p.copy()
    if inspect is not None:
        ns.inspect = inspect
    if events is not None:
        ns.events = events
    return from_module(ns)

# not picklable, as 0.4.0 (tests/reliability/test_no_pickle.py)
GameHandle.__reduce_ex__ = _refuse_pickle
