"""The perfect Connect4 solver of benchmarks/connect4_solver.py against facts that can be checked.

Brute-force minimax (an independent grid implementation) on 4x4, 5x4 and 5x5 boards, symmetry,
consistency (a move that does not end the game scores minus the best of the position it leads
to), hand-checked 7x6 positions, the CLI format, and the shipped position sets.  The 7x6
empty-board facts take minutes without an opening book: slow tier.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "connect4_solver.py"


def _load():
    name = "reinfors_bench_connect4_solver"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


cs = _load()
ILLEGAL = cs.ILLEGAL


# ---------------------------------------------------------------- brute force (grid, no bitboards)


def _wins(grid, w, h, c, r, who):
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        k = 1
        for sgn in (1, -1):
            cc, rr = c + sgn * dc, r + sgn * dr
            while 0 <= cc < w and 0 <= rr < h and grid[cc][rr] == who:
                k += 1
                cc, rr = cc + sgn * dc, rr + sgn * dr
        if k >= 4:
            return True
    return False


def _brute(w, h):
    base = (w * h + 1) // 2

    @cache
    def value(cols, n):
        """Best score for the player to move; ``cols`` a tuple of column tuples (1 = first player)."""
        return max(s for s in move_scores(cols, n) if s != ILLEGAL)

    def move_scores(cols, n):
        who = 1 + n % 2
        out = []
        for c in range(w):
            if len(cols[c]) == h:
                out.append(ILLEGAL)
                continue
            grid = [list(col) + [0] * (h - len(col)) for col in cols]
            r = len(cols[c])
            grid[c][r] = who
            if _wins(grid, w, h, c, r, who):
                out.append(base - n // 2)  # the mover's (n // 2 + 1)-th stone
            elif n + 1 == w * h:
                out.append(0)
            else:
                child = tuple(col + (who,) if i == c else col for i, col in enumerate(cols))
                out.append(-value(child, n + 1))
        return out

    def scores(moves):
        cols = [() for _ in range(w)]
        for i, c in enumerate(moves):
            cols[c] = cols[c] + (1 + i % 2,)
        return move_scores(tuple(cols), len(moves))

    return scores


def _random_positions(solver, rng, count, plies):
    out = []
    while len(out) < count:
        ply = int(rng.integers(plies[0], plies[1] + 1))
        moves = []
        heights = [0] * solver.width
        for _ in range(ply):
            legal = [c for c in range(solver.width) if heights[c] < solver.height]
            c = legal[rng.integers(len(legal))]
            moves.append(c)
            heights[c] += 1
            if solver.status(moves) != 0:
                break
        if solver.status(moves) == 0:
            out.append(moves)
    return out


@pytest.mark.parametrize(
    ("w", "h", "count", "plies"),
    [(4, 4, 150, (0, 14)), (5, 4, 150, (2, 18)), (5, 5, 60, (10, 23))],
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


def test_small_empty_boards():
    """4x4 and 5x4 from the empty board: every move drawn (checked by brute force above too)."""
    for w, h in ((4, 4), (5, 4)):
        s = cs.Solver(w, h)
        assert s.scores([]).tolist() == _brute(w, h)([])


# ---------------------------------------------------------------- 7x6


@pytest.fixture(scope="module")
def solver():
    return cs.Solver()


def test_known_positions(solver):
    d = cs.parse_digits
    # first player has three in column 4 and wins with its 4th stone there: 22 - 4 = 18
    s = solver.scores(d("414141"))
    assert s[3] == 18
    # the second player must block it; everything else loses at the first player's 4th stone
    s = solver.scores(d("41414"))
    assert all(v == -18 for i, v in enumerate(s) if i != 3) and s[3] > -18
    # an open three on the bottom row (columns 3-5 against 2 stones on top): the mover (first
    # player) wins with its 4th stone by playing column 2 or 6
    s = solver.scores(d("4455"))
    assert s[2] == 18 and s[5] == 18
    # one move from a forced loss: after 44553 the first player has an open three on the bottom
    # row (columns 3-5); the second player can block only one end, so every move loses at the
    # first player's 4th stone
    s = solver.scores(d("44553"))
    assert s.tolist() == [-18] * 7 and solver.score(d("44553")) == -18
    # a full column is illegal
    s = solver.scores(d("444444"))
    assert s[3] == ILLEGAL and solver.score(d("444444")) == max(s)


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


def test_cli_analyze():
    r = subprocess.run(
        [sys.executable, str(SCRIPT), "analyze"],
        input="414141\n4455\n444444\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 3
    solver = cs.Solver()
    for line, pos in zip(lines, ["414141", "4455", "444444"], strict=True):
        parts = line.split()
        assert parts[0] == pos and len(parts) == 8
        assert [int(x) for x in parts[1:]] == solver.scores(cs.parse_digits(pos)).tolist()
    assert lines[2].split()[4] == "-1000"


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
    # a sample re-scores identically (late plies first: the early ones can take seconds)
    rng = np.random.default_rng(0)
    late = [r for r in rows if len(r["moves"]) >= plies[0] + 6]
    for i in rng.choice(len(late), size=min(20, len(late)), replace=False):
        assert solver.scores(late[i]["moves"]).tolist() == late[i]["scores"]


def test_set_roundtrip(tmp_path):
    rows = [{"moves": [3, 3, 2], "scores": [1, -2, 3, 0, 0, ILLEGAL, 5]}]
    cs.save_set(tmp_path / "x.jsonl", rows)
    assert cs.load_set(tmp_path / "x.jsonl") == rows
