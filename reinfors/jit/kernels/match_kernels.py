
# ---- body: reinfors/jit/kernels/match_kernels.py -----------------------------------------------
# The Arena's match driver (reinfors/_runtime/match.py): batch stepping (one call applies a
# round's decisions to every game that moved, so Python runs per round, never per ply), a
# model-free contestant's round (encode + decide), and a choose round fused up to its callback.
# Uses this module's shared step semantics (game_kernels.py: active_agents, apply_step, weigh,
# observe, legal_mask) and the model-free decision parts of reinfors/jit/policies/modelfree.py.

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import dedupe as _dedupe_match
from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import DONE, RUNNING
from reinfors.jit.policies import modelfree as _mf_match

if TYPE_CHECKING:
    from reinfors.jit.kernels.engine_routing import arena_fill, close_all_open, find_fireable, finish_fire
    from reinfors.jit.kernels.engine_slots import work
    from reinfors.jit.kernels.game_kernels import active_agents, apply_step, legal_mask, observe, reset, weigh
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel(entry=True)
def step_slots(params, states, rngs, probs, slots, actions, amounts, weights, rewards, joint, agents):
    """Play ``actions[i]`` for the single active agent of game ``slots[i]``, for every ``i``.

    ``states: [n_slots, state_size] int64`` and ``rngs: [n_slots, RNG_WIDTH] uint64`` (chance
    streams) are advanced in place; ``rewards: [len(slots), n_players] float64`` receives each
    step's weighted per-agent rewards (``weights: [n_keys] float64``).  ``probs``, ``amounts``
    (``[n_players, n_keys]``), ``joint`` and ``agents`` (``[n_players] int64``) are scratch.
    Actions are trusted (a searched contestant only returns legal ids).  Single caller per call.
    """
    for i in range(slots.shape[0]):
        s = slots[i]
        active_agents(params, states[s], agents)
        for p in range(joint.shape[0]):
            joint[p] = 0
        joint[agents[0]] = actions[i]
        apply_step(params, states[s], joint, amounts, rngs[s], probs)
        weigh(amounts, weights, rewards[i])


@kernel(entry=True)
def movers(params, states, slots, agents, out):
    """``out[i]`` = the single active agent of game ``slots[i]`` (-1 once it has none)."""
    for i in range(slots.shape[0]):
        n = active_agents(params, states[slots[i]], agents)
        out[i] = agents[0] if n > 0 else -1


@kernel(entry=True)
def encode_movers(params, states, slots, rows, legal, agents):
    """For every ``i``: the observation (``rows: [len(slots), obs_size] float32``) and legal mask
    (``legal: [len(slots), n_actions] uint8``) of game ``slots[i]``'s single active agent, written
    in place — a model-free contestant's round of request rows.  ``agents`` is scratch."""
    for i in range(slots.shape[0]):
        st = states[slots[i]]
        active_agents(params, st, agents)
        observe(params, st, agents[0], rows[i])
        legal_mask(params, st, agents[0], legal[i])


@kernel(entry=True)
def decide_epsilon_greedy(srng, preds, row_uid, heads, legal, n_actions, epsilon, out):
    """EpsilonGreedyQ's decisions, exactly as the engine's ``_act`` makes them: ``out[i]`` from
    prediction row ``preds[row_uid[i]]`` (``[u, n_heads * n_actions] float64``), head ``heads[i]``
    and mask ``legal[i]``, drawing from stream ``srng[i]`` (``[n, RNG_WIDTH] uint64``, advanced)."""
    for i in range(out.shape[0]):
        out[i] = _mf_match.epsilon_greedy(srng[i], preds[row_uid[i]], heads[i], legal[i], n_actions, epsilon)


