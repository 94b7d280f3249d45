"""What one runtime is built for: a typed, frozen description of a composition's engine.

``Engine`` (``reinfors/engine.py``) and ``choose`` (``choose.py``) describe the runtime they need
as a :class:`RuntimeSpec`; ``Runtime(gdef, spec)`` allocates from it.  :func:`config_words` turns
it into the two configuration vectors every kernel reads (``cfg`` int64, ``fcfg`` float64; their
columns are named in ``reinfors/jit/engine_codes.py``).
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reinfors.jit import engine_codes as C

__all__ = ["RuntimeSpec", "config_words"]

# Search-spec keys (``composition._search_spec``) and the cfg / fcfg columns they fill.
_INT_KEYS = (("sims", C.CFG_SIMS), ("max_depth", C.CFG_MAXDEPTH), ("temperature_drop", C.CFG_TEMPDROP),
             ("maxn", C.CFG_MAXN), ("act_by", C.CFG_ACTBY), ("noise", C.CFG_NOISE),
             ("depth", C.CFG_DEPTH), ("top_k", C.CFG_TOPK), ("interior_targets", C.CFG_INTERIOR),
             ("nodes", C.CFG_NODES), ("max_rows", C.CFG_MAXROWS), ("choose", C.CFG_CHOOSE),
             ("budget", C.CFG_BUDGET), ("opponent", C.CFG_OPP), ("resample", C.CFG_RESAMPLE),
             ("samples", C.CFG_SAMPLES), ("expand", C.CFG_EXPAND),
             ("leaf_batch", C.CFG_LEAFB), ("gb_k", C.CFG_GB_K), ("gb_mixed", C.CFG_GB_MIXED),
             ("gb_rescale", C.CFG_GB_RESCALE))  # fmt: skip
_FLOAT_KEYS = (("c", C.F_CPUCT), ("temperature", C.F_TEMP), ("noise_epsilon", C.F_NOISE_EPS),
               ("noise_alpha", C.F_NOISE_ALPHA), ("outcome_weight", C.F_OW), ("beta", C.F_BETA),
               ("opp_temperature", C.F_OPP_T), ("opp_floor", C.F_OPP_F),
               ("virtual_loss", C.F_VLOSS), ("gb_scale", C.F_GB_SCALE), ("gb_cvisit", C.F_GB_CVISIT),
               ("gb_cscale", C.F_GB_CSCALE))  # fmt: skip


@dataclass(frozen=True)
class RuntimeSpec:
    """The composition one runtime serves (validated by the caller; the runtime trusts it).

    Attributes:
        policy_kind: ``engine_codes.POLICY_*`` of the composition's policy.
        learner_kind: ``engine_codes.LEARNER_*`` of its learner.
        n_games: slots (games played at once).
        seed: the engine seed (slot streams derive from it).
        batch_size: the automatic batch: rows at which arenas close for a CPU callback.
        n_threads: worker threads (the collecting thread is one of them).
        learn: per player, 1 when its records are kept.
        weights: per reward key of the game, its weight.
        width: prediction columns a routed row receives.
        n_routes: 1 (a shared callback) or one route per player.
        pad: pad every call to ``batch_size`` rows.
        n_heads: Q heads (bootstrapped DQN), 1 otherwise.
        n_step: the learner's n-step horizon.
        epsilon: epsilon-greedy exploration (Q policies).
        gamma: discount.
        lam: GAE lambda (PPO).
        bootstrap_p: per-head record mask probability (bootstrapped DQN).
        search: the tree-search geometry and knobs (``composition._search_spec``) for the search
            policies; ``None`` for the model-free ones.  Held read-only.
        infer_cache: entries per inference-cache partition (0 = off).
        start_buffer: ``(capacity, p_fresh)`` for reached-state starts, or ``None`` (off).
        user_batch: ``batch_size`` came from the user (a hard cap on a call).
        cohorts: calls are cohorts' rounds (``cohorts.py``); False for a runtime that drives its
            own rounds (``PolicyHandle.choose``: one arena a round, single-threaded).
    """

    policy_kind: int
    learner_kind: int
    n_games: int
    seed: int
    batch_size: int
    n_threads: int
    learn: tuple[int, ...]
    weights: tuple[float, ...]
    width: int
    n_routes: int = 1
    pad: bool = False
    n_heads: int = 1
    n_step: int = 1
    epsilon: float = 0.0
    gamma: float = 0.99
    lam: float = 0.95
    bootstrap_p: float = 1.0
    search: Mapping[str, Any] | None = field(default=None)
    infer_cache: int = 0
    start_buffer: tuple[int, float] | None = None
    user_batch: bool = False
    cohorts: bool = True

    def __post_init__(self) -> None:
        # Sequences become tuples and the search spec a read-only view: the spec is a value.
        object.__setattr__(self, "learn", tuple(int(x) for x in np.asarray(self.learn).ravel()))
        object.__setattr__(self, "weights", tuple(float(x) for x in np.asarray(self.weights, np.float64).ravel()))
        if self.search is not None:
            object.__setattr__(self, "search", types.MappingProxyType(dict(self.search)))
        if self.start_buffer is not None:
            cap, p_fresh = self.start_buffer
            object.__setattr__(self, "start_buffer", (int(cap), float(p_fresh)))

    @property
    def start_capacity(self) -> int:
        """Reached states each slot keeps (``ceil(capacity / n_games)``; 0 when off)."""
        if self.start_buffer is None:
            return 0
        return min(-(-self.start_buffer[0] // self.n_games), 2**62)  # u64 capacity: fits cfg


def config_words(spec: RuntimeSpec, gdef, n_routes: int, n_arenas: int, capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """``(cfg, fcfg)``: the int64 and float64 configuration vectors of a runtime for ``spec`` on
    game ``gdef`` with the given route geometry (``EngineState._size_routes``)."""
    G, N, A, O = spec.n_games, gdef.n_players, gdef.n_actions, gdef.obs_size
    cfg = np.zeros(C.CFG_SIZE, np.int64)
    cfg[C.CFG_G], cfg[C.CFG_N], cfg[C.CFG_A], cfg[C.CFG_O] = G, N, A, O
    cfg[C.CFG_ROUTES], cfg[C.CFG_ARENAS], cfg[C.CFG_CAP] = n_routes, n_arenas, capacity
    cfg[C.CFG_POLICY], cfg[C.CFG_LEARNER] = spec.policy_kind, spec.learner_kind
    cfg[C.CFG_HEADS], cfg[C.CFG_NSTEP], cfg[C.CFG_HORIZON] = spec.n_heads, spec.n_step, gdef.horizon
    cfg[C.CFG_W], cfg[C.CFG_SIMUL], cfg[C.CFG_KEYS] = spec.width, int(gdef.simultaneous), len(spec.weights)
    cfg[C.CFG_CHANCE] = gdef.max_chance
    cfg[C.CFG_CACHE] = spec.infer_cache
    cfg[C.CFG_SB] = spec.start_capacity
    fcfg = np.zeros(C.FCFG_SIZE, np.float64)
    fcfg[C.F_EPSILON], fcfg[C.F_GAMMA], fcfg[C.F_LAM] = spec.epsilon, spec.gamma, spec.lam
    fcfg[C.F_BOOTSTRAP_P] = spec.bootstrap_p
    fcfg[C.F_PFRESH] = 1.0 if spec.start_buffer is None else spec.start_buffer[1]
    sp = spec.search or {}
    for key, col in _INT_KEYS:
        cfg[col] = int(sp.get(key, 0))
    for key, col in _FLOAT_KEYS:
        fcfg[col] = float(sp.get(key, 0.0))
    return cfg, fcfg
