
# ---- body: reinfors/jit/kernels/search_chance.py ----------------------------------------------------
# In-step chance in the sequential search trees (concatenated into the tree, minimax and selexp
# families; the callers are small hunks in search_puct / search_minimax / search_selexp).
# A game with CHANCE_IN_STEP (a constant of the generated module) may leave chance pending after
# a step.  Under ExpandAll and Committed(k > 1) the expanded edge then leads to a CHANCE NODE (the
# stepped state before its chance; ``TN_NOUT`` > 0, depth and mover of the parent) whose outcome
# children follow it contiguously: ExpandAll one per outcome of the first pending event (further
# events of the tick are sampled), Committed(k) one per frozen draw (duplicates kept, weight 1/k);
# each child's probability is the last column of ``t_nv``.  Chance nodes are transparent to the
# backups: the parent's edge carries the reward and the discount, the value is the probability-
# weighted mean of the children's (expectimax; negated per child when its mover is the opponent).
# AlwaysResample (AlphaZero / Mcts) makes the edge a RESAMPLED chance node (``TN_NOUT`` = -1)
# instead: every descent through it draws an outcome from the slot stream (as 0.4.0 does: the
# draws interleave with the root noise and the acting draw, probed on Backgammon) and goes on into
# that outcome's child, which is created (and evaluated) the first time the outcome is drawn —
# one child per distinct outcome, linked from ``TN_FIRST`` through ``TN_NEXT``, its outcome in
# ``TN_JOINT``.  Committed(1) keeps the plain edge (one frozen draw).  Minimax and
# SelectiveExpectimax draw their Committed outcomes from the slot stream as the children are made
# (the last child first) and Minimax takes the edge value as ``Σ (r + γ·v) / k``, both as 0.4.0;
# AlphaZero / Mcts draw them from the tree stream (0.4.0's stream there is not recovered).

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

from reinfors.jit import atomics as _atomics
from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    C_ERROR,
    CFG_A,
    CFG_EXPAND,
    CFG_MAXN,
    CFG_N,
    CFG_POLICY,
    CFG_RESAMPLE,
    CFG_SAMPLES,
    EF_RALL,
    EF_REW,
    ERR_TREE_OVERFLOW,
    F_GAMMA,
    POLICY_AZ,
    SI_FAN0,
    SI_FANN,
    SI_LEAF,
    SI_NNODES,
    SI_ROWS,
    TL_EXTRA,
    TN_DEPTH,
    TN_EVAL,
    TN_FIRST,
    TN_JOINT,
    TN_MOVER,
    TN_NEXT,
    TN_NOUT,
    TN_TERM,
)

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import (
        CHANCE_IN_STEP,
        FAM_MMX,
        FAM_SX,
        GUMBEL,
        G_apply_chance,
        G_chance_outcomes,
        G_chance_pending,
        G_chance_uniform,
        G_tree_copy,
    )
    from reinfors.jit.kernels.engine_records import _ST_WAIT, _unpack
    from reinfors.jit.kernels.engine_slots import _request
    from reinfors.jit.kernels.game_kernels import resolve_chance, step_rules, weigh
    from reinfors.jit.kernels.search_parts import (
        _FALSE,
        _I0,
        _IM1,
        _TRUE,
        _az_prior_node,
        _backprop,
        _backprop_maxn,
        _fscr_off,
        _masked_max_q_node,
        _new_child,
        _node_setup,
        _sparse_node,
    )
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel(inline="always")
def _pcol(E):
    """Column of ``t_nv`` holding an outcome child's probability (the last one)."""
    return E.t_nv.shape[2] - 1


@kernel
def _new_edge(AT, g, parent, a):
    """Expand edge ``a`` of ``parent`` (see ``_new_child``); with in-step chance under ExpandAll,
    Committed(k > 1) or AlwaysResample the edge may lead to a chance node instead
    (``_chance_edge``)."""
    E = _unpack(AT)
    cfg = E.cfg
    if CHANCE_IN_STEP:
        if cfg[CFG_EXPAND] != 0 or cfg[CFG_RESAMPLE] != 0 or cfg[CFG_SAMPLES] > 1:
            return _chance_edge(AT, g, parent, a)
    return _new_child(AT, g, parent, a)


