
# ---- body: reinfors/jit/kernels/search_puct.py ---------------------------------------------------
# AlphaZero (PUCT; the root is evaluated as simulation 1, root Dirichlet noise from the slot
# stream, negamax or maxn backup) and Mcts (UCT; the root is not evaluated; leaves scored by the
# masked max of the head-mean Q row) on sequential games: one simulation per round, the leaf row
# requested through the arena, absorbed and backed up when it returns.  Simultaneous games branch
# to the decoupled tree (search_decoupled.py) on the module constant SIMUL.
#
# Leaf batching (cfg[CFG_LEAFB] = leaf_batch > 1, a runtime value; compiled only into modules
# generated with LB_ON): a round selects up to k
# leaves, each path carrying a virtual loss (visits + 1, value sum - virtual_loss for the mover at
# every edge; decoupled trees: for every acting agent's action) so the selections diverge, then
# ONE request holds every leaf's rows.  t_path[g] keeps the working path (rows [0, P0)) and one
# block per leaf at P0 + j * (P0 + 4): 4 context rows (leaf, plen | fan0, fann | fancode, dup |
# row start, row count) and the saved path.  The absorb restores each leaf's context, removes its
# virtual loss and runs the unbatched absorb on its rows (moved to the front) in selection order;
# a leaf selected twice in a round (``dup``: the earlier block) is evaluated once and backed up
# from the value its first selection stored.  Terminal and depth-capped selections are backed up
# at once.  The first evaluation of the root is a round of its own (every selection would stop
# there).  docs/leaf-batching.md.

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    CFG_A,
    CFG_EXPAND,
    CFG_LEAFB,
    CFG_MAXDEPTH,
    CFG_MAXN,
    CFG_N,
    CFG_POLICY,
    CFG_SAMPLES,
    CFG_SIMS,
    EF_VSUM,
    F_CPUCT,
    F_VLOSS,
    POLICY_AZ,
    POLICY_MCTS,
    SI_CAPS,
    SI_FAN0,
    SI_FANCODE,
    SI_FANN,
    SI_LEAF,
    SI_MAXD,
    SI_NACT,
    SI_NBATCH,
    SI_NNODES,
    SI_PLEN,
    SI_ROUNDS,
    SI_ROWS,
    SI_SIMS,
    SI_TERMS,
    TL_EXTRA,
    TN_ALIVE,
    TN_DEPTH,
    TN_EVAL,
    TN_JOINT,
    TN_MOVER,
    TN_NOUT,
    TN_TERM,
    TN_TOTAL,
)

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import CHANCE_IN_STEP, GUMBEL, LB_ON, SIMUL
    from reinfors.jit.kernels.engine_records import _ST_WAIT, _unpack
    from reinfors.jit.kernels.engine_slots import _request
    from reinfors.jit.kernels.search_chance import (
        _chance_pick,
        _new_edge,
        _resample_pick,
        _seq_fan_absorb,
        _seq_fan_backup,
        _seq_fan_request,
    )
    from reinfors.jit.kernels.search_decoupled import _sim_absorb, _sim_backprop, _sim_fan_backup, _sim_select_expand
    from reinfors.jit.kernels.search_gumbel import _gb_draw, _gb_select
    from reinfors.jit.kernels.search_parts import (
        _FALSE,
        _I0,
        _I1,
        _IM1,
        _SR_DEPTHCAP,
        _SR_EVAL,
        _SR_FAN,
        _SR_TERMINAL,
        _TRUE,
        _az_prior_node,
        _backprop,
        _backprop_maxn,
        _masked_max_q_node,
        _select,
    )
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel
def _select_expand(AT, g):
    """Descend from the root to a leaf, expanding at most one new child; returns ``_SR_*`` (or -1
    when the tree overflowed).  The leaf and the path are left in sinfo / ``t_path``."""
    E = _unpack(AT)
    cfg, fcfg, sinfo = E.cfg, E.fcfg, E.sinfo
    t_ni, t_child, t_path = E.t_ni, E.t_child, E.t_path
    # GUMBEL (a constant of the generated module): GumbelAlphaZero evaluates every node it
    # reaches as AlphaZero does and selects with search_gumbel.py's rules.
    puct = GUMBEL or cfg[CFG_POLICY] == POLICY_AZ
    max_depth = cfg[CFG_MAXDEPTH]
    c = fcfg[F_CPUCT]
    node = _I0  # not a literal: the callees compile once
    plen = 0
    code = _SR_EVAL
    while True:
        d = t_ni[g, node, TN_DEPTH]
        if d > sinfo[g, SI_MAXD]:
            sinfo[g, SI_MAXD] = d
        if t_ni[g, node, TN_TERM] != 0:
            code = _SR_TERMINAL
            break
        if puct and t_ni[g, node, TN_EVAL] == 0:
            code = _SR_EVAL
            break
        if CHANCE_IN_STEP and node != 0 and t_ni[g, node, TN_EVAL] == 0:
            code = _SR_EVAL  # a committed outcome child reached for the first time
            break
        if d >= max_depth:
            code = _SR_DEPTHCAP
            break
        if GUMBEL:
            a = _gb_select(AT, g, node)
        else:
            a = _select(E, g, node, puct, c, _I0)
        t_path[g, plen, 0] = node
        t_path[g, plen, 1] = a
        plen += 1
        ch = t_child[g, node, a]
        if ch < 0:
            ch = _new_edge(AT, g, node, a)
            if ch < 0:
                return -1
            if CHANCE_IN_STEP and t_ni[g, ch, TN_NOUT] > 0:
                if cfg[CFG_EXPAND] != 0:
                    # ExpandAll: every outcome child is evaluated, the edge backs up their mean
                    sinfo[g, SI_FAN0] = ch + 1
                    sinfo[g, SI_FANN] = t_ni[g, ch, TN_NOUT]
                    node = ch
                    code = _SR_FAN
                    break
                node = _chance_pick(AT, g, ch)
                continue
            if CHANCE_IN_STEP and t_ni[g, ch, TN_NOUT] < 0:
                ch = _resample_pick(AT, g, ch)  # a new chance node: its first outcome child
                if ch < 0:
                    return -1
            node = ch
            code = _SR_TERMINAL if t_ni[g, ch, TN_TERM] != 0 else _SR_EVAL
            break
        if CHANCE_IN_STEP and t_ni[g, ch, TN_NOUT] < 0:
            # AlwaysResample: a fresh draw; a new outcome's child is this simulation's leaf
            n0 = sinfo[g, SI_NNODES]
            ch = _resample_pick(AT, g, ch)
            if ch < 0:
                return -1
            if sinfo[g, SI_NNODES] > n0:
                node = ch
                code = _SR_TERMINAL if t_ni[g, ch, TN_TERM] != 0 else _SR_EVAL
                break
        elif CHANCE_IN_STEP and t_ni[g, ch, TN_NOUT] > 0:
            ch = _chance_pick(AT, g, ch)
        node = ch
    sinfo[g, SI_LEAF] = node
    sinfo[g, SI_PLEN] = plen
    return code


