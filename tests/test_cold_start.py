"""A cold first collect: the callbacks are checked before the compile (a wrong shape fails in a
second on an empty cache, with the message a fire would raise), the compile bar advances to its
plan, and a warm process prints nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import reinfors as rf
from reinfors._runtime import probe

G, P, L = rf.games, rf.policies, rf.learners

WRONG = textwrap.dedent(
    """
    import json, time
    import numpy as np
    import reinfors as rf
    G, P, L = rf.games, rf.policies, rf.learners
    out = {}
    cases = {
        "ppo": (lambda: rf.Engine(G.Connect4(), rf.Reward(), P.Ppo(), L.Ppo(), n_games=4),
                lambda obs: (np.zeros((len(obs), 6), np.float32), np.zeros(len(obs), np.float32))),
        "dqn": (lambda: rf.Engine(G.Connect4(), rf.Reward(), P.EpsilonGreedyQ(), L.Dqn(), n_games=4),
                lambda obs: np.zeros((len(obs), 7))),
        "kuhn_per_player": (lambda: rf.Engine(G.KuhnPoker(), None, P.Ppo(), L.Ppo(), n_games=4),
                            [lambda obs: (np.zeros((len(obs), 2)), np.zeros(len(obs))),
                             lambda obs: (np.zeros((len(obs), 2)), np.zeros((len(obs), 1)))]),
    }
    for name, (make, infer) in cases.items():
        e = make()
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            e.collect(8, infer)
            err = None
        except (TypeError, ValueError) as exc:
            err = [type(exc).__name__, str(exc)]
        out[name] = {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall, "err": err,
                     "work_compiled": bool(e._kernel_module().work.signatures)}
    print(json.dumps(out))
    """
)


def test_a_wrong_callback_fails_before_the_compile_on_an_empty_cache(tmp_path):
    env = dict(os.environ, REINFORS_CACHE_DIR=str(tmp_path), REINFORS_COMPILE_HELPER="0")
    env.pop("REINFORS_COMPILE_PROGRESS", None)
    res = subprocess.run([sys.executable, "-c", WRONG], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    # The messages of the validators a fire runs (reinfors/_runtime/routes.py), for the probe's rows.
    assert out["ppo"]["err"][0] == "ValueError"
    assert re.fullmatch(
        r"Ppo infer must return \(policy_logits \(2, >=7\), values \(2,\)\); got logits \[2, 6\] and values \(2,\)",
        out["ppo"]["err"][1],
    )
    assert out["dqn"]["err"] == ["TypeError", "infer output must be a 3-d ndarray; got 2-d"]
    assert out["kuhn_per_player"]["err"] == ["TypeError", "Ppo infer values must be a 1-d ndarray; got 2-d"]
    for case in out.values():
        assert not case["work_compiled"]  # failed before the engine's kernels compiled
        assert case["cpu"] < 2.0, out  # process CPU: comparable on a loaded machine


def test_observation_rows_are_real_and_distinct():
    d = G.Connect4()._def
    (rows,) = probe.observation_rows(d)
    assert rows.shape == (2, d.obs_size) and rows.dtype == np.float32
    assert rows[0].sum() == 0 and rows[1].sum() == 1  # the empty board, then one disc
    per = probe.observation_rows(G.KuhnPoker()._def, per_player=True)
    assert len(per) == 2 and all(r.shape == (2, G.KuhnPoker()._def.obs_size) for r in per)
    assert not np.array_equal(per[0][0], per[1][0])  # each player sees its own card


def test_a_warm_first_collect_does_not_probe(monkeypatch):
    make = lambda: rf.Engine(G.Connect4(), rf.Reward(), P.Ppo(), L.Ppo(), n_games=2)  # noqa: E731
    pv = lambda obs: (np.zeros((len(obs), 7)), np.zeros(len(obs)))  # noqa: E731
    make().collect(4, pv)  # the module is cached now (compiled or loaded)

    def refuse(*a, **k):
        raise AssertionError("probed a warm engine")

    monkeypatch.setattr(probe, "check", refuse)
    assert len(make().collect(4, pv).obs) >= 4


BAR = textwrap.dedent(
    """
    import numpy as np
    import reinfors as rf
    e = rf.Engine(rf.games.GridWorld(), rf.Reward(), rf.policies.Ppo(), rf.learners.Ppo(), n_games=2)
    e.collect(8, lambda obs: (np.zeros((len(obs), 4)), np.zeros(len(obs))))
    """
)


@pytest.mark.slow  # a cold compile of a whole composition
def test_the_compile_bar_advances_on_a_cold_start_and_a_warm_start_prints_nothing(tmp_path):
    env = dict(os.environ, REINFORS_CACHE_DIR=str(tmp_path), REINFORS_COMPILE_PROGRESS="1", REINFORS_COMPILE_HELPER="1")
    cold = subprocess.run([sys.executable, "-c", BAR], capture_output=True, text=True, env=env, timeout=900)
    assert cold.returncode == 0, cold.stderr
    frames = [f for f in cold.stderr.replace("\r", "\n").splitlines() if "kernels [" in f]
    assert frames and all("reinfors: compiling gridworld with ppo + ppo" in f for f in frames)
    counts = [int(re.search(r": (\d+)/(\d+) kernels", f).group(1)) for f in frames]
    assert counts[0] < counts[-1] and counts == sorted(counts)  # it advanced
    assert "done" in frames[-1]
    assert any("work" in f for f in frames)  # what is compiling
    warm = subprocess.run([sys.executable, "-c", BAR], capture_output=True, text=True, env=env, timeout=900)
    assert warm.returncode == 0 and "kernels" not in warm.stderr and "compiling" not in warm.stderr
