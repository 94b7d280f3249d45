"""How a call is overlapped — on which thread the callback runs — told by what a call costs.

Which rows go in which call is not decided here: each call is one cohort's round
(``cohorts.py``), a function of counts, in both regimes below.  Only with the inference cache
on, or the opt-in ``REINFORS_TIMED_FIRES=1``, do arenas close at a fire target, which a
pipelined engine then chooses by measurement (:class:`FirePolicy`; the call counts are then
timing telemetry).

Two regimes, told apart online from the callback's own calls (:class:`CallCost`):

* **a CPU callback** (a NumPy network, or a zero stand-in): a call keeps a core busy for its
  whole duration, so the engine's CPU design holds: arenas close at the automatic batch (half the
  rows that can be in flight, so one batch fills while the other is computed), and the callback
  runs inline on the collecting thread, which is also a worker.  Nothing changes from the
  engine's CPU behaviour.
* **an accelerator-like callback** (a GPU network, a remote server): most of a call is *idle*
  time — wall time in which the calling thread uses no CPU (waiting on the device, with the GIL
  released).  A fixed idle cost per call rewards the largest batch the slots can fill while the
  next one fills.  The engine then **pipelines**: the callback runs on the collecting (caller's)
  thread, which also routes each call's predictions back and works beside the workers until the
  slots it released are served, while a scheduler thread decides fires and works as a worker;
  up to two batches are in flight (one being computed, the next one queued), so the callback
  starts the next call the moment it returns one.  (Cache / timed fires only:) the fire target
  is chosen between *all the rows that can be in flight* (one batch a round: the CPU fills it while nothing else is
  computed; best when the CPU round is short next to the call's fixed cost) and *half of what
  those batches held* (two alternating batches: the CPU fills one while the other is computed;
  best when the CPU round is long) by measuring both: a two-armed comparison of routed rows per
  second (:class:`FirePolicy`), re-checked periodically.

The regime is decided from the last calls: a median idle time of at least :data:`PIPELINE_IDLE_S`
per call makes a callback accelerator-like (:meth:`CallCost.fit` gives the least-squares fixed and
per-row costs, wall and idle, for reports).
Records never depend on the regime or the fire schedule (each slot's trajectory depends only on
its own predictions; the engine's determinism at any ``n_threads`` / ``batch_size``); with
cohorts the calls do not either (``tests/engine/test_call_determinism.py``).
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

__all__ = ["CallCost", "FirePolicy", "Pipe", "PIPELINE_IDLE_S", "SAMPLE_EVERY", "SAMPLE_EVERY_SETTLED"]

# A callback whose calls leave the cores idle this long per call (the median of the sampled
# calls) is served pipelined.  A CUDA network's call costs ~1.2-1.6 ms of mostly idle wall (an H200 running
# a 6x64 ResNet); a NumPy MLP's idle part is ~0.  A thread hand-off costs ~20-50 us, so below
# ~0.1 ms of idle time per call the inline path is at least as fast.
PIPELINE_IDLE_S = 100e-6
_FIT_CALLS = 64  # sampled calls the fit looks back over
_MIN_FIT = 8  # sampled calls before the regime is judged
SAMPLE_EVERY = 4  # one call in this many is timed for the fit, until the fit's window is full
SAMPLE_EVERY_SETTLED = 16  # ... then one in this many (a CPU callback runs ~20 k calls a second)


class CallCost:
    """The recent calls of one engine's callbacks: ``(rows, wall seconds, CPU seconds of the
    calling thread)`` of one call in ``every`` (:data:`SAMPLE_EVERY`, then
    :data:`SAMPLE_EVERY_SETTLED` once the fit's window holds :data:`_FIT_CALLS` samples: a changed
    callback still turns the median within ~500 calls) (reading a thread's CPU clock is a
    system call: a free callback is called tens of thousands of times a second), and their
    least-squares fit.  Written by the thread that calls the callback, read by the scheduler."""

    def __init__(self):
        self._ring: list = [(0, 0.0, 0.0)] * _FIT_CALLS
        self._n = 0
        self.tick = 0  # calls seen; the caller samples when ``tick % every == 0``
        self.every = SAMPLE_EVERY

    def due(self) -> bool:
        """Count a call; True when it is one to time (one in ``every``)."""
        self.tick += 1
        return self.tick % self.every == 0

    def add(self, rows: int, wall: float, cpu: float) -> None:
        self._ring[self._n % _FIT_CALLS] = (rows, wall, cpu)
        self._n += 1
        if self._n == _FIT_CALLS:
            self.every = SAMPLE_EVERY_SETTLED

    def _arrays(self):
        m = min(self._n, _FIT_CALLS)
        a = np.array(self._ring[:m], np.float64).reshape(m, 3)
        return a[:, 0], a[:, 1], a[:, 2]

    def fit(self) -> tuple[float, float, float, float]:
        """``(c0, c1, idle0, idle1)``: wall seconds per call = c0 + c1 * rows, and its idle part
        (wall minus the calling thread's CPU) = idle0 + idle1 * rows, over the recent calls.
        With a single batch size the intercept is the mean (the slope is then 0)."""
        if self._n == 0:
            return 0.0, 0.0, 0.0, 0.0
        x, wall, cpu = self._arrays()
        out = []
        for y in (wall, np.maximum(wall - cpu, 0.0)):
            xm, ym = x.mean(), y.mean()
            var = float(((x - xm) ** 2).sum())
            slope = float(((x - xm) * (y - ym)).sum() / var) if var > 0 else 0.0
            slope = max(slope, 0.0)
            out += [max(float(ym - slope * xm), 0.0), slope]
        return out[0], out[1], out[2], out[3]

    def cpu_like(self) -> bool:
        """Enough calls seen, and the callback is not accelerator-like: its calls keep the
        calling thread busy (a NumPy network)."""
        return self._n >= _MIN_FIT and not self.accelerator_like()

    def accelerator_like(self) -> bool:
        """Enough calls seen, and the median call left the cores idle for at least
        PIPELINE_IDLE_S (a median, not the fit's intercept: a few odd calls — a tail of one row, a
        call the OS delayed — must not swing the regime)."""
        if self._n < _MIN_FIT:
            return False
        _, wall, cpu = self._arrays()
        return float(np.median(wall - cpu)) >= PIPELINE_IDLE_S


class FirePolicy:
    """The fire target of a pipelined engine: the number of rows at which a writer closes a
    route's open arena.  Two arms: ``full`` (the arena capacity: every row that can be in flight,
    so a batch closes when every slot waits on it, at quiescence) and ``half`` (half the rows the
    ``full`` arm's batches actually held — duplicates, terminal leaves and parked slots make them
    smaller than the bound — so two batches alternate: one fills while the other is computed).

    The arms are measured in ``blocks`` alternating periods each (full, half, full, half, ...;
    a period is at least ``period_calls`` routed calls and 20 ms of window time), and the arm
    whose *median* period routed more rows per second runs for ``exploit_calls`` calls before
    both are measured again.  One period per arm is not enough: a period that falls on a
    window's tail (slots parked at the window's target, batches a fraction of the rest) reads
    far below the arm's rate — measured at 256 games, 44 k against 103-120 k rows/s for the same
    arm — and a single such period picked the slower arm for 1,600 calls."""

    def __init__(self, full: int, floor: int, period_calls: int = 12, exploit_calls: int = 1600, blocks: int = 5):
        self.floor = floor
        self.arms = [full] if floor >= full else [full, max(floor, full // 2)]
        self.period_calls, self.exploit_calls, self.blocks = period_calls, exploit_calls, blocks
        self.rates = [0.0] * len(self.arms)  # each arm's median period rate (rows per second)
        self._rows = 0
        self._secs = 0.0
        self._calls = 0
        self._last: float | None = None
        self._measure()

    def _measure(self) -> None:
        """Start a measurement: alternate the arms' periods from the full arm on, then exploit
        the better."""
        self.arm, self.phase = 0, "measure"
        self._periods: list[list[float]] = [[] for _ in self.arms]  # this measurement's period rates
        self._sizes: list[int] = []  # the full arm's batch sizes in its first period

    @property
    def target(self) -> int:
        return self.arms[self.arm]

    @property
    def partial_min(self) -> int:
        """Rows at which an open arena is queued behind the call in flight when no slot is
        producing rows (``WindowLoop._queue_partial``): half the target in the ``full`` arm (one
        batch a round: waiting for the rows still to come back is worth a call's fixed cost),
        an eighth of it in the ``half`` arm (two alternating batches: a small batch queued now
        keeps the callback busy where, after a decision's last round, the next round's rows are
        still to be computed)."""
        return max(1, self.target // (2 if self.arm == 0 else 8))

    def window_start(self) -> None:
        self._last = None  # time between windows is the caller's, not the pipeline's

    def routed(self, rows: int, now: float) -> bool:
        """One call's rows were routed back; True when the target changed."""
        last, self._last = self._last, now
        if last is None:
            return False  # a window's first call: no interval to measure it over
        self._secs += now - last
        self._rows += rows
        self._calls += 1
        if self.phase == "measure" and self.arm == 0 and not self._periods[0]:
            self._sizes.append(rows)  # the full arm's first period
        need = self.period_calls if self.phase == "measure" else self.exploit_calls
        if self._calls < need or self._secs < 0.02:
            return False
        rate = self._rows / max(self._secs, 1e-9)
        self._rows, self._secs, self._calls = 0, 0.0, 0
        old = self.target
        if self.phase == "exploit":  # re-measure: the workload (tree sizes, episode mix) drifts
            self._measure()
            return self.target != old
        periods = self._periods
        periods[self.arm].append(rate)
        self.rates[self.arm] = float(np.median(periods[self.arm]))
        if self.arm == 0 and len(periods[0]) == 1 and len(self.arms) > 1:
            self.arms[1] = max(self.floor, int(np.median(self._sizes)) // 2)
        if len(self.arms) > 1 and len(periods[1]) < self.blocks:
            self.arm = 1 - self.arm  # alternate: full, half, full, half, ...
        else:
            self.arm = int(np.argmax(self.rates))
            self.phase = "exploit"
        return self.target != old


class Pipe:
    """Calls handed from the scheduler thread to the caller's thread, and back.

    ``jobs`` holds calls to make (the caller's thread pops them), ``done`` the calls made (the
    scheduler pops them and routes their predictions).  At most ``depth`` calls are outstanding
    (submitted and not routed yet): one being computed and the next one queued."""

    def __init__(self, depth: int = 2):
        self.depth = depth
        self.cv = threading.Condition()
        self.jobs: deque = deque()
        self.done: deque = deque()
        self.outstanding = 0  # changed under ``cv``
        self.returned = 0  # calls back since the scheduler last looked (``Runtime._complete``)
        self.finished = False
        self.broken = False  # the caller's thread left on an exception: the scheduler stops
        self.wake = threading.Event()
        self.route_lock = threading.Lock()  # the scheduler and the caller's thread both route calls

    def submit(self, call) -> None:
        with self.cv:
            self.outstanding += 1
            self.jobs.append(call)
            self.cv.notify()

    def can_submit(self) -> bool:
        return self.outstanding < self.depth

    def next_job(self):
        """The next call to make, or None once the window's loop has finished (caller's thread)."""
        with self.cv:
            while not self.jobs and not self.finished:
                self.cv.wait()
            return self.jobs.popleft() if self.jobs else None

    def finish(self) -> None:
        with self.cv:
            self.finished = True
            self.cv.notify_all()

