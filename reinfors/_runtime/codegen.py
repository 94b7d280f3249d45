"""Per-game kernel modules, generated as small files so they load from Numba's on-disk cache.

Engine-side kernels (the shared step semantics, batched playouts, the collection loops, the tree
searches) and the solvers' tree passes are generic over the game but must call the game's rules
*statically*: Numba inlines a global dispatcher it can see at compile time, while closures,
dispatchers passed as arguments and jitclasses never load from the cache (docs/architecture.md,
"Numba compile facts").  So for each game one module file is written per kernel family::

    <cache_dir>/generated/<name>_<family>_<hash>.py
        from reinfors._gamefns import <module>__step as G_step     # header: one line per role
        ...
        N_ACTIONS = 7                                             #   + the family's constants
        ...
        <reinfors/jit/kernels/game_kernels.py>                    # parts: shared step semantics
        <reinfors/jit/kernels/engine_{records,slots,routing}.py>  #   + runtime
        <reinfors/jit/kernels/engine_cache.py>                    #   (+cache families)
        <reinfors/jit/kernels/search_*.py of the family | search_stub.py>  #   + tree search

The parts are ordinary Python files (``reinfors/jit/kernels``); the names they take from the
header and from each other are imported under ``if TYPE_CHECKING:`` (for linters only; the
header's stubs are ``reinfors/jit/kernels/_header.py``).  :func:`instantiate` is the one
mechanism: the engine's families (:func:`kernel_module`) and the solvers' templates
(``reinfors/solvers/cfr.py``, ``deep_cfr.py``) all go through it.

The game's njit functions are published as attributes of the holder module
``reinfors._gamefns`` (so the header can import them whether they live in a package, a script or
a notebook cell), and the file name embeds a hash over the parts, the header and the source of
every game function plus the simple globals it reads.  Editing a game therefore produces a new
file (a cold compile), and an unchanged game reuses the cached machine code across processes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import threading
import types
from pathlib import Path

import numpy as np

from reinfors.jit import _compile
from reinfors.jit.games import _contract, _defaults

_PARTS = Path(_compile.__file__).resolve().parent / "kernels"
# Kernel families: the model-free engine compiles without the tree-search kernels (their
# entry points are stubs there), so a DQN/PPO composition pays no compile time for search.
# Each search family — ``tree`` (AlphaZero / Mcts), ``gumbel`` (GumbelAlphaZero), ``minimax``,
# ``selexp`` — concatenates only
# its own policy files plus the shared parts and the driver; header constants prune the other
# policies' branches before typing (an absent policy's names are never resolved).  ``+cache``
# adds the inference-cache paths (``CACHE_ON``).
_ENGINE = ("game_kernels", "match_kernels", "engine_records", "engine_slots", "engine_routing")
_CACHE = (_PARTS / "engine_cache.py",)  # +cache families only
_SEARCH = ("search_parts", "search_chance")
_TEMPLATES = {
    name: tuple(_PARTS / f"{f}.py" for f in files)
    for name, files in {
        "modelfree": _ENGINE + ("search_stub",),
        "tree": _ENGINE + _SEARCH + ("search_puct", "search_decoupled", "search_driver"),
        # GumbelAlphaZero: the AlphaZero tree (expansion, chance, backups, leaf batching) with
        # the Gumbel root / interior selection of search_gumbel.py (GUMBEL of the header)
        "gumbel": _ENGINE + _SEARCH + ("search_puct", "search_decoupled", "search_gumbel", "search_driver"),
        "minimax": _ENGINE + _SEARCH + ("search_minimax", "search_driver"),
        "selexp": _ENGINE + _SEARCH + ("search_minimax", "search_selexp", "search_sxsim", "search_driver"),
    }.items()
}
FAMILIES = tuple(f"{b}{c}" for b in _TEMPLATES for c in ("", "+cache"))

# The game's exports (reinfors/jit/games/_contract.py) plus the encoder's head map; the order
# feeds the module hash and the header.
_OPTIONAL = _contract.OPTIONAL_FUNCTIONS + ("head_index",)
ROLES = _contract.REQUIRED_FUNCTIONS + _OPTIONAL

# Holder module whose attributes are the game functions the generated headers import.
_HOLDER_NAME = "reinfors._gamefns"
_holder = sys.modules.get(_HOLDER_NAME)
if _holder is None:
    _holder = types.ModuleType(_HOLDER_NAME, "Game functions bound by generated kernel modules.")
    sys.modules[_HOLDER_NAME] = _holder

_lock = threading.Lock()
_loaded: dict[str, types.ModuleType] = {}


def _py_func(fn):
    return getattr(fn, "py_func", fn)


def _fn_fingerprint(fn, h, seen) -> None:
    """Feed the source of ``fn`` and the simple globals it reads (recursively for njit callees)."""
    pf = _py_func(fn)
    if id(pf) in seen:
        return
    seen.add(id(pf))
    # Numba's on-disk cache of the generated kernels refers to the game functions by module:
    # the same source defined in another module (a test run as a script, a notebook exported to
    # a file) must get its own generated module.
    h.update(f"{getattr(pf, '__module__', '')}.{getattr(pf, '__qualname__', '')}".encode())
    try:
        h.update(inspect.getsource(pf).encode())
    except (OSError, TypeError):
        h.update(pf.__code__.co_code)
        h.update(repr(pf.__code__.co_consts).encode())
    g = getattr(pf, "__globals__", {})
    for name in pf.__code__.co_names:
        if name not in g:
            continue
        v = g[name]
        h.update(name.encode())
        if isinstance(v, np.ndarray):
            h.update(str(v.dtype).encode() + repr(v.shape).encode() + v.tobytes())
        elif isinstance(v, (int, float, bool, str, bytes, tuple, type(None), np.generic)):
            h.update(repr(v).encode())
        elif hasattr(v, "py_func"):
            _fn_fingerprint(v, h, seen)
        elif isinstance(v, types.ModuleType):
            h.update(v.__name__.encode())


def kernel_module(
    name: str,
    fns: dict,
    n_actions: int,
    family: str = "modelfree",
    simultaneous: bool = False,
    chance_in_step: bool = False,
    legal_ranks: bool = False,
    start_buffer: bool = False,
    leaf_batch: bool = False,
) -> types.ModuleType:
    """Generate (or reuse) and import the kernel module for one game and kernel ``family``
    (``"modelfree"``: game + model-free engine kernels; ``"tree"`` / ``"gumbel"`` / ``"minimax"`` /
    ``"selexp"``: plus that policy's tree search; a ``"+cache"`` suffix adds the inference-cache
    paths; see :data:`FAMILIES`).  ``chance_in_step`` (the game's ``CHANCE_IN_STEP``) compiles the
    sequential trees' chance nodes (``CHANCE_IN_STEP`` of the header); games whose chance happens
    only at reset never compile them.  ``legal_ranks`` (the game's ``LEGAL_RANKS``) reads the
    legal masks as positions in the game's legal order (``LEGAL_RANKED`` of the header).  An
    optional ``legal_list`` role fills tree edges without scanning the mask (``LEGAL_LIST``); a
    ``head_index`` role (the encoder's head map, ``HEAD_MAPPED``) maps each prediction row from
    its observer's head frame into the game's action frame.  ``start_buffer`` (the catalogue's
    reached-state starts) compiles the start buffer's phases (``SB_ON``); other games never
    type them (1.6 s of a cold Connect4 compile).  ``leaf_batch`` (a tree search with
    ``leaf_batch > 1``) compiles leaf batching's rounds (``LB_ON``; one module serves every
    ``k > 1``); unbatched trees never type them (2 s of a cold Connect4 AlphaZero compile).

    ``fns`` maps each role in :data:`ROLES` to an njit dispatcher (missing optional roles get
    the defaults of ``reinfors.jit.games._defaults``).  Returns the imported module.
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown kernel family {family!r}; expected one of {FAMILIES}")
    base, _, option = family.partition("+")
    fns = dict(fns)
    has_list = fns.get("legal_list") is not None
    head_mapped = fns.get("head_index") is not None
    for role in _OPTIONAL:
        if fns.get(role) is None:
            fns[role] = getattr(_defaults, role)
    flags = f"{bool(simultaneous)}|{bool(chance_in_step)}|{bool(legal_ranks)}|{has_list}|{head_mapped}|{bool(start_buffer)}"
    flags += f"|{bool(leaf_batch)}"
    constants = {  # the header's constants (stubbed in reinfors/jit/kernels/_header.py)
        "N_ACTIONS": int(n_actions),
        "SIMUL": bool(simultaneous),
        "CHANCE_IN_STEP": bool(chance_in_step),
        "LEGAL_RANKED": bool(legal_ranks),
        "LEGAL_LIST": has_list,
        "HEAD_MAPPED": head_mapped,
        "FAM_MODELFREE": base == "modelfree",
        "FAM_TREE": base in ("tree", "gumbel"),
        "GUMBEL": base == "gumbel",
        "FAM_MMX": base == "minimax",
        "FAM_SX": base == "selexp",
        "CACHE_ON": option == "cache",
        "SB_ON": bool(start_buffer),
        "LB_ON": bool(leaf_batch),
    }
    return instantiate(
        family.replace("+", "_"),
        name,
        _TEMPLATES[base] + (_CACHE if option == "cache" else ()),
        fns,
        ROLES,
        key=f"{name}|{n_actions}|{family}|{flags}",
        constants=constants,
        what="reinfors kernels",
    )


def _part_source(path: Path) -> str:
    """A part's text for concatenation: without its ``from __future__`` lines (legal only at the
    top of the generated file)."""
    return "".join(line for line in path.read_text().splitlines(keepends=True) if not line.startswith("from __future__"))


def instantiate(
    kind: str,
    name: str,
    parts,
    fns: dict,
    roles,
    key: str,
    constants: dict | None = None,
    what: str = "reinfors kernels",
) -> types.ModuleType:
    """Generate (or reuse) and import the module of ``parts`` (paths of kernel parts or solver
    templates, concatenated in order) bound to one game: ``fns[role]`` becomes ``G_<role>`` for
    every role of ``roles``, and ``constants`` are written as ``NAME = value`` lines.  The file
    name (``<game>_<kind>_<hash>``) embeds a hash over the parts, ``key`` (everything else the
    module depends on) and the source of every bound function, so an unchanged game reuses its
    cached machine code across processes and an edited one compiles afresh."""
    body = "".join(_part_source(Path(p)) for p in parts)
    h = hashlib.sha256(body.encode())
    h.update(key.encode())
    for role in roles:
        h.update(role.encode())
        _fn_fingerprint(fns[role], h, set())
    for k, v in (constants or {}).items():
        h.update(f"{k}={v!r}".encode())
    digest = h.hexdigest()[:16]
    safe = "".join(c if c.isalnum() else "_" for c in name)[:40] or "game"
    mod_name = f"{safe}_{kind}_{digest}"
    with _lock:
        mod = _loaded.get(mod_name)
        if mod is not None:
            return mod
        lines = [f'"""Generated {what} for game {name!r} (hash {digest}); do not edit."""', ""]
        lines += bind_roles(mod_name, fns, roles)
        lines += [f"{k} = {v!r}" for k, v in (constants or {}).items()]
        mod = import_generated(mod_name, "\n".join(lines) + "\n" + body)
        _loaded[mod_name] = mod
        return mod


def bind_roles(mod_name: str, fns: dict, roles) -> list[str]:
    """Publish each role's njit function on the holder module; the header lines importing them
    as ``G_<role>`` (so a generated module binds the game's functions statically)."""
    lines = []
    for role in roles:
        attr = f"{mod_name}__{role}"
        setattr(_holder, attr, fns[role])
        lines.append(f"from reinfors._gamefns import {attr} as G_{role}")
    return lines


def import_generated(mod_name: str, source: str) -> types.ModuleType:
    """Write ``source`` as ``<cache_dir>/generated/<mod_name>.py`` (atomically, only when it
    changed) and import it, so its njit functions cache on disk like the package's own.  The
    caller (:func:`instantiate`) holds the lock and keeps the loaded modules."""
    gen_dir = _compile.cache_dir() / "generated"
    gen_dir.mkdir(parents=True, exist_ok=True)
    _compile.register_cache_root(gen_dir)
    path = gen_dir / f"{mod_name}.py"
    if not path.exists() or path.read_text() != source:
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(f"reinfors._generated.{mod_name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod
