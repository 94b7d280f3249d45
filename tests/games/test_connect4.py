"""Connect 4 rules, scripted with board diagrams (row 0 = bottom), plus check_game."""

from __future__ import annotations

import numpy as np
import pytest

import reinfors as rf


def _play(moves, reward=None):
    env = rf.Env(rf.games.Connect4(), reward if reward is not None else rf.Reward())
    events = []
    for i, col in enumerate(moves):
        events = env.step({i % 2: col})
    return env, events


def test_vertical_win_for_first_player():
    #  row 3  X
    #  row 2  X O
    #  row 1  X O
    #  row 0  X O
    env, events = _play([0, 1, 0, 1, 0, 1, 0])
    assert events == [(0, "win"), (1, "loss")]
    assert env.done() and env.rewards == [1.0, -1.0] and env.active_agents() == []
    assert env.state()["turn"] == 0  # the winner stays "to move", as the original


def test_horizontal_win_for_second_player_orders_events_by_agent():
    # O O O O on row 1 over X X X X . . on row 0? No: X plays 0,1,2 then elsewhere; O on top.
    env, events = _play([0, 0, 1, 1, 2, 2, 6, 3, 6, 3])
    assert env.state()["board"][1][:4] == bytes([2, 2, 2, 2])
    assert events == [(0, "loss"), (1, "win")]
    assert env.rewards == [-1.0, 1.0]


@pytest.mark.parametrize("diag", ["rising", "falling"])
def test_diagonal_wins(diag):
    if diag == "rising":  # X at (0,0) (1,1) (2,2) (3,3)
        moves = [0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3]
    else:  # X at (3,0) (2,1) (1,2) (0,3)
        moves = [3, 2, 2, 1, 1, 0, 1, 0, 0, 6, 0]
    env, events = _play(moves)
    assert events == [(0, "win"), (1, "loss")], env.state()


def test_full_board_draw():
    order = [3, 3, 5, 2, 1, 2, 0, 0, 5, 0, 1, 4, 6, 0, 2, 4, 3, 5, 5, 2, 4, 2, 2, 3, 0, 1, 4, 4, 1, 0, 4, 6, 6, 5, 6, 6]
    order += [3, 3, 5, 6, 1, 1]
    env, events = _play(order, rf.Reward(draw=0.25))
    assert env.done() and env.ticks == 42
    assert events == [(0, "draw"), (1, "draw")] and env.rewards == [0.25, 0.25]
    assert env.state()["turn"] == 1  # the last mover


def test_full_column_is_illegal_and_rejection_changes_nothing():
    env, _ = _play([0, 0, 0, 0, 0, 0])  # X O X O X O: no win
    before = env.state()
    with pytest.raises(ValueError, match=r"action 0 is illegal for agent 0 \(legal: \[1, 2, 3, 4, 5, 6\]\)"):
        env.step({0: 0})
    assert env.state() == before and env.ticks == 6 and env.legal_actions(0) == [1, 2, 3, 4, 5, 6]


def test_observation_planes_are_observer_relative_rows_bottom_first():
    env, _ = _play([3, 3, 0])
    assert np.argwhere(env.observe(0)).tolist() == [[0, 0, 0], [0, 0, 3], [1, 1, 3]]
    assert np.argwhere(env.observe(1)).tolist() == [[0, 1, 3], [1, 0, 0], [1, 0, 3]]


def test_snapshot_rejects_forged_boards():
    env, _ = _play([3])
    snap = env.snapshot()
    blob = bytearray(snap.to_bytes())
    # Payload: layout byte, then int64 words; the first cell word lives after the 4-word header.
    payload_at = len(blob) - 8 * env._def.state_size - 1
    cell0 = payload_at + 1 + 8 * 4
    blob[cell0] = 7
    with pytest.raises(ValueError, match="invalid snapshot state: cell value out of range"):
        env.restore(rf.EnvSnapshot.from_bytes(bytes(blob)))
    blob[cell0] = 1  # a floating piece: column 0 has no height
    blob[cell0 + 8 * 14] = 0
    with pytest.raises(ValueError, match="invalid snapshot state"):
        env.restore(rf.EnvSnapshot.from_bytes(bytes(blob)))
    assert env.ticks == 1 and env.state()["board"][0][3] == 1  # untouched


def test_check_game():
    stats = rf.testing.check_game(rf.games.Connect4())
    assert stats["finished"] == stats["episodes"] == 20 and stats["batched_ticks"] > 0
