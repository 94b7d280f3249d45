"""The signature-driven hostile-input sweep (issue 16 item 1), one source for both builds.

Runs unchanged under this package and under the original reinfors 0.4.0 (``import reinfors`` is
whichever build the interpreter has): in the original's side venv as one subprocess that reads a
spec on stdin and prints one JSON document, and in-process for this build.

The sweep is built from the code: every public constructor and function of the handle modules,
``Engine`` / ``Env`` / ``Arena`` / solvers / snapshots / chess helpers / ``engine_from_config`` /
the gym adapters, and every public method (with parameters) of objects constructed from them,
is found by introspection; ``inspect.signature`` names its parameters.  Each parameter is tried
with every value of ``HOSTILE`` while the others keep valid values (``BASE``); a parameter the
driver has no valid value for is an error of the driver, so new surface cannot slip past it.
Every accepted value is followed by a short *use* of the result (an engine ``collect(4, cb)``, an
Env episode of a few ticks, a solver iteration), and every method call, accepted or rejected, by a
*health* check of the object it was called on (collect again / step again).

Outcome of one case: ``{"id", "call": {"error": type, "message"} | {"ok": summary},
"use": outcome | None, "health": outcome | None}``.  A case that never returns is caught by
``faulthandler`` (the process exits with the case id on stderr).
"""

from __future__ import annotations

import faulthandler
import inspect
import json
import math
import re
import sys
import time
import warnings

import numpy as np

import reinfors as rf

# -- the hostile values ---------------------------------------------------------------------------

HOSTILE = [
    ("0", lambda: 0), ("-1", lambda: -1), ("1", lambda: 1), ("2", lambda: 2),
    ("2**31-1", lambda: 2**31 - 1), ("2**31", lambda: 2**31), ("2**32", lambda: 2**32),
    ("2**63", lambda: 2**63), ("2**64", lambda: 2**64), ("-2**63-1", lambda: -(2**63) - 1),
    ("True", lambda: True), ("False", lambda: False), ("1.5", lambda: 1.5), ("2.0", lambda: 2.0),
    ("nan", lambda: math.nan), ("inf", lambda: math.inf), ("-inf", lambda: -math.inf),
    ("1e300", lambda: 1e300), ("-0.0", lambda: -0.0),
    ("''", lambda: ""), ("'x'", lambda: "x"), ("'\\x00'", lambda: "\x00"), ("b''", lambda: b""),
    ("None", lambda: None), ("[]", lambda: []), ("{}", lambda: {}), ("object()", lambda: object()),
    ("np.int64(3)", lambda: np.int64(3)), ("np.float32(2)", lambda: np.float32(2)),
    ("np.uint64(2**63)", lambda: np.uint64(2**63)), ("np.array(3)", lambda: np.array(3)),
    ("np.array([1, 2])", lambda: np.array([1, 2])),
]  # fmt: skip
LABELS = [label for label, _ in HOSTILE]

# A pickle payload (bytes of ``pickle.dumps({"a": 1})``, written out so nothing here imports pickle):
# every loader must reject it as data, never unpickle it.
PICKLE = b"\x80\x04\x95\x0b\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01a\x94K\x01s."
EXTRA_BYTES = [("pickle", lambda: PICKLE), ("b'\\x00'*64", lambda: b"\x00" * 64)]

