"""Issue 30 item 5: four behaviours equal 0.4.0's (driver: ``behaviours_driver.py``, run in both builds).

* Snake's ``survival`` reaches SelectiveExpectimax + TreeStrap targets on ``max_ticks``
  truncation: with ``outcome_weight=1`` only each record's executed action moves, by 0.25
  discounted to the truncation tick, and the episode returns carry it — exactly as 0.4.0.
* Two engines built from one config collect identical records, and their telemetry is equal but
  for the documented timing-dependent counts (``reinfors.engine.TIMING_TELEMETRY``).
* ``Snake(num_snakes=2, grid_size=101, food=10_001)`` and its neighbours refuse as 0.4.0.
* Every cap: ``test_caps_vs_original.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from reinfors.engine import TIMING_TELEMETRY

from .harness import require_orig

pytestmark = pytest.mark.differential
DRIVER = Path(__file__).resolve().parent / "behaviours_driver.py"


def _run(python, name, isolated=True):
    out = subprocess.run([python, *(["-I"] if isolated else []), str(DRIVER), name], capture_output=True, text=True,
                         timeout=900, cwd="/")  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _both(name):
    return _run(sys.executable, name, isolated=False), _run(require_orig(), name)


def test_snake_survival_reaches_treestrap_targets_on_truncation():
    ours, theirs = _both("survival")
    assert ours == theirs
    diff = np.array(ours["diff"])[:, 0, :]
    assert ours["same_obs"] and (diff >= 0).all()
    moved = diff > 0
    assert (moved.sum(axis=1) == 1).all()  # only the executed action's target of each record
    assert np.isclose(diff.max(), 0.25) and sorted(set(np.round(diff[moved], 6))) == [0.245025, 0.2475, 0.25]  # 0.25 gamma^k, k ticks before truncation
    assert any(r == [0.25, 0.25] for r, _ in ours["episodes"])


def test_engines_from_one_config_collect_identical_records_and_seed_determined_telemetry():
    ours, theirs = _both("telemetry")
    assert ours["same_records"] and theirs["same_records"]
    a, b = ours["telemetry"]
    assert set(a) == set(theirs["telemetry"][0])
    assert {k: a[k] for k in a if k not in TIMING_TELEMETRY} == {k: b[k] for k in b if k not in TIMING_TELEMETRY}
    assert theirs["telemetry"][0] == theirs["telemetry"][1]


def test_snake_food_bounds_equal_the_originals():
    ours, theirs = _both("snake_food")
    assert ours == theirs
    assert any("10000-edge chance-chain limit" in v for v in ours.values())
