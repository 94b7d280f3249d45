"""Texas Hold'em: hand evaluator, betting rules, side pots, chip conservation, hidden cards,
snapshots, conformance and engine smoke tests.  (Bit-exactness against 0.4.0 lives in
``tests/differential/test_holdem_vs_original.py``; OpenSpiel in ``test_holdem_openspiel``.)"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import reinfors as rf
from reinfors.jit.games import hand_eval as H
from reinfors.jit.games import texas_holdem as T

# ---------------------------------------------------------------------------------------------
# Hand evaluator vs a brute-force reference
# ---------------------------------------------------------------------------------------------


def _ref5(cards):
    """Reference rank of exactly five cards: (category, tie-break ranks), higher is better."""
    ranks = sorted((c // 4 for c in cards), reverse=True)
    suits = {c % 4 for c in cards}
    counts = {r: ranks.count(r) for r in set(ranks)}
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    flush = len(suits) == 1
    uniq = sorted(set(ranks), reverse=True)
    top = None
    if len(uniq) == 5 and uniq[0] - uniq[4] == 4:
        top = uniq[0]
    elif uniq == [12, 3, 2, 1, 0]:
        top = 3
    if top is not None and flush:
        return (8, (top,))
    if groups[0][1] == 4:
        return (7, (groups[0][0], groups[1][0]))
    if groups[0][1] == 3 and groups[1][1] == 2:
        return (6, (groups[0][0], groups[1][0]))
    if flush:
        return (5, tuple(ranks))
    if top is not None:
        return (4, (top,))
    if groups[0][1] == 3:
        return (3, tuple(r for r, _ in groups))
    if groups[0][1] == 2 and groups[1][1] == 2:
        return (2, tuple(r for r, _ in groups))
    if groups[0][1] == 2:
        return (1, tuple(r for r, _ in groups))
    return (0, tuple(ranks))


def _ref_best(cards):
    return max(_ref5(c) for c in itertools.combinations(cards, 5))


def _eval(hands, n):
    arr = np.asarray(hands, np.int64).reshape(len(hands), -1)
    out = np.zeros(len(hands), np.int64)
    H.eval_many(arr, n, out)
    return out


def test_evaluator_orders_random_hands_as_brute_force():
    rs = np.random.default_rng(7)
    for n in (5, 6, 7):
        hands = [rs.choice(52, n, replace=False) for _ in range(1500)]
        ours = _eval(hands, n)
        ref = [_ref_best(list(h)) for h in hands]
        for i in range(len(hands)):
            assert H.category(ours[i]) == ref[i][0], hands[i]
        # pairwise order over a shuffled pairing, and exact ties
        idx = rs.permutation(len(hands))
        for a, b in zip(idx[::2], idx[1::2], strict=False):
            assert (ours[a] > ours[b]) == (ref[a] > ref[b]), (hands[a], hands[b])
            assert (ours[a] == ours[b]) == (ref[a] == ref[b]), (hands[a], hands[b])


def _c(text):
    """Card id from e.g. 'As', 'Td', '2c' (suits c d h s = 0..3)."""
    return "23456789TJQKA".index(text[0]) * 4 + "cdhs".index(text[1])


CATEGORY_HANDS = [
    ("As Ks Qs Js Ts 2d 3c", H.STRAIGHT_FLUSH),
    ("5h 4h 3h 2h Ah Kd Kc", H.STRAIGHT_FLUSH),  # steel wheel
    ("9c 9d 9h 9s Ad 2c 3c", H.QUADS),
    ("Kc Kd Kh 2s 2d 2c 3c", H.FULL_HOUSE),  # two trips
    ("Kc Kd Kh 2s 2d 7c 3c", H.FULL_HOUSE),
    ("Ac 9c 7c 4c 2c Kd Kh", H.FLUSH),
    ("Ad 2c 3h 4s 5d Kd Kh", H.STRAIGHT),  # wheel
    ("Td Jc Qh Ks Ad 2d 2h", H.STRAIGHT),
    ("7d 7c 7h As 5d 3d 2h", H.TRIPS),
    ("7d 7c 5h 5s 3d 3c Ah", H.TWO_PAIR),  # three pairs
    ("7d 7c 5h Ks 3d 2c Ah", H.PAIR),
    ("7d 9c 5h Ks 3d 2c Ah", H.HIGH_CARD),
]


@pytest.mark.parametrize("text,cat", CATEGORY_HANDS, ids=[t for t, _ in CATEGORY_HANDS])
def test_every_category(text, cat):
    cards = [_c(t) for t in text.split()]
    got = _eval([cards], 7)[0]
    assert H.category(got) == cat
    assert _ref_best(cards)[0] == cat


def test_kicker_and_tie_details():
    # the wheel loses to a six-high straight; the best five of a three-pair hand keep the ace kicker
    hands = ["Ad 2c 3h 4s 5d Kd Qh", "6d 2c 3h 4s 5d Kd Qh"]
    wheel, six = _eval([[_c(t) for t in h.split()] for h in hands], 7)
    assert six > wheel
    a, b = _eval([[_c(t) for t in "7d 7c 5h 5s 3d 3c Ah".split()], [_c(t) for t in "7h 7s 5d 5c 3h 3s Kh".split()]], 7)
    assert a > b
    # board plays: identical strengths split
    x, y = _eval([[_c(t) for t in "2c 3d As Ks Qs Js Ts".split()], [_c(t) for t in "4c 5d As Ks Qs Js Ts".split()]], 7)
    assert x == y


# ---------------------------------------------------------------------------------------------
# Forged states: side pots by hand
# ---------------------------------------------------------------------------------------------


def _forged(n, stack, holes, board, tc, folded, button=0):
    """A state row at showdown: ``holes`` per seat (card text), ``tc`` total commitments."""
    params = T.make_params(num_players=n, stack=stack, small_blind=1, big_blind=2)
    state = np.zeros(T.state_size(params), np.int64)
    T.init(params, state)
    hole, stk, sc, tcw, fold, need, _, _ = T._offsets(n)
    state[T.BUTTON] = button
    state[T.DEAL] = n + 1
    state[T.STREET] = 3
    state[T.BOARDN] = 5
    for j, t in enumerate(board.split()):
        state[T.BOARD + j] = _c(t)
    for i in range(n):
        cs = sorted(_c(t) for t in holes[i].split())
        state[hole + 2 * i : hole + 2 * i + 2] = cs
        state[tcw + i] = tc[i]
        state[stk + i] = stack - tc[i]
        state[fold + i] = int(folded[i])
    return params, state


def _pay(n, stack, holes, board, tc, folded, button=0):
    params, state = _forged(n, stack, holes, board, tc, folded, button)
    amounts = np.zeros((n, 1), np.float64)
    T._payout(params, state, amounts)
    assert state[T.OVER] == 1
    return [float(x) for x in amounts[:, 0]]


BOARD = "2c 7d 9h Js 4s"  # no straight / flush possible with the holes below


def test_side_pots_three_players_short_all_in_wins_main_only():
    # seat 0 all-in for 50 with the best hand; seats 1, 2 put 100: main 150 to seat 0, side 100 to
    # the better of seats 1, 2.
    holes = ["Ac Ad", "Kc Kd", "Qc Qd"]
    got = _pay(3, 100, holes, BOARD, [50, 100, 100], [0, 0, 0])
    assert got == [100.0, 0.0, -100.0]
    # the short stack loses: seat 1 takes both pots
    got = _pay(3, 100, ["Qc Qd", "Ac Ad", "Kc Kd"], BOARD, [50, 100, 100], [0, 0, 0])
    assert got == [-50.0, 150.0, -100.0]


def test_side_pots_four_players_two_all_ins_and_a_folded_contributor():
    # levels 20 (seat 0), 60 (seat 1), 100 (seats 2, 3); seat 3 folded after putting 100 in.
    # main 4 x 20 = 80 -> seat 0 (best); side-1 3 x 40 = 120 -> seat 1 (second best);
    # side-2 2 x 40 = 80 -> seat 2 (only eligible live seat).
    holes = ["Ac Ad", "Kc Kd", "3c 3d", "Qc Qd"]
    got = _pay(4, 100, holes, BOARD, [20, 60, 100, 100], [0, 0, 0, 1])
    assert got == [60.0, 60.0, -20.0, -100.0]
    assert sum(got) == 0.0
    # seat 2 best: it takes every layer it is eligible for (all of them)
    holes = ["Kc Kd", "Qh Qs", "Ac Ad", "3c 3d"]
    got = _pay(4, 100, holes, BOARD, [20, 60, 100, 100], [0, 0, 0, 1])
    assert got == [-20.0, -60.0, 180.0, -100.0]


def test_split_pot_odd_chips_go_left_of_the_button():
    # seats 0 and 2 tie (board plays a straight); pot 23 = 11 + 11 + 1 odd chip; button 0 ->
    # seat order 1, 2, 0 -> seat 2 gets the odd chip.
    board = "Tc Jd Qh Ks Ad"
    holes = ["2c 3d", "4c 5d", "2d 3c"]
    got = _pay(3, 100, holes, board, [10, 3, 10], [0, 1, 0], button=0)
    assert got == [-10.0 + 11 + 0, -3.0, -10.0 + 12]
    got = _pay(3, 100, holes, board, [10, 3, 10], [0, 1, 0], button=2)  # order 0, 1, 2: seat 0
    assert got == [2.0, -3.0, 1.0]
    # three-way tie with two odd chips (seat 3 folded 2 in: pot 32), button 1: order 2, 3, 0, 1
    holes = ["2c 3d", "4c 5d", "2d 3c", "6c 7d"]
    got = _pay(4, 100, holes, board, [10, 10, 10, 2], [0, 0, 0, 1], button=1)
    assert got == [1.0, 0.0, 1.0, -2.0]


# ---------------------------------------------------------------------------------------------
# Rules through the Env
# ---------------------------------------------------------------------------------------------


def test_blinds_button_and_first_to_act():
    s = rf.Env(rf.games.TexasHoldem(), seed=0).state()
    assert s["button"] == 5 and s["to_act"] == 2 and s["street_committed"] == [5, 10, 0, 0, 0, 0]
    s = rf.Env(rf.games.TexasHoldem(num_players=2), seed=0).state()
    assert s["button"] == 1 and s["to_act"] == 1 and s["street_committed"] == [10, 5]  # button = SB
    assert s["hole"] == [bytes([12, 39]), bytes([0, 34])]


def test_fixed_limit_raise_sizes_cap_and_legality():
    env = rf.Env(rf.games.TexasHoldem(num_players=2), seed=0)
    seen = []
    while not env.done():
        a = env.active_agents()[0]
        legal = env.legal_actions(a)
        s = env.state()
        tocall = max(s["street_committed"]) - s["street_committed"][a]
        assert (0 in legal) == (tocall > 0)
        assert (2 in legal) == (s["raises"] < 4 and s["stacks"][a] > tocall)
        before = max(s["street_committed"])
        act = 2 if 2 in legal else 1
        env.step({a: act})
        s2 = env.state()
        if act == 2 and s2["street"] == s["street"]:
            seen.append((s["street"], max(s2["street_committed"]) - before))
    assert ("preflop", 10) in seen and ("flop", 10) in seen and ("turn", 20) in seen and ("river", 20) in seen


def _random_hand(env, rs):
    n = env.num_agents()
    stack = env.resolved_config()["game"]["stack"]
    events = []
    while not env.done():
        s = env.state()
        assert all(st + tc == stack for st, tc in zip(s["stacks"], s["total_committed"], strict=True))
        a = env.active_agents()[0]
        events = env.step({a: int(rs.choice(env.legal_actions(a)))})
    assert [e[0] for e in events] == list(range(n))
    return [e[1] for e in events]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_players": 2, "stack": 30},
        {"num_players": 3, "stack": 25, "small_blind": 3, "big_blind": 10},
        {"num_players": 6},
        {"num_players": 9, "stack": 40, "small_blind": 1, "big_blind": 2},
    ],
)
def test_chips_conserved_on_seeded_random_playouts(kwargs):
    game = rf.games.TexasHoldem(**kwargs)
    env = rf.Env(game, rf.Reward(scale=0.5), seed=3)
    rs = np.random.default_rng(11)
    stack = kwargs.get("stack", 200)
    for _ in range(600):
        deltas = _random_hand(env, rs)
        assert sum(deltas) == 0.0
        assert all(d >= -stack for d in deltas)
        assert env.rewards == [0.5 * d for d in deltas]
        s = env.state()
        assert s["done"] and s["street"] == "done"
        env.reset()


def test_observation_never_shows_another_seats_hole_cards():
    env = rf.Env(rf.games.TexasHoldem(num_players=4), seed=5)
    rs = np.random.default_rng(0)
    hole = T._offsets(4)[0]
    for _ in range(40):
        while not env.done():
            base = [env.observe(a) for a in range(4)]
            keys = [env.information_state_key(a) for a in range(4)]
            for a in range(4):
                assert sorted(np.flatnonzero(base[a][0].T.ravel())) == list(env.state()["hole"][a])
                # replace every other seat's hole cards with unused cards: a's view is unchanged
                dealt = set(int(c) for c in env._state[hole : hole + 8]) | set(env.state()["board"])
                spare = [c for c in range(52) if c not in dealt]
                saved = env._state.copy()
                k = 0
                for o in range(4):
                    if o != a:
                        env._state[hole + 2 * o : hole + 2 * o + 2] = sorted(spare[k : k + 2])
                        k += 2
                assert np.array_equal(env.observe(a), base[a])
                assert env.information_state_key(a) == keys[a]
                env._state[:] = saved
            a = env.active_agents()[0]
            env.step({a: int(rs.choice(env.legal_actions(a)))})
        env.reset()


def test_observation_planes_layout():
    env = rf.Env(rf.games.TexasHoldem(num_players=3), seed=0)
    o = env.observe(0)
    assert o.shape == (25, 4, 13) and o.dtype == np.float32
    assert o[2].max() == np.float32(15 / 600) and o[3].max() == np.float32(5 / 200)
    assert o[4].max() == np.float32(195 / 200) and o[5].min() == 1.0 and o[9].max() == 0.25
    assert o[10].max() == np.float32(2 / 3)
    env.step({2: 1})
    o = env.observe(0)
    assert o[15, 0, 0] == np.float32(((2 - 0) % 3 + 1) / 3) and o[16, 0, 0] == np.float32(2 / 3)


def test_info_key_is_compact_and_deterministic():
    game = rf.games.TexasHoldem(num_players=9)
    d = game._def
    env = rf.Env(game, seed=1)
    rs = np.random.default_rng(2)
    longest = 0
    while not env.done():
        k = env.information_state_key(0)
        assert k == env.information_state_key(0)
        longest = max(longest, len(k))
        a = env.active_agents()[0]
        env.step({a: int(rs.choice(env.legal_actions(a)))})
    assert longest <= d.max_info_key
    assert d.max_info_key < 600


def test_snapshot_roundtrip_and_rejected_payloads():
    env = rf.Env(rf.games.TexasHoldem(num_players=3), seed=4)
    env.step({env.active_agents()[0]: 2})
    snap = env.snapshot()
    want = env.state()
    env.step({env.active_agents()[0]: 0})
    env.restore(snap)
    assert env.state() == want
    blob = bytearray(snap.to_bytes())
    hole, stk, *_ = T._offsets(3)
    # corrupt one stack word (chips no longer conserved)
    payload_start = len(blob) - 8 * env._def.state_size
    off = payload_start + 8 * stk
    blob[off] ^= 1
    with pytest.raises(ValueError, match="invalid snapshot state: seat 0: chips not conserved"):
        env.restore(rf.EnvSnapshot.from_bytes(bytes(blob)))
    assert env.state() == want


def _patched(snap, size, edits):
    blob = bytearray(snap.to_bytes())
    start = len(blob) - 8 * size
    row = np.frombuffer(bytes(blob[start:]), "<i8").copy()
    for word, value in edits:
        row[word] = value
    blob[start:] = row.tobytes()
    return rf.EnvSnapshot.from_bytes(bytes(blob))


def test_restore_rejects_inconsistent_rows():
    env = rf.Env(rf.games.TexasHoldem(num_players=3), seed=2)
    snap = env.snapshot()
    size = env._def.state_size
    hole = T._offsets(3)[0]
    row = env._state
    cases = [
        ([(T.DEAL, 2)], "the deal must be complete"),
        ([(T.SETTLE, 1)], "a pending run-out settlement is transient"),
        ([(T.BOARDN, 3)], "3 board cards disagree with street 0"),
        ([(hole + 2, int(row[hole])), (hole + 3, 51 if row[hole] != 51 else 50)], "cards must be distinct"),
        ([(hole, int(row[hole + 1])), (hole + 1, int(row[hole]))], "hole cards must be stored in ascending order"),
        ([(T.RAISES, 5)], "raise counter / seat to act out of range"),
        ([(T.OVER, 1)], "hand end disagrees with envelope done false"),
    ]
    want = env.state()
    for edits, message in cases:
        with pytest.raises(ValueError, match="invalid snapshot state: " + message):
            env.restore(_patched(snap, size, edits))
        assert env.state() == want
    env.restore(_patched(snap, size, []))


@pytest.mark.parametrize("n", [2, 3, 6, 9])
def test_check_game(n):
    stats = rf.testing.check_game(rf.games.TexasHoldem(num_players=n, stack=40), episodes=12)
    assert stats["finished"] > 0


# ---------------------------------------------------------------------------------------------
# Engine smoke (6 players): Ppo + Ppo, EpsilonGreedyQ + Dqn; searches refused
# ---------------------------------------------------------------------------------------------


def _linear(obs_size, width, seed=0):
    return np.random.default_rng(seed).standard_normal((obs_size, width)) * 0.1


def test_engine_ppo_and_dqn_collect():
    game = rf.games.TexasHoldem()
    size = int(np.prod(game.observation_space().shape))
    w = _linear(size, 3)

    def ppo(obs):
        out = obs.astype(np.float64) @ w
        return out.astype(np.float32), out[:, 0].astype(np.float32)

    eng = rf.Engine(game, None, rf.policies.Ppo(), rf.learners.Ppo(), n_games=8, seed=1)
    b = eng.collect(300, ppo)
    assert b.obs.shape[1] == size and len(b.actions) >= 300
    assert set(np.unique(b.actions)) <= {0, 1, 2}

    def q(obs):
        return (obs.astype(np.float64) @ w)[:, None, :]

    eng = rf.Engine(game, None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), n_games=8, seed=1)
    b = eng.collect(300, q)
    assert len(b.actions) >= 300 and np.isfinite(b.rewards).all()


@pytest.mark.parametrize(
    "policy,learner",
    [
        (rf.policies.AlphaZero(), rf.learners.AlphaZero()),
        (rf.policies.Mcts(), rf.learners.TreeStrap()),
        (rf.policies.Minimax(), rf.learners.TreeStrap()),
        (rf.policies.SelectiveExpectimax(), rf.learners.TreeStrap()),
    ],
)
def test_search_policies_refused_as_clairvoyant(policy, learner):
    with pytest.raises(ValueError, match="searches the true state and would be clairvoyant"):
        rf.Engine(rf.games.TexasHoldem(), None, policy, learner, 4)


# ---------------------------------------------------------------------------------------------
# Oracle: OpenSpiel universal_poker with the same fixed-limit rules
# ---------------------------------------------------------------------------------------------


def _universal_poker(pyspiel, n, stack):
    """universal_poker configured as the original's betting: ACPC seat 0 is the seat left of
    the button (heads-up: the big blind), raises of 1 / 1 / 2 / 2 big blinds, 3 raises preflop
    on top of the blind and 4 postflop; ``stack`` deep enough that no all-in happens (ACPC
    limit games do not model stacks)."""
    blind = "10 5" if n == 2 else " ".join(["5", "10"] + ["0"] * (n - 2))
    first = "2 1 1 1" if n == 2 else "3 1 1 1"
    return pyspiel.load_game(
        "universal_poker",
        {
            "betting": "limit",
            "numPlayers": n,
            "numRounds": 4,
            "blind": blind,
            "raiseSize": "10 10 20 20",
            "firstPlayer": first,
            "maxRaises": "3 4 4 4",
            "numSuits": 4,
            "numRanks": 13,
            "numHoleCards": 2,
            "numBoardCards": "0 3 1 1",
            "stack": " ".join([str(stack)] * n),
        },
    )


@pytest.mark.parametrize("n", [2, 3, 4])
def test_legal_actions_and_payoffs_equal_openspiel_universal_poker(n):
    pyspiel = pytest.importorskip("pyspiel")
    stack = 2000
    oracle = _universal_poker(pyspiel, n, stack)
    env = rf.Env(rf.games.TexasHoldem(num_players=n, stack=stack), seed=n)
    rs = np.random.default_rng(100 + n)
    showdowns = 0
    for _ in range(150):
        s = env.state()
        b = s["button"]
        seat_of = [(p + b + 1) % n for p in range(n)]  # ACPC seat p -> our seat
        acpc_of = {seat_of[p]: p for p in range(n)}
        st = oracle.new_initial_state()
        for p in range(n):
            for c in s["hole"][seat_of[p]]:
                st.apply_action(int(c))
        dealt = 0
        while not env.done():
            board = env.state()["board"]
            while st.is_chance_node():
                st.apply_action(int(board[dealt]))
                dealt += 1
            a = env.active_agents()[0]
            assert st.current_player() == acpc_of[a]
            legal = env.legal_actions(a)
            assert sorted(st.legal_actions()) == legal
            weights = [0.15] + [0.85 / (len(legal) - 1)] * (len(legal) - 1) if len(legal) > 1 else None
            x = int(rs.choice(legal, p=weights))  # the first legal action (fold when legal) rarer: more showdowns
            events = env.step({a: x})
            st.apply_action(x)
        board = env.state()["board"]
        while st.is_chance_node():  # a showdown after the last street was already dealt
            st.apply_action(int(board[dealt]))
            dealt += 1
        assert st.is_terminal()
        theirs = st.returns()
        ours = [d for _, d in events]
        for seat in range(n):
            # ACPC splits a tied pot into fractions; the original gives odd chips left of the button
            assert abs(ours[seat] - theirs[acpc_of[seat]]) < 1.0, (s, ours, theirs)
            if float(theirs[acpc_of[seat]]).is_integer():
                assert ours[seat] == theirs[acpc_of[seat]]
        showdowns += len(board) == 5
        env.reset()
    assert showdowns > 10
