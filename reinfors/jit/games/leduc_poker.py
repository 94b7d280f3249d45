"""Two-player Leduc poker (OpenSpiel's ``leduc_poker`` rules): imperfect information, chance deal.

Deck of 6 cards ``0 .. 5``, rank ``card // 2`` (two suits per rank).  Both players ante 1.  Two
betting rounds; player 0 opens each.  Actions: ``0`` fold, ``1`` call (check when nothing is
owed), ``2`` raise (by 2 in round 1, by 4 in round 2; at most 2 raises per round).  Fold is legal
only when facing a bet.  A round closes on a call that is not its first action; after round 1
the public card is dealt (a chance node *after* the step that closed the round).  Showdown: a
private card pairing the public card wins, else the higher rank, equal ranks split.

The deal is chance nodes uniform over the cards still in the deck in ascending order (two
private cards, then the public card once round 1 closes) — the original's sorted-deck
``pop(k)`` with ``k`` drawn from its chance stream, lazily (a hand folded in round 1 draws no
public card) — so seeded Envs deal what reinfors 0.4.0 deals.

State row (``int64``; after the shared header)::

    CARD0, CARD1        private card of each seat (-1 until dealt)
    PUB                 public card (-1 until dealt)
    ROUND               0 (first round) or 1 (second round)
    H1 + 0 … 3, L1      round-1 actions and their count
    H2 + 0 … 3, L2      round-2 actions and their count
    CON0, CON1          chips each seat has put in (ante included)
    RAISES              raises in the current round
    MOVER               seat to act
    FOLDED              seat that folded (-1: none)
    OVER                1 once the hand is over
    DEALT               private cards dealt so far

Default encoder ``leduc_poker``, ``(21, 1, 1)``: slots ``0..5`` one-hot of the observer's card,
``6..11`` one-hot of the public card, ``12`` = 1.0 in round 2, ``13..16`` the round-1 actions and
``17..20`` the round-2 actions as ``(action + 1) / 3`` (fold 1/3, call 2/3, raise 1; 0 not yet).
Reward key ``scale`` (1): the raw chip delta of each seat at the end (zero-sum).
Information-state key: ``bytes([agent, card, public or 255, L1, *round1, L2, *round2])``.
"""

from __future__ import annotations

import numpy as np

from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import DONE, HEADER

NAME = "leduc_poker"
N_ACTIONS = 3
SIMULTANEOUS = False
REWARD_KEYS = ("scale",)
REWARD_DEFAULTS = (1.0,)

FOLD = 0
CALL = 1
RAISE = 2

N_CARDS = 6
MAX_RAISES = 2
ROUND_LEN = 4  # check, raise, re-raise, call

CARD0 = HEADER
PUB = HEADER + 2
ROUND = HEADER + 3
H1 = HEADER + 4
L1 = H1 + ROUND_LEN
H2 = L1 + 1
L2 = H2 + ROUND_LEN
CON0 = L2 + 1
RAISES = CON0 + 2
MOVER = RAISES + 1
FOLDED = MOVER + 1
OVER = FOLDED + 1
DEALT = OVER + 1
STATE_SIZE = DEALT + 1

OBS_SIZE = 21
KEY_SIZE = 5 + 2 * ROUND_LEN
_NO_PARAMS = np.zeros(1, np.int64)  # the game has no parameters


def make_params() -> np.ndarray:
    return np.zeros(1, np.int64)


def resolved(params) -> dict:
    return {}


def n_players(params) -> int:
    return 2


def state_size(params) -> int:
    return STATE_SIZE


def obs_shape(params) -> tuple:
    return (OBS_SIZE, 1, 1)


def horizon(params) -> int:
    return 0


def max_chance(params) -> int:
    return N_CARDS


def max_info_key(params) -> int:
    return KEY_SIZE


def inspect(params, state) -> dict:
    pub = int(state[PUB])
    return {
        "cards": bytes(int(c) for c in state[CARD0 : CARD0 + 2] if c >= 0),
        "public": None if pub < 0 else pub,
        "round": int(state[ROUND]),
        "history": [
            bytes(int(a) for a in state[H1 : H1 + int(state[L1])]),
            bytes(int(a) for a in state[H2 : H2 + int(state[L2])]),
        ],
        "done": bool(state[DONE] != 0),
    }


