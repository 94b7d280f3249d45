"""Strength against perfect play (issue 49): checkpoints of the example networks, the optimal-move
rate of ``examples/evaluate_connect4.py`` and the learning race's evaluation
(``benchmarks/learning_race.py``).  The solver itself is tested in tests/test_connect4_solver.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from _nets import load_net, make_mlp  # noqa: E402
from evaluate_connect4 import DEFAULT_SETS, PositionSet  # noqa: E402

# (moves, scores): the side to move wins at once in column 0 (three stacked there); labels as a solver gives them
WIN_NOW = ([0, 1, 0, 1, 0, 1], [18, -1000, 2, -2, 0, -3, -3])
# a position with one full column and two equally good moves
TWO_BEST = ([3, 3, 3, 3, 3, 3], [1, 1, 0, -1000, -2, -2, -5])


def _write(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps({"moves": m, "scores": s}) + "\n" for m, s in rows))
    return path


def test_numpy_checkpoint_round_trips_without_torch(tmp_path):
    net = make_mlp([84, 16, 16, 8], backend="numpy", seed=3)
    path = net.save(tmp_path / "sub" / "final", {"gamma": 0.97, "sims": 64})
    assert path == tmp_path / "sub" / "final.npz"
    twin, meta = load_net(path)
    assert meta == {"gamma": 0.97, "sims": 64, "features": None} and twin.backend == "numpy" and twin.sizes == [84, 16, 16, 8]
    x = np.random.default_rng(0).random((5, 84), dtype=np.float32)
    np.testing.assert_array_equal(twin(x), net(x))
    with pytest.raises(ValueError, match=r"\.npz \(NumPy\) or \.pt"):
        load_net(tmp_path / "final.bin")


def test_position_set_scores_picks_against_the_labels(tmp_path):
    s = PositionSet(_write(tmp_path / "p.jsonl", [WIN_NOW, TWO_BEST]))
    assert len(s) == 2 and s.obs.shape == (2, 84) and s.obs.dtype == np.float32
    assert s.legal.tolist() == [[True, False, True, True, True, True, True], [True, True, True, False, True, True, True]]
    assert s.rates([0, 0]) == {"optimal": 1.0, "outcome": 1.0}
    assert s.rates([2, 1]) == {"optimal": 0.5, "outcome": 1.0}  # 2 wins too, but later; 1 ties the best
    assert s.rates([4, 2]) == {"optimal": 0.0, "outcome": 0.0}  # 2: a draw where a win exists
    u = s.uniform()
    assert u["optimal"] == pytest.approx((1 / 6 + 2 / 6) / 2) and u["outcome"] == pytest.approx((2 / 6 + 2 / 6) / 2)
    # the raw policy: argmax over the legal columns only (column 1 of row 0 is full)
    picks = s.policy_actions(lambda obs: np.tile(np.array([0, 9, 1, 0, 0, 0, 0, 0], np.float32), (len(obs), 1)))
    assert picks.tolist() == [2, 1]


def test_position_set_rejects_finished_positions(tmp_path):
    with pytest.raises(ValueError, match="finished"):
        PositionSet(_write(tmp_path / "p.jsonl", [([0, 1, 0, 1, 0, 1, 0], [0] * 7)]))


def test_evaluate_connect4_cli_prints_rates_and_json(tmp_path):
    ck = make_mlp([84, 16, 16, 8], backend="numpy").save(tmp_path / "net", {"gamma": 1.0})
    positions = _write(tmp_path / "p.jsonl", [WIN_NOW, TWO_BEST])
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "evaluate_connect4.py"), "--checkpoint", str(ck),
         "--positions", str(positions), "--sims", "16", "--no-baselines"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.splitlines()[-1])
    assert res["positions"] == 2 and 0.0 <= res["policy_optimal"] <= 1.0
    assert res["search_optimal"] >= 0.5  # 16 simulations find the immediate win whatever the network says
    assert "raw policy" in out.stdout


@pytest.mark.skipif(not all(p.exists() for p in DEFAULT_SETS), reason="the shipped position sets are missing")
def test_learning_race_evaluates_both_legs(tmp_path):
    for build in ("this", "orig"):
        ck = make_mlp([84, 16, 16, 8], backend="numpy", seed=len(build)).save(tmp_path / build / "m1", {"gamma": 0.97})
        run = {"checkpoints": [{"mark": 1.0, "minutes": 1.01, "records": 100, "checkpoint": str(ck)}]}
        (tmp_path / build / "run.json").write_text(json.dumps(run))
    plot = tmp_path / "race.png"
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "learning_race.py"), "--evaluate", str(tmp_path), "--limit", "20", "--plot", str(plot)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows = json.loads((tmp_path / "race.json").read_text())
    assert [r["build"] for r in rows] == ["this", "orig"] and plot.stat().st_size > 0
    assert {p.stem for p in DEFAULT_SETS} == set(rows[0]["scores"])
    assert all(s["positions"] == 20 for r in rows for s in r["scores"].values())


@pytest.mark.slow
def test_learning_race_leg_saves_checkpoints(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "learning_race.py"), "--build", "this", "--minutes", "0.1", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    run = json.loads((tmp_path / "this" / "run.json").read_text())
    assert run["build"] == "this" and run["records"] > 0 and len(run["checkpoints"]) == 1
    net, meta = load_net(run["checkpoints"][0]["checkpoint"])
    assert meta["gamma"] == run["gamma"] and net.sizes[0] == 84
