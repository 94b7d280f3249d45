"""The scheduler's window loop: fire settled arenas, work between fires, raise the target.

:meth:`WindowLoop.run_window` runs one collect window until the records below the target level
reach the floor (``runtime.py``'s header explains why that makes batches independent of timing);
the quiescence ladder (close and fire open arenas, release gated cache hits, the stall ladder)
lives in :meth:`WindowLoop._loop`.
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np

from reinfors.jit import arena as _arena
from reinfors.jit import engine_codes as C
from reinfors.jit import rings

from .firing import Pipe

_CLOSED = int(_arena.CLOSED)


class KernelError(RuntimeError):
    """An invariant inside a worker kernel failed (a bug; the engine stops cleanly)."""


_ERRORS = {
    C.ERR_REC_OVERFLOW: "record pool overflow",
    C.ERR_NO_ARENA: "no free arena (pool exhausted)",
    C.ERR_TRAJ_OVERFLOW: "trajectory list overflow",
    C.ERR_SPAN_OVERFLOW: "span table overflow (an arena received more spans than rows)",
    C.ERR_TREE_OVERFLOW: "search tree overflow (more nodes than the tree was sized for)",
}


class WindowLoop:
    """One window's scheduler loop (a mixin of ``Runtime``)."""

    def _check_error(self) -> None:
        code = int(self.ctl[C.C_ERROR])
        if code:
            raise KernelError(f"reinfors engine kernel error: {_ERRORS.get(code, code)}")

    def run_window(self, floor: int, fns, validate, tele: dict, progress=None) -> int:
        """Collect until the records below the target level reach ``floor``; returns the record
        count (records ``[0, count)`` of the pool, in kernel order)."""
        G = self.G
        ctl = self.ctl
        base = int(self._arrays["sinfo"][:, C.SI_LEVEL].min())
        self.window_base = base
        # Records a previous window completed beyond its cut (see _cut_at) count first; when they
        # already reach the floor, the window delivers from them without running a decision.
        carried = self.carried()
        if carried >= floor:
            self.cut = self._cut_at(floor)
            return carried
        target = base + max(1, math.ceil((floor - carried) / (G * self.rate)))
        self._ensure_capacity(target - base)
        ctl[C.C_TARGET] = target
        ctl[C.C_ABORT] = 0
        ctl[C.C_FULL] = 0
        ctl[C.C_WAKE] = 0
        self.window_acc[:] = 0
        if not self.cost.accelerator_like():
            self._set_targets()
            return self._loop(floor, fns, validate, tele, progress, base, carried, target)
        if not self.pipelined_arenas and not self.cohorts.closing:
            # The callback turned out accelerator-like: arenas for its largest batches, once
            # (between windows; an inference cache starts empty again, as on a change of routes).
            self.pipelined_arenas = True
            if self._pipelined_capacity() > self.capacity:
                with self._helpers_out():
                    self._size_routes(self.n_routes)
                    self._alloc_routes()
        # Pipelined (firing.py): the callback runs on this (the caller's) thread, the loop below
        # on a scheduler thread that is also a worker.
        pipe = self._pipe = Pipe()
        self._validators = [validate, validate.clone()]
        self._policy.window_start()
        self._set_targets()
        result: dict = {}

        def scheduler() -> None:
            try:
                result["count"] = self._loop(floor, fns, None, tele, progress, base, carried, target)
            except BaseException as exc:  # noqa: BLE001 - raised on the caller's thread below
                result["error"] = exc
            finally:
                pipe.finish()

        thread = threading.Thread(target=scheduler, name="reinfors-scheduler", daemon=True)
        thread.start()
        try:
            self._serve(pipe, fns, tele)
        except BaseException:
            # An interrupt outside a call (the call's own errors are kept in self.error): stop
            # the scheduler's loop and the workers, so the join below returns; the engine
            # discards this runtime.
            pipe.broken = True
            self.ctl[C.C_STOP] = 1
            pipe.wake.set()
            raise
        finally:
            thread.join()
            self._pipe = None
            self._set_targets()
        if "error" in result:
            raise result["error"]
        return result["count"]

    def _loop(self, floor, fns, validate, tele, progress, base, carried, target) -> int:
        """The window's scheduler loop (see :meth:`run_window`): fire settled arenas, work as a
        worker between fires, raise the target until the floor is met."""
        G = self.G
        k, ctl = self.k, self.ctl
        pipe = self._pipe
        k.unpark_all(self.E)
        self._queue_emitting()
        self._start_helpers()
        helpers = self._helpers
        if helpers is not None:
            helpers.wake()
        stall = [0] * self.n_routes
        last_fires = list(self._route_fires)
        prev_count, prev_levels = carried, 0  # the records and levels at the last raise
        # The stall ladder serves the cache's gated hits and per-player routes without cohorts;
        # a cohort's round closes its arenas on every route at once (cohorts.py).
        ladder = not self.cohorts.closing and (self.n_routes > 1 or bool(self.infer_cache))
        aborting = False
        while True:
            if self.abort_requested and not aborting:
                # Every slot parks at its next decision boundary (a search in progress finishes
                # its decision on zero outputs first); ``_fire`` stops calling the callbacks.
                aborting = True
                ctl[C.C_ABORT] = 1
            if pipe is not None and pipe.broken:
                raise KernelError("collection interrupted on the collecting thread")
            ctl[C.C_FULL] = 0
            k.work(self.E, True, 0)
            self._check_error()
            fired = self._complete()
            while pipe is None or pipe.can_submit():
                code = int(k.find_fireable(self.E, self.spans, self.span_n, self.window_acc))
                if code == -1:
                    if self.infer_cache and self._fire_demand(fns, validate, tele):
                        fired += 1
                        continue
                    break
                if code <= -2:
                    raise KernelError("a worker poisoned an arena")
                r, i = divmod(code, self.n_arenas)
                self._fire(r, i, fns, validate, tele)
                fired += 1
            if fired:
                if helpers is not None:
                    helpers.wake()
                # Stall ladder: a route with unresolved demand (rows in its open arena, or
                # gated cache hits) that has not advanced (fired) across 8 real fires
                # engine-wide is closed and fired as a partial batch — or, holding only gated
                # hits, released without a callback call.  (A single route without the cache
                # advances with every fire: nothing to check.)
                gated_n = self._arrays["gated_n"]
                for r in range(self.n_routes if ladder else 0):
                    cur = int(ctl[C.C_ROUTE_CUR + 8 * r])
                    fill = int(k.arena_fill(self.E, r, cur))
                    gated = int(gated_n[r]) if self.infer_cache else 0
                    if (fill or gated) and self._route_fires[r] == last_fires[r]:
                        stall[r] += fired
                        if stall[r] >= 8 and (pipe is None or pipe.can_submit()):
                            if fill:
                                self._close_and_fire(r, fns, validate, tele)
                                tele["stall_closes"] += 1
                            else:
                                k.release_gated(self.E, r, self.ready_buf)
                                self._arrays["cctl"][C.CC_RELEASED] += 1
                            stall[r] = 0
                    else:
                        stall[r] = 0
                    last_fires[r] = self._route_fires[r]
                if progress is not None:
                    progress(int(ctl[C.C_EMITTED]))
                continue
            if int(ctl[C.C_INFLIGHT]) or rings.size(self.rdy[2]):
                if helpers is not None and not k.wait_progress(self.E, 100_000):
                    helpers.idle_event.wait(0.001)  # helpers still working on long tasks
                    helpers.idle_event.clear()
                continue
            if pipe is not None and pipe.outstanding:
                # Nothing to work on until a call returns (its slots then emit again).  An open
                # arena holding at least half its target is queued now, behind the call in
                # flight (the callback starts it the moment it returns the other: two batches
                # alternate); a smaller one waits for the rows still to come back.  Block (no
                # spin: the helpers poll, and a core must stay free for the callback's thread).
                if not self.cohorts.closing and pipe.can_submit() and self._queue_partial(fns, tele):
                    continue
                if not pipe.done and not pipe.returned:
                    pipe.wake.wait(0.05)  # set by the caller's thread as each call returns
                pipe.wake.clear()
                continue
            # Quiescent: nothing in flight, nothing ready.
            k.drain(self.E, self.spans, self.span_n, self.window_acc)  # the last Completed messages
            if int(self.window_acc[0]) >= G:
                # Before the scheduler reallocates, compacts or ends the window, every helper
                # must be out of the kernel (kernels address the state arrays by pointer).  The
                # other quiescence rungs below only fire and release: helpers keep polling.
                self._quiesce_helpers()
                # Every slot sent its Completed message: the floor is counted from messages.
                fresh = int(self.window_acc[1])
                count = carried + fresh
                levels = target - base
                if aborting:
                    return count  # the caller discards this window's records (reset_pool)
                if count >= floor:
                    self.levels_done += levels
                    self.records_done += fresh
                    self.rate = max(self.records_done / (G * self.levels_done), 1e-3)
                    self.cut = self._cut_at(floor)
                    return count
                # Raise the target deterministically (counts only, never timing) in steps that
                # do not overshoot: records arrive at episode ends (AlphaZero, TreeStrap, DQN),
                # so a young window counts none for many levels and then many per level.  The
                # step is what the records gained over the last raise (the marginal rate: the
                # window's average is diluted by its empty first levels) say is still missing,
                # and at most a quarter of the window so far (a first window of 256 Connect4
                # games stepping by half its levels decided ~16,000 records for a floor of
                # 2,000; a quarter bounds the overshoot at 25 % of the levels and costs a few
                # more raises, each one quiescence of the slots).
                step = max(1, levels // 4)
                gained, dl = count - prev_count, levels - prev_levels
                if gained > 0 and dl > 0:
                    extra = max(1, min(step, math.ceil((floor - count) * dl / gained)))
                else:
                    extra = step
                prev_count, prev_levels = count, levels
                target += extra
                self._ensure_capacity(target - base)
                ctl[C.C_TARGET] = target
                self.window_acc[0] = 0  # slots complete again at the new target
                k.unpark_all(self.E)
                self._queue_emitting()
                if helpers is not None:
                    helpers.wake()
                continue
            # Fire what is settled (a helper may have closed an arena full after the last poll),
            # then close every open arena that holds rows and fire those.
            # (A cohort's last worker closed its arenas already: cohorts.py.)
            for r in range(0 if self.cohorts.closing else self.n_routes):
                k.close_all_open(self.E, r)
            fired_here = 0
            while pipe is None or pipe.can_submit():  # nothing is in flight: every closed arena is settled now
                code = int(k.find_fireable(self.E, self.spans, self.span_n, self.window_acc))
                if code == -1:
                    break
                if code <= -2:
                    raise KernelError("a worker poisoned an arena")
                self._fire(*divmod(code, self.n_arenas), fns, validate, tele)
                fired_here += 1
            if self.infer_cache:
                # Quiescence also releases every route's gated hits (stale ones are demoted
                # into the route's open arena and fire on the next pass).
                for r in range(self.n_routes):
                    if int(self._arrays["gated_n"][r]):
                        k.release_gated(self.E, r, self.ready_buf)
                        fired_here += 1
            if not fired_here:
                self._stalls += 1
                if self._stalls > 1000:
                    raise KernelError(f"engine stalled: slots blocked with nothing in flight ({self._diagnose()})")
                time.sleep(0.0001)  # let late commits become visible, then poll again
                continue
            self._stalls = 0
            if helpers is not None:
                helpers.wake()

    def request_abort(self) -> None:
        """Ask the running ``run_window`` to end early (thread-safe: one attribute store).

        Checked once per scheduler iteration: no callback is called any more (fires route all-zero
        outputs, as after a callback error) and every slot parks at its next decision boundary, so
        the window ends within about one fire.  Its records are meaningless: the caller discards
        them with ``reset_pool`` and clears ``abort_requested`` before the next window."""
        self.abort_requested = True

    def _diagnose(self) -> str:
        sinfo = self._arrays["sinfo"]
        ctl_words = self._arrays["arena_ctl"]
        arenas = [(i, bool(_arena.is_closed(w)), int(_arena.cursor_of(w)), int(self._arrays["arena_done"][i]), int(self.span_n[i]))
                  for i, w in enumerate(ctl_words) if w]  # fmt: skip
        return (f"status counts {np.bincount(sinfo[:, C.SI_STATUS], minlength=5).tolist()}, "
                f"completed {self.window_acc.tolist()}, arenas (i, closed, cursor, settled, spans) {arenas}")  # fmt: skip

    def _fire_demand(self, fns, validate, tele) -> bool:
        """Capacity rung counting gated hits (``demand_full``): fire the route's open arena
        early, or release its hits without a call when the arena is empty."""
        r = int(self.k.demand_full(self.E))
        if r < 0:
            return False
        if not self._close_and_fire(r, fns, validate, tele):
            self.k.release_gated(self.E, r, self.ready_buf)
        return True

    def _queue_partial(self, fns, tele) -> bool:
        """Pipelined, production idle: close and queue the first route's open arena that holds
        at least half the fire target (see ``_loop``).  True when one was queued."""
        half = self._policy.partial_min
        words = self._arrays["arena_ctl"]
        for r in range(self.n_routes):
            cur = int(self.ctl[C.C_ROUTE_CUR + 8 * r])
            # The chain's current arena may be one that closed at its target and was queued
            # already (a writer moves the chain on only when it next reserves): not open.
            if int(words[r * self.n_arenas + cur]) & _CLOSED:
                continue
            if int(self.k.arena_fill(self.E, r, cur)) >= half:
                return self._close_and_fire(r, fns, None, tele)
        return False

    def _close_and_fire(self, r, fns, validate, tele) -> bool:
        i = int(self.k.close_open(self.E, r))
        if i < 0:
            return False
        # Writers finish their commits quickly; wait until the arena is settled and its span
        # table complete (every span message drained), then fire.
        ai = r * self.n_arenas + i
        while int(self.k.sealable(self.E, r, i)) != i or not self.k.spans_complete(
            self.E, self.spans, self.span_n, self.window_acc, ai
        ):
            self._check_error()
        self._fire(r, i, fns, validate, tele)
        return True

    def _queue_emitting(self) -> None:
        """Queue every slot that can run (EMIT or RESUME) — exactly once: only called while no
        slot is queued or in flight.  Clears the helpers' stop request."""
        self.ctl[C.C_STOP] = 0
        co = self.cohorts
        if co.closing:  # nothing queued or running: every cohort's active count starts at 0
            self.ctl[C.CTL_BASE + 8 * self.n_routes : C.CTL_BASE + 8 * (self.n_routes + 2 * co.count) : 8] = 0
        sinfo = self._arrays["sinfo"]
        ready = np.flatnonzero((sinfo[:, C.SI_STATUS] == C.ST_EMIT) | (sinfo[:, C.SI_STATUS] == C.ST_RESUME))
        if len(ready):
            self.k.push_ready(self.E, ready.astype(np.int64), len(ready))
