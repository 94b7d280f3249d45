"""The game tree, enumerated once into flat NumPy arrays (kernel template + key table).

This file is a kernel *template* like ``reinfors/jit/kernels/game_kernels.py``: :func:`walk` calls
the game's rules through the names ``G_init``, ``G_step``, ``G_legal``, ``G_active``,
``G_is_terminal``, ``G_chance_pending``, ``G_chance_outcomes``, ``G_apply_chance`` and
``G_info_key``, which the Python side (``reinfors.solvers.cfr``) binds statically per game by
generating ``<cache>/generated/cfrtree_<game>_<hash>.py`` = a header of imports + this file's
text.  So Numba inlines the game and the module loads from the on-disk cache.  Importing this
file directly is harmless (nothing compiles), but calling :func:`walk` from it is not possible.

Tree layout (node ids in depth-first pre-order; node 0 is the root)::

    kind[n]        int8    0 terminal, 1 chance, 2 decision
    player[n]      int32   acting player at a decision node, else -1
    infoset[n]     int32   dense info-state id at a decision node, else -1
    first_edge[n]  int32   edges of node n are first_edge[n] .. first_edge[n] + n_edges[n] - 1
    n_edges[n]     int32   children (legal actions in ascending id / chance outcomes with p > 0)
    depth[n]       int32   distance from the root
    term_id[n]     int32   row of ``util`` at a terminal node, else -1
    edge_child[e]  int32   child node of edge e
    edge_prob[e]   float64 chance probability of edge e (0 on decision edges)
    edge_action[e] int32   action id / chance outcome of edge e
    util[t, P]     float64 every player's return at terminal t (the game's reward-key amounts
                           summed along the path, weighted by the game's default weights)

Info states (dense ids in order of first visit)::

    is_player[i]      int32   the acting player
    is_nact[i]        int32   number of legal actions (slots 0 .. is_nact[i]-1)
    is_actions[i, a]  int32   action id of slot a (-1 past is_nact)
    key_data[i, k]    uint8   the info-state key bytes (``G_info_key``), key_len[i] of them
    key_len[i]        int32

The key table is an open-addressing hash map in NumPy arrays (FNV-1a, linear probing) shared
with the growing table of external MCCFR: ``table[slot]`` is an info-state id or -1.
"""

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import DONE, HORIZON, TERMINAL, TICKS, TRUNCATED

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import (
        G_active,
        G_apply_chance,
        G_chance_outcomes,
        G_chance_pending,
        G_info_key,
        G_init,
        G_is_terminal,
        G_legal,
        G_step,
    )
# -- end of bound names (scripts/kernel_part_imports.py) --


# Error codes of walk (0 = ok).
ERR_DEPTH = 1  # deeper than max_depth
ERR_NODES = 2  # more than max_nodes nodes
ERR_SIMULTANEOUS = 3  # not exactly one active agent at a decision node
ERR_NO_LEGAL = 4  # a decision node without legal actions
ERR_KEY = 5  # an info-state key longer than max_key
ERR_INCONSISTENT = 6  # one key with different players / legal actions
ERR_CHANCE = 7  # a chance node without positive-probability outcomes

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@kernel
def key_hash(key, n):
    """FNV-1a hash (uint64) of ``key[:n]`` (uint8 bytes) and its length."""
    h = _FNV_OFFSET
    for i in range(n):
        h = (h ^ np.uint64(key[i])) * _FNV_PRIME
    h = (h ^ np.uint64(n)) * _FNV_PRIME
    return h


@kernel(entry=True)
def key_find(table, key_data, key_len, key, n):
    """Slot of ``key[:n]`` in ``table: [cap] int64`` (cap a power of two): the slot holding its
    info-state id, or the empty slot (``table[slot] == -1``) where it would be inserted."""
    mask = np.uint64(table.shape[0] - 1)
    slot = np.int64(key_hash(key, n) & mask)
    while True:
        i = table[slot]
        if i < 0:
            return slot
        if key_len[i] == n:
            same = True
            for k in range(n):
                if key_data[i, k] != key[k]:
                    same = False
                    break
            if same:
                return slot
        slot = (slot + 1) & (table.shape[0] - 1)


