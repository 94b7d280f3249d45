"""The Arena's kernel path (``reinfors/_runtime/match.py``: games as slots, pooled searches,
batch stepping) against its general scheduler (``arena._Run``: ``choose`` + ``Env.step``):
the same games, openings, payoffs and seeds, for deterministic AND sampling contestants (both
paths hand ``choose`` the same ordered batches and seeds).

Compositions are test_arena.py's (Connect4 Minimax(depth=2), Mcts(num_simulations=16) and
EpsilonGreedyQ), so only the match kernels compile here.
"""

from __future__ import annotations

import numpy as np
import pytest

import reinfors as rf
from reinfors.arena import Arena, External
from reinfors.starts import RandomStartingMoves

GAME = rf.games.Connect4()
REWARD = rf.Reward(win=1.0, loss=-1.0, draw=0.0)


def zero(obs):
    return np.zeros((obs.shape[0], 1, 7), np.float32)


def planes(obs):  # elementwise: row-independent bits
    q = (obs[:, 0:7] - obs[:, 42:49]) * np.float32(0.25) + obs[:, 35:42] * np.float32(0.125)
    return q[:, None, :].astype(np.float32)


def two_heads(obs):
    q = planes(obs)
    return np.concatenate([q, -q], axis=1)


MINIMAX = (rf.policies.Minimax(depth=2), zero, 1.0)
MCTS = (rf.policies.Mcts(num_simulations=16), zero, 1.0)
SAMPLED = (rf.policies.Mcts(num_simulations=16, temperature=1.0), planes, 1.0)
GREEDY = (rf.policies.EpsilonGreedyQ(epsilon=0.0), planes, 1.0)
NOISY = (rf.policies.EpsilonGreedyQ(n_heads=2, epsilon=0.3), two_heads, 1.0)


def _games(res):
    return [(g.game_id, g.opening_id, g.seats, g.payoffs, g.length, g.actions) for g in res.games]


def _both(contestants, n_games, **kw):
    arena = Arena(GAME, REWARD, contestants, **kw)
    assert arena._kernel_path()
    fast = arena.play(n_games)
    arena._kernel_path = lambda: False  # the general scheduler, same arena
    return fast, arena.play(n_games)


@pytest.mark.parametrize(
    ("contestants", "n_games", "kw"),
    [
        ([MINIMAX, MCTS], 12, {"n_slots": 5, "start": RandomStartingMoves(2), "seed": 7}),
        ([SAMPLED, MINIMAX], 6, {"n_slots": 3, "seed": 11}),
        ([GREEDY, NOISY], 20, {"n_slots": 16, "start": RandomStartingMoves(3), "seed": 2**64 - 1}),
        ([NOISY, MCTS], 8, {"n_slots": 1, "seed": 3}),
    ],
    ids=["minimax-mcts", "sampled-mcts", "greedy-noisy", "one-slot"],
)
def test_kernel_path_plays_the_general_paths_games(contestants, n_games, kw):
    fast, general = _both(contestants, n_games, **kw)
    assert _games(fast) == _games(general)
    assert [g.game_id for g in fast.games] == list(range(n_games))
    assert fast.payoff(0) == general.payoff(0)


def test_kernel_path_is_repeatable_and_reuses_its_runtimes():
    from reinfors._runtime import match

    a = Arena(GAME, REWARD, [MINIMAX, MCTS], n_slots=4, start=RandomStartingMoves(2), seed=5)
    first = a.play(8)
    held = dict(match._POOL)
    assert len(held) >= 2  # both searched contestants' Choosers went back to the pool
    again = Arena(GAME, REWARD, [MINIMAX, MCTS], n_slots=4, start=RandomStartingMoves(2), seed=5).play(8)
    assert _games(first) == _games(again)
    assert all(match._POOL.get(k) is v for k, v in held.items())


