"""The engine's Python time per callback call (the accelerator issue's "scheduler Python time").

    python benchmarks/fire_overhead.py [--games 256] [--leaf-batch 1] [--seconds 10]

Runs Connect4 AlphaZero(64) against the accelerator stand-in (``workloads.SimGpu``: it is served
pipelined) and times, per call, the Python the engine runs around it: lending the arena's rows
(scheduler thread), validating the output (caller's thread, after the callback returned) and
routing the predictions back (``finish_fire``: its kernel time is reported apart, it holds no
GIL).  Each part is timed by wrapping the runtime's methods with ``perf_counter`` (~0.2 us a
wrap).  Prints microseconds per call: median and mean.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import os
CLK = time.thread_time if os.environ.get("CPU") else time.perf_counter
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

    def timed(name, fn):
        def wrap(*a, **k):
            t0 = CLK()
            try:
                return fn(*a, **k)
            finally:
                times[name].append(CLK() - t0)

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

    def callback(obs):
        t0 = CLK()
        try:
            return cb(obs)
        finally:
            fns_time.append(time.perf_counter() - t0)

    t = time.perf_counter()
    records = 0
    while time.perf_counter() - t < args.seconds:
        records += len(eng.collect(2048, callback).obs)
    wall = time.perf_counter() - t
    n = len(times["callback"])
    print(f"Connect4 AlphaZero(64), {args.games} games, leaf_batch {args.leaf_batch}: {records / wall:.0f} records/s, "
          f"{n} calls, pipelined={rt.cost.accelerator_like()}")  # fmt: skip
    inv = np.array(times["invoke"][-n:]) - np.array(times["callback"][-n:])
    parts = {
        "lend (scheduler thread)": times["lend"],
        "validate + bookkeeping (caller's thread)": list(inv),
        "route back, Python around the kernel": list(np.array(times["route"]) - np.array(times["finish_fire kernel"])),
        "finish_fire kernel (no GIL)": times["finish_fire kernel"],
    }
    total = 0.0
    for name, xs in parts.items():
        med, mean = statistics.median(xs) * 1e6, statistics.fmean(xs) * 1e6
        if "kernel" not in name:
            total += mean
        print(f"  {name:<44} median {med:7.1f} us   mean {mean:7.1f} us")
    print(f"  {'Python per call (all but the kernel)':<44} mean {total:7.1f} us")
    c0, c1, idle0, idle1 = rt.cost.fit()  # what the engine learned of the callback's cost
    print(f"  callback cost fit: wall {c0 * 1e6:.0f} us + {c1 * 1e9:.0f} ns/row, idle {idle0 * 1e6:.0f} us + {idle1 * 1e9:.0f} ns/row")
    other = (sched["cpu"] - sched["work"]) / max(n, 1) * 1e6
    print(f"  {'scheduler thread CPU outside work(), per call':<44} mean {other:7.1f} us "
          f"(its poll kernels included; worker rounds {sched['work'] / max(n, 1) * 1e6:.1f} us)")


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
