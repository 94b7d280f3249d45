"""``reinfors.gym``: every registered game goes through the adapter its contract calls for, passes
the ecosystem's own checkers (Gymnasium ``check_env``, PettingZoo ``api_test`` /
``parallel_api_test``), and agrees with the catalogue's ``adapters`` column; plus the time limit,
seeding, masks, rewards and the missing-dependency error."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import reinfors as rf
from reinfors import catalog, gym

gymnasium = pytest.importorskip("gymnasium")
pettingzoo = pytest.importorskip("pettingzoo")
from gymnasium.utils.env_checker import check_env  # noqa: E402

with warnings.catch_warnings():  # pettingzoo.test imports its classic envs (a DeprecationWarning with pygame)
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.test import api_test, parallel_api_test  # noqa: E402

GAMES = rf.games.registered()


def _kind(game) -> str:
    """The adapter the game contract calls for: one agent / all move together / turns."""
    env = rf.Env(game)
    n = env.num_agents()
    if n == 1:
        return "Gymnasium"
    return "PettingZoo Parallel" if len(env.active_agents()) == n else "PettingZoo AEC"


def _adapter(game):
    try:
        return gym.make(game)
    except ValueError as e:
        if "not available through the standard-API adapters" in str(e):
            return None
        raise


@pytest.mark.parametrize("name", GAMES)
def test_make_picks_the_contract_adapter_and_agrees_with_the_catalogue(name):
    game = rf.games.make(name)
    env = _adapter(game)
    listed = catalog.GAMES[name].adapters if name in catalog.GAMES else None
    if env is None:
        assert listed is None or listed.startswith("None")
        return
    kind = _kind(game)
    if listed is not None:
        assert listed == kind, (name, listed, kind)
    base = {
        "Gymnasium": gymnasium.Env,
        "PettingZoo Parallel": pettingzoo.ParallelEnv,
        "PettingZoo AEC": pettingzoo.AECEnv,
    }[kind]
    assert isinstance(env, base)
    direct = {"Gymnasium": gym.gymnasium_env, "PettingZoo Parallel": gym.parallel_env, "PettingZoo AEC": gym.aec_env}
    assert type(direct[kind](game)) is type(env)


@pytest.mark.parametrize("name", GAMES)
def test_ecosystem_checkers_pass(name):
    game = rf.games.make(name)
    env = _adapter(game)
    if env is None:
        pytest.skip(f"{name} is withheld from the adapters")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kind = _kind(game)
        if kind == "Gymnasium":
            check_env(env, skip_render_check=True)
        elif kind == "PettingZoo Parallel":
            parallel_api_test(env, num_cycles=300)
        else:
            api_test(env, num_cycles=300, verbose_progress=False)


@pytest.mark.parametrize(
    ("ctor", "kwargs", "limit"),
    [
        ("KuhnPoker", {"players": 4}, None),
        ("Snake", {"num_snakes": 4, "grid_size": 10}, None),
        ("Snake", {}, 5),
        ("Connect4", {}, 5),
        ("GridWorld", {"size": 3}, 2),
    ],
)
def test_ecosystem_checkers_pass_on_variants(ctor, kwargs, limit):
    """More players and early time limits (truncation paths) pass the checkers too."""
    env = gym.make(getattr(rf.games, ctor)(**kwargs), max_episode_steps=limit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(env, gymnasium.Env):
            check_env(env, skip_render_check=True)
        elif isinstance(env, pettingzoo.ParallelEnv):
            parallel_api_test(env, num_cycles=300)
        else:
            api_test(env, num_cycles=300, verbose_progress=False)


def test_withheld_game_is_refused():
    class Fake:
        name = "car_racing"

    with pytest.raises(ValueError, match="car_racing is not available through the standard-API adapters yet"):
        gym.gymnasium_env(Fake())


def test_gymnasium_env_spaces_limit_and_seeding():
    game = rf.games.GridWorld(size=6)
    env = gym.gymnasium_env(game, rf.Reward(step=-0.1, goal=1.0), max_episode_steps=3, render_mode="ansi")
    assert env.render_mode == "ansi"
    assert env.observation_space.shape == game.observation_space().shape == (2, 6, 6)
    assert env.observation_space.dtype == np.float32 and env.action_space.n == 4
    obs, info = env.reset(seed=5)
    assert info == {} and obs.dtype == np.float32 and env.observation_space.contains(obs)
    steps = []
    for _ in range(3):
        obs, r, term, trunc, info = env.step(0)
        steps.append((obs.tobytes(), r, term, trunc))
        if term:
            break
    if not steps[-1][2]:
        assert [s[3] for s in steps] == [False, False, True]  # the time limit, as TimeLimit does
    assert all(s[1] in (-0.1, 0.9) for s in steps)
    env.reset(seed=5)
    again = [env.step(0) for _ in range(len(steps))]
    assert [(o.tobytes(), r, te, tr) for o, r, te, tr, _ in again] == steps
    assert gym.gymnasium_env(game)._max_episode_steps == game.truncation_horizon() == 1000


def test_gymnasium_env_refuses_multi_agent_games():
    with pytest.raises(ValueError, match="gymnasium_env is single-agent only; use parallel_env for multi-agent"):
        gym.gymnasium_env(rf.games.Connect4())


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "max_episode_steps must be >= 1"),
        (-3, "max_episode_steps must be >= 1"),
        (True, "max_episode_steps must be an int, got True"),
        (2.0, "max_episode_steps must be an int, got 2.0"),
    ],
)
def test_max_episode_steps_validation(value, message):
    with pytest.raises(ValueError, match=message):
        gym.make(rf.games.GridWorld(), max_episode_steps=value)


def test_aec_masks_rewards_and_turns():
    env = gym.aec_env(rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0))
    env.reset(seed=0)
    assert env.possible_agents == ["player_0", "player_1"] and env.agent_selection == "player_0"
    space = env.observation_space("player_0")
    assert space["observation"].shape == (2, 6, 7) and space["action_mask"].dtype == np.int8
    obs = env.observe("player_0")
    assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].tolist() == [1] * 7
    assert env.observe("player_1")["action_mask"].tolist() == [0] * 7  # not to move
    # player_0 wins in column 0: 0 1 0 1 0 1 0
    for col in (0, 1, 0, 1, 0, 1, 0):
        env.step(col)
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.agent_selection == "player_1"  # the loser sees its outcome first
    _, reward, term, trunc, _ = env.last()
    assert (reward, term, trunc) == (-1.0, True, False)
    env.step(None)
    _, reward, _, _, _ = env.last()
    assert env.agent_selection == "player_0" and reward == 1.0
    env.step(None)
    assert env.agents == []


def test_aec_time_limit_truncates_everyone():
    env = gym.aec_env(rf.games.Connect4(), max_episode_steps=2)
    env.reset()
    env.step(3)
    env.step(3)
    assert all(env.truncations.values()) and not any(env.terminations.values())


def test_parallel_masks_in_infos_and_reproducible_resets():
    game = rf.games.Snake(grid_size=8)
    env = gym.parallel_env(game, rf.Reward(food=1.0), seed=3)
    obs, infos = env.reset(seed=9)
    assert env.agents == ["player_0", "player_1"]
    for a in env.agents:
        assert obs[a].shape == game.observation_space().shape and obs[a].dtype == np.float32
        assert infos[a]["action_mask"].dtype == np.int8 and infos[a]["action_mask"].tolist() == [1, 1, 1]

    def episode():
        env.reset(seed=9)
        trace = []
        while env.agents:
            o, r, te, tr, inf = env.step({a: 0 for a in env.agents})
            trace.append((sorted(r.items()), sorted(te.items()), {a: o[a].tobytes() for a in o}))
            for a in o:
                if te[a] or tr[a]:
                    assert inf[a]["action_mask"].tolist() == [0, 0, 0]
        return trace

    assert episode() == episode()


def test_reward_none_means_game_defaults():
    env = gym.aec_env(rf.games.Connect4())
    assert env._env.resolved_config()["reward"] == {"draw": 0.0, "loss": -1.0, "win": 1.0}


@pytest.mark.parametrize(("module", "fn"), [("gymnasium", "gymnasium_env"), ("pettingzoo", "aec_env")])
def test_missing_packages_name_the_extra(monkeypatch, module, fn):
    monkeypatch.setattr(gym, "_CLASSES", {})
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=r"reinfors.gym needs `.+`; .*`pip install reinfors\[gym\]`"):
        getattr(gym, fn)(rf.games.GridWorld())


# -- against the original ------------------------------------------------------------------------

TRACE = r'''
import hashlib
import numpy as np


def run(rf):
    from reinfors import gym

    def h(x):
        return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()[:16]

    out = {}
    env = gym.make(rf.games.GridWorld(size=4), rf.Reward(step=-0.5, goal=2.0), max_episode_steps=7, seed=1)
    obs, _ = env.reset(seed=3)
    trace = [h(obs)]
    for t in range(20):
        obs, r, te, tr, info = env.step(t % 4)
        trace.append([h(obs), r, te, tr])
        if te or tr:
            obs, _ = env.reset()
            trace.append(h(obs))
    out["gridworld"] = trace
    for name, game in (("connect4", rf.games.Connect4()), ("kuhn", rf.games.KuhnPoker())):
        env = gym.make(game, max_episode_steps=30)
        env.reset(seed=5)
        trace = []
        for agent in env.agent_iter(max_iter=60):
            obs, r, te, tr, info = env.last()
            trace.append([agent, h(obs["observation"]), obs["action_mask"].tolist(), r, te, tr])
            legal = np.flatnonzero(obs["action_mask"])
            env.step(None if te or tr else int(legal[len(trace) % len(legal)]))
        out[name] = trace
    env = gym.make(rf.games.Snake(grid_size=8), rf.Reward(food=1.0), max_episode_steps=25)
    obs, infos = env.reset(seed=2)
    trace = [[sorted((a, h(o)) for a, o in obs.items()), sorted((a, i["action_mask"].tolist()) for a, i in infos.items())]]
    while env.agents:
        obs, r, te, tr, infos = env.step({a: (i + len(trace)) % 3 for i, a in enumerate(env.agents)})
        trace.append([sorted((a, h(o)) for a, o in obs.items()), sorted(r.items()), sorted(te.items()),
                      sorted(tr.items()), sorted((a, i["action_mask"].tolist()) for a, i in infos.items())])
    out["snake"] = trace
    return out
'''


@pytest.mark.differential
def test_adapter_episodes_equal_the_original():
    import json
    import subprocess

    from tests.differential.harness import require_orig

    py = require_orig()
    # the side venv has no gymnasium/pettingzoo: lend it this venv's copies, searched LAST so its
    # own reinfors and numpy still win
    lend = str(Path(gymnasium.__file__).resolve().parents[1])
    script = (
        f"import sys\nsys.path.append({lend!r})\n"
        + TRACE
        + "\nimport json, reinfors\nassert reinfors._reinfors.__file__.endswith('.so')\nprint(json.dumps(run(reinfors)))\n"
    )
    out = subprocess.run([py, "-I", "-c", script], capture_output=True, text=True, timeout=600, cwd="/")
    assert out.returncode == 0, out.stderr[-3000:]
    theirs = json.loads(out.stdout)
    scope: dict = {}
    exec(TRACE, scope)  # noqa: S102 - the shared trace source
    ours = json.loads(json.dumps(scope["run"](rf)))
    assert ours.keys() == theirs.keys()
    for name in theirs:
        assert ours[name] == theirs[name], name
