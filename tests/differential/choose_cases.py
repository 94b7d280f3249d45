"""``PolicyHandle.choose`` scenarios that run unchanged under either build.

Imports only numpy and ``reinfors``: ``orig_choose_driver.py`` runs :func:`run_all` under the
original reinfors 0.4.0 (side venv), the differential test runs it under this package, and the
two JSON documents must be equal.  Every scenario is deterministic in both builds: Minimax is
seed-free, AlphaZero runs with ``temperature=0, noise=None`` and Mcts with its default
temperature 0 (no RNG is drawn), EpsilonGreedyQ with ``epsilon=0`` and one head; the callbacks are
row-independent functions of the observation whose float64 arithmetic is identical in both
processes.  The per-callback call log (rows per call and a digest of the row bytes) checks the
pooling into rounds and the dedupe call for call.
"""

from __future__ import annotations

import hashlib

import numpy as np

import reinfors as rf

P = rf.policies


def _outcome(fn):
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 - recorded and compared
        return {"error": type(e).__name__, "message": str(e)}
    return {"ok": value}


class _Callback:
    """Linear in the observation (row-independent), logging ``(rows, sha1 of the rows)``."""

    def __init__(self, obs_size, n_actions, kind, seed=0):
        self.w = np.random.default_rng(seed).standard_normal((obs_size, n_actions + 1)) * 0.3
        self.A, self.kind, self.log = n_actions, kind, []

    def __call__(self, obs):
        self.log.append([len(obs), hashlib.sha1(np.ascontiguousarray(obs).tobytes()).hexdigest()[:16]])
        out = (obs[:, :, None].astype(np.float64) * self.w[None]).sum(axis=1)
        if self.kind == "pv":
            return out[:, : self.A], np.tanh(out[:, self.A])
        return out[:, None, : self.A]


def _positions(game, n, seed, max_moves):
    """``n`` random running positions (seeded legal playouts of 0..max_moves moves)."""
    rs = np.random.default_rng(seed)
    envs = []
    while len(envs) < n:
        env = rf.Env(game, rf.Reward(), seed=0)
        for _ in range(int(rs.integers(0, max_moves + 1))):
            if env.done():
                break
            mover = env.active_agents()[0]
            env.step({mover: int(rs.choice(env.legal_actions(mover)))})
        if not env.done():
            envs.append(env)
    return envs


def decisions() -> dict:
    c4 = rf.games.Connect4()
    O, A = int(np.prod(c4.observation_space().shape)), c4.action_space().n
    envs = _positions(c4, 10, 1, 16)
    envs.append(envs[3].fork())  # a duplicate root: deduplicated every round
    out = {}
    for label, pol, kind, gamma in [
        ("minimax_d1", P.Minimax(depth=1), "q", 0.9),
        ("minimax_d2", P.Minimax(depth=2), "q", 0.9),
        ("minimax_d3", P.Minimax(depth=3), "q", 1.0),
        ("minimax_d3_top2", P.Minimax(depth=3, top_k=2), "q", 0.95),
        ("alphazero", P.AlphaZero(num_simulations=48, temperature=0.0, noise=None), "pv", 1.0),
        ("alphazero_g09", P.AlphaZero(num_simulations=33, c_puct=0.7, temperature=0.0, noise=None), "pv", 0.9),
        (
            "alphazero_maxn",
            P.AlphaZero(num_simulations=24, temperature=0.0, noise=None, sequential_backup="maxn"),
            "pv",
            0.9,
        ),  # fmt: skip
        ("mcts", P.Mcts(num_simulations=40), "q", 1.0),
        ("mcts_visits", P.Mcts(num_simulations=40, act_by="visits", max_depth=3), "q", 0.8),
        ("selexp", P.SelectiveExpectimax(expansion_budget=12, top_k=3), "q", 0.9),
        ("selexp_dist", P.SelectiveExpectimax(expansion_budget=10, top_k=2, opponent="distributional",
                                              opp_temperature=0.5, opp_floor=0.1, beta=0.5), "q", 1.0),
        ("egq_greedy", P.EpsilonGreedyQ(epsilon=0.0), "q", 1.0),
    ]:
        cb = _Callback(O, A, kind, seed=len(label))
        res = _outcome(lambda pol=pol, cb=cb, gamma=gamma: pol.choose(envs, cb, seed=7, gamma=gamma))
        out[label] = {"result": res, "calls": cb.log}
    # known answers with a zero callback
    win = rf.Env(c4, rf.Reward())
    for m in [0, 0, 1, 1, 2, 2]:
        win.step({win.active_agents()[0]: m})
    block = rf.Env(c4, rf.Reward())
    for m in [0, 6, 1, 6, 2]:
        block.step({block.active_agents()[0]: m})
    zq = lambda o: np.zeros((len(o), 1, A))  # noqa: E731
    zpv = lambda o: (np.zeros((len(o), A)), np.zeros(len(o)))  # noqa: E731
    out["known_minimax"] = _outcome(lambda: P.Minimax(depth=2).choose([win, block], zq, gamma=1.0))
    out["known_alphazero"] = _outcome(
        lambda: P.AlphaZero(num_simulations=200, temperature=0.0, noise=None).choose([win, block], zpv, gamma=1.0)
    )
    out["known_mcts"] = _outcome(lambda: P.Mcts(num_simulations=200).choose([win, block], zq, gamma=1.0))
    return out


