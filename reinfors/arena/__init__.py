"""``rf.arena`` — paired evaluation of two contestants over many concurrent games.

``Arena(game, reward, contestants)`` plays ``n_games`` (even) games of a 2-agent sequential
game, at most ``n_slots`` at a time.  Games come in pairs: game ``2k`` seats contestant 0 as agent
0, game ``2k + 1`` swaps the seats, and both games of a pair start from the same opening (one
``start.generate`` per pair, restored into both), so the first-mover advantage and the luck of the
opening cancel out of the pair's mean.

A contestant is either ``(policy, infer, gamma)`` — a searched (or model-free) seat that decides
through :meth:`PolicyHandle.choose` — or an :class:`External` agent driven on worker threads.
The scheduler works in rounds: every round each searched contestant gets ONE ``choose`` call over
all the open games where it is to move (ordered by game id), so the searches of every open game
are pooled into the same callback batches.  External agents are dispatched before the searched
batches run, so they think while the search runs.

Two schedulers play the same games: with two plain ``(PolicyHandle, infer, gamma)`` seats the
games run as slots of preallocated arrays, stepped by kernels, with Python per round
(``reinfors/_runtime/match.py``); with an External seat, or a policy object that only has a
``choose`` method, the general scheduler below (:class:`_Run`: ``choose`` + ``Env.step``) runs.
When both contestants are deterministic (``reinfors._runtime.match.deterministic``) the kernel
path pools each contestant's searches over every open game it is to move in (phases rather than
rounds: about twice the rows per callback call); the games are the same.

Beyond 0.4.0: :class:`Tournament` and :func:`gate` (``reinfors/arena/_tournament.py``) play round robins,
gauntlets and SPRT-gated matches through this Arena; :mod:`reinfors.ratings` fits Elo.

Determinism: a run with searched contestants only is exactly reproducible per ``seed`` — the
per-game chance seeds, the openings and the ``choose`` seeds are SplitMix64 hashes of the master
seed (:func:`_mix64`), and the round structure does not depend on timing.  With an ``External``
seat the outcome is seeded but not replayable (its completion timing shapes the batches).  The
seeding scheme is the original 0.4.0's, so the same seed gives the same games there and here.
"""

from collections.abc import Callable, Sequence  # noqa: F401 - the classes' annotations resolve here (below)
from typing import Any  # noqa: F401 - as in 0.4.0's reinfors.arena

from .._seeds import _mix64  # noqa: F401 - 0.4.0's reinfors.arena._mix64 (the seeding scheme)
from . import _arena
from ._arena import Arena, ArenaResult, External, GameResult, View
from ._tournament import GateResult, Tournament, TournamentResult, gate

__all__ = ["Arena", "ArenaResult", "External", "GameResult", "GateResult", "Tournament", "TournamentResult", "View", "gate"]


# 0.4.0's classes read as its own (``reinfors.arena.Arena``, ...) though defined in ``_arena``, their
# methods with them (introspection and the API docs see one consistent home); the tournament
# additions keep their module.
def _home(cls: type) -> None:
    cls.__module__ = __name__
    for member in vars(cls).values():
        fn = getattr(member, "fget", None) or getattr(member, "__func__", None) or member
        if callable(fn) and getattr(fn, "__module__", None) == _arena.__name__:
            fn.__module__ = __name__


for _cls in (Arena, ArenaResult, External, GameResult, View):
    _home(_cls)
del _cls, _home
