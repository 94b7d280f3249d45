"""The snapshot test compositions and the blob wire helpers (split / reseal / parse / build and the
fuzzer), shared by tests/engine/test_snapshot.py and the reliability tests."""

from __future__ import annotations

import hashlib
import json
import random
import struct

import numpy as np
from helpers import linear_pv  # tests/ is on sys.path (rootdir conftest)
from helpers import linear_q as _linear_q

import reinfors as rf
from reinfors import snapshot as snapmod
from reinfors.jit.games import tictactoe

C4_REWARD = rf.Reward(win=1.0, loss=-1.0)


def linear_q(obs_size, n_actions, heads=1, seed=0):
    return _linear_q(obs_size, n_actions, heads, seed, squash=True)  # tanh Q values


def _c4():
    return rf.games.Connect4()


# name -> (engine kwargs factory, infer factory).  Small searches keep the suite fast.
FAMILIES = {
    "dqn_gridworld": (
        lambda: dict(
            game=rf.games.GridWorld(size=3, max_ticks=9),
            reward=rf.Reward(step=-0.01, goal=1.0),
            policy=rf.policies.EpsilonGreedyQ(n_heads=2, epsilon=0.6),
            learner=rf.learners.Dqn(n_step=3, gamma=0.9, bootstrap_p=0.5),
            n_games=5,
        ),
        lambda: linear_q(2 * 3 * 3, 4, heads=2),
    ),
    "dqn_connect4": (
        lambda: dict(
            game=_c4(),
            reward=C4_REWARD,
            policy=rf.policies.EpsilonGreedyQ(epsilon=0.2),
            learner=rf.learners.Dqn(n_step=2),
            n_games=4,
        ),
        lambda: linear_q(84, 7),
    ),
    "ppo_connect4": (
        lambda: dict(game=_c4(), reward=C4_REWARD, policy=rf.policies.Ppo(), learner=rf.learners.Ppo(), n_games=4),
        lambda: linear_pv(84, 7),
    ),
    "alphazero_connect4_noise": (
        lambda: dict(
            game=_c4(),
            reward=C4_REWARD,
            policy=rf.policies.AlphaZero(num_simulations=6, noise=rf.noise.Dirichlet(epsilon=0.5, alpha=0.3)),
            learner=rf.learners.AlphaZero(),
            n_games=3,
        ),
        lambda: linear_pv(84, 7),
    ),
    "alphazero_maxn_connect4": (  # value-only rows (action -1) cross the snapshot
        lambda: dict(
            game=_c4(),
            reward=C4_REWARD,
            policy=rf.policies.AlphaZero(num_simulations=6, sequential_backup="maxn"),
            learner=rf.learners.AlphaZero(),
            n_games=3,
        ),
        lambda: linear_pv(84, 7),
    ),
    # GumbelAlphaZero (issue 33): its root Gumbel draws come from the slot stream, so a snapshot
    # taken mid-game continues the same draws.  Tic-tac-toe: tests/engine/test_gumbel.py's module.
    "gumbel_tictactoe": (
        lambda: dict(
            game=rf.games.from_module(tictactoe),
            reward=rf.Reward(),
            policy=rf.policies.GumbelAlphaZero(num_simulations=6, max_num_considered_actions=4),
            learner=rf.learners.AlphaZero(),
            n_games=3,
        ),
        lambda: linear_pv(18, 9),
    ),
    "mcts_treestrap": (
        lambda: dict(
            game=_c4(),
            reward=C4_REWARD,
            policy=rf.policies.Mcts(num_simulations=6, temperature=1.0),
            learner=rf.learners.TreeStrap(outcome_weight=0.5, bootstrap_p=0.5),
            n_games=3,
        ),
        lambda: linear_q(84, 7),
    ),
    "minimax_treestrap": (
        lambda: dict(
            game=_c4(),
            reward=C4_REWARD,
            policy=rf.policies.Minimax(depth=2),
            learner=rf.learners.TreeStrap(interior_targets=True),
            n_games=3,
        ),
        lambda: linear_q(84, 7),
    ),
    "selective_expectimax": (
        lambda: dict(
            game=_c4(),
            reward=C4_REWARD,
            policy=rf.policies.SelectiveExpectimax(expansion_budget=4, top_k=2, n_heads=2, epsilon=0.2),
            learner=rf.learners.TreeStrap(),
            n_games=3,
        ),
        lambda: linear_q(84, 7, heads=2),
    ),
    "snake_alphazero": (
        lambda: dict(
            game=rf.games.Snake(grid_size=7, max_ticks=12, food=2),
            reward=rf.Reward(food=1.0, loss=-1.0),
            policy=rf.policies.AlphaZero(num_simulations=4),
            learner=rf.learners.AlphaZero(gamma=0.99),
            n_games=3,
        ),
        lambda: linear_pv(5 * 7 * 7, 3),
    ),
    "snake_selective_expectimax": (
        lambda: dict(
            game=rf.games.Snake(grid_size=7, max_ticks=12, food=2, num_snakes=3),
            reward=rf.Reward(food=1.0, loss=-1.0),
            policy=rf.policies.SelectiveExpectimax(expansion_budget=4, top_k=2, n_heads=2),
            learner=rf.learners.TreeStrap(outcome_weight=0.5),
            n_games=3,
        ),
        lambda: linear_q(5 * 7 * 7, 3, heads=2),
    ),
}


