"""``rf.policies.GumbelAlphaZero`` (issue 33): validation, registry and config plumbing, and the
search against an independent plain-Python implementation of mctx's ``gumbel_muzero_policy``
(``gumbel_reference.py``) on the template tic-tac-toe with a table callback.

Fast tier: one compiled composition (tic-tac-toe, unbatched: ``choose``, the Engine and the Arena
share its kernel module).  With ``gumbel_scale=0`` the search is deterministic: the chosen action,
the root visit counts and the recorded policy target equal the reference's.  With
``gumbel_scale=1`` the first considered set is a Gumbel-top-k sample of the prior (chi-square).
The slow tier adds leaf batching, in-step chance and mctx itself as the oracle
(``test_gumbel_slow.py``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import reinfors as rf
from reinfors._runtime.choose import choose_rows

from .gumbel_cases import GAME, POSITIONS, TicTacToe, _envs, _search, _state_of, play, reference, table_infer, table_row
from .gumbel_reference import Config, considered_visits

# -- validation, registry, config (no compile) ------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "exc", "match"),
    [
        ({"num_simulations": 0}, ValueError, "num_simulations"),
        ({"num_simulations": -1}, ValueError, "num_simulations"),
        ({"num_simulations": 1.5}, TypeError, "num_simulations"),
        ({"max_num_considered_actions": 0}, ValueError, "max_num_considered_actions"),
        ({"max_num_considered_actions": "4"}, TypeError, "max_num_considered_actions"),
        ({"gumbel_scale": -0.1}, ValueError, "gumbel_scale"),
        ({"gumbel_scale": float("nan")}, ValueError, "gumbel_scale"),
        ({"gumbel_scale": "1"}, TypeError, "gumbel_scale"),
        ({"c_visit": float("inf")}, ValueError, "c_visit"),
        ({"c_visit": -1.0}, ValueError, "c_visit"),
        ({"c_scale": -0.5}, ValueError, "c_scale"),
        ({"use_mixed_value": 1}, TypeError, "use_mixed_value"),
        ({"rescale_values": None}, TypeError, "rescale_values"),
        ({"max_depth": 0}, ValueError, "max_depth"),
        ({"sequential_backup": "negamax"}, ValueError, "sequential_backup"),
        ({"chance": "committed"}, TypeError, "chance"),
        ({"leaf_batch": 0}, ValueError, "leaf_batch"),
        ({"virtual_loss": -1.0}, ValueError, "virtual_loss"),
    ],
)
def test_every_parameter_is_validated(kw, exc, match):
    with pytest.raises(exc, match=match):
        rf.policies.GumbelAlphaZero(**kw)


def test_defaults_are_mctx_defaults():
    cfg = rf.policies.GumbelAlphaZero()._config()
    assert cfg == {
        "name": "gumbel_alphazero",
        "num_simulations": 16,
        "max_num_considered_actions": 16,
        "gumbel_scale": 1.0,
        "c_visit": 50.0,
        "c_scale": 0.1,
        "use_mixed_value": True,
        "rescale_values": True,
        "max_depth": 64,
        "sequential_backup": "auto",
        "chance": {"name": "always_resample"},
    }
    assert rf.policies.GumbelAlphaZero().output == "pv"


def test_registry_catalogue_and_config_round_trip():
    assert "gumbel_alphazero" in rf.policies.registered()
    assert "gumbel_alphazero" in rf.catalog.POLICIES
    assert rf.catalog.ALGORITHMS["gumbel_alphazero"].policy_or_solver == "rf.policies.GumbelAlphaZero"
    assert "gumbel_alphazero" in rf.catalog.GAMES["connect4"].algorithms
    assert "gumbel_alphazero" not in rf.catalog.GAMES["snake"].algorithms
    pol = rf.policies.make("gumbel_alphazero", num_simulations=4, gumbel_scale=0.5, leaf_batch=2)
    eng = rf.Engine(rf.games.make("connect4"), None, pol, rf.learners.AlphaZero(), n_games=2, seed=0)
    cfg = eng.resolved_config()
    assert cfg["policy"]["leaf_batch"] == 2 and cfg["policy"]["gumbel_scale"] == 0.5
    again = rf.engine_from_config(cfg)
    assert again.resolved_config() == cfg
    assert again.config_fingerprint() == eng.config_fingerprint()
    for change in ({"c_visit": 40.0}, {"use_mixed_value": False}, {"max_num_considered_actions": 8}):
        other = rf.Engine(
            rf.games.make("connect4"),
            None,
            rf.policies.GumbelAlphaZero(num_simulations=4, gumbel_scale=0.5, leaf_batch=2, **change),
            rf.learners.AlphaZero(),
            n_games=2,
            seed=0,
        )
        assert other.config_fingerprint() != eng.config_fingerprint(), change


def test_composition_errors_name_the_policy():
    pol = rf.policies.GumbelAlphaZero()
    with pytest.raises(ValueError, match="GumbelAlphaZero supports sequential games"):
        rf.Engine(rf.games.make("snake"), None, pol, rf.learners.AlphaZero(), n_games=1)
    with pytest.raises(ValueError, match="GumbelAlphaZero policy searches the true state"):
        rf.Engine(rf.games.make("leduc_poker"), None, pol, rf.learners.AlphaZero(), n_games=1)
    with pytest.raises(ValueError, match="compatib"):
        rf.Engine(rf.games.make("connect4"), None, pol, rf.learners.TreeStrap(), n_games=1)


def test_considered_visit_table_is_mctx_sequential_halving():
    """The kernel's closed form of ``get_sequence_of_considered_visits`` (an njit leaf compiled
    on its own) against the reference's verbatim port of mctx."""
    from helpers import python_callable

    from reinfors.jit.kernels import search_gumbel

    _gb_considered_visit = python_callable(search_gumbel)._gb_considered_visit  # an internal kernel
    for m in range(1, 20):
        for n in (1, 2, 3, 4, 7, 8, 16, 17, 32, 50, 64, 100, 200):
            want = considered_visits(m, n)
            got = [_gb_considered_visit(m, n, i) for i in range(n)]
            assert got == want, (m, n)
    # mctx's documented example: 16 simulations over 4 considered actions
    assert considered_visits(4, 16) == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]


