"""The njit game contract: the state-row header and the shared step semantics.

A game is a module (or namespace) of njit functions over one fixed-width ``int64`` state row plus
an ``int64`` parameter row (see ``tictactoe.py`` for the annotated template).  The first
``HEADER`` words of every state row belong to the shared semantics below, never to the game's
own bookkeeping::

    state: [state_size] int64
    ┌─────────┬─────────┬───────────┬─────────┬──────────────────────────────┐
    │ 0 TICKS │ 1 DONE  │ 2 HORIZON │ 3 spare │ 4 … state_size-1: game words │
    └─────────┴─────────┴───────────┴─────────┴──────────────────────────────┘

``TICKS``   completed steps this episode (incremented *before* the game's ``step`` runs, so a
            game may read the tick it is completing, e.g. to emit truncation events).
``DONE``    ``RUNNING`` (0), ``TERMINAL`` (1, the game ended by its rules) or ``TRUNCATED``
            (2, the horizon was reached first).
``HORIZON`` the truncation horizon in ticks (0 = none), copied from the game at reset.

The shared semantics, written once for every game (pgx's template-method ``Env.step``):

* a finished state has no active agents and an all-zero legal mask;
* stepping validates the joint action first and leaves the state untouched when it is illegal;
* after the game's ``step``, ``DONE`` becomes ``TERMINAL`` when the game says so, else
  ``TRUNCATED`` when ``TICKS`` reached ``HORIZON``;
* pending chance (a deal, a food placement) is resolved by the caller's RNG after reset and after
  each step, one outcome at a time, so searches can instead resample, commit or expand it;
* optional ``settle(params, state, amounts) -> bool`` runs after a step's chance resolved: a game
  whose tick is decided by the chance dealt during it (hold'em's all-in run-out) adds that tick's
  amounts there and returns True to end the episode (``DONE`` becomes ``TERMINAL``).  The
  tree searches' chance fans step without it (they refuse hidden-information games, the only
  ones that define it so far);
* optional ``chance_uniform(params, state) -> m``: when the pending node is ``m`` equally likely
  outcomes ``0 .. m-1`` the runtime's sampler draws ``index_hi(m)`` straight away (the same draw
  ``sample_chance`` makes on that fan) instead of asking ``chance_outcomes`` for ``m``
  probabilities; 0 = ask.  Searches and solvers still enumerate through ``chance_outcomes``.

These functions are generic over the game: each engine-side kernel module is generated per game
(``reinfors/_runtime/codegen.py``) and calls them with the game's functions bound statically.
"""

from __future__ import annotations

import numpy as np

TICKS = 0
DONE = 1
HORIZON = 2
HEADER = 4

RUNNING = 0
TERMINAL = 1
TRUNCATED = 2

# Required exports of a game module, with their kinds (checked by reinfors.games.from_module).
REQUIRED_CONSTANTS = ("NAME", "N_ACTIONS", "REWARD_KEYS", "REWARD_DEFAULTS")
REQUIRED_FUNCTIONS = (
    "init",
    "step",
    "legal",
    "active",
    "is_terminal",
    "encode",
)
OPTIONAL_FUNCTIONS = (
    "chance_pending",
    "chance_outcomes",
    "apply_chance",
    "info_key",
    "settle",
    "chance_uniform",
    "legal_list",
    "tree_copy",
)
# Optional constant ``LEGAL_RANKS`` (default False): the game's ``legal`` writes each legal
# action's 1-based position in the game's own legal-move order into the mask (at most 255 legal
# actions) instead of 1, and the engine lists legal actions in that order — search edges (root
# noise is drawn per edge in order, ties break to the first) and every batch's legal CSR.  The
# optional ``legal_list(params, state, agent, mask, ids) -> n`` writes that mask (zeroing it
# first) and the ids in order into ``ids: [>= n] int32`` in one pass, so tree nodes skip the
# scan of the mask; an empty ``mask`` asks for the ids only (the tree nodes whose masks are never
# read: below the root of AlphaZero / Mcts trees).  Chess declares both (reinfors 0.4.0 lists
# moves in generation order).
# The optional ``tree_copy(params, src, dst)`` copies a state row into a search child's row (every
# tree copy from a parent or a chance node) before the child is stepped or its chance outcome
# applied: every word the game's functions read from then on (default: all of them).
# Chess copies its position ring only as far back as the repetition window and the encoder's
# history reach (a row is 5.5 KB, most of it positions that can never recur).
# Optional constant of a game with chance: ``CHANCE_IN_STEP`` (default True).  False declares that
# chance is pending only after reset (a deal, a start cell), so tree searches never meet a chance
# node and every chance mode builds the same trees; True (dice, food) lets the search's chance mode
# (AlwaysResample, Committed(k), ExpandAll) decide how in-tree chance is consumed.


# -- parameter-row helpers (plain Python, used by the games' make_params / layout functions) -----


def u64_word(value: int) -> int:
    """A u64 parameter (e.g. ``max_ticks`` up to 2**64 - 1) stored bitwise in an int64 word."""
    return int(np.array([value], np.uint64).view(np.int64)[0])


def word_u64(word) -> int:
    """Inverse of :func:`u64_word`."""
    return int(np.array([word], np.int64).view(np.uint64)[0])


def engine_horizon(word) -> int:
    """The engine's truncation horizon from a u64 ``max_ticks`` word (0 = none); values past
    2**63 clamp to a horizon that is never reached."""
    t = int(word)
    return 2**63 - 1 if t < 0 else t
