"""The collection runtime: slots as preallocated arrays, worker threads, the scheduler loop.

Roles (docs/architecture.md, "Thread roles"):

* **slots** are row indices into the arrays of ``E`` (game state, RNG, acting agents, root rows,
  masks, predictions, learner windows); no Python object per slot;
* **workers** run the nogil ``work`` kernel: claim ready slots from a lock-free ring and advance
  each one until it blocks on inference or parks at the window target.  The calling thread is
  worker 0 (it runs ``work`` whenever it has nothing to fire); ``n_threads - 1`` helper threads
  run it too;
* **messages** (Emitted spans, Parked slots) travel through a NumPy ring that the scheduler
  drains in one njit call;
* **routes / arenas**: each route owns a chain of ``float32[capacity, obs]`` arenas with packed
  atomic control words; spans are reserved by CAS inside the kernel;
* the **scheduler** seals settled arenas, lends the callback a zero-copy view, validates the
  output once per fire and routes predictions back by position in one njit call; when nothing
  is in flight it closes and fires open arenas (quiescence), and it owns the window target.
  With an accelerator-like callback (``firing.py``) the window is *pipelined*: the loop runs on a
  ``reinfors-scheduler`` thread (also a worker), while the calling thread makes the calls,
  validates and routes them, two calls in flight.

Determinism at any thread count (docs/architecture.md): a record is tagged with the slot's decision
level at which it was emitted; a window takes every record below the target level ``T`` and
orders them by ``(level, slot, sequence)``.  Slots park at ``T`` (before requesting level-``T``
rows), so the records of a window — and their order — depend only on the seed, never on timing,
``n_threads`` or ``batch_size``.  ``T`` starts at ``base + ceil(floor / (G * rate))`` and is raised
deterministically while the floor is unmet.

Python-level work is per fire (callback, validation, one routing call), never per row or slot.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import sys
import threading
import time
import weakref

import numpy as np

from reinfors._runtime.firing import SAMPLE_EVERY, CallCost, FirePolicy, Pipe
from reinfors.jit import arena as _arena
from reinfors.jit import engine_codes as C
from reinfors.jit import outputs as _outputs
from reinfors.jit import records as _records
from reinfors.jit import rings

from . import budget
from . import schema as _schema

__all__ = ["Runtime", "KernelError", "kernel_family"]


# Pipelined fires (firing.py): the largest batch an arena may hand an accelerator-like callback,
# and the most memory the arenas of a runtime may take to allow it (otherwise they stay at the
# CPU design's automatic batch).
MAX_PIPELINE_ROWS = 8192
_CLOSED = int(_arena.CLOSED)
HELPER_SPIN = 200_000  # polls a helper makes on an empty ready ring before it sleeps (~0.3 ms)
MAX_ARENA_BYTES = 256 << 20


def kernel_family(policy_kind: int, infer_cache: int) -> str:
    """The generated kernel family a composition runs on (``codegen.FAMILIES``): only its own
    policy's search kernels, and the cache paths only with ``infer_cache > 0``."""
    base = {C.POLICY_AZ: "tree", C.POLICY_MCTS: "tree", C.POLICY_MINIMAX: "minimax", C.POLICY_SELEXP: "selexp"}
    base[C.POLICY_GUMBEL] = "gumbel"  # GumbelAlphaZero (search_gumbel.py)
    return base.get(policy_kind, "modelfree") + ("+cache" if infer_cache else "")


class KernelError(RuntimeError):
    """An invariant inside a worker kernel failed (a bug; the engine stops cleanly)."""


_ERRORS = {
    C.ERR_REC_OVERFLOW: "record pool overflow",
    C.ERR_NO_ARENA: "no free arena (pool exhausted)",
    C.ERR_TRAJ_OVERFLOW: "trajectory list overflow",
    C.ERR_SPAN_OVERFLOW: "span table overflow (an arena received more spans than rows)",
    C.ERR_TREE_OVERFLOW: "search tree overflow (more nodes than the tree was sized for)",
}


class _Helpers:
    """``n`` persistent helper threads running the worker kernel between scheduler signals."""

    def __init__(self, runtime: Runtime, n: int):
        self.rt = runtime
        self.cv = threading.Condition()
        self.generation = 0
        self.busy = 0
        self.stop = False
        self.idle_event = threading.Event()
        self.threads = [
            threading.Thread(target=self._loop, name=f"reinfors-worker-{i + 1}", daemon=True) for i in range(n)
        ]
        started = []
        try:
            for t in self.threads:
                t.start()
                started.append(t)
        except RuntimeError as e:  # "can't start new thread": out of address space / thread limit
            with self.cv:
                self.stop = True
                self.cv.notify_all()
            for t in started:
                t.join(timeout=5.0)
            raise MemoryError(
                f"only {len(started)} of {n} worker helper threads could start ({e}); use a smaller n_threads"
            ) from None

    def _loop(self) -> None:
        seen = 0
        while True:
            with self.cv:
                while self.generation == seen and not self.stop:
                    self.cv.wait()
                if self.stop:
                    return
                seen = self.generation
                self.busy += 1
                # The address table is read under the lock: the scheduler replaces arrays only
                # while holding it with no helper busy (Runtime._helpers_out), so a helper never
                # enters the kernel with a table whose arrays were freed.
                E = self.rt.E
            try:
                # Keep advancing slots without returning to Python per batch (the scheduler polls
                # for full arenas itself); spin a while on an empty ring before sleeping.
                self.rt.k.work(E, False, HELPER_SPIN)
            finally:
                with self.cv:
                    self.busy -= 1
                self.idle_event.set()

    def wake(self) -> None:
        """New work is queued: wake idle helpers (a no-op while all of them are working)."""
        if self.busy >= len(self.threads):
            return
        with self.cv:
            self.generation += 1
            self.cv.notify_all()

    def busy_count(self) -> int:
        return self.busy  # an int read is atomic under the GIL; a stale value only delays a poll

    def close(self, join: bool = False) -> None:
        """Stop the helpers (they leave the kernel at once: ``C_STOP``); ``join`` waits for them."""
        self.rt.ctl[C.C_STOP] = 1
        with self.cv:
            self.stop = True
            self.cv.notify_all()
        if join:
            for t in self.threads:
                t.join(timeout=5.0)


_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _stop_all_helpers() -> None:
    """At interpreter exit, take every helper thread out of the kernels before the arrays they
    address are torn down (daemon threads would otherwise touch freed memory)."""
    for rt in list(_LIVE):
        rt.close(join=True)


class _Call:
    """One callback call: the lent rows of arena ``i`` of ``route`` and, once made, its validated
    predictions (``pred``) and whether the callback kept a view of the rows (``retained``)."""

    __slots__ = ("route", "i", "n", "lent_rows", "validate", "owner", "view", "gen", "wgen", "pred", "retained")


