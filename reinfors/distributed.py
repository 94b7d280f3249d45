"""Ray collectors feeding one learner, surviving actor and node faults without changing a record
(``pip install reinfors[ray]``).

:class:`Collectors` starts ``n_actors`` Ray actors.  Each owns one :class:`~reinfors.Engine`
built with :func:`~reinfors.engine_from_config` from a resolved config, so only JSON crosses the
wire to build it; actor ``i`` runs with seed ``config["engine"]["seed"] + i`` (distinct record
streams).  The learner publishes weights with :meth:`Collectors.set_weights` (one ``ray.put``;
actors receive the object reference and build their callback with ``infer_factory(weights)``),
and iterates ``(actor_id, version, batch)`` as batches finish, in completion order (or
round-robin with ``ordered=True``)::

    import ray, reinfors as rf
    from reinfors.distributed import Collectors

    ray.init(num_cpus=4)
    with Collectors(engine.resolved_config(), make_infer, n_actors=4, collect_size=512) as col:
        col.set_weights(net.weights())
        for actor_id, version, batch in col:
            net.train_step(batch)
            col.set_weights(net.weights())

Versions: the first ``set_weights`` is version 0 and each later call adds one.  Before a collect
under version ``v`` an actor calls ``Engine.weights_updated()`` until its engine's weights
generation is ``v``, so the generation *is* the learner's version: ``batch.weights_generations``
holds, per record, the learner version its decision was inferred under (records decided in an
earlier collect and delivered in this one keep their older version), and ``version`` is the
weights version the collect ran under.  Lag of a record = the learner's current version minus its
stamp.

Windows and faults.  A *window* is one ``Engine.collect(collect_size, infer)`` of one actor under
one weights version.  The driver keeps, per actor, the windows submitted and not yet delivered
(at most ``max_in_flight``; each with its version and weights reference) and the engine snapshot
taken by the actor right after the last window it delivered: every window returns the snapshot of
its end beside its batch, in the same object, as the snapshot's NumPy arrays plus a small dict
(see :func:`snapshot_to_wire`: Ray moves the arrays through the object store without a copy on
the same node, where ``EngineSnapshot.to_bytes()`` would join and digest them on every window; a
checkpoint from :meth:`Collectors.snapshot` holds ``to_bytes()`` bytes).  When an actor
dies (its process exits, ``ray.kill``, its node is removed, its result object is lost) the driver
starts a new actor from that snapshot (on another node when the actor's pinned resources are gone
with its node) and submits the lost windows again, each with the version and weights it had.  A
window is a function of the engine state at its start, the weights and the version, so the
batches the learner receives from that actor are exactly those of a run without the fault: no
record lost or duplicated, the same ``weights_generations``.  Each restart warns
(:class:`CollectorRestartWarning`, naming the actor); more than ``max_restarts`` restarts of one
actor raise :class:`CollectorError`.  An exception raised *by* the actor's code (building the
engine, ``infer_factory``, the callback) is not a fault but a bug that would recur: it raises
:class:`CollectorError` at once.

Wire format: an actor returns the batch as plain NumPy arrays plus a dict (batch type name,
telemetry) and the snapshot as arrays plus a dict; the learner rebuilds the batch object.  No reinfors object
is ever pickled (Ray serialises the arrays; ``infer_factory`` and the weights travel by Ray's own
serialisation, so ``infer_factory`` must be a function Ray can ship — module-level in an
importable module, or defined in ``__main__`` / a local scope — and must not capture reinfors
objects).  A restarted actor rebuilds its callback with ``infer_factory(weights)``: the callback
must be a function of the weights and its rows only (the engine's contract already), not of
state kept across calls.
"""

from __future__ import annotations

import atexit
import json
import warnings
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from . import batches as _batches
from .snapshot import EngineSnapshot

_AnyBatch = _batches.TreeStrapBatch | _batches.DqnBatch | _batches.AlphaZeroBatch | _batches.PpoBatch

__all__ = [
    "Collectors",
    "CollectorError",
    "CollectorRestartWarning",
    "batch_from_wire",
    "batch_to_wire",
    "snapshot_from_wire",
    "snapshot_to_wire",
]

_BATCH_TYPES = {
    cls.__name__: cls
    for cls in (_batches.TreeStrapBatch, _batches.DqnBatch, _batches.AlphaZeroBatch, _batches.PpoBatch)
}
_U64 = 1 << 64
SNAPSHOT_FORMAT = "reinfors.distributed.Collectors/1"


