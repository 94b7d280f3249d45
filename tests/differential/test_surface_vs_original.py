"""The module surface equals reinfors 0.4.0's: ``reinfors.__all__``, the names of the compiled
module ``reinfors._reinfors``, and which of them are the *same objects* as the public names.

Code written for the original imports from either place (its own tests use
``from reinfors._reinfors import PolicyHandle, LearnerHandle, AlphaZeroBatch, DqnBatch``), so
every name must exist in both and the identity relation ``rf.X is rf._reinfors.X`` must be the
original's, name for name.
"""

from __future__ import annotations

import json
import subprocess

import pytest

import reinfors as rf

from .harness import require_orig

pytestmark = pytest.mark.differential

PROBE = r"""
import json, reinfors as rf, reinfors._reinfors as m
names = sorted(n for n in dir(m) if not n.startswith("_"))
print(json.dumps({
    "all": sorted(rf.__all__),
    "compiled": names,
    "same": {n: getattr(rf, n, None) is getattr(m, n) for n in names},
}))
"""


def _original() -> dict:
    out = subprocess.run([require_orig(), "-I", "-c", PROBE], capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def _ours() -> dict:
    m = rf._reinfors
    names = sorted(n for n in dir(m) if not n.startswith("_") and n not in ("annotations", "VERSION"))
    return {
        "all": sorted(rf.__all__),
        "compiled": names,
        "same": {n: getattr(rf, n, None) is getattr(m, n) for n in names},
    }


def test_public_names_and_compiled_module_equal_the_originals():
    theirs, ours = _original(), _ours()
    assert ours["all"] == theirs["all"]
    assert sorted(set(theirs["compiled"]) - set(ours["compiled"])) == []
    assert {n: ours["same"][n] for n in theirs["compiled"]} == theirs["same"]


def test_compiled_module_exports_are_listed_in_its_all():
    m = rf._reinfors
    assert sorted(m.__all__) == sorted(n for n in _ours()["compiled"])
