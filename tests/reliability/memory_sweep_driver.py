"""The memory-limited sweep of integer parameters (issue 30 item 3): construct *and* compose.

For every integer parameter of every public constructor (the handle constructors, ``Engine``,
``Env``, the solvers, ``Arena``, ``RandomStartingMoves``; found through the hostile-input sweep's
introspection, ``sweep_driver.targets``) at the caps and at its largest accepted value, a child
process under ``RLIMIT_AS`` (4 GB) constructs the handle, composes it (an ``Env`` for a game or an
encoder, an ``Engine`` for a policy / learner / chance mode / noise, or the Engine itself) and uses
it briefly: a first collect whose callback stops it after ``CALLS`` inference calls (the trees,
arenas, pools and caches are all allocated by then), a few Env ticks, a solver iteration.

Each case must end in success or a ``ValueError`` / ``MemoryError`` / ``OverflowError`` (or
``TypeError``) with a message; never a signal, an OOM kill or Python's "Exceeds the limit (4300
digits)" error.  Cases run many to a child (``python memory_sweep_driver.py --child TIER START``
prints one JSON line per case); the parent (``sweep``) restarts the child past a case that killed it
and records that case as ``{"died": returncode}``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve()
LIMIT_GB = 4.0
CAPS = [("2**20", 2**20), ("2**20+1", 2**20 + 1), ("2**31-1", 2**31 - 1), ("2**32", 2**32), ("2**63", 2**63)]
CALLS = 2  # inference calls a first collect makes before its callback stops it
SEARCH_USE_CAP = 4096  # search knobs above this are composed and allocated, not searched
SEARCH_KNOBS = {"num_simulations", "expansion_budget", "depth", "max_depth", "top_k", "samples", "n_heads"}
# Engine compositions of the fast tier: Connect4 with each policy family (compiled by the suite
# anyway: tests/engine, tests/differential, the hostile-input sweep).
FAST_POLICIES = ("EpsilonGreedyQ", "Ppo", "AlphaZero", "Mcts", "Minimax", "SelectiveExpectimax")
FAST_CACHE = ("AlphaZero",)  # Connect4 cache compositions the default suite compiles (tests/engine/test_cache.py)
ENGINE_INTS = ("n_games", "seed", "start_buffer_capacity", "infer_cache", "batch_size", "n_threads")
SLOW_GAMES = ("Snake", "Chess", "Backgammon", "GridWorld", "TexasHoldem", "CarRacing")


class Enough(Exception):
    """Raised by the probing callback once the first collect has run far enough."""


def _sd():
    sys.path.insert(0, str(HERE.parent))
    import sweep_driver

    return sweep_driver


def stopping(cb):
    n = [0]

    def f(obs):
        n[0] += 1
        if n[0] > CALLS:
            raise Enough
        return cb(obs)

    return f


def first_collect(eng, cb, build_only=False):
    """A first collect stopped after ``CALLS`` inference calls; with ``build_only`` (a search whose
    knob is past ``SEARCH_USE_CAP``: a decision would run ~2**20 simulations) only the collect's
    allocations: the runtime (trees, arenas, pools, caches) is built, nothing is searched."""
    if build_only:
        eng._runtime()
        return "allocated"
    try:
        b = eng.collect(1, stopping(cb))
        return f"collected {len(b.obs)}"
    except Enough:
        return "stopped"


def _engine_for(rf, sd, game, policy, pkw=None, lkw=None, **ekw):
    pol = getattr(rf.policies, policy)(**{**sd.CHEAP.get(policy, {}), **(pkw or {})})
    lrn = getattr(rf.learners, sd.FAMILY[policy][0])(**(lkw or {}))
    g = getattr(rf.games, game)() if isinstance(game, str) else game
    reward = rf.Reward(**sd.C4_REWARD) if g.name in ("connect4", "chess") else None
    return rf.Engine(g, reward, pol, lrn, **{"n_games": 2, **ekw})


def _cb(sd, game, policy, pkw=None):
    return sd.FAMILY[policy][1](int(game.action_space().n), pkw or {})


def largest_accepted(call, lo: int) -> int | None:
    """The largest ``v >= lo`` with ``call(v)`` accepted, assuming the accepted values below it
    form a range (binary search over ``[lo, 2**64)``); None when ``lo`` itself is refused."""
    def ok(v):
        try:
            call(v)
            return True
        except Exception:  # noqa: BLE001 - any refusal
            return False

    if not ok(lo):
        return None
    hi = 2**64
    if ok(hi - 1):
        return hi - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def cases(tier: str):
    """``[(case id, thunk)]``: each thunk constructs, composes and uses, returning a summary."""
    import reinfors as rf

    sd = _sd()
    out = []

    def values(call, default):
        vals = list(CAPS)
        try:
            lo = int(default)
        except (TypeError, ValueError):
            lo = 1
        big = largest_accepted(call, max(lo, 1))
        if big is not None and big not in [v for _, v in vals]:
            vals.append((f"max={big}", big))
        return vals

    # -- handle constructors, composed ----------------------------------------------------------
    for t in sd.targets("fast"):
        mod, _, name = t.tid.partition(".")
        if mod not in ("games", "encoders", "policies", "learners", "chance_modes", "noise") or name == "make":
            continue
        if name in ("custom", "from_module"):
            continue
        for pname, kind, default in sd.params(t.fn) or []:
            if kind in ("VAR_KEYWORD", "VAR_POSITIONAL") or not _is_int(pname, default):
                continue
            base = {k: g() for k, g in t.base.items() if k != pname}
            for label, v in values(lambda v, p=pname, b=base, f=t.fn: f(**{**b, p: v}), default):
                def thunk(f=t.fn, b=base, p=pname, v=v, mod=mod, name=name):
                    h = f(**{**b, p: v})
                    return _compose_handle(rf, sd, mod, name, h, tier, {p: v})

                if mod == "games" and tier == "fast" and name not in sd.FAST_GAMES:
                    continue
                out.append((f"{t.tid}|{pname}|{label}", thunk))
    # -- the Engine's own integers, under each policy family ------------------------------------
    policies = FAST_POLICIES
    games = ("Connect4",) if tier == "fast" else SLOW_GAMES
    for game in games:
        for policy in policies:
            if not _composable(rf, game, policy):
                continue
            for pname in ENGINE_INTS:
                if pname == "infer_cache" and tier == "fast" and policy not in FAST_CACHE:
                    continue  # a +cache kernel family of its own: the suite's default tier compiles AlphaZero's
                extra = {"start_buffer": True} if pname == "start_buffer_capacity" else {}
                for pad in (False, True) if pname == "batch_size" else (False,):
                    def call(v, p=pname, e=extra, pad=pad, game=game, policy=policy):
                        return _engine_for(rf, sd, game, policy, **{**e, p: v, "pad": pad})

                    dflt = {"n_games": 2, "start_buffer_capacity": 1000}.get(pname, 1)
                    for label, v in values(call, dflt):
                        def thunk(call=call, v=v, game=game, policy=policy):
                            return first_collect(call(v), _cb(sd, getattr(rf.games, game)(), policy))

                        sfx = ",pad" if pad else ""
                        out.append((f"Engine[{game},{policy}{sfx}]|{pname}|{label}", thunk))
    if tier == "slow":
        out += _slow_entry_points(rf, sd, values)
    # -- Env, solvers, Arena, starts ------------------------------------------------------------
    for label, v in CAPS + [("2**64-1", 2**64 - 1)]:
        out.append((f"Env|seed|{label}", lambda v=v: sd.env_episode(rf.Env(rf.games.Connect4(), rf.Reward(), seed=v))))
        out.append((f"solvers.Cfr|seed|{label}",
                    lambda v=v: (rf.solvers.Cfr(rf.games.KuhnPoker(), seed=v).iterate(1), "iterated")[1]))
        out.append((f"solvers.DeepCfr|seed|{label}",
                    lambda v=v: type(_dcfr(rf, sd, v)).__name__))
        out.append((f"Arena|n_slots|{label}", lambda v=v: _arena(rf, sd, v)))
        out.append((f"starts.RandomStartingMoves|max_retries|{label}",
                    lambda v=v: len(rf.starts.RandomStartingMoves(2, max_retries=v)
                                    .generate(rf.games.Connect4(), rf.Reward(**sd.C4_REWARD), 0)[1])))
    only = os.environ.get("REINFORS_SWEEP_ONLY")  # debugging: the cases whose id contains one of these
    return [c for c in out if any(o in c[0] for o in only.split(","))] if only else out


U64 = [("2**64-1", 2**64 - 1)]
CFR_GAMES = ("KuhnPoker", "LeducPoker", "TexasHoldem")


def _slow_entry_points(rf, sd, values):
    """The slow tier's other entry points: ``choose`` (its integers, and every integer of every
    policy composed by it), the solvers on every integer of their games, Deep CFR's ``collect``
    integers, and the openings' ``n_moves``."""
    out = []
    c4 = rf.Reward(**sd.C4_REWARD)
    # -- PolicyHandle.choose: its own integers, each policy family on Connect4
    for policy in FAST_POLICIES:
        for pname in ("seed", "plies"):
            for label, v in CAPS + U64:
                def thunk(policy=policy, pname=pname, v=v):
                    pol = getattr(rf.policies, policy)(**sd.CHEAP.get(policy, {}))
                    kw = {"seed": v} if pname == "seed" else {"plies": [v, v]}
                    return _choose(rf, pol, sd.FAMILY[policy][1](7, {}), c4, False, **kw)

                out.append((f"choose[{policy}]|{pname}|{label}", thunk))
    # -- every integer of every policy, composed by choose (a search past SEARCH_USE_CAP: built only)
    for t in sd.targets("fast"):
        mod, _, name = t.tid.partition(".")
        if mod != "policies" or name == "make":
            continue
        for pname, kind, default in sd.params(t.fn) or []:
            if kind in ("VAR_KEYWORD", "VAR_POSITIONAL") or not _is_int(pname, default):
                continue
            base = {k: g() for k, g in t.base.items() if k != pname}
            for label, v in values(lambda v, p=pname, b=base, f=t.fn: f(**{**b, p: v}), default):
                def thunk(f=t.fn, b=base, p=pname, v=v, name=name):
                    h = f(**{**b, p: v})
                    big = p in SEARCH_KNOBS and v > SEARCH_USE_CAP
                    return _choose(rf, h, sd.FAMILY[name][1](7, {p: v}), c4, big)

                out.append((f"choose:{t.tid}|{pname}|{label}", thunk))
    # -- the solvers on every integer of their games (Cfr: every variant the game takes; Deep CFR)
    for t in sd.targets("fast"):
        mod, _, name = t.tid.partition(".")
        if mod != "games" or name not in CFR_GAMES:
            continue
        for pname, kind, default in sd.params(t.fn) or []:
            if kind in ("VAR_KEYWORD", "VAR_POSITIONAL") or not _is_int(pname, default):
                continue
            base = {k: g() for k, g in t.base.items() if k != pname}
            for label, v in values(lambda v, p=pname, b=base, f=t.fn: f(**{**b, p: v}), default):
                variants = ("external_mccfr",) if name == "TexasHoldem" else ("vanilla", "plus", "external_mccfr")
                for variant in variants:
                    def thunk(f=t.fn, b=base, p=pname, v=v, variant=variant):
                        s = rf.solvers.Cfr(f(**{**b, p: v}), variant=variant)
                        s.iterate(1)
                        return f"iterated: {s.num_infosets} infosets"

                    out.append((f"solvers.Cfr[{variant}]:{t.tid}|{pname}|{label}", thunk))

                def dthunk(f=t.fn, b=base, p=pname, v=v):
                    g = f(**{**b, p: v})
                    s = rf.solvers.DeepCfr(g)
                    s.next_iteration()
                    return len(s.collect(0, 2, sd.cfr_cb(int(g.action_space().n))).advantage_obs)

                out.append((f"solvers.DeepCfr:{t.tid}|{pname}|{label}", dthunk))
    # -- Deep CFR's collect integers; the openings' n_moves
    for label, v in CAPS + U64:
        out.append((f"DeepCfr.collect|traversals|{label}", lambda v=v: _collect(rf, sd, 0, v)))
        out.append((f"DeepCfr.collect|player|{label}", lambda v=v: _collect(rf, sd, v, 2)))
        out.append((f"starts.RandomStartingMoves|n_moves|{label}",
                    lambda v=v: len(rf.starts.RandomStartingMoves(v).generate(rf.games.Connect4(), c4, 0)[1])))
    return out


