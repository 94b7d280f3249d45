"""What one search simulation costs, per core, split into its phases (issue 48).

    python benchmarks/sim_cost.py [--only c4_az] [--seconds 2] [--json]

For each row (AlphaZero / Mcts on Connect4, Chess, Backgammon, Snake; Minimax on Connect4) the
script builds the engine of the workload (``benchmarks/workloads.py``; the Mcts rows on the other
games use Mcts(32) + TreeStrap, zero Q, the AlphaZero workload's slots), with ``n_threads=1`` and
the zero callback, and measures:

* **in situ**: the process's CPU time over simulations (telemetry ``decisions * mean_leaves``)
  across steady-state collects (after a warm-up of ~2 episodes a slot).  This is everything a
  simulation costs in the engine: the search, the request (span, messages, fire, routing back,
  the slot's hand-over), the decision, the records, the game step and the callback's Python.
* **micro**: the same searches replayed in one njit loop on the same slots' current states,
  without the engine: each simulation selects and expands (``_select_expand`` /
  ``_sim_select_expand``, the shipped kernels), its rows are encoded into a scratch buffer as
  ``_place_run`` encodes them into an arena, and the zero prediction is absorbed and backed up
  (``_search_absorb``).  Measured as the thread's CPU time per simulation.
* **phases**: the micro loop once more, in a module compiled only for this script with cycle
  counters (``llvm.readcyclecounter``) around the descent, the expansions inside it (wrappers of
  ``_new_edge`` / ``_resample_pick`` / ``_sim_child``, the shipped kernels inside), the encode
  and the absorb; the counters' own cost (calibrated) is subtracted and the cycles are scaled to
  the run's thread CPU time, so a descheduled thread does not inflate them.

  - ``select``: the descent without its expansions (PUCT / UCT scores, chance picks, bookkeeping);
  - ``step``: expanding a new edge: state copy, the game's step and rewards, the child's legal
    moves and node setup (Snake: also the joint child's lookup and AlwaysResample's re-step);
  - ``encode``: the leaf's observation rows (``G_encode``; the root's copied);
  - ``backup``: the absorb: AlphaZero's prior (softmax over the legal edges, Dirichlet at the
    root) or Mcts's masked max, and the negamax backup along the path (terminal leaves too);
  - ``begin``: a fresh tree per search (root setup), per simulation;
  - ``request``: in situ minus micro: what the engine adds around the search.

The per-phase counters exist only in the module this script generates (the shipped kernel parts
plus the part below, appended); the engine's own modules are untouched.  Minimax reports its
in-situ cost per leaf node only.  Times are ns per simulation on one core; the machine's other
load moves them (read ratios between builds run alternately, not absolute values).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads  # noqa: E402

import reinfors as rf  # noqa: E402
from reinfors._runtime import codegen  # noqa: E402
from reinfors._runtime.gamedef import reached_state_starts  # noqa: E402
from reinfors.jit import _compile  # noqa: E402

# Counter words of the timed module (the last row of the extended address table points at them).
C_DESC, C_STEP, C_STEPIN, C_ENC, C_BACK, C_BEGIN, C_TOTAL = range(7)
N_DESC, N_STEP, N_ENC, N_BACK, N_BEGIN, C_DEPTH, C_SIMS, C_ERR = range(7, 15)
N_COUNTERS = 16

# The benchmark's kernel part, appended to the tree family's parts.  SC_TIMED is substituted:
# the plain module (no counters) gives the micro total, the timed one the phase split.
_PART = '''

# ---- body: benchmarks/sim_cost.py (the simulation cost benchmark; never shipped) ----
from llvmlite import ir as _sc_ir
from numba.core import cgutils as _sc_cgutils
from numba.core import types as _sc_types
from numba.extending import intrinsic as _sc_intrinsic

SC_TIMED = @TIMED@


@_sc_intrinsic
def _sc_clock(typingctx):
    """The cycle counter (``llvm.readcyclecounter``: rdtsc on x86)."""
    sig = _sc_types.int64()

    def codegen(context, builder, signature, args):
        fnty = _sc_ir.FunctionType(_sc_ir.IntType(64), [])
        fn = _sc_cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return sig, codegen


@_sc_intrinsic
def _sc_word(typingctx, address, index, delta):
    """``*(int64 *)(address + 8 * index) += delta``; returns the new value (``delta`` 0: a read).
    Plain loads and stores on the benchmark's counter array (no array object: callers of any
    compile flavour can use it)."""
    sig = _sc_types.int64(_sc_types.int64, _sc_types.int64, _sc_types.int64)

    def codegen(context, builder, signature, args):
        addr, idx, d = args
        i64 = _sc_ir.IntType(64)
        ptr = builder.inttoptr(builder.add(addr, builder.mul(idx, i64(8))), i64.as_pointer())
        v = builder.add(builder.load(ptr), d)
        builder.store(v, ptr)
        return v

    return sig, codegen


@kernel(inline="always")
def _sc_addr(AT):
    """The counters' address: the extended address table's last row."""
    return AT[AT.shape[0] - 1, 0]


if SC_TIMED:
    _sc_new_edge = _new_edge
    _sc_resample_pick = _resample_pick
    _sc_sim_child = _sim_child

    @kernel
    def _new_edge(AT, g, parent, a):
        c = _sc_addr(AT)
        _sc_word(c, @C_DEPTH@, 1)
        t0 = _sc_clock()
        r = _sc_new_edge(AT, g, parent, a)
        t1 = _sc_clock()
        if _sc_word(c, @C_DEPTH@, -1) == 0:
            _sc_word(c, @C_STEP@, t1 - t0)
            _sc_word(c, @N_STEP@, 1)
        return r

    @kernel
    def _resample_pick(AT, g, cn):
        c = _sc_addr(AT)
        _sc_word(c, @C_DEPTH@, 1)
        t0 = _sc_clock()
        r = _sc_resample_pick(AT, g, cn)
        t1 = _sc_clock()
        if _sc_word(c, @C_DEPTH@, -1) == 0:
            _sc_word(c, @C_STEP@, t1 - t0)
            _sc_word(c, @N_STEP@, 1)
        return r

    @kernel
    def _sim_child(AT, g, node, code):
        c = _sc_addr(AT)
        _sc_word(c, @C_DEPTH@, 1)
        t0 = _sc_clock()
        r = _sc_sim_child(AT, g, node, code)
        t1 = _sc_clock()
        if _sc_word(c, @C_DEPTH@, -1) == 0:
            _sc_word(c, @C_STEP@, t1 - t0)
            _sc_word(c, @N_STEP@, 1)
        return r


@kernel(inline="always")
def _sc_tick(AT):
    return _sc_clock() if SC_TIMED else _I0


@kernel(inline="always")
def _sc_add(AT, t0, word, nword):
    if SC_TIMED:
        c = _sc_addr(AT)
        _sc_word(c, word, _sc_clock() - t0)
        _sc_word(c, nword, 1)


@kernel
def _sc_rows(AT, g, n, rows):
    """``_place_run``'s encode of the request ``rq[g, :n]`` into ``rows`` (not an arena)."""
    E = _unpack(AT)
    params, rq, t_state, root = E.params, E.rq, E.t_state, E.root
    for j in range(n):
        dst = rows[j]
        node = rq[g, j, 0]
        if node >= 0:
            G_encode(params, t_state[g, node], rq[g, j, 1], dst)
        else:
            src = root[g, -1 - node]
            for i in range(src.shape[0]):
                dst[i] = src[i]