# Parameters counting work (records, iterations, simulations, ...): an ACCEPTED huge value
# would run for ever in both builds, so values in [2**31, 2**64) (and 2**31-1) are not tried on
# them; their rejections (negative, >= 2**64, wrong type) still are.  A use after an accepted
# value above USE_CAP is skipped for the same reason.
COUNTS = {
    "n_records", "collect_size", "n", "traversals", "n_games", "num_simulations", "expansion_budget",
    "depth", "samples", "n_moves", "max_retries", "n_slots", "history_length", "plies", "max_ticks",
    "max_episode_steps", "top_k", "max_depth", "grid_size", "size", "players", "num_players",
    "num_snakes", "food", "initial_length", "stack", "big_blind", "small_blind", "start_buffer_capacity",
    "batch_size", "n_threads", "infer_cache", "temperature_drop",
}
HUGE = {"2**31-1", "2**31", "2**32", "2**63", "np.uint64(2**63)"}
# Pure-Python counts in 0.4.0 (Arena, starts) take any size, and floats: 1e300 games run for ever.
PY_HUGE = HUGE | {"2**64", "1e300"}
USE_CAP = 64
# Uses the original never returns from (0.4.0 bugs, not copied): the use is skipped in both builds.
ORIG_HANGS = {"Arena|n_slots|nan"}
# Ours-only keyword extensions (documented): swept in-process only, left out of the comparison.
EXTENSIONS = {("policies.AlphaZero", "leaf_batch"), ("policies.AlphaZero", "virtual_loss"),
              ("policies.Mcts", "leaf_batch"), ("policies.Mcts", "virtual_loss"), ("Arena", "n_threads")}

# -- cheap callbacks -------------------------------------------------------------------------------


def q_cb(actions, heads=1):
    return lambda obs: np.zeros((len(obs), heads, actions))


def pv_cb(actions):
    return lambda obs: (np.zeros((len(obs), actions)), np.zeros(len(obs)))


def cfr_cb(actions):
    return lambda obs: np.zeros((len(obs), actions))


def _heads(kw):
    h = kw.get("n_heads", 1)
    try:
        return max(1, int(h))
    except Exception:  # noqa: BLE001
        return 1


# policy family -> (learner, callback factory(actions, policy kwargs))
FAMILY = {
    "EpsilonGreedyQ": ("Dqn", lambda a, kw: q_cb(a, _heads(kw))),
    "Ppo": ("Ppo", lambda a, kw: pv_cb(a)),
    "AlphaZero": ("AlphaZero", lambda a, kw: pv_cb(a)),
    "GumbelAlphaZero": ("AlphaZero", lambda a, kw: pv_cb(a)),  # beyond 0.4.0 (issue 33)
    "Mcts": ("TreeStrap", lambda a, kw: q_cb(a)),
    "Minimax": ("TreeStrap", lambda a, kw: q_cb(a)),
    "SelectiveExpectimax": ("TreeStrap", lambda a, kw: q_cb(a, _heads(kw))),
}
LEARNER_POLICY = {"Dqn": "EpsilonGreedyQ", "Ppo": "Ppo", "AlphaZero": "AlphaZero", "TreeStrap": "Mcts"}
# Valid, cheap values for the search parameters not being swept (a use is 4 records, not a benchmark).
CHEAP = {"AlphaZero": {"num_simulations": 4}, "GumbelAlphaZero": {"num_simulations": 4}, "Mcts": {"num_simulations": 4},
         "Minimax": {"depth": 2},
         "SelectiveExpectimax": {"expansion_budget": 8, "top_k": 3, "max_depth": 4}}
FAST_GAMES = {"Connect4", "KuhnPoker", "GridWorld"}

# -- outcomes --------------------------------------------------------------------------------------


def summary(x):
    """A build-independent summary of an accepted call's result."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return x if not isinstance(x, float) or math.isfinite(x) else repr(x)
    if isinstance(x, bytes):
        return {"bytes": len(x) > 0}
    if isinstance(x, (list, tuple)) and len(x) <= 8 and all(isinstance(v, (int, float, str)) for v in x):
        return [summary(v) for v in x]
    return type(x).__name__


def _message(e: Exception) -> str:
    """``str(e)`` without object addresses (``<object object at 0x7f...>``), which differ per run."""
    return re.sub(r" at 0x[0-9a-fA-F]+", " at 0x?", str(e))


def outcome(fn):
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 - compared with the other build's outcome
        return {"error": type(e).__name__, "message": _message(e)}
    return {"ok": summary(value)}


def run_outcome(fn):
    """``(outcome, value)``: the value is kept for the use."""
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001
        return {"error": type(e).__name__, "message": _message(e)}, None
    return {"ok": summary(value)}, value


# -- signatures ------------------------------------------------------------------------------------


def params(fn):
    """``[(name, kind, default repr)]`` without ``self``; ``None`` when no signature is known."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.name == "self":
            continue
        d = "<required>" if p.default is inspect.Parameter.empty else repr(p.default)
        out.append([p.name, p.kind.name, d])
    return out


