"""Fault matrix (issue 16 item 3): callbacks that raise (ValueError, RuntimeError,
KeyboardInterrupt), return None / a list / the wrong arity / wrong rows / wrong width / int or
float64 dtypes / NaN / inf, or sleep — × ``Engine.collect``, ``Engine.collect_stream``,
``PolicyHandle.choose``, ``rf.Arena.play``, ``rf.solvers.DeepCfr.collect`` — × ``n_threads``
1, 2, 8 (the engine entry points; the other three run on the calling thread and take no
``n_threads``).

Each cell: the fault surfaces as the Python exception 0.4.0 raises (type and message recorded
from probes of the original, ``docs/original-0.4.0/faults.md``), then the SAME object collects /
chooses / plays normally again (0.4.0 needs no restore after a callback fault: the probe shows
the next collect succeeding), no worker thread is left behind and repeated faults do not grow
memory.  Compositions: the ``dqn_connect4`` and ``alphazero_connect4_noise`` engines of
``tests/engine/test_snapshot.py`` (the same kernels), Kuhn Deep CFR.
"""

from __future__ import annotations

import gc
import re
import threading
import time
import tracemalloc

import numpy as np
import pytest
from engine.snapshot_cases import C4_REWARD, FAMILIES

import reinfors as rf

# -- the faults ----------------------------------------------------------------------------------


def _raise(make):
    """A callback raising a fresh ``make()`` per call (re-raising one instance would chain its
    tracebacks, which retain every call's frames: a leak of the test, not of the engine)."""

    def infer(obs):
        raise make()

    return infer


def faults(good, search: bool) -> dict:
    """name -> a faulty callback derived from the good one (``search``: a (logits, values) pair)."""

    def each(fn):
        if search:
            return lambda obs: tuple(fn(np.asarray(x)) for x in good(obs))
        return lambda obs: fn(good(obs))

    def sleepy(obs):
        time.sleep(0.002)
        return good(obs)

    return {
        "raise_value": _raise(lambda: ValueError("boom")),
        "raise_runtime": _raise(lambda: RuntimeError("boom")),
        "kbint": _raise(KeyboardInterrupt),
        "none": lambda obs: None,
        "list": lambda obs: [0.0] * len(obs),
        "nan": each(lambda x: np.full_like(x, np.nan)),
        "inf": each(lambda x: np.full_like(x, np.inf)),
        "int": each(lambda x: x.astype(np.int64)),
        "float64": each(lambda x: x.astype(np.float64)),
        "float32": each(lambda x: x.astype(np.float32)),
        "rows": each(lambda x: x[:-1]),
        "arity": (lambda obs: good(obs)[0]) if search else (lambda obs: (good(obs), good(obs))),
        "narrow": (lambda obs: (good(obs)[0][:, :-1], good(obs)[1])) if search else each(lambda x: x[..., :-1]),
        "sleep": sleepy,
    }


