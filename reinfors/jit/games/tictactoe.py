"""Tic-tac-toe: the annotated template game.  Copy this file to add a game.

Every export a game needs is here, in the order the runtime uses it.  A game is *rules only*: it
knows nothing of slots, arenas, threads, rewards weights or RNG.  The shared semantics
(``_contract.py``) own ticks, termination/truncation bookkeeping, illegal-action rejection and
chance resolution.

Cell-index diagram (action ``a`` marks cell ``a``)::

    0 | 1 | 2
    ---------
    3 | 4 | 5
    ---------
    6 | 7 | 8

State row (``int64``; words ``0..HEADER-1`` belong to the shared header)::

    HEADER + 0 … HEADER + 8   cells: 0 empty, 1 player 0 (X), 2 player 1 (O)
    HEADER + 9                player to move (0 or 1)
    HEADER + 10               winner: -1 none/draw, else 0 or 1

Observation (default encoder), ``(2, 3, 3)`` float32, mover-relative: plane 0 holds the observing
agent's marks, plane 1 the opponent's.

To use a copy of this file as your own game::

    import mygame                     # your edited copy
    game = rf.games.from_module(mygame)
    rf.testing.check_game(game)       # conformance first
    env = rf.Env(game, rf.Reward(win=1.0, loss=-1.0))

Functions may equally be defined in a notebook and passed to ``rf.games.custom(...)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from reinfors.jit.games._contract import HEADER

# ---------------------------------------------------------------------------------------------
# Python-side layout (plain Python: called once per handle, never on the hot path)
# ---------------------------------------------------------------------------------------------

NAME = "tictactoe"  # registry / catalogue key
N_ACTIONS = 9  # size of the action space (Discrete.n)
SIMULTANEOUS = False  # True: every active agent acts each tick (a joint action)
REWARD_KEYS = ("win", "loss", "draw")  # event kinds the game emits, in column order
REWARD_DEFAULTS = (1.0, -1.0, 0.0)  # weight of each key when the user's Reward omits it
# Optional, for games with chance: CHANCE_IN_STEP = False when chance is pending only after reset
# (a deal, a start cell), never after a step.  Tree searches then build no chance nodes (every
# chance mode gives the same trees).  Default True: chance may follow any step (dice, food), and
# the searches' chance modes (AlwaysResample / Committed(k) / ExpandAll) apply to it.

# Observation box (optional, default [0, 1]): every value the encoder writes lies in
# [OBS_LOW, OBS_HIGH]; it is the observation_space()'s low / high, and check_game verifies it.
# (``rf.games.custom`` takes the same as ``obs_low=`` / ``obs_high=``.)
OBS_LOW = 0.0
OBS_HIGH = 1.0

# State row size.  The first HEADER words (``rf.games.STATE_HEADER`` = 4: ticks, done, horizon,
# spare; ``_contract.py``) belong to the shared semantics; the game's own words follow, from index
# HEADER on.  ``state_size`` counts both, and every function may touch only
# ``state[0:state_size]``: a user game whose functions write past the declared size is refused
# before its first step (``rf.games.GameContractError`` naming the function, the declared size and
# the size written), in ``rf.Env`` and ``Engine.collect`` alike.
_CELLS = HEADER
_TO_MOVE = HEADER + 9
_WINNER = HEADER + 10
_STATE_SIZE = HEADER + 11


def make_params(**kwargs) -> np.ndarray:
    """Validate constructor kwargs and pack them into the ``int64`` parameter row.

    Raise ``TypeError`` / ``ValueError`` naming the parameter.  Tic-tac-toe has no parameters.
    """
    if kwargs:
        raise TypeError(f"TicTacToe() got unexpected keyword arguments {sorted(kwargs)}")
    return np.zeros(0, np.int64)


def resolved(params) -> dict:
    """Every constructor parameter with its resolved value (goes into ``resolved_config``)."""
    return {}


def n_players(params) -> int:
    """Number of agents (fixed per parameter row)."""
    return 2


def state_size(params) -> int:
    """Width of the ``int64`` state row, header included."""
    return _STATE_SIZE


def obs_shape(params) -> tuple:
    """Shape of the default encoder's observation (the flattened row has ``prod(shape)`` floats)."""
    return (2, 3, 3)


def horizon(params) -> int:
    """Truncation horizon in ticks, 0 for none."""
    return 0


def max_chance(params) -> int:
    """Largest chance fan (number of outcomes at one chance node); 0 for a chance-free game."""
    return 0


def inspect(params, state) -> dict:
    """``Env.state()``: a trusted inspection dict (may include hidden information)."""
    cells = state[_CELLS : _CELLS + 9]
    return {
        "board": [bytes(int(c) for c in cells[r * 3 : r * 3 + 3]) for r in range(3)],
        "turn": int(state[_TO_MOVE]),
        "done": bool(state[1] != 0),
    }


