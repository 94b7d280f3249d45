
# ---- body: reinfors/jit/kernels/engine_records.py---------------------------------------------------
# The collection runtime's kernels for one game (appended to the game kernels above, so the
# game's rules are bound statically).  Worker threads run ``work`` (nogil): it claims ready
# slots from the lock-free ready ring and advances each one until it blocks on inference or
# parks at the window target.  The scheduler drains metadata messages (``drain``), seals and
# fires arenas, and routes predictions back by position (``route``), all in single njit calls.
#
# The engine kernels are four files concatenated in this order: engine_records.py (this one:
# imports, the ``E`` layout, the record pool and the learners' flushes), engine_slots.py (slot
# phases and the worker loop), engine_routing.py (arenas, fires, routing) and, for the
# ``+cache`` families only, engine_cache.py (the inference cache).
#
# Engine state is the address table ``E`` of preallocated arrays (reinfors/jit/engine_schema.py
# names them; reinfors/_runtime/runtime.py allocates them); the column constants of the arrays
# live in reinfors/jit/engine_codes.py.

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import atomics as _atomics
from reinfors.jit import engine_schema as _engine_schema
from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    C_EMITTED,
    C_ERROR,
    C_REC,
    C_REC_CAP,
    CFG_A,
    CFG_CHANCE,
    CFG_HEADS,
    CFG_HORIZON,
    CFG_N,
    CFG_NSTEP,
    CFG_O,
    CFG_POLICY,
    CFG_SB,
    ERR_REC_OVERFLOW,
    ERR_TRAJ_OVERFLOW,
    F_BOOTSTRAP_P,
    F_GAMMA,
    F_LAM,
    F_PFRESH,
    POLICY_EGQ,
    POLICY_SELEXP,
    RF_ADV,
    RF_DISCOUNT,
    RF_RAW,
    RF_RET,
    RF_REWARD,
    RF_VALUE,
    RF_WEIGHT,
    RM_FLAGS,
    RM_GEN,
    RM_LEVEL,
    RM_NTGT,
    RM_PLAYER,
    RM_SEQ,
    RM_SLOT,
    SB_SEEDED,
    SB_SEEN,
    SB_STORED,
    SI_EPLEN,
    SI_GEN,
    SI_HEAD,
    SI_LEVEL,
    SI_SEQ,
    SI_WINREC,
    ST_TAIL,
    ST_WAIT,
)
from reinfors.jit.pointers import table_unpacker as _table_unpacker

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import LEGAL_RANKED, SB_ON, G_active, G_legal
    from reinfors.jit.kernels.game_kernels import reset
# -- end of bound names (scripts/kernel_part_imports.py) --


W_IDLE = 0  # work(): the ready ring stayed empty
W_FULL = 1  # work(): an arena closed full (the scheduler should fire it)
W_STOP = 2  # work(): stop requested

# Codes passed as call arguments are numpy scalars: Numba types a global Python int as a
# distinct Literal per value, which would compile one copy of the callee per code.
TAIL_TRUNC = np.int64(1)
TAIL_WINDOW = np.int64(2)
_ST_WAIT = np.int64(ST_WAIT)
_ZERO = np.int64(0)
_ONE = np.int64(1)
_ST_TAIL = np.int64(ST_TAIL)
_B_TRUE = np.bool_(True)
_B_FALSE = np.bool_(False)

# Request row kinds with the inference cache on (rkeys[g, j, 2]).
RK_PLACE = np.uint64(0)  # an ordinary arena row (or an alias claim on an in-flight twin)
RK_HIT = np.uint64(1)  # a gated ticket; aux = the generation its value was computed under
RK_LOCAL = np.uint64(2)  # identical to an earlier row of the same request; aux = that row
RK_ALIASED = np.uint64(3)  # claimed an identical row in flight (alias ticket)
CACHE_PROBE = 8  # open-addressing probe window of the cache tables
_KEY_SEED0 = np.uint64(0x9E3779B97F4A7C15)
_KEY_SEED1 = np.uint64(0xD1B54A32D192ED03)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