@kernel
def _sc_search(AT, g, rows):
    """One search of slot ``g`` from its current state, ``_mcts_run``'s unbatched loop with the
    request replaced by an encode into ``rows`` and the zero prediction absorbed at once.
    Returns the simulations run (-1 on a tree overflow, -2 on a chance fan it does not replay)."""
    E = _unpack(AT)
    cfg, sinfo = E.cfg, E.sinfo
    t_ni, t_nv, rq = E.t_ni, E.t_nv, E.rq
    maxn = cfg[CFG_MAXN] != 0
    N = cfg[CFG_N]
    c = _sc_addr(AT)
    t0 = _sc_tick(AT)
    _tree_begin(AT, g)
    _sc_add(AT, t0, @C_BEGIN@, @N_BEGIN@)
    while sinfo[g, SI_SIMS] < cfg[CFG_SIMS]:
        sinfo[g, SI_SIMS] += 1
        t0 = _sc_tick(AT)
        s0 = _sc_word(c, @C_STEP@, 0)
        if SIMUL:
            r = _sim_select_expand(AT, g)
        else:
            r = _select_expand(AT, g)
        _sc_add(AT, t0, @C_DESC@, @N_DESC@)
        _sc_word(c, @C_STEPIN@, _sc_word(c, @C_STEP@, 0) - s0)
        if r < 0:
            return _IM1
        leaf = sinfo[g, SI_LEAF]
        n = _I0
        if r == _SR_FAN:
            if not SIMUL:
                return np.int64(-2)
            for ch in range(sinfo[g, SI_FAN0], sinfo[g, SI_FAN0] + sinfo[g, SI_FANN]):
                alive = t_ni[g, ch, TN_ALIVE]
                for p in range(N):
                    if t_ni[g, ch, TN_TERM] == 0 and (alive >> p) & 1:
                        rq[g, n, 0] = ch
                        rq[g, n, 1] = p
                        n += 1
            if n == 0:
                t0 = _sc_tick(AT)
                _sim_fan_backup(AT, g)
                _sc_add(AT, t0, @C_BACK@, @N_BACK@)
                continue
        elif r != _SR_EVAL:
            if r == _SR_TERMINAL:
                sinfo[g, SI_TERMS] += 1
            else:
                sinfo[g, SI_CAPS] += 1
            t0 = _sc_tick(AT)
            if SIMUL:
                _sim_backprop(AT, g, r == _SR_TERMINAL)
            elif maxn:
                _backprop_maxn(AT, g, r == _SR_TERMINAL)
            elif r == _SR_TERMINAL:
                _backprop(AT, g, 0.0)
            else:
                _backprop(AT, g, t_nv[g, leaf, 0])
            _sc_add(AT, t0, @C_BACK@, @N_BACK@)
            continue
        elif SIMUL:
            if leaf == 0:
                for j in range(sinfo[g, SI_NACT]):
                    rq[g, j, 0] = -1 - j
                    rq[g, j, 1] = E.act_agents[g, j]
                n = sinfo[g, SI_NACT]
            else:
                alive = t_ni[g, leaf, TN_ALIVE]
                for p in range(N):
                    if (alive >> p) & 1:
                        rq[g, n, 0] = leaf
                        rq[g, n, 1] = p
                        n += 1
        elif maxn:
            for q in range(N):
                rq[g, q, 0] = -1 - q if leaf == 0 else leaf
                rq[g, q, 1] = q
            n = N
        else:
            rq[g, 0, 0] = -1 if leaf == 0 else leaf
            rq[g, 0, 1] = t_ni[g, leaf, TN_MOVER]
            n = _I1
        sinfo[g, SI_ROWS] = n
        t0 = _sc_tick(AT)
        _sc_rows(AT, g, n, rows)
        _sc_add(AT, t0, @C_ENC@, @N_ENC@)
        t0 = _sc_tick(AT)
        _search_absorb(AT, g)
        _sc_add(AT, t0, @C_BACK@, @N_BACK@)
    return sinfo[g, SI_SIMS]


