"""The ``c4_az_resnet`` sweep: AlphaZero Connect4 with a torch ResNet callback, ours vs 0.4.0.

    python benchmarks/gpu_resnet.py [--device cuda] [--games 64 256 1024] [--batches 0 512 2048]
                                    [--leaf-batch 1 8 32] [--n-threads 16] [--seconds 8]
                                    [--orig .venv-orig/bin/python] [--json out.json]
    python benchmarks/gpu_resnet.py --device cpu --quick     # a tiny sweep that runs anywhere
    python benchmarks/gpu_resnet.py --net zero --games 32 --n-threads 2 --leaf-batch 1 4 8 16
                                    # the zero callback: rows per call and records/s per leaf_batch

The net is a ResNet of ``--blocks`` x ``--channels`` (default 6 x 64) with policy and value
heads, eval mode, bf16 autocast, on ``--device``.  Every point of the sweep (n_games x
batch_size x leaf_batch) runs in a fresh process per build, ours and 0.4.0 alternating (0.4.0
has no ``leaf_batch``: it runs at leaf_batch 1 only).  Per point: records/s, rows per callback
call, the busy fraction (time inside the callback / wall: with a synchronous CUDA callback,
the GPU's share of the wall) and the first-collect seconds.  Without torch every point reports
``unavailable`` and the script exits 0 (the shared CI venv has no torch).

The same file is the worker (``--worker '<json>'``): it uses the public API only, so it runs
unchanged under either build.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# -- worker (runs under either build) -------------------------------------------------------------


def _net_callback(spec: dict):
    """The inference callback ``obs -> (logits, values)`` for ``spec['net']``."""
    import numpy as np

    if spec["net"] == "zero":
        return lambda obs: (np.zeros((len(obs), 7), np.float32), np.zeros(len(obs), np.float32))
    import torch
    from torch import nn

    dev = torch.device(spec["device"])
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise NotImplementedError("CUDA is not available (use --device cpu)")
    torch.manual_seed(0)
    c, blocks = spec["channels"], spec["blocks"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            return torch.relu(x + self.b2(self.c2(y)))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(2, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
            self.tower = nn.Sequential(*[Block() for _ in range(blocks)])
            self.pol = nn.Sequential(nn.Conv2d(c, 2, 1), nn.Flatten(), nn.Linear(2 * 42, 7))
            self.val = nn.Sequential(nn.Conv2d(c, 1, 1), nn.Flatten(), nn.Linear(42, 64), nn.ReLU(), nn.Linear(64, 1))

        def forward(self, x):
            h = self.tower(self.stem(x))
            return self.pol(h), torch.tanh(self.val(h)).squeeze(1)

    net = Net().to(dev).eval()
    if spec.get("threads_torch"):
        torch.set_num_threads(spec["threads_torch"])

    @torch.inference_mode()
    def infer(obs):
        x = torch.from_numpy(obs).to(dev, non_blocking=True).view(-1, 2, 6, 7)
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            logits, v = net(x)
        return logits.float().cpu().numpy(), v.float().cpu().numpy()

    infer(np.zeros((8, 84), np.float32))  # warm the net (cuDNN / allocator) outside the timing
    return infer


def worker(spec: dict) -> dict:
    t0 = time.perf_counter()
    try:
        infer = _net_callback(spec)
    except ImportError as e:
        return {"unavailable": f"ImportError: {e}"}
    except NotImplementedError as e:
        return {"unavailable": f"NotImplementedError: {e}"}
    import reinfors as rf

    kw = {"leaf_batch": spec["leaf_batch"]} if spec["leaf_batch"] != 1 else {}
    try:
        policy = rf.policies.AlphaZero(num_simulations=spec["sims"], **kw)
    except TypeError as e:  # 0.4.0: no leaf_batch
        return {"unavailable": f"TypeError: {e}"}
    eng = rf.Engine(
        rf.games.Connect4(),
        rf.Reward(win=1.0, loss=-1.0),
        policy,
        rf.learners.AlphaZero(gamma=1.0),
        n_games=spec["n_games"],
        batch_size=spec["batch_size"],
        n_threads=spec["n_threads"],
    )
    floor = spec["floor"]
    eng.collect(floor, infer)
    first_s = time.perf_counter() - t0
    records = rows = calls = 0
    infer_s = 0.0
    t1 = time.perf_counter()
    while time.perf_counter() - t1 < spec["seconds"]:
        b = eng.collect(floor, infer)
        records += len(b.obs)
        rows += b.telemetry["infer_rows"]
        calls += b.telemetry["infer_calls"]
        infer_s += b.telemetry["infer_seconds"]
    wall = time.perf_counter() - t1
    return {
        "records_per_s": records / wall,
        "rows_per_call": rows / max(calls, 1),
        "rows_per_s": rows / wall,
        "busy_fraction": infer_s / wall,
        "first_call_s": first_s,
        "records": records,
        "wall_s": wall,
    }


# -- driver ---------------------------------------------------------------------------------------


def run_point(python: str, spec: dict, isolate: bool, timeout: float) -> dict:
    cmd = [python, *(["-I"] if isolate else []), str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
    env = dict(os.environ)
    if not isolate:
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    try:
        cwd = "/" if isolate else ROOT
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt(r: dict) -> str:
    if "records_per_s" not in r:
        return f"unavailable: {r.get('unavailable') or r.get('error')}"
    return (
        f"{r['records_per_s']:>9.0f} rec/s {r['rows_per_call']:>8.1f} rows/call "
        f"{r['busy_fraction']:>6.0%} busy  first {r['first_call_s']:.1f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--net", choices=["resnet", "zero"], default="resnet")
    ap.add_argument("--blocks", type=int, default=6)
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--games", type=int, nargs="*", default=[64, 256, 1024])
    ap.add_argument("--batches", type=int, nargs="*", default=[0, 512, 2048])
    ap.add_argument("--leaf-batch", type=int, nargs="*", default=[1, 8, 32])
    ap.add_argument("--sims", type=int, default=64)
    ap.add_argument("--n-threads", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--floor", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds per point and build")
    ap.add_argument("--orig", default=str(ROOT / ".venv-orig" / "bin" / "python"))
    ap.add_argument("--no-orig", action="store_true", help="ours only")
    ap.add_argument("--quick", action="store_true", help="a tiny sweep (2 x 16 net, 8 games, 1 s)")
    ap.add_argument("--json", help="write every point's measurements here")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    if args.quick:
        args.blocks, args.channels, args.games, args.batches = 2, 16, [8], [0]
        args.leaf_batch, args.seconds, args.floor, args.sims = [1, 4], 1.0, 32, 16
    orig = None if args.no_orig or not Path(args.orig).exists() else args.orig
    points = []
    print(f"c4_az_resnet net={args.net} {args.blocks}x{args.channels} device={args.device} n_threads={args.n_threads}")
    for g in args.games:
        for bs in args.batches:
            for k in args.leaf_batch:
                spec = dict(
                    net=args.net, device=args.device, blocks=args.blocks, channels=args.channels, n_games=g,
                    batch_size=bs, leaf_batch=k, sims=args.sims, n_threads=args.n_threads, seconds=args.seconds,
                    floor=args.floor,
                )  # fmt: skip
                res = {"ours": [], "orig": []}
                for _ in range(args.reps):
                    res["ours"].append(run_point(sys.executable, spec, False, args.timeout))
                    if orig is not None and k == 1:
                        res["orig"].append(run_point(orig, spec, True, args.timeout))
                label = f"games={g} batch={bs or 'auto'} leaf_batch={k}"
                for build in ("ours", "orig"):
                    for r in res[build]:
                        print(f"{label:<36} {build:<5} {_fmt(r)}")
                pairs = [
                    a["records_per_s"] / b["records_per_s"]
                    for a, b in zip(res["ours"], res["orig"], strict=False)
                    if "records_per_s" in a and "records_per_s" in b
                ]
                if pairs:
                    print(f"{label:<36} ratio {statistics.median(pairs):.2f}x")
                points.append({"spec": spec, **res})
    if args.json:
        Path(args.json).write_text(json.dumps({"mode": "c4_az_resnet", "points": points}, indent=1))


if __name__ == "__main__":
    main()