def _choose(rf, pol, cb, reward, build_only, **kw):
    """``pol.choose`` over two Connect4 envs; with ``build_only`` its validation and its runtime's
    allocations (bounded first) without the search."""
    import numpy as np

    from reinfors._runtime import choose as ch

    env = rf.Env(rf.games.Connect4(), reward, seed=0)
    envs = [env, env.fork()]
    if not build_only:
        return pol.choose(envs, cb, gamma=1.0, **kw)
    envs, seed, plies, gamma = ch._validate(pol, envs, cb, kw.get("seed", 0), kw.get("plies"), 1.0)
    states = np.stack([e._state for e in envs])
    ch._build(pol, envs[0]._def, envs[0]._weights, states, seed, plies, gamma, None)
    return "allocated"


def _collect(rf, sd, player, traversals):
    s = rf.solvers.DeepCfr(rf.games.KuhnPoker(), seed=0)
    s.next_iteration()
    return len(s.collect(player, traversals, sd.cfr_cb(2)).advantage_obs)


def _dcfr(rf, sd, seed):
    s = rf.solvers.DeepCfr(rf.games.KuhnPoker(), seed=seed)
    s.next_iteration()
    return s.collect(0, 2, sd.cfr_cb(2))


def _arena(rf, sd, n_slots):
    a = rf.Arena(rf.games.Connect4(), rf.Reward(**sd.C4_REWARD), sd.contestants(), n_slots=n_slots)
    return len(a.play(2).games)


