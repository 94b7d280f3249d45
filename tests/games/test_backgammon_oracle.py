"""Backgammon against OpenSpiel's ``backgammon`` (pyspiel): legal actions, observation tensors,
players to move, double turns and final returns along seeded random playouts.

pyspiel (open_spiel 2.0.2) rolls ordered dice (36 outcomes, "12" and "21" apart) and numbers its
opening outcomes differently from the 21/30 outcomes of reinfors 0.4.0, so the oracle's chance
outcome is chosen to give the same starter and the same dice (low, high) as this build's roll.
After the final move pyspiel has no player to move (both turn flags 0); reinfors 0.4.0 keeps the
loser as ``to_move`` (its turn flag 1), so terminal observations are compared without the two
turn flags (indices 194 and 197).
"""

from __future__ import annotations

import numpy as np
import pytest

import reinfors as rf

pyspiel = pytest.importorskip("pyspiel")

TURN_FLAGS = [194, 197]


def _dice_of(state) -> tuple:
    """pyspiel's dice (in order) from its observation tensor."""
    t = state.observation_tensor(0)
    return int(t[198]), int(t[199])


def _chance_to(state, player, dice):
    """Apply the pyspiel chance outcome that leaves ``player`` to move with ``dice`` in order."""
    for o, _ in state.chance_outcomes():
        c = state.clone()
        c.apply_action(o)
        if c.current_player() == player and _dice_of(c) == dice:
            state.apply_action(o)
            return
    raise AssertionError(f"no pyspiel outcome gives player {player} dice {dice}")


def _obs(env, p):
    return np.asarray(env.observe(p), np.float32).ravel()


@pytest.mark.parametrize("seed", range(6))
def test_playouts_match_openspiel(seed):
    game = pyspiel.load_game("backgammon", {"scoring_type": "full_scoring"})
    env = rf.Env(rf.games.Backgammon(), rf.Reward(), seed=seed)
    rs = np.random.default_rng(seed)
    for _episode in range(2):
        st = game.new_initial_state()
        s = env.state()
        _chance_to(st, s["to_move"], tuple(s["dice"]))
        decisions = doubles = 0
        while not env.done():
            p = env.active_agents()[0]
            assert st.current_player() == p
            legal = env.legal_actions(p)
            assert legal == sorted(st.legal_actions()), (seed, env.ticks)
            assert env.legal_actions(1 - p) == []
            for q in (0, 1):
                np.testing.assert_array_equal(_obs(env, q), np.asarray(st.observation_tensor(q), np.float32))
            a = int(rs.choice(legal))
            env.step({p: a})
            st.apply_action(a)
            decisions += 1
            if env.done():
                break
            s = env.state()
            doubles += s["double_turn"]
            if st.is_chance_node():
                assert not s["double_turn"]
                _chance_to(st, s["to_move"], tuple(s["dice"]))
            else:  # the second decision of a double: same player, same dice, no chance
                assert s["double_turn"] and st.current_player() == s["to_move"] == p
        assert st.is_terminal()
        winner = 0 if env.rewards[0] > 0 else 1
        assert st.returns()[winner] == env.rewards[winner] > 0  # default weights = margins 1/2/3
        for q in (0, 1):
            ours, theirs = _obs(env, q), np.asarray(st.observation_tensor(q), np.float32)
            keep = np.ones(200, bool)
            keep[TURN_FLAGS] = False
            np.testing.assert_array_equal(ours[keep], theirs[keep])
        assert decisions > 20 and doubles > 0
        env.reset()