@kernel
def _mcts_run(AT, g):
    """Run simulations until one needs inference rows (requested; returns True) or the budget is
    spent (returns False: the search is complete)."""
    E = _unpack(AT)
    cfg, sinfo, tele = E.cfg, E.sinfo, E.tele
    t_ni, t_nv, rq = E.t_ni, E.t_nv, E.rq
    maxn = cfg[CFG_MAXN] != 0
    N = cfg[CFG_N]
    if LB_ON:  # a constant of the generated module (leaf_batch > 1; one compile for every k)
        return _lb_run(AT, g)
    while sinfo[g, SI_SIMS] < cfg[CFG_SIMS]:
        sinfo[g, SI_SIMS] += 1
        # SIMUL is a constant of the generated module: a sequential game never compiles the
        # decoupled (simultaneous) tree, and vice versa.
        if SIMUL:
            r = _sim_select_expand(AT, g)
        else:
            r = _select_expand(AT, g)
        if r < 0:
            return True  # tree overflow: the kernel error stops the collect
        leaf = sinfo[g, SI_LEAF]
        if SIMUL and r == _SR_FAN:
            # every acting agent of every non-terminal outcome child gets a row
            n = _I0
            for c in range(sinfo[g, SI_FAN0], sinfo[g, SI_FAN0] + sinfo[g, SI_FANN]):
                alive = t_ni[g, c, TN_ALIVE]
                for p in range(N):
                    if t_ni[g, c, TN_TERM] == 0 and (alive >> p) & 1:
                        rq[g, n, 0] = c
                        rq[g, n, 1] = p
                        n += 1
            if n == 0:
                _sim_fan_backup(AT, g)
                continue
            tele[g, TL_EXTRA] += n - 1
            _request(AT, g, n, _ST_WAIT)
            return True
        if CHANCE_IN_STEP and not SIMUL and r == _SR_FAN:
            if _seq_fan_request(AT, g):
                return True
            continue
        if SIMUL and r != _SR_EVAL:
            if r == _SR_TERMINAL:
                sinfo[g, SI_TERMS] += 1
            else:
                sinfo[g, SI_CAPS] += 1
            _sim_backprop(AT, g, r == _SR_TERMINAL)
        elif SIMUL:
            # One row per agent acting at the leaf (decoupled: each gets its own prior / value).
            n = _I0
            if leaf == 0:
                for j in range(sinfo[g, SI_NACT]):
                    rq[g, j, 0] = -1 - j
                    rq[g, j, 1] = E.act_agents[g, j]
                n = sinfo[g, SI_NACT]
            else:
                alive = t_ni[g, leaf, TN_ALIVE]
                for p in range(N):
                    if (alive >> p) & 1:
                        rq[g, n, 0] = leaf
                        rq[g, n, 1] = p
                        n += 1
            tele[g, TL_EXTRA] += n - 1
            _request(AT, g, n, _ST_WAIT)
            return True
        elif r == _SR_TERMINAL:
            sinfo[g, SI_TERMS] += 1
            if maxn:
                _backprop_maxn(AT, g, _TRUE)
            else:
                _backprop(AT, g, 0.0)
        elif r == _SR_DEPTHCAP:
            sinfo[g, SI_CAPS] += 1
            if maxn:
                _backprop_maxn(AT, g, _FALSE)
            else:
                _backprop(AT, g, t_nv[g, leaf, 0])
        else:
            # One row (the leaf mover's observation), or one per agent with maxn; the root's
            # rows are the decision's root rows (never re-encoded).
            if maxn:
                for q in range(N):
                    rq[g, q, 0] = -1 - q if leaf == 0 else leaf
                    rq[g, q, 1] = q
                tele[g, TL_EXTRA] += N - 1
                _request(AT, g, N, _ST_WAIT)
            else:
                rq[g, 0, 0] = -1 if leaf == 0 else leaf
                rq[g, 0, 1] = t_ni[g, leaf, TN_MOVER]
                _request(AT, g, _I1, _ST_WAIT)
            return True
    return False


