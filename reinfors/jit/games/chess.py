"""Chess: standard rules, AlphaZero 8x8x73 actions, four observation encoders.

Rules are in ``chess_movegen.py`` (mailbox move generation); the encoders in
``chess_encoders.py``.  Terminal rules as reinfors 0.4.0 (probed): checkmate (win/loss),
stalemate, the fifty-move rule (automatic at a halfmove clock of 100), threefold repetition
(automatic; positions compared by board, side to move, castling rights and a *legal* en-passant
square, as python-chess's ``is_repetition``) and insufficient material (python-chess's
``is_insufficient_material``) — all draws.  Checkmate takes precedence over the draw rules.
``max_ticks`` (default 512, ``None`` = never) is the engine's truncation horizon; an ``Env``
never truncates (as the original).

State row (``int64``; after the shared header)::

    TURN      colour to move (0 white = agent 0, 1 black = agent 1)
    CASTLE    castling-rights bits: 1 K, 2 Q, 4 k, 8 q
    EP        en-passant target square after any double push (FEN style), else -1
    HALF      halfmove clock;  FULL  fullmove number
    RESULT    -1 running, 0 white won, 1 black won, 2 draw
    PLY       plies played;  REP  occurrences of the current position (1..3)
    BOARD     64 piece codes (see chess_movegen.py), a1 first
    HIST      a ring of ``params[P_RING]`` positions (slot ``ply % ring``), 6 words each:
              4 words of packed 4-bit piece codes, 1 key word (turn | castle << 1 |
              (legal ep + 1) << 5), 1 repetition count.  It serves threefold repetition and the
              AlphaZero encoder's history planes (the history travels in the state row).

Parameter row: ``[max_ticks (u64 word, 0 = None), ring length, alphazero history length]``.
The ring length is ``max(101, history_length)`` (101 covers the fifty-move window).
"""

from __future__ import annotations

import numpy as np

from reinfors._validate import as_unsigned
from reinfors.jit._compile import kernel
from reinfors.jit.games import chess_encoders as _enc
from reinfors.jit.games import chess_movegen as mg
from reinfors.jit.games._contract import DONE, engine_horizon, u64_word, word_u64
from reinfors.jit.games.chess_layout import (
    BOARD,
    CASTLE,
    EP,
    FULL,
    HALF,
    HIST,
    HIST_W,
    P_AZH,
    P_MAX_TICKS,
    P_RING,
    PLY,
    REP,
    RESULT,
    TURN,
)

NAME = "chess"
N_ACTIONS = mg.N_ACTIONS
SIMULTANEOUS = False
LEGAL_RANKS = True  # the legal mask holds each move's position in 0.4.0's order (_contract.py)
REWARD_KEYS = ("win", "loss", "draw")
REWARD_DEFAULTS = (1.0, -1.0, 0.0)
OBS_LOW = -np.inf
OBS_HIGH = np.inf

_W, _L, _D = 0, 1, 2
MIN_RING = 101

START_BOARD = np.array(
    [4, 2, 3, 5, 6, 3, 2, 4] + [1] * 8 + [0] * 32 + [7] * 8 + [10, 8, 9, 11, 12, 9, 8, 10], np.int64
)


def make_params(max_ticks=512, history_length=1) -> np.ndarray:
    """Validate ``max_ticks`` (the original's wording) and pack the parameter row.

    ``history_length`` comes from an ``AlphaZeroChess`` encoder (1 for the others); it sizes the
    position ring of the state row.
    """
    max_ticks = None if max_ticks is None else as_unsigned("max_ticks", max_ticks)
    if max_ticks == 0:
        raise ValueError("max_ticks must be >= 1 (or None to never truncate)")
    h = int(history_length)
    return np.array([u64_word(0 if max_ticks is None else max_ticks), max(MIN_RING, h), h], np.int64)


def resolved(params) -> dict:
    return {"max_ticks": word_u64(params[P_MAX_TICKS]) or None}


def n_players(params) -> int:
    return 2


def state_size(params) -> int:
    return HIST + HIST_W * int(params[P_RING])


def obs_shape(params) -> tuple:
    return (19, 8, 8)


def horizon(params) -> int:
    return engine_horizon(params[P_MAX_TICKS])


def truncation_horizon(params) -> int | None:
    return resolved(params)["max_ticks"]


def max_chance(params) -> int:
    return 0


# ---------------------------------------------------------------------------------------------
# Python-side inspection
# ---------------------------------------------------------------------------------------------

_FEN_CHARS = ".PNBRQKpnbrqk"
_SQ_NAMES = [f + r for r in "12345678" for f in "abcdefgh"]


