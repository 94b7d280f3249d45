"""Ray collectors feeding one learner (``pip install reinfors[ray]``).

:class:`Collectors` starts ``n_actors`` Ray actors.  Each owns one :class:`~reinfors.Engine`
built with :func:`~reinfors.engine_from_config` from a resolved config, so only JSON crosses the
wire to build it; actor ``i`` runs with seed ``config["engine"]["seed"] + i`` (distinct record
streams).  The learner publishes weights with :meth:`Collectors.set_weights` (one ``ray.put``;
actors receive the object reference and build their callback with ``infer_factory(weights)``),
and iterates ``(actor_id, version, batch)`` as batches finish, in completion order::

    import ray, reinfors as rf
    from reinfors.distributed import Collectors

    ray.init(num_cpus=4)
    with Collectors(engine.resolved_config(), make_infer, n_actors=4, collect_size=512) as col:
        col.set_weights(net.weights())
        for actor_id, version, batch in col:
            net.train_step(batch)
            col.set_weights(net.weights())

Versions: the first ``set_weights`` is version 0 and each later call adds one.  An actor that
receives a newer version calls ``Engine.weights_updated()`` once per version it skipped, so its
engine's weights generation *is* the learner's version: ``batch.weights_generations`` holds, per
record, the learner version its decision was inferred under (records decided in an earlier
collect and delivered in this one keep their older version), and ``version`` is the weights
version the collect ran under.  Lag of a record = the learner's current version minus its stamp.

Wire format: an actor returns the batch as plain NumPy arrays plus a dict (batch type name,
telemetry); the learner rebuilds the batch object.  No reinfors object is ever pickled (Ray
serialises the arrays; ``infer_factory`` and the weights travel by Ray's own serialisation, so
``infer_factory`` must be a function Ray can ship — module-level in an importable module, or
defined in ``__main__`` / a local scope — and must not capture reinfors objects).

An exception inside an actor (building the engine, ``infer_factory``, the callback, a dead
actor) is raised in the learner as :class:`CollectorError` naming the actor, with the actor's
exception as ``__cause__``; the collectors are closed then.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from . import batches as _batches

__all__ = ["Collectors", "CollectorError"]

_BATCH_TYPES = {
    cls.__name__: cls for cls in (_batches.TreeStrapBatch, _batches.DqnBatch, _batches.AlphaZeroBatch, _batches.PpoBatch)
}
_U64 = 1 << 64


class CollectorError(RuntimeError):
    """A collector actor failed; ``actor_id`` names it and ``__cause__`` is its exception.

    Args:
        actor_id: the failed actor's index.
        message: what failed.
    """

    def __init__(self, actor_id: int, message: str):
        super().__init__(message)
        self.actor_id = actor_id


def _ray():
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("reinfors.distributed needs Ray: pip install 'reinfors[ray]'") from exc
    return ray


def batch_to_wire(batch) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
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


def batch_from_wire(arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]):
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


class _CollectorActor:
    """The body of one Ray actor: an Engine from the config's JSON and the current callback."""

    def __init__(self, config_json: str, infer_factory, collect_size: int, actor_id: int):
        import reinfors as rf

        self.engine = rf.engine_from_config(json.loads(config_json))
        self.factory = infer_factory
        self.collect_size = collect_size
        self.actor_id = actor_id
        self.version = None  # learner version of the current callback
        self.infer = None

    def warm(self) -> int:
        """Compile (or load) every kernel this actor's engine runs, into the on-disk cache,
        before the other actors start (``Collectors(warm=True)``).  Returns the number of kernels
        gone through."""
        from reinfors._runtime import compile_helper

        return compile_helper.precompile(self.engine)

    def collect(self, weights, version: int):
        """One ``Engine.collect(collect_size, infer)`` under learner ``version`` (Ray resolved
        the weights reference).  Returns ``(version, arrays, meta)``."""
        if version != self.version:
            self.infer = self.factory(weights)
            if self.version is not None:
                for _ in range(version - self.version):  # generation == learner version
                    self.engine.weights_updated()
            self.version = version
        batch = self.engine.collect(self.collect_size, self.infer)
        arrays, meta = batch_to_wire(batch)
        return version, arrays, meta


