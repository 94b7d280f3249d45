"""CarRacing: constructor checks, the seeded track draw, car dynamics, tiles, rewards, events,
termination, snapshots, both encoders, and one Engine composition (Ppo + Ppo on pixels).

Compositions compiled by the default tier: the Env kernels for ``car_racing_vec`` and for
``car_racing_pixels`` (shared with the catalogue tests), and one Engine (Ppo + Ppo, pixels).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import reinfors as rf
from reinfors.jit.games import car_racing as cr
from reinfors.testing import check_game

VEC = rf.encoders.CarRacingVec


def _env(seed=0, **kw):
    return rf.Env(rf.games.CarRacing(encoder=VEC(), **kw), rf.Reward(), seed=seed)


def _row(env):
    return env._state  # the Env's own state row (tests may forge it; validate_state guards restores)


# -- constructor, handles, configuration (nothing compiled) ---------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "exc", "msg"),
    [
        ({"lap_complete_percent": 1.5}, ValueError, "lap_complete_percent must be in [0, 1], got 1.5"),
        ({"lap_complete_percent": -0.1}, ValueError, "lap_complete_percent must be in [0, 1], got -0.1"),
        ({"lap_complete_percent": float("nan")}, ValueError, "lap_complete_percent must be in [0, 1], got NaN"),
        ({"lap_complete_percent": float("inf")}, ValueError, "lap_complete_percent must be in [0, 1], got inf"),
        ({"lap_complete_percent": "a"}, TypeError, "argument 'lap_complete_percent': must be real number, not str"),
        ({"max_ticks": 0}, ValueError, "max_ticks must be >= 1 (or None to never truncate)"),
        ({"max_ticks": -1}, OverflowError, "can't convert negative int to unsigned"),
        ({"max_ticks": 2**64}, OverflowError, "int too big to convert"),
        ({"max_ticks": 1.0}, TypeError, "argument 'max_ticks': 'float' object cannot be interpreted as an integer"),
        ({"encoder": 3}, TypeError, "argument 'encoder': 'int' object cannot be converted to 'EncoderHandle'"),
    ],
)
def test_constructor_errors(kwargs, exc, msg):
    with pytest.raises(exc) as info:
        rf.games.CarRacing(**kwargs)
    assert str(info.value) == msg


def test_constructor_accepts_and_resolves():
    g = rf.games.CarRacing()
    assert g.name == "car_racing" and g.encoder.name == "car_racing_pixels"
    assert g.truncation_horizon() == 1000 and g.action_space().n == 5
    space = g.observation_space()
    assert space.shape == (3, 96, 96) and (space.low == 0).all() and (space.high == 255).all()
    vs = rf.games.CarRacing(encoder=VEC()).observation_space()
    assert vs.shape == (1, 1, 21) and np.isneginf(vs.low).all() and np.isposinf(vs.high).all()
    assert g._resolved() == {
        "encoder": {"name": "car_racing_pixels", "revision": 2},
        "lap_complete_percent": 0.95,
        "max_ticks": 1000,
        "name": "car_racing",
        "revision": 1,
    }
    assert rf.games.CarRacing(encoder=VEC())._resolved()["encoder"] == {"name": "car_racing_vec", "revision": 1}
    for lap in (0, 1, True):
        assert rf.games.CarRacing(lap_complete_percent=lap)._resolved()["lap_complete_percent"] == float(lap)
    assert rf.games.CarRacing(max_ticks=None).truncation_horizon() is None
    assert rf.games.CarRacing(0.5, 10).truncation_horizon() == 10
    with pytest.raises(TypeError, match=r"GameHandle.CarRacing\(\) takes from 0 to 3 positional arguments"):
        rf.games.CarRacing(0.5, 10, None, 3)
    with pytest.raises(ValueError, match='incompatible encoder "snake" for game "car_racing"'):
        rf.games.CarRacing(encoder=rf.encoders.Snake())
    with pytest.raises(ValueError, match='incompatible encoder "car_racing_vec" for game "snake"'):
        rf.games.Snake(encoder=VEC())
    for name in ("car_racing_pixels", "car_racing_vec"):
        e = rf.encoders.make(name)
        assert e.name == name and e.head_index(4, 0) == 4 and e.game_action(3, 0) == 3
        with pytest.raises(ValueError, match=f"action 5 out of range for the 5-action {name} encoding"):
            e.head_index(5, 0)
    with pytest.raises(TypeError, match=r"EncoderHandle.CarRacingVec\(\) takes 0 positional arguments"):
        VEC(1)
    assert "car_racing" in rf.games.registered()
    assert rf.games.make("car_racing", max_ticks=5).truncation_horizon() == 5


def test_engine_from_config_round_trip_checks_revisions():
    eng = rf.Engine(rf.games.CarRacing(encoder=VEC()), None, rf.policies.Ppo(), rf.learners.Ppo(), n_games=2)
    cfg = eng.resolved_config()
    assert cfg["game"]["revision"] == 1 and cfg["game"]["encoder"]["revision"] == 1
    assert rf.engine_from_config(cfg).resolved_config() == cfg
    cfg["game"]["encoder"]["revision"] = 7
    with pytest.raises(ValueError, match="revision"):
        rf.engine_from_config(cfg)


def test_mass_properties_are_gymnasiums_fixtures():
    # hull polygons at density 1 plus four 28 x 54 wheels at density 0.1, in units of SIZE = 0.02
    hull = 120 * 20 + (30 + 40) / 2 * 100 + 100 * 30
    octagon = 0.5 * abs(
        sum(
            x0 * y1 - x1 * y0
            for (x0, y0), (x1, y1) in zip(cr.HULL_POLYS[2], cr.HULL_POLYS[2][1:] + cr.HULL_POLYS[2][:1], strict=True)
        )
    )
    assert cr.MASS == pytest.approx((hull + octagon + 4 * 0.1 * 28 * 54) * 0.02**2)
    assert cr.INERTIA > 0


# -- the track ------------------------------------------------------------------------------------


def test_seed_draw_reset_stream_and_fork():
    env = _env(seed=0)
    seeds = [env.state()["seed"]]
    for _ in range(3):
        env.reset()
        seeds.append(env.state()["seed"])
    # 0.4.0's seeds: one index_hi(2**32 - 1) draw of the chance stream per episode
    assert seeds == [3793791032, 1853398634, 113532184, 4169906343]
    f = env.fork(seed=7)
    assert f.state()["seed"] == seeds[-1] and f.ticks == 0
    f.reset()
    assert f.state()["seed"] == _env(seed=7).state()["seed"] == 1674306019


def test_track_is_a_closed_gymnasium_loop():
    for seed in range(4):
        env = _env(seed=seed)
        s = env.state()
        st = _row(env)
        nt = s["total_tiles"]
        pts = st.view(np.float64)[cr.TRK : cr.TRK + 3 * nt].reshape(nt, 3)
        steps = np.hypot(*np.diff(pts[:, :2], axis=0).T)
        assert np.allclose(steps, cr.TRACK_DETAIL_STEP)  # one detail step between points
        assert not s["fallback_track"] and 100 < nt <= cr.MAX_TILES
        # the car starts on point 0, heading along the track (beta), both rear and front tiles touched
        assert s["hull_position"] == pytest.approx(tuple(pts[0, :2]), abs=1e-4)
        assert s["hull_angle"] == pytest.approx(pts[0, 2], abs=1e-6)
        assert s["tiles_visited"] == 2 and s["speed"] == 0.0 and s["tick"] == 0 and not s["pending"]
        assert abs(pts[0, 0]) <= cr.PLAYFIELD and np.abs(pts[:, :2]).max() < cr.PLAYFIELD
        assert cr.validate_state(None, st) is None


# -- dynamics, tiles, rewards ---------------------------------------------------------------------


def test_gas_brake_steer_dynamics():
    env = _env(seed=0)
    a0 = env.state()["hull_angle"]
    env.step({0: 3})
    # tick 1: gas 0.1 spins both rear wheels past the friction limit: 2 x 400 N on the car
    assert env.state()["speed"] == pytest.approx(2 * cr.FRICTION_LIMIT * cr.DT / cr.MASS, rel=1e-9)
    v = env.observe(0).ravel()
    assert v[7] == 0.0 and v[9] == 0.0 and v[11] == pytest.approx(v[13]) and v[11] > 0  # rear omega only
    speeds = [env.state()["speed"]]
    for _ in range(29):
        env.step({0: 3})
        speeds.append(env.state()["speed"])
    assert np.all(np.diff(speeds) > 0) and 20 < speeds[-1] < 23
    assert env.state()["hull_angle"] == pytest.approx(a0, abs=1e-9)  # straight: no yaw
    env.step({0: 1})  # steer -0.6: the hull angle falls (0.4.0 too; the frame is drawn y-flipped)
    env.step({0: 1})
    v = env.observe(0).ravel()
    assert v[15] == v[16] == pytest.approx(-0.6, abs=1e-6) and v[6] < 0 and env.state()["hull_angle"] < a0
    for _ in range(20):
        env.step({0: 4})
    assert env.state()["speed"] < 0.05  # brake 0.8 stops the wheels and the car
    for _ in range(3):
        env.step({0: 0})
    v = env.observe(0).ravel()
    assert v[15] == v[16] == 0.0 and v[18] == pytest.approx(env.ticks / 1000)


def test_tile_rewards_and_events():
    env = _env(seed=0)
    nt = env.state()["total_tiles"]
    got = []
    for _ in range(80):
        ev = env.step({0: 3})
        (agent, payload), = ev
        assert agent == 0 and set(payload) == {"new_tiles", "total_tiles", "off_playfield"}
        assert payload["total_tiles"] == nt and payload["off_playfield"] is False
        want = 1000.0 * payload["new_tiles"] / nt - 0.1
        assert env.rewards == [pytest.approx(want)]
        got.append(payload["new_tiles"])
    assert env.state()["tiles_visited"] == 2 + sum(got) and sum(got) >= 5
    assert env.observe(0).ravel()[17] == pytest.approx(env.state()["tiles_visited"] / nt)
    # custom weights: the tile key is per lap (1/N per tile)
    env = rf.Env(rf.games.CarRacing(encoder=VEC()), rf.Reward(tile=0.0, step=2.0), seed=0)
    env.step({0: 3})
    assert env.rewards == [2.0]


def test_off_playfield_terminates_with_the_off_amount_only():
    env = _env(seed=0)
    f = _row(env).view(np.float64)
    f[cr.F_X] = cr.PLAYFIELD - 0.01
    f[cr.F_VX] = 20.0
    f[cr.F_VY] = 0.0
    ev = env.step({0: 3})
    assert ev == [(0, {"new_tiles": 0, "total_tiles": env.state()["total_tiles"], "off_playfield": True})]
    assert env.rewards == [-100.0] and env.done() and env.active_agents() == [] and env.legal_actions(0) == []
    with pytest.raises(ValueError):
        env.step({0: 0})


def test_lap_completion_and_full_visit():
    env = _env(seed=0, lap_complete_percent=0.0)  # tile 0 touched at reset with > 0% visited
    assert env.state()["new_lap"] and not env.done()
    env.step({0: 0})
    assert env.done() and env.rewards == [-0.1]
    env = _env(seed=0)
    st = _row(env)
    nt = int(st[cr.NT])
    st[cr.VIS : cr.VIS + nt] |= cr.V_VISITED  # every tile but the next two ahead
    st[cr.VIS + 2] &= ~cr.V_VISITED
    st[cr.VISITED] = nt - 1
    while not env.done():
        ev = env.step({0: 3})
    assert ev[0][1]["new_tiles"] == 1 and env.state()["tiles_visited"] == nt and not env.state()["new_lap"]
    assert env.rewards == [pytest.approx(1000.0 / nt - 0.1)]


def test_env_does_not_truncate():
    env = _env(seed=0, max_ticks=3)
    for _ in range(5):
        env.step({0: 0})
    assert env.ticks == 5 and not env.done()


def test_snapshot_restore_and_forged_rows():
    env = _env(seed=0)
    for _ in range(25):
        env.step({0: 3})
    blob = env.snapshot().to_bytes()
    obs, state = env.observe(0), env.state()
    env.step({0: 1})
    twin = _env(seed=99)
    twin.restore(rf.EnvSnapshot.from_bytes(blob))
    assert twin.state() == state and np.array_equal(twin.observe(0), obs) and twin.rewards is None
    for e in (env, twin):
        e.restore(rf.EnvSnapshot.from_bytes(blob))
    for _ in range(10):
        assert env.step({0: 2}) == twin.step({0: 2})
    assert env.state() == twin.state()
    bad = _env(seed=0)
    bad._state[cr.VISITED] += 1
    assert cr.validate_state(None, bad._state) == "visited count disagrees with the tiles"


def test_check_game_conformance():
    stats = check_game(rf.games.CarRacing(encoder=VEC(), max_ticks=60), episodes=3, max_steps=60, batch=4)
    assert stats["ticks"] > 0 and stats["snapshots"] > 0


# -- pixels ---------------------------------------------------------------------------------------


def _rgb(obs):
    return obs.transpose(1, 2, 0).astype(np.uint8)


def test_pixels_frame():
    env = rf.Env(rf.games.CarRacing(), rf.Reward(), seed=0)
    o = env.observe(0)
    assert o.shape == (3, 96, 96) and o.dtype == np.float32 and o.flags.c_contiguous
    assert o.min() >= 0 and o.max() <= 255 and np.array_equal(o, np.round(o))
    img = _rgb(o)
    # tick 0 is zoomed out (Gymnasium's first-second zoom): black around the playfield square
    assert (img[:84] == 0).all(axis=2).mean() > 0.3
    for _ in range(60):
        env.step({0: 3})
    img = _rgb(env.observe(0))
    colours = {tuple(int(c) for c in px) for px in img.reshape(-1, 3)}
    assert {(102, 204, 102), (102, 230, 102), (102, 102, 102), (204, 0, 0), (0, 0, 0)} <= colours
    assert tuple(img[72, 48]) == (204, 0, 0)  # the hull, at 3/4 of the height
    assert (img[84:86] == 0).all() and (img[94:] == 0).all()  # indicator bar
    digits = img[87:93, 1:11, 0]  # the score "00NN" in grey-white glyphs at the bottom left
    assert digits.max() > 100 and (img[87:93, 1:11, 0] == img[87:93, 1:11, 2]).all()
    assert (img[84:, 12:14] == 255).any()  # speed bar (white)
    assert tuple(img[40, 48]) in {(102, 102, 102), (102, 104, 102), (104, 104, 104), (107, 107, 107)}
    # the frame is a function of the state: a restored twin renders the same pixels
    twin = rf.Env(rf.games.CarRacing(), rf.Reward(), seed=5)
    twin.restore(env.snapshot())
    assert np.array_equal(twin.observe(0), env.observe(0))


def test_gym_adapters_withhold_car_racing():
    gym = pytest.importorskip("reinfors.gym")
    pytest.importorskip("gymnasium")
    with pytest.raises(ValueError, match="car_racing is not available through the standard-API adapters yet"):
        gym.gymnasium_env(rf.games.CarRacing())


# -- the engine -----------------------------------------------------------------------------------


def test_engine_ppo_on_pixels():
    game = rf.games.CarRacing(max_ticks=30)
    eng = rf.Engine(game, rf.Reward(), rf.policies.Ppo(), rf.learners.Ppo(gamma=0.0, lam=0.95), n_games=4, seed=1)
    calls = []

    def infer(obs):
        calls.append(obs.shape)
        assert obs.dtype == np.float32 and math.prod(obs.shape[1:]) == 3 * 96 * 96 and obs.max() <= 255
        n = len(obs)
        return np.zeros((n, 5), np.float32), np.zeros(n, np.float32)

    b = eng.collect(150, infer)
    assert len(b.obs) >= 150 and math.prod(b.obs.shape[1:]) == 3 * 96 * 96
    r = np.asarray(b.returns)  # gamma 0 and a zero critic: the returns are the tick rewards
    assert np.all(np.isfinite(r)) and math.isclose(float(np.median(r)), -0.1, abs_tol=1e-6)
    assert set(np.unique(np.diff(b.legal_offsets))) == {5} and 0 <= b.actions.min() and b.actions.max() < 5
    assert b.obs.min() >= 0 and b.obs.max() <= 255 and calls
