"""Write (or check) the ``if TYPE_CHECKING:`` block of every kernel part and solver template.

    python scripts/kernel_part_imports.py [--check]

A kernel part (``reinfors/jit/kernels/*.py``) or solver template (``reinfors/jit/solvers/*.py``)
uses names that its generated module binds: the per-game header (``G_<role>`` and the family
constants, stubbed in ``reinfors/jit/kernels/_header.py``) and the functions, constants and
imports of the other parts it is concatenated with.  For linters and IDEs each part imports them
in a block between the two marker lines below, which this script regenerates: it asks ruff for
the part's undefined names (F821) without the block, and imports each from the part (or header)
that defines it, or repeats the import that brings it into another part.  Run it after editing a
part; ``--check`` exits 1 when a block is stale (``ruff check`` then also reports F821).
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "reinfors" / "jit" / "kernels"
SOLVERS = ROOT / "reinfors" / "jit" / "solvers"
HEADER = KERNELS / "_header.py"
BEGIN = "# -- bound by the generated module (header and sibling parts); for linters and IDEs only --"
END = "# -- end of bound names (scripts/kernel_part_imports.py) --"
# Template files: the parts, and the solver files the solvers instantiate per game (the rest of
# reinfors/jit/solvers is ordinary modules).
SOLVER_TEMPLATES = ("gametree.py", "mccfr.py", "deep_cfr.py")


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _strip_block(text: str) -> str:
    i = text.find(BEGIN)
    if i < 0:
        return text
    j = text.index(END, i) + len(END)
    return text[:i].rstrip("\n") + "\n" + text[j:].lstrip("\n")


def _definitions(path: Path, text: str) -> dict[str, str]:
    """Top-level names of one file -> the import statement that binds them elsewhere."""
    out = {}
    mod = _module(path)
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = f"from {mod} import {node.name}"
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out[n.id] = f"from {mod} import {n.id}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                name = a.asname or a.name.split(".")[0]
                out[name] = f"import {a.name} as {a.asname}" if a.asname else f"import {a.name}"
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for a in node.names:
                name = a.asname or a.name
                out[name] = f"from {node.module} import {a.name}" + (f" as {a.asname}" if a.asname else "")
    return out


def _undefined(path: Path, text: str) -> list[str]:
    res = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "F821", "--output-format", "json",
         "--stdin-filename", str(path), "-"],
        input=text, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    if res.returncode not in (0, 1):
        raise SystemExit(res.stderr)
    names = {d["message"].split("`")[1] for d in json.loads(res.stdout or "[]")}
    return sorted(names)


def _sorted_imports(imports: list[str], indent: str) -> list[str]:
    """isort's order: ``import`` lines, then ``from`` lines (merged per module), third-party
    before first-party (``reinfors``), a blank line between the two sections."""
    sections: dict[str, list[str]] = {"third": [], "first": []}
    froms: dict[str, list[str]] = {}
    for i in sorted(set(imports)):
        if i.startswith("import "):
            sections["first" if i.startswith("import reinfors") else "third"].append(indent + i)
        else:
            mod, rest = i[5:].split(" import ", 1)
            froms.setdefault(mod, []).append(rest)
    for mod, names in sorted(froms.items()):
        line = f"{indent}from {mod} import {', '.join(sorted(names))}"
        sections["first" if mod.startswith("reinfors") else "third"].append(line)
    out = sections["third"]
    if out and sections["first"]:
        out = out + [""]
    return out + sections["first"]


def _isort(path: Path, text: str) -> str:
    """``text`` with ruff's import sorting applied (the repository's settings)."""
    res = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--fix-only", "--select", "I001", "--stdin-filename", str(path), "-"],
        input=text, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    if res.returncode != 0:
        raise SystemExit(res.stderr)
    return res.stdout


def _block(imports: list[str]) -> str:
    """Names other modules define: real imports; names of the header and the sibling parts
    (bound by the generated module): imports under ``if TYPE_CHECKING:``."""
    bound = [i for i in imports if i.startswith("from reinfors.jit.kernels")]
    real = [i for i in imports if i not in bound]
    lines = [BEGIN, "from typing import TYPE_CHECKING", ""]
    if real:
        lines += _sorted_imports(real, "") + [""]
    if bound:
        lines += ["if TYPE_CHECKING:"] + _sorted_imports(bound, "    ")
    else:
        lines = [BEGIN] + (_sorted_imports(real, "") if real else [])
    lines.append(END)
    return "\n".join(lines) + "\n"


def _insert(text: str, block: str) -> str:
    """After the file's last top-level import (or its leading docstring / comments)."""
    tree = ast.parse(text)
    end = 0
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            end = node.end_lineno
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node is tree.body[0]:
            end = node.end_lineno
        else:
            break
    lines = text.splitlines(keepends=True)
    if end == 0:  # only comments before the code: after the leading comment lines
        while end < len(lines) and (lines[end].startswith("#") or not lines[end].strip()):
            end += 1
    head = "".join(lines[:end]).rstrip("\n")
    tail = "".join(lines[end:]).lstrip("\n")
    return (head + "\n\n" if head else "") + block + "\n\n" + tail


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    parts = sorted(p for p in KERNELS.glob("*.py") if not p.name.startswith("_"))
    templates = parts + [SOLVERS / n for n in SOLVER_TEMPLATES]
    full = {p: p.read_text() for p in templates}
    texts = {p: _strip_block(t) for p, t in full.items()}
    # Who binds a name: the header first, then the parts (a real part before the model-free
    # stub that mirrors the search entry points), then the solver templates.
    defs: dict[str, str] = {}
    for p in [HEADER, *sorted(templates, key=lambda p: (p.name == "search_stub.py", p.name))]:
        for name, stmt in _definitions(p, full.get(p) or p.read_text()).items():
            defs.setdefault(name, stmt)
    stale = []
    for p in templates:
        text = texts[p]
        missing = _undefined(p, text)
        unknown = [n for n in missing if n not in defs]
        if unknown:
            raise SystemExit(f"{p.relative_to(ROOT)}: no part or header defines {unknown}")
        new = _isort(p, _insert(text, _block([defs[n] for n in missing]))) if missing else text
        if new != full[p]:
            stale.append(p)
            if not args.check:
                p.write_text(new)
    for p in stale:
        print(("stale: " if args.check else "wrote: ") + str(p.relative_to(ROOT)))
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
