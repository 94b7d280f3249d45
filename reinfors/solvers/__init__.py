"""``rf.solvers`` — equilibrium solvers for the imperfect-information games.

* :class:`Cfr` — tabular CFR / CFR+ / external-sampling MCCFR (``reinfors.solvers.cfr``).

The tree helpers for evaluating any tabular strategy (``game_tree``, ``best_response_values``,
``policy_values``, ``nash_conv``) live in :mod:`reinfors.solvers.cfr`.
"""

from __future__ import annotations

from .cfr import Cfr

__all__ = ["Cfr"]
