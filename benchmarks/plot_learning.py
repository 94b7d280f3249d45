"""Plot win rate against wall minutes from ``examples/train_alphazero_connect4.py`` logs.

    python benchmarks/plot_learning.py LABEL=LOGDIR [LABEL=LOGDIR ...] --out curve.svg

Each ``LOGDIR/log.jsonl`` contributes its ``"eval"`` rows (``minutes``, ``win_rate``); the curves
share one axis, with the 0.90 target drawn.  Needs matplotlib.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def curve(logdir: str) -> list[tuple[float, float]]:
    """``(minutes, win_rate)`` of every evaluation row of ``logdir/log.jsonl``."""
    rows = [json.loads(line) for line in (Path(logdir) / "log.jsonl").read_text().splitlines() if line.strip()]
    return [(r["minutes"], r["win_rate"]) for r in rows if r.get("kind") == "eval"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="LABEL=LOGDIR")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="Connect4: win rate vs Minimax(depth=2), 200 games")
    args = ap.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for spec in args.runs:
        label, _, logdir = spec.partition("=")
        pts = curve(logdir)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.axhline(0.9, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("wall minutes (training and evaluation)")
    ax.set_ylabel("win rate")
    ax.set_ylim(0, 1.02)
    ax.set_title(args.title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
