"""Deep CFR on Kuhn poker: the solver traverses, this script owns the networks and the training.

    python examples/train_deep_cfr_kuhn.py [--iterations 100] [--traversals 1000]

Per CFR iteration ``t`` and traverser ``p``, ``DeepCfr.collect(p, traversals, infer)`` runs
external-sampling traversals that query one advantage network per player (regret matching on
its outputs gives the strategy) and returns advantage samples for ``p`` and strategy samples of
the other player, tagged with ``t``.  As in Brown et al. (2019) the advantage network of ``p``
is then retrained from scratch on all of ``p``'s advantage samples so far, with the loss of a
sample weighted by its iteration (linear CFR).  After the last iteration a strategy network is
fitted to every strategy sample (cross-entropy to the sampled strategy, weighted by iteration):
its softmax is the average strategy, and ``DeepCfr.exploitability`` scores it exactly over the
game tree.  Every ``--eval-every`` iterations the strategy network is fitted and scored too, so
the log shows the curve.  The last stdout line is JSON with ``exploitability``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # tiny matmuls: threads only cost here

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _nets import csr_mask, make_mlp  # noqa: E402

import reinfors as rf  # noqa: E402


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--traversals", type=int, default=1000, help="traversals per player per iteration")
    ap.add_argument("--adv-steps", type=int, default=200, help="gradient steps per advantage-network fit")
    ap.add_argument("--strategy-steps", type=int, default=2000, help="gradient steps per strategy-network fit")
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--eval-every", type=int, default=25)
    ap.add_argument("--backend", choices=("auto", "numpy", "torch"), default="auto")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


class Memory:
    """Growing arrays of (obs, iteration, legal mask, per-action target) samples."""

    def __init__(self, obs_size: int, n_actions: int):
        self.obs = np.zeros((0, obs_size), np.float32)
        self.t = np.zeros(0, np.float64)
        self.mask = np.zeros((0, n_actions), bool)
        self.target = np.zeros((0, n_actions), np.float64)
        self.n_actions = n_actions

    def add(self, obs, iterations, offsets, ids, values) -> None:
        mask = csr_mask(offsets, ids, self.n_actions)
        target = np.zeros(mask.shape)
        target[np.repeat(np.arange(len(obs)), np.diff(offsets)), ids] = values
        self.obs = np.concatenate([self.obs, obs])
        self.t = np.concatenate([self.t, iterations.astype(np.float64)])
        self.mask = np.concatenate([self.mask, mask])
        self.target = np.concatenate([self.target, target])

    def __len__(self) -> int:
        return len(self.obs)


def fit(sizes, mem: Memory, steps: int, args, seed: int, kind: str):
    """A fresh network fitted to ``mem``: iteration-weighted MSE (advantages) or cross-entropy (strategy)."""
    net = make_mlp(sizes, backend=args.backend, lr=args.lr, seed=seed)
    rs = np.random.default_rng(seed)
    if len(mem) == 0:
        return net
    for _ in range(steps):
        i = rs.integers(0, len(mem), args.batch)
        w = mem.t[i] / mem.t[i].mean()
        m, y = mem.mask[i], mem.target[i]

        if kind == "advantage":

            def loss_fn(out, w=w, m=m, y=y):
                err = (out.astype(np.float64) - y) * m
                return float((w[:, None] * err**2).mean()), 2.0 * w[:, None] * err / err.size

        else:

            def loss_fn(out, w=w, m=m, y=y):
                z = np.where(m, out.astype(np.float64), -np.inf)
                z -= z.max(axis=1, keepdims=True)
                logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
                p = np.exp(logp)
                ce = -(w * np.where(m, y * logp, 0.0).sum(axis=1)).mean()
                return float(ce), w[:, None] * (p * y.sum(axis=1, keepdims=True) - y) / len(out)

        net.train_step(mem.obs[i], loss_fn)
    return net


def softmax_policy(net):
    """``policy_infer`` for ``exploitability``: the strategy network's softmax (non-negative rows)."""

    def infer(obs: np.ndarray) -> np.ndarray:
        z = net(obs).astype(np.float64)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return infer


def main(argv=None) -> int:
    args = parse(argv)
    game = rf.games.KuhnPoker()
    solver = rf.solvers.DeepCfr(game, seed=args.seed)
    obs_size, n_actions = int(np.prod(game.observation_space().shape)), game.action_space().n
    n_players = 2
    sizes = [obs_size, args.hidden, args.hidden, n_actions]
    adv_nets = [make_mlp(sizes, backend=args.backend, lr=args.lr, seed=args.seed + p) for p in range(n_players)]
    adv_mem = [Memory(obs_size, n_actions) for _ in range(n_players)]
    strat_mem = Memory(obs_size, n_actions)
    t0 = time.perf_counter()
    curve: list[list[float]] = []
    samples = 0
    uniform = solver.exploitability(lambda obs: np.ones((len(obs), n_actions)))
    for it in range(1, args.iterations + 1):
        solver.next_iteration()
        for p in range(n_players):
            b = solver.collect(p, args.traversals, [adv_nets[q] for q in range(n_players)])
            adv_mem[p].add(b.advantage_obs, b.advantage_iterations, b.advantage_legal_offsets, b.advantage_legal_ids, b.advantage_targets)
            strat_mem.add(b.strategy_obs, b.strategy_iterations, b.strategy_legal_offsets, b.strategy_legal_ids, b.strategy_probs)
            samples += len(b.advantage_obs) + len(b.strategy_obs)
            adv_nets[p] = fit(sizes, adv_mem[p], args.adv_steps, args, seed=args.seed * 1000 + it * 2 + p, kind="advantage")
        if it % args.eval_every == 0 and it < args.iterations:
            strategy = fit(sizes, strat_mem, args.strategy_steps, args, seed=args.seed + 7, kind="strategy")
            curve.append([it, solver.exploitability(softmax_policy(strategy))])
            print(f"iteration {it}: exploitability {curve[-1][1]:.4f}", file=sys.stderr)
    strategy = fit(sizes, strat_mem, args.strategy_steps, args, seed=args.seed + 7, kind="strategy")
    expl = solver.exploitability(softmax_policy(strategy))
    curve.append([args.iterations, expl])
    print(
        f"exploitability (NashConv / players; 0 is a Nash equilibrium): uniform policy {uniform:.4f} "
        f"(the baseline) -> {expl:.4f} after {args.iterations} Deep CFR iterations"
    )
    print(
        json.dumps(
            {
                "exploitability": expl,
                "uniform_exploitability": uniform,
                "iterations": args.iterations,
                "traversals": args.traversals,
                "samples": samples,
                "advantage_samples": [len(m) for m in adv_mem],
                "strategy_samples": len(strat_mem),
                "seconds": round(time.perf_counter() - t0, 1),
                "curve": curve,
                "backend": strategy.backend,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
