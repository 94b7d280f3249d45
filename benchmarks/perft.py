"""Perft nodes/s on one core: this build's njit generator vs python-chess and OpenSpiel.

    python benchmarks/perft.py [--depth 4] [--oracle-depth 3]

Positions: the standard perft suite (start, Kiwipete, positions 3-6).  Ours counts leaves with
bulk counting at the last ply (as most perft tools); python-chess and pyspiel walk the tree in
Python (pyspiel's legal-move generation itself is C++).  Node counts are checked against the
known values; the compile / cache-load time of the first call is excluded.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

PERFT = [
    ("start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", [20, 400, 8902, 197281, 4865609]),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", [48, 2039, 97862, 4085603]),
    ("pos3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", [14, 191, 2812, 43238, 674624]),
    ("pos4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", [6, 264, 9467, 422333]),
    ("pos5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", [44, 1486, 62379, 2103487]),
    ("pos6", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", [46, 2079, 89890, 3894594]),
]


def ours(fen, depth):
    from reinfors.chess import parse_fen
    from reinfors.jit.games import chess_movegen as mg

    board, turn, castle, ep = parse_fen(fen)[:4]
    return mg.perft(board, turn, castle, ep, depth, np.zeros((depth + 1, 256), np.int64), np.zeros((depth + 1, 64), np.int64))


def python_chess(fen, depth):
    import chess

    def walk(b, d):
        if d == 1:
            return b.legal_moves.count()
        n = 0
        for m in b.legal_moves:
            b.push(m)
            n += walk(b, d - 1)
            b.pop()
        return n

    return walk(chess.Board(fen), depth)


def openspiel(fen, depth):
    import pyspiel

    game = pyspiel.load_game("chess")

    def walk(s, d):
        acts = s.legal_actions()
        if d == 1:
            return len(acts)
        return sum(walk(s.child(a), d - 1) for a in acts)

    return walk(game.new_initial_state(fen), depth)


def timed(fn, fen, depth):
    t0 = time.perf_counter()
    n = fn(fen, depth)
    return n, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--oracle-depth", type=int, default=3)
    args = ap.parse_args()
    ours(PERFT[0][1], 1)  # compile / cache load
    print(f"{'position':<10} {'engine':<13} {'depth':>5} {'nodes':>10} {'seconds':>8} {'Mnodes/s':>9}")
    totals = {}
    for name, fen, counts in PERFT:
        for label, fn, depth in (
            ("reinfors", ours, args.depth),
            ("python-chess", python_chess, args.oracle_depth),
            ("pyspiel", openspiel, args.oracle_depth),
        ):
            try:
                n, dt = timed(fn, fen, depth)
            except ImportError:
                continue
            assert n == counts[depth - 1], (label, name, n, counts[depth - 1])
            nodes, secs = totals.get(label, (0, 0.0))
            totals[label] = (nodes + n, secs + dt)
            print(f"{name:<10} {label:<13} {depth:>5} {n:>10} {dt:>8.3f} {n / dt / 1e6:>9.3f}")
    for label, (n, s) in totals.items():
        print(f"{'all':<10} {label:<13} {'':>5} {n:>10} {s:>8.3f} {n / s / 1e6:>9.3f}")


if __name__ == "__main__":
    main()
