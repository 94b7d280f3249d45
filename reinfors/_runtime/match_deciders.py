"""How each contestant of an Arena match decides (a mixin of ``match.MatchDriver``).

A searched contestant decides through a :class:`reinfors._runtime.choose.Chooser` (its choose
runtime; idle ones are kept in a small module LRU, ``_POOL``, between calls and matches:
building one costs milliseconds, more than a short search round); an EpsilonGreedyQ contestant
through :class:`_GreedyQ`, a few kernel calls without a runtime.  With two deterministic
contestants (:func:`deterministic`) a phase's games are split over the match's threads
(``Deciders._choose_split``): each part is one pooled search of its own choose runtime, its
callback calls serialized — only for a CPU callback (``firing.CallCost``, sampled on the
contestant's calls by :func:`_sampled`): an accelerator-like one would pay its fixed cost once
per part.
"""

from __future__ import annotations

import collections
import math
import threading
import time
from typing import Any

import numpy as np

from reinfors.jit import dedupe as _dedupe
from reinfors.jit.games._contract import TICKS

from .choose import Chooser, _validate
from .choose_runtime import _key, _next_u64, streams
from .firing import CallCost
from .routes import QValidator

__all__ = ["Deciders", "MIN_PART", "deterministic"]

_CHOOSE_SEED = 3  # the choose streams' hash domain of reinfors/arena/_arena.py

# A phase is split over threads only into parts of at least this many games: a part's search
# must outlast the hand-offs of the GIL between the threads (measured on 2 cores, Connect4
# Minimax(2) vs Mcts(32): parts of 16 games ran 0.6-0.9x one thread, 32 games 1.3x, 64 games 1.6x).
MIN_PART = 32


def deterministic(policy, d) -> bool:
    """Whether ``policy``'s decision on composition ``d`` is a function of the position alone
    (given a callback whose output rows depend only on their input rows): no chance in the game
    and no draw from the ``choose`` stream — Minimax; Mcts and AlphaZero acting greedily
    (``temperature == 0``; AlphaZero without root noise); EpsilonGreedyQ with one head and
    ``epsilon == 0``.  Such a contestant makes the same moves however its searches are batched
    and seeded, which lets the match driver batch them differently (``_play_phases``)."""
    if d.has_chance:
        return False
    name, p = policy.name, policy._params
    if name == "minimax":
        return True
    if name == "mcts":
        return p["temperature"] == 0.0
    if name == "alphazero":
        return p["temperature"] == 0.0 and policy._noise is None
    if name == "epsilon_greedy_q":
        return p["epsilon"] == 0.0 and int(p["n_heads"]) == 1
    return False


# (composition, policy, gamma, capacity) -> idle Chooser: its runtime costs milliseconds to build,
# more than a short search round, and an evaluation loop plays many matches of one composition.
# A Chooser is taken out while a match uses it (so two matches never share one).
_POOL: collections.OrderedDict = collections.OrderedDict()
_POOL_MAX = 8
_POOL_LOCK = threading.Lock()


def _take(key) -> Any:
    with _POOL_LOCK:
        return _POOL.pop(key, None)


def _give_back(key, chooser) -> None:
    with _POOL_LOCK:
        _POOL[key] = chooser
        _POOL.move_to_end(key)
        while len(_POOL) > _POOL_MAX:
            _POOL.popitem(last=False)


