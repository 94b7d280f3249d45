"""GridWorld: one agent walks a ``size x size`` grid to a goal cell.

Cell-index diagram for ``size = 5`` (``cell = row * size + col``; row 0 is the top; the default
goal is the far corner ``(size-1, size-1)``)::

          col 0   1   2   3   4
    row 0 |  0   1   2   3   4 |
    row 1 |  5   6   7   8   9 |        action 0 = up    (row - 1)
    row 2 | 10  11  12  13  14 |        action 1 = down  (row + 1)
    row 3 | 15  16  17  18  19 |        action 2 = left  (col - 1)
    row 4 | 20  21  22  23  24 |  G     action 3 = right (col + 1)

A move off the grid leaves the agent in place (the tick still counts).  The start cell is a
chance node: uniform over every cell but the goal, drawn as the original does (one draw of the
chance stream picks the k-th non-goal cell in row-major order), so seeded Envs start where
reinfors 0.4.0's do.  ``max_ticks`` is the truncation horizon the *engine* applies; an ``Env``
never truncates (as the original).

State row (``int64``; after the shared header)::

    ROW, COL     agent position (-1, -1 while the start is pending)
    PENDING      1 until the start cell is drawn

Parameter row: ``[size, goal_row, goal_col, max_ticks (0 = None)]``.
Default encoder ``gridworld``, ``(2, size, size)``: plane 0 the agent, plane 1 the goal.
Reward keys ``step`` (0; every tick that does not reach the goal) and ``goal`` (1).
"""

from __future__ import annotations

import numpy as np

from reinfors._validate import as_signed, as_unsigned
from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import DONE, HEADER, engine_horizon, u64_word, word_u64

NAME = "gridworld"
N_ACTIONS = 4
SIMULTANEOUS = False
REWARD_KEYS = ("step", "goal")
REWARD_DEFAULTS = (0.0, 1.0)
CHANCE_IN_STEP = False  # the start cell is drawn at reset only: tree searches see no chance

ROW = HEADER
COL = HEADER + 1
PENDING = HEADER + 2
STATE_SIZE = HEADER + 3

P_SIZE, P_GOAL_R, P_GOAL_C, P_MAX_TICKS = 0, 1, 2, 3


def make_params(size=5, goal_row=None, goal_col=None, max_ticks=1000) -> np.ndarray:
    """Validate the constructor arguments (the original's order and wording) and pack them."""
    size = as_signed("size", size, 32)
    goal_row = None if goal_row is None else as_signed("goal_row", goal_row, 32)
    goal_col = None if goal_col is None else as_signed("goal_col", goal_col, 32)
    max_ticks = None if max_ticks is None else as_unsigned("max_ticks", max_ticks)
    if max_ticks == 0:
        raise ValueError("max_ticks must be >= 1 (or None to never truncate)")
    if size < 2:
        raise ValueError(f"size must be >= 2, got {size}")
    if 2 * size * size >= 2**31:
        raise ValueError(f"size {size} makes the observation tensor exceed 2^31 elements")
    gr = size - 1 if goal_row is None else goal_row
    gc = size - 1 if goal_col is None else goal_col
    if not (0 <= gr < size and 0 <= gc < size):
        raise ValueError(f"goal ({gr}, {gc}) is outside the {size}x{size} grid")
    ticks_word = u64_word(0 if max_ticks is None else max_ticks)
    return np.array([size, gr, gc, ticks_word], np.int64)


def resolved(params) -> dict:
    p = params
    max_ticks = word_u64(p[P_MAX_TICKS])
    return {"size": int(p[0]), "goal_row": int(p[1]), "goal_col": int(p[2]), "max_ticks": max_ticks or None}


def n_players(params) -> int:
    return 1


def state_size(params) -> int:
    return STATE_SIZE


def obs_shape(params) -> tuple:
    s = int(params[P_SIZE])
    return (2, s, s)


def horizon(params) -> int:
    """The engine's truncation horizon (0 = None)."""
    return engine_horizon(params[P_MAX_TICKS])


def truncation_horizon(params) -> int | None:
    """The public horizon: ``max_ticks`` as given (a u64), or None."""
    return resolved(params)["max_ticks"]


def max_chance(params) -> int:
    return int(params[P_SIZE]) ** 2


def inspect(params, state) -> dict:
    return {"pos": (int(state[ROW]), int(state[COL])), "done": bool(state[DONE] != 0)}


def events(params, state, amounts) -> list:
    """Every tick: ``[(0, {'reached_goal': bool})]``."""
    return [(0, {"reached_goal": bool(amounts[0, 1] != 0.0)})]


def validate_state(params, state) -> str | None:
    size = int(params[P_SIZE])
    r, c = int(state[ROW]), int(state[COL])
    if state[PENDING] != 0:
        return "start cell still pending"
    if not (0 <= r < size and 0 <= c < size):
        return f"position ({r}, {c}) outside the {size}x{size} grid"
    at_goal = r == params[P_GOAL_R] and c == params[P_GOAL_C]
    if at_goal != bool(state[DONE] != 0):
        return f"state done flag {str(at_goal).lower()} disagrees with envelope done {str(bool(state[DONE])).lower()}"
    return None


@kernel(entry=True)
def init(params, state):
    """No position yet: the start cell is a pending chance node."""
    state[ROW] = -1
    state[COL] = -1
    state[PENDING] = 1


@kernel(entry=True)
def chance_pending(params, state):
    return state[PENDING] != 0


@kernel(entry=True)
def chance_outcomes(params, state, probs):
    """Outcome = cell index; uniform over every cell but the goal."""
    s = params[P_SIZE]
    goal = params[P_GOAL_R] * s + params[P_GOAL_C]
    n = s * s
    w = 1.0 / (n - 1)
    for i in range(n):
        probs[i] = 0.0 if i == goal else w
    return n


@kernel(entry=True)
def apply_chance(params, state, outcome):
    s = params[P_SIZE]
    state[ROW] = outcome // s
    state[COL] = outcome % s
    state[PENDING] = 0


@kernel(entry=True)
def legal(params, state, agent, mask):
    for a in range(4):
        mask[a] = 1
    return 4


@kernel(entry=True)
def active(params, state, out):
    out[0] = 0
    return 1


@kernel(entry=True)
def step(params, state, actions, amounts):
    """Move (walls block); ``goal`` on arrival, else ``step``."""
    s = params[P_SIZE]
    a = actions[0]
    r = state[ROW]
    c = state[COL]
    if a == 0:
        r -= 1
    elif a == 1:
        r += 1
    elif a == 2:
        c -= 1
    else:
        c += 1
    if 0 <= r < s and 0 <= c < s:
        state[ROW] = r
        state[COL] = c
    if state[ROW] == params[P_GOAL_R] and state[COL] == params[P_GOAL_C]:
        amounts[0, 1] += 1.0
    else:
        amounts[0, 0] += 1.0


@kernel(entry=True)
def is_terminal(params, state):
    return state[ROW] == params[P_GOAL_R] and state[COL] == params[P_GOAL_C]


@kernel(entry=True)
def encode(params, state, agent, out):
    """Plane 0: one-hot agent cell; plane 1: one-hot goal cell."""
    s = params[P_SIZE]
    n = s * s
    for i in range(2 * n):
        out[i] = 0.0
    if state[ROW] >= 0:
        out[state[ROW] * s + state[COL]] = 1.0
    out[n + params[P_GOAL_R] * s + params[P_GOAL_C]] = 1.0


DEFAULT_ENCODER = "gridworld"
ENCODERS = {"gridworld": (encode, obs_shape, 0.0, 1.0)}  # name -> (encode, shape fn, low, high)
