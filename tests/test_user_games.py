"""User-defined games: njit functions written right here run through Env and check_game.

The game is a one-pile Nim variant: players alternately take 1 or 2 stones from a pile of
``params[0]``; whoever takes the last stone wins.  With a pile of 4, the first player can
always win by leaving a multiple of 3.
"""

from __future__ import annotations

from numba import njit

import reinfors as rf
from reinfors.jit.games import tictactoe
from reinfors.jit.games._contract import HEADER

PILE = HEADER
TURN = HEADER + 1
WINNER = HEADER + 2


@njit
def nim_init(params, state):
    state[PILE] = params[0]
    state[TURN] = 0
    state[WINNER] = -1


@njit
def nim_legal(params, state, agent, mask):
    n = 0
    for a in range(2):
        ok = state[TURN] == agent and a + 1 <= state[PILE]
        mask[a] = 1 if ok else 0
        n += 1 if ok else 0
    return n


@njit
def nim_active(params, state, out):
    out[0] = state[TURN]
    return 1


@njit
def nim_step(params, state, actions, amounts):
    p = state[TURN]
    state[PILE] -= actions[p] + 1
    if state[PILE] == 0:
        state[WINNER] = p
        amounts[p, 0] += 1.0
        amounts[1 - p, 1] += 1.0
    else:
        state[TURN] = 1 - p


@njit
def nim_terminal(params, state):
    return state[WINNER] >= 0


@njit
def nim_encode(params, state, agent, out):
    out[0] = state[PILE] / params[0]
    out[1] = 1.0 if state[TURN] == agent else 0.0


def make_nim(pile=4, encode=nim_encode, name="nim"):
    return rf.games.custom(
        name,
        n_players=2,
        n_actions=2,
        obs_shape=(2,),
        state_size=HEADER + 3,
        reward_keys=("win", "loss"),
        reward_defaults=(1.0, -1.0),
        init=nim_init,
        step=nim_step,
        legal=nim_legal,
        active=nim_active,
        is_terminal=nim_terminal,
        encode=encode,
        params=[pile],
    )


def test_user_game_runs_through_env():
    env = rf.Env(make_nim(4), rf.Reward(win=2.0))
    assert env.legal_actions(0) == [0, 1] and env.observe(0).tolist() == [1.0, 1.0]
    env.step({0: 0})  # take 1 -> 3 left: a losing position for agent 1
    env.step({1: 1})  # take 2 -> 1 left
    events = env.step({0: 0})  # agent 0 takes the last stone
    assert env.done() and events == [(0, {"win": 1.0}), (1, {"loss": 1.0})]
    assert env.rewards == [2.0, -1.0]
    assert env.resolved_config()["game"] == {"encoder": {"name": "nim"}, "name": "nim"}


def test_user_game_passes_check_game():
    stats = rf.testing.check_game(make_nim(7))
    assert stats["finished"] == 20 and stats["batched_ticks"] > 0


def test_template_game_passes_check_game():
    game = rf.games.from_module(tictactoe)
    stats = rf.testing.check_game(game)
    assert stats["finished"] == stats["episodes"]


def test_missing_exports_are_named():
    import types

    import pytest

    ns = types.SimpleNamespace(NAME="x", N_ACTIONS=2, REWARD_KEYS=("a",), REWARD_DEFAULTS=(0.0,))
    with pytest.raises(TypeError, match="missing the required export 'init'"):
        rf.games.from_module(ns)
    with pytest.raises(TypeError, match="must be a numba.njit function"):
        rf.games.custom(
            "bad",
            n_players=1,
            n_actions=1,
            obs_shape=(1,),
            state_size=HEADER + 1,
            reward_keys=("a",),
            reward_defaults=(0.0,),
            init=lambda p, s: None,
            step=nim_step,
            legal=nim_legal,
            active=nim_active,
            is_terminal=nim_terminal,
            encode=nim_encode,
        )


def test_check_game_catches_a_broken_encoder():
    import pytest

    @njit
    def lazy_encode(params, state, agent, out):
        out[0] = 0.0  # never writes out[1]

    game = make_nim(4, encode=lazy_encode, name="nim_lazy")
    with pytest.raises(rf.testing.GameCheckError, match="left 1 observation elements unwritten"):
        rf.testing.check_game(game)
