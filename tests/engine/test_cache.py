"""The inference cache (``infer_cache=N``): behaviour identity with the cache off, gated
tickets and weights generations (demotion, no stale value served), alias tickets, the liveness
ladder, capacity overflow and telemetry.  The engine internals are in
``reinfors/jit/kernels/engine_cache.py`` (``_request_cached``, ``_release_gated``, ``_cache_publish``).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numba import njit

import reinfors as rf
from reinfors.jit.games._contract import HEADER

C4 = rf.games.Connect4()
C4_REWARD = rf.Reward(win=1.0, loss=-1.0)
FIELDS = {
    "dqn": ("obs", "players", "actions", "rewards", "next_obs", "dones", "can_bootstrap", "discounts", "masks"),
    "ppo": ("obs", "players", "actions", "behavior_log_probs", "advantages", "returns", "values"),
    "alphazero": ("obs", "players", "policy_targets", "value_targets", "policy_weights"),
    "treestrap": ("obs", "players", "targets", "masks"),
}


def _w(obs_size, cols, seed):
    return np.random.default_rng(seed).standard_normal((obs_size, cols)) * 0.3


def _rowwise(obs, w):
    # Row-independent by construction (no BLAS blocking that could depend on the batch shape).
    return (obs[:, :, None].astype(np.float64) * w[None]).sum(axis=1)


def pv_infer(obs_size, n_actions, seed=0):
    w = _w(obs_size, n_actions + 1, seed)

    def infer(obs):
        out = _rowwise(obs, w)
        return out[:, :n_actions], np.tanh(out[:, n_actions])

    return infer


def q_infer(obs_size, n_actions, heads=1, seed=0):
    w = _w(obs_size, heads * n_actions, seed)
    return lambda obs: _rowwise(obs, w).reshape(len(obs), heads, n_actions)


def _same(a, b, learner):
    for name in FIELDS[learner]:
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and np.array_equal(x, y), name
    for key in ("episodes", "decisions", "requested_rows", "tail_rows", "terminal_sims", "depthcap_sims"):
        assert a.telemetry[key] == b.telemetry[key], key


def _check_counts(t):
    """Cache telemetry identities: every requested row is looked up; served hits and real rows
    never exceed the request (the rest were aliases of an identical row)."""
    assert t["cache_lookups"] == t["requested_rows"]
    assert t["infer_rows"] + t["cache_hits"] <= t["requested_rows"]
    assert t["cache_hits"] >= 0 and t["cache_demotions"] >= 0


COMPOSITIONS = {
    "c4_dqn": (C4, C4_REWARD, rf.policies.EpsilonGreedyQ(epsilon=0.2), rf.learners.Dqn(n_step=3), "q", 150),
    "gridworld_dqn": (rf.games.GridWorld(), None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), "q", 150),
    "c4_ppo": (C4, C4_REWARD, rf.policies.Ppo(), rf.learners.Ppo(), "pv", 150),
    "kuhn_ppo": (rf.games.KuhnPoker(), None, rf.policies.Ppo(), rf.learners.Ppo(), "pv", 150),
    "c4_az": (C4, C4_REWARD, rf.policies.AlphaZero(num_simulations=24), rf.learners.AlphaZero(), "pv", 120),
    "c4_az_maxn": (
        C4,
        C4_REWARD,
        rf.policies.AlphaZero(num_simulations=12, sequential_backup="maxn"),
        rf.learners.AlphaZero(),
        "pv",
        60,
    ),
    "c4_mcts": (C4, C4_REWARD, rf.policies.Mcts(num_simulations=16), rf.learners.TreeStrap(), "q", 100),
    "c4_minimax": (C4, C4_REWARD, rf.policies.Minimax(depth=3), rf.learners.TreeStrap(), "q", 60),
    "c4_selexp": (
        C4,
        C4_REWARD,
        rf.policies.SelectiveExpectimax(expansion_budget=6, top_k=3, n_heads=2),
        rf.learners.TreeStrap(interior_targets=True),
        "q",
        60,
    ),
    "snake_az": (
        rf.games.Snake(grid_size=6, food=1, max_ticks=40),
        rf.Reward(),
        rf.policies.AlphaZero(num_simulations=8),
        rf.learners.AlphaZero(),
        "pv",
        80,
    ),
}


def _dims(game):
    return int(np.prod(game.observation_space().shape)), int(game.action_space().n)


def _engine(name, cache, **kw):
    game, reward, policy, learner, _, _ = COMPOSITIONS[name]
    kw.setdefault("n_games", 8)
    return rf.Engine(game, reward, policy, learner, seed=5, infer_cache=cache, **kw)


def _infer(name, engine):
    game, _, policy, _, out, _ = COMPOSITIONS[name]
    obs, A = _dims(game)
    if out == "pv":
        return pv_infer(obs, A)
    return q_infer(obs, A, heads=policy.n_heads if policy.output == "q" else 1)


# Every game x family with the cache on compiles a kernel module of its own (~1.5 min cold on 2
# cores): the default tier keeps the ones other tests share (gridworld and Kuhn model-free,
# Connect4 AlphaZero), the slow tier runs all.
_SLOW_CACHE = {"snake_az", "c4_selexp", "c4_minimax", "c4_dqn"}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_CACHE else n for n in sorted(COMPOSITIONS)]
)
def test_cache_on_is_bit_identical_to_cache_off(name):
    """Behaviour identity: with fixed weights the cache changes no record, for every policy,
    across several windows, at 1 and 2 threads."""
    learner = COMPOSITIONS[name][3].name
    floor = COMPOSITIONS[name][5]
    off = _engine(name, 0, n_threads=1)
    ons = [_engine(name, 64, n_threads=1), _engine(name, 5000, n_threads=2, batch_size=3)]
    infer = _infer(name, off)
    hits = 0
    for _ in range(3):
        ref = off.collect(floor, infer)
        for on in ons:
            b = on.collect(floor, infer)
            _same(ref, b, learner)
            _check_counts(b.telemetry)
            hits += b.telemetry["cache_hits"]
    assert ref.telemetry["cache_lookups"] == 0 and ref.telemetry["cache_hits"] == 0
    assert hits > 0  # every composition revisits positions (openings, transpositions, trees)


def test_hits_save_callback_rows():
    """AlphaZero re-evaluates its previous trees' nodes: with a cache most of them are hits."""
    off, on = _engine("c4_az", 0), _engine("c4_az", 100_000)
    infer = _infer("c4_az", off)
    a, b = off.collect(300, infer), on.collect(300, infer)
    assert b.telemetry["cache_hits"] > 0.3 * b.telemetry["requested_rows"]
    assert b.telemetry["infer_rows"] < 0.7 * a.telemetry["infer_rows"]