# 0.4.0's outcome per fault (probed; see docs/original-0.4.0/faults.md).  None: no error.
_ROWS = r"\d+"
_Q_WANT = rf"\({_ROWS}, n_heads = 1, 7\)"
_AZ_WANT = r"AlphaZero infer must return \(policy_logits \(\d+, >=7\), values \(\d+,\)\); "
_ADV = r"expected \(\d+, 2\) — one row of 2 advantages per query"
Q_EXPECT = {
    "raise_value": (ValueError, "boom"),
    "raise_runtime": (RuntimeError, "boom"),
    "kbint": (KeyboardInterrupt, ""),
    "none": (TypeError, "infer output must be a float64 or float32 ndarray; got type NoneType"),
    "list": (TypeError, "infer output must be a float64 or float32 ndarray; got type list"),
    "nan": (ValueError, "infer outputs must contain only finite values"),
    "inf": (ValueError, "infer outputs must contain only finite values"),
    "int": (TypeError, "infer output must be a float64 or float32 ndarray; got dtype int64"),
    "float64": None,
    "float32": None,
    "rows": (ValueError, rf"infer returned shape \[{_ROWS}, 1, 7\] for {_ROWS} rows; expected {_Q_WANT}"),
    "arity": (TypeError, "infer output must be a float64 or float32 ndarray; got type tuple"),
    "narrow": (ValueError, rf"infer returned shape \[{_ROWS}, 1, 6\] for {_ROWS} rows; expected {_Q_WANT}"),
    "sleep": None,
}
AZ_EXPECT = {
    **{k: Q_EXPECT[k] for k in ("raise_value", "raise_runtime", "kbint", "float64", "float32", "sleep")},
    "none": (TypeError, "AlphaZero infer must return a (policy_logits, values) tuple; got NoneType"),
    "list": (TypeError, "AlphaZero infer must return a (policy_logits, values) tuple; got list"),
    "nan": (ValueError, "AlphaZero infer outputs must contain only finite values"),
    "inf": (ValueError, "AlphaZero infer outputs must contain only finite values"),
    "int": (TypeError, "AlphaZero infer policy_logits must be a float64 or float32 ndarray; got dtype int64"),
    "rows": (
        ValueError,
        rf"AlphaZero infer must return \(policy_logits \({_ROWS}, >=7\), values \({_ROWS},\)\); "
        rf"got logits \[{_ROWS}, 7\] and values \({_ROWS},\)",
    ),
    "arity": (TypeError, "AlphaZero infer must return a (policy_logits, values) tuple; got ndarray"),
    "narrow": (ValueError, _AZ_WANT + r"got logits \[\d+, 6\] and values \(\d+,\)"),
}
FAULTS = sorted(Q_EXPECT)
_PLAIN = set(FAULTS) - {"rows", "narrow"}


def _live() -> set[threading.Thread]:
    """Live threads, less the compile-notice watchers (each ends right after its collect, but
    is not joined, so one may still be exiting when we look)."""
    return {t for t in threading.enumerate() if not t.name.startswith("reinfors-compile-notice")}


def _threads() -> int:
    return len(_live())


def _started_since(before: set[threading.Thread]) -> list[str]:
    """Names of the threads alive now that were not alive at ``before``: threads left behind.
    A thread of an earlier test's engine may end meanwhile (the xdist worker runs other modules
    first), so a count could drop without any fault of ours: compare sets, not counts."""
    return sorted(t.name for t in _live() - before)


def _past_carried(e) -> int:
    """A floor above the records the engine carries from its last window (a window that those
    records already fill is delivered without calling ``infer``: no fault could surface)."""
    rt = e._rt
    return 20 + (rt.carried() if rt is not None else 0)


def _n(batch) -> int:
    """Records in a batch."""
    return batch.obs.shape[0]


def _check(fn, expect):
    """Run ``fn`` and assert the probed outcome (exception type and message, or success)."""
    if expect is None:
        return fn()
    exc_type, message = expect
    with pytest.raises(exc_type) as info:
        fn()
    assert type(info.value) is exc_type
    text = str(info.value)
    if message:
        pattern = message if "\\" in message else re.escape(message)
        assert re.fullmatch(pattern, text), text
    return None


# -- engine compositions (reused across cells) -----------------------------------------------------

COMPOSITIONS = {
    "dqn": ("dqn_connect4", False, Q_EXPECT),
    "az": ("alphazero_connect4_noise", True, AZ_EXPECT),
}
THREADS = (1, 2, 8)
_ENGINES: dict = {}


def new_engine(comp: str, n_threads: int):
    """``(engine, callback)`` of composition ``comp``, warmed up by one collect."""
    make_kw, make_infer = FAMILIES[COMPOSITIONS[comp][0]]
    e = rf.Engine(**make_kw(), n_threads=n_threads)
    good = make_infer()
    e.collect(4, good)
    return e, good


def engine(comp: str, n_threads: int):
    """:func:`new_engine`, shared by the module's tests."""
    key = (comp, n_threads)
    if key not in _ENGINES:
        _ENGINES[key] = new_engine(comp, n_threads)
    return _ENGINES[key]


@pytest.fixture(scope="module", autouse=True)
def _release_engines():
    yield
    _ENGINES.clear()
    gc.collect()


@pytest.mark.parametrize("n_threads", THREADS)
@pytest.mark.parametrize("comp", sorted(COMPOSITIONS))
def test_collect_faults(comp, n_threads):
    """Every fault × one engine: the probed exception, then the same engine collects normally
    (no restore needed), and the thread count does not move."""
    e, good = engine(comp, n_threads)
    _, search, expect = COMPOSITIONS[comp]
    e.collect(6, good)
    before = _live()
    for name, bad in faults(good, search).items():
        _check(lambda bad=bad: e.collect(_past_carried(e), bad), expect[name])
        assert _n(e.collect(7, good)) >= 7, name
        assert _started_since(before) == [], name


