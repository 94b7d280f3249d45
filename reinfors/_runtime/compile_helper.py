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
import threading
import time
from pathlib import Path

from numba.core import types

from reinfors.jit import _compile

from .budget import available_cores

__all__ = ["Helper", "compile_cold", "enabled", "late_callees", "plan_of", "planned_total", "precompile", "start_helper"]

# The signature every ``work`` call passes: (address table, helper?, spin budget).
_WORK_SIG = (types.Array(types.int64, 2, "C"), types.boolean, types.int64)
_WAIT_MIN_S = 10.0  # the least a helper is waited for after ``work`` compiled (see compile_cold)
# Callees of ``work`` a search family's helper compiles first, in this order: those ``work``'s
# depth-first compile reaches last (the decision after a search, then the tick's end: ~2 s and
# ~1.2 s of a cold Connect4 AlphaZero, reached ~10 s and ~13 s in).  Cached by then, the parent
# loads them instead of compiling them (cold c4_az_zero 16.0-16.8 -> 12.8-12.9 s to the first
# batch).  A model-free family's ``work`` reaches the tick's end ~3 s in, too early for the tick
# itself; its helper compiles the two big callees the tick reaches inside: the DQN flush (~1.1 s,
# compiled into PPO modules too: the learner is a runtime switch) and the request (~1.5 s).
# Cold quickstart 11.24 / 11.76 -> 9.64 / 9.17 s (alternating, compare.py --mode cold).
_AT = types.Array(types.int64, 2, "C")
_SEARCH_CALLEES = (("_search_decide", (_AT, types.int64)), ("_finish_tick", (_AT, types.int64, types.int64)))
_MODELFREE_CALLEES = (("_dqn_flush", (_AT, types.int64, types.int64)), ("_request", (_AT, types.int64, types.int64, types.int64)))
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
    return available_cores() >= 2 and bool(sys.executable)


def _work_cached(k) -> bool:
    """``work`` of module ``k`` is compiled in this process or has a cache index on disk."""
    if k.work.signatures:
        return True
    try:
        return Path(k.work._cache._cache_file._index_path).exists()
    except AttributeError:  # another Numba's cache layout: do not guess
        return True


# How a resolved config becomes an engine: ``reinfors.config.engine_from_config``, which registers
# itself here when it loads (:func:`set_rebuilder`).  This module never imports the public layer,
# so no import circle runs through it (the engine imports this module).
_rebuild = None


def set_rebuilder(fn) -> None:
    """Register ``fn(config) -> Engine`` (``reinfors.config`` does, on import)."""
    global _rebuild
    _rebuild = fn


def _rebuilds(config: dict, k) -> bool:
    """``config`` builds an engine on this very kernel module (no compile: modules are loaded
    lazily and ``kernels_for`` returns the module this process already imported)."""
    if _rebuild is None:
        return False
    try:
        other = _rebuild(config)
        return other._kernel_module() is k
    except Exception:  # noqa: BLE001 - a user game or any config this process cannot rebuild
        return False


def _cached_on_disk(disp) -> bool:
    """``disp`` has a cache index on disk (some signature of it was compiled by some process)."""
    try:
        return Path(disp._cache._cache_file._index_path).exists()
    except AttributeError:
        return False


def plan_of(rt_like) -> list[tuple]:
    """``Runtime.precompile_plan`` of a runtime, or of a stand-in holding only what the plan reads
    (``k``, ``width``, ``infer_cache``): the kernels are the same, only the argument values
    differ."""
    from reinfors._runtime.runtime import Runtime

    return Runtime.precompile_plan(rt_like)


def plan_kernels(engine, k) -> list | None:
    """The dispatchers a first collect of ``engine`` on module ``k`` runs: ``work``,
    ``start_slots`` and the scheduler's plan (one entry per signature).  None when the plan cannot
    be listed without a runtime."""
    import types as _types

    try:
        stand_in = _types.SimpleNamespace(
            k=k, E=None, spans=None, span_n=None, window_acc=None, ready_buf=None,
            width=1, infer_cache=getattr(engine, "_infer_cache", 0),
        )  # fmt: skip
        plan = plan_of(stand_in)
    except Exception:  # noqa: BLE001 - a runtime whose plan reads more: count without a total
        return None
    return [k.work, k.start_slots] + [disp for disp, _ in plan]


def planned_total(engine, k) -> int | None:
    """How many kernels a first collect of ``engine`` on module ``k`` will compile: those of
    :func:`plan_kernels` not compiled in this process nor cached on disk already.  None when the
    plan cannot be listed (the bar then counts without a total)."""
    kernels = plan_kernels(engine, k)
    if kernels is None:
        return None
    return sum(1 for disp in kernels if not (disp.signatures or _cached_on_disk(disp)))