@kernel
def _chance_edge(AT, g, parent, a):
    """Step a copy of ``parent``'s state with its mover playing ``a`` (edge rewards as
    ``_step_edge``).  Without pending chance the copy is an ordinary child; else it becomes a
    chance node followed by its outcome children (ExpandAll: every outcome, in reverse outcome
    order for Minimax / SelectiveExpectimax as the original requests them; Committed(k): k draws,
    from the slot stream in those two and from the tree stream in AlphaZero / Mcts) or, under
    AlwaysResample, a resampled chance node with no children yet (``_resample_pick`` creates
    them).  Returns the node (-1 when the tree is full)."""
    E = _unpack(AT)
    params, cfg, weights, sinfo = E.params, E.cfg, E.weights, E.sinfo
    t_state, t_ni, t_child, t_visits, t_ef, t_nv, t_legal, t_rng = E.t_state, E.t_ni, E.t_child, E.t_visits, E.t_ef, E.t_nv, E.t_legal, E.t_rng
    N, A = cfg[CFG_N], cfg[CFG_A]
    cn = sinfo[g, SI_NNODES]
    M = t_state.shape[1]
    if cn >= M:
        _atomics.cas(E.ctl, C_ERROR, 0, ERR_TREE_OVERFLOW)
        return _IM1
    base = t_state[g, cn]
    G_tree_copy(params, t_state[g, parent], base)
    mover = t_ni[g, parent, TN_MOVER]
    depth = t_ni[g, parent, TN_DEPTH]
    actions = E.iscr[g, 0:N]
    for p in range(N):
        actions[p] = 0
    actions[mover] = a
    fscr = E.fscr
    rewards = fscr[g, A : A + N]
    probs = fscr[g, A + N :]
    going = step_rules(params, base, actions, E.amounts[g])
    weigh(E.amounts[g], weights, rewards)
    t_ef[g, parent, a, EF_REW] = rewards[mover]
    if cfg[CFG_MAXN] != 0:
        for q in range(N):
            t_ef[g, parent, a, EF_RALL + q] = rewards[q]
    t_child[g, parent, a] = cn
    if not (going and G_chance_pending(params, base)):
        sinfo[g, SI_NNODES] = cn + 1
        _node_setup(AT, g, cn, depth + 1, mover)
        return cn
    if cfg[CFG_RESAMPLE] != 0:
        sinfo[g, SI_NNODES] = cn + 1
        ni = t_ni[g, cn]
        for k in range(ni.shape[0]):
            ni[k] = 0
        ni[TN_MOVER] = mover
        ni[TN_DEPTH] = depth
        ni[TN_FIRST] = -1
        ni[TN_NEXT] = -1
        ni[TN_NOUT] = -1
        for k in range(t_nv.shape[2]):
            t_nv[g, cn, k] = 0.0
        return cn
    expand = cfg[CFG_EXPAND] != 0
    n_out = G_chance_outcomes(params, base, probs)
    n = n_out if expand else cfg[CFG_SAMPLES]
    if cn + 1 + n > M:
        t_child[g, parent, a] = -1
        _atomics.cas(E.ctl, C_ERROR, 0, ERR_TREE_OVERFLOW)
        return _IM1
    sinfo[g, SI_NNODES] = cn + 1 + n
    ni = t_ni[g, cn]
    for k in range(ni.shape[0]):
        ni[k] = 0
    ni[TN_MOVER] = mover
    ni[TN_DEPTH] = depth
    ni[TN_FIRST] = -1
    ni[TN_NEXT] = -1
    ni[TN_NOUT] = n
    for b in range(t_visits.shape[2]):
        t_legal[g, cn, b] = 0
    if not _sparse_node(cn):  # AlphaZero / Mcts never read a chance node's edges
        for b in range(A):
            t_child[g, cn, b] = -1
        for b in range(t_visits.shape[2]):
            t_visits[g, cn, b] = 0
            for k in range(t_ef.shape[3]):
                t_ef[g, cn, b, k] = 0.0
    for k in range(t_nv.shape[2]):
        t_nv[g, cn, k] = 0.0
    pc = _pcol(E)
    nested = fscr[g, _fscr_off(E) + max(A, N) :]
    rev = FAM_MMX or FAM_SX
    for jj in range(n):
        # Committed(k) in Minimax / SelectiveExpectimax trees: the k draws come from the slot
        # stream, the last child taking the first (0.4.0's order); AlphaZero / Mcts draw from
        # the tree stream in child order (0.4.0's stream there is not recovered)
        j = n - 1 - jj if rev and not expand else jj
        c = cn + 1 + j
        dst = t_state[g, c]
        G_tree_copy(params, base, dst)
        if expand:
            o = n - 1 - j if rev else j
            p = probs[o]
        else:
            o = _rng.sample_chance(E.srng[g] if rev else t_rng[g], probs, n_out)
            p = 1.0 / n
        G_apply_chance(params, dst, o)
        resolve_chance(params, dst, t_rng[g], nested)  # further events of this tick: sampled
        _node_setup(AT, g, c, depth + 1, mover)
        t_ni[g, c, TN_JOINT] = o
        t_nv[g, c, pc] = p
    return cn


