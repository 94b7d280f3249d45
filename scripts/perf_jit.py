"""Where a running engine's native time goes, per Numba function: ``perf`` samples, named by ``gdb``.

    python scripts/perf_jit.py [--warm 7] [--seconds 8] [--top 30] -- SCRIPT [ARGS...]

Starts ``SCRIPT`` with this interpreter, waits ``--warm`` seconds (compile or cache load, warm-up
windows), samples every thread of the process with ``perf record -e cpu-clock`` for ``--seconds``,
then stops it and prints the samples per function, highest first.  ``perf`` alone cannot name
Numba's kernels (they live in anonymous JIT memory), but LLVM registers every JIT object with
gdb's JIT interface, so ``gdb -p PID`` resolves each sampled address (``info symbol``) while the
process still runs.  Names are shortened: ABI tags, argument lists and the generated module's
prefix (``reinfors::_generated::connect4_tree_<hash>::``) are dropped.

Needs ``perf`` (``kernel.perf_event_paranoid`` <= 2 is enough for one's own process) and ``gdb``.
Samples land on the instruction *after* a slow one, so a hot atomic or cache miss can be charged
to the next call (``NRT_decref`` after an inlined load, say): read a function's share as "time
around here", and confirm a change with a paired benchmark.  RESULTS.md (2026-12-06, nineteenth
session) has a profile of a Connect4 AlphaZero row made with it.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

_ABI = re.compile(r"\[abi:[^\]]*\]")
_GENERATED = re.compile(r"reinfors::_generated::[a-z0-9_]+_[0-9a-f]{16}::")


def _name(line: str) -> str:
    """The function of one ``info symbol`` answer, shortened."""
    if line.startswith("No symbol"):
        return "[unknown]"
    name = line.split(" in section ")[0]
    name = re.sub(r" \+ \d+$", "", name)
    name = _ABI.sub("", name)
    name = name.split("(")[0]
    return _GENERATED.sub("", name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warm", type=float, default=7.0, help="seconds before sampling starts")
    ap.add_argument("--seconds", type=float, default=8.0, help="seconds sampled")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- SCRIPT [ARGS...]")
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("give the script to run after --")
    proc = subprocess.Popen([sys.executable, *cmd])
    with tempfile.TemporaryDirectory() as tmp:
        data, script = os.path.join(tmp, "perf.data"), os.path.join(tmp, "symbols.gdb")
        try:
            time.sleep(args.warm)
            if proc.poll() is not None:
                print(f"{cmd[0]} ended before sampling started (exit {proc.returncode})", file=sys.stderr)
                return 1
            subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-p", str(proc.pid), "-o", data,
                            "--", "sleep", str(args.seconds)], check=True, capture_output=True)  # fmt: skip
            ips = subprocess.run(["perf", "script", "-i", data, "-F", "ip"], check=True, capture_output=True, text=True)
            counts = collections.Counter(line.strip() for line in ips.stdout.splitlines() if line.strip())
            addresses = list(counts)
            with open(script, "w") as f:
                f.writelines(f"info symbol 0x{a}\n" for a in addresses)
            out = subprocess.run(["gdb", "-p", str(proc.pid), "-batch", "-x", script], capture_output=True, text=True)
        finally:
            proc.kill()
            proc.wait()
    answers = [ln for ln in out.stdout.splitlines() if " in section " in ln or ln.startswith("No symbol")]
    if len(answers) != len(addresses):
        print(f"gdb answered {len(answers)} of {len(addresses)} addresses; is gdb allowed to attach (ptrace)?", file=sys.stderr)
        return 1
    per_fn: collections.Counter = collections.Counter()
    for a, line in zip(addresses, answers, strict=True):
        per_fn[_name(line)] += counts[a]
    total = sum(per_fn.values())
    print(f"{total} samples ({args.seconds:g} s, all threads)")
    for name, n in per_fn.most_common(args.top):
        print(f"{n:7d} {100 * n / total:5.1f}%  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