def events(params, state, amounts) -> list:
    """Terminal tick: one raw chip delta per seat in seat order; otherwise ``[]``."""
    if state[DONE] == 0:
        return []
    return [(0, float(amounts[0, 0])), (1, float(amounts[1, 0]))]


def _replay_round(row, hist, rnd):
    """Replay one round's actions onto ``row`` (plain Python); the error or None."""
    for a in hist:
        if row[OVER] or row[ROUND] > rnd:
            return "actions continue past a closed round"
        mask = np.zeros(N_ACTIONS, np.uint8)
        legal(_NO_PARAMS, row, row[MOVER], mask)
        if not mask[a]:
            return "history contains an illegal action"
        step(_NO_PARAMS, row, np.array([a, a], np.int64), np.zeros((2, 1), np.float64))
    return None


def _replay(cards, public, h1, h2):
    """Replay a history in plain Python: ``(expected state row, error)`` (snapshot validation)."""
    row = np.zeros(STATE_SIZE, np.int64)
    init(_NO_PARAMS, row)
    row[CARD0], row[CARD0 + 1] = cards
    row[DEALT] = 2
    err = _replay_round(row, h1, 0)
    if err is not None:
        return None, err
    closed = row[ROUND] == 1
    if h2 and not closed:
        return None, "actions continue past a closed round"
    if h2 and public < 0:
        return None, "history contains an illegal action"
    if public >= 0 and not closed:
        return None, "public card revealed before round 1 closed"
    row[PUB] = public
    err = _replay_round(row, h2, 1)
    if err is not None:
        return None, err
    if closed and not row[OVER] and public < 0:
        return None, "live round-2 state without the public card (reveals are transient)"
    return row, None


def validate_state(params, state) -> str | None:
    cards = [int(state[CARD0]), int(state[CARD0 + 1])]
    public = int(state[PUB])
    if int(state[DEALT]) != 2 or min(cards) < 0:
        return "both cards must be dealt (birth chains are transient)"
    for c in cards + ([public] if public >= 0 else []):
        if c >= N_CARDS:
            return f"card id {c} out of range"
    if public < -1:
        return f"card id {public} out of range"
    if len(set(cards + ([public] if public >= 0 else []))) != len(cards) + (public >= 0):
        return "a card appears twice"
    n1, n2 = int(state[L1]), int(state[L2])
    if not (0 <= n1 <= ROUND_LEN and 0 <= n2 <= ROUND_LEN):
        return "malformed action history"
    h1 = [int(a) for a in state[H1 : H1 + n1]]
    h2 = [int(a) for a in state[H2 : H2 + n2]]
    pad = [int(x) for x in state[H1 + n1 : H1 + ROUND_LEN]] + [int(x) for x in state[H2 + n2 : H2 + ROUND_LEN]]
    if any(a not in (0, 1, 2) for a in h1 + h2) or any(pad):
        return "malformed action history"
    row, err = _replay(cards, public, h1, h2)
    if err is not None:
        return err
    if bool(row[OVER]) != bool(state[DONE] != 0):
        return f"history terminality disagrees with envelope done {str(bool(state[DONE])).lower()}"
    if any(int(row[i]) != int(state[i]) for i in range(HEADER, STATE_SIZE)):
        return "bookkeeping words disagree with the history"
    return None


@kernel(entry=True)
def init(params, state):
    """No cards yet (the deal is pending chance), empty history, antes in."""
    for i in range(HEADER, STATE_SIZE):
        state[i] = 0
    state[CARD0] = -1
    state[CARD0 + 1] = -1
    state[PUB] = -1
    state[CON0] = 1
    state[CON0 + 1] = 1
    state[FOLDED] = -1


@kernel(entry=True)
def chance_pending(params, state):
    return state[DEALT] < 2 or (state[ROUND] == 1 and state[PUB] < 0 and state[OVER] == 0)


@kernel(entry=True)
def chance_outcomes(params, state, probs):
    """Outcome = card id; uniform over the cards not dealt yet."""
    left = N_CARDS - state[DEALT] - (1 if state[PUB] >= 0 else 0)
    for c in range(N_CARDS):
        probs[c] = 1.0 / left
    for i in range(2):
        if state[CARD0 + i] >= 0:
            probs[state[CARD0 + i]] = 0.0
    if state[PUB] >= 0:
        probs[state[PUB]] = 0.0
    return N_CARDS


