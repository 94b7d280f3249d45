"""reinfors.distributed.Collectors on a local Ray (``ray.init(num_cpus=2)``): batches rebuilt from
arrays, learner versions as ``weights_generations``, records identical to a local engine with
the actor's seed, errors naming the actor, validation; faults (an actor killed before its first
window, mid-window, between windows, while it builds the callback of new weights) change no
record; flow control; whole-run snapshot / restore.  Ray is in the test extra: nothing here
skips.  The multi-node tests are in test_distributed_cluster.py, the self-play example's
checkpoint / resume in test_distributed_example.py.

One composition: Connect4 under EpsilonGreedyQ + Dqn (test_stream.py's ``dqn``), 4 games, 1
thread, so the actors load kernels the engine tests already compiled.
"""

from __future__ import annotations

import numpy as np
import pytest
import ray

import reinfors as rf
from reinfors.distributed import (
    CollectorError,
    CollectorRestartWarning,
    Collectors,
    batch_from_wire,
    batch_to_wire,
    snapshot_from_wire,
    snapshot_to_wire,
)
from tests.distributed.helpers import (
    COLLECT,
    CRASHING,
    LINEAR,
    by_actor,
    check_against_replay,
    config,
    replay,
    run,
    same,
    weights,
)


@pytest.fixture(scope="module")
def local_ray():
    ray.init(
        num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
        object_store_memory=100 * 2**20,
    )  # fmt: skip
    yield
    ray.shutdown()


def _alive_actors() -> int:
    return sum(1 for a in ray._private.state.actors().values() if a["State"] != "DEAD")


def test_wire_round_trip_rebuilds_the_batch():
    eng = rf.engine_from_config(config())
    b = eng.collect(16, LINEAR(weights(0)))
    arrays, meta = batch_to_wire(b)
    assert all(isinstance(v, np.ndarray) for v in arrays.values()) and meta["type"] == "DqnBatch"
    c = batch_from_wire(arrays, meta)
    assert type(c) is rf.DqnBatch and len(c) == 7
    assert same(b, c) and c.telemetry == b.telemetry
    with pytest.raises(ValueError, match="missing or unexpected"):
        batch_from_wire({k: v for k, v in arrays.items() if k != "obs"}, meta)
    with pytest.raises(ValueError, match="unknown batch type"):
        batch_from_wire(arrays, {"type": "Nope", "telemetry": {}})


def test_snapshot_wire_round_trip_continues_record_exactly():
    """What every window sends beside its batch: the engine snapshot as arrays plus a dict."""
    eng = rf.engine_from_config(config())
    eng.collect(COLLECT, LINEAR(weights(0)))
    meta, arrays = snapshot_to_wire(eng.snapshot())
    assert all(isinstance(a, np.ndarray) for a in arrays.values()) and meta["generation"] == 0
    want = eng.collect(COLLECT, LINEAR(weights(0)))
    other = rf.engine_from_config(config())
    other.restore(snapshot_from_wire(meta, arrays))
    assert same(other.collect(COLLECT, LINEAR(weights(0))), want)
    with pytest.raises(ValueError, match="invalid EngineSnapshot"):
        snapshot_from_wire(dict(meta, fingerprint="0" * 64), arrays)
    with pytest.raises(ValueError, match="unknown array"):
        snapshot_from_wire(meta, dict(arrays, nope=np.zeros(1)))
    with pytest.raises(ValueError, match="wire meta"):
        snapshot_from_wire({}, arrays)
    with pytest.raises(TypeError, match="EngineSnapshot"):
        snapshot_to_wire(b"bytes")


def test_validation():
    cfg = config()
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
    with pytest.raises(ValueError, match="max_restarts must be >= -1"):
        Collectors(cfg, LINEAR, 1, 8, max_restarts=-2)
    with pytest.raises(TypeError, match="max_restarts must be an int"):
        Collectors(cfg, LINEAR, 1, 8, max_restarts=None)
    with pytest.raises(ValueError, match="max_in_flight must be >= 1"):
        Collectors(cfg, LINEAR, 1, 8, max_in_flight=0)
    with pytest.raises(TypeError, match="ordered must be a bool"):
        Collectors(cfg, LINEAR, 1, 8, ordered=1)
    with pytest.raises(ValueError, match="actor_resources must hold one dict per actor"):
        Collectors(cfg, LINEAR, 2, 8, actor_resources=[{"a": 1}])
    with pytest.raises(TypeError, match="actor_resources must be a list"):
        Collectors(cfg, LINEAR, 1, 8, actor_resources={"a": 1})
    with pytest.raises(ValueError, match="actor_resources entries"):
        Collectors(cfg, LINEAR, 1, 8, actor_resources=[{"a": -1}])
    with pytest.raises(ValueError, match="num_cpus"):
        Collectors(cfg, LINEAR, 1, 8, num_cpus=-1)


