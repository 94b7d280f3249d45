"""GumbelAlphaZero, slow tier: mctx's own ``gumbel_muzero_policy`` (JAX-CPU, float64) as the oracle
of the deterministic search (``pip install reinfors[oracle-mctx]``; skipped without mctx), and the
compositions the fast tier does not compile: leaf batching and in-step chance.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from helpers import make_dice_race

import reinfors as rf

from .gumbel_cases import GAME, POSITIONS, TicTacToe, _search, _state_of, play, reference, table_infer, table_row
from .gumbel_reference import Config

pytestmark = pytest.mark.slow


# -- mctx on the same game, with the same table ------------------------------------------------------


def _mctx_search(states, kw: dict):
    """mctx ``gumbel_muzero_policy`` at ``gumbel_scale=0`` from tic-tac-toe ``states``: the game and
    the table callback run in Python through ``jax.pure_callback``; pgx's conventions (the mover's
    reward, discount -1, terminal value and discount 0, illegal logits masked)."""
    mctx = pytest.importorskip("mctx")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    game = TicTacToe()
    low = np.finfo(np.float64).min

    def emb_of(s):
        board, p = s
        return np.array([*board, p], np.int64)

    def state_of(e):
        return (tuple(int(x) for x in e[:9]), int(e[9]))

    def evaluate(s):
        if game.terminal(s):
            return np.zeros(9), 0.0
        logits, value = table_row(game.obs(s, s[1]))
        legal = game.legal(s)
        m = max(logits[a] for a in range(9) if legal[a])
        return np.array([logits[a] - m if legal[a] else low for a in range(9)]), value

    def step_batch(emb, action):
        B = len(emb)
        out = np.zeros((B, 10), np.int64)
        reward, discount = np.zeros(B), np.zeros(B)
        logits, value = np.zeros((B, 9)), np.zeros(B)
        for i in range(B):
            s = state_of(emb[i])
            if game.terminal(s):  # mctx's dummy child of a terminal node
                out[i] = emb[i]
                continue
            child, r = game.step(s, int(action[i]))
            out[i] = emb_of(child)
            reward[i] = r
            discount[i] = 0.0 if game.terminal(child) else -1.0
            logits[i], value[i] = evaluate(child)
        return out, reward, discount, logits, value

    shapes = lambda B: (  # noqa: E731
        jax.ShapeDtypeStruct((B, 10), jnp.int64),
        jax.ShapeDtypeStruct((B,), jnp.float64),
        jax.ShapeDtypeStruct((B,), jnp.float64),
        jax.ShapeDtypeStruct((B, 9), jnp.float64),
        jax.ShapeDtypeStruct((B,), jnp.float64),
    )

    def recurrent_fn(params, rng_key, action, embedding):
        out, reward, discount, logits, value = jax.pure_callback(
            step_batch, shapes(embedding.shape[0]), embedding, action
        )
        return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=logits, value=value), out

    B = len(states)
    roots = [evaluate(s) for s in states]
    root = mctx.RootFnOutput(
        prior_logits=jnp.array(np.stack([r[0] for r in roots])),
        value=jnp.array([r[1] for r in roots]),
        embedding=jnp.array(np.stack([emb_of(s) for s in states])),
    )
    invalid = jnp.array([[not x for x in game.legal(s)] for s in states])
    qtransform = functools.partial(
        mctx.qtransform_completed_by_mix_value,
        value_scale=kw.get("c_scale", 0.1),
        maxvisit_init=kw.get("c_visit", 50.0),
        rescale_values=kw.get("rescale_values", True),
        use_mixed_value=kw.get("use_mixed_value", True),
    )
    out = mctx.gumbel_muzero_policy(
        params=(),
        rng_key=jax.random.PRNGKey(0),
        root=root,
        recurrent_fn=recurrent_fn,
        num_simulations=kw["num_simulations"],
        invalid_actions=invalid,
        qtransform=qtransform,
        max_num_considered_actions=kw.get("max_num_considered_actions", 16),
        gumbel_scale=0.0,
    )
    visits = np.asarray(out.search_tree.summary().visit_counts)
    assert B == len(visits)
    return np.asarray(out.action), visits, np.asarray(out.action_weights)


ORACLE_CONFIGS = [
    {"num_simulations": 16},
    {"num_simulations": 8, "max_num_considered_actions": 4},
    {"num_simulations": 24, "max_num_considered_actions": 3, "c_visit": 20.0, "c_scale": 0.3},
    {"num_simulations": 12, "use_mixed_value": False},
    {"num_simulations": 12, "rescale_values": False, "c_scale": 1.0},
]


@pytest.mark.parametrize("kw", ORACLE_CONFIGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_choose_equals_mctx(kw):
    """The engine's action and root visits equal mctx's; the plain-Python reference (the fast tier's
    oracle) equals mctx in action, visits and action weights."""
    states = [play(m) for m in POSITIONS]
    m_act, m_vis, m_w = _mctx_search(states, kw)
    pol = rf.policies.GumbelAlphaZero(gumbel_scale=0.0, **kw)
    acts, visits = _search(pol, table_infer())
    np.testing.assert_array_equal(visits, m_vis)
    np.testing.assert_array_equal(acts, m_act)
    for k, s in enumerate(states):
        ref = reference(s, Config(**kw))
        assert ref["visits"] == list(m_vis[k]) and ref["action"] == m_act[k]
        np.testing.assert_allclose(ref["target"], m_w[k], rtol=0, atol=1e-12)


def test_engine_policy_targets_equal_mctx_action_weights():
    kw = {"num_simulations": 10, "max_num_considered_actions": 4}
    pol = rf.policies.GumbelAlphaZero(gumbel_scale=0.0, **kw)
    eng = rf.Engine(GAME, None, pol, rf.learners.AlphaZero(gamma=1.0), n_games=2, seed=5)
    batch = eng.collect(16, table_infer())
    rows = [i for i in range(len(batch.obs)) if batch.policy_weights[i] == 1.0]
    states = [_state_of(batch.obs[i], batch.players[i]) for i in rows]
    _, _, weights = _mctx_search(states, kw)
    np.testing.assert_allclose(batch.policy_targets[rows], weights, rtol=0, atol=1e-12)


# -- compositions of their own: leaf batching, in-step chance ----------------------------------------


def _check_records(batch, n_actions):
    w = batch.policy_weights == 1.0
    t = batch.policy_targets[w]
    np.testing.assert_allclose(t.sum(axis=1), 1.0, atol=1e-12)
    assert (t >= 0).all()
    for i in np.flatnonzero(w):
        ids = batch.legal_ids[batch.legal_offsets[i] : batch.legal_offsets[i + 1]]
        off = np.setdiff1d(np.arange(n_actions), ids)
        assert (batch.policy_targets[i][off] == 0).all()


def test_leaf_batching():
    """``leaf_batch=4``: every simulation is spent (visits sum to the budget), the action is legal,
    the search is reproducible, and ``leaf_batch=1`` is the unbatched (reference-exact) search."""
    pol = rf.policies.GumbelAlphaZero(num_simulations=16, gumbel_scale=0.0, leaf_batch=4)
    acts, visits = _search(pol, table_infer())
    again, visits2 = _search(pol, table_infer())
    np.testing.assert_array_equal(visits, visits2)
    np.testing.assert_array_equal(acts, again)
    assert (visits.sum(axis=1) == 16).all()
    for k, m in enumerate(POSITIONS):
        assert TicTacToe().legal(play(m))[acts[k]]
    eng = rf.Engine(
        GAME,
        None,
        rf.policies.GumbelAlphaZero(num_simulations=8, leaf_batch=4),
        rf.learners.AlphaZero(),
        n_games=4,
        seed=1,
    )
    _check_records(eng.collect(64, table_infer()), 9)


@pytest.mark.parametrize(
    "chance",
    [rf.chance_modes.AlwaysResample(), rf.chance_modes.Committed(3), rf.chance_modes.ExpandAll()],
    ids=["always_resample", "committed3", "expand_all"],
)
def test_in_step_chance(chance):
    """The dice race (chance inside its step) under each chance mode, negamax and MaxN: valid
    targets over the legal actions, finite value targets (outcomes, or the tail value of a game the
    horizon truncated)."""
    game = make_dice_race()

    def infer(obs):
        return np.tanh(obs[:, :2] * 0.7), np.tanh(obs[:, 0] - obs[:, 1])

    for backup in ("auto", "maxn"):
        pol = rf.policies.GumbelAlphaZero(num_simulations=8, chance=chance, sequential_backup=backup)
        eng = rf.Engine(game, None, pol, rf.learners.AlphaZero(), n_games=4, seed=2)
        batch = eng.collect(64, infer)
        _check_records(batch, 2)
        assert np.isfinite(batch.value_targets).all() and (np.abs(batch.value_targets) <= 1.0).all()
