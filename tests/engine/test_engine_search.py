"""Engine.collect with the search policies: known answers, determinism, targets, telemetry,
validation.  (Record-for-record agreement with reinfors 0.4.0 is in tests/differential.)"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from helpers import (
    linear_pv,
    linear_q,
    make_nim,  # tests/ is on sys.path (rootdir conftest)
    zero_pv,
    zero_q,
)

import reinfors as rf

C4_REWARD = rf.Reward(win=1.0, loss=-1.0)


def _opening_rows(batch, n_actions):
    """Targets of the records taken at the episodes' first position (player 0's first row of
    each episode: Nim episodes always start from the same pile)."""
    start = batch.obs[:, 0] == 1.0  # the pile is full only at the opening
    return start & (batch.players == 0)


# -- known answers ------------------------------------------------------------------------------


@pytest.mark.parametrize("pile,winning", [(4, 0), (5, 1)])
def test_minimax_with_a_zero_callback_plays_nim_perfectly(pile, winning):
    """Nim (take 1 or 2, last stone wins): from a pile of 4 take 1, from 5 take 2.  Depth 5
    reaches every terminal state, so the zero callback never decides anything."""
    eng = rf.Engine(
        make_nim(pile), rf.Reward(), rf.policies.Minimax(depth=5), rf.learners.TreeStrap(gamma=1.0), n_games=2
    )
    b = eng.collect(20, zero_q(2))
    rows = _opening_rows(b, 2)
    assert rows.any()
    t = b.targets[rows][:, 0, :]
    assert (t.argmax(axis=1) == winning).all()
    assert np.allclose(t[:, winning], 1.0) and np.allclose(t[:, 1 - winning], -1.0)
    # every episode is won by the first player: perfect play
    assert all(ret[0] == 1.0 for ret, _, _ in b.telemetry["episodes"])


@pytest.mark.parametrize("policy", ["alphazero", "mcts"])
def test_tree_search_with_a_uniform_prior_finds_the_nim_win(policy):
    if policy == "alphazero":
        pol = rf.policies.AlphaZero(num_simulations=200, noise=None, temperature=0.0)
        lrn, infer = rf.learners.AlphaZero(), zero_pv(2)
    else:
        pol = rf.policies.Mcts(num_simulations=200)
        lrn, infer = rf.learners.TreeStrap(gamma=1.0), zero_q(2)
    eng = rf.Engine(make_nim(4), rf.Reward(), pol, lrn, n_games=2, seed=3)
    b = eng.collect(20, infer)
    rows = _opening_rows(b, 2)
    assert rows.any()
    if policy == "alphazero":
        assert (b.policy_targets[rows].argmax(axis=1) == 0).all()
    else:
        t = b.targets[rows][:, 0, :]
        assert (t.argmax(axis=1) == 0).all() and (t[:, 0] > 0.5).all()
    assert all(ret[0] == 1.0 for ret, _, _ in b.telemetry["episodes"])


def test_minimax_depth_1_scores_leaves_for_their_own_mover():
    """At depth 1 every child is a frontier leaf valued by the callback for *its* mover (the
    opponent), so the root target is the negated masked max of the leaf's Q row."""
    q = np.array([0.25, -0.5])

    def infer(obs):
        return np.tile(q, (len(obs), 1, 1))

    eng = rf.Engine(make_nim(6), rf.Reward(), rf.policies.Minimax(depth=1), rf.learners.TreeStrap(gamma=0.5), n_games=1)
    b = eng.collect(1, infer)
    first = b.targets[0, 0]
    assert np.allclose(first, [-0.5 * 0.25, -0.5 * 0.25])


# -- records ------------------------------------------------------------------------------------


def test_alphazero_targets_are_visit_distributions_over_legal_actions():
    eng = rf.Engine(
        rf.games.Connect4(), C4_REWARD, rf.policies.AlphaZero(num_simulations=16), rf.learners.AlphaZero(), n_games=4
    )
    b = eng.collect(100, linear_pv(84, 7))
    assert b.policy_targets.shape == (len(b.obs), 7) and b.policy_targets.dtype == np.float64
    legal = np.zeros((len(b.obs), 7), bool)
    for i in range(len(b.obs)):
        legal[i, b.legal_ids[b.legal_offsets[i] : b.legal_offsets[i + 1]]] = True
    assert np.allclose(b.policy_targets.sum(axis=1), 1.0)
    assert (b.policy_targets[~legal] == 0.0).all()
    # the root counts as simulation 1: 15 visits spread over the root's children
    assert set(np.unique(np.round(b.policy_targets * 15, 9))) <= set(float(k) for k in range(16))
    assert (b.policy_weights == 1.0).all()
    assert set(np.abs(b.value_targets)) <= {0.0, 1.0}  # gamma 1: the signed outcome
    t = b.telemetry
    assert t["mean_leaves"] == t["mean_rounds"] == t["mean_expansions"] == 16.0
    assert t["decisions"] * 16 == t["requested_rows"] + t["terminal_sims"] + t["depthcap_sims"]


