"""In-step chance in the sequential search trees (ExpandAll, Committed(k)) on a dice game.

The game ("dice race", a user game defined in tests/helpers.py) is a two-player race with a die rolled INSIDE
each step: after the mover's action the next mover's roll is pending chance.  Positions start at
0; on its turn the mover sees its roll ``r`` and either advances ``r`` (action 0; reaching the
target wins, +1 / -1) or pushes the opponent back ``r`` (action 1, not below 0).  The die is
non-uniform, and shorter close to home (so fans have different sizes):

    far from home (pos < TARGET - 2):  r = 1, 2, 3 with probabilities 1/2, 1/3, 1/6
    near home:                         r = 1, 2    with probabilities 3/4, 1/4

The expected values are computed by a tiny pure-Python expectiminimax / expectimax recursion
over the same rules (below), fed with the same leaf callback, and compared with the searched root
targets of every record.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import (  # tests/ is on sys.path (rootdir conftest); the dice race is defined there
    FAR,
    NEAR,
    REWARD,
    TARGET,
    dr_active,
    dr_apply,
    dr_encode,
    dr_init,
    dr_legal,
    dr_outcomes,
    dr_pending,
    dr_step,
    dr_terminal,
    leaf_pv,
    leaf_q,
    make_dice_race,
    make_nim,
)

import reinfors as rf
from reinfors.jit.games._contract import HEADER


def obs_of(state, agent) -> np.ndarray:
    """The njit encoder in Python (float32 rounding included)."""
    pos, turn, roll = state
    out = np.zeros((1, 4), np.float32)
    out[0, 0] = pos[agent] / TARGET
    out[0, 1] = pos[1 - agent] / TARGET
    out[0, 2] = roll / 3.0 if turn == agent else -roll / 3.0
    out[0, 3] = 1.0 if turn == agent else 0.0
    return out


def boot(state, agent) -> float:
    """Masked max of the callback's Q row (every action is legal in a running state)."""
    return float(leaf_q(obs_of(state, agent))[0, 0].max())


def step(state, a):
    """(next state before the roll, reward of the mover, terminal)."""
    pos, p, r = state
    pos = list(pos)
    if a == 0:
        pos[p] += r
        if pos[p] >= TARGET:
            return (tuple(pos), p, 0), 1.0, True
    else:
        pos[1 - p] = max(0, pos[1 - p] - r)
    return (tuple(pos), 1 - p, 0), 0.0, False


def outcomes(state):
    pos, p, _ = state
    dist = NEAR if pos[p] >= TARGET - 2 else FAR
    return [((pos, p, r), prob) for r, prob in dist]


def minimax_edge(state, a, depth_left, gamma):
    """Expectiminimax value of edge ``a`` for the mover (the opponent's values negated)."""
    nxt, r, term = step(state, a)
    if term:
        return r
    ev = sum(prob * -minimax_value(s, depth_left - 1, gamma) for s, prob in outcomes(nxt))
    return r + gamma * ev


def minimax_value(state, depth_left, gamma):
    if depth_left == 0:
        return boot(state, state[1])
    return max(minimax_edge(state, a, depth_left, gamma) for a in (0, 1))


def expectimax_branch(state, a, depth_left, gamma, searcher):
    """SelectiveExpectimax (uniform opponent) value of branch ``a``, searcher's perspective."""
    nxt, r, term = step(state, a)
    r = r if state[1] == searcher else -r
    if term:
        return r
    ev = sum(prob * expectimax_value(s, depth_left - 1, gamma, searcher) for s, prob in outcomes(nxt))
    return r + gamma * ev


def expectimax_value(state, depth_left, gamma, searcher):
    if depth_left == 0:
        return boot(state, searcher)
    vals = [expectimax_branch(state, a, depth_left, gamma, searcher) for a in (0, 1)]
    return max(vals) if state[1] == searcher else sum(vals) / 2.0


