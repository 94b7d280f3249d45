"""Connect 4: 6 rows x 7 columns, two players alternate dropping pieces; four in a row wins.

Cell-index diagram (``cell = row * 7 + col``; row 0 is the **bottom**, as in reinfors 0.4.0's
``Env.state()['board']`` and observation rows)::

    row 5 | 35 36 37 38 39 40 41 |   top
    row 4 | 28 29 30 31 32 33 34 |
    row 3 | 21 22 23 24 25 26 27 |
    row 2 | 14 15 16 17 18 19 20 |
    row 1 |  7  8  9 10 11 12 13 |
    row 0 |  0  1  2  3  4  5  6 |   bottom
           col 0 …            6

State row (``int64``; after the shared header)::

    CELLS  + 0 … 41   0 empty, 1 agent 0, 2 agent 1
    TURN              agent to move; at the end it stays the last mover (as the original)
    RESULT            -1 running, 0/1 winner, 2 draw
    HEIGHT + 0 … 6    pieces in each column (the next free row)
    COUNT             pieces on the board

Default encoder ``connect4``, ``(2, 6, 7)`` float32: plane 0 the observing agent's pieces, plane
1 the opponent's, rows bottom-first (independent of whose turn it is).
Reward keys ``win`` (1), ``loss`` (-1), ``draw`` (0), emitted only at the end.
"""

from __future__ import annotations

import numpy as np

from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import DONE, HEADER

NAME = "connect4"
N_ACTIONS = 7
SIMULTANEOUS = False
REWARD_KEYS = ("win", "loss", "draw")
REWARD_DEFAULTS = (1.0, -1.0, 0.0)
ROWS, COLS = 6, 7

CELLS = HEADER
TURN = HEADER + 42
RESULT = HEADER + 43
HEIGHT = HEADER + 44
COUNT = HEADER + 51
STATE_SIZE = HEADER + 52

_W, _L, _D = 0, 1, 2  # reward-key columns
# The rules' kernels allocate nothing and call nothing: compiled with ``_nrt=False`` they skip
# the reference counting of every array argument (a tree search calls them on every expansion).


