"""Engine.snapshot / Engine.restore and rf.EngineSnapshot: record-exact continuation for every
learner family (also through bytes and across batch_size / n_threads / pad), rejected restores
leave the engine intact, policy_version checks, and fuzzed ``from_bytes`` (ValueError only)."""

from __future__ import annotations

import json
import struct
import subprocess

import numpy as np
import pytest
from helpers import GEOMETRY_KEYS, assert_same_batch  # tests/ is on sys.path (rootdir conftest)

import reinfors as rf
from reinfors import snapshot as snapmod

from .snapshot_cases import FAMILIES, _fuzz, build, parse, reseal, split

BEFORE = (5, 3)  # collect sizes before the snapshot (small: trajectories stay open)
AFTER = (4, 9, 2)


def run(engine, infer, sizes):
    return [engine.collect(n, infer) for n in sizes]


# Snake's search compositions (~2 min each cold) run in the slow tier; the default tier restores
# every learner and policy family on Connect4 / GridWorld.
_SLOW_FAMILIES = {"snake_alphazero", "snake_selective_expectimax"}


@pytest.mark.parametrize(
    "family", [pytest.param(f, marks=pytest.mark.slow) if f in _SLOW_FAMILIES else f for f in sorted(FAMILIES)]
)
def test_restore_continues_record_exactly(family):
    make_kw, make_infer = FAMILIES[family]
    infer = make_infer()
    e = rf.Engine(**make_kw(), batch_size=2, n_threads=1)
    run(e, infer, BEFORE)
    snap = e.snapshot(policy_version="v1")
    if family.startswith("dqn"):
        assert snap._header["scalars"]["rec"] > 0  # open n-step trajectories cross the snapshot
    assert (snap._arrays["states"][:, 0] > 0).any()  # episodes in progress cross it too
    blob = snap.to_bytes()
    want = run(e, infer, AFTER)
    # a fresh engine of the same composition, other batch_size / n_threads / pad, via bytes
    f = rf.Engine(**make_kw(), batch_size=5, n_threads=2, pad=True)
    f.restore(rf.EngineSnapshot.from_bytes(blob), expect_policy_version="v1")
    for i, (x, y) in enumerate(zip(want, run(f, infer, AFTER), strict=True)):
        assert_same_batch(x, y, f"{family} window {i} (fresh engine)", skip=GEOMETRY_KEYS)
    # same geometry through bytes: telemetry too
    h = rf.Engine(**make_kw(), batch_size=2, n_threads=1)
    h.restore(rf.EngineSnapshot.from_bytes(blob))
    for i, (x, y) in enumerate(zip(want, run(h, infer, AFTER[:1]), strict=False)):
        assert_same_batch(x, y, f"{family} window {i} (same geometry)")
    # the same engine rewinds to the snapshot object itself
    e.restore(snap)
    for i, (x, y) in enumerate(zip(want, run(e, infer, AFTER), strict=True)):
        assert_same_batch(x, y, f"{family} window {i} (rewound)")
    assert len(blob) == len(snap.to_bytes()) and rf.EngineSnapshot.from_bytes(blob).to_bytes() == blob


def test_snapshot_before_the_first_collect_restores_the_seed_state():
    make_kw, make_infer = FAMILIES["ppo_connect4"]
    infer = make_infer()
    e = rf.Engine(**make_kw(), seed=11, n_threads=1)
    snap = rf.EngineSnapshot.from_bytes(e.snapshot().to_bytes())
    want = run(e, infer, (6, 6))
    e.restore(snap)
    for x, y in zip(want, run(e, infer, (6, 6)), strict=True):
        assert_same_batch(x, y)
    # a restoring engine that already collected also goes back to the seed state
    f = rf.Engine(**make_kw(), seed=11, batch_size=3)
    run(f, infer, (4,))
    f.restore(snap)
    for x, y in zip(want, run(f, infer, (6, 6)), strict=True):
        assert_same_batch(x, y, skip=GEOMETRY_KEYS)


