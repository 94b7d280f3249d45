"""``rf.policies`` — policy handles: how a slot chooses its actions.

Each constructor validates its knobs (the original's types, ranges and messages) and returns an
opaque :class:`PolicyHandle`; composition checks (pairing with a learner, suitability for a
game, Engine-time ranges) happen when an ``Engine`` is built.  Model-free policies
(``EpsilonGreedyQ``, ``Ppo``) use exactly one inference round per decision; search policies
(``AlphaZero``, ``GumbelAlphaZero``, ``Mcts``, ``Minimax``, ``SelectiveExpectimax``) pool many
rounds.
"""

from __future__ import annotations

import inspect as _inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ._registry import registry as _registry
from ._validate import (
    _index,
)
from ._validate import (
    as_bool as _as_bool,
)
from ._validate import (
    as_float as _as_float,
)
from ._validate import (
    as_signed as _as_signed,
)
from ._validate import (
    as_unsigned as _as_unsigned,
)
from ._validate import (
    c_long_then_u32 as _c_long_then_u32,
)
from ._validate import (
    nonneg_finite as _nonneg_finite,
)
from ._validate import (
    refuse_pickle as _refuse_pickle,
)
from ._validate import (
    rust_debug as _rust_debug,
)
from ._validate import (
    unit_interval as _unit_interval,
)
from .catalog import POLICIES  # the registered names (0.4.0 exports it here too)
from .chance_modes import ChanceModeHandle
from .env import Env  # choose()'s annotation (rf.Env)
from .noise import NoiseHandle

__all__ = [
    "PolicyHandle",
    "EpsilonGreedyQ",
    "Ppo",
    "AlphaZero",
    "GumbelAlphaZero",
    "Mcts",
    "Minimax",
    "SelectiveExpectimax",
    "make",
    "registered",
    "POLICIES",
]

# Which inference output a policy's callback returns.
_Q_OUTPUT = "q"  # ndarray (rows, n_heads, A)
_PV_OUTPUT = "pv"  # tuple (logits (rows, >= A), values (rows,))

_NOISE_DEFAULT = NoiseHandle.Dirichlet()  # AlphaZero's default root noise (handles are immutable)
_REQUIRED = object()  # marks PolicyHandle.choose's required keyword ``gamma``
_MAX_LEAF_BATCH = 4096  # leaf_batch cap (leaves per tree per inference round; also <= num_simulations in effect)


def _leaf_batch(params: dict, leaf_batch, virtual_loss) -> None:
    """Validate and store the leaf-batching knobs (a reinfors extension; 0.4.0 has neither):
    ``leaf_batch`` an int in [1, 4096], ``virtual_loss`` a finite float >= 0."""
    k = _index("leaf_batch", leaf_batch)
    if k < 1:
        raise ValueError("leaf_batch must be >= 1")
    if k > _MAX_LEAF_BATCH:
        raise ValueError(f"leaf_batch must be <= {_MAX_LEAF_BATCH} (got {k})")
    params["leaf_batch"] = k
    params["virtual_loss"] = _nonneg_finite("virtual_loss", virtual_loss)


def _int_at_least(name: str, value, lo: int, hi: int = (1 << 31) - 1) -> int:
    """An int in ``[lo, hi]`` (GumbelAlphaZero's counts: an extension of 0.4.0, so every range
    error is a ValueError naming the parameter)."""
    v = _index(name, value)
    if v < lo:
        raise ValueError(f"{name} must be >= {lo} (got {v})")
    if v > hi:
        raise ValueError(f"{name} must be <= {hi} (got {v})")
    return v


def _chance(chance, default: str):
    if chance is None:
        return ChanceModeHandle(default) if default != "committed" else ChanceModeHandle("committed", 1)
    if not isinstance(chance, ChanceModeHandle):
        raise TypeError(
            f"argument 'chance': '{type(chance).__name__}' object cannot be converted to 'ChanceModeHandle'"
        )
    return chance