# Engine state: the arrays of reinfors/jit/engine_schema.py (one row each of the address table
# ``E``, read by name: ``E.t_ni``; the schema gives every row's dtype, shape and meaning).
#
# Records live in one pool.  A record is created *provisional* (level -1) at its decision and
# stays in the slot's trajectory list ``traj_idx[g, p, :traj_cnt[g, p]]``; it is *emitted* (its
# level set to the slot's current decision level) when its episode ends (DQN) or its segment is
# bootstrapped (PPO).  A window delivers the emitted records with level < target, ordered by
# (level, slot, sequence); provisional records carry over to the next window.


# The engine state ``E`` rebuilt from the address table ``A: [len(ORDER), 5] int64`` of
# ``(address, dims...)`` rows (reinfors/jit/pointers.py): arrays without a meminfo, so views and
# copies inside the kernels cost no reference counting.  One intrinsic call builds ``E``; each
# ``E.<name>`` read builds that row's array where it is read.
_ENGINE_LAYOUT = _engine_schema.LAYOUT
_unpack = _table_unpacker(_ENGINE_LAYOUT)


@kernel(inline="always")
def _new_record(E, g, player):
    """Reserve a provisional record of the pool for (slot g, player); -1 on overflow (flagged).

    The record is stamped (``RM_GEN``) with the weights generation of the last predictions routed
    to the slot (``SI_GEN``): records are created once their decision's inference is complete, so
    for a search that is the generation of the decision's *last* inference round."""
    ctl = E.ctl
    sinfo = E.sinfo
    r_meta = E.r_meta
    idx = _atomics.fetch_add(ctl, C_REC, 1)
    if idx >= ctl[C_REC_CAP]:
        _atomics.cas(ctl, C_ERROR, 0, ERR_REC_OVERFLOW)
        return -1
    r_meta[idx, RM_LEVEL] = -1
    r_meta[idx, RM_SLOT] = g
    r_meta[idx, RM_SEQ] = 0
    r_meta[idx, RM_PLAYER] = player
    r_meta[idx, RM_GEN] = sinfo[g, SI_GEN]
    r_meta[idx, RM_NTGT] = E.r_tgt.shape[1]
    return idx


@kernel(inline="always")
def _new_decision_record(E, g, player):
    """A provisional record of ``player``'s decision, appended to its open trajectory (rewards
    credited to it start at 0); -1 when the pool overflowed (flagged)."""
    traj_idx, traj_cnt = E.traj_idx, E.traj_cnt
    idx = _new_record(E, g, player)
    if idx < 0:
        return idx
    c = traj_cnt[g, player]
    if c >= traj_idx.shape[2]:
        _atomics.cas(E.ctl, C_ERROR, 0, ERR_TRAJ_OVERFLOW)
    else:
        traj_idx[g, player, c] = idx
        traj_cnt[g, player] = c + 1
    E.r_f[idx, RF_RAW] = 0.0
    return idx


@kernel(inline="always")
def _store_visit_targets(E, idx, lg, tg, A):
    """AlphaZero's record of a decision: the legal mask ``lg`` and the root visit shares ``tg /
    sum(tg)``, stored compactly — one entry per legal action, in the order of the batch's legal
    ids (ascending; the game's order with ``LEGAL_RANKED``), their count in ``RM_NTGT``; the policy
    weight is 1 when the root has visits.  A 4,672-action chess row is written, normalised,
    handed over and scattered into the batch's zeroed targets at ~30 columns, not 4,672."""
    r_legal, r_tgt = E.r_legal, E.r_tgt
    s = 0.0
    for a in range(A):
        if lg[a] != 0:  # ``tg`` holds the legal entries only
            s += tg[a]
    n = 0
    for a in range(A):
        v = lg[a]
        r_legal[idx, a] = v
        if v != 0:
            t = tg[a] / s if s > 0.0 else tg[a]
            if LEGAL_RANKED:
                r_tgt[idx, v - 1] = t
            else:
                r_tgt[idx, n] = t
            n += 1
    E.r_meta[idx, RM_NTGT] = n
    E.r_f[idx, RF_WEIGHT] = 1.0 if s > 0.0 else 0.0