def make_params(**kwargs) -> np.ndarray:
    """Connect 4 takes no parameters (besides ``encoder``, handled by the handle)."""
    if kwargs:
        raise TypeError(f"GameHandle.Connect4() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return np.zeros(0, np.int64)


def resolved(params) -> dict:
    return {}


def n_players(params) -> int:
    return 2


def state_size(params) -> int:
    return STATE_SIZE


def obs_shape(params) -> tuple:
    return (2, ROWS, COLS)


def horizon(params) -> int:
    return 0


def inspect(params, state) -> dict:
    """``{'board': 6 rows of 7 bytes (row 0 bottom), 'turn', 'done'}`` as the original."""
    cells = [int(x) for x in state[CELLS : CELLS + 42]]
    return {
        "board": [bytes(cells[r * 7 : r * 7 + 7]) for r in range(ROWS)],
        "turn": int(state[TURN]),
        "done": bool(state[DONE] != 0),
    }


def events(params, state, amounts) -> list:
    """Terminal events in agent order: ``[(0, 'win'), (1, 'loss')]`` / ``[(0, 'draw'), (1, 'draw')]``."""
    out = []
    for agent in range(2):
        for k, key in enumerate(REWARD_KEYS):
            if amounts[agent, k] != 0.0:
                out.append((agent, key))
    return out


def _derived_result(cells) -> int:
    board = np.asarray(cells).reshape(ROWS, COLS)
    for p in (1, 2):
        b = board == p
        if (
            (b[:, :-3] & b[:, 1:-2] & b[:, 2:-1] & b[:, 3:]).any()
            or (b[:-3] & b[1:-2] & b[2:-1] & b[3:]).any()
            or (b[:-3, :-3] & b[1:-2, 1:-2] & b[2:-1, 2:-1] & b[3:, 3:]).any()
            or (b[3:, :-3] & b[2:-1, 1:-2] & b[1:-2, 2:-1] & b[:-3, 3:]).any()
        ):
            return p - 1
    return 2 if (board != 0).all() else -1


def validate_state(params, state) -> str | None:
    """Reject forged rows: cell values, gravity, heights/count, turn, result vs board and DONE."""
    cells = state[CELLS : CELLS + 42]
    if ((cells < 0) | (cells > 2)).any():
        return "cell value out of range"
    if state[TURN] not in (0, 1):
        return f"turn {int(state[TURN])} out of range"
    board = cells.reshape(ROWS, COLS)
    for c in range(COLS):
        col = board[:, c]
        h = int((col != 0).sum())
        if (col[:h] == 0).any() or state[HEIGHT + c] != h:
            return f"column {c} violates gravity or its height word"
    if state[COUNT] != int((cells != 0).sum()):
        return "piece count disagrees with the board"
    derived = _derived_result(cells)
    if state[RESULT] != derived:
        return f"result word {int(state[RESULT])} disagrees with the board ({derived})"
    if (derived >= 0) != (state[DONE] != 0):
        return f"derived done flag {str(derived >= 0).lower()} disagrees with envelope done {str(bool(state[DONE])).lower()}"
    return None


@kernel(entry=True, _nrt=False)
def init(params, state):
    """Empty board, agent 0 to move."""
    for i in range(42):
        state[CELLS + i] = 0
    for c in range(COLS):
        state[HEIGHT + c] = 0
    state[TURN] = 0
    state[RESULT] = -1
    state[COUNT] = 0


@kernel(entry=True, _nrt=False)
def legal(params, state, agent, mask):
    """Columns with a free top cell, for the agent to move; an all-zero mask for the other."""
    n = 0
    mover = state[TURN] == agent
    for c in range(COLS):
        ok = mover and state[HEIGHT + c] < ROWS
        mask[c] = 1 if ok else 0
        if ok:
            n += 1
    return n


@kernel(entry=True, _nrt=False)
def legal_list(params, state, agent, mask, ids):
    """:func:`legal` and the legal columns in ascending order into ``ids`` in one pass (tree
    edges); an empty ``mask`` (a tree node whose mask is never read) asks for the ids only."""
    n = 0
    mover = state[TURN] == agent
    dense = mask.shape[0] != 0
    for c in range(COLS):
        ok = mover and state[HEIGHT + c] < ROWS
        if dense:
            mask[c] = 1 if ok else 0
        if ok:
            ids[n] = c
            n += 1
    return n


@kernel(entry=True, _nrt=False)
def active(params, state, out):
    out[0] = state[TURN]
    return 1


_LINE_DR = np.array([0, 1, 1, 1], np.int64)  # row / column steps of the four lines
_LINE_DC = np.array([1, 0, 1, -1], np.int64)


@kernel(entry=True, _nrt=False)
def step(params, state, actions, amounts):
    """Drop the mover's piece in column ``actions[mover]``; detect a win through it or a full board."""
    p = state[TURN]
    c = actions[p]
    r = state[HEIGHT + c]
    piece = p + 1
    state[CELLS + r * COLS + c] = piece
    state[HEIGHT + c] = r + 1
    state[COUNT] += 1
    won = False
    for k in range(4):  # the four lines through (r, c); array entries, not literals: one compile
        dr, dc = _LINE_DR[k], _LINE_DC[k]
        n = 0  # the piece's cells on the line, both ways from (r, c), excluding (r, c)
        for j in range(2):
            # Walked here, not in a helper: an array handed to a call costs two reference-count
            # calls (no-ops on the engine's meminfo-free rows), eight times a step (measured:
            # ~8% of an Arena Minimax(2) vs Mcts(32) match).
            sr, sc = (dr, dc) if j == 0 else (-dr, -dc)
            rr, cc = r + sr, c + sc
            while 0 <= rr < ROWS and 0 <= cc < COLS and state[CELLS + rr * COLS + cc] == piece:
                n += 1
                rr += sr
                cc += sc
        if n >= 3:
            won = True
            break
    if won:
        state[RESULT] = p
        amounts[p, _W] += 1.0
        amounts[1 - p, _L] += 1.0
    elif state[COUNT] == ROWS * COLS:
        state[RESULT] = 2
        amounts[0, _D] += 1.0
        amounts[1, _D] += 1.0
    else:
        state[TURN] = 1 - p


@kernel(entry=True, _nrt=False)
def is_terminal(params, state):
    return state[RESULT] >= 0


@kernel(entry=True, _nrt=False)
def encode(params, state, agent, out):
    """Plane 0: the observer's pieces; plane 1: the opponent's (rows bottom-first)."""
    mine = agent + 1
    for i in range(42):
        v = state[CELLS + i]
        out[i] = 1.0 if v == mine else 0.0
        out[42 + i] = 1.0 if (v != 0 and v != mine) else 0.0


DEFAULT_ENCODER = "connect4"
ENCODERS = {"connect4": (encode, obs_shape, 0.0, 1.0)}  # name -> (encode, shape fn, low, high)
