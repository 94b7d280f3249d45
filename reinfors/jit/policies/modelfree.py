"""Model-free action selection over one prediction row (one inference round per decision).

``EpsilonGreedyQ``: with probability ``epsilon`` a uniformly random legal action, otherwise the
argmax over legal actions of the episode's Q head (lowest id on ties).  ``Ppo``: a sample of the
softmax over legal logits, returning the masked log-probability the learner records.

All functions read ``legal: [A] uint8`` and a prediction row, draw from the slot's explicit
``rng: [1] uint64`` and allocate nothing.
"""

from __future__ import annotations

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel


@kernel
def uniform_legal(rng, legal, n_actions):
    """A uniformly random legal action id (-1 if none is legal)."""
    n = 0
    for a in range(n_actions):
        n += legal[a]
    if n == 0:
        return -1
    k = _rng.randbelow(rng, n)
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
    """EpsilonGreedyQ choice from ``pred: [H * A]`` (row-major heads) for ``head``."""
    if epsilon > 0.0 and _rng.uniform(rng) < epsilon:
        return uniform_legal(rng, legal, n_actions)
    return greedy_legal(pred, head * n_actions, legal, n_actions)


@kernel
def masked_log_softmax(logits, legal, n_actions, out):
    """``out[a]`` = log-softmax of ``logits`` restricted to legal actions (-inf elsewhere)."""
    m = -np.inf
    for a in range(n_actions):
        if legal[a] != 0 and logits[a] > m:
            m = logits[a]
    s = 0.0
    for a in range(n_actions):
        if legal[a] != 0:
            s += np.exp(logits[a] - m)
    lse = m + np.log(s)
    for a in range(n_actions):
        out[a] = logits[a] - lse if legal[a] != 0 else -np.inf


@kernel
def sample_softmax(rng, pred, legal, n_actions, scratch):
    """Sample from the legal softmax of ``pred[:A]``; returns ``(action, log_prob)``."""
    masked_log_softmax(pred, legal, n_actions, scratch)
    u = _rng.uniform(rng)
    acc = 0.0
    last = -1
    for a in range(n_actions):
        if legal[a] != 0:
            last = a
            acc += np.exp(scratch[a])
            if u < acc:
                return a, scratch[a]
    return last, scratch[last]
