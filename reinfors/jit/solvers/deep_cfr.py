"""Deep CFR kernels: pooled external-sampling traversals and info-state observations (template).

Like ``gametree.py`` this file is a kernel *template*: it calls the game's rules through the
names ``G_init``, ``G_step``, ``G_legal``, ``G_active``, ``G_is_terminal``, ``G_chance_pending``,
``G_chance_outcomes``, ``G_apply_chance``, ``G_info_key`` and ``G_encode``, which
``reinfors.solvers.deep_cfr`` binds per game by generating
``<cache>/generated/deepcfr_<game>_<hash>.py`` = a header of imports + this file's text.

**Traversals** (:func:`advance`).  ``T`` external-sampling traversals for one traverser run in
lock-step, each a small explicit stack.  At the traverser's decision nodes every legal action is
explored (a frame keeps the node's state, regret-matched strategy and child values); other
players' decisions sample one action from their regret-matched strategy, and the decisions of
the next player ``(traverser + 1) % P`` are recorded as strategy samples (every opponent decision
in two-player games, as reinfors 0.4.0); chance samples one outcome.  A finished traverser node
emits one advantage sample:
``target[a] = v(a) - sum_b sigma(b) v(b)`` (sampled counterfactual advantages, chip returns
along the path weighted by the game's default reward weights).

Every strategy needs the acting player's advantage-network output for the node's info state.
Outputs live in a per-collect table keyed by the info-state key: a key already answered is a
cache hit; a key asked for in the current wave joins that row (alias); a new key appends its
observation to the wave buffer of the acting player and blocks the traversal.  ``advance``
runs every ready traversal until it blocks or finishes, then returns; the caller fires one
callback per player over the wave's rows, stores the outputs and calls ``advance`` again.  So a
collect makes O(tree depth) calls of many rows each, never one call per node.

Buffers grow on demand: before any step that may write, ``advance`` checks the free room and
returns ``NEED_ROOM`` (nothing half-written; the traversal resumes where it stopped) so the
caller can enlarge the arrays.

**Exploitability** (:func:`infoset_obs`).  A depth-first walk over the full tree that encodes
one observation per info state (dense ids of the CFR game tree, ``gametree.py``'s key table).

Counters ``cnt: [N_CNT] int64``: see the ``C_*`` indices below.
"""

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import DONE, HORIZON, TERMINAL, TICKS, TRUNCATED
from reinfors.jit.solvers.gametree import key_find

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import (
        G_active,
        G_apply_chance,
        G_chance_outcomes,
        G_chance_pending,
        G_encode,
        G_info_key,
        G_init,
        G_is_terminal,
        G_legal,
        G_step,
    )
# -- end of bound names (scripts/kernel_part_imports.py) --


# advance() return codes
DONE_ALL = 0  # every traversal finished
NEED_INFER = 1  # the wave buffers hold rows to infer
NEED_ROOM = 2  # a buffer is (nearly) full: grow and call again
ERR_SIMULTANEOUS = 3  # a decision node without exactly one acting player
ERR_NO_LEGAL = 4  # a decision node without legal actions
ERR_KEY = 5  # an info-state key longer than max_key (or none)
ERR_CHANCE = 6  # a chance node without positive-probability outcomes

# traversal status
READY = 0
BLOCKED = 1
FINISHED = 2

# counters
C_ADV = 0  # advantage samples written
C_ADV_NNZ = 1  # advantage target entries written
C_STRAT = 2  # strategy samples written
C_STRAT_NNZ = 3  # strategy prob entries written
C_ENTRIES = 4  # info states in the output table
C_LOOKUPS = 5  # strategy lookups (one per decision node visited)
C_HITS = 6  # lookups answered by an earlier callback
C_WAVE = 7  # rows in the current wave (all players)
N_CNT = 8


