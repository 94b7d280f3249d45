"""Corrupted snapshots (issue 16 item 2): real Env snapshots of every game and EngineSnapshots of
a model-free and a search composition, taken after a few steps, are bit-flipped, byte-set,
truncated, extended, spliced with another blob, given duplicated regions and forged header /
state fields.  ``from_bytes`` / ``restore`` either raise ``ValueError`` (the original's wording
for the envelope; a rejected restore leaves the target unchanged) or restore a state that then
plays safely (observations, legal actions, a few steps / a short collect).  Never a crash, hang
or out-of-bounds write: the slow tier runs >= 10^5 blobs, and a subprocess repeats a smaller run
with ``REINFORS_BOUNDSCHECK=1`` (kernels compiled with bounds checks, in their own cache).

The engine mutations extend the fuzzer of ``tests/engine/test_snapshot.py`` (its ``_fuzz`` plus
splices and duplicated regions here); the Env mutations extend ``tests/test_env.py``'s
hypothesis fuzzer (which covers Kuhn only) to every game and to consistent state-word forgeries
that pass the envelope checks and reach each game's ``validate_state``.
"""

from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from engine.snapshot_cases import FAMILIES, _fuzz, reseal, split  # the engine fuzzer, extended here

import reinfors as rf

# -- Env snapshots -----------------------------------------------------------------------------

GAMES = {
    "connect4": lambda: rf.games.Connect4(),
    "gridworld": lambda: rf.games.GridWorld(size=4),
    "snake": lambda: rf.games.Snake(grid_size=7, max_ticks=30, food=2, num_snakes=2),
    "kuhn_poker": lambda: rf.games.KuhnPoker(players=3),
    "leduc_poker": lambda: rf.games.LeducPoker(),
    "texas_holdem": lambda: rf.games.TexasHoldem(),
    "chess": lambda: rf.games.Chess(),
    "backgammon": lambda: rf.games.Backgammon(),
    "car_racing": lambda: rf.games.CarRacing(max_ticks=60),
}

# Envelope layout (reinfors/env.py): magic 4 | schema 1 | fp_len 4 | fp 64 | rng 8 | done 1 |
# ticks 8 | payload_len 4 | payload (layout byte + state words).
_RNG, _DONE, _TICKS, _PLEN, _PAYLOAD = 73, 81, 82, 90, 94
_ENV_PREFIXES = ("invalid EnvSnapshot: ", "invalid snapshot state: ", "snapshot is from a different composition")
_WORDS = [0, 1, -1, 2, 3, 7, 63, 64, 255, 2**31 - 1, 2**31, -(2**31), 2**32, 2**62, 2**63 - 1, -(2**63)]


def _duplicate_region(rng, b: bytearray, k: int, d_end: int) -> bytearray:
    """Copy ``k`` bytes from a random offset of ``b`` to a random offset below ``d_end``: written
    over the bytes there (length kept) or inserted."""
    s, d = rng.randrange(len(b)), rng.randrange(d_end)
    chunk = bytes(b[s : s + k])
    if rng.random() < 0.5:
        n = len(b)
        b[d : d + len(chunk)] = chunk
        return b[:n]
    b[d:d] = chunk
    return b


def _random_play(env: rf.Env, rng: random.Random, steps: int) -> None:
    """A few safe steps: every agent's observation, each active agent's legal actions, a random
    legal joint action (a reset at the end of an episode)."""
    n = env.num_agents()
    for _ in range(steps):
        if env.done():
            env.reset()
        for a in range(n):
            env.observe(a)
        acting = env.active_agents()
        assert acting, "a running game with no active agent"
        joint = {}
        for a in acting:
            legal = env.legal_actions(a)
            assert legal, f"agent {a} is active with no legal action"
            assert all(0 <= x < env.action_count() for x in legal)
            joint[a] = rng.choice(legal)
        env.step(joint)


def _env_blobs(name: str, seed: int = 0):
    """Two snapshots of the same composition a few random steps apart (for splices)."""
    env = rf.Env(GAMES[name](), rf.Reward(), seed=seed)
    rng = random.Random(seed)
    _random_play(env, rng, 3)
    a = env.snapshot().to_bytes()
    _random_play(env, rng, 4)
    return env, a, env.snapshot().to_bytes()


def _consistent(b: bytearray) -> bytearray:
    """Rewrite the envelope's ticks / done to agree with the (forged) state row, so the blob
    passes the envelope checks and reaches the game's validator."""
    words = np.frombuffer(bytes(b[_PAYLOAD + 1 :]), "<i8")
    if len(words) >= 2:
        from reinfors.jit.games._contract import DONE, RUNNING, TICKS

        b[_DONE] = int(words[DONE] != RUNNING)
        b[_TICKS : _TICKS + 8] = struct.pack("<q", int(words[TICKS]))
    return b


