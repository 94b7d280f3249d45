"""``PolicyHandle.choose``: one stateless decision per env, through the engine's own kernels.

``choose(envs, infer, seed=0, plies=None, *, gamma)`` copies every env's state row into the
slot ``k`` of a dedicated single-threaded :class:`Runtime` and drives its kernels in ROUNDS:

1. ``work`` advances every runnable slot until it waits for inference rows (a search: one leaf
   row for AlphaZero/Mcts, a whole depth level for Minimax; a model-free policy: the mover's
   row) or parks (search finished: ``cfg[CFG_CHOOSE] == 1`` parks with the action in
   ``sinfo[k, SI_CHOICE]`` and never steps; model-free: acted once on the runtime's copy);
2. the round's rows — all in one arena sized for every row a round can hold — are put in env
   order, **deduplicated by exact bytes** (first occurrence order; one kernel call,
   ``reinfors/jit/dedupe.py``), sent to ``infer`` in ONE call, validated like the Engine's
   outputs, expanded back to every requesting row and routed.

Repeat until every slot parked.  Python work is per round (a few whole-array NumPy operations
and one kernel call each), never per row.

Purity: the envs are only read (state rows copied); no result, statistic or random state is
reused between calls (a finished call's runtime buffers are, zero-filled: see ``_take``).

RNG (the original's per-env derivation was not recovered, docs/original-0.4.0/engine-search.md
§5): slot ``k`` of a call with ``seed`` starts the SplitMix64 stream
``reinfors.jit.rng.derive(seed, k, CHOOSE_STREAM)``.  It feeds AlphaZero's root Dirichlet noise
and visit sampling, Mcts' visit sampling, EpsilonGreedyQ's head draw (``next() % n_heads``, the
first draw) and exploration, and Ppo's action sample.  So results depend only on (seed, k, the
env's state, plies[k]) and the callback; Minimax on a chance-free game uses no randomness.
"""

from __future__ import annotations

import collections
import json
import threading

import numpy as np

from reinfors._validate import as_sequence
from reinfors.jit import dedupe as _dedupe
from reinfors.jit import engine_codes as C

from . import budget
from . import composition as _composition
from .routes import PVValidator, QValidator
from .runtime import KernelError, Runtime

__all__ = ["choose", "choose_rows", "Chooser", "CHOOSE_STREAM", "streams"]

CHOOSE_STREAM = 0x43484F4F5345  # b"CHOOSE": the third coordinate of every choose slot stream
U32_MAX = (1 << 32) - 1

_LABELS = {
    "alphazero": "AlphaZero",
    "mcts": "Mcts",
    "minimax": "Minimax",
    "selective_expectimax": "SelectiveExpectimax",
}
_MODEL_FREE = {"epsilon_greedy_q": C.POLICY_EGQ, "ppo": C.POLICY_PPO}