class Collectors:
    """``n_actors`` Ray actors collecting with one Engine each, feeding one learner.

    Args:
        config: a resolved engine config (``Engine.resolved_config()``; it must be
            JSON-serialisable).  Actor ``i`` runs with ``engine.seed + i`` (mod 2**64).
        infer_factory: ``infer_factory(weights) -> infer``: builds the engine callback (a
            callable, or one per player) from the learner's weights; called in an actor whenever
            a new version arrives.
        n_actors: collector actors (>= 1).
        collect_size: record floor of every collect (>= 1; ``Engine.collect``'s ``n_records``).
        num_cpus: Ray CPUs reserved per actor.
        actor_options: further ``ray.remote`` options of the actors (e.g.
            ``{"num_gpus": 0.25}``).
        warm: compile the kernels once, in the first actor, before the others start (they then
            load them from the on-disk cache instead of each compiling the same kernels; actors
            share the cache on one machine, or across machines through ``cache_dir``).
            ``False`` starts every actor at once (a cache baked into the image with
            ``python -m reinfors warmup`` needs no warm-up).
        cache_dir: a cache root every actor uses (``REINFORS_CACHE_DIR`` of the actors, e.g. a
            shared volume); default: each actor's own default cache.

    Raises:
        TypeError: ``config`` is not a JSON-serialisable dict, ``infer_factory`` is not callable,
            or ``n_actors`` / ``collect_size`` is not an int.
        ValueError: ``n_actors`` or ``collect_size`` below 1.
        ImportError: Ray is not installed (``pip install 'reinfors[ray]'``).
        CollectorError: with ``warm``, the first actor failed to build its engine or compile it
            (the collectors are closed then).

    Uses the running Ray (call ``ray.init`` first to choose the cluster; otherwise Ray starts a
    local one).  Iteration yields ``(actor_id, version, batch)``; every idle actor starts its next
    collect when the learner asks for the next batch, with the weights current then (so a
    learner that trains and calls :meth:`set_weights` between batches hands those actors the new
    weights; the others finish the collect they are running).  ``close()`` (or leaving a
    ``with`` block) stops every actor.
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
    ):
        if not isinstance(config, Mapping):
            raise TypeError(f"config must be a dict (a resolved engine config), got {type(config).__name__}")
        if not callable(infer_factory):
            raise TypeError("infer_factory must be callable: infer_factory(weights) -> infer")
        for label, v in (("n_actors", n_actors), ("collect_size", collect_size)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{label} must be an int, got {type(v).__name__}")
            if v < 1:
                raise ValueError(f"{label} must be >= 1, got {v}")
        try:
            base = json.loads(json.dumps(config))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"config must be JSON-serialisable (only JSON crosses the wire): {exc}") from exc
        if not isinstance(warm, bool):
            raise TypeError(f"warm must be a bool, got {type(warm).__name__}")
        if cache_dir is not None and not isinstance(cache_dir, str):
            raise TypeError(f"cache_dir must be a str or None, got {type(cache_dir).__name__}")
        ray = _ray()
        engine = dict(base.get("engine") or {})
        seed = engine.get("seed") or 0
        opts = {"num_cpus": num_cpus, **dict(actor_options or {})}
        if cache_dir is not None:
            runtime_env = dict(opts.get("runtime_env") or {})
            runtime_env["env_vars"] = {**dict(runtime_env.get("env_vars") or {}), "REINFORS_CACHE_DIR": cache_dir}
            opts["runtime_env"] = runtime_env
        remote = ray.remote(**opts)(_CollectorActor)
        self._ray = ray
        self._actors = []
        self._weights_ref = None
        self._version = -1
        self._inflight: dict = {}  # object ref -> actor id
        self._closed = False
        for i in range(int(n_actors)):
            cfg = dict(base, engine=dict(engine, seed=(int(seed) + i) % _U64))
            self._actors.append(remote.remote(json.dumps(cfg), infer_factory, int(collect_size), i))
            if i == 0 and warm:
                # One actor compiles; the others, started after it, load its kernels from the cache.
                try:
                    ray.get(self._actors[0].warm.remote())
                except Exception as exc:  # noqa: BLE001 - re-raised named, like a collect's failure
                    cause = getattr(exc, "cause", None) or exc
                    self.close()
                    raise CollectorError(0, f"collector actor 0 failed: {type(cause).__name__}: {cause}") from cause

    @property
    def n_actors(self) -> int:
        """Collector actors still running (0 after :meth:`close`)."""
        return len(self._actors)

    @property
    def version(self) -> int:
        """The learner's current weights version (-1 before the first :meth:`set_weights`)."""
        return self._version

    def set_weights(self, weights: Any) -> int:
        """Publish new weights to the actors.

        Collects already running finish under the weights they started with; each actor picks
        the new version up at its next collect.

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

    def _submit(self, actor_id: int) -> None:
        ref = self._actors[actor_id].collect.remote(self._weights_ref, self._version)
        self._inflight[ref] = actor_id

    def __iter__(self) -> Iterator[tuple[int, int, Any]]:
        return self

    def __next__(self) -> tuple[int, int, Any]:
        """The next finished batch of any actor, in completion order.

        Idle actors start their next collect first, with the weights current now.

        Returns:
            tuple: ``(actor_id, version, batch)``: the actor, the weights version its collect ran
            under, and the rebuilt engine batch.

        Raises:
            RuntimeError: before the first :meth:`set_weights`, or after :meth:`close`.
            CollectorError: an actor failed (named; its exception is the ``__cause__``); the
                collectors are closed then.
        """
        self._check_open()
        if self._weights_ref is None:
            raise RuntimeError("call set_weights() before collecting")
        busy = set(self._inflight.values())
        for i in range(len(self._actors)):
            if i not in busy:
                self._submit(i)
        ready, _ = self._ray.wait(list(self._inflight), num_returns=1)
        ref = ready[0]
        actor_id = self._inflight.pop(ref)
        try:
            version, arrays, meta = self._ray.get(ref)
        except Exception as exc:  # noqa: BLE001 - every actor-side failure is re-raised named
            cause = getattr(exc, "cause", None) or exc
            self.close()
            raise CollectorError(
                actor_id, f"collector actor {actor_id} failed: {type(cause).__name__}: {cause}"
            ) from cause
        return actor_id, version, batch_from_wire(arrays, meta)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("collectors are closed")

    def close(self) -> None:
        """Stop every actor (idempotent); collects in flight are discarded."""
        if self._closed:
            return
        self._closed = True
        self._inflight.clear()
        for a in self._actors:
            try:
                self._ray.kill(a)
            except Exception:  # noqa: BLE001 - an actor that already died
                pass
        self._actors = []

    def __enter__(self) -> Collectors:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"version={self._version}"
        return f"Collectors(n_actors={len(self._actors)}, {state})"
