"""``rf.learners`` — learner handles: how decisions become training records.

``Dqn`` → ``rf.DqnBatch`` (n-step windows over each agent's own decisions), ``Ppo`` →
``rf.PpoBatch`` (GAE under frozen weights), ``AlphaZero`` → ``rf.AlphaZeroBatch`` (visit targets
and realised returns), ``TreeStrap`` → ``rf.TreeStrapBatch`` (search-backed targets).
"""

from __future__ import annotations

from ._registry import registry as _registry
from ._validate import as_bool as _as_bool
from ._validate import as_unsigned as _as_unsigned
from ._validate import refuse_pickle as _refuse_pickle
from ._validate import unit_interval as _unit_interval
from .catalog import LEARNERS  # the registered names (0.4.0 exports it here too)

__all__ = ["LearnerHandle", "Dqn", "Ppo", "AlphaZero", "TreeStrap", "make", "registered", "LEARNERS"]

_CATALOGUE_COMPAT = "https://jeepjeepjeep.github.io/reinfors/catalogue/compatibility/"

# learner name -> the policies it pairs with
_PAIRS = {
    "dqn": ("epsilon_greedy_q",),
    "ppo": ("ppo",),
    "alphazero": ("alphazero", "gumbel_alphazero"),
    "treestrap": ("mcts", "minimax", "selective_expectimax"),
}


class LearnerHandle:
    """A configured learner (opaque): pass it to ``rf.Engine`` with a compatible policy."""

    __slots__ = ("_name", "_params")

    def __init__(self, name: str, params: dict):
        """Internal: build one with the static constructors (:meth:`Dqn`, :meth:`Ppo`, ...).

        Args:
            name: the registry name (``"dqn"``, ``"ppo"``, ``"alphazero"``, ``"treestrap"``).
            params: the validated knobs.
        """
        self._name = name
        self._params = params

    @property
    def name(self) -> str:
        """The learner's registry name (``"dqn"``, ``"ppo"``, ``"alphazero"`` or ``"treestrap"``)."""
        return self._name

    def _config(self) -> dict:
        out = dict(self._params)
        out["name"] = self._name
        return dict(sorted(out.items()))

    def __repr__(self) -> str:
        return f"LearnerHandle({self._name!r})"

    @staticmethod
    def TreeStrap(
        gamma: float = 0.99, outcome_weight: float = 0.0, bootstrap_p: float = 1.0, interior_targets: bool = False
    ) -> LearnerHandle:
        """Search-backed action-value targets for the searched states (pairs with Mcts, Minimax,
        SelectiveExpectimax); records form a :class:`~reinfors.TreeStrapBatch`.

        Args:
            gamma: discount in [0, 1] used by the search's backups.
            outcome_weight: in [0, 1]; mixes the episode's realised outcome into the targets.
            bootstrap_p: in [0, 1]; the probability that a record trains each Q head (the
                batch's ``masks``).
            interior_targets: also emit records for searched interior nodes, not just roots.

        Returns:
            The learner.

        Raises:
            TypeError: a knob of the wrong type.
            ValueError: a probability outside [0, 1] or not finite.
        """
        return LearnerHandle(
            "treestrap",
            {
                "gamma": _unit_interval("gamma", gamma),
                "outcome_weight": _unit_interval("outcome_weight", outcome_weight),
                "bootstrap_p": _unit_interval("bootstrap_p", bootstrap_p),
                "interior_targets": _as_bool("interior_targets", interior_targets),
            },
        )

    @staticmethod
    def Dqn(bootstrap_p: float = 1.0, n_step: int = 1, gamma: float = 0.99) -> LearnerHandle:
        """n-step transitions over each agent's own decisions (pairs with EpsilonGreedyQ); records
        form a :class:`~reinfors.DqnBatch`.

        Args:
            bootstrap_p: in [0, 1]; the probability that a record trains each Q head.
            n_step: decisions per transition window (>= 1; the window is not off-policy
                corrected, so keep it small).
            gamma: discount in [0, 1]; ``discounts`` holds ``gamma ** k``.

        Returns:
            The learner.

        Raises:
            TypeError: a knob of the wrong type.
            OverflowError: a negative ``n_step``.
            ValueError: ``n_step`` is 0, or a probability outside [0, 1].
        """
        bp = _unit_interval("bootstrap_p", bootstrap_p)
        n = _as_unsigned("n_step", n_step)
        if n < 1:
            raise ValueError(f"n_step must be at least 1, got {n}")
        return LearnerHandle("dqn", {"bootstrap_p": bp, "n_step": n, "gamma": _unit_interval("gamma", gamma)})

    @staticmethod
    def Ppo(gamma: float = 0.99, lam: float = 0.95) -> LearnerHandle:
        """GAE(lambda) advantages and returns over own-decision trajectories (pairs with Ppo);
        records form a :class:`~reinfors.PpoBatch`.

        Args:
            gamma: discount in [0, 1].
            lam: the GAE lambda in [0, 1].

        Returns:
            The learner.

        Raises:
            TypeError: a knob that is not a number.
            ValueError: a knob outside [0, 1] or not finite.
        """
        return LearnerHandle("ppo", {"gamma": _unit_interval("gamma", gamma), "lam": _unit_interval("lam", lam)})

    @staticmethod
    def AlphaZero(gamma: float = 1.0) -> LearnerHandle:
        """(obs, pi, z) records: root visit distribution and discounted realised return; records
        form an :class:`~reinfors.AlphaZeroBatch`.

        Args:
            gamma: discount in [0, 1] of the realised return (``value_targets``).

        Returns:
            The learner.

        Raises:
            TypeError: ``gamma`` is not a number.
            ValueError: ``gamma`` outside [0, 1] or not finite.
        """
        return LearnerHandle("alphazero", {"gamma": _unit_interval("gamma", gamma)})


TreeStrap = LearnerHandle.TreeStrap
Dqn = LearnerHandle.Dqn
Ppo = LearnerHandle.Ppo
AlphaZero = LearnerHandle.AlphaZero

_REGISTRY = {"alphazero": AlphaZero, "dqn": Dqn, "ppo": Ppo, "treestrap": TreeStrap}


registered, make = _registry("learner", _REGISTRY)

# not picklable, as 0.4.0 (tests/reliability/test_no_pickle.py)
LearnerHandle.__reduce_ex__ = _refuse_pickle
