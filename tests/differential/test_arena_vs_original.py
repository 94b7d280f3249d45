"""Differential tests of ``rf.Arena`` and ``rf.starts`` against reinfors==0.4.0 (side venv).

``CASES`` is run unchanged by both builds (in the original's interpreter through ``-I -c``, here
in-process): Connect4 matches between Minimax and greedy Mcts contestants, with a zero callback and
with an elementwise (hence bit-reproducible) row-dependent callback; openings of
``RandomStartingMoves`` in a deterministic and in a chance game; a deterministic ``External`` agent
(its views and notifications too); and the validation messages.  Same
seed: the same games action for action, the same payoffs and the same statistics.  A contestant
that samples (Mcts ``temperature > 0``) differs, because this build's ``choose`` does not have the
original's per-env RNG stream (xfail below).
"""

from __future__ import annotations

import json
import subprocess

import pytest

from .harness import require_orig

pytestmark = pytest.mark.differential

CASES = r'''
import numpy as np


def run(rf):
    from reinfors.arena import External
    from reinfors.starts import RandomStartingMoves

    game = rf.games.Connect4()
    reward = rf.Reward(win=1.0, loss=-1.0, draw=0.0)

    def zero(obs):
        return np.zeros((obs.shape[0], 1, 7), np.float32)

    def planes(obs):  # elementwise only: bit-identical in any numpy
        q = (obs[:, 0:7] - obs[:, 42:49]) * np.float32(0.25) + obs[:, 35:42] * np.float32(0.125)
        return q[:, None, :].astype(np.float32)

    def games(res):
        return [[g.game_id, g.opening_id, list(g.seats), list(g.payoffs), g.length, list(g.actions)] for g in res.games]

    def stats(res):
        return {
            "payoff": [list(res.payoff(c)) for c in (0, 1)],
            "seats": [sorted(res.seat_payoffs(c).items()) for c in (0, 1)],
        }

    out = {}
    minimax = (rf.policies.Minimax(depth=2), zero, 1.0)
    mcts = (rf.policies.Mcts(num_simulations=16), zero, 1.0)
    res = rf.Arena(game, reward, [minimax, mcts], n_slots=4, start=RandomStartingMoves(2), seed=7).play(8)
    out["minimax_vs_mcts"] = {"games": games(res), **stats(res)}

    greedy = (rf.policies.Mcts(num_simulations=16), planes, 0.99)
    res = rf.Arena(game, reward, [greedy, minimax], n_slots=3, seed=11).play(6)
    out["planes_mcts_vs_minimax"] = {"games": games(res), **stats(res)}

    res = rf.Arena(game, reward, [(rf.policies.Minimax(depth=2), planes, 1.0), greedy], n_slots=16,
                   start=RandomStartingMoves(3), seed=2**64 - 1).play(4)
    out["wide_slots_max_seed"] = {"games": games(res), **stats(res)}

    sampled = (rf.policies.Mcts(num_simulations=16, temperature=1.0), planes, 1.0)
    res = rf.Arena(game, reward, [sampled, minimax], n_slots=3, seed=11).play(6)
    out["sampled_mcts_vs_minimax"] = {"games": games(res), **stats(res)}

    class Centre:  # deterministic, so the games do not depend on thread timing
        log = []

        def __init__(self):
            self.heard, self.views = [], []
            Centre.log.append(self)

        def act(self, view):
            self.views.append([view.agent, view.ticks, view.legal_actions, view.obs.tolist()])
            return min(view.legal_actions, key=lambda c: (abs(c - 3), c))

        def on_action(self, action):
            self.heard.append(action)

    ext = External(Centre, workers=2, timeout=60.0)
    res = rf.Arena(game, reward, [minimax, ext], n_slots=4, start=RandomStartingMoves(2), seed=3).play(6)
    out["external"] = {"games": games(res), **stats(res),
                       "agents": sorted([a.heard, a.views] for a in Centre.log)}

    kuhn = rf.games.KuhnPoker()
    openings = {}
    for seed in range(6):
        snap, actions = RandomStartingMoves(4).generate(game, reward, seed)
        env = rf.Env(game, reward)
        env.restore(snap)
        openings[f"c4_{seed}"] = [actions, env.state()["board"] == rf.Env(game).state()["board"], env.ticks,
                                  [env.legal_actions(a) for a in range(2)], env.observe(0).tolist()]
        snap, actions = RandomStartingMoves(1).generate(kuhn, rf.Reward(), seed)
        env = rf.Env(kuhn, rf.Reward())
        env.restore(snap)
        openings[f"kuhn_{seed}"] = [actions, env.information_state_key(0).hex(), env.information_state_key(1).hex()]
    snap, actions = RandomStartingMoves(2, max_retries=64).generate(kuhn, rf.Reward(), 0)
    openings["kuhn_retry"] = actions
    out["openings"] = openings

    def error(fn):
        try:
            fn()
        except Exception as e:
            return [type(e).__name__, str(e)]
        return None

    A = rf.Arena
    out["errors"] = [
        error(lambda: A(game, reward, [minimax])),
        error(lambda: A(game, reward, [External(object), External(object)])),
        error(lambda: A(game, reward, [minimax, mcts], n_slots=0)),
        error(lambda: A(game, reward, [minimax, mcts], batch_delay=float("nan"))),
        error(lambda: A(game, reward, [minimax, (1, 2)])),
        error(lambda: A(rf.games.Snake(), rf.Reward(), [minimax, mcts])),
        error(lambda: A(rf.games.GridWorld(), rf.Reward(), [minimax, mcts])),
        error(lambda: A(game, reward, [minimax, mcts]).play(3)),
        error(lambda: A(game, None, [minimax, mcts]).play(2)),
        error(lambda: External(object, workers=0)),
        error(lambda: External(object, timeout=-1.0)),
        error(lambda: RandomStartingMoves(0)),
        error(lambda: RandomStartingMoves(3).generate(kuhn, rf.Reward(), 0)),
        error(lambda: A(game, reward, [minimax, External(lambda: 1 / 0)]).play(2)),
    ]
    return out
'''


