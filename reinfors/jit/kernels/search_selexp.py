
# ---- body: reinfors/jit/kernels/search_selexp.py -------------------------------------------------
# SelectiveExpectimax on sequential games: best-first rounds over ensemble heads (value-of-
# information frontier ordering, opponent models, path weights).

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    CFG_A,
    CFG_BUDGET,
    CFG_HEADS,
    CFG_MAXDEPTH,
    CFG_N,
    CFG_OPP,
    CFG_TOPK,
    EF_PRIOR,
    EF_REW,
    F_BETA,
    F_EPSILON,
    F_GAMMA,
    F_OPP_F,
    F_OPP_T,
    FT_DISAGREE,
    FT_SEARCH_SIGMA,
    FT_SIGMA,
    SI_EXPS,
    SI_FBUF,
    SI_HEAD,
    SI_LEAVES,
    SI_MAXD,
    SI_NBATCH,
    SI_NFRONT,
    SI_NNEW,
    SI_NOPP,
    SI_ROUNDS,
    TN_DEPTH,
    TN_EXP,
    TN_FULL,
    TN_MOVER,
    TN_NOUT,
    TN_OPP,
    TN_TERM,
)
from reinfors.jit.policies import modelfree as _mf

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import CHANCE_IN_STEP
    from reinfors.jit.kernels.engine_records import _ST_WAIT, _unpack
    from reinfors.jit.kernels.engine_slots import _request
    from reinfors.jit.kernels.search_chance import _chance_value, _new_edge, _pcol
    from reinfors.jit.kernels.search_minimax import _edge_value
    from reinfors.jit.kernels.search_parts import _FALSE, _I0, _fscr_off
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel(inline="always")
def _sx_branch(E, g, node, a, h):
    """SelectiveExpectimax branch ``a`` of ``node`` for head ``h``: ``w * r`` into a terminal
    child, else ``w * (r + gamma * value)`` (everything from the searcher's perspective)."""
    fcfg = E.fcfg
    t_ni, t_child, t_ef, t_nv = E.t_ni, E.t_child, E.t_ef, E.t_nv
    c = t_child[g, node, a]
    w = t_ef[g, node, a, EF_PRIOR]
    r = t_ef[g, node, a, EF_REW]
    if CHANCE_IN_STEP and t_ni[g, c, TN_NOUT] > 0:
        return w * (r + fcfg[F_GAMMA] * _chance_value(E, g, c, h, _I0, _FALSE))
    if t_ni[g, c, TN_TERM] != 0:
        return w * r
    return w * (r + fcfg[F_GAMMA] * t_nv[g, c, h])


@kernel
def _sx_sort_frontier(AT, g, fb, nf, lo):
    """Order the frontier ``t_list[g, fb, lo:lo + nf]`` (stable) by (-(voi + dt), -depth, -pw):
    ``voi = beta * pw * sigma / max(pw * sigma)`` (1 when no positive maximum), ``dt = (1 - beta)
    * depth / max_depth``."""
    E = _unpack(AT)
    cfg, fcfg = E.cfg, E.fcfg
    t_ni, t_nv, t_list = E.t_ni, E.t_nv, E.t_list
    H = cfg[CFG_HEADS]
    beta = fcfg[F_BETA]
    front = t_list[g, fb, lo : lo + nf]
    mv = 0.0
    for i in range(nf):
        x = t_nv[g, front[i], H] * t_nv[g, front[i], H + 1]
        if x > mv:
            mv = x
    if not mv > 0.0:
        mv = 1.0
    k1 = np.empty(nf, np.float64)
    k2 = np.empty(nf, np.float64)
    k3 = np.empty(nf, np.float64)
    for i in range(nf):
        n = front[i]
        pw = t_nv[g, n, H]
        d = np.float64(t_ni[g, n, TN_DEPTH])
        voi = beta * (pw * t_nv[g, n, H + 1]) / mv
        dt = (1.0 - beta) * d / cfg[CFG_MAXDEPTH]
        k1[i] = -(voi + dt)
        k2[i] = -d
        k3[i] = -pw
    idx = np.argsort(k3, kind="mergesort")
    idx = idx[np.argsort(k2[idx], kind="mergesort")]
    idx = idx[np.argsort(k1[idx], kind="mergesort")]
    old = front.copy()
    for i in range(nf):
        front[i] = old[idx[i]]


