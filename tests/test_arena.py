"""``rf.Arena`` / ``rf.arena``: validation, pairing, batching, reproducibility, payoff statistics and
external agents (threads, timeouts, failures, cleanup).

Every searched contestant here is Connect4 Minimax(depth=2) or Mcts(num_simulations=16) with a
zero callback, or EpsilonGreedyQ — three compositions shared with the differential test.
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

import reinfors as rf
from reinfors.arena import ArenaResult, External, GameResult, View, _mix64
from reinfors.starts import RandomStartingMoves

GAME = rf.games.Connect4()
REWARD = rf.Reward(win=1.0, loss=-1.0, draw=0.0)


def zero(obs):
    return np.zeros((obs.shape[0], 1, 7), np.float32)


def linear(obs):
    """A deterministic row-dependent Q callback (column preferences from the pieces)."""
    w = np.sin(np.arange(obs.shape[1] * 7, dtype=np.float32)).reshape(obs.shape[1], 7)
    return (obs @ w)[:, None, :].astype(np.float32)


MINIMAX = (rf.policies.Minimax(depth=2), zero, 1.0)
MCTS = (rf.policies.Mcts(num_simulations=16), zero, 1.0)


class Counting:
    """A policy wrapper that records how many envs every ``choose`` call got."""

    def __init__(self, policy):
        self.policy, self.calls = policy, []

    def choose(self, envs, infer, seed=0, plies=None, *, gamma):
        self.calls.append((len(envs), [e.ticks for e in envs], seed))
        return self.policy.choose(envs, infer, seed=seed, plies=plies, gamma=gamma)


def replay(actions, seed_game=None):
    """Replay a game's actions in a fresh Env; returns (env, payoffs by agent)."""
    env = rf.Env(GAME, REWARD, seed=0)
    pay = [0.0, 0.0]
    for a in actions:
        env.step({env.active_agents()[0]: a})
        pay = [p + r for p, r in zip(pay, env.rewards, strict=True)]
    return env, pay


# -- the SplitMix64 helper -------------------------------------------------------------------------


def test_mix64_reference_values():
    # values from reinfors 0.4.0's reinfors.arena._mix64
    assert _mix64() == 0
    assert _mix64(0) == 0
    assert _mix64(1) == 0x48218226FF3CD4BF
    assert _mix64(7, 0, 1) == 0x2EB43FBD0F1336A6
    assert _mix64(0, 5, 2) == 0x3AACBA68477F4DBC
    assert _mix64((1 << 64) - 1, 3) == 0xFABE885B653337B
    assert _mix64(-1) == _mix64((1 << 64) - 1)  # parts fold in as their low 64 bits
    assert all(0 <= _mix64(s, 3) < (1 << 64) for s in range(50))


# -- validation -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"contestants": [MINIMAX]}, "Arena v1 takes exactly two contestants"),
        ({"contestants": [MINIMAX, MINIMAX, MINIMAX]}, "Arena v1 takes exactly two contestants"),
        (
            {"contestants": [External(object), External(object)]},
            "Arena v1 supports at most one External contestant",
        ),
        ({"n_slots": 0}, "n_slots must be >= 1"),
        ({"batch_delay": -1.0}, "batch_delay must be finite and >= 0"),
        ({"batch_delay": math.inf}, "batch_delay must be finite and >= 0"),
        ({"contestants": [MINIMAX, (rf.policies.Minimax(), zero)]}, "a searched contestant is"),
        ({"contestants": [MINIMAX, rf.policies.Minimax()]}, "gamma is the discount"),
    ],
)
def test_arena_validation(kwargs, message):
    args = {"game": GAME, "reward": REWARD, "contestants": [MINIMAX, MCTS], **kwargs}
    with pytest.raises(ValueError, match=message):
        rf.Arena(**args)


@pytest.mark.parametrize("game", [rf.games.GridWorld(), rf.games.Snake(), rf.games.KuhnPoker(players=3)])
def test_arena_refuses_non_two_agent_sequential_games(game):
    with pytest.raises(ValueError, match="Arena v1 plays 2-agent sequential games"):
        rf.Arena(game, rf.Reward(), [MINIMAX, MCTS])


def test_arena_game_and_reward_are_checked_like_env():
    with pytest.raises(TypeError, match="cannot be converted to 'GameHandle'"):
        rf.Arena("connect4", REWARD, [MINIMAX, MCTS])
    with pytest.raises(ValueError, match="valid keys for this game"):
        rf.Arena(GAME, rf.Reward(food=1.0), [MINIMAX, MCTS])


