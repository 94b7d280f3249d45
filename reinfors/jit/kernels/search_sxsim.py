
# ---- body: reinfors/jit/kernels/search_sxsim.py -----------------------------------------------------
# SelectiveExpectimax on simultaneous games (Snake), as reinfors 0.4.0: every acting agent runs
# its own best-first search per tick (agents in active order, one after the other in the same
# task), then the joint action is stepped.  In the searcher's tree every expanded node is a max
# node: one edge per legal action of the searcher, each edge fanned over the factored joint of
# the co-movers (every other agent: Uniform 1/n, or Distributional weights from its own
# observation's head-mean Q; an inactive agent contributes one placeholder branch) and, when the
# step left chance pending, over its outcomes (Committed(k): k draws at weight 1/k; ExpandAll:
# every positive-probability outcome of the first pending event at its probability, in
# DESCENDING outcome order — the original's fan order, verified record for record on Snake).  A
# child is terminal when the episode ends or the searcher is no longer active there.
#
# Committed(k) children draw their chance from the slot stream as they are created (the last child
# first; one ``index_hi`` over the positive-probability outcomes in ascending order per event):
# the stream of the episode's own chance and acting draws, as 0.4.0 (probed on Snake, where a
# search's draws come before the real tick's food respawn).  ExpandAll fans only the first
# pending event of a tick (later ones are sampled from the tree stream).
#
# The acting agents' searches run side by side, as 0.4.0's: one round each in turn (agents in
# active order, a search out of rounds leaves the turn), each round its own request; once every
# search is complete the decisions follow in active order (records, interior mask draws,
# epsilon draws), then the joint step.  The order matters for the slot stream, which the
# Committed draws and the decisions share.  The slot's tree arrays hold one node partition per
# acting agent (``_sxs_span``): root at ``j * M``, frontier lists at the same offset, and the
# partition's last row holds the counters of a search that waits for its turn (``_sxs_save``).
#
# Tree layout (per partition): a node's children are contiguous, ``TN_FIRST`` (first) and
# ``TN_NEXT`` (count), grouped by the searcher's action (ascending), then the co-mover joint
# (mixed radix, last co-mover fastest), then the chance outcomes; ``TN_JOINT`` keys the joint
# action (digits ``a_p + 1`` in base ``A + 1``).  ``t_nv[c]``: ``0..H`` values, ``H`` path weight,
# ``H + 1`` sigma, ``H + 2`` branch weight, ``H + 3`` branch reward (the searcher's), ``H + 4``
# the fixed factor of a deferred (Distributional) weight.  Distributional co-mover
# probabilities of a node live in ``t_ef[g, node, q * A + a, EF_PRIOR]``.
# sinfo counters of one search, kept in its partition's last t_ni row while it waits for its turn

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import atomics as _atomics
from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    C_ERROR,
    CFG_A,
    CFG_BUDGET,
    CFG_CHANCE,
    CFG_EXPAND,
    CFG_HEADS,
    CFG_INTERIOR,
    CFG_MAXDEPTH,
    CFG_N,
    CFG_O,
    CFG_OPP,
    CFG_SAMPLES,
    CFG_TOPK,
    EF_PRIOR,
    ERR_TREE_OVERFLOW,
    F_BOOTSTRAP_P,
    F_EPSILON,
    F_GAMMA,
    F_OPP_F,
    F_OPP_T,
    FT_DISAGREE,
    FT_SEARCH_SIGMA,
    FT_SIGMA,
    RF_RAW,
    RF_WEIGHT,
    RF_Z,
    RM_ACTION,
    RM_FLAGS,
    SI_CAPS,
    SI_EXPS,
    SI_FANN,
    SI_FBUF,
    SI_HEAD,
    SI_LEAVES,
    SI_LEVEL,
    SI_MAXD,
    SI_NACT,
    SI_NBATCH,
    SI_NFRONT,
    SI_NNEW,
    SI_NNODES,
    SI_NOPP,
    SI_PLEN,
    SI_ROUNDS,
    SI_SEARCH,
    SI_SIMS,
    SI_SXJ,
    SI_TERMS,
    TN_ALIVE,
    TN_DEPTH,
    TN_EXP,
    TN_FIRST,
    TN_FULL,
    TN_JOINT,
    TN_MOVER,
    TN_NEXT,
    TN_OPP,
    TN_SIZE,
    TN_TERM,
)
from reinfors.jit.games._contract import HORIZON
from reinfors.jit.policies import modelfree as _mf

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import G_apply_chance, G_chance_outcomes, G_chance_pending, G_encode, G_tree_copy
    from reinfors.jit.kernels.engine_records import _ST_WAIT, _emit, _new_decision_record, _new_record, _unpack
    from reinfors.jit.kernels.engine_slots import _request
    from reinfors.jit.kernels.game_kernels import step_rules, weigh
    from reinfors.jit.kernels.search_driver import _search_telemetry
    from reinfors.jit.kernels.search_parts import _I0, _I1, _IM1, _TREE_SEED, _fscr_off, _node_setup
    from reinfors.jit.kernels.search_selexp import _sx_sort_frontier
