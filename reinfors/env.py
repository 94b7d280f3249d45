"""``rf.Env`` — a caller-driven single game, and its snapshots.

``Env`` is the inverse of ``Engine``: you supply each tick's actions.  It runs the game's njit
rules through the shared step semantics of the game's generated kernel module, so what an Env
does is exactly what the engine's workers do.  Python-level work here is per call (validation,
error messages, event payloads); the rules run natively.
"""

from __future__ import annotations

import struct

import numpy as np

from . import _canon
from ._runtime import budget
from ._validate import as_unsigned, refuse_pickle
from .games import GameHandle
from .jit import rng as _rng
from .jit.games._contract import DONE, RUNNING, TICKS
from .rewards import Reward
from .spaces import Box

__all__ = ["Env", "EnvSnapshot"]

_ENV_SCHEMA = 2
_ENV_MAGIC = b"RFES"
_ENV_LAYOUT = 1


_FINGERPRINTS: dict[str, str] = {}  # repr(resolved config) -> fingerprint (an Arena builds many Envs)


def _fingerprint(cfg: dict) -> str:
    """``_canon.fingerprint(cfg)``, memoised on the config's exact ``repr`` (bounded)."""
    key = repr(cfg)
    fp = _FINGERPRINTS.get(key)
    if fp is None:
        fp = _canon.fingerprint(cfg)
        if len(_FINGERPRINTS) >= 256:
            _FINGERPRINTS.clear()
        _FINGERPRINTS[key] = fp
    return fp


def _agent(env_players: int, agent) -> int:
    a = as_unsigned("agent", agent)
    if a >= env_players:
        raise ValueError(f"agent {a} out of range for a {env_players}-agent game")
    return a


