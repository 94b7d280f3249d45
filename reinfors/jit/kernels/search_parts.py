
# ---- body: reinfors/jit/kernels/search_parts.py ------------------------------------------------------
# Tree search inside the engine.  The "tree" (AlphaZero / Mcts), "minimax" and "selexp" kernel
# families each concatenate this file, their policy's files and the driver (the header constants
# FAM_TREE / FAM_MMX / FAM_SX prune the other policies' branches before typing).  Each slot owns
# a preallocated struct-of-arrays tree (``t_*`` arrays of E, one row of nodes per slot).  A search advances in the worker until it needs
# inference rows: it writes their descriptors to ``rq`` and requests them like any other rows
# (tree nodes are encoded straight into the arena), the slot waits, and
# after the fire ``_search_absorb`` consumes the predictions and the search goes on.  When the
# search is complete the slot acts, records and steps (``_finish_tick``) in the same task.
#
# AlphaZero (PUCT, the root is evaluated as simulation 1, root Dirichlet noise from the slot
# stream, negamax or maxn backup), Mcts (UCT; the root is not evaluated; leaves scored by the
# masked max of the head-mean Q row), Minimax (full-width negamax, one inference round per
# depth level; frontier leaves scored for their own mover) and SelectiveExpectimax (best-first
# rounds over ensemble heads) follow reinfors 0.4.0 exactly as probed on sequential games
# (docs/original-0.4.0/engine-search.md).  Simultaneous games (Snake) use decoupled AlphaZero /
# Mcts trees with explicit chance modes; the original's were not probed.
#
# The absorb and backup kernels (every simulation runs them) compile with ``_nrt=False``: they
# allocate nothing, and without it each call increments and decrements the (absent) meminfo of
# its array arguments.  A callee compiled from such a kernel inherits the flag unless it sets its
# own, so it is used only where no game function (a user's may allocate) can be reached.

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import atomics as _atomics
from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    C_ERROR,
    CFG_A,
    CFG_CHANCE,
    CFG_HEADS,
    CFG_MAXN,
    CFG_N,
    CFG_NOISE,
    CFG_POLICY,
    EF_PRIOR,
    EF_RALL,
    EF_REW,
    EF_VSUM,
    ERR_TREE_OVERFLOW,
    F_GAMMA,
    F_NOISE_ALPHA,
    F_NOISE_EPS,
    FT_SEARCH_SIGMA,
    MSG_W,
    POLICY_SELEXP,
    SI_CAPS,
    SI_EXPS,
    SI_FANN,
    SI_FBUF,
    SI_LEAF,
    SI_LEAVES,
    SI_MAXD,
    SI_NFRONT,
    SI_NNEW,
    SI_NNODES,
    SI_PLEN,
    SI_ROUNDS,
    SI_SEARCH,
    SI_SIMS,
    SI_TERMS,
    TN_ALIVE,
    TN_DEPTH,
    TN_FIRST,
    TN_MOVER,
    TN_NEXT,
    TN_NLEG,
    TN_TERM,
    TN_TOTAL,
)
from reinfors.jit.games._contract import DONE, HORIZON, RUNNING
from reinfors.jit.policies import search as _sp

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import (
        CHANCE_IN_STEP,
        FAM_MMX,
        FAM_SX,
        FAM_TREE,
        LEGAL_LIST,
        LEGAL_RANKED,
        SIMUL,
        G_active,
        G_encode,
        G_legal,
        G_legal_list,
        G_tree_copy,
    )
    from reinfors.jit.kernels.engine_records import _unpack
    from reinfors.jit.kernels.game_kernels import apply_step, weigh
# -- end of bound names (scripts/kernel_part_imports.py) --


_SR_EVAL = 0  # select_expand: the leaf needs inference rows
_SR_TERMINAL = 1  # ... reached a terminal state
_SR_DEPTHCAP = 2  # ... reached the depth cap (back up the cached value)
_SR_FAN = 3  # ... expanded an ExpandAll outcome fan (every outcome child needs rows)
_TREE_SEED = np.uint64(0xD1B54A32D192ED03)
# Constants passed to non-inlined kernels are numpy scalars (typed int64 / bool): a Python literal
# argument would compile one more specialisation of the callee per distinct value.
_I0 = np.int64(0)
_I1 = np.int64(1)
_IM1 = np.int64(-1)
_TRUE = np.bool_(True)
_FALSE = np.bool_(False)

