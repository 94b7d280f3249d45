"""``rf.warmup`` / ``python -m reinfors warmup``: naming compositions (configs, catalogue names,
whole games), one job per kernel module, validation; end to end (slow: a cold compile), a later
process starts warm."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import reinfors as rf
from reinfors import _warmup

G, P, L = rf.games, rf.policies, rf.learners


def test_catalogue_names_expand_to_engine_configs():
    (job,) = _warmup.expand(["connect4/alphazero"])
    name, config, env_game = job
    assert name == "connect4/alphazero" and env_game is None
    assert config["policy"]["name"] == "alphazero" and config["learner"]["name"] == "alphazero"
    assert config["game"]["name"] == "connect4"
    jobs = _warmup.expand(["kuhn_poker"])  # every catalogue Engine composition of the game, and its Env
    names = [j[0] for j in jobs]
    want = [f"kuhn_poker/{a}" for a in rf.catalog.GAMES["kuhn_poker"].algorithms
            if rf.catalog.ALGORITHMS[a].workflow == "Engine"]  # fmt: skip
    assert names == ["kuhn_poker/env"] + want and jobs[0][2] == "kuhn_poker"


def test_configs_are_taken_as_dicts_json_text_and_files(tmp_path):
    cfg = rf.Engine(G.GridWorld(), rf.Reward(), P.Ppo(), L.Ppo(), n_games=3).resolved_config()
    path = tmp_path / "engine.json"
    path.write_text(json.dumps(cfg))
    jobs = _warmup.expand([cfg, json.dumps(cfg), str(path)])
    assert [j[1] for j in jobs] == [cfg, cfg, cfg] and jobs[2][0] == "engine.json"


def test_compositions_on_one_kernel_module_compile_once():
    """AlphaZero and Mcts + TreeStrap run on the tree kernels (the learner is a runtime switch)."""
    keys = {_warmup._module_key(c, e) for _, c, e in _warmup.expand(["connect4/alphazero", "connect4/treestrap_mcts"])}
    assert len(keys) == 1
    ppo, env = _warmup.expand(["connect4/ppo", "connect4/env"])
    assert _warmup._module_key(ppo[1], None) == _warmup._module_key(None, env[2])  # the Env's module


def test_validation():
    with pytest.raises(ValueError, match="unknown game 'nope'"):
        rf.warmup("nope/ppo")
    with pytest.raises(ValueError, match="has no Engine composition 'cfr'"):
        rf.warmup("kuhn_poker/cfr")
    with pytest.raises(ValueError, match="invalid config JSON"):
        rf.warmup("{not json")
    with pytest.raises(TypeError, match="compositions: expected a config dict or a name, got int"):
        rf.warmup(3)
    with pytest.raises(ValueError, match="at least one"):
        rf.warmup()
    with pytest.raises(ValueError, match="workers must be >= 1"):
        rf.warmup("connect4/ppo", workers=0)
    with pytest.raises(TypeError, match="workers must be an int"):
        rf.warmup("connect4/ppo", workers=1.5)
    with pytest.raises(KeyError):  # an invalid config fails in this process, before any worker
        rf.warmup({"game": {"name": "connect4"}, "policy": {"name": "no_such_policy"}, "learner": {"name": "ppo"}})
    out = subprocess.run([sys.executable, "-m", "reinfors", "warmup", "nope"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "unknown game 'nope'" in out.stderr


WARM = """
import json, numpy as np, reinfors as rf
from reinfors.jit import _compile
e = rf.Engine(rf.games.KuhnPoker(), None, rf.policies.Ppo(), rf.learners.Ppo(), n_games=8, seed=5)
e.collect(32, lambda obs: (np.zeros((len(obs), 2)), np.zeros(len(obs))))
env = rf.Env(rf.games.KuhnPoker(), seed=3)
env.reset()
a = env.active_agents()[0]
env.observe(a)
env.step({a: int(env.legal_actions(a)[0])})
print(json.dumps({"compile": _compile.compile_seconds()}))
"""


@pytest.mark.slow  # a cold compile of a kernel module in the worker
def test_warmup_command_fills_the_cache_and_a_later_process_starts_warm(tmp_path):
    env = dict(os.environ, REINFORS_COMPILE_PROGRESS="1")
    env.pop("REINFORS_CACHE_DIR", None)
    cmd = [sys.executable, "-m", "reinfors", "warmup", "kuhn_poker/ppo", "kuhn_poker/env", "--cache-dir", str(tmp_path)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "kuhn_poker/ppo, kuhn_poker/env: compiled" in out.stdout and f"cache: {tmp_path}" in out.stdout
    assert "reinfors warmup:" in out.stderr and "done" in out.stderr  # the bar
    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
    assert again.returncode == 0 and "already cached" in again.stdout
    warm = subprocess.run([sys.executable, "-c", WARM], capture_output=True, text=True, timeout=600,
                          env=dict(env, REINFORS_CACHE_DIR=str(tmp_path)))  # fmt: skip
    assert warm.returncode == 0, warm.stderr[-2000:]
    assert json.loads(warm.stdout.strip().splitlines()[-1])["compile"] == 0.0
