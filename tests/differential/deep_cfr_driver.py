"""Deep CFR probes run identically on both builds (public API only).

``python deep_cfr_driver.py`` (under the side venv) prints the JSON of :func:`probe`;
``tests/differential/test_deep_cfr_vs_original.py`` calls :func:`probe` in-process on this
package and compares.  Sample *order* and deal-dependent values (targets, observations) are
scheduling and chance-stream details, so batches are compared as sorted multisets of their
deal-independent parts under callbacks that make every strategy deal-independent.
"""

from __future__ import annotations

import json
import zlib

import numpy as np

FIELDS = (
    "advantage_obs",
    "advantage_iterations",
    "advantage_legal_offsets",
    "advantage_legal_ids",
    "advantage_targets",
    "strategy_obs",
    "strategy_iterations",
    "strategy_players",
    "strategy_legal_offsets",
    "strategy_legal_ids",
    "strategy_probs",
)


def _hashed(n_actions):
    def f(obs):
        out = np.zeros((len(obs), n_actions))
        for i, row in enumerate(obs):
            h = zlib.crc32(np.ascontiguousarray(row).tobytes())
            out[i] = [((h >> (3 * a)) % 7) - 3 for a in range(n_actions)]
        return out

    return f


def _outcome(fn):
    try:
        return {"ok": fn()}
    except Exception as e:  # noqa: BLE001 - compared across builds
        return {"error": type(e).__name__, "message": str(e)}


def _summary(b):
    out = {"fields": {n: [str(getattr(b, n).dtype), list(getattr(b, n).shape)] for n in FIELDS}}
    out["telemetry_keys"] = list(b.telemetry)
    out["counts"] = {k: b.telemetry[k] for k in ("player", "traversals", "advantage_samples", "strategy_samples")}
    ao, so = b.advantage_legal_offsets, b.strategy_legal_offsets
    out["adv"] = sorted(
        [b.advantage_legal_ids[ao[i] : ao[i + 1]].tolist(), int(b.advantage_iterations[i])] for i in range(len(ao) - 1)
    )
    out["strat"] = sorted(
        [
            b.strategy_legal_ids[so[i] : so[i + 1]].tolist(),
            [round(x, 12) for x in b.strategy_probs[so[i] : so[i + 1]].tolist()],
            int(b.strategy_players[i]),
            int(b.strategy_iterations[i]),
        ]
        for i in range(len(so) - 1)
    )
    out["offsets_start"] = [int(ao[0]), int(so[0])]
    return out