def _is_int(name, default):
    sys.path.insert(0, str(HERE.parents[1] / "differential"))
    from caps_driver import is_int_param

    return is_int_param(name, default)


def _composable(rf, game, policy) -> bool:
    sd = _sd()
    try:
        _engine_for(rf, sd, game, policy)
        return True
    except ValueError:
        return False


def _compose_handle(rf, sd, mod, name, h, tier, kw):
    if mod == "games":
        return sd.env_episode(rf.Env(h, rf.Reward(), seed=0))
    if mod == "encoders":
        if tier == "fast" and name not in ("Connect4", "KuhnPoker", "GridWorld"):
            return "constructed"
        game = {"AlphaZeroChess": "Chess", "MinimalChess": "Chess", "OpenSpielChess": "Chess",
                "RelativeChess": "Chess", "CarRacingPixels": "CarRacing", "CarRacingVec": "CarRacing"}
        return sd.env_episode(rf.Env(getattr(rf.games, game.get(name, name))(encoder=h), rf.Reward(), seed=0))
    g = rf.games.Connect4()
    big = any(k in SEARCH_KNOBS and v > SEARCH_USE_CAP for k, v in kw.items())
    if mod == "policies":
        eng = rf.Engine(g, rf.Reward(**sd.C4_REWARD), h, getattr(rf.learners, sd.FAMILY[name][0])(), n_games=2)
        return first_collect(eng, sd.FAMILY[name][1](7, kw), big)
    if mod == "learners":
        pol = sd.LEARNER_POLICY[name]
        eng = rf.Engine(g, None, getattr(rf.policies, pol)(**sd.CHEAP.get(pol, {})), h, n_games=2)
        return first_collect(eng, sd.FAMILY[pol][1](7, {}))
    if mod == "chance_modes":
        eng = rf.Engine(g, None, rf.policies.Mcts(num_simulations=8, chance=h), rf.learners.TreeStrap(), n_games=2)
        return first_collect(eng, sd.q_cb(7), big)
    if mod == "noise":
        eng = rf.Engine(g, None, rf.policies.AlphaZero(num_simulations=8, noise=h), rf.learners.AlphaZero(), n_games=2)
        return first_collect(eng, sd.pv_cb(7))
    return "constructed"


