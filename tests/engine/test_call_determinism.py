"""The original's determinism contract, under load (issue 48 item 4; reinfors/_runtime/cohorts.py).

Two identically built engines give identical records *and* identical non-timing telemetry —
``infer_calls``, ``infer_rows``, ``padded_rows``, ``stall_closes``, every key but
``reinfors.engine.TIMING_TELEMETRY`` (wall seconds) — and a ``collect_stream`` paused after one
batch snapshots to the same bytes as a synchronous engine after the same batches.  0.4.0 promises
it at its default thread count; here it holds at any ``n_threads``, because which rows go in which
call is a function of counts (each call is one fixed cohort's round of requests), never of thread
interleaving or of the measured call cost (which only decides how a call is overlapped).

Every case runs beside a process spinning on every core, so the threads are descheduled at
arbitrary points; the slow tier repeats each case 20 times.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import contextmanager

import numpy as np
import pytest
from helpers import assert_same_batch, c4_linear_pv, c4_linear_q, engine

import reinfors as rf
from reinfors.engine import TIMING_TELEMETRY

C4_REWARD = rf.Reward(win=1.0, loss=-1.0)
_BURN = "import time\nend = time.monotonic() + {secs}\nwhile time.monotonic() < end:\n    pass\n"


@contextmanager
def cpu_burner(secs: float = 120.0):
    """A busy loop on every core (one process each) for the duration of the block; each one
    also ends by itself after ``secs``, so none outlives a killed test run."""
    procs = [subprocess.Popen([sys.executable, "-c", _BURN.format(secs=secs)]) for _ in range(os.cpu_count() or 2)]
    try:
        time.sleep(0.05)  # let them reach the loop
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def _minimax(**kw):
    return rf.Engine(rf.games.Connect4(), C4_REWARD, rf.policies.Minimax(depth=2), rf.learners.TreeStrap(),
                     n_games=8, seed=1, **kw)  # fmt: skip


class _Sleepy:
    """``inner``'s outputs, after a GIL-free sleep: an accelerator-like callback (served
    pipelined once measured), computing exactly what ``inner`` computes."""

    def __init__(self, inner, secs=3e-4):
        self.inner, self.secs = inner, secs

    def __call__(self, obs):
        time.sleep(self.secs)
        return self.inner(obs)


# name: (engine factory, callback for engine 1, callback for engine 2, collects, records each)
CASES = {
    "treestrap_mcts": (lambda: engine("treestrap", n_games=8, n_threads=2), c4_linear_q, c4_linear_q, 3, 48),
    "treestrap_minimax": (lambda: _minimax(n_threads=2), c4_linear_q, c4_linear_q, 2, 48),
    "alphazero": (lambda: engine("alphazero", n_games=8, n_threads=2), c4_linear_pv, c4_linear_pv, 3, 48),
    # the same calls whether the callback is served inline or pipelined (measured by wall time)
    "alphazero_pipelined": (
        lambda: engine("alphazero", n_games=8, n_threads=2), c4_linear_pv, lambda: _Sleepy(c4_linear_pv()), 3, 48
    ),
}


def _untimed(batch) -> dict:
    return {k: v for k, v in batch.telemetry.items() if k not in TIMING_TELEMETRY}


def _check_twins(name: str) -> None:
    make, cb1, cb2, n, size = CASES[name]
    e1, e2 = make(), make()
    f1, f2 = cb1(), cb2()
    calls = 0
    for i in range(n):
        a, b = e1.collect(size, f1), e2.collect(size, f2)
        assert_same_batch(a, b, where=f"{name} collect {i}", skip=TIMING_TELEMETRY)
        assert _untimed(a) == _untimed(b), f"{name} collect {i}"
        assert a.telemetry["stall_closes"] == 0
        calls += a.telemetry["infer_calls"]
    assert calls > 0  # (a collect served from the carry makes none)


def _check_paused_stream() -> None:
    """A stream paused after one batch (its producer may have run ahead: pause returns what it
    queued) snapshots to the same bytes as a synchronous engine after the same batches."""
    eng, twin = engine("alphazero", n_games=8, n_threads=2), engine("alphazero", n_games=8, n_threads=2)
    infer, infer2 = c4_linear_pv(), c4_linear_pv()
    s = eng.collect_stream(32, infer, depth=2)
    got = [next(s)]
    got += s.pause()
    want = [twin.collect(32, infer2) for _ in got]
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        assert_same_batch(a, b, where=f"stream batch {i}", skip=TIMING_TELEMETRY)
        assert _untimed(a) == _untimed(b), f"stream batch {i}"
    assert eng.snapshot().to_bytes() == twin.snapshot().to_bytes()
    # and both continue alike
    a, b = eng.collect(32, infer), twin.collect(32, infer2)
    assert _untimed(a) == _untimed(b) and np.array_equal(a.obs, b.obs)


def test_identical_engines_make_identical_calls_under_load():
    """Every case once, beside a process spinning on every core."""
    with cpu_burner():
        for name in CASES:
            _check_twins(name)
        _check_paused_stream()


@pytest.mark.slow
@pytest.mark.parametrize("rep", range(20))
def test_identical_engines_make_identical_calls_under_load_20_times(rep):
    with cpu_burner():
        for name in CASES:
            _check_twins(name)
        _check_paused_stream()


def test_timed_fires_are_an_opt_in(monkeypatch):
    """``REINFORS_TIMED_FIRES=1`` turns cohorts off (calls cut by fire targets, documented as
    timing): the records stay the same."""
    a, b = engine("alphazero", n_games=8, n_threads=2), engine("alphazero", n_games=8, n_threads=2)
    x = a.collect(48, c4_linear_pv())
    monkeypatch.setenv("REINFORS_TIMED_FIRES", "1")  # read when the runtime is built (first collect)
    y = b.collect(48, c4_linear_pv())
    assert a._rt.cohorts.closing and not b._rt.cohorts.closing
    assert_same_batch(x, y, skip=TIMING_TELEMETRY | {"infer_calls", "padded_rows", "stall_closes"})
