"""``rf.solvers`` — equilibrium solvers for the imperfect-information games.

* :class:`Cfr` — tabular CFR / CFR+ / external-sampling MCCFR (``reinfors.solvers.cfr``).
* :class:`DeepCfr` — Deep CFR traversal data with caller-owned networks (``reinfors.solvers.deep_cfr``).

The tree helpers for evaluating any tabular strategy (``game_tree``, ``best_response_values``,
``policy_values``, ``nash_conv``) live in :mod:`reinfors.solvers.cfr`.
"""

from __future__ import annotations

from .cfr import Cfr
from .deep_cfr import DeepCfr

__all__ = ["Cfr", "DeepCfr"]
