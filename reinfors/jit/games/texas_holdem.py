"""Fixed-limit Texas Hold'em, 2-9 players (reinfors 0.4.0's rules): chance deal and board,
four betting rounds, all-ins, side pots, showdown with the 7-card evaluator of ``hand_eval.py``.

Rules (probed on 0.4.0; ``docs/original-0.4.0/holdem.md``).  Every seat starts each hand with
``stack`` chips.  Heads-up the button posts the small blind and acts first preflop; with 3+
players the blinds sit left of the button and the seat after the big blind opens.  Postflop the
first seat left of the button still to act opens.  Actions: ``0`` fold (legal only facing a
bet), ``1`` call/check (always legal; all-in for less when short), ``2`` raise to the street's
highest commitment plus the fixed bet (big blind preflop and flop, two big blinds on turn and
river; all-in for less when short), legal while fewer than 4 raises were made on the street
(the big blind counts as the first preflop) and the stack exceeds the amount to call.  A raise
re-opens the action for every other seat that is in the hand and has chips.  When fewer than
two seats can act the remaining board runs out and the hand shows down.  Pots are split in
layers by total commitment (side pots); ties split evenly, odd chips go one each to the tied
winners in seat order left of the button.

Chance (explicit, one outcome at a time, the original's draw order): the button (uniform
seat), then per seat ``0 .. n-1`` one uniform draw over the unordered pairs of the cards still in
the deck, then per street one draw over the flop triples / turn cards / river cards left.
Outcome ``k`` of a deal node is the ``k``-th combination (lexicographic over ascending card
ids) of the cards not yet dealt, so the Env's ``index_hi`` draw over the outcomes is the
original's ``(x * C(rem, m)) >> 64``.  An all-in run-out deals its board *after* the closing
action's step; :func:`settle` then pays the showdown in the same tick (the optional ``settle``
role of the game contract); ``chance_uniform`` lets the runtime draw a node without filling its
up-to-22100-outcome fan.

State row (``int64``; after the shared header; ``n = params[0]``)::

    BUTTON, STREET (0 preflop … 3 river), TO_ACT, RAISES, DEAL (0: button pending, s+1: seat s's
    hole cards pending, n+1: dealt), BOARDN, RUNOUT, OVER, SETTLE, BOARD[5],
    HOLE[n * 2], STACK[n], SC[n] (street commitment), TC[n] (total), FOLD[n], NEED[n],
    HIST: 4 streets x (count, 5n entries ``seat * 3 + action``)

Default encoder ``texas_holdem``, ``(2n + 19, 4, 13)`` planes indexed ``[suit, rank]``: see
:func:`encode`.  Reward key ``scale`` (1): each seat's chip delta at the end.  Information-state
key: see :func:`info_key`.
"""

from __future__ import annotations

import numpy as np

from reinfors._validate import as_signed, as_unsigned
from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import DONE, HEADER
from reinfors.jit.games.hand_eval import eval_hand

NAME = "texas_holdem"
N_ACTIONS = 3
SIMULTANEOUS = False
REWARD_KEYS = ("scale",)
REWARD_DEFAULTS = (1.0,)

BUTTON = HEADER
STREET = HEADER + 1
TO_ACT = HEADER + 2
RAISES = HEADER + 3
DEAL = HEADER + 4
BOARDN = HEADER + 5
RUNOUT = HEADER + 6
OVER = HEADER + 7
SETTLE = HEADER + 8
BOARD = HEADER + 9
SEATS = HEADER + 14  # first per-seat word

MAX_RAISES = 4
STREET_NAMES = ("preflop", "flop", "turn", "river")


def _u32(name, value) -> int:
    """PyO3's u32 extraction: through a C long, then a range check."""
    v = as_signed(name, value, 64)
    if not 0 <= v < 2**32:
        raise OverflowError("out of range integral type conversion attempted")
    return v


def make_params(num_players=6, stack=200, small_blind=5, big_blind=10) -> np.ndarray:
    n = as_unsigned("num_players", num_players)
    stack = _u32("stack", stack)
    sb = _u32("small_blind", small_blind)
    bb = _u32("big_blind", big_blind)
    if not 2 <= n <= 9:
        raise ValueError("num_players must be in 2..=9")
    if sb == 0 or bb == 0:
        raise ValueError("blinds must be positive")
    if sb > bb:
        raise ValueError("small_blind must not exceed big_blind")
    if stack < bb:
        raise ValueError("stack must cover the big blind")
    if stack <= sb:
        raise ValueError("stack must exceed the small blind")
    if stack > 2**24:
        raise ValueError("stack must fit 2^24 chips")
    return np.array([n, stack, sb, bb], np.int64)


