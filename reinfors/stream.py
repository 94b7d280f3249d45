"""``rf.CollectStream`` — background collection overlapping Python-side training.

``engine.collect_stream(collect_size, infer, depth)`` starts one producer thread (fixed for the
stream's lifetime) that runs the engine's collect windows back to back — the same
``Engine._collect`` a synchronous ``collect(collect_size, infer)`` runs, so every callback call
happens on that one thread — and queues the finished batches.  The kernels release the GIL, so
collection overlaps the consumer's training.

Lifecycle (the original's contract and messages)::

    RUNNING --next()/iter--> batches, in window order; a callback error is queued after them and
       |                     re-raised once (same object); the producer then ends
       |--pause()--> the in-flight window finishes with real inference; every queued batch is
       |             returned and the engine released (lossless barrier)
       |--stop() / __exit__--> the in-flight window is aborted (Runtime.request_abort: no more
       |             callback calls, slots park at their next decision); queued batches are
       |             discarded and the engine released
       '--handle dropped without stop()--> the producer aborts and exits; the engine stays held
                     (forfeited) for the rest of the process

Only control signals cross threads here (one Condition, one deque of whole batches): Python work
is per batch, never per row.
"""

from __future__ import annotations

import atexit
import collections
import threading
import weakref

import reinfors._runtime.runtime  # noqa: F401 - its atexit handler must run after ours (LIFO)

from .batches import AlphaZeroBatch, DqnBatch, PpoBatch, TreeStrapBatch

__all__ = ["CollectStream"]

_STOPPED = "collect stream is stopped"
_ENDED = "collect stream ended (stopped, or a callback error was already raised)"
_ALREADY = "stream already stopped"

# Producer modes
_RUN, _PAUSE, _STOP, _ABANDON = range(4)


class _Shared:
    """State shared by a stream handle and its producer thread.  The thread never references the
    handle, so a dropped handle is garbage collected (and its finalizer aborts the thread)."""

    def __init__(self, depth: int | None):
        self.cv = threading.Condition()
        self.queue: collections.deque = collections.deque()  # (ok, batch-or-exception) items
        self.depth = depth
        self.mode = _RUN
        self.closed = False  # stop(), pause() or abandonment happened
        self.finished = False  # the producer left its loop (stopped, or after a callback error)
        self.rt = None  # the runtime of the window in flight (None between windows)

    def abort(self, mode: int) -> None:
        """Close the stream (cv held): no new window; abort the one in flight unless pausing."""
        self.closed = True
        self.mode = mode
        if mode != _PAUSE and self.rt is not None:
            self.rt.request_abort()
        self.cv.notify_all()


_LIVE: dict[int, tuple[_Shared, threading.Thread]] = {}  # running producers, by id(shared state)


def _produce(sh: _Shared, engine, collect_size: int, fns) -> None:
    """The producer loop: wait for queue room, run one window, queue its batch (or the error)."""
    try:
        while True:
            with sh.cv:
                while sh.mode == _RUN and sh.depth is not None and len(sh.queue) >= sh.depth:
                    sh.cv.wait()
                if sh.mode != _RUN:
                    return
            with engine._lock:
                try:
                    rt = engine._runtime()
                    with sh.cv:
                        if sh.mode != _RUN:
                            return  # paused or stopped while waiting for the lock: no new window
                        sh.rt = rt  # from here on stop() aborts this window
                    try:
                        item = (True, engine._collect(collect_size, fns, False))
                    finally:
                        with sh.cv:
                            sh.rt = None
                            rt.abort_requested = False  # stop() sets it only while sh.rt is set
                except BaseException as exc:  # noqa: BLE001 - delivered to the consumer
                    item = (False, exc)
            with sh.cv:
                if item[1] is not None and sh.mode in (_RUN, _PAUSE):
                    sh.queue.append(item)
                    sh.cv.notify_all()
                if not item[0]:
                    return  # a callback error ends the stream (the engine stays held until stop)
    finally:
        with sh.cv:
            sh.finished = True
            sh.cv.notify_all()
        _LIVE.pop(id(sh), None)


def _abandon(sh: _Shared) -> None:
    """Finalizer of a handle dropped without stop(): end its producer, forfeit the engine."""
    with sh.cv:
        if not sh.closed:
            sh.abort(_ABANDON)
            sh.queue.clear()


@atexit.register
def _stop_all_streams() -> None:
    """At interpreter exit, take every producer out of its window (abort) before the runtime's
    own handler stops the helper threads; engines stay held, as for a dropped stream."""
    for sh, thread in list(_LIVE.values()):
        _abandon(sh)
        thread.join(timeout=5.0)