@kernel(entry=True)
def rebuild_table(table, key_data, key_len, n_infosets):
    """Refill ``table`` (all -1 on entry is not required) with info states ``0 .. n_infosets-1``."""
    for s in range(table.shape[0]):
        table[s] = -1
    for i in range(n_infosets):
        slot = key_find(table, key_data, key_len, key_data[i], key_len[i])
        table[slot] = i


@kernel(entry=True)
def walk(
    params,
    horizon,
    weights,
    n_players,
    n_actions,
    max_chance,
    max_key,
    max_depth,
    max_nodes,
    fill,
    kind,
    player,
    infoset,
    first_edge,
    n_edges,
    depth,
    term_id,
    edge_child,
    edge_prob,
    edge_action,
    util,
    is_player,
    is_nact,
    is_actions,
    key_data,
    key_len,
    table,
    state_size,
    n_keys,
):
    """Depth-first enumeration of the whole game tree from the initial state.

    With ``fill`` False only counts (the output arrays may be dummies); with ``fill`` True writes
    every array of the module docstring (sized from the counting pass; ``table`` all -1, a power
    of two at least twice the decision-node count).  ``weights: [n_keys] float64`` weigh the
    reward-key amounts into returns.

    Returns ``(n_nodes, n_edges, n_terminals, n_infosets, max_depth_seen, err)`` (int64); the
    counting pass reports the number of decision nodes in place of ``n_infosets``.
    """
    width = max(n_actions, max_chance, 1)
    st = np.zeros((max_depth + 1, state_size), np.int64)
    cum_u = np.zeros((max_depth + 1, n_players), np.float64)
    fr_node = np.zeros(max_depth + 1, np.int64)
    fr_next = np.zeros(max_depth + 1, np.int64)
    fr_cnt = np.zeros(max_depth + 1, np.int64)
    fr_kind = np.zeros(max_depth + 1, np.int64)
    fr_agent = np.zeros(max_depth + 1, np.int64)
    fr_out = np.zeros((max_depth + 1, width), np.int64)
    probs = np.zeros(max(max_chance, 1), np.float64)
    mask = np.zeros(max(n_actions, 1), np.uint8)
    agents = np.zeros(max(n_players, 1), np.int64)
    actions = np.zeros(max(n_players, 1), np.int64)
    amounts = np.zeros((max(n_players, 1), max(n_keys, 1)), np.float64)
    key = np.zeros(max(max_key, 1), np.uint8)

    nn = 0
    ne = 0
    nt = 0
    ni = 0
    deepest = 0

    s0 = st[0]
    for i in range(state_size):
        s0[i] = 0
    s0[HORIZON] = horizon
    G_init(params, s0)

    d = 0
    pending = True
    while True:
        if pending:
            pending = False
            if nn >= max_nodes:
                return nn, ne, nt, ni, deepest, ERR_NODES
            s = st[d]
            nid = nn
            nn += 1
            if d > deepest:
                deepest = d
            fr_node[d] = nid
            fr_next[d] = 0
            if s[DONE] != 0 or G_is_terminal(params, s):
                fr_cnt[d] = 0
                fr_kind[d] = 0
                if fill:
                    kind[nid] = 0
                    player[nid] = -1
                    infoset[nid] = -1
                    first_edge[nid] = ne
                    n_edges[nid] = 0
                    depth[nid] = d
                    term_id[nid] = nt
                    for p in range(n_players):
                        util[nt, p] = cum_u[d, p]
                nt += 1
            elif G_chance_pending(params, s):
                n = G_chance_outcomes(params, s, probs)
                c = 0
                for o in range(n):
                    if probs[o] > 0.0:
                        fr_out[d, c] = o
                        if fill:
                            edge_prob[ne + c] = probs[o]
                            edge_action[ne + c] = o
                        c += 1
                if c == 0:
                    return nn, ne, nt, ni, deepest, ERR_CHANCE
                fr_cnt[d] = c
                fr_kind[d] = 1
                if fill:
                    kind[nid] = 1
                    player[nid] = -1
                    infoset[nid] = -1
                    first_edge[nid] = ne
                    n_edges[nid] = c
                    depth[nid] = d
                    term_id[nid] = -1
                ne += c
            else:
                na = G_active(params, s, agents)
                if na != 1:
                    return nn, ne, nt, ni, deepest, ERR_SIMULTANEOUS
                ag = agents[0]
                for a in range(n_actions):
                    mask[a] = 0
                G_legal(params, s, ag, mask)
                c = 0
                for a in range(n_actions):
                    if mask[a] != 0:
                        fr_out[d, c] = a
                        if fill:
                            edge_prob[ne + c] = 0.0
                            edge_action[ne + c] = a
                        c += 1
                if c == 0:
                    return nn, ne, nt, ni, deepest, ERR_NO_LEGAL
                fr_cnt[d] = c
                fr_kind[d] = 2
                fr_agent[d] = ag
                if not fill:
                    ni += 1  # counting pass: decision nodes bound the info states
                else:
                    klen = G_info_key(params, s, ag, key)
                    if klen < 0 or klen > max_key:
                        return nn, ne, nt, ni, deepest, ERR_KEY
                    slot = key_find(table, key_data, key_len, key, klen)
                    iid = table[slot]
                    if iid < 0:
                        iid = ni
                        ni += 1
                        table[slot] = iid
                        for k in range(klen):
                            key_data[iid, k] = key[k]
                        key_len[iid] = klen
                        is_player[iid] = ag
                        is_nact[iid] = c
                        for a in range(is_actions.shape[1]):
                            is_actions[iid, a] = -1
                        for j in range(c):
                            is_actions[iid, j] = fr_out[d, j]
                    else:
                        if is_player[iid] != ag or is_nact[iid] != c:
                            return nn, ne, nt, ni, deepest, ERR_INCONSISTENT
                        for j in range(c):
                            if is_actions[iid, j] != fr_out[d, j]:
                                return nn, ne, nt, ni, deepest, ERR_INCONSISTENT
                    kind[nid] = 2
                    player[nid] = ag
                    infoset[nid] = iid
                    first_edge[nid] = ne
                    n_edges[nid] = c
                    depth[nid] = d
                    term_id[nid] = -1
                ne += c
        # descend into the next child of the frame at depth d, or pop
        if fr_next[d] < fr_cnt[d]:
            if d + 1 > max_depth:
                return nn, ne, nt, ni, deepest, ERR_DEPTH
            j = fr_next[d]
            fr_next[d] = j + 1
            parent = st[d]
            child = st[d + 1]
            for i in range(state_size):
                child[i] = parent[i]
            for p in range(n_players):
                cum_u[d + 1, p] = cum_u[d, p]
            if fr_kind[d] == 1:
                G_apply_chance(params, child, fr_out[d, j])
            else:
                for p in range(actions.shape[0]):
                    actions[p] = 0
                actions[fr_agent[d]] = fr_out[d, j]
                for p in range(amounts.shape[0]):
                    for k in range(amounts.shape[1]):
                        amounts[p, k] = 0.0
                child[TICKS] += 1
                G_step(params, child, actions, amounts)
                if G_is_terminal(params, child):
                    child[DONE] = TERMINAL
                elif child[HORIZON] > 0 and child[TICKS] >= child[HORIZON]:
                    child[DONE] = TRUNCATED
                for p in range(n_players):
                    r = 0.0
                    for k in range(n_keys):
                        r += amounts[p, k] * weights[k]
                    cum_u[d + 1, p] += r
            if fill:
                edge_child[first_edge[fr_node[d]] + j] = nn
            d += 1
            pending = True
            continue
        d -= 1
        if d < 0:
            break
    return nn, ne, nt, ni, deepest, 0