def resolved(params) -> dict:
    return {
        "num_players": int(params[0]),
        "stack": int(params[1]),
        "small_blind": int(params[2]),
        "big_blind": int(params[3]),
    }


def n_players(params) -> int:
    return int(params[0])


def _hmax(n):
    return 5 * n  # per-street action bound: n + 4 raises x (n - 1) re-openings


def state_size(params) -> int:
    n = int(params[0])
    return SEATS + 7 * n + 4 * (1 + _hmax(n))


def obs_shape(params) -> tuple:
    return (2 * int(params[0]) + 19, 4, 13)


def horizon(params) -> int:
    return 0


def max_chance(params) -> int:
    return 22100  # C(52, 3) flops


def max_info_key(params) -> int:
    n = int(params[0])
    return 13 + 9 * n + 4 + 8 * _hmax(n)


def _offsets(n):
    """(HOLE, STACK, SC, TC, FOLD, NEED, HIST, stride) word offsets for ``n`` seats."""
    hole = SEATS
    stack = hole + 2 * n
    sc = stack + n
    tc = sc + n
    fold = tc + n
    need = fold + n
    hist = need + n
    return hole, stack, sc, tc, fold, need, hist, 1 + 5 * n


# ---------------------------------------------------------------------------------------------
# Python-side inspection and validation
# ---------------------------------------------------------------------------------------------


