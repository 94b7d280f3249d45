"""The public namespaces (``rf.policies``, ``rf.games``, ...) export reinfors 0.4.0's public
names plus this project's documented additions, and nothing else.

0.4.0's public names of a namespace: its ``__all__`` where it has one, else the non-underscore
names it defines or takes from the package (``from .catalog import POLICIES``), not the stdlib
and typing helpers it imports (``Any``, ``Callable``, ``dataclass``).  Ours: ``__all__``, and every
other non-underscore name must be a module, a stdlib / typing import, or a public object of another
namespace or of ``rf`` (``rf.games.Box`` is ``rf.spaces.Box``) — argument converters, registries and
internal constants are underscored (``reinfors._validate``, ``reinfors._registry``).
"""

from __future__ import annotations

import json
import subprocess
import types

import pytest

import reinfors as rf

from .harness import require_orig

NAMESPACES = (
    "policies", "games", "learners", "encoders", "spaces", "starts", "arena", "solvers", "gym",
    "chance_modes", "noise", "catalog",
)  # fmt: skip

# This project's documented additions, per namespace (README / docs): the handle types (0.4.0 has
# them in rf._reinfors only), user-defined games (rf.games.custom / from_module, their contract
# error and header size), the Arena's tournaments and gating (docs/guides/evaluation.md) and the
# GumbelAlphaZero policy (docs/gumbel-alphazero.md).
ADDITIONS = {
    "policies": {"PolicyHandle", "GumbelAlphaZero"},  # GumbelAlphaZero: issue 33
    "games": {"GameHandle", "custom", "from_module", "GameContractError", "STATE_HEADER"},
    "learners": {"LearnerHandle"},
    "encoders": {"EncoderHandle"},
    "chance_modes": {"ChanceModeHandle"},
    "noise": {"NoiseHandle"},
    "arena": {"GateResult", "Tournament", "TournamentResult", "gate"},
}

PROBE = r"""
import json, types, reinfors as rf
catalog = set(rf.catalog.__all__)
out = {}
for ns in NAMESPACES:
    mod = getattr(rf, ns)
    if hasattr(mod, "__all__"):
        out[ns] = sorted(mod.__all__)
        continue
    names = []
    for n in dir(mod):
        if n.startswith("_") or isinstance(getattr(mod, n), types.ModuleType):
            continue
        obj = getattr(mod, n)
        origin = getattr(obj, "__module__", None)
        compiled = origin is None and callable(obj)  # PolicyHandle.AlphaZero (stdlib ones name a module)
        if (origin or "").startswith("reinfors") or compiled or n in catalog:
            names.append(n)
    out[ns] = sorted(names)
print(json.dumps(out))
"""


def _original() -> dict:
    code = f"NAMESPACES = {NAMESPACES!r}\n" + PROBE
    out = subprocess.run([require_orig(), "-I", "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


@pytest.mark.differential
def test_namespaces_export_the_originals_names_plus_documented_additions():
    theirs = _original()
    for ns in NAMESPACES:
        ours = set(getattr(rf, ns).__all__)
        want = set(theirs[ns]) | ADDITIONS.get(ns, set())
        assert ours == want, f"rf.{ns}: missing {sorted(want - ours)}, extra {sorted(ours - want)}"


# Data imported from the stdlib (no __module__ to tell it by), as in 0.4.0's arena.
STDLIB_DATA = {"FIRST_COMPLETED"}


def _public_objects() -> set[int]:
    out = {id(getattr(getattr(rf, ns), n)) for ns in NAMESPACES for n in getattr(rf, ns).__all__}
    return out | {id(getattr(rf, n)) for n in rf.__all__}


@pytest.mark.parametrize("ns", NAMESPACES)
def test_nothing_else_is_public(ns):
    mod = getattr(rf, ns)
    public = _public_objects()
    leaked = []
    for n in dir(mod):
        if n.startswith("_") or n in mod.__all__ or n == "annotations" or n in STDLIB_DATA:
            continue
        obj = getattr(mod, n)
        if isinstance(obj, types.ModuleType) or id(obj) in public:
            continue
        origin = getattr(obj, "__module__", None)
        if origin is not None and not origin.startswith("reinfors"):
            continue  # a stdlib / typing / numpy import (Any, dataclass, np.float32)
        leaked.append(n)
    assert not leaked, f"rf.{ns} exposes {leaked}: underscore them or add them to __all__ (and ADDITIONS)"
