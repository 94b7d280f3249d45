"""Distributed AlphaZero self-play on Connect4: Ray collector actors feeding one learner.

    pip install 'reinfors[ray]'
    python examples/ray_self_play.py [--actors 2] [--iterations 6] [--records 256] [--sims 16]
    python examples/ray_self_play.py --iterations 6 --checkpoint run.ckpt --checkpoint-at 3 --stop-at-checkpoint
    python examples/ray_self_play.py --iterations 6 --resume run.ckpt     # iterations 3, 4, 5

``reinfors.distributed.Collectors`` starts ``--actors`` Ray actors on a local cluster; each
builds its own Engine from the resolved config (only JSON crosses the wire) and collects
``AlphaZeroBatch``es with the weights it was last sent.  This process is the learner: it takes
batches as they finish (from any actor), trains a small numpy policy-value network on each and
publishes the new weights (one ``ray.put``; the actors get the object reference).  Each record's
``weights_generations`` is the learner version its decision was inferred under, so the policy
lag is ``learner version - stamp``.  The last stdout line is one JSON object (``records``,
``actors``, ``iterations``, lag, records per second, per-actor records, and one digest per
iteration of the batch the learner trained on).

Batches arrive round-robin (``Collectors(ordered=True)``), so the learner's sequence of batches is
a function of the seed, not of timing: a killed actor is restarted from its last snapshot and the
run goes on unchanged, and ``--checkpoint`` / ``--resume`` continue a run exactly —
``--checkpoint PATH --checkpoint-at K`` saves the network and ``Collectors.snapshot()`` (every
actor's engine, the windows in flight, the version counter) after iteration K; ``--resume PATH``
restores both and runs iterations K+1 … ``--iterations``, receiving the batches the uninterrupted
run received (the digests match).  The checkpoint is a pickle: load only your own files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import time

import numpy as np

import reinfors as rf


def make_infer(weights):
    """The engine callback from the learner's weights (runs in the actors): obs (84) -> 64 relu
    -> (7 logits, tanh value)."""
    w1, w2 = np.asarray(weights["w1"]), np.asarray(weights["w2"])
    n_actions = w2.shape[1] - 1

    def infer(obs):
        out = np.maximum(obs @ w1, 0.0) @ w2
        return out[:, :n_actions], np.tanh(out[:, n_actions])

    return infer


class Net:
    """The learner's copy: the same network plus one plain-numpy gradient step."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int = 64, seed: int = 0):
        rs = np.random.default_rng(seed)
        self.w1 = (rs.standard_normal((obs_size, hidden)) / np.sqrt(obs_size)).astype(np.float32)
        self.w2 = (rs.standard_normal((hidden, n_actions + 1)) / np.sqrt(hidden)).astype(np.float32)
        self.n_actions = n_actions

    def weights(self) -> dict:
        return {"w1": self.w1.copy(), "w2": self.w2.copy()}

    def load(self, weights: dict) -> None:
        self.w1, self.w2 = np.array(weights["w1"], np.float32), np.array(weights["w2"], np.float32)

    def train_step(self, batch: rf.AlphaZeroBatch, lr: float = 0.05) -> float:
        """Softmax cross-entropy to the visit targets (policy-weighted) + value MSE; returns the loss."""
        x = batch.obs
        h = np.maximum(x @ self.w1, 0.0)
        out = h @ self.w2
        logits, v_raw = out[:, : self.n_actions], out[:, self.n_actions]
        z = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        w = batch.policy_weights[:, None].astype(np.float32)
        n = max(len(x), 1)
        v = np.tanh(v_raw)
        d_out = np.concatenate(
            [w * (p - batch.policy_targets) / n, (2.0 * (v - batch.value_targets) * (1.0 - v * v) / n)[:, None]], axis=1
        ).astype(np.float32)
        d_h = (d_out @ self.w2.T) * (h > 0)
        self.w2 -= lr * (h.T @ d_out)
        self.w1 -= lr * (x.T @ d_h)
        ce = -(batch.policy_weights * (batch.policy_targets * np.log(p + 1e-9)).sum(axis=1)).mean()
        return float(ce + ((v - batch.value_targets) ** 2).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--actors", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=6, help="learner updates (one received batch each)")
    ap.add_argument("--records", type=int, default=256, help="record floor of every actor's collect")
    ap.add_argument("--sims", type=int, default=16)
    ap.add_argument("--n-games", type=int, default=16, help="parallel games per actor")
    ap.add_argument("--num-cpus", type=int, default=0, help="local Ray cluster CPUs (0: one per actor)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--checkpoint", default=None, help="save the learner + collectors here (with --checkpoint-at)")
    ap.add_argument("--checkpoint-at", type=int, default=0, help="save after this many iterations")
    ap.add_argument("--stop-at-checkpoint", action="store_true", help="end the run once the checkpoint is saved")
    ap.add_argument("--resume", default=None, help="continue from a --checkpoint file")
    args = ap.parse_args()
    try:
        import ray
    except ImportError:
        print("ray_self_play.py needs Ray (pip install 'reinfors[ray]'); nothing to run.")
        print(json.dumps({"records": 0, "actors": 0, "skipped": "ray not installed"}))
        return
    from reinfors.distributed import Collectors

    engine = rf.Engine(
        rf.games.Connect4(),
        rf.Reward(win=1.0, loss=-1.0),
        rf.policies.AlphaZero(num_simulations=args.sims),
        rf.learners.AlphaZero(),
        n_games=args.n_games,
        seed=args.seed,
        n_threads=1,  # one core per actor
    )
    config = engine.resolved_config()  # a JSON-compatible dict: all an actor needs
    game = rf.games.Connect4()
    net = Net(int(np.prod(game.observation_space().shape)), game.action_space().n, seed=args.seed)

    ckpt, start = None, 0
    if args.resume:
        with open(args.resume, "rb") as f:
            ckpt = pickle.load(f)
        net.load(ckpt["net"])
        start = ckpt["iteration"]
    ray.init(num_cpus=args.num_cpus or args.actors, include_dashboard=False, log_to_driver=False)
    t0 = time.perf_counter()
    records, lags, digests = 0, [], []
    per_actor = [0] * args.actors
    try:
        with Collectors(config, make_infer, n_actors=args.actors, collect_size=args.records, ordered=True) as col:
            if ckpt is not None:
                col.restore(ckpt["collectors"])  # version counter and current weights included
            else:
                col.set_weights(net.weights())
            for it, (actor_id, version, batch) in zip(range(start, args.iterations), col, strict=False):
                lag = col.version - batch.weights_generations  # learner updates behind, per record
                loss = net.train_step(batch)
                col.set_weights(net.weights())
                records += len(batch.obs)
                per_actor[actor_id] += len(batch.obs)
                lags.append(lag)
                digest = hashlib.sha256(batch.obs.tobytes() + batch.policy_targets.tobytes()).hexdigest()[:16]
                digests.append(f"{actor_id}:{version}:{digest}")
                # the baseline on the same batch: a uniform policy and a zero value
                uniform = float(batch.policy_weights.mean() * np.log(net.n_actions) + (batch.value_targets**2).mean())
                print(
                    f"iteration {it}: actor {actor_id} version {version} records {len(batch.obs)} "
                    f"loss {loss:.4f} (uniform policy + zero value: {uniform:.4f}) lag mean {lag.mean():.2f} max {lag.max()}",
                    flush=True,
                )
                if args.checkpoint and it + 1 == args.checkpoint_at:
                    state = {"iteration": it + 1, "net": net.weights(), "collectors": col.snapshot()}
                    with open(args.checkpoint, "wb") as f:
                        pickle.dump(state, f)
                    print(f"checkpoint after iteration {it} saved to {args.checkpoint}", flush=True)
                    if args.stop_at_checkpoint:
                        break
    finally:
        ray.shutdown()
    seconds = time.perf_counter() - t0
    all_lag = np.concatenate(lags) if lags else np.zeros(0, np.int64)
    print(
        json.dumps(
            {
                "records": records,
                "actors": args.actors,
                "iterations": len(lags),
                "records_per_actor": per_actor,
                "lag_mean": round(float(all_lag.mean()), 3) if len(all_lag) else 0.0,
                "lag_max": int(all_lag.max()) if len(all_lag) else 0,
                "seconds": round(seconds, 2),
                "records_per_second": round(records / seconds, 1) if seconds > 0 else 0.0,
                "first_iteration": start,
                "digests": digests,
            }
        )
    )


if __name__ == "__main__":
    main()
