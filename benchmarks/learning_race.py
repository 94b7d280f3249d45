"""The learning race: the same self-play + training code under this package and under reinfors 0.4.0.

    python benchmarks/learning_race.py --build this --minutes 20 --out runs/race
    python benchmarks/learning_race.py --build orig --minutes 20 --out runs/race   # re-runs itself in .venv-orig
    python benchmarks/learning_race.py --evaluate runs/race [--plot docs/assets/benchmarks/learning_race.png]
    python benchmarks/learning_race.py --build this --policy gumbel --sims 4 --minutes 10 --label gumbel4_s0 --out runs/gumbel

``--policy`` / ``--sims`` / ``--seed`` change the example's self-play search (the Gumbel study of
docs/gumbel-alphazero.md runs the same harness, one ``--label`` per configuration).

A run imports ``examples/train_alphazero_connect4.py`` and drives its ``self_play`` loop (one
``collect_stream``, a replay window, Adam steps, ``weights_updated()``: public API that both builds
share) with the example's default hyperparameters, network and seed, for ``--minutes`` of wall
clock, and saves the learner at fixed wall times (1, 2, 5, 10, 20 minutes, those before the
budget, and at its end; the clock starts before the engine is built).  Nothing is evaluated during the run, so
both builds spend the whole budget on self-play and training.  ``--build orig`` re-executes this
script with the original's interpreter (``$REINFORS_ORIG_PYTHON`` or ``.venv-orig/bin/python``,
made by ``scripts/setup_orig_venv.sh``).

``--evaluate`` then scores every saved checkpoint of both builds with this package against the
solver-labelled position sets (``examples/evaluate_connect4.py``: the raw policy and the greedy
64-simulation search, optimal-move rates) and prints a table (and ``race.json``; ``--plot`` draws
the optimal-move rate against wall minutes, both builds).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
MARKS = (1.0, 2.0, 5.0, 10.0, 20.0)


def which_build() -> str:
    """``"this"`` when the importable ``reinfors`` is this package (it has ``reinfors.jit``), else ``"orig"``."""
    return "this" if importlib.util.find_spec("reinfors.jit") is not None else "orig"


def orig_python() -> str:
    py = os.environ.get("REINFORS_ORIG_PYTHON") or str(ROOT / ".venv-orig" / "bin" / "python")
    if not Path(py).exists():
        raise SystemExit(f"no reinfors 0.4.0 interpreter at {py}: run `bash scripts/setup_orig_venv.sh .venv-orig`")
    return py


def run(build: str, minutes: float, out: Path, seed: int, label: str, train_args: list[str]) -> dict:
    """Self-play and train for ``minutes``; save ``<out>/<label>/m<mark>`` checkpoints; return the run's summary."""
    t_start = time.perf_counter()

    import train_alphazero_connect4 as az

    import reinfors as rf

    args = az.parse(["--minutes", str(minutes), "--seed", str(seed), "--backend", "numpy", *train_args])
    folder = out / label
    folder.mkdir(parents=True, exist_ok=True)
    engine, learner, collector, lock = az.build(args, rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0, draw=0.0))
    budget = minutes * 60.0
    marks = [m for m in MARKS if m < minutes - 1e-9] + [minutes]  # and always the budget's end
    saved, records, decisions, updates = [], 0, 0, 0
    loop = az.self_play(args, engine, learner, collector, lock, clock=lambda: (time.perf_counter() - t_start) / budget)
    for batch, _steps, _stats, _stream in loop:
        records += len(batch.obs)
        decisions += int(batch.telemetry.get("decisions", 0))
        updates += 1
        elapsed = (time.perf_counter() - t_start) / 60.0
        while marks and elapsed >= marks[0]:
            path = learner.save(folder / f"m{marks[0]:g}", az.checkpoint_meta(args))
            saved.append({"mark": marks.pop(0), "minutes": round(elapsed, 3), "records": records, "checkpoint": str(path)})
            print(f"[{label}] {elapsed:6.2f} min: {records:,} records, {updates} updates -> {path.name}", flush=True)
        if not marks:
            break
    loop.close()
    summary = {
        "build": build, "label": label, "policy": args.policy, "reinfors": getattr(rf, "__version__", "?"), "minutes": minutes, "seed": seed,
        "records": records, "decisions": decisions, "updates": updates, "checkpoints": saved,
        "n_games": args.n_games, "sims": args.sims, "hidden": args.hidden, "gamma": args.gamma, "cpus": os.cpu_count(),
    }  # fmt: skip
    (folder / "run.json").write_text(json.dumps(summary, indent=1))
    return summary


