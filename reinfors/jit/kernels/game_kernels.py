
# ---- body: reinfors/jit/kernels/game_kernels.py ---------------------------------------------------
# Generic kernels over one game, written once for every game.  The generated header above binds
# G_init, G_step, G_legal, G_active, G_is_terminal, G_encode, G_chance_pending,
# G_chance_outcomes, G_apply_chance, G_info_key, G_settle, G_chance_uniform statically, so Numba inlines the game's rules and
# the module loads from the on-disk cache like any other reinfors kernel file.

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from typing import TYPE_CHECKING

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import DONE, HEADER, HORIZON, RUNNING, TERMINAL, TICKS, TRUNCATED

if TYPE_CHECKING:
    from reinfors.jit.kernels._header import (
        N_ACTIONS,
        G_active,
        G_apply_chance,
        G_chance_outcomes,
        G_chance_pending,
        G_chance_uniform,
        G_encode,
        G_info_key,
        G_init,
        G_is_terminal,
        G_legal,
        G_settle,
        G_step,
    )
# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel
def resolve_chance(params, state, rng, probs):
    """Sample and apply pending chance outcomes with ``rng`` until none is pending (in place).

    ``probs: [max(1, max_chance)] float64`` is scratch.  Returns the number of outcomes applied.
    """
    applied = 0
    while G_chance_pending(params, state):
        m = G_chance_uniform(params, state)
        if m > 0:  # a uniform node declared by the game: sample_chance's draw without the fan
            o = _rng.index_hi(rng, m)
        else:
            n = G_chance_outcomes(params, state, probs)
            o = _rng.sample_chance(rng, probs, n)
        G_apply_chance(params, state, o)
        applied += 1
    return applied


@kernel(entry=True)
def reset(params, state, horizon, rng, probs):
    """Start a fresh episode in ``state: [state_size] int64`` (header + game words), resolving chance."""
    for i in range(HEADER):
        state[i] = 0
    state[HORIZON] = horizon
    G_init(params, state)
    resolve_chance(params, state, rng, probs)


@kernel(entry=True)
def active_agents(params, state, out):
    """Agents acting this tick into ``out: [n_players] int64``; 0 when the episode is over."""
    if state[DONE] != RUNNING:
        return 0
    return G_active(params, state, out)


@kernel(entry=True)
def legal_mask(params, state, agent, mask):
    """Legal mask of ``agent`` into ``mask: [N_ACTIONS] uint8``; all zero when finished."""
    if state[DONE] != RUNNING:
        for a in range(mask.shape[0]):
            mask[a] = 0
        return 0
    return G_legal(params, state, agent, mask)


@kernel(entry=True)
def observe(params, state, agent, out):
    """Encode ``agent``'s observation into ``out: [obs_size] float32`` (works after the end too)."""
    G_encode(params, state, agent, out)


@kernel(entry=True)
def info_key(params, state, agent, out):
    """Information-state key bytes of ``agent`` into ``out: [max_key] uint8``; returns the length."""
    return G_info_key(params, state, agent, out)


@kernel
def check_joint(params, state, actions, agents, mask):
    """Validate a joint action.  Returns -1 when every active agent's action is legal, else the
    position in ``agents`` of the first offender.  ``agents``: the active list; ``mask`` scratch."""
    for j in range(agents.shape[0]):
        a = actions[agents[j]]
        if a < 0 or a >= mask.shape[0]:
            return j
        G_legal(params, state, agents[j], mask)
        if mask[a] == 0:
            return j
    return -1


@kernel
def step_rules(params, state, actions, amounts):
    """The deterministic part of a tick: zero ``amounts``, let the game step and add this tick's
    reward-key amounts, update TICKS and DONE.  Returns True when the episode goes on (chance may
    then be pending: ``apply_step`` samples it, ExpandAll search enumerates it)."""
    for p in range(amounts.shape[0]):
        for k in range(amounts.shape[1]):
            amounts[p, k] = 0.0
    state[TICKS] += 1
    G_step(params, state, actions, amounts)
    if G_is_terminal(params, state):
        state[DONE] = TERMINAL
        return False
    if state[HORIZON] > 0 and state[TICKS] >= state[HORIZON]:
        state[DONE] = TRUNCATED
        return False
    return True


@kernel(entry=True)
def apply_step(params, state, actions, amounts, rng, probs):
    """Advance one tick with an already validated joint action (in place).

    Zeroes ``amounts: [n_players, n_keys] float64`` and lets the game add this tick's reward-key
    amounts; updates TICKS and DONE; resolves chance unless the rules ended the episode — also on
    the tick that reaches the horizon, as reinfors 0.4.0 does (its truncated states show the next
    dice roll and Snake's respawned food).
    """
    if step_rules(params, state, actions, amounts) or state[DONE] == TRUNCATED:
        resolve_chance(params, state, rng, probs)
        if G_settle(params, state, amounts):  # a tick decided by its own chance (run-outs)
            state[DONE] = TERMINAL


@kernel(entry=True)
def weigh(amounts, weights, out):
    """Per-agent rewards ``out[p] = sum_k amounts[p, k] * weights[k]`` (float64, in place)."""
    for p in range(amounts.shape[0]):
        r = 0.0
        for k in range(amounts.shape[1]):
            r += amounts[p, k] * weights[k]
        out[p] = r


@kernel(entry=True)
def random_playouts(params, states, rngs, horizon, weights, n_players, n_chance, n_steps, obs_out, encode_obs):
    """Batched random legal play: each row of ``states: [B, state_size] int64`` takes uniformly
    random legal actions (``rngs: [B, 1] uint64``; ``n_players`` agents; chance fans of at most
    ``n_chance`` outcomes) for ``n_steps`` ticks, resetting finished
    episodes.  With ``encode_obs`` every tick also encodes agent 0's observation into
    ``obs_out: [B, obs_size]`` (else only the final one).

    Returns ``stats: [B, 4] float64`` = (ticks, finished episodes, sum of agent-0 returns,
    illegal-mask violations found).  Used by ``reinfors.testing.check_game`` and the stepping
    benchmark; the per-row work never leaves nopython code.
    """
    B = states.shape[0]
    n_keys = weights.shape[0]
    stats = np.zeros((B, 4), np.float64)
    mask = np.zeros(N_ACTIONS, np.uint8)
    agents = np.zeros(n_players, np.int64)
    actions = np.zeros(n_players, np.int64)
    amounts = np.zeros((n_players, n_keys), np.float64)
    rewards = np.zeros(n_players, np.float64)
    probs = np.zeros(max(1, n_chance), np.float64)
    for b in range(B):
        st = states[b]
        rg = rngs[b]
        ret = 0.0
        for _ in range(n_steps):
            if st[DONE] != RUNNING:
                stats[b, 1] += 1.0
                stats[b, 2] += ret
                ret = 0.0
                reset(params, st, horizon, rg, probs)
            na = active_agents(params, st, agents)
            for j in range(na):
                ag = agents[j]
                n = legal_mask(params, st, ag, mask)
                if n <= 0:
                    stats[b, 3] += 1.0
                    n = 1
                    mask[0] = 1
                pick = _rng.randbelow(rg, n)
                for a in range(N_ACTIONS):
                    if mask[a] != 0:
                        if pick == 0:
                            actions[ag] = a
                            break
                        pick -= 1
            apply_step(params, st, actions, amounts, rg, probs)
            weigh(amounts, weights, rewards)
            ret += rewards[0]
            if encode_obs:
                G_encode(params, st, 0, obs_out[b])
            stats[b, 0] += 1.0
        G_encode(params, st, 0, obs_out[b])
    return stats
