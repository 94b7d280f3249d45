"""Shared test helpers: inference callbacks, the user-defined test games and the stream
compositions.  Each game's module-level constants carry its prefix (``NIM_``, ``DR_``): an njit
function reads a global's value at compile time, so two games sharing a name here would share
a state layout.  One place for what several test modules use (no test imports another test module).

``tests/`` is on ``sys.path`` (the rootdir conftest): ``from helpers import linear_q``.  The test
games' njit functions live here, so their generated kernel modules are the same ones whichever
test module builds them (``tests/precompile.py`` compiles them once for the suite).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba import njit

import reinfors as rf
from reinfors.jit._compile import InternalKernel
from reinfors.jit.games._contract import HEADER

# -- internal kernels from Python -------------------------------------------------------------------


def _shim(k):
    def call(*args):
        return k(*args)

    return njit(nogil=True)(call)


def python_callable(module) -> SimpleNamespace:
    """``module``'s names, with each internal kernel (``InternalKernel``: compiled without Numba's
    CPython wrapper, so Python cannot call it) behind a ``nogil`` njit shim Python can call.  njit
    test functions keep calling the module's own kernels."""
    return SimpleNamespace(**{n: _shim(v) if isinstance(v, InternalKernel) else v for n, v in vars(module).items()})


# -- callbacks ------------------------------------------------------------------------------------


def zero_pv(n_actions):
    """``(logits, values)`` of zeros: a uniform prior and a zero value for every row."""
    return lambda obs: (np.zeros((len(obs), n_actions)), np.zeros(len(obs)))


def zero_q(n_actions):
    """Q rows of zeros, one head."""
    return lambda obs: np.zeros((len(obs), 1, n_actions))


def _rowwise(obs, w):
    """``obs @ w`` row by row (elementwise float64 math, no BLAS: a row's output never depends
    on the batch it came in)."""
    return (obs[:, :, None].astype(np.float64) * w[None]).sum(axis=1)


def linear_pv(obs_size, n_actions, seed=0):
    """A fixed random linear ``(logits, tanh value)`` callback."""
    w = np.random.default_rng(seed).standard_normal((obs_size, n_actions + 1)) * 0.3

    def infer(obs):
        out = _rowwise(obs, w)
        return out[:, :n_actions], np.tanh(out[:, n_actions])

    return infer


def linear_q(obs_size, n_actions, heads=1, seed=0, scale=0.3, squash=False):
    """A fixed random linear Q callback ``(rows, heads, n_actions)``: weights ``N(0, 1) * scale``,
    outputs through ``tanh`` when ``squash``."""
    w = np.random.default_rng(seed).standard_normal((obs_size, heads * n_actions)) * scale

    def infer(obs):
        out = _rowwise(obs, w)
        return (np.tanh(out) if squash else out).reshape(len(obs), heads, n_actions)

    return infer


# -- Nim: a user-defined game (one pile, take 1 or 2, whoever takes the last stone wins) ----------

NIM_PILE = HEADER
NIM_TURN = HEADER + 1
NIM_WINNER = HEADER + 2


@njit
def nim_init(params, state):
    state[NIM_PILE] = params[0]
    state[NIM_TURN] = 0
    state[NIM_WINNER] = -1


@njit
def nim_legal(params, state, agent, mask):
    n = 0
    for a in range(2):
        ok = state[NIM_TURN] == agent and a + 1 <= state[NIM_PILE]
        mask[a] = 1 if ok else 0
        n += 1 if ok else 0
    return n


@njit
def nim_active(params, state, out):
    out[0] = state[NIM_TURN]
    return 1


@njit
def nim_step(params, state, actions, amounts):
    p = state[NIM_TURN]
    state[NIM_PILE] -= actions[p] + 1
    if state[NIM_PILE] == 0:
        state[NIM_WINNER] = p
        amounts[p, 0] += 1.0
        amounts[1 - p, 1] += 1.0
    else:
        state[NIM_TURN] = 1 - p


@njit
def nim_terminal(params, state):
    return state[NIM_WINNER] >= 0


@njit
def nim_encode(params, state, agent, out):
    out[0] = state[NIM_PILE] / params[0]
    out[1] = 1.0 if state[NIM_TURN] == agent else 0.0


def make_nim(pile=4, encode=nim_encode, name="nim"):
    return rf.games.custom(
        name,
        n_players=2,
        n_actions=2,
        obs_shape=(2,),
        state_size=HEADER + 3,
        reward_keys=("win", "loss"),
        reward_defaults=(1.0, -1.0),
        init=nim_init,
        step=nim_step,
        legal=nim_legal,
        active=nim_active,
        is_terminal=nim_terminal,
        encode=encode,
        params=[pile],
    )


# -- the dice race: a user game with chance inside its step (tests/engine/test_search_chance.py) -

TARGET = 6
DR_POS0, DR_POS1, DR_TURN, DR_ROLL, DR_WINNER, DR_PENDING = (HEADER + i for i in range(6))
FAR = ((1, 0.5), (2, 1.0 / 3.0), (3, 1.0 / 6.0))
NEAR = ((1, 0.75), (2, 0.25))


@njit
def dr_init(params, state):
    state[DR_POS0] = 0
    state[DR_POS1] = 0
    state[DR_TURN] = 0
    state[DR_ROLL] = 0
    state[DR_WINNER] = -1
    state[DR_PENDING] = 1  # the first roll: chance at reset


@njit
def dr_legal(params, state, agent, mask):
    ok = 1 if (state[DR_TURN] == agent and state[DR_PENDING] == 0) else 0
    mask[0] = ok
    mask[1] = ok
    return 2 * ok


@njit
def dr_active(params, state, out):
    out[0] = state[DR_TURN]
    return 1


