"""MkDocs hooks for the reinfors site (``mkdocs.yml`` loads this file; it is not a page).

* The Architecture page links the contributor page ``docs/architecture.md`` when that file exists
  (it is written separately); until then it says where the architecture is described.
* The Benchmarks page's plots are drawn by ``benchmarks/plot_results.py`` from
  ``benchmarks/results.json``; the build regenerates them when matplotlib is installed and keeps
  the committed images otherwise.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_MARK = "<!-- architecture-link -->"


def on_page_markdown(markdown: str, page, config, files) -> str:
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