def inspect(params, state) -> dict:
    n = int(params[0])
    hole, stack, sc, tc, fold, need, hist, stride = _offsets(n)
    over = int(state[OVER]) != 0
    history = []
    for s in range(4):
        base = hist + s * stride
        cnt = int(state[base])
        history.append([(int(e) // 3, int(e) % 3) for e in state[base + 1 : base + 1 + cnt]])
    return {
        "hole": [bytes(int(c) for c in state[hole + 2 * i : hole + 2 * i + 2] if c >= 0) for i in range(n)],
        "board": bytes(int(c) for c in state[BOARD : BOARD + int(state[BOARDN])]),
        "street": "done" if over else STREET_NAMES[int(state[STREET])],
        "button": int(state[BUTTON]),
        "to_act": int(state[TO_ACT]),
        "stacks": [int(x) for x in state[stack : stack + n]],
        "street_committed": [int(x) for x in state[sc : sc + n]],
        "total_committed": [int(x) for x in state[tc : tc + n]],
        "folded": [bool(x) for x in state[fold : fold + n]],
        "needs_action": [bool(x) for x in state[need : need + n]],
        "raises": int(state[RAISES]),
        "history": history,
        "done": over,
    }


def events(params, state, amounts) -> list:
    """Terminal tick: one raw chip delta per seat in seat order; otherwise ``[]``."""
    if state[DONE] == 0:
        return []
    return [(i, float(amounts[i, 0])) for i in range(int(params[0]))]


def validate_state(params, state) -> str | None:
    """Why ``state`` is not a reachable hold'em row (Env snapshots), or None."""
    n, stack0 = int(params[0]), int(params[1])
    hole, stack, sc, tc, fold, need, hist, stride = _offsets(n)
    w = [int(x) for x in state]
    if w[DEAL] != n + 1 or not 0 <= w[BUTTON] < n:
        return "the deal must be complete (birth chains are transient)"
    if w[SETTLE] != 0:
        return "a pending run-out settlement is transient"
    if w[STREET] not in (0, 1, 2, 3) or w[RUNOUT] not in (0, 1) or w[OVER] not in (0, 1):
        return "street / run-out / over words out of range"
    need_board = 0 if w[STREET] == 0 else w[STREET] + 2
    if w[BOARDN] != need_board:
        return f"{w[BOARDN]} board cards disagree with street {w[STREET]}"
    cards = w[hole : hole + 2 * n] + w[BOARD : BOARD + w[BOARDN]]
    if any(not 0 <= c < 52 for c in cards) or len(set(cards)) != len(cards):
        return "cards must be distinct ids below 52"
    if any(w[hole + 2 * i] >= w[hole + 2 * i + 1] for i in range(n)):
        return "hole cards must be stored in ascending order"
    if any(w[BOARD + i] != -1 for i in range(w[BOARDN], 5)):
        return "undealt board words must be empty (-1)"
    for i in range(n):
        if w[stack + i] < 0 or w[sc + i] < 0 or w[sc + i] > w[tc + i] or w[stack + i] + w[tc + i] != stack0:
            return f"seat {i}: chips not conserved"
        if w[fold + i] not in (0, 1) or w[need + i] not in (0, 1):
            return f"seat {i}: flag words must be 0 or 1"
        if w[need + i] and (w[fold + i] or w[stack + i] == 0):
            return f"seat {i}: a folded or all-in seat cannot need action"
    if not 0 <= w[RAISES] <= MAX_RAISES or not 0 <= w[TO_ACT] < n:
        return "raise counter / seat to act out of range"
    for s in range(4):
        cnt = w[hist + s * stride]
        if not 0 <= cnt <= stride - 1:
            return "malformed action history"
        if s > w[STREET] and cnt:
            return "actions recorded past the current street"
        for e in w[hist + s * stride + 1 : hist + s * stride + 1 + cnt]:
            if not 0 <= e < 3 * n:
                return "malformed action history"
    alive = n - sum(w[fold : fold + n])
    if alive < 1:
        return "every seat folded"
    over = w[OVER] == 1
    if over != bool(state[DONE] != 0):
        return f"hand end disagrees with envelope done {str(bool(state[DONE])).lower()}"
    if not over:
        if alive < 2:
            return "a running hand needs two seats in it"
        if not w[need + w[TO_ACT]]:
            return "the seat to act does not need action"
    return None


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


@kernel
def _comb(a, m):
    if m == 0:
        return 1
    if m == 1:
        return a
    if m == 2:
        return a * (a - 1) // 2
    return a * (a - 1) * (a - 2) // 6


@kernel
def _dead_mask(params, state):
    """Bit mask (52 bits) of every card dealt so far."""
    n = params[0]
    hole = SEATS
    dead = np.int64(0)
    for i in range(2 * n):
        c = state[hole + i]
        if c >= 0:
            dead |= np.int64(1) << c
    for i in range(state[BOARDN]):
        dead |= np.int64(1) << state[BOARD + i]
    return dead


@kernel
def _unrank(dead, k, m, state, off):
    """Write the ``k``-th ``m``-combination (lexicographic) of the cards outside ``dead`` into
    ``state[off : off + m]`` (ascending)."""
    alive = 0
    for c in range(52):
        if not (dead >> c) & 1:
            alive += 1
    seen = 0
    pos = 0
    for c in range(52):
        if m == 0:
            break
        if (dead >> c) & 1:
            continue
        seen += 1
        cnt = _comb(alive - seen, m - 1)
        if k < cnt:
            state[off + pos] = c
            pos += 1
            m -= 1
        else:
            k -= cnt


@kernel
def _next_needing(params, state, start):
    """First seat at or after ``start`` (cyclically) that needs action, or -1."""
    n = params[0]
    need = SEATS + 6 * n
    for j in range(n):
        i = (start + j) % n
        if state[need + i] != 0:
            return i
    return -1


@kernel(entry=True)
def init(params, state):
    """Empty table: nothing dealt (button, holes and board are pending chance)."""
    n = params[0]
    for i in range(HEADER, state.shape[0]):
        state[i] = 0
    for i in range(5):
        state[BOARD + i] = -1
    for i in range(2 * n):
        state[SEATS + i] = -1
    for i in range(n):
        state[SEATS + 2 * n + i] = params[1]


@kernel(entry=True)
def chance_pending(params, state):
    n = params[0]
    if state[DEAL] <= n:
        return True
    if state[OVER] != 0 or state[SETTLE] != 0:
        return False
    st = state[STREET]
    want = 0 if st == 0 else st + 2
    return state[BOARDN] < want


@kernel(entry=True)
def chance_uniform(params, state):
    """Every deal node is uniform: its outcome count (the runtime then draws without a fan)."""
    n = params[0]
    d = state[DEAL]
    if d == 0:
        return n
    if d <= n:
        rem = 52 - 2 * (d - 1)
        return rem * (rem - 1) // 2
    rem = 52 - 2 * n - state[BOARDN]
    return _comb(rem, 3) if state[STREET] == 1 else rem


@kernel(entry=True)
def chance_outcomes(params, state, probs):
    """Uniform outcomes: button seats, then hole pairs, flop triples, turn / river cards of the
    cards still in the deck (outcome ``k`` = the ``k``-th combination, see the module doc)."""
    m = chance_uniform(params, state)
    p = 1.0 / m
    for i in range(m):
        probs[i] = p
    return m


@kernel
def _post(params, state, seat, amount):
    n = params[0]
    stack = SEATS + 2 * n
    a = min(amount, state[stack + seat])
    state[stack + seat] -= a
    state[stack + n + seat] += a
    state[stack + 2 * n + seat] += a


@kernel
def _start_betting(params, state):
    """Seat to act on a fresh postflop street: first seat left of the button needing action."""
    nxt = _next_needing(params, state, (state[BUTTON] + 1) % params[0])
    if nxt >= 0:
        state[TO_ACT] = nxt


@kernel
def _new_street(params, state, st):
    """Advance to street ``st``: clear street commitments and raises; seats with chips need
    action unless fewer than two can act (then the board runs out)."""
    n = params[0]
    stack = SEATS + 2 * n
    sc = stack + n
    fold = sc + 2 * n
    need = fold + n
    state[STREET] = st
    state[RAISES] = 0
    can = 0
    for i in range(n):
        state[sc + i] = 0
        if state[fold + i] == 0 and state[stack + i] > 0:
            can += 1
    for i in range(n):
        state[need + i] = 1 if (can >= 2 and state[fold + i] == 0 and state[stack + i] > 0) else 0
    if can < 2:
        state[RUNOUT] = 1


@kernel(entry=True)
def apply_chance(params, state, outcome):
    n = params[0]
    d = state[DEAL]
    if d == 0:
        b = outcome
        state[BUTTON] = b
        if n == 2:
            sb_seat = b
            bb_seat = (b + 1) % n
        else:
            sb_seat = (b + 1) % n
            bb_seat = (b + 2) % n
        _post(params, state, sb_seat, params[2])
        _post(params, state, bb_seat, params[3])
        state[RAISES] = 1
        need = SEATS + 6 * n
        for i in range(n):
            state[need + i] = 1 if state[SEATS + 2 * n + i] > 0 else 0
        first = _next_needing(params, state, b if n == 2 else (bb_seat + 1) % n)
        state[TO_ACT] = first if first >= 0 else b
        state[DEAL] = 1
        return
    dead = _dead_mask(params, state)
    if d <= n:
        _unrank(dead, outcome, 2, state, SEATS + 2 * (d - 1))
        state[DEAL] = d + 1
        return
    st = state[STREET]
    cnt = 3 if st == 1 else 1
    _unrank(dead, outcome, cnt, state, BOARD + state[BOARDN])
    state[BOARDN] += cnt
    if state[RUNOUT] != 0:
        if st < 3:
            _new_street(params, state, st + 1)
        else:
            state[SETTLE] = 1
    else:
        _start_betting(params, state)


@kernel(entry=True)
def legal(params, state, agent, mask):
    n = params[0]
    mask[0] = 0
    mask[1] = 0
    mask[2] = 0
    if state[OVER] != 0 or agent != state[TO_ACT]:
        return 0
    stack = SEATS + 2 * n
    sc = stack + n
    mx = 0
    for i in range(n):
        mx = max(mx, state[sc + i])
    tocall = mx - state[sc + agent]
    cnt = 1
    mask[1] = 1
    if tocall > 0:
        mask[0] = 1
        cnt += 1
    if state[RAISES] < MAX_RAISES and state[stack + agent] > tocall:
        mask[2] = 1
        cnt += 1
    return cnt


@kernel(entry=True)
def active(params, state, out):
    if state[OVER] != 0:
        return 0
    out[0] = state[TO_ACT]
    return 1


@kernel(entry=True)
def is_terminal(params, state):
    return state[OVER] != 0


@kernel(entry=True)
def _payout(params, state, amounts):
    """Pay the pot(s) into ``amounts[:, 0]`` as chip deltas and end the hand."""
    n = params[0]
    hole = SEATS
    tc = SEATS + 4 * n
    fold = tc + n
    win = np.zeros(n, np.int64)
    alive = 0
    last = -1
    for i in range(n):
        if state[fold + i] == 0:
            alive += 1
            last = i
    if alive == 1:
        pot = 0
        for i in range(n):
            pot += state[tc + i]
        win[last] = pot
    else:
        strength = np.full(n, -1, np.int64)
        cards = np.empty(7, np.int64)
        for j in range(5):
            cards[2 + j] = state[BOARD + j]
        for i in range(n):
            if state[fold + i] == 0:
                cards[0] = state[hole + 2 * i]
                cards[1] = state[hole + 2 * i + 1]
                strength[i] = eval_hand(cards, 7)
        prev = 0
        top = 0
        for i in range(n):
            if state[fold + i] == 0 and state[tc + i] > top:
                top = state[tc + i]
        while prev < top:
            level = top
            for i in range(n):
                c = state[tc + i]
                if state[fold + i] == 0 and prev < c < level:
                    level = c
            layer = 0
            for i in range(n):
                c = state[tc + i]
                if level == top:  # the last layer also takes any folded excess
                    layer += max(0, c - prev)
                else:
                    layer += max(0, min(c, level) - prev)
            best = -1
            for i in range(n):
                if state[fold + i] == 0 and state[tc + i] >= level and strength[i] > best:
                    best = strength[i]
            k = 0
            for i in range(n):
                if state[fold + i] == 0 and state[tc + i] >= level and strength[i] == best:
                    k += 1
            share = layer // k
            odd = layer - share * k
            for j in range(n):
                i = (state[BUTTON] + 1 + j) % n
                if state[fold + i] == 0 and state[tc + i] >= level and strength[i] == best:
                    win[i] += share
                    if odd > 0:
                        win[i] += 1
                        odd -= 1
            prev = level
    for i in range(n):
        amounts[i, 0] += float(win[i] - state[tc + i])
    state[OVER] = 1
    state[SETTLE] = 0


@kernel(entry=True)
def step(params, state, actions, amounts):
    """The seat to act folds / calls / raises; closes the street, the hand or starts a run-out."""
    n = params[0]
    stack = SEATS + 2 * n
    sc = stack + n
    tc = sc + n
    fold = tc + n
    need = fold + n
    hist = need + n
    stride = 1 + 5 * n
    p = state[TO_ACT]
    a = actions[p]
    st = state[STREET]
    mx = 0
    for i in range(n):
        mx = max(mx, state[sc + i])
    tocall = mx - state[sc + p]
    if a == 0:
        state[fold + p] = 1
    else:
        if a == 1:
            put = min(tocall, state[stack + p])
        else:
            bet = params[3] if st < 2 else 2 * params[3]
            put = min(mx + bet - state[sc + p], state[stack + p])
            state[RAISES] += 1
        state[stack + p] -= put
        state[sc + p] += put
        state[tc + p] += put
        if a == 2:
            for i in range(n):
                if i != p and state[fold + i] == 0 and state[stack + i] > 0:
                    state[need + i] = 1
    state[need + p] = 0
    base = hist + st * stride
    state[base + 1 + state[base]] = p * 3 + a
    state[base] += 1
    alive = 0
    for i in range(n):
        if state[fold + i] == 0:
            alive += 1
    if alive == 1:
        _payout(params, state, amounts)
        return
    nxt = _next_needing(params, state, (p + 1) % n)
    if nxt >= 0:
        state[TO_ACT] = nxt
        return
    if st == 3:
        _payout(params, state, amounts)
        return
    _new_street(params, state, st + 1)


@kernel(entry=True)
def settle(params, state, amounts):
    """After the chance of a tick: pay a finished run-out's showdown (returns True: the tick
    ends the episode), else nothing (False)."""
    if state[SETTLE] != 0 and state[OVER] == 0:
        _payout(params, state, amounts)
        return True
    return False


@kernel(entry=True)
def encode(params, state, agent, out):
    """Planes ``[plane, suit, rank]`` flattened (``out: [(2n + 19) * 52] float32``)::

        0 own hole cards   1 board cards   2 pot / (n * stack)   3 to call / stack
        4 own stack / stack   5 + street one-hot (4; river once over)   9 raises / 4
        10 ((button - agent) mod n) / n
        11 + 2k, 12 + 2k   opponent (agent + 1 + k) mod n, k < n - 1: in hand (1), stack / stack
        2n + 9 + 2s, 2n + 10 + 2s   street s history, cell i = action i:
                           ((actor - agent) mod n + 1) / n, (action + 1) / 3
        2n + 17, 2n + 18   turn card, river card
    """
    n = params[0]
    s0 = params[1]
    hole = SEATS
    stack = hole + 2 * n
    sc = stack + n
    tc = sc + n
    fold = tc + n
    hist = fold + 2 * n
    stride = 1 + 5 * n
    for i in range(out.shape[0]):
        out[i] = 0.0
    for j in range(2):
        c = state[hole + 2 * agent + j]
        if c >= 0:
            out[(c % 4) * 13 + c // 4] = 1.0
    bn = state[BOARDN]
    for j in range(bn):
        c = state[BOARD + j]
        out[52 + (c % 4) * 13 + c // 4] = 1.0
    pot = 0
    mx = 0
    for i in range(n):
        pot += state[tc + i]
        mx = max(mx, state[sc + i])
    v_pot = np.float32(pot / (n * s0))
    v_call = np.float32((mx - state[sc + agent]) / s0)
    v_stack = np.float32(state[stack + agent] / s0)
    v_raise = np.float32(state[RAISES] / 4.0)
    v_pos = np.float32(((state[BUTTON] - agent) % n) / n)
    street = 3 if state[OVER] != 0 else state[STREET]  # a finished hand shows the river plane
    for c in range(52):
        out[2 * 52 + c] = v_pot
        out[3 * 52 + c] = v_call
        out[4 * 52 + c] = v_stack
        out[(5 + street) * 52 + c] = 1.0
        out[9 * 52 + c] = v_raise
        out[10 * 52 + c] = v_pos
    for k in range(n - 1):
        o = (agent + 1 + k) % n
        v_in = np.float32(1.0 if state[fold + o] == 0 else 0.0)
        v_st = np.float32(state[stack + o] / s0)
        for c in range(52):
            out[(11 + 2 * k) * 52 + c] = v_in
            out[(12 + 2 * k) * 52 + c] = v_st
    for s in range(4):
        base = hist + s * stride
        pa = (2 * n + 9 + 2 * s) * 52
        for i in range(state[base]):
            e = state[base + 1 + i]
            out[pa + i] = np.float32((((e // 3) - agent) % n + 1) / n)
            out[pa + 52 + i] = np.float32((e % 3 + 1) / 3.0)
    for j in range(3, bn):
        c = state[BOARD + j]
        out[(2 * n + 14 + j) * 52 + (c % 4) * 13 + c // 4] = 1.0


@kernel
def _put_u32(out, pos, v):
    out[pos] = v & 255
    out[pos + 1] = (v >> 8) & 255
    out[pos + 2] = (v >> 16) & 255
    out[pos + 3] = (v >> 24) & 255
    return pos + 4


@kernel(entry=True)
def info_key(params, state, agent, out):
    """``[agent, hole0, hole1, board_len, board..., button, street (4 = over), to_act, raises]``
    then per seat ``stack u32le, street commitment u32le, folded | needs_action << 1`` and per
    street ``count, (seat, action) ...``.  Returns the key length."""
    n = params[0]
    hole = SEATS
    stack = hole + 2 * n
    sc = stack + n
    fold = sc + 2 * n
    need = fold + n
    hist = need + n
    stride = 1 + 5 * n
    out[0] = agent
    out[1] = state[hole + 2 * agent]
    out[2] = state[hole + 2 * agent + 1]
    bn = state[BOARDN]
    out[3] = bn
    pos = 4
    for j in range(bn):
        out[pos] = state[BOARD + j]
        pos += 1
    out[pos] = state[BUTTON]
    out[pos + 1] = 4 if state[OVER] != 0 else state[STREET]
    out[pos + 2] = state[TO_ACT]
    out[pos + 3] = state[RAISES]
    pos += 4
    for i in range(n):
        pos = _put_u32(out, pos, state[stack + i])
        pos = _put_u32(out, pos, state[sc + i])
        out[pos] = state[fold + i] | (state[need + i] << 1)
        pos += 1
    for s in range(4):
        base = hist + s * stride
        cnt = state[base]
        out[pos] = cnt
        pos += 1
        for i in range(cnt):
            e = state[base + 1 + i]
            out[pos] = e // 3
            out[pos + 1] = e % 3
            pos += 2
    return pos


DEFAULT_ENCODER = "texas_holdem"
ENCODERS = {"texas_holdem": (encode, obs_shape, 0.0, 1.0)}  # name -> (encode, shape fn, low, high)
