"""Tell the user when a first Numba compile is running, so a cold start never looks like a hang.

A warm process loads every kernel from the on-disk cache in well under a second; a cold one
compiles for tens of seconds.  :func:`compile_notice` wraps the first use of a kernel module: if it
is still running after ``delay`` seconds *and Numba has compiled something since it started* (a
``numba:compile`` event: cache loads never fire one, so a slow callback on a warm cache is not
mistaken for a compile), one line goes to stderr (what is compiling, that it is cached afterwards,
and where) — once per process and subject — and a tqdm bar, when given, shows "compiling" in its
description until the work ends.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager

from numba.core import event as _event

from reinfors.jit import _compile

_said: set[str] = set()
_lock = threading.Lock()


class _Compiles(_event.Listener):
    """Counts Numba compiles (started and in progress) in this process, on any thread."""

    def __init__(self):
        self.started = 0
        self.active = 0

    def on_start(self, event):
        with _lock:
            self.started += 1
            self.active += 1

    def on_end(self, event):
        with _lock:
            self.active -= 1


_COMPILES = _Compiles()
_event.register("numba:compile", _COMPILES)


def _compiled_since(mark: int) -> bool:
    with _lock:
        return _COMPILES.active > 0 or _COMPILES.started > mark


def _announce(subject: str, bar) -> None:
    with _lock:
        first = subject not in _said
        _said.add(subject)
    if first:
        print(
            f"reinfors: compiling Numba kernels for {subject} (first run only; cached afterwards in "
            f"{_compile.cache_dir()}) ...",
            file=sys.stderr,
            flush=True,
        )
    if bar is not None:
        bar.set_description("compiling kernels (first run)", refresh=True)


@contextmanager
def compile_notice(subject: str, bar=None, delay: float = 1.0, desc: str = "collect"):
    """Run the body; announce a compile once it has run ``delay`` seconds and compiled anything."""
    with _lock:
        mark = _COMPILES.started
    done = threading.Event()

    def watch():
        while not done.wait(delay):
            if _compiled_since(mark):
                _announce(subject, bar)
                return

    watcher = threading.Thread(target=watch, name="reinfors-compile-notice", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        if bar is not None and bar.desc != desc:
            bar.set_description(desc, refresh=False)