@pytest.mark.parametrize("capacity", [1, 3, 7])
def test_capacity_overflow_evicts_and_stays_identical(capacity):
    off, on, big = _engine("c4_az", 0), _engine("c4_az", capacity), _engine("c4_az", 100_000)
    infer = _infer("c4_az", off)
    for _ in range(2):
        ref, b, c = off.collect(100, infer), on.collect(100, infer), big.collect(100, infer)
        _same(ref, b, "alphazero")
        _check_counts(b.telemetry)
    assert b.telemetry["cache_hits"] < c.telemetry["cache_hits"]


def test_aliases_claim_identical_rows_in_flight():
    """Every game starts from the empty board: at the first decision all root rows are
    identical and in flight together, so all but one are alias tickets (no cache entry exists
    yet)."""
    for threads in (1, 2):
        e = _engine("c4_az", 1000, n_games=32, n_threads=threads, batch_size=32)
        off = _engine("c4_az", 0, n_games=32, n_threads=threads, batch_size=32)
        infer = _infer("c4_az", e)
        calls = []

        def spy(obs, calls=calls, infer=infer):
            calls.append(obs.copy())
            return infer(obs)

        b = e.collect(1, spy)
        _same(off.collect(1, infer), b, "alphazero")
        first = calls[0]
        # the empty board went to the callback once, however many slots asked for it
        assert (np.abs(first).sum(axis=1) == 0).sum() <= 1
        t = b.telemetry
        assert t["requested_rows"] - t["infer_rows"] - t["cache_hits"] >= 31


@pytest.mark.slow  # the Minimax family with the cache: a kernel module of its own
def test_minimax_rounds_alias_their_transpositions():
    """Minimax rounds hold transpositions: request-local alias tickets."""
    m = _engine("c4_minimax", 1000, n_games=2)
    t = m.collect(1, _infer("c4_minimax", m)).telemetry
    assert t["requested_rows"] - t["infer_rows"] - t["cache_hits"] > 0  # transpositions