@kernel
def _sx_run(AT, g):
    """Best-first rounds: expand the ``top_k`` best frontier nodes (the searcher's nodes: one edge
    per legal action; opponent nodes: one expectation edge over the mover's legal actions), then
    request the round's rows (opponent rows first when distributional, then every new non-terminal
    child, encoded for the searcher).  Returns True while waiting for rows."""
    E = _unpack(AT)
    cfg, sinfo = E.cfg, E.sinfo
    t_ni, t_ef, t_nv, t_legal, t_list, rq = E.t_ni, E.t_ef, E.t_nv, E.t_legal, E.t_list, E.rq
    A, N, H = cfg[CFG_A], cfg[CFG_N], cfg[CFG_HEADS]
    budget = cfg[CFG_BUDGET]
    max_depth = cfg[CFG_MAXDEPTH]
    distributional = cfg[CFG_OPP] != 0
    searcher = t_ni[g, 0, TN_MOVER]
    rewards = E.fscr[g, A : A + N]
    while sinfo[g, SI_NFRONT] > 0 and sinfo[g, SI_EXPS] < budget:
        fb = sinfo[g, SI_FBUF]
        nf = sinfo[g, SI_NFRONT]
        if sinfo[g, SI_ROUNDS] > 0:
            _sx_sort_frontier(AT, g, fb, nf, 0)
        take = min(cfg[CFG_TOPK], budget - sinfo[g, SI_EXPS], nf)
        nb = 1 - fb
        batch = t_list[g, 3]
        for i in range(take):
            batch[i] = t_list[g, fb, i]
        nrest = 0
        for i in range(take, nf):
            t_list[g, nb, nrest] = t_list[g, fb, i]
            nrest += 1
        nn = _I0
        nopp = _I0
        for bi in range(take):
            node = batch[bi]
            mover = t_ni[g, node, TN_MOVER]
            d = t_ni[g, node, TN_DEPTH]
            nl = 0
            for a in range(A):
                if t_legal[g, node, a] != 0:
                    nl += 1
            mine = mover == searcher
            if not mine and distributional:
                rq[g, nopp, 0] = node  # the mover's own observation: its action distribution
                rq[g, nopp, 1] = mover
                t_ni[g, node, TN_OPP] = nopp
                nopp += 1
            for a in range(A):
                if t_legal[g, node, a] == 0:
                    continue
                c = _new_edge(AT, g, node, a)
                if c < 0:
                    return True  # tree overflow: the kernel error stops the collect
                t_ef[g, node, a, EF_REW] = rewards[searcher]
                t_ef[g, node, a, EF_PRIOR] = 1.0 if mine else (0.0 if distributional else 1.0 / nl)
                c0 = c
                c1 = c + 1
                if CHANCE_IN_STEP and t_ni[g, c, TN_NOUT] > 0:
                    c0 = c + 1  # a chance node: its outcome children are the new nodes
                    c1 = c + 1 + t_ni[g, c, TN_NOUT]
                for cc in range(c0, c1):
                    t_nv[g, cc, H] = 1.0
                    if t_ni[g, cc, TN_TERM] == 0:
                        t_list[g, 2, nn] = cc
                        nn += 1
            t_ni[g, node, TN_EXP] = 1
            t_ni[g, node, TN_FULL] = 1 if mine else 0
            sinfo[g, SI_EXPS] += 1
            if d + 1 > sinfo[g, SI_MAXD]:
                sinfo[g, SI_MAXD] = d + 1
        sinfo[g, SI_ROUNDS] += 1
        nf = nrest
        for i in range(nn):
            c = t_list[g, 2, i]
            if t_ni[g, c, TN_DEPTH] < max_depth:
                t_list[g, nb, nf] = c
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
        # no rows this round: nothing is absorbed (branch weights and path weights stay as set)
    return False