def fen_of(board, turn, castle, ep, half, full) -> str:
    """FEN of a position (en-passant square after any double push, as 0.4.0 prints it)."""
    rows = []
    for r in range(7, -1, -1):
        row, empty = "", 0
        for f in range(8):
            c = int(board[r * 8 + f])
            if c == 0:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += _FEN_CHARS[c]
        rows.append(row + (str(empty) if empty else ""))
    cs = "".join(ch for bit, ch in ((1, "K"), (2, "Q"), (4, "k"), (8, "q")) if int(castle) & bit) or "-"
    eps = _SQ_NAMES[int(ep)] if int(ep) >= 0 else "-"
    return f"{'/'.join(rows)} {'wb'[int(turn)]} {cs} {eps} {int(half)} {int(full)}"


def inspect(params, state) -> dict:
    """``{fen, turn, done}`` as 0.4.0's ``Env.state()``."""
    fen = fen_of(state[BOARD : BOARD + 64], state[TURN], state[CASTLE], state[EP], state[HALF], state[FULL])
    return {"fen": fen, "turn": int(state[TURN]), "done": bool(state[DONE] != 0)}


def events(params, state, amounts) -> list:
    """``'win'`` / ``'loss'`` / ``'draw'`` per agent at the terminal tick, else ``[]``."""
    out = []
    for agent in range(2):
        for k, key in enumerate(REWARD_KEYS):
            if amounts[agent, k] != 0.0:
                out.append((agent, key))
    return out


def legal_order(params, state, ids) -> list:
    """``Env.legal_actions``: the mover's legal ids in reinfors 0.4.0's order (``ids`` is the
    ascending list from the mask; see ``chess_movegen.generate``)."""
    out = np.zeros(256, np.int64)
    n = legal_ids(params, state.copy(), out)
    return [int(a) for a in out[:n]]


def validate_state(params, state) -> str | None:
    """Reject forged rows: piece codes, kings, flags, the ring's current entry and the result."""
    board = np.asarray(state[BOARD : BOARD + 64])
    if ((board < 0) | (board > 12)).any():
        return "piece code out of range"
    if int((board == 6).sum()) != 1 or int((board == 12).sum()) != 1:
        return "each side needs exactly one king"
    if ((board[:8] == 1) | (board[:8] == 7) | (board[56:] == 1) | (board[56:] == 7)).any():
        return "pawn on a back rank"
    if state[TURN] not in (0, 1) or not 0 <= state[CASTLE] <= 15:
        return "turn or castling word out of range"
    if state[EP] != -1 and not 0 <= state[EP] < 64:
        return "en-passant word out of range"
    if not -1 <= state[RESULT] <= 2 or state[HALF] < 0 or state[FULL] < 1 or state[PLY] < 0:
        return "result or clock word out of range"
    if not 1 <= state[REP] <= 3:
        return "repetition count out of range"
    if (state[RESULT] >= 0) != (state[DONE] == 1):
        return "result word disagrees with the done flag"
    ring = int(params[P_RING])
    slot = HIST + HIST_W * (int(state[PLY]) % ring)
    packed = np.zeros(4, np.int64)
    _pack_board(state[BOARD : BOARD + 64].copy(), packed)
    if not np.array_equal(packed, state[slot : slot + 4]) or state[slot + 5] != state[REP]:
        return "position history disagrees with the board"
    ours = mg.king_square(state[BOARD : BOARD + 64].copy(), 1 - int(state[TURN]))
    if state[RESULT] < 0 and mg.attacked(state[BOARD : BOARD + 64].copy(), ours, int(state[TURN])):
        return "the side not to move is in check"
    return None


# ---------------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------------


@kernel(entry=True)
def _pack_board(board, out):
    """Pack 64 piece codes into ``out: [4] int64`` (4 bits per square, 16 squares a word)."""
    for w in range(4):
        v = 0
        for i in range(16):
            v |= board[16 * w + i] << (4 * i)
        out[w] = v


@kernel
def push_position(params, state):
    """Record the current position in the ring at ``PLY`` and set its repetition count."""
    ring = params[P_RING]
    slot = HIST + HIST_W * (state[PLY] % ring)
    b = state[BOARD : BOARD + 64]
    _pack_board(b, state[slot : slot + 4])
    ep = state[EP]
    lep = ep if mg.has_legal_ep(b, state[TURN], ep) else -1
    key = state[TURN] | (state[CASTLE] << 1) | ((lep + 1) << 5)
    state[slot + 4] = key
    rep = 1
    k = 2
    lim = min(state[HALF], state[PLY])
    while k <= lim:
        o = HIST + HIST_W * ((state[PLY] - k) % ring)
        if (
            state[o + 4] == key
            and state[o] == state[slot]
            and state[o + 1] == state[slot + 1]
            and state[o + 2] == state[slot + 2]
            and state[o + 3] == state[slot + 3]
        ):
            rep += 1
        k += 2
    state[slot + 5] = rep
    state[REP] = rep