def test_maxn_adds_value_only_rows_and_extra_eval_rows():
    pol = rf.policies.AlphaZero(num_simulations=8, sequential_backup="maxn")
    eng = rf.Engine(rf.games.Connect4(), C4_REWARD, pol, rf.learners.AlphaZero(gamma=0.9), n_games=2)
    b = eng.collect(40, zero_pv(7))
    w = b.policy_weights
    assert set(np.unique(w)) == {0.0, 1.0} and (w == 0).sum() == (w == 1).sum()
    value_only = w == 0.0
    assert (b.policy_targets[value_only] == 0.0).all()
    assert (np.diff(b.legal_offsets)[value_only] == 0).all()
    t = b.telemetry
    evals = t["requested_rows"] // 2
    assert t["extra_eval_rows"] == evals
    assert t["decisions"] * 8 == t["requested_rows"] + t["terminal_sims"] + t["depthcap_sims"] - t["extra_eval_rows"]


def test_truncated_episodes_bootstrap_from_tail_rows():
    game = rf.games.GridWorld(size=6, max_ticks=5)  # too short to reach the goal mostly
    pol = rf.policies.AlphaZero(num_simulations=6)
    eng = rf.Engine(game, rf.Reward(step=0.0, goal=1.0), pol, rf.learners.AlphaZero(gamma=0.5), n_games=3)
    b = eng.collect(30, lambda obs: (np.zeros((len(obs), 4)), np.full(len(obs), 0.8)))
    t = b.telemetry
    truncated = [e for e in t["episodes"] if e[1] == 5 and e[0][0] == 0.0]
    assert truncated and t["tail_rows"] >= len(truncated)
    assert t["decisions"] * 6 == t["requested_rows"] + t["terminal_sims"] + t["depthcap_sims"] - t["tail_rows"]
    # the last record of a truncated episode: z = r + gamma * v_tail = 0 + 0.5 * 0.8
    assert np.isclose(b.value_targets, 0.4).any()


def test_treestrap_masks_and_outcome_blending():
    pol = rf.policies.Mcts(num_simulations=8)
    lrn = rf.learners.TreeStrap(gamma=1.0, outcome_weight=1.0, bootstrap_p=0.5)
    eng = rf.Engine(rf.games.Connect4(), C4_REWARD, pol, lrn, n_games=2, seed=5)
    b = eng.collect(60, zero_q(7))
    assert b.targets.shape == (len(b.obs), 1, 7) and b.masks.shape == (len(b.obs), 1)
    assert set(np.unique(b.masks)) == {0.0, 1.0}
    # outcome_weight 1, gamma 1, rewards only at the end: the executed action's target is the
    # player's episode return.  Records come episode by episode (player 0's, then player 1's).
    i = 0
    for ret, length, _ in b.telemetry["episodes"]:
        for j in range(i, i + length):
            assert np.isclose(b.targets[j, 0], ret[b.players[j]]).any()
        i += length
    assert i == len(b.obs)


# -- determinism --------------------------------------------------------------------------------

SEARCHES = {
    "alphazero": (lambda: rf.policies.AlphaZero(num_simulations=12), lambda: rf.learners.AlphaZero(), linear_pv),
    "mcts": (lambda: rf.policies.Mcts(num_simulations=10), lambda: rf.learners.TreeStrap(bootstrap_p=0.5), linear_q),
    "minimax": (lambda: rf.policies.Minimax(depth=2), lambda: rf.learners.TreeStrap(), linear_q),
    "selective_expectimax": (
        lambda: rf.policies.SelectiveExpectimax(expansion_budget=12, top_k=3, opponent="distributional"),
        lambda: rf.learners.TreeStrap(interior_targets=True),
        linear_q,
    ),
}


