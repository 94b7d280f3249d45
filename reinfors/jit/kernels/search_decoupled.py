
# ---- body: reinfors/jit/kernels/search_decoupled.py ----------------------------------------------
# Simultaneous games (Snake): decoupled AlphaZero / Mcts trees with explicit chance modes.
# Every node keeps one statistics table per agent (index ``p * A + a`` of the per-action arrays);
# acting agents select independently (PUCT / UCT on their own table) and the joint action keys a
# child in the node's linked list.  Leaves are evaluated from every acting agent's perspective
# (one row each), and the backup is per agent (each agent's own discounted return, no negation).
# AlwaysResample on a game with chance re-steps every edge on each descent (open loop: the
# statistics are shared across the sampled outcomes); Committed(k) freezes k outcomes per joint
# edge (drawn when first reached) and successive traversals of the node cycle through them.

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import atomics as _atomics
from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    C_ERROR,
    CFG_A,
    CFG_ACTBY,
    CFG_CHOOSE,
    CFG_EXPAND,
    CFG_LEARNER,
    CFG_MAXDEPTH,
    CFG_N,
    CFG_O,
    CFG_POLICY,
    CFG_RESAMPLE,
    CFG_SAMPLES,
    CFG_TEMPDROP,
    EF_PRIOR,
    EF_VSUM,
    ERR_TREE_OVERFLOW,
    F_CPUCT,
    F_GAMMA,
    F_TEMP,
    LEARNER_AZ,
    POLICY_AZ,
    RF_WEIGHT,
    RM_ACTION,
    RM_FLAGS,
    SI_CHOICE,
    SI_EPLEN,
    SI_FAN0,
    SI_FANCODE,
    SI_FANN,
    SI_LEAF,
    SI_MAXD,
    SI_NACT,
    SI_NNODES,
    SI_PLEN,
    SI_ROWS,
    SI_SEARCH,
    SI_STATUS,
    ST_PARK,
    TN_ALIVE,
    TN_DEPTH,
    TN_EVAL,
    TN_FIRST,
    TN_JOINT,
    TN_NEXT,
    TN_TERM,
    TN_TOTAL,
)
from reinfors.jit.policies import search as _sp

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import G_apply_chance, G_chance_outcomes, G_chance_pending, G_tree_copy
    from reinfors.jit.kernels.engine_records import _new_decision_record, _store_visit_targets, _unpack
    from reinfors.jit.kernels.game_kernels import apply_step, resolve_chance, step_rules, weigh
    from reinfors.jit.kernels.search_driver import _search_telemetry
    from reinfors.jit.kernels.search_parts import (
        _FALSE,
        _I0,
        _I1,
        _IM1,
        _SR_DEPTHCAP,
        _SR_EVAL,
        _SR_FAN,
        _SR_TERMINAL,
        _az_prior,
        _fscr_off,
        _masked_max_q,
        _node_setup,
        _node_state_info,
        _select,
    )
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel
def _sim_child(AT, g, node, code):
    """The child of ``node`` for the joint action in ``iscr[g, :N]`` (key ``code``): created if
    missing, re-stepped from the parent's state under AlwaysResample.  Returns ``(child,
    created)``; child -1 when the tree is full."""
    E = _unpack(AT)
    params, cfg, weights, sinfo = E.params, E.cfg, E.weights, E.sinfo
    t_state, t_ni, t_nv, t_rng = E.t_state, E.t_ni, E.t_nv, E.t_rng
    N, A = cfg[CFG_N], cfg[CFG_A]
    k = cfg[CFG_SAMPLES]
    if cfg[CFG_EXPAND] != 0:
        return _sim_fan_child(AT, g, node, code)
    if k > 1:
        code = code * k + t_ni[g, node, TN_TOTAL] % k  # which frozen outcome this traversal takes
    c = t_ni[g, node, TN_FIRST]
    while c >= 0 and t_ni[g, c, TN_JOINT] != code:
        c = t_ni[g, c, TN_NEXT]
    created = c < 0
    if created:
        c = sinfo[g, SI_NNODES]
        if c >= t_state.shape[1]:
            _atomics.cas(E.ctl, C_ERROR, 0, ERR_TREE_OVERFLOW)
            return _IM1, _I0
        sinfo[g, SI_NNODES] = c + 1
    elif cfg[CFG_RESAMPLE] == 0:
        return c, _I0
    dst = t_state[g, c]
    G_tree_copy(params, t_state[g, node], dst)
    fscr = E.fscr
    rewards = fscr[g, A : A + N]
    apply_step(params, dst, E.iscr[g, 0:N], E.amounts[g], t_rng[g], fscr[g, A + N :])
    weigh(E.amounts[g], weights, rewards)
    if created:
        _node_setup(AT, g, c, t_ni[g, node, TN_DEPTH] + 1, _IM1)
        t_ni[g, c, TN_JOINT] = code
        t_ni[g, c, TN_NEXT] = t_ni[g, node, TN_FIRST]
        t_ni[g, node, TN_FIRST] = c
    else:
        _node_state_info(AT, g, c, _IM1)
    for q in range(N):
        t_nv[g, c, N + q] = rewards[q]
    return c, _I1 if created else _I0


