
# ---- body: reinfors/jit/kernels/engine_cache.py --------------------------------------------------
# The inference cache (``infer_cache > 0``; only the ``+cache`` kernel families concatenate this
# file): 128-bit state-row keys, lookups in the pinned view, alias tickets for identical rows in
# flight, gated hits released at the route's next fire, the insert log the scheduler applies to
# the unpinned view and publishes once per fire, demand-full rungs and clearing.

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import arena as _arena
from reinfors.jit import atomics as _atomics
from reinfors.jit import outputs as _outputs
from reinfors.jit import rings as _rings
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    C_FULL,
    C_ROUTE_CUR,
    C_ROUTE_HITS,
    C_ROUTE_TGT,
    C_STOP,
    C_WGEN,
    CC_APPLIED,
    CC_DEMOTED,
    CC_DROPPED,
    CC_GEN,
    CC_LOGN,
    CC_PIN,
    CC_VIEW,
    CFG_ALIASES,
    CFG_ARENAS,
    CFG_CACHE,
    CFG_N,
    CFG_ROUTES,
    MSG_ALIAS,
    MSG_HIT,
    MSG_W,
    SI_GEN,
    SI_STATUS,
    SI_VIEW,
    ST_RESUME,
    TL_ALIASES,
    TL_HITS,
    TL_LOOKUPS,
)

if TYPE_CHECKING:
    from reinfors.jit.kernels.engine_records import (
        _B_TRUE,
        _KEY_SEED0,
        _KEY_SEED1,
        _MIX1,
        _MIX2,
        _ONE,
        _ZERO,
        CACHE_PROBE,
        RK_ALIASED,
        RK_HIT,
        RK_LOCAL,
        RK_PLACE,
        _unpack,
    )
    from reinfors.jit.kernels.engine_routing import _place_run, _store_pred
    from reinfors.jit.kernels.engine_slots import push_ready
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel(inline="always")
def _mix64(h):
    """SplitMix64's finaliser: a bijective 64-bit mixer."""
    h = (h ^ (h >> np.uint64(30))) * _MIX1
    h = (h ^ (h >> np.uint64(27))) * _MIX2
    return h ^ (h >> np.uint64(31))


@kernel(inline="always")
def _row_key(E, g, j):
    """128-bit cache key of request row ``j`` of slot ``g``: a hash of the state row the
    observation is encoded from (the slot's state for root rows, the node's state for tree rows)
    and the observing player — the pre-encoding key, so a hit is never encoded.  Encoders are
    pure functions of (state, player); two 64-bit lanes make a false match ~2^-128."""
    rq = E.rq
    node = rq[g, j, 0]
    player = np.uint64(rq[g, j, 1])
    h0 = _KEY_SEED0 ^ player
    h1 = _KEY_SEED1 + player
    if node >= 0:
        st = E.t_state[g, node]
    else:
        st = E.states[g]
    # Two independent multiply-xorshift lanes (each step is a bijection of the lane for a given
    # word), finalised with SplitMix64's mixer: ~1 ns per state word.
    for i in range(st.shape[0]):
        w = np.uint64(st[i])
        h0 = (h0 ^ w) * _MIX1
        h0 ^= h0 >> np.uint64(29)
        h1 = (h1 + w) * _MIX2
        h1 ^= h1 >> np.uint64(32)
    k0 = _mix64(h0)
    return k0 | np.uint64(1), _mix64(h1 ^ k0)  # k0 != 0 marks an occupied cache entry


@kernel(inline="always")
def _cache_find(E, v, p, k0, k1):
    """Look up key (k0, k1) in view ``v`` of partition ``p``: ``(entry, generation)`` when it
    holds a value of the partition's current generation, else ``(-1, generation)``."""
    cfg, cctl, c_keys, c_gen = E.cfg, E.cctl, E.c_keys, E.c_gen
    S = cfg[CFG_CACHE]
    gen = _atomics.load_acquire(cctl, CC_GEN + 8 * p)
    h = np.int64(k0 % np.uint64(S))
    for _ in range(min(CACHE_PROBE, S)):
        a = c_keys[v, p, h, 0]
        if a == 0:
            break
        if a == k0 and c_keys[v, p, h, 1] == k1:
            if c_gen[v, p, h] == gen:
                return h, gen
            break
        h = (h + 1) % S
    return np.int64(-1), gen


