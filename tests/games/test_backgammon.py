"""Backgammon: the rules by hand (bar entry, hits, bear-off, forced dice usage, doubles, margins),
the chance nodes, the handle surface, snapshots and the conformance checker."""

from __future__ import annotations

import re

import numpy as np
import pytest

import reinfors as rf
from reinfors.jit.games import backgammon as bg

B = bg.BOARD
PASS = 1351


def act(first, second=25, high_first=True):
    """OpenSpiel's action id: digits are points 0-23, 24 the bar, 25 a pass."""
    return first + 26 * second + (0 if high_first else 676)


def position(x, o, *, bar=(0, 0), to_move=0, dice=(1, 2), double=False, reward=None):
    """An Env at a hand-set decision: ``x``/``o`` map points to checker counts; whatever is not
    on a point or the bar counts as borne off."""
    env = rf.Env(rf.games.Backgammon(), reward or rf.Reward(), seed=0)
    st = env._state
    st[B : B + 52] = 0
    for i, n in x.items():
        st[B + i] = n
    for i, n in o.items():
        st[B + 24 + i] = n
    st[B + 48], st[B + 49] = bar
    st[B + 50] = 15 - sum(x.values()) - bar[0]
    st[B + 51] = 15 - sum(o.values()) - bar[1]
    st[bg.TO_MOVE] = to_move
    st[bg.DICE], st[bg.DICE + 1] = min(dice), max(dice)
    st[bg.DOUBLE] = int(double)
    st[bg.PHASE] = bg.PH_DECIDE
    assert bg.validate_state(env._def.params, st) is None
    return env


O_REST = {12: 15}  # an out-of-the-way O army (15 checkers on point 12)


# -- opening, chance ---------------------------------------------------------------------------


def test_opening_position_roll_and_first_player():
    env = rf.Env(rf.games.Backgammon(), seed=0)
    s = env.state()
    assert list(s["board"][0]) == [2] + [0] * 10 + [5] + [0] * 4 + [3, 0, 5] + [0] * 5
    assert list(s["board"][1]) == list(s["board"][0])[::-1]
    assert s["bar"] == b"\x00\x00" and s["scores"] == b"\x00\x00" and not s["double_turn"]
    assert env.active_agents() == [1] and s["to_move"] == 1 and s["dice"] == b"\x03\x06"
    assert len(env.legal_actions(1)) == 28 and env.legal_actions(0) == []
    starters = {rf.Env(rf.games.Backgammon(), seed=k).active_agents()[0] for k in range(8)}
    assert starters == {0, 1}
    for k in range(30):  # the opening never rolls a double
        d = rf.Env(rf.games.Backgammon(), seed=k).state()["dice"]
        assert d[0] < d[1]


def test_chance_nodes_have_openspiels_outcomes():
    params = rf.games.Backgammon()._def.params
    st = np.zeros(bg.STATE_SIZE, np.int64)
    bg.init(params, st)
    probs = np.zeros(30)
    assert bg.chance_pending(params, st) and bg.chance_outcomes(params, st, probs) == 30
    assert np.allclose(probs, 1 / 30)
    bg.apply_chance(params, st, 15 + 11)  # O starts with roll 11 = 3-6
    assert st[bg.TO_MOVE] == 1 and (st[bg.DICE], st[bg.DICE + 1]) == (3, 6) and not bg.chance_pending(params, st)
    st[bg.PHASE] = bg.PH_ROLL
    n = bg.chance_outcomes(params, st, probs)
    assert n == 21 and probs[:15].tolist() == [1 / 18] * 15 and probs[15:21].tolist() == [1 / 36] * 6
    assert abs(probs[:21].sum() - 1.0) < 1e-12
    assert [tuple(r) for r in bg.ROLLS[15:]] == [(d, d) for d in range(1, 7)]
    assert len({tuple(r) for r in bg.ROLLS}) == 21 and all(lo <= hi for lo, hi in bg.ROLLS)


# -- movement ----------------------------------------------------------------------------------


