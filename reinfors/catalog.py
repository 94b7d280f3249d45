"""``rf.catalog`` — machine-readable catalogue facts (games, encoders, algorithms, registries).

Plain data with no imports from the rest of the package, so documentation can be generated
without importing (or compiling) any kernel.  The records and texts are those of reinfors 0.4.0's
``reinfors.catalog``, restricted to what this build registers:

* ``GAMES`` lists the games this build implements (``rf.games.registered()``: backgammon,
  car_racing, chess, connect4, gridworld, kuhn_poker, leduc_poker, snake, texas_holdem), now all
  of the original's.
* ``ENCODER_INFO`` / ``ENCODERS`` likewise list this build's encoders (the four chess encoders,
  the two CarRacing encoders and one per other game).
* ``ALGORITHMS`` is the original's full table, because ``GameInfo.algorithms`` refers to its keys;
  the solver workflows (``cfr``, ``external_mccfr``, ``deep_cfr``) name ``rf.solvers``.
* ``POLICIES``, ``LEARNERS``, ``CHANCE_MODES`` and ``NOISE`` equal the ``registered()`` names of
  the matching registries.

``tests/test_catalog.py`` checks these facts against the runtime (constructible games, player and
action counts, reward keys, registries); ``tests/differential/test_compat_vs_original.py`` checks
the shared entries against the original.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ALGORITHMS",
    "CHANCE_MODES",
    "ENCODERS",
    "ENCODER_INFO",
    "GAMES",
    "LEARNERS",
    "NOISE",
    "POLICIES",
    "AlgorithmInfo",
    "EncoderInfo",
    "GameInfo",
]


@dataclass(frozen=True)
class GameInfo:
    """Catalogue facts about one game (``GAMES[name]``).

    ``players`` is a count or an inclusive range (``"2-8"``); ``reward_keys`` are the game's
    reward keys with their defaults, in declaration order; ``reached_state_starts`` says whether
    the Engine's ``start_buffer`` works on the game; ``algorithms`` are keys of ``ALGORITHMS``.

    Attributes:
        label (str): the display name (``"Connect 4"``).
        players (str): a count or an inclusive range (``"2-8"``).
        dynamics (str): ``"Sequential"`` or ``"Simultaneous"``.
        chance (str): what is random (``"No"``, ``"Dice"``, ``"Card deal"``, ...).
        information (str): ``"Perfect"`` or ``"Imperfect"``.
        actions (str): the action set in words (``"7 columns"``).
        observation (str): the observation's form.
        reward_keys (tuple[tuple[str, float], ...]): ``(key, default weight)`` pairs in
            declaration order.
        adapters (str): the standard APIs it is exposed through (Gymnasium, PettingZoo).
        reached_state_starts (bool): ``Engine(start_buffer=True)`` works on it.
        algorithms (tuple[str, ...]): keys of ``ALGORITHMS`` that run on it.
        summary (str): one sentence on what it is for.
    """

    label: str
    players: str
    dynamics: str
    chance: str
    information: str
    actions: str
    observation: str
    reward_keys: tuple[tuple[str, float], ...]
    adapters: str
    reached_state_starts: bool
    algorithms: tuple[str, ...]
    summary: str


@dataclass(frozen=True)
class AlgorithmInfo:
    """Catalogue facts about one training workflow (``ALGORITHMS[name]``): the policy (or solver)
    and learner it composes, the batch it produces and the network output it needs.

    Attributes:
        label (str): the display name (``"AlphaZero"``).
        workflow (str): how training proceeds, in words.
        policy_or_solver (str): the policy or solver constructor.
        learner (str | None): the learner constructor (None for solvers).
        training_output (str): the batch it produces.
        example_label (str): the original's example's title.
        example_anchor (str): the original's example's anchor in its docs.
        players (str): the player counts it supports.
        dynamics (str): sequential and/or simultaneous.
        chance (str): how it handles chance.
        information (str): perfect and/or imperfect information.
        network (str): the callback's output.
        summary (str): what it does.
        references (tuple[tuple[str, str], ...]): ``(title, url)`` of the papers.
    """

    label: str
    workflow: str
    policy_or_solver: str
    learner: str | None
    training_output: str
    example_label: str
    example_anchor: str
    players: str
    dynamics: str
    chance: str
    information: str
    network: str
    summary: str
    references: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class EncoderInfo:
    """Catalogue facts about one observation encoder (``ENCODER_INFO[name]``).

    Attributes:
        label (str): the display name.
        game (str): the ``GameInfo.label`` of the game it encodes.
        shape (str): the observation shape (with its parameters).
        constructor (str): how to build it (``"rf.encoders.Connect4()"``).
        summary (str): what the planes hold.
    """

    label: str
    game: str
    shape: str
    constructor: str
    summary: str


# "gumbel_alphazero" is an extension of 0.4.0 (sequential games only: not Snake's list)
_ENGINE_ALGORITHMS = ("dqn", "treestrap_expectimax", "treestrap_mcts", "alphazero", "gumbel_alphazero", "minimax", "ppo")
_ONE_PLAYER_ALGORITHMS = ("dqn", "treestrap_expectimax", "treestrap_mcts", "alphazero", "gumbel_alphazero", "ppo")
_SIMULTANEOUS_ALGORITHMS = ("dqn", "treestrap_expectimax", "treestrap_mcts", "alphazero", "ppo")

GAMES: dict[str, GameInfo] = {
    "connect4": GameInfo(
        label="Connect 4",
        players="2",
        dynamics="Sequential",
        chance="No",
        information="Perfect",
        actions="7 columns",
        observation="Fixed CHW tensor",
        reward_keys=(("win", 1.0), ("loss", -1.0), ("draw", 0.0)),
        adapters="PettingZoo AEC",
        reached_state_starts=False,
        algorithms=_ENGINE_ALGORITHMS,
        summary="Compact deterministic benchmark for value learning, MCTS and AlphaZero.",
    ),
    "gridworld": GameInfo(
        label="GridWorld",
        players="1",
        dynamics="Sequential",
        chance="No",
        information="Perfect",
        actions="4 directions",
        observation="Fixed CHW tensor",
        reward_keys=(("step", 0.0), ("goal", 1.0)),
        adapters="Gymnasium",
        reached_state_starts=False,
        algorithms=_ONE_PLAYER_ALGORITHMS,
        summary="Small single-agent environment for checking basic training and integration loops.",
    ),
    "kuhn_poker": GameInfo(
        label="Kuhn poker",
        players="2-10",
        dynamics="Sequential",
        chance="Card deal",
        information="Imperfect",
        actions="Pass / bet",
        observation="Fixed information-state tensor",
        reward_keys=(("scale", 1.0),),
        adapters="PettingZoo AEC",
        reached_state_starts=False,
        algorithms=("dqn", "cfr", "external_mccfr", "deep_cfr", "ppo"),
        summary="OpenSpiel-compatible N-player Kuhn poker for CFR and Deep CFR experiments.",
    ),
    "leduc_poker": GameInfo(
        label="Leduc poker",
        players="2",
        dynamics="Sequential",
        chance="Card deal",
        information="Imperfect",
        actions="Fold / call / raise",
        observation="Fixed information-state tensor",
        reward_keys=(("scale", 1.0),),
        adapters="PettingZoo AEC",
        reached_state_starts=False,
        algorithms=("dqn", "cfr", "external_mccfr", "deep_cfr", "ppo"),
        summary="Two-round imperfect-information benchmark between Kuhn and full Hold'em.",
    ),
    "snake": GameInfo(
        label="Snake",
        players="2-8",
        dynamics="Simultaneous",
        chance="Placement and respawn",
        information="Perfect",
        actions="3 relative moves",
        observation="Egocentric fixed CHW tensor",
        reward_keys=(
            ("step", 0.0),
            ("food", 0.0),
            ("loss", -1.0),
            ("draw", 0.0),
            ("kill", 0.0),
            ("win", 1.0),
            ("survival", 0.0),
        ),
        adapters="PettingZoo Parallel",
        reached_state_starts=True,
        algorithms=_SIMULTANEOUS_ALGORITHMS,  # no Minimax, no GumbelAlphaZero (sequential only)
        summary="Simultaneous multiplayer game with dynamic bodies and explicit respawn chance.",
    ),
    "texas_holdem": GameInfo(
        label="Texas Hold'em",
        players="2-9",
        dynamics="Sequential",
        chance="Deal and board",
        information="Imperfect",
        actions="Fold / call / raise",
        observation="Egocentric fixed CHW tensor",
        reward_keys=(("scale", 1.0),),
        adapters="PettingZoo AEC",
        reached_state_starts=False,
        algorithms=("dqn", "external_mccfr", "deep_cfr", "ppo"),
        summary="Multiway no-limit-style poker surface with all-ins, side pots and chance runouts.",
    ),
    "backgammon": GameInfo(
        label="Backgammon",
        players="2",
        dynamics="Sequential",
        chance="Dice",
        information="Perfect",
        actions="1,352 discrete ids",
        observation="Fixed CHW tensor",
        reward_keys=(("win", 1.0), ("gammon", 2.0), ("backgammon", 3.0)),
        adapters="PettingZoo AEC",
        reached_state_starts=False,
        algorithms=_ENGINE_ALGORITHMS,
        summary="Standard play without the doubling cube; win, gammon and backgammon outcomes.",
    ),
}

GAMES["chess"] = GameInfo(
    label="Chess",
    players="2",
    dynamics="Sequential",
    chance="No",
    information="Perfect",
    actions="AlphaZero 8x8x73",
    observation="Selectable fixed CHW encoder",
    reward_keys=(("win", 1.0), ("loss", -1.0), ("draw", 0.0)),
    adapters="PettingZoo AEC",
    reached_state_starts=False,
    algorithms=_ENGINE_ALGORITHMS,
    summary="Standard chess with minimal, relative, OpenSpiel and AlphaZero observation views.",
)


GAMES["car_racing"] = GameInfo(
    label="CarRacing",
    players="1",
    dynamics="Sequential",
    chance="Track-generation seed (root only)",
    information="Perfect",
    actions="5 discrete controls",
    observation="Rendered CHW pixels (3, 96, 96)",
    reward_keys=(("tile", 1000.0), ("step", -0.1), ("off_playfield", -100.0)),
    adapters="None (withheld until the HWC adapter presentation lands)",
    reached_state_starts=False,
    algorithms=("dqn", "treestrap_expectimax", "treestrap_mcts", "alphazero", "gumbel_alphazero", "ppo"),
    summary="Faithful reimplementation of Gymnasium's CarRacing-v3 (discrete); physics trajectories and "
    "checkpoints do not transfer to or from Gymnasium.",
)

ENCODER_INFO: dict[str, EncoderInfo] = {
    "snake": EncoderInfo(
        label="Snake",
        game="Snake",
        shape="(5, grid_size, grid_size); (5, 20, 20) by default",
        constructor="rf.encoders.Snake()",
        summary="Mover-relative own-head, own-body, opponent-head, opponent-body, and food planes.",
    ),
    "connect4": EncoderInfo(
        label="Connect4",
        game="Connect 4",
        shape="(2, 6, 7)",
        constructor="rf.encoders.Connect4()",
        # The planes are really observer and opponent (docs/original-0.4.0/connect4.md); the text
        # is the original's.
        summary="Acting-player and opponent piece planes.",
    ),
    "kuhn_poker": EncoderInfo(
        label="KuhnPoker",
        game="Kuhn poker",
        shape="(3 * players, 1, 1); (6, 1, 1) by default",
        constructor="rf.encoders.KuhnPoker()",
        summary="Private card and public betting-history information state.",
    ),
    "leduc_poker": EncoderInfo(
        label="LeducPoker",
        game="Leduc poker",
        shape="(21, 1, 1)",
        constructor="rf.encoders.LeducPoker()",
        summary="Private/public cards and two-round betting information state.",
    ),
    "gridworld": EncoderInfo(
        label="GridWorld",
        game="GridWorld",
        shape="(2, size, size); (2, 5, 5) by default",
        constructor="rf.encoders.GridWorld()",
        summary="Agent-position and goal planes.",
    ),
    "texas_holdem": EncoderInfo(
        label="TexasHoldem",
        game="Texas Hold'em",
        shape="(2 * num_players + 19, 4, 13); (31, 4, 13) by default",
        constructor="rf.encoders.TexasHoldem()",
        summary="Player-relative cards, betting state, stacks, and positions.",
    ),
    "backgammon": EncoderInfo(
        label="Backgammon",
        game="Backgammon",
        shape="(200, 1, 1)",
        constructor="rf.encoders.Backgammon()",
        summary="Tesauro-style point, bar, borne-off, turn, and dice features.",
    ),
}
ENCODER_INFO.update(
    minimal_chess=EncoderInfo(
        label="MinimalChess",
        game="Chess",
        shape="(19, 8, 8)",
        constructor="rf.encoders.MinimalChess()",
        summary="Absolute piece, turn, castling, en-passant and clock planes; the Chess default.",
    ),
    relative_chess=EncoderInfo(
        label="RelativeChess",
        game="Chess",
        shape="(19, 8, 8)",
        constructor="rf.encoders.RelativeChess()",
        summary="Mover-relative board and matching action-head mapping.",
    ),
    openspiel_chess=EncoderInfo(
        label="OpenSpielChess",
        game="Chess",
        shape="(20, 8, 8)",
        constructor="rf.encoders.OpenSpielChess()",
        summary="OpenSpiel-compatible observation for parity and benchmarking.",
    ),
    alphazero_chess=EncoderInfo(
        label="AlphaZeroChess",
        game="Chess",
        shape="(119, 8, 8) by default",
        constructor="rf.encoders.AlphaZeroChess(history_length=8)",
        summary="Uses `14 * history_length + 7` channels for history, repetition, side, move-count, "
        "castling and clock features.",
    ),
)


_TREESTRAP_PAPER = (
    "Bootstrapping from Game Tree Search",
    "https://cgi.cse.unsw.edu.au/~blair/pubs/2009VenessSilverUtherBlairNIPS.pdf",
)

ALGORITHMS: dict[str, AlgorithmInfo] = {
    "ppo": AlgorithmInfo(
        label="PPO",
        workflow="Engine",
        policy_or_solver="rf.policies.Ppo",
        learner="rf.learners.Ppo",
        training_output="PpoBatch",
        example_label="Connect 4 PPO training example",
        example_anchor="train-ppo",
        players="Any N",
        dynamics="Sequential or simultaneous",
        chance="Sampled by the engine",
        information="Perfect or imperfect",
        # The original's text; its runtime (and this build) takes a (logits, values) tuple.
        network="Policy logits plus value: (rows, actions + 1)",
        summary="On-policy clipped policy gradient over GAE(lambda) advantages. Collection is "
        "windowed: collect(n) advances complete rounds under frozen weights to the record "
        "floor, bootstraps unfinished trajectories from the critic, and emits them, so every "
        "batch is internally single-version. Train a few clipped epochs per batch, discard "
        "it, and collect with the updated weights; the recorded ratio corrects action "
        "likelihood only, so strict PPO uses synchronous collect.",
        references=(("Proximal Policy Optimization Algorithms", "https://arxiv.org/abs/1707.06347"),),
    ),
    "dqn": AlgorithmInfo(
        label="DQN",
        workflow="Engine",
        policy_or_solver="rf.policies.EpsilonGreedyQ",
        learner="rf.learners.Dqn",
        training_output="DqnBatch",
        example_label="GridWorld DQN training example",
        example_anchor="train-gridworld",
        players="Any N",
        dynamics="Sequential or simultaneous",
        chance="Sampled by the engine",
        information="Perfect or imperfect",
        network="Q values: (rows, heads, actions)",
        summary="Observation-only off-policy value learning with sparse legal-action records. "
        "n_step > 1 emits multi-step windows over each agent's own decisions, with per-record "
        "gamma^k discounts; the window is uncorrected off-policy, so keep n small.",
        references=(
            ("Human-level control through deep reinforcement learning", "https://doi.org/10.1038/nature14236"),
            (
                "Deep Exploration via Bootstrapped DQN",
                "https://papers.nips.cc/paper_files/paper/2016/hash/8d8818c8e140c64c743113f563cf750f-Abstract.html",
            ),
            ("Deep Reinforcement Learning with Double Q-learning", "https://arxiv.org/abs/1509.06461"),
            ("Prioritized Experience Replay", "https://arxiv.org/abs/1511.05952"),
            ("Dueling Network Architectures for Deep Reinforcement Learning", "https://arxiv.org/abs/1511.06581"),
            ("A Distributional Perspective on Reinforcement Learning", "https://arxiv.org/abs/1707.06887"),
            ("Noisy Networks for Exploration", "https://arxiv.org/abs/1706.10295"),
            ("Rainbow: Combining Improvements in Deep Reinforcement Learning", "https://arxiv.org/abs/1710.02298"),
        ),
    ),
    "treestrap_expectimax": AlgorithmInfo(
        label="TreeStrap + selective expectimax",
        workflow="Engine",
        policy_or_solver="rf.policies.SelectiveExpectimax",
        learner="rf.learners.TreeStrap",
        training_output="TreeStrapBatch",
        example_label="TreeStrap training example",
        example_anchor="treestrap-snake",
        players="Any N",
        dynamics="Sequential or simultaneous",
        chance="Committed or ExpandAll",
        information="Perfect only",
        network="Ensemble action values",
        summary="Best-first search whose backed-up values become supervised learning targets.",
        references=(_TREESTRAP_PAPER,),
    ),
    "treestrap_mcts": AlgorithmInfo(
        label="TreeStrap + UCT MCTS",
        workflow="Engine",
        policy_or_solver="rf.policies.Mcts",
        learner="rf.learners.TreeStrap",
        training_output="TreeStrapBatch",
        example_label="TreeStrap MCTS training example",
        example_anchor="treestrap-snake",
        players="Sequential <=2; simultaneous N",
        dynamics="Sequential or simultaneous",
        chance="AlwaysResample, Committed, or ExpandAll",
        information="Perfect only",
        network="One ensemble head of action values",
        summary="UCT for sequential games and decoupled UCT for simultaneous multiplayer games.",
        references=(
            ("UCT", "https://doi.org/10.1007/11871842_29"),
            ("MCTS variants for simultaneous move games (DUCT)", "https://doi.org/10.1109/CIG.2014.6932885"),
        ),
    ),
    "minimax": AlgorithmInfo(
        label="Minimax",
        workflow="Engine",
        policy_or_solver="rf.policies.Minimax",
        learner="rf.learners.TreeStrap",
        training_output="TreeStrapBatch",
        example_label="Interactive play and evaluation examples",
        example_anchor="solving-and-evaluation",
        players="2",
        dynamics="Sequential",
        chance="Committed or ExpandAll",
        information="Perfect only",
        network="Q values (rows, 1, actions)",
        summary="Deterministic depth-limited minimax with expectation backup at declared chance nodes "
        "(expectiminimax) and callback-scored frontier leaves. A zero callback plays "
        "horizon-perfectly from terminal rewards alone, making this the classical fixed-strength "
        "baseline; no quiescence search, so fixed-depth play is subject to the horizon effect. "
        "Paired with TreeStrap this is the original TreeStrap(minimax) setting.",
        references=(_TREESTRAP_PAPER,),
    ),
    "alphazero": AlgorithmInfo(
        label="AlphaZero",
        workflow="Engine",
        policy_or_solver="rf.policies.AlphaZero",
        learner="rf.learners.AlphaZero",
        training_output="AlphaZeroBatch",
        example_label="AlphaZero training example",
        example_anchor="alphazero-connect-4",
        players="Any N",
        dynamics="Sequential or simultaneous",
        chance="AlwaysResample, Committed, or ExpandAll",
        information="Perfect only",
        network="Policy logits (rows, actions) plus values (rows,)",
        summary="PUCT self-play with policy targets and outcome values. For sequential games, "
        '`sequential_backup="auto"` uses negamax at one or two players and MaxN above two; '
        '`"maxn"` forces MaxN at two players.',
        references=(("AlphaZero", "https://doi.org/10.1126/science.aar6404"),),
    ),
    # an extension of 0.4.0 (tests/differential/test_compat_vs_original.py: EXTENSIONS)
    "gumbel_alphazero": AlgorithmInfo(
        label="Gumbel AlphaZero",
        workflow="Engine",
        policy_or_solver="rf.policies.GumbelAlphaZero",
        learner="rf.learners.AlphaZero",
        training_output="AlphaZeroBatch",
        example_label="AlphaZero training example",
        example_anchor="alphazero-connect-4",
        players="Any N",
        dynamics="Sequential",
        chance="AlwaysResample, Committed, or ExpandAll",
        information="Perfect only",
        network="Policy logits (rows, actions) plus values (rows,)",
        summary="Gumbel-top-k root sampling with sequential halving and the deterministic interior "
        "selection of Gumbel MuZero (mctx semantics); policy targets softmax(logits + sigma(completed Q)) "
        "learn from a handful of simulations. Negamax at one or two players, MaxN above two.",
        references=(("Gumbel AlphaZero", "https://openreview.net/forum?id=bERaNdoegnO"),),
    ),
    # -- solver workflows: rf.solvers is not part of this build yet --
    "cfr": AlgorithmInfo(
        label="CFR / CFR+",
        workflow="Standalone solver",
        policy_or_solver="rf.solvers.Cfr",
        learner=None,
        training_output="Internal strategy tables",
        example_label="CFR solving example",
        example_anchor="solve-leduc",
        players="2-10",
        dynamics="Sequential",
        chance="Exact enumeration",
        information="Imperfect-information native",
        network="No network",
        summary="Tabular alternating-update counterfactual regret minimization.",
        references=(
            ("Counterfactual regret minimization", "https://doi.org/10.5555/1795814.1795895"),
            ("CFR+", "https://arxiv.org/abs/1407.5042"),
        ),
    ),
    "external_mccfr": AlgorithmInfo(
        label="External-sampling MCCFR",
        workflow="Standalone solver",
        policy_or_solver='rf.solvers.Cfr(variant="external_mccfr")',
        learner=None,
        training_output="Internal strategy tables",
        example_label="MCCFR solving example",
        example_anchor="solve-leduc",
        players="2-10",
        dynamics="Sequential",
        chance="Sampled",
        information="Imperfect-information native",
        network="No network",
        summary="Sampled CFR variant for games whose chance tree is too large to enumerate.",
        references=(
            (
                "Monte Carlo CFR",
                "https://proceedings.neurips.cc/paper/2009/hash/00411460f7c92d2124a67ea0f4cb5f85-Abstract.html",
            ),
        ),
    ),
    "deep_cfr": AlgorithmInfo(
        label="Deep CFR",
        workflow="Standalone data-generating solver",
        policy_or_solver="rf.solvers.DeepCfr",
        learner=None,
        training_output="DeepCfrBatch",
        example_label="Deep CFR training example",
        example_anchor="deep-cfr-training",
        players="Kuhn 2-10; Leduc 2; Hold'em 2-9",
        dynamics="Sequential",
        chance="Sampled",
        information="Imperfect-information native",
        network="Per-player advantage networks; average-policy samples",
        summary="Batched external-sampling traversals with caller-owned buffers and training.",
        references=(("Deep CFR", "https://proceedings.mlr.press/v97/brown19b.html"),),
    ),
}


# Component registries.  Kept as literals so the catalogue imports nothing; tests/test_catalog.py
# asserts each equals the matching ``registered()`` list.
POLICIES = frozenset(
    {"alphazero", "epsilon_greedy_q", "gumbel_alphazero", "mcts", "minimax", "ppo", "selective_expectimax"}
)
LEARNERS = frozenset({"alphazero", "dqn", "ppo", "treestrap"})
ENCODER_INFO.update(
    car_racing_pixels=EncoderInfo(
        label="CarRacingPixels",
        game="CarRacing",
        shape="(3, 96, 96)",
        constructor="rf.encoders.CarRacingPixels()",
        summary="Rendered top-down frame, raw 0-255 values, channel-major (gym renders HWC).",
    ),
    car_racing_vec=EncoderInfo(
        label="CarRacingVec",
        game="CarRacing",
        shape="(1, 1, 21)",
        constructor="rf.encoders.CarRacingVec()",
        summary="Diagnostic pose/velocity/wheel/progress vector; renderer-free training and physics-vs-visual "
        "failure isolation.",
    ),
)
ENCODERS = frozenset(ENCODER_INFO)
CHANCE_MODES = frozenset({"always_resample", "committed", "expand_all"})
NOISE = frozenset({"dirichlet"})
