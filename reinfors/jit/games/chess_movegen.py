"""Chess move generation: a 64-square mailbox with precomputed ray / leaper tables.

Squares are ``rank * 8 + file`` (a1 = 0, h1 = 7, a8 = 56, h8 = 63).  Piece codes on the board
(one ``int64`` word per square)::

    0 empty   1..6 white P N B R Q K   7..12 black P N B R Q K   (code = 6 * colour + type)

Legal moves are pseudo-legal moves that do not leave the mover's king attacked: king moves, en
passant, and every move of a pinned piece or while in check are made on the board in place, the
king tested, the move undone; any other move is legal as generated (pins are found once per
position).  Castling has its own through-check rules.  Moves come out in reinfors 0.4.0's legal
order (see :func:`generate`), so the legal mask carries each move's position in that order.  Moves are emitted as AlphaZero 8x8x73 action ids in the *absolute* board
frame (the frame of reinfors 0.4.0, probed)::

    action = from_square * 73 + plane
    plane  0..55   queen-like moves: direction * 7 + (distance - 1), directions
                   0 N, 1 NE, 2 E, 3 SE, 4 S, 5 SW, 6 W, 7 NW  (N = towards rank 8)
    plane 56..63   knight moves (df, dr): (1,2) (2,1) (2,-1) (1,-2) (-1,-2) (-2,-1) (-2,1) (-1,2)
    plane 64..72   under-promotions: 64 + 3 * side + piece, side 0 straight, 1 towards the a-file,
                   2 towards the h-file (absolute files, both colours); piece 0 N, 1 B, 2 R

A queen promotion is the plain pawn move.  Castling is encoded as the king moving onto its own
rook's square (``e1h1`` = plane 16 from e1, ``e1a1`` = plane 45), as 0.4.0 does; UCI text uses the
standard ``e1g1`` / ``e1c1``.

Mailbox rather than bitboards: Numba has no portable count-trailing-zeros intrinsic and mixing
``uint64`` with ``int64`` literals silently promotes to float64, so a mailbox with ray tables is
the robust choice here; ``benchmarks/perft.py`` measures it against python-chess and OpenSpiel.
"""

from __future__ import annotations

import numpy as np

from reinfors.jit._compile import kernel

N_PLANES = 73
N_ACTIONS = 64 * N_PLANES

# Queen directions (file delta, rank delta) in plane order.
DIR_DF = np.array([0, 1, 1, 1, 0, -1, -1, -1], np.int64)
DIR_DR = np.array([1, 1, 0, -1, -1, -1, 0, 1], np.int64)
KN_DF = np.array([1, 2, 2, 1, -1, -2, -2, -1], np.int64)
KN_DR = np.array([2, 1, -1, -2, -2, -1, 1, 2], np.int64)

# Castling-rights bits.
WK, WQ, BK, BQ = 1, 2, 4, 8


def _tables():
    rays = np.full((64, 8, 7), -1, np.int64)
    ray_len = np.zeros((64, 8), np.int64)
    knight = np.full((64, 8), -1, np.int64)
    king = np.full((64, 8), -1, np.int64)
    for sq in range(64):
        f, r = sq % 8, sq // 8
        for d in range(8):
            n = 0
            ff, rr = f + DIR_DF[d], r + DIR_DR[d]
            while 0 <= ff < 8 and 0 <= rr < 8:
                rays[sq, d, n] = rr * 8 + ff
                n += 1
                ff += DIR_DF[d]
                rr += DIR_DR[d]
            ray_len[sq, d] = n
            if 0 <= f + DIR_DF[d] < 8 and 0 <= r + DIR_DR[d] < 8:
                king[sq, d] = (r + DIR_DR[d]) * 8 + f + DIR_DF[d]
            if 0 <= f + KN_DF[d] < 8 and 0 <= r + KN_DR[d] < 8:
                knight[sq, d] = (r + KN_DR[d]) * 8 + f + KN_DF[d]
    return rays, ray_len, knight, king


RAYS, RAY_LEN, KNIGHT, KING = _tables()