# -- end of bound names (scripts/kernel_part_imports.py) --


_SXS_CTX = (SI_SIMS, SI_PLEN, SI_MAXD, SI_TERMS, SI_CAPS, SI_LEAVES, SI_ROUNDS, SI_EXPS, SI_NNEW, SI_FBUF,
            SI_FANN, SI_NNODES, SI_NFRONT)  # fmt: skip
_SXS_DONE = TN_SIZE - 1  # ... and in that row's last word: 1 once the search is out of rounds
_SXS_W = 2  # t_nv column offsets from H (see above)
_SXS_R = 3
_SXS_S = 4


@kernel(inline="always")
def _sxs_span(E, g):
    """(root, end) of the current searcher's node partition: nodes ``root .. end - 1``; row
    ``end`` keeps the search's counters while it waits (``_sxs_save``)."""
    M = E.t_state.shape[1] // E.cfg[CFG_N]
    root = E.sinfo[g, SI_SXJ] * M
    return root, root + M - 1


@kernel(inline="always")
def _sxs_save(E, g):
    """Park the current search: its sinfo counters and sigma sum into its partition's last row."""
    _, end = _sxs_span(E, g)
    ctx = E.t_ni[g, end]
    for k in range(len(_SXS_CTX)):
        ctx[k] = E.sinfo[g, _SXS_CTX[k]]
    E.t_nv[g, end, 0] = E.ftele[g, FT_SEARCH_SIGMA]


@kernel(inline="always")
def _sxs_load(E, g):
    """Resume the current searcher's search (``SI_SXJ``): the counters ``_sxs_save`` parked."""
    _, end = _sxs_span(E, g)
    ctx = E.t_ni[g, end]
    for k in range(len(_SXS_CTX)):
        E.sinfo[g, _SXS_CTX[k]] = ctx[k]
    E.ftele[g, FT_SEARCH_SIGMA] = E.t_nv[g, end, 0]


