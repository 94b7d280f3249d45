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

from ._validate import as_unsigned

__all__ = ["TreeStrapBatch", "DqnBatch", "AlphaZeroBatch", "PpoBatch"]


class _Batch:
    """Named fields (the same array object on every access) plus the sequence protocol."""

    _FIELDS: tuple[str, ...] = ()
    _POSITIONAL: tuple[str, ...] = ()

    def __init__(self, **fields: Any):
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


def _field(name: str, doc: str):
    return property(lambda self: getattr(self, "_" + name), doc=doc)


_GEN_DOC = (
    "int64 (M,) weights generation each record's decision was inferred under (a search: its last "
    "inference); not in 0.4.0"
)


class TreeStrapBatch(_Batch):
    """``obs, targets, masks, telemetry = batch``; also ``players``."""

    _FIELDS = ("obs", "players", "weights_generations", "targets", "masks", "telemetry")
    _POSITIONAL = ("obs", "targets", "masks", "telemetry")
    obs = _field("obs", "float32 (M, obs_size)")
    players = _field("players", "int64 (M,) perspective player")
    weights_generations = _field("weights_generations", _GEN_DOC)
    targets = _field("targets", "float64 (M, heads, A) searched action targets")
    masks = _field("masks", "float32 (M, heads) bootstrap membership")
    telemetry = _field("telemetry", "dict of collection telemetry")


class DqnBatch(_Batch):
    """``obs, actions, rewards, next_obs, dones, masks, telemetry = batch``; plus ``players``,
    ``can_bootstrap``, ``discounts`` and the legal CSR fields."""

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
    telemetry = _field("telemetry", "dict of collection telemetry")


class AlphaZeroBatch(_Batch):
    """``obs, policy_targets, value_targets, policy_weights, telemetry = batch``; plus
    ``players`` and the legal CSR fields."""

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
    telemetry = _field("telemetry", "dict of collection telemetry")


class PpoBatch(_Batch):
    """Named access only: ``obs, players, actions, behavior_log_probs, advantages, returns,
    values, legal_ids, legal_offsets, telemetry``."""

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
    telemetry = _field("telemetry", "dict of collection telemetry")

    def __len__(self):
        raise TypeError("object of type 'PpoBatch' has no len()")

    def __getitem__(self, i):
        raise TypeError("'PpoBatch' object is not subscriptable")

    def __iter__(self):
        raise TypeError("'PpoBatch' object is not iterable")


class DeepCfrBatch(_Batch):
    """Named access only (from ``rf.solvers.DeepCfr.collect``): advantage samples (the
    traverser's sampled counterfactual advantages over its legal actions, CSR) and strategy
    samples (the other players' regret-matched strategies, CSR), each tagged with the CFR
    iteration, plus ``telemetry``.  Not constructible from Python (as the original)."""

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
    telemetry = _field("telemetry", "dict of the 10 Deep CFR telemetry keys")

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
