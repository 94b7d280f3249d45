
# ---- body: reinfors/jit/kernels/search_driver.py -------------------------------------------------
# The search entry points the engine kernels call: advance (``_search_step``), absorb predictions
# (``_search_absorb``), decide and record (``_search_decide``), tail values and the episode flush.
# FAM_TREE / FAM_MMX / FAM_SX and SIMUL are constants of the generated module (the kernel family):
# the other policies' branches are pruned before typing, so their files need not be present.

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    CFG_A,
    CFG_ACTBY,
    CFG_CHOOSE,
    CFG_HEADS,
    CFG_LEAFB,
    CFG_LEARNER,
    CFG_MAXN,
    CFG_N,
    CFG_O,
    CFG_POLICY,
    CFG_TEMPDROP,
    EF_VSUM,
    F_BOOTSTRAP_P,
    F_GAMMA,
    F_OW,
    F_TEMP,
    LEARNER_AZ,
    POLICY_AZ,
    POLICY_MCTS,
    POLICY_MINIMAX,
    POLICY_SELEXP,
    RF_RAW,
    RF_WEIGHT,
    RF_Z,
    RM_ACTION,
    RM_FLAGS,
    RM_NTGT,
    SI_CAPS,
    SI_CHOICE,
    SI_EPLEN,
    SI_EXPS,
    SI_LEAVES,
    SI_LEVEL,
    SI_MAXD,
    SI_NTAIL,
    SI_ROUNDS,
    SI_SEARCH,
    SI_SIMS,
    SI_STATUS,
    SI_TAILKIND,
    SI_TERMS,
    ST_EMIT,
    ST_PARK,
    TL_DEPTHCAP,
    TL_EXPANSIONS,
    TL_LEAVES,
    TL_MAXDEPTH,
    TL_ROUNDS,
    TL_SEARCHES,
    TL_TERMSIMS,
    TN_MOVER,
    TN_NLEG,
)
from reinfors.jit.policies import search as _sp

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import FAM_MMX, FAM_SX, FAM_TREE, GUMBEL, LB_ON, SIMUL, G_legal
    from reinfors.jit.kernels.engine_records import _emit, _new_decision_record, _store_visit_targets, _unpack
    from reinfors.jit.kernels.search_decoupled import _sim_decide
    from reinfors.jit.kernels.search_gumbel import _gb_decide
    from reinfors.jit.kernels.search_minimax import _edge_value, _mmx_absorb, _mmx_finish, _mmx_run
    from reinfors.jit.kernels.search_parts import _I0, _I1, _IM1, _masked_max_q, _tree_begin
    from reinfors.jit.kernels.search_puct import _az_absorb, _lb_absorb, _mcts_absorb, _mcts_run
    from reinfors.jit.kernels.search_selexp import _sx_absorb, _sx_act, _sx_run
    from reinfors.jit.kernels.search_sxsim import _sxs_absorb, _sxs_step
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel(inline="always")
def _search_telemetry(E, g):
    """Account the finished search: Minimax / SelectiveExpectimax count leaves, rounds and
    expansions; AlphaZero / Mcts one of each per simulation, plus terminal and depth-capped
    simulations; the deepest node is a per-window maximum."""
    cfg, sinfo, tele = E.cfg, E.sinfo, E.tele
    policy = cfg[CFG_POLICY]
    if policy == POLICY_MINIMAX or policy == POLICY_SELEXP:
        tele[g, TL_LEAVES] += sinfo[g, SI_LEAVES]
        tele[g, TL_ROUNDS] += sinfo[g, SI_ROUNDS]
        tele[g, TL_EXPANSIONS] += sinfo[g, SI_EXPS]
    else:
        sims = sinfo[g, SI_SIMS]
        tele[g, TL_LEAVES] += sims
        # leaf batching counts its rounds (several simulations each)
        tele[g, TL_ROUNDS] += sinfo[g, SI_ROUNDS] if cfg[CFG_LEAFB] > 1 else sims
        tele[g, TL_EXPANSIONS] += sims
        tele[g, TL_TERMSIMS] += sinfo[g, SI_TERMS]
        tele[g, TL_DEPTHCAP] += sinfo[g, SI_CAPS]
    if sinfo[g, SI_MAXD] > tele[g, TL_MAXDEPTH]:
        tele[g, TL_MAXDEPTH] = sinfo[g, SI_MAXD]
    tele[g, TL_SEARCHES] += 1