def test_snapshot_after_a_callback_error_and_across_route_layouts():
    """A window whose callback raised (discarded records, state advanced on zero outputs) is a
    valid snapshot point; per-player callbacks before and a shared one after change nothing."""
    make_kw, make_infer = FAMILIES["ppo_connect4"]
    infer = make_infer()
    calls = [0]

    def flaky(obs):
        calls[0] += 1
        if calls[0] == 3:
            raise KeyError("boom")
        return infer(obs)

    e = rf.Engine(**make_kw(), n_threads=1)
    e.collect(4, [infer, infer])
    with pytest.raises(KeyError, match="boom"):
        e.collect(6, flaky)
    snap = e.snapshot()
    want = run(e, infer, (5, 5))
    f = rf.Engine(**make_kw(), batch_size=1, n_threads=1)
    f.restore(snap)
    got = [f.collect(5, [infer, infer]), f.collect(5, infer)]
    for x, y in zip(want, got, strict=True):
        assert_same_batch(x, y, skip=GEOMETRY_KEYS)


def test_snapshot_attributes_and_generation():
    e = rf.Engine(**FAMILIES["ppo_connect4"][0]())
    e.weights_updated()
    e.weights_updated(player=1)
    s = e.snapshot()
    assert s.schema_version == 1 and s.weights_generation == 2 and s.policy_version is None
    assert len(s.fingerprint) == 64 and set(s.fingerprint) <= set("0123456789abcdef")
    assert s.fingerprint != e.config_fingerprint()
    assert s.fingerprint == snapmod.snapshot_fingerprint(e.resolved_config())
    assert e.snapshot(policy_version="").policy_version == ""
    f = rf.Engine(**FAMILIES["ppo_connect4"][0](), batch_size=7, n_threads=1, pad=True)
    assert f.config_fingerprint() != e.config_fingerprint()
    assert f.snapshot().fingerprint == s.fingerprint
    f.restore(s)
    assert f.snapshot().weights_generation == 2
    with pytest.raises(TypeError, match="No constructor defined for EngineSnapshot"):
        rf.EngineSnapshot()
    with pytest.raises(AttributeError):
        s.fingerprint = "0" * 64
    blob = s.to_bytes()
    assert blob[:4] == b"RFGS" and blob[4] == 1 and struct.unpack("<I", blob[5:9])[0] == 64
    assert blob[9:73].decode() == s.fingerprint and struct.unpack("<Q", blob[73:81])[0] == 2 and blob[81] == 0
    pv = e.snapshot(policy_version="p1").to_bytes()
    assert pv[81:88] == b"\x01\x02\x00\x00\x00p1"


def test_snapshot_never_holds_cache_arrays():
    e = rf.Engine(**FAMILIES["dqn_gridworld"][0]())
    e.collect(3, FAMILIES["dqn_gridworld"][1]())
    names = set(e.snapshot()._arrays)
    assert names == set(e._rt.SNAPSHOT_ARRAYS) and not any(n.startswith("c_") for n in names)


def test_policy_version_checks():
    make_kw = FAMILIES["ppo_connect4"][0]
    e = rf.Engine(**make_kw())
    s1, s0 = e.snapshot(policy_version="p1"), e.snapshot()
    with pytest.raises(ValueError, match=r'^policy_version mismatch: snapshot has Some\("p1"\), expected "p2"$'):
        e.restore(s1, expect_policy_version="p2")
    with pytest.raises(ValueError, match=r'^policy_version mismatch: snapshot has None, expected "p2"$'):
        e.restore(s0, expect_policy_version="p2")
    with pytest.raises(ValueError, match=r'snapshot has Some\("a\\"b"\), expected "x\\ny"'):
        e.restore(e.snapshot(policy_version='a"b'), expect_policy_version="x\ny")
    e.restore(s1, expect_policy_version="p1")
    e.restore(s1)
    with pytest.raises(TypeError, match="argument 'expect_policy_version': 'int' object cannot be converted"):
        e.restore(s1, expect_policy_version=3)
    with pytest.raises(TypeError, match="argument 'policy_version': 'bytes' object cannot be converted"):
        e.snapshot(policy_version=b"p")
    with pytest.raises(TypeError, match="argument 'snapshot': 'bytes' object cannot be converted to 'EngineSnapshot'"):
        e.restore(s1.to_bytes())
    with pytest.raises(TypeError, match="argument 'data': 'bytearray' object cannot be converted"):
        rf.EngineSnapshot.from_bytes(bytearray(s1.to_bytes()))