def test_wrapped_policies_and_external_seats_take_the_general_path():
    class Wrapped:
        def __init__(self, policy):
            self.policy = policy

        def choose(self, envs, infer, seed=0, plies=None, *, gamma):
            return self.policy.choose(envs, infer, seed=seed, plies=plies, gamma=gamma)

    class Centre:
        def act(self, view):
            return min(view.legal_actions, key=lambda c: (abs(c - 3), c))

    assert not Arena(GAME, REWARD, [(Wrapped(MINIMAX[0]), zero, 1.0), MCTS])._kernel_path()
    assert not Arena(GAME, REWARD, [MINIMAX, External(Centre)])._kernel_path()


def test_kernel_path_errors_match_the_general_paths():
    def broken(obs):
        raise KeyError("model offline")

    for path in (True, False):
        arena = Arena(GAME, REWARD, [MINIMAX, (MCTS[0], broken, 1.0)], n_slots=2)
        arena._kernel_path = lambda p=path: p
        with pytest.raises(KeyError, match="model offline"):
            arena.play(2)
        arena = Arena(GAME, None, [MINIMAX, MCTS], n_slots=2)
        arena._kernel_path = lambda p=path: p
        with pytest.raises(ValueError, match="choose needs terminal values"):
            arena.play(2)
    # a failed match hands nothing back: the next one still plays the same games
    fast, general = _both([MINIMAX, (MCTS[0], zero, 1.0)], 4, n_slots=2, seed=1)
    assert _games(fast) == _games(general)


# -- deterministic contestants: the phase scheduler (match.MatchDriver._play_phases) ---------------

AZ = (rf.policies.AlphaZero(num_simulations=8, temperature=0.0, noise=None), None, 1.0)


def pv(obs):  # elementwise logits and values: row-independent bits
    q = planes(obs)[:, 0, :]
    return q, np.ascontiguousarray(q[:, 3] - q[:, 2])


def test_deterministic_predicate():
    import types

    from reinfors._runtime.match import deterministic

    d = rf.Env(GAME, REWARD)._def
    assert deterministic(MINIMAX[0], d) and deterministic(MCTS[0], d) and deterministic(GREEDY[0], d)
    assert deterministic(AZ[0], d)
    assert not deterministic(SAMPLED[0], d)  # temperature > 0 samples from the choose stream
    assert not deterministic(NOISY[0], d)  # two heads and exploration
    assert not deterministic(rf.policies.AlphaZero(num_simulations=8, temperature=0.0), d)  # root noise
    assert not deterministic(rf.policies.Ppo(), d)
    dice = types.SimpleNamespace(has_chance=True)  # a game with chance: its draws come from the streams
    assert not deterministic(MINIMAX[0], dice)


def test_phases_play_the_general_paths_games_in_fewer_calls():
    calls = {"fast": [0, 0], "general": [0, 0]}
    which = ["fast"]

    def counted(fn, seat):
        def infer(obs):
            calls[which[0]][seat] += 1
            return fn(obs)

        return infer

    contestants = [(AZ[0], counted(pv, 0), 1.0), (MCTS[0], counted(planes, 1), 1.0)]
    arena = Arena(GAME, REWARD, contestants, n_slots=8, start=RandomStartingMoves(2), seed=9)
    fast = arena.play(16)
    which[0] = "general"
    arena._kernel_path = lambda: False
    general = arena.play(16)
    assert _games(fast) == _games(general)
    # every phase searches all open games of its contestant: about half the callback calls
    assert sum(calls["fast"]) < 0.7 * sum(calls["general"])


