"""One callback call: lend an arena's rows, call, validate, route the predictions back.

In a CPU window the scheduler's thread does all of it in :meth:`CallPath._fire`.  In a pipelined
window (``firing.py``) the scheduler queues the call (:class:`reinfors._runtime.firing.Pipe`) and
the caller's thread makes it (:meth:`CallPath._serve`), routes it and works beside the workers.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from reinfors.jit import arena as _arena
from reinfors.jit import engine_codes as C

from .firing import Pipe

# The cursor of a packed arena control word (reinfors/jit/arena.py), read here in Python: a fired
# arena is closed and settled, its word no longer moves (a kernel call per fire costs more).
_CURSOR_SHIFT, _CURSOR_MASK = int(_arena.CURSOR_SHIFT), int(_arena.CURSOR_MASK)


class _Call:
    """One callback call: the lent rows of arena ``i`` of ``route`` and, once made, its validated
    predictions (``pred``) and whether the callback kept a view of the rows (``retained``)."""

    __slots__ = ("route", "i", "n", "validate", "owner", "view", "gen", "wgen", "pred", "retained")


def _trim(out, n, cap):
    """Drop the outputs of pad rows (``cap - n`` trailing rows)."""
    if isinstance(out, tuple):
        return tuple(x[:n] if isinstance(x, np.ndarray) and x.ndim >= 1 and x.shape[0] == cap else x for x in out)
    if isinstance(out, np.ndarray) and out.ndim >= 1 and out.shape[0] == cap:
        return out[:n]
    return out


class CallPath:
    """The path of one callback call (a mixin of ``Runtime``)."""

    def _set_targets(self) -> None:
        """Publish the fire target (rows at which writers close an arena) of every route: the
        capacity with cohorts (a cohort's round closes its arenas); with the inference cache the
        CPU design's automatic batch, or the pipelined policy's current arm."""
        if self.cohorts.closing:
            tgt = self.capacity  # a cohort's round closes its arenas, never a row count (cohorts.py)
        else:
            tgt = self._policy.target if self._pipe is not None else self.fire_min
        for r in range(self.n_routes):
            self.ctl[C.C_ROUTE_TGT + 8 * r] = tgt

    def _fire(self, route: int, i: int, fns, validate, tele: dict) -> None:
        """Lend arena ``i`` of ``route`` to its callback and route the predictions back.  The
        span table must be complete (``find_fireable`` and ``spans_complete`` check it).  In a
        pipelined window the call is queued for the caller's thread instead, which routes it when
        it returns (``_serve``; with the inference cache on, the scheduler does: ``_complete``)."""
        pipe = self._pipe
        if pipe is not None:
            self._arrays["arena_done"][route * self.n_arenas + i] |= _arena.FIRING  # seal skips it
            pipe.submit(self._lend(route, i, tele, self._validators.pop()))
            return
        # Inline (the CPU design: tens of thousands of calls a second): the same steps as
        # _lend / _invoke / _route_back, on locals (no call object).
        n, owner, view = self._loan(route, i, tele)
        base = sys.getrefcount(owner) + sys.getrefcount(view)
        gen, wgen = self._generations(route)
        pred = self._call(fns[route // self.cohorts.count], view, n, validate, tele)
        if pred is None:
            pred, gen = self._no_predictions(n, validate)
        extra = sys.getrefcount(owner) + sys.getrefcount(view) - base  # before owner / view are passed on
        retained = extra > 0 and self._kept(validate, owner, view, extra)  # (no new reference: none kept)
        self.ctl[C.C_FIREGEN] = wgen
        self.k.finish_fire(self.E, self.spans, self.span_n, route, i, pred, self.ready_buf, not retained, gen, validate.raw)
        validate.release()

    def _one_batch_a_round(self) -> bool:
        """Whether every slot waits on the call that just returned (one cohort; with the cache,
        the pipelined policy's ``full`` arm): the caller's thread then works beside the workers."""
        if self.cohorts.closing:
            return self.cohorts.count == 1
        return self._policy.arm == 0

    def _loan(self, route: int, i: int, tele: dict) -> tuple:
        """``(rows, owner, view)`` of arena ``i`` of ``route``: a zero-copy view of its committed
        rows (or a copy, once a callback kept rows), padded with zeros to the capacity when
        ``pad``; ``owner`` is the array whose references tell whether the callback kept any."""
        ai = route * self.n_arenas + i
        n = (int(self._arrays["arena_ctl"][ai]) >> _CURSOR_SHIFT) & _CURSOR_MASK  # arena_fill
        self._route_fires[route] += 1
        lent_rows = n
        if self.pad and n < self.capacity:
            self._arrays["arena_rows"][route, i, n:] = 0.0
            lent_rows = self.capacity
            tele["padded_rows"] += self.capacity - n
        if self.copy_mode:
            owner = self._arrays["arena_rows"][route, i, :lent_rows].copy()
            return n, owner, owner
        # Zero-copy loan: a view of the arena's owner, a flat array over a memoryview of its rows
        # (``_loan_owners``, made with the arenas).  Every view a callback derives from it
        # references ``owner`` (NumPy collapses view bases only through arrays), so its refcount
        # tells whether the callback kept any of them.
        owner = self._loan_owners[ai]
        return n, owner, owner[: lent_rows * self.O].reshape(lent_rows, self.O)

    def _generations(self, route: int) -> tuple:
        """``(cache generation of route's partition, weights generation)`` the call's values are
        computed under: read before the call, so a weights update during it leaves them stale
        (never served from the cache); the second stamps the records (batch
        ``weights_generations``)."""
        return np.int64(self._arrays["cctl"][C.CC_GEN + 8 * (route // self.cohorts.count)]), int(self.ctl[C.C_WGEN])

    def _call(self, fn, view, n: int, validate, tele: dict):
        """Call ``fn`` on ``view`` and validate its output: the prediction rows, or None after a
        callback error (kept in ``self.error``) or once an abort was requested (the callback is
        not called then).  One call in ``cost.every`` is timed twice for the firing regime."""
        if self.error is not None or self.abort_requested:
            return None
        cost = self.cost
        sample = cost.due()
        cpu0 = time.thread_time() if sample else 0.0
        t0 = time.perf_counter()
        pred = None
        try:
            out = fn(view)
            wall = time.perf_counter() - t0
            tele["infer_seconds"] += wall
            if sample:
                cost.add(n, wall, time.thread_time() - cpu0)
            if self.pad and n < self.capacity and out is not None:
                out = _trim(out, n, self.capacity)
            pred = validate(out, n)
        except BaseException as exc:  # noqa: BLE001 - re-raised by the caller after the window
            self.error = exc
        finally:
            out = None
        tele["infer_calls"] += 1
        tele["infer_rows"] += n
        return pred

    def _no_predictions(self, n: int, validate) -> tuple:
        """``(pred, gen)`` for rows whose callback was not called or failed: after a callback
        error the window runs to its end on all-zero outputs (the callback is not called again);
        its batch is discarded and the error re-raised.  (The same after a stream's stop().)
        These are no predictions: never cache them (generation -1)."""
        validate.release()
        return np.zeros((n, self.width), np.float64), np.int64(-1)

    def _kept(self, validate, owner, view, extra_refs: int) -> bool:
        """Whether the callback kept a view of the lent rows: ``extra_refs`` references to
        ``owner`` / ``view`` appeared during the call.  Logits the validator holds (read in
        place) are no caller's: when they are a view of the lent rows (``view`` itself, or an
        array whose base NumPy collapsed to ``owner``), that one reference does not keep the
        arena.  A kept arena stays LENT (skipped by every writer; the pool has slack for it)
        and later fires lend copies instead: rows a caller holds are never overwritten."""
        if self.copy_mode:
            return False
        held = validate.held
        mine = 1 if held is not None and (held is view or held.base is owner) else 0
        retained = extra_refs - mine > 0
        if retained:
            self.copy_mode = True
        return retained

    def _lend(self, route: int, i: int, tele: dict, validate) -> _Call:
        """The pipelined call for arena ``i`` of ``route`` (see :meth:`_loan`)."""
        c = _Call()
        c.n, c.owner, c.view = self._loan(route, i, tele)
        c.route, c.i, c.validate = route, i, validate
        c.pred, c.retained = None, False
        c.gen, c.wgen = self._generations(route)
        return c

    def _invoke(self, c: _Call, fns, tele: dict) -> None:
        """Make pipelined call ``c`` (on the caller's thread): sets ``c.pred`` and ``c.retained``
        (see :meth:`_call` and :meth:`_kept`)."""
        owner, view, validate = c.owner, c.view, c.validate
        base = sys.getrefcount(owner) + sys.getrefcount(view)
        pred = self._call(fns[c.route // self.cohorts.count], view, c.n, validate, tele)
        if pred is None:
            pred, c.gen = self._no_predictions(c.n, validate)
        extra = sys.getrefcount(owner) + sys.getrefcount(view) - base  # before owner / view are passed on
        c.retained = extra > 0 and self._kept(validate, owner, view, extra)
        c.pred = pred

    def _route_back(self, c: _Call) -> None:
        """Route ``c``'s predictions back, recycle the arena (unless a caller kept its rows),
        clear the helpers' stop request and queue the ready slots — on the scheduler's thread, or
        (pipelined, cache off) on the caller's right after the call."""
        v = c.validate
        with self._pipe.route_lock:  # one route at a time: C_FIREGEN and ready_buf are shared
            self.ctl[C.C_FIREGEN] = c.wgen
            self.k.finish_fire(self.E, self.spans, self.span_n, c.route, c.i, c.pred, self.ready_buf, not c.retained, c.gen, v.raw)
        v.release()
        c.owner = c.view = c.pred = None

    def _complete(self) -> int:
        """Pipelined calls made since the last look (the scheduler's thread): route those the
        caller's thread left to route (with the inference cache on, whose tables only the
        scheduler touches) and return how many calls came back."""
        pipe = self._pipe
        if pipe is None:
            return 0
        self.ctl[C.C_WAKE] = 0
        with pipe.cv:
            n, pipe.returned = pipe.returned, 0
        while pipe.done:
            self._retire(pipe, pipe.done.popleft())
        return n

    def _retire(self, pipe: Pipe, c: _Call, routed: bool = False) -> None:
        """Route a pipelined call's predictions back (unless ``routed``) and free its place in
        the pipe."""
        if not routed:
            self._route_back(c)
        self._validators.append(c.validate)
        with pipe.cv:  # both threads retire calls: the policy's counters change under the lock
            pipe.outstanding -= 1
            if not self.cohorts.closing and self._policy.routed(c.n, time.perf_counter()):
                self._set_targets()

    def _serve(self, pipe: Pipe, fns, tele: dict) -> None:
        """The caller's thread in a pipelined window: make every call the scheduler queues (and
        route its predictions back) until the scheduler's loop finishes.  An interrupt here
        (Ctrl-C) is kept as the window's error: the rest of the window runs on zero outputs and
        the engine raises it after the window."""
        while True:
            c = None
            try:
                c = pipe.next_job()
                if c is None:
                    return
                self._invoke(c, fns, tele)
            except BaseException as exc:  # noqa: BLE001 - re-raised by the engine after the window
                if self.error is None:
                    self.error = exc
                if c is None:
                    continue
                if c.pred is None:  # interrupted before the call finished: route zeros
                    c.pred = np.zeros((c.n, self.width), np.float64)
                    c.gen, c.retained = np.int64(-1), False
                    c.validate.release()
            if self.infer_cache or pipe.jobs:
                # The scheduler routes it: the cache's tables are its own; and when the next call
                # is already queued, this thread makes that call at once (routing thousands of
                # rows takes ~0.1 ms a thousand, which would leave the accelerator idle).
                pipe.done.append(c)
            else:
                # Route here, at once, and wake the workers.  In the ``full`` arm (one batch a
                # round: nothing else to call until its slots are served) this thread then works
                # beside them until no slot is ready: it is on a core the moment a call returns,
                # the others first have to be woken.  In the ``half`` arm it does not: the next
                # batch closes while the slots are served, and a thread inside the worker kernel
                # would make the callback wait for it (2-3 ms after a decision's last round,
                # measured).  Routing runs under ``pipe.route_lock`` (C_FIREGEN and ready_buf
                # are shared with the scheduler's routes).  (finish_fire and
                # the worker kernel are safe beside the scheduler's kernels: the arena's span
                # table is complete and no longer read by them, and the call stays outstanding
                # until this thread has left the kernel, so no barrier or reallocation runs
                # meanwhile.)
                self._route_back(c)
                self.ctl[C.C_WAKE] = 1
                pipe.wake.set()
                helpers = self._helpers
                if helpers is not None:
                    helpers.wake()
                if not pipe.jobs and self._one_batch_a_round():
                    self.k.work(self.E, False, 0)
                self._retire(pipe, c, routed=True)
            with pipe.cv:
                pipe.returned += 1
            self.ctl[C.C_WAKE] = 1
            pipe.wake.set()
