"""Issue 30 item 1 beyond the Engine: choose, the solvers, Deep CFR's buffers and the openings
bound what they allocate (or grow) before allocating it, with a ``MemoryError`` naming the
parameter and the bytes.  The memory available is made small by patching
``budget.available_bytes`` (the single source every bound reads), so no test allocates much.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import reinfors as rf
from reinfors import starts
from reinfors._runtime import budget
from reinfors.solvers import cfr as CF
from reinfors.solvers import deep_cfr as DC


def _avail(monkeypatch, n: int) -> None:
    monkeypatch.setattr(budget, "available_bytes", lambda: n)


def _bytes_in(msg: str) -> list[int]:
    return [int(x) for x in re.findall(r"(\d+) bytes", msg)]


def test_nbytes_and_total_saturate_without_huge_integers():
    assert budget.nbytes(3, 4, itemsize=8) == 96
    assert budget.nbytes(0, 2**63, itemsize=8) == 0
    assert budget.nbytes(2**63, 2**63, 2**63, itemsize=8) == budget.SATURATED
    assert budget.total(budget.SATURATED, budget.SATURATED, 5) == budget.SATURATED
    big = 1
    for _ in range(10_000):  # 10k dims of 2**20: a naive product would have ~60k bits
        big = budget.nbytes(big, 2**20)
    assert big == budget.SATURATED


def test_check_growth_along_any_axis(monkeypatch):
    arrays = {"sb_states": np.zeros((4, 8, 100), np.int64), "r_meta": np.zeros((16, 3), np.int64)}
    _avail(monkeypatch, 60_000)
    budget.check_growth(arrays, ("sb_states",), 8, "the start buffer", axis=1)  # no growth: no check
    budget.check_growth(arrays, ("sb_states",), 9, "the start buffer", axis=1, param="start_buffer_capacity")
    with pytest.raises(MemoryError, match=r"growing the start buffer to 16 rows .*grown arrays: 102400 bytes, "
                                          r"driven by start_buffer_capacity"):  # fmt: skip
        budget.check_growth(arrays, ("sb_states",), 16, "the start buffer", axis=1, param="start_buffer_capacity")
    with pytest.raises(MemoryError, match=r"growing the pool to 4096 records .*record pool: 196608 bytes, driven by n_games"):
        budget.check_growth(arrays, ("r_meta",), 4096, "the pool")


def test_choose_refuses_a_runtime_memory_cannot_hold(monkeypatch):
    _avail(monkeypatch, 10_000)
    env = rf.Env(rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0, draw=0.0))
    pol = rf.policies.Minimax(depth=3)
    with pytest.raises(MemoryError, match=r"choose over 2 envs \(minimax\)") as e:
        # a gamma no other test uses: no cached runtime of this key (the bound is at its build)
        pol.choose([env, env.fork()], lambda o: np.zeros((len(o), 1, 7), np.float32), gamma=0.4321)
    msg = str(e.value)
    assert "driven by depth" in msg and "10000 bytes of memory available" in msg
    assert _bytes_in(msg)[0] > 10_000


def test_deep_cfr_refuses_a_collect_whose_samples_cannot_fit():
    s = rf.solvers.DeepCfr(rf.games.KuhnPoker(), seed=0)
    s.next_iteration()
    with pytest.raises(MemoryError, match=r"collect\(traversals=1099511627776\).*driven by traversals"):
        s.collect(0, 2**40, lambda o: np.zeros((len(o), 2), np.float32))
    # the refused collect advanced nothing: the next one draws the same streams as a fresh solver's
    t = rf.solvers.DeepCfr(rf.games.KuhnPoker(), seed=0)
    t.next_iteration()
    cb = lambda o: np.zeros((len(o), 2), np.float32)  # noqa: E731
    assert np.array_equal(s.collect(0, 16, cb).advantage_obs, t.collect(0, 16, cb).advantage_obs)


def test_deep_cfr_buffers_are_bounded_when_they_grow(monkeypatch):
    d = rf.games.KuhnPoker()._def
    buf = DC._Buffers(d, 8, DC._DEPTH0)
    buf.cnt[DC._dc.C_ADV] = buf.adv_obs.shape[0]  # full: the next step doubles the advantage buffers
    _avail(monkeypatch, 1000)
    before = buf.adv_obs
    with pytest.raises(MemoryError, match=r"growing the Deep CFR sample buffers of collect\(traversals=77\)") as e:
        buf.grow(77)
    assert "driven by traversals" in str(e.value) and buf.adv_obs is before
    monkeypatch.undo()
    buf.grow(77)
    assert buf.adv_obs.shape[0] >= 2 * before.shape[0] and np.array_equal(buf.adv_obs[: len(before)], before)


def test_deep_cfr_first_group_is_bounded(monkeypatch):
    _avail(monkeypatch, 1000)
    with pytest.raises(MemoryError, match="Deep CFR buffers of a 8192-traversal group"):
        DC._Buffers(rf.games.KuhnPoker()._def, 8192, DC._DEPTH0)


def test_cfr_tree_and_tables_are_bounded_before_allocation(monkeypatch):
    monkeypatch.setattr(CF, "_trees", {})  # no cached tree: the bound runs at the tree's build
    _avail(monkeypatch, 1000)
    c = rf.solvers.Cfr(rf.games.KuhnPoker(players=3), variant="vanilla")
    with pytest.raises(MemoryError, match=r"the CFR game tree of kuhn_poker \(\d+ nodes, \d+ information states\)"):
        c.iterate(1)
    assert c.iterations == 0
    # a tree that fits, then tables that do not
    monkeypatch.undo()
    monkeypatch.setattr(CF, "_trees", {})
    tree = CF.game_tree(rf.games.KuhnPoker(players=3))
    need = CF.tree_bytes(tree.n_nodes, len(tree.edge_child), len(tree.util), tree.n_infosets, 3, 2,
                         tree.key_data.shape[1], len(tree.table))  # fmt: skip
    assert need >= tree.n_nodes * 25
    _avail(monkeypatch, 100)
    with pytest.raises(MemoryError, match=r"the CFR tables of \d+ information states x 2 actions"):
        c.iterate(1)


def test_cfr_load_bounds_its_live_tables(monkeypatch):
    c = rf.solvers.Cfr(rf.games.TexasHoldem(num_players=2), variant="external_mccfr")
    # a well-formed header claiming 10**6 entries (the body is then checked, after the bound)
    blob = bytearray(c.save())
    blob[91:99] = (10**6).to_bytes(8, "little")
    blob += bytes(8 * 10**6)
    _avail(monkeypatch, 10**6)
    with pytest.raises(MemoryError, match=r"MCCFR tables of a payload of 1000000 information states"):
        c.load(bytes(blob))


def test_long_openings_are_bounded_as_their_action_list_grows(monkeypatch):
    monkeypatch.setattr(starts, "_GROW_CHECK", 4)
    _avail(monkeypatch, 500)  # an Env (456 bytes) and the list at ply 4 (320) fit; at ply 8 (640) not
    gen = starts.RandomStartingMoves(12)
    with pytest.raises(MemoryError, match=r"action list of a 12-move opening.*driven by n_moves"):
        gen.generate(rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0, draw=0.0), 0)
    monkeypatch.undo()
    assert len(gen.generate(rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0, draw=0.0), 0)[1]) == 12


@pytest.mark.slow
def test_holdem_mccfr_tables_are_bounded_when_they_grow(monkeypatch):
    c = rf.solvers.Cfr(rf.games.TexasHoldem(num_players=2), variant="external_mccfr", seed=3)
    row = c._live_row_bytes()
    _avail(monkeypatch, 3000 * row)  # 1024 rows fit; their first growth (to 4096) does not
    with pytest.raises(MemoryError, match=r"cannot grow to 4096 rows .*driven by n=100000 iterations"):
        c.iterate(100_000)
    assert c.num_infosets >= 512  # it grew to the bound, not before
