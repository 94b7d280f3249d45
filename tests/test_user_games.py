"""User-defined games: njit functions written in a test file (Nim, tests/helpers.py) run through
Env and check_game.

The game is a one-pile Nim variant: players alternately take 1 or 2 stones from a pile of
``params[0]``; whoever takes the last stone wins.  With a pile of 4, the first player can
always win by leaving a multiple of 3.
"""

from __future__ import annotations

from helpers import (  # tests/ is on sys.path (rootdir conftest); Nim is defined there
    make_nim,
    nim_active,
    nim_encode,
    nim_legal,
    nim_step,
    nim_terminal,
)
from numba import njit

import reinfors as rf
from reinfors.jit.games import tictactoe
from reinfors.jit.games._contract import HEADER


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