def env_mutations(a: bytes, other: bytes, n: int, seed: int):
    """``n`` corrupted variants of Env blob ``a`` (``other``: a second blob, for splices)."""
    rng = random.Random(seed)
    n_words = (len(a) - _PAYLOAD - 1) // 8
    for i in range(n):
        kind = i % 10
        b = bytearray(a)
        if kind == 0:  # bit flips anywhere
            for _ in range(rng.randint(1, 4)):
                j = rng.randrange(len(b))
                b[j] ^= 1 << rng.randrange(8)
        elif kind == 1:  # bytes set anywhere
            for _ in range(rng.randint(1, 3)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif kind == 2:  # truncation
            b = b[: rng.randrange(len(b))]
        elif kind == 3:  # extension
            b += rng.randbytes(rng.randint(1, 24))
        elif kind == 4:  # splice two blobs at independent cut points
            b = bytearray(a[: rng.randrange(len(a) + 1)] + other[rng.randrange(len(other) + 1) :])
        elif kind == 5:  # a duplicated region: overwritten in place or inserted
            b = _duplicate_region(rng, b, rng.randint(1, 32), len(b))
        elif kind == 6:  # header-field forgeries
            field = rng.choice([(5, "<I"), (_RNG, "<Q"), (_DONE, "<B"), (_TICKS, "<Q"), (_PLEN, "<I"), (4, "<B")])
            lim = 2 ** (8 * struct.calcsize(field[1]))
            v = rng.choice([0, 1, 2, 64, 65, lim - 1, lim // 2, rng.randrange(lim)])
            struct.pack_into(field[1], b, field[0], v)
            if rng.random() < 0.3:
                b[_PAYLOAD] = rng.choice([0, 2, 255])  # the layout byte
        else:  # state-word forgeries, the envelope kept consistent (reaches validate_state)
            for _ in range(rng.randint(1, 3)):
                w = rng.randrange(n_words)
                old = struct.unpack_from("<q", b, _PAYLOAD + 1 + 8 * w)[0]
                v = rng.choice([*_WORDS, old + 1, old - 1, old ^ (1 << rng.randrange(63)), rng.randrange(-50, 400)])
                struct.pack_into("<q", b, _PAYLOAD + 1 + 8 * w, max(-(2**63), min(2**63 - 1, v)))
            if kind != 9:
                b = _consistent(b)
        yield bytes(b)


def fuzz_env(name: str, n: int, seed: int) -> dict:
    """Decode / restore / play ``n`` corrupted blobs of game ``name``; returns outcome counts."""
    src, a, other = _env_blobs(name, seed)
    target = rf.Env(GAMES[name](), rf.Reward(), seed=seed + 1)
    play = random.Random(seed)
    counts = {"rejected": 0, "restored": 0}
    for data in env_mutations(a, other, n, seed):
        before = target.state(), target.ticks
        try:
            target.restore(rf.EnvSnapshot.from_bytes(data))
        except ValueError as exc:
            assert str(exc).startswith(_ENV_PREFIXES), str(exc)
            assert (target.state(), target.ticks) == before, "a rejected restore changed the Env"
            counts["rejected"] += 1
            continue
        counts["restored"] += 1
        _random_play(target, play, 4)
    return counts


@pytest.mark.parametrize("name", sorted(GAMES))
def test_corrupted_env_snapshots_are_rejected_or_play_safely(name):
    counts = fuzz_env(name, 300, seed=11)
    assert counts["rejected"] > 150  # most corruptions are caught by the envelope or the validator
    assert counts["restored"] > 0  # RNG / tick-consistent forgeries are accepted and played


# -- EngineSnapshot ----------------------------------------------------------------------------

ENGINE_FAMILIES = ("dqn_connect4", "alphazero_connect4_noise")  # compositions test_snapshot compiles
_ENGINE_PREFIXES = ("invalid EngineSnapshot: ", "snapshot is from a different composition")


def engine_mutations(blob: bytes, other: bytes, n: int, seed: int):
    """test_snapshot's ``_fuzz`` mutations interleaved with splices and duplicated regions of the
    body (raw, and with a recomputed digest: a forger)."""
    rng = random.Random(seed)
    base = _fuzz(blob, n, seed)
    head, body = split(blob)
    _, obody = split(other)
    for i in range(n):
        kind = i % 4
        if kind < 2:
            yield next(base)
            continue
        if kind == 2:  # splice two snapshots (raw or re-sealed bodies)
            if rng.random() < 0.5:
                yield blob[: rng.randrange(len(blob) + 1)] + other[rng.randrange(len(other) + 1) :]
            else:
                cut = rng.randrange(len(body) + 1)
                yield reseal(head, body[:cut] + obody[cut + rng.randint(-8, 8) :])
            continue
        # a duplicated region, digest recomputed
        bb = _duplicate_region(rng, bytearray(body), rng.choice([1, 2, 4, 8, 16, 64, 256]), min(len(body), 8192))
        yield reseal(head, bytes(bb))


def fuzz_engine(family: str, n: int, seed: int) -> dict:
    """Decode, restore and collect from ``n`` corrupted snapshots of ``family``."""
    make_kw, make_infer = FAMILIES[family]
    infer = make_infer()
    src = rf.Engine(**make_kw())
    src.collect(6, infer)
    blob = src.snapshot(policy_version="pv").to_bytes()
    src.collect(5, infer)
    other = src.snapshot(policy_version="pv").to_bytes()
    e = rf.Engine(**make_kw())
    e.collect(3, infer)
    intact = e.snapshot().to_bytes()
    counts = {"rejected_bytes": 0, "rejected_restore": 0, "restored": 0}
    for data in engine_mutations(blob, other, n, seed):
        try:
            snap = rf.EngineSnapshot.from_bytes(data)
        except ValueError as exc:
            assert str(exc).startswith("invalid EngineSnapshot: "), str(exc)
            counts["rejected_bytes"] += 1
            continue
        try:
            e.restore(snap)
        except ValueError as exc:
            assert str(exc).startswith(_ENGINE_PREFIXES), str(exc)
            assert e.snapshot().to_bytes() == intact, "a rejected restore changed the engine"
            counts["rejected_restore"] += 1
            continue
        counts["restored"] += 1
        batch = e.collect(2, infer)  # plays on from the restored state
        assert batch.obs.shape[0] >= 2
        e.restore(rf.EngineSnapshot.from_bytes(intact))
    return counts


@pytest.mark.parametrize("family", ENGINE_FAMILIES)
def test_corrupted_engine_snapshots_are_rejected_or_collect_safely(family):
    counts = fuzz_engine(family, 800, seed=21)
    assert counts["rejected_bytes"] > 400
    assert counts["restored"] > 0


# -- slow tier: >= 10^5 blobs, and a bounds-checked run ----------------------------------------


@pytest.mark.slow
def test_corruption_at_scale():
    total = 0
    for i, name in enumerate(sorted(GAMES)):
        c = fuzz_env(name, 8_000, seed=100 + i)
        total += sum(c.values())
    for i, family in enumerate(ENGINE_FAMILIES):
        c = fuzz_engine(family, 15_000, seed=200 + i)
        total += sum(c.values())
    assert total >= 10**5


_BOUNDSCHECK_DRIVER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from reinfors.jit import _compile
assert _compile.BOUNDSCHECK and _compile.cache_dir().name.endswith("-boundscheck")
from reliability.test_corruption import fuzz_env, fuzz_engine
print(fuzz_env("kuhn_poker", 3000, seed=7))
print(fuzz_env("connect4", 3000, seed=8))
print(fuzz_engine("dqn_connect4", 4000, seed=9))
print("done")
"""


@pytest.mark.slow
def test_corruption_under_boundscheck(tmp_path):
    """The same fuzzers with bounds-checked kernels (an out-of-bounds index raises IndexError
    inside a kernel instead of writing past an array): one small game, a model-free engine."""
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, REINFORS_BOUNDSCHECK="1", PYTHONPATH=str(root))
    res = subprocess.run(
        [sys.executable, "-c", _BOUNDSCHECK_DRIVER, str(root / "tests")],
        env=env,
        capture_output=True,
        text=True,
        timeout=3000,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert res.stdout.strip().endswith("done")


def test_boundscheck_builds_cache_apart():
    """Regression: Numba's cache index ignores compile flags, so ``REINFORS_BOUNDSCHECK=1`` once
    loaded the unchecked kernels cached by a normal run (the bounds-checked fuzz then checked
    nothing).  Flagged builds now cache in a directory of their own."""
    code = "from reinfors.jit import _compile; print(_compile.BOUNDSCHECK, _compile.cache_dir().name)"
    root = str(Path(__file__).resolve().parents[2])
    names = {}
    for flag in ("", "1"):
        env = dict(os.environ, REINFORS_BOUNDSCHECK=flag, PYTHONPATH=root)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        names[flag] = out.stdout.split()
    assert names[""][0] == "False" and names["1"][0] == "True"
    assert names["1"][1] == names[""][1] + "-boundscheck"
