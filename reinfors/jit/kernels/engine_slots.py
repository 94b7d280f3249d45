
# ---- body: reinfors/jit/kernels/engine_slots.py --------------------------------------------------
# Slot phases, run by the worker threads inside ``work`` (nogil): observe, request rows, resume
# with predictions, act and step (``_finish_tick``), episode ends and window tails, parking at the
# window target; plus the scheduler's slot kernels (start, unpark, ready queue, progress wait).

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import atomics as _atomics
from reinfors.jit import rings as _rings
from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    C_ABORT,
    C_EPISODES,
    C_ERROR,
    C_FULL,
    C_INFLIGHT,
    C_PARKED,
    C_STOP,
    C_TARGET,
    C_WAKE,
    CC_PIN,
    CFG_A,
    CFG_COHORT,
    CFG_COHORT_CLOSE,
    CFG_COHORTS,
    CFG_G,
    CFG_LEARNER,
    CFG_N,
    CFG_O,
    CFG_POLICY,
    CFG_ROUTES,
    CFG_SB,
    CTL_BASE,
    ERR_REC_OVERFLOW,
    F_EPSILON,
    F_OW,
    LEARNER_AZ,
    LEARNER_DQN,
    LEARNER_PPO,
    MSG_COMPLETED,
    MSG_W,
    POLICY_EGQ,
    RF_LOGP,
    RF_RAW,
    RF_VALUE,
    RM_ACTION,
    SB_SEEDED,
    SI_EPLEN,
    SI_HEAD,
    SI_LEVEL,
    SI_NACT,
    SI_NTAIL,
    SI_OBSERVED,
    SI_ROWS,
    SI_SEARCH,
    SI_STATUS,
    SI_TAILKIND,
    SI_VIEW,
    SI_WINREC,
    ST_EMIT,
    ST_PARK,
    ST_RESUME,
    TL_DECISIONS,
    TL_REQUESTED,
    TL_TAIL,
)
from reinfors.jit.pointers import borrowed as _borrowed
from reinfors.jit.policies import modelfree as _mf

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import CACHE_ON, FAM_MODELFREE, LEGAL_RANKED, SB_ON, SIMUL, G_active, G_encode
    from reinfors.jit.kernels.engine_cache import _pin_view, _request_cached
    from reinfors.jit.kernels.engine_records import (
        _B_FALSE,
        _ONE,
        _ST_TAIL,
        _ST_WAIT,
        _ZERO,
        RK_LOCAL,
        TAIL_TRUNC,
        TAIL_WINDOW,
        W_FULL,
        W_IDLE,
        W_STOP,
        _dqn_flush,
        _episode_reset,
        _new_decision_record,
        _ppo_flush,
        _sb_observe,
        _unpack,
    )
    from reinfors.jit.kernels.engine_routing import _close_cohort, _place_run
    from reinfors.jit.kernels.game_kernels import active_agents, apply_step, legal_mask, weigh
    from reinfors.jit.kernels.search_driver import _search_absorb, _search_flush, _search_step, _tail_value
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel(inline="always")
def _observe(E, g):
    """Observation phase of the slot's current level: acting agents, their rows and masks."""
    params, states, sinfo, act_agents, root, legal = E.params, E.states, E.sinfo, E.act_agents, E.root, E.legal
    st = states[g]
    na = active_agents(params, st, act_agents[g])
    sinfo[g, SI_NACT] = na
    rq = E.rq
    for j in range(na):
        a = act_agents[g, j]
        G_encode(params, st, a, root[g, j])
        legal_mask(params, st, a, legal[g, j])
        rq[g, j, 0] = -1 - j
        rq[g, j, 1] = a
    sinfo[g, SI_OBSERVED] = 1


