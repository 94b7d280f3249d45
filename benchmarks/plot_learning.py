"""Plot evaluation metrics against wall minutes from ``examples/train_alphazero_connect4.py`` logs.

    python benchmarks/plot_learning.py LABEL=LOGDIR [LABEL=LOGDIR ...] --out curve.svg
    python benchmarks/plot_learning.py run=LOGDIR --out strength.svg --strength

Each ``LOGDIR/log.jsonl`` contributes its ``"eval"`` rows.  By default the win rate against
Minimax(depth=2) (``win_rate``), with the 0.90 line drawn; ``--strength`` plots the optimal-move
rates on the solver sets instead (``<set>/search_optimal`` solid, ``<set>/policy_optimal``
dashed), with the issue's targets (0.95 / 0.90 for the search on the random / strong set, 0.85
for the raw policy on the random set) drawn.  Needs matplotlib.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

STRENGTH = (
    ("connect4_random/search_optimal", "random-play set, search (64)", "tab:blue", "-", 0.95),
    ("connect4_random/policy_optimal", "random-play set, raw policy", "tab:blue", "--", 0.85),
    ("connect4_strong/search_optimal", "strong-player set, search (64)", "tab:orange", "-", 0.90),
    ("connect4_strong/policy_optimal", "strong-player set, raw policy", "tab:orange", "--", None),
)


def evals(logdir: str) -> list[dict]:
    """Every evaluation row of ``logdir/log.jsonl``."""
    rows = [json.loads(line) for line in (Path(logdir) / "log.jsonl").read_text().splitlines() if line.strip()]
    return [r for r in rows if r.get("kind") == "eval"]


def curve(rows: list[dict], key: str = "win_rate") -> list[tuple[float, float]]:
    """``(minutes, value of key)`` of every evaluation row (``evals``) that has ``key``."""
    return [(r["minutes"], r[key]) for r in rows if key in r]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="LABEL=LOGDIR")
    ap.add_argument("--out", required=True)
    ap.add_argument("--strength", action="store_true", help="optimal-move rates on the solver sets, not the win rate")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for spec in args.runs:
        label, _, logdir = spec.partition("=")
        rows = evals(logdir)  # the log is read once a run
        prefix = f"{label}: " if len(args.runs) > 1 else ""
        if args.strength:
            for key, name, colour, style, target in STRENGTH:
                pts = curve(rows, key)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, c=colour, marker="o", ms=3, label=prefix + name)
                if target is not None and spec == args.runs[0]:
                    ax.axhline(target, color=colour, linestyle=":", linewidth=1)
        else:
            pts = curve(rows)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    if not args.strength:
        ax.axhline(0.9, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("wall minutes (training and evaluation)")
    ax.set_ylabel("optimal-move rate" if args.strength else "win rate")
    ax.set_ylim(0, 1.02)
    default = "Connect4: moves of the best game-theoretic value" if args.strength else "Connect4: win rate vs Minimax(depth=2), 200 games"
    ax.set_title(args.title or default)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