class CollectorError(RuntimeError):
    """A collector actor failed; ``actor_id`` names it and ``__cause__`` is its exception.

    Args:
        actor_id: the failed actor's index.
        message: what failed.
    """

    def __init__(self, actor_id: int, message: str):
        super().__init__(message)
        self.actor_id = actor_id


class CollectorRestartWarning(RuntimeWarning):
    """A collector actor died and was restarted from its last snapshot (the message names the
    actor, the cause, the restart count and the windows run again)."""


def _ray():
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("reinfors.distributed needs Ray: pip install 'reinfors[ray]'") from exc
    return ray


def _faults(ray) -> tuple[type, ...]:
    """The Ray errors that mean "the actor (or its result) is gone", as opposed to an exception
    raised by the actor's own code."""
    ex = ray.exceptions
    names = ("RayActorError", "ObjectLostError", "WorkerCrashedError", "NodeDiedError", "ActorUnschedulableError")
    return tuple(getattr(ex, n) for n in names if hasattr(ex, n))


def batch_to_wire(batch: _AnyBatch) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Take an engine batch apart into what crosses Ray instead of the batch object.

    Args:
        batch: a ``TreeStrapBatch``, ``DqnBatch``, ``AlphaZeroBatch`` or ``PpoBatch``.

    Returns:
        tuple: ``(arrays, meta)``: the batch's array fields by name, and ``{"type": class name,
        "telemetry": dict}``.

    Raises:
        TypeError: not an engine batch.
    """
    cls = type(batch)
    if cls.__name__ not in _BATCH_TYPES or _BATCH_TYPES[cls.__name__] is not cls:
        raise TypeError(f"expected an engine batch, got {cls.__name__}")
    arrays = {name: getattr(batch, name) for name in cls._FIELDS if name != "telemetry"}
    return arrays, {"type": cls.__name__, "telemetry": batch.telemetry}


def batch_from_wire(arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> _AnyBatch:
    """Rebuild the batch :func:`batch_to_wire` took apart.

    Args:
        arrays: the array fields by name.
        meta: ``{"type": batch class name, "telemetry": dict}``.

    Returns:
        The engine batch of that type.

    Raises:
        ValueError: an unknown batch type, or missing / unexpected fields.
    """
    name = meta.get("type")
    cls = _BATCH_TYPES.get(name)
    if cls is None:
        raise ValueError(f"unknown batch type {name!r}")
    want = set(cls._FIELDS) - {"telemetry"}
    if set(arrays) != want:
        raise ValueError(f"{name} fields {sorted(set(arrays) ^ want)} missing or unexpected")
    return cls(telemetry=dict(meta["telemetry"]), **{k: np.asarray(v) for k, v in arrays.items()})


def snapshot_to_wire(snap: EngineSnapshot) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Take an ``EngineSnapshot`` apart into what crosses Ray on every window: ``(meta, arrays)``.

    Args:
        snap: an ``EngineSnapshot`` (``Engine.snapshot()``).

    Returns:
        tuple: ``({"fingerprint", "generation", "policy_version", "header"}, arrays by name)``.

    Raises:
        TypeError: not an ``EngineSnapshot``.
    """
    if not isinstance(snap, EngineSnapshot):
        raise TypeError(f"expected an EngineSnapshot, got {type(snap).__name__}")
    meta = {
        "fingerprint": snap.fingerprint,
        "generation": snap.weights_generation,
        "policy_version": snap.policy_version,
        "header": snap._header,
    }
    return meta, dict(snap._arrays)


