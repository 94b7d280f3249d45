"""``rf.ratings`` — Elo ratings with confidence intervals, and a sequential gating test.

An addition beyond 0.4.0 (issue 32).  Pure Python/NumPy; nothing here plays games (see
:class:`reinfors.arena.Tournament` and :func:`reinfors.arena.gate` for that).

The model
---------
Ratings are on the **logistic Elo scale**: a gap of ``d`` Elo means an expected score of
``1 / (1 + 10 ** (-d / 400))`` per game (a win scores 1, a draw 1/2, a loss 0).

Draws count as **half-points**: the maximum-likelihood fit maximises
``sum_ij s_ij log p_ij + (n_ij - s_ij) log(1 - p_ij)`` over the pairings, ``s_ij`` being i's score
(wins + draws / 2) over ``n_ij`` games against j.  Why half-points rather than Davidson's
ties model: the fitted gap then *is* the Elo of the observed score (76 % ↔ +200, the convention
rating lists, fishtest and the SPRT below all use), whatever the draw rate, whereas a Davidson
gap maps to a score through the fitted draw parameter and is not comparable between a drawish
game and a decisive one.  Treating a draw as half a win and half a loss overstates a game's
variance, though (a trinomial score has variance ``p(1-p) - d/4`` with draw rate ``d``, the
Bernoulli model assumes ``p(1-p)``), so the covariance is the *sandwich* ``H⁻¹ B H⁻¹`` — ``H`` the
Hessian of the half-point log-likelihood, ``B`` the score's variance with each pairing's observed
draw rate.  Without draws it is exactly the inverse Fisher information; with draws the intervals
are correctly narrower.  Intervals are ``elo ± z · sqrt(var)`` (``z`` = 1.96 at 95 %), relative to
the **anchor** (rated 0 with no uncertainty, so every other interval is the interval of its gap
to the anchor).

A contestant that wins (or loses) every game has no finite maximum; ``prior_draws`` (default 0.5)
adds that many virtual draws to every pairing that was played, which keeps ratings finite and
shifts a 200-game estimate by well under an Elo point.  With ``prior_draws=0`` such results raise
``ValueError``.

Gating: :class:`Sprt` is the sequential probability ratio test of ``H0: elo = elo0`` against
``H1: elo = elo1`` with the generalised (normal-approximation) log-likelihood ratio of
Van den Bergh, as used by fishtest: ``LLR = n (s1 - s0) (2 m - s0 - s1) / (2 v)``, ``m`` and ``v``
the mean and variance of the observed per-unit scores, ``s0``/``s1`` the expected scores of
``elo0``/``elo1``.  It stops at ``LLR >= log((1 - beta) / alpha)`` (accept H1) or
``LLR <= log(beta / (1 - alpha))`` (accept H0), Wald's bounds.  Units may be single games or game
pairs (the Arena plays each opening from both seats; a pair's mean score is then one unit, the
"pentanomial" treatment, which accounts for the openings' correlation).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Ratings", "Record", "Results", "Sprt", "elo_to_score", "fit", "score_to_elo"]

_C = math.log(10.0) / 400.0  # d(log-odds) / d(Elo)


def elo_to_score(elo: Any) -> Any:
    """Expected score per game of an ``elo`` gap (logistic Elo): ``1 / (1 + 10**(-elo/400))``.

    Args:
        elo: an Elo gap, or an array of them.

    Returns:
        The expected score per game, a float64 array of ``elo``'s shape (0-d for a scalar).
    """
    return 1.0 / (1.0 + np.power(10.0, -np.asarray(elo, dtype=np.float64) / 400.0))


def score_to_elo(score: Any) -> Any:
    """The Elo gap whose expected score is ``score`` (in (0, 1); ±inf at 1 and 0).

    Args:
        score: an expected score per game, or an array of them.

    Returns:
        The Elo gap, a float64 array of ``score``'s shape (0-d for a scalar).
    """
    s = np.asarray(score, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return -400.0 * np.log10(1.0 / s - 1.0)


def _z(confidence: float) -> float:
    """The two-sided normal quantile of ``confidence`` (bisection on erf; no SciPy)."""
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if math.erf(mid / math.sqrt(2.0)) < confidence:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a non-negative integer (got {value!r})")
    if value < 0:
        raise ValueError(f"{name} must be >= 0 (got {value})")
    return int(value)


def _prob(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1) (got {value!r})") from None
    if not (0.0 < v < 1.0):
        raise ValueError(f"{name} must be in (0, 1) (got {value!r})")
    return v


# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """Wins, draws and losses of contestant ``a`` against contestant ``b``.

    Attributes:
        a (str): the contestant whose record this is.
        b (str): its opponent (``"*"`` for a total over all opponents).
        wins (int): ``a``'s wins.
        draws (int): draws.
        losses (int): ``a``'s losses.
    """

    a: str
    b: str
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        """Games played: ``wins + draws + losses``."""
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """``a``'s mean score per game (win 1, draw 1/2, loss 0); nan with no games."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else float("nan")


