"""``PolicyHandle.choose``: known answers, legality, determinism, purity, row dedupe and the
original's validation messages in the original's order.  (Action-for-action and call-for-call
agreement with reinfors 0.4.0 is in tests/differential/test_choose_vs_original.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    make_nim,  # tests/ is on sys.path (rootdir conftest)
    python_callable,
    zero_pv,
    zero_q,
)

import reinfors as rf
from reinfors._runtime import choose_runtime as _choose_rt
from reinfors.jit import rng as _rng

P = rf.policies
C4 = rf.games.Connect4()
COMPAT = "https://jeepjeepjeep.github.io/reinfors/catalogue/compatibility/"

# Connect4 columns 0..6; moves alternate player 0, player 1.
WIN_NOW = [0, 0, 1, 1, 2, 2]  # player 0 to move: 3 completes the bottom row
BLOCK_NOW = [0, 6, 1, 6, 2]  # player 1 to move: must block 3


DEFAULT = rf.Reward()


def c4(moves=(), reward=DEFAULT, seed=0, game=C4):
    """A Connect4 env after ``moves`` (``reward=None``: a reward-free env)."""
    env = rf.Env(game, reward, seed=seed)
    for m in moves:
        env.step({env.active_agents()[0]: m})
    return env


class Recorder:
    """A callback wrapper logging every call's row count (and checking the row contract)."""

    def __init__(self, fn):
        self.fn, self.rows = fn, []

    def __call__(self, obs):
        assert obs.dtype == np.float32 and obs.ndim == 2 and obs.flags.c_contiguous and obs.flags.writeable
        self.rows.append(len(obs))
        return self.fn(obs)


SEARCHERS = {
    "minimax": (lambda: P.Minimax(depth=2), zero_q),
    "alphazero": (lambda: P.AlphaZero(num_simulations=300, noise=None, temperature=0.0), zero_pv),
    "mcts": (lambda: P.Mcts(num_simulations=300), zero_q),
}


# -- known answers ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SEARCHERS))
def test_search_takes_the_immediate_win_and_plays_the_forced_block(name):
    make, cb = SEARCHERS[name]
    envs = [c4(WIN_NOW), c4(BLOCK_NOW), c4(WIN_NOW)]
    assert make().choose(envs, cb(7), gamma=1.0) == [3, 3, 3]


@pytest.mark.parametrize("name", sorted(SEARCHERS))
def test_search_plays_nim_perfectly_with_a_zero_callback(name):
    """Nim (take 1 or 2, last stone wins): from 4 take 1 (action 0), from 5 take 2 (action 1)."""
    make, cb = SEARCHERS[name]
    pol = P.Minimax(depth=5) if name == "minimax" else make()
    envs = [rf.Env(make_nim(4), rf.Reward()), rf.Env(make_nim(5), rf.Reward())]
    assert pol.choose(envs[:1], cb(2), gamma=1.0) == [0]
    assert pol.choose(envs[1:], cb(2), gamma=1.0) == [1]


def test_minimax_depth_1_picks_the_move_that_leaves_the_opponent_worst_off():
    """Depth 1: each child is scored by the callback for its own mover (the opponent) and
    negated, so the chosen move minimises the opponent's masked max Q."""
    env = c4()
    # the opponent's best Q after our move m is (m - 3)^2 / 10: smallest after 3
    value = {c4([m]).observe(1).tobytes(): (m - 3) ** 2 / 10.0 for m in range(7)}

    def infer(obs):
        return np.array([value[row.tobytes()] for row in obs])[:, None, None] * np.ones((1, 1, 7))

    assert P.Minimax(depth=1).choose([env], infer, gamma=0.9) == [3]


# -- legality, determinism, purity --------------------------------------------------------------


def test_choices_are_legal_even_when_the_callback_prefers_a_full_column():
    envs = [c4([0, 0, 0, 0, 0, 0]), c4([0, 0, 0, 0, 0, 0, 1])]

    def q(obs):
        out = np.zeros((len(obs), 1, 7))
        out[:, 0, 0] = 10.0
        return out

    def pv(obs):
        logits = np.zeros((len(obs), 7))
        logits[:, 0] = 10.0
        return logits, np.zeros(len(obs))

    for pol, cb in [
        (P.Minimax(depth=1), q),
        (P.Mcts(num_simulations=20), q),
        (P.AlphaZero(num_simulations=20), pv),
        (P.EpsilonGreedyQ(epsilon=0.0), q),
        (P.EpsilonGreedyQ(epsilon=1.0), q),
        (P.Ppo(), pv),
    ]:
        for seed in range(5):
            acts = pol.choose(envs, cb, seed=seed, gamma=0.99)
            assert all(a in e.legal_actions(e.active_agents()[0]) for a, e in zip(acts, envs, strict=True))