# Shared parts of every tree search (AlphaZero / Mcts, Minimax, SelectiveExpectimax; sequential
# and decoupled): node setup, edge stepping, tree start, the PUCT / UCT selection rule, the
# negamax and maxn backups, AlphaZero's prior and the masked Q maximum.  Every search family
# concatenates this file; each policy's rounds live in a file of their own (codegen._TEMPLATES):
#   search_puct.py        AlphaZero / Mcts on sequential games
#   search_decoupled.py   AlphaZero / Mcts on simultaneous games (decoupled selection)
#   search_minimax.py     Minimax (full-width negamax / expectiminimax)
#   search_selexp.py      SelectiveExpectimax on sequential games
#   search_sxsim.py       SelectiveExpectimax on simultaneous games
#   search_chance.py      in-step chance nodes of the sequential trees
#   search_driver.py      the decision, the step / absorb entry points and the episode flush


@kernel(inline="always")
def _fscr_off(E):
    """Offset of the search scratch region of ``fscr`` (after scratch A, rewards N, chance C)."""
    cfg = E.cfg
    return cfg[CFG_A] + cfg[CFG_N] + max(1, cfg[CFG_CHANCE])


@kernel(inline="always")
def _sparse_node(c):
    """True when node ``c``'s edge entries are touched only through its legal edge list: every
    node below the root of an AlphaZero / Mcts tree on a sequential game.  Its entries for
    actions that were never legal since its setup are stale (never read: every reader goes
    through ``t_edges``), and so is its legal mask when the game lists its moves (``LEGAL_LIST``).
    The root keeps a dense legal mask (its other entries are edge-listed too: ``_edge_listed``);
    simultaneous nodes and the Minimax / SelectiveExpectimax trees (whose readers scan all
    actions) keep dense tables."""
    return FAM_TREE and not SIMUL and c != 0


@kernel(inline="always")
def _edge_listed(c):
    """True when node ``c``'s edge entries (``t_child``, ``t_visits``, ``t_ef``) are read through
    its legal edge list only: :func:`_sparse_node`, and the root of those trees too (the
    decision scans its edge list: ``_search_decide``), whose only dense row is its legal mask."""
    return FAM_TREE and not SIMUL


@kernel
def _node_setup(AT, g, c, depth, parent_mover):
    """Initialise node ``c`` of slot ``g``'s tree from its state row: depth, terminal flag,
    mover, legal mask and edge list; no children, no statistics (a sparse node initialises only
    its legal edges: ``_node_state_info``)."""
    E = _unpack(AT)
    cfg = E.cfg
    t_ni, t_child, t_visits, t_ef, t_nv = E.t_ni, E.t_child, E.t_visits, E.t_ef, E.t_nv
    A = cfg[CFG_A]
    ni = t_ni[g, c]
    for k in range(ni.shape[0]):
        ni[k] = 0
    ni[TN_DEPTH] = depth
    ni[TN_FIRST] = -1
    ni[TN_NEXT] = -1
    if not _edge_listed(c):
        for a in range(A):
            t_child[g, c, a] = -1
        for a in range(t_visits.shape[2]):  # A, or N * A (one table per agent) when simultaneous
            t_visits[g, c, a] = 0
            for k in range(t_ef.shape[3]):
                t_ef[g, c, a, k] = 0.0
    for k in range(t_nv.shape[2]):
        t_nv[g, c, k] = 0.0
    _node_state_info(AT, g, c, parent_mover)


