"""Issue 16 item 5: ``reinfors`` never uses pickle, and everything it loads is validated.

* The package source, scanned as ASTs (not as text, so comments and docstrings saying "no
  pickle" do not count and an aliased import does): no import of pickle-like modules (``pickle``,
  ``cPickle``, ``_pickle``, ``dill``, ``cloudpickle``, ``marshal``, ``shelve``, ``joblib``), no call
  passing ``allow_pickle=True`` (``np.load``), no ``np.load`` / ``numpy.load`` at all (its default
  object-array path is the pickle path), no ``__reduce__`` that returns a constructor (objects
  refuse to be pickled instead).
* Every loader (``EngineSnapshot.from_bytes``, ``EnvSnapshot.from_bytes``, ``Cfr.load``,
  ``engine_from_config``) rejects a pickle payload with ``ValueError`` / ``TypeError`` and never
  runs it (the payload's ``__reduce__`` would set a flag).
"""

from __future__ import annotations

import ast
import pickle  # noqa: S403 - only to build hostile payloads; the package itself must not import it
from pathlib import Path

import pytest

import reinfors as rf

PACKAGE = Path(rf.__file__).resolve().parent
PICKLE_MODULES = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "marshal", "shelve", "joblib", "copyreg"}

RAN = []


class Payload:
    """Unpickling this calls ``RAN.append`` (what a malicious payload would do with ``os.system``)."""

    def __reduce__(self):
        return (RAN.append, ("unpickled",))


def _sources():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 50, files
    return files


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    path = path.relative_to(PACKAGE.parent) if path.is_relative_to(PACKAGE.parent) else path
    out = []
    for node in ast.walk(tree):
        where = f"{path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            out += [f"{where}: import {a.name}" for a in node.names if a.name.split(".")[0] in PICKLE_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PICKLE_MODULES:
            out.append(f"{where}: from {node.module} import ...")
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "allow_pickle" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                    out.append(f"{where}: allow_pickle={ast.unparse(kw.value)}")
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in ("load", "loads") and isinstance(f.value, ast.Name):
                if f.value.id in {"np", "numpy"} | PICKLE_MODULES:
                    out.append(f"{where}: {f.value.id}.{f.attr}(...)")
            if isinstance(f, ast.Name) and f.id == "__import__" and node.args:
                a = node.args[0]
                if isinstance(a, ast.Constant) and str(a.value).split(".")[0] in PICKLE_MODULES:
                    out.append(f"{where}: __import__({a.value!r})")
    return out


def test_the_scanner_finds_what_it_looks_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import pickle as p\nfrom dill import loads\nimport numpy as np\nnp.load('x', allow_pickle=True)\n"
        "import marshal\nx = __import__('cPickle')\n# import pickle in a comment is fine\n"
    )
    found = _violations(bad)
    assert len(found) == 6, found


def test_package_source_never_uses_pickle():
    found = [v for path in _sources() for v in _violations(path)]
    assert not found, "\n".join(found)


def _loaders():
    eng = rf.Engine(rf.games.Connect4(), None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), n_games=2)
    cfr = rf.solvers.Cfr(rf.games.KuhnPoker())
    return [
        ("EngineSnapshot.from_bytes", rf.EngineSnapshot.from_bytes),
        ("EnvSnapshot.from_bytes", rf.EnvSnapshot.from_bytes),
        ("Cfr.load", cfr.load),
        ("engine_from_config", rf.engine_from_config),
        ("Engine.restore", eng.restore),
    ]


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_loaders_reject_pickle_payloads(protocol):
    RAN.clear()
    payloads = [pickle.dumps(Payload(), protocol=protocol), pickle.dumps({"game": {"name": "connect4"}}, protocol)]
    for name, load in _loaders():
        for blob in payloads:
            with pytest.raises((ValueError, TypeError)) as info:
                load(blob)
            assert str(info.value), name
    assert RAN == []


def test_objects_refuse_to_be_pickled():
    """Snapshots travel as ``to_bytes()``; the objects themselves are not picklable (as 0.4.0)."""
    env = rf.Env(rf.games.Connect4(), rf.Reward(), seed=0)
    eng = rf.Engine(rf.games.Connect4(), None, rf.policies.EpsilonGreedyQ(), rf.learners.Dqn(), n_games=2)
    objs = [env, env.snapshot(), eng, eng.snapshot(), rf.solvers.Cfr(rf.games.KuhnPoker()), rf.games.Connect4(),
            rf.encoders.Connect4(), rf.policies.Mcts(), rf.learners.Dqn(), rf.chance_modes.ExpandAll(),
            rf.noise.Dirichlet(), rf.Reward(win=1.0)]  # fmt: skip
    for obj in objs:
        for protocol in (0, 2, pickle.HIGHEST_PROTOCOL):
            with pytest.raises(TypeError, match=f"cannot pickle 'builtins.{type(obj).__name__}' object"):
                pickle.dumps(obj, protocol=protocol)
