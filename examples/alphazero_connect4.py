"""AlphaZero self-play on Connect4 with a small numpy network, end to end.

    python examples/alphazero_connect4.py [--iterations 5] [--records 2048] [--sims 32]

Each iteration collects an ``AlphaZeroBatch`` (root visit distributions, discounted outcomes)
from 64 parallel games, takes a few gradient steps on the policy / value heads of a two-layer
MLP, and tells the engine the weights changed.  At the end the trained network plays one move
per position through ``PolicyHandle.choose`` on a few fresh boards.  Swap the numpy network for
your PyTorch / JAX model: the engine only needs ``infer(obs) -> (logits, values)``.
"""

from __future__ import annotations

import argparse

import numpy as np

import reinfors as rf


class Mlp:
    """obs (84) -> 128 relu -> (7 logits, tanh value); plain numpy, float32 forward."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int = 128, seed: int = 0):
        rs = np.random.default_rng(seed)
        self.w1 = (rs.standard_normal((obs_size, hidden)) / np.sqrt(obs_size)).astype(np.float32)
        self.w2 = (rs.standard_normal((hidden, n_actions + 1)) / np.sqrt(hidden)).astype(np.float32)
        self.n_actions = n_actions

    def __call__(self, obs):
        h = np.maximum(obs @ self.w1, 0.0)
        out = h @ self.w2
        return out[:, : self.n_actions], np.tanh(out[:, self.n_actions])

    def train_step(self, batch, lr: float = 0.05) -> tuple[float, float]:
        """One step of softmax cross-entropy to the visit targets (weighted) + value MSE."""
        x = batch.obs
        h = np.maximum(x @ self.w1, 0.0)
        out = h @ self.w2
        logits, v_raw = out[:, : self.n_actions], out[:, self.n_actions]
        z = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        w = batch.policy_weights[:, None].astype(np.float32)
        n = len(x)
        d_logits = w * (p - batch.policy_targets.astype(np.float32)) / n
        v = np.tanh(v_raw)
        d_v = (2.0 * (v - batch.value_targets.astype(np.float32)) * (1.0 - v * v) / n)[:, None]
        d_out = np.concatenate([d_logits, d_v], axis=1).astype(np.float32)
        d_h = (d_out @ self.w2.T) * (h > 0)
        self.w2 -= lr * (h.T @ d_out)
        self.w1 -= lr * (x.T @ d_h)
        ce = float(-(batch.policy_weights * (batch.policy_targets * np.log(p + 1e-9)).sum(axis=1)).mean())
        return ce, float(((v - batch.value_targets) ** 2).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--records", type=int, default=2048)
    ap.add_argument("--sims", type=int, default=32)
    ap.add_argument("--n-games", type=int, default=64)
    args = ap.parse_args()

    game = rf.games.Connect4()
    reward = rf.Reward(win=1.0, loss=-1.0)
    policy = rf.policies.AlphaZero(num_simulations=args.sims)
    net = Mlp(game._def.obs_size, game.action_space().n)
    engine = rf.Engine(game, reward, policy, rf.learners.AlphaZero(gamma=1.0), n_games=args.n_games, seed=1)
    for it in range(args.iterations):
        batch = engine.collect(args.records, net, progress=args.records >= 4096)
        for _ in range(4):
            ce, mse = net.train_step(batch)
        engine.weights_updated()  # the next collect searches with the new network
        t = batch.telemetry
        print(
            f"iteration {it}: {len(batch.obs)} records, {len(t['episodes'])} games, "
            f"{t['infer_calls']} calls x {t['infer_rows'] / max(t['infer_calls'], 1):.1f} rows, "
            f"policy CE {ce:.3f}, value MSE {mse:.3f}"
        )
    envs = [rf.Env(game, reward, seed=s) for s in range(4)]
    for k, env in enumerate(envs):
        for a in range(k):  # a few different openings
            env.step({env.active_agents()[0]: (3 + a) % 7})
    greedy = rf.policies.AlphaZero(num_simulations=args.sims, noise=None, temperature=0.0)
    print("trained network's moves on 4 boards:", greedy.choose(envs, net, gamma=1.0))


if __name__ == "__main__":
    main()