@kernel
def _node_state_info(AT, g, c, parent_mover):
    """The node's terminal flag, mover(s) and legal masks from its current state row (also after
    a decoupled tree's AlwaysResample re-step, which keeps the statistics: simultaneous nodes are
    dense); on sequential games its edge list ``t_edges[g, c, :TN_NLEG]`` (ascending, or the
    game's legal order with ``LEGAL_RANKED``), and a sparse node's legal edge entries initialised
    (a sequential node is set up once, so its legal set is fixed: its other entries are stale and
    never read).

    The mask row is cleared here unless the game lists its moves (``LEGAL_LIST``: its
    ``legal_list`` writes the whole mask, so a second pass over the cold row is not paid)."""
    E = _unpack(AT)
    params, cfg = E.params, E.cfg
    t_state, t_ni, t_legal = E.t_state, E.t_ni, E.t_legal
    N, A = cfg[CFG_N], cfg[CFG_A]
    st = t_state[g, c]
    ni = t_ni[g, c]
    running = st[DONE] == RUNNING
    listed = LEGAL_LIST and _sparse_node(c)  # its mask is never read: the game lists ids only
    if (SIMUL or not LEGAL_LIST or not running) and not listed:
        for a in range(t_legal.shape[2]):
            t_legal[g, c, a] = 0
    ni[TN_ALIVE] = 0
    ni[TN_NLEG] = 0
    if not running:
        ni[TN_TERM] = 1
        ni[TN_MOVER] = parent_mover
        return
    ni[TN_TERM] = 0
    agents = E.iscr[g, 2 * N + MSG_W : 3 * N + MSG_W]
    # The state is running: the game's own functions directly (``active_agents`` / ``legal_mask``
    # only add the finished-state case, one call layer each on every node set up).
    na = G_active(params, st, agents)
    ni[TN_MOVER] = agents[0]
    if SIMUL:  # a constant of the generated module (the game's dynamics)
        for j in range(na):
            p = agents[j]
            ni[TN_ALIVE] |= np.int64(1) << p
            G_legal(params, st, p, t_legal[g, c, p * A : (p + 1) * A])
    else:
        lg = t_legal[g, c, 0:A]
        ed = E.t_edges[g, c]
        n = 0
        if LEGAL_LIST:  # the game lists its moves in order while writing the mask
            n = G_legal_list(params, st, agents[0], t_legal[g, c, 0:0] if listed else lg, ed)
        else:
            G_legal(params, st, agents[0], lg)
            for a in range(A):
                if lg[a] != 0:
                    if LEGAL_RANKED:  # the mask holds each action's position in the game's order
                        ed[lg[a] - 1] = a
                    else:
                        ed[n] = a
                    n += 1
        ni[TN_NLEG] = n
        if _edge_listed(c):
            # The legal edges' entries read as a dense table's would after setup (-1 / 0).
            t_child, t_visits, t_ef = E.t_child, E.t_visits, E.t_ef
            for j in range(n):
                a = ed[j]
                t_child[g, c, a] = -1
                t_visits[g, c, a] = 0
                for k in range(t_ef.shape[3]):
                    t_ef[g, c, a, k] = 0.0


@kernel(inline="always")
def _step_edge(E, g, parent, a, c):
    """Node ``c``'s state = ``parent``'s stepped with its mover playing ``a``; the edge rewards
    (the mover's, and every agent's with maxn) go to the parent's edge ``a``.  Chance a step
    leaves pending (Committed(1) on a game with in-step chance: its one frozen draw) comes, in
    Minimax and SelectiveExpectimax trees, from the slot stream as the node is made, as 0.4.0
    (AlphaZero / Mcts: from the tree stream; 0.4.0's is not recovered there)."""
    params, cfg, weights = E.params, E.cfg, E.weights
    t_state, t_ni, t_ef, t_rng = E.t_state, E.t_ni, E.t_ef, E.t_rng
    N, A = cfg[CFG_N], cfg[CFG_A]
    dst = t_state[g, c]
    G_tree_copy(params, t_state[g, parent], dst)
    mover = t_ni[g, parent, TN_MOVER]
    actions = E.iscr[g, 0:N]
    for p in range(N):
        actions[p] = 0
    actions[mover] = a
    fscr = E.fscr
    rewards = fscr[g, A : A + N]
    rng = E.srng[g] if CHANCE_IN_STEP and (FAM_MMX or FAM_SX) else t_rng[g]
    apply_step(params, dst, actions, E.amounts[g], rng, fscr[g, A + N :])
    weigh(E.amounts[g], weights, rewards)
    t_ef[g, parent, a, EF_REW] = rewards[mover]
    if cfg[CFG_MAXN] != 0:
        for q in range(N):
            t_ef[g, parent, a, EF_RALL + q] = rewards[q]


