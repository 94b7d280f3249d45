"""UCI <-> AlphaZero 8x8x73 action helpers: ``rf.chess_uci_action`` / ``rf.chess_action_uci``.

Both take a FEN (six space-separated fields, validated as reinfors 0.4.0 does: one king a side,
no pawns on the back ranks, castling rights backed by a king and a rook on their home squares, a
plausible en-passant square, clocks in range, the side not to move not in check, no impossible
material) and answer bad input with the original's ``ValueError`` wording.  Castling is the
standard UCI ``e1g1`` / ``e1c1`` (the action encodes it as the king moving onto its rook).
Per-call Python work; the legal move set comes from the njit generator of ``rf.games.Chess``.
"""

from __future__ import annotations

import numpy as np

from ._validate import as_unsigned, rust_debug

__all__ = ["chess_uci_action", "chess_action_uci"]

_PIECES = {ch: i + 1 for i, ch in enumerate("PNBRQKpnbrqk")}
_FILES = "abcdefgh"
_PROMO = {2: "n", 3: "b", 4: "r", 5: "q"}


def _sq_name(sq: int) -> str:
    return _FILES[sq % 8] + str(sq // 8 + 1)


def _uint(text: str, lo: int, hi: int) -> int | None:
    body = text[1:] if text.startswith("+") else text
    if not body.isdigit() or not body.isascii():
        return None
    v = int(body)
    return v if lo <= v <= hi else None


def parse_fen(fen: str):
    """``(board [64] int64, turn, castle bits, ep square or -1, halfmove, fullmove)`` or None."""
    parts = fen.split(" ")
    if len(parts) != 6:
        return None
    placement, side, castling, ep_text, half_text, full_text = parts
    rows = placement.split("/")
    if len(rows) != 8:
        return None
    board = np.zeros(64, np.int64)
    for i, row in enumerate(rows):
        r, f = 7 - i, 0
        for ch in row:
            if ch.isdigit() and ch.isascii():
                f += int(ch)
            elif ch in _PIECES:
                if f >= 8:
                    return None
                board[r * 8 + f] = _PIECES[ch]
                f += 1
            else:
                return None
            if f > 8:
                return None
        if f != 8:
            return None
    if side not in ("w", "b"):
        return None
    turn = 0 if side == "w" else 1
    castle = 0
    if castling != "-":
        for ch in castling:
            bit = {"K": 1, "Q": 2, "k": 4, "q": 8, "H": 1, "A": 2, "h": 4, "a": 8}.get(ch)
            if bit is None or castle & bit:
                return None
            castle |= bit
    for bit, king_sq, rook_sq, k, rk in ((1, 4, 7, 6, 4), (2, 4, 0, 6, 4), (4, 60, 63, 12, 10), (8, 60, 56, 12, 10)):
        if castle & bit and (board[king_sq] != k or board[rook_sq] != rk):
            return None
    ep = -1
    if ep_text != "-":
        if len(ep_text) != 2 or ep_text[0] not in _FILES or ep_text[1] not in "36":
            return None
        ep = _FILES.index(ep_text[0]) + 8 * (int(ep_text[1]) - 1)
        fwd = 8 if turn == 0 else -8
        if ep // 8 != (5 if turn == 0 else 2):
            return None
        if board[ep] != 0 or board[ep + fwd] != 0 or board[ep - fwd] != (7 if turn == 0 else 1):
            return None
    half = _uint(half_text, 0, 100)
    full = _uint(full_text, 1, 65535)
    if half is None or full is None:
        return None
    if int((board == 6).sum()) != 1 or int((board == 12).sum()) != 1:
        return None
    back = np.concatenate([board[:8], board[56:]])
    if ((back == 1) | (back == 7)).any():
        return None
    for colour in range(2):
        b = 6 * colour
        pawns = int((board == b + 1).sum())
        if pawns > 8 or int(((board > b) & (board <= b + 6)).sum()) > 16:
            return None
        sq = np.arange(64)
        light = int(((board == b + 3) & ((sq // 8 + sq % 8) % 2 == 1)).sum())
        dark = int(((board == b + 3) & ((sq // 8 + sq % 8) % 2 == 0)).sum())
        promoted = (
            max(0, int((board == b + 2).sum()) - 2)
            + max(0, light - 1)
            + max(0, dark - 1)
            + max(0, int((board == b + 4).sum()) - 2)
            + max(0, int((board == b + 5).sum()) - 1)
        )
        if pawns + promoted > 8:
            return None
    from .jit.games import chess_movegen as mg

    their_king = mg.king_square(board, 1 - turn)
    if mg.attacked(board, their_king, turn):
        return None
    return board, turn, castle, ep, half, full


def _position(fen):
    if not isinstance(fen, str):
        raise TypeError(f"argument 'fen': '{type(fen).__name__}' object cannot be converted to 'PyString'")
    pos = parse_fen(fen)
    if pos is None:
        raise ValueError(f"invalid FEN: {rust_debug(fen)}")
    return pos


def _legal(pos) -> list[int]:
    from .jit.games import chess_movegen as mg

    board, turn, castle, ep = pos[0], pos[1], pos[2], pos[3]
    ids = np.zeros(256, np.int64)
    b = board.copy()
    n = mg.generate(b, turn, castle, ep, ids, None, False)
    return [int(a) for a in ids[:n]]


def _uci_of(board, turn, action) -> str | None:
    from .jit.games import chess_movegen as mg

    ok, frm, to, promo, _castle = mg.decode(board.copy(), turn, action)
    if not ok:
        return None
    return _sq_name(int(frm)) + _sq_name(int(to)) + _PROMO.get(int(promo), "")


def chess_action_uci(action: int, fen: str) -> str:
    """The UCI text of 8x8x73 ``action`` in the position ``fen``.

    Args:
        action: an AlphaZero 8x8x73 action id (0 to 4671), as ``rf.games.Chess`` uses.
        fen: the position in Forsyth-Edwards notation.

    Returns:
        The move in UCI notation (``"e2e4"``, ``"e7e8q"``).

    Raises:
        TypeError: ``action`` is not an int or ``fen`` not a str.
        OverflowError: a negative ``action``.
        ValueError: a malformed ``fen``, or an action that does not decode to a legal move.
    """
    a = as_unsigned("action", action)
    pos = _position(fen)
    board, turn = pos[0], pos[1]
    uci = _uci_of(board, turn, a) if a < 4672 else None
    if uci is None:
        raise ValueError(f'action {a} does not decode in "{fen}"')
    if a not in _legal(pos):
        raise ValueError(f'action {a} decodes to {uci} which is not legal in "{fen}"')
    return uci


def chess_uci_action(uci: str, fen: str) -> int:
    """The 8x8x73 action id of the UCI move ``uci`` in the position ``fen``.

    Args:
        uci: a move in UCI notation (``"e2e4"``).
        fen: the position in Forsyth-Edwards notation.

    Returns:
        The AlphaZero 8x8x73 action id (0 to 4671).

    Raises:
        TypeError: ``uci`` or ``fen`` is not a str.
        ValueError: a malformed ``fen``, or a move that is not legal in it.
    """
    if not isinstance(uci, str):
        raise TypeError(f"argument 'uci': '{type(uci).__name__}' object cannot be converted to 'PyString'")
    pos = _position(fen)
    board, turn = pos[0], pos[1]
    for a in _legal(pos):
        if _uci_of(board, turn, a) == uci:
            return a
    raise ValueError(f"{rust_debug(uci)} is not a legal move in {rust_debug(fen)}")