@kernel
def _regret_match(out_row, legal, nleg, sigma):
    """Regret matching over the legal actions: positive parts normalised; with no positive
    advantage, all mass on the first highest one.  ``sigma[:nleg]`` by legal slot."""
    total = 0.0
    for s in range(nleg):
        x = out_row[legal[s]]
        v = x if x > 0.0 else 0.0
        sigma[s] = v
        total += v
    if total > 0.0:
        for s in range(nleg):
            sigma[s] /= total
        return
    best = 0
    for s in range(1, nleg):
        if out_row[legal[s]] > out_row[legal[best]]:
            best = s
    for s in range(nleg):
        sigma[s] = 0.0
    sigma[best] = 1.0


@kernel(entry=True)
def init_traversals(params, horizon, work, status, wait_entry, sp, acc, rngs, seed, base, traverser):
    """Fresh traversals: initial states in ``work: [T, S] int64``, streams
    ``rngs: [T, 1] uint64`` = ``derive(seed, base + j, traverser)``."""
    T = work.shape[0]
    for j in range(T):
        s = work[j]
        for i in range(s.shape[0]):
            s[i] = 0
        s[HORIZON] = horizon
        G_init(params, s)
        status[j] = READY
        wait_entry[j] = -1
        sp[j] = 0
        acc[j] = 0.0
        _rng.seed_row(rngs[j], seed, base + j, traverser)


