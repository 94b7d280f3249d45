"""The perfect Connect4 solver of benchmarks/connect4_solver.py against facts that can be checked.

Brute-force minimax (an independent grid implementation) on 4x4, 5x4 and 5x5 boards, symmetry,
consistency (a move that does not end the game scores minus the best of the position it leads
to), hand-checked 7x6 positions, the CLI format, and the shipped position sets.  The 7x6
empty-board facts take minutes without an opening book: slow tier.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "connect4_solver.py"


def _load():
    # imported under its own name (as the script's __main__ does): numba's on-disk cache records
    # the defining module's name, so one name keeps the cache shared with the CLI
    if str(SCRIPT.parent) not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent))
    return importlib.import_module("connect4_solver")


cs = _load()
ILLEGAL = cs.ILLEGAL


# ---------------------------------------------------------------- brute force (grid, no bitboards)


def _wins(cols, w, h, c, r, who):
    """Whether ``who``'s stone at (c, r) (already in ``cols``) completes four."""
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        k = 1
        for sgn in (1, -1):
            cc, rr = c + sgn * dc, r + sgn * dr
            while 0 <= cc < w and 0 <= rr < len(cols[cc]) and cols[cc][rr] == who:
                k += 1
                cc, rr = cc + sgn * dc, rr + sgn * dr
        if k >= 4:
            return True
    return False