def probe(rf) -> dict:
    G = rf.games
    res = {}
    # batches under deal-independent strategies (every row the same advantages)
    for name, game, player, trav, row, iters in [
        ("kuhn_p0_zero", G.KuhnPoker(), 0, 5, [0.0, 0.0], 1),
        ("kuhn_p1_zero", G.KuhnPoker(), 1, 5, [0.0, 0.0], 2),
        ("kuhn_p0_mixed", G.KuhnPoker(), 0, 1, [1.0, 3.0], 1),
        ("kuhn3_p1_zero", G.KuhnPoker(players=3), 1, 4, [0.0, 0.0], 1),
        ("leduc_p0_zero", G.LeducPoker(), 0, 4, [0.0, 0.0, 0.0], 3),
        ("leduc_p1_zero", G.LeducPoker(), 1, 3, [0.0, 0.0, 0.0], 1),
        ("leduc_p0_neg", G.LeducPoker(), 0, 2, [-1.0, -3.0, -2.0], 1),
        ("kuhn_p0_none", G.KuhnPoker(), 0, 0, [0.0, 0.0], 1),
    ]:
        s = rf.solvers.DeepCfr(game, seed=11)
        for _ in range(iters):
            s.next_iteration()
        r = np.array(row)
        if name == "kuhn_p0_mixed":
            # one traversal: the opponent's sampled actions decide the tree, so only shapes of a
            # single-row-strategy batch that cannot vary are compared below
            b = s.collect(player, trav, lambda o, r=r: np.tile(r, (len(o), 1)))
            probs = b.strategy_probs.round(12).tolist()
            distinct = sorted({tuple(probs[i : i + 2]) for i in range(0, len(probs), 2)})
            res[name] = {"strat_probs": [list(p) for p in distinct], "n": len(probs)}
            continue
        b = s.collect(player, trav, lambda o, r=r: np.tile(r, (len(o), 1)))
        res[name] = _summary(b)
    # exploitability: constant and observation-hashed policies
    ex = {}
    for name, game, row in [
        ("kuhn_uniform", G.KuhnPoker(), [0.5, 0.5]),
        ("kuhn_13", G.KuhnPoker(), [1.0, 3.0]),
        ("kuhn_21", G.KuhnPoker(), [2.0, 1.0]),
        ("kuhn_tiny", G.KuhnPoker(), [1e-300, 0.0]),
        ("kuhn_nan", G.KuhnPoker(), [float("nan"), float("nan")]),
        ("kuhn_neg", G.KuhnPoker(), [-1.0, -2.0]),
        ("kuhn3_ones", G.KuhnPoker(players=3), [1.0, 1.0]),
        ("kuhn4_bet", G.KuhnPoker(players=4), [0.2, 0.7]),
        ("kuhn5_ones", G.KuhnPoker(players=5), [1.0, 1.0]),
        ("leduc_ones", G.LeducPoker(), [1.0, 1.0, 1.0]),
        ("leduc_call", G.LeducPoker(), [0.0, 1.0, 0.0]),
        ("leduc_raise", G.LeducPoker(), [0.0, 0.0, 1.0]),
    ]:
        r = np.array(row)
        ex[name] = rf.solvers.DeepCfr(game).exploitability(lambda o, r=r: np.tile(r, (len(o), 1)))
    hashed_games = [("kuhn_hashed", G.KuhnPoker()), ("kuhn3_hashed", G.KuhnPoker(players=3))]
    for name, game in hashed_games + [("leduc_hashed", G.LeducPoker())]:
        ex[name] = rf.solvers.DeepCfr(game).exploitability(_hashed(game.action_space().n))
    res["exploitability"] = ex
    # errors
    K = G.KuhnPoker()
    z = lambda o: np.zeros((len(o), 2))  # noqa: E731
    fresh = rf.solvers.DeepCfr(K)
    s = rf.solvers.DeepCfr(K)
    s.next_iteration()
    calls = [
        lambda: fresh.collect(0, 1, z),
        lambda: fresh.collect(2, 1, 5),
        lambda: fresh.collect(0, 1, 5),
        lambda: s.collect(0, 2, lambda o: np.zeros((len(o), 2), np.int32)),
        lambda: s.collect(0, 2, lambda o: [[0.0, 0.0]] * len(o)),
        lambda: s.collect(0, 2, lambda o: np.zeros(len(o))),
        lambda: s.collect(0, 2, lambda o: np.zeros((len(o), 1, 2))),
        lambda: s.collect(0, 1, lambda o: np.zeros((len(o), 3))),
        lambda: s.collect(0, 1, lambda o: np.zeros((len(o) + 1, 2))),
        lambda: s.collect(0, 2, lambda o: np.full((len(o), 2), np.inf)),
        lambda: s.collect(0, 2, lambda o: (np.zeros((len(o), 2)),)),
        lambda: s.collect(0, 2, 5),
        lambda: s.collect(0, 2, None),
        lambda: s.collect(0, 2, [z]),
        lambda: s.collect(0, 2, [z, z, z]),
        lambda: s.collect(0, 2, [z, 5]),
        lambda: s.collect(-1, 2, z),
        lambda: s.collect("a", 2, z),
        lambda: s.collect(0, -1, z),
        lambda: s.collect(0, 1.5, z),
        lambda: s.collect(2, 0, z),
        lambda: s.collect(True, 1, (z, z)).telemetry["player"],
        lambda: s.exploitability(5),
        lambda: s.exploitability([z, z]),
        lambda: s.exploitability(lambda o: np.ones((len(o), 2), np.int32)),
        lambda: s.exploitability(lambda o: [[0.5, 0.5]] * len(o)),
        lambda: s.exploitability(lambda o: np.ones(len(o))),
        lambda: s.exploitability(lambda o: np.ones((len(o), 3))),
        lambda: s.exploitability(lambda o: np.ones((len(o) + 1, 2))),
        lambda: rf.solvers.DeepCfr(G.KuhnPoker(players=7)).exploitability(z),
        lambda: rf.solvers.DeepCfr(G.Connect4()),
        lambda: rf.solvers.DeepCfr(G.GridWorld()),
        lambda: rf.solvers.DeepCfr("kuhn_poker"),
        lambda: rf.solvers.DeepCfr(K, seed=-1),
        lambda: rf.solvers.DeepCfr(K, seed=2**64),
        lambda: rf.solvers.DeepCfr(K, seed=1.5),
        lambda: rf.solvers.DeepCfr(K, seed=2**64 - 1).resolved_config(),
        lambda: rf.solvers.DeepCfr(G.LeducPoker(), 3).resolved_config(),
        lambda: rf.solvers.DeepCfr(G.KuhnPoker(players=4)).resolved_config(),
        lambda: [rf.solvers.DeepCfr(K).iteration, s.iteration],
        lambda: rf.DeepCfrBatch(),
    ]
    res["errors"] = [_outcome(c) for c in calls]
    return res


if __name__ == "__main__":
    import reinfors

    print(json.dumps(probe(reinfors)))
