"""Differential: Cfr against reinfors 0.4.0 (side venv) — every output bit for bit.

Both builds run ``cfr_driver.py`` on the same spec; the traces (NashConv, exploitability,
best-response values, expected values, average strategies, num_infosets, the saved payload
apart from its composition fingerprint) must be equal, and so must the error outcomes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import reinfors as rf
from tests.differential.harness import outcome, require_orig

pytestmark = pytest.mark.differential

DRIVER = Path(__file__).resolve().parent / "cfr_driver.py"
sys.path.insert(0, str(DRIVER.parent))
import cfr_driver  # noqa: E402


def _orig(spec):
    py = require_orig()
    out = subprocess.run([py, "-I", str(DRIVER), json.dumps(spec)], capture_output=True, text=True, timeout=600, cwd="/")
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def _compare(spec):
    theirs = _orig(spec)["cases"]
    ours = json.loads(json.dumps([cfr_driver.trace(rf, c) for c in spec["cases"]]))
    for case, o, t in zip(spec["cases"], ours, theirs, strict=True):
        for cp, a, b in zip(case["checkpoints"], o, t, strict=True):
            assert a == b, f"{case} after {cp} iterations"


KEYS2 = [[0, 0], [0, 2, 0, 1], [1, 1, 0], [1, 2, 1], [1, 0]]


def test_kuhn2_all_variants():
    cases = [
        {"game": "KuhnPoker", "variant": v, "seed": s, "checkpoints": [0, 1, 7, 40], "keys": KEYS2}
        for v in ("vanilla", "plus", "external_mccfr")
        for s in ((0, 11) if v == "external_mccfr" else (0,))
    ]
    _compare({"cases": cases})


def test_kuhn3_and_4():
    cases = [
        {"game": "KuhnPoker", "kwargs": {"players": p}, "variant": v, "seed": 2, "checkpoints": [1, 6, 25], "keys": [[2, 0, 0, 0]]}
        for p in (3, 4)
        for v in ("vanilla", "plus", "external_mccfr")
    ]
    _compare({"cases": cases})


@pytest.mark.slow
def test_leduc_all_variants():
    cases = [
        {"game": "LeducPoker", "variant": v, "seed": 3, "checkpoints": [0, 1, 5, 20], "keys": []}
        for v in ("vanilla", "plus", "external_mccfr")
    ]
    _compare({"cases": cases})


ERROR_CASES = r"""
K = rf.games.KuhnPoker()
calls = [
    lambda: rf.solvers.Cfr(rf.games.Connect4()),
    lambda: rf.solvers.Cfr(rf.games.TexasHoldem(num_players=2), variant="plus"),
    lambda: rf.solvers.Cfr(K, variant="x"),
    lambda: rf.solvers.Cfr(K, variant=1),
    lambda: rf.solvers.Cfr(K, seed=-1),
    lambda: rf.solvers.Cfr(0),
    lambda: rf.solvers.Cfr(K).iterate(-1),
    lambda: rf.solvers.Cfr(K).iterate(2**64),
    lambda: rf.solvers.Cfr(K).expected_value(2),
    lambda: rf.solvers.Cfr(K).average_strategy("k"),
    lambda: rf.solvers.Cfr(K).load(b"junk"),
    lambda: rf.solvers.Cfr(K).load(rf.solvers.Cfr(K, variant="vanilla").save()),
    lambda: rf.solvers.Cfr(K).load(rf.solvers.Cfr(K).save()[:-3]),
    lambda: rf.solvers.Cfr(K).load(rf.solvers.Cfr(K).save() + b"x"),
]
"""


def test_error_outcomes():
    py = require_orig()
    code = (
        "import json, reinfors as rf\n" + ERROR_CASES + "out = []\n"
        "for f in calls:\n"
        "    try:\n        f(); out.append({'ok': None})\n"
        "    except Exception as e:\n        out.append({'error': type(e).__name__, 'message': str(e)})\n"
        "print(json.dumps(out))\n"
    )
    theirs = json.loads(subprocess.run([py, "-I", "-c", code], capture_output=True, text=True, timeout=300, cwd="/").stdout)
    ns = {"rf": rf}
    exec(ERROR_CASES, ns)  # noqa: S102 - the same call list in this build
    ours = [outcome(f) for f in ns["calls"]]
    ours = [o if "error" in o else {"ok": None} for o in ours]
    assert ours == theirs


HOLDEM = r"""
import reinfors as rf, sys, json
out = []
for kw, n, seed in [({"num_players": 2}, 12, 4), ({"num_players": 3, "stack": 40}, 6, 0)]:
    c = rf.solvers.Cfr(rf.games.TexasHoldem(**kw), variant="external_mccfr", seed=seed)
    c.iterate(n)
    b = c.save()
    out.append([c.num_infosets, c.iterations, b[69:].hex()])
print(json.dumps(out))
"""


@pytest.mark.slow
def test_holdem_external_mccfr_payloads():
    py = require_orig()
    theirs = json.loads(subprocess.run([py, "-I", "-c", HOLDEM], capture_output=True, text=True, timeout=600, cwd="/").stdout)
    ns = {}
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(HOLDEM, ns)  # noqa: S102 - the same script in this build
    assert json.loads(buf.getvalue()) == theirs
