"""Strip outputs and execution counts from notebooks in place.

The notebooks are committed with the outputs of one clean run (``scripts/execute_notebooks.py``);
strip them before editing a notebook by hand, then execute it again.

    python scripts/strip_notebooks.py [notebooks/*.ipynb ...]

With no arguments it strips every notebook under ``notebooks/``.  ``--check`` only reports the
notebooks that still carry outputs and exits 1 if there are any.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def strip(path: Path, check: bool) -> bool:
    """True when ``path`` had outputs (and, unless ``check``, rewrites it without them)."""
    nb = json.loads(path.read_text())
    dirty = False
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            dirty = True
        cell["outputs"], cell["execution_count"] = [], None
    if dirty and not check:
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return dirty


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    dirty = [p for p in paths if strip(p, check)]
    for p in dirty:
        print(("has outputs: " if check else "stripped: ") + str(p))
    return 1 if check and dirty else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