@kernel(_nrt=False)
def _az_absorb(AT, g):
    """AlphaZero: the leaf's prior = softmax of its mover's logits over legal actions (root:
    mixed with Dirichlet noise drawn from the slot stream); back up the value(s)."""
    E = _unpack(AT)
    cfg, sinfo, preds = E.cfg, E.sinfo, E.preds
    t_ni, t_nv = E.t_ni, E.t_nv
    A, N = cfg[CFG_A], cfg[CFG_N]
    if SIMUL:
        _sim_absorb(AT, g)
        return
    if CHANCE_IN_STEP and sinfo[g, SI_FANN] > 0:
        _seq_fan_absorb(AT, g)
        return
    maxn = cfg[CFG_MAXN] != 0
    leaf = sinfo[g, SI_LEAF]
    m = t_ni[g, leaf, TN_MOVER]
    row = m if maxn else 0
    _az_prior_node(E, g, preds[g, row], leaf, E.fscr[g, 0:A])  # its legal edges only
    if GUMBEL and leaf == 0:
        _gb_draw(AT, g)  # the root's Gumbel draws (search_gumbel.py)
    t_ni[g, leaf, TN_EVAL] = 1
    if maxn:
        for q in range(N):
            t_nv[g, leaf, q] = preds[g, q, A]
        _backprop_maxn(AT, g, _FALSE)
    else:
        _backprop(AT, g, preds[g, 0, A])


@kernel(_nrt=False)
def _mcts_absorb(AT, g):
    """Mcts: the leaf's value = masked max over its mover's legal actions of the head-mean Q."""
    E = _unpack(AT)
    sinfo, preds = E.sinfo, E.preds
    t_ni = E.t_ni
    if SIMUL:
        _sim_absorb(AT, g)
        return
    if CHANCE_IN_STEP and sinfo[g, SI_FANN] > 0:
        _seq_fan_absorb(AT, g)
        return
    leaf = sinfo[g, SI_LEAF]
    t_ni[g, leaf, TN_EVAL] = 1
    _backprop(AT, g, _masked_max_q_node(E, g, preds[g, 0], leaf))


@kernel(inline="always")
def _lb_p0(E):
    """Rows of the working path in ``t_path`` (the blocks follow: see the file header)."""
    k = E.cfg[CFG_LEAFB]
    return (E.t_path.shape[1] - 4 * k) // (k + 1)


