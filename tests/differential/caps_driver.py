"""Probe the integer caps of every public constructor (issue 30 item 1), one source for both builds.

Runs unchanged under this package and under the original reinfors 0.4.0 (``import reinfors`` is
whichever build the interpreter has), always as a child process under ``RLIMIT_AS`` (``--limit-gb``,
4 GB by default), so a case that would allocate without bound ends in ``MemoryError`` or a dead
child instead of taking the machine.

Every integer parameter of every public constructor (the handle constructors of ``games``,
``encoders``, ``policies``, ``learners``, ``chance_modes``, ``noise``; ``Engine``, ``Env``, ``Cfr``,
``DeepCfr``, ``Arena``, ``RandomStartingMoves``), found by introspection through the hostile-input
sweep's targets (``tests/reliability/sweep_driver.py``), is tried at ``VALUES`` with the other
parameters valid.  An accepted handle is then *composed*: a game into an ``Env``, a policy / learner /
chance mode / noise into an ``Engine`` on Connect4 (construction only: nothing here collects).

Output: one JSON line per case, ``{"id": "target|param|label", "call": outcome, "compose": outcome
| None}`` (outcome ``{"ok": summary}`` or ``{"error": type, "message"}``), flushed as it ends.  The
parent (``probe``) restarts the child after the case that killed it and records that case as
``{"died": returncode}``.  ``python caps_driver.py [--limit-gb N] [--table]`` prints the table.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve()
VALUES = [
    ("0", 0), ("1", 1), ("2**20", 2**20), ("2**20+1", 2**20 + 1), ("2**31-1", 2**31 - 1), ("2**32", 2**32),
    ("2**63", 2**63),
]  # fmt: skip
# Constructors probed (sweep target ids); the Env of each game is composed from the game handle.
CTORS = ("Engine", "Env", "solvers.Cfr", "solvers.DeepCfr", "Arena", "starts.RandomStartingMoves")
HANDLE_MODULES = ("games.", "encoders.", "policies.", "learners.", "chance_modes.", "noise.")
# Parameters that take an integer although their default is None (or required).
INT_NONE = {"win_food_lead", "goal_row", "goal_col", "max_ticks", "top_k", "temperature_drop", "n_games",
            "n_moves", "n_slots", "seed", "batch_size", "n_threads", "infer_cache", "start_buffer_capacity"}


def _sweep():
    sys.path.insert(0, str(HERE.parents[1] / "reliability"))
    import sweep_driver

    return sweep_driver


def is_int_param(name: str, default: str) -> bool:
    if name in INT_NONE:
        return True
    return bool(re.fullmatch(r"-?\d+", default))


def cases():
    """``[(target, param, label, value)]`` in a fixed order."""
    sd = _sweep()
    out = []
    for t in sd.targets("fast"):
        if t.tid.endswith(".make") or not (t.tid in CTORS or t.tid.startswith(HANDLE_MODULES)):
            continue
        if t.tid in ("games.custom", "games.from_module"):  # user games: tests/test_user_games.py
            continue
        for name, kind, default in sd.params(t.fn) or []:
            if kind in ("VAR_KEYWORD", "VAR_POSITIONAL") or not is_int_param(name, default):
                continue
            for label, v in VALUES:
                out.append((t, name, label, v))
    return out


def compose(t, value):
    """Build what the handle is for (construction only)."""
    import reinfors as rf

    sd = _sweep()
    mod, _, name = t.tid.partition(".")
    if mod == "games":
        return rf.Env(value, rf.Reward(), seed=0)
    if mod == "encoders":
        game = {"AlphaZeroChess": "Chess", "MinimalChess": "Chess", "OpenSpielChess": "Chess",
                "RelativeChess": "Chess", "CarRacingPixels": "CarRacing", "CarRacingVec": "CarRacing"}
        return rf.Env(getattr(rf.games, game.get(name, name))(encoder=value), rf.Reward(), seed=0)
    if mod == "policies":
        return rf.Engine(rf.games.Connect4(), None, value, getattr(rf.learners, sd.FAMILY[name][0])(), n_games=2)
    if mod == "learners":
        pol = sd.LEARNER_POLICY[name]
        return rf.Engine(rf.games.Connect4(), None, getattr(rf.policies, pol)(**sd.CHEAP.get(pol, {})), value,
                         n_games=2)
    if mod == "chance_modes":
        return rf.Engine(rf.games.Connect4(), None, rf.policies.Mcts(num_simulations=8, chance=value),
                         rf.learners.TreeStrap(), n_games=2)
    if mod == "noise":
        return rf.Engine(rf.games.Connect4(), None, rf.policies.AlphaZero(num_simulations=8, noise=value),
                         rf.learners.AlphaZero(), n_games=2)
    return None


def run_child(start: int) -> None:
    """Run the cases from ``start`` on, one JSON line each."""
    sd = _sweep()
    for i, (t, p, label, v) in enumerate(cases()):
        if i < start:
            continue
        own = {q[0] for q in sd.params(t.fn) or []}
        kw = {k: g() for k, g in t.base.items() if k != p and (k in own or not own)}
        kw[p] = v
        call, value = sd.run_outcome(lambda t=t, kw=kw: t.call(**kw))
        comp = None
        if "ok" in call and t.tid.startswith(HANDLE_MODULES):
            comp = sd.outcome(lambda t=t, value=value: (compose(t, value), "composed")[1])
        print(json.dumps({"i": i, "id": f"{t.tid}|{p}|{label}", "call": call, "compose": comp}), flush=True)


def limit(gb: float) -> None:
    import resource

    n = int(gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (n, n))


def probe(python: str, limit_gb: float = 4.0, timeout: float = 900) -> list[dict]:
    """Every case's outcome under ``python`` (this build's or the original's), child by child."""
    out: list[dict] = []
    start = 0
    while True:
        r = subprocess.run(
            [python, "-I", str(HERE), "--child", str(start), "--limit-gb", str(limit_gb)],
            capture_output=True, text=True, timeout=timeout, cwd="/",
        )  # fmt: skip
        lines = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
        out += lines
        if r.returncode == 0:
            return out
        dead = lines[-1]["i"] + 1 if lines else start
        label = _case_ids(python)[dead] if dead < len(_case_ids(python)) else f"#{dead}"
        out.append({"i": dead, "id": label, "call": {"died": r.returncode, "stderr": r.stderr[-400:]},
                    "compose": None})
        start = dead + 1


