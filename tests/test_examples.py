"""Smoke runs of the examples and notebooks with tiny budgets (they must keep working)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_quickstart_runs():
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), "--records", "256", "--n-games", "16"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    assert "obs                 float32  (" in out.stdout and "telemetry:" in out.stdout


def test_quickstart_notebook_executes():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(ROOT / "notebooks" / "01_quickstart.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3").execute(cwd=str(ROOT))
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]


def _run_example(name: str, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args], capture_output=True, text=True, timeout=timeout
    )


def test_streaming_example_runs():
    out = _run_example("streaming.py", "--updates", "3")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("update=")]
    assert [line.split()[0] for line in lines] == ["update=0", "update=1", "update=2"]
    assert all(int(line.split()[1].removeprefix("records=")) >= 64 for line in lines)
    assert "engine free:" in out.stdout


def test_two_network_torch_example_runs_or_explains_missing_torch():
    out = _run_example("two_network_torch.py", "--updates", "2", "--records", "32", "--sims", "4", "--n-games", "4")
    assert out.returncode == 0, out.stderr
    try:
        import torch  # noqa: F401
    except ImportError:
        assert "needs PyTorch" in out.stdout
    else:
        assert out.stdout.count("update=") == 2


def test_checkpointing_example_resumes_record_exactly(tmp_path):
    out = _run_example("checkpointing.py", "--updates", "2", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "identical to the uninterrupted run: True" in out.stdout
    assert (tmp_path / "engine.snap").stat().st_size > 0 and (tmp_path / "replay.npz").exists()


def test_eval_arena_example_runs():
    out = _run_example("eval_arena.py", "--games", "4", "--slots", "4", "--depth", "2", "--sims", "16")
    assert out.returncode == 0, out.stderr
    assert "match 1: 4 games" in out.stdout and "match 2: 4 games" in out.stdout
    assert out.stdout.count("payoff ") == 2 and "± " in out.stdout


def test_alphazero_chess_example_runs():
    out = _run_example("alphazero_chess.py", "--iterations", "2", "--records", "32", "--sims", "4", "--n-games", "2", timeout=900)
    assert out.stdout.count("iteration ") == 2 and "network's opening move: " in out.stdout
    assert out.stdout.count("uniform over all actions") == 2 and "untrained: " in out.stdout


# -- the train_* examples (learning targets are measured by running them as written; see
# benchmarks/RESULTS.md "Learning"): tiny budgets here, asserting the JSON last line


def _last_json(out: subprocess.CompletedProcess) -> dict:
    import json

    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _example_module(name: str):
    """Import ``examples/<name>.py`` without leaking its BLAS-thread defaults into this process."""
    import importlib
    import os

    saved = dict(os.environ)
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "examples"))
        os.environ.clear()
        os.environ.update(saved)


def _numeric_grad(f, out, eps=1e-6):
    import numpy as np

    g = np.zeros_like(out)
    for idx in np.ndindex(out.shape):
        old = out[idx]
        out[idx] = old + eps
        up = f(out)[0]
        out[idx] = old - eps
        down = f(out)[0]
        out[idx] = old
        g[idx] = (up - down) / (2 * eps)
    return g


def test_numpy_mlp_gradients_match_finite_differences():
    import numpy as np

    nets = _example_module("_nets")
    rs = np.random.default_rng(0)
    net = nets.NumpyMlp([5, 6, 6, 3], seed=1)
    net.params = [p.astype(np.float64) + 0.1 * rs.standard_normal(p.shape) for p in net.params]
    x, y = rs.standard_normal((4, 5)), rs.standard_normal((4, 3))

    def loss_fn(out):
        return 0.5 * float(((out - y) ** 2).sum()), out - y

    _, grads = net.gradients(x, loss_fn)
    for p, g in zip(net.params, grads, strict=True):
        num = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            old = p[idx]
            p[idx] = old + 1e-6
            up = net.gradients(x, loss_fn)[0]
            p[idx] = old - 1e-6
            down = net.gradients(x, loss_fn)[0]
            p[idx] = old
            num[idx] = (up - down) / 2e-6
        np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-7)
    before = net.gradients(x, loss_fn)[0]
    net.lr = 1e-2
    for _ in range(200):
        net.train_step(x, loss_fn)
    assert net.gradients(x, loss_fn)[0] < 0.5 * before  # Adam descends


def test_example_loss_gradients_match_finite_differences():
    import types

    import numpy as np

    rs = np.random.default_rng(2)
    az = _example_module("train_alphazero_connect4")
    pi = rs.dirichlet(np.ones(7), 5)
    pi[1] = 0.0  # a value-only row
    w = np.array([1.0, 0.0, 1.0, 1.0, 1.0])
    f = az.az_loss(pi, rs.uniform(-1, 1, 5), w, {})
    out = rs.standard_normal((5, 8))
    np.testing.assert_allclose(f(out)[1], _numeric_grad(f, out), rtol=1e-5, atol=1e-8)

    ppo = _example_module("train_ppo_connect4")
    mask = rs.random((6, 7)) < 0.7
    mask[:, 3] = True
    actions = np.array([3, 3, 3, 3, 3, 3])
    args = types.SimpleNamespace(clip=0.2, value_coef=0.5, entropy_coef=0.01)
    out = rs.standard_normal((6, 8))
    f = ppo.ppo_loss(mask, actions, rs.uniform(-2.5, -1.0, 6), rs.standard_normal(6), rs.standard_normal(6), args, {})
    g = f(out)[1]
    assert np.all(g[:, :7][~mask] == 0)
    np.testing.assert_allclose(g, _numeric_grad(f, out), rtol=1e-4, atol=1e-7)


def test_train_alphazero_connect4_smoke(tmp_path):
    out = _run_example(
        "train_alphazero_connect4.py",
        *("--minutes", "0.05", "--sims", "8", "--n-games", "8", "--collect-size", "64", "--eval-games", "4"),
        *("--eval-every", "0.02", "--hidden", "32", "--gate-games", "8", "--no-progress", "--logdir", str(tmp_path)),
        timeout=900,
    )
    res = _last_json(out)
    assert {"win_rate_vs_minimax2", "games", "minutes", "records", "curve"} <= res.keys()
    assert res["games"] == 4 and 0.0 <= res["win_rate_vs_minimax2"] <= 1.0 and res["records"] >= 64
    assert res["curve"][0][0] == 0.0 and res["curve"][-1][1] == res["win_rate_vs_minimax2"]
    assert res["untrained_win_rate_vs_minimax2"] == res["curve"][0][1]  # the baseline, printed beside the result
    assert "untrained network" in out.stdout.splitlines()[-2]
    # the Elo curve: one point per evaluation (checkpoint), anchored to Minimax; ckpt0 is accepted unplayed
    assert [p[1] for p in res["elo_curve"]] == [f"ckpt{i}" for i in range(len(res["curve"]) - 1)] + ["final"]
    assert res["accepted"][0] == "ckpt0" and all(p[3] >= 0 for p in res["elo_curve"])
    kinds = [line.split('"kind": "')[1].split('"')[0] for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert kinds[0] == "eval" and kinds[-1] == "elo" and "train" in kinds and "gate" in kinds
    # a checkpoint per evaluation, the last one "final" (what evaluate_connect4.py --checkpoint takes)
    assert res["checkpoint"] == str(tmp_path / "final.npz") and (tmp_path / "ckpt0.npz").exists()
    assert len(list(tmp_path.glob("*.npz"))) == len(res["curve"]) and res["gamma"] == 0.97
    # the optimal-move rates on the shipped solver sets, at every evaluation (issue 49)
    assert len(res["optimal_curve"]) == len(res["curve"]) and res["optimal"] == res["optimal_curve"][-1][1]
    assert all(0.0 <= r["search_optimal"] <= 1.0 for r in res["optimal"].values())
    assert "optimal moves" in out.stdout.splitlines()[-3]


@pytest.mark.slow
def test_train_alphazero_connect4_gumbel_smoke(tmp_path):
    """``--policy gumbel --simulations N``: GumbelAlphaZero self-play and evaluation (issue 33)."""
    out = _run_example(
        "train_alphazero_connect4.py",
        *("--policy", "gumbel", "--simulations", "4", "--minutes", "0.05", "--n-games", "8", "--collect-size", "64"),
        *("--eval-games", "4", "--eval-every", "0.02", "--hidden", "32", "--gate-games", "8", "--no-progress"),
        *("--logdir", str(tmp_path)),
        timeout=900,
    )
    res = _last_json(out)
    assert res["policy"] == "gumbel" and res["sims"] == 4 and res["eval_sims"] == 4
    assert res["games"] == 4 and res["records"] >= 64 and res["cpu_minutes"] > 0


def test_train_dqn_gridworld_smoke():
    out = _run_example("train_dqn_gridworld.py", "--updates", "3", "--records", "64", "--n-games", "8", "--eval-episodes", "6")
    res = _last_json(out)
    assert {"mean_return", "untrained_mean_return", "optimal_return", "records"} <= res.keys()
    assert res["untrained_mean_return"] <= res["optimal_return"] + 1e-9
    assert "untrained network" in out.stdout.splitlines()[-2] and "optimal" in out.stdout.splitlines()[-2]
    # the computed optimum bounds every policy's return; 5x5, step -0.1, goal 1: between 0.3 and 1.0
    assert res["mean_return"] <= res["optimal_return"] + 1e-9 and 0.3 <= res["optimal_return"] <= 1.0


def test_train_ppo_connect4_smoke():
    out = _run_example("train_ppo_connect4.py", "--updates", "2", "--records", "128", "--n-games", "8", "--eval-games", "4", "--eval-every", "1")
    res = _last_json(out)
    assert {"win_rate_vs_random", "untrained_win_rate_vs_random", "games", "records"} <= res.keys()
    assert res["untrained_win_rate_vs_random"] == res["curve"][0][1] and "untrained network" in out.stdout.splitlines()[-2]
    assert res["games"] == 4 and 0.0 <= res["win_rate_vs_random"] <= 1.0 and len(res["curve"]) == 3


def test_train_deep_cfr_kuhn_smoke():
    out = _run_example(
        "train_deep_cfr_kuhn.py", "--iterations", "2", "--traversals", "50", "--adv-steps", "5", "--strategy-steps", "10", "--eval-every", "1"
    )
    res = _last_json(out)
    assert "uniform policy 0.4583 (the baseline)" in out.stdout.splitlines()[-2]
    assert abs(res["uniform_exploitability"] - 0.4583333333333333) < 1e-9
    assert 0.0 <= res["exploitability"] < 1.0 and len(res["curve"]) == 2 and res["strategy_samples"] > 0


def test_cfr_leduc_example_starts_from_the_uniform_policy():
    out = _run_example("cfr_leduc.py", "2")
    assert out.returncode == 0, out.stderr
    import re

    rows = [line.split() for line in out.stdout.splitlines() if re.match(r"^\s*\d+\s+[-+\d.e]+\s+[-\d.]+\s+[\d.]+", line)]
    assert rows[0][0] == "0" and out.stdout.splitlines()[1].endswith("(uniform policy)")
    assert abs(float(rows[0][1]) - 2.37361) < 1e-4  # Leduc's uniform policy: NashConv 4.747 / 2 players
    assert float(rows[-1][1]) < float(rows[0][1])