def test_rejected_restores_leave_the_engine_intact():
    make_kw, make_infer = FAMILIES["dqn_connect4"]
    infer = make_infer()
    # one thread: stall closes (telemetry) depend on timing with helper threads
    e = rf.Engine(**make_kw(), batch_size=2, n_threads=1)
    twin = rf.Engine(**make_kw(), batch_size=2, n_threads=1)
    run(e, infer, (4,))
    run(twin, infer, (4,))
    e.weights_updated()
    twin.weights_updated()
    good = e.snapshot()
    other = rf.Engine(**dict(make_kw(), n_games=5)).snapshot()
    with pytest.raises(ValueError, match=r"^snapshot is from a different composition \(fingerprint [0-9a-f]{64} != "):
        e.restore(other)
    with pytest.raises(ValueError, match="different composition"):
        e.restore(rf.Engine(**make_kw(), infer_cache=0, seed=1).snapshot())
    with pytest.raises(ValueError, match="policy_version mismatch"):
        e.restore(good, expect_policy_version="x")
    # a forged state (valid envelope, recomputed digest) fails the engine-side checks
    for _name, edit in FORGERIES:
        forged = forge(good.to_bytes(), edit)
        try:
            snap = rf.EngineSnapshot.from_bytes(forged)
        except ValueError:
            continue
        with pytest.raises(ValueError, match="^invalid EngineSnapshot: "):
            e.restore(snap)
    assert e.snapshot().weights_generation == 1
    for x, y in zip(run(e, infer, (5, 5)), run(twin, infer, (5, 5)), strict=True):
        assert_same_batch(x, y)


def test_held_engine_refuses_snapshot_and_restore():
    e = rf.Engine(**FAMILIES["ppo_connect4"][0]())
    s = e.snapshot()
    e._held = True
    try:
        with pytest.raises(RuntimeError, match="held by a collect_stream"):
            e.snapshot()
        with pytest.raises(RuntimeError, match="held by a collect_stream"):
            e.restore(s)
    finally:
        e._held = False
    e.restore(s)


# -- from_bytes validation ------------------------------------------------------------------------


def forge(blob: bytes, edit) -> bytes:
    head, body = split(blob)
    header, arrays = parse(body)
    edit(header, arrays)
    return reseal(head, build(header, arrays))


def _set_array(name, fn):
    def edit(header, arrays):
        for a in arrays:
            if a[0] == name:
                dt = snapmod._DTYPES[a[1]]
                x = np.frombuffer(a[3], dt).reshape(a[2]).copy()
                fn(x)
                a[3] = x.tobytes()

    return edit


def _col(c, v):
    def fn(x):
        x[0, c] = v

    return fn


from reinfors.jit import engine_codes as C  # noqa: E402


def _grow_first(arrays, name):
    """One more row in ``name`` (bytes kept consistent: only the shape disagrees with the engine)."""
    for a in arrays:
        if a[0] == name and a[2][0]:
            row = len(a[3]) // a[2][0]
            a[2] = [a[2][0] + 1] + a[2][1:]
            a[3] = a[3] + a[3][:row]