def test_same_seed_same_actions_and_seeds_matter_for_alphazero_noise():
    envs = [c4() for _ in range(8)]
    pol = P.AlphaZero(num_simulations=8)  # Dirichlet noise, temperature 1 at ply 0
    cb = zero_pv(7)
    a = pol.choose(envs, cb, seed=5, gamma=1.0)
    assert a == pol.choose(envs, cb, seed=5, gamma=1.0)
    runs = {tuple(pol.choose(envs, cb, seed=s, gamma=1.0)) for s in range(6)}
    assert len(runs) > 1
    # identical envs at different positions k draw from different streams
    assert len(set(a)) > 1


def test_results_depend_only_on_seed_and_position_not_on_env_seeds():
    pol = P.AlphaZero(num_simulations=4)
    e1, e2 = c4(seed=1), c4([3], seed=2)
    a = pol.choose([e1, e2], zero_pv(7), seed=9, gamma=1.0)
    b = pol.choose([c4(seed=77), c4([3], seed=78)], zero_pv(7), seed=9, gamma=1.0)
    assert a == b


def test_minimax_ignores_the_seed():
    envs = [c4([1, 2, 3]), c4([6]), c4()]
    q = lambda obs: np.asarray(obs, np.float64).reshape(len(obs), -1)[:, None, :7] * np.arange(7)  # noqa: E731
    assert len({tuple(P.Minimax(depth=2).choose(envs, q, seed=s, gamma=0.9)) for s in range(4)}) == 1


def test_plies_past_temperature_drop_make_alphazero_greedy():
    envs = [c4() for _ in range(6)]
    pol = P.AlphaZero(num_simulations=30, noise=None, temperature=1.0, temperature_drop=8)
    greedy = P.AlphaZero(num_simulations=30, noise=None, temperature=0.0).choose(envs, zero_pv(7), gamma=1.0)
    for seed in range(3):
        assert pol.choose(envs, zero_pv(7), seed=seed, plies=[100] * 6, gamma=1.0) == greedy


def test_envs_are_not_mutated():
    envs = [c4(BLOCK_NOW, seed=4), c4([2, 2, 3])]
    envs[0].step({1: 5})
    before = [(e.snapshot().to_bytes(), e.rewards, e.ticks) for e in envs]
    for pol, cb in [
        (P.AlphaZero(num_simulations=16), zero_pv(7)),
        (P.Mcts(num_simulations=16), zero_q(7)),
        (P.Minimax(depth=2), zero_q(7)),
        (P.EpsilonGreedyQ(), zero_q(7)),
        (P.Ppo(), zero_pv(7)),
    ]:
        pol.choose(envs, cb, seed=3, gamma=0.9)
        assert [(e.snapshot().to_bytes(), e.rewards, e.ticks) for e in envs] == before


def test_rng_streams_are_splitmix_derived_per_slot():
    got = _choose_rt.streams(12345, 4)
    want = [int(_rng.derive(np.uint64(12345), np.uint64(k), np.uint64(_choose_rt.CHOOSE_STREAM))) for k in range(4)]
    assert [int(x) for x in got] == want
    state = got.copy()
    row = np.array([got[2]], np.uint64)
    assert int(_choose_rt._next_u64(state)[2]) == int(python_callable(_rng).next_u64(row)) and state[2] == row[0]
    assert int(_choose_rt.streams(2**64 - 1, 1)[0]) == int(
        _rng.derive(np.uint64(2**64 - 1), np.uint64(0), np.uint64(_choose_rt.CHOOSE_STREAM))
    )


# -- pooling and dedupe -------------------------------------------------------------------------


def test_identical_roots_are_sent_once_per_round():
    envs = [c4(), c4([3]), c4()]
    rec = Recorder(zero_pv(7))
    P.AlphaZero(num_simulations=4, noise=None).choose(envs, rec, gamma=0.9)
    assert rec.rows[0] == 2 and len(rec.rows) == 4  # root rows of 3 envs, two identical
    rec = Recorder(zero_q(7))
    P.Minimax(depth=2).choose(envs, rec, gamma=0.9)
    assert rec.rows == [14, 98]  # one call per depth level; env 2 duplicates env 0 entirely
    rec = Recorder(zero_q(7))
    P.EpsilonGreedyQ().choose(envs, rec, gamma=0.9)
    assert rec.rows == [2]


