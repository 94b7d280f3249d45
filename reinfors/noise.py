"""``rf.noise`` — root exploration noise for AlphaZero (policy ``noise=``)."""

from __future__ import annotations

import math

from ._registry import registry as _registry
from ._validate import as_float as _as_float
from ._validate import refuse_pickle as _refuse_pickle
from ._validate import rust_debug as _rust_debug
from ._validate import unit_interval as _unit_interval
from .catalog import NOISE  # the registered names (0.4.0 exports it here too)

__all__ = ["NoiseHandle", "Dirichlet", "make", "registered", "NOISE"]


class NoiseHandle:
    """Root noise (opaque).  ``Dirichlet(epsilon=0.25, alpha=0.3, scope="requester")``."""

    __slots__ = ("_epsilon", "_alpha", "_scope")

    def __init__(self, epsilon: float, alpha: float, scope: str):
        """Internal: build one with :meth:`Dirichlet` (which validates the knobs).

        Args:
            epsilon: the noise's weight in the root prior.
            alpha: the Dirichlet concentration.
            scope: ``"requester"`` or ``"all"``.
        """
        self._epsilon, self._alpha, self._scope = epsilon, alpha, scope

    def _config(self) -> dict:
        return {"alpha": self._alpha, "epsilon": self._epsilon, "name": "dirichlet", "scope": self._scope}

    def __repr__(self) -> str:
        # what the constructor call reads like (AlphaZero's signature shows its default this way)
        return f"Dirichlet(epsilon={self._epsilon!r}, alpha={self._alpha!r}, scope={self._scope!r})"

    @staticmethod
    def Dirichlet(epsilon: float = 0.25, alpha: float = 0.3, scope: str = "requester") -> NoiseHandle:
        """Mix ``epsilon`` of a symmetric Dirichlet(``alpha``) draw into the root prior.

        Args:
            epsilon: the noise's weight in [0, 1]: the root prior becomes
                ``(1 - epsilon) * prior + epsilon * Dirichlet(alpha)``.
            alpha: the concentration, finite and > 0.
            scope: ``"requester"`` perturbs only the requesting player's root prior in
                simultaneous trees; ``"all"`` perturbs every player's.

        Returns:
            The noise handle, for ``rf.policies.AlphaZero(noise=...)``.

        Raises:
            TypeError: a knob of the wrong type.
            ValueError: ``epsilon`` outside [0, 1], ``alpha`` not finite and > 0, or an unknown
                ``scope``.
        """
        eps = _unit_interval("epsilon", epsilon)
        a = _as_float("alpha", alpha, finite=False)
        if not (math.isfinite(a) and a > 0.0):
            raise ValueError("alpha must be finite and > 0")
        if not isinstance(scope, str):
            raise TypeError(f"argument 'scope': '{type(scope).__name__}' object cannot be converted to 'PyString'")
        if scope not in ("requester", "all"):
            raise ValueError(f'unknown scope {_rust_debug(scope)}; expected "requester" or "all"')
        return NoiseHandle(eps, a, scope)


Dirichlet = NoiseHandle.Dirichlet
_REGISTRY = {"dirichlet": Dirichlet}


registered, make = _registry("noise", _REGISTRY)

# not picklable, as 0.4.0 (tests/reliability/test_no_pickle.py)
NoiseHandle.__reduce_ex__ = _refuse_pickle
