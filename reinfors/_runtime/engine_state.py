"""The engine's state: the preallocated arrays ``E`` addresses, their geometry and growth.

Owns the per-slot arrays (game state, RNG, trees, scratch), the routes' arenas and span tables
(:meth:`EngineState._size_routes` / :meth:`EngineState._alloc_routes`), the inference cache's
tables, the address table ``E`` the kernels receive (:meth:`EngineState._build_E`, checked
against ``reinfors/jit/engine_schema.py``) and the *reallocation barrier*
(:meth:`EngineState._helpers_out`): no array is replaced while a worker can be inside a kernel.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from reinfors.jit import engine_codes as C

from . import budget
from . import schema as _schema
from .firing import FirePolicy

# Pipelined fires (firing.py): the largest batch an arena may hand an accelerator-like callback,
# and the most memory the arenas of a runtime may take to allow it (otherwise they stay at the
# CPU design's automatic batch).
MAX_PIPELINE_ROWS = 8192


MAX_ARENA_BYTES = 256 << 20


class EngineState:
    """Arrays, geometry and growth of one runtime (a mixin of ``Runtime``).

    Reads the spec attributes ``Runtime.__init__`` sets (``G``, ``N``, ``A``, ``O``, ``gdef``,
    ``search``, ``max_rows``, ``batch_size``, ``pad``, ``width``, ...) and ``_helpers``
    (``workers.py``)."""

    def _allocate(self, spec) -> dict:
        """Every state array of the schema for ``spec`` (the routes' arenas and the cache's
        tables are placeholders here: ``_alloc_routes`` sizes them)."""
        gdef, G, N, A, O = self.gdef, self.G, self.N, self.A, self.O
        cfg, fcfg, sb_cap = self.cfg, self.fcfg, int(self.cfg[C.CFG_SB])
        M = 64  # first record-pool rows (grown per window: _ensure_capacity)
        return dict(
            params=gdef.params,
            cfg=cfg,
            fcfg=fcfg,
            weights=np.asarray(spec.weights, np.float64),
            learn=np.asarray(spec.learn, np.int64),
            ctl=self.ctl,
            states=np.zeros((G, gdef.state_size), np.int64),  # [G, S]
            srng=np.zeros((G, 1), np.uint64),  # [G, 1] slot RNG rows
            sinfo=np.zeros((G, C.SI_SIZE), np.int64),  # [G, SI]
            act_agents=np.zeros((G, N), np.int64),  # [G, N] acting agents / tail players
            root=np.zeros((G, N, O), np.float32),  # [G, N, O] root rows
            legal=np.zeros((G, N, A), np.uint8),  # [G, N, A]
            preds=np.zeros((G, self.max_rows, self.width), np.float64),  # [G, rows, W] routed predictions
            iscr=np.zeros((G, 3 * N + C.MSG_W), np.int64),  # [G, .] per-slot int scratch
            # [G, .] float scratch: A, rewards N, chance C, search max(A, N), nested chance C
            fscr=np.zeros((G, A + N + 2 * max(1, gdef.max_chance) + max(A, N)), np.float64),
            amounts=np.zeros((G, N, len(spec.weights)), np.float64),  # [G, N, K] reward-key amounts
            ep_ret=np.zeros((G, N), np.float64),  # [G, N] running episode returns
            arena_rows=None,  # [R, NA, CAP, O] float32, see _alloc_routes
            arena_ctl=None,  # [R * NA] uint64 packed control words
            arena_done=None,  # [R * NA] uint64 settled counters
            msg_seq=self.msg[0],
            msg_data=self.msg[1],
            msg_pos=self.msg[2],
            r_meta=np.zeros((M, C.RM_SIZE), np.int64),
            r_f=np.zeros((M, C.RF_SIZE), np.float64),
            r_obs=np.zeros((M, O), np.float32),
            r_next_obs=np.zeros((M if spec.learner_kind == C.LEARNER_DQN else 0, O), np.float32),
            r_mask=np.zeros((M, spec.n_heads), np.float32),
            r_legal=np.zeros((M, A), np.uint8),
            r_next_legal=np.zeros((M if spec.learner_kind == C.LEARNER_DQN else 0, A), np.uint8),
            traj_idx=np.zeros((G, N, 8), np.int64),  # [G, N, L] open trajectory / segment records
            traj_cnt=np.zeros((G, N), np.int64),  # [G, N]
            last_act=np.zeros((G, N), np.int64),  # [G, N] acted in the slot's last tick
            tele=np.zeros((G, C.TL_SIZE), np.int64),
            pending=np.zeros(G, np.int64),
            episodes=np.zeros((M, 4 + N), np.float64),  # slot, length, end level, returns N, seeded
            rdy_seq=self.rdy[0],
            rdy_data=self.rdy[1],
            rdy_pos=self.rdy[2],
            **self._tree_arrays(G, gdef.state_size, self.search, spec.n_heads),
            rq=np.zeros((G, self.max_rows, 2), np.int64),  # [G, rows, 2] request row sources
            r_tgt=np.zeros((M, spec.n_heads * A if self.search is not None else 0), np.float64),  # [M, H * A]
            ftele=np.zeros((G, C.FT_SIZE), np.float64),  # [G, FT] float telemetry
            cctl=np.zeros(C.CC_BASE + 8 * max(1, N), np.int64),
            # per request row: key (2 words), kind, aux; request-local key index
            rkeys=np.zeros((G if spec.infer_cache else 1, self.max_rows, 4), np.uint64),
            rdedup=np.zeros((G if spec.infer_cache else 1, 2 * self.max_rows), np.int64),
            # start_buffer: each slot's reservoir of reached states (one placeholder row when off)
            # (rows grow with the states held, up to the capacity: see _ensure_capacity)
            sb_states=np.zeros((G, min(max(1, sb_cap), 64), gdef.state_size if sb_cap else 1), np.int64),
            sb_meta=np.zeros((G, C.SB_SIZE), np.int64),
            sb_rng=np.zeros((G, 1), np.uint64),
        )

    def _tree_arrays(self, G, S, search, n_heads) -> dict:
        """The per-slot search trees (struct of arrays; tiny placeholders without search)."""
        N, A = self.N, self.A
        # Without search a slot's t_edges row is the model-free choices' legal-order scratch
        # (games with LEGAL_RANKS: engine_slots.py); the other tree arrays are placeholders.
        G_order = G if search is None and self.gdef.legal_ranks and not self.gdef.simultaneous else 1
        if search is None:
            G = M = P = S = 1
        else:
            M, P = search["nodes"], search["path"]
        maxn = bool(search and search.get("maxn"))
        # Simultaneous games keep one table per agent: edge arrays span N * A (index p * A + a).
        E_A = N * A if self.gdef.simultaneous else A
        return dict(
            t_state=np.zeros((G, M, S), np.int64),  # node states
            t_ni=np.zeros((G, M, C.TN_SIZE), np.int64),  # mover, depth, flags, visits, links
            t_child=np.zeros((G, M, A), np.int64),  # child per action (-1 none; sequential games)
            t_visits=np.zeros((G, M, E_A), np.int64),  # edge visits
            t_ef=np.zeros((G, M, E_A, C.EF_RALL + (N if maxn else 0)), np.float64),  # prior, value sum, rewards
            # values, rewards, prob / pw, sigma (SelectiveExpectimax on simultaneous games: n_heads + 5);
            # the last column: an outcome child's probability (search_chance.py)
            t_nv=np.zeros((G, M, max(n_heads + 5, 2 * N + 1) + 1), np.float64),
            t_legal=np.zeros((G, M, E_A), np.uint8),  # legal masks (per agent when simultaneous)
            t_path=np.zeros((G, P, 2), np.int64),  # selection path (node, action)
            t_rng=np.zeros((G, 1), np.uint64),  # in-tree chance stream
            t_list=np.zeros((G, 4, M), np.int64),  # frontier (x2), new-node and batch lists
            # sequential games: each node's legal actions (in order; count in t_ni[..., TN_NLEG]; the
            # trees below the root touch only legal edges: search_parts.py); a placeholder when
            # simultaneous
            t_edges=np.zeros((max(G, G_order), M, 1 if self.gdef.simultaneous else A), np.int32),
        )

    def _size_routes(self, n_routes: int) -> None:
        """Arena geometry for ``n_routes`` routes (one shared callback, or one per player).

        Each route has one arena chain per cohort (``cohorts.py``): ``self.n_routes`` counts the
        *internal* routes, ``route * K + cohort``; ``self.user_routes`` the callbacks.
        ``capacity``: the rows an arena holds (a cohort's largest round, or the fire target with
        the cache on).  ``fire_min``: the automatic batch (``batch_size``, never more than a
        route can hold in flight, unless padding): with the inference cache on, the rows at
        which arenas close while the callback is a CPU one (``firing.py``); with cohorts, the
        pipelined policy's floor.  With the cache on and an accelerator-like callback
        (``pipelined_arenas``) the capacity is the largest batch it may be handed: every row a
        route can have in flight, up to :data:`MAX_PIPELINE_ROWS` and :data:`MAX_ARENA_BYTES`
        over the pool, and half the memory still available (``budget.available_bytes``; else it
        keeps ``fire_min``) (never past a ``batch_size`` the user set, a hard cap, or with
        ``pad``).  Enough arenas that a writer always finds a free one: a cohort's round, plus
        spares (the open arena, one being computed, one queued behind it, one lent to a
        callback that kept it)."""
        co = self.cohorts
        self.user_routes = n_routes
        self.n_routes = n_routes * co.count
        if self.search is not None:
            rows_per_route = self.G * self.max_rows  # one request per slot, any mix of players
        else:
            rows_per_route = self.G * self.N if n_routes == 1 else self.G
        self.rows_per_route = rows_per_route
        self.fire_min = self.batch_size if self.pad else max(1, min(self.batch_size, rows_per_route))
        if co.closing:
            self.capacity = co.capacity
            per_cohort = min(rows_per_route, co.size * self.max_rows)
            self.n_arenas = math.ceil(per_cohort / self.capacity) + 3
        else:
            self.n_arenas = math.ceil(rows_per_route / self.fire_min) + 4
            self.capacity = self._pipelined_capacity() if self.pipelined_arenas else self.fire_min

    def _alloc_routes(self) -> None:
        R, NA, CAP = self.n_routes, self.n_arenas, self.capacity
        rows = self._arrays["arena_rows"] = np.zeros((R, NA, CAP, self.O), np.float32)
        # Per arena (route * NA + i), the flat array over a memoryview of its rows that a fire's
        # loan is a view of (CallPath._loan): made once here, not two NumPy constructors a fire.
        self._loan_owners = [np.frombuffer(memoryview(a), np.float32) for a in rows.reshape(R * NA, CAP, self.O)]
        self._arrays["arena_ctl"] = np.zeros(R * NA, np.uint64)
        self._arrays["arena_done"] = np.zeros(R * NA, np.uint64)
        self.spans = np.zeros((R * NA, CAP, 4), np.int64)  # per arena: slot, start, rows, row offset
        self.span_n = np.zeros(R * NA, np.int64)
        self.cfg[C.CFG_ROUTES], self.cfg[C.CFG_ARENAS], self.cfg[C.CFG_CAP] = R, NA, CAP
        for r in range(R):
            self.ctl[C.C_ROUTE_CUR + 8 * r] = 0
            self.ctl[C.C_ROUTE_HITS + 8 * r] = 0
        self._policy = FirePolicy(CAP, self.fire_min)
        self._set_targets()
        self._alloc_cache()
        self.copy_mode = False  # set once a callback kept lent rows (reset with new arenas)
        self._route_fires = [0] * R  # fires per route (the stall ladder's progress measure)
        self._stalls = 0
        self._build_E()

    def _alloc_cache(self) -> None:
        """Inference-cache state for the current routes (one partition per route): two views of
        ``infer_cache`` entries, the insert log, per-arena row keys / key index / alias claims,
        and per-route gated tickets.  Placeholders when the cache is off.  A new set of routes
        means new callbacks: the cache starts empty."""
        R, NA, CAP, W = self.n_routes, self.n_arenas, self.capacity, self.width
        S = self.infer_cache
        on = S > 0
        P, S1 = (R, S) if on else (1, 1)
        rows = R * NA if on else 1
        L = 8 * CAP + 64 if on else 1
        a = self._arrays
        a["c_keys"] = np.zeros((2, P, S1, 2), np.uint64)
        a["c_gen"] = np.zeros((2, P, S1), np.int64)
        a["c_vals"] = np.zeros((2, P, S1, W), np.float64)
        a["c_logk"] = np.zeros((L, 2), np.uint64)
        a["c_logi"] = np.zeros((L, 2), np.int64)
        a["c_logv"] = np.zeros((L, W), np.float64)
        a["a_keys"] = np.zeros((rows, CAP if on else 1, 2), np.uint64)
        a["a_index"] = np.zeros((rows, 2 * CAP if on else 1), np.int64)
        a["a_alias"] = np.zeros((rows, CAP if on else 1, 3), np.int64)
        a["a_alias_n"] = np.zeros(R * NA, np.int64)  # full size: spans_complete reads it
        a["a_epoch"] = np.zeros(R * NA, np.int64)
        a["gated"] = np.zeros((R if on else 1, self.G * self.max_rows if on else 1, 3), np.int64)
        a["gated_n"] = np.zeros(R if on else 1, np.int64)
        cctl = a["cctl"]
        cctl[:] = 0
        self.cfg[C.CFG_ALIASES] = CAP
        self.publish_generations()

    def publish_generations(self) -> None:
        """Write the partition generations the kernels check from ``pgen`` (call after it
        changed): a shared route's partition moves with any player's weights, a per-player
        route's only with its player's.  Cached values of an older generation are never served
        again; gated tickets holding one are demoted."""
        cctl = self._arrays["cctl"]
        if self.user_routes == 1:
            cctl[C.CC_GEN] = int(self.pgen.sum())
        else:
            for p in range(self.user_routes):
                cctl[C.CC_GEN + 8 * p] = int(self.pgen[p])

    def cache_counters(self) -> dict:
        """Scheduler-side cache counters since the engine started."""
        cctl = self._arrays["cctl"]
        return {
            "demotions": int(cctl[C.CC_DEMOTED]),
            "stall_releases": int(cctl[C.CC_RELEASED]),
            "aliases": int(cctl[C.CC_ALIASES]),
            "dropped_inserts": int(cctl[C.CC_DROPPED]),
        }

    def set_routes(self, n_routes: int) -> None:
        """Switch between one shared route and one route per player (between windows only)."""
        if n_routes != self.user_routes:
            with self._helpers_out():
                self._size_routes(n_routes)
                self._alloc_routes()

    _ORDER = _schema.ORDER  # the address table's rows (reinfors/jit/engine_schema.py)

    def _build_E(self) -> None:
        """The address table every kernel entry point receives (reinfors/jit/pointers.py): row
        ``i = (address, dims...)`` of the i-th state array in ``_ORDER``, which the kernels read
        by name (``E.t_ni``).  Every array is checked against the schema (dtype, ndim) when its
        row is built.  The arrays stay referenced by ``self._arrays``; the table is rebuilt after
        any reallocation."""
        table = np.zeros((len(self._ORDER), 5), np.int64)
        seen = getattr(self, "_E_rows", None) or {}
        rows = {}
        for i, name in enumerate(self._ORDER):
            a = self._arrays[name]
            hit = seen.get(name)
            if hit is not None and hit[0] is a and hit[1][1 : 1 + a.ndim] == a.shape:
                row = hit[1]  # unchanged array: its address row (reading ctypes.data costs ~10 us)
            else:
                _schema.check_array(name, a)  # dtype, ndim and contiguity as the kernels read it
                row = (a.ctypes.data, *a.shape)
            rows[name] = (a, row)
            table[i, : len(row)] = row
        self._E_rows = rows
        self.E = table

    def __getitem__(self, name: str) -> np.ndarray:
        return self._arrays[name]

    def _grow(self, name: str, rows: int, axis: int = 0) -> bool:
        """Reallocate ``name`` to hold ``rows`` along ``axis`` (at least doubling), keeping its
        contents; True when it did (the address table must then be rebuilt)."""
        a = self._arrays[name]
        if a.shape[axis] >= rows:
            return False
        shape = list(a.shape)
        shape[axis] = max(rows, 2 * a.shape[axis])
        b = np.zeros(shape, a.dtype)
        idx = tuple(slice(0, s) for s in a.shape)
        if name == "r_tgt":  # the records' leading columns only: the rest of a row is never read
            n = int(self.ctl[C.C_REC])
            idx = (slice(0, n), slice(0, int(self._arrays["r_meta"][:n, C.RM_NTGT].max(initial=0))))
        b[idx] = a[idx]
        self._arrays[name] = b
        return True

    @contextlib.contextmanager
    def _helpers_out(self):
        """Reallocation barrier: raise C_STOP, wait until no helper is inside the kernel and
        hold the helpers' lock, so none can read the address table until the body (which frees
        arrays and rebuilds ``E``) is done.  Without it a helper woken late could read the old
        table, lose the GIL before entering the kernel, and run there on freed arrays once the
        next fire cleared C_STOP (heap corruption, seen as an abort under 8 threads)."""
        h = self._helpers
        if h is None:
            yield
            return
        self.ctl[C.C_STOP] = 1
        with h.cv:
            while h.busy:
                h.cv.wait(0.0005)
            yield

    def _ensure_capacity(self, levels_ahead: int) -> None:
        """Grow the record pool, episode log and PPO segments for ``levels_ahead`` more levels.

        Only called while no worker runs (every slot parked or not yet started)."""
        with self._helpers_out():
            self._ensure_capacity_locked(levels_ahead)

    def _ensure_capacity_locked(self, levels_ahead: int) -> None:
        G = self.G
        need = int(self.ctl[C.C_REC]) + G * self.rec_per_level * (levels_ahead + 2)
        dqn = self.learner_kind == C.LEARNER_DQN
        names = ("r_meta", "r_f", "r_obs", "r_mask", "r_legal", "r_tgt") + (("r_next_obs", "r_next_legal") if dqn else ())
        budget.check_growth(self._arrays, names, need, f"the record pool of n_games={G}")
        grew = False
        for name in names:
            grew |= self._grow(name, need)
        grew |= self._grow("episodes", int(self.ctl[C.C_EPISODES]) + G * (levels_ahead + 2))
        grew |= self._grow("traj_idx", int(self["traj_cnt"].max()) + levels_ahead + 2, axis=2)
        sb_cap = int(self.cfg[C.CFG_SB])
        if sb_cap:  # a slot reaches at most one state per level
            rows = min(sb_cap, int(self["sb_meta"][:, C.SB_STORED].max()) + levels_ahead + 2)
            budget.check_growth(self._arrays, ("sb_states",), rows, f"the start buffer of n_games={G}", axis=1,
                                param="start_buffer_capacity", hint="lower start_buffer_capacity or n_games")  # fmt: skip
            grew |= self._grow("sb_states", rows, axis=1)
        self.ctl[C.C_REC_CAP] = self._arrays["r_meta"].shape[0]
        if grew:  # the address table holds every array's address and shape
            self._build_E()
