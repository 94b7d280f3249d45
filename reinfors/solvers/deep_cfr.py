"""``rf.solvers.DeepCfr`` — Deep CFR data generation with caller-owned networks and training.

The solver owns the traversals; the caller owns the per-player advantage networks, the
buffers and the training loop.  ``collect(player, traversals, infer)`` runs external-sampling
traversals for one traverser and returns a :class:`~reinfors.batches.DeepCfrBatch` of
advantage samples (the traverser's sampled counterfactual advantages) and strategy samples
(the other players' regret-matched strategies), both tagged with the current iteration.

The traversals are njit kernels (``reinfors/jit/solvers/deep_cfr.py``, bound per game like the
CFR tree kernels) that run in lock-step and pool their network queries: every wave gives one
callback per player over all the new info states the traversals reached, so a collect makes
O(tree depth) callbacks of many rows, never one per node.  ``exploitability(policy_infer)``
queries the policy once for every info state of the game tree and evaluates it exactly with
the CFR best-response kernels (``reinfors.solvers.cfr``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from reinfors._runtime import budget, codegen
from reinfors._validate import as_unsigned, sequence_or_none, tp_name
from reinfors.batches import DeepCfrBatch
from reinfors.games import GameHandle
from reinfors.jit.solvers import deep_cfr as _dc
from reinfors.jit.solvers import gametree as _gt
from reinfors.solvers.cfr import game_tree, nash_conv

__all__ = ["DeepCfr"]

_CATALOGUE = "https://jeepjeepjeep.github.io/reinfors/catalogue/compatibility/"
_RNG_MIX = 0xDEE9CF5EED0F5EED  # traversal streams: derive(seed ^ this, traversal index, player)
_CHUNK = 8192  # traversals run in lock-step per group (bounds the per-traversal scratch)
_DEPTH0 = 8  # initial traverser-frame depth (grows on demand)
_CAP0 = 64  # initial sample / table capacity floor (grows on demand)
_ENUM_CAP = 4_000_000  # the original's node cap for the exploitability tree
_ENUM_ERROR = (
    f"game tree exceeds the enumeration cap ({_ENUM_CAP} nodes) — "
    "the exploitability instrument is for enumerable games"
)

_G_ROLES = (
    "init",
    "step",
    "legal",
    "active",
    "is_terminal",
    "chance_pending",
    "chance_outcomes",
    "apply_chance",
    "info_key",
    "encode",
)

def _kernels(gdef):
    """The Deep CFR template bound to ``gdef``'s rules and encoder (generated once, disk-cached)."""
    from reinfors.jit.games import _defaults

    fns = {}
    for role in _G_ROLES:
        fn = gdef._encode if role == "encode" else getattr(gdef.ns, role, None)
        fns[role] = fn if fn is not None else getattr(_defaults, role)
    return codegen.instantiate(
        "deepcfr",
        gdef.name,
        (_dc.__file__,),
        fns,
        _G_ROLES,
        key=f"deepcfr|{gdef.name}|{gdef.n_actions}",
        what="Deep CFR kernels",
    )


def _callables(infer, n_players: int) -> list:
    if callable(infer):
        return [infer] * n_players
    infer = sequence_or_none(infer)  # PyO3's Vec extraction
    if infer is not None:
        if len(infer) != n_players:
            raise ValueError(f"expected {n_players} per-player infer callables, got {len(infer)}")
        for i, f in enumerate(infer):
            if not callable(f):
                raise TypeError(f"per-player infer element {i} is not callable")
        return list(infer)
    raise TypeError("infer must be a callable or a sequence of per-player callables")


def _check_output(out, rows: int, n_actions: int, label: str, what: str, tail: str) -> np.ndarray:
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{label} output must be a float64 or float32 ndarray; got type {type(out).__name__}")
    if out.dtype not in (np.float64, np.float32):
        raise TypeError(f"{label} output must be a float64 or float32 ndarray; got dtype {out.dtype}")
    if out.ndim != 2:
        raise TypeError(f"{label} output must be a 2-d ndarray; got {out.ndim}-d")
    if out.shape != (rows, n_actions):
        shape = [int(x) for x in out.shape]
        raise ValueError(f"{label} returned shape {shape} for {rows} {what}; expected ({rows}, {n_actions}){tail}")
    return out


