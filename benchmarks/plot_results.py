"""Draw the Benchmarks page's plots from ``benchmarks/results.json``.

    python benchmarks/plot_results.py [--out docs/assets/benchmarks]

Writes ``ratios.svg`` (this package's records/s over 0.4.0's per workload, median and range of
the paired runs, log scale) and ``rates.svg`` (records/s of both builds, log scale).  The docs
build runs this script (``docs/hooks.py``) when matplotlib is installed; the SVGs are committed
so the site builds without it.  The output is deterministic (no dates, fixed hash salt), so an
unchanged results file leaves the committed files unchanged.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load(path: Path = ROOT / "benchmarks" / "results.json") -> list[dict]:
    """The engine workloads of the results file, sorted by ratio (largest first)."""
    return sorted(json.loads(path.read_text())["workloads"], key=lambda w: -w["ratio"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "assets" / "benchmarks")
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "reinfors-benchmarks"
    args.out.mkdir(parents=True, exist_ok=True)
    ws = load()
    names = [w["name"] for w in ws][::-1]
    ratios = [w["ratio"] for w in ws][::-1]
    lo = [w["ratio"] - w.get("range", [w["ratio"]] * 2)[0] for w in ws][::-1]
    hi = [w.get("range", [w["ratio"]] * 2)[1] - w["ratio"] for w in ws][::-1]

    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    ax.barh(names, ratios, xerr=[lo, hi], color="#7986cb", ecolor="#333", capsize=3)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.axvline(2.0, color="#c62828", ls="--", lw=1.0, zorder=3, label="2x: the project's target")
    ax.set_xscale("log")
    ax.set_xticks([1, 2, 3, 5, 10, 15])
    ax.set_xticklabels(["1x", "2x", "3x", "5x", "10x", "15x"])
    ax.set_xlabel("records/s, this package / reinfors 0.4.0 (median and range of paired runs)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out / "ratios.svg", metadata={"Date": None})
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    y = range(len(names))
    ax.barh([i + 0.2 for i in y], [w["ours"] for w in ws][::-1], height=0.4, label="this package", color="#3f51b5")
    ax.barh([i - 0.2 for i in y], [w["orig"] for w in ws][::-1], height=0.4, label="reinfors 0.4.0", color="#9e9e9e")
    ax.set_yticks(list(y))
    ax.set_yticklabels(names)
    ax.set_xscale("log")
    ax.set_xlabel("records/s (n_threads=2, 2-core VM)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out / "rates.svg", metadata={"Date": None})
    plt.close(fig)


if __name__ == "__main__":
    main()
