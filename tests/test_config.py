"""rf.engine_from_config: round trips of resolved_config (also through JSON), legacy routing,
and the error cases (messages follow reinfors 0.4.0; a differential check runs when its side
venv is present)."""

from __future__ import annotations

import copy
import json
import subprocess

import pytest
from helpers import linear_q, zero_pv  # tests/ is on sys.path (rootdir conftest)

import reinfors as rf

C4_REWARD = rf.Reward(win=1.0, loss=-1.0)


COMPOSITIONS = {
    "dqn_gridworld_encoder": (
        lambda: rf.Engine(
            rf.games.GridWorld(size=4, goal_row=1, max_ticks=None, encoder=rf.encoders.GridWorld()),
            rf.Reward(step=-0.01, goal=1.0),
            rf.policies.EpsilonGreedyQ(n_heads=3, epsilon=0.25),
            rf.learners.Dqn(n_step=2, gamma=0.9, bootstrap_p=0.5),
            n_games=3,
            seed=2**64 - 1,
            batch_size=2,
            n_threads=1,
        ),
        lambda: linear_q(32, 4, heads=3),
    ),
    "ppo_learn_players_pad": (
        lambda: rf.Engine(
            rf.games.Connect4(),
            C4_REWARD,
            rf.policies.Ppo(),
            rf.learners.Ppo(gamma=0.9, lam=0.8),
            n_games=2,
            learn_players=[1, 1, 0],
            pad=True,
            batch_size=3,
        ),
        lambda: zero_pv(7),
    ),
    "alphazero_noise_chance": (
        lambda: rf.Engine(
            rf.games.Connect4(),
            None,
            rf.policies.AlphaZero(
                num_simulations=4,
                temperature_drop=None,
                chance=rf.chance_modes.Committed(samples=1),
                noise=rf.noise.Dirichlet(epsilon=0.5, alpha=0.7, scope="all"),
            ),
            rf.learners.AlphaZero(gamma=0.95),
            n_games=2,
            seed=5,
        ),
        lambda: zero_pv(7),
    ),
    "alphazero_no_noise": (
        lambda: rf.Engine(
            rf.games.Connect4(),
            C4_REWARD,
            rf.policies.AlphaZero(num_simulations=4, noise=None),
            rf.learners.AlphaZero(),
            n_games=2,
        ),
        lambda: zero_pv(7),
    ),
    "minimax_treestrap": (
        lambda: rf.Engine(
            rf.games.Connect4(),
            C4_REWARD,
            rf.policies.Minimax(depth=2, top_k=3),
            rf.learners.TreeStrap(interior_targets=True, outcome_weight=0.25),
            n_games=2,
        ),
        lambda: linear_q(84, 7),
    ),
    "selective_expectimax": (
        lambda: rf.Engine(
            rf.games.Connect4(),
            C4_REWARD,
            rf.policies.SelectiveExpectimax(expansion_budget=3, top_k=2, opponent="distributional", opp_floor=0.1),
            rf.learners.TreeStrap(),
            n_games=2,
        ),
        lambda: linear_q(84, 7),
    ),
    "snake_mcts": (
        lambda: rf.Engine(
            rf.games.Snake(grid_size=7, max_ticks=20, food=2, win_food_lead=2),
            rf.Reward(food=1.0, loss=-1.0),
            rf.policies.Mcts(num_simulations=4, act_by="visits"),
            rf.learners.TreeStrap(),
            n_games=2,
        ),
        lambda: linear_q(5 * 49, 3),
    ),
}


def _same_records(a, b, infer):
    for x, y in zip([a.collect(6, infer) for _ in range(2)], [b.collect(6, infer) for _ in range(2)], strict=True):
        for name in type(x)._FIELDS:
            if name != "telemetry":
                assert getattr(x, name).tobytes() == getattr(y, name).tobytes(), name


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_resolved_config_round_trips(name):
    make, make_infer = COMPOSITIONS[name]
    e = make()
    cfg = e.resolved_config()
    for c in (cfg, json.loads(json.dumps(cfg))):
        f = rf.engine_from_config(c)
        assert f.resolved_config() == cfg
        assert f.config_fingerprint() == e.config_fingerprint()
    assert e.resolved_config() == cfg  # the input is not mutated
    _same_records(make(), rf.engine_from_config(json.loads(json.dumps(cfg))), make_infer())


