"""Public conformance helpers: run these on your own game before anything else.

``check_game(game)`` plays seeded random legal games through the single path (``rf.Env``) and the
batched path (one njit call over many state rows) and checks what every game must satisfy:

* spaces: ``observation_space().shape`` / ``action_space().n`` agree with what the kernels write;
* shapes and dtypes: observations float32 of the declared shape, finite, inside ``[low, high]``,
  and *fully written* by the encoder (a NaN-prefilled buffer must come back without NaN);
* mask invariants: every active agent has at least one legal action, inactive agents have none,
  ids lie in ``[0, n)``; an illegal action is rejected and leaves the state unchanged;
* terminal handling: a finished episode has no active agents and no legal actions and refuses
  ``step``; the batched path truncates at the horizon; rewards are finite;
* snapshot round-trip: ``snapshot → to_bytes → from_bytes → restore`` continues exactly;
* single vs batched: the batched kernel and a step-by-step replay of the same random stream reach
  bit-identical state rows and observations (catches hidden global state in a game).

It raises :class:`GameCheckError` (an ``AssertionError``) naming the violated invariant.
"""

from __future__ import annotations

import numpy as np

from .env import Env, EnvSnapshot
from .games import GameHandle
from .jit import rng as _rng
from .jit.games._contract import DONE, RUNNING, TICKS
from .rewards import Reward

__all__ = ["GameCheckError", "check_game"]


class GameCheckError(AssertionError):
    """A game broke the contract checked by :func:`check_game`."""


def _fail(game: str, msg: str):
    raise GameCheckError(f"check_game({game!r}): {msg}")


def _check_obs(name, env, space, agent):
    obs = env.observe(agent)
    if not isinstance(obs, np.ndarray) or obs.dtype != np.float32:
        _fail(
            name,
            f"observe({agent}) must return a float32 ndarray, got {type(obs).__name__} {getattr(obs, 'dtype', None)}",
        )
    if obs.shape != space.shape:
        _fail(name, f"observe({agent}) shape {obs.shape} != observation_space().shape {space.shape}")
    flat = obs.ravel()
    bad = np.flatnonzero(~np.isfinite(flat))
    if bad.size:
        i = int(bad[0])
        _fail(name, f"encode() wrote the non-finite value {float(flat[i])!r} at observation index {i} for agent {agent}")
    lo, hi = space.low.ravel(), space.high.ravel()
    bad = np.flatnonzero((flat < lo) | (flat > hi))
    if bad.size:
        i = int(bad[0])
        _fail(
            name,
            f"encode() wrote {float(flat[i])!r} at observation index {i} for agent {agent}, outside the observation "
            f"box [{float(lo[i])!r}, {float(hi[i])!r}] (declare the box: OBS_LOW / OBS_HIGH of a from_module game, "
            "obs_low= / obs_high= of rf.games.custom)",
        )
    # The encoder must write every element: prefill with NaN and encode again.
    buf = np.full(int(np.prod(space.shape)), np.nan, np.float32)
    env._k.observe(env._def.params, env._state, agent, buf)
    if np.isnan(buf).any():
        _fail(name, f"the encoder left {int(np.isnan(buf).sum())} observation elements unwritten for agent {agent}")
    if not np.array_equal(buf.reshape(space.shape), obs):
        _fail(name, "encoding the same state twice gave different observations")