def _kuhn(cache, **kw):
    return rf.Engine(rf.games.KuhnPoker(), None, rf.policies.Ppo(), rf.learners.Ppo(), seed=1, infer_cache=cache, **kw)


class GenCallback:
    """Per-player PPO callbacks whose critic value *is* the weights generation they run under:
    a record's ``values`` entry tells which generation served it."""

    def __init__(self, engine, bump_player=None, bump_at_call=None):
        self.gen = [0, 0]
        self.calls = [0, 0]
        self.rows = [0, 0]
        self.engine, self.bump_player, self.bump_at_call = engine, bump_player, bump_at_call
        self.threads = set()

    def fn(self, p):
        def infer(obs):
            self.threads.add(threading.get_ident())
            self.calls[p] += 1
            self.rows[p] += len(obs)
            if p == self.bump_player and self.calls[p] == self.bump_at_call:
                # weights change *during* the collect, while other rows hold gated hits
                self.gen[p] += 1
                self.engine.weights_updated(player=p)
            logits = np.zeros((len(obs), 2))
            logits[:, 0] = obs.sum(axis=1)  # row-dependent, generation-independent policy
            return logits, np.full(len(obs), float(self.gen[p]))

        return infer

    def fns(self):
        return [self.fn(0), self.fn(1)]


def test_weights_update_between_collects_invalidates_every_entry():
    e = _kuhn(10_000, n_games=16)
    cb = GenCallback(e)
    b = e.collect(300, cb.fns())
    assert b.telemetry["cache_hits"] > 0 and set(np.unique(b.values)) == {0.0}
    cb.gen = [1, 1]
    e.weights_updated()
    b = e.collect(300, cb.fns())
    # records completed beyond the first window's cut arrive now, stamped generation 0; every
    # decision inferred after the update has a generation-1 value (none is ever served stale)
    new = b.weights_generations == 1
    assert new.sum() > len(b.values) // 2
    assert set(np.unique(b.values[new])) == {1.0} and set(np.unique(b.values[~new])) <= {0.0}
    assert b.telemetry["cache_hits"] > 0  # generation-1 entries are


def test_per_player_update_affects_only_that_players_partition():
    e = _kuhn(10_000, n_games=16)
    cb = GenCallback(e)
    # Cache keys are state rows, and PPO asks each player's values on more rows than its own
    # decisions: a first window of 300 records leaves ~5 of player 0's keys unseen (they then
    # miss in the second window whatever the update did); 20k records meet them all.
    e.collect(20_000, cb.fns())
    cb.gen[1] = 1
    e.weights_updated(player=1)
    cb.rows = [0, 0]
    b = e.collect(300, cb.fns())
    new = b.weights_generations == 1  # (records carried over from the first window: generation 0)
    assert set(np.unique(b.values[(b.players == 1) & new])) == {1.0}
    assert set(np.unique(b.values[(b.players == 1) & ~new])) <= {0.0}
    assert set(np.unique(b.values[b.players == 0])) == {0.0}
    # player 0's entries survived: its rows are all hits (one miss allowed for an insert the
    # log dropped); player 1 re-infers its rows (6 deals x 2 decisions, less what 300 miss)
    assert cb.rows[1] >= 6 and cb.rows[0] <= 1


def _spy_slots(engine):
    """White-box: capture each delivered record's (slot, level) in batch order (the batch does
    not expose them; ``Runtime.take_records`` hands the pool over ordered by (level, slot,
    sequence)).  The engine must have collected once (its runtime exists)."""
    from reinfors.jit import engine_codes as C

    captured = {}
    rt = engine._rt
    take = rt.take_records

    def spy():
        out = take()
        captured["slot_level"] = out["r_meta"][:, [C.RM_SLOT, C.RM_LEVEL]].copy()
        return out

    rt.take_records = spy
    return captured