def split(blob: bytes):
    """(envelope header, body after the digest) of a well-formed blob."""
    n = struct.unpack("<I", blob[5:9])[0]
    pos = 9 + n + 8
    if blob[pos] == 1:
        pos += 5 + struct.unpack("<I", blob[pos + 1 : pos + 5])[0]
    else:
        pos += 1
    return blob[:pos], blob[pos + 32 :]


def reseal(head: bytes, body: bytes) -> bytes:
    return head + hashlib.blake2b(body, digest_size=32).digest() + body


OFFSETS: list[int] = []  # body offsets of the array headers seen by ``parse`` (for the fuzzer)


def parse(body: bytes):
    """(header dict, [(name, code, shape, raw)]) of a body."""
    n = struct.unpack("<I", body[:4])[0]
    header = json.loads(body[4 : 4 + n])
    pos = 4 + n
    count = struct.unpack("<I", body[pos : pos + 4])[0]
    pos += 4
    arrays = []
    for _ in range(count):
        OFFSETS.append(pos)
        ln = body[pos]
        name = body[pos + 1 : pos + 1 + ln].decode()
        pos += 1 + ln
        code, ndim = body[pos], body[pos + 1]
        pos += 2
        shape = struct.unpack(f"<{ndim}Q", body[pos : pos + 8 * ndim])
        pos += 8 * ndim
        size = int(np.prod(shape)) * snapmod._DTYPES[code].itemsize
        arrays.append([name, code, list(shape), body[pos : pos + size]])
        pos += size
    return header, arrays


def build(header, arrays) -> bytes:
    text = snapmod._dump_header(header).encode()
    out = [struct.pack("<I", len(text)), text, struct.pack("<I", len(arrays))]
    for name, code, shape, raw in arrays:
        nm = name.encode()
        out.append(bytes([len(nm)]) + nm + bytes([code, len(shape)]) + struct.pack(f"<{len(shape)}Q", *shape) + raw)
    return b"".join(out)


def _fuzz(blob, n, seed):
    rng = random.Random(seed)
    head, body = split(blob)
    OFFSETS.clear()
    parse(body)
    starts = list(OFFSETS)
    for i in range(n):
        kind = i % 7
        if kind == 6:  # array-header forgeries (name, dtype code, ndim, dims) with a fresh digest
            bb = bytearray(body)
            j = rng.choice(starts) + rng.randrange(40)
            for t in range(rng.randint(1, 3)):
                if j + t < len(bb):
                    bb[j + t] = rng.choice([0, 1, 2, 3, 4, 5, 9, 0x7F, 0x80, 0xFF, rng.randrange(256)])
            yield reseal(head, bytes(bb))
            continue
        b = bytearray(blob)
        if kind == 0:  # random bit flips anywhere
            for _ in range(rng.randint(1, 4)):
                j = rng.randrange(len(b))
                b[j] ^= 1 << rng.randrange(8)
        elif kind == 1:  # truncation
            b = b[: rng.randrange(len(b))]
        elif kind == 2:  # extension
            b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif kind == 3:  # body mutation with a recomputed digest (a forger)
            bb = bytearray(body)
            for _ in range(rng.randint(1, 3)):
                j = rng.randrange(min(len(bb), 4096)) if rng.random() < 0.7 else rng.randrange(len(bb))
                bb[j] = rng.randrange(256)
            b = bytearray(reseal(head, bytes(bb)))
        elif kind == 4:  # random garbage, sometimes with the magic
            b = bytearray(rng.randbytes(rng.randrange(200)))
            if rng.random() < 0.5:
                b[:5] = b"RFGS\x01"
        else:  # header-field forgeries (lengths, presence, schema)
            j = rng.choice([4, 5, 6, 7, 8, 73, 80, 81, 82, 83, 84, 85, 86, 87, 88])
            b[j] = rng.randrange(256)
        yield bytes(b)