def _check_tick(name, env, space, n_actions):
    active = env.active_agents()
    if env.done():
        if active:
            _fail(name, f"a finished episode reports active agents {active}")
    elif not active:
        _fail(name, "an unfinished episode has no active agents")
    if len(set(active)) != len(active):
        _fail(name, f"active agents repeat: {active}")
    for agent in range(env.num_agents()):
        legal = env.legal_actions(agent)
        if agent in active and not legal:
            _fail(name, f"active agent {agent} has no legal action at tick {env.ticks}")
        if agent not in active and legal:
            _fail(name, f"inactive agent {agent} has legal actions {legal}")
        # A game with a ``legal_order`` export (chess) lists its ids in its own order.
        ordered = getattr(env._def.ns, "legal_order", None) is not None
        listed = sorted(set(legal)) if ordered else legal
        if any(a < 0 or a >= n_actions for a in legal) or listed != sorted(set(legal)) or len(legal) != len(set(legal)):
            _fail(name, f"legal actions of agent {agent} are not sorted unique ids in [0, {n_actions}): {legal}")
        _check_obs(name, env, space, agent)
    return active


def _random_joint(env, active, rs):
    return {a: int(rs.choice(env.legal_actions(a))) for a in active}


def check_game(game: GameHandle, *, episodes: int = 20, max_steps: int = 400, batch: int = 16, seed: int = 0) -> dict:
    """Run the conformance checks on ``game``; return counts of what was exercised.

    ``episodes`` random single-path episodes of at most ``max_steps`` ticks each, and a batched
    run over ``batch`` rows of ``max_steps`` ticks.

    Args:
        game: the game to check (a built-in or ``rf.games.custom`` / ``from_module`` handle).
        episodes: random single-``Env`` episodes to play.
        max_steps: the tick cap of each episode and of the batched run.
        batch: rows of the batched run.
        seed: the seed of the random moves.

    Returns:
        Counts of what was exercised: ``episodes``, ``ticks``, ``finished``, ``snapshots``,
        ``illegal_rejections``, ``batched_ticks``.

    Raises:
        TypeError: ``game`` is not a ``GameHandle``.
        GameCheckError: a violated invariant (an ``AssertionError`` naming it).
        GameContractError: a function writes past a declared size (user games).
    """
    if not isinstance(game, GameHandle):
        raise TypeError(f"check_game expects a GameHandle, got {type(game).__name__}")
    d = game._def
    name = d.name
    space = game.observation_space()
    n_actions = game.action_space().n
    if space.shape != d.obs_shape or n_actions != d.n_actions:
        _fail(name, "spaces disagree with the game definition")
    rs = np.random.default_rng(seed)
    stats = {"episodes": 0, "ticks": 0, "finished": 0, "snapshots": 0, "illegal_rejections": 0, "batched_ticks": 0}
    for ep in range(episodes):
        env = Env(game, Reward(), seed=seed + ep)
        if env.ticks != 0 or env.rewards is not None:
            _fail(name, "a fresh Env must start at tick 0 with rewards None")
        snap_at = int(rs.integers(0, 8))
        for _ in range(max_steps):
            active = _check_tick(name, env, space, n_actions)
            if env.done():
                break
            if env.ticks == snap_at:
                _check_snapshot(name, env, rs)
                stats["snapshots"] += 1
            if _check_illegal(name, env, active, n_actions):
                stats["illegal_rejections"] += 1
            before = env.ticks
            env.step(_random_joint(env, active, rs))
            rewards = env.rewards
            if rewards is None or len(rewards) != env.num_agents() or not np.isfinite(rewards).all():
                _fail(name, f"rewards after a step must be {env.num_agents()} finite floats, got {rewards}")
            if env.ticks != before + 1:
                _fail(name, "ticks must grow by exactly one per step")
            stats["ticks"] += 1
        if env.done():
            stats["finished"] += 1
            try:
                env.step({})
            except ValueError:
                pass
            else:
                _fail(name, "step after the end must raise ValueError")
            env.reset()
            if env.done() or env.ticks != 0:
                _fail(name, "reset() must start a fresh, unfinished episode at tick 0")
        stats["episodes"] += 1
    stats["batched_ticks"] = _check_batched(name, game, batch, max_steps, seed)
    return stats


