"""Issue 30 item 3: no integer parameter takes the process down (driver: ``memory_sweep_driver.py``).

Every integer parameter of every public constructor and of the Engine, at the caps (2**20,
2**20+1, 2**31-1, 2**32, 2**63) and at its largest accepted value, is constructed, composed and
used briefly (a first collect stopped after two callback calls; only the allocations for search
knobs past 4096) in child processes under ``RLIMIT_AS`` = 4 GB.  Each case ends in success or a
``ValueError`` / ``MemoryError`` / ``OverflowError`` (``TypeError`` for a wrong kind) with a
message; no child dies (signal, OOM kill), and no message is Python's "Exceeds the limit (4300
digits)".  Fast tier: the catalogue's policies on Connect4 (compositions the suite compiles
anyway) and the fast games; slow tier: the other games' constructors and Engine compositions.
"""

from __future__ import annotations

import pytest

from . import memory_sweep_driver as driver

ALLOWED = {"ValueError", "MemoryError", "OverflowError", "TypeError"}


def check(rows: list[dict]) -> None:
    kinds: dict = {}
    for r in rows:
        k = "ok" if "ok" in r["out"] else "died" if "died" in r["out"] else r["out"].get("kind", r["out"]["error"])
        kinds[k] = kinds.get(k, 0) + 1
    print(f"memory sweep: {len(rows)} (parameter, value) cases: {kinds}")  # shown with -s / -rP
    dead = [f"{r['id']}: {r['out']}" for r in rows if "died" in r["out"]]
    assert not dead, "children died:\n" + "\n".join(dead)
    bad = [f"{r['id']}: {r['out']}" for r in rows if "error" in r["out"] and (
        r["out"].get("kind", r["out"]["error"]) not in ALLOWED or not r["out"]["message"] or "4300" in r["out"]["message"]
        or "digits" in r["out"]["message"])]  # fmt: skip
    assert not bad, f"{len(bad)} cases end badly:\n" + "\n".join(bad[:40])


def test_memory_sweep_fast_tier():
    rows = driver.sweep("fast")
    check(rows)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) and len(ids) > 250, len(ids)
    for want in ("policies.Minimax|depth|", "policies.AlphaZero|num_simulations|", "Engine[Connect4,Mcts]|n_games|",
                 "Engine[Connect4,EpsilonGreedyQ,pad]|batch_size|", "Engine[Connect4,AlphaZero]|infer_cache|"):  # fmt: skip
        assert any(i.startswith(want) for i in ids), want
    assert sum("ok" in r["out"] for r in rows) > 50


@pytest.mark.slow
@pytest.mark.timeout(3600)  # every game's compositions, cold compiles in child processes: > 10 min
def test_memory_sweep_slow_tier():
    check(driver.sweep("slow"))
