"""The header of a generated kernel module, as stubs for linters and IDEs.

``reinfors/_runtime/codegen.py`` writes the real header per game and family: one
``from reinfors._gamefns import <module>__<role> as G_<role>`` line per game function (role) and
the constants below with the game's and the family's values.  The kernel parts
(``reinfors/jit/kernels``) import these names under ``if TYPE_CHECKING:`` only; nothing imports
this module at run time (``tests/engine/test_codegen.py`` keeps it equal to the header codegen writes).
"""

from __future__ import annotations

# -- constants (values per game / family) -----------------------------------------------------

N_ACTIONS = 0  # the game's action count
SIMUL = False  # the game is simultaneous (joint actions)
CHANCE_IN_STEP = False  # the game's steps can leave chance pending (sequential trees compile chance nodes)
LEGAL_RANKED = False  # legal masks hold positions in the game's legal order (LEGAL_RANKS)
LEGAL_LIST = False  # the game lists its legal actions (``legal_list`` role)
HEAD_MAPPED = False  # the encoder maps prediction heads into the action frame (``head_index`` role)
FAM_MODELFREE = False  # kernel family: model-free (no tree search)
FAM_TREE = False  # kernel family: AlphaZero / Mcts / GumbelAlphaZero trees
GUMBEL = False  # kernel family: GumbelAlphaZero (the tree with search_gumbel.py's selection)
FAM_MMX = False  # kernel family: Minimax
FAM_SX = False  # kernel family: SelectiveExpectimax
CACHE_ON = False  # the inference-cache paths are compiled (``+cache`` families)
SB_ON = False  # the start buffer's phases are compiled (start_buffer=True)
LB_ON = False  # leaf batching's rounds are compiled (leaf_batch > 1)


# -- the game's functions (reinfors/jit/games/_contract.py describes each role) -----------------


def G_init(*args):
    """The game's ``init`` (bound per game)."""
    raise NotImplementedError


def G_step(*args):
    """The game's ``step`` (bound per game)."""
    raise NotImplementedError


def G_legal(*args):
    """The game's ``legal`` (bound per game)."""
    raise NotImplementedError


def G_active(*args):
    """The game's ``active`` (bound per game)."""
    raise NotImplementedError


def G_is_terminal(*args):
    """The game's ``is_terminal`` (bound per game)."""
    raise NotImplementedError


def G_encode(*args):
    """The game's ``encode`` (bound per game)."""
    raise NotImplementedError


def G_chance_pending(*args):
    """The game's ``chance_pending`` (bound per game)."""
    raise NotImplementedError


def G_chance_outcomes(*args):
    """The game's ``chance_outcomes`` (bound per game)."""
    raise NotImplementedError


def G_apply_chance(*args):
    """The game's ``apply_chance`` (bound per game)."""
    raise NotImplementedError


def G_info_key(*args):
    """The game's ``info_key`` (bound per game)."""
    raise NotImplementedError


def G_settle(*args):
    """The game's ``settle`` (bound per game)."""
    raise NotImplementedError


def G_chance_uniform(*args):
    """The game's ``chance_uniform`` (bound per game)."""
    raise NotImplementedError


def G_legal_list(*args):
    """The game's ``legal_list`` (bound per game)."""
    raise NotImplementedError


def G_tree_copy(*args):
    """The game's ``tree_copy`` (bound per game)."""
    raise NotImplementedError


def G_head_index(*args):
    """The game's ``head_index`` (bound per game)."""
    raise NotImplementedError
