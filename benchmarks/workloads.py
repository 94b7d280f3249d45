"""Standard benchmark workloads (design.md §6), written against the public API only.

This file runs unchanged under this package *and* under the original reinfors==0.4.0 (its own
venv): ``python benchmarks/workloads.py '<json>'`` builds one workload, runs a first collect
(timed: construction + compile/cache load + first batch), then timed collects, and prints one
JSON line of measurements.  ``benchmarks/compare.py`` drives it for both builds, alternating.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np


def mlp(obs_size, n_actions, seed=0):
    """The numpy MLP of the workloads: obs -> 128 -> 128 -> (logits, tanh value), float32."""
    rs = np.random.default_rng(seed)
    w1 = (rs.standard_normal((obs_size, 128)) / np.sqrt(obs_size)).astype(np.float32)
    w2 = (rs.standard_normal((128, 128)) / np.sqrt(128)).astype(np.float32)
    w3 = (rs.standard_normal((128, n_actions + 1)) / np.sqrt(128)).astype(np.float32)

    def f(obs):
        h = np.maximum(obs @ w1, 0.0)
        h = np.maximum(h @ w2, 0.0)
        out = h @ w3
        return out[:, :n_actions], np.tanh(out[:, n_actions])

    return f


def build(name, rf, n_threads):
    """(engine, infer) for workload ``name``."""
    P, L, G = rf.policies, rf.learners, rf.games
    c4_reward = rf.Reward(win=1.0, loss=-1.0)
    if name == "gridworld_dqn":
        game = G.GridWorld(size=5, max_ticks=50)
        w = np.random.default_rng(0).standard_normal((50, 4)).astype(np.float32)
        eng = rf.Engine(
            game,
            rf.Reward(step=-0.01, goal=1.0),
            P.EpsilonGreedyQ(n_heads=1, epsilon=0.1),
            L.Dqn(gamma=0.99),
            n_games=64,
            n_threads=n_threads,
        )
        return eng, lambda obs: (obs @ w)[:, None, :]
    if name == "c4_ppo":
        eng = rf.Engine(G.Connect4(), c4_reward, P.Ppo(), L.Ppo(gamma=1.0, lam=0.95), n_games=64, n_threads=n_threads)
        return eng, lambda obs: (np.zeros((len(obs), 7), np.float32), np.zeros(len(obs), np.float32))
    if name in ("c4_az_zero", "c4_az_mlp", "c4_az_cache", "stream_c4_az"):
        cache = 200000 if name == "c4_az_cache" else 0
        eng = rf.Engine(
            G.Connect4(),
            c4_reward,
            P.AlphaZero(num_simulations=64),
            L.AlphaZero(gamma=1.0),
            n_games=64,
            infer_cache=cache,
            n_threads=n_threads,
        )
        if name == "c4_az_zero":
            return eng, lambda obs: (np.zeros((len(obs), 7), np.float32), np.zeros(len(obs), np.float32))
        return eng, mlp(84, 7)
    if name == "c4_minimax":
        eng = rf.Engine(G.Connect4(), c4_reward, P.Minimax(depth=4), L.TreeStrap(), n_games=32, n_threads=n_threads)
        return eng, lambda obs: np.zeros((len(obs), 1, 7), np.float32)
    if name == "c4_mcts":
        eng = rf.Engine(
            G.Connect4(), c4_reward, P.Mcts(num_simulations=64), L.TreeStrap(), n_games=64, n_threads=n_threads
        )
        return eng, lambda obs: np.zeros((len(obs), 1, 7), np.float32)
    if name == "snake_az":
        eng = rf.Engine(
            G.Snake(),
            rf.Reward(food=1.0, loss=-1.0),
            P.AlphaZero(num_simulations=32),
            L.AlphaZero(gamma=0.99),
            n_games=16,
            n_threads=n_threads,
        )
        return eng, lambda obs: (np.zeros((len(obs), 3), np.float32), np.zeros(len(obs), np.float32))
    raise KeyError(name)


def main():
    spec = json.loads(sys.argv[1])
    t0 = time.perf_counter()
    import reinfors as rf

    try:
        eng, infer = build(spec["workload"], rf, spec.get("n_threads", 2))
    except (NotImplementedError, AttributeError, KeyError) as e:
        print(json.dumps({"unavailable": f"{type(e).__name__}: {e}"}))
        return
    floor = spec.get("floor", 2048)
    try:
        first = eng.collect(floor, infer)
    except NotImplementedError as e:
        print(json.dumps({"unavailable": f"NotImplementedError: {e}"}))
        return
    first_s = time.perf_counter() - t0
    records = rows = calls = requested = hits = 0
    infer_s = 0.0
    cpu0 = time.process_time()
    t1 = time.perf_counter()
    while time.perf_counter() - t1 < spec.get("seconds", 5.0):
        b = eng.collect(floor, infer)
        records += len(b.obs)
        rows += b.telemetry["infer_rows"]
        calls += b.telemetry["infer_calls"]
        infer_s += b.telemetry["infer_seconds"]
        requested += b.telemetry["requested_rows"]
        hits += b.telemetry["cache_hits"]
    wall = time.perf_counter() - t1
    cpu = time.process_time() - cpu0
    print(
        json.dumps(
            {
                "records_per_s": records / wall,
                "engine_ns_per_row": (wall - infer_s) / max(rows, 1) * 1e9,
                "rows_per_call": rows / max(calls, 1),
                "first_call_s": first_s,
                "cpu_us_per_record": cpu / max(records, 1) * 1e6,
                "records": records,
                "hit_rate": hits / max(requested, 1),
                "rows_saved": 1.0 - rows / max(requested, 1),
                "first_records": len(first.obs),
            }
        )
    )


if __name__ == "__main__":
    main()
