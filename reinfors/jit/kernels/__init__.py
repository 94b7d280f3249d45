"""Kernel parts: the engine's kernels, instantiated once per game and kernel family.

Each file here is an ordinary Python module *part*: ``reinfors/_runtime/codegen.py`` concatenates
the parts of a kernel family (:data:`reinfors._runtime.codegen.FAMILIES`) under a per-game header
into one generated module (``<cache_dir>/generated/<game>_<family>_<hash>.py``), so the engine's
kernels call that game's rules statically and Numba caches one entry per game.  The solvers'
templates (``reinfors/jit/solvers``) are instantiated by the same mechanism.

A part is never imported on its own: the names it uses from the header (the game's functions
``G_<role>`` and the family's constants, :mod:`reinfors.jit.kernels._header`) and from the other
parts are bound by the generated module.  Each part names them in an ``if TYPE_CHECKING:`` block
(for linters and IDEs only; ``scripts/kernel_part_imports.py`` keeps those blocks in sync).
"""