def precompile(engine, report=None) -> int:
    """Compile (or load) every kernel a window of ``engine`` can call, in this process: ``work``,
    ``start_slots`` (building the runtime) and the scheduler's plan.  ``report(name)`` is called
    after each.  Returns the number of kernels gone through."""
    k = engine._kernel_module()
    n = 0
    if not k.work.signatures:
        k.work.compile(_WORK_SIG)
    n += 1
    if report is not None:
        report("work")
    rt = engine._runtime()  # compiles start_slots
    n += 1
    if report is not None:
        report("start_slots")
    for disp, args in rt.precompile_plan():
        disp.compile(tuple(disp.typeof_pyval(a) for a in args))
        n += 1
        if report is not None:
            report(disp.py_func.__name__)
    return n


def _pump(stream, session) -> None:
    """Forward the helper's one-line-per-kernel reports to the compile bar's session."""
    try:
        for line in stream:
            name = line.strip()
            if name and session is not None:
                session.advance(name)
    except (OSError, ValueError):
        pass


class Helper:
    """A running helper process and the thread forwarding its reports to the compile bar."""

    def __init__(self, proc, pump):
        self.proc, self.pump = proc, pump

    def stop(self) -> None:
        """End the helper (at once if it still runs) and its report thread.  Idempotent."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.pump.join(timeout=1.0)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def start_helper(engine, k, session=None) -> Helper | None:
    """Start the helper process for ``engine``'s cold module ``k`` (None when it cannot help, see
    the module header).  A first collect starts it before the callback probe, so it is compiling
    while the probe compiles the game's functions; :func:`compile_cold` then compiles ``work``
    and waits for it."""
    if not enabled() or _work_cached(k):
        return None
    try:
        config = engine.resolved_config()
    except Exception:  # noqa: BLE001 - nothing to rebuild from: compile here as before
        return None
    config["engine"] = {**config.get("engine", {}), "n_games": 1, "n_threads": 1, "batch_size": None}
    if not _rebuilds(config, k):
        return None
    env = {**os.environ, _ENV: "0"}  # the helper's own engine never starts a helper
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "reinfors._runtime.compile_helper", json.dumps(config), k.__name__],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
    except OSError:
        return None
    pump = threading.Thread(target=_pump, args=(proc.stdout, session), name="reinfors-compile-notice-helper", daemon=True)
    pump.start()
    return Helper(proc, pump)


def compile_cold(engine, k, session=None, helper: Helper | None = None) -> None:
    """Compile ``work`` of kernel module ``k`` here and, when it is cold and a helper can build
    the same module, the scheduler's kernels in a helper process at the same time (``helper``,
    one already started by :func:`start_helper`, or one started here).  ``session`` (a
    ``notice.Session``) counts the kernels the helper reports."""
    if _work_cached(k):
        return
    if helper is None:
        helper = start_helper(engine, k, session)
        if helper is None:
            return
    try:
        t0 = time.perf_counter()
        k.work.compile(_WORK_SIG)
        # The helper's share is about a third of work's compile: give it as long again as work took
        # (at least 10 s, for its start-up), then compile what it did not finish here.
        try:
            helper.proc.wait(timeout=max(_WAIT_MIN_S, time.perf_counter() - t0))
        except subprocess.TimeoutExpired:
            pass
    finally:
        helper.stop()


def late_callees(k) -> tuple:
    """``(name, signature)`` of the callees of ``work`` that kernel module ``k``'s helper compiles
    first: :data:`_SEARCH_CALLEES` for a search family, :data:`_MODELFREE_CALLEES` for a
    model-free one, none otherwise."""
    decide = getattr(k, "_search_decide", None)
    if decide is not None and decide.targetoptions.get("inline") != "always":  # a search family
        return _SEARCH_CALLEES
    return _MODELFREE_CALLEES if getattr(k, "FAM_MODELFREE", False) else ()


def _helper_main(config_json: str, module_name: str) -> int:
    """The helper process: rebuild the engine, check it runs on the same kernel module, compile
    the late callees of ``work`` (:func:`late_callees`) and its runtime's scheduler kernels
    (``start_slots`` compiles as the runtime is built).  ``-m`` imported the ``reinfors``
    package first, so ``reinfors.config`` has registered itself."""
    if _rebuild is None:
        return 2
    engine = _rebuild(json.loads(config_json))
    k = engine._kernel_module()
    if k.__name__ != module_name:
        return 2
    for name, sig in late_callees(k):
        getattr(k, name).compile(sig)  # not on the parent's bar (it counts work as one kernel)
    rt = engine._runtime()
    print("start_slots", flush=True)
    for disp, args in rt.precompile_plan():
        disp.compile(tuple(disp.typeof_pyval(a) for a in args))
        print(disp.py_func.__name__, flush=True)  # one line per kernel: the parent's compile bar
    return 0


if __name__ == "__main__":
    # ``-m`` runs this file as ``__main__``, a second copy of the module: ``reinfors.config``
    # registered its rebuilder with the package's copy (imported with the package), so run that
    # copy's ``_helper_main`` (this copy's ``_rebuild`` is None: the helper would exit at once).
    _package_copy = sys.modules.get("reinfors._runtime.compile_helper")
    sys.exit((_package_copy or sys.modules[__name__])._helper_main(sys.argv[1], sys.argv[2]))
