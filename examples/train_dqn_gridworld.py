"""Train a bootstrapped-ensemble DQN on GridWorld until it walks shortest paths.

    python examples/train_dqn_gridworld.py [--size 5] [--updates 400] [--heads 4] [--n-step 3]

The engine plays ``--n-games`` GridWorlds with ``EpsilonGreedyQ(n_heads=K)`` (each episode acts
greedily on one ensemble head, epsilon-greedy) and the ``Dqn`` learner turns the play into
n-step transitions with per-head bootstrap masks (``bootstrap_p``).  Each head is trained only on
the rows its mask admits, towards ``rewards + discounts * Q_target(next_obs)`` (double DQN: the
online network picks the successor action among ``next_legal_ids``, the target network scores
it).  Three networks: the learner, the collector copy the engine acts with (synced after every
update, with ``engine.weights_updated()``) and the target copy (synced every
``--target-every`` updates).

Evaluation: from ``--eval-episodes`` seeded ``Env`` starts, the greedy policy of the head-mean
Q values walks until the goal (or a step cap).  The optimal return of each start is computed
from the grid — the breadth-first shortest path from the start cell to the goal under the
game's moves, ``(d - 1) * step + goal`` with the ``Reward``'s values — and averaged over the
same starts.  The same evaluation of the untrained network (before the first update) is the
baseline.  The second-last stdout line puts baseline, result and optimum side by side; the last
is JSON with ``mean_return``, ``untrained_mean_return`` and ``optimal_return``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import deque
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # small matmuls: threaded BLAS only fights the engine for the cores

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _nets import csr_mask, make_mlp  # noqa: E402

import reinfors as rf  # noqa: E402

MOVES = ((-1, 0), (1, 0), (0, -1), (0, 1))  # action 0 up, 1 down, 2 left, 3 right (rf.games.GridWorld)


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=5)
    ap.add_argument("--step-reward", type=float, default=-0.1)
    ap.add_argument("--goal-reward", type=float, default=1.0)
    ap.add_argument("--max-ticks", type=int, default=100, help="engine truncation horizon")
    ap.add_argument("--updates", type=int, default=400, help="collect + train rounds")
    ap.add_argument("--records", type=int, default=256, help="records per collect")
    ap.add_argument("--n-games", type=int, default=32)
    ap.add_argument("--heads", type=int, default=4, help="ensemble heads")
    ap.add_argument("--bootstrap-p", type=float, default=0.5)
    ap.add_argument("--n-step", type=int, default=3)
    ap.add_argument("--gamma", type=float, default=0.95)
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--replay", type=int, default=50_000)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=4, help="gradient steps per update")
    ap.add_argument("--target-every", type=int, default=10)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--eval-episodes", type=int, default=200)
    ap.add_argument("--backend", choices=("auto", "numpy", "torch"), default="auto")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


def shortest_path(size: int, start: tuple[int, int], goal: tuple[int, int]) -> int:
    """Breadth-first distance in moves from ``start`` to ``goal`` (moves off the grid stay put)."""
    dist = {start: 0}
    todo = deque([start])
    while todo:
        cell = todo.popleft()
        if cell == goal:
            return dist[cell]
        for dr, dc in MOVES:
            nxt = (min(max(cell[0] + dr, 0), size - 1), min(max(cell[1] + dc, 0), size - 1))
            if nxt not in dist:
                dist[nxt] = dist[cell] + 1
                todo.append(nxt)
    raise ValueError(f"goal {goal} unreachable from {start}")


class Transitions:
    """A ring of DQN rows: obs, action, n-step reward, discount, next obs, next-legal mask, head mask."""

    def __init__(self, capacity: int, obs_size: int, n_actions: int, heads: int):
        self.obs = np.zeros((capacity, obs_size), np.float32)
        self.next_obs = np.zeros((capacity, obs_size), np.float32)
        self.actions = np.zeros(capacity, np.int64)
        self.rewards = np.zeros(capacity, np.float64)
        self.discounts = np.zeros(capacity, np.float64)
        self.next_legal = np.zeros((capacity, n_actions), bool)
        self.masks = np.zeros((capacity, heads), np.float32)
        self.capacity, self.size, self.head = capacity, 0, 0

    def add(self, b: rf.DqnBatch, n_actions: int) -> None:
        idx = (self.head + np.arange(len(b.obs))) % self.capacity
        self.obs[idx], self.next_obs[idx], self.actions[idx] = b.obs, b.next_obs, b.actions
        self.rewards[idx], self.discounts[idx], self.masks[idx] = b.rewards, b.discounts, b.masks
        self.next_legal[idx] = csr_mask(b.next_legal_offsets, b.next_legal_ids, n_actions)
        self.head = int((self.head + len(b.obs)) % self.capacity)
        self.size = min(self.capacity, self.size + len(b.obs))

    def sample(self, rs: np.random.Generator, n: int) -> np.ndarray:
        return rs.integers(0, self.size, n)


def main(argv=None) -> int:
    args = parse(argv)
    rs = np.random.default_rng(args.seed)
    game = rf.games.GridWorld(size=args.size, max_ticks=args.max_ticks)
    reward = rf.Reward(step=args.step_reward, goal=args.goal_reward)
    obs_size, n_actions, K = int(np.prod(game.observation_space().shape)), game.action_space().n, args.heads
    engine = rf.Engine(
        game,
        reward,
        rf.policies.EpsilonGreedyQ(n_heads=K, epsilon=args.epsilon),
        rf.learners.Dqn(bootstrap_p=args.bootstrap_p, n_step=args.n_step, gamma=args.gamma),
        n_games=args.n_games,
        seed=args.seed,
    )
    learner = make_mlp([obs_size, args.hidden, args.hidden, K * n_actions], backend=args.backend, lr=args.lr, seed=args.seed)
    collector, target = learner.copy(), learner.copy()

    def q_infer(obs: np.ndarray) -> np.ndarray:
        """float32 (rows, obs) -> Q values (rows, heads, actions)."""
        return collector(obs).reshape(len(obs), K, n_actions)

    # greedy evaluation on the head-mean Q values, against the computed optimum of the same starts
    goal = (args.size - 1, args.size - 1)
    cap = 4 * args.size * args.size

    def evaluate() -> tuple[list[float], list[float]]:
        """``(returns of the greedy policy, optimal returns)`` from the seeded evaluation starts."""
        returns, optimal = [], []
        for s in range(args.eval_episodes):
            env = rf.Env(game, reward, seed=10_000 + s)
            start = tuple(env.state()["pos"])
            optimal.append((shortest_path(args.size, start, goal) - 1) * args.step_reward + args.goal_reward)
            total = 0.0
            for _ in range(cap):
                if env.done():
                    break
                q = learner(env.observe(0).reshape(1, -1)).reshape(K, n_actions).mean(axis=0)
                legal = env.legal_actions(0)
                env.step({0: int(legal[int(np.argmax(q[legal]))])})
                total += env.rewards[0]
            returns.append(total)
        return returns, optimal

    untrained, _ = evaluate()  # the baseline: the same greedy walk with the initial weights
    buf = Transitions(args.replay, obs_size, n_actions, K)
    t0 = time.perf_counter()
    records = 0
    losses: list[float] = []
    train_returns: list[float] = []
    for update in range(args.updates):
        batch = engine.collect(args.records, q_infer)
        records += len(batch.obs)
        buf.add(batch, n_actions)
        train_returns += [float(e[0][0]) for e in batch.telemetry["episodes"]]
        for _ in range(args.steps):
            idx = buf.sample(rs, args.batch)
            nxt_online = learner(buf.next_obs[idx]).reshape(-1, K, n_actions)
            nxt_target = target(buf.next_obs[idx]).reshape(-1, K, n_actions)
            legal = buf.next_legal[idx][:, None, :]
            pick = np.where(legal, nxt_online, -np.inf).argmax(axis=2)  # (B, K) double DQN
            boot = np.take_along_axis(nxt_target, pick[..., None], axis=2)[..., 0]
            disc = buf.discounts[idx][:, None]
            y = buf.rewards[idx][:, None] + np.where(disc > 0, disc * boot, 0.0)  # (B, K)
            a, m = buf.actions[idx], buf.masks[idx].astype(np.float64)

            def loss_fn(out, a=a, m=m, y=y):
                q = out.reshape(-1, K, n_actions).astype(np.float64)
                qa = np.take_along_axis(q, a[:, None, None].repeat(K, axis=1), axis=2)[..., 0]
                err = (qa - y) * m
                d = np.zeros_like(q)
                np.put_along_axis(d, a[:, None, None].repeat(K, axis=1), (2.0 * err / max(m.sum(), 1.0))[..., None], axis=2)
                return float((err**2).sum() / max(m.sum(), 1.0)), d.reshape(len(out), -1)

            losses.append(learner.train_step(buf.obs[idx], loss_fn))
        collector.load_from(learner)
        engine.weights_updated()
        if (update + 1) % args.target_every == 0:
            target.load_from(learner)
    train_seconds = time.perf_counter() - t0
    returns, optimal = evaluate()
    tail = train_returns[-200:]
    print(
        f"mean return over {args.eval_episodes} starts: untrained network {np.mean(untrained):.3f} (the baseline) "
        f"-> {np.mean(returns):.3f} after {args.updates} updates; optimal {np.mean(optimal):.3f}"
    )
    print(
        json.dumps(
            {
                "mean_return": float(np.mean(returns)),
                "untrained_mean_return": float(np.mean(untrained)),
                "optimal_return": float(np.mean(optimal)),
                "optimal_fraction": float(np.mean(np.isclose(returns, optimal))),
                "eval_episodes": args.eval_episodes,
                "train_mean_return_last_200": float(np.mean(tail)) if tail else None,
                "updates": args.updates,
                "records": records,
                "final_loss": float(np.mean(losses[-20:])),
                "seconds": round(train_seconds, 1),
                "backend": learner.backend,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
