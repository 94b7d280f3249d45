
# ---- body: reinfors/jit/kernels/search_minimax.py ------------------------------------------------
# Minimax: full-width negamax (expectiminimax with in-step chance), one inference round per depth
# level, frontier leaves scored for their own mover; also the edge values and the interior
# targets SelectiveExpectimax shares (the selexp family concatenates this file too).

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    CFG_A,
    CFG_DEPTH,
    CFG_EXPAND,
    CFG_HEADS,
    CFG_INTERIOR,
    CFG_POLICY,
    CFG_TOPK,
    EF_PRIOR,
    EF_REW,
    F_BOOTSTRAP_P,
    F_GAMMA,
    POLICY_SELEXP,
    RF_RAW,
    RF_Z,
    RM_ACTION,
    RM_FLAGS,
    SI_EXPS,
    SI_FBUF,
    SI_LEAVES,
    SI_LEVEL,
    SI_MAXD,
    SI_NFRONT,
    SI_NNEW,
    SI_NNODES,
    SI_ROUNDS,
    TN_DEPTH,
    TN_EXP,
    TN_FULL,
    TN_MOVER,
    TN_NOUT,
    TN_TERM,
)

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import CHANCE_IN_STEP, FAM_SX, G_encode
    from reinfors.jit.kernels.engine_records import _ST_WAIT, _emit, _new_record, _unpack
    from reinfors.jit.kernels.engine_slots import _request
    from reinfors.jit.kernels.search_chance import _chance_value, _committed_mean, _new_edge
    from reinfors.jit.kernels.search_parts import _I0, _TRUE, _fscr_off
    from reinfors.jit.kernels.search_selexp import _sx_branch
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel
def _mmx_run(AT, g):
    """Expand the frontier level by level; each round's new non-terminal children are requested
    as one multi-row request (returns True); False once the frontier is empty."""
    E = _unpack(AT)
    cfg, sinfo = E.cfg, E.sinfo
    t_ni, t_ef, t_legal, t_list, rq = E.t_ni, E.t_ef, E.t_legal, E.t_list, E.rq
    A = cfg[CFG_A]
    D = cfg[CFG_DEPTH]
    top_k = cfg[CFG_TOPK]
    off = _fscr_off(E)
    keep = E.fscr[g, off : off + A]
    while sinfo[g, SI_NFRONT] > 0:
        fb = sinfo[g, SI_FBUF]
        nb = 1 - fb
        n_batch = sinfo[g, SI_NFRONT]
        nf = 0
        nn = _I0
        for bi in range(n_batch):
            node = t_list[g, fb, bi]
            d = t_ni[g, node, TN_DEPTH]
            nl = 0
            for a in range(A):
                if t_legal[g, node, a] != 0:
                    nl += 1
            full = True
            for a in range(A):
                keep[a] = 1.0 if t_legal[g, node, a] != 0 else 0.0
            if top_k > 0 and d > 0 and top_k < nl:
                # Beam: the top_k legal moves by the node's head-mean Q row (stable: lowest id
                # first among equals), expanded in ascending id order.
                full = False
                for a in range(A):
                    keep[a] = 0.0
                for _ in range(top_k):
                    best = -1
                    for a in range(A):
                        if t_legal[g, node, a] != 0 and keep[a] == 0.0:
                            if best < 0 or t_ef[g, node, a, EF_PRIOR] > t_ef[g, node, best, EF_PRIOR]:
                                best = a
                    keep[best] = 1.0
            for a in range(A):
                if keep[a] == 0.0:
                    continue
                c = _new_edge(AT, g, node, a)
                if c < 0:
                    return True  # tree overflow: the kernel error stops the collect
                c0 = c
                c1 = c + 1
                if CHANCE_IN_STEP and t_ni[g, c, TN_NOUT] > 0:
                    c0 = c + 1  # a chance node: its outcome children are the new nodes
                    c1 = c + 1 + t_ni[g, c, TN_NOUT]
                for cc in range(c0, c1):
                    if t_ni[g, cc, TN_TERM] == 0:
                        t_list[g, 2, nn] = cc
                        nn += 1
                        if t_ni[g, cc, TN_DEPTH] < D:
                            t_list[g, nb, nf] = cc
                            nf += 1
            t_ni[g, node, TN_EXP] = 1
            t_ni[g, node, TN_FULL] = 1 if full else 0
            sinfo[g, SI_EXPS] += 1
            if d + 1 > sinfo[g, SI_MAXD]:
                sinfo[g, SI_MAXD] = d + 1
        sinfo[g, SI_ROUNDS] += 1
        sinfo[g, SI_NFRONT] = nf
        sinfo[g, SI_FBUF] = nb
        sinfo[g, SI_NNEW] = nn
        if nn > 0:
            for i in range(nn):
                c = t_list[g, 2, i]
                rq[g, i, 0] = c
                rq[g, i, 1] = t_ni[g, c, TN_MOVER]
            sinfo[g, SI_LEAVES] += nn
            _request(AT, g, nn, _ST_WAIT)
            return True
    return False


