"""The Arena itself (``rf.arena``'s package docstring explains it): the match scheduler, its
records and the External-agent protocol."""


from __future__ import annotations

import numbers
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from math import isfinite, sqrt
from time import monotonic, sleep
from typing import Any

from .._runtime.budget import available_cores
from .._seeds import _mix64
from ..env import Env

__all__ = ["Arena", "ArenaResult", "External", "GameResult", "View"]

_CLOSE_GRACE_S = 5.0  # how long an aborting run waits for agents' close() calls

# hash domains: the second-to-last part of every derived seed
_GAME_SEED, _OPENING_SEED, _CHOOSE_SEED = 1, 2, 3


# -- public records ---------------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    """What an :class:`External` agent is shown when asked to act.

    ``obs`` is ``env.observe(agent)`` (float32 of the game's observation shape),
    ``legal_actions`` the mover's legal action ids, ``agent`` the seat it plays, ``ticks`` the
    number of steps played so far in the game (opening moves included).

    Attributes:
        obs (numpy.ndarray): float32, the game's observation shape: the mover's observation.
        legal_actions (list[int]): the mover's legal action ids.
        agent (int): the seat the contestant plays.
        ticks (int): steps played so far (opening moves included).
    """

    obs: Any
    legal_actions: list[int]
    agent: int
    ticks: int


@dataclass
class GameResult:
    """One finished game.

    Attributes:
        game_id (int): the game's index in the match (0 to ``n_games - 1``).
        opening_id (int): the opening it started from; the two games of a pair share it.
        seats (tuple[int, ...]): ``seats[agent]`` is the contestant playing ``agent``.
        payoffs (tuple[float, ...]): the summed rewards by CONTESTANT index.
        length (int): the game's steps, opening included.
        actions (list[int]): the whole game's actions, opening included.
    """

    game_id: int
    opening_id: int
    seats: tuple[int, ...]
    payoffs: tuple[float, ...]
    length: int
    actions: list[int]


@dataclass
class ArenaResult:
    """All games of one :meth:`Arena.play`, sorted by ``game_id``.

    Attributes:
        games (list[GameResult]): the finished games.
        n_contestants (int): contestants in the match (2).
    """

    games: list[GameResult]
    n_contestants: int = 2

    def payoff(self, contestant: int) -> tuple[float, float]:
        """``(mean, stderr)`` of ``contestant``'s payoff.

        The two games of a pair share an opening, so they are not independent: each pair is
        averaged first and the standard error is taken across pairs (``inf`` with one pair).

        Args:
            contestant: the contestant's index in ``Arena(contestants=...)``.

        Returns:
            ``(mean, stderr)`` over opening pairs.
        """
        by_pair: dict[int, list[float]] = {}
        for g in self.games:
            by_pair.setdefault(g.opening_id, []).append(g.payoffs[contestant])
        means = [sum(v) / len(v) for v in by_pair.values()]
        n = len(means)
        mean = sum(means) / n
        if n == 1:
            return mean, float("inf")
        var = sum((m - mean) ** 2 for m in means) / (n - 1)
        return mean, sqrt(var / n)

    def seat_payoffs(self, contestant: int) -> dict[int, float]:
        """``contestant``'s mean payoff split by the seat it played.

        Args:
            contestant: the contestant's index.

        Returns:
            ``{agent seat: mean payoff}``.
        """
        by_seat: dict[int, list[float]] = {}
        for g in self.games:
            by_seat.setdefault(g.seats.index(contestant), []).append(g.payoffs[contestant])
        return {seat: sum(v) / len(v) for seat, v in by_seat.items()}


# -- external contestants -----------------------------------------------------------------------


class External:
    """A contestant played by outside code: ``factory()`` builds one agent per game.

    The agent must have ``act(view: View) -> int``; it may have ``on_action(action)`` — told, in
    order, every action played in its game (opening moves first, its own moves included), which
    is what a stdin-driven engine needs — and ``close()``, called once its game is over (or the
    run aborts).  Up to ``workers`` agents are alive at once, each on its own worker thread that
    runs the agent's calls one at a time in order.

    ``timeout`` (seconds, None = no limit) bounds each turn from the moment it is dispatched —
    queued ``on_action`` calls included — and equally the end-of-game work (notifications plus
    ``close``).  A turn over budget fails the run with ``TimeoutError``; an agent that raises
    (or returns an illegal action) fails it with ``RuntimeError``.

    Args:
        factory: builds one agent (an object with ``act(view) -> int``) per game.
        workers: agents alive at once, each on its own thread (>= 1).
        timeout: seconds each turn may take; ``None`` is no limit.

    Raises:
        ValueError: ``workers`` below 1, or a ``timeout`` that is not finite and positive.
    """

    def __init__(self, factory: Callable[[], Any], workers: int = 1, timeout: float | None = None) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        if timeout is not None and not (isfinite(timeout) and timeout > 0):
            raise ValueError("timeout must be finite and positive")
        self.factory = factory
        self.workers = workers
        self.timeout = timeout


class _Worker:
    """A daemon thread that runs submitted calls in FIFO order, each resolving a Future."""

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="reinfors-arena-external", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while (item := self._calls.get()) is not None:
            fn, fut = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn())
            except BaseException as e:  # handed to the scheduler through the Future
                fut.set_exception(e)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        self._calls.put(((lambda: fn(*args)), fut))
        return fut

    def stop(self) -> None:
        self._calls.put(None)


# -- the scheduler --------------------------------------------------------------------------------


@dataclass
class _Open:
    """A game being played (or, for an external seat, being finalized)."""

    game_id: int
    opening_id: int
    seats: tuple[int, int]
    env: Env
    payoffs: list[float]  # by agent seat
    actions: list[int]
    agent: Any = None  # the External contestant's per-game agent
    worker: _Worker | None = None
    turn: Future[Any] | None = None  # an act() in flight
    turn_since: float = 0.0
    notes: list[Future[Any]] = field(default_factory=list)  # on_action calls not yet checked


@dataclass
class _Closing:
    """A finished game whose worker still runs its last notifications and ``close``."""

    game: _Open
    contestant: int
    futures: list[Future[Any]]
    deadline: float | None


class Arena:
    """Paired, batched evaluation of two contestants (see the module docstring).

    ``contestants`` is a sequence of exactly two entries, each ``(policy, infer, gamma)`` — a
    :class:`PolicyHandle`, its inference callable and the discount the model was trained with —
    or an :class:`External` (at most one).  ``start`` is an opening generator such as
    :class:`reinfors.starts.RandomStartingMoves` (None = the game's own initial state);
    ``batch_delay`` (seconds) lets searched batches wait that long for external agents still
    thinking, so fewer, larger batches go out.

    Args:
        game: a two-player sequential game (``rf.games.Connect4()``, ...).
        reward: reward weights (``rf.Reward``), or ``None`` for the game's defaults.
        contestants: two entries, each ``(policy, infer, gamma)`` or an :class:`External`.
        n_slots: games played at once (>= 1).
        start: an opening generator (``generate(game, reward, seed)``), or ``None``.
        seed: the seed of the openings and of the searches' random streams.
        batch_delay: seconds searched batches may wait for external agents (finite, >= 0).
        n_threads: threads that search a match's games (beyond 0.4.0): 0 is one per core (at
            most 8); 1 searches on the calling thread only.  Two deterministic contestants
            (greedy searches: Minimax, Mcts / AlphaZero at temperature 0 without root noise,
            EpsilonGreedyQ at epsilon 0) split every pooled search over the threads in parts of
            at least 32 games (a match of fewer than 64 slots stays on one thread) once their
            callbacks' first calls show CPU callbacks (an accelerator-like one, which leaves its
            thread waiting, keeps one batch per round); the games are the same at any
            ``n_threads``.  A contestant's callback is never called twice at once, but may be
            called on a match thread.

    Raises:
        TypeError: a ``start`` without ``generate``, an ``n_threads`` that is not an int, or a
            game / reward ``rf.Env`` refuses.
        ValueError: not two contestants, more than one ``External``, ``n_slots`` below 1, a
            negative ``batch_delay``, ``n_threads`` outside 0..512, a game that is not
            two-player sequential, or a contestant that is not ``(policy, infer, gamma)``.
    """

    def __init__(
        self,
        game: Any,
        reward: Any,
        contestants: Sequence[Any],
        n_slots: int = 16,
        start: Any = None,
        seed: int = 0,
        batch_delay: float = 0.0,
        *,
        n_threads: int = 0,
    ) -> None:
        if len(contestants) != 2:
            raise ValueError("Arena v1 takes exactly two contestants")
        if sum(isinstance(c, External) for c in contestants) > 1:
            raise ValueError("Arena v1 supports at most one External contestant")
        if n_slots < 1 or n_slots != n_slots:  # NaN too: 0.4.0 accepts n_slots=nan and its play() never returns
            raise ValueError("n_slots must be >= 1")
        if not (isfinite(batch_delay) and batch_delay >= 0.0):
            raise ValueError("batch_delay must be finite and >= 0")
        if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral):
            raise TypeError(f"n_threads must be an int (0: one per core); got {type(n_threads).__name__}")
        if not 0 <= n_threads <= 512:
            raise ValueError(f"n_threads must be between 0 (one per core) and 512; got {n_threads}")
        probe = Env(game, reward, seed=0)  # validates game, reward and their pairing
        if probe.num_agents() != 2 or len(probe.active_agents()) != 1:
            raise ValueError("Arena v1 plays 2-agent sequential games")
        for c in contestants:
            if not isinstance(c, External) and not (isinstance(c, tuple) and len(c) == 3):
                raise ValueError(
                    "a searched contestant is (policy, infer, gamma) — gamma is the discount the model was trained with"
                )
        if start is not None and not callable(getattr(start, "generate", None)):
            # 0.4.0 accepts any start and fails in play() with an AttributeError
            raise TypeError(
                "start must be an opening generator with generate(game, reward, seed) "
                f"(e.g. reinfors.starts.RandomStartingMoves), or None; got {type(start).__name__}"
            )
        self._probe = probe  # the kernel path's probe Env (reinfors/_runtime/match.py)
        self._probe_lock = threading.Lock()
        self._game = game
        self._reward = reward
        self._contestants = list(contestants)
        self._n_slots = n_slots
        self._start = start
        self._seed = seed
        self._batch_delay = batch_delay
        self._n_threads = int(n_threads) or min(available_cores(), 8)

    # -- public ---------------------------------------------------------------------------------

    def play(self, n_games: int, *, progress: bool | None = None) -> ArenaResult:
        """Play ``n_games`` games (an even number ≥ 2) and return them as an :class:`ArenaResult`.

        ``progress=True`` shows a tqdm bar of finished games; the default (None) shows it for a
        long match (100 games or more) when stderr is a terminal.

        Args:
            n_games: games to play, an even number >= 2 (each opening from both seats).
            progress: show a progress bar; ``None`` decides as above.

        Returns:
            The games, sorted by ``game_id``.

        Raises:
            ValueError: an odd ``n_games`` or one below 2.
            TimeoutError: an ``External`` agent ran over its ``timeout``.
            RuntimeError: an ``External`` agent raised or returned an illegal action.
        """
        if n_games < 2 or n_games % 2 != 0:
            raise ValueError("n_games must be even (openings are played from both seats)")
        if progress is None:
            progress = n_games >= 100 and bool(getattr(sys.stderr, "isatty", lambda: False)())
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=n_games, unit="game", desc="arena", mininterval=0.25)
        if self._kernel_path():
            try:
                return self._play_slots(n_games, bar)
            finally:
                if bar is not None:
                    bar.close()
        run = _Run(self, n_games, bar)
        try:
            return run.play()
        finally:
            run.shutdown()
            if bar is not None:
                bar.close()


    def _kernel_path(self) -> bool:
        """Whether both seats are plain searched contestants: then games run as kernel slots
        (``reinfors/_runtime/match.py``); an External seat or a wrapped policy (any object with a
        ``choose`` method) takes the general scheduler :class:`_Run`.  Both give the same games."""
        from ..policies import PolicyHandle

        return all(isinstance(c, tuple) and type(c[0]) is PolicyHandle for c in self._contestants)

    def _play_slots(self, n_games: int, bar: Any) -> ArenaResult:
        from .._runtime.match import MatchDriver

        done: list[GameResult] = []

        def on_game(game_id, opening_id, seats, payoffs, length, actions):
            done.append(GameResult(game_id, opening_id, seats, payoffs, length, actions))
            if bar is not None:
                bar.update(1)

        from ..starts import RandomStartingMoves

        # the constructor's probe Env, unless another play() of this Arena holds it (a new one:
        # building an Env costs more than a short match's rounds)
        mine = self._probe_lock.acquire(blocking=False)
        try:
            probe = self._probe if mine else Env(self._game, self._reward, seed=0)
            trusted = type(self._start) is RandomStartingMoves
            driver = MatchDriver(
                self._game, self._reward, self._contestants, self._n_slots, self._start, self._seed, _mix64, probe,
                trusted, self._n_threads,
            )  # fmt: skip
            driver.play(n_games, on_game)
        finally:
            if mine:
                self._probe_lock.release()
        driver.release()  # only a completed match returns its runtimes for reuse
        done.sort(key=lambda r: r.game_id)
        return ArenaResult(games=done)


class _Run:
    """The state of one :meth:`Arena.play` call."""

    def __init__(self, arena: Arena, n_games: int, bar: Any) -> None:
        self.a = arena
        self.n_games = n_games
        self.bar = bar
        self.contestants = arena._contestants
        self.external = {ci for ci, c in enumerate(self.contestants) if isinstance(c, External)}
        self.pools: dict[int, list[_Worker]] = {
            ci: [_Worker() for _ in range(self.contestants[ci].workers)] for ci in self.external
        }
        self.idle: dict[int, list[_Worker]] = {ci: list(p) for ci, p in self.pools.items()}
        self.open: list[_Open] = []
        self.closing: list[_Closing] = []
        self.done: list[GameResult] = []
        self.openings: dict[int, tuple[Any, list[int]]] = {}
        self.rounds = dict.fromkeys(range(len(self.contestants)), 0)

    # -- main loop ------------------------------------------------------------------------------

    def play(self) -> ArenaResult:
        next_id = 0
        while len(self.done) < self.n_games or self.closing:
            self._reclaim()
            while next_id < self.n_games and len(self.open) < self.a._n_slots:
                g = self._open_game(next_id)
                if g is None:  # every worker of the external contestant is busy
                    break
                self.open.append(g)
                next_id += 1
            self._collect_turns()
            self._dispatch_turns()
            ready = self._searched_ready()
            if ready and self.a._batch_delay > 0 and any(g.turn is not None for g in self.open):
                sleep(self.a._batch_delay)
                self._collect_turns()
                self._dispatch_turns()
                ready = self._searched_ready()
            if ready:
                for ci in sorted(ready):
                    self.rounds[ci] += 1
                    self._choose_round(ci, ready[ci])
                continue
            self._wait_external()
        self.done.sort(key=lambda r: r.game_id)
        return ArenaResult(games=self.done)

    def _open_game(self, game_id: int) -> _Open | None:
        opening_id = game_id // 2
        seats = (0, 1) if game_id % 2 == 0 else (1, 0)
        ext = [ci for ci in self.external if ci in seats]
        if any(not self.idle[ci] for ci in ext):
            return None
        env = Env(self.a._game, self.a._reward, seed=_mix64(self.a._seed, game_id, _GAME_SEED))
        opening: list[int] = []
        if self.a._start is not None:
            if opening_id not in self.openings:
                seed = _mix64(self.a._seed, opening_id, _OPENING_SEED)
                self.openings[opening_id] = self.a._start.generate(self.a._game, self.a._reward, seed)
            snap, opening = self.openings[opening_id]
            env.restore(snap)
        g = _Open(game_id, opening_id, seats, env, [0.0, 0.0], list(opening))
        for ci in ext:
            worker = self.idle[ci].pop()
            try:
                g.agent = self.contestants[ci].factory()
            except Exception as e:
                self.idle[ci].append(worker)
                raise RuntimeError(f"external contestant {ci} factory failed for game {game_id}: {e}") from e
            g.worker = worker
            if hasattr(g.agent, "on_action"):  # replay the opening before the first act()
                g.notes.extend(worker.submit(g.agent.on_action, a) for a in opening)
        return g

    def _mover(self, g: _Open) -> int:
        agents = g.env.active_agents()
        if len(agents) != 1:
            raise RuntimeError(f"game {g.game_id}: {len(agents)} active agents — Arena plays sequential games")
        return g.seats[agents[0]]

    def _searched_ready(self) -> dict[int, list[_Open]]:
        ready: dict[int, list[_Open]] = {}
        for g in self.open:
            if g.turn is None:
                ci = self._mover(g)
                if ci not in self.external:
                    ready.setdefault(ci, []).append(g)
        for games in ready.values():
            games.sort(key=lambda g: g.game_id)
        return ready

    def _choose_round(self, ci: int, games: list[_Open]) -> None:
        """One pooled ``choose`` for every open game where searched contestant ``ci`` moves."""
        policy, infer, gamma = self.contestants[ci]
        seed = _mix64(self.a._seed, ci, _CHOOSE_SEED, self.rounds[ci])
        actions = policy.choose([g.env for g in games], infer, seed=seed, gamma=gamma)
        if len(actions) != len(games):
            raise RuntimeError(f"choose returned {len(actions)} actions for {len(games)} games")
        for g, action in zip(games, actions, strict=True):
            self._play_action(g, action)

    def _play_action(self, g: _Open, action: int) -> None:
        seat = g.env.active_agents()[0]
        g.env.step({seat: action})
        g.actions.append(action)
        rewards = g.env.rewards
        if rewards is not None:
            for s, r in enumerate(rewards):
                g.payoffs[s] += r
        if g.agent is not None and hasattr(g.agent, "on_action"):
            g.notes.append(g.worker.submit(g.agent.on_action, action))
        if g.env.done():
            self._finish(g)

    def _finish(self, g: _Open) -> None:
        self.open.remove(g)
        by_contestant = [0.0, 0.0]
        for seat, p in enumerate(g.payoffs):
            by_contestant[g.seats[seat]] = p
        self.done.append(GameResult(g.game_id, g.opening_id, g.seats, tuple(by_contestant), g.env.ticks, g.actions))
        if self.bar is not None:
            self.bar.update(1)  # tqdm rate-limits the redraws
        if g.agent is None:
            return
        # queue close() behind the pending notifications now; the worker is reclaimed once it
        # has worked them off, without stalling the searched batches meanwhile
        (ci,) = [c for c in self.external if c in g.seats]
        futures = list(g.notes)
        if hasattr(g.agent, "close"):
            futures.append(g.worker.submit(g.agent.close))
        g.notes = []
        timeout = self.contestants[ci].timeout
        self.closing.append(_Closing(g, ci, futures, None if timeout is None else monotonic() + timeout))

    # -- external agents --------------------------------------------------------------------------

    def _check_notes(self, g: _Open) -> None:
        pending = []
        for fut in g.notes:
            if not fut.done():
                pending.append(fut)
            elif (err := fut.exception()) is not None:
                raise RuntimeError(f"external contestant on_action failed in game {g.game_id}: {err}") from err
        g.notes = pending

    def _dispatch_turns(self) -> None:
        for g in self.open:
            if g.turn is not None:
                continue
            ci = self._mover(g)
            if ci not in self.external:
                continue
            self._check_notes(g)
            env = g.env
            seat = env.active_agents()[0]
            view = View(obs=env.observe(seat), legal_actions=env.legal_actions(seat), agent=seat, ticks=env.ticks)
            g.turn = g.worker.submit(g.agent.act, view)
            g.turn_since = monotonic()

    def _collect_turns(self) -> None:
        for g in list(self.open):
            self._check_notes(g)
            if g.turn is None or not g.turn.done():
                continue
            fut, g.turn = g.turn, None
            try:
                action = fut.result()
            except Exception as e:
                raise RuntimeError(f"external contestant {self._mover(g)} failed in game {g.game_id}: {e}") from e
            if action not in g.env.legal_actions(g.env.active_agents()[0]):
                raise RuntimeError(f"external contestant chose illegal action {action} in game {g.game_id}")
            self._play_action(g, action)
        self._check_deadlines()

    def _check_deadlines(self) -> None:
        now = monotonic()
        for g in self.open:
            if g.turn is None or g.turn.done():
                continue
            ci = self._mover(g)
            timeout = self.contestants[ci].timeout
            if timeout is not None and now - g.turn_since > timeout:
                raise TimeoutError(f"external contestant {ci} exceeded its {timeout}s move timeout in game {g.game_id}")

    def _wait_external(self) -> None:
        pending = [g.turn for g in self.open if g.turn is not None]
        for c in self.closing:
            pending.extend(f for f in c.futures if not f.done())
        if not pending:
            return
        limits = [self.contestants[ci].timeout for ci in self.external if self.contestants[ci].timeout]
        wait(pending, timeout=min(limits) if limits else None, return_when=FIRST_COMPLETED)
        self._check_deadlines()

    def _reclaim(self) -> None:
        for c in list(self.closing):
            for fut in c.futures:
                if fut.done() and (err := fut.exception()) is not None:
                    raise RuntimeError(
                        f"external contestant {c.contestant} failed finishing game {c.game.game_id}: {err}"
                    ) from err
            if all(f.done() for f in c.futures):
                self.idle[c.contestant].append(c.game.worker)
                c.game.agent = c.game.worker = None
                self.closing.remove(c)
            elif c.deadline is not None and monotonic() > c.deadline:
                raise TimeoutError(
                    f"external contestant {c.contestant} exceeded its timeout finishing game {c.game.game_id}"
                )

    def shutdown(self) -> None:
        """Close every live agent (bounded, errors swallowed: on abort the primary error is
        already propagating) and stop the worker threads."""
        waiting = []
        for g in self.open:
            if g.agent is not None and g.worker is not None and hasattr(g.agent, "close"):
                waiting.append(g.worker.submit(g.agent.close))
            g.agent = g.worker = None
        for c in self.closing:
            waiting.extend(f for f in c.futures if not f.done())
            c.game.agent = c.game.worker = None
        if waiting:
            wait(waiting, timeout=_CLOSE_GRACE_S)
        for pool in self.pools.values():
            for w in pool:
                w.stop()

