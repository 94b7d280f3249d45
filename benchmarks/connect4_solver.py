"""A perfect Connect4 solver (njit, nogil), scoring every legal move of a position.

    python benchmarks/connect4_solver.py analyze [--width 7 --height 6] < positions.txt
    python benchmarks/connect4_solver.py make-sets [--which random|strong|both] [--workers 2]

The algorithm is Pascal Pons's (http://blog.gamesolver.org): bitboards with H + 1 bits a column
(the extra bit is a sentinel that stops alignments wrapping from one column into the next),
negamax with alpha-beta, a transposition table, move ordering (centre first, then by the number
of winning cells a move creates; moves that hand the opponent an immediate win are never tried),
and a null-window search that narrows [min, max] around 0.  No opening book, so early positions
of balanced play are slow (minutes at the empty board); the position sets start late enough.

Score convention (Pons's, that of the public Connect4 solver benchmarks), from the point of
view of the player to move: 0 is a draw; a win with the mover's k-th own stone (counting from
the empty board) scores ``(W*H + 1)//2 + 1 - k`` (22 - k on 7x6); a loss is the negation of the
opponent's win score.  ``Solver.scores`` gives every column's score (``ILLEGAL`` = -1000 for a
full one); a move that wins at once scores its win score directly.

Kernels are module-level njit(nogil=True, cache=True) functions over int64 bitboards; a
``Solver`` owns its transposition table (one a thread: ``make_sets`` runs a thread a worker).

Position sets (``make_sets``, JSON lines ``{"moves": [0-based columns], "scores": [7 ints]}``,
positions where every legal move scores the same left out, no duplicates, no terminal positions):

- ``connect4_random.jsonl``: 120 positions a ply at plies 8..22 (1,800), each from uniform random
  legal moves from the empty board up to its ply (a game that ends earlier is dropped).  Built in
  two runs: 1,200 positions with the ply drawn uniformly in 8..22 (``--count 1200``, seed
  20261207; more survive at early plies, where fewer games have ended or turned uninformative),
  then topped up to 120 a ply (``--per-ply 120 --extend --seed 20261209``: the ply drawn among
  those still short).
- ``connect4_strong.jsonl``: games of a strong noisy player (``--count 1100``, seed 20261208):
  ``STRONG_OPENING`` uniform random opening plies (a count drawn uniformly in 9..12: solving the
  positions of noisy-optimal play before that costs seconds to minutes each on this machine),
  then each move is uniform random with probability ``STRONG_NOISE`` (0.3) and otherwise uniform
  among the optimal moves (the solver's best score), up to ply 30 or the game's end; each
  position of plies 12..30 is kept with probability ``STRONG_KEEP`` (0.7).

Each thread draws from its own seeded stream, but which thread fills the set first depends on
scheduling: a rerun gives a set made the same way, not the identical file.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

import numba as nb
import numpy as np

ILLEGAL = -1000
TT_SIZE = 8388593  # the largest prime below 2**23: 64 MiB of int64 entries (Pons's table size is prime too)
KEY_BITS = 56  # an entry packs the position key (< 2**56) and a 7-bit encoded bound above it
KEY_MASK = (1 << KEY_BITS) - 1

# params array layout (int64)
P_W, P_H, P_BOTTOM, P_BOARD, P_BASE, P_SIZE, P_ORDER = 0, 1, 2, 3, 4, 5, 8

DATA = Path(__file__).resolve().parent / "data"
RANDOM_SEED = 20261207
STRONG_SEED = 20261208
STRONG_NOISE = 0.3
STRONG_OPENING = (9, 12)
STRONG_KEEP = 0.7


def make_params(width: int = 7, height: int = 6) -> np.ndarray:
    if width < 4 and height < 4:
        raise ValueError("a board needs room for four in a row")
    if width * (height + 1) > KEY_BITS:
        raise ValueError(f"width * (height + 1) must be <= {KEY_BITS}")
    p = np.zeros(P_ORDER + width, np.int64)
    bottom = 0
    for c in range(width):
        bottom |= 1 << (c * (height + 1))
    p[P_W], p[P_H] = width, height
    p[P_BOTTOM] = bottom
    p[P_BOARD] = bottom * ((1 << height) - 1)
    p[P_BASE] = (width * height + 1) // 2
    p[P_SIZE] = width * height
    for i in range(width):  # centre first, then alternately left and right
        p[P_ORDER + i] = width // 2 + (1 - 2 * (i % 2)) * (i + 1) // 2
    return p


@nb.njit(nogil=True, cache=True)
def _popcount(x):
    n = 0
    while x != 0:
        x &= x - 1
        n += 1
    return n


@nb.njit(nogil=True, cache=True)
def _winning_cells(pos, mask, h, board):
    """Empty cells (reachable or not) that would complete four of ``pos``'s stones."""
    h1 = h + 1
    # vertical
    r = (pos << 1) & (pos << 2) & (pos << 3)
    # horizontal (shift h1), and the two diagonals (shifts h and h + 2)
    for s in (h1, h, h + 2):
        p = (pos << s) & (pos << (2 * s))
        r |= p & (pos << (3 * s))
        r |= p & (pos >> s)
        p = (pos >> s) & (pos >> (2 * s))
        r |= p & (pos << s)
        r |= p & (pos >> (3 * s))
    return r & (board ^ mask)


