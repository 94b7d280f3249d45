"""Kuhn poker: every terminal history's chip deltas, deals, keys, observations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import reinfors as rf


def _deal(env, cards):
    """Force a deal (test helper): overwrite the card words of the state row."""
    from reinfors.jit.games import kuhn_poker as K

    env._state[K.CARDS : K.CARDS + len(cards)] = cards


def _play(p, cards, history):
    env = rf.Env(rf.games.KuhnPoker(players=p), rf.Reward())
    _deal(env, cards)
    events = []
    for i, a in enumerate(history):
        events = env.step({i % p: a})
    return env, events


# (history, contributions, showdown seats) for p = 2 and p = 3 (OpenSpiel's N-player rules).
P2 = [
    ("pp", [1, 1], [0, 1]),
    ("pbp", [1, 2], [1]),
    ("pbb", [2, 2], [0, 1]),
    ("bp", [2, 1], [0]),
    ("bb", [2, 2], [0, 1]),
]
P3 = [
    ("ppp", [1, 1, 1], [0, 1, 2]),
    ("ppbpp", [1, 1, 2], [2]),
    ("ppbpb", [1, 2, 2], [1, 2]),
    ("ppbbp", [2, 1, 2], [0, 2]),
    ("ppbbb", [2, 2, 2], [0, 1, 2]),
    ("pbpp", [1, 2, 1], [1]),
    ("pbpb", [2, 2, 1], [0, 1]),
    ("pbbp", [1, 2, 2], [1, 2]),
    ("pbbb", [2, 2, 2], [0, 1, 2]),
    ("bpp", [2, 1, 1], [0]),
    ("bpb", [2, 1, 2], [0, 2]),
    ("bbp", [2, 2, 1], [0, 1]),
    ("bbb", [2, 2, 2], [0, 1, 2]),
]


@pytest.mark.parametrize("p,table", [(2, P2), (3, P3)])
def test_every_terminal_history_pays_the_pot_to_the_best_showdown_card(p, table):
    for cards in itertools.permutations(range(p + 1), p):
        for hist, contrib, showdown in table:
            env, events = _play(p, list(cards), [1 if c == "b" else 0 for c in hist])
            assert env.done(), (cards, hist)
            winner = max(showdown, key=lambda s: cards[s])
            want = [-float(c) for c in contrib]
            want[winner] += float(sum(contrib))
            assert events == [(i, want[i]) for i in range(p)], (cards, hist)
            assert env.rewards == want


def test_non_terminal_prefixes_emit_nothing():
    env, events = _play(3, [0, 1, 2], [0, 1])
    assert events == [] and not env.done() and env.active_agents() == [2]
    assert env.legal_actions(2) == [0, 1] and env.legal_actions(0) == []


def test_seeded_deals_match_the_original():
    assert rf.Env(rf.games.KuhnPoker(), seed=0).state()["cards"] == bytes([2, 0])
    assert rf.Env(rf.games.KuhnPoker(players=3), seed=0).state()["cards"] == bytes([3, 1, 0])
    assert rf.Env(rf.games.KuhnPoker(players=5), seed=2).state()["cards"] == bytes([3, 4, 2, 5, 0])
    env = rf.Env(rf.games.KuhnPoker(players=3), seed=11)
    env.reset()
    assert env.state()["cards"] == bytes([2, 0, 3])


def test_observation_and_information_state_key():
    env, _ = _play(5, [3, 4, 2, 5, 0], [0, 0, 1, 0, 1, 1])
    env.step({1: 0})  # p p b p b b p: terminal after 7 actions
    assert env.done()
    np.testing.assert_array_equal(env.observe(0).ravel(), [0, 0, 0, 1, 0, 0, 0.5, 0.5, 1, 0.5, 1, 1, 0.5, 0, 0])
    assert env.information_state_key(0) == bytes([0, 3, 0, 0, 1, 0, 1, 1, 0])
    with pytest.raises(ValueError, match="agent 5 out of range$"):
        env.information_state_key(5)


def test_check_game_all_player_counts():
    for p in (2, 3, 6, 10):
        rf.testing.check_game(rf.games.KuhnPoker(players=p), episodes=10)
