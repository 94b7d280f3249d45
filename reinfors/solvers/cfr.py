"""``rf.solvers.Cfr`` — tabular CFR, CFR+ and external-sampling MCCFR, plus the reusable tree API.

The game tree is enumerated ONCE per game composition into flat NumPy arrays by driving the
game's own njit kernels (``reinfors/jit/solvers/gametree.py``, bound per game like the engine's
generated kernels); every solver pass is then an njit loop over those arrays
(``reinfors/jit/solvers/cfr.py``, ``best_response.py``, ``mccfr.py``).

Reusable API (for Deep CFR and other tabular evaluations)::

    tree = game_tree(game)                      # GameTree, cached per composition
    i = tree.infoset_id(key_bytes)              # dense id or -1
    policy = tree.uniform_policy()              # [n_infosets, A] float64, slot a = a-th legal action
    best_response_values(tree, policy)          # np.ndarray [P]: each player's BR value
    policy_values(tree, policy)                 # np.ndarray [P]: on-policy expected returns
    nash_conv(tree, policy)                     # float: sum_p (BR_p - on-policy_p)

``tree.keys()`` lists every info-state key (bytes, by dense id), ``tree.is_player`` /
``tree.is_nact`` / ``tree.is_actions`` describe them.
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
from typing import Any

import numpy as np

from reinfors._runtime import budget, codegen
from reinfors._validate import as_unsigned, rust_debug
from reinfors.games import GameHandle
from reinfors.jit.solvers import best_response as _br
from reinfors.jit.solvers import cfr as _cfr
from reinfors.jit.solvers import gametree as _gt
from reinfors.jit.solvers import mccfr as _mccfr

__all__ = ["Cfr", "GameTree", "game_tree", "best_response_values", "policy_values", "nash_conv"]

_CATALOGUE = "https://jeepjeepjeep.github.io/reinfors/catalogue/compatibility/"
_VARIANTS = {"vanilla": 0, "plus": 1, "external_mccfr": 2}
_EXACT_GAMES = ("kuhn_poker", "leduc_poker")
_SAMPLED_ONLY = ("texas_holdem",)
_RNG_MIX = 0xC0FFEE005EED5EED  # 0.4.0's MCCFR stream start: seed ^ this constant
_MAX_NODES = 1 << 23
_MAX_DEPTH = 512
_SCHEMA = 1
_PAYLOAD = 1
_MAGIC = b"RFCF"

_G_ROLES = (
    "init",
    "step",
    "legal",
    "active",
    "is_terminal",
    "chance_pending",
    "chance_outcomes",
    "apply_chance",
    "info_key",
    "settle",
    "chance_uniform",
)


# ---------------------------------------------------------------------------------------------
# Tree enumeration: one generated module per game (the gametree template bound to its rules)
# ---------------------------------------------------------------------------------------------

def _tree_module(gdef):
    from reinfors.jit.games import _defaults

    fns = {}
    for role in _G_ROLES:
        fn = getattr(gdef.ns, role, None)
        fns[role] = fn if fn is not None else getattr(_defaults, role)
    # the templates: gametree (walk) + mccfr (mccfr_live), one module per game
    return codegen.instantiate(
        "cfrtree",
        gdef.name,
        (_gt.__file__, _mccfr.__file__),
        fns,
        _G_ROLES,
        key=f"cfrtree|{gdef.name}|{gdef.n_actions}",
        what="CFR tree kernels",
    )


_WALK_ERRORS = {
    _gt.ERR_DEPTH: f"the game tree is deeper than {_MAX_DEPTH}",
    _gt.ERR_NODES: f"the game tree has more than {_MAX_NODES} nodes, too many for exact tables",
    _gt.ERR_SIMULTANEOUS: "a decision node does not have exactly one acting player",
    _gt.ERR_NO_LEGAL: "a decision node has no legal action",
    _gt.ERR_KEY: "an information-state key is longer than the game's max_info_key",
    _gt.ERR_INCONSISTENT: "one information-state key names states with different players or legal actions",
    _gt.ERR_CHANCE: "a chance node has no outcome with positive probability",
}


def tree_bytes(nn: int, ne: int, nt: int, nd: int, P: int, A: int, max_key: int, cap: int) -> int:
    """Bytes of a :class:`GameTree`'s arrays for ``nn`` nodes, ``ne`` edges, ``nt`` terminals and
    ``nd`` information states (``P`` players, ``A`` actions, keys of ``max_key`` bytes, a lookup
    table of ``cap`` slots), with the sorting temporaries of its construction; saturated."""
    nb = budget.nbytes
    return budget.total(
        nb(nn, itemsize=1 + 6 * 4 + 2 * 8),  # kind .. term_id, by_depth and its argsort
        nb(max(ne, 1), itemsize=4 + 8 + 4),  # edge_child, edge_prob, edge_action
        nb(max(nt, 1), P, itemsize=8),  # util
        nb(max(nd, 1), itemsize=3 * 4 + 2 * 8 + 4 * A + 3 * max_key),  # per-infoset arrays, key order
        nb(cap, itemsize=8),  # table
    )


class TreeTooLarge(ValueError):
    """The game tree exceeds the exact-table node cap."""


class GameTree:
    """The full game tree of one composition in flat arrays (see ``reinfors/jit/solvers/gametree.py``).

    Attributes: ``n_players``, ``n_actions``, ``n_nodes``, ``n_infosets`` and the arrays
    ``kind, player, infoset, first_edge, n_edges, depth, term_id, edge_child, edge_prob,
    edge_action, util, is_player, is_nact, is_actions, key_data, key_len, table, by_depth,
    depth_start``.

    Args:
        gdef: the game's definition (``game._def``; use :func:`game_tree` for a handle).

    Raises:
        TreeTooLarge: the tree exceeds the exact-table node cap.
        ValueError: the game is malformed for a tree (e.g. a chance node with no outcome).
    """

    def __init__(self, gdef: Any):
        self.name = gdef.name
        self.n_players = P = gdef.n_players
        self.n_actions = A = gdef.n_actions
        mod = _tree_module(gdef)
        weights = np.asarray(gdef.reward_defaults, np.float64)
        horizon = int(gdef.horizon)
        max_key = max(int(gdef.max_info_key), 1)
        nk = len(weights)
        i32 = np.zeros(1, np.int32)
        args = dict(
            params=gdef.params,
            horizon=horizon,
            weights=weights,
            n_players=P,
            n_actions=A,
            max_chance=int(gdef.max_chance),
            max_key=max_key,
            max_depth=_MAX_DEPTH,
            max_nodes=_MAX_NODES,
        )
        dummy = (
            np.zeros(1, np.int8),
            i32,
            i32,
            i32,
            i32,
            i32,
            i32,
            i32,
            np.zeros(1, np.float64),
            i32,
            np.zeros((1, P), np.float64),
            i32,
            i32,
            np.zeros((1, A), np.int32),
            np.zeros((1, max_key), np.uint8),
            i32,
            np.full(1, -1, np.int64),
        )
        nn, ne, nt, nd, _, err = mod.walk(*args.values(), False, *dummy, gdef.state_size, nk)
        if err == _gt.ERR_NODES:
            raise TreeTooLarge(f"this game's tree cannot be tabulated for CFR: {_WALK_ERRORS[int(err)]}")
        if err:
            raise ValueError(f"this game's tree cannot be tabulated for CFR: {_WALK_ERRORS[int(err)]}")
        cap = 1
        while cap < 2 * max(nd, 1):
            cap *= 2
        # the arrays below (and the tables Cfr builds over them), bounded before they are allocated
        budget.require(
            tree_bytes(nn, ne, nt, nd, P, A, max_key, cap), "game",
            f"the CFR game tree of {gdef.name} ({nn} nodes, {nd} information states)",
            "use a smaller game (fewer players)",
        )  # fmt: skip
        self.kind = np.zeros(nn, np.int8)
        self.player = np.zeros(nn, np.int32)
        self.infoset = np.zeros(nn, np.int32)
        self.first_edge = np.zeros(nn, np.int32)
        self.n_edges = np.zeros(nn, np.int32)
        self.depth = np.zeros(nn, np.int32)
        self.term_id = np.zeros(nn, np.int32)
        self.edge_child = np.zeros(max(ne, 1), np.int32)
        self.edge_prob = np.zeros(max(ne, 1), np.float64)
        self.edge_action = np.zeros(max(ne, 1), np.int32)
        self.util = np.zeros((max(nt, 1), P), np.float64)
        is_player = np.zeros(max(nd, 1), np.int32)
        is_nact = np.zeros(max(nd, 1), np.int32)
        is_actions = np.full((max(nd, 1), A), -1, np.int32)
        key_data = np.zeros((max(nd, 1), max_key), np.uint8)
        key_len = np.zeros(max(nd, 1), np.int32)
        table = np.full(cap, -1, np.int64)
        nn2, ne2, nt2, ni, deepest, err = mod.walk(
            *args.values(),
            True,
            self.kind,
            self.player,
            self.infoset,
            self.first_edge,
            self.n_edges,
            self.depth,
            self.term_id,
            self.edge_child,
            self.edge_prob,
            self.edge_action,
            self.util,
            is_player,
            is_nact,
            is_actions,
            key_data,
            key_len,
            table,
            gdef.state_size,
            nk,
        )
        if err:
            raise ValueError(f"this game's tree cannot be tabulated for CFR: {_WALK_ERRORS[int(err)]}")
        assert (nn2, ne2, nt2) == (nn, ne, nt)
        self.n_nodes = int(nn)
        self.n_infosets = ni = int(ni)
        self.max_depth = int(deepest)
        self.is_player = is_player[:ni].copy()
        self.is_nact = is_nact[:ni].copy()
        self.is_actions = is_actions[:ni].copy()
        self.key_data = key_data[:ni].copy()
        self.key_len = key_len[:ni].copy()
        self.table = table
        self.by_depth = np.argsort(self.depth, kind="stable").astype(np.int64)
        levels = int(self.depth.max()) + 1 if nn else 1
        self.depth_start = np.searchsorted(self.depth[self.by_depth], np.arange(levels + 1)).astype(np.int64)
        dec = self.kind == 2
        lo = np.full(max(ni, 1), np.iinfo(np.int32).max, np.int64)
        hi = np.full(max(ni, 1), -1, np.int64)
        np.minimum.at(lo, self.infoset[dec], self.depth[dec])
        np.maximum.at(hi, self.infoset[dec], self.depth[dec])
        # best responses resolve info states level by level (see best_response.py)
        self.levels_consistent = bool(np.all(lo[:ni] == hi[:ni]))
        # the info states in the original's save order: key bytes, lexicographic
        padded = np.where(np.arange(max_key)[None, :] < self.key_len[:, None], self.key_data.astype(np.int16), -1)
        self.key_order = np.lexsort(padded.T[::-1]) if ni else np.zeros(0, np.int64)
        for a in self.__dict__.values():
            if isinstance(a, np.ndarray):
                a.setflags(write=False)

    def infoset_id(self, key: bytes) -> int:
        """The dense id of an info state.

        Args:
            key: the info-state key (``Env.information_state_key``).

        Returns:
            The id, or -1 for an unknown key.
        """
        k = np.frombuffer(bytes(key), np.uint8)
        if k.size > self.key_data.shape[1]:
            return -1
        if self.n_infosets == 0:
            return -1
        slot = _gt.key_find(self.table, self.key_data, self.key_len, np.ascontiguousarray(k), k.size)
        return int(self.table[slot])

    def keys(self) -> list[bytes]:
        """Every info-state key.

        Returns:
            The keys, by dense id.
        """
        return [bytes(self.key_data[i, : self.key_len[i]]) for i in range(self.n_infosets)]

    def uniform_policy(self) -> np.ndarray:
        """The uniform policy.

        Returns:
            ``[n_infosets, A] float64``: uniform over each info state's legal slots.
        """
        pol = np.zeros((self.n_infosets, self.n_actions), np.float64)
        _cfr.average_policy(pol, self.is_nact, pol)
        return pol


_trees: dict = {}
_trees_lock = threading.Lock()


def game_tree(game: GameHandle) -> GameTree:
    """The :class:`GameTree` of a game handle (built once per composition, then cached).

    Args:
        game: a sequential game handle (Kuhn, Leduc, ...).

    Returns:
        The tree.

    Raises:
        TreeTooLarge: the tree exceeds the exact-table node cap.
    """
    gdef = game._def
    key = (gdef.name, gdef.params.tobytes(), gdef.reward_defaults, id(gdef.ns))
    with _trees_lock:
        tree = _trees.get(key)
        if tree is None:
            try:
                tree = GameTree(gdef)
            except TreeTooLarge as e:
                tree = e
            _trees[key] = tree
        if isinstance(tree, Exception):
            raise TreeTooLarge(str(tree))
        return tree


def _check_policy(tree: GameTree, policy) -> np.ndarray:
    pol = np.ascontiguousarray(policy, dtype=np.float64)
    if pol.shape != (tree.n_infosets, tree.n_actions):
        raise ValueError(f"policy must have shape {(tree.n_infosets, tree.n_actions)}, got {pol.shape}")
    return pol


def best_response_values(tree: GameTree, policy: np.ndarray) -> np.ndarray:
    """Each player's best-response value against ``policy``.

    Args:
        tree: the game tree.
        policy: ``[n_infosets, A]`` probabilities; slot ``a`` is the ``a``-th legal action of
            the info state.

    Returns:
        ``[P] float64``: each player's best-response value.

    Raises:
        ValueError: a policy of the wrong shape, or a tree whose info states span levels.
    """
    if not tree.levels_consistent:
        raise ValueError("best responses need every information state's nodes on one tree level")
    pol = _check_policy(tree, policy)
    out = np.zeros(tree.n_players, np.float64)
    t = tree
    _br.best_response_values(
        t.kind, t.player, t.infoset, t.first_edge, t.n_edges, t.term_id, t.edge_child, t.edge_prob, t.util,
        t.by_depth, t.depth_start, pol, t.n_players, out,
    )  # fmt: skip
    return out


def policy_values(tree: GameTree, policy: np.ndarray) -> np.ndarray:
    """Every player's expected return when all play ``policy``.

    Args:
        tree: the game tree.
        policy: ``[n_infosets, A]`` probabilities over each info state's legal slots.

    Returns:
        ``[P] float64``: each player's expected return.
    """
    pol = _check_policy(tree, policy)
    budget.require(budget.nbytes(tree.n_nodes, tree.n_players, itemsize=8), "game",
                   f"the per-node values of a {tree.n_nodes}-node game tree", "use a smaller game")  # fmt: skip
    value = np.zeros((tree.n_nodes, tree.n_players), np.float64)
    t = tree
    _br.policy_values(t.kind, t.infoset, t.first_edge, t.n_edges, t.term_id, t.edge_child, t.edge_prob, t.util, pol, value)
    return value[0].copy()


def nash_conv(tree: GameTree, policy: np.ndarray) -> float:
    """OpenSpiel's NashConv of ``policy``: the sum over players of BR value minus on-policy value.

    Args:
        tree: the game tree.
        policy: ``[n_infosets, A]`` probabilities over each info state's legal slots.

    Returns:
        The NashConv (0 at a Nash equilibrium).
    """
    br = best_response_values(tree, policy)
    on = policy_values(tree, policy)
    return float(np.sum(br - on))


# ---------------------------------------------------------------------------------------------
# Cfr
# ---------------------------------------------------------------------------------------------


def _fingerprint(gdef, variant: str) -> str:
    desc = {
        "game": gdef.name,
        "params": [int(x) for x in gdef.params],
        "reward": dict(zip(gdef.reward_keys, gdef.reward_defaults, strict=False)),
        "solver": {"name": "cfr", "variant": variant},
    }
    return hashlib.sha256(json.dumps(desc, sort_keys=True).encode()).hexdigest()


class Cfr:
    """Tabular counterfactual regret minimisation on Kuhn (2-10 players) and Leduc poker.

    ``variant``: ``"vanilla"`` (CFR), ``"plus"`` (CFR+: regret floor, linear averaging) — both
    with alternating updates, as OpenSpiel's ``CFRSolver`` / ``CFRPlusSolver`` — or
    ``"external_mccfr"`` (external-sampling Monte-Carlo CFR, one traversal per player per
    iteration, seeded by ``seed``).

    Args:
        game: Kuhn poker (2-10 players), Leduc poker, or Texas Hold'em (``external_mccfr``
            only).
        variant: ``"vanilla"``, ``"plus"`` or ``"external_mccfr"``.
        seed: the sampling seed (``external_mccfr``).

    Raises:
        TypeError: ``game`` is not a ``GameHandle`` or ``variant`` not a str.
        OverflowError: a negative ``seed``.
        ValueError: an unknown variant, a game CFR does not support, or an exact variant on a
            game only sampling supports.
    """

    __slots__ = (
        "_game", "_gdef", "_variant", "_vcode", "_seed", "_rng", "_iterations", "_tree", "_regret",
        "_cum", "_cur", "_seen", "_reach", "_value", "_fp", "_live", "_lt", "_ln",
    )  # fmt: skip

    def __init__(self, game: GameHandle, variant: str = "plus", seed: int = 0):
        if not isinstance(game, GameHandle):
            raise TypeError(f"argument 'game': '{type(game).__name__}' object cannot be converted to 'GameHandle'")
        if not isinstance(variant, str):
            raise TypeError(f"argument 'variant': '{type(variant).__name__}' object cannot be converted to 'PyString'")
        seed = as_unsigned("seed", seed)
        if variant not in _VARIANTS:
            raise ValueError(f'unknown CFR variant {rust_debug(variant)}: expected "vanilla", "plus", or "external_mccfr"')
        gdef = game._def
        if gdef.simultaneous or not gdef.has_info_key:
            raise ValueError(f"this game is not compatible with CFR; see {_CATALOGUE}")
        if gdef.name in _SAMPLED_ONLY and variant != "external_mccfr":
            raise ValueError(
                "this game's chance fan is not supported by an exact CFR variant; "
                f'use variant="external_mccfr" or see {_CATALOGUE}'
            )
        self._game = game
        self._gdef = gdef
        self._variant = variant
        self._vcode = _VARIANTS[variant]
        self._seed = seed
        self._rng = np.array([seed ^ _RNG_MIX], np.uint64)
        self._iterations = 0
        self._tree = None
        self._fp = _fingerprint(gdef, variant)
        # Hold'em: no tree in arrays; the MCCFR traversal steps the game and grows its table
        self._live = gdef.name in _SAMPLED_ONLY
        self._lt = None
        self._ln = 0

    # -- lazily built tables --------------------------------------------------------------------

    def _ensure(self) -> GameTree:
        if self._live:
            raise ValueError(
                "exact evaluation (exploitability, nash_conv, best_response_values, expected_value) needs this "
                f"game's full tree, which is too large to enumerate; see {_CATALOGUE}"
            )
        if self._tree is None:
            tree = game_tree(self._game)
            shape = (tree.n_infosets, tree.n_actions)
            budget.require(
                budget.nbytes(tree.n_infosets, itemsize=3 * 8 * tree.n_actions + 1), "game",
                f"the CFR tables of {tree.n_infosets} information states x {tree.n_actions} actions",
                "use a smaller game (fewer players)",
            )  # fmt: skip
            self._regret = np.zeros(shape, np.float64)
            self._cum = np.zeros(shape, np.float64)
            self._cur = np.zeros(shape, np.float64)
            _cfr.regret_matching(self._regret, tree.is_nact, self._cur)
            self._seen = np.zeros(tree.n_infosets, np.uint8)
            self._reach = None
            self._value = None
            self._tree = tree
        return self._tree

    def _live_row_bytes(self) -> int:
        """Bytes per row of the growing tables (``_live_tables``; the lookup table's two slots)."""
        g = self._gdef
        return 3 * 8 * g.n_actions + max(int(g.max_info_key), 1) + 4 + 4 + 4 * g.n_actions + 2 * 8

    def _live_tables(self, rows: int = 1024):
        """Empty growing tables ``(regret, cum, cur, key_data, key_len, is_nact, is_actions, table)``."""
        g = self._gdef
        a, k = g.n_actions, max(int(g.max_info_key), 1)
        return (
            np.zeros((rows, a), np.float64),
            np.zeros((rows, a), np.float64),
            np.zeros((rows, a), np.float64),
            np.zeros((rows, k), np.uint8),
            np.zeros(rows, np.int32),
            np.zeros(rows, np.int32),
            np.full((rows, a), -1, np.int32),
            np.full(2 * rows, -1, np.int64),
        )

    def _iterate_live(self, n: int, total: int | None = None) -> None:
        if self._lt is None:
            self._lt = self._live_tables()
        g = self._gdef
        mod = _tree_module(g)
        # the kernel quadruples its tables as info states arrive: bounded, before it runs, by the
        # rows the memory still available holds (a growth past them stops with code 4)
        row = self._live_row_bytes()
        max_rows = min(budget.rows_that_fit(row), 1 << 40)
        out = mod.mccfr_live(
            g.params, int(g.horizon), np.asarray(g.reward_defaults, np.float64), g.n_players, g.n_actions,
            int(g.max_chance), g.state_size, len(g.reward_defaults), _MAX_DEPTH, *self._lt, self._ln, self._rng, n,
            max_rows,
        )  # fmt: skip
        self._lt, self._ln, err = tuple(out[:8]), int(out[8]), int(out[9])
        if err == 4:
            rows = 4 * self._lt[0].shape[0]
            raise MemoryError(
                f"external MCCFR's tables of {self._ln} information states cannot grow to {rows} rows "
                f"({budget.nbytes(rows, itemsize=row)} bytes, driven by n={total or n} iterations): more than the memory "
                f"available to this process ({max_rows * row} bytes); the iteration in progress stopped part-way "
                "(its regrets are partly updated); save() what was learned, or iterate fewer times"
            )
        if err:
            raise RuntimeError(f"external MCCFR traversal failed (code {err}): the game breaks the CFR contract")

    # -- public surface -------------------------------------------------------------------------

    @property
    def iterations(self) -> int:
        """Completed iterations."""
        return self._iterations

    @property
    def num_infosets(self) -> int:
        """Information states in the table (the ones an iteration has visited)."""
        if self._live:
            return self._ln
        if self._tree is None:
            return 0
        return int(np.count_nonzero(self._seen))

    @property
    def num_players(self) -> int:
        """The game's player count."""
        return self._gdef.n_players

    def iterate(self, n: int) -> None:
        """Run ``n`` iterations (each updates every player once).

        Args:
            n: iterations to run (0 does nothing).

        Raises:
            TypeError: ``n`` is not an int.
            OverflowError: a negative ``n``.
        """
        n = as_unsigned("n", n)
        if n == 0:
            return
        if self._vcode == 2 and not self._live and self._tree is None:
            try:
                self._ensure()
            except TreeTooLarge:  # Kuhn with 7+ players: sample by stepping the game instead
                self._live = True
        if self._live:
            total = n
            while n > 0:
                k = min(n, 1 << 16)
                self._iterate_live(k, total)
                self._iterations += k
                n -= k
            return
        t = self._ensure()
        chunk = 1 << 20
        while n > 0:
            k = min(n, chunk)
            if self._vcode == 2:
                _mccfr.mccfr_iterations(
                    t.kind, t.player, t.infoset, t.first_edge, t.n_edges, t.term_id, t.edge_child, t.edge_prob,
                    t.util, t.is_nact, self._regret, self._cum, self._cur, self._seen, self._rng, t.n_players,
                    t.max_depth + 1, k,
                )  # fmt: skip
            else:
                if self._reach is None:
                    budget.require(
                        budget.nbytes(t.n_nodes, itemsize=8 * (t.n_players + 2)), "game",
                        f"the per-node reach and value arrays of a {t.n_nodes}-node CFR tree",
                        'use a smaller game or variant="external_mccfr"',
                    )  # fmt: skip
                    self._reach = np.zeros((t.n_nodes, t.n_players + 1), np.float64)
                    self._value = np.zeros(t.n_nodes, np.float64)
                _cfr.cfr_iterations(
                    t.kind, t.player, t.infoset, t.first_edge, t.n_edges, t.term_id, t.edge_child, t.edge_prob,
                    t.util, t.is_nact, self._regret, self._cum, self._cur, self._reach, self._value, t.n_players,
                    float(self._iterations), k, self._vcode == 1,
                )  # fmt: skip
                self._seen[:] = 1
            self._iterations += k
            n -= k

    def _average(self) -> np.ndarray:
        t = self._ensure()
        pol = np.zeros_like(self._cum)
        _cfr.average_policy(self._cum, t.is_nact, pol)
        return pol

    def best_response_values(self) -> list[float]:
        """Each player's best-response value against the average strategy.

        Returns:
            One value per player.
        """
        return [float(v) for v in best_response_values(self._ensure(), self._average())]

    def nash_conv(self) -> float:
        """Sum over players of (best-response value - on-policy value) of the average strategy.

        Returns:
            The NashConv (0 at a Nash equilibrium).
        """
        return nash_conv(self._ensure(), self._average())

    def exploitability(self) -> float:
        """The average strategy's exploitability.

        Returns:
            ``nash_conv() / num_players``.
        """
        return self.nash_conv() / self._gdef.n_players

    def expected_value(self, player: int) -> float:
        """``player``'s expected return when everyone plays the average strategy.

        Args:
            player: a player of the game.

        Returns:
            The expected return.

        Raises:
            TypeError: ``player`` is not an int.
            OverflowError: a negative ``player``.
            ValueError: ``player`` is not a player of the game.
        """
        player = as_unsigned("player", player)
        if player >= self._gdef.n_players:
            raise ValueError(f"player must be below {self._gdef.n_players}")
        return float(policy_values(self._ensure(), self._average())[player])

    def average_strategy(self, key: bytes) -> tuple[list[int], list[float]] | None:
        """The average strategy at one info state.

        Args:
            key: the info-state key (``Env.information_state_key``).

        Returns:
            ``(legal actions, probabilities)``, or None for an info state no iteration visited.

        Raises:
            TypeError: ``key`` is not bytes.
        """
        if not isinstance(key, bytes):
            raise TypeError(f"argument 'key': '{type(key).__name__}' object cannot be converted to 'PyBytes'")
        if self._live:
            if self._lt is None or len(key) > self._lt[3].shape[1]:
                return None
            regret, cum, cur, key_data, key_len, is_nact, is_actions, table = self._lt
            i = int(table[_gt.key_find(table, key_data, key_len, np.frombuffer(key, np.uint8).copy(), len(key))])
            if i < 0:
                return None
        else:
            if self._tree is None:
                return None
            t = self._tree
            i = t.infoset_id(key)
            if i < 0 or not self._seen[i]:
                return None
            cum, is_nact, is_actions = self._cum, t.is_nact, t.is_actions
        na = int(is_nact[i])
        row = cum[i, :na]
        total = 0.0
        for v in row.tolist():  # sequential sum (at most A terms), as the kernels
            total += v
        probs = [1.0 / na] * na if total == 0.0 else [float(v) / total for v in row]
        return [int(a) for a in is_actions[i, :na]], probs

    # -- snapshots ------------------------------------------------------------------------------

    def save(self) -> bytes:
        """The solver state as bytes (the original's ``RFCF`` layout; no pickle).

        Returns:
            The payload; :meth:`load` restores it.
        """
        head = bytearray(_MAGIC)
        head += bytes([_SCHEMA])
        head += self._fp.encode()
        head += bytes([_PAYLOAD, self._vcode])
        head += struct.pack("<IQQ", self._gdef.n_actions, int(self._rng[0]), self._iterations)
        if self._live:
            if self._lt is None or self._ln == 0:
                return bytes(head) + struct.pack("<Q", 0)
            regret, cum, cur, key_data, key_len, is_nact, is_actions, _ = self._lt
            n = self._ln
            kd, kl = key_data[:n], key_len[:n]
            padded = np.where(np.arange(kd.shape[1])[None, :] < kl[:, None], kd.astype(np.int16), -1)
            order = np.lexsort(padded.T[::-1]).astype(np.int64)
        elif self._tree is None:
            return bytes(head) + struct.pack("<Q", 0)
        else:
            t = self._tree
            regret, cum, cur, key_data, key_len, is_nact, is_actions = (
                self._regret, self._cum, self._cur, t.key_data, t.key_len, t.is_nact, t.is_actions
            )
            order = t.key_order[self._seen[t.key_order] != 0].astype(np.int64)
        size = _cfr.packed_size(order, key_len, is_nact)
        buf = np.zeros(size, np.uint8)
        _cfr.pack_entries(order, key_data, key_len, is_nact, is_actions, regret, cum, cur, buf)
        return bytes(head) + struct.pack("<Q", order.size) + buf.tobytes()

    def load(self, bytes: bytes) -> None:  # noqa: A002  (the original's parameter name)
        """Restore a :meth:`save` payload of this composition (the continuation is bit-identical).

        Args:
            bytes: a :meth:`save` payload.

        Raises:
            TypeError: the payload is not bytes.
            ValueError: not a CFR payload, another schema, another composition, or a corrupted
                or truncated payload.
        """
        data = bytes
        if not isinstance(data, type(b"")):  # noqa: UP003 (the argument is named bytes)
            raise TypeError(f"argument 'bytes': '{type(data).__name__}' object cannot be converted to 'PyBytes'")
        if len(data) < 5 or data[:4] != _MAGIC:
            raise ValueError("not a CFR snapshot payload")
        if data[4] != _SCHEMA:
            raise ValueError("unknown CFR snapshot schema version")
        if len(data) < 69:
            raise ValueError("truncated CFR payload")
        try:
            fp = data[5:69].decode("ascii")
        except UnicodeDecodeError:
            raise ValueError("not a CFR snapshot payload") from None
        if fp != self._fp:
            raise ValueError(
                "this snapshot was saved from a different composition (game parameters, reward, or CFR variant)"
            )
        if len(data) < 99:
            raise ValueError("truncated CFR payload")
        if data[69] != _PAYLOAD:
            raise ValueError("unknown CFR payload version")
        if data[70] != self._vcode:
            raise ValueError("payload was saved by a different CFR variant")
        n_actions, rng, iterations, count = struct.unpack_from("<IQQQ", data, 71)
        if n_actions != self._gdef.n_actions:
            raise ValueError("payload was saved for a different action space")
        body = np.frombuffer(data, np.uint8, offset=99)
        if count > body.size // 8:
            raise ValueError("implausible node count")
        if self._live:
            rows = 1024
            while rows < 2 * (count + 1):
                rows *= 2
            budget.require(
                budget.nbytes(rows, itemsize=self._live_row_bytes()), "bytes",
                f"the MCCFR tables of a payload of {count} information states ({rows} rows)",
                "load it in a process with more memory",
            )  # fmt: skip
            lt = self._live_tables(rows)
            regret, cum, cur, key_data, key_len, is_nact, is_actions, table = lt
            max_key = key_data.shape[1]
            err = _cfr.unpack_insert(
                body, count, self._gdef.n_actions, max_key, key_data, key_len, is_nact, is_actions, regret, cum, cur
            )
            if err:
                raise ValueError(_UNPACK_ERRORS[int(err)])
            if _cfr.insert_keys(table, key_data, key_len, count) >= 0:
                raise ValueError(_UNPACK_ERRORS[_cfr.UNPACK_DUPLICATE])
            self._lt, self._ln = lt, int(count)
            self._rng[0] = rng
            self._iterations = int(iterations)
            return
        t = self._ensure()
        regret = np.zeros_like(self._regret)
        cum = np.zeros_like(self._cum)
        cur = np.zeros_like(self._cur)
        _cfr.regret_matching(regret, t.is_nact, cur)
        seen = np.zeros_like(self._seen)
        err = _cfr.unpack_entries(
            body, count, t.n_actions, t.table, t.key_data, t.key_len, t.is_nact, t.is_actions, regret, cum, cur, seen
        )
        if err:
            raise ValueError(_UNPACK_ERRORS[int(err)])
        self._regret, self._cum, self._cur, self._seen = regret, cum, cur, seen
        self._rng[0] = rng
        self._iterations = int(iterations)

    def __reduce__(self):
        # no pickle (house rule, and the original refuses too); save() / load() are the format
        raise TypeError("cannot pickle 'builtins.Cfr' object")

    def __repr__(self) -> str:
        return f"<reinfors.solvers.Cfr variant={self._variant!r} iterations={self._iterations}>"


_UNPACK_ERRORS = {
    _cfr.UNPACK_TRUNCATED: "truncated CFR payload",
    _cfr.UNPACK_TRAILING: "trailing bytes in CFR payload",
    _cfr.UNPACK_ACTIONS: "implausible action count",
    _cfr.UNPACK_UNKNOWN: "payload names an information state this game does not have",
    _cfr.UNPACK_MISMATCH: "payload's legal actions disagree with this game's",
    _cfr.UNPACK_DUPLICATE: "payload lists an information state twice",
}
