
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
from reinfors.jit.policies import modelfree as _mf_match

if TYPE_CHECKING:
    from reinfors.jit.kernels.engine_routing import arena_fill, close_all_open, find_fireable
    from reinfors.jit.kernels.engine_slots import work
    from reinfors.jit.kernels.game_kernels import active_agents, apply_step, legal_mask, observe, weigh
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel
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


@kernel
def movers(params, states, slots, agents, out):
    """``out[i]`` = the single active agent of game ``slots[i]`` (-1 once it has none)."""
    for i in range(slots.shape[0]):
        n = active_agents(params, states[slots[i]], agents)
        out[i] = agents[0] if n > 0 else -1


@kernel
def encode_movers(params, states, slots, rows, legal, agents):
    """For every ``i``: the observation (``rows: [len(slots), obs_size] float32``) and legal mask
    (``legal: [len(slots), n_actions] uint8``) of game ``slots[i]``'s single active agent, written
    in place — a model-free contestant's round of request rows.  ``agents`` is scratch."""
    for i in range(slots.shape[0]):
        st = states[slots[i]]
        active_agents(params, st, agents)
        observe(params, st, agents[0], rows[i])
        legal_mask(params, st, agents[0], legal[i])


@kernel
def decide_epsilon_greedy(srng, preds, row_uid, heads, legal, n_actions, epsilon, out):
    """EpsilonGreedyQ's decisions, exactly as the engine's ``_act`` makes them: ``out[i]`` from
    prediction row ``preds[row_uid[i]]`` (``[u, n_heads * n_actions] float64``), head ``heads[i]``
    and mask ``legal[i]``, drawing from stream ``srng[i]`` (``[n, RNG_WIDTH] uint64``, advanced)."""
    for i in range(out.shape[0]):
        out[i] = _mf_match.epsilon_greedy(srng[i], preds[row_uid[i]], heads[i], legal[i], n_actions, epsilon)


@kernel
def choose_gather(A, spans, span_n, acc, sinfo, ctl, arena_rows, n_arenas, status_col, park, error_word):
    """One ``choose`` round up to its callback, for a single-threaded choose runtime (nogil,
    one caller): advance every runnable slot (``work``), then — unless every slot parked or a
    kernel failed — close the open arena, find the fireable one and dedupe its rows by exact
    bytes in env order (``reinfors/jit/dedupe.py``).

    Returns ``(state, code, n, unique_src, row_uid)``: state 0 = arena ``code`` holds ``n`` rows
    to send (``unique_src``/``row_uid`` as ``order_unique``'s), 1 = every slot parked (done),
    2 = a kernel error is set in ``ctl[error_word]``, 3 = slots wait but nothing is fireable.
    """
    empty = np.zeros(0, np.int64)
    work(A, False, 0)
    if ctl[error_word] != 0:
        return 2, -1, 0, empty, empty
    parked = True
    for g in range(sinfo.shape[0]):
        if sinfo[g, status_col] != park:
            parked = False
            break
    if parked:
        return 1, -1, 0, empty, empty
    close_all_open(A, 0)
    code = find_fireable(A, spans, span_n, acc)
    if code < 0:
        return 3, code, 0, empty, empty
    route = code // n_arenas
    i = code - route * n_arenas
    n = arena_fill(A, route, i)
    unique_src, row_uid = _dedupe_match.order_unique(arena_rows[route, i, :n], spans[code], span_n[code])
    return 0, code, n, unique_src, row_uid