@kernel(entry=True)
def init(params, state):
    """The standard starting position, white (agent 0) to move."""
    for i in range(64):
        state[BOARD + i] = START_BOARD[i]
    state[TURN] = 0
    state[CASTLE] = 15
    state[EP] = -1
    state[HALF] = 0
    state[FULL] = 1
    state[RESULT] = -1
    state[PLY] = 0
    push_position(params, state)


@kernel(entry=True)
def tree_copy(params, src, dst):
    """A search child's row from its parent's: every word before the ring, and the ring entries of
    the last ``max(HALF, history - 1)`` plies — the repetition window (a capture or pawn move
    resets ``HALF``, and nothing older can recur) and the ``AlphaZeroChess`` history.  Deeper
    children copy from these rows, whose windows only grow by the plies played since."""
    for i in range(HIST):
        dst[i] = src[i]
    ring = params[P_RING]
    ply = src[PLY]
    back = min(max(src[HALF], params[P_AZH] - 1), ply, ring - 1)
    for k in range(back + 1):
        o = HIST + HIST_W * ((ply - k) % ring)
        for w in range(HIST_W):
            dst[o + w] = src[o + w]


@kernel(entry=True)
def legal(params, state, agent, mask):
    """Legal 8x8x73 ids of the mover into ``mask: [4672] uint8`` as their 1-based position in
    reinfors 0.4.0's legal order (``LEGAL_RANKS``); all zero for the other agent."""
    for a in range(mask.shape[0]):
        mask[a] = 0
    if agent != state[TURN]:
        return 0
    return mg.generate(state[BOARD : BOARD + 64], state[TURN], state[CASTLE], state[EP], None, mask, False)


@kernel(entry=True)
def legal_list(params, state, agent, mask, ids):
    """:func:`legal` and the legal ids in order into ``ids: [>= 218]`` in one pass (tree edges).
    Writes the whole ``mask`` (tree nodes do not clear it first: ``_node_state_info``); an empty
    ``mask`` (a tree node whose mask is never read) asks for the ids only."""
    for a in range(mask.shape[0]):
        mask[a] = 0
    if agent != state[TURN]:
        return 0
    b = state[BOARD : BOARD + 64]
    if mask.shape[0] == 0:
        return mg.generate(b, state[TURN], state[CASTLE], state[EP], ids, None, False)
    return mg.generate(b, state[TURN], state[CASTLE], state[EP], ids, mask, False)


@kernel(entry=True)
def legal_ids(params, state, ids):
    """Legal ids of the mover in reinfors 0.4.0's order into ``ids: [>= 256] int64``; returns the count."""
    return mg.generate(state[BOARD : BOARD + 64], state[TURN], state[CASTLE], state[EP], ids, None, False)


@kernel(entry=True)
def active(params, state, out):
    out[0] = state[TURN]
    return 1


@kernel
def apply_move(state, action):
    """Play ``action`` for the side to move (no legality test)."""
    b = state[BOARD : BOARD + 64]
    turn = state[TURN]
    _, frm, to, promo, cf = mg.decode(b, turn, action)
    c2, ep2, h2 = mg.make_move(b, turn, state[CASTLE], state[EP], state[HALF], frm, to, promo, cf)
    state[CASTLE] = c2
    state[EP] = ep2
    state[HALF] = h2
    if turn == 1:
        state[FULL] += 1
    state[TURN] = 1 - turn
    state[PLY] += 1


@kernel(entry=True)
def step(params, state, actions, amounts):
    """Play the mover's move, record the position, then apply the terminal rules."""
    p = state[TURN]
    apply_move(state, actions[p])
    push_position(params, state)
    b = state[BOARD : BOARD + 64]
    q = state[TURN]
    draw = False
    if mg.generate(b, q, state[CASTLE], state[EP], None, None, True) == 0:
        if mg.attacked(b, mg.king_square(b, q), p):
            state[RESULT] = p
            amounts[p, _W] += 1.0
            amounts[q, _L] += 1.0
        else:
            draw = True
    elif state[HALF] >= 100 or state[REP] >= 3 or mg.insufficient(b):
        draw = True
    if draw:
        state[RESULT] = 2
        amounts[0, _D] += 1.0
        amounts[1, _D] += 1.0


@kernel(entry=True)
def is_terminal(params, state):
    return state[RESULT] >= 0


encode = _enc.encode_minimal
DEFAULT_ENCODER = "minimal_chess"
ENCODERS = {
    "minimal_chess": (_enc.encode_minimal, _enc.shape_minimal, -np.inf, np.inf),
    "relative_chess": (_enc.encode_relative, _enc.shape_minimal, -np.inf, np.inf),
    "openspiel_chess": (_enc.encode_openspiel, _enc.shape_openspiel, -np.inf, np.inf),
    "alphazero_chess": (_enc.encode_alphazero, _enc.shape_alphazero, -np.inf, np.inf),
}
# Encoders whose network head frame is not the game's action frame: name -> (head_index, game_action)
HEAD_MAPS = {"relative_chess": (_enc.relative_head, _enc.relative_head)}
