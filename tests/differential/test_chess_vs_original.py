"""Differential tests: Chess against reinfors==0.4.0 (side venv).

Seeded random playouts to the end of the game (every terminal rule shows up over the seeds) are
replayed tick by tick: legal lists in the original's generation order (``Env.legal_actions``
and the ``legal_ids`` kernel),
observations of both agents under all four encoders (SHA-256 of the float32 bytes), inspection
state, events, rewards, done flag and ticks.  UCI helpers, constructors, encoder head maps and
their errors are compared outcome for outcome.  Skips cleanly without the side venv.
"""

from __future__ import annotations

import hashlib
import json
import subprocess

import numpy as np
import pytest

import reinfors as rf
from reinfors.jit.games import chess as _chess

from .harness import jsonable, outcome, require_orig

pytestmark = pytest.mark.differential

DRIVER = r'''
import hashlib, json, sys
import numpy as np
import reinfors as rf

def outcome(fn):
    try:
        return {"ok": fn()}
    except Exception as e:
        return {"error": type(e).__name__, "message": str(e)}

def enc(spec):
    return None if spec is None else getattr(rf.encoders, spec[0])(**spec[1])

spec = json.loads(sys.argv[1])
out = {"playouts": [], "uci": [], "act": [], "ctor": [], "heads": []}
for encspec, seeds, kwargs in spec["playouts"]:
    game = rf.games.Chess(encoder=enc(encspec), **kwargs)
    for seed in seeds:
        env = rf.Env(game, rf.Reward(**spec["reward"]), seed=seed)
        rs = np.random.default_rng(seed)
        ticks, steps = [], []
        def tick():
            ticks.append({
                "active": env.active_agents(),
                "legal": env.legal_actions(env.active_agents()[0]) if env.active_agents() else [],
                "obs": [hashlib.sha256(np.ascontiguousarray(env.observe(a), np.float32).tobytes()).hexdigest() for a in (0, 1)],
                "state": env.state(), "done": env.done(), "ticks": env.ticks})
        tick()
        while not env.done() and len(steps) < spec["max_steps"]:
            p = env.active_agents()[0]
            a = int(rs.choice(env.legal_actions(p)))
            ev = env.step({p: a})
            steps.append({"action": a, "events": ev, "rewards": env.rewards})
            tick()
        out["playouts"].append({"fingerprint": env.config_fingerprint(), "ticks": ticks, "steps": steps})
for uci, fen in spec["uci"]:
    out["uci"].append(outcome(lambda: rf.chess_uci_action(uci, fen)))
for a, fen in spec["act"]:
    out["act"].append(outcome(lambda: rf.chess_action_uci(a, fen)))
for kwargs, encspec in spec["ctor"]:
    def make():
        g = rf.games.Chess(encoder=enc(encspec), **kwargs)
        return {"config": rf.Env(g).resolved_config(), "shape": list(g.observation_space().shape),
                "n": g.action_space().n, "horizon": g.truncation_horizon()}
    out["ctor"].append(outcome(make))
for name, a, agent in spec["heads"]:
    e = getattr(rf.encoders, name)()
    out["heads"].append([outcome(lambda: e.head_index(a, agent)), outcome(lambda: e.game_action(a, agent))])
json.dump(out, sys.stdout, default=lambda o: o.decode("latin1") if isinstance(o, bytes) else str(o))
'''

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
KIWI = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
PROMO_W = "r1r1k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
PROMO_B = "4k3/8/8/8/8/8/1p6/R1R1K3 b - - 0 1"
EP = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"
BAD_FENS = [
    "",
    "garbage",
    START[:-4],
    START + " ",
    " " + START,
    START.replace("RNBQKBNR w", "RNBQ1BNR w"),
    "4k3/8/8/8/8/8/8/4K2R w Q - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w KK - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w - - 101 1",
    "4k3/8/8/8/8/8/8/4K2R w - - 0 0",
    "4k3/8/8/8/8/8/8/4K2R w - - 0 65536",
    "4k3/4Q3/8/8/8/8/8/4K3 w - - 0 1",
    "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w K e3 0 1",
    START.replace("KQkq -", "KQkq e6"),
    "kq6/8/8/8/8/8/QQQQQQQQ/QQQQK3 w - - 0 1",
    "4k3/8/8/8/8/8/7/4K2R w - - 0 1",
    "4k3/8/8/8/8/8/9/4K2R w - - 0 1",
]
GOOD_ODD = [
    "4k3/8/8/8/8/8/44/4K2R w K - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w K - +0 01",
    "4k2r/8/8/8/8/8/8/4K2R w kK - 100 65535",
    "4k3/8/8/8/8/8/8/4K2R w H - 0 1",
    START.replace(" w KQkq - 0 1", " b KQkq - 0 1"),
]
UCI_CASES = (
    [(u, START) for u in ("e2e4", "g1f3", "e2e5", "E2E4", "e2e4 ", "", "0000", "e7e5", "e1g1")]
    + [(u, KIWI) for u in ("e1g1", "e1c1", "e1h1", "e1a1", "d5e6", "e2a6")]
    + [(u, PROMO_W) for u in ("b7b8q", "b7b8n", "b7a8b", "b7c8r", "b7b8", "b7b8k")]
    + [(u, PROMO_B) for u in ("b2b1q", "b2a1n", "b2c1r", "b2b1b")]
    + [(u, EP) for u in ("e5f6", "e5d6", "e5e6")]
    + [("e1e2", f) for f in BAD_FENS + GOOD_ODD]
)
ACT_CASES = (
    [(a, START) for a in (584, 585, 136, 129, 501, 494, 0, 1, 307, 308, 513, 648, 1460, 4671, 4672, 10**6)]
    + [(a, KIWI) for a in (308, 337, 306, 334, 2555, 2562, 925, 928)]
    + [(a, PROMO_W) for a in (3577, 3641, 3642, 3643, 3644, 3647, 3860)]
    + [(a, PROMO_B) for a in (1, 724, 727, 9 * 73 + 28, 9 * 73 + 64)]
    + [(a, EP) for a in (36 * 73 + 7, 36 * 73 + 49, 36 * 73)]
    + [(584, f) for f in BAD_FENS]
)
CTOR_CASES = [
    ({}, None),
    ({"max_ticks": 1}, None),
    ({"max_ticks": None}, None),
    ({"max_ticks": 0}, None),
    ({"max_ticks": -1}, None),
    ({"max_ticks": 2**64}, None),
    ({"max_ticks": 2**64 - 1}, None),
    ({"max_ticks": 1.5}, None),
    ({"max_ticks": True}, None),
    ({}, ["MinimalChess", {}]),
    ({}, ["RelativeChess", {}]),
    ({}, ["OpenSpielChess", {}]),
    ({}, ["AlphaZeroChess", {}]),
    ({}, ["AlphaZeroChess", {"history_length": 1}]),
    ({}, ["AlphaZeroChess", {"history_length": 2}]),
    ({"max_ticks": 7}, ["AlphaZeroChess", {"history_length": 300}]),
    ({}, ["AlphaZeroChess", {"history_length": 0}]),
    ({}, ["AlphaZeroChess", {"history_length": -1}]),
    ({}, ["AlphaZeroChess", {"history_length": 2**31}]),
    ({}, ["AlphaZeroChess", {"history_length": 2396745}]),
    ({}, ["AlphaZeroChess", {"history_length": 2396744}]),
    ({}, ["AlphaZeroChess", {"history_length": 2.0}]),
    ({}, ["Connect4", {}]),
]
HEAD_CASES = [
    (name, a, agent)
    for name in ("MinimalChess", "RelativeChess", "OpenSpielChess", "AlphaZeroChess")
    for a, agent in ((100, 0), (100, 1), (0, 1), (4671, 1), (3641, 1), (3644, 1), (3647, 1), (2000, 1), (4000, 2), (4672, 0), (4672, 1))
]
ENCODERS = [None, ["RelativeChess", {}], ["OpenSpielChess", {}], ["AlphaZeroChess", {"history_length": 3}]]


