"""Train AlphaZero on Connect4 and measure it against perfect play on the way.

    python examples/train_alphazero_connect4.py [--minutes 20] [--sims 64] [--backend auto] [--save-dir DIR]
    python examples/train_alphazero_connect4.py --policy gumbel --simulations 16
    python examples/evaluate_connect4.py --checkpoint DIR/final.npz     # any checkpoint, afterwards

``--policy puct`` (the default) self-plays with ``rf.policies.AlphaZero`` (PUCT, 64 simulations
by default); ``--policy gumbel`` with ``rf.policies.GumbelAlphaZero`` (16 by default; its policy
targets are ``softmax(logits + sigma(completed Q))``, docs/gumbel-alphazero.md).

Self-play streams from ``engine.collect_stream`` with the two-network pattern: the stream's
thread searches with ``collector``, a frozen copy of the network, while this thread trains
``learner`` on a replay window of the most recent records (mirrored left-right: Connect4 is
symmetric).  After every streamed batch the learner's weights are copied into the collector under
a lock and ``engine.weights_updated()`` is called beside the copy.  That loop is ``self_play``;
``benchmarks/learning_race.py`` runs the very same function under this package and under
reinfors 0.4.0.  The learning rate follows a cosine from ``--lr`` to ``--lr-final`` over the
``--minutes`` budget; the value targets are discounted by ``--gamma`` per ply, so the search (which
backs up with the same discount) prefers the fastest win and the slowest loss, as a perfect player.

Every ``--eval-every`` minutes (and at minute 0, untrained) the learner is measured three ways:

- **against perfect play**: the optimal-move rate on the solver-labelled position sets
  (``--positions``; default ``benchmarks/data/connect4_random.jsonl`` and ``connect4_strong.jsonl``):
  the raw policy (argmax of the legal logits) and the greedy search with ``--eval-sims``
  simulations pick a move of the best game-theoretic value how often (``examples/evaluate_connect4.py``);
- against ``rf.policies.Minimax(depth=2)`` with a zero leaf callback, ``--eval-games`` ``rf.Arena``
  games: pairs of games from the same random opening with the seats swapped.  Our side searches
  greedily with the training policy's search and ``--eval-sims`` simulations (AlphaZero: no noise,
  temperature 0; GumbelAlphaZero: ``gumbel_scale=0``);
- by Elo: each evaluation saves the learner as a checkpoint (``--save-dir``, ``ckpt<i>`` plus the
  backend's suffix; the last is ``final``) and GATES it (``rf.arena.gate``: an SPRT of ``elo0=0``
  against ``--gate-elo1``, alpha = beta = 0.05, at most ``--gate-games`` games) against the last
  accepted checkpoint.  Every checkpoint's games go into one ``rf.ratings.Results``, refitted after
  each evaluation: the Elo curve anchored to Minimax(depth=2), with 95 % intervals.

The network is a ReLU MLP (84 -> hidden -> hidden -> 7 logits + 1 value) trained with Adam on
the ``AlphaZeroBatch`` targets: cross-entropy to the root visit distribution (weighted by
``policy_weights``) plus the squared error of ``tanh(value)`` to the (discounted) outcome.  It is a
PyTorch module when ``import torch`` works and NumPy otherwise (``--backend`` forces one); the
defaults are measured on the NumPy path on a 2-core machine (benchmarks/RESULTS.md, "Strength").

Writes ``<logdir>/log.jsonl`` (one line per update and per evaluation: losses, optimal-move rates,
win rate, telemetry) and TensorBoard scalars when ``torch.utils.tensorboard`` imports.  The last
stdout line is one JSON object: the final optimal-move rates (``optimal``), ``win_rate_vs_minimax2``,
``games``, ``minutes``, ``records``, the curves (``optimal_curve``, ``curve``, ``elo_curve``), the
accepted checkpoints, the final checkpoint's path, and more.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    # small matmuls: threaded BLAS only fights the engine's search workers for the cores (18x slower here)
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _nets import make_mlp  # noqa: E402
from evaluate_connect4 import DEFAULT_SETS, PositionSet, heads, score_net, zero_q  # noqa: E402

import reinfors as rf  # noqa: E402
from reinfors.starts import RandomStartingMoves  # noqa: E402

ROWS, COLS = 6, 7


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=20.0, help="training budget (wall clock, evaluations included)")
    ap.add_argument("--policy", choices=("puct", "gumbel"), default="puct", help="self-play search: AlphaZero or GumbelAlphaZero")
    ap.add_argument(
        "--sims", "--simulations", dest="sims", type=int, default=None,
        help="simulations per self-play move (default 64 with puct, 16 with gumbel)",
    )  # fmt: skip
    ap.add_argument("--eval-sims", type=int, default=None, help="simulations per evaluation move (default --sims)")
    ap.add_argument("--temperature", type=float, default=1.0, help="self-play: moves sampled from visits ** (1 / temperature)")
    ap.add_argument(
        "--temperature-drop", type=int, default=-1,
        help="self-play: the ply from which moves are greedy (-1: never; sampling all game long explores the positions a perfect-play test holds)",
    )  # fmt: skip
    ap.add_argument("--n-games", type=int, default=64, help="parallel self-play games")
    ap.add_argument("--collect-size", type=int, default=1024, help="records per streamed batch")
    ap.add_argument("--replay", type=int, default=100_000, help="replay window (records, mirrors included)")
    ap.add_argument("--batch", type=int, default=256, help="minibatch rows")
    ap.add_argument("--reuse", type=float, default=4.0, help="times each new record is sampled, on average")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument(
        "--features", choices=("connect4_threats", "none"), default="connect4_threats",
        help="the network's fixed first layer: the cells and columns that complete a four for each side (examples/_nets.py)",
    )  # fmt: skip
    ap.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate at the start")
    ap.add_argument("--lr-final", type=float, default=1e-4, help="the learning rate at the end of --minutes (cosine)")
    ap.add_argument("--gamma", type=float, default=0.97, help="discount per ply of the value targets and the search")
    ap.add_argument("--eval-every", type=float, default=2.0, help="minutes between evaluations")
    ap.add_argument("--eval-games", type=int, default=200, help="games per evaluation (even)")
    ap.add_argument("--opening", type=int, default=2, help="random opening moves per evaluation pair")
    ap.add_argument("--gate-games", type=int, default=128, help="most games of a checkpoint's SPRT gate (even)")
    ap.add_argument("--gate-elo1", type=float, default=50.0, help="the gate's H1: stronger by this many Elo")
    ap.add_argument("--backend", choices=("auto", "numpy", "torch"), default="auto")
    ap.add_argument("--logdir", default="runs/train_alphazero_connect4")
    ap.add_argument("--save-dir", default=None, help="checkpoint folder (default: --logdir)")
    ap.add_argument(
        "--positions", action="append", default=None,
        help="solver-labelled positions file for the optimal-move rate (repeatable; default: the two shipped sets)",
    )  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-progress", action="store_true", help="no tqdm bar")
    args = ap.parse_args(argv)
    args.sims = args.sims or (16 if args.policy == "gumbel" else 64)
    args.eval_sims = args.eval_sims or args.sims
    return args


class Replay:
    """A ring of the last ``capacity`` records (obs, visit targets, outcome, policy weight)."""

    def __init__(self, capacity: int, obs_size: int, n_actions: int):
        self.obs = np.zeros((capacity, obs_size), np.float32)
        self.pi = np.zeros((capacity, n_actions), np.float32)
        self.z = np.zeros(capacity, np.float32)
        self.w = np.zeros(capacity, np.float32)
        self.capacity, self.size, self.head = capacity, 0, 0

    def add(self, obs, pi, z, w) -> None:
        n = len(obs)
        idx = (self.head + np.arange(n)) % self.capacity
        self.obs[idx], self.pi[idx], self.z[idx], self.w[idx] = obs, pi, z, w
        self.head = int((self.head + n) % self.capacity)
        self.size = min(self.capacity, self.size + n)

    def sample(self, rs: np.random.Generator, n: int):
        idx = rs.integers(0, self.size, n)
        return self.obs[idx], self.pi[idx], self.z[idx], self.w[idx]


def mirrored(batch: rf.AlphaZeroBatch):
    """The batch plus its left-right mirror (columns reversed in the board planes and targets)."""
    obs = batch.obs.reshape(-1, 2, ROWS, COLS)
    obs_m = obs[..., ::-1].reshape(len(obs), -1)
    pi = batch.policy_targets.astype(np.float32)
    return (
        np.concatenate([batch.obs, obs_m]),
        np.concatenate([pi, pi[:, ::-1]]),
        np.tile(batch.value_targets.astype(np.float32), 2),
        np.tile(batch.policy_weights.astype(np.float32), 2),
    )


def az_loss(pi: np.ndarray, z: np.ndarray, w: np.ndarray, stats: dict):
    """Loss on the network output (logits | value): weighted CE to ``pi`` + MSE of tanh(value) to ``z``."""

    def loss_fn(out: np.ndarray):
        n = len(out)
        logits, raw = out[:, :COLS].astype(np.float64), out[:, COLS].astype(np.float64)
        zl = logits - logits.max(axis=1, keepdims=True)
        logp = zl - np.log(np.exp(zl).sum(axis=1, keepdims=True))
        p = np.exp(logp)
        v = np.tanh(raw)
        ce = float(-(w * (pi * logp).sum(axis=1)).mean())
        mse = float(((v - z) ** 2).mean())
        d = np.empty_like(out, dtype=np.float64)
        d[:, :COLS] = w[:, None] * (p * pi.sum(axis=1, keepdims=True) - pi) / n
        d[:, COLS] = 2.0 * (v - z) * (1.0 - v * v) / n
        stats["policy_loss"], stats["value_loss"] = ce, mse
        return ce + mse, d

    return loss_fn


def self_play_policy(args) -> rf.policies.PolicyHandle:
    """The self-play search: AlphaZero (PUCT, Dirichlet noise, temperature) or GumbelAlphaZero."""
    if args.policy == "gumbel":
        return rf.policies.GumbelAlphaZero(num_simulations=args.sims)
    drop = None if args.temperature_drop < 0 else args.temperature_drop
    return rf.policies.AlphaZero(num_simulations=args.sims, temperature=args.temperature, temperature_drop=drop)


def searched(net, args):
    """The greedy searched contestant of ``net``: the training policy's search without its
    exploration (AlphaZero: no noise, temperature 0; GumbelAlphaZero: ``gumbel_scale=0``)."""
    if args.policy == "gumbel":
        return (rf.policies.GumbelAlphaZero(num_simulations=args.eval_sims, gumbel_scale=0.0), heads(net), args.gamma)
    return (rf.policies.AlphaZero(num_simulations=args.eval_sims, noise=None, temperature=0.0), heads(net), args.gamma)


def evaluate(game, reward, net, args, results=None, name=None) -> dict:
    """``--eval-games`` Arena games of the greedy searched network against Minimax(depth=2)
    (added to ``results`` as ``name`` vs ``"minimax2"`` when given)."""
    ours = searched(net, args)
    minimax = (rf.policies.Minimax(depth=2), zero_q, 1.0)
    arena = rf.Arena(
        game, reward, [ours, minimax], n_slots=min(100, args.eval_games), start=RandomStartingMoves(args.opening), seed=args.seed
    )
    t = time.perf_counter()
    res = arena.play(args.eval_games)
    if results is not None:
        results.add_arena(name, "minimax2", res)
    wins = sum(g.payoffs[0] > 0 for g in res.games)
    draws = sum(g.payoffs[0] == 0 for g in res.games)
    mean, stderr = res.payoff(0)
    seats = res.seat_payoffs(0)
    return {
        "win_rate": wins / len(res.games),
        "wins": wins,
        "draws": draws,
        "losses": len(res.games) - wins - draws,
        "games": len(res.games),
        "payoff": mean,
        "payoff_stderr": stderr,
        "payoff_first_seat": seats.get(0, 0.0),
        "payoff_second_seat": seats.get(1, 0.0),
        "eval_seconds": time.perf_counter() - t,
    }


class Log:
    """JSONL rows, plus TensorBoard scalars when ``torch.utils.tensorboard`` imports."""

    def __init__(self, logdir: str):
        self.dir = Path(logdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "log.jsonl"
        self.file = self.path.open("w")
        try:
            from torch.utils.tensorboard import SummaryWriter
        except Exception:  # no torch / no tensorboard: the JSONL is the log
            self.tb = None
        else:
            self.tb = SummaryWriter(str(self.dir))

    def write(self, kind: str, step: int, row: dict) -> None:
        self.file.write(json.dumps({"kind": kind, "step": step, **row}) + "\n")
        self.file.flush()
        if self.tb is not None:
            for k, v in row.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    self.tb.add_scalar(f"{kind}/{k}", v, step)

    def close(self) -> None:
        self.file.close()
        if self.tb is not None:
            self.tb.close()


TELEMETRY_KEYS = ("decisions", "infer_calls", "infer_rows", "infer_seconds", "mean_leaves", "max_depth", "terminal_sims")


def cosine_lr(args, fraction: float) -> float:
    """The learning rate ``fraction`` of the way through the budget: a cosine from ``--lr`` to ``--lr-final``."""
    fraction = min(max(fraction, 0.0), 1.0)
    return args.lr_final + 0.5 * (args.lr - args.lr_final) * (1.0 + math.cos(math.pi * fraction))


def build(args, game, reward):
    """``(engine, learner, collector, lock)``: the self-play engine, the trained network, its frozen
    copy the stream searches with, and the lock that guards the copy."""
    obs_size, n_actions = int(np.prod(game.observation_space().shape)), game.action_space().n
    engine = rf.Engine(
        game, reward, self_play_policy(args), rf.learners.AlphaZero(gamma=args.gamma), n_games=args.n_games, seed=args.seed
    )  # fmt: skip
    features = None if args.features == "none" else args.features
    learner = make_mlp(
        [obs_size, args.hidden, args.hidden, n_actions + 1], backend=args.backend, lr=args.lr, seed=args.seed, features=features
    )  # fmt: skip
    return engine, learner, learner.copy(), threading.Lock()


def self_play(args, engine, learner, collector, lock, clock):
    """The training loop: a generator that yields ``(batch, train_steps, stats, stream)`` after each update.

    The stream searches with ``collector`` (read under ``lock``); each streamed batch goes into the
    replay window (mirrored), the learner takes ``--reuse`` samples per new record in ``--batch``-row
    Adam steps at the cosine learning rate of ``clock()`` (the fraction of the budget spent), and its
    weights are copied into the collector beside ``engine.weights_updated()``.  Closing the generator
    stops the stream.  Public API only: ``benchmarks/learning_race.py`` runs it under reinfors 0.4.0 too.
    """
    rs = np.random.default_rng(args.seed)
    replay = None  # sized by the first batch (the raw observations; the network transforms its own input)
    collect_infer = heads(collector)
    stats: dict = {"policy_loss": float("nan"), "value_loss": float("nan")}

    def infer(obs: np.ndarray):
        with lock:  # never read the collector while it is being overwritten
            return collect_infer(obs)

    with engine.collect_stream(collect_size=args.collect_size, infer=infer, depth=1) as stream:
        while True:
            batch = next(stream)
            if replay is None:
                replay = Replay(args.replay, batch.obs.shape[1], batch.policy_targets.shape[1])
            replay.add(*mirrored(batch))
            learner.set_lr(cosine_lr(args, clock()))
            steps = max(1, round(args.reuse * 2 * len(batch.obs) / args.batch))
            for _ in range(steps):
                x, pi, z, w = replay.sample(rs, args.batch)
                learner.train_step(x, az_loss(pi.astype(np.float64), z.astype(np.float64), w.astype(np.float64), stats))
            with lock:
                collector.load_from(learner)
                engine.weights_updated()
            yield batch, steps, stats, stream


def checkpoint_meta(args) -> dict:
    """What an evaluator needs besides the weights: the discount, the search's simulations, the policy."""
    return {"gamma": args.gamma, "sims": args.sims, "policy": args.policy, "hidden": args.hidden, "example": "train_alphazero_connect4"}


