"""External-sampling Monte-Carlo CFR over the flat game tree (Lanctot et al. 2009).

One iteration = one traversal per player in seat order, exactly OpenSpiel's Python
``ExternalSamplingSolver`` with ``AverageType.SIMPLE``: chance nodes and the other players'
nodes are sampled (one SplitMix64 draw each, in depth-first order), the traverser's nodes
explore every action and add ``child value - node value`` to their regrets, and the nodes of
player ``traverser + 1 mod P`` add their current policy to the policy sums.  A node's policy is
regret-matched when it is visited, into per-frame scratch: ``cur`` is never written (the
original's saved "current policy" column stays at its uniform start under MCCFR).  ``seen`` marks the info states a
traversal has touched (the growing table of the original).

:func:`mccfr_live` is the same traversal stepping the game itself (for games whose tree does not
fit in arrays, Texas Hold'em): it is a kernel *template* like ``gametree.walk`` (``G_*`` names
bound per game by the generated module that also holds ``gametree``), and its info-state table
is the open-addressing key map of ``gametree`` in NumPy arrays that grows fourfold when half full.

Sampling: chance through ``rng.sample_chance`` (uniform nodes take one ``index_hi`` draw over
the positive outcomes, as the original's chance stream); an opponent's slot is the first ``a``
with ``u < cur[0] + ... + cur[a]`` for one ``rng.uniform`` draw ``u`` (the last positive slot
when rounding leaves ``u`` unassigned).
"""

from __future__ import annotations

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import DONE, HORIZON, TERMINAL, TICKS, TRUNCATED
from reinfors.jit.solvers.gametree import key_find

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import (
        G_active,
        G_apply_chance,
        G_chance_outcomes,
        G_chance_pending,
        G_chance_uniform,
        G_info_key,
        G_init,
        G_is_terminal,
        G_legal,
        G_settle,
        G_step,
    )
# -- end of bound names (scripts/kernel_part_imports.py) --


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


@kernel(entry=True)
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


@kernel
def _grow(regret, cum, cur, key_data, key_len, is_nact, is_actions, n_infosets):
    """Quadruple the info-state arrays (the first ``n_infosets`` rows kept) and rebuild the table."""
    cap = regret.shape[0] * 4
    a = regret.shape[1]
    n = n_infosets
    r2 = np.zeros((cap, a), np.float64)
    c2 = np.zeros((cap, a), np.float64)
    u2 = np.zeros((cap, a), np.float64)
    k2 = np.zeros((cap, key_data.shape[1]), np.uint8)
    l2 = np.zeros(cap, np.int32)
    n2 = np.zeros(cap, np.int32)
    x2 = np.full((cap, a), -1, np.int32)
    r2[:n] = regret[:n]
    c2[:n] = cum[:n]
    u2[:n] = cur[:n]
    x2[:n] = is_actions[:n]
    k2[:n] = key_data[:n]
    l2[:n] = key_len[:n]
    n2[:n] = is_nact[:n]
    t2 = np.full(2 * cap, -1, np.int64)
    for i in range(n):
        t2[key_find(t2, k2, l2, k2[i], l2[i])] = i
    return r2, c2, u2, k2, l2, n2, x2, t2