def _module_public(mod):
    """Public callables defined in ``mod`` itself (PyO3 builtins have no ``__module__``)."""
    out = {}
    for n in dir(mod):
        if n.startswith("_"):
            continue
        o = getattr(mod, n)
        m = getattr(o, "__module__", None)
        if callable(o) and (m is None or m == mod.__name__ or n in ("make", "registered")):
            out[n] = o
    return out


# -- objects the methods are called on (built once, kept: health checks use the same object) ------

_CACHE = {}


def cached(key, make):
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


C4_REWARD = {"win": 1.0, "loss": -1.0, "draw": 0.0}


def engine(game="Connect4", policy="EpsilonGreedyQ", pkw=None, lkw=None, **ekw):
    g = getattr(rf.games, game)() if isinstance(game, str) else game
    pol = getattr(rf.policies, policy)(**(pkw or {}))
    lrn = getattr(rf.learners, FAMILY[policy][0])(**(lkw or {}))
    return rf.Engine(g, None, pol, lrn, **{"n_games": 2, **ekw})


def actions_of(game):
    return int(game.action_space().n)


def e0():
    return cached("e0", lambda: engine())


def collect4(eng, cb=None):
    cb = cb or q_cb(7)
    b = eng.collect(4, cb)
    return {"batch": type(b).__name__, "enough": len(b.obs) >= 4}


def env_episode(env, ticks=4):
    """Reset, then up to ``ticks`` ticks of first-legal actions."""
    env.reset()
    n = 0
    while not env.done() and n < ticks:
        env.step({a: env.legal_actions(a)[0] for a in env.active_agents()})
        n += 1
    out = {"ticks": env.ticks, "agents": env.num_agents()}
    env.reset()
    return out


def env_of(game_name):
    """A fresh Env per case (seed 0): a case accepted in one build must not move the state the
    next case of the other build starts from (a shared Env made 2 of 7,758 slow-tier outcomes
    depend on case order)."""
    return rf.Env(getattr(rf.games, game_name)(), rf.Reward(), seed=0)


def cfr():
    def make():
        s = rf.solvers.Cfr(rf.games.KuhnPoker(), seed=0)
        s.iterate(1)
        return s

    return cached("cfr", make)


def deep_cfr():
    def make():
        s = rf.solvers.DeepCfr(rf.games.KuhnPoker(), seed=0)
        s.next_iteration()
        return s

    return cached("dcfr", make)


FEN0 = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def contestants():
    return [(rf.policies.Minimax(depth=1), q_cb(7), 1.0), (rf.policies.Mcts(num_simulations=4), q_cb(7), 1.0)]


# -- the targets -----------------------------------------------------------------------------------


class Target:
    """One public callable: ``call(**kw)`` with ``base`` for the parameters not swept, ``use`` on an
    accepted result, ``health`` after every call (methods)."""

    def __init__(self, tid, fn, call, base=None, use=None, health=None, values=None, skip=(), huge=HUGE):
        self.tid, self.fn, self.call, self.huge = tid, fn, call, huge
        self.base, self.use, self.health = base or {}, use, health
        self.values = values or {}  # param -> extra [(label, factory)]
        self.skip = set(skip)