@kernel(entry=True)
def choose_gather(A, spans, span_n, acc, sinfo, ctl, arena_rows, n_arenas, status_col, park, error_word):
    """One ``choose`` round up to its callback, for a single-threaded choose runtime (nogil,
    one caller): advance every runnable slot (``work``), then — unless every slot parked or a
    kernel failed — close the open arena, find the fireable one and dedupe its rows by exact
    bytes in env order (``reinfors/jit/dedupe.py``).

    Returns ``(state, code, n, unique_src, row_uid)``: state 0 = arena ``code`` holds ``n`` rows
    to send (``unique_src``/``row_uid`` as ``order_unique``'s), 1 = every slot parked (done),
    2 = a kernel error is set in ``ctl[error_word]``, 3 = slots wait but nothing is fireable.
    """
    work(A, False, 0)
    if ctl[error_word] != 0:
        return 2, -1, 0, np.zeros(0, np.int64), np.zeros(0, np.int64)
    parked = True
    for g in range(sinfo.shape[0]):
        if sinfo[g, status_col] != park:
            parked = False
            break
    if parked:
        return 1, -1, 0, np.zeros(0, np.int64), np.zeros(0, np.int64)
    close_all_open(A, 0)
    code = find_fireable(A, spans, span_n, acc)
    if code < 0:
        return 3, code, 0, np.zeros(0, np.int64), np.zeros(0, np.int64)
    route = code // n_arenas
    i = code - route * n_arenas
    n = arena_fill(A, route, i)
    unique_src, row_uid = _dedupe_match.order_unique(arena_rows[route, i, :n], spans[code], span_n[code])
    return 0, code, n, unique_src, row_uid


# -- the phase scheduler's kernels (deterministic contestants: reinfors/_runtime/match.py) --------

_U_GOLDEN_MATCH = np.uint64(0x9E3779B97F4A7C15)
_U_M1_MATCH = np.uint64(0xBF58476D1CE4E5B9)
_U_M2_MATCH = np.uint64(0x94D049BB133111EB)


@kernel(inline="always")
def _fin_match(h):
    """``reinfors.arena._mix64``'s finaliser (SplitMix64's, applied twice), uint64."""
    for _r in range(2):
        h = (h ^ (h >> np.uint64(30))) * _U_M1_MATCH
        h = (h ^ (h >> np.uint64(27))) * _U_M2_MATCH
        h = h ^ (h >> np.uint64(31))
    return h


@kernel(inline="always")
def _fold_match(h, part):
    """One part folded into ``_mix64``'s hash: ``h = (h ^ part) * golden`` (uint64, wrapping)."""
    return (h ^ np.uint64(part)) * _U_GOLDEN_MATCH


@kernel(entry=True)
def mix_seeds(seed, first, count, domain, out):
    """``out[i] = reinfors.arena._mix64(seed, first + i, domain)`` for every ``i < count`` (the
    Arena's per-game chance seeds and per-pair opening seeds; ``seed`` as its low 64 bits)."""
    for i in range(count):
        h = _fold_match(np.uint64(0), seed)
        h = _fold_match(h, np.uint64(first + i))
        h = _fold_match(h, np.uint64(domain))
        out[i] = _fin_match(h)


