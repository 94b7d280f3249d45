"""Chess rules scripted move by move (UCI), the handle surface, encoders, head map, UCI helpers."""

from __future__ import annotations

import numpy as np
import pytest

import reinfors as rf
from reinfors.jit.games import chess as _chess
from reinfors.jit.games import chess_encoders as _enc
from reinfors.jit.games.chess_layout import BOARD, CASTLE, EP, FULL, HALF, PLY, REP, RESULT, TURN

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def _play(ucis, game=None, reward=None):
    env = rf.Env(game or rf.games.Chess(), reward if reward is not None else rf.Reward())
    events = []
    for u in ucis:
        assert not env.done(), u
        p = env.active_agents()[0]
        events = env.step({p: rf.chess_uci_action(u, env.state()["fen"])})
    return env, events


def test_handle_surface():
    g = rf.games.Chess()
    assert g.name == "chess" and g.encoder.name == "minimal_chess"
    assert g.action_space().n == 4672 and g.truncation_horizon() == 512
    space = g.observation_space()
    assert space.shape == (19, 8, 8) and np.isneginf(space.low).all() and np.isposinf(space.high).all()
    assert rf.games.Chess(max_ticks=None).truncation_horizon() is None
    assert rf.games.make("chess", max_ticks=9).truncation_horizon() == 9
    with pytest.raises(ValueError, match=r"max_ticks must be >= 1 \(or None to never truncate\)"):
        rf.games.Chess(max_ticks=0)
    with pytest.raises(OverflowError):
        rf.games.Chess(max_ticks=-1)
    with pytest.raises(TypeError, match="max_ticks"):
        rf.games.Chess(max_ticks=1.5)
    with pytest.raises(ValueError, match='incompatible encoder "connect4" for game "chess"'):
        rf.games.Chess(encoder=rf.encoders.Connect4())
    with pytest.raises(ValueError, match='incompatible encoder "alphazero_chess" for game "connect4"'):
        rf.games.Connect4(encoder=rf.encoders.AlphaZeroChess())
    env = rf.Env(g, rf.Reward())
    assert env.state() == {"fen": START, "turn": 0, "done": False}
    assert env.resolved_config()["game"] == {"encoder": {"name": "minimal_chess"}, "max_ticks": 512, "name": "chess"}
    assert len(env.legal_actions(0)) == 20 and env.legal_actions(1) == []


def test_fools_mate_is_a_black_win():
    env, events = _play(["f2f3", "e7e5", "g2g4", "d8h4"], reward=rf.Reward(win=2.0, loss=-3.0))
    assert events == [(0, "loss"), (1, "win")] and env.rewards == [-3.0, 2.0]
    assert env.done() and env.active_agents() == [] and env.legal_actions(1) == []
    assert env.state()["fen"] == "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"


def test_quiet_ticks_have_no_events():
    env, events = _play(["e2e4"])
    assert events == [] and env.rewards == [0.0, 0.0]
    assert env.state()["fen"] == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"


def test_stalemate_is_a_draw():
    # Sam Loyd's ten-move stalemate.
    moves = "e2e3 a7a5 d1h5 a8a6 h5a5 h7h5 h2h4 a6h6 a5c7 f7f6 c7d7 e8f7 d7b7 d8d3 b7b8 d3h7 b8c8 f7g6 c8e6"
    env, events = _play(moves.split(), reward=rf.Reward(draw=0.25))
    assert events == [(0, "draw"), (1, "draw")] and env.rewards == [0.25, 0.25] and env.done()


def test_threefold_repetition_counts_legal_en_passant_only():
    shuffle = "g8f6 g1f3 f6g8 f3g1".split()
    # The position after 1. e4 (an e3 square no black pawn can take) recurs after 3. Ng1: it
    # is the same position, so its third occurrence ends the game at ply 9 (as 0.4.0), before
    # the position after 1... Nf6 could reach its third at ply 10.
    env, events = _play(["e2e4"] + shuffle * 2)
    assert env.done() and env.ticks == 9 and events == [(0, "draw"), (1, "draw")]
    env, events = _play("g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8".split())
    assert env.done() and env.ticks == 8