def test_gated_tickets_outliving_a_weights_update_are_demoted():
    """After warm-up every row is a hit.  Player 0's weights change at each call of its
    callback (so its rows keep missing and its route keeps firing), and its first call also
    changes player 1's weights: player 1's hits gated at that moment are demoted (re-inferred),
    never served.  ``batch_size`` = n_games keeps them gated until quiescence, after player 0's
    fire.  A value says which generation served a decision, and each slot's decisions happen in
    level order, so once a slot was served generation 1, a later generation-0 value would be a
    stale hit."""
    demotions = 0
    for threads in (1, 2):
        e = _kuhn(10_000, n_games=64, n_threads=threads, batch_size=64, learn_players=[1])
        cb = GenCallback(e)
        e.collect(400, cb.fns())
        calls = [0]

        def player0(obs, cb=cb, e=e, inner=cb.fn(0), calls=calls):
            calls[0] += 1
            cb.gen[0] += 1
            e.weights_updated(player=0)
            if calls[0] == 1:
                cb.gen[1] += 1
                e.weights_updated(player=1)
            return inner(obs)

        cb.gen[0] += 1
        e.weights_updated(player=0)
        captured = _spy_slots(e)
        b = e.collect(600, [player0, cb.fn(1)])
        demotions += b.telemetry["cache_demotions"]
        _check_counts(b.telemetry)
        assert cb.gen[1] == 1 and 1.0 in b.values and calls[0] > 1
        slot_level = captured["slot_level"]
        for s in np.unique(slot_level[:, 0]):
            mine = np.flatnonzero(slot_level[:, 0] == s)
            v = b.values[mine[np.argsort(slot_level[mine, 1], kind="stable")]]
            assert set(np.unique(v)) <= {0.0, 1.0}
            first_new = np.argmax(v == 1.0) if (v == 1.0).any() else len(v)
            assert (v[first_new:] == 1.0).all(), f"slot {s}: a generation-0 value after a generation-1 one"
        after = e.collect(200, cb.fns())
        assert set(np.unique(after.values)) == {1.0}  # the old generation is gone for good
    assert demotions > 0


# A relay game: player 0 moves once at the start (always the same observation), then player 1
# moves up to ``params[0]`` times (action 1 on every fourth move ends the episode early, so the
# slots' episodes drift apart).  With per-player callbacks player 0's route sees only a trickle
# of identical rows — all cache hits after the first — beside a busy player-1 route.
TICK = HEADER
DONE = HEADER + 1


@njit
def relay_init(params, state):
    state[TICK] = 0
    state[DONE] = 0


@njit
def relay_active(params, state, out):
    out[0] = 0 if state[TICK] == 0 else 1
    return 1


@njit
def relay_legal(params, state, agent, mask):
    ok = (state[TICK] == 0) == (agent == 0)
    mask[0] = 1 if ok else 0
    mask[1] = 1 if ok else 0
    return 2 if ok else 0


@njit
def relay_step(params, state, actions, amounts):
    p = 0 if state[TICK] == 0 else 1
    if p == 1 and actions[1] == 1 and state[TICK] % 4 == 0:
        state[DONE] = 1
    state[TICK] += 1
    if state[TICK] > params[0] or state[DONE] == 1:
        amounts[p, 0] += 1.0


@njit
def relay_terminal(params, state):
    return state[TICK] > params[0] or state[DONE] == 1


@njit
def relay_encode(params, state, agent, out):
    out[0] = state[TICK] / params[0]
    out[1] = float(agent)


def relay_game(k=10):
    return rf.games.custom(
        "relay",
        n_players=2,
        n_actions=2,
        obs_shape=(2,),
        state_size=HEADER + 2,
        reward_keys=("win",),
        reward_defaults=(1.0,),
        init=relay_init,
        step=relay_step,
        legal=relay_legal,
        active=relay_active,
        is_terminal=relay_terminal,
        encode=relay_encode,
        params=[k],
    )


