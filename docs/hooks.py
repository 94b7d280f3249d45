"""MkDocs hooks for the reinfors site (``mkdocs.yml`` loads this file; it is not a page).

* ``<!-- api pkg.module -->`` on a reference page becomes a mkdocstrings directive that renders
  exactly the module's ``__all__`` (read from the source with ``ast``).
* ``<!-- benchmark-tables -->`` becomes the Benchmarks tables, rendered from
  ``benchmarks/results.json``; before the build, ``benchmarks/plot_results.py`` redraws the plots
  from the same file when matplotlib is installed (the committed SVGs are used otherwise).
* ``<!-- catalogue-tables -->`` becomes the Catalogue tables, from ``reinfors/catalog.py``
  (plain data, loaded by path).
* ``<!-- architecture-link -->`` links the contributor page ``docs/architecture.md`` when that
  file exists (it is written separately), and says where to look until then.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

_MARK = "<!-- architecture-link -->"
# Generated sections are committed between their markers (so the Markdown reads complete in a
# repository browser) and regenerated at every build; tests/test_docs_snippets.py checks that the
# committed text is current (``python docs/hooks.py`` rewrites it).
_SECTIONS = {"benchmark-tables": "docs/benchmarks.md", "catalogue-tables": "docs/reference/catalogue.md"}
_API = re.compile(r"^<!-- api ([\w.]+) -->$", re.M)
_ROOT = Path(__file__).resolve().parents[1]


def _rate(x: float) -> str:
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.1f} k" if x >= 1e3 else f"{x:,.0f}"


def benchmark_tables(path: Path = _ROOT / "benchmarks" / "results.json") -> str:
    """The Benchmarks page's tables, rendered from the results file."""
    data = json.loads(path.read_text())
    out = ["| workload | this package (records/s) | 0.4.0 (records/s) | ratio (range) | measured |",
           "| --- | --- | --- | --- | --- |"]
    for w in sorted(data["workloads"], key=lambda w: -w["ratio"]):
        rng = f" ({w['range'][0]:.2f}–{w['range'][1]:.2f}×)" if "range" in w else ""
        out.append(f"| `{w['name']}`: {w['what']} | {_rate(w['ours'])} | {_rate(w['orig'])} | "
                   f"**{w['ratio']:.2f}×**{rng} | {w['date']}, {w['reps']} |")
    ratios = [w["ratio"] for w in data["workloads"]]
    geo = 1.0
    for r in ratios:
        geo *= r
    out += ["", f"Geometric mean of the {len(ratios)} ratios: **{geo ** (1 / len(ratios)):.2f}×**; "
            f"smallest {min(ratios):.2f}×, largest {max(ratios):.2f}×.", ""]
    out += ["Solvers (`benchmarks/solvers.py`, Leduc unless named, one process, side by side with "
            "0.4.0 and OpenSpiel's C++):", "",
            "| solver | unit | this package | 0.4.0 | OpenSpiel | vs 0.4.0 | vs OpenSpiel |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in data["solvers"]:
        out.append(f"| {s['name']} | {s['unit']} | {s['ours']} | {s['orig']} | {s['openspiel']} | "
                   f"{s['vs_orig']} | {s['vs_openspiel']} |")
    out += ["", "Game stepping (`benchmarks/game_stepping.py`, seeded random legal playouts, one thread; "
            "batched njit kernels with encoding against 0.4.0's `Env` loop):", "",
            "| game | this package (states/s) | 0.4.0 (states/s) | ratio |", "| --- | --- | --- | --- |"]
    for s in data["stepping"]:
        out.append(f"| {s['name']} | {_rate(s['ours'])} | {_rate(s['orig'])} | {s['ratio']}× |")
    out += ["", "Cold start (`compare.py --mode cold`, empty compile cache, compile helper on):", "",
            "| process | this package | 0.4.0 | measured |", "| --- | --- | --- | --- |"]
    for c in data["cold_start"]:
        out.append(f"| {c['name']} | {c['ours_s']} s ({c['range_s'][0]}–{c['range_s'][1]} s) | "
                   f"{c['orig_s']} s | {c['date']} |")
    a = data["arena"]
    if "matches" not in a:
        out += ["", f"Arena ({a['name']}): {a['ours']} {a['unit']} against {a['orig']} for 0.4.0 "
                f"({a['ratio']}×; {a['note']}; {a['date']})."]
        return "\n".join(out)
    out += ["", f"Arena ({a['name']}; {a['date']}):", "",
            "| match | this package (games/s) | 0.4.0 (games/s) | ratio (games over total wall) | "
            "paired ratios, median (range) | per CPU-second | load |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for m in a["matches"]:
        lo, med, hi = m["paired"]
        out.append(f"| {m['what']} | {m['ours']} | {m['orig']} | **{m['ratio']:.2f}×** | "
                   f"{med:.2f}× ({lo:.2f}–{hi:.2f}×) | {m['cpu_ratio']:.2f}× | {m['load']} |")
    out += ["", a["note"]]
    return "\n".join(out)


def _catalog():
    """``reinfors/catalog.py`` loaded by path: plain data, so no kernel is imported or compiled."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_reinfors_catalog_for_docs", _ROOT / "reinfors" / "catalog.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve their module by name
    spec.loader.exec_module(mod)
    return mod


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def catalogue_tables() -> str:
    """The Catalogue page's tables, rendered from ``rf.catalog`` (the data 0.4.0 ships)."""
    c = _catalog()
    out = ["## Games", "", "| game | constructor | players | dynamics | chance | information | actions | reward keys (defaults) | algorithms |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, g in c.GAMES.items():
        keys = ", ".join(f"`{k}`={v:g}" for k, v in g.reward_keys)
        algos = ", ".join(c.ALGORITHMS[a].label for a in g.algorithms if a in c.ALGORITHMS)
        out.append(f"| **{_cell(g.label)}**: {_cell(g.summary)} | `rf.make_game(\"{name}\")` | {g.players} | "
                   f"{_cell(g.dynamics)} | {_cell(g.chance)} | {_cell(g.information)} | {_cell(g.actions)} | {keys} | {algos} |")
    out += ["", "## Encoders", "", "| encoder | game | shape | constructor | what |", "| --- | --- | --- | --- | --- |"]
    for name, e in c.ENCODER_INFO.items():
        out.append(f"| `{name}` | {_cell(e.game)} | `{_cell(e.shape)}` | `{e.constructor}` | {_cell(e.summary)} |")
    out += ["", "## Algorithms", "", "| algorithm | policy or solver | learner | batch | network output | players, dynamics, information | what |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for a in c.ALGORITHMS.values():
        out.append(f"| **{_cell(a.label)}** | `{a.policy_or_solver}` | {f'`{a.learner}`' if a.learner else '—'} | "
                   f"{_cell(a.training_output)} | {_cell(a.network)} | {_cell(a.players)}; {_cell(a.dynamics)}; "
                   f"{_cell(a.information)} | {_cell(a.summary)} |")
    return "\n".join(out)


def public_names(module: str) -> list[str] | None:
    """``module.__all__`` read from its source without importing it (``=``, ``+=`` and
    ``.append`` / ``.extend`` forms); None when the module defines none."""
    base = _ROOT.joinpath(*module.split("."))
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    names: list[str] | None = None
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        value = None
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                value = node.value
                if isinstance(node, ast.Assign):
                    names = []
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if isinstance(f.value, ast.Name) and f.value.id == "__all__" and f.attr in ("append", "extend"):
                value = node.args[0] if f.attr == "extend" else ast.List(elts=node.args)
        if value is not None and isinstance(value, (ast.List, ast.Tuple)):
            names = (names or []) + [e.value for e in value.elts if isinstance(e, ast.Constant)]
    return names


def _api_directive(match: re.Match) -> str:
    """``<!-- api pkg.module -->`` → a mkdocstrings directive rendering exactly ``__all__``."""
    module = match.group(1)
    names = public_names(module)
    if names is None:
        return f"::: {module}"
    return f"::: {module}\n    options:\n      members: [{', '.join(names)}]"


def generated(name: str) -> str:
    """The text of generated section ``name``."""
    return {"benchmark-tables": benchmark_tables, "catalogue-tables": catalogue_tables}[name]()


def fill(markdown: str, name: str) -> str:
    """``markdown`` with the section between ``<!-- name:start -->`` and ``<!-- name:end -->``
    replaced by its generated text (unchanged when the markers are absent)."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    i, j = markdown.find(start), markdown.find(end)
    if i < 0 or j < i:
        return markdown
    return markdown[: i + len(start)] + "\n" + generated(name) + "\n" + markdown[j:]


def on_page_markdown(markdown: str, page, config, files) -> str:
    markdown = _API.sub(_api_directive, markdown)
    for name in _SECTIONS:
        markdown = fill(markdown, name)
    if _MARK not in markdown:
        return markdown
    if files.get_file_from_path("architecture.md") is not None:
        text = "The contributor's architecture page is [Architecture in depth](architecture.md)."
    else:
        text = (
            "The contributor's architecture page (`docs/architecture.md`) has not been written yet; "
            "until it lands, [Concepts](concepts.md) and the module docstrings are the description."
        )
    return markdown.replace(_MARK, text)


def on_pre_build(config) -> None:
    root = Path(config["config_file_path"]).parent
    script = root / "benchmarks" / "plot_results.py"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    if script.exists():
        subprocess.run([sys.executable, str(script)], check=True, cwd=root)


if __name__ == "__main__":  # rewrite the committed generated sections
    for section, page in _SECTIONS.items():
        path = _ROOT / page
        path.write_text(fill(path.read_text(encoding="utf-8"), section), encoding="utf-8")
        print(f"updated {page} ({section})")