def _encoder(spec):
    return None if spec is None else getattr(rf.encoders, spec[0])(**spec[1])


def _run(spec):
    py = require_orig()
    out = subprocess.run([py, "-I", "-c", DRIVER, json.dumps(spec)], capture_output=True, text=True, timeout=900, cwd="/")
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def _sha(env, agent):
    return hashlib.sha256(np.ascontiguousarray(env.observe(agent), np.float32).tobytes()).hexdigest()


def _replay(spec, want):
    ids = np.zeros(256, np.int64)
    runs = iter(want["playouts"])
    compared = 0
    for encspec, seeds, kwargs in spec["playouts"]:
        game = rf.games.Chess(encoder=_encoder(encspec), **kwargs)
        for seed in seeds:
            run = next(runs)
            env = rf.Env(game, rf.Reward(**spec["reward"]), seed=seed)
            assert env.config_fingerprint() == run["fingerprint"]
            for t, tick in enumerate(run["ticks"]):
                where = f"{encspec} seed {seed} tick {t}"
                if t:
                    st = run["steps"][t - 1]
                    events = env.step({env.active_agents()[0]: st["action"]})
                    assert jsonable(events) == st["events"], where
                    assert env.rewards == st["rewards"], where
                assert env.active_agents() == tick["active"], where
                mover = tick["active"][0] if tick["active"] else None
                legal = env.legal_actions(mover) if mover is not None else []
                assert legal == tick["legal"], where  # the original's generation order
                if mover is not None:
                    n = _chess.legal_ids(game._def.params, env._state, ids)
                    assert [int(a) for a in ids[:n]] == tick["legal"], f"{where}: generation order"
                assert [_sha(env, 0), _sha(env, 1)] == tick["obs"], f"{where}: observations"
                assert jsonable(env.state()) == tick["state"], where
                assert env.done() == tick["done"] and env.ticks == tick["ticks"], where
                compared += 1
    return compared