def _check_illegal(name, env, active, n_actions) -> bool:
    """An illegal (or out-of-range) action must raise ValueError and change nothing."""
    agent = active[0]
    legal = set(env.legal_actions(agent))
    illegal = next((a for a in range(n_actions) if a not in legal), n_actions)
    before = env._state.copy(), env._rng.copy(), env.rewards
    joint = {a: env.legal_actions(a)[0] for a in active}
    joint[agent] = illegal
    try:
        env.step(joint)
    except ValueError:
        pass
    else:
        _fail(name, f"illegal action {illegal} for agent {agent} was accepted")
    if not (np.array_equal(before[0], env._state) and np.array_equal(before[1], env._rng) and before[2] == env.rewards):
        _fail(name, "a rejected step changed the Env")
    return True


def _check_snapshot(name, env, rs):
    """snapshot → bytes → restore on a fork must continue exactly like the original."""
    blob = env.snapshot().to_bytes()
    other = env.fork(seed=12345)
    other.restore(EnvSnapshot.from_bytes(blob))
    probe_a = env.fork()
    for _ in range(6):
        if probe_a.done():
            break
        joint = _random_joint(probe_a, probe_a.active_agents(), rs)
        ev_a = probe_a.step(joint)
        ev_b = other.step(joint)
        if ev_a != ev_b or probe_a.rewards != other.rewards or not np.array_equal(probe_a._state, other._state):
            _fail(name, "a restored snapshot did not continue exactly like the original")
        for agent in range(env.num_agents()):
            if not np.array_equal(probe_a.observe(agent), other.observe(agent)):
                _fail(name, "a restored snapshot observes differently")


def _check_batched(name, game, batch, steps, seed) -> int:
    """The batched kernel and a step-by-step replay of the same stream must agree bit for bit."""
    d = game._def
    k = d.kernels
    weights = np.array(d.reward_defaults, np.float64)
    states = np.zeros((batch, d.state_size), np.int64)
    rngs = np.zeros((batch, _rng.RNG_WIDTH), np.uint64)
    probs = np.zeros(max(1, d.max_chance), np.float64)
    for b in range(batch):
        _rng.seed_row(rngs[b], seed, b, 7)
        k.reset(d.params, states[b], d.horizon, rngs[b], probs)
    replay_states, replay_rngs = states.copy(), rngs.copy()
    obs = np.zeros((batch, d.obs_size), np.float32)
    stats = k.random_playouts(d.params, states, rngs, d.horizon, weights, d.n_players, d.max_chance, steps, obs, True)
    if stats[:, 3].sum() != 0:
        _fail(name, "the batched path met an active agent without a legal action")
    if not np.isfinite(stats).all():
        _fail(name, "the batched path produced non-finite returns")
    # Step-by-step replay of rows 0 and 1 through the single-step kernels.
    mask = np.zeros(d.n_actions, np.uint8)
    agents = np.zeros(d.n_players, np.int64)
    actions = np.zeros(d.n_players, np.int64)
    amounts = np.zeros((d.n_players, len(d.reward_keys)), np.float64)
    one_obs = np.zeros(d.obs_size, np.float32)
    for b in range(min(batch, 2)):
        st, rg = replay_states[b], replay_rngs[b]
        for _ in range(steps):
            if st[DONE] != RUNNING:
                k.reset(d.params, st, d.horizon, rg, probs)
            na = k.active_agents(d.params, st, agents)
            for j in range(na):
                k.legal_mask(d.params, st, agents[j], mask)
                ids = np.flatnonzero(mask)
                actions[agents[j]] = ids[_rng.randbelow(rg, len(ids))]
            k.apply_step(d.params, st, actions, amounts, rg, probs)
            k.observe(d.params, st, 0, one_obs)
        if not np.array_equal(st, states[b]) or not np.array_equal(one_obs, obs[b]):
            _fail(name, f"batched row {b} and its step-by-step replay diverged (hidden state in the game?)")
        if st[TICKS] < 0:
            _fail(name, "negative tick counter")
    return int(stats[:, 0].sum())