@kernel
def _sim_fan_child(AT, g, node, code):
    """ExpandAll: the outcome children of joint action ``code`` at ``node``.  Reached again, one
    is sampled by its probability (tree stream) and returned as ``(child, 0)``; the first time,
    the whole fan is created — the joint step, then one child per outcome of the first pending
    chance event (further events of the same tick are sampled), each with its probability —
    and ``(first child, 2)`` is returned (the fan is ``SI_FAN0 .. + SI_FANN``)."""
    E = _unpack(AT)
    params, cfg, weights, sinfo = E.params, E.cfg, E.weights, E.sinfo
    t_state, t_ni, t_nv, t_rng = E.t_state, E.t_ni, E.t_nv, E.t_rng
    N, A = cfg[CFG_N], cfg[CFG_A]
    mult = cfg[CFG_SAMPLES]
    total = 0.0
    c = t_ni[g, node, TN_FIRST]
    while c >= 0:
        if t_ni[g, c, TN_JOINT] // mult == code:
            total += t_nv[g, c, 2 * N]
        c = t_ni[g, c, TN_NEXT]
    if total > 0.0:
        u = _rng.uniform(t_rng[g]) * total
        pick = _IM1
        c = t_ni[g, node, TN_FIRST]
        while c >= 0:
            if t_ni[g, c, TN_JOINT] // mult == code:
                pick = c
                u -= t_nv[g, c, 2 * N]
                if u <= 0.0:
                    break
            c = t_ni[g, c, TN_NEXT]
        return pick, _I0
    first = sinfo[g, SI_NNODES]
    if first >= t_state.shape[1]:
        _atomics.cas(E.ctl, C_ERROR, 0, ERR_TREE_OVERFLOW)
        return _IM1, _I0
    fscr = E.fscr
    rewards = fscr[g, A : A + N]
    probs = fscr[g, A + N :]
    base = t_state[g, first]
    G_tree_copy(params, t_state[g, node], base)
    n = _I1
    fanned = step_rules(params, base, E.iscr[g, 0:N], E.amounts[g]) and G_chance_pending(params, base)
    if fanned:
        n = G_chance_outcomes(params, base, probs)
    weigh(E.amounts[g], weights, rewards)
    if first + n > t_state.shape[1]:
        _atomics.cas(E.ctl, C_ERROR, 0, ERR_TREE_OVERFLOW)
        return _IM1, _I0
    sinfo[g, SI_NNODES] = first + n
    for o in range(n - 1, -1, -1):  # the base state is the last one turned into its outcome
        c = first + o
        dst = t_state[g, c]
        if o > 0:
            G_tree_copy(params, base, dst)
        p = 1.0
        if fanned:
            p = probs[o]
            G_apply_chance(params, dst, o)
            # further events of this tick: sampled, with their own scratch (probs holds the fan)
            resolve_chance(params, dst, t_rng[g], fscr[g, _fscr_off(E) + max(A, N) :])
        _node_setup(AT, g, c, t_ni[g, node, TN_DEPTH] + 1, _IM1)
        t_ni[g, c, TN_JOINT] = code * mult + o
        t_ni[g, c, TN_NEXT] = t_ni[g, node, TN_FIRST]
        t_ni[g, node, TN_FIRST] = c
        for q in range(N):
            t_nv[g, c, N + q] = rewards[q]
        t_nv[g, c, 2 * N] = p
    sinfo[g, SI_FANCODE] = code
    sinfo[g, SI_FAN0] = first
    sinfo[g, SI_FANN] = n
    return first, np.int64(2)


