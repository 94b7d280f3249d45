"""The dedicated runtime of a ``choose`` call: built, filled from the envs, and reused.

A call copies every env's state row into slot ``k`` of a single-threaded :class:`Runtime` with one
arena that holds a whole round (``choose.py`` drives it).  Slot ``k`` of a call with ``seed``
starts the SplitMix64 stream ``rng.derive(seed, k, CHOOSE_STREAM)`` (:func:`streams`).  Finished
runtimes are kept per composition and batch size and reset in place for the next call (see
"runtime reuse" below): only buffers are reused, never a statistic, prediction or random state.
"""

from __future__ import annotations

import collections
import json
import threading

import numpy as np

from reinfors.jit import engine_codes as C

from . import budget
from . import composition as _composition
from .routes import PVValidator, QValidator
from .runtime import Runtime, RuntimeSpec

CHOOSE_STREAM = 0x43484F4F5345  # b"CHOOSE": the third coordinate of every choose slot stream

_LABELS = _composition.SEARCH_LABELS  # the messages' policy labels
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


# Search-tree node arrays whose stale contents are never read: every node is set up (its info,
# edges, children, statistics and state row written) before it is read, also between the
# decisions of an engine slot.  The Chooser's reset skips them (a ~1 MB memset per call).
_STALE_OK = frozenset(("t_state", "t_ni", "t_child", "t_visits", "t_ef", "t_nv", "t_legal", "t_edges", "arena_rows"))


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
        az = policy.name in ("alphazero", "gumbel_alphazero")
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
    validate = QValidator(n_heads, A) if q else PVValidator(A, _LABELS.get(policy.name, "Ppo"))
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
    spec = RuntimeSpec(
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
        cohorts=False,
    )
    rt = Runtime(d, spec)
    # Single-threaded and nothing lent to the callback (it gets a deduplicated copy), so the
    # chain needs no spare arenas: one arena of G * max_rows rows.
    rt.n_arenas = 1
    rt._alloc_routes()
    rt._ensure_capacity(1)  # model-free: one record and at most one episode per slot
    return rt