# -- the deterministic search against the reference (one compiled composition) ---------------------

CONFIGS = [
    {"num_simulations": 16},
    {"num_simulations": 8, "max_num_considered_actions": 4},
    {"num_simulations": 5, "max_num_considered_actions": 2},
    {"num_simulations": 24, "max_num_considered_actions": 3, "c_visit": 20.0, "c_scale": 0.3},
    {"num_simulations": 12, "use_mixed_value": False},
    {"num_simulations": 12, "rescale_values": False, "c_scale": 1.0},
    {"num_simulations": 1},
]


@pytest.mark.parametrize("kw", CONFIGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_choose_equals_the_reference(kw):
    pol = rf.policies.GumbelAlphaZero(gumbel_scale=0.0, **kw)
    acts, visits = _search(pol, table_infer())
    cfg = Config(**kw)
    for k, moves in enumerate(POSITIONS):
        ref = reference(play(moves), cfg)
        assert list(visits[k]) == ref["visits"], (moves, list(visits[k]), ref["visits"])
        assert acts[k] == ref["action"], moves
        assert sum(ref["visits"]) == cfg.num_simulations


def test_discount_and_maxn_equal_the_reference():
    """gamma < 1 (the reference's discount -gamma); ``sequential_backup="maxn"`` with a zero value
    table is negamax on this zero-sum game (every agent's row evaluated, the mover's logits)."""
    kw = {"num_simulations": 16, "max_num_considered_actions": 4}
    pol = rf.policies.GumbelAlphaZero(gumbel_scale=0.0, **kw)
    acts, visits = _search(pol, table_infer(), gamma=0.9)
    for k, moves in enumerate(POSITIONS):
        ref = reference(play(moves), Config(gamma=0.9, **kw))
        assert (list(visits[k]), acts[k]) == (ref["visits"], ref["action"]), moves
    pol = rf.policies.GumbelAlphaZero(gumbel_scale=0.0, sequential_backup="maxn", **kw)
    acts, visits = _search(pol, table_infer(zero_value=True))
    for k, moves in enumerate(POSITIONS):
        ref = reference(play(moves), Config(**kw), zero_value=True)
        assert (list(visits[k]), acts[k]) == (ref["visits"], ref["action"]), moves


def test_engine_policy_targets_equal_the_reference():
    """Every searched decision's policy target is the reference's softmax(logits + sigma(q^))."""
    kw = {"num_simulations": 10, "max_num_considered_actions": 4}
    pol = rf.policies.GumbelAlphaZero(gumbel_scale=0.0, **kw)
    eng = rf.Engine(GAME, None, pol, rf.learners.AlphaZero(gamma=1.0), n_games=4, seed=5)
    batch = eng.collect(48, table_infer())
    assert len(batch.obs) >= 48
    seen = set()
    for i in range(len(batch.obs)):
        if batch.policy_weights[i] == 0.0:
            continue
        s = _state_of(batch.obs[i], batch.players[i])
        ref = reference(s, Config(**kw))
        np.testing.assert_allclose(batch.policy_targets[i], ref["target"], rtol=0, atol=1e-12)
        legal = TicTacToe().legal(s)
        assert all((batch.policy_targets[i][a] > 0) == legal[a] for a in range(9))
        seen.add(s)
        # outcome values, as AlphaZero's: the realised return of a finished game
        assert batch.value_targets[i] in (-1.0, 0.0, 1.0)
    # gumbel_scale=0 and a deterministic callback: every game is the same one, its positions all checked
    assert len(seen) >= 5


# -- stochastic root: Gumbel-top-k ------------------------------------------------------------------


def test_first_considered_set_is_gumbel_top_k():
    """``num_simulations = k = 2``: the root's two visited actions are the top-2 of
    ``g + logits`` — their unordered pair follows Plackett-Luce over the prior (chi-square over
    the 36 pairs, 4000 searches with their own streams, a fixed seed)."""
    pol = rf.policies.GumbelAlphaZero(num_simulations=2, max_num_considered_actions=2, gumbel_scale=1.0)
    n = 4000
    env = rf.Env(GAME, rf.Reward(), seed=0)
    d = env._def
    states = np.repeat(env._state[None], n, axis=0)
    infer = table_infer(scale=1.0)
    _, rt = choose_rows(pol, d, env._weights, states, infer, 11, [0] * n, 1.0)
    visits = np.array(rt["t_visits"][:n, 0, :9])
    assert (visits.sum(axis=1) == 2).all() and (visits.max(axis=1) == 1).all()
    logits, _ = table_row(TicTacToe.obs(((0,) * 9, 0), 0), scale=1.0)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    pairs = list(itertools.combinations(range(9), 2))
    expected = np.array([p[a] * p[b] / (1 - p[a]) + p[b] * p[a] / (1 - p[b]) for a, b in pairs]) * n
    counts = np.zeros(len(pairs))
    index = {pr: i for i, pr in enumerate(pairs)}
    for row in visits:
        a, b = np.flatnonzero(row)
        counts[index[(a, b)]] += 1
    keep = expected >= 5  # pool the rare pairs into one cell
    obs, exp = counts[keep], expected[keep]
    if (~keep).any():
        obs, exp = np.append(obs, counts[~keep].sum()), np.append(exp, expected[~keep].sum())
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    df = len(obs) - 1
    # the 99.9% quantile of chi-square(df), Wilson-Hilferty (within 1% for df >= 10)
    z = 3.090
    crit = df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3
    assert chi2 < crit, (chi2, crit, df)
    # and the draws are not degenerate: a prior-blind pick would sit far outside
    uniform = np.full(len(pairs), n / len(pairs))
    assert float(((counts - uniform) ** 2 / uniform).sum()) > 10 * crit


def test_arena_and_public_choose():
    """The public ``choose`` and a short Arena match run the policy (same kernel module)."""
    pol = rf.policies.GumbelAlphaZero(num_simulations=4, gumbel_scale=0.0)
    envs = _envs()
    got = pol.choose(envs, table_infer(), seed=0, gamma=1.0)
    acts, _ = _search(pol, table_infer())
    assert got == [int(a) for a in acts]
    arena = rf.Arena(
        GAME,
        rf.Reward(),
        [(pol, table_infer(), 1.0), (rf.policies.GumbelAlphaZero(num_simulations=2), table_infer(), 1.0)],
        n_slots=4,
        seed=1,
    )
    result = arena.play(4)
    assert len(result.games) == 4