def test_castling_promotion_and_en_passant_moves():
    env, _ = _play("e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1".split())
    assert env.state()["fen"] == "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b kq - 5 4"
    env, _ = _play("e2e4 a7a6 e4e5 d7d5 e5d6".split())
    assert env.state()["fen"] == "rnbqkbnr/1pp1pppp/p2P4/8/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 3"
    env, _ = _play("h2h4 g7g5 h4g5 h7h6 g5h6 f8g7 h6g7 a7a6 g7h8n".split())
    assert env.state()["fen"] == "rnbqk1nN/1ppppp2/p7/8/8/8/PPPPPPP1/RNBQKBNR b KQq - 0 5"


def test_snapshot_restore_and_forged_state():
    env, _ = _play("e2e4 e7e5 g1f3".split())
    snap = env.snapshot()
    fen = env.state()["fen"]
    env.step({1: rf.chess_uci_action("b8c6", fen)})
    env.restore(snap)
    assert env.state()["fen"] == fen and env.ticks == 3
    params = rf.games.Chess()._def.params
    state = env._state.copy()
    assert _chess.validate_state(params, state) is None
    forged = state.copy()
    forged[_chess.BOARD + 4] = 0  # remove the white king
    assert _chess.validate_state(params, forged) == "each side needs exactly one king"
    forged = state.copy()
    forged[_chess.BOARD + 20] = 3  # a bishop appears: the ring no longer agrees
    assert _chess.validate_state(params, forged) == "position history disagrees with the board"


def test_relative_head_map():
    enc = rf.encoders.RelativeChess()
    assert enc.head_index(100, 1) == 4174 and enc.game_action(4174, 1) == 100
    assert enc.head_index(100, 0) == 100 and enc.head_index(4000, 2) == 4000
    assert enc.head_index(0, 1) == 4116 and enc.head_index(4671, 1) == 583
    assert rf.encoders.MinimalChess().head_index(100, 1) == 100
    acts = np.arange(4672, dtype=np.int64)
    heads = np.zeros(4672, np.int64)
    _enc.relative_heads(acts, np.ones(4672, np.int64), heads)
    assert sorted(heads.tolist()) == acts.tolist()  # a permutation
    back = np.zeros(4672, np.int64)
    _enc.relative_heads(heads, np.ones(4672, np.int64), back)
    assert (back == acts).all()  # an involution
    with pytest.raises(ValueError, match="action 4672 out of range for the 4672-action relative_chess encoding"):
        enc.head_index(4672, 1)
    with pytest.raises(OverflowError):
        enc.head_index(-1, 0)


def test_relative_frame_mirrors_the_board_for_agent_1():
    env, _ = _play(["e2e4"], rf.games.Chess(encoder=rf.encoders.RelativeChess()))
    mini, _ = _play(["e2e4"])
    o0, o1 = env.observe(0), env.observe(1)
    m = mini.observe(0)
    assert np.array_equal(o0[:12], m[:12])
    assert np.array_equal(o1[0:6], m[6:12][:, ::-1]) and np.array_equal(o1[6:12], m[0:6][:, ::-1])
    assert o1[12].all() and not o0[12].any()  # "the observer is to move"


@pytest.mark.parametrize(
    "enc, shape",
    [
        (rf.encoders.MinimalChess(), (19, 8, 8)),
        (rf.encoders.OpenSpielChess(), (20, 8, 8)),
        (rf.encoders.AlphaZeroChess(), (119, 8, 8)),
        (rf.encoders.AlphaZeroChess(history_length=2), (35, 8, 8)),
    ],
)
def test_encoder_shapes(enc, shape):
    g = rf.games.Chess(encoder=enc)
    assert g.observation_space().shape == shape
    env = rf.Env(g)
    assert env.observe(0).shape == shape and env.observe(0).dtype == np.float32


def test_alphazero_history_planes_follow_the_game():
    env, _ = _play(["e2e4", "e7e5"], rf.games.Chess(encoder=rf.encoders.AlphaZeroChess(history_length=3)))
    o = env.observe(0)
    assert o[0, 3, 4] == 1 and o[14 + 0, 3, 4] == 1 and o[28 + 0, 1, 4] == 1  # e4 now, e4, e2
    assert o[6, 4, 4] == 1 and o[14 + 6, 6, 4] == 1  # e5 now, e7 a ply ago
    assert o[42].all() and np.allclose(o[43], 0.02)  # white to move, fullmove 2 / 100
    with pytest.raises(ValueError, match="history_length must be >= 1"):
        rf.encoders.AlphaZeroChess(history_length=0)
    with pytest.raises(ValueError, match="exceed 2\\^31 elements"):
        rf.encoders.AlphaZeroChess(history_length=2**31)
    assert rf.Env(rf.games.Chess(encoder=rf.encoders.AlphaZeroChess(history_length=2))).resolved_config()["game"][
        "encoder"
    ] == {"history_length": 2, "name": "alphazero_chess"}


