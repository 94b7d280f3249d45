"""Every public callable has a Google-style docstring and full type annotations.

"Public" is derived, not listed: every name in the ``__all__`` of ``reinfors`` and of each
non-underscore module of the package (``reinfors.policies``, ``reinfors.arena``,
``reinfors.solvers``, ...; the kernel package ``reinfors.jit`` is internal), and, for a class
defined in this package, its non-underscore methods, static/class methods and properties (its own
and those it inherits from the package's classes) plus ``__init__`` and ``__call__``.

The rules, checked per callable (``problems()``):

* **Docstring**: present (not inherited).
* **Annotations**: every parameter except a method's ``self`` / ``cls`` is annotated, and the
  return is annotated (except ``__init__``); the annotations resolve (``typing.get_type_hints``).
* **Args**: a callable that takes parameters has an ``Args:`` section naming exactly those
  parameters (``*args`` / ``**kwargs`` as written).  A class documents its ``__init__``'s
  parameters in the class docstring or in ``__init__``'s.
* **Returns**: a callable whose return annotation is not ``None`` has a ``Returns:`` section
  (``Yields:`` for a generator).
* **Raises**: a callable that validates has a ``Raises:`` section.  "Validates" means its own body
  (not a nested function) holds a ``raise`` of an exception class or calls one of the argument
  converters of ``reinfors._validate`` (which raise the original's ``TypeError`` /
  ``OverflowError`` / ``ValueError``); every exception class the body raises by name must be
  listed.  Validation done only inside helpers it calls is not seen; that is the rule's limit.
* **Properties** document the value in their docstring (no sections) and annotate the getter's
  return.
* **Classes**: a docstring; a dataclass lists every field under ``Attributes:``, as do the batch
  classes (each field's dtype, shape and meaning).

Exempt, and why:

* Special methods other than ``__init__`` / ``__call__`` (``__repr__``, ``__len__``, ``__iter__``,
  ``__getitem__``, ``__enter__``, ...): the data model documents them.
* A class that cannot be constructed from Python (its ``__init__`` only raises ``TypeError``, as
  the original's PyO3 classes without a constructor): its ``__init__``.
* Objects without Python source (builtins, C extensions): nothing here is one today; the walk
  fails on any it meets, so a new one is decided when it appears.
* Data (``rf.catalog.GAMES``, ``rf.games.STATE_HEADER``, ...): not callable.
* Nothing: the Gymnasium / PettingZoo adapter classes, which ``rf.gym`` builds on first use (so
  that gymnasium stays optional) and no ``__all__`` names, are walked too when gymnasium and
  pettingzoo import (the ``test`` extra installs both).
* Numba dispatchers are checked through the Python function they compile (``py_func``).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
import textwrap
import types
import typing

import pytest

import reinfors as rf
import reinfors._validate as _validate

SECTION = re.compile(r"^(\w[\w ]*):\s*$")
SPECIAL_OK = {"__init__", "__call__"}
SECTIONS = {"Args", "Arguments", "Returns", "Yields", "Raises", "Attributes", "Examples", "Example", "Note",
            "Notes", "Warning", "Warnings", "See Also", "Other Parameters", "Keyword Args", "References"}  # fmt: skip


def public_modules() -> list[types.ModuleType]:
    """``reinfors`` and its non-underscore modules (``reinfors.solvers`` and its modules too)."""
    out = [rf]
    for info in pkgutil.walk_packages(rf.__path__, "reinfors."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts) or parts[1] == "jit":
            continue
        out.append(importlib.import_module(info.name))  # optional extras (ray, gymnasium) load lazily
    return out


def sections(doc: str) -> dict[str, list[str]]:
    """Google-style sections of ``doc``: ``{name: [entry lines]}`` (entries at the first indent)."""
    out: dict[str, list[str]] = {}
    lines = inspect.cleandoc(doc).splitlines()
    current = None
    indent = None
    for line in lines:
        m = SECTION.match(line)
        if m and m.group(1) in SECTIONS:
            current, indent = m.group(1), None
            out[current] = []
            continue
        if current is None:
            continue
        if line.strip() and not line.startswith(" "):
            current = None
            continue
        if not line.strip():
            continue
        width = len(line) - len(line.lstrip())
        if indent is None:
            indent = width
        if width == indent:
            out[current].append(line.strip())
    return out


def documented_names(entries: list[str]) -> set[str]:
    """Parameter / exception names of section entries (``name (type): text`` or ``name: text``)."""
    out = set()
    for e in entries:
        m = re.match(r"^(\*{0,2}[\w.]+)\s*(\([^)]*\))?\s*:", e)
        if m:
            out.add(m.group(1))
    return out


def _own_body_nodes(fn_node: ast.AST):
    """The nodes of a function's body, not descending into nested functions, lambdas or classes."""
    stack = list(ast.iter_child_nodes(fn_node))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