class _Buffers:
    """The growable arrays of one collect (see ``advance`` in the kernel module for shapes)."""

    def __init__(self, gdef, t: int, depth: int):
        A, S, O, P = gdef.n_actions, gdef.state_size, gdef.obs_size, gdef.n_players
        K = max(int(gdef.max_info_key), 1)
        self.A, self.S, self.O, self.P, self.K = A, S, O, P, K
        cap_e = _CAP0
        while cap_e < 4 * t:
            cap_e *= 2
        na, ns = max(_CAP0, 4 * t), max(_CAP0, 8 * t)
        budget.require(
            budget.total(self.entry_bytes(cap_e), self.adv_bytes(na), self.strat_bytes(ns), self.group_bytes(t, depth)),
            "traversals", f"the Deep CFR buffers of a {t}-traversal group",
        )  # fmt: skip
        self.e_table = np.full(2 * cap_e, -1, np.int64)
        self.e_key = np.zeros((cap_e, K), np.uint8)
        self.e_len = np.zeros(cap_e, np.int64)
        self.e_out = np.zeros((cap_e, A), np.float64)
        self.e_ready = np.zeros(cap_e, np.uint8)
        na = max(_CAP0, 4 * t)
        self.adv_obs = np.zeros((na, O), np.float32)
        self.adv_iter = np.zeros(na, np.int64)
        self.adv_off = np.zeros(na + 1, np.int64)
        self.adv_ids = np.zeros(na * A, np.int64)
        self.adv_targets = np.zeros(na * A, np.float64)
        ns = max(_CAP0, 8 * t)
        self.st_obs = np.zeros((ns, O), np.float32)
        self.st_iter = np.zeros(ns, np.int64)
        self.st_player = np.zeros(ns, np.int64)
        self.st_off = np.zeros(ns + 1, np.int64)
        self.st_ids = np.zeros(ns * A, np.int64)
        self.st_probs = np.zeros(ns * A, np.float64)
        self.cnt = np.zeros(_dc.N_CNT, np.int64)
        self.depth = depth
        self.group(t)

    # Bytes of each family of arrays at a capacity (the shapes below), saturated.
    def entry_bytes(self, n: int) -> int:
        return budget.nbytes(n, itemsize=2 * 8 + self.K + 8 + 8 * self.A + 1)

    def adv_bytes(self, n: int) -> int:
        return budget.nbytes(n, itemsize=4 * self.O + 8 + 8 + 16 * self.A)

    def strat_bytes(self, n: int) -> int:
        return budget.nbytes(n, itemsize=4 * self.O + 3 * 8 + 16 * self.A)

    def group_bytes(self, t: int, depth: int) -> int:
        A, S, O, P = self.A, self.S, self.O, self.P
        t = max(t, 1)
        return budget.total(
            budget.nbytes(t, itemsize=8 * S + 6 * 8 + P * (4 * O + 8)),
            budget.nbytes(t, depth, itemsize=8 * S + 8 + 8 * A + 8 + 16 * A + 8),
        )

    def group(self, t: int) -> None:
        """Per-traversal scratch for a lock-step group of ``t`` traversals."""
        A, S, O, P, D = self.A, self.S, self.O, self.P, self.depth
        t = max(t, 1)
        budget.require(self.group_bytes(t, D), "traversals", f"the Deep CFR scratch of a {t}-traversal group")
        self.work = np.zeros((t, S), np.int64)
        self.status = np.zeros(t, np.int64)
        self.wait_entry = np.full(t, -1, np.int64)
        self.sp = np.zeros(t, np.int64)
        self.acc = np.zeros(t, np.float64)
        self.rngs = np.zeros((t, 1), np.uint64)
        self.fr_state = np.zeros((t, D, S), np.int64)
        self.fr_acc = np.zeros((t, D), np.float64)
        self.fr_legal = np.zeros((t, D, A), np.int64)
        self.fr_nleg = np.zeros((t, D), np.int64)
        self.fr_sigma = np.zeros((t, D, A), np.float64)
        self.fr_val = np.zeros((t, D, A), np.float64)
        self.fr_next = np.zeros((t, D), np.int64)
        self.wave_obs = np.zeros((P, t, O), np.float32)
        self.wave_entry = np.zeros((P, t), np.int64)
        self.wave_count = np.zeros(P, np.int64)

    @staticmethod
    def _grown(a: np.ndarray, n: int, axis: int = 0) -> np.ndarray:
        shape = list(a.shape)
        shape[axis] = n
        out = np.zeros(shape, a.dtype)
        idx = [slice(None)] * a.ndim
        idx[axis] = slice(0, a.shape[axis])
        out[tuple(idx)] = a
        return out

    def used_bytes(self) -> int:
        """Bytes of the samples collected so far (what a batch of them holds)."""
        c = self.cnt
        return budget.total(self.adv_bytes(int(c[_dc.C_ADV])), self.strat_bytes(int(c[_dc.C_STRAT])))

    def grow(self, traversals: int) -> None:
        """Double every buffer that cannot take one more node step (mirrors ``advance``'s check);
        the new arrays are bounded first (``MemoryError`` naming ``traversals`` and the bytes)."""
        c, A = self.cnt, self.A
        need_adv = c[_dc.C_ADV] + int(self.sp.max(initial=0)) + 1
        grow_adv = need_adv > self.adv_obs.shape[0] or c[_dc.C_ADV_NNZ] + need_adv * A > self.adv_ids.shape[0]
        grow_st = c[_dc.C_STRAT] + 1 > self.st_obs.shape[0] or c[_dc.C_STRAT_NNZ] + A > self.st_ids.shape[0]
        grow_e = c[_dc.C_ENTRIES] + 1 > self.e_key.shape[0] or 2 * (c[_dc.C_ENTRIES] + 1) > self.e_table.shape[0]
        grow_d = int(self.sp.max(initial=0)) + 1 > self.depth
        t = self.work.shape[0]
        need = budget.total(
            self.adv_bytes(2 * max(self.adv_obs.shape[0], need_adv)) if grow_adv else 0,
            self.strat_bytes(2 * self.st_obs.shape[0]) if grow_st else 0,
            self.entry_bytes(2 * self.e_key.shape[0]) if grow_e else 0,
            self.group_bytes(t, 2 * self.depth) if grow_d else 0,
        )
        budget.require(
            need, "traversals", f"growing the Deep CFR sample buffers of collect(traversals={traversals})",
            "collect fewer traversals per call", "grown buffers",
        )  # fmt: skip
        if grow_adv:
            n = 2 * max(self.adv_obs.shape[0], need_adv)
            self.adv_obs = self._grown(self.adv_obs, n)
            self.adv_iter = self._grown(self.adv_iter, n)
            self.adv_off = self._grown(self.adv_off, n + 1)
            self.adv_ids = self._grown(self.adv_ids, n * A)
            self.adv_targets = self._grown(self.adv_targets, n * A)
        if grow_st:
            n = 2 * self.st_obs.shape[0]
            self.st_obs = self._grown(self.st_obs, n)
            self.st_iter = self._grown(self.st_iter, n)
            self.st_player = self._grown(self.st_player, n)
            self.st_off = self._grown(self.st_off, n + 1)
            self.st_ids = self._grown(self.st_ids, n * A)
            self.st_probs = self._grown(self.st_probs, n * A)
        if grow_e:
            n = 2 * self.e_key.shape[0]
            self.e_key = self._grown(self.e_key, n)
            self.e_len = self._grown(self.e_len, n)
            self.e_out = self._grown(self.e_out, n)
            self.e_ready = self._grown(self.e_ready, n)
            self.e_table = np.full(2 * n, -1, np.int64)
            _gt.rebuild_table(self.e_table, self.e_key, self.e_len, int(c[_dc.C_ENTRIES]))
        if grow_d:
            self.depth *= 2
            D = self.depth
            self.fr_state = self._grown(self.fr_state, D, 1)
            self.fr_acc = self._grown(self.fr_acc, D, 1)
            self.fr_legal = self._grown(self.fr_legal, D, 1)
            self.fr_nleg = self._grown(self.fr_nleg, D, 1)
            self.fr_sigma = self._grown(self.fr_sigma, D, 1)
            self.fr_val = self._grown(self.fr_val, D, 1)
            self.fr_next = self._grown(self.fr_next, D, 1)