@kernel
def _mmx_absorb(AT, g):
    """Score the round's new nodes for their own mover: ``boot[h]`` = masked max of head ``h``;
    with a beam also keep the head-mean Q row (the next round's move ordering)."""
    E = _unpack(AT)
    cfg, sinfo, preds = E.cfg, E.sinfo, E.preds
    t_ef, t_nv, t_legal, t_list = E.t_ef, E.t_nv, E.t_legal, E.t_list
    A, H = cfg[CFG_A], cfg[CFG_HEADS]
    top_k = cfg[CFG_TOPK]
    for i in range(sinfo[g, SI_NNEW]):
        c = t_list[g, 2, i]
        for h in range(H):
            best = -np.inf
            for a in range(A):
                if t_legal[g, c, a] != 0 and preds[g, i, h * A + a] > best:
                    best = preds[g, i, h * A + a]
            t_nv[g, c, h] = best
        if top_k > 0:
            for a in range(A):
                if t_legal[g, c, a] != 0:
                    s = 0.0
                    for h in range(H):
                        s += preds[g, i, h * A + a]
                    t_ef[g, c, a, EF_PRIOR] = s / H
                else:
                    t_ef[g, c, a, EF_PRIOR] = -np.inf


@kernel(inline="always")
def _mmx_edge(E, g, node, a, h):
    """Value of edge ``a`` of ``node`` for head ``h``: the reward, plus the discounted child value
    (negated when the child's mover is the opponent) unless the child is terminal."""
    fcfg = E.fcfg
    t_ni, t_child, t_ef, t_nv = E.t_ni, E.t_child, E.t_ef, E.t_nv
    c = t_child[g, node, a]
    r = t_ef[g, node, a, EF_REW]
    if CHANCE_IN_STEP and t_ni[g, c, TN_NOUT] > 0:
        if E.cfg[CFG_EXPAND] == 0:
            return _committed_mean(E, g, c, h, t_ni[g, node, TN_MOVER], _TRUE, r)
        return r + fcfg[F_GAMMA] * _chance_value(E, g, c, h, t_ni[g, node, TN_MOVER], _TRUE)
    if t_ni[g, c, TN_TERM] != 0:
        return r
    v = t_nv[g, c, h]
    if t_ni[g, c, TN_MOVER] != t_ni[g, node, TN_MOVER]:
        v = -v
    return r + fcfg[F_GAMMA] * v


@kernel(inline="always")
def _edge_value(E, g, node, a, h):
    """Value of the edge (Minimax) or branch (SelectiveExpectimax) ``a`` of ``node``."""
    if FAM_SX:  # a constant of the generated module: the minimax family has no _sx_branch
        return _sx_branch(E, g, node, a, h)
    return _mmx_edge(E, g, node, a, h)