def test_phase_openings_equal_generate_and_its_error():
    from reinfors._runtime.match import MatchDriver
    from reinfors.arena import _mix64

    start = RandomStartingMoves(5, max_retries=3)
    probe = rf.Env(GAME, REWARD)
    driver = MatchDriver(GAME, REWARD, [MINIMAX, MCTS], 4, start, 123, _mix64, probe, True)
    states, chance, acts, lens = driver._openings(6)
    for pair in range(6):
        snap, actions = start.generate(GAME, REWARD, _mix64(123, pair, 2))
        probe.restore(snap)
        assert states[pair].tolist() == probe._state.tolist()
        assert int(chance[pair]) == int(probe._rng[0])
        assert acts[pair, : lens[pair]].tolist() == actions
    # a 42-move Connect4 opening always fills the board: generate's own error
    full = MatchDriver(GAME, REWARD, [MINIMAX, MCTS], 4, RandomStartingMoves(42, 2), 0, _mix64, probe, True)
    with pytest.raises(ValueError, match="could not draw a live 42-move opening in 2 attempts"):
        full._openings(1)


def test_pooled_rounds_take_any_valid_output_and_name_bad_ones():
    def wide(obs):  # float64, not C-contiguous: the validator's path
        return np.asfortranarray(planes(obs).astype(np.float64))

    base = Arena(GAME, REWARD, [MINIMAX, MCTS], n_slots=4, seed=4).play(4)
    other = Arena(GAME, REWARD, [(MINIMAX[0], wide, 1.0), (MCTS[0], wide, 1.0)], n_slots=4, seed=4)
    zeros = Arena(GAME, REWARD, [(MINIMAX[0], lambda o: wide(o) * 0.0, 1.0), MCTS], n_slots=4, seed=4)
    assert _games(zeros.play(4)) == _games(base)
    same = Arena(GAME, REWARD, [(MINIMAX[0], planes, 1.0), (MCTS[0], planes, 1.0)], n_slots=4, seed=4)
    assert _games(other.play(4)) == _games(same.play(4))

    def nan_q(obs):
        q = zero(obs)
        q[-1, 0, 0] = np.nan
        return q

    def nan_value(obs):
        logits, values = pv(obs)
        values[0] = np.inf
        return logits, values

    for bad, msg in [(nan_q, "infer outputs must contain only finite values"),
                     (nan_value, "AlphaZero infer outputs must contain only finite values")]:  # fmt: skip
        policy = AZ[0] if bad is nan_value else MCTS[0]
        arena = Arena(GAME, REWARD, [MINIMAX, (policy, bad, 1.0)], n_slots=2)
        for path in (True, False):
            arena._kernel_path = lambda p=path: p
            with pytest.raises(ValueError, match=msg):
                arena.play(2)
    # the failed matches handed nothing back: the next one plays the same games again
    assert _games(Arena(GAME, REWARD, [MINIMAX, MCTS], n_slots=4, seed=4).play(4)) == _games(base)


# -- a phase's searches split over threads (match.MatchDriver._choose_split) -------------------------


def _watched(fn, seen):
    """``fn`` recording the threads it was called on and whether two calls ever overlapped."""
    import threading

    lock, active = threading.Lock(), [0]

    def infer(obs):
        with lock:
            active[0] += 1
            seen["max_active"] = max(seen.get("max_active", 0), active[0])
        seen.setdefault("threads", set()).add(threading.current_thread().name)
        try:
            return fn(obs)
        finally:
            with lock:
                active[0] -= 1

    return infer


@pytest.fixture
def cpu_callbacks(monkeypatch):
    """Every callback judged a CPU one (split for) however loaded the machine: a thread
    descheduled mid-call reads as idle wall time, the mark of an accelerator-like callback."""
    from reinfors._runtime.firing import CallCost

    monkeypatch.setattr(CallCost, "cpu_like", lambda self: True)