def _common_cases(pol, cb, env, fin, w2, snake, kuhn, gw) -> dict:
    """Validation scenarios shared by every policy (each a thunk; ok results of RNG-driven
    policies are dropped with ``and None``)."""
    f = cb(7)
    return {
        "gamma_missing": lambda: pol.choose([env()], f),
        "gamma_range": lambda: pol.choose([env()], f, gamma=1.5),
        "gamma_nan": lambda: pol.choose([env()], f, gamma=float("nan")),
        "gamma_str": lambda: pol.choose([env()], f, gamma="x"),
        "empty": lambda: pol.choose([], f, gamma=1.0),
        "plies_len": lambda: pol.choose([env(), env()], f, plies=[1], gamma=1.0),
        "mixed": lambda: pol.choose([env(), env(reward=w2)], f, gamma=1.0),
        "mixed_noreward": lambda: pol.choose([env(), env(reward=None)], f, gamma=1.0),
        "noreward": lambda: pol.choose([env(reward=None)], f, gamma=1.0),
        "finished": lambda: pol.choose([env(), fin()], f, gamma=1.0),
        "snake": lambda: pol.choose([env(game=snake)], cb(4), gamma=1.0),
        "kuhn": lambda: pol.choose([env(game=kuhn)], cb(2), gamma=1.0) and None,
        "gridworld": lambda: pol.choose([env(game=gw)], cb(4), gamma=1.0) and None,
        "seed_negative": lambda: pol.choose([env()], f, seed=-1, gamma=1.0),
        "seed_big": lambda: pol.choose([env()], f, seed=2**64, gamma=1.0),
        "seed_float": lambda: pol.choose([env()], f, seed=1.0, gamma=1.0),
        "envs_item": lambda: pol.choose([env(), 1], f, gamma=1.0),
        "envs_str": lambda: pol.choose("ab", f, gamma=1.0),
        "envs_iter": lambda: pol.choose(iter([env()]), f, gamma=1.0),
        "envs_none": lambda: pol.choose(None, f, gamma=1.0),
        "infer_int": lambda: pol.choose([env()], 3, gamma=1.0),
        "infer_list": lambda: pol.choose([env()], [f, f], gamma=1.0),
        "plies_int": lambda: pol.choose([env()], f, plies=3, gamma=1.0),
        "plies_str": lambda: pol.choose([env()], f, plies="a", gamma=1.0),
        "plies_negative": lambda: pol.choose([env()], f, plies=[-1], gamma=1.0),
        "plies_float": lambda: pol.choose([env()], f, plies=[1.0], gamma=1.0),
        "plies_big": lambda: pol.choose([env()], f, plies=[2**64], gamma=1.0),
        "plies_u32max": lambda: pol.choose([env()], f, plies=[2**32 - 1], gamma=1.0) and None,
        "order_envs_seed_gamma": lambda: pol.choose([1], f, seed=-1, gamma="x"),
        "order_seed_gamma": lambda: pol.choose([env()], f, seed=-1, gamma="x"),
        "order_plies_gamma": lambda: pol.choose([env()], f, plies=[-1], gamma="x"),
        "order_empty_infer": lambda: pol.choose([], 3, gamma=2.0),
        "order_infer_gamma": lambda: pol.choose([env()], 3, gamma=2.0),
        "order_gamma_plies": lambda: pol.choose([env()], f, plies=[1, 2], gamma=2.0),
        "order_plies_finished": lambda: pol.choose([fin()], f, plies=[1, 2], gamma=1.0),
        "order_mixed_plies": lambda: pol.choose([env(), env(reward=w2)], f, plies=[1], gamma=1.0),
        "order_noreward_plies": lambda: pol.choose([env(reward=None)], f, plies=[1, 2], gamma=1.0),
        "order_plies_snake": lambda: pol.choose([env(game=snake)], cb(4), plies=[1, 2], gamma=1.0),
        "order_plies_kuhn": lambda: pol.choose([env(game=kuhn)], cb(2), plies=[1, 2], gamma=1.0),
        "order_finished_noreward": lambda: pol.choose([fin(None)], f, gamma=1.0),
        "order_noreward_finished": lambda: pol.choose([env(reward=None), fin()], f, gamma=1.0),
        "order_mixed_finished": lambda: pol.choose([env(), env(reward=w2), fin()], f, gamma=1.0),
        "order_finished_mixed": lambda: pol.choose([env(), fin(), env(reward=w2)], f, gamma=1.0),
        "order_antisym_plies": lambda: pol.choose([env(reward=w2)], f, plies=[1, 2], gamma=1.0) and None,
        "order_antisym_finished": lambda: pol.choose([fin(w2)], f, gamma=1.0),
        "antisym_draw": lambda: pol.choose([env(reward=rf.Reward(draw=0.1))], f, gamma=1.0) and None,
        "order_ply_limit": lambda: pol.choose([env(), env()], f, plies=[0, 2**32], gamma=1.0) and None,
        "bad_output": lambda: pol.choose([env()], lambda o: 5, gamma=1.0),
    }


