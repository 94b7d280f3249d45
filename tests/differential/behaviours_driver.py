"""Issue 30 item 5: four behaviours of 0.4.0, probed by one source in both builds.

``python behaviours_driver.py NAME`` prints one JSON document (``import reinfors`` is whichever
build the interpreter has):

* ``survival``: Snake's ``survival`` reward reaching SelectiveExpectimax + TreeStrap targets when
  episodes are truncated by ``max_ticks``: the targets of an engine with ``survival=0.25`` minus
  those of an engine with ``survival=0`` (``outcome_weight=1``), and both engines' episode returns.
* ``telemetry``: two engines built from one config (``engine_from_config(e.resolved_config())``,
  2-game Snake SelectiveExpectimax + TreeStrap, ``start_buffer=True``): whether their records are
  identical, and each engine's telemetry of the first ``collect(40)``.
* ``snake_food``: the outcome of ``Snake(...)`` at the food / grid bounds.
"""

from __future__ import annotations

import json
import sys

import numpy as np

import reinfors as rf


def _linear(obs_size, actions, seed=0):
    w = np.random.default_rng(seed).standard_normal((obs_size, 1, actions)) * 0.1
    return lambda obs: np.einsum("ro,oha->rha", obs.astype(np.float64), w)


def survival():
    def run(surv):
        g = rf.games.Snake(grid_size=8, max_ticks=3)
        e = rf.Engine(g, rf.Reward(food=1.0, loss=-1.0, survival=surv),
                      rf.policies.SelectiveExpectimax(expansion_budget=8, top_k=3, max_depth=4),
                      rf.learners.TreeStrap(outcome_weight=1.0), n_games=2, seed=0, n_threads=1)  # fmt: skip
        return e.collect(12, _linear(5 * 64, 3))

    a, b = run(0.0), run(0.25)
    return {
        "same_obs": bool(a.obs.shape == b.obs.shape and np.array_equal(a.obs, b.obs)),
        "diff": np.round(b.targets - a.targets, 12).tolist() if a.targets.shape == b.targets.shape else None,
        "episodes": [[list(r), n] for r, n, _ in a.telemetry["episodes"]]
        + [[list(r), n] for r, n, _ in b.telemetry["episodes"]],
    }


def telemetry():
    g = rf.games.Snake()
    e = rf.Engine(g, rf.Reward(food=1.0, loss=-1.0), rf.policies.SelectiveExpectimax(), rf.learners.TreeStrap(),
                  n_games=2, seed=0, start_buffer=True)  # fmt: skip
    f = rf.engine_from_config(e.resolved_config())
    cb = _linear(5 * 20 * 20, 3)
    x, y = e.collect(40, cb), f.collect(40, cb)
    same = bool(x.obs.shape == y.obs.shape and np.array_equal(x.obs, y.obs) and np.array_equal(x.targets, y.targets))

    def tele(b):
        return {k: v for k, v in b.telemetry.items() if k not in ("episodes", "infer_seconds")}

    return {"same_records": same, "telemetry": [tele(x), tele(y)]}


def snake_food():
    out = {}
    for kw in (dict(num_snakes=2, grid_size=101, food=10_001), dict(num_snakes=2, grid_size=101, food=10_000),
               dict(num_snakes=8, grid_size=101, food=10_001), dict(num_snakes=8, grid_size=101, food=10_000),
               dict(num_snakes=2, grid_size=3, food=10_001), dict(num_snakes=2, grid_size=101, food=10_001,
                                                                   initial_length=10**6)):  # fmt: skip
        try:
            rf.games.Snake(**kw)
            res = "ok"
        except Exception as e:  # noqa: BLE001 - the outcome is the subject
            res = f"{type(e).__name__}: {e}"
        out[json.dumps(kw, sort_keys=True)] = res
    return out


if __name__ == "__main__":
    print(json.dumps({"survival": survival, "telemetry": telemetry, "snake_food": snake_food}[sys.argv[1]]()))
