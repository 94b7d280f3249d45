"""Engine.collect_stream / rf.CollectStream: lifecycle, the original's errors and messages, the
pause() barrier, depth, identity with synchronous collects, threads, stop latency, forfeit."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import GEOMETRY_KEYS, engine, infer_for  # tests/ is on sys.path (rootdir conftest)
from helpers import assert_same_batch as _assert_same_batch
from helpers import c4_linear_q as linear_q

import reinfors as rf
from reinfors.engine import _HELD

ROOT = Path(__file__).resolve().parents[2]
C4_REWARD = rf.Reward(win=1.0, loss=-1.0)
A = 7  # Connect4 actions
STOPPED = "collect stream is stopped"
ENDED = "collect stream ended (stopped, or a callback error was already raised)"


def assert_same_batch(a, b):
    """Bit-identical batches; telemetry up to the counts that depend on how fires happened to be
    cut (timing), not on the records."""
    _assert_same_batch(a, b, skip=GEOMETRY_KEYS)


def twin_collects(kind, n, size, **kw):
    eng = engine(kind, **kw)
    infer = infer_for(kind)
    return [eng.collect(size, infer) for _ in range(n)], eng


def error(fn):
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001
        return type(exc), str(exc)
    return None


# -- surface and validation ---------------------------------------------------------------------


def test_class_is_exported_and_not_constructible():
    assert rf.CollectStream is rf._reinfors.CollectStream and "CollectStream" in rf.__all__
    with pytest.raises(TypeError, match="No constructor defined for CollectStream"):
        rf.CollectStream()


@pytest.mark.parametrize(
    "args,exc,msg",
    [
        ((0, "q"), ValueError, "collect_size must be >= 1"),
        ((-1, "q"), OverflowError, "can't convert negative int to unsigned"),
        ((2**64, "q"), OverflowError, "int too big to convert"),
        ((1.5, "q"), TypeError, "argument 'collect_size': 'float' object cannot be interpreted as an integer"),
        ((10, "q", 0), ValueError, "depth must be >= 1, or None for unbounded"),
        ((10, "q", -1), OverflowError, "can't convert negative int to unsigned"),
        ((10, "q", "x"), TypeError, "argument 'depth': 'str' object cannot be interpreted as an integer"),
        ((10, "q", ...), TypeError, "argument 'depth': 'ellipsis' object cannot be interpreted as an integer"),
        ((0, "q", "x"), TypeError, "argument 'depth'"),  # conversions come before ranges
        ((0, None, 0), ValueError, "collect_size must be >= 1"),  # ranges before the callbacks
        ((10, None), TypeError, "infer must be a callable or a sequence of per-player callables"),
        ((10, ["q"]), ValueError, "expected 2 per-player infer callables (one per player), got 1"),
    ],
)
def test_argument_errors_match_the_original_and_leave_the_engine_free(args, exc, msg):
    eng = engine()
    q = linear_q()
    args = tuple(q if a == "q" else [q] if a == ["q"] else a for a in args)
    got = error(lambda: eng.collect_stream(*args))
    assert got is not None and got[0] is exc and msg in got[1]
    assert not eng._held and len(eng.collect(4, q).obs) >= 4


def test_pad_with_per_player_callbacks_is_refused_up_front():
    eng = engine(pad=True)
    q = linear_q()
    with pytest.raises(ValueError, match="pad supports a single shared infer callback"):
        eng.collect_stream(8, [q, q])
    assert not eng._held


def test_depth_accepts_bools_ints_and_none():
    eng = engine()
    for depth in (True, 1, 3, None):
        with eng.collect_stream(8, linear_q(), depth=depth) as s:
            assert len(next(s).obs) >= 8


# -- the held engine ----------------------------------------------------------------------------


def test_a_running_stream_holds_the_engine():
    eng = engine()
    q = linear_q()
    s = eng.collect_stream(8, q)
    try:
        # the held check comes after collect's own conversion and before its infer check
        assert error(lambda: eng.collect(8, q)) == (RuntimeError, _HELD)
        assert error(lambda: eng.collect(0, None)) == (RuntimeError, _HELD)
        assert error(lambda: eng.collect(-1, q))[0] is OverflowError
        assert error(lambda: eng.collect_stream(8, q)) == (RuntimeError, _HELD)
        assert error(lambda: eng.collect_stream(8, None, None)) == (RuntimeError, _HELD)
        assert error(lambda: eng.collect_stream(0, q))[0] is ValueError  # ranges before the held check
        assert eng.resolved_config()["engine"]["n_games"] == 4
        eng.weights_updated()  # callable during a stream
        assert len(next(s).obs) >= 8
    finally:
        s.stop()
    assert not eng._held and len(eng.collect(8, q).obs) >= 8


def test_held_message_is_the_originals():
    assert _HELD == (
        "this engine is held by a collect_stream (call its stop() to get the engine back) — or was "
        "permanently forfeited by a stream that was dropped without stop(); in that case create a new Engine"
    )


# -- identity with synchronous collection -------------------------------------------------------


@pytest.mark.parametrize("kind", ["dqn", "ppo", "alphazero", "treestrap"])
def test_depth1_stream_yields_the_sequential_collects(kind):
    eng = engine(kind)
    with eng.collect_stream(24, infer_for(kind), depth=1) as s:
        got = [next(s) for _ in range(3)]
    want, _ = twin_collects(kind, 3, 24)
    for a, b in zip(got, want, strict=True):
        assert_same_batch(a, b)


def test_per_player_callbacks_stream_like_collect():
    eng = engine("dqn")
    q0, q1 = linear_q(0), linear_q(1)
    with eng.collect_stream(16, [q0, q1]) as s:
        got = [s.next() for _ in range(2)]
    twin = engine("dqn")
    for b in got:
        assert_same_batch(b, twin.collect(16, [q0, q1]))


@pytest.mark.parametrize("kind", ["dqn", "treestrap"])
def test_pause_is_a_lossless_barrier(kind):
    """Batches received (next + pause) are exactly a synchronous run's, and the engine continues
    from the same state: nothing lost, nothing duplicated."""
    eng = engine(kind)
    infer = infer_for(kind)
    s = eng.collect_stream(16, infer, depth=None)
    got = [next(s), next(s)]
    while s.pending() < 2:  # let the producer run ahead
        time.sleep(0.01)
    rest = s.pause()
    assert len(rest) >= 2 and s.pending() == 0 and not eng._held
    got += rest
    want, twin = twin_collects(kind, len(got), 16)
    for a, b in zip(got, want, strict=True):
        assert_same_batch(a, b)
    assert_same_batch(eng.collect(16, infer), twin.collect(16, infer))  # same engine state
    # a new stream resumes from there
    with eng.collect_stream(16, infer) as s2:
        assert_same_batch(next(s2), twin.collect(16, infer))


def test_pause_at_a_full_queue_returns_the_queued_batch():
    eng = engine()
    s = eng.collect_stream(8, linear_q(), depth=1)
    while s.pending() < 1:
        time.sleep(0.01)
    time.sleep(0.05)
    assert s.pending() == 1  # the producer waits for room: depth bounds the queue
    assert len(s.pause()) == 1


# -- lifecycle ------------------------------------------------------------------------------------


def test_after_pause_the_stream_is_stopped():
    eng = engine()
    s = eng.collect_stream(8, linear_q())
    next(s)
    s.pause()
    assert error(s.pause) == (RuntimeError, "stream already stopped")
    assert error(s.next) == (RuntimeError, STOPPED)
    with pytest.raises(StopIteration):
        next(s)
    assert list(s) == [] and s.pending() == 0
    s.stop()
    s.stop()  # idempotent
    s.__exit__(None, None, None)
    assert not eng._held


def test_stop_is_idempotent_discards_the_queue_and_returns_the_engine():
    eng = engine()
    q = linear_q()
    s = eng.collect_stream(8, q, depth=None)
    while s.pending() < 3:
        time.sleep(0.01)
    assert s.stop() is None and s.pending() == 0 and not eng._held
    s.stop()
    assert error(s.next) == (RuntimeError, STOPPED)
    assert error(s.pause) == (RuntimeError, "stream already stopped")
    assert list(s) == []
    assert len(eng.collect(8, q).obs) >= 8
    with eng.collect_stream(8, q) as s2:  # a new stream after stop
        assert len(next(s2).obs) >= 8


def test_iteration_yields_until_stopped():
    eng = engine()
    n = 0
    with eng.collect_stream(8, linear_q()) as s:
        assert iter(s) is s and s.__enter__() is s
        for batch in s:
            assert len(batch.obs) >= 8
            n += 1
            if n == 3:
                s.stop()
    assert n == 3 and not eng._held


def test_context_exit_stops_also_on_exceptions():
    eng = engine()
    with pytest.raises(KeyError):
        with eng.collect_stream(8, linear_q()) as s:
            next(s)
            raise KeyError("training failed")
    assert not eng._held and error(s.next) == (RuntimeError, STOPPED)
    assert len(eng.collect(8, linear_q()).obs) >= 8


def test_depth_bounds_the_queue_and_none_is_unbounded():
    eng = engine()
    s = eng.collect_stream(4, linear_q(), depth=2)
    seen = []
    deadline = time.monotonic() + 20
    while s.pending() < 2 and time.monotonic() < deadline:
        seen.append(s.pending())
        time.sleep(0.005)
    for _ in range(20):
        seen.append(s.pending())
        time.sleep(0.005)
    s.stop()
    assert max(seen) == 2 and min(seen) >= 0
    s = eng.collect_stream(4, linear_q(), depth=None)
    while s.pending() < 4 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert s.pending() >= 4
    s.stop()


# -- threads ----------------------------------------------------------------------------------------


def test_every_callback_runs_on_the_one_stream_thread():
    eng = engine("treestrap")
    base = linear_q()
    idents = []

    def infer(obs):
        idents.append(threading.get_ident())
        return base(obs)

    with eng.collect_stream(16, infer) as s:
        for _ in range(3):
            next(s)
            eng.weights_updated()  # concurrent with the producer
        stream_thread = s._thread.ident
    assert idents and set(idents) == {stream_thread} and stream_thread != threading.get_ident()
    assert eng._generation == 3


def test_weights_updated_from_another_thread_during_a_stream():
    eng = engine()
    stop = threading.Event()

    def bump():
        while not stop.is_set():
            eng.weights_updated()
            time.sleep(0.001)

    t = threading.Thread(target=bump)
    t.start()
    try:
        with eng.collect_stream(8, linear_q()) as s:
            for _ in range(5):
                next(s)
    finally:
        stop.set()
        t.join()
    assert eng._generation > 0


# -- callback errors ------------------------------------------------------------------------------


class Boom(Exception):
    pass


def failing_after(k, inner):
    calls = [0]

    def infer(obs):
        calls[0] += 1
        if calls[0] == k:
            raise Boom(f"call {k}")
        return inner(obs)

    return infer, calls


def test_a_callback_error_is_raised_once_then_the_stream_has_ended():
    eng = engine()
    q = linear_q()
    infer, calls = failing_after(3, q)
    s = eng.collect_stream(64, infer)
    with pytest.raises(Boom) as first:
        next(s)
    assert error(s.next) == (RuntimeError, ENDED)
    with pytest.raises(StopIteration):
        next(s)
    assert list(s) == [] and s.pending() == 0
    assert calls[0] == 3  # the failing window finished without calling the callback again
    assert eng._held  # as the original: the engine comes back with stop()/pause()
    assert error(lambda: eng.collect(8, q)) == (RuntimeError, _HELD)
    assert s.pause() == []
    assert not eng._held and len(eng.collect(8, q).obs) >= 8
    assert isinstance(first.value, Boom) and str(first.value) == "call 3"


def test_the_error_object_itself_is_reraised_after_earlier_batches():
    eng = engine()
    exc = Boom("mine")
    calls = [0]
    q = linear_q()

    def infer(obs):
        calls[0] += 1
        if calls[0] == 40:
            raise exc
        return q(obs)

    s = eng.collect_stream(8, infer, depth=None)
    got = []
    with pytest.raises(Boom) as raised:
        for batch in s:
            got.append(batch)
    assert raised.value is exc and len(got) >= 1
    assert error(s.next) == (RuntimeError, ENDED)
    s.stop()
    assert error(s.next) == (RuntimeError, STOPPED) and not eng._held


def test_pause_raises_a_queued_callback_error_and_returns_the_engine():
    eng = engine()
    infer, _ = failing_after(2, linear_q())
    s = eng.collect_stream(32, infer)
    while s.pending() < 1:
        time.sleep(0.01)
    with pytest.raises(Boom):
        s.pause()
    assert not eng._held and error(s.next) == (RuntimeError, STOPPED)


def test_stop_from_the_callback_is_refused():
    eng = engine()
    box = {}
    q = linear_q()

    def infer(obs):
        box["s"].stop()
        return q(obs)

    box["s"] = s = eng.collect_stream(8, infer)
    with pytest.raises(RuntimeError, match="own infer callback"):
        next(s)
    s.stop()
    assert not eng._held


# -- stop latency ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dqn", "treestrap", "ppo"])
def test_stop_aborts_the_window_within_one_callback_call(kind):
    """A window of 10^6 records with a 20 ms callback (4 games: at most 8 rows a call) would run
    for over an hour: stop() ends it after the call in progress, and the engine stays consistent
    for later collects and streams.  (10^7 records needed 9.1 GB free for the window's batch and
    pool — the memory check refused it while the other xdist worker held several GB.)"""
    eng = engine(kind)
    inner = infer_for(kind)
    calls = [0]

    def slow(obs):
        calls[0] += 1
        time.sleep(0.02)
        return inner(obs)

    s = eng.collect_stream(10**6, slow)
    while calls[0] < 5:
        time.sleep(0.005)
    before = calls[0]
    stopper = threading.Thread(target=s.stop)  # a broken stop() would run for hours: fail instead
    stopper.start()
    stopper.join(timeout=10)
    assert not stopper.is_alive(), "stop() did not end the window"
    assert calls[0] - before <= 1 and not eng._held
    time.sleep(0.05)
    assert calls[0] - before <= 1  # nothing runs on after stop()
    b = eng.collect(24, inner)
    assert len(b.obs) >= 24 and np.isfinite(b.obs).all()
    with eng.collect_stream(24, inner) as s2:
        assert len(next(s2).obs) >= 24
    # the engine still agrees with itself: two more collects on a fresh run of the same kind work
    assert eng.collect(24, inner).obs.shape[1] == 84


@pytest.mark.parametrize("kind", ["alphazero", "treestrap", "ppo"])
def test_a_stopped_engine_snapshots_and_restores_exactly(kind):
    """stop() parks every slot at a decision boundary (a search in progress finishes its
    decision first), so the engine it returns is a regular between-windows state: a snapshot of
    it restores into a fresh engine that continues exactly like the stopped one."""
    eng = engine(kind)
    inner = infer_for(kind)
    calls = [0]

    def counting(obs):
        calls[0] += 1
        return inner(obs)

    s = eng.collect_stream(10**6, counting)
    while calls[0] < 7:
        time.sleep(0.002)
    s.stop()
    snap = rf.EngineSnapshot.from_bytes(eng.snapshot().to_bytes())
    twin = engine(kind, n_threads=1)
    twin.restore(snap)
    for _ in range(2):
        a, b = eng.collect(30, inner), twin.collect(30, inner)
        assert np.array_equal(a.obs, b.obs) and np.array_equal(a.players, b.players)


def test_streams_with_the_inference_cache_match_sequential_collects():
    eng, ref = engine("alphazero", infer_cache=5000), engine("alphazero", infer_cache=5000)
    inner = infer_for("alphazero")
    with eng.collect_stream(40, inner, depth=1) as s:
        got = [next(s) for _ in range(3)]
    for b in got:
        want = ref.collect(40, inner)
        assert np.array_equal(b.obs, want.obs) and np.array_equal(b.policy_targets, want.policy_targets)
    assert sum(b.telemetry["cache_hits"] for b in got) > 0


# -- forfeit and interpreter exit -----------------------------------------------------------------


def test_a_dropped_stream_forfeits_the_engine_and_its_thread_exits():
    eng = engine()
    q = linear_q()
    s = eng.collect_stream(8, q, depth=None)
    next(s)
    thread = s._thread
    del s
    gc.collect()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert error(lambda: eng.collect(8, q)) == (RuntimeError, _HELD)
    assert error(lambda: eng.collect_stream(8, q)) == (RuntimeError, _HELD)
    assert eng.resolved_config()["engine"]["seed"] == 1


@pytest.mark.slow
def test_interpreter_exits_with_running_streams():
    """Streams never stopped — one producing, one blocked on a full queue, one inside a slow
    callback — do not hang or crash interpreter exit."""
    script = textwrap.dedent(
        """
        import time, numpy as np, reinfors as rf
        def mk():
            return rf.Engine(rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0),
                             rf.policies.Mcts(num_simulations=8), rf.learners.TreeStrap(), n_games=4)
        q = lambda obs: np.zeros((len(obs), 1, 7))
        def slow(obs):
            time.sleep(0.05)
            return q(obs)
        a = mk().collect_stream(10**6, q)
        b = mk().collect_stream(8, q, depth=1)
        c = mk().collect_stream(10**6, slow)
        next(b)
        time.sleep(0.3)
        print("exiting")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=str(ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    assert "exiting" in out.stdout