@nb.njit(nogil=True, cache=True)
def _has_four(pos, h):
    for s in (1, h + 1, h, h + 2):
        m = pos & (pos >> s)
        if m & (m >> (2 * s)) != 0:
            return True
    return False


@nb.njit(nogil=True, cache=True)
def _win_score(p, n):
    """Score of the player to move at ply ``n`` if it wins with its next stone."""
    return p[P_BASE] - n // 2


@nb.njit(nogil=True, cache=True)
def _half(x):  # C-style division by 2 (towards zero), as in Pons's narrowing
    return -((-x) // 2) if x < 0 else x // 2


@nb.njit(nogil=True, cache=True)
def _negamax(cur0, mask0, n0, alpha0, beta0, p, tt, fr, mv, stats):
    """Exact within (alpha0, beta0); precondition: the player to move cannot win at once.

    Iterative (an explicit stack of frames indexed by ply: ``fr[n]`` holds cur, mask, alpha,
    beta, table index, child count and next child; ``mv[n]`` the ordered moves), which avoids
    a call with its array arguments per node.
    """
    h = p[P_H]
    board = p[P_BOARD]
    bottom = p[P_BOTTOM]
    base = p[P_BASE]
    size = p[P_SIZE]
    w = p[P_W]
    span = 2 * base + 1
    ntt = tt.shape[0]
    nodes = 0
    n = n0
    fr[n, 0] = cur0
    fr[n, 1] = mask0
    fr[n, 2] = alpha0
    fr[n, 3] = beta0
    r = 0
    enter = True
    while True:
        if enter:
            # ---- node entry: a result at once (r, then return), or children to try
            nodes += 1
            cur = fr[n, 0]
            mask = fr[n, 1]
            alpha = fr[n, 2]
            beta = fr[n, 3]
            done = False
            possible = (mask + bottom) & board
            opp_win = _winning_cells(cur ^ mask, mask, h, board)
            forced = possible & opp_win
            if forced != 0:
                if forced & (forced - 1) != 0:  # two threats to parry: lost at the opponent's next stone
                    r = -(base - (n + 1) // 2)
                    done = True
                possible = forced
            nxt = possible & ~(opp_win >> 1)  # never play under an opponent's winning cell
            if not done and nxt == 0:
                r = -(base - (n + 1) // 2)
                done = True
            if not done and n >= size - 2:  # the opponent's last stone cannot win either
                r = 0
                done = True
            if not done:
                lo = -(base - (n + 3) // 2)  # the opponent cannot win before its second stone from here
                if alpha < lo:
                    alpha = lo
                    if alpha >= beta:
                        r = alpha
                        done = True
            if not done:
                hi = base - (n + 2) // 2  # nor can we before our second stone
                key = cur + mask
                idx = key % ntt
                e = tt[idx]
                if e != 0 and (e & KEY_MASK) == key:
                    v = e >> KEY_BITS
                    if v > span:  # lower bound
                        lb = v - span - base - 1
                        if alpha < lb:
                            alpha = lb
                            if alpha >= beta:
                                r = alpha
                                done = True
                    else:
                        ub = v - base - 1
                        if hi > ub:
                            hi = ub
                if not done and beta > hi:
                    beta = hi
                    if alpha >= beta:
                        r = beta
                        done = True
            if not done:
                # order: by the number of winning cells the move creates, ties centre first
                cnt = 0
                for i in range(w):
                    col = p[P_ORDER + i]
                    m = nxt & (((1 << h) - 1) << (col * (h + 1)))
                    if m != 0:
                        sc = _popcount(_winning_cells(cur | m, mask, h, board))
                        j = cnt
                        while j > 0 and mv[n, 2 * (j - 1) + 1] < sc:
                            mv[n, 2 * j] = mv[n, 2 * (j - 1)]
                            mv[n, 2 * j + 1] = mv[n, 2 * (j - 1) + 1]
                            j -= 1
                        mv[n, 2 * j] = m
                        mv[n, 2 * j + 1] = sc
                        cnt += 1
                fr[n, 2] = alpha
                fr[n, 3] = beta
                fr[n, 4] = idx
                fr[n, 5] = cnt
                fr[n, 6] = 0
            enter = False
            if done:
                # ---- return r to the parent
                while True:
                    if n == n0:
                        stats[0] += nodes
                        return r
                    n -= 1
                    s = -r
                    if s >= fr[n, 3]:
                        tt[fr[n, 4]] = (fr[n, 0] + fr[n, 1]) | ((s + base + 1 + span) << KEY_BITS)
                        r = s
                        continue
                    if s > fr[n, 2]:
                        fr[n, 2] = s
                    break
        # ---- next child of frame n, or the node is done (an upper bound)
        i = fr[n, 6]
        if i < fr[n, 5]:
            fr[n, 6] = i + 1
            m = mv[n, 2 * i]
            cur = fr[n, 0]
            mask = fr[n, 1]
            fr[n + 1, 0] = cur ^ mask
            fr[n + 1, 1] = mask | m
            fr[n + 1, 2] = -fr[n, 3]
            fr[n + 1, 3] = -fr[n, 2]
            n += 1
            enter = True
        else:
            alpha = fr[n, 2]
            tt[fr[n, 4]] = (fr[n, 0] + fr[n, 1]) | ((alpha + base + 1) << KEY_BITS)
            r = alpha
            while True:
                if n == n0:
                    stats[0] += nodes
                    return r
                n -= 1
                s = -r
                if s >= fr[n, 3]:
                    tt[fr[n, 4]] = (fr[n, 0] + fr[n, 1]) | ((s + base + 1 + span) << KEY_BITS)
                    r = s
                    continue
                if s > fr[n, 2]:
                    fr[n, 2] = s
                break


@nb.njit(nogil=True, cache=True)
def _can_win_next(cur, mask, p):
    possible = (mask + p[P_BOTTOM]) & p[P_BOARD]
    return (_winning_cells(cur, mask, p[P_H], p[P_BOARD]) & possible) != 0


@nb.njit(nogil=True, cache=True)
def _solve(cur, mask, n, p, tt, fr, mv, stats):
    """Exact score of a non-terminal position (the player to move holds ``cur``)."""
    if _can_win_next(cur, mask, p):
        return _win_score(p, n)
    if n >= p[P_SIZE] - 1:
        return 0
    lo = -(p[P_BASE] - (n + 1) // 2)
    hi = p[P_BASE] - (n + 2) // 2
    while lo < hi:  # null-window narrowing, probing towards 0 first
        med = lo + (hi - lo) // 2
        if med <= 0 and _half(lo) < med:
            med = _half(lo)
        elif med >= 0 and _half(hi) > med:
            med = _half(hi)
        r = _negamax(cur, mask, n, med, med + 1, p, tt, fr, mv, stats)
        if r <= med:
            hi = r
        else:
            lo = r
    return lo


@nb.njit(nogil=True, cache=True)
def _score_moves(cur, mask, n, p, tt, fr, mv, stats, out):
    """Every column's score for the player to move (``ILLEGAL`` for a full column)."""
    h = p[P_H]
    h1 = h + 1
    for c in range(p[P_W]):
        if mask & (1 << (h - 1 + c * h1)) != 0:
            out[c] = ILLEGAL
            continue
        m = (mask + (1 << (c * h1))) & (((1 << h) - 1) << (c * h1))
        if _has_four(cur | m, h):
            out[c] = _win_score(p, n)
        elif n + 1 >= p[P_SIZE]:
            out[c] = 0
        else:
            out[c] = -_solve(cur ^ mask, mask | m, n + 1, p, tt, fr, mv, stats)


@nb.njit(nogil=True, cache=True)
def _play(moves, p):
    """Bitboards after ``moves``: (cur, mask, n, state) with state 0 ongoing, 1 won by the last
    move, 2 full board, -1 an illegal move (full column, off board, or play after the end)."""
    h = p[P_H]
    h1 = h + 1
    cur = 0
    mask = 0
    state = 0
    for i in range(moves.shape[0]):
        c = moves[i]
        if state != 0 or c < 0 or c >= p[P_W] or mask & (1 << (h - 1 + c * h1)) != 0:
            return cur, mask, i, -1
        m = (mask + (1 << (c * h1))) & (((1 << h) - 1) << (c * h1))
        if _has_four(cur | m, h):
            state = 1
        cur ^= mask
        mask |= m
        if state == 0 and i + 1 == p[P_SIZE]:
            state = 2
    return cur, mask, moves.shape[0], state


class Solver:
    """A perfect solver for a ``width`` x ``height`` board with its own transposition table.

    Not thread-safe (the table and scratch are per instance): give each thread its own Solver.
    The table keeps its entries across positions (they are exact bounds), which speeds up
    positions of the same game.
    """

    def __init__(self, width: int = 7, height: int = 6, tt_size: int | None = None):
        self.width, self.height = width, height
        self.params = make_params(width, height)
        if tt_size is None:
            tt_size = TT_SIZE if width * height > 30 else 1048573
        self.tt = np.zeros(tt_size, np.int64)
        self._fr = np.zeros((width * height + 2, 8), np.int64)  # negamax frames, one a ply
        self._mv = np.zeros((width * height + 2, 2 * width), np.int64)  # ordered (move, score) a ply
        self.stats = np.zeros(1, np.int64)  # nodes searched, cumulative

    def reset(self) -> None:
        self.tt[:] = 0

    def _position(self, moves):
        arr = np.asarray(list(moves), np.int64)
        cur, mask, n, state = _play(arr, self.params)
        if state == -1:
            raise ValueError(f"illegal move at index {n} of {list(moves)}")
        if state != 0:
            raise ValueError(f"the game is over after {list(moves)}")
        return cur, mask, n

    def status(self, moves) -> int:
        """0 ongoing, 1 the last move won, 2 full board (draw), -1 illegal sequence."""
        return int(_play(np.asarray(list(moves), np.int64), self.params)[3])

    def scores(self, moves) -> np.ndarray:
        """Score of each column (``width`` ints, ``ILLEGAL`` for a full one) for the player to move."""
        cur, mask, n = self._position(moves)
        out = np.empty(self.width, np.int64)
        _score_moves(cur, mask, n, self.params, self.tt, self._fr, self._mv, self.stats, out)
        return out

    def score(self, moves) -> int:
        """Score of the position itself for the player to move (the best of ``scores``)."""
        cur, mask, n = self._position(moves)
        return int(_solve(cur, mask, n, self.params, self.tt, self._fr, self._mv, self.stats))


# ---------------------------------------------------------------- position sets (JSON lines)


def parse_digits(line: str) -> list[int]:
    """'4453' -> [3, 3, 4, 2] (1-based column digits to 0-based columns)."""
    return [int(ch) - 1 for ch in line.strip()]


def save_set(path, rows) -> None:
    """Write rows ``{"moves": [...], "scores": [...]}`` as JSON lines."""
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps({"moves": [int(x) for x in r["moves"]], "scores": [int(x) for x in r["scores"]]}) + "\n")


def load_set(path) -> list[dict]:
    """Read a JSON-lines position set: a list of ``{"moves": [int], "scores": [int]}``."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                r = json.loads(line)
                out.append({"moves": list(r["moves"]), "scores": list(r["scores"])})
    return out


def informative(scores) -> bool:
    legal = [s for s in scores if s != ILLEGAL]
    return len(set(legal)) > 1


def _random_position(rng, solver, ply):
    """Uniform random legal play up to ``ply``; None when the game ends on the way."""
    moves: list[int] = []
    heights = [0] * solver.width
    for _ in range(ply):
        legal = [c for c in range(solver.width) if heights[c] < solver.height]
        c = legal[rng.integers(len(legal))]
        moves.append(c)
        heights[c] += 1
        if solver.status(moves) != 0:
            return None
    return moves


def _worker_random(seed, count, out, lock, seen, timings, log, quota=None):
    rng = np.random.default_rng(seed)
    solver = Solver()
    while True:
        with lock:
            if len(out) >= count:
                return
            if quota is None:
                plies = list(range(8, 23))
            else:  # an equal number a ply: draw among the plies still short of their quota
                have = np.bincount([len(r["moves"]) for r in out], minlength=23)
                plies = [k for k in range(8, 23) if have[k] < quota]
                if not plies:
                    return
        ply = plies[int(rng.integers(len(plies)))]
        moves = _random_position(rng, solver, ply)
        if moves is None:
            continue
        key = tuple(moves)
        with lock:
            if key in seen:
                continue
            seen.add(key)
        t0 = time.perf_counter()
        s = solver.scores(moves)
        dt = time.perf_counter() - t0
        with lock:
            timings.append((ply, dt))
            full = quota is not None and sum(len(r["moves"]) == ply for r in out) >= quota
            if informative(s) and len(out) < count and not full:
                out.append({"moves": moves, "scores": s.tolist()})
                if len(out) % 50 == 0:
                    log(len(out))


def _worker_strong(seed, count, out, lock, seen, timings, log):
    rng = np.random.default_rng(seed)
    solver = Solver()
    while True:
        with lock:
            if len(out) >= count:
                return
        opening = int(rng.integers(STRONG_OPENING[0], STRONG_OPENING[1] + 1))
        moves = _random_position(rng, solver, opening)
        if moves is None:
            continue
        while len(moves) <= 30:
            ply = len(moves)
            keep = ply >= 12 and rng.random() < STRONG_KEEP
            noisy = rng.random() < STRONG_NOISE
            heights = np.bincount(np.asarray(moves, np.int64), minlength=solver.width)
            legal = [c for c in range(solver.width) if heights[c] < solver.height]
            if keep or not noisy:  # a random move at a position not kept needs no solve
                t0 = time.perf_counter()
                s = solver.scores(moves)
                dt = time.perf_counter() - t0
                with lock:
                    timings.append((ply, dt))
                    key = tuple(moves)
                    if keep and informative(s) and key not in seen:
                        seen.add(key)
                        if len(out) < count:
                            out.append({"moves": list(moves), "scores": s.tolist()})
                            if len(out) % 50 == 0:
                                log(len(out))
            if noisy:
                c = legal[rng.integers(len(legal))]
            else:
                best = max(s[c] for c in legal)
                opt = [c for c in legal if s[c] == best]
                c = opt[rng.integers(len(opt))]
            moves.append(int(c))
            if solver.status(moves) != 0:
                break


def timing_table(timings, buckets=((8, 10), (11, 13), (14, 16), (17, 19), (20, 22), (23, 26), (27, 30))):
    """Markdown table of the per-position solve time (all moves scored) by ply bucket."""
    lines = [
        "| plies | positions | median ms | p90 ms | max ms | positions/s |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for lo, hi in buckets:
        t = np.array([dt for ply, dt in timings if lo <= ply <= hi])
        if t.size == 0:
            continue
        lines.append(
            f"| {lo}-{hi} | {t.size} | {1e3 * np.median(t):.1f} | {1e3 * np.percentile(t, 90):.1f} | "
            f"{1e3 * t.max():.1f} | {t.size / t.sum():.1f} |"
        )
    return "\n".join(lines)


def make_set(
    which: str, count: int, workers: int = 2, path=None, timings_path=None, seed=None, per_ply=None, extend=False
):
    """Build position set ``which`` ("random" or "strong") with ``workers`` threads; returns (rows, timings).

    ``per_ply`` (random set only): at most that many positions a ply (``count`` becomes 15 x it);
    ``extend``: start from the rows already in ``path`` and add to them.
    """
    target = _worker_random if which == "random" else _worker_strong
    seed = (RANDOM_SEED if which == "random" else STRONG_SEED) if seed is None else seed
    out: list[dict] = []
    timings: list[tuple[int, float]] = []
    seen: set = set()
    if extend and path is not None and Path(path).exists():
        out = load_set(path)
        seen = {tuple(r["moves"]) for r in out}
    extra = ()
    if per_ply is not None:
        count = 15 * per_ply
        extra = (per_ply,)
    lock = threading.Lock()
    t0 = time.perf_counter()

    def log(k):
        print(f"[{which}] {k} positions, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        if path is not None and k % 100 == 0:  # a partial file others can use meanwhile
            save_set(path, sorted(out, key=lambda r: (len(r["moves"]), r["moves"])))

    Solver(4, 4).scores([0])  # compile (or load the cache) once, before the threads
    threads = [
        threading.Thread(target=target, args=(seed * 1000 + i, count, out, lock, seen, timings, log, *extra))
        for i in range(workers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = sorted(out, key=lambda r: (len(r["moves"]), r["moves"]))
    if path is not None:
        save_set(path, rows)
    if timings_path is not None:
        with open(timings_path, "w") as f:
            json.dump(timings, f)
    return rows, timings


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("analyze", help="score every move of positions read from stdin (1-based digits)")
    a.add_argument("--width", type=int, default=7)
    a.add_argument("--height", type=int, default=6)
    m = sub.add_parser("make-sets", help="build the labelled position sets in benchmarks/data")
    m.add_argument("--which", choices=["random", "strong", "both"], default="both")
    m.add_argument("--count", type=int, default=1200)
    m.add_argument("--workers", type=int, default=2)
    m.add_argument("--out-dir", type=Path, default=DATA)
    m.add_argument("--seed", type=int, default=None)
    m.add_argument("--per-ply", type=int, default=None, help="random set: this many positions a ply (plies 8-22)")
    m.add_argument("--extend", action="store_true", help="add to the rows already in the set file")
    m.add_argument("--timings-dir", type=Path, default=None, help="write each position's (ply, seconds) here")
    args = ap.parse_args(argv)
    if args.cmd == "analyze":
        solver = Solver(args.width, args.height)
        for line in sys.stdin:
            pos = line.strip()
            if not pos:
                continue
            try:
                s = solver.scores(parse_digits(pos))
            except ValueError as e:
                print(f"{pos} error: {e}", file=sys.stderr)
                continue
            print(pos, *s.tolist(), flush=True)
        return 0
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for which in ["random", "strong"] if args.which == "both" else [args.which]:
        path = args.out_dir / f"connect4_{which}.jsonl"
        rows, timings = make_set(
            which,
            args.count,
            args.workers,
            path,
            None if args.timings_dir is None else args.timings_dir / f"connect4_{which}_timings.json",
            args.seed,
            args.per_ply,
            args.extend,
        )
        print(f"{which}: {len(rows)} positions -> {path}")
        print(timing_table(timings))
    return 0


if __name__ == "__main__":
    # Run the kernels from the module imported under its own name, never as __main__: numba's
    # on-disk cache records the defining module's name, and entries written under "__main__"
    # (or under a test's alias) fail to load from the other.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import connect4_solver

    sys.exit(connect4_solver.main())
