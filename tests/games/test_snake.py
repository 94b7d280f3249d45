"""Snake rules: placement, turns, deaths, growth, outcomes, events, rewards, observations, food
chance, constructor validation and the conformance checks.

Every scripted expectation below was produced by reinfors 0.4.0 itself (the same scripts run on
the original give these states, events and rewards; only its food list order is a hash order).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import reinfors as rf
from reinfors.jit.games import snake as S

W = {"step": 0.001, "food": 0.01, "loss": -0.1, "draw": 0.2, "kill": 3.0, "win": 50.0, "survival": 700.0}
GOLDEN = 0x9E3779B97F4A7C15
NONE = {"ate_food": False, "died": False, "killed_opponent": False, "won": False, "lost": False, "drew": False}


def ev(**flags):
    """An event payload: all False / None except ``flags``."""
    out = dict(NONE, death_cause=None)
    out.update(flags)
    return out


def env(seed=0, reward=W, **kwargs):
    return rf.Env(rf.games.Snake(**kwargs), None if reward is None else rf.Reward(**reward), seed=seed)


def play(e, joints):
    out = []
    for joint in joints:
        out.append((e.step(joint), e.rewards))
    return out


# -- placement ----------------------------------------------------------------------------------


def test_default_placement_and_spaces():
    g = rf.games.Snake()
    assert g.name == "snake" and g.encoder.name == "snake"
    assert g.observation_space().shape == (5, 20, 20) and g.action_space().n == 3
    assert g.truncation_horizon() == 1000
    e = rf.Env(g)
    st = e.state()
    assert list(st) == ["bodies", "food", "directions", "alive"]
    assert st["bodies"] == [[(10, 6), (10, 5), (10, 4)], [(10, 14), (10, 15), (10, 16)]]
    assert st["directions"] == b"\x03\x02" and st["alive"] == [True, True]
    assert len(st["food"]) == 3
    assert e.num_agents() == 2 and e.action_count() == 3 and e.active_agents() == [0, 1]
    assert e.legal_actions(0) == [0, 1, 2] and e.legal_actions(1) == [0, 1, 2]
    assert e.resolved_config() == {
        "game": {
            "encoder": {"name": "snake"},
            "food": 3,
            "grid_size": 20,
            "initial_length": 3,
            "max_ticks": 1000,
            "name": "snake",
            "num_snakes": 2,
            "play_to_last": True,
            "win_food_lead": None,
        },
        "reward": None,
        "schema_version": 2,
    }
    with pytest.raises(ValueError, match="this game does not declare information states"):
        e.information_state_key(0)
    assert rf.games.Snake(max_ticks=None).truncation_horizon() is None


@pytest.mark.parametrize(
    "n,rows",
    [
        (3, [5, 10, 15]),
        (4, [4, 8, 12, 16]),
        (5, [3, 6, 10, 13, 16]),
        (6, [2, 5, 8, 11, 14, 17]),
        (7, [2, 5, 7, 10, 12, 15, 17]),
        (8, [2, 4, 6, 8, 11, 13, 15, 17]),
    ],
)
def test_head_rows_for_many_snakes(n, rows):
    st = env(num_snakes=n, food=0).state()
    assert [b[0] for b in st["bodies"]] == [(r, 6 if i % 2 == 0 else 14) for i, r in enumerate(rows)]
    assert st["directions"] == bytes(3 if i % 2 == 0 else 2 for i in range(n))


def test_trails_follow_the_walls():
    st = env(grid_size=5, initial_length=8, food=0).state()
    assert st["bodies"] == [
        [(2, 1), (2, 0), (3, 0), (4, 0), (4, 1), (4, 2), (4, 3), (4, 4)],
        [(2, 4), (1, 4), (0, 4), (0, 3), (0, 2), (0, 1), (0, 0), (1, 0)],
    ]
    st = env(grid_size=3, initial_length=4, food=0).state()
    assert st["bodies"] == [[(1, 1), (1, 0), (2, 0), (2, 1)], [(1, 2), (0, 2), (0, 1), (0, 0)]]
    st = env(grid_size=8, food=0).state()
    assert st["bodies"] == [[(4, 2), (4, 1), (4, 0)], [(4, 6), (4, 7), (3, 7)]]


# -- constructor validation ---------------------------------------------------------------------

_TOO_BIG = "worst-case respawn index space ({} apples eatable at once on a {}-cell grid) exceeds min(2^53, usize::MAX); reduce food or grid size"


@pytest.mark.parametrize(
    "kwargs,exc,message",
    [
        ({"max_ticks": 0, "num_snakes": 9}, ValueError, "max_ticks must be >= 1 (or None to never truncate)"),
        ({"num_snakes": 1}, ValueError, "num_snakes must be in 2..=8"),
        ({"num_snakes": 9}, ValueError, "num_snakes must be in 2..=8"),
        ({"grid_size": True, "num_snakes": True}, ValueError, "num_snakes must be in 2..=8"),
        ({"initial_length": 0}, ValueError, "initial_length must be >= 1"),
        (
            {"win_food_lead": 0, "num_snakes": 3},
            ValueError,
            "win_food_lead must be >= 1 (a lead of 0 ends the game on tick one)",
        ),
        (
            {"win_food_lead": 1, "num_snakes": 3},
            ValueError,
            "win_food_lead is a two-snake rule (a lead over WHOM is undefined past two); unset it for more snakes",
        ),
        (
            {"grid_size": 20725, "food": 0},
            ValueError,
            "grid_size 20725 makes the observation tensor exceed 2^31 elements",
        ),
        ({"grid_size": 0}, ValueError, "initial_food_count 3 exceeds the 0-cell grid"),
        ({"grid_size": -7, "initial_length": 2}, ValueError, "initial_food_count 3 exceeds the 0-cell grid"),
        ({"grid_size": 8, "food": 65}, ValueError, "initial_food_count 65 exceeds the 64-cell grid"),
        ({"grid_size": 457, "num_snakes": 3, "food": 3}, ValueError, _TOO_BIG.format(3, 457 * 457)),
        ({"grid_size": 11, "num_snakes": 8, "food": 8}, ValueError, _TOO_BIG.format(8, 121)),
        ({"grid_size": 3, "initial_length": 7, "food": 0}, ValueError, "initial_length 7 does not fit grid_size 3"),
        (
            {"grid_size": 3, "initial_length": 5, "food": 0},
            ValueError,
            "grid_size 3 is too small for initial_length 5: initial snakes overlap at (1, 0)",
        ),
        (
            {"grid_size": -7, "initial_length": 1, "food": 0},
            ValueError,
            "grid_size -7 is too small: initial snake placement leaves cell (-3, -2) outside the grid",
        ),
        ({"grid_size": -7, "initial_length": 2, "food": 0}, ValueError, "initial_length 2 does not fit grid_size -7"),
        ({"grid_size": 8, "food": 59}, ValueError, "food 59 exceeds the 58 free cells left by the initial snakes"),
        (
            {"grid_size": 2.0},
            TypeError,
            "argument 'grid_size': 'float' object cannot be interpreted as an integer",
        ),
        ({"food": -1, "grid_size": 1.0}, TypeError, "argument 'grid_size': 'float' object"),
        (
            {"num_snakes": -1, "play_to_last": 1},
            TypeError,
            "argument 'play_to_last': 'int' object cannot be converted to 'PyBool'",
        ),
        (
            {"play_to_last": None},
            TypeError,
            "argument 'play_to_last': 'NoneType' object cannot be converted to 'PyBool'",
        ),
        ({"max_ticks": -1, "win_food_lead": 1.5}, TypeError, "argument 'win_food_lead': 'float' object"),
        ({"num_snakes": 1.5, "max_ticks": -1}, OverflowError, "can't convert negative int to unsigned"),
        ({"food": 2**64}, OverflowError, "int too big to convert"),
        ({"grid_size": 2**31}, OverflowError, "out of range integral type conversion attempted"),
        ({"grid_size": -(2**31) - 1}, OverflowError, "out of range integral type conversion attempted"),
        ({"grid_size": 2**70}, OverflowError, "Python int too large to convert to C long"),
        (
            {"initial_length": "3"},
            TypeError,
            "argument 'initial_length': 'str' object cannot be interpreted as an integer",
        ),
        ({"encoder": "snake"}, TypeError, "argument 'encoder': 'str' object cannot be converted to 'EncoderHandle'"),
        (
            {"encoder": rf.encoders.Connect4()},
            ValueError,
            'incompatible encoder "connect4" for game "snake"; see https://jeepjeepjeep.github.io/reinfors/catalogue/games/#observation-encoders',
        ),
    ],
)
def test_constructor_validation(kwargs, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        rf.games.Snake(**kwargs)


def test_constructor_accepts_edge_values():
    assert rf.games.Snake(grid_size=456, num_snakes=3, food=3).observation_space().shape == (5, 456, 456)
    assert rf.games.Snake(grid_size=10, num_snakes=8, food=8)._def.n_players == 8
    assert rf.games.Snake(grid_size=20724, food=0).observation_space().shape == (5, 20724, 20724)
    g = rf.games.Snake(
        grid_size=np.int32(9), food=np.int64(2), play_to_last=np.bool_(False), max_ticks=2**64 - 1, win_food_lead=True
    )
    assert g._resolved()["max_ticks"] == 2**64 - 1 and g.truncation_horizon() == 2**64 - 1
    assert g._resolved()["win_food_lead"] == 1 and g._resolved()["play_to_last"] is False
    assert len(rf.Env(rf.games.Snake(grid_size=8, food=58)).state()["food"]) == 58
    e = rf.Env(rf.games.Snake(grid_size=6, food=4, win_food_lead=2**64 - 1, max_ticks=2**63), seed=5)
    assert e.resolved_config()["game"]["win_food_lead"] == 2**64 - 1
    assert e.resolved_config()["game"]["max_ticks"] == 2**63
    rs = np.random.default_rng(0)
    while not e.done():  # the unreachable lead never ends the game
        e.step({a: int(rs.integers(3)) for a in e.active_agents()})
    assert sum(e.state()["alive"]) <= 1
    assert rf.games.Snake(encoder=rf.encoders.Snake()).encoder.name == "snake"


# -- movement and deaths --------------------------------------------------------------------------


def test_turns_are_relative_to_the_current_direction():
    e = env(food=0)
    e.step({0: 1, 1: 1})  # right -> up ; left -> down
    st = e.state()
    assert [b[0] for b in st["bodies"]] == [(9, 6), (11, 14)] and st["directions"] == b"\x00\x01"
    e = env(food=0)
    e.step({0: 2, 1: 2})  # right -> down ; left -> up
    st = e.state()
    assert [b[0] for b in st["bodies"]] == [(11, 6), (9, 14)] and st["directions"] == b"\x01\x00"
    for a, want in [(1, [0, 2, 1, 3]), (2, [1, 2, 0, 3])]:  # four turns the same way come back around
        e = env(food=0)
        dirs = []
        for _ in range(4):
            e.step({0: a, 1: 0})
            dirs.append(e.state()["directions"][0])
        assert dirs == want
        assert e.state()["bodies"][0][0] == (10, 6)


def test_wall_death_then_the_survivor_plays_on():
    e = env(grid_size=9, food=0)
    out = play(e, [{0: 2, 1: 1}] + [{0: 0, 1: 1}] * 3)
    assert all(r == [0.001, 0.001] and [p for _, p in t] == [ev(), ev()] for t, r in out)
    assert e.state()["bodies"] == [[(8, 3), (7, 3), (6, 3)], [(4, 6), (4, 7), (5, 7)]]
    events = e.step({0: 0, 1: 1})
    assert events == [(0, ev(died=True, lost=True, death_cause="wall")), (1, ev(won=True))]
    assert e.rewards == [-0.099, 50.001]
    st = e.state()
    assert st["bodies"] == [[(8, 3), (7, 3)], [(5, 6), (4, 6), (4, 7)]]
    assert st["alive"] == [False, True] and st["directions"] == b"\x01\x01"
    assert not e.done() and e.active_agents() == [1] and e.legal_actions(0) == []
    for _ in range(3):  # the dead snake gets the step weight and an all-False event every tick
        assert e.step({1: 1}) == [(0, ev()), (1, ev())]
        assert e.rewards == [0.001, 0.001]
    assert e.state()["bodies"][0] == [(8, 3), (7, 3)]


def test_play_to_last_false_ends_on_the_decision():
    e = env(grid_size=9, food=0, play_to_last=False)
    play(e, [{0: 2, 1: 1}] + [{0: 0, 1: 1}] * 3)
    events = e.step({0: 0, 1: 1})
    assert events == [(0, ev(died=True, lost=True, death_cause="wall")), (1, ev(won=True))]
    assert e.done() and e.active_agents() == [] and e.legal_actions(1) == []
    assert e.state()["alive"] == [False, True]
    with pytest.raises(ValueError, match="no agents to act — the episode is over; call reset\\(\\)"):
        e.step({1: 0})


def test_opponent_death_credits_the_surviving_owner():
    e = env(grid_size=9, food=0)
    play(e, [{0: 0, 1: 2}, {0: 0, 1: 1}])
    assert e.state()["bodies"] == [[(4, 5), (4, 4), (4, 3)], [(3, 5), (3, 6), (4, 6)]]
    events = e.step({0: 1, 1: 0})  # snake 0 turns into snake 1's (moving) head cell
    assert events == [
        (0, ev(died=True, lost=True, death_cause="opponent")),
        (1, ev(killed_opponent=True, won=True)),
    ]
    assert e.rewards == [-0.099, 53.001] and e.rewards[1] == ((0.0 + 0.001) + 3.0) + 50.0
    assert e.state()["bodies"] == [[(4, 5), (4, 4)], [(3, 4), (3, 5), (3, 6)]]
    assert e.state()["directions"] == b"\x00\x02"  # the dead snake keeps its new direction


def test_self_deaths_together_draw():
    e = env(grid_size=9, food=0, initial_length=5)
    assert e.state()["bodies"] == [
        [(4, 3), (4, 2), (4, 1), (4, 0), (5, 0)],
        [(4, 6), (4, 7), (4, 8), (3, 8), (2, 8)],
    ]
    play(e, [{0: 1, 1: 1}] * 2)
    events = e.step({0: 1, 1: 1})
    assert events == [
        (0, ev(died=True, drew=True, death_cause="self")),
        (1, ev(died=True, drew=True, death_cause="self")),
    ]
    assert e.rewards == [0.201, 0.201] and e.done()
    assert e.state()["bodies"] == [
        [(3, 2), (3, 3), (4, 3), (4, 2)],
        [(5, 7), (5, 6), (4, 6), (4, 7)],
    ]


def test_moving_into_the_own_vacated_tail_is_safe():
    e = env(grid_size=9, food=0)
    for _ in range(40):  # a length-3 snake circling a 2x2 square chases its own tail forever
        e.step({0: 1, 1: 1})
    assert e.state()["alive"] == [True, True]


def test_head_swap_kills_long_snakes_but_not_length_one():
    e = env(grid_size=9, food=0, initial_length=2)
    e.step({0: 0, 1: 0})
    assert e.state()["bodies"] == [[(4, 4), (4, 3)], [(4, 5), (4, 6)]]
    events = e.step({0: 0, 1: 0})
    assert events == [
        (0, ev(died=True, drew=True, death_cause="opponent")),
        (1, ev(died=True, drew=True, death_cause="opponent")),
    ]
    assert e.state()["bodies"] == [[(4, 4)], [(4, 5)]] and e.done()
    e = env(grid_size=9, food=0, initial_length=1)
    play(e, [{0: 0, 1: 0}] * 2)
    assert e.state()["bodies"] == [[(4, 5)], [(4, 4)]] and e.state()["alive"] == [True, True]


def test_three_way_head_on_and_passing_through_dead_bodies():
    e = env(grid_size=8, food=0, num_snakes=3)
    assert e.state()["bodies"] == [[(2, 2), (2, 1), (2, 0)], [(4, 6), (4, 7), (3, 7)], [(6, 2), (6, 1), (6, 0)]]
    e.step({0: 2, 1: 1, 2: 1})
    assert e.rewards == [0.001] * 3
    events = e.step({0: 0, 1: 2, 2: 0})  # snakes 0 and 2 both target (4, 2)
    assert events == [
        (0, ev(died=True, lost=True, death_cause="head_on")),
        (1, ev(won=True)),
        (2, ev(died=True, lost=True, death_cause="head_on")),
    ]
    assert e.rewards == [-0.099, 50.001, -0.099] and not e.done() and e.active_agents() == [1]
    st = e.state()
    assert st["bodies"] == [[(3, 2), (2, 2)], [(5, 5), (5, 6), (4, 6)], [(5, 2), (6, 2)]]
    assert st["directions"] == b"\x01\x02\x00" and st["alive"] == [False, True, False]
    for _ in range(3):  # through (5, 2), dead snake 2's head
        assert e.step({1: 0}) == [(0, ev()), (1, ev()), (2, ev())]
    st = e.state()
    assert st["bodies"][1] == [(5, 2), (5, 3), (5, 4)] and st["alive"][1]
    assert st["bodies"][2] == [(5, 2), (6, 2)]


def test_many_snakes_first_death_loses_last_two_draw():
    e = env(grid_size=8, food=0, num_snakes=3, reward={"draw": 0.5, "loss": -2.0, "step": 0.25})
    play(e, [{0: 1, 1: 2, 2: 0}, {0: 0, 1: 0, 2: 0}])
    events = e.step({0: 0, 1: 0, 2: 0})  # snake 0 hits the top wall while two remain
    assert events == [(0, ev(died=True, lost=True, death_cause="wall")), (1, ev()), (2, ev())]
    assert e.rewards == [-1.75, 0.25, 0.25] and e.active_agents() == [1, 2]
    e.step({1: 0, 2: 2})
    events = e.step({1: 0, 2: 0})  # the last two die together
    assert events == [
        (0, ev()),
        (1, ev(died=True, drew=True, death_cause="wall")),
        (2, ev(died=True, drew=True, death_cause="wall")),
    ]
    assert e.rewards == [0.25, 0.75, 0.75] and e.done()


# -- food -----------------------------------------------------------------------------------------


def test_seeded_food_placement_matches_the_original():
    e = rf.Env(rf.games.Snake(grid_size=8, food=5), seed=0)
    assert e.state()["food"] == sorted([(7, 1), (0, 6), (3, 0), (0, 1), (7, 6)])
    e.reset()
    assert e.state()["food"] == sorted([(2, 2), (1, 1), (1, 6), (7, 5), (6, 3)])
    e = rf.Env(rf.games.Snake(grid_size=8, food=2), seed=0)
    assert e.state()["food"] == [(3, 0), (7, 1)]
    e.reset()
    assert e.state()["food"] == [(0, 1), (7, 6)]
    # one draw per food, from the raw seed
    assert int(e._rng[0]) == (4 * GOLDEN) % 2**64


def test_growth_and_seeded_respawn():
    e = env(grid_size=8, food=2)
    assert e.state()["food"] == [(3, 0), (7, 1)]
    play(e, [{0: 1, 1: 1}, {0: 1, 1: 1}])
    events = e.step({0: 0, 1: 1})  # snake 0 eats (3, 0)
    assert events == [(0, ev(ate_food=True)), (1, ev())]
    assert e.rewards == [0.011, 0.001]
    st = e.state()
    assert st["bodies"][0] == [(3, 0), (3, 1), (3, 2), (4, 2)]
    assert st["food"] == [(0, 1), (7, 1)]  # the original's respawn for this seed
    events = e.step({0: 0, 1: 1})
    assert events == [(0, ev(died=True, lost=True, death_cause="wall")), (1, ev(won=True))]
    assert e.state()["bodies"][0] == [(3, 0), (3, 1), (3, 2)]


def test_win_food_lead_ends_the_game_at_once():
    e = env(grid_size=8, food=2, win_food_lead=1)
    play(e, [{0: 1, 1: 1}, {0: 1, 1: 1}])
    events = e.step({0: 0, 1: 1})
    assert events == [(0, ev(ate_food=True, won=True)), (1, ev(lost=True))]
    assert e.rewards == [50.011, -0.099]
    assert e.done() and e.state()["alive"] == [True, True]
    assert e.state()["food"] == [(7, 1)]  # no respawn on the final tick


def test_full_grid_drops_spawns_for_good_and_head_on_food_stays():
    e = env(grid_size=4, food=14, initial_length=1)
    assert len(e.state()["food"]) == 14
    rng0 = int(e._rng[0])
    # both target the food at (2, 2): head-on, nobody eats, bodies and food stay
    f = e.fork()
    assert f.step({0: 0, 1: 0}) == [
        (0, ev(died=True, drew=True, death_cause="head_on")),
        (1, ev(died=True, drew=True, death_cause="head_on")),
    ]
    assert f.state()["bodies"] == [[(2, 1)], [(2, 3)]] and len(f.state()["food"]) == 14
    events = e.step({0: 1, 1: 1})
    assert events == [(0, ev(ate_food=True)), (1, ev(ate_food=True))]
    st = e.state()
    assert st["bodies"] == [[(1, 1), (2, 1)], [(3, 3), (2, 3)]] and len(st["food"]) == 12
    assert int(e._rng[0]) == (rng0 + GOLDEN) % 2**64  # no free cell: one draw, no placement
    events = e.step({0: 1, 1: 1})
    assert events == [(0, ev(ate_food=True, won=True)), (1, ev(died=True, lost=True, death_cause="wall"))]
    st = e.state()
    assert st["bodies"] == [[(1, 0), (1, 1), (2, 1)], [(3, 3)]]
    # snake 1's vacated tail (2, 3) was the only free cell: the one spawn lands there
    assert (2, 3) in st["food"] and len(st["food"]) == 12


def test_food_never_spawns_on_bodies_or_food():
    e = env(grid_size=6, food=6, num_snakes=3, initial_length=2, seed=7)
    rs = np.random.default_rng(1)
    for _ in range(3000):
        if e.done():
            e.reset()
        e.step({a: int(rs.integers(3)) for a in e.active_agents()})
        st = e.state()
        cells = {c for b in st["bodies"] for c in b}
        assert not cells & set(st["food"]) and len(set(st["food"])) == len(st["food"]) <= 6


# -- rewards ----------------------------------------------------------------------------------------


def test_rewards_none_cases_and_survival_never_counts():
    e = env(reward=None, grid_size=9, food=0)
    e.step({0: 0, 1: 0})
    assert e.rewards is None
    e = env(grid_size=9, food=0, reward={"survival": 5.0, "step": -0.5})
    assert e.rewards is None
    e.step({0: 0, 1: 0})
    assert e.rewards == [-0.5, -0.5]
    e.reset()
    assert e.rewards is None
    with pytest.raises(
        ValueError,
        match=re.escape(
            'unknown reward key "foo"; valid keys for this game: ["step", "food", "loss", "draw", "kill", "win", "survival"]'
        ),
    ):
        env(reward={"foo": 1.0})
    assert rf.Env(rf.games.Snake(), rf.Reward()).resolved_config()["reward"] == {
        "draw": 0.0,
        "food": 0.0,
        "kill": 0.0,
        "loss": -1.0,
        "step": 0.0,
        "survival": 0.0,
        "win": 1.0,
    }


def test_zero_step_weight_gives_positive_zero():
    e = env(grid_size=9, food=0, reward={"step": -0.0, "win": -0.0, "loss": 0.0})
    play(e, [{0: 2, 1: 1}] + [{0: 0, 1: 1}] * 4)
    assert [str(x) for x in e.rewards] == ["0.0", "0.0"]


# -- observations -----------------------------------------------------------------------------------


def _planes(obs):
    return [sorted(map(tuple, np.argwhere(obs[p]).tolist())) for p in range(5)]


def test_observation_is_the_rotated_board():
    e = rf.Env(rf.games.Snake(grid_size=8, food=2), seed=0)
    e.reset()
    o0, o1 = e.observe(0), e.observe(1)
    assert o0.dtype == np.float32 and o0.shape == (5, 8, 8) and o0.flags.c_contiguous
    assert _planes(o0) == [[(5, 4)], [(6, 4), (7, 4)], [(1, 4)], [(0, 3), (0, 4)], [(1, 7), (6, 0)]]
    assert _planes(o1) == [[(6, 3)], [(7, 3), (7, 4)], [(2, 3)], [(0, 3), (1, 3)], [(1, 7), (6, 0)]]
    e.step({0: 1, 1: 0})
    o0, o1 = e.observe(0), e.observe(1)
    assert _planes(o0) == [[(3, 2)], [(4, 1), (4, 2)], [(4, 5)], [(4, 6), (4, 7)], [(0, 1), (7, 6)]]
    assert _planes(o1) == [[(5, 3)], [(6, 3), (7, 3)], [(2, 4)], [(1, 3), (2, 3)], [(1, 7), (6, 0)]]
    assert set(np.unique(o0)) <= {0.0, 1.0}


def test_dead_snakes_observe_with_their_last_direction():
    e = env(grid_size=8, food=0, num_snakes=3)
    play(e, [{0: 2, 1: 1, 2: 1}, {0: 0, 1: 2, 2: 0}])
    assert _planes(e.observe(0)) == [[(4, 5)], [(5, 5)], [(2, 2), (2, 5)], [(1, 5), (2, 1), (3, 1)], []]
    assert _planes(e.observe(2)) == [[(5, 2)], [(6, 2)], [(3, 2), (5, 5)], [(2, 2), (4, 6), (5, 6)], []]
    with pytest.raises(ValueError, match="agent 3 out of range for a 3-agent game"):
        e.observe(3)


# -- step validation, snapshots, state validation -----------------------------------------------------


def test_step_errors_leave_the_env_unchanged():
    e = env(grid_size=9, food=2)
    before = e.state()
    with pytest.raises(ValueError, match=re.escape("agent 2 is not active this tick; active agents: [0, 1]")):
        e.step({0: 0, 1: 0, 2: 0})
    with pytest.raises(ValueError, match=re.escape("missing action for active agent 1; active agents: [0, 1]")):
        e.step({0: 0})
    with pytest.raises(ValueError, match=re.escape("action 3 is illegal for agent 1 (legal: [0, 1, 2])")):
        e.step({0: 0, 1: 3})
    with pytest.raises(OverflowError):
        e.step({0: -1, 1: 0})
    assert e.state() == before and e.ticks == 0


def test_snapshot_round_trip_keeps_counters_and_stream():
    e = env(grid_size=8, food=2, win_food_lead=2)
    play(e, [{0: 1, 1: 1}, {0: 1, 1: 1}, {0: 0, 1: 1}])  # snake 0 leads by one
    snap = rf.EnvSnapshot.from_bytes(e.snapshot().to_bytes())
    other = env(grid_size=8, food=2, win_food_lead=2, seed=99)
    other.restore(snap)
    assert other.state() == e.state() and other.rewards is None and other.ticks == 3
    f = e.fork()
    for x in (e, other, f):
        x.step({0: 2, 1: 1})
    assert e.state() == other.state() == f.state()
    assert np.array_equal(e._state, other._state) and np.array_equal(e._state, f._state)


def _body_word(state, params):
    """Index of the first grid word covered by an alive body."""
    grid = S.SNAKES + S.SW * int(params[S.P_N])
    cells = int(params[S.P_CELLS])
    return grid + int(np.flatnonzero(state[grid : grid + cells] & S.OWNER_MASK)[0])


@pytest.mark.parametrize(
    "edit,reason",
    [
        (lambda s, p: s.__setitem__(S.SNAKES + S.S_DIR, 4), "direction 4 out of range"),
        (lambda s, p: s.__setitem__(S.SNAKES + S.S_ALIVE, 2), "alive flag 2 is not a bool"),
        (lambda s, p: s.__setitem__(S.NFREE, 0), "free-cell count disagrees with the grid"),
        (lambda s, p: s.__setitem__(S.PENDING, 1), "food spawns still pending"),
        (lambda s, p: s.__setitem__(S.OVER, 1), "over flag"),
        (lambda s, p: s.__setitem__(S.SNAKES + S.S_LEN, 2), "ring slots outside the body must be 0"),
        (lambda s, p: s.__setitem__(S.SNAKES + S.S_LEN, 10**9), "body length or head slot out of range"),
        (lambda s, p: s.__setitem__(_body_word(s, p), 0), "grid words disagree with the bodies"),
        (lambda s, p: s.__setitem__(S.SNAKES + S.SW * 2 + 9, S.FOOD_BIT), "food list disagrees with the grid"),
    ],
)
def test_forged_snapshots_are_rejected(edit, reason):
    e = env(grid_size=8, food=2)
    e.step({0: 0, 1: 0})
    snap = e.snapshot()
    state = snap._state_row(e._def.state_size).copy()
    assert S.validate_state(e._def.params, state) is None
    edit(state, e._def.params)
    forged = rf.EnvSnapshot(
        snap.fingerprint, snap._rng, snap._done, snap._ticks, bytes([1]) + state.astype("<i8").tobytes()
    )
    before = e.state()
    with pytest.raises(ValueError, match=re.escape("invalid snapshot state: ") + ".*" + re.escape(reason)):
        e.restore(forged)
    assert e.state() == before


def test_every_state_of_random_play_validates():
    for kwargs in ({"grid_size": 6, "num_snakes": 3, "food": 5, "initial_length": 2}, {"grid_size": 5, "food": 4}):
        e = env(seed=3, **kwargs)
        rs = np.random.default_rng(0)
        for _ in range(1500):
            if e.done():
                assert S.validate_state(e._def.params, e._state) is None
                e.reset()
            e.step({a: int(rs.integers(3)) for a in e.active_agents()})
            assert S.validate_state(e._def.params, e._state) is None


def test_engine_truncation_in_the_batched_kernels():
    game = rf.games.Snake(grid_size=10, food=3, max_ticks=5)
    d = game._def
    assert d.horizon == 5
    e = rf.Env(game, seed=1)
    for _ in range(8):
        if e.done():
            break
        e.step({a: 1 for a in e.active_agents()})
    assert e.ticks > 5  # an Env never truncates
    k = d.kernels
    state = np.zeros(d.state_size, np.int64)
    rng = np.zeros(1, np.uint64)
    probs = np.zeros(d.max_chance)
    k.reset(d.params, state, d.horizon, rng, probs)
    amounts = np.zeros((2, 7))
    for _ in range(5):
        k.apply_step(d.params, state, np.array([1, 1]), amounts, rng, probs)
    assert state[1] == 2  # TRUNCATED
    assert S.validate_state(d.params, state) is None


# -- conformance -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"grid_size": 6, "num_snakes": 3, "food": 4, "initial_length": 1},
        {"grid_size": 10, "num_snakes": 8, "food": 8},
        {"grid_size": 5, "food": 0, "play_to_last": False},
        {"grid_size": 8, "win_food_lead": 1, "food": 6, "max_ticks": 30},
        {"grid_size": 4, "food": 14, "initial_length": 1},
        {"grid_size": 7, "num_snakes": 4, "food": 3, "initial_length": 3, "play_to_last": False, "max_ticks": None},
    ],
)
def test_check_game(kwargs):
    stats = rf.testing.check_game(rf.games.Snake(**kwargs))
    assert stats["ticks"] > 0 and stats["batched_ticks"] > 0