def _sorted_tables():
    """Per square the leaper targets (knight, king) in ascending square order (the legal-move
    order within a piece): ``[sq, i] = (to, plane part)`` with the knight index / king direction."""
    kn = np.full((64, 8, 2), -1, np.int64)
    kg = np.full((64, 8, 2), -1, np.int64)
    kn_n, kg_n = np.zeros(64, np.int64), np.zeros(64, np.int64)
    for sq in range(64):
        k = sorted((int(KNIGHT[sq, i]), i) for i in range(8) if KNIGHT[sq, i] >= 0)
        kn[sq, : len(k)] = k
        kn_n[sq] = len(k)
        k = sorted((int(KING[sq, d]), d) for d in range(8) if KING[sq, d] >= 0)
        kg[sq, : len(k)] = k
        kg_n[sq] = len(k)
    return kn, kn_n, kg, kg_n


KNIGHT_SORTED, KNIGHT_N, KING_SORTED, KING_N = _sorted_tables()


def _line_planes():
    """``[from, to]`` -> the queen-like plane ``direction * 7 + distance - 1`` (-1 off the lines)."""
    planes = np.full((64, 64), -1, np.int64)
    for sq in range(64):
        for d in range(8):
            for i in range(RAY_LEN[sq, d]):
                planes[sq, RAYS[sq, d, i]] = d * 7 + i
    return planes


LINE_PLANE = _line_planes()
# Lowest set bit of a 64-bit word by de Bruijn multiplication (Numba has no portable
# count-trailing-zeros): the top six bits of ``lowbit * _DEBRUIJN`` index the table.
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_LSB = np.zeros(64, np.int64)
for _i in range(64):
    _LSB[((1 << _i) * int(_DEBRUIJN) % (1 << 64)) >> 58] = _i
del _i
# A pawn's four targets in ascending square order, per colour: 0 single push, 1 capture towards
# the a-file, 2 capture towards the h-file, 3 double push (white +7 +8 +9 +16; black -16 -9 -8 -7).
PAWN_ORDER = np.array([[1, 0, 2, 3], [3, 1, 0, 2]], np.int64)
# Castling-rights mask kept when a move touches a square (corner rooks and king homes).
_KEEP = np.full(64, 15, np.int64)
_KEEP[0], _KEEP[7], _KEEP[4] = 15 & ~WQ, 15 & ~WK, 15 & ~(WK | WQ)
_KEEP[56], _KEEP[63], _KEEP[60] = 15 & ~BQ, 15 & ~BK, 15 & ~(BK | BQ)
CASTLE_KEEP = _KEEP


@kernel
def colour_of(code):
    """Colour (0 white, 1 black) of a non-empty piece code."""
    return 0 if code <= 6 else 1


@kernel(entry=True)
def attacked(board, sq, by):
    """True when square ``sq`` is attacked by colour ``by`` on ``board: [64] int64``."""
    base = 6 * by
    # pawns: a white pawn attacks from one rank below
    f, r = sq % 8, sq // 8
    pr = r - 1 if by == 0 else r + 1
    if 0 <= pr < 8:
        if f > 0 and board[pr * 8 + f - 1] == base + 1:
            return True
        if f < 7 and board[pr * 8 + f + 1] == base + 1:
            return True
    for k in range(8):
        t = KNIGHT[sq, k]
        if t >= 0 and board[t] == base + 2:
            return True
        t = KING[sq, k]
        if t >= 0 and board[t] == base + 6:
            return True
    for d in range(8):
        diag = d % 2 == 1
        for i in range(RAY_LEN[sq, d]):
            c = board[RAYS[sq, d, i]]
            if c != 0:
                if c == base + 5 or (diag and c == base + 3) or ((not diag) and c == base + 4):
                    return True
                break
    return False


@kernel(entry=True)
def king_square(board, colour):
    """Square of ``colour``'s king (-1 if none)."""
    k = 6 * colour + 6
    for sq in range(64):
        if board[sq] == k:
            return sq
    return -1