_VALIDATORS = {
    name for name, obj in vars(_validate).items() if inspect.isfunction(obj) and obj.__module__ == _validate.__name__
}  # fmt: skip


def raised(fn) -> tuple[set[str], bool]:
    """``(exception names raised by name in fn's own body, whether it calls a _validate converter)``."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return set(), False
    tree = ast.parse(src)
    node = tree.body[0]
    glb = getattr(fn, "__globals__", {})
    converters = {n for n, o in glb.items() if inspect.isfunction(o) and getattr(o, "__module__", "") == _validate.__name__}
    names, validates = set(), False
    for sub in _own_body_nodes(node):
        if isinstance(sub, ast.Raise) and sub.exc is not None:
            exc = sub.exc.func if isinstance(sub.exc, ast.Call) else sub.exc
            if isinstance(exc, ast.Name):
                obj = glb.get(exc.id, getattr(__builtins__, exc.id, None) if not isinstance(__builtins__, dict)
                              else __builtins__.get(exc.id))  # fmt: skip
                if isinstance(obj, type) and issubclass(obj, BaseException):
                    names.add(exc.id)
            elif isinstance(exc, ast.Attribute) and exc.attr.endswith(("Error", "Exception", "Interrupt")):
                names.add(exc.attr)
        elif isinstance(sub, ast.Call):
            f = sub.func
            if isinstance(f, ast.Name) and f.id in converters:
                validates = True
    return names, validates


def _is_generator(fn) -> bool:
    return inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn)


def _only_raises(fn) -> bool:
    """``fn``'s body (after its docstring) is a single ``raise`` statement."""
    try:
        node = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    except (OSError, TypeError):
        return False
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return len(body) == 1 and isinstance(body[0], ast.Raise)