@kernel(entry=True)
def advance(
    params,
    weights,
    traverser,
    iteration,
    n_players,
    max_chance,
    work,
    status,
    wait_entry,
    sp,
    acc,
    rngs,
    fr_state,
    fr_acc,
    fr_legal,
    fr_nleg,
    fr_sigma,
    fr_val,
    fr_next,
    e_table,
    e_key,
    e_len,
    e_out,
    e_ready,
    wave_obs,
    wave_entry,
    wave_count,
    adv_obs,
    adv_iter,
    adv_off,
    adv_ids,
    adv_targets,
    st_obs,
    st_iter,
    st_player,
    st_off,
    st_ids,
    st_probs,
    cnt,
):
    """Run every ready traversal until it blocks on a new info state or finishes.

    Shapes (``T`` traversals, ``S`` state words, ``D`` frame depth, ``A`` actions, ``O`` obs
    size, ``E`` table capacity, ``K`` key bytes, ``P`` players, ``W`` wave rows per player):
    ``work [T, S] int64``, ``status/wait_entry/sp [T] int64``, ``acc [T] f64``,
    ``rngs [T, 1] uint64``; frames ``fr_state [T, D, S] int64``, ``fr_acc [T, D] f64``,
    ``fr_legal [T, D, A] int64``, ``fr_nleg/fr_next [T, D] int64``, ``fr_sigma/fr_val [T, D, A] f64``;
    table ``e_table [2E'] int64`` (open addressing, -1 empty), ``e_key [E, K] uint8``,
    ``e_len [E] int64``, ``e_out [E, A] f64``, ``e_ready [E] uint8``; waves
    ``wave_obs [P, W, O] f32``, ``wave_entry [P, W] int64``, ``wave_count [P] int64``; samples
    ``adv_obs [Na, O] f32``, ``adv_iter [Na] i64``, ``adv_off [Na + 1] i64``, ``adv_ids /
    adv_targets [nnz]``, and the same for strategy samples plus ``st_player [Ns] i64``;
    ``cnt [N_CNT] int64``.

    Returns ``(code, detail)``: ``DONE_ALL``, ``NEED_INFER``, ``NEED_ROOM`` or an ``ERR_*``.
    """
    T = work.shape[0]
    D = fr_state.shape[1]
    A = fr_legal.shape[2]
    S = work.shape[1]
    width = max(A, 1)
    mask = np.zeros(width, np.uint8)
    legal = np.zeros(width, np.int64)
    sigma = np.zeros(width, np.float64)
    agents = np.zeros(max(n_players, 1), np.int64)
    actions = np.zeros(max(n_players, 1), np.int64)
    amounts = np.zeros((max(n_players, 1), weights.shape[0]), np.float64)
    probs = np.zeros(max(max_chance, 1), np.float64)
    key = np.zeros(e_key.shape[1], np.uint8)
    n_adv_cap = adv_obs.shape[0]
    n_st_cap = st_obs.shape[0]
    n_e_cap = e_key.shape[0]
    W = wave_obs.shape[1]
    for j in range(T):
        while status[j] == READY:
            # room for one node step: a pop chain (sp + 1 advantage samples), one strategy
            # sample, one table entry, one wave row, one frame
            if (
                cnt[C_ADV] + sp[j] + 1 > n_adv_cap
                or cnt[C_ADV_NNZ] + (sp[j] + 1) * A > adv_ids.shape[0]
                or cnt[C_STRAT] + 1 > n_st_cap
                or cnt[C_STRAT_NNZ] + A > st_ids.shape[0]
                or cnt[C_ENTRIES] + 1 > n_e_cap
                or 2 * (cnt[C_ENTRIES] + 1) > e_table.shape[0]
                or cnt[C_WAVE] + 1 > W
                or sp[j] + 1 > D
            ):
                return NEED_ROOM, j
            s = work[j]
            # chance resolves in place with the traversal's own stream
            while s[DONE] == 0 and G_chance_pending(params, s):
                n = G_chance_outcomes(params, s, probs)
                any_pos = False
                for o in range(n):
                    if probs[o] > 0.0:
                        any_pos = True
                if not any_pos:
                    return ERR_CHANCE, j
                o = _rng.sample_chance(rngs[j], probs, n)
                G_apply_chance(params, s, o)
            if s[DONE] != 0 or G_is_terminal(params, s):
                # a leaf: hand its value up through every finished traverser frame
                val = acc[j]
                while True:
                    if sp[j] == 0:
                        status[j] = FINISHED
                        break
                    d = sp[j] - 1
                    nl = fr_nleg[j, d]
                    fr_val[j, d, fr_next[j, d]] = val
                    fr_next[j, d] += 1
                    if fr_next[j, d] < nl:
                        for i in range(S):
                            s[i] = fr_state[j, d, i]
                        actions[traverser] = fr_legal[j, d, fr_next[j, d]]
                        acc[j] = fr_acc[j, d] + _step_with(params, s, actions, amounts, weights, traverser)
                        break
                    base = 0.0
                    for q in range(nl):
                        base += fr_sigma[j, d, q] * fr_val[j, d, q]
                    r = cnt[C_ADV]
                    G_encode(params, fr_state[j, d], traverser, adv_obs[r])
                    adv_iter[r] = iteration
                    z = cnt[C_ADV_NNZ]
                    adv_off[r] = z
                    for q in range(nl):
                        adv_ids[z + q] = fr_legal[j, d, q]
                        adv_targets[z + q] = fr_val[j, d, q] - base
                    cnt[C_ADV] = r + 1
                    cnt[C_ADV_NNZ] = z + nl
                    adv_off[r + 1] = z + nl
                    sp[j] = d
                    val = base
                continue
            na = G_active(params, s, agents)
            if na != 1:
                return ERR_SIMULTANEOUS, j
            ag = agents[0]
            for a in range(A):
                mask[a] = 0
            G_legal(params, s, ag, mask)
            nl = 0
            for a in range(A):
                if mask[a] != 0:
                    legal[nl] = a
                    nl += 1
            if nl == 0:
                return ERR_NO_LEGAL, j
            e = wait_entry[j]
            if e >= 0:
                wait_entry[j] = -1
            else:
                klen = G_info_key(params, s, ag, key)
                if klen < 0 or klen > key.shape[0]:
                    return ERR_KEY, j
                cnt[C_LOOKUPS] += 1
                slot = key_find(e_table, e_key, e_len, key, klen)
                e = e_table[slot]
                if e >= 0:
                    if e_ready[e] != 0:
                        cnt[C_HITS] += 1
                    else:
                        status[j] = BLOCKED  # asked for in this wave already: share its row
                        wait_entry[j] = e
                        continue
                else:
                    e = cnt[C_ENTRIES]
                    cnt[C_ENTRIES] = e + 1
                    e_table[slot] = e
                    for k in range(klen):
                        e_key[e, k] = key[k]
                    e_len[e] = klen
                    e_ready[e] = 0
                    w = wave_count[ag]
                    G_encode(params, s, ag, wave_obs[ag, w])
                    wave_entry[ag, w] = e
                    wave_count[ag] = w + 1
                    cnt[C_WAVE] += 1
                    status[j] = BLOCKED
                    wait_entry[j] = e
                    continue
            _regret_match(e_out[e], legal, nl, sigma)
            if ag == traverser:
                d = sp[j]
                for i in range(S):
                    fr_state[j, d, i] = s[i]
                fr_acc[j, d] = acc[j]
                fr_nleg[j, d] = nl
                fr_next[j, d] = 0
                for q in range(nl):
                    fr_legal[j, d, q] = legal[q]
                    fr_sigma[j, d, q] = sigma[q]
                    fr_val[j, d, q] = 0.0
                sp[j] = d + 1
                actions[ag] = legal[0]
                acc[j] += _step_with(params, s, actions, amounts, weights, traverser)
            else:
                if ag == (traverser + 1) % n_players:
                    _record_strategy(
                        params, s, ag, iteration, legal, sigma, nl,
                        st_obs, st_iter, st_player, st_off, st_ids, st_probs, cnt,
                    )  # fmt: skip
                q = _rng.categorical(rngs[j], sigma, nl)
                actions[ag] = legal[q]
                acc[j] += _step_with(params, s, actions, amounts, weights, traverser)
    if cnt[C_WAVE] > 0:
        return NEED_INFER, 0
    for j in range(T):
        if status[j] != FINISHED:
            return NEED_INFER, 0
    return DONE_ALL, 0


