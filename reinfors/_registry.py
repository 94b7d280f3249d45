"""One registry shape for every component family (games, encoders, policies, learners, ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def registry(kind: str, table: dict[str, Callable[..., Any]]):
    """``(registered, make)`` for ``table``: ``make(name, **kw)`` raises
    ``KeyError("unknown <kind> 'x'; registered: [...]")`` for an unknown name, as the original."""

    def registered() -> list[str]:
        """The registered names, for ``make``.

        Returns:
            The names, sorted.
        """
        return sorted(table)

    def make(name: str, **kwargs: Any) -> Any:
        """Construct a handle by its registered name.

        Args:
            name: a registered name (see ``registered()``).
            **kwargs: the typed constructor's keyword arguments.

        Returns:
            What the typed constructor returns for ``kwargs``.

        Raises:
            KeyError: ``name`` is not registered (the message lists the registered names).
        """
        try:
            ctor = table[name]
        except KeyError:  # an unhashable name is the dict lookup's own TypeError, as the original
            raise KeyError(f"unknown {kind} {name!r}; registered: {registered()}") from None
        return ctor(**kwargs)

    return registered, make
