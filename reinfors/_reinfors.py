"""Alias of the original's compiled module: the same class objects under ``reinfors._reinfors``.

Code written against reinfors 0.4.0 imports e.g. ``from reinfors._reinfors import PolicyHandle``;
every name here *is* the public object (``rf.Env is rf._reinfors.Env``).
"""

from __future__ import annotations

from ._version import VERSION
from .batches import AlphaZeroBatch, DeepCfrBatch, DqnBatch, PpoBatch, TreeStrapBatch
from .chance_modes import ChanceModeHandle
from .chess import chess_action_uci, chess_uci_action
from .encoders import EncoderHandle
from .engine import Engine
from .env import Env, EnvSnapshot
from .games import GameHandle
from .learners import LearnerHandle
from .noise import NoiseHandle
from .policies import PolicyHandle
from .rewards import Reward
from .snapshot import EngineSnapshot
from .solvers import Cfr, DeepCfr
from .spaces import Box, Discrete
from .stream import CollectStream


def core_version() -> str:
    """The library version (``rf.__version__ == rf.core_version()``).

    Returns:
        The version string (``"0.4.0"``: the API this build implements).
    """
    return VERSION


def build_info() -> dict:
    """Build identity.

    Returns:
        ``{"git_sha", "git_dirty", "git_tag", "profile", "version"}``.
    """
    from ._buildinfo import build_info as _bi

    return _bi(VERSION)


__all__ = [
    "AlphaZeroBatch",
    "Box",
    "ChanceModeHandle",
    "Cfr",
    "CollectStream",
    "DeepCfr",
    "DeepCfrBatch",
    "Discrete",
    "DqnBatch",
    "EncoderHandle",
    "Engine",
    "EngineSnapshot",
    "Env",
    "EnvSnapshot",
    "GameHandle",
    "LearnerHandle",
    "NoiseHandle",
    "PolicyHandle",
    "PpoBatch",
    "Reward",
    "TreeStrapBatch",
    "build_info",
    "core_version",
    "chess_action_uci",
    "chess_uci_action",
]
