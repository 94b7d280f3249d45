"""Game-independent arithmetic of the tree-search policies (AlphaZero, Mcts, Minimax).

Everything here works on dense per-action rows (``A`` entries, game frame) with a ``legal:
[A] uint8`` mask — or, the ``*_listed`` forms, on the entries of an ascending action list (the
rest of the row unvisited and never read) —, reads the slot's explicit ``rng: [1] uint64`` and
allocates nothing; the
engine's search kernels (reinfors/jit/kernels/search_*.py) call these per node.  The arithmetic
is reinfors 0.4.0's (sequential sums, strict ``>`` ties to the lowest id), so seeded searches
reproduce the original's visit counts.
"""

from __future__ import annotations

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.policies import modelfree as _mf


@kernel
def softmax_legal(logits, legal, n_actions, out):
    """``out[a]`` = softmax of ``logits[a]`` over the legal ``a`` (ascending; 0 elsewhere):
    ``m = max``, ``e = exp(l - m)``, divided by the sequential sum."""
    m = _mf.max_legal(logits, legal, n_actions)
    t = 0.0
    for a in range(n_actions):
        if legal[a] != 0:
            e = np.exp(logits[a] - m)
            out[a] = e
            t += e
        else:
            out[a] = 0.0
    for a in range(n_actions):
        if legal[a] != 0:
            out[a] = out[a] / t


@kernel
def sample_visits(rng, visits, ids, n, temperature):
    """An action drawn from ``visits ** (1 / temperature)`` with one ``rng`` draw (none when no
    action was visited: action 0), over actions ``0 .. n - 1`` (``ids`` None) or over the
    ascending actions ``ids[:n]`` when only those can have visits (the same sums in the same
    order, the same draw, the same action)."""
    nmax = 0
    for j in range(n):
        v = visits[j if ids is None else ids[j]]
        if v > nmax:
            nmax = v
    if nmax <= 0:
        return 0
    inv_t = 1.0 / temperature
    total = 0.0
    for j in range(n):
        v = visits[j if ids is None else ids[j]]
        if v > 0:
            total += (v / nmax) ** inv_t
    r = _rng.uniform(rng) * total
    best = 0
    best_w = -1.0
    for j in range(n):
        a = j if ids is None else ids[j]
        v = visits[a]
        w = (v / nmax) ** inv_t if v > 0 else 0.0
        r -= w
        if w > 0.0 and r <= 0.0:
            return a
        if w > best_w:
            best_w = w
            best = a
    return best


@kernel
def argmax_legal(row, legal, n_actions):
    """Argmax of ``row`` over the legal actions (ascending, strict ``>``: lowest id on ties)."""
    best = -1
    best_v = -np.inf
    for a in range(n_actions):
        if legal[a] != 0 and (best < 0 or row[a] > best_v):
            best = a
            best_v = row[a]
    return best


@kernel
def argmax_dense(row, n_actions):
    """Argmax of ``row`` over every action (first maximum)."""
    best = 0
    for a in range(1, n_actions):
        if row[a] > row[best]:
            best = a
    return best


@kernel
def sort_ascending(ids, n):
    """Insertion sort of ``ids[:n]`` in place (a node's legal actions: at most a few hundred,
    usually already ascending)."""
    for i in range(1, n):
        v = ids[i]
        j = i - 1
        while j >= 0 and ids[j] > v:
            ids[j + 1] = ids[j]
            j -= 1
        ids[j + 1] = v


@kernel
def argmax_visits_listed(visits, ids, n):
    """:func:`argmax_dense` of a visit row when only ``ids[:n]`` (ascending) can have visits:
    the lowest most-visited action, or action 0 when none was visited."""
    best = 0
    most = 0
    for j in range(n):
        a = ids[j]
        if visits[a] > most:
            most = visits[a]
            best = a
    return best


@kernel
def argmax_listed(row, ids, n):
    """:func:`argmax_legal` over the actions ``ids[:n]`` (ascending; -1 when ``n`` is 0)."""
    best = -1
    best_v = -np.inf
    for j in range(n):
        a = ids[j]
        if best < 0 or row[a] > best_v:
            best = a
            best_v = row[a]
    return best