@kernel
def _safe(board, colour, frm, to, cap_sq, ksq):
    """Make ``frm -> to`` (capturing on ``cap_sq``, -1 = on ``to``) in place, test the king, undo."""
    moving = board[frm]
    taken_to = board[to]
    taken_cap = 0
    if cap_sq >= 0:
        taken_cap = board[cap_sq]
        board[cap_sq] = 0
    board[to] = moving
    board[frm] = 0
    k = to if ksq == frm else ksq
    ok = not attacked(board, k, 1 - colour)
    board[frm] = moving
    board[to] = taken_to
    if cap_sq >= 0:
        board[cap_sq] = taken_cap
    return ok


@kernel
def _emit(ids, mask, n, action):
    """Append ``action`` as the ``n``-th legal move (0-based): ``ids[n]``, ``mask[action] = n + 1``."""
    if ids is not None:
        ids[n] = action
    if mask is not None:
        mask[action] = n + 1
    return n + 1


@kernel
def _queen_plane(frm, to):
    """Plane of a queen-like move ``frm -> to`` (they lie on one line)."""
    df = to % 8 - frm % 8
    dr = to // 8 - frm // 8
    dist = max(abs(df), abs(dr))
    sf = 0 if df == 0 else (1 if df > 0 else -1)
    sr = 0 if dr == 0 else (1 if dr > 0 else -1)
    for d in range(8):
        if DIR_DF[d] == sf and DIR_DR[d] == sr:
            return d * 7 + dist - 1
    return -1


@kernel
def pins_of(board, turn, ksq):
    """Bitmask (bit ``sq``) of ``turn``'s pieces pinned to its king on ``ksq`` by an enemy slider."""
    enemy = 6 * (1 - turn)
    pins = np.int64(0)
    for d in range(8):
        cand = -1
        for i in range(RAY_LEN[ksq, d]):
            t = RAYS[ksq, d, i]
            c = board[t]
            if c == 0:
                continue
            if cand < 0:
                if colour_of(c) != turn:
                    break
                cand = t
                continue
            if c == enemy + 5 or (c == enemy + 3 and d % 2 == 1) or (c == enemy + 4 and d % 2 == 0):
                pins |= np.int64(1) << cand
            break
    return pins


@kernel(inline="always")
def lowest_square(bits):
    """The lowest set bit's index of a nonzero int64 square set."""
    low = np.uint64(bits & -bits)
    return _LSB[np.int64((low * _DEBRUIJN) >> np.uint64(58))]


@kernel(inline="always")
def _slider_reach(board, frm, first_dir, step):
    """Square set of the squares a slider on ``frm`` reaches along directions ``first_dir``,
    ``first_dir + step``, ... (each ray up to and including its first occupied square)."""
    reach = np.int64(0)
    for d in range(first_dir, 8, step):
        for i in range(RAY_LEN[frm, d]):
            to = RAYS[frm, d, i]
            reach |= np.int64(1) << to
            if board[to] != 0:
                break
    return reach


@kernel
def _legal_move(board, turn, frm, to, ksq, check_all, pins):
    """Whether the pseudo-legal non-king, non-en-passant move ``frm -> to`` is legal: an unpinned
    piece moving while its king is not in check cannot expose the king; otherwise make, test, undo."""
    if not check_all and ((pins >> frm) & 1) == 0:
        return True
    return _safe(board, turn, frm, to, -1, ksq)


@kernel
def _emit_pawn(ids, mask, n, frm, to, side, last_rank):
    """Emit a pawn move onto ``to`` (``side`` 0 straight, 1 towards the a-file, 2 towards the
    h-file); onto the last rank the under-promotions N, B, R first, then the queen (plain move)."""
    if to // 8 == last_rank:
        for pc in range(3):
            n = _emit(ids, mask, n, frm * N_PLANES + 64 + 3 * side + pc)
    return _emit(ids, mask, n, frm * N_PLANES + _queen_plane(frm, to))


