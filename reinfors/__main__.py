"""``python -m reinfors``: ahead-of-time compilation and the on-disk kernel cache.

    python -m reinfors warmup connect4/alphazero gridworld ...   # compile into the cache
    python -m reinfors warmup --config engine.json --cache-dir /opt/reinfors-cache
    python -m reinfors cache info                                 # where, how big, what
    python -m reinfors cache clear [--all]                        # delete it (--all: every version)
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


def _use_cache_dir(path: str | None) -> None:
    """Point this process (and its workers) at ``path`` before any kernel is cached."""
    if path is None:
        return
    from reinfors.jit import _compile

    os.environ["REINFORS_CACHE_DIR"] = os.path.abspath(os.path.expanduser(path))
    _compile._CACHE_DIR = None  # nothing is compiled yet in this command: choose again


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m reinfors", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sub = ap.add_subparsers(dest="command", required=True)
    w = sub.add_parser("warmup", help="compile compositions into the on-disk cache (parallel workers)")
    w.add_argument("compositions", nargs="*", help='"<game>/<algorithm>", "<game>/env", "<game>" (all of it), '
                   "an engine config as JSON text, or a JSON file")  # fmt: skip
    w.add_argument("--config", action="append", default=[], help="an engine config JSON file (repeatable)")
    w.add_argument("--cache-dir", help="compile into this cache root (REINFORS_CACHE_DIR)")
    w.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    w.add_argument("--no-progress", action="store_true", help="no compile bar")
    c = sub.add_parser("cache", help="inspect or clear the on-disk kernel cache")
    c.add_argument("action", choices=("info", "clear"))
    c.add_argument("--cache-dir", help="the cache root to use (REINFORS_CACHE_DIR)")
    c.add_argument("--all", action="store_true", help="clear: every version's cache directory, not only this one")
    c.add_argument("--json", action="store_true", help="info: print JSON")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
        int: the exit status.
    """
    args = _parser().parse_args(argv)
    _use_cache_dir(args.cache_dir)
    from reinfors.jit import _compile

    if args.command == "cache":
        if args.action == "clear":
            gone = _compile.clear_cache(everything=args.all)
            print("\n".join(f"removed {g}" for g in gone) if gone else "nothing to remove")
            return 0
        info = _compile.cache_info()
        if args.json:
            print(json.dumps(info, indent=2))
            return 0
        print(f"cache: {info['dir']}")
        print(f"  {_size(info['bytes'])} in {info['files']} files; {len(info['modules'])} generated kernel modules")
        for m in info["modules"]:
            print(f"    {m}")
        for o in info["others"]:
            print(f"  other: {o['dir']} ({_size(o['bytes'])}, last used {o['age_s'] / 3600:.1f} h ago)")
        return 0
    from reinfors._warmup import warmup

    comps = list(args.compositions) + list(args.config)
    if not comps:
        print("warmup: give at least one composition (see --help)", file=sys.stderr)
        return 2
    try:
        warmup(*comps, cache_dir=args.cache_dir and os.environ["REINFORS_CACHE_DIR"], workers=args.workers,
               progress=False if args.no_progress else None, verbose=True)  # fmt: skip
    except (TypeError, ValueError, KeyError, RuntimeError) as exc:
        print(f"warmup: {exc}", file=sys.stderr)
        return 1
    info = _compile.cache_info()
    print(f"cache: {info['dir']} ({_size(info['bytes'])} in {info['files']} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
