"""On-policy values, best-response values and NashConv of a strategy table over the flat tree.

``policy: [n_infosets, A] float64`` gives the probability of slot ``a`` (the ``a``-th legal
action) at every info state.  The best response follows OpenSpiel's
``open_spiel.python.algorithms.best_response.BestResponsePolicy``: at each of the responder's
info states pick the first legal action maximising the counterfactual-reach-weighted sum of
child values, where the counterfactual reach of a node is the product of chance and opponent
probabilities on its path.  Info states are resolved deepest level first (``by_depth`` lists
the nodes level by level, pre-order within a level), so this needs every info state's nodes
on one level — true for the poker games (the key carries the whole public history), and
checked by the Python side when the tree is built.
"""

from __future__ import annotations

import numpy as np

from reinfors.jit._compile import kernel


@kernel(entry=True)
def policy_values(kind, infoset, first_edge, n_edges, term_id, edge_child, edge_prob, util, policy, value):
    """Expected returns of every player under ``policy`` at every node, into
    ``value: [n_nodes, P] float64`` (reverse pre-order).  Returns nothing; ``value[0]`` is the
    game value vector."""
    n_players = value.shape[1]
    for n in range(kind.shape[0] - 1, -1, -1):
        k = kind[n]
        if k == 0:
            t = term_id[n]
            for q in range(n_players):
                value[n, q] = util[t, q]
            continue
        for q in range(n_players):
            value[n, q] = 0.0
        e0 = first_edge[n]
        if k == 1:
            for j in range(n_edges[n]):
                c = edge_child[e0 + j]
                p = edge_prob[e0 + j]
                for q in range(n_players):
                    value[n, q] += p * value[c, q]
        else:
            i = infoset[n]
            for j in range(n_edges[n]):
                c = edge_child[e0 + j]
                p = policy[i, j]
                for q in range(n_players):
                    value[n, q] += p * value[c, q]


@kernel
def best_response_value(
    kind,
    player,
    infoset,
    first_edge,
    n_edges,
    term_id,
    edge_child,
    edge_prob,
    util,
    by_depth,
    depth_start,
    policy,
    responder,
    cf,
    value,
    score,
    best,
):
    """Value for ``responder`` of its best response to ``policy`` (the others fixed).

    ``by_depth: [n_nodes] int64`` node ids level by level, ``depth_start: [L + 1] int64`` level
    offsets; scratch ``cf, value: [n_nodes] float64``, ``score: [n_infosets, A] float64``,
    ``best: [n_infosets] int64`` (on exit: the responder's best slot at its info states, -1
    elsewhere).  Returns the root value (float64).
    """
    n_nodes = kind.shape[0]
    # counterfactual reach (chance x opponents), pre-order
    cf[0] = 1.0
    for n in range(n_nodes):
        k = kind[n]
        if k == 0:
            continue
        e0 = first_edge[n]
        if k == 1:
            for j in range(n_edges[n]):
                cf[edge_child[e0 + j]] = cf[n] * edge_prob[e0 + j]
        elif player[n] == responder:
            for j in range(n_edges[n]):
                cf[edge_child[e0 + j]] = cf[n]
        else:
            i = infoset[n]
            for j in range(n_edges[n]):
                cf[edge_child[e0 + j]] = cf[n] * policy[i, j]
    for i in range(score.shape[0]):
        best[i] = -1
        for a in range(score.shape[1]):
            score[i, a] = 0.0
    n_levels = depth_start.shape[0] - 1
    for lv in range(n_levels - 1, -1, -1):
        lo = depth_start[lv]
        hi = depth_start[lv + 1]
        # the responder's info states on this level: action scores, then the first argmax
        for r in range(lo, hi):
            n = by_depth[r]
            if kind[n] == 2 and player[n] == responder:
                i = infoset[n]
                e0 = first_edge[n]
                for j in range(n_edges[n]):
                    score[i, j] += cf[n] * value[edge_child[e0 + j]]
        for r in range(lo, hi):
            n = by_depth[r]
            if kind[n] == 2 and player[n] == responder:
                i = infoset[n]
                if best[i] < 0:
                    b = 0
                    for j in range(1, n_edges[n]):
                        if score[i, j] > score[i, b]:
                            b = j
                    best[i] = b
        for r in range(lo, hi):
            n = by_depth[r]
            k = kind[n]
            if k == 0:
                value[n] = util[term_id[n], responder]
                continue
            e0 = first_edge[n]
            if k == 1:
                v = 0.0
                for j in range(n_edges[n]):
                    v += edge_prob[e0 + j] * value[edge_child[e0 + j]]
                value[n] = v
            elif player[n] == responder:
                value[n] = value[edge_child[e0 + best[infoset[n]]]]
            else:
                i = infoset[n]
                v = 0.0
                for j in range(n_edges[n]):
                    v += policy[i, j] * value[edge_child[e0 + j]]
                value[n] = v
    return value[0]


@kernel(entry=True)
def best_response_values(
    kind,
    player,
    infoset,
    first_edge,
    n_edges,
    term_id,
    edge_child,
    edge_prob,
    util,
    by_depth,
    depth_start,
    policy,
    n_players,
    out,
):
    """Every player's best-response value against ``policy`` into ``out: [P] float64``."""
    n_nodes = kind.shape[0]
    cf = np.zeros(n_nodes, np.float64)
    value = np.zeros(n_nodes, np.float64)
    score = np.zeros(policy.shape, np.float64)
    best = np.zeros(policy.shape[0], np.int64)
    for p in range(n_players):
        out[p] = best_response_value(
            kind,
            player,
            infoset,
            first_edge,
            n_edges,
            term_id,
            edge_child,
            edge_prob,
            util,
            by_depth,
            depth_start,
            policy,
            p,
            cf,
            value,
            score,
            best,
        )
