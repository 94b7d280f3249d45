"""The Arena's match driver: every game is a slot of preallocated arrays, stepped by kernels.

``rf.Arena.play`` takes this path when both contestants are searched (``(PolicyHandle, infer,
gamma)``; an :class:`External` seat or a wrapped policy takes the general scheduler in
``reinfors/arena/_arena.py``).  It keeps the general scheduler's round structure exactly — so the games,
openings, payoffs and ``choose`` seeds are the same per seed — and moves the per-ply work into
kernels:

    slots   states [n_slots, state_size] int64, rngs [n_slots, RNG_WIDTH] uint64 (chance),
            payoffs [n_slots, 2] float64 by agent seat, actions [n_slots, cap] int64 + lengths,
            seat_of [n_slots, 2] (agent -> contestant), game_of [n_slots] (-1 = free)
    round   one ``movers`` kernel call over the open slots; for each contestant with games to
            move (in contestant order): ONE pooled search over its games' state rows
            (``choose_rows``: one callback call per search round, rows deduplicated) and ONE
            ``step_slots`` kernel call applying every decision; NumPy bookkeeping per round.

With two deterministic contestants (:func:`deterministic`) the driver plays *phases* instead
(``_play_phases``): each phase searches every open game of one contestant, so a callback call
holds about twice the rows of a round; finished games are replaced in a kernel from openings
drawn up front.  The games are the same; only the callback batches (and unused seeds) differ.
A phase's games are split over ``n_threads`` threads (``_choose_split``): each part is one
pooled search of its own choose runtime, in nogil kernels beside the others, its callback calls
serialized by a lock (a contestant's callback is never called twice at once, but may be called
on a match thread).  A deterministic contestant's moves do not depend on the split.  Only a CPU
callback is split for: an accelerator-like one (``firing.CallCost``, measured on the match's
first calls) would pay its fixed cost once per part.

Python work is per round and per finished game (its :class:`GameResult`); never per ply.
How a contestant decides — its choose runtime (kept in a small module LRU between calls and
matches: building one costs milliseconds, more than a short search round), a greedy Q
contestant without a runtime, the phases split over threads — lives in ``match_deciders.py``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from reinfors.jit import rng as _rng
from reinfors.jit.games._contract import DONE, RUNNING, TICKS

from .firing import CallCost
from .match_deciders import _POOL, MIN_PART, Deciders, deterministic

__all__ = ["MatchDriver", "deterministic", "MIN_PART", "_POOL"]

_GAME_SEED, _OPENING_SEED = 1, 2  # hash domains of reinfors/arena/_arena.py (choose: match_deciders)
_U64 = (1 << 64) - 1


def _seed64(seed) -> np.uint64:
    """The Arena seed as ``reinfors.arena._mix64`` folds it: its low 64 bits (numpy integers
    through ``__index__``; anything else fails as ``_mix64`` does)."""
    if not isinstance(seed, int) and hasattr(seed, "__index__"):
        seed = seed.__index__()
    return np.uint64(seed & _U64)


class MatchDriver(Deciders):
    """One ``Arena.play`` of two searched contestants (see the module docstring).

    ``mix64`` is the Arena's seed hash; ``trusted_start``: the openings come from our own
    ``RandomStartingMoves`` (snapshots of real play, so ``Env.restore``'s state check is skipped);
    ``on_game(game_id, opening_id, seats, payoffs, length,
    actions)`` receives every finished game (payoffs by contestant) as it ends.
    """

    def __init__(
        self, game, reward, contestants, n_slots, start, seed, mix64: Callable[..., int], probe_env, trusted_start=False,
        n_threads: int = 1,
    ) -> None:  # fmt: skip
        self.game, self.reward, self.start, self.seed, self.mix = game, reward, start, seed, mix64
        self.n_threads = max(1, int(n_threads))
        self.pool: ThreadPoolExecutor | None = None  # the phases' helper threads (_play_phases)
        self.threads = 1  # the match's threads, the calling one included (_play_phases)
        self.parts: list[list[Any]] = [[], []]  # per contestant: the helper parts' Choosers
        self.part_keys: list[Any] = [None, None]
        self.infer_locks = [threading.Lock(), threading.Lock()]
        self.costs = [CallCost(), CallCost()]  # each contestant's sampled calls (split or not)
        self.trusted_start = trusted_start  # start is rf.starts.RandomStartingMoves: its snapshots are valid
        self.contestants = contestants
        self.n_slots = n_slots
        env = probe_env
        self.d = d = env._def
        self.k = d.kernels
        self.weights = env._weights
        self.fingerprint = env._fingerprint
        # validate each contestant once, as the general path's first choose call would
        self.checked = [False, False]
        self.probe = env
        self.deciders: list[Any] = [None, None]
        self.keys: list[Any] = [None, None]

    def play(self, n_games: int, on_game: Callable[..., None]) -> None:
        d = self.d
        # 0.4.0 takes any real n_slots / n_games and compares against them (``len(open) < n_slots``,
        # ``next_id < n_games``): 1.5 slots hold up to 2 games, 2.0 games are 2 games.
        n_games = math.ceil(n_games)
        n_slots = n_games if self.n_slots >= n_games else math.ceil(self.n_slots)
        self.capacity = n_slots
        if all(deterministic(c[0], d) for c in self.contestants):
            self._play_phases(n_games, n_slots, on_game)
        else:
            self._play_rounds(n_games, n_slots, on_game)

    def _play_rounds(self, n_games: int, n_slots: int, on_game: Callable[..., None]) -> None:
        """0.4.0's rounds (any contestants): every round, each contestant with games to move
        searches them all in game-id order, with the round's ``choose`` seed."""
        d, k = self.d, self.k
        S, N = d.state_size, d.n_players
        states = np.zeros((n_slots, S), np.int64)  # [n_slots, S] game state rows
        rngs = np.zeros((n_slots, _rng.RNG_WIDTH), np.uint64)  # [n_slots, RNG_WIDTH] chance streams
        pay = np.zeros((n_slots, N), np.float64)  # [n_slots, N] payoffs by agent seat
        cap = 64
        acts = np.zeros((n_slots, cap), np.int64)  # [n_slots, cap] actions, opening included
        length = np.zeros(n_slots, np.int64)  # [n_slots] actions recorded
        game_of = np.full(n_slots, -1, np.int64)  # [n_slots] game id (-1 = free)
        seat_of = np.zeros((n_slots, N), np.int64)  # [n_slots, N] agent seat -> contestant
        probs = np.zeros(max(1, d.max_chance), np.float64)  # scratch
        amounts = np.zeros((N, len(d.reward_keys)), np.float64)  # scratch
        joint = np.zeros(N, np.int64)  # scratch
        agents = np.zeros(N, np.int64)  # scratch
        rewards = np.zeros((n_slots, N), np.float64)  # [n_slots, N] one round's step rewards
        mover = np.zeros(n_slots, np.int64)  # [n_slots] the open slots' active agents
        openings: dict[int, tuple[np.ndarray, int, list[int]]] = {}
        rounds = [0, 0]
        next_id = done = 0
        while done < n_games:
            # open games into free slots, in game-id order (as the general scheduler does)
            for s in np.flatnonzero(game_of < 0):
                if next_id >= n_games:
                    break
                self._open(s, next_id, states, rngs, probs, openings, acts, length, pay, seat_of)
                game_of[s] = next_id
                next_id += 1
            open_slots = np.flatnonzero(game_of >= 0)
            open_slots = open_slots[np.argsort(game_of[open_slots], kind="stable")]
            if length.max() + 2 >= cap:  # room for this round's moves
                cap *= 2
                acts = np.concatenate([acts, np.zeros_like(acts)], axis=1)
            k.movers(d.params, states, open_slots, agents, mover[: len(open_slots)])
            m = mover[: len(open_slots)]
            if (m < 0).any():
                g = int(game_of[open_slots[np.flatnonzero(m < 0)[0]]])
                raise RuntimeError(f"game {g}: 0 active agents — Arena plays sequential games")
            who = seat_of[open_slots, m]  # [open] contestant to move
            ready = [open_slots[who == ci] for ci in (0, 1)]  # fixed before anyone moves
            for ci in (0, 1):
                slots = ready[ci]
                if len(slots) == 0:
                    continue
                rounds[ci] += 1
                actions = self._choose(ci, states, slots, rounds[ci], agents)
                r = rewards[: len(slots)]
                k.step_slots(d.params, states, rngs, probs, slots, actions, amounts, self.weights, r, joint, agents)
                pay[slots] += r
                acts[slots, length[slots]] = actions
                length[slots] += 1
                for s in slots[states[slots, DONE] != RUNNING]:
                    g = int(game_of[s])
                    by_contestant = [0.0] * N
                    for seat in range(N):
                        by_contestant[seat_of[s, seat]] = float(pay[s, seat])
                    seats = tuple(int(c) for c in seat_of[s])
                    on_game(g, g // 2, seats, tuple(by_contestant), int(states[s, TICKS]), acts[s, : length[s]].tolist())
                    game_of[s] = -1
                    done += 1

    def _openings(self, n_pairs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every pair's opening up front: ``(states [n_pairs, S], chance [n_pairs] uint64,
        actions [n_pairs, max moves], moves [n_pairs])`` (empty arrays without a start).  Our own
        ``RandomStartingMoves`` on a game with ascending legal ids is drawn by one kernel call
        (``draw_openings``: its ``generate`` exactly); any other start's ``generate`` runs per
        pair, its snapshot checked by ``Env.restore``."""
        d, k, S = self.d, self.k, self.d.state_size
        if self.start is None:
            return np.zeros((1, S), np.int64), np.zeros(1, np.uint64), np.zeros((1, 1), np.int64), np.zeros(1, np.int64)
        seeds = np.empty(n_pairs, np.uint64)
        k.mix_seeds(_seed64(self.seed), 0, n_pairs, _OPENING_SEED, seeds)
        n_moves = getattr(self.start, "n_moves", None)
        if (
            self.trusted_start
            and getattr(d.ns, "legal_order", None) is None
            and not d.legal_ranks
            and type(n_moves) is int
            and 1 <= n_moves < 1 << 31
            and type(self.start.max_retries) is int
            and self.start.max_retries < 1 << 31
        ):  # plain ints in the kernel's range; anything else is generate's own business
            states = np.zeros((n_pairs, S), np.int64)
            chance = np.zeros(n_pairs, np.uint64)
            acts = np.zeros((n_pairs, n_moves), np.int64)
            N = d.n_players
            failed = k.draw_openings(
                d.params, seeds, n_moves, max(0, self.start.max_retries), states, chance, acts,
                np.zeros(max(1, d.max_chance), np.float64), np.zeros((N, len(d.reward_keys)), np.float64),
                np.zeros(N, np.int64), np.zeros(N, np.int64), np.zeros(d.n_actions, np.uint8), np.zeros(1, np.uint64),
            )  # fmt: skip
            if failed >= 0:  # generate's own error, for the first pair without a live opening
                self.start.generate(self.game, self.reward, int(seeds[failed]))
                raise RuntimeError("draw_openings and RandomStartingMoves.generate disagree")  # pragma: no cover
            return states, chance, acts, np.full(n_pairs, n_moves, np.int64)
        rows, chances, actions = [], [], []
        for pair in range(n_pairs):
            snap, acts_p = self.start.generate(self.game, self.reward, int(seeds[pair]))
            if self.trusted_start and getattr(snap, "fingerprint", None) == self.fingerprint:
                rows.append(snap._state_row(S))
                chances.append(int(snap._rng))
            else:
                self.probe.restore(snap)
                rows.append(self.probe._state.copy())
                chances.append(int(self.probe._rng[0]))
            actions.append(list(acts_p))
        lens = np.array([len(a) for a in actions], np.int64)
        acts = np.zeros((n_pairs, max(1, int(lens.max()))), np.int64)
        for pair, a in enumerate(actions):
            acts[pair, : len(a)] = a
        return np.stack(rows), np.array(chances, np.uint64), acts, lens

    def _play_phases(self, n_games: int, n_slots: int, on_game: Callable[..., None]) -> None:
        """Deterministic contestants (:func:`deterministic`): each one's decisions depend on the
        position alone, so the games do not depend on how searches are batched.  Phases
        alternate between the contestants; a phase searches EVERY open game where its contestant
        is to move (after the first phases that is every open game: the other contestant just
        moved in all of them), so each callback call holds about twice the rows of 0.4.0's
        round (where each contestant has half the games), and a game that ends is replaced by
        the next one at once, in a kernel (``open_games``, from openings drawn up front).  The
        games, openings and payoffs are those of the round scheduler; only the callback
        batches differ.  Python runs per phase (one search, one ``step_record`` call) and per
        finished game (its result)."""
        d, k = self.d, self.k
        S, N = d.state_size, d.n_players
        n_pairs = (n_games + 1) // 2
        open_states, open_rng, open_acts, open_len = self._openings(n_pairs)
        has_open = self.start is not None
        game_rng = np.empty(n_games, np.uint64)
        k.mix_seeds(_seed64(self.seed), 0, n_games, _GAME_SEED, game_rng)
        states = np.zeros((n_slots, S), np.int64)
        rngs = np.zeros((n_slots, _rng.RNG_WIDTH), np.uint64)
        pay = np.zeros((n_slots, N), np.float64)
        open_max = int(open_len.max())
        cap = max(64, 2 * open_max + 2)
        acts = np.zeros((n_slots, cap), np.int64)
        length = np.zeros(n_slots, np.int64)
        game_of = np.full(n_slots, -1, np.int64)
        seat_of = np.zeros((n_slots, N), np.int64)
        probs = np.zeros(max(1, d.max_chance), np.float64)
        amounts = np.zeros((N, len(d.reward_keys)), np.float64)
        joint = np.zeros(N, np.int64)
        agents = np.zeros(N, np.int64)
        rewards = np.zeros((n_slots, N), np.float64)
        movers = np.zeros(n_slots, np.int64)
        finished = np.zeros(n_slots, np.int64)
        next_id = np.zeros(1, np.int64)
        k.open_games(
            d.params, states, rngs, probs, np.arange(n_slots, dtype=np.int64), next_id, n_games, game_of,
            seat_of, pay, acts, length, game_rng, has_open, open_states, open_rng, open_acts, open_len,
        )  # fmt: skip
        # Helper threads for the phases' parts (_choose_split), for this match.
        self.threads = threads = min(self.n_threads, n_slots // MIN_PART)
        self.pool = ThreadPoolExecutor(threads - 1, thread_name_prefix="reinfors-arena") if threads > 1 else None
        try:
            phases = [0, 0]
            done = 0
            ci = 0
            idle = 0  # consecutive phases without a mover (2: nobody can move)
            # Phases left before a game could outgrow ``acts`` (a phase adds at most one action to
            # a game; a new game starts at its opening's length): ``length`` is read again only
            # when ``room`` runs out, not every phase.
            room = 0
            while done < n_games:
                m = int(k.phase_movers(d.params, states, game_of, seat_of, ci, agents, movers))
                if m < 0:
                    g = int(game_of[-1 - m])
                    raise RuntimeError(f"game {g}: 0 active agents — Arena plays sequential games")
                if m == 0:
                    idle += 1
                    if idle >= 2:
                        raise RuntimeError("Arena: open games but no contestant to move")  # pragma: no cover
                    ci ^= 1
                    continue
                idle = 0
                slots = movers[:m]  # read-only until the next phase's phase_movers
                phases[ci] += 1
                actions = self._choose(ci, states, slots, phases[ci], agents, split=True)
                if room <= 0:
                    while int(length.max()) + 1 >= cap:
                        cap *= 2
                        acts = np.concatenate([acts, np.zeros_like(acts)], axis=1)
                    room = cap - 1 - int(length.max())
                room -= 1
                n_fin = int(k.step_record(
                    d.params, states, rngs, probs, slots, actions, amounts, self.weights, rewards[:m], joint, agents,
                    pay, acts, length, finished,
                ))  # fmt: skip
                if n_fin:
                    fin = finished[:n_fin].copy()
                    for s in fin.tolist():
                        g = int(game_of[s])
                        seats = (int(seat_of[s, 0]), int(seat_of[s, 1]))
                        by_contestant = [0.0, 0.0]
                        by_contestant[seats[0]] = float(pay[s, 0])
                        by_contestant[seats[1]] = float(pay[s, 1])
                        on_game(g, g // 2, seats, tuple(by_contestant), int(states[s, TICKS]), acts[s, : length[s]].tolist())
                        game_of[s] = -1
                    done += n_fin
                    room = min(room, cap - 1 - open_max)
                    fin.sort()
                    k.open_games(
                        d.params, states, rngs, probs, fin, next_id, n_games, game_of, seat_of, pay, acts, length,
                        game_rng, has_open, open_states, open_rng, open_acts, open_len,
                    )  # fmt: skip
                ci ^= 1
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True)
                self.pool = None

    def _open(self, s, game_id, states, rngs, probs, openings, acts, length, pay, seat_of) -> None:
        """Game ``game_id`` into slot ``s``: the Env's fresh episode under the game's chance seed,
        then the pair's opening (generated once per pair, restored into both games)."""
        d = self.d
        opening_id = game_id // 2
        rngs[s, 0] = np.uint64(self.mix(self.seed, game_id, _GAME_SEED))
        self.k.reset(d.params, states[s], 0, rngs[s], probs)
        opening: list[int] = []
        if self.start is not None:
            if opening_id not in openings:
                seed = self.mix(self.seed, opening_id, _OPENING_SEED)
                snap, actions = self.start.generate(self.game, self.reward, seed)
                if self.trusted_start and getattr(snap, "fingerprint", None) == self.fingerprint:
                    row = snap._state_row(d.state_size)  # drawn by our own Env: a valid state
                    openings[opening_id] = (row, int(snap._rng), list(actions))
                else:
                    self.probe.restore(snap)  # Env.restore's checks (composition, state validity)
                    openings[opening_id] = (self.probe._state.copy(), int(self.probe._rng[0]), list(actions))
            row, chance, opening = openings[opening_id]
            states[s] = row
            rngs[s, 0] = np.uint64(chance)
        n = len(opening)
        acts[s, :n] = opening
        length[s] = n
        pay[s] = 0.0
        seat_of[s] = (0, 1) if game_id % 2 == 0 else (1, 0)
