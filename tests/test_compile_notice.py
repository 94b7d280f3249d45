"""The first-compile notice: one stderr line per subject while a slow first use runs, shown in a
progress bar's description, and nothing at all for a fast (cached) start."""

from __future__ import annotations

import time

from reinfors._runtime import notice


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
        time.sleep(0.2)
    err = capsys.readouterr().err
    assert err.count("reinfors: compiling Numba kernels for game-x with policy + learner") == 1
    assert "first run only; cached afterwards in" in err
    assert bar.seen[0].startswith("compiling") and bar.desc == "collect"
    with notice.compile_notice("game-x with policy + learner", None, delay=0.01):
        time.sleep(0.1)
    assert capsys.readouterr().err == ""  # said once per subject and process


def test_fast_start_says_nothing(capsys):
    bar = _Bar()
    with notice.compile_notice("fast subject", bar, delay=0.5):
        pass
    time.sleep(0.6)
    assert capsys.readouterr().err == "" and bar.seen == []
