"""Backgammon: OpenSpiel's rules (full scoring, no doubling cube) with explicit dice chance.

Board (OpenSpiel's absolute numbering; ``b[p][i]`` = checkers of player ``p`` on point ``i``)::

    point   0  1 … 5 | 6 … 11 | 12 … 17 | 18 … 23
    X (0)   2                5        3 .. 5        moves 0 -> 23, home 18-23, bears off past 23
    O (1)               5 .. 3        5          2  moves 23 -> 0, home 0-5, bears off below 0

(X: 2 on 0, 5 on 11, 3 on 16, 5 on 18; O: 2 on 23, 5 on 12, 3 on 7, 5 on 5.)

Dice are chance nodes resolved by the caller (``chance_pending/chance_outcomes/apply_chance``):

* the opening roll (at reset) has OpenSpiel's 30 uniform outcomes: ``o < 15`` X starts with
  non-double roll ``o``, else O starts with roll ``o - 15`` — the original draws it with one
  ``index_hi(30)`` of its chance stream, so seeded Envs open as reinfors 0.4.0's (seed 0: O
  starts with 3-6);
* after every turn the next roll is one node of 21 outcomes in OpenSpiel's order (the 15
  non-doubles ``1-2 … 5-6`` at 1/18, then ``1-1 … 6-6`` at 1/36), drawn by inverse CDF.

The step stops at "chance pending", so searches can resample, commit or expand the 21 rolls.
One action plays up to two half-moves (``backgammon_moves.py`` has the encoding and the legal
move rules); a double takes two decisions with the same dice (``double_turn``), no chance in
between.  A player with no legal move passes (action 1351).  The game ends when a player has
borne off all 15 checkers: margin 3 (backgammon) when the loser bore off none and still has a
checker on the bar or in the winner's home board, 2 (gammon) when it bore off none, else 1.

State row (``int64``; after the shared header)::

    BOARD + 0 … 51   board row: X points, O points, bars, borne off (see backgammon_moves.py)
    TO_MOVE          player to move next (-1 before the opening roll); after a turn it is already
                     the opponent while the roll is pending, and stays so at the end
    DICE + 0, 1      the roll (low, high); 0 while a roll is pending and after the end
    DOUBLE           1 on the second decision of a double
    PHASE            0 decision, 1 opening roll pending, 2 roll pending

Default encoder ``backgammon``, ``(200, 1, 1)`` = OpenSpiel's observation tensor for the
observer: per point of its own then the opponent's checkers ``[n == 1, n == 2, n == 3,
max(n - 3, 0)]`` (192), then own bar, own borne off, own turn, the same three for the opponent,
and the two dice.  Unbounded Box (-inf, inf).  Reward keys ``win`` 1, ``gammon`` 2,
``backgammon`` 3: at the end the winner gets +1 and the loser -1 on the one key of the margin.
"""

from __future__ import annotations

import numpy as np

from reinfors._validate import as_unsigned
from reinfors.jit._compile import kernel
from reinfors.jit.games import backgammon_moves as mv
from reinfors.jit.games._contract import DONE, HEADER, TERMINAL, engine_horizon, u64_word, word_u64

NAME = "backgammon"
N_ACTIONS = 1352
SIMULTANEOUS = False
REWARD_KEYS = ("win", "gammon", "backgammon")
REWARD_DEFAULTS = (1.0, 2.0, 3.0)

P_MAX_TICKS = 0

BOARD = HEADER
TO_MOVE = BOARD + 52
DICE = TO_MOVE + 1
DOUBLE = DICE + 2
PHASE = DOUBLE + 1
STATE_SIZE = PHASE + 1

PH_DECIDE, PH_OPENING, PH_ROLL = 0, 1, 2
CHECKERS = 15

# OpenSpiel's kChanceOutcomeValues (low, high) in outcome order.
ROLLS = np.array(
    [[lo, hi] for lo in range(1, 6) for hi in range(lo + 1, 7)] + [[d, d] for d in range(1, 7)],
    np.int64,
)
_START = ((0, 2), (11, 5), (16, 3), (18, 5))  # X's opening points; O's mirror them (23 - i)
_START_PTS = np.array([s[0] for s in _START], np.int64)
_START_CNT = np.array([s[1] for s in _START], np.int64)


