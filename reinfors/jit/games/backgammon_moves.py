"""Backgammon move generation: OpenSpiel's legal-move rules and 1352-action encoding, in njit.

All kernels work on a *board row* ``b: [52] int64`` (a view into the state row)::

    b[0 … 23]    player 0's (X's) checkers per point      X moves 0 -> 23, bears off past 23
    b[24 … 47]   player 1's (O's) checkers per point      O moves 23 -> 0, bears off below 0
    b[48 + p]    checkers of player p on the bar
    b[50 + p]    checkers of player p borne off (OpenSpiel's ``scores``)

A *checker move* is ``(pos, num)``: ``pos`` a point 0-23 or ``BAR`` (OpenSpiel's ``kBarPos``,
100), ``num`` the die used.  An *action* packs two checker moves as OpenSpiel's
``CheckerMovesToSpielMove``: ``dig0 + 26 * dig1`` with digits 0-23 a point, 24 the bar and 25 a
pass, plus 676 when the first move does not use the higher die.  So one action is one or two
half-moves; a double (``d, d``) takes two decisions of two half-moves each (the state's
``double_turn`` word), exactly as OpenSpiel and reinfors 0.4.0 do.

Legal actions follow OpenSpiel's ``LegalActions`` step for step: every first half-move in
``std::set`` order (``pos * 6 + num - 1``: points ascending, the bar last, dice ascending), then
every second half-move with the other die; when some sequence uses both dice only those count,
else only the single moves with the largest die; a position with no move passes (action 1351).
Like reinfors 0.4.0 (and pyspiel 2.0.2), every sequence is its own action: the same two checker
moves played in either order are two legal actions.  (Later OpenSpiel sources drop the second of
two sequences whose ``ActionToString`` is identical; 0.4.0 does not.)
"""

from __future__ import annotations

import numpy as np

from reinfors.jit._compile import kernel

BAR = 100  # OpenSpiel's kBarPos
PASS_ACTION = 1351  # both digits pass, "low die first" half
N_ACTIONS = 1352


@kernel(inline="always")
def _all_in_home(b, p):
    """True when player ``p`` has nothing on the bar and every checker on its home board."""
    if b[48 + p] > 0:
        return False
    if p == 0:
        for i in range(0, 18):
            if b[i] > 0:
                return False
    else:
        for i in range(6, 24):
            if b[24 + i] > 0:
                return False
    return True


@kernel(inline="always")
def _furthest(b, p):
    """The home point of ``p``'s checker furthest from bearing off (-1: none)."""
    if p == 0:
        for i in range(18, 24):
            if b[i] > 0:
                return i
        return -1
    for i in range(5, -1, -1):
        if b[24 + i] > 0:
            return i
    return -1


@kernel
def singles(b, p, dv, nd, out_pos, out_num):
    """Legal single checker moves of player ``p`` with the distinct ascending dice ``dv[:nd]``
    (OpenSpiel's ``LegalCheckerMoves``), in ``std::set`` order, into ``out_pos/out_num: [>= 48]
    int64``.  Returns the count."""
    n = 0
    own = 24 * p
    opp = 24 * (1 - p)
    if b[48 + p] > 0:
        for k in range(nd):
            v = dv[k]
            t = v - 1 if p == 0 else 24 - v
            if b[opp + t] <= 1:
                out_pos[n] = BAR
                out_num[n] = v
                n += 1
        return n
    home = _all_in_home(b, p)
    far = _furthest(b, p) if home else -1
    for i in range(24):
        if b[own + i] > 0:
            for k in range(nd):
                v = dv[k]
                t = i + v if p == 0 else i - v
                if t > 23 or t < 0:
                    if home and ((p == 0 and t == 24) or (p == 1 and t == -1) or i == far):
                        out_pos[n] = i
                        out_num[n] = v
                        n += 1
                elif b[opp + t] <= 1:
                    out_pos[n] = i
                    out_num[n] = v
                    n += 1
    return n


@kernel
def apply_move(b, p, pos, num):
    """Play checker move ``(pos, num)`` for ``p`` on ``b`` (in place); True when it hit a blot."""
    if pos == BAR:
        b[48 + p] -= 1
        t = num - 1 if p == 0 else 24 - num
    else:
        b[24 * p + pos] -= 1
        t = pos + num if p == 0 else pos - num
    if t > 23 or t < 0:
        b[50 + p] += 1
        return False
    b[24 * p + t] += 1
    o = 24 * (1 - p) + t
    if b[o] == 1:
        b[o] = 0
        b[48 + 1 - p] += 1
        return True
    return False


@kernel(inline="always")
def _digit(pos):
    return 24 if pos == BAR else pos


@kernel
def legal_actions(b0, p, d0, d1, mask):
    """OpenSpiel's legal actions of player ``p`` with dice ``(d0, d1)`` on ``b0: [52] int64``
    into ``mask: [1352] uint8`` (cleared first).  Returns the number of legal actions."""
    for a in range(N_ACTIONS):
        mask[a] = 0
    hi = max(d0, d1)
    lo = min(d0, d1)
    dv = np.empty(2, np.int64)
    dv[0] = lo
    dv[1] = hi
    nd = 1 if lo == hi else 2
    pos1 = np.empty(48, np.int64)
    num1 = np.empty(48, np.int64)
    n1 = singles(b0, p, dv, nd, pos1, num1)
    if n1 == 0:
        mask[PASS_ACTION] = 1
        return 1
    b = np.empty(52, np.int64)
    pos2 = np.empty(48, np.int64)
    num2 = np.empty(48, np.int64)
    dv2 = np.empty(1, np.int64)
    single = np.empty(48, np.int64)  # indices into pos1/num1 of first moves with no follow-up
    n_single = 0
    n_pairs = 0
    count = 0
    for j in range(n1):
        for i in range(52):
            b[i] = b0[i]
        apply_move(b, p, pos1[j], num1[j])
        dv2[0] = hi if num1[j] == lo else lo
        n2 = singles(b, p, dv2, 1, pos2, num2)
        if n2 == 0:
            single[n_single] = j
            n_single += 1
            continue
        base = (0 if num1[j] == hi else 676) + _digit(pos1[j])
        for k in range(n2):
            n_pairs += 1
            a = base + 26 * _digit(pos2[k])
            if mask[a] == 0:
                mask[a] = 1
                count += 1
    if n_pairs > 0:
        return count
    best = 0
    for s in range(n_single):
        best = max(best, num1[single[s]])
    for s in range(n_single):
        j = single[s]
        if num1[j] == best:
            a = (0 if best == hi else 676) + _digit(pos1[j]) + 26 * 25
            if mask[a] == 0:
                mask[a] = 1
                count += 1
    return count


@kernel
def play_action(b, p, action, d0, d1):
    """Apply ``action`` (already validated) for ``p`` with dice ``(d0, d1)`` on ``b`` (in place),
    as OpenSpiel's ``SpielMoveToCheckerMoves`` + ``ApplyCheckerMove``.  Returns the number of
    non-pass half-moves played (0-2)."""
    hi = max(d0, d1)
    lo = min(d0, d1)
    high_first = action < 676
    a = action if high_first else action - 676
    used = 0
    for i in range(2):
        dig = a % 26 if i == 0 else a // 26
        if dig == 25:
            continue
        if i == 0:
            num = hi if high_first else lo
        else:
            num = lo if high_first else hi
        apply_move(b, p, BAR if dig == 24 else dig, num)
        used += 1
    return used
