"""examples/ray_self_play.py on a local Ray: it ends with its JSON line, and a run resumed from
its ``--checkpoint`` receives exactly the batches the uninterrupted run received after it (the
per-iteration digests of actor, version and records match)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--actors", "2", "--iterations", "5", "--records", "32", "--sims", "4", "--n-games", "4"]


def _run(tmp_path, *args) -> dict:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "ray_self_play.py"), *TINY, *args],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_ray_self_play_resumes_with_the_batches_it_would_have_received(tmp_path):
    ckpt = tmp_path / "run.ckpt"
    full = _run(tmp_path, "--checkpoint", str(ckpt), "--checkpoint-at", "2")
    assert full["actors"] == 2 and full["iterations"] == 5 and full["records"] >= 5 * 32
    assert sum(full["records_per_actor"]) == full["records"] and full["lag_max"] >= 0
    assert [d.split(":")[0] for d in full["digests"]] == ["0", "1", "0", "1", "0"]  # round-robin
    resumed = _run(tmp_path, "--resume", str(ckpt))
    assert resumed["first_iteration"] == 2 and resumed["iterations"] == 3
    assert resumed["digests"] == full["digests"][2:]