def test_checkers_on_the_bar_enter_first():
    # O holds point 0 (X's entry with a 1); the 2 enters on point 1.
    env = position({11: 14}, {0: 2, 12: 13}, bar=(1, 0), dice=(1, 2))
    legal = env.legal_actions(0)
    assert legal and all(a < 676 and a % 26 == 24 for a in legal)  # first half: bar with the 2
    env.step({0: act(24, 1)})  # bar/1 (the 2), then 1->2 with the 1
    s = env.state()
    assert s["bar"] == b"\x00\x00" and s["board"][0][1] == 0 and s["board"][0][2] == 1
    # Two on the bar: both halves must enter.
    env = position({11: 13}, {0: 2, 12: 13}, bar=(2, 0), dice=(2, 3))
    assert env.legal_actions(0) == [act(24, 24), act(24, 24, high_first=False)]


def test_closed_board_passes():
    env = position({11: 14}, {i: 2 for i in range(6)} | {12: 3}, bar=(1, 0), dice=(3, 5))
    assert env.legal_actions(0) == [PASS]
    before = env.state()["board"]
    env.step({0: PASS})
    s = env.state()
    assert s["board"] == before and s["bar"] == b"\x01\x00" and s["to_move"] == 1 and env.active_agents() == [1]


def test_hit_sends_the_blot_to_the_bar():
    env = position({0: 15}, {3: 1, 12: 14}, dice=(3, 5))
    env.step({0: act(0, 3, high_first=False)})  # 0->3 with the 3 (hit), then 3->8 with the 5
    s = env.state()
    assert s["bar"] == b"\x00\x01" and s["board"][1][3] == 0 and s["board"][0][8] == 1 and s["board"][0][3] == 0
    # O now has to enter from the bar: every action starts at the bar.
    assert all(a % 26 == 24 for a in env.legal_actions(1))


def test_a_point_held_by_two_is_blocked():
    env = position({0: 15}, {3: 2, 12: 13}, dice=(3, 5))
    assert env.legal_actions(0) == [act(0, 5)]  # 0 by 5, then 5 by 3; nothing lands on 3


def test_bear_off_exact_and_with_a_higher_die():
    # Higher die from the furthest checker: two on 20 (4 pips) with 6-5 both come off.
    env = position({20: 2}, O_REST, dice=(5, 6))
    assert env.legal_actions(0) == [act(20, 20), act(20, 20, high_first=False)]
    # A higher die bears off only the furthest checker: 22 cannot use the 6 while 20 is occupied.
    env = position({20: 1, 22: 1}, O_REST, dice=(1, 6))
    legal = env.legal_actions(0)
    assert act(20, 22) in legal and not any(a < 676 and a % 26 == 22 for a in legal)
    # Exact bear-off is always allowed once all are home: 22 with the 2 while 18 is further.
    env = position({18: 1, 22: 1}, O_REST, dice=(2, 3))
    assert act(22, 18, high_first=False) in env.legal_actions(0)
    # Not all home: no bear-off at all.
    env = position({10: 1, 22: 1}, O_REST, dice=(2, 3))
    assert all(not (a % 26 == 22 and a >= 676) for a in env.legal_actions(0))


def test_o_moves_down_and_bears_off_below_zero():
    env = position({12: 15}, {3: 1, 1: 1}, to_move=1, dice=(4, 2))
    # 3 off with the 4 and 1 off with the 2 (either order), or 3->1 with the 2 then 1 off with the 4
    # (a higher die from the furthest checker); 1 cannot use the 4 while 3 is occupied.
    assert env.legal_actions(1) == [act(3, 1), act(3, 1, high_first=False), act(1, 3, high_first=False)]
    env.step({1: act(3, 1)})
    assert env.done() and env.rewards == [-2.0, 2.0]  # X bore off nothing: gammon