_ERRORS = {
    _dc.ERR_SIMULTANEOUS: "a decision node does not have exactly one acting player",
    _dc.ERR_NO_LEGAL: "a decision node has no legal action",
    _dc.ERR_KEY: "an information-state key is missing or longer than the game's max_info_key",
    _dc.ERR_CHANCE: "a chance node has no outcome with positive probability",
}


class DeepCfr:
    """Deep CFR (Brown et al. 2019) traversal data for Kuhn (2-10 players) and Leduc poker.

    ``next_iteration()`` starts CFR iteration ``t`` (samples carry it, for linear weighting);
    ``collect(player, traversals, infer)`` runs ``traversals`` external-sampling traversals with
    ``player`` as the traverser, querying ``infer(obs: (rows, obs_size) float32) -> (rows, A)``
    (one callable, or one per player) for the advantage-network outputs that regret matching
    turns into strategies.  A callback that raises (or returns a malformed array) leaves the
    solver exactly as it was.

    Args:
        game: Kuhn poker (2-10 players), Leduc poker or Texas Hold'em (2-9 players).
        seed: the traversals' sampling seed.

    Raises:
        TypeError: ``game`` is not a ``GameHandle``.
        OverflowError: a negative ``seed``.
        ValueError: a game Deep CFR does not support.
    """

    __slots__ = ("_game", "_gdef", "_seed", "_iteration", "_traversals", "_k", "_obs", "_tree")

    def __init__(self, game: GameHandle, seed: int = 0):
        if not isinstance(game, GameHandle):
            raise TypeError(f"argument 'game': '{type(game).__name__}' object cannot be converted to 'GameHandle'")
        seed = as_unsigned("seed", seed)
        gdef = game._def
        if gdef.simultaneous or not gdef.has_info_key:
            raise ValueError(f"this game is not compatible with Deep CFR; see {_CATALOGUE}")
        self._game = game
        self._gdef = gdef
        self._seed = seed
        self._iteration = 0
        self._traversals = 0  # traversals completed so far: the next traversal's stream index
        self._k = None
        self._obs = None
        self._tree = None

    @property
    def iteration(self) -> int:
        """The current CFR iteration (0 until the first ``next_iteration()``)."""
        return self._iteration

    def next_iteration(self) -> None:
        """Start the next CFR iteration (the tag of the samples collected from now on)."""
        self._iteration += 1

    def resolved_config(self) -> dict:
        """The resolved composition.

        Returns:
            ``{game, reward, schema: 1, solver: {name: "deep_cfr", seed}}``.
        """
        d = self._gdef
        return {
            "game": self._game._resolved(),
            "reward": dict(sorted(zip(d.reward_keys, d.reward_defaults, strict=True))),
            "schema": 1,
            "solver": {"name": "deep_cfr", "seed": self._seed},
        }

    def __repr__(self) -> str:
        return f"DeepCfr({self._gdef.name!r}, iteration={self._iteration})"

    # -- collection -------------------------------------------------------------------------------

    def collect(
        self,
        player: int,
        traversals: int,
        infer: Callable[[np.ndarray], Any] | Sequence[Callable[[np.ndarray], Any]],
    ) -> DeepCfrBatch:
        """Run ``traversals`` traversals for traverser ``player``; see the class docstring.

        Args:
            player: the traverser.
            traversals: external-sampling traversals to run.
            infer: the advantage network(s): ``infer(obs (rows, obs_size) float32) -> (rows, A)``,
                one callable or one per player.

        Returns:
            The advantage and strategy samples, tagged with the current iteration.

        Raises:
            TypeError: ``infer`` is not callable, or returned the wrong type.
            OverflowError: a negative count.
            ValueError: ``player`` out of range, no ``next_iteration()`` yet, or a callback
                output of the wrong shape or not finite.
        """
        t0 = time.perf_counter()
        player = as_unsigned("player", player)
        traversals = as_unsigned("traversals", traversals)
        d = self._gdef
        if player >= d.n_players:
            raise ValueError(f"player must be below {d.n_players}")
        if self._iteration == 0:
            raise ValueError("call next_iteration() before collecting (samples are weighted by the iteration)")
        fns = _callables(infer, d.n_players)
        if self._k is None:
            self._k = _kernels(d)
        k = self._k
        weights = np.asarray(d.reward_defaults, np.float64)
        first = min(traversals, _CHUNK)
        buf = _Buffers(d, first, _DEPTH0)
        tel = {"infer_calls": 0, "infer_rows": 0, "infer_seconds": 0.0}
        done = 0
        while done < traversals:
            t = min(_CHUNK, traversals - done)
            if buf.work.shape[0] != t:
                buf.group(t)
            k.init_traversals(
                d.params, d.horizon, buf.work, buf.status, buf.wait_entry, buf.sp, buf.acc, buf.rngs,
                np.uint64(self._seed ^ _RNG_MIX), np.uint64(self._traversals + done), np.uint64(player),
            )  # fmt: skip
            self._run_group(k, buf, weights, player, fns, tel, traversals)
            done += t
            if done < traversals:
                # the samples grow with the traversals: refuse, as soon as a group shows it, a
                # collect whose samples (and the batch's copies of them) cannot fit
                used = buf.used_bytes()
                budget.require(
                    2 * used * traversals // done, "traversals",
                    f"collect(traversals={traversals}) (projected from the {used} bytes of samples of its first "
                    f"{done} traversals, with the batch's copies)",
                    "collect fewer traversals per call", "samples",
                )  # fmt: skip
        c = buf.cnt
        na, nza, ns, nzs = (int(c[i]) for i in (_dc.C_ADV, _dc.C_ADV_NNZ, _dc.C_STRAT, _dc.C_STRAT_NNZ))
        batch = DeepCfrBatch._make(
            advantage_obs=buf.adv_obs[:na].copy(),
            advantage_iterations=buf.adv_iter[:na].copy(),
            advantage_legal_offsets=buf.adv_off[: na + 1].copy(),
            advantage_legal_ids=buf.adv_ids[:nza].copy(),
            advantage_targets=buf.adv_targets[:nza].copy(),
            strategy_obs=buf.st_obs[:ns].copy(),
            strategy_iterations=buf.st_iter[:ns].copy(),
            strategy_players=buf.st_player[:ns].copy(),
            strategy_legal_offsets=buf.st_off[: ns + 1].copy(),
            strategy_legal_ids=buf.st_ids[:nzs].copy(),
            strategy_probs=buf.st_probs[:nzs].copy(),
            telemetry={
                "player": player,
                "traversals": traversals,
                "advantage_samples": na,
                "strategy_samples": ns,
                "infer_calls": tel["infer_calls"],
                "infer_rows": tel["infer_rows"],
                "infer_seconds": tel["infer_seconds"],
                "collect_seconds": time.perf_counter() - t0,
                "cache_lookups": int(c[_dc.C_LOOKUPS]),
                "cache_hits": int(c[_dc.C_HITS]),
            },
        )
        self._traversals += traversals  # only a completed collect advances the streams
        return batch

    def _run_group(self, k, buf, weights, player, fns, tel, traversals) -> None:
        d = self._gdef
        A = d.n_actions
        while True:
            code, _ = k.advance(
                d.params, weights, player, self._iteration, d.n_players, d.max_chance,
                buf.work, buf.status, buf.wait_entry, buf.sp, buf.acc, buf.rngs,
                buf.fr_state, buf.fr_acc, buf.fr_legal, buf.fr_nleg, buf.fr_sigma, buf.fr_val, buf.fr_next,
                buf.e_table, buf.e_key, buf.e_len, buf.e_out, buf.e_ready,
                buf.wave_obs, buf.wave_entry, buf.wave_count,
                buf.adv_obs, buf.adv_iter, buf.adv_off, buf.adv_ids, buf.adv_targets,
                buf.st_obs, buf.st_iter, buf.st_player, buf.st_off, buf.st_ids, buf.st_probs,
                buf.cnt,
            )  # fmt: skip
            if code == _dc.DONE_ALL:
                return
            if code == _dc.NEED_ROOM:
                buf.grow(traversals)
                continue
            if code != _dc.NEED_INFER:
                raise ValueError(f"this game cannot be traversed by Deep CFR: {_ERRORS[int(code)]}")
            for p in range(d.n_players):
                n = int(buf.wave_count[p])
                if n == 0:
                    continue
                obs = buf.wave_obs[p, :n].copy()
                s = time.perf_counter()
                out = fns[p](obs)
                tel["infer_seconds"] += time.perf_counter() - s
                out = _check_output(out, n, A, "infer", "rows", f" — one row of {A} advantages per query")
                if not np.isfinite(out).all():
                    raise ValueError("Deep CFR infer outputs must contain only finite values")
                ids = buf.wave_entry[p, :n]
                buf.e_out[ids] = out
                buf.e_ready[ids] = 1
                buf.wave_count[p] = 0
                tel["infer_calls"] += 1
                tel["infer_rows"] += n
            buf.cnt[_dc.C_WAVE] = 0
            buf.status[buf.status == _dc.BLOCKED] = _dc.READY

    # -- evaluation -------------------------------------------------------------------------------

    def exploitability(self, policy_infer: Callable[[np.ndarray], Any]) -> float:
        """Exploitability (NashConv / players) of the policy ``policy_infer`` describes.

        ``policy_infer(obs: (infosets, obs_size) float32) -> (infosets, A)`` is called once with
        one observation per info state of the game; each row's non-negative entries over the
        legal actions, normalised, are the policy (uniform when they sum to zero).

        Args:
            policy_infer: the policy network, called once with every info state's observation.

        Returns:
            NashConv / players of the policy.

        Raises:
            TypeError: ``policy_infer`` is not callable, or returned the wrong type.
            ValueError: an output of the wrong shape, or a game whose tree is too large.
        """
        if not callable(policy_infer):
            raise TypeError(f"'{tp_name(policy_infer)}' object is not callable")
        tree, obs = self._tree_obs()
        n = tree.n_infosets
        out = policy_infer(obs.copy())
        out = _check_output(out, n, tree.n_actions, "policy_infer", "infosets", "")
        policy = np.empty((n, tree.n_actions), np.float64)
        self._k.policy_rows(np.ascontiguousarray(out, dtype=np.float64), tree.is_actions, tree.is_nact, policy)
        return nash_conv(tree, policy) / tree.n_players

    def _tree_obs(self):
        """The CFR game tree and one observation per info state (built once per solver)."""
        if self._tree is None:
            d = self._gdef
            try:
                tree = game_tree(self._game)
            except ValueError as e:
                if "too many for exact tables" in str(e):
                    raise ValueError(_ENUM_ERROR) from None
                raise
            if tree.n_nodes > _ENUM_CAP:
                raise ValueError(_ENUM_ERROR)
            if self._k is None:
                self._k = _kernels(d)
            budget.require(budget.nbytes(max(tree.n_infosets, 1), itemsize=4 * d.obs_size + 1), "game",
                           f"one observation per information state ({tree.n_infosets})", "use a smaller game")  # fmt: skip
            obs = np.zeros((max(tree.n_infosets, 1), d.obs_size), np.float32)
            seen = np.zeros(max(tree.n_infosets, 1), np.uint8)
            written = self._k.infoset_obs(
                d.params, d.horizon, d.state_size, d.n_players, d.n_actions, max(d.max_chance, 1),
                max(tree.max_depth, 1), tree.table, tree.key_data, tree.key_len, obs, seen, len(d.reward_keys),
            )  # fmt: skip
            if written != tree.n_infosets:
                raise ValueError("this game's information states could not be encoded for exploitability")
            self._tree = tree
            self._obs = obs[: tree.n_infosets]
        return self._tree, self._obs