@pytest.mark.parametrize("n_threads", THREADS)
@pytest.mark.parametrize("comp", sorted(COMPOSITIONS))
def test_collect_stream_faults(comp, n_threads):
    """A stream over a faulty callback: the probed exception from ``next()`` (a few batches),
    ``stop()`` gives the engine back and it collects (and streams) normally again."""
    e, good = engine(comp, n_threads)
    _, search, expect = COMPOSITIONS[comp]
    before = _live()
    names = FAULTS if n_threads == 2 else ["raise_value", "kbint", "nan", "none", "sleep"]
    for name in names:
        bad = faults(good, search)[name]
        s = e.collect_stream(_past_carried(e), bad)
        try:
            _check(lambda s=s: [b for _, b in zip(range(3), s, strict=False)], expect[name])
        finally:
            s.stop()
        assert _n(e.collect(5, good)) >= 5, name
        assert _started_since(before) == [], name
    with e.collect_stream(5, good) as s:
        assert all(_n(b) >= 5 for _, b in zip(range(2), s, strict=False))
    assert _started_since(before) == []


@pytest.mark.parametrize("comp", sorted(COMPOSITIONS))
def test_choose_faults(comp):
    family, search, expect = COMPOSITIONS[comp]
    policy = FAMILIES[family][0]()["policy"]
    good = FAMILIES[family][1]()
    envs = [rf.Env(rf.games.Connect4(), C4_REWARD, seed=s) for s in range(3)]
    want = policy.choose(envs, good, gamma=1.0)
    for name, bad in faults(good, search).items():
        _check(lambda bad=bad: policy.choose(envs, bad, gamma=1.0), expect[name])
        assert policy.choose(envs, good, gamma=1.0) == want, name  # pure: unchanged by the fault


@pytest.mark.parametrize("comp", sorted(COMPOSITIONS))
def test_arena_faults(comp):
    family, search, expect = COMPOSITIONS[comp]
    policy = FAMILIES[family][0]()["policy"]
    good = FAMILIES[family][1]()
    threads = _threads()

    def arena(infer):
        return rf.Arena(rf.games.Connect4(), C4_REWARD, [(policy, infer, 1.0), (policy, good, 1.0)], n_slots=2)

    clean = arena(good).play(2)
    for name in sorted(_PLAIN):
        _check(lambda name=name: arena(faults(good, search)[name]).play(2), expect[name])
    again = arena(good).play(2)
    assert again.to_dict() == clean.to_dict() if hasattr(clean, "to_dict") else len(again.games) == len(clean.games)
    gc.collect()
    assert _threads() <= threads


DEEPCFR_EXPECT = {
    "raise_value": (ValueError, "boom"),
    "kbint": (KeyboardInterrupt, ""),
    "none": (TypeError, "infer output must be a float64 or float32 ndarray; got type NoneType"),
    "list": (TypeError, "infer output must be a float64 or float32 ndarray; got type list"),
    "nan": (ValueError, "Deep CFR infer outputs must contain only finite values"),
    "int": (TypeError, "infer output must be a float64 or float32 ndarray; got dtype int64"),
    "rows": (ValueError, r"infer returned shape \[\d+, 2\] for \d+ rows; " + _ADV),
    "tuple": (TypeError, "infer output must be a float64 or float32 ndarray; got type tuple"),
    "float64": None,
    "wide": (ValueError, r"infer returned shape \[\d+, 3\] for \d+ rows; " + _ADV),
}


