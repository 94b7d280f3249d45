"""A second process compiles a cold engine's scheduler kernels while this one compiles ``work``.

A first collect compiles two groups of kernels into the on-disk cache:

* ``work``, the workers' kernel (every decision, search and record phase inlined or called from
  it): about 70% of the compile, 16-20 s of a cold Connect4 process on a 2-core machine;
* the scheduler's own kernels (``start_slots``, ``find_fireable``, ``finish_fire``, the record
  hand-over, ...), compiled one by one as the first window reaches them: the other 30%.

Numba compiles under one lock per process, so the second group used to wait for the first.  On a
machine with at least two usable cores, :func:`compile_cold` starts a helper process
(``python -m reinfors._runtime.compile_helper``) that builds the same engine from its resolved
config and compiles the second group (``Runtime.precompile_plan``) while this process compiles
``work``; the scheduler's calls then load their kernels from the cache.  Kernels both groups call
are compiled by whichever process gets there first and cached for both.

The helper runs only when it can help and cannot differ: the disk cache is on, ``work`` is not
cached yet, the config rebuilds *this* engine's kernel module (catalogue games; a user game built
from a module or a notebook cell is not rebuilt in another process), and the switch
``REINFORS_COMPILE_HELPER`` is not ``0``.  Any failure of the helper (it exits, is slow, crashes)
leaves the kernels to compile in this process as before: the helper only ever fills the cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from numba.core import types

from reinfors.jit import _compile

__all__ = ["compile_cold", "enabled"]

# The signature every ``work`` call passes: (address table, helper?, spin budget).
_WORK_SIG = (types.Array(types.int64, 2, "C"), types.boolean, types.int64)
_WAIT_MIN_S = 10.0  # the least a helper is waited for after ``work`` compiled (see compile_cold)
_ENV = "REINFORS_COMPILE_HELPER"


def enabled() -> bool:
    """The switch, the disk cache and a second core (the helper runs beside this process).  A
    frozen application (PyInstaller and the like) has no interpreter to run the helper module
    with: ``sys.executable`` would start the application itself."""
    if os.environ.get(_ENV, "").strip().lower() in ("0", "false", "no", "off"):
        return False
    if getattr(sys, "frozen", False):
        return False
    if not _compile.CACHE_ENABLED:
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores >= 2 and bool(sys.executable)


def _work_cached(k) -> bool:
    """``work`` of module ``k`` is compiled in this process or has a cache index on disk."""
    if k.work.signatures:
        return True
    try:
        return Path(k.work._cache._cache_file._index_path).exists()
    except AttributeError:  # another Numba's cache layout: do not guess
        return True


def _rebuilds(config: dict, k) -> bool:
    """``config`` builds an engine on this very kernel module (no compile: modules are loaded
    lazily and ``kernels_for`` returns the module this process already imported)."""
    from reinfors.config import engine_from_config

    try:
        other = engine_from_config(config)
        return other._kernel_module() is k
    except Exception:  # noqa: BLE001 - a user game or any config this process cannot rebuild
        return False


def compile_cold(engine, k) -> None:
    """Compile ``work`` of kernel module ``k`` here and, when it is cold and a helper can build
    the same module, the scheduler's kernels in a helper process at the same time."""
    if not enabled() or _work_cached(k):
        return
    try:
        config = engine.resolved_config()
    except Exception:  # noqa: BLE001 - nothing to rebuild from: compile here as before
        return
    config["engine"] = {**config.get("engine", {}), "n_games": 1, "n_threads": 1, "batch_size": None}
    if not _rebuilds(config, k):
        return
    env = {**os.environ, _ENV: "0"}  # the helper's own engine never starts a helper
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "reinfors._runtime.compile_helper", json.dumps(config), k.__name__],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        return
    try:
        t0 = time.perf_counter()
        k.work.compile(_WORK_SIG)
        # The helper's share is about a third of work's compile: give it as long again as work took
        # (at least 10 s, for its start-up), then compile what it did not finish here.
        try:
            proc.wait(timeout=max(_WAIT_MIN_S, time.perf_counter() - t0))
        except subprocess.TimeoutExpired:
            pass
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _helper_main(config_json: str, module_name: str) -> int:
    """The helper process: rebuild the engine, check it runs on the same kernel module, compile
    its runtime's scheduler kernels (``start_slots`` compiles as the runtime is built)."""
    from reinfors.config import engine_from_config

    engine = engine_from_config(json.loads(config_json))
    if engine._kernel_module().__name__ != module_name:
        return 2
    rt = engine._runtime()
    for disp, args in rt.precompile_plan():
        disp.compile(tuple(disp.typeof_pyval(a) for a in args))
    return 0


if __name__ == "__main__":
    sys.exit(_helper_main(sys.argv[1], sys.argv[2]))