def test_threaded_phases_play_the_general_paths_games(cpu_callbacks):
    """Phases of 64 games and more split over two threads (parts of MIN_PART = 32 games and
    more): the same games as the general scheduler and as one thread; each callback is called
    on the match's helper thread too, never twice at once."""
    from reinfors._runtime.match import MIN_PART

    seen: list[dict] = [{}, {}]
    contestants = [(AZ[0], _watched(pv, seen[0]), 1.0), (MCTS[0], _watched(planes, seen[1]), 1.0)]
    n = 4 * MIN_PART  # phases of 2 parts while 64 games or more are open
    kw = {"n_slots": n, "start": RandomStartingMoves(2), "seed": 12}
    threaded = Arena(GAME, REWARD, contestants, n_threads=2, **kw).play(n)
    for s in seen:
        assert any(name.startswith("reinfors-arena") for name in s["threads"]), s["threads"]
        assert s["max_active"] == 1
    one = Arena(GAME, REWARD, contestants, n_threads=1, **kw).play(n)
    arena = Arena(GAME, REWARD, contestants, n_threads=2, **kw)
    arena._kernel_path = lambda: False
    general = arena.play(n)
    assert _games(threaded) == _games(one) == _games(general)


def test_helper_runtimes_hold_a_share_of_the_slots(cpu_callbacks):
    """Four threads over 256 slots: each helper's choose runtime holds a quarter of the slots
    (not half: the helpers together hold about one match's), and the games are one thread's."""
    from reinfors._runtime import match

    match._POOL.clear()
    kw = {"n_slots": 256, "seed": 1}
    four = Arena(GAME, REWARD, [MINIMAX, (MCTS[0], planes, 1.0)], n_threads=4, **kw).play(256)
    assert sorted({key[-1] for key in match._POOL}) == [64, 256]  # the capacity ends the pool key
    one = Arena(GAME, REWARD, [MINIMAX, (MCTS[0], planes, 1.0)], n_threads=1, **kw).play(256)
    assert _games(four) == _games(one)


def test_an_accelerator_like_callback_is_not_split():
    """A callback that leaves its thread idle (a GPU's wait, here a sleep) would pay its fixed
    cost once per part: the match measures its first calls and keeps one search per phase."""
    import time

    def gpu_like(obs):
        time.sleep(0.0004)
        return planes(obs)

    seen: list[dict] = [{}, {}]
    contestants = [(MINIMAX[0], _watched(planes, seen[0]), 1.0), (MCTS[0], _watched(gpu_like, seen[1]), 1.0)]
    Arena(GAME, REWARD, contestants, n_slots=128, seed=3, n_threads=2).play(128)
    assert not any(name.startswith("reinfors-arena") for name in seen[1]["threads"]), seen[1]["threads"]


def test_a_callback_error_on_a_helper_thread_ends_the_match_and_the_next_one_plays(cpu_callbacks):
    from reinfors._runtime.match import MIN_PART

    calls = [0]

    def flaky(obs):
        import threading

        calls[0] += 1
        if threading.current_thread().name.startswith("reinfors-arena") and calls[0] > 3:
            raise KeyError("helper's model offline")
        return planes(obs)

    n = 4 * MIN_PART
    kw = {"n_slots": n, "seed": 5, "n_threads": 2}
    with pytest.raises(KeyError, match="helper's model offline"):
        Arena(GAME, REWARD, [MINIMAX, (MCTS[0], flaky, 1.0)], **kw).play(n)
    calls[0] = -(10**9)  # no more failures
    again = Arena(GAME, REWARD, [MINIMAX, (MCTS[0], flaky, 1.0)], **kw).play(n)
    one = Arena(GAME, REWARD, [MINIMAX, (MCTS[0], planes, 1.0)], **{**kw, "n_threads": 1}).play(n)
    assert _games(again) == _games(one)


@pytest.mark.parametrize(
    ("n_threads", "error", "match"),
    [
        ("2", TypeError, "n_threads must be an int"),
        (True, TypeError, "n_threads must be an int"),
        (2.0, TypeError, "n_threads must be an int"),
        (-1, ValueError, "n_threads must be between 0"),
        (513, ValueError, "n_threads must be between 0"),
    ],
)
def test_n_threads_is_validated(n_threads, error, match):
    with pytest.raises(error, match=match):
        Arena(GAME, REWARD, [MINIMAX, MCTS], n_threads=n_threads)