def test_rows_are_routed_back_to_every_requester():
    """A callback that depends on the row: duplicated envs must get the same answer as when
    they are alone."""
    w = np.random.default_rng(0).standard_normal((84, 7))

    def q(obs):
        return (obs.astype(np.float64) @ w)[:, None, :]

    envs = [c4([1]), c4([4, 4]), c4([1]), c4([4, 4]), c4()]
    pol = P.Minimax(depth=2)
    together = pol.choose(envs, q, gamma=0.9)
    alone = [pol.choose([e], q, gamma=0.9)[0] for e in envs]
    assert together == alone


def test_alphazero_maxn_and_mcts_act_by_visits_run():
    envs = [c4(WIN_NOW), c4(BLOCK_NOW)]
    pol = P.AlphaZero(num_simulations=300, noise=None, temperature=0.0, sequential_backup="maxn")
    assert pol.choose(envs, zero_pv(7), gamma=1.0) == [3, 3]
    assert P.Mcts(num_simulations=300, act_by="visits").choose(envs, zero_q(7), gamma=1.0) == [3, 3]


def test_model_free_policies_act_like_the_engine():
    env = c4()

    def q(obs):
        out = np.zeros((len(obs), 2, 7))
        out[:, 0, 2] = 1.0
        out[:, 1, 5] = 1.0
        return out

    pol = P.EpsilonGreedyQ(n_heads=2, epsilon=0.0)
    picks = [pol.choose([env], q, seed=s, gamma=1.0)[0] for s in range(40)]
    assert set(picks) == {2, 5}  # one Thompson head per call
    logits = np.full(7, -1e9)
    logits[4] = 0.0
    assert P.Ppo().choose([env, env], lambda o: (np.tile(logits, (len(o), 1)), np.zeros(len(o))), gamma=1.0) == [4, 4]
    kuhn = rf.Env(rf.games.KuhnPoker(), rf.Reward())
    assert P.EpsilonGreedyQ(epsilon=0.0).choose([kuhn], zero_q(kuhn.action_count()), gamma=1.0)[0] in (
        kuhn.legal_actions(kuhn.active_agents()[0])
    )


# -- validation ---------------------------------------------------------------------------------


def _finished():
    return c4([0, 1, 0, 1, 0, 1, 0])


ALL = [
    (P.AlphaZero(num_simulations=4), zero_pv),
    (P.Mcts(num_simulations=4), zero_q),
    (P.Minimax(depth=1), zero_q),
    (P.EpsilonGreedyQ(), zero_q),
    (P.Ppo(), zero_pv),
    (P.SelectiveExpectimax(), zero_q),
]


