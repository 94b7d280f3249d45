"""Train PPO on Connect4 against a uniformly random player (or by self-play), and measure it.

    python examples/train_ppo_connect4.py [--updates 200] [--records 2048] [--opponent random]

With ``--opponent random`` two engines play ``--n-games`` Connect4 games each with
``rf.policies.Ppo()`` and per-player callbacks: the network on one seat, all-zero logits (a
uniformly random legal move) on the other, ``learn_players`` set to the network's seat, so the
network learns both seats.  With ``--opponent self`` one engine plays the network against itself
and learns from both seats.  The ``Ppo`` learner returns ``PpoBatch`` rows with the behaviour
log-probabilities, GAE(lambda) advantages and returns.  Each update runs ``--epochs`` passes of
clipped-surrogate PPO (value loss, entropy bonus, advantages normalised per minibatch) over each
batch, then ``engine.weights_updated()``.

Evaluation uses ``rf.Arena``: ``--eval-games`` games (seats alternating) of the trained policy
(``Ppo`` sampling from the network) against ``Ppo`` on all-zero logits, i.e. a uniformly random
legal move.  Run before training too, so the log shows the gain: the untrained network (near
uniform logits) is the baseline, and it already wins about half of its games against the random
player (about 0.5; Connect4's first mover has an edge, and seats alternate).  The second-last
stdout line puts the baseline next to the result; the last is JSON with ``win_rate_vs_random``
and ``untrained_win_rate_vs_random``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # small matmuls: threaded BLAS only fights the engine for the cores

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _nets import csr_mask, make_mlp  # noqa: E402

import reinfors as rf  # noqa: E402

A = 7


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--updates", type=int, default=200)
    ap.add_argument("--opponent", choices=("random", "self"), default="random")
    ap.add_argument("--records", type=int, default=2048, help="records per collect")
    ap.add_argument("--n-games", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--clip", type=float, default=0.2)
    ap.add_argument("--value-coef", type=float, default=0.5)
    ap.add_argument("--entropy-coef", type=float, default=0.01)
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--lam", type=float, default=0.95)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--eval-games", type=int, default=200)
    ap.add_argument("--eval-every", type=int, default=50, help="updates between evaluations")
    ap.add_argument("--backend", choices=("auto", "numpy", "torch"), default="auto")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args(argv)


def heads(net):
    def infer(obs: np.ndarray):
        out = net(obs)
        return out[:, :A], out[:, A]

    return infer


def uniform(obs: np.ndarray):
    return np.zeros((len(obs), A), np.float32), np.zeros(len(obs), np.float32)


def ppo_loss(mask, actions, old_logp, adv, ret, args, stats):
    """Clipped surrogate + value MSE - entropy bonus, as a gradient on (logits | value)."""

    def loss_fn(out: np.ndarray):
        n = len(out)
        z = np.where(mask, out[:, :A].astype(np.float64), -np.inf)
        z -= z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        p = np.exp(logp)
        logp0 = np.where(mask, logp, 0.0)
        lp_a = logp[np.arange(n), actions]
        ratio = np.exp(lp_a - old_logp)
        clipped = np.clip(ratio, 1 - args.clip, 1 + args.clip)
        surr = np.minimum(ratio * adv, clipped * adv)
        active = ratio * adv <= clipped * adv  # the unclipped term is the minimum: it carries gradient
        ent = -(p * logp0).sum(axis=1)
        v = out[:, A].astype(np.float64)
        loss = -surr.mean() + args.value_coef * ((v - ret) ** 2).mean() - args.entropy_coef * ent.mean()
        d = np.zeros_like(out, dtype=np.float64)
        g = np.where(active, -ratio * adv, 0.0) / n  # d loss / d logp(a)
        onehot = np.zeros((n, A))
        onehot[np.arange(n), actions] = 1.0
        d[:, :A] = g[:, None] * (onehot - p)
        d[:, :A] += args.entropy_coef * p * (logp0 + ent[:, None]) / n  # - c * dH/dlogits
        d[:, A] = args.value_coef * 2.0 * (v - ret) / n
        stats.update(policy_loss=float(-surr.mean()), value_loss=float(((v - ret) ** 2).mean()), entropy=float(ent.mean()))
        stats["clip_fraction"] = float((~active).mean())
        return float(loss), d

    return loss_fn


def evaluate(game, reward, net, n_games: int, seed: int) -> dict:
    ours = (rf.policies.Ppo(), heads(net), 1.0)
    rnd = (rf.policies.Ppo(), uniform, 1.0)
    res = rf.Arena(game, reward, [ours, rnd], n_slots=min(100, n_games), seed=seed).play(n_games)
    wins = sum(g.payoffs[0] > 0 for g in res.games)
    draws = sum(g.payoffs[0] == 0 for g in res.games)
    return {"win_rate": wins / len(res.games), "wins": wins, "draws": draws, "losses": len(res.games) - wins - draws, "games": len(res.games)}


def main(argv=None) -> int:
    args = parse(argv)
    rs = np.random.default_rng(args.seed)
    game = rf.games.Connect4()
    reward = rf.Reward(win=1.0, loss=-1.0, draw=0.0)
    obs_size = int(np.prod(game.observation_space().shape))
    net = make_mlp([obs_size, args.hidden, args.hidden, A + 1], backend=args.backend, lr=args.lr, seed=args.seed)
    ppo, learner = rf.policies.Ppo(), rf.learners.Ppo(gamma=args.gamma, lam=args.lam)
    if args.opponent == "self":
        runs = [(rf.Engine(game, reward, ppo, learner, n_games=args.n_games, seed=args.seed), heads(net))]
    else:  # the network on seat `seat`, a random player on the other; records only for the network's seat
        runs = []
        for seat in (0, 1):
            engine = rf.Engine(game, reward, ppo, learner, n_games=args.n_games, seed=args.seed + seat, learn_players=[seat])
            runs.append((engine, [heads(net), uniform] if seat == 0 else [uniform, heads(net)]))
    t0 = time.perf_counter()
    curve = [[0, evaluate(game, reward, net, args.eval_games, args.seed)["win_rate"]]]
    records = 0
    stats: dict = {}
    for update in range(1, args.updates + 1):
        for engine, infer in runs:
            b = engine.collect(args.records // len(runs), infer)
            records += len(b.obs)
            mask = csr_mask(b.legal_offsets, b.legal_ids, A)
            n = len(b.obs)
            for _ in range(args.epochs):
                order = rs.permutation(n)
                for lo in range(0, max(n - args.batch // 2, 1), args.batch):
                    i = order[lo : lo + args.batch]
                    adv = b.advantages[i]
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                    net.train_step(b.obs[i], ppo_loss(mask[i], b.actions[i], b.behavior_log_probs[i], adv, b.returns[i], args, stats))
        for engine, _ in runs:
            engine.weights_updated()
        if update % args.eval_every == 0 and update < args.updates:
            curve.append([update, evaluate(game, reward, net, args.eval_games, args.seed)["win_rate"]])
            print(f"update {update}: win rate vs random {curve[-1][1]:.3f}, entropy {stats['entropy']:.3f}", file=sys.stderr)
    ev = evaluate(game, reward, net, args.eval_games, args.seed)
    curve.append([args.updates, ev["win_rate"]])
    print(
        f"win rate vs a uniformly random player over {ev['games']} games: untrained network "
        f"{curve[0][1]:.3f} (the baseline) -> {ev['win_rate']:.3f} after {args.updates} updates"
    )
    print(
        json.dumps(
            {
                "win_rate_vs_random": ev["win_rate"],
                "untrained_win_rate_vs_random": curve[0][1],
                "draws": ev["draws"],
                "losses": ev["losses"],
                "games": ev["games"],
                "updates": args.updates,
                "opponent": args.opponent,
                "records": records,
                "seconds": round(time.perf_counter() - t0, 1),
                "curve": curve,
                "backend": net.backend,
                **{k: round(v, 4) for k, v in stats.items()},
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
