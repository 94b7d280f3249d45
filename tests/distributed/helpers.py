"""Tiny engines, infer factories that crash on cue, and a local replay for the Ray tests.

Factories are built inside :func:`factories` (a local scope), so Ray ships them to the workers by
value: the test modules themselves are not importable there.  A crash is armed by a marker file:
the first process that removes it ``os._exit``\\ s, so the restarted actor does not die again.
"""

from __future__ import annotations

import numpy as np

import reinfors as rf

A = 7
COLLECT = 24
FIELDS = [f for f in rf.DqnBatch._FIELDS if f != "telemetry"]


def config(seed: int = 3) -> dict:
    """Connect4 under EpsilonGreedyQ + Dqn, 4 games, 1 thread (test_stream.py's ``dqn``: its
    kernels are in the cache already)."""
    eng = rf.Engine(
        rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0), rf.policies.EpsilonGreedyQ(epsilon=0.2),
        rf.learners.Dqn(), n_games=4, seed=seed, n_threads=1,
    )  # fmt: skip
    return eng.resolved_config()


def weights(version: int) -> dict:
    """The learner's weights of ``version``: a linear Q map, different per version."""
    return {"v": version, "w": np.random.default_rng(version).standard_normal((84, A)) * 0.3}


def factories():
    """``(linear, crashing)``: ``linear(weights) -> infer``; ``crashing(exit_in_factory=None,
    exit_in_callback=None)`` returns a factory like ``linear`` that ``os._exit``\\ s once while
    building the callback of version ``exit_in_factory[1]`` (marker ``exit_in_factory[0]``), and
    once on its process's ``exit_in_callback[1]``-th callback call (marker
    ``exit_in_callback[0]``)."""
    import os

    def claim(path) -> bool:
        try:
            os.remove(path)
            return True
        except FileNotFoundError:
            return False

    def linear(weights):
        w = np.asarray(weights["w"], np.float64)

        def infer(obs):
            return (obs.astype(np.float64) @ w)[:, None, :]

        return infer

    def crashing(exit_in_factory=None, exit_in_callback=None):
        calls = [0]  # this process's callback calls, over every version

        def factory(weights):
            if exit_in_factory is not None and weights["v"] == exit_in_factory[1] and claim(exit_in_factory[0]):
                os._exit(3)
            inner = linear(weights)

            def infer(obs):
                calls[0] += 1
                if exit_in_callback is not None and calls[0] >= exit_in_callback[1] and claim(exit_in_callback[0]):
                    os._exit(3)
                return inner(obs)

            return infer

        return factory

    return linear, crashing


LINEAR, CRASHING = factories()


def replay(cfg: dict, actor_id: int, versions: list[int]) -> list:
    """What actor ``actor_id`` of a fault-free run collects: a local engine with its seed, one
    window per entry of ``versions`` under that version (generation == version)."""
    eng = rf.engine_from_config(dict(cfg, engine=dict(cfg["engine"], seed=cfg["engine"]["seed"] + actor_id)))
    gen, out = 0, []
    for v in versions:
        while gen < v:
            eng.weights_updated()
            gen += 1
        out.append(eng.collect(COLLECT, LINEAR(weights(v))))
    return out


def same(a, b) -> bool:
    """Two batches hold the same records (every array field; telemetry has timings)."""
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in FIELDS)


def run(col, n: int, *, hooks=None) -> list[tuple[int, int, object]]:
    """``n`` batches from ``col``: publish version 0, then after every batch call ``hooks[k]``
    (if any) and publish the next version.  Returns ``[(actor_id, version, batch), ...]``."""
    hooks = hooks or {}
    if col.version < 0:
        col.set_weights(weights(0))
    got = []
    for k in range(n):
        actor_id, version, batch = next(col)
        got.append((actor_id, version, batch))
        if k in hooks:
            hooks[k]()
        col.set_weights(weights(col.version + 1))
    return got


def by_actor(got) -> dict[int, list]:
    out: dict[int, list] = {}
    for actor_id, version, batch in got:
        out.setdefault(actor_id, []).append((version, batch))
    return out


def check_against_replay(cfg: dict, got) -> None:
    """Every actor's batches equal a fault-free local engine's under the same versions."""
    for actor_id, seq in by_actor(got).items():
        want = replay(cfg, actor_id, [v for v, _ in seq])
        for k, ((v, b), w) in enumerate(zip(seq, want, strict=True)):
            assert same(b, w), f"actor {actor_id} window {k} (version {v}) differs from the fault-free run"
            assert b.weights_generations.max() <= v