@pytest.mark.parametrize("n", [0, 1, 3, -2])
def test_play_needs_an_even_number_of_games(n):
    with pytest.raises(ValueError, match=r"n_games must be even \(openings are played from both seats\)"):
        rf.Arena(GAME, REWARD, [MINIMAX, MCTS]).play(n)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"workers": 0}, "workers must be >= 1"), ({"timeout": 0}, "timeout must be finite and positive")],
)
def test_external_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        External(object, **kwargs)
    with pytest.raises(ValueError, match="timeout must be finite"):
        External(object, timeout=math.nan)


def test_arena_without_reward_fails_in_choose():
    with pytest.raises(ValueError, match="choose needs terminal values"):
        rf.Arena(GAME, None, [MINIMAX, MCTS]).play(2)


# -- searched play ------------------------------------------------------------------------------


def test_paired_seats_openings_and_results_are_consistent():
    res = rf.Arena(GAME, REWARD, [MINIMAX, MCTS], n_slots=3, start=RandomStartingMoves(3), seed=5).play(6)
    assert isinstance(res, ArenaResult) and res.n_contestants == 2
    assert [g.game_id for g in res.games] == list(range(6))
    for g in res.games:
        assert isinstance(g, GameResult)
        assert g.opening_id == g.game_id // 2
        assert g.seats == ((0, 1) if g.game_id % 2 == 0 else (1, 0))
        assert g.length == len(g.actions)
        env, by_agent = replay(g.actions)
        assert env.done()
        assert g.payoffs == tuple(by_agent[g.seats.index(c)] for c in range(2))
        assert g.payoffs[0] == -g.payoffs[1]  # connect4's reward is antisymmetric
    for k in range(3):  # both games of a pair start from the same opening
        a, b = res.games[2 * k].actions, res.games[2 * k + 1].actions
        assert a[:3] == b[:3] == RandomStartingMoves(3).generate(GAME, REWARD, _mix64(5, k, 2))[1]


def test_searched_runs_are_reproducible_per_seed():
    def run(seed):
        mcts = (rf.policies.Mcts(num_simulations=16, temperature=1.0), linear, 1.0)
        res = rf.Arena(GAME, REWARD, [mcts, MINIMAX], n_slots=4, seed=seed).play(4)
        return [(g.actions, g.payoffs) for g in res.games]

    first = run(3)
    assert run(3) == first
    assert any(run(s) != first for s in (4, 5))  # temperature sampling follows the seed


def test_one_pooled_choose_per_contestant_per_round():
    a, b = Counting(rf.policies.Minimax(depth=2)), Counting(rf.policies.Minimax(depth=2))
    res = rf.Arena(GAME, REWARD, [(a, zero, 1.0), (b, zero, 1.0)], n_slots=4, start=RandomStartingMoves(1)).play(6)
    # round 1: the four open games all have contestant 0 or 1 to move after a 1-move opening:
    # games 0, 2 seat contestant 0 as agent 0 (agent 1 to move), so contestant 1 moves there
    assert a.calls[0][0] + b.calls[0][0] == 4
    assert sum(n for n, _, _ in a.calls + b.calls) == sum(g.length - 1 for g in res.games)
    # every call batches all open games where that contestant moves (never more than n_slots)
    assert max(n for n, _, _ in a.calls + b.calls) <= 4
    assert any(n > 1 for n, _, _ in a.calls)
    # choose seeds are the per-contestant round hashes
    assert [s for _, _, s in a.calls] == [_mix64(0, 0, 3, i + 1) for i in range(len(a.calls))]
    assert [s for _, _, s in b.calls] == [_mix64(0, 1, 3, i + 1) for i in range(len(b.calls))]


def test_zero_search_contestant_is_batched_too():
    greedy = Counting(rf.policies.EpsilonGreedyQ(epsilon=0.0))
    res = rf.Arena(GAME, REWARD, [(greedy, linear, 1.0), MINIMAX], n_slots=8, seed=1).play(8)
    assert greedy.calls[0][0] == 4  # the four games where contestant 0 is agent 0 open the round
    assert sum(n for n, _, _ in greedy.calls) == sum(
        len(g.actions[g.seats.index(0) :: 2]) for g in res.games
    )  # one decision per contestant-0 move, all through the pooled calls