def snapshot_from_wire(meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> EngineSnapshot:
    """Rebuild the ``EngineSnapshot`` :func:`snapshot_to_wire` took apart, validated as
    ``EngineSnapshot.from_bytes`` validates bytes (then ``Engine.restore`` checks it against the
    engine).

    Args:
        meta: the dict of :func:`snapshot_to_wire`.
        arrays: its arrays.

    Returns:
        The ``EngineSnapshot``.

    Raises:
        ValueError: ``"invalid EngineSnapshot: …"`` on anything malformed.
    """
    from . import snapshot as _snapshot

    try:
        fp, gen, pv, header = (meta[k] for k in ("fingerprint", "generation", "policy_version", "header"))
    except (KeyError, TypeError):
        raise ValueError(
            "invalid EngineSnapshot: wire meta must hold fingerprint, generation, policy_version, header"
        ) from None
    if not isinstance(fp, str) or not _snapshot._is_fingerprint(fp):
        raise ValueError("invalid EngineSnapshot: fingerprint is not 64 lowercase hex chars")
    if isinstance(gen, bool) or not isinstance(gen, int) or not 0 <= gen < _U64:
        raise ValueError(f"invalid EngineSnapshot: generation must be a u64, got {gen!r}")
    if pv is not None and not isinstance(pv, str):
        raise ValueError("invalid EngineSnapshot: policy_version must be a str or None")
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    for name, a in arrays.items():
        if name not in _snapshot._LAYOUT:
            raise ValueError(f"invalid EngineSnapshot: unknown array {name!r}")
        code, ndim, _ = _snapshot._LAYOUT[name]
        if a.dtype != _snapshot._DTYPES[code] or a.ndim != ndim:
            raise ValueError(f"invalid EngineSnapshot: array {name!r} must have dtype {_snapshot._DTYPES[code]}")
    _snapshot._check_header(header, fp, arrays)
    return _snapshot.EngineSnapshot._make(fp, gen, pv, header, arrays)


def _as_snapshot(snapshot):
    """``None`` (the seed state), ``EngineSnapshot.to_bytes()`` bytes, or a wire pair."""
    import reinfors as rf

    if snapshot is None or isinstance(snapshot, rf.EngineSnapshot):
        return snapshot
    if isinstance(snapshot, bytes):
        return rf.EngineSnapshot.from_bytes(snapshot)
    return snapshot_from_wire(*snapshot)


class _CollectorActor:
    """The body of one Ray actor: an Engine from the config's JSON (restored from a snapshot
    when the actor replaces a dead one) and the callback of the current weights version."""

    def __init__(self, config_json: str, infer_factory, collect_size: int, actor_id: int, snapshot, snapshots: bool):
        self.config_json = config_json
        self.factory = infer_factory
        self.collect_size = collect_size
        self.actor_id = actor_id
        self.snapshots = snapshots
        self.restore(snapshot)

    def restore(self, snapshot) -> None:
        """Start over from ``snapshot`` (``EngineSnapshot.to_bytes()`` bytes or a
        :func:`snapshot_to_wire` pair; ``None``: the seed state): a new engine, restored, and no
        callback until the next collect."""
        import reinfors as rf

        self.engine = rf.engine_from_config(json.loads(self.config_json))
        self.generation = 0  # the engine's weights generation == learner version
        snap = _as_snapshot(snapshot)
        if snap is not None:
            self.engine.restore(snap)
            self.generation = snap.weights_generation
        self.version = None  # learner version of the current callback
        self.infer = None

    def ready(self) -> str:
        """The id of the node this actor runs on (a round trip: the engine is built)."""
        import ray

        return ray.get_runtime_context().get_node_id()

    def warm(self) -> int:
        """Compile (or load) every kernel this actor's engine runs, into the on-disk cache,
        before the other actors start (``Collectors(warm=True)``).  Returns the number of kernels
        gone through."""
        from reinfors._runtime import compile_helper

        return compile_helper.precompile(self.engine)

    def collect(self, weights, version: int):
        """One ``Engine.collect(collect_size, infer)`` under learner ``version`` (Ray resolved
        the weights reference).  Returns ``(version, arrays, meta, snapshot)``: ``snapshot`` is
        the engine's state after the window as a :func:`snapshot_to_wire` pair (``None``
        without snapshots)."""
        if version != self.version:
            self.infer = self.factory(weights)
            self.version = version
        while self.generation < version:  # the generation follows the learner's version
            self.engine.weights_updated()
            self.generation += 1
        batch = self.engine.collect(self.collect_size, self.infer)
        arrays, meta = batch_to_wire(batch)
        snap = snapshot_to_wire(self.engine.snapshot()) if self.snapshots else None
        return version, arrays, meta, snap


class _Window:
    """One submitted collect: its result reference and what re-running it needs."""

    __slots__ = ("ref", "weights_ref", "version")

    def __init__(self, ref, weights_ref, version: int):
        self.ref = ref
        self.weights_ref = weights_ref
        self.version = version


_LIVE: weakref.WeakSet = weakref.WeakSet()
_ATEXIT = []


def _close_all() -> None:
    """At interpreter exit: close every open Collectors (kills their actors) before Ray's own
    shutdown hook runs (atexit runs hooks last-registered first; ours registers after ray.init)."""
    for col in list(_LIVE):
        try:
            col.close()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


def _check_int(label: str, v, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{label} must be an int, got {type(v).__name__}")
    if v < lo:
        raise ValueError(f"{label} must be >= {lo}, got {v}")
    return int(v)


class Collectors:
    """``n_actors`` Ray actors collecting with one Engine each, feeding one learner.

    Args:
        config: a resolved engine config (``Engine.resolved_config()``; it must be
            JSON-serialisable).  Actor ``i`` runs with ``engine.seed + i`` (mod 2**64).
        infer_factory: ``infer_factory(weights) -> infer``: builds the engine callback (a
            callable, or one per player) from the learner's weights; called in an actor whenever
            a new version arrives (and in a restarted actor).
        n_actors: collector actors (>= 1).
        collect_size: record floor of every window (>= 1; ``Engine.collect``'s ``n_records``).
        num_cpus: Ray CPUs reserved per actor.
        actor_options: further ``ray.remote`` options of every actor (e.g.
            ``{"num_gpus": 0.25}``).
        warm: compile the kernels once, in the first actor, before the others start (they then
            load them from the on-disk cache instead of each compiling the same kernels; actors
            share the cache on one machine, or across machines through ``cache_dir``), then wait
            until every actor has built its engine and loaded its kernels, so no actor starts
            ahead and a broken config fails here.  ``False`` starts every actor at once and returns (a cache baked into the
            image with ``python -m reinfors warmup`` needs no warm-up).
        cache_dir: a cache root every actor uses (``REINFORS_CACHE_DIR`` of the actors, e.g. a
            shared volume); default: each actor's own default cache.
        max_restarts: restarts allowed per actor over the collectors' life (>= 0; -1: no limit).
            0 turns fault tolerance off: no snapshots are taken and a dead actor raises
            :class:`CollectorError` at once.
        max_in_flight: windows submitted to one actor and not yet delivered to the learner
            (>= 1).  1: an actor collects only while the learner waits for it or trains; 2 lets
            it start the next window at once (with the weights current when it was submitted).
        ordered: deliver batches round-robin (actor 0, 1, …, n-1, 0, …) instead of in
            completion order.  The learner's whole sequence of batches — actor, version, records
            — is then a function of the seeds and of the learner's own calls, never of timing,
            so faults and resumes reproduce it exactly; the learner waits for the slowest actor.
        actor_resources: per actor, Ray custom resources that pin it (e.g.
            ``[{"node_a": 1}, {"node_b": 1}]`` with nodes started with ``--resources``).  A
            restarted actor asks for the same resources unless no live node offers them any more
            (its node is gone): it then starts wherever Ray places it.

    Raises:
        TypeError: ``config`` is not a JSON-serialisable dict, ``infer_factory`` is not callable,
            or an int / bool / resources parameter has the wrong type.
        ValueError: ``n_actors``, ``collect_size`` or ``max_in_flight`` below 1,
            ``max_restarts`` below -1, or ``actor_resources`` not one dict of non-negative
            numbers per actor.
        ImportError: Ray is not installed (``pip install 'reinfors[ray]'``).
        CollectorError: with ``warm``, an actor failed to build its engine or compile it (the
            collectors are closed then).

    Uses the running Ray (call ``ray.init`` first to choose the cluster; otherwise Ray starts a
    local one).  Iteration yields ``(actor_id, version, batch)``; every actor with fewer than
    ``max_in_flight`` windows in flight starts its next window when the learner asks for the next
    batch, with the weights current then (so a learner that trains and calls
    :meth:`set_weights` between batches hands those actors the new weights; the others finish the
    windows they are running).  ``close()`` (or leaving a ``with`` block, Ctrl-C included, or the
    interpreter's exit) stops every actor.
    """

    def __init__(
        self,
        config: Mapping,
        infer_factory: Callable,
        n_actors: int,
        collect_size: int,
        *,
        num_cpus: float = 1,
        actor_options: Mapping | None = None,
        warm: bool = True,
        cache_dir: str | None = None,
        max_restarts: int = 3,
        max_in_flight: int = 1,
        ordered: bool = False,
        actor_resources: Sequence[Mapping[str, float]] | None = None,
    ):
        self._closed = True  # until the actors exist (close() is safe on a half-built object)
        self._actors: list = []
        if not isinstance(config, Mapping):
            raise TypeError(f"config must be a dict (a resolved engine config), got {type(config).__name__}")
        if not callable(infer_factory):
            raise TypeError("infer_factory must be callable: infer_factory(weights) -> infer")
        n_actors = _check_int("n_actors", n_actors, 1)
        collect_size = _check_int("collect_size", collect_size, 1)
        self._max_restarts = _check_int("max_restarts", max_restarts, -1)
        self._max_in_flight = _check_int("max_in_flight", max_in_flight, 1)
        try:
            base = json.loads(json.dumps(config))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"config must be JSON-serialisable (only JSON crosses the wire): {exc}") from exc
        for label, v in (("warm", warm), ("ordered", ordered)):
            if not isinstance(v, bool):
                raise TypeError(f"{label} must be a bool, got {type(v).__name__}")
        if cache_dir is not None and not isinstance(cache_dir, str):
            raise TypeError(f"cache_dir must be a str or None, got {type(cache_dir).__name__}")
        if isinstance(num_cpus, bool) or not isinstance(num_cpus, (int, float)) or not num_cpus >= 0:
            raise ValueError(f"num_cpus must be a number >= 0, got {num_cpus!r}")
        if actor_options is not None and not isinstance(actor_options, Mapping):
            raise TypeError(f"actor_options must be a dict or None, got {type(actor_options).__name__}")
        self._pins = _check_resources(actor_resources, n_actors)
        ray = _ray()
        engine = dict(base.get("engine") or {})
        seed = engine.get("seed") or 0
        opts = {"num_cpus": num_cpus, **dict(actor_options or {})}
        if cache_dir is not None:
            runtime_env = dict(opts.get("runtime_env") or {})
            runtime_env["env_vars"] = {**dict(runtime_env.get("env_vars") or {}), "REINFORS_CACHE_DIR": cache_dir}
            opts["runtime_env"] = runtime_env
        self._ray = ray
        self._faults = _faults(ray)
        self._opts = opts
        self._factory = infer_factory
        self._collect_size = collect_size
        self._ordered = ordered
        self._snapshots = self._max_restarts != 0
        self._configs = [
            json.dumps(dict(base, engine=dict(engine, seed=(int(seed) + i) % _U64))) for i in range(n_actors)
        ]
        self._weights_ref = None
        self._version = -1
        self._queue: list[deque] = [deque() for _ in range(n_actors)]  # windows in flight, oldest first
        self._snap: list = [None] * n_actors  # engine state at the start of queue[i][0] (wire pair or bytes)
        self._delivered = [0] * n_actors  # windows delivered per actor
        self._restarts = [0] * n_actors
        self._turn = 0  # the next actor to deliver, with ordered
        self._closed = False
        _LIVE.add(self)
        if not _ATEXIT:
            atexit.register(_close_all)
            _ATEXIT.append(True)
        for i in range(n_actors):
            self._actors.append(self._start(i, None, self._pins[i]))
            if i == 0 and warm:
                # One actor compiles; the others, started after it, load its kernels from the cache.
                self._get_or_fail(0, self._actors[0].warm.remote())
        if warm:  # the others load the kernels (from the cache actor 0 filled), all at once
            refs = [a.warm.remote() for a in self._actors[1:]]
            for i, ref in enumerate(refs, 1):
                self._get_or_fail(i, ref)

    def _start(self, i: int, snapshot, pins: Mapping | None):
        """A new actor ``i`` (from ``snapshot``: wire pair, bytes, or ``None``: the seed state)."""
        opts = dict(self._opts)
        if pins:
            opts["resources"] = {**dict(opts.get("resources") or {}), **pins}
        remote = self._ray.remote(**opts)(_CollectorActor)
        return remote.remote(self._configs[i], self._factory, self._collect_size, i, snapshot, self._snapshots)

    def _get_or_fail(self, i: int, ref):
        try:
            return self._ray.get(ref)
        except Exception as exc:  # noqa: BLE001 - re-raised named, like a collect's failure
            raise self._fail(i, exc) from (getattr(exc, "cause", None) or exc)

    def _fail(self, i: int, exc: BaseException, note: str = "") -> CollectorError:
        """Close, and the :class:`CollectorError` naming actor ``i`` (the caller raises it)."""
        cause = getattr(exc, "cause", None) or exc
        self.close()
        return CollectorError(i, f"collector actor {i} failed{note}: {type(cause).__name__}: {cause}")

    @property
    def n_actors(self) -> int:
        """Collector actors still running (0 after :meth:`close`)."""
        return len(self._actors)

    @property
    def version(self) -> int:
        """The learner's current weights version (-1 before the first :meth:`set_weights`)."""
        return self._version

    @property
    def restarts(self) -> list[int]:
        """Restarts so far, per actor."""
        return list(self._restarts)

    @property
    def in_flight(self) -> list[int]:
        """Windows submitted and not yet delivered, per actor (each at most ``max_in_flight``)."""
        return [len(q) for q in self._queue] if not self._closed else [0] * len(self._queue)

    def set_weights(self, weights: Any) -> int:
        """Publish new weights to the actors.

        Windows already submitted run under the weights they were submitted with; each actor
        picks the new version up at its next window.  The weights go to Ray's object store once
        (one ``ray.put``); a version is released once no window in flight needs it.

        Args:
            weights: any object Ray can serialise (NumPy arrays travel zero-copy through the
                object store); handed to ``infer_factory`` in each actor.

        Returns:
            int: the new version (0 for the first call, then +1 per call).

        Raises:
            RuntimeError: the collectors are closed.
        """
        self._check_open()
        self._weights_ref = self._ray.put(weights)
        self._version += 1
        return self._version

    def _submit(self, i: int, weights_ref, version: int) -> _Window:
        ref = self._actors[i].collect.remote(weights_ref, version)
        return _Window(ref, weights_ref, version)

    def __iter__(self) -> Iterator[tuple[int, int, Any]]:
        return self

    def __next__(self) -> tuple[int, int, Any]:
        """The next batch: of whichever actor finishes first, or of the next actor in turn with
        ``ordered``.

        Actors with fewer than ``max_in_flight`` windows in flight start their next first, with
        the weights current now.  A dead actor is restarted from its last snapshot and its lost
        windows run again (a :class:`CollectorRestartWarning` each time).

        Returns:
            tuple: ``(actor_id, version, batch)``: the actor, the weights version its window ran
            under, and the rebuilt engine batch.

        Raises:
            RuntimeError: before the first :meth:`set_weights`, or after :meth:`close`.
            CollectorError: an actor's code raised, or an actor died more than ``max_restarts``
                times (named; the exception is the ``__cause__``); the collectors are closed then.
        """
        self._check_open()
        if self._weights_ref is None:
            raise RuntimeError("call set_weights() before collecting")
        for i, q in enumerate(self._queue):
            while len(q) < self._max_in_flight:
                q.append(self._submit(i, self._weights_ref, self._version))
        while True:
            if self._ordered:
                i = self._turn
                self._ray.wait([self._queue[i][0].ref], num_returns=1)
            else:
                # Only each actor's oldest window (an actor's batches arrive in its order), listed
                # from the actor after the last one served: Ray lists ready refs in input order,
                # so among windows ready together the least recently served goes first.
                n = len(self._queue)
                order = [(self._turn + j) % n for j in range(n)]
                heads = {self._queue[i][0].ref: i for i in order}
                ready, _ = self._ray.wait(list(heads), num_returns=1)
                i = heads[ready[0]]
            window = self._queue[i][0]
            try:
                version, arrays, meta, snap = self._ray.get(window.ref)
            except self._faults as exc:
                if getattr(exc, "actor_init_failed", False):  # its __init__ raised: would again
                    raise self._fail(i, exc) from exc
                self._restart(i, exc)
                continue
            except Exception as exc:  # noqa: BLE001 - the actor's own code raised: re-raised named
                raise self._fail(i, exc) from (getattr(exc, "cause", None) or exc)
            self._queue[i].popleft()
            self._snap[i] = snap
            self._delivered[i] += 1
            self._turn = (i + 1) % len(self._actors)
            return i, version, batch_from_wire(arrays, meta)

    def _restart(self, i: int, exc: BaseException) -> None:
        """Replace dead actor ``i`` by one restored from its last snapshot and submit its lost
        windows again, each with its own version and weights."""
        self._restarts[i] += 1
        n = self._restarts[i]
        if not self._snapshots or (self._max_restarts >= 0 and n > self._max_restarts):
            raise self._fail(i, exc, f" (died; max_restarts={self._max_restarts})") from (
                getattr(exc, "cause", None) or exc
            )
        try:
            self._ray.kill(self._actors[i], no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass
        pins = self._pins[i]
        where = ""
        if pins and not self._offered(pins):
            pins, where = (
                None,
                f"; its resources {dict(self._pins[i])} are gone with its node, so anywhere Ray places it",
            )
        self._actors[i] = self._start(i, self._snap[i], pins)
        lost = list(self._queue[i])
        self._queue[i] = deque(self._submit(i, w.weights_ref, w.version) for w in lost)
        cause = getattr(exc, "cause", None) or exc
        limit = "unlimited" if self._max_restarts < 0 else str(self._max_restarts)
        start = f"its snapshot after window {self._delivered[i]}" if self._snap[i] is not None else "its seed state"
        warnings.warn(
            f"collector actor {i} died ({type(cause).__name__}: {str(cause).splitlines()[0] if str(cause) else ''}); "
            f"restarted (restart {n} of {limit}) from {start}{where}, re-running {len(lost)} window(s) "
            f"under versions {[w.version for w in lost]}",
            CollectorRestartWarning,
            stacklevel=3,
        )

    def _offered(self, pins: Mapping[str, float]) -> bool:
        """Whether some live node offers every resource in ``pins``."""
        for node in self._ray.nodes():
            have = node.get("Resources") or {}
            if node.get("Alive") and all(have.get(k, 0) >= v for k, v in pins.items()):
                return True
        return False

    # -- whole-run checkpoints ------------------------------------------------------------------

    def snapshot(self) -> dict:
        """The state of the whole run: every actor's engine after its last delivered window, the
        windows in flight (their versions), the version counter, and the weights of every version
        still needed (the current one and those of windows in flight).

        With ``ordered=True``, :meth:`restore` of it (in a new process, with new actors) makes the
        learner receive exactly the batches it would have received from here; in completion
        order each actor's own sequence is reproduced under the same versions.  The dict holds
        bytes, ints, lists and the weights objects as given to :meth:`set_weights` (save it with
        ``pickle`` or your checkpoint format; the engine snapshots are ``EngineSnapshot`` bytes).

        Returns:
            dict: ``{"format", "version", "turn", "actors": [{"engine": bytes | None,
            "windows": int, "pending": [version, ...]}, ...], "weights": {version: weights}}``.

        Raises:
            RuntimeError: the collectors are closed, or ``max_restarts=0`` (no snapshots taken).
        """
        self._check_open()
        if not self._snapshots:
            raise RuntimeError("snapshot() needs engine snapshots: Collectors(max_restarts=0) takes none")
        refs = {}
        actors = []
        for i, q in enumerate(self._queue):
            for w in q:
                refs[w.version] = w.weights_ref
            engine = self._snap[i]
            if engine is not None and not isinstance(engine, bytes):
                engine = snapshot_from_wire(*engine).to_bytes()
            actors.append({"engine": engine, "windows": self._delivered[i], "pending": [w.version for w in q]})
        if self._weights_ref is not None:
            refs[self._version] = self._weights_ref
        weights = {v: self._ray.get(r) for v, r in sorted(refs.items())}
        return {
            "format": SNAPSHOT_FORMAT,
            "version": self._version,
            "turn": self._turn,
            "actors": actors,
            "weights": weights,
        }

    def restore(self, snapshot: Mapping) -> None:
        """Continue from :meth:`snapshot` (taken by collectors of the same config and
        ``n_actors``): every actor's engine goes back to its snapshot, the windows that were in
        flight are submitted again under their versions, and the version counter and current
        weights are the snapshot's (no :meth:`set_weights` is needed before iterating).

        Windows in flight here are discarded.

        Args:
            snapshot: a dict from :meth:`snapshot`.

        Raises:
            TypeError: ``snapshot`` is not a dict.
            ValueError: ``snapshot`` is malformed, for another number of actors, or an engine
                snapshot is of another composition (its fingerprint differs from the actor's
                config).
            RuntimeError: the collectors are closed.
        """
        self._check_open()
        if not isinstance(snapshot, Mapping):
            raise TypeError(f"snapshot must be a dict from Collectors.snapshot(), got {type(snapshot).__name__}")
        engines, pending, version, turn, weights = _check_snapshot(snapshot, self._configs)
        self._ray.get([a.restore.remote(e) for a, e in zip(self._actors, engines, strict=True)])
        refs = {v: self._ray.put(w) for v, w in weights.items()}
        self._version = version
        self._weights_ref = refs.get(version)
        self._turn = turn
        for i, versions in enumerate(pending):
            self._snap[i] = engines[i]
            self._delivered[i] = snapshot["actors"][i]["windows"]
            self._queue[i] = deque(self._submit(i, refs[v], v) for v in versions)

    # -- lifetime -------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("collectors are closed")

    def close(self) -> None:
        """Stop every actor (idempotent); windows in flight are discarded."""
        if self._closed:
            return
        self._closed = True
        _LIVE.discard(self)
        self._queue = [deque() for _ in self._queue]
        self._weights_ref = None
        for a in self._actors:
            try:
                self._ray.kill(a, no_restart=True)
            except Exception:  # noqa: BLE001 - an actor that already died
                pass
        self._actors = []

    def __enter__(self) -> Collectors:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter teardown
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"version={self._version}"
        return f"Collectors(n_actors={len(self._actors)}, {state})"


def _check_resources(actor_resources, n_actors: int) -> list:
    """``actor_resources`` validated: one dict of resource name -> amount >= 0 per actor."""
    if actor_resources is None:
        return [None] * n_actors
    if isinstance(actor_resources, (str, bytes, Mapping)) or not isinstance(actor_resources, Sequence):
        raise TypeError(
            f"actor_resources must be a list of dicts (one per actor), got {type(actor_resources).__name__}"
        )
    if len(actor_resources) != n_actors:
        raise ValueError(f"actor_resources must hold one dict per actor ({n_actors}), got {len(actor_resources)}")
    out = []
    for r in actor_resources:
        if not isinstance(r, Mapping):
            raise TypeError(f"actor_resources entries must be dicts, got {type(r).__name__}")
        for k, v in r.items():
            if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
                raise ValueError(f"actor_resources entries map names to amounts >= 0, got {k!r}: {v!r}")
        out.append(dict(r) or None)
    return out


def _check_snapshot(snapshot: Mapping, configs: list[str]):
    """The parts of a :meth:`Collectors.snapshot` dict, validated against these collectors."""
    from .snapshot import EngineSnapshot, snapshot_fingerprint

    def bad(reason: str) -> ValueError:
        return ValueError(f"snapshot: {reason}")

    if snapshot.get("format") != SNAPSHOT_FORMAT:
        raise bad(f"format must be {SNAPSHOT_FORMAT!r}, got {snapshot.get('format')!r}")
    version, turn, actors, weights = (snapshot.get(k) for k in ("version", "turn", "actors", "weights"))
    for label, v in (("version", version), ("turn", turn)):
        if isinstance(v, bool) or not isinstance(v, int) or v < -1:
            raise bad(f"{label} must be an int >= -1, got {v!r}")
    if not isinstance(actors, list) or len(actors) != len(configs):
        raise bad(f"actors must be a list of {len(configs)} entries (this run's n_actors)")
    if not 0 <= turn < len(configs):
        raise bad(f"turn {turn} out of range")
    if not isinstance(weights, Mapping):
        raise bad("weights must be a dict of version -> weights")
    engines, pending = [], []
    for i, a in enumerate(actors):
        if not isinstance(a, Mapping) or set(a) != {"engine", "windows", "pending"}:
            raise bad(f"actor {i} must hold exactly engine, windows and pending")
        e = a["engine"]
        if e is not None:
            if not isinstance(e, bytes):
                raise bad(f"actor {i}'s engine must be bytes or None")
            want = snapshot_fingerprint(json.loads(configs[i]))
            if EngineSnapshot.from_bytes(e).fingerprint != want:
                raise bad(f"actor {i}'s engine snapshot is of another composition than its config")
        vs = a["pending"]
        if not isinstance(vs, list) or any(
            isinstance(v, bool) or not isinstance(v, int) or v not in weights for v in vs
        ):
            raise bad(f"actor {i}'s pending versions must be versions the snapshot holds weights of")
        engines.append(e)
        pending.append(vs)
    if version >= 0 and version not in weights:
        raise bad(f"the weights of the current version {version} are missing")
    return engines, pending, version, turn, dict(weights)
