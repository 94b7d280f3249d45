"""``rf.solvers.DeepCfr``: batch layout, traversal semantics against a plain-Python reference,
pooled callbacks, validation, failure atomicity, and exploitability against OpenSpiel."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from helpers import python_callable

import reinfors as rf
from reinfors.jit import rng
from reinfors.solvers import deep_cfr as DC

R = python_callable(rng)  # internal kernels, through njit shims

FIELDS = [
    ("advantage_obs", np.float32),
    ("advantage_iterations", np.int64),
    ("advantage_legal_offsets", np.int64),
    ("advantage_legal_ids", np.int64),
    ("advantage_targets", np.float64),
    ("strategy_obs", np.float32),
    ("strategy_iterations", np.int64),
    ("strategy_players", np.int64),
    ("strategy_legal_offsets", np.int64),
    ("strategy_legal_ids", np.int64),
    ("strategy_probs", np.float64),
]
TELEMETRY = [
    "player",
    "traversals",
    "advantage_samples",
    "strategy_samples",
    "infer_calls",
    "infer_rows",
    "infer_seconds",
    "collect_seconds",
    "cache_lookups",
    "cache_hits",
]


def hashed(n_actions):
    """A deterministic per-row callback (small integers from a CRC of the observation bytes):
    mixed, pure and all-negative rows alike, identical however rows are batched."""

    def f(obs):
        out = np.zeros((len(obs), n_actions))
        for i, row in enumerate(obs):
            h = zlib.crc32(np.ascontiguousarray(row).tobytes())
            out[i] = [((h >> (3 * a)) % 7) - 3 for a in range(n_actions)]
        return out

    return f


def zeros(n_actions):
    return lambda obs: np.zeros((len(obs), n_actions))


def solver(game, seed=0):
    s = rf.solvers.DeepCfr(game, seed=seed)
    s.next_iteration()
    return s


# -- a plain-Python reference traversal (same per-traversal streams, recursion instead of waves)


def _regret(out, legal):
    x = np.array([out[a] for a in legal], np.float64)
    pos = np.where(x > 0, x, 0.0)
    if pos.sum() > 0:
        return pos / pos.sum()
    sigma = np.zeros(len(legal))
    sigma[int(np.argmax(x))] = 1.0
    return sigma


def reference(game, seed, base, traversals, player, iteration, f):
    d = game._def
    ns = d.ns
    p = d.params
    weights = np.asarray(d.reward_defaults)
    encode = game.encoder._parts()[0]
    adv, strat = [], []

    def obs_of(state, agent):
        out = np.zeros(d.obs_size, np.float32)
        encode(p, state, agent, out)
        return out

    def visit(state, rng, acc):
        probs = np.zeros(max(d.max_chance, 1))
        while ns.chance_pending(p, state):
            n = ns.chance_outcomes(p, state, probs)
            ns.apply_chance(p, state, R.sample_chance(rng, probs, n))
        if ns.is_terminal(p, state):
            return acc
        agents = np.zeros(d.n_players, np.int64)
        ns.active(p, state, agents)
        ag = int(agents[0])
        mask = np.zeros(d.n_actions, np.uint8)
        ns.legal(p, state, ag, mask)
        legal = [a for a in range(d.n_actions) if mask[a]]
        o = obs_of(state, ag)
        sigma = _regret(f(o[None, :])[0], legal)

        def child(a):
            s = state.copy()
            acts = np.zeros(d.n_players, np.int64)
            acts[ag] = a
            amounts = np.zeros((d.n_players, len(weights)))
            s[0] += 1
            ns.step(p, s, acts, amounts)
            return s, acc + float(amounts[player] @ weights)

        if ag == player:
            v = []
            for a in legal:
                s, r = child(a)
                v.append(visit(s, rng, r))
            base_v = float(sum(sigma[q] * v[q] for q in range(len(legal))))
            adv.append((o.tobytes(), tuple(legal), tuple(np.round(np.array(v) - base_v, 9))))
            return base_v
        if ag == (player + 1) % d.n_players:  # strategy samples: the next player's decisions
            strat.append((o.tobytes(), ag, tuple(legal), tuple(np.round(sigma, 12))))
        q = R.categorical(rng, sigma, len(legal))
        s, r = child(legal[q])
        return visit(s, rng, r)

    for j in range(traversals):
        state = np.zeros(d.state_size, np.int64)
        ns.init(p, state)
        rng = np.zeros(1, np.uint64)
        R.seed_row(rng, np.uint64(seed ^ DC._RNG_MIX), np.uint64(base + j), np.uint64(player))
        visit(state, rng, 0.0)
    return sorted(adv), sorted(strat)


def rows(batch):
    ao, aoff = batch.advantage_obs, batch.advantage_legal_offsets
    adv = [
        (
            ao[i].tobytes(),
            tuple(batch.advantage_legal_ids[aoff[i] : aoff[i + 1]].tolist()),
            tuple(np.round(batch.advantage_targets[aoff[i] : aoff[i + 1]], 9)),
        )
        for i in range(len(ao))
    ]
    so, soff = batch.strategy_obs, batch.strategy_legal_offsets
    strat = [
        (
            so[i].tobytes(),
            int(batch.strategy_players[i]),
            tuple(batch.strategy_legal_ids[soff[i] : soff[i + 1]].tolist()),
            tuple(np.round(batch.strategy_probs[soff[i] : soff[i + 1]], 12)),
        )
        for i in range(len(so))
    ]
    return sorted(adv), sorted(strat)


@pytest.mark.parametrize(
    "game,player",
    [
        (rf.games.KuhnPoker(), 0),
        (rf.games.KuhnPoker(), 1),
        (rf.games.KuhnPoker(players=3), 2),
        (rf.games.LeducPoker(), 0),
        (rf.games.LeducPoker(), 1),
    ],
    ids=["kuhn-p0", "kuhn-p1", "kuhn3-p2", "leduc-p0", "leduc-p1"],
)
def test_pooled_traversals_equal_the_recursive_reference(game, player):
    """The lock-step kernel produces exactly the samples of one recursive external-sampling
    traversal per stream: same advantage rows (targets = v(a) - sigma.v), same strategy rows."""
    f = hashed(game.action_space().n)
    s = solver(game, seed=7)
    first = s.collect(player, 40, f)
    second = s.collect(player, 25, f)  # the streams continue after a completed collect
    assert rows(first) == reference(game, 7, 0, 40, player, 1, f)
    assert rows(second) == reference(game, 7, 40, 25, player, 1, f)
    assert len(first.advantage_obs) >= 40 and len(first.strategy_obs) >= 40


def test_batch_layout_and_telemetry():
    s = solver(rf.games.LeducPoker(), seed=1)
    b = s.collect(1, 64, hashed(3))
    for name, dtype in FIELDS:
        a = getattr(b, name)
        assert a.dtype == dtype and a.flags["C_CONTIGUOUS"], name
        assert getattr(b, name) is a
    na, ns = len(b.advantage_obs), len(b.strategy_obs)
    assert b.advantage_obs.shape == (na, 21) and b.strategy_obs.shape == (ns, 21)
    for off, ids, vals in [
        (b.advantage_legal_offsets, b.advantage_legal_ids, b.advantage_targets),
        (b.strategy_legal_offsets, b.strategy_legal_ids, b.strategy_probs),
    ]:
        assert off[0] == 0 and off[-1] == len(ids) == len(vals) and np.all(np.diff(off) >= 2)
        assert np.all((ids >= 0) & (ids < 3))
    sums = np.add.reduceat(b.strategy_probs, b.strategy_legal_offsets[:-1])
    assert np.allclose(sums, 1.0)
    # advantages are relative to the strategy-weighted baseline: sigma . target == 0 is not
    # available here (sigma is the traverser's), but targets are bounded by the 13-chip pot
    assert np.abs(b.advantage_targets).max() <= 26.0
    assert (b.advantage_iterations == 1).all() and (b.strategy_iterations == 1).all()
    assert (b.strategy_players == 0).all()
    t = b.telemetry
    assert list(t) == TELEMETRY
    assert t["player"] == 1 and t["traversals"] == 64
    assert t["advantage_samples"] == na and t["strategy_samples"] == ns
    assert t["cache_lookups"] == na + ns  # one lookup per decision node visited
    assert t["infer_rows"] + t["cache_hits"] <= t["cache_lookups"]
    assert isinstance(t["infer_seconds"], float) and t["collect_seconds"] >= t["infer_seconds"]
    s.next_iteration()
    b2 = s.collect(0, 3, hashed(3))
    assert (b2.advantage_iterations == 2).all() and s.iteration == 2


def test_zero_traversals_and_empty_batch():
    b = solver(rf.games.KuhnPoker()).collect(0, 0, zeros(2))
    assert b.advantage_obs.shape == (0, 6) and b.strategy_obs.shape == (0, 6)
    assert b.advantage_legal_offsets.tolist() == [0] and b.strategy_legal_offsets.tolist() == [0]
    assert b.telemetry["infer_calls"] == 0 and b.telemetry["traversals"] == 0


@pytest.mark.parametrize(
    "row,probs",
    [([1.0, 3.0], [0.25, 0.75]), ([-1.0, 0.0], [0.0, 1.0]), ([0.0, 0.0], [1.0, 0.0]), ([-2.0, -1.0], [0.0, 1.0])],
)
def test_regret_matching_of_the_advantage_outputs(row, probs):
    b = solver(rf.games.KuhnPoker()).collect(0, 5, lambda obs: np.tile(np.array(row), (len(obs), 1)))
    assert np.allclose(b.strategy_probs.reshape(-1, 2), probs)


def test_callbacks_are_pooled_per_player():
    seen = {0: [], 1: []}

    def per(p):
        f = hashed(3)

        def g(obs):
            seen[p].append(len(obs))
            # every row is an info state of player p: Leduc's mover is the parity of the round's actions
            r2 = obs[:, 12] > 0
            n = np.where(r2, (obs[:, 17:21] > 0).sum(1), (obs[:, 13:17] > 0).sum(1))
            assert (n % 2 == p).all()
            return f(obs)

        return g

    s = solver(rf.games.LeducPoker(), seed=3)
    b = s.collect(0, 1000, [per(0), per(1)])
    t = b.telemetry
    assert t["infer_calls"] == len(seen[0]) + len(seen[1]) and t["infer_rows"] == sum(seen[0]) + sum(seen[1])
    assert t["infer_calls"] <= 40 and t["infer_rows"] / t["infer_calls"] > 10  # rows per call >> 1
    assert t["cache_lookups"] > 20 * t["infer_rows"]
    one = solver(rf.games.LeducPoker(), seed=3).collect(0, 1000, hashed(3))
    assert rows(one) == rows(b)


def test_a_failed_callback_leaves_the_solver_exactly_as_it_was():
    f = hashed(3)
    s = solver(rf.games.LeducPoker(), seed=5)
    calls = [0]

    def flaky(obs):
        calls[0] += 1
        if calls[0] == 3:
            raise RuntimeError("late failure")
        return f(obs)

    with pytest.raises(RuntimeError, match="late failure"):
        s.collect(0, 50, flaky)
    with pytest.raises(ValueError, match="only finite values"):
        s.collect(0, 50, lambda obs: np.full((len(obs), 3), np.nan))
    with pytest.raises(ValueError, match="infer returned shape"):
        s.collect(0, 50, lambda obs: np.zeros((len(obs) + 1, 3)))
    assert s.iteration == 1
    fresh = solver(rf.games.LeducPoker(), seed=5)
    assert rows(s.collect(0, 50, f)) == rows(fresh.collect(0, 50, f))


def test_validation_messages():
    k = rf.games.KuhnPoker()
    z = zeros(2)
    s = rf.solvers.DeepCfr(k)
    with pytest.raises(ValueError, match=r"call next_iteration\(\) before collecting"):
        s.collect(0, 1, z)
    with pytest.raises(ValueError, match="player must be below 2"):
        s.collect(2, 1, z)  # the player check comes first
    s.next_iteration()
    cases = [
        ((0, 2, lambda o: np.zeros((len(o), 2), np.int32)), TypeError, "float64 or float32 ndarray; got dtype int32"),
        ((0, 2, lambda o: [[0.0, 0.0]] * len(o)), TypeError, "float64 or float32 ndarray; got type list"),
        ((0, 2, lambda o: np.zeros(len(o))), TypeError, "infer output must be a 2-d ndarray; got 1-d"),
        (
            (0, 2, lambda o: np.zeros((len(o), 3))),
            ValueError,
            r"infer returned shape \[(\d), 3\] for \1 rows; expected \(\1, 2\) — one row of 2 advantages",
        ),
        ((0, 2, 5), TypeError, "infer must be a callable or a sequence of per-player callables"),
        ((0, 2, [z]), ValueError, "expected 2 per-player infer callables, got 1"),
        ((0, 2, [z, 5]), TypeError, "per-player infer element 1 is not callable"),
        ((-1, 2, z), OverflowError, "can't convert negative int to unsigned"),
        ((0, 1.5, z), TypeError, "argument 'traversals': 'float' object cannot be interpreted as an integer"),
    ]
    for args, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            s.collect(*args)
    assert s.collect(np.int64(1), 2, (z, z)).telemetry["player"] == 1
    with pytest.raises(ValueError, match="this game is not compatible with Deep CFR; see .*catalogue/compatibility/"):
        rf.solvers.DeepCfr(rf.games.Connect4())
    with pytest.raises(TypeError, match="argument 'game': 'str' object cannot be converted to 'GameHandle'"):
        rf.solvers.DeepCfr("kuhn_poker")
    with pytest.raises(OverflowError):
        rf.solvers.DeepCfr(k, seed=-1)
    with pytest.raises(TypeError, match="No constructor defined for DeepCfrBatch"):
        rf.DeepCfrBatch()
    with pytest.raises(AttributeError):
        s.iteration = 3
    assert rf.solvers.DeepCfr(k, seed=5).resolved_config() == {
        "game": {"encoder": {"name": "kuhn_poker"}, "name": "kuhn_poker", "players": 2},
        "reward": {"scale": 1.0},
        "schema": 1,
        "solver": {"name": "deep_cfr", "seed": 5},
    }
    assert rf.DeepCfrBatch is rf._reinfors.DeepCfrBatch and rf.solvers.DeepCfr is rf._reinfors.DeepCfr


# -- exploitability -------------------------------------------------------------------------------


def test_exploitability_of_constant_policies():
    k = rf.solvers.DeepCfr(rf.games.KuhnPoker())
    calls = []

    def uniform(obs):
        calls.append(obs.shape)
        return np.full((len(obs), 2), 0.5)

    assert k.exploitability(uniform) == pytest.approx(0.4583333333333333, abs=1e-12)
    assert calls == [(12, 6)]  # one batched call over every info state
    assert k.exploitability(lambda o: np.zeros((len(o), 2))) == pytest.approx(0.4583333333333333, abs=1e-12)
    assert k.exploitability(lambda o: np.tile([-1.0, 3.0], (len(o), 1))) == pytest.approx(1 / 3, abs=1e-12)
    assert k.exploitability(lambda o: np.tile([1e-300, 0.0], (len(o), 1))) == pytest.approx(1.0, abs=1e-12)
    assert k.exploitability(lambda o: np.full((len(o), 2), np.nan)) == pytest.approx(0.4583333333333333, abs=1e-12)
    k3 = rf.solvers.DeepCfr(rf.games.KuhnPoker(players=3))
    assert k3.exploitability(lambda o: np.ones((len(o), 2))) == pytest.approx(0.6875, abs=1e-12)
    le = rf.solvers.DeepCfr(rf.games.LeducPoker())
    seen = []
    assert le.exploitability(lambda o: (seen.append(len(o)), np.ones((len(o), 3)))[1]) == pytest.approx(
        2.373611111111111, abs=1e-12
    )
    assert seen == [936]
    with pytest.raises(TypeError, match="'list' object is not callable"):
        k.exploitability([uniform, uniform])
    with pytest.raises(TypeError, match="policy_infer output must be a 2-d ndarray; got 3-d"):
        k.exploitability(lambda o: np.ones((len(o), 1, 2)))
    with pytest.raises(ValueError, match=r"policy_infer returned shape \[12, 3\] for 12 infosets; expected \(12, 2\)"):
        k.exploitability(lambda o: np.ones((len(o), 3)))
    with pytest.raises(TypeError, match="got dtype int32"):
        k.exploitability(lambda o: np.ones((len(o), 2), np.int32))


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_exploitability_matches_openspiel(name):
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python import policy as osp
    from open_spiel.python.algorithms import exploitability as ose

    game = rf.games.make(name)
    f = hashed(game.action_space().n)
    ours = rf.solvers.DeepCfr(game).exploitability(f)
    # the same policy on OpenSpiel's tabular policy: each info state's observation in our encoder
    og = pyspiel.load_game(name)
    pol = osp.TabularPolicy(og)
    for state in pol.states:
        env = _env_at(game, state)
        agent = state.current_player()
        out = f(env.observe(agent).reshape(1, -1))[0]
        legal = state.legal_actions()
        w = np.array([max(out[a], 0.0) for a in legal])
        probs = w / w.sum() if w.sum() > 0 else np.full(len(legal), 1 / len(legal))
        row = pol.state_lookup[state.information_state_string()]
        pol.action_probability_array[row] = 0.0
        pol.action_probability_array[row, legal] = probs
    assert ours == pytest.approx(ose.exploitability(og, pol), abs=1e-9)


def _env_at(game, os_state):
    """Our Env at the history of an OpenSpiel state (chance outcomes forced into the row)."""
    from reinfors.jit.games import kuhn_poker as KP
    from reinfors.jit.games import leduc_poker as LP

    env = rf.Env(game)
    hist = os_state.history()
    if game.name == "kuhn_poker":
        env._state[KP.CARDS : KP.CARDS + 2] = hist[:2]
        for a in hist[2:]:
            env.step({env.active_agents()[0]: a})
        return env
    env._state[LP.CARD0 : LP.CARD0 + 2] = hist[:2]
    forced = False
    for a in hist[2:]:
        if env.state()["round"] == 1 and not forced:
            env._state[LP.PUB] = a  # OpenSpiel's public-card chance outcome
            forced = True
            continue
        env.step({env.active_agents()[0]: a})
    return env


def test_growth_and_chunking_do_not_change_the_samples(monkeypatch):
    """Tiny initial buffers (every NEED_ROOM path: samples, table rehash, frame depth) and
    lock-step groups of 7 traversals give exactly the samples of one roomy group."""
    f = hashed(3)
    game = rf.games.LeducPoker()
    want = rows(solver(game, seed=9).collect(0, 60, f))
    monkeypatch.setattr(DC, "_CAP0", 1)
    monkeypatch.setattr(DC, "_DEPTH0", 1)
    monkeypatch.setattr(DC, "_CHUNK", 7)
    grown = []
    real_grow = DC._Buffers.grow

    def grow(self, traversals):
        before = (self.depth, self.e_key.shape[0], self.adv_obs.shape[0], self.st_obs.shape[0])
        real_grow(self, traversals)
        grown.append((before, (self.depth, self.e_key.shape[0], self.adv_obs.shape[0], self.st_obs.shape[0])))

    monkeypatch.setattr(DC._Buffers, "grow", grow)
    s = solver(game, seed=9)
    b = s.collect(0, 60, f)
    assert rows(b) == want
    for k in range(4):  # every buffer kind grew at least once
        assert any(after[k] > before[k] for before, after in grown), k
    assert b.telemetry["traversals"] == 60 and b.telemetry["infer_calls"] > 0
    monkeypatch.setattr(DC, "_CHUNK", 1)
    assert rows(solver(game, seed=9).collect(0, 60, f)) == want