@pytest.mark.slow  # a user game compiled twice (cache off / on); the ladder's close is model-checked in the fast tier
def test_hit_only_route_is_released_by_the_stall_ladder():
    """Player 1's weights change at every call of its callback, so its rows always miss and its
    route fires every 16 rows.  Player 0's rows (episode starts, all identical) are hits that
    wait gated on a route that never fires and never reaches its capacity: after 8 fires
    engine-wide without progress the ladder releases them without a callback call."""
    batches = []
    for cache in (10_000, 0):
        e = rf.Engine(relay_game(), None, rf.policies.Ppo(), rf.learners.Ppo(), 64, seed=3, infer_cache=cache,
                      n_threads=1, batch_size=16)  # fmt: skip
        cb = GenCallback(e)
        e.collect(500, cb.fns())

        def every(obs, cb=cb, e=e, inner=cb.fn(1)):
            cb.gen[1] += 1
            e.weights_updated(player=1)
            return inner(obs)

        cb.gen[1] += 1
        e.weights_updated(player=1)
        batches.append(e.collect(1500, [cb.fn(0), every]))
    on, off = batches
    assert on.telemetry["stall_releases"] >= 1
    assert off.telemetry["stall_releases"] == 0 and on.telemetry["cache_hits"] > 0
    # the values tell the call order apart; the decisions themselves are identical
    for name in ("obs", "players", "actions", "behavior_log_probs"):
        assert np.array_equal(getattr(on, name), getattr(off, name)), name


@pytest.mark.slow  # Snake model-free with the cache: a kernel module no other test compiles
def test_slow_route_beside_a_fast_one_and_unequal_load():
    """Snake with three snakes and per-player callbacks: dead snakes stop requesting (unequal
    load) and one callback is slow.  Batches stay identical to the cache-off engine."""
    import time

    game = rf.games.Snake(num_snakes=3, grid_size=7, food=2, max_ticks=30)
    O, A = _dims(game)
    base = pv_infer(O, A)

    def slow(obs):
        time.sleep(0.0005)
        return base(obs)

    fns = [base, slow, base]
    mk = lambda cache: rf.Engine(  # noqa: E731
        game, rf.Reward(), rf.policies.Ppo(), rf.learners.Ppo(), 12, seed=2, infer_cache=cache, batch_size=12
    )
    on, off = mk(1000), mk(0)
    for _ in range(2):
        a, b = off.collect(200, fns), on.collect(200, fns)
        _same(a, b, "ppo")
        _check_counts(b.telemetry)


def test_infer_cache_validation():
    with pytest.raises(OverflowError):
        _engine("c4_az", -1)
    e = _engine("c4_az", 1 << 40)
    with pytest.raises(MemoryError, match="infer_cache"):  # 0.4.0 has no cap: ours is bounded
        e.collect(1, _infer("c4_az", e))
    with pytest.raises(ValueError, match="player 2 out of range"):
        _kuhn(10, n_games=2).weights_updated(player=2)


def test_snapshot_restore_with_the_cache_on_continues_record_exactly():
    """Snapshots exclude the cache; a restored cache-on engine continues exactly like the
    uninterrupted one.  (infer_cache is part of the snapshot fingerprint, as in 0.4.0.)"""
    a = _engine("c4_az", 10_000)
    infer = _infer("c4_az", a)
    a.collect(100, infer)
    snap = rf.EngineSnapshot.from_bytes(a.snapshot().to_bytes())
    b = _engine("c4_az", 10_000, batch_size=3)
    b.collect(50, infer)  # a warm cache of another history must not leak into the restore
    b.restore(snap)
    with pytest.raises(ValueError, match="different composition"):
        _engine("c4_az", 0).restore(snap)
    for _ in range(2):
        x, y = a.collect(100, infer), b.collect(100, infer)
        _same(x, y, "alphazero")
        assert y.telemetry["cache_hits"] > 0


def test_zero_outputs_after_a_callback_error_or_stop_are_never_cached():
    """After a callback error (or a stream's stop()) the window finishes on all-zero outputs and
    is discarded; those zeros must not enter the cache.  Check: the engine then continues
    exactly like a restore of its own snapshot into an engine whose cache is empty."""
    e = _engine("c4_az", 10_000)
    infer = _infer("c4_az", e)
    calls = [0]

    def flaky(obs):
        calls[0] += 1
        if calls[0] == 3:
            raise KeyError("boom")
        return infer(obs)

    e.collect(100, infer)
    with pytest.raises(KeyError):
        e.collect(300, flaky)
    s = e.collect_stream(300, infer)
    next(s)
    s.stop()  # aborts the next window, usually in flight by now
    fresh = _engine("c4_az", 10_000)
    fresh.restore(e.snapshot())
    for _ in range(3):
        _same(fresh.collect(100, infer), e.collect(100, infer), "alphazero")
