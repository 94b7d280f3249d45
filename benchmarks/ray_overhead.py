"""What Ray collectors cost (issue 47): snapshot cost per window, records/s against one local
engine, and memory under a slow learner.

    python benchmarks/ray_overhead.py --mode snapshot
    python benchmarks/ray_overhead.py --mode overhead [--windows 512 4096] [--seconds 10] [--reps 3]
    python benchmarks/ray_overhead.py --mode memory [--minutes 10] [--actors 4] [--sleep 0.2]
    python benchmarks/ray_overhead.py --mode scale --actors 8 --threads 2   # device_run.sh's leg

Workload: Connect4, EpsilonGreedyQ(epsilon=0.1) + Dqn, a fixed random linear Q callback (NumPy;
the same weights everywhere), ``n_games`` games in total split over the actors.

* ``snapshot``: per window of ``--windows`` records, the cost of ``engine.snapshot().to_bytes()``
  (what every Ray window pays) next to the window's own wall, for this workload and for the
  self-play example's AlphaZero engine.
* ``overhead``: ``--actors`` actors x 1 thread (``Collectors``, ``max_in_flight=2``; with and
  without snapshots) against one local engine with ``--actors`` threads and the same games; per
  window size the three alternate, A/B/C/A/B/C…, each timed ``--seconds`` per repetition; rate =
  records over wall summed over every timed collect (design.md §8).  The learner does nothing
  but take batches.
* ``memory``: ``--actors`` actors under a learner that sleeps ``--sleep`` s per batch and
  publishes new weights (with a 1 MiB pad, so a leak of versions shows) after each; every
  ``--every`` s one JSON line: driver RSS and object-store bytes in use (cluster total minus
  available), and at the end the growth after the first minute.
* ``scale``: ``--actors`` actors x ``--threads`` threads against one engine with ``--threads``
  threads (the 16-core device leg; goal >= 6x at 8 x 2).

Every mode prints JSON lines; the last one is the summary.  The machine's other load shows in
every rate: trust the interleaved ratios, not absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

import reinfors as rf

A = 7


WORKLOAD = "dqn"  # --workload: dqn (records cost ~1-2 us each) or az (AlphaZero, 16 simulations)


def engine(n_games: int, n_threads: int, seed: int = 0) -> rf.Engine:
    if WORKLOAD == "az":
        return rf.Engine(
            rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0), rf.policies.AlphaZero(num_simulations=16),
            rf.learners.AlphaZero(), n_games=n_games, seed=seed, n_threads=n_threads,
        )  # fmt: skip
    return rf.Engine(
        rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0), rf.policies.EpsilonGreedyQ(epsilon=0.1),
        rf.learners.Dqn(), n_games=n_games, seed=seed, n_threads=n_threads,
    )  # fmt: skip


def weights(version: int = 0, pad: int = 0) -> dict:
    w = {"v": version, "w": np.random.default_rng(7).standard_normal((84, A)).astype(np.float32) * 0.3}
    if WORKLOAD == "az":
        w["az"] = True
    if pad:
        w["pad"] = np.full(pad // 8, version, np.float64)
    return w


def make_infer(weights):
    """Linear Q: obs (84) @ w -> (rows, 1, 7); with ``weights["az"]``, those 7 as logits plus a
    zero value (AlphaZero)."""
    w = np.asarray(weights["w"], np.float32)
    if weights.get("az"):

        def infer_az(obs):
            return obs @ w, np.zeros(len(obs), np.float32)

        return infer_az

    def infer(obs):
        return (obs @ w)[:, None, :]

    return infer


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _store_used(ray) -> float:
    total = ray.cluster_resources().get("object_store_memory", 0.0)
    return total - ray.available_resources().get("object_store_memory", 0.0)


def _emit(d: dict) -> None:
    print(json.dumps(d), flush=True)


def _wire_copy(wire) -> int:
    """What Ray does with a window's snapshot: pickle protocol 5 with the arrays out of band, each
    copied once (into the object store).  Returns the bytes copied."""
    import pickle

    bufs = []
    head = pickle.dumps(wire, protocol=5, buffer_callback=bufs.append)
    return len(head) + sum(len(np.frombuffer(b.raw(), np.uint8).copy()) for b in bufs)


def mode_snapshot(args) -> None:
    from reinfors.distributed import snapshot_to_wire

    cases = [("c4_dqn", engine(args.games // args.actors, 1), make_infer(weights()))]
    az = rf.Engine(
        rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0), rf.policies.AlphaZero(num_simulations=16),
        rf.learners.AlphaZero(), n_games=16, seed=0, n_threads=1,
    )  # fmt: skip
    zero = lambda o: (np.zeros((len(o), A), np.float32), np.zeros(len(o), np.float32))  # noqa: E731
    cases.append(("c4_az16_example", az, zero))
    for name, eng, infer in cases:
        for size in args.windows:
            eng.collect(size, infer)
            win, wire, raw, nbytes = [], [], [], 0
            for k in range(args.reps * 10):
                t = time.perf_counter()
                eng.collect(size, infer)
                t1 = time.perf_counter()
                for path in (0, 1) if k % 2 else (1, 0):  # right after the window, in turn
                    t2 = time.perf_counter()
                    if path:
                        _wire_copy(snapshot_to_wire(eng.snapshot()))
                    else:
                        nbytes = len(eng.snapshot().to_bytes())
                    (wire if path else raw).append(time.perf_counter() - t2)
                win.append(t1 - t)
            _emit(
                {"mode": "snapshot", "engine": name, "window": size, "window_ms": round(1e3 * sum(win) / len(win), 3),
                 "wire_snapshot_ms": round(1e3 * sum(wire) / len(wire), 3),
                 "to_bytes_snapshot_ms": round(1e3 * sum(raw) / len(raw), 3), "snapshot_bytes": nbytes,
                 "wire_share": round(sum(wire) / sum(win), 4), "to_bytes_share": round(sum(raw) / sum(win), 4)}
            )  # fmt: skip


def _init_ray(args):
    import ray

    ray.init(
        num_cpus=args.num_cpus or args.actors, include_dashboard=False, log_to_driver=False,
        configure_logging=False, object_store_memory=args.store_mib * 2**20,
    )  # fmt: skip
    return ray


def mode_overhead(args) -> None:
    from reinfors.distributed import Collectors

    ray = _init_ray(args)
    cfg = engine(args.games // args.actors, args.threads).resolved_config()
    local = engine(args.games, args.actors * args.threads)
    infer = make_infer(weights())
    summary = {}
    for size in args.windows:
        cols = {
            "ray": Collectors(cfg, make_infer, args.actors, size, max_in_flight=2, num_cpus=args.threads),
            "ray_nosnap": Collectors(
                cfg, make_infer, args.actors, size, max_in_flight=2, max_restarts=0, num_cpus=args.threads
            ),
        }
        for col in cols.values():
            col.set_weights(weights())
            for _ in range(2 * args.actors):
                next(col)  # warm: kernels loaded, pipeline full
        local.collect(size, infer)
        totals = {k: [0, 0.0] for k in ("local", *cols)}
        for rep in range(args.reps):
            for name in ("local", *cols):
                recs, t0, c0 = 0, time.perf_counter(), time.process_time()
                while time.perf_counter() - t0 < args.seconds:
                    if name == "local":
                        recs += len(local.collect(size, infer).obs)
                    else:
                        recs += len(next(cols[name])[2].obs)
                wall = time.perf_counter() - t0
                totals[name][0] += recs
                totals[name][1] += wall
                # the driver's own CPU: for "ray" the learner process's share of the cores
                _emit({"mode": "overhead", "workload": WORKLOAD, "window": size, "rep": rep, "build": name,
                       "records": recs, "seconds": round(wall, 2), "records_per_s": round(recs / wall, 1),
                       "driver_cpu_s": round(time.process_time() - c0, 2)})  # fmt: skip
        for col in cols.values():
            col.close()
        rates = {k: r / w for k, (r, w) in totals.items()}
        summary[size] = {
            **{f"{k}_records_per_s": round(v, 1) for k, v in rates.items()},
            "ray_over_local": round(rates["ray"] / rates["local"], 3),
            "ray_nosnap_over_local": round(rates["ray_nosnap"] / rates["local"], 3),
        }
    ray.shutdown()
    _emit({"mode": "overhead", "workload": WORKLOAD, "actors": args.actors, "threads": args.threads, "games": args.games,
           "cores": os.cpu_count(), "summary": summary})  # fmt: skip


def mode_scale(args) -> None:
    """``--actors`` x ``--threads`` against one engine with ``--threads`` threads, ``--games``
    per engine (each actor has as many games as the single engine)."""
    from reinfors.distributed import Collectors

    ray = _init_ray(args)
    one = engine(args.games, args.threads)
    infer = make_infer(weights())
    size = args.windows[-1]
    col = Collectors(
        one.resolved_config(), make_infer, args.actors, size, max_in_flight=2, num_cpus=args.threads
    )
    col.set_weights(weights())
    for _ in range(2 * args.actors):
        next(col)
    one.collect(size, infer)
    totals = {"one": [0, 0.0], "ray": [0, 0.0]}
    for rep in range(args.reps):
        for name in ("one", "ray"):
            recs, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < args.seconds:
                recs += len((one.collect(size, infer) if name == "one" else next(col)[2]).obs)
            wall = time.perf_counter() - t0
            totals[name][0] += recs
            totals[name][1] += wall
            _emit({"mode": "scale", "rep": rep, "build": name, "records_per_s": round(recs / wall, 1)})
    col.close()
    ray.shutdown()
    rates = {k: r / w for k, (r, w) in totals.items()}
    _emit({"mode": "scale", "actors": args.actors, "threads": args.threads, "games": args.games, "window": size,
           "cores": os.cpu_count(), "one_records_per_s": round(rates["one"], 1),
           "ray_records_per_s": round(rates["ray"], 1), "speedup": round(rates["ray"] / rates["one"], 2)})  # fmt: skip


def mode_memory(args) -> None:
    from reinfors.distributed import Collectors

    ray = _init_ray(args)
    cfg = engine(args.games // args.actors, 1).resolved_config()
    samples = []
    t0 = time.perf_counter()
    n = recs = 0
    with Collectors(cfg, make_infer, args.actors, args.windows[0], max_in_flight=args.max_in_flight) as col:
        col.set_weights(weights(0, pad=args.pad))
        next_sample = 0.0
        while (now := time.perf_counter() - t0) < args.minutes * 60:
            _, _, batch = next(col)
            n += 1
            recs += len(batch.obs)
            del batch
            time.sleep(args.sleep)  # the slow learner
            col.set_weights(weights(col.version + 1, pad=args.pad))
            if now >= next_sample:
                s = {"mode": "memory", "t": round(now, 1), "batches": n, "records": recs,
                     "driver_rss_mib": round(_rss_mib(), 1), "store_mib": round(_store_used(ray) / 2**20, 2),
                     "in_flight": sum(col.in_flight)}  # fmt: skip
                samples.append(s)
                _emit(s)
                next_sample += args.every
    ray.shutdown()
    after = [s for s in samples if s["t"] >= 60] or samples[-1:]
    first = after[0]

    def growth(key: str) -> float:
        base = first[key]
        return round((max(s[key] for s in after) - base) / base, 4) if base else float("nan")

    def mean(key: str, lo: float, hi: float) -> float:
        v = [s[key] for s in samples if lo <= s["t"] < hi] or [float("nan")]
        return round(sum(v) / len(v), 2)

    end = samples[-1]["t"] if samples else 0.0
    # growth of the mean over the second minute to the mean over the last minute (the store
    # swings with which windows happen to be in flight at a sample; the means do not)
    windows = {f"{k}_mean_min2": mean(k, 60, 120) for k in ("driver_rss_mib", "store_mib")}
    windows.update({f"{k}_mean_last_min": mean(k, end - 60, end + 1) for k in ("driver_rss_mib", "store_mib")})

    _emit({"mode": "memory", "actors": args.actors, "minutes": args.minutes, "sleep": args.sleep,
           "window": args.windows[0], "batches": n, "records": recs, "rss_at_1min_mib": first["driver_rss_mib"],
           "rss_max_after_1min_mib": max(s["driver_rss_mib"] for s in after), "rss_growth_after_1min": growth("driver_rss_mib"),
           "store_at_1min_mib": first["store_mib"], "store_max_after_1min_mib": max(s["store_mib"] for s in after),
           "store_growth_after_1min": growth("store_mib"), **windows})  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=("snapshot", "overhead", "memory", "scale"), required=True)
    ap.add_argument("--workload", choices=("dqn", "az"), default="dqn")
    ap.add_argument("--windows", type=int, nargs="+", default=[512, 4096], help="records per window")
    ap.add_argument("--actors", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="threads per actor")
    ap.add_argument("--games", type=int, default=64, help="games in total (overhead/memory) or per engine (scale)")
    ap.add_argument("--seconds", type=float, default=10.0, help="timed seconds per build per repetition")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--minutes", type=float, default=10.0, help="memory: length of the run")
    ap.add_argument("--sleep", type=float, default=0.2, help="memory: the learner's seconds per batch")
    ap.add_argument("--every", type=float, default=10.0, help="memory: seconds between samples")
    ap.add_argument("--pad", type=int, default=1 << 20, help="memory: bytes of padding in every weights version")
    ap.add_argument("--max-in-flight", type=int, default=2)
    ap.add_argument("--num-cpus", type=int, default=0, help="Ray CPUs (0: actors x threads, twice that for overhead)")
    ap.add_argument("--store-mib", type=int, default=200, help="Ray object store size")
    args = ap.parse_args()
    global WORKLOAD
    WORKLOAD = args.workload
    if args.mode in ("overhead", "scale") and not args.num_cpus:
        # overhead holds two sets of actors (with and without snapshots), only one busy at a time
        args.num_cpus = args.actors * args.threads * (2 if args.mode == "overhead" else 1)
    {"snapshot": mode_snapshot, "overhead": mode_overhead, "memory": mode_memory, "scale": mode_scale}[args.mode](args)


if __name__ == "__main__":
    main()