@kernel
def _lb_vloss(AT, g, sign):
    """Apply (``sign`` 1) or remove (-1) the virtual loss along the working path: every edge's
    visits and its node's total move by ``sign``, its value sum by ``-sign * virtual_loss`` (the
    mover's value; decoupled trees: each acting agent's table for the action it took)."""
    E = _unpack(AT)
    cfg, fcfg, sinfo = E.cfg, E.fcfg, E.sinfo
    t_ni, t_visits, t_ef, t_path = E.t_ni, E.t_visits, E.t_ef, E.t_path
    N, A = cfg[CFG_N], cfg[CFG_A]
    d = np.float64(sign) * fcfg[F_VLOSS]
    for i in range(sinfo[g, SI_PLEN]):
        node = t_path[g, i, 0]
        if SIMUL:
            key = t_ni[g, t_path[g, i, 1], TN_JOINT] // max(1, cfg[CFG_SAMPLES])
            alive = t_ni[g, node, TN_ALIVE]
            for p in range(N):
                digit = key % (A + 1)
                key //= A + 1
                if (alive >> p) & 1 and digit > 0:
                    k = p * A + digit - 1
                    t_ef[g, node, k, EF_VSUM] -= d
                    t_visits[g, node, k] += sign
        else:
            a = t_path[g, i, 1]
            t_ef[g, node, a, EF_VSUM] -= d
            t_visits[g, node, a] += sign
        t_ni[g, node, TN_TOTAL] += sign


@kernel
def _lb_rows(AT, g, r, base):
    """The rows of the selection just made (result ``r`` of the descent), written at
    ``rq[g, base:]``; returns their count, or -1 when the selection was backed up at once
    (terminal, depth cap, or a fan without a row), as the unbatched round does."""
    E = _unpack(AT)
    cfg, sinfo = E.cfg, E.sinfo
    t_ni, t_nv, rq = E.t_ni, E.t_nv, E.rq
    maxn = cfg[CFG_MAXN] != 0
    N = cfg[CFG_N]
    leaf = sinfo[g, SI_LEAF]
    n = _I0
    if SIMUL and r == _SR_FAN:
        for c in range(sinfo[g, SI_FAN0], sinfo[g, SI_FAN0] + sinfo[g, SI_FANN]):
            alive = t_ni[g, c, TN_ALIVE]
            for p in range(N):
                if t_ni[g, c, TN_TERM] == 0 and (alive >> p) & 1:
                    rq[g, base + n, 0] = c
                    rq[g, base + n, 1] = p
                    n += 1
        if n == 0:
            _sim_fan_backup(AT, g)
            return _IM1
        return n
    if CHANCE_IN_STEP and not SIMUL and r == _SR_FAN:
        for c in range(sinfo[g, SI_FAN0], sinfo[g, SI_FAN0] + sinfo[g, SI_FANN]):
            if t_ni[g, c, TN_TERM] != 0:
                continue
            if maxn:
                for q in range(N):
                    rq[g, base + n, 0] = c
                    rq[g, base + n, 1] = q
                    n += 1
            else:
                rq[g, base + n, 0] = c
                rq[g, base + n, 1] = t_ni[g, c, TN_MOVER]
                n += 1
        if n == 0:
            _seq_fan_backup(AT, g)
            return _IM1
        return n
    if r != _SR_EVAL:
        if r == _SR_TERMINAL:
            sinfo[g, SI_TERMS] += 1
        else:
            sinfo[g, SI_CAPS] += 1
        if SIMUL:
            _sim_backprop(AT, g, r == _SR_TERMINAL)
        elif maxn:
            _backprop_maxn(AT, g, r == _SR_TERMINAL)
        elif r == _SR_TERMINAL:
            _backprop(AT, g, 0.0)
        else:
            _backprop(AT, g, t_nv[g, leaf, 0])
        return _IM1
    if SIMUL:
        if leaf == 0:
            for j in range(sinfo[g, SI_NACT]):
                rq[g, base + j, 0] = -1 - j
                rq[g, base + j, 1] = E.act_agents[g, j]
            return sinfo[g, SI_NACT]
        alive = t_ni[g, leaf, TN_ALIVE]
        for p in range(N):
            if (alive >> p) & 1:
                rq[g, base + n, 0] = leaf
                rq[g, base + n, 1] = p
                n += 1
        return n
    if maxn:
        for q in range(N):
            rq[g, base + q, 0] = -1 - q if leaf == 0 else leaf
            rq[g, base + q, 1] = q
        return N
    rq[g, base, 0] = -1 if leaf == 0 else leaf
    rq[g, base, 1] = t_ni[g, leaf, TN_MOVER]
    return _I1


