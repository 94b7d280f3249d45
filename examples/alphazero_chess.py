"""AlphaZero self-play on chess with a small numpy network (a short run; scale the knobs up).

    python examples/alphazero_chess.py [--iterations 2] [--records 64] [--sims 8] [--n-games 4]

Each iteration collects an ``AlphaZeroBatch`` from parallel self-play games (root visit
distributions over the 4672 AlphaZero 8x8x73 actions, realised outcomes), takes a few gradient
steps on a one-hidden-layer MLP's policy and value heads, and tells the engine the weights
changed.  Each iteration's policy cross-entropy (a softmax over all 4672 actions) is printed next
to its reference points: a uniform guess over all actions, ``ln 4672 = 8.449`` (the untrained
network's level), a uniform guess over the legal moves (what learning the move rules alone
reaches) and the targets' own entropy (the floor no network goes below).  At the end the network's preferred opening move is
printed in UCI through ``rf.chess_action_uci``, beside the untrained network's choice.
``max_ticks`` keeps the self-play games short here: a demonstration, not a training run.
"""

from __future__ import annotations

import argparse

import numpy as np

import reinfors as rf


class Mlp:
    """obs (19*8*8) -> hidden relu -> (4672 logits, tanh value); float32 numpy."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int = 64, seed: int = 0):
        rs = np.random.default_rng(seed)
        self.w1 = (rs.standard_normal((obs_size, hidden)) / np.sqrt(obs_size)).astype(np.float32)
        self.w2 = (rs.standard_normal((hidden, n_actions + 1)) / np.sqrt(hidden) * 0.1).astype(np.float32)
        self.n_actions = n_actions

    def __call__(self, obs):
        out = np.maximum(obs @ self.w1, 0.0) @ self.w2
        return out[:, : self.n_actions], np.tanh(out[:, self.n_actions])

    def train_step(self, batch, lr: float = 0.05) -> tuple[float, float]:
        """Softmax cross-entropy to the visit targets (mover rows) plus value MSE."""
        x = batch.obs
        h = np.maximum(x @ self.w1, 0.0)
        out = h @ self.w2
        logits, v = out[:, : self.n_actions], np.tanh(out[:, self.n_actions])
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        p = z / z.sum(axis=1, keepdims=True)
        n = len(x)
        w = batch.policy_weights[:, None].astype(np.float32)
        d_logits = w * (p - batch.policy_targets.astype(np.float32)) / n
        d_v = (2.0 * (v - batch.value_targets.astype(np.float32)) * (1.0 - v * v) / n)[:, None]
        d_out = np.concatenate([d_logits, d_v], axis=1).astype(np.float32)
        d_h = (d_out @ self.w2.T) * (h > 0)
        self.w2 -= lr * (h.T @ d_out)
        self.w1 -= lr * (x.T @ d_h)
        ce = float(-(batch.policy_weights * (batch.policy_targets * np.log(p + 1e-9)).sum(axis=1)).mean())
        return ce, float(((v - batch.value_targets) ** 2).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--records", type=int, default=64)
    ap.add_argument("--sims", type=int, default=8)
    ap.add_argument("--n-games", type=int, default=4)
    ap.add_argument("--max-ticks", type=int, default=40)
    args = ap.parse_args()

    game = rf.games.Chess(max_ticks=args.max_ticks)
    net = Mlp(int(np.prod(game.observation_space().shape)), game.action_space().n)
    engine = rf.Engine(
        game,
        rf.Reward(),
        rf.policies.AlphaZero(num_simulations=args.sims),
        rf.learners.AlphaZero(gamma=1.0),
        n_games=args.n_games,
        n_threads=1,
        seed=1,
    )
    env = rf.Env(game, rf.Reward())
    legal = env.legal_actions(0)

    def opening_move() -> tuple[str, float]:
        logits, value = net(env.observe(0).reshape(1, -1))
        best = legal[int(np.argmax(logits[0, legal]))]
        return rf.chess_action_uci(best, env.state()["fen"]), float(value[0])

    untrained_move = opening_move()
    for it in range(args.iterations):
        batch = engine.collect(args.records, net)
        for _ in range(3):
            ce, mse = net.train_step(batch)
        engine.weights_updated()
        t = batch.telemetry
        w = batch.policy_weights
        n_legal = np.diff(batch.legal_offsets)
        pi = batch.policy_targets
        uniform_ce = float((w * np.log(np.maximum(n_legal, 1))).mean())
        untrained_ce = float((w * np.log(game.action_space().n)).mean())
        floor = float((w * -(pi * np.log(np.where(pi > 0, pi, 1.0))).sum(axis=1)).mean())
        print(
            f"iteration {it}: {len(batch.obs)} records, {len(t['episodes'])} finished games, "
            f"{n_legal.mean():.1f} legal moves per record, policy CE {ce:.3f} "
            f"(uniform over all actions {untrained_ce:.3f}, over the legal moves {uniform_ce:.3f}, "
            f"the targets' entropy {floor:.3f}), value MSE {mse:.3f}"
        )
    move, value = opening_move()
    print(
        f"network's opening move: {move} (value {value:+.3f}); untrained: {untrained_move[0]} "
        f"(value {untrained_move[1]:+.3f})"
    )


if __name__ == "__main__":
    main()
