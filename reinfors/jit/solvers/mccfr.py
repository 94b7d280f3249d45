"""External-sampling Monte-Carlo CFR over the flat game tree (Lanctot et al. 2009).

One iteration = one traversal per player in seat order, exactly OpenSpiel's Python
``ExternalSamplingSolver`` with ``AverageType.SIMPLE``: chance nodes and the other players'
nodes are sampled (one SplitMix64 draw each, in depth-first order), the traverser's nodes
explore every action and add ``child value - node value`` to their regrets, and the nodes of
player ``traverser + 1 mod P`` add their current policy to the policy sums.  A node's policy is
regret-matched when it is visited, into per-frame scratch: ``cur`` is never written (the
original's saved "current policy" column stays at its uniform start under MCCFR).  ``seen`` marks the info states a
traversal has touched (the growing table of the original).

Sampling: chance through ``rng.sample_chance`` (uniform nodes take one ``index_hi`` draw over
the positive outcomes, as the original's chance stream); an opponent's slot is the first ``a``
with ``u < cur[0] + ... + cur[a]`` for one ``rng.uniform`` draw ``u`` (the last positive slot
when rounding leaves ``u`` unassigned).
"""

from __future__ import annotations

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel


@kernel
def _match(regret, i, na, out, r):
    """Regret matching of info state ``i`` into row ``r`` of ``out``."""
    total = 0.0
    for a in range(na):
        if regret[i, a] > 0.0:
            total += regret[i, a]
    if total > 0.0:
        for a in range(na):
            g = regret[i, a]
            out[r, a] = (g if g > 0.0 else 0.0) / total
    else:
        for a in range(na):
            out[r, a] = 1.0 / na


@kernel
def _sample_slot(rng, pol, r, na):
    u = _rng.uniform(rng)
    acc = 0.0
    last = 0
    for a in range(na):
        p = pol[r, a]
        if p > 0.0:
            last = a
            acc += p
            if u < acc:
                return a
    return last


@kernel
def mccfr_iterations(
    kind,
    player,
    infoset,
    first_edge,
    n_edges,
    term_id,
    edge_child,
    edge_prob,
    util,
    is_nact,
    regret,
    cum,
    cur,
    seen,
    rng,
    n_players,
    max_depth,
    n_iterations,
):
    """Run ``n_iterations`` external-sampling iterations in place.

    Tree arrays as in ``gametree``; ``regret, cum, cur: [n_infosets, A] float64``;
    ``seen: [n_infosets] uint8``; ``rng: [1] uint64`` (advanced).  ``max_depth`` bounds the
    tree depth (the explicit stack).  Returns nothing.
    """
    width = cur.shape[1]
    fr_node = np.zeros(max_depth + 1, np.int64)
    fr_next = np.zeros(max_depth + 1, np.int64)
    fr_mode = np.zeros(max_depth + 1, np.int64)  # 0 explore all (traverser), 1 single child
    fr_val = np.zeros(max_depth + 1, np.float64)
    fr_child = np.zeros((max_depth + 1, width), np.float64)
    fr_pol = np.zeros((max_depth + 1, width), np.float64)  # a node's policy at its visit
    probs = np.zeros(max(width, 1) + 64, np.float64)
    for _ in range(n_iterations):
        for trav in range(n_players):
            avg_player = (trav + 1) % n_players
            d = 0
            fr_node[0] = 0
            pending = True
            ret = 0.0
            while True:
                if pending:
                    pending = False
                    n = fr_node[d]
                    k = kind[n]
                    if k == 0:
                        ret = util[term_id[n], trav]
                        d -= 1
                    elif k == 1:
                        ne = n_edges[n]
                        e0 = first_edge[n]
                        if probs.shape[0] < ne:
                            probs = np.zeros(ne, np.float64)
                        for j in range(ne):
                            probs[j] = edge_prob[e0 + j]
                        j = _rng.sample_chance(rng, probs, ne)
                        fr_mode[d] = 1
                        fr_next[d] = 1
                        fr_node[d + 1] = edge_child[e0 + j]
                        d += 1
                        pending = True
                        continue
                    else:
                        i = infoset[n]
                        na = is_nact[i]
                        seen[i] = 1
                        e0 = first_edge[n]
                        if player[n] == trav:
                            _match(regret, i, na, fr_pol, d)
                            fr_mode[d] = 0
                            fr_next[d] = 1
                            fr_val[d] = 0.0
                            fr_node[d + 1] = edge_child[e0]
                        else:
                            _match(regret, i, na, fr_pol, d)
                            j = _sample_slot(rng, fr_pol, d, na)
                            fr_mode[d] = 1
                            fr_next[d] = 1
                            fr_node[d + 1] = edge_child[e0 + j]
                        d += 1
                        pending = True
                        continue
                # a child returned ``ret`` to the frame at depth d
                if d < 0:
                    break
                n = fr_node[d]
                if fr_mode[d] == 1:
                    if kind[n] == 2 and player[n] == avg_player:
                        i = infoset[n]
                        for a in range(is_nact[i]):
                            cum[i, a] += fr_pol[d, a]
                    d -= 1
                    continue
                i = infoset[n]
                j = fr_next[d] - 1
                fr_child[d, j] = ret
                fr_val[d] += fr_pol[d, j] * ret
                na = is_nact[i]
                if j + 1 < na:
                    fr_next[d] = j + 2
                    fr_node[d + 1] = edge_child[first_edge[n] + j + 1]
                    d += 1
                    pending = True
                    continue
                v = fr_val[d]
                for a in range(na):
                    regret[i, a] += fr_child[d, a] - v
                if player[n] == avg_player:
                    for a in range(na):
                        cum[i, a] += fr_pol[d, a]
                ret = v
                d -= 1