@kernel
def _search_decide(AT, g):
    """The search is complete: act from the root statistics and record the decision (searched
    targets; maxn: a value-only row for every other agent).  Returns the acting agents the tick
    is stepped with (``_finish_tick``, by ``_advance``: outside this kernel, so its compile unit
    never holds the step and the learner flushes), or 0 for ``PolicyHandle.choose`` (parked)."""
    E = _unpack(AT)
    cfg, fcfg, learn, srng, sinfo, root, legal = E.cfg, E.fcfg, E.learn, E.srng, E.sinfo, E.root, E.legal
    r_meta, r_f, r_obs, r_legal, r_tgt = E.r_meta, E.r_f, E.r_obs, E.r_legal, E.r_tgt
    t_ni, t_visits, t_ef = E.t_ni, E.t_visits, E.t_ef
    N, A, H = cfg[CFG_N], cfg[CFG_A], cfg[CFG_HEADS]
    policy = cfg[CFG_POLICY]
    if FAM_TREE:
        if SIMUL:
            return _sim_decide(AT, g)
    maxn = cfg[CFG_MAXN] != 0
    az = cfg[CFG_LEARNER] == LEARNER_AZ
    mover = t_ni[g, 0, TN_MOVER]
    vis = t_visits[g, 0]
    tg = E.fscr[g, 0:A]  # the root targets (head 0; Minimax: every head below)
    ply = sinfo[g, SI_EPLEN]
    temp = fcfg[F_TEMP]
    sample = temp > 0.0 and ply < cfg[CFG_TEMPDROP]
    if FAM_MMX:
        for a in range(A):
            tg[a] = _edge_value(E, g, 0, a, 0) if E.t_child[g, 0, a] >= 0 else 0.0
        act = _sp.argmax_legal(tg, legal[g, 0], A)
    elif FAM_SX:
        act = _sx_act(AT, g)
        for a in range(A):
            tg[a] = _edge_value(E, g, 0, a, 0) if E.t_child[g, 0, a] >= 0 else 0.0
    else:
        # A sequential AlphaZero / Mcts root's statistics are valid at its legal edges only
        # (_edge_listed): the scans run over its edge list, sorted ascending in place (the tree
        # is finished; a list in the game's order, LEGAL_RANKED, is not ascending) so that sums,
        # draws and ties are those of a dense ascending scan.
        ids = E.t_edges[g, 0]
        nl = t_ni[g, 0, TN_NLEG]
        _sp.sort_ascending(ids, nl)
        for j in range(nl):
            a = ids[j]
            if policy == POLICY_AZ:
                tg[a] = np.float64(vis[a])
            else:
                tg[a] = t_ef[g, 0, a, EF_VSUM] / vis[a] if vis[a] > 0 else 0.0
        if GUMBEL:
            # GumbelAlphaZero: the Gumbel root rule, and softmax(logits + sigma(q^)) as the target
            act = _gb_decide(AT, g, tg)
        elif sample:
            act = _sp.sample_visits(srng[g], vis, ids, nl, temp)
        elif policy == POLICY_AZ:
            act = _sp.argmax_visits_listed(vis, ids, nl)
        elif cfg[CFG_ACTBY] == 0:
            act = _sp.argmax_listed(tg, ids, nl)
        else:
            best = -1
            for j in range(nl):
                a = ids[j]
                if best < 0 or vis[a] > vis[best]:
                    best = a
            act = best
    _search_telemetry(E, g)
    if cfg[CFG_CHOOSE] != 0:
        # PolicyHandle.choose: report the action and park; the env is not stepped.
        sinfo[g, SI_CHOICE] = act
        sinfo[g, SI_SEARCH] = 0
        sinfo[g, SI_STATUS] = ST_PARK
        return _I0
    # records (provisional until the episode ends)
    for q in range(N):
        if learn[q] == 0 or (q != mover and not maxn):
            continue
        idx = _new_decision_record(E, g, q)
        if idx < 0:
            continue
        r_meta[idx, RM_FLAGS] = 0
        src = root[g, q] if maxn else root[g, 0]
        for i in range(cfg[CFG_O]):
            r_obs[idx, i] = src[i]
        if q == mover:
            r_meta[idx, RM_ACTION] = act
            if FAM_TREE and az:
                _store_visit_targets(E, idx, legal[g, 0], tg, A)
                continue
            r_f[idx, RF_WEIGHT] = 1.0
            for a in range(A):
                r_legal[idx, a] = legal[g, 0, a]
            if FAM_TREE:  # one head: the root targets (the tree family has no edge values)
                for a in range(A):  # (tg holds the legal entries only)
                    r_tgt[idx, a] = tg[a] if legal[g, 0, a] != 0 else 0.0
            else:
                for h in range(H):
                    for a in range(A):
                        r_tgt[idx, h * A + a] = tg[a] if h == 0 else _edge_value(E, g, 0, a, h) if E.t_child[g, 0, a] >= 0 else 0.0
        else:  # maxn value-only row: no policy target, no legal set
            r_meta[idx, RM_ACTION] = -1
            r_meta[idx, RM_NTGT] = 0
            r_f[idx, RF_WEIGHT] = 0.0
            for a in range(A):
                r_legal[idx, a] = 0
    sinfo[g, SI_SEARCH] = 0
    iscr = E.iscr
    for p in range(N):
        iscr[g, p] = 0
        iscr[g, N + p] = -1
    iscr[g, mover] = act
    return _I1


