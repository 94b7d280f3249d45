"""``rf.engine_from_config`` — an ``Engine`` from a nested config (e.g. ``resolved_config()``).

Blocks: ``game``, ``policy``, ``learner`` (each ``{"name": ..., **constructor kwargs}``), ``engine``
(``Engine`` kwargs), optional ``reward`` and ``schema_version`` (int 1); ``reinfors_version`` and
other top-level keys are ignored.  Nested handle blocks (``encoder``, ``chance``, ``noise``) become
handles; null engine values mean "default"; a ``start_buffer`` block ``{capacity, p_fresh}``
unpacks into the flat kwargs.  For YAML-style configs a ``reward`` mapping may sit in the game
block and ``max_ticks`` in the engine block (routed to the game).  Content ``revision`` keys are
verified against the built engine.  ``engine_from_config(e.resolved_config())`` (also after a
JSON round trip) builds an engine with an equal config, an equal fingerprint and identical
records.  Behaviour and messages follow reinfors 0.4.0 (its ``engine_from_config`` is Python);
malformed blocks get a message naming the block instead of a bare ``KeyError('game')``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import chance_modes, encoders, games, learners, noise, policies
from ._runtime import compile_helper as _compile_helper
from .engine import Engine
from .rewards import Reward

__all__ = ["engine_from_config"]

SCHEMA = 1
_REMOVED = (("n_groups", "n_threads and batch_size"), ("pad_rows_to", "pad"))


def _block(config: Mapping, key: str) -> dict:
    if key not in config:
        raise KeyError(f"config is missing the {key!r} block")
    block = config[key]
    if not isinstance(block, Mapping):
        raise TypeError(f"config[{key!r}] must be a dict, got {type(block).__name__}")
    return dict(block)


def _split(config: Mapping, key: str) -> tuple[Any, dict]:
    block = _block(config, key)
    if "name" not in block:
        raise KeyError(f"config[{key!r}] has no 'name'")
    return block.pop("name"), block


def _handle(kw: dict, key: str, registry, revisions: dict | None = None) -> None:
    """Replace a nested ``{name, ...}`` block at ``kw[key]`` by the registry's handle."""
    block = kw.get(key)
    if not isinstance(block, Mapping):
        return  # a handle, None, or a wrong type the constructor reports
    block = dict(block)
    if revisions is not None and "revision" in block:
        revisions[key] = block.pop("revision")
    if "name" not in block:
        if key == "noise":
            raise ValueError("noise block requires a name")
        raise KeyError(f"{key} block has no 'name'")
    kw[key] = registry.make(block.pop("name"), **block)


def engine_from_config(config: Mapping[str, Any]) -> Engine:
    """Build an :class:`Engine` from a nested config dict.

    Blocks: ``game``, ``policy``, ``learner`` (each ``{"name": ..., **constructor kwargs}``),
    ``engine`` (``Engine`` kwargs), optional ``reward`` and ``schema_version`` (1); nested
    ``encoder`` / ``chance`` / ``noise`` blocks become handles, null engine values the defaults.
    ``engine_from_config(e.resolved_config())`` (also after a JSON round trip) builds an engine
    with an equal config, an equal fingerprint and identical records.

    Args:
        config: the nested config, e.g. ``Engine.resolved_config()``.

    Returns:
        The engine.

    Raises:
        TypeError: ``config`` or a block is not a dict.
        KeyError: a missing block, a block without ``name``, or an unknown registry name.
        ValueError: an unsupported ``schema_version``, a removed field, a revision mismatch,
            or what the constructors refuse.
    """
    if not isinstance(config, Mapping):
        raise TypeError(f"argument 'config': must be a dict, got {type(config).__name__}")
    schema = config.get("schema_version")
    if schema is not None and (not isinstance(schema, int) or isinstance(schema, bool) or schema != SCHEMA):
        raise ValueError(f"unsupported config schema_version {schema!r}; this reinfors supports {SCHEMA}")
    revisions: dict[str, Any] = {}
    g_name, g_kw = _split(config, "game")
    if "revision" in g_kw:
        revisions["game"] = g_kw.pop("revision")
    _handle(g_kw, "encoder", encoders, revisions)
    engine_kw = _block(config, "engine") if "engine" in config else {}
    for gone, instead in _REMOVED:
        if gone in engine_kw:
            raise ValueError(f"engine config field '{gone}' was removed in 0.3.0; tune {instead} instead")
    engine_kw = {k: v for k, v in engine_kw.items() if v is not None}  # null = the default
    if "start_buffer" in engine_kw and not isinstance(engine_kw["start_buffer"], bool):
        sb = engine_kw.pop("start_buffer")
        if not isinstance(sb, Mapping):
            raise TypeError(f"engine.start_buffer must be null, a bool or {{capacity, p_fresh}}, got {sb!r}")
        missing = [k for k in ("capacity", "p_fresh") if k not in sb]
        if missing:
            raise KeyError(f"engine.start_buffer has no {missing[0]!r}")
        engine_kw.update(start_buffer=True, start_buffer_capacity=sb["capacity"], p_fresh=sb["p_fresh"])
    reward = g_kw.pop("reward", None)
    if reward is None:
        reward = config.get("reward")
    if isinstance(reward, Mapping):
        reward = Reward(**reward)
    if "max_ticks" in engine_kw:  # legacy: the truncation horizon is a game knob
        g_kw.setdefault("max_ticks", engine_kw.pop("max_ticks"))
    p_name, p_kw = _split(config, "policy")
    _handle(p_kw, "chance", chance_modes)
    _handle(p_kw, "noise", noise)
    l_name, l_kw = _split(config, "learner")
    engine = Engine(
        games.make(g_name, **g_kw),
        reward,
        policies.make(p_name, **p_kw),
        learners.make(l_name, **l_kw),
        **engine_kw,
    )
    built = engine.resolved_config()["game"]
    for scope, expected in revisions.items():
        actual = built.get("revision") if scope == "game" else built.get("encoder", {}).get("revision")
        if actual != expected:
            raise ValueError(
                f"config was recorded against {scope} content revision {expected}, but this build has revision "
                f"{actual}; observations would differ from the recorded run"
            )
    return engine


_compile_helper.set_rebuilder(engine_from_config)  # a cold engine's compile helper rebuilds from configs