class Results:
    """Head-to-head W/D/L counts between named contestants, accumulated match by match.

    ``add(a, b, wins, draws, losses)`` records ``a``'s results against ``b`` (the same counts,
    mirrored, are ``b``'s against ``a``); ``add_arena(a, b, result)`` scores an
    :class:`reinfors.arena.ArenaResult` whose contestant 0 is ``a`` (a game is a win for the
    contestant with the larger payoff, a draw when the payoffs are equal).

    Args:
        names: contestants to register up front (the order of first appearance is the
            table's order).

    Raises:
        ValueError: an empty or non-str name.
    """

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: list[str] = []
        self._wdl: dict[tuple[str, str], list[int]] = {}
        for n in names:
            self._add_name(n)

    def _add_name(self, name: Any) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"contestant names must be non-empty strings (got {name!r})")
        if name not in self._names:
            self._names.append(name)

    @property
    def names(self) -> list[str]:
        """Every contestant seen, in order of first appearance."""
        return list(self._names)

    def add(self, a: str, b: str, wins: int = 0, draws: int = 0, losses: int = 0) -> None:
        """Add ``a``'s ``wins``/``draws``/``losses`` against ``b``.

        Args:
            a: the contestant whose results these are.
            b: its opponent.
            wins: ``a``'s wins.
            draws: draws.
            losses: ``a``'s losses.

        Raises:
            ValueError: ``a == b``, a bad name, or a negative or non-int count.
        """
        self._add_name(a)
        self._add_name(b)
        if a == b:
            raise ValueError(f"a contestant cannot play itself (a == b == {a!r})")
        w, d, l = _count("wins", wins), _count("draws", draws), _count("losses", losses)
        key, flip = ((a, b), False) if self._names.index(a) < self._names.index(b) else ((b, a), True)
        row = self._wdl.setdefault(key, [0, 0, 0])
        row[0] += l if flip else w
        row[1] += d
        row[2] += w if flip else l

    def add_arena(self, a: str, b: str, result: Any) -> Record:
        """Score an ``ArenaResult`` (contestant 0 is ``a``, 1 is ``b``); returns ``a``'s record.

        Args:
            a: contestant 0 of the match.
            b: contestant 1.
            result: an ``ArenaResult``.

        Returns:
            ``a``'s record in this match.

        Raises:
            ValueError: ``result`` is not an ``ArenaResult``.
        """
        games = getattr(result, "games", None)
        if games is None:
            raise ValueError(f"result must be an ArenaResult (got {type(result).__name__})")
        p = np.array([g.payoffs[:2] for g in games], dtype=np.float64).reshape(-1, 2)
        w, l = int(np.sum(p[:, 0] > p[:, 1])), int(np.sum(p[:, 0] < p[:, 1]))
        d = len(p) - w - l
        self.add(a, b, w, d, l)
        return Record(a, b, w, d, l)

    def record(self, a: str, b: str) -> Record:
        """``a``'s W/D/L against ``b`` (zeros when they never played).

        Args:
            a: a contestant.
            b: its opponent.

        Returns:
            ``a``'s record against ``b``.
        """
        if (a, b) in self._wdl:
            w, d, l = self._wdl[(a, b)]
            return Record(a, b, w, d, l)
        w, d, l = self._wdl.get((b, a), (0, 0, 0))
        return Record(a, b, l, d, w)

    def records(self) -> list[Record]:
        """Every played pairing once, in the order the pairs first appeared.

        Returns:
            One record per pairing.
        """
        return [Record(a, b, *v) for (a, b), v in self._wdl.items()]

    def totals(self, name: str) -> Record:
        """``name``'s W/D/L summed over all its opponents (``b`` is ``"*"``).

        Args:
            name: a contestant.

        Returns:
            Its summed record.
        """
        w = d = l = 0
        for other in self._names:
            if other != name:
                r = self.record(name, other)
                w, d, l = w + r.wins, d + r.draws, l + r.losses
        return Record(name, "*", w, d, l)

    def merge(self, other: Results) -> None:
        """Add every record of ``other`` into this one.

        Args:
            other: the results to add.
        """
        for r in other.records():
            self.add(r.a, r.b, r.wins, r.draws, r.losses)

    def fit(self, anchor: str | None = None, **kw: Any) -> Ratings:
        """:func:`fit` on these results.

        Args:
            anchor: the contestant rated 0; ``None`` is the first contestant.
            **kw: further :func:`fit` keywords (``confidence``, ``prior_draws``).

        Returns:
            The fitted ratings.
        """
        return fit(self, anchor=anchor, **kw)