def root_state(obs_row, player):
    """The decision's state from its record (the observation determines it)."""
    me = int(round(float(obs_row[0]) * TARGET))
    opp = int(round(float(obs_row[1]) * TARGET))
    roll = int(round(float(obs_row[2]) * 3.0))
    pos = (me, opp) if player == 0 else (opp, me)
    return (pos, int(player), roll)


def _engine(policy, n_games=3, gamma=0.9, seed=7, **kw):
    lrn = (
        rf.learners.AlphaZero(gamma=gamma)
        if policy.name == "alphazero"
        else rf.learners.TreeStrap(gamma=gamma, outcome_weight=0.0)
    )
    return rf.Engine(make_dice_race(), REWARD, policy, lrn, n_games=n_games, seed=seed, **kw)


def _tel(b):
    return {k: v for k, v in b.telemetry.items() if k != "episodes"}


# -- Minimax: expectiminimax ------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 3])
def test_minimax_expand_all_is_exact_expectiminimax(depth):
    gamma = 0.9
    eng = _engine(rf.policies.Minimax(depth=depth), gamma=gamma)  # default chance: ExpandAll
    b = eng.collect(30, leaf_q)
    assert len(b.players) >= 30
    for i in range(len(b.players)):
        st = root_state(b.obs[i], b.players[i])
        want = [minimax_edge(st, a, depth, gamma) for a in (0, 1)]
        np.testing.assert_allclose(b.targets[i, 0], want, rtol=0, atol=1e-12)
    t = _tel(b)
    # every outcome child of every chance edge is one row; chance nodes are neither expansions nor depth
    assert t["max_depth"] == depth and t["extra_eval_rows"] == 0
    assert t["requested_rows"] == t["infer_rows"] and t["terminal_sims"] == t["depthcap_sims"] == 0


def test_minimax_expand_all_row_count_at_depth_one():
    """Depth 1: one row per outcome of each root edge (3 far from home, 2 near), none for wins."""
    eng = _engine(rf.policies.Minimax(depth=1), n_games=1)
    rows = []

    def infer(obs):
        rows.append(len(obs))
        return leaf_q(obs)

    b = eng.collect(8, infer)
    assert sum(rows) == _tel(b)["requested_rows"]
    assert b.telemetry["decisions"] * 2 * 2 <= sum(rows) <= b.telemetry["decisions"] * 2 * 3


def test_minimax_committed_averages_its_draws_uniformly():
    """Committed(2): each root edge's value is the plain mean of two drawn outcomes' values."""
    gamma = 0.9
    eng = _engine(rf.policies.Minimax(depth=1, chance=rf.chance_modes.Committed(2)), gamma=gamma)
    b = eng.collect(30, leaf_q)
    rows = _tel(b)["requested_rows"]
    hit_weighted = 0
    for i in range(len(b.players)):
        st = root_state(b.obs[i], b.players[i])
        for a in (0, 1):
            nxt, r, term = step(st, a)
            got = b.targets[i, 0, a]
            if term:
                assert got == r
                continue
            vals = [r + gamma * -minimax_value(s, 0, gamma) for s, _ in outcomes(nxt)]
            means = [(x + y) / 2.0 for x, y in itertools.combinations_with_replacement(vals, 2)]
            assert np.isclose(got, means, rtol=0, atol=1e-12).any()
            if np.isclose(got, minimax_edge(st, a, 1, gamma), rtol=0, atol=1e-12):
                hit_weighted += 1
    # two rows per chance edge (duplicated draws stay separate rows)
    assert rows % 2 == 0 and rows > 0
    assert hit_weighted < 2 * len(b.players)  # not the probability-weighted value


# -- SelectiveExpectimax: expectimax ---------------------------------------------------------------


