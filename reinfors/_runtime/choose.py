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

import numpy as np

from reinfors._validate import as_sequence
from reinfors.jit import choose_prep as _prep
from reinfors.jit import dedupe as _dedupe
from reinfors.jit import engine_codes as C

from . import composition as _composition
from .choose_runtime import (
    _KEEP,
    _LABELS,
    _MODEL_FREE,
    _STALE_OK,
    CHOOSE_STREAM,
    _build,
    _fill,
    _give_back,
    _key,
    _take,
    streams,
)
from .runtime import KernelError, Runtime

__all__ = ["choose", "choose_rows", "Chooser", "CHOOSE_STREAM", "streams"]

U32_MAX = (1 << 32) - 1

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
    if policy.name == "gumbel_alphazero" and d.simultaneous:
        raise ValueError(f"GumbelAlphaZero supports sequential games only; see {CATALOGUE_COMPAT}")
    if policy.name == "mcts" and d.n_players > 2:
        raise ValueError(f"Mcts supports sequential games with at most two players; see {CATALOGUE_COMPAT}")
    if plies is None:
        plies = [e.ticks for e in envs]
    if policy.name in _composition._TREES:
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
        self.pooled: _Pooled | None = None
        self._blocks: tuple | None = None  # (address table, addresses, byte counts, arrays) to zero

    def _prepare(self, rt: Runtime, states: np.ndarray, seed: int, plies) -> None:
        """:func:`_reset` + :func:`_fill` of the last call's (quiescent) runtime in two kernel
        calls (reinfors/jit/choose_prep.py), except that the search trees' node arrays
        (:data:`_STALE_OK`) keep their stale contents: the engine sets every node up before it
        reads it (``_node_setup``), as it does between the decisions of a self-play slot."""
        E = rt.E
        if self._blocks is None or self._blocks[0] is not E:
            keep = _KEEP | _STALE_OK
            arrays = [a for name, a in rt._arrays.items() if name not in keep and a.nbytes]
            arrays += [rt.spans, rt.span_n, rt.window_acc]
            addresses = np.array([a.ctypes.data for a in arrays], np.int64)
            for a in arrays:
                if not a.flags.c_contiguous:  # pragma: no cover - the schema keeps them contiguous
                    raise KernelError("choose: a runtime array is not contiguous")
            self._blocks = (E, addresses, np.array([a.nbytes for a in arrays], np.int64), arrays)
        _prep.zero_blocks(self._blocks[1], self._blocks[2])
        rt.ctl[C.C_REC_CAP] = rt["r_meta"].shape[0]
        rt.copy_mode = False
        rt._route_fires = [0] * rt.n_routes
        rt._stalls = 0
        rt.error = None
        heads = self.n_heads if self.kind in (C.POLICY_EGQ, C.POLICY_SELEXP) else 0
        _prep.load_slots(
            rt["states"], rt["srng"], rt["sinfo"], states, np.ascontiguousarray(plies, np.int64),
            np.uint64(seed), np.uint64(CHOOSE_STREAM), heads,
        )  # fmt: skip
        rt.ctl[C.C_TARGET] = 1  # every slot is at level 0: one decision each

    def __call__(self, states: np.ndarray, infer, seed: int, plies) -> np.ndarray:
        """The decisions ``[m] int64`` for ``states: [m, state_size] int64`` (``m <= capacity``)."""
        m = len(states)
        rt, self.rt = self.rt, None  # a call that fails leaves no runtime to reuse
        if rt is None:
            blank = np.zeros((self.capacity, self.d.state_size), np.int64)
            rt, self.validate = _build(
                self.policy, self.d, self.weights, blank, seed, np.zeros(self.capacity, np.int64), self.gamma, None
            )
            _fill(rt, self.kind, self.n_heads, states, seed, plies)
        else:
            self._prepare(rt, states, seed, plies)
        if self.pooled is None:
            self.pooled = _Pooled(rt, self.policy, self.n_heads, self.d.n_actions, self.validate)
        self.pooled.drive(rt, infer)
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



