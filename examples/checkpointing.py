"""Checkpoint a streaming run without losing records, then resume it in a new engine.

    python examples/checkpointing.py [--updates 2] [--records 64] [--out DIR]

1. stream a few batches and train on them;
2. ``stream.pause()``: no new window starts, the in-flight one finishes with real inference, and
   every batch not yet consumed comes back — the engine's state follows exactly from the batches
   received, so nothing is lost or collected twice;
3. persist those batches (``np.savez``), the network, and ``engine.snapshot(policy_version=...)``
   serialised with ``to_bytes()``;
4. build a new engine of the same composition, ``restore`` the snapshot (checking the policy
   version), and resume with a new stream.  Its first batch equals what the paused engine
   collects next: the continuation is record-exact.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import reinfors as rf

FIELDS = ("obs", "players", "targets", "masks")  # TreeStrapBatch arrays (telemetry is a dict)


@dataclass
class Args:
    updates: int = 2  # batches consumed before the checkpoint
    records: int = 64  # collect_size of the streams
    n_games: int = 8
    sims: int = 16  # Mcts simulations per move
    seed: int = 0
    out: str = ""  # checkpoint directory (default: a temporary one)


def parse() -> Args:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in vars(Args()).items():
        ap.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    return Args(**vars(ap.parse_args()))


def make_engine(args: Args) -> rf.Engine:
    """The composition both engines share (a snapshot restores only into the same one)."""
    return rf.Engine(
        rf.games.Connect4(),
        rf.Reward(win=1.0, loss=-1.0),
        rf.policies.Mcts(num_simulations=args.sims),
        rf.learners.TreeStrap(),
        n_games=args.n_games,
        seed=args.seed,
    )


class LinearQ:
    """Q(obs) = obs @ w: float32 ``(rows, 84)`` -> ``(rows, 1, 7)``; a stand-in for your network.

    The product is computed row by row on purpose.  A BLAS matmul may round a row differently
    depending on how many rows share the call, and with ``n_threads > 1`` how many leaves reach
    one callback call depends on thread timing; the engine's record-exactness holds for a callback
    whose answer for a row depends only on that row (so does a network in eval mode on a GPU with
    deterministic kernels, or one computed in float64)."""

    def __init__(self, w: np.ndarray):
        self.w = w

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        w = self.w  # one read: the training thread may rebind it meanwhile
        return (obs[:, :, None] * w[None]).sum(axis=1, dtype=np.float32)[:, None, :]

    def train_step(self, batch: rf.TreeStrapBatch, lr: float = 0.01) -> None:
        """One masked least-squares step.  Rebinds ``w`` (one atomic store) instead of updating it
        in place, so the stream's callback sees the old or the new weights, never a mix."""
        err = (batch.obs @ self.w - batch.targets[:, 0].astype(np.float32)) * batch.masks[:, :1]
        self.w = self.w - lr * (batch.obs.T @ err) / max(len(batch.obs), 1)


def save_batches(path: Path, batches: list) -> None:
    np.savez(path, **{f"b{i}_{f}": getattr(b, f) for i, b in enumerate(batches) for f in FIELDS})


def main() -> None:
    args = parse()
    out = Path(args.out or tempfile.mkdtemp(prefix="reinfors-ckpt-"))
    out.mkdir(parents=True, exist_ok=True)
    engine = make_engine(args)
    net = LinearQ((np.random.default_rng(args.seed).standard_normal((84, 7)) * 0.01).astype(np.float32))
    version = 0

    # 1-2. stream, train, then pause at a lossless barrier
    received = []
    stream = engine.collect_stream(collect_size=args.records, infer=net, depth=1)
    try:
        for _ in range(args.updates):
            batch = next(stream)
            received.append(batch)
            net.train_step(batch)
            version += 1
        remaining = stream.pause()  # returns the engine; a second pause() is an error
    finally:
        stream.stop()  # a no-op after pause(); returns the engine if training raised
    received += remaining
    print(f"paused after {args.updates} updates: {len(remaining)} batch(es) returned by pause()")

    # 3. persist: untrained batches, network, engine snapshot
    save_batches(out / "replay.npz", remaining)
    np.save(out / "net.npy", net.w)
    snap = engine.snapshot(policy_version=f"v{version}")
    (out / "engine.snap").write_bytes(snap.to_bytes())
    print(f"saved {sum(len(b.obs) for b in remaining)} replay records, net v{version} and snapshot to {out}")

    # 4. a new process would start here: rebuild, restore, resume
    replay = np.load(out / "replay.npz")
    print(f"replay holds {sum(k.endswith('_obs') for k in replay.files)} batch(es)")
    resumed_net = LinearQ(np.load(out / "net.npy"))
    resumed = make_engine(args)
    restored = rf.EngineSnapshot.from_bytes((out / "engine.snap").read_bytes())
    resumed.restore(restored, expect_policy_version=f"v{version}")  # ValueError on a mismatch
    with resumed.collect_stream(collect_size=args.records, infer=resumed_net, depth=1) as stream:
        first = next(stream)
    # The paused engine continues from the same state, so its next batch is the same batch.
    reference = engine.collect(args.records, net)
    same = all(np.array_equal(getattr(first, f), getattr(reference, f)) for f in FIELDS)
    print(f"resumed: first batch {len(first.obs)} records; identical to the uninterrupted run: {same}")


if __name__ == "__main__":
    main()