@kernel
def _new_child(AT, g, parent, a):
    """Expand edge ``a`` of ``parent``: step a copy of its state with the mover's action (chance
    from the slot's tree stream), store the edge rewards, set the child up.  Returns the child's
    index, or -1 when the tree is full (flagged as a kernel error)."""
    E = _unpack(AT)
    sinfo, t_ni = E.sinfo, E.t_ni
    c = sinfo[g, SI_NNODES]
    if c >= E.t_state.shape[1]:
        _atomics.cas(E.ctl, C_ERROR, 0, ERR_TREE_OVERFLOW)
        return -1
    sinfo[g, SI_NNODES] = c + 1
    _step_edge(E, g, parent, a, c)
    _node_setup(AT, g, c, t_ni[g, parent, TN_DEPTH] + 1, t_ni[g, parent, TN_MOVER])
    E.t_child[g, parent, a] = c
    return c


@kernel
def _tree_begin(AT, g):
    """A fresh tree for the slot's current decision (nothing is reused across decisions)."""
    E = _unpack(AT)
    params, cfg, states, srng, sinfo, root = E.params, E.cfg, E.states, E.srng, E.sinfo, E.root
    t_state, t_rng, t_list = E.t_state, E.t_rng, E.t_list
    src = states[g]
    dst = t_state[g, 0]
    for i in range(src.shape[0]):
        dst[i] = src[i]
    # The engine's truncation horizon is not a rule of the game: the tree searches past it
    # (the original's tree steps an Env, which never truncates).
    dst[HORIZON] = 0
    sinfo[g, SI_NNODES] = 1
    _node_setup(AT, g, _I0, _I0, _IM1)
    # In-tree chance draws use their own stream, derived from (not advancing) the slot stream.
    t_rng[g, 0] = _rng.mix64(srng[g, 0] ^ _TREE_SEED)
    for c in (SI_SIMS, SI_PLEN, SI_MAXD, SI_TERMS, SI_CAPS, SI_LEAVES, SI_ROUNDS, SI_EXPS, SI_NNEW, SI_FBUF, SI_FANN):
        sinfo[g, c] = 0
    sinfo[g, SI_NFRONT] = 1
    t_list[g, 0, 0] = 0
    if cfg[CFG_POLICY] == POLICY_SELEXP:
        E.t_nv[g, 0, cfg[CFG_HEADS]] = 1.0  # the root's path weight
        E.ftele[g, FT_SEARCH_SIGMA] = 0.0
    if cfg[CFG_MAXN] != 0:
        # maxn evaluates every node from all perspectives: the root rows of every agent, kept for
        # the records (root[g, q] = observe(q) of the root state).
        for q in range(cfg[CFG_N]):
            G_encode(params, src, q, root[g, q])
    sinfo[g, SI_SEARCH] = 1