@kernel(inline="always")
def _sim_select(E, g, node, puct, c):
    """Each acting agent's own PUCT / UCT choice into ``iscr[g, :N]``; returns the joint key
    ``sum (a_p + 1) * (A + 1)**p`` over acting agents."""
    cfg = E.cfg
    N, A = cfg[CFG_N], cfg[CFG_A]
    actions = E.iscr[g, 0:N]
    alive = E.t_ni[g, node, TN_ALIVE]
    code = _I0
    mult = 1
    for p in range(N):
        actions[p] = 0
        if (alive >> p) & 1:
            best = _select(E, g, node, puct, c, p * A)
            actions[p] = best
            code += (best + 1) * mult
        mult *= A + 1
    return code


@kernel
def _sim_select_expand(AT, g):
    """Decoupled descent (see ``_select_expand``); the path stores (node, child)."""
    E = _unpack(AT)
    cfg, fcfg, sinfo = E.cfg, E.fcfg, E.sinfo
    t_ni, t_path = E.t_ni, E.t_path
    puct = cfg[CFG_POLICY] == POLICY_AZ
    max_depth = cfg[CFG_MAXDEPTH]
    c = fcfg[F_CPUCT]
    node = _I0
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
        if d >= max_depth:
            code = _SR_DEPTHCAP
            break
        key = _sim_select(E, g, node, puct, c)
        ch, created = _sim_child(AT, g, node, key)
        if ch < 0:
            return -1
        if created == 2:
            code = _SR_FAN  # the leaf is this node; the fan edge is backed up as an expectation
            break
        t_path[g, plen, 0] = node
        t_path[g, plen, 1] = ch
        plen += 1
        node = ch
        if created == 1:
            code = _SR_TERMINAL if t_ni[g, ch, TN_TERM] != 0 else _SR_EVAL
            break
    sinfo[g, SI_LEAF] = node
    sinfo[g, SI_PLEN] = plen
    return code


@kernel(_nrt=False)
def _sim_backprop(AT, g, terminal):
    """Per-agent backup: ``g[q] = r_q + gamma * g[q]`` along the path (leaf values: zeros at a
    terminal leaf, else the leaf's evaluated / cached per-agent values); each acting agent's
    table at a node is credited with its own component for the action it took."""
    E = _unpack(AT)
    cfg, sinfo = E.cfg, E.sinfo
    t_nv = E.t_nv
    N = cfg[CFG_N]
    off = _fscr_off(E)
    gv = E.fscr[g, off : off + N]
    leaf = sinfo[g, SI_LEAF]
    for q in range(N):
        gv[q] = 0.0 if terminal else t_nv[g, leaf, q]
    _sim_backprop_path(AT, g)


