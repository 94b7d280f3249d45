"""Architecture rules: reinfors/jit is kernels only and never imports orchestration.

The rules cover every ``.py`` file under ``reinfors/jit``, the kernel parts of
``reinfors/jit/kernels`` (instantiated per game by ``reinfors/_runtime/codegen.py``) included."""

from __future__ import annotations

import ast
from pathlib import Path

import reinfors

PKG = Path(reinfors.__file__).resolve().parent
FORBIDDEN = ("threading", "queue", "concurrent", "multiprocessing", "asyncio")
ALLOWED_STDLIB = {
    "__future__",
    "hashlib",
    "math",
    "numbers",
    "operator",
    "os",
    "sys",
    "tempfile",
    "warnings",
    "re",  # the compile policy: cache directory names (_compile.py)
    "shutil",  # the compile policy: pruning stale cache directories (_compile.py)
    "pathlib",
    "time",
    "typing",
}
# Pure argument-conversion leaf (imports only the stdlib and numpy): game files use it in make_params.
# ctypes is there for PySequence_Check, the test PyO3's Vec extraction makes.
ALLOWED_LEAVES = {"reinfors._validate"}


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom):
            yield ("." * node.level) + (node.module or "")


def test_jit_imports_only_numpy_numba_and_itself():
    bad = []
    for path in (PKG / "jit").rglob("*.py"):
        for name in _imports(path):
            root = name.split(".")[0]
            if name.startswith(".") or name.startswith("reinfors.jit") or name in ALLOWED_LEAVES:
                continue
            if root in ("numpy", "numba", "llvmlite"):
                continue
            if root in ALLOWED_STDLIB and root not in FORBIDDEN:
                continue
            bad.append(f"{path.relative_to(PKG)}: {name}")
    assert not bad, bad


def test_the_kernel_parts_are_covered():
    """The kernels are ordinary .py files (no text templates the rules above could miss)."""
    parts = {p.name for p in (PKG / "jit" / "kernels").glob("*.py")}
    assert {"game_kernels.py", "engine_records.py", "engine_slots.py", "search_driver.py"} <= parts
    assert not list(PKG.rglob("*.tmpl"))


def test_allowed_leaves_import_nothing_of_the_package():
    for leaf in ALLOWED_LEAVES:
        path = PKG / (leaf.split(".", 1)[1] + ".py")
        for name in _imports(path):
            assert name.split(".")[0] in ("__future__", "ctypes", "math", "numbers", "operator", "numpy"), (leaf, name)


def test_no_parallel_true_inside_jit_and_no_njit_outside():
    for path in (PKG / "jit").rglob("*.py"):
        assert "parallel=True" not in path.read_text().replace(" ", ""), path
    for path in PKG.rglob("*.py"):
        parts = path.relative_to(PKG).parts
        if "jit" in parts or "__jitcache__" in parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                for dec in node.decorator_list:
                    target = dec.func if isinstance(dec, ast.Call) else dec
                    label = ast.unparse(target)
                    assert label.split(".")[-1] not in ("njit", "jit", "kernel", "leaf"), f"{path}: {label}"


def test_no_test_module_imports_another():
    """Shared test code lives in tests/helpers.py (and non-test modules such as
    tests/differential/harness.py), never in a test module another one imports."""
    tests = Path(__file__).resolve().parent
    bad = []
    for path in tests.rglob("*.py"):
        for name in _imports(path):
            if name.lstrip(".").split(".")[-1].startswith("test_"):
                bad.append(f"{path.relative_to(tests)}: {name}")
    assert not bad, bad
