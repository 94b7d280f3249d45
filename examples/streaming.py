"""Streaming: overlap background collection with Python-side training.

    python examples/streaming.py [--updates 3] [--records 64] [--depth 1]

Connect4, Mcts(16) + TreeStrap, 8 parallel games.  ``engine.collect_stream`` runs collect windows
on its own thread (the search kernels release the GIL) into a queue of at most ``depth`` finished
batches, while this thread trains on the batch it just took.  A numpy linear Q model stands in
for your network, in the two-network form: the stream's callback reads a *collector* copy that
is refreshed from the learner only between batches, under a lock.  The ``with`` block stops the
stream and gives the engine back, also if training raises.

Policy lag: every record carries ``weights_generations``, the weights generation its decision was
inferred under (a search: its last inference).  The engine's generation when a batch is received
minus those stamps is how many updates behind each record is; the example prints its mean and max
per batch and overall.
"""

from __future__ import annotations

import argparse
import threading
import time
from dataclasses import dataclass

import numpy as np

import reinfors as rf


@dataclass
class Args:
    updates: int = 3  # training updates (one finished batch each)
    records: int = 64  # collect_size: record floor of every streamed batch
    depth: int = 1  # finished batches allowed to wait for the trainer
    n_games: int = 8  # parallel episode slots
    sims: int = 16  # Mcts simulations per move
    seed: int = 0


def parse() -> Args:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in vars(Args()).items():
        ap.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    return Args(**vars(ap.parse_args()))


class LinearQ:
    """Q(obs) = obs @ w: float32 ``(rows, obs_size)`` -> ``(rows, 1 head, n_actions)``."""

    def __init__(self, obs_size: int, n_actions: int, seed: int = 0):
        rs = np.random.default_rng(seed)
        self.w = (rs.standard_normal((obs_size, n_actions)) * 0.01).astype(np.float32)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return (obs @ self.w)[:, None, :]

    def train_step(self, batch: rf.TreeStrapBatch, lr: float = 0.01) -> float:
        """Placeholder optimisation: one masked least-squares step towards the searched targets
        (``targets: (M, 1, A)``, ``masks: (M, 1)``); returns the loss before the step."""
        x = batch.obs
        err = (x @ self.w - batch.targets[:, 0].astype(np.float32)) * batch.masks[:, :1]
        self.w -= lr * (x.T @ err) / max(len(x), 1)
        return float((err**2).mean())


def main() -> None:
    args = parse()
    game = rf.games.Connect4()
    engine = rf.Engine(
        game,
        rf.Reward(win=1.0, loss=-1.0),
        rf.policies.Mcts(num_simulations=args.sims),
        rf.learners.TreeStrap(),
        n_games=args.n_games,
        seed=args.seed,
    )
    obs_size, n_actions = int(np.prod(game.observation_space().shape)), game.action_space().n
    learner = LinearQ(obs_size, n_actions, args.seed)
    collector = LinearQ(obs_size, n_actions, args.seed)
    weights_lock = threading.Lock()

    def infer(obs: np.ndarray) -> np.ndarray:  # runs on the stream's thread
        with weights_lock:
            return collector(obs)

    t0 = time.perf_counter()
    total = 0
    generation = 0  # this thread is the only caller of weights_updated: the engine's generation
    lags = []
    with engine.collect_stream(collect_size=args.records, infer=infer, depth=args.depth) as stream:
        for update in range(args.updates):
            batch = next(stream)  # blocks (without the GIL) until a batch is ready
            lag = generation - batch.weights_generations  # updates behind, per record
            lags.append(lag)
            loss = learner.train_step(batch)  # the stream collects the next batch meanwhile
            with weights_lock:
                collector.w[...] = learner.w
                engine.weights_updated()  # stamps later decisions; keeps a future infer_cache coherent
                generation += 1
            total += len(batch.obs)
            print(
                f"update={update} records={len(batch.obs)} queued={stream.pending()} loss={loss:.4f} "
                f"lag mean={lag.mean():.2f} max={lag.max()}"
            )
    all_lag = np.concatenate(lags) if lags else np.zeros(0, np.int64)
    if len(all_lag):
        print(f"policy lag over {len(all_lag)} records: mean={all_lag.mean():.2f} max={all_lag.max()}")
    # Leaving the block stopped the stream (queued batches discarded): the engine is free again.
    print(f"{total} records in {time.perf_counter() - t0:.2f}s; engine free: {len(engine.collect(8, infer).obs)} more")


if __name__ == "__main__":
    main()