@kernel(entry=True)
def sc_run(AT, slots, reps, rows):
    """``reps`` searches of every slot in ``slots`` (zero predictions: ``preds`` is zeroed
    first).  Returns the simulations run, or a negative ``_sc_search`` code.  The table is
    borrowed (no reference counting per call), as ``work`` does."""
    AT = _borrowed(AT)
    E = _unpack(AT)
    preds = E.preds
    for g in slots:
        for j in range(preds.shape[1]):
            for w in range(preds.shape[2]):
                preds[g, j, w] = 0.0
    c = _sc_addr(AT)
    t0 = _sc_tick(AT)
    total = _I0
    for _ in range(reps):
        for g in slots:
            s = _sc_search(AT, g, rows)
            if s < 0:
                return s
            total += s
    if SC_TIMED:
        _sc_word(c, @C_TOTAL@, _sc_clock() - t0)
    _sc_word(c, @C_SIMS@, total)
    return total


@kernel(entry=True)
def sc_calibrate(AT, n):
    """Cycles of ``n`` empty timed regions (what one counter pair costs)."""
    AT = _borrowed(AT)
    t0 = _sc_clock()
    for _ in range(n):
        t1 = _sc_tick(AT)
        _sc_add(AT, t1, @C_ERR@, @C_ERR@)
    return _sc_clock() - t0
