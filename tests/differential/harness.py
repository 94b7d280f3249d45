"""Run the original reinfors==0.4.0 (side venv) and replay its trajectories on this package."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import reinfors as rf

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "orig_driver.py"


@lru_cache(maxsize=1)
def orig_python() -> str | None:
    """Path of a Python whose ``reinfors`` is the compiled original 0.4.0, or None."""
    candidates = [os.environ.get("REINFORS_ORIG_PYTHON"), str(ROOT / ".venv-orig" / "bin" / "python")]
    for cand in candidates:
        if not cand or not Path(cand).exists():
            continue
        probe = "import reinfors, reinfors._reinfors as m; assert m.__file__.endswith('.so'); print(reinfors.core_version())"
        try:
            out = subprocess.run([cand, "-I", "-c", probe], capture_output=True, text=True, timeout=60, cwd="/")
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0 and out.stdout.strip() == "0.4.0":
            return cand
    return None


def require_orig() -> str:
    py = orig_python()
    if py is None:
        pytest.skip("reinfors==0.4.0 side venv not found (run scripts/run_differential.sh)")
    return py


def run_orig(spec: dict):
    py = require_orig()
    out = subprocess.run(
        [py, "-I", str(DRIVER), json.dumps(spec)], capture_output=True, text=True, timeout=600, cwd="/"
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def jsonable(x):
    """The driver's JSON normal form, applied to this package's values."""
    if isinstance(x, bytes):
        return {"__bytes__": base64.b64encode(x).decode()}
    if isinstance(x, (tuple, list)):
        return [jsonable(v) for v in x]
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    return json.loads(json.dumps(x))


def obs_b64(env, agent) -> str:
    return base64.b64encode(np.ascontiguousarray(env.observe(agent), dtype=np.float32).tobytes()).decode()


def normalise_state(state):
    """Snake's food is a set: the original lists it in hash order, so compare it sorted."""
    if isinstance(state, dict) and "food" in state and "bodies" in state:
        state = dict(state, food=sorted(state["food"]))
    return state


def check_tick(env, want, where):
    n = env.num_agents()
    assert env.active_agents() == want["active"], where
    assert [env.legal_actions(a) for a in range(n)] == want["legal"], where
    for a in range(n):
        assert obs_b64(env, a) == want["obs"][a], f"{where}: observation of agent {a}"
    assert normalise_state(jsonable(env.state())) == normalise_state(want["state"]), where
    assert env.done() == want["done"] and env.ticks == want["ticks"], where
    if want["isk"] is None:
        with pytest.raises(ValueError, match="does not declare information states"):
            env.information_state_key(0)
    else:
        assert [base64.b64encode(env.information_state_key(a)).decode() for a in range(n)] == want["isk"], where


def replay(spec: dict, sync=None) -> int:
    """Replay the original's playouts on this package; returns the number of ticks compared.

    ``sync(env, want_state)`` may force chance outcomes the two builds cannot share.
    """
    runs = run_orig(spec)
    game = getattr(rf.games, spec["ctor"])(**spec.get("kwargs", {}))
    compared = 0
    for seed, run in zip(spec["seeds"], runs, strict=True):
        env = rf.Env(game, rf.Reward(**spec.get("reward", {})), seed=seed)
        assert env.config_fingerprint() == run["fingerprint"]
        for e, episode in enumerate(run["episodes"]):
            ticks, steps = episode["ticks"], episode["steps"]
            if sync:
                sync(env, ticks[0]["state"])
            check_tick(env, ticks[0], f"seed {seed} episode {e} reset")
            for t, st in enumerate(steps):
                joint = {int(k): v for k, v in st["joint"].items()}
                events = env.step(joint)
                if sync:
                    sync(env, ticks[t + 1]["state"])
                where = f"seed {seed} episode {e} tick {t + 1}"
                assert jsonable(events) == st["events"], where
                assert env.rewards == st["rewards"], where
                check_tick(env, ticks[t + 1], where)
                compared += 1
            env.reset()
    return compared


def compare_outcomes(ours: list, theirs: list, labels: list) -> None:
    for o, t, label in zip(ours, theirs, labels, strict=True):
        assert o == t, f"{label}: ours {o} != original {t}"


def outcome(fn):
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 - compared with the original's outcome
        return {"error": type(e).__name__, "message": str(e)}
    return {"ok": jsonable(value)}
