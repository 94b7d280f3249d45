"""Issue 30 item 1: every integer parameter of every public constructor refuses what 0.4.0 refuses.

``caps_driver.py`` probes each integer parameter of the handle constructors, ``Engine``, ``Env``,
the solvers, ``Arena`` and ``RandomStartingMoves`` at 0, 1, 2**20, 2**20+1, 2**31-1, 2**32 and
2**63 (others valid), constructing the handle and then composing it (an Env for a game or an
encoder, an Engine on Connect4 for a policy / learner / chance mode / noise), in a child process
under a 4 GB address-space limit, in both builds.  Every outcome (accepted, or the exception type
and message) must equal 0.4.0's; run ``python tests/differential/caps_driver.py --python PY`` for
the table of one build.
"""

from __future__ import annotations

import sys

import pytest

from . import caps_driver
from .harness import require_orig

pytestmark = pytest.mark.differential

# Parameters only this build has (documented keyword extensions): probed in ours alone.
EXTENSIONS = {"policies.AlphaZero|leaf_batch", "policies.Mcts|leaf_batch", "Arena|n_threads"}
# GumbelAlphaZero (issue 33) is this build's own policy: its caps have no 0.4.0 counterpart.
EXTENSIONS |= {f"policies.GumbelAlphaZero|{p}" for p in ("num_simulations", "max_num_considered_actions", "max_depth", "leaf_batch")}


@pytest.fixture(scope="module")
def both():
    theirs = caps_driver.probe(require_orig())
    ours = caps_driver.probe(sys.executable)
    return ours, theirs


def _key(case_id: str) -> str:
    return case_id.rsplit("|", 1)[0]


def test_every_integer_cap_equals_the_originals(both):
    ours, theirs = both
    mine = {r["id"]: r for r in ours}
    assert len(theirs) > 300, len(theirs)
    diffs = []
    for t in theirs:
        o = mine.get(t["id"])
        assert o is not None, f"case {t['id']} missing from this build's probe"
        if (o["call"], o["compose"]) != (t["call"], t["compose"]):
            diffs.append(f"{t['id']}\n    ours {o['call']} / {o['compose']}\n    orig {t['call']} / {t['compose']}")
    assert not diffs, f"{len(diffs)} cases differ from 0.4.0:\n" + "\n".join(diffs)
    extra = {_key(r["id"]) for r in ours} - {_key(r["id"]) for r in theirs}
    assert extra <= EXTENSIONS, extra


def test_no_case_kills_the_process(both):
    """Under the 4 GB limit no case of either build dies (0.4.0 refuses or defers every size)."""
    for rows in both:
        dead = [r["id"] for r in rows if "died" in r["call"]]
        assert not dead, dead