def test_both_dice_must_be_used_when_possible():
    env = position({0: 1, 10: 1}, {8: 2, 12: 13}, dice=(3, 5))  # 0->3->8 / 0->5->8 blocked
    legal = env.legal_actions(0)
    assert legal and all((a % 676) % 26 != 25 and (a % 676) // 26 != 25 for a in legal)
    assert act(0, 10) in legal  # 0 by 5, then 10 by 3


def test_only_one_die_playable_forces_the_larger():
    env = position({0: 1}, {8: 2, 12: 13}, dice=(3, 5))  # 0->3 and 0->5 open, 8 blocked
    assert env.legal_actions(0) == [act(0)]  # 0 by 5, pass
    env = position({0: 1}, {5: 2, 8: 2, 12: 11}, dice=(3, 5))  # only the 3 plays
    assert env.legal_actions(0) == [act(0, high_first=False)]


def test_doubles_take_two_decisions_with_the_same_dice():
    env = position({0: 15}, O_REST, dice=(2, 2))
    assert all(a < 676 for a in env.legal_actions(0))
    env.step({0: act(0, 0)})
    s = env.state()
    assert s["double_turn"] and s["to_move"] == 0 and s["dice"] == b"\x02\x02" and env.ticks == 1
    assert list(s["board"][0][:5]) == [13, 0, 2, 0, 0]
    env.step({0: act(2, 2)})
    s = env.state()
    assert not s["double_turn"] and s["to_move"] == 1 and env.ticks == 2 and s["board"][0][4] == 2
    assert 1 <= s["dice"][0] <= s["dice"][1] <= 6  # the next roll was resolved for O


def test_double_that_plays_one_half_gives_no_extra_decision():
    env = position({0: 1}, {8: 2, 12: 13}, dice=(4, 4))  # 0->4, then 4->8 blocked
    assert env.legal_actions(0) == [act(0)]
    env.step({0: act(0)})
    s = env.state()
    assert not s["double_turn"] and s["to_move"] == 1


# -- the end -----------------------------------------------------------------------------------

W = {"win": 1.5, "gammon": 10.0, "backgammon": 100.0}


@pytest.mark.parametrize(
    "o,o_bar,margin",
    [
        ({12: 14}, 0, 1),  # O bore one off (what is not on the board is borne off)
        ({12: 15}, 0, 2),  # gammon
        ({12: 14, 20: 1}, 0, 3),  # a checker in X's home board: backgammon
        ({12: 14}, 1, 3),  # a checker on the bar: backgammon
    ],
)
def test_margins_events_and_rewards(o, o_bar, margin):
    env = position({23: 1}, o, bar=(0, o_bar), dice=(1, 3), reward=rf.Reward(**W))
    events = env.step({0: act(23)})
    w = [W["win"], W["gammon"], W["backgammon"]][margin - 1]
    assert env.done() and env.rewards == [w, -w] and env.active_agents() == []
    assert events == [(0, {"result": "win", "margin": margin}), (1, {"result": "loss", "margin": margin})]
    s = env.state()
    assert s["scores"][0] == 15 and s["dice"] == b"\x00\x00" and s["to_move"] == 1
    assert env.legal_actions(0) == env.legal_actions(1) == []
    with pytest.raises(ValueError, match="the episode is over"):
        env.step({0: act(23)})


def test_default_reward_is_the_margin():
    env = position({23: 1}, {12: 15}, dice=(1, 3))
    env.step({0: act(23)})
    assert env.rewards == [2.0, -2.0]


# -- observation -------------------------------------------------------------------------------


def test_observation_is_openspiels_tensor_for_the_observer():
    env = position({0: 1, 5: 2, 7: 3, 9: 9}, {12: 10, 13: 4}, bar=(0, 1), dice=(2, 5))
    o0 = np.asarray(env.observe(0)).ravel()
    o1 = np.asarray(env.observe(1)).ravel()
    assert env.observe(0).shape == (200, 1, 1) and env.observe(0).dtype == np.float32
    assert o0[0:4].tolist() == [1, 0, 0, 0] and o0[20:24].tolist() == [0, 1, 0, 0]
    assert o0[28:32].tolist() == [0, 0, 1, 0] and o0[36:40].tolist() == [0, 0, 0, 6]
    assert o0[96 + 48 : 96 + 52].tolist() == [0, 0, 0, 7]
    assert o0[192:].tolist() == [0, 0, 1, 1, 0, 0, 2, 5]
    assert np.array_equal(o1[:96], o0[96:192]) and np.array_equal(o1[96:192], o0[:96])
    assert o1[192:].tolist() == [1, 0, 0, 0, 0, 1, 2, 5]


# -- handle surface ----------------------------------------------------------------------------


def test_handle_spaces_config_and_encoder():
    g = rf.games.Backgammon()
    assert g.name == "backgammon" and g.encoder.name == "backgammon"
    box = g.observation_space()
    assert box.shape == (200, 1, 1) and np.all(np.isneginf(box.low)) and np.all(np.isposinf(box.high))
    assert g.action_space().n == 1352 and g.truncation_horizon() == 1000
    assert rf.games.Backgammon(max_ticks=None).truncation_horizon() is None
    assert rf.games.make("backgammon").name == "backgammon" and "backgammon" in rf.games.registered()
    assert "backgammon" in rf.encoders.registered()
    env = rf.Env(g)
    assert env.resolved_config() == {
        "game": {"encoder": {"name": "backgammon"}, "max_ticks": 1000, "name": "backgammon"},
        "reward": None,
        "schema_version": 2,
    }
    assert rf.Env(g, rf.Reward()).resolved_config()["reward"] == {"backgammon": 3.0, "gammon": 2.0, "win": 1.0}
    enc = rf.encoders.Backgammon()
    assert enc.head_index(5, 1) == 5 and enc.game_action(1351, 0) == 1351
    with pytest.raises(ValueError, match=re.escape("action 1352 out of range for the 1352-action backgammon")):
        enc.head_index(1352, 0)
    assert rf.games.Backgammon(encoder=enc).encoder.name == "backgammon"
    with pytest.raises(ValueError, match='incompatible encoder "connect4" for game "backgammon"'):
        rf.games.Backgammon(encoder=rf.encoders.Connect4())
    with pytest.raises(ValueError, match=re.escape('unknown reward key "loss"')):
        rf.Env(g, rf.Reward(loss=-1.0))
    with pytest.raises(ValueError, match="does not declare information states"):
        env.information_state_key(0)


@pytest.mark.parametrize(
    "kwargs,exc,msg",
    [
        ({"max_ticks": 0}, ValueError, "max_ticks must be >= 1 (or None to never truncate)"),
        ({"max_ticks": -1}, OverflowError, "can't convert negative int to unsigned"),
        ({"max_ticks": 2**64}, OverflowError, "int too big to convert"),
        ({"max_ticks": 1.0}, TypeError, "argument 'max_ticks': 'float' object cannot be interpreted as an integer"),
        ({"encoder": "x"}, TypeError, "argument 'encoder': 'str' object cannot be converted to 'EncoderHandle'"),
    ],
)
def test_constructor_errors(kwargs, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        rf.games.Backgammon(**kwargs)


def test_catalogue_entries():
    info = rf.catalog.GAMES["backgammon"]
    assert info.reward_keys == (("win", 1.0), ("gammon", 2.0), ("backgammon", 3.0)) and info.players == "2"
    assert "minimax" in info.algorithms and rf.catalog.ENCODER_INFO["backgammon"].shape == "(200, 1, 1)"
    assert "backgammon" in rf.catalog.ENCODERS


# -- errors, snapshots, conformance ------------------------------------------------------------


def test_step_errors_leave_the_env_unchanged():
    env = rf.Env(rf.games.Backgammon(), seed=0)
    before = env.state()
    with pytest.raises(ValueError, match=re.escape("agent 0 is not active this tick; active agents: [1]")):
        env.step({0: 0})
    with pytest.raises(ValueError, match=re.escape("action 0 is illegal for agent 1 (legal: [137, 142,")):
        env.step({1: 0})
    with pytest.raises(ValueError, match=re.escape("missing action for active agent 1")):
        env.step({})
    assert env.state() == before and env.ticks == 0


@pytest.mark.parametrize(
    "edit,reason",
    [
        (lambda s: s.__setitem__(B + 0, 3), "player 0 has 16 checkers"),
        (lambda s: s.__setitem__(B + 24 + 0, 1) or s.__setitem__(B + 24 + 23, 1), "both players on one point"),
        (lambda s: s.__setitem__(bg.DICE, 7), "out of range"),
        (lambda s: s.__setitem__(bg.PHASE, bg.PH_ROLL), "a pending roll is transient"),
        (lambda s: s.__setitem__(bg.TO_MOVE, 2), "player to move 2 out of range"),
        (lambda s: s.__setitem__(bg.DOUBLE, 1), "double turn without a double"),
    ],
)
def test_forged_snapshots_are_rejected(edit, reason):
    env = rf.Env(rf.games.Backgammon(), seed=0)
    snap = env.snapshot()
    state = snap._state_row(env._def.state_size).copy()
    assert bg.validate_state(env._def.params, state) is None
    edit(state)
    forged = rf.EnvSnapshot(
        snap.fingerprint, snap._rng, snap._done, snap._ticks, bytes([1]) + state.astype("<i8").tobytes()
    )
    before = env.state()
    with pytest.raises(ValueError, match=re.escape("invalid snapshot state: ") + ".*" + re.escape(reason)):
        env.restore(forged)
    assert env.state() == before


def test_snapshot_round_trip_and_every_state_validates():
    env = rf.Env(rf.games.Backgammon(), rf.Reward(), seed=5)
    rs = np.random.default_rng(5)
    params = env._def.params
    while not env.done():
        assert bg.validate_state(params, env._state) is None
        if env.ticks == 17:
            snap = rf.EnvSnapshot.from_bytes(env.snapshot().to_bytes())
            other = rf.Env(rf.games.Backgammon(), rf.Reward(), seed=99)
            other.restore(snap)
            assert other.state() == env.state() and other.ticks == 17
            a = env.legal_actions(env.active_agents()[0])[0]
            f = env.fork()
            for x in (other, f):
                x.step({x.active_agents()[0]: a})
            assert other.state() == f.state()
        p = env.active_agents()[0]
        env.step({p: int(rs.choice(env.legal_actions(p)))})
    assert bg.validate_state(params, env._state) is None


def test_env_never_truncates_but_declares_the_horizon():
    env = rf.Env(rf.games.Backgammon(max_ticks=3), rf.Reward(), seed=1)
    for _ in range(5):
        p = env.active_agents()[0]
        env.step({p: env.legal_actions(p)[0]})
    assert not env.done() and env.ticks == 5


def test_check_game():
    stats = rf.testing.check_game(rf.games.Backgammon(), episodes=6, max_steps=300)
    assert stats["finished"] >= 1 and stats["snapshots"] >= 1


# -- engine compositions (dice chance inside the step) -----------------------------------------

A = 1352


def _zero_q(obs):
    return np.zeros((len(obs), 1, A))


def _zero_pv(obs):
    return np.zeros((len(obs), A)), np.zeros(len(obs))


def _legal_rows(batch):
    """(player, legal id list) per record from a CSR batch."""
    off = batch.legal_offsets
    return [(int(batch.players[i]), batch.legal_ids[off[i] : off[i + 1]].tolist()) for i in range(len(batch.players))]


def _check_records(batch, n):
    assert len(batch.players) >= n and batch.obs.shape[1:] in ((200,), (200, 1, 1))
    obs = batch.obs.reshape(len(batch.obs), 200)
    assert np.all(obs[:, 198:] >= 1) and np.all(obs[:, 198:] <= 6)  # every decision has its dice
    assert np.all(obs[:, :192] >= 0) and set(np.unique(batch.players)) <= {0, 1}


@pytest.mark.slow
def test_engine_model_free_learners():
    game = rf.games.Backgammon(max_ticks=40)
    eng = rf.Engine(game, rf.Reward(gammon=5.0), rf.policies.EpsilonGreedyQ(epsilon=0.5), rf.learners.Dqn(n_step=2),
                    n_games=3, seed=1)  # fmt: skip
    b = eng.collect(100, _zero_q)
    _check_records(b, 100)
    for i in range(len(b.actions)):  # the action is one of the record's legal ids
        lo, hi = b.legal_offsets[i], b.legal_offsets[i + 1]
        assert b.actions[i] in b.legal_ids[lo:hi]
    eng = rf.Engine(game, None, rf.policies.Ppo(), rf.learners.Ppo(), n_games=3, seed=2)
    b = eng.collect(100, _zero_pv)
    _check_records(b, 100)


@pytest.mark.slow
@pytest.mark.parametrize(
    "chance", [None, rf.chance_modes.Committed(samples=1)], ids=["always-resample", "committed-1"]
)
def test_engine_alphazero_and_mcts(chance):
    game = rf.games.Backgammon(max_ticks=30)
    policy = rf.policies.AlphaZero(num_simulations=6, chance=chance)
    eng = rf.Engine(game, None, policy, rf.learners.AlphaZero(gamma=1.0), n_games=2, seed=3)
    b = eng.collect(40, _zero_pv)
    _check_records(b, 40)
    rows = _legal_rows(b)
    for i, (_, ids) in enumerate(rows):
        assert len(ids) >= 1 and abs(float(np.sum(b.policy_targets[i][ids])) - 1.0) < 1e-5
    assert np.all(np.abs(b.value_targets) <= 3.0)
    eng = rf.Engine(game, None, rf.policies.Mcts(num_simulations=6, chance=chance), rf.learners.TreeStrap(),
                    n_games=2, seed=4)  # fmt: skip
    b = eng.collect(40, _zero_q)
    assert len(b.players) >= 40 and np.all(np.isfinite(b.targets))


@pytest.mark.slow
def test_engine_selective_expectimax_committed():
    game = rf.games.Backgammon(max_ticks=20)
    eng = rf.Engine(game, None, rf.policies.SelectiveExpectimax(expansion_budget=8, top_k=3, max_depth=3),
                    rf.learners.TreeStrap(), n_games=2, seed=5)  # fmt: skip
    b = eng.collect(30, _zero_q)
    assert len(b.players) >= 30 and np.all(np.isfinite(b.targets))


@pytest.mark.slow
def test_engine_minimax_expands_every_roll():
    """Minimax's default chance mode is ExpandAll: each move's 21 rolls are expectimax nodes."""
    game = rf.games.Backgammon(max_ticks=20)
    calls = []

    def infer(obs):
        calls.append(len(obs))
        return _zero_q(obs)

    eng = rf.Engine(game, None, rf.policies.Minimax(depth=1), rf.learners.TreeStrap(), n_games=2, seed=6)
    b = eng.collect(20, infer)
    assert len(b.players) >= 20 and np.all(np.isfinite(b.targets)) and max(calls) >= 21


@pytest.mark.slow
@pytest.mark.parametrize(
    "chance", [rf.chance_modes.ExpandAll(), rf.chance_modes.Committed(samples=3)], ids=["expand-all", "committed-3"]
)
def test_engine_trees_with_chance_nodes(chance):
    game = rf.games.Backgammon(max_ticks=20)
    eng = rf.Engine(game, None, rf.policies.AlphaZero(num_simulations=8, chance=chance), rf.learners.AlphaZero(),
                    n_games=2, seed=8)  # fmt: skip
    b = eng.collect(20, _zero_pv)
    _check_records(b, 20)
    eng = rf.Engine(game, None, rf.policies.Mcts(num_simulations=8, chance=chance), rf.learners.TreeStrap(),
                    n_games=2, seed=9)  # fmt: skip
    b = eng.collect(20, _zero_q)
    assert len(b.players) >= 20 and np.all(np.isfinite(b.targets))


@pytest.mark.slow
def test_engine_selective_expectimax_committed_samples():
    game = rf.games.Backgammon(max_ticks=20)
    chance = rf.chance_modes.Committed(samples=3)
    policy = rf.policies.SelectiveExpectimax(expansion_budget=8, top_k=3, max_depth=3, chance=chance)
    eng = rf.Engine(game, None, policy, rf.learners.TreeStrap(), n_games=2, seed=7)
    b = eng.collect(20, _zero_q)
    assert len(b.players) >= 20 and np.all(np.isfinite(b.targets))
