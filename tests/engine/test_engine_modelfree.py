"""Engine.collect with the model-free policies: records, determinism, validation, callbacks."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import linear_q as _linear_q  # tests/ is on sys.path (rootdir conftest)

import reinfors as rf

GAMMA = 0.9


def _rowwise(obs, w):
    """``obs @ w`` computed row-independently (BLAS matmul may round differently for different
    batch shapes, which would make batch composition leak into predictions)."""
    return (obs[:, :, None].astype(np.float64) * w[None]).sum(axis=1)


def linear_q(obs_size, n_actions, heads=1, seed=0):
    return _linear_q(obs_size, n_actions, heads, seed, scale=1.0)  # unscaled N(0, 1) weights


def pv(obs_size, n_actions, seed=0):
    rs = np.random.default_rng(seed)
    w = rs.standard_normal((obs_size, n_actions))
    v = rs.standard_normal((obs_size, 1))

    def infer(obs):
        return _rowwise(obs, w), _rowwise(obs, v)[:, 0]

    return infer


def gw_engine(**kw):
    game = rf.games.GridWorld(size=4, max_ticks=12)
    args = dict(n_games=16, seed=3)
    args.update(kw)
    policy = kw.pop("policy", None) or rf.policies.EpsilonGreedyQ(epsilon=0.2)
    learner = kw.pop("learner", None) or rf.learners.Dqn(gamma=GAMMA)
    args.pop("policy", None)
    args.pop("learner", None)
    return rf.Engine(game, rf.Reward(step=-0.1, goal=1.0), policy, learner, **args)


def _fields(batch, names):
    return {n: getattr(batch, n) for n in names}


DQN_FIELDS = (
    "obs", "players", "actions", "rewards", "next_obs", "dones", "can_bootstrap", "discounts", "masks",
    "legal_ids", "legal_offsets", "next_legal_ids", "next_legal_offsets",
)  # fmt: skip
PPO_FIELDS = (
    "obs",
    "players",
    "actions",
    "behavior_log_probs",
    "advantages",
    "returns",
    "values",
    "legal_ids",
    "legal_offsets",
)


def _same(a, b, names):
    for n in names:
        x, y = getattr(a, n), getattr(b, n)
        assert x.dtype == y.dtype and x.shape == y.shape, n
        assert np.array_equal(x, y), n


@pytest.mark.parametrize("kind", ["dqn", "ppo"])
def test_batches_identical_across_threads_and_batch_sizes(kind):
    game = rf.games.Connect4()
    if kind == "dqn":
        policy, learner, infer, names = (
            rf.policies.EpsilonGreedyQ(epsilon=0.3),
            rf.learners.Dqn(n_step=2),
            linear_q(84, 7),
            DQN_FIELDS,
        )
    else:
        policy, learner, infer, names = rf.policies.Ppo(), rf.learners.Ppo(), pv(84, 7), PPO_FIELDS
    runs = []
    for n_threads, batch_size in ((1, 0), (2, 0), (2, 3), (1, 64), (3, 7)):
        eng = rf.Engine(game, None, policy, learner, n_games=24, seed=11, n_threads=n_threads, batch_size=batch_size)
        runs.append([eng.collect(150, infer) for _ in range(3)])
    for other in runs[1:]:
        for a, b in zip(runs[0], other, strict=True):
            _same(a, b, names)
            assert [e[:2] for e in a.telemetry["episodes"]] == [e[:2] for e in b.telemetry["episodes"]]


def test_dqn_record_fields_and_shapes():
    eng = gw_engine(n_games=8)
    b = eng.collect(100, linear_q(32, 4))
    m = len(b.obs)
    assert m >= 100
    assert b.obs.dtype == np.float32 and b.obs.shape == (m, 32) and b.next_obs.shape == (m, 32)
    assert b.actions.dtype == np.int64 and b.players.dtype == np.int64 and (b.players == 0).all()
    assert b.rewards.dtype == np.float64 and b.dones.dtype == bool and b.can_bootstrap.dtype == bool
    assert b.masks.dtype == np.float32 and b.masks.shape == (m, 1) and (b.masks == 1).all()
    assert b.legal_offsets.shape == (m + 1,) and (np.diff(b.legal_offsets) == 4).all()
    # bootstrap rule: can_bootstrap iff the next legal slice is non-empty; discount 0 otherwise
    nxt = np.diff(b.next_legal_offsets)
    assert np.array_equal(b.can_bootstrap, nxt > 0)
    assert np.allclose(b.discounts[b.can_bootstrap], GAMMA) and (b.discounts[~b.can_bootstrap] == 0).all()
    # a goal transition is terminal: done, no bootstrap, reward = goal weight
    goal = b.rewards == 1.0
    assert goal.any() and b.dones[goal].all() and not b.can_bootstrap[goal].any()
    # truncated episodes (GridWorld is single-agent): their tails stay bootstrappable and are not
    # "done" (dones is the terminal flag, as the original)
    assert not (b.dones & b.can_bootstrap).any()
    assert any(ep[1] == 12 for ep in b.telemetry["episodes"])
    obs, actions, rewards, next_obs, dones, masks, tele = b
    assert obs is b.obs and tele is b.telemetry and len(b) == 7
    assert b.obs is b.obs and b[0] is b.obs
    with pytest.raises(IndexError):
        b[7]
    with pytest.raises(OverflowError):
        b[-1]


def _pos(obs, size):
    k = int(np.argmax(obs[: size * size]))
    return divmod(k, size)


def test_dqn_n_step_returns_match_a_hand_replay():
    """Greedy play (epsilon 0) with a fixed Q is deterministic given the start cell, so every
    record can be recomputed from its observation with the game rules by hand."""
    size, n_step = 4, 3
    game = rf.games.GridWorld(size=size, max_ticks=30)
    w = np.zeros((2 * size * size, 4))
    w[:, 3] = 1.0  # prefer "right"
    for c in range(size):  # in the last column prefer "down"
        for r in range(size):
            w[r * size + c, 1] = 2.0 if c == size - 1 else 0.0
    infer = lambda obs: _rowwise(obs, w)[:, None, :]  # noqa: E731
    eng = rf.Engine(
        game,
        rf.Reward(step=-0.1, goal=1.0),
        rf.policies.EpsilonGreedyQ(epsilon=0.0),
        rf.learners.Dqn(n_step=n_step, gamma=GAMMA),
        n_games=4,
        seed=5,
    )
    b = eng.collect(60, infer)

    def act(r, c):
        return 1 if c == size - 1 else 3

    def move(r, c, a):
        r2, c2 = (r + 1, c) if a == 1 else (r, c + 1)
        return (r2, c2) if r2 < size and c2 < size else (r, c)

    checked = 0
    for i in range(len(b.obs)):
        r, c = _pos(b.obs[i], size)
        assert b.actions[i] == act(r, c)
        total, k, done = 0.0, 0, False
        for k in range(n_step):
            r, c = move(r, c, act(r, c))
            at_goal = (r, c) == (size - 1, size - 1)
            total += GAMMA**k * (1.0 if at_goal else -0.1)
            if at_goal:
                done = True
                break
        assert b.rewards[i] == pytest.approx(total, abs=1e-12)
        assert bool(b.dones[i]) == done
        if not done:
            assert _pos(b.next_obs[i], size) == (r, c)
            assert b.discounts[i] == pytest.approx(GAMMA**n_step)
        checked += 1
    assert checked >= 60


def test_ppo_advantages_are_gae_of_the_trajectory():
    size, gamma, lam = 4, 0.9, 0.8
    game = rf.games.GridWorld(size=size, max_ticks=40)
    vw = (np.arange(2 * size * size, dtype=np.float64) % 7) / 10.0

    def infer(obs):
        return np.zeros((len(obs), 4), np.float32), _rowwise(obs, vw[:, None])[:, 0]

    eng = rf.Engine(
        game,
        rf.Reward(step=-0.1, goal=1.0),
        rf.policies.Ppo(),
        rf.learners.Ppo(gamma=gamma, lam=lam),
        n_games=1,
        seed=2,
    )
    b1 = eng.collect(25, infer)
    b2 = eng.collect(1, infer)
    obs = b1.obs
    v = _rowwise(obs, vw[:, None])[:, 0]
    assert np.allclose(b1.values, v)
    assert np.allclose(b1.behavior_log_probs, np.log(0.25))
    # rewards and episode boundaries from consecutive observations (single slot, single agent)
    m = len(obs)
    rewards = np.zeros(m)
    ends = np.zeros(m, bool)
    for i in range(m):
        r, c = _pos(obs[i], size)
        a = int(b1.actions[i])
        r2, c2 = {0: (r - 1, c), 1: (r + 1, c), 2: (r, c - 1), 3: (r, c + 1)}[a]
        if not (0 <= r2 < size and 0 <= c2 < size):
            r2, c2 = r, c
        goal = (r2, c2) == (size - 1, size - 1)
        rewards[i] = 1.0 if goal else -0.1
        ends[i] = goal
    lengths = [e[1] for e in b1.telemetry["episodes"]]
    assert sum(ends) == len(lengths)
    next_v = float(_rowwise(b2.obs[:1], vw[:, None])[0, 0])  # window tail: the critic at the next window's first state
    adv = np.zeros(m)
    a = 0.0
    for i in range(m - 1, -1, -1):
        nv = 0.0 if ends[i] else (next_v if i == m - 1 else v[i + 1])
        if ends[i]:
            a = 0.0
        delta = rewards[i] + gamma * nv - v[i]
        a = delta + gamma * lam * a
        adv[i] = a
    assert np.allclose(b1.advantages, adv, atol=1e-9)
    assert np.allclose(b1.returns, adv + v)
    assert b1.telemetry["tail_rows"] == 1


def test_collect_zero_and_argument_errors():
    eng = gw_engine()
    b = eng.collect(0, linear_q(32, 4))
    assert b.obs.shape == (0, 32) and b.legal_offsets.tolist() == [0] and b.telemetry["infer_calls"] == 0
    assert len(b.telemetry) == 22
    with pytest.raises(OverflowError):
        eng.collect(-1, linear_q(32, 4))
    with pytest.raises(TypeError, match="infer must be a callable or a sequence of per-player callables"):
        eng.collect(1, 5)
    with pytest.raises(ValueError, match=r"expected 1 per-player infer callables \(one per player\), got 2"):
        eng.collect(1, [linear_q(32, 4), linear_q(32, 4)])


@pytest.mark.parametrize(
    "bad,exc,msg",
    [
        (lambda o: np.zeros((len(o), 4)), TypeError, "infer output must be a 3-d ndarray; got 2-d"),
        (lambda o: np.zeros((len(o), 2, 4)), ValueError, r"infer returned shape \[\d+, 2, 4\] for \d+ rows; expected"),
        (lambda o: np.zeros((len(o), 1, 4), np.int32), TypeError, "float64 or float32 ndarray; got dtype int32"),
        (lambda o: [[0.0] * 4] * len(o), TypeError, "got type list"),
        (lambda o: np.full((len(o), 1, 4), np.nan), ValueError, "must contain only finite values"),
    ],
)
def test_bad_q_outputs_raise_and_engine_stays_usable(bad, exc, msg):
    eng = gw_engine()
    with pytest.raises(exc, match=msg):
        eng.collect(20, bad)
    b = eng.collect(20, linear_q(32, 4))
    assert len(b.obs) >= 20


def test_callback_exceptions_propagate_with_their_type():
    eng = gw_engine()

    class Boom(Exception):
        pass

    def boom(obs):
        raise Boom("from the callback")

    with pytest.raises(Boom, match="from the callback"):
        eng.collect(10, boom)
    assert len(eng.collect(10, linear_q(32, 4)).obs) >= 10


def test_float32_outputs_widen_exactly():
    eng32, eng64 = gw_engine(), gw_engine()
    q = linear_q(32, 4)
    b32 = eng32.collect(80, lambda o: q(o).astype(np.float32))
    b64 = eng64.collect(80, lambda o: q(o).astype(np.float32).astype(np.float64))
    _same(b32, b64, DQN_FIELDS)


def test_ppo_tuple_contract():
    eng = gw_engine(policy=rf.policies.Ppo(), learner=rf.learners.Ppo())
    with pytest.raises(TypeError, match=r"Ppo infer must return a \(policy_logits, values\) tuple; got ndarray"):
        eng.collect(5, lambda o: np.zeros((len(o), 5)))
    with pytest.raises(ValueError, match=r"Ppo infer must return \(policy_logits \(\d+, >=4\), values \(\d+,\)\)"):
        eng.collect(5, lambda o: (np.zeros((len(o), 3)), np.zeros(len(o))))
    with pytest.raises(TypeError, match="Ppo infer values must be a 1-d ndarray; got 2-d"):
        eng.collect(5, lambda o: (np.zeros((len(o), 4)), np.zeros((len(o), 1))))
    b = eng.collect(30, lambda o: (np.zeros((len(o), 9), np.float32), np.zeros(len(o), np.float32)))
    assert len(b.obs) >= 30 and np.allclose(b.behavior_log_probs, np.log(0.25))
    with pytest.raises(TypeError):
        len(b)


def test_telemetry_counts_rows_and_calls():
    eng = gw_engine(n_games=16, batch_size=4)
    b = eng.collect(64, linear_q(32, 4))
    t = b.telemetry
    assert set(t) == set(rf.engine.TELEMETRY_KEYS)
    assert t["infer_rows"] == t["requested_rows"] and t["decisions"] == t["requested_rows"]
    assert t["infer_calls"] >= t["infer_rows"] / 4
    assert t["infer_seconds"] > 0 and t["padded_rows"] == 0
    for ep in t["episodes"]:
        assert len(ep) == 3 and isinstance(ep[0], list) and ep[2] is False


def test_pad_fixes_the_call_shape():
    seen = []
    q = linear_q(32, 4)

    def infer(obs):
        seen.append(obs.shape)
        return q(obs)

    eng = gw_engine(n_games=6, batch_size=4, pad=True)
    b = eng.collect(30, infer)
    assert {s[0] for s in seen} == {4}
    assert b.telemetry["padded_rows"] == 4 * b.telemetry["infer_calls"] - b.telemetry["infer_rows"]


def test_obs_view_kept_by_the_callback_is_never_overwritten():
    kept = []
    q = linear_q(32, 4)

    def infer(obs):
        kept.append((obs, obs.copy()))
        return q(obs)

    eng = gw_engine(n_games=8, batch_size=4)
    eng.collect(60, infer)
    eng.collect(60, infer)
    for view, snapshot in kept:
        assert np.array_equal(view, snapshot)


def test_composition_validation_messages():
    c4 = rf.games.Connect4()
    with pytest.raises(ValueError, match="incompatible policy/learner composition; see .*catalogue/compatibility/"):
        rf.Engine(c4, None, rf.policies.EpsilonGreedyQ(), rf.learners.Ppo(), 4)
    with pytest.raises(ValueError, match=r"n_games must be <= 65536 \(got 65537\)"):
        rf.Engine(c4, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 65537)
    with pytest.raises(ValueError, match="n_games must be >= 1"):
        rf.Engine(c4, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 0)
    with pytest.raises(ValueError, match=r"n_heads must be <= 4096 \(got 4097\)"):
        rf.Engine(c4, None, rf.policies.EpsilonGreedyQ(n_heads=4097), rf.learners.Dqn(), 4)
    with pytest.raises(ValueError, match=r"learn player 2 out of range \(this game has 2 players\)"):
        rf.Engine(c4, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 4, learn_players=[2])
    with pytest.raises(ValueError, match="does not support start_buffer"):
        rf.Engine(c4, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 4, start_buffer=True)
    with pytest.raises(ValueError, match="clairvoyant"):
        rf.Engine(rf.games.KuhnPoker(), None, rf.policies.AlphaZero(), rf.learners.AlphaZero(), 4)
    with pytest.raises(OverflowError):
        rf.Engine(c4, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), -1)
    with pytest.raises(TypeError, match="cannot be converted to 'PyBool'"):
        rf.Engine(c4, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 4, pad=1)


def test_learn_players_restricts_records():
    eng = rf.Engine(rf.games.Connect4(), None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 8, learn_players=[1])
    b = eng.collect(40, linear_q(84, 7))
    assert len(b.obs) >= 40 and (b.players == 1).all()


def test_resolved_config_and_fingerprint_match_the_original():
    g = rf.games.GridWorld(size=5, max_ticks=50)
    eng = rf.Engine(g, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 4)
    assert eng.config_fingerprint() == "4045d80c8ee6a7e708c190cc407cb93dc3dfe00efbc946238f3c6c60474453fe"
    cfg = eng.resolved_config()
    assert cfg["engine"] == {
        "batch_size": None,
        "infer_cache": 0,
        "learn_players": None,
        "n_games": 4,
        "n_threads": 0,
        "pad": None,
        "seed": 0,
        "start_buffer": None,
    }
    assert cfg["policy"] == {"epsilon": 0.1, "n_heads": 1, "name": "epsilon_greedy_q"}


def test_derived_views_kept_by_the_callback_stay_valid():
    kept = []
    q = linear_q(32, 4)

    def infer(obs):
        kept.append((obs[::2], obs[::2].copy()))  # a derived view, not the lent array itself
        return q(obs)

    eng = gw_engine(n_games=8, batch_size=4)
    for _ in range(3):
        eng.collect(40, infer)
    for view, snapshot in kept:
        assert np.array_equal(view, snapshot)


def test_per_player_callbacks_get_only_their_rows_and_match_a_shared_callback():
    game = rf.games.Connect4()
    q = linear_q(84, 7)
    seen = {0: [], 1: []}

    def make(p):
        def f(obs):
            planes = obs.reshape(len(obs), 2, 42).sum(axis=2)
            seen[p].append(planes[:, 0] - planes[:, 1])
            return q(obs)

        return f

    a = rf.Engine(game, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 12, seed=4, batch_size=5)
    b = rf.Engine(game, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 12, seed=4, batch_size=5)
    for _ in range(2):
        ba = a.collect(60, [make(0), make(1)])
        bb = b.collect(60, q)
        _same(ba, bb, DQN_FIELDS)
    # player 0 moves with equal piece counts, player 1 one piece behind
    assert np.all(np.concatenate(seen[0]) == 0) and np.all(np.concatenate(seen[1]) == -1)
    with pytest.raises(ValueError, match="pad supports a single shared infer callback"):
        rf.Engine(game, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 4, pad=True).collect(0, [q, q])


@pytest.mark.parametrize("players", [2, 3])
def test_kuhn_dqn_and_ppo_run(players):
    game = rf.games.KuhnPoker(players=players)
    obs = 3 * players
    b = rf.Engine(game, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 16).collect(100, linear_q(obs, 2))
    assert len(b.obs) >= 100 and set(np.unique(b.players)) == set(range(players))
    assert b.dones.sum() >= 1 and not b.can_bootstrap[b.dones].any()
    # zero-sum chips: each finished episode's returns sum to 0
    assert all(abs(sum(ep[0])) < 1e-9 for ep in b.telemetry["episodes"])
    p = rf.Engine(game, None, rf.policies.Ppo(), rf.learners.Ppo(), 16).collect(100, pv(obs, 2))
    assert len(p.obs) >= 100 and np.isfinite(p.advantages).all()
