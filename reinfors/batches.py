"""Learner-shaped batch types returned by ``Engine.collect`` (one row per record).

All arrays are NumPy; observations are flattened float32 ``(M, obs_size)``; action-indexed
fields use the encoder's head frame; CSR legal sets are ``ids[offsets[i]:offsets[i+1]]`` with
``offsets`` of length ``M + 1``.  ``TreeStrapBatch``, ``DqnBatch`` and ``AlphaZeroBatch`` also
unpack positionally (the original's tuple form); ``PpoBatch`` is named-access only.

Every engine batch also carries ``weights_generations`` (int64 ``(M,)``, not in 0.4.0, which has
no policy-lag record): per record, the engine's weights generation (the count of
``Engine.weights_updated()`` calls, restored from a snapshot) that the record's decision was
inferred under — for a decision that took several inferences (a tree search), the generation of
its *last* inference.  A row served from the inference cache counts as inferred under the
generation current when it was served (the cache only serves values of the current weights).
It is no part of positional unpacking and no telemetry key.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validate import as_unsigned

__all__ = ["TreeStrapBatch", "DqnBatch", "AlphaZeroBatch", "PpoBatch"]


class _Batch:
    """Named fields (the same array object on every access) plus the sequence protocol."""

    _FIELDS: tuple[str, ...] = ()
    _POSITIONAL: tuple[str, ...] = ()

    def __init__(self, **fields: Any):
        """Internal: the engine builds batches.

        Args:
            **fields: every field of the batch type, by name.

        Raises:
            TypeError: a field is missing.
        """
        missing = set(self._FIELDS) - set(fields)
        if missing:
            raise TypeError(f"{type(self).__name__} missing fields {sorted(missing)}")
        for name in self._FIELDS:
            object.__setattr__(self, "_" + name, fields[name])

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of '{type(self).__name__}' objects is not writable")

    def __len__(self) -> int:
        return len(self._POSITIONAL)

    def __getitem__(self, key, /):
        i = as_unsigned("i", key)
        if i >= len(self._POSITIONAL):
            raise IndexError(f"{type(self).__name__} index out of range")
        return getattr(self, "_" + self._POSITIONAL[i])

    def __iter__(self):
        return iter([getattr(self, "_" + n) for n in self._POSITIONAL])

    def __repr__(self) -> str:
        obs = getattr(self, "_obs", None)
        m = 0 if obs is None else obs.shape[0]
        return f"{type(self).__name__}(records={m})"


def _field(name: str, doc: str, kind: type = np.ndarray) -> property:
    """A read-only field: the same object on every access, typed ``kind`` (``dict`` for telemetry)."""

    def get(self):  # annotated below: the field's type
        return getattr(self, "_" + name)

    get.__annotations__["return"] = kind
    return property(get, doc=doc)


_GEN_DOC = (
    "int64 (M,) weights generation each record's decision was inferred under (a search: its last "
    "inference); not in 0.4.0"
)


class TreeStrapBatch(_Batch):
    """Searched action values from ``Mcts`` / ``Minimax`` / ``SelectiveExpectimax`` + ``TreeStrap``.

    One row per searched node kept as a training record.  Unpacks positionally as
    ``obs, targets, masks, telemetry = batch`` (``len(batch) == 4``).

    Attributes:
        obs (numpy.ndarray): float32 ``(M, obs_size)``: the node's flattened observation.
        players (numpy.ndarray): int64 ``(M,)``: the player whose perspective the targets take.
        targets (numpy.ndarray): float64 ``(M, heads, A)``: the search's value of each action, per
            Q head, in the encoder's head frame (``heads`` is the policy's ``n_heads``).
        masks (numpy.ndarray): float32 ``(M, heads)``: bootstrap membership {0, 1}: whether the record
            trains each head.
        weights_generations (numpy.ndarray): int64 ``(M,)``: the weights generation the record's
            decision was last inferred under (not in 0.4.0; see the module docstring).
        telemetry (dict): the collect window's 22 telemetry keys (the
            [telemetry table][telemetry-table]).
    """

    _FIELDS = ("obs", "players", "weights_generations", "targets", "masks", "telemetry")
    _POSITIONAL = ("obs", "targets", "masks", "telemetry")
    obs = _field("obs", "float32 (M, obs_size)")
    players = _field("players", "int64 (M,) perspective player")
    weights_generations = _field("weights_generations", _GEN_DOC)
    targets = _field("targets", "float64 (M, heads, A) searched action targets")
    masks = _field("masks", "float32 (M, heads) bootstrap membership")
    telemetry = _field("telemetry", "dict of the collect window's telemetry (docs/reference/telemetry.md)", dict)


class DqnBatch(_Batch):
    """n-step transitions from ``EpsilonGreedyQ`` + ``Dqn``.

    One row per decision.  The successor is the mover's *next* decision (other players' moves in
    between are part of the environment).  Unpacks positionally as ``obs, actions, rewards,
    next_obs, dones, masks, telemetry = batch`` (``len(batch) == 7``).  A DQN target is
    ``rewards + discounts * max over next_legal of Q(next_obs)``.

    Attributes:
        obs (numpy.ndarray): float32 ``(M, obs_size)``: the observation the action was chosen from.
        players (numpy.ndarray): int64 ``(M,)``: the acting player.
        actions (numpy.ndarray): int64 ``(M,)``: the action taken, in the encoder's head frame.
        rewards (numpy.ndarray): float64 ``(M,)``: the discounted sum of the mover's rewards over the
            n steps.
        next_obs (numpy.ndarray): float32 ``(M, obs_size)``: the mover's observation n decisions
            later; at an episode's tail, its observation right after its own last action.
        dones (numpy.ndarray): bool ``(M,)``: the episode ended within the n steps (not the
            bootstrap rule: use ``discounts``).
        can_bootstrap (numpy.ndarray): bool ``(M,)``: the successor's legal slice is non-empty.
        discounts (numpy.ndarray): float64 ``(M,)``: ``gamma ** k`` for the bootstrap term, 0 when the
            record cannot bootstrap.
        masks (numpy.ndarray): float32 ``(M, heads)``: bootstrap membership {0, 1} per Q head.
        legal_ids (numpy.ndarray): int64 ``(nnz,)``: CSR ids of each record's legal actions.
        legal_offsets (numpy.ndarray): int64 ``(M + 1,)``: record ``i``'s legal actions are
            ``legal_ids[legal_offsets[i]:legal_offsets[i + 1]]``.
        next_legal_ids (numpy.ndarray): int64: CSR ids of the successor's legal actions (empty slice:
            terminal, or a truncation tail of an alternating game).
        next_legal_offsets (numpy.ndarray): int64 ``(M + 1,)``: CSR offsets of ``next_legal_ids``.
        weights_generations (numpy.ndarray): int64 ``(M,)``: the weights generation the decision was
            inferred under (not in 0.4.0).
        telemetry (dict): the collect window's 22 telemetry keys (the
            [telemetry table][telemetry-table]).
    """

    _FIELDS = (
        "obs",
        "players",
        "weights_generations",
        "actions",
        "rewards",
        "next_obs",
        "dones",
        "can_bootstrap",
        "discounts",
        "masks",
        "legal_ids",
        "legal_offsets",
        "next_legal_ids",
        "next_legal_offsets",
        "telemetry",
    )
    _POSITIONAL = ("obs", "actions", "rewards", "next_obs", "dones", "masks", "telemetry")
    obs = _field("obs", "float32 (M, obs_size)")
    players = _field("players", "int64 (M,)")
    weights_generations = _field("weights_generations", _GEN_DOC)
    actions = _field("actions", "int64 (M,) head-frame action")
    rewards = _field("rewards", "float64 (M,) n-step discounted reward sum")
    next_obs = _field("next_obs", "float32 (M, obs_size)")
    dones = _field("dones", "bool (M,) episode ended (not the bootstrap rule)")
    can_bootstrap = _field("can_bootstrap", "bool (M,) true iff the next legal slice is non-empty")
    discounts = _field("discounts", "float64 (M,) gamma**k, 0 when not bootstrappable")
    masks = _field("masks", "float32 (M, heads) bootstrap membership")
    legal_ids = _field("legal_ids", "int64 CSR ids of current legal actions")
    legal_offsets = _field("legal_offsets", "int64 (M+1,) CSR offsets")
    next_legal_ids = _field("next_legal_ids", "int64 CSR ids of successor legal actions")
    next_legal_offsets = _field("next_legal_offsets", "int64 (M+1,) CSR offsets")
    telemetry = _field("telemetry", "dict of the collect window's telemetry (docs/reference/telemetry.md)", dict)


class AlphaZeroBatch(_Batch):
    """Search targets from ``AlphaZero`` + ``AlphaZero``.

    One row per searched decision (plus value-only rows, below).  Unpacks positionally as
    ``obs, policy_targets, value_targets, policy_weights, telemetry = batch``
    (``len(batch) == 5``).  The usual loss is ``policy_weights * cross_entropy(policy_targets,
    logits) + (value_targets - value) ** 2``.

    Attributes:
        obs (numpy.ndarray): float32 ``(M, obs_size)``: the root's observation, from the record's
            player's perspective.
        players (numpy.ndarray): int64 ``(M,)``: the record's player.
        policy_targets (numpy.ndarray): float64 ``(M, A)``: the root's visit distribution
            (temperature 1) in the encoder's head frame; zero off the legal set.
        value_targets (numpy.ndarray): float64 ``(M,)``: the discounted return the record's player
            realised from this state to the end of the episode.
        policy_weights (numpy.ndarray): float64 ``(M,)``: 1 for a mover's row, 0 for a value-only row
            (other players' perspectives of the same state, with ``sequential_backup="maxn"`` or
            more than two players): weight the policy loss by it.
        legal_ids (numpy.ndarray): int64 ``(nnz,)``: CSR ids of the legal actions (empty slice for
            value-only rows).
        legal_offsets (numpy.ndarray): int64 ``(M + 1,)``: CSR offsets.
        weights_generations (numpy.ndarray): int64 ``(M,)``: the weights generation of the search's
            last inference (not in 0.4.0).
        telemetry (dict): the collect window's 22 telemetry keys (the
            [telemetry table][telemetry-table]).
    """

    _FIELDS = (
        "obs",
        "players",
        "weights_generations",
        "policy_targets",
        "value_targets",
        "policy_weights",
        "legal_ids",
        "legal_offsets",
        "telemetry",
    )
    _POSITIONAL = ("obs", "policy_targets", "value_targets", "policy_weights", "telemetry")
    obs = _field("obs", "float32 (M, obs_size)")
    players = _field("players", "int64 (M,)")
    weights_generations = _field("weights_generations", _GEN_DOC)
    policy_targets = _field("policy_targets", "float64 (M, A) root visit distribution")
    value_targets = _field("value_targets", "float64 (M,) discounted realised return")
    policy_weights = _field("policy_weights", "float64 (M,) 1 = mover row, 0 = value-only row")
    legal_ids = _field("legal_ids", "int64 CSR ids")
    legal_offsets = _field("legal_offsets", "int64 (M+1,) CSR offsets")
    telemetry = _field("telemetry", "dict of the collect window's telemetry (docs/reference/telemetry.md)", dict)


class PpoBatch(_Batch):
    """On-policy decisions from ``Ppo`` + ``Ppo``, with GAE(lambda) advantages.

    One row per decision.  Named access only: ``len()``, indexing and unpacking raise
    ``TypeError`` (as in 0.4.0).  Advantages are computed per player's trajectory under the
    frozen weights of the collect; a window's unfinished segments bootstrap from the critic.

    Attributes:
        obs (numpy.ndarray): float32 ``(M, obs_size)``: the observation the action was sampled from.
        players (numpy.ndarray): int64 ``(M,)``: the acting player.
        actions (numpy.ndarray): int64 ``(M,)``: the sampled action, in the encoder's head frame.
        behavior_log_probs (numpy.ndarray): float64 ``(M,)``: log-probability of the action under the
            softmax of the logits masked to the legal set (the PPO ratio's denominator).
        advantages (numpy.ndarray): float64 ``(M,)``: GAE(lambda) advantage estimates.
        returns (numpy.ndarray): float64 ``(M,)``: ``advantages + values`` (the critic's target).
        values (numpy.ndarray): float64 ``(M,)``: the critic's value at collection time.
        legal_ids (numpy.ndarray): int64 ``(nnz,)``: CSR ids of the legal actions.
        legal_offsets (numpy.ndarray): int64 ``(M + 1,)``: CSR offsets.
        weights_generations (numpy.ndarray): int64 ``(M,)``: the weights generation the decision was
            inferred under (not in 0.4.0).
        telemetry (dict): the collect window's 22 telemetry keys (the
            [telemetry table][telemetry-table]).
    """

    _FIELDS = (
        "obs",
        "players",
        "weights_generations",
        "actions",
        "behavior_log_probs",
        "advantages",
        "returns",
        "values",
        "legal_ids",
        "legal_offsets",
        "telemetry",
    )
    obs = _field("obs", "float32 (M, obs_size)")
    players = _field("players", "int64 (M,)")
    weights_generations = _field("weights_generations", _GEN_DOC)
    actions = _field("actions", "int64 (M,) head-frame action")
    behavior_log_probs = _field("behavior_log_probs", "float64 (M,) masked-softmax log-prob")
    advantages = _field("advantages", "float64 (M,) GAE(lambda)")
    returns = _field("returns", "float64 (M,) advantages + values")
    values = _field("values", "float64 (M,) collection-time critic")
    legal_ids = _field("legal_ids", "int64 CSR ids")
    legal_offsets = _field("legal_offsets", "int64 (M+1,) CSR offsets")
    telemetry = _field("telemetry", "dict of the collect window's telemetry (docs/reference/telemetry.md)", dict)

    def __len__(self):
        raise TypeError("object of type 'PpoBatch' has no len()")

    def __getitem__(self, i):
        raise TypeError("'PpoBatch' object is not subscriptable")

    def __iter__(self):
        raise TypeError("'PpoBatch' object is not iterable")


class DeepCfrBatch(_Batch):
    """Deep CFR training samples from ``rf.solvers.DeepCfr.collect``.

    Advantage samples (the traverser's sampled counterfactual advantages over its legal actions)
    and strategy samples (the other players' regret-matched strategies), each tagged with the CFR
    iteration for linear weighting.  Per-action values are CSR over the legal actions: sample
    ``i``'s actions are ``advantage_legal_ids[advantage_legal_offsets[i]:advantage_legal_offsets[i
    + 1]]`` and its targets the same slice of ``advantage_targets`` (likewise for strategies).
    Named access only; not constructible from Python (as the original).

    Attributes:
        advantage_obs (numpy.ndarray): float32 ``(Na, obs_size)``: the traverser's observations.
        advantage_iterations (numpy.ndarray): int64 ``(Na,)``: the CFR iteration of each sample.
        advantage_legal_offsets (numpy.ndarray): int64 ``(Na + 1,)``: CSR offsets.
        advantage_legal_ids (numpy.ndarray): int64 ``(nnz,)``: legal action ids.
        advantage_targets (numpy.ndarray): float64 ``(nnz,)``: sampled counterfactual advantages.
        strategy_obs (numpy.ndarray): float32 ``(Ns, obs_size)``: the acting players' observations.
        strategy_iterations (numpy.ndarray): int64 ``(Ns,)``: the CFR iteration of each sample.
        strategy_players (numpy.ndarray): int64 ``(Ns,)``: the acting player.
        strategy_legal_offsets (numpy.ndarray): int64 ``(Ns + 1,)``: CSR offsets.
        strategy_legal_ids (numpy.ndarray): int64 ``(nnz,)``: legal action ids.
        strategy_probs (numpy.ndarray): float64 ``(nnz,)``: regret-matched probabilities.
        telemetry (dict): the 10 Deep CFR telemetry keys (the
            [telemetry table][deep-cfr-telemetry-table]).
    """

    _FIELDS = (
        "advantage_obs",
        "advantage_iterations",
        "advantage_legal_offsets",
        "advantage_legal_ids",
        "advantage_targets",
        "strategy_obs",
        "strategy_iterations",
        "strategy_players",
        "strategy_legal_offsets",
        "strategy_legal_ids",
        "strategy_probs",
        "telemetry",
    )
    advantage_obs = _field("advantage_obs", "float32 (Na, obs_size) traverser observations")
    advantage_iterations = _field("advantage_iterations", "int64 (Na,) CFR iteration of each sample")
    advantage_legal_offsets = _field("advantage_legal_offsets", "int64 (Na+1,) CSR offsets")
    advantage_legal_ids = _field("advantage_legal_ids", "int64 (nnz,) legal action ids")
    advantage_targets = _field("advantage_targets", "float64 (nnz,) sampled counterfactual advantages")
    strategy_obs = _field("strategy_obs", "float32 (Ns, obs_size) acting-player observations")
    strategy_iterations = _field("strategy_iterations", "int64 (Ns,) CFR iteration of each sample")
    strategy_players = _field("strategy_players", "int64 (Ns,) acting player")
    strategy_legal_offsets = _field("strategy_legal_offsets", "int64 (Ns+1,) CSR offsets")
    strategy_legal_ids = _field("strategy_legal_ids", "int64 (nnz,) legal action ids")
    strategy_probs = _field("strategy_probs", "float64 (nnz,) regret-matched probabilities")
    telemetry = _field("telemetry", "dict of the 10 Deep CFR telemetry keys", dict)

    def __new__(cls, *args, **kwargs):
        raise TypeError("No constructor defined for DeepCfrBatch")

    def __init__(self, *args, **kwargs):  # reached only through _make
        raise TypeError("No constructor defined for DeepCfrBatch")

    @classmethod
    def _make(cls, **fields) -> DeepCfrBatch:
        obj = object.__new__(cls)
        _Batch.__init__(obj, **fields)
        return obj

    def __len__(self):
        raise TypeError("object of type 'DeepCfrBatch' has no len()")

    def __getitem__(self, i):
        raise TypeError("'DeepCfrBatch' object is not subscriptable")

    def __iter__(self):
        raise TypeError("'DeepCfrBatch' object is not iterable")

    def __repr__(self) -> str:
        na, ns = self._advantage_obs.shape[0], self._strategy_obs.shape[0]
        return f"DeepCfrBatch(advantage_samples={na}, strategy_samples={ns})"


__all__.append("DeepCfrBatch")