@njit
def dr_step(params, state, actions, amounts):
    p = state[DR_TURN]
    r = state[DR_ROLL]
    if actions[p] == 0:
        state[DR_POS0 + p] += r
        if state[DR_POS0 + p] >= params[0]:
            state[DR_WINNER] = p
            amounts[p, 0] += 1.0
            amounts[1 - p, 1] += 1.0
            return
    else:
        q = DR_POS0 + 1 - p
        state[q] = max(0, state[q] - r)
    state[DR_TURN] = 1 - p
    state[DR_ROLL] = 0
    state[DR_PENDING] = 1  # the next mover's roll: chance inside the step


@njit
def dr_terminal(params, state):
    return state[DR_WINNER] >= 0


@njit
def dr_encode(params, state, agent, out):
    me = state[DR_POS0 + agent]
    opp = state[DR_POS0 + 1 - agent]
    out[0] = me / params[0]
    out[1] = opp / params[0]
    out[2] = state[DR_ROLL] / 3.0 if state[DR_TURN] == agent else -state[DR_ROLL] / 3.0
    out[3] = 1.0 if state[DR_TURN] == agent else 0.0


@njit
def dr_pending(params, state):
    return state[DR_PENDING] != 0


@njit
def dr_outcomes(params, state, probs):
    if state[DR_POS0 + state[DR_TURN]] >= params[0] - 2:
        probs[0] = 0.75
        probs[1] = 0.25
        return 2
    probs[0] = 0.5
    probs[1] = 1.0 / 3.0
    probs[2] = 1.0 / 6.0
    return 3


@njit
def dr_apply(params, state, outcome):
    state[DR_ROLL] = outcome + 1
    state[DR_PENDING] = 0


def make_dice_race(target=TARGET, horizon=24):
    return rf.games.custom(
        "dice_race",
        n_players=2,
        n_actions=2,
        obs_shape=(4,),
        state_size=HEADER + 6,
        reward_keys=("win", "loss"),
        reward_defaults=(1.0, -1.0),
        init=dr_init,
        step=dr_step,
        legal=dr_legal,
        active=dr_active,
        is_terminal=dr_terminal,
        encode=dr_encode,
        chance_pending=dr_pending,
        chance_outcomes=dr_outcomes,
        apply_chance=dr_apply,
        max_chance=3,
        params=[target],
        horizon=horizon,
    )


REWARD = rf.Reward(win=1.0, loss=-1.0)


# -- the leaf callback and the reference recursion ------------------------------------------------


def leaf_q(obs: np.ndarray) -> np.ndarray:
    """Row-wise Q rows ``(rows, 1, 2)``: elementwise float64 math, so a row's output does not
    depend on the batch it came in."""
    o = obs.astype(np.float64)
    base = 0.4 * o[:, 0] - 0.3 * o[:, 1] + 0.2 * o[:, 2] + 0.1 * o[:, 3]
    return np.stack([base, base + 0.05 * o[:, 1] - 0.02], axis=1)[:, None, :]


def leaf_pv(obs: np.ndarray):
    q = leaf_q(obs)[:, 0, :]
    return np.zeros((len(obs), 2)), np.tanh(q.max(axis=1))


# -- Connect4 stream compositions (tests/engine/test_stream.py, test_policy_lag.py) ---------------

C4_REWARD = rf.Reward(win=1.0, loss=-1.0)
C4_ACTIONS = 7


def c4_linear_q(seed=0):
    return linear_q(84, C4_ACTIONS, seed=seed)


def c4_linear_pv(seed=0):
    return linear_pv(84, C4_ACTIONS, seed=seed)


COMPOSITIONS = {
    "dqn": (lambda: rf.policies.EpsilonGreedyQ(epsilon=0.2), lambda: rf.learners.Dqn(), c4_linear_q),
    "ppo": (lambda: rf.policies.Ppo(), lambda: rf.learners.Ppo(), c4_linear_pv),
    "alphazero": (
        lambda: rf.policies.AlphaZero(num_simulations=6),
        lambda: rf.learners.AlphaZero(),
        c4_linear_pv,
    ),
    "treestrap": (lambda: rf.policies.Mcts(num_simulations=6), lambda: rf.learners.TreeStrap(), c4_linear_q),
}


def engine(kind="dqn", n_games=4, seed=1, **kw):
    """A Connect4 engine of one of :data:`COMPOSITIONS`."""
    pol, lrn, _ = COMPOSITIONS[kind]
    return rf.Engine(rf.games.Connect4(), C4_REWARD, pol(), lrn(), n_games=n_games, seed=seed, **kw)


def infer_for(kind):
    return COMPOSITIONS[kind][2]()


# -- comparing batches ------------------------------------------------------------------------------

# Telemetry of the callback calls themselves: it depends on how fires were cut (batch_size, pad,
# leaf batching, the pipelined schedule, and for stall closes timing when helper threads run),
# not on the records.
GEOMETRY_KEYS = frozenset({"infer_seconds", "infer_calls", "padded_rows", "stall_closes", "stall_releases"})


def assert_same_batch(x, y, where="", skip=("infer_seconds",)):
    """Every batch field bit-identical (dtype, shape and bytes); telemetry equal except the keys
    in ``skip`` (``GEOMETRY_KEYS`` across batch geometries or fire schedules)."""
    assert type(x) is type(y), f"{where}: batch types"
    for name in type(x)._FIELDS:
        a, b = getattr(x, name), getattr(y, name)
        if name == "telemetry":
            a = {k: v for k, v in a.items() if k not in skip}
            b = {k: v for k, v in b.items() if k not in skip}
            assert a == b, f"{where}: telemetry"
        else:
            assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {name}"
            assert a.tobytes() == b.tobytes(), f"{where}: {name} differs"