class _GreedyQ:
    """An EpsilonGreedyQ contestant decided without a runtime: one ``encode_movers`` kernel
    call, the exact-bytes dedupe, one callback call, QValidator, one ``decide_epsilon_greedy``
    kernel call — the same rows, order, streams and decision rule as ``choose``'s runtime.

    A phase of a short match is a few microseconds of kernels, so the arrays a phase only reads
    (the span table: one row per game, in game order; the all-zero streams and heads of a greedy
    head-0 policy, which nothing draws from) and the ones it fills before reading (the request
    rows and legal masks) are kept between phases, grown with the phase."""

    def __init__(self, policy, d, k) -> None:
        self.d, self.k = d, k
        self.n_heads = int(policy.n_heads)
        self.epsilon = float(policy._params["epsilon"])
        self.validate = QValidator(self.n_heads, d.n_actions)
        self.fixed = self.epsilon == 0.0 and self.n_heads == 1  # draws nothing: head 0, greedy
        self._grow(0)

    def _grow(self, m: int) -> None:
        d = self.d
        self.cap = m
        self.rows = np.empty((m, d.obs_size), np.float32)  # [m, O] request rows, game-id order
        self.legal = np.empty((m, d.n_actions), np.uint8)  # [m, A]
        self.spans = np.zeros((m, 4), np.int64)  # (slot, start row, rows, request offset)
        self.spans[:, 0] = self.spans[:, 1] = np.arange(m)
        self.spans[:, 2] = 1
        self.srng0, self.heads0 = np.zeros((m, 1), np.uint64), np.zeros(m, np.int64)

    def __call__(self, states, slots, infer, seed, agents) -> np.ndarray:
        """Decisions for ``slots``; ``seed()`` returns the round's choose seed (called only by a
        policy that draws)."""
        d, m = self.d, len(slots)
        if m > self.cap:
            self._grow(max(m, 2 * self.cap))
        rows, legal = self.rows[:m], self.legal[:m]
        self.k.encode_movers(d.params, states, slots, rows, legal, agents)
        unique_src, row_uid = _dedupe.order_unique(rows, self.spans, m)
        pred = self.validate(infer(rows[unique_src]), len(unique_src))  # [u, H * A] float64
        if self.fixed:  # no stream is read: head 0 (``next() % 1``), no exploration draw
            srng, heads = self.srng0[:m], self.heads0[:m]
        else:
            srng = streams(seed(), m).reshape(m, 1)  # [m, RNG_WIDTH] choose's slot streams
            heads = (_next_u64(srng[:, 0]) % np.uint64(self.n_heads)).astype(np.int64)
        out = np.empty(m, np.int64)
        self.k.decide_epsilon_greedy(srng, pred, row_uid, heads, legal, d.n_actions, self.epsilon, out)
        return out


def _sampled(infer, cost: CallCost):
    """``infer`` with one call in ``cost.every`` timed into ``cost`` (wall and the calling
    thread's CPU: an accelerator-like callback leaves the thread idle)."""

    def call(x):
        if not cost.due():
            return infer(x)
        c0, t0 = time.thread_time(), time.perf_counter()
        out = infer(x)
        cost.add(len(x), time.perf_counter() - t0, time.thread_time() - c0)
        return out

    return call


