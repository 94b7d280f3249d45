"""Soak (issue 16 item 4, slow tier): ``REINFORS_SOAK_SECONDS`` (default 600) of mixed
compositions — the ``dqn_connect4`` engine at ``n_threads`` 2 and 8 and the
``alphazero_connect4_noise`` engine of ``tests/engine/test_snapshot.py`` — cycling through
collects of varied sizes, ``collect_stream`` started / paused / stopped, snapshot -> collect ->
restore -> collect (record-exact continuation), and ``weights_updated``.

Accounting: every record is delivered exactly once — each batch holds exactly the records of
the episodes its telemetry reports (``records == sum of episode lengths``), a restored engine
delivers the same bytes again, and totals are kept across batches, paused streams and stopped
streams (whose in-flight window is discarded as documented).  Resources: RSS sampled once per
cycle must be flat after warm-up (least-squares slope bound, and a bound on the growth), the
thread count must not grow.  The figures are printed (``-s``) and written to
``$REINFORS_SOAK_REPORT`` when set.
"""

from __future__ import annotations

import gc
import json
import os
import random
import threading
import time

import numpy as np
import pytest
from engine.snapshot_cases import FAMILIES

import reinfors as rf


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _threads() -> int:
    return sum(1 for t in threading.enumerate() if not t.name.startswith("reinfors-compile-notice"))


def _records(batch) -> int:
    return batch.obs.shape[0]


def _account(batch) -> int:
    """Records of one batch, checked against its episodes (each record belongs to exactly one
    delivered episode)."""
    n = _records(batch)
    lengths = sum(ep[1] for ep in batch.telemetry["episodes"])
    assert n == lengths, f"{n} records for episodes of {lengths} decisions"
    return n


def _same(a, b) -> bool:
    return all(
        getattr(a, f).tobytes() == getattr(b, f).tobytes() for f in type(a)._FIELDS if f != "telemetry"
    )


_SECONDS = float(os.environ.get("REINFORS_SOAK_SECONDS", "600"))


@pytest.mark.slow
# the suite's 600 s per-test timeout would end the default 10-minute soak before its checks: the
# soak's own time plus room for cold compiles of its three engines and its final checks
@pytest.mark.timeout(_SECONDS + 1200)
def test_soak():
    seconds = _SECONDS
    rng = random.Random(0)
    engines = []
    for family, n_threads in (("dqn_connect4", 2), ("dqn_connect4", 8), ("alphazero_connect4_noise", 1)):
        make_kw, make_infer = FAMILIES[family]
        engines.append((f"{family}/t{n_threads}", rf.Engine(**make_kw(), n_threads=n_threads), make_infer()))
    stats = {name: {"records": 0, "batches": 0, "episodes": 0} for name, _, _ in engines}
    ops = {"collect": 0, "stream_paused": 0, "stream_stopped": 0, "restore": 0, "weights_updated": 0}
    for _name, e, infer in engines:  # warm: compile, pools
        _account(e.collect(20, infer))
    t0 = time.monotonic()
    samples = []  # (seconds, rss MB)
    threads_start = None
    cycle = 0
    while time.monotonic() - t0 < seconds:
        name, e, infer = engines[cycle % len(engines)]
        st = stats[name]

        def take(batch, st=st):
            st["records"] += _account(batch)
            st["batches"] += 1
            st["episodes"] += len(batch.telemetry["episodes"])

        op = rng.randrange(5)
        if op == 0:
            for n in (rng.randint(1, 80), rng.randint(1, 8)):
                take(e.collect(n, infer))
            ops["collect"] += 1
        elif op == 1:  # stream, a few batches, then pause: the queued batches come back
            s = e.collect_stream(rng.randint(4, 40), infer, depth=rng.randint(1, 3))
            for _, b in zip(range(rng.randint(1, 4)), s, strict=False):
                take(b)
            for b in s.pause():
                take(b)
            ops["stream_paused"] += 1
        elif op == 2:  # stream stopped mid-flight: queued batches and the window are dropped
            s = e.collect_stream(rng.randint(4, 40), infer)
            for _, b in zip(range(rng.randint(0, 3)), s, strict=False):
                take(b)
            s.stop()
            ops["stream_stopped"] += 1
        elif op == 3:  # snapshot -> collect -> restore -> the same records again (counted once)
            snap = rf.EngineSnapshot.from_bytes(e.snapshot().to_bytes())
            n = rng.randint(1, 50)
            first = e.collect(n, infer)
            e.restore(snap)
            again = e.collect(n, infer)
            assert _same(first, again), f"{name}: restore did not continue record-exactly"
            take(again)
            ops["restore"] += 1
        else:
            e.weights_updated()
            take(e.collect(rng.randint(1, 30), infer))
            ops["weights_updated"] += 1
        cycle += 1
        if cycle % 6 == 0:
            gc.collect()
            now = time.monotonic() - t0
            samples.append((now, _rss_mb()))
            if threads_start is None and now > 0.2 * seconds:
                threads_start = _threads()
    gc.collect()
    samples.append((time.monotonic() - t0, _rss_mb()))
    warm = [s for s in samples if s[0] >= 0.2 * seconds] or samples[-2:]
    xs = np.array([s[0] for s in warm]) / 60.0
    ys = np.array([s[1] for s in warm])
    slope = float(np.polyfit(xs, ys, 1)[0]) if len(warm) >= 3 else 0.0
    report = {
        "seconds": round(time.monotonic() - t0, 1),
        "cycles": cycle,
        "ops": ops,
        "stats": stats,
        "records": sum(s["records"] for s in stats.values()),
        "rss_mb_start": round(samples[0][1], 1),
        "rss_mb_after_warmup": round(warm[0][1], 1),
        "rss_mb_end": round(samples[-1][1], 1),
        "rss_slope_mb_per_min": round(slope, 3),
        "threads_after_warmup": threads_start,
        "threads_end": _threads(),
    }
    print("SOAK", json.dumps(report))
    if os.environ.get("REINFORS_SOAK_REPORT"):
        with open(os.environ["REINFORS_SOAK_REPORT"], "w") as f:
            json.dump(report, f, indent=1)
    assert all(s["records"] > 0 for s in stats.values())
    assert all(v > 0 for v in ops.values()) or cycle < 100, ops  # every kind of operation ran (seeded draws)
    assert slope < 4.0, f"RSS grows {slope:.2f} MB/min after warm-up"
    assert warm[-1][1] - warm[0][1] < 64, "RSS grew more than 64 MB after warm-up"
    if threads_start is not None:
        assert _threads() <= threads_start
