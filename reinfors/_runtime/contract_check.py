"""A user game's declared sizes, verified by a guarded run before any kernel runs it.

The engine and ``rf.Env`` give a game's njit functions rows of exactly the declared sizes (the
state row of ``state_size`` words, the legal mask of ``N_ACTIONS`` bytes, the observation of
``prod(obs_shape)`` floats, ...) and, compiled without bounds checks, cannot notice a function that
writes past them: a ``state_size`` declared 4 words short silently overwrote the next slot's row.
So before a *user* game (``rf.games.custom`` / ``rf.games.from_module``) is first run, its own
functions play a few seeded random episodes here, called one by one on buffers that carry
``GUARD`` guard words after each declared row.  A guard word that changed names the function and
the row it overran: ``GameContractError`` (a ``ValueError``) with the declared and the written
size.  The built-in games are verified by their own tests and skip this.

The verdict is cached per game (its functions, parameter row and declared sizes), so a game built
again, or used by several Envs and Engines, is verified once per process.  The run calls the
user's dispatchers with the argument types the kernels use, so it compiles nothing they would not.
"""

from __future__ import annotations

import threading

import numpy as np

from reinfors.jit.games import _contract

GUARD = 64  # guard words (of the row's dtype) after every declared row
_FILL = 0xA5  # guard byte pattern
EPISODES = 2
TICKS = 200  # per episode


class GameContractError(ValueError):
    """A user game broke its declared contract (a function wrote past a declared size)."""


_verified: dict = {}
_lock = threading.Lock()


def _key(gdef) -> tuple:
    roles = _contract.REQUIRED_FUNCTIONS + _contract.OPTIONAL_FUNCTIONS
    fns = tuple(getattr(gdef.ns, r, None) for r in roles) + (gdef._encode,)
    return (fns, gdef.params.tobytes(), gdef.state_size, gdef.n_players, gdef.n_actions, gdef.obs_size,
            gdef.max_chance, gdef.max_info_key, len(gdef.reward_keys))  # fmt: skip


def verify(gdef) -> None:
    """Raise ``GameContractError`` when one of ``gdef``'s functions writes past a declared row.
    Once per game and process (a game that passed is not run again)."""
    key = _key(gdef)
    if key in _verified:
        return
    with _lock:
        if key not in _verified:
            _Run(gdef).play()
            _verified[key] = True


class _Guarded:
    """A row of ``n`` elements followed by ``GUARD`` guard elements (``view`` is the row)."""

    def __init__(self, what: str, n: int, dtype, shape=None):
        self.what, self.n = what, n
        self.buf = np.zeros(n + GUARD, dtype)
        self.buf.view(np.uint8)[n * self.buf.itemsize :] = _FILL
        flat = self.buf[:n]
        self.view = flat.reshape(shape) if shape is not None else flat

    def written(self) -> int | None:
        """The number of elements the row would need to hold what was written (None: no overrun)."""
        tail = self.buf.view(np.uint8)[self.n * self.buf.itemsize :]
        hit = np.flatnonzero(tail != _FILL)
        if hit.size == 0:
            return None
        return self.n + int(hit[-1]) // self.buf.itemsize + 1


class _Run:
    def __init__(self, d):
        self.d, self.ns, self.p = d, d.ns, d.params
        N, K = d.n_players, len(d.reward_keys)
        self.state = _Guarded("state row (state_size)", d.state_size, np.int64)
        self.copy = _Guarded("state row (state_size)", d.state_size, np.int64)
        self.mask = _Guarded("legal mask (N_ACTIONS)", d.n_actions, np.uint8)
        self.ids = _Guarded("legal id list (N_ACTIONS)", d.n_actions, np.int32)
        self.agents = _Guarded("active-agent list (n_players)", N, np.int64)
        self.actions = np.zeros(N, np.int64)
        self.amounts = _Guarded("reward amounts (n_players x len(REWARD_KEYS))", N * K, np.float64, (N, K))
        self.obs = _Guarded("observation (prod(obs_shape))", d.obs_size, np.float32)
        self.probs = _Guarded("chance probabilities (max_chance)", max(1, d.max_chance), np.float64)
        self.key = _Guarded("information-state key (max_info_key)", max(1, d.max_info_key), np.uint8)
        self.rs = np.random.default_rng(0)

    def call(self, role: str, *args, rows=()):
        """Call the game's ``role`` function and check the guards of ``rows`` (and the state)."""
        fn = self.d._encode if role == "encode" else getattr(self.ns, role)
        out = fn(self.p, *args)
        for g in (self.state, *rows):
            n = g.written()
            if n is not None:
                self._fail(role, g, n)
        return out

    def _fail(self, role, g, n):
        if g is self.state or g is self.copy:
            raise GameContractError(
                f"game {self.d.name!r}: {role}() wrote past the state row: declared state_size={g.n}, written "
                f"{n} words (the {_contract.HEADER}-word header, rf.games.STATE_HEADER, included); declare "
                f"state_size >= {n}"
            )
        raise GameContractError(
            f"game {self.d.name!r}: {role}() wrote past its {g.what}: declared {g.n} elements, written {n}"
        )

    def chance(self):
        if getattr(self.ns, "chance_pending", None) is None:
            return
        st = self.state.view
        for _ in range(4096):
            if not self.call("chance_pending", st):
                return
            m = 0
            if getattr(self.ns, "chance_uniform", None) is not None:
                m = int(self.call("chance_uniform", st))
            if m <= 0:
                m = int(self.call("chance_outcomes", st, self.probs.view, rows=(self.probs,)))
            self.call("apply_chance", st, int(self.rs.integers(max(1, m))))

    def play(self):
        d, st = self.d, self.state.view
        for _ in range(EPISODES):
            st[:] = 0
            st[_contract.HORIZON] = d.horizon
            self.call("init", st)
            self.chance()
            for _ in range(TICKS):
                if not self.tick():
                    break

    def tick(self) -> bool:
        d, st = self.d, self.state.view
        n = int(self.call("active", st, self.agents.view, rows=(self.agents,)))
        for agent in range(d.n_players):
            self.call("encode", st, agent, self.obs.view, rows=(self.obs,))
            if d.has_info_key:
                self.call("info_key", st, agent, self.key.view, rows=(self.key,))
        if getattr(self.ns, "legal_list", None) is not None and n > 0:
            self.call("legal_list", st, int(self.agents.view[0]), self.mask.view, self.ids.view,
                      rows=(self.mask, self.ids))  # fmt: skip
        if not 0 < n <= d.n_players:
            return False
        self.actions[:] = 0
        for j in range(n):
            agent = int(self.agents.view[j])
            if not 0 <= agent < d.n_players:
                return False
            self.call("legal", st, agent, self.mask.view, rows=(self.mask,))
            ids = np.flatnonzero(self.mask.view)
            if ids.size == 0:
                return False
            self.actions[agent] = ids[self.rs.integers(ids.size)]
        if getattr(self.ns, "tree_copy", None) is not None:
            self.call("tree_copy", st, self.copy.view, rows=(self.copy,))
        st[_contract.TICKS] += 1
        self.amounts.view[:] = 0.0
        self.call("step", st, self.actions, self.amounts.view, rows=(self.amounts,))
        if self.call("is_terminal", st):
            return False
        if d.horizon and st[_contract.TICKS] >= d.horizon:
            return False
        self.chance()
        if getattr(self.ns, "settle", None) is not None and self.call("settle", st, self.amounts.view,
                                                                      rows=(self.amounts,)):
            return False
        return True