@kernel(entry=True)
def draw_openings(params, seeds, n_moves, max_retries, out_states, out_rng, out_acts, probs, amounts, joint, agents, mask, rng):
    """``rf.starts.RandomStartingMoves(n_moves, max_retries).generate(game, reward, seeds[p])`` for
    every pair ``p``, as its ``_draw`` attempts make it: attempt ``t`` resets an episode under chance
    seed ``_mix64(seed, t)``, then each ply ``i`` plays ``legal[h % len(legal)]`` of the mover's
    ascending legal ids with ``h = _mix64(h, i)`` from ``h = _mix64(seed, t, 1)``; an attempt whose
    game ends during the opening (or right at its end) is redrawn.  Writes the position
    (``out_states[p]``), its chance stream (``out_rng[p]``) and the actions (``out_acts[p]``).
    Games listing legal ids in their own order are not drawn here (the caller checks).  Returns
    -1, or the first pair without a live opening in ``max_retries`` attempts.  ``probs``,
    ``amounts``, ``joint``, ``agents``, ``mask`` (``[n_actions] uint8``) and ``rng`` (``[1]
    uint64``) are scratch."""
    for p in range(seeds.shape[0]):
        st = out_states[p]
        ok = False
        for t in range(max_retries):
            rng[0] = _fin_match(_fold_match(_fold_match(np.uint64(0), seeds[p]), np.uint64(t)))
            reset(params, st, 0, rng, probs)
            h = _fin_match(_fold_match(_fold_match(_fold_match(np.uint64(0), seeds[p]), np.uint64(t)), np.uint64(1)))
            live = True
            for ply in range(n_moves):
                if st[DONE] != RUNNING:
                    live = False
                    break
                active_agents(params, st, agents)
                mover = agents[0]
                legal_mask(params, st, mover, mask)
                n = 0
                for a in range(mask.shape[0]):
                    if mask[a] != 0:
                        n += 1
                h = _fin_match(_fold_match(_fold_match(np.uint64(0), h), np.uint64(ply)))
                k = np.int64(h % np.uint64(n))
                action = -1
                for a in range(mask.shape[0]):
                    if mask[a] != 0:
                        if k == 0:
                            action = a
                            break
                        k -= 1
                for q in range(joint.shape[0]):
                    joint[q] = 0
                joint[mover] = action
                apply_step(params, st, joint, amounts, rng, probs)
                out_acts[p, ply] = action
            if live and st[DONE] == RUNNING:
                ok = True
                out_rng[p] = rng[0]
                break
        if not ok:
            return p
    return -1


@kernel(entry=True)
def phase_movers(params, states, game_of, seat_of, contestant, agents, out):
    """The open slots (``game_of >= 0``, ascending) whose single active agent is seated for
    ``contestant`` (``seat_of: [n_slots, 2]`` agent -> contestant) into ``out``; returns their
    count, or ``-1 - slot`` for an open slot with no active agent."""
    n = 0
    for s in range(game_of.shape[0]):
        if game_of[s] < 0:
            continue
        if active_agents(params, states[s], agents) < 1:
            return -1 - s
        if seat_of[s, agents[0]] == contestant:
            out[n] = s
            n += 1
    return n


@kernel(entry=True)
def step_record(params, states, rngs, probs, slots, actions, amounts, weights, rewards, joint, agents, pay, acts, length, finished):
    """:func:`step_slots`, then per game: its payoffs (``pay: [n_slots, 2]`` by agent seat) add
    the step's rewards, the action is recorded (``acts[s, length[s]]``; the caller keeps room),
    and a game that ended is listed in ``finished`` (in ``slots`` order).  Returns how many ended."""
    step_slots(params, states, rngs, probs, slots, actions, amounts, weights, rewards, joint, agents)
    n = 0
    for i in range(slots.shape[0]):
        s = slots[i]
        for p in range(pay.shape[1]):
            pay[s, p] += rewards[i, p]
        acts[s, length[s]] = actions[i]
        length[s] += 1
        if states[s, DONE] != RUNNING:
            finished[n] = s
            n += 1
    return n


@kernel(entry=True)
def open_games(params, states, rngs, probs, slots, next_id, n_games, game_of, seat_of, pay, acts, length, game_rng, has_open, open_states, open_rng, open_acts, open_len):
    """Open the next games (``next_id[0]`` on, below ``n_games``) into the free ``slots`` in
    order, as the Arena opens them: game ``g`` resets under chance seed ``game_rng[g]``, then —
    with openings (``has_open``) — takes pair ``g // 2``'s position ``open_states``, chance
    stream ``open_rng`` and its ``open_len`` actions ``open_acts`` (the caller keeps room in
    ``acts``); even games seat contestant 0 as agent 0, odd ones swap.  Returns how many opened."""
    opened = 0
    for i in range(slots.shape[0]):
        g = next_id[0]
        if g >= n_games:
            break
        s = slots[i]
        rngs[s, 0] = game_rng[g]
        reset(params, states[s], 0, rngs[s], probs)
        n_open = 0
        if has_open:
            pair = g // 2
            for j in range(states.shape[1]):
                states[s, j] = open_states[pair, j]
            rngs[s, 0] = open_rng[pair]
            n_open = open_len[pair]
            for j in range(n_open):
                acts[s, j] = open_acts[pair, j]
        length[s] = n_open
        for p in range(pay.shape[1]):
            pay[s, p] = 0.0
        seat_of[s, 0] = g % 2
        seat_of[s, 1] = 1 - g % 2
        game_of[s] = g
        next_id[0] = g + 1
        opened += 1
    return opened