def evaluate(out: Path, plot: str | None, limit: int | None, sims: int = 64) -> dict:
    """Score every checkpoint under ``out`` on the solver sets; print the table; write ``race.json``."""
    from _nets import load_net
    from evaluate_connect4 import DEFAULT_SETS, PositionSet, score_net

    sets = [PositionSet(p, limit) for p in DEFAULT_SETS if p.exists()]
    if not sets:
        raise SystemExit("no position sets in benchmarks/data (benchmarks/connect4_solver.py make-sets)")
    rows = []
    runs = sorted(out.glob("*/run.json"), key=lambda p: (p.parent.name != "this", p.parent.name != "orig", p.parent.name))
    for meta_path in runs:
        meta = json.loads(meta_path.read_text())
        for ck in meta["checkpoints"]:
            net, net_meta = load_net(ck["checkpoint"])  # scored with the same greedy search: AlphaZero(sims)
            scores = score_net(sets, net, sims, float(net_meta.get("gamma", 1.0)))
            row = {"build": meta.get("build", meta_path.parent.name), "label": meta_path.parent.name}
            rows.append({**row, **{k: ck[k] for k in ("mark", "minutes", "records")}, "scores": scores})
    names = [s.path.stem for s in sets]
    print(f"{'run':14s} {'minutes':>7s} {'records':>10s}  " + "  ".join(f"{n + ' policy / search':>34s}" for n in names))
    for r in rows:
        cells = "  ".join(f"{r['scores'][n]['policy_optimal']:>16.3f} / {r['scores'][n]['search_optimal']:<15.3f}" for n in names)
        print(f"{r['label']:14s} {r['minutes']:7.2f} {r['records']:10,d}  {cells}")
    (out / "race.json").write_text(json.dumps(rows, indent=1))
    if plot:
        draw(rows, names, plot)
    return {"rows": rows}


def draw(rows: list, names: list, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(names), figsize=(5.5 * len(names), 3.8), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        for build, colour in (("this", "tab:blue"), ("orig", "tab:orange")):
            pts = [r for r in rows if r["label"] == build]
            if not pts:
                continue
            label = "this package" if build == "this" else "reinfors 0.4.0"
            m = [p["minutes"] for p in pts]
            ax.plot(m, [p["scores"][name]["search_optimal"] for p in pts], "o-", c=colour, label=f"{label}, search (64)")
            ax.plot(m, [p["scores"][name]["policy_optimal"] for p in pts], "s--", c=colour, alpha=0.7, label=f"{label}, raw policy")
        ax.set(xlabel="wall minutes (2 cores)", ylabel="optimal-move rate", title=name, ylim=(0.5, 1.0))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def passthrough(args) -> list[str]:
    """The options a re-executed leg must get again."""
    pairs = (("--label", args.label), ("--policy", args.policy), ("--sims", args.sims))
    return [a for k, v in pairs if v is not None for a in (k, str(v))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", choices=("this", "orig"), help="run the race leg of this build")
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="runs/learning_race")
    ap.add_argument("--label", default=None, help="the run's folder under --out (default: the build)")
    ap.add_argument("--policy", choices=("puct", "gumbel"), default=None, help="the example's self-play search (default: its default)")
    ap.add_argument("--sims", type=int, default=None, help="self-play simulations (default: the example's)")
    ap.add_argument("--evaluate", metavar="OUT", help="score the checkpoints of both legs under OUT")
    ap.add_argument("--plot", default=None, help="with --evaluate: write the plot here")
    ap.add_argument("--limit", type=int, default=None, help="with --evaluate: only the first N positions of each set")
    ap.add_argument("--eval-sims", type=int, default=64, help="with --evaluate: simulations of the scored search")
    args = ap.parse_args(argv)
    if args.evaluate:
        evaluate(Path(args.evaluate), args.plot, args.limit, args.eval_sims)
        return 0
    if args.build is None:
        ap.error("give --build this|orig or --evaluate OUT")
    if args.minutes <= 0:
        ap.error("--minutes must be > 0")
    if which_build() != args.build:
        if args.build == "this":
            raise SystemExit("--build this needs this package importable (pip install -e .)")
        cmd = [orig_python(), str(Path(__file__).resolve()), "--build", "orig", "--minutes", str(args.minutes)]
        cmd += ["--seed", str(args.seed), "--out", str(Path(args.out).resolve()), *passthrough(args)]
        return subprocess.call(cmd, cwd="/", env={**os.environ, "PYTHONPATH": ""})  # "/": never this checkout's reinfors
    out = Path(args.out).resolve()
    train_args = [a for k, v in (("--policy", args.policy), ("--sims", args.sims)) if v is not None for a in (k, str(v))]
    print(json.dumps(run(args.build, args.minutes, out, args.seed, args.label or args.build, train_args)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