@kernel(entry=True)
def generate(board, turn, castle, ep, ids, mask, first_only):
    """Legal moves of ``turn`` as action ids, in reinfors 0.4.0's order (probed; the order of the
    cozy-chess generator): pawns, the en-passant captures, knights, bishops, rooks, queens, the
    king; within a piece type the unpinned pieces by from-square, then the pinned ones; within a
    piece by target square (castling counted as the rook's square), promotions N, B, R, Q.

    Parameters
    ----------
    board : [64] int64 — piece codes (modified and restored in place while testing moves).
    turn : int — colour to move; ``castle`` the rights bits; ``ep`` the en-passant target or -1.
    ids : [>= 256] int64 / int32 or None — receives the ids in that order.
    mask : [4672] uint8 or None — receives each legal id's 1-based position in that order (the
        caller zeroes it; a chess position has at most 218 legal moves).
    first_only : bool — stop after the first legal move (a cheap "has a move" test).

    Returns
    -------
    int — the number of legal moves written (at most 1 when ``first_only``).
    """
    n = 0
    base = 6 * turn
    # One pass over the board: the mover's pieces as square sets per type, and its king.
    pawns = knights = bishops = rooks = queens = np.int64(0)
    ksq = -1
    for sq in range(64):
        t = board[sq] - base
        if t < 1 or t > 6:
            continue
        bit = np.int64(1) << sq
        if t == 1:
            pawns |= bit
        elif t == 2:
            knights |= bit
        elif t == 3:
            bishops |= bit
        elif t == 4:
            rooks |= bit
        elif t == 5:
            queens |= bit
        elif ksq < 0:
            ksq = sq
    enemy = 1 - turn
    in_check = attacked(board, ksq, enemy)
    pins = pins_of(board, turn, ksq)
    fwd = 8 if turn == 0 else -8
    start_rank = 1 if turn == 0 else 6
    last_rank = 7 if turn == 0 else 0
    # Pawns: the four targets in ascending square order (see _PAWN_ORDER).
    for pinned_pass in range(2):
        todo = pawns & pins if pinned_pass else pawns & ~pins
        while todo != 0:
            frm = lowest_square(todo)
            todo &= todo - 1
            f = frm % 8
            for k in range(4):
                kind = PAWN_ORDER[turn, k]
                if kind == 0:  # single push
                    to = frm + fwd
                    if board[to] != 0 or not _legal_move(board, turn, frm, to, ksq, in_check, pins):
                        continue
                    n = _emit_pawn(ids, mask, n, frm, to, 0, last_rank)
                elif kind == 3:  # double push
                    to = frm + 2 * fwd
                    if frm // 8 != start_rank or board[frm + fwd] != 0 or board[to] != 0:
                        continue
                    if not _legal_move(board, turn, frm, to, ksq, in_check, pins):
                        continue
                    n = _emit(ids, mask, n, frm * N_PLANES + (1 if turn == 0 else 29))  # N2 / S2
                else:  # captures (en passant comes after every pawn move)
                    if (kind == 1 and f == 0) or (kind == 2 and f == 7):
                        continue
                    to = frm + fwd + (-1 if kind == 1 else 1)
                    tc = board[to]
                    if tc == 0 or colour_of(tc) == turn:
                        continue
                    if not _legal_move(board, turn, frm, to, ksq, in_check, pins):
                        continue
                    n = _emit_pawn(ids, mask, n, frm, to, kind, last_rank)
                if first_only and n > 0:
                    return n
    if ep >= 0:
        for df in (-1, 1):
            if 0 <= ep % 8 + df < 8:
                frm = ep - fwd + df
                if board[frm] == base + 1 and _safe(board, turn, frm, ep, ep - fwd, ksq):
                    n = _emit(ids, mask, n, frm * N_PLANES + _queen_plane(frm, ep))
                    if first_only:
                        return n
    # Knights, bishops, rooks, queens: targets ascending (the knights' sorted table; a slider's
    # reachable squares as a set, walked from the lowest).
    for t in range(2, 6):
        of_type = knights if t == 2 else bishops if t == 3 else rooks if t == 4 else queens
        for pinned_pass in range(2):
            todo = of_type & pins if pinned_pass else of_type & ~pins
            while todo != 0:
                frm = lowest_square(todo)
                todo &= todo - 1
                if t == 2:
                    for i in range(KNIGHT_N[frm]):
                        to = KNIGHT_SORTED[frm, i, 0]
                        tc = board[to]
                        if tc != 0 and colour_of(tc) == turn:
                            continue
                        if _legal_move(board, turn, frm, to, ksq, in_check, pins):
                            n = _emit(ids, mask, n, frm * N_PLANES + 56 + KNIGHT_SORTED[frm, i, 1])
                            if first_only:
                                return n
                    continue
                # bishops the odd (diagonal) directions, rooks the even ones, queens all
                reach = _slider_reach(board, frm, 0 if t != 3 else 1, 1 if t == 5 else 2)
                while reach != 0:
                    to = lowest_square(reach)
                    reach &= reach - 1
                    tc = board[to]
                    if tc != 0 and colour_of(tc) == turn:
                        continue
                    if _legal_move(board, turn, frm, to, ksq, in_check, pins):
                        n = _emit(ids, mask, n, frm * N_PLANES + LINE_PLANE[frm, to])
                        if first_only:
                            return n
    # The king: its targets ascending, each castling move at its rook's square.
    hr = 0 if turn == 0 else 56
    cq = False
    ck = False
    if castle != 0 and ksq == hr + 4 and not in_check:
        if (
            castle & (WK if turn == 0 else BK)
            and board[hr + 7] == base + 4
            and board[hr + 5] == 0
            and board[hr + 6] == 0
            and not attacked(board, hr + 5, enemy)
            and not attacked(board, hr + 6, enemy)
        ):
            ck = True
        if (
            castle & (WQ if turn == 0 else BQ)
            and board[hr] == base + 4
            and board[hr + 1] == 0
            and board[hr + 2] == 0
            and board[hr + 3] == 0
            and not attacked(board, hr + 3, enemy)
            and not attacked(board, hr + 2, enemy)
        ):
            cq = True
    for i in range(KING_N[ksq] + 1):
        to = KING_SORTED[ksq, i, 0] if i < KING_N[ksq] else 64
        if cq and hr < to:
            cq = False
            n = _emit(ids, mask, n, ksq * N_PLANES + 6 * 7 + 3)  # the king onto the a-rook
            if first_only:
                return n
        if ck and hr + 7 < to:
            ck = False
            n = _emit(ids, mask, n, ksq * N_PLANES + 2 * 7 + 2)  # the king onto the h-rook
            if first_only:
                return n
        if to == 64:
            break
        tc = board[to]
        if tc != 0 and colour_of(tc) == turn:
            continue
        if _safe(board, turn, ksq, to, -1, ksq):
            n = _emit(ids, mask, n, ksq * N_PLANES + 7 * KING_SORTED[ksq, i, 1])
            if first_only:
                return n
    return n


