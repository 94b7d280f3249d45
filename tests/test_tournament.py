"""``rf.arena.Tournament`` and ``rf.arena.gate`` (issue 32, beyond 0.4.0): pairings, seeding,
scoring, ratings and SPRT gating over real Arena matches.

Contestants are the Connect4 compositions test_arena.py already compiles (Minimax(depth=2) and
Mcts(num_simulations=16) with a zero callback, EpsilonGreedyQ), so these tests compile nothing new.
"""

from __future__ import annotations

import numpy as np
import pytest

import reinfors as rf
from reinfors.arena import GateResult, Tournament, gate
from reinfors.starts import RandomStartingMoves

GAME = rf.games.Connect4()
REWARD = rf.Reward(win=1.0, loss=-1.0, draw=0.0)


def zero(obs):
    return np.zeros((obs.shape[0], 1, 7), np.float32)


MINIMAX = (rf.policies.Minimax(depth=2), zero, 1.0)
MCTS = (rf.policies.Mcts(num_simulations=16), zero, 1.0)
RANDOM = (rf.policies.EpsilonGreedyQ(epsilon=1.0), zero, 1.0)


def _score(res, c):
    return sum(1.0 if g.payoffs[c] > g.payoffs[1 - c] else 0.5 if g.payoffs[c] == g.payoffs[1 - c] else 0.0 for g in res.games)


def test_round_robin_plays_every_pair_once_and_rates_them():
    t = Tournament(GAME, REWARD, {"minimax": MINIMAX, "mcts": MCTS, "random": RANDOM}, games_per_pair=8,
                   start=RandomStartingMoves(2), seed=3)
    assert t.pairs == [("minimax", "mcts"), ("minimax", "random"), ("mcts", "random")]
    out = t.play()
    for (a, b), res in out.matches.items():
        assert len(res.games) == 8
        rec = out.results.record(a, b)
        assert rec.games == 8 and rec.wins + rec.draws / 2 == _score(res, 0)
    r = out.ratings(anchor="random")
    assert r["random"] == (0.0, 0.0) and r["minimax"][0] > 0  # depth-2 search beats random play
    assert len(r.rows()) == 3 and "minimax" in r.table()
    # reproducible per seed, and the pairings' seeds differ from each other
    again = Tournament(GAME, REWARD, {"minimax": MINIMAX, "mcts": MCTS, "random": RANDOM}, games_per_pair=8,
                       start=RandomStartingMoves(2), seed=3).play()
    assert all(again.matches[k].games == v.games for k, v in out.matches.items())
    openings = [tuple(tuple(g.actions[:2]) for g in m.games) for m in out.matches.values()]
    assert len(set(openings)) == 3


def test_gauntlet_plays_only_against_the_pool():
    t = Tournament(GAME, REWARD, {"a": MINIMAX, "b": MCTS, "pool": RANDOM}, games_per_pair=2, pool=["pool"])
    assert t.pairs == [("a", "pool"), ("b", "pool")]
    out = t.play()
    assert set(out.matches) == {("a", "pool"), ("b", "pool")} and out.results.record("a", "b").games == 0


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"contestants": [MINIMAX, MCTS]}, "contestants must be a mapping"),
        ({"contestants": {"a": MINIMAX}}, "at least two entries"),
        ({"contestants": {"": MINIMAX, "b": MCTS}}, "non-empty strings"),
        ({"games_per_pair": 3}, "games_per_pair must be an even integer"),
        ({"games_per_pair": 0}, "games_per_pair must be an even integer"),
        ({"pool": ["zzz"]}, "pool names unknown contestants"),
        ({"pool": ["a", "b"]}, "leave at least one outside"),
        ({"pool": "a"}, "pool must be a sequence"),
        ({"seed": 1.5}, "seed must be an integer"),
        ({"n_slots": 0}, "n_slots must be >= 1"),
        ({"contestants": {"a": MINIMAX, "b": (rf.policies.Minimax(), zero)}}, "a searched contestant is"),
    ],
)
def test_tournament_validation(kw, match):
    args = {"contestants": {"a": MINIMAX, "b": MCTS}, "games_per_pair": 2, **kw}
    with pytest.raises(ValueError, match=match):
        Tournament(GAME, REWARD, **args)


def test_tournament_refuses_two_externals_in_one_pairing():
    ext = rf.arena.External(lambda: None)
    with pytest.raises(ValueError, match="two External contestants"):
        Tournament(GAME, REWARD, {"a": ext, "b": ext}, games_per_pair=2)


def test_gate_accepts_a_clearly_stronger_candidate_early():
    out = gate(GAME, REWARD, MINIMAX, RANDOM, elo0=0, elo1=50, chunk_games=16, max_games=400,
               start=RandomStartingMoves(2), seed=1)
    assert isinstance(out, GateResult)
    assert out.accepted and out.decision == "H1" and out.games < 400 and out.games % 16 == 0
    assert out.record.games == out.games and out.record.wins > out.record.losses
    assert out.elo > 0 and out.sprt.n <= out.games // 2  # units are opening pairs


def test_gate_rejects_a_weaker_candidate_and_respects_max_games():
    out = gate(GAME, REWARD, RANDOM, MINIMAX, elo0=0, elo1=50, chunk_games=16, max_games=400, seed=1)
    assert not out.accepted and out.decision == "H0" and out.elo < 0
    capped = gate(GAME, REWARD, MCTS, MCTS, elo0=0, elo1=5, chunk_games=4, max_games=6, seed=2)
    assert capped.games == 6 and capped.decision is None and not capped.accepted


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"elo1": -5}, "elo1 must be > elo0"),
        ({"alpha": 0}, "alpha must be in"),
        ({"chunk_games": 5}, "chunk_games must be an even integer"),
        ({"max_games": 0}, "max_games must be an even integer"),
    ],
)
def test_gate_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        gate(GAME, REWARD, MINIMAX, MCTS, **kw)