def _use_handle(mod, ctor, kw, tier):
    """The short use of an accepted handle constructor value."""

    def use(h):
        if mod == "games":
            if tier == "slow" or ctor in FAST_GAMES:
                return env_episode(rf.Env(h, rf.Reward(), seed=0))
            return None
        if mod == "policies":
            g = rf.games.Connect4()
            eng = rf.Engine(g, None, h, getattr(rf.learners, FAMILY[ctor][0])(), n_games=2)
            return collect4(eng, FAMILY[ctor][1](7, kw))
        if mod == "learners":
            pol = LEARNER_POLICY[ctor]
            eng = rf.Engine(rf.games.Connect4(), None, getattr(rf.policies, pol)(**CHEAP.get(pol, {})), h, n_games=2)
            return collect4(eng, FAMILY[pol][1](7, {}))
        if mod == "chance_modes":
            eng = rf.Engine(rf.games.Connect4(), None, rf.policies.Mcts(num_simulations=8, chance=h),
                            rf.learners.TreeStrap(), n_games=2)
            return collect4(eng)
        if mod == "noise":
            eng = rf.Engine(rf.games.Connect4(), None, rf.policies.AlphaZero(num_simulations=8, noise=h),
                            rf.learners.AlphaZero(), n_games=2)
            return collect4(eng, pv_cb(7))
        if mod == "encoders":
            if tier != "slow":
                return None
            game = {"AlphaZeroChess": "Chess", "MinimalChess": "Chess", "OpenSpielChess": "Chess",
                    "RelativeChess": "Chess", "CarRacingPixels": "CarRacing", "CarRacingVec": "CarRacing"}
            return env_episode(rf.Env(getattr(rf.games, game.get(ctor, ctor))(encoder=h), rf.Reward(), seed=0))
        return None

    return use


def handle_targets(tier):
    out = []
    for mod in ("games", "encoders", "policies", "learners", "chance_modes", "noise"):
        m = getattr(rf, mod)
        for name, fn in sorted(_module_public(m).items()):
            if name == "registered" or isinstance(fn, type):
                continue
            if name == "make":
                out.append(Target(f"{mod}.make", fn, fn))
                continue
            base = {k: (lambda v=v: v) for k, v in CHEAP.get(name, {}).items()} if mod == "policies" else {}
            out.append(Target(f"{mod}.{name}", fn, fn, base=base, use=("handle", mod, name)))
    for t in out:
        if isinstance(t.use, tuple):
            _, mod, name = t.use
            t.use = ("handle", mod, name, tier)
    return out


def engine_targets():
    def health():
        return collect4(e0())

    def stream_use(s):
        try:
            b = next(s)
            return {"batch": type(b).__name__, "enough": len(b.obs) >= 4}
        finally:
            s.stop()

    def snap():
        return e0().snapshot()

    def restore_use(_):
        return collect4(e0())

    ctor_base = {"game": lambda: rf.games.Connect4(), "reward": lambda: None,
                 "policy": lambda: rf.policies.EpsilonGreedyQ(), "learner": lambda: rf.learners.Dqn(),
                 "n_games": lambda: 2}
    return [
        Target("Engine", rf.Engine, rf.Engine, base=ctor_base, use=lambda e: collect4(e)),
        Target("Engine.collect", rf.Engine.collect, lambda **kw: e0().collect(**kw),
               base={"n_records": lambda: 4, "infer": lambda: q_cb(7)}, health=health),
        Target("Engine.collect_stream", rf.Engine.collect_stream, lambda **kw: e0().collect_stream(**kw),
               base={"collect_size": lambda: 4, "infer": lambda: q_cb(7)}, use=stream_use, health=health),
        Target("Engine.weights_updated", rf.Engine.weights_updated, lambda **kw: e0().weights_updated(**kw),
               health=health),
        Target("Engine.snapshot", rf.Engine.snapshot, lambda **kw: e0().snapshot(**kw), health=health,
               use=lambda s: e0().restore(s)),
        Target("Engine.restore", rf.Engine.restore, lambda **kw: e0().restore(**kw),
               base={"snapshot": snap}, health=health, use=restore_use),
        Target("EngineSnapshot.from_bytes", rf.EngineSnapshot.from_bytes,
               lambda **kw: rf.EngineSnapshot.from_bytes(**kw), use=lambda s: e0().restore(s),
               values={"data": EXTRA_BYTES}),
    ]