@kernel
def _request(AT, g, n_rows, status):
    """Request predictions for the slot's ``n_rows`` rows described by ``rq[g, :n_rows]`` (source
    node or root row, player); the slot then waits (``status``).  Without the cache every row
    goes to an arena; with it, rows are looked up first (``_request_cached``).  Once the last
    message of a request is posted the slot may already be resumed elsewhere: nothing of it is
    touched afterwards."""
    E = _unpack(AT)
    cfg, sinfo, tele, rq = E.cfg, E.sinfo, E.tele, E.rq
    sinfo[g, SI_STATUS] = status
    sinfo[g, SI_ROWS] = n_rows
    tele[g, TL_REQUESTED] += n_rows
    if CACHE_ON:  # a constant of the generated module: without the cache this never compiles
        _request_cached(AT, g, n_rows)
        return
    E.pending[g] = n_rows  # rows outstanding (the scheduler counts them down)
    N = cfg[CFG_N]
    msg = E.iscr[g, 2 * N : 2 * N + MSG_W]  # per-slot scratch: no allocation on the hot path
    # The slot's cohort has its own arena chain per route: internal route = route * K + cohort.
    K = cfg[CFG_COHORTS]
    c = g // cfg[CFG_COHORT]
    if cfg[CFG_ROUTES] > K:
        for j in range(n_rows):  # one span per row: each goes to its player's route
            if not _place_run(AT, g, np.int64(j), _ONE, rq[g, j, 1] * K + c, _B_FALSE, msg):
                return
    else:
        _place_run(AT, g, _ZERO, n_rows, c, _B_FALSE, msg)


@kernel(inline="always")
def _park(E, g):
    """The slot reached the window target: post its Completed message (records it emitted in
    this window) and park."""
    sinfo, ctl = E.sinfo, E.ctl
    msg_seq, msg_data, msg_pos = E.msg_seq, E.msg_data, E.msg_pos
    sinfo[g, SI_STATUS] = ST_PARK
    msg = E.iscr[g, 2 * E.cfg[CFG_N] : 2 * E.cfg[CFG_N] + MSG_W]
    msg[0] = MSG_COMPLETED
    msg[1] = g
    msg[2] = sinfo[g, SI_LEVEL]
    msg[3] = sinfo[g, SI_WINREC]
    sinfo[g, SI_WINREC] = 0
    while not _rings.push(msg_seq, msg_data, msg_pos, msg):
        pass
    _atomics.fetch_add(ctl, C_PARKED, 1)


@kernel(inline="always")
def _request_tail(AT, E, g, kind):
    """Request critic rows for every learning player with an open segment (player order; dead
    snakes included) — PPO, and the search learners on simultaneous games.  A search learner on
    a sequential game (a truncated chess or backgammon episode) asks only for the player to move
    at the final state, as reinfors 0.4.0 (probed on chess: one tail row, the other player's
    returns seeded with 0).  Returns False when there is none (nothing to wait for)."""
    params, cfg, learn, states, sinfo, act_agents, root, tele = E.params, E.cfg, E.learn, E.states, E.sinfo, E.act_agents, E.root, E.tele
    traj_cnt = E.traj_cnt
    n = _ZERO  # not a literal: _request compiles once
    rq = E.rq
    mover = -1
    if not FAM_MODELFREE and not SIMUL:
        if G_active(params, states[g], act_agents[g]) > 0:
            mover = act_agents[g, 0]
        else:
            return False
    for p in range(cfg[CFG_N]):
        if learn[p] != 0 and traj_cnt[g, p] > 0 and (mover < 0 or p == mover):
            act_agents[g, n] = p
            G_encode(params, states[g], p, root[g, n])
            rq[g, n, 0] = -1 - n
            rq[g, n, 1] = p
            n += 1
    if n == 0:
        return False
    sinfo[g, SI_NTAIL] = n
    sinfo[g, SI_TAILKIND] = kind
    tele[g, TL_TAIL] += n
    _request(AT, g, n, _ST_TAIL)
    return True