@kernel
def _lb_run(AT, g):
    """Leaf batching: select up to ``leaf_batch`` leaves under virtual loss and request all their
    rows at once (returns True), or return False when the simulation budget is spent."""
    E = _unpack(AT)
    cfg, sinfo, tele = E.cfg, E.sinfo, E.tele
    t_path = E.t_path
    K = cfg[CFG_LEAFB]
    P0 = _lb_p0(E)
    nleaf = _I0
    nrows = _I0
    while sinfo[g, SI_SIMS] < cfg[CFG_SIMS] and nleaf < K:
        sinfo[g, SI_SIMS] += 1
        if SIMUL:
            r = _sim_select_expand(AT, g)
        else:
            r = _select_expand(AT, g)
        if r < 0:
            return True  # tree overflow: the kernel error stops the collect
        n = _lb_rows(AT, g, r, nrows)
        if n < 0:
            continue  # backed up at once
        leaf = sinfo[g, SI_LEAF]
        fann = sinfo[g, SI_FANN]
        dup = _IM1
        if fann == 0:
            for j in range(nleaf):
                b = P0 + j * (P0 + 4)
                if t_path[g, b, 0] == leaf and t_path[g, b + 1, 1] == 0 and t_path[g, b + 2, 1] < 0:
                    dup = j
                    break
        b = P0 + nleaf * (P0 + 4)
        plen = sinfo[g, SI_PLEN]
        t_path[g, b, 0] = leaf
        t_path[g, b, 1] = plen
        t_path[g, b + 1, 0] = sinfo[g, SI_FAN0]
        t_path[g, b + 1, 1] = fann
        t_path[g, b + 2, 0] = sinfo[g, SI_FANCODE]
        t_path[g, b + 2, 1] = dup
        t_path[g, b + 3, 0] = nrows
        t_path[g, b + 3, 1] = 0 if dup >= 0 else n
        for i in range(plen):
            t_path[g, b + 4 + i, 0] = t_path[g, i, 0]
            t_path[g, b + 4 + i, 1] = t_path[g, i, 1]
        sinfo[g, SI_FANN] = 0  # the next selection starts without a pending fan
        _lb_vloss(AT, g, _I1)
        nleaf += 1
        if dup < 0:
            nrows += n
            tele[g, TL_EXTRA] += n - 1
        if leaf == 0:
            break  # the root's first evaluation: every further selection would stop there
    if nleaf == 0:
        return False
    sinfo[g, SI_NBATCH] = nleaf
    sinfo[g, SI_ROUNDS] += 1
    _request(AT, g, nrows, _ST_WAIT)
    return True


@kernel
def _lb_absorb(AT, g):
    """Leaf batching: the round's rows came back; per leaf in selection order restore its
    context, remove its virtual loss and absorb its rows (moved to the front of ``preds`` /
    ``rq``) with the unbatched absorb; a duplicate backs up its first selection's stored value."""
    E = _unpack(AT)
    cfg, sinfo, preds = E.cfg, E.sinfo, E.preds
    t_nv, t_path, rq = E.t_nv, E.t_path, E.rq
    maxn = cfg[CFG_MAXN] != 0
    W = preds.shape[2]
    P0 = _lb_p0(E)
    for j in range(sinfo[g, SI_NBATCH]):
        b = P0 + j * (P0 + 4)
        leaf = t_path[g, b, 0]
        plen = t_path[g, b, 1]
        for i in range(plen):
            t_path[g, i, 0] = t_path[g, b + 4 + i, 0]
            t_path[g, i, 1] = t_path[g, b + 4 + i, 1]
        sinfo[g, SI_LEAF] = leaf
        sinfo[g, SI_PLEN] = plen
        sinfo[g, SI_FAN0] = t_path[g, b + 1, 0]
        sinfo[g, SI_FANN] = t_path[g, b + 1, 1]
        sinfo[g, SI_FANCODE] = t_path[g, b + 2, 0]
        _lb_vloss(AT, g, _IM1)
        if t_path[g, b + 2, 1] >= 0:  # the same leaf earlier in this round: already evaluated
            if SIMUL:
                _sim_backprop(AT, g, _FALSE)
            elif maxn:
                _backprop_maxn(AT, g, _FALSE)
            else:
                _backprop(AT, g, t_nv[g, leaf, 0])
            continue
        start = t_path[g, b + 3, 0]
        n = t_path[g, b + 3, 1]
        if start > 0:
            for i in range(n):  # forward copy: row start + i is read before row i is written
                for w in range(W):
                    preds[g, i, w] = preds[g, start + i, w]
                rq[g, i, 0] = rq[g, start + i, 0]
                rq[g, i, 1] = rq[g, start + i, 1]
        sinfo[g, SI_ROWS] = n
        if cfg[CFG_POLICY] == POLICY_MCTS:
            _mcts_absorb(AT, g)
        else:
            _az_absorb(AT, g)