@pytest.mark.parametrize("pol,cb", ALL, ids=lambda x: getattr(x, "name", ""))
def test_common_validation_messages_and_order(pol, cb):
    f = cb(7)
    ok = c4()
    w2 = rf.Reward(win=2.0)
    snake = rf.Env(rf.games.Snake(), rf.Reward())
    cases = [
        (lambda: pol.choose([ok], f), TypeError, "missing 1 required keyword argument: 'gamma'"),
        (lambda: pol.choose([ok], f, gamma=1.5), ValueError, r"gamma must be in \[0, 1\]"),
        (lambda: pol.choose([ok], f, gamma=float("nan")), ValueError, r"gamma must be in \[0, 1\]"),
        (lambda: pol.choose([ok], f, gamma="x"), TypeError, "argument 'gamma': must be real number, not str"),
        (lambda: pol.choose([], f, gamma=1.0), ValueError, "choose needs at least one env"),
        (lambda: pol.choose([ok, ok], f, plies=[1], gamma=1.0), ValueError, "1 plies for 2 envs"),
        (lambda: pol.choose([ok, c4(reward=rf.Reward(loss=-2.0))], f, gamma=1.0), ValueError, "share one composition"),
        (
            lambda: pol.choose([c4(reward=None)], f, gamma=1.0),
            ValueError,
            "choose needs terminal values: construct these Envs with a reward",
        ),
        (lambda: pol.choose([ok, _finished()], f, gamma=1.0), ValueError, "choose on a finished env"),
        (lambda: pol.choose([ok], f, seed=-1, gamma=1.0), OverflowError, "can't convert negative int to unsigned"),
        (lambda: pol.choose([ok], f, seed=2**64, gamma=1.0), OverflowError, "int too big to convert"),
        (lambda: pol.choose([ok], f, seed=1.0, gamma=1.0), TypeError, "'float' object cannot be interpreted"),
        (
            lambda: pol.choose([ok, 1], f, gamma=1.0),
            TypeError,
            "argument 'envs': 'int' object cannot be converted to 'Env'",
        ),
        (lambda: pol.choose("ab", f, gamma=1.0), TypeError, "Can't extract `str` to `Vec`"),
        (lambda: pol.choose(iter([ok]), f, gamma=1.0), TypeError, "object cannot be converted to 'Sequence'"),
        (lambda: pol.choose([ok], 3, gamma=1.0), ValueError, "choose takes a single shared infer callable"),
        (lambda: pol.choose([ok], [f, f], gamma=1.0), ValueError, "choose takes a single shared infer callable"),
        (lambda: pol.choose([ok], f, plies=3, gamma=1.0), TypeError, "argument 'plies': 'int' object cannot"),
        (lambda: pol.choose([ok], f, plies=[-1], gamma=1.0), OverflowError, "negative int"),
        (lambda: pol.choose([ok], f, plies=[1.0], gamma=1.0), TypeError, "argument 'plies': 'float' object"),
        # order
        (lambda: pol.choose([1], f, seed=-1, gamma="x"), TypeError, "argument 'envs'"),
        (lambda: pol.choose([ok], f, seed=-1, gamma="x"), OverflowError, "negative int"),
        (lambda: pol.choose([], 3, gamma=2.0), ValueError, "needs at least one env"),
        (lambda: pol.choose([ok], 3, gamma=2.0), ValueError, "single shared infer"),
        (lambda: pol.choose([ok], f, plies=[1, 2], gamma=2.0), ValueError, "gamma must be"),
        (lambda: pol.choose([_finished()], f, plies=[1, 2], gamma=1.0), ValueError, "finished env"),
        (lambda: pol.choose([ok, c4(reward=w2)], f, plies=[1], gamma=1.0), ValueError, "share one composition"),
        (lambda: pol.choose([c4(reward=None)], f, plies=[1, 2], gamma=1.0), ValueError, "terminal values"),
        (lambda: pol.choose([snake], f, plies=[1, 2], gamma=1.0), ValueError, "2 plies for 1 envs"),
        (lambda: pol.choose([c4([0, 1, 0, 1, 0, 1, 0], reward=None)], f, gamma=1.0), ValueError, "finished env"),
        (lambda: pol.choose([c4(reward=None), _finished()], f, gamma=1.0), ValueError, "terminal values"),
        (lambda: pol.choose([ok, c4(reward=w2), _finished()], f, gamma=1.0), ValueError, "share one composition"),
        (lambda: pol.choose([ok, _finished(), c4(reward=w2)], f, gamma=1.0), ValueError, "finished env"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()


@pytest.mark.parametrize("pol,cb", ALL, ids=lambda x: getattr(x, "name", ""))
def test_game_suitability_messages(pol, cb):
    snake = rf.Env(rf.games.Snake(), rf.Reward())
    with pytest.raises(ValueError, match="choose supports sequential games: exactly one active agent per env"):
        pol.choose([snake], cb(4), gamma=1.0)
    kuhn = rf.Env(rf.games.KuhnPoker(), rf.Reward())
    label = {
        "alphazero": "AlphaZero",
        "mcts": "Mcts",
        "minimax": "Minimax",
        "selective_expectimax": "SelectiveExpectimax",
    }
    if pol.name in label:
        with pytest.raises(ValueError, match=f"the {label[pol.name]} policy searches the true state and would be "
                           "clairvoyant on this hidden-information game; see " + COMPAT):  # fmt: skip
            pol.choose([kuhn], cb(2), gamma=1.0)


def test_minimax_specific_checks_and_their_order():
    mm = P.Minimax(depth=1)
    f = zero_q(7)
    w2 = rf.Reward(win=2.0)
    anti = "Minimax's zero-sum negation requires an antisymmetric reward: set loss = -win and draw = 0"
    with pytest.raises(ValueError, match=anti):
        mm.choose([c4(reward=w2)], f, gamma=1.0)
    with pytest.raises(ValueError, match=anti):
        mm.choose([c4(reward=rf.Reward(draw=0.1))], f, gamma=1.0)
    # before the plies length and the finished check; after gamma and the callable
    with pytest.raises(ValueError, match=anti):
        mm.choose([c4([0, 1, 0, 1, 0, 1, 0], reward=w2)], f, plies=[1, 2], gamma=1.0)
    with pytest.raises(ValueError, match="gamma must be"):
        mm.choose([c4(reward=w2)], f, gamma=2.0)
    gw = rf.Env(rf.games.GridWorld(), rf.Reward())
    with pytest.raises(ValueError, match="Minimax requires a two-player sequential game; see " + COMPAT):
        mm.choose([gw], zero_q(gw.action_count()), gamma=1.0)
    assert mm.choose([c4(reward=rf.Reward(win=2.0, loss=-2.0))], f, plies=[2**40], gamma=1.0) == [0]


def test_engine_time_ranges_and_the_acting_ply_limit():
    ok = c4()
    kuhn = rf.Env(rf.games.KuhnPoker(), rf.Reward())
    snake = rf.Env(rf.games.Snake(), rf.Reward())
    for pol, msg, cap in [
        (P.AlphaZero(num_simulations=1), "num_simulations must be >= 2", False),
        (P.AlphaZero(num_simulations=4, max_depth=0), "max_depth must be >= 1", False),
        (P.AlphaZero(num_simulations=2**20 + 1), r"num_simulations must be <= 1048576 \(got 1048577\)", True),
        (P.Mcts(num_simulations=0), "num_simulations must be >= 1", False),
        (P.Mcts(chance=rf.chance_modes.Committed(2**20 + 1)), r"chance samples must be <= 1048576 \(got 1048577\)",
         True),  # fmt: skip
        (P.SelectiveExpectimax(n_heads=0), "n_heads must be >= 1", False),
        (P.EpsilonGreedyQ(n_heads=0), "n_heads must be >= 1", False),
        (P.EpsilonGreedyQ(n_heads=5000), r"n_heads must be <= 4096 \(got 5000\)", True),
    ]:
        with pytest.raises(ValueError, match=msg):
            pol.choose([ok], zero_q(7), gamma=1.0)
        with pytest.raises(ValueError, match=msg):  # before the clairvoyance check
            pol.choose([kuhn], zero_q(2), gamma=1.0)
        with pytest.raises(ValueError, match="finished env"):  # after the env checks
            pol.choose([_finished()], zero_q(7), gamma=1.0)
        with pytest.raises(ValueError, match="2 plies for 1 envs"):  # after the plies length
            pol.choose([ok], zero_q(7), plies=[1, 2], gamma=1.0)
        # upper caps come before the one-active-agent check, lower bounds after it
        with pytest.raises(ValueError, match=msg if cap else "exactly one active agent"):
            pol.choose([snake], zero_q(4), gamma=1.0)
    assert P.Mcts(num_simulations=1).choose([ok], zero_q(7), gamma=1.0) == [0]
    for pol, cb in [(P.AlphaZero(num_simulations=4), zero_pv(7)), (P.Mcts(num_simulations=4), zero_q(7))]:
        with pytest.raises(ValueError, match="acting-ply counter 4294967295 out of range"):
            pol.choose([ok, ok], cb, plies=[0, 2**32 - 1], gamma=1.0)
        assert len(pol.choose([ok], cb, plies=[2**32 - 2], gamma=1.0)) == 1
    assert P.EpsilonGreedyQ().choose([ok], zero_q(7), plies=[2**40], gamma=1.0)[0] in range(7)


def test_selective_expectimax_chooses_like_its_engine_search():
    se = P.SelectiveExpectimax(expansion_budget=8, top_k=3)
    with pytest.raises(ValueError, match="gamma must be"):
        se.choose([c4()], zero_q(7), gamma=2.0)
    acts = se.choose([c4(), c4()], zero_q(7), gamma=1.0)
    assert acts == [0, 0]  # all-zero values everywhere: the lowest legal id


def test_callback_errors_and_bad_outputs_propagate():
    ok = c4()

    def boom(obs):
        raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError, match="boom"):
        P.Minimax(depth=1).choose([ok], boom, gamma=1.0)
    with pytest.raises(TypeError, match="AlphaZero infer must return a \\(policy_logits, values\\) tuple; got int"):
        P.AlphaZero(num_simulations=4).choose([ok], lambda o: 5, gamma=1.0)
    with pytest.raises(TypeError, match="infer output must be a float64 or float32 ndarray; got type int"):
        P.Mcts(num_simulations=4).choose([ok], lambda o: 5, gamma=1.0)
    with pytest.raises(
        ValueError, match=r"infer returned shape \[1, 1, 3\] for 1 rows; expected \(1, n_heads = 1, 7\)"
    ):
        P.EpsilonGreedyQ().choose([ok], zero_q(3), gamma=1.0)
    with pytest.raises(TypeError, match="Ppo infer must return"):
        P.Ppo().choose([ok], zero_q(7), gamma=1.0)
