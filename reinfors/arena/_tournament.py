"""Tournaments and gating over the pooled :class:`reinfors.arena.Arena` (issue 32; beyond 0.4.0).

Public through ``rf.arena``: :class:`Tournament` (round robin, or a gauntlet against a fixed
pool) plays every pairing as one Arena match and fits Elo ratings (:mod:`reinfors.ratings`);
:func:`gate` answers "is the candidate stronger than the incumbent?" with an SPRT, playing the
match in chunks and stopping as soon as the test decides.

Seeds: pairing ``(i, j)`` (indices in the contestants mapping) plays with
``_mix64(seed, i, j, _PAIRING_SEED)``; the gate's chunk ``k`` with ``_mix64(seed, k, _GATE_SEED)``.
So a tournament of deterministic contestants is reproducible per seed, pairing by pairing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._seeds import _mix64
from ..ratings import Ratings, Record, Results, Sprt, fit
from ._arena import Arena, External

__all__ = ["GateResult", "Tournament", "TournamentResult", "gate"]

_PAIRING_SEED, _GATE_SEED = 4, 5  # hash domains (_arena.py uses 1-3)


def _even_games(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2 or value % 2:
        raise ValueError(f"{name} must be an even integer >= 2 (openings are played from both seats; got {value!r})")
    return int(value)


def _is_external(c: Any) -> bool:
    return isinstance(c, External)


@dataclass
class TournamentResult:
    """Every pairing's :class:`ArenaResult` (``matches[(a, b)]``, contestant 0 = ``a``) and the
    W/D/L counts (``results``); :meth:`ratings` fits Elo.

    Attributes:
        results (Results): the W/D/L counts of every pairing.
        matches (dict[tuple[str, str], ArenaResult]): each pairing's games, contestant 0 = ``a``.
    """

    results: Results
    matches: dict[tuple[str, str], Any] = field(repr=False)

    def ratings(self, anchor: str | None = None, **kw: Any) -> Ratings:
        """:func:`reinfors.ratings.fit` on the results.

        Args:
            anchor: the contestant fixed at Elo 0; ``None`` is the first contestant.
            **kw: further :func:`reinfors.ratings.fit` keywords (``confidence``, ``prior_draws``).

        Returns:
            The fitted ratings.
        """
        return fit(self.results, anchor=anchor, **kw)


class Tournament:
    """Plays every pairing of named contestants as a pooled, paired Arena match.

    ``contestants`` maps names to Arena contestants (``(policy, infer, gamma)`` or
    :class:`External`, at most one External per pairing).  Round robin by default; with ``pool``
    (a sequence of names) it is a gauntlet: every contestant outside the pool plays every pool
    member, and pool members do not play each other.  ``games_per_pair`` (even) games per pairing;
    ``n_slots``, ``start``, ``batch_delay`` and ``n_threads`` are the Arena's.

    Args:
        game: a two-player sequential game.
        reward: reward weights, or ``None`` for the game's defaults.
        contestants: ``{name: (policy, infer, gamma) or External}``, at least two.
        games_per_pair: games per pairing, even.
        pool: names of a gauntlet's pool; ``None`` is a round robin.
        n_slots: games played at once per match.
        start: an opening generator, or ``None``.
        seed: the tournament's seed (each pairing derives its own).
        batch_delay: as for :class:`~reinfors.Arena`.
        n_threads: as for :class:`~reinfors.Arena` (0: one per core).

    Raises:
        ValueError: fewer than two contestants, an empty or non-str name, an odd
            ``games_per_pair``, a bad ``pool``, two External contestants in one pairing, or
            what ``Arena`` refuses.
    """

    def __init__(
        self,
        game: Any,
        reward: Any,
        contestants: Mapping[str, Any],
        games_per_pair: int = 100,
        *,
        pool: Sequence[str] | None = None,
        n_slots: int = 16,
        start: Any = None,
        seed: int = 0,
        batch_delay: float = 0.0,
        n_threads: int = 0,
    ) -> None:
        if not isinstance(contestants, Mapping):
            raise ValueError(f"contestants must be a mapping of names to contestants (got {type(contestants).__name__})")
        names = list(contestants)
        if len(names) < 2:
            raise ValueError(f"contestants must hold at least two entries (got {len(names)})")
        for n in names:
            if not isinstance(n, str) or not n:
                raise ValueError(f"contestant names must be non-empty strings (got {n!r})")
        self.games_per_pair = _even_games("games_per_pair", games_per_pair)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"seed must be an integer (got {seed!r})")
        if pool is not None:
            if isinstance(pool, str) or not isinstance(pool, Sequence):
                raise ValueError(f"pool must be a sequence of contestant names (got {pool!r})")
            unknown = [p for p in pool if p not in contestants]
            if unknown:
                raise ValueError(f"pool names unknown contestants: {unknown}")
            if not pool or len(set(pool)) == len(names):
                raise ValueError("pool must name at least one contestant and leave at least one outside it")
            pairs = [(a, b) for a in names if a not in pool for b in names if b in pool]
        else:
            pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
        for a, b in pairs:
            if _is_external(contestants[a]) and _is_external(contestants[b]):
                raise ValueError(f"pairing ({a!r}, {b!r}) has two External contestants; an Arena takes at most one")
        # validates game, reward, contestants, n_slots, start and batch_delay once, up front
        self._arenas = {
            (a, b): Arena(
                game,
                reward,
                [contestants[a], contestants[b]],
                n_slots=n_slots,
                start=start,
                seed=0,
                batch_delay=batch_delay,
                n_threads=n_threads,
            )
            for a, b in pairs
        }
        self.names = names
        self.pairs = pairs
        self.pool = None if pool is None else list(pool)
        self.seed = int(seed)

    def play(self, *, progress: bool | None = None) -> TournamentResult:
        """Play every pairing (in :attr:`pairs` order).

        Args:
            progress: show a progress bar per match (``None``: the Arena's default).

        Returns:
            Every match and the W/D/L counts.
        """
        results = Results(self.names)
        matches = {}
        for (a, b), arena in self._arenas.items():
            arena._seed = _mix64(self.seed, self.names.index(a), self.names.index(b), _PAIRING_SEED)
            res = arena.play(self.games_per_pair, progress=progress)
            results.add_arena(a, b, res)
            matches[(a, b)] = res
        return TournamentResult(results, matches)


@dataclass
class GateResult:
    """The outcome of :func:`gate`.

    ``accepted`` is True only when the SPRT accepted H1 (the candidate is at least ``elo1``
    stronger); ``decision`` is ``"H1"``, ``"H0"`` or None (``max_games`` reached undecided, which
    rejects).  ``record`` is the candidate's W/D/L over every game played (a chunk is played
    whole, so it may hold a few games past the deciding pair); ``sprt`` the test itself;
    ``elo``/``ci`` the candidate's fitted gap and its 95 % half-width.

    Attributes:
        accepted (bool): the SPRT accepted H1.
        decision (str | None): ``"H1"``, ``"H0"`` or None (undecided at ``max_games``).
        games (int): games played.
        record (Record): the candidate's W/D/L against the incumbent.
        elo (float): the candidate's fitted Elo gap.
        ci (float): the gap's 95 % half-width.
        sprt (Sprt): the test itself.
    """

    accepted: bool
    decision: str | None
    games: int
    record: Record
    elo: float
    ci: float
    sprt: Sprt = field(repr=False)


def gate(
    game: Any,
    reward: Any,
    candidate: Any,
    incumbent: Any,
    *,
    elo0: float = 0.0,
    elo1: float = 10.0,
    alpha: float = 0.05,
    beta: float = 0.05,
    chunk_games: int = 32,
    max_games: int = 1000,
    n_slots: int = 16,
    start: Any = None,
    seed: int = 0,
    n_threads: int = 0,
) -> GateResult:
    """Is ``candidate`` stronger than ``incumbent``?  An SPRT of ``H0: elo = elo0`` against
    ``H1: elo = elo1`` (the candidate's Elo gap; error rates ``alpha`` / ``beta``), played through
    the Arena ``chunk_games`` games at a time and stopped at the first chunk where it decides, or
    at ``max_games``.  Each opening pair (both seats) is one SPRT unit, so the openings'
    correlation is accounted for.  Contestants are Arena contestants.

    Args:
        game: a two-player sequential game.
        reward: reward weights, or ``None`` for the game's defaults.
        candidate: the new contestant (``(policy, infer, gamma)`` or ``External``).
        incumbent: the contestant to beat.
        elo0: the Elo gap of H0.
        elo1: the Elo gap of H1 (> ``elo0``).
        alpha: the false-acceptance rate, in (0, 1).
        beta: the false-rejection rate, in (0, 1).
        chunk_games: games per Arena call (even).
        max_games: the cap on games (even); reaching it undecided rejects.
        n_slots: games played at once.
        start: an opening generator, or ``None``.
        seed: the gate's seed.
        n_threads: the Arena's threads (0: one per core).

    Returns:
        The decision, the games played, the record and the fitted Elo gap.

    Raises:
        ValueError: an odd ``chunk_games`` / ``max_games``, a non-int ``seed``, SPRT bounds out
            of range, or what ``Arena`` refuses.
    """
    sprt = Sprt(elo0, elo1, alpha, beta)
    chunk = _even_games("chunk_games", chunk_games)
    cap = _even_games("max_games", max_games)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer (got {seed!r})")
    arena = Arena(game, reward, [candidate, incumbent], n_slots=n_slots, start=start, seed=0, n_threads=n_threads)
    results = Results(["candidate", "incumbent"])
    played, k = 0, 0
    while sprt.decision is None and played < cap:
        n = min(chunk, cap - played)
        arena._seed = _mix64(seed, k, _GATE_SEED)
        res = arena.play(n, progress=False)
        results.add_arena("candidate", "incumbent", res)
        p = np.array([g.payoffs[:2] for g in res.games], dtype=np.float64)  # sorted by game_id
        s = np.where(p[:, 0] > p[:, 1], 1.0, np.where(p[:, 0] < p[:, 1], 0.0, 0.5))
        sprt.update(s.reshape(-1, 2).mean(axis=1))  # games 2k and 2k+1 share opening k
        played += n
        k += 1
    rec = results.record("candidate", "incumbent")
    elo, ci = fit(results, anchor="incumbent").gap("candidate", "incumbent")
    return GateResult(sprt.decision == "H1", sprt.decision, played, rec, elo, ci, sprt)