def test_progress_bar(capsys):
    rf.Arena(GAME, REWARD, [MINIMAX, MCTS], n_slots=2).play(2, progress=True)
    assert "arena" in capsys.readouterr().err


# -- payoff statistics ----------------------------------------------------------------------------


def test_payoff_is_pair_level_mean_and_stderr():
    def g(i, p0):
        return GameResult(i, i // 2, (0, 1) if i % 2 == 0 else (1, 0), (p0, -p0), 10, [])

    res = ArenaResult([g(0, 1.0), g(1, 1.0), g(2, 1.0), g(3, -1.0), g(4, -1.0), g(5, -1.0)])
    pairs = [1.0, 0.0, -1.0]
    mean = sum(pairs) / 3
    stderr = math.sqrt(sum((p - mean) ** 2 for p in pairs) / 2 / 3)
    assert res.payoff(0) == pytest.approx((mean, stderr))
    assert res.payoff(1) == pytest.approx((-mean, stderr))
    assert res.seat_payoffs(0) == pytest.approx({0: 1 / 3, 1: -1 / 3})
    m, s = ArenaResult([g(0, 1.0), g(1, 0.0)]).payoff(0)
    assert m == 0.5 and s == math.inf


# -- external agents --------------------------------------------------------------------------------


class Bot:
    """Plays the lowest legal column; records everything it is told."""

    live = 0
    peak = 0
    lock = threading.Lock()

    def __init__(self, log, act_delay=0.0, fail_act=False, fail_note=False, fail_close=False, illegal=False):
        self.log, self.seen, self.views = log, [], []
        self.act_delay, self.fail_act, self.fail_note = act_delay, fail_act, fail_note
        self.fail_close, self.illegal = fail_close, illegal
        with Bot.lock:
            Bot.live += 1
            Bot.peak = max(Bot.peak, Bot.live)
        log.append(self)
        self.closed = 0

    def act(self, view):
        assert isinstance(view, View)
        self.views.append(view)
        if self.act_delay:
            time.sleep(self.act_delay)
        if self.fail_act:
            raise KeyError("boom")
        return 99 if self.illegal else view.legal_actions[0]

    def on_action(self, action):
        if self.fail_note:
            raise OSError("pipe closed")
        self.seen.append(action)

    def close(self):
        self.closed += 1
        with Bot.lock:
            Bot.live -= 1
        if self.fail_close:
            raise RuntimeError("close failed")


def test_external_agents_see_every_action_and_are_closed():
    log: list[Bot] = []
    Bot.live = Bot.peak = 0
    ext = External(lambda: Bot(log), workers=2)
    res = rf.Arena(GAME, REWARD, [ext, MINIMAX], n_slots=4, start=RandomStartingMoves(2), seed=2).play(6)
    assert len(log) == 6 and all(b.closed == 1 for b in log)
    assert Bot.peak <= 2  # at most `workers` agents live at once
    by_actions = sorted(tuple(b.seen) for b in log)
    assert by_actions == sorted(tuple(g.actions) for g in res.games)  # opening included, in order
    for b in log:
        for v in b.views:
            assert v.legal_actions and v.obs.shape == (2, 6, 7) and v.obs.dtype == np.float32
            assert v.ticks >= 2 and v.agent in (0, 1)


@pytest.mark.parametrize(
    ("bot", "error", "message"),
    [
        ({"fail_act": True}, RuntimeError, r"external contestant 0 failed in game \d+: 'boom'"),
        ({"illegal": True}, RuntimeError, r"external contestant chose illegal action 99 in game \d+"),
        ({"fail_note": True}, RuntimeError, r"external contestant on_action failed in game \d+: pipe closed"),
        ({"fail_close": True}, RuntimeError, r"external contestant 0 failed finishing game \d+: close failed"),
        ({"act_delay": 2.0}, TimeoutError, r"external contestant 0 exceeded its 0.2s move timeout in game \d+"),
    ],
)
def test_external_failures_fail_the_run_and_close_every_agent(bot, error, message):
    log: list[Bot] = []
    ext = External(lambda: Bot(log, **bot), workers=2, timeout=0.2 if "act_delay" in bot else None)
    start = RandomStartingMoves(1) if "fail_note" in bot else None
    with pytest.raises(error, match=message):
        rf.Arena(GAME, REWARD, [ext, MINIMAX], n_slots=2, start=start).play(4)
    assert log and all(b.closed == 1 for b in log)


def test_external_factory_failure():
    def factory():
        raise OSError("no engine binary")

    with pytest.raises(RuntimeError, match="external contestant 1 factory failed for game 0: no engine binary"):
        rf.Arena(GAME, REWARD, [MINIMAX, External(factory)]).play(2)


def test_hung_close_times_out():
    class Hangs:
        def act(self, view):
            return view.legal_actions[0]

        def close(self):
            time.sleep(1.0)

    with pytest.raises(TimeoutError, match=r"external contestant 0 exceeded its timeout finishing game \d+"):
        rf.Arena(GAME, REWARD, [External(Hangs, timeout=0.1), MINIMAX], n_slots=2).play(2)


def test_batch_delay_with_external_is_accepted():
    log: list[Bot] = []
    res = rf.Arena(GAME, REWARD, [MCTS, External(lambda: Bot(log))], n_slots=2, batch_delay=0.001).play(2)
    assert len(res.games) == 2 and all(b.closed == 1 for b in log)


def _two_agent_sequential(name):
    env = rf.Env(rf.games.make(name))
    return env.num_agents() == 2 and len(env.active_agents()) == 1


# Chess, Backgammon and Leduc compile their engine kernels for this test only in the default tier
# (their own engine tests are slow-marked): the slow tier plays them.
_SLOW_ARENA_GAMES = {"backgammon", "chess", "leduc_poker"}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_ARENA_GAMES else n
        for n in rf.games.registered()
        if _two_agent_sequential(n)
    ],
)
def test_every_two_agent_sequential_game_plays(name):
    """Generic over the game contract: a zero-search contestant against an external random
    agent, with random openings, on every registered 2-agent sequential game."""
    game = rf.games.make(name)
    n_actions = game.action_space().n

    def q(obs):
        return np.zeros((obs.shape[0], 1, n_actions), np.float32)

    class Random:
        def __init__(self):
            self.rng = np.random.default_rng(0)

        def act(self, view):
            return int(self.rng.choice(view.legal_actions))

    start = RandomStartingMoves(1)
    arena = rf.Arena(game, rf.Reward(), [(rf.policies.EpsilonGreedyQ(epsilon=0.5), q, 1.0), External(Random)], start=start)
    res = arena.play(4)
    for g in res.games:
        env = rf.Env(game, rf.Reward())
        snap, opening = start.generate(game, rf.Reward(), _mix64(0, g.opening_id, 2))
        env.restore(snap)
        assert g.actions[:1] == opening
        pay = [0.0, 0.0]
        for a in g.actions[1:]:
            env.step({env.active_agents()[0]: a})
            pay = [p + r for p, r in zip(pay, env.rewards, strict=True)]
        assert env.done() and g.length == env.ticks == len(g.actions)
        assert g.payoffs == tuple(pay[g.seats.index(c)] for c in range(2))


