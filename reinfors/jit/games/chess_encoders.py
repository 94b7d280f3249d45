"""Chess observation encoders (probed against reinfors 0.4.0; planes are ``[plane, rank, file]``,
rank 0 = rank 1, so the flat index is ``plane * 64 + square``).

``minimal_chess`` (default, ``(19, 8, 8)``, absolute frame, same for both agents)::

    0-5   white P N B R Q K      6-11  black P N B R Q K
    12    all ones when white is to move
    13-16 castling rights K Q k q (all ones when held)
    17    the en-passant file (a whole file column) after any double push
    18    halfmove clock / 100

``relative_chess`` (``(19, 8, 8)``, the observer's frame): agent 1 sees the board rank-mirrored
with the colours swapped; plane 12 is "the observer is to move", 13-16 own K, own Q, opponent K,
opponent Q.  Its network head frame mirrors the action the same way (``relative_head``).

``openspiel_chess`` (``(20, 8, 8)``, OpenSpiel's ``chess`` observation tensor)::

    0-11  K k Q q R r B b N n P p      12 empty squares
    13    (repetitions - 1) / 2        14 white to move
    15    halfmove clock / 101         16-19 castling Q K q k

``alphazero_chess(history_length=h)`` (``(14 h + 7, 8, 8)``, absolute frame): for ``t < h`` the
position ``t`` plies ago (zeros before the game start) as 12 piece planes (white P..K, black
P..K) and two repetition planes (seen twice, seen three times); then white-to-move, fullmove
number / 100, castling K Q k q, halfmove clock / 100.
"""

from __future__ import annotations

import numpy as np

from reinfors.jit._compile import kernel
from reinfors.jit.games.chess_layout import (
    BOARD,
    CASTLE,
    EP,
    FULL,
    HALF,
    HIST,
    HIST_W,
    P_AZH,
    P_RING,
    PLY,
    REP,
    TURN,
)

# Relative head map: queen direction and knight-move index under a rank mirror.
_QFLIP = np.array([4, 3, 2, 1, 0, 7, 6, 5], np.int64)
_KFLIP = np.array([3, 2, 1, 0, 7, 6, 5, 4], np.int64)
# OpenSpiel plane of each piece code (K Q R B N P, white then black interleaved).
_OS_PLANE = np.array([-1, 10, 8, 6, 4, 2, 0, 11, 9, 7, 5, 3, 1], np.int64)


def shape_minimal(params) -> tuple:
    return (19, 8, 8)


def shape_openspiel(params) -> tuple:
    return (20, 8, 8)


def shape_alphazero(params) -> tuple:
    return (14 * int(params[P_AZH]) + 7, 8, 8)


@kernel
def _fill(out, plane, value):
    for i in range(64):
        out[plane * 64 + i] = value


@kernel
def _zero(out):
    for i in range(out.shape[0]):
        out[i] = 0.0


@kernel
def _ratio(num, den):
    """``num / den`` in float32 arithmetic."""
    return np.float32(num) / np.float32(den)


@kernel(entry=True)
def encode_minimal(params, state, agent, out):
    """``minimal_chess`` into ``out: [19 * 64] float32`` (every element written)."""
    _zero(out)
    for sq in range(64):
        c = state[BOARD + sq]
        if c != 0:
            out[(c - 1) * 64 + sq] = 1.0
    if state[TURN] == 0:
        _fill(out, 12, 1.0)
    for k in range(4):
        if state[CASTLE] & (1 << k):
            _fill(out, 13 + k, 1.0)
    if state[EP] >= 0:
        f = state[EP] % 8
        for r in range(8):
            out[17 * 64 + r * 8 + f] = 1.0
    _fill(out, 18, _ratio(state[HALF], 100))