@kernel
def _record_strategy(
    params, s, ag, iteration, legal, sigma, nl, st_obs, st_iter, st_player, st_off, st_ids, st_probs, cnt
):
    """Append one strategy sample: ``ag``'s observation of ``s``, its legal ids and regret-matched
    probabilities ``sigma[:nl]``, tagged with ``iteration`` (CSR rows of the ``st_*`` arrays)."""
    r = cnt[C_STRAT]
    G_encode(params, s, ag, st_obs[r])
    st_iter[r] = iteration
    st_player[r] = ag
    z = cnt[C_STRAT_NNZ]
    st_off[r] = z
    for q in range(nl):
        st_ids[z + q] = legal[q]
        st_probs[z + q] = sigma[q]
    cnt[C_STRAT] = r + 1
    cnt[C_STRAT_NNZ] = z + nl
    st_off[r + 1] = z + nl


@kernel
def _step_with(params, state, actions, amounts, weights, traverser):
    """One tick with the joint action ``actions`` (the contract's step semantics: TICKS, the
    game's step, DONE); returns the traverser's weighted reward of the tick."""
    for p in range(amounts.shape[0]):
        for k in range(amounts.shape[1]):
            amounts[p, k] = 0.0
    state[TICKS] += 1
    G_step(params, state, actions, amounts)
    if G_is_terminal(params, state):
        state[DONE] = TERMINAL
    elif state[HORIZON] > 0 and state[TICKS] >= state[HORIZON]:
        state[DONE] = TRUNCATED
    r = 0.0
    for k in range(amounts.shape[1]):
        r += amounts[traverser, k] * weights[k]
    return r


