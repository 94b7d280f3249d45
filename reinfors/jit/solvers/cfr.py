"""Vanilla CFR and CFR+ iterations over the flat game tree (``gametree`` layout).

One iteration is OpenSpiel's ``_CFRSolver.evaluate_and_update_policy`` with alternating updates,
written as array passes instead of a recursion: for each traverser in seat order

1. a pre-order pass propagates the reach vector ``reach[n, 0..P]`` (one entry per player, the
   last for chance) from the root with the *current* policy;
2. a reverse pre-order pass computes every node's value for the traverser ``value[n]`` (the
   traverser's entry of OpenSpiel's value vector, the only one its updates read; a node whose
   players all have zero reach is pruned to zero, as OpenSpiel does);
3. a pre-order pass over the traverser's decision nodes adds the counterfactual regrets (the
   counterfactual reach is chance's reach times the other players' in seat order — reinfors
   0.4.0's order; OpenSpiel's ``prod(r[:p]) * prod(r[p+1:])`` rounds differently in the last
   bits for 3+ players) and the reach-weighted policy (times the iteration number for CFR+'s linear averaging) — pre-order
   visits the nodes of one info state in the same order as OpenSpiel's recursion, so every
   accumulator sums its terms in the same order;
4. CFR+ clamps every cumulative regret at zero; regret matching refreshes the current policy.

Tables are ``[n_infosets, A] float64`` (slot ``a < is_nact[i]`` is the ``a``-th legal action).
"""

from __future__ import annotations

import numpy as np

from reinfors.jit._compile import kernel
from reinfors.jit.solvers.gametree import key_find


@kernel(entry=True)
def regret_matching(regret, is_nact, cur):
    """Current policy from cumulative regrets (OpenSpiel's ``_regret_matching``), in place.

    ``regret, cur: [n_infosets, A] float64``; ``is_nact: [n_infosets] int32``.  Positive regrets
    normalised; uniform over the legal slots when no regret is positive.
    """
    for i in range(regret.shape[0]):
        na = is_nact[i]
        total = 0.0
        for a in range(na):
            if regret[i, a] > 0.0:
                total += regret[i, a]
        if total > 0.0:
            for a in range(na):
                r = regret[i, a]
                cur[i, a] = (r if r > 0.0 else 0.0) / total
        else:
            for a in range(na):
                cur[i, a] = 1.0 / na


@kernel(entry=True)
def average_policy(cum, is_nact, out):
    """Average policy from cumulative policy sums into ``out: [n_infosets, A] float64``
    (uniform over the legal slots where the sum is zero, OpenSpiel's ``_update_average_policy``)."""
    for i in range(cum.shape[0]):
        na = is_nact[i]
        total = 0.0
        for a in range(na):
            total += cum[i, a]
        if total == 0.0:
            for a in range(na):
                out[i, a] = 1.0 / na
        else:
            for a in range(na):
                out[i, a] = cum[i, a] / total
        for a in range(na, out.shape[1]):
            out[i, a] = 0.0


