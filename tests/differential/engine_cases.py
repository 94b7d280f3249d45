"""Our side of the engine differential tests: run a spec through this build, decode and split the
original's batches (shared by test_engine_vs_original.py and the per-game differential tests)."""

from __future__ import annotations

import base64
import collections

import numpy as np

import reinfors as rf

from .orig_driver import q_callback


def _policy_kwargs(rf_mod, kw):
    """JSON policy kwargs (``chance`` as ``{"name": ..., ...}``) built as orig_driver does."""
    kw = dict(kw)
    if isinstance(kw.get("chance"), dict):
        c = dict(kw["chance"])
        cls = {"committed": "Committed", "expand_all": "ExpandAll", "always_resample": "AlwaysResample"}[c.pop("name")]
        kw["chance"] = getattr(rf_mod.chance_modes, cls)(**c)
    return kw

DQN_FIELDS = [
    "obs", "actions", "rewards", "next_obs", "dones", "can_bootstrap", "discounts", "masks",
    "legal_ids", "legal_offsets", "next_legal_ids", "next_legal_offsets", "players",
]  # fmt: skip
PPO_FIELDS = ["obs", "actions", "behavior_log_probs", "values", "legal_ids", "legal_offsets", "players"]


def _decode(fields):
    return {k: np.frombuffer(base64.b64decode(b), dtype=d).reshape(s) for k, (d, s, b) in fields.items()}


def _ours(spec, collects, floor):
    kwargs = dict(spec.get("kwargs", {}))
    if spec.get("encoder"):
        kwargs["encoder"] = getattr(rf.encoders, spec["encoder"])()
    game = rf.games.__dict__[spec["ctor"]](**kwargs)
    policy = getattr(rf.policies, spec["policy"])(**_policy_kwargs(rf, spec.get("policy_kwargs", {})))
    learner = getattr(rf.learners, spec["learner"])(**spec.get("learner_kwargs", {}))
    eng = rf.Engine(game, rf.Reward(**spec.get("reward", {})), policy, learner, **spec["engine"])
    O = game._def.obs_size
    A = game.action_space().n
    heads = spec.get("policy_kwargs", {}).get("n_heads", 1)
    pv = spec["policy"] in ("Ppo", "AlphaZero")
    width = A + 1 if pv else heads * A
    f = q_callback(O, width, spec.get("cb_seed", 0), spec.get("cb"))

    if pv:
        infer = lambda obs: (f(obs)[:, :A], f(obs)[:, A])  # noqa: E731
    else:
        infer = lambda obs: f(obs).reshape(len(obs), heads, A)  # noqa: E731
    out = []
    for _ in range(collects):
        b = eng.collect(floor, infer)
        fields = {n: np.ascontiguousarray(getattr(b, n)) for n in spec["fields"]}
        out.append({"fields": fields, "episodes": [[e[0], e[1]] for e in b.telemetry["episodes"]]})
    return out


def _rows(fields, i, names):
    """One record's bytes over ``names`` (CSR fields sliced to the record)."""
    parts = []
    for n in names:
        if n.endswith("_offsets"):
            continue
        if n.endswith("legal_ids"):
            off = fields[n.replace("_ids", "_offsets")]
            parts.append(fields[n][off[i] : off[i + 1]].tobytes())
        else:
            parts.append(fields[n][i].tobytes())
    return b"|".join(parts)


def _dqn_episodes(run, names=DQN_FIELDS):
    """Split each batch into its episodes (records come episode by episode, ``length`` records
    each when every player learns) and return a multiset of episode blobs."""
    eps = collections.Counter()
    for batch in run:
        f = batch["fields"]
        i = 0
        for _, length in batch["episodes"]:
            blob = b"#".join(_rows(f, j, names) for j in range(i, i + length))
            eps[blob] += 1
            i += length
        assert i == len(f[names[0]])
    return eps


AZ_FIELDS = ["obs", "policy_targets", "value_targets", "policy_weights", "legal_ids", "legal_offsets", "players"]
TS_FIELDS = ["obs", "targets", "masks", "players"]