def test_deep_cfr_faults():
    dc = rf.solvers.DeepCfr(rf.games.KuhnPoker(), seed=3)
    dc.next_iteration()

    def adv(obs):
        return np.tanh(obs[:, :2].astype(np.float32))

    bad = {
        "raise_value": _raise(lambda: ValueError("boom")),
        "kbint": _raise(KeyboardInterrupt),
        "none": lambda o: None,
        "list": lambda o: [0.0] * len(o),
        "nan": lambda o: np.full((len(o), 2), np.nan, np.float32),
        "int": lambda o: np.zeros((len(o), 2), np.int64),
        "rows": lambda o: np.zeros((len(o) - 1, 2), np.float32),
        "tuple": lambda o: (adv(o), adv(o)),
        "float64": lambda o: adv(o).astype(np.float64),
        "wide": lambda o: np.zeros((len(o), 3), np.float32),
    }
    for name, fn in bad.items():
        _check(lambda fn=fn: dc.collect(0, 3, fn), DEEPCFR_EXPECT[name])
        assert dc.collect(1, 3, adv) is not None, name


# -- leaks: threads and memory over repeated faults ----------------------------------------------


def test_no_thread_or_memory_growth_over_repeated_faults():
    """120 faults (raise, NaN, KeyboardInterrupt) each followed by a normal collect, after a
    warm-up: traced memory outside the engine's state arrays stays flat, the thread count
    constant.  The state arrays keep their capacity between windows (a small window's records
    are copied out of the record pool, which keeps its arrays), and it grows by doubling when a
    window needs more, so one doubling may still come after the warm-up; it is counted apart and
    bounded.  The engine is built after tracing starts, so every array it allocates is traced
    (one allocated before would leave untraced, and its doubled successor would count whole)."""

    def state_bytes() -> int:
        return sum(a.nbytes for a in e._rt._arrays.values())

    def cycle():
        for name in ("raise_value", "nan", "kbint"):
            with pytest.raises((ValueError, KeyboardInterrupt)):
                e.collect(_past_carried(e), bad[name])
        e.collect(7, good)

    tracemalloc.start()
    try:
        e, good = new_engine("dqn", 8)
        bad = faults(good, False)
        for _ in range(10):
            cycle()
        before = _live()
        gc.collect()
        start, arrays = tracemalloc.get_traced_memory()[0], state_bytes()
        for _ in range(40):
            cycle()
        gc.collect()
        arrays_grown = state_bytes() - arrays
        grown = tracemalloc.get_traced_memory()[0] - start - arrays_grown
    finally:
        tracemalloc.stop()
    assert grown < 128 * 1024, f"{grown} bytes retained over 120 faults"
    assert arrays_grown <= arrays, f"the engine's arrays grew from {arrays} to {arrays + arrays_grown} bytes"
    assert _started_since(before) == []


def test_worker_threads_end_with_the_engine():
    """An engine's helpers (n_threads - 1, at most n_games - 1: more could not work at once) end
    when it is dropped, also after faults."""
    gc.collect()
    before = _live()
    make_kw, make_infer = FAMILIES["dqn_connect4"]
    good = make_infer()
    kw = make_kw()
    e = rf.Engine(**kw, n_threads=8)
    e.collect(6, good)
    helpers = [n for n in _started_since(before) if n.startswith("reinfors-worker-")]
    assert len(helpers) == min(8, kw["n_games"]) - 1, helpers
    with pytest.raises(KeyboardInterrupt):
        e.collect(6, faults(good, False)["kbint"])
    with pytest.raises(ValueError):
        s = e.collect_stream(6, faults(good, False)["nan"])
        try:
            next(s)
        finally:
            s.stop()
    e.collect(6, good)
    del e, s
    gc.collect()
    for _ in range(100):
        if not _started_since(before):
            break
        time.sleep(0.05)
    assert _started_since(before) == []


def test_reallocation_waits_for_a_busy_helper():
    """Regression (an abort seen once under 8 threads): a helper counted busy may hold the old
    address table, so growing the pools must wait for it and keep new helpers from reading the
    table meanwhile (``Runtime._helpers_out``).  Before the fix ``_ensure_capacity`` freed the
    arrays at once."""
    e, good = engine("dqn", 8)
    rt = e._rt
    h = rt._helpers
    with h.cv:
        h.busy += 1  # a helper that read E and has not entered the kernel yet
    grown = threading.Event()

    def grow():
        rt._ensure_capacity(5000)
        grown.set()

    t = threading.Thread(target=grow)
    t.start()
    try:
        assert not grown.wait(0.3), "arrays were reallocated under a busy helper"
    finally:
        with h.cv:
            h.busy -= 1
    assert grown.wait(30)
    t.join()
    assert _n(e.collect(_past_carried(e), good)) >= 20