@kernel(entry=True)
def decode(board, turn, action):
    """Decode ``action`` into ``(ok, from, to, promotion type 0 or 2..5, castle flag)``.

    ``to`` is the king's *destination* (g/c file) for castling.  ``ok`` is False when the id does
    not decode (off-board target); legality is the caller's test.
    """
    if action < 0 or action >= N_ACTIONS:
        return False, 0, 0, 0, 0
    frm = action // N_PLANES
    plane = action % N_PLANES
    f, r = frm % 8, frm // 8
    promo = 0
    castle = 0
    if plane < 56:
        d = plane // 7
        dist = plane % 7 + 1
        ff = f + DIR_DF[d] * dist
        rr = r + DIR_DR[d] * dist
        if not (0 <= ff < 8 and 0 <= rr < 8):
            return False, 0, 0, 0, 0
        to = rr * 8 + ff
        c = board[frm]
        if c == 6 * turn + 1 and rr == (7 if turn == 0 else 0):
            promo = 5
        if c == 6 * turn + 6 and board[to] == 6 * turn + 4 and r == rr and abs(ff - f) >= 2:
            castle = 1
            to = r * 8 + (6 if ff > f else 2)
    elif plane < 64:
        k = plane - 56
        ff = f + KN_DF[k]
        rr = r + KN_DR[k]
        if not (0 <= ff < 8 and 0 <= rr < 8):
            return False, 0, 0, 0, 0
        to = rr * 8 + ff
    else:
        u = plane - 64
        side = u // 3
        promo = 2 + u % 3
        df = 0 if side == 0 else (-1 if side == 1 else 1)
        rr = r + (1 if turn == 0 else -1)
        ff = f + df
        if not (0 <= ff < 8 and 0 <= rr < 8):
            return False, 0, 0, 0, 0
        to = rr * 8 + ff
    return True, frm, to, promo, castle


