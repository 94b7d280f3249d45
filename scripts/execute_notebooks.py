"""Execute the tutorial notebooks top to bottom and save them with their outputs.

    nice -n 19 python scripts/execute_notebooks.py [notebooks/*.ipynb ...]

The notebooks are committed with the outputs of one clean run (the docs site renders them; a
reader sees the results without running anything).  This script runs each notebook in a fresh
kernel from the repository root with full settings (no ``REINFORS_NB_QUICK``), drops the
one-time compile notices (they name this machine's cache path) and per-cell timing metadata, and
writes the notebook back.  ``tests/test_notebooks.py`` checks that committed outputs come from
such a run (execution counts 1, 2, 3, … in order, no errors) and still executes each notebook.
Run it with a warm compile cache (any earlier run) and on a quiet machine: the training notebook
trains for four minutes and its plots show what that bought.  ``scripts/strip_notebooks.py``
removes the outputs again.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbclient
import nbformat

ROOT = Path(__file__).resolve().parents[1]


def clean(nb) -> None:
    """Drop compile notices and volatile metadata from an executed notebook, in place."""
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        keep = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                lines = [ln for ln in out["text"].splitlines(True) if not ln.startswith("reinfors: compiling")]
                if not "".join(lines).strip():
                    continue
                out["text"] = "".join(lines)
            keep.append(out)
        cell.outputs = keep


def run(path: Path) -> None:
    env_before = dict(os.environ)
    os.environ.pop("REINFORS_NB_QUICK", None)
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env_before.get("PYTHONPATH")]))
    try:
        nb = nbformat.read(path, as_version=4)
        nbclient.NotebookClient(nb, timeout=1800, kernel_name="python3").execute(cwd=str(ROOT))
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    clean(nb)
    nbformat.write(nb, path)
    print(f"executed: {path}")


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for p in paths:
        run(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