class EnvSnapshot:
    """An opaque, restorable Env capture: game state row, chance RNG, terminal flag, ticks.

    ``to_bytes()`` writes the original's envelope (little-endian, no pickle)::

        b"RFES" | schema u8 (2) | fp_len u32 | fingerprint | rng u64 | done u8 | ticks u64
              | payload_len u32 | payload = layout u8 (1) + state row as int64 words

    ``from_bytes`` validates the envelope (``ValueError("invalid EnvSnapshot: …")``); the payload
    is validated against the game by ``Env.restore`` (``"invalid snapshot state: …"``).
    """

    __slots__ = ("_fingerprint", "_rng", "_done", "_ticks", "_payload")

    def __init__(self, fingerprint: str, rng: int, done: bool, ticks: int, payload: bytes):
        """Internal: ``Env.snapshot()`` and :meth:`from_bytes` build snapshots.

        Args:
            fingerprint: the source Env's composition fingerprint.
            rng: the chance RNG's state.
            done: the episode had ended.
            ticks: the episode's tick count.
            payload: the layout byte and the state row as little-endian int64 words.
        """
        self._fingerprint = fingerprint
        self._rng = int(rng)
        self._done = bool(done)
        self._ticks = int(ticks)
        self._payload = bytes(payload)

    @classmethod
    def _capture(cls, fingerprint: str, state: np.ndarray, rng: np.ndarray) -> EnvSnapshot:
        payload = bytes([_ENV_LAYOUT]) + np.ascontiguousarray(state, dtype="<i8").tobytes()
        return cls(fingerprint, int(rng[0]), bool(state[DONE] != RUNNING), int(state[TICKS]), payload)

    @property
    def fingerprint(self) -> str:
        """The composition fingerprint (equals ``Env.config_fingerprint()`` of the source Env)."""
        return self._fingerprint

    @property
    def schema_version(self) -> int:
        """The envelope's schema version (2)."""
        return _ENV_SCHEMA

    def to_bytes(self) -> bytes:
        """Serialise to the envelope in the class docstring (little-endian, no pickle).

        Returns:
            bytes: restorable with :meth:`from_bytes` in any process with the same composition.
        """
        fp = self._fingerprint.encode("utf-8")
        return b"".join(
            [
                _ENV_MAGIC,
                struct.pack("<BI", _ENV_SCHEMA, len(fp)),
                fp,
                struct.pack("<QBQI", self._rng, int(self._done), self._ticks, len(self._payload)),
                self._payload,
            ]
        )

    @staticmethod
    def from_bytes(data: bytes) -> EnvSnapshot:
        """Decode :meth:`to_bytes` output.

        The envelope is validated here; the state row is validated against the game by
        ``Env.restore``.

        Args:
            data: the bytes :meth:`to_bytes` wrote.

        Returns:
            EnvSnapshot: the decoded snapshot.

        Raises:
            TypeError: ``data`` is not ``bytes``.
            ValueError: a malformed envelope (``invalid EnvSnapshot: bad magic`` / truncated /
                trailing bytes / unsupported schema version).
        """
        if not isinstance(data, bytes):
            raise TypeError(f"argument 'data': '{type(data).__name__}' object cannot be converted to 'PyBytes'")
        r = _Reader(data, "EnvSnapshot")
        if r.take(4) != _ENV_MAGIC:
            raise ValueError("invalid EnvSnapshot: bad magic")
        (schema,) = r.unpack("<B")
        if schema != _ENV_SCHEMA:
            raise ValueError(f"invalid EnvSnapshot: unsupported schema version {schema}")
        (fp_len,) = r.unpack("<I")
        fp = r.text(fp_len)
        (rng,) = r.unpack("<Q")
        done = r.flag()
        (ticks, n) = r.unpack("<QI")
        payload = r.take(n)
        r.finish()
        return EnvSnapshot(fp, rng, done, ticks, payload)

    def _state_row(self, state_size: int) -> np.ndarray:
        """Decode the payload into a state row (``ValueError("invalid snapshot state: …")``)."""
        p = self._payload
        if not p:
            raise ValueError("invalid snapshot state: empty state payload")
        if p[0] != _ENV_LAYOUT:
            raise ValueError(
                f"invalid snapshot state: unsupported state layout version {p[0]} (expected {_ENV_LAYOUT})"
            )
        want = 1 + 8 * state_size
        if len(p) < want:
            raise ValueError(
                "invalid snapshot state: malformed state payload: Hit the end of buffer, expected more data"
            )
        if len(p) > want:
            raise ValueError(f"invalid snapshot state: {len(p) - want} trailing bytes after state payload")
        state = np.frombuffer(p, dtype="<i8", offset=1, count=state_size).astype(np.int64)
        if int(state[TICKS]) != self._ticks:
            raise ValueError(
                f"invalid snapshot state: state ticks {int(state[TICKS])} disagree with envelope ticks {self._ticks}"
            )
        if bool(state[DONE] != RUNNING) != self._done:
            raise ValueError(
                f"invalid snapshot state: derived done flag {str(bool(state[DONE] != RUNNING)).lower()} "
                f"disagrees with envelope done {str(self._done).lower()}"
            )
        return state

    def __repr__(self) -> str:
        return f"EnvSnapshot(fingerprint={self._fingerprint[:12]}…, ticks={self._ticks}, done={self._done})"


class _Reader:
    """Bounds-checked little-endian reader for snapshot envelopes."""

    def __init__(self, data: bytes, what: str):
        self.data, self.pos, self.what = data, 0, what

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"invalid {self.what}: truncated")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))

    def text(self, n: int) -> str:
        raw = self.take(n)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"invalid {self.what}: fingerprint is not utf-8") from None

    def flag(self) -> bool:
        (b,) = self.unpack("<B")
        if b > 1:
            raise ValueError(f"invalid {self.what}: done byte {b} is not a bool")
        return bool(b)

    def finish(self) -> None:
        if self.pos != len(self.data):
            raise ValueError(f"invalid {self.what}: trailing bytes")