@pytest.mark.parametrize("kind", sorted(SEARCHES))
def test_search_batches_identical_across_threads_and_batch_sizes(kind):
    pol, lrn, cb = SEARCHES[kind]
    infer = cb(84, 7)
    out = []
    for n_threads, batch_size in ((1, 0), (2, 3), (0, 7)):
        eng = rf.Engine(
            rf.games.Connect4(), C4_REWARD, pol(), lrn(), n_games=6, seed=11, n_threads=n_threads, batch_size=batch_size
        )
        out.append([eng.collect(50, infer) for _ in range(2)])
    fields = (
        ("obs", "players", "policy_targets", "value_targets") if kind == "alphazero" else ("obs", "targets", "masks")
    )
    for other in out[1:]:
        for a, b in zip(out[0], other, strict=True):
            for f in fields:
                assert np.array_equal(getattr(a, f), getattr(b, f)), f
            assert a.telemetry["decisions"] == b.telemetry["decisions"]


def test_minimax_fires_full_batches():
    eng = rf.Engine(rf.games.Connect4(), C4_REWARD, rf.policies.Minimax(depth=3), rf.learners.TreeStrap(), n_games=8)
    b = eng.collect(50, zero_q(7))
    t = b.telemetry
    assert t["infer_rows"] / t["infer_calls"] >= 3.5  # batch_size n_games // 2 = 4
    assert t["mean_rounds"] <= 3.0 and t["max_depth"] <= 3


# -- validation ---------------------------------------------------------------------------------


def test_alphazero_output_validation_and_recovery():
    eng = rf.Engine(
        rf.games.Connect4(), C4_REWARD, rf.policies.AlphaZero(num_simulations=4), rf.learners.AlphaZero(), n_games=2
    )
    with pytest.raises(TypeError, match="AlphaZero infer must return a \\(policy_logits, values\\) tuple"):
        eng.collect(10, lambda obs: np.zeros((len(obs), 8)))
    with pytest.raises(ValueError, match="AlphaZero infer must return"):
        eng.collect(10, lambda obs: (np.zeros((len(obs), 3)), np.zeros(len(obs))))
    b = eng.collect(10, zero_pv(7))
    assert len(b.obs) >= 10


def test_float32_logits_read_in_place_give_the_widened_batches():
    """float32 logits with contiguous rows are read where they are (only the stored columns are
    widened); float64 and column-strided logits go through the copy.  Batches are identical, a
    NaN in any of the first A columns (legal or not) is refused, and the engine holds no output
    array once its rows are routed."""
    f64 = linear_pv(84, 7, seed=4)

    def f32(obs):
        lg, v = f64(obs)
        return lg.astype(np.float32), v.astype(np.float32)

    def wide(obs):  # row stride 9 floats: still in place (the columns past A are never read)
        lg, v = f32(obs)
        return np.concatenate([lg, np.full((len(lg), 2), np.nan, np.float32)], axis=1), v

    def strided(obs):  # column stride 2: copied
        lg, v = f32(obs)
        return np.repeat(lg, 2, axis=1)[:, ::2], v

    def widened(obs):  # the float64 values of the float32 logits: copied
        lg, v = f32(obs)
        return lg.astype(np.float64), v

    def engine(sims=8, n_games=3):
        return rf.Engine(rf.games.Connect4(), C4_REWARD, rf.policies.AlphaZero(num_simulations=sims),
                         rf.learners.AlphaZero(), n_games=n_games, seed=9, n_threads=2)  # fmt: skip

    def run(infer):
        eng = engine()
        return [eng.collect(60, infer) for _ in range(2)]

    ref = run(widened)
    for infer in (f32, wide, strided):
        for a, b in zip(run(infer), ref, strict=True):
            for name in ("obs", "policy_targets", "value_targets", "policy_weights", "legal_ids", "players"):
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=f"{infer.__name__} {name}")

    last, refs = [], []

    def tracked(obs):  # the previous call's logits: routed, so referenced by ``last`` alone
        if last:
            refs.append(sys.getrefcount(last[0]))
        out = f32(obs)
        last[:] = [out[0]]
        return out

    engine().collect(20, tracked)
    assert len(refs) > 10 and set(refs) == {2}  # ``last`` and the call's argument

    # Outputs that are views of the lent rows are read in place too; the validator's hold on
    # them is not the caller's (the rows stay on loan, no copy mode), while a callback that keeps
    # the rows still gets copies from then on, and its views are never overwritten.
    def aliased(obs):
        return obs[:, :7], obs[:, 0]

    eng = engine()
    views = [eng.collect(60, aliased) for _ in range(2)]
    assert not eng._rt.copy_mode
    for a, b in zip(views, run(lambda obs: (obs[:, :7].copy(), obs[:, 0].copy())), strict=True):
        np.testing.assert_array_equal(a.policy_targets, b.policy_targets)
    kept = []

    def keeps(obs):
        kept.append((obs, obs.copy()))
        return obs[:, :7], obs[:, 0]

    eng = engine()
    for _ in range(2):
        eng.collect(60, keeps)
    assert eng._rt.copy_mode and all(np.array_equal(v, snap) for v, snap in kept)

    def nan_at(col):
        def infer(obs):
            lg, v = f32(obs)
            lg[:, col] = np.nan
            return lg, v

        return infer

    eng = engine(sims=4, n_games=2)
    for col in (0, 6):  # any of the first A columns (those past A are never read: ``wide`` above)
        with pytest.raises(ValueError, match="AlphaZero infer outputs must contain only finite values"):
            eng.collect(10, nan_at(col))
    assert len(eng.collect(10, f32).obs) >= 10