def env_targets(tier):
    out = []
    # Every game constructor (callable without arguments; ``custom`` / ``from_module`` build user
    # games from functions and are swept as targets of their own).
    games = ["Connect4", "KuhnPoker"] if tier == "fast" else sorted(
        n for n, f in _module_public(rf.games).items()
        if n not in ("make", "registered") and not isinstance(f, type)
        and all(d != "<required>" for _, _, d in (params(f) or [["", "", "<required>"]])))
    for gname in games:
        sfx = "" if gname == "Connect4" else f"[{gname}]"
        ctor_base = {"game": lambda g=gname: getattr(rf.games, g)()}
        out.append(Target(f"Env{sfx}", rf.Env, rf.Env, base=ctor_base, use=env_episode))
        for mname in sorted(dir(rf.Env)):
            meth = getattr(rf.Env, mname)
            if mname.startswith("_") or not callable(meth):
                continue
            ps = params(meth)
            if not ps or mname == "restore":
                continue
            out.append(Target(
                f"Env.{mname}{sfx}", meth, lambda _m=mname, _g=gname, **kw: getattr(env_of(_g), _m)(**kw),
                health=lambda _g=gname: env_episode(env_of(_g)),
                use=(lambda f: env_episode(f)) if mname == "fork" else None,
                values={"actions": [(f"{{0: {lab}}}", lambda f=f: {0: f()}) for lab, f in HOSTILE]
                        + [(f"{{{lab}: 0}}", lambda f=f: {f(): 0}) for lab, f in HOSTILE[:13]]},
            ))
        out.append(Target(f"Env.restore{sfx}", rf.Env.restore, lambda _g=gname, **kw: env_of(_g).restore(**kw),
                          health=lambda _g=gname: env_episode(env_of(_g))))
        out.append(Target(f"EnvSnapshot.from_bytes{sfx}", rf.EnvSnapshot.from_bytes,
                          lambda **kw: rf.EnvSnapshot.from_bytes(**kw), values={"data": EXTRA_BYTES}))
    return out


def solver_targets():
    out = [
        Target("solvers.Cfr", rf.solvers.Cfr, rf.solvers.Cfr, base={"game": lambda: rf.games.KuhnPoker()},
               use=lambda s: (s.iterate(2), s.iterations)[1]),
        Target("solvers.DeepCfr", rf.solvers.DeepCfr, rf.solvers.DeepCfr,
               base={"game": lambda: rf.games.KuhnPoker()}, use=lambda s: s.resolved_config()["solver"]["seed"]),
    ]
    cfr_base = {"n": lambda: 1, "player": lambda: 0, "key": lambda: cfr_key(), "bytes": lambda: cfr().save()}
    for mname in sorted(dir(rf.solvers.Cfr)):
        meth = getattr(rf.solvers.Cfr, mname)
        if mname.startswith("_") or not callable(meth) or not params(meth):
            continue
        out.append(Target(f"Cfr.{mname}", meth, lambda _m=mname, **kw: getattr(cfr(), _m)(**kw), base=cfr_base,
                          health=lambda: (cfr().iterate(1), cfr().num_infosets)[1],
                          values={"bytes": EXTRA_BYTES}))
    dcfr_base = {"player": lambda: 0, "traversals": lambda: 2, "infer": lambda: cfr_cb(2),
                 "policy_infer": lambda: cfr_cb(2)}
    for mname in sorted(dir(rf.solvers.DeepCfr)):
        meth = getattr(rf.solvers.DeepCfr, mname)
        if mname.startswith("_") or not callable(meth) or not params(meth):
            continue
        out.append(Target(f"DeepCfr.{mname}", meth, lambda _m=mname, **kw: getattr(deep_cfr(), _m)(**kw),
                          base=dcfr_base, health=lambda: type(deep_cfr().collect(0, 2, cfr_cb(2))).__name__))
    return out