class Env:
    """A caller-driven single-game instance: ``Env(game, reward=None, seed=0)``.

    ``reward=None`` builds a reward-free Env (``rewards`` stays None); pass ``rf.Reward(...)``
    (or ``rf.Reward()`` for the game's defaults) to get per-agent rewards after each step.
    ``seed`` (u64) seeds the chance stream (deals, food placement, random starts).

    Example::

        env = rf.Env(rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0), seed=0)
        env.step({0: 3})                       # [(agent, event), ...] of the tick
        env.legal_actions(1), env.observe(1).shape, env.rewards

    Args:
        game: a game handle (``rf.games.Connect4()``, a custom game, ...).
        reward: the reward weights, or None for no rewards.
        seed: the chance stream's seed, ``0 <= seed < 2**64``.

    Raises:
        TypeError: ``game`` is not a ``GameHandle`` or ``reward`` not a ``Reward``.
        OverflowError: a negative seed or one of 2**64 or more.
        ValueError: a reward key the game does not emit.
    """

    def __init__(self, game: GameHandle, reward: Reward | None = None, seed: int = 0):
        if not isinstance(game, GameHandle):
            raise TypeError(f"argument 'game': '{type(game).__name__}' object cannot be converted to 'GameHandle'")
        if reward is not None and not isinstance(reward, Reward):
            raise TypeError(f"argument 'reward': '{type(reward).__name__}' object cannot be converted to 'Reward'")
        seed = as_unsigned("seed", seed)
        self._game = game
        d = self._def = game._def
        self._reward = reward
        self._weights_map = None if reward is None else reward._resolve(d.reward_keys, d.reward_defaults)
        weights = self._weights_map or dict(zip(d.reward_keys, d.reward_defaults, strict=True))
        self._weights = np.array([weights[k] for k in d.reward_keys], dtype=np.float64)
        # the rows below, bounded before they (or the game's compile) are allocated; an
        # observation is allocated by each observe() (0.4.0 builds such an Env too)
        params = ", ".join(f"{k}={v!r}" for k, v in sorted(game._resolved().items()) if k not in ("encoder", "name"))
        budget.check(
            {"state row": (8 * d.state_size, "state_size"), "chance outcomes": (8 * max(1, d.max_chance), "max_chance")},
            f"an Env of {d.name}({params})", "use a smaller game",
        )  # fmt: skip
        self._k = d.kernels
        self._state = np.zeros(d.state_size, np.int64)  # [state_size] int64
        self._rng = np.zeros(_rng.RNG_WIDTH, np.uint64)  # [1] uint64 chance stream
        self._rng[0] = np.uint64(seed)  # the raw seed, as the original's SplitMix64 chance stream
        self._amounts = np.zeros((d.n_players, len(d.reward_keys)), np.float64)  # [N, keys]
        self._probs = np.zeros(max(1, d.max_chance), np.float64)  # [max_chance] scratch
        self._mask = np.zeros(d.n_actions, np.uint8)  # [A] scratch
        self._agents = np.zeros(d.n_players, np.int64)  # [N] scratch
        self._actions = np.zeros(d.n_players, np.int64)  # [N] joint action
        self._rewards: list | None = None
        self._fingerprint = _fingerprint(self.resolved_config())
        self.reset()

    # -- episode control ----------------------------------------------------------------------

    def reset(self) -> None:
        """Start a new episode (the chance stream continues; it is not re-seeded).

        An Env never truncates: the game's horizon (``truncation_horizon()``) is applied by the
        engine and the gym adapters, as in the original.
        """
        self._k.reset(self._def.params, self._state, 0, self._rng, self._probs)
        self._rewards = None

    def done(self) -> bool:
        """True once the episode ended (terminal or truncated).

        Returns:
            Whether the episode is over.
        """
        return bool(self._state[DONE] != RUNNING)

    def num_agents(self) -> int:
        """Number of agents (players) in the game.

        Returns:
            The player count.
        """
        return self._def.n_players

    def action_count(self) -> int:
        """Size of the action space (``game.action_space().n``).

        Returns:
            ``n``: actions are ids ``0 .. n - 1``.
        """
        return self._def.n_actions

    def observation_space(self) -> Box:
        """The observation space of the game's encoder (``observe`` returns its ``shape``).

        Returns:
            The encoder's ``Box``.
        """
        return self._game.observation_space()

    @property
    def ticks(self) -> int:
        """Completed steps this episode."""
        return int(self._state[TICKS])

    @property
    def rewards(self) -> list | None:
        """Per-agent rewards of the most recent step; None without a reward, before the first step
        of an episode, or right after ``restore``."""
        return None if self._rewards is None else list(self._rewards)

    def active_agents(self) -> list[int]:
        """Agents that act this tick (empty once done).

        Returns:
            The acting agents' ids, ascending.
        """
        n = self._k.active_agents(self._def.params, self._state, self._agents)
        return [int(a) for a in self._agents[:n]]

    def legal_actions(self, agent: int) -> list[int]:
        """Legal action ids of ``agent``, in the game's own order.

        Args:
            agent: ``0 <= agent < num_agents()``.

        Returns:
            list[int]: the legal ids; ``[]`` for an agent not to move and after the end.

        Raises:
            OverflowError: a negative ``agent``.
            ValueError: ``agent`` out of range.
        """
        a = _agent(self._def.n_players, agent)
        self._k.legal_mask(self._def.params, self._state, a, self._mask)
        ids = [int(i) for i in np.flatnonzero(self._mask)]
        order = getattr(self._def.ns, "legal_order", None)  # a game listing legal ids in its own order
        return order(self._def.params, self._state, ids) if order is not None and ids else ids

    def observe(self, agent: int) -> np.ndarray:
        """``agent``'s observation (works after the end too).

        Args:
            agent: ``0 <= agent < num_agents()``.

        Returns:
            numpy.ndarray: float32 of ``observation_space().shape``; the engine's rows are this,
            flattened.

        Raises:
            OverflowError: a negative ``agent``.
            ValueError: ``agent`` out of range.
        """
        a = _agent(self._def.n_players, agent)
        out = np.zeros(self._def.obs_size, np.float32)
        self._k.observe(self._def.params, self._state, a, out)
        return out.reshape(self._def.obs_shape)

    def state(self) -> dict:
        """Trusted inspection state (hidden information included — never feed it to an agent).

        Returns:
            dict: the game's own description of the state (e.g. the board, the cards, the
            player to move).
        """
        return self._def.inspect(self._state.copy())

    def information_state_key(self, agent: int) -> bytes:
        """The information-state key of ``agent`` (imperfect-information games only).

        The bytes key the CFR solvers index strategies by (``Cfr.average_strategy(key)``).

        Args:
            agent: ``0 <= agent < num_agents()``.

        Returns:
            bytes: the key of what ``agent`` knows now.

        Raises:
            ValueError: a game without information states, or ``agent`` out of range.
        """
        a = as_unsigned("agent", agent)
        if not self._def.has_info_key:
            raise ValueError("this game does not declare information states")
        if a >= self._def.n_players:
            raise ValueError(f"agent {a} out of range")
        buf = np.zeros(max(1, self._def.max_info_key), np.uint8)
        n = self._k.info_key(self._def.params, self._state, a, buf)
        return bytes(buf[:n])

    def step(self, actions: dict) -> list:
        """Advance one tick with ``{agent: action}`` for every active agent.

        Any error leaves the Env unchanged.

        Args:
            actions: ``{agent: action}`` with exactly the active agents as keys (game action
                ids, not head indices).

        Returns:
            list: the ordered ``[(agent, event)]`` trace of the tick (events as the game names
            them, e.g. ``"win"``); per-agent rewards are in :attr:`rewards` afterwards.

        Raises:
            TypeError: ``actions`` is not a dict.
            OverflowError: a negative agent or action.
            ValueError: the episode is over, an inactive agent, a missing active agent, or an
                illegal action (the message lists the legal ones).
        """
        if not isinstance(actions, dict):
            raise TypeError(f"argument 'actions': '{type(actions).__name__}' object cannot be converted to 'PyDict'")
        d = self._def
        parsed = {}
        for key, value in actions.items():
            agent = as_unsigned("actions", key)
            parsed[agent] = as_unsigned("actions", value)
        if self._state[DONE] != RUNNING:
            raise ValueError("no agents to act — the episode is over; call reset()")
        active = self.active_agents()
        for agent in parsed:
            if agent not in active:
                raise ValueError(f"agent {agent} is not active this tick; active agents: {active}")
        for agent in active:
            if agent not in parsed:
                raise ValueError(f"missing action for active agent {agent}; active agents: {active}")
        self._actions[:] = 0
        for agent in active:
            action = parsed[agent]
            self._k.legal_mask(d.params, self._state, agent, self._mask)
            if action >= d.n_actions or not self._mask[action]:
                legal = self.legal_actions(agent)  # in the game's own order, as 0.4.0 lists them
                raise ValueError(f"action {action} is illegal for agent {agent} (legal: {legal})")
            self._actions[agent] = action
        self._k.apply_step(d.params, self._state, self._actions, self._amounts, self._rng, self._probs)
        if self._weights_map is not None:
            out = np.zeros(d.n_players, np.float64)
            self._k.weigh(self._amounts, self._weights, out)
            self._rewards = [float(x) for x in out]
        return d.events(self._state.copy(), self._amounts.copy())

    # -- configuration and persistence ----------------------------------------------------------

    def resolved_config(self) -> dict:
        """``{game, reward (None without a reward), schema_version}`` — JSON-compatible.

        Returns:
            The resolved composition; ``Env`` can be rebuilt from it.
        """
        return {
            "game": self._game._resolved(),
            "reward": None if self._weights_map is None else dict(sorted(self._weights_map.items())),
            "schema_version": _ENV_SCHEMA,
        }

    def config_fingerprint(self) -> str:
        """64 lowercase hex chars over the canonical composition; equals a snapshot's fingerprint.

        Returns:
            64 lowercase hex characters.
        """
        return self._fingerprint

    def snapshot(self) -> EnvSnapshot:
        """Capture state, chance stream and ticks for exact continuation.

        Returns:
            EnvSnapshot: restore it with :meth:`restore` (here or in an Env of the same
            composition); ``to_bytes()`` serialises it without pickle.
        """
        return EnvSnapshot._capture(self._fingerprint, self._state, self._rng)

    def restore(self, snapshot: EnvSnapshot) -> None:
        """Return to ``snapshot`` (same composition only).  ``rewards`` is None until the next step.

        A rejected snapshot leaves the Env unchanged.

        Args:
            snapshot: from :meth:`snapshot` or ``EnvSnapshot.from_bytes``.

        Raises:
            TypeError: not an ``EnvSnapshot``.
            ValueError: a snapshot of another composition (fingerprints differ) or an invalid
                state row.
        """
        if not isinstance(snapshot, EnvSnapshot):
            raise TypeError(
                f"argument 'snapshot': '{type(snapshot).__name__}' object cannot be converted to 'EnvSnapshot'"
            )
        if snapshot.fingerprint != self._fingerprint:
            raise ValueError(
                f"snapshot is from a different composition (fingerprint {snapshot.fingerprint} != {self._fingerprint})"
            )
        state = snapshot._state_row(self._def.state_size)
        reason = self._def.validate_state(state)
        if reason is not None:
            raise ValueError(f"invalid snapshot state: {reason}")
        self._state[:] = state
        self._rng[0] = np.uint64(snapshot._rng)
        self._rewards = None

    def fork(self, seed: int | None = None) -> Env:
        """An independent Env at this exact point.

        Args:
            seed: None for a clone-exact copy (the same future chance stream), or a seed: the
                chance stream of ``Env(game, seed=seed)`` from here on.

        Returns:
            Env: the copy; stepping one never affects the other.

        Raises:
            OverflowError: a negative seed.
        """
        if seed is not None:
            seed = as_unsigned("seed", seed)
        other = Env.__new__(Env)
        other.__dict__.update(self.__dict__)
        for name in ("_state", "_rng", "_amounts", "_probs", "_mask", "_agents", "_actions"):
            setattr(other, name, getattr(self, name).copy())
        other._rewards = None
        if seed is not None:
            other._rng[0] = np.uint64(seed)
        return other

    def __repr__(self) -> str:
        return f"Env({self._def.name!r}, ticks={self.ticks}, done={self.done()})"

# not picklable, as 0.4.0 (tests/reliability/test_no_pickle.py)
EnvSnapshot.__reduce_ex__ = refuse_pickle
Env.__reduce_ex__ = refuse_pickle
