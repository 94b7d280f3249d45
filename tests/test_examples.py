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


def test_alphazero_example_runs():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "alphazero_connect4.py"),
            "--iterations",
            "2",
            "--records",
            "128",
            "--sims",
            "8",
            "--n-games",
            "8",
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("iteration ") == 2 and "trained network's moves on 4 boards: [" in out.stdout


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
