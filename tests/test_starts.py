"""``rf.starts.RandomStartingMoves``: validation, reproducibility, legality, retries and the
duplicate-format chance stream of restored openings."""

from __future__ import annotations

import pytest

import reinfors as rf
from reinfors.arena import _mix64
from reinfors.starts import RandomStartingMoves

C4 = rf.games.Connect4()
KUHN = rf.games.KuhnPoker()


def test_validation():
    with pytest.raises(ValueError, match="n_moves must be >= 1"):
        RandomStartingMoves(0)
    s = RandomStartingMoves(3)
    assert (s.n_moves, s.max_retries) == (3, 32)


def test_openings_are_reproducible_and_seed_dependent():
    start = RandomStartingMoves(6)
    snaps = [start.generate(C4, rf.Reward(), seed) for seed in range(8)]
    again = [start.generate(C4, rf.Reward(), seed) for seed in range(8)]
    assert [a for _, a in snaps] == [a for _, a in again]
    assert [s.to_bytes() for s, _ in snaps] == [s.to_bytes() for s, _ in again]
    assert len({tuple(a) for _, a in snaps}) > 1
    assert all(len(a) == 6 for _, a in snaps)


def test_opening_is_legal_play_and_snapshot_is_its_end():
    snap, actions = RandomStartingMoves(5).generate(C4, rf.Reward(), 11)
    env = rf.Env(C4, rf.Reward(), seed=_mix64(11, 0))  # first attempt's chance seed
    for a in actions:
        mover = env.active_agents()[0]
        assert a in env.legal_actions(mover)
        env.step({mover: a})
    restored = rf.Env(C4, rf.Reward(), seed=123)
    restored.restore(snap)
    assert restored.state() == env.state() and restored.ticks == 5 and not restored.done()
    # the draw rule: ply k picks legal[h_k % len(legal)] with h_k = mix(h_{k-1}, k), h = mix(seed, 0, 1)
    env, h = rf.Env(C4, rf.Reward(), seed=0), _mix64(11, 0, 1)
    for ply in range(5):
        legal = env.legal_actions(env.active_agents()[0])
        h = _mix64(h, ply)
        assert actions[ply] == legal[h % len(legal)]
        env.step({env.active_agents()[0]: actions[ply]})


def test_chance_games_restore_the_same_deal_and_stream():
    snap, actions = RandomStartingMoves(1).generate(KUHN, rf.Reward(), 3)
    a, b = rf.Env(KUHN, rf.Reward(), seed=1), rf.Env(KUHN, rf.Reward(), seed=2)
    a.restore(snap)
    b.restore(snap)
    assert a.state() == b.state()  # same hidden cards in both games of a pair
    assert a.information_state_key(0) == b.information_state_key(0)
    assert len(actions) == 1 and a.ticks == 1


def test_openings_that_end_the_game_are_redrawn_then_refused():
    # two-player Kuhn poker always ends within 3 moves: a 3-move opening is live only when the
    # first two moves are pass/bet (then a third decision ends it) — never live after 3 moves
    with pytest.raises(
        ValueError,
        match="could not draw a live 3-move opening in 32 attempts — the game may be too short",
    ):
        RandomStartingMoves(3).generate(KUHN, rf.Reward(), 0)
    with pytest.raises(ValueError, match="could not draw a live 1-move opening in 0 attempts"):
        RandomStartingMoves(1, max_retries=0).generate(C4, rf.Reward(), 0)
    # a 2-move Kuhn opening is live only for pass-bet: a few attempts may be needed
    snap, actions = RandomStartingMoves(2, max_retries=64).generate(KUHN, rf.Reward(), 0)
    assert actions == [0, 1]
    env = rf.Env(KUHN, rf.Reward())
    env.restore(snap)
    assert not env.done()