@kernel(inline="always")
def _try_alias(AT, E, g, j, route, k0, k1):
    """Alias ticket: if an identical row is in the route's open arena, claim its prediction
    (``alias += 1`` in the arena's control word, so the arena cannot fire before the claim is
    drained), post the claim and settle it.  An arena routed and reopened between the probe and
    the claim (its epoch moved) makes the claim *abandoned*: it is still posted and settled so the
    fire condition reconciles, and the row is placed normally.  True when the row was aliased."""
    cfg, ctl, arena_ctl, arena_done = E.cfg, E.ctl, E.arena_ctl, E.arena_done
    a_keys, a_index, a_epoch = E.a_keys, E.a_index, E.a_epoch
    n_arenas = cfg[CFG_ARENAS]
    cur = _atomics.load_acquire(ctl, C_ROUTE_CUR + 8 * route)
    ai = route * n_arenas + cur
    e1 = _atomics.load_acquire(a_epoch, ai)
    w = _atomics.load_acquire(arena_ctl, ai)
    if _arena.is_closed(w) or _arena.cursor_of(w) == 0:
        return False
    idx = a_index[ai]
    m = idx.shape[0]
    h = np.int64(k0 % np.uint64(m))
    pos = -1
    for _ in range(m):
        e = _atomics.load_acquire(idx, h)
        if e == 0:
            break
        if a_keys[ai, e - 1, 0] == k0 and a_keys[ai, e - 1, 1] == k1:
            pos = e - 1
            break
        h = (h + 1) % m
    if pos < 0 or not _arena.claim_alias_below(arena_ctl, ai, cfg[CFG_ALIASES]):
        return False
    ok = _atomics.load_acquire(a_epoch, ai) == e1
    N = cfg[CFG_N]
    msg = E.iscr[g, 2 * N : 2 * N + MSG_W]
    msg[0] = MSG_ALIAS
    msg[1] = g
    msg[2] = route
    msg[3] = cur
    msg[4] = pos if ok else -1
    msg[5] = j
    msg[6] = 0
    while not _rings.push(E.msg_seq, E.msg_data, E.msg_pos, msg):
        pass
    _arena.commit(arena_done, ai, 1)  # settles the claim, registered or abandoned
    return ok