@pytest.mark.slow  # the only user of the dice game's SelectiveExpectimax kernels (~1.5 min cold)
def test_selective_expectimax_expand_all_is_exact_expectimax():
    """A budget that expands every node above max_depth gives the full expectimax (uniform
    opponent, the searcher's perspective, probability-weighted chance)."""
    gamma = 0.95
    depth = 3
    pol = rf.policies.SelectiveExpectimax(
        expansion_budget=64, top_k=64, max_depth=depth, chance=rf.chance_modes.ExpandAll()
    )
    eng = _engine(pol, gamma=gamma)
    b = eng.collect(30, leaf_q)
    for i in range(len(b.players)):
        p = int(b.players[i])
        st = root_state(b.obs[i], p)
        want = [expectimax_branch(st, a, depth, gamma, p) for a in (0, 1)]
        np.testing.assert_allclose(b.targets[i, 0], want, rtol=0, atol=1e-12)
    assert _tel(b)["max_depth"] == depth


# -- AlphaZero / Mcts ------------------------------------------------------------------------------


def test_mcts_expand_all_backs_up_the_exact_expectation():
    """Two simulations expand both root edges; each is a fan whose children are all evaluated,
    so the root values are the depth-1 expectiminimax values."""
    gamma = 0.9
    eng = _engine(rf.policies.Mcts(num_simulations=2, chance=rf.chance_modes.ExpandAll()), gamma=gamma)
    b = eng.collect(30, leaf_q)
    for i in range(len(b.players)):
        st = root_state(b.obs[i], b.players[i])
        want = [minimax_edge(st, a, 1, gamma) for a in (0, 1)]
        np.testing.assert_allclose(b.targets[i, 0], want, rtol=0, atol=1e-12)
    t = _tel(b)
    fans = t["requested_rows"] - t["extra_eval_rows"]  # one row per simulation that evaluated
    assert t["extra_eval_rows"] > 0
    assert b.telemetry["decisions"] * 2 == fans + t["terminal_sims"] + t["depthcap_sims"]


def test_mcts_committed_values_are_sampled_outcomes():
    """Committed(4), two simulations: each root edge backs up ONE of its frozen draws."""
    gamma = 0.9
    eng = _engine(rf.policies.Mcts(num_simulations=2, chance=rf.chance_modes.Committed(4)), gamma=gamma)
    b = eng.collect(30, leaf_q)
    for i in range(len(b.players)):
        st = root_state(b.obs[i], b.players[i])
        for a in (0, 1):
            nxt, r, term = step(st, a)
            got = b.targets[i, 0, a]
            if term:
                assert got == r
                continue
            vals = [r + gamma * -minimax_value(s, 0, gamma) for s, _ in outcomes(nxt)]
            assert np.isclose(got, vals, rtol=0, atol=1e-12).any()
    assert _tel(b)["extra_eval_rows"] == 0


@pytest.mark.parametrize(
    "chance", [rf.chance_modes.ExpandAll(), rf.chance_modes.Committed(3), rf.chance_modes.AlwaysResample()]
)
def test_mcts_many_simulations_converge_near_expectiminimax(chance):
    """With many simulations from a fixed opening the root values of every mode approach the
    depth-limited expectiminimax values (a loose consistency check, not a convergence proof)."""
    gamma = 0.9
    eng = _engine(rf.policies.Mcts(num_simulations=200, max_depth=2, chance=chance), n_games=1, gamma=gamma)
    b = eng.collect(1, leaf_q)
    st = root_state(b.obs[0], b.players[0])
    exact = [minimax_edge(st, a, 2, gamma) for a in (0, 1)]
    assert np.all(np.abs(b.targets[0, 0] - exact) < 0.15)


def test_alphazero_expand_all_telemetry_identity():
    """AlphaZero: the root is simulation 1; every other simulation here expands a fan (2 or 3
    rows, the extras counted as extra evaluation rows)."""
    eng = _engine(rf.policies.AlphaZero(num_simulations=3, noise=None, chance=rf.chance_modes.ExpandAll()))
    b = eng.collect(20, leaf_pv)
    t = _tel(b)
    d = b.telemetry["decisions"]
    assert t["extra_eval_rows"] > 0
    assert d * 3 == t["requested_rows"] + t["terminal_sims"] + t["depthcap_sims"] - t["extra_eval_rows"] - t["tail_rows"]
    assert np.allclose(b.policy_targets.sum(axis=1), 1.0)