def cfr_key():
    env = rf.Env(rf.games.KuhnPoker(), rf.Reward(), seed=0)
    return env.information_state_key(env.active_agents()[0])


def misc_targets(tier):
    def play_use(a):
        res = a.play(2)
        return len(res.games)

    arena_base = {"game": lambda: rf.games.Connect4(), "reward": lambda: rf.Reward(**C4_REWARD),
                  "contestants": contestants}
    gen_base = {"game": lambda: rf.games.Connect4(), "reward": lambda: rf.Reward(**C4_REWARD), "seed": lambda: 0}
    rsm = rf.starts.RandomStartingMoves
    out = [
        Target("chess_uci_action", rf.chess_uci_action, rf.chess_uci_action,
               base={"uci": lambda: "e2e4", "fen": lambda: FEN0}),
        Target("chess_action_uci", rf.chess_action_uci, rf.chess_action_uci,
               base={"action": lambda: rf.chess_uci_action("e2e4", FEN0), "fen": lambda: FEN0}),
        Target("engine_from_config", rf.engine_from_config, rf.engine_from_config, use=collect4,
               values={"config": [("pickle", lambda: PICKLE), ("e0.resolved_config()", lambda: e0().resolved_config())]}),
        Target("Arena", rf.Arena, rf.Arena, base=arena_base, use=play_use, huge=PY_HUGE),
        Target("Arena.play", rf.arena.Arena.play,
               lambda **kw: cached("arena", lambda: rf.Arena(**{k: f() for k, f in arena_base.items()})).play(**kw),
               base={"n_games": lambda: 2}, use=lambda r: len(r.games), huge=PY_HUGE),
        Target("starts.RandomStartingMoves", rsm, rsm, base={"n_moves": lambda: 2},
               use=lambda s: len(s.generate(rf.games.Connect4(), rf.Reward(**C4_REWARD), 0)[1]), huge=PY_HUGE),
        Target("RandomStartingMoves.generate", rsm.generate, lambda **kw: rsm(2).generate(**kw), base=gen_base,
               use=lambda r: len(r[1]), huge=PY_HUGE),
        Target("Reward", rf.Reward, lambda **kw: rf.Reward(win=kw["weights"]), base={},
               use=lambda r: env_episode(rf.Env(rf.games.Connect4(), r, seed=0))),
        Target("PolicyHandle.choose", rf.policies.Minimax(depth=1).choose,
               lambda **kw: rf.policies.Minimax(depth=1).choose(**kw),
               base={"envs": lambda: [rf.Env(rf.games.Connect4(), rf.Reward(**C4_REWARD), seed=0)],
                     "infer": lambda: q_cb(7), "gamma": lambda: 1.0}),
        Target("EncoderHandle.game_action", rf.encoders.Connect4().game_action,
               lambda **kw: rf.encoders.Connect4().game_action(**kw), base={"head": lambda: 0, "agent": lambda: 0}),
        Target("EncoderHandle.head_index", rf.encoders.Connect4().head_index,
               lambda **kw: rf.encoders.Connect4().head_index(**kw), base={"action": lambda: 0, "agent": lambda: 0}),
        Target("DqnBatch.__getitem__", type(cached("batch", lambda: e0().collect(4, q_cb(7)))).__getitem__,
               lambda **kw: cached("batch", lambda: e0().collect(4, q_cb(7)))[kw["key"]],
               health=lambda: len(cached("batch", lambda: e0().collect(4, q_cb(7))))),
    ]
    try:
        import gymnasium  # noqa: F401 - optional extra (0.4.0's side venv has none)
        import pettingzoo  # noqa: F401
    except ImportError:
        return out

    def gym_use(env):
        if hasattr(env, "agent_selection"):  # AEC
            env.reset(seed=0)
            return env.agent_selection
        obs, info = env.reset(seed=0)
        return sorted(info) if isinstance(info, dict) else None

    kw_values = {"max_episode_steps": HOSTILE, "seed": HOSTILE, "render_mode": HOSTILE}
    for fname, gname in (("make", "GridWorld"), ("gymnasium_env", "GridWorld"), ("aec_env", "Connect4")):
        fn = getattr(rf.gym, fname)
        out.append(Target(f"gym.{fname}", fn, fn, base={"game": lambda g=gname: getattr(rf.games, g)()},
                          use=gym_use, values=kw_values))
    return out


