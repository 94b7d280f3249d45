"""Every fenced ``python`` block of README.md and docs/**/*.md runs, so the docs cannot rot.

The blocks of one page run in order in one namespace (a page reads like one session), in a
temporary working directory.  A block may opt out only when it needs something the suite does
not have — a GPU, a Ray cluster, torch — with a marker on the line just above its fence::

    <!-- snippet: skip (needs Ray) -->

The reasons allowed are those three; the test fails on any other reason, on a marker that is not
followed by a python block, and when more than ``MAX_SKIPPED`` blocks opt out.
"""

from __future__ import annotations

import linecache
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SKIP = re.compile(r"^<!-- snippet: skip \((needs a GPU|needs Ray|needs torch)\) -->$")
MARKER = re.compile(r"^<!-- snippet:")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
MAX_SKIPPED = 8


def blocks(path: Path) -> list[tuple[int, str, bool]]:
    """``(first line, source, skipped)`` of each fenced python block of ``path``."""
    out: list[tuple[int, str, bool]] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if MARKER.match(lines[i].strip()):
                nxt = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
                assert SKIP.match(lines[i].strip()), f"{path.name}:{i + 1}: bad marker {lines[i]!r}"
                assert nxt and nxt.group(3) == "python", f"{path.name}:{i + 1}: marker not above a python block"
            i += 1
            continue
        indent, fence, lang = m.groups()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        if lang == "python":
            body = "\n".join(line[len(indent) :] for line in lines[i + 1 : j])
            skipped = i > 0 and bool(SKIP.match(lines[i - 1].strip()))
            out.append((i + 2, body, skipped))
        i = j + 1
    return out


PAGES_WITH_CODE = [p for p in PAGES if blocks(p)]


def test_pages_are_found_and_skips_are_few():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES_WITH_CODE}
    assert {"README.md", "docs/getting-started.md"} <= names
    skipped = [(p.name, line) for p in PAGES for line, _, s in blocks(p) if s]
    assert len(skipped) <= MAX_SKIPPED, skipped


@pytest.mark.parametrize("path", PAGES_WITH_CODE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_snippets_run(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    # A real, importable module: Numba's on-disk cache of a page's @njit game refers to its
    # functions by module name, and loads them back by importing that name.
    name = "docs_snippets_" + re.sub(r"\W", "_", path.relative_to(ROOT).with_suffix("").as_posix())
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)
    namespace = module.__dict__
    for line, source, skipped in blocks(path):
        if skipped:
            continue
        name = f"{path.relative_to(ROOT)}:{line}"
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)  # tracebacks show the block
        code = compile(source, name, "exec")
        exec(code, namespace)  # noqa: S102 - the point of the test


def test_readme_front_page():
    """The first screen says what the package is and holds the two set-up commands and the
    example; nothing dated there (the dated log is benchmarks/RESULTS.md)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    top = "\n".join(lines[:30])
    assert lines[2] == "```bash"
    assert lines[3].endswith("pip install -e . && python examples/quickstart.py")
    assert lines[4].endswith("pip install -e '.[test]' && pytest -n auto --dist loadfile")
    assert "-n auto --dist loadfile" in (ROOT / ".ci" / "run").read_text()  # CI runs the README's command
    assert "```python" in top and "engine.collect(" in top
    assert "generates reinforcement-learning training data" in top and "It is for " in top  # what, for whom
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", top), "a date in the README's first screen"


def test_paths_named_in_the_docs_exist():
    """Every repository file a page names (examples, scripts, benchmarks, modules) exists."""
    pattern = re.compile(r"\b((?:examples|benchmarks|scripts|notebooks|reinfors|tests|docs)/[\w./-]+\.(?:py|md|ipynb|sh|json|tmpl))\b")
    missing, checked = [], 0
    for page in PAGES:
        if "original-0.4.0" in page.parts:
            continue  # notes about the original (they cite evidence files by their paths at the time)
        for name in set(pattern.findall(page.read_text(encoding="utf-8"))):
            checked += 1
            if name != "docs/architecture.md" and not (ROOT / name).exists():
                missing.append(f"{page.relative_to(ROOT)}: {name}")
    assert checked > 20 and not missing, (checked, missing)


def test_generated_sections_are_current():
    """The Benchmarks and Catalogue tables committed in the Markdown equal what the docs build
    generates from benchmarks/results.json and reinfors/catalog.py (``python docs/hooks.py``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reinfors_docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    for section, page in hooks._SECTIONS.items():
        text = (ROOT / page).read_text(encoding="utf-8")
        assert f"<!-- {section}:start -->" in text, page
        assert hooks.fill(text, section) == text, f"{page} is stale: run python docs/hooks.py"