@kernel(entry=True)
def cfr_iterations(
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
    reach,
    value,
    n_players,
    first_iteration,
    n_iterations,
    plus,
):
    """Run ``n_iterations`` CFR (``plus`` False) or CFR+ (``plus`` True) iterations in place.

    Tree arrays as in ``gametree``; ``regret, cum, cur: [n_infosets, A] float64`` (``cur`` must
    hold the regret-matched policy of ``regret`` on entry and does on exit);
    ``reach: [n_nodes, P + 1]`` and ``value: [n_nodes]`` float64 scratch.  Iterations are
    numbered ``first_iteration + 1 ..`` (``first_iteration`` float64; the CFR+ averaging weight).
    """
    n_nodes = kind.shape[0]
    for it in range(n_iterations):
        weight = first_iteration + np.float64(it + 1) if plus else 1.0
        for trav in range(n_players):
            # 1. reach, pre-order
            for q in range(n_players + 1):
                reach[0, q] = 1.0
            for n in range(n_nodes):
                k = kind[n]
                if k == 0:
                    continue
                e0 = first_edge[n]
                ne = n_edges[n]
                if k == 1:
                    for j in range(ne):
                        c = edge_child[e0 + j]
                        for q in range(n_players + 1):
                            reach[c, q] = reach[n, q]
                        reach[c, n_players] = reach[n, n_players] * edge_prob[e0 + j]
                else:
                    i = infoset[n]
                    pl = player[n]
                    for j in range(ne):
                        c = edge_child[e0 + j]
                        for q in range(n_players + 1):
                            reach[c, q] = reach[n, q]
                        reach[c, pl] = reach[n, pl] * cur[i, j]
            # 2. values, reverse pre-order
            for n in range(n_nodes - 1, -1, -1):
                k = kind[n]
                if k == 0:
                    value[n] = util[term_id[n], trav]
                    continue
                v = 0.0
                e0 = first_edge[n]
                ne = n_edges[n]
                if k == 1:
                    for j in range(ne):
                        v += edge_prob[e0 + j] * value[edge_child[e0 + j]]
                    value[n] = v
                else:
                    live = False
                    for q in range(n_players):
                        if reach[n, q] != 0.0:
                            live = True
                            break
                    if live:
                        i = infoset[n]
                        for j in range(ne):
                            v += cur[i, j] * value[edge_child[e0 + j]]
                    value[n] = v
            # 3. regrets and policy sums of the traverser, pre-order
            for n in range(n_nodes):
                if kind[n] != 2 or player[n] != trav:
                    continue
                live = False
                for q in range(n_players):
                    if reach[n, q] != 0.0:
                        live = True
                        break
                if not live:
                    continue
                cf = reach[n, n_players]
                for q in range(n_players):
                    if q != trav:
                        cf *= reach[n, q]
                own = reach[n, trav]
                i = infoset[n]
                e0 = first_edge[n]
                v = value[n]
                for j in range(n_edges[n]):
                    c = edge_child[e0 + j]
                    regret[i, j] += cf * (value[c] - v)
                    cum[i, j] += weight * own * cur[i, j]
            # 4. CFR+ floor, then regret matching for the next traverser
            if plus:
                for i in range(regret.shape[0]):
                    for a in range(is_nact[i]):
                        if regret[i, a] < 0.0:
                            regret[i, a] = 0.0
            regret_matching(regret, is_nact, cur)


# -- snapshot entries (the original's per-info-state layout, little-endian) -----------------------
#   u32 key length, key bytes, u32 action count, then per action: u32 action id,
#   f64 cumulative regret, f64 cumulative policy, f64 current policy

UNPACK_TRUNCATED = 1
UNPACK_TRAILING = 2
UNPACK_ACTIONS = 3
UNPACK_UNKNOWN = 4
UNPACK_MISMATCH = 5
UNPACK_DUPLICATE = 6


@kernel(entry=True)
def packed_size(order, key_len, is_nact):
    """Bytes :func:`pack_entries` writes for the info states ``order: [m] int64``."""
    total = 0
    for r in range(order.shape[0]):
        i = order[r]
        total += 8 + key_len[i] + 28 * is_nact[i]
    return total


@kernel
def _put_u32(buf, pos, v):
    for b in range(4):
        buf[pos + b] = (v >> (8 * b)) & 0xFF
    return pos + 4


@kernel
def _put_f64(buf, pos, v, tmp):
    tmp[0] = v
    raw = tmp.view(np.uint8)
    for b in range(8):
        buf[pos + b] = raw[b]
    return pos + 8


@kernel(entry=True)
def pack_entries(order, key_data, key_len, is_nact, is_actions, regret, cum, cur, buf):
    """Serialise the info states ``order`` (in that order) into ``buf: [packed_size] uint8``."""
    tmp = np.zeros(1, np.float64)
    pos = 0
    for r in range(order.shape[0]):
        i = order[r]
        n = key_len[i]
        pos = _put_u32(buf, pos, n)
        for k in range(n):
            buf[pos + k] = key_data[i, k]
        pos += n
        na = is_nact[i]
        pos = _put_u32(buf, pos, na)
        for a in range(na):
            pos = _put_u32(buf, pos, is_actions[i, a])
            pos = _put_f64(buf, pos, regret[i, a], tmp)
            pos = _put_f64(buf, pos, cum[i, a], tmp)
            pos = _put_f64(buf, pos, cur[i, a], tmp)
    return pos


