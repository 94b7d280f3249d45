"""Drive ``rf.solvers.Cfr`` through a JSON spec and print a JSON trace (runs under either build).

Used by ``test_cfr_vs_original.py`` (this file runs in reinfors 0.4.0's side venv with ``-I``,
and in-process for this package) and by ``benchmarks/solvers.py`` (timing mode).

spec = {"cases": [{"game": "KuhnPoker", "kwargs": {...}, "variant": "plus", "seed": 0,
                   "checkpoints": [0, 1, 10], "keys": [[0, 0], ...]}],
        "time": {"game": ..., "kwargs": ..., "variant": ..., "iterations": n}  (optional)}
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import time


def trace(rf, case: dict) -> list:
    game = getattr(rf.games, case["game"])(**case.get("kwargs", {}))
    solver = rf.solvers.Cfr(game, variant=case["variant"], seed=case.get("seed", 0))
    out = []
    done = 0
    for cp in case["checkpoints"]:
        solver.iterate(cp - done)
        done = cp
        blob = solver.save()
        out.append(
            {
                "iterations": solver.iterations,
                "num_infosets": solver.num_infosets,
                "num_players": solver.num_players,
                "nash_conv": solver.nash_conv(),
                "exploitability": solver.exploitability(),
                "br": list(solver.best_response_values()),
                "ev": [solver.expected_value(p) for p in range(solver.num_players)],
                "strategies": [solver.average_strategy(bytes(k)) for k in case.get("keys", [])],
                "save_len": len(blob),
                "save_body_sha": hashlib.sha256(blob[69:]).hexdigest(),
                "save_head": base64.b64encode(blob[:5]).decode(),
            }
        )
    return out


def timing(rf, spec: dict) -> dict:
    game = getattr(rf.games, spec["game"])(**spec.get("kwargs", {}))
    solver = rf.solvers.Cfr(game, variant=spec["variant"], seed=spec.get("seed", 0))
    solver.iterate(spec.get("warmup", 1))
    t = time.perf_counter()
    solver.iterate(spec["iterations"])
    dt = time.perf_counter() - t
    value = float(solver.num_infosets) if spec["game"] == "TexasHoldem" else solver.nash_conv()
    return {"seconds": dt, "iterations": spec["iterations"], "nash_conv": value}


def main() -> None:
    import reinfors as rf

    spec = json.loads(sys.argv[1])
    result = {}
    if "cases" in spec:
        result["cases"] = [trace(rf, c) for c in spec["cases"]]
    if "time" in spec:
        result["time"] = timing(rf, spec["time"])
    print(json.dumps(result))


if __name__ == "__main__":
    main()