_IDS: dict = {}


def _case_ids(python: str) -> list[str]:
    if python not in _IDS:
        r = subprocess.run([python, "-I", str(HERE), "--ids"], capture_output=True, text=True, timeout=300, cwd="/")
        _IDS[python] = json.loads(r.stdout)
    return _IDS[python]


def short(o) -> str:
    if o is None:
        return "-"
    if "ok" in o:
        return "ok"
    if "died" in o:
        return f"DIED rc={o['died']}"
    return f"{o['error']}: {o['message'][:110]}"


def table(rows: list[dict]) -> str:
    lines = ["| case | call | compose |", "| --- | --- | --- |"]
    lines += [f"| {r['id']} | {short(r['call'])} | {short(r['compose'])} |" for r in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    args = sys.argv[1:]
    gb = float(args[args.index("--limit-gb") + 1]) if "--limit-gb" in args else 4.0
    if "--child" in args:
        limit(gb)
        warnings.simplefilter("ignore")
        run_child(int(args[args.index("--child") + 1]))
    elif "--ids" in args:
        print(json.dumps([f"{t.tid}|{p}|{label}" for t, p, label, _ in cases()]))
    else:
        py = args[args.index("--python") + 1] if "--python" in args else sys.executable
        print(table(probe(py, gb)))
