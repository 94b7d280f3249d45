"""Compile policy: source-keyed cache directory, fallback, measurable compile seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
