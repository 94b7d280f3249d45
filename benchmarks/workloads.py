"""Standard benchmark workloads (docs/architecture.md, "Benchmark workloads"), written against the public API only.

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


def build(name, rf, n_threads, spec=None):
    """(engine, infer) for workload ``name`` (``spec``: extra knobs of the GPU workload)."""
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
    if name == "c4_gumbel_zero":  # GumbelAlphaZero (issue 33; not in 0.4.0): 16 simulations, zero callback
        eng = rf.Engine(
            G.Connect4(),
            c4_reward,
            P.GumbelAlphaZero(num_simulations=16),
            L.AlphaZero(gamma=1.0),
            n_games=64,
            n_threads=n_threads,
        )
        return eng, lambda obs: (np.zeros((len(obs), 7), np.float32), np.zeros(len(obs), np.float32))
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
    if name == "leduc_dqn":  # wave-2 workload
        w = np.random.default_rng(0).standard_normal((21, 3)).astype(np.float32)
        eng = rf.Engine(
            G.LeducPoker(), rf.Reward(), P.EpsilonGreedyQ(n_heads=1, epsilon=0.1), L.Dqn(gamma=1.0), n_games=64,
            n_threads=n_threads,
        )  # fmt: skip
        return eng, lambda obs: (obs @ w)[:, None, :]
    if name == "snake_selexp":  # Snake defaults, SelectiveExpectimax + TreeStrap, linear Q callback
        g = G.Snake()
        eng = rf.Engine(g, rf.Reward(food=1.0, loss=-1.0), P.SelectiveExpectimax(), L.TreeStrap(), n_games=16,
                        n_threads=n_threads)  # fmt: skip
        obs_size, n_actions = int(np.prod(g.observation_space().shape)), g.action_space().n
        w = (np.random.default_rng(0).standard_normal((obs_size, n_actions)) * 0.01).astype(np.float32)
        return eng, lambda obs: (obs.reshape(len(obs), -1) @ w).reshape(len(obs), 1, n_actions)
    if name == "quickstart":  # examples/quickstart.py's engine and callback
        eng = rf.Engine(G.Connect4(), rf.Reward(), P.Ppo(), L.Ppo(gamma=0.99, lam=0.95), n_games=64,
                        n_threads=n_threads)  # fmt: skip
        return eng, mlp(84, 7)
    if name == "chess_az_zero":  # wave-2 workload: 32 simulations, zero callback, 32 games
        eng = rf.Engine(
            G.Chess(),
            rf.Reward(),
            P.AlphaZero(num_simulations=32),
            L.AlphaZero(gamma=1.0),
            n_games=32,
            n_threads=n_threads,
        )
        return eng, lambda obs: (np.zeros((len(obs), 4672), np.float32), np.zeros(len(obs), np.float32))
    if name == "c4_az_resnet":
        return _resnet_workload(rf, n_threads, spec or {})
    if name in SIMGPU_GAMES:
        return _simgpu_workload(name, rf, n_threads, spec or {})
    if name == "holdem_ppo":  # TexasHoldem() 6 players, Ppo + Ppo, linear callback
        game = G.TexasHoldem()
        size = 31 * 4 * 13
        w = (np.random.default_rng(0).standard_normal((size, 4)) * 0.05).astype(np.float32)
        eng = rf.Engine(game, rf.Reward(), P.Ppo(), L.Ppo(gamma=1.0, lam=0.95), n_games=64, n_threads=n_threads)

        def linear(obs):
            out = obs @ w
            return out[:, :3], np.tanh(out[:, 3])

        return eng, linear
    if name == "backgammon_az":  # wave-2 workload: default reward, zero callback, 32 games
        eng = rf.Engine(G.Backgammon(), None, P.AlphaZero(num_simulations=32), L.AlphaZero(gamma=1.0), n_games=32,
                        n_threads=n_threads)  # fmt: skip
        return eng, lambda obs: (np.zeros((len(obs), 1352), np.float32), np.zeros(len(obs), np.float32))
    if name == "car_racing_ppo":  # CarRacing pixels, Ppo + Ppo, zero callback, 16 games
        eng = rf.Engine(G.CarRacing(), rf.Reward(), P.Ppo(), L.Ppo(gamma=0.99, lam=0.95), n_games=16,
                        n_threads=n_threads)  # fmt: skip
        return eng, lambda obs: (np.zeros((len(obs), 5), np.float32), np.zeros(len(obs), np.float32))
    raise KeyError(name)


# The accelerator stand-in (benchmarks/compare.py --mode simgpu): an H200 running a compiled 6x64
# ResNet in bf16 costs ~1.2-1.4 ms a call up to ~2k rows and streams 2.2 M rows/s at 8k rows
# (measured with benchmarks/gpu_resnet.py; design notes §6/§8).  The stand-in sleeps that long
# (releasing the GIL, as a CUDA call does while it waits) and returns zeros.
SIMGPU_FIXED_S = 1.3e-3
SIMGPU_ROWS_PER_S = 2.2e6
SIMGPU_GAMES = {  # workload -> (game factory name, simulations, default games)
    "c4_az_simgpu": ("Connect4", 64, 256),
    "backgammon_az_simgpu": ("Backgammon", 32, 256),
    "chess_az_simgpu": ("Chess", 32, 256),
}


class SimGpu:
    """The stand-in callback: ``SIMGPU_FIXED_S + rows / SIMGPU_ROWS_PER_S`` of sleep, zeros out.

    Records every call's (start, end) so the caller can report the busy fraction: the union of
    the in-call intervals over the wall time."""

    def __init__(self, n_actions):
        self.n_actions = n_actions
        self.spans = []

    def __call__(self, obs):
        t0 = time.perf_counter()
        time.sleep(SIMGPU_FIXED_S + len(obs) / SIMGPU_ROWS_PER_S)
        out = np.zeros((len(obs), self.n_actions), np.float32), np.zeros(len(obs), np.float32)
        self.spans.append((t0, time.perf_counter()))
        return out

    def busy(self, t0, t1):
        """Seconds of ``[t0, t1]`` covered by at least one call."""
        total, end = 0.0, t0
        for a, b in sorted(self.spans):
            a, b = max(a, end), min(b, t1)
            if b > a:
                total += b - a
                end = b
        return total


def _simgpu_workload(name, rf, n_threads, spec):
    game_name, sims, games = SIMGPU_GAMES[name]
    game = getattr(rf.games, game_name)()
    kw = {}
    if spec.get("leaf_batch", 1) > 1:
        kw["leaf_batch"] = spec["leaf_batch"]  # not in 0.4.0: its AlphaZero refuses the keyword
    policy = rf.policies.AlphaZero(num_simulations=sims, **kw)
    reward = rf.Reward(win=1.0, loss=-1.0) if game_name == "Connect4" else None
    eng = rf.Engine(game, reward, policy, rf.learners.AlphaZero(gamma=1.0), n_games=spec.get("n_games", games),
                    batch_size=spec.get("batch_size", 0), n_threads=n_threads)  # fmt: skip
    return eng, SimGpu(game.action_space().n)


def _resnet_workload(rf, n_threads, spec):
    """AlphaZero Connect4 with a torch ResNet callback (6 blocks x 64 channels, policy and value
    heads, eval mode, bf16 autocast) on CUDA: the GPU workload of the performance issue.
    ``spec`` may set ``n_games`` and ``batch_size`` (the sweep)."""
    import torch
    from torch import nn

    if not torch.cuda.is_available():
        raise NotImplementedError("the ResNet workload needs a CUDA device")

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            return torch.relu(x + self.b2(self.c2(y)))

    class Net(nn.Module):
        def __init__(self, planes=2, c=64, blocks=6, actions=7):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(planes, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
            self.tower = nn.Sequential(*[Block(c) for _ in range(blocks)])
            self.pol = nn.Sequential(nn.Conv2d(c, 2, 1), nn.Flatten(), nn.Linear(2 * 42, actions))
            self.val = nn.Sequential(nn.Conv2d(c, 1, 1), nn.Flatten(), nn.Linear(42, 64), nn.ReLU(), nn.Linear(64, 1))

        def forward(self, x):
            h = self.tower(self.stem(x))
            return self.pol(h), torch.tanh(self.val(h)).squeeze(1)

    dev = torch.device("cuda")
    net = Net().to(dev).eval()

    @torch.inference_mode()
    def infer(obs):
        x = torch.from_numpy(obs).to(dev, non_blocking=True).view(-1, 2, 6, 7)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, v = net(x)
        return logits.float().cpu().numpy(), v.float().cpu().numpy()

    eng = rf.Engine(
        rf.games.Connect4(),
        rf.Reward(win=1.0, loss=-1.0),
        rf.policies.AlphaZero(num_simulations=64),
        rf.learners.AlphaZero(gamma=1.0),
        n_games=spec.get("n_games", 64),
        batch_size=spec.get("batch_size", 0),
        n_threads=n_threads,
    )
    return eng, infer


def train_step(batch, seconds):
    """The simulated training step of ``stream_c4_az``: an accelerator-bound update (the GIL is
    free while it runs) plus a little host work on the batch."""
    float(np.square(batch.value_targets).mean())
    time.sleep(seconds)


def stream_main(spec, rf, t0):
    """``stream_c4_az``: the same number of batches collected serially (collect, then train)
    and through ``collect_stream(collect_size=512, depth=1)`` (train while the next batch is
    collected); reports streamed records/s and the overlap gain (serial / streamed seconds)."""
    eng, infer = build("c4_az_mlp", rf, spec.get("n_threads", 2))
    size, train_s = spec.get("collect_size", 512), spec.get("train_seconds", 0.03)
    first = eng.collect(size, infer)
    first_s = time.perf_counter() - t0
    n = max(4, int(spec.get("batches", 0)) or 0)
    # Size the run from one serial round so both phases take about ``seconds``.
    t = time.perf_counter()
    b = eng.collect(size, infer)
    train_step(b, train_s)
    one = time.perf_counter() - t
    n = max(n, int(spec.get("seconds", 5.0) / 2 / max(one, 1e-3)))
    t = time.perf_counter()
    serial_records = 0
    for _ in range(n):
        b = eng.collect(size, infer)
        serial_records += len(b.obs)
        train_step(b, train_s)
    serial = time.perf_counter() - t
    t = time.perf_counter()
    cpu0 = time.process_time()
    records = 0
    with eng.collect_stream(size, infer, depth=1) as stream:
        for _ in range(n):
            b = next(stream)
            records += len(b.obs)
            train_step(b, train_s)
        t_stop = time.perf_counter()
    stop_s = time.perf_counter() - t_stop
    streamed = t_stop - t
    return {
        "records_per_s": records / streamed,
        "serial_records_per_s": serial_records / serial,
        "overlap_gain": serial / streamed,
        "stop_s": stop_s,
        "engine_ns_per_row": 0.0,
        "rows_per_call": 0.0,
        "first_call_s": first_s,
        "cpu_us_per_record": (time.process_time() - cpu0) / max(records, 1) * 1e6,
        "records": records,
        "first_records": len(first.obs),
    }


def main():
    spec = json.loads(sys.argv[1])
    t0 = time.perf_counter()
    import reinfors as rf

    if spec["workload"] == "stream_c4_az":
        try:
            print(json.dumps(stream_main(spec, rf, t0)))
        except (NotImplementedError, AttributeError) as e:
            print(json.dumps({"unavailable": f"{type(e).__name__}: {e}"}))
        return

    try:
        eng, infer = build(spec["workload"], rf, spec.get("n_threads", 2), spec)
    except (NotImplementedError, AttributeError, KeyError, ImportError, TypeError) as e:
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
    busy = infer.busy(t1, t1 + wall) / wall if isinstance(infer, SimGpu) else 0.0
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
                "busy": busy,
            }
        )
    )


if __name__ == "__main__":
    main()