class Deciders:
    """Each contestant's decisions (a mixin of ``match.MatchDriver``: reads its ``contestants``,
    ``d``, ``k``, ``weights``, ``fingerprint``, ``capacity``, ``probe``, ``seed``, ``mix``,
    ``pool``, ``threads``, ``n_threads``, ``costs``, ``infer_locks`` and keeps ``deciders``,
    ``keys``, ``checked``, ``parts``, ``part_keys``)."""

    def _decider(self, ci: int, gamma: float) -> Any:
        policy = self.contestants[ci][0]
        d = self.d
        if policy.name == "epsilon_greedy_q" and not d.legal_ranks and d.head_map is None:
            return _GreedyQ(policy, d, self.k)
        key = _key(policy, d, self.fingerprint, gamma, self.capacity)
        self.keys[ci] = key
        return _take(key) or Chooser(policy, d, self.weights, gamma, self.capacity)

    def release(self) -> None:
        """Hand the contestants' Choosers back to the module pool (after a completed match)."""
        for ci in (0, 1):
            if self.keys[ci] is not None and isinstance(self.deciders[ci], Chooser):
                _give_back(self.keys[ci], self.deciders[ci])
            for part in self.parts[ci]:
                _give_back(self.part_keys[ci], part)
            self.deciders[ci] = self.keys[ci] = self.part_keys[ci] = None
            self.parts[ci] = []

    def _choose(self, ci: int, states: np.ndarray, slots: np.ndarray, round_no: int, agents, split: bool = False):
        """Contestant ``ci``'s decisions ``[m] int64`` for games ``slots`` (game-id order): one
        pooled search, or with ``split`` (deterministic contestants) one per thread."""
        policy, infer, gamma = self.contestants[ci]

        def seed_of() -> int:  # the round's choose seed (a greedy contestant hashes it only when it draws)
            return self.mix(self.seed, ci, _CHOOSE_SEED, round_no)

        if not self.checked[ci]:
            # the general path's choose checks, once: the composition-level ones on a running
            # env of this composition (per-env ones hold by construction here)
            self.probe._state[:] = states[slots[0]]
            _, _, _, gamma = _validate(policy, [self.probe], infer, seed_of(), None, gamma)
            self.deciders[ci] = self._decider(ci, float(gamma))
            self.checked[ci] = True
        dec = self.deciders[ci]
        if isinstance(dec, _GreedyQ):
            return dec(states, slots, infer, seed_of, agents)
        seed = seed_of()
        rows = states[slots]
        if not split or self.pool is None:
            return dec(rows, infer, seed, rows[:, TICKS])
        cost = self.costs[ci]
        n_parts = min(self.n_threads, len(slots) // MIN_PART)
        if n_parts > 1 and cost.cpu_like():
            return self._choose_split(ci, dec, rows, _sampled(infer, cost), seed, n_parts)
        return dec(rows, _sampled(infer, cost), seed, rows[:, TICKS])

    def _choose_split(self, ci: int, dec: Chooser, rows: np.ndarray, infer, seed: int, n_parts: int) -> np.ndarray:
        """One phase's searches in ``n_parts`` contiguous parts (game-id order kept): the first on
        this thread with the contestant's Chooser, the others on the pool's threads, each with a
        Chooser of its own (capacity: a part of the slots).  The kernels release the GIL, so the
        parts' rounds run beside each other; the callback's calls are serialized."""
        lock = self.infer_locks[ci]

        def serial(x):  # one call at a time, whichever thread asks
            with lock:
                return infer(x)

        bounds = np.linspace(0, len(rows), n_parts + 1).round().astype(np.int64)
        helpers = self._part_choosers(ci, n_parts - 1, int(np.diff(bounds)[1:].max()))
        futures = []
        for h, a, b in zip(helpers, bounds[1:-1], bounds[2:], strict=True):
            part = rows[a:b]
            futures.append(self.pool.submit(h, part, serial, seed, part[:, TICKS]))
        try:
            first = dec(rows[: bounds[1]], serial, seed, rows[: bounds[1], TICKS])
        finally:
            outs, error = [], None
            for f in futures:  # every part finishes before the phase returns or raises
                try:
                    outs.append(f.result())
                except BaseException as exc:  # noqa: BLE001 - re-raised below
                    error = error or exc
        if error is not None:
            raise error
        return np.concatenate([first, *outs])

    def _part_choosers(self, ci: int, n: int, rows: int) -> list[Chooser]:
        """``n`` helper Choosers of contestant ``ci`` for parts of up to ``rows`` games."""
        parts = self.parts[ci]
        if len(parts) < n:
            policy = self.contestants[ci][0]
            # The largest helper part: ceil(m / n_parts) for m <= capacity games; split over all
            # the threads that is ceil(capacity / threads), over fewer (m // MIN_PART parts,
            # m < (n_parts + 1) * MIN_PART) under 1.5 * MIN_PART.  So the helpers together hold
            # about one match's slots, not half of them each.
            cap = min(self.capacity, max(math.ceil(self.capacity / self.threads), 2 * MIN_PART))
            if rows > cap:  # pragma: no cover - the bound above
                raise RuntimeError("Arena: a phase part exceeds its choose runtime")
            dec = self.deciders[ci]
            key = _key(policy, self.d, self.fingerprint, dec.gamma, cap)
            self.part_keys[ci] = key
            while len(parts) < n:
                parts.append(_take(key) or Chooser(policy, self.d, self.weights, dec.gamma, cap))
        return parts[:n]
