"""Shared pytest configuration for the reinfors test suite.

Markers (declared in pyproject.toml): ``slow`` for long runs, ``differential`` for comparisons
against reinfors==0.4.0 in its side venv (they skip cleanly when it is absent).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_TESTS = Path(__file__).resolve().parent

# The cold-start compile helper (reinfors/_runtime/compile_helper.py) puts a second core to work
# beside one cold process; the suite's precompile shares and xdist workers already use every
# core, so a helper would only add processes.  tests/engine/test_compile_helper.py turns it on.
os.environ.setdefault("REINFORS_COMPILE_HELPER", "0")


def _whole_suite(config) -> bool:
    """True when the run is the suite (no paths given, or only the tests directory)."""
    args = [a for a in config.args if not a.startswith("-")]
    return all(Path(a.split("::")[0]).resolve() == _TESTS for a in args) if args else True


def pytest_sessionstart(session):
    """xdist controller of a whole-suite run: compile the widely shared kernel modules once, in
    parallel shares (``tests/precompile.py``), before the workers start and compile them twice.
    ``REINFORS_TEST_PRECOMPILE=0`` turns it off, ``=1`` forces it for any selection."""
    config = session.config
    n = getattr(config.option, "numprocesses", None) or 0
    flag = os.environ.get("REINFORS_TEST_PRECOMPILE", "")
    if hasattr(config, "workerinput") or flag == "0" or not isinstance(n, int) or n < 2:
        return
    if flag != "1" and not _whole_suite(config):
        return
    shares = min(n, os.cpu_count() or 1)
    t0 = time.perf_counter()
    claims = tempfile.mkdtemp(prefix="reinfors-precompile-")  # the processes claim jobs here
    procs = [
        subprocess.Popen(
            [sys.executable, str(_TESTS / "precompile.py"), claims],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(shares)
    ]
    outs = [p.communicate(timeout=1800)[0] for p in procs]
    shutil.rmtree(claims, ignore_errors=True)
    tr = config.pluginmanager.get_plugin("terminalreporter")
    say = tr.write_line if tr is not None else print
    for p, out in zip(procs, outs, strict=True):
        if p.returncode != 0:  # the tests themselves will meet (and report) the same failure
            say(f"precompile share failed (exit {p.returncode}); the workers compile lazily:\n{out[-2000:]}")
    busy = [sum(float(x) for x in re.findall(r"^precompile .*: ([0-9.]+) s$", out, re.M)) for out in outs]
    say(
        f"precompiled the shared kernel modules in {shares} processes: {time.perf_counter() - t0:.0f} s "
        f"(busy {' / '.join(f'{b:.0f}' for b in busy)} s)"
    )