@kernel
def _mmx_finish(AT, g):
    """Back the values up (children are created after their parents, so one reverse pass over
    the nodes is bottom-up); emit TreeStrap interior records when asked.  Shared by Minimax and
    SelectiveExpectimax (whose expanded max nodes are the searcher's, full width)."""
    E = _unpack(AT)
    cfg, learn, sinfo = E.cfg, E.learn, E.sinfo
    t_ni, t_child, t_nv = E.t_ni, E.t_child, E.t_nv
    A, H = cfg[CFG_A], cfg[CFG_HEADS]
    for node in range(sinfo[g, SI_NNODES] - 1, -1, -1):
        if t_ni[g, node, TN_EXP] == 0:
            continue  # a frontier leaf keeps its boot values
        sx_opp = cfg[CFG_POLICY] == POLICY_SELEXP and t_ni[g, node, TN_FULL] == 0
        for h in range(H):
            if sx_opp:
                # an opponent node of SelectiveExpectimax: one edge, the expectation over branches
                best = 0.0
                for a in range(A):
                    if t_child[g, node, a] >= 0:
                        best += _edge_value(E, g, node, a, h)
            else:
                best = -np.inf
                for a in range(A):
                    if t_child[g, node, a] >= 0:
                        ev = _edge_value(E, g, node, a, h)
                        if ev > best:
                            best = ev
            t_nv[g, node, h] = best
    searcher = t_ni[g, 0, TN_MOVER]
    if cfg[CFG_INTERIOR] != 0 and learn[searcher] != 0:
        _mmx_interior(AT, g, searcher)


@kernel
def _mmx_interior(AT, g, searcher):
    """TreeStrap interior targets: a record for every full-width expanded node below the root
    whose mover is the searcher, depth-first pre-order over the edges; emitted at once, one mask
    draw per head from the slot stream."""
    E = _unpack(AT)
    params, cfg, fcfg, srng, sinfo = E.params, E.cfg, E.fcfg, E.srng, E.sinfo
    r_meta, r_f, r_obs, r_mask, r_legal, r_tgt = E.r_meta, E.r_f, E.r_obs, E.r_mask, E.r_legal, E.r_tgt
    t_state, t_ni, t_child, t_list = E.t_state, E.t_ni, E.t_child, E.t_list
    A, H = cfg[CFG_A], cfg[CFG_HEADS]
    bp = fcfg[F_BOOTSTRAP_P]
    level = sinfo[g, SI_LEVEL]
    stack = t_list[g, 2]
    sp = 0
    for a in range(A - 1, -1, -1):
        if t_child[g, 0, a] >= 0:
            stack[sp] = t_child[g, 0, a]
            sp += 1
    while sp > 0:
        sp -= 1
        node = stack[sp]
        if CHANCE_IN_STEP and t_ni[g, node, TN_NOUT] > 0:
            for c in range(node + t_ni[g, node, TN_NOUT], node, -1):  # outcome children, in order
                stack[sp] = c
                sp += 1
            continue
        if t_ni[g, node, TN_EXP] == 0:
            continue
        if t_ni[g, node, TN_FULL] != 0 and t_ni[g, node, TN_MOVER] == searcher:
            idx = _new_record(E, g, searcher)
            if idx >= 0:
                r_meta[idx, RM_ACTION] = -1
                r_meta[idx, RM_FLAGS] = 0
                G_encode(params, t_state[g, node], searcher, r_obs[idx])
                for a in range(A):
                    r_legal[idx, a] = 0
                for h in range(H):
                    for a in range(A):
                        r_tgt[idx, h * A + a] = _edge_value(E, g, node, a, h) if t_child[g, node, a] >= 0 else 0.0
                    r_mask[idx, h] = 1.0 if _rng.uniform(srng[g]) < bp else 0.0
                r_f[idx, RF_RAW] = 0.0
                r_f[idx, RF_Z] = 0.0
                _emit(E, g, idx, level)
        for a in range(A - 1, -1, -1):
            if t_child[g, node, a] >= 0:
                stack[sp] = t_child[g, node, a]
                sp += 1
