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
