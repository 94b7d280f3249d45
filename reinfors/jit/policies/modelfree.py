"""Model-free action selection over one prediction row (one inference round per decision).

``EpsilonGreedyQ``: with probability ``epsilon`` a uniformly random legal action, otherwise the
argmax over legal actions of the episode's Q head (lowest id on ties).  ``Ppo``: a sample of the
softmax over legal logits, returning the masked log-probability the learner records.  The draws
follow the original engine's slot stream exactly, so seeded trajectories match reinfors 0.4.0.

All functions read ``legal: [A] uint8`` and a prediction row, draw from the slot's explicit
``rng: [1] uint64`` and allocate nothing.
"""

from __future__ import annotations

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel


@kernel
def uniform_legal(rng, legal, n_actions):
    """A random legal action id: ``legal[next() % n_legal]`` over ascending ids, the original's
    exploration draw (-1 if none is legal)."""
    n = 0
    for a in range(n_actions):
        if legal[a] != 0:
            n += 1
    if n == 0:
        return -1
    k = np.int64(_rng.next_u64(rng) % np.uint64(n))
    for a in range(n_actions):
        if legal[a] != 0:
            if k == 0:
                return a
            k -= 1
    return -1


@kernel
def greedy_legal(q, offset, legal, n_actions):
    """Argmax of ``q[offset + a]`` over legal ``a`` (lowest id on ties; -1 if none legal)."""
    best = -1
    best_v = -np.inf
    for a in range(n_actions):
        if legal[a] != 0:
            v = q[offset + a]
            if best < 0 or v > best_v:
                best = a
                best_v = v
    return best


@kernel
def epsilon_greedy(rng, pred, head, legal, n_actions, epsilon):
    """EpsilonGreedyQ choice from ``pred: [H * A]`` (row-major heads) for ``head``.

    With ``epsilon > 0`` one coin ``u = (next() >> 11) * 2**-53`` is drawn and ``u < epsilon``
    explores (one more draw); with ``epsilon == 0`` nothing is drawn."""
    if epsilon > 0.0 and _rng.uniform(rng) < epsilon:
        return uniform_legal(rng, legal, n_actions)
    return greedy_legal(pred, head * n_actions, legal, n_actions)


@kernel
def max_legal(pred, legal, n_actions):
    """``max`` of ``pred[a]`` over the legal ``a`` (``-inf`` when none is legal)."""
    m = -np.inf
    for a in range(n_actions):
        if legal[a] != 0 and pred[a] > m:
            m = pred[a]
    return m


@kernel
def sample_softmax(rng, pred, legal, n_actions, scratch):
    """Sample from the softmax of ``pred[:A]`` over legal actions; returns ``(action, log_prob)``.

    Exactly the original's arithmetic (bit-exact): ``m = max``, ``s`` the sequential sum of
    ``exp(l - m)`` over legal ids, ``logp_i = (l_i - m) - ln s``; one draw ``u``, then walk the
    legal ids subtracting ``p_i = exp(logp_i)`` until ``u <= p_i`` (fallback: the last legal id).
    ``scratch: [A] float64`` is overwritten with the log-probabilities.
    """
    m = max_legal(pred, legal, n_actions)
    s = 0.0
    for a in range(n_actions):
        if legal[a] != 0:
            s += np.exp(pred[a] - m)
    ls = np.log(s)
    for a in range(n_actions):
        scratch[a] = (pred[a] - m) - ls if legal[a] != 0 else -np.inf
    u = _rng.uniform(rng)
    last = -1
    for a in range(n_actions):
        if legal[a] != 0:
            last = a
            p = np.exp(scratch[a])
            if u <= p:
                return a, scratch[a]
            u -= p
    return last, scratch[last]


# -- games with LEGAL_RANKS (chess): the same choices over the legal set in the game's order -----


@kernel
def ranked_order(legal, n_actions, order):
    """The legal ids of a rank mask (``legal[a]`` = 1-based position in the game's legal order)
    into ``order[:n]`` in that order; returns ``n``."""
    n = 0
    for a in range(n_actions):
        if legal[a] != 0:
            order[legal[a] - 1] = a
            n += 1
    return n


@kernel
def epsilon_greedy_in_order(rng, pred, head, order, n, n_actions, epsilon):
    """:func:`epsilon_greedy` over ``order[:n]``: the exploration draw indexes the legal list in
    the game's order and ties go to the first in that order (reinfors 0.4.0 walks its list)."""
    if epsilon > 0.0 and _rng.uniform(rng) < epsilon:
        if n == 0:
            return -1
        return order[np.int64(_rng.next_u64(rng) % np.uint64(n))]
    best = -1
    best_v = -np.inf
    off = head * n_actions
    for j in range(n):
        a = order[j]
        v = pred[off + a]
        if best < 0 or v > best_v:
            best = a
            best_v = v
    return best


@kernel
def sample_softmax_in_order(rng, pred, order, n):
    """:func:`sample_softmax` over ``order[:n]`` (the sum and the walk in the game's order);
    returns ``(action, log_prob)``."""
    m = -np.inf
    for j in range(n):
        if pred[order[j]] > m:
            m = pred[order[j]]
    s = 0.0
    for j in range(n):
        s += np.exp(pred[order[j]] - m)
    ls = np.log(s)
    u = _rng.uniform(rng)
    last = -1
    lp = -np.inf
    for j in range(n):
        a = order[j]
        last = a
        lp = (pred[a] - m) - ls
        p = np.exp(lp)
        if u <= p:
            return a, lp
        u -= p
    return last, lp