def run_child(tier: str, start: int, shard: int = 0, jobs: int = 1) -> None:
    """Run the cases of block ``shard`` of ``jobs`` (contiguous, so each block compiles its own
    compositions) from index ``start`` on, one JSON line each."""
    import resource

    n = int(LIMIT_GB * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (n, n))
    sd = _sd()
    warnings.simplefilter("ignore")
    all_cases = cases(tier)
    lo, hi = shard * len(all_cases) // jobs, (shard + 1) * len(all_cases) // jobs
    for i in range(max(start, lo), hi):
        cid, thunk = all_cases[i]
        sys.stderr.write(f"case {i} {cid}\n")
        sys.stderr.flush()
        line = json.dumps({"i": i, "id": cid, "out": _outcome(sd, thunk)})
        print(line, flush=True)
        if os.environ.get("REINFORS_SWEEP_LOG"):  # each case as it ends (a sweep cut short keeps them)
            with open(os.environ["REINFORS_SWEEP_LOG"], "a") as fh:
                fh.write(line + "\n")


KINDS = ("ValueError", "MemoryError", "OverflowError", "TypeError")


def _outcome(sd, thunk) -> dict:
    """``sweep_driver.outcome`` with ``kind``: the first of ``KINDS`` the error is an instance of
    (``TreeTooLarge`` and ``GameContractError`` are ValueErrors), else its own name."""
    try:
        value = thunk()
    except Exception as e:  # noqa: BLE001 - classified, then judged by the test
        kinds = [c.__name__ for c in type(e).__mro__ if c.__name__ in KINDS]
        return {"error": type(e).__name__, "kind": kinds[0] if kinds else type(e).__name__,
                "message": sd._message(e)}  # fmt: skip
    return {"ok": sd.summary(value)}