class Runtime:
    """Preallocated engine state ``E`` plus the scheduler for one Engine."""

    def __init__(
        self,
        gdef,
        *,
        policy_kind,
        learner_kind,
        n_games,
        seed,
        batch_size,
        n_threads,
        learn,
        n_routes,
        pad,
        weights,
        n_heads,
        n_step,
        epsilon,
        gamma,
        lam,
        bootstrap_p,
        width,
        search=None,
        infer_cache=0,
        pgen=None,
        start_buffer=None,
        user_batch=False,
    ):
        """``search``: the tree-search geometry and knobs (the dict of ``composition._search_spec``)
        for the search policies; None for the model-free ones.  ``infer_cache``: entries per
        cache partition (0 = off).  ``pgen``: the owner's per-player weights generations (an
        int64 array the runtime reads, never writes; see :meth:`publish_generations`).
        ``start_buffer``: ``(capacity, p_fresh)`` for reached-state starts, or None (off); the
        capacity is shared out over the slots, each keeping ``ceil(capacity / n_games)`` states."""
        self.gdef = gdef
        self.search = search
        leaf_batch = search is not None and search.get("leaf_batch", 1) > 1
        self.k = gdef.kernels_for(kernel_family(policy_kind, infer_cache), leaf_batch)
        G, N, A, O = n_games, gdef.n_players, gdef.n_actions, gdef.obs_size
        self.G, self.N, self.A, self.O = G, N, A, O
        self.pad = pad
        self.batch_size = batch_size
        self.user_batch = bool(user_batch)  # batch_size came from the user: a hard cap (firing.py)
        self.pipelined_arenas = False  # arenas sized for an accelerator-like callback (_size_routes)
        self.cost = CallCost()  # the callbacks' recent calls (the firing regime)
        self._pipe: Pipe | None = None  # set while a pipelined window runs
        # Rows one slot can have in flight (one request at a time): its acting agents' rows, a
        # tail, or one search request (a Minimax round can be thousands of rows).
        self.max_rows = max(N, search["max_rows"]) if search is not None else N
        self.infer_cache = infer_cache
        self.pgen = np.zeros(max(1, N), np.int64) if pgen is None else pgen
        self.rec_per_level = N + (search["interior"] if search is not None else 0)
        self._size_routes(n_routes)
        self.n_threads = n_threads
        self.learner_kind = learner_kind
        # AlphaZero's records hold their targets compactly (one column per legal action, in the
        # batch's legal-id order, _store_visit_targets); take_records hands them out so.
        self.compact_targets = learner_kind == C.LEARNER_AZ
        self.n_step = n_step
        cfg = np.zeros(C.CFG_SIZE, np.int64)
        cfg[C.CFG_G], cfg[C.CFG_N], cfg[C.CFG_A], cfg[C.CFG_O] = G, N, A, O
        cfg[C.CFG_ROUTES], cfg[C.CFG_ARENAS], cfg[C.CFG_CAP] = self.n_routes, self.n_arenas, self.capacity
        cfg[C.CFG_POLICY], cfg[C.CFG_LEARNER] = policy_kind, learner_kind
        cfg[C.CFG_HEADS], cfg[C.CFG_NSTEP], cfg[C.CFG_HORIZON] = n_heads, n_step, gdef.horizon
        cfg[C.CFG_W], cfg[C.CFG_SIMUL], cfg[C.CFG_KEYS] = width, int(gdef.simultaneous), len(weights)
        cfg[C.CFG_CHANCE] = gdef.max_chance
        cfg[C.CFG_CACHE] = infer_cache
        sb_cap = 0 if start_buffer is None else min(-(-int(start_buffer[0]) // G), 2**62)  # u64 capacity: fits cfg
        cfg[C.CFG_SB] = sb_cap
        fcfg = np.zeros(C.FCFG_SIZE, np.float64)
        fcfg[C.F_EPSILON], fcfg[C.F_GAMMA], fcfg[C.F_LAM], fcfg[C.F_BOOTSTRAP_P] = epsilon, gamma, lam, bootstrap_p
        fcfg[C.F_PFRESH] = 1.0 if start_buffer is None else float(start_buffer[1])
        sp = search or {}
        for key, col in (("sims", C.CFG_SIMS), ("max_depth", C.CFG_MAXDEPTH), ("temperature_drop", C.CFG_TEMPDROP),
                         ("maxn", C.CFG_MAXN), ("act_by", C.CFG_ACTBY), ("noise", C.CFG_NOISE),
                         ("depth", C.CFG_DEPTH), ("top_k", C.CFG_TOPK), ("interior_targets", C.CFG_INTERIOR),
                         ("nodes", C.CFG_NODES), ("max_rows", C.CFG_MAXROWS), ("choose", C.CFG_CHOOSE),
                         ("budget", C.CFG_BUDGET), ("opponent", C.CFG_OPP), ("resample", C.CFG_RESAMPLE),
                         ("samples", C.CFG_SAMPLES), ("expand", C.CFG_EXPAND),
                         ("leaf_batch", C.CFG_LEAFB), ("gb_k", C.CFG_GB_K), ("gb_mixed", C.CFG_GB_MIXED),
                         ("gb_rescale", C.CFG_GB_RESCALE)):  # fmt: skip
            cfg[col] = int(sp.get(key, 0))
        for key, col in (("c", C.F_CPUCT), ("temperature", C.F_TEMP), ("noise_epsilon", C.F_NOISE_EPS),
                         ("noise_alpha", C.F_NOISE_ALPHA), ("outcome_weight", C.F_OW), ("beta", C.F_BETA),
                         ("opp_temperature", C.F_OPP_T), ("opp_floor", C.F_OPP_F),
                         ("virtual_loss", C.F_VLOSS), ("gb_scale", C.F_GB_SCALE), ("gb_cvisit", C.F_GB_CVISIT),
                         ("gb_cscale", C.F_GB_CSCALE)):  # fmt: skip
            fcfg[col] = float(sp.get(key, 0.0))
        self.cfg, self.fcfg = cfg, fcfg
        self.ctl = np.zeros(C.CTL_BASE + 8 * max(1, N), np.int64)
        self.seed = seed
        M = 64
        # Every message a slot can have queued: one per span of its request (one span per row
        # with per-player routes), plus its Completed message.
        spans = (self.max_rows if N > 1 or infer_cache else math.ceil(self.max_rows / self.fire_min)) + 2
        self.msg = rings.make(G * spans + 4 * G * N + 64, C.MSG_W)
        self.rdy = rings.make(G + 1, 1)
        self.ready_buf = np.zeros(G, np.int64)
        self.width = width
        self.window_acc = np.zeros(2, np.int64)  # (slots completed, records) from Completed messages
        self.error: BaseException | None = None
        self.abort_requested = False  # see request_abort (set from another thread)
        self._arrays = dict(
            params=gdef.params,
            cfg=cfg,
            fcfg=fcfg,
            weights=np.asarray(weights, np.float64),
            learn=np.asarray(learn, np.int64),
            ctl=self.ctl,
            states=np.zeros((G, gdef.state_size), np.int64),  # [G, S]
            srng=np.zeros((G, 1), np.uint64),  # [G, 1] slot RNG rows
            sinfo=np.zeros((G, C.SI_SIZE), np.int64),  # [G, SI]
            act_agents=np.zeros((G, N), np.int64),  # [G, N] acting agents / tail players
            root=np.zeros((G, N, O), np.float32),  # [G, N, O] root rows
            legal=np.zeros((G, N, A), np.uint8),  # [G, N, A]
            preds=np.zeros((G, self.max_rows, width), np.float64),  # [G, rows, W] routed predictions
            iscr=np.zeros((G, 3 * N + C.MSG_W), np.int64),  # [G, .] per-slot int scratch
            # [G, .] float scratch: A, rewards N, chance C, search max(A, N), nested chance C
            fscr=np.zeros((G, A + N + 2 * max(1, gdef.max_chance) + max(A, N)), np.float64),
            amounts=np.zeros((G, N, len(weights)), np.float64),  # [G, N, K] reward-key amounts
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
            r_next_obs=np.zeros((M if learner_kind == C.LEARNER_DQN else 0, O), np.float32),
            r_mask=np.zeros((M, n_heads), np.float32),
            r_legal=np.zeros((M, A), np.uint8),
            r_next_legal=np.zeros((M if learner_kind == C.LEARNER_DQN else 0, A), np.uint8),
            traj_idx=np.zeros((G, N, 8), np.int64),  # [G, N, L] open trajectory / segment records
            traj_cnt=np.zeros((G, N), np.int64),  # [G, N]
            last_act=np.zeros((G, N), np.int64),  # [G, N] acted in the slot's last tick
            tele=np.zeros((G, C.TL_SIZE), np.int64),
            pending=np.zeros(G, np.int64),
            episodes=np.zeros((M, 4 + N), np.float64),  # slot, length, end level, returns N, seeded
            rdy_seq=self.rdy[0],
            rdy_data=self.rdy[1],
            rdy_pos=self.rdy[2],
            **self._tree_arrays(G, gdef.state_size, search, n_heads),
            rq=np.zeros((G, self.max_rows, 2), np.int64),  # [G, rows, 2] request row sources
            r_tgt=np.zeros((M, n_heads * A if search is not None else 0), np.float64),  # [M, H * A]
            ftele=np.zeros((G, C.FT_SIZE), np.float64),  # [G, FT] float telemetry
            cctl=np.zeros(C.CC_BASE + 8 * max(1, N), np.int64),
            # per request row: key (2 words), kind, aux; request-local key index
            rkeys=np.zeros((G if infer_cache else 1, self.max_rows, 4), np.uint64),
            rdedup=np.zeros((G if infer_cache else 1, 2 * self.max_rows), np.int64),
            # start_buffer: each slot's reservoir of reached states (one placeholder row when off)
            # (rows grow with the states held, up to the capacity: see _ensure_capacity)
            sb_states=np.zeros((G, min(max(1, sb_cap), 64), gdef.state_size if sb_cap else 1), np.int64),
            sb_meta=np.zeros((G, C.SB_SIZE), np.int64),
            sb_rng=np.zeros((G, 1), np.uint64),
        )
        self._alloc_routes()
        self.k.start_slots(self.E, np.uint64(seed))
        # Records per slot-level estimate (deterministic: derived from counts); a search with
        # interior targets starts from its interior record bound.
        # Model-free on a simultaneous game: every learning agent acts each tick, so the first
        # window starts from that many records per level (an estimate below the truth would set
        # the target too far ahead: the window could then overshoot its floor by episodes).
        if search is None:
            self.rate = float(max(1, int(np.count_nonzero(learn)))) if gdef.simultaneous else 1.0
        else:
            self.rate = max(1.0, self.rec_per_level / max(1, N))
        self.levels_done = 0
        self.records_done = 0
        self.window_base = 0  # the lowest slot level when the current window started
        self.cut = 0  # the completion key below which the last window delivers its records (_cut_at)
        self._helpers: _Helpers | None = None
        self.warmed = False  # a window ran to its end (every kernel of the window is compiled)

    def precompile_plan(self) -> list[tuple]:
        """``(dispatcher, arguments)`` for every kernel the scheduler thread can call in a window,
        a restore and a batch hand-over, with the argument types those calls pass — all but
        ``work`` (the workers' kernel) and ``start_slots`` (which this constructor ran).  A cold
        engine's compile helper (``reinfors/_runtime/compile_helper.py``) compiles them into the
        on-disk cache while the engine's own process compiles ``work``.  A call site whose types
        this plan misses still works: it compiles where it is first called."""
        k, E, r = self.k, self.E, 0
        span = (self.spans, self.span_n, self.window_acc)
        pred = np.zeros((1, self.width), np.float64)
        i8, u8 = np.zeros(1, np.int64), np.zeros(1, np.uint8)
        b8, f8 = np.zeros((1, 1), np.uint8), np.zeros((1, 1), np.float64)
        f4 = np.zeros((1, 1), np.float32)
        plan = [
            (k.unpark_all, (E,)),
            (k.push_ready, (E, self.ready_buf, 0)),
            (k.find_fireable, (E, *span)),
            (k.arena_fill, (E, r, 0)),
            (k.finish_fire, (E, self.spans, self.span_n, r, 0, pred, self.ready_buf, True, np.int64(0), i8)),
            (k.wait_progress, (E, 0)),
            (k.drain, (E, *span)),
            (k.close_all_open, (E, r)),
            (k.close_open, (E, r)),
            (k.sealable, (E, r, 0)),
            (k.spans_complete, (E, *span, 0)),
            (_records.copy_rows, (b8, i8, b8, i8, i8)),
            (_records.permute_rows, (b8, i8, 0, u8, i8)),
            (_records.scatter_rows, (f8, i8, i8, f8, True)),
            (_records.legal_csr, (b8, 0, True)),
            (_records.map_ids, (i8, i8, i8, np.zeros((1, 1), np.int64))),
            (_records.map_columns, (f8, i8, np.zeros((1, 1), np.int64))),
            (_outputs.finite_cols, (f4, 0, i8)),
            (_outputs.widen_rows, (f4, 0, f8, 0)),
            (_outputs.widen_rows, (f8, 0, f8, 0)),
        ]
        if self.infer_cache:
            plan += [(k.release_gated, (E, r, self.ready_buf)), (k.demand_full, (E,)), (k.cache_clear, (E,))]
        return plan

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

    # -- routes ----------------------------------------------------------------------------------

    def _size_routes(self, n_routes: int) -> None:
        """Arena geometry for ``n_routes`` routes.

        ``fire_min``: the automatic batch of the CPU design (``batch_size``, never more than a
        route can ever hold in flight, unless padding) — the rows at which arenas close while the
        callback is a CPU one (``firing.py``).  ``capacity``: the rows an arena can hold —
        ``fire_min``, until a callback turned out accelerator-like (``pipelined_arenas``); then
        the largest batch it may be handed: every row a route can have in flight, up to
        :data:`MAX_PIPELINE_ROWS` and :data:`MAX_ARENA_BYTES` over the pool, and half the memory
        still available (``budget.available_bytes``; else it keeps ``fire_min``) (never past a
        ``batch_size`` the user set, a hard cap, or with ``pad``).  Enough arenas that a writer
        always finds a free one: every in-flight row in arenas closed at ``fire_min``, plus four
        spare (the open arena, one being computed, one queued behind it, one lent to a callback
        that kept it)."""
        self.n_routes = n_routes
        if self.search is not None:
            rows_per_route = self.G * self.max_rows  # one request per slot, any mix of players
        else:
            rows_per_route = self.G * self.N if n_routes == 1 else self.G
        self.rows_per_route = rows_per_route
        self.fire_min = self.batch_size if self.pad else max(1, min(self.batch_size, rows_per_route))
        self.n_arenas = math.ceil(rows_per_route / self.fire_min) + 4
        self.capacity = self._pipelined_capacity() if self.pipelined_arenas else self.fire_min

    def _pipelined_capacity(self) -> int:
        """The arena capacity for an accelerator-like callback (see :meth:`_size_routes`)."""
        cap = self.fire_min
        if not self.pad and not self.user_batch:
            big = min(self.rows_per_route, MAX_PIPELINE_ROWS)
            need = self.n_routes * self.n_arenas * big * (4 * max(1, self.O) + 32)  # rows + span table
            avail = budget.available_bytes()
            if big > cap and need <= MAX_ARENA_BYTES and (avail is None or need <= avail // 2):
                cap = big
        return cap

    def _alloc_routes(self) -> None:
        R, NA, CAP = self.n_routes, self.n_arenas, self.capacity
        self._arrays["arena_rows"] = np.zeros((R, NA, CAP, self.O), np.float32)
        self._arrays["arena_ctl"] = np.zeros(R * NA, np.uint64)
        self._arrays["arena_done"] = np.zeros(R * NA, np.uint64)
        self.spans = np.zeros((R * NA, CAP, 4), np.int64)  # per arena: slot, start, rows, row offset
        self.span_n = np.zeros(R * NA, np.int64)
        self.cfg[C.CFG_ROUTES], self.cfg[C.CFG_ARENAS], self.cfg[C.CFG_CAP] = R, NA, CAP
        for r in range(max(1, self.N)):
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
        if self.n_routes == 1:
            cctl[C.CC_GEN] = int(self.pgen.sum())
        else:
            for p in range(self.n_routes):
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
        if n_routes != self.n_routes:
            with self._helpers_out():
                self._size_routes(n_routes)
                self._alloc_routes()

    # -- state plumbing --------------------------------------------------------------------------

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

    def _grow(self, name: str, rows: int, axis: int = 0) -> None:
        a = self._arrays[name]
        if a.shape[axis] >= rows:
            return
        shape = list(a.shape)
        shape[axis] = max(rows, 2 * a.shape[axis])
        b = np.zeros(shape, a.dtype)
        idx = tuple(slice(0, s) for s in a.shape)
        if name == "r_tgt":  # the records' leading columns only: the rest of a row is never read
            n = int(self.ctl[C.C_REC])
            idx = (slice(0, n), slice(0, int(self._arrays["r_meta"][:n, C.RM_NTGT].max(initial=0))))
        b[idx] = a[idx]
        self._arrays[name] = b

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
        for name in names:
            self._grow(name, need)
        self._grow("episodes", int(self.ctl[C.C_EPISODES]) + G * (levels_ahead + 2))
        self._grow("traj_idx", int(self["traj_cnt"].max()) + levels_ahead + 2, axis=2)
        sb_cap = int(self.cfg[C.CFG_SB])
        if sb_cap:  # a slot reaches at most one state per level
            self._grow("sb_states", min(sb_cap, int(self["sb_meta"][:, C.SB_STORED].max()) + levels_ahead + 2), axis=1)
        self.ctl[C.C_REC_CAP] = self._arrays["r_meta"].shape[0]
        self._build_E()

    # -- helpers ---------------------------------------------------------------------------------

    def _start_helpers(self) -> None:
        if self.n_threads > 1 and self._helpers is None:
            # more threads than slots cannot work at once (records do not depend on the count)
            self._helpers = _Helpers(self, min(self.n_threads, self.G) - 1)
            _LIVE.add(self)

    def close(self, join: bool = True) -> None:
        """Stop and (by default) join the helper threads: after this no kernel runs on this
        runtime's arrays."""
        h, self._helpers = self._helpers, None
        if h is not None and threading.current_thread() not in h.threads:
            h.close(join)

    def _check_error(self) -> None:
        code = int(self.ctl[C.C_ERROR])
        if code:
            raise KernelError(f"reinfors engine kernel error: {_ERRORS.get(code, code)}")

    # -- firing ----------------------------------------------------------------------------------

    def _set_targets(self) -> None:
        """Publish the fire target (rows at which writers close an arena) of every route: the CPU
        design's automatic batch, or the pipelined policy's current arm."""
        tgt = self._policy.target if self._pipe is not None else self.fire_min
        for r in range(max(1, self.N)):
            self.ctl[C.C_ROUTE_TGT + 8 * r] = tgt

    def _fire(self, route: int, i: int, fns, validate, tele: dict) -> None:
        """Lend arena ``i`` of ``route`` to its callback and route the predictions back.  The
        span table must be complete (``find_fireable`` and ``spans_complete`` check it).  In a
        pipelined window the call is queued for the caller's thread instead, which routes it when
        it returns (``_serve``; with the inference cache on, the scheduler does: ``_complete``)."""
        pipe = self._pipe
        if pipe is not None:
            self._arrays["arena_done"][route * self.n_arenas + i] |= _arena.FIRING  # seal skips it
            pipe.submit(self._lend(route, i, tele, self._validators.pop()))
            return
        call = self._lend(route, i, tele, validate)
        self._invoke(call, fns, tele)
        self._route_back(call)

    def _lend(self, route: int, i: int, tele: dict, validate) -> _Call:
        """The call for arena ``i`` of ``route``: a zero-copy view of its rows (or a copy, once a
        callback kept rows), padded with zeros to the capacity when ``pad``."""
        n = int(self.k.arena_fill(self.E, route, i))
        self._route_fires[route] += 1
        rows = self._arrays["arena_rows"][route, i]
        lent_rows = n
        if self.pad and n < self.capacity:
            rows[n:] = 0.0
            lent_rows = self.capacity
            tele["padded_rows"] += self.capacity - n
        c = _Call()
        c.route, c.i, c.n, c.lent_rows, c.validate = route, i, n, lent_rows, validate
        c.pred, c.retained = None, False
        if self.copy_mode:
            c.owner = rows[:lent_rows].copy()
            c.view = c.owner
        else:
            # Zero-copy loan: an array over a memoryview of the arena rows.  Every view a
            # callback derives from it references ``owner`` (NumPy collapses view bases only
            # through arrays), so its refcount tells whether the callback kept any of them.
            c.owner = np.frombuffer(memoryview(rows[:lent_rows]), np.float32)
            c.view = c.owner.reshape(lent_rows, self.O)
        # Generation the values are computed under: read before the call, so a weights update
        # during it leaves them stale (never served).
        c.gen = np.int64(self._arrays["cctl"][C.CC_GEN + 8 * route])
        c.wgen = int(self.ctl[C.C_WGEN])  # the records' weights generation (batch weights_generations)
        return c

    def _invoke(self, c: _Call, fns, tele: dict) -> None:
        """Call the callback on ``c``'s rows and validate its output (on the thread that runs
        callbacks); sets ``c.pred`` and ``c.retained``.  After a callback error, or once an abort
        was requested, the callback is not called: the rows get all-zero outputs."""
        owner, view, n, validate = c.owner, c.view, c.n, c.validate
        base = sys.getrefcount(owner) + sys.getrefcount(view)
        pred = None
        if self.error is None and not self.abort_requested:
            cost = self.cost
            cost.tick += 1
            sample = cost.tick % SAMPLE_EVERY == 0
            cpu0 = time.thread_time() if sample else 0.0
            t0 = time.perf_counter()
            try:
                out = fns[c.route](view)
                wall = time.perf_counter() - t0
                tele["infer_seconds"] += wall
                if sample:
                    cost.add(n, wall, time.thread_time() - cpu0)
                if self.pad and n < self.capacity and out is not None:
                    out = _trim(out, n, self.capacity)
                pred = validate(out, n)
            except BaseException as exc:  # noqa: BLE001 - re-raised by the caller after the window
                self.error = exc
            finally:
                out = None
            tele["infer_calls"] += 1
            tele["infer_rows"] += n
        if pred is None:
            # After a callback error the window runs to its end on all-zero outputs (the
            # callback is not called again); its batch is discarded and the error re-raised.
            # (The same after a stream's stop().)  These are no predictions: never cache them.
            validate.release()
            pred = np.zeros((n, self.width), np.float64)
            c.gen = np.int64(-1)
        # Logits the validator holds for route (read in place) are no caller's: when they are a
        # view of the lent rows (``view`` itself, or an array whose base NumPy collapsed to
        # ``owner``), that one reference does not keep the arena.
        held = validate.held
        mine = 1 if held is not None and (held is view or held.base is owner) else 0
        del held
        c.retained = not self.copy_mode and sys.getrefcount(owner) + sys.getrefcount(view) - mine > base
        if c.retained:
            # Never overwrite rows a caller still holds: this arena stays LENT (skipped by every
            # writer; the pool has slack for it) and later fires lend copies instead.
            self.copy_mode = True
        c.pred = pred

    def _route_back(self, c: _Call) -> None:
        """Route ``c``'s predictions back, recycle the arena (unless a caller kept its rows),
        clear the helpers' stop request and queue the ready slots — on the scheduler's thread, or
        (pipelined, cache off) on the caller's right after the call."""
        self.ctl[C.C_FIREGEN] = c.wgen
        v = c.validate
        self.k.finish_fire(self.E, self.spans, self.span_n, c.route, c.i, c.pred, self.ready_buf, not c.retained, c.gen, v.raw)
        v.release()
        c.owner = c.view = c.pred = None

    def _complete(self) -> int:
        """Pipelined calls made since the last look (the scheduler's thread): route those the
        caller's thread left to route (with the inference cache on, whose tables only the
        scheduler touches) and return how many calls came back."""
        pipe = self._pipe
        if pipe is None:
            return 0
        self.ctl[C.C_WAKE] = 0
        with pipe.cv:
            n, pipe.returned = pipe.returned, 0
        while pipe.done:
            self._retire(pipe, pipe.done.popleft())
        return n

    def _retire(self, pipe: Pipe, c: _Call, routed: bool = False) -> None:
        """Route a pipelined call's predictions back (unless ``routed``) and free its place in
        the pipe."""
        if not routed:
            self._route_back(c)
        self._validators.append(c.validate)
        with pipe.cv:
            pipe.outstanding -= 1
        if self._policy.routed(c.n, time.perf_counter()):
            self._set_targets()

    def _serve(self, pipe: Pipe, fns, tele: dict) -> None:
        """The caller's thread in a pipelined window: make every call the scheduler queues (and
        route its predictions back) until the scheduler's loop finishes.  An interrupt here
        (Ctrl-C) is kept as the window's error: the rest of the window runs on zero outputs and
        the engine raises it after the window."""
        while True:
            c = None
            try:
                c = pipe.next_job()
                if c is None:
                    return
                self._invoke(c, fns, tele)
            except BaseException as exc:  # noqa: BLE001 - re-raised by the engine after the window
                if self.error is None:
                    self.error = exc
                if c is None:
                    continue
                if c.pred is None:  # interrupted before the call finished: route zeros
                    c.pred = np.zeros((c.n, self.width), np.float64)
                    c.gen, c.retained = np.int64(-1), False
                    c.validate.release()
            if self.infer_cache:
                pipe.done.append(c)  # the scheduler routes it (the cache's tables are its own)
            else:
                # Route here, at once, and wake the workers; then work beside them until no slot
                # is ready, unless the next call is already queued: this thread is on a core the
                # moment a call returns, the others first have to be woken.  (finish_fire and
                # the worker kernel are safe beside the scheduler's kernels: the arena's span
                # table is complete and no longer read by them, and the call stays outstanding
                # until this thread has left the kernel, so no barrier or reallocation runs
                # meanwhile.)
                self._route_back(c)
                self.ctl[C.C_WAKE] = 1
                pipe.wake.set()
                helpers = self._helpers
                if helpers is not None:
                    helpers.wake()
                if not pipe.jobs:
                    self.k.work(self.E, False, 0)
                self._retire(pipe, c, routed=True)
            with pipe.cv:
                pipe.returned += 1
            self.ctl[C.C_WAKE] = 1
            pipe.wake.set()

    # -- the window ------------------------------------------------------------------------------

    def run_window(self, floor: int, fns, validate, tele: dict, progress=None) -> int:
        """Collect until the records below the target level reach ``floor``; returns the record
        count (records ``[0, count)`` of the pool, in kernel order)."""
        G = self.G
        ctl = self.ctl
        base = int(self._arrays["sinfo"][:, C.SI_LEVEL].min())
        self.window_base = base
        # Records a previous window completed beyond its cut (see _cut_at) count first; when they
        # already reach the floor, the window delivers from them without running a decision.
        carried = self.carried()
        if carried >= floor:
            self.cut = self._cut_at(floor)
            return carried
        target = base + max(1, math.ceil((floor - carried) / (G * self.rate)))
        self._ensure_capacity(target - base)
        ctl[C.C_TARGET] = target
        ctl[C.C_ABORT] = 0
        ctl[C.C_FULL] = 0
        ctl[C.C_WAKE] = 0
        self.window_acc[:] = 0
        if not self.cost.accelerator_like():
            self._set_targets()
            return self._loop(floor, fns, validate, tele, progress, base, carried, target)
        if not self.pipelined_arenas:
            # The callback turned out accelerator-like: arenas for its largest batches, once
            # (between windows; an inference cache starts empty again, as on a change of routes).
            self.pipelined_arenas = True
            if self._pipelined_capacity() > self.capacity:
                with self._helpers_out():
                    self._size_routes(self.n_routes)
                    self._alloc_routes()
        # Pipelined (firing.py): the callback runs on this (the caller's) thread, the loop below
        # on a scheduler thread that is also a worker.
        pipe = self._pipe = Pipe()
        self._validators = [validate, validate.clone()]
        self._policy.window_start()
        self._set_targets()
        result: dict = {}

        def scheduler() -> None:
            try:
                result["count"] = self._loop(floor, fns, None, tele, progress, base, carried, target)
            except BaseException as exc:  # noqa: BLE001 - raised on the caller's thread below
                result["error"] = exc
            finally:
                pipe.finish()

        thread = threading.Thread(target=scheduler, name="reinfors-scheduler", daemon=True)
        thread.start()
        try:
            self._serve(pipe, fns, tele)
        except BaseException:
            # An interrupt outside a call (the call's own errors are kept in self.error): stop
            # the scheduler's loop and the workers, so the join below returns; the engine
            # discards this runtime.
            pipe.broken = True
            self.ctl[C.C_STOP] = 1
            pipe.wake.set()
            raise
        finally:
            thread.join()
            self._pipe = None
            self._set_targets()
        if "error" in result:
            raise result["error"]
        return result["count"]

    def _loop(self, floor, fns, validate, tele, progress, base, carried, target) -> int:
        """The window's scheduler loop (see :meth:`run_window`): fire settled arenas, work as a
        worker between fires, raise the target until the floor is met."""
        G = self.G
        k, ctl = self.k, self.ctl
        pipe = self._pipe
        k.unpark_all(self.E)
        self._queue_emitting()
        self._start_helpers()
        helpers = self._helpers
        if helpers is not None:
            helpers.wake()
        stall = [0] * self.n_routes
        last_fires = list(self._route_fires)
        ladder = self.n_routes > 1 or bool(self.infer_cache)
        aborting = False
        while True:
            if self.abort_requested and not aborting:
                # Every slot parks at its next decision boundary (a search in progress finishes
                # its decision on zero outputs first); ``_fire`` stops calling the callbacks.
                aborting = True
                ctl[C.C_ABORT] = 1
            if pipe is not None and pipe.broken:
                raise KernelError("collection interrupted on the collecting thread")
            ctl[C.C_FULL] = 0
            k.work(self.E, True, 0)
            self._check_error()
            fired = self._complete()
            while pipe is None or pipe.can_submit():
                code = int(k.find_fireable(self.E, self.spans, self.span_n, self.window_acc))
                if code == -1:
                    if self.infer_cache and self._fire_demand(fns, validate, tele):
                        fired += 1
                        continue
                    break
                if code <= -2:
                    raise KernelError("a worker poisoned an arena")
                r, i = divmod(code, self.n_arenas)
                self._fire(r, i, fns, validate, tele)
                fired += 1
            if fired:
                if helpers is not None:
                    helpers.wake()
                # Stall ladder: a route with unresolved demand (rows in its open arena, or
                # gated cache hits) that has not advanced (fired) across 8 real fires
                # engine-wide is closed and fired as a partial batch — or, holding only gated
                # hits, released without a callback call.  (A single route without the cache
                # advances with every fire: nothing to check.)
                gated_n = self._arrays["gated_n"]
                for r in range(self.n_routes if ladder else 0):
                    cur = int(ctl[C.C_ROUTE_CUR + 8 * r])
                    fill = int(k.arena_fill(self.E, r, cur))
                    gated = int(gated_n[r]) if self.infer_cache else 0
                    if (fill or gated) and self._route_fires[r] == last_fires[r]:
                        stall[r] += fired
                        if stall[r] >= 8 and (pipe is None or pipe.can_submit()):
                            if fill:
                                self._close_and_fire(r, fns, validate, tele)
                                tele["stall_closes"] += 1
                            else:
                                k.release_gated(self.E, r, self.ready_buf)
                                self._arrays["cctl"][C.CC_RELEASED] += 1
                            stall[r] = 0
                    else:
                        stall[r] = 0
                    last_fires[r] = self._route_fires[r]
                if progress is not None:
                    progress(int(ctl[C.C_EMITTED]))
                continue
            if int(ctl[C.C_INFLIGHT]) or rings.size(self.rdy[2]):
                if helpers is not None and not k.wait_progress(self.E, 100_000):
                    helpers.idle_event.wait(0.001)  # helpers still working on long tasks
                    helpers.idle_event.clear()
                continue
            if pipe is not None and pipe.outstanding:
                # Nothing to work on until a call returns (its slots then emit again).  An open
                # arena holding at least half its target is queued now, behind the call in
                # flight (the callback starts it the moment it returns the other: two batches
                # alternate); a smaller one waits for the rows still to come back.  Block (no
                # spin: the helpers poll, and a core must stay free for the callback's thread).
                if pipe.can_submit() and self._queue_partial(fns, tele):
                    continue
                if not pipe.done and not pipe.returned:
                    pipe.wake.wait(0.05)  # set by the caller's thread as each call returns
                pipe.wake.clear()
                continue
            # Quiescent: nothing in flight, nothing ready.
            k.drain(self.E, self.spans, self.span_n, self.window_acc)  # the last Completed messages
            if int(self.window_acc[0]) >= G:
                # Before the scheduler reallocates, compacts or ends the window, every helper
                # must be out of the kernel (kernels address the state arrays by pointer).  The
                # other quiescence rungs below only fire and release: helpers keep polling.
                self._quiesce_helpers()
                # Every slot sent its Completed message: the floor is counted from messages.
                fresh = int(self.window_acc[1])
                count = carried + fresh
                levels = target - base
                if aborting:
                    return count  # the caller discards this window's records (reset_pool)
                if count >= floor:
                    self.levels_done += levels
                    self.records_done += fresh
                    self.rate = max(self.records_done / (G * self.levels_done), 1e-3)
                    self.cut = self._cut_at(floor)
                    return count
                # Raise the target deterministically (counts only, never timing): by the rate
                # estimate, but by at most half the window so far (DQN emits only at episode
                # ends, so a young window's rate says little and overshoot stays bounded).
                step = max(1, levels // 2)
                if fresh > 0:
                    extra = math.ceil((floor - count) / (G * (fresh / (G * levels))))
                    extra = max(1, min(extra, step))
                else:
                    extra = step
                target += extra
                self._ensure_capacity(target - base)
                ctl[C.C_TARGET] = target
                self.window_acc[0] = 0  # slots complete again at the new target
                k.unpark_all(self.E)
                self._queue_emitting()
                if helpers is not None:
                    helpers.wake()
                continue
            # Fire what is settled (a helper may have closed an arena full after the last poll),
            # then close every open arena that holds rows and fire those.
            for r in range(self.n_routes):
                k.close_all_open(self.E, r)
            fired_here = 0
            while pipe is None or pipe.can_submit():  # nothing is in flight: every closed arena is settled now
                code = int(k.find_fireable(self.E, self.spans, self.span_n, self.window_acc))
                if code == -1:
                    break
                if code <= -2:
                    raise KernelError("a worker poisoned an arena")
                self._fire(*divmod(code, self.n_arenas), fns, validate, tele)
                fired_here += 1
            if self.infer_cache:
                # Quiescence also releases every route's gated hits (stale ones are demoted
                # into the route's open arena and fire on the next pass).
                for r in range(self.n_routes):
                    if int(self._arrays["gated_n"][r]):
                        k.release_gated(self.E, r, self.ready_buf)
                        fired_here += 1
            if not fired_here:
                self._stalls += 1
                if self._stalls > 1000:
                    raise KernelError(f"engine stalled: slots blocked with nothing in flight ({self._diagnose()})")
                time.sleep(0.0001)  # let late commits become visible, then poll again
                continue
            self._stalls = 0
            if helpers is not None:
                helpers.wake()

    def request_abort(self) -> None:
        """Ask the running ``run_window`` to end early (thread-safe: one attribute store).

        Checked once per scheduler iteration: no callback is called any more (fires route all-zero
        outputs, as after a callback error) and every slot parks at its next decision boundary, so
        the window ends within about one fire.  Its records are meaningless: the caller discards
        them with ``reset_pool`` and clears ``abort_requested`` before the next window."""
        self.abort_requested = True

    def _diagnose(self) -> str:
        sinfo = self._arrays["sinfo"]
        ctl_words = self._arrays["arena_ctl"]
        arenas = [(i, bool(_arena.is_closed(w)), int(_arena.cursor_of(w)), int(self._arrays["arena_done"][i]), int(self.span_n[i]))
                  for i, w in enumerate(ctl_words) if w]  # fmt: skip
        return (f"status counts {np.bincount(sinfo[:, C.SI_STATUS], minlength=5).tolist()}, "
                f"completed {self.window_acc.tolist()}, arenas (i, closed, cursor, settled, spans) {arenas}")  # fmt: skip

    def _quiesce_helpers(self) -> None:
        """Stop barrier: raise C_STOP (a helper entering or spinning in ``work`` returns at once,
        touching nothing but the control words) and wait until no helper is inside the kernel.
        C_STOP is cleared again only when new work is queued, after any reallocation."""
        helpers = self._helpers
        if helpers is None:
            return
        self.ctl[C.C_STOP] = 1
        while helpers.busy_count():
            helpers.idle_event.wait(0.0005)
            helpers.idle_event.clear()

    def _fire_demand(self, fns, validate, tele) -> bool:
        """Capacity rung counting gated hits (``demand_full``): fire the route's open arena
        early, or release its hits without a call when the arena is empty."""
        r = int(self.k.demand_full(self.E))
        if r < 0:
            return False
        if not self._close_and_fire(r, fns, validate, tele):
            self.k.release_gated(self.E, r, self.ready_buf)
        return True

    def _queue_partial(self, fns, tele) -> bool:
        """Pipelined, production idle: close and queue the first route's open arena that holds
        at least half the fire target (see ``_loop``).  True when one was queued."""
        half = max(1, self._policy.target // 2)
        words = self._arrays["arena_ctl"]
        for r in range(self.n_routes):
            cur = int(self.ctl[C.C_ROUTE_CUR + 8 * r])
            # The chain's current arena may be one that closed at its target and was queued
            # already (a writer moves the chain on only when it next reserves): not open.
            if int(words[r * self.n_arenas + cur]) & _CLOSED:
                continue
            if int(self.k.arena_fill(self.E, r, cur)) >= half:
                return self._close_and_fire(r, fns, None, tele)
        return False

    def _close_and_fire(self, r, fns, validate, tele) -> bool:
        i = int(self.k.close_open(self.E, r))
        if i < 0:
            return False
        # Writers finish their commits quickly; wait until the arena is settled and its span
        # table complete (every span message drained), then fire.
        ai = r * self.n_arenas + i
        while int(self.k.sealable(self.E, r, i)) != i or not self.k.spans_complete(
            self.E, self.spans, self.span_n, self.window_acc, ai
        ):
            self._check_error()
        self._fire(r, i, fns, validate, tele)
        return True

    def _queue_emitting(self) -> None:
        """Queue every slot that can run (EMIT or RESUME) — exactly once: only called while no
        slot is queued or in flight.  Clears the helpers' stop request."""
        self.ctl[C.C_STOP] = 0
        sinfo = self._arrays["sinfo"]
        ready = np.flatnonzero((sinfo[:, C.SI_STATUS] == C.ST_EMIT) | (sinfo[:, C.SI_STATUS] == C.ST_RESUME))
        if len(ready):
            self.k.push_ready(self.E, ready.astype(np.int64), len(ready))

    def carried(self) -> int:
        """Records completed (emitted) but not yet delivered: a window cut below them."""
        n = int(self.ctl[C.C_REC])
        return int(np.count_nonzero(self._arrays["r_meta"][:n, C.RM_LEVEL] >= 0))

    def _keys(self, level: np.ndarray, slot: np.ndarray) -> np.ndarray:
        """Completion keys ``level * n_games + slot``: the order in which 0.4.0's scheduler meets
        completed records (decision level, then slot)."""
        return level * self.G + slot

    def _cut_at(self, floor: int) -> int:
        """The window's cut: the smallest completion key (:meth:`_keys`) such that the emitted
        records below it reach ``floor``.  Those are delivered; records completed later stay in
        the pool for the next window — a window overshoots its floor by at most the records one
        slot completed at one level, as 0.4.0 stops admitting decisions once the floor is reached."""
        n = int(self.ctl[C.C_REC])
        meta = self._arrays["r_meta"][:n]
        done = meta[:, C.RM_LEVEL] >= 0
        keys = self._keys(meta[done, C.RM_LEVEL], meta[done, C.RM_SLOT])
        return int(np.partition(keys, floor - 1)[floor - 1]) + 1

    def take_records(self) -> dict[str, np.ndarray]:
        """Hand the finished window's records over, in batch order, and keep the others.

        Returns ``{pool array name: [m, ...] array}`` holding the ``m`` emitted records below the
        window's cut (:meth:`_cut_at`) ordered by (decision level, slot, sequence) — the canonical
        order that makes batches identical at any ``n_threads``.  When the delivered records are
        most of the pool, every pool array is permuted in place (delivered records first, then the
        kept ones — open trajectories and records completed beyond the cut) and the delivered
        prefix is handed out without a copy (the array is shrunk to ``m`` rows) while the kept
        records move into fresh pool arrays; otherwise the delivered rows are copied out and the
        kept rows beyond the kept count fill their holes.  The trajectory lists are rewritten
        either way.  So a large batch costs its own bytes once, not a pool copy beside it.
        ``r_tgt`` rows hold their leading ``RM_NTGT`` columns only (AlphaZero's compact targets:
        the batch scatters them); the rest of a row is stale.  Only between windows.
        """
        n = int(self.ctl[C.C_REC])
        meta = self._arrays["r_meta"][:n]
        lv = meta[:, C.RM_LEVEL]
        return self._split_pool((lv >= 0) & (self._keys(lv, meta[:, C.RM_SLOT]) < self.cut))

    def reset_pool(self) -> None:
        """Drop the records this window emitted (it failed or was aborted); open trajectories
        and the records an earlier window carried over stay."""
        n = int(self.ctl[C.C_REC])
        lv = self._arrays["r_meta"][:n, C.RM_LEVEL]
        self._split_pool(lv >= self.window_base)
        eps = self._arrays["episodes"]
        n = int(self.ctl[C.C_EPISODES])
        kept = eps[:n][eps[:n, 2] < self.window_base]
        eps[: len(kept)] = kept
        self.ctl[C.C_EPISODES] = len(kept)

    def take_episodes(self) -> np.ndarray:
        """The episode log rows (slot, length, end level, returns, seeded) of the episodes that
        ended below the window's cut; later ones stay logged for the next window."""
        eps = self._arrays["episodes"]
        n = int(self.ctl[C.C_EPISODES])
        early = self._keys(eps[:n, 2].astype(np.int64), eps[:n, 0].astype(np.int64)) < self.cut
        out, later = eps[:n][early], eps[:n][~early]
        eps[: len(later)] = later
        self.ctl[C.C_EPISODES] = len(later)
        return out

    def _split_pool(self, hand: np.ndarray) -> dict[str, np.ndarray]:
        """Move the records selected by ``hand`` (a mask over the pool) out, in (level, slot,
        sequence) order, keeping the others in pool order."""
        with self._helpers_out():
            return self._split_pool_locked(hand)

    def _split_pool_locked(self, hand: np.ndarray) -> dict[str, np.ndarray]:
        a = self._arrays
        n = int(self.ctl[C.C_REC])
        meta = a["r_meta"]
        out_idx = np.flatnonzero(hand)
        keep = np.flatnonzero(~hand)
        order = np.lexsort((meta[out_idx, C.RM_SEQ], meta[out_idx, C.RM_SLOT], meta[out_idx, C.RM_LEVEL]))
        m, k = len(out_idx), len(keep)
        # Whichever side is smaller moves: mostly delivered records (a large collect) leave as the
        # pool's own arrays and the kept ones move to fresh arrays; mostly kept records (long
        # open trajectories: chess games of hundreds of plies) stay where they are and the
        # delivered ones are copied out.  Either way at most half the pool is copied, never all
        # of it.  A pool kept in place keeps its capacity: at most 4x its records (it grows by
        # doubling and holds at least as many records as it delivered); snapshots carry its
        # records only.  Pool order carries no meaning (batches are sorted by completion key and
        # trajectories address records by index), so a kept pool fills its holes from its tail.
        keep_in_place = m <= k
        sel = out_idx[order]
        del order
        # A record's search targets are the leading RM_NTGT columns of its r_tgt row (AlphaZero:
        # one per legal action, 30 of chess's 4,672); only those move.  Read before r_meta moves.
        ntgt = meta[:n, C.RM_NTGT].copy()

        def width(name, rows):  # the leading bytes that rows (pool indices) hold
            if name == "r_tgt":
                return ntgt[rows] * a[name].itemsize
            return np.full(len(rows), a[name].shape[1] * a[name].itemsize, np.int64)

        every = np.arange(n, dtype=np.int64)
        out = {}
        if keep_in_place:
            holes = out_idx[out_idx < k]  # delivered rows inside the kept prefix ...
            movers = keep[keep >= k]  # ... receive the kept rows beyond it (as many)
            del out_idx
            for name in self.POOL_ARRAYS:
                arr = a[name]
                if arr.shape[0] == 0:  # DQN-only arrays of another learner
                    out[name] = arr
                    continue
                if name == "r_tgt":
                    out[name] = np.zeros((m, int(ntgt[sel].max(initial=0))), arr.dtype)
                    _records.copy_rows(_bytes(arr), sel, _bytes(out[name]), every[:m], width(name, sel))
                else:
                    out[name] = arr[sel]
                if arr.shape[1]:
                    b = _bytes(arr)
                    _records.copy_rows(b, movers, b, holes, width(name, movers))
                    if name != "r_tgt" or not self.compact_targets:
                        arr[k:n] = 0  # rows past the pool's count read as fresh (zeroed) rows
            inv = np.arange(n, dtype=np.int64)
            inv[movers] = holes
            inv[sel] = -1
            del holes, movers
        else:
            perm = np.concatenate((sel, keep))
            del out_idx
            seen = np.zeros(n, np.uint8)
            for name in self.POOL_ARRAYS:
                if a[name].shape[0] and a[name].shape[1]:
                    _records.permute_rows(_bytes(a[name]), perm, n, seen, width(name, every))
            inv = np.empty(n, np.int64)
            inv[perm] = every - m
            del perm, seen
            cap = max(k, 64)
            for name in self.POOL_ARRAYS:
                old = a[name]
                if old.shape[0] == 0:
                    out[name] = old
                    continue
                fresh = np.zeros((cap,) + old.shape[1:], old.dtype)
                if name == "r_tgt":
                    _records.copy_rows(_bytes(old), every[m : m + k], _bytes(fresh), every[:k], width(name, keep))
                else:
                    fresh[:k] = old[m : m + k]
                a[name] = fresh
                out[name] = _shrink_rows(old, m)
            self.ctl[C.C_REC_CAP] = cap
        # Open trajectories reference only kept records: old index -> new index in the kept pool.
        ti, tc = a["traj_idx"], a["traj_cnt"]
        live = np.arange(ti.shape[2])[None, None, :] < tc[:, :, None]
        ti[live] = np.maximum(inv[ti[live]], -1)
        del inv, live
        self.ctl[C.C_REC] = k
        self.ctl[C.C_EMITTED] = int(np.count_nonzero(a["r_meta"][:k, C.RM_LEVEL] >= 0))
        self._build_E()
        return out

    # -- snapshots (Engine.snapshot / Engine.restore) ---------------------------------------------

    # The arrays that carry a slot's state from one collect window to the next, in a snapshot
    # blob's order (reinfors/jit/engine_schema.py says which and why).
    SNAPSHOT_ARRAYS = _schema.SNAPSHOT_ARRAYS
    # ctl words that carry across windows (the others are per-window, or route geometry).
    SNAPSHOT_CTL = {"target": C.C_TARGET, "rec": C.C_REC, "episodes": C.C_EPISODES, "emitted": C.C_EMITTED}
    # Record-pool arrays: rows are records (their count may differ from engine to engine).
    POOL_ARRAYS = ("r_meta", "r_f", "r_obs", "r_next_obs", "r_mask", "r_legal", "r_next_legal", "r_tgt")

    def state_dict(self) -> tuple[dict, dict]:
        """``(arrays, scalars)``: copies of the :attr:`SNAPSHOT_ARRAYS`, and the ctl words of
        :attr:`SNAPSHOT_CTL` plus the window counters (``rate``, ``levels_done``,
        ``records_done``).  Only between windows (no worker inside a kernel)."""
        # Of the record pool only its records (at least 64 rows, as a window's split leaves a
        # fresh pool): a pool kept in place by _split_pool has spare capacity, which a snapshot
        # need not carry.  The arrays keep SNAPSHOT_ARRAYS' order (the blob's layout).
        rows = max(int(self.ctl[C.C_REC]), 64)
        arrays = {
            n: (self._arrays[n][:rows] if n in self.POOL_ARRAYS else self._arrays[n]).copy()
            for n in self.SNAPSHOT_ARRAYS
            if not n.startswith("c_")
        }
        scalars = {k: int(self.ctl[i]) for k, i in self.SNAPSHOT_CTL.items()}
        scalars.update(rate=float(self.rate), levels_done=int(self.levels_done), records_done=int(self.records_done))
        return arrays, scalars

    def check_state(self, arrays: dict, scalars: dict) -> str | None:
        """``None`` when ``(arrays, scalars)`` (as :meth:`state_dict` returns them) fit this
        runtime — names, dtypes, shapes, index ranges, statuses, counters — else the reason.
        Reads only; the kernels index with these values unchecked, so every index is bounded."""
        if set(arrays) != set(self.SNAPSHOT_ARRAYS):
            return f"arrays {sorted(set(arrays) ^ set(self.SNAPSHOT_ARRAYS))} missing or unexpected"
        for name in self.SNAPSHOT_ARRAYS:
            a, mine = arrays[name], self._arrays[name]
            if a.dtype != mine.dtype or a.ndim != mine.ndim:
                return f"array {name} has dtype {a.dtype} / {a.ndim} dims, expected {mine.dtype} / {mine.ndim}"
            if name in self.POOL_ARRAYS or name == "episodes":
                fixed = a.shape[1:] == mine.shape[1:]
            elif name == "traj_idx":
                fixed = a.shape[:2] == mine.shape[:2]
            elif name == "sb_states":  # rows: the states held so far, at most the capacity
                fixed = a.shape[::2] == mine.shape[::2] and 1 <= a.shape[1] <= max(1, int(self.cfg[C.CFG_SB]))
            else:
                fixed = a.shape == mine.shape
            if not fixed:
                return f"array {name} has shape {a.shape}, which does not fit this engine ({mine.shape})"
        G, N, A = self.G, self.N, self.A
        pool = arrays["r_meta"].shape[0]
        dqn = self.learner_kind == C.LEARNER_DQN
        for name in self.POOL_ARRAYS:
            rows = arrays[name].shape[0]
            want = 0 if name in ("r_next_obs", "r_next_legal") and not dqn else pool
            if rows != want:
                return f"record pool array {name} has {rows} rows, expected {want}"
        rec, eps = scalars["rec"], scalars["episodes"]
        if not 0 <= rec <= pool:
            return f"record cursor {rec} outside the pool of {pool} records"
        if not 0 <= eps <= arrays["episodes"].shape[0]:
            return f"episode cursor {eps} outside the episode log"
        sinfo = arrays["sinfo"]
        st = sinfo[:, C.SI_STATUS]
        if not np.isin(st, (C.ST_EMIT, C.ST_PARK)).all():
            return f"slot status {int(st[~np.isin(st, (C.ST_EMIT, C.ST_PARK))][0])} out of range between windows"
        level = sinfo[:, C.SI_LEVEL]
        if (level < 0).any() or (sinfo[:, C.SI_SEQ] < 0).any() or (sinfo[:, C.SI_EPLEN] < 0).any():
            return "negative slot counters"
        if scalars["target"] < 0:
            return "negative window target"
        quiet = (C.SI_OBSERVED, C.SI_NTAIL, C.SI_TAILKIND, C.SI_WINREC, C.SI_SEARCH, C.SI_SXJ)
        if (sinfo[:, quiet] != 0).any():
            return "a slot is in the middle of a decision (observation, tail or search under way)"
        # Per-decision columns hold the last decision's values; keep them within the geometry
        # anyway (a forged one must never become an out-of-range index).
        nodes = int(self.cfg[C.CFG_NODES])
        path = self.search["path"] if self.search is not None else 0
        rows = self.max_rows
        for cols, hi in (((C.SI_NACT,), N), ((C.SI_ROWS, C.SI_NNEW, C.SI_NOPP, C.SI_NBATCH), rows),
                         ((C.SI_NNODES, C.SI_LEAF, C.SI_NFRONT, C.SI_FAN0, C.SI_FANN), nodes),
                         ((C.SI_PLEN,), path), ((C.SI_FBUF,), 1)):  # fmt: skip
            if ((sinfo[:, cols] < 0) | (sinfo[:, cols] > hi)).any():
                return f"per-decision slot columns {cols} outside [0, {hi}]"
        if (sinfo[:, C.SI_FAN0] + sinfo[:, C.SI_FANN] > nodes).any():
            return "outcome fan outside the tree"
        heads = int(self.cfg[C.CFG_HEADS])
        if ((sinfo[:, C.SI_HEAD] < 0) | (sinfo[:, C.SI_HEAD] >= max(1, heads))).any():
            return "Q head index out of range"
        if (arrays["pending"] != 0).any():
            return "rows still outstanding"
        if (arrays["tele"] < 0).any():
            return "negative telemetry counters"
        cnt, idx = arrays["traj_cnt"], arrays["traj_idx"]
        if ((cnt < 0) | (cnt > idx.shape[2])).any():
            return "trajectory length out of range"
        used = np.arange(idx.shape[2])[None, None, :] < cnt[:, :, None]
        refs = idx[used]
        if ((refs < 0) | (refs >= rec)).any():
            return "trajectory entry outside the record pool"
        if len(np.unique(refs)) != len(refs):
            return "a record belongs to two trajectories"
        meta = arrays["r_meta"][:rec]
        # Between windows the pool holds open records (level -1) and records completed beyond
        # the last window's cut (a level below every slot's), counted by the emitted word; the
        # episode log holds only the episodes of those.
        lv = meta[:, C.RM_LEVEL]
        low = int(level.min()) if G else 0
        if ((lv < -1) | (lv >= low)).any():
            return "a pool record's level is not below every slot's level"
        if scalars["emitted"] != int(np.count_nonzero(lv >= 0)):
            return "the snapshot was not taken between windows (emitted records pending)"
        if ((arrays["episodes"][:eps, 2] < 0) | (arrays["episodes"][:eps, 2] >= low)).any():
            return "an episode log entry is not below every slot's level"
        if (lv[refs] != -1).any():
            return "a trajectory holds a completed record"
        if ((meta[:, C.RM_SLOT] < 0) | (meta[:, C.RM_SLOT] >= G)).any():
            return "record slot out of range"
        if ((meta[:, C.RM_PLAYER] < 0) | (meta[:, C.RM_PLAYER] >= N)).any():
            return "record player out of range"
        # maxn trees record a value-only row (action -1) for every agent that did not move
        lo = -1 if self.cfg[C.CFG_MAXN] != 0 else 0
        if ((meta[:, C.RM_ACTION] < lo) | (meta[:, C.RM_ACTION] >= A)).any():
            return "record action out of range"
        if ((meta[:, C.RM_NTGT] < 0) | (meta[:, C.RM_NTGT] > arrays["r_tgt"].shape[1])).any():
            return "record target width out of range"
        if self.compact_targets and (meta[:, C.RM_NTGT] != np.count_nonzero(arrays["r_legal"][:rec], axis=1)).any():
            return "a record's compact targets do not match its legal set"
        if ((arrays["act_agents"] < 0) | (arrays["act_agents"] >= N)).any():
            return "acting agent out of range"
        if ((arrays["last_act"] != 0) & (arrays["last_act"] != 1)).any():
            return "last-acted flags are not 0/1"
        for name in ("r_f", "r_obs", "r_next_obs", "r_mask", "r_tgt", "ep_ret", "episodes", "root", "ftele"):
            if not np.isfinite(arrays[name]).all():
                return f"non-finite values in {name}"
        if not (math.isfinite(scalars["rate"]) and scalars["rate"] > 0.0):
            return "window rate must be finite and > 0"
        if scalars["levels_done"] < 0 or scalars["records_done"] < 0:
            return "negative window counters"
        states = arrays["states"]
        if (states[:, 1] != 0).any():
            return "a slot's game is over but was not reset"
        for g in range(G):  # restore-time only: the game's own validator (O(n_games) calls)
            reason = self.gdef.validate_state(states[g])
            if reason is not None:
                return f"slot {g} state: {reason}"
        return self._check_start_buffer(arrays)

    def _check_start_buffer(self, arrays: dict) -> str | None:
        """The start-buffer part of :meth:`check_state`: counters in range, every held state
        one the game accepts (restore-time only: one validator call per held state)."""
        meta, held = arrays["sb_meta"], arrays["sb_states"]
        cap = int(self.cfg[C.CFG_SB])
        stored, seen, seeded = meta[:, C.SB_STORED], meta[:, C.SB_SEEN], meta[:, C.SB_SEEDED]
        if ((stored < 0) | (stored > min(cap, held.shape[1])) | (seen < stored)).any():
            return f"start buffer counters outside [0, {cap}]"
        if ((seeded != 0) & (seeded != 1)).any():
            return "start buffer seeded flags are not 0/1"
        if cap == 0 and (meta != 0).any():
            return "start buffer state in a snapshot of an engine without start_buffer"
        for g in np.flatnonzero(stored):
            for j in range(int(stored[g])):
                reason = self.gdef.validate_state(held[g, j])
                if reason is None and held[g, j, 1] != 0:
                    reason = "a finished game"
                if reason is not None:
                    return f"slot {g} start buffer state {j}: {reason}"
        return None

    def load_state(self, arrays: dict, scalars: dict) -> None:
        """Adopt a state that passed :meth:`check_state`: copy the arrays in, set the ctl words
        and window counters, keep this runtime's route geometry.  Only between windows."""
        with self._helpers_out():
            self._load_state_locked(arrays, scalars)

    def _load_state_locked(self, arrays: dict, scalars: dict) -> None:
        for name in self.SNAPSHOT_ARRAYS:
            self._arrays[name] = np.array(arrays[name], dtype=self._arrays[name].dtype, order="C", copy=True)
        for k, i in self.SNAPSHOT_CTL.items():
            self.ctl[i] = scalars[k]
        self.ctl[C.C_REC_CAP] = self._arrays["r_meta"].shape[0]
        self.ctl[C.C_PARKED] = 0
        self.ctl[C.C_ERROR] = 0
        self.rate = float(scalars["rate"])
        self.levels_done = int(scalars["levels_done"])
        self.records_done = int(scalars["records_done"])
        self.window_acc[:] = 0
        self.error = None
        self._build_E()
        if self.infer_cache:
            self.k.cache_clear(self.E)  # snapshots never carry the cache: start it empty


def _bytes(arr: np.ndarray) -> np.ndarray:
    """A C-contiguous ``[M, W]`` pool array as its ``[M, W * itemsize] uint8`` view: the row
    kernels compile once, not once per dtype."""
    return arr.view(np.uint8)


def _shrink_rows(arr: np.ndarray, m: int) -> np.ndarray:
    """The first ``m`` rows of ``arr`` as an array of their own: shrunk in place (the tail's
    memory is released, no copy) when ``arr`` owns its buffer, else copied."""
    if arr.flags.owndata and arr.base is None and arr.flags.c_contiguous:
        arr.resize((m,) + arr.shape[1:], refcheck=False)
        return arr
    return arr[:m].copy()


def _trim(out, n, cap):
    """Drop the outputs of pad rows (``cap - n`` trailing rows)."""
    if isinstance(out, tuple):
        return tuple(x[:n] if isinstance(x, np.ndarray) and x.ndim >= 1 and x.shape[0] == cap else x for x in out)
    if isinstance(out, np.ndarray) and out.ndim >= 1 and out.shape[0] == cap:
        return out[:n]
    return out
