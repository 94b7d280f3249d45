"""Shared GumbelAlphaZero test cases (``test_gumbel.py``, ``test_gumbel_slow.py``): the template
tic-tac-toe twice (the engine's module and a plain-Python model), the table callback, the
positions, and one pooled choose over them.
"""

from __future__ import annotations

import zlib

import numpy as np

import reinfors as rf
from reinfors._runtime.choose import choose_rows
from reinfors.jit.games import tictactoe

from .gumbel_reference import Config, GumbelSearch

# -- the game, twice: the engine's template module and a plain-Python model -----------------------

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class TicTacToe:
    """Plain-Python tic-tac-toe: state = (board tuple of 9 cells: 0 / 1 = X / 2 = O, to_move)."""

    n_actions = 9

    @staticmethod
    def winner(board):
        for a, b, c in LINES:
            if board[a] and board[a] == board[b] == board[c]:
                return board[a] - 1
        return -1

    def terminal(self, s):
        board, _ = s
        return self.winner(board) >= 0 or all(board)

    def legal(self, s):
        board, _ = s
        if self.terminal(s):
            return [False] * 9
        return [c == 0 for c in board]

    def mover(self, s):
        return s[1]

    def step(self, s, a):
        board, p = s
        nb = list(board)
        nb[a] = p + 1
        nb = tuple(nb)
        reward = 1.0 if self.winner(nb) == p else 0.0
        return (nb, 1 - p), reward

    @staticmethod
    def obs(s, agent):
        board, _ = s
        out = np.zeros(18, np.float32)
        for i, c in enumerate(board):
            out[i] = 1.0 if c == agent + 1 else 0.0
            out[9 + i] = 1.0 if (c != 0 and c != agent + 1) else 0.0
        return out


def table_row(row: np.ndarray, scale: float = 1.5, zero_value: bool = False):
    """Fixed pseudo-random ``(logits [9], value)`` of one observation row (a function of its bytes)."""
    rng = np.random.default_rng(zlib.crc32(np.ascontiguousarray(row, np.float32).tobytes()))
    logits = rng.standard_normal(9) * scale
    value = 0.0 if zero_value else float(np.tanh(rng.standard_normal()))
    return logits, value


def table_infer(scale: float = 1.5, zero_value: bool = False):
    def infer(obs):
        out = [table_row(r, scale, zero_value) for r in obs]
        return np.array([o[0] for o in out]), np.array([o[1] for o in out])

    return infer


def reference(state, cfg: Config, scale: float = 1.5, zero_value: bool = False) -> dict:
    game = TicTacToe()
    return GumbelSearch(game, lambda s: table_row(game.obs(s, s[1]), scale, zero_value), cfg).run(state)


def play(moves) -> tuple:
    game, s = TicTacToe(), ((0,) * 9, 0)
    for a in moves:
        s, _ = game.step(s, a)
    return s


# Positions: the empty board, openings, and middlegames where a win or a block is a move away.
POSITIONS = ([], [4], [0, 4], [0, 4, 8], [0, 3, 1, 4], [4, 0, 8, 2], [0, 1, 3, 4, 2], [4, 0, 2, 6, 3])

GAME = rf.games.from_module(tictactoe)


def _envs():
    envs = []
    for moves in POSITIONS:
        env = rf.Env(GAME, rf.Reward(), seed=0)
        for a in moves:
            env.step({env.active_agents()[0]: a})
        envs.append(env)
    return envs


def _search(policy, infer, gamma=1.0, seed=0):
    """``(actions [G], root visits [G, 9])`` of one pooled choose over :data:`POSITIONS`."""
    envs = _envs()
    d = envs[0]._def
    states = np.stack([e._state for e in envs])
    acts, rt = choose_rows(policy, d, envs[0]._weights, states, infer, seed, [e.ticks for e in envs], gamma)
    return acts, np.array(rt["t_visits"][: len(envs), 0, :9])


def _state_of(obs_row, player):
    mine, theirs = obs_row[:9], obs_row[9:18]
    board = tuple(player + 1 if mine[i] else (2 - player if theirs[i] else 0) for i in range(9))
    return (board, int(player))