@kernel(inline="always")
def _sim_credit(E, g, node, key, gv):
    """Credit every acting agent's table at ``node`` with its component of ``gv`` for its action
    in the joint ``key`` (digits ``a_p + 1`` in base ``A + 1``)."""
    cfg = E.cfg
    t_ni, t_visits, t_ef = E.t_ni, E.t_visits, E.t_ef
    N, A = cfg[CFG_N], cfg[CFG_A]
    alive = t_ni[g, node, TN_ALIVE]
    for p in range(N):
        digit = key % (A + 1)
        key //= A + 1
        if (alive >> p) & 1 and digit > 0:
            k = p * A + digit - 1
            t_ef[g, node, k, EF_VSUM] += gv[p]
            t_visits[g, node, k] += 1
    t_ni[g, node, TN_TOTAL] += 1


@kernel(_nrt=False)
def _sim_backprop_path(AT, g):
    """The per-agent return in the search scratch, backed up along the path (``g[q] = r_q +
    gamma * g[q]`` per step)."""
    E = _unpack(AT)
    cfg, fcfg, sinfo = E.cfg, E.fcfg, E.sinfo
    t_ni, t_nv, t_path = E.t_ni, E.t_nv, E.t_path
    N = cfg[CFG_N]
    off = _fscr_off(E)
    gv = E.fscr[g, off : off + N]
    gamma = fcfg[F_GAMMA]
    for i in range(sinfo[g, SI_PLEN] - 1, -1, -1):
        node = t_path[g, i, 0]
        ch = t_path[g, i, 1]
        for q in range(N):
            gv[q] = t_nv[g, ch, N + q] + gamma * gv[q]
        _sim_credit(E, g, node, t_ni[g, ch, TN_JOINT] // max(1, cfg[CFG_SAMPLES]), gv)


@kernel
def _sim_fan_backup(AT, g):
    """ExpandAll: the fan edge's return is the probability-weighted expectation over its outcome
    children (``r + gamma * v``; terminal children: ``r``); credited at the leaf node for the fan's
    joint action, then backed up along the path."""
    E = _unpack(AT)
    cfg, fcfg, sinfo = E.cfg, E.fcfg, E.sinfo
    t_ni, t_nv = E.t_ni, E.t_nv
    N = cfg[CFG_N]
    off = _fscr_off(E)
    gv = E.fscr[g, off : off + N]
    gamma = fcfg[F_GAMMA]
    for q in range(N):
        gv[q] = 0.0
    for c in range(sinfo[g, SI_FAN0], sinfo[g, SI_FAN0] + sinfo[g, SI_FANN]):
        p = t_nv[g, c, 2 * N]
        term = t_ni[g, c, TN_TERM] != 0
        for q in range(N):
            gv[q] += p * (t_nv[g, c, N + q] + (0.0 if term else gamma * t_nv[g, c, q]))
    sinfo[g, SI_FANN] = 0
    _sim_credit(E, g, sinfo[g, SI_LEAF], sinfo[g, SI_FANCODE], gv)
    _sim_backprop_path(AT, g)


@kernel(_nrt=False)
def _sim_absorb(AT, g):
    """Rows of every agent acting at the leaf: AlphaZero sets that agent's prior (root: mixed with
    Dirichlet noise, agents in row order) and value; Mcts its masked max head-mean Q."""
    E = _unpack(AT)
    cfg, sinfo, preds = E.cfg, E.sinfo, E.preds
    t_ni, t_ef, t_nv, t_legal, rq = E.t_ni, E.t_ef, E.t_nv, E.t_legal, E.rq
    A, N = cfg[CFG_A], cfg[CFG_N]
    az = cfg[CFG_POLICY] == POLICY_AZ
    fan = sinfo[g, SI_FANN] > 0
    leaf = sinfo[g, SI_LEAF]
    if not fan:
        for q in range(N):
            t_nv[g, leaf, q] = 0.0
    prior = E.fscr[g, 0:A]
    for j in range(sinfo[g, SI_ROWS]):
        p = rq[g, j, 1]
        if fan:
            leaf = rq[g, j, 0]  # an outcome child of the fan (fresh: its values start at 0)
        lg = t_legal[g, leaf, p * A : (p + 1) * A]
        if az:
            _az_prior(E, g, preds[g, j], lg, leaf == 0, prior)
            for a in range(A):
                t_ef[g, leaf, p * A + a, EF_PRIOR] = prior[a]
            t_nv[g, leaf, p] = preds[g, j, A]
        else:
            t_nv[g, leaf, p] = _masked_max_q(E, preds[g, j], lg)
        t_ni[g, leaf, TN_EVAL] = 1
    if fan:
        _sim_fan_backup(AT, g)
    else:
        _sim_backprop(AT, g, _FALSE)


@kernel
def _sim_decide(AT, g):
    """Every acting agent acts from its own root table (AlphaZero: visits, sampled at the acting
    temperature; Mcts: values or visits) and records its own targets.  Returns the acting agents
    for the joint step (``_finish_tick``, by ``_advance``), or 0 for ``PolicyHandle.choose``."""
    E = _unpack(AT)
    cfg, fcfg, learn, srng, sinfo, act_agents, root, legal = E.cfg, E.fcfg, E.learn, E.srng, E.sinfo, E.act_agents, E.root, E.legal
    r_meta, r_f, r_obs, r_legal, r_tgt = E.r_meta, E.r_f, E.r_obs, E.r_legal, E.r_tgt
    t_visits, t_ef = E.t_visits, E.t_ef
    N, A = cfg[CFG_N], cfg[CFG_A]
    az = cfg[CFG_POLICY] == POLICY_AZ
    na = sinfo[g, SI_NACT]
    tg = E.fscr[g, 0:A]
    temp = fcfg[F_TEMP]
    sample = temp > 0.0 and sinfo[g, SI_EPLEN] < cfg[CFG_TEMPDROP]
    iscr = E.iscr
    for p in range(N):
        iscr[g, p] = 0
        iscr[g, N + p] = -1
    _search_telemetry(E, g)
    for j in range(na):
        p = act_agents[g, j]
        vis = t_visits[g, 0, p * A : (p + 1) * A]
        for a in range(A):
            if az:
                tg[a] = np.float64(vis[a])
            else:
                tg[a] = t_ef[g, 0, p * A + a, EF_VSUM] / vis[a] if vis[a] > 0 else 0.0
        if sample:
            act = _sp.sample_visits(srng[g], vis, None, A, temp)
        elif az:
            act = _sp.argmax_dense(tg, A)
        elif cfg[CFG_ACTBY] == 0:
            act = _sp.argmax_legal(tg, legal[g, j], A)
        else:
            act = -1
            for a in range(A):
                if legal[g, j, a] != 0 and (act < 0 or vis[a] > vis[act]):
                    act = a
        iscr[g, p] = act
        if learn[p] == 0:
            continue
        idx = _new_decision_record(E, g, p)
        if idx < 0:
            continue
        r_meta[idx, RM_FLAGS] = 0
        r_meta[idx, RM_ACTION] = act
        for i in range(cfg[CFG_O]):
            r_obs[idx, i] = root[g, j, i]
        if cfg[CFG_LEARNER] == LEARNER_AZ:
            _store_visit_targets(E, idx, legal[g, j], tg, A)
            continue
        r_f[idx, RF_WEIGHT] = 1.0
        for a in range(A):
            r_legal[idx, a] = legal[g, j, a]
            r_tgt[idx, a] = tg[a]
    if cfg[CFG_CHOOSE] != 0:
        sinfo[g, SI_CHOICE] = iscr[g, act_agents[g, 0]]
        sinfo[g, SI_SEARCH] = 0
        sinfo[g, SI_STATUS] = ST_PARK
        return _I0
    sinfo[g, SI_SEARCH] = 0
    return na  # the joint step (_finish_tick, by _advance)