FORGERIES = [
    ("status", _set_array("sinfo", _col(C.SI_STATUS, C.ST_WAIT))),
    ("status_big", _set_array("sinfo", _col(C.SI_STATUS, 99))),
    ("level", _set_array("sinfo", _col(C.SI_LEVEL, -3))),
    ("search", _set_array("sinfo", _col(C.SI_SEARCH, 1))),
    ("head", _set_array("sinfo", _col(C.SI_HEAD, 5))),
    ("leaf", _set_array("sinfo", _col(C.SI_LEAF, 10**6))),
    ("nact", _set_array("sinfo", _col(C.SI_NACT, 3))),
    ("act_agents", _set_array("act_agents", lambda x: x.__setitem__((0, 0), 2))),
    ("traj_cnt", _set_array("traj_cnt", lambda x: x.__setitem__((0, 0), 10**6))),
    ("traj_neg", _set_array("traj_cnt", lambda x: x.__setitem__((0, 0), -1))),
    ("traj_idx", _set_array("traj_idx", lambda x: x.__setitem__((0, 0, 0), 10**9))),
    ("pending", _set_array("pending", lambda x: x.__setitem__(0, 3))),
    ("tele", _set_array("tele", lambda x: x.__setitem__((0, 0), -1))),
    ("action", _set_array("r_meta", lambda x: x.__setitem__((0, C.RM_ACTION), 99) if len(x) else None)),
    ("nan", _set_array("r_f", lambda x: x.__setitem__((0, 0), np.nan) if len(x) else None)),
    ("state_cell", _set_array("states", lambda x: x.__setitem__((0, 8), 7))),
    ("state_done", _set_array("states", lambda x: x.__setitem__((0, 1), 1))),
    ("drop_array", lambda h, a: a.pop()),
    ("dup_array", lambda h, a: a.append(list(a[0]))),
    ("rename", lambda h, a: a[0].__setitem__(0, "t_state")),
    ("cache_array", lambda h, a: a[0].__setitem__(0, "c_keys")),
    ("shape", lambda h, a: _grow_first(a, "states")),
    ("shape_traj", lambda h, a: _grow_first(a, "traj_idx")),
    ("shape_pool", lambda h, a: _grow_first(a, "r_obs")),
    ("dtype", lambda h, a: a[0].__setitem__(1, 3)),
    ("dtype_unknown", lambda h, a: a[0].__setitem__(1, 9)),
    ("rec", lambda h, a: h["scalars"].__setitem__("rec", 10**9)),
    ("rec_neg", lambda h, a: h["scalars"].__setitem__("rec", -1)),
    ("emitted", lambda h, a: h["scalars"].__setitem__("emitted", 3)),
    ("levels", lambda h, a: h["scalars"].__setitem__("levels_done", -2)),
    ("levels_float", lambda h, a: h["scalars"].__setitem__("levels_done", 2.0)),
    ("rate", lambda h, a: h.__setitem__("rate", -1.0)),
    ("rate_int", lambda h, a: h.__setitem__("rate", 1)),
    ("fresh", lambda h, a: h.__setitem__("fresh", 1)),
    ("fresh_true", lambda h, a: h.__setitem__("fresh", True)),
    ("extra_key", lambda h, a: h.__setitem__("x", 1)),
    ("config", lambda h, a: h["config"]["engine"].__setitem__("n_games", 99)),
    ("config_str", lambda h, a: h.__setitem__("config", "x")),
    ("header_list", lambda h, a: h.clear()),
]


@pytest.fixture(scope="module")
def blob():
    make_kw, make_infer = FAMILIES["dqn_connect4"]
    e = rf.Engine(**make_kw())
    run(e, make_infer(), (6,))
    return e.snapshot(policy_version="pv").to_bytes()


def test_envelope_errors_use_the_original_wording(blob):
    def err(b):
        with pytest.raises(ValueError) as info:
            rf.EngineSnapshot.from_bytes(b)
        assert str(info.value).startswith("invalid EngineSnapshot: ")
        return str(info.value)[len("invalid EngineSnapshot: ") :]

    assert err(b"") == "truncated"
    assert err(b"RF") == "truncated"
    assert err(b"hello world" * 10) == "bad magic"
    assert err(b"XXXX" + blob[4:]) == "bad magic"
    assert err(blob[:4] + b"\x02" + blob[5:]) == "unsupported schema version 2"
    assert err(blob[:81] + b"\x02" + blob[82:]) == "policy_version presence byte 2 is not a bool"
    assert err(blob[:9] + b"\xff" + blob[10:]) == "fingerprint not utf-8"
    assert err(blob[:86] + b"\xff\xfe" + blob[88:]) == "policy_version not utf-8"
    assert err(blob[:5] + struct.pack("<I", 2**31) + blob[9:]) == "truncated"
    assert err(blob[:9] + b"G" + blob[10:]) == "fingerprint is not 64 lowercase hex chars"
    assert err(blob + b"\x00") == "trailing bytes"
    assert err(blob[:-1]) == "truncated"
    for n in range(0, 120):
        assert err(blob[:n]) == "truncated"
    assert "digest" in err(blob[:-1] + bytes([blob[-1] ^ 1]))
    head, body = split(blob)
    assert err(reseal(head, body + b"\x00")) == "trailing bytes"
    assert err(reseal(head, body[:-1])) == "truncated"
    # a different (valid) fingerprint in the envelope: the embedded config disagrees
    other = "0" * 64
    assert "does not match the embedded config" in err(blob[:9] + other.encode() + blob[73:])


@pytest.mark.parametrize("name,edit", FORGERIES, ids=[f[0] for f in FORGERIES])
def test_forged_fields_are_rejected_by_from_bytes_or_restore(blob, name, edit):
    forged = forge(blob, edit)
    e = rf.Engine(**FAMILIES["dqn_connect4"][0]())
    try:
        snap = rf.EngineSnapshot.from_bytes(forged)
    except ValueError as exc:
        assert str(exc).startswith("invalid EngineSnapshot: ")
        return
    with pytest.raises(ValueError, match="^invalid EngineSnapshot: |different composition"):
        e.restore(snap)


