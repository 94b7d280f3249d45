"""``rf.solvers.DeepCfr`` against reinfors==0.4.0 (side venv): batch layout, strategies,
exploitability numbers and error messages (see ``deep_cfr_driver.py``)."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

import reinfors as rf

from .deep_cfr_driver import probe
from .harness import require_orig

pytestmark = pytest.mark.differential


@pytest.fixture(scope="module")
def both():
    py = require_orig()
    driver = Path(__file__).resolve().parent / "deep_cfr_driver.py"
    out = subprocess.run([py, "-I", str(driver)], capture_output=True, text=True, timeout=600, cwd="/")
    assert out.returncode == 0, out.stderr[-3000:]
    return probe(rf), json.loads(out.stdout)


def test_batches_match(both):
    ours, theirs = both
    for name in theirs:
        if name in ("exploitability", "errors"):
            continue
        assert ours[name] == theirs[name], name


def test_exploitability_matches(both):
    ours, theirs = both
    for name, value in theirs["exploitability"].items():
        mine = ours["exploitability"][name]
        assert (math.isnan(mine) and math.isnan(value)) or mine == pytest.approx(value, abs=1e-10), name


def test_errors_match(both):
    ours, theirs = both
    assert len(ours["errors"]) == len(theirs["errors"])
    for i, (o, t) in enumerate(zip(ours["errors"], theirs["errors"], strict=True)):
        assert o == t, f"call {i}: ours {o} != original {t}"
