"""Check the user's callbacks on real observations before a cold engine compiles its kernels.

A first collect on a cold cache compiles for tens of seconds before the callback is first called;
a callback returning the wrong shape or dtype used to surface only after that.  :func:`check`
calls each route's callback once on two real observation rows — the reset state and the state
after one legal move, encoded by the game's own njit functions (a handful of small functions that
compile in about a second, with the signatures the engine's kernels call them with, so the
engine's compile then reuses them) — and runs the engine's
own validator on the output, so a mistake raises the very exception (type and message) the
first fire would raise, before the expensive compile starts.

Only a cold first collect probes (``Engine._collect``): a warm engine starts its window at once
and the callback sees exactly the calls it always did.
"""

from __future__ import annotations

import numpy as np

from reinfors.jit.games import _contract

from .contract_check import _Run

__all__ = ["observation_rows", "check"]

_MAX_CHANCE_STEPS = 4096


def _run(d) -> _Run:
    """A guarded runner whose parameter row is writable, like the row the kernels read (a
    ``carray`` of the address table): the game functions then compile with the kernels' own
    signatures, and the engine's compile reuses them instead of compiling them again."""
    run = _Run(d)
    run.p = np.array(d.params, np.int64)
    return run


def _states(d, seed: int) -> list[np.ndarray]:
    """The reset state (chance resolved) and, when the game goes on, the state after one legal
    move of every active agent (each agent's first legal action)."""
    run = _run(d)
    run.rs = np.random.default_rng(seed)
    st = run.state.view
    st[:] = 0
    st[_contract.HORIZON] = d.horizon
    run.call("init", st)
    run.chance()
    states = [st.copy()]
    n = int(run.call("active", st, run.agents.view, rows=(run.agents,)))
    if 0 < n <= d.n_players:
        run.actions[:] = 0
        for j in range(n):
            agent = int(run.agents.view[j])
            run.call("legal", st, agent, run.mask.view, rows=(run.mask,))
            ids = np.flatnonzero(run.mask.view)
            if ids.size == 0:
                break
            run.actions[agent] = ids[0]
        else:
            st[_contract.TICKS] += 1
            run.amounts.view[:] = 0.0
            run.call("step", st, run.actions, run.amounts.view, rows=(run.amounts,))
            if not run.call("is_terminal", st):
                run.chance()
                states.append(st.copy())
    return states


def observation_rows(d, seed: int = 0, per_player: bool = False) -> list[np.ndarray]:
    """Two real observation rows per route, float32 ``(2, obs_size)``: one route (the agent to
    act in each state) or, with ``per_player``, one per player (that player's view)."""
    run = _run(d)
    states = _states(d, seed)
    while len(states) < 2:
        states.append(states[0])

    def encode(st, agent):
        run.state.view[:] = st
        run.call("encode", run.state.view, agent, run.obs.view, rows=(run.obs,))
        return run.obs.view.copy()

    if per_player:
        return [np.stack([encode(st, p) for st in states]) for p in range(d.n_players)]
    rows = []
    for st in states:
        run.state.view[:] = st
        n = int(run.call("active", run.state.view, run.agents.view, rows=(run.agents,)))
        agent = int(run.agents.view[0]) if n > 0 else 0
        rows.append(encode(st, agent))
    return [np.stack(rows)]


def check(d, fns, make_validator, seed: int = 0, pad_rows: int | None = None) -> None:
    """Call each callback of ``fns`` once on real rows and validate its output as a fire would
    (``make_validator()`` builds the engine's validator).  ``pad_rows``: the engine pads every
    call to that many rows (``pad=True``), so the probe does too.  Raises what the callback or
    the validator raises."""
    routes = observation_rows(d, seed, per_player=len(fns) > 1)
    for fn, rows in zip(fns, routes, strict=True):
        if pad_rows is not None and pad_rows > rows.shape[0]:
            rows = np.concatenate([rows, np.zeros((pad_rows - rows.shape[0], rows.shape[1]), np.float32)])
        rows = np.ascontiguousarray(rows, np.float32)
        validate = make_validator()
        try:
            validate(fn(rows), rows.shape[0])
        finally:
            validate.release()