@kernel
def has_legal_ep(board, turn, ep):
    """True when ``turn`` has a legal en-passant capture onto ``ep`` (-1 = none)."""
    if ep < 0:
        return False
    fwd = 8 if turn == 0 else -8
    pawn = 6 * turn + 1
    ksq = king_square(board, turn)
    f = ep % 8
    for df in (-1, 1):
        if 0 <= f + df < 8:
            frm = ep - fwd + df
            if board[frm] == pawn and _safe(board, turn, frm, ep, ep - fwd, ksq):
                return True
    return False


@kernel
def insufficient(board):
    """python-chess / shakmaty ``is_insufficient_material``: neither side can ever mate."""
    for colour in range(2):
        base = 6 * colour
        own = 0
        knights = 0
        bishops = 0
        for sq in range(64):
            c = board[sq]
            if c == 0 or colour_of(c) != colour:
                continue
            own += 1
            t = c - base
            if t == 1 or t == 4 or t == 5:
                return False
            if t == 2:
                knights += 1
            elif t == 3:
                bishops += 1
        if knights > 0:
            if own > 2:
                return False
            for sq in range(64):  # the other side may only have a king and queens
                c = board[sq]
                if c != 0 and colour_of(c) != colour and c - 6 * (1 - colour) not in (5, 6):
                    return False
        elif bishops > 0:
            light = False
            dark = False
            for sq in range(64):
                c = board[sq]
                if c == 3 or c == 9:
                    if (sq // 8 + sq % 8) % 2 == 0:
                        dark = True
                    else:
                        light = True
                if c == 1 or c == 7 or c == 2 or c == 8:
                    return False
            if light and dark:
                return False
    return True


@kernel
def make_move(board, turn, castle, ep, halfmove, frm, to, promo, is_castle):
    """Apply a decoded move on ``board: [64] int64`` in place.

    Returns the new ``(castle, ep, halfmove)`` (``ep`` is the FEN target square after any double
    push, else -1).
    """
    base = 6 * turn
    piece = board[frm]
    new_ep = -1
    new_half = halfmove + 1
    if is_castle != 0:
        hr = frm - frm % 8
        if to % 8 == 6:
            board[hr + 7] = 0
            board[hr + 5] = base + 4
            castle &= CASTLE_KEEP[hr + 7]
        else:
            board[hr] = 0
            board[hr + 3] = base + 4
            castle &= CASTLE_KEEP[hr]
        board[frm] = 0
        board[to] = piece
    else:
        if board[to] != 0:
            new_half = 0
        if piece == base + 1:
            new_half = 0
            if to == ep and (to - frm) % 8 != 0:  # en passant
                board[to - (8 if turn == 0 else -8)] = 0
            if abs(to - frm) == 16:
                new_ep = (to + frm) // 2
            if promo != 0:
                piece = base + promo
        board[to] = piece
        board[frm] = 0
    castle &= CASTLE_KEEP[frm]
    castle &= CASTLE_KEEP[to]
    return castle, new_ep, new_half


@kernel(entry=True)
def perft(board, turn, castle, ep, depth, ids_scr, board_scr):
    """Leaf-node count of the legal move tree to ``depth`` >= 1.

    Scratch: ``ids_scr: [depth + 1, 256] int64``, ``board_scr: [depth + 1, 64] int64``.
    ``board`` is restored on return.
    """
    ids = ids_scr[depth]
    n = generate(board, turn, castle, ep, ids, None, False)
    if depth <= 1:
        return n
    total = 0
    saved = board_scr[depth]
    for s in range(64):
        saved[s] = board[s]
    for i in range(n):
        _, frm, to, promo, cf = decode(board, turn, ids[i])
        c2, ep2, _h = make_move(board, turn, castle, ep, 0, frm, to, promo, cf)
        total += perft(board, 1 - turn, c2, ep2, depth - 1, ids_scr, board_scr)
        for s in range(64):
            board[s] = saved[s]
    return total
