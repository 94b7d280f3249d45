"""N-player Kuhn poker (OpenSpiel's rules, 2-10 players): imperfect information, chance deal.

Deck ``0 .. p`` (``p + 1`` cards, a higher id is stronger); every player antes 1.  Actions:
``0`` pass (check/fold), ``1`` bet (bet/call).  Player ``n mod p`` acts at history length ``n``
(player 0 always opens).  With no bet in the first ``p`` actions everyone shows down; after the
first bet at index ``f`` every other player acts exactly once more and the hand ends after index
``f + p - 1``: the bettor and the callers show down, passers fold.  The highest card among the
showdown players takes the pot.

The deal is ``p`` chance nodes, one card each, uniform over the cards still in the deck in
ascending order — the original's ``deck.pop(k)`` with ``k`` drawn from its chance stream — so
seeded Envs deal what reinfors 0.4.0 deals.

State row (``int64``; after the shared header; ``p = params[0]``)::

    CARDS + 0 … p-1         card of each seat (-1 until dealt)
    HIST  + 0 … 2p-2        action history (0 pass, 1 bet)
    HLEN                    actions taken
    FIRST                   index of the first bet (-1: none yet)
    DEALT                   cards dealt so far

Default encoder ``kuhn_poker``, ``(3p, 1, 1)``: slots ``0..p`` one-hot of the observer's card,
slots ``p+1 ..`` the history (0.5 pass, 1.0 bet, 0 not yet).  Reward key ``scale`` (1): the
raw chip delta of every seat at the end (zero-sum).  Information-state key:
``bytes([agent, card] + history)``.
"""

from __future__ import annotations

import numpy as np

from reinfors._validate import as_unsigned
from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import DONE, HEADER

NAME = "kuhn_poker"
N_ACTIONS = 2
SIMULTANEOUS = False
REWARD_KEYS = ("scale",)
REWARD_DEFAULTS = (1.0,)
CHANCE_IN_STEP = False  # the deal happens at reset only

CARDS = HEADER


def make_params(players=2) -> np.ndarray:
    players = as_unsigned("players", players)
    if not 2 <= players <= 10:
        raise ValueError(f"players must be in 2..=10 (OpenSpiel's kuhn_poker range), got {players}")
    return np.array([players], np.int64)


def resolved(params) -> dict:
    return {"players": int(params[0])}


def n_players(params) -> int:
    return int(params[0])


def state_size(params) -> int:
    p = int(params[0])
    return HEADER + 3 * p + 2


def obs_shape(params) -> tuple:
    return (3 * int(params[0]), 1, 1)


def horizon(params) -> int:
    return 0


def max_chance(params) -> int:
    return int(params[0]) + 1


def max_info_key(params) -> int:
    return 2 * int(params[0]) + 1


def _layout(p):
    hist = HEADER + p
    hlen = hist + 2 * p - 1
    return hist, hlen, hlen + 1, hlen + 2


def inspect(params, state) -> dict:
    p = int(params[0])
    hist, hlen, _, _ = _layout(p)
    n = int(state[hlen])
    return {
        "cards": bytes(int(c) for c in state[CARDS : CARDS + p] if c >= 0),
        "history": bytes(int(a) for a in state[hist : hist + n]),
        "done": bool(state[DONE] != 0),
    }


def events(params, state, amounts) -> list:
    """Terminal tick: one raw chip delta per seat in seat order; otherwise ``[]``."""
    if state[DONE] == 0:
        return []
    return [(i, float(amounts[i, 0])) for i in range(int(params[0]))]


def _history_terminal(hist, p):
    """(terminal index or None, error) for a history list (used to validate snapshots)."""
    first = None
    for i, a in enumerate(hist):
        if first is None and a == 1:
            first = i
        end = (p - 1) if first is None else (first + p - 1)
        if i == end:
            return i, None
    return None, None


def validate_state(params, state) -> str | None:
    p = int(params[0])
    hist, hlen, first, dealt = _layout(p)
    cards = [int(c) for c in state[CARDS : CARDS + p]]
    if int(state[dealt]) != p or any(c < 0 for c in cards):
        return "every card must be dealt (birth chains are transient)"
    if len(set(cards)) != p or any(c > p for c in cards):
        return f"cards must be {p} distinct ids below {p + 1}"
    n = int(state[hlen])
    if not 0 <= n <= 2 * p - 1:
        return "malformed action history"
    h = [int(a) for a in state[hist : hist + n]]
    if any(a not in (0, 1) for a in h) or any(int(x) != 0 for x in state[hist + n : hist + 2 * p - 1]):
        return "malformed action history"
    fb = next((i for i, a in enumerate(h) if a == 1), -1)
    if int(state[first]) != fb:
        return "first-bet word disagrees with the history"
    end, _ = _history_terminal(h, p)
    if end is not None and end != n - 1:
        return "actions continue past a terminal history"
    terminal = end is not None
    if terminal != bool(state[DONE] != 0):
        return f"history terminality disagrees with envelope done {str(bool(state[DONE])).lower()}"
    return None


