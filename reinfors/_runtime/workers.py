"""The worker pool: ``n_threads - 1`` helper threads running the nogil ``work`` kernel.

The thread that called ``collect`` (or the ``reinfors-scheduler`` thread in a pipelined window) is
worker 0; helpers wait on a condition between signals (:class:`WorkerPool`).  Every live runtime's
helpers are taken out of the kernels at interpreter exit (:func:`_stop_all_helpers`), before the
arrays they address are torn down.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from typing import TYPE_CHECKING

from reinfors.jit import engine_codes as C

if TYPE_CHECKING:
    from .runtime import Runtime

HELPER_SPIN = 200_000  # polls a helper makes on an empty ready ring before it sleeps (~0.3 ms)
# ... in a pipelined window (an accelerator-like callback, firing.py): ~5-8 ms, longer than a call
# (an H200's is 1.2-1.6 ms).  The cores are idle while the callback waits on its device, and a
# helper still polling when the call's rows are routed starts on them at once instead of being
# woken through the GIL: 1.055-1.059x the records/s at 256 games and 1.044x at 1,024 against the
# stand-in (one process, two engines alternating windows).  A CPU callback never gets it: there
# the callback runs inline and needs the core.
PIPELINED_HELPER_SPIN = 5_000_000


class WorkerPool:
    """``n`` persistent helper threads running the worker kernel between scheduler signals."""

    def __init__(self, runtime: Runtime, n: int):
        self.rt = runtime
        self.cv = threading.Condition()
        self.generation = 0
        self.busy = 0
        self.stop = False
        self.idle_event = threading.Event()
        self.threads = [
            threading.Thread(target=self._loop, name=f"reinfors-worker-{i + 1}", daemon=True) for i in range(n)
        ]
        started = []
        try:
            for t in self.threads:
                t.start()
                started.append(t)
        except RuntimeError as e:  # "can't start new thread": out of address space / thread limit
            with self.cv:
                self.stop = True
                self.cv.notify_all()
            for t in started:
                t.join(timeout=5.0)
            raise MemoryError(
                f"only {len(started)} of {n} worker helper threads could start ({e}); use a smaller n_threads"
            ) from None

    def _loop(self) -> None:
        seen = 0
        while True:
            with self.cv:
                while self.generation == seen and not self.stop:
                    self.cv.wait()
                if self.stop:
                    return
                seen = self.generation
                self.busy += 1
                # The address table is read under the lock: the scheduler replaces arrays only
                # while holding it with no helper busy (Runtime._helpers_out), so a helper never
                # enters the kernel with a table whose arrays were freed.
                E = self.rt.E
                spin = PIPELINED_HELPER_SPIN if self.rt._pipe is not None else HELPER_SPIN
            try:
                # Keep advancing slots without returning to Python per batch (the scheduler polls
                # for full arenas itself); spin a while on an empty ring before sleeping.
                self.rt.k.work(E, False, spin)
            finally:
                with self.cv:
                    self.busy -= 1
                self.idle_event.set()

    def wake(self) -> None:
        """New work is queued: wake idle helpers (a no-op while all of them are working)."""
        if self.busy >= len(self.threads):
            return
        with self.cv:
            self.generation += 1
            self.cv.notify_all()

    def busy_count(self) -> int:
        return self.busy  # an int read is atomic under the GIL; a stale value only delays a poll

    def close(self, join: bool = False) -> None:
        """Stop the helpers (they leave the kernel at once: ``C_STOP``); ``join`` waits for them."""
        self.rt.ctl[C.C_STOP] = 1
        with self.cv:
            self.stop = True
            self.cv.notify_all()
        if join:
            for t in self.threads:
                t.join(timeout=5.0)


_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _stop_all_helpers() -> None:
    """At interpreter exit, take every helper thread out of the kernels before the arrays they
    address are torn down (daemon threads would otherwise touch freed memory)."""
    for rt in list(_LIVE):
        rt.close(join=True)


class Workers:
    """Starting, stopping and quiescing the helper threads (a mixin of ``Runtime``)."""

    def _start_helpers(self) -> None:
        if self.n_threads > 1 and self._helpers is None:
            # more threads than slots cannot work at once (records do not depend on the count)
            self._helpers = WorkerPool(self, min(self.n_threads, self.G) - 1)
            _LIVE.add(self)

    def close(self, join: bool = True) -> None:
        """Stop and (by default) join the helper threads: after this no kernel runs on this
        runtime's arrays."""
        h, self._helpers = self._helpers, None
        if h is not None and threading.current_thread() not in h.threads:
            h.close(join)

    def _quiesce_helpers(self) -> None:
        """Stop barrier: raise C_STOP (a helper entering or spinning in ``work`` returns at once,
        touching nothing but the control words) and wait until no helper is inside the kernel.
        C_STOP is cleared again only when new work is queued, after any reallocation."""
        helpers = self._helpers
        if helpers is None:
            return
        self.ctl[C.C_STOP] = 1
        while helpers.busy_count():
            helpers.idle_event.wait(0.0005)
            helpers.idle_event.clear()