@kernel(inline="always")
def _log_episode(E, g):
    """Append (slot, length, end level, returns..., seeded) to the episode log."""
    cfg, ctl, sinfo, ep_ret, episodes = E.cfg, E.ctl, E.sinfo, E.ep_ret, E.episodes
    ei = _atomics.fetch_add(ctl, C_EPISODES, 1)
    if ei < episodes.shape[0]:
        episodes[ei, 0] = g
        episodes[ei, 1] = sinfo[g, SI_EPLEN]
        episodes[ei, 2] = sinfo[g, SI_LEVEL]
        for p in range(cfg[CFG_N]):
            episodes[ei, 3 + p] = ep_ret[g, p]
        episodes[ei, 3 + cfg[CFG_N]] = E.sb_meta[g, SB_SEEDED]
    else:
        _atomics.cas(ctl, C_ERROR, 0, ERR_REC_OVERFLOW)


@kernel(inline="always")
def _resume(AT, E, g):
    """Predictions arrived: choose every acting agent's action, step, credit rewards, and handle
    the episode end (DQN flush / PPO emission or truncation tail)."""
    cfg, fcfg, learn = E.cfg, E.fcfg, E.learn
    srng, sinfo, act_agents, root, legal, preds = E.srng, E.sinfo, E.act_agents, E.root, E.legal, E.preds
    r_meta, r_f, r_obs, r_legal = E.r_meta, E.r_f, E.r_obs, E.r_legal
    last_act = E.last_act
    N = cfg[CFG_N]
    A = cfg[CFG_A]
    dqn = cfg[CFG_LEARNER] == LEARNER_DQN
    na = sinfo[g, SI_NACT]
    iscr, fscr = E.iscr, E.fscr
    actions = iscr[g, 0:N]
    latest = iscr[g, N : 2 * N]
    scratch = fscr[g, 0:A]
    for p in range(N):
        actions[p] = 0
        latest[p] = -1
    for p in range(N):
        last_act[g, p] = 0
    for j in range(na):
        a = act_agents[g, j]
        last_act[g, a] = 1
        logp = 0.0
        if LEGAL_RANKED and not SIMUL:  # choose over the legal list in the game's order
            order = E.t_edges[g, 0]
            n = _mf.ranked_order(legal[g, j], A, order)
            if cfg[CFG_POLICY] == POLICY_EGQ:
                head = sinfo[g, SI_HEAD]
                act = _mf.epsilon_greedy_in_order(srng[g], preds[g, j], head, order, n, A, fcfg[F_EPSILON])
            else:
                act, logp = _mf.sample_softmax_in_order(srng[g], preds[g, j], order, n)
        elif cfg[CFG_POLICY] == POLICY_EGQ:
            act = _mf.epsilon_greedy(srng[g], preds[g, j], sinfo[g, SI_HEAD], legal[g, j], A, fcfg[F_EPSILON])
        else:
            act, logp = _mf.sample_softmax(srng[g], preds[g, j], legal[g, j], A, scratch)
        actions[a] = act
        if learn[a] != 0:
            idx = _new_decision_record(E, g, a)
            if idx >= 0:
                r_meta[idx, RM_ACTION] = act
                r_f[idx, RF_LOGP] = logp
                r_f[idx, RF_VALUE] = preds[g, j, A] if not dqn else 0.0
                for i in range(cfg[CFG_O]):
                    r_obs[idx, i] = root[g, j, i]
                for i in range(A):
                    r_legal[idx, i] = legal[g, j, i]
                latest[a] = idx
    _finish_tick(AT, g, na)


