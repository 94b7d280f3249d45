"""Architecture rules: reinfors/jit is kernels only and never imports orchestration.

The rules cover every ``.py`` file under ``reinfors/jit``, the kernel parts of
``reinfors/jit/kernels`` (instantiated per game by ``reinfors/_runtime/codegen.py``) included."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """``{module: the package modules it imports}`` over every ``.py`` file of the package (the
    generated cache excluded), counting imports anywhere in a file — inside functions too, not
    under ``if TYPE_CHECKING:``.  ``from pkg import name`` counts as importing ``pkg.name`` when
    that is a module, else ``pkg``."""
    files = [p for p in PKG.rglob("*.py") if "__jitcache__" not in p.parts]
    mods = {_module_name(p): p for p in files}
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        out: set[str] = set()
        skip: set[int] = set()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for n in ast.walk(node))
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name in mods)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_pkg else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                subs = {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods}
                if len(subs) < len(node.names) and target in mods:
                    subs.add(target)
                out.update(subs)
        out.discard(name)
        graph[name] = out
    return graph


def test_the_package_has_no_import_circle():
    """No module reaches itself through imports (function-level imports included): the layers
    depend one way (issue 29)."""
    graph = import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not circles, f"import circles: {circles}"


def test_the_circle_check_can_fail(monkeypatch):
    graph = import_graph()
    graph["reinfors.config"].add("reinfors._runtime.compile_helper")
    graph["reinfors._runtime.compile_helper"].add("reinfors.config")
    monkeypatch.setattr(sys.modules[__name__], "import_graph", lambda: graph)
    with pytest.raises(AssertionError, match="import circles"):
        test_the_package_has_no_import_circle()