@kernel(inline="always")
def _emit(E, g, idx, level):
    """Emit record ``idx`` of slot ``g`` at ``level`` (next sequence number of the slot)."""
    sinfo, r_meta = E.sinfo, E.r_meta
    r_meta[idx, RM_LEVEL] = level
    r_meta[idx, RM_SEQ] = sinfo[g, SI_SEQ]
    sinfo[g, SI_SEQ] += 1
    sinfo[g, SI_WINREC] += 1
    _atomics.fetch_add(E.ctl, C_EMITTED, 1)  # progress display only; the floor uses messages


@kernel
def _sb_draw(E, g):
    """start_buffer: after the fresh reset (its draws are on the slot stream either way), start
    from a reached state of this slot's buffer with probability ``1 - p_fresh`` — drawn on the
    buffer's own stream, so ``p_fresh=1`` collects exactly what ``start_buffer=False`` does."""
    fcfg, states, sb_states, sb_meta, sb_rng = E.fcfg, E.states, E.sb_states, E.sb_meta, E.sb_rng
    sb_meta[g, SB_SEEDED] = 0
    stored = sb_meta[g, SB_STORED]
    if stored == 0:
        return
    if _rng.uniform(sb_rng[g]) < fcfg[F_PFRESH]:
        return
    j = _rng.index_hi(sb_rng[g], stored)
    for i in range(states.shape[1]):
        states[g, i] = sb_states[g, j, i]
    sb_meta[g, SB_SEEDED] = 1


@kernel
def _sb_observe(E, g):
    """start_buffer: offer the slot's reached (non-terminal) state to its buffer — a uniform
    reservoir (Algorithm R) over every state the slot has reached, on the buffer's stream."""
    cfg, ctl, states, sb_states, sb_meta, sb_rng = E.cfg, E.ctl, E.states, E.sb_states, E.sb_meta, E.sb_rng
    seen = sb_meta[g, SB_SEEN] + 1
    sb_meta[g, SB_SEEN] = seen
    cap = cfg[CFG_SB]
    j = sb_meta[g, SB_STORED]
    if j < cap:
        sb_meta[g, SB_STORED] = j + 1
    else:
        j = _rng.index_hi(sb_rng[g], seen)
        if j >= cap:
            return
    if j >= sb_states.shape[1]:  # rows grow between windows (Runtime._ensure_capacity)
        _atomics.cas(ctl, C_ERROR, 0, ERR_REC_OVERFLOW)
        return
    for i in range(states.shape[1]):
        sb_states[g, j, i] = states[g, i]


@kernel(inline="always")
def _episode_reset(E, g):
    """Start the slot's next episode: the game's reset draws, then EpsilonGreedyQ's head draw
    (``next() % n_heads``, drawn even for one head) — the original's order on the slot stream."""
    params, cfg, states, srng, sinfo, ep_ret, last_act = E.params, E.cfg, E.states, E.srng, E.sinfo, E.ep_ret, E.last_act
    probs = np.zeros(max(1, cfg[CFG_CHANCE]), np.float64)
    reset(params, states[g], cfg[CFG_HORIZON], srng[g], probs)
    if SB_ON:  # a constant of the generated module: other games never compile the start buffer
        if cfg[CFG_SB] > 0:
            _sb_draw(E, g)
    sinfo[g, SI_EPLEN] = 0
    for p in range(cfg[CFG_N]):
        ep_ret[g, p] = 0.0
        last_act[g, p] = 0
    if cfg[CFG_POLICY] == POLICY_EGQ or cfg[CFG_POLICY] == POLICY_SELEXP:
        sinfo[g, SI_HEAD] = np.int64(_rng.next_u64(srng[g]) % np.uint64(cfg[CFG_HEADS]))
    else:
        sinfo[g, SI_HEAD] = 0


