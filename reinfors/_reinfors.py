"""Alias of the original's compiled module: the same class objects under ``reinfors._reinfors``.

Code written against reinfors 0.4.0 imports e.g. ``from reinfors._reinfors import PolicyHandle``;
every name here *is* the public object (``rf.Env is rf._reinfors.Env``).
"""

from __future__ import annotations

from .chess import chess_action_uci, chess_uci_action
from .encoders import EncoderHandle
from .env import Env, EnvSnapshot
from .games import GameHandle
from .rewards import Reward
from .snapshot import EngineSnapshot
from .spaces import Box, Discrete
from .stream import CollectStream


def core_version() -> str:
    from . import core_version as _cv

    return _cv()


def build_info() -> dict:
    from . import build_info as _bi

    return _bi()


__all__ = [
    "Box",
    "CollectStream",
    "Discrete",
    "EncoderHandle",
    "EngineSnapshot",
    "Env",
    "EnvSnapshot",
    "GameHandle",
    "Reward",
    "build_info",
    "core_version",
    "chess_action_uci",
    "chess_uci_action",
]