@kernel(entry=True)
def choose_round(
    A, spans, span_n, acc, sinfo, ctl, arena_rows, n_arenas, status_col, park, error_word,
    prev_code, prev_n, uid, mode, q32, v32, p64, buf, ready_buf, raw,
):  # fmt: skip
    """One round of a single-threaded ``choose`` runtime between two callback calls: the
    previous fire's outputs routed back (unless ``prev_code < 0``), then :func:`choose_gather`,
    with the unique rows of the next fire copied out — one kernel call per callback call.

    The previous fire (arena ``prev_code``, ``prev_n`` rows; ``uid[r]`` the unique row of arena
    row ``r``, written by the previous call) answered with: ``mode`` 0, validated float64 rows ``p64: [u, W]``; 1, raw
    float32 Q rows ``q32: [u, W]``; 2, raw float32 logits ``q32: [u, >= W - 1]`` and values
    ``v32: [u]`` (the caller checked types and shapes).  Rows are expanded into ``buf[:prev_n]``
    (``[>= n, W] float64``) as the validators widen them, then routed (``finish_fire``).

    Returns ``(state, code, n, rows)``: :func:`choose_gather`'s states and codes, with ``rows:
    [u, O] float32`` the fire's unique rows (a fresh array, env order) and ``uid[:n]`` their
    arena rows' unique indices (``[>= n] int64``, for the next call); state 4 = a raw output
    held a non-finite value (nothing was routed: the caller's validator names it)."""
    O = arena_rows.shape[3]
    prev_uid = uid
    if prev_code >= 0:
        W = buf.shape[1]
        bad = 0
        if mode == 1:
            for r in range(prev_n):
                src = q32[prev_uid[r]]
                dst = buf[r]
                for c in range(W):
                    x = np.float64(src[c])
                    dst[c] = x
                    bad += (x - x) != 0.0
        elif mode == 2:
            for r in range(prev_n):
                u = prev_uid[r]
                src = q32[u]
                dst = buf[r]
                for c in range(W - 1):
                    x = np.float64(src[c])
                    dst[c] = x
                    bad += (x - x) != 0.0
                x = np.float64(v32[u])
                dst[W - 1] = x
                bad += (x - x) != 0.0
        else:
            for r in range(prev_n):
                src = p64[prev_uid[r]]
                dst = buf[r]
                for c in range(W):
                    dst[c] = src[c]
        if bad != 0:
            return 4, prev_code, 0, np.empty((0, O), np.float32)
        route_id = prev_code // n_arenas
        finish_fire(A, spans, span_n, route_id, prev_code - route_id * n_arenas, buf[:prev_n], ready_buf, True, np.int64(0), raw)
    state, code, n, unique_src, row_uid = choose_gather(
        A, spans, span_n, acc, sinfo, ctl, arena_rows, n_arenas, status_col, park, error_word
    )
    if state != 0:
        return state, code, n, np.empty((0, O), np.float32)
    for r in range(n):
        uid[r] = row_uid[r]
    route_id = code // n_arenas
    i = code - route_id * n_arenas
    u = unique_src.shape[0]
    rows = np.empty((u, O), np.float32)
    for j in range(u):
        src = arena_rows[route_id, i, unique_src[j]]
        for c in range(O):
            rows[j, c] = src[c]
    return 0, code, n, rows
