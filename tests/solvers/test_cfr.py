"""rf.solvers.Cfr: construction checks, Kuhn 2p/3p behaviour, save/load, the reusable tree API."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import reinfors as rf
from reinfors.solvers import Cfr
from reinfors.solvers.cfr import best_response_values, game_tree, nash_conv, policy_values

CAT = "https://jeepjeepjeep.github.io/reinfors/catalogue/compatibility/"


@pytest.fixture(scope="module")
def kuhn():
    return rf.games.KuhnPoker()


def test_same_class_object():
    assert rf.solvers.Cfr is rf._reinfors.Cfr is Cfr
    assert rf.solvers.__all__[0] == "Cfr" and "solvers" in rf.__all__


@pytest.mark.parametrize(
    "make, exc, msg",
    [
        (lambda k: Cfr(rf.games.Connect4()), ValueError, f"this game is not compatible with CFR; see {CAT}"),
        (lambda k: Cfr(rf.games.Snake()), ValueError, "this game is not compatible with CFR"),
        (lambda k: Cfr(k, variant="foo"), ValueError, 'unknown CFR variant "foo": expected "vanilla", "plus", or "external_mccfr"'),
        (lambda k: Cfr(k, variant="Plus"), ValueError, 'unknown CFR variant "Plus"'),
        (lambda k: Cfr(k, variant=None), TypeError, "argument 'variant': 'NoneType' object cannot be converted to 'PyString'"),
        (lambda k: Cfr(k, seed=-1), OverflowError, "can't convert negative int to unsigned"),
        (lambda k: Cfr(k, seed=2**64), OverflowError, "int too big to convert"),
        (lambda k: Cfr(k, seed=1.0), TypeError, "argument 'seed': 'float' object cannot be interpreted as an integer"),
        (lambda k: Cfr("kuhn"), TypeError, "argument 'game': 'str' object cannot be converted to 'GameHandle'"),
        (lambda k: Cfr(None), TypeError, "argument 'game': 'NoneType' object cannot be converted to 'GameHandle'"),
    ],
)
def test_construction_errors(kuhn, make, exc, msg):
    with pytest.raises(exc) as e:
        make(kuhn)
    assert msg in str(e.value)


def test_holdem_needs_external_mccfr():
    for v in ("vanilla", "plus"):
        with pytest.raises(ValueError, match='use variant="external_mccfr"'):
            Cfr(rf.games.TexasHoldem(num_players=2), variant=v)


def test_argument_checks(kuhn):
    c = Cfr(kuhn, "vanilla", 3)
    with pytest.raises(OverflowError, match="can't convert negative int to unsigned"):
        c.iterate(-1)
    with pytest.raises(OverflowError, match="int too big to convert"):
        c.iterate(2**64)
    with pytest.raises(TypeError, match="argument 'n': 'float' object cannot be interpreted as an integer"):
        c.iterate(1.5)
    with pytest.raises(TypeError):
        c.iterate()
    assert c.iterate(0) is None and c.iterations == 0
    with pytest.raises(ValueError, match="player must be below 2"):
        c.expected_value(2)
    with pytest.raises(OverflowError):
        c.expected_value(-1)
    for bad in ("ab", [0, 0], bytearray([0, 0])):
        with pytest.raises(TypeError, match="argument 'key'"):
            c.average_strategy(bad)
    with pytest.raises(TypeError, match="argument 'bytes'"):
        c.load(bytearray(c.save()))


def test_kuhn2_uniform_and_first_iterations(kuhn):
    c = Cfr(kuhn)
    assert (c.iterations, c.num_infosets, c.num_players) == (0, 0, 2)
    assert c.average_strategy(bytes([0, 0])) is None
    assert c.nash_conv() == pytest.approx(11 / 12, abs=1e-15)
    assert c.exploitability() == pytest.approx(11 / 24, abs=1e-15)
    assert c.best_response_values() == pytest.approx([0.5, 5 / 12], abs=1e-15)
    assert c.expected_value(0) == pytest.approx(0.125, abs=1e-15)
    c.iterate(True)
    assert (c.iterations, c.num_infosets) == (1, 12)
    c.iterate(9)
    # 0.4.0 (and OpenSpiel's CFRPlusSolver) after 10 iterations
    assert c.nash_conv() == 0.06537418133668965
    assert c.exploitability() == 0.032687090668344826
    assert c.average_strategy(bytes([0, 0])) == ([0, 1], [0.7759449119350773, 0.22405508806492275])
    assert c.average_strategy(b"zz") is None and c.average_strategy(b"") is None
    assert c.expected_value(0) == -c.expected_value(1)


@pytest.mark.parametrize("variant", ["vanilla", "plus"])
def test_kuhn2_converges_to_game_value(kuhn, variant):
    c = Cfr(kuhn, variant=variant)
    c.iterate(1000)
    assert c.num_infosets == 12
    assert c.expected_value(0) == pytest.approx(-1 / 18, abs=2e-3)
    assert c.exploitability() < (2e-3 if variant == "plus" else 1e-2)
    assert c.exploitability() == c.nash_conv() / 2
    # the dominated move: with the king facing a bet, always call
    actions, probs = c.average_strategy(bytes([1, 2, 1]))
    assert actions == [0, 1] and probs[1] > 0.99


def test_external_mccfr_grows_and_learns(kuhn):
    c = Cfr(kuhn, variant="external_mccfr", seed=0)
    c.iterate(1)
    assert 0 < c.num_infosets < 12
    c.iterate(3000)
    assert c.num_infosets == 12
    assert c.exploitability() < 0.05
    other = Cfr(kuhn, variant="external_mccfr", seed=1)
    other.iterate(3001)
    assert other.nash_conv() != c.nash_conv()  # the seed drives the sampling


@pytest.mark.parametrize("variant", ["vanilla", "plus", "external_mccfr"])
def test_save_load_continues_bit_identically(kuhn, variant):
    a = Cfr(kuhn, variant=variant, seed=7)
    a.iterate(5)
    blob = a.save()
    assert blob[:5] == b"RFCF\x01" and blob[69:71] == bytes([1, ["vanilla", "plus", "external_mccfr"].index(variant)])
    n_actions, _rng, iterations, count = struct.unpack_from("<IQQQ", blob, 71)
    assert (n_actions, iterations, count) == (2, 5, a.num_infosets)
    b = Cfr(kuhn, variant=variant, seed=99)  # the payload carries the stream
    b.iterate(2)
    b.load(blob)
    assert (b.iterations, b.num_infosets, b.save()) == (5, a.num_infosets, blob)
    a.iterate(4)
    b.iterate(4)
    assert a.save() == b.save() and a.nash_conv() == b.nash_conv()
    fresh = Cfr(kuhn, variant=variant)
    b.load(fresh.save())
    assert (b.iterations, b.num_infosets) == (0, 0)


def test_save_layout_kuhn2_plus_one_iteration(kuhn):
    c = Cfr(kuhn)
    assert len(c.save()) == 99
    c.iterate(1)
    blob = c.save()
    assert len(blob) == 903  # 12 sorted entries: u32 key len, key, u32 n, n x (u32, 3 x f64)
    kl = struct.unpack_from("<I", blob, 99)[0]
    assert kl == 2 and blob[103:105] == bytes([0, 0])
    assert struct.unpack_from("<IIddd", blob, 105) == (2, 0, 0.0, 1.0, 0.0)  # CFR+ floors the -0.125 regret


def test_load_errors(kuhn):
    c = Cfr(kuhn)
    c.iterate(3)
    blob = c.save()

    def forged(pos, val):
        b = bytearray(blob)
        b[pos] = val
        return bytes(b)

    cases = [
        (b"", "not a CFR snapshot payload"),
        (b"RFCF", "not a CFR snapshot payload"),
        (b"XFCF" + blob[4:], "not a CFR snapshot payload"),
        (forged(4, 2), "unknown CFR snapshot schema version"),
        (forged(10, blob[10] ^ 1), "different composition"),
        (blob[:-1], "truncated CFR payload"),
        (blob + b"\0", "trailing bytes in CFR payload"),
        (forged(69, 2), "unknown CFR payload version"),
        (forged(70, 0), "payload was saved by a different CFR variant"),
        (forged(71, 3), "payload was saved for a different action space"),
        (forged(95, 1), "implausible node count"),
        (forged(101, 1), "truncated CFR payload"),
        (forged(105, 5), "implausible action count"),
    ]
    for payload, msg in cases:
        d = Cfr(kuhn)
        with pytest.raises(ValueError, match=msg):
            d.load(payload)
        assert d.iterations == 0
    for other in (Cfr(kuhn, variant="vanilla"), Cfr(rf.games.KuhnPoker(3))):
        with pytest.raises(ValueError, match=r"saved from a different composition \(game parameters, reward, or CFR variant\)"):
            other.load(blob)
    Cfr(kuhn, seed=5).load(blob)  # the seed is not part of the composition


def test_kuhn3_infosets_and_exploitability_definition():
    c = Cfr(rf.games.KuhnPoker(players=3), variant="vanilla")
    c.iterate(1)
    assert c.num_infosets == 48 and c.num_players == 3
    assert c.nash_conv() == pytest.approx(2.0625, abs=1e-12)
    assert c.exploitability() == c.nash_conv() / 3


def test_tree_api(kuhn):
    tree = game_tree(kuhn)
    assert tree is game_tree(rf.games.KuhnPoker())
    assert (tree.n_infosets, tree.n_players, tree.n_actions) == (12, 2, 2)
    assert tree.n_nodes == 1 + 3 + 6 * 9  # first card, 3 second-card nodes, 6 betting trees of 9 nodes
    keys = tree.keys()
    assert sorted(keys) == sorted({bytes([p, c]) + h for p, c, h in [(0, c, b"") for c in range(3)]} | {
        bytes([0, c, 0, 1]) for c in range(3)} | {bytes([1, c, a]) for c in range(3) for a in (0, 1)})
    assert all(tree.infoset_id(k) == i for i, k in enumerate(keys)) and tree.infoset_id(b"\x09") == -1
    pol = tree.uniform_policy()
    assert nash_conv(tree, pol) == pytest.approx(11 / 12, abs=1e-15)
    assert policy_values(tree, pol) == pytest.approx([0.125, -0.125], abs=1e-15)
    # always-bet is best answered by calling with the king only, etc.: BR values stay finite
    br = best_response_values(tree, np.tile([0.0, 1.0], (12, 1)))
    assert br.shape == (2,) and np.all(np.isfinite(br))
    with pytest.raises(ValueError, match="policy must have shape"):
        nash_conv(tree, np.zeros((3, 2)))


@pytest.mark.slow
def test_holdem_external_mccfr_round_trip():
    game = rf.games.TexasHoldem(num_players=2)
    a = Cfr(game, variant="external_mccfr", seed=1)
    a.iterate(3)
    n = a.num_infosets
    assert n > 0
    blob = a.save()
    b = Cfr(game, variant="external_mccfr")
    b.load(blob)
    assert (b.save(), b.num_infosets, b.iterations) == (blob, n, 3)
    a.iterate(4)
    b.iterate(4)
    assert a.save() == b.save() and a.num_infosets > n
    key = blob[103 : 103 + struct.unpack_from("<I", blob, 99)[0]]
    actions, probs = a.average_strategy(key)
    assert actions and sum(probs) == pytest.approx(1.0)
    for call in (a.exploitability, a.nash_conv, a.best_response_values, lambda: a.expected_value(0)):
        with pytest.raises(ValueError, match="full tree"):
            call()
    with pytest.raises(ValueError, match="player must be below 2"):
        a.expected_value(2)
    with pytest.raises(ValueError, match="truncated CFR payload"):
        b.load(blob[:-1])


def test_example_runs():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(root / "examples" / "cfr_leduc.py"), "8"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "936 information states" in out.stdout and out.stdout.count("\n") >= 6


@pytest.mark.slow
def test_kuhn_seven_players_samples_by_stepping():
    c = Cfr(rf.games.KuhnPoker(players=7), variant="external_mccfr", seed=3)
    c.iterate(5)
    assert 0 < c.num_infosets <= 7 * 8 * (2 ** 13)
    with pytest.raises(ValueError, match="full tree"):
        c.exploitability()
    exact = Cfr(rf.games.KuhnPoker(players=7), variant="plus")
    with pytest.raises(ValueError, match="more than 8388608 nodes"):
        exact.iterate(1)


def test_no_pickle(kuhn):
    import copy
    import pickle

    c = Cfr(kuhn)
    for f in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match="cannot pickle 'builtins.Cfr' object"):
            f(c)