def test_search_callback_exception_propagates_and_engine_recovers():
    eng = rf.Engine(rf.games.Connect4(), C4_REWARD, rf.policies.Minimax(depth=2), rf.learners.TreeStrap(), n_games=2)

    class Boom(Exception):
        pass

    def bad(obs):
        raise Boom("callback failed")

    with pytest.raises(Boom):
        eng.collect(10, bad)
    assert len(eng.collect(10, zero_q(7)).obs) >= 10


def _snake_heads(obs_size, n_heads, seed=3):
    w = np.random.default_rng(seed).standard_normal((obs_size, n_heads, 3)) * 0.3
    return lambda obs: np.einsum("ro,oha->rha", obs.astype(np.float64), w)


@pytest.mark.parametrize("snakes", [2, 3])
def test_selective_expectimax_on_snake(snakes):
    """Every acting snake runs its own best-first search per tick (co-movers fanned by their
    own Q, chance by the mode): per-snake TreeStrap records with per-head targets, identical at
    any thread count; ExpandAll evaluates every food outcome (more leaves than Committed(1))."""
    game = rf.games.Snake(grid_size=6, num_snakes=snakes, food=1, max_ticks=15)
    cb = _snake_heads(game._def.obs_size, 2)
    reward = rf.Reward(food=1.0, loss=-1.0)
    out = {}
    for chance in ("committed", "expand_all"):
        mode = rf.chance_modes.ExpandAll() if chance == "expand_all" else rf.chance_modes.Committed()
        pol = rf.policies.SelectiveExpectimax(expansion_budget=6, top_k=2, n_heads=2, opponent="distributional",
                                              chance=mode)  # fmt: skip
        runs = []
        for n_threads in (1, 2):
            eng = rf.Engine(game, reward, pol, rf.learners.TreeStrap(outcome_weight=0.5, interior_targets=True),
                            n_games=3, seed=4, n_threads=n_threads)  # fmt: skip
            runs.append(eng.collect(60, cb))
        a, b = runs
        for f in ("obs", "players", "targets", "masks"):
            assert np.array_equal(getattr(a, f), getattr(b, f)), f
        assert a.targets.shape == (len(a.obs), 2, 3) and a.masks.shape == (len(a.obs), 2)
        assert set(np.unique(a.players)) <= set(range(snakes)) and len(a.obs) >= 60
        t = a.telemetry
        assert t["mean_sigma"] > 0.0 and t["mean_disagreement"] > 0.0
        assert 1.0 <= t["mean_expansions"] <= 6.0 and t["max_depth"] >= 1
        assert t["terminal_sims"] == t["depthcap_sims"] == 0
        out[chance] = t
    assert out["expand_all"]["mean_leaves"] > out["committed"]["mean_leaves"]


@pytest.mark.parametrize("policy", ["alphazero", "mcts"])
def test_expand_all_evaluates_every_food_outcome(policy):
    """ExpandAll on Snake: an expansion whose step places food creates one child per free cell
    and evaluates them all (extra rows), backing up their probability-weighted value."""
    game = rf.games.Snake(grid_size=5, food=1, max_ticks=20)
    chance = rf.chance_modes.ExpandAll()
    if policy == "alphazero":
        pol, lrn, cb = rf.policies.AlphaZero(num_simulations=8, chance=chance), rf.learners.AlphaZero(), linear_pv
    else:
        pol, lrn, cb = rf.policies.Mcts(num_simulations=8, chance=chance), rf.learners.TreeStrap(), linear_q
    out = []
    for n_threads in (1, 2):
        eng = rf.Engine(game, rf.Reward(food=1.0, loss=-1.0), pol, lrn, n_games=3, seed=5, n_threads=n_threads)
        out.append(eng.collect(40, cb(game._def.obs_size, 3)))
    a, b = out
    assert np.array_equal(a.obs, b.obs)
    # a food fan on a 5x5 board evaluates every free cell's child in one request: several times
    # the rows of the same search committing one outcome per edge
    one = rf.chance_modes.Committed()
    pol1 = (
        rf.policies.AlphaZero(num_simulations=8, chance=one)
        if policy == "alphazero"
        else rf.policies.Mcts(num_simulations=8, chance=one)
    )
    eng = rf.Engine(game, rf.Reward(food=1.0, loss=-1.0), pol1, lrn, n_games=3, seed=5)
    t1 = eng.collect(40, cb(game._def.obs_size, 3)).telemetry
    assert a.telemetry["extra_eval_rows"] > 3 * t1["extra_eval_rows"]