def _choice(label: str, value, options: tuple[str, ...], arg: str | None = None) -> str:
    if not isinstance(value, str):
        raise TypeError(f"argument '{arg or label}': '{type(value).__name__}' object cannot be converted to 'PyString'")
    if value not in options:
        expected = " or ".join(f'"{o}"' for o in options)
        raise ValueError(f"unknown {label} {_rust_debug(value)}; expected {expected}")
    return value


class PolicyHandle:
    """A configured policy (opaque): pass it to ``rf.Engine`` with a compatible learner."""

    __slots__ = ("_name", "_params", "_chance", "_noise")

    def __init__(
        self, name: str, params: dict, chance: ChanceModeHandle | None = None, noise: NoiseHandle | None = None
    ):
        """Internal: build one with the static constructors (:meth:`AlphaZero`, ...) or :func:`make`.

        Args:
            name: the registry name (``"alphazero"``, ``"epsilon_greedy_q"``, ...).
            params: the validated knobs.
            chance: the search's chance mode.
            noise: AlphaZero's root noise.
        """
        self._name = name
        self._params = params
        self._chance = chance
        self._noise = noise

    @property
    def name(self) -> str:
        """The policy's registry name (``"alphazero"``, ``"epsilon_greedy_q"``, ``"mcts"``, ...)."""
        return self._name

    @property
    def output(self) -> str:
        """The inference output this policy needs: ``"q"`` or ``"pv"`` (a (logits, values) tuple)."""
        return _PV_OUTPUT if self._name in ("ppo", "alphazero", "gumbel_alphazero") else _Q_OUTPUT

    @property
    def n_heads(self) -> int:
        """Q heads the callback returns per row (1 unless the policy has ``n_heads``)."""
        return int(self._params.get("n_heads", 1))

    def _config(self) -> dict:
        out = dict(self._params)
        if self._chance is not None:
            out["chance"] = self._chance._config()
        if self._name == "alphazero":
            out["noise"] = None if self._noise is None else self._noise._config()
        if out.get("leaf_batch") == 1:  # unbatched: today's search, today's config and fingerprint
            out.pop("leaf_batch")
            out.pop("virtual_loss", None)
        if self._name == "selective_expectimax" and out.get("opponent") != "distributional":
            out.pop("opp_temperature", None)
            out.pop("opp_floor", None)
        out["name"] = self._name
        return dict(sorted(out.items()))

    def __repr__(self) -> str:
        return f"PolicyHandle({self._name!r})"

    def choose(
        self,
        envs: Sequence[Env],
        infer: Callable[[np.ndarray], Any],
        seed: int = 0,
        plies: Sequence[int] | None = None,
        *,
        gamma: float = _REQUIRED,
    ) -> list[int]:
        """One batched decision per env: ``list[int]`` of game-frame actions, ``[k]`` for ``envs[k]``.

        Every env (same composition, with a reward, running, exactly one active agent) gets one
        search (or one model-free decision) from its current state; the searches are pooled into
        rounds, each round's rows deduplicated by exact bytes and sent to the single shared
        ``infer`` callable in one call.  Stateless and pure (the envs are not mutated, nothing
        persists between calls); reproducible for the same ordered batch, ``seed`` and a
        deterministic ``infer``.  ``plies[k]`` (default ``envs[k].ticks``) is the acting ply for
        temperature schedules; ``gamma`` is the discount the model was trained with.

        Args:
            envs: the positions to decide in (same composition, each with one active agent).
            infer: the network, one shared callable, returning what this policy's callback
                returns in an ``Engine``.
            seed: the seed of the decisions' random streams (noise, sampling).
            plies: the acting ply of each env for temperature schedules; ``None`` is each
                env's ``ticks``.
            gamma: required keyword: the discount the model was trained with.

        Returns:
            One game-frame action per env, in ``envs``' order.

        Raises:
            TypeError: ``gamma`` missing, or an argument of the wrong type.
            ValueError: envs of different compositions, a finished env, or an env with other
                than one active agent; a callback output of the wrong shape.
        """
        if gamma is _REQUIRED:  # the original's (PyO3's) wording, not CPython's "keyword-only"
            raise TypeError("PolicyHandle.choose() missing 1 required keyword argument: 'gamma'")
        from ._runtime.choose import choose

        return choose(self, envs, infer, seed, plies, gamma)

    # -- constructors ---------------------------------------------------------------------------

    @staticmethod
    def EpsilonGreedyQ(n_heads: int = 1, epsilon: float = 0.1) -> PolicyHandle:
        """Greedy over legal Q (one head per episode when ``n_heads > 1``), uniform legal exploration
        with probability ``epsilon``.  Callback output: ``(rows, n_heads, A)``.

        Args:
            n_heads: Q heads (1 to 4096); each episode acts greedily on one drawn head.
            epsilon: the probability of a uniform legal action, in [0, 1].

        Returns:
            The policy handle.

        Raises:
            TypeError: a knob of the wrong type.
            OverflowError: a negative ``n_heads``.
            ValueError: ``epsilon`` outside [0, 1].
        """
        n_heads = _as_unsigned("n_heads", n_heads)
        epsilon = _unit_interval("epsilon", epsilon)
        return PolicyHandle("epsilon_greedy_q", {"n_heads": n_heads, "epsilon": epsilon})

    @staticmethod
    def Ppo() -> PolicyHandle:
        """Stochastic actor: samples the softmax over legal logits; records the behaviour log-prob.
        Callback output: ``(logits (rows, >= A), values (rows,))``.

        Returns:
            The policy handle.
        """
        return PolicyHandle("ppo", {})

    @staticmethod
    def AlphaZero(
        num_simulations: int = 64,
        c_puct: float = 1.5,
        max_depth: int = 64,
        temperature: float = 1.0,
        temperature_drop: int | None = 8,
        chance: ChanceModeHandle | None = None,
        noise: NoiseHandle | None = _NOISE_DEFAULT,
        sequential_backup: str = "auto",
        *,
        leaf_batch: int = 1,
        virtual_loss: float = 1.0,
    ) -> PolicyHandle:
        """PUCT search (decoupled for simultaneous games) with root Dirichlet noise and an acting
        temperature for the first ``temperature_drop`` plies.  Callback output: ``(logits, values)``.

        ``leaf_batch`` (keyword-only, an extension of 0.4.0): leaves selected per tree per inference round, each
        path carrying a ``virtual_loss`` (visits + 1, value - virtual_loss for the mover) until
        its backup; 1 is the unbatched search (docs/leaf-batching.md).

        Args:
            num_simulations: simulations per search (2 to 2**20).
            c_puct: the PUCT exploration constant (finite, >= 0).
            max_depth: the deepest ply a simulation descends.
            temperature: the acting temperature over root visits for the first
                ``temperature_drop`` plies (finite, >= 0; 0 is the most-visited action).
            temperature_drop: the ply from which the policy acts greedily; ``None`` never drops.
            chance: how the search consumes the game's chance (``rf.chance_modes``); ``None`` is
                this policy's default (``AlwaysResample``).
            noise: root exploration noise: ``Dirichlet(epsilon=0.25, alpha=0.3)`` by default
                (0.4.0's signature shows this default as ``Ellipsis``); ``None`` turns it off.
            sequential_backup: ``"auto"`` (negamax at one or two players, MaxN above) or
                ``"maxn"``.
            leaf_batch: keyword-only, not in 0.4.0: leaves selected per tree per inference round,
                1 to 4096; each pending path carries a ``virtual_loss`` until its backup; 1 is the
                unbatched search (docs/leaf-batching.md).
            virtual_loss: keyword-only, not in 0.4.0: the pending-path penalty (finite, >= 0).

        Returns:
            The policy handle.

        Raises:
            TypeError: a knob of the wrong type (e.g. ``noise`` that is not a ``NoiseHandle``).
            OverflowError: a negative count.
            ValueError: a knob out of range, or an unknown ``sequential_backup``.
        """
        params = {
            "num_simulations": _as_unsigned("num_simulations", num_simulations),
            "c_puct": _nonneg_finite("c_puct", c_puct),
            "max_depth": _as_signed("max_depth", max_depth, 32),
            "temperature": _nonneg_finite("temperature", temperature),
            "temperature_drop": None
            if temperature_drop is None
            else _c_long_then_u32("temperature_drop", temperature_drop),
            "sequential_backup": _choice("sequential_backup", sequential_backup, ("auto", "maxn")),
        }
        _leaf_batch(params, leaf_batch, virtual_loss)
        if noise is not None and not isinstance(noise, NoiseHandle):
            raise TypeError(f"argument 'noise': '{type(noise).__name__}' object cannot be converted to 'NoiseHandle'")
        return PolicyHandle("alphazero", params, _chance(chance, "always_resample"), noise)

    @staticmethod
    def GumbelAlphaZero(
        num_simulations: int = 16,
        max_num_considered_actions: int = 16,
        gumbel_scale: float = 1.0,
        c_visit: float = 50.0,
        c_scale: float = 0.1,
        use_mixed_value: bool = True,
        rescale_values: bool = True,
        max_depth: int = 64,
        chance: ChanceModeHandle | None = None,
        sequential_backup: str = "auto",
        *,
        leaf_batch: int = 1,
        virtual_loss: float = 1.0,
    ) -> PolicyHandle:
        """Gumbel AlphaZero (Danihelka et al., ICLR 2022), with mctx's ``gumbel_muzero_policy``
        semantics and parameter names (``qtransform_completed_by_mix_value``'s ``maxvisit_init``
        is ``c_visit`` and its ``value_scale`` is ``c_scale``, as in the paper).  An extension of
        reinfors 0.4.0; pairs with ``rf.learners.AlphaZero``; sequential games only.

        The root is evaluated, then ``num_simulations`` simulations run: at the root the
        Gumbel-top-k of ``min(max_num_considered_actions, legal)`` actions by ``g + logits`` with
        sequential halving over the budget; below it the deterministic rule
        ``argmax pi'(a) - N(a) / (1 + sum N)``, ``pi' = softmax(logits + sigma(completed Q))``,
        ``sigma(q) = (c_visit + max N) * c_scale * q``.  The action is the argmax of
        ``g + logits + sigma(q)`` over the most visited actions; the policy target recorded is
        ``softmax(logits + sigma(completed Q))`` at the root.  Callback output: ``(logits,
        values)``.  docs/gumbel-alphazero.md has the formulas.

        Args:
            num_simulations: Simulations after the root's evaluation (>= 1).
            max_num_considered_actions: Actions sampled at the root (Gumbel-top-k; >= 1).
            gumbel_scale: Scale of the root's Gumbel noise (finite, >= 0; 0 is a deterministic
                search, e.g. for evaluation).
            c_visit: ``maxvisit_init`` of sigma (finite, >= 0).
            c_scale: ``value_scale`` of sigma (finite, >= 0).
            use_mixed_value: Complete unvisited actions' Q by the mixed value (else by the raw
                value of the node).
            rescale_values: Min-max rescale the completed Q to [0, 1] before sigma.
            max_depth: Tree depth cap (as AlphaZero's).
            chance: In-step chance mode (``rf.chance_modes``; default AlwaysResample).
            sequential_backup: ``"auto"`` (negamax at one or two players, maxn above) or
                ``"maxn"``.
            leaf_batch: Leaves selected per tree per inference round under virtual loss (as
                AlphaZero's; 1 = unbatched).
            virtual_loss: The virtual loss of a pending leaf (finite, >= 0).

        Returns:
            The configured policy handle.

        Raises:
            TypeError: A parameter has the wrong type (the message names it).
            ValueError: A parameter is out of range (the message names it).
        """
        params = {
            "num_simulations": _int_at_least("num_simulations", num_simulations, 1),
            "max_num_considered_actions": _int_at_least("max_num_considered_actions", max_num_considered_actions, 1),
            "gumbel_scale": _nonneg_finite("gumbel_scale", gumbel_scale),
            "c_visit": _nonneg_finite("c_visit", c_visit),
            "c_scale": _nonneg_finite("c_scale", c_scale),
            "use_mixed_value": _as_bool("use_mixed_value", use_mixed_value),
            "rescale_values": _as_bool("rescale_values", rescale_values),
            "max_depth": _int_at_least("max_depth", max_depth, 1),
            "sequential_backup": _choice("sequential_backup", sequential_backup, ("auto", "maxn")),
        }
        _leaf_batch(params, leaf_batch, virtual_loss)
        return PolicyHandle("gumbel_alphazero", params, _chance(chance, "always_resample"))

    @staticmethod
    def Mcts(
        num_simulations: int = 64,
        uct_c: float = 2.0,
        max_depth: int = 64,
        act_by: str = "value",
        temperature: float = 0.0,
        temperature_drop: int | None = None,
        chance: ChanceModeHandle | None = None,
        *,
        leaf_batch: int = 1,
        virtual_loss: float = 1.0,
    ) -> PolicyHandle:
        """UCT (decoupled UCT for simultaneous games).  Callback output: Q ``(rows, 1, A)``.

        Args:
            num_simulations: simulations per search (up to 2**20).
            uct_c: the UCT exploration constant (finite, >= 0).
            max_depth: the deepest ply a simulation descends.
            act_by: ``"value"`` (the best mean value) or ``"visits"`` (the most visited).
            temperature: the acting temperature (finite, >= 0; 0 is greedy).
            temperature_drop: the ply from which the policy acts greedily; ``None`` never drops.
            chance: how the search consumes the game's chance (``rf.chance_modes``); ``None`` is
                this policy's default (``AlwaysResample``).
            leaf_batch: keyword-only, not in 0.4.0: leaves selected per tree per inference round,
                1 to 4096; each pending path carries a ``virtual_loss`` until its backup; 1 is the
                unbatched search (docs/leaf-batching.md).
            virtual_loss: keyword-only, not in 0.4.0: the pending-path penalty (finite, >= 0).

        Returns:
            The policy handle.

        Raises:
            TypeError: a knob of the wrong type.
            OverflowError: a negative count.
            ValueError: a knob out of range, or an unknown ``act_by``.
        """
        params = {
            "num_simulations": _as_unsigned("num_simulations", num_simulations),
            "uct_c": _nonneg_finite("uct_c", uct_c),
            "max_depth": _as_signed("max_depth", max_depth, 32),
            "act_by": _choice("act_by", act_by, ("value", "visits")),
            "temperature": _nonneg_finite("temperature", temperature),
            "temperature_drop": None
            if temperature_drop is None
            else _c_long_then_u32("temperature_drop", temperature_drop),
        }
        _leaf_batch(params, leaf_batch, virtual_loss)
        return PolicyHandle("mcts", params, _chance(chance, "always_resample"))

    @staticmethod
    def Minimax(depth: int = 4, top_k: int | None = None, chance: ChanceModeHandle | None = None) -> PolicyHandle:
        """Depth-limited expectiminimax for two-player zero-sum sequential games; frontier leaves
        scored by the callback for the leaf's own mover.  Callback output: Q ``(rows, 1, A)``.

        Args:
            depth: plies of lookahead (>= 1).
            top_k: keep only the ``top_k`` best-scored moves per node; ``None`` keeps all.
            chance: how the search consumes the game's chance (``rf.chance_modes``); ``None`` is
                this policy's default (``ExpandAll``); ``AlwaysResample`` is refused.

        Returns:
            The policy handle.

        Raises:
            TypeError: a knob of the wrong type.
            OverflowError: a negative ``top_k``.
            ValueError: ``depth`` or ``top_k`` below 1, or ``AlwaysResample`` chance.
        """
        depth = _as_signed("depth", depth, 32)
        if depth < 1:
            raise ValueError("minimax needs at least one ply of lookahead (depth >= 1)")
        if top_k is not None:
            top_k = _as_unsigned("top_k", top_k)
            if top_k < 1:
                raise ValueError("top_k must keep at least one move per node")
        mode = _chance(chance, "expand_all")
        if mode.name == "always_resample":
            raise ValueError(
                "Minimax expands each node exactly once and cannot express per-traversal chance modes; "
                "use Committed or ExpandAll"
            )
        return PolicyHandle("minimax", {"depth": depth, "top_k": top_k}, mode)

    @staticmethod
    def SelectiveExpectimax(
        expansion_budget: int = 64,
        top_k: int = 8,
        max_depth: int = 12,
        beta: float = 1.0,
        chance: ChanceModeHandle | None = None,
        n_heads: int = 1,
        epsilon: float = 0.0,
        opponent: str = "uniform",
        opp_temperature: float = 1.0,
        opp_floor: float = 0.0,
    ) -> PolicyHandle:
        """Best-first expectimax over ensemble heads.  Callback output: ``(rows, n_heads, A)``.

        Args:
            expansion_budget: node expansions per search (>= 1, up to 2**20).
            top_k: children kept per expanded node, best first (>= 1).
            max_depth: the deepest ply expanded.
            beta: in [0, 1]; the weight of the heads' disagreement (uncertainty) in the
                best-first order.
            chance: how the search consumes the game's chance (``rf.chance_modes``); ``None`` is
                this policy's default (``Committed(1)``); ``AlwaysResample`` is refused.
            n_heads: Q heads of the ensemble (1 to 4096).
            epsilon: the probability of a uniform legal action, in [0, 1].
            opponent: ``"uniform"`` or ``"distributional"`` (a softmax opponent model).
            opp_temperature: the distributional opponent's temperature (finite, > 0).
            opp_floor: the distributional opponent's probability floor, in [0, 1].

        Returns:
            The policy handle.

        Raises:
            TypeError: a knob of the wrong type.
            OverflowError: a negative count.
            ValueError: a knob out of range, an unknown ``opponent``, or ``AlwaysResample``
                chance.
        """
        params = {
            "expansion_budget": _as_unsigned("expansion_budget", expansion_budget),
            "top_k": _as_unsigned("top_k", top_k),
            "max_depth": _as_signed("max_depth", max_depth, 32),
            "beta": _unit_interval("beta", beta),
            "n_heads": _as_unsigned("n_heads", n_heads),
            "epsilon": _unit_interval("epsilon", epsilon),
        }
        if not isinstance(opponent, str):
            raise TypeError(
                f"argument 'opponent': '{type(opponent).__name__}' object cannot be converted to 'PyString'"
            )
        if opponent not in ("uniform", "distributional"):
            raise ValueError(f"unknown opponent {opponent}")
        params["opponent"] = opponent
        t = _as_float("opp_temperature", opp_temperature, finite=False)
        if not (t > 0.0 and t != float("inf")):
            raise ValueError("opp_temperature must be finite and > 0")
        params["opp_temperature"] = t
        params["opp_floor"] = _unit_interval("opp_floor", opp_floor)
        mode = _chance(chance, "committed")
        if mode.name == "always_resample":
            raise ValueError(
                "SelectiveExpectimax expands each node exactly once (best-first) and cannot express "
                "per-traversal chance modes; use Committed or ExpandAll"
            )
        return PolicyHandle("selective_expectimax", params, mode)