class CollectStream:
    """A running background collection, returned by ``Engine.collect_stream``.

    One producer thread runs collect windows of ``collect_size`` records back to back and queues
    the finished batches (at most ``depth``); every callback call happens on that thread.
    ``next()`` blocks (without the GIL) for the next batch; ``pending()`` counts queued results;
    ``pause()`` is a lossless barrier returning every remaining batch; ``stop()`` discards them.
    Both return the engine to its ``Engine``.  Single consumer: the thread calling ``next()`` owns
    shutdown.  Prefer ``with engine.collect_stream(...) as stream:`` — a stream dropped without
    ``stop()`` leaves its engine unusable for the rest of the process.

    Example::

        with engine.collect_stream(2048, infer, depth=1) as stream:
            for batch in stream:
                train(batch)

    Raises:
        TypeError: on direct construction (use ``Engine.collect_stream``).
    """

    def __init__(self, *args, **kwargs):
        raise TypeError("No constructor defined for CollectStream")

    @classmethod
    def _start(cls, engine, collect_size: int, fns, depth: int | None) -> CollectStream:
        """Start the producer for ``engine`` (already marked held by ``Engine.collect_stream``)."""
        self = object.__new__(cls)
        self._engine = engine
        self._sh = sh = _Shared(depth)
        self._released = False
        self._thread = threading.Thread(
            target=_produce, args=(sh, engine, collect_size, fns), name="reinfors-collect-stream", daemon=True
        )
        self._finalizer = weakref.finalize(self, _abandon, sh)
        _LIVE[id(sh)] = (sh, self._thread)
        self._thread.start()
        return self

    # -- consuming --------------------------------------------------------------------------------

    def _take(self, stopped_exc: type[BaseException]):
        sh = self._sh
        with sh.cv:
            while True:
                if sh.closed:
                    raise stopped_exc(_STOPPED) if stopped_exc is RuntimeError else stopped_exc()
                if sh.queue:
                    ok, value = sh.queue.popleft()
                    sh.cv.notify_all()  # room for the producer
                    break
                if sh.finished:
                    raise stopped_exc(_ENDED) if stopped_exc is RuntimeError else stopped_exc()
                sh.cv.wait()
        if not ok:
            raise value
        return value

    def next(self) -> AlphaZeroBatch | DqnBatch | PpoBatch | TreeStrapBatch:
        """The next finished batch, in window order (blocks until one is ready).

        Returns:
            The engine's batch type (``PpoBatch``, ``DqnBatch``, ``AlphaZeroBatch`` or
            ``TreeStrapBatch``).

        Raises:
            RuntimeError: after ``stop()`` / ``pause()`` ("collect stream is stopped"), or once the
                stream has ended ("collect stream ended (stopped, or a callback error was already
                raised)").
            Exception: a callback error, re-raised once with its own type and object.
        """
        return self._take(RuntimeError)

    def __next__(self):
        return self._take(StopIteration)

    def __iter__(self) -> CollectStream:
        return self

    def pending(self) -> int:
        """Finished results queued now (batches, plus a callback error not yet raised).

        Advisory: the producer may have another window in flight.

        Returns:
            The queue length, between 0 and ``depth`` (never 0.4.0's transient ``2**64 - 1``).
        """
        with self._sh.cv:
            return len(self._sh.queue)

    # -- shutdown ---------------------------------------------------------------------------------

    def _not_from_producer(self) -> None:
        if threading.current_thread() is self._thread:
            raise RuntimeError("a collect stream cannot be stopped or paused from its own infer callback")

    def _join_and_release(self) -> None:
        self._thread.join()
        if not self._released:
            self._released = True
            self._finalizer.detach()
            self._engine._held = False

    def pause(self) -> list[AlphaZeroBatch | DqnBatch | PpoBatch | TreeStrapBatch]:
        """Lossless barrier: stop the stream without losing a record.

        Starts no new window, finishes the in-flight one with real inference, returns every
        queued batch in order and gives the engine back.  The engine's state then equals a
        synchronous run's after the same number of collects, so ``engine.snapshot()`` taken now
        continues exactly after the last returned batch.

        Returns:
            list: the batches collected but not yet consumed, oldest first.

        Raises:
            RuntimeError: on a second ``pause()`` ("stream already stopped"), or when called from
                the stream's own callback.
            Exception: a queued callback error, with its own type (the engine is given back).
        """
        self._not_from_producer()
        sh = self._sh
        with sh.cv:
            if sh.closed:
                raise RuntimeError(_ALREADY)
            sh.abort(_PAUSE)
        self._join_and_release()
        with sh.cv:
            items = list(sh.queue)
            sh.queue.clear()
        for ok, value in items:
            if not ok:
                raise value
        return [value for _, value in items]

    def stop(self) -> None:
        """Stop collecting and give the engine back (idempotent).

        Aborts the in-flight window — it ends within about one callback call, its records
        discarded — and drops the queued batches.  ``with`` blocks call it on exit.

        Raises:
            RuntimeError: when called from the stream's own callback.
        """
        self._not_from_producer()
        sh = self._sh
        with sh.cv:
            if not sh.closed:
                sh.abort(_STOP)
            sh.queue.clear()
        self._join_and_release()
        with sh.cv:
            sh.queue.clear()

    def __enter__(self) -> CollectStream:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        sh = self._sh
        state = "stopped" if sh.closed else "ended" if sh.finished else "running"
        return f"<CollectStream {state}, pending={len(sh.queue)}, depth={sh.depth}>"
