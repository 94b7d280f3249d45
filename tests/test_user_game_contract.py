"""Issue 30 item 4: a user game cannot write past its declared rows, and declares its observation box.

A user game's functions are run on guarded rows before its first step
(``reinfors/_runtime/contract_check.py``): a ``state_size`` declared 4 words short, a legal mask
written one past ``N_ACTIONS``, raise ``rf.games.GameContractError`` naming the function and the
declared vs written size, in ``rf.Env``, ``Engine.collect`` and ``check_game`` alike, before any
kernel (or compile) runs the game.  ``rf.games.custom(obs_low=, obs_high=)`` sets the observation
box, and ``check_game`` names the function, the index, the value and the bound of a value outside it.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import NIM_PILE as PILE
from helpers import NIM_TURN as TURN
from helpers import make_nim, nim_active, nim_encode, nim_init, nim_legal, nim_step, nim_terminal
from numba import njit

import reinfors as rf

HEADER = rf.games.STATE_HEADER
MOVES = HEADER + 7  # the move counter of the wide step: the game needs HEADER + 8 words


@njit
def wide_step(params, state, actions, amounts):
    nim_step(params, state, actions, amounts)
    state[MOVES] = state[0]


@njit
def loose_legal(params, state, agent, mask):
    n = nim_legal(params, state, agent, mask)
    mask[2] = 0  # one past N_ACTIONS = 2
    return n


def _game(name, *, state_size, step=wide_step, legal=nim_legal):
    return rf.games.custom(
        name, n_players=2, n_actions=2, obs_shape=(2,), state_size=state_size, reward_keys=("win", "loss"),
        reward_defaults=(1.0, -1.0), init=nim_init, step=step, legal=legal, active=nim_active,
        is_terminal=nim_terminal, encode=nim_encode, params=[4],
    )  # fmt: skip


def _pv(obs):
    return np.zeros((len(obs), 2)), np.zeros(len(obs))


SHORT = r"game 'wide': step\(\) wrote past the state row: declared state_size=8, written 12 words"


def test_header_is_public():
    assert rf.games.STATE_HEADER == 4 and issubclass(rf.games.GameContractError, ValueError)


def test_state_declared_four_words_short_fails_in_env():
    with pytest.raises(rf.games.GameContractError, match=SHORT):
        rf.Env(_game("wide", state_size=HEADER + 4), rf.Reward())
    # refused every time (only a game that passed is remembered)
    with pytest.raises(rf.games.GameContractError, match=SHORT):
        rf.Env(_game("wide", state_size=HEADER + 4))


def test_state_declared_four_words_short_fails_in_collect():
    eng = rf.Engine(_game("wide", state_size=HEADER + 4), None, rf.policies.Ppo(), rf.learners.Ppo(), n_games=2)
    with pytest.raises(rf.games.GameContractError, match=SHORT):
        eng.collect(4, _pv)


def test_state_declared_four_words_short_fails_in_check_game():
    with pytest.raises(rf.games.GameContractError, match=SHORT):
        rf.testing.check_game(_game("wide", state_size=HEADER + 4))


def test_state_declared_four_words_short_fails_after_check_game_too():
    # check_game first (it refuses the game): Env and Engine.collect on the same handle still refuse
    # it, on their first step, with the same error (a refused game is never remembered as checked)
    game = _game("wide", state_size=HEADER + 4)
    with pytest.raises(rf.games.GameContractError, match=SHORT):
        rf.testing.check_game(game)
    with pytest.raises(rf.games.GameContractError, match=SHORT):
        rf.Env(game, rf.Reward())
    eng = rf.Engine(game, None, rf.policies.Ppo(), rf.learners.Ppo(), n_games=2)
    with pytest.raises(rf.games.GameContractError, match=SHORT):
        eng.collect(4, _pv)
    with pytest.raises(rf.games.GameContractError, match=SHORT):
        rf.testing.check_game(game)


def test_other_rows_are_guarded_too():
    with pytest.raises(rf.games.GameContractError, match=r"legal\(\) wrote past its legal mask .*declared 2 elements, written 3"):
        rf.Env(_game("loose", state_size=HEADER + 8, legal=loose_legal))


@njit
def pile_encode(params, state, agent, out):
    out[0] = state[PILE]  # 0 .. params[0]: outside [0, 1]
    out[1] = 1.0 if state[TURN] == agent else 0.0


def test_custom_declares_its_observation_box_and_check_game_names_a_violation():
    def game(**kw):
        return make_nim(4, encode=pile_encode, name="nim_pile") if not kw else rf.games.custom(
            "nim_pile", n_players=2, n_actions=2, obs_shape=(2,), state_size=HEADER + 3, reward_keys=("win", "loss"),
            reward_defaults=(1.0, -1.0), init=nim_init, step=nim_step, legal=nim_legal, active=nim_active,
            is_terminal=nim_terminal, encode=pile_encode, params=[4], **kw)  # fmt: skip

    with pytest.raises(rf.testing.GameCheckError, match=r"encode\(\) wrote 4\.0 at observation index 0 for agent 0, "
                       r"outside the observation box \[0\.0, 1\.0\]"):  # fmt: skip
        rf.testing.check_game(game())
    boxed = game(obs_low=0.0, obs_high=4.0)
    space = boxed.observation_space()
    assert space.low.tolist() == [0.0, 0.0] and space.high.tolist() == [4.0, 4.0]
    assert rf.testing.check_game(boxed, episodes=4)["finished"] == 4
    with pytest.raises(ValueError, match="obs_low must not exceed obs_high"):
        game(obs_low=2.0, obs_high=1.0)
