"""Show a cold Numba compile while it runs, so a first use never looks like a hang.

A warm process loads every kernel from the on-disk cache in well under a second and prints
nothing.  A cold one compiles for seconds to tens of seconds; while it does, stderr shows:

* in a terminal (or with ``REINFORS_COMPILE_PROGRESS=1``): a tqdm bar of the kernels compiled
  out of those planned (when the caller knows its plan: an engine's first collect), the elapsed
  time and what is compiling right now (the outermost kernel and the function being typed inside
  it);
* otherwise (logs, CI, ``REINFORS_COMPILE_PROGRESS=0``): one line per subject and process, naming
  what is compiling and the cache directory.

Only real compiles count: Numba fires a ``numba:compile`` event for every compilation, and never
for a load from the cache, so a slow callback on a warm cache is not mistaken for a compile.  A
*top-level* compile (not one nested inside another's typing) is one kernel.

Two ways in:

* :func:`compile_notice` wraps a known first use (an engine's first collect) under a subject, with
  an optional planned total and records bar (whose description then reads "compiling kernels");
  a helper process compiling part of the plan reports its kernels through :meth:`Session.advance`;
* any other reinfors compile (``Env``, ``choose``, ``Arena``, the solvers, a user game's kernels)
  is picked up by the ambient watcher: a burst of compiles that lasts longer than
  :data:`AMBIENT_DELAY` seconds gets a bar (or a line) of its own, named after the module being
  compiled, which closes once compiling has stopped for a moment.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from contextlib import contextmanager

from numba.core import event as _event

from reinfors.jit import _compile

__all__ = ["compile_notice", "Session", "bar_mode", "AMBIENT_DELAY"]

ENV = "REINFORS_COMPILE_PROGRESS"
AMBIENT_DELAY = 1.0  # seconds a compile burst runs before it is shown
_IDLE_END = 0.75  # seconds without a compile that end an ambient burst
_TICK = 0.2  # refresh period of a shown bar

_said: set[str] = set()
_lock = threading.RLock()


def bar_mode() -> bool:
    """A bar (True) or one line per subject (False): ``REINFORS_COMPILE_PROGRESS`` when set,
    else whether stderr is a terminal."""
    raw = os.environ.get(ENV, "").strip().lower()
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


def _describe(disp) -> tuple[str, str]:
    """``(module, name)`` of the dispatcher a compile event is about."""
    pf = getattr(disp, "py_func", None)
    if pf is None:
        return "", "?"
    return getattr(pf, "__module__", "") or "", getattr(pf, "__name__", "?")


def _module_subject(module: str) -> str:
    """A readable subject for a module's kernels (generated modules: ``<game>_<kind>_<hash>``)."""
    if module.startswith("reinfors._generated."):
        stem = module.rsplit(".", 1)[-1]
        parts = stem.rsplit("_", 2)
        if len(parts) == 3:
            return f"{parts[0]} ({parts[1]} kernels)"
        return stem
    return module or "Numba functions"


class _Compiles(_event.Listener):
    """Every Numba compile of this process (any thread): the stack of functions being compiled,
    the count of finished top-level compiles, and when the last one started or ended."""

    def __init__(self):
        self.started = 0
        self.top_done = 0
        self.stack: list[tuple[str, str]] = []
        self.last = 0.0
        self.sessions: list[Session] = []
        self.ambient: _Ambient | None = None

    @property
    def active(self) -> int:
        return len(self.stack)

    def on_start(self, event):
        mod, name = _describe((event.data or {}).get("dispatcher"))
        with _lock:
            self.started += 1
            self.stack.append((mod, name))
            self.last = time.perf_counter()
            if not self.sessions and mod.startswith("reinfors") and self.ambient is None:
                self.ambient = _Ambient()
                self.ambient.start()

    def on_end(self, event):
        with _lock:
            if self.stack:
                self.stack.pop()
            self.last = time.perf_counter()
            if not self.stack:
                self.top_done += 1
                for s in self.sessions:
                    if s.counting:
                        s.n += 1

    def current(self) -> str:
        """What is compiling: the outermost function and, when different, the innermost."""
        with _lock:
            if not self.stack:
                return ""
            outer, inner = self.stack[0][1], self.stack[-1][1]
        return outer if outer == inner else f"{outer} > {inner}"


_COMPILES = _Compiles()
_event.register("numba:compile", _COMPILES)


def _compiled_since(mark: int) -> bool:
    with _lock:
        return _COMPILES.active > 0 or _COMPILES.started > mark


def _line(subject: str) -> None:
    """The one log line per subject and process."""
    with _lock:
        if subject in _said:
            return
        _said.add(subject)
    print(
        f"reinfors: compiling Numba kernels for {subject} (first run only; cached afterwards in "
        f"{_compile.cache_dir()}) ...",
        file=sys.stderr,
        flush=True,
    )


class _Display:
    """The bar (or the line) of one subject, created when a compile has run long enough."""

    def __init__(self, subject: str, total: int | None):
        self.subject = subject
        self.tq = None
        if bar_mode():
            from tqdm.auto import tqdm

            self.tq = tqdm(
                total=total,
                desc=f"reinfors: compiling {subject}",
                unit="kernel",
                file=sys.stderr,
                leave=True,
                dynamic_ncols=True,
                mininterval=0.0,
                bar_format="{desc}: {n_fmt}/{total_fmt} kernels [{elapsed}] {postfix}"
                if total
                else "{desc}: {n_fmt} kernels [{elapsed}] {postfix}",
            )
        else:
            _line(subject)

    def refresh(self, n: int, total: int | None, what: str) -> None:
        tq = self.tq
        if tq is None:
            return
        if total is not None and total != tq.total:
            tq.total = max(total, n)
        tq.n = n if tq.total is None else min(n, tq.total)
        tq.set_postfix_str(what, refresh=False)
        tq.refresh()

    def close(self, n: int, cached: str = "") -> None:
        tq = self.tq
        if tq is None:
            return
        tq.total = n  # the planned kernels not compiled here were loaded from the cache or unused
        tq.n = n
        tq.set_postfix_str(f"done{cached}", refresh=False)
        tq.refresh()
        tq.close()


