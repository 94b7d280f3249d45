"""Oracle: Cfr's CFR / CFR+ NashConv trajectories equal OpenSpiel's Python solvers (alternating
updates) and ``exploitability.nash_conv`` to 1e-10 on Kuhn 2p, Kuhn 3p and Leduc."""

from __future__ import annotations

import pytest

import reinfors as rf
from reinfors.solvers import Cfr

pyspiel = pytest.importorskip("pyspiel")
cfr_py = pytest.importorskip("open_spiel.python.algorithms.cfr")
expl_py = pytest.importorskip("open_spiel.python.algorithms.exploitability")


def _trajectory(game_name, params, variant, checkpoints):
    game = pyspiel.load_game(game_name, params)
    solver = (cfr_py.CFRPlusSolver if variant == "plus" else cfr_py.CFRSolver)(game)
    out, done = [], 0
    for cp in checkpoints:
        for _ in range(cp - done):
            solver.evaluate_and_update_policy()
        done = cp
        out.append(float(expl_py.nash_conv(game, solver.average_policy())))
    return out


def _ours(handle, variant, checkpoints):
    c = Cfr(handle, variant=variant)
    out, done = [], 0
    for cp in checkpoints:
        c.iterate(cp - done)
        done = cp
        out.append(c.nash_conv())
    return out


@pytest.mark.parametrize("variant", ["vanilla", "plus"])
def test_kuhn2(variant):
    cps = [1, 2, 5, 20, 60]
    assert _ours(rf.games.KuhnPoker(), variant, cps) == pytest.approx(_trajectory("kuhn_poker", {}, variant, cps), abs=1e-10)


@pytest.mark.parametrize("variant", ["vanilla", "plus"])
def test_kuhn3(variant):
    cps = [1, 3, 10]
    ours = _ours(rf.games.KuhnPoker(players=3), variant, cps)
    assert ours == pytest.approx(_trajectory("kuhn_poker", {"players": 3}, variant, cps), abs=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["vanilla", "plus"])
def test_leduc(variant):
    cps = [1, 2, 4]
    assert _ours(rf.games.LeducPoker(), variant, cps) == pytest.approx(_trajectory("leduc_poker", {}, variant, cps), abs=1e-10)


def test_kuhn2_game_value_and_infosets():
    game = pyspiel.load_game("kuhn_poker")
    solver = cfr_py.CFRPlusSolver(game)
    for _ in range(200):
        solver.evaluate_and_update_policy()
    c = Cfr(rf.games.KuhnPoker())
    c.iterate(200)
    assert c.num_infosets == len(solver._info_state_nodes) == 12
    from open_spiel.python.algorithms import expected_game_score

    ev = expected_game_score.policy_value(game.new_initial_state(), [solver.average_policy()] * 2)
    assert c.expected_value(0) == pytest.approx(ev[0], abs=1e-10)
    assert c.expected_value(0) == pytest.approx(-1 / 18, abs=3e-3)