'''


def _part_path(timed: bool) -> Path:
    """Write the benchmark part (timed or plain) where the generated modules live; returns it."""
    src = _PART.replace("@TIMED@", "True" if timed else "False")
    for name, val in dict(C_DESC=C_DESC, C_STEP=C_STEP, C_STEPIN=C_STEPIN, C_ENC=C_ENC, C_BACK=C_BACK,
                          C_BEGIN=C_BEGIN, C_TOTAL=C_TOTAL, N_DESC=N_DESC, N_STEP=N_STEP, N_ENC=N_ENC,
                          N_BACK=N_BACK, N_BEGIN=N_BEGIN, C_DEPTH=C_DEPTH, C_SIMS=C_SIMS, C_ERR=C_ERR).items():  # fmt: skip
        src = src.replace(f"@{name}@", str(val))
    d = _compile.cache_dir() / "sim_cost"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"part_{'timed' if timed else 'plain'}.py"
    if not path.exists() or path.read_text() != src:
        path.write_text(src)
    return path


def bench_module(eng, timed: bool):
    """The engine's tree-family kernel module with the benchmark part appended (its own file and
    cache; the engine's module is not touched)."""
    d = eng._game._def
    family = "tree"
    fns = {role: getattr(d.ns, role, None) for role in codegen.ROLES}
    fns["encode"] = d._encode
    fns["head_index"] = None if d.head_map is None else d.head_map[0]
    saved = codegen._TEMPLATES
    codegen._TEMPLATES = dict(saved)
    codegen._TEMPLATES[family] = saved[family] + (_part_path(timed),)
    try:
        return codegen.kernel_module(
            d.name, fns, d.n_actions, family, simultaneous=d.simultaneous, chance_in_step=d.chance_in_step,
            legal_ranks=d.legal_ranks, start_buffer=reached_state_starts(d.name), leaf_batch=False,
        )  # fmt: skip
    finally:
        codegen._TEMPLATES = saved


def _zero_q(A):
    return lambda obs: np.zeros((len(obs), 1, A), np.float32)


def _zero_pv(A):
    return lambda obs: (np.zeros((len(obs), A), np.float32), np.zeros(len(obs), np.float32))


def build(row: str):
    """(engine, zero callback, workload name or None) of a row, ``n_threads=1``."""
    P, L, G = rf.policies, rf.learners, rf.games
    if row in ("c4_az", "c4_mcts", "chess_az", "backgammon_az", "snake_az", "c4_minimax"):
        name = {"c4_az": "c4_az_zero", "chess_az": "chess_az_zero"}.get(row, row)
        eng, infer = workloads.build(name, rf, 1)
        return eng, infer
    game, reward, n_games = {
        "chess_mcts": (G.Chess(), rf.Reward(), 32),
        "backgammon_mcts": (G.Backgammon(), None, 32),
        "snake_mcts": (G.Snake(), rf.Reward(food=1.0, loss=-1.0), 16),
    }[row]
    eng = rf.Engine(game, reward, P.Mcts(num_simulations=32), L.TreeStrap(), n_games=n_games, n_threads=1)
    return eng, _zero_q(game._def.n_actions)


ROWS = ("c4_az", "c4_mcts", "chess_az", "chess_mcts", "backgammon_az", "backgammon_mcts", "snake_az", "snake_mcts",
        "c4_minimax")  # fmt: skip


def in_situ(eng, infer, seconds: float) -> dict:
    """Warm up (~2 episodes a slot), then collect for ``seconds`` of CPU: ns of process CPU per
    simulation (Minimax: per leaf)."""
    n = eng._n_games
    eng.collect(40 * n, infer)
    cpu = sims = dec = 0.0
    while cpu < seconds:
        c0 = time.process_time_ns()
        b = eng.collect(8 * n, infer)
        cpu_i = time.process_time_ns() - c0
        t = b.telemetry
        cpu += cpu_i / 1e9
        sims += t["decisions"] * t["mean_leaves"]
        dec += t["decisions"]
    return {"ns_per_sim": cpu * 1e9 / max(sims, 1.0), "sims_per_decision": sims / max(dec, 1.0), "cpu_s": cpu}


def _phase(cycles: float, pairs: float, calib: float, scale: float) -> float:
    """A phase's ns per simulation: its cycles less its counter pairs' own cost, scaled."""
    return max(0.0, (cycles - pairs * calib) * scale)


def micro(eng, seconds: float) -> dict:
    """The replayed searches (plain module: thread CPU per simulation; timed module: phases)."""
    rt = eng._rt
    AT0 = rt.E
    d = eng._game._def
    slots = np.arange(eng._n_games, dtype=np.int64)
    cnt = np.zeros(N_COUNTERS, np.int64)
    AT = np.vstack([AT0, np.array([[cnt.ctypes.data, N_COUNTERS, 0, 0, 0]], np.int64)])
    rows = np.zeros((max(8, d.n_players * 4), d.obs_size), np.float32)
    out = {}
    for timed in (False, True):
        k = bench_module(eng, timed)
        s = k.sc_run(AT, slots[:1], 1, rows)  # compile / load
        if s < 0:
            raise RuntimeError(f"sc_run: {s}")
        cnt[:] = 0
        reps = 1
        while True:  # size a run to ~0.2 s
            c0 = time.thread_time_ns()
            k.sc_run(AT, slots, reps, rows)
            if time.thread_time_ns() - c0 > 2e8 or reps > 1 << 16:
                break
            reps *= 2
        cnt[:] = 0
        ns = sims = 0
        while ns < seconds * 1e9:
            c0 = time.thread_time_ns()
            s = k.sc_run(AT, slots, reps, rows)
            ns += time.thread_time_ns() - c0
            sims += s
        if not timed:
            out["micro"] = ns / sims
            continue
        calib = k.sc_calibrate(AT, 1_000_000) / 1e6  # cycles a counter pair costs
        c = cnt.astype(np.float64)
        scale = ns / c[C_TOTAL] / sims  # cycles -> ns per simulation of thread CPU
        step = _phase(c[C_STEP], c[N_STEP], calib, scale)
        desc = _phase(c[C_DESC], c[N_DESC], calib, scale)
        out["select"] = max(0.0, desc - _phase(c[C_STEPIN], c[N_STEP], calib, scale))
        out["step"] = step
        out["encode"] = _phase(c[C_ENC], c[N_ENC], calib, scale)
        out["backup"] = _phase(c[C_BACK], c[N_BACK], calib, scale)
        out["begin"] = _phase(c[C_BEGIN], c[N_BEGIN], calib, scale)
        out["timed_total"] = ns / sims
        out["counter_ns"] = calib * scale * sims
    return out


def measure(row: str, seconds: float, situ: bool = True) -> dict:
    eng, infer = build(row)
    res = {"row": row}
    if situ:
        res.update(in_situ(eng, infer, seconds))
    else:
        n = eng._n_games
        eng.collect(40 * n, infer)  # the slots' states and trees in steady state
    if row != "c4_minimax":
        res.update(micro(eng, seconds / 2))
        if situ:
            res["request"] = res["ns_per_sim"] - res["micro"]
    return res


def table(results) -> str:
    cols = ("select", "step", "encode", "backup", "begin", "micro", "request", "ns_per_sim")
    head = "| row | " + " | ".join(cols[:-1]) + " | in situ |\n|" + "---|" * (len(cols) + 1)
    lines = [head]
    for r in results:
        vals = [f"{r[c]:.0f}" if c in r else "" for c in cols]
        lines.append(f"| {r['row']} | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=None, help="rows whose name contains this")
    ap.add_argument("--seconds", type=float, default=2.0, help="CPU seconds of in-situ collects a row")
    ap.add_argument("--json", action="store_true", help="print one JSON line per row instead of the table")
    ap.add_argument("--micro-only", action="store_true", help="skip the in-situ collects (the replayed searches only)")
    args = ap.parse_args()
    results = []
    for row in ROWS:
        if args.only and args.only not in row:
            continue
        r = measure(row, args.seconds, not args.micro_only)
        results.append(r)
        if args.json:
            print(json.dumps(r), flush=True)
        else:
            print(f"# {row}: " + ", ".join(f"{k}={v:.0f}" for k, v in r.items() if isinstance(v, float)), flush=True)
    if not args.json:
        print(f"# reinfors from {rf.__file__}; ns per simulation on one core (Minimax: per leaf)")
        print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
