"""``GameDef``: everything the runtime knows about one parameterised game, resolved once.

A game is described by a module (or any namespace) with the exports documented in
``reinfors/jit/games/tictactoe.py``.  ``GameDef.from_namespace`` checks those exports, calls the
Python-side layout functions once for the parameter row, and generates the game's kernel module
lazily (first use), so building handles never compiles anything.
"""

from __future__ import annotations

import math
import threading
import types

import numpy as np

from reinfors.jit.games import _contract

from . import codegen, contract_check


class GameDef:
    """Resolved description of one game at one parameter row (immutable after construction)."""

    def __init__(self, ns, params: np.ndarray, *, encode=None, obs_shape=None, low=0.0, high=1.0, head_map=None):
        self.ns = ns
        self.name = str(ns.NAME)
        self.params = np.ascontiguousarray(params, dtype=np.int64)
        self.params.setflags(write=False)
        p = self.params
        self.n_actions = int(ns.N_ACTIONS)
        self.simultaneous = bool(getattr(ns, "SIMULTANEOUS", False))
        self.reward_keys = tuple(str(k) for k in ns.REWARD_KEYS)
        self.reward_defaults = tuple(float(v) for v in ns.REWARD_DEFAULTS)
        if len(self.reward_keys) != len(self.reward_defaults) or not self.reward_keys:
            raise ValueError(f"game {self.name!r}: REWARD_KEYS and REWARD_DEFAULTS must be non-empty and equally long")
        self.n_players = int(ns.n_players(p))
        self.state_size = int(ns.state_size(p))
        self.obs_shape = tuple(int(d) for d in (obs_shape if obs_shape is not None else ns.obs_shape(p)))
        self.obs_size = int(math.prod(self.obs_shape))
        self.horizon = int(ns.horizon(p)) if hasattr(ns, "horizon") else 0
        public = getattr(ns, "truncation_horizon", None)
        self.truncation = public(p) if public is not None else (self.horizon or None)
        self.max_chance = int(ns.max_chance(p)) if hasattr(ns, "max_chance") else 0
        self.has_chance = getattr(ns, "chance_pending", None) is not None
        # CHANCE_IN_STEP: chance can be pending after a step (dice, food), not only at reset (a
        # deal, a start cell).  Tree searches build chance nodes only for such games; a game with
        # chance that does not say is assumed to have in-step chance.
        self.chance_in_step = self.has_chance and bool(getattr(ns, "CHANCE_IN_STEP", True))
        self.has_info_key = getattr(ns, "info_key", None) is not None
        self.max_info_key = int(ns.max_info_key(p)) if self.has_info_key else 0
        self.low, self.high = float(low), float(high)
        if self.n_players < 1 or self.n_actions < 1 or self.obs_size < 1:
            raise ValueError(f"game {self.name!r}: n_players, N_ACTIONS and the observation size must be >= 1")
        if self.state_size <= _contract.HEADER:
            raise ValueError(f"game {self.name!r}: state_size must exceed the {_contract.HEADER}-word header")
        if self.has_chance and self.max_chance < 1:
            raise ValueError(f"game {self.name!r}: a game with chance must declare max_chance(params) >= 1")
        self._encode = encode if encode is not None else ns.encode
        # LEGAL_RANKS: the legal masks hold positions in the game's legal order (_contract.py).
        self.legal_ranks = bool(getattr(ns, "LEGAL_RANKS", False))
        # The encoder's (head_index, game_action) njit pair when its head frame is not the
        # action frame (relative_chess), else None.
        self.head_map = head_map
        # A user game (rf.games.custom / from_module): its declared sizes are verified by a
        # guarded run before any kernel runs it (contract_check.py).
        self.user = False
        self._kernels: dict[tuple[str, bool], types.ModuleType] = {}
        self._lock = threading.Lock()

    @classmethod
    def check_namespace(cls, ns) -> None:
        """Raise ``TypeError`` naming the first missing export of a game namespace."""
        for attr in (
            _contract.REQUIRED_CONSTANTS + _contract.REQUIRED_FUNCTIONS + ("n_players", "state_size", "obs_shape")
        ):
            if getattr(ns, attr, None) is None:
                raise TypeError(
                    f"game definition is missing the required export {attr!r} (see reinfors/jit/games/tictactoe.py)"
                )
        chance = [getattr(ns, r, None) is not None for r in ("chance_pending", "chance_outcomes", "apply_chance")]
        if any(chance) and not all(chance):
            raise TypeError("a game with chance must export chance_pending, chance_outcomes and apply_chance together")
        for role in _contract.REQUIRED_FUNCTIONS + _contract.OPTIONAL_FUNCTIONS:
            fn = getattr(ns, role, None)
            if fn is not None and not hasattr(fn, "py_func"):
                raise TypeError(f"game export {role!r} must be a numba.njit function, got {type(fn).__name__}")

    @property
    def kernels(self) -> types.ModuleType:
        """The generated kernel module for this game (compiled or loaded from cache on first call)."""
        return self.kernels_for("modelfree")

    def kernels_for(self, family: str, leaf_batch: bool = False) -> types.ModuleType:
        """The kernel module of ``family`` (one of ``codegen.FAMILIES``) for this game; with
        ``leaf_batch`` its leaf-batched tree rounds compiled in."""
        if self.user:
            contract_check.verify(self)  # GameContractError before any kernel writes a row
        key = (family, bool(leaf_batch))
        k = self._kernels.get(key)
        if k is None:
            with self._lock:
                k = self._kernels.get(key)
                if k is None:
                    fns = {role: getattr(self.ns, role, None) for role in codegen.ROLES}
                    fns["encode"] = self._encode
                    fns["head_index"] = None if self.head_map is None else self.head_map[0]
                    k = self._kernels[key] = codegen.kernel_module(
                        self.name,
                        fns,
                        self.n_actions,
                        family,
                        simultaneous=self.simultaneous,
                        chance_in_step=self.chance_in_step,
                        legal_ranks=self.legal_ranks,
                        start_buffer=reached_state_starts(self.name),
                        leaf_batch=leaf_batch,
                    )
        return k

    def head_table(self) -> np.ndarray | None:
        """The encoder's head map tabulated, ``[n_players, n_actions] int64`` (``[p, a]`` = head
        index of action ``a`` for agent ``p``), or None for an identity head frame."""
        if self.head_map is None:
            return None
        t = getattr(self, "_head_table", None)
        if t is None:
            fn = self.head_map[0]
            t = np.array([[fn(a, p) for a in range(self.n_actions)] for p in range(self.n_players)], np.int64)
            t.setflags(write=False)
            self._head_table = t
        return t

    # -- Python-side helpers with safe fallbacks for user games ---------------------------------

    def inspect(self, state) -> dict:
        fn = getattr(self.ns, "inspect", None)
        if fn is None:
            return {"state": [int(x) for x in state[_contract.HEADER :]], "done": bool(state[_contract.DONE] != 0)}
        return fn(self.params, state)

    def events(self, state, amounts) -> list:
        fn = getattr(self.ns, "events", None)
        if fn is not None:
            return fn(self.params, state, amounts)
        out = []
        for agent in range(self.n_players):
            for k, key in enumerate(self.reward_keys):
                if amounts[agent, k] != 0.0:
                    out.append((agent, {key: float(amounts[agent, k])}))
        return out

    def validate_state(self, state) -> str | None:
        """``None`` when ``state`` is a consistent row for this game, else the reason."""
        if state.shape != (self.state_size,):
            return f"{state.size} state words disagree with this game's {self.state_size}"
        if state[_contract.DONE] not in (_contract.RUNNING, _contract.TERMINAL, _contract.TRUNCATED):
            return f"done word {int(state[_contract.DONE])} out of range"
        if state[_contract.TICKS] < 0:
            return "negative tick counter"
        if state[_contract.HORIZON] not in (0, self.horizon):
            return f"horizon {int(state[_contract.HORIZON])} disagrees with the game's {self.horizon}"
        h = int(state[_contract.HORIZON])
        if h and state[_contract.TICKS] > h:
            return f"ticks {int(state[_contract.TICKS])} exceed the horizon {h}"
        if state[_contract.DONE] == _contract.TRUNCATED and state[_contract.TICKS] != h:
            return "truncated flag set before the horizon"
        fn = getattr(self.ns, "validate_state", None)
        return None if fn is None else fn(self.params, state)


def reached_state_starts(name: str) -> bool:
    """Whether the catalogue lists ``start_buffer`` support for game ``name`` (user games: no;
    the Engine refuses ``start_buffer`` by the same rule)."""
    from reinfors.catalog import GAMES

    info = GAMES.get(name)
    return bool(info is not None and info.reached_state_starts)