@kernel
def _get_u32(buf, pos):
    v = np.int64(0)
    for b in range(4):
        v |= np.int64(buf[pos + b]) << (8 * b)
    return v


@kernel
def _get_f64(buf, pos, tmp):
    raw = tmp.view(np.uint8)
    for b in range(8):
        raw[b] = buf[pos + b]
    return tmp[0]


@kernel(entry=True)
def unpack_entries(buf, count, max_actions, table, key_data, key_len, is_nact, is_actions, regret, cum, cur, seen):
    """Parse ``count`` entries from ``buf: [m] uint8`` into the tables (rows of listed info
    states; ``seen`` marks them).  Returns 0 or an ``UNPACK_*`` code."""
    tmp = np.zeros(1, np.float64)
    key = np.zeros(max(key_data.shape[1], 1), np.uint8)
    size = buf.shape[0]
    pos = 0
    for _ in range(count):
        if pos + 4 > size:
            return UNPACK_TRUNCATED
        n = _get_u32(buf, pos)
        pos += 4
        if pos + n + 4 > size:
            return UNPACK_TRUNCATED
        known = n <= key.shape[0]
        if known:
            for k in range(n):
                key[k] = buf[pos + k]
        pos += n
        na = _get_u32(buf, pos)
        pos += 4
        if na > max_actions:
            return UNPACK_ACTIONS
        if pos + 28 * na > size:
            return UNPACK_TRUNCATED
        if not known or key_data.shape[0] == 0:
            return UNPACK_UNKNOWN
        i = table[key_find(table, key_data, key_len, key, n)]
        if i < 0:
            return UNPACK_UNKNOWN
        if na != is_nact[i]:
            return UNPACK_MISMATCH
        if seen[i]:
            return UNPACK_DUPLICATE
        seen[i] = 1
        for a in range(na):
            if _get_u32(buf, pos) != is_actions[i, a]:
                return UNPACK_MISMATCH
            regret[i, a] = _get_f64(buf, pos + 4, tmp)
            cum[i, a] = _get_f64(buf, pos + 12, tmp)
            cur[i, a] = _get_f64(buf, pos + 20, tmp)
            pos += 28
    if pos != size:
        return UNPACK_TRAILING
    return 0


@kernel(entry=True)
def unpack_insert(buf, count, max_actions, max_key, key_data, key_len, is_nact, is_actions, regret, cum, cur):
    """Like :func:`unpack_entries` for a growing table (external MCCFR on Hold'em): rows
    ``0 .. count-1`` are filled in payload order (the caller rebuilds the key table and checks
    duplicates).  Returns 0 or an ``UNPACK_*`` code."""
    tmp = np.zeros(1, np.float64)
    size = buf.shape[0]
    pos = 0
    for r in range(count):
        if pos + 4 > size:
            return UNPACK_TRUNCATED
        n = _get_u32(buf, pos)
        pos += 4
        if pos + n + 4 > size:
            return UNPACK_TRUNCATED
        if n > max_key:
            return UNPACK_UNKNOWN
        for k in range(n):
            key_data[r, k] = buf[pos + k]
        key_len[r] = n
        pos += n
        na = _get_u32(buf, pos)
        pos += 4
        if na > max_actions:
            return UNPACK_ACTIONS
        if pos + 28 * na > size:
            return UNPACK_TRUNCATED
        is_nact[r] = na
        for a in range(na):
            act = _get_u32(buf, pos)
            if act >= max_actions:
                return UNPACK_MISMATCH
            is_actions[r, a] = act
            regret[r, a] = _get_f64(buf, pos + 4, tmp)
            cum[r, a] = _get_f64(buf, pos + 12, tmp)
            cur[r, a] = _get_f64(buf, pos + 20, tmp)
            pos += 28
    if pos != size:
        return UNPACK_TRAILING
    return 0


@kernel(entry=True)
def insert_keys(table, key_data, key_len, n):
    """Fill ``table`` (all -1) with rows ``0 .. n-1``; returns the first duplicate row or -1."""
    for i in range(n):
        slot = key_find(table, key_data, key_len, key_data[i], key_len[i])
        if table[slot] >= 0:
            return i
        table[slot] = i
    return -1