def test_collectors_feed_one_learner(local_ray):
    cfg = config()
    with Collectors(cfg, LINEAR, n_actors=2, collect_size=COLLECT) as col:
        with pytest.raises(RuntimeError, match="set_weights"):
            next(col)
        assert col.set_weights(weights(0)) == 0
        got = []
        for step, (actor_id, version, batch) in enumerate(col):
            assert isinstance(batch, rf.DqnBatch) and len(batch.obs) >= COLLECT
            g = batch.weights_generations
            assert g.dtype == np.int64 and g.shape == (len(batch.obs),)
            assert g.max() <= version <= col.version  # stamps are learner versions
            got.append((actor_id, version, batch))
            if step in (1, 3):
                col.set_weights(weights(col.version + 1))
            # Completion order: an actor slowed down by the machine delivers later, never not at
            # all (among windows ready together the least recently served goes first).
            if step >= 7 and set(by_actor(got)) == {0, 1}:
                break
        assert set(by_actor(got)) == {0, 1} and max(v for _, v, _ in got) == 2
    # Each actor collected exactly what a local engine with its seed collects under those versions.
    check_against_replay(cfg, got)
    first0, first1 = by_actor(got)[0][0][1], by_actor(got)[1][0][1]
    assert not (first0.obs.shape == first1.obs.shape and np.array_equal(first0.obs, first1.obs))  # seed + 1
    with pytest.raises(RuntimeError, match="closed"):
        col.set_weights(weights(9))
    assert col.n_actors == 0


def test_an_actor_error_surfaces_naming_the_actor(local_ray):
    def failing(w):
        inner = LINEAR(w)
        calls = [0]

        def infer(obs):
            calls[0] += 1
            if calls[0] > 3:
                raise ZeroDivisionError("boom in the callback")
            return inner(obs)

        return infer

    # An exception of the actor's own code is not a fault: no restart, at once.
    with Collectors(config(), failing, n_actors=1, collect_size=400) as col:
        col.set_weights(weights(0))
        with pytest.raises(CollectorError, match=r"collector actor 0 failed: ZeroDivisionError") as info:
            for _ in range(3):
                next(col)
        assert info.value.actor_id == 0
        assert isinstance(info.value.__cause__, ZeroDivisionError)
        assert col.restarts == [0]
    # A config the actor cannot build also names the actor (an __init__ failure is not restarted).
    bad = dict(config(), game={"name": "no_such_game"})
    with Collectors(bad, LINEAR, n_actors=1, collect_size=8, warm=False) as col:
        col.set_weights(weights(0))
        with pytest.raises(CollectorError, match="collector actor 0 failed"):
            next(col)
    # Warming (the default) builds the first actor's engine at once: the error surfaces there.
    with pytest.raises(CollectorError, match="collector actor 0 failed"):
        Collectors(bad, LINEAR, n_actors=2, collect_size=8)


def test_faults_change_no_record(local_ray, tmp_path):
    """The actor is killed before its first window (ray.kill), mid-window (os._exit in the
    callback), between windows (ray.kill) and while it builds the callback of new weights
    (os._exit in the factory): the learner receives the very batches of a fault-free run.  (Two
    actors and a node lost: test_distributed_cluster.py; a kill among two actors with windows
    queued: the flow-control test below.)"""
    cfg = config()
    n = 8
    with Collectors(cfg, LINEAR, n_actors=1, collect_size=COLLECT) as col:
        clean = run(col, n)
    mid, during = tmp_path / "mid", tmp_path / "during"
    mid.touch()
    during.touch()
    # Window k runs under version k.  The process started after the first kill makes its 10th
    # callback call inside window 1 (4 games: 6-7 calls a 24-record window); version 6's callback
    # is built at window 6.
    factory = CRASHING(exit_in_factory=(str(during), 6), exit_in_callback=(str(mid), 10))
    with Collectors(cfg, factory, n_actors=1, collect_size=COLLECT, max_restarts=4) as col:
        ray.kill(col._actors[0])  # before the first window
        with pytest.warns(CollectorRestartWarning) as rec:
            faulty = run(col, n, hooks={3: lambda: ray.kill(col._actors[0])})  # between windows 3 and 4
        assert col.restarts == [4]
    assert not mid.exists() and not during.exists()  # both crashes happened
    msgs = [str(w.message) for w in rec if issubclass(w.category, CollectorRestartWarning)]
    assert len(msgs) == 4 and all(m.startswith("collector actor 0 died") for m in msgs), msgs
    assert "restart 1 of 4" in msgs[0] and "from its seed state" in msgs[0]
    assert "restart 4 of 4" in msgs[3] and "after window 6" in msgs[3] and "versions [6]" in msgs[3]
    assert [(a, v) for a, v, _ in faulty] == [(a, v) for a, v, _ in clean] == [(0, k) for k in range(n)]
    for (_, _, b), (_, _, c) in zip(faulty, clean, strict=True):
        assert same(b, c)
    check_against_replay(cfg, faulty)


