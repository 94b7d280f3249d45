"""One registry shape for every component family (games, encoders, policies, learners, ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def registry(kind: str, table: dict[str, Callable[..., Any]]):
    """``(registered, make)`` for ``table``: ``make(name, **kw)`` raises
    ``KeyError("unknown <kind> 'x'; registered: [...]")`` for an unknown name, as the original."""

    def registered() -> list[str]:
        """The registered names, sorted, for ``make``."""
        return sorted(table)

    def make(name: str, **kwargs: Any):
        """Construct by name; kwargs match the typed constructor."""
        try:
            ctor = table[name]
        except KeyError:  # an unhashable name is the dict lookup's own TypeError, as the original
            raise KeyError(f"unknown {kind} {name!r}; registered: {registered()}") from None
        return ctor(**kwargs)

    return registered, make