def targets(tier):
    return handle_targets(tier) + engine_targets() + env_targets(tier) + solver_targets() + misc_targets(tier)


# -- running ---------------------------------------------------------------------------------------


def _use_for(t):
    if isinstance(t.use, tuple):
        _, mod, name, tier = t.use
        return mod, name, tier
    return None


def cases_of(t):
    """``[(param, label, factory)]`` for target ``t``: its signature's parameters (``**kwargs`` of
    the gym adapters: their documented keys) x the hostile values (+ the target's extras)."""
    ps = params(t.fn) or []
    names = []
    for name, kind, _ in ps:
        if kind == "VAR_KEYWORD":
            names += [k for k in t.values if k not in [p[0] for p in ps]]
            if t.tid == "Reward":
                names.append("weights")
        elif kind != "VAR_POSITIONAL":
            names.append(name)
    out = []
    for p in names:
        if p in t.skip:
            continue
        extra = t.values.get(p, [])
        vals = HOSTILE if extra is HOSTILE else HOSTILE + extra
        for label, f in vals:
            if p in COUNTS and label in t.huge:
                continue
            out.append((p, label, f))
    return out


def run_case(t, p, label, f):
    own = {q[0] for q in params(t.fn) or []}
    kw = {k: g() for k, g in t.base.items() if k != p and (k in own or not own)}
    kw[p] = f()
    call, value = run_outcome(lambda: t.call(**kw))
    use = None
    if "ok" in call:
        big = p in COUNTS and isinstance(kw[p], (int, np.integer)) and int(kw[p]) > USE_CAP
        u = _use_for(t)
        if big:
            use = {"skipped": "large count"}
        elif f"{t.tid}|{p}|{label}" in ORIG_HANGS:
            use = {"skipped": "0.4.0 hangs"}
        elif u is not None:
            mod, name, tier = u
            use = outcome(lambda: _use_handle(mod, name, {p: kw[p]}, tier)(value))
        elif t.use is not None:
            use = outcome(lambda: t.use(value))
    health = outcome(t.health) if t.health else None
    return {"id": f"{t.tid}|{p}|{label}", "call": call, "use": use, "health": health}


def signatures(tier):
    return {t.tid: params(t.fn) for t in targets(tier)}


def run(spec):
    tier = spec.get("tier", "fast")
    only = spec.get("only")
    out = {"signatures": {}, "cases": [], "seconds": {}}
    faulthandler.enable()
    with warnings.catch_warnings():
        # the same warning filter in both builds (pytest here turns warnings into errors, the
        # original's subprocess does not); a case's warnings are not part of its outcome
        warnings.simplefilter("ignore")
        _run_targets(spec, tier, only, out)
    return out


def _run_targets(spec, tier, only, out):
    for t in targets(tier):
        out["signatures"][t.tid] = params(t.fn)
        if only and not any(t.tid.startswith(o) for o in only):
            continue
        t0 = time.perf_counter()
        for p, label, f in cases_of(t):
            cid = f"{t.tid}|{p}|{label}"
            faulthandler.dump_traceback_later(spec.get("case_timeout", 900), exit=True)
            sys.stderr.write(f"case {cid}\n")
            sys.stderr.flush()
            out["cases"].append(run_case(t, p, label, f))
            faulthandler.cancel_dump_traceback_later()
        out["seconds"][t.tid] = round(time.perf_counter() - t0, 2)


if __name__ == "__main__":
    json.dump(run(json.loads(sys.stdin.read() or "{}")), sys.stdout)