@kernel
def _request_cached(AT, g, n_rows):
    """The request with the inference cache on, in two passes.  Pass 1 (nothing published yet):
    key every row, fold rows identical to an earlier row of the request into it (local alias),
    look the rest up in the view this task pinned — a hit's value is copied into ``preds`` now
    and becomes a gated ticket — and set the outstanding count.  Pass 2 publishes: a Hit message
    per ticket, an alias claim where an identical row is in flight, and arena rows (runs of
    consecutive rows of one route) for the rest."""
    E = _unpack(AT)
    cfg, sinfo, tele, rq, rkeys = E.cfg, E.sinfo, E.tele, E.rq, E.rkeys
    per_player = cfg[CFG_ROUTES] > 1
    v = sinfo[g, SI_VIEW]
    hits = 0
    local = 0
    dd = E.rdedup[g]
    m = 2 * n_rows
    if n_rows > 1:
        for i in range(m):
            dd[i] = 0
    for j in range(n_rows):
        k0, k1 = _row_key(E, g, j)
        rkeys[g, j, 0] = k0
        rkeys[g, j, 1] = k1
        route = rq[g, j, 1] if per_player else 0
        twin = -1
        if n_rows > 1:  # request-local index: a Minimax round holds many transpositions
            h = np.int64(k0 % np.uint64(m))
            while dd[h] != 0:
                i = dd[h] - 1
                if rkeys[g, i, 0] == k0 and rkeys[g, i, 1] == k1:
                    twin = i
                    break
                h = (h + 1) % m
            if twin < 0:
                dd[h] = j + 1
        if twin >= 0:
            rkeys[g, j, 2] = RK_LOCAL
            rkeys[g, j, 3] = np.uint64(twin)
            local += 1
            continue
        e, gen = _cache_find(E, v, route, k0, k1)
        if e >= 0:
            _store_pred(E, g, j, E.c_vals[v, route, e], _outputs.f32_rows(0, 0, 0), 0)
            rkeys[g, j, 2] = RK_HIT
            rkeys[g, j, 3] = np.uint64(gen)
            hits += 1
        else:
            rkeys[g, j, 2] = RK_PLACE
    tele[g, TL_LOOKUPS] += n_rows
    tele[g, TL_HITS] += hits
    tele[g, TL_ALIASES] += local
    # Outstanding: arena rows, alias claims and gated tickets, plus a guard this task drops when
    # it has published everything (the scheduler may resolve them all before that).
    E.pending[g] = n_rows - local + 1
    N = cfg[CFG_N]
    msg = E.iscr[g, 2 * N : 2 * N + MSG_W]
    j = 0
    while j < n_rows:
        kind = rkeys[g, j, 2]
        route = rq[g, j, 1] if per_player else 0
        if kind == RK_LOCAL or kind == RK_ALIASED:
            j += 1
            continue
        if kind == RK_HIT:
            msg[0] = MSG_HIT
            msg[1] = g
            msg[2] = route
            msg[3] = j
            msg[4] = np.int64(rkeys[g, j, 3])
            msg[5] = 0
            msg[6] = 0
            while not _rings.push(E.msg_seq, E.msg_data, E.msg_pos, msg):
                pass
            # A route's batch counts its gated hits: rows + hits at capacity fire it (the
            # scheduler closes the open arena early), so hits never wait for a batch of misses.
            ctl = E.ctl
            hits_now = _atomics.fetch_add(ctl, C_ROUTE_HITS + 8 * route, 1) + 1
            cur = _atomics.load_acquire(ctl, C_ROUTE_CUR + 8 * route)
            fill = _arena.cursor_of(_atomics.load_acquire(E.arena_ctl, route * cfg[CFG_ARENAS] + cur))
            if hits_now + fill >= _atomics.load_acquire(ctl, C_ROUTE_TGT + 8 * route):
                _atomics.fetch_add(ctl, C_FULL, 1)
            j += 1
            continue
        if _try_alias(AT, E, g, j, route, rkeys[g, j, 0], rkeys[g, j, 1]):
            j += 1
            continue
        # A run of rows to place: this one and the following misses of the same route that
        # have no twin in flight either (a row that claims one ends the run).
        r = 1
        while j + r < n_rows and rkeys[g, j + r, 2] == RK_PLACE:
            if per_player and rq[g, j + r, 1] != rq[g, j, 1]:
                break
            if _try_alias(AT, E, g, j + r, route, rkeys[g, j + r, 0], rkeys[g, j + r, 1]):
                rkeys[g, j + r, 2] = RK_ALIASED
                break
            r += 1
        if not _place_run(AT, g, np.int64(j), np.int64(r), np.int64(route), _B_TRUE, msg):
            return
        j += r
    if _atomics.fetch_sub(E.pending, g, 1) == 1:
        # Every row was resolved while this task was still publishing: it resumes the slot.
        sinfo[g, SI_STATUS] = ST_RESUME
        while not _rings.push1(E.rdy_seq, E.rdy_data, E.rdy_pos, g):
            pass