def _brute(w, h):
    """Plain memoised minimax over a board of column tuples (1 = first player, 2 = second)."""
    base = (w * h + 1) // 2

    @cache
    def value(cols, n):
        return max(s for s in move_scores(cols, n) if s != ILLEGAL)

    def move_scores(cols, n):
        who = 1 + n % 2
        out = []
        for c in range(w):
            if len(cols[c]) == h:
                out.append(ILLEGAL)
                continue
            child = cols[:c] + (cols[c] + (who,),) + cols[c + 1 :]
            if _wins(child, w, h, c, len(cols[c]), who):
                out.append(base - n // 2)  # a win with the mover's (n // 2 + 1)-th stone
            elif n + 1 == w * h:
                out.append(0)
            else:
                out.append(-value(child, n + 1))
        return out

    def scores(moves):
        cols = [() for _ in range(w)]
        for i, c in enumerate(moves):
            cols[c] = cols[c] + (1 + i % 2,)
        return move_scores(tuple(cols), len(moves))

    return scores


def _random_positions(solver, rng, count, plies):
    """``count`` unfinished positions of uniform random play, each at a ply drawn from ``plies``."""
    out = []
    while len(out) < count:
        moves = cs._random_position(rng, solver, int(rng.integers(plies[0], plies[1] + 1)))
        if moves is not None:
            out.append(moves)
    return out


@pytest.mark.parametrize(
    ("w", "h", "count", "plies"),
    [(4, 4, 100, (0, 14)), (5, 4, 100, (9, 18)), (5, 5, 60, (12, 23))],
)
def test_agrees_with_brute_force(w, h, count, plies):
    solver = cs.Solver(w, h)
    brute = _brute(w, h)
    rng = np.random.default_rng(w * 10 + h)
    for moves in _random_positions(solver, rng, count, plies):
        expect = brute(moves)
        got = solver.scores(moves).tolist()
        assert got == expect, (moves, got, expect)
        assert solver.score(moves) == max(s for s in expect if s != ILLEGAL)


# ---------------------------------------------------------------- 7x6


@pytest.fixture(scope="module")
def solver():
    return cs.Solver()


def test_known_positions(solver):
    """Hand-checked 7x6 positions, cheap ones (every line of play ends within a few plies)."""
    d = cs.parse_digits
    # after 44553 the first player has an open three on the bottom row (columns 3-5); the second
    # player can block only one end, so every move loses at the first player's 4th stone: -(22 - 4)
    assert solver.scores(d("44553")).tolist() == [-18] * 7
    assert solver.score(d("44553")) == -18


@pytest.mark.slow
def test_known_positions_early(solver):
    """Hand-checked early positions (each solve of a balanced ply-6/7 position can take seconds)."""
    d = cs.parse_digits
    # the first player (to move) wins with its 4th stone by making an open three on the bottom
    # row: columns 3 and 6 (the open three 3-4-5 or 4-5-6)
    s = solver.scores(d("4455"))
    assert s[2] == 18 and s[5] == 18 and max(s) == 18
    # the first player has three in column 4 and wins with its 4th stone there: 22 - 4
    assert solver.scores(d("414141"))[3] == 18
    # the second player must block it; every other move loses at the first player's 4th stone
    s = solver.scores(d("41414"))
    assert all(v == -18 for i, v in enumerate(s) if i != 3) and s[3] > -18
    # a full column is illegal
    s = solver.scores(d("444444"))
    assert s[3] == ILLEGAL and solver.score(d("444444")) == max(s)


def test_immediate_wins_and_losses(solver):
    """On late random positions, checked with the grid brute force's win test: a move that
    completes four scores 22 - k (the mover's k-th stone); a non-winning move after which the
    opponent completes four scores -(22 - k') (the opponent's k'-th stone)."""
    for moves in _late_positions(solver, 40, 3, (20, 36)):
        s = solver.scores(moves)
        n = len(moves)
        cols = [() for _ in range(7)]
        for i, c in enumerate(moves):
            cols[c] = cols[c] + (1 + i % 2,)
        me, opp = 1 + n % 2, 2 - n % 2
        wins = []
        for c in range(7):
            if len(cols[c]) == 6:
                assert s[c] == ILLEGAL
                continue
            child = cols[:c] + [cols[c] + (me,)] + cols[c + 1 :]
            if _wins(child, 7, 6, c, len(cols[c]), me):
                wins.append(c)
                assert s[c] == 22 - (n // 2 + 1), (moves, c)
                continue
            for c2 in range(7):
                if len(child[c2]) < 6:
                    g = child[:c2] + [child[c2] + (opp,)] + child[c2 + 1 :]
                    if _wins(g, 7, 6, c2, len(child[c2]), opp):
                        assert s[c] == -(22 - ((n + 1) // 2 + 1)), (moves, c)
                        break
        if wins:
            assert max(s) == 22 - (n // 2 + 1)


# Known values: the first lines of Pascal Pons's public "End-Easy" benchmark set (Test_L3_R1,
# http://blog.gamesolver.org/solving-connect-four/02-test-protocol/), position and score.
END_EASY = """
2252576253462244111563365343671351441 -1
7422341735647741166133573473242566 1
23163416124767223154467471272416755633 0
71255763773133525731261364622167124446454 0
65214673556155731566316327373221417 -1
52677675164321472411331752454 0
3135151421347443544172316522225776773566 0
562154564361751726662253737734213275114 0
233377345754465174223731671122611552 1
6763525635134453444361412671365712 -1
211376455663355325112113664364524722 0
3146762114467714356347741621375222 -1
67152117737262713366376314254 6
2762751722231276466633475674533 5
3642756176227637211322113551637574556 2
22647455554314246733661634615122372377511 0
427566236745127177115664464254 2
7172212567451542223676134464437761515 0
641154574541323641152467137655232232366 0
5775265212657176476365522624313714333 2
3575316255751336464276636772271112 -3
"""


def test_known_benchmark_values(solver):
    for line in END_EASY.split("\n"):
        if line:
            pos, value = line.split()
            moves = cs.parse_digits(pos)
            assert solver.score(moves) == int(value), pos
            s = solver.scores(moves)
            assert max(v for v in s if v != ILLEGAL) == int(value), pos


def test_illegal_and_terminal_positions(solver):
    seven = cs.parse_digits("4444444")  # a seventh stone in column 4
    with pytest.raises(ValueError):
        solver.scores(seven)
    assert solver.status(seven) == -1
    with pytest.raises(ValueError):
        solver.scores(cs.parse_digits("4141414"))  # the first player already won
    assert solver.status(cs.parse_digits("4141414")) == 1


def _late_positions(solver, n, seed, plies):
    return _random_positions(solver, np.random.default_rng(seed), n, plies)


def test_symmetry(solver):
    for moves in _late_positions(solver, 30, 1, (18, 32)):
        s = solver.scores(moves)
        m = solver.scores([6 - c for c in moves])
        assert m.tolist() == s[::-1].tolist(), moves


def test_consistency(solver):
    """A move that does not end the game scores minus the best score of the position it leads to."""
    win = {}
    for moves in _late_positions(solver, 30, 2, (18, 32)):
        s = solver.scores(moves)
        for c in range(7):
            if s[c] == ILLEGAL:
                continue
            child = moves + [c]
            st = solver.status(child)
            if st == 0:
                assert s[c] == -max(v for v in solver.scores(child) if v != ILLEGAL)
                assert s[c] == -solver.score(child)
            elif st == 1:
                win[tuple(child)] = s[c]
                assert s[c] == 22 - (len(moves) // 2 + 1)
            else:
                assert s[c] == 0
    assert win  # some immediate wins were checked


@pytest.mark.slow
def test_empty_board_7x6(solver):
    """The first player wins, only with the centre column; columns 3 and 5 draw, the rest lose
    (minutes without an opening book)."""
    s = solver.scores([])
    assert s.tolist() == [-2, -1, 0, 1, 0, -1, -2]


# ---------------------------------------------------------------- CLI and sets


def test_cli_analyze(solver):
    late = [m for m in _late_positions(solver, 20, 4, (24, 34)) if max(np.bincount(m, minlength=7)) == 6]
    positions = ["44553", "".join(str(c + 1) for c in late[0])]
    r = subprocess.run(
        [sys.executable, str(SCRIPT), "analyze"],
        input="\n".join(positions) + "\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 2
    for line, pos in zip(lines, positions, strict=True):
        parts = line.split()
        assert parts[0] == pos and len(parts) == 8
        assert [int(x) for x in parts[1:]] == solver.scores(cs.parse_digits(pos)).tolist()
    assert "-1000" in lines[1].split()[1:]


@pytest.mark.parametrize(("name", "plies"), [("connect4_random.jsonl", (8, 22)), ("connect4_strong.jsonl", (12, 30))])
def test_shipped_sets(name, plies, solver):
    path = ROOT / "benchmarks" / "data" / name
    if not path.exists():
        pytest.skip(f"{name} not generated yet")
    rows = cs.load_set(path)
    assert len(rows) >= 1000
    seen = set()
    for r in rows:
        moves, scores = r["moves"], r["scores"]
        assert plies[0] <= len(moves) <= plies[1]
        assert len(scores) == 7
        assert solver.status(moves) == 0  # legal, not terminal
        assert cs.informative(scores)
        heights = np.bincount(moves, minlength=7)
        assert [s == ILLEGAL for s in scores] == [h == 6 for h in heights]
        assert tuple(moves) not in seen
        seen.add(tuple(moves))
    # a sample re-scores identically (from the later plies: an early one can take seconds)
    rng = np.random.default_rng(0)
    late = [r for r in rows if len(r["moves"]) >= plies[0] + 9]
    for i in rng.choice(len(late), size=min(20, len(late)), replace=False):
        assert solver.scores(late[i]["moves"]).tolist() == late[i]["scores"]


def test_set_roundtrip(tmp_path):
    rows = [{"moves": [3, 3, 2], "scores": [1, -2, 3, 0, 0, ILLEGAL, 5]}]
    cs.save_set(tmp_path / "x.jsonl", rows)
    assert cs.load_set(tmp_path / "x.jsonl") == rows
