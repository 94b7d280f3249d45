"""Driver run under reinfors==0.4.0 (the original, in its own venv) by the differential tests.

Usage: python orig_driver.py '<json spec>' ; prints one JSON document with seeded random legal
playouts: per tick the active agents, legal actions, observations, inspection state, the chosen
joint action, the event trace, rewards, done and ticks.  Stand-alone: imports only the original.
"""

import base64
import json
import sys

import numpy as np

import reinfors as rf


def _jsonable(x):
    if isinstance(x, bytes):
        return {"__bytes__": base64.b64encode(x).decode()}
    if isinstance(x, tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, list):
        return [_jsonable(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    return x


def _obs(env, agent):
    o = env.observe(agent)
    return base64.b64encode(np.ascontiguousarray(o, dtype=np.float32).tobytes()).decode()


def _tick(env):
    n = env.num_agents()
    rec = {
        "active": env.active_agents(),
        "legal": [env.legal_actions(a) for a in range(n)],
        "obs": [_obs(env, a) for a in range(n)],
        "state": _jsonable(env.state()),
        "done": env.done(),
        "ticks": env.ticks,
    }
    try:
        rec["isk"] = [base64.b64encode(env.information_state_key(a)).decode() for a in range(n)]
    except ValueError:
        rec["isk"] = None
    return rec


def _outcome(fn):
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 - recorded, compared by the test
        return {"error": type(e).__name__, "message": str(e)}
    return {"ok": _jsonable(value)}


def ctor_probes(spec):
    """Construct each (ctor, kwargs) game; record its resolved config or the exception."""
    out = []
    for ctor, kwargs in spec["calls"]:

        def make(ctor=ctor, kwargs=kwargs):
            g = getattr(rf.games, ctor)(**kwargs)
            return {
                "config": rf.Env(g).resolved_config(),
                "shape": list(g.observation_space().shape),
                "n": g.action_space().n,
                "horizon": g.truncation_horizon(),
            }

        out.append(_outcome(make))
    return out


def env_probes(spec):
    """Run scripted Env calls (method name + args) and record each outcome."""
    game = getattr(rf.games, spec["ctor"])(**spec.get("kwargs", {}))
    env = rf.Env(game, rf.Reward(**spec.get("reward", {})), seed=spec.get("seed", 0))
    out = []
    for method, args in spec["calls"]:
        if method == "step":
            args = [{int(k): v for k, v in args[0].items()}]
        out.append(_outcome(lambda method=method, args=args: getattr(env, method)(*args)))
    return out


def q_callback(obs_size, width, seed, kind=None):
    """A deterministic, row-independent callback both builds can compute bit-identically.
    ``kind="int"`` (wide games such as chess): small integer weights and a matrix product, exact
    in float64 in any summation order for observations of 0/1 planes and a few float32 ratios."""
    if kind == "int":
        wi = np.random.default_rng(seed).integers(-3, 4, (obs_size, width)).astype(np.float64)
        return lambda obs: (obs.astype(np.float64) @ wi) * 0.1
    w = np.random.default_rng(seed).standard_normal((obs_size, width))

    def f(obs):
        return (obs[:, :, None].astype(np.float64) * w[None]).sum(axis=1)

    return f


def policy_kwargs(kw):
    """Policy kwargs from JSON: ``chance`` is ``{"name": "committed"|"expand_all"|..., ...}``."""
    kw = dict(kw)
    if isinstance(kw.get("chance"), dict):
        c = dict(kw["chance"])
        name = c.pop("name")
        cls = {"committed": "Committed", "expand_all": "ExpandAll", "always_resample": "AlwaysResample"}[name]
        kw["chance"] = getattr(rf.chance_modes, cls)(**c)
    return kw


def engine_runs(spec):
    """Run collects on an Engine; return every batch's fields (base64) and episodes.  An
    ``encoder`` names an ``rf.encoders`` constructor for the game (default: the game's own)."""
    kwargs = dict(spec.get("kwargs", {}))
    if spec.get("encoder"):
        kwargs["encoder"] = getattr(rf.encoders, spec["encoder"])()
    game = getattr(rf.games, spec["ctor"])(**kwargs)
    policy = getattr(rf.policies, spec["policy"])(**policy_kwargs(spec.get("policy_kwargs", {})))
    learner = getattr(rf.learners, spec["learner"])(**spec.get("learner_kwargs", {}))
    eng = rf.Engine(game, rf.Reward(**spec.get("reward", {})), policy, learner, **spec["engine"])
    obs_size = int(np.prod(game.observation_space().shape))
    A = game.action_space().n
    if spec["policy"] in ("Ppo", "AlphaZero"):
        f = q_callback(obs_size, A + 1, spec.get("cb_seed", 0), spec.get("cb"))

        def infer(obs):
            out = f(obs)
            return out[:, :A], out[:, A]
    else:
        heads = spec.get("policy_kwargs", {}).get("n_heads", 1)
        f = q_callback(obs_size, heads * A, spec.get("cb_seed", 0), spec.get("cb"))

        def infer(obs):
            return f(obs).reshape(len(obs), heads, A)

    out = []
    for _ in range(spec["collects"]):
        b = eng.collect(spec["floor"], infer)
        fields = {}
        for name in spec["fields"]:
            a = np.ascontiguousarray(getattr(b, name))
            fields[name] = [str(a.dtype), list(a.shape), base64.b64encode(a.tobytes()).decode()]
        out.append({"fields": fields, "episodes": [[list(e[0]), e[1]] for e in b.telemetry["episodes"]]})
    return out


def main():
    spec = json.loads(sys.argv[1])
    mode = spec.get("mode", "playout")
    if mode == "engine":
        json.dump(engine_runs(spec), sys.stdout)
        return
    if mode == "ctor":
        json.dump(ctor_probes(spec), sys.stdout)
        return
    if mode == "env":
        json.dump(env_probes(spec), sys.stdout)
        return
    game = getattr(rf.games, spec["ctor"])(**spec.get("kwargs", {}))
    out = []
    for seed in spec["seeds"]:
        env = rf.Env(game, rf.Reward(**spec.get("reward", {})), seed=seed)
        rs = np.random.default_rng(seed)
        episodes = []
        for _ in range(spec.get("episodes", 1)):
            ticks = [_tick(env)]
            steps = []
            for _ in range(spec.get("max_steps", 200)):
                if env.done():
                    break
                joint = {a: int(rs.choice(env.legal_actions(a))) for a in env.active_agents()}
                events = env.step(joint)
                steps.append(
                    {
                        "joint": {str(k): v for k, v in joint.items()},
                        "events": _jsonable(events),
                        "rewards": env.rewards,
                    }
                )
                ticks.append(_tick(env))
            episodes.append({"ticks": ticks, "steps": steps})
            env.reset()
        out.append({"fingerprint": env.config_fingerprint(), "episodes": episodes})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