@kernel(entry=True)
def init(params, state):
    """No cards yet (the deal is pending chance), empty history."""
    p = params[0]
    for i in range(HEADER, HEADER + 3 * p + 2):
        state[i] = 0
    for i in range(p):
        state[CARDS + i] = -1
    hist = HEADER + p
    hlen = hist + 2 * p - 1
    state[hlen + 1] = -1


@kernel(entry=True)
def chance_pending(params, state):
    p = params[0]
    return state[HEADER + 3 * p + 1] < p


@kernel(entry=True)
def chance_outcomes(params, state, probs):
    """Outcome = card id; uniform over the cards not dealt yet."""
    p = params[0]
    left = p + 1 - state[HEADER + 3 * p + 1]
    for c in range(p + 1):
        probs[c] = 1.0 / left
    for i in range(p):
        c = state[CARDS + i]
        if c >= 0:
            probs[c] = 0.0
    return p + 1


@kernel(entry=True)
def apply_chance(params, state, outcome):
    p = params[0]
    dealt = HEADER + 3 * p + 1
    state[CARDS + state[dealt]] = outcome
    state[dealt] += 1


@kernel(entry=True)
def legal(params, state, agent, mask):
    p = params[0]
    mover = state[HEADER + 3 * p - 1] % p
    ok = 1 if mover == agent else 0
    mask[0] = ok
    mask[1] = ok
    return 2 * ok


@kernel(entry=True)
def active(params, state, out):
    p = params[0]
    out[0] = state[HEADER + 3 * p - 1] % p
    return 1


@kernel
def _is_over(state, p):
    hlen = HEADER + 3 * p - 1
    n = state[hlen]
    first = state[hlen + 1]
    if first < 0:
        return n >= p
    return n >= first + p


@kernel(entry=True)
def step(params, state, actions, amounts):
    """Append the mover's action; at the end, write each seat's chip delta under ``scale``."""
    p = params[0]
    hist = HEADER + p
    hlen = hist + 2 * p - 1
    n = state[hlen]
    mover = n % p
    a = actions[mover]
    state[hist + n] = a
    if a == 1 and state[hlen + 1] < 0:
        state[hlen + 1] = n
    state[hlen] = n + 1
    if _is_over(state, p):
        first = state[hlen + 1]
        pot = 0.0
        best = -1
        winner = -1
        for i in range(p):
            contrib = 1.0
            for j in range(i, n + 1, p):
                if state[hist + j] == 1:
                    contrib += 1.0
            pot += contrib
            amounts[i, 0] -= contrib
            shows = True
            if first >= 0:
                # Seat i shows down iff it bet within [first, first + p - 1].
                shows = False
                for j in range(first, first + p):
                    if j % p == i and state[hist + j] == 1:
                        shows = True
            if shows and state[CARDS + i] > best:
                best = state[CARDS + i]
                winner = i
        amounts[winner, 0] += pot


@kernel(entry=True)
def is_terminal(params, state):
    return _is_over(state, params[0])


@kernel(entry=True)
def encode(params, state, agent, out):
    """Own card one-hot (``p + 1`` slots), then the history: 0.5 pass, 1.0 bet, 0 not yet."""
    p = params[0]
    for i in range(3 * p):
        out[i] = 0.0
    c = state[CARDS + agent]
    if c >= 0:
        out[c] = 1.0
    hist = HEADER + p
    n = state[hist + 2 * p - 1]
    for i in range(n):
        out[p + 1 + i] = 1.0 if state[hist + i] == 1 else 0.5


@kernel(entry=True)
def info_key(params, state, agent, out):
    """``[agent, card, history...]``; returns the key length."""
    p = params[0]
    hist = HEADER + p
    n = state[hist + 2 * p - 1]
    out[0] = agent
    out[1] = state[CARDS + agent]
    for i in range(n):
        out[2 + i] = state[hist + i]
    return 2 + n


DEFAULT_ENCODER = "kuhn_poker"
ENCODERS = {"kuhn_poker": (encode, obs_shape, 0.0, 1.0)}  # name -> (encode, shape fn, low, high)