def test_start_buffer_off_and_null_engine_values():
    cfg = COMPOSITIONS["ppo_learn_players_pad"][0]().resolved_config()
    cfg["engine"].update(start_buffer=None, batch_size=None, n_threads=None, seed=None, infer_cache=None, pad=None)
    f = rf.engine_from_config(cfg)
    c = f.resolved_config()["engine"]
    assert c["start_buffer"] is None and c["batch_size"] is None and c["n_threads"] == 0 and c["pad"] is None
    assert c["seed"] == 0 and c["infer_cache"] == 0
    cfg["engine"]["start_buffer"] = False
    assert rf.engine_from_config(cfg).resolved_config()["engine"]["start_buffer"] is None


def test_yaml_style_config_routes_reward_and_max_ticks():
    cfg = {
        "game": {"name": "gridworld", "size": 4, "reward": {"goal": 2.0}},
        "policy": {"name": "epsilon_greedy_q"},
        "learner": {"name": "dqn"},
        "engine": {"n_games": 2, "max_ticks": 33},
    }
    c = rf.engine_from_config(cfg).resolved_config()
    assert c["game"]["max_ticks"] == 33 and c["reward"]["goal"] == 2.0
    cfg2 = copy.deepcopy(cfg)
    del cfg2["game"]["reward"]
    cfg2["reward"] = {"goal": 3.0}
    assert rf.engine_from_config(cfg2).resolved_config()["reward"]["goal"] == 3.0
    cfg2["game"]["max_ticks"] = 7  # the game block wins over the legacy engine key
    assert rf.engine_from_config(cfg2).resolved_config()["game"]["max_ticks"] == 7


def _base():
    return COMPOSITIONS["minimax_treestrap"][0]().resolved_config()


ERRORS = [
    ("not_a_dict", lambda c: [c], TypeError, "argument 'config': must be a dict"),
    ("no_game", lambda c: c.pop("game") and c, KeyError, "'game'"),
    ("no_policy", lambda c: c.pop("policy") and c, KeyError, "'policy'"),
    ("no_learner", lambda c: c.pop("learner") and c, KeyError, "'learner'"),
    ("no_engine", lambda c: c.pop("engine") and c, TypeError, "n_games"),
    ("game_int", lambda c: c.update(game=3) or c, TypeError, "config['game'] must be a dict"),
    ("engine_str", lambda c: c.update(engine="x") or c, TypeError, "config['engine'] must be a dict"),
    ("no_name", lambda c: c["game"].pop("name") and c, KeyError, "'name'"),
    ("schema_2", lambda c: c.update(schema_version=2) or c, ValueError, "unsupported config schema_version 2; this"),
    ("schema_str", lambda c: c.update(schema_version="1") or c, ValueError, "schema_version '1'"),
    ("schema_bool", lambda c: c.update(schema_version=True) or c, ValueError, "schema_version True"),
    ("schema_float", lambda c: c.update(schema_version=1.0) or c, ValueError, "schema_version 1.0"),
    ("unknown_game", lambda c: c["game"].update(name="xx") or c, KeyError, "unknown game 'xx'; registered: ["),
    ("unknown_policy", lambda c: c["policy"].update(name="xx") or c, KeyError, "unknown policy 'xx'"),
    ("unknown_learner", lambda c: c["learner"].update(name="xx") or c, KeyError, "unknown learner 'xx'"),
    ("unknown_chance", lambda c: c["policy"].update(chance={"name": "zz"}) or c, KeyError, "unknown chance mode"),
    ("game_kwarg", lambda c: c["game"].update(foo=1) or c, TypeError, "unexpected keyword argument 'foo'"),
    ("policy_kwarg", lambda c: c["policy"].update(foo=1) or c, TypeError, "unexpected keyword argument 'foo'"),
    ("engine_kwarg", lambda c: c["engine"].update(foo=1) or c, TypeError, "unexpected keyword argument 'foo'"),
    ("n_groups", lambda c: c["engine"].update(n_groups=1) or c, ValueError, "'n_groups' was removed in 0.3.0"),
    ("pad_rows_to", lambda c: c["engine"].update(pad_rows_to=8) or c, ValueError, "'pad_rows_to' was removed in 0.3.0"),
    ("n_games_str", lambda c: c["engine"].update(n_games="4") or c, TypeError, "argument 'n_games'"),
    ("n_games_neg", lambda c: c["engine"].update(n_games=-1) or c, OverflowError, "negative int"),
    ("pad_int", lambda c: c["engine"].update(pad=1) or c, TypeError, "argument 'pad'"),
    ("reward_int", lambda c: c.update(reward=3) or c, TypeError, "argument 'reward'"),
    ("reward_key", lambda c: c["reward"].update(foo=1.0) or c, ValueError, 'unknown reward key "foo"'),
    ("encoder_str", lambda c: c["game"].update(encoder="connect4") or c, TypeError, "argument 'encoder'"),
    ("encoder_game", lambda c: c["game"].update(encoder={"name": "snake"}) or c, ValueError, "incompatible encoder"),
    ("noise_nameless", lambda c: c["policy"].update(noise={"alpha": 1.0}) or c, ValueError, "noise block requires a name"),
    ("sb_block", lambda c: c["engine"].update(start_buffer={"capacity": 3}) or c, KeyError, "'p_fresh'"),
    ("sb_int", lambda c: c["engine"].update(start_buffer=3) or c, TypeError, "engine.start_buffer"),
    ("sb_game", lambda c: c["engine"].update(start_buffer=True) or c, ValueError, "does not support start_buffer"),
    ("revision", lambda c: c["game"].update(revision=3) or c, ValueError, "content revision 3, but this build has"),
    ("enc_revision", lambda c: c["game"]["encoder"].update(revision=2) or c, ValueError, "encoder content revision 2"),
]  # fmt: skip