def test_forged_header_edge_cases(blob):
    head, body = split(blob)
    n = struct.unpack("<I", body[:4])[0]
    rest = body[4 + n :]
    for text in (b"[" * 100000, b"{", b'{"a": NaN}', b"\xff", b"1" * 5000, b'"x"', b"null"):
        forged = reseal(head, struct.pack("<I", len(text)) + text + rest)
        with pytest.raises(ValueError, match="^invalid EngineSnapshot: "):
            rf.EngineSnapshot.from_bytes(forged)
    # huge declared dims / counts never allocate
    header, arrays = parse(body)
    nested = b"[" * 500 + b"]" * 500
    forged = reseal(head, struct.pack("<I", len(nested)) + nested + rest)
    with pytest.raises(ValueError, match="^invalid EngineSnapshot: "):
        rf.EngineSnapshot.from_bytes(forged)
    root = next(i for i, a in enumerate(arrays) if a[0] == "root")  # a 3-d array
    for i, shape in ((0, [2**40, 2**40]), (0, [2**63, 0]), (0, [2**64 - 1, 1]), (root, [0, 2**40, 2**40])):
        arrays2 = [list(a) for a in arrays]
        arrays2[i][2] = shape
        with pytest.raises(ValueError, match="^invalid EngineSnapshot: "):
            rf.EngineSnapshot.from_bytes(reseal(head, build(header, arrays2)))
    big_count = body[: 4 + n] + struct.pack("<I", 2**32 - 1) + rest[4:]
    with pytest.raises(ValueError, match="^invalid EngineSnapshot: "):
        rf.EngineSnapshot.from_bytes(reseal(head, big_count))


def test_fuzzed_blobs_raise_value_error_only(blob):
    """10^4 random, truncated, extended and forged blobs: ValueError, or a snapshot that writes
    back exactly the bytes it came from (a mutation of the generation or of a value the engine
    checks at restore); never another exception type."""
    errors = 0
    for data in _fuzz(blob, 10_000, seed=1):
        try:
            snap = rf.EngineSnapshot.from_bytes(data)
        except ValueError as e:
            assert str(e).startswith("invalid EngineSnapshot: "), str(e)
            errors += 1
        else:
            assert snap.to_bytes() == data
    assert errors > 8000


def test_fuzzed_forgeries_restore_or_raise_value_error(blob):
    """Forged blobs that parse are restored into a live engine: ValueError or a working engine."""
    make_kw, make_infer = FAMILIES["dqn_connect4"]
    e = rf.Engine(**make_kw())
    infer = make_infer()
    restored = 0
    for data in _fuzz(blob, 3000, seed=2):
        try:
            snap = rf.EngineSnapshot.from_bytes(data)
        except ValueError:
            continue
        try:
            e.restore(snap)
        except ValueError as exc:
            assert str(exc).startswith("invalid EngineSnapshot: ") or "different composition" in str(exc)
            continue
        restored += 1
        e.collect(2, infer)
    assert restored > 20  # generation, RNG and float payload mutations are accepted


# -- differential: envelope bytes, messages and fingerprints vs reinfors 0.4.0 ---------------------

_ORIG_SNAPSHOT_PROBE = r"""
import json, struct, sys, reinfors as rf
cfgs = json.loads(sys.stdin.read())
out = {"fingerprints": [], "headers": [], "errors": [], "restore": []}
for cfg in cfgs:
    e = rf.engine_from_config(cfg)
    s = e.snapshot(policy_version="p1")
    b = s.to_bytes()
    out["fingerprints"].append(s.fingerprint)
    out["headers"].append(b[:88].hex())
b = rf.engine_from_config(cfgs[0]).snapshot(policy_version="p1").to_bytes()
EDITS
for edit in edits:
    try:
        rf.EngineSnapshot.from_bytes(edit(b))
        out["errors"].append("ok")
    except Exception as ex:
        out["errors"].append(f"{type(ex).__name__}: {ex}")
e0, e1 = rf.engine_from_config(cfgs[0]), rf.engine_from_config(cfgs[1])
for fn in (lambda: e1.restore(e0.snapshot()), lambda: e0.restore(e0.snapshot(policy_version="a"), expect_policy_version="b"),
           lambda: e0.restore(e0.snapshot(), expect_policy_version="b")):
    try:
        fn()
        out["restore"].append("ok")
    except Exception as ex:
        out["restore"].append(f"{type(ex).__name__}: {ex}")
print(json.dumps(out))
"""

