"""Rewrite numeric reads of the engine table (``E[40]``) into named ones (``E.t_ni``).

    python scripts/name_engine_fields.py [--check] [PATH ...]

The row numbers are positions in the engine's array schema (``reinfors/jit/engine_schema.py``,
``ORDER``), which is the order ``Runtime._ORDER`` had when the kernels read rows by number.  The
rewrite is idempotent: run it again after merging a branch whose kernels still index by number.
Without paths it rewrites every ``.py`` / ``.tmpl`` file under ``reinfors/``; ``--check`` only
lists the files it would change (exit 1 when there are any).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reinfors.jit.engine_schema import ORDER  # noqa: E402 (the repository's own copy)

# ``E[<digits>]`` not preceded by an identifier character or a dot (``HOLE[2]`` and ``x.E[1]``
# are not the engine table).
_NUMERIC = re.compile(r"(?<![\w.])E\[(\d+)\]")


def rewrite(text: str) -> str:
    def name(m: re.Match) -> str:
        i = int(m.group(1))
        if i >= len(ORDER):
            raise SystemExit(f"E[{i}]: the schema has only {len(ORDER)} rows")
        return f"E.{ORDER[i]}"

    return _NUMERIC.sub(name, text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--check", action="store_true", help="list the files that would change; change nothing")
    args = ap.parse_args()
    paths = args.paths or sorted(p for ext in ("*.py", "*.tmpl") for p in (ROOT / "reinfors").rglob(ext))
    changed = []
    for p in paths:
        if "__jitcache__" in p.parts:
            continue
        old = p.read_text()
        new = rewrite(old)
        if new != old:
            changed.append(p)
            if not args.check:
                p.write_text(new)
    for p in changed:
        print(("would rewrite " if args.check else "rewrote ") + str(p.relative_to(ROOT) if p.is_absolute() else p))
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
