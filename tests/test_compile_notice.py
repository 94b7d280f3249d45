"""The first-compile notice: one stderr line per subject while a slow first use compiles, shown in
a progress bar's description; nothing for a fast (cached) start, nor for a slow body that compiles
nothing (a slow callback on a warm cache)."""

from __future__ import annotations

import time

import numba

from reinfors._runtime import notice


def _compile_something(k: int) -> None:
    """A real Numba compile (uncached, a fresh function object each call), then a pause."""

    @numba.njit(cache=False)
    def f(x):
        return x * k + 1

    f(3)
    time.sleep(0.1)


class _Bar:
    def __init__(self):
        self.desc = "collect"
        self.seen = []

    def set_description(self, d, refresh=True):
        self.desc = d
        self.seen.append(d)


def test_slow_first_use_is_announced_once_with_the_cache_dir(capsys):
    bar = _Bar()
    with notice.compile_notice("game-x with policy + learner", bar, delay=0.01):
        _compile_something(1)
    err = capsys.readouterr().err
    assert err.count("reinfors: compiling Numba kernels for game-x with policy + learner") == 1
    assert "first run only; cached afterwards in" in err
    assert bar.seen[0].startswith("compiling") and bar.desc == "collect"
    with notice.compile_notice("game-x with policy + learner", None, delay=0.01):
        _compile_something(2)
    assert capsys.readouterr().err == ""  # said once per subject and process


def test_fast_start_says_nothing(capsys):
    bar = _Bar()
    with notice.compile_notice("fast subject", bar, delay=0.5):
        pass
    time.sleep(0.6)
    assert capsys.readouterr().err == "" and bar.seen == []


def test_slow_body_without_a_compile_says_nothing(capsys):
    bar = _Bar()
    with notice.compile_notice("slow callback subject", bar, delay=0.01):
        time.sleep(0.2)
    assert capsys.readouterr().err == "" and bar.seen == []