@kernel(inline="always")
def _select(E, g, node, puct, c, off):
    """PUCT (``q + c * prior * sqrt(max(N, 1)) / (1 + n)``) or UCT (``inf`` unvisited, else
    ``q + c * sqrt(ln(max(N, 1)) / n)``) over the legal actions of the node's table at ``off``
    (0; ``p * A`` for agent ``p`` of a simultaneous node), ascending; first max.  Sequential
    games walk the node's edge list (the same actions in the same order)."""
    cfg = E.cfg
    t_ni, t_visits, t_ef, t_legal = E.t_ni, E.t_visits, E.t_ef, E.t_legal
    total = np.float64(max(t_ni[g, node, TN_TOTAL], 1))
    # Only the rule's own term (a logarithm costs more than a whole PUCT child's score).
    root_n = np.sqrt(total) if puct else 0.0
    log_n = 0.0 if puct else np.log(total)
    best = _IM1
    bs = -np.inf
    if SIMUL:
        for a in range(cfg[CFG_A]):
            k = off + a
            if t_legal[g, node, k] == 0:
                continue
            n = t_visits[g, node, k]
            if puct:
                u = c * t_ef[g, node, k, EF_PRIOR] * root_n
                sc = t_ef[g, node, k, EF_VSUM] / n + u / (1.0 + n) if n > 0 else u
            elif n == 0:
                sc = np.inf
            else:
                sc = t_ef[g, node, k, EF_VSUM] / n + c * np.sqrt(log_n / n)
            if best < 0 or sc > bs:
                best = a
                bs = sc
        return best
    t_edges = E.t_edges
    for j in range(t_ni[g, node, TN_NLEG]):
        a = np.int64(t_edges[g, node, j])
        n = t_visits[g, node, a]
        if puct:
            # An unvisited edge's score is its exploration term alone: ``0.0 + u / 1.0`` is ``u``
            # bit for bit, so its two divisions are skipped (most edges below the root).
            u = c * t_ef[g, node, a, EF_PRIOR] * root_n
            sc = t_ef[g, node, a, EF_VSUM] / n + u / (1.0 + n) if n > 0 else u
        elif n == 0:
            sc = np.inf
        else:
            sc = t_ef[g, node, a, EF_VSUM] / n + c * np.sqrt(log_n / n)
        if best < 0 or sc > bs:
            best = a
            bs = sc
    return best


@kernel(_nrt=False)
def _backprop(AT, g, v):
    """Negamax backup of ``v`` (the leaf mover's value) along the path: ``q = r + gamma * (+-g)``."""
    E = _unpack(AT)
    fcfg, sinfo = E.fcfg, E.sinfo
    t_ni, t_visits, t_ef, t_nv, t_path = E.t_ni, E.t_visits, E.t_ef, E.t_nv, E.t_path
    leaf = sinfo[g, SI_LEAF]
    t_nv[g, leaf, 0] = v
    gamma = fcfg[F_GAMMA]
    gv = v
    ga = t_ni[g, leaf, TN_MOVER]
    for i in range(sinfo[g, SI_PLEN] - 1, -1, -1):
        node = t_path[g, i, 0]
        a = t_path[g, i, 1]
        m = t_ni[g, node, TN_MOVER]
        cv = gv if ga == m else -gv
        q = t_ef[g, node, a, EF_REW] + gamma * cv
        t_ef[g, node, a, EF_VSUM] += q
        t_visits[g, node, a] += 1
        t_ni[g, node, TN_TOTAL] += 1
        gv = q
        ga = m


@kernel(_nrt=False)
def _backprop_maxn(AT, g, terminal):
    """maxn backup of every agent's value (the leaf's ``values_all``, zeros at a terminal leaf):
    ``g[q] = r_q + gamma * g[q]``, each node credits its own mover's component."""
    E = _unpack(AT)
    cfg, fcfg, sinfo = E.cfg, E.fcfg, E.sinfo
    t_ni, t_visits, t_ef, t_nv, t_path = E.t_ni, E.t_visits, E.t_ef, E.t_nv, E.t_path
    N = cfg[CFG_N]
    off = _fscr_off(E)
    gv = E.fscr[g, off : off + N]
    leaf = sinfo[g, SI_LEAF]
    for q in range(N):
        gv[q] = 0.0 if terminal else t_nv[g, leaf, q]
    gamma = fcfg[F_GAMMA]
    for i in range(sinfo[g, SI_PLEN] - 1, -1, -1):
        node = t_path[g, i, 0]
        a = t_path[g, i, 1]
        for q in range(N):
            gv[q] = t_ef[g, node, a, EF_RALL + q] + gamma * gv[q]
        m = t_ni[g, node, TN_MOVER]
        t_ef[g, node, a, EF_VSUM] += gv[m]
        t_visits[g, node, a] += 1
        t_ni[g, node, TN_TOTAL] += 1