@kernel(entry=True)
def encode_relative(params, state, agent, out):
    """``relative_chess`` for ``agent`` into ``out: [19 * 64] float32``."""
    _zero(out)
    flip = agent == 1
    for sq in range(64):
        c = state[BOARD + sq]
        if c != 0:
            t = (c - 1) % 6
            col = (c - 1) // 6
            own = col == (1 if flip else 0)
            s = sq ^ 56 if flip else sq
            out[((0 if own else 6) + t) * 64 + s] = 1.0
    if state[TURN] == agent:
        _fill(out, 12, 1.0)
    cs = state[CASTLE]
    if flip:
        cs = ((cs >> 2) & 3) | ((cs & 3) << 2)
    for k in range(4):
        if cs & (1 << k):
            _fill(out, 13 + k, 1.0)
    if state[EP] >= 0:
        f = state[EP] % 8
        for r in range(8):
            out[17 * 64 + r * 8 + f] = 1.0
    _fill(out, 18, _ratio(state[HALF], 100))


@kernel(entry=True)
def encode_openspiel(params, state, agent, out):
    """``openspiel_chess`` into ``out: [20 * 64] float32`` (OpenSpiel's tensor, both agents)."""
    _zero(out)
    for sq in range(64):
        c = state[BOARD + sq]
        if c != 0:
            out[_OS_PLANE[c] * 64 + sq] = 1.0
        else:
            out[12 * 64 + sq] = 1.0
    _fill(out, 13, np.float32((state[REP] - 1) / 2.0))
    if state[TURN] == 0:
        _fill(out, 14, 1.0)
    _fill(out, 15, np.float32(state[HALF] / 101.0))
    cs = state[CASTLE]
    if cs & 2:
        _fill(out, 16, 1.0)
    if cs & 1:
        _fill(out, 17, 1.0)
    if cs & 8:
        _fill(out, 18, 1.0)
    if cs & 4:
        _fill(out, 19, 1.0)


@kernel(entry=True)
def encode_alphazero(params, state, agent, out):
    """``alphazero_chess`` into ``out: [(14 h + 7) * 64] float32`` from the state row's ring."""
    _zero(out)
    h = params[P_AZH]
    ring = params[P_RING]
    ply = state[PLY]
    for t in range(h):
        if ply - t < 0:
            break
        slot = HIST + HIST_W * ((ply - t) % ring)
        base = 14 * t
        for w in range(4):
            word = state[slot + w]
            for i in range(16):
                c = (word >> (4 * i)) & 15
                if c != 0:
                    out[(base + c - 1) * 64 + 16 * w + i] = 1.0
        rep = state[slot + 5]
        if rep >= 2:
            _fill(out, base + 12, 1.0)
        if rep >= 3:
            _fill(out, base + 13, 1.0)
    b = 14 * h
    if state[TURN] == 0:
        _fill(out, b, 1.0)
    _fill(out, b + 1, _ratio(state[FULL], 100))
    for k in range(4):
        if state[CASTLE] & (1 << k):
            _fill(out, b + 2 + k, 1.0)
    _fill(out, b + 6, _ratio(state[HALF], 100))


@kernel(entry=True)
def relative_head(action, agent):
    """``relative_chess`` head index of game ``action`` for ``agent`` (an involution: the same
    function maps a head back to the action).  Agent 1's frame is the rank mirror: the square
    ``sq ^ 56``, queen directions and knight moves flipped north/south, under-promotion planes
    unchanged (their sides are files).  Other agents: identity."""
    if agent != 1:
        return action
    sq = action // 73
    plane = action % 73
    if plane < 56:
        plane = _QFLIP[plane // 7] * 7 + plane % 7
    elif plane < 64:
        plane = 56 + _KFLIP[plane - 56]
    return (sq ^ 56) * 73 + plane


@kernel(entry=True)
def relative_heads(actions, agents, out):
    """Vectorised :func:`relative_head`: ``out[i] = relative_head(actions[i], agents[i])`` (int64)."""
    for i in range(actions.shape[0]):
        out[i] = relative_head(actions[i], agents[i])