@kernel(inline="always")
def _pin_view(cctl):
    """Pin the published cache view for one task: count a reader on it, then check it is still
    the published one (else unpin and retry) — the scheduler never writes a view with readers."""
    while True:
        v = _atomics.load_acquire(cctl, CC_VIEW)
        _atomics.fetch_add(cctl, CC_PIN + 8 * v, 1)
        if _atomics.load_acquire(cctl, CC_VIEW) == v:
            return v
        _atomics.fetch_sub(cctl, CC_PIN + 8 * v, 1)


@kernel(entry=True)
def release_gated(A, route_id, ready_out):
    """Liveness rungs without a fire (stall ladder, quiescence): release ``route_id``'s gated
    tickets (stale ones are demoted into its open arena) and queue the slots that became ready.
    Returns how many tickets there were."""
    E = _unpack(A)
    n = E.gated_n[route_id]
    n_ready = _release_gated(A, E, route_id, ready_out, _ZERO)
    _atomics.store_release(E.ctl, C_STOP, 0)
    push_ready(A, ready_out, n_ready)
    return n


@kernel(inline="always")
def _release_gated(A, E, route_id, ready_out, n_ready):
    """Release every drained gated ticket of the route: a ticket whose value is still of the
    partition's current generation resolves; an older one is *demoted* — its row goes into the
    route's open arena like any miss and is re-inferred (``CC_DEMOTED``).  A resolved ticket's
    value is of the current weights, so its slot is stamped with the current generation."""
    cctl, pending, sinfo, gated, gated_n, rkeys = E.cctl, E.pending, E.sinfo, E.gated, E.gated_n, E.rkeys
    gen_now = _atomics.load_acquire(cctl, CC_GEN + 8 * route_id)
    wgen = _atomics.load_acquire(E.ctl, C_WGEN)
    msg = np.zeros(MSG_W, np.int64)  # never the slot's scratch: its task may still be publishing
    n = gated_n[route_id]
    gated_n[route_id] = 0
    _atomics.fetch_sub(E.ctl, C_ROUTE_HITS + 8 * route_id, n)
    for q in range(n):
        g = gated[route_id, q, 0]
        j = gated[route_id, q, 1]
        if gated[route_id, q, 2] != gen_now:
            rkeys[g, j, 2] = RK_PLACE
            cctl[CC_DEMOTED] += 1
            _place_run(A, g, j, _ONE, route_id, _B_TRUE, msg)
            continue
        sinfo[g, SI_GEN] = wgen
        if _atomics.fetch_sub(pending, g, 1) == 1:
            sinfo[g, SI_STATUS] = ST_RESUME
            ready_out[n_ready] = g
            n_ready += 1
    return n_ready


@kernel(inline="always")
def _cache_log(E, route_id, ai, n, out, gen):
    """Append the fired arena's ``n`` rows (key, partition, generation, value) to the insert
    log; a full log (a view pinned for many fires) drops them — a lost insert only costs hits."""
    cctl, c_logk, c_logi, c_logv, a_keys = E.cctl, E.c_logk, E.c_logi, E.c_logv, E.a_keys
    W = out.shape[1]
    L = c_logk.shape[0]
    k = cctl[CC_LOGN]
    for t in range(n):
        if k >= L:
            cctl[CC_DROPPED] += n - t
            break
        c_logk[k, 0] = a_keys[ai, t, 0]
        c_logk[k, 1] = a_keys[ai, t, 1]
        c_logi[k, 0] = route_id
        c_logi[k, 1] = gen
        for w in range(W):
            c_logv[k, w] = out[t, w]
        k += 1
    cctl[CC_LOGN] = k