@kernel
def _chance_pick(AT, g, cn):
    """A descent through chance node ``cn`` (AlphaZero / Mcts): Committed picks one of its frozen
    draws uniformly, ExpandAll samples an outcome by its probability (tree stream)."""
    E = _unpack(AT)
    cfg, t_ni, t_nv, t_rng = E.cfg, E.t_ni, E.t_nv, E.t_rng
    n = t_ni[g, cn, TN_NOUT]
    if cfg[CFG_EXPAND] == 0:
        return cn + 1 + _rng.randbelow(t_rng[g], n)
    pc = _pcol(E)
    u = _rng.uniform(t_rng[g])
    for c in range(cn + 1, cn + n):
        u -= t_nv[g, c, pc]
        if u < 0.0:
            return c
    return cn + n


@kernel
def _resample_pick(AT, g, cn):
    """A descent through resampled chance node ``cn`` (AlwaysResample): draw the pending event's
    outcome from the slot stream (``resolve_chance``'s draw) and return that outcome's child,
    creating it when the outcome is new (the caller then evaluates it: ``SI_NNODES`` grew).
    Returns -1 when the tree is full."""
    E = _unpack(AT)
    params, cfg, srng, sinfo = E.params, E.cfg, E.srng, E.sinfo
    t_state, t_ni = E.t_state, E.t_ni
    N, A = cfg[CFG_N], cfg[CFG_A]
    st = t_state[g, cn]
    fscr = E.fscr
    probs = fscr[g, A + N :]
    m = G_chance_uniform(params, st)
    if m > 0:
        o = _rng.index_hi(srng[g], m)
    else:
        o = _rng.sample_chance(srng[g], probs, G_chance_outcomes(params, st, probs))
    c = t_ni[g, cn, TN_FIRST]
    while c >= 0:
        if t_ni[g, c, TN_JOINT] == o:
            return c
        c = t_ni[g, c, TN_NEXT]
    c = sinfo[g, SI_NNODES]
    if c >= t_state.shape[1]:
        _atomics.cas(E.ctl, C_ERROR, 0, ERR_TREE_OVERFLOW)
        return _IM1
    sinfo[g, SI_NNODES] = c + 1
    dst = t_state[g, c]
    G_tree_copy(params, st, dst)
    G_apply_chance(params, dst, o)
    resolve_chance(params, dst, srng[g], fscr[g, _fscr_off(E) + max(A, N) :])  # further events
    _node_setup(AT, g, c, t_ni[g, cn, TN_DEPTH] + 1, t_ni[g, cn, TN_MOVER])
    t_ni[g, c, TN_JOINT] = o
    t_ni[g, c, TN_NEXT] = t_ni[g, cn, TN_FIRST]
    t_ni[g, cn, TN_FIRST] = c
    return c


@kernel(inline="always")
def _chance_value(E, g, cn, h, mover, negamax):
    """Probability-weighted value (head ``h``) of chance node ``cn``'s outcome children for
    ``mover`` (terminal children 0; negated for a child of the other mover when ``negamax``)."""
    t_ni, t_nv = E.t_ni, E.t_nv
    pc = _pcol(E)
    s = 0.0
    for c in range(cn + 1, cn + 1 + t_ni[g, cn, TN_NOUT]):
        if t_ni[g, c, TN_TERM] != 0:
            continue
        v = t_nv[g, c, h]
        if negamax and t_ni[g, c, TN_MOVER] != mover:
            v = -v
        s += t_nv[g, c, pc] * v
    return s


