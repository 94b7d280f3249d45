# ---- body: reinfors/jit/kernels/search_gumbel.py --------------------------------------------------
# GumbelAlphaZero (Danihelka et al., ICLR 2022, "Policy improvement by planning with Gumbel"),
# with mctx's semantics (``gumbel_muzero_policy`` + ``qtransform_completed_by_mix_value``).  Only
# the *selection* is this file's: the tree, its expansion, chance nodes, leaf batching and the
# negamax / maxn backups are AlphaZero's (search_puct.py, search_parts.py, search_chance.py).
# The "gumbel" kernel family concatenates it (GUMBEL of the header), so AlphaZero / Mcts modules
# never compile it.
#
# The root is evaluated first (a round of its own, as AlphaZero's), then ``num_simulations``
# simulations follow (cfg[CFG_SIMS] = num_simulations + 1).  At the root's evaluation the scaled
# Gumbel draws g(a) = gumbel_scale * Gumbel(0, 1) of its legal actions are stored (slot stream,
# the root's edge-list order) in ``t_ef[g, T - 1, a, EF_PRIOR]``: the tree's last node row, which
# no expansion reaches (the tree holds one node more than AlphaZero's bound for the same
# simulations: composition._search_spec).
#
#   sigma(q)   = (c_visit + max_b N(b)) * c_scale * q
#   completed  = Q(a) where N(a) > 0, else v_mix (use_mixed_value) or the node's raw value
#   v_mix      = (v + sum_b N(b) * sum_{N(a)>0} p(a) Q(a) / sum_{N(a)>0} p(a)) / (1 + sum_b N(b))
#   rescale    = (completed - min) / max(max - min, 1e-8), min / max over every action (an
#                illegal one counts as completed by the value, as in mctx's A-wide arrays)
#   root       = argmax over {a : N(a) = considered_visit} of g(a) + logits(a) + sigma(q^(a)),
#                considered_visit from mctx's sequential-halving table
#                (get_sequence_of_considered_visits(min(k, legal), num_simulations)[sum_b N(b)])
#   interior   = argmax of pi'(a) - N(a) / (1 + sum_b N(b)), pi' = softmax(logits + sigma(q^))
#   act        = the root rule with considered_visit = max_b N(b)
#   target     = softmax(logits + sigma(q^)) at the root
#
# ``logits`` are the log-priors (the softmax of the callback's logits over the legal edges: a
# constant shift, which neither argmax nor softmax sees).  Ties go to the lowest action id
# (jnp.argmax).  Q is the mover's mean edge value (t_ef EF_VSUM / visits, rewards and discount
# included); the raw value is the node's own evaluation (t_nv: column 0, maxn its mover's).

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    CFG_A,
    CFG_GB_K,
    CFG_GB_MIXED,
    CFG_GB_RESCALE,
    CFG_MAXN,
    CFG_SIMS,
    EF_PRIOR,
    EF_VSUM,
    F_GB_CSCALE,
    F_GB_CVISIT,
    F_GB_SCALE,
    TN_MOVER,
    TN_NLEG,
)

if TYPE_CHECKING:
    from reinfors.jit.kernels.engine_records import _unpack
    from reinfors.jit.kernels.search_parts import _I0, _IM1
# -- end of bound names (scripts/kernel_part_imports.py) --


_GB_TINY = np.finfo(np.float64).tiny  # mctx floors the priors of the mixed value at tiny
_GB_EPS = 1e-8  # mctx's rescale epsilon
_GB_LOW = -1e9  # mctx's low_logit (score_considered)
_GB_HALF = 2.0**-54  # uniform [0, 1) + half an ulp: (0, 1), so the Gumbel draw is finite


@kernel(inline="always")
def _gb_store(E):
    """Node row of ``t_ef`` whose ``EF_PRIOR`` column holds the root's scaled Gumbel draws."""
    return E.t_state.shape[1] - 1


@kernel(inline="always")
def _gb_logit(p):
    """The log-prior (a logit up to a constant); -inf for a prior that underflowed."""
    return np.log(p) if p > 0.0 else -np.inf