# -- maximum likelihood ---------------------------------------------------------------------------


def _strongly_connected(wins_over: np.ndarray) -> bool:
    """Whether the directed graph ``i -> j`` iff ``wins_over[i, j]`` reaches every node from every node."""
    n = len(wins_over)

    def reach(adj: np.ndarray) -> int:
        seen = np.zeros(n, bool)
        seen[0] = True
        stack = [0]
        while stack:
            i = stack.pop()
            for j in np.flatnonzero(adj[i] & ~seen):
                seen[j] = True
                stack.append(int(j))
        return int(seen.sum())

    return reach(wins_over) == n and reach(wins_over.T) == n


@dataclass
class Ratings:
    """Fitted Elo ratings (see the module docstring for the model).

    ``elo[i]`` is ``names[i]``'s rating relative to ``anchor`` (0); ``ci[i]`` the half-width of its
    ``confidence`` interval; ``cov`` the ``[n, n] float64`` covariance of the ratings (the anchor's
    row and column are 0).  ``results`` are the counts that were fitted.

    Attributes:
        names (list[str]): the contestants.
        elo (numpy.ndarray): float64 ``(n,)``: each contestant's Elo relative to ``anchor``.
        ci (numpy.ndarray): float64 ``(n,)``: each rating's interval half-width.
        cov (numpy.ndarray): float64 ``(n, n)``: the ratings' covariance.
        anchor (str): the contestant rated 0.
        confidence (float): the intervals' confidence.
        results (Results): the counts that were fitted.
    """

    names: list[str]
    elo: np.ndarray
    ci: np.ndarray
    cov: np.ndarray
    anchor: str
    confidence: float
    results: Results = field(repr=False)

    def __getitem__(self, name: str) -> tuple[float, float]:
        """``(elo, ci half-width)`` of ``name``."""
        i = self._index(name)
        return float(self.elo[i]), float(self.ci[i])

    def _index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise ValueError(f"unknown contestant {name!r} (known: {', '.join(self.names)})") from None

    def gap(self, a: str, b: str) -> tuple[float, float]:
        """``(elo[a] - elo[b], ci half-width of that gap)``.

        Args:
            a: a contestant.
            b: another contestant.

        Returns:
            ``(elo[a] - elo[b], ci half-width of that gap)``.

        Raises:
            ValueError: an unknown contestant.
        """
        i, j = self._index(a), self._index(b)
        var = self.cov[i, i] + self.cov[j, j] - 2.0 * self.cov[i, j]
        return float(self.elo[i] - self.elo[j]), float(_z(self.confidence) * math.sqrt(max(var, 0.0)))

    def rows(self) -> list[dict[str, Any]]:
        """One dict per contestant, best first: name, games, wins, draws, losses, score, elo, ci.

        Returns:
            The rows, best first.
        """
        out = []
        for i in np.argsort(-self.elo, kind="stable"):
            t = self.results.totals(self.names[i])
            out.append(
                {
                    "name": self.names[i],
                    "games": t.games,
                    "wins": t.wins,
                    "draws": t.draws,
                    "losses": t.losses,
                    "score": t.score,
                    "elo": float(self.elo[i]),
                    "ci": float(self.ci[i]),
                }
            )
        return out

    def table(self) -> str:
        """The ratings as an aligned text table (W/D/L, score, Elo ± CI), best first.

        Returns:
            The table's text.
        """
        pct = f"{self.confidence * 100:g}%"
        head = f"{'name':<16} {'games':>6} {'W':>6} {'D':>6} {'L':>6} {'score':>6} {'elo':>8}  ± {pct} CI"
        lines = [head, "-" * len(head)]
        for r in self.rows():
            ci = "anchor" if r["name"] == self.anchor else f"{r['ci']:.1f}"
            lines.append(
                f"{r['name']:<16} {r['games']:>6} {r['wins']:>6} {r['draws']:>6} {r['losses']:>6} "
                f"{r['score']:>6.3f} {r['elo']:>8.1f}  ± {ci}"
            )
        return "\n".join(lines)

    __str__ = table

    def to_json(self) -> str:
        """The table, the anchor, the confidence and every pairing's record, as JSON.

        Returns:
            A JSON document.
        """
        return json.dumps(
            {
                "anchor": self.anchor,
                "confidence": self.confidence,
                "ratings": self.rows(),
                "pairings": [r.__dict__ for r in self.results.records()],
            },
            indent=2,
        )

    def to_csv(self) -> str:
        """The table as CSV (header: name,games,wins,draws,losses,score,elo,ci).

        Returns:
            The CSV text.
        """
        buf = io.StringIO()
        rows = self.rows()
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue()

    def plot(self, ax: Any = None, order: Sequence[str] | None = None) -> Any:
        """Elo with error bars (matplotlib required); ``order`` picks and orders the x axis
        (e.g. checkpoints in training order; default best first).  Returns the axes.

        Args:
            ax: matplotlib axes to draw into; ``None`` makes a figure.
            order: the contestants on the x axis, in order; ``None`` is best first.

        Returns:
            The matplotlib axes.

        Raises:
            ImportError: matplotlib is not installed.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as e:  # optional dependency
            raise ImportError("Ratings.plot needs matplotlib (pip install matplotlib)") from e
        names = list(order) if order is not None else [r["name"] for r in self.rows()]
        idx = [self._index(n) for n in names]
        if ax is None:
            _, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(names)), 3.5))
        ax.errorbar(range(len(idx)), self.elo[idx], yerr=self.ci[idx], fmt="o-", capsize=3)
        ax.set_xticks(range(len(idx)))
        ax.set_xticklabels(names, rotation=45, ha="right")
        ax.set_ylabel(f"Elo vs {self.anchor} (±{self.confidence * 100:g}% CI)")
        ax.grid(alpha=0.3)
        return ax


def fit(
    results: Results | Iterable[Record | tuple],
    anchor: str | None = None,
    *,
    confidence: float = 0.95,
    prior_draws: float = 0.5,
) -> Ratings:
    """Maximum-likelihood Elo ratings of every contestant in ``results``.

    ``results`` is a :class:`Results`, or records ``(a, b, wins, draws, losses)``.  ``anchor``
    (default: the first contestant) is rated 0; ``confidence`` in (0, 1) sets the interval;
    ``prior_draws`` >= 0 virtual draws are added to every played pairing (see the module
    docstring).  Raises ``ValueError`` when the contestants do not form one connected pool, or
    (``prior_draws=0``) when a group of them scored 0 or 100 % against the rest.

    Args:
        results: the W/D/L counts.
        anchor: the contestant rated 0; ``None`` is the first.
        confidence: the intervals' confidence, in (0, 1).
        prior_draws: virtual draws added to every played pairing (>= 0).

    Returns:
        The ratings, their intervals and covariance.

    Raises:
        ValueError: no games, an unknown anchor, a bad ``confidence`` / ``prior_draws``, a pool
            that is not connected, or (``prior_draws=0``) a group scoring 0 or 100 %.
    """
    if not isinstance(results, Results):
        res = Results()
        for r in results:
            if isinstance(r, Record):
                res.add(r.a, r.b, r.wins, r.draws, r.losses)
            else:
                res.add(*r)
        results = res
    confidence = _prob("confidence", confidence)
    try:
        prior = float(prior_draws)
    except (TypeError, ValueError):
        raise ValueError(f"prior_draws must be a finite number >= 0 (got {prior_draws!r})") from None
    if not (math.isfinite(prior) and prior >= 0.0):
        raise ValueError(f"prior_draws must be a finite number >= 0 (got {prior_draws!r})")
    names = results.names
    if len(names) < 2:
        raise ValueError(f"results must hold at least two contestants (got {len(names)})")
    if anchor is None:
        anchor = names[0]
    if anchor not in names:
        raise ValueError(f"anchor {anchor!r} is not a contestant (known: {', '.join(names)})")
    n = len(names)
    games = np.zeros((n, n))  # [n, n] games played between i and j (symmetric)
    score = np.zeros((n, n))  # [n, n] i's points against j (wins + draws / 2)
    draws = np.zeros((n, n))  # [n, n] draws between i and j (symmetric)
    for r in results.records():
        i, j = names.index(r.a), names.index(r.b)
        g = r.games + prior
        games[i, j] = games[j, i] = g
        draws[i, j] = draws[j, i] = r.draws + prior
        score[i, j] = r.wins + 0.5 * (r.draws + prior)
        score[j, i] = r.losses + 0.5 * (r.draws + prior)
    played = games > 0
    if not _strongly_connected(played):
        raise ValueError("the contestants do not form one connected pool (some groups never played each other)")
    if not _strongly_connected(score > 0):
        raise ValueError(
            "a group of contestants scored 100 % (or 0 %) against the rest, so their Elo is unbounded; "
            "pass prior_draws > 0 or play more games"
        )
    a = names.index(anchor)
    free = np.array([i for i in range(n) if i != a])
    theta = np.zeros(n)  # Elo

    def loglik(t: np.ndarray) -> float:
        d = (t[:, None] - t[None, :]) * _C
        # log p = -log(1 + e^-d), stable
        return float(np.sum(score * -np.logaddexp(0.0, -d)))

    ll = loglik(theta)
    for _ in range(100):
        d = (theta[:, None] - theta[None, :]) * _C
        p = 1.0 / (1.0 + np.exp(-d))
        grad = _C * np.sum(score - games * p, axis=1)
        w = _C * _C * games * p * (1.0 - p)  # information per pairing
        info = np.diag(w.sum(axis=1)) - w  # [n, n] observed information (graph Laplacian)
        step = np.zeros(n)
        step[free] = np.linalg.solve(info[np.ix_(free, free)], grad[free])
        t = 1.0
        while True:  # the log-likelihood is concave: backtrack until it does not decrease
            cand = theta + t * step
            ll_c = loglik(cand)
            if ll_c >= ll - 1e-12 or t < 1e-8:
                break
            t *= 0.5
        theta, ll = cand, ll_c
        if np.max(np.abs(t * step)) < 1e-9:
            break
    d = (theta[:, None] - theta[None, :]) * _C
    p = 1.0 / (1.0 + np.exp(-d))
    h = _C * _C * games * p * (1.0 - p)
    info = np.diag(h.sum(axis=1)) - h
    # the score's variance per game: p(1-p) - (draw rate)/4, floored for pairings that drew every game
    var_game = np.maximum(p * (1.0 - p) - 0.25 * np.divide(draws, games, out=np.zeros_like(games), where=played), 1e-12)
    b = _C * _C * games * var_game
    meat = np.diag(b.sum(axis=1)) - b
    inv = np.linalg.inv(info[np.ix_(free, free)])
    cov = np.zeros((n, n))
    cov[np.ix_(free, free)] = inv @ meat[np.ix_(free, free)] @ inv
    ci = _z(confidence) * np.sqrt(np.maximum(np.diag(cov), 0.0))
    return Ratings(names, theta, ci, cov, anchor, confidence, results)


# -- sequential test --------------------------------------------------------------------------------


class Sprt:
    """Sequential probability ratio test of ``elo <= elo0`` against ``elo >= elo1`` (logistic Elo).

    Feed it scores with :meth:`update` (per game, or per game pair — see the module docstring)
    or :meth:`update_wdl`; :attr:`decision` becomes ``"H1"`` (stronger by at least ``elo1``:
    accept the candidate) or ``"H0"`` (not stronger than ``elo0``: reject it) as soon as the
    log-likelihood ratio crosses Wald's bounds, which hold the false-acceptance rate near
    ``alpha`` (at ``elo0``) and the false-rejection rate near ``beta`` (at ``elo1``).  Once decided,
    further updates do not change the decision.

    ``prior_units`` virtual units scoring 0 and 1 (half each) regularise the variance so the
    very first identical scores (all wins, say) cannot decide the test on their own.

    Args:
        elo0: the Elo gap of H0.
        elo1: the Elo gap of H1 (> ``elo0``).
        alpha: the false-acceptance rate, in (0, 1).
        beta: the false-rejection rate, in (0, 1); ``alpha + beta < 1``.
        prior_units: virtual units regularising the variance (finite, >= 0).

    Raises:
        ValueError: a bound that is not finite, ``elo1 <= elo0``, a rate out of range, or a bad
            ``prior_units``.
    """

    def __init__(
        self, elo0: float = 0.0, elo1: float = 10.0, alpha: float = 0.05, beta: float = 0.05, *, prior_units: float = 1.0
    ) -> None:
        for name, v in (("elo0", elo0), ("elo1", elo1)):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
                raise ValueError(f"{name} must be a finite number of Elo (got {v!r})")
        if not elo1 > elo0:
            raise ValueError(f"elo1 must be > elo0 (got elo0={elo0}, elo1={elo1})")
        self.alpha = _prob("alpha", alpha)
        self.beta = _prob("beta", beta)
        if self.alpha + self.beta >= 1.0:
            raise ValueError(f"alpha + beta must be < 1 (got {self.alpha} + {self.beta})")
        if isinstance(prior_units, bool) or not (
            isinstance(prior_units, (int, float)) and math.isfinite(prior_units) and prior_units >= 0
        ):
            raise ValueError(f"prior_units must be a finite number >= 0 (got {prior_units!r})")
        self.elo0, self.elo1 = float(elo0), float(elo1)
        self.s0, self.s1 = float(elo_to_score(self.elo0)), float(elo_to_score(self.elo1))
        self.lower = math.log(self.beta / (1.0 - self.alpha))
        self.upper = math.log((1.0 - self.beta) / self.alpha)
        self.prior_units = float(prior_units)
        self.n = 0
        self._sum = 0.0
        self._sumsq = 0.0
        self.decision: str | None = None
        self.llr = 0.0

    def update(self, scores: Any) -> str | None:
        """Add per-unit scores (each in [0, 1]); returns :attr:`decision` (None = keep playing).

        Scores are taken in order and the test stops at the first unit that crosses a bound, so
        feeding a chunk gives the same decision as feeding its units one by one.

        Args:
            scores: per-unit scores in [0, 1] (a number or an array).

        Returns:
            ``"H1"``, ``"H0"``, or None while undecided.

        Raises:
            ValueError: a score that is not a finite number in [0, 1].
        """
        x = np.asarray(scores, dtype=np.float64).reshape(-1)
        if x.size and not (np.all(np.isfinite(x)) and x.min() >= 0.0 and x.max() <= 1.0):
            raise ValueError("scores must be finite numbers in [0, 1]")
        if self.decision is not None or x.size == 0:
            return self.decision
        llr = self._llr_path(x)
        hit = np.flatnonzero((llr >= self.upper) | (llr <= self.lower))
        k = int(hit[0]) + 1 if hit.size else x.size
        self.n += k
        self._sum += float(x[:k].sum())
        self._sumsq += float((x[:k] ** 2).sum())
        self.llr = float(llr[k - 1])
        if hit.size:
            self.decision = "H1" if self.llr >= self.upper else "H0"
        return self.decision

    def _llr_path(self, x: np.ndarray) -> np.ndarray:
        """The LLR after each of ``x``'s units, continuing from the current totals."""
        k = self.prior_units
        n = self.n + np.arange(1, x.size + 1) + k
        m = (self._sum + np.cumsum(x) + 0.5 * k) / n
        v = np.maximum((self._sumsq + np.cumsum(x * x) + 0.5 * k) / n - m * m, 1e-12)
        return (n - k) * (self.s1 - self.s0) * (2.0 * m - self.s0 - self.s1) / (2.0 * v)

    def update_wdl(self, wins: int = 0, draws: int = 0, losses: int = 0) -> str | None:
        """:meth:`update` with per-game scores (order: as given, wins then draws then losses —
        use :meth:`update` with the real order when stopping mid-chunk matters).

        Args:
            wins: games won.
            draws: games drawn.
            losses: games lost.

        Returns:
            ``"H1"``, ``"H0"``, or None while undecided.

        Raises:
            ValueError: a negative or non-int count.
        """
        w, d, l = _count("wins", wins), _count("draws", draws), _count("losses", losses)
        return self.update(np.concatenate([np.ones(w), np.full(d, 0.5), np.zeros(l)]))

    @property
    def score(self) -> float:
        """The mean score per unit so far (nan before any)."""
        return self._sum / self.n if self.n else float("nan")

    def __repr__(self) -> str:
        return (
            f"Sprt(elo0={self.elo0:g}, elo1={self.elo1:g}, alpha={self.alpha:g}, beta={self.beta:g}: "
            f"n={self.n}, llr={self.llr:.3f} in [{self.lower:.3f}, {self.upper:.3f}], decision={self.decision})"
        )