# SplitMix64 constants of reinfors/jit/rng.py (vectorised here over uint64 arrays, which wrap
# silently; tests/engine/test_choose.py asserts equality with the njit ``derive``).
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix64(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def streams(seed: int, n: int) -> np.ndarray:
    """``[n] uint64``: the start of slot ``k``'s stream, ``rng.derive(seed, k, CHOOSE_STREAM)``."""
    k = np.arange(n, dtype=np.uint64)
    z = _mix64(np.full(n, seed, np.uint64) ^ _GOLDEN)
    z = _mix64(z ^ (k * _M1 + _GOLDEN))
    return _mix64(z ^ (np.full(n, CHOOSE_STREAM, np.uint64) * _M2 + np.uint64(1)))


def _next_u64(state: np.ndarray) -> np.ndarray:
    """Advance ``state: [n] uint64`` in place (``rng.next_u64`` per element); the outputs."""
    state += _GOLDEN
    return _mix64(state.copy())


# -- argument conversion (PyO3's messages) ---------------------------------------------------------


def _envs_arg(envs) -> list:
    from reinfors.env import Env

    out = as_sequence("envs", envs)
    for e in out:
        if not isinstance(e, Env):
            raise TypeError(f"argument 'envs': '{type(e).__name__}' object cannot be converted to 'Env'")
    return out


# -- validation ------------------------------------------------------------------------------------


def _validate(policy, envs, infer, seed, plies, gamma):
    """Convert and check every argument in the original's order (probed against 0.4.0); returns
    ``(envs, seed, plies, gamma)``.  The first failing check is the error.

    Order: conversions (envs, seed, plies, gamma) → at least one env → callable infer → gamma
    range → Minimax antisymmetry (env 0's weights) → env 0 finished, reward-free → each later env:
    composition, finished → plies length → upper caps → one active agent per env → lower bounds
    → clairvoyance → Minimax two-player → the acting-ply limit (AlphaZero, Mcts).
    """
    from reinfors._validate import as_float, as_unsigned
    from reinfors.learners import _CATALOGUE_COMPAT as CATALOGUE_COMPAT

    # PyO3 argument extraction: envs, seed, plies, gamma.
    envs = _envs_arg(envs)
    seed = as_unsigned("seed", seed)
    if plies is not None:
        plies = [as_unsigned("plies", p) for p in as_sequence("plies", plies)]
    gamma = as_float("gamma", gamma, finite=False)
    if not envs:
        raise ValueError("choose needs at least one env")
    if not callable(infer):
        raise ValueError("choose takes a single shared infer callable")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError("gamma must be in [0, 1]")
    first = envs[0]
    d = first._def
    if policy.name == "minimax" and not d.simultaneous and d.n_players == 2:
        w = first._weights_map or dict(zip(d.reward_keys, d.reward_defaults, strict=True))
        if "win" in w and (w.get("loss") != -w["win"] or w.get("draw", 0.0) != 0.0):
            raise ValueError(
                "Minimax's zero-sum negation requires an antisymmetric reward: set loss = -win and draw = 0"
            )
    if first.done():
        raise ValueError("choose on a finished env")
    if first._weights_map is None:
        raise ValueError("choose needs terminal values: construct these Envs with a reward")
    for e in envs[1:]:
        if e._fingerprint != first._fingerprint:
            raise ValueError("envs must share one composition (game, encoder, reward)")
        if e.done():
            raise ValueError("choose on a finished env")
    if plies is not None and len(plies) != len(envs):
        raise ValueError(f"{len(plies)} plies for {len(envs)} envs")
    _composition._check_engine_caps(policy)
    for e in envs:
        if len(e.active_agents()) != 1:
            raise ValueError("choose supports sequential games: exactly one active agent per env")
    _composition._check_engine_ranges(policy)
    label = _LABELS.get(policy.name)
    if label is not None and d.has_info_key:
        raise ValueError(
            f"the {label} policy searches the true state and would be clairvoyant on this "
            f"hidden-information game; see {CATALOGUE_COMPAT}"
        )
    if policy.name == "minimax" and (d.simultaneous or d.n_players != 2):
        raise ValueError(f"Minimax requires a two-player sequential game; see {CATALOGUE_COMPAT}")
    if policy.name == "mcts" and d.n_players > 2:
        raise ValueError(f"Mcts supports sequential games with at most two players; see {CATALOGUE_COMPAT}")
    if plies is None:
        plies = [e.ticks for e in envs]
    if policy.name in ("alphazero", "mcts"):
        # The acting-ply counter is a u32 that must stay below u32::MAX (the original's limit).
        for p in plies:
            if p >= U32_MAX:
                raise ValueError(f"acting-ply counter {p} out of range")
    return envs, seed, plies, gamma


# -- the driver ------------------------------------------------------------------------------------


def choose(policy, envs, infer, seed, plies, gamma) -> list[int]:
    """``PolicyHandle.choose``: validate, then one decision per env (see the module docstring)."""
    envs, seed, plies, gamma = _validate(policy, envs, infer, seed, plies, gamma)
    first = envs[0]
    states = np.stack([e._state for e in envs])  # [G, state_size] int64
    key = _key(policy, first._def, first._fingerprint, gamma, len(envs))
    rt = _take(key)
    out, rt = choose_rows(policy, first._def, first._weights, states, infer, seed, plies, gamma, rt)
    _give_back(key, rt)  # only a call that completed returns its runtime for reuse
    return [int(a) for a in out]


def choose_rows(policy, d, weights, states, infer, seed, plies, gamma, rt=None):
    """``(decisions [G] int64, runtime)`` for state rows ``states: [G, state_size] int64`` —
    ``choose`` without its per-call validation, for a caller that validated the composition once
    (the Arena's match driver).  ``rt`` is a reset runtime of the call's :func:`_key` or None
    (build one); the runtime used is returned quiescent, for the caller to :func:`_reset` and
    reuse (a failed call's runtime is never reused: it is not returned).
    """
    rt, validate = _build(policy, d, weights, states, seed, plies, gamma, rt)
    _drive(rt, infer, validate)
    if policy.name in _MODEL_FREE:
        # One record per slot (the mover's decision; every player learns): its action.
        n = int(rt.ctl[C.C_REC])
        meta = rt["r_meta"][:n]
        out = np.full(len(states), -1, np.int64)
        out[meta[:, C.RM_SLOT]] = meta[:, C.RM_ACTION]
        if (out < 0).any():
            raise KernelError("choose: a slot finished without a decision record")
    else:
        out = rt["sinfo"][:, C.SI_CHOICE].copy()
    return out, rt



class Chooser:
    """Repeated pooled decisions of one contestant — ``choose`` with its setup done once.

    Holds one runtime of ``capacity`` slots for ``policy`` on composition ``d`` (reward
    ``weights``, discount ``gamma``), validated by the caller.  Each call decides for ``m <=
    capacity`` state rows: rows take slots ``0..m-1`` (so slot ``k``'s stream is choose's
    ``derive(seed, k, CHOOSE_STREAM)`` and the decisions equal ``choose``'s on the same ordered
    batch), the other slots stay parked.  Not thread-safe: one caller at a time.
    """

    def __init__(self, policy, d, weights, gamma: float, capacity: int) -> None:
        self.policy, self.d, self.weights, self.gamma, self.capacity = policy, d, weights, float(gamma), capacity
        self.kind = _MODEL_FREE.get(policy.name) or _composition._POLICY_KINDS[policy.name]
        self.n_heads = policy.n_heads if policy.output == "q" else 1
        self.rt: Runtime | None = None
        self.validate = None

    def __call__(self, states: np.ndarray, infer, seed: int, plies) -> np.ndarray:
        """The decisions ``[m] int64`` for ``states: [m, state_size] int64`` (``m <= capacity``)."""
        m = len(states)
        rt, self.rt = self.rt, None  # a call that fails leaves no runtime to reuse
        if rt is None:
            blank = np.zeros((self.capacity, self.d.state_size), np.int64)
            rt, self.validate = _build(
                self.policy, self.d, self.weights, blank, seed, np.zeros(self.capacity, np.int64), self.gamma, None
            )
        else:
            _reset(rt)
        _fill(rt, self.kind, self.n_heads, states, seed, plies)
        _drive_fused(rt, infer, self.validate)
        if self.policy.name in _MODEL_FREE:
            n = int(rt.ctl[C.C_REC])
            meta = rt["r_meta"][:n]
            out = np.full(m, -1, np.int64)
            out[meta[:, C.RM_SLOT]] = meta[:, C.RM_ACTION]
            if (out < 0).any():
                raise KernelError("choose: a slot finished without a decision record")
        else:
            out = rt["sinfo"][:m, C.SI_CHOICE].copy()
        self.rt = rt
        return out


def _key(policy, d, fingerprint, gamma, G) -> tuple:
    """The runtime cache key of a call: composition, policy config, gamma and batch size.

    The GameDef object itself is part of the key (held by the cached entry, so its id stays
    unique): user games with equal configs may still have different rules."""
    return (d, fingerprint, json.dumps(policy._config(), sort_keys=True), float(gamma), G)


# -- runtime reuse ---------------------------------------------------------------------------------
#
# Building a Runtime (≈70 arrays and their address table) costs milliseconds, more than the
# search of a small call, and an Arena makes thousands of calls of one composition.  A finished
# call's runtime is quiescent (every slot parked, arenas recycled, rings drained), so it is kept
# and *reset* for the next call of the same composition and batch size: every state array is
# zero-filled in place — exactly a new runtime's contents — and refilled from the envs.  Only
# buffers are reused; no search statistic, prediction or random state survives a call.

_RUNTIMES: collections.OrderedDict = collections.OrderedDict()
_RUNTIMES_MAX = 8
_RUNTIMES_LOCK = threading.Lock()
# Arrays a reset keeps: the composition's constants and the lock-free rings (consistent and
# empty at quiescence; zeroing their sequence words would break them).
_KEEP = frozenset(("params", "cfg", "fcfg", "weights", "learn", "msg_seq", "msg_data", "msg_pos",
                   "rdy_seq", "rdy_data", "rdy_pos"))  # fmt: skip


def _take(key) -> Runtime | None:
    """The cached runtime of ``key``, reset (or None); it leaves the cache until given back."""
    with _RUNTIMES_LOCK:
        hit = _RUNTIMES.pop(key, None)
    return None if hit is None else _reset(hit[1])


def _reset(rt: Runtime) -> Runtime:
    """Zero-fill a quiescent runtime's state in place: exactly a new runtime's contents."""
    for name, a in rt._arrays.items():
        if name not in _KEEP:
            a.fill(0)
    rt.spans.fill(0)
    rt.span_n.fill(0)
    rt.window_acc[:] = 0
    rt.ctl[C.C_REC_CAP] = rt["r_meta"].shape[0]
    rt.copy_mode = False
    rt._route_fires = [0] * rt.n_routes
    rt._stalls = 0
    rt.error = None
    return rt


def _give_back(key, rt: Runtime) -> None:
    with _RUNTIMES_LOCK:
        _RUNTIMES[key] = (key, rt)
        _RUNTIMES.move_to_end(key)
        while len(_RUNTIMES) > _RUNTIMES_MAX:
            _RUNTIMES.popitem(last=False)


def _build(policy, d, weights, states, seed, plies, gamma, rt):
    """A dedicated runtime for this call (``rt``, reset, or a new one): slot ``k`` = row ``k`` of
    ``states``, its own stream, its acting ply ``plies[k]``; one arena that holds every row of a
    round."""
    from reinfors import learners

    G, A = len(states), d.n_actions
    search = None
    if policy.name in _MODEL_FREE:
        kind = _MODEL_FREE[policy.name]
        # DQN-style trajectories (no critic tails): the decision's record carries the action.
        learner_kind = C.LEARNER_DQN
        learn = np.ones(d.n_players, np.int64)
        max_rows = d.n_players
    else:
        kind = _composition._POLICY_KINDS[policy.name]
        az = policy.name == "alphazero"
        learner = learners.AlphaZero(gamma=gamma) if az else learners.TreeStrap(gamma=gamma)
        learner_kind = C.LEARNER_AZ if az else C.LEARNER_TS
        search = dict(_composition._search_spec(policy, learner, d, G), choose=1)
        if "too_big" in search:
            raise MemoryError(search["too_big"])
        learn = np.zeros(d.n_players, np.int64)  # choose records nothing
        max_rows = max(d.n_players, search["max_rows"])
    q = policy.output == "q"
    n_heads = policy.n_heads if q else 1
    if rt is None:
        _check_preallocation(policy, d, G, max_rows, n_heads * A if q else A + 1, search)
        rt = _new_runtime(d, kind, learner_kind, G, seed, max_rows, learn, weights, n_heads, policy, gamma, q, search)
    _fill(rt, kind, n_heads, states, seed, plies)
    validate = QValidator(n_heads, A) if q else PVValidator(A, "AlphaZero" if policy.name == "alphazero" else "Ppo")
    return rt, validate


def _fill(rt: Runtime, kind: int, n_heads: int, states, seed, plies) -> None:
    """Load a reset runtime of ``G >= m`` slots for one call over ``m = len(states)`` rows: slot
    ``k < m`` = row ``k`` with stream ``streams(seed, G)[k]`` (a function of ``k`` only) and ply
    ``plies[k]``; slots ``k >= m`` are parked, so no kernel ever touches them."""
    m = len(states)
    srng, sinfo = rt["srng"], rt["sinfo"]
    G = len(sinfo)
    rt["states"][:m] = states
    srng[:, 0] = streams(seed, G)
    sinfo[:] = 0
    # Minimax and the model-free policies never read the ply; keep it an int64.
    sinfo[:m, C.SI_EPLEN] = np.minimum(np.asarray(plies, dtype=np.uint64), np.uint64(1 << 62)).astype(np.int64)
    sinfo[:m, C.SI_STATUS] = C.ST_EMIT
    sinfo[m:, C.SI_STATUS] = C.ST_PARK
    if kind == C.POLICY_EGQ or kind == C.POLICY_SELEXP:
        # The engine draws the episode's head at reset; a choose call is its own "episode".
        sinfo[:, C.SI_HEAD] = (_next_u64(srng[:, 0]) % np.uint64(n_heads)).astype(np.int64)
    rt.ctl[C.C_TARGET] = 1  # every slot is at level 0: one decision each


def _check_preallocation(policy, d, G: int, max_rows: int, width: int, search) -> None:
    """Refuse (``MemoryError`` naming the parameter and the bytes) a choose runtime whose search
    trees, round arena and routed predictions cannot fit in the memory left (``budget``)."""
    rows = budget.nbytes(G, max(d.n_players, max_rows))
    parts = {
        "search trees": (search.get("tree_bytes", 0) if search else 0, search.get("tree_knob", "envs") if search else "envs"),
        "round arena": (budget.nbytes(rows, itemsize=4 * d.obs_size + 32), "envs"),
        "routed predictions": (budget.nbytes(rows, itemsize=8 * width + 16), "envs"),
    }
    budget.check(parts, f"choose over {G} envs ({policy.name})", "choose over fewer envs or a smaller search")


def _new_runtime(d, kind, learner_kind, G, seed, max_rows, learn, weights, n_heads, policy, gamma, q, search):
    """A runtime for ``G`` choose slots: single-threaded, one arena holding a whole round."""
    A = d.n_actions
    rt = Runtime(
        d,
        policy_kind=kind,
        learner_kind=learner_kind,
        n_games=G,
        seed=seed,
        batch_size=G * max_rows,  # one arena holds a whole round
        n_threads=1,
        learn=learn,
        n_routes=1,
        pad=False,
        weights=weights,
        n_heads=n_heads,
        n_step=1,
        epsilon=policy._params.get("epsilon", 0.0),
        gamma=gamma,
        lam=0.95,
        bootstrap_p=1.0,
        width=n_heads * A if q else A + 1,
        search=search,
    )
    # Single-threaded and nothing lent to the callback (it gets a deduplicated copy), so the
    # chain needs no spare arenas: one arena of G * max_rows rows.
    rt.n_arenas = 1
    rt._alloc_routes()
    rt._ensure_capacity(1)  # model-free: one record and at most one episode per slot
    return rt


def _drive(rt: Runtime, infer, validate) -> None:
    """Rounds until every slot parked: advance, gather the round's rows in env order, dedupe,
    one ``infer`` call, validate, expand, route."""
    k = rt.k
    sinfo = rt["sinfo"]
    rt._set_targets()  # the arena closes at its capacity (a reused runtime's ctl was zeroed)
    rt._queue_emitting()
    while True:
        E = rt.E
        k.work(E, False, 0)
        rt._check_error()
        if (sinfo[:, C.SI_STATUS] == C.ST_PARK).all():
            return
        k.close_all_open(E, 0)
        code = int(k.find_fireable(E, rt.spans, rt.span_n, rt.window_acc))
        if code < 0:
            raise KernelError(f"choose: slots wait for rows but no arena is fireable ({rt._diagnose()})")
        route, i = divmod(code, rt.n_arenas)
        n = int(k.arena_fill(E, route, i))
        rows = rt["arena_rows"][route, i, :n]
        n_sp = int(rt.span_n[code])
        if int(rt.spans[code, :n_sp, 2].sum()) != n:
            raise KernelError(f"choose: span table covers {int(rt.spans[code, :n_sp, 2].sum())} of {n} rows")
        # Env order (slot, request offset), exact-bytes dedupe in first-occurrence order.
        unique_src, row_uid = _dedupe.order_unique(rows, rt.spans[code], n_sp)
        unique_rows = rows[unique_src]  # [u, O] float32, a fresh C-contiguous array
        pred = validate(infer(unique_rows), len(unique_rows))  # [u, W] float64
        out = pred[row_uid]  # [n, W], arena row order
        k.finish_fire(E, rt.spans, rt.span_n, route, i, out, rt.ready_buf, True, np.int64(0), validate.raw)


def _drive_fused(rt: Runtime, infer, validate) -> None:
    """:func:`_drive` with each round's kernel work up to the callback fused into one call
    (``choose_gather`` of reinfors/jit/kernels/match_kernels.py): the same rows, order and dedupe,
    about half the Python per round.  The Chooser's rounds (the Arena's match driver)."""
    k = rt.k
    sinfo, rows_all, ctl = rt["sinfo"], rt["arena_rows"], rt.ctl
    spans, span_n, acc, n_arenas = rt.spans, rt.span_n, rt.window_acc, rt.n_arenas
    rt._set_targets()  # the arena closes at its capacity (a reused runtime's ctl was zeroed)
    rt._queue_emitting()
    while True:
        E = rt.E
        state, code, n, unique_src, row_uid = k.choose_gather(
            E, spans, span_n, acc, sinfo, ctl, rows_all, n_arenas, C.SI_STATUS, C.ST_PARK, C.C_ERROR
        )
        if state == 1:
            return
        if state == 2:
            rt._check_error()
        if state != 0:
            raise KernelError(f"choose: slots wait for rows but no arena is fireable ({rt._diagnose()})")
        route, i = divmod(int(code), n_arenas)
        unique_rows = rows_all[route, i, :n][unique_src]  # [u, O] float32, a fresh C-contiguous array
        pred = validate(infer(unique_rows), len(unique_rows))  # [u, W] float64
        k.finish_fire(E, spans, span_n, route, i, pred[row_uid], rt.ready_buf, True, np.int64(0), validate.raw)