# ---------------------------------------------------------------------------------------------
# Python side
# ---------------------------------------------------------------------------------------------


def make_params(max_ticks=1000) -> np.ndarray:
    max_ticks = None if max_ticks is None else as_unsigned("max_ticks", max_ticks)
    if max_ticks == 0:
        raise ValueError("max_ticks must be >= 1 (or None to never truncate)")
    return np.array([u64_word(0 if max_ticks is None else max_ticks)], np.int64)


def resolved(params) -> dict:
    return {"max_ticks": word_u64(params[P_MAX_TICKS]) or None}


def n_players(params) -> int:
    return 2


def state_size(params) -> int:
    return STATE_SIZE


def obs_shape(params) -> tuple:
    return (200, 1, 1)


def horizon(params) -> int:
    """The engine's truncation horizon (0 = None)."""
    return engine_horizon(params[P_MAX_TICKS])


def truncation_horizon(params) -> int | None:
    """The public horizon: ``max_ticks`` as given (a u64), or None."""
    return resolved(params)["max_ticks"]


def max_chance(params) -> int:
    return 30


def inspect(params, state) -> dict:
    """The original's ``Env.state()``: ``{'board': [X bytes(24), O bytes(24)], 'bar', 'scores',
    'to_move', 'dice', 'double_turn'}``."""
    b = [int(x) for x in state[BOARD : BOARD + 52]]
    return {
        "board": [bytes(b[0:24]), bytes(b[24:48])],
        "bar": bytes(b[48:50]),
        "scores": bytes(b[50:52]),
        "to_move": int(state[TO_MOVE]),
        "dice": bytes([int(state[DICE]), int(state[DICE + 1])]),
        "double_turn": bool(state[DOUBLE] != 0),
    }


def events(params, state, amounts) -> list:
    """Terminal tick: ``[(p, {'result': 'win'/'loss', 'margin': 1/2/3}) for p in (0, 1)]``."""
    if state[DONE] != TERMINAL:
        return []
    winner = 0 if state[BOARD + 50] == CHECKERS else 1
    margin = 1
    for k in range(3):
        if amounts[winner, k] != 0.0:
            margin = k + 1
    return [(p, {"result": "win" if p == winner else "loss", "margin": margin}) for p in (0, 1)]


def validate_state(params, state) -> str | None:
    b = [int(x) for x in state[BOARD : BOARD + 52]]
    if any(x < 0 for x in b):
        return "negative checker count"
    for p in (0, 1):
        total = sum(b[24 * p : 24 * p + 24]) + b[48 + p] + b[50 + p]
        if total != CHECKERS:
            return f"player {p} has {total} checkers (want {CHECKERS})"
    if any(b[i] > 0 and b[24 + i] > 0 for i in range(24)):
        return "both players on one point"
    if b[50] == CHECKERS and b[51] == CHECKERS:
        return "both players bore off every checker"
    phase, to_move, dbl = int(state[PHASE]), int(state[TO_MOVE]), int(state[DOUBLE])
    d = (int(state[DICE]), int(state[DICE + 1]))
    over = b[50] == CHECKERS or b[51] == CHECKERS
    if phase not in (PH_DECIDE, PH_OPENING, PH_ROLL) or dbl not in (0, 1):
        return "malformed phase words"
    if phase != PH_DECIDE:
        return "a pending roll is transient (snapshots hold resolved dice)"
    if to_move not in (0, 1):
        return f"player to move {to_move} out of range"
    if over != (int(state[DONE]) == TERMINAL):
        return f"borne-off counts disagree with envelope done {str(bool(state[DONE])).lower()}"
    if not over or dbl:
        if not (1 <= d[0] <= d[1] <= 6):
            return f"dice {d} out of range"
        if dbl and d[0] != d[1]:
            return "double turn without a double"
    elif d != (0, 0):
        return f"dice {d} after the end"
    return None


# ---------------------------------------------------------------------------------------------
# njit side
# ---------------------------------------------------------------------------------------------


@kernel(entry=True)
def init(params, state):
    """The opening position; the opening roll (who starts, and with what) is pending chance."""
    for i in range(HEADER, STATE_SIZE):
        state[i] = 0
    for k in range(4):
        i, n = _START_PTS[k], _START_CNT[k]
        state[BOARD + i] = n
        state[BOARD + 24 + 23 - i] = n
    state[TO_MOVE] = -1
    state[PHASE] = PH_OPENING


