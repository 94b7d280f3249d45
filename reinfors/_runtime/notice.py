"""Tell the user when a first Numba compile is running, so a cold start never looks like a hang.

A warm process loads every kernel from the on-disk cache in well under a second; a cold one
compiles for tens of seconds.  :func:`compile_notice` wraps the first use of a kernel module: if it
is still running after ``delay`` seconds, one line goes to stderr (what is compiling, that it is
cached afterwards, and where) — once per process and subject — and a tqdm bar, when given, shows
"compiling" in its description until the work ends.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager

from reinfors.jit import _compile

_said: set[str] = set()
_lock = threading.Lock()


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
    """Run the body; announce a compile if it is still running after ``delay`` seconds."""
    timer = threading.Timer(delay, _announce, args=(subject, bar))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if bar is not None and bar.desc != desc:
            bar.set_description(desc, refresh=False)