def test_past_max_restarts_the_actor_is_named(local_ray, tmp_path):
    cfg = config()
    with Collectors(cfg, LINEAR, n_actors=1, collect_size=COLLECT, max_restarts=1) as col:
        col.set_weights(weights(0))
        ray.kill(col._actors[0])
        with pytest.warns(CollectorRestartWarning, match="collector actor 0 died"):
            next(col)
        ray.kill(col._actors[0])
        with pytest.raises(CollectorError, match=r"collector actor 0 failed \(died; max_restarts=1\)") as info:
            next(col)
        assert info.value.actor_id == 0 and col.n_actors == 0  # closed
    # max_restarts=0: no snapshots, the first death fails as before fault tolerance.
    with Collectors(cfg, LINEAR, n_actors=1, collect_size=COLLECT, max_restarts=0) as col:
        col.set_weights(weights(0))
        next(col)
        with pytest.raises(RuntimeError, match="max_restarts=0"):
            col.snapshot()
        ray.kill(col._actors[0])
        with pytest.raises(CollectorError, match="collector actor 0 failed"):
            next(col)


def test_flow_control_and_one_put_per_version(local_ray, monkeypatch):
    puts = []
    real_put = ray.put
    monkeypatch.setattr(ray, "put", lambda v, **kw: puts.append(v) or real_put(v, **kw))
    cfg = config()
    with Collectors(cfg, LINEAR, n_actors=2, collect_size=COLLECT, max_in_flight=2) as col:
        col.set_weights(weights(0))
        got = []
        with pytest.warns(CollectorRestartWarning, match="re-running"):
            for k in range(6):
                got.append(next(col))
                assert all(0 <= f <= 2 for f in col.in_flight), col.in_flight
                if k == 2:
                    ray.kill(col._actors[got[-1][0]])  # a restart re-runs windows without a new put
                if k % 2:
                    col.set_weights(weights(col.version + 1))
        assert col.in_flight[0] + col.in_flight[1] >= 1
    assert len(puts) == 4  # versions 0..3, once each, restart or not
    check_against_replay(cfg, got)
    assert _alive_actors() == 0  # close() left no actor


def test_snapshot_restore_continues_the_run(local_ray):
    """k batches, snapshot, N - k more; then restore the snapshot (in new collectors) and take
    the N - k again: the same batches, the same versions, the same actors."""
    import pickle

    cfg = config()
    n, k = 8, 3
    with Collectors(cfg, LINEAR, n_actors=2, collect_size=COLLECT, ordered=True, max_in_flight=2) as col:
        head = run(col, k)
        snap = pickle.loads(pickle.dumps(col.snapshot()))  # it is a checkpoint: it survives pickling
        tail = [next(col)]
        col.set_weights(weights(col.version + 1))
        tail += run(col, n - k - 1)
        with pytest.raises(ValueError, match="format"):
            col.restore(dict(snap, format="nope"))
        with pytest.raises(TypeError, match="snapshot must be a dict"):
            col.restore([])
    assert snap["version"] == k and any(a["pending"] for a in snap["actors"])
    with Collectors(cfg, LINEAR, n_actors=2, collect_size=COLLECT, ordered=True, max_in_flight=2) as col:
        # Another composition (actor 1's engine for actor 0: another seed) is refused, unchanged.
        swapped = dict(snap, actors=[snap["actors"][1], snap["actors"][0]])
        with pytest.raises(ValueError, match="actor 0's engine snapshot is of another composition"):
            col.restore(swapped)
        col.restore(snap)
        assert col.version == k
        again = [next(col)]
        col.set_weights(weights(col.version + 1))
        again += run(col, n - k - 1)
    assert [(a, v) for a, v, _ in again] == [(a, v) for a, v, _ in tail]
    for (_, _, b), (_, _, c) in zip(again, tail, strict=True):
        assert same(b, c)
    check_against_replay(cfg, head + tail)


def test_replay_helper_is_a_fault_free_run():
    """The reference the fault tests compare against: windows of one local engine (generation ==
    version); replaying the same versions twice gives the same batches."""
    a = replay(config(), 0, [0, 0, 2])
    b = replay(config(), 0, [0, 0, 2])
    assert all(same(x, y) for x, y in zip(a, b, strict=True))
    assert a[2].weights_generations.max() <= 2  # a record keeps the version of its decision
    assert replay(config(), 0, [3, 3, 3, 3])[-1].weights_generations.max() == 3