def position_sets(args) -> list:
    """The solver-labelled sets of ``--positions`` (default: the shipped ones that exist), loaded once."""
    paths = args.positions if args.positions is not None else [p for p in DEFAULT_SETS if p.exists()]
    return [PositionSet(p) for p in paths]


def main(argv=None) -> int:
    args = parse(argv)
    if args.eval_games < 2 or args.eval_games % 2:
        raise SystemExit("--eval-games must be even and >= 2")
    if args.gate_games < 2 or args.gate_games % 2:
        raise SystemExit("--gate-games must be even and >= 2")
    if not 0.0 <= args.gamma <= 1.0:
        raise SystemExit("--gamma must be in [0, 1]")
    t_start = time.perf_counter()
    game = rf.games.Connect4()
    reward = rf.Reward(win=1.0, loss=-1.0, draw=0.0)
    engine, learner, collector, lock = build(args, game, reward)
    sets = position_sets(args)
    save_dir = Path(args.save_dir or args.logdir)
    log = Log(args.logdir)
    curve: list[list[float]] = []
    optimal_curve: list[list] = []  # [minutes, {set: {policy_optimal, search_optimal, ...}}]
    budget = args.minutes * 60.0
    bar = None
    if not args.no_progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=round(budget), unit="s", desc="alphazero", mininterval=1.0, file=sys.stderr)

    results = rf.ratings.Results(["minimax2"])  # every checkpoint's games, for the Elo curve
    checkpoints: list[list] = []  # [name, minutes]
    accepted: list[str] = []
    best: list = [None, None]  # [name, frozen network] of the incumbent

    def run_eval(step: int, minutes: float, name: str | None = None) -> dict:
        name = name or f"ckpt{len(checkpoints)}"
        ev = evaluate(game, reward, learner, args, results, name)
        t = time.perf_counter()
        optimal = score_net(sets, learner, args.eval_sims, args.gamma) if sets else {}
        ev["optimal_seconds"] = time.perf_counter() - t
        for set_name, r in optimal.items():
            ev.update({f"{set_name}/{k}": v for k, v in r.items() if k != "positions"})
        ev["minutes"] = minutes
        ev["cpu_minutes"] = time.process_time() / 60.0  # this process's CPU (the machine may be shared)
        ev["checkpoint"] = str(learner.save(save_dir / name, checkpoint_meta(args)))
        curve.append([round(minutes, 3), ev["win_rate"]])
        optimal_curve.append([round(minutes, 3), optimal])
        log.write("eval", step, ev)
        checkpoints.append([name, round(minutes, 3)])
        snapshot = learner.copy()
        if best[0] is None:
            best[:] = [name, snapshot]
            accepted.append(name)
        else:
            g = rf.arena.gate(
                game, reward, searched(snapshot, args), searched(best[1], args),
                elo0=0.0, elo1=args.gate_elo1, alpha=0.05, beta=0.05,
                chunk_games=min(32, args.gate_games), max_games=args.gate_games,
                n_slots=min(32, args.gate_games), start=RandomStartingMoves(args.opening), seed=args.seed + step,
            )  # fmt: skip
            r = g.record
            results.add(name, best[0], r.wins, r.draws, r.losses)
            log.write("gate", step, {"candidate": name, "incumbent": best[0], "accepted": g.accepted,
                                     "decision": g.decision, "games": g.games, "wins": r.wins, "draws": r.draws,
                                     "losses": r.losses, "elo": g.elo, "elo_ci": g.ci, "llr": g.sprt.llr})  # fmt: skip
            if g.accepted:
                best[:] = [name, snapshot]
                accepted.append(name)
        ratings = results.fit(anchor="minimax2")
        elo = [[m, n, *map(lambda v: round(v, 1), ratings[n])] for n, m in checkpoints]
        log.write("elo", step, {"curve": elo, "accepted": list(accepted)})
        ev["elo"], ev["elo_ci"] = elo[-1][2], elo[-1][3]
        if bar is not None:
            rates = ", ".join(f"{k} policy {r['policy_optimal']:.3f} search {r['search_optimal']:.3f}" for k, r in optimal.items())
            bar.write(
                f"[{minutes:5.2f} min] optimal moves: {rates or 'no position sets'}; vs minimax(2): win {ev['win_rate']:.3f} "
                f"(W/D/L {ev['wins']}/{ev['draws']}/{ev['losses']}), {name} Elo {ev['elo']:+.0f} ± {ev['elo_ci']:.0f}, incumbent {best[0]}"
            )
        return ev

    t0 = time.perf_counter()
    ev = run_eval(0, 0.0)  # the untrained network: the curves' first point
    next_eval = args.eval_every * 60.0
    records = updates = 0
    loop = self_play(args, engine, learner, collector, lock, clock=lambda: (time.perf_counter() - t0) / budget)
    for batch, steps, stats, stream in loop:
        records += len(batch.obs)
        updates += 1
        t = batch.telemetry
        episodes = t["episodes"]
        row = {
            "minutes": (time.perf_counter() - t0) / 60.0,
            "records": records,
            "train_steps": steps,
            "lr": learner.lr,
            "queued": stream.pending() if stream.pending() < 2**63 else 0,
            "episodes": len(episodes),
            "mean_length": float(np.mean([e[1] for e in episodes])) if episodes else 0.0,
            **stats,
            **{k: t[k] for k in TELEMETRY_KEYS},
        }
        gens = getattr(batch, "weights_generations", None)  # per-record lag, where the engine tags it
        if gens is not None and len(gens):
            row["policy_lag_max"] = int(updates - 1 - np.min(gens))
        log.write("train", updates, row)
        if bar is not None:
            bar.n = min(round(time.perf_counter() - t0), bar.total)
            bar.set_postfix(records=records, ce=f"{stats['policy_loss']:.3f}", mse=f"{stats['value_loss']:.3f}", win=f"{ev['win_rate']:.2f}")
        elapsed = time.perf_counter() - t0
        if elapsed >= budget:  # at least one update, however small the budget
            break
        if elapsed >= next_eval:
            ev = run_eval(updates, elapsed / 60.0)
            next_eval += args.eval_every * 60.0
    loop.close()  # stops the stream
    train_minutes = (time.perf_counter() - t0) / 60.0
    ev = run_eval(updates, train_minutes, name="final")  # the reported numbers: after the budget
    if bar is not None:
        bar.n = bar.total
        bar.close()
    log.close()
    final = optimal_curve[-1][1]
    result = {
        "optimal": final,
        "win_rate_vs_minimax2": ev["win_rate"],
        "draw_rate": ev["draws"] / ev["games"],
        "loss_rate": ev["losses"] / ev["games"],
        "payoff": ev["payoff"],
        "payoff_stderr": ev["payoff_stderr"],
        "games": ev["games"],
        "minutes": round(train_minutes, 3),
        "wall_minutes": round((time.perf_counter() - t_start) / 60.0, 3),
        "records": records,
        "updates": updates,
        "policy": args.policy,
        "sims": args.sims,
        "gamma": args.gamma,
        "cpu_minutes": round(time.process_time() / 60.0, 3),
        "eval_sims": args.eval_sims,
        "backend": learner.backend,
        "params": learner.n_params(),
        "optimal_curve": optimal_curve,
        "curve": curve,
        "elo_curve": [[m, n, *map(lambda v: round(v, 1), results.fit(anchor="minimax2")[n])] for n, m in checkpoints],
        "accepted": accepted,
        "checkpoint": ev["checkpoint"],
        "log": str(log.path),
        "untrained_win_rate_vs_minimax2": curve[0][1],
    }
    rates = "; ".join(
        f"{k}: policy {optimal_curve[0][1][k]['policy_optimal']:.3f} -> {r['policy_optimal']:.3f}, "
        f"search {optimal_curve[0][1][k]['search_optimal']:.3f} -> {r['search_optimal']:.3f}"
        for k, r in final.items()
    )
    print(f"optimal moves (untrained network -> trained): {rates or 'no position sets'}")
    print(f"win rate vs Minimax(depth=2): untrained network {curve[0][1]:.3f} (the baseline: search alone) -> {ev['win_rate']:.3f}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