# -- simultaneous games (decoupled search) -------------------------------------------------------


@pytest.mark.parametrize("snakes", [2, 3])
def test_decoupled_search_on_snake(snakes):
    """Every acting snake searches its own table: one record per snake per tick, its visit
    distribution over its own legal moves; leaves are evaluated from every snake's view."""
    game = rf.games.Snake(grid_size=8, num_snakes=snakes, max_ticks=30)
    A = 3
    pol = rf.policies.AlphaZero(num_simulations=10)
    out = []
    for n_threads in (1, 2):
        eng = rf.Engine(game, rf.Reward(food=1.0, loss=-1.0), pol, rf.learners.AlphaZero(gamma=0.9), n_games=3,
                        seed=4, n_threads=n_threads)  # fmt: skip
        out.append(eng.collect(60, linear_pv(game._def.obs_size, A)))
    a, b = out
    for f in ("obs", "players", "policy_targets", "value_targets"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert np.allclose(a.policy_targets.sum(axis=1), 1.0)
    assert set(np.unique(a.players)) <= set(range(snakes))
    t = a.telemetry
    assert t["mean_leaves"] == 10.0 and t["extra_eval_rows"] > 0
    # per search: sims = evaluations + terminal + depth-capped; an evaluation is one row per snake
    assert t["requested_rows"] - t["extra_eval_rows"] - t["tail_rows"] + t["terminal_sims"] + t["depthcap_sims"] > 0


@pytest.mark.parametrize("samples", [1, 3])
def test_decoupled_uct_on_snake_with_committed_chance(samples):
    game = rf.games.Snake(grid_size=8, max_ticks=25)
    pol = rf.policies.Mcts(num_simulations=12, chance=rf.chance_modes.Committed(samples=samples))
    out = []
    for n_threads in (1, 2):
        eng = rf.Engine(game, rf.Reward(food=1.0, loss=-1.0), pol, rf.learners.TreeStrap(outcome_weight=0.5),
                        n_games=3, seed=2, n_threads=n_threads)  # fmt: skip
        out.append(eng.collect(40, linear_q(game._def.obs_size, 3)))
    a, b = out
    assert a.targets.shape == (len(a.obs), 1, 3) and len(a.obs) >= 40
    assert np.array_equal(a.targets, b.targets) and np.array_equal(a.obs, b.obs)


def test_oversized_trees_are_refused_at_the_first_collect():
    eng = rf.Engine(rf.games.Connect4(), C4_REWARD, rf.policies.Minimax(depth=7), rf.learners.TreeStrap(), n_games=64)
    with pytest.raises(MemoryError, match=r"depth=7 needs up to \d+ tree nodes per game: \d+ bytes"):
        eng.collect(10, zero_q(7))


def test_selective_expectimax_ensemble_telemetry():
    """Heads that disagree give positive leaf sigma and root disagreement; one head gives 0."""
    w = np.random.default_rng(2).standard_normal((84, 3, 7)) * 0.3

    def heads(obs):
        return np.einsum("ro,oha->rha", obs.astype(np.float64), w)

    def make(n_heads):
        pol = rf.policies.SelectiveExpectimax(expansion_budget=10, top_k=3, n_heads=n_heads)
        return rf.Engine(rf.games.Connect4(), C4_REWARD, pol, rf.learners.TreeStrap(), n_games=2, seed=1)

    t3 = make(3).collect(20, heads).telemetry
    assert t3["mean_sigma"] > 0.0 and t3["mean_disagreement"] > 0.0
    assert t3["mean_expansions"] <= 10.0 and t3["mean_rounds"] >= 10.0 / 3
    b1 = make(1).collect(20, lambda obs: heads(obs)[:, :1, :])
    assert b1.telemetry["mean_sigma"] == 0.0 and b1.telemetry["mean_disagreement"] == 0.0
    assert b1.targets.shape[1:] == (1, 7) and b1.masks.shape[1] == 1
