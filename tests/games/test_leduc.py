"""Leduc poker: rules by hand, every terminal betting history, hand ranking, privacy, snapshots,
and the OpenSpiel ``leduc_poker`` oracle on seeded random playouts."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import reinfors as rf
from reinfors.jit.games import leduc_poker as L
from reinfors.testing import check_game

F, C, R = 0, 1, 2
SYM = {"f": F, "c": C, "r": R}

# Round sequences: those that close the round (call) and those that end the hand (fold).
CLOSING = ["cc", "rc", "crc", "rrc", "crrc"]
FOLDING = ["rf", "crf", "rrf", "crrf"]


def _env(cards, reward=None):
    env = rf.Env(rf.games.LeducPoker(), reward if reward is not None else rf.Reward())
    env._state[L.CARD0 : L.CARD0 + 2] = cards  # force the deal (test helper)
    return env


def _play(cards, public, r1, r2=""):
    """Play round strings; force ``public`` once round 1 closes.  Returns (env, last events)."""
    env = _env(cards)
    events = []
    for ch in r1:
        events = env.step({env.active_agents()[0]: SYM[ch]})
    if r2:
        assert env.state()["round"] == 1
    if env.state()["round"] == 1:
        env._state[L.PUB] = public
    for ch in r2:
        events = env.step({env.active_agents()[0]: SYM[ch]})
    return env, events


def _contribution(rounds, folded):
    """Independent accounting: ante 1, each raise adds its size (2, then 4) for both callers; a
    folder is short of the last raise."""
    total = 1
    for k, seq in enumerate(rounds):
        raises = seq.count("r")
        total += (2 if k == 0 else 4) * (raises - (1 if folded and k == len(rounds) - 1 else 0))
    return total


def _strength(card, public):
    return (10 if card // 2 == public // 2 else 0) + card // 2


def test_initial_state_and_actions():
    env = rf.Env(rf.games.LeducPoker(), rf.Reward(), seed=0)
    assert env.state() == {"cards": b"\x05\x02", "public": None, "round": 0, "history": [b"", b""], "done": False}
    assert env.active_agents() == [0]
    assert env.legal_actions(0) == [C, R] and env.legal_actions(1) == []
    env.step({0: R})
    assert env.legal_actions(1) == [F, C, R]
    env.step({1: R})
    assert env.legal_actions(0) == [F, C]  # two raises: capped
    env.step({0: C})
    st = env.state()
    assert st["round"] == 1 and st["public"] == 0 and env.active_agents() == [0]  # seed 0's public card
    assert env.legal_actions(0) == [C, R]


@pytest.mark.parametrize("r1", CLOSING + FOLDING)
def test_every_terminal_history_pays_the_independent_accounting(r1):
    cards, public = [5, 2], 0  # seat 0 holds a king, seat 1 a queen, public jack
    seconds = CLOSING + FOLDING if r1 in CLOSING else [""]
    for r2 in seconds:
        env, events = _play(cards, public, r1, r2)
        assert env.done(), (r1, r2)
        rounds = [r1] if not r2 else [r1, r2]
        last = rounds[-1]
        if last in FOLDING:
            folder = (len(last) - 1) % 2
            stake = _contribution(rounds, folded=True)
            want = [stake, -stake] if folder == 1 else [-stake, stake]
        else:
            stake = _contribution(rounds, folded=False)
            want = [stake, -stake]  # king beats queen, no pair
        assert events == [(0, float(want[0])), (1, float(want[1]))], (r1, r2)
        assert sum(d for _, d in events) == 0.0
        st = env.state()
        assert st["history"] == [bytes(SYM[c] for c in r1), bytes(SYM[c] for c in r2)]
        assert env.active_agents() == [] and env.legal_actions(0) == [] and env.legal_actions(1) == []


def test_biggest_pot_is_13_chips():
    _, events = _play([5, 2], 0, "crrc", "crrc")
    assert events == [(0, 13.0), (1, -13.0)]


def test_showdown_ranking_over_every_deal():
    """Pair with the public card wins, else the higher rank; equal ranks split (suits never matter)."""
    for c0, c1, pub in itertools.permutations(range(6), 3):
        _, events = _play([c0, c1], pub, "cc", "cc")
        s0, s1 = _strength(c0, pub), _strength(c1, pub)
        want = 0.0 if s0 == s1 else (1.0 if s0 > s1 else -1.0)
        assert events == [(0, want), (1, -want)], (c0, c1, pub)
    assert _play([0, 5], 1, "cc", "cc")[1] == [(0, 1.0), (1, -1.0)]  # pair of jacks beats a king
    assert _play([4, 5], 0, "cc", "cc")[1] == [(0, 0.0), (1, 0.0)]  # two kings split


def test_rewards_scale_the_chip_delta():
    env = _env([0, 4], rf.Reward(scale=0.5))
    env.step({0: R})
    events = env.step({1: F})
    assert events == [(0, 1.0), (1, -1.0)] and env.rewards == [0.5, -0.5]


def test_observation_and_key_layout():
    env, _ = _play([5, 2], 0, "rrc", "r")
    obs = env.observe(0).reshape(-1)
    assert obs.shape == (21,) and obs.dtype == np.float32
    want = np.zeros(21, np.float32)
    want[5] = 1.0  # own card
    want[6 + 0] = 1.0  # public card
    want[12] = 1.0  # second round
    want[13:16] = np.float32([1.0, 1.0, 2 / 3])
    want[17] = 1.0
    assert obs.tolist() == want.tolist()
    assert env.information_state_key(0) == bytes([0, 5, 0, 3, 2, 2, 1, 1, 2])
    assert env.information_state_key(1) == bytes([1, 2, 0, 3, 2, 2, 1, 1, 2])
    fresh = _env([3, 1])
    assert fresh.information_state_key(1) == bytes([1, 1, 255, 0, 0])
    with pytest.raises(ValueError, match="agent 2 out of range"):
        fresh.information_state_key(2)


def test_no_observation_shows_the_other_private_card():
    """Changing only the opponent's card never changes an agent's observation or key."""
    for mine, pub in [(0, 3), (5, 4), (2, 2 ^ 1)]:
        for r1, r2 in [("", ""), ("r", ""), ("rc", "cr"), ("crrc", "rc"), ("rf", "")]:
            seen = set()
            for other in range(6):
                if other in (mine, pub):
                    continue
                env, _ = _play([mine, other], pub, r1, r2) if r1 else (_env([mine, other]), [])
                seen.add((env.observe(0).tobytes(), env.information_state_key(0)))
            assert len(seen) == 1, (mine, pub, r1, r2)


def test_chips_conserved_and_check_game():
    stats = check_game(rf.games.LeducPoker(), episodes=30, max_steps=40, batch=16, seed=3)
    assert stats["finished"] > 0
    rng = np.random.default_rng(0)
    env = rf.Env(rf.games.LeducPoker(), rf.Reward(), seed=11)
    for _ in range(300):
        total = 0.0
        while not env.done():
            a = env.active_agents()[0]
            events = env.step({a: int(rng.choice(env.legal_actions(a)))})
        total = sum(d for _, d in events)
        assert total == 0.0 and len(events) == 2
        assert max(abs(d) for _, d in events) <= 13.0
        env.reset()


def _snap_with(env, **words):
    snap = env.snapshot()
    row = np.frombuffer(snap._payload, "<i8", offset=1).copy()
    for k, v in words.items():
        row[getattr(L, k)] = v
    done = bool(row[L.DONE])
    return rf.EnvSnapshot(snap.fingerprint, snap._rng, done, snap._ticks, bytes([1]) + row.astype("<i8").tobytes())


def test_snapshot_roundtrip_and_rejections():
    env, _ = _play([5, 2], 0, "rc", "r")
    snap = env.snapshot()
    other = rf.Env(rf.games.LeducPoker(), rf.Reward(), seed=9)
    other.restore(rf.EnvSnapshot.from_bytes(snap.to_bytes()))
    assert other.state() == env.state() and other.observe(1).tobytes() == env.observe(1).tobytes()
    cases = [
        ({"CARD0": 2}, "a card appears twice"),
        ({"PUB": 5}, "a card appears twice"),
        ({"PUB": 6}, "card id 6 out of range"),
        ({"PUB": -1}, "history contains an illegal action"),
        ({"H2": 3}, "malformed action history"),
        ({"L1": 5}, "malformed action history"),
        ({"RAISES": 0}, "bookkeeping words disagree with the history"),
        ({"CON0": 8}, "bookkeeping words disagree with the history"),
    ]
    for words, message in cases:
        with pytest.raises(ValueError, match=re.escape(f"invalid snapshot state: {message}")):
            other.restore(_snap_with(env, **words))
    assert other.state() == env.state()  # rejected snapshots leave the Env unchanged
    start = _env([1, 4])
    with pytest.raises(ValueError, match="public card revealed before round 1 closed"):
        start.restore(_snap_with(start, PUB=0))
    with pytest.raises(ValueError, match="both cards must be dealt"):
        start.restore(_snap_with(start, DEALT=1))
    folded, _ = _play([1, 4], 0, "rf")
    with pytest.raises(ValueError, match="history terminality disagrees with envelope done false"):
        start.restore(_snap_with(folded, DONE=0))
    with pytest.raises(ValueError, match="actions continue past a closed round"):
        start.restore(_snap_with(folded, L2=1, H2=1))
    open_r2, _ = _play([1, 4], 0, "cc")
    with pytest.raises(ValueError, match="live round-2 state without the public card"):
        start.restore(_snap_with(open_r2, PUB=-1))


# -- OpenSpiel oracle ---------------------------------------------------------------------------


def _parse_isstring(s):
    fields = dict(re.findall(r"\[([A-Za-z0-9 ]+): ([^\]]*)\]", s))
    rounds = [[int(x) for x in fields.get(f"Round{k}", "").split()] for k in (1, 2)]
    return fields, rounds


def test_openspiel_oracle_on_seeded_playouts():
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("leduc_poker")
    rng = np.random.default_rng(7)
    compared = 0
    for seed in range(60):
        env = rf.Env(rf.games.LeducPoker(), rf.Reward(), seed=seed)
        for _ in range(4):
            st = env.state()
            s = game.new_initial_state()
            s.apply_action(st["cards"][0])
            s.apply_action(st["cards"][1])
            while not env.done():
                if s.is_chance_node():
                    pub = env.state()["public"]
                    assert pub is not None and dict(s.chance_outcomes())[pub] == pytest.approx(1 / 4)
                    s.apply_action(pub)
                a = env.active_agents()[0]
                assert s.current_player() == a
                assert env.legal_actions(a) == s.legal_actions()
                for agent in (0, 1):
                    fields, rounds = _parse_isstring(s.information_state_string(agent))
                    key = env.information_state_key(agent)
                    n1 = key[3]
                    assert [list(key[4 : 4 + n1]), list(key[5 + n1 :])] == rounds
                    assert int(fields["Private"]) == key[1]
                    tensor = np.asarray(s.information_state_tensor(agent))
                    obs = env.observe(agent).reshape(-1)
                    assert obs[:12].tolist() == tensor[2:14].tolist()  # private and public one-hots
                    money = [int(x) for x in fields["Money"].split()]
                    assert [100 - m for m in money] == env._state[L.CON0 : L.CON0 + 2].tolist()
                action = int(rng.choice(env.legal_actions(a)))
                events = env.step({a: action})
                s.apply_action(action)
                compared += 1
            assert s.is_terminal()
            assert [d for _, d in events] == s.returns()
            env.reset()
    assert compared > 500


# -- engine smoke ---------------------------------------------------------------------------------


def _linear(obs_size, width, seed=0):
    w = np.random.default_rng(seed).standard_normal((obs_size, width))
    return lambda obs: (np.asarray(obs, np.float32).reshape(len(obs), -1) @ w).astype(np.float32)


@pytest.mark.slow
def test_engine_dqn_and_ppo_collect():
    game = rf.games.LeducPoker()
    q = _linear(21, 3)
    b = rf.Engine(game, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), 16, seed=1).collect(
        200, lambda obs: q(obs).reshape(len(obs), 1, 3)
    )
    assert len(b.obs) >= 200 and set(np.unique(b.players)) == {0, 1}
    assert b.obs.shape[1:] == (21,)
    assert b.dones.sum() >= 1 and not b.can_bootstrap[b.dones].any()
    assert all(abs(sum(ep[0])) < 1e-9 for ep in b.telemetry["episodes"])  # zero-sum chips
    # every recorded action was legal for the recorded observation's actor
    off = b.legal_offsets
    assert all(b.actions[i] in b.legal_ids[off[i] : off[i + 1]] for i in range(len(b.actions)))
    # Leduc's legal sets have 2 (call/raise or fold/call) or 3 actions
    assert set(np.diff(off).tolist()) <= {2, 3}
    pol, val = _linear(21, 3, 1), _linear(21, 1, 2)
    p = rf.Engine(game, None, rf.policies.Ppo(), rf.learners.Ppo(), 16, seed=2).collect(
        200, lambda obs: (pol(obs), val(obs)[:, 0])
    )
    assert len(p.obs) >= 200 and np.isfinite(p.advantages).all()


@pytest.mark.parametrize(
    "policy,learner,label",
    [
        ("AlphaZero", "AlphaZero", "AlphaZero"),
        ("Mcts", "TreeStrap", "Mcts"),
        ("SelectiveExpectimax", "TreeStrap", "SelectiveExpectimax"),
    ],
)
def test_search_policies_are_refused_as_clairvoyant(policy, learner, label):
    with pytest.raises(ValueError, match=f"the {label} policy searches the true state and would be clairvoyant"):
        rf.Engine(rf.games.LeducPoker(), None, getattr(rf.policies, policy)(), getattr(rf.learners, learner)(), 4)
