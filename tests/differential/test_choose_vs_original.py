"""Differential tests of ``PolicyHandle.choose`` against reinfors==0.4.0 (side venv).

``choose_cases.py`` runs unchanged in both builds; its deterministic scenarios (Minimax, greedy
AlphaZero and Mcts, greedy EpsilonGreedyQ on random Connect4 positions, with row-independent
callbacks) must give the same actions AND the same callback calls (rows per call and row bytes:
the pooling into rounds and the exact-bytes dedupe), and every validation scenario the same
exception type and message (SelectiveExpectimax included).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from . import choose_cases
from .harness import require_orig

pytestmark = pytest.mark.differential

DRIVER = Path(__file__).resolve().parent / "orig_choose_driver.py"


def _orig(part: str):
    py = require_orig()
    out = subprocess.run(
        [py, "-I", str(DRIVER), json.dumps([part])], capture_output=True, text=True, timeout=600, cwd="/"
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)[part]


def _normal(x):
    return json.loads(json.dumps(x))


def test_choose_decisions_and_calls_equal_the_original():
    theirs = _orig("decisions")
    ours = _normal(choose_cases.decisions())
    assert ours.keys() == theirs.keys()
    for label in theirs:
        assert "error" not in json.dumps(theirs[label]), (label, theirs[label])
        if isinstance(theirs[label], dict) and "calls" in theirs[label]:
            assert ours[label]["result"] == theirs[label]["result"], label
            assert ours[label]["calls"] == theirs[label]["calls"], f"{label}: callback calls differ"
        else:
            assert ours[label] == theirs[label], label
    assert theirs["known_minimax"] == theirs["known_alphazero"] == theirs["known_mcts"] == {"ok": [3, 3]}


def test_choose_validation_equals_the_original():
    theirs = _orig("validation")
    ours = _normal(choose_cases.validation())
    assert ours.keys() == theirs.keys()
    bad = []
    for group, cases in theirs.items():
        for label, want in cases.items():
            got = ours[group][label]
            if got != want:
                bad.append((group, label, got, want))
    assert not bad, bad
