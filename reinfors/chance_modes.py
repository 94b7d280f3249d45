"""``rf.chance_modes`` — how a search consumes a game's declared chance (policy ``chance=``)."""

from __future__ import annotations

from ._registry import registry as _registry
from ._validate import as_unsigned as _as_unsigned
from ._validate import refuse_pickle as _refuse_pickle
from .catalog import CHANCE_MODES  # the registered names (0.4.0 exports it here too)

__all__ = ["ChanceModeHandle", "AlwaysResample", "Committed", "ExpandAll", "make", "registered", "CHANCE_MODES"]


class ChanceModeHandle:
    """A chance mode (opaque): ``AlwaysResample()``, ``Committed(samples=1)`` or ``ExpandAll()``."""

    __slots__ = ("_name", "_samples")

    def __init__(self, name: str, samples: int = 0):
        """Internal: build one with :meth:`AlwaysResample`, :meth:`Committed` or :meth:`ExpandAll`.

        Args:
            name: the registry name (``"always_resample"``, ``"committed"``, ``"expand_all"``).
            samples: draws per chance edge (``Committed`` only).
        """
        self._name = name
        self._samples = samples

    @property
    def name(self) -> str:
        """The mode's registry name: ``"always_resample"``, ``"committed"`` or ``"expand_all"``."""
        return self._name

    def _config(self) -> dict:
        if self._name == "committed":
            return {"name": "committed", "samples": self._samples}
        return {"name": self._name}

    def __repr__(self) -> str:
        return f"ChanceModeHandle({self._config()})"

    @staticmethod
    def AlwaysResample() -> ChanceModeHandle:
        """Draw a fresh outcome on every traversal (unbiased; the default of AlphaZero/Mcts).

        Returns:
            The chance mode.
        """
        return ChanceModeHandle("always_resample")

    @staticmethod
    def Committed(samples: int = 1) -> ChanceModeHandle:
        """Freeze ``samples`` draws per chance edge (for wide fans).

        Any u64 is accepted here; an Engine or ``choose`` refuses more than 2**20 (``chance
        samples must be <= 1048576``), as 0.4.0.

        Args:
            samples: outcomes drawn once per chance edge and reused by every traversal (>= 1).

        Returns:
            The chance mode.

        Raises:
            TypeError: ``samples`` is not an int.
            OverflowError: ``samples`` is negative or past 2**64 - 1.
            ValueError: ``samples`` is 0.
        """
        k = _as_unsigned("samples", samples)
        if k < 1:
            raise ValueError("samples must be >= 1")
        return ChanceModeHandle("committed", k)

    @staticmethod
    def ExpandAll() -> ChanceModeHandle:
        """Evaluate every outcome with its probability (exact for narrow fans).

        Returns:
            The chance mode.
        """
        return ChanceModeHandle("expand_all")


AlwaysResample = ChanceModeHandle.AlwaysResample
Committed = ChanceModeHandle.Committed
ExpandAll = ChanceModeHandle.ExpandAll

_REGISTRY = {"always_resample": AlwaysResample, "committed": Committed, "expand_all": ExpandAll}


registered, make = _registry("chance mode", _REGISTRY)

# not picklable, as 0.4.0 (tests/reliability/test_no_pickle.py)
ChanceModeHandle.__reduce_ex__ = _refuse_pickle