@kernel
def _gb_considered_visit(m, n, i):
    """Entry ``i`` of mctx's ``get_sequence_of_considered_visits(m, n)``: the visit count an
    action must have to be considered at the root's ``i``-th simulation (``m`` the considered
    actions, ``n`` the simulations).  Each phase visits its ``m`` actions (all with equal visits
    ``v``) ``e = max(1, n // (ceil(log2 m) * m))`` times, then halves ``m`` (never below 2)."""
    if m <= 1:
        return i
    log2max = 0
    while (1 << log2max) < m:
        log2max += 1
    v = 0
    pos = 0
    while True:
        e = max(1, n // (log2max * m))
        if i < pos + e * m:
            return v + (i - pos) // m
        pos += e * m
        v += e
        m = max(2, m // 2)


@kernel
def _gb_sigma(AT, g, node, out):
    """``out[a]`` = sigma(completed, rescaled Q)(a) at sequential node ``node``'s legal edges
    (mctx ``qtransform_completed_by_mix_value``; see the file header).  ``out: [A] float64``
    scratch, written at the legal entries only."""
    E = _unpack(AT)
    cfg, fcfg = E.cfg, E.fcfg
    t_ni, t_visits, t_ef, t_nv = E.t_ni, E.t_visits, E.t_ef, E.t_nv
    ed = E.t_edges[g, node]
    n = t_ni[g, node, TN_NLEG]
    raw = t_nv[g, node, t_ni[g, node, TN_MOVER]] if cfg[CFG_MAXN] != 0 else t_nv[g, node, 0]
    sum_n = 0
    max_n = 0
    sum_p = 0.0
    for j in range(n):
        a = ed[j]
        k = t_visits[g, node, a]
        sum_n += k
        if k > max_n:
            max_n = k
        if k > 0:
            sum_p += max(_GB_TINY, t_ef[g, node, a, EF_PRIOR])
    value = raw
    if cfg[CFG_GB_MIXED] != 0 and sum_n > 0:
        wq = 0.0
        for j in range(n):
            a = ed[j]
            k = t_visits[g, node, a]
            if k > 0:
                wq += max(_GB_TINY, t_ef[g, node, a, EF_PRIOR]) * (t_ef[g, node, a, EF_VSUM] / k) / sum_p
        value = (raw + sum_n * wq) / (sum_n + 1)
    lo = np.inf
    hi = -np.inf
    for j in range(n):
        a = ed[j]
        k = t_visits[g, node, a]
        q = t_ef[g, node, a, EF_VSUM] / k if k > 0 else value
        out[a] = q
        lo = min(lo, q)
        hi = max(hi, q)
    if n < cfg[CFG_A]:  # the illegal actions: completed by the value in mctx's A-wide arrays
        lo = min(lo, value)
        hi = max(hi, value)
    scale = (fcfg[F_GB_CVISIT] + max_n) * fcfg[F_GB_CSCALE]
    rescale = cfg[CFG_GB_RESCALE] != 0
    d = max(hi - lo, _GB_EPS)
    for j in range(n):
        a = ed[j]
        q = (out[a] - lo) / d if rescale else out[a]
        out[a] = scale * q


@kernel
def _gb_draw(AT, g):
    """The root was just evaluated: store its legal actions' scaled Gumbel draws
    ``gumbel_scale * -log(-log(u))`` (slot stream, edge-list order; none drawn at scale 0)."""
    E = _unpack(AT)
    t_ef = E.t_ef
    ed = E.t_edges[g, 0]
    s = E.fcfg[F_GB_SCALE]
    row = _gb_store(E)
    for j in range(E.t_ni[g, 0, TN_NLEG]):
        a = ed[j]
        if s > 0.0:
            u = _rng.uniform(E.srng[g]) + _GB_HALF
            t_ef[g, row, a, EF_PRIOR] = s * -np.log(-np.log(u))
        else:
            t_ef[g, row, a, EF_PRIOR] = 0.0


@kernel
def _gb_root_score(AT, g, sig, considered):
    """Among the root's legal actions with exactly ``considered`` visits (any legal one when none
    has), the argmax of ``max(-1e9, g(a) + sig[a])``, ``sig[a]`` = logit + sigma(q^) (lowest id
    on ties); -1 when the root has no legal action."""
    E = _unpack(AT)
    t_visits = E.t_visits
    ed = E.t_edges[g, 0]
    n = E.t_ni[g, 0, TN_NLEG]
    row = _gb_store(E)
    best = _IM1
    bs = -np.inf
    for rnd in range(2):
        for j in range(n):
            a = ed[j]
            if rnd == 0 and t_visits[g, 0, a] != considered:
                continue
            sc = max(_GB_LOW, E.t_ef[g, row, a, EF_PRIOR] + sig[a])
            if best < 0 or sc > bs or (sc == bs and a < best):
                best = a
                bs = sc
        if best >= 0:
            break
    return best


@kernel
def _gb_select(AT, g, node):
    """The Gumbel selection at sequential decision node ``node`` (evaluated, not terminal): the
    root's sequential halving or the interior's deterministic rule (file header)."""
    E = _unpack(AT)
    cfg = E.cfg
    t_ni, t_visits, t_ef = E.t_ni, E.t_visits, E.t_ef
    A = cfg[CFG_A]
    sig = E.fscr[g, 0:A]  # scratch: free between absorbs
    _gb_sigma(AT, g, node, sig)
    ed = E.t_edges[g, node]
    n = t_ni[g, node, TN_NLEG]
    total = 0
    for j in range(n):
        total += t_visits[g, node, ed[j]]
    if node == 0:
        m = min(cfg[CFG_GB_K], n)
        considered = _gb_considered_visit(m, cfg[CFG_SIMS] - 1, total)
        for j in range(n):
            a = ed[j]
            sig[a] += _gb_logit(t_ef[g, 0, a, EF_PRIOR])
        return _gb_root_score(AT, g, sig, considered)
    # pi' = softmax(logits + sigma(q^)); argmax of pi'(a) - N(a) / (1 + sum N)
    mx = -np.inf
    for j in range(n):
        a = ed[j]
        z = _gb_logit(t_ef[g, node, a, EF_PRIOR]) + sig[a]
        sig[a] = z
        if z > mx:
            mx = z
    t = 0.0
    for j in range(n):
        a = ed[j]
        e = np.exp(sig[a] - mx)
        sig[a] = e
        t += e
    best = _IM1
    bs = -np.inf
    inv = 1.0 / (1.0 + total)
    for j in range(n):
        a = ed[j]
        sc = sig[a] / t - t_visits[g, node, a] * inv
        if best < 0 or sc > bs or (sc == bs and a < best):
            best = a
            bs = sc
    return best


@kernel
def _gb_decide(AT, g, tg):
    """The finished search's action and policy target: ``tg[a]`` = softmax(logits + sigma(q^))
    over the root's legal actions (``tg: [A]``, legal entries written); the action is the root
    rule with ``considered_visit = max_b N(b)``.  Returns the action."""
    E = _unpack(AT)
    t_ni, t_visits, t_ef = E.t_ni, E.t_visits, E.t_ef
    ed = E.t_edges[g, 0]
    n = t_ni[g, 0, TN_NLEG]
    _gb_sigma(AT, g, _I0, tg)
    max_n = 0
    mx = -np.inf
    for j in range(n):
        a = ed[j]
        if t_visits[g, 0, a] > max_n:
            max_n = t_visits[g, 0, a]
        z = _gb_logit(t_ef[g, 0, a, EF_PRIOR]) + tg[a]
        tg[a] = z
        if z > mx:
            mx = z
    act = _gb_root_score(AT, g, tg, max_n)
    t = 0.0
    for j in range(n):
        a = ed[j]
        e = np.exp(tg[a] - mx)
        tg[a] = e
        t += e
    for j in range(n):
        a = ed[j]
        tg[a] = tg[a] / t
    return act