@kernel(entry=True)
def mccfr_live(
    params,
    horizon,
    weights,
    n_players,
    n_actions,
    max_chance,
    state_size,
    n_keys,
    max_depth,
    regret,
    cum,
    cur,
    key_data,
    key_len,
    is_nact,
    is_actions,
    table,
    n_infosets,
    rng,
    n_iterations,
    max_rows,
):
    """External-sampling iterations that step the game (template: needs the ``G_*`` roles).

    Info-state arrays have ``C`` rows (``regret, cum, cur, is_actions: [C, A]``,
    ``key_data: [C, max_key] uint8``, ``key_len, is_nact: [C] int32``), ``table: [2C] int64``;
    the first ``n_infosets`` rows are in use.  New info states start with zero regrets and sums
    and a uniform ``cur``.  Returns ``(regret, cum, cur, key_data, key_len, is_nact, is_actions,
    table, n_infosets, err)`` — the arrays are new objects when the table grew; ``err`` is 1
    when the stack depth ``max_depth`` was exceeded, 2 for a decision node without exactly one
    actor or without legal actions, 3 for an oversized key, 4 when the tables would grow past
    ``max_rows`` rows (the bound the caller computed from the memory available; the iteration in
    progress stops part-way).
    """
    width = max(n_actions, 1)
    st = np.zeros((max_depth + 1, state_size), np.int64)
    fr_u = np.zeros(max_depth + 1, np.float64)
    fr_settle = np.zeros(max_depth + 1, np.int64)
    fr_mode = np.zeros(max_depth + 1, np.int64)
    fr_next = np.zeros(max_depth + 1, np.int64)
    fr_info = np.zeros(max_depth + 1, np.int64)
    fr_agent = np.zeros(max_depth + 1, np.int64)
    fr_val = np.zeros(max_depth + 1, np.float64)
    fr_child = np.zeros((max_depth + 1, width), np.float64)
    fr_pol = np.zeros((max_depth + 1, width), np.float64)
    fr_act = np.zeros((max_depth + 1, width), np.int64)
    probs = np.zeros(max(max_chance, 1), np.float64)
    mask = np.zeros(width, np.uint8)
    agents = np.zeros(max(n_players, 1), np.int64)
    actions = np.zeros(max(n_players, 1), np.int64)
    amounts = np.zeros((max(n_players, 1), max(n_keys, 1)), np.float64)
    key = np.zeros(key_data.shape[1], np.uint8)
    for _ in range(n_iterations):
        for trav in range(n_players):
            avg_player = (trav + 1) % n_players
            s0 = st[0]
            for i in range(state_size):
                s0[i] = 0
            s0[HORIZON] = horizon
            G_init(params, s0)
            fr_u[0] = 0.0
            fr_settle[0] = 0
            d = 0
            pending = True
            ret = 0.0
            while True:
                if pending:
                    pending = False
                    s = st[d]
                    terminal = s[DONE] != 0
                    if not terminal and not G_chance_pending(params, s) and fr_settle[d] != 0:
                        fr_settle[d] = 0
                        for p in range(amounts.shape[0]):
                            for k in range(amounts.shape[1]):
                                amounts[p, k] = 0.0
                        if G_settle(params, s, amounts):
                            s[DONE] = TERMINAL
                            terminal = True
                            r = 0.0
                            for k in range(n_keys):
                                r += amounts[trav, k] * weights[k]
                            fr_u[d] += r
                    if terminal:
                        ret = fr_u[d]
                        d -= 1
                    elif G_chance_pending(params, s):
                        m = G_chance_uniform(params, s)
                        if m > 0:  # a declared uniform node: sample_chance's draw without the fan
                            o = _rng.index_hi(rng, m)
                        else:
                            n = G_chance_outcomes(params, s, probs)
                            o = _rng.sample_chance(rng, probs, n)
                        if d + 1 > max_depth:
                            return regret, cum, cur, key_data, key_len, is_nact, is_actions, table, n_infosets, 1
                        child = st[d + 1]
                        for i in range(state_size):
                            child[i] = s[i]
                        G_apply_chance(params, child, o)
                        fr_u[d + 1] = fr_u[d]
                        fr_settle[d + 1] = fr_settle[d]
                        fr_mode[d] = 2
                        d += 1
                        pending = True
                        continue
                    else:
                        if G_active(params, s, agents) != 1:
                            return regret, cum, cur, key_data, key_len, is_nact, is_actions, table, n_infosets, 2
                        ag = agents[0]
                        for a in range(width):
                            mask[a] = 0
                        G_legal(params, s, ag, mask)
                        na = 0
                        for a in range(n_actions):
                            if mask[a] != 0:
                                fr_act[d, na] = a
                                na += 1
                        if na == 0:
                            return regret, cum, cur, key_data, key_len, is_nact, is_actions, table, n_infosets, 2
                        klen = G_info_key(params, s, ag, key)
                        if klen < 0 or klen > key.shape[0]:
                            return regret, cum, cur, key_data, key_len, is_nact, is_actions, table, n_infosets, 3
                        slot = key_find(table, key_data, key_len, key, klen)
                        i = table[slot]
                        if i < 0:
                            if 2 * (n_infosets + 1) > regret.shape[0]:
                                if regret.shape[0] * 4 > max_rows:
                                    return regret, cum, cur, key_data, key_len, is_nact, is_actions, table, n_infosets, 4
                                regret, cum, cur, key_data, key_len, is_nact, is_actions, table = _grow(
                                    regret, cum, cur, key_data, key_len, is_nact, is_actions, n_infosets
                                )
                                slot = key_find(table, key_data, key_len, key, klen)
                            i = n_infosets
                            n_infosets += 1
                            table[slot] = i
                            for k in range(klen):
                                key_data[i, k] = key[k]
                            key_len[i] = klen
                            is_nact[i] = na
                            for a in range(na):
                                is_actions[i, a] = fr_act[d, a]
                                cur[i, a] = 1.0 / na
                        fr_info[d] = i
                        fr_agent[d] = ag
                        na = is_nact[i]
                        _match(regret, i, na, fr_pol, d)
                        if ag == trav:
                            fr_mode[d] = 0
                            fr_val[d] = 0.0
                            j = 0
                        else:
                            fr_mode[d] = 1
                            j = _sample_slot(rng, fr_pol, d, na)
                        fr_next[d] = j + 1
                        if d + 1 > max_depth:
                            return regret, cum, cur, key_data, key_len, is_nact, is_actions, table, n_infosets, 1
                        # step into the child of slot j
                        child = st[d + 1]
                        for q in range(state_size):
                            child[q] = s[q]
                        for p in range(actions.shape[0]):
                            actions[p] = 0
                        actions[ag] = fr_act[d, j]
                        for p in range(amounts.shape[0]):
                            for k in range(amounts.shape[1]):
                                amounts[p, k] = 0.0
                        child[TICKS] += 1
                        G_step(params, child, actions, amounts)
                        if G_is_terminal(params, child):
                            child[DONE] = TERMINAL
                        elif child[HORIZON] > 0 and child[TICKS] >= child[HORIZON]:
                            child[DONE] = TRUNCATED
                        r = 0.0
                        for k in range(n_keys):
                            r += amounts[trav, k] * weights[k]
                        fr_u[d + 1] = fr_u[d] + r
                        fr_settle[d + 1] = 1
                        d += 1
                        pending = True
                        continue
                if d < 0:
                    break
                mode = fr_mode[d]
                if mode == 2:  # chance: pass the value up
                    d -= 1
                    continue
                i = fr_info[d]
                na = is_nact[i]
                if mode == 1:
                    if fr_agent[d] == avg_player:
                        for a in range(na):
                            cum[i, a] += fr_pol[d, a]
                    d -= 1
                    continue
                j = fr_next[d] - 1
                fr_child[d, j] = ret
                fr_val[d] += fr_pol[d, j] * ret
                if j + 1 < na:
                    j += 1
                    fr_next[d] = j + 1
                    s = st[d]
                    child = st[d + 1]
                    for q in range(state_size):
                        child[q] = s[q]
                    for p in range(actions.shape[0]):
                        actions[p] = 0
                    actions[fr_agent[d]] = is_actions[i, j]
                    for p in range(amounts.shape[0]):
                        for k in range(amounts.shape[1]):
                            amounts[p, k] = 0.0
                    child[TICKS] += 1
                    G_step(params, child, actions, amounts)
                    if G_is_terminal(params, child):
                        child[DONE] = TERMINAL
                    elif child[HORIZON] > 0 and child[TICKS] >= child[HORIZON]:
                        child[DONE] = TRUNCATED
                    r = 0.0
                    for k in range(n_keys):
                        r += amounts[trav, k] * weights[k]
                    fr_u[d + 1] = fr_u[d] + r
                    fr_settle[d + 1] = 1
                    d += 1
                    pending = True
                    continue
                v = fr_val[d]
                for a in range(na):
                    regret[i, a] += fr_child[d, a] - v
                if fr_agent[d] == avg_player:
                    for a in range(na):
                        cum[i, a] += fr_pol[d, a]
                ret = v
                d -= 1
    return regret, cum, cur, key_data, key_len, is_nact, is_actions, table, n_infosets, 0