EpsilonGreedyQ = PolicyHandle.EpsilonGreedyQ
Ppo = PolicyHandle.Ppo
AlphaZero = PolicyHandle.AlphaZero
GumbelAlphaZero = PolicyHandle.GumbelAlphaZero
Mcts = PolicyHandle.Mcts
Minimax = PolicyHandle.Minimax
SelectiveExpectimax = PolicyHandle.SelectiveExpectimax

_REGISTRY = {
    "alphazero": AlphaZero,
    "epsilon_greedy_q": EpsilonGreedyQ,
    "gumbel_alphazero": GumbelAlphaZero,
    "mcts": Mcts,
    "minimax": Minimax,
    "ppo": Ppo,
    "selective_expectimax": SelectiveExpectimax,
}


registered, make = _registry("policy", _REGISTRY)

# not picklable, as 0.4.0 (tests/reliability/test_no_pickle.py)
PolicyHandle.__reduce_ex__ = _refuse_pickle

# choose's signature as 0.4.0 shows it: ``gamma`` a required keyword (the sentinel default exists
# only so that a missing gamma raises 0.4.0's own message).
_sig = _inspect.signature(PolicyHandle.choose)
PolicyHandle.choose.__signature__ = _sig.replace(
    parameters=[q.replace(default=q.empty) if q.name == "gamma" else q for q in _sig.parameters.values()]
)
del _sig
