"""``rf.Engine`` — the parallel self-play collector.

``Engine(game, reward, policy, learner, n_games, ...)`` validates the composition (the
original's types, ranges, pairing rules and messages), then owns a :class:`Runtime`: slots as
preallocated arrays, worker threads running nogil kernels, routes with arena chains, and the
scheduler that ``collect`` runs on the calling thread.  ``collect(n_records, infer)`` returns a
learner-shaped batch (``DqnBatch`` / ``PpoBatch`` / ...) with at least ``n_records`` records and
the 22 telemetry keys.

Batches are bit-identical for the same seed at any ``n_threads`` and ``batch_size`` (records are
windowed by decision level and ordered by (level, slot); see ``_runtime/runtime.py``), provided
the callback is row-independent — which the inference cache also requires.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _canon
from . import snapshot as _snapshot
from ._runtime import budget
from ._runtime import probe as _probe
from ._runtime.compile_helper import _work_cached, compile_cold, planned_total, start_helper
from ._runtime.composition import (
    _EXPAND_MAX,
    _LEARNER_KINDS,
    _POLICY_KINDS,
    _SEARCH,
    AUTO_SEARCH_BATCH,
    CACHE_BYTES_LIMIT,
    SEARCH_LABELS,
    _check_engine_caps,
    _check_engine_ranges,
    _search_spec,
)
from ._runtime.gamedef import reached_state_starts
from ._runtime.notice import compile_notice
from ._runtime.routes import PVValidator, QValidator, resolve_infer
from ._runtime.runtime import Runtime, RuntimeSpec, kernel_family
from ._runtime.spare import SpareBuffers
from ._validate import as_bool, as_float, as_sequence, as_unsigned, refuse_pickle
from ._version import VERSION
from .batches import AlphaZeroBatch, DqnBatch, PpoBatch, TreeStrapBatch
from .games import GameHandle
from .jit import engine_codes as C
from .jit import records as _records
from .learners import _CATALOGUE_COMPAT as CATALOGUE_COMPAT
from .learners import _PAIRS as PAIRS
from .learners import LearnerHandle
from .policies import PolicyHandle
from .rewards import Reward
from .snapshot import EngineSnapshot
from .stream import CollectStream

__all__ = ["Engine"]

MAX_GAMES = 65536
MAX_THREADS = 512
MAX_BATCH = 1 << 20
BYTE_CEILING = 1 << 29
CONFIG_SCHEMA = 1

TELEMETRY_KEYS = (
    "episodes",
    "decisions",
    "max_depth",
    "mean_leaves",
    "mean_rounds",
    "mean_expansions",
    "mean_sigma",
    "mean_disagreement",
    "infer_seconds",
    "infer_calls",
    "infer_rows",
    "padded_rows",
    "cache_lookups",
    "cache_hits",
    "cache_demotions",
    "stall_closes",
    "stall_releases",
    "terminal_sims",
    "depthcap_sims",
    "requested_rows",
    "tail_rows",
    "extra_eval_rows",
)

# Telemetry that depends on timing, not only on the seed.  Without the inference cache only
# ``infer_seconds`` (wall time): which rows go in which callback call is a function of counts —
# each call is one fixed cohort's round of requests (reinfors/_runtime/cohorts.py) — so two
# engines built from one config make the same calls (``infer_calls``, ``infer_rows``,
# ``padded_rows``; no stall closes) at any load, as 0.4.0 guarantees (and at any ``n_threads``,
# which 0.4.0 does not).  Timing only decides how a call is overlapped (firing.py).  With
# ``infer_cache > 0``, or the opt-in ``REINFORS_TIMED_FIRES=1`` (calls cut by fire targets and,
# for an accelerator-like callback, a measured choice between one batch a round and two halves),
# ``TIMING_TELEMETRY_WITH_CACHE``: the calls, their rows, padding, the stall ladder's counts, and
# whether a row is served by the cache or by its in-flight twin depend on which call came first.
# Every other key is a function of the seed (tests/engine/test_call_determinism.py,
# tests/differential/test_behaviours_vs_original.py).
TIMING_TELEMETRY = frozenset({"infer_seconds"})
TIMING_TELEMETRY_WITH_CACHE = TIMING_TELEMETRY | {
    "infer_calls", "padded_rows", "stall_closes", "stall_releases", "infer_rows", "cache_hits", "cache_demotions",
}  # fmt: skip

_HELD = (
    "this engine is held by a collect_stream (call its stop() to get the engine back) — or was "
    "permanently forfeited by a stream that was dropped without stop(); in that case create a new Engine"
)


def _compat_error() -> ValueError:
    return ValueError(f"incompatible policy/learner composition; see {CATALOGUE_COMPAT}")


def _learn_players_arg(value) -> list[int] | None:
    """``learn_players`` converted as the original's PyO3 ``Option<Vec<usize>>``.

    None, or any object passing CPython's ``PySequence_Check`` (list, tuple, range, ndarray,
    bytes, memoryview, ...; not str, set, dict, dict views or iterators) whose items convert with
    ``operator.index`` to non-negative ints.  Messages are PyO3's.
    """
    if value is None:
        return None
    import operator

    out = []
    for item in as_sequence("learn_players", value):
        try:
            v = operator.index(item)
        except TypeError as e:
            raise TypeError(f"argument 'learn_players': {e}") from None
        out.append(as_unsigned("learn_players", v))
    return out


class Engine:
    """The parallel self-play collector: runs ``n_games`` episodes at once and returns training
    records shaped for the learner.

    An engine composes a game, a reward, a policy (how moves are chosen) and a learner (how
    decisions become records); the policy and learner must pair (``rf.catalog``).  Construction
    validates everything and compiles nothing: the first :meth:`collect` compiles (or loads from
    the on-disk cache) the composition's kernels.  Each :meth:`collect` then steps every slot
    with worker threads, sends the observations that need a network evaluation to your
    ``infer`` callback in batches, and returns a batch: :class:`~reinfors.PpoBatch`,
    :class:`~reinfors.DqnBatch`, :class:`~reinfors.AlphaZeroBatch` or
    :class:`~reinfors.TreeStrapBatch`, whose ``telemetry`` dict holds the keys of the
    [telemetry table][telemetry-table].

    Batches are bit-identical for a seed at any ``n_threads`` and ``batch_size`` (and with or
    without ``pad`` and the cache), provided the callback computes each row independently.

    Example::

        engine = rf.Engine(rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0),
                           rf.policies.Ppo(), rf.learners.Ppo(), n_games=64)
        batch = engine.collect(4096, lambda obs: (np.zeros((len(obs), 7)), np.zeros(len(obs))))

    Args:
        game: the game (``rf.games.Connect4()``, a custom game, ...).
        reward: reward weights; ``None`` (or ``rf.Reward()``) is the game's defaults.
        policy: how moves are chosen (``rf.policies``).
        learner: how decisions become records (``rf.learners``); must pair with ``policy``.
        n_games: episode slots run at once (state, not threads): 1 to 65,536, within a byte
            ceiling for the composition.
        seed: the root seed of every slot's RNG stream, ``0 <= seed < 2**64``.
        start_buffer: Snake only: start a share ``1 - p_fresh`` of episodes from a reservoir of
            reached states.
        start_buffer_capacity: the reservoir's size (>= 1 with ``start_buffer``).
        p_fresh: the share of episodes started fresh, in [0, 1] (with ``start_buffer``).
        infer_cache: entries per inference-cache partition (one per route); 0 turns the cache
            off.  Batches are the same either way.
        learn_players: the players whose decisions become records (all players still act);
            ``None`` is every player.
        pad: zero-pad every callback call to exactly ``batch_size`` rows (a shared callback
            only).
        batch_size: the rows queued before a callback call fires (at most 2**20); 0 is
            automatic.
        n_threads: worker threads (at most 512); 0 is one per core, at most ``n_games``.

    Raises:
        TypeError: an argument of the wrong type (e.g. a ``game`` that is not a ``GameHandle``).
        OverflowError: a negative count or seed, or one past ``2**64 - 1``.
        ValueError: an argument out of range, a policy and learner that do not pair, a policy
            that does not suit the game (a search on a hidden-information game, Minimax on a
            game that is not two-player sequential, ...), or a reward that Minimax cannot negate.
    """

    def __init__(
        self,
        game: GameHandle,
        reward: Reward | None,
        policy: PolicyHandle,
        learner: LearnerHandle,
        n_games: int,
        seed: int = 0,
        start_buffer: bool = False,
        start_buffer_capacity: int = 1000,
        p_fresh: float = 0.05,
        infer_cache: int = 0,
        learn_players: Sequence[int] | None = None,
        pad: bool = False,
        batch_size: int = 0,
        n_threads: int = 0,
    ):
        if not isinstance(game, GameHandle):
            raise TypeError(f"argument 'game': '{type(game).__name__}' object cannot be converted to 'GameHandle'")
        if reward is not None and not isinstance(reward, Reward):
            raise TypeError(f"argument 'reward': '{type(reward).__name__}' object cannot be converted to 'Reward'")
        if not isinstance(policy, PolicyHandle):
            raise TypeError(
                f"argument 'policy': '{type(policy).__name__}' object cannot be converted to 'PolicyHandle'"
            )
        if not isinstance(learner, LearnerHandle):
            raise TypeError(
                f"argument 'learner': '{type(learner).__name__}' object cannot be converted to 'LearnerHandle'"
            )
        n_games = as_unsigned("n_games", n_games)
        seed = as_unsigned("seed", seed)
        start_buffer = as_bool("start_buffer", start_buffer)
        start_buffer_capacity = as_unsigned("start_buffer_capacity", start_buffer_capacity)
        p_fresh = as_float("p_fresh", p_fresh, finite=False)  # range-checked only with start_buffer
        infer_cache = as_unsigned("infer_cache", infer_cache)
        learn_players = _learn_players_arg(learn_players)
        pad = as_bool("pad", pad)
        batch_size = as_unsigned("batch_size", batch_size)
        n_threads = as_unsigned("n_threads", n_threads)
        d = game._def
        # The checks below run in the original's order (probed against 0.4.0 and asserted by
        # tests/differential/test_compat_vs_original.py): the first failing one is the error.
        if n_games < 1:
            raise ValueError("n_games must be >= 1")
        if n_games > MAX_GAMES:
            raise ValueError(f"n_games must be <= {MAX_GAMES} (got {n_games})")
        if n_threads > MAX_THREADS:
            raise ValueError(f"n_threads must be <= {MAX_THREADS} (got {n_threads})")
        if batch_size > MAX_BATCH:
            raise ValueError(f"batch_size must be <= {MAX_BATCH} (got {batch_size})")
        if start_buffer:
            if start_buffer_capacity < 1:
                raise ValueError("start_buffer_capacity must be >= 1")
            if not 0.0 <= p_fresh <= 1.0:
                raise ValueError("p_fresh must be in [0, 1]")
        weights_map = (reward or Reward())._resolve(d.reward_keys, d.reward_defaults)
        if policy.name == "minimax" and not d.simultaneous and d.n_players == 2:
            w = weights_map
            # Games without a loss key (backgammon: win/gammon/backgammon paid +1/-1) are zero-sum
            # by construction; 0.4.0 accepts them with any weights.
            if "win" in w and "loss" in w and (w["loss"] != -w["win"] or w.get("draw", 0.0) != 0.0):
                raise ValueError(
                    "Minimax's zero-sum negation requires an antisymmetric reward: set loss = -win and draw = 0"
                )
        if start_buffer and not reached_state_starts(d.name):
            raise ValueError(f"this game does not support start_buffer; see {CATALOGUE_COMPAT}")
        _check_engine_caps(policy)
        # Byte budget of one inference call: the original counts every player as a simultaneous
        # agent (also in sequential games) and budgets A + 1 output columns per head.
        heads = policy.n_heads if policy.output == "q" else 1
        rows = n_games * d.n_players
        if rows * d.obs_size * 4 > BYTE_CEILING or rows * heads * (d.n_actions + 1) * 8 > BYTE_CEILING:
            raise ValueError(
                f"n_games ({n_games}) is too large for this composition: with {d.n_players} simultaneous agents "
                f"per game, observation input (rows x {d.obs_size} f32) and callback output (rows x {heads} heads "
                f"x {d.n_actions} actions f64) must each stay under {BYTE_CEILING} bytes"
            )
        # The same ceiling on one callback batch (0.4.0 counts batch_size rows, one agent each).
        if batch_size * d.obs_size * 4 > BYTE_CEILING or batch_size * heads * (d.n_actions + 1) * 8 > BYTE_CEILING:
            raise ValueError(
                f"batch_size ({batch_size}) is too large for this composition: with 1 simultaneous agents per game, "
                f"observation input (rows x {d.obs_size} f32) and callback output (rows x {heads} heads x "
                f"{d.n_actions} actions f64) must each stay under {BYTE_CEILING} bytes"
            )
        if learn_players is not None:
            if not learn_players:
                raise ValueError("learn_players must name at least one player")
            for p in learn_players:
                if p >= d.n_players:
                    raise ValueError(f"learn player {p} out of range (this game has {d.n_players} players)")
        if policy.name not in PAIRS[learner.name]:
            raise _compat_error()
        _check_engine_ranges(policy)
        if policy.name in _SEARCH and d.has_info_key:
            raise ValueError(
                f"the {SEARCH_LABELS[policy.name]} policy searches the true state and would be clairvoyant on this "
                f"hidden-information game; see {CATALOGUE_COMPAT}"
            )
        if policy.name == "minimax" and (d.simultaneous or d.n_players != 2):
            raise ValueError(f"Minimax requires a two-player sequential game; see {CATALOGUE_COMPAT}")
        if policy.name == "gumbel_alphazero" and d.simultaneous:
            raise ValueError(f"GumbelAlphaZero supports sequential games only; see {CATALOGUE_COMPAT}")
        if policy.name == "mcts" and not d.simultaneous and d.n_players > 2:
            raise ValueError(f"Mcts supports sequential games with at most two players; see {CATALOGUE_COMPAT}")
        self._game, self._reward, self._policy, self._learner = game, reward, policy, learner
        self._weights_map = weights_map
        self._n_games, self._seed = n_games, seed
        self._start_buffer = (start_buffer, start_buffer_capacity, p_fresh)
        self._infer_cache = infer_cache
        self._learn_players = learn_players
        self._pad, self._batch_size, self._n_threads = pad, batch_size, n_threads
        self._generation = 0
        self._spare = SpareBuffers()  # recycled memory of AlphaZero's policy_targets
        self._pgen = np.zeros(d.n_players, np.int64)  # per-player generations (cache partitions)
        self._gen_lock = threading.Lock()
        self._lock = threading.Lock()
        self._held = False
        self._rt: Runtime | None = None
        self._compile_session = None  # the compile bar of a first collect (notice.Session)
        self._compile_helper = None  # a cold first collect's helper process, started before the probe
        if policy.name in _SEARCH and d.chance_in_step and policy._chance is not None:
            # Every chance mode is available in every tree (sequential trees build chance nodes,
            # the decoupled ones outcome children); a game whose chance happens only at reset
            # (CHANCE_IN_STEP = False, e.g. GridWorld's start cell) never meets one.  ExpandAll
            # enumerates fans of at most 2**20 outcomes (api §4).
            if policy._chance.name == "expand_all" and d.max_chance > _EXPAND_MAX:
                raise ValueError(
                    f"ExpandAll cannot enumerate {d.max_chance} chance outcomes (bound {_EXPAND_MAX}); use a "
                    "sampling chance mode for combinatorial outcome spaces"
                )
        self._search = _search_spec(policy, learner, d, n_games) if policy.name in _SEARCH else None

    # -- configuration --------------------------------------------------------------------------

    def resolved_config(self) -> dict:
        """The fully resolved composition (defaults filled in), JSON-compatible.

        Returns:
            ``{"engine", "game", "learner", "policy", "reward", "reinfors_version",
            "schema_version"}`` blocks; ``rf.engine_from_config`` rebuilds the engine from it.
        """
        sb, cap, pf = self._start_buffer
        return {
            "engine": {
                "batch_size": self._batch_size or None,
                "infer_cache": self._infer_cache,
                "learn_players": None if self._learn_players is None else list(self._learn_players),
                "n_games": self._n_games,
                "n_threads": self._n_threads,
                "pad": True if self._pad else None,
                "seed": self._seed,
                "start_buffer": {"capacity": cap, "p_fresh": pf} if sb else None,
            },
            "game": self._game._resolved(),
            "learner": self._learner._config(),
            "policy": self._policy._config(),
            "reinfors_version": VERSION,
            "reward": dict(sorted(self._weights_map.items())),
            "schema_version": CONFIG_SCHEMA,
        }

    def config_fingerprint(self) -> str:
        """A hash of the canonical composition (batch_size, n_threads, pad and infer_cache
        included).

        Returns:
            64 lowercase hex characters.
        """
        return _canon.fingerprint(self.resolved_config())

    # -- weights ----------------------------------------------------------------------------------

    def weights_updated(self, player: int | None = None) -> None:
        """Bump the weights generation (thread-safe; callable during a stream).

        Records inferred from now on carry the new generation (``batch.weights_generations``);
        inference-cache entries of older generations are no longer served.  With the cache off
        this only counts.

        Args:
            player: the player whose network changed; ``None`` is every player (one shared
                network).

        Raises:
            TypeError: ``player`` is not an int.
            OverflowError: a negative ``player``.
            ValueError: ``player`` is not a player of the game.
        """
        if player is not None:
            p = as_unsigned("player", player)
            n = self._game._def.n_players
            if p >= n:
                raise ValueError(f"player {p} out of range (this game has {n} players)")
        with self._gen_lock:
            self._generation += 1
            if player is None:
                self._pgen += 1
            else:
                self._pgen[p] += 1
            rt = self._rt
            if rt is not None:
                rt.ctl[C.C_WGEN] = _stamp(self._generation)  # fires stamp records with it
                rt.publish_generations()  # the runtime shares self._pgen

    # -- collection -------------------------------------------------------------------------------

    def _runtime(self) -> Runtime:
        if self._rt is None:
            d = self._game._def
            pol, lrn = self._policy, self._learner
            search = self._search
            if search is not None and "too_big" in search:
                raise MemoryError(search["too_big"])
            n = self._n_games
            batch = self._batch()
            threads = self._n_threads or min(os.cpu_count() or 1, n)
            learn = np.zeros(d.n_players, np.int64)
            for p in self._learn_players if self._learn_players is not None else range(d.n_players):
                learn[p] = 1
            lp = lrn._params
            if pol.output == "q":
                width = pol.n_heads * d.n_actions
            else:
                width = d.n_actions + 1
            routes = d.n_players  # the cache is sized for the most partitions a collect can use
            cache_bytes = 2 * routes * self._infer_cache * (24 + 8 * width)
            if cache_bytes > CACHE_BYTES_LIMIT:
                # Checked when the cache is allocated (the first collect), like the search trees:
                # the original accepts any u64 and grows its cache lazily.
                raise MemoryError(
                    f"infer_cache={self._infer_cache} needs up to {cache_bytes} bytes of preallocated cache "
                    f"(two views x {routes} partitions x {24 + 8 * width} bytes per entry; limit "
                    f"{CACHE_BYTES_LIMIT}); use a smaller infer_cache"
                )
            self._check_preallocation(batch, width, cache_bytes)
            # a cold module: work here, the rest beside (the compile bar counts the helper's kernels)
            helper, self._compile_helper = getattr(self, "_compile_helper", None), None
            compile_cold(self, self._kernel_module(), getattr(self, "_compile_session", None), helper)
            spec = RuntimeSpec(
                policy_kind=_POLICY_KINDS[pol.name],
                learner_kind=_LEARNER_KINDS[lrn.name],
                n_games=n,
                seed=self._seed,
                batch_size=batch,
                n_threads=threads,
                learn=learn,
                n_routes=1,
                pad=self._pad,
                weights=[self._weights_map[k] for k in d.reward_keys],
                n_heads=pol.n_heads if pol.output == "q" else 1,
                n_step=min(lp.get("n_step", 1), 2**40),  # any n >= an episode is the same window; u64 fits no int64 cfg slot
                epsilon=pol._params.get("epsilon", 0.0),
                gamma=lp.get("gamma", 0.99),
                lam=lp.get("lam", 0.95),
                bootstrap_p=lp.get("bootstrap_p", 1.0),
                width=width,
                search=search,
                infer_cache=self._infer_cache,
                start_buffer=self._start_buffer[1:] if self._start_buffer[0] else None,
                user_batch=bool(self._batch_size),
            )
            self._rt = Runtime(d, spec, pgen=self._pgen)
            with self._gen_lock:
                self._rt.ctl[C.C_WGEN] = _stamp(self._generation)
        return self._rt

    def _batch(self) -> int:
        """The rows of a full callback call: ``batch_size``, or the automatic batch."""
        search, n = self._search, self._n_games
        batch = self._batch_size or max(1, n // 2)
        if not self._batch_size and search is not None and search["max_rows"] > 1:
            # Automatic batch for multi-row searches (a Minimax round is thousands of rows per
            # slot): fill calls from half the rows that can be in flight, up to 4096 rows.
            # The rows in flight are the bound times the share a round typically requests
            # (``rows_share``: SelectiveExpectimax 1/4): with a batch above the rows actually
            # in flight no arena fills, every call waits for quiescence and the workers idle
            # (Snake defaults, 16 games: 3.3-3.6 k rec/s at 80-160 rows, 0.6 k at 256-640).
            share = 2 * search.get("rows_share", 1)
            batch = max(batch, min(AUTO_SEARCH_BATCH, n * search["max_rows"] // share))
        return batch

    def _check_preallocation(self, batch: int, width: int, cache_bytes: int) -> None:
        """Refuse (MemoryError naming the parameter and the bytes) a first collect whose trees,
        arenas, predictions and cache cannot fit in the memory left (``_runtime.budget``)."""
        d, search = self._game._def, self._search
        parts = budget.preallocation(
            n_games=self._n_games, n_players=d.n_players, obs_size=d.obs_size, width=width,
            max_rows=search["max_rows"] if search is not None else 1, batch=batch, pad=self._pad,
            tree_bytes=search.get("tree_bytes", 0) if search is not None else 0,
            tree_knob=search.get("tree_knob", "n_games") if search is not None else "n_games", cache_bytes=cache_bytes,
        )  # fmt: skip
        budget.check(parts, f"this engine ({self._subject()}, n_games={self._n_games})")

    def _kernel_module(self):
        """The generated kernel module this engine's runtime runs on (imported, not compiled)."""
        search = self._search
        leaf_batch = search is not None and search.get("leaf_batch", 1) > 1
        family = kernel_family(_POLICY_KINDS[self._policy.name], self._infer_cache)
        return self._game._def.kernels_for(family, leaf_batch)

    def _subject(self) -> str:
        """What a first compile of this engine builds (for the compile notice)."""
        d = self._game._def
        return f"{d.name} with {self._policy.name} + {self._learner.name}"

    def _validator(self):
        d = self._game._def
        pol = self._policy
        if pol.output == "q":
            return QValidator(pol.n_heads, d.n_actions)
        # In place unless the cache logs the rows: its log stores them whole.
        return PVValidator(d.n_actions, SEARCH_LABELS.get(pol.name, "Ppo"), in_place=not self._infer_cache)

    def collect(
        self, n_records: int, infer: Callable[[np.ndarray], Any] | Sequence[Callable[[np.ndarray], Any]], *, progress: bool = False
    ) -> AlphaZeroBatch | DqnBatch | PpoBatch | TreeStrapBatch:
        """Collect at least ``n_records`` records (a floor; batches may exceed it).

        ``infer(obs)`` receives float32 ``(rows, obs_size)`` (a zero-copy, C-contiguous view)
        and returns the policy's output; a sequence of one callable per player routes each
        player's rows to its own callback.  Errors raised by the callback propagate with their own
        type, and the engine stays usable.  ``progress=True`` shows a tqdm bar of records.
        A first collect on a cold cache calls each callback once on two real observation rows
        before it compiles the kernels, and checks the outputs as a fire would, so a wrong shape
        or dtype fails at once (``reinfors/_runtime/probe.py``); a compile shows a bar on stderr
        (``reinfors/_runtime/notice.py``).
        Telemetry: ``infer_seconds`` depends on timing; records and every other key are a
        function of the seed (with ``infer_cache``, or ``REINFORS_TIMED_FIRES=1``, also the call
        counts of ``TIMING_TELEMETRY_WITH_CACHE``).

        Args:
            n_records: the least number of records to return.
            infer: the network: ``infer(obs)`` for every player, or one callable per player.  It
                returns ``(logits (rows, >= A), values (rows,))`` for ``Ppo`` / ``AlphaZero``,
                Q values ``(rows, n_heads, A)`` for the other policies (float32 or float64).
            progress: show a tqdm progress bar of records.

        Returns:
            The learner's batch (``PpoBatch``, ``DqnBatch``, ``AlphaZeroBatch`` or
            ``TreeStrapBatch``) with its ``telemetry``.

        Raises:
            TypeError: ``infer`` is not callable (or a sequence of the wrong length), or it
                returned the wrong type, rank or dtype.
            OverflowError: a negative ``n_records``.
            ValueError: a callback output of the wrong shape or with a NaN / infinity.
            MemoryError: ``n_records`` needs more memory than is available.
            RuntimeError: the engine is held by a ``collect_stream``.
        """
        n_records = as_unsigned("n_records", n_records)
        if self._held:  # checked before infer, as the original
            raise RuntimeError(_HELD)
        fns = resolve_infer(infer, self._game._def.n_players)
        self._check_fits("n_records", n_records)
        with self._lock:
            if self._held:  # a stream started while this call waited for the lock
                raise RuntimeError(_HELD)
            return self._collect(n_records, fns, progress)

    def _record_bytes(self) -> int:
        """A lower bound of the bytes one record costs at the peak of a collect: its record-pool
        row (observation, targets, legality, metadata) plus the batch fields built beside it,
        counting no legal-action ids (their number is only known once the states are).  A floor
        is refused only when even this bound cannot fit, so no collect that could fit is."""
        d, pol = self._game._def, self._policy
        O, A = d.obs_size, d.n_actions
        H = pol.n_heads if pol.output == "q" else 1
        dqn = self._learner.name == "dqn"
        pool = 4 * O * (2 if dqn else 1) + 8 * (C.RM_SIZE + C.RF_SIZE) + 4 * H + A * (2 if dqn else 1)
        if self._search is not None:
            pool += 8 * H * A  # r_tgt
        fields = 8 * 3 + 8 * 5 + 8 * (2 if dqn else 1)  # players, actions, generations, float columns, CSR offsets
        return pool + fields

    def _check_fits(self, label: str, n_records: int) -> None:
        """Refuse, before any work, a record floor whose batch cannot fit in the memory left."""
        avail = _available_memory()
        if avail is None:
            return
        need = n_records * self._record_bytes()
        if need > avail:
            raise MemoryError(
                f"{label}={n_records} needs at least {need / 1e9:.1f} GB for the batch and its record pool "
                f"({self._record_bytes()} bytes per record), more than the {avail / 1e9:.1f} GB of memory "
                f"available; collect in smaller windows"
            )

    def _collect(self, n_records, fns, progress):
        """One collect window on the calling thread (``self._lock`` held).  Returns the batch, or
        None when a stream's ``stop()`` aborted the window (``Runtime.request_abort``): its
        records are then discarded."""
        tele = {k: 0 for k in TELEMETRY_KEYS}
        tele["episodes"] = []
        tele["infer_seconds"] = 0.0
        for k in ("mean_leaves", "mean_rounds", "mean_expansions", "mean_sigma", "mean_disagreement"):
            tele[k] = 0.0
        if len(fns) > 1 and self._pad:
            raise ValueError("pad supports a single shared infer callback")
        if n_records == 0:
            return self._empty_batch(tele)
        if self._rt is not None and self._rt.warmed:
            return self._collect_window(n_records, fns, progress, tele, None)
        k = self._kernel_module()
        with compile_notice(self._subject(), total=planned_total(self, k)) as session:
            try:
                if self._rt is None and not _work_cached(k):
                    # A cold first collect: the compile helper starts now (it compiles while the
                    # probe does), and the callbacks' outputs are checked on real observations
                    # before this process compiles work (the errors a first fire would raise, in
                    # a second).
                    self._compile_helper = start_helper(self, k, session)
                    session.counting = False
                    self._probe(fns)
                    session.counting = True
                self._compile_session = session
                return self._collect_window(n_records, fns, progress, tele, session)
            finally:
                self._compile_session = None
                if self._compile_helper is not None:  # the collect failed before compile_cold
                    self._compile_helper.stop()
                    self._compile_helper = None

    def _probe(self, fns) -> None:
        """Call each callback once on two real observation rows and validate its output
        (``_runtime/probe.py``)."""
        pad_rows = self._batch() if self._pad else None
        _probe.check(self._game._def, fns, self._validator, seed=self._seed % (1 << 63), pad_rows=pad_rows)

    def _collect_window(self, n_records, fns, progress, tele, session):
        """The window of :meth:`_collect`; ``session`` (first collect: the compile bar) sees the
        runtime built and the window's kernels compiled."""
        first = session is not None
        rt = self._runtime()
        rt.set_routes(len(fns))
        cache_before = rt.cache_counters()
        validate = self._validator()
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=n_records, unit="rec", desc="collect", mininterval=0.25)

        def tick(n):
            if bar is not None:
                n = min(n, n_records)
                if n > bar.n:
                    bar.update(n - bar.n)  # tqdm rate-limits the redraws

        rt["tele"][:, C.TL_MAXDEPTH] = 0  # a per-window maximum, not a running sum
        rt["ftele"][:, [C.FT_SIGMA, C.FT_DISAGREE]] = 0.0  # per-window float sums
        tele_before = rt["tele"].sum(axis=0).copy()
        rt.error = None
        if first:
            session.attach(bar)
        try:
            rt.run_window(n_records, fns, validate, tele, tick)
            if first:
                rt.warmed = True
        except BaseException:
            # A kernel invariant or an interrupt: the runtime cannot be trusted any more.
            self._discard_runtime()
            raise
        finally:
            if first:
                session.detach()
            if bar is not None:
                tick(n_records if rt.error is None else bar.n)
                bar.close()
        if rt.error is not None:
            err, rt.error = rt.error, None
            rt.reset_pool()  # the window ran on zero outputs: its records are discarded
            raise err
        if rt.abort_requested:
            rt.reset_pool()  # an aborted window (stream stop): its records are discarded
            return None
        delta = rt["tele"].sum(axis=0) - tele_before
        tele["decisions"] = int(delta[C.TL_DECISIONS])
        tele["requested_rows"] = int(delta[C.TL_REQUESTED])
        tele["tail_rows"] = int(delta[C.TL_TAIL])
        if self._infer_cache:
            cache = rt.cache_counters()
            demoted = cache["demotions"] - cache_before["demotions"]
            tele["cache_lookups"] = int(delta[C.TL_LOOKUPS])
            tele["cache_hits"] = int(delta[C.TL_HITS]) - demoted  # hits actually served
            tele["cache_demotions"] = demoted
            tele["stall_releases"] = cache["stall_releases"] - cache_before["stall_releases"]
        if self._search is not None:
            searches = int(delta[C.TL_SEARCHES])
            tele["terminal_sims"] = int(delta[C.TL_TERMSIMS])
            tele["depthcap_sims"] = int(delta[C.TL_DEPTHCAP])
            tele["extra_eval_rows"] = int(delta[C.TL_EXTRA])
            tele["max_depth"] = int(rt["tele"][:, C.TL_MAXDEPTH].max())
            for key, col in (
                ("mean_leaves", C.TL_LEAVES),
                ("mean_rounds", C.TL_ROUNDS),
                ("mean_expansions", C.TL_EXPANSIONS),
            ):
                tele[key] = float(delta[col]) / searches if searches else 0.0
            if self._policy.name == "selective_expectimax" and searches:
                ft = rt["ftele"]
                tele["mean_sigma"] = float(ft[:, C.FT_SIGMA].sum()) / searches
                tele["mean_disagreement"] = float(ft[:, C.FT_DISAGREE].sum()) / searches
        eps = rt.take_episodes()
        order = np.lexsort((eps[:, 0], eps[:, 2])) if len(eps) else np.zeros(0, np.int64)
        N = self._game._def.n_players
        eps = eps[order]  # one conversion to Python values per column, not per episode and field
        tele["episodes"] = [
            [ret, length, seeded]
            for ret, length, seeded in zip(
                eps[:, 3 : 3 + N].tolist(), eps[:, 1].astype(np.int64).tolist(), (eps[:, 3 + N] != 0).tolist(), strict=True
            )
        ]
        return self._build_batch(tele)

    def _discard_runtime(self) -> None:
        """Drop a runtime whose kernels failed (never after a mere callback error: that window
        completes on zero outputs and the engine continues from its state, as the original)."""
        rt = self._rt
        if rt is not None:
            rt.close()
        self._rt = None

    def _build_batch(self, tele):
        """The finished window's records as the learner's batch type.  The pool's arrays are
        handed over in batch order (``Runtime.take_records``): observations and search targets
        become batch fields without a copy."""
        r = self._rt.take_records()
        m = len(r["r_meta"])
        meta, f = r.pop("r_meta"), r.pop("r_f")
        d = self._game._def
        players = meta[:, C.RM_PLAYER].copy()
        # Action-indexed fields are in the encoder's head frame (the records hold game actions).
        perm = d.head_table()
        legal_ids, legal_off = _records.legal_csr(r.pop("r_legal"), m, d.legal_ranks)
        searched = self._learner.name in ("alphazero", "treestrap")  # their batches carry no actions
        if perm is not None:
            _records.map_ids(legal_ids, legal_off, players, perm)
            if self._learner.name == "treestrap":
                _records.map_columns(r["r_tgt"], players, perm)
        actions = None
        if not searched:
            actions = meta[:, C.RM_ACTION]
            actions = perm[players, actions] if perm is not None else actions.copy()
        common = dict(
            obs=r["r_obs"],
            players=players,
            weights_generations=meta[:, C.RM_GEN].copy(),
            legal_ids=legal_ids,
            legal_offsets=legal_off,
            telemetry=tele,
        )
        if self._learner.name == "alphazero":
            # The records' compact targets (one per legal id, in CSR order: already in the head
            # frame once the ids are) scatter into zeroed rows.
            targets, dirty = self._spare.take(m, d.n_actions)
            _records.scatter_rows(r["r_tgt"], legal_ids, legal_off, targets, dirty)
            return AlphaZeroBatch(
                policy_targets=targets,
                value_targets=f[:, C.RF_Z].copy(),
                policy_weights=f[:, C.RF_WEIGHT].copy(),
                **common,
            )
        if self._learner.name == "treestrap":
            common.pop("legal_ids")
            common.pop("legal_offsets")
            H = self._policy.n_heads
            return TreeStrapBatch(
                targets=r["r_tgt"].reshape(m, H, self._game._def.n_actions),
                masks=r["r_mask"],
                **common,
            )
        if self._learner.name == "dqn":
            flags = meta[:, C.RM_FLAGS]
            next_ids, next_off = _records.legal_csr(r["r_next_legal"], m, d.legal_ranks)
            if perm is not None:
                _records.map_ids(next_ids, next_off, players, perm)
            return DqnBatch(
                actions=actions,
                rewards=f[:, C.RF_REWARD].copy(),
                next_obs=r["r_next_obs"],
                dones=(flags & 1).astype(bool),
                can_bootstrap=(flags & 2).astype(bool),
                discounts=f[:, C.RF_DISCOUNT].copy(),
                masks=r["r_mask"],
                next_legal_ids=next_ids,
                next_legal_offsets=next_off,
                **common,
            )
        return PpoBatch(
            actions=actions,
            behavior_log_probs=f[:, C.RF_LOGP].copy(),
            advantages=f[:, C.RF_ADV].copy(),
            returns=f[:, C.RF_RET].copy(),
            values=f[:, C.RF_VALUE].copy(),
            **common,
        )

    def _empty_batch(self, tele):
        d = self._game._def
        O = d.obs_size
        e_i = np.zeros(0, np.int64)
        e_f = np.zeros(0, np.float64)
        common = dict(
            obs=np.zeros((0, O), np.float32),
            players=e_i,
            weights_generations=e_i.copy(),
            legal_ids=e_i.copy(),
            legal_offsets=np.zeros(1, np.int64),
            telemetry=tele,
        )
        A = d.n_actions
        if self._learner.name == "alphazero":
            return AlphaZeroBatch(
                policy_targets=np.zeros((0, A), np.float64),
                value_targets=e_f,
                policy_weights=e_f.copy(),
                **common,
            )
        if self._learner.name == "treestrap":
            H = self._policy.n_heads
            return TreeStrapBatch(
                obs=common["obs"],
                players=e_i,
                weights_generations=common["weights_generations"],
                targets=np.zeros((0, H, A), np.float64),
                masks=np.zeros((0, H), np.float32),
                telemetry=tele,
            )
        if self._learner.name == "dqn":
            H = self._policy.n_heads
            return DqnBatch(
                actions=e_i.copy(),
                rewards=e_f,
                next_obs=np.zeros((0, O), np.float32),
                dones=np.zeros(0, bool),
                can_bootstrap=np.zeros(0, bool),
                discounts=e_f.copy(),
                masks=np.zeros((0, H), np.float32),
                next_legal_ids=e_i.copy(),
                next_legal_offsets=np.zeros(1, np.int64),
                **common,
            )
        return PpoBatch(
            actions=e_i.copy(),
            behavior_log_probs=e_f,
            advantages=e_f.copy(),
            returns=e_f.copy(),
            values=e_f.copy(),
            **common,
        )

    def collect_stream(
        self, collect_size: int, infer: Callable[[np.ndarray], Any] | Sequence[Callable[[np.ndarray], Any]], depth: int | None = 1
    ) -> CollectStream:
        """Start background collection: a :class:`~reinfors.CollectStream` whose one thread runs
        ``collect(collect_size, infer)`` windows back to back into a queue of at most ``depth``
        finished batches (default 1; ``None`` = unbounded).

        The stream holds the engine until its ``stop()`` / ``pause()`` / context exit: meanwhile
        ``collect``, ``collect_stream``, ``snapshot`` and ``restore`` raise RuntimeError.  Argument
        errors leave the engine free.  A depth-1 stream yields the same batches as sequential
        ``collect(collect_size, infer)`` calls.

        Args:
            collect_size: records per window (>= 1), as ``collect``'s ``n_records``.
            infer: the network, as for :meth:`collect`; it is called on the stream's thread.
            depth: finished batches queued at most (>= 1); ``None`` is unbounded.

        Returns:
            The running stream; use it as a context manager (``with ... as stream``).

        Raises:
            TypeError: an argument of the wrong type.
            OverflowError: a negative ``collect_size`` or ``depth``.
            ValueError: ``collect_size`` or ``depth`` is 0, or ``pad`` with one callback per player.
            MemoryError: a window needs more memory than is available.
            RuntimeError: the engine is already held by a stream.
        """
        collect_size = as_unsigned("collect_size", collect_size)
        depth = None if depth is None else as_unsigned("depth", depth)
        # The original's order: conversions, ranges, the held check, then the callbacks.
        if collect_size < 1:
            raise ValueError("collect_size must be >= 1")
        if depth == 0:
            raise ValueError("depth must be >= 1, or None for unbounded")
        if self._held:
            raise RuntimeError(_HELD)
        fns = resolve_infer(infer, self._game._def.n_players)
        if len(fns) > 1 and self._pad:
            raise ValueError("pad supports a single shared infer callback")
        self._check_fits("collect_size", collect_size)
        with self._lock:  # a collect() running on another thread finishes first
            if self._held:
                raise RuntimeError(_HELD)
            self._held = True
        try:
            return CollectStream._start(self, collect_size, fns, depth)
        except BaseException:
            self._held = False
            raise

    # -- not yet available ------------------------------------------------------------------------

    def snapshot(self, policy_version: str | None = None) -> EngineSnapshot:
        """The collection state between windows (slots, RNG streams, open trajectories, window
        counters, weights generation; never the inference cache) as an :class:`EngineSnapshot`.

        ``restore`` on an engine of the same composition (any ``batch_size``, ``n_threads``,
        ``pad``) continues record-exactly.

        Args:
            policy_version: an optional label stored with the snapshot (e.g. your checkpoint's
                name); ``restore(expect_policy_version=...)`` checks it.

        Returns:
            The snapshot (``to_bytes()`` serialises it).

        Raises:
            TypeError: ``policy_version`` is not a str.
            RuntimeError: the engine is held by a ``collect_stream``.
        """
        if policy_version is not None and not isinstance(policy_version, str):
            raise TypeError(
                f"argument 'policy_version': '{type(policy_version).__name__}' object cannot be converted to 'PyString'"
            )
        if self._held:
            raise RuntimeError(_HELD)
        with self._lock:
            return _snapshot.capture(self.resolved_config(), self._generation, policy_version, self._rt)

    def restore(self, snapshot: EngineSnapshot, expect_policy_version: str | None = None) -> None:
        """Continue from ``snapshot`` (taken by an engine of the same composition).

        Raises ValueError for another composition (fingerprint mismatch), a ``policy_version``
        other than ``expect_policy_version`` (when given) or a snapshot whose state does not fit
        this engine; everything is validated before anything changes, so a rejected restore
        leaves the engine as it was.

        Args:
            snapshot: a snapshot taken by ``Engine.snapshot`` (or ``EngineSnapshot.from_bytes``).
            expect_policy_version: when given, the snapshot's ``policy_version`` must equal it.

        Raises:
            TypeError: ``snapshot`` is not an ``EngineSnapshot``, or ``expect_policy_version`` not
                a str.
            ValueError: another composition, another policy version, or a state that does not fit.
            RuntimeError: the engine is held by a ``collect_stream``.
        """
        if not isinstance(snapshot, EngineSnapshot):
            raise TypeError(
                f"argument 'snapshot': '{type(snapshot).__name__}' object cannot be converted to 'EngineSnapshot'"
            )
        if expect_policy_version is not None and not isinstance(expect_policy_version, str):
            raise TypeError(
                f"argument 'expect_policy_version': '{type(expect_policy_version).__name__}' object cannot be "
                "converted to 'PyString'"
            )
        if self._held:
            raise RuntimeError(_HELD)
        with self._lock:
            mine = _snapshot.snapshot_fingerprint(self.resolved_config())
            if snapshot.fingerprint != mine:
                raise ValueError(
                    f"snapshot is from a different composition (fingerprint {snapshot.fingerprint} != {mine})"
                )
            pv = snapshot.policy_version
            if expect_policy_version is not None and pv != expect_policy_version:
                have = "None" if pv is None else f"Some({_rust_str(pv)})"
                raise ValueError(
                    f"policy_version mismatch: snapshot has {have}, expected {_rust_str(expect_policy_version)}"
                )
            header, arrays = snapshot._header, snapshot._arrays
            if header["fresh"]:
                self._discard_runtime()  # the next collect starts from the seed state
            else:
                rt = self._runtime()
                scalars = dict(header["scalars"], rate=header["rate"])
                reason = rt.check_state(arrays, scalars)
                if reason is not None:
                    raise ValueError(f"invalid EngineSnapshot: {reason}")
                rt.load_state(arrays, scalars)
            with self._gen_lock:
                self._generation = snapshot.weights_generation
                if self._rt is not None:
                    self._rt.ctl[C.C_WGEN] = _stamp(self._generation)  # the stamping continues from it

    def __del__(self):
        rt = getattr(self, "_rt", None)
        if rt is not None:
            rt.close()

    def __repr__(self) -> str:
        return f"Engine({self._game.name!r}, {self._policy.name!r}, {self._learner.name!r}, n_games={self._n_games})"


def _stamp(generation: int) -> int:
    """The weights generation as the int64 records are stamped with (``weights_generations``):
    modulo 2**64, two's complement — only a (forged) snapshot generation >= 2**63 wraps."""
    return (generation + (1 << 63)) % (1 << 64) - (1 << 63)


def _rust_str(s: str) -> str:
    """``s`` as Rust's ``{:?}`` renders a string (the original's policy_version messages)."""
    out = []
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\0":
            out.append("\\0")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _available_memory() -> int | None:
    """Bytes of memory available to a new allocation (``MemAvailable``), or None when unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None

# not picklable, as 0.4.0 (tests/reliability/test_no_pickle.py)
Engine.__reduce_ex__ = refuse_pickle