@kernel(entry=True)
def infoset_obs(
    params, horizon, state_size, n_players, n_actions, max_chance, max_depth, table, key_data, key_len, obs, seen,
    n_keys,
):  # fmt: skip
    """Encode one observation per info state of the CFR game tree into ``obs: [I, O] float32``.

    Depth-first over every node from the initial state (``max_depth`` bounds the path);
    ``table / key_data / key_len`` are the tree's key table (``gametree.py``) and
    ``seen: [I] uint8`` marks the info states written.  Returns the number of info states
    written, or -1 when a key is missing from the table (or the tree is deeper than max_depth).
    """
    width = max(n_actions, max_chance, 1)
    st = np.zeros((max_depth + 1, state_size), np.int64)
    fr_out = np.zeros((max_depth + 1, width), np.int64)
    fr_cnt = np.zeros(max_depth + 1, np.int64)
    fr_next = np.zeros(max_depth + 1, np.int64)
    fr_agent = np.zeros(max_depth + 1, np.int64)
    fr_chance = np.zeros(max_depth + 1, np.uint8)
    mask = np.zeros(max(n_actions, 1), np.uint8)
    probs = np.zeros(max(max_chance, 1), np.float64)
    agents = np.zeros(max(n_players, 1), np.int64)
    actions = np.zeros(max(n_players, 1), np.int64)
    amounts = np.zeros((max(n_players, 1), max(n_keys, 1)), np.float64)
    no_weights = np.zeros(max(n_keys, 1), np.float64)
    key = np.zeros(key_data.shape[1] + 1, np.uint8)
    written = 0
    s0 = st[0]
    for i in range(state_size):
        s0[i] = 0
    s0[HORIZON] = horizon
    G_init(params, s0)
    d = 0
    fresh = True
    while d >= 0:
        s = st[d]
        if fresh:
            fresh = False
            fr_next[d] = 0
            fr_cnt[d] = 0
            if s[DONE] != 0 or G_is_terminal(params, s):
                pass
            elif G_chance_pending(params, s):
                n = G_chance_outcomes(params, s, probs)
                c = 0
                for o in range(n):
                    if probs[o] > 0.0:
                        fr_out[d, c] = o
                        c += 1
                fr_cnt[d] = c
                fr_chance[d] = 1
            else:
                G_active(params, s, agents)
                ag = agents[0]
                for a in range(n_actions):
                    mask[a] = 0
                G_legal(params, s, ag, mask)
                c = 0
                for a in range(n_actions):
                    if mask[a] != 0:
                        fr_out[d, c] = a
                        c += 1
                fr_cnt[d] = c
                fr_chance[d] = 0
                fr_agent[d] = ag
                klen = G_info_key(params, s, ag, key)
                if klen < 0 or klen > key_data.shape[1]:
                    return -1
                i = table[key_find(table, key_data, key_len, key, klen)]
                if i < 0:
                    return -1
                if seen[i] == 0:
                    seen[i] = 1
                    G_encode(params, s, ag, obs[i])
                    written += 1
        if fr_next[d] >= fr_cnt[d]:
            d -= 1
            continue
        if d + 1 > max_depth:
            return -1
        c = fr_out[d, fr_next[d]]
        fr_next[d] += 1
        t = st[d + 1]
        for i in range(state_size):
            t[i] = s[i]
        if fr_chance[d] != 0:
            G_apply_chance(params, t, c)
        else:
            actions[fr_agent[d]] = c
            _step_with(params, t, actions, amounts, no_weights, 0)
        d += 1
        fresh = True
    return written


@kernel(entry=True)
def policy_rows(out, is_actions, is_nact, policy):
    """The tabular policy a ``policy_infer`` output describes, into ``policy: [I, A] float64``.

    ``out: [I, A] float64`` (rows by info-state id, columns by action id); ``is_actions: [I, A]
    int32`` / ``is_nact: [I] int32`` the tree's legal slots.  Slot ``s`` gets
    ``max(out[i, is_actions[i, s]], 0)`` (NaN counts as 0) normalised over the legal slots;
    uniform when they sum to 0 (an infinite entry gives NaN, as the original).
    """
    for i in range(policy.shape[0]):
        n = is_nact[i]
        for s in range(policy.shape[1]):
            policy[i, s] = 0.0
        total = 0.0
        for s in range(n):
            x = out[i, is_actions[i, s]]
            v = x if x > 0.0 else 0.0
            policy[i, s] = v
            total += v
        if total > 0.0:
            for s in range(n):
                policy[i, s] /= total
        else:
            for s in range(n):
                policy[i, s] = 1.0 / n
