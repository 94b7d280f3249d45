"""``rf.catalog`` against runtime behaviour: every catalogued fact is checked on the real thing.

Games are constructible by name and agree with their handles and Envs (players, dynamics,
information, actions, reward keys and defaults, start_buffer support); encoders construct and
match their game's default; the algorithm lists agree with Engine composition validation; the
registry frozensets equal the ``registered()`` lists.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

import reinfors as rf
from reinfors import catalog

GAMES = sorted(catalog.GAMES)

# The constructor argument that sets the player count, for games with a player range.
PLAYER_KW = {"kuhn_poker": "players", "snake": "num_snakes"}
PLAYER_KW["texas_holdem"] = "num_players"
DEFAULT_PLAYERS = {"texas_holdem": 6}  # games whose default is not the smallest player count


def _player_range(info: catalog.GameInfo) -> tuple[int, int]:
    lo, _, hi = info.players.partition("-")
    return int(lo), int(hi or lo)


def _action_count(info: catalog.GameInfo) -> int:
    """``"7 columns"`` → 7; a list of named moves (``"Pass / bet"``) → its length."""
    m = re.match(r"([\d,]+) ", info.actions)  # "1,352 discrete ids" -> 1352
    if info.actions == "AlphaZero 8x8x73":
        return 8 * 8 * 73
    return int(m.group(1).replace(",", "")) if m else len(info.actions.split(" / "))


def _engine_outcome(game, reward, policy, learner, **kw) -> str:
    """``"ok"`` when the composition validates (or validates and then hits a feature this build
    does not have yet: NotImplementedError), else the ValueError message."""
    try:
        rf.Engine(game, reward, policy, learner, n_games=2, **kw)
    except NotImplementedError:
        return "ok"
    except ValueError as e:
        return str(e)
    return "ok"


def _resolve(path: str):
    """``"rf.policies.Mcts"`` → the object."""
    obj = rf
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


# -- the module ---------------------------------------------------------------------------------


def test_module_surface():
    assert rf.catalog is catalog and "catalog" in rf.__all__
    assert sorted(catalog.__all__) == sorted(
        [
            *("ALGORITHMS", "CHANCE_MODES", "ENCODERS", "ENCODER_INFO", "GAMES", "LEARNERS"),
            *("NOISE", "POLICIES", "AlgorithmInfo", "EncoderInfo", "GameInfo"),
        ]
    )
    for name in catalog.__all__:
        assert hasattr(catalog, name)


def test_records_are_frozen_dataclasses():
    info = catalog.GAMES["connect4"]
    assert [f.name for f in dataclasses.fields(catalog.GameInfo)] == [
        *("label", "players", "dynamics", "chance", "information", "actions", "observation"),
        *("reward_keys", "adapters", "reached_state_starts", "algorithms", "summary"),
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.label = "x"  # type: ignore[misc]
    assert repr(info).startswith("GameInfo(label='Connect 4', players='2', dynamics='Sequential', chance='No'")
    assert info == dataclasses.replace(info) and hash(info) == hash(dataclasses.replace(info))
    for table, cls in (
        (catalog.GAMES, catalog.GameInfo),
        (catalog.ENCODER_INFO, catalog.EncoderInfo),
        (catalog.ALGORITHMS, catalog.AlgorithmInfo),
    ):
        assert all(type(v) is cls for v in table.values())


def test_registries_equal_runtime():
    assert sorted(catalog.GAMES) == rf.games.registered()
    assert sorted(catalog.ENCODERS) == rf.encoders.registered() == sorted(catalog.ENCODER_INFO)
    assert sorted(catalog.POLICIES) == rf.policies.registered() == rf.registered_policies()
    assert sorted(catalog.LEARNERS) == rf.learners.registered() == rf.registered_learners()
    assert sorted(catalog.CHANCE_MODES) == rf.chance_modes.registered()
    assert sorted(catalog.NOISE) == rf.noise.registered()
    for fs in (catalog.POLICIES, catalog.LEARNERS, catalog.ENCODERS, catalog.CHANCE_MODES, catalog.NOISE):
        assert type(fs) is frozenset


# -- games --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GAMES)
def test_game_facts_match_runtime(name):
    info = catalog.GAMES[name]
    game = rf.games.make(name)
    assert game.name == name and rf.make_game(name).name == name
    env = rf.Env(game, rf.Reward(), seed=0)
    lo, hi = _player_range(info)
    assert env.num_agents() == DEFAULT_PLAYERS.get(name, lo)  # else the smallest player count
    assert game.action_space().n == env.action_count() == _action_count(info)
    # reward keys: names, declaration order (the unknown-key message lists them) and defaults
    assert env.resolved_config()["reward"] == dict(info.reward_keys)
    keys = ", ".join(f'"{k}"' for k, _ in info.reward_keys)
    with pytest.raises(ValueError, match=re.escape(f"valid keys for this game: [{keys}]")):
        rf.Env(game, rf.Reward(not_a_key=1.0))
    # dynamics: a simultaneous game has every agent active at reset, a sequential one exactly one
    active = env.active_agents()
    assert (len(active) > 1) == (info.dynamics == "Simultaneous")
    assert info.dynamics in ("Sequential", "Simultaneous")
    # information: only imperfect-information games declare information states
    if info.information == "Imperfect":
        assert isinstance(env.information_state_key(active[0]), bytes)
    else:
        assert info.information == "Perfect"
        with pytest.raises(ValueError, match="does not declare information states"):
            env.information_state_key(0)


@pytest.mark.parametrize("name", GAMES)
def test_game_chance(name):
    info = catalog.GAMES[name]
    declares = rf.games.make(name)._def.has_chance
    if name == "gridworld":
        # The original's catalogue says "No", but GridWorld's start cell is a root chance draw
        # (docs/original-0.4.0/gridworld.md); the text is kept as the original's.
        assert info.chance == "No" and declares
        return
    assert declares == (info.chance != "No")


@pytest.mark.parametrize("name", [n for n in GAMES if "-" in catalog.GAMES[n].players])
def test_game_player_range(name):
    lo, hi = _player_range(catalog.GAMES[name])
    kw = PLAYER_KW[name]
    for n in (lo, hi):
        assert rf.Env(rf.games.make(name, **{kw: n})).num_agents() == n
    for n in (lo - 1, hi + 1):
        with pytest.raises(ValueError):
            rf.games.make(name, **{kw: n})


@pytest.mark.parametrize("name", GAMES)
def test_reached_state_starts_is_start_buffer_support(name):
    info = catalog.GAMES[name]
    got = _engine_outcome(rf.games.make(name), None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), start_buffer=True)
    if info.reached_state_starts:
        assert got == "ok"
    else:
        assert got.startswith("this game does not support start_buffer")


# -- encoders -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(catalog.ENCODER_INFO))
def test_encoder_facts_match_runtime(name):
    info = catalog.ENCODER_INFO[name]
    handle = eval(info.constructor, {"rf": rf})  # noqa: S307 - a catalogue literal
    assert handle.name == name and rf.encoders.make(name).name == name
    (game_name,) = [g for g, gi in catalog.GAMES.items() if gi.label == info.game]
    game = rf.games.make(game_name)
    if game_name == "chess":  # chess has four encoders; the game's default is minimal_chess
        game = rf.games.make(game_name, encoder=handle)
    if game_name == "car_racing":  # two encoders; the default is car_racing_pixels
        game = rf.games.make(game_name, encoder=handle)
    assert game.encoder.name == name  # every other encoder here is its game's default
    shape = str(tuple(game.observation_space().shape))
    assert info.shape in (shape, f"{shape} by default") or info.shape.endswith(f"; {shape} by default")
    assert rf.games.make(game_name, encoder=handle).observation_space().shape == game.observation_space().shape


# -- algorithms ---------------------------------------------------------------------------------


def test_algorithm_references_resolve():
    for info in catalog.GAMES.values():
        assert set(info.algorithms) <= set(catalog.ALGORITHMS)
    for key, alg in catalog.ALGORITHMS.items():
        if alg.workflow != "Engine":
            assert alg.learner is None and alg.policy_or_solver.startswith("rf.solvers."), key
            continue
        policy, learner = _resolve(alg.policy_or_solver)(), _resolve(alg.learner)()
        assert policy.name in catalog.POLICIES and learner.name in catalog.LEARNERS
        assert getattr(rf, alg.training_output).__name__ == alg.training_output


@pytest.mark.parametrize("name", GAMES)
def test_game_algorithms_match_engine_validation(name):
    """An Engine algorithm the catalogue lists for a game composes on it; an unlisted one is
    refused with a composition error."""
    info = catalog.GAMES[name]
    for key, alg in catalog.ALGORITHMS.items():
        if alg.workflow != "Engine":
            continue
        policy, learner = _resolve(alg.policy_or_solver)(), _resolve(alg.learner)()
        got = _engine_outcome(rf.games.make(name), None, policy, learner)
        if key in info.algorithms:
            assert got == "ok", (name, key, got)
        else:
            assert got.endswith("see https://jeepjeepjeep.github.io/reinfors/catalogue/compatibility/"), (name, key)
