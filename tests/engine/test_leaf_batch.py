"""Leaf batching with virtual loss (``AlphaZero`` / ``Mcts`` ``leaf_batch`` and ``virtual_loss``,
an extension of 0.4.0): rows per callback call grow with ``leaf_batch``, the searches stay
sound, ``leaf_batch=1`` is today's search (records and fingerprint), determinism across
``n_threads``, the inference cache, chance modes, simultaneous games, snapshots, ``choose`` and
validation.  ``leaf_batch`` is a runtime value: the Connect4 engine compiles once for every k.

Compositions compiled (each shared with other engine test modules): Connect4 and Nim under the
tree kernels; Connect4 with the cache, Snake, the dice race and the snapshot round trip are
marked slow or reuse those.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (  # tests/ is on sys.path (rootdir conftest)
    GEOMETRY_KEYS,
    assert_same_batch,
    linear_pv,
    linear_q,
    make_dice_race,
    make_nim,
    zero_pv,
    zero_q,
)
from helpers import REWARD as DICE_REWARD
from helpers import leaf_pv as dice_pv
from helpers import leaf_q as dice_q

import reinfors as rf

P = rf.policies
C4 = rf.games.Connect4()
C4_REWARD = rf.Reward(win=1.0, loss=-1.0)
WIN_NOW = [0, 0, 1, 1, 2, 2]  # player 0 to move: 3 completes the bottom row
BLOCK_NOW = [0, 6, 1, 6, 2]  # player 1 to move: must block 3


C4_PV = linear_pv(2 * 6 * 7, 7)


def c4_env(moves=()):
    env = rf.Env(C4, rf.Reward(), seed=0)
    for m in moves:
        env.step({env.active_agents()[0]: m})
    return env


def c4_az(k, n_games=32, n_threads=2, sims=64, **kw):
    pol = P.AlphaZero(num_simulations=sims, leaf_batch=k)
    return rf.Engine(C4, C4_REWARD, pol, rf.learners.AlphaZero(), n_games=n_games, n_threads=n_threads, seed=1, **kw)


# -- rows per call ------------------------------------------------------------------------------


def test_unbatched_trees_never_compile_leaf_batching():
    """The batched rounds compile only into the kernel modules of ``leaf_batch > 1`` (``LB_ON``):
    an unbatched AlphaZero never types them, and one batched module serves every k > 1."""
    plain = c4_az(1, n_games=4, sims=8)
    plain.collect(16, zero_pv(7))
    mods = {}
    for k in (2, 8):
        e = c4_az(k, n_games=4, sims=8)
        e.collect(16, zero_pv(7))
        mods[k] = e._rt.k
    assert not plain._rt.k.LB_ON and not plain._rt.k._lb_run.signatures
    # The batched rounds are typed when ``work`` compiles in this process; when another process
    # (a test worker, a docs snippet, the sweep driver) cached the module first, ``work`` loads
    # from Numba's cache and its callees are never typed here.
    lb = mods[2]
    assert mods[2] is mods[8] and lb.LB_ON and (lb._lb_run.signatures or sum(lb.work.stats.cache_hits.values()))
    assert mods[2] is not plain._rt.k


def test_rows_per_call_grow_with_leaf_batch():
    """c4 AlphaZero, 32 games, 2 threads: a round holds up to k leaves per tree, so a callback
    call holds ~k times the rows (the automatic batch follows the rows in flight)."""
    rpc, rounds = {}, {}
    for k in (1, 4, 8, 16):
        t = c4_az(k).collect(96, zero_pv(7)).telemetry
        rpc[k] = t["infer_rows"] / t["infer_calls"]
        rounds[k] = t["mean_rounds"]
    for k in (4, 8, 16):
        assert rpc[k] >= 0.5 * k * rpc[1], rpc
        # 64 simulations: the root round, then ceil(63 / k) rounds (fewer rows: duplicates)
        assert rounds[k] <= 1 + -(-63 // k), rounds
    assert rounds[1] == 64
    assert rpc[1] < rpc[4] < rpc[8] < rpc[16]


# -- today's search at leaf_batch=1 -------------------------------------------------------------


@pytest.mark.parametrize("name", ["alphazero", "mcts"])
def test_leaf_batch_1_is_todays_search(name):
    if name == "alphazero":
        make, lrn, cb = P.AlphaZero, rf.learners.AlphaZero, C4_PV
        kw = dict(num_simulations=12)
    else:
        make, lrn, cb = P.Mcts, rf.learners.TreeStrap, linear_q(2 * 6 * 7, 7)
        kw = dict(num_simulations=12, temperature=0.5, temperature_drop=4)
    engines = [
        rf.Engine(C4, C4_REWARD, pol, lrn(), n_games=4, seed=7, n_threads=1)
        for pol in (make(**kw), make(**kw, leaf_batch=1), make(**kw, leaf_batch=1, virtual_loss=3.0))
    ]
    base = engines[0]
    assert "leaf_batch" not in base.resolved_config()["policy"]
    batches = [e.collect(24, cb) for e in engines]
    for e, b in zip(engines[1:], batches[1:], strict=True):
        assert e.resolved_config() == base.resolved_config()
        assert e.config_fingerprint() == base.config_fingerprint()
        assert_same_batch(batches[0], b, name)


def test_resolved_config_carries_the_knobs_when_batched():
    e = c4_az(8, n_games=2)
    pol = e.resolved_config()["policy"]
    assert pol["leaf_batch"] == 8 and pol["virtual_loss"] == 1.0
    assert e.config_fingerprint() != c4_az(1, n_games=2).config_fingerprint()
    f = rf.engine_from_config(e.resolved_config())
    assert f.config_fingerprint() == e.config_fingerprint()
    m = P.Mcts(leaf_batch=4, virtual_loss=0.5)._config()
    assert m["leaf_batch"] == 4 and m["virtual_loss"] == 0.5


# -- soundness ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["alphazero", "mcts"])
def test_batched_search_takes_the_immediate_win_and_blocks(name):
    if name == "alphazero":
        pol, cb = P.AlphaZero(num_simulations=300, noise=None, temperature=0.0, leaf_batch=8), zero_pv(7)
    else:
        pol, cb = P.Mcts(num_simulations=300, leaf_batch=8), zero_q(7)
    envs = [c4_env(WIN_NOW), c4_env(BLOCK_NOW), c4_env(WIN_NOW)]
    assert pol.choose(envs, cb, gamma=1.0) == [3, 3, 3]


@pytest.mark.parametrize("policy", ["alphazero", "mcts"])
@pytest.mark.parametrize("k", [4, 16])
def test_batched_search_with_a_uniform_prior_finds_the_nim_win(policy, k):
    """Nim (take 1 or 2, last stone wins) from 4: take 1, also with k leaves per round."""
    if policy == "alphazero":
        pol = P.AlphaZero(num_simulations=200, noise=None, temperature=0.0, leaf_batch=k)
        lrn, infer = rf.learners.AlphaZero(), zero_pv(2)
    else:
        pol = P.Mcts(num_simulations=200, leaf_batch=k)
        lrn, infer = rf.learners.TreeStrap(gamma=1.0), zero_q(2)
    b = rf.Engine(make_nim(4), rf.Reward(), pol, lrn, n_games=2, seed=3).collect(20, infer)
    rows = (b.obs[:, 0] == 1.0) & (b.players == 0)
    assert rows.any()
    if policy == "alphazero":
        assert (b.policy_targets[rows].argmax(axis=1) == 0).all()
    else:
        t = b.targets[rows][:, 0, :]
        assert (t.argmax(axis=1) == 0).all() and (t[:, 0] > 0.5).all()
    assert all(ret[0] == 1.0 for ret, _, _ in b.telemetry["episodes"])
    assert b.telemetry["mean_rounds"] < b.telemetry["mean_leaves"]


def test_visit_targets_sum_to_the_simulations():
    """Virtual losses are all removed: the root visits (AlphaZero's unnormalised targets) add up
    to the budget minus the root's own evaluation, every decision."""
    pol = P.AlphaZero(num_simulations=40, leaf_batch=8)
    e = rf.Engine(C4, C4_REWARD, pol, rf.learners.AlphaZero(), n_games=4, seed=2, n_threads=1)
    b = e.collect(16, C4_PV)
    assert np.allclose(b.policy_targets.sum(axis=1), 1.0)
    # choose exposes the raw root: a finished search parks with a legal action
    acts = pol.choose([c4_env(), c4_env([3])], C4_PV, gamma=0.99)
    assert all(0 <= a < 7 for a in acts)


def test_batched_maxn_backup_and_per_player_routes():
    """maxn (a row per agent per leaf) batched: the immediate win is found; per-player callbacks
    (one route each, one span per row) give the records of the shared callback."""
    pol = P.AlphaZero(num_simulations=200, noise=None, temperature=0.0, sequential_backup="maxn", leaf_batch=8)
    assert pol.choose([c4_env(WIN_NOW), c4_env(BLOCK_NOW)], zero_pv(7), gamma=1.0) == [3, 3]
    pol = P.AlphaZero(num_simulations=16, sequential_backup="maxn", leaf_batch=4)
    make = lambda: rf.Engine(C4, C4_REWARD, pol, rf.learners.AlphaZero(), n_games=4, seed=3, n_threads=2)  # noqa: E731
    shared = make().collect(20, C4_PV)
    routed = make().collect(20, [C4_PV, C4_PV])
    assert_same_batch(shared, routed, "routes", skip=GEOMETRY_KEYS)
    assert shared.telemetry["extra_eval_rows"] > 0  # maxn: N rows per evaluated leaf


# -- determinism --------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [8])
def test_batched_search_is_deterministic_across_threads(k):
    one = c4_az(k, n_games=8, n_threads=1, sims=24).collect(40, C4_PV)
    two = c4_az(k, n_games=8, n_threads=2, sims=24).collect(40, C4_PV)
    assert_same_batch(one, two, "threads", skip=GEOMETRY_KEYS)
    three = c4_az(k, n_games=8, n_threads=2, sims=24, batch_size=5).collect(40, C4_PV)
    assert_same_batch(one, three, "batch_size", skip=GEOMETRY_KEYS)


def test_choose_is_deterministic_and_batches_rows():
    calls = []

    def rec(obs):
        calls.append(len(obs))
        return C4_PV(obs)

    envs = [c4_env(), c4_env([3]), c4_env([3, 3])]
    pol = P.AlphaZero(num_simulations=33, leaf_batch=8)
    a = pol.choose(envs, rec, seed=4, gamma=0.9)
    n1 = len(calls)
    assert pol.choose(envs, C4_PV, seed=4, gamma=0.9) == a
    # the root round, then 4 rounds of 8 leaves (32 simulations)
    assert n1 == 5 and max(calls) <= 3 * 8 and max(calls) > 3


# -- the cache, chance modes, simultaneous games, snapshots ----------------------------------------


@pytest.mark.slow
def test_batched_search_with_the_inference_cache_matches_it_off():
    want = c4_az(8, n_games=8, sims=24).collect(40, C4_PV)
    got = c4_az(8, n_games=8, sims=24, infer_cache=4096).collect(40, C4_PV)
    skip = GEOMETRY_KEYS | {"cache_lookups", "cache_hits", "cache_demotions", "infer_rows"}
    assert_same_batch(want, got, "cache", skip=skip)
    assert got.telemetry["cache_hits"] > 0 and got.telemetry["infer_rows"] < want.telemetry["infer_rows"]


@pytest.mark.parametrize("chance", ["expand_all", "committed2", "resample"])
@pytest.mark.parametrize("policy", ["alphazero", "mcts"])
def test_batched_search_with_in_step_chance(policy, chance):
    """The dice race (chance inside the step): every chance mode runs batched, deterministic
    across threads, with several leaves per round."""
    mode = {
        "expand_all": rf.chance_modes.ExpandAll(),
        "committed2": rf.chance_modes.Committed(samples=2),
        "resample": rf.chance_modes.AlwaysResample(),
    }[chance]
    if policy == "alphazero":
        pol, lrn, cb = P.AlphaZero(num_simulations=24, chance=mode, leaf_batch=6), rf.learners.AlphaZero(), dice_pv
    else:
        pol, lrn, cb = P.Mcts(num_simulations=24, chance=mode, leaf_batch=6), rf.learners.TreeStrap(), dice_q
    out = []
    for threads in (1, 2):
        e = rf.Engine(make_dice_race(), DICE_REWARD, pol, lrn, n_games=4, seed=9, n_threads=threads)
        out.append(e.collect(30, cb))
    assert_same_batch(out[0], out[1], chance, skip=GEOMETRY_KEYS)
    t = out[0].telemetry
    assert t["mean_rounds"] < t["mean_leaves"]


@pytest.mark.slow
@pytest.mark.parametrize("chance", ["committed", "expand_all"])
@pytest.mark.parametrize("policy", ["alphazero", "mcts"])
def test_batched_decoupled_search_on_snake(policy, chance):
    game = rf.games.Snake(grid_size=6, num_snakes=2, food=1, max_ticks=15)
    obs = int(np.prod(game.observation_space().shape))
    mode = rf.chance_modes.ExpandAll() if chance == "expand_all" else rf.chance_modes.Committed()
    if policy == "alphazero":
        pol = P.AlphaZero(num_simulations=16, chance=mode, leaf_batch=4)
        lrn, cb = rf.learners.AlphaZero(), linear_pv(obs, 3)
    else:
        pol = P.Mcts(num_simulations=16, chance=mode, leaf_batch=4)
        lrn, cb = rf.learners.TreeStrap(), linear_q(obs, 3)
    out = []
    for threads in (1, 2):
        e = rf.Engine(game, rf.Reward(), pol, lrn, n_games=4, seed=2, n_threads=threads)
        out.append(e.collect(30, cb))
    assert_same_batch(out[0], out[1], chance, skip=GEOMETRY_KEYS)
    t = out[0].telemetry
    assert t["mean_rounds"] < t["mean_leaves"]


@pytest.mark.slow
def test_snapshot_mid_run_restores_record_exactly():
    e = c4_az(8, n_games=4, n_threads=1, sims=16)
    e.collect(5, C4_PV)
    e.collect(3, C4_PV)
    blob = e.snapshot(policy_version="lb").to_bytes()
    want = [e.collect(n, C4_PV) for n in (4, 9)]
    f = c4_az(8, n_games=4, n_threads=2, sims=16, batch_size=3)
    f.restore(rf.EngineSnapshot.from_bytes(blob), expect_policy_version="lb")
    for i, n in enumerate((4, 9)):
        assert_same_batch(want[i], f.collect(n, C4_PV), f"window {i}", skip=GEOMETRY_KEYS)
    # a snapshot of a batched engine does not restore into an unbatched one
    g = c4_az(1, n_games=4, n_threads=1, sims=16)
    with pytest.raises(ValueError):
        g.restore(rf.EngineSnapshot.from_bytes(blob))


# -- validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [P.AlphaZero, P.Mcts])
def test_leaf_batch_validation(make):
    with pytest.raises(ValueError, match=r"^leaf_batch must be >= 1$"):
        make(leaf_batch=0)
    with pytest.raises(ValueError, match=r"^leaf_batch must be <= 4096 \(got 4097\)$"):
        make(leaf_batch=4097)
    with pytest.raises(TypeError, match="argument 'leaf_batch': 'float' object cannot be interpreted as an integer"):
        make(leaf_batch=2.0)
    with pytest.raises(TypeError, match="argument 'leaf_batch': 'str' object"):
        make(leaf_batch="8")
    with pytest.raises(ValueError, match=r"^leaf_batch must be >= 1$"):
        make(leaf_batch=-3)
    for bad in (-0.5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"^virtual_loss must be finite and >= 0$"):
            make(leaf_batch=4, virtual_loss=bad)
    with pytest.raises(TypeError, match="argument 'virtual_loss': must be real number, not str"):
        make(virtual_loss="1")
    assert make(leaf_batch=4096, virtual_loss=0)._config()["virtual_loss"] == 0.0
    # keyword-only: the positional arity stays 0.4.0's
    with pytest.raises(TypeError):
        P.AlphaZero(64, 1.5, 64, 1.0, 8, None, None, "auto", 4)
    with pytest.raises(TypeError):
        P.Mcts(64, 2.0, 64, "value", 0.0, None, None, 4)
    # more leaves than simulations is fine: a round never holds more than the budget
    assert make(num_simulations=8, leaf_batch=64)._config()["leaf_batch"] == 64