@kernel(inline="always")
def _cache_put(E, v, e):
    """Apply insert-log entry ``e`` to view ``v`` (no reader has it pinned): overwrite the key's
    entry, else take the first empty or stale entry of the probe window, else evict the key's
    home entry.  Values of an outdated generation are not inserted at all."""
    cfg, cctl, c_keys, c_gen, c_vals = E.cfg, E.cctl, E.c_keys, E.c_gen, E.c_vals
    c_logk, c_logi, c_logv = E.c_logk, E.c_logi, E.c_logv
    p = c_logi[e, 0]
    gen = c_logi[e, 1]
    now = _atomics.load_acquire(cctl, CC_GEN + 8 * p)
    if gen != now:
        return
    S = cfg[CFG_CACHE]
    k0 = c_logk[e, 0]
    k1 = c_logk[e, 1]
    home = np.int64(k0 % np.uint64(S))
    h = home
    free = -1
    for _ in range(min(CACHE_PROBE, S)):
        a = c_keys[v, p, h, 0]
        if a == k0 and c_keys[v, p, h, 1] == k1:
            free = h
            break
        if free < 0 and (a == 0 or c_gen[v, p, h] != now):
            free = h
        h = (h + 1) % S
    if free < 0:
        free = home
    c_keys[v, p, free, 0] = k0
    c_keys[v, p, free, 1] = k1
    c_gen[v, p, free] = gen
    for w in range(c_vals.shape[3]):
        c_vals[v, p, free, w] = c_logv[e, w]


@kernel(inline="always")
def _cache_publish(E):
    """Bring the unpublished view up to date with the insert log and publish it — only when no
    worker task has it pinned (else the next fire tries again).  The flip is a locked CAS, so a
    task that pins after it reads a complete view.  Log entries both views hold are dropped."""
    cctl, c_logk, c_logi, c_logv = E.cctl, E.c_logk, E.c_logi, E.c_logv
    cur = cctl[CC_VIEW]
    nxt = 1 - cur
    if _atomics.load_acquire(cctl, CC_PIN + 8 * nxt) != 0:
        return
    n = cctl[CC_LOGN]
    for e in range(cctl[CC_APPLIED + 8 * nxt], n):
        _cache_put(E, nxt, e)
    cctl[CC_APPLIED + 8 * nxt] = n
    _atomics.cas(cctl, CC_VIEW, cur, nxt)
    done = min(cctl[CC_APPLIED], cctl[CC_APPLIED + 8])
    if done > 0:
        for e in range(done, n):
            c_logk[e - done, 0] = c_logk[e, 0]
            c_logk[e - done, 1] = c_logk[e, 1]
            c_logi[e - done, 0] = c_logi[e, 0]
            c_logi[e - done, 1] = c_logi[e, 1]
            for w in range(c_logv.shape[1]):
                c_logv[e - done, w] = c_logv[e, w]
        cctl[CC_LOGN] = n - done
        cctl[CC_APPLIED] -= done
        cctl[CC_APPLIED + 8] -= done


@kernel(entry=True)
def demand_full(A):
    """The capacity rung with the cache on: the first route whose open arena rows plus drained
    gated hits reach the capacity, or -1.  The scheduler then closes and fires that arena (which
    releases the hits), or releases the hits alone when the arena is empty."""
    E = _unpack(A)
    cfg, ctl, arena_ctl, gated_n = E.cfg, E.ctl, E.arena_ctl, E.gated_n
    n_arenas = cfg[CFG_ARENAS]
    for r in range(cfg[CFG_ROUTES]):
        if gated_n[r] == 0:
            continue
        cur = _atomics.load_acquire(ctl, C_ROUTE_CUR + 8 * r)
        w = _atomics.load_acquire(arena_ctl, r * n_arenas + cur)
        fill = 0 if _arena.is_closed(w) else _arena.cursor_of(w)
        if fill + gated_n[r] >= _atomics.load_acquire(ctl, C_ROUTE_TGT + 8 * r):
            return r
    return -1


@kernel(entry=True)
def cache_clear(A):
    """Empty both views and the log (routes changed, or a restore).  Scheduler only, with no
    worker running."""
    E = _unpack(A)
    cctl = E.cctl
    E.c_keys[:] = 0
    cctl[CC_LOGN] = 0
    cctl[CC_APPLIED] = 0
    cctl[CC_APPLIED + 8] = 0
    E.gated_n[:] = 0
