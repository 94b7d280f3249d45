"""reinfors — reinforcement-learning training data at native speed (Numba build).

Compose a rollout from a game, a reward, a policy and a learner; drive single games with
``Env``.  The public surface matches reinfors 0.4.0 (the Rust + PyO3 original), so switching is
one install line::

    import reinfors as rf
    game = rf.games.Connect4()
    env = rf.Env(game, rf.Reward(win=1.0, loss=-1.0), seed=0)
    env.step({0: 3})

Games are njit kernels over fixed-width state rows (``reinfors/jit/games``); your own games,
written as ``@njit`` functions in a file or notebook, run through the same machinery
(``rf.games.custom`` / ``rf.games.from_module``).
"""

from __future__ import annotations

from typing import Any

from . import catalog, chance_modes, encoders, games, learners, noise, policies, spaces
from . import solvers
from .batches import AlphaZeroBatch, DqnBatch, PpoBatch, TreeStrapBatch
from .batches import DeepCfrBatch
from .chess import chess_action_uci, chess_uci_action
from .config import engine_from_config
from .engine import Engine
from .env import Env, EnvSnapshot
from .rewards import Reward
from .snapshot import EngineSnapshot
from .stream import CollectStream

from ._reinfors import build_info, core_version

__version__ = core_version()


def make_game(name: str, **kwargs: Any) -> games.GameHandle:
    """Construct a game handle by name (see :func:`registered_games`).

    Args:
        name: a registered game name (``"connect4"``, ``"chess"``, ...).
        **kwargs: the game constructor's keyword arguments.

    Returns:
        The game handle.

    Raises:
        KeyError: ``name`` is not registered.
    """
    return games.make(name, **kwargs)


def make_policy(name: str, **kwargs: Any) -> policies.PolicyHandle:
    """Construct a policy handle by name (see :func:`registered_policies`).

    Args:
        name: a registered policy name (``"alphazero"``, ``"ppo"``, ...).
        **kwargs: the policy constructor's keyword arguments.

    Returns:
        The policy handle.

    Raises:
        KeyError: ``name`` is not registered.
    """
    return policies.make(name, **kwargs)


def make_learner(name: str, **kwargs: Any) -> learners.LearnerHandle:
    """Construct a learner handle by name (see :func:`registered_learners`).

    Args:
        name: a registered learner name (``"alphazero"``, ``"dqn"``, ...).
        **kwargs: the learner constructor's keyword arguments.

    Returns:
        The learner handle.

    Raises:
        KeyError: ``name`` is not registered.
    """
    return learners.make(name, **kwargs)


def registered_games() -> list[str]:
    """The registered game names.

    Returns:
        The names, sorted.
    """
    return games.registered()


def registered_policies() -> list[str]:
    """The registered policy names.

    Returns:
        The names, sorted.
    """
    return policies.registered()


def registered_learners() -> list[str]:
    """The registered learner names.

    Returns:
        The names, sorted.
    """
    return learners.registered()


from . import _reinfors, testing  # noqa: E402, F401  (alias module and conformance helpers)
from . import arena, gym, starts  # noqa: E402  (Arena, openings, Gymnasium/PettingZoo adapters)
from . import ratings  # noqa: E402, F401  (Elo fits and SPRT; an addition beyond 0.4.0)
from .arena import Arena  # noqa: E402
from ._warmup import warmup  # noqa: E402, F401  (ahead-of-time compilation; an addition beyond 0.4.0)

__all__ = [
    "AlphaZeroBatch",
    "CollectStream",
    "DeepCfrBatch",
    "DqnBatch",
    "Engine",
    "EngineSnapshot",
    "PpoBatch",
    "TreeStrapBatch",
    "catalog",
    "chance_modes",
    "learners",
    "make_learner",
    "make_policy",
    "noise",
    "policies",
    "registered_learners",
    "registered_policies",
    "Env",
    "EnvSnapshot",
    "Reward",
    "_reinfors",
    "build_info",
    "core_version",
    "encoders",
    "engine_from_config",
    "games",
    "make_game",
    "registered_games",
    "solvers",
    "spaces",
    "Arena",
    "arena",
    "gym",
    "starts",
    "chess_action_uci",
    "chess_uci_action",
]