@kernel
def _sx_absorb(AT, g):
    """Opponent rows become branch weights (softmax of the head-mean Q over the mover's legal
    actions at ``opp_temperature``, floored); leaf rows become per-head boots (masked max over
    the leaf mover's legal actions) and their spread sigma; path weights flow down the batch."""
    E = _unpack(AT)
    cfg, fcfg, sinfo, preds = E.cfg, E.fcfg, E.sinfo, E.preds
    t_ni, t_child, t_ef, t_nv, t_legal, t_list = E.t_ni, E.t_child, E.t_ef, E.t_nv, E.t_legal, E.t_list
    A, H = cfg[CFG_A], cfg[CFG_HEADS]
    gamma = fcfg[F_GAMMA]
    nopp = sinfo[g, SI_NOPP]
    batch = t_list[g, 3]
    off = _fscr_off(E)
    mean = E.fscr[g, off : off + A]
    if nopp > 0:
        temp = fcfg[F_OPP_T]
        floor = fcfg[F_OPP_F]
        for bi in range(sinfo[g, SI_NBATCH]):
            node = batch[bi]
            if t_ni[g, node, TN_FULL] != 0:
                continue
            row = t_ni[g, node, TN_OPP]
            qm = -np.inf
            nl = 0
            for a in range(A):
                if t_legal[g, node, a] != 0:
                    s = 0.0
                    for h in range(H):
                        s += preds[g, row, h * A + a]
                    mean[a] = s / H
                    if mean[a] > qm:
                        qm = mean[a]
                    nl += 1
            zs = 0.0
            for a in range(A):
                if t_legal[g, node, a] != 0:
                    mean[a] = np.exp((mean[a] - qm) / temp)
                    zs += mean[a]
            for a in range(A):
                if t_legal[g, node, a] != 0:
                    t_ef[g, node, a, EF_PRIOR] = 1.0 * ((1.0 - floor) * mean[a] / zs + floor / nl)
    for j in range(sinfo[g, SI_NNEW]):
        c = t_list[g, 2, j]
        row = nopp + j
        m = 0.0
        for h in range(H):
            best = -np.inf
            for a in range(A):
                if t_legal[g, c, a] != 0 and preds[g, row, h * A + a] > best:
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
    for bi in range(sinfo[g, SI_NBATCH]):
        node = batch[bi]
        pw = t_nv[g, node, H]
        for a in range(A):
            c = t_child[g, node, a]
            if c >= 0:
                t_nv[g, c, H] = pw * t_ef[g, node, a, EF_PRIOR] * gamma
                if CHANCE_IN_STEP and t_ni[g, c, TN_NOUT] > 0:
                    pc = _pcol(E)
                    for cc in range(c + 1, c + 1 + t_ni[g, c, TN_NOUT]):
                        t_nv[g, cc, H] = t_nv[g, c, H] * t_nv[g, cc, pc]


@kernel
def _sx_act(AT, g):
    """Act from the root values of the episode's Thompson head (argmax over legal, lowest id on
    ties), then epsilon exploration; account the search's sigma and head disagreement."""
    E = _unpack(AT)
    cfg, fcfg, srng, sinfo, legal, ftele = E.cfg, E.fcfg, E.srng, E.sinfo, E.legal, E.ftele
    A, H = cfg[CFG_A], cfg[CFG_HEADS]
    lg = legal[g, 0]
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
                m += _edge_value(E, g, 0, a, h)
            m *= 1.0 / H
            var = 0.0
            for h in range(H):
                dv = _edge_value(E, g, 0, a, h) - m
                var += dv * dv
            tot += np.sqrt(var * (1.0 / H))
        ftele[g, FT_DISAGREE] += tot / nl
    head = min(sinfo[g, SI_HEAD], H - 1)
    best = -1
    bv = -np.inf
    for a in range(A):
        if lg[a] != 0:
            v = _edge_value(E, g, 0, a, head)
            if best < 0 or v > bv:
                best = a
                bv = v
    eps = fcfg[F_EPSILON]
    if eps > 0.0 and _rng.uniform(srng[g]) < eps:
        best = _mf.uniform_legal(srng[g], lg, A)
    return best