def _case_outcomes(spec, want):
    for (uci, fen), theirs in zip(spec["uci"], want["uci"], strict=True):
        assert outcome(lambda uci=uci, fen=fen: rf.chess_uci_action(uci, fen)) == theirs, (uci, fen)
    for (a, fen), theirs in zip(spec["act"], want["act"], strict=True):
        assert outcome(lambda a=a, fen=fen: rf.chess_action_uci(a, fen)) == theirs, (a, fen)
    for (kwargs, encspec), theirs in zip(spec["ctor"], want["ctor"], strict=True):

        def make(kwargs=kwargs, encspec=encspec):
            g = rf.games.Chess(encoder=_encoder(encspec), **kwargs)
            return {
                "config": rf.Env(g).resolved_config(),
                "shape": list(g.observation_space().shape),
                "n": g.action_space().n,
                "horizon": g.truncation_horizon(),
            }

        assert outcome(make) == theirs, (kwargs, encspec)
    for (name, a, agent), theirs in zip(spec["heads"], want["heads"], strict=True):
        e = getattr(rf.encoders, name)()
        ours = [outcome(lambda: e.head_index(a, agent)), outcome(lambda: e.game_action(a, agent))]  # noqa: B023
        assert ours == theirs, (name, a, agent)


def test_chess_playouts_helpers_and_ctors_vs_original():
    """Fast tier: two full games per encoder plus every helper / ctor / head-map case."""
    spec = {
        "playouts": [(e, [0, 1], {"max_ticks": None}) for e in ENCODERS] + [(None, [2], {"max_ticks": 40})],
        "reward": {"win": 2.0, "loss": -3.0, "draw": 0.5},
        "max_steps": 1000,
        "uci": UCI_CASES,
        "act": ACT_CASES,
        "ctor": CTOR_CASES,
        "heads": HEAD_CASES,
    }
    want = _run(spec)
    assert _replay(spec, want) > 1000
    _case_outcomes(spec, want)


@pytest.mark.slow
def test_chess_many_playouts_vs_original():
    """Slow tier: 40 full games (all terminal rules occur) under the default encoder and 8 more
    under each other encoder."""
    spec = {
        "playouts": [(None, list(range(10, 50)), {"max_ticks": None})]
        + [(e, list(range(50, 58)), {"max_ticks": None}) for e in ENCODERS[1:]],
        "reward": {},
        "max_steps": 2000,
        "uci": [],
        "act": [],
        "ctor": [],
        "heads": [],
    }
    want = _run(spec)
    assert _replay(spec, want) > 10000