def events(params, state, amounts) -> list:
    """``Env.step`` trace: the ordered ``(agent, payload)`` list for the step that led to ``state``.

    ``amounts`` is the ``[n_players, len(REWARD_KEYS)]`` float64 array the step wrote.
    """
    out = []
    for agent in range(2):
        for k, key in enumerate(REWARD_KEYS):
            if amounts[agent, k] != 0.0:
                out.append((agent, key))
    return out


def validate_state(params, state) -> str | None:
    """``None`` if ``state`` is a consistent row, else the reason (rejects forged snapshots)."""
    cells = state[_CELLS : _CELLS + 9]
    if ((cells < 0) | (cells > 2)).any():
        return "cell value out of range"
    if state[_TO_MOVE] not in (0, 1) or not -1 <= state[_WINNER] <= 1:
        return "turn or winner word out of range"
    x, o = int((cells == 1).sum()), int((cells == 2).sum())
    if x - o != int(state[_TO_MOVE]) and state[_WINNER] < 0:
        return "piece counts disagree with the player to move"
    return None


# ---------------------------------------------------------------------------------------------
# Rules: njit functions over (params: [P] int64, state: [state_size] int64, ...)
# They must be pure functions of their arguments (no globals that change, no RNG, no allocation
# on the hot path) so any thread may run them on any slot.
# ---------------------------------------------------------------------------------------------

_LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]], np.int64)


@njit(cache=True, nogil=True)
def init(params, state):
    """Write the initial game words (``state[HEADER:]``) in place.  The header is the caller's."""
    for i in range(9):
        state[_CELLS + i] = 0
    state[_TO_MOVE] = 0
    state[_WINNER] = -1


@njit(cache=True, nogil=True)
def legal(params, state, agent, mask):
    """Write ``mask: [N_ACTIONS] uint8`` (1 = legal for ``agent``) in place; return the count.

    Only called for an unfinished state; a non-mover gets an all-zero mask.
    """
    n = 0
    mover = state[_TO_MOVE] == agent
    for a in range(9):
        ok = mover and state[_CELLS + a] == 0
        mask[a] = 1 if ok else 0
        n += 1 if ok else 0
    return n


@njit(cache=True, nogil=True)
def active(params, state, out):
    """Write the agents that act this tick into ``out: [n_players] int64``; return how many."""
    out[0] = state[_TO_MOVE]
    return 1


@njit(cache=True, nogil=True)
def step(params, state, actions, amounts):
    """Apply the joint action in place.

    ``actions: [n_players] int64`` holds each active agent's (already validated, legal) action;
    entries of inactive agents are meaningless.  Add reward-key amounts for this tick into
    ``amounts: [n_players, len(REWARD_KEYS)] float64`` (zeroed by the caller).
    """
    p = state[_TO_MOVE]
    state[_CELLS + actions[p]] = p + 1
    won = False
    for li in range(8):
        a, b, c = _LINES[li, 0], _LINES[li, 1], _LINES[li, 2]
        if state[_CELLS + a] == p + 1 and state[_CELLS + b] == p + 1 and state[_CELLS + c] == p + 1:
            won = True
    if won:
        state[_WINNER] = p
        amounts[p, 0] += 1.0  # win
        amounts[1 - p, 1] += 1.0  # loss
    else:
        full = True
        for i in range(9):
            if state[_CELLS + i] == 0:
                full = False
        if full:
            amounts[0, 2] += 1.0  # draw
            amounts[1, 2] += 1.0
    state[_TO_MOVE] = 1 - p


@njit(cache=True, nogil=True)
def is_terminal(params, state):
    """True when the rules ended the episode (a win or a full board)."""
    if state[_WINNER] >= 0:
        return True
    for i in range(9):
        if state[_CELLS + i] == 0:
            return False
    return True


@njit(cache=True, nogil=True)
def encode(params, state, agent, out):
    """Write the observation of ``agent`` into ``out: [prod(obs_shape)] float32`` — every element."""
    mine = agent + 1
    for i in range(9):
        c = state[_CELLS + i]
        out[i] = 1.0 if c == mine else 0.0
        out[9 + i] = 1.0 if (c != 0 and c != mine) else 0.0


DEFAULT_ENCODER = "tictactoe"
ENCODERS = {"tictactoe": (encode, obs_shape, 0.0, 1.0)}  # name -> (encode, shape fn, low, high)

# Optional exports (absent here): chance_pending / chance_outcomes / apply_chance for games with
# chance (see kuhn_poker.py, snake.py) and info_key for imperfect-information games.
