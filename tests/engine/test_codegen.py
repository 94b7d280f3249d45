"""The kernel parts (``reinfors/jit/kernels``) and their instantiation per game
(``reinfors/_runtime/codegen.py``): the parts are ordinary modules whose header names are stubbed
in ``kernels/_header.py``, and every family concatenates parts that exist."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from reinfors._runtime import codegen
from reinfors.jit.kernels import _header

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "reinfors" / "jit" / "kernels"


def _header_lines(family="tree+cache"):
    """The header codegen writes for a family (captured without importing anything)."""
    seen = {}

    def fake(kind, name, parts, fns, roles, key, constants=None, what=""):
        seen.update(parts=parts, roles=roles, constants=constants)

    real, codegen.instantiate = codegen.instantiate, fake
    try:
        codegen.kernel_module("g", {r: None for r in codegen.ROLES}, 3, family=family)
    finally:
        codegen.instantiate = real
    return seen


def test_the_header_stub_names_what_codegen_binds():
    seen = _header_lines()
    stub = {n for n in vars(_header) if n.isupper() or n.startswith("G_")} - {"TYPE_CHECKING"}
    assert stub == set(seen["constants"]) | {f"G_{r}" for r in seen["roles"]}


def test_every_family_concatenates_existing_parts_and_no_template_files_remain():
    for family in codegen.FAMILIES:
        for part in _header_lines(family)["parts"]:
            assert part.is_file() and part.parent == KERNELS, part
    assert not list((ROOT / "reinfors").rglob("*.tmpl"))


def test_parts_never_import_their_siblings_at_run_time():
    """Sibling and header names are bound by the generated module: a part imports them only
    under ``if TYPE_CHECKING:`` (a real import would run a part as a module of its own)."""
    for path in sorted(KERNELS.glob("*.py")):
        for node in ast.parse(path.read_text()).body:  # top level only: the TYPE_CHECKING block is an If
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("reinfors.jit.kernels"), f"{path.name}: {node.module}"


def test_the_parts_bound_names_blocks_are_current():
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "kernel_part_imports.py"), "--check"],
                         capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
