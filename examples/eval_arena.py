"""Evaluate two Connect4 players with ``rf.Arena``: paired openings, pooled search, payoff ± stderr.

    python examples/eval_arena.py [--games 64] [--slots 16] [--depth 3] [--sims 64] [--opening 2]

Match 1 pits Minimax (a zero callback: it plays perfectly within its horizon from terminal
rewards alone) against UCT Mcts scored by a small numpy heuristic.  Match 2 pits the same
Minimax against an ``External`` agent — ordinary Python running on a worker thread, the shape a
UCI/stdin engine wrapper takes — that plays the centre-most legal column.  Every pair of games
shares one random opening with the seats swapped, so the payoff's standard error is taken over
pairs.  Swap ``heuristic`` for your network's forward pass (float32 ``(rows, obs_size)`` in,
``(rows, 1, 7)`` Q values out) to evaluate a trained model.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import reinfors as rf
from reinfors.arena import External
from reinfors.starts import RandomStartingMoves

N_COLS = 7


def zero(obs: np.ndarray) -> np.ndarray:
    return np.zeros((obs.shape[0], 1, N_COLS), np.float32)


def heuristic(obs: np.ndarray) -> np.ndarray:
    """Q values from piece counts per column, mover plane minus opponent plane (centre bias)."""
    planes = obs.reshape(obs.shape[0], 2, 6, N_COLS)
    q = 0.05 * (planes[:, 0].sum(axis=1) - planes[:, 1].sum(axis=1))
    q += 0.02 * (3 - np.abs(np.arange(N_COLS) - 3))
    return np.clip(q, -1, 1)[:, None, :].astype(np.float32)


class CentreAgent:
    """An external agent: plays the legal column nearest the centre; counts what it is told."""

    def __init__(self) -> None:
        self.heard = 0

    def act(self, view) -> int:
        return min(view.legal_actions, key=lambda c: abs(c - 3))

    def on_action(self, action: int) -> None:
        self.heard += 1

    def close(self) -> None:
        pass


def report(title: str, res: rf.arena.ArenaResult, names: tuple[str, str], seconds: float) -> None:
    mean, stderr = res.payoff(0)
    seats = res.seat_payoffs(0)
    wins = sum(g.payoffs[0] > 0 for g in res.games)
    draws = sum(g.payoffs[0] == 0 for g in res.games)
    print(f"{title}: {len(res.games)} games in {seconds:.1f}s ({len(res.games) / seconds:.1f} games/s)")
    print(f"  {names[0]} vs {names[1]}: payoff {mean:+.3f} ± {stderr:.3f}  (W/D/L {wins}/{draws}/{len(res.games) - wins - draws})")
    print(f"  {names[0]} by seat: first {seats.get(0, 0.0):+.3f}, second {seats.get(1, 0.0):+.3f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=64, help="games per match (even)")
    p.add_argument("--slots", type=int, default=16, help="concurrent games")
    p.add_argument("--depth", type=int, default=3, help="Minimax depth")
    p.add_argument("--sims", type=int, default=64, help="Mcts simulations per move")
    p.add_argument("--opening", type=int, default=2, help="random opening moves per pair")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    game = rf.games.Connect4()
    reward = rf.Reward(win=1.0, loss=-1.0, draw=0.0)
    minimax = (rf.policies.Minimax(depth=args.depth), zero, 1.0)
    mcts = (rf.policies.Mcts(num_simulations=args.sims), heuristic, 1.0)
    start = RandomStartingMoves(args.opening)

    t = time.perf_counter()
    res = rf.Arena(game, reward, [minimax, mcts], n_slots=args.slots, start=start, seed=args.seed).play(args.games)
    report("match 1", res, (f"minimax({args.depth})", f"mcts({args.sims})"), time.perf_counter() - t)

    t = time.perf_counter()
    ext = External(CentreAgent, workers=2, timeout=30.0)
    res = rf.Arena(game, reward, [minimax, ext], n_slots=args.slots, start=start, seed=args.seed).play(args.games)
    report("match 2", res, (f"minimax({args.depth})", "external centre agent"), time.perf_counter() - t)
    print(f"  longest game: {max(g.length for g in res.games)} plies; game 0 moves: {res.games[0].actions}")


if __name__ == "__main__":
    main()