def validation() -> dict:
    c4 = rf.games.Connect4()
    snake, kuhn, gw = rf.games.Snake(), rf.games.KuhnPoker(), rf.games.GridWorld()

    def env(moves=(), reward=rf.Reward(), game=c4):
        e = rf.Env(game, reward)
        for m in moves:
            e.step({e.active_agents()[0]: m})
        return e

    def fin(reward=rf.Reward()):
        return env([0, 1, 0, 1, 0, 1, 0], reward)

    def qz(A):
        return lambda o: np.zeros((len(o), 1, A))

    def pvz(A):
        return lambda o: (np.zeros((len(o), A)), np.zeros(len(o)))

    w2 = rf.Reward(win=2.0)
    out = {}
    for name, pol, cb in [
        ("alphazero", P.AlphaZero(num_simulations=4), pvz),
        ("mcts", P.Mcts(num_simulations=4), qz),
        ("minimax", P.Minimax(depth=1), qz),
        ("egq", P.EpsilonGreedyQ(epsilon=0.0), qz),
        ("ppo", P.Ppo(), pvz),
        ("selexp", P.SelectiveExpectimax(), qz),
    ]:
        cases = _common_cases(pol, cb, env, fin, w2, snake, kuhn, gw)
        out[name] = {label: _outcome(fn) for label, fn in cases.items()}
    ranges = {
        "az_sims1": P.AlphaZero(num_simulations=1),
        "az_maxdepth0": P.AlphaZero(num_simulations=4, max_depth=0),
        "az_sims_cap": P.AlphaZero(num_simulations=2**20 + 1),
        "mcts_sims0": P.Mcts(num_simulations=0),
        "mcts_maxdepth0": P.Mcts(num_simulations=4, max_depth=0),
        "selexp_heads0": P.SelectiveExpectimax(n_heads=0),
        "selexp_budget0": P.SelectiveExpectimax(expansion_budget=0),
        "egq_heads0": P.EpsilonGreedyQ(n_heads=0),
        "egq_heads_cap": P.EpsilonGreedyQ(n_heads=5000),
    }
    for label, pol in ranges.items():
        cb = pvz if label.startswith("az_") else qz
        out["ranges_" + label] = {
            "c4": _outcome(lambda pol=pol, cb=cb: pol.choose([env()], cb(7), gamma=1.0) and None),
            "kuhn": _outcome(lambda pol=pol, cb=cb: pol.choose([env(game=kuhn)], cb(2), gamma=1.0) and None),
            "snake": _outcome(lambda pol=pol, cb=cb: pol.choose([env(game=snake)], cb(4), gamma=1.0) and None),
            "finished": _outcome(lambda pol=pol, cb=cb: pol.choose([fin()], cb(7), gamma=1.0)),
            "plies": _outcome(lambda pol=pol, cb=cb: pol.choose([env()], cb(7), plies=[1, 2], gamma=1.0)),
            "noreward": _outcome(lambda pol=pol, cb=cb: pol.choose([env(reward=None)], cb(7), gamma=1.0)),
        }
    return out


def run_all(parts=("decisions", "validation")) -> dict:
    return {p: globals()[p]() for p in parts}