@kernel
def _finish_tick(AT, g, na):
    """Step the slot's game with the joint action ``iscr[g, :N]`` chosen by ``na`` agents, credit
    rewards to each player's latest record, and handle the episode end (learner flush, or a
    truncation tail request)."""
    E = _unpack(AT)
    params, cfg, fcfg, weights = E.params, E.cfg, E.fcfg, E.weights
    states, srng, sinfo, r_f, r_next_obs = E.states, E.srng, E.sinfo, E.r_f, E.r_next_obs
    traj_idx, traj_cnt, tele, ep_ret = E.traj_idx, E.traj_cnt, E.tele, E.ep_ret
    N = cfg[CFG_N]
    A = cfg[CFG_A]
    learner = cfg[CFG_LEARNER]
    dqn = learner == LEARNER_DQN
    iscr, fscr = E.iscr, E.fscr
    actions = iscr[g, 0:N]
    latest = iscr[g, N : 2 * N]
    tele[g, TL_DECISIONS] += na
    amounts = E.amounts[g]
    rewards = fscr[g, A : A + N]
    probs = fscr[g, A + N :]
    apply_step(params, states[g], actions, amounts, srng[g], probs)
    weigh(amounts, weights, rewards)
    if dqn:
        # post[p]: the mover's observation right after its own action (the tail next_obs).
        for p in range(N):
            if latest[p] >= 0:
                G_encode(params, states[g], p, r_next_obs[latest[p]])
    for p in range(N):
        ep_ret[g, p] += rewards[p]
        c = traj_cnt[g, p]
        if c > 0:
            r_f[traj_idx[g, p, c - 1], RF_RAW] += rewards[p]
    sinfo[g, SI_EPLEN] += 1
    done = states[g, 1]
    if SB_ON:
        if done == 0 and cfg[CFG_SB] > 0:
            _sb_observe(E, g)
    sinfo[g, SI_STATUS] = ST_EMIT
    sinfo[g, SI_OBSERVED] = 0
    if done == 0:
        sinfo[g, SI_LEVEL] += 1
        return
    terminal = np.int64(1) if done == 1 else np.int64(0)
    level = sinfo[g, SI_LEVEL]
    # FAM_MODELFREE is a constant of the generated module (the kernel family): the model-free
    # learners' flushes never compile into the search families, nor the search flush into it.
    if FAM_MODELFREE:
        if dqn:
            _dqn_flush(AT, g, terminal)
        elif terminal != 0:  # Ppo
            for p in range(N):
                if traj_cnt[g, p] > 0:
                    _ppo_flush(E, g, p, 0.0, level)
        elif _request_tail(AT, E, g, TAIL_TRUNC):
            return  # the episode ends when the tail rows arrive (_resume_tail)
    else:
        # AlphaZero / TreeStrap: returns seeded with 0 at a terminal state; a truncated episode
        # bootstraps from critic tail rows (TreeStrap only when it blends outcomes).
        if terminal == 0 and (learner == LEARNER_AZ or fcfg[F_OW] > 0.0) and _request_tail(AT, E, g, TAIL_TRUNC):
            return
        boots = fscr[g, 0:N]
        for p in range(N):
            boots[p] = 0.0
        _search_flush(AT, g, boots)
    _log_episode(E, g)
    _episode_reset(E, g)
    sinfo[g, SI_LEVEL] = level + 1


@kernel(inline="always")
def _resume_tail(AT, E, g):
    """Critic tail rows arrived: emit the bootstrapped PPO segments; then end the truncated
    episode, or park at the window target."""
    cfg, ctl, sinfo, act_agents, preds = E.cfg, E.ctl, E.sinfo, E.act_agents, E.preds
    A = cfg[CFG_A]
    kind = sinfo[g, SI_TAILKIND]
    level = sinfo[g, SI_LEVEL]
    if kind == TAIL_WINDOW:
        level = _atomics.load_acquire(ctl, C_TARGET) - 1
    if FAM_MODELFREE:  # Ppo (DQN requests no tails)
        for j in range(sinfo[g, SI_NTAIL]):
            _ppo_flush(E, g, act_agents[g, j], preds[g, j, A], level)
    else:
        boots = E.fscr[g, 0 : cfg[CFG_N]]
        for p in range(cfg[CFG_N]):
            boots[p] = 0.0
        for j in range(sinfo[g, SI_NTAIL]):
            boots[act_agents[g, j]] = _tail_value(AT, g, j)
        _search_flush(AT, g, boots)
    sinfo[g, SI_NTAIL] = 0
    sinfo[g, SI_TAILKIND] = 0
    if kind == TAIL_TRUNC:
        _log_episode(E, g)
        _episode_reset(E, g)
        sinfo[g, SI_LEVEL] = level + 1
        sinfo[g, SI_STATUS] = ST_EMIT
        sinfo[g, SI_OBSERVED] = 0
    else:
        _park(E, g)


