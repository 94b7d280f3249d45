"""Batches sized by what a call costs (reinfors/_runtime/firing.py): the cost fit, the two-armed
fire target, and the pipelined path an accelerator-like callback is served on — same records as
the inline path, the callback on the caller's thread, errors, streams and ``batch_size`` caps."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from helpers import GEOMETRY_KEYS, assert_same_batch  # tests/ is on sys.path (rootdir conftest)

import reinfors as rf
from reinfors._runtime.firing import PIPELINE_IDLE_S, CallCost, FirePolicy

C4_REWARD = rf.Reward(win=1.0, loss=-1.0)
SLEEP_S = 4 * PIPELINE_IDLE_S  # an accelerator-like call: idle (GIL released) well past the threshold


# -- the cost fit --------------------------------------------------------------------------------


def test_call_cost_fits_fixed_and_per_row_cost():
    cost = CallCost()
    rs = np.random.default_rng(0)
    for rows in rs.integers(1, 4000, 64):
        wall = 1.3e-3 + rows / 2.2e6
        cost.add(int(rows), wall, 0.1 * wall)  # 10 % of each call keeps the thread busy
    c0, c1, idle0, idle1 = cost.fit()
    assert c0 == pytest.approx(1.3e-3, rel=1e-6) and c1 == pytest.approx(1 / 2.2e6, rel=1e-6)
    assert idle0 == pytest.approx(0.9 * 1.3e-3, rel=1e-6) and idle1 == pytest.approx(0.9 / 2.2e6, rel=1e-6)
    assert cost.accelerator_like()


def test_a_cpu_callback_is_not_accelerator_like():
    cost = CallCost()
    for rows in range(1, 200):
        wall = 20e-6 + rows * 1e-6
        cost.add(rows, wall, wall)  # all of the call is the thread's own CPU (a NumPy network)
    assert cost.fit()[2] == pytest.approx(0.0, abs=1e-12)
    assert not cost.accelerator_like()


def test_the_regime_waits_for_enough_calls():
    cost = CallCost()
    for _ in range(7):
        cost.add(32, 2e-3, 0.0)
    assert not cost.accelerator_like()  # 7 sampled calls say too little
    cost.add(32, 2e-3, 0.0)
    assert cost.accelerator_like()
    assert cost.fit()[:2] == (pytest.approx(2e-3), 0.0)  # one batch size: the mean, no slope


def test_the_regime_is_robust_to_odd_calls():
    cost = CallCost()
    for k in range(64):
        if k % 8 == 0:
            cost.add(1, 5e-6, 0.0)  # a one-row tail the device answered at once
        else:
            cost.add(6, 450e-6, 20e-6)
    assert cost.accelerator_like()


# -- the two-armed fire target -------------------------------------------------------------------


def _drive(policy, rate_of, calls, rows=10_000):
    """A window of ``calls`` calls of ``rows`` rows, each taking ``rows / rate_of(target)``
    seconds (the window's first call only starts the clock)."""
    t = 0.0
    policy.window_start()
    policy.routed(rows, t)
    for _ in range(calls):
        t += rows / rate_of(policy.target)
        policy.routed(rows, t)


@pytest.mark.parametrize("faster", ["full", "half"])
def test_fire_policy_measures_both_arms_and_keeps_the_faster(faster):
    policy = FirePolicy(full=1024, floor=128, period_calls=4, exploit_calls=50, blocks=3)
    assert policy.arms == [1024, 512] and policy.target == 1024
    good = 1024 if faster == "full" else 512
    rate = lambda target: 2e5 if target == good else 1e5  # noqa: E731
    seen = []
    for _ in range(6):  # 3 periods of 4 calls per arm (20-40 ms each at these rates), alternating
        seen.append(policy.target)
        _drive(policy, rate, 4, rows=1024)
    assert seen == [1024, 512] * 3
    assert policy.phase == "exploit" and policy.target == good
    assert policy.rates[policy.arms.index(good)] == pytest.approx(2e5)
    _drive(policy, rate, 49, rows=1024)
    assert policy.target == good  # exploited...
    _drive(policy, rate, 1, rows=1024)
    assert policy.phase == "measure" and policy.target == 1024  # ...then both arms measured again


def test_one_slow_period_does_not_pick_the_slower_arm():
    """A period on a window's tail (slots parked, batches a fraction of the rest) reads far below
    its arm's rate: the arms are compared by their median period."""
    policy = FirePolicy(full=1024, floor=128, period_calls=4, exploit_calls=50, blocks=3)
    full_rates = iter([0.3e5, 2e5, 2e5])  # the full arm's first period falls on a window's tail
    for _ in range(6):
        rate = next(full_rates) if policy.target == 1024 else 1e5
        _drive(policy, lambda target, r=rate: r, 4, rows=1024)
    assert policy.phase == "exploit" and policy.target == 1024
    assert policy.rates == [pytest.approx(2e5), pytest.approx(1e5)]
    # One period per arm would have picked the half arm on the tail's reading:
    single = FirePolicy(full=1024, floor=128, period_calls=4, exploit_calls=50, blocks=1)
    for rate in (0.3e5, 1e5):
        _drive(single, lambda target, r=rate: r, 4, rows=1024)
    assert single.phase == "exploit" and single.target == 512


def test_the_half_arm_halves_the_batches_the_full_arm_held():
    """Duplicates and parked slots keep real batches below the capacity bound: the half arm is
    half of what the full arm's batches held, not half of the bound."""
    policy = FirePolicy(full=4096, floor=128, period_calls=4, exploit_calls=50)
    policy.window_start()
    t = 0.0
    policy.routed(2100, t)
    for _ in range(4):
        t += 0.01
        changed = policy.routed(2100, t)
    assert changed and policy.target == 1050 and policy.arms == [4096, 1050]


def test_fire_policy_arms_respect_the_floor():
    assert FirePolicy(full=100, floor=64).arms == [100, 64]  # half is raised to the floor
    policy = FirePolicy(full=64, floor=64)  # nothing to choose (a user's batch_size, or pad)
    assert policy.arms == [64]
    policy.window_start()
    assert not any(policy.routed(10, t) for t in np.arange(0.0, 10.0, 0.1)) and policy.target == 64


def test_fire_policy_ignores_time_between_windows():
    policy = FirePolicy(full=1024, floor=128, period_calls=2, exploit_calls=10)
    policy.window_start()
    policy.routed(100, 0.0)
    policy.routed(100, 0.1)
    policy.window_start()
    policy.routed(100, 100.0)  # a window later: the gap is the caller's time, not the pipeline's
    policy.routed(100, 100.1)
    assert policy.rates[0] == pytest.approx(200 / 0.2)


# -- the pipelined path --------------------------------------------------------------------------


class Sleeper:
    """A zero AlphaZero callback that sleeps (GIL released) like an accelerator; records the
    threads it was called on and the rows of each call; ``fail_at``: raise on that call."""

    def __init__(self, n_actions, sleep=SLEEP_S, fail_at=None):
        self.n_actions, self.sleep, self.fail_at = n_actions, sleep, fail_at
        self.threads, self.rows = set(), []

    def __call__(self, obs):
        self.threads.add(threading.current_thread().name)
        self.rows.append(len(obs))
        if self.fail_at is not None and len(self.rows) == self.fail_at:
            raise KeyError("network on fire")
        if self.sleep:
            time.sleep(self.sleep)
        return np.zeros((len(obs), self.n_actions), np.float32), np.zeros(len(obs), np.float32)


def _engine(**kw):
    return rf.Engine(
        rf.games.Connect4(), C4_REWARD, rf.policies.AlphaZero(num_simulations=8), rf.learners.AlphaZero(gamma=1.0),
        **{"n_games": 16, "n_threads": 2, "seed": 3, **kw},
    )  # fmt: skip


def _batches(eng, infer, n=3, records=48):
    return [eng.collect(records, infer) for _ in range(n)]


@pytest.mark.parametrize("n_games", [16, 96])
def test_pipelined_batches_equal_the_inline_ones(n_games):
    """An accelerator-like callback is served pipelined (after the first window's calls
    measured it), with larger batches; the records do not depend on it."""
    inline = _batches(_engine(n_games=n_games), Sleeper(7, sleep=0.0), records=3 * n_games)
    slow = Sleeper(7)
    eng = _engine(n_games=n_games)
    piped = _batches(eng, slow, records=3 * n_games)
    assert eng._rt.cost.accelerator_like()
    for a, b in zip(inline, piped, strict=True):
        assert_same_batch(a, b, skip=GEOMETRY_KEYS)  # telemetry up to the fire schedule's counts
    # The callback ran on the caller's thread only, never on an engine thread.
    assert slow.threads == {threading.current_thread().name}


class _SpinLog:
    """The runtime's kernel module, with the spin budget of every helper's ``work`` call logged."""

    def __init__(self, k):
        self._k, self.spins = k, []

    def work(self, E, yield_on_full, spin):
        if threading.current_thread().name.startswith("reinfors-worker-"):
            self.spins.append(spin)
        return self._k.work(E, yield_on_full, spin)

    def __getattr__(self, name):
        return getattr(self._k, name)


def test_helpers_poll_through_the_call_only_when_pipelined():
    """A pipelined window's helpers keep polling through a call (the cores are idle while an
    accelerator computes); a CPU callback's helpers sleep soon, its call needs the core."""
    from reinfors._runtime.workers import HELPER_SPIN, PIPELINED_HELPER_SPIN

    for infer, spin in ((Sleeper(7, sleep=0.0), HELPER_SPIN), (Sleeper(7), PIPELINED_HELPER_SPIN)):
        eng = _engine(n_games=32)
        eng.collect(32, infer)  # the first window measures the callback
        log = eng._rt.k = _SpinLog(eng._rt.k)
        eng.collect(96, infer)
        assert eng._rt.cost.accelerator_like() == (spin == PIPELINED_HELPER_SPIN)
        assert log.spins and set(log.spins) == {spin}


def test_pipelined_calls_are_the_inline_ones():
    """Wall time decides how a call is overlapped, never which rows it holds: a pipelined engine
    makes exactly the calls of an inline one (each a cohort's round, reinfors/_runtime/cohorts.py)."""
    slow, fast = Sleeper(7), Sleeper(7, sleep=0.0)
    e1, e2 = _engine(n_games=32), _engine(n_games=32)
    for _ in range(3):
        a, b = e1.collect(64, slow), e2.collect(64, fast)
        assert {k: v for k, v in a.telemetry.items() if k != "infer_seconds"} == {
            k: v for k, v in b.telemetry.items() if k != "infer_seconds"
        }
    assert e1._rt.cost.accelerator_like() and not e2._rt.cost.accelerator_like()
    assert sorted(slow.rows) == sorted(fast.rows)  # the same calls (cohorts may take turns differently)
    assert max(slow.rows) <= e1._rt.capacity == 16  # two cohorts of 16 slots, one row each


def test_user_batch_size_stays_a_hard_cap():
    slow = Sleeper(7)
    eng = _engine(batch_size=6)
    _batches(eng, slow, n=2)
    assert eng._rt.cost.accelerator_like()
    assert max(slow.rows) <= 6


@pytest.mark.parametrize("fail_at", [20, 300])
def test_a_pipelined_callback_error_propagates_and_the_engine_stays_usable(fail_at):
    eng = _engine()
    eng.collect(48, Sleeper(7))  # inline window; fail_at=300 then fails in a pipelined one
    bad = Sleeper(7, fail_at=fail_at)
    with pytest.raises(KeyError, match="network on fire"):
        for _ in range(20):
            eng.collect(48, bad)
    after = eng.collect(48, Sleeper(7))
    assert len(after.obs) >= 48


def test_a_pipelined_stream_yields_the_sequential_batches_and_stops():
    seq = _batches(_engine(), Sleeper(7), n=3)
    eng = _engine()
    with eng.collect_stream(48, Sleeper(7), depth=1) as stream:
        got = [next(stream) for _ in range(3)]
    for a, b in zip(seq, got, strict=True):
        assert_same_batch(a, b, skip=GEOMETRY_KEYS)  # telemetry up to the fire schedule's counts
    assert len(eng.collect(48, Sleeper(7)).obs) >= 48  # the engine is free again after stop()


def test_per_player_callbacks_pipelined():
    inline = _batches(_engine(), [Sleeper(7, sleep=0.0), Sleeper(7, sleep=0.0)], n=2)
    eng = _engine()
    piped = _batches(eng, [Sleeper(7), Sleeper(7)], n=2)
    assert eng._rt.cost.accelerator_like()
    for a, b in zip(inline, piped, strict=True):
        assert_same_batch(a, b, skip=GEOMETRY_KEYS)  # telemetry up to the fire schedule's counts


@pytest.mark.timeout(120)
def test_an_interrupt_outside_a_call_ends_the_pipelined_window():
    """An exception on the caller's thread between calls (an asynchronous Ctrl-C, say) stops the
    scheduler thread and the workers instead of leaving the join waiting; the engine discards the
    runtime and collects again."""
    eng = _engine()
    for _ in range(3):
        eng.collect(48, Sleeper(7))
    rt = eng._rt
    assert rt.cost.accelerator_like()
    route_back = rt._route_back
    calls = []

    def interrupted(c):
        calls.append(1)
        route_back(c)
        if len(calls) == 5:
            raise KeyboardInterrupt

    rt._route_back = interrupted
    with pytest.raises(KeyboardInterrupt):
        eng.collect(480, Sleeper(7))
    assert not any(t.name == "reinfors-scheduler" for t in threading.enumerate())
    assert len(eng.collect(48, Sleeper(7)).obs) >= 48
