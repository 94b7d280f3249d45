"""The whole Numba compile policy of reinfors, in one place.

* Decorator presets: :func:`kernel` (cached, ``nogil``) for every kernel in ``reinfors.jit`` and
  :func:`leaf` for tiny hot helpers that may carry an explicit signature.
* The on-disk cache lives in a directory keyed by the package version **and** a digest of the
  ``reinfors/jit`` sources.  Numba keys a cache entry on the defining file only, so an edit to a
  callee in another file would otherwise be served stale (measured; docs/architecture.md, "Numba compile facts").  The key makes
  every source edit a fresh cache.
* An installed package (a wheel, ``pip install .``) or a read-only package directory keeps its
  cache in the platform's user cache directory (``$XDG_CACHE_HOME/reinfors`` or ``~/.cache/reinfors`` on Linux,
  ``~/Library/Caches/reinfors`` on macOS, ``%LOCALAPPDATA%\\reinfors\\Cache`` on Windows) instead
  of failing with Numba's "no locator" error.
* Stale cache directories (other source digests, older versions) beside the one in use are
  pruned when the cache is first used: the newest :data:`KEEP` stay (``REINFORS_CACHE_KEEP``).
  :func:`cache_info` and :func:`clear_cache` back ``python -m reinfors cache info|clear``.
* Compile seconds are measurable: :func:`compile_seconds` sums Numba's own compile events.

Environment switches (each warns when it deviates from the default):

``REINFORS_CACHE=0``         disable the on-disk cache (every process compiles cold)
``REINFORS_CACHE_DIR=path``  put the cache under ``path`` instead of the package directory
``REINFORS_CACHE_KEEP=n``    keep the newest ``n`` cache directories (default 3; 0: never prune)
``REINFORS_FASTMATH=1``      compile kernels with ``fastmath`` (changes floating-point results)
``REINFORS_BOUNDSCHECK=1``   compile kernels with bounds checking (slow; for debugging)

This module imports only the standard library, numpy and numba, like the rest of ``reinfors.jit``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numba
from numba.core import caching as _caching
from numba.core import event as _event
from numba.core.registry import CPUDispatcher

__all__ = [
    "CACHE_ENABLED",
    "FASTMATH",
    "BOUNDSCHECK",
    "kernel",
    "leaf",
    "cache_dir",
    "register_cache_root",
    "compile_seconds",
    "source_digest",
    "cache_info",
    "clear_cache",
    "prune_stale",
    "KEEP",
]

_PKG_VERSION = "0.4.0"
_JIT_DIR = Path(__file__).resolve().parent


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower() not in ("0", "false", "no", "off")
    if value != default:
        warnings.warn(
            f"{name}={raw!r} deviates from the default ({int(default)}); kernels compile accordingly",
            RuntimeWarning,
            stacklevel=3,
        )
    return value


CACHE_ENABLED = _flag("REINFORS_CACHE", True)
FASTMATH = _flag("REINFORS_FASTMATH", False)
BOUNDSCHECK = _flag("REINFORS_BOUNDSCHECK", False)


def source_digest() -> str:
    """Hex digest (16 chars) over every ``.py`` file under ``reinfors/jit`` (path + bytes): the
    package's kernels and the kernel parts the generated per-game modules concatenate."""
    h = hashlib.sha256()
    for path in sorted(_JIT_DIR.rglob("*.py")):
        h.update(str(path.relative_to(_JIT_DIR)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=path, prefix=".probe", delete=True)
        probe.close()
        return True
    except OSError:
        return False


def _installed() -> bool:
    """The package was installed by a package manager (``pip install .``, a wheel): its
    distribution metadata sits beside it.  Its cache then lives in the user's cache directory, as
    the platform convention wants, never inside site-packages.  A source checkout or an editable
    install keeps the cache next to the sources (``reinfors/__jitcache__``)."""
    return any(_JIT_DIR.parent.parent.glob("reinfors-*.dist-info"))


def _user_cache_base() -> Path:
    """The platform's per-user cache directory for reinfors."""
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        return (Path(local) if local else Path.home() / "AppData" / "Local") / "reinfors" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "reinfors"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "reinfors"


def _keep() -> int:
    raw = os.environ.get("REINFORS_CACHE_KEEP", "").strip()
    try:
        return max(0, int(raw)) if raw else 3
    except ValueError:
        warnings.warn(f"REINFORS_CACHE_KEEP={raw!r} is not an integer; keeping 3", RuntimeWarning, stacklevel=2)
        return 3


KEEP = _keep()
# A cache directory's name: v<version>-py<XY>-nb<numba>-<digest>[-boundscheck][-fastmath].
_KEY_RE = re.compile(r"^v[^-]+-py\d+-nb[^-]+-[0-9a-f]{16}(-boundscheck)?(-fastmath)?$")


def _choose_cache_dir() -> Path:
    key = f"v{_PKG_VERSION}-py{sys.version_info[0]}{sys.version_info[1]}-nb{numba.__version__}-{source_digest()}"
    # Numba's cache index keys on signature, target and bytecode, not on compile flags: kernels
    # built with bounds checks or fastmath get directories of their own, or a cached build of
    # the other flavour would be loaded silently.
    key += "".join(f"-{tag}" for tag, on in (("boundscheck", BOUNDSCHECK), ("fastmath", FASTMATH)) if on)
    explicit = os.environ.get("REINFORS_CACHE_DIR")
    candidates = []
    if explicit:
        candidates.append(Path(explicit).expanduser() / key)
    if not _installed():
        candidates.append(_JIT_DIR.parent / "__jitcache__" / key)
    candidates.append(_user_cache_base() / key)
    candidates.append(Path(tempfile.gettempdir()) / f"reinfors-{os.getuid() if hasattr(os, 'getuid') else 0}" / key)
    for cand in candidates:
        if _writable(cand):
            return cand
    raise RuntimeError(f"reinfors: no writable Numba cache directory among {candidates}")


_CACHE_DIR: Path | None = None


def cache_dir() -> Path:
    """The versioned, source-keyed directory that holds every reinfors Numba cache file."""
    global _CACHE_DIR
    if _CACHE_DIR is None:
        chosen = _choose_cache_dir()
        try:
            os.utime(chosen)  # "newest" means most recently used, for pruning
        except OSError:
            pass
        if KEEP and CACHE_ENABLED:
            prune_stale(chosen, KEEP)
        _CACHE_DIR = chosen
    return _CACHE_DIR


def _key_dirs(root: Path) -> list[Path]:
    """The cache directories (one per version and source digest) under ``root``."""
    try:
        return [p for p in root.iterdir() if p.is_dir() and _KEY_RE.match(p.name)]
    except OSError:
        return []


def prune_stale(current: Path, keep: int) -> list[Path]:
    """Remove the cache directories beside ``current`` (other versions or source digests) but the
    ``keep - 1`` most recently used; ``current`` always stays.  Returns the directories removed.
    A directory another process is still using is only recompiled there."""
    others = sorted((p for p in _key_dirs(current.parent) if p != current), key=_mtime, reverse=True)
    removed = []
    for p in others[max(0, keep - 1) :]:
        shutil.rmtree(p, ignore_errors=True)
        if not p.exists():
            removed.append(p)
    return removed


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def _size(p: Path) -> tuple[int, int]:
    """(bytes, files) under ``p``."""
    total = files = 0
    for root, _dirs, names in os.walk(p):
        for n in names:
            try:
                total += os.stat(os.path.join(root, n)).st_size
                files += 1
            except OSError:
                pass
    return total, files


def cache_info() -> dict:
    """What the on-disk cache holds.

    Returns:
        dict: ``dir`` (the directory in use), ``root`` (its parent), ``bytes`` and ``files`` of
        the directory in use, ``modules`` (generated kernel modules in it), and ``others``: one
        ``{"dir", "bytes", "files", "age_s"}`` per other cache directory under the root.
    """
    cur = cache_dir()
    size, files = _size(cur)
    gen = cur / "generated"
    modules = sorted(p.stem for p in gen.glob("*.py")) if gen.is_dir() else []
    now = time.time()
    others = []
    for p in sorted(_key_dirs(cur.parent), key=_mtime, reverse=True):
        if p != cur:
            b, f = _size(p)
            others.append({"dir": str(p), "bytes": b, "files": f, "age_s": now - _mtime(p)})
    return {"dir": str(cur), "root": str(cur.parent), "bytes": size, "files": files, "modules": modules,
            "others": others}  # fmt: skip


def clear_cache(everything: bool = False) -> list[str]:
    """Delete the cache directory in use (the next use compiles afresh) or, with ``everything``,
    every cache directory under its root.

    Args:
        everything: also delete the other versions' and source digests' directories.

    Returns:
        list[str]: the directories deleted.
    """
    cur = cache_dir()
    targets = [cur] + ([p for p in _key_dirs(cur.parent) if p != cur] if everything else [])
    gone = []
    for p in targets:
        shutil.rmtree(p, ignore_errors=True)
        if not p.exists():
            gone.append(str(p))
    return gone


# Source trees whose functions cache under cache_dir(): the package itself plus directories of
# generated kernel modules (registered by the runtime when it writes one).
_ROOTS: list[Path] = [_JIT_DIR.parent]


def register_cache_root(path: str | os.PathLike) -> None:
    """Cache functions defined in files under ``path`` in :func:`cache_dir` as well."""
    p = Path(path).resolve()
    if p not in _ROOTS:
        _ROOTS.append(p)


class _ReinforsLocator(_caching._CacheLocator):
    """Numba cache locator for reinfors sources: ``cache_dir()/<relative path of the source>``."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        path = Path(py_file).resolve()
        for root in _ROOTS:
            try:
                rel = path.relative_to(root)
                break
            except ValueError:
                continue
        else:  # pragma: no cover - from_function filters first
            raise ValueError(py_file)
        self._cache_path = str(cache_dir() / root.name / rel.parent / rel.stem)

    def ensure_cache_path(self):
        os.makedirs(self._cache_path, exist_ok=True)
        tempfile.TemporaryFile(dir=self._cache_path).close()

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        st = os.stat(self._py_file)
        return st.st_mtime, st.st_size

    def get_disambiguator(self):
        return ""

    @classmethod
    def from_function(cls, py_func, py_file):
        if not py_file or not os.path.exists(py_file):
            return None
        path = Path(py_file).resolve()
        for root in _ROOTS:
            if root == path or root in path.parents:
                return cls(py_func, py_file)
        return None


_CACHE_IMPL = getattr(_caching, "CacheImpl", None) or _caching._CacheImpl
if _ReinforsLocator not in _CACHE_IMPL._locator_classes:
    _CACHE_IMPL._locator_classes.insert(0, _ReinforsLocator)


# Numba builds two wrappers around every function it compiles: a CPython one (unboxing the
# arguments, for calls from Python) and a C one (for ``cfunc`` addresses and first-class function
# values).  reinfors never takes a kernel's C address, so no kernel gets the C wrapper; and most
# kernels are called only by other kernels (inside ``work``, a search, a solver traversal), so
# they get no CPython wrapper either.  The wrappers' lowering and LLVM IR were ~14 % of a cold
# Connect4 PPO ``work`` compile (13.4 -> 11.5 s with every kernel internal; the cold quickstart
# with the entries kept: 12.6 -> 10.9 s).
def _preset(overrides: dict) -> dict:
    opts = dict(cache=CACHE_ENABLED, nogil=True, fastmath=FASTMATH, boundscheck=BOUNDSCHECK, no_cfunc_wrapper=True)
    opts.update(overrides)
    return opts


class InternalKernel(CPUDispatcher):
    """A kernel compiled without Numba's CPython wrapper (:func:`kernel` without ``entry=True``):
    other kernels call it; a call from Python raises ``TypeError`` (it would otherwise jump to a
    wrapper that was never built)."""

    def __call__(self, *args, **kwargs):
        name = f"{self.py_func.__module__}.{self.py_func.__qualname__}"
        raise TypeError(
            f"{name} is an internal kernel (no CPython wrapper): declare it @kernel(entry=True) to call it from Python"
        )


def _jit(fn, opts: dict, entry: bool, signature=None):
    # An ``inline="always"`` kernel is inlined into its callers' IR and compiled alone only when
    # Python calls it: it keeps the CPython wrapper.
    internal = not entry and opts.get("inline", "never") == "never"
    if internal:
        opts = {**opts, "no_cpython_wrapper": True}
    disp = numba.njit(**opts)(fn) if signature is None else numba.njit(signature, **opts)(fn)
    if internal and isinstance(disp, CPUDispatcher):  # not under NUMBA_DISABLE_JIT
        disp.__class__ = InternalKernel
    return disp


def kernel(fn=None, *, entry: bool = False, **overrides):
    """Decorator preset for reinfors kernels: ``njit(cache, nogil)`` under the module's policy.

    Use bare (``@kernel``) or with Numba options (``@kernel(inline="always")``).  ``entry=True``
    marks a kernel the Python side calls (``work``, the scheduler's phases, a game's contract
    exports, the record hand-over, the solvers' drivers): only those get Numba's CPython wrapper
    (see :class:`InternalKernel`; tests reach an internal kernel through an njit shim,
    ``tests/helpers.python_callable``).
    """
    opts = _preset(overrides)
    if fn is None:
        return lambda f: _jit(f, opts, entry)
    return _jit(fn, opts, entry)


def leaf(signature=None, *, entry: bool = False, **overrides):
    """Decorator preset for tiny hot helpers (RNG, hashing, row copies); optional explicit
    signature.  ``entry`` as for :func:`kernel`."""
    opts = _preset(overrides)

    def deco(f):
        return _jit(f, opts, entry, signature)

    return deco


class _CompileClock(_event.Listener):
    """Accumulates wall seconds of every Numba compilation in this process."""

    def __init__(self):
        self.seconds = 0.0
        self.count = 0
        self._depth = 0
        self._start = 0.0

    def on_start(self, event):
        import time

        if self._depth == 0:
            self._start = time.perf_counter()
        self._depth += 1

    def on_end(self, event):
        import time

        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._start
            self.count += 1


_CLOCK = _CompileClock()
_event.register("numba:compile", _CLOCK)


def compile_seconds() -> float:
    """Wall seconds spent compiling (not loading from cache) Numba functions in this process."""
    return _CLOCK.seconds
