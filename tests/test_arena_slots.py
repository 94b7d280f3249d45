"""The Arena's kernel path (``reinfors/_runtime/match.py``: games as slots, pooled searches,
batch stepping) against its general scheduler (``arena._Run``: ``choose`` + ``Env.step``):
the same games, openings, payoffs and seeds, for deterministic AND sampling contestants (both
paths hand ``choose`` the same ordered batches and seeds).

Compositions are test_arena.py's (Connect4 Minimax(depth=2), Mcts(num_simulations=16) and
EpsilonGreedyQ), so only the match kernels compile here.
"""

from __future__ import annotations

import numpy as np
import pytest

import reinfors as rf
from reinfors.arena import Arena, External
from reinfors.starts import RandomStartingMoves

GAME = rf.games.Connect4()
REWARD = rf.Reward(win=1.0, loss=-1.0, draw=0.0)


def zero(obs):
    return np.zeros((obs.shape[0], 1, 7), np.float32)


def planes(obs):  # elementwise: row-independent bits
    q = (obs[:, 0:7] - obs[:, 42:49]) * np.float32(0.25) + obs[:, 35:42] * np.float32(0.125)
    return q[:, None, :].astype(np.float32)


def two_heads(obs):
    q = planes(obs)
    return np.concatenate([q, -q], axis=1)


MINIMAX = (rf.policies.Minimax(depth=2), zero, 1.0)
MCTS = (rf.policies.Mcts(num_simulations=16), zero, 1.0)
SAMPLED = (rf.policies.Mcts(num_simulations=16, temperature=1.0), planes, 1.0)
GREEDY = (rf.policies.EpsilonGreedyQ(epsilon=0.0), planes, 1.0)
NOISY = (rf.policies.EpsilonGreedyQ(n_heads=2, epsilon=0.3), two_heads, 1.0)


def _games(res):
    return [(g.game_id, g.opening_id, g.seats, g.payoffs, g.length, g.actions) for g in res.games]


def _both(contestants, n_games, **kw):
    arena = Arena(GAME, REWARD, contestants, **kw)
    assert arena._kernel_path()
    fast = arena.play(n_games)
    arena._kernel_path = lambda: False  # the general scheduler, same arena
    return fast, arena.play(n_games)


@pytest.mark.parametrize(
    ("contestants", "n_games", "kw"),
    [
        ([MINIMAX, MCTS], 12, {"n_slots": 5, "start": RandomStartingMoves(2), "seed": 7}),
        ([SAMPLED, MINIMAX], 6, {"n_slots": 3, "seed": 11}),
        ([GREEDY, NOISY], 20, {"n_slots": 16, "start": RandomStartingMoves(3), "seed": 2**64 - 1}),
        ([NOISY, MCTS], 8, {"n_slots": 1, "seed": 3}),
    ],
    ids=["minimax-mcts", "sampled-mcts", "greedy-noisy", "one-slot"],
)
def test_kernel_path_plays_the_general_paths_games(contestants, n_games, kw):
    fast, general = _both(contestants, n_games, **kw)
    assert _games(fast) == _games(general)
    assert [g.game_id for g in fast.games] == list(range(n_games))
    assert fast.payoff(0) == general.payoff(0)


def test_kernel_path_is_repeatable_and_reuses_its_runtimes():
    from reinfors._runtime import match

    a = Arena(GAME, REWARD, [MINIMAX, MCTS], n_slots=4, start=RandomStartingMoves(2), seed=5)
    first = a.play(8)
    held = dict(match._POOL)
    assert len(held) >= 2  # both searched contestants' Choosers went back to the pool
    again = Arena(GAME, REWARD, [MINIMAX, MCTS], n_slots=4, start=RandomStartingMoves(2), seed=5).play(8)
    assert _games(first) == _games(again)
    assert all(match._POOL.get(k) is v for k, v in held.items())


def test_wrapped_policies_and_external_seats_take_the_general_path():
    class Wrapped:
        def __init__(self, policy):
            self.policy = policy

        def choose(self, envs, infer, seed=0, plies=None, *, gamma):
            return self.policy.choose(envs, infer, seed=seed, plies=plies, gamma=gamma)

    class Centre:
        def act(self, view):
            return min(view.legal_actions, key=lambda c: (abs(c - 3), c))

    assert not Arena(GAME, REWARD, [(Wrapped(MINIMAX[0]), zero, 1.0), MCTS])._kernel_path()
    assert not Arena(GAME, REWARD, [MINIMAX, External(Centre)])._kernel_path()


def test_kernel_path_errors_match_the_general_paths():
    def broken(obs):
        raise KeyError("model offline")

    for path in (True, False):
        arena = Arena(GAME, REWARD, [MINIMAX, (MCTS[0], broken, 1.0)], n_slots=2)
        arena._kernel_path = lambda p=path: p
        with pytest.raises(KeyError, match="model offline"):
            arena.play(2)
        arena = Arena(GAME, None, [MINIMAX, MCTS], n_slots=2)
        arena._kernel_path = lambda p=path: p
        with pytest.raises(ValueError, match="choose needs terminal values"):
            arena.play(2)
    # a failed match hands nothing back: the next one still plays the same games
    fast, general = _both([MINIMAX, (MCTS[0], zero, 1.0)], 4, n_slots=2, seed=1)
    assert _games(fast) == _games(general)
