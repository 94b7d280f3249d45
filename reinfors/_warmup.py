"""``rf.warmup`` / ``python -m reinfors warmup``: compile compositions into the cache ahead of time.

A composition is named three ways:

* an engine config (``Engine.resolved_config()``, a dict or its JSON text, or a path to a JSON
  file): exactly that engine's kernels;
* a catalogue name ``"<game>/<algorithm>"`` (``rf.catalog.GAMES`` x the Engine workflows of
  ``rf.catalog.ALGORITHMS``, e.g. ``"connect4/alphazero"``), with the catalogue's default
  parameters, or ``"<game>/env"``: the kernels ``rf.Env`` runs;
* a game name alone (``"connect4"``): every catalogue composition of that game plus its Env.

Compositions that run on the same generated kernel module (AlphaZero and Mcts share the tree
kernels; the learner is a runtime switch) compile once.  Each module compiles in its own worker
process (``python -m reinfors._warmup <job>``; one worker per core by default), which builds the
engine and compiles every kernel a window can call (``compile_helper.precompile``), reporting each
to the parent's compile bar.  Modules already in the cache are skipped.  The workers use the cache
directory given (``cache_dir``, else the current one), so a container image can bake the cache in
a build step and every later process starts warm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from . import games, learners, policies
from ._runtime.budget import available_cores
from .engine import Engine
from .env import Env

__all__ = ["warmup", "WarmupResult", "expand"]


@dataclass(frozen=True)
class WarmupResult:
    """What :func:`warmup` did for one kernel module.

    Attributes:
        names: the compositions served by the module (catalogue names or ``"config"``).
        module: the generated kernel module (``"env"`` jobs: the game's model-free module).
        status: ``"compiled"``, ``"cached"`` (nothing to compile) or ``"failed"``.
        kernels: kernels compiled (or loaded) by the worker.
        seconds: the worker's wall seconds.
        error: the worker's error output when it failed, else ``""``.
    """

    names: tuple[str, ...]
    module: str
    status: str
    kernels: int
    seconds: float
    error: str = ""


def _catalogue_engine_algorithms(game: str) -> list[str]:
    from . import catalog

    info = catalog.GAMES.get(game)
    if info is None:
        raise ValueError(f"compositions: unknown game {game!r}; expected one of {sorted(catalog.GAMES)}")
    return [a for a in info.algorithms if catalog.ALGORITHMS[a].workflow == "Engine"]


def _catalogue_config(game: str, algorithm: str) -> dict:
    """The engine config of catalogue composition ``game/algorithm`` (default parameters)."""
    from . import catalog

    algs = _catalogue_engine_algorithms(game)
    if algorithm not in algs:
        raise ValueError(
            f"compositions: {game!r} has no Engine composition {algorithm!r}; expected one of {algs + ['env']}"
        )
    info = catalog.ALGORITHMS[algorithm]
    policy = getattr(policies, info.policy_or_solver.rsplit(".", 1)[-1])()
    learner = getattr(learners, info.learner.rsplit(".", 1)[-1])()
    engine = Engine(games.make(game), None, policy, learner, n_games=1, n_threads=1)
    return engine.resolved_config()


def expand(compositions: Iterable) -> list[tuple[str, dict | None, str | None]]:
    """The jobs of ``compositions``: ``(name, engine config or None, env game or None)``.

    Args:
        compositions: engine configs (dict, JSON text or a JSON file's path), catalogue names
            ``"<game>/<algorithm>"`` or ``"<game>/env"``, or game names.

    Returns:
        list: one ``(name, config, env_game)`` per composition (a game name gives several).

    Raises:
        TypeError: an item is neither a str nor a dict.
        ValueError: an unknown game or algorithm, or unreadable JSON.
    """
    jobs: list[tuple[str, dict | None, str | None]] = []
    for item in compositions:
        if isinstance(item, Mapping):
            jobs.append(("config", json.loads(json.dumps(item)), None))
            continue
        if isinstance(item, os.PathLike):
            item = os.fspath(item)
        if not isinstance(item, str):
            raise TypeError(f"compositions: expected a config dict or a name, got {type(item).__name__}")
        text = item.strip()
        if text.startswith("{"):
            try:
                jobs.append(("config", json.loads(text), None))
            except json.JSONDecodeError as exc:
                raise ValueError(f"compositions: invalid config JSON: {exc}") from exc
            continue
        if text.endswith(".json") or (os.sep in text and Path(text).is_file()):
            try:
                jobs.append((Path(text).name, json.loads(Path(text).read_text()), None))
            except (OSError, json.JSONDecodeError) as exc:
                raise ValueError(f"compositions: cannot read the config file {text!r}: {exc}") from exc
            continue
        game, _, alg = text.partition("/")
        if not alg:
            algs = _catalogue_engine_algorithms(game)
            jobs.append((f"{game}/env", None, game))
            jobs.extend((f"{game}/{a}", _catalogue_config(game, a), None) for a in algs)
        elif alg == "env":
            _catalogue_engine_algorithms(game)  # a known game
            jobs.append((text, None, game))
        else:
            jobs.append((text, _catalogue_config(game, alg), None))
    return jobs


def _module_key(config: dict | None, env_game: str | None) -> str:
    """The generated module a job compiles (jobs with one key compile once)."""
    if env_game is not None:  # the Env runs on the game's model-free module
        return games.make(env_game)._def.kernels.__name__
    from .config import engine_from_config

    return engine_from_config(config)._kernel_module().__name__


def warmup(
    *compositions,
    cache_dir: str | os.PathLike | None = None,
    workers: int | None = None,
    progress: bool | None = None,
    verbose: bool = False,
) -> list[WarmupResult]:
    """Compile the kernels of ``compositions`` into the on-disk cache, in parallel processes.

    Args:
        *compositions: engine configs (``Engine.resolved_config()`` dicts, JSON text or JSON
            file paths), catalogue names ``"<game>/<algorithm>"`` / ``"<game>/env"``, or game
            names (every catalogue composition of the game and its Env).
        cache_dir: compile into this cache root (``REINFORS_CACHE_DIR`` of the workers); default:
            the cache this process uses.
        workers: worker processes at once (default: one per core).
        progress: show the compile bar (default: when stderr is a terminal or
            ``REINFORS_COMPILE_PROGRESS=1``).
        verbose: print one line per module to stdout (what it compiled, in how long).

    Returns:
        list[WarmupResult]: one per distinct kernel module, in the order given.

    Raises:
        TypeError: a composition of the wrong type, or ``workers`` not an int.
        ValueError: an unknown game or algorithm, bad JSON, an invalid config, or ``workers < 1``.
        KeyError: a config naming an unknown game, policy or learner (``engine_from_config``).
        RuntimeError: a worker failed (after every other worker finished; the results of the
            others are in the cache).
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)):
        raise TypeError(f"workers must be an int, got {type(workers).__name__}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if not compositions:
        raise ValueError("compositions: give at least one config, catalogue name or game")
    from ._runtime import notice

    jobs = expand(compositions)
    groups: dict[str, list] = {}
    for name, config, env_game in jobs:
        key = _module_key(config, env_game)  # validates the config (engine_from_config)
        groups.setdefault(key, []).append((name, config, env_game))
    env = dict(os.environ, REINFORS_COMPILE_HELPER="0")
    if cache_dir is not None:
        env["REINFORS_CACHE_DIR"] = os.fspath(cache_dir)
    show = notice.bar_mode() if progress is None else bool(progress)
    n_workers = min(workers or available_cores(), len(groups))
    bar = None
    if show:
        from tqdm.auto import tqdm

        bar = tqdm(total=None, desc="reinfors warmup", unit="kernel", file=sys.stderr, dynamic_ncols=True,
                   bar_format="{desc}: {n_fmt}/{total_fmt} kernels [{elapsed}]{postfix}")  # fmt: skip
        bar.total = 0
    lock = threading.Lock()
    results: dict[str, WarmupResult] = {}
    pending = list(groups.items())

    def run_one(key: str, members: list) -> None:
        names = tuple(m[0] for m in members)
        config = next((m[1] for m in members if m[1] is not None), None)
        env_game = next((m[2] for m in members if m[2] is not None), None)
        spec = json.dumps({"config": config, "env": env_game})
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "reinfors._warmup", spec], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env)  # fmt: skip
        err_lines: list[str] = []
        drain = threading.Thread(target=lambda: err_lines.extend(proc.stderr), daemon=True)
        drain.start()
        count, status = 0, "compiled"
        for line in proc.stdout:
            tag, _, rest = line.strip().partition(" ")
            with lock:
                if tag == "TOTAL" and bar is not None:
                    bar.total += int(rest)
                    bar.refresh()
                elif tag == "KERNEL":
                    count += 1
                    if bar is not None:
                        bar.update(1)
                        bar.set_postfix_str(f"{names[0]}: {rest}")
                elif tag == "CACHED":
                    status = "cached"
        proc.wait()
        drain.join()
        proc.stdout.close()
        proc.stderr.close()
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            res = WarmupResult(names, key, "failed", count, seconds, "".join(err_lines)[-4000:])
        else:
            res = WarmupResult(names, key, status, count, seconds)
        with lock:
            results[key] = res
        if verbose:
            what = {"compiled": f"compiled {count} kernels", "cached": "already cached", "failed": "FAILED"}[res.status]
            print(f"{', '.join(names)}: {what} in {seconds:.1f} s ({key})", flush=True)

    def worker_loop() -> None:
        while True:
            with lock:
                if not pending:
                    return
                key, members = pending.pop(0)
            run_one(key, members)

    threads = [threading.Thread(target=worker_loop, name=f"reinfors-warmup-{i}") for i in range(n_workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if bar is not None:
        bar.set_postfix_str("done")
        bar.close()
    out = [results[key] for key in groups]
    failed = [r for r in out if r.status == "failed"]
    if failed:
        detail = "\n".join(f"{', '.join(r.names)} ({r.module}):\n{r.error}" for r in failed)
        raise RuntimeError(f"warmup failed for {len(failed)} of {len(out)} kernel modules:\n{detail}")
    return out


def _env_playout(game_name: str, report) -> int:
    """Drive an ``rf.Env`` of the game through the calls a user makes (reset, observe, legal
    actions, step), so its kernels compile.  Returns the calls' count of kernels (1: one unit)."""
    import numpy as np

    env = Env(games.make(game_name), seed=1)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(40):
        if env.done():
            env.reset()
            continue
        acts = {}
        for agent in env.active_agents():
            legal = env.legal_actions(agent)
            acts[agent] = int(legal[rng.integers(len(legal))])
            env.observe(agent)
        env.step(acts)
    report("env")
    return 1


def _worker(spec_json: str) -> int:
    """One warmup job (``python -m reinfors._warmup <job json>``): prints ``TOTAL n``, then
    ``KERNEL name`` per kernel, or ``CACHED`` when the module needed no compile."""
    spec = json.loads(spec_json)

    def report(name: str) -> None:
        print(f"KERNEL {name}", flush=True)

    from ._runtime import compile_helper
    from .config import engine_from_config
    from .jit import _compile

    engine = k = kernels = None
    if spec.get("config") is not None:
        config = dict(spec["config"])
        config["engine"] = {**config.get("engine", {}), "n_games": 1, "n_threads": 1, "batch_size": None}
        engine = engine_from_config(config)
        k = engine._kernel_module()
        kernels = compile_helper.plan_kernels(engine, k) or []
    with_env = spec.get("env") is not None
    print(f"TOTAL {len(kernels or []) + int(with_env)}", flush=True)
    before = _compile.compile_seconds()
    if engine is not None and not (kernels and compile_helper.planned_total(engine, k) == 0):
        compile_helper.precompile(engine, report)
    if with_env:
        _env_playout(spec["env"], report)
    if _compile.compile_seconds() == before:
        print("CACHED", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1]))