@kernel(inline="always")
def _resolve_local(E, g):
    """Rows identical to an earlier row of the same request take that row's prediction."""
    preds, rkeys = E.preds, E.rkeys
    for j in range(E.sinfo[g, SI_ROWS]):
        if rkeys[g, j, 2] == RK_LOCAL:
            i = np.int64(rkeys[g, j, 3])
            for w in range(preds.shape[2]):
                preds[g, j, w] = preds[g, i, w]


@kernel(inline="always")
def _advance(AT, E, g):
    """Run slot ``g`` until it waits for inference or parks."""
    ctl, sinfo = E.ctl, E.sinfo
    while True:
        st = sinfo[g, SI_STATUS]
        if st == ST_RESUME:
            if CACHE_ON:
                _resolve_local(E, g)
            if sinfo[g, SI_TAILKIND] != 0:
                _resume_tail(AT, E, g)
            elif FAM_MODELFREE:
                _resume(AT, E, g)
            else:
                _search_absorb(AT, g)
            continue
        if st != ST_EMIT:
            return
        # Park at the window target — or, when the window is being aborted, at this decision
        # boundary (never mid-search: a parked slot's state is always a snapshot-able one).
        if sinfo[g, SI_LEVEL] >= _atomics.load_acquire(ctl, C_TARGET) or (
            _atomics.load_acquire(ctl, C_ABORT) != 0 and sinfo[g, SI_SEARCH] == 0
        ):
            if FAM_MODELFREE:
                if E.cfg[CFG_LEARNER] == LEARNER_PPO and _request_tail(AT, E, g, TAIL_WINDOW):
                    return
            _park(E, g)
            return
        if sinfo[g, SI_OBSERVED] == 0:
            _observe(E, g)
        if FAM_MODELFREE:
            _request(AT, g, sinfo[g, SI_NACT], _ST_WAIT)
            return
        na = _search_step(AT, g)
        if na < 0:
            return  # rows requested (or a tail): wait for the fire
        if na > 0:  # decided: step the tick here, so no search kernel's compile unit holds it
            _finish_tick(AT, g, na)


@kernel(entry=True)
def work(A, yield_on_full, spin):
    """Worker loop (nogil): advance ready slots until the ring stays empty for ``spin`` polls
    (``W_IDLE``), an arena closed full while ``yield_on_full`` (``W_FULL``), or stop was requested
    (``W_STOP``).  The scheduler thread passes ``spin=0``: nobody else refills the ring while it
    works, and it has batches to fire."""
    A = _borrowed(A)  # passed on to every slot's kernels: no reference counting per call
    E = _unpack(A)
    ctl = E.ctl
    rdy_seq, rdy_data, rdy_pos = E.rdy_seq, E.rdy_data, E.rdy_pos
    # C_INFLIGHT counts workers between taking a slot and going idle, held across consecutive
    # slots (not two shared-line atomics per slot); with the ring it tells the scheduler whether
    # work is still in flight.
    held = False
    while True:
        if _atomics.load_acquire(ctl, C_STOP) != 0:
            if held:
                _atomics.fetch_sub(ctl, C_INFLIGHT, 1)
            return W_STOP
        if not held:
            _atomics.fetch_add(ctl, C_INFLIGHT, 1)
            held = True
        g = _rings.pop1(rdy_seq, rdy_data, rdy_pos)
        if g < 0:
            _atomics.fetch_sub(ctl, C_INFLIGHT, 1)
            held = False
            spins = 0
            while spins < spin and _rings.size(rdy_pos) == 0 and _atomics.load_acquire(ctl, C_STOP) == 0:
                spins += 1
            if _rings.size(rdy_pos) == 0:
                return W_IDLE
            continue
        v = _ZERO
        if CACHE_ON:
            v = _pin_view(E.cctl)
            E.sinfo[g, SI_VIEW] = v
        _advance(A, E, g)  # one call site: it is inlined
        if CACHE_ON:
            _atomics.fetch_sub(E.cctl, CC_PIN + 8 * v, 1)
        else:
            # The slot blocked (its rows are placed and committed) or parked: it leaves its
            # cohort's active count; the last one out closes the cohort's open arenas.
            cfg = E.cfg
            if cfg[CFG_COHORT_CLOSE] != 0:
                c = g // cfg[CFG_COHORT]
                if _atomics.fetch_sub(ctl, CTL_BASE + 8 * (cfg[CFG_ROUTES] + c), 1) == 1:
                    _close_cohort(A, c)
        if _atomics.load_acquire(ctl, C_ERROR) != 0:
            _atomics.fetch_sub(ctl, C_INFLIGHT, 1)
            return W_STOP
        if yield_on_full and (_atomics.load_acquire(ctl, C_FULL) != 0 or _atomics.load_acquire(ctl, C_WAKE) != 0):
            _atomics.fetch_sub(ctl, C_INFLIGHT, 1)
            return W_FULL


