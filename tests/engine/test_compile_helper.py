"""The cold-start compile helper (``reinfors/_runtime/compile_helper.py``): the scheduler kernels'
plan covers every kernel call a window and its batch hand-over make, with the types they pass; the
helper runs only where it can rebuild the very same kernel module; and, end to end (slow: a cold
compile), a cold process compiles only ``work`` itself and gets the batch a warm one gets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import reinfors as rf
from reinfors._runtime import compile_helper
from reinfors.jit import outputs, records

G, P, L = rf.games, rf.policies, rf.learners


class _Recorder:
    """Stands in for a kernel module (or ``records`` / ``outputs``): every call through it is
    recorded as (dispatcher, argument types) and then made."""

    def __init__(self, mod, calls):
        self._mod, self._calls = mod, calls

    def __getattr__(self, name):
        disp = getattr(self._mod, name)
        if not hasattr(disp, "typeof_pyval"):
            return disp

        def call(*args):
            self._calls.add((disp, tuple(disp.typeof_pyval(a) for a in args)))
            return disp(*args)

        return call


def _pv(n, dtype):
    return lambda obs: (np.zeros((len(obs), n), dtype), np.zeros(len(obs), dtype))


COMPOSITIONS = {
    "c4_az_f32": (lambda: rf.Engine(G.Connect4(), rf.Reward(), P.AlphaZero(num_simulations=4), L.AlphaZero(), n_games=4), _pv(7, np.float32)),
    "c4_az_cache": (
        lambda: rf.Engine(G.Connect4(), rf.Reward(), P.AlphaZero(num_simulations=4), L.AlphaZero(), n_games=4, infer_cache=64),
        _pv(7, np.float32),
    ),
    "c4_ppo_f64": (lambda: rf.Engine(G.Connect4(), rf.Reward(), P.Ppo(), L.Ppo(), n_games=4), _pv(7, np.float64)),
    "c4_dqn": (
        lambda: rf.Engine(G.Connect4(), rf.Reward(), P.EpsilonGreedyQ(), L.Dqn(), n_games=4),
        lambda obs: np.zeros((len(obs), 1, 7)),
    ),
    "kuhn_ppo_per_player": (
        lambda: rf.Engine(G.KuhnPoker(), None, P.Ppo(), L.Ppo(), n_games=8),
        [_pv(2, np.float32), _pv(2, np.float32)],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_the_plan_covers_every_kernel_call_of_a_window(name, monkeypatch):
    make, infer = COMPOSITIONS[name]
    e = make()
    e.collect(8, infer)  # the runtime exists (and every kernel is compiled or loaded)
    rt = e._rt
    calls = set()
    monkeypatch.setattr(rt, "k", _Recorder(rt.k, calls))
    from reinfors import engine as engine_mod
    from reinfors._runtime import record_pool, routes

    for mod, attr, real in ((record_pool, "_records", records), (engine_mod, "_records", records), (routes, "_outputs", outputs)):
        monkeypatch.setattr(mod, attr, _Recorder(real, calls))
    for _ in range(3):
        e.collect(64, infer)
    monkeypatch.undo()
    plan = {(d, tuple(d.typeof_pyval(a) for a in args)) for d, args in rt.precompile_plan()}
    names = {d.py_func.__name__ for d, _ in calls}
    assert {"work", "find_fireable", "finish_fire", "legal_csr"} <= names  # the recorder saw the window
    missed = sorted(f"{d.py_func.__name__}{sig}" for d, sig in calls - plan if d is not rt.k.work)
    assert not missed, f"kernel calls the precompile plan misses: {missed}"


def test_the_helper_runs_only_where_it_rebuilds_the_same_module(monkeypatch):
    e = rf.Engine(G.Connect4(), rf.Reward(), P.Ppo(), L.Ppo(), n_games=2)
    k = e._kernel_module()
    config = e.resolved_config()
    assert compile_helper._rebuilds(config, k)
    # another family's module is not this one
    az = rf.Engine(G.Connect4(), rf.Reward(), P.AlphaZero(num_simulations=2), L.AlphaZero(), n_games=2)
    assert not compile_helper._rebuilds(config, az._kernel_module())
    # a user game has no catalogue entry another process could build it from
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from helpers import make_nim

    nim = rf.Engine(make_nim(4), rf.Reward(), P.Ppo(), L.Ppo(), n_games=2)
    assert not compile_helper._rebuilds(nim.resolved_config(), nim._kernel_module())
    monkeypatch.setenv("REINFORS_COMPILE_HELPER", "0")
    assert not compile_helper.enabled()
    monkeypatch.setenv("REINFORS_COMPILE_HELPER", "1")
    assert compile_helper.enabled() == (len(os.sched_getaffinity(0)) >= 2)
    with monkeypatch.context() as m:  # reverts only sys.frozen: the switch stays on below
        m.setattr(sys, "frozen", True, raising=False)  # sys.executable is the application
        assert not compile_helper.enabled()
    # a module whose work is compiled (or cached) never starts a helper
    e.collect(4, _pv(7, np.float32))
    assert compile_helper._work_cached(k)


_CHILD = textwrap.dedent(
    """
    import hashlib, json, sys
    import numpy as np
    from numba.core import event
    tops, depth = [], [0]
    class L(event.Listener):
        def on_start(self, ev):
            if depth[0] == 0:
                tops.append(ev.data["dispatcher"].py_func.__name__)
            depth[0] += 1
        def on_end(self, ev):
            depth[0] -= 1
    event.register("numba:compile", L())
    import reinfors as rf
    e = rf.Engine(rf.games.GridWorld(), rf.Reward(), rf.policies.Ppo(), rf.learners.Ppo(), n_games=4, seed=3)
    infer = lambda obs: (np.tanh(obs[:, :4] * 0.5), obs.sum(axis=1) * 0.01)
    b = e.collect(200, infer)
    h = hashlib.sha256()
    for f in ("obs", "players", "actions", "behavior_log_probs", "advantages", "returns"):
        h.update(np.ascontiguousarray(getattr(b, f)).tobytes())
    print(json.dumps({"tops": tops, "hash": h.hexdigest()}))
    """
)


@pytest.mark.slow
def test_a_cold_process_compiles_only_work_and_gets_the_warm_batch(tmp_path, monkeypatch):
    monkeypatch.setenv("REINFORS_COMPILE_HELPER", "1")  # (the suite's conftest turns it off)
    env = {**os.environ, "REINFORS_CACHE_DIR": str(tmp_path), "REINFORS_COMPILE_HELPER": "1"}

    def child():
        out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    if not compile_helper.enabled():
        pytest.skip("the compile helper needs two cores")
    cold = child()
    # Before work, the callback probe (reinfors/_runtime/probe.py) compiles the game's functions
    # and the output validators it runs on two real observations (work's callees either way).
    # Every other kernel of the window (start_slots, find_fireable, finish_fire, the batch
    # hand-over's; 11 compiles without the helper) is loaded from the helper's entries.
    from reinfors.jit.games import _contract

    probe = {*_contract.REQUIRED_FUNCTIONS, *_contract.OPTIONAL_FUNCTIONS, "finite_cols_values", "widen_rows"}
    assert cold["tops"][-1] == "work" and cold["tops"].count("work") == 1, cold["tops"]
    assert set(cold["tops"][:-1]) <= probe, cold["tops"]
    warm = child()
    assert warm["tops"] == [] and warm["hash"] == cold["hash"]


def test_the_helper_process_rebuilds_the_engine_and_reports_its_kernels():
    """``python -m reinfors._runtime.compile_helper`` runs as ``__main__``, a second copy of the
    module that ``reinfors.config`` never registered with: it must still rebuild the engine
    (it once exited with status 2 at once, and every cold start compiled alone)."""
    e = rf.Engine(G.GridWorld(), rf.Reward(), P.Ppo(), L.Ppo(), n_games=2)
    e.collect(8, lambda obs: (np.zeros((len(obs), 4), np.float32), np.zeros(len(obs), np.float32)))  # warm: loads
    config = e.resolved_config()
    config["engine"] = {**config["engine"], "n_games": 1, "n_threads": 1, "batch_size": None}
    env = {**os.environ, "REINFORS_COMPILE_HELPER": "0"}
    cmd = [sys.executable, "-m", "reinfors._runtime.compile_helper", json.dumps(config), e._kernel_module().__name__]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    reported = out.stdout.split()
    assert reported[0] == "start_slots" and {"find_fireable", "finish_fire"} <= set(reported)


_PROBE_FAILS = textwrap.dedent(
    """
    import json
    import numpy as np
    import reinfors as rf
    from reinfors._runtime import compile_helper
    started = []
    real = compile_helper.start_helper
    def spy(*a, **k):
        h = real(*a, **k)
        started.append(h)
        return h
    import reinfors.engine as engine_mod
    engine_mod.start_helper = spy
    e = rf.Engine(rf.games.GridWorld(), rf.Reward(), rf.policies.Ppo(), rf.learners.Ppo(), n_games=2)
    try:
        e.collect(8, lambda obs: (np.zeros((len(obs), 3), np.float32), np.zeros(len(obs), np.float32)))
        error = None
    except ValueError as exc:
        error = str(exc)
    h = started[0] if started else None
    print(json.dumps({"error": error, "started": h is not None, "ended": h is not None and h.proc.poll() is not None,
                      "kept": e._compile_helper is not None}))
    """
)


def test_a_cold_collect_whose_probe_fails_stops_the_helper_it_started(tmp_path):
    """The helper starts before the callback probe (it compiles while the probe does); a probe
    that refuses the callback ends it: no compile process outlives the error."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the compile helper needs two cores")
    env = {**os.environ, "REINFORS_CACHE_DIR": str(tmp_path), "REINFORS_COMPILE_HELPER": "1"}
    out = subprocess.run([sys.executable, "-c", _PROBE_FAILS], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["error"] and "infer must return" in res["error"]
    assert res["started"] and res["ended"] and not res["kept"]


_SIGNATURES = textwrap.dedent(
    """
    import json
    import reinfors as rf
    from reinfors._runtime.compile_helper import _MODELFREE_CALLEES, _SEARCH_CALLEES, _WORK_SIG, late_callees
    G, P, L = rf.games, rf.policies, rf.learners
    out = {}
    for family, engine, callees in (
        ("modelfree", rf.Engine(G.GridWorld(), rf.Reward(), P.Ppo(), L.Ppo(), n_games=2), _MODELFREE_CALLEES),
        ("tree", rf.Engine(G.GridWorld(), rf.Reward(), P.AlphaZero(num_simulations=4), L.AlphaZero(), n_games=2), _SEARCH_CALLEES),
    ):
        k = engine._kernel_module()
        assert late_callees(k) == callees, family
        k.work.compile(_WORK_SIG)
        out[family] = [[str(s) for s in getattr(k, n).signatures] + [str(sig)] for n, sig in callees]
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_the_callees_a_helper_compiles_first_have_the_signatures_work_types(tmp_path):
    """The helper compiles some of ``work``'s callees by explicit signature before the parent's
    ``work`` reaches them: each must be the one signature ``work``'s own typing gives that callee,
    or the parent compiles it again (a cold process, helper off, fresh cache)."""
    env = {**os.environ, "REINFORS_CACHE_DIR": str(tmp_path), "REINFORS_COMPILE_HELPER": "0"}
    out = subprocess.run([sys.executable, "-c", _SIGNATURES], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    for family, rows in json.loads(out.stdout.strip().splitlines()[-1]).items():
        for *typed, planned in rows:
            assert typed == [planned], (family, typed, planned)

