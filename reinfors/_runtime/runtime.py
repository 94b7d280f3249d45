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

Where each part lives (``Runtime`` is their composition; each file owns one responsibility):

* ``spec.py``: :class:`RuntimeSpec`, what a runtime is built for, and its config vectors;
* ``engine_state.py``: the arrays, their geometry and growth, the address table ``E`` and the
  reallocation barrier;
* ``workers.py``: the helper threads;
* ``calls.py``: one callback call (lend, call, validate, route back; the pipelined caller loop);
* ``scheduler.py``: the window loop and its quiescence and stall ladders;
* ``record_pool.py``: the records' hand-over in canonical order;
* ``snapshot_state.py``: snapshot export, validation and restore;
* ``cohorts.py``: which rows go in which call (fixed cohorts of slots, one round a call);
* ``firing.py``: how a call is overlapped (the callback's cost, the pipelined regime).
"""

from __future__ import annotations

import math

import numpy as np

from reinfors.jit import engine_codes as C
from reinfors.jit import outputs as _outputs
from reinfors.jit import records as _records
from reinfors.jit import rings

from . import cohorts as _cohorts
from .calls import CallPath
from .engine_state import MAX_ARENA_BYTES, MAX_PIPELINE_ROWS, EngineState
from .firing import CallCost, Pipe
from .record_pool import RecordPool
from .scheduler import KernelError, WindowLoop
from .snapshot_state import SnapshotState
from .spec import RuntimeSpec, config_words
from .workers import WorkerPool, Workers

__all__ = ["Runtime", "RuntimeSpec", "KernelError", "kernel_family", "MAX_PIPELINE_ROWS", "MAX_ARENA_BYTES"]


# Minimax: the bound on a slot's request over the rows it typically holds (sizes its cohorts).
MINIMAX_COHORT_SHARE = 8


def kernel_family(policy_kind: int, infer_cache: int) -> str:
    """The generated kernel family a composition runs on (``codegen.FAMILIES``): only its own
    policy's search kernels, and the cache paths only with ``infer_cache > 0``."""
    base = {C.POLICY_AZ: "tree", C.POLICY_MCTS: "tree", C.POLICY_GUMBEL: "gumbel",  # gumbel: search_gumbel.py
            C.POLICY_MINIMAX: "minimax", C.POLICY_SELEXP: "selexp"}  # fmt: skip
    return base.get(policy_kind, "modelfree") + ("+cache" if infer_cache else "")


class Runtime(EngineState, Workers, CallPath, WindowLoop, RecordPool, SnapshotState):
    """Preallocated engine state ``E`` plus the scheduler for one Engine (see the module header)."""

    def __init__(self, gdef, spec: RuntimeSpec, *, pgen: np.ndarray | None = None):
        """Allocate the state for ``spec`` on game ``gdef`` and start every slot.

        ``pgen``: the owner's per-player weights generations (an int64 array the runtime reads,
        never writes; see :meth:`publish_generations`)."""
        self.gdef = gdef
        self.spec = spec
        search = self.search = spec.search
        leaf_batch = search is not None and search.get("leaf_batch", 1) > 1
        self.k = gdef.kernels_for(kernel_family(spec.policy_kind, spec.infer_cache), leaf_batch)
        G, N, A, O = spec.n_games, gdef.n_players, gdef.n_actions, gdef.obs_size
        self.G, self.N, self.A, self.O = G, N, A, O
        self.pad = spec.pad
        self.batch_size = spec.batch_size
        self.user_batch = spec.user_batch  # batch_size came from the user: a hard cap (firing.py)
        self.pipelined_arenas = False  # arenas sized for an accelerator-like callback (_size_routes)
        self.cost = CallCost()  # the callbacks' recent calls (the firing regime)
        self._pipe: Pipe | None = None  # set while a pipelined window runs
        # Rows one slot can have in flight (one request at a time): its acting agents' rows, a
        # tail, or one search request (a Minimax round can be thousands of rows).
        self.max_rows = max(N, search["max_rows"]) if search is not None else N
        self.infer_cache = spec.infer_cache
        self.pgen = np.zeros(max(1, N), np.int64) if pgen is None else pgen
        self.rec_per_level = N + (search["interior"] if search is not None else 0)
        # Which rows go in which call: fixed cohorts of slots (cohorts.py), from counts only.
        # A sequential search's tail is one row (the player to move), so its bound is the search's.
        if search is not None:
            typical = max(1, search["max_rows"] // search.get("rows_share", 1))
            if spec.policy_kind == C.POLICY_MINIMAX:
                # A Minimax request is one slot's frontier, bounded by the full-width last level
                # but mostly far smaller (Connect4 depth 4, 32 games: 225 rows a request against
                # the bound's 2,401): cohorts of one slot would call ~15x as often.  Only the
                # cohort's size follows this; its arenas still hold its largest round.
                typical = max(1, typical // MINIMAX_COHORT_SHARE)
            bound = max(N if gdef.simultaneous else 1, search["max_rows"])
        else:
            typical, bound = (N if gdef.simultaneous else 1), N
        closing = spec.cohorts and not spec.infer_cache and not _cohorts.timed_fires()
        self.cohorts = _cohorts.plan(G, spec.batch_size, bound, typical, spec.user_batch or spec.pad, closing)
        self._size_routes(spec.n_routes)
        self.n_threads = spec.n_threads
        self.learner_kind = spec.learner_kind
        # AlphaZero's records hold their targets compactly (one column per legal action, in the
        # batch's legal-id order, _store_visit_targets); take_records hands them out so.
        self.compact_targets = spec.learner_kind == C.LEARNER_AZ
        self.n_step = spec.n_step
        self.cfg, self.fcfg = config_words(spec, gdef, self.n_routes, self.n_arenas, self.capacity)
        co = self.cohorts
        self.cfg[C.CFG_COHORT], self.cfg[C.CFG_COHORTS], self.cfg[C.CFG_COHORT_CLOSE] = co.size, co.count, int(co.closing)
        # Per internal route (route x cohort) its chain words, then per cohort its active count
        # and (per-player routes) its round's calls still out.
        K = self.cohorts.count
        self.ctl = np.zeros(C.CTL_BASE + 8 * (max(1, N) * K + 2 * K) + 8, np.int64)
        self.seed = spec.seed
        # Every message a slot can have queued: one per span of its request (one span per row
        # with per-player routes), plus its Completed message.
        spans = (self.max_rows if N > 1 or spec.infer_cache else math.ceil(self.max_rows / self.capacity)) + 2
        self.msg = rings.make(G * spans + 4 * G * N + 64, C.MSG_W)
        self.rdy = rings.make(G + 1, 1)
        self.ready_buf = np.zeros(G, np.int64)
        self.width = spec.width
        self.window_acc = np.zeros(2, np.int64)  # (slots completed, records) from Completed messages
        self.error: BaseException | None = None
        self.abort_requested = False  # see request_abort (set from another thread)
        self._helpers: WorkerPool | None = None
        self._arrays = self._allocate(spec)
        self._alloc_routes()
        self.k.start_slots(self.E, np.uint64(spec.seed))
        # Records per slot-level estimate (deterministic: derived from counts); a search with
        # interior targets starts from its interior record bound.
        # Model-free on a simultaneous game: every learning agent acts each tick, so the first
        # window starts from that many records per level (an estimate below the truth would set
        # the target too far ahead: the window could then overshoot its floor by episodes).
        if self.search is None:
            self.rate = float(max(1, int(np.count_nonzero(spec.learn)))) if gdef.simultaneous else 1.0
        else:
            self.rate = max(1.0, self.rec_per_level / max(1, N))
        self.levels_done = 0
        self.records_done = 0
        self.window_base = 0  # the lowest slot level when the current window started
        self.cut = 0  # the completion key below which the last window delivers its records (_cut_at)
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
            (_outputs.finite_cols_values, (f4, 0, np.zeros(1, np.float32), f8, i8)),
            (_outputs.widen_rows, (f4, 0, f8, 0)),
            (_outputs.widen_rows, (f8, 0, f8, 0)),
        ]
        if self.infer_cache:
            plan += [(k.release_gated, (E, r, self.ready_buf)), (k.demand_full, (E,)), (k.cache_clear, (E,))]
        return plan