def problems(fn, *, method: bool = False, is_init: bool = False, extra_doc: str = "") -> list[str]:
    """What ``fn`` lacks under the rules above (empty: it passes)."""
    out = []
    doc = fn.__doc__ or ""
    if not doc.strip() and not (is_init and extra_doc.strip()):
        return ["no docstring"]
    sig = inspect.signature(fn, follow_wrapped=False)
    params = list(sig.parameters.values())
    if method and params and params[0].name in ("self", "cls"):
        params = params[1:]
    for p in params:
        if p.annotation is inspect.Parameter.empty:
            out.append(f"parameter {p.name!r} not annotated")
    if not is_init and sig.return_annotation is inspect.Signature.empty:
        out.append("return not annotated")
    try:
        typing.get_type_hints(fn)
    except Exception as e:  # noqa: BLE001 - any failure to resolve is the finding
        out.append(f"annotations do not resolve: {e!r}")
    secs = sections(doc) if not is_init else {**sections(extra_doc), **sections(doc)}
    want = {("*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else "") + p.name for p in params}
    if want:
        have = documented_names(secs.get("Args", secs.get("Arguments", [])))
        if "Args" not in secs and "Arguments" not in secs:
            out.append(f"no Args section (parameters {sorted(want)})")
        elif have != want:
            out.append(f"Args: missing {sorted(want - have)}, unknown {sorted(have - want)}")
    ret = sig.return_annotation
    if not is_init and ret not in (None, "None", inspect.Signature.empty, "NoReturn", typing.NoReturn):
        key = "Yields" if _is_generator(fn) else "Returns"
        if key not in secs:
            out.append(f"no {key} section (returns {ret})")
    names, validates = raised(fn)
    if names or validates:
        if "Raises" not in secs:
            out.append(f"no Raises section (raises {sorted(names) or 'through reinfors._validate'})")
        else:
            missing = names - documented_names(secs["Raises"])
            if missing:
                out.append(f"Raises: missing {sorted(missing)}")
    return out


def _python_source(obj) -> bool:
    try:
        inspect.getsourcefile(obj)
        return True
    except TypeError:
        return False


def class_members(cls: type):
    """``(name, kind, function)`` of the class's public callables defined in its own package."""
    seen = set()
    home = cls.__module__.split(".")[0]  # "reinfors" (members inherited from outside are not ours)
    for klass in cls.__mro__:
        if klass is object or klass.__module__.split(".")[0] != home:
            continue
        for name, attr in vars(klass).items():
            if name in seen or (name.startswith("_") and name not in SPECIAL_OK):
                continue
            seen.add(name)
            if isinstance(attr, property):
                yield name, "property", attr
            elif isinstance(attr, staticmethod):
                yield name, "static", attr.__func__
            elif isinstance(attr, classmethod):
                yield name, "class", attr.__func__
            elif inspect.isfunction(attr):
                yield name, "method", attr


def inventory(functions: dict | None = None) -> dict[str, list[str]]:
    """``{qualified name: problems}`` of every public callable (``functions`` collects the
    function objects by the same names)."""
    out: dict[str, list[str]] = {}
    seen: set[int] = set()
    functions = {} if functions is None else functions

    def visit_function(qual: str, fn, **kw):
        if id(fn) in seen:
            return
        seen.add(id(fn))
        functions[qual] = fn
        out[qual] = problems(fn, **kw)

    for mod in public_modules():
        for name in getattr(mod, "__all__", []):
            if name.startswith("_"):
                continue
            obj = getattr(mod, name)
            if isinstance(obj, types.ModuleType) or not callable(obj):
                continue
            qual = f"{mod.__name__}.{name}"
            if hasattr(obj, "py_func"):  # a Numba dispatcher: check the Python function it compiles
                obj = obj.py_func
            if inspect.isclass(obj):
                if id(obj) in seen:
                    continue
                seen.add(id(obj))
                if not obj.__module__.startswith("reinfors") or not _python_source(obj):
                    out[qual] = [f"no Python source ({obj.__module__}): decide and document an exemption"]
                    continue
                visit_class(qual, obj, out, seen, functions)
            elif inspect.isfunction(obj):
                visit_function(qual, obj)
            else:
                out[qual] = [f"callable of unexpected kind {type(obj).__name__}: decide and document"]
    for name in ("_gym_class", "_parallel_class", "_aec_class"):  # the rf.gym adapters, built on first use
        try:
            cls = getattr(rf.gym, name)()
        except ImportError:
            continue
        visit_class(f"reinfors.gym.{cls.__name__}", cls, out, seen, functions)
    return out


def visit_class(qual: str, cls: type, out: dict, seen: set, functions: dict | None = None) -> None:
    functions = {} if functions is None else functions
    doc = cls.__doc__ if "__doc__" in vars(cls) else None
    probs = [] if doc and doc.strip() else ["no class docstring"]
    secs = sections(doc or "")
    fields = None
    if dataclasses.is_dataclass(cls):
        fields = {f.name for f in dataclasses.fields(cls)}
    elif getattr(cls, "_FIELDS", None) and cls.__module__ == "reinfors.batches":
        fields = set(cls._FIELDS)
    if fields is not None:
        have = documented_names(secs.get("Attributes", []))
        if fields != have:
            probs.append(f"Attributes: missing {sorted(fields - have)}, unknown {sorted(have - fields)}")
    out[qual] = probs
    for name, kind, fn in class_members(cls):
        mqual = f"{qual}.{name}"
        if kind == "property":
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            p = []
            if not (fn.__doc__ or "").strip():
                p.append("property without docstring")
            if fn.fget is not None and "return" not in getattr(fn.fget, "__annotations__", {}):
                p.append("property getter return not annotated")
            out[mqual] = p
            continue
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        functions[mqual] = fn
        if name == "__init__":
            if dataclasses.is_dataclass(cls) or _only_raises(fn):
                continue
            out[mqual] = problems(fn, method=True, is_init=True, extra_doc=doc or "")
        else:
            out[mqual] = problems(fn, method=kind != "static")


# -- the tests -------------------------------------------------------------------------------------


def test_every_public_callable_is_documented_and_annotated():
    inv = inventory()
    assert len(inv) > 200, len(inv)  # the walk found the package's surface
    bad = {k: v for k, v in inv.items() if v}
    assert not bad, f"{len(bad)} of {len(inv)} public callables:\n" + "\n".join(
        f"  {k}: {'; '.join(v)}" for k, v in sorted(bad.items())
    )


def test_the_walk_covers_every_namespace():
    names = set(inventory())
    for want in ("reinfors.Engine.__init__", "reinfors.Engine.collect", "reinfors.policies.PolicyHandle.AlphaZero",
                 "reinfors.games.custom", "reinfors.solvers.Cfr.iterate", "reinfors.gym.make",
                 "reinfors.distributed.Collectors.set_weights", "reinfors.ratings.fit", "reinfors.arena.gate",
                 "reinfors.CollectStream.next", "reinfors.DqnBatch.next_obs", "reinfors.starts.RandomStartingMoves",
                 "reinfors.gym.ReinforsAecEnv.step"):  # fmt: skip
        assert want in names, want


def _sentinel_default(d) -> bool:
    """A default that says nothing in a signature: ``Ellipsis``, a bare ``object()``, an address."""
    return d is Ellipsis or type(d) is object or "object at 0x" in repr(d)


def test_the_default_rule_can_fail():
    assert _sentinel_default(...) and _sentinel_default(object()) and not _sentinel_default(1)
    assert not _sentinel_default(None) and not _sentinel_default(rf.noise.Dirichlet())


def test_signatures_show_real_defaults():
    """No ``Ellipsis`` (or bare ``object()`` sentinel) default in any public signature."""
    functions: dict = {}
    inventory(functions)
    assert len(functions) > 200
    bad = []
    for qual, fn in functions.items():
        for p in inspect.signature(fn).parameters.values():
            if _sentinel_default(p.default):
                bad.append(f"{qual}({p.name}={p.default!r})")
    assert not bad, bad
    shown = [str(inspect.signature(f)) for f in (rf.policies.AlphaZero, rf.Engine.collect_stream,
                                                 rf.policies.PolicyHandle.choose)]  # fmt: skip
    for text in shown:
        assert "Ellipsis" not in text and "object at 0x" not in text, text
    assert "noise: 'NoiseHandle | None' = Dirichlet(epsilon=0.25, alpha=0.3, scope='requester')" in shown[0]
    assert "*, gamma: 'float')" in shown[2]  # required keyword, as 0.4.0 shows it


# -- the rules can fail: deliberately bad callables -------------------------------------------------


def _bare(a, b=1):
    return a + b


def _good(a: int, b: int = 1) -> int:
    """Add.

    Args:
        a: one.
        b: two.

    Returns:
        The sum.

    Raises:
        ValueError: ``a`` is negative.
    """
    if a < 0:
        raise ValueError("a")
    return a + b


def _no_returns(a: int) -> int:
    """Identity.

    Args:
        a: the value.
    """
    return a


def _wrong_args(a: int, b: int) -> None:
    """Nothing.

    Args:
        a: one.
        c: not a parameter.
    """


def _raises_undocumented(a: int) -> None:
    """Check.

    Args:
        a: the value.
    """
    if a < 0:
        raise ValueError("a")


def _raises_partly_documented(a: int) -> None:
    """Check.

    Args:
        a: the value.

    Raises:
        ValueError: negative.
    """
    if a < 0:
        raise ValueError("a")
    if a > 9:
        raise KeyError("a")


def _validates_through_a_converter(a: int) -> None:
    """Convert.

    Args:
        a: the value.
    """
    _validate.as_unsigned("a", a)


as_unsigned = _validate.as_unsigned  # the rule sees converters bound in the function's module


def _validates_by_name(a: int) -> None:
    """Convert.

    Args:
        a: the value.
    """
    as_unsigned("a", a)


def _unresolvable(a: NoSuchType) -> None:  # noqa: F821 - the finding under test
    """Nothing.

    Args:
        a: the value.
    """


def _generator(n: int) -> typing.Iterator[int]:
    """Count.

    Args:
        n: how far.

    Returns:
        Wrong section for a generator.
    """
    yield from range(n)


@dataclasses.dataclass
class _Fields:
    """Two fields.

    Attributes:
        x (int): documented.
    """

    x: int
    y: int


class _Prop:
    """A property without a docstring or a return annotation."""

    @property
    def value(self):
        return 1


@pytest.mark.parametrize(
    ("fn", "finding"),
    [
        (_bare, "no docstring"),
        (_no_returns, "no Returns section"),
        (_wrong_args, "Args: missing ['b'], unknown ['c']"),
        (_raises_undocumented, "no Raises section (raises ['ValueError'])"),
        (_raises_partly_documented, "Raises: missing ['KeyError']"),
        (_validates_by_name, "no Raises section (raises through reinfors._validate)"),
        (_unresolvable, "annotations do not resolve"),
        (_generator, "no Yields section"),
    ],
    ids=lambda x: getattr(x, "__name__", "")[:30],
)
def test_the_rules_catch_a_bad_callable(fn, finding):
    found = problems(fn)
    assert any(finding in p for p in found), found


def test_a_documented_callable_passes_and_annotations_are_required():
    assert problems(_good) == []
    _bare.__doc__ = "Add.\n\nArgs:\n    a: one.\n    b: two.\n"
    try:
        found = problems(_bare)
    finally:
        _bare.__doc__ = None
    assert "parameter 'a' not annotated" in found and "return not annotated" in found, found
    # a converter reached through a module attribute is not seen: the rule's documented limit
    assert problems(_validates_through_a_converter) == []


def test_classes_fields_and_properties_are_checked():
    out: dict = {}
    visit_class("_Fields", _Fields, out, set())
    assert out["_Fields"] == ["Attributes: missing ['y'], unknown []"], out
    out = {}
    visit_class("_Prop", _Prop, out, set())
    assert out["_Prop.value"] == ["property without docstring", "property getter return not annotated"], out