def test_uci_helpers():
    assert rf.chess_uci_action("e2e4", START) == 877
    assert rf.chess_action_uci(12 * 73 + 1, START) == "e2e4"
    kiwi = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
    assert rf.chess_uci_action("e1g1", kiwi) == 308 and rf.chess_action_uci(308, kiwi) == "e1g1"
    assert rf.chess_uci_action("e1c1", kiwi) == 337
    with pytest.raises(ValueError, match='"e1h1" is not a legal move in'):
        rf.chess_uci_action("e1h1", kiwi)
    with pytest.raises(ValueError, match='invalid FEN: "garbage"'):
        rf.chess_uci_action("e2e4", "garbage")
    with pytest.raises(ValueError, match='action 0 decodes to a1a2 which is not legal in "'):
        rf.chess_action_uci(0, START)
    with pytest.raises(ValueError, match="action 4672 does not decode in"):
        rf.chess_action_uci(4672, START)
    with pytest.raises(TypeError, match="argument 'fen'"):
        rf.chess_action_uci(0, 5)
    with pytest.raises(TypeError, match="argument 'uci'"):
        rf.chess_uci_action(5, START)
    with pytest.raises(OverflowError):
        rf.chess_action_uci(-1, START)
    assert rf._reinfors.chess_uci_action is rf.chess_uci_action


def test_check_game_conformance():
    stats = rf.testing.check_game(rf.games.Chess(max_ticks=60), episodes=3, max_steps=80, batch=4)
    assert stats["ticks"] > 0 and stats["snapshots"] > 0


def test_alphazero_engine_collects_on_chess():
    """AlphaZero(32 simulations) + learners.AlphaZero(gamma=1) self-play: records carry the
    19x8x8 observation, a visit distribution on the legal set (CSR) and +-1/0 outcomes."""
    eng = rf.Engine(
        rf.games.Chess(max_ticks=24),
        rf.Reward(),
        rf.policies.AlphaZero(num_simulations=32),
        rf.learners.AlphaZero(gamma=1.0),
        n_games=2,
        n_threads=1,
    )

    def infer(obs):
        assert obs.shape[1] == 19 * 64
        return np.zeros((len(obs), 4672), np.float32), np.zeros(len(obs), np.float32)

    b = eng.collect(48, infer)
    m = len(b.obs)
    assert m >= 48 and b.obs.shape == (m, 19 * 64) and b.policy_targets.shape == (m, 4672)
    assert len(b.legal_offsets) == m + 1 and b.legal_offsets[-1] == len(b.legal_ids)
    for i in range(m):
        ids = b.legal_ids[b.legal_offsets[i] : b.legal_offsets[i + 1]]
        support = np.flatnonzero(b.policy_targets[i])
        assert set(support.tolist()) <= set(ids.tolist())
        assert abs(b.policy_targets[i].sum() - 1.0) < 1e-9 and b.policy_weights[i] == 1.0
    assert set(np.unique(b.value_targets).tolist()) <= {-1.0, 0.0, 1.0}
    first = b.legal_ids[b.legal_offsets[0] : b.legal_offsets[1]]
    assert len(first) == 20  # the opening position


def _first_decisions(policy, learner, encoder):
    """One collect over 2 games of 6 plies with a fixed random linear network."""
    game = rf.games.Chess(max_ticks=6, encoder=encoder)
    eng = rf.Engine(game, rf.Reward(), policy, learner, n_games=2, n_threads=1, seed=1)
    w = np.random.default_rng(0).standard_normal((19 * 64, 4673)).astype(np.float32)

    def infer(obs):
        out = obs @ w
        return out[:, :4672], out[:, 4672]

    return eng.collect(12, infer)