def test_public_surface():
    assert rf.Arena is rf.arena.Arena and rf.starts.RandomStartingMoves is RandomStartingMoves
    for name in ("Arena", "arena", "gym", "starts"):
        assert name in rf.__all__ and hasattr(rf, name)
    original = ["Arena", "ArenaResult", "External", "GameResult", "View"]
    additions = ["GateResult", "Tournament", "TournamentResult", "gate"]  # issue 32, beyond 0.4.0
    assert sorted(rf.arena.__all__) == sorted(original + additions)
    assert sorted(rf.gym.__all__) == ["aec_env", "gymnasium_env", "make", "parallel_env"]
    assert rf.Arena.__module__ == "reinfors.arena" and GameResult.__module__ == "reinfors.arena"


@pytest.mark.parametrize("name", rf.games.registered())
def test_arena_acceptance_agrees_with_the_catalogue(name):
    """Arena takes exactly the games the catalogue lists as 2-player (default count) sequential."""
    from reinfors import catalog

    info = catalog.GAMES[name]
    game = rf.games.make(name)
    n = rf.Env(game).num_agents()  # the default player count (hold'em defaults to 6 seats)
    lo, _, hi = info.players.partition("-")
    assert int(lo) <= n <= int(hi or lo), (name, n, info.players)
    expected = n == 2 and info.dynamics == "Sequential"
    try:
        rf.Arena(game, rf.Reward(), [MINIMAX, MCTS])
    except ValueError as e:
        assert not expected and str(e) == "Arena v1 plays 2-agent sequential games", (name, e)
    else:
        assert expected, name