_F32 = np.dtype(np.float32)


class _Pooled:
    """The Chooser's rounds: :func:`_drive_fused` with one kernel call per callback call
    (``choose_round`` of reinfors/jit/kernels/match_kernels.py routes the previous outputs,
    advances every slot and gathers the next unique rows) and the validation split in two: a
    few attribute checks in Python recognise the usual outputs — a C-contiguous float32 Q array
    of the exact shape, or a (logits, values) tuple of C-contiguous float32 arrays — whose
    finiteness the kernel checks while widening them (a non-finite value: the validator runs and
    names it); anything else goes through the validator as before.  Same rows, order, dedupe,
    predictions and errors as :func:`_drive_fused`."""

    def __init__(self, rt: Runtime, policy, n_heads: int, n_actions: int, validate) -> None:
        self.validate = validate
        self.pv = policy.output != "q"
        self.n_heads, self.n_actions = n_heads, n_actions
        self.width = n_actions + 1 if self.pv else n_heads * n_actions
        rows_all = rt["arena_rows"]
        self.buf = np.zeros((rows_all.shape[2], self.width), np.float64)  # one arena's rows
        self.uid = np.zeros(rows_all.shape[2], np.int64)  # its rows' unique indices
        self.no_q = np.zeros((0, self.width), np.float32)
        self.no_v = np.zeros(0, np.float32)
        self.no_p = np.zeros((0, self.width), np.float64)

    def drive(self, rt: Runtime, infer) -> None:
        k, validate = rt.k, self.validate
        sinfo, rows_all, ctl = rt["sinfo"], rt["arena_rows"], rt.ctl
        spans, span_n, acc, n_arenas = rt.spans, rt.span_n, rt.window_acc, rt.n_arenas
        if self.buf.shape[0] < rows_all.shape[2]:
            self.buf = np.zeros((rows_all.shape[2], self.width), np.float64)
            self.uid = np.zeros(rows_all.shape[2], np.int64)
        buf, uid, ready, raw = self.buf, self.uid, rt.ready_buf, validate.raw
        q32, v32, p64 = self.no_q, self.no_v, self.no_p
        pv, shape, width, A = self.pv, (0, self.n_heads, self.n_actions), self.width, self.n_actions
        rt._set_targets()  # the arena closes at its capacity (a reused runtime's ctl was zeroed)
        rt._queue_emitting()
        code, n, mode, out, u = -1, 0, 0, None, 0
        status, park, error = C.SI_STATUS, C.ST_PARK, C.C_ERROR
        while True:
            state, code, n, rows = k.choose_round(
                rt.E, spans, span_n, acc, sinfo, ctl, rows_all, n_arenas, status, park, error,
                code, n, uid, mode, q32, v32, p64, buf, ready, raw,
            )  # fmt: skip
            if state == 1:
                return
            if state == 4:
                validate(out, u)  # raises the validator's own error for the non-finite output
                raise KernelError("choose: the round kernel and the validator disagree on finiteness")
            if state == 2:
                rt._check_error()
            if state != 0:
                raise KernelError(f"choose: slots wait for rows but no arena is fireable ({rt._diagnose()})")
            u = len(rows)
            out = infer(rows)
            mode = 0
            if pv:
                if type(out) is tuple and len(out) == 2:
                    lg, vs = out
                    if (
                        type(lg) is np.ndarray and type(vs) is np.ndarray and lg.dtype == _F32 and vs.dtype == _F32
                        and lg.ndim == 2 and vs.ndim == 1 and lg.shape[0] == u and lg.shape[1] >= A
                        and vs.shape[0] == u and lg.flags.c_contiguous and vs.flags.c_contiguous
                    ):  # fmt: skip
                        q32, v32, mode = lg, vs, 2
            elif (
                type(out) is np.ndarray and out.dtype == _F32 and out.shape[1:] == shape[1:] and out.shape[0] == u
                and out.flags.c_contiguous
            ):  # fmt: skip
                q32, mode = out.reshape(u, width), 1
            if mode == 0:
                p64 = validate(out, u)
