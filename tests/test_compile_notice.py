"""The first-compile notice: one stderr line per subject while a slow first use compiles, shown in
a progress bar's description; nothing for a fast (cached) start, nor for a slow body that compiles
nothing (a slow callback on a warm cache)."""

from __future__ import annotations

import re
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


def _frames(err: str) -> list[str]:
    """The bar's redraws (tqdm separates them with carriage returns)."""
    return [f.strip() for f in err.replace("\r", "\n").splitlines() if "kernels" in f]


def _count(frame: str) -> int:
    return int(re.search(r"(\d+)(?:/\d+)? kernels", frame).group(1))


def test_bar_counts_top_level_compiles_against_the_plan(capsys, monkeypatch):
    monkeypatch.setenv("REINFORS_COMPILE_PROGRESS", "1")
    with notice.compile_notice("bar subject", None, delay=0.01, total=3) as s:
        for k in range(3):
            _compile_something(10 + k)
            time.sleep(notice._TICK + 0.1)  # one redraw per kernel
    err = capsys.readouterr().err
    frames = [f for f in _frames(err) if "reinfors: compiling bar subject" in f]
    counts = [_count(f) for f in frames]
    assert counts == sorted(counts) and counts[0] < 3 and counts[-1] == 3  # it advanced to the total
    assert "3/3 kernels" in frames[-1] and "done" in frames[-1]
    assert s.n == 3
    assert "compiling Numba kernels for" not in err  # the bar replaces the log line


def test_helper_reports_advance_the_bar_and_the_probe_does_not(capsys, monkeypatch):
    monkeypatch.setenv("REINFORS_COMPILE_PROGRESS", "1")
    with notice.compile_notice("helper subject", None, delay=0.01, total=4) as s:
        s.counting = False
        _compile_something(20)  # outside the plan (the callback probe)
        s.counting = True
        s.advance("finish_fire")  # a kernel the helper process compiled
        _compile_something(21)
        time.sleep(notice._TICK + 0.1)
        assert s.n == 2
    assert "2/2 kernels" in _frames(capsys.readouterr().err)[-1]  # closed at what was compiled


def test_quiet_when_stderr_is_not_a_terminal(capsys, monkeypatch):
    monkeypatch.delenv("REINFORS_COMPILE_PROGRESS", raising=False)
    with notice.compile_notice("quiet subject", None, delay=0.01, total=2):
        _compile_something(30)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "compiling Numba kernels for quiet subject" in err


def test_ambient_compiles_of_reinfors_kernels_get_a_bar(capsys, monkeypatch):
    """A compile burst no session announced (Env, choose, Arena, solvers) gets its own bar,
    named after the generated module, which closes once compiling stops."""
    monkeypatch.setenv("REINFORS_COMPILE_PROGRESS", "1")
    monkeypatch.setattr(notice, "AMBIENT_DELAY", 0.05)
    ns = {"__name__": "reinfors._generated.mygame_modelfree_0123456789abcdef"}
    for k in range(4):
        exec(f"def f{k}(x):\n    return x * {k} + 2\n", ns)
        numba.njit(cache=False)(ns[f"f{k}"])(3)
        time.sleep(notice._TICK + 0.05)
    deadline = time.time() + 5
    while notice._COMPILES.ambient is not None and time.time() < deadline:
        time.sleep(0.05)
    frames = _frames(capsys.readouterr().err)
    assert frames and all("reinfors: compiling mygame (modelfree kernels)" in f for f in frames)
    assert "done" in frames[-1] and _count(frames[-1]) >= 3
