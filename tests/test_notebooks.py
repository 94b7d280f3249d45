"""The tutorial notebooks execute top to bottom (small settings via ``REINFORS_NB_QUICK=1``), and
the outputs they are committed with come from one clean run (``scripts/execute_notebooks.py``) —
or they carry none (``scripts/strip_notebooks.py``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_committed_outputs_come_from_one_clean_run():
    assert {p.name for p in NOTEBOOKS} >= {"01_quickstart.ipynb", "02_your_own_game.ipynb", "03_train_alphazero.ipynb"}
    for path in NOTEBOOKS:
        code = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
        counts = [c.get("execution_count") for c in code]
        if all(n is None for n in counts):  # stripped: no outputs at all
            assert not [i for i, c in enumerate(code) if c.get("outputs")], f"{path.name}: outputs without a run"
            continue
        assert counts == list(range(1, len(code) + 1)), f"{path.name}: not one top-to-bottom run {counts}; run scripts/execute_notebooks.py"
        for i, c in enumerate(code):
            for out in c.get("outputs", []):
                assert out.get("output_type") != "error", f"{path.name}: cell {i} failed"
                assert "reinfors: compiling" not in str(out.get("text", "")), f"{path.name}: cell {i} kept a compile notice"


@pytest.mark.parametrize("name", ["02_your_own_game.ipynb", "03_train_alphazero.ipynb"])
def test_notebook_executes(name, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")  # both notebooks plot (the `test` extra installs it)
    monkeypatch.setenv("REINFORS_NB_QUICK", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3").execute(cwd=str(ROOT))
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, f"{name} drew no plot"
