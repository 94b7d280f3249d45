"""Chess against independent oracles: python-chess (legal sets, FEN, terminal rules, perft) and
OpenSpiel's ``chess`` (observation tensor and legal moves of ``OpenSpielChess``).

Seeded random games are played in this build; at every ply the legal set (as UCI) must equal
python-chess's, the FEN python-chess's (en passant printed after any double push, as 0.4.0), and
at the end the terminal rule python-chess names (checkmate, stalemate, insufficient material,
halfmove clock 100, threefold repetition) must be the one that ended the game.
"""

from __future__ import annotations

import numpy as np
import pytest

import reinfors as rf
from reinfors.chess import _uci_of
from reinfors.jit.games import chess_movegen as mg
from reinfors.jit.games.chess_layout import BOARD, CASTLE, EP

chess = pytest.importorskip("chess")

PERFT = [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", [20, 400, 8902, 197281]),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", [48, 2039, 97862, 4085603]),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", [14, 191, 2812, 43238]),
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", [6, 264, 9467, 422333]),
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", [44, 1486, 62379, 2103487]),
    ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", [46, 2079, 89890, 3894594]),
]


def _board(fen):
    b = chess.Board(fen)
    arr = np.zeros(64, np.int64)
    for sq, p in b.piece_map().items():
        arr[sq] = p.piece_type + (0 if p.color else 6)
    castle = sum(
        bit
        for bit, ok in (
            (1, b.has_kingside_castling_rights(chess.WHITE)),
            (2, b.has_queenside_castling_rights(chess.WHITE)),
            (4, b.has_kingside_castling_rights(chess.BLACK)),
            (8, b.has_queenside_castling_rights(chess.BLACK)),
        )
        if ok
    )
    return arr, 0 if b.turn else 1, castle, -1 if b.ep_square is None else b.ep_square


def _perft(fen, depth):
    arr, turn, castle, ep = _board(fen)
    return mg.perft(arr, turn, castle, ep, depth, np.zeros((depth + 1, 256), np.int64), np.zeros((depth + 1, 64), np.int64))


@pytest.mark.parametrize("fen, counts", PERFT, ids=["start", "kiwipete", "pos3", "pos4", "pos5", "pos6"])
def test_perft_to_depth_3(fen, counts):
    assert [_perft(fen, d) for d in (1, 2, 3)] == counts[:3]


@pytest.mark.slow
@pytest.mark.parametrize("fen, counts", PERFT, ids=["start", "kiwipete", "pos3", "pos4", "pos5", "pos6"])
def test_perft_depth_4(fen, counts):
    assert _perft(fen, 4) == counts[3]


def _expected_end(b: chess.Board):
    """The rule 0.4.0 applies after the move that produced ``b`` (None: the game goes on)."""
    if b.is_checkmate():
        return "checkmate"
    if b.is_stalemate():
        return "stalemate"
    if b.halfmove_clock >= 100:
        return "fifty"
    if b.is_insufficient_material():
        return "material"
    if b.is_repetition(3):
        return "threefold"
    return None


def _random_games(n_games, seed):
    """Play seeded random games on this build; check every ply against python-chess."""
    ends = {}
    positions = 0
    ids = np.zeros(256, np.int64)
    game = rf.games.Chess(max_ticks=None)
    for g in range(n_games):
        env = rf.Env(game, rf.Reward())
        rs = np.random.default_rng(seed + g)
        b = chess.Board()
        while True:
            st = env.state()
            assert st["fen"] == b.fen(en_passant="fen")
            end = _expected_end(b) if b.move_stack else None
            assert env.done() == (end is not None), (st["fen"], end)
            if env.done():
                ends[end] = ends.get(end, 0) + 1
                break
            p = env.active_agents()[0]
            legal = env.legal_actions(p)
            board = env._state[BOARD : BOARD + 64].copy()
            ucis = {_uci_of(board, p, a) for a in legal}
            assert ucis == {m.uci() for m in b.legal_moves}, st["fen"]
            n = mg.generate(board, p, int(env._state[CASTLE]), int(env._state[EP]), ids, None, False)
            assert sorted(ids[:n].tolist()) == sorted(legal)
            positions += 1
            a = int(rs.choice(legal))
            b.push_uci(_uci_of(board, p, a))
            env.step({p: a})
    return ends, positions


def test_random_games_match_python_chess():
    ends, positions = _random_games(6, seed=100)
    assert positions > 600 and sum(ends.values()) == 6


@pytest.mark.slow
def test_many_random_games_match_python_chess():
    """Thousands of positions; every terminal rule occurs."""
    ends, positions = _random_games(60, seed=1000)
    assert positions > 10000
    assert {"checkmate", "fifty", "material"} <= set(ends), ends


def _san_to_spiel(state, san):
    for a in state.legal_actions():
        if state.action_to_string(state.current_player(), a) == san:
            return a
    raise AssertionError(f"OpenSpiel has no action {san}")


@pytest.mark.parametrize("seed", [3, 4])
def test_openspiel_observation_and_legal_moves(seed):
    pyspiel = pytest.importorskip("pyspiel")
    sp_game = pyspiel.load_game("chess")
    sp = sp_game.new_initial_state()
    env = rf.Env(rf.games.Chess(encoder=rf.encoders.OpenSpielChess(), max_ticks=None), rf.Reward())
    b = chess.Board()
    rs = np.random.default_rng(seed)
    plies = 0
    while not env.done() and not sp.is_terminal() and plies < 160:
        p = env.active_agents()[0]
        for agent in (0, 1):
            theirs = np.asarray(sp.observation_tensor(agent), np.float32).reshape(20, 8, 8)
            assert np.array_equal(env.observe(agent), theirs), (plies, b.fen())
        sp_moves = {sp.action_to_string(sp.current_player(), a) for a in sp.legal_actions()}
        assert sp_moves == {b.san(m) for m in b.legal_moves}
        legal = env.legal_actions(p)
        board = env._state[BOARD : BOARD + 64].copy()
        a = int(rs.choice(legal))
        move = chess.Move.from_uci(_uci_of(board, p, a))
        sp.apply_action(_san_to_spiel(sp, b.san(move)))
        b.push(move)
        env.step({p: a})
        plies += 1
    assert plies > 40
