"""Default njit implementations of the optional game exports (chance-free, perfect information).

The kernel generator binds these when a game module does not define its own.
"""

from __future__ import annotations

from reinfors.jit._compile import kernel


@kernel(entry=True)
def chance_pending(params, state):
    """A chance-free game never has pending chance."""
    return False


@kernel(entry=True)
def chance_outcomes(params, state, probs):
    """No outcomes: a chance-free game is never asked."""
    return 0


@kernel(entry=True)
def apply_chance(params, state, outcome):
    """Nothing to apply in a chance-free game."""
    return None


@kernel(entry=True)
def info_key(params, state, agent, out):
    """Perfect-information games declare no information states: length -1."""
    return -1


@kernel(entry=True)
def settle(params, state, amounts):
    """No tick is decided by chance after the step: nothing to settle."""
    return False


@kernel(entry=True)
def legal_list(params, state, agent, mask, ids):
    """Never called: a game without ``legal_list`` has its tree edges read from the mask."""
    return -1


@kernel
def head_index(action, agent):
    """The identity head map (every encoder whose head frame is the game's action frame)."""
    return action


@kernel(entry=True)
def chance_uniform(params, state):
    """Unknown shape: the runtime asks ``chance_outcomes`` for the fan (0)."""
    return 0


@kernel(entry=True)
def tree_copy(params, src, dst):
    """A search child's state row starts as a copy of its parent's: every word."""
    for i in range(src.shape[0]):
        dst[i] = src[i]
