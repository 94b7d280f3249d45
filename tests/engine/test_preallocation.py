"""Issue 30 item 2: every size is bounded before it is allocated.

What a composition preallocates (search trees from depth / simulations / budgets, arenas,
predictions, the inference cache; an Env's rows) is computed as plain, saturating integers and
refused before any allocation (and before any compile): 0.4.0's ``ValueError`` where it has a cap,
else ``MemoryError`` naming the parameter and the bytes.  No size is ever a huge Python int turned
into a string (Python's "Exceeds the limit (4300 digits)").
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

import reinfors as rf
from reinfors._runtime import budget

C4_REWARD = rf.Reward(win=1.0, loss=-1.0)


def _q(obs):
    return np.zeros((len(obs), 1, 7))


@pytest.mark.parametrize("depth", [65537, 2**20])
def test_deep_minimax_is_refused_with_its_bytes_not_a_huge_integer(depth):
    t0 = time.perf_counter()
    eng = rf.Engine(rf.games.Connect4(), C4_REWARD, rf.policies.Minimax(depth=depth), rf.learners.TreeStrap(), n_games=2)
    assert time.perf_counter() - t0 < 5.0  # the geometry saturates instead of growing 2**20 levels
    with pytest.raises(MemoryError, match=rf"depth={depth} needs more than 2\*\*62 tree nodes per game"):
        eng.collect(4, _q)


def test_minimax_past_the_cap_is_refused_as_0_4_0():
    with pytest.raises(ValueError, match=r"^depth must be <= 1048576 \(got 2147483647\)$"):
        rf.Engine(rf.games.Connect4(), C4_REWARD, rf.policies.Minimax(depth=2**31 - 1), rf.learners.TreeStrap(), n_games=2)


def test_first_collect_refuses_what_memory_cannot_hold(monkeypatch):
    monkeypatch.setattr(budget, "available_bytes", lambda: 100_000)
    eng = rf.Engine(rf.games.Connect4(), None, rf.policies.Mcts(num_simulations=4096), rf.learners.TreeStrap(), n_games=8)
    with pytest.raises(MemoryError, match=r"would preallocate \d+ bytes \(search trees: \d+ bytes, driven by "
                       r"num_simulations\), more than the 100000 bytes"):  # fmt: skip
        eng.collect(4, _q)
    eng = rf.Engine(rf.games.Connect4(), None, rf.policies.Mcts(num_simulations=4), rf.learners.TreeStrap(), n_games=2,
                    infer_cache=1 << 20)  # fmt: skip
    with pytest.raises(MemoryError, match=r"inference cache: \d+ bytes, driven by infer_cache"):
        eng.collect(4, _q)


def test_env_refuses_rows_memory_cannot_hold(monkeypatch):
    monkeypatch.setattr(budget, "available_bytes", lambda: 1_000_000)
    with pytest.raises(MemoryError, match=r"an Env of gridworld\(.*size=1000\) would preallocate \d+ bytes "
                       r"\(chance outcomes: 8000000 bytes, driven by max_chance\)"):  # fmt: skip
        rf.Env(rf.games.GridWorld(size=1000), rf.Reward())


def test_batch_size_byte_ceiling_of_0_4_0():
    with pytest.raises(ValueError, match=r"^batch_size \(14361\) is too large for this composition: with 1 simultaneous "
                       r"agents per game, observation input \(rows x 1216 f32\) and callback output \(rows x 1 heads x "
                       r"4672 actions f64\) must each stay under 536870912 bytes$"):  # fmt: skip
        rf.Engine(rf.games.Chess(), None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), n_games=2, batch_size=14361)
    rf.Engine(rf.games.Chess(), None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), n_games=2, batch_size=14360)  # the largest 0.4.0 accepts


def test_available_bytes_sees_the_address_space_limit():
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
            "from reinfors._runtime import budget; print(budget.available_bytes())")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert 0 < int(out.stdout) < 3 << 30