@kernel(entry=True)
def chance_pending(params, state):
    return state[PHASE] != PH_DECIDE


@kernel(entry=True)
def chance_outcomes(params, state, probs):
    """Opening: 30 uniform outcomes; later 21 rolls (non-doubles 1/18, doubles 1/36)."""
    if state[PHASE] == PH_OPENING:
        for o in range(30):
            probs[o] = 1.0 / 30.0
        return 30
    for o in range(15):
        probs[o] = 1.0 / 18.0
    for o in range(15, 21):
        probs[o] = 1.0 / 36.0
    return 21


@kernel(entry=True)
def apply_chance(params, state, outcome):
    o = outcome
    if state[PHASE] == PH_OPENING:
        if o < 15:
            state[TO_MOVE] = 0
        else:
            state[TO_MOVE] = 1
            o -= 15
    state[DICE] = ROLLS[o, 0]
    state[DICE + 1] = ROLLS[o, 1]
    state[DOUBLE] = 0
    state[PHASE] = PH_DECIDE


@kernel(entry=True)
def legal(params, state, agent, mask):
    if state[PHASE] != PH_DECIDE or state[TO_MOVE] != agent:
        for a in range(N_ACTIONS):
            mask[a] = 0
        return 0
    return mv.legal_actions(state[BOARD : BOARD + 52], agent, state[DICE], state[DICE + 1], mask)


@kernel(entry=True)
def active(params, state, out):
    out[0] = state[TO_MOVE]
    return 1


@kernel(entry=True)
def is_terminal(params, state):
    return state[BOARD + 50] == CHECKERS or state[BOARD + 51] == CHECKERS


@kernel
def _margin(state, loser):
    """1 win, 2 gammon (the loser bore off nothing), 3 backgammon (and it still has a checker
    on the bar or in the winner's home board)."""
    if state[BOARD + 50 + loser] > 0:
        return 1
    if state[BOARD + 48 + loser] > 0:
        return 3
    lo = 0 if loser == 0 else 18
    for i in range(lo, lo + 6):
        if state[BOARD + 24 * loser + i] > 0:
            return 3
    return 2


@kernel(entry=True)
def step(params, state, actions, amounts):
    """Play the mover's action; a double's first decision keeps the dice (double turn), else
    the turn passes and the next roll is pending; at the end score the margin."""
    p = state[TO_MOVE]
    d0 = state[DICE]
    d1 = state[DICE + 1]
    used = mv.play_action(state[BOARD : BOARD + 52], p, actions[p], d0, d1)
    if state[DOUBLE] == 0 and d0 == d1 and used == 2:
        state[DOUBLE] = 1
    else:
        state[DOUBLE] = 0
        state[DICE] = 0
        state[DICE + 1] = 0
        state[TO_MOVE] = 1 - p
        state[PHASE] = PH_ROLL
    for w in range(2):
        if state[BOARD + 50 + w] == CHECKERS:
            state[PHASE] = PH_DECIDE
            k = _margin(state, 1 - w) - 1
            amounts[w, k] += 1.0
            amounts[1 - w, k] -= 1.0


@kernel(entry=True)
def encode(params, state, agent, out):
    """OpenSpiel's 200-float observation tensor for ``agent`` (``out: [200] float32``)."""
    opp = 1 - agent
    j = 0
    for who in range(2):
        pl = agent if who == 0 else opp
        for i in range(24):
            c = state[BOARD + 24 * pl + i]
            out[j] = 1.0 if c == 1 else 0.0
            out[j + 1] = 1.0 if c == 2 else 0.0
            out[j + 2] = 1.0 if c == 3 else 0.0
            out[j + 3] = c - 3.0 if c > 3 else 0.0
            j += 4
    for who in range(2):
        pl = agent if who == 0 else opp
        out[j] = state[BOARD + 48 + pl]
        out[j + 1] = state[BOARD + 50 + pl]
        out[j + 2] = 1.0 if state[TO_MOVE] == pl else 0.0
        j += 3
    out[198] = state[DICE]
    out[199] = state[DICE + 1]


DEFAULT_ENCODER = "backgammon"
ENCODERS = {"backgammon": (encode, obs_shape, -np.inf, np.inf)}  # name -> (encode, shape fn, low, high)