@kernel(entry=True)
def push_ready(A, slots, n):
    """Queue ``slots[:n]`` on the ready ring (the scheduler is its only producer)."""
    E = _unpack(A)
    rdy_seq, rdy_data, rdy_pos = E.rdy_seq, E.rdy_data, E.rdy_pos
    cfg, ctl = E.cfg, E.ctl
    counted = cfg[CFG_COHORT_CLOSE] != 0
    for t in range(n):
        if counted:  # counted active before any worker can take it (and leave the count)
            _atomics.fetch_add(ctl, CTL_BASE + 8 * (cfg[CFG_ROUTES] + slots[t] // cfg[CFG_COHORT]), 1)
        while not _rings.push1(rdy_seq, rdy_data, rdy_pos, slots[t]):
            pass


@kernel(entry=True)
def unpark_all(A):
    """Every parked slot becomes EMIT again (the scheduler then queues it); returns how many."""
    E = _unpack(A)
    cfg, ctl, sinfo = E.cfg, E.ctl, E.sinfo
    n = 0
    for g in range(cfg[CFG_G]):
        if sinfo[g, SI_STATUS] == ST_PARK:
            sinfo[g, SI_STATUS] = ST_EMIT
            n += 1
    _atomics.store_release(ctl, C_PARKED, 0)
    return n


_SB_STREAM = np.uint64(0x53544152)  # "STAR": stream coordinate of the start buffer


@kernel(entry=True)
def start_slots(A, seed):
    """Seed every slot's RNG from (seed, slot) and start its first episode."""
    E = _unpack(A)
    cfg, srng, sinfo = E.cfg, E.srng, E.sinfo
    for g in range(cfg[CFG_G]):
        # The original's slot stream: SplitMix64 state = seed XOR (slot * golden ratio).
        srng[g, 0] = np.uint64(seed) ^ (np.uint64(g) * np.uint64(0x9E3779B97F4A7C15))
        _rng.seed_row(E.sb_rng[g], seed, g, _SB_STREAM)  # the start buffer's stream (unused when off)
        for c in range(sinfo.shape[1]):
            sinfo[g, c] = 0
        _episode_reset(E, g)
        sinfo[g, SI_STATUS] = ST_EMIT


@kernel(entry=True)
def wait_progress(A, spins):
    """Scheduler wait without the GIL: poll until an arena closed full or a pipelined callback
    returned (1), a slot became ready (2) or nothing is in flight any more (3); 0 after ``spins``
    polls."""
    E = _unpack(A)
    ctl = E.ctl
    rdy_pos = E.rdy_pos
    for _ in range(spins):
        if _atomics.load_acquire(ctl, C_FULL) != 0 or _atomics.load_acquire(ctl, C_WAKE) != 0:
            return 1
        if _rings.size(rdy_pos) != 0:
            return 2
        if _atomics.load_acquire(ctl, C_INFLIGHT) == 0:
            return 3
    return 0