@kernel
def _search_step(AT, g):
    """Advance the slot's search (starting it if needed): -1 while it waits for rows, else the
    decision is made and this returns the acting agents to step the tick with (0: parked)."""
    E = _unpack(AT)
    sinfo = E.sinfo
    if FAM_SX and SIMUL:
        return _sxs_step(AT, g)  # one search per acting agent (search_sxsim.py)
    if sinfo[g, SI_SEARCH] == 0:
        _tree_begin(AT, g)
    # FAM_MMX / FAM_SX are constants of the generated module (the kernel family): the other
    # policies' branches are pruned before typing and never compile.
    if FAM_MMX:
        if _mmx_run(AT, g):
            return _IM1
        _mmx_finish(AT, g)
    elif FAM_SX:
        if _sx_run(AT, g):
            return _IM1
        _mmx_finish(AT, g)
    elif _mcts_run(AT, g):
        return _IM1
    return _search_decide(AT, g)


@kernel
def _search_absorb(AT, g):
    """The slot's search rows came back: consume them; the search goes on in the same task."""
    E = _unpack(AT)
    cfg, sinfo = E.cfg, E.sinfo
    policy = cfg[CFG_POLICY]
    if FAM_MMX:
        _mmx_absorb(AT, g)
    elif FAM_SX and SIMUL:
        _sxs_absorb(AT, g)
    elif FAM_SX:
        _sx_absorb(AT, g)
    elif FAM_TREE and LB_ON:
        _lb_absorb(AT, g)  # leaf batching (search_puct.py)
    elif policy == POLICY_MCTS:
        _mcts_absorb(AT, g)
    else:
        _az_absorb(AT, g)
    sinfo[g, SI_STATUS] = ST_EMIT


@kernel
def _tail_value(AT, g, j):
    """Bootstrap value of tail row ``j`` (a truncated episode): AlphaZero's value output; for
    TreeStrap the masked max over the player's legal actions (final state) of the head-mean Q."""
    E = _unpack(AT)
    params, cfg, states, act_agents, legal, preds = E.params, E.cfg, E.states, E.act_agents, E.legal, E.preds
    if cfg[CFG_LEARNER] == LEARNER_AZ:
        return preds[g, j, cfg[CFG_A]]
    mask = legal[g, j]
    G_legal(params, states[g], act_agents[g, j], mask)
    return _masked_max_q(E, preds[g, j], mask)


@kernel
def _search_flush(AT, g, boots):
    """Episode over: every learning player's records get their discounted return ``z`` (seeded
    with ``boots[p]``: 0 at a terminal state, the tail value after a truncation), AlphaZero's
    visit counts become the policy target, TreeStrap blends the outcome into the executed
    action's target and draws the bootstrap masks; emitted in player, then decision order."""
    E = _unpack(AT)
    cfg, fcfg, learn, srng, sinfo = E.cfg, E.fcfg, E.learn, E.srng, E.sinfo
    r_meta, r_f, r_mask, r_tgt = E.r_meta, E.r_f, E.r_mask, E.r_tgt
    traj_idx, traj_cnt = E.traj_idx, E.traj_cnt
    N, A, H = cfg[CFG_N], cfg[CFG_A], cfg[CFG_HEADS]
    az = cfg[CFG_LEARNER] == LEARNER_AZ
    gamma = fcfg[F_GAMMA]
    ow = fcfg[F_OW]
    bp = fcfg[F_BOOTSTRAP_P]
    level = sinfo[g, SI_LEVEL]
    # An ensemble's outcome blend bootstraps every head from its own tail value (the masked max
    # of that head's Q row at the final state); one head: the head-mean value in ``boots``.
    ntail = sinfo[g, SI_NTAIL] if sinfo[g, SI_TAILKIND] != 0 and not az and H > 1 else 0
    zh = np.empty(H, np.float64)
    for p in range(N):
        m = traj_cnt[g, p]
        if learn[p] == 0 or m == 0:
            traj_cnt[g, p] = 0
            continue
        z = boots[p]
        for h in range(H):
            zh[h] = z
        for jt in range(ntail):
            if E.act_agents[g, jt] == p:
                for h in range(H):
                    best = -np.inf
                    for a in range(A):
                        if E.legal[g, jt, a] != 0 and E.preds[g, jt, h * A + a] > best:
                            best = E.preds[g, jt, h * A + a]
                    if best > -np.inf:  # no legal action (an inactive player): boots[p] (0)
                        zh[h] = best
        for j in range(m - 1, -1, -1):
            idx = traj_idx[g, p, j]
            z = r_f[idx, RF_RAW] + gamma * z
            r_f[idx, RF_Z] = z
            if not az and ow > 0.0:
                a = r_meta[idx, RM_ACTION]
                for h in range(H):
                    zh[h] = r_f[idx, RF_RAW] + gamma * zh[h]
                    r_tgt[idx, h * A + a] = (1.0 - ow) * r_tgt[idx, h * A + a] + ow * zh[h]
        for j in range(m):
            idx = traj_idx[g, p, j]
            if not az:  # (AlphaZero's targets were normalised when recorded)
                for h in range(H):
                    r_mask[idx, h] = 1.0 if _rng.uniform(srng[g]) < bp else 0.0
            _emit(E, g, idx, level)
        traj_cnt[g, p] = 0
