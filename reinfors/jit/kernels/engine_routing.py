
# ---- body: reinfors/jit/kernels/engine_routing.py ------------------------------------------------
# Arenas and routes on the scheduler side: placing a request's rows into the route's open arena
# (``_place_run``, worker side), draining span messages, sealing and firing committed arenas, and
# routing the predictions back to the blocked slots by position (``route`` / ``finish_fire``).

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import arena as _arena
from reinfors.jit import atomics as _atomics
from reinfors.jit import outputs as _outputs
from reinfors.jit import rings as _rings
from reinfors.jit._compile import kernel
from reinfors.jit.engine_codes import (
    C_ERROR,
    C_FIREGEN,
    C_FULL,
    C_ROUTE_CUR,
    C_ROUTE_TGT,
    C_STOP,
    CC_ALIASES,
    CFG_A,
    CFG_ARENAS,
    CFG_CAP,
    CFG_COHORT,
    CFG_COHORT_CLOSE,
    CFG_COHORTS,
    CFG_G,
    CFG_ROUTES,
    CTL_BASE,
    ERR_NO_ARENA,
    ERR_SPAN_OVERFLOW,
    MSG_ALIAS,
    MSG_COMPLETED,
    MSG_EMITTED,
    MSG_HIT,
    MSG_W,
    SI_GEN,
    SI_SEARCH,
    SI_STATUS,
    ST_RESUME,
    TN_NLEG,
)
from reinfors.jit.pointers import borrowed as _borrowed

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import CACHE_ON, FAM_TREE, HEAD_MAPPED, SIMUL, G_encode, G_head_index
    from reinfors.jit.kernels.engine_cache import _cache_log, _cache_publish, _release_gated
    from reinfors.jit.kernels.engine_records import _unpack
    from reinfors.jit.kernels.engine_slots import push_ready
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel(inline="always")
def _store_pred(E, g, j, src, raw, r):
    """Prediction row ``src: [W] float64`` (the network's, in its observer's head frame) into
    slot ``g``'s row ``j``, in the game's action frame: with ``HEAD_MAPPED`` action column
    ``h * A + a`` reads ``h * A + G_head_index(a, agent)`` (``agent`` = the row's observer,
    ``rq[g, j, 1]``); the columns past the ``H * A`` action block (values) are copied as they
    are.  A tree row of a sequential AlphaZero / Mcts search is read only at its node's legal
    edges, so only those columns are copied: a node below the root (``rq[g, j, 0] > 0``, see
    ``_sparse_node``) or the root itself (a root row, ``rq[g, j, 0] < 0``, while the slot's search
    is under way: the decision's rows; a truncation tail's row, read over the legal mask, comes
    after the search).  With rows in ``raw`` (the callback's
    float32 logits, ``outputs.f32_rows``) the action columns come from its row ``r``, widened
    here, and ``src`` supplies the value columns only."""
    cfg, preds, rq = E.cfg, E.preds, E.rq
    A = cfg[CFG_A]
    W = src.shape[0]
    HA = (W // A) * A
    lazy = raw.shape[0] > 0
    dst = preds[g, j]
    node = rq[g, j, 0]
    agent = rq[g, j, 1]
    if FAM_TREE and not SIMUL and (node > 0 or E.sinfo[g, SI_SEARCH] != 0):
        tn = max(node, 0)
        ed = E.t_edges[g, tn]
        nleg = E.t_ni[g, tn, TN_NLEG]
        for h0 in range(0, HA, A):
            for e in range(nleg):
                a = ed[e]
                col = h0 + (G_head_index(a, agent) if HEAD_MAPPED else a)
                dst[h0 + a] = np.float64(raw[r, col]) if lazy else src[col]
    elif HEAD_MAPPED or lazy:
        for h0 in range(0, HA, A):
            for a in range(A):
                col = h0 + (G_head_index(a, agent) if HEAD_MAPPED else a)
                dst[h0 + a] = np.float64(raw[r, col]) if lazy else src[col]
    else:
        HA = 0
    for w in range(HA, W):
        dst[w] = src[w]


@kernel
def _place_run(AT, g, j0, k, route, cached, msg):
    """Reserve arena rows of ``route`` for rows ``j0 .. j0 + k`` of slot ``g``'s request
    (``rq[g, j]``: a root row copied from ``root[g, -1 - node]``, or a tree node encoded straight
    into the arena for its player), post one Emitted message per span, commit.  With the cache
    on (``cached``) every row's key goes next to it and into the arena's key index, where later
    identical rows find it (alias tickets).  ``msg: [MSG_W] int64`` is the caller's message
    scratch: the slot's own row of ``iscr`` for a worker, a private array for the scheduler
    (whose demotions run while the slot's task may still be publishing).  Returns False after
    a kernel error."""
    E = _unpack(AT)
    params, cfg, ctl, root = E.params, E.cfg, E.ctl, E.root
    rq, t_state = E.rq, E.t_state
    arena_rows, arena_ctl, arena_done = E.arena_rows, E.arena_ctl, E.arena_done
    a_keys, a_index, rkeys = E.a_keys, E.a_index, E.rkeys
    msg_seq, msg_data, msg_pos = E.msg_seq, E.msg_data, E.msg_pos
    n_arenas = cfg[CFG_ARENAS]
    cap = cfg[CFG_CAP]
    j = j0
    while j < j0 + k:
        while True:
            cur = _atomics.load_acquire(ctl, C_ROUTE_CUR + 8 * route)
            ai = route * n_arenas + cur
            # The arena closes at the route's fire target (set by the scheduler's firing policy,
            # at most the capacity); a span may run on past it up to the capacity.
            tgt = _atomics.load_acquire(ctl, C_ROUTE_TGT + 8 * route)
            start, take = _arena.reserve_until(arena_ctl, ai, min(j0 + k - j, cap), cap, tgt)
            if start >= 0:
                break
            # Closed or full: tell the scheduler, then move the chain to a free arena.
            _atomics.fetch_add(ctl, C_FULL, 1)
            spins = 0
            while True:
                if _atomics.load_acquire(ctl, C_ROUTE_CUR + 8 * route) != cur:
                    break  # another writer already advanced the chain
                if not _arena.is_closed(_atomics.load_acquire(arena_ctl, ai)):
                    break  # the arena was recycled meanwhile (a full cycle of the chain): reuse it
                moved = False
                for t in range(1, n_arenas):
                    nxt = (cur + t) % n_arenas
                    if _atomics.load_acquire(arena_ctl, route * n_arenas + nxt) == 0:
                        _atomics.cas(ctl, C_ROUTE_CUR + 8 * route, cur, nxt)
                        moved = True
                        break
                if moved:
                    break
                spins += 1
                if spins >= 1 << 24:
                    # Cannot happen with the pool sized for every in-flight row (runtime.py).
                    _atomics.cas(ctl, C_ERROR, 0, ERR_NO_ARENA)
                    return False
        rows = arena_rows[route, cur]
        for t in range(take):
            dst = rows[start + t]
            node = rq[g, j + t, 0]
            if node >= 0:
                G_encode(params, t_state[g, node], rq[g, j + t, 1], dst)
            else:
                src = root[g, -1 - node]
                for i in range(src.shape[0]):
                    dst[i] = src[i]
            if cached:
                p = start + t
                k0 = rkeys[g, j + t, 0]
                a_keys[ai, p, 0] = k0
                a_keys[ai, p, 1] = rkeys[g, j + t, 1]
                idx = a_index[ai]
                m = idx.shape[0]
                h = np.int64(k0 % np.uint64(m))
                for _ in range(m):  # 2 * cap slots for at most cap rows: always room
                    if _atomics.cas(idx, h, 0, p + 1) == 0:
                        break
                    h = (h + 1) % m
        msg[0] = MSG_EMITTED
        msg[1] = g
        msg[2] = route
        msg[3] = cur
        msg[4] = start
        msg[5] = take
        msg[6] = j
        while not _rings.push(msg_seq, msg_data, msg_pos, msg):
            pass
        # Message first, then the release commit: once the scheduler sees the arena settled,
        # every span message of it is already in the ring.  A task that hit a kernel error
        # poisons its span: the arena is then discarded, never served.
        if _atomics.load_acquire(ctl, C_ERROR) != 0:
            _arena.poison(arena_done, ai, take)
        else:
            _arena.commit(arena_done, ai, take)
        if start + take >= tgt:
            _atomics.fetch_add(ctl, C_FULL, 1)
        j += take
    return True


@kernel(entry=True)
def drain(A, spans, span_n, acc):
    """Drain every queued message in order: Emitted spans go to their arena's span table
    (``spans: [R * NA, CAP, 4]`` = slot, start, rows, row offset; ``span_n: [R * NA]``);
    Completed messages add to ``acc: [2] int64`` = (slots completed, records they emitted).
    Returns the number of Completed messages seen."""
    E = _unpack(A)
    cfg = E.cfg
    msg_seq, msg_data, msg_pos = E.msg_seq, E.msg_data, E.msg_pos
    msg = np.zeros(MSG_W, np.int64)
    parked = 0
    n_arenas = cfg[CFG_ARENAS]
    while _rings.pop(msg_seq, msg_data, msg_pos, msg):
        if msg[0] == MSG_EMITTED:
            ai = msg[2] * n_arenas + msg[3]
            if ai < 0 or ai >= span_n.shape[0] or span_n[ai] >= spans.shape[1]:
                # An arena collected more spans than it has rows: an invariant is broken.  Stop
                # cleanly (KernelError) instead of writing past the span table.
                _atomics.cas(E.ctl, C_ERROR, 0, ERR_SPAN_OVERFLOW)
                continue
            k = span_n[ai]
            spans[ai, k, 0] = msg[1]
            spans[ai, k, 1] = msg[4]
            spans[ai, k, 2] = msg[5]
            spans[ai, k, 3] = msg[6]
            span_n[ai] = k + 1
        elif msg[0] == MSG_COMPLETED:
            parked += 1
            acc[0] += 1
            acc[1] += msg[3]
        elif msg[0] == MSG_HIT:
            r = msg[2]
            q = E.gated_n[r]
            E.gated[r, q, 0] = msg[1]
            E.gated[r, q, 1] = msg[3]
            E.gated[r, q, 2] = msg[4]
            E.gated_n[r] = q + 1
        elif msg[0] == MSG_ALIAS:
            ai = msg[2] * n_arenas + msg[3]
            q = E.a_alias_n[ai]
            E.a_alias[ai, q, 0] = msg[1]
            E.a_alias[ai, q, 1] = msg[5]
            E.a_alias[ai, q, 2] = msg[4]
            E.a_alias_n[ai] = q + 1
            if msg[4] >= 0:
                E.cctl[CC_ALIASES] += 1
    return parked


@kernel(entry=True)
def sealable(A, route, first):
    """Index of the first arena of ``route`` (scanning from ``first``) that is closed and fully
    settled, or -1.  Poisoned arenas come back as ``-2 - index``."""
    E = _unpack(A)
    cfg = E.cfg
    arena_ctl, arena_done = E.arena_ctl, E.arena_done
    n_arenas = cfg[CFG_ARENAS]
    for t in range(n_arenas):
        i = (first + t) % n_arenas
        r = _arena.seal(arena_ctl, arena_done, route * n_arenas + i)
        if r == _arena.READY and _arena.cursor_of(arena_ctl[route * n_arenas + i]) > 0:
            return i
        if r == _arena.POISONED_READY:
            return -2 - i
    return -1


@kernel(entry=True)
def arena_fill(A, route, i):
    """Rows reserved in arena ``i`` of ``route`` (its cursor)."""
    E = _unpack(A)
    n_arenas = E.cfg[CFG_ARENAS]
    return _arena.cursor_of(E.arena_ctl[route * n_arenas + i])


@kernel(entry=True)
def close_all_open(A, route):
    """Quiescence rung: close every open arena of ``route`` that holds rows — normally just the
    chain's current one, but a writer delayed across a whole cycle of the chain can leave rows
    in an arena the chain has already moved past.  Returns how many were closed."""
    E = _unpack(A)
    cfg, arena_ctl = E.cfg, E.arena_ctl
    n_arenas = cfg[CFG_ARENAS]
    n = 0
    for i in range(n_arenas):
        ai = route * n_arenas + i
        w = _atomics.load_acquire(arena_ctl, ai)
        if not _arena.is_closed(w) and _arena.cursor_of(w) > 0:
            _arena.close(arena_ctl, ai)
            n += 1
    return n


@kernel(entry=True)
def close_open(A, route):
    """Close the route's open arena if it holds rows (quiescence / stall rung); returns its index
    or -1 when it was empty."""
    E = _unpack(A)
    cfg, ctl, arena_ctl = E.cfg, E.ctl, E.arena_ctl
    n_arenas = cfg[CFG_ARENAS]
    cur = _atomics.load_acquire(ctl, C_ROUTE_CUR + 8 * route)
    ai = route * n_arenas + cur
    if _arena.cursor_of(_atomics.load_acquire(arena_ctl, ai)) == 0:
        return -1
    _arena.close(arena_ctl, ai)
    # Move the chain on so new requests start a fresh arena.
    nxt = (cur + 1) % n_arenas
    _atomics.cas(ctl, C_ROUTE_CUR + 8 * route, cur, nxt)
    return cur


@kernel
def _close_cohort(A, c):
    """Cohort ``c`` has no slot ready or running: close its open arena on every route (those
    holding rows) and tell the scheduler.  Called by the worker whose slot left the cohort's
    active count last, so the rows of the call are exactly the cohort's round — a function of the
    slots' own progress, never of which thread wrote first."""
    E = _unpack(A)
    cfg, ctl, arena_ctl = E.cfg, E.ctl, E.arena_ctl
    K, R, n_arenas = cfg[CFG_COHORTS], cfg[CFG_ROUTES], cfg[CFG_ARENAS]
    if R > K:
        # Per-player routes: the round is one call per route that holds rows, and its slots
        # are queued only once every one of them came back (``finish_fire``), so no slot of
        # the cohort starts the next round while another still waits on this one.  Counted
        # before any closes: no writer of the cohort is active, the cursors stand still.
        n = 0
        for r in range(R // K):
            cur = _atomics.load_acquire(ctl, C_ROUTE_CUR + 8 * (r * K + c))
            if _arena.cursor_of(_atomics.load_acquire(arena_ctl, (r * K + c) * n_arenas + cur)) > 0:
                n += 1
        _atomics.store_release(ctl, CTL_BASE + 8 * (R + K + c), n)
    for r in range(R // K):
        close_open(A, r * K + c)
    _atomics.fetch_add(ctl, C_FULL, 1)


@kernel
def _round_back(A, route_id, ready_out, n_ready):
    """A call of route ``route_id`` was routed back: with per-player routes, hold its ready
    slots until the last call of their cohort's round is back, then return every slot of the
    cohort that is ready (written to ``ready_out``); otherwise ``n_ready`` as it is."""
    E = _unpack(A)
    cfg, ctl, sinfo = E.cfg, E.ctl, E.sinfo
    K, R = cfg[CFG_COHORTS], cfg[CFG_ROUTES]
    if cfg[CFG_COHORT_CLOSE] == 0 or R <= K:
        return n_ready
    c = route_id % K
    if _atomics.fetch_sub(ctl, CTL_BASE + 8 * (R + K + c), 1) != 1:
        return 0
    S = cfg[CFG_COHORT]
    n = 0
    for g in range(c * S, min((c + 1) * S, cfg[CFG_G])):
        if sinfo[g, SI_STATUS] == ST_RESUME:
            ready_out[n] = g
            n += 1
    return n


@kernel
def route(A, spans, span_n, route_id, i, out, ready_out, raw):
    """Route prediction rows ``out: [n, W] float64`` of arena ``i`` back to the blocked slots by
    position; slots whose last row arrived become RESUME and are listed in ``ready_out``.
    ``raw = (address, rows, row stride)`` of the callback's float32 logits when the action
    columns are to be read from them (``out`` then holds the values only; ``rows = 0``: none).
    Every slot served is stamped with the fire's weights generation (``C_FIREGEN`` -> ``SI_GEN``).
    Returns how many slots became ready."""
    E = _unpack(A)
    cfg, sinfo, pending = E.cfg, E.sinfo, E.pending
    arena_ctl = E.arena_ctl
    n_arenas = cfg[CFG_ARENAS]
    ai = route_id * n_arenas + i
    n_ready = 0
    fire_gen = E.ctl[C_FIREGEN]
    logits = _outputs.f32_rows(raw[0], raw[1], raw[2])
    for s in range(span_n[ai]):
        g = spans[ai, s, 0]
        start = spans[ai, s, 1]
        k = spans[ai, s, 2]
        off = spans[ai, s, 3]
        sinfo[g, SI_GEN] = fire_gen
        for t in range(k):
            _store_pred(E, g, off + t, out[start + t], logits, start + t)
        # Atomic: with the cache on, the requesting task drops its guard count concurrently.
        if _atomics.fetch_sub(pending, g, k) == k:
            sinfo[g, SI_STATUS] = ST_RESUME
            ready_out[n_ready] = g
            n_ready += 1
    span_n[ai] = 0
    if CACHE_ON:
        # Alias tickets resolve from their twin rows; then the arena's key index is cleared and
        # its epoch moves on (a claim probing the old index is then abandoned, see _try_alias).
        a_alias, a_alias_n = E.a_alias, E.a_alias_n
        for q in range(a_alias_n[ai]):
            g = a_alias[ai, q, 0]
            pos = a_alias[ai, q, 2]
            if pos < 0:
                continue  # abandoned claim
            j = a_alias[ai, q, 1]
            sinfo[g, SI_GEN] = fire_gen
            _store_pred(E, g, j, out[pos], logits, pos)
            if _atomics.fetch_sub(pending, g, 1) == 1:
                sinfo[g, SI_STATUS] = ST_RESUME
                ready_out[n_ready] = g
                n_ready += 1
        a_alias_n[ai] = 0
        idx = E.a_index[ai]
        for t in range(idx.shape[0]):
            idx[t] = 0
        _atomics.store_release(E.a_epoch, ai, E.a_epoch[ai] + 1)
    # Routed: mark it LENT (closed, empty) until the scheduler recycles it — immediately, or
    # once the callback dropped every view of its rows.
    _atomics.store_release(arena_ctl, ai, _arena.pack(True, 0, 0))
    return n_ready


@kernel(entry=True)
def spans_complete(A, spans, span_n, acc, ai):
    """Drain the message ring, then tell whether arena ``ai``'s span table covers every row it
    reserved.  Every span message is published before its commit, so a settled arena's messages
    are all *in* the ring — but a ring consumer stops at the oldest cell still being written, so
    one drain can leave a later, already published message behind.  Firing before the table is
    complete would route that span into the arena's next generation."""
    E = _unpack(A)
    drain(A, spans, span_n, acc)
    got = 0
    for s in range(span_n[ai]):
        got += spans[ai, s, 2]
    w = _atomics.load_acquire(E.arena_ctl, ai)
    return got == _arena.cursor_of(w) and E.a_alias_n[ai] == _arena.alias_of(w)


@kernel(entry=True)
def find_fireable(A, spans, span_n, acc):
    """The scheduler's per-iteration poll in one call: the first closed, settled arena over all
    routes (scanning each route's chain from its open arena onwards) whose span table is
    complete, encoded as ``route * n_arenas + index`` (``-2 - code`` when poisoned, -1 when
    none).  The message ring is drained in the same call."""
    E = _unpack(A)
    cfg, ctl = E.cfg, E.ctl
    n_arenas = cfg[CFG_ARENAS]
    found = -1
    for r in range(cfg[CFG_ROUTES]):
        first = (_atomics.load_acquire(ctl, C_ROUTE_CUR + 8 * r) + 1) % n_arenas
        i = sealable(A, r, first)
        if i >= 0:
            found = r * n_arenas + i
            break
        if i <= -2:
            found = -2 - (r * n_arenas + (-2 - i))
            break
    if found >= 0:
        if not spans_complete(A, spans, span_n, acc, found):
            return -1  # a span message is still being published: the next poll fires it
    else:
        drain(A, spans, span_n, acc)
    return found


@kernel(entry=True)
def finish_fire(A, spans, span_n, route_id, i, out, ready_out, recycle_now, gen, raw):
    """After the callback: route ``out`` back by position (``raw``: see ``route``; never with
    the cache on, whose log stores ``out``'s full rows), recycle the arena (unless a caller
    kept its rows), clear the helpers' stop request and queue the slots that became ready —
    one call per fire.  With the cache on, the rows' values (computed under generation ``gen``,
    read before the call) go to the insert log, the route's gated tickets are released (stale
    ones demoted) and a new view is published.  Returns how many slots became ready."""
    # borrowed: routing passes them on per row (no reference counting)
    A, spans, span_n, out, ready_out = _borrowed(A), _borrowed(spans), _borrowed(span_n), _borrowed(out), _borrowed(ready_out)
    E = _unpack(A)
    cfg = E.cfg
    ai = route_id * cfg[CFG_ARENAS] + i
    n_rows = _arena.cursor_of(_atomics.load_acquire(E.arena_ctl, ai))
    n_ready = route(A, spans, span_n, route_id, i, out, ready_out, raw)
    if CACHE_ON:
        _cache_log(E, route_id, ai, n_rows, out, gen)
        n_ready = _release_gated(A, E, route_id, ready_out, n_ready)
        _cache_publish(E)
    if recycle_now:
        _arena.recycle(E.arena_ctl, E.arena_done, ai)
    _atomics.store_release(E.ctl, C_STOP, 0)
    n_ready = _round_back(A, route_id, ready_out, n_ready)
    push_ready(A, ready_out, n_ready)
    return n_ready