@kernel(inline="always")
def _az_prior(E, g, pred, legal, at_root, prior):
    """AlphaZero prior into ``prior: [A]``: softmax of the logits over ``legal``; at the root mixed
    with ``epsilon`` of a Dirichlet(alpha) draw from the slot stream (legal actions in order)."""
    cfg, fcfg, srng = E.cfg, E.fcfg, E.srng
    A = cfg[CFG_A]
    _sp.softmax_legal(pred, legal, A, prior)
    eps = fcfg[F_NOISE_EPS]
    if at_root and cfg[CFG_NOISE] != 0 and eps > 0.0:
        k = _I0
        for a in range(A):
            if legal[a] != 0:
                k += 1
        off = _fscr_off(E)
        d = E.fscr[g, off : off + A]
        _rng.dirichlet(srng[g], fcfg[F_NOISE_ALPHA], d, k)
        j = 0
        for a in range(A):
            if legal[a] != 0:
                prior[a] = (1.0 - eps) * prior[a] + eps * d[j]
                j += 1


@kernel(inline="always")
def _az_prior_node(E, g, pred, node, prior):
    """AlphaZero prior of sequential node ``node`` written to its edges' ``EF_PRIOR``: the
    softmax of ``pred: [>= A]`` over its edge list (``_az_prior``'s arithmetic in the same order;
    the root mixed with Dirichlet noise), ``prior: [A]`` scratch.  Only the legal entries are
    written (a dense table's illegal entries hold 0.0 already: node setup)."""
    cfg, fcfg, srng = E.cfg, E.fcfg, E.srng
    t_ni, t_ef = E.t_ni, E.t_ef
    ed = E.t_edges[g, node]
    n = t_ni[g, node, TN_NLEG]
    m = -np.inf
    for j in range(n):
        a = ed[j]
        if pred[a] > m:
            m = pred[a]
    t = 0.0
    for j in range(n):
        a = ed[j]
        # exp(0.0) is 1.0 exactly: the largest logit (every logit of a flat head) costs no exp
        e = 1.0 if pred[a] == m else np.exp(pred[a] - m)
        prior[a] = e
        t += e
    for j in range(n):
        a = ed[j]
        prior[a] = prior[a] / t
    eps = fcfg[F_NOISE_EPS]
    if node == 0 and cfg[CFG_NOISE] != 0 and eps > 0.0:
        off = _fscr_off(E)
        d = E.fscr[g, off : off + cfg[CFG_A]]
        _rng.dirichlet(srng[g], fcfg[F_NOISE_ALPHA], d, np.int64(n))
        for j in range(n):
            a = ed[j]
            prior[a] = (1.0 - eps) * prior[a] + eps * d[j]
    for j in range(n):
        a = ed[j]
        t_ef[g, node, a, EF_PRIOR] = prior[a]


@kernel(inline="always")
def _masked_max_q_node(E, g, pred, node):
    """``_masked_max_q`` over sequential node ``node``'s edge list (same order, same result)."""
    cfg = E.cfg
    A, H = cfg[CFG_A], cfg[CFG_HEADS]
    ed = E.t_edges[g, node]
    v = -np.inf
    any_legal = False
    for j in range(E.t_ni[g, node, TN_NLEG]):
        a = ed[j]
        s = 0.0
        for h in range(H):
            s += pred[h * A + a]
        s = s / H
        if not any_legal or s > v:
            v = s
            any_legal = True
    return v if any_legal else 0.0


@kernel(inline="always")
def _masked_max_q(E, pred, legal):
    """``max`` over legal actions of the head-mean Q (``pred: [H * A]``); 0.0 if none is legal."""
    cfg = E.cfg
    A, H = cfg[CFG_A], cfg[CFG_HEADS]
    v = -np.inf
    any_legal = False
    for a in range(A):
        if legal[a] != 0:
            s = 0.0
            for h in range(H):
                s += pred[h * A + a]
            s = s / H
            if not any_legal or s > v:
                v = s
                any_legal = True
    return v if any_legal else 0.0
