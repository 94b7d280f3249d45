"""The engine's Python time per callback call (the accelerator issue's "scheduler Python time").

    python benchmarks/fire_overhead.py [--games 256] [--leaf-batch 1] [--seconds 10]

Runs Connect4 AlphaZero(64) against the accelerator stand-in (``workloads.SimGpu``: it is served
pipelined) and times, per call, the Python the engine runs around it: lending the arena's rows
(scheduler thread), validating the output (caller's thread, after the callback returned) and
routing the predictions back (``finish_fire``: its kernel time is reported apart, it holds no
GIL).  Each part is timed by wrapping the runtime's methods with ``perf_counter`` and
``thread_time`` (~1.3 us a wrap, mostly the two thread-clock reads); a part that contains
another wrapped one (the callback inside validation, the kernel inside routing) has the whole
inner wrapper, its clock reads included, subtracted.  Prints microseconds per
call, median and mean, of wall time and of the thread's CPU time (``time.thread_time``: the
Python itself, without the time the OS gave its core to a worker).

Then the calls per fire target (``FirePolicy``'s arms: ``full``, one batch a round; ``half``,
two alternating): rows per call, the gap before each call (the CPU round the callback waited
for) and the call itself, medians, and the callback's busy fraction over the timed windows.
At 1,024 games this is where the choice between the arms shows: ~905 rows after a ~1.1 ms gap
against ~452 rows after ~0.03 ms on a fast VM, while on a slow one the full arm's gap grows
to ~2.7 ms and the half arm wins.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from workloads import SimGpu  # noqa: E402

import reinfors as rf  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=256)
    ap.add_argument("--leaf-batch", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--n-threads", type=int, default=2)
    args = ap.parse_args()
    kw = {"leaf_batch": args.leaf_batch} if args.leaf_batch > 1 else {}
    eng = rf.Engine(rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0), rf.policies.AlphaZero(num_simulations=64, **kw),
                    rf.learners.AlphaZero(gamma=1.0), n_games=args.games, n_threads=args.n_threads)  # fmt: skip
    infer = SimGpu(7)
    eng.collect(2048, infer)  # compile, and measure the callback: the next windows are pipelined
    rt = eng._rt
    times: dict[str, list[float]] = {"lend": [], "invoke": [], "callback": [], "route": [], "finish_fire kernel": []}
    cpu_times: dict[str, list[float]] = {name: [] for name in times}
    # The whole of a nested wrapper (the callback inside ``_invoke``, the kernel inside
    # ``_route_back``), its own clock reads included: what the parent part must not count as the
    # engine's (four clock reads and the appends are ~1.5-3 us a wrap under load).
    outer: dict[str, list[float]] = {"callback": [], "finish_fire kernel": []}
    outer_cpu: dict[str, list[float]] = {name: [] for name in outer}

    def timed(name, fn):
        wall, cpu = times[name], cpu_times[name]
        o_wall, o_cpu = outer.get(name), outer_cpu.get(name)

        def wrap(*a, **k):
            t_in = time.perf_counter()
            c0 = time.thread_time()
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                t1 = time.perf_counter()
                wall.append(t1 - t0)
                cpu.append(time.thread_time() - c0)
                if o_wall is not None:
                    o_cpu.append(time.thread_time() - c0)  # from its first clock read on
                    o_wall.append(time.perf_counter() - t_in)

        return wrap

    # The scheduler thread's CPU outside the worker kernel: its whole thread CPU per window minus
    # the CPU it spent inside ``work`` (slot rounds it ran as a worker).
    sched = {"cpu": 0.0, "work": 0.0}
    loop = rt._loop

    def timed_loop(*a, **k):
        c0 = time.thread_time()
        try:
            return loop(*a, **k)
        finally:
            sched["cpu"] += time.thread_time() - c0

    rt._loop = timed_loop
    rt._lend = timed("lend", rt._lend)
    rt._invoke = timed("invoke", rt._invoke)
    rt._route_back = timed("route", rt._route_back)
    rt.k = _KernelProxy(rt.k, timed, sched)
    cb = infer.__call__
    fns_time = times["callback"]

    fns_cpu = cpu_times["callback"]

    calls: list[tuple[float, float, int, int]] = []  # (start, end, rows, arm) of every call

    def callback(obs):
        t_in = time.perf_counter()
        c0 = time.thread_time()
        t0 = time.perf_counter()
        try:
            return cb(obs)
        finally:
            t1 = time.perf_counter()
            fns_time.append(t1 - t0)
            c1 = time.thread_time()
            fns_cpu.append(c1 - c0)
            calls.append((t0, t1, len(obs), rt._policy.arm))
            outer_cpu["callback"].append(time.thread_time() - c0)
            outer["callback"].append(time.perf_counter() - t_in)

    t = time.perf_counter()
    records = 0
    while time.perf_counter() - t < args.seconds:
        records += len(eng.collect(2048, callback).obs)
    wall = time.perf_counter() - t
    n = len(times["callback"])
    print(f"Connect4 AlphaZero(64), {args.games} games, leaf_batch {args.leaf_batch}: {records / wall:.0f} records/s, "
          f"{n} calls, pipelined={rt.cost.accelerator_like()}")  # fmt: skip
    def parts_of(t, o):
        return {
            "lend (scheduler thread)": np.array(t["lend"]),
            "validate + bookkeeping (caller's thread)": np.array(t["invoke"][-n:]) - np.array(o["callback"][-n:]),
            "route back, Python around the kernel": np.array(t["route"]) - np.array(o["finish_fire kernel"]),
            "finish_fire kernel (no GIL)": np.array(t["finish_fire kernel"]),
        }

    # Wall time is what the pipeline waits for; the thread's CPU time is the Python itself (the
    # wall also holds the time the OS gave the thread's core to a worker: 4 threads, 2 cores).
    print(f"  {'':<44} {'wall: median':>13} {'mean':>8}   {'thread CPU: median':>19} {'mean':>8}")
    total = {"wall": 0.0, "cpu": 0.0}
    for (name, xs), ys in zip(parts_of(times, outer).items(), parts_of(cpu_times, outer_cpu).values(), strict=True):
        if name != "finish_fire kernel (no GIL)":  # the kernel holds no GIL: every other part is Python
            total["wall"] += xs.mean()
            total["cpu"] += ys.mean()
        print(f"  {name:<44} {np.median(xs) * 1e6:10.1f} us {xs.mean() * 1e6:6.1f} us   "
              f"{np.median(ys) * 1e6:16.1f} us {ys.mean() * 1e6:6.1f} us")  # fmt: skip
    print(f"  {'Python per call (all but the kernel)':<44} {'':>13} {total['wall'] * 1e6:6.1f} us   "
          f"{'':>19} {total['cpu'] * 1e6:6.1f} us")  # fmt: skip
    c0, c1, idle0, idle1 = rt.cost.fit()  # what the engine learned of the callback's cost
    print(f"  callback cost fit: wall {c0 * 1e6:.0f} us + {c1 * 1e9:.0f} ns/row, idle {idle0 * 1e6:.0f} us + {idle1 * 1e9:.0f} ns/row")
    other = (sched["cpu"] - sched["work"]) / max(n, 1) * 1e6
    print(f"  {'scheduler thread CPU outside work(), per call':<44} mean {other:7.1f} us "
          f"(its poll kernels included; worker rounds {sched['work'] / max(n, 1) * 1e6:.1f} us)")
    print_arms(np.array(calls), rt._policy.arms, wall)


def print_arms(calls: np.ndarray, arms: list[int], wall: float) -> None:
    """Per fire target: calls, rows per call, the gap before a call and the call (medians).
    A gap of more than 20 ms is a window boundary (the caller's time), not the pipeline's."""
    if len(calls) < 2:
        return
    start, end, rows, arm = calls[1:, 0], calls[1:, 1], calls[1:, 2], calls[1:, 3].astype(int)
    gap = start - calls[:-1, 1]
    busy = float((calls[:, 1] - calls[:, 0]).sum()) / wall
    print(f"  callback busy {busy:.0%} of the wall; per fire target (FirePolicy arms {arms}):")
    for a, name in enumerate(["full", "half"][: len(arms)]):
        m = (arm == a) & (gap < 0.02)
        if m.any():
            print(f"    {name:<5} {int(m.sum()):6d} calls, {rows[m].mean():7.1f} rows, gap before "
                  f"{np.median(gap[m]) * 1e3:.3f} ms, call {np.median(end[m] - start[m]) * 1e3:.3f} ms")  # fmt: skip


class _KernelProxy:
    """The kernel module with ``finish_fire`` timed, and the CPU of the scheduler thread's
    ``work`` calls counted."""

    def __init__(self, k, timed, sched):
        self._k = k
        self.finish_fire = timed("finish_fire kernel", k.finish_fire)
        import threading

        def work(E, yield_on_full, spin):
            if threading.current_thread().name != "reinfors-scheduler":
                return k.work(E, yield_on_full, spin)
            c0 = time.thread_time()
            try:
                return k.work(E, yield_on_full, spin)
            finally:
                sched["work"] += time.thread_time() - c0

        self.work = work

    def __getattr__(self, name):
        return getattr(self._k, name)


if __name__ == "__main__":
    main()