def _ours():
    import reinfors as rf

    scope: dict = {}
    exec(CASES, scope)  # noqa: S102 - the shared case source
    return json.loads(json.dumps(scope["run"](rf)))


def _theirs():
    py = require_orig()
    script = CASES + "\nimport json, reinfors\nprint(json.dumps(run(reinfors)))\n"
    out = subprocess.run([py, "-I", "-c", script], capture_output=True, text=True, timeout=600, cwd="/")
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def both():
    theirs = _theirs()
    return _ours(), theirs


@pytest.mark.parametrize("case", ["minimax_vs_mcts", "planes_mcts_vs_minimax", "wide_slots_max_seed", "external"])
def test_arena_games_and_payoffs_equal_the_original(both, case):
    ours, theirs = both
    assert ours[case]["games"] == theirs[case]["games"]
    assert ours[case]["payoff"] == theirs[case]["payoff"]
    assert ours[case]["seats"] == theirs[case]["seats"]
    if case == "external":  # what every agent was shown and told, opening replay included
        assert ours[case]["agents"] == theirs[case]["agents"]


@pytest.mark.xfail(
    strict=True,
    reason="PolicyHandle.choose's per-env RNG stream of 0.4.0 is not recovered "
    "(docs/original-0.4.0/engine-search.md §5), so sampled (temperature > 0) contestants give other games; "
    "the Arena's own choose seeds are the original's (tests/test_arena.py)",
)
def test_sampled_contestant_games_equal_the_original(both):
    ours, theirs = both
    case = "sampled_mcts_vs_minimax"
    assert ours[case]["games"] == theirs[case]["games"]
    assert ours[case]["payoff"] == theirs[case]["payoff"]
    assert ours[case]["seats"] == theirs[case]["seats"]


def test_openings_equal_the_original(both):
    ours, theirs = both
    assert ours["openings"] == theirs["openings"]


def test_validation_messages_equal_the_original(both):
    ours, theirs = both
    assert ours["errors"] == theirs["errors"]
