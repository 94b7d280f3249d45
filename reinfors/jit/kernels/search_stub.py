
# ---- body: reinfors/jit/kernels/search_stub.py ------------------------------------------------------
# The model-free kernel family: the engine's search entry points exist (``_advance`` dispatches
# on the policy code) but are never reached, so they compile to nothing here.

# -- bound by the generated module (header and sibling parts); for linters and IDEs only --
from reinfors.jit._compile import kernel

# -- end of bound names (scripts/kernel_part_imports.py) --


@kernel(inline="always")
def _search_step(AT, g):
    return -1


@kernel(inline="always")
def _search_absorb(AT, g):
    pass


@kernel(inline="always")
def _search_flush(AT, g, boots):
    pass


@kernel(inline="always")
def _tail_value(AT, g, j):
    return 0.0