@kernel(inline="always")
def _sxs_digit(code, p, A):
    """Agent ``p``'s action in the joint key ``code`` (-1: not part of the key)."""
    return (code // ((A + 1) ** p)) % (A + 1) - 1


@kernel(inline="always")
def _sxs_branch(E, g, c, h):
    """Branch into child ``c`` for head ``h``: ``w * r`` into a terminal child, else
    ``w * (r + gamma * value)``."""
    cfg, fcfg = E.cfg, E.fcfg
    t_ni, t_nv = E.t_ni, E.t_nv
    H = cfg[CFG_HEADS]
    w = t_nv[g, c, H + _SXS_W]
    r = t_nv[g, c, H + _SXS_R]
    if t_ni[g, c, TN_TERM] != 0:
        return w * r
    return w * (r + fcfg[F_GAMMA] * t_nv[g, c, h])


@kernel(inline="always")
def _sxs_edge_value(E, g, node, searcher, a, h):
    """Value of the searcher's edge ``a`` at ``node`` for head ``h``: the sum of its branches."""
    cfg = E.cfg
    t_ni = E.t_ni
    A = cfg[CFG_A]
    acc = 0.0
    first = t_ni[g, node, TN_FIRST]
    for c in range(first, first + t_ni[g, node, TN_NEXT]):
        if _sxs_digit(t_ni[g, c, TN_JOINT], searcher, A) == a:
            acc += _sxs_branch(E, g, c, h)
    return acc


@kernel(inline="always")
def _sxs_resolve(params, state, rng, probs, ascending):
    """Chance of a tree step: every pending event draws one outcome, uniform over its
    positive-probability outcomes (``index_hi``; other weights by inverse CDF), from ``rng`` —
    in ascending outcome order (Committed draws: the original's, from the slot stream) or
    descending (the events an ExpandAll fan leaves, from the tree stream); ``probs`` is scratch."""
    while G_chance_pending(params, state):
        n = G_chance_outcomes(params, state, probs)
        first = -1.0
        uniform_node = True
        cnt = 0
        tot = 0.0
        for i in range(n):
            if probs[i] > 0.0:
                if first < 0.0:
                    first = probs[i]
                elif probs[i] != first:
                    uniform_node = False
                cnt += 1
                tot += probs[i]
        o = n - 1
        if cnt > 0:
            k = _rng.index_hi(rng, cnt) if uniform_node else -1
            u = 0.0 if uniform_node else _rng.uniform(rng) * tot
            acc = 0.0
            for j in range(n):
                i = j if ascending else n - 1 - j
                if probs[i] > 0.0:
                    o = i
                    if uniform_node:
                        if k == 0:
                            break
                        k -= 1
                    else:
                        acc += probs[i]
                        if u < acc:
                            break
        G_apply_chance(params, state, o)


@kernel
def _sxs_fan(AT, g, node, searcher, code, fixed, deferred):
    """Children of ``node`` for the joint action in ``iscr[g, :N]`` (key ``code``, fixed move
    factor ``fixed``): the step, then one child per chance outcome (see the header).  Returns the
    number of children (contiguous from the previous ``SI_NNODES``), -1 when the tree is full."""
    E = _unpack(AT)
    params, cfg, weights, sinfo = E.params, E.cfg, E.weights, E.sinfo
    t_state, t_ni, t_nv, t_rng = E.t_state, E.t_ni, E.t_nv, E.t_rng
    N, A, H = cfg[CFG_N], cfg[CFG_A], cfg[CFG_HEADS]
    fscr = E.fscr
    rewards = fscr[g, A : A + N]
    probs = fscr[g, A + N : A + N + max(1, cfg[CFG_CHANCE])]
    scratch = fscr[g, _fscr_off(E) + max(A, N) :]
    first = sinfo[g, SI_NNODES]
    _, cap = _sxs_span(E, g)
    if first >= cap:
        _atomics.cas(E.ctl, C_ERROR, 0, ERR_TREE_OVERFLOW)
        return _IM1
    base = t_state[g, first]
    G_tree_copy(params, t_state[g, node], base)
    going = step_rules(params, base, E.iscr[g, 0:N], E.amounts[g])
    weigh(E.amounts[g], weights, rewards)
    r = rewards[searcher]
    expand = cfg[CFG_EXPAND] != 0
    k = cfg[CFG_SAMPLES]
    pending = going and G_chance_pending(params, base)
    n = _I1
    cnt = _I1
    if pending:
        if expand:
            n = G_chance_outcomes(params, base, probs)
            cnt = 0
            for o in range(n):
                if probs[o] > 0.0:
                    cnt += 1
            if cnt == 0:  # nothing can happen: one child, chance resolved as the env would
                expand = False
                k = _I1
                cnt = 1
        else:
            cnt = k
    if first + cnt > cap:
        _atomics.cas(E.ctl, C_ERROR, 0, ERR_TREE_OVERFLOW)
        return _IM1
    sinfo[g, SI_NNODES] = first + cnt
    for i in range(1, cnt):
        G_tree_copy(params, base, t_state[g, first + i])
    if pending and not expand:
        # Committed(k): the k draws come from the slot stream as the children are made (the
        # stream of the episode's real chance and acting draws), the last child taking the
        # first draw, as 0.4.0
        for i in range(cnt - 1, -1, -1):
            _sxs_resolve(params, t_state[g, first + i], E.srng[g], probs, True)
    o = n - 1  # ExpandAll: outcomes in descending order (the original's fan order)
    for i in range(cnt):
        c = first + i
        dst = t_state[g, c]
        p = 1.0
        if pending and expand:
            while probs[o] <= 0.0:
                o -= 1
            p = probs[o]
            G_apply_chance(params, dst, o)
            o -= 1
            _sxs_resolve(params, dst, t_rng[g], scratch, False)  # further events of the tick: sampled
        elif pending:
            p = 1.0 / k
        _node_setup(AT, g, c, t_ni[g, node, TN_DEPTH] + 1, _IM1)
        if t_ni[g, c, TN_TERM] == 0 and (t_ni[g, c, TN_ALIVE] >> searcher) & 1 == 0:
            t_ni[g, c, TN_TERM] = 1  # the searcher is out: the end of its search
        t_ni[g, c, TN_JOINT] = code
        t_nv[g, c, H] = 1.0
        t_nv[g, c, H + 1] = 0.0
        t_nv[g, c, H + _SXS_R] = r
        if deferred:
            t_nv[g, c, H + _SXS_W] = 0.0
            t_nv[g, c, H + _SXS_S] = fixed * p
        else:
            t_nv[g, c, H + _SXS_W] = fixed * p
            t_nv[g, c, H + _SXS_S] = 1.0
    return cnt


@kernel(inline="always")
def _sxs_nlegal(E, g, node, q):
    """Legal actions of agent ``q`` at ``node`` (0 when it is not acting there)."""
    A = E.cfg[CFG_A]
    if (E.t_ni[g, node, TN_ALIVE] >> q) & 1 == 0:
        return 0
    n = 0
    for a in range(A):
        n += E.t_legal[g, node, q * A + a]
    return n


@kernel
def _sxs_run(AT, g):
    """Best-first rounds of the current searcher's tree (see ``_sx_run``): every expanded node
    is a max node whose edges fan over the co-movers' joint and the chance outcomes.  Rows of a
    round: the co-movers' own observations of every expanded node (Distributional), then every
    new non-terminal child encoded for the searcher.  Returns True while waiting for rows."""
    E = _unpack(AT)
    cfg, sinfo = E.cfg, E.sinfo
    t_ni, t_legal, t_list, rq = E.t_ni, E.t_legal, E.t_list, E.rq
    A, N = cfg[CFG_A], cfg[CFG_N]
    budget = cfg[CFG_BUDGET]
    max_depth = cfg[CFG_MAXDEPTH]
    distributional = cfg[CFG_OPP] != 0
    lo, _ = _sxs_span(E, g)  # the root, and the offset of this search's frontier lists
    searcher = t_ni[g, lo, TN_MOVER]
    actions = E.iscr[g, 0:N]
    while sinfo[g, SI_NFRONT] > 0 and sinfo[g, SI_EXPS] < budget:
        fb = sinfo[g, SI_FBUF]
        nf = sinfo[g, SI_NFRONT]
        if sinfo[g, SI_ROUNDS] > 0:
            _sx_sort_frontier(AT, g, fb, nf, lo)
        take = min(cfg[CFG_TOPK], budget - sinfo[g, SI_EXPS], nf)
        nb = 1 - fb
        batch = t_list[g, 3]
        for i in range(take):
            batch[i] = t_list[g, fb, lo + i]
        nrest = 0
        for i in range(take, nf):
            t_list[g, nb, lo + nrest] = t_list[g, fb, lo + i]
            nrest += 1
        nn = _I0
        nopp = _I0
        for bi in range(take):
            node = batch[bi]
            d = t_ni[g, node, TN_DEPTH]
            combos = 1
            t_ni[g, node, TN_OPP] = nopp
            for q in range(N):
                if q == searcher:
                    continue
                nq = _sxs_nlegal(E, g, node, q)
                if nq > 0:
                    combos *= nq
                    if distributional:
                        rq[g, nopp, 0] = node  # the co-mover's own observation: its distribution
                        rq[g, nopp, 1] = q
                        nopp += 1
            t_ni[g, node, TN_FIRST] = sinfo[g, SI_NNODES]
            for a in range(A):
                if t_legal[g, node, searcher * A + a] == 0:
                    continue
                for combo in range(combos):
                    rem = combo
                    fixed = 1.0
                    code = (a + 1) * (A + 1) ** searcher
                    for q in range(N):
                        actions[q] = 0
                    actions[searcher] = a
                    for q in range(N - 1, -1, -1):  # the last co-mover varies fastest
                        if q == searcher:
                            continue
                        nq = _sxs_nlegal(E, g, node, q)
                        if nq == 0:
                            continue  # placeholder branch (weight 1)
                        k = rem % nq
                        rem //= nq
                        act = -1
                        for b in range(A):
                            if t_legal[g, node, q * A + b] != 0:
                                if k == 0:
                                    act = b
                                    break
                                k -= 1
                        actions[q] = act
                        code += (act + 1) * (A + 1) ** q
                        if not distributional:
                            fixed *= 1.0 / nq
                    c0 = sinfo[g, SI_NNODES]
                    cnt = _sxs_fan(AT, g, node, searcher, code, fixed, distributional)
                    if cnt < 0:
                        return True  # tree overflow: the kernel error stops the collect
                    for c in range(c0, c0 + cnt):
                        if t_ni[g, c, TN_TERM] == 0:
                            t_list[g, 2, nn] = c
                            nn += 1
            t_ni[g, node, TN_NEXT] = sinfo[g, SI_NNODES] - t_ni[g, node, TN_FIRST]
            t_ni[g, node, TN_EXP] = 1
            t_ni[g, node, TN_FULL] = 1
            sinfo[g, SI_EXPS] += 1
            if d + 1 > sinfo[g, SI_MAXD]:
                sinfo[g, SI_MAXD] = d + 1
        sinfo[g, SI_ROUNDS] += 1
        nf = nrest
        for i in range(nn):
            c = t_list[g, 2, i]
            if t_ni[g, c, TN_DEPTH] < max_depth:
                t_list[g, nb, lo + nf] = c
                nf += 1
        sinfo[g, SI_NFRONT] = nf
        sinfo[g, SI_FBUF] = nb
        sinfo[g, SI_NNEW] = nn
        sinfo[g, SI_NOPP] = nopp
        sinfo[g, SI_NBATCH] = take
        if nopp + nn > 0:
            for i in range(nn):
                rq[g, nopp + i, 0] = t_list[g, 2, i]
                rq[g, nopp + i, 1] = searcher
            sinfo[g, SI_LEAVES] += nn
            _request(AT, g, nopp + nn, _ST_WAIT)
            return True
        # no rows this round: the branch weights stay as set (no deferred factor exists)
        _sxs_path_weights(AT, g)
    return False


@kernel
def _sxs_path_weights(AT, g):
    """Resolve the round's deferred branch weights (the fixed factor times every active
    co-mover's probability of its action, last co-mover first) and flow the path weights down
    (``pw(child) = pw(node) * w * gamma``)."""
    E = _unpack(AT)
    cfg, fcfg, sinfo = E.cfg, E.fcfg, E.sinfo
    t_ni, t_ef, t_nv, t_list = E.t_ni, E.t_ef, E.t_nv, E.t_list
    A, N, H = cfg[CFG_A], cfg[CFG_N], cfg[CFG_HEADS]
    gamma = fcfg[F_GAMMA]
    distributional = cfg[CFG_OPP] != 0
    searcher = t_ni[g, _sxs_span(E, g)[0], TN_MOVER]
    batch = t_list[g, 3]
    for bi in range(sinfo[g, SI_NBATCH]):
        node = batch[bi]
        pw = t_nv[g, node, H]
        first = t_ni[g, node, TN_FIRST]
        for c in range(first, first + t_ni[g, node, TN_NEXT]):
            if distributional:
                w = t_nv[g, c, H + _SXS_S]
                code = t_ni[g, c, TN_JOINT]
                for q in range(N - 1, -1, -1):
                    if q == searcher:
                        continue
                    a = _sxs_digit(code, q, A)
                    if a >= 0:
                        w *= t_ef[g, node, q * A + a, EF_PRIOR]
                t_nv[g, c, H + _SXS_W] = w
            t_nv[g, c, H] = pw * t_nv[g, c, H + _SXS_W] * gamma


@kernel
def _sxs_absorb(AT, g):
    """The round's rows: co-mover rows become that co-mover's move probabilities (softmax of the
    head-mean Q over its legal actions at ``opp_temperature``, floored); leaf rows per-head boots
    (masked max over the searcher's legal actions) and their spread sigma; then the branch and
    path weights."""
    E = _unpack(AT)
    cfg, fcfg, sinfo, preds = E.cfg, E.fcfg, E.sinfo, E.preds
    t_ni, t_ef, t_nv, t_legal, t_list, rq = E.t_ni, E.t_ef, E.t_nv, E.t_legal, E.t_list, E.rq
    A, H = cfg[CFG_A], cfg[CFG_HEADS]
    nopp = sinfo[g, SI_NOPP]
    searcher = t_ni[g, _sxs_span(E, g)[0], TN_MOVER]
    off = _fscr_off(E)
    mean = E.fscr[g, off : off + A]
    if nopp > 0:
        temp = fcfg[F_OPP_T]
        floor = fcfg[F_OPP_F]
        for row in range(nopp):
            node = rq[g, row, 0]
            q = rq[g, row, 1]
            qm = -np.inf
            nl = 0
            for a in range(A):
                if t_legal[g, node, q * A + a] != 0:
                    s = 0.0
                    for h in range(H):
                        s += preds[g, row, h * A + a]
                    mean[a] = s / H
                    if mean[a] > qm:
                        qm = mean[a]
                    nl += 1
            zs = 0.0
            for a in range(A):
                if t_legal[g, node, q * A + a] != 0:
                    mean[a] = np.exp((mean[a] - qm) / temp)
                    zs += mean[a]
            for a in range(A):
                if t_legal[g, node, q * A + a] != 0:
                    t_ef[g, node, q * A + a, EF_PRIOR] = (1.0 - floor) * mean[a] / zs + floor / nl
                else:
                    t_ef[g, node, q * A + a, EF_PRIOR] = 0.0
    for j in range(sinfo[g, SI_NNEW]):
        c = t_list[g, 2, j]
        row = nopp + j
        m = 0.0
        for h in range(H):
            best = -np.inf
            for a in range(A):
                if t_legal[g, c, searcher * A + a] != 0 and preds[g, row, h * A + a] > best:
                    best = preds[g, row, h * A + a]
            t_nv[g, c, h] = best
            m += best
        m = m / H
        v = 0.0
        for h in range(H):
            v += (t_nv[g, c, h] - m) * (t_nv[g, c, h] - m)
        sigma = np.sqrt(v / H)
        t_nv[g, c, H + 1] = sigma
        E.ftele[g, FT_SEARCH_SIGMA] += sigma
    _sxs_path_weights(AT, g)


@kernel
def _sxs_finish(AT, g):
    """Back the values up (children come after their parents: one reverse pass), per head the
    max over the searcher's edges of the summed branches; emit TreeStrap interior records when
    asked."""
    E = _unpack(AT)
    cfg, learn, sinfo = E.cfg, E.learn, E.sinfo
    t_ni, t_nv, t_legal = E.t_ni, E.t_nv, E.t_legal
    A, H = cfg[CFG_A], cfg[CFG_HEADS]
    searcher = t_ni[g, _sxs_span(E, g)[0], TN_MOVER]
    off = _fscr_off(E)
    acc = E.fscr[g, off : off + A]
    for node in range(sinfo[g, SI_NNODES] - 1, _sxs_span(E, g)[0] - 1, -1):
        if t_ni[g, node, TN_EXP] == 0:
            continue  # a frontier leaf keeps its boot values; a terminal child has none
        first = t_ni[g, node, TN_FIRST]
        for h in range(H):
            for a in range(A):
                acc[a] = 0.0
            for c in range(first, first + t_ni[g, node, TN_NEXT]):
                acc[_sxs_digit(t_ni[g, c, TN_JOINT], searcher, A)] += _sxs_branch(E, g, c, h)
            best = -np.inf
            for a in range(A):
                if t_legal[g, node, searcher * A + a] != 0 and acc[a] > best:
                    best = acc[a]
            t_nv[g, node, h] = best
    if cfg[CFG_INTERIOR] != 0 and learn[searcher] != 0:
        _sxs_interior(AT, g, searcher)


@kernel
def _sxs_interior(AT, g, searcher):
    """TreeStrap interior targets: a record for every expanded node below the root, depth-first
    pre-order over the branches; one mask draw per head from the slot stream."""
    E = _unpack(AT)
    params, cfg, fcfg, srng, sinfo = E.params, E.cfg, E.fcfg, E.srng, E.sinfo
    r_meta, r_f, r_obs, r_mask, r_legal, r_tgt = E.r_meta, E.r_f, E.r_obs, E.r_mask, E.r_legal, E.r_tgt
    t_state, t_ni, t_legal, t_list = E.t_state, E.t_ni, E.t_legal, E.t_list
    A, H = cfg[CFG_A], cfg[CFG_HEADS]
    bp = fcfg[F_BOOTSTRAP_P]
    level = sinfo[g, SI_LEVEL]
    stack = t_list[g, 2]
    sp = 0
    root, _ = _sxs_span(E, g)
    first = t_ni[g, root, TN_FIRST]
    for c in range(first + t_ni[g, root, TN_NEXT] - 1, first - 1, -1):
        stack[sp] = c
        sp += 1
    while sp > 0:
        sp -= 1
        node = stack[sp]
        if t_ni[g, node, TN_EXP] == 0:
            continue
        idx = _new_record(E, g, searcher)
        if idx >= 0:
            r_meta[idx, RM_ACTION] = -1
            r_meta[idx, RM_FLAGS] = 0
            G_encode(params, t_state[g, node], searcher, r_obs[idx])
            for a in range(A):
                r_legal[idx, a] = 0
            for h in range(H):
                for a in range(A):
                    legal = t_legal[g, node, searcher * A + a] != 0
                    r_tgt[idx, h * A + a] = _sxs_edge_value(E, g, node, searcher, a, h) if legal else 0.0
                r_mask[idx, h] = 1.0 if _rng.uniform(srng[g]) < bp else 0.0
            r_f[idx, RF_RAW] = 0.0
            r_f[idx, RF_Z] = 0.0
            _emit(E, g, idx, level)
        first = t_ni[g, node, TN_FIRST]
        for c in range(first + t_ni[g, node, TN_NEXT] - 1, first - 1, -1):
            stack[sp] = c
            sp += 1


@kernel
def _sxs_decide(AT, g):
    """The current searcher acts (Thompson head of the episode, argmax over its legal actions,
    then epsilon exploration) and records its decision; its action waits in ``iscr[g, N + p]``
    for the joint step (``_sxs_step``)."""
    E = _unpack(AT)
    cfg, fcfg, learn, srng, sinfo, act_agents, root_obs, legal = E.cfg, E.fcfg, E.learn, E.srng, E.sinfo, E.act_agents, E.root, E.legal
    r_meta, r_f, r_obs, r_legal, r_tgt, ftele = E.r_meta, E.r_f, E.r_obs, E.r_legal, E.r_tgt, E.ftele
    N, A, H = cfg[CFG_N], cfg[CFG_A], cfg[CFG_HEADS]
    root, _ = _sxs_span(E, g)
    j = sinfo[g, SI_SXJ]
    p = act_agents[g, j]
    lg = legal[g, j]
    if sinfo[g, SI_LEAVES] > 0:
        ftele[g, FT_SIGMA] += ftele[g, FT_SEARCH_SIGMA] / sinfo[g, SI_LEAVES]
    if H >= 2:
        tot = 0.0
        nl = 0
        for a in range(A):
            if lg[a] == 0:
                continue
            nl += 1
            m = 0.0
            for h in range(H):
                m += _sxs_edge_value(E, g, root, p, a, h)
            m *= 1.0 / H
            var = 0.0
            for h in range(H):
                dv = _sxs_edge_value(E, g, root, p, a, h) - m
                var += dv * dv
            tot += np.sqrt(var * (1.0 / H))
        ftele[g, FT_DISAGREE] += tot / nl
    head = min(sinfo[g, SI_HEAD], H - 1)
    act = -1
    bv = -np.inf
    for a in range(A):
        if lg[a] != 0:
            v = _sxs_edge_value(E, g, root, p, a, head)
            if act < 0 or v > bv:
                act = a
                bv = v
    eps = fcfg[F_EPSILON]
    if eps > 0.0 and _rng.uniform(srng[g]) < eps:
        act = _mf.uniform_legal(srng[g], lg, A)
    _search_telemetry(E, g)
    iscr = E.iscr
    iscr[g, N + p] = act  # parked until every acting agent has searched
    if learn[p] != 0:
        idx = _new_decision_record(E, g, p)
        if idx >= 0:
            r_meta[idx, RM_FLAGS] = 0
            r_meta[idx, RM_ACTION] = act
            r_f[idx, RF_WEIGHT] = 1.0
            for i in range(cfg[CFG_O]):
                r_obs[idx, i] = root_obs[g, j, i]
            for a in range(A):
                r_legal[idx, a] = lg[a]
            for h in range(H):
                for a in range(A):
                    r_tgt[idx, h * A + a] = _sxs_edge_value(E, g, root, p, a, h) if lg[a] != 0 else 0.0


@kernel
def _sxs_begin(AT, g):
    """Start one search per acting agent from the slot's state, each in its own partition (root
    ``j * M``: mover, path weight 1, a frontier of the root), all parked; the first one loaded."""
    E = _unpack(AT)
    cfg, states, srng, sinfo = E.cfg, E.states, E.srng, E.sinfo
    t_state, t_ni, t_nv, t_rng, t_list = E.t_state, E.t_ni, E.t_nv, E.t_rng, E.t_list
    t_rng[g, 0] = _rng.mix64(srng[g, 0] ^ _TREE_SEED)  # ExpandAll's later events (not the slot stream)
    src = states[g]
    for j in range(sinfo[g, SI_NACT]):
        sinfo[g, SI_SXJ] = j
        root, end = _sxs_span(E, g)
        dst = t_state[g, root]
        for i in range(src.shape[0]):
            dst[i] = src[i]
        dst[HORIZON] = 0  # the tree searches past the engine's truncation horizon (_tree_begin)
        _node_setup(AT, g, root, _I0, _IM1)
        t_ni[g, root, TN_MOVER] = E.act_agents[g, j]
        t_nv[g, root, cfg[CFG_HEADS]] = 1.0  # the root's path weight
        t_list[g, 0, root] = root
        for k in range(len(_SXS_CTX)):
            sinfo[g, _SXS_CTX[k]] = 0
        sinfo[g, SI_NNODES] = root + 1
        sinfo[g, SI_NFRONT] = 1
        E.ftele[g, FT_SEARCH_SIGMA] = 0.0
        _sxs_save(E, g)
        t_ni[g, end, _SXS_DONE] = 0
    sinfo[g, SI_SXJ] = 0
    _sxs_load(E, g)
    sinfo[g, SI_SEARCH] = 1


@kernel
def _sxs_step(AT, g):
    """Advance the slot's per-agent searches of the current tick, one round per turn (see the
    header): -1 while a round waits for its rows; once all are complete, every decision and the
    acting agents to step the tick with (``_finish_tick``, by ``_advance``).  ``SI_SEARCH`` is 2
    while the current searcher's round is out: its rows came back when this runs again, and the
    turn passes on."""
    E = _unpack(AT)
    sinfo, t_ni = E.sinfo, E.t_ni
    na = sinfo[g, SI_NACT]
    if sinfo[g, SI_SEARCH] == 0:
        _sxs_begin(AT, g)
    while True:
        if sinfo[g, SI_SEARCH] == 2:
            _sxs_save(E, g)
            j = sinfo[g, SI_SXJ]
            nxt = -1
            for step in range(1, na + 1):
                k = (j + step) % na
                sinfo[g, SI_SXJ] = k
                if t_ni[g, _sxs_span(E, g)[1], _SXS_DONE] == 0:
                    nxt = k
                    break
            if nxt < 0:
                break  # every search decided
            _sxs_load(E, g)
            sinfo[g, SI_SEARCH] = 1
        if _sxs_run(AT, g):
            sinfo[g, SI_SEARCH] = 2
            return _IM1
        t_ni[g, _sxs_span(E, g)[1], _SXS_DONE] = 1  # out of rounds: it leaves the turn
        sinfo[g, SI_SEARCH] = 2
    # every search is complete: the decisions in active order, then the joint step
    for j in range(na):
        sinfo[g, SI_SXJ] = j
        _sxs_load(E, g)
        _sxs_finish(AT, g)
        _sxs_decide(AT, g)
    N = E.cfg[CFG_N]
    iscr, act_agents = E.iscr, E.act_agents
    sinfo[g, SI_SEARCH] = 0
    sinfo[g, SI_SXJ] = 0
    for q in range(N):
        iscr[g, q] = 0
    for i in range(na):
        q = act_agents[g, i]
        iscr[g, q] = iscr[g, N + q]
    for q in range(N):
        iscr[g, N + q] = -1
    return na