@kernel(inline="always")
def _committed_mean(E, g, cn, h, mover, negamax, r):
    """Minimax value (head ``h``) of an edge with reward ``r`` into Committed chance node ``cn``:
    the uniform mean over its k draws of ``r + gamma * v`` (terminal children ``v = 0``; negated
    for a child of the other mover when ``negamax``), summed in child order and then divided:
    0.4.0's arithmetic to the last bit (``r + gamma * mean`` differs in the last ulp)."""
    t_ni, t_nv = E.t_ni, E.t_nv
    gamma = E.fcfg[F_GAMMA]
    n = t_ni[g, cn, TN_NOUT]
    s = 0.0
    for c in range(cn + 1, cn + 1 + n):
        v = 0.0
        if t_ni[g, c, TN_TERM] == 0:
            v = t_nv[g, c, h]
            if negamax and t_ni[g, c, TN_MOVER] != mover:
                v = -v
        s += r + gamma * v
    return s / n


@kernel
def _seq_fan_backup(AT, g):
    """ExpandAll (AlphaZero / Mcts): the fan at chance node ``SI_LEAF`` is evaluated; back up the
    probability-weighted value of its outcome children along the path (negamax: for the chance
    node's mover; maxn: every agent's component)."""
    E = _unpack(AT)
    cfg, sinfo = E.cfg, E.sinfo
    t_ni, t_nv = E.t_ni, E.t_nv
    cn = sinfo[g, SI_LEAF]
    sinfo[g, SI_FANN] = 0
    if cfg[CFG_MAXN] != 0:
        for q in range(cfg[CFG_N]):
            t_nv[g, cn, q] = _chance_value(E, g, cn, q, _I0, _FALSE)
        _backprop_maxn(AT, g, _FALSE)
    else:
        _backprop(AT, g, _chance_value(E, g, cn, _I0, t_ni[g, cn, TN_MOVER], _TRUE))


@kernel
def _seq_fan_absorb(AT, g):
    """ExpandAll (AlphaZero / Mcts): the rows of a fan's outcome children (one per child, its
    mover's; maxn: one per agent) set their priors / values, then the fan is backed up."""
    E = _unpack(AT)
    cfg, sinfo, preds = E.cfg, E.sinfo, E.preds
    t_ni, t_nv, rq = E.t_ni, E.t_nv, E.rq
    A = cfg[CFG_A]
    az = GUMBEL or cfg[CFG_POLICY] == POLICY_AZ  # GumbelAlphaZero's nodes are AlphaZero's
    maxn = cfg[CFG_MAXN] != 0
    prior = E.fscr[g, 0:A]
    for j in range(sinfo[g, SI_ROWS]):
        c = rq[g, j, 0]
        q = rq[g, j, 1]
        if az:
            if q == t_ni[g, c, TN_MOVER]:
                _az_prior_node(E, g, preds[g, j], c, prior)  # its legal edges only (c > 0)
            t_nv[g, c, q if maxn else 0] = preds[g, j, A]
        else:
            t_nv[g, c, 0] = _masked_max_q_node(E, g, preds[g, j], c)
        t_ni[g, c, TN_EVAL] = 1
    _seq_fan_backup(AT, g)


@kernel
def _seq_fan_request(AT, g):
    """Request the rows of the fan at chance node ``SI_LEAF`` (every non-terminal outcome child:
    its mover's row, every agent's with maxn; the rows beyond the first count as extra
    evaluation rows).  Returns False (and backs the fan up) when no child needs a row."""
    E = _unpack(AT)
    cfg, sinfo, tele = E.cfg, E.sinfo, E.tele
    t_ni, rq = E.t_ni, E.rq
    N = cfg[CFG_N]
    maxn = cfg[CFG_MAXN] != 0
    n = _I0
    for c in range(sinfo[g, SI_FAN0], sinfo[g, SI_FAN0] + sinfo[g, SI_FANN]):
        if t_ni[g, c, TN_TERM] != 0:
            continue
        if maxn:
            for q in range(N):
                rq[g, n, 0] = c
                rq[g, n, 1] = q
                n += 1
        else:
            rq[g, n, 0] = c
            rq[g, n, 1] = t_ni[g, c, TN_MOVER]
            n += 1
    if n == 0:
        _seq_fan_backup(AT, g)
        return False
    tele[g, TL_EXTRA] += n - 1
    _request(AT, g, n, _ST_WAIT)
    return True