@kernel
def _dqn_flush(AT, g, terminal):
    """Episode over (``terminal`` 1: by the rules; 0: truncated at the horizon): build every
    learning player's n-step records from its trajectory and emit them (player order, decision
    order), drawing ``n_heads`` bootstrap-mask coins per record from the slot stream.  Called once
    per episode end, so not inlined: a model-free module's compile helper builds it first
    (``reinfors/_runtime/compile_helper.py``)."""
    E = _unpack(AT)
    params, cfg, fcfg, learn, states, srng, sinfo = E.params, E.cfg, E.fcfg, E.learn, E.states, E.srng, E.sinfo
    r_meta, r_f, r_obs, r_next_obs, r_mask, r_legal, r_next_legal = E.r_meta, E.r_f, E.r_obs, E.r_next_obs, E.r_mask, E.r_legal, E.r_next_legal
    traj_idx, traj_cnt, last_act = E.traj_idx, E.traj_cnt, E.last_act
    N, A, O, H = cfg[CFG_N], cfg[CFG_A], cfg[CFG_O], cfg[CFG_HEADS]
    n_step = cfg[CFG_NSTEP]
    gamma = fcfg[F_GAMMA]
    bp = fcfg[F_BOOTSTRAP_P]
    level = sinfo[g, SI_LEVEL]
    final_legal = np.zeros(A, np.uint8)
    alive = np.zeros(N, np.int64)
    na = 0
    if terminal == 0:
        na = G_active(params, states[g], alive)
    for p in range(N):
        m = traj_cnt[g, p]
        if learn[p] == 0 or m == 0:
            traj_cnt[g, p] = 0
            continue
        # Tail bootstrap: only a truncated episode whose player acted in the final tick and is
        # still active (GridWorld, Snake); alternating-game truncation tails cannot bootstrap.
        tail_can = False
        if terminal == 0 and last_act[g, p] != 0:
            for j in range(na):
                if alive[j] == p:
                    tail_can = True
            if tail_can:
                G_legal(params, states[g], p, final_legal)
                tail_can = False
                for a in range(A):
                    if final_legal[a] != 0:
                        tail_can = True
        last = traj_idx[g, p, m - 1]
        for j in range(m):
            idx = traj_idx[g, p, j]
            k = min(n_step, m - j)
            acc = 0.0
            d = 1.0
            for i in range(k):
                acc += d * r_f[traj_idx[g, p, j + i], RF_RAW]
                d *= gamma
            flags = 0
            if j + k < m:
                nxt = traj_idx[g, p, j + k]
                for i in range(O):
                    r_next_obs[idx, i] = r_obs[nxt, i]
                can = False
                for a in range(A):
                    r_next_legal[idx, a] = r_legal[nxt, a]
                    if r_legal[nxt, a] != 0:
                        can = True
            else:
                if idx != last:
                    for i in range(O):
                        r_next_obs[idx, i] = r_next_obs[last, i]
                can = tail_can
                for a in range(A):
                    r_next_legal[idx, a] = final_legal[a] if can else 0
                if terminal != 0:
                    flags |= 1
            if can:
                flags |= 2
            r_meta[idx, RM_FLAGS] = flags
            r_f[idx, RF_REWARD] = acc
            r_f[idx, RF_DISCOUNT] = d if can else 0.0
            for h in range(H):
                r_mask[idx, h] = 1.0 if _rng.uniform(srng[g]) < bp else 0.0
            _emit(E, g, idx, level)
        traj_cnt[g, p] = 0


@kernel(inline="always")
def _ppo_flush(E, g, p, v_boot, level):
    """GAE(lambda) backwards over (g, p)'s open segment bootstrapped with ``v_boot``; emit it."""
    fcfg, r_f = E.fcfg, E.r_f
    traj_idx, traj_cnt = E.traj_idx, E.traj_cnt
    gamma = fcfg[F_GAMMA]
    lam = fcfg[F_LAM]
    adv = 0.0
    next_v = v_boot
    m = traj_cnt[g, p]
    for i in range(m - 1, -1, -1):
        rec = traj_idx[g, p, i]
        v = r_f[rec, RF_VALUE]
        delta = (r_f[rec, RF_RAW] + gamma * next_v) - v
        adv = delta + (gamma * lam) * adv
        r_f[rec, RF_ADV] = adv
        r_f[rec, RF_RET] = adv + v
        next_v = v
    for i in range(m):
        _emit(E, g, traj_idx[g, p, i], level)
    traj_cnt[g, p] = 0