@kernel(entry=True)
def apply_chance(params, state, outcome):
    if state[DEALT] < 2:
        state[CARD0 + state[DEALT]] = outcome
        state[DEALT] += 1
    else:
        state[PUB] = outcome


@kernel(entry=True)
def legal(params, state, agent, mask):
    """Fold only when facing a bet; call always; raise while fewer than 2 raises this round."""
    if agent != state[MOVER] or state[OVER] != 0:
        mask[0] = 0
        mask[1] = 0
        mask[2] = 0
        return 0
    owe = state[CON0 + 1 - agent] > state[CON0 + agent]
    mask[0] = 1 if owe else 0
    mask[1] = 1
    mask[2] = 1 if state[RAISES] < MAX_RAISES else 0
    return mask[0] + 1 + mask[2]


@kernel(entry=True)
def active(params, state, out):
    out[0] = state[MOVER]
    return 1


@kernel
def _rank(card, public):
    """Hand strength: a pair with the public card beats every unpaired hand, else the rank."""
    r = card // 2
    if r == public // 2:
        return 10 + r
    return r


@kernel(entry=True)
def step(params, state, actions, amounts):
    """Apply the mover's action; at the end, write each seat's chip delta under ``scale``."""
    mover = state[MOVER]
    other = 1 - mover
    a = actions[mover]
    rnd = state[ROUND]
    h = H1 if rnd == 0 else H2
    ln = L1 if rnd == 0 else L2
    n = state[ln]
    state[h + n] = a
    state[ln] = n + 1
    if a == FOLD:
        state[FOLDED] = mover
        state[OVER] = 1
        lost = state[CON0 + mover]
        amounts[mover, 0] -= lost
        amounts[other, 0] += lost
        return
    if a == RAISE:
        state[CON0 + mover] = state[CON0 + other] + (2 if rnd == 0 else 4)
        state[RAISES] += 1
        state[MOVER] = other
        return
    state[CON0 + mover] = state[CON0 + other]
    if n + 1 < 2:
        state[MOVER] = other
        return
    if rnd == 0:  # round 1 closed: the public card is pending chance
        state[ROUND] = 1
        state[RAISES] = 0
        state[MOVER] = 0
        return
    state[OVER] = 1
    s0 = _rank(state[CARD0], state[PUB])
    s1 = _rank(state[CARD0 + 1], state[PUB])
    stake = state[CON0]
    if s0 > s1:
        amounts[0, 0] += stake
        amounts[1, 0] -= stake
    elif s1 > s0:
        amounts[0, 0] -= stake
        amounts[1, 0] += stake


@kernel(entry=True)
def is_terminal(params, state):
    return state[OVER] != 0


@kernel(entry=True)
def encode(params, state, agent, out):
    """Own card, public card, round flag, both rounds' actions as ``(a + 1) / 3``; ``out: [21] float32``."""
    for i in range(OBS_SIZE):
        out[i] = 0.0
    c = state[CARD0 + agent]
    if c >= 0:
        out[c] = 1.0
    if state[PUB] >= 0:
        out[N_CARDS + state[PUB]] = 1.0
    if state[ROUND] == 1:
        out[12] = 1.0
    for i in range(state[L1]):
        out[13 + i] = (state[H1 + i] + 1) / 3.0
    for i in range(state[L2]):
        out[17 + i] = (state[H2 + i] + 1) / 3.0


@kernel(entry=True)
def info_key(params, state, agent, out):
    """``[agent, card, public or 255, L1, round-1 actions, L2, round-2 actions]``; returns the length."""
    out[0] = agent
    out[1] = state[CARD0 + agent]
    out[2] = state[PUB] if state[PUB] >= 0 else 255
    k = 3
    out[k] = state[L1]
    k += 1
    for i in range(state[L1]):
        out[k] = state[H1 + i]
        k += 1
    out[k] = state[L2]
    k += 1
    for i in range(state[L2]):
        out[k] = state[H2 + i]
        k += 1
    return k


DEFAULT_ENCODER = "leduc_poker"
ENCODERS = {"leduc_poker": (encode, obs_shape, 0.0, 1.0)}  # name -> (encode, shape fn, low, high)
