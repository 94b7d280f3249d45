"""Env contract: validation, snapshots (round trip, fuzzing), fork, configuration."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reinfors as rf

# The games this build registers so far; the original also has car_racing.
BUILT_GAMES = ["backgammon", "chess", "connect4", "gridworld", "kuhn_poker", "leduc_poker", "snake", "texas_holdem"]
BUILT_ENCODERS = sorted(
    [g for g in BUILT_GAMES if g != "chess"] + ["alphazero_chess", "minimal_chess", "openspiel_chess", "relative_chess"]
)
BUILT_GAMES = sorted([*BUILT_GAMES, "car_racing"])  # all of the original's games now
BUILT_ENCODERS = sorted([*BUILT_ENCODERS, "car_racing_pixels", "car_racing_vec"])

GAMES = {
    "connect4": lambda: rf.games.Connect4(),
    "gridworld": lambda: rf.games.GridWorld(size=4),
    "kuhn3": lambda: rf.games.KuhnPoker(players=3),
}


def _advance(env, n, seed=0):
    rs = np.random.default_rng(seed)
    for _ in range(n):
        if env.done():
            break
        env.step({a: int(rs.choice(env.legal_actions(a))) for a in env.active_agents()})


@pytest.mark.parametrize("name", sorted(GAMES))
def test_snapshot_round_trip_continues_exactly(name):
    env = rf.Env(GAMES[name](), rf.Reward(), seed=5)
    _advance(env, 3)
    blob = env.snapshot().to_bytes()
    twin = rf.Env(GAMES[name](), rf.Reward(), seed=999)
    twin.restore(rf.EnvSnapshot.from_bytes(blob))
    assert twin.rewards is None and twin.ticks == env.ticks and twin.state() == env.state()
    for _ in range(3):  # play on, across resets: same chance stream
        _advance(env, 40, seed=1)
        _advance(twin, 40, seed=1)
        assert twin.state() == env.state()
        env.reset()
        twin.reset()
        assert twin.state() == env.state()
    assert rf.EnvSnapshot.from_bytes(blob).to_bytes() == blob


def test_restore_rejects_other_compositions_and_leaves_env_intact():
    env = rf.Env(rf.games.Connect4(), rf.Reward())
    other = rf.Env(rf.games.Connect4(), None)
    _advance(other, 2)
    before = env.state(), env.ticks
    with pytest.raises(
        ValueError, match=r"snapshot is from a different composition \(fingerprint [0-9a-f]{64} != [0-9a-f]{64}\)"
    ):
        env.restore(other.snapshot())
    assert (env.state(), env.ticks) == before
    with pytest.raises(TypeError, match="cannot be converted to 'EnvSnapshot'"):
        env.restore(b"RFES")


def test_from_bytes_envelope_errors():
    blob = rf.Env(rf.games.Connect4()).snapshot().to_bytes()
    cases = {
        b"": "truncated",
        b"XXXX" + blob[4:]: "bad magic",
        blob[:4] + b"\x03" + blob[5:]: "unsupported schema version 3",
        blob[:-1]: "truncated",
        blob + b"\x00": "trailing bytes",
        blob[:81] + b"\x02" + blob[82:]: "done byte 2 is not a bool",
        blob[:9] + b"\xff" + blob[10:]: "fingerprint is not utf-8",
    }
    for data, reason in cases.items():
        with pytest.raises(ValueError, match=f"invalid EnvSnapshot: {reason}"):
            rf.EnvSnapshot.from_bytes(data)
    with pytest.raises(TypeError):
        rf.EnvSnapshot.from_bytes(bytearray(blob))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_fuzzed_snapshots_raise_value_error_only(data):
    """Random and mutated blobs: decoding and restoring either works or raises ValueError."""
    env = rf.Env(rf.games.KuhnPoker(players=3), rf.Reward(), seed=1)
    _advance(env, data.draw(st.integers(0, 4)))
    blob = bytearray(env.snapshot().to_bytes())
    kind = data.draw(st.sampled_from(["random", "flip", "cut", "extend"]))
    if kind == "random":
        blob = bytearray(data.draw(st.binary(max_size=400)))
    elif kind == "flip":
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(blob) - 1))
            blob[i] = data.draw(st.integers(0, 255))
    elif kind == "cut":
        blob = blob[: data.draw(st.integers(0, len(blob) - 1))]
    else:
        blob += data.draw(st.binary(min_size=1, max_size=16))
    target = rf.Env(rf.games.KuhnPoker(players=3), rf.Reward(), seed=1)
    before = target.state(), target.ticks
    try:
        target.restore(rf.EnvSnapshot.from_bytes(bytes(blob)))
    except ValueError:
        assert (target.state(), target.ticks) == before
        return
    # Accepted: the env must be fully usable.
    target.observe(0)
    _advance(target, 8)


def test_fork_is_clone_exact_or_reseeded():
    env = rf.Env(rf.games.KuhnPoker(), rf.Reward(), seed=3)
    env.step({0: 1})
    clone, fresh = env.fork(), env.fork(seed=7)
    assert clone.rewards is None and clone.state() == env.state() and fresh.state() == env.state()
    env.reset()
    clone.reset()
    fresh.reset()
    assert clone.state() == env.state()
    assert fresh.state() == rf.Env(rf.games.KuhnPoker(), seed=7).state()  # seed=s restarts the stream at s
    with pytest.raises(OverflowError, match="can't convert negative int to unsigned"):
        env.fork(seed=-1)


def test_argument_validation():
    env = rf.Env(rf.games.Connect4(), rf.Reward())
    with pytest.raises(OverflowError, match="can't convert negative int to unsigned"):
        env.legal_actions(-1)
    with pytest.raises(ValueError, match="agent 2 out of range for a 2-agent game"):
        env.observe(2)
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        env.legal_actions(1.0)
    with pytest.raises(TypeError, match="cannot be converted to 'PyDict'"):
        env.step([3])
    with pytest.raises(ValueError, match=r"missing action for active agent 0; active agents: \[0\]"):
        env.step({})
    with pytest.raises(ValueError, match=r"agent 1 is not active this tick; active agents: \[0\]"):
        env.step({1: 0})
    with pytest.raises(ValueError, match="this game does not declare information states"):
        env.information_state_key(0)
    for bad_seed, exc in ((-1, OverflowError), (2**64, OverflowError), (1.0, TypeError)):
        with pytest.raises(exc):
            rf.Env(rf.games.Connect4(), seed=bad_seed)
    with pytest.raises(TypeError, match="cannot be converted to 'GameHandle'"):
        rf.Env("connect4")
    with pytest.raises(
        ValueError, match=r'unknown reward key "foo"; valid keys for this game: \["win", "loss", "draw"\]'
    ):
        rf.Env(rf.games.Connect4(), rf.Reward(foo=1.0))
    with pytest.raises(ValueError, match='reward weight "win" must be finite, got NaN'):
        rf.Reward(win=float("nan"))
    with pytest.raises(TypeError, match="must be real number, not str"):
        rf.Reward(win="1")
    assert env.ticks == 0  # nothing above changed the env


def test_observations_are_fresh_arrays_and_rewards_none_without_reward():
    env = rf.Env(rf.games.Connect4())
    obs = env.observe(0)
    obs[:] = 5
    assert env.observe(0).sum() == 0 and obs.dtype == np.float32 and obs.flags.writeable
    env.step({0: 3})
    assert env.rewards is None


def test_resolved_config_and_fingerprint_match_the_original_bytes():
    env = rf.Env(rf.games.Connect4(), rf.Reward())
    assert env.resolved_config() == {
        "game": {"encoder": {"name": "connect4"}, "name": "connect4"},
        "reward": {"draw": 0.0, "loss": -1.0, "win": 1.0},
        "schema_version": 2,
    }
    assert env.config_fingerprint() == "d2c0ffe164cec574fe7af1158b7f80d5354841c4ca06b5670daf069155ec97ca"
    assert env.snapshot().fingerprint == env.config_fingerprint()
    kuhn = rf.Env(rf.games.KuhnPoker(players=10), rf.Reward(scale=1 / 3))
    assert kuhn.config_fingerprint() == "d283168da208840e8fa665b178051e1f8e29a146aee8942baae20d7b1d0b9aa2"


def test_registries_and_handles():
    assert rf.games.registered() == BUILT_GAMES
    assert rf.encoders.registered() == BUILT_ENCODERS
    with pytest.raises(KeyError, match="unknown game 'go'; registered"):
        rf.games.make("go")
    g = rf.games.make("gridworld", size=3)
    assert g.name == "gridworld" and g.observation_space().shape == (2, 3, 3) and g.action_space().n == 4
    assert repr(g.observation_space()) == "Box(shape=[2, 3, 3])" and repr(g.action_space()) == "Discrete(n=4)"
    assert g.truncation_horizon() == 1000 and rf.games.Connect4().truncation_horizon() is None
    with pytest.raises(ValueError, match='incompatible encoder "connect4" for game "gridworld"'):
        rf.games.GridWorld(encoder=rf.encoders.Connect4())
    with pytest.raises(TypeError, match=r"GameHandle.Connect4\(\) got an unexpected keyword argument 'foo'"):
        rf.games.Connect4(foo=1)
    enc = rf.games.Connect4().encoder
    assert enc.head_index(6, 1) == 6 and enc.game_action(0, 0) == 0
    with pytest.raises(ValueError, match="action 7 out of range for the 7-action connect4 encoding"):
        enc.head_index(7, 0)
    assert rf.__version__ == rf.core_version() == "0.4.0"
    assert set(rf.build_info()) == {"git_sha", "git_dirty", "git_tag", "profile", "version"}
    assert rf._reinfors.Env is rf.Env and rf._reinfors.EnvSnapshot is rf.EnvSnapshot