class Session:
    """One announced first use (see :func:`compile_notice`): counts the top-level compiles while
    it is open plus the kernels a helper process reports, against the planned ``total``."""

    def __init__(self, subject: str, bar=None, delay: float = 1.0, desc: str = "collect", total: int | None = None):
        self.subject, self.bar, self.delay, self.desc = subject, bar, delay, desc
        self.total = total
        self.n = 0
        self.counting = True  # False while compiling something outside the plan (the callback probe)
        self.helper_name = ""
        self._display: _Display | None = None
        self._t0 = time.perf_counter()
        with _lock:
            self._mark = _COMPILES.started
        self._done = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="reinfors-compile-notice", daemon=True)

    def plan(self, total: int | None) -> None:
        """Set the number of kernels planned (None: unknown)."""
        with _lock:
            self.total = total

    def advance(self, name: str) -> None:
        """A kernel compiled elsewhere (the compile helper process) for this subject."""
        with _lock:
            self.n += 1
            self.helper_name = name

    def attach(self, bar) -> None:
        """A records bar (``collect(progress=True)``) whose description shows the compile."""
        self.bar = bar
        if bar is not None and self._display is not None:
            bar.set_description("compiling kernels (first run)", refresh=True)

    def detach(self) -> None:
        """Give the records bar back (its own description) before it closes."""
        bar, self.bar = self.bar, None
        if bar is not None and bar.desc != self.desc:
            bar.set_description(self.desc, refresh=False)

    def _watch(self) -> None:
        while not self._done.wait(_TICK if self._display is not None else min(_TICK, self.delay)):
            if self._display is None:
                if time.perf_counter() - self._t0 < self.delay or not _compiled_since(self._mark):
                    continue
                self._display = _Display(self.subject, self.total)
                if self.bar is not None:
                    self.bar.set_description("compiling kernels (first run)", refresh=True)
            what = _COMPILES.current() or (f"helper: {self.helper_name}" if self.helper_name else "")
            self._display.refresh(self.n, self.total, what)

    def __enter__(self) -> Session:
        with _lock:
            _COMPILES.sessions.append(self)
        self._watcher.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._watcher.join()
        with _lock:
            if self in _COMPILES.sessions:
                _COMPILES.sessions.remove(self)
        if self._display is not None:
            self._display.close(self.n)
        self.detach()


@contextmanager
def compile_notice(subject: str, bar=None, delay: float = 1.0, desc: str = "collect", total: int | None = None):
    """Run the body; once it has run ``delay`` seconds and compiled anything, show the compile
    (a bar of kernels compiled out of ``total``, or one line per subject; see the module).  A
    records ``bar``, when given, shows "compiling kernels" in its description meanwhile.  Yields
    the :class:`Session` (``plan``, ``advance``, ``attach``)."""
    s = Session(subject, bar, delay, desc, total)
    with s:
        yield s


class _Ambient(threading.Thread):
    """Shows a burst of reinfors compiles that no session announced (Env, choose, Arena, solvers,
    a user game's kernels): after :data:`AMBIENT_DELAY` seconds, until compiling pauses."""

    def __init__(self):
        super().__init__(name="reinfors-compile-notice-ambient", daemon=True)
        with _lock:
            self.start_done = _COMPILES.top_done
            self.subject = _module_subject(_COMPILES.stack[0][0]) if _COMPILES.stack else "Numba functions"
        self.t0 = time.perf_counter()
        self.display: _Display | None = None
        self.finished = False

    def finish(self) -> None:
        """Close the bar (at its count) and stop watching: compiling paused, a session took
        over, or the interpreter exits."""
        with _lock:
            if self.finished:
                return
            self.finished = True
            if _COMPILES.ambient is self:
                _COMPILES.ambient = None
            n = _COMPILES.top_done - self.start_done
            if self.display is not None:
                self.display.close(n)

    def run(self) -> None:
        try:
            while not self.finished:
                time.sleep(_TICK)
                with _lock:
                    if self.finished:
                        return
                    idle = not _COMPILES.stack and time.perf_counter() - _COMPILES.last > _IDLE_END
                    if idle or _COMPILES.sessions:
                        self.finish()
                        return
                    if self.display is None and time.perf_counter() - self.t0 >= AMBIENT_DELAY:
                        self.display = _Display(self.subject, None)
                    if self.display is not None:
                        self.display.refresh(_COMPILES.top_done - self.start_done, None, _COMPILES.current())
        except Exception:  # noqa: BLE001 - a display problem must never break a compile
            with _lock:
                self.finished = True
                if _COMPILES.ambient is self:
                    _COMPILES.ambient = None


def _finish_ambient() -> None:
    """At exit: a bar still open (the program ended right after a compile) closes cleanly."""
    amb = _COMPILES.ambient
    if amb is not None:
        try:
            amb.finish()
        except Exception:  # noqa: BLE001 - stderr may be gone at exit
            pass


atexit.register(_finish_ambient)