def test_alphazero_maxn_expand_all_runs_and_counts_rows():
    eng = _engine(
        rf.policies.AlphaZero(
            num_simulations=4, noise=None, chance=rf.chance_modes.ExpandAll(), sequential_backup="maxn"
        )
    )
    b = eng.collect(20, leaf_pv)
    t = _tel(b)
    d = b.telemetry["decisions"]
    assert d * 4 == t["requested_rows"] + t["terminal_sims"] + t["depthcap_sims"] - t["extra_eval_rows"] - t["tail_rows"]


# -- determinism, chance-free games ----------------------------------------------------------------


def _same(a, b):
    assert np.array_equal(a.obs, b.obs) and np.array_equal(a.players, b.players)
    assert np.array_equal(a.targets, b.targets)


@pytest.mark.parametrize(
    "policy",
    [
        rf.policies.Minimax(depth=2),
        rf.policies.Mcts(num_simulations=16, chance=rf.chance_modes.Committed(3)),
        rf.policies.Mcts(num_simulations=16, chance=rf.chance_modes.ExpandAll()),
        rf.policies.Mcts(num_simulations=16, chance=rf.chance_modes.AlwaysResample()),
    ],
    ids=["minimax", "mcts-committed", "mcts-expand", "mcts-resample"],
)
def test_in_step_chance_search_is_deterministic_across_threads(policy):
    one = _engine(policy, n_games=4, n_threads=1).collect(24, leaf_q)
    two = _engine(policy, n_games=4, n_threads=2, batch_size=3).collect(24, leaf_q)
    _same(one, two)


def test_chance_free_games_are_identical_under_every_mode():

    def run(mode):
        pol = rf.policies.Mcts(num_simulations=12, chance=mode)
        eng = rf.Engine(make_nim(5), rf.Reward(), pol, rf.learners.TreeStrap(gamma=0.9), n_games=2, seed=3)
        return eng.collect(16, leaf_nim)

    def leaf_nim(obs):
        o = obs.astype(np.float64)
        return np.stack([o[:, 0] - 0.3 * o[:, 1], 0.2 * o[:, 0]], axis=1)[:, None, :]

    base = run(rf.chance_modes.AlwaysResample())
    for mode in (rf.chance_modes.Committed(4), rf.chance_modes.ExpandAll()):
        _same(base, run(mode))


def test_chance_in_step_false_makes_modes_irrelevant():
    """A game declaring CHANCE_IN_STEP = False (GridWorld: the start cell at reset) builds the
    same trees under every mode."""

    def run(mode):
        pol = rf.policies.Mcts(num_simulations=8, chance=mode)
        eng = rf.Engine(rf.games.GridWorld(size=3), rf.Reward(), pol, rf.learners.TreeStrap(), n_games=2, seed=5)
        return eng.collect(12, lambda obs: np.tile(obs[:, :4].astype(np.float64)[:, None, :], (1, 1, 1)))

    base = run(rf.chance_modes.AlwaysResample())
    for mode in (rf.chance_modes.Committed(3), rf.chance_modes.ExpandAll()):
        _same(base, run(mode))


def test_custom_chance_in_step_keyword_keeps_the_config():
    g1 = make_dice_race()
    assert g1._def.chance_in_step
    g2 = rf.games.custom(
        "dice_race",
        n_players=2,
        n_actions=2,
        obs_shape=(4,),
        state_size=HEADER + 6,
        reward_keys=("win", "loss"),
        reward_defaults=(1.0, -1.0),
        init=dr_init,
        step=dr_step,
        legal=dr_legal,
        active=dr_active,
        is_terminal=dr_terminal,
        encode=dr_encode,
        chance_pending=dr_pending,
        chance_outcomes=dr_outcomes,
        apply_chance=dr_apply,
        max_chance=3,
        params=[TARGET],
        chance_in_step=False,
    )
    assert not g2._def.chance_in_step
    assert g1._resolved() == g2._resolved()
    assert not rf.games.GridWorld()._def.chance_in_step
