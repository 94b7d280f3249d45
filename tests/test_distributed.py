"""reinfors.distributed.Collectors on a local Ray cluster (``ray.init(num_cpus=2)``): batches
rebuilt from arrays, learner versions as ``weights_generations``, records identical to a local
engine with the actor's seed, errors naming the actor, validation.  Skipped without Ray.

One composition: Connect4 under EpsilonGreedyQ + Dqn (test_stream.py's ``dqn``), so the actors
load kernels the engine tests already compiled.
"""

from __future__ import annotations

import numpy as np
import pytest

ray = pytest.importorskip("ray")

import reinfors as rf  # noqa: E402
from reinfors.distributed import CollectorError, Collectors, batch_from_wire, batch_to_wire  # noqa: E402

A = 7


def _config(seed=3):
    eng = rf.Engine(
        rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0), rf.policies.EpsilonGreedyQ(epsilon=0.2),
        rf.learners.Dqn(), n_games=4, seed=seed, n_threads=1,
    )  # fmt: skip
    return eng.resolved_config()


def _factories():
    """Infer factories defined in a local scope (Ray ships them by value to the workers)."""

    def linear(weights):
        w = np.asarray(weights, np.float64)

        def infer(obs):
            return (obs.astype(np.float64) @ w)[:, None, :]

        return infer

    def failing(weights):
        w = np.asarray(weights, np.float64)
        calls = [0]

        def infer(obs):
            calls[0] += 1
            if calls[0] > 3:
                raise ZeroDivisionError("boom in the callback")
            return (obs.astype(np.float64) @ w)[:, None, :]

        return infer

    return linear, failing


LINEAR, FAILING = _factories()


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def _weights(seed):
    return np.random.default_rng(seed).standard_normal((84, A)) * 0.3


def test_wire_round_trip_rebuilds_the_batch():
    eng = rf.engine_from_config(_config())
    b = eng.collect(16, LINEAR(_weights(0)))
    arrays, meta = batch_to_wire(b)
    assert all(isinstance(v, np.ndarray) for v in arrays.values()) and meta["type"] == "DqnBatch"
    c = batch_from_wire(arrays, meta)
    assert type(c) is rf.DqnBatch and len(c) == 7
    for name in rf.DqnBatch._FIELDS:
        if name != "telemetry":
            assert np.array_equal(getattr(b, name), getattr(c, name)), name
    assert c.telemetry == b.telemetry
    with pytest.raises(ValueError, match="missing or unexpected"):
        batch_from_wire({k: v for k, v in arrays.items() if k != "obs"}, meta)
    with pytest.raises(ValueError, match="unknown batch type"):
        batch_from_wire(arrays, {"type": "Nope", "telemetry": {}})


@pytest.mark.slow  # ~20 s of actor start-up (each imports reinfors and loads the kernels) + cluster start
def test_collectors_feed_one_learner(cluster):
    cfg = _config()
    with Collectors(cfg, LINEAR, n_actors=2, collect_size=24) as col:
        with pytest.raises(RuntimeError, match="set_weights"):
            next(col)
        assert col.set_weights(_weights(0)) == 0
        got = {0: [], 1: []}
        versions_seen = []
        for step, (actor_id, version, batch) in enumerate(col):
            assert isinstance(batch, rf.DqnBatch) and len(batch.obs) >= 24
            g = batch.weights_generations
            assert g.dtype == np.int64 and g.shape == (len(batch.obs),)
            assert g.max() <= version <= col.version  # stamps are learner versions
            got[actor_id].append((version, batch))
            versions_seen.append(version)
            if step in (1, 3):
                col.set_weights(_weights(step))
            if (step >= 5 and got[0] and got[1]) or step == 200:  # actors start at their own pace
                break
        assert got[0] and got[1]
        assert max(versions_seen) == 2
    # Actor 0 collected exactly what a local engine with its seed collects under the same weights.
    local = rf.engine_from_config(cfg)
    version, first = got[0][0]
    assert version == 0
    want = local.collect(24, LINEAR(_weights(0)))
    assert np.array_equal(first.obs, want.obs) and np.array_equal(first.actions, want.actions)
    # Actor 1 ran with seed + 1: other records.
    other = got[1][0][1]
    assert not (other.obs.shape == first.obs.shape and np.array_equal(other.obs, first.obs))
    with pytest.raises(RuntimeError, match="closed"):
        col.set_weights(_weights(9))


@pytest.mark.slow
def test_an_actor_error_surfaces_naming_the_actor(cluster):
    with Collectors(_config(), FAILING, n_actors=1, collect_size=400) as col:
        col.set_weights(_weights(0))
        with pytest.raises(CollectorError, match=r"collector actor 0 failed: ZeroDivisionError") as info:
            for _ in range(3):
                next(col)
        assert info.value.actor_id == 0
        assert isinstance(info.value.__cause__, ZeroDivisionError)
    # A config the actor cannot build also names the actor.
    bad = dict(_config(), game={"name": "no_such_game"})
    with Collectors(bad, LINEAR, n_actors=1, collect_size=8, warm=False) as col:
        col.set_weights(_weights(0))
        with pytest.raises(CollectorError, match="collector actor 0 failed"):
            next(col)
    # Warming (the default) builds the first actor's engine at once: the error surfaces there.
    with pytest.raises(CollectorError, match="collector actor 0 failed"):
        Collectors(bad, LINEAR, n_actors=2, collect_size=8)


def test_validation():
    cfg = _config()
    with pytest.raises(TypeError, match="JSON"):
        Collectors(dict(cfg, extra=object()), LINEAR, 1, 8)
    with pytest.raises(TypeError, match="dict"):
        Collectors([], LINEAR, 1, 8)
    with pytest.raises(TypeError, match="callable"):
        Collectors(cfg, None, 1, 8)
    with pytest.raises(ValueError, match="n_actors must be >= 1"):
        Collectors(cfg, LINEAR, 0, 8)
    with pytest.raises(ValueError, match="collect_size must be >= 1"):
        Collectors(cfg, LINEAR, 1, 0)
    with pytest.raises(TypeError, match="n_actors must be an int"):
        Collectors(cfg, LINEAR, 1.5, 8)


@pytest.mark.slow
def test_ray_self_play_example_ends_with_its_json_line():
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, str(root / "examples" / "ray_self_play.py"), "--actors", "2", "--iterations", "3",
         "--records", "64", "--sims", "4", "--n-games", "4"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last["actors"] == 2 and last["iterations"] == 3 and last["records"] >= 3 * 64
    assert sum(last["records_per_actor"]) == last["records"] and last["lag_max"] >= 0