@pytest.mark.slow  # compiles a RelativeChess tree and model-free module (~5 min cold)
@pytest.mark.parametrize("kind", ["alphazero", "ppo"])
def test_relative_chess_batches_are_in_the_head_frame(kind):
    """Action-indexed batch fields use the encoder's head frame, the legal sets 0.4.0's legal
    order: an agent-1 record lists ``head_index`` of black's moves in generation order (the
    opening reply: ``585, 584, 658, 657, ...`` = black's pawn pushes mapped onto white's ids)."""
    enc = rf.encoders.RelativeChess()
    if kind == "alphazero":
        pol, lrn = rf.policies.AlphaZero(num_simulations=8), rf.learners.AlphaZero(gamma=1.0)
    else:
        pol, lrn = rf.policies.Ppo(), rf.learners.Ppo()
    b = _first_decisions(pol, lrn, enc)
    env = rf.Env(rf.games.Chess(), rf.Reward(), seed=0)
    white = env.legal_actions(0)
    start = env.observe(0).reshape(-1)
    seen = {0: 0, 1: 0}
    for i in range(len(b.players)):
        p = int(b.players[i])
        ids = b.legal_ids[b.legal_offsets[i] : b.legal_offsets[i + 1]].tolist()
        if p == 0 and np.array_equal(b.obs[i], start):
            assert ids == white  # generation order, not ascending ids
            seen[0] += 1
        if p == 1 and sorted(ids) == sorted(white):  # black's first reply, seen from its side
            assert ids[:4] == [585, 584, 658, 657]
            seen[1] += 1
        assert len(set(ids)) == len(ids)
        if kind == "alphazero":
            assert set(np.flatnonzero(b.policy_targets[i]).tolist()) <= set(ids)
        else:
            assert int(b.actions[i]) in ids
    assert seen[0] >= 1 and seen[1] >= 1


def test_illegal_action_message_lists_moves_in_the_games_order():
    """0.4.0 lists the legal moves of an illegal-action error in its generation order (pawns
    first, as ``legal_actions``), not by id (found by the slow hostile-input sweep)."""
    env = rf.Env(rf.games.Chess(), rf.Reward(), seed=0)
    legal = env.legal_actions(0)
    assert legal != sorted(legal)
    with pytest.raises(ValueError, match=r"legal: \[(\d+, )+\d+\]") as e:
        env.step({0: 0})
    assert str(e.value) == f"action 0 is illegal for agent 0 (legal: {legal})"


def test_tree_copy_keeps_every_word_the_rules_and_history_read():
    """A search child's row is copied with ``tree_copy`` (the ring only back to the repetition
    window and the AlphaZero history): chains of such copies, each stepped, give the same
    results, repetition counts, legal moves and AlphaZeroChess planes as full copies — over
    random games and a knight shuffle that repeats the position three times."""
    h = 4
    params = _chess.make_params(max_ticks=None, history_length=h)
    size = _chess.state_size(params)
    rs = np.random.default_rng(12)
    shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"] * 3
    for game in range(6):
        full = np.zeros(size, np.int64)
        _chess.init(params, full)
        part = full.copy()
        ids = np.zeros(256, np.int64)
        amounts = np.zeros((2, 3))
        for ply in range(80):
            n = _chess.legal_ids(params, full, ids)
            legal = ids[:n].copy()
            assert _chess.legal_ids(params, part, ids) == n and (ids[:n] == legal).all()
            if n == 0 or full[RESULT] >= 0:
                break
            if game == 0 and ply < len(shuffle):
                board = full[BOARD : BOARD + 64]
                fen = _chess.fen_of(board, full[TURN], full[CASTLE], full[EP], full[HALF], full[FULL])
                a = rf.chess_uci_action(shuffle[ply], fen)
            else:
                a = int(legal[rs.integers(n)])
            child = rs.integers(-(2**40), 2**40, size)  # a reused row: stale words everywhere
            _chess.tree_copy(params, part, child)
            part = child
            actions = np.array([a, a], np.int64)
            _chess.step(params, full, actions, amounts)
            _chess.step(params, part, actions, amounts)
            for k in (RESULT, REP, HALF, PLY, TURN):
                assert part[k] == full[k], (game, ply, k)
            o_full = np.zeros((14 * h + 7) * 64, np.float32)
            o_part = np.zeros_like(o_full)
            _enc.encode_alphazero(params, full, 0, o_full)
            _enc.encode_alphazero(params, part, 0, o_part)
            assert (o_full == o_part).all(), (game, ply)
        if game == 0:
            assert full[RESULT] == 2 and full[REP] == 3  # the shuffle's threefold repetition