def _sweep_shard(tier: str, shard: int, jobs: int, timeout: float) -> list[dict]:
    out: list[dict] = []
    start = 0
    while True:
        r = subprocess.run([sys.executable, str(HERE), "--child", tier, str(start), str(shard), str(jobs)],
                           capture_output=True, text=True, timeout=timeout)  # fmt: skip
        lines = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
        out += lines
        if r.returncode == 0:
            return out
        started = [x[5:].split(" ", 1) for x in r.stderr.splitlines() if x.startswith("case ")]
        if not started:  # died before its first case: not a case's fault
            raise RuntimeError(f"sweep child exited {r.returncode} before a case:\n{r.stderr[-2000:]}")
        dead, cid = int(started[-1][0]), started[-1][1]
        out.append({"i": dead, "id": cid, "out": {"died": r.returncode, "stderr": r.stderr[-600:]}})
        start = dead + 1


def sweep(tier: str, timeout: float = 3000, jobs: int | None = None) -> list[dict]:
    """Every case's outcome, in ``jobs`` parallel blocks (``REINFORS_SWEEP_JOBS``, default 1), each
    child by child (a child that dies is restarted past its case).  The children share one Numba
    cache directory (the package's), so a composition compiled once loads warm in the next child."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = jobs or max(1, int(os.environ.get("REINFORS_SWEEP_JOBS", "1")))
    with ThreadPoolExecutor(jobs) as ex:
        parts = list(ex.map(lambda k: _sweep_shard(tier, k, jobs, timeout), range(jobs)))
    return sorted((r for part in parts for r in part), key=lambda r: r["i"])


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["--child"]:
        run_child(a[1], int(a[2]), *(int(x) for x in a[3:5]))
    else:
        for row in sweep(a[0] if a else "fast"):
            print(json.dumps(row))