_EDITS = """
edits = [
    lambda b: b"",
    lambda b: b"RF",
    lambda b: b"hello world" * 10,
    lambda b: b"XXXX" + b[4:],
    lambda b: b[:4] + b"\\x02" + b[5:],
    lambda b: b[:81] + b"\\x07" + b[82:],
    lambda b: b[:9] + b"\\xff" + b[10:],
    lambda b: b[:86] + b"\\xff\\xfe" + b[88:],
    lambda b: b[:5] + struct.pack("<I", 2**31) + b[9:],
    lambda b: b[:82] + struct.pack("<I", 10**6) + b[86:],
    lambda b: b + b"\\x00",
    lambda b: b[:40],
    lambda b: b[:85],
]
"""


def test_envelope_messages_and_fingerprints_match_the_original():
    from differential.harness import require_orig

    py = require_orig()
    engines = [rf.Engine(**FAMILIES[f][0]()) for f in ("ppo_connect4", "dqn_connect4", "dqn_gridworld")]
    engines.append(rf.Engine(**FAMILIES["alphazero_connect4_noise"][0](), learn_players=[1], seed=9, batch_size=2))
    cfgs = [e.resolved_config() for e in engines]
    code = _ORIG_SNAPSHOT_PROBE.replace("EDITS", _EDITS)
    res = subprocess.run([py, "-I", "-c", code], input=json.dumps(cfgs), capture_output=True, text=True, cwd="/")
    assert res.returncode == 0, res.stderr[-2000:]
    theirs = json.loads(res.stdout)
    ours = [e.snapshot(policy_version="p1") for e in engines]
    assert [s.fingerprint for s in ours] == theirs["fingerprints"]
    assert [s.to_bytes()[:88].hex() for s in ours] == theirs["headers"]
    scope = {"struct": struct}
    exec(_EDITS, scope)  # the same edits, applied to our blob
    b = ours[0].to_bytes()
    mine = []
    for edit in scope["edits"]:
        try:
            rf.EngineSnapshot.from_bytes(edit(b))
            mine.append("ok")
        except Exception as ex:  # noqa: BLE001 - compared with the original
            mine.append(f"{type(ex).__name__}: {ex}")
    assert mine == theirs["errors"]
    e0, e1 = rf.Engine(**FAMILIES["ppo_connect4"][0]()), rf.Engine(**FAMILIES["dqn_connect4"][0]())
    got = []
    for fn in (
        lambda: e1.restore(e0.snapshot()),
        lambda: e0.restore(e0.snapshot(policy_version="a"), expect_policy_version="b"),
        lambda: e0.restore(e0.snapshot(), expect_policy_version="b"),
    ):
        try:
            fn()
            got.append("ok")
        except Exception as ex:  # noqa: BLE001 - compared with the original
            got.append(f"{type(ex).__name__}: {ex}")
    assert got == theirs["restore"]


@pytest.mark.parametrize("ntgt", [-1, 99, 0])
def test_forged_compact_target_widths_are_rejected(ntgt):
    """AlphaZero's records hold one target column per legal action (``RM_NTGT`` of them, read
    and moved unchecked by the pool kernels): a width outside the row, or one that disagrees with
    the record's legal set (0 for a record with legal actions), never restores."""
    make_kw, make_infer = FAMILIES["alphazero_connect4_noise"]
    e = rf.Engine(**make_kw(), batch_size=2)
    run(e, make_infer(), (20,))
    snap = e.snapshot()
    assert snap._header["scalars"]["rec"] > 0  # open trajectories: records cross the snapshot
    forged = forge(snap.to_bytes(), _set_array("r_meta", _col(C.RM_NTGT, ntgt)))
    f = rf.Engine(**make_kw(), batch_size=2)
    with pytest.raises(ValueError, match="^invalid EngineSnapshot: .*(target width|compact targets)"):
        f.restore(rf.EngineSnapshot.from_bytes(forged))
    f.restore(rf.EngineSnapshot.from_bytes(snap.to_bytes()))  # the genuine blob still restores
    assert_same_batch(e.collect(10, make_infer()), f.collect(10, make_infer()), "after the rejected forgery")
