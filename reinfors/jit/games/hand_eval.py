"""A 5-to-7-card poker hand evaluator (njit, table-free) for Texas Hold'em showdowns.

Cards are ids ``0 .. 51`` with ``rank = id // 4`` (``0`` = deuce … ``12`` = ace) and
``suit = id % 4`` (reinfors 0.4.0's card numbering).  :func:`eval_hand` returns a strength
``int64`` where a higher value is a better hand and equal values tie exactly::

    strength = category << 20 | k1 << 16 | k2 << 12 | k3 << 8 | k4 << 4 | k5

``category``: 0 high card, 1 pair, 2 two pair, 3 trips, 4 straight, 5 flush, 6 full house,
7 quads, 8 straight flush; ``k1 … k5`` the deciding ranks in order (unused ones 0).  The
evaluation is one pass over the cards into rank counts and per-suit rank masks, then a few
13-bit mask scans: no table, no allocation, a few hundred instructions per hand.
"""

from __future__ import annotations

import numpy as np

from reinfors.jit._compile import kernel

HIGH_CARD = 0
PAIR = 1
TWO_PAIR = 2
TRIPS = 3
STRAIGHT = 4
FLUSH = 5
FULL_HOUSE = 6
QUADS = 7
STRAIGHT_FLUSH = 8

CATEGORY_NAMES = (
    "high card",
    "pair",
    "two pair",
    "trips",
    "straight",
    "flush",
    "full house",
    "quads",
    "straight flush",
)


@kernel
def _straight_top(mask):
    """Top rank of the best 5-rank run in a 13-bit rank ``mask`` (the wheel A-5 tops at 3), or -1."""
    for top in range(12, 3, -1):
        run = (mask >> (top - 4)) & 31
        if run == 31:
            return top
    # wheel: A, 2, 3, 4, 5
    if (mask & 0b1000000001111) == 0b1000000001111:
        return 3
    return -1


@kernel
def _popcount13(mask):
    """Set bits of a 13-bit rank mask."""
    c = 0
    for r in range(13):
        c += (mask >> r) & 1
    return c


@kernel
def _top_ranks(mask, k):
    """The ``k`` highest ranks set in ``mask`` packed 4 bits each (first = highest), left-aligned
    into 5 kicker slots."""
    out = 0
    got = 0
    for r in range(12, -1, -1):
        if got == k:
            break
        if (mask >> r) & 1:
            out = (out << 4) | r
            got += 1
    for _ in range(got, 5):
        out = out << 4
    return out


@kernel
def eval_hand(cards, n):
    """Strength of the best 5-card hand among ``cards[:n]`` (``int64`` ids, ``5 <= n <= 7``).

    Parameters
    ----------
    cards : int64[>= n]
        Distinct card ids ``0 .. 51`` (``rank = id // 4``, ``suit = id % 4``).
    n : int
        How many of ``cards`` to use.

    Returns
    -------
    int64
        ``category << 20 | kickers``; higher is better, equal values tie.
    """
    counts = 0  # 3 bits per rank
    m0 = 0
    m1 = 0
    m2 = 0
    m3 = 0
    allmask = 0
    for i in range(n):
        c = cards[i]
        r = c // 4
        s = c % 4
        counts += np.int64(1) << (3 * r)
        bit = np.int64(1) << r
        allmask |= bit
        if s == 0:
            m0 |= bit
        elif s == 1:
            m1 |= bit
        elif s == 2:
            m2 |= bit
        else:
            m3 |= bit
    flush = -1
    fmask = 0
    if _popcount13(m0) >= 5:
        flush, fmask = 0, m0
    elif _popcount13(m1) >= 5:
        flush, fmask = 1, m1
    elif _popcount13(m2) >= 5:
        flush, fmask = 2, m2
    elif _popcount13(m3) >= 5:
        flush, fmask = 3, m3
    if flush >= 0:
        sf = _straight_top(fmask)
        if sf >= 0:
            return (np.int64(STRAIGHT_FLUSH) << 20) | (sf << 16)
    quad = -1
    trip1 = -1
    trip2 = -1
    pair1 = -1
    pair2 = -1
    pair3 = -1
    for r in range(12, -1, -1):
        c = (counts >> (3 * r)) & 7
        if c == 4:
            quad = r
        elif c == 3:
            if trip1 < 0:
                trip1 = r
            elif trip2 < 0:
                trip2 = r
        elif c == 2:
            if pair1 < 0:
                pair1 = r
            elif pair2 < 0:
                pair2 = r
            elif pair3 < 0:
                pair3 = r
    if quad >= 0:
        kick = _top_ranks(allmask & ~(1 << quad), 1) >> 16
        return (np.int64(QUADS) << 20) | (quad << 16) | (kick << 12)
    if trip1 >= 0 and (trip2 >= 0 or pair1 >= 0):
        other = trip2
        if pair1 > other:
            other = pair1
        return (np.int64(FULL_HOUSE) << 20) | (trip1 << 16) | (other << 12)
    if flush >= 0:
        return (np.int64(FLUSH) << 20) | _top_ranks(fmask, 5)
    st = _straight_top(allmask)
    if st >= 0:
        return (np.int64(STRAIGHT) << 20) | (st << 16)
    if trip1 >= 0:
        kick = _top_ranks(allmask & ~(1 << trip1), 2) >> 12
        return (np.int64(TRIPS) << 20) | (trip1 << 16) | (kick << 8)
    if pair2 >= 0:
        rest = allmask & ~(1 << pair1) & ~(1 << pair2)
        kick = _top_ranks(rest, 1) >> 16
        return (np.int64(TWO_PAIR) << 20) | (pair1 << 16) | (pair2 << 12) | (kick << 8)
    if pair1 >= 0:
        kick = _top_ranks(allmask & ~(1 << pair1), 3) >> 8
        return (np.int64(PAIR) << 20) | (pair1 << 16) | (kick << 4)
    return np.int64(HIGH_CARD) << 20 | _top_ranks(allmask, 5)


@kernel(entry=True)
def eval_many(hands, n, out):
    """Batched :func:`eval_hand`: ``hands: [B, >= n] int64`` -> ``out: [B] int64``."""
    for b in range(hands.shape[0]):
        out[b] = eval_hand(hands[b], n)


def category(strength: int) -> int:
    """The category index (0 high card … 8 straight flush) of a strength value."""
    return int(strength) >> 20