@pytest.mark.parametrize("label,edit,exc,match", ERRORS, ids=[e[0] for e in ERRORS])
def test_config_errors(label, edit, exc, match):
    cfg = edit(_base())
    with pytest.raises(exc) as info:
        rf.engine_from_config(cfg)
    assert match in str(info.value)


def test_accepted_variations():
    cfg = _base()
    for edit in (
        lambda c: c.pop("reward"),  # game defaults
        lambda c: c.pop("schema_version"),
        lambda c: c.update(schema_version=None),
        lambda c: c.update(reinfors_version="9.9"),
        lambda c: c.update(extra=1),
        lambda c: c["game"].update(encoder=None),
    ):
        c = copy.deepcopy(cfg)
        edit(c)
        rf.engine_from_config(c)


# -- differential: the original's exception types for the same configs ----------------------------

_ORIG_PROBE = """
import json, sys, reinfors as rf
out = []
for cfg in json.loads(sys.stdin.read()):
    try:
        rf.engine_from_config(cfg)
        out.append("ok")
    except Exception as e:
        out.append(type(e).__name__)
print(json.dumps(out))
"""


def test_exception_types_match_the_original():
    from differential.harness import require_orig

    py = require_orig()
    # Configs the original can also build (our error messages may name the block more clearly;
    # the types are the contract).  Skips "not_a_dict"/"engine_str" (the original fails there with
    # an accidental AttributeError / ValueError).
    skip = {"not_a_dict", "engine_str"}
    cases = [(label, edit(_base())) for label, edit, _, _ in ERRORS if label not in skip]
    cases.append(("ok", _base()))
    out = subprocess.run(
        [py, "-I", "-c", _ORIG_PROBE], input=json.dumps([c for _, c in cases]), capture_output=True, text=True,
        timeout=300, cwd="/",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    theirs = json.loads(out.stdout)
    ours = []
    for _, c in cases:
        try:
            rf.engine_from_config(c)
            ours.append("ok")
        except Exception as e:  # noqa: BLE001 - compared with the original
            ours.append(type(e).__name__)
    diffs = [(label, o, t) for (label, _), o, t in zip(cases, ours, theirs, strict=True) if o != t]
    assert not diffs
