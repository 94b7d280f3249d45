"""Compile policy: source-keyed cache directory, fallback, measurable compile seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reinfors.jit import _compile

PROBE = """
import json, time
t0 = time.perf_counter()
import reinfors as rf
from reinfors.jit import _compile
env = rf.Env(rf.games.Connect4(), rf.Reward())
env.step({0: 3})
print(json.dumps({"compile": _compile.compile_seconds(), "dir": str(_compile.cache_dir()),
                  "wall": time.perf_counter() - t0}))
"""


def _run(env):
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_cold_then_warm_process_uses_the_disk_cache(tmp_path):
    env = dict(os.environ, REINFORS_CACHE_DIR=str(tmp_path))
    cold = _run(env)
    warm = _run(env)
    assert cold["dir"] == warm["dir"] and cold["dir"].startswith(str(tmp_path))
    assert cold["compile"] > 0.0
    assert warm["compile"] == 0.0  # every kernel loaded from the cache
    assert any(Path(cold["dir"]).rglob("*.nbi"))


def test_cache_key_has_version_python_numba_and_source_digest():
    name = _compile.cache_dir().name
    assert name.startswith("v0.4.0-py") and name.endswith(_compile.source_digest())


def test_source_digest_changes_with_any_jit_file(tmp_path, monkeypatch):
    import shutil

    copy = tmp_path / "jit"
    shutil.copytree(Path(_compile.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(_compile, "_JIT_DIR", copy)
    before = _compile.source_digest()
    with open(copy / "games" / "connect4.py", "a") as f:
        f.write("\n# edit\n")
    assert _compile.source_digest() != before


def test_falls_back_to_a_user_cache_when_the_package_is_read_only(tmp_path, monkeypatch):
    package_candidate = _compile._JIT_DIR.parent / "__jitcache__"
    real = _compile._writable
    monkeypatch.setattr(_compile, "_writable", lambda p: False if package_candidate in p.parents else real(p))
    monkeypatch.delenv("REINFORS_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    chosen = _compile._choose_cache_dir()
    assert chosen.parent == tmp_path / "reinfors"


def _key_dir(root: Path, digest: str, age_s: float) -> Path:
    d = root / f"v0.4.0-py311-nb0.68.1-{digest}"
    (d / "reinfors").mkdir(parents=True)
    (d / "reinfors" / "x.nbi").write_bytes(b"0" * 100)
    t = time.time() - age_s
    os.utime(d, (t, t))
    return d


def test_stale_cache_directories_are_pruned_keeping_the_newest(tmp_path):
    current = _key_dir(tmp_path, "a" * 16, 0)
    others = [_key_dir(tmp_path, c * 16, 100 * (i + 1)) for i, c in enumerate("bcde")]
    unrelated = tmp_path / "notes"
    unrelated.mkdir()
    removed = _compile.prune_stale(current, keep=3)
    assert sorted(removed) == sorted(others[2:])  # the current one and the two most recent stay
    assert current.exists() and others[0].exists() and others[1].exists() and unrelated.exists()
    assert _compile.prune_stale(current, keep=1) == others[:2]


def _cli(*args, env):
    out = subprocess.run([sys.executable, "-m", "reinfors", *args], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_cache_info_and_clear_from_the_command_line(tmp_path):
    env = dict(os.environ)
    env.pop("REINFORS_CACHE_DIR", None)
    stale = _key_dir(tmp_path, "f" * 16, 50)
    info = json.loads(_cli("cache", "info", "--json", "--cache-dir", str(tmp_path), env=env))
    assert Path(info["dir"]).parent == tmp_path and Path(info["dir"]).name.endswith(_compile.source_digest())
    assert [o["dir"] for o in info["others"]] == [str(stale)] and info["others"][0]["bytes"] == 100
    text = _cli("cache", "info", "--cache-dir", str(tmp_path), env=env)
    assert text.startswith(f"cache: {info['dir']}") and "other: " in text
    out = _cli("cache", "clear", "--cache-dir", str(tmp_path), env=env)
    assert f"removed {info['dir']}" in out and stale.exists()
    out = _cli("cache", "clear", "--all", "--cache-dir", str(tmp_path), env=env)
    assert f"removed {stale}" in out and not stale.exists()


def test_user_cache_dir_follows_the_platform(monkeypatch, tmp_path):
    monkeypatch.setattr(_compile.sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _compile._user_cache_base() == tmp_path / "reinfors"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: absolute paths only
    assert _compile._user_cache_base() == Path.home() / ".cache" / "reinfors"
    monkeypatch.setattr(_compile.sys, "platform", "darwin")
    assert _compile._user_cache_base() == Path.home() / "Library" / "Caches" / "reinfors"
    monkeypatch.setattr(_compile.sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path))
    assert _compile._user_cache_base() == tmp_path / "reinfors" / "Cache"


INSTALLED_PROBE = """
import json, reinfors, numpy as np
from reinfors.jit import _compile, outputs
dst = np.zeros((2, 3))
outputs.widen_rows(np.ones((2, 3), np.float32), 3, dst, 0)  # one small package kernel, cached
print(json.dumps({"file": reinfors.__file__, "dir": str(_compile.cache_dir()), "compiled": _compile.compile_seconds()}))
"""


@pytest.mark.slow  # builds and installs the package (pip, about 10 s)
def test_a_non_editable_install_caches_in_the_user_cache_dir(tmp_path):
    """``pip install .`` (not editable): the cache goes to ``$XDG_CACHE_HOME/reinfors``, never
    into the installed package, and a second process loads from it."""
    repo = Path(_compile.__file__).resolve().parents[2]
    target = tmp_path / "site"
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(repo)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stderr[-2000:]
    env = dict(os.environ, PYTHONPATH=str(target), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    env.pop("REINFORS_CACHE_DIR", None)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", INSTALLED_PROBE], capture_output=True, text=True, env=env,
                             cwd=str(tmp_path), timeout=600)  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert runs[0]["file"].startswith(str(target))
    assert Path(runs[0]["dir"]).parent == tmp_path / "xdg" / "reinfors"
    assert not (target / "reinfors" / "__jitcache__").exists()
    assert runs[0]["compiled"] > 0 and runs[1]["compiled"] == 0.0


def test_an_internal_kernel_refuses_a_python_call_and_a_shim_reaches_it():
    """A kernel not declared ``entry=True`` has no CPython wrapper: Python gets a TypeError naming
    it (never a jump into a wrapper that was never built); an njit caller reaches it."""
    import numpy as np
    from helpers import python_callable

    from reinfors.jit import rng

    assert isinstance(rng.next_u64, _compile.InternalKernel)
    assert not isinstance(rng.seed_row, _compile.InternalKernel)  # the runtime calls it
    row = np.zeros(1, np.uint64)
    rng.seed_row(row, 1, 2, 3)
    with pytest.raises(TypeError, match=r"reinfors\.jit\.rng\.next_u64 is an internal kernel"):
        rng.next_u64(row.copy())
    shim = python_callable(rng)
    assert int(shim.next_u64(row.copy())) == int(shim.next_u64(row.copy())) != 0


def test_every_game_export_the_python_side_calls_is_an_entry():
    """The contract functions and encoders of every catalogue game module are called from Python
    (the contract check, ``Env``, the probe): none may be an internal kernel."""
    import importlib
    import pkgutil

    import reinfors.jit.games as games
    from reinfors.jit.games import _contract

    internal = []
    for info in pkgutil.iter_modules(games.__path__):
        mod = importlib.import_module(f"reinfors.jit.games.{info.name}")
        roles = {r: getattr(mod, r, None) for r in _contract.REQUIRED_FUNCTIONS + _contract.OPTIONAL_FUNCTIONS}
        roles.update({f"ENCODERS[{k!r}]": parts[0] for k, parts in getattr(mod, "ENCODERS", {}).items()})
        internal += [f"{info.name}.{r}" for r, fn in roles.items() if isinstance(fn, _compile.InternalKernel)]
    assert internal == []


def test_the_suite_precompile_runs_each_job_once_longest_first(tmp_path, monkeypatch):
    """``tests/precompile.py``'s processes claim jobs from one directory: a job runs in exactly
    one of them, and each takes the longest unclaimed job next."""
    import precompile

    ran = []
    monkeypatch.setattr(precompile, "JOBS", [(c, f"job{c}", lambda c=c: ran.append(c)) for c in (5, 50, 20)])
    precompile.claim_and_run(tmp_path)
    precompile.claim_and_run(tmp_path)  # a second process finds every job claimed
    assert ran == [50, 20, 5]
    assert len(list(tmp_path.iterdir())) == 3
