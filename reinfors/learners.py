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
        self._name = name
        self._params = params

    @property
    def name(self) -> str:
        return self._name

    def _config(self) -> dict:
        out = dict(self._params)
        out["name"] = self._name
        return dict(sorted(out.items()))

    def __repr__(self) -> str:
        return f"LearnerHandle({self._name!r})"

    @staticmethod
    def TreeStrap(gamma=0.99, outcome_weight=0.0, bootstrap_p=1.0, interior_targets=False) -> LearnerHandle:
        """Search-backed action-value targets for the searched states (pairs with Mcts, Minimax,
        SelectiveExpectimax)."""
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
    def Dqn(bootstrap_p=1.0, n_step=1, gamma=0.99) -> LearnerHandle:
        """n-step transitions over each agent's own decisions (pairs with EpsilonGreedyQ)."""
        bp = _unit_interval("bootstrap_p", bootstrap_p)
        n = _as_unsigned("n_step", n_step)
        if n < 1:
            raise ValueError(f"n_step must be at least 1, got {n}")
        return LearnerHandle("dqn", {"bootstrap_p": bp, "n_step": n, "gamma": _unit_interval("gamma", gamma)})

    @staticmethod
    def Ppo(gamma=0.99, lam=0.95) -> LearnerHandle:
        """GAE(lambda) advantages and returns over own-decision trajectories (pairs with Ppo)."""
        return LearnerHandle("ppo", {"gamma": _unit_interval("gamma", gamma), "lam": _unit_interval("lam", lam)})

    @staticmethod
    def AlphaZero(gamma=1.0) -> LearnerHandle:
        """(obs, pi, z) records: root visit distribution and discounted realised return."""
        return LearnerHandle("alphazero", {"gamma": _unit_interval("gamma", gamma)})


TreeStrap = LearnerHandle.TreeStrap
Dqn = LearnerHandle.Dqn
Ppo = LearnerHandle.Ppo
AlphaZero = LearnerHandle.AlphaZero

_REGISTRY = {"alphazero": AlphaZero, "dqn": Dqn, "ppo": Ppo, "treestrap": TreeStrap}


registered, make = _registry("learner", _REGISTRY)

# not picklable, as 0.4.0 (tests/reliability/test_no_pickle.py)
LearnerHandle.__reduce_ex__ = _refuse_pickle
